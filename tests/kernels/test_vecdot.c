/*
 * test_vecdot.c - dot products of every weight type with its activation
 * format: the scalar reference against an independent f64 sum of the
 * dequantized rows, and every SIMD path this machine runs (the probe forced
 * to each level) against the scalar reference. Weights come both from
 * quantizing random rows and from random bytes in every quant field (so
 * extreme codes such as -128 and all 6-bit scales are covered).
 *
 * Tolerances, relative to S = sum |w_i a_i| (the size of the terms):
 *  - quantized types, fast vs reference: 1e-5 S. Block integer sums are exact
 *    in both; they differ only in the order of <= n/32 f32 additions.
 *  - F32/F16/BF16, fast (f32 FMA chains of n/32) vs reference (f64):
 *    max(1e-5, n 2^-24 / 8) S.
 *  - reference vs f64 of dequantized values: 1e-5 S, plus for Q4_1/Q5_1 the
 *    f16 rounding of the activation block sum s: sum |m s| 2^-11.
 */
#include "kt.h"

#include <stdio.h>
#include <string.h>

/* Byte range of the quant fields (not the f16 scales) in one block. */
static void quant_field(int type, int *lo, int *hi) {
  switch (type) {
  case DQ_TYPE_Q4_0: *lo = 2; *hi = 18; break;
  case DQ_TYPE_Q4_1: *lo = 4; *hi = 20; break;
  case DQ_TYPE_Q5_0: *lo = 2; *hi = 22; break;
  case DQ_TYPE_Q5_1: *lo = 4; *hi = 24; break;
  case DQ_TYPE_Q8_0: *lo = 2; *hi = 34; break;
  case DQ_TYPE_Q4_K: *lo = 4; *hi = 144; break;
  case DQ_TYPE_Q6_K: *lo = 0; *hi = 208; break;
  default: *lo = *hi = 0;
  }
}

static dq_cpu_caps levels[3];
static int n_levels;

static void check_type(int type, int64_t n, int random_bits, kt_rng *r) {
  const dq_type_info *ti = dq_type_get(type);
  float *xw = malloc(sizeof(float) * (size_t)n), *xa = malloc(sizeof(float) * (size_t)n);
  float *dw = malloc(sizeof(float) * (size_t)n), *da = malloc(sizeof(float) * (size_t)n);
  void *w = kt_row_alloc(type, n), *a = kt_row_alloc(ti->vec_dot_type, n);
  kt_fill(r, xw, n);
  kt_fill(r, xa, n);
  CHECK_EQ_INT(dq_quantize_row(type, xw, w, n), DQ_OK);
  if (random_bits) {
    int lo, hi;
    quant_field(type, &lo, &hi);
    for (int64_t b = 0; b < n / ti->block_elems; b++)
      for (int k = lo; k < hi; k++)
        ((uint8_t *)w)[b * ti->block_bytes + k] = (uint8_t)kt_next(r);
  }
  CHECK_EQ_INT(dq_quantize_row(ti->vec_dot_type, xa, a, n), DQ_OK);
  CHECK_EQ_INT(dq_dequantize_row(type, w, dw, n), DQ_OK);
  CHECK_EQ_INT(dq_dequantize_row(ti->vec_dot_type, a, da, n), DQ_OK);

  double exact = 0, S = 0, extra = 0;
  for (int64_t i = 0; i < n; i++) {
    exact += (double)dw[i] * da[i];
    S += fabs((double)dw[i] * da[i]);
  }
  if (type == DQ_TYPE_Q4_1 || type == DQ_TYPE_Q5_1) {
    for (int64_t b = 0; b < n / 32; b++) {
      const uint8_t *blk = (const uint8_t *)w + b * ti->block_bytes;
      dq_f16 m;
      memcpy(&m, blk + 2, 2);
      extra += fabs(dq_f16_to_f32(m) * dq_f16_to_f32(((const dq_block_q8_1 *)a)[b].s)) *
               0x1p-11 * 1.001;
    }
  }
  float ref = 0;
  CHECK_EQ_INT(dq_vec_dot_ref(type, n, w, a, &ref), DQ_OK);
  double tol_ref = 1e-5 * S + extra + 1e-30;
  CHECK_MSG(fabs(ref - exact) <= tol_ref, "%s n=%lld bits=%d: ref %.9g f64 %.9g tol %g",
            ti->name, (long long)n, random_bits, ref, exact, tol_ref);

  int is_float = type == DQ_TYPE_F32 || type == DQ_TYPE_F16 || type == DQ_TYPE_BF16;
  double rel = is_float ? fmax(1e-5, (double)n * 0x1p-24 / 8) : 1e-5;
  for (int l = 0; l < n_levels; l++) {
    float got = 0;
    CHECK_EQ_INT(dq_vec_dot(&levels[l], type, n, w, a, &got), DQ_OK);
    CHECK_MSG(fabs(got - ref) <= rel * S + 1e-30,
              "%s n=%lld bits=%d isa=%s: got %.9g ref %.9g (S %g)", ti->name,
              (long long)n, random_bits, dq_isa_name(levels[l].isa), got, ref, S);
    dq_vec_dot_fn fn = dq_vec_dot_get(&levels[l], type);
    float got2 = 0;
    CHECK(fn != NULL);
    if (fn) {
      fn(n, w, a, &got2);
      CHECK(got2 == got);
    }
  }
  free(xw);
  free(xa);
  free(dw);
  free(da);
  free(w);
  free(a);
}

static void test_probe(dq_cpu_caps caps) {
  CHECK((caps.flags & ~caps.cpuid_flags) == 0); /* executed implies claimed */
  CHECK(caps.desc[0] != 0);
  CHECK_EQ_INT(dq_cpu_caps_limit(caps, DQ_ISA_SCALAR).isa, DQ_ISA_SCALAR);
  if (caps.flags & DQ_CPU_AVX2)
    CHECK_EQ_INT(dq_cpu_caps_limit(caps, DQ_ISA_AVX2).isa, DQ_ISA_AVX2);
  /* A limit never raises the path above what works. */
  dq_cpu_caps none = caps;
  none.flags = 0;
  CHECK_EQ_INT(dq_cpu_caps_limit(none, DQ_ISA_AVX512).isa, DQ_ISA_SCALAR);
  /* DOCQA_CPU_ISA forces a lower path (the caller's setting is restored). */
  const char *env = getenv("DOCQA_CPU_ISA");
  char *saved = env ? strdup(env) : NULL;
  setenv("DOCQA_CPU_ISA", "scalar", 1);
  CHECK_EQ_INT(dq_cpu_probe().isa, DQ_ISA_SCALAR);
  setenv("DOCQA_CPU_ISA", "avx2", 1);
  CHECK(dq_cpu_probe().isa <= DQ_ISA_AVX2);
  unsetenv("DOCQA_CPU_ISA");
  CHECK(dq_cpu_probe().isa >= caps.isa);
  if (saved)
    setenv("DOCQA_CPU_ISA", saved, 1);
  free(saved);
  CHECK_EQ_INT(dq_cpu_probe().isa, caps.isa);
  CHECK_EQ_STR(dq_isa_name(DQ_ISA_AVX512), "avx512");
}

int main(void) {
  dq_cpu_caps caps = dq_cpu_probe();
  fprintf(stderr, "cpu: %s\n", caps.desc);
  test_probe(caps);
  for (int l = DQ_ISA_SCALAR; l <= (int)caps.isa; l++) {
    levels[n_levels] = dq_cpu_caps_limit(caps, (dq_isa)l);
    if (levels[n_levels].isa == (dq_isa)l)
      n_levels++;
  }
  fprintf(stderr, "testing %d ISA levels up to %s\n", n_levels, dq_isa_name(caps.isa));
  kt_rng r = {1234};
  static const int64_t n32[] = {32, 64, 96, 576, 640, 896, 2048, 4864};
  static const int64_t nk[] = {256, 512, 768, 2048, 4096};
  static const int64_t nf[] = {1, 7, 8, 31, 33, 100, 384, 576, 4097};
  for (int t = 0; t < KT_N_WEIGHT_TYPES; t++) {
    int type = kt_weight_types[t];
    const dq_type_info *ti = dq_type_get(type);
    const int64_t *ns = ti->block_elems == 1 ? nf : ti->block_elems == 32 ? n32 : nk;
    size_t nn = ti->block_elems == 1 ? sizeof nf / sizeof nf[0]
                : ti->block_elems == 32 ? sizeof n32 / sizeof n32[0]
                                        : sizeof nk / sizeof nk[0];
    for (size_t k = 0; k < nn; k++)
      for (int bits = 0; bits <= (ti->block_elems > 1); bits++)
        for (int rep = 0; rep < 3; rep++)
          check_type(type, ns[k], bits, &r);
  }

  /* Argument errors. */
  uint8_t buf[2048] = {0};
  float out = 1;
  CHECK_EQ_INT(dq_vec_dot(&caps, DQ_TYPE_Q4_K, 640, buf, buf, &out), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_vec_dot(&caps, DQ_TYPE_Q6_K, 300, buf, buf, &out), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_vec_dot(&caps, DQ_TYPE_Q8_K, 256, buf, buf, &out), DQ_ERR_UNSUPPORTED);
  CHECK_EQ_INT(dq_vec_dot(&caps, 13, 256, buf, buf, &out), DQ_ERR_UNSUPPORTED);
  CHECK_EQ_INT(dq_vec_dot_ref(DQ_TYPE_Q4_0, 33, buf, buf, &out), DQ_ERR_ARG);
  CHECK(dq_vec_dot_get(&caps, DQ_TYPE_Q8_1) == NULL);
  CHECK_EQ_INT(dq_vec_dot(&caps, DQ_TYPE_Q4_0, 0, buf, buf, &out), DQ_OK);
  CHECK(out == 0);
  return TEST_EXIT();
}
