/*
 * attn_avx512f.c - the AVX-512 build of the attention block kernel without
 * vpdpbusd: the 8-bit operands' integer sums in float arithmetic on 16
 * lanes (attn_q8_impl.h), which must give exactly the bits of the VNNI
 * form in attn_avx512.c. Only tests call it (dq_attn_run_avx512_float);
 * the engine takes attn_avx512.c's build.
 */
#include "cpu_int.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#define AT_VW 16
#define AT_FMA(a, b, c) ((at_vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define AT_LOADH(p) ((at_vf)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p))))
#define AT_MAX(a, b) ((at_vf)_mm512_max_ps((__m512)(a), (__m512)(b)))
#define AT_SCALEF(a, n) ((at_vf)_mm512_scalef_ps((__m512)(a), (__m512)(n)))
#define AT_NAME attn_avx512f
static void attn_avx512f(const dq_attn_block *b);
#include "attn_impl.h"
int dq_attn_run_avx512_float(const dq_attn_block *b) {
  attn_avx512f(b);
  return 1;
}
#else
int dq_attn_run_avx512_float(const dq_attn_block *b) {
  (void)b;
  return 0;
}
#endif
