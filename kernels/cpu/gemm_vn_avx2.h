/*
 * gemm_vn_avx2.h - gemm_vnni_avx512.h's matrix kernels on 256-bit
 * registers, for x86 CPUs without AVX-512 VNNI: the 32-element block types
 * (Q4_0, Q4_1, Q5_0, Q5_1; Q8_0 with VNNI only) and the K-quants (Q4_K,
 * Q6_K), prefill and decode. Written once, compiled by files that define
 *   VN2_VNNI   1: the integer sums by vpdpbusd (VN2_DPBUSD names the
 *              intrinsic: AVX-VNNI's VEX form in gemm_avxvnni.c, the EVEX
 *              form in vecdot_avx512.c, which runs it in the tests on
 *              machines without AVX-VNNI); 0: by vpmaddubsw + vpmaddwd
 *              (vecdot_avx2.c, any AVX2 CPU)
 *   VN2_TABLE  the name of the dq_gemm_u8_table it defines
 * (helpers: x86_util.h).
 *
 * Layout and results: gemm_vn.h. A unit's 16 groups are two halves of 8
 * (lanes 0-7 and 8-15 of the 512-bit layout); half h of vector c is bytes
 * 32h..32h+31 of vn_act.y[c], so both families read the same activations
 * (vn2_prep's; the AVX-512 kernels take it, and the half units' decoders
 * and step, from this file's VNNI build) and a (row, token) result is the
 * same bits as there: each half has its own 8-lane float accumulator and
 * the two are added first, which is the AVX-512 kernels' first addition
 * (tests/kernels/test_vn.c checks all three builds against the AVX-512
 * kernels bit for bit).
 *
 * Without VNNI, vpmaddubsw gives the sum of two u8 x s8 products per int16
 * lane, and the four vectors' pair sums of a half are added in int16
 * before one vpmaddwd widens them: exact while 4 x 2 x u x 127 < 32768,
 * so for codes u <= 31 (our activations lie in [-127, 127]: vecdot_x86.h).
 * Q6_K's codes reach 63, so its pairs are widened two by two. Q8_0's
 * offset codes reach 255 and would saturate a pair: without VNNI it stays
 * on gemm_x86.h's sign-trick kernels. Per (row, token, unit) this is 8
 * vpmaddubsw, 6 int16 adds, 2 vpmaddwd, 2 adds of the offset correction
 * and 6 float operations (+2 FMAs for the min types), against 8 blocks of
 * gemm_x86.h's 6-7 operations; with VNNI 8 vpdpbusd and the 6 float
 * operations.
 *
 * A 256-bit natural vector N_k^h holds groups 4k + 2h and 4k + 2h + 1 in
 * its two 128-bit lanes (block 2k + h's nibbles or bytes; Q4_K's low or
 * high nibbles of qs[32k..32k+31]; Q6_K's as in vn2_dec_q6_k) and is
 * transposed 4 x 4 by dwords within each lane, as in the 512-bit kernels.
 */
#include "gemm_vn.h"
#include "x86_util.h"

#ifndef VN2_TABLE
#error "define VN2_VNNI (and VN2_DPBUSD) and VN2_TABLE before including gemm_vn_avx2.h"
#endif

#define VN2_RM 8 /* rows per tile */

/* One unit of one weight row, decoded: half h, vector c. */
typedef struct vn2_w {
  __m256i u[2][4]; /* unsigned codes */
  __m256 sc[2];    /* the scale of each lane's group */
  __m256 mn[2];    /* min types: the min of each lane's group */
} vn2_w;

#define VN2_INLINE static inline __attribute__((always_inline))

/* N_k (lane m = group 4k + 2h + m) -> the half's layout: u[c] dword
 * 4m + k = N_k lane m dword c. */
VN2_INLINE void vn2_transpose(const __m256i *n, __m256i *u) {
  __m256i t0 = _mm256_unpacklo_epi32(n[0], n[1]);
  __m256i t1 = _mm256_unpackhi_epi32(n[0], n[1]);
  __m256i t2 = _mm256_unpacklo_epi32(n[2], n[3]);
  __m256i t3 = _mm256_unpackhi_epi32(n[2], n[3]);
  u[0] = _mm256_unpacklo_epi64(t0, t2);
  u[1] = _mm256_unpackhi_epi64(t0, t2);
  u[2] = _mm256_unpacklo_epi64(t1, t3);
  u[3] = _mm256_unpackhi_epi64(t1, t3);
}

/* 8 floats, one per pair of groups (a block; a Q4_K sub-block), to the
 * lanes of both halves: half h lanes [v_h, v_2+h, v_4+h, v_6+h] twice. */
VN2_INLINE void vn2_pair_lanes(__m256 v, __m256 *o) {
  o[0] = _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
  o[1] = _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7));
}

/* ---- the 32-element block types: a unit is 8 blocks ---- */

static const uint8_t vn2_zero[32];
#define VN2_Q(x, b, nbv)                                                      \
  ((b) < (nbv) ? (const uint8_t *)(x)[b].qs : vn2_zero)
#define VN2_QH(x, b, nbv) ((b) < (nbv) ? (x)[b].qh : vn2_zero)

/* The f16 field F of blocks b < NBLK of x, 0 from block nbv on, as the
 * 16-bit lanes of o. */
#define VN2_GATHER16(x, nbv, NBLK, F, o)                                      \
  do {                                                                        \
    o = _mm_setzero_si128();                                                  \
    _Pragma("GCC unroll 8") for (int b_ = 0; b_ < NBLK; b_++)                 \
      o = _mm_insert_epi16(o, b_ < (nbv) ? (x)[b_].F : 0, b_);                \
  } while (0)

/* The scales d (and, MIN: the minima m) of a unit's nbv valid blocks
 * (1..8) to their lanes; 0 past them. */
#define VN2_SCALES(x, nbv, MIN, o)                                            \
  do {                                                                        \
    __m128i h_;                                                               \
    VN2_GATHER16(x, nbv, 8, d, h_);                                           \
    vn2_pair_lanes(_mm256_cvtph_ps(h_), (o)->sc);                             \
    MIN(VN2_GATHER16(x, nbv, 8, m, h_);                                       \
        vn2_pair_lanes(_mm256_cvtph_ps(h_), (o)->mn);)                        \
  } while (0)
#define VN2_MIN(s) s
#define VN2_NO_MIN(s)

/* The same for a whole unit of a min type (nbv 8) whose blocks' (d, m)
 * dwords lie at dword 0 of a 32-byte window and dword H of its upper
 * half, window k at block 2k (Q4_1: H 1, Q5_1: H 2): four loads and
 * seven shuffles make [b0 b2 b4 b6 | b1 b3 b5 b7] (the blocks' dwords),
 * in place of 16 word inserts. */
_Static_assert(sizeof(dq_block_q4_1) == 20 && sizeof(dq_block_q5_1) == 24,
               "VN2_SCALES_DM8's H assumes these block sizes");
#define VN2_SCALES_DM8(x, H, o)                                               \
  do {                                                                        \
    const uint8_t *p_ = (const uint8_t *)(const void *)(x);                   \
    __m256i v_[2];                                                            \
    _Pragma("GCC unroll 2") for (int j_ = 0; j_ < 2; j_++) {                  \
      __m256i a_ = _mm256_loadu_si256(                                        \
          (const __m256i *)(p_ + 4 * j_ * sizeof *(x)));                      \
      __m256i b_ = _mm256_loadu_si256(                                        \
          (const __m256i *)(p_ + (4 * j_ + 2) * sizeof *(x)));                \
      /* lane 0: [a0 b0 . .]; lane 1: a's and b's dword H at 2-3 (H 1) */     \
      v_[j_] = (H) == 1 ? _mm256_unpacklo_epi32(a_, b_)                       \
                        : _mm256_blend_epi32(_mm256_unpacklo_epi32(a_, b_),   \
                                             _mm256_unpackhi_epi32(a_, b_),   \
                                             0xf0);                           \
    }                                                                         \
    __m256i e_ = _mm256_unpacklo_epi64(v_[0], v_[1]);                         \
    if ((H) == 1) /* lane 1's pairs sat at dwords 2-3 */                      \
      e_ = _mm256_blend_epi32(e_, _mm256_unpackhi_epi64(v_[0], v_[1]), 0xf0); \
    /* [d m] of b0 b2 b4 b6 and of b1 b3 b5 b7, as floats */                  \
    __m256 f0_ = _mm256_cvtph_ps(_mm256_castsi256_si128(e_));                 \
    __m256 f1_ = _mm256_cvtph_ps(_mm256_extracti128_si256(e_, 1));            \
    const __m256i dd_ = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);            \
    const __m256i mm_ = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7);            \
    (o)->sc[0] = _mm256_permutevar8x32_ps(f0_, dd_);                          \
    (o)->sc[1] = _mm256_permutevar8x32_ps(f1_, dd_);                          \
    (o)->mn[0] = _mm256_permutevar8x32_ps(f0_, mm_);                          \
    (o)->mn[1] = _mm256_permutevar8x32_ps(f1_, mm_);                          \
  } while (0)
/* A decoder's scales: by inserts, or for a whole unit of the min types by
 * VN2_SCALES_DM8 (window dword H 1 or 2). */
#define VN2_SC_INS(x, nbv, MIN, o) VN2_SCALES(x, nbv, MIN, o)
#define VN2_SC_DM(H, x, nbv, MIN, o)                                          \
  do {                                                                        \
    if ((nbv) == 8)                                                           \
      VN2_SCALES_DM8(x, H, o);                                                \
    else                                                                      \
      VN2_SCALES(x, nbv, MIN, o);                                             \
  } while (0)
#define VN2_SC_DM1(x, nbv, MIN, o) VN2_SC_DM(1, x, nbv, MIN, o)
#define VN2_SC_DM2(x, nbv, MIN, o) VN2_SC_DM(2, x, nbv, MIN, o)

/* The same for a half unit (gemm_vn.h): lane p holds block p % 4. */
#define VN2_HALF_SCALES(x, nbv, MIN, o)                                       \
  do {                                                                        \
    __m128i h_;                                                               \
    VN2_GATHER16(x, nbv, 4, d, h_);                                           \
    __m128 v_ = _mm_cvtph_ps(h_);                                             \
    (o)->sc[0] = _mm256_set_m128(v_, v_);                                     \
    MIN(VN2_GATHER16(x, nbv, 4, m, h_); v_ = _mm_cvtph_ps(h_);                \
        (o)->mn[0] = _mm256_set_m128(v_, v_);)                                \
  } while (0)

/* Q4_0, Q4_1, Q5_0, Q5_1: block b's nibbles (low: group 2b, high:
 * 2b + 1), BIT5 (the Q5 types' fifth bits, qh bit j = element j, or
 * nothing); Q8_0 (VNNI only): its bytes made unsigned. 0 from block nbv
 * on. */
#define VN2_BIT5(n, x, b, nbv)                                                \
  n = _mm256_or_si256(n, _mm256_and_si256(bits32(VN2_QH(x, b, nbv)),         \
                                          _mm256_set1_epi8(16)))
#define VN2_NO_BIT5(n, x, b, nbv)
#define DEF_BLK2_NIBBLES(NAME, WT, BIT5)                                      \
  VN2_INLINE __m256i vn2_blk_##NAME(const WT *x, int b, int nbv) {            \
    __m256i n = nibbles32(VN2_Q(x, b, nbv));                                  \
    BIT5(n, x, b, nbv);                                                       \
    return n;                                                                 \
  }
DEF_BLK2_NIBBLES(q4_0, dq_block_q4_0, VN2_NO_BIT5)
DEF_BLK2_NIBBLES(q4_1, dq_block_q4_1, VN2_NO_BIT5)
DEF_BLK2_NIBBLES(q5_0, dq_block_q5_0, VN2_BIT5)
DEF_BLK2_NIBBLES(q5_1, dq_block_q5_1, VN2_BIT5)
#if VN2_VNNI
VN2_INLINE __m256i vn2_blk_q8_0(const dq_block_q8_0 *x, int b, int nbv) {
  return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)VN2_Q(x, b, nbv)),
                          _mm256_set1_epi8((char)0x80));
}
#endif

/* The decoders of a unit of nbv valid blocks (1..8) and of a half unit
 * (nbv <= 4: u[0], sc[0], mn[0]) from vn2_blk_NAME: N_k is block 2k + h
 * in half h of a unit, block k in a half unit. */
#define DEF_DEC2_BLOCKS(NAME, WT, MIN, SC)                                     \
  VN2_INLINE void vn2_dec_##NAME(const WT *x, int nbv, vn2_w *o) {            \
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {                     \
      __m256i n[4];                                                           \
      _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)                     \
        n[k] = vn2_blk_##NAME(x, 2 * k + h, nbv);                             \
      vn2_transpose(n, o->u[h]);                                              \
    }                                                                         \
    SC(x, nbv, MIN, o);                                                       \
  }                                                                           \
  VN2_INLINE void vn2_dec_half_##NAME(const WT *x, int nbv, vn2_w *o) {       \
    __m256i n[4];                                                             \
    _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)                       \
      n[k] = vn2_blk_##NAME(x, k, nbv);                                       \
    vn2_transpose(n, o->u[0]);                                                \
    VN2_HALF_SCALES(x, nbv, MIN, o);                                          \
  }
DEF_DEC2_BLOCKS(q4_0, dq_block_q4_0, VN2_NO_MIN, VN2_SC_INS)
DEF_DEC2_BLOCKS(q4_1, dq_block_q4_1, VN2_MIN, VN2_SC_DM1)
DEF_DEC2_BLOCKS(q5_0, dq_block_q5_0, VN2_NO_MIN, VN2_SC_INS)
DEF_DEC2_BLOCKS(q5_1, dq_block_q5_1, VN2_MIN, VN2_SC_DM2)
#if VN2_VNNI
DEF_DEC2_BLOCKS(q8_0, dq_block_q8_0, VN2_NO_MIN, VN2_SC_INS)
#endif

/* ---- the K-quants: a unit is one super-block ---- */

/* 8 byte values, one per sub-block, times f, to their groups' lanes. */
VN2_INLINE void vn2_sub_lanes(uint64_t v, float f, __m256 *o) {
  vn2_pair_lanes(
      _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                        _mm_cvtsi64_si128((long long)v))),
                    _mm256_set1_ps(f)),
      o);
}

VN2_INLINE void vn2_dec_q4_k(const dq_block_q4_k *x, int nbv, vn2_w *o) {
  (void)nbv; /* always 1 */
  const __m256i m4 = _mm256_set1_epi8(15);
  __m256i n[2][4];
  _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * k));
    n[0][k] = _mm256_and_si256(v, m4); /* sub-block 2k: groups 4k, 4k+1 */
    n[1][k] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4); /* 2k + 1 */
  }
  vn2_transpose(n[0], o->u[0]);
  vn2_transpose(n[1], o->u[1]);
  uint64_t sc, mn;
  vn_q4k_scales(x->scales, &sc, &mn);
  vn2_sub_lanes(sc, h2f(x->d), o->sc);
  vn2_sub_lanes(mn, -h2f(x->dmin), o->mn);
}

/* Q6_K, per 128 elements P (ql + 64P, qh + 32P): the low nibbles of
 * ql[0..31] with qh bits 0-1 are elements 0-31 (groups 8P, 8P+1), of
 * ql[32..63] with bits 2-3 elements 32-63; the high nibbles with bits 4-5
 * and 6-7 elements 64-95 and 96-127. */
VN2_INLINE void vn2_dec_q6_k(const dq_block_q6_k *x, int nbv, vn2_w *o) {
  (void)nbv; /* always 1 */
  const __m256i m4 = _mm256_set1_epi8(15);
  __m256i n[2][4];
  _Pragma("GCC unroll 2") for (int p = 0; p < 2; p++) {
    __m256i l0 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * p));
    __m256i l1 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * p + 32));
    __m256i q = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * p));
    n[0][2 * p] = _mm256_or_si256(
        _mm256_and_si256(l0, m4),
        _mm256_slli_epi16(_mm256_and_si256(q, _mm256_set1_epi8(0x03)), 4));
    n[1][2 * p] = _mm256_or_si256(
        _mm256_and_si256(l1, m4),
        _mm256_slli_epi16(_mm256_and_si256(q, _mm256_set1_epi8(0x0c)), 2));
    n[0][2 * p + 1] = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
        _mm256_and_si256(q, _mm256_set1_epi8(0x30)));
    n[1][2 * p + 1] = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
        _mm256_srli_epi16(_mm256_and_si256(q, _mm256_set1_epi8((char)0xc0)), 2));
  }
  vn2_transpose(n[0], o->u[0]);
  vn2_transpose(n[1], o->u[1]);
  /* scales[G(p)]: bytes in lane order, then half h from bytes 8h.. */
  __m128i s = _mm_shuffle_epi8(
      _mm_loadu_si128((const __m128i *)x->scales),
      _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  __m256 d = _mm256_set1_ps(h2f(x->d));
  o->sc[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s)), d);
  o->sc[1] = _mm256_mul_ps(
      _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(s, 8))), d);
}

/* ---- the kernel ---- */

/* Half h's exact int32 group sums sum u y, with the offset correction
 * (!has_min); wide: codes up to 63 (Q6_K), pairs widened two by two. */
VN2_INLINE __m256i vn2_isum(const __m256i *u, const vn_act *a, int h,
                            int has_min, int wide) {
#if VN2_VNNI
  (void)wide;
  __m256i s = has_min ? _mm256_setzero_si256()
                      : _mm256_loadu_si256((const __m256i *)(a->corr + 8 * h));
  _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++)
    s = VN2_DPBUSD(s, u[c], _mm256_loadu_si256((const __m256i *)(a->y[c] + 32 * h)));
  return s;
#else
  const __m256i one = _mm256_set1_epi16(1);
  __m256i p[4];
  _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++)
    p[c] = _mm256_maddubs_epi16(
        u[c], _mm256_loadu_si256((const __m256i *)(a->y[c] + 32 * h)));
  __m256i s;
  if (wide)
    s = _mm256_add_epi32(_mm256_madd_epi16(_mm256_add_epi16(p[0], p[1]), one),
                         _mm256_madd_epi16(_mm256_add_epi16(p[2], p[3]), one));
  else
    s = _mm256_madd_epi16(_mm256_add_epi16(_mm256_add_epi16(p[0], p[1]),
                                           _mm256_add_epi16(p[2], p[3])),
                          one);
  if (!has_min)
    s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i *)(a->corr + 8 * h)));
  return s;
#endif
}

/* One (row, token) step over a unit: acc[h] is lanes 8h..8h+7 of
 * gemm_vnni_avx512.h's accumulator, updated by the same operations. */
VN2_INLINE void vn2_step(const vn2_w *w, const vn_act *a, int has_min,
                         int wide, __m256 *acc) {
  _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
    __m256i s = vn2_isum(w->u[h], a, h, has_min, wide);
    acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s),
                             _mm256_mul_ps(w->sc[h], _mm256_loadu_ps(a->dy + 8 * h)),
                             acc[h]);
    if (has_min)
      acc[h] = _mm256_fmadd_ps(w->mn[h], _mm256_loadu_ps(a->s + 8 * h), acc[h]);
  }
}

/* The step over a half unit (decoded into u[0], sc[0], mn[0]): lanes 0-7
 * only. */
VN2_INLINE __m256 vn2_step_half(const vn2_w *w, const vn_act *a, int has_min,
                                __m256 acc) {
  __m256i s = vn2_isum(w->u[0], a, 0, has_min, 0);
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s),
                        _mm256_mul_ps(w->sc[0], _mm256_loadu_ps(a->dy)), acc);
  if (has_min)
    acc = _mm256_fmadd_ps(w->mn[0], _mm256_loadu_ps(a->s), acc);
  return acc;
}

/* gemm_vn.h's tree: halves first, then hsum_ps's. */
VN2_INLINE float vn2_hsum(const __m256 *acc) {
  return hsum_ps(_mm256_add_ps(acc[0], acc[1]));
}

/* vn2_hsum of 4 rows' accumulators, row m in element m, by the same
 * additions. */
VN2_INLINE __m128 vn2_hsum4(const __m256 (*acc)[2]) {
  __m256 v[4];
  for (int r = 0; r < 4; r++)
    v[r] = _mm256_add_ps(acc[r][0], acc[r][1]);
  /* lanes 0-3: v[0]'s i + i + 4, 4-7: v[1]'s (and v[2], v[3]) */
  __m256 t01 = _mm256_add_ps(_mm256_permute2f128_ps(v[0], v[1], 0x20),
                             _mm256_permute2f128_ps(v[0], v[1], 0x31));
  __m256 t23 = _mm256_add_ps(_mm256_permute2f128_ps(v[2], v[3], 0x20),
                             _mm256_permute2f128_ps(v[2], v[3], 0x31));
  /* then i + i + 2: lane 0 [r0 r0 r2 r2], lane 1 [r1 r1 r3 r3] */
  __m256 u = _mm256_add_ps(_mm256_shuffle_ps(t01, t23, 0x44),
                           _mm256_shuffle_ps(t01, t23, 0xee));
  /* then i + i + 1: lane 0 [r0 r2 . .], lane 1 [r1 r3 . .] */
  __m256 w = _mm256_add_ps(_mm256_shuffle_ps(u, u, 0x88),
                           _mm256_shuffle_ps(u, u, 0xdd));
  return _mm_unpacklo_ps(_mm256_castps256_ps128(w),
                         _mm256_extractf128_ps(w, 1));
}

VN2_INLINE void vn2_out4(float *y, __m128 v, int first) {
  _mm_storeu_ps(y, first ? v : _mm_add_ps(_mm_loadu_ps(y), v));
}

VN2_INLINE void vn2_out(float *y, float v, int first) {
  if (first)
    *y = v;
  else
    *y += v;
}

/* Rows r < rm of a chunk's kc decoded units w[r][k] against one token's
 * units from k0. One token at a time measured fastest on the Zen 4 VM
 * (bench_mm --isa avx2, 64 tokens, GFLOP/s, medians of 3): 8 rows x 1
 * token Q4_1 1536 x 576 151, Q5_0 129, Q4_K 159, Q6_K 165; 6 x 2: 145,
 * 126, 152, 153; 4 x 2: 137, 117, 146, 153; 2 x 3: 119, 106, 118, 108.
 * Its 16 accumulators exceed the 16 registers, but each token's
 * activations are loaded once per 8 rows. */
VN2_INLINE void vn2_tile(const vn2_w (*w)[VN_KC], int rm, int kc, int hl,
                         const vn_act *a, int has_min, int wide, int first,
                         float *y) {
  __m256 acc[VN2_RM][2];
  _Pragma("GCC unroll 8") for (int r = 0; r < VN2_RM; r++)
    acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int k = 0; k < kc - hl; k++)
    _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
      vn2_step(&w[r][k], a + k, has_min, wide, acc[r]);
  if (hl)
    _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
      acc[r][0] = vn2_step_half(&w[r][kc - 1], a + kc - 1, has_min, acc[r][0]);
  for (int r = 0; r < rm; r++)
    vn2_out(y + r, vn2_hsum(acc[r]), first);
}

/* BPU: blocks per unit (8, or 1 for the K-quants, which have no half
 * units: DEC_HALF is then never called); WIDE: codes up to 63; nb: blocks
 * per row, nu: units per row, nf: full units (nu, or nu - 1 before a half
 * unit). Each chunk of VN2_RM rows x VN_KC units is decoded once into dw
 * (24 KiB, in L1) for all the tokens; one token (decode) uses each unit as
 * it is decoded instead: the 12 stores a unit costs in dw fill the store
 * buffer and keep the core from reading far ahead, so weights streamed
 * from memory came at 7.6 GB/s (Q4_K) and 9.2 (Q6_K) through dw against
 * 17.0 and 22.2 on the fly (bench_mm --stream --isa avx2, Zen 4 VM; the
 * 32-element types, bound by their decoding, 10.5-11.2 either way). */
#define DEF_GEMM_VN2(NAME, WT, BPU, HAS_MIN, WIDE, DEC_HALF)                  \
  /* full unit k < nf of row x (nb blocks) */                                 \
  VN2_INLINE void vn2_full_##NAME(const WT *x, int64_t nb, int64_t k,         \
                                  vn2_w *o) {                                 \
    if (nb - k * BPU >= BPU)                                                  \
      vn2_dec_##NAME(x + k * BPU, BPU, o);                                    \
    else                                                                      \
      vn2_dec_##NAME(x + k * BPU, (int)(nb - k * BPU), o);                    \
  }                                                                           \
  VN2_INLINE void vn2_unit_##NAME(const WT *x, int64_t nb, int64_t nf,        \
                                  int64_t k, vn2_w *o) {                      \
    if (k >= nf)                                                              \
      DEC_HALF(x + k * BPU, (int)(nb - k * BPU), o);                          \
    else                                                                      \
      vn2_full_##NAME(x, nb, k, o);                                           \
  }                                                                           \
  /* Unit k of row x into acc. */                                             \
  VN2_INLINE void vn2_fly_unit_##NAME(const WT *x, int64_t nb, int64_t nf,    \
                                      int64_t k, const vn_act *a,             \
                                      __m256 *acc) {                          \
    vn2_w d;                                                                  \
    VN_PREFETCH(x + k * BPU, BPU * sizeof(WT));                               \
    if (k < nf) {                                                             \
      vn2_full_##NAME(x, nb, k, &d);                                          \
      vn2_step(&d, a + k, HAS_MIN, WIDE, acc);                                \
    } else {                                                                  \
      DEC_HALF(x + k * BPU, (int)(nb - k * BPU), &d);                         \
      acc[0] = vn2_step_half(&d, a + k, HAS_MIN, acc[0]);                     \
    }                                                                         \
  }                                                                           \
  /* rm rows (1 or 4) from w against one token's a, decoded on the fly,    \
   * their lanes added together; inter: the rows' units interleaved */       \
  VN2_INLINE void vn2_fly_##NAME(const uint8_t *w, size_t wrb, int rm,        \
                                 int inter, int64_t nb, int64_t nu,           \
                                 int64_t nf, const vn_act *a, float *y) {     \
    for (int64_t k0 = 0; k0 < nu; k0 += VN_KC) {                              \
      int64_t k1 = k0 + VN_KC < nu ? k0 + VN_KC : nu;                         \
      __m256 acc[4][2];                                                       \
      _Pragma("GCC unroll 4") for (int r = 0; r < rm; r++)                    \
        acc[r][0] = acc[r][1] = _mm256_setzero_ps();                          \
      if (inter)                                                              \
        for (int64_t k = k0; k < k1; k++)                                     \
          _Pragma("GCC unroll 4") for (int r = 0; r < rm; r++)                \
            vn2_fly_unit_##NAME((const WT *)(const void *)(w + r * wrb), nb,  \
                                nf, k, a, acc[r]);                            \
      else                                                                    \
        _Pragma("GCC unroll 4") for (int r = 0; r < rm; r++)                  \
          for (int64_t k = k0; k < k1; k++)                                   \
            vn2_fly_unit_##NAME((const WT *)(const void *)(w + r * wrb), nb,  \
                                nf, k, a, acc[r]);                            \
      if (rm == 4)                                                            \
        vn2_out4(y, vn2_hsum4(acc), k0 == 0);                                 \
      else                                                                    \
        vn2_out(y, vn2_hsum(acc[0]), k0 == 0);                                \
    }                                                                         \
  }                                                                           \
  static void gemm_vn2_##NAME(int64_t n, const void *w, size_t wrb,           \
                              int64_t n_rows, const void *act, size_t as,     \
                              int64_t n_tok, float *y, int64_t ys) {          \
    int64_t nb = n / (VN_UNIT / BPU), nu = (nb + BPU - 1) / BPU;              \
    int64_t nf = BPU == 8 && vn_half_last(nb) ? nu - 1 : nu;                  \
    if (n_tok == 1) { /* decode on the fly, 4 rows at once */                \
      const uint8_t *wb = w;                                                  \
      int64_t r = 0;                                                          \
      for (; r + 4 <= n_rows; r += 4) {                                       \
        if (wrb <= VN_FLY_INTER_BYTES)                                        \
          vn2_fly_##NAME(wb + r * wrb, wrb, 4, 1, nb, nu, nf, act, y + r);    \
        else                                                                  \
          vn2_fly_##NAME(wb + r * wrb, wrb, 4, 0, nb, nu, nf, act, y + r);    \
      }                                                                       \
      for (; r < n_rows; r++)                                                 \
        vn2_fly_##NAME(wb + r * wrb, wrb, 1, 0, nb, nu, nf, act, y + r);      \
      return;                                                                 \
    }                                                                         \
    vn2_w dw[VN2_RM][VN_KC];                                                  \
    for (int64_t r0 = 0; r0 < n_rows; r0 += VN2_RM) {                         \
      int rm = n_rows - r0 < VN2_RM ? (int)(n_rows - r0) : VN2_RM;            \
      for (int64_t k0 = 0; k0 < nu; k0 += VN_KC) {                            \
        int kc = nu - k0 < VN_KC ? (int)(nu - k0) : VN_KC;                    \
        int hl = k0 + kc > nf; /* the chunk ends in the half unit */          \
        for (int r = 0; r < rm; r++) {                                        \
          const WT *x = (const WT *)((const uint8_t *)w + (r0 + r) * wrb);    \
          for (int k = 0; k < kc; k++)                                        \
            vn2_unit_##NAME(x, nb, nf, k0 + k, &dw[r][k]);                    \
        }                                                                     \
        for (int64_t t = 0; t < n_tok; t++) {                                 \
          const vn_act *at = (const vn_act *)(const void *)(                  \
                                 (const uint8_t *)act + t * as) + k0;         \
          if (rm == VN2_RM) /* constant shape: unrolled */                    \
            vn2_tile(dw, VN2_RM, kc, hl, at, HAS_MIN, WIDE, k0 == 0,          \
                     y + t * ys + r0);                                        \
          else                                                                \
            vn2_tile(dw, rm, kc, hl, at, HAS_MIN, WIDE, k0 == 0,              \
                     y + t * ys + r0);                                        \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

DEF_GEMM_VN2(q4_0, dq_block_q4_0, 8, 0, 0, vn2_dec_half_q4_0)
DEF_GEMM_VN2(q5_0, dq_block_q5_0, 8, 0, 0, vn2_dec_half_q5_0)
DEF_GEMM_VN2(q4_1, dq_block_q4_1, 8, 1, 0, vn2_dec_half_q4_1)
DEF_GEMM_VN2(q5_1, dq_block_q5_1, 8, 1, 0, vn2_dec_half_q5_1)
DEF_GEMM_VN2(q4_k, dq_block_q4_k, 1, 1, 0, vn2_dec_q4_k)
DEF_GEMM_VN2(q6_k, dq_block_q6_k, 1, 0, 1, vn2_dec_q6_k)
#if VN2_VNNI
DEF_GEMM_VN2(q8_0, dq_block_q8_0, 8, 0, 0, vn2_dec_half_q8_0)
#endif

/* Transposed codes u of half h stored, with their offset correction -off
 * sum y per lane. */
VN2_INLINE void vn2_put_half(const __m256i *u, int off, int h, vn_act *a) {
  __m256i sum = _mm256_setzero_si256();
  for (int c = 0; c < 4; c++) {
    _mm256_storeu_si256((__m256i *)(a->y[c] + 32 * h), u[c]);
#if VN2_VNNI
    sum = VN2_DPBUSD(sum, _mm256_set1_epi8((char)off), u[c]);
#else /* off <= 128, |y| <= 127: pairs within int16 */
    sum = _mm256_add_epi32(
        sum, _mm256_madd_epi16(
                 _mm256_maddubs_epi16(_mm256_set1_epi8((char)off), u[c]),
                 _mm256_set1_epi16(1)));
#endif
  }
  _mm256_storeu_si256((__m256i *)(a->corr + 8 * h),
                      _mm256_sub_epi32(_mm256_setzero_si256(), sum));
}

/* A unit's 256 codes (contiguous, natural order) -> the layout. */
VN2_INLINE void vn2_prep_codes(const int8_t *q, int off, vn_act *a) {
  _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
    __m256i n[4], u[4];
    for (int k = 0; k < 4; k++) /* lane m: group 4k + 2h + m */
      n[k] = _mm256_loadu_si256((const __m256i *)(q + 64 * k + 32 * h));
    vn2_transpose(n, u);
    vn2_put_half(u, off, h, a);
  }
}

/* A half unit's 128 codes (4 blocks, natural order) -> its layout; the
 * other half's codes and correction 0. */
VN2_INLINE void vn2_prep_half_codes(const int8_t *q, int off, vn_act *a) {
  __m256i n[4], u[4];
  for (int k = 0; k < 4; k++) /* lane m: block k's half m */
    n[k] = _mm256_loadu_si256((const __m256i *)(q + 32 * k));
  vn2_transpose(n, u);
  vn2_put_half(u, off, 0, a);
  for (int c = 0; c < 4; c++)
    u[c] = _mm256_setzero_si256();
  vn2_put_half(u, 0, 1, a);
}

/* One token's activation row (Q8_0, Q8_1 or Q8_K, n elements) in the
 * layout; off: the weight type's code offset. gemm_vnni_avx512.h's kernels
 * read it too (its VNNI build). */
static void vn2_prep(int64_t n, int act_type, const void *row, int off,
                     void *out) {
  vn_act *a = out;
  if (act_type == DQ_TYPE_Q8_K) {
    const dq_block_q8_k *x = row;
    for (int64_t k = 0; k < n / DQ_QK_K; k++) {
      vn2_prep_codes(x[k].qs, off, &a[k]);
      for (int p = 0; p < 16; p++) {
        a[k].dy[p] = x[k].d;
        a[k].s[p] = (float)x[k].bsums[vn_group[p]] * x[k].d;
      }
    }
    return;
  }
  int64_t nb = n / DQ_QK, nu = (nb + 7) / 8;
  for (int64_t k = 0; k < nu; k++) {
    int8_t q[VN_UNIT];
    float d[8] = {0}, s[8] = {0};
    for (int b = 0; b < 8; b++) {
      int64_t i = 8 * k + b;
      if (i >= nb) {
        memset(q + 32 * b, 0, 32);
      } else if (act_type == DQ_TYPE_Q8_1) {
        const dq_block_q8_1 *x = (const dq_block_q8_1 *)row + i;
        memcpy(q + 32 * b, x->qs, 32);
        d[b] = h2f(x->d);
        s[b] = h2f(x->s);
      } else {
        const dq_block_q8_0 *x = (const dq_block_q8_0 *)row + i;
        memcpy(q + 32 * b, x->qs, 32);
        d[b] = h2f(x->d);
      }
    }
    if (k == nu - 1 && vn_half_last(nb)) { /* lane p: block p % 4 */
      vn2_prep_half_codes(q, off, &a[k]);
      for (int p = 0; p < 16; p++) {
        a[k].dy[p] = p < 8 ? d[p % 4] : 0.0f;
        a[k].s[p] = p < 4 ? s[p] : 0.0f; /* a block's first group */
      }
      continue;
    }
    vn2_prep_codes(q, off, &a[k]);
    for (int p = 0; p < 16; p++) { /* a block's first group carries s */
      a[k].dy[p] = d[vn_group[p] / 2];
      a[k].s[p] = vn_group[p] % 2 ? 0.0f : s[vn_group[p] / 2];
    }
  }
}

const dq_gemm_u8_table VN2_TABLE = {
    {
        [DQ_TYPE_Q4_0] = gemm_vn2_q4_0,
        [DQ_TYPE_Q4_1] = gemm_vn2_q4_1,
        [DQ_TYPE_Q5_0] = gemm_vn2_q5_0,
        [DQ_TYPE_Q5_1] = gemm_vn2_q5_1,
#if VN2_VNNI
        [DQ_TYPE_Q8_0] = gemm_vn2_q8_0,
#endif
        [DQ_TYPE_Q4_K] = gemm_vn2_q4_k,
        [DQ_TYPE_Q6_K] = gemm_vn2_q6_k,
    },
    VN_OFFSETS,
    vn2_prep,
    vn_act_bytes,
};
