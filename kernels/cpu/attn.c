/*
 * attn.c - the attention block kernel's baseline build (4-lane vectors, no
 * FMA), key packing, and the dispatch to the AVX2 / AVX-512 builds
 * (attn_avx2.c, attn_avx512.c) that dq_cpu_probe() found working.
 */
#include "cpu_int.h"

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

void dq_attn_run_isa(dq_isa isa, const dq_attn_block *b) {
  /* a path not built for this target falls to the next lower one */
  if (isa >= DQ_ISA_AVX512 && dq_attn_run_avx512(b))
    return;
  if (isa >= DQ_ISA_AVX2 && dq_attn_run_avx2(b))
    return;
  dq_attn_run_base(b);
}

void dq_attn_run(const dq_cpu_caps *caps, const dq_attn_block *b) {
  dq_attn_run_isa(caps ? caps->isa : DQ_ISA_SCALAR, b);
}
