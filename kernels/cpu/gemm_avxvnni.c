/*
 * gemm_avxvnni.c - gemm_vn_avx2.h's matrix kernels with AVX-VNNI (the
 * VEX-encoded 256-bit vpdpbusd of Alder Lake and later, which have AVX2
 * but no AVX-512): every type of the family, Q8_0 included. Compiled with
 * -mavxvnni (isa.cmake); chosen by dq_matmul on the AVX2 path only after
 * dq_cpu_probe() ran a vpdpbusd of this encoding. The same source runs in
 * the tests through vecdot_avx512.c's EVEX build.
 */
#include "cpu_int.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVXVNNI__)
#include "x86_util.h"
#define VN2_VNNI 1
#define VN2_DPBUSD _mm256_dpbusd_avx_epi32
#define VN2_TABLE dq_gemm_u8_avxvnni_table
#include "gemm_vn_avx2.h"
#else
const dq_gemm_u8_table dq_gemm_u8_avxvnni_table = {{0}, {0}, NULL, NULL};
#endif
