/*
 * vecdot_avx2.c - the AVX2 + FMA + F16C build of the x86 dot-product kernels
 * (vecdot_x86.h), of the matrix kernels (gemm_x86.h, gemm_vn_avx2.h) and
 * the probe's AVX2 test instruction. Compiled with
 * -mavx2 -mfma -mf16c (isa.cmake); called only after dq_cpu_probe() found
 * DQ_CPU_AVX2 working. On non-x86 targets the table is empty (scalar).
 */
#include "cpu_int.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define DQ_X86_TABLE dq_vec_dot_avx2_table
#include "vecdot_x86.h"
/* 16 vector registers: 2 rows x 3 tokens = 6 accumulators. */
#define GEMM_RM 2
#define GEMM_RN 3
#define DQ_X86_GEMM_TABLE dq_gemm_avx2_table
#include "gemm_x86.h"
/* gemm_vn_avx2.h's kernels with vpmaddubsw + vpmaddwd (all but Q8_0, which
 * keeps gemm_x86.h's) */
#define VN2_VNNI 0
#define VN2_TABLE dq_gemm_u8_avx2_table
#include "gemm_vn_avx2.h"

int dq_cpu_try_avx2(void) {
  volatile float in = 1.5f;
  __m256 v = _mm256_fmadd_ps(_mm256_set1_ps(in), _mm256_set1_ps(in), _mm256_set1_ps(in));
  __m256i i = _mm256_add_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(1));
  __m256 h = _mm256_cvtph_ps(_mm_set1_epi16(0x3c00)); /* F16C: 1.0 */
  return _mm256_extract_epi32(i, 3) + (int)_mm256_cvtss_f32(h);
}

int dq_f16_row_avx2(const dq_f16 *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i,
                     _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
  for (; i < n; i++)
    y[i] = _cvtsh_ss(x[i]);
  return 1;
}
#else
const dq_vec_dot_table dq_vec_dot_avx2_table = {{0}, {0}, {0}};
int dq_f16_row_avx2(const dq_f16 *x, float *y, int64_t n) {
  (void)x;
  (void)y;
  (void)n;
  return 0;
}
const dq_gemm_table dq_gemm_avx2_table = {{0}};
const dq_gemm_u8_table dq_gemm_u8_avx2_table = {{0}, {0}, NULL, NULL};
int dq_cpu_try_avx2(void) { return 0; }
#endif
