/*
 * test_quant.c - quantize -> dequantize round trips of every type on random
 * rows (magnitudes varying per block, several sizes including rows that are
 * not a multiple of 256 where the format allows), each against an error
 * bound derived from the format and the quantizer's rule; plus the argument
 * errors (K-quants reject n % 256 != 0). The SIMD activation quantizers
 * must produce the reference's bytes exactly, at every ISA level.
 */
#include "kt.h"
#include "cpu/cpu_int.h" /* dq_quantize_act: the SIMD activation quantizers */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double max_abs(const float *x, int n) {
  double m = 0;
  for (int i = 0; i < n; i++)
    m = fmax(m, fabs(x[i]));
  return m;
}

/* Worst error allowed for element i of block-wise formats. `x` points at the
 * block containing the element; bounds follow from each format's step:
 *  - symmetric absmax (Q8_*: step amax/127): half a step, plus the f16
 *    rounding of d (relative 2^-11, times |q| <= 127);
 *  - Q4_0/Q5_0 (step amax/8 or /16, largest magnitude on the -8/-16 level):
 *    the opposite extreme clamps one level short, so one full step;
 *  - Q4_1/Q5_1 (step (max-min)/15 or /31): half a step, plus f16 rounding of
 *    d and m;
 *  - Q4_K: 6-bit scales and mins quantize the per-sub-block step and offset
 *    with steps maxstep/63 and maxoff/63, so values drift by up to 15 half
 *    scale-steps plus half an offset-step, on top of half a step;
 *  - Q6_K: 8-bit group scales (step maxstep/127): half a step, 32 half
 *    scale-steps, and one step of clamping at +31. */
static double bound(int type, const float *blk, int n_blk) {
  double amax = max_abs(blk, n_blk), mn = blk[0], mx = blk[0];
  for (int i = 0; i < n_blk; i++) {
    mn = fmin(mn, blk[i]);
    mx = fmax(mx, blk[i]);
  }
  const double h = 0x1p-11; /* f16 relative rounding */
  switch (type) {
  case DQ_TYPE_Q8_0:
  case DQ_TYPE_Q8_1: return amax / 127 * (0.5 + 127 * h) + 1e-30;
  case DQ_TYPE_Q8_K: return amax / 127 * 0.5 * (1 + 1e-5) + 1e-30;
  case DQ_TYPE_Q4_0: return amax / 8 * (1 + 8 * h) + 1e-30;
  case DQ_TYPE_Q5_0: return amax / 16 * (1 + 16 * h) + 1e-30;
  case DQ_TYPE_Q4_1: return (mx - mn) / 15 * (0.5 + 15 * h) + fabs(mn) * h + 1e-30;
  case DQ_TYPE_Q5_1: return (mx - mn) / 31 * (0.5 + 31 * h) + fabs(mn) * h + 1e-30;
  case DQ_TYPE_Q4_K: {
    double maxstep = 0, maxoff = 0;
    for (int s = 0; s < 8; s++) {
      double smn = 0, smx = blk[32 * s];
      for (int l = 0; l < 32; l++) {
        smn = fmin(smn, blk[32 * s + l]);
        smx = fmax(smx, blk[32 * s + l]);
      }
      maxstep = fmax(maxstep, (smx - smn) / 15);
      maxoff = fmax(maxoff, -smn);
    }
    return maxstep * (0.5 + 15 * 0.5 / 63 + 20 * h) + maxoff * (0.5 / 63 + 2 * h) + 1e-30;
  }
  case DQ_TYPE_Q6_K: {
    double maxstep = amax / 32;
    return maxstep * (1 + 32 * 0.5 / 127 + 40 * h) + 1e-30;
  }
  }
  return 0;
}

static void round_trip(int type, int64_t n, kt_rng *r) {
  float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
  void *q = kt_row_alloc(type, n);
  kt_fill(r, x, n);
  CHECK_EQ_INT(dq_quantize_row(type, x, q, n), DQ_OK);
  CHECK_EQ_INT(dq_dequantize_row(type, q, y, n), DQ_OK);
  int be = dq_type_get(type)->block_elems, bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double err = fabs((double)y[i] - x[i]), tol;
    if (type == DQ_TYPE_F32)
      tol = 0;
    else if (type == DQ_TYPE_F16)
      tol = fabs(x[i]) * 0x1p-11 + 0x1p-25; /* subnormal step 2^-24 */
    else if (type == DQ_TYPE_BF16)
      tol = fabs(x[i]) * 0x1p-8;
    else
      tol = bound(type, x + i / be * be, be);
    worst = fmax(worst, tol > 0 ? err / tol : err);
    if (!(err <= tol) && bad++ < 3)
      fprintf(stderr, "%s n=%lld [%lld]: x=%g y=%g err %g > %g\n", dq_type_name(type),
              (long long)n, (long long)i, x[i], y[i], err, tol);
  }
  CHECK_MSG(bad == 0, "%s n=%lld: %d elements out of bound", dq_type_name(type),
            (long long)n, bad);
  if (n >= 1024)
    fprintf(stderr, "  %-5s n=%-5lld worst error / bound = %.3f\n", dq_type_name(type),
            (long long)n, worst);
  if (type == DQ_TYPE_Q8_K) { /* bsums are the exact sums of each 16 qs */
    const dq_block_q8_k *b = q;
    int bad_sums = 0;
    for (int64_t i = 0; i < n / 256; i++)
      for (int g = 0; g < 16; g++) {
        int s = 0;
        for (int j = 0; j < 16; j++)
          s += b[i].qs[16 * g + j];
        bad_sums += s != b[i].bsums[g];
      }
    CHECK_EQ_INT(bad_sums, 0);
  }
  if (type == DQ_TYPE_Q8_1) { /* s = d * sum(qs), rounded to f16 */
    const dq_block_q8_1 *b = q;
    int bad_s = 0;
    for (int64_t i = 0; i < n / 32; i++) {
      int s = 0;
      for (int j = 0; j < 32; j++)
        s += b[i].qs[j];
      double want = (double)dq_f16_to_f32(b[i].d) * s;
      if (!(fabs(dq_f16_to_f32(b[i].s) - want) <= fabs(want) * 0x1p-11 + 1e-30))
        bad_s++;
    }
    CHECK_EQ_INT(bad_s, 0);
  }
  free(x);
  free(y);
  free(q);
}

int main(void) {
  kt_rng r = {42};
  static const int types32[] = {DQ_TYPE_Q4_0, DQ_TYPE_Q4_1, DQ_TYPE_Q5_0,
                                DQ_TYPE_Q5_1, DQ_TYPE_Q8_0, DQ_TYPE_Q8_1};
  static const int64_t n32[] = {32, 96, 576, 640, 2048 + 32};
  for (size_t t = 0; t < sizeof types32 / sizeof types32[0]; t++)
    for (size_t k = 0; k < sizeof n32 / sizeof n32[0]; k++)
      round_trip(types32[t], n32[k], &r);
  static const int typesk[] = {DQ_TYPE_Q4_K, DQ_TYPE_Q6_K, DQ_TYPE_Q8_K};
  static const int64_t nk[] = {256, 512, 2048, 4096};
  for (size_t t = 0; t < 3; t++)
    for (size_t k = 0; k < sizeof nk / sizeof nk[0]; k++)
      round_trip(typesk[t], nk[k], &r);
  static const int typesf[] = {DQ_TYPE_F32, DQ_TYPE_F16, DQ_TYPE_BF16};
  static const int64_t nf[] = {1, 7, 33, 1000, 4097};
  for (size_t t = 0; t < 3; t++)
    for (size_t k = 0; k < sizeof nf / sizeof nf[0]; k++)
      round_trip(typesf[t], nf[k], &r);

  /* SIMD activation quantizers == reference, byte for byte. */
  dq_cpu_caps caps = dq_cpu_probe();
  /* f16 rows -> f32 at every ISA level == the scalar conversion, bit for
   * bit, on every one of the 65536 halves (infinities, subnormals, signed
   * zero) and at odd lengths (vector tails); NaNs stay NaN (F16C quiets
   * signaling NaNs, the scalar conversion keeps their payload bits) */
  {
    enum { NH = 65536 + 13 };
    dq_f16 *h = malloc(NH * sizeof *h);
    float *y = malloc(NH * sizeof *y);
    for (int i = 0; i < NH; i++)
      h[i] = (dq_f16)(i * 40503u);
    for (int l = DQ_ISA_SCALAR; h && y && l <= (int)caps.isa; l++) {
      dq_cpu_caps c = dq_cpu_caps_limit(caps, (dq_isa)l);
      for (int64_t n = 0; n <= 17; n++) {
        dq_f16_to_f32_row(&c, h + 5, y, n);
        for (int64_t i = 0; i < n; i++)
          CHECK(memcmp(&y[i], &(float){dq_f16_to_f32(h[5 + i])}, 4) == 0 ||
                (isnan(y[i]) && isnan(dq_f16_to_f32(h[5 + i]))));
      }
      dq_f16_to_f32_row(&c, h, y, NH);
      int bad = 0;
      for (int i = 0; i < NH; i++) {
        float ref = dq_f16_to_f32(h[i]);
        bad += memcmp(&y[i], &ref, 4) != 0 && !(isnan(y[i]) && isnan(ref));
      }
      CHECK_MSG(bad == 0, "isa %d: %d halves converted differently", l, bad);
    }
    dq_f16_to_f32_row(NULL, h, y, 3); /* NULL caps: scalar */
    CHECK(h && y && y[2] == dq_f16_to_f32(h[2]));
    free(h);
    free(y);
  }
  static const int acts[] = {DQ_TYPE_Q8_0, DQ_TYPE_Q8_1, DQ_TYPE_Q8_K};
  for (int l = DQ_ISA_SCALAR; l <= (int)caps.isa; l++) {
    dq_cpu_caps c = dq_cpu_caps_limit(caps, (dq_isa)l);
    for (int a = 0; a < 3; a++)
      for (int64_t n = 256; n <= 4096; n *= 4) {
        float *x = malloc(sizeof(float) * (size_t)n);
        void *q0 = kt_row_alloc(acts[a], n), *q1 = kt_row_alloc(acts[a], n);
        size_t bytes = 0;
        dq_type_row_bytes(acts[a], n, &bytes);
        kt_fill(&r, x, n);
        x[5] = 0; /* an all-zero block */
        for (int k = 0; k < 32; k++)
          x[32 + k] = 0;
        dq_quantize_row(acts[a], x, q0, n);
        memset(q1, 0x5a, bytes);
        dq_quantize_act(&c, acts[a], x, q1, n);
        CHECK_MSG(memcmp(q0, q1, bytes) == 0, "%s n=%lld isa=%s differs from reference",
                  dq_type_name(acts[a]), (long long)n, dq_isa_name(c.isa));
        free(x);
        free(q0);
        free(q1);
      }
  }

  /* Zero rows quantize to zero (no 0/0). */
  float z[256] = {0}, back[256];
  for (int t = 0; t < KT_N_WEIGHT_TYPES; t++) {
    void *q = kt_row_alloc(kt_weight_types[t], 256);
    CHECK_EQ_INT(dq_quantize_row(kt_weight_types[t], z, q, 256), DQ_OK);
    CHECK_EQ_INT(dq_dequantize_row(kt_weight_types[t], q, back, 256), DQ_OK);
    CHECK(max_abs(back, 256) == 0);
    free(q);
  }

  /* Errors: ragged K-quant rows, ragged blocks, unknown types. */
  float x[640];
  uint8_t buf[4096];
  kt_fill(&r, x, 640);
  CHECK_EQ_INT(dq_quantize_row(DQ_TYPE_Q4_K, x, buf, 640), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_quantize_row(DQ_TYPE_Q6_K, x, buf, 300), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_quantize_row(DQ_TYPE_Q8_K, x, buf, 100), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_dequantize_row(DQ_TYPE_Q4_K, buf, x, 640), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_quantize_row(DQ_TYPE_Q4_0, x, buf, 40), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_quantize_row(11, x, buf, 256), DQ_ERR_UNSUPPORTED);
  CHECK_EQ_INT(dq_dequantize_row(-3, buf, x, 32), DQ_ERR_UNSUPPORTED);
  CHECK_EQ_INT(dq_quantize_row(DQ_TYPE_Q4_0, x, buf, -32), DQ_ERR_ARG);
  return TEST_EXIT();
}
