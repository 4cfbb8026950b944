/*
 * attn.cu - fused causal attention over a layer's KV cache on the GPU
 * (cuda_ops.h dq_cu_attention; the CPU backend's cpu_attention is the
 * specification): prefill and decode, grouped-query, sliding window, any
 * head_dim up to 576, caches of F32 rows, F16 (key panels + value rows) or
 * Q8_0 rows, optional attention statistics. Not here: the KV stores
 * (elem.cu), RoPE, the projections.
 *
 * Design. Flash attention in FP32 on the CUDA cores: one pass over the keys
 * in tiles of 64, staged in shared memory as f32 (converted from the cache
 * as they are loaded), online softmax (attn_moe.cuh dq_cu_osm_*), the output
 * accumulated in registers and normalised at the end. A block owns one KV
 * head g and a tile of BQ "query rows"; the rows of KV head g are the pairs
 * (token t, head h = g * group + hh) flattened as r = t * group + hh, so
 * the heads that share a KV head share every K/V tile load (GQA and MLA
 * decode: 128 heads on one latent KV head are 4 row tiles of 32). Per key
 * tile: Q.K^T in d-chunks of 64 (each thread a TQ x TK register tile of
 * scores, float4 shared loads), masking, a row phase (NT/BQ threads per
 * row: tile max, rescale factor, probabilities, sum; butterfly shuffles),
 * then P.V in column chunks of 64 (each thread OQ rows x 4 columns per
 * chunk). Two tile shapes:
 *   decode  BQ = 8 rows, 128 threads, < 48 KiB shared memory (every head
 *           size): the choice for up to 32 rows, and the fallback where the
 *           device cannot give the prefill shape its shared memory;
 *   prefill BQ = 64 rows (32 for head_dim > 256), 256 threads, 53-108 KiB
 *           shared memory (opted in per launch), two blocks per SM.
 * Keys are split across blocks (flash-decoding) when row tiles x KV heads
 * leave the GPU short of blocks: each split writes its unnormalised output
 * and (max, sum) per row to a workspace, and a combine kernel merges the
 * splits in split order (dq_cu_osm_merge). The contract gives attention no
 * scratch, so the workspace (about 1 MB for a decode step; none for a
 * prefill that fills the GPU without splits and has no statistics) comes
 * from the device's default memory pool in stream order (cudaMallocAsync /
 * cudaFreeAsync): the backend should raise that pool's release threshold
 * (cudaMemPoolAttrReleaseThreshold) so that it is not returned to the
 * driver at every synchronisation. If the allocation fails the call runs
 * unsplit. Causal prefill launches the longest row tiles first.
 * Statistics (only for recall) are a second pass after the final (max, sum)
 * of every row is known: one block per (query head, key tile) recomputes
 * the scores of the counted queries, and each of its threads sums one key's
 * probabilities over the queries in order, then adds to stats: no atomics,
 * the same bits on every run. The query mass (each query's probability on
 * a range of keys, the pinned question) is a third pass of the same kind:
 * one block per (query head, tile of 8 tokens) over the range's key tiles.
 * Per-key log weights (dq_attn.bias, GSM's merged slots) are added to the
 * scaled scores in every pass alike (dq_cu_logit).
 *
 * Numerics: scores and sums in f32 with fused multiply-adds, exp from the
 * CUDA math library (expf); results match the CPU backend within f32
 * tolerance (relative ~1e-5 on outputs), not bitwise. A row that sees no
 * key gives zeros, as on the CPU.
 *
 * Expected performance on H200 (to be measured; nothing here has run on a
 * GPU yet):
 *   decode, F16 cache: memory-bound; the splits put ~4 blocks per SM in
 *   flight, so the K/V stream should reach >= 70% of HBM bandwidth (~3.3 of
 *   4.8 TB/s) from n_kv ~ 4k up: Llama-3-8B (8 KV heads x 128) at 32k
 *   context reads 134 MB per layer, ~40 us. Compute per key (8 rows x 2 x
 *   head_dim FMAs) stays well under the bandwidth bound. The combine adds one
 *   small kernel (~3-5 us).
 *   prefill: compute-bound on FP32 FMA (~67 TFLOPS peak); expect 30-45% of
 *   peak (the score and P.V loops issue about one shared load per four
 *   FMAs; causal tiles above the diagonal are skipped). That is ~10x short
 *   of tensor-core flash attention, so F16 prefill of head sizes 64, 128
 *   and 256 runs attn_mma instead (mma.sync m16n8k16, attn_mma.cuh): per warp and
 *   64-key tile 128 mma (524k FLOP; 256 clocks of an SM's tensor pipe)
 *   against 64 ldmatrix.x4 for the B fragments (256 shared wavefronts; the
 *   16-bit loads they replaced took 512 instructions and wavefronts).
 *   Prediction: 150-250 TFLOPS (5-10x this kernel; Hopper's mma.sync peak
 *   is ~2/3 of its wgmma peak). Levers if it falls short: double-buffered
 *   cp.async staging (the loads now wait at each tile's barrier), 229
 *   (HD 128; 148 at 64, 246 at 256: sm_90 ptxas) -> 168 registers (2 -> 3
 *   blocks per SM), wgmma.
 *   Q8_0 and F32 caches use the same tiles with a transposing key load
 *   (lanes over keys), a little slower than F16 panels, which load
 *   coalesced and unchanged in shape. Decode without grouping (n_head ==
 *   n_head_kv) fills one row of the 8-row tile: 8x the needed FMAs, which
 *   should still hide under the memory stream but with less margin (a
 *   1-row shape is the tuning step if it does not).
 * To check on a device: the CPU backend's attention as reference on random
 * caches of each store (tolerance 1e-5 + 1e-4 |ref|, as the host test's
 * emulation), decode and prefill, splits and statistics; then time decode
 * at n_kv 4k / 32k against bytes moved, and prefill at 2k / 8k tokens.
 *
 * Requirements (else cudaErrorInvalidValue): n_head % n_head_kv == 0,
 * n_kv > 0, 0 < head_dim <= 576, store 0, 1 or 8; store 1: head_dim even
 * and k, v 4-byte aligned; store 8: head_dim % 32 == 0, k, v 2-byte
 * aligned.
 */
#include "attn_mma.cuh"
#include "attn_moe.cuh"
#include "cuda_ops.h"
#include "launch.cuh"

#include <atomic>
#include <climits>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <type_traits>

namespace {

constexpr int BK = DQ_CU_ATTN_BK; /* keys per tile */
constexpr int KS = BK + 4;        /* row stride of Kt, Vs, Ps (floats) */
constexpr int CX = 16;            /* column threads of the P.V phase */

/* A tile shape. BQ query rows per block; scores: thread (qy, kx) holds rows
 * qy*TQ.. and keys kx*TK..; P.V: thread (ry, cx) holds rows ry*OQ.. and
 * columns c*64 + cx*4 .. +3 of every 64-column chunk c. */
template <int DMAX_, int BQ_, int TQ_, int TK_, int OQ_> struct shape {
  static constexpr int DMAX = DMAX_, BQ = BQ_, TQ = TQ_, TK = TK_, OQ = OQ_;
  static constexpr int NC = DMAX / 64;     /* 64-wide chunks of the head */
  static constexpr int NT = CX * (BQ / OQ); /* threads */
  static constexpr int QY = BQ / TQ, KX = BK / TK;
  static constexpr int TPR = NT / BQ;       /* threads per row, row phase */
  static constexpr int QSS = BQ + 4;        /* row stride of Qs[d][q] */
  static_assert(DMAX % 64 == 0, "head chunks of 64");
  static_assert(QY * KX == NT, "score tiles cover the block");
  static_assert(TPR >= 1 && TPR <= 32 && (TPR & (TPR - 1)) == 0,
                "row phase within a warp");
  static_assert(TK == 4 && (TQ == 1 || TQ == 2 || TQ == 4), "vector loads");
  /* shared memory: Qs[DMAX][QSS], KV[64][KS] (key chunk Kt[d][k] or value
   * chunk Vs[k][c]), Ps[BQ][KS], As/Ms/Ls[BQ]; ints Rt/Rh/Lo/Hi[BQ] */
  static constexpr size_t smem_bytes =
      sizeof(float) * ((size_t)DMAX * QSS + 64 * KS + (size_t)BQ * KS + 3 * BQ) +
      sizeof(int) * 4 * BQ;
};
template <int DMAX> using decode_shape = shape<DMAX, 8, 1, 4, 1>;
template <int DMAX>
using prefill_shape = typename std::conditional<
    DMAX <= 256, shape<DMAX, 64, 4, 4, 4>, shape<DMAX, 32, 2, 4, 2>>::type;

/* The call, as the kernels see it. */
struct args {
  const float *q;
  const void *k, *v;
  int n_tok, pos0, n_kv, n_head, n_head_kv, hd, group, causal, window;
  float scale;
  int n_rows;        /* n_tok * group: rows per KV head */
  dq_cu_split sp;
  float *out;        /* n_split == 1: final output */
  float *part_o;     /* n_split > 1: [split][g][row][hd] */
  float *part_ml;    /* n_split > 1: [split][g][row][2] */
  float *ml;         /* stats: final (max, sum) [g][row][2], or NULL */
  float *stats;
  int stats_stride, ts0, ts1; /* tokens counted in stats */
  float *qmass;               /* per-token mass on keys [qm_lo, qm_hi) */
  int qmass_stride, qm_lo, qm_hi;
  const float *bias;          /* per-key log weights, or NULL */
};

/* Shared-memory views of a block. */
template <class S> struct smem {
  float *Qs, *KV, *Ps, *As, *Ms, *Ls;
  int *Rt, *Rh, *Lo, *Hi;
  __device__ explicit smem(float *base) {
    Qs = base;
    KV = Qs + (size_t)S::DMAX * S::QSS;
    Ps = KV + 64 * KS;
    As = Ps + S::BQ * KS;
    Ms = As + S::BQ;
    Ls = Ms + S::BQ;
    Rt = (int *)(Ls + S::BQ);
    Rh = Rt + S::BQ;
    Lo = Rh + S::BQ;
    Hi = Lo + S::BQ;
  }
};

template <int N> __device__ __forceinline__ void lds(float *d, const float *s) {
  if (N == 4) {
    float4 v = *(const float4 *)s;
    d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
  } else if (N == 2) {
    float2 v = *(const float2 *)s;
    d[0] = v.x, d[1] = v.y;
  } else {
    d[0] = s[0];
  }
}

/* Query rows of the block (Rt: token or -1, Rh: head) into Qs[d][row],
 * zero past head_dim and for absent rows. */
template <class S>
__device__ void load_q(const smem<S> &m, const args &a) {
  for (int e = threadIdx.x; e < S::BQ * S::DMAX; e += S::NT) {
    int row = e / S::DMAX, d = e % S::DMAX, t = m.Rt[row];
    float x = 0.0f;
    if (t >= 0 && d < a.hd)
      x = a.q[((size_t)t * a.n_head + m.Rh[row]) * a.hd + d];
    m.Qs[d * S::QSS + row] = x;
  }
}

/* Keys [k0, k0 + 64) of KV head g, dimensions [d0, d0 + 64), into
 * Kt[d][k] as f32; zero for keys >= n_kv and dimensions >= head_dim. */
template <int STORE, class S>
__device__ void load_k(float *Kt, const args &a, int g, int k0, int d0) {
  const int re = a.n_head_kv * a.hd, col0 = g * a.hd + d0, dn = a.hd - d0;
  if (STORE == 1) {
    /* panels: 16 keys side by side per dimension; pairs of keys */
    const uint16_t *K = (const uint16_t *)a.k;
#pragma unroll 4
    for (int e = threadIdx.x; e < 4 * 64 * 8; e += S::NT) {
      int pk = e >> 9, d = (e >> 3) & 63, kk = (e & 7) * 2;
      int key = k0 + pk * 16 + kk;
      float2 v = make_float2(0.0f, 0.0f);
      if (d < dn && k0 + pk * 16 < a.n_kv) { /* whole panels are stored */
        uint32_t w = *(const uint32_t *)(
            K + dq_cu_panel_index((size_t)(k0 + pk * 16), re, col0 + d) + kk);
        v.x = key < a.n_kv ? dq_cu_h2f((uint16_t)(w & 0xffff)) : 0.0f;
        v.y = key + 1 < a.n_kv ? dq_cu_h2f((uint16_t)(w >> 16)) : 0.0f;
      }
      *(float2 *)(Kt + d * KS + pk * 16 + kk) = v;
    }
  } else if (STORE == 0) {
    /* rows: lanes over keys (conflict-free transposed stores), 4 dims each */
    const float *K = (const float *)a.k;
#pragma unroll 4
    for (int e = threadIdx.x; e < 64 * 16; e += S::NT) {
      int k = e & 63, d4 = (e >> 6) * 4, key = k0 + k;
      const float *src = K + (size_t)key * re + col0 + d4;
#pragma unroll
      for (int i = 0; i < 4; i++)
        Kt[(d4 + i) * KS + k] = key < a.n_kv && d4 + i < dn ? src[i] : 0.0f;
    }
  } else {
    /* Q8_0 rows: lanes over keys, 8 dims (a quarter block) each; head_dim
     * % 32 == 0, so a quarter block is all in or all out */
    const uint8_t *K = (const uint8_t *)a.k;
#pragma unroll 2
    for (int e = threadIdx.x; e < 64 * 8; e += S::NT) {
      int k = e & 63, d8 = (e >> 6) * 8, key = k0 + k;
      float x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (key < a.n_kv && d8 < dn) {
        int col = col0 + d8;
        const uint8_t *b = K + dq_cu_q8_block((size_t)key, re, col);
        float sc = dq_cu_h2f(*(const uint16_t *)b);
        const uint16_t *qs = (const uint16_t *)(b + 2 + col % 32);
#pragma unroll
        for (int j = 0; j < 4; j++) {
          uint16_t w = qs[j];
          x[2 * j] = (float)(int8_t)(w & 0xff) * sc;
          x[2 * j + 1] = (float)(int8_t)(w >> 8) * sc;
        }
      }
#pragma unroll
      for (int i = 0; i < 8; i++)
        Kt[(d8 + i) * KS + k] = x[i];
    }
  }
}

/* Values of keys [k0, k0 + 64), columns [c0, c0 + 64) of KV head g, into
 * Vs[k][c]; zero for keys >= n_kv (their probability is 0, and 0 * garbage
 * could be NaN) and columns >= head_dim. */
template <int STORE, class S>
__device__ void load_v(float *Vs, const args &a, int g, int k0, int c0) {
  const int re = a.n_head_kv * a.hd, col0 = g * a.hd + c0, cn = a.hd - c0;
  if (STORE == 1) {
    const uint16_t *V = (const uint16_t *)a.v;
#pragma unroll 4
    for (int e = threadIdx.x; e < 64 * 32; e += S::NT) {
      int c = (e & 31) * 2, k = e >> 5, key = k0 + k;
      float2 x = make_float2(0.0f, 0.0f);
      if (key < a.n_kv && c < cn) { /* head_dim even: pairs all in or out */
        uint32_t w = *(const uint32_t *)(V + (size_t)key * re + col0 + c);
        x.x = dq_cu_h2f((uint16_t)(w & 0xffff));
        x.y = dq_cu_h2f((uint16_t)(w >> 16));
      }
      *(float2 *)(Vs + k * KS + c) = x;
    }
  } else if (STORE == 0) {
    const float *V = (const float *)a.v;
#pragma unroll 4
    for (int e = threadIdx.x; e < 64 * 64; e += S::NT) {
      int c = e & 63, k = e >> 6, key = k0 + k;
      Vs[k * KS + c] =
          key < a.n_kv && c < cn ? V[(size_t)key * re + col0 + c] : 0.0f;
    }
  } else {
    const uint8_t *V = (const uint8_t *)a.v;
#pragma unroll 2
    for (int e = threadIdx.x; e < 64 * 8; e += S::NT) {
      int c = (e & 7) * 8, k = e >> 3, key = k0 + k;
      float x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (key < a.n_kv && c < cn) {
        int col = col0 + c;
        const uint8_t *b = V + dq_cu_q8_block((size_t)key, re, col);
        float sc = dq_cu_h2f(*(const uint16_t *)b);
        const uint16_t *qs = (const uint16_t *)(b + 2 + col % 32);
#pragma unroll
        for (int j = 0; j < 4; j++) {
          uint16_t w = qs[j];
          x[2 * j] = (float)(int8_t)(w & 0xff) * sc;
          x[2 * j + 1] = (float)(int8_t)(w >> 8) * sc;
        }
      }
      *(float4 *)(Vs + k * KS + c) = make_float4(x[0], x[1], x[2], x[3]);
      *(float4 *)(Vs + k * KS + c + 4) = make_float4(x[4], x[5], x[6], x[7]);
    }
  }
}

/* Raw scores q . k of the block's rows against keys [k0, k0 + 64) into s
 * (this thread's TQ x TK tile); every score is one FMA chain over d in
 * order, so the statistics pass recomputes the same bits. Qs must be
 * loaded (visible after the first barrier here); ends with a barrier, the
 * KV buffer free again. */
template <int STORE, class S>
__device__ void scores(float (&s)[S::TQ][S::TK], const smem<S> &m,
                       const args &a, int g, int k0) {
  const int qy = threadIdx.x / S::KX, kx = threadIdx.x % S::KX;
#pragma unroll
  for (int i = 0; i < S::TQ; i++)
#pragma unroll
    for (int j = 0; j < S::TK; j++)
      s[i][j] = 0.0f;
#pragma unroll 1
  for (int d0 = 0; d0 < a.hd; d0 += 64) {
    load_k<STORE, S>(m.KV, a, g, k0, d0);
    __syncthreads();
    const float *qc = m.Qs + (size_t)d0 * S::QSS + qy * S::TQ;
    const float *kc = m.KV + kx * S::TK;
    int dn = a.hd - d0 < 64 ? a.hd - d0 : 64;
#pragma unroll 4
    for (int d = 0; d < dn; d++) {
      float qv[S::TQ], kv[S::TK];
      lds<S::TQ>(qv, qc + d * S::QSS);
      lds<S::TK>(kv, kc + d * KS);
#pragma unroll
      for (int i = 0; i < S::TQ; i++)
#pragma unroll
        for (int j = 0; j < S::TK; j++)
          s[i][j] = fmaf(qv[i], kv[j], s[i][j]);
    }
    __syncthreads();
  }
}

template <int N> __device__ __forceinline__ float group_max(float v) {
#pragma unroll
  for (int o = N / 2; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <int N> __device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = N / 2; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* Fills Rt/Rh/Lo/Hi for the block's rows: row tile rt of KV head g, key
 * ranges clipped to [ks, ke). Returns through the barrier. */
template <class S>
__device__ void rows_main(const smem<S> &m, const args &a, int g, int rt,
                          int ks, int ke) {
  if (threadIdx.x < S::BQ) {
    int r = rt * S::BQ + threadIdx.x, t = -1, h = 0, lo = 0, hi = 0;
    if (r < a.n_rows) {
      t = r / a.group;
      h = g * a.group + r % a.group;
      dq_cu_attn_range(a.causal, a.window, a.n_kv, a.pos0 + t, &lo, &hi);
      lo = lo > ks ? lo : ks;
      hi = hi < ke ? hi : ke;
    }
    m.Rt[threadIdx.x] = t;
    m.Rh[threadIdx.x] = h;
    m.Lo[threadIdx.x] = lo;
    m.Hi[threadIdx.x] = hi < lo ? lo : hi;
  }
  __syncthreads();
}

/* grid: x = row tile (longest first), y = KV head, z = split. */
template <int STORE, class S>
__global__ void __launch_bounds__(S::NT) attn_main(args a) {
  DQ_CU_DYN_SMEM(float4, smem_raw);
  smem<S> m((float *)smem_raw);
  const int tid = threadIdx.x;
  const int rt = gridDim.x - 1 - blockIdx.x, g = blockIdx.y, sp = blockIdx.z;
  const int ks = a.sp.k_base + sp * a.sp.split_len;
  const int ke = ks + a.sp.split_len < a.n_kv ? ks + a.sp.split_len : a.n_kv;
  rows_main(m, a, g, rt, ks, ke);
  /* the block's keys: the union of its rows' ranges */
  int kb = 0x7fffffff, kend = 0;
  for (int i = 0; i < S::BQ; i++)
    if (m.Lo[i] < m.Hi[i]) {
      kb = m.Lo[i] < kb ? m.Lo[i] : kb;
      kend = m.Hi[i] > kend ? m.Hi[i] : kend;
    }
  kb = kend ? kb / BK * BK : 0; /* no row with keys: no tile */
  load_q(m, a);

  const int qy = tid / S::KX, kx = tid % S::KX;
  const int prow = tid / S::TPR, ppart = tid % S::TPR;
  const int ry = tid / CX, cx = tid % CX;
  float m_run = -INFINITY, l_run = 0.0f; /* row prow's state (row phase) */
  float o[S::NC][S::OQ][4];
#pragma unroll
  for (int c = 0; c < S::NC; c++)
#pragma unroll
    for (int i = 0; i < S::OQ; i++)
#pragma unroll
      for (int j = 0; j < 4; j++)
        o[c][i][j] = 0.0f;

  for (int k0 = kb; k0 < kend; k0 += BK) {
    float s[S::TQ][S::TK];
    scores<STORE, S>(s, m, a, g, k0);
    /* scale (rounded alone, as the statistics pass does) and mask into Ps */
#pragma unroll
    for (int i = 0; i < S::TQ; i++) {
      int row = qy * S::TQ + i, lo = m.Lo[row], hi = m.Hi[row];
      float4 v;
      int k = k0 + kx * S::TK;
      v.x = k >= lo && k < hi ? dq_cu_logit(s[i][0], a.scale, a.bias, k)
                              : -INFINITY;
      v.y = k + 1 >= lo && k + 1 < hi
                ? dq_cu_logit(s[i][1], a.scale, a.bias, k + 1)
                : -INFINITY;
      v.z = k + 2 >= lo && k + 2 < hi
                ? dq_cu_logit(s[i][2], a.scale, a.bias, k + 2)
                : -INFINITY;
      v.w = k + 3 >= lo && k + 3 < hi
                ? dq_cu_logit(s[i][3], a.scale, a.bias, k + 3)
                : -INFINITY;
      *(float4 *)(m.Ps + row * KS + kx * S::TK) = v;
    }
    load_v<STORE, S>(m.KV, a, g, k0, 0);
    __syncthreads();
    /* row phase: TPR threads per row, keys ppart, ppart + TPR, ... */
    {
      float *pr = m.Ps + prow * KS;
      float mt = -INFINITY;
#pragma unroll
      for (int j = ppart; j < BK; j += S::TPR)
        mt = fmaxf(mt, pr[j]);
      mt = group_max<S::TPR>(mt);
      float m_new = dq_cu_osm_max(m_run, mt);
      float alpha = dq_cu_osm_alpha(m_run, m_new), sum = 0.0f;
#pragma unroll
      for (int j = ppart; j < BK; j += S::TPR) {
        float p = dq_cu_osm_p(pr[j], m_new);
        pr[j] = p;
        sum += p;
      }
      sum = group_sum<S::TPR>(sum);
      l_run = l_run * alpha + sum;
      m_run = m_new;
      if (ppart == 0)
        m.As[prow] = alpha;
    }
    __syncthreads();
    /* P.V, column chunk by chunk */
#pragma unroll
    for (int i = 0; i < S::OQ; i++) {
      float al = m.As[ry * S::OQ + i];
#pragma unroll
      for (int c = 0; c < S::NC; c++)
#pragma unroll
        for (int j = 0; j < 4; j++)
          o[c][i][j] *= al;
    }
#pragma unroll
    for (int c = 0; c < S::NC; c++) {
      if (c * 64 >= a.hd)
        break;
      if (c > 0) {
        load_v<STORE, S>(m.KV, a, g, k0, c * 64);
        __syncthreads();
      }
#pragma unroll 2
      for (int k = 0; k < BK; k += 4) {
        float p[S::OQ][4];
#pragma unroll
        for (int i = 0; i < S::OQ; i++)
          lds<4>(p[i], m.Ps + (ry * S::OQ + i) * KS + k);
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
          float v[4];
          lds<4>(v, m.KV + (k + kk) * KS + cx * 4);
#pragma unroll
          for (int i = 0; i < S::OQ; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
              o[c][i][j] = fmaf(p[i][kk], v[j], o[c][i][j]);
        }
      }
      __syncthreads();
    }
  }

  if (ppart == 0) {
    m.Ms[prow] = m_run;
    m.Ls[prow] = l_run;
  }
  __syncthreads();
  const size_t rows_g = (size_t)a.n_rows;
#pragma unroll
  for (int i = 0; i < S::OQ; i++) {
    int row = ry * S::OQ + i, t = m.Rt[row];
    if (t < 0)
      continue;
    size_t r = (size_t)rt * S::BQ + row;
    float l = m.Ls[row];
    float *dst;
    if (a.sp.n_split == 1)
      dst = a.out + ((size_t)t * a.n_head + m.Rh[row]) * a.hd;
    else
      dst = a.part_o + (((size_t)sp * a.n_head_kv + g) * rows_g + r) * a.hd;
#pragma unroll
    for (int c = 0; c < S::NC; c++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        int col = c * 64 + cx * 4 + j;
        if (col < a.hd)
          dst[col] = a.sp.n_split == 1 ? dq_cu_osm_out(o[c][i][j], l)
                                       : o[c][i][j];
      }
  }
  if (tid < S::BQ && m.Rt[tid] >= 0) {
    size_t r = (size_t)rt * S::BQ + tid;
    float *ml = NULL;
    if (a.sp.n_split > 1)
      ml = a.part_ml + (((size_t)sp * a.n_head_kv + g) * rows_g + r) * 2;
    else if (a.ml)
      ml = a.ml + ((size_t)g * rows_g + r) * 2;
    if (ml) {
      ml[0] = m.Ms[tid];
      ml[1] = m.Ls[tid];
    }
  }
}

/* Merges the splits of row blockIdx.x of KV head blockIdx.y in split
 * order; 128 threads over the head's columns. */
__global__ void __launch_bounds__(128) attn_combine(args a) {
  const size_t r = blockIdx.x, g = blockIdx.y, rows_g = (size_t)a.n_rows;
  const size_t sstride = (size_t)a.n_head_kv * rows_g; /* rows per split */
  int t = (int)(r / a.group), h = (int)(g * a.group + r % a.group);
  float *dst = a.out + ((size_t)t * a.n_head + h) * a.hd;
  for (int d = threadIdx.x; d < a.hd; d += blockDim.x) {
    float mm = -INFINITY, l = 0.0f, acc = 0.0f;
    for (int s = 0; s < a.sp.n_split; s++) {
      size_t row = s * sstride + g * rows_g + r;
      float sa, sb;
      dq_cu_osm_merge(&mm, &l, a.part_ml[row * 2], a.part_ml[row * 2 + 1],
                      &sa, &sb);
      acc = acc * sa + a.part_o[row * a.hd + d] * sb;
    }
    dst[d] = dq_cu_osm_out(acc, l);
    if (d == 0 && a.ml) {
      a.ml[(g * rows_g + r) * 2] = mm;
      a.ml[(g * rows_g + r) * 2 + 1] = l;
    }
  }
}

/* The statistics passes' row set-up, by thread tid < BQ: row tid is token
 * t (or none: t >= t_end) of head h, its visible keys clipped to [c_lo,
 * c_hi), its final (max, sum) from ml. Returns whether it sees a key. */
template <class S>
__device__ bool stat_row(const smem<S> &m, const args &a, int tid, int t,
                         int t_end, int h, int c_lo, int c_hi) {
  const int g = h / a.group, hh = h % a.group;
  int lo = 0, hi = 0;
  float mr = -INFINITY, lr = 0.0f;
  if (t < t_end) {
    dq_cu_attn_range(a.causal, a.window, a.n_kv, a.pos0 + t, &lo, &hi);
    lo = lo > c_lo ? lo : c_lo;
    hi = hi < c_hi ? hi : c_hi;
    size_t r = (size_t)g * a.n_rows + (size_t)t * a.group + hh;
    mr = a.ml[r * 2];
    lr = a.ml[r * 2 + 1];
  } else {
    t = -1;
  }
  m.Rt[tid] = t;
  m.Rh[tid] = h;
  m.Lo[tid] = lo;
  m.Hi[tid] = hi < lo ? lo : hi;
  m.Ms[tid] = mr;
  m.Ls[tid] = lr;
  return lo < hi;
}

/* The block's rows' probabilities on keys [k0, k0 + 64) into Ps (0 outside
 * each row's [Lo, Hi)), the scores recomputed as attn_main's; Qs loaded.
 * Ends with a barrier: Ps complete. */
template <int STORE, class S>
__device__ void stat_probs(const smem<S> &m, const args &a, int g, int k0) {
  const int qy = threadIdx.x / S::KX, kx = threadIdx.x % S::KX;
  float s[S::TQ][S::TK];
  scores<STORE, S>(s, m, a, g, k0);
#pragma unroll
  for (int i = 0; i < S::TQ; i++) {
    int row = qy * S::TQ + i, lo_r = m.Lo[row], hi_r = m.Hi[row];
    float mr = m.Ms[row], lr = m.Ls[row];
#pragma unroll
    for (int j = 0; j < S::TK; j++) {
      int k = k0 + kx * S::TK + j;
      m.Ps[row * KS + kx * S::TK + j] =
          k >= lo_r && k < hi_r
              ? dq_cu_osm_out(
                    dq_cu_osm_p(dq_cu_logit(s[i][j], a.scale, a.bias, k), mr),
                    lr)
              : 0.0f;
    }
  }
  __syncthreads();
}

/* Statistics: grid x = key tile, y = query head. Each thread < 64 owns one
 * key of the tile and sums its probability over the counted tokens in
 * token order, then adds the sum to stats (one writer per element). */
template <int STORE, class S>
__global__ void __launch_bounds__(S::NT) attn_stats(args a) {
  DQ_CU_DYN_SMEM(float4, smem_raw);
  smem<S> m((float *)smem_raw);
  const int tid = threadIdx.x, k0 = blockIdx.x * BK, h = blockIdx.y;
  float acc = 0.0f;
  bool touched = false;
  for (int tb = a.ts0; tb < a.ts1; tb += S::BQ) {
    bool sees = tid < S::BQ &&
                stat_row(m, a, tid, tb + tid, a.ts1, h, k0, k0 + BK);
    if (!__syncthreads_or(sees))
      continue;
    if (tid < BK)
      for (int i = 0; i < S::BQ; i++)
        touched |= k0 + tid >= m.Lo[i] && k0 + tid < m.Hi[i];
    load_q(m, a);
    stat_probs<STORE, S>(m, a, h / a.group, k0);
    if (tid < BK)
      for (int i = 0; i < S::BQ; i++)
        acc += m.Ps[i * KS + tid];
    __syncthreads();
  }
  if (tid < BK && touched)
    a.stats[(size_t)h * a.stats_stride + k0 + tid] += acc;
}

/* Query mass: grid x = tile of BQ tokens, y = query head. Thread r < BQ
 * owns token tb + r and sums its probabilities over the keys it sees in
 * [qm_lo, qm_hi), tile by tile in key order, then adds the sum to qmass
 * (one writer per element, the same bits on every run). The range is the
 * pinned question (tens of tokens), so a block reads one or two key tiles.
 * Scores are recomputed as attn_main's (after attn_mma, whose scores come
 * from f16 queries, they differ from those behind ml by the f16 rounding
 * of the queries: relative ~1e-3 on the mass, noise for recall). */
template <int STORE, class S>
__global__ void __launch_bounds__(S::NT) attn_qmass(args a) {
  DQ_CU_DYN_SMEM(float4, smem_raw);
  smem<S> m((float *)smem_raw);
  const int tid = threadIdx.x, tb = blockIdx.x * S::BQ, h = blockIdx.y;
  bool sees = tid < S::BQ &&
              stat_row(m, a, tid, tb + tid, a.n_tok, h, a.qm_lo, a.qm_hi);
  if (!__syncthreads_or(sees))
    return;
  /* the keys any row of the block counts */
  int k_lo = INT_MAX, k_hi = 0;
  for (int i = 0; i < S::BQ; i++)
    if (m.Lo[i] < m.Hi[i]) {
      k_lo = m.Lo[i] < k_lo ? m.Lo[i] : k_lo;
      k_hi = m.Hi[i] > k_hi ? m.Hi[i] : k_hi;
    }
  load_q(m, a);
  float acc = 0.0f;
  for (int k0 = k_lo / BK * BK; k0 < k_hi; k0 += BK) {
    stat_probs<STORE, S>(m, a, h / a.group, k0);
    if (tid < S::BQ)
      for (int k = 0; k < BK; k++)
        acc += m.Ps[tid * KS + k];
    __syncthreads();
  }
  if (tid < S::BQ && m.Rt[tid] >= 0)
    a.qmass[(size_t)h * a.qmass_stride + m.Rt[tid]] += acc;
}

/* ---- tensor-core prefill (attn_mma.cuh) -----------------------------------
 * F16 caches, head sizes 64, 128 and 256, sm_80 and up: grid as
 * attn_main's prefill shape (64-row tiles, longest first; KV heads;
 * splits, each times dims::NH column halves: 2 at head size 256). The
 * per-lane steps are attn_mma.cuh's; here the staging, the matrix products
 * and the 4-lane row reductions. It leaves each row's final (max, sum) in
 * ml like attn_main; statistics (GSM's scores) then come from
 * attn_stats_mma, which recomputes the scores on the tensor cores too. */

#if defined(DQ_CU_EMULATE) /* tests/cuda/cuemu.h: the same instructions */
#define DQ_CU_MMA 1
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4],
                                         uint32_t b0, uint32_t b1) {
  cuemu_mma_m16n8k16(d, a, b0, b1);
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4],
                                              const uint16_t *p) {
  cuemu_ldmatrix_x4_trans(r, p);
}
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define DQ_CU_MMA 1
/* d += a b for one m16n8k16 tile (F16 in, F32 accumulate). */
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4],
                                         uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                 "r"(b1));
}
/* Four B fragment registers from shared memory (attn_mma.cuh ldsm_*). */
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4],
                                              const uint16_t *p) {
  unsigned addr = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
               "{%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
#endif

template <int HD>
__global__ void __launch_bounds__(128) attn_mma(args a) {
#ifdef DQ_CU_MMA
  using namespace dq_mma;
  typedef dims<HD> D;
  DQ_CU_DYN_SMEM(float4, smem_raw);
  uint16_t *Ks = (uint16_t *)smem_raw, *Vs = Ks + D::ks_halves;
  int *wr = (int *)(Vs + D::vs_halves); /* per warp: key range */
  const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
  const int rt = gridDim.x - 1 - blockIdx.x, g = blockIdx.y;
  const int sp = blockIdx.z / D::NH, ch = blockIdx.z % D::NH; /* split, half */
  const int ks = a.sp.k_base + sp * a.sp.split_len;
  const int ke = ks + a.sp.split_len < a.n_kv ? ks + a.sp.split_len : a.n_kv;
  lane_state<HD> st;
  lane_init<HD>(st, lane, w, rt, g, a.q, a.n_rows, a.group, a.n_head,
                a.pos0, a.causal, a.window, a.n_kv, ks, ke);
  /* the block's keys: the union of its rows' ranges */
  int lo = INT_MAX, hi = 0;
  for (int j = 0; j < 2; j++)
    if (st.lo[j] < st.hi[j]) {
      lo = min(lo, st.lo[j]);
      hi = max(hi, st.hi[j]);
    }
  for (int o = 16; o > 0; o >>= 1) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  if (lane == 0)
    wr[2 * w] = lo, wr[2 * w + 1] = hi;
  __syncthreads();
  int kb = INT_MAX, kend = 0;
  for (int i = 0; i < WARPS; i++)
    if (wr[2 * i] < wr[2 * i + 1]) {
      kb = min(kb, wr[2 * i]);
      kend = max(kend, wr[2 * i + 1]);
    }
  kb = kend ? kb / KT * KT : 0;
  const int re = a.n_head_kv * HD;
  const uint16_t *K = (const uint16_t *)a.k, *V = (const uint16_t *)a.v;
  for (int k0 = kb; k0 < kend; k0 += KT) {
    /* keys: per (panel, dimension) 16 halves, two 16-byte vectors; panels
     * are stored whole (their keys past n_kv are masked below) */
    for (int e = tid; e < 4 * HD * 2; e += 128) {
      int p = e / (2 * HD), d = (e >> 1) % HD, h8 = (e & 1) * 8;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (k0 + p * 16 < a.n_kv)
        v = *(const uint4 *)(K + dq_cu_panel_index((size_t)(k0 + p * 16), re,
                                                   g * HD + d) + h8);
      *(uint4 *)(Ks + ks_index<HD>(p * 16 + h8, d)) = v;
    }
    /* values: rows of the block's VD columns; zero past n_kv (p = 0
     * times garbage could be NaN) */
    for (int e = tid; e < KT * (D::VD / 8); e += 128) {
      int kk = e / (D::VD / 8), c8 = (e % (D::VD / 8)) * 8, key = k0 + kk;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (key < a.n_kv)
        v = *(const uint4 *)(V + (size_t)key * re + g * HD + ch * D::VD + c8);
      *(uint4 *)(Vs + vs_index<HD>(kk, c8)) = v;
    }
    __syncthreads();
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
#pragma unroll
      for (int i = 0; i < 4; i++)
        st.s[nt][i] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D::KS; kk++)
#pragma unroll
      for (int nt2 = 0; nt2 < 4; nt2++) {
        uint32_t b[4];
        ldsm_x4_trans(b, Ks + ldsm_k_index<HD>(lane, nt2, kk));
        mma16816(st.s[2 * nt2], st.qa[kk], b[0], b[1]);
        mma16816(st.s[2 * nt2 + 1], st.qa[kk], b[2], b[3]);
      }
    float mx[2], sum[2];
    scale_mask<HD>(st, lane, k0, a.scale, a.bias, mx);
#pragma unroll
    for (int j = 0; j < 2; j++) {
      mx[j] = fmaxf(mx[j], __shfl_xor_sync(0xffffffffu, mx[j], 1));
      mx[j] = fmaxf(mx[j], __shfl_xor_sync(0xffffffffu, mx[j], 2));
    }
    softmax_step<HD>(st, mx, sum);
#pragma unroll
    for (int j = 0; j < 2; j++) {
      sum[j] += __shfl_xor_sync(0xffffffffu, sum[j], 1);
      sum[j] += __shfl_xor_sync(0xffffffffu, sum[j], 2);
    }
    softmax_sum<HD>(st, sum);
#pragma unroll
    for (int j = 0; j < 4; j++) {
      uint32_t pa[4] = {p_frag<HD>(st, j, 0), p_frag<HD>(st, j, 1),
                        p_frag<HD>(st, j, 2), p_frag<HD>(st, j, 3)};
#pragma unroll
      for (int n2 = 0; n2 < D::ND / 2; n2++) {
        uint32_t b[4];
        ldsm_x4_trans(b, Vs + ldsm_v_index<HD>(lane, n2, j));
        mma16816(st.o[2 * n2], pa, b[0], b[1]);
        mma16816(st.o[2 * n2 + 1], pa, b[2], b[3]);
      }
    }
    __syncthreads(); /* Ks, Vs free for the next tile */
  }
  const size_t rows_g = (size_t)a.n_rows;
  for (int j = 0; j < 2; j++) {
    if (st.t[j] < 0)
      continue;
    size_t r = (size_t)rt * ROWS + w * 16 + (lane >> 2) + 8 * j;
    float *dst = (a.sp.n_split == 1
                      ? a.out + ((size_t)st.t[j] * a.n_head + st.h[j]) * HD
                      : a.part_o +
                            (((size_t)sp * a.n_head_kv + g) * rows_g + r) *
                                HD) +
                 ch * D::VD;
#pragma unroll
    for (int n = 0; n < D::ND; n++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        float o = st.o[n][2 * j + e];
        dst[n * 8 + c_col(lane, e)] =
            a.sp.n_split == 1 ? dq_cu_osm_out(o, st.l[j]) : o;
      }
    float *ml = a.sp.n_split > 1
                    ? a.part_ml + (((size_t)sp * a.n_head_kv + g) * rows_g + r) * 2
                : a.ml ? a.ml + ((size_t)g * rows_g + r) * 2
                       : NULL;
    if (ml && (lane & 3) == 0 && ch == 0) { /* the halves' are equal */
      ml[0] = st.m[j];
      ml[1] = st.l[j];
    }
  }
#endif
}

/* Statistics after attn_mma (attn_mma.cuh stats_*): grid x = 64-key tile,
 * y = query head; no shared memory, no barriers (warps are independent). */
template <int HD>
__global__ void __launch_bounds__(128) attn_stats_mma(args a) {
#ifdef DQ_CU_MMA
  using namespace dq_mma;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int k0 = blockIdx.x * KT, h = blockIdx.y;
  if (k0 + 16 * w >= a.n_kv)
    return;
  stats_call c;
  c.q = a.q, c.k = (const uint16_t *)a.k, c.ml = a.ml;
  c.n_head = a.n_head, c.re = a.n_head_kv * HD, c.g = h / a.group;
  c.hh = h % a.group, c.h = h, c.group = a.group, c.n_rows = a.n_rows;
  c.pos0 = a.pos0, c.causal = a.causal, c.window = a.window;
  c.n_kv = a.n_kv, c.ts1 = a.ts1, c.scale = a.scale, c.bias = a.bias;
  stats_lane<HD> st;
  stats_init<HD>(st, c, lane, w, k0);
  for (int tb = a.ts0; tb < a.ts1; tb += 16) {
    /* causal: a tile of tokens whose last key is before ours adds nothing */
    int lo_t, hi_t;
    dq_cu_attn_range(a.causal, a.window, a.n_kv,
                     a.pos0 + min(tb + 15, a.ts1 - 1), &lo_t, &hi_t);
    if (hi_t <= k0 + 16 * w)
      continue;
    float s[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
#pragma unroll
    for (int kk = 0; kk < dims<HD>::KS; kk++) {
      uint32_t qa[4] = {stats_q_frag<HD>(c, lane, tb, kk, 0),
                        stats_q_frag<HD>(c, lane, tb, kk, 1),
                        stats_q_frag<HD>(c, lane, tb, kk, 2),
                        stats_q_frag<HD>(c, lane, tb, kk, 3)};
      mma16816(s[0], qa, st.kb[kk][0][0], st.kb[kk][0][1]);
      mma16816(s[1], qa, st.kb[kk][1][0], st.kb[kk][1][1]);
    }
    stats_accum<HD>(st, c, s, lane, w, k0, tb);
  }
#pragma unroll
  for (int nt = 0; nt < 2; nt++)
#pragma unroll
    for (int e = 0; e < 2; e++)
#pragma unroll
      for (int o = 4; o < 32; o <<= 1)
        st.acc[nt][e] += __shfl_xor_sync(0xffffffffu, st.acc[nt][e], o);
  if (lane < 4)
#pragma unroll
    for (int nt = 0; nt < 2; nt++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        int key = k0 + 16 * w + 8 * nt + c_col(lane, e);
        if (key < a.n_kv) /* adding 0 leaves an untouched key as it was */
          a.stats[(size_t)h * a.stats_stride + key] += st.acc[nt][e];
      }
#endif
}

/* Launches kernel k with the shape's shared memory, opting in above the
 * default 48 KiB. */
template <class K>
cudaError_t launch(K k, dim3 grid, int nt, size_t smem_bytes, cudaStream_t st,
                   const args &a) {
  if (smem_bytes > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(
        k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes);
    if (e != cudaSuccess)
      return e;
  }
  DQ_CU_LAUNCH(k, grid, nt, smem_bytes, st)(a);
  return cudaGetLastError();
}

template <int STORE, class S>
cudaError_t run_main(cudaStream_t st, const args &a) {
  dim3 grid((unsigned)((a.n_rows + S::BQ - 1) / S::BQ),
            (unsigned)a.n_head_kv, (unsigned)a.sp.n_split);
  return launch(attn_main<STORE, S>, grid, S::NT, S::smem_bytes, st, a);
}
template <int STORE, class S>
cudaError_t run_stats(cudaStream_t st, const args &a) {
  dim3 grid((unsigned)((a.n_kv + BK - 1) / BK), (unsigned)a.n_head);
  return launch(attn_stats<STORE, S>, grid, S::NT, S::smem_bytes, st, a);
}

template <int STORE, class S>
cudaError_t run_qmass(cudaStream_t st, const args &a) {
  dim3 grid((unsigned)((a.n_tok + S::BQ - 1) / S::BQ), (unsigned)a.n_head);
  return launch(attn_qmass<STORE, S>, grid, S::NT, S::smem_bytes, st, a);
}

template <int HD> cudaError_t run_stats_mma(cudaStream_t st, const args &a) {
  dim3 grid((unsigned)((a.n_kv + dq_mma::KT - 1) / dq_mma::KT),
            (unsigned)a.n_head);
  return launch(attn_stats_mma<HD>, grid, 128, 0, st, a);
}

template <int HD> cudaError_t run_mma(cudaStream_t st, const args &a) {
  typedef dq_mma::dims<HD> D;
  dim3 grid((unsigned)((a.n_rows + dq_mma::ROWS - 1) / dq_mma::ROWS),
            (unsigned)a.n_head_kv, (unsigned)(a.sp.n_split * D::NH));
  return launch(attn_mma<HD>, grid, 128, D::smem_bytes, st, a);
}

/* The tensor-core path is on unless a test turned it off
 * (dq_cu_attn_set_mma). */
int g_use_mma = 1;

/* Whether attn_mma holds tensor-core code on device dev: its PTX (or
 * machine code) was built for sm_80 or later. Not the device's compute
 * capability: an sm_80-89 device runs the compute_75 PTX (CMakeLists.txt),
 * in which the kernel is empty. Asked once per device (0..31). */
int mma_compiled(int dev) {
  static std::atomic<int> known[32]; /* 0 unknown, 1 no, 2 yes */
  const int k = dev >= 0 && dev < 32
                    ? known[dev].load(std::memory_order_relaxed)
                    : 0;
  if (k)
    return k == 2;
  cudaFuncAttributes fa;
  int yes = cudaFuncGetAttributes(&fa, attn_mma<64>) == cudaSuccess &&
            fa.ptxVersion >= 80 && fa.binaryVersion >= 80;
  (void)cudaGetLastError();
  if (dev >= 0 && dev < 32)
    known[dev].store(yes ? 2 : 1, std::memory_order_relaxed);
  return yes;
}

/* Head size bucket: the smallest instantiated DMAX >= hd. */
int dmax_for(int hd) { return hd <= 64 ? 64 : hd <= 128 ? 128 : hd <= 256 ? 256 : 576; }

size_t prefill_smem(int dmax) {
  switch (dmax) {
  case 64: return prefill_shape<64>::smem_bytes;
  case 128: return prefill_shape<128>::smem_bytes;
  case 256: return prefill_shape<256>::smem_bytes;
  default: return prefill_shape<576>::smem_bytes;
  }
}

/* which: 0 main decode shape, 1 main prefill shape, 2 statistics, 3 query
 * mass */
template <int DMAX>
cudaError_t dispatch_store(int which, int store, cudaStream_t st,
                           const args &a) {
  typedef decode_shape<DMAX> D;
  typedef prefill_shape<DMAX> P;
  switch (store) {
  case 0:
    return which == 3   ? run_qmass<0, D>(st, a)
           : which == 2 ? run_stats<0, D>(st, a)
           : which      ? run_main<0, P>(st, a)
                        : run_main<0, D>(st, a);
  case 1:
    return which == 3   ? run_qmass<1, D>(st, a)
           : which == 2 ? run_stats<1, D>(st, a)
           : which      ? run_main<1, P>(st, a)
                        : run_main<1, D>(st, a);
  default:
    return which == 3   ? run_qmass<8, D>(st, a)
           : which == 2 ? run_stats<8, D>(st, a)
           : which      ? run_main<8, P>(st, a)
                        : run_main<8, D>(st, a);
  }
}
cudaError_t dispatch(int which, int dmax, int store, cudaStream_t st,
                     const args &a) {
  switch (dmax) {
  case 64: return dispatch_store<64>(which, store, st, a);
  case 128: return dispatch_store<128>(which, store, st, a);
  case 256: return dispatch_store<256>(which, store, st, a);
  default: return dispatch_store<576>(which, store, st, a);
  }
}

/* The launch of one call: its arguments, tile shape and split, and the
 * workspace floats it needs (split partials, then the rows' final (max,
 * sum) for statistics). Shared by the launcher and dq_cu_attn_ws_bytes so
 * a lent workspace is sized by the same rule. */
struct plan {
  args x;
  int big, dmax, want_stats, want_qmass, n_blocks;
  int mma; /* the tensor-core kernel (attn_mma) instead of attn_main */
  size_t rows_all;
};

static size_t plan_floats(const plan &p) {
  const size_t part = p.x.sp.n_split > 1 ? (size_t)p.x.sp.n_split *
                                               p.rows_all *
                                               ((size_t)p.x.hd + 2)
                                         : 0;
  return part + (p.want_stats || p.want_qmass ? p.rows_all * 2 : 0);
}

/* Checks the call and plans it; 0 or a cudaError_t. *empty: nothing to do. */
static int make_plan(const dq_attn *a, plan *p, int *empty) {
  const int hd = a->head_dim, store = a->store;
  *empty = 0;
  if (a->n_head_kv <= 0 || a->n_head <= 0 || a->n_head % a->n_head_kv ||
      a->n_kv <= 0 || hd <= 0 || hd > 576 || a->n_tok < 0 ||
      (store != 0 && store != 1 && store != 8) ||
      (store == 1 && (hd % 2 || ((uintptr_t)a->k | (uintptr_t)a->v) & 3)) ||
      (store == 8 && (hd % 32 || ((uintptr_t)a->k | (uintptr_t)a->v) & 1)))
    return (int)cudaErrorInvalidValue;
  if (a->n_tok == 0) {
    *empty = 1;
    return 0;
  }
  int dev = 0, n_sm = 0, optin = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (!e)
    e = cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, dev);
  if (!e)
    e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                               dev);
  if (e)
    return (int)e;

  args &x = p->x;
  x = args{};
  x.q = a->q;
  x.k = a->k;
  x.v = a->v;
  x.n_tok = a->n_tok;
  x.pos0 = a->pos0;
  x.n_kv = a->n_kv;
  x.n_head = a->n_head;
  x.n_head_kv = a->n_head_kv;
  x.hd = hd;
  x.group = a->n_head / a->n_head_kv;
  x.causal = a->causal;
  x.window = a->window;
  x.scale = a->scale;
  x.n_rows = a->n_tok * x.group;
  x.out = a->out;
  x.stats = a->stats;
  x.stats_stride = a->stats_stride;
  x.ts0 = a->stats_q0 - a->pos0 > 0 ? a->stats_q0 - a->pos0 : 0;
  x.ts1 = a->stats_q1 - a->pos0 < a->n_tok ? a->stats_q1 - a->pos0 : a->n_tok;
  p->want_stats = a->stats && x.ts0 < x.ts1;
  x.bias = a->bias;
  x.qmass = a->qmass;
  x.qmass_stride = a->qmass_stride;
  x.qm_lo = a->qmass_lo > 0 ? a->qmass_lo : 0;
  x.qm_hi = a->qmass_hi < a->n_kv ? a->qmass_hi : a->n_kv;
  p->want_qmass = a->qmass && x.qm_lo < x.qm_hi;

  p->dmax = dmax_for(hd);
  p->big = x.n_rows > 32 && prefill_smem(p->dmax) <= (size_t)optin;
  /* tensor cores for F16 prefill of the common head sizes; its row tiles
   * are the prefill shape's 64, so the split plan below holds for both */
  p->mma = g_use_mma && p->big && store == 1 &&
           (hd == 64 || hd == 128 || hd == 256) && mma_compiled(dev) &&
           ((uintptr_t)a->k | (uintptr_t)a->v) % 16 == 0;
  const int bq = !p->big ? 8 : p->dmax <= 256 ? 64 : 32;
  p->n_blocks = (x.n_rows + bq - 1) / bq * a->n_head_kv;
  /* decode blocks are short and light: ask for more of them in flight */
  const int target = (p->big ? 2 : 4) * n_sm;
  x.sp = dq_cu_attn_plan(a, p->n_blocks, target, 4);
  p->rows_all = (size_t)x.n_rows * a->n_head_kv;
  return 0;
}

/* Points the split partials and statistics rows into workspace w. */
static void place_ws(plan *p, float *w) {
  args &x = p->x;
  const size_t part = x.sp.n_split > 1
                          ? (size_t)x.sp.n_split * p->rows_all *
                                ((size_t)x.hd + 2)
                          : 0;
  if (x.sp.n_split > 1) {
    x.part_o = w;
    x.part_ml = w + (size_t)x.sp.n_split * p->rows_all * x.hd;
  }
  x.ml = p->want_stats || p->want_qmass ? w + part : NULL;
}

} // namespace

extern "C" void dq_cu_attn_set_mma(int on) { g_use_mma = on != 0; }

extern "C" size_t dq_cu_attn_ws_bytes(const dq_attn *a) {
  plan p;
  int empty = 0;
  if (make_plan(a, &p, &empty) || empty)
    return 0;
  return plan_floats(p) * sizeof(float);
}

extern "C" int dq_cu_attention(void *stream, const dq_attn *a) {
  cudaStream_t st = (cudaStream_t)stream;
  plan p;
  int empty = 0;
  int rc = make_plan(a, &p, &empty);
  if (rc || empty)
    return rc;
  args &x = p.x;

  /* the lent workspace when it is large enough, else one from the pool */
  void *ws = NULL;
  cudaError_t e = cudaSuccess;
  size_t n_floats = plan_floats(p);
  if (n_floats && a->ws && n_floats * sizeof(float) <= a->ws_bytes) {
    place_ws(&p, (float *)a->ws);
    n_floats = 0;
  }
  while (n_floats) {
    e = cudaMallocAsync(&ws, n_floats * sizeof(float), st);
    if (!e) {
      place_ws(&p, (float *)ws);
      break;
    }
    (void)cudaGetLastError(); /* not sticky: clear it */
    if (x.sp.n_split == 1)
      return (int)e;
    x.sp = dq_cu_attn_plan(a, p.n_blocks, 0, 4); /* no split: less memory */
    n_floats = plan_floats(p);
  }

  e = !p.mma ? dispatch(p.big, p.dmax, a->store, st, x)
      : a->head_dim == 64  ? run_mma<64>(st, x)
      : a->head_dim == 128 ? run_mma<128>(st, x)
                           : run_mma<256>(st, x);
  if (!e && x.sp.n_split > 1) {
    DQ_CU_LAUNCH(attn_combine,
                 dim3((unsigned)x.n_rows, (unsigned)a->n_head_kv), 128, 0,
                 st)(x);
    e = cudaGetLastError();
  }
  if (!e && p.want_stats)
    e = !p.mma ? dispatch(2, p.dmax, a->store, st, x)
        : a->head_dim == 64  ? run_stats_mma<64>(st, x)
        : a->head_dim == 128 ? run_stats_mma<128>(st, x)
                             : run_stats_mma<256>(st, x);
  if (!e && p.want_qmass)
    e = dispatch(3, p.dmax, a->store, st, x);
  if (ws) {
    cudaError_t e2 = cudaFreeAsync(ws, st);
    if (!e)
      e = e2;
  }
  return (int)e;
}

/* ---- self-check of the tensor-core path ----------------------------------
 * One small prefill per head size (80 query rows of 2 KV heads over 140
 * keys, causal over a cache, statistics on), run with attn_mma and with
 * attn_main on this device, compared with the tests' tolerances (outputs
 * 4e-3 x max |v|, statistics 4e-4). The fragment layouts attn_mma relies
 * on come from the PTX ISA; this is what keeps a device that disagrees
 * from giving wrong answers: attn_mma is then turned off. */
extern "C" int dq_cu_attn_selfcheck(void *stream, char *why, size_t why_len) {
  cudaStream_t st = (cudaStream_t)stream;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e) {
    snprintf(why, why_len, "attention self-check: %s", cudaGetErrorString(e));
    return -1;
  }
  if (!g_use_mma || !mma_compiled(dev))
    return 0; /* attn_mma is not used here */
  const int n_tok = 40, pos0 = 100, n_kv = pos0 + n_tok, nh = 4, nkv = 2;
  const int rows = (n_kv + 15) / 16 * 16;
  int verdict = 0;
  for (int hd = 64; hd <= 256 && !verdict; hd *= 2) {
    const int re = nkv * hd;
    const size_t nq = (size_t)n_tok * nh * hd, ncache = (size_t)rows * re;
    const size_t nst = (size_t)nh * n_kv;
    float *hq = (float *)malloc(nq * 4);
    uint16_t *hk = (uint16_t *)calloc(ncache, 2), *hv = (uint16_t *)calloc(ncache, 2);
    float *ho = (float *)malloc(2 * nq * 4), *hs = (float *)malloc(2 * nst * 4);
    uint32_t x = 12345u + (uint32_t)hd;
    auto rnd = [&x]() { /* uniform in [-1, 1) */
      x = x * 1664525u + 1013904223u;
      return (float)(x >> 8) / 8388608.0f - 1.0f;
    };
    void *dbuf = NULL;
    size_t nbytes = nq * 4 + 2 * ncache * 2 + 2 * nq * 4 + 2 * nst * 4;
    if (!hq || !hk || !hv || !ho || !hs ||
        (e = cudaMalloc(&dbuf, nbytes))) {
      free(hq), free(hk), free(hv), free(ho), free(hs);
      if (e)
        (void)cudaGetLastError();
      return 0; /* no memory for the check now: not a verdict */
    }
    for (size_t i = 0; i < nq; i++)
      hq[i] = rnd();
    for (int r = 0; r < n_kv; r++)
      for (int i = 0; i < re; i++) {
        hk[dq_cu_panel_index((size_t)r, re, i)] = dq_mma::f2h(rnd());
        hv[(size_t)r * re + i] = dq_mma::f2h(rnd());
      }
    float *dq = (float *)dbuf;
    uint16_t *dk = (uint16_t *)(dq + nq), *dv = dk + ncache;
    float *dout = (float *)(dv + ncache), *dst = dout + 2 * nq;
    e = cudaMemcpyAsync(dq, hq, nq * 4, cudaMemcpyHostToDevice, st);
    if (!e)
      e = cudaMemcpyAsync(dk, hk, ncache * 2, cudaMemcpyHostToDevice, st);
    if (!e)
      e = cudaMemcpyAsync(dv, hv, ncache * 2, cudaMemcpyHostToDevice, st);
    if (!e)
      e = cudaMemsetAsync(dst, 0, 2 * nst * 4, st);
    int saved = g_use_mma;
    for (int path = 0; path < 2 && !e; path++) {
      dq_attn a = {};
      a.q = dq, a.k = dk, a.v = dv, a.store = 1;
      a.n_tok = n_tok, a.pos0 = pos0, a.n_kv = n_kv;
      a.n_head = nh, a.n_head_kv = nkv, a.head_dim = hd, a.causal = 1;
      a.scale = 1.0f / sqrtf((float)hd), a.out = dout + path * nq;
      a.stats = dst + path * nst, a.stats_stride = n_kv;
      a.stats_q0 = pos0 + 10, a.stats_q1 = n_kv;
      g_use_mma = path == 0;
      e = (cudaError_t)dq_cu_attention(st, &a);
    }
    g_use_mma = saved;
    if (!e)
      e = cudaMemcpyAsync(ho, dout, 2 * nq * 4, cudaMemcpyDeviceToHost, st);
    if (!e)
      e = cudaMemcpyAsync(hs, dst, 2 * nst * 4, cudaMemcpyDeviceToHost, st);
    if (!e)
      e = cudaStreamSynchronize(st);
    if (e) {
      snprintf(why, why_len, "attention self-check (head size %d): %s", hd,
               cudaGetErrorString(e));
      verdict = -1;
    } else {
      double d = 0, ds = 0;
      for (size_t i = 0; i < nq; i++)
        d = fmax(d, fabs((double)ho[i] - ho[nq + i]));
      for (size_t i = 0; i < nst; i++)
        ds = fmax(ds, fabs((double)hs[i] - hs[nst + i]));
      if (!(d <= 4e-3 && ds <= 4e-4)) { /* NaN fails too */
        snprintf(why, why_len,
                 "tensor-core attention disagrees with the CUDA-core kernel "
                 "on this device (head size %d: outputs %.2e, statistics "
                 "%.2e apart): turned off",
                 hd, d, ds);
        g_use_mma = 0;
        verdict = 1;
      }
    }
    cudaFree(dbuf);
    free(hq), free(hk), free(hv), free(ho), free(hs);
  }
  return verdict;
}
