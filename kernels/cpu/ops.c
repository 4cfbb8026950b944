/*
 * ops.c - the row-wise and element-wise f32 operations of a transformer
 * forward pass that are not matrix products: RMSNorm, LayerNorm, softmax,
 * SiLU, GELU (tanh approximation as ggml computes it, and the erf form
 * with erf to 3e-7), element-wise product, sum and axpy, and rotary position
 * embedding (normal and NeoX pairings). Plain C written so the compiler
 * vectorizes it for the baseline ISA (isa.cmake turns on the dynamic vectorizer
 * cost model for this file): exp is our own branch-free polynomial (exp_approx,
 * act_impl.h), since a libm call per element would dominate softmax over
 * long contexts. SiLU and both GELUs also have AVX2 and AVX-512 builds of
 * the same code (dq_silu_isa, dq_gelu_tanh_isa, dq_gelu_erf_isa: same
 * bits).
 * Attention itself (scores, masking, KV cache) is the engine's.
 */
#include "cpu_int.h"

#include <math.h>

#define ACT_NAME(f) dq_##f
#include "act_impl.h"

/* SiLU and tanh GELU on caps' widest path: the same operations as the
 * baseline build (act_impl.h), so the same bits. 2: AVX-512, 1: AVX2. */
static int act_level(const dq_cpu_caps *caps) {
  if (!caps)
    return 0;
  if (caps->isa >= DQ_ISA_AVX512 && (caps->flags & DQ_CPU_AVX512))
    return 2;
  return caps->isa >= DQ_ISA_AVX2 && (caps->flags & DQ_CPU_AVX2);
}

void dq_silu_isa(const dq_cpu_caps *caps, float *y, const float *x,
                 int64_t n) {
  static void (*const fn[3])(float *, const float *, int64_t) = {
      dq_silu, dq_silu_avx2, dq_silu_avx512};
  fn[act_level(caps)](y, x, n);
}

void dq_gelu_tanh_isa(const dq_cpu_caps *caps, float *y, const float *x,
                      int64_t n) {
  static void (*const fn[3])(float *, const float *, int64_t) = {
      dq_gelu_tanh, dq_gelu_tanh_avx2, dq_gelu_tanh_avx512};
  fn[act_level(caps)](y, x, n);
}

void dq_gelu_erf_isa(const dq_cpu_caps *caps, float *y, const float *x,
                     int64_t n) {
  static void (*const fn[3])(float *, const float *, int64_t) = {
      dq_gelu_erf, dq_gelu_erf_avx2, dq_gelu_erf_avx512};
  fn[act_level(caps)](y, x, n);
}

/* sum x^2 in double: eight accumulators (lane i % 8) added in a fixed
 * tree, so the compiler vectorizes it (one serial chain of double adds was
 * 5% of Gemma 3 270M's prefill) and the order is the same on every ISA;
 * each square is exact in double. */
static double sum_sq(const float *x, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float *p = x + i;
    s0 += (double)p[0] * p[0], s1 += (double)p[1] * p[1];
    s2 += (double)p[2] * p[2], s3 += (double)p[3] * p[3];
    s4 += (double)p[4] * p[4], s5 += (double)p[5] * p[5];
    s6 += (double)p[6] * p[6], s7 += (double)p[7] * p[7];
  }
  double ss = ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7));
  for (; i < n; i++)
    ss += (double)x[i] * x[i];
  return ss;
}

void dq_rmsnorm(float *y, const float *x, const float *w, int64_t n, float eps) {
  double ss = sum_sq(x, n);
  float scale = (float)(1.0 / sqrt(ss / (double)n + (double)eps));
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] * scale * (w ? w[i] : 1.0f);
}

void dq_layernorm(float *y, const float *x, const float *w, const float *b,
                  int64_t n, float eps) {
  double mean = 0.0, var = 0.0;
  for (int64_t i = 0; i < n; i++)
    mean += x[i];
  mean /= (double)n;
  for (int64_t i = 0; i < n; i++)
    var += ((double)x[i] - mean) * ((double)x[i] - mean);
  var /= (double)n;
  float scale = (float)(1.0 / sqrt(var + (double)eps));
  for (int64_t i = 0; i < n; i++)
    y[i] = (float)((double)x[i] - mean) * scale * (w ? w[i] : 1.0f) +
           (b ? b[i] : 0.0f);
}

void dq_softmax(float *x, int64_t n) {
  float max = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    max = fmaxf(max, x[i]);
  if (max == -INFINITY) { /* every entry masked: define as uniform zero */
    for (int64_t i = 0; i < n; i++)
      x[i] = 0.0f;
    return;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) /* vectorized: no reduction here */
    x[i] = exp_approx(x[i] - max);
  for (int64_t i = 0; i < n; i++)
    sum += x[i];
  float inv = (float)(1.0 / sum);
  for (int64_t i = 0; i < n; i++)
    x[i] *= inv;
}

void dq_mul(float *y, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = a[i] * b[i];
}

void dq_add(float *y, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = a[i] + b[i];
}

void dq_axpy(float *y, float alpha, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] += alpha * x[i];
}

void dq_scale(float *y, float alpha, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = alpha * x[i];
}

/* One (cos, sin) rotation of pair k of n_heads heads. */
static void rope_heads(float *x, int n_heads, int head_dim, int i0, int i1,
                       float c, float s) {
  for (int h = 0; h < n_heads; h++) {
    float *v = x + (int64_t)h * head_dim;
    float x0 = v[i0], x1 = v[i1];
    v[i0] = x0 * c - x1 * s;
    v[i1] = x0 * s + x1 * c;
  }
}

#define ROPE_PAIRS 64 /* powers of freq_base computed at a time */

/* dq_rope_qk on n_tok tokens at pos32[t], or at pos64 when pos32 is NULL
 * (dq_rope's one token, whose position may pass int32). */
static void rope_tokens(float *q, int nq, float *k, int nk, int head_dim,
                        int n_rot, const int32_t *pos32, int64_t pos64,
                        int64_t n_tok, float freq_base, float freq_scale,
                        int neox) {
  int half = n_rot / 2;
  double f[ROPE_PAIRS];
  for (int k0 = 0; k0 < half; k0 += ROPE_PAIRS) {
    int k1 = k0 + ROPE_PAIRS < half ? k0 + ROPE_PAIRS : half;
    for (int j = k0; j < k1; j++)
      f[j - k0] = pow((double)freq_base, -2.0 * j / (double)n_rot);
    for (int64_t t = 0; t < n_tok; t++) {
      /* Angles in double: pos reaches 1e5+ and f32 would lose the phase. */
      double a = (double)freq_scale * (double)(pos32 ? pos32[t] : pos64);
      for (int j = k0; j < k1; j++) {
        double theta = a * f[j - k0];
        float c = (float)cos(theta), s = (float)sin(theta);
        int i0 = neox ? j : 2 * j, i1 = neox ? j + half : 2 * j + 1;
        rope_heads(q + t * nq * head_dim, nq, head_dim, i0, i1, c, s);
        if (k)
          rope_heads(k + t * nk * head_dim, nk, head_dim, i0, i1, c, s);
      }
    }
  }
}

void dq_rope_qk(float *q, int nq, float *k, int nk, int head_dim, int n_rot,
                const int32_t *pos, int64_t n_tok, float freq_base,
                float freq_scale, int neox) {
  rope_tokens(q, nq, k, nk, head_dim, n_rot, pos, 0, n_tok, freq_base,
              freq_scale, neox);
}

void dq_rope(float *x, int n_heads, int head_dim, int n_rot, int64_t pos,
             float freq_base, float freq_scale, int neox) {
  rope_tokens(x, n_heads, NULL, 0, head_dim, n_rot, NULL, pos, 1, freq_base,
              freq_scale, neox);
}
