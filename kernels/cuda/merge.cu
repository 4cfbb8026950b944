/*
 * merge.cu - GSM's merges with the rows on the device, so that a merge
 * batch moves no rows between host and device: time_decay's folds
 * (engine/backend.h dq_kv_fold; dq_cu_kv_fold) and similarity's greedy
 * merges (dq_kv_merge; dq_cu_kv_merge).
 *
 * Folds, per job: k_fold_init scales every row's elements into a scratch
 * of f x 2 x row_elems floats, k_fold_step runs one step of the scan over
 * all (row, element) pairs at once (from one half of the scratch into the
 * other, as dq_gsm_scan reads the step's copy), k_fold_store writes the
 * last row's values into the first row (Q8_0 blocks by warps).
 *
 * Merges, two kernels per call:
 *   k_merge_init: every job's links, counts and neighbour similarities,
 *     one warp per pair of neighbouring rows (all jobs in one grid);
 *   k_merge_greedy: one block per job runs its merges in order: the best
 *     pair by a block-wide argmax (ties to the lowest position, as the
 *     host's scan), the two rows' count-weighted mean written over the
 *     first (a thread per element; a Q8_0 block of 32 by one warp), the
 *     links and counts updated by one thread, then the two similarities
 *     that changed recomputed by two warps.
 * The arithmetic is merge.cuh's (the CPU backend's cpu_kv_merge, products
 * and sums rounded apart), so the choices and rows are the CPU's bit for
 * bit; tests/cuda/test_cuda_logic.cu runs these steps for every emulated
 * thread against it.
 * Scratch per job (16 bytes per row at 16 * off): similarity (float),
 * next and previous live position, count (int32); a dead position's next
 * is -2.
 */
#include "cuda_ops.h"
#include "launch.cuh"
#include "merge.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#define MT 512 /* threads of a greedy block */

typedef struct merge_jobs {
  dq_cu_merge_job j[DQ_CU_MERGE_MAX_JOBS];
} merge_jobs;

typedef struct merge_args {
  int store_k, store_v, n_head_kv, head_dim;
  const int32_t *rows, *count;
  int32_t *pairs;
  uint8_t *scratch;
} merge_args;

/* Writes x as element e of row r. Q8_0: the warp's 32 lanes hold the 32
 * elements of one block (e % 32 == lane), each having read what it needs
 * of the old block. */
__device__ static void elem_put(void *buf, int store, int r, int e, int re,
                                float x) {
  if (store != 8) {
    dqm_put(buf, store, r, e, re, x);
    return;
  }
  float amax = fabsf(x);
  for (int o = 16; o > 0; o >>= 1)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  __syncwarp(); /* every lane has read the old block */
  dqm_put_q8(buf, r, e, re, x, amax);
}

/* Similarity of the keys of rows ra and rb, by one warp (every lane gets
 * it): per head, lanes 0..15 the partial sums (merge.cuh), combined in
 * dq_attn_dot's order, then the tail. */
__device__ static float pair_sim(const void *k, int store, int ra, int rb,
                                 int n_kv, int hd) {
  int lane = threadIdx.x & 31, re = n_kv * hd;
  float s = 0.0f;
  for (int h = 0; h < n_kv; h++) {
    float v[3] = {0.0f, 0.0f, 0.0f};
    if (lane < 16)
      dqm_partial(k, store, ra, rb, h, hd, re, lane, &v[0], &v[1], &v[2]);
    for (int q = 0; q < 3; q++) {
      float x = v[q];
      float slot = dqm_slot(x, __shfl_down_sync(0xffffffffu, x, 4),
                            __shfl_down_sync(0xffffffffu, x, 8),
                            __shfl_down_sync(0xffffffffu, x, 12));
      float sum = dqm_slots(slot, __shfl_down_sync(0xffffffffu, slot, 1),
                            __shfl_down_sync(0xffffffffu, slot, 2),
                            __shfl_down_sync(0xffffffffu, slot, 3));
      v[q] = __shfl_sync(0xffffffffu, sum, 0); /* lane 0's is the sum */
    }
    dqm_tail(k, store, ra, rb, h, hd, re, v);
    s = dqm_cos_add(s, v);
  }
  return s / (float)n_kv;
}

/* Job scratch pointers. */
__device__ static void job_scratch(const merge_args &a,
                                   const dq_cu_merge_job &J, float **sim,
                                   int32_t **nx, int32_t **pv,
                                   int32_t **cnt) {
  uint8_t *b = a.scratch + (size_t)16 * J.off;
  *sim = (float *)b;
  *nx = (int32_t *)(b + (size_t)4 * J.m);
  *pv = *nx + J.m;
  *cnt = *pv + J.m;
}

/* blockIdx.y: the job; a warp per position i of it. */
__global__ void k_merge_init(merge_jobs jobs, merge_args a) {
  const dq_cu_merge_job &J = jobs.j[blockIdx.y];
  int i = (int)(((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32);
  if (i >= J.m)
    return;
  float *sim;
  int32_t *nx, *pv, *cnt;
  job_scratch(a, J, &sim, &nx, &pv, &cnt);
  const int32_t *rows = a.rows + J.off;
  float s = i + 1 < J.m ? pair_sim(J.k, a.store_k, rows[i], rows[i + 1],
                                   a.n_head_kv, a.head_dim)
                        : -INFINITY;
  if ((threadIdx.x & 31) == 0) {
    sim[i] = s;
    nx[i] = i + 1 < J.m ? i + 1 : -1;
    pv[i] = i - 1;
    cnt[i] = a.count[J.off + i];
  }
}

/* One block of MT threads per job (blockIdx.x). */
__global__ void __launch_bounds__(MT)
k_merge_greedy(merge_jobs jobs, merge_args a) {
  const dq_cu_merge_job &J = jobs.j[blockIdx.x];
  __shared__ float bv[MT / 32];
  __shared__ int bi[MT / 32];
  __shared__ int sh_best, sh_prev, sh_next;
  __shared__ float sh_wa;
  float *sim;
  int32_t *nx, *pv, *cnt;
  job_scratch(a, J, &sim, &nx, &pv, &cnt);
  const int32_t *rows = a.rows + J.off;
  int32_t *pairs = a.pairs + (size_t)2 * J.off;
  int tid = threadIdx.x, lane = tid & 31, warp = tid / 32;
  int re = a.n_head_kv * a.head_dim;
  for (int t = 0; t < J.n_merge; t++) {
    /* argmax over live positions with a next, lowest position on ties */
    float v = -INFINITY;
    int b = -1;
    for (int i = tid; i < J.m; i += MT)
      if (nx[i] >= 0 && dqm_before(sim[i], i, v, b)) {
        v = sim[i];
        b = i;
      }
    for (int o = 16; o > 0; o >>= 1) {
      float ov = __shfl_xor_sync(0xffffffffu, v, o);
      int ob = __shfl_xor_sync(0xffffffffu, b, o);
      if (dqm_before(ov, ob, v, b)) {
        v = ov;
        b = ob;
      }
    }
    if (lane == 0) {
      bv[warp] = v;
      bi[warp] = b;
    }
    __syncthreads();
    if (tid == 0) {
      float w = -INFINITY;
      int best = -1;
      for (int k = 0; k < MT / 32; k++)
        if (dqm_before(bv[k], bi[k], w, best)) {
          w = bv[k];
          best = bi[k];
        }
      sh_best = best;
      /* the pair's link and weight are read here, before the barrier:
       * thread 0 rewrites nx and cnt below while other warps may still be
       * mixing, so no thread may read them after it */
      if (best >= 0) {
        int nj = nx[best];
        sh_next = nj;
        sh_wa = (float)cnt[best] / (float)(cnt[best] + cnt[nj]);
      }
    }
    __syncthreads();
    int best = sh_best;
    if (best < 0) { /* no pair left */
      for (int u = t + tid; u < J.n_merge; u += MT)
        pairs[2 * u] = pairs[2 * u + 1] = -1;
      return;
    }
    int j = sh_next;
    float wa = sh_wa;
    int ri = rows[best], rj = rows[j];
    /* keys, then values; warps stay whole on Q8_0 blocks (re % 32 == 0,
     * MT % 32 == 0) */
    for (int e = tid; e < re; e += MT) {
      float x = dqm_mix(wa, dqm_get(J.k, a.store_k, ri, e, re),
                        dqm_get(J.k, a.store_k, rj, e, re));
      elem_put(J.k, a.store_k, ri, e, re, x);
      float y = dqm_mix(wa, dqm_get(J.v, a.store_v, ri, e, re),
                        dqm_get(J.v, a.store_v, rj, e, re));
      elem_put(J.v, a.store_v, ri, e, re, y);
    }
    if (tid == 0) {
      cnt[best] += cnt[j];
      int n2 = nx[j];
      nx[best] = n2;
      if (n2 >= 0)
        pv[n2] = best;
      nx[j] = -2;
      sh_prev = pv[best];
      pairs[2 * t] = best;
      pairs[2 * t + 1] = j;
    }
    __syncthreads(); /* the merged row and the links are in place */
    if (warp == 0) {
      int n2 = nx[best];
      float s = n2 >= 0 ? pair_sim(J.k, a.store_k, ri, rows[n2], a.n_head_kv,
                                   a.head_dim)
                        : -INFINITY;
      if (lane == 0)
        sim[best] = s;
    } else if (warp == 1 && sh_prev >= 0) {
      float s = pair_sim(J.k, a.store_k, rows[sh_prev], ri, a.n_head_kv,
                         a.head_dim);
      if (lane == 0)
        sim[sh_prev] = s;
    }
    __syncthreads();
  }
}

/* ---- time_decay folds ---------------------------------------------------- */

typedef struct fold_args {
  void *k, *v;
  int store_k, store_v, re, f;
  const int32_t *rows; /* the job's */
  const float *coef;   /* the job's */
} fold_args;

#define FT 256 /* threads per fold block */

/* Element x of 2 x re (keys, then values) of row t. */
__device__ static float fold_get(const fold_args &a, int t, int x) {
  return x < a.re ? dqm_get(a.k, a.store_k, a.rows[t], x, a.re)
                  : dqm_get(a.v, a.store_v, a.rows[t], x - a.re, a.re);
}

__global__ void k_fold_init(fold_args a, float *b) {
  size_t dim = 2 * (size_t)a.re, n = (size_t)a.f * dim;
  for (size_t i = (size_t)blockIdx.x * FT + threadIdx.x; i < n;
       i += (size_t)gridDim.x * FT) {
    int t = (int)(i / dim), x = (int)(i % dim);
    b[i] = dqm_mul(fold_get(a, t, x), a.coef[t]);
  }
}

/* One step (offset d, gates A): out_t = A_t in_{t-d} + in_t for t >= d,
 * in_t below d. */
__global__ void k_fold_step(fold_args a, const float *A, int d,
                            const float *in, float *out) {
  size_t dim = 2 * (size_t)a.re, n = (size_t)a.f * dim;
  for (size_t i = (size_t)blockIdx.x * FT + threadIdx.x; i < n;
       i += (size_t)gridDim.x * FT) {
    int t = (int)(i / dim);
    out[i] = t >= d ? dqm_add(dqm_mul(A[t], in[i - (size_t)d * dim]), in[i])
                    : in[i];
  }
}

/* The last row's values into the first row: a thread per element (whole
 * warps: 2 x re is a multiple of 32 where Q8_0 is involved). */
__global__ void k_fold_store(fold_args a, const float *b) {
  int x = (int)(blockIdx.x * FT + threadIdx.x);
  if (x >= 2 * a.re)
    return;
  float r = b[(size_t)(a.f - 1) * 2 * a.re + x];
  if (x < a.re)
    elem_put(a.k, a.store_k, a.rows[0], x, a.re, r);
  else
    elem_put(a.v, a.store_v, a.rows[0], x - a.re, a.re, r);
}

static unsigned fold_grid(size_t n) {
  size_t b = (n + FT - 1) / FT;
  return (unsigned)(b > 65535u * 4 ? 65535u * 4 : (b ? b : 1));
}

extern "C" int dq_cu_kv_fold(void *stream, const dq_cu_fold_job *jobs,
                             int n_jobs, int store_k, int store_v,
                             int row_elems, const int32_t *rows,
                             const float *coef, float *scratch) {
  int re = row_elems;
  if (n_jobs < 0 || re <= 0 || ((store_k == 8 || store_v == 8) && re % 32) ||
      (store_k != 0 && store_k != 1 && store_k != 2 && store_k != 8) ||
      (store_v != 0 && store_v != 1 && store_v != 8))
    return (int)cudaErrorInvalidValue;
  cudaStream_t s = (cudaStream_t)stream;
  for (int jb = 0; jb < n_jobs; jb++) { /* one at a time: one scratch */
    const dq_cu_fold_job *J = &jobs[jb];
    if (J->f < 1)
      continue;
    fold_args a = {J->k, J->v, store_k, store_v, re, J->f, rows + J->off,
                   coef + J->coef_off};
    size_t n = (size_t)J->f * 2 * re;
    float *in = scratch, *out = scratch + n;
    DQ_CU_LAUNCH(k_fold_init, fold_grid(n), FT, 0, s)(a, in);
    for (int st = 0, d = 1; d < J->f; st++, d *= 2) {
      DQ_CU_LAUNCH(k_fold_step, fold_grid(n), FT, 0, s)(
          a, a.coef + (size_t)J->f * (1 + st), d, in, out);
      float *t = in;
      in = out;
      out = t;
    }
    DQ_CU_LAUNCH(k_fold_store, fold_grid((size_t)2 * re), FT, 0, s)(a, in);
  }
  return (int)cudaGetLastError();
}

/* ---- similarity merges ----------------------------------------------------- */

extern "C" int dq_cu_kv_merge(void *stream, const dq_cu_merge_job *jobs,
                              int n_jobs, int store_k, int store_v,
                              int n_head_kv, int head_dim,
                              const int32_t *rows, const int32_t *count,
                              int32_t *pairs, void *scratch) {
  int re = n_head_kv * head_dim;
  if (n_jobs < 0 || n_jobs > DQ_CU_MERGE_MAX_JOBS || re <= 0 ||
      ((store_k == 8 || store_v == 8) && re % 32) ||
      (store_k != 0 && store_k != 1 && store_k != 2 && store_k != 8) ||
      (store_v != 0 && store_v != 1 && store_v != 8))
    return (int)cudaErrorInvalidValue;
  merge_args a = {store_k, store_v, n_head_kv, head_dim, rows, count, pairs,
                  (uint8_t *)scratch};
  merge_jobs js;
  memset(&js, 0, sizeof js);
  int max_m = 0;
  for (int i = 0; i < n_jobs; i++) {
    js.j[i] = jobs[i];
    if (jobs[i].m > max_m)
      max_m = jobs[i].m;
  }
  if (max_m == 0)
    return 0;
  cudaStream_t s = (cudaStream_t)stream;
  unsigned gx = (unsigned)(((size_t)max_m * 32 + 255) / 256);
  DQ_CU_LAUNCH(k_merge_init, dim3(gx, (unsigned)n_jobs), 256, 0, s)(js, a);
  DQ_CU_LAUNCH(k_merge_greedy, (unsigned)n_jobs, MT, 0, s)(js, a);
  return (int)cudaGetLastError();
}
