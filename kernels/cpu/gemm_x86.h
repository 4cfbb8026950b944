/*
 * gemm_x86.h - the register-blocked prefill kernel for Q8_0 weights
 * (against Q8_0 activations) on AVX2 without VNNI, the one type that
 * gemm_vn_avx2.h leaves out there: Q8_0's codes made unsigned would
 * saturate vpmaddubsw's pair sums, so this keeps the sign trick
 * (|w| x (y with w's sign)). A tile of GEMM_RM weight rows x GEMM_RN
 * tokens keeps GEMM_RM * GEMM_RN float accumulators in registers, so each
 * weight block is loaded once per GEMM_RN tokens and each activation block
 * once per GEMM_RM rows. Included by vecdot_avx2.c after vecdot_x86.h,
 * which sets GEMM_RM/RN; defines static functions and the table named by
 * DQ_X86_GEMM_TABLE. Decode (one token) runs it too, as a 1 x 1 tile.
 * Activation block scales arrive already converted to float (matmul.c does
 * it once per call, not once per row).
 *
 * Every (row, token) result is computed by the same sequence of operations
 * whatever tile it falls in: one 8-lane accumulator, blocks in order,
 * acc = fma(float(isum) * dy, dx, acc), then one horizontal sum. So results
 * do not depend on tile shape, thread count or token count; they differ
 * from the scalar reference (vecdot_ref.c) in float summation order only.
 */

#ifndef GEMM_RM
#error "define GEMM_RM and GEMM_RN before including gemm_x86.h"
#endif

#define GEMM_INLINE static inline __attribute__((always_inline))

/* Rows r < rm (row r at w + r * wrs, its outputs at y + r * yrs) against
 * tokens t < rn (outputs at + t * ys). */
GEMM_INLINE void tile_q8_0(const int rm, const int rn, int64_t nb,
                           const uint8_t *w, size_t wrs, const uint8_t *a,
                           size_t arb, const float *ad, float *y, int64_t ys,
                           int64_t yrs) {
  __m256 acc[GEMM_RM][GEMM_RN];
  _Pragma("GCC unroll 8") for (int r = 0; r < GEMM_RM; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < GEMM_RN; t++)
      acc[r][t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; b++) {
    __m256i wq[GEMM_RM], aw[GEMM_RM];
    __m256 dx[GEMM_RM];
    _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++) {
      const dq_block_q8_0 *x = (const dq_block_q8_0 *)(w + (size_t)r * wrs) + b;
      wq[r] = dec_q8_0(x);
      aw[r] = _mm256_sign_epi8(wq[r], wq[r]);
      dx[r] = _mm256_set1_ps(h2f(x->d));
    }
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++) {
      const dq_block_q8_0 *yb = (const dq_block_q8_0 *)(a + (size_t)t * arb) + b;
      __m256i yv = ld_y(yb->qs);
      __m256 dy = _mm256_broadcast_ss(ad + t * nb + b);
      _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++) {
        __m256i p = dot_u8s8(aw[r], _mm256_sign_epi8(yv, wq[r]));
        acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(p), dy),
                                    dx[r], acc[r][t]);
      }
    }
  }
  _Pragma("GCC unroll 8") for (int r = 0; r < rm; r++)
    _Pragma("GCC unroll 8") for (int t = 0; t < rn; t++)
      y[t * ys + r * yrs] = hsum_ps(acc[r][t]);
}

/* Fewer tokens than a tile (decode) pair row q with row q + n_rows / 2:
 * two sequential streams through the weights. Pairs of adjacent rows read
 * memory at 7.3 GB/s on the Zen 4 VM against 26.6 (bench_mm --stream
 * --isa avx2, Gemma 3's 640 x 262144 output head; one sequential row at a
 * time 20.5, its FMA chain the limit), the hardware prefetchers keeping
 * too few lines in flight. */
static void gemm_q8_0(int64_t n, const void *w, size_t wrb, int64_t n_rows,
                      const void *a, size_t arb, const float *ad,
                      const float *as, int64_t n_tok, float *y, int64_t ys) {
  (void)as; /* Q8_0 activations have no sums */
  const uint8_t *wb = w, *abytes = a;
  int64_t nb = n / DQ_QK, r = 0;
  if (n_tok < GEMM_RN) {
    int64_t h = n_rows / 2;
    for (int64_t q = 0; q < h; q++)
      if (n_tok == 1)
        tile_q8_0(2, 1, nb, wb + q * wrb, h * wrb, abytes, arb, ad, y + q, ys,
                  h);
      else
        tile_q8_0(2, (int)n_tok, nb, wb + q * wrb, h * wrb, abytes, arb, ad,
                  y + q, ys, h);
    r = 2 * h;
  }
  for (; r + GEMM_RM <= n_rows; r += GEMM_RM) {
    int64_t t = 0;
    for (; t + GEMM_RN <= n_tok; t += GEMM_RN)
      tile_q8_0(GEMM_RM, GEMM_RN, nb, wb + r * wrb, wrb, abytes + t * arb,
                arb, ad + t * nb, y + t * ys + r, ys, 1);
    for (; t < n_tok; t++)
      tile_q8_0(GEMM_RM, 1, nb, wb + r * wrb, wrb, abytes + t * arb, arb,
                ad + t * nb, y + t * ys + r, ys, 1);
  }
  for (; r < n_rows; r++)
    for (int64_t t = 0; t < n_tok; t++)
      tile_q8_0(1, 1, nb, wb + r * wrb, wrb, abytes + t * arb, arb,
                ad + t * nb, y + t * ys + r, ys, 1);
}

const dq_gemm_table DQ_X86_GEMM_TABLE = {{
    [DQ_TYPE_Q8_0] = gemm_q8_0,
}};
