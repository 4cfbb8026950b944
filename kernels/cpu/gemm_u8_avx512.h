/*
 * gemm_u8_avx512.h - matrix kernels for the 32-element block types (Q4_0,
 * Q4_1, Q5_0, Q5_1, Q8_0) on AVX-512 VNNI, two blocks per 512-bit vector,
 * for prefill and decode alike. Included by vecdot_avx512.c after
 * vecdot_x86.h (h2f).
 *
 * vpdpbusd multiplies unsigned by signed bytes. Weight codes are made
 * unsigned, u = q + off (off 8 for Q4_0, 16 for Q5_0, 128 for Q8_0; Q4_1
 * and Q5_1 codes are unsigned already, off 0), and the activations stay
 * signed, so
 *   sum u y - off sum y = sum q y, exactly, in int32,
 * with -off sum y (per int32 lane) computed once per token and block pair
 * (dq_gemm_u8_prep) and used as vpdpbusd's starting accumulator. Per (row,
 * token, block pair) that is vpdpbusd, a conversion, the scale product and
 * an FMA. Q4_1/Q5_1 add their min terms m S (S = the activation block's
 * d sum y): those of a k-chunk's blocks as one 16-lane dot product per
 * (row, token), added before the lanes are (with a second FMA per step
 * instead, SmolLM2-135M's pp512 was 13% slower). The offset types keep
 * the exact integer correction, which costs no arithmetic: computed as
 * -off dx S block terms the same way, Gemma 3's Q5_0 products were ~10%
 * slower (its rows are only 10 block pairs long).
 *
 * Lane layout of a block pair (blocks b, b + 1): bytes [elements 0-15 of b,
 * 0-15 of b + 1, 16-31 of b, 16-31 of b + 1], which is how 4-bit codes
 * unpack (low nibbles, then high nibbles of both blocks' 16 bytes); int32
 * lanes 0-3 and 8-11 belong to b, 4-7 and 12-15 to b + 1. A missing second
 * block (odd count) is zero codes, zero activations and zero scales.
 *
 * Prefill decodes each chunk of weight rows once per 64-token tile into a
 * buffer; one token decodes on the fly. A (row, token) result is the same
 * sequence of operations either way and whatever tile, thread or token
 * count: the sum over a k-chunk of U8_KCP pairs in one accumulator, reduced
 * in a fixed order, the chunks added in order. So batched and one-token
 * evaluation give the same bits. The results differ from vecdot_x86.h's
 * kernels and the scalar reference in float order only.
 */

#define U8_RM 4   /* rows per tile */
#define U8_RN 3   /* tokens per tile */
#define U8_KCP 32 /* block pairs per k-chunk (2048 weights) */

/* One block pair of one token's activations (dq_gemm_u8_prep). A token's
 * row is its np pairs, then its nb block sums S (floats, 2 np of them, the
 * missing block of an odd count 0; read by the min types). */
typedef struct u8_act {
  int8_t y[64];
  float dy[16];     /* block scales per lane */
  int32_t corr[16]; /* -off * sum of the lane's 4 activations */
} u8_act;

/* One block pair of one weight row, decoded; the min types' two block
 * minima go to a per-row array of the chunk. */
typedef struct u8_w {
  __m512i u;
  __m512 dx;
} u8_w;

#define U8_INLINE static inline __attribute__((always_inline))

/* Two halves per block (d and, for the min types, m) to per-lane scales
 * dx and, for the min types, the blocks' minima c. */
U8_INLINE void u8_scales(dq_f16 d0, dq_f16 d1, dq_f16 m0, dq_f16 m1,
                         int has_min, __m512 *dx, float *c) {
  __m128 v = _mm_cvtph_ps(_mm_cvtsi64_si128(
      (long long)((uint64_t)d0 | (uint64_t)d1 << 16 | (uint64_t)m0 << 32 |
                  (uint64_t)m1 << 48)));
  const __m512i id = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1,
                                       1, 1, 1);
  *dx = _mm512_permutexvar_ps(id, _mm512_castps128_ps512(v));
  if (has_min) {
    float f[4];
    _mm_storeu_ps(f, v);
    c[0] = f[2];
    c[1] = f[3];
  }
}

/* 16 code bytes of each block -> 64 nibbles in pair order. */
U8_INLINE __m512i u8_nibbles(const uint8_t *q0, const uint8_t *q1) {
  __m256i t = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)q0)),
      _mm_loadu_si128((const __m128i *)q1), 1);
  __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(t),
                                 _mm256_srli_epi16(t, 4), 1);
  return _mm512_and_si512(z, _mm512_set1_epi8(15));
}

/* The fifth bits (qh, bit j = element j) of both blocks in pair order. */
U8_INLINE __mmask64 u8_bit5(uint32_t h0, uint32_t h1) {
  return (__mmask64)((uint64_t)(h0 & 0xffff) | (uint64_t)(h1 & 0xffff) << 16 |
                     (uint64_t)(h0 >> 16) << 32 | (uint64_t)(h1 >> 16) << 48);
}

U8_INLINE void u8_dec_q4_0(const dq_block_q4_0 *x, int two, u8_w *o,
                            float *c) {
  static const uint8_t zero[16] = {0};
  const uint8_t *q1 = two ? x[1].qs : zero;
  /* a missing block: codes 0 (its activations and scale are 0 too) */
  o->u = u8_nibbles(x[0].qs, q1);
  u8_scales(x[0].d, two ? x[1].d : 0, 0, 0, 0, &o->dx, c);
}
U8_INLINE void u8_dec_q4_1(const dq_block_q4_1 *x, int two, u8_w *o,
                            float *c) {
  static const uint8_t zero[16] = {0};
  o->u = u8_nibbles(x[0].qs, two ? x[1].qs : zero);
  u8_scales(x[0].d, two ? x[1].d : 0, x[0].m, two ? x[1].m : 0, 1, &o->dx,
            c);
}
U8_INLINE void u8_dec_q5_0(const dq_block_q5_0 *x, int two, u8_w *o,
                            float *c) {
  static const uint8_t zero[16] = {0};
  uint32_t h0 = dq_le32(x[0].qh), h1 = two ? dq_le32(x[1].qh) : 0;
  __m512i u = u8_nibbles(x[0].qs, two ? x[1].qs : zero);
  o->u = _mm512_mask_or_epi32(u, 0xffff, u,
                              _mm512_maskz_mov_epi8(u8_bit5(h0, h1),
                                                    _mm512_set1_epi8(16)));
  u8_scales(x[0].d, two ? x[1].d : 0, 0, 0, 0, &o->dx, c);
}
U8_INLINE void u8_dec_q5_1(const dq_block_q5_1 *x, int two, u8_w *o,
                            float *c) {
  static const uint8_t zero[16] = {0};
  uint32_t h0 = dq_le32(x[0].qh), h1 = two ? dq_le32(x[1].qh) : 0;
  __m512i u = u8_nibbles(x[0].qs, two ? x[1].qs : zero);
  o->u = _mm512_or_si512(u, _mm512_maskz_mov_epi8(u8_bit5(h0, h1),
                                                  _mm512_set1_epi8(16)));
  u8_scales(x[0].d, two ? x[1].d : 0, x[0].m, two ? x[1].m : 0, 1, &o->dx,
            c);
}
U8_INLINE void u8_dec_q8_0(const dq_block_q8_0 *x, int two, u8_w *o,
                            float *c) {
  __m256i a = _mm256_loadu_si256((const __m256i *)x[0].qs);
  /* a missing block: q = -128, u = 0 */
  __m256i b = two ? _mm256_loadu_si256((const __m256i *)x[1].qs)
                  : _mm256_set1_epi8((char)0x80);
  /* 64-bit lanes [a0 a1 b0 b1 a2 a3 b2 b3] */
  __m512i z = _mm512_permutex2var_epi64(
      _mm512_castsi256_si512(a), _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11),
      _mm512_castsi256_si512(b));
  o->u = _mm512_xor_si512(z, _mm512_set1_epi8((char)0x80));
  u8_scales(x[0].d, two ? x[1].d : 0, 0, 0, 0, &o->dx, c);
}

/* One (row, token) step over a block pair. */
U8_INLINE __m512 u8_step(const u8_w *w, const u8_act *a, int has_min,
                         __m512 acc) {
  __m512i s = _mm512_dpbusd_epi32(has_min ? _mm512_setzero_si512()
                                          : _mm512_loadu_si512(a->corr),
                                  w->u, _mm512_loadu_si512(a->y));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s),
                         _mm512_mul_ps(w->dx, _mm512_loadu_ps(a->dy)), acc);
}

/* A token's block sums S (after its np pairs). */
U8_INLINE const float *u8_sums(const u8_act *a, int64_t np) {
  return (const float *)(const void *)(a + np);
}

/* acc + the min terms c S of a chunk's nbk blocks, 16 at a time. */
U8_INLINE __m512 u8_cterms(const float *c, const float *S, int nbk,
                           __m512 acc) {
  __m512 m = _mm512_setzero_ps();
  for (int i = 0; i < nbk; i += 16) {
    __mmask16 k = nbk - i >= 16 ? (__mmask16)0xffff
                                : (__mmask16)((1u << (nbk - i)) - 1);
    m = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, c + i),
                        _mm512_maskz_loadu_ps(k, S + i), m);
  }
  return _mm512_add_ps(acc, m);
}

U8_INLINE void u8_out(float *y, float v, int first) {
  if (first)
    *y = v;
  else
    *y += v;
}

/* Token t's row of activations. */
U8_INLINE const u8_act *u8_row(const u8_act *a, size_t as, int64_t t) {
  return (const u8_act *)(const void *)((const uint8_t *)a + t * as);
}

/* The rm x rn tile over a chunk's kp decoded pairs w[r][p] (c[r]: their
 * blocks' c), pairs from p0 of rows of np pairs and nb blocks. */
U8_INLINE void u8_tile(const u8_w (*w)[U8_KCP], const float (*c)[2 * U8_KCP],
                       int rm, int rn, int kp, const u8_act *a, size_t as,
                       int64_t p0, int64_t np, int nbk, int has_min, int first,
                       float *y, int64_t ys) {
  __m512 acc[U8_RM][U8_RN];
  _Pragma("GCC unroll 8") for (int r = 0; r < U8_RM; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < U8_RN; t++)
      acc[r][t] = _mm512_setzero_ps();
  for (int p = 0; p < kp; p++)
    _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
      _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++)
        acc[r][t] = u8_step(&w[r][p], u8_row(a, as, t) + p0 + p, has_min,
                            acc[r][t]);
  _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
      if (has_min)
        acc[r][t] = u8_cterms(c[r], u8_sums(u8_row(a, as, t), np) + 2 * p0,
                              nbk, acc[r][t]);
      u8_out(y + t * ys + r, _mm512_reduce_add_ps(acc[r][t]), first);
    }
}

#define DEF_GEMM_U8(NAME, WT, HAS_MIN)                                        \
  static void gemm_u8_##NAME(int64_t n, const void *w, size_t wrb,            \
                             int64_t n_rows, const void *act, size_t as,      \
                             int64_t n_tok, float *y, int64_t ys) {           \
    int64_t nb = n / DQ_QK, np = (nb + 1) / 2;                                \
    const u8_act *a = act;                                                    \
    if (n_tok < U8_RN) { /* few tokens: decode on the fly */                  \
      float c[2 * U8_KCP];                                                    \
      for (int64_t r = 0; r < n_rows; r++) {                                  \
        const WT *x = (const WT *)((const uint8_t *)w + r * wrb);             \
        for (int64_t t = 0; t < n_tok; t++) {                                 \
          const u8_act *at = u8_row(a, as, t);                                \
          for (int64_t p0 = 0; p0 < np; p0 += U8_KCP) {                       \
            int64_t p1 = p0 + U8_KCP < np ? p0 + U8_KCP : np;                 \
            __m512 acc = _mm512_setzero_ps();                                 \
            for (int64_t p = p0; p < p1; p++) {                               \
              u8_w d;                                                         \
              u8_dec_##NAME(x + 2 * p, 2 * p + 1 < nb, &d, c + 2 * (p - p0)); \
              acc = u8_step(&d, at + p, HAS_MIN, acc);                        \
            }                                                                 \
            int nbk = (int)((nb - 2 * p0 < 2 * U8_KCP) ? nb - 2 * p0          \
                                                       : 2 * U8_KCP);         \
            if (HAS_MIN)                                                      \
              acc = u8_cterms(c, u8_sums(at, np) + 2 * p0, nbk, acc);         \
            u8_out(y + t * ys + r, _mm512_reduce_add_ps(acc), p0 == 0);       \
          }                                                                   \
        }                                                                     \
      }                                                                       \
      return;                                                                 \
    }                                                                         \
    u8_w dw[U8_RM][U8_KCP];                                                   \
    float c[U8_RM][2 * U8_KCP];                                               \
    for (int64_t r0 = 0; r0 < n_rows; r0 += U8_RM) {                          \
      int rm = n_rows - r0 < U8_RM ? (int)(n_rows - r0) : U8_RM;              \
      for (int64_t p0 = 0; p0 < np; p0 += U8_KCP) {                           \
        int kp = np - p0 < U8_KCP ? (int)(np - p0) : U8_KCP;                  \
        int nbk = (int)((nb - 2 * p0 < 2 * U8_KCP) ? nb - 2 * p0              \
                                                   : 2 * U8_KCP);             \
        for (int r = 0; r < rm; r++) {                                        \
          const WT *x = (const WT *)((const uint8_t *)w + (r0 + r) * wrb);    \
          for (int p = 0; p < kp; p++) {                                      \
            int64_t b = 2 * (p0 + p);                                         \
            u8_dec_##NAME(x + b, b + 1 < nb, &dw[r][p], &c[r][2 * p]);        \
          }                                                                   \
        }                                                                     \
        int64_t t = 0;                                                        \
        /* constant tile shapes where possible, so the tile inlines with    \
         * its accumulators in registers */                                   \
        if (rm == U8_RM) {                                                    \
          for (; t + U8_RN <= n_tok; t += U8_RN)                              \
            u8_tile(dw, c, U8_RM, U8_RN, kp, u8_row(a, as, t), as, p0, np,    \
                    nbk, HAS_MIN, p0 == 0, y + t * ys + r0, ys);              \
          for (; t < n_tok; t++)                                              \
            u8_tile(dw, c, U8_RM, 1, kp, u8_row(a, as, t), as, p0, np, nbk,   \
                    HAS_MIN, p0 == 0, y + t * ys + r0, ys);                   \
        }                                                                     \
        for (; t < n_tok; t++)                                                \
          u8_tile(dw, c, rm, 1, kp, u8_row(a, as, t), as, p0, np, nbk,        \
                  HAS_MIN, p0 == 0, y + t * ys + r0, ys);                     \
      }                                                                       \
    }                                                                         \
  }

DEF_GEMM_U8(q4_0, dq_block_q4_0, 0)
DEF_GEMM_U8(q5_0, dq_block_q5_0, 0)
DEF_GEMM_U8(q8_0, dq_block_q8_0, 0)
DEF_GEMM_U8(q4_1, dq_block_q4_1, 1)
DEF_GEMM_U8(q5_1, dq_block_q5_1, 1)

/* One token's activation row (Q8_0 or Q8_1 blocks) in the kernels' layout:
 * np pairs, then the blocks' sums S (Q8_1's s = d sum y; 0 for Q8_0 rows,
 * which go with the offset types, which read no S); off = the weight
 * type's code offset (0 for the min types). */
static void u8_prep(int64_t n, int act_type, const void *row, int off,
                    void *out) {
  int64_t nb = n / DQ_QK, np = (nb + 1) / 2;
  u8_act *a = out;
  float *S = (float *)(void *)(a + np);
  const __m512i offv = _mm512_set1_epi8((char)off);
  for (int64_t p = 0; p < np; p++) {
    int8_t q[2][32] = {{0}};
    float d[2] = {0, 0};
    S[2 * p + 1] = 0;
    for (int k = 0; k < 2 && 2 * p + k < nb; k++) {
      int64_t b = 2 * p + k;
      if (act_type == DQ_TYPE_Q8_1) {
        const dq_block_q8_1 *x = (const dq_block_q8_1 *)row + b;
        memcpy(q[k], x->qs, 32);
        d[k] = h2f(x->d);
        S[b] = h2f(x->s);
      } else {
        const dq_block_q8_0 *x = (const dq_block_q8_0 *)row + b;
        memcpy(q[k], x->qs, 32);
        d[k] = h2f(x->d);
        S[b] = 0;
      }
    }
    memcpy(a[p].y, q[0], 16);
    memcpy(a[p].y + 16, q[1], 16);
    memcpy(a[p].y + 32, q[0] + 16, 16);
    memcpy(a[p].y + 48, q[1] + 16, 16);
    for (int l = 0; l < 16; l++)
      a[p].dy[l] = d[(l / 4) % 2];
    /* -off * (sum of each lane's 4 activations) */
    __m512i sum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), offv,
                                      _mm512_loadu_si512(a[p].y));
    _mm512_storeu_si512(a[p].corr, _mm512_sub_epi32(_mm512_setzero_si512(), sum));
  }
}

static size_t u8_act_bytes(int64_t n) {
  int64_t np = (n / DQ_QK + 1) / 2;
  return (size_t)np * (sizeof(u8_act) + 2 * sizeof(float));
}

const dq_gemm_u8_table dq_gemm_u8_avx512_table = {
    {
        [DQ_TYPE_Q4_0] = gemm_u8_q4_0,
        [DQ_TYPE_Q4_1] = gemm_u8_q4_1,
        [DQ_TYPE_Q5_0] = gemm_u8_q5_0,
        [DQ_TYPE_Q5_1] = gemm_u8_q5_1,
        [DQ_TYPE_Q8_0] = gemm_u8_q8_0,
    },
    {[DQ_TYPE_Q4_0] = 8, [DQ_TYPE_Q5_0] = 16, [DQ_TYPE_Q8_0] = 128},
    u8_prep,
    u8_act_bytes,
};
