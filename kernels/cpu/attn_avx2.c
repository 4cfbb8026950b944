/*
 * attn_avx2.c - the AVX2 + FMA build of the attention block kernel
 * (attn_impl.h, 8 lanes). Compiled with -mavx2 -mfma (isa.cmake); entered
 * only after dq_cpu_probe() found AVX2 working.
 */
#include "cpu_int.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define AT_VW 8
#define AT_FMA(a, b, c) ((at_vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define AT_LOADH(p) ((at_vf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p))))
#define AT_MAX(a, b) ((at_vf)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define AT_NAME attn_avx2
static void attn_avx2(const dq_attn_block *b);
#include "attn_impl.h"
int dq_attn_run_avx2(const dq_attn_block *b) {
  attn_avx2(b);
  return 1;
}
#else
int dq_attn_run_avx2(const dq_attn_block *b) {
  (void)b;
  return 0;
}
#endif
