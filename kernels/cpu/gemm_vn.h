/*
 * gemm_vn.h - the unit layout shared by the matrix kernels of
 * gemm_vnni_avx512.h (512-bit registers, AVX-512 VNNI) and gemm_vn_avx2.h
 * (256-bit registers: AVX2, AVX-VNNI): the prepared activations both read
 * (vn_act) and the rules that make their results the same bits.
 *
 * Weights and activations go in units of 256 elements (8 blocks of 32, or
 * one K-quant super-block), each split into 16 groups of 16 elements that
 * share one scale (half a block; a Q6_K scale group; half a Q4_K
 * sub-block). A unit's codes are four 64-byte vectors c in which int32
 * lane p always holds group G(p) = 4 (p % 4) + p / 4: vector c, lane p =
 * elements 4c..4c+3 of group G(p). Lanes 0-7 hold groups 0 4 8 12 1 5 9
 * 13, lanes 8-15 groups 2 6 10 14 3 7 11 15, so a 256-bit kernel takes the
 * two 32-byte halves of each vector as two independent sets of 8 groups.
 *
 * A row of 32-element blocks whose last unit holds 1-4 blocks ends in a
 * half unit instead: its 4 blocks (zero past the row) are 8 groups in
 * lanes 0-7, group H(p) = 2 (p % 4) + p / 4 (block p % 4, half p / 4), in
 * bytes 0-31 of each vector; bytes 32-63 and lanes 8-15 are zero and
 * neither family reads them. It costs half a unit where a padded unit
 * cost a whole one: rows of 576 (SmolLM2) and 640 (Gemma 3) are 2.5
 * units, not 3.
 *
 * Every (row, token) result is, per k-chunk of VN_KC units, a 16-lane
 * float accumulator acc_p += float(isum_p) x (w_scale_p x y_scale_p)
 * (+ w_min_p x y_sum_p for the min types), fused multiply-adds in unit
 * order, then its lanes added in one fixed tree (lane i + i + 8, then
 * i + i + 4, i + i + 2, i + i + 1), the chunks' sums added in order. The
 * integer sums isum_p are exact; a half unit updates lanes 0-7 only. The
 * 256-bit kernels keep lanes 0-7 and 8-15 in two accumulators and add
 * them first, so both families give the same bits as each other and for
 * any tile, token or thread count.
 */
#ifndef DQ_GEMM_VN_H
#define DQ_GEMM_VN_H

#include "cpu_int.h"

#define VN_KC 8 /* units per k-chunk (2048 weights) */
/* One token, both families: 4 rows' units interleaved where a row is at
 * most this long, one row after the other past it, their lanes added
 * together. bench_mm --stream, Zen 4: interleaved Q4_1 576-wide rows
 * (360 bytes) 1.34x, Q5_0 640 (440) 1.14x; but Q8_0 640 (680) 0.54x,
 * Q4_K 2048 (1152) 0.46x, Q6_K 2048 0.27x, where one after the other
 * keeps 1.0-1.13x. */
#define VN_FLY_INTER_BYTES 512
#define VN_UNIT 256

/* One token, both families: each unit decoded on the fly first asks for
 * the bytes VN_PF_DIST further on (prefetcht0, one per cache line of the
 * unit). The decoding work between loads kept the core from having enough
 * misses in flight to stream at the memory's rate: bench_mm --stream on the
 * Xeon VM (AVX-512, one thread, other work on the second core, A/B
 * alternated) Q8_0 640 x 262144 (Gemma 3's output head) 1.2x, Q4_1 1.4x,
 * Q5_0 1.3x, Q4_K 1.5x, Q6_K 1.3x, reaching the 12 GB/s a plain read loop
 * gets; 1 KiB ahead gained half as much, 4 KiB the same as 2 KiB. A
 * prefetch past the matrix's end does not fault. */
#define VN_PF_DIST 2048
#define VN_PREFETCH(p, n)                                                      \
  do {                                                                         \
    for (size_t o_ = 0; o_ < (n); o_ += 64)                                    \
      _mm_prefetch((const char *)(p) + VN_PF_DIST + o_, _MM_HINT_T0);          \
  } while (0)

/* One unit of one token's activations (Q8_0, Q8_1 or Q8_K codes), laid out
 * once per token by the family's prep function. */
typedef struct vn_act {
  int8_t y[4][64];  /* codes, in the layout above */
  int32_t corr[16]; /* -off * sum y of lane p's group (offset types) */
  float dy[16];     /* the scale of lane p's group */
  float s[16];      /* min types: the sums S (gemm_vnni_avx512.h) */
} vn_act;

/* The weight types' code offsets, u = q + off, for a dq_gemm_u8_table:
 * both families' kernels read the same activations. Q4_K is a min type and
 * reads no correction; it takes Q6_K's offset so that the two share one
 * preparation of x. */
#define VN_OFFSETS                                                            \
  {[DQ_TYPE_Q4_0] = 8, [DQ_TYPE_Q5_0] = 16, [DQ_TYPE_Q8_0] = 128,             \
   [DQ_TYPE_Q6_K] = 32, [DQ_TYPE_Q4_K] = 32}

/* Whether a row of nb 32-element blocks ends in a half unit. */
static inline int vn_half_last(int64_t nb) {
  return nb % 8 >= 1 && nb % 8 <= 4;
}

/* G(p): the group of lane p. */
static const uint8_t vn_group[16] = {0, 4, 8, 12, 1, 5, 9, 13,
                                     2, 6, 10, 14, 3, 7, 11, 15};

/* Q4_K's 8 six-bit scales and minima (scales[12]) as bytes, sub-block j
 * in byte j. */
static inline void vn_q4k_scales(const uint8_t *q, uint64_t *sc,
                                 uint64_t *mn) {
  uint32_t a = dq_le32(q), b = dq_le32(q + 4), c = dq_le32(q + 8);
  uint32_t s_hi = (c & 0x0f0f0f0f) | ((a >> 6) & 0x03030303) << 4;
  uint32_t m_hi = ((c >> 4) & 0x0f0f0f0f) | ((b >> 6) & 0x03030303) << 4;
  *sc = (uint64_t)(a & 0x3f3f3f3f) | (uint64_t)s_hi << 32;
  *mn = (uint64_t)(b & 0x3f3f3f3f) | (uint64_t)m_hi << 32;
}

static inline size_t vn_act_bytes(int64_t n) {
  return (size_t)((n + VN_UNIT - 1) / VN_UNIT) * sizeof(vn_act);
}

#endif /* DQ_GEMM_VN_H */
