/*
 * test_vn.c - the unit-layout matrix kernels' builds against each other
 * (gemm_vn.h): the AVX2 build (vpmaddubsw), the 256-bit VNNI build (the
 * code AVX-VNNI machines run, here with AVX-512 VL's encoding) and the
 * AVX-512 VNNI kernels must write the same prepared activations, byte for
 * byte, and give the same results, bit for bit, for every type, ragged
 * shapes (partial last units, odd row counts, token counts around the
 * tiles) and extreme codes: every code at its maximum against activations
 * of +-127, where a vpmaddubsw pair sum or an int16 sum would saturate if
 * the kernels' bounds were wrong. Agreement with the scalar reference is
 * test_matmul.c's (dq_matmul at every ISA level). Builds this machine
 * cannot run are reported and skipped.
 */
#include "kt.h"

#include "../../kernels/cpu/cpu_int.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name;
  const dq_gemm_u8_table *t;
} build;

/* Block p's scale d (Q6_K: its last field) and, for the min types, its
 * min m (Q4_K: dmin). */
static void set_scales(int type, uint8_t *p, size_t bb, float d, float m) {
  dq_f16 hd = dq_f32_to_f16(d), hm = dq_f32_to_f16(m);
  if (type == DQ_TYPE_Q6_K) {
    memcpy(p + bb - 2, &hd, 2);
    return;
  }
  memcpy(p, &hd, 2);
  if (type == DQ_TYPE_Q4_1 || type == DQ_TYPE_Q5_1 || type == DQ_TYPE_Q4_K)
    memcpy(p + 2, &hm, 2);
}

/* Random code bytes (every value of every field), scales small and finite. */
static void random_blocks(kt_rng *r, int type, uint8_t *w, size_t bytes) {
  size_t bb = (size_t)dq_type_get(type)->block_bytes;
  for (size_t i = 0; i < bytes; i++)
    w[i] = (uint8_t)kt_next(r);
  for (size_t b = 0; b < bytes / bb; b++)
    set_scales(type, w + b * bb, bb,
               0.01f + 0.02f * (float)(kt_next(r) % 100) / 100,
               -0.1f * (float)(kt_next(r) % 100) / 100);
}

/* Every code at its maximum (Q8_0: 127). */
static void max_blocks(int type, uint8_t *w, size_t bytes) {
  size_t bb = (size_t)dq_type_get(type)->block_bytes;
  memset(w, type == DQ_TYPE_Q8_0 ? 0x7f : 0xff, bytes);
  for (size_t b = 0; b < bytes / bb; b++)
    set_scales(type, w + b * bb, bb, 0.015625f, -0.25f);
}

/* Activations: random rows, or (sign != 0) every value sign * 1 (codes
 * +-127), or alternating signs per element (sign == 2). */
static void fill_act(kt_rng *r, float *x, int64_t n, int sign) {
  if (sign == 0) {
    kt_fill(r, x, n);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    x[i] = sign == 2 ? (i % 2 ? -1.0f : 1.0f) : (float)sign;
}

/* n_tok prepared rows of x for wtype in build b (stride: *stride). */
static uint8_t *prep_rows(const build *b, int wtype, const float *x,
                          int64_t n, int64_t n_tok, size_t *stride) {
  int at = dq_type_get(wtype)->vec_dot_type;
  size_t qb;
  dq_type_row_bytes(at, n, &qb);
  uint8_t *q = malloc(qb);
  *stride = (b->t->act_bytes(n) + 63) / 64 * 64;
  uint8_t *act = calloc((size_t)n_tok, *stride);
  for (int64_t t = 0; t < n_tok; t++) {
    dq_quantize_row(at, x + t * n, q, n);
    b->t->prep(n, at, q, b->t->off[wtype], act + (size_t)t * *stride);
  }
  free(q);
  return act;
}

static int n_checked;

/* Every build of bs[1..nb) against bs[0] on one case. */
static void compare(const build *bs, int nb, int wtype, const uint8_t *w,
                    int64_t n_rows, int64_t n, const float *x, int64_t n_tok,
                    const char *what) {
  size_t wrb;
  dq_type_row_bytes(wtype, n, &wrb);
  size_t stride0;
  uint8_t *act0 = prep_rows(&bs[0], wtype, x, n, n_tok, &stride0);
  float *y0 = malloc(sizeof(float) * (size_t)(n_tok * n_rows));
  bs[0].t->fn[wtype](n, w, wrb, n_rows, act0, stride0, n_tok, y0, n_rows);
  for (int i = 1; i < nb; i++) {
    if (!bs[i].t->fn[wtype])
      continue;
    size_t stride;
    uint8_t *act = prep_rows(&bs[i], wtype, x, n, n_tok, &stride);
    CHECK_MSG(stride == stride0 && !memcmp(act, act0, stride * (size_t)n_tok),
              "%s %s n=%lld: %s's prepared activations differ from %s's",
              dq_type_name(wtype), what, (long long)n, bs[i].name, bs[0].name);
    float *y = malloc(sizeof(float) * (size_t)(n_tok * n_rows));
    memset(y, 0xff, sizeof(float) * (size_t)(n_tok * n_rows)); /* NaN */
    bs[i].t->fn[wtype](n, w, wrb, n_rows, act, stride, n_tok, y, n_rows);
    int diff = 0;
    for (int64_t k = 0; k < n_tok * n_rows; k++)
      diff += memcmp(&y[k], &y0[k], sizeof(float)) != 0;
    CHECK_MSG(diff == 0,
              "%s %s %lldx%lld tok=%lld: %s differs from %s in %d of %lld "
              "outputs", dq_type_name(wtype), what, (long long)n_rows,
              (long long)n, (long long)n_tok, bs[i].name, bs[0].name, diff,
              (long long)(n_tok * n_rows));
    n_checked++;
    free(act);
    free(y);
  }
  free(act0);
  free(y0);
}

int main(void) {
  dq_cpu_caps caps = dq_cpu_probe();
  fprintf(stderr, "cpu: %s\n", caps.desc);
  int avx2 = (caps.flags & DQ_CPU_AVX2) && dq_gemm_u8_avx2_table.prep;
  int vnni512 = caps.isa == DQ_ISA_AVX512 && dq_gemm_u8_avx512_table.prep;
  if (!avx2 || !vnni512) {
    fprintf(stderr, "test_vn: skipped (needs AVX2 and AVX-512 VNNI: %s)\n",
            caps.desc);
    return 0;
  }
  build bs[4] = {{"avx512", &dq_gemm_u8_avx512_table},
                 {"avx2", &dq_gemm_u8_avx2_table},
                 {"vnni256", &dq_gemm_u8_vnni256_table}};
  int nb = 3;
  if ((caps.flags & DQ_CPU_AVX_VNNI) && dq_gemm_u8_avxvnni_table.prep)
    bs[nb++] = (build){"avxvnni", &dq_gemm_u8_avxvnni_table};
  else
    fprintf(stderr, "test_vn: no AVX-VNNI here: its build is checked as "
                    "vnni256 (the same source, AVX-512 VL's encoding)\n");
  /* The AVX2 build leaves Q8_0 to gemm_x86.h; every other type is in all. */
  static const int types[] = {DQ_TYPE_Q4_0, DQ_TYPE_Q4_1, DQ_TYPE_Q5_0,
                              DQ_TYPE_Q5_1, DQ_TYPE_Q8_0, DQ_TYPE_Q4_K,
                              DQ_TYPE_Q6_K};
  for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
    int type = types[ti];
    CHECK_MSG(bs[2].t->fn[type] != NULL, "vnni256 lacks %s",
              dq_type_name(type));
    CHECK_MSG(type == DQ_TYPE_Q8_0 ? !bs[1].t->fn[type] : !!bs[1].t->fn[type],
              "avx2's table and %s", dq_type_name(type));
  }

  kt_rng r = {7};
  static const int64_t rows[] = {1, 2, 3, 5, 9};
  static const int64_t toks[] = {1, 2, 3, 4, 5, 7, 70};
  for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
    int type = types[ti];
    int be = dq_type_get(type)->block_elems;
    /* one unit, partial last units (Gemma's 640 = 20 blocks, 576 = 18),
     * several k-chunks with a partial one */
    const int64_t ns32[] = {32, 160, 224, 256, 576, 640, 4128};
    const int64_t ns256[] = {256, 512, 2304, 4352};
    const int64_t *ns = be == 256 ? ns256 : ns32;
    int n_ns = be == 256 ? 4 : 7;
    for (int ni = 0; ni < n_ns; ni++) {
      int64_t n = ns[ni], n_rows = 9, n_tok = 70;
      size_t wrb;
      dq_type_row_bytes(type, n, &wrb);
      uint8_t *w = malloc(wrb * (size_t)n_rows);
      float *x = malloc(sizeof(float) * (size_t)(n * n_tok));
      float *wf = malloc(sizeof(float) * (size_t)n);
      /* quantized random weights */
      for (int64_t o = 0; o < n_rows; o++) {
        kt_fill(&r, wf, n);
        dq_quantize_row(type, wf, w + (size_t)o * wrb, n);
      }
      fill_act(&r, x, n * n_tok, 0);
      for (size_t a = 0; a < sizeof rows / sizeof *rows; a++)
        for (size_t b = 0; b < sizeof toks / sizeof *toks; b++)
          compare(bs, nb, type, w, rows[a], n, x, toks[b], "quantized");
      /* random code bytes */
      random_blocks(&r, type, w, wrb * (size_t)n_rows);
      compare(bs, nb, type, w, n_rows, n, x, n_tok, "random codes");
      /* maximal codes against +-127 */
      max_blocks(type, w, wrb * (size_t)n_rows);
      for (int sign = -1; sign <= 2; sign++) {
        if (sign == 0)
          continue;
        fill_act(&r, x, n * n_tok, sign);
        compare(bs, nb, type, w, n_rows, n, x, 5, "max codes");
      }
      free(w);
      free(x);
      free(wf);
    }
  }
  fprintf(stderr, "test_vn: %d comparisons\n", n_checked);
  return TEST_EXIT();
}
