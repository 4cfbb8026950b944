/*
 * topk.cu - top-k selection of a logits row on the device (backend.h
 * top_k; the algorithm and its per-thread steps in topk.cuh): a decode
 * step that samples sends back 1 + 2k words instead of n_vocab floats
 * (512 KB for a 128k vocabulary).
 *
 * One block of 1024 threads. Prediction (H200, 128k vocabulary, the row
 * just written by the output head so in L2): two passes over 512 KB from
 * one SM at ~100-200 GB/s (each thread has 4 loads in flight, topk.cuh
 * tk_each; one at a time, L2 latency would make a pass ~15 us), ~3-5 us each; two bitonic sorts in shared
 * memory (1024 keys: 55 stages; the candidates, typically a few hundred
 * to 2k: 36-66 stages) at ~0.1 us a stage; ~15-25 us in all, against
 * ~20 us to copy the row back plus ~60 us to select it on the host.
 * A multi-block first pass is the lever if it measures slower.
 */
#include "cuda_ops.h"
#include "launch.cuh"
#include "topk.cuh"

#include <cuda_runtime.h>

struct tk_emit_shared {
  uint64_t *list;
  int *count;
  __device__ void operator()(uint64_t key) {
    int slot = atomicAdd(count, 1);
    if (slot < TK_CAND)
      list[slot] = key;
  }
};

__device__ static void bitonic_sort(uint64_t *a, int size) {
  for (int kk = 2; kk <= size; kk *= 2)
    for (int j = kk / 2; j > 0; j /= 2) {
      tk_bitonic_stage(a, size, kk, j, threadIdx.x);
      __syncthreads();
    }
}

__global__ void __launch_bounds__(TK_THREADS)
    k_top_k(const float *x, int n, const int32_t *pen, int n_pen,
            float penalty, int k, int32_t *out) {
  __shared__ uint64_t keys[TK_CAND];
  __shared__ int32_t spen[TK_PEN_MAX];
  __shared__ int count;
  int t = threadIdx.x;
  for (int i = t; i < n_pen; i += TK_THREADS)
    spen[i] = pen[i];
  if (t == 0)
    count = 0;
  __syncthreads();
  keys[t] = tk_thread_max(x, n, spen, n_pen, penalty, t);
  __syncthreads();
  bitonic_sort(keys, TK_THREADS);
  uint64_t tau = keys[k - 1];
  __syncthreads(); /* every thread has tau before the list overwrites it */
  tk_emit_shared emit = {keys, &count};
  tk_collect(x, n, spen, n_pen, penalty, tau, t, emit);
  __syncthreads();
  int c = count;
  if (c > TK_CAND) {
    if (t == 0)
      out[0] = 0;
    return;
  }
  int size = tk_sort_size(c);
  for (int i = c + t; i < size; i += TK_THREADS)
    keys[i] = 0;
  __syncthreads();
  bitonic_sort(keys, size);
  for (int i = t; i < k; i += TK_THREADS)
    tk_write(out, k, i, keys[i]);
  if (t == 0)
    out[0] = k;
}

extern "C" int dq_cu_top_k_supported(int n, int n_pen, int k) {
  return n >= 1 && n <= (1 << 30) && k >= 1 && k <= TK_K_MAX && k <= n &&
         n_pen >= 0 && n_pen <= TK_PEN_MAX;
}

extern "C" int dq_cu_top_k(void *stream, const float *x, int n,
                           const int32_t *pen, int n_pen, float penalty, int k,
                           int32_t *out) {
  if (penalty == 1.0f)
    n_pen = 0;
  DQ_CU_LAUNCH(k_top_k, 1, TK_THREADS, 0, (cudaStream_t)stream)(
      x, n, pen, n_pen, penalty, k, out);
  return (int)cudaGetLastError();
}
