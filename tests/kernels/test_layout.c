/*
 * test_layout.c - the block layouts themselves: the type table, exact
 * f16/bf16 conversions (exhaustive against a formula, and against the F16C
 * hardware when present), hand-built blocks of every type with hand-worked
 * values, and random blocks dequantized by an independent implementation
 * (fixtures/<TYPE>.bin from gguf-py, made by make_fixtures.py).
 */
#include "kt.h"

#include <stdio.h>
#include <string.h>

static void test_type_table(void) {
  size_t b = 0;
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q4_K, 512, &b), DQ_OK);
  CHECK_EQ_INT(b, 288);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q6_K, 256, &b), DQ_OK);
  CHECK_EQ_INT(b, 210);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q4_1, 576, &b), DQ_OK);
  CHECK_EQ_INT(b, 18 * 20);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q5_0, 640, &b), DQ_OK);
  CHECK_EQ_INT(b, 20 * 22);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_F16, 7, &b), DQ_OK);
  CHECK_EQ_INT(b, 14);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q8_K, 256, &b), DQ_OK);
  CHECK_EQ_INT(b, 292);
  /* K-quants need whole super-blocks; 32-blocks whole blocks. */
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q4_K, 640, &b), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q4_0, 33, &b), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_F32, -1, &b), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_type_row_bytes(5, 32, &b), DQ_ERR_UNSUPPORTED);
  CHECK_EQ_INT(dq_type_row_bytes(99, 32, &b), DQ_ERR_UNSUPPORTED);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_F32, INT64_MAX, &b), DQ_ERR_LIMIT);
  CHECK_EQ_INT(dq_type_row_bytes(DQ_TYPE_Q8_K, INT64_MAX / 256 * 256, &b),
               DQ_ERR_LIMIT);
  CHECK(dq_type_get(DQ_TYPE_Q4_K) != NULL);
  CHECK(dq_type_get(-1) == NULL);
  CHECK_EQ_STR(dq_type_name(DQ_TYPE_Q6_K), "Q6_K");
  CHECK_EQ_STR(dq_type_name(DQ_TYPE_BF16), "BF16");
  CHECK_EQ_STR(dq_type_name(4), "unknown");
  CHECK_EQ_INT(dq_type_get(DQ_TYPE_Q4_1)->vec_dot_type, DQ_TYPE_Q8_1);
  CHECK_EQ_INT(dq_type_get(DQ_TYPE_Q5_0)->vec_dot_type, DQ_TYPE_Q8_0);
  CHECK_EQ_INT(dq_type_get(DQ_TYPE_Q6_K)->vec_dot_type, DQ_TYPE_Q8_K);
  CHECK_EQ_INT(dq_type_get(DQ_TYPE_F16)->vec_dot_type, DQ_TYPE_F32);
  CHECK_EQ_INT(dq_type_get(DQ_TYPE_Q8_K)->is_weight, 0);
}

/* binary16 by definition: (-1)^s 2^(e-15) (1 + m/1024), subnormal 2^-14 m/1024 */
static double f16_formula(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  if (e == 31)
    v = m ? NAN : INFINITY;
  return s ? -v : v;
}

#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("f16c"))) static uint16_t hw_f32_to_f16(float f) {
  return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}
#endif

static void test_f16(const dq_cpu_caps *caps) {
  int bad = 0, bad_rt = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    double want = f16_formula((uint16_t)h);
    float got = dq_f16_to_f32((uint16_t)h);
    if (isnan(want) ? !isnan(got) : (double)got != want)
      bad++;
    if (!isnan(want) && dq_f32_to_f16(got) != h)
      bad_rt++;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(bad_rt, 0);
  /* rounding: ties to even, overflow, subnormals */
  CHECK_EQ_INT(dq_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  CHECK_EQ_INT(dq_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  CHECK_EQ_INT(dq_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  CHECK_EQ_INT(dq_f32_to_f16(65504.0f), 0x7bff);
  CHECK_EQ_INT(dq_f32_to_f16(65519.0f), 0x7bff);
  CHECK_EQ_INT(dq_f32_to_f16(65520.0f), 0x7c00);
  CHECK_EQ_INT(dq_f32_to_f16(-1e10f), 0xfc00);
  CHECK_EQ_INT(dq_f32_to_f16(0x1p-25f), 0x0000);
  CHECK_EQ_INT(dq_f32_to_f16(3 * 0x1p-25f), 0x0002);
  CHECK_EQ_INT(dq_f32_to_f16(0x1p-14f - 0x1p-26f), 0x0400);
  CHECK_EQ_INT(dq_f32_to_f16(-0.0f), 0x8000);
  CHECK((dq_f32_to_f16(NAN) & 0x7fff) > 0x7c00);
#if defined(__x86_64__)
  if (caps->flags & DQ_CPU_AVX2) { /* F16C hardware as a second opinion */
    kt_rng r = {7};
    int diff = 0;
    for (int i = 0; i < 200000; i++) {
      uint32_t u = (uint32_t)kt_next(&r);
      float f;
      memcpy(&f, &u, 4);
      if (isnan(f))
        continue;
      if (dq_f32_to_f16(f) != hw_f32_to_f16(f))
        diff++;
    }
    CHECK_EQ_INT(diff, 0);
  }
#endif
}

static void test_bf16(void) {
  CHECK_EQ_INT(dq_f32_to_bf16(1.0f), 0x3f80);
  float f;
  uint32_t u = 0x3f808000; /* halfway between 0x3f80 and 0x3f81 -> even */
  memcpy(&f, &u, 4);
  CHECK_EQ_INT(dq_f32_to_bf16(f), 0x3f80);
  u = 0x3f818000;
  memcpy(&f, &u, 4);
  CHECK_EQ_INT(dq_f32_to_bf16(f), 0x3f82);
  u = 0x3f808001;
  memcpy(&f, &u, 4);
  CHECK_EQ_INT(dq_f32_to_bf16(f), 0x3f81);
  CHECK(isnan(dq_bf16_to_f32(dq_f32_to_bf16(NAN))));
  CHECK(dq_bf16_to_f32(0xc040) == -3.0f);
}

static void check_row(int type, const void *blk, int64_t n, const float *want) {
  float got[256];
  CHECK_EQ_INT(dq_dequantize_row(type, blk, got, n), DQ_OK);
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      if (bad++ < 4)
        fprintf(stderr, "%s[%lld]: got %g want %g\n", dq_type_name(type),
                (long long)i, got[i], want[i]);
    }
  CHECK_MSG(bad == 0, "%s: %d of %lld elements differ", dq_type_name(type), bad,
            (long long)n);
}

/* Hand-built blocks: the bytes are written out by hand from the documented
 * layout, and the expected floats worked out by hand per element pattern. */
static void test_known_blocks(void) {
  float want[256];
  { /* Q4_0, d = 0.5: qs[j] = j | (15-j) << 4 -> x[j] = (j-8)/2, x[j+16] = (7-j)/2 */
    _Alignas(4) uint8_t b[18] = {0x00, 0x38};
    for (int j = 0; j < 16; j++) {
      b[2 + j] = (uint8_t)(j | (15 - j) << 4);
      want[j] = (float)(j - 8) * 0.5f;
      want[j + 16] = (float)(7 - j) * 0.5f;
    }
    check_row(DQ_TYPE_Q4_0, b, 32, want);
  }
  { /* Q4_1, d = 0.25, m = -1: qs[j] = j | j << 4 -> x = j/4 - 1 */
    _Alignas(4) uint8_t b[20] = {0x00, 0x34, 0x00, 0xbc};
    for (int j = 0; j < 16; j++) {
      b[4 + j] = (uint8_t)(j | j << 4);
      want[j] = want[j + 16] = (float)j * 0.25f - 1.0f;
    }
    check_row(DQ_TYPE_Q4_1, b, 32, want);
  }
  { /* Q5_0, d = 1, qh = 0xaaaa5555 (bytes 55 55 aa aa), qs[j] = j:
     * x[j] = j + 16 (even j) or j (odd) - 16; x[16+j] = 0 (odd j) or -16 */
    _Alignas(4) uint8_t b[22] = {0x00, 0x3c, 0x55, 0x55, 0xaa, 0xaa};
    for (int j = 0; j < 16; j++) {
      b[6 + j] = (uint8_t)j;
      want[j] = (float)(j + (j % 2 == 0 ? 16 : 0) - 16);
      want[j + 16] = j % 2 ? 0.0f : -16.0f;
    }
    check_row(DQ_TYPE_Q5_0, b, 32, want);
  }
  { /* Q5_1, d = 2, m = 0.5, qh = 0xffff0000, qs[j] = 0xf0 | j:
     * x[j] = 2 j + 0.5, x[16+j] = 2 (15 + 16) + 0.5 = 62.5 */
    _Alignas(4) uint8_t b[24] = {0x00, 0x40, 0x00, 0x38, 0x00, 0x00, 0xff, 0xff};
    for (int j = 0; j < 16; j++) {
      b[8 + j] = (uint8_t)(0xf0 | j);
      want[j] = 2.0f * (float)j + 0.5f;
      want[j + 16] = 62.5f;
    }
    check_row(DQ_TYPE_Q5_1, b, 32, want);
  }
  { /* Q8_0, d = 2: qs[j] = j - 16 -> x = 2 (j - 16) */
    _Alignas(4) uint8_t b[34] = {0x00, 0x40};
    for (int j = 0; j < 32; j++) {
      b[2 + j] = (uint8_t)(int8_t)(j - 16);
      want[j] = 2.0f * (float)(j - 16);
    }
    check_row(DQ_TYPE_Q8_0, b, 32, want);
  }
  { /* Q4_K, d = 1, dmin = 0.5. Scales sc = {1,2,3,4, 17,33,50,63}, mins
     * mn = {3,5,7,9, 20,36,47,60}, packed by hand:
     *   bytes 0-3: sc[0..3] | (sc[4..7] >> 4) << 6 = 1|1<<6, 2|2<<6, 3|3<<6, 4|3<<6
     *   bytes 4-7: mn[0..3] | (mn[4..7] >> 4) << 6 = 3|1<<6, 5|2<<6, 7|2<<6, 9|3<<6
     *   bytes 8-11: sc[4..7] & 15 | (mn[4..7] & 15) << 4 = 1|4<<4, 1|4<<4, 2|15<<4, 15|12<<4
     * qs[32c+l] = (l & 15) | (15 - (l & 15)) << 4, so element 64c+l has
     * q = l & 15 (sub-block 2c) and 64c+32+l has q = 15 - (l & 15). */
    static const int sc[8] = {1, 2, 3, 4, 17, 33, 50, 63};
    static const int mn[8] = {3, 5, 7, 9, 20, 36, 47, 60};
    _Alignas(4) uint8_t b[144] = {0x00, 0x3c, 0x00, 0x38,
                      1 | 1 << 6, 2 | 2 << 6, 3 | 3 << 6, 4 | 3 << 6,
                      3 | 1 << 6, 5 | 2 << 6, 7 | 2 << 6, 9 | 3 << 6,
                      1 | 4 << 4, 1 | 4 << 4, 2 | 15 << 4, 15 | 12 << 4};
    for (int c = 0; c < 4; c++)
      for (int l = 0; l < 32; l++) {
        b[16 + 32 * c + l] = (uint8_t)((l & 15) | (15 - (l & 15)) << 4);
        want[64 * c + l] = (float)(sc[2 * c] * (l & 15)) - 0.5f * (float)mn[2 * c];
        want[64 * c + 32 + l] =
            (float)(sc[2 * c + 1] * (15 - (l & 15))) - 0.5f * (float)mn[2 * c + 1];
      }
    check_row(DQ_TYPE_Q4_K, b, 256, want);
  }
  { /* Q6_K, d = 0.5, scales[g] = g - 8; element e has q = e % 64:
     * for l < 32 in each half, q(l) = q(l+64) = l and q(l+32) = q(l+96) = l+32, so
     * ql[l] = ql[l+32] = (l & 15) * 0x11 and
     * qh[l] = (l >> 4) | ((l+32) >> 4) << 2 | (l >> 4) << 4 | ((l+32) >> 4) << 6;
     * x[e] = 0.5 * (e / 16 - 8) * (e % 64 - 32) */
    _Alignas(4) uint8_t b[210] = {0};
    for (int h = 0; h < 2; h++)
      for (int l = 0; l < 32; l++) {
        b[64 * h + l] = b[64 * h + l + 32] = (uint8_t)((l & 15) * 0x11);
        b[128 + 32 * h + l] =
            (uint8_t)((l >> 4) | ((l + 32) >> 4) << 2 | (l >> 4) << 4 | ((l + 32) >> 4) << 6);
      }
    for (int g = 0; g < 16; g++)
      b[192 + g] = (uint8_t)(int8_t)(g - 8);
    b[208] = 0x00;
    b[209] = 0x38;
    for (int e = 0; e < 256; e++)
      want[e] = 0.5f * (float)(e / 16 - 8) * (float)(e % 64 - 32);
    check_row(DQ_TYPE_Q6_K, b, 256, want);
  }
}

static void test_fixtures(void) {
  static const char *names[] = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
                                "Q4_K", "Q6_K", "F16",  "BF16"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/kernels/fixtures/%s.bin", DQ_SOURCE_DIR,
             names[k]);
    char *buf = NULL;
    size_t len = 0;
    CHECK_OK(dq_read_file(path, 1 << 20, &buf, &len, NULL), path);
    if (!buf)
      continue;
    uint32_t hdr[3];
    memcpy(hdr, buf, sizeof hdr);
    size_t row = 0;
    CHECK_EQ_INT(dq_type_row_bytes((int)hdr[0], hdr[1], &row), DQ_OK);
    CHECK_EQ_INT(row, hdr[2]);
    CHECK_EQ_INT(len, 12 + hdr[2] + 4 * (size_t)hdr[1]);
    if (row == hdr[2] && len == 12 + hdr[2] + 4 * (size_t)hdr[1]) {
      float *got = malloc(4 * (size_t)hdr[1]), *want = malloc(4 * (size_t)hdr[1]);
      memcpy(want, buf + 12 + hdr[2], 4 * (size_t)hdr[1]);
      CHECK_EQ_INT(dq_dequantize_row((int)hdr[0], buf + 12, got, hdr[1]), DQ_OK);
      int bad = 0;
      for (uint32_t i = 0; i < hdr[1]; i++) /* numpy may round products differently */
        if (!(fabsf(got[i] - want[i]) <= 1e-6f * fabsf(want[i]) + 1e-30f))
          if (bad++ < 4)
            fprintf(stderr, "%s[%u]: got %.9g want %.9g\n", names[k], i, got[i],
                    want[i]);
      CHECK_MSG(bad == 0, "%s: %d of %u differ from gguf-py", names[k], bad, hdr[1]);
      free(got);
      free(want);
    }
    free(buf);
  }
}

int main(void) {
  dq_cpu_caps caps = dq_cpu_probe();
  fprintf(stderr, "cpu: %s\n", caps.desc);
  test_type_table();
  test_f16(&caps);
  test_bf16();
  test_known_blocks();
  test_fixtures();
  return TEST_EXIT();
}
