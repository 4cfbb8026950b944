/*
 * moe.cu - mixture-of-experts routing and combine on the GPU (cuda_ops.h
 * dq_cu_moe_route, dq_cu_moe_combine; the CPU backend's cpu_moe_route and
 * the combine loop of cpu_moe_ffn are the specification). Not here: the
 * expert products (matmul.cu, dq_cu_matvec_ids).
 *
 * Routing: one warp per token runs engine/moe.c's rule as written once in
 * attn_moe.cuh (dq_cu_moe_route_team): lanes over experts, butterfly
 * shuffles for the softmax max and sum and for each top-k pick, the warp's
 * scratch (probabilities, selection scores, group scores) in shared memory.
 * A decode token costs a few microseconds at most (n_used + n_used picks of
 * n_expert / 32 compares per lane) instead of the O(n_used^2 n_expert) of
 * a single thread. Load counters: one atomicAdd per chosen expert per token
 * (order-free, so the counts are exact and deterministic).
 *
 * Combine: out[t][d] = w[t][0] h[t,0][d] + w[t][1] h[t,1][d] + ..., each
 * product and sum rounded separately (no FMA contraction), in j order: the
 * CPU backend's bits.
 */
#include "attn_moe.cuh"
#include "cuda_ops.h"
#include "launch.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

/* A warp as attn_moe.cuh's team: each lane runs the uniform code. */
struct warp_team {
  int lane;
  __device__ int n_lanes() const { return 32; }
  __device__ bool leader() const { return lane == 0; }
  __device__ void sync() const { __syncwarp(); }
  template <class F> __device__ void each(F f) const { f(lane); }
  template <class F> __device__ float max(F f) const {
    float v = f(lane);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      v = dq_cu_max2(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
  }
  template <class F> __device__ double sum(F f) const {
    double v = f(lane);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
  }
  template <class F> __device__ dq_cu_pick best(F f) const {
    dq_cu_pick v = f(lane);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      dq_cu_pick u;
      u.v = __shfl_xor_sync(0xffffffffu, v.v, o);
      u.i = __shfl_xor_sync(0xffffffffu, v.i, o);
      v = dq_cu_pick_best(v, u);
    }
    return v;
  }
};

/* Shared words per warp: probabilities and selection scores (2 n_expert),
 * group scores, then ids, flat ids and weights (n_used each). */
__host__ __device__ size_t route_words(const dq_moe_cfg &c) {
  return 2 * (size_t)c.n_expert + (c.n_group > 1 ? (size_t)c.n_group : 0) +
         3 * (size_t)c.n_used;
}

/* One warp per token; blockDim.x = 32 * warps per block. */
__global__ void moe_route(dq_moe_cfg c, const float *logits,
                          const float *bias, int n_tok, int32_t *ids,
                          float *w, uint32_t *load) {
  DQ_CU_DYN_SMEM(float, route_smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t t = (size_t)blockIdx.x * (blockDim.x / 32) + warp;
  if (t >= (size_t)n_tok) /* the whole warp: no block barriers here */
    return;
  const int n = c.n_expert, k = c.n_used;
  float *scratch = route_smem + route_words(c) * warp;
  float *sw = scratch + 2 * n + (c.n_group > 1 ? c.n_group : 0);
  int32_t *sids = (int32_t *)(sw + k), *sflat = sids + k;
  warp_team tm = {lane};
  dq_cu_moe_route_team(tm, &c, logits + t * n, bias, scratch, sids, sw,
                       load ? sflat : (int32_t *)NULL);
  for (int j = lane; j < k; j += 32) {
    ids[t * k + j] = sids[j];
    w[t * k + j] = sw[j];
    if (load) {
      atomicAdd(&load[sids[j]], 1u);
      atomicAdd(&load[n + sflat[j]], 1u);
    }
  }
}

/* grid: x over dim, y over tokens (striding past 65535). */
__global__ void moe_combine(const float *h, const float *w, int n_tok,
                            int n_used, int dim, float *out) {
  const int d = blockIdx.x * blockDim.x + threadIdx.x;
  if (d >= dim)
    return;
  for (size_t t = blockIdx.y; t < (size_t)n_tok; t += gridDim.y) {
    const float *wt = w + t * n_used;
    const float *ht = h + t * n_used * dim + d;
    float o = __fmul_rn(wt[0], ht[0]);
    for (int j = 1; j < n_used; j++)
      o = __fadd_rn(o, __fmul_rn(wt[j], ht[(size_t)j * dim]));
    out[t * dim + d] = o;
  }
}

} // namespace

extern "C" int dq_cu_moe_route(void *stream, const dq_moe_cfg *cfg,
                               const float *logits, const float *bias,
                               int n_tok, int32_t *ids, float *w,
                               uint32_t *load) {
  if (!dq_cu_moe_cfg_ok(cfg) || n_tok < 0)
    return (int)cudaErrorInvalidValue;
  if (n_tok == 0)
    return 0;
  const size_t warp_bytes = route_words(*cfg) * sizeof(float);
  /* up to 4 warps per block within the default 48 KiB; a single warp above
   * it (n_expert in the thousands) opts in to more */
  int wpb = (int)(48 * 1024 / warp_bytes);
  wpb = wpb < 1 ? 1 : wpb > 4 ? 4 : wpb;
  const size_t smem = warp_bytes * wpb;
  if (smem > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(
        moe_route, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
      return (int)e;
  }
  const unsigned blocks = (unsigned)((n_tok + wpb - 1) / wpb);
  DQ_CU_LAUNCH(moe_route, blocks, 32 * wpb, smem, (cudaStream_t)stream)(
      *cfg, logits, bias, n_tok, ids, w, load);
  return (int)cudaGetLastError();
}

extern "C" int dq_cu_moe_combine(void *stream, const float *h, const float *w,
                                 int n_tok, int n_used, int dim, float *out) {
  if (n_tok < 0 || n_used < 1 || dim < 0)
    return (int)cudaErrorInvalidValue;
  if (n_tok == 0 || dim == 0)
    return 0;
  dim3 grid((unsigned)((dim + 127) / 128),
            (unsigned)(n_tok < 65535 ? n_tok : 65535));
  DQ_CU_LAUNCH(moe_combine, grid, 128, 0, (cudaStream_t)stream)(
      h, w, n_tok, n_used, dim, out);
  return (int)cudaGetLastError();
}
