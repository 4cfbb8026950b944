/*
 * gemm_u8_avx512.h - prefill kernels for the 32-element block types (Q4_0,
 * Q4_1, Q5_0, Q5_1, Q8_0) on AVX-512 VNNI, two blocks per 512-bit vector.
 * Included by vecdot_avx512.c after vecdot_x86.h (block decoders, h2f).
 *
 * vpdpbusd multiplies unsigned by signed bytes, so instead of the sign
 * trick per (row, token, block) the activations come offset to unsigned,
 * u = y + 128 (matmul.c makes these rows once per call, with each block
 * pair's two scales spread over the pair's 8 + 8 int32 lanes), and every
 * weight row chunk is decoded once per call into signed codes w (weight =
 * d w, plus m for Q4_1/Q5_1) with -128 sum(w) per lane:
 *   sum (y + 128) w - 128 sum w = sum y w, exactly, in int32,
 * by starting vpdpbusd's accumulator at -128 sum w. Per (row, token, block
 * pair) that leaves vpdpbusd, a conversion, the scale product and an FMA.
 * Q4_1/Q5_1's min terms m * s (s = the activation block's d * sum y) are a
 * dot product over blocks, done 16 blocks per vector after the main loop.
 *
 * A (row, token) result is computed by the same operations whatever tile,
 * chunk or thread it falls in (k-chunks at fixed block offsets, each
 * reduced in a fixed order and added in chunk order), so results do not
 * depend on tile shape, thread or token count. They differ from
 * vecdot_x86.h's kernels and the scalar reference in float order only.
 */

#define U8_RM 4       /* rows per tile */
#define U8_RN 3       /* tokens per tile */
#define U8_KCP 32     /* block pairs per k-chunk (64 blocks, 2048 weights) */

typedef struct u8_chunk {
  __m512i w[U8_RM][U8_KCP];   /* signed codes, two blocks per vector */
  __m512i nw[U8_RM][U8_KCP];  /* -128 * sum of codes, per int32 lane */
  __m512 dx[U8_RM][U8_KCP];   /* block scales, 8 lanes each */
  float m[U8_RM][2 * U8_KCP]; /* block mins (types with a min) */
} u8_chunk;

#define U8_INLINE static inline __attribute__((always_inline))

/* The rm x rn tile's sums over the chunk's kp pairs: y[t][r] (first chunk)
 * or += (later ones). */
U8_INLINE void u8_tile(const u8_chunk *c, int rm, int rn, int kp,
                       const uint8_t *yu, size_t yus, const float *dy,
                       size_t dys, const float *as, int64_t nb, int64_t b0,
                       int has_min, int first, float *y, int64_t ys) {
  __m512 acc[U8_RM][U8_RN];
  _Pragma("GCC unroll 8") for (int r = 0; r < U8_RM; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < U8_RN; t++)
      acc[r][t] = _mm512_setzero_ps();
  for (int p = 0; p < kp; p++) {
    __m512i yv[U8_RN];
    __m512 dyv[U8_RN];
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
      yv[t] = _mm512_loadu_si512(yu + t * yus + (size_t)p * 64);
      dyv[t] = _mm512_loadu_ps(dy + t * dys + (size_t)p * 16);
    }
    _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++) {
      __m512i w = c->w[r][p], nw = c->nw[r][p];
      __m512 dx = c->dx[r][p];
      _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
        __m512i s = _mm512_dpbusd_epi32(nw, yv[t], w);
        acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s),
                                    _mm512_mul_ps(dx, dyv[t]), acc[r][t]);
      }
    }
  }
  _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
      float v = _mm512_reduce_add_ps(acc[r][t]);
      if (has_min) {
        /* sum over the chunk's blocks of m * s, 16 blocks per vector */
        int nbk = (int)(nb - b0 < 2 * kp ? nb - b0 : 2 * kp);
        __m512 mm = _mm512_setzero_ps();
        for (int b = 0; b < nbk; b += 16) {
          __mmask16 k = (__mmask16)(nbk - b >= 16 ? 0xffff
                                                  : (1u << (nbk - b)) - 1);
          mm = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, c->m[r] + b),
                               _mm512_maskz_loadu_ps(k, as + t * nb + b0 + b),
                               mm);
        }
        v += _mm512_reduce_add_ps(mm);
      }
      if (first)
        y[t * ys + r] = v;
      else
        y[t * ys + r] += v;
    }
}

#define DEF_GEMM_U8(NAME, WT, HAS_MIN, MIN_OF)                                 \
  static void gemm_u8_##NAME(int64_t n, const void *w, size_t wrb,            \
                             int64_t n_rows, const uint8_t *yu, size_t yus,   \
                             const float *dy, size_t dys, const float *as,    \
                             int64_t n_tok, float *y, int64_t ys) {           \
    u8_chunk c;                                                               \
    int64_t nb = n / DQ_QK, np = (nb + 1) / 2;                                \
    const __m512i off = _mm512_set1_epi8((char)0x80);                         \
    for (int64_t r0 = 0; r0 < n_rows; r0 += U8_RM) {                          \
      int rm = n_rows - r0 < U8_RM ? (int)(n_rows - r0) : U8_RM;              \
      for (int64_t p0 = 0; p0 < np; p0 += U8_KCP) {                           \
        int kp = np - p0 < U8_KCP ? (int)(np - p0) : U8_KCP;                  \
        for (int r = 0; r < rm; r++) {                                        \
          const WT *x = (const WT *)((const uint8_t *)w + (r0 + r) * wrb);    \
          for (int p = 0; p < kp; p++) {                                      \
            int64_t b = 2 * (p0 + p);                                         \
            __m256i lo = dec_##NAME(x + b), hi = _mm256_setzero_si256();      \
            float d0 = h2f(x[b].d), d1 = 0.0f;                                \
            if (HAS_MIN)                                                      \
              c.m[r][2 * p] = h2f(MIN_OF(x + b));                             \
            if (b + 1 < nb) {                                                 \
              hi = dec_##NAME(x + b + 1);                                     \
              d1 = h2f(x[b + 1].d);                                           \
              if (HAS_MIN)                                                    \
                c.m[r][2 * p + 1] = h2f(MIN_OF(x + b + 1));                   \
            }                                                                 \
            __m512i wv = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);\
            c.w[r][p] = wv;                                                   \
            c.nw[r][p] = _mm512_sub_epi32(                                    \
                _mm512_setzero_si512(),                                       \
                _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, wv));        \
            c.dx[r][p] = _mm512_insertf32x8(                                  \
                _mm512_set1_ps(d0), _mm256_set1_ps(d1), 1);                   \
          }                                                                   \
        }                                                                     \
        const uint8_t *yc = yu + p0 * 64;                                     \
        const float *dc = dy + p0 * 16;                                       \
        int64_t b0 = 2 * p0;                                                  \
        int64_t t = 0;                                                        \
        /* constant tile shapes where possible, so the tile inlines with    \
         * its accumulators in registers */                                   \
        if (rm == U8_RM) {                                                    \
          for (; t + U8_RN <= n_tok; t += U8_RN)                              \
            u8_tile(&c, U8_RM, U8_RN, kp, yc + t * yus, yus, dc + t * dys,    \
                    dys, as ? as + t * nb : NULL, nb, b0, HAS_MIN, p0 == 0,   \
                    y + t * ys + r0, ys);                                     \
          for (; t < n_tok; t++)                                              \
            u8_tile(&c, U8_RM, 1, kp, yc + t * yus, yus, dc + t * dys, dys,   \
                    as ? as + t * nb : NULL, nb, b0, HAS_MIN, p0 == 0,        \
                    y + t * ys + r0, ys);                                     \
        }                                                                     \
        for (; t < n_tok; t++)                                                \
          u8_tile(&c, rm, 1, kp, yc + t * yus, yus, dc + t * dys, dys,        \
                  as ? as + t * nb : NULL, nb, b0, HAS_MIN, p0 == 0,          \
                  y + t * ys + r0, ys);                                       \
      }                                                                       \
    }                                                                         \
  }

static inline dq_f16 u8_min_q4_1(const dq_block_q4_1 *x) { return x->m; }
static inline dq_f16 u8_min_q5_1(const dq_block_q5_1 *x) { return x->m; }
static inline dq_f16 u8_min_none(const void *x) { (void)x; return 0; }

DEF_GEMM_U8(q4_0, dq_block_q4_0, 0, u8_min_none)
DEF_GEMM_U8(q5_0, dq_block_q5_0, 0, u8_min_none)
DEF_GEMM_U8(q8_0, dq_block_q8_0, 0, u8_min_none)
DEF_GEMM_U8(q4_1, dq_block_q4_1, 1, u8_min_q4_1)
DEF_GEMM_U8(q5_1, dq_block_q5_1, 1, u8_min_q5_1)

const dq_gemm_u8_table dq_gemm_u8_avx512_table = {{
    [DQ_TYPE_Q4_0] = gemm_u8_q4_0,
    [DQ_TYPE_Q4_1] = gemm_u8_q4_1,
    [DQ_TYPE_Q5_0] = gemm_u8_q5_0,
    [DQ_TYPE_Q5_1] = gemm_u8_q5_1,
    [DQ_TYPE_Q8_0] = gemm_u8_q8_0,
}};
