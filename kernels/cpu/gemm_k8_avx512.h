/*
 * gemm_k8_avx512.h - matrix kernels for the 256-element K-quant weights
 * (Q4_K, Q6_K) against Q8_K activations on AVX-512 VNNI, for prefill and
 * decode alike. Included by vecdot_avx512.c after gemm_u8_avx512.h (whose
 * u8_out and u8_row it uses).
 *
 * A super-block's scales are per group of 16 elements (Q6_K; Q4_K's per 32
 * are two groups with the same scale), and a 512-bit vector has 16 int32
 * lanes. So the 256 codes are laid out as four vectors in which int32 lane
 * p always holds group G(p): vector c, lane p = elements 4c..4c+3 of group
 * G(p). Four vpdpbusd then sum each group's 16 products in its own lane,
 * exactly in int32, and one conversion and one FMA apply the groups'
 * scales for a whole super-block: per (row, token, super-block) that is 4
 * vpdpbusd, a conversion, a product of the row's lane scales by the
 * token's d and an FMA (Q4_K: one more FMA for its minima). The 4-token
 * vecdot_x86.h kernels, which these replace on this path, take 16
 * products and 16 adds for the codes alone.
 *
 * The layout is the one the codes unpack to with in-lane shuffles only:
 * natural vectors N_k whose 128-bit lane m is group 4k + m (Q6_K's
 * low/high nibbles of ql with their qh bits; Q4_K's nibbles after one
 * 128-bit shuffle per pair), transposed 4 x 4 by dwords within each lane,
 * so G(p) = 4 (p % 4) + p / 4. The activations get the same transpose once
 * per token (k8_prep), with each lane's group sum: -32 sum y for Q6_K,
 * whose codes are stored as u = q + 32 (the correction starts vpdpbusd's
 * accumulator), and d sum y for Q4_K's min terms, -dmin m S per lane.
 *
 * Prefill decodes each chunk of K8_KC super-blocks of K8_RM rows once per
 * 64-token tile into a buffer; fewer than K8_RN tokens decode on the fly.
 * A (row, token) result is the same sequence of operations either way and
 * whatever tile, thread or token count: a k-chunk summed in one 16-lane
 * accumulator, reduced, the chunks added in order. So batched and
 * one-token evaluation give the same bits. They differ from the scalar
 * reference and vecdot_x86.h in float order only.
 */

#define K8_RM 4 /* rows per tile */
#define K8_RN 3 /* tokens per tile */
#define K8_KC 8 /* super-blocks per k-chunk (2048 weights) */

/* One super-block of one token's activations. A token's row is its nsb
 * super-blocks, then their nsb scales d (floats). */
typedef struct k8_act {
  int8_t y[4][64];  /* codes, in the layout above */
  int32_t corr[16]; /* -32 * sum y of lane p's group (Q6_K) */
  float s[16];      /* d * sum y of lane p's group (Q4_K) */
} k8_act;

/* One super-block of one weight row, decoded. */
typedef struct k8_w {
  __m512i u[4]; /* unsigned codes (Q6_K: q + 32) */
  __m512 sc;    /* d * the scale of lane p's group */
  __m512 mn;    /* -dmin * the min of lane p's group (Q4_K) */
} k8_w;

#define K8_INLINE static inline __attribute__((always_inline))

/* N_k (lane m = group 4k + m) -> the layout: u[c] dword 4m + k = N_k
 * lane m dword c. */
K8_INLINE void k8_transpose(const __m512i *n, __m512i *u) {
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
K8_INLINE __m512i k8_groups(void) {
  return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
                           15);
}

/* Q4_K's 8 six-bit scales and minima (scales[12]) as bytes. */
K8_INLINE void k8_q4k_scales(const uint8_t *q, uint64_t *sc, uint64_t *mn) {
  uint32_t a = dq_le32(q), b = dq_le32(q + 4), c = dq_le32(q + 8);
  uint32_t s_hi = (c & 0x0f0f0f0f) | ((a >> 6) & 0x03030303) << 4;
  uint32_t m_hi = ((c >> 4) & 0x0f0f0f0f) | ((b >> 6) & 0x03030303) << 4;
  *sc = (uint64_t)(a & 0x3f3f3f3f) | (uint64_t)s_hi << 32;
  *mn = (uint64_t)(b & 0x3f3f3f3f) | (uint64_t)m_hi << 32;
}

/* 8 byte values (sub-blocks) times f, spread to the lanes of their groups
 * (sub-block G(p) / 2). */
K8_INLINE __m512 k8_sub_lanes(uint64_t v, float f) {
  __m256 s = _mm256_mul_ps(
      _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)v))),
      _mm256_set1_ps(f));
  return _mm512_permutexvar_ps(_mm512_srli_epi32(k8_groups(), 1),
                               _mm512_castps256_ps512(s));
}

K8_INLINE void k8_dec_q4_k(const dq_block_q4_k *x, k8_w *o) {
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
  k8_transpose(n, o->u);
  uint64_t sc, mn;
  k8_q4k_scales(x->scales, &sc, &mn);
  o->sc = k8_sub_lanes(sc, h2f(x->d));
  o->mn = k8_sub_lanes(mn, -h2f(x->dmin));
}

K8_INLINE void k8_dec_q6_k(const dq_block_q6_k *x, k8_w *o) {
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
  k8_transpose(n, o->u);
  __m512 s = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
      _mm_loadu_si128((const __m128i *)x->scales)));
  o->sc = _mm512_mul_ps(_mm512_permutexvar_ps(k8_groups(), s),
                        _mm512_set1_ps(h2f(x->d)));
  o->mn = _mm512_setzero_ps();
}

/* One (row, token) step over a super-block; q6: Q6_K (offset codes), else
 * Q4_K (minima). */
K8_INLINE __m512 k8_step(const k8_w *w, const k8_act *a, const float *dy,
                         int q6, __m512 acc) {
  __m512i s = q6 ? _mm512_loadu_si512(a->corr) : _mm512_setzero_si512();
  for (int c = 0; c < 4; c++)
    s = _mm512_dpbusd_epi32(s, w->u[c], _mm512_loadu_si512(a->y[c]));
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s),
                        _mm512_mul_ps(w->sc, _mm512_set1_ps(*dy)), acc);
  if (!q6)
    acc = _mm512_fmadd_ps(w->mn, _mm512_loadu_ps(a->s), acc);
  return acc;
}

/* Token t's row: its super-blocks, and their scales after them. */
K8_INLINE const k8_act *k8_row(const k8_act *a, size_t as, int64_t t) {
  return (const k8_act *)(const void *)((const uint8_t *)a + t * as);
}
K8_INLINE const float *k8_dy(const k8_act *a, int64_t nsb) {
  return (const float *)(const void *)(a + nsb);
}

/* The rm x rn tile over a chunk's kc decoded super-blocks w[r][k], from
 * super-block k0 of rows of nsb. */
K8_INLINE void k8_tile(const k8_w (*w)[K8_KC], int rm, int rn, int kc,
                       const k8_act *a, size_t as, int64_t k0, int64_t nsb,
                       int q6, int first, float *y, int64_t ys) {
  __m512 acc[K8_RM][K8_RN];
  _Pragma("GCC unroll 8") for (int r = 0; r < K8_RM; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < K8_RN; t++)
      acc[r][t] = _mm512_setzero_ps();
  for (int k = 0; k < kc; k++)
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
      const k8_act *at = k8_row(a, as, t);
      _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
        acc[r][t] = k8_step(&w[r][k], at + k0 + k, k8_dy(at, nsb) + k0 + k,
                            q6, acc[r][t]);
    }
  _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++)
      u8_out(y + t * ys + r, _mm512_reduce_add_ps(acc[r][t]), first);
}

#define DEF_GEMM_K8(NAME, WT, Q6)                                             \
  static void gemm_k8_##NAME(int64_t n, const void *w, size_t wrb,            \
                             int64_t n_rows, const void *act, size_t as,      \
                             int64_t n_tok, float *y, int64_t ys) {           \
    int64_t nsb = n / DQ_QK_K;                                                \
    const k8_act *a = act;                                                    \
    if (n_tok < K8_RN) { /* few tokens: decode on the fly */                  \
      for (int64_t r = 0; r < n_rows; r++) {                                  \
        const WT *x = (const WT *)((const uint8_t *)w + r * wrb);             \
        for (int64_t t = 0; t < n_tok; t++) {                                 \
          const k8_act *at = k8_row(a, as, t);                                \
          for (int64_t k0 = 0; k0 < nsb; k0 += K8_KC) {                       \
            int64_t k1 = k0 + K8_KC < nsb ? k0 + K8_KC : nsb;                 \
            __m512 acc = _mm512_setzero_ps();                                 \
            for (int64_t k = k0; k < k1; k++) {                               \
              k8_w d;                                                         \
              k8_dec_##NAME(x + k, &d);                                       \
              acc = k8_step(&d, at + k, k8_dy(at, nsb) + k, Q6, acc);         \
            }                                                                 \
            u8_out(y + t * ys + r, _mm512_reduce_add_ps(acc), k0 == 0);       \
          }                                                                   \
        }                                                                     \
      }                                                                       \
      return;                                                                 \
    }                                                                         \
    k8_w dw[K8_RM][K8_KC];                                                    \
    for (int64_t r0 = 0; r0 < n_rows; r0 += K8_RM) {                          \
      int rm = n_rows - r0 < K8_RM ? (int)(n_rows - r0) : K8_RM;              \
      for (int64_t k0 = 0; k0 < nsb; k0 += K8_KC) {                           \
        int kc = nsb - k0 < K8_KC ? (int)(nsb - k0) : K8_KC;                  \
        for (int r = 0; r < rm; r++) {                                        \
          const WT *x = (const WT *)((const uint8_t *)w + (r0 + r) * wrb);    \
          for (int k = 0; k < kc; k++)                                        \
            k8_dec_##NAME(x + k0 + k, &dw[r][k]);                             \
        }                                                                     \
        int64_t t = 0;                                                        \
        if (rm == K8_RM) { /* constant shapes: accumulators in registers */   \
          for (; t + K8_RN <= n_tok; t += K8_RN)                              \
            k8_tile(dw, K8_RM, K8_RN, kc, k8_row(a, as, t), as, k0, nsb, Q6,  \
                    k0 == 0, y + t * ys + r0, ys);                            \
          for (; t < n_tok; t++)                                              \
            k8_tile(dw, K8_RM, 1, kc, k8_row(a, as, t), as, k0, nsb, Q6,      \
                    k0 == 0, y + t * ys + r0, ys);                            \
        }                                                                     \
        for (; t < n_tok; t++)                                                \
          k8_tile(dw, rm, 1, kc, k8_row(a, as, t), as, k0, nsb, Q6, k0 == 0,  \
                  y + t * ys + r0, ys);                                       \
      }                                                                       \
    }                                                                         \
  }

DEF_GEMM_K8(q4_k, dq_block_q4_k, 0)
DEF_GEMM_K8(q6_k, dq_block_q6_k, 1)

/* One token's Q8_K row in the kernels' layout (off is unused: both weight
 * types take the same layout, so one preparation serves both). */
static void k8_prep(int64_t n, int act_type, const void *row, int off,
                    void *out) {
  (void)act_type;
  (void)off;
  int64_t nsb = n / DQ_QK_K;
  const dq_block_q8_k *x = row;
  k8_act *a = out;
  float *dy = (float *)(void *)(a + nsb);
  for (int64_t k = 0; k < nsb; k++) {
    __m512i v[4];
    for (int i = 0; i < 4; i++)
      v[i] = _mm512_loadu_si512(x[k].qs + 64 * i); /* lane m: group 4i + m */
    __m512i u[4];
    k8_transpose(v, u);
    for (int c = 0; c < 4; c++)
      _mm512_storeu_si512(a[k].y[c], u[c]);
    __m512i bs = _mm512_permutexvar_epi32(
        k8_groups(), _mm512_cvtepi16_epi32(
                         _mm256_loadu_si256((const __m256i *)x[k].bsums)));
    _mm512_storeu_si512(a[k].corr, _mm512_mullo_epi32(bs, _mm512_set1_epi32(-32)));
    _mm512_storeu_ps(a[k].s, _mm512_mul_ps(_mm512_cvtepi32_ps(bs),
                                           _mm512_set1_ps(x[k].d)));
    dy[k] = x[k].d;
  }
}

static size_t k8_act_bytes(int64_t n) {
  return (size_t)(n / DQ_QK_K) * (sizeof(k8_act) + sizeof(float));
}

const dq_gemm_u8_table dq_gemm_k8_avx512_table = {
    {[DQ_TYPE_Q4_K] = gemm_k8_q4_k, [DQ_TYPE_Q6_K] = gemm_k8_q6_k},
    {0},
    k8_prep,
    k8_act_bytes,
};
