/*
 * act_impl.h - exp_approx and the activations built on it (SiLU, tanh
 * GELU, and erf GELU through erf_approx), written once and compiled three
 * times: for the baseline ISA by
 * ops.c (which also uses exp_approx for softmax), and by act_avx2.c and
 * act_avx512.c with their ISA flags and FP contraction off (isa.cmake).
 * Without contraction every build performs the same IEEE operations in the
 * same order, only in wider vectors, so the three give the same bits
 * (test_ops compares them); the wide builds are 2-4x faster (the baseline
 * tanh GELU was 5% of Gemma 3 270M's prefill). ACT_NAME(f) names the
 * functions of a build.
 */
#ifndef ACT_NAME
#error "define ACT_NAME before including act_impl.h"
#endif

#include <stdint.h>

/* e^x to about 2 ulp: x = n ln2 + r with |r| <= ln2/2, e^r by its degree-7
 * Taylor polynomial (truncation < 2e-8 relative), 2^n by exponent bits.
 * Below -87.3 (e^x under FLT_MIN) the result is 0, so e^-inf = 0; above
 * 88.7 it saturates at the largest finite power. NaN stays NaN. */
static inline float exp_approx(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693145751953125f, ln2_lo = 1.42860682030941723212e-6f;
  float xc = x > 88.7f ? 88.7f : x;
  xc = xc < -87.3f ? -87.3f : xc;
  /* round to nearest by the 1.5 * 2^23 trick (SSE2-vectorizable) */
  float n = (xc * log2e + 12582912.0f) - 12582912.0f;
  float r = xc - n * ln2_hi;
  r = r - n * ln2_lo;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  union { uint32_t u; float f; } sc;
  sc.u = (uint32_t)((int32_t)n + 127) << 23;
  float v = p * sc.f;
  v = x < -87.3f ? 0.0f : v;
  return x != x ? x : v;
}

/* erf(x) to about 3e-7 absolute: Abramowitz and Stegun's 7.1.26,
 * 1 - (a1 t + ... + a5 t^5) e^(-x^2) with t = 1 / (1 + p |x|) (the
 * formula's own error is under 1.5e-7; exp_approx and f32 rounding add
 * about as much), odd in x. Branch-free, so it vectorizes; libm's erff per
 * element was a fifth of embedding with all-MiniLM-L6-v2. erf(+-inf) =
 * +-1, NaN stays NaN. */
static inline float erf_approx(float x) {
  float a = x < 0.0f ? -x : x;
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  float e = 1.0f - p * t * exp_approx(-(a * a));
  return x < 0.0f ? -e : e;
}

void ACT_NAME(silu)(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] / (1.0f + exp_approx(-x[i]));
}

void ACT_NAME(gelu_erf)(float *y, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erf_approx(v * 0.70710678118654752440f));
  }
}

void ACT_NAME(gelu_tanh)(float *y, const float *x, int64_t n) {
  const float k = 0.79788456080286535588f; /* sqrt(2/pi) */
  for (int64_t i = 0; i < n; i++) {
    /* 0.5 (1 + tanh(u)) = 1 / (1 + e^(-2u)) */
    float v = x[i];
    float u = k * v * (1.0f + 0.044715f * v * v);
    y[i] = v / (1.0f + exp_approx(-2.0f * u));
  }
}
