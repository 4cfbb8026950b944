/*
 * vecdot_avx512.c - the AVX-512 VNNI build of the x86 dot-product kernels
 * (vecdot_x86.h with vpdpbusd on 256-bit EVEX registers) and the probe's
 * AVX-512 / VNNI / BF16 / AVX-VNNI test instructions. Compiled with the
 * AVX-512 flags in isa.cmake; called only after dq_cpu_probe() found
 * DQ_CPU_AVX512 and DQ_CPU_AVX512_VNNI working.
 */
#include "cpu_int.h"

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512VL__) && \
    defined(__AVX512BW__) && defined(__AVX512BF16__)
#define DQ_X86_TABLE dq_vec_dot_avx512_table
#define DQ_X86_VNNI 1
#include "vecdot_x86.h"
/* gemm_vn_avx2.h's VNNI form with the EVEX vpdpbusd: the code AVX-VNNI
 * machines run (gemm_avxvnni.c), here for the tests on machines without
 * AVX-VNNI (never chosen by dq_matmul), and the activation layout and half
 * units of the AVX-512 kernels below. */
#define VN2_VNNI 1
#define VN2_DPBUSD _mm256_dpbusd_epi32
#define VN2_TABLE dq_gemm_u8_vnni256_table
#include "gemm_vn_avx2.h"
/* The matrix kernels of the 32-element block types and the K-quants:
 * gemm_vnni_avx512.h. */
#include "gemm_vnni_avx512.h"

int dq_cpu_try_avx512(void) {
  volatile int in = 3;
  __m512i v = _mm512_add_epi32(_mm512_set1_epi32(in), _mm512_set1_epi32(1));
  __m512i b = _mm512_abs_epi8(v); /* BW */
  __m256i l = _mm256_maskz_add_epi32(0x0f, _mm512_castsi512_si256(b),
                                     _mm512_castsi512_si256(v)); /* VL */
  __m512d dq = _mm512_cvtepi64_pd(v); /* DQ */
  return _mm256_extract_epi32(l, 0) + (int)_mm512_reduce_add_pd(dq);
}

int dq_cpu_try_avx512_vnni(void) {
  volatile int in = 3;
  __m256i v = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi32(in),
                                  _mm256_set1_epi32(in));
  return _mm256_extract_epi32(v, 0);
}

int dq_cpu_try_avx512_bf16(void) {
  volatile float in = 1.0f;
  __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(in), _mm512_set1_ps(in));
  __m512 r = _mm512_dpbf16_ps(_mm512_setzero_ps(), b, b);
  return (int)_mm512_reduce_add_ps(r);
}

__attribute__((target("avxvnni"))) int dq_cpu_try_avx_vnni(void) {
  volatile int in = 3;
  __m256i v = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_set1_epi32(in),
                                      _mm256_set1_epi32(in));
  return _mm256_extract_epi32(v, 0);
}
#else
const dq_vec_dot_table dq_vec_dot_avx512_table = {{0}, {0}, {0}};
const dq_gemm_u8_table dq_gemm_u8_avx512_table = {{0}, {0}, NULL, NULL};
const dq_gemm_u8_table dq_gemm_u8_vnni256_table = {{0}, {0}, NULL, NULL};
int dq_cpu_try_avx512(void) { return 0; }
int dq_cpu_try_avx512_vnni(void) { return 0; }
int dq_cpu_try_avx512_bf16(void) { return 0; }
int dq_cpu_try_avx_vnni(void) { return 0; }
#endif
