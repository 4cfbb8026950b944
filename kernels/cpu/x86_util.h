/*
 * x86_util.h - small AVX2 + F16C helpers shared by the 256-bit kernel
 * headers (vecdot_x86.h, gemm_vn_avx2.h): a fixed-order horizontal sum,
 * one half to float, and the block decoders' nibble and bit unpacking.
 * Include only from files compiled for AVX2 + FMA + F16C (isa.cmake).
 */
#ifndef DQ_X86_UTIL_H
#define DQ_X86_UTIL_H

#include "cpu_int.h"

#include <immintrin.h>

/* The lanes' sum: i + i + 4, then i + i + 2, i + i + 1. */
static inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static inline float h2f(dq_f16 h) { return _cvtsh_ss(h); }

/* 32 bytes: low nibbles of 16 bytes (elements 0..15), then high nibbles. */
static inline __m256i nibbles32(const uint8_t *qs) {
  __m128i t = _mm_loadu_si128((const __m128i *)qs);
  __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(t),
                                      _mm_srli_epi16(t, 4), 1);
  return _mm256_and_si256(b, _mm256_set1_epi8(15));
}

/* Byte k = 0xff when bit k of the little-endian 32-bit word at p is set. */
static inline __m256i bits32(const uint8_t *p) {
  uint32_t x;
  memcpy(&x, p, 4);
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                         0x0101010101010101, 0);
  __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x), shuf);
  b = _mm256_or_si256(b, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
  return _mm256_cmpeq_epi8(b, _mm256_set1_epi64x(-1));
}

#endif /* DQ_X86_UTIL_H */
