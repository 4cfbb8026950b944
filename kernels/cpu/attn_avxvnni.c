/*
 * attn_avxvnni.c - the AVX2 build of the attention block kernel with
 * AVX-VNNI (the VEX-encoded 256-bit vpdpbusd of Alder Lake and later): the
 * 8-bit operands' integer sums as integers on 8 lanes, the same bits as
 * attn_avx2.c's float form. Compiled with -mavxvnni (isa.cmake); entered
 * only for 8-bit blocks on the AVX2 path, after dq_cpu_probe() ran a
 * vpdpbusd of this encoding.
 */
#include "cpu_int.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVXVNNI__)
#include <immintrin.h>
#define AT_VW 8
#define AT_FMA(a, b, c) ((at_vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define AT_LOADH(p) ((at_vf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p))))
#define AT_MAX(a, b) ((at_vf)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define AT_DPBUSD(acc, a, b)                                                   \
  ((at_vi)_mm256_dpbusd_avx_epi32((__m256i)(acc), (__m256i)(a), (__m256i)(b)))
#define AT_NAME attn_avxvnni
static void attn_avxvnni(const dq_attn_block *b);
#include "attn_impl.h"
int dq_attn_run_avxvnni(const dq_attn_block *b) {
  attn_avxvnni(b);
  return 1;
}
#else
int dq_attn_run_avxvnni(const dq_attn_block *b) {
  (void)b;
  return 0;
}
#endif
