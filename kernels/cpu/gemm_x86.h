/*
 * gemm_x86.h - register-blocked prefill kernels for the 32-element block
 * types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 weights against Q8_0/Q8_1
 * activations): a tile of GEMM_RM weight rows x GEMM_RN tokens keeps
 * GEMM_RM * GEMM_RN float accumulators in registers, so each weight block is
 * decoded once per GEMM_RN tokens and each activation block loaded once per
 * GEMM_RM rows. Included by vecdot_avx2.c (16 vector registers, small
 * tiles), which sets GEMM_RM/RN; defines static functions and the table
 * named by DQ_X86_GEMM_TABLE. The AVX-512 VNNI path uses
 * gemm_vnni_avx512.h instead.
 *
 * Not the decode path (one token: vecdot_x86.h's dot kernels, which are
 * bound by reading the weights). Activation block scales arrive already
 * converted to float (matmul.c does it once per call, not once per row).
 *
 * Every (row, token) result is computed by the same sequence of operations
 * whatever tile it falls in: one 8-lane accumulator, blocks in order,
 * acc = fma(float(isum) * dy, dx, acc) (+ fma(m, s, acc) in lane 0 for the
 * types with a min), then one horizontal sum. So results do not depend on
 * tile shape, thread count or token count; they differ from the scalar
 * reference (vecdot_ref.c) in float summation order only.
 */
/* Include after vecdot_x86.h (its helpers and decoders are used here). */

#ifndef GEMM_RM
#error "define GEMM_RM and GEMM_RN before including gemm_x86.h"
#endif

#define GEMM_INLINE static inline __attribute__((always_inline))

/* sgn = 1: signed weight codes (q8_0 activations, sign trick);
 * sgn = 0: unsigned codes with a per-block min m (q8_1 activations). */
#define DEF_GEMM(NAME, WT, YT, SGN, HAS_MIN)                                   \
  GEMM_INLINE void tile_##NAME(const int rm, const int rn, int64_t nb,        \
                               const uint8_t *w, size_t wrb,                  \
                               const uint8_t *a, size_t arb, const float *ad, \
                               const float *as, float *y, int64_t ys) {       \
    __m256 acc[GEMM_RM][GEMM_RN];                                             \
    _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)                      \
      _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++)                    \
        acc[r][t] = _mm256_setzero_ps();                                      \
    for (int64_t b = 0; b < nb; b++) {                                        \
      __m256i wq[GEMM_RM], aw[GEMM_RM];                                       \
      __m256 dx[GEMM_RM], mx[GEMM_RM];                                        \
      _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++) {                  \
        const WT *x = (const WT *)(w + (size_t)r * wrb) + b;                  \
        wq[r] = dec_##NAME(x);                                                \
        aw[r] = SGN ? _mm256_sign_epi8(wq[r], wq[r]) : wq[r];                 \
        dx[r] = _mm256_set1_ps(h2f(x->d));                                    \
        mx[r] = HAS_MIN ? _mm256_setr_ps(h2f(min_of_##NAME(x)), 0, 0, 0, 0,   \
                                         0, 0, 0)                             \
                        : _mm256_setzero_ps();                                \
      }                                                                       \
      _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {                  \
        const YT *yb = (const YT *)(a + (size_t)t * arb) + b;                 \
        __m256i yv = ld_y(yb->qs);                                            \
        __m256 dy = _mm256_broadcast_ss(ad + t * nb + b);                     \
        __m256 sy = HAS_MIN ? _mm256_broadcast_ss(as + t * nb + b)            \
                            : _mm256_setzero_ps();                            \
        _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++) {                \
          __m256i p = dot_u8s8(aw[r], SGN ? _mm256_sign_epi8(yv, wq[r]) : yv);\
          acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(p), dy),\
                                      dx[r], acc[r][t]);                      \
          if (HAS_MIN)                                                        \
            acc[r][t] = _mm256_fmadd_ps(mx[r], sy, acc[r][t]);                \
        }                                                                     \
      }                                                                       \
    }                                                                         \
    _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)                      \
      _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++)                    \
        y[t * ys + r] = hsum_ps(acc[r][t]);                                   \
  }                                                                           \
  static void gemm_##NAME(int64_t n, const void *w, size_t wrb,               \
                          int64_t n_rows, const void *a, size_t arb,          \
                          const float *ad, const float *as, int64_t n_tok,    \
                          float *y, int64_t ys) {                             \
    const uint8_t *wb = w, *abytes = a;                                       \
    int64_t nb = n / DQ_QK, r = 0;                                            \
    for (; r + GEMM_RM <= n_rows; r += GEMM_RM) {                             \
      int64_t t = 0;                                                          \
      for (; t + GEMM_RN <= n_tok; t += GEMM_RN)                              \
        tile_##NAME(GEMM_RM, GEMM_RN, nb, wb + r * wrb, wrb, abytes + t * arb,\
                    arb, ad + t * nb, as ? as + t * nb : NULL, y + t * ys + r,\
                    ys);                                                      \
      for (; t < n_tok; t++)                                                  \
        tile_##NAME(GEMM_RM, 1, nb, wb + r * wrb, wrb, abytes + t * arb, arb, \
                    ad + t * nb, as ? as + t * nb : NULL, y + t * ys + r, ys);\
    }                                                                         \
    for (; r < n_rows; r++)                                                   \
      for (int64_t t = 0; t < n_tok; t++)                                     \
        tile_##NAME(1, 1, nb, wb + r * wrb, wrb, abytes + t * arb, arb,       \
                    ad + t * nb, as ? as + t * nb : NULL, y + t * ys + r, ys);\
  }

static inline dq_f16 min_of_q4_1(const dq_block_q4_1 *x) { return x->m; }
static inline dq_f16 min_of_q5_1(const dq_block_q5_1 *x) { return x->m; }
static inline dq_f16 min_of_q4_0(const dq_block_q4_0 *x) { (void)x; return 0; }
static inline dq_f16 min_of_q5_0(const dq_block_q5_0 *x) { (void)x; return 0; }
static inline dq_f16 min_of_q8_0(const dq_block_q8_0 *x) { (void)x; return 0; }

DEF_GEMM(q4_0, dq_block_q4_0, dq_block_q8_0, 1, 0)
DEF_GEMM(q5_0, dq_block_q5_0, dq_block_q8_0, 1, 0)
DEF_GEMM(q8_0, dq_block_q8_0, dq_block_q8_0, 1, 0)
DEF_GEMM(q4_1, dq_block_q4_1, dq_block_q8_1, 0, 1)
DEF_GEMM(q5_1, dq_block_q5_1, dq_block_q8_1, 0, 1)

const dq_gemm_table DQ_X86_GEMM_TABLE = {{
    [DQ_TYPE_Q4_0] = gemm_q4_0,
    [DQ_TYPE_Q4_1] = gemm_q4_1,
    [DQ_TYPE_Q5_0] = gemm_q5_0,
    [DQ_TYPE_Q5_1] = gemm_q5_1,
    [DQ_TYPE_Q8_0] = gemm_q8_0,
}};
