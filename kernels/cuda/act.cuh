/*
 * act.cuh - the gated units' activations, shared by elem.cu (the glu op)
 * and matmul.cu (the fused gate/up product), so that both give the same
 * bits. The CPU's exp_approx differs from expf by an ulp or two; these use
 * expf (the comparison tests allow for it).
 */
#ifndef DQ_CUDA_ACT_CUH
#define DQ_CUDA_ACT_CUH

#include <cuda_runtime.h>
#include <math.h>

__device__ static __forceinline__ float dqa_silu(float v) {
  return v / (1.0f + expf(-v));
}
__device__ static __forceinline__ float dqa_gelu_tanh(float v) {
  const float k = 0.79788456080286535588f; /* sqrt(2/pi) */
  float u = k * v * (1.0f + __fmul_rn(0.044715f * v, v)); /* no FMA: CPU's */
  return v / (1.0f + expf(-2.0f * u));
}
/* act(g) u; act 0: SiLU, 1: GELU (tanh form), as backend.h's glu */
__device__ static __forceinline__ float dqa_glu(float g, float u, int act) {
  return (act ? dqa_gelu_tanh(g) : dqa_silu(g)) * u;
}

#endif /* DQ_CUDA_ACT_CUH */
