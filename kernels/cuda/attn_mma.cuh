/*
 * attn_mma.cuh - the per-lane pieces of the tensor-core prefill attention
 * (attn.cu attn_mma): fragment coordinates of mma.m16n8k16 (F16 inputs,
 * F32 accumulators), the shared-memory layouts of a key/value tile, and
 * what one lane does between two warp-wide steps. __host__ __device__, so
 * tests/cuda/test_cuda_logic.cu runs the same per-lane code on the host,
 * with the warp-wide steps (the matrix products, the 4-lane row
 * reductions) emulated there, against the CPU backend's attention.
 *
 * The algorithm (flash attention 2 on tensor cores): a block of 4 warps
 * owns 64 query rows of one KV head (rows as in attn.cu: r = t * group +
 * hh); each warp 16 of them. Per tile of 64 keys, staged in shared memory
 * as F16 (keys in their cache panels, values in rows): S = Q K^T as 8
 * accumulator tiles of 16 rows x 8 keys (HD/16 products each), scaled and
 * masked in f32, the online softmax per row (a row's 16 scores of a lane,
 * then the 4 lanes that share the row), P rounded to F16 and used as the
 * A operand of O += P V directly from the accumulator registers (the C
 * layout of two adjacent 8-key tiles is the A layout of a 16-key step),
 * O as HD/8 accumulator tiles, rescaled per row. Numerics against the
 * CUDA-core kernel: Q, K, V and P enter the products as F16 (K and V are
 * F16 in the cache already; Q and P are rounded here), products exact,
 * sums in f32 in the tensor cores' order; the softmax itself in f32 with
 * expf. So outputs differ from attn_main's by ~1e-3 relative (P's and Q's
 * rounding), which test_cuda_logic bounds.
 *
 * Fragment coordinates, PTX ISA "Matrix Fragments for mma.m16n8k16 with
 * floating point type": lane = 4 gq + tq;
 *   A (16 x 16, row-major), 4 registers of two halves:
 *     reg r, half e: row gq + 8 (r & 1), column 2 tq + e + 8 (r >> 1);
 *   B (16 x 8, column-major), 2 registers of two halves:
 *     reg r, half e: row (k) 2 tq + e + 8 r, column (n) gq;
 *   C/D (16 x 8, f32), 4 floats: i: row gq + 8 (i >> 1), column 2 tq + (i & 1).
 * In a register the lower half holds the element with the smaller index.
 */
#ifndef DQ_CUDA_ATTN_MMA_CUH
#define DQ_CUDA_ATTN_MMA_CUH

#include "attn_moe.cuh"

#include <cuda_fp16.h>
#include <stdint.h>

namespace dq_mma {

constexpr int ROWS = 64;   /* query rows per block: 4 warps x 16 */
constexpr int WARPS = 4;
constexpr int KT = 64;     /* keys per tile (= DQ_CU_ATTN_BK) */
constexpr int KP = 24;     /* halves per (panel, dimension) row of Ks */
template <int HD> struct dims {
  static_assert(HD == 64 || HD == 128 || HD == 256,
                "head sizes of the mma path");
  static constexpr int KS = HD / 16; /* k-steps of Q K^T */
  /* Output columns per block: a lane holds a 16-row x VD tile of O. At
   * HD 256 the whole row would be 128 accumulator registers beside Q's
   * 64: there NH = 2 blocks share a row tile, each the scores again and
   * half of the columns (1.5x the products; sm_90 ptxas: 246 registers,
   * no spills, 68 KiB of shared memory, so 2 blocks per SM as at HD 128;
   * Q from shared memory instead would have made a 114 KiB block, one
   * per SM). */
  static constexpr int VD = HD < 128 ? HD : 128;
  static constexpr int NH = HD / VD; /* column halves */
  static constexpr int ND = VD / 8;  /* output tiles of 8 columns */
  static constexpr int VP = VD + 8;  /* halves per key row of Vs */
  /* shared memory: Ks[4 panels][HD][KP], Vs[KT][VP] (halves; the block's
   * VD columns), then the block's key range (2 ints per warp) */
  static constexpr size_t ks_halves = (size_t)4 * HD * KP;
  static constexpr size_t vs_halves = (size_t)KT * VP;
  static constexpr size_t smem_bytes =
      2 * (ks_halves + vs_halves) + sizeof(int) * 2 * WARPS;
};

DQ_CU_HD int a_row(int lane, int r) { return (lane >> 2) + 8 * (r & 1); }
DQ_CU_HD int a_col(int lane, int r, int e) {
  return 2 * (lane & 3) + e + 8 * (r >> 1);
}
DQ_CU_HD int b_row(int lane, int r, int e) { return 2 * (lane & 3) + e + 8 * r; }
DQ_CU_HD int b_col(int lane) { return lane >> 2; }
DQ_CU_HD int c_row(int lane, int i) { return (lane >> 2) + 8 * (i >> 1); }
DQ_CU_HD int c_col(int lane, int i) { return 2 * (lane & 3) + (i & 1); }

/* f16 bits of x, rounded to nearest even. */
DQ_CU_HD uint16_t f2h(float x) {
  __half_raw r = __float2half_rn(x);
  return r.x;
}
DQ_CU_HD uint32_t pack2(uint16_t lo, uint16_t hi) {
  return (uint32_t)lo | ((uint32_t)hi << 16);
}

/* Halves index of key kk (0..63) of the tile, dimension d, in Ks: the
 * cache's 16-key panels as they are, each (panel, dimension) row padded
 * to KP halves so that a B fragment's loads hit distinct banks. */
template <int HD> DQ_CU_HD int ks_index(int kk, int d) {
  return ((kk >> 4) * HD + d) * KP + (kk & 15);
}
/* Halves index of key kk, column c (of the block's VD) in Vs (rows padded
 * to VP). */
template <int HD> DQ_CU_HD int vs_index(int kk, int c) {
  return kk * dims<HD>::VP + c;
}

/* One lane's state: its rows (gq and gq + 8 of the warp's 16) and their
 * key ranges, Q fragments, scores of the current tile, output
 * accumulators, running max and sum. */
template <int HD> struct lane_state {
  int t[2], h[2];    /* token, head; t = -1: no row */
  int lo[2], hi[2];  /* keys the row sees, within the block's split */
  uint32_t qa[dims<HD>::KS][4];
  float s[8][4];
  float o[dims<HD>::ND][4];
  float m[2], l[2];
};

/* Sets up the lane's rows of the block's row tile rt, warp w, KV head g;
 * keys clipped to [ks, ke) (the split), Q fragments rounded to F16 from q
 * (n_tok rows of n_head * hd floats). */
template <int HD>
DQ_CU_HD void lane_init(lane_state<HD> &st, int lane, int w, int rt, int g,
                        const float *q, int n_rows, int group, int n_head,
                        int pos0, int causal, int window, int n_kv, int ks,
                        int ke) {
  for (int j = 0; j < 2; j++) {
    int r = rt * ROWS + w * 16 + (lane >> 2) + 8 * j;
    st.t[j] = -1, st.h[j] = 0, st.lo[j] = 0, st.hi[j] = 0;
    st.m[j] = -INFINITY, st.l[j] = 0.0f;
    if (r < n_rows) {
      st.t[j] = r / group;
      st.h[j] = g * group + r % group;
      int lo, hi;
      dq_cu_attn_range(causal, window, n_kv, pos0 + st.t[j], &lo, &hi);
      lo = lo > ks ? lo : ks;
      hi = hi < ke ? hi : ke;
      st.lo[j] = lo;
      st.hi[j] = hi < lo ? lo : hi;
    }
  }
  for (int kk = 0; kk < dims<HD>::KS; kk++)
    for (int r = 0; r < 4; r++) {
      int j = r & 1, c = kk * 16 + a_col(lane, r, 0);
      float x0 = 0.0f, x1 = 0.0f;
      if (st.t[j] >= 0) {
        const float *row = q + ((size_t)st.t[j] * n_head + st.h[j]) * HD;
        x0 = row[c];
        x1 = row[c + 1];
      }
      st.qa[kk][r] = pack2(f2h(x0), f2h(x1));
    }
  for (int n = 0; n < dims<HD>::ND; n++)
    for (int i = 0; i < 4; i++)
      st.o[n][i] = 0.0f;
}

/* B fragment register r of Q K^T's k-step kk, key tile nt (8 keys). */
template <int HD>
DQ_CU_HD uint32_t k_frag(const uint16_t *Ks, int lane, int nt, int kk, int r) {
  int key = nt * 8 + b_col(lane), d = kk * 16 + b_row(lane, r, 0);
  return pack2(Ks[ks_index<HD>(key, d)], Ks[ks_index<HD>(key, d + 1)]);
}
/* B fragment register r of P V's key step j (16 keys), column tile n. */
template <int HD>
DQ_CU_HD uint32_t v_frag(const uint16_t *Vs, int lane, int n, int j, int r) {
  int key = j * 16 + b_row(lane, r, 0), c = n * 8 + b_col(lane);
  return pack2(Vs[vs_index<HD>(key, c)], Vs[vs_index<HD>(key + 1, c)]);
}

/* The same fragments four at a time by ldmatrix.x4.trans (the kernel's
 * way): lane l gives the shared address of row l & 7 of 8x8 matrix l >> 3;
 * with .trans, lane l's register j holds elements (rows 2 (l & 3) and
 * 2 (l & 3) + 1, column l >> 2) of matrix j as stored, which for the
 * matrices below is exactly a B fragment register. Keys: matrices (dims
 * kk*16 + 0..7 | 8..15) x (keys 16 nt2 + 0..7 | 8..15), giving k_frag of
 * tiles 2 nt2 (registers 0, 1) and 2 nt2 + 1 (2, 3); values: (keys 16 j +
 * 0..7 | 8..15) x (columns 16 n2 + 0..7 | 8..15), giving v_frag of column
 * tiles 2 n2 (0, 1) and 2 n2 + 1 (2, 3). Rows are 16 bytes of Ks / Vs;
 * their pitches (48 and 2 VD + 16 bytes) put the 8 rows of a matrix on
 * distinct banks. test_cuda_logic checks these against k_frag / v_frag. */
template <int HD> DQ_CU_HD int ldsm_k_index(int lane, int nt2, int kk) {
  int m = lane >> 3, i = lane & 7;
  return ks_index<HD>(16 * nt2 + 8 * (m >> 1), kk * 16 + 8 * (m & 1) + i);
}
template <int HD> DQ_CU_HD int ldsm_v_index(int lane, int n2, int j) {
  int m = lane >> 3, i = lane & 7;
  return vs_index<HD>(16 * j + 8 * (m & 1) + i, 16 * n2 + 8 * (m >> 1));
}

/* Scales the tile's raw scores (keys k0..), adds the keys' log weights
 * (bias, or NULL) and masks the keys a row does not see to -INFINITY;
 * returns the lane's partial maximum of each row. */
template <int HD>
DQ_CU_HD void scale_mask(lane_state<HD> &st, int lane, int k0, float scale,
                         const float *bias, float mx[2]) {
  mx[0] = mx[1] = -INFINITY;
  for (int nt = 0; nt < 8; nt++)
    for (int i = 0; i < 4; i++) {
      int j = i >> 1, key = k0 + nt * 8 + c_col(lane, i);
      float v = key >= st.lo[j] && key < st.hi[j]
                    ? dq_cu_logit(st.s[nt][i], scale, bias, key)
                    : -INFINITY;
      st.s[nt][i] = v;
      mx[j] = fmaxf(mx[j], v);
    }
}

/* With the rows' tile maxima (over the 4 lanes): the new running max,
 * probabilities in place of the scores, the output rescaled; returns the
 * lane's partial sums of the probabilities. */
template <int HD>
DQ_CU_HD void softmax_step(lane_state<HD> &st, const float mx[2],
                           float sum[2]) {
  float alpha[2];
  for (int j = 0; j < 2; j++) {
    float mn = dq_cu_osm_max(st.m[j], mx[j]);
    alpha[j] = dq_cu_osm_alpha(st.m[j], mn);
    st.m[j] = mn;
    sum[j] = 0.0f;
  }
  for (int nt = 0; nt < 8; nt++)
    for (int i = 0; i < 4; i++) {
      int j = i >> 1;
      float p = dq_cu_osm_p(st.s[nt][i], st.m[j]);
      st.s[nt][i] = p;
      sum[j] += p;
    }
  for (int n = 0; n < dims<HD>::ND; n++)
    for (int i = 0; i < 4; i++)
      st.o[n][i] *= alpha[i >> 1];
  /* l after the 4-lane sum: l' = l alpha + sum (softmax_sum) */
  st.l[0] *= alpha[0];
  st.l[1] *= alpha[1];
}
template <int HD>
DQ_CU_HD void softmax_sum(lane_state<HD> &st, const float sum[2]) {
  st.l[0] += sum[0];
  st.l[1] += sum[1];
}

/* A fragment register r of P's key step j (keys 16 j ..), from the score
 * registers: tile 2 j + (r >> 1), elements 2 (r & 1) and 2 (r & 1) + 1. */
template <int HD>
DQ_CU_HD uint32_t p_frag(const lane_state<HD> &st, int j, int r) {
  const float *c = st.s[2 * j + (r >> 1)];
  int i = 2 * (r & 1);
  return pack2(f2h(c[i]), f2h(c[i + 1]));
}

/* ---- statistics (attn.cu attn_stats_mma) ---------------------------------
 * After the main pass has left each row's final (max, sum) in ml: a block
 * owns 64 keys of one query head h, warp w keys k0 + 16 w .. + 15 (two
 * 8-key tiles, their B fragments held for the whole call). Per tile of 16
 * counted tokens: S = Q K^T on the tensor cores, p = exp(s scale - m) / l
 * for the keys a row sees, summed per key in the lane (rows gq, gq + 8,
 * tiles in token order), then over the 8 lanes of a key (xor 4, 8, 16). */
struct stats_call {
  const float *q;     /* n_tok rows of n_head * HD */
  const uint16_t *k;  /* the F16 key panels */
  const float *ml;    /* [g][row][2] */
  int n_head, re, g, hh, h, group, n_rows, pos0, causal, window, n_kv;
  int ts1;            /* tokens counted: [ts0, ts1) */
  float scale;
  const float *bias;  /* per-key log weights, or NULL */
};

template <int HD> struct stats_lane {
  uint32_t kb[dims<HD>::KS][2][2]; /* k-step, 8-key tile, register */
  float acc[2][2];                 /* 8-key tile, column e of the lane */
};

/* The lane's key fragments (keys past n_kv as zeros) and sums. */
template <int HD>
DQ_CU_HD void stats_init(stats_lane<HD> &st, const stats_call &c, int lane,
                         int w, int k0) {
  /* unrolled: kb stays in registers (at HD 256 nvcc would otherwise put
   * it on the stack) */
  DQ_CU_UNROLL
  for (int nt = 0; nt < 2; nt++) {
    int key = k0 + 16 * w + 8 * nt + b_col(lane);
    DQ_CU_UNROLL
    for (int kk = 0; kk < dims<HD>::KS; kk++)
      DQ_CU_UNROLL
      for (int r = 0; r < 2; r++) {
        int col = c.g * HD + kk * 16 + b_row(lane, r, 0);
        uint16_t x0 = 0, x1 = 0;
        if (key < c.n_kv) {
          x0 = c.k[dq_cu_panel_index((size_t)key, c.re, col)];
          x1 = c.k[dq_cu_panel_index((size_t)key, c.re, col + 1)];
        }
        st.kb[kk][nt][r] = pack2(x0, x1);
      }
    st.acc[nt][0] = st.acc[nt][1] = 0.0f;
  }
}

/* A fragment register r of k-step kk for the tokens tb .. tb + 15 of head
 * h (tokens >= ts1 as zeros). */
template <int HD>
DQ_CU_HD uint32_t stats_q_frag(const stats_call &c, int lane, int tb, int kk,
                               int r) {
  int t = tb + a_row(lane, r), col = kk * 16 + a_col(lane, r, 0);
  if (t >= c.ts1)
    return 0;
  const float *row = c.q + ((size_t)t * c.n_head + c.h) * HD;
  return pack2(f2h(row[col]), f2h(row[col + 1]));
}

/* Adds the tile's probabilities (raw scores s of the lane's two 8-key
 * tiles) to the lane's sums. */
template <int HD>
DQ_CU_HD void stats_accum(stats_lane<HD> &st, const stats_call &c,
                          const float (&s)[2][4], int lane, int w, int k0,
                          int tb) {
  for (int j = 0; j < 2; j++) {
    int t = tb + (lane >> 2) + 8 * j;
    if (t >= c.ts1)
      continue;
    int lo, hi;
    dq_cu_attn_range(c.causal, c.window, c.n_kv, c.pos0 + t, &lo, &hi);
    size_t row = (size_t)c.g * c.n_rows + (size_t)t * c.group + c.hh;
    float m = c.ml[row * 2], l = c.ml[row * 2 + 1];
    for (int nt = 0; nt < 2; nt++)
      for (int e = 0; e < 2; e++) {
        int key = k0 + 16 * w + 8 * nt + c_col(lane, e);
        if (key >= lo && key < hi)
          st.acc[nt][e] += dq_cu_osm_out(
              dq_cu_osm_p(dq_cu_logit(s[nt][2 * j + e], c.scale, c.bias, key),
                          m),
              l);
      }
  }
}

} // namespace dq_mma

#endif /* DQ_CUDA_ATTN_MMA_CUH */
