/*
 * attn_moe.cuh - the pure per-row and per-token logic of the CUDA attention
 * (attn.cu) and mixture-of-experts (moe.cu) kernels, as __host__ __device__
 * inline functions, so that a host-only test (tests/cuda/test_cuda_logic.cu)
 * checks it against the CPU backend on a machine without a GPU:
 *   - KV cache addressing for every store layout (as the CPU backend's
 *     kv_store writes it: F32 rows, F16 rows, F16 key panels, Q8_0 rows);
 *   - a query's key range (causal, sliding window);
 *   - the online-softmax steps of a key tile, the merge of split partials,
 *     and the split plan of the launcher;
 *   - the routing rule of engine/moe.c (dq_moe_route_one), written once over
 *     a "team" of lanes: a warp on the device (moe.cu), emulated lanes on
 *     the host (the test), one lane giving dq_moe_route_one's exact order of
 *     operations.
 * Not here: thread mapping, shared-memory staging and launches (the .cu
 * files). C++ only; included by the .cu files and the test.
 */
#ifndef DQ_CUDA_ATTN_MOE_CUH
#define DQ_CUDA_ATTN_MOE_CUH

#include "cuda_ops.h"

#include <cuda_fp16.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define DQ_CU_HD static inline __host__ __device__
/* Full unrolling in device code (the host compiler has no such pragma). */
#ifdef __CUDA_ARCH__
#define DQ_CU_UNROLL _Pragma("unroll")
#else
#define DQ_CU_UNROLL
#endif

/* ---- KV cache addressing ------------------------------------------------
 * A cache row holds row_elems = n_head_kv * head_dim elements; element i of
 * row r (KV head g, dimension d: i = g * head_dim + d) lives at: */

/* F16 key panels of 16 positions: halves index (engine/backend.h). */
DQ_CU_HD size_t dq_cu_panel_index(size_t row, int row_elems, int i) {
  return ((row / 16) * (size_t)row_elems + (size_t)i) * 16 + row % 16;
}
/* Q8_0 rows (row_elems % 32 == 0): byte offset of the 34-byte block (f16
 * scale, then 32 int8) holding element i; the element is at +2 + i % 32. */
DQ_CU_HD size_t dq_cu_q8_block(size_t row, int row_elems, int i) {
  return row * (size_t)(row_elems / 32) * 34 + (size_t)(i / 32) * 34;
}

/* IEEE binary16 bits to float (exact). */
DQ_CU_HD float dq_cu_h2f(uint16_t bits) {
  __half_raw r;
  r.x = bits;
  return __half2float(__half(r));
}

/* Element i of cache row `row` as a float, per store: keys (STORE 1: the
 * panel layout) and values (STORE 1: F16 rows). The kernels stage tiles with
 * the same address arithmetic; the test checks these against kv_store. */
DQ_CU_HD float dq_cu_q8_elem(const void *c, size_t row, int row_elems, int i) {
  const uint8_t *b = (const uint8_t *)c + dq_cu_q8_block(row, row_elems, i);
  uint16_t d = (uint16_t)(b[0] | (b[1] << 8));
  return (float)(int8_t)b[2 + i % 32] * dq_cu_h2f(d);
}
template <int STORE>
DQ_CU_HD float dq_cu_kv_key(const void *c, size_t row, int row_elems, int i) {
  if (STORE == 0)
    return ((const float *)c)[row * (size_t)row_elems + (size_t)i];
  if (STORE == 1)
    return dq_cu_h2f(((const uint16_t *)c)[dq_cu_panel_index(row, row_elems, i)]);
  return dq_cu_q8_elem(c, row, row_elems, i);
}
template <int STORE>
DQ_CU_HD float dq_cu_kv_val(const void *c, size_t row, int row_elems, int i) {
  if (STORE == 0)
    return ((const float *)c)[row * (size_t)row_elems + (size_t)i];
  if (STORE == 1)
    return dq_cu_h2f(((const uint16_t *)c)[row * (size_t)row_elems + (size_t)i]);
  return dq_cu_q8_elem(c, row, row_elems, i);
}

/* ---- attention: key ranges, online softmax, splits ---------------------- */

/* Keys [*lo, *hi) seen by the query at position p (the CPU backend's rule:
 * the window applies to causal attention only). Empty when *lo >= *hi. */
DQ_CU_HD void dq_cu_attn_range(int causal, int window, int n_kv, int p,
                               int *lo, int *hi) {
  *hi = causal ? (p + 1 < n_kv ? p + 1 : n_kv) : n_kv;
  *lo = window > 0 && causal && p - window + 1 > 0 ? p - window + 1 : 0;
}

/* Online softmax of one query row over key tiles. State: running max m
 * (-INFINITY before any key), running sum l of exp(s - m), and the output
 * accumulator o (sum of exp(s - m) v). For a tile whose largest (masked:
 * -INFINITY) score is t:
 *   m' = dq_cu_osm_max(m, t); a = dq_cu_osm_alpha(m, m');
 *   p_k = dq_cu_osm_p(s_k, m'); l' = l a + sum p_k; o' = o a + sum p_k v_k.
 * A row with no key yet keeps m = -INFINITY, l = 0, o = 0 (a = 1, p = 0). */
DQ_CU_HD float dq_cu_osm_max(float m, float t) { return fmaxf(m, t); }
DQ_CU_HD float dq_cu_osm_alpha(float m_old, float m_new) {
  return m_new == -INFINITY ? 1.0f : expf(m_old - m_new);
}
DQ_CU_HD float dq_cu_osm_p(float s, float m_new) {
  return m_new == -INFINITY ? 0.0f : expf(s - m_new);
}
/* Merges partial (mb, lb, ob) into (m, l, o): *sa and *sb receive the
 * factors for the two output vectors (o' = o sa + ob sb). Partials merge in
 * any order (up to rounding); an empty partial (-INFINITY, 0) is neutral. */
DQ_CU_HD void dq_cu_osm_merge(float *m, float *l, float mb, float lb,
                              float *sa, float *sb) {
  float mn = fmaxf(*m, mb);
  *sa = dq_cu_osm_alpha(*m, mn);
  *sb = dq_cu_osm_alpha(mb, mn);
  *l = *l * *sa + lb * *sb;
  *m = mn;
}
/* The normalised output element or probability: o / l, 0 for a row that
 * saw no key (all its logits -inf: the CPU softmax's rule). */
DQ_CU_HD float dq_cu_osm_out(float o, float l) { return l > 0.0f ? o / l : 0.0f; }

/* Key tiles of the attention kernels: splits start on tile boundaries. */
#define DQ_CU_ATTN_BK 64
#define DQ_CU_ATTN_MAX_SPLIT 256

/* How one attention call's keys are split across blocks (flash-decoding).
 * The keys any query sees lie in [k_base, k_end); split s covers
 * [k_base + s * split_len, + split_len) (clipped to n_kv), split_len a
 * multiple of DQ_CU_ATTN_BK. n_split == 1: no partials, no combine. */
typedef struct dq_cu_split {
  int k_base, k_end, n_split, split_len;
} dq_cu_split;

/* Plans the split for n_blocks blocks per split (row tiles x KV heads) on a
 * device wanting about target_blocks blocks in flight; a split gets at least
 * min_tiles key tiles so its fixed cost (query tile load, partial write) is
 * amortised. */
static inline __host__ dq_cu_split dq_cu_attn_plan(const dq_attn *a,
                                                   int n_blocks,
                                                   int target_blocks,
                                                   int min_tiles) {
  dq_cu_split sp;
  int lo0, hi0, lo1, hi1;
  /* lo and hi grow with the position: the first and last tokens bound all */
  dq_cu_attn_range(a->causal, a->window, a->n_kv, a->pos0, &lo0, &hi0);
  dq_cu_attn_range(a->causal, a->window, a->n_kv, a->pos0 + a->n_tok - 1,
                   &lo1, &hi1);
  sp.k_base = lo0 / DQ_CU_ATTN_BK * DQ_CU_ATTN_BK;
  sp.k_end = hi1 > sp.k_base ? hi1 : sp.k_base;
  int n_tiles = (sp.k_end - sp.k_base + DQ_CU_ATTN_BK - 1) / DQ_CU_ATTN_BK;
  int want = n_blocks > 0 ? (target_blocks + n_blocks - 1) / n_blocks : 1;
  int most = n_tiles / (min_tiles > 0 ? min_tiles : 1);
  int n = want < most ? want : most;
  n = n < 1 ? 1 : n > DQ_CU_ATTN_MAX_SPLIT ? DQ_CU_ATTN_MAX_SPLIT : n;
  int tps = n_tiles > 0 ? (n_tiles + n - 1) / n : 1; /* tiles per split */
  sp.n_split = n_tiles > 0 ? (n_tiles + tps - 1) / tps : 1;
  sp.split_len = tps * DQ_CU_ATTN_BK;
  return sp;
}

/* ---- mixture-of-experts routing ----------------------------------------
 * engine/moe.c's dq_moe_route_one over a team of n_lanes lanes (a power of
 * two <= 32). Lane l handles experts l, l + n_lanes, ...; the team combines
 * lane partials by a butterfly (xor offsets n_lanes/2 .. 1), every merge
 * commutative, so all lanes agree. With one lane the operations are
 * dq_moe_route_one's, in its order, each rounded alone (same bits where
 * expf is the same: on the host, the test checks it); with more, the
 * softmax sum is added in another order (in double, so the weights move by
 * an ulp at most). The device's expf may differ from the host libm's by an
 * ulp or two, so scores tied within that margin (not exact ties, which
 * stay ties) may route differently from the CPU backend. Top-k picks, best first, the
 * experts ranking after the previous pick in the order (score descending,
 * id ascending), skipping -INFINITY, which is exactly moe.c's choice
 * (ties to the lower id) for scores that are not NaN; NaN scores are never
 * picked here (moe.c's choice with NaN depends on its scan order).
 *
 * A team T provides (uniform code runs on every lane of a warp, once on the
 * host; per-lane code is the lambda given to each/max/sum/best):
 *   int n_lanes(); bool leader();  - lane 0 does the single-lane work
 *   void sync();                   - orders scratch writes between lanes
 *   void each(f);                  - f(lane) on every lane
 *   float max(f); double sum(f); dq_cu_pick best(f)
 *                                  - f(lane)'s values combined by
 *                                    dq_cu_max2, +, dq_cu_pick_best */

typedef struct dq_cu_pick {
  float v;
  int i; /* < 0: none */
} dq_cu_pick;

/* Whether (va, ia) ranks before (vb, ib): higher score, then lower id. */
DQ_CU_HD bool dq_cu_moe_before(float va, int ia, float vb, int ib) {
  return va > vb || (va == vb && ia < ib);
}
DQ_CU_HD dq_cu_pick dq_cu_pick_best(dq_cu_pick a, dq_cu_pick b) {
  if (b.i < 0)
    return a;
  if (a.i < 0)
    return b;
  return dq_cu_moe_before(b.v, b.i, a.v, a.i) ? b : a;
}
DQ_CU_HD float dq_cu_max2(float a, float b) { return b > a ? b : a; }
/* a * b rounded on its own: nvcc would otherwise contract it with a
 * following add into one fused multiply-add, which moe.c does not do. */
DQ_CU_HD float dq_cu_mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/* A key's logit: the raw score q.k times scale (rounded on its own, as the
 * CPU stores it), plus the key's log weight where there is one (dq_attn
 * bias: GSM's merged slots). */
DQ_CU_HD float dq_cu_logit(float s, float scale, const float *bias, int k) {
  float x = dq_cu_mul_rn(s, scale);
  return bias ? x + bias[k] : x;
}

/* One lane's candidate for the next top-k pick: the best v[e], e = lane,
 * lane + n_lanes, ..., that ranks after prev (prev.i < 0: the first pick). */
DQ_CU_HD dq_cu_pick dq_cu_topk_scan(const float *v, int n, int lane,
                                    int n_lanes, dq_cu_pick prev) {
  dq_cu_pick best = {0.0f, -1};
  for (int e = lane; e < n; e += n_lanes) {
    float x = v[e];
    if (x == -INFINITY)
      continue;
    if (prev.i >= 0 && !dq_cu_moe_before(prev.v, prev.i, x, e))
      continue;
    if (best.i < 0 || x > best.v) { /* e ascending: ties keep the lower */
      best.v = x;
      best.i = e;
    }
  }
  return best;
}

/* The k best of v[0..n) into out (leader writes), as moe.c's top_k: none
 * left (all -INFINITY) gives id 0. */
#pragma nv_exec_check_disable
template <class T>
__host__ __device__ inline void dq_cu_topk_team(T &tm, const float *v, int n,
                                                int k, int32_t *out) {
  dq_cu_pick prev = {0.0f, -1};
  int nl = tm.n_lanes();
  for (int j = 0; j < k; j++) {
    dq_cu_pick b = tm.best(
        [&](int lane) { return dq_cu_topk_scan(v, n, lane, nl, prev); });
    if (b.i >= 0)
      prev = b;
    if (tm.leader())
      out[j] = b.i < 0 ? 0 : b.i;
  }
}

/* Routes one token: scratch holds 2 * n_expert + n_group floats shared by
 * the team; ids, w (n_used each) and flat (n_used, may be NULL) are written
 * by the leader and ordered by a final sync. */
#pragma nv_exec_check_disable
template <class T>
__host__ __device__ inline void
dq_cu_moe_route_team(T &tm, const dq_moe_cfg *c, const float *logits,
                     const float *bias, float *scratch, int32_t *ids,
                     float *w, int32_t *flat) {
  const int n = c->n_expert, k = c->n_used, nl = tm.n_lanes();
  float *p = scratch, *sel = scratch + n;
  if (c->gating == 1) { /* DQ_MOE_SOFTMAX */
    float mx = tm.max([&](int lane) {
      float m = -INFINITY;
      for (int e = lane; e < n; e += nl)
        m = logits[e] > m ? logits[e] : m;
      return m;
    });
    double sum = tm.sum([&](int lane) {
      double s = 0;
      for (int e = lane; e < n; e += nl)
        s += p[e] = expf(logits[e] - mx);
      return s;
    });
    float inv = (float)(1.0 / sum);
    tm.each([&](int lane) {
      for (int e = lane; e < n; e += nl) {
        p[e] = dq_cu_mul_rn(p[e], inv);
        sel[e] = bias ? p[e] + bias[e] : p[e];
      }
    });
  } else { /* DQ_MOE_SIGMOID */
    tm.each([&](int lane) {
      for (int e = lane; e < n; e += nl) {
        p[e] = 1.0f / (1.0f + expf(-logits[e]));
        sel[e] = bias ? p[e] + bias[e] : p[e];
      }
    });
  }
  tm.sync();
  if (flat)
    dq_cu_topk_team(tm, sel, n, k, flat);
  tm.sync();
  if (c->n_group > 1) {
    /* group score: the sum of the group's two best selection scores; only
     * the n_group_used best groups (ties: lower id) stay eligible */
    const int ng = c->n_group, gs = n / ng, ngu = c->n_group_used;
    float *gscore = scratch + 2 * n;
    tm.each([&](int lane) {
      for (int g = lane; g < ng; g += nl) {
        const float *v = sel + g * gs;
        float b1 = -INFINITY, b2 = -INFINITY;
        for (int i = 0; i < gs; i++) {
          if (v[i] > b1) {
            b2 = b1;
            b1 = v[i];
          } else if (v[i] > b2) {
            b2 = v[i];
          }
        }
        gscore[g] = gs > 1 ? b1 + b2 : b1;
      }
    });
    tm.sync();
    tm.each([&](int lane) {
      for (int g = lane; g < ng; g += nl) {
        int rank = 0;
        for (int h = 0; h < ng; h++)
          rank += gscore[h] > gscore[g] || (gscore[h] == gscore[g] && h < g);
        if (rank >= ngu)
          for (int i = 0; i < gs; i++)
            sel[g * gs + i] = -INFINITY;
      }
    });
    tm.sync();
  }
  dq_cu_topk_team(tm, sel, n, k, ids);
  tm.sync();
  if (tm.leader()) {
    float sum = 0.0f;
    for (int j = 0; j < k; j++)
      sum += w[j] = p[ids[j]];
    float mul = c->scale;
    if (c->norm)
      mul /= sum > 6.103515625e-5f ? sum : 6.103515625e-5f;
    for (int j = 0; j < k; j++)
      w[j] = dq_cu_mul_rn(w[j], mul);
  }
  tm.sync();
}

/* The configuration checks of engine/moe.c's dq_moe_cfg_check: 1 if valid. */
DQ_CU_HD int dq_cu_moe_cfg_ok(const dq_moe_cfg *c) {
  if (c->n_expert < 1 || c->n_expert > 4096 || c->n_used < 1 ||
      c->n_used > c->n_expert || (c->gating != 1 && c->gating != 2) ||
      !(c->scale > 0.0f) || !isfinite(c->scale))
    return 0;
  if (c->n_group > 1 &&
      (c->n_expert % c->n_group || c->n_group_used < 1 ||
       c->n_group_used > c->n_group ||
       c->n_group_used * (c->n_expert / c->n_group) < c->n_used))
    return 0;
  return 1;
}

#endif /* DQ_CUDA_ATTN_MOE_CUH */
