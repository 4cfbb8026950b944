/*
 * attn_avx512.c - the AVX-512 build of the attention block kernel
 * (attn_impl.h, 16 lanes, one panel per vector). Compiled with the AVX-512
 * flags (isa.cmake); entered only after dq_cpu_probe() found AVX-512 F
 * working (with VNNI: the 8-bit operands' sums are vpdpbusd).
 */
#include "cpu_int.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#define AT_VW 16
#define AT_FMA(a, b, c) ((at_vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define AT_LOADH(p) ((at_vf)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p))))
/* the 8-bit path's integer sums (vpdpbusd: AVX-512 VNNI, which the
 * AVX-512 path requires, kernels.h) */
#define AT_DPBUSD(acc, a, b)                                                   \
  ((at_vi)_mm512_dpbusd_epi32((__m512i)(acc), (__m512i)(a), (__m512i)(b)))
#define AT_MAX(a, b) ((at_vf)_mm512_max_ps((__m512)(a), (__m512)(b)))
#define AT_SCALEF(a, n) ((at_vf)_mm512_scalef_ps((__m512)(a), (__m512)(n)))
#define AT_NAME attn_avx512
static void attn_avx512(const dq_attn_block *b);
#include "attn_impl.h"
int dq_attn_run_avx512(const dq_attn_block *b) {
  attn_avx512(b);
  return 1;
}
#else
int dq_attn_run_avx512(const dq_attn_block *b) {
  (void)b;
  return 0;
}
#endif
