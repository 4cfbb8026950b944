/*
 * test_ops.c - the non-matmul ops on hand-checked values (worked out with
 * Python's math module): RMSNorm, LayerNorm, softmax (including a row with
 * huge values and a fully masked row), SiLU, both GELU forms, and RoPE in
 * the normal and NeoX pairings.
 */
#include "kt.h"

#include <string.h>

#include <stdio.h>

#define CHECK_ROW(got, want, n, tol)                                           \
  do {                                                                         \
    for (int i_ = 0; i_ < (n); i_++)                                           \
      CHECK_NEAR((got)[i_], (want)[i_], (tol) * (1 + fabs((want)[i_])));        \
  } while (0)

/* How many of dq_gelu_erf's values over x[0..n) are off libm's erf in
 * double: erf to 3e-7 absolute (the approximation's own 1.5e-7, exp_approx
 * and f32 rounding), so the GELU to 3e-7 |v| plus the f32 rounding of
 * v/sqrt2 and of the result. *worst: the largest error / |v|. */
static int gelu_erf_off(const float *x, int n, double *worst) {
  float y[1024];
  int bad = 0;
  *worst = 0;
  if (n > 1024)
    return n;
  dq_gelu_erf(y, x, n);
  for (int i = 0; i < n; i++) {
    double v = x[i], want = 0.5 * v * (1 + erf(v * 0.7071067811865476));
    double err = fabs(y[i] - want);
    bad += !(err <= 3e-7 * fabs(v) + 2e-7 * fabs(want) + 1e-30);
    if (fabs(v) > 0 && err / fabs(v) > *worst)
      *worst = err / fabs(v);
  }
  return bad;
}

int main(void) {
  float y[8];
  const float x4[4] = {1, 2, 3, 4};
  {
    const double want[4] = {0.3651483473268884, 0.7302966946537768,
                            1.0954450419806652, 1.4605933893075536};
    dq_rmsnorm(y, x4, NULL, 4, 1e-6f);
    CHECK_ROW(y, want, 4, 1e-6);
    const float w[4] = {2, 2, 2, 2};
    dq_rmsnorm(y, x4, w, 4, 1e-6f);
    for (int i = 0; i < 4; i++)
      CHECK_NEAR(y[i], 2 * want[i], 2e-6);
  }
  { /* long rows (the eight-accumulator sum and its tail) against a
     * long-double reference: within 2 float ulps, since the scale is
     * rounded to float once and each output once more */
    static float xl[1003], yl[1003];
    for (int n = 8; n <= 1003; n += 995 / 3) {
      long double ss = 0;
      for (int i = 0; i < n; i++) {
        xl[i] = (float)((i * 37 % 101) - 50) / 7.0f;
        ss += (long double)xl[i] * xl[i];
      }
      long double sc = 1.0L / sqrtl(ss / n + 1e-6L);
      dq_rmsnorm(yl, xl, NULL, n, 1e-6f);
      int bad = 0;
      for (int i = 0; i < n; i++)
        if (fabsl(yl[i] - xl[i] * sc) > 2.5e-7L * fabsl(xl[i] * sc) + 1e-30L)
          bad++;
      CHECK_MSG(bad == 0, "rmsnorm n=%d: %d outputs off", n, bad);
    }
  }
  {
    const double want[4] = {-1.3416354199689269, -0.447211806656309,
                            0.447211806656309, 1.3416354199689269};
    dq_layernorm(y, x4, NULL, NULL, 4, 1e-5f);
    CHECK_ROW(y, want, 4, 1e-6);
    const float w[4] = {1, 1, 1, 1}, b[4] = {1, 1, 1, 1};
    dq_layernorm(y, x4, w, b, 4, 1e-5f);
    for (int i = 0; i < 4; i++)
      CHECK_NEAR(y[i], want[i] + 1, 1e-6);
  }
  {
    float s[3] = {1, 2, 3};
    const double want[3] = {0.09003057317038046, 0.24472847105479767,
                            0.6652409557748219};
    dq_softmax(s, 3);
    CHECK_ROW(s, want, 3, 1e-6);
    float big[3] = {1001, 1002, 1003};
    dq_softmax(big, 3);
    CHECK_ROW(big, want, 3, 1e-6);
    float masked[3] = {-INFINITY, 5, -INFINITY};
    dq_softmax(masked, 3);
    CHECK(masked[0] == 0 && masked[1] == 1 && masked[2] == 0);
    float all[2] = {-INFINITY, -INFINITY};
    dq_softmax(all, 2);
    CHECK(all[0] == 0 && all[1] == 0);
  }
  const float xa[3] = {1.0f, -2.0f, 0.5f};
  {
    const double want[3] = {0.7310585786300049, -0.2384058440442351, 0.3112296656009273};
    dq_silu(y, xa, 3);
    CHECK_ROW(y, want, 3, 1e-6);
  }
  {
    const double want[3] = {0.8411919906082768, -0.04540230591222494, 0.34571400982514394};
    dq_gelu_tanh(y, xa, 3);
    CHECK_ROW(y, want, 3, 1e-6);
  }
  {
    const double want[3] = {0.8413447460685429, -0.04550026389635842, 0.34573123063700656};
    dq_gelu_erf(y, xa, 3);
    CHECK_ROW(y, want, 3, 1e-6);
  }
  {
    const float b[3] = {2, 3, 4};
    dq_mul(y, xa, b, 3);
    CHECK(y[0] == 2 && y[1] == -6 && y[2] == 2);
    dq_add(y, xa, b, 3);
    CHECK(y[0] == 3 && y[1] == 1 && y[2] == 4.5f);
    dq_axpy(y, 2.0f, b, 3); /* 3 + 4, 1 + 6, 4.5 + 8 */
    CHECK(y[0] == 7 && y[1] == 7 && y[2] == 12.5f);
    dq_scale(y, -0.5f, b, 3);
    CHECK(y[0] == -1 && y[1] == -1.5f && y[2] == -2);
  }
  { /* head_dim 4, n_rot 4, pos 3, base 1e4: angles 3 and 0.03 rad */
    float r[8] = {1, 2, 3, 4, 1, 2, 3, 4};
    const double normal[4] = {-1.27223251272018, -1.8388649851410237,
                              2.87866810043698, 4.088186635603437};
    dq_rope(r, 2, 4, 4, 3, 10000.0f, 1.0f, 0);
    CHECK_ROW(r, normal, 4, 1e-6);
    CHECK_ROW(r + 4, normal, 4, 1e-6);
    float q[4] = {1, 2, 3, 4};
    const double neox[4] = {-1.413352520780047, 1.8791180666879925,
                            -2.828857481741469, 4.058191135400942};
    dq_rope(q, 1, 4, 4, 3, 10000.0f, 1.0f, 1);
    CHECK_ROW(q, neox, 4, 1e-6);
    /* partial rotation leaves the tail alone; pos 0 is the identity */
    float p[6] = {1, 2, 3, 4, 5, 6};
    dq_rope(p, 1, 6, 4, 0, 10000.0f, 1.0f, 1);
    CHECK(p[0] == 1 && p[1] == 2 && p[2] == 3 && p[3] == 4 && p[4] == 5 && p[5] == 6);
    dq_rope(p, 1, 6, 4, 3, 10000.0f, 1.0f, 1);
    CHECK(p[4] == 5 && p[5] == 6);
  }
  { /* dq_rope_qk: the bits of dq_rope per token on q and on k, head size
     * 256 (past the 64 powers computed at a time), partial n_rot, both
     * pairings, positions up to 1e5 */
    enum { T = 5, HD = 256, NQ = 3, NK = 2 };
    static float q[T * NQ * HD], k[T * NK * HD], q1[T * NQ * HD],
        k1[T * NK * HD];
    const int32_t pos[T] = {0, 1, 77, 4095, 100003};
    const int rots[] = {256, 160};
    for (int ri = 0; ri < 2; ri++)
      for (int neox = 0; neox < 2; neox++) {
        for (int i = 0; i < T * NQ * HD; i++)
          q[i] = q1[i] = sinf((float)i * 0.731f) * 3.0f;
        for (int i = 0; i < T * NK * HD; i++)
          k[i] = k1[i] = cosf((float)i * 0.377f) * 2.0f;
        dq_rope_qk(q, NQ, k, NK, HD, rots[ri], pos, T, 500000.0f, 0.5f, neox);
        for (int t = 0; t < T; t++) {
          dq_rope(q1 + t * NQ * HD, NQ, HD, rots[ri], pos[t], 500000.0f, 0.5f,
                  neox);
          dq_rope(k1 + t * NK * HD, NK, HD, rots[ri], pos[t], 500000.0f, 0.5f,
                  neox);
        }
        CHECK(!memcmp(q, q1, sizeof q) && !memcmp(k, k1, sizeof k));
        dq_rope_qk(q, NQ, NULL, NK, HD, rots[ri], pos, T, 500000.0f, 0.5f,
                   neox);
        CHECK(memcmp(q, q1, sizeof q) != 0 && !memcmp(k, k1, sizeof k));
      }
  }
  { /* exp-based ops over a wide range against libm in double */
    enum { N = 700 };
    float xs[N], ys[N];
    for (int i = 0; i < N; i++)
      xs[i] = -120.0f + 0.3437f * (float)i; /* -120 .. 120 */
    int bad = 0;
    dq_silu(ys, xs, N);
    for (int i = 0; i < N; i++) {
      double want = xs[i] / (1.0 + exp(-(double)xs[i]));
      bad += !(fabs(ys[i] - want) <= 2e-6 * fabs(want) + 1e-30);
    }
    CHECK_EQ_INT(bad, 0);
    bad = 0;
    dq_gelu_tanh(ys, xs, N);
    for (int i = 0; i < N; i++) {
      /* 0.5 v (1 + tanh(u)) written as v / (1 + e^-2u): the same function
       * without the cancellation of 1 + tanh(u) for negative v in double */
      double v = xs[i], u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
      double want = v / (1 + exp(-2 * u));
      /* plus the f32 rounding of the exponent argument 2u */
      bad += !(fabs(ys[i] - want) <= (2e-6 + fabs(2 * u) * 0x1p-23) * fabs(want) + 1e-30);
    }
    CHECK_EQ_INT(bad, 0);
    /* erf GELU on the wide sweep, then near zero, where the answer is
     * small */
    double worst = 0;
    bad = gelu_erf_off(xs, N, &worst);
    CHECK_MSG(bad == 0, "gelu_erf: %d of %d off; worst error / |x| %.3g", bad,
              N, worst);
    float fine[N];
    for (int i = 0; i < N; i++)
      fine[i] = -6.0f + (12.0f / N) * (float)i;
    bad = gelu_erf_off(fine, N, &worst);
    CHECK_MSG(bad == 0, "gelu_erf near 0: %d of %d off; worst error / |x| %.3g",
              bad, N, worst);
    /* the ISA builds give the baseline's bits, on a ragged length (vector
     * bodies and tails), with infinities and NaN among the inputs */
    {
      enum { M = 1037 };
      static float xm[M], base[M], wide[M];
      for (int i = 0; i < M; i++)
        xm[i] = -95.0f + 0.1831f * (float)i + (float)(i % 7) * 1e-3f;
      xm[5] = INFINITY, xm[17] = -INFINITY, xm[400] = NAN, xm[401] = 0.0f;
      dq_cpu_caps caps = dq_cpu_probe();
      for (int l = DQ_ISA_SCALAR; l <= (int)caps.isa; l++) {
        dq_cpu_caps c = dq_cpu_caps_limit(caps, (dq_isa)l);
        static void (*const base_fn[3])(float *, const float *, int64_t) = {
            dq_silu, dq_gelu_tanh, dq_gelu_erf};
        static void (*const isa_fn[3])(const dq_cpu_caps *, float *,
                                       const float *, int64_t) = {
            dq_silu_isa, dq_gelu_tanh_isa, dq_gelu_erf_isa};
        static const char *const fname[3] = {"silu", "gelu_tanh", "gelu_erf"};
        for (int f = 0; f < 3; f++) {
          base_fn[f](base, xm, M);
          isa_fn[f](&c, wide, xm, M);
          CHECK_MSG(!memcmp(base, wide, sizeof base), "%s on %s: bits differ",
                    fname[f], dq_isa_name(c.isa));
        }
      }
    }
    /* softmax of a wide row: every probability to 2e-6 relative (or 1e-37),
     * plus the f32 rounding of its argument x - max (|x - max| 2^-23) */
    float row[N];
    for (int i = 0; i < N; i++)
      row[i] = xs[i] * 0.5f;
    double mx = row[N - 1], sum = 0;
    for (int i = 0; i < N; i++)
      sum += exp((double)row[i] - mx);
    dq_softmax(row, N);
    bad = 0;
    for (int i = 0; i < N; i++) {
      double want = exp((double)xs[i] * 0.5 - mx) / sum;
      double arg = fabs((double)xs[i] * 0.5 - mx);
      bad += !(fabs(row[i] - want) <= (2e-6 + arg * 0x1p-23) * want + 1e-37);
    }
    CHECK_EQ_INT(bad, 0);
  }
  return TEST_EXIT();
}
