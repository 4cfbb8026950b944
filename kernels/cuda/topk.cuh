/*
 * topk.cuh - the per-thread steps of the device top-k selection (topk.cu
 * k_top_k): what a sampler needs from a row of logits, selected where the
 * logits are, so a decode step sends back k (id, value) pairs instead of
 * the row. __host__ __device__, so tests/cuda/test_cuda_logic.cu runs the
 * same steps for every emulated thread, between the block-wide barriers,
 * against the CPU's dq_top_k.
 *
 * The algorithm, one block of TK_THREADS threads over a row of n logits,
 * keys as kernels.h dq_top_k_key (value, then the lower id; distinct):
 *   1. each thread the largest key of its elements (i = t, t + T, ...,
 *      penalised as dq_top_k does: the sorted penalty list walked along i);
 *   2. those T keys sorted (bitonic, descending); tau = the k-th. Each is
 *      a distinct element's key, so at least k elements have keys >= tau,
 *      and every one of the k best does;
 *   3. every element with key >= tau into a shared list (an atomic slot
 *      each, so in any order) of at most TK_CAND; more (a row with more
 *      than TK_CAND elements tied near the top) and the block gives up
 *      (out[0] = 0: the caller selects on the host);
 *   4. the list sorted (bitonic over the next power of two, padded with key
 *      0, below every element's), the first k written out.
 * Keys are distinct, so the result does not depend on the slots' order:
 * exactly dq_top_k's ids and values.
 */
#ifndef DQ_CUDA_TOPK_CUH
#define DQ_CUDA_TOPK_CUH

#include "kernels.h"

#include <stdint.h>

#define TK_THREADS 1024 /* threads of the block; step 2 sorts this many */
#define TK_CAND 4096    /* most candidates step 3 holds (32 KB of keys) */
#define TK_K_MAX 256    /* most k (k <= TK_THREADS is what step 2 needs) */
#define TK_PEN_MAX 1024 /* most penalised tokens (in shared memory) */

#define TK_UNROLL 4 /* elements a thread loads before it uses them */
#ifdef __CUDA_ARCH__
#define TK_PRAGMA_UNROLL _Pragma("unroll")
#else
#define TK_PRAGMA_UNROLL
#endif

/* Key of element i of value v (penalised when i is the next one of pen,
 * which *p walks along increasing i). */
DQ_HD static inline uint64_t tk_key(float v, int i, const int32_t *pen,
                                    int n_pen, int *p, float penalty) {
  while (*p < n_pen && pen[*p] < i)
    (*p)++;
  if (*p < n_pen && pen[*p] == i)
    v = dq_top_k_penalise(v, penalty);
  return dq_top_k_key(v, i);
}

/* Calls f(key) for each element of thread t (i = t, t + T, ..., in
 * increasing order), loading TK_UNROLL of them before using any: on the
 * device the loads overlap instead of waiting one by one. */
template <class F>
DQ_HD static inline void tk_each(const float *x, int n, const int32_t *pen,
                                 int n_pen, float penalty, int t, F &f) {
  int p = 0;
  for (int i0 = t; i0 < n; i0 += TK_UNROLL * TK_THREADS) {
    float v[TK_UNROLL];
    TK_PRAGMA_UNROLL
    for (int u = 0; u < TK_UNROLL; u++) {
      int i = i0 + u * TK_THREADS;
      v[u] = i < n ? x[i] : 0.0f;
    }
    TK_PRAGMA_UNROLL
    for (int u = 0; u < TK_UNROLL; u++) {
      int i = i0 + u * TK_THREADS;
      if (i < n)
        f(tk_key(v[u], i, pen, n_pen, &p, penalty));
    }
  }
}

struct tk_max {
  uint64_t best;
  DQ_HD void operator()(uint64_t key) { best = key > best ? key : best; }
};

/* Step 1: the largest key of thread t's elements (0: it has none). */
DQ_HD static inline uint64_t tk_thread_max(const float *x, int n,
                                           const int32_t *pen, int n_pen,
                                           float penalty, int t) {
  tk_max m = {0};
  tk_each(x, n, pen, n_pen, penalty, t, m);
  return m.best;
}

/* One stage (kk, j) of a descending bitonic sort of a[0..size) (size a
 * power of two) for thread t: each pair (i, i ^ j) belongs to the thread
 * of its lower index, so a stage has no races. */
DQ_HD static inline void tk_bitonic_stage(uint64_t *a, int size, int kk, int j,
                                          int t) {
  for (int i = t; i < size; i += TK_THREADS) {
    int l = i ^ j;
    if (l <= i)
      continue;
    uint64_t u = a[i], v = a[l];
    int desc = (i & kk) == 0; /* this run sorts high to low */
    if (desc ? u < v : u > v) {
      a[i] = v;
      a[l] = u;
    }
  }
}

/* Step 3 for thread t: calls emit(key) for each of its elements with key
 * >= tau. */
template <class Emit> struct tk_above {
  uint64_t tau;
  Emit *emit;
  DQ_HD void operator()(uint64_t key) {
    if (key >= tau)
      (*emit)(key);
  }
};
template <class Emit>
DQ_HD static inline void tk_collect(const float *x, int n, const int32_t *pen,
                                    int n_pen, float penalty, uint64_t tau,
                                    int t, Emit &emit) {
  tk_above<Emit> f = {tau, &emit};
  tk_each(x, n, pen, n_pen, penalty, t, f);
}

/* The power of two step 4 sorts for c candidates (at least 2). */
DQ_HD static inline int tk_sort_size(int c) {
  int s = 2;
  while (s < c)
    s *= 2;
  return s;
}

/* Step 4's output for rank i < k: out as backend.h top_k's words. */
DQ_HD static inline void tk_write(int32_t *out, int k, int i, uint64_t key) {
  union {
    float f;
    int32_t w;
  } b;
  b.f = dq_top_k_key_value(key);
  out[1 + i] = dq_top_k_key_id(key);
  out[1 + k + i] = b.w;
}

#endif
