/*
 * attn.c - the attention block kernel's baseline build (4-lane vectors, no
 * FMA), key packing, and the dispatch to the AVX2 / AVX-512 builds
 * (attn_avx2.c, attn_avx512.c) that dq_cpu_probe() found working.
 */
#include "cpu_int.h"

#include <math.h>
#include <string.h>

#define AT_VW 4
#define AT_FMA(a, b, c) ((a) * (b) + (c))
#define AT_NAME dq_attn_run_base
void dq_attn_run_base(const dq_attn_block *b);
#include "attn_impl.h"

void dq_attn_pack_k(const float *k, size_t stride, int64_t k0, int64_t k1,
                    int64_t n, int hd, float *kt) {
  int64_t end = k1 == n ? dq_attn_padded(n) : k1;
  for (int64_t p0 = k0; p0 < end; p0 += DQ_ATTN_PANEL) {
    float *panel = kt + (size_t)(p0 / DQ_ATTN_PANEL) * hd * DQ_ATTN_PANEL;
    for (int j = 0; j < DQ_ATTN_PANEL; j++) {
      int64_t key = p0 + j;
      if (key < k1) {
        const float *src = k + (size_t)key * stride;
        for (int d = 0; d < hd; d++)
          panel[(size_t)d * DQ_ATTN_PANEL + j] = src[d];
      } else {
        for (int d = 0; d < hd; d++)
          panel[(size_t)d * DQ_ATTN_PANEL + j] = 0.0f;
      }
    }
  }
}

/* ---- 8-bit panels (kernels.h) ---------------------------------------- */

void dq_attn_q8_put_key(void *panel, int j, int hd, const float *k) {
  uint8_t *p = panel;
  for (int blk = 0; blk < hd / 32; blk++) {
    int8_t c[32];
    float d = dq_q8_quant(k + 32 * blk, 32, c);
    for (int g = 0; g < 8; g++) { /* 4 elements: one lane of a group */
      uint8_t w[4];
      for (int t = 0; t < 4; t++)
        w[t] = (uint8_t)(c[4 * g + t] + 128);
      memcpy(p + ((size_t)(8 * blk + g) * DQ_ATTN_PANEL + (size_t)j) * 4, w, 4);
    }
    memcpy(p + (size_t)hd * DQ_ATTN_PANEL +
               ((size_t)blk * DQ_ATTN_PANEL + (size_t)j) * 4,
           &d, 4);
  }
}

void dq_attn_q8_get_key(const void *panel, int j, int hd, float *k) {
  const uint8_t *p = panel;
  for (int blk = 0; blk < hd / 32; blk++) {
    float d;
    memcpy(&d, p + (size_t)hd * DQ_ATTN_PANEL +
                   ((size_t)blk * DQ_ATTN_PANEL + (size_t)j) * 4, 4);
    for (int i = 0; i < 32; i++) {
      int e = 32 * blk + i;
      k[e] = d * (float)((int)p[(e / 4 * DQ_ATTN_PANEL + j) * 4 + e % 4] - 128);
    }
  }
}

void dq_attn_q8_move_key(void *dst, int jd, const void *src, int js, int hd) {
  uint8_t *d = dst;
  const uint8_t *s = src;
  for (int g = 0; g < hd / 4; g++)
    memmove(d + ((size_t)g * DQ_ATTN_PANEL + (size_t)jd) * 4,
            s + ((size_t)g * DQ_ATTN_PANEL + (size_t)js) * 4, 4);
  for (int blk = 0; blk < hd / 32; blk++)
    memmove(d + (size_t)hd * DQ_ATTN_PANEL + ((size_t)blk * DQ_ATTN_PANEL + (size_t)jd) * 4,
            s + (size_t)hd * DQ_ATTN_PANEL + ((size_t)blk * DQ_ATTN_PANEL + (size_t)js) * 4,
            4);
}

void dq_attn_q8_put_value(void *panel, int j, int hd, const float *v) {
  if (hd > DQ_ATTN_Q8_HD_MAX)
    return; /* kernels.h: the caller's precondition */
  uint8_t *p = panel;
  int8_t c[DQ_ATTN_Q8_HD_MAX];
  float d = dq_q8_quant(v, hd, c);
  uint8_t *q = p + (size_t)(j / 4) * hd * 4 + (size_t)(j % 4);
  for (int e = 0; e < hd; e++)
    q[(size_t)e * 4] = (uint8_t)c[e];
  memcpy(p + (size_t)hd * DQ_ATTN_PANEL + (size_t)j * 4, &d, 4);
}

void dq_attn_q8_get_value(const void *panel, int j, int hd, float *v) {
  const uint8_t *p = panel;
  float d;
  memcpy(&d, p + (size_t)hd * DQ_ATTN_PANEL + (size_t)j * 4, 4);
  for (int e = 0; e < hd; e++)
    v[e] = d * (float)(int8_t)p[((size_t)(j / 4) * hd + (size_t)e) * 4 +
                                (size_t)(j % 4)];
}

void dq_attn_q8_move_value(void *dst, int jd, const void *src, int js,
                           int hd) {
  uint8_t *d = dst;
  const uint8_t *s = src;
  for (int e = 0; e < hd; e++)
    d[((size_t)(jd / 4) * hd + (size_t)e) * 4 + (size_t)(jd % 4)] =
        s[((size_t)(js / 4) * hd + (size_t)e) * 4 + (size_t)(js % 4)];
  memmove(d + (size_t)hd * DQ_ATTN_PANEL + (size_t)jd * 4,
          s + (size_t)hd * DQ_ATTN_PANEL + (size_t)js * 4, 4);
}

void dq_attn_run_isa(dq_isa isa, const dq_attn_block *b) {
  /* a path not built for this target falls to the next lower one */
  if (isa >= DQ_ISA_AVX512 && dq_attn_run_avx512(b))
    return;
  if (isa >= DQ_ISA_AVX2 && dq_attn_run_avx2(b))
    return;
  dq_attn_run_base(b);
}

void dq_attn_run(const dq_cpu_caps *caps, const dq_attn_block *b) {
  /* 8-bit blocks on the AVX2 path: AVX-VNNI's integer sums when it works */
  if (b->q8 && caps && caps->isa == DQ_ISA_AVX2 &&
      (caps->flags & DQ_CPU_AVX_VNNI) && dq_attn_run_avxvnni(b))
    return;
  dq_attn_run_isa(caps ? caps->isa : DQ_ISA_SCALAR, b);
}
