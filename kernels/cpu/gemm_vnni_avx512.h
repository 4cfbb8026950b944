/*
 * gemm_vnni_avx512.h - matrix kernels on AVX-512 VNNI for the 32-element
 * block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 against Q8_0/Q8_1
 * activations) and the K-quants (Q4_K, Q6_K against Q8_K), for prefill and
 * decode alike. Included by vecdot_avx512.c after gemm_vn_avx2.h's VNNI
 * build, the same family on 256-bit registers, whose activation layout
 * (vn2_prep) and half units (decoders, 256-bit step) these kernels use.
 *
 * Layout (gemm_vn.h). Weights go in units of 256 elements, each split
 * into 16 groups of 16 elements that share one scale. A unit's codes are
 * four 512-bit vectors in which int32 lane p always holds group G(p):
 * vector c, lane p = elements 4c..4c+3 of group G(p). Four vpdpbusd
 * then sum each group's 16 products in its own lane, exactly in int32, and
 * one conversion, one product of the row's and the token's lane scales and
 * one FMA apply the scales of a whole unit: 7 operations per (row, token,
 * 256 weights), against 16 with two blocks per vector and a scale step per
 * vector (the kernels this replaced), and against 16 products and 16 adds
 * for the codes alone in the 4-token K-quant kernels it replaced too.
 *
 * bench_mm on the Zen 5 VM, one thread, 64 tokens, GFLOP/s, before ->
 * after (ranges over 3-4 runs): Q4_1 576 x 1536 180-200 -> 200-227, Q4_1
 * 1536 x 576 195-258 -> 306-363, Q5_0 640 x 2048 212-264 -> 282-318, Q8_0
 * 210-267 -> 305-316, Q4_K 2048 x 640 58-91 -> 398-416, Q6_K 55-89 ->
 * 333-427. One token (in cache): Q4_1 576 x 1536 35 -> 23-30 us, Q4_K
 * 38 -> 20 us. Rows of 576 or 640 gain least: their last unit is a
 * quarter or half full.
 *
 * It is the layout the codes unpack to with in-lane shuffles only: natural
 * vectors N_k whose 128-bit lane m is group 4k + m (two blocks' nibbles or
 * bytes; Q6_K's low/high nibbles of ql with their qh bits; Q4_K's nibbles
 * after one 128-bit shuffle per pair), transposed 4 x 4 by dwords within
 * each lane, so G(p) = 4 (p % 4) + p / 4. The activations get the same
 * transpose once per token (gemm_vn_avx2.h's vn2_prep, which writes
 * both families' activations).
 *
 * vpdpbusd multiplies unsigned by signed bytes. The weight codes are made
 * unsigned, u = q + off (off 8 for Q4_0, 16 for Q5_0, 128 for Q8_0, 32 for
 * Q6_K), the activations stay signed, and sum u y - off sum y = sum q y
 * exactly: -off sum y per lane is prepared once per token and starts
 * vpdpbusd's accumulator. The min types (Q4_1, Q5_1: x = d q + m; Q4_K:
 * x = d sc q - dmin mn) add one FMA of the row's lane minima by the
 * token's lane sums S instead (Q8_1's block s in the block's first lane
 * and 0 in its second; Q8_K: d times the group's sum).
 *
 * A row whose blocks do not fill its last unit gets zero codes, scales and
 * activations there (Gemma 3's 640-wide rows: 20 blocks in 3 units).
 *
 * Prefill decodes each chunk of VN_KC units of VN_RM rows once per 64-token
 * tile into a buffer; fewer than a tile's tokens (4; K-quants 3) decode
 * on the fly. Either way a (row, token) result follows gemm_vn.h's rule
 * (one 16-lane accumulator per k-chunk, vn_hsum's tree, or vn_hsum16 for a
 * whole tile at once, the same additions), so batched and one-token
 * evaluation give the same bits. The results differ from the scalar
 * reference and vecdot_x86.h's kernels in float order only.
 */
#include "gemm_vn.h"

#if !defined(VN2_VNNI) || !VN2_VNNI
#error "include gemm_vn_avx2.h with VN2_VNNI 1 before gemm_vnni_avx512.h"
#endif

#define VN_RM 4 /* rows per tile */
#define VN_RN 4 /* tokens per tile, at most (the K-quants: 3) */

/* One unit of one weight row, decoded. */
typedef struct vn_w {
  __m512i u[4]; /* unsigned codes */
  __m512 sc;    /* the scale of lane p's group */
  __m512 mn;    /* min types: the min of lane p's group */
} vn_w;

#define VN_INLINE static inline __attribute__((always_inline))

/* N_k (lane m = group 4k + m) -> the layout: u[c] dword 4m + k = N_k
 * lane m dword c. */
VN_INLINE void vn_transpose(const __m512i *n, __m512i *u) {
  __m512i t0 = _mm512_unpacklo_epi32(n[0], n[1]);
  __m512i t1 = _mm512_unpackhi_epi32(n[0], n[1]);
  __m512i t2 = _mm512_unpacklo_epi32(n[2], n[3]);
  __m512i t3 = _mm512_unpackhi_epi32(n[2], n[3]);
  u[0] = _mm512_unpacklo_epi64(t0, t2);
  u[1] = _mm512_unpackhi_epi64(t0, t2);
  u[2] = _mm512_unpacklo_epi64(t1, t3);
  u[3] = _mm512_unpackhi_epi64(t1, t3);
}

/* Lane p's group G(p), as dword indices for permutes. */
VN_INLINE __m512i vn_groups(void) {
  return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
                           15);
}

/* 8 floats, one per pair of groups (a block; a Q4_K sub-block), spread to
 * their groups' lanes. */
VN_INLINE __m512 vn_pair_lanes(__m256 v) {
  return _mm512_permutexvar_ps(_mm512_srli_epi32(vn_groups(), 1),
                               _mm512_castps256_ps512(v));
}

/* ---- the 32-element block types: a unit is 8 blocks ---- */

/* Two blocks' 16 code bytes -> N_k: lanes [low nibbles of q0, high of q0,
 * low of q1, high of q1]. */
VN_INLINE __m512i vn_nibbles(const uint8_t *q0, const uint8_t *q1) {
  __m256i t = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)q0)),
      _mm_loadu_si128((const __m128i *)q1), 1);
  __m512i z = _mm512_castsi256_si512(t);
  z = _mm512_shuffle_i64x2(z, z, 0x50); /* lanes 0 0 1 1 */
  z = _mm512_mask_srli_epi16(z, (__mmask32)0xff00ff00, z, 4);
  return _mm512_and_si512(z, _mm512_set1_epi8(15));
}

/* The fifth bits (qh, bit j = element j) of two blocks, as N_k's byte
 * mask. */
VN_INLINE __m512i vn_bit5(__m512i n, uint32_t h0, uint32_t h1) {
  __mmask64 k = (__mmask64)((uint64_t)h0 | (uint64_t)h1 << 32);
  return _mm512_or_si512(n, _mm512_maskz_mov_epi8(k, _mm512_set1_epi8(16)));
}

/* The scales d (and, MIN: the minima m) of a unit's nbv valid blocks
 * (1..8) to their lanes; 0 past them. */
#define VN_SCALES(x, nbv, MIN, o)                                             \
  do {                                                                        \
    __m128i d_ = _mm_setzero_si128(), m_ = _mm_setzero_si128();               \
    _Pragma("GCC unroll 8") for (int b_ = 0; b_ < 8; b_++) {                  \
      d_ = _mm_insert_epi16(d_, b_ < (nbv) ? (x)[b_].d : 0, b_);              \
      MIN(m_ = _mm_insert_epi16(m_, b_ < (nbv) ? (x)[b_].m : 0, b_);)         \
    }                                                                         \
    (o)->sc = vn_pair_lanes(_mm256_cvtph_ps(d_));                             \
    (o)->mn = vn_pair_lanes(_mm256_cvtph_ps(m_));                             \
  } while (0)
#define VN_MIN(s) s
#define VN_NO_MIN(s)

/* A whole unit's scales by word permutes instead: the 8 blocks (bb bytes
 * each, d in the first word, a min type's m in the second) lie in four
 * 64-byte windows at words w0 = 0, w1, w2, w3 of the unit, none reading
 * past it. Word i of the gathered vector is lane i % 16's d (i < 16) or m,
 * of block 2 (i % 4) + (i % 16) / 8 = G(i % 16) / 2; vpermt2w takes it
 * from windows 0-1 by table ix0, or, where mask k1 says, from windows 2-3
 * by ix1. Two loads and a permute in place of 16 word inserts (Q4_1).
 *
 * bench_mm --tok 1, Zen 4, best of 9 alternated runs, GFLOP per CPU-s,
 * this change alone:
 * Q4_1 576 x 1536 1.13x, 1536 x 576 1.23x, Q4_0 2048 x 2048 1.09x (one
 * permute), Q5_1 2048 x 2048 1.07x (two); 64 tokens, which decode a unit
 * once per tile, within 2%. Not taken: Q5_0 (two permutes: 0.96x; one and
 * two inserts: 0.99x) and Q8_0 (two: 0.70x), whose 8 inserts cost less
 * than the permutes that replace them. */
typedef struct vn_swin {
  uint16_t ix0[32], ix1[32];
  uint32_t k1;
  int w[4];
} vn_swin;
#define VN_SW_(i, bb) ((2 * ((i) % 4) + ((i) % 16) / 8) * ((bb) / 2) + (i) / 16)
#define VN_SI0_(i, bb, w1)                                                    \
  (VN_SW_(i, bb) < 32 ? VN_SW_(i, bb) : (VN_SW_(i, bb) - (w1) + 32) & 63)
#define VN_SI1_(i, bb, w2, w3)                                                \
  (VN_SW_(i, bb) < (w3) ? (VN_SW_(i, bb) - (w2)) & 63                         \
                        : (VN_SW_(i, bb) - (w3) + 32) & 63)
#define VN_SK_(i, bb, w2) ((uint32_t)(VN_SW_(i, bb) >= (w2)) << (i))
#define VN_X8_(M, i, ...)                                                     \
  M(i, __VA_ARGS__), M(i + 1, __VA_ARGS__), M(i + 2, __VA_ARGS__),            \
      M(i + 3, __VA_ARGS__), M(i + 4, __VA_ARGS__), M(i + 5, __VA_ARGS__),    \
      M(i + 6, __VA_ARGS__), M(i + 7, __VA_ARGS__)
#define VN_X32_(M, ...)                                                       \
  VN_X8_(M, 0, __VA_ARGS__), VN_X8_(M, 8, __VA_ARGS__),                       \
      VN_X8_(M, 16, __VA_ARGS__), VN_X8_(M, 24, __VA_ARGS__)
#define VN_OR8_(M, i, ...)                                                    \
  (M(i, __VA_ARGS__) | M(i + 1, __VA_ARGS__) | M(i + 2, __VA_ARGS__) |        \
   M(i + 3, __VA_ARGS__) | M(i + 4, __VA_ARGS__) | M(i + 5, __VA_ARGS__) |    \
   M(i + 6, __VA_ARGS__) | M(i + 7, __VA_ARGS__))
#define VN_SWIN(bb, w1, w2, w3)                                               \
  {{VN_X32_(VN_SI0_, bb, w1)},                                                \
   {VN_X32_(VN_SI1_, bb, w2, w3)},                                            \
   VN_OR8_(VN_SK_, 0, bb, w2) | VN_OR8_(VN_SK_, 8, bb, w2) |                  \
       VN_OR8_(VN_SK_, 16, bb, w2) | VN_OR8_(VN_SK_, 24, bb, w2),             \
   {0, w1, w2, w3}}
/* Q4_0 (words 9b) and Q4_1 (10b, 10b + 1) fit windows 0-1 (k1 = 0);
 * Q5_1's blocks 6-7 (words 72-85) take window 2 (= 3) at word 64. */
_Static_assert(sizeof(dq_block_q4_0) == 18 && sizeof(dq_block_q4_1) == 20 &&
                   sizeof(dq_block_q5_1) == 24,
               "vn_swin's windows assume these block sizes");
static const vn_swin vn_swin_q4_0 = VN_SWIN(18, 32, 72, 72);
static const vn_swin vn_swin_q4_1 = VN_SWIN(20, 40, 80, 80);
static const vn_swin vn_swin_q5_1 = VN_SWIN(24, 36, 64, 64);

VN_INLINE __m512i vn_scale_words(const void *x, const vn_swin *sw) {
  const dq_f16 *h = x;
  __m512i v = _mm512_permutex2var_epi16(
      _mm512_loadu_si512(h), _mm512_loadu_si512(sw->ix0),
      _mm512_loadu_si512(h + sw->w[1]));
  if (sw->k1)
    v = _mm512_mask_blend_epi16(
        (__mmask32)sw->k1, v,
        _mm512_permutex2var_epi16(_mm512_loadu_si512(h + sw->w[2]),
                                  _mm512_loadu_si512(sw->ix1),
                                  _mm512_loadu_si512(h + sw->w[3])));
  return v;
}

/* VN_SCALES for a whole unit (nbv 8) by vn_scale_words, the windows sw. */
#define VN_SCALES8(x, sw, MIN, o)                                             \
  do {                                                                        \
    __m512i v_ = vn_scale_words(x, sw);                                       \
    (o)->sc = _mm512_cvtph_ps(_mm512_castsi512_si256(v_));                    \
    (o)->mn = _mm512_setzero_ps();                                            \
    MIN((o)->mn = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(v_, 1));)         \
  } while (0)
/* A decoder's scales: by the windows sw for a whole unit (VN_SCALES8),
 * else by inserts (VN_SCALES). */
#define VN_SCALES_WIN(sw, x, nbv, MIN, o)                                     \
  do {                                                                        \
    if ((nbv) == 8)                                                           \
      VN_SCALES8(x, &sw, MIN, o);                                             \
    else                                                                      \
      VN_SCALES(x, nbv, MIN, o);                                              \
  } while (0)
#define VN_SCALES_INS(sw, x, nbv, MIN, o) VN_SCALES(x, nbv, MIN, o)

/* Decoders of a unit of nbv valid blocks (1..8): zero codes and scales
 * past them. Called with nbv = 8 for every unit but a row's last, so that
 * the tests fold away there. */
static const uint8_t vn_zero[32];
#define VN_Q(x, b, nbv)                                                       \
  ((b) < (nbv) ? (const void *)(x)[b].qs : (const void *)vn_zero)
#define VN_QH(x, b, nbv) ((b) < (nbv) ? dq_le32((x)[b].qh) : 0u)

/* Q4_0, Q4_1, Q5_0, Q5_1: nibbles, BIT5 (the Q5 types' fifth bits or
 * nothing), scales and MIN (the Q*_1 minima or nothing). */
#define VN_BIT5(n, x, k, nbv)                                                 \
  n = vn_bit5(n, VN_QH(x, 2 * (k), nbv), VN_QH(x, 2 * (k) + 1, nbv))
#define VN_NO_BIT5(n, x, k, nbv)
#define DEF_DEC_NIBBLES(NAME, WT, BIT5, MIN, SCALES)                          \
  VN_INLINE void vn_dec_##NAME(const WT *x, int nbv, vn_w *o) {               \
    __m512i n[4];                                                             \
    _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {                     \
      n[k] = vn_nibbles(VN_Q(x, 2 * k, nbv), VN_Q(x, 2 * k + 1, nbv));        \
      BIT5(n[k], x, k, nbv);                                                  \
    }                                                                         \
    vn_transpose(n, o->u);                                                    \
    SCALES(vn_swin_##NAME, x, nbv, MIN, o);                                   \
  }
DEF_DEC_NIBBLES(q4_0, dq_block_q4_0, VN_NO_BIT5, VN_NO_MIN, VN_SCALES_WIN)
DEF_DEC_NIBBLES(q4_1, dq_block_q4_1, VN_NO_BIT5, VN_MIN, VN_SCALES_WIN)
DEF_DEC_NIBBLES(q5_0, dq_block_q5_0, VN_BIT5, VN_NO_MIN, VN_SCALES_INS)
DEF_DEC_NIBBLES(q5_1, dq_block_q5_1, VN_BIT5, VN_MIN, VN_SCALES_WIN)

VN_INLINE void vn_dec_q8_0(const dq_block_q8_0 *x, int nbv, vn_w *o) {
  __m512i n[4];
  _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)
    n[k] = _mm512_xor_si512(
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(
                               (const __m256i *)VN_Q(x, 2 * k, nbv))),
                           _mm256_loadu_si256(
                               (const __m256i *)VN_Q(x, 2 * k + 1, nbv)),
                           1),
        _mm512_set1_epi8((char)0x80));
  vn_transpose(n, o->u);
  VN_SCALES(x, nbv, VN_NO_MIN, o);
}

/* ---- the K-quants: a unit is one super-block ---- */

/* 8 byte values, one per sub-block, times f, to their groups' lanes. */
VN_INLINE __m512 vn_sub_lanes(uint64_t v, float f) {
  return vn_pair_lanes(_mm256_mul_ps(
      _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)v))),
      _mm256_set1_ps(f)));
}

VN_INLINE void vn_dec_q4_k(const dq_block_q4_k *x, int nbv, vn_w *o) {
  (void)nbv; /* always 1 */
  const __m512i m4 = _mm512_set1_epi8(15);
  __m512i v0 = _mm512_loadu_si512(x->qs), v1 = _mm512_loadu_si512(x->qs + 64);
  /* lanes: lo0 groups 0 1 4 5, hi0 2 3 6 7, lo1 8 9 12 13, hi1 10 11 14 15 */
  __m512i lo0 = _mm512_and_si512(v0, m4);
  __m512i hi0 = _mm512_and_si512(_mm512_srli_epi16(v0, 4), m4);
  __m512i lo1 = _mm512_and_si512(v1, m4);
  __m512i hi1 = _mm512_and_si512(_mm512_srli_epi16(v1, 4), m4);
  __m512i n[4] = {_mm512_shuffle_i64x2(lo0, hi0, 0x44),
                  _mm512_shuffle_i64x2(lo0, hi0, 0xee),
                  _mm512_shuffle_i64x2(lo1, hi1, 0x44),
                  _mm512_shuffle_i64x2(lo1, hi1, 0xee)};
  vn_transpose(n, o->u);
  uint64_t sc, mn;
  vn_q4k_scales(x->scales, &sc, &mn);
  o->sc = vn_sub_lanes(sc, h2f(x->d));
  o->mn = vn_sub_lanes(mn, -h2f(x->dmin));
}

VN_INLINE void vn_dec_q6_k(const dq_block_q6_k *x, int nbv, vn_w *o) {
  (void)nbv; /* always 1 */
  const __m512i m4 = _mm512_set1_epi8(15);
  /* the qh bits of a ql byte's low nibble: bytes 0-31 (elements 0-31 of a
   * half) bits 0-1, bytes 32-63 (elements 32-63) bits 2-3, both to bits
   * 4-5; of its high nibble (elements 64-127) bits 4-5 and 6-7 */
  const __m512i m_lo = _mm512_inserti64x4(_mm512_set1_epi8(0x03),
                                          _mm256_set1_epi8(0x0c), 1);
  const __m512i m_hi = _mm512_inserti64x4(_mm512_set1_epi8(0x30),
                                          _mm256_set1_epi8((char)0xc0), 1);
  const __m512i sh_lo = _mm512_inserti64x4(_mm512_set1_epi16(4),
                                           _mm256_set1_epi16(2), 1);
  const __m512i sh_hi = _mm512_inserti64x4(_mm512_setzero_si512(),
                                           _mm256_set1_epi16(2), 1);
  __m512i n[4];
  for (int h = 0; h < 2; h++) {
    __m512i l = _mm512_loadu_si512(x->ql + 64 * h);
    __m512i q = _mm512_broadcast_i64x4(
        _mm256_loadu_si256((const __m256i *)(x->qh + 32 * h)));
    n[2 * h] = _mm512_or_si512(
        _mm512_and_si512(l, m4),
        _mm512_sllv_epi16(_mm512_and_si512(q, m_lo), sh_lo));
    n[2 * h + 1] = _mm512_or_si512(
        _mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
        _mm512_srlv_epi16(_mm512_and_si512(q, m_hi), sh_hi));
  }
  vn_transpose(n, o->u);
  __m512 s = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
      _mm_loadu_si128((const __m128i *)x->scales)));
  o->sc = _mm512_mul_ps(_mm512_permutexvar_ps(vn_groups(), s),
                        _mm512_set1_ps(h2f(x->d)));
  o->mn = _mm512_setzero_ps();
}

/* ---- the kernel ---- */

/* One (row, token) step over a unit. */
VN_INLINE __m512 vn_step(const vn_w *w, const vn_act *a, int has_min,
                         __m512 acc) {
  __m512i s = has_min ? _mm512_setzero_si512() : _mm512_loadu_si512(a->corr);
  _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++)
    s = _mm512_dpbusd_epi32(s, w->u[c], _mm512_loadu_si512(a->y[c]));
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s),
                        _mm512_mul_ps(w->sc, _mm512_loadu_ps(a->dy)), acc);
  if (has_min)
    acc = _mm512_fmadd_ps(w->mn, _mm512_loadu_ps(a->s), acc);
  return acc;
}

/* The sum of v's lanes: lane i + i + 8, then i + i + 4, i + i + 2, i + i + 1
 * (vn_hsum16 makes the same additions). */
VN_INLINE float vn_hsum(__m512 v) {
  __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                           _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}

/* The lane sums of 16 vectors at once: lane 4m + i of the result is
 * vn_hsum(v[4i + m]), by the same additions. */
VN_INLINE __m512 vn_hsum16(const __m512 *v) {
  __m512 z[8], w[4], u[2];
  for (int k = 0; k < 8; k++) /* 256-bit halves [v 2k | v 2k+1] */
    z[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44),
                         _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xee));
  for (int k = 0; k < 4; k++) /* 128-bit lane m: v[4k + m] */
    w[k] = _mm512_add_ps(_mm512_shuffle_f32x4(z[2 * k], z[2 * k + 1], 0x88),
                         _mm512_shuffle_f32x4(z[2 * k], z[2 * k + 1], 0xdd));
  for (int k = 0; k < 2; k++) /* lane m: [v[8k + m] x 2, v[8k + 4 + m] x 2] */
    u[k] = _mm512_add_ps(_mm512_shuffle_ps(w[2 * k], w[2 * k + 1], 0x44),
                         _mm512_shuffle_ps(w[2 * k], w[2 * k + 1], 0xee));
  return _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], 0x88),
                       _mm512_shuffle_ps(u[0], u[1], 0xdd));
}

/* The lane sums of 4 vectors, vn_hsum(v[m]) in element m, by the same
 * additions. */
VN_INLINE __m128 vn_hsum4(const __m512 *v) {
  __m512 z0 = _mm512_add_ps(_mm512_shuffle_f32x4(v[0], v[1], 0x44),
                            _mm512_shuffle_f32x4(v[0], v[1], 0xee));
  __m512 z1 = _mm512_add_ps(_mm512_shuffle_f32x4(v[2], v[3], 0x44),
                            _mm512_shuffle_f32x4(v[2], v[3], 0xee));
  /* 128-bit lane m: v[m]'s (i + i + 8) + (i + 4 + i + 12) */
  __m512 w = _mm512_add_ps(_mm512_shuffle_f32x4(z0, z1, 0x88),
                           _mm512_shuffle_f32x4(z0, z1, 0xdd));
  w = _mm512_add_ps(w, _mm512_shuffle_ps(w, w, 0x4e));
  w = _mm512_add_ps(w, _mm512_shuffle_ps(w, w, 0xb1));
  return _mm512_castps512_ps128(_mm512_permutexvar_ps(
      _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), w));
}

/* Token t's activations. */
VN_INLINE const vn_act *vn_row(const vn_act *a, size_t as, int64_t t) {
  return (const vn_act *)(const void *)((const uint8_t *)a + t * as);
}

/* The step over a half unit (gemm_vn.h), decoded by gemm_vn_avx2.h: lanes
 * 0-7 by its 256-bit step, lanes 8-15 unchanged. */
VN_INLINE __m512 vn_step_half(const vn2_w *w, const vn_act *a, int has_min,
                              __m512 acc) {
  return _mm512_insertf32x8(
      acc, vn2_step_half(w, a, has_min, _mm512_castps512_ps256(acc)), 0);
}

/* The rm x rn tile over a chunk's kc decoded units w[r][k], from unit k0;
 * hl: the last of them is a half unit, decoded into h[r]. */
VN_INLINE void vn_tile(const vn_w (*w)[VN_KC], const vn2_w *h, int rm, int rn,
                       int kc, int hl, const vn_act *a, size_t as, int64_t k0,
                       int has_min, int first, float *y, int64_t ys) {
  __m512 acc[VN_RM][VN_RN];
  _Pragma("GCC unroll 8") for (int r = 0; r < VN_RM; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < VN_RN; t++)
      acc[r][t] = _mm512_setzero_ps();
  for (int k = 0; k < kc - hl; k++)
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
      const vn_act *at = vn_row(a, as, t) + k0 + k;
      _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
        acc[r][t] = vn_step(&w[r][k], at, has_min, acc[r][t]);
    }
  if (hl)
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
      const vn_act *at = vn_row(a, as, t) + k0 + kc - 1;
      _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
        acc[r][t] = vn_step_half(&h[r], at, has_min, acc[r][t]);
    }
  if (rm == VN_RM) { /* v[4r + t] = acc[r][t]: lane 4t + r is row r, token t */
    __m512 v[16];
    _Pragma("GCC unroll 8") for (int r = 0; r < VN_RM; r++)
      _Pragma("GCC unroll 8") for (int t = 0; t < 4; t++)
        v[4 * r + t] = t < rn ? acc[r][t] : _mm512_setzero_ps();
    float s[16];
    _mm512_storeu_ps(s, vn_hsum16(v));
    for (int t = 0; t < rn; t++)
      for (int r = 0; r < VN_RM; r++)
        vn2_out(y + t * ys + r, s[4 * t + r], first);
    return;
  }
  for (int r = 0; r < rm; r++)
    for (int t = 0; t < rn; t++)
      vn2_out(y + t * ys + r, vn_hsum(acc[r][t]), first);
}

/* BPU: blocks per unit (8, or 1 for the K-quants, which have no half
 * units: DEC_HALF is then never called); RN: tokens per tile; nb: blocks
 * per row, nu: units per row, nf: full units (nu, or nu - 1 before a half
 * unit). */
#define DEF_GEMM_VN(NAME, WT, BPU, HAS_MIN, RN, DEC_HALF)                     \
  /* full unit k < nf of row x (nb blocks) */                                 \
  VN_INLINE void vn_unit_##NAME(const WT *x, int64_t nb, int64_t k,           \
                                vn_w *o) {                                    \
    if (nb - k * BPU >= BPU)                                                  \
      vn_dec_##NAME(x + k * BPU, BPU, o);                                     \
    else                                                                      \
      vn_dec_##NAME(x + k * BPU, (int)(nb - k * BPU), o);                     \
  }                                                                           \
  /* Unit k of row x into acc. */                                             \
  VN_INLINE __m512 vn_fly_unit_##NAME(const WT *x, int64_t nb, int64_t nf,    \
                                      int64_t k, const vn_act *a,             \
                                      __m512 acc) {                           \
    if (k < nf) {                                                             \
      vn_w d;                                                                 \
      VN_PREFETCH(x + k * BPU, BPU * sizeof(WT));                             \
      vn_unit_##NAME(x, nb, k, &d);                                           \
      return vn_step(&d, a + k, HAS_MIN, acc);                                \
    }                                                                         \
    vn2_w d;                                                                  \
    DEC_HALF(x + k * BPU, (int)(nb - k * BPU), &d);                           \
    return vn_step_half(&d, a + k, HAS_MIN, acc);                             \
  }                                                                           \
  /* rm rows (1 or VN_RM) from w against one token's a, decoded on the     \
   * fly, their lanes added together; inter: the rows' units interleaved */  \
  VN_INLINE void vn_fly_##NAME(const uint8_t *w, size_t wrb, int rm,          \
                               int inter, int64_t nb, int64_t nu, int64_t nf, \
                               const vn_act *a, float *y) {                   \
    for (int64_t k0 = 0; k0 < nu; k0 += VN_KC) {                              \
      int64_t k1 = k0 + VN_KC < nu ? k0 + VN_KC : nu;                         \
      __m512 acc[VN_RM];                                                      \
      _Pragma("GCC unroll 4") for (int r = 0; r < rm; r++)                    \
        acc[r] = _mm512_setzero_ps();                                         \
      if (inter)                                                              \
        for (int64_t k = k0; k < k1; k++)                                     \
          _Pragma("GCC unroll 4") for (int r = 0; r < rm; r++)                \
            acc[r] = vn_fly_unit_##NAME(                                      \
                (const WT *)(const void *)(w + r * wrb), nb, nf, k, a,        \
                acc[r]);                                                      \
      else                                                                    \
        _Pragma("GCC unroll 4") for (int r = 0; r < rm; r++)                  \
          for (int64_t k = k0; k < k1; k++)                                   \
            acc[r] = vn_fly_unit_##NAME(                                      \
                (const WT *)(const void *)(w + r * wrb), nb, nf, k, a,        \
                acc[r]);                                                      \
      if (rm == VN_RM)                                                        \
        vn2_out4(y, vn_hsum4(acc), k0 == 0);                                  \
      else                                                                    \
        vn2_out(y, vn_hsum(acc[0]), k0 == 0);                                 \
    }                                                                         \
  }                                                                           \
  static void gemm_vn_##NAME(int64_t n, const void *w, size_t wrb,            \
                             int64_t n_rows, const void *act, size_t as,      \
                             int64_t n_tok, float *y, int64_t ys) {           \
    int64_t nb = n / (VN_UNIT / BPU), nu = (nb + BPU - 1) / BPU;              \
    int64_t nf = BPU == 8 && vn_half_last(nb) ? nu - 1 : nu;                  \
    const vn_act *a = act;                                                    \
    if (n_tok < RN) { /* few tokens: decode on the fly, VN_RM rows at once */ \
      int64_t r = 0;                                                          \
      const uint8_t *wb = w;                                                  \
      for (; r + VN_RM <= n_rows; r += VN_RM)                                 \
        for (int64_t t = 0; t < n_tok; t++) {                                 \
          if (wrb <= VN_FLY_INTER_BYTES)                                      \
            vn_fly_##NAME(wb + r * wrb, wrb, VN_RM, 1, nb, nu, nf,            \
                          vn_row(a, as, t), y + t * ys + r);                  \
          else                                                                \
            vn_fly_##NAME(wb + r * wrb, wrb, VN_RM, 0, nb, nu, nf,            \
                          vn_row(a, as, t), y + t * ys + r);                  \
        }                                                                     \
      for (; r < n_rows; r++)                                                 \
        for (int64_t t = 0; t < n_tok; t++)                                   \
          vn_fly_##NAME(wb + r * wrb, wrb, 1, 0, nb, nu, nf,                  \
                        vn_row(a, as, t), y + t * ys + r);                    \
      return;                                                                 \
    }                                                                         \
    vn_w dw[VN_RM][VN_KC];                                                    \
    vn2_w dh[VN_RM];                                                          \
    for (int64_t r0 = 0; r0 < n_rows; r0 += VN_RM) {                          \
      int rm = n_rows - r0 < VN_RM ? (int)(n_rows - r0) : VN_RM;              \
      for (int64_t k0 = 0; k0 < nu; k0 += VN_KC) {                            \
        int kc = nu - k0 < VN_KC ? (int)(nu - k0) : VN_KC;                    \
        int hl = k0 + kc > nf; /* the chunk ends in the half unit */          \
        for (int r = 0; r < rm; r++) {                                        \
          const WT *x = (const WT *)((const uint8_t *)w + (r0 + r) * wrb);    \
          for (int k = 0; k < kc - hl; k++)                                   \
            vn_unit_##NAME(x, nb, k0 + k, &dw[r][k]);                         \
          if (hl)                                                             \
            DEC_HALF(x + nf * BPU, (int)(nb - nf * BPU), &dh[r]);             \
        }                                                                     \
        int64_t t = 0;                                                        \
        if (rm == VN_RM) { /* constant shapes: accumulators in registers */   \
          for (; t + RN <= n_tok; t += RN)                                    \
            vn_tile(dw, dh, VN_RM, RN, kc, hl, vn_row(a, as, t), as, k0,      \
                    HAS_MIN, k0 == 0, y + t * ys + r0, ys);                   \
          for (; t < n_tok; t++)                                              \
            vn_tile(dw, dh, VN_RM, 1, kc, hl, vn_row(a, as, t), as, k0,       \
                    HAS_MIN, k0 == 0, y + t * ys + r0, ys);                   \
        }                                                                     \
        for (; t < n_tok; t++)                                                \
          vn_tile(dw, dh, rm, 1, kc, hl, vn_row(a, as, t), as, k0, HAS_MIN,   \
                  k0 == 0, y + t * ys + r0, ys);                              \
      }                                                                       \
    }                                                                         \
  }

DEF_GEMM_VN(q4_0, dq_block_q4_0, 8, 0, 4, vn2_dec_half_q4_0)
DEF_GEMM_VN(q5_0, dq_block_q5_0, 8, 0, 4, vn2_dec_half_q5_0)
DEF_GEMM_VN(q8_0, dq_block_q8_0, 8, 0, 4, vn2_dec_half_q8_0)
DEF_GEMM_VN(q4_1, dq_block_q4_1, 8, 1, 4, vn2_dec_half_q4_1)
DEF_GEMM_VN(q5_1, dq_block_q5_1, 8, 1, 4, vn2_dec_half_q5_1)
DEF_GEMM_VN(q4_k, dq_block_q4_k, 1, 1, 3, vn2_dec_q4_k)
DEF_GEMM_VN(q6_k, dq_block_q6_k, 1, 0, 3, vn2_dec_q6_k)

const dq_gemm_u8_table dq_gemm_u8_avx512_table = {
    {
        [DQ_TYPE_Q4_0] = gemm_vn_q4_0,
        [DQ_TYPE_Q4_1] = gemm_vn_q4_1,
        [DQ_TYPE_Q5_0] = gemm_vn_q5_0,
        [DQ_TYPE_Q5_1] = gemm_vn_q5_1,
        [DQ_TYPE_Q8_0] = gemm_vn_q8_0,
        [DQ_TYPE_Q4_K] = gemm_vn_q4_k,
        [DQ_TYPE_Q6_K] = gemm_vn_q6_k,
    },
    VN_OFFSETS,
    vn2_prep, /* gemm_vn_avx2.h's: the layout is one */
    vn_act_bytes,
};
