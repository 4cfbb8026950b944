/*
 * test_cuda_logic.cu - the GPU kernels' pure logic (kernels/cuda/attn_moe.cuh)
 * on the host, so it runs in CI without a GPU. What runs on a device (thread
 * mapping, staging, launches) is not covered here.
 *
 *   routing   - dq_cu_moe_route_team with 1 lane against engine/moe.c's
 *               dq_moe_route_one (ids exact, weights within 1e-6), and with
 *               2..32 emulated lanes (the device's warp butterfly), on
 *               random logits and configurations: softmax, sigmoid with
 *               selection bias, groups, heavy ties;
 *   softmax   - the online-softmax steps tile by tile over random score
 *               rows (masked keys, empty rows), and split partials merged
 *               in several orders, against a direct softmax in double;
 *   layouts   - the cache addressing against the CPU backend's kv_store
 *               (F16 key panels, F16/F32 rows, Q8_0 rows);
 *   gathers   - GSM's row gathers (gather.cuh) against the CPU backend's
 *               kv_gather, every store;
 *   attention - the split plan plus the per-row algorithm of attn.cu (tiles
 *               of 64 within splits, online softmax, merge of the splits,
 *               statistics from the final max and sum) emulated with those
 *               functions, against the CPU backend's attention on random
 *               caches of every store;
 *   mma       - the tensor-core prefill kernel (attn.cu attn_mma): its
 *               per-lane steps (attn_mma.cuh) run for every lane of every
 *               warp, the warp-wide steps emulated here (m16n8k16 products
 *               through the PTX fragment coordinates, which must cover each
 *               matrix element once; the 4-lane row reductions), the
 *               staging as the kernel does it, split partials merged in
 *               order, against the CPU backend's attention on random F16
 *               caches (causal over a cache, sliding window, non-causal,
 *               GQA, ragged row tiles, splits, statistics); the ldmatrix
 *               addressing against the fragments it replaces;
 *   top-k     - the device top-k selection (topk.cuh): every thread's
 *               steps of the one-block kernel, the collection in shuffled
 *               thread order, against the CPU's dq_top_k;
 *   folds     - GSM's time_decay folds (merge.cu k_fold_*): the scan's
 *               steps over (row, element) from one half of the scratch into
 *               the other, the last row stored (Q8_0 block by block),
 *               against the CPU backend's kv_fold, every store: the same
 *               row bytes;
 *   merges    - GSM's similarity merges (merge.cu, merge.cuh): both
 *               kernels' steps for every emulated thread (the 16 lanes'
 *               partial sums combined as the shuffles combine them, each
 *               thread's strided argmax, the warp butterflies and the
 *               block's pick, the merged rows element by element and Q8_0
 *               block by block, the links) against the CPU backend's
 *               kv_merge on random rows with ties and zero keys, every
 *               store: the same merges and the same row bytes.
 */
extern "C" {
#include "backend.h"
}
#include "attn_mma.cuh"
#include "attn_moe.cuh"
#include "cuda_ops.h"
#include "gather.cuh"
#include "merge.cuh"
#include "test.h"
#include "topk.cuh"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

typedef struct {
  uint64_t s;
} rng;
static uint64_t rng_next(rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static float rng_unif(rng *r) { /* [0, 1) */
  return (float)(rng_next(r) >> 40) / (float)(1 << 24);
}
static int rng_int(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }
static float rng_normal(rng *r) {
  float u = rng_unif(r) + 1e-7f, v = rng_unif(r);
  return sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
}

/* The host side of attn_moe.cuh's team: nl emulated lanes whose partials
 * combine by the device's butterfly (xor offsets nl/2 .. 1, each lane
 * merging its value with its partner's), lane 0's result returned. */
struct host_team {
  int nl;
  int n_lanes() const { return nl; }
  bool leader() const { return true; }
  void sync() const {}
  template <class F> void each(F f) const {
    for (int l = 0; l < nl; l++)
      f(l);
  }
  template <class V, class F, class M> V reduce(F f, M merge) const {
    V v[32], u[32];
    for (int l = 0; l < nl; l++)
      v[l] = f(l);
    for (int off = nl / 2; off > 0; off >>= 1) {
      for (int l = 0; l < nl; l++)
        u[l] = merge(v[l], v[l ^ off]);
      for (int l = 0; l < nl; l++)
        v[l] = u[l];
    }
    return v[0];
  }
  template <class F> float max(F f) const {
    return reduce<float>(f, [](float a, float b) { return dq_cu_max2(a, b); });
  }
  template <class F> double sum(F f) const {
    return reduce<double>(f, [](double a, double b) { return a + b; });
  }
  template <class F> dq_cu_pick best(F f) const {
    return reduce<dq_cu_pick>(
        f, [](dq_cu_pick a, dq_cu_pick b) { return dq_cu_pick_best(a, b); });
  }
};

/* ---- routing -------------------------------------------------------------- */

/* A random valid configuration (checked by moe.c's own validator). */
static dq_moe_cfg random_cfg(rng *r) {
  static const int ns[] = {1, 2, 3, 8, 16, 60, 64, 128, 160, 256};
  dq_moe_cfg c;
  memset(&c, 0, sizeof c);
  for (;;) {
    c.n_expert = ns[rng_int(r, 10)];
    int kmax = c.n_expert < 10 ? c.n_expert : 10;
    c.n_used = 1 + rng_int(r, kmax);
    c.gating = rng_int(r, 2) ? DQ_MOE_SOFTMAX : DQ_MOE_SIGMOID;
    c.norm = rng_int(r, 2);
    c.scale = rng_int(r, 2) ? 1.0f : 2.5f;
    c.n_group = 1;
    c.n_group_used = 0;
    if (rng_int(r, 2)) {
      static const int gs[] = {2, 4, 8, 16};
      c.n_group = gs[rng_int(r, 4)];
      c.n_group_used = 1 + rng_int(r, c.n_group);
    }
    if (!dq_moe_cfg_check(&c))
      return c;
  }
}

static void test_routing(void) {
  rng r = {42};
  enum { MAXN = 256 };
  float logits[MAXN], bias[MAXN], scratch[3 * MAXN], cscratch[3 * MAXN];
  int n_cases = SANITIZED ? 800 : 4000, bad = 0;
  for (int it = 0; it < n_cases; it++) {
    dq_moe_cfg c = random_cfg(&r);
    CHECK(dq_cu_moe_cfg_ok(&c));
    int n = c.n_expert, k = c.n_used, mode = rng_int(&r, 5);
    for (int e = 0; e < n; e++) {
      switch (mode) {
      case 0: logits[e] = 3.0f * rng_normal(&r); break;
      case 1: logits[e] = (float)(rng_int(&r, 5) - 2); break; /* ties */
      case 2: logits[e] = 0.25f; break;                       /* all tied */
      case 3: logits[e] = 60.0f * rng_normal(&r); break;  /* saturated */
      default: logits[e] = 0.5f * (float)rng_int(&r, 3); break;
      }
    }
    int bias_mode = rng_int(&r, 3); /* none, random, coarse (ties) */
    for (int e = 0; e < n; e++)
      bias[e] = bias_mode == 1 ? rng_unif(&r) - 0.5f
                               : 0.125f * (float)rng_int(&r, 3);
    const float *b = bias_mode ? bias : NULL;
    int32_t ids[MAXN], flat[MAXN];
    float w[MAXN];
    dq_moe_route_one(&c, logits, b, ids, w, flat, scratch);
    static const int lanes[] = {1, 2, 8, 32};
    for (int li = 0; li < 4; li++) {
      int nl = lanes[li];
      host_team tm = {nl};
      int32_t cids[MAXN], cflat[MAXN];
      float cw[MAXN];
      dq_cu_moe_route_team(tm, &c, logits, b, cscratch, cids, cw, cflat);
      int ok = 1;
      for (int j = 0; j < k; j++) {
        ok &= cids[j] == ids[j] && cflat[j] == flat[j];
        ok &= fabsf(cw[j] - w[j]) <= 1e-6f;
      }
      if (!ok && bad++ < 5) {
        fprintf(stderr,
                "routing case %d (lanes %d): n %d k %d gating %d norm %d "
                "groups %d/%d mode %d bias %d\n",
                it, nl, n, k, c.gating, c.norm, c.n_group, c.n_group_used,
                mode, bias_mode);
        for (int j = 0; j < k; j++)
          fprintf(stderr, "  j %d: id %d vs %d, flat %d vs %d, w %.9g vs %.9g\n",
                  j, cids[j], ids[j], cflat[j], flat[j], cw[j], w[j]);
      }
      CHECK(ok);
      /* one lane is moe.c's own order of operations: the same bits */
      if (nl == 1)
        CHECK(memcmp(cw, w, (size_t)k * sizeof *w) == 0);
    }
    /* without the flat ids the choice is the same */
    host_team t32 = {32};
    int32_t cids[MAXN];
    float cw[MAXN];
    dq_cu_moe_route_team(t32, &c, logits, b, cscratch, cids, cw,
                         (int32_t *)NULL);
    CHECK(memcmp(cids, ids, (size_t)k * sizeof *ids) == 0);
  }
  /* a hand-made case: groups pick differently from flat top-k */
  {
    dq_moe_cfg cc = {8, 2, DQ_MOE_SIGMOID, 1, 1.0f, 4, 1};
    float lg[8] = {3, -5, 1, 1, 2, 2, -5, -5}; /* groups {0,1} {2,3} ... */
    host_team tm = {32};
    int32_t ids[2], flat[2];
    float w[2], scr[20];
    dq_cu_moe_route_team(tm, &cc, lg, NULL, scr, ids, w, flat);
    /* group scores: s(3)+s(-5) < s(2)+s(2): group 2 wins, experts 4, 5 */
    CHECK_EQ_INT(ids[0], 4);
    CHECK_EQ_INT(ids[1], 5);
    CHECK_NEAR(w[0], 0.5, 1e-7);
    CHECK_EQ_INT(flat[0], 0);
    CHECK_EQ_INT(flat[1], 4);
  }
}

/* ---- online softmax --------------------------------------------------------- */

enum { VD = 3 }; /* value width of the softmax tests */

/* Tile-by-tile online softmax of keys [k0, k1) of s (values v: VD per key)
 * as attn.cu's row phase and P.V do it; returns (m, l) and o. */
static void osm_partial(const float *s, const float *v, int k0, int k1,
                        int tile, float *m, float *l, float *o) {
  *m = -INFINITY;
  *l = 0.0f;
  for (int d = 0; d < VD; d++)
    o[d] = 0.0f;
  for (int t0 = k0; t0 < k1; t0 += tile) {
    int t1 = t0 + tile < k1 ? t0 + tile : k1;
    float mt = -INFINITY;
    for (int k = t0; k < t1; k++)
      mt = fmaxf(mt, s[k]);
    float mn = dq_cu_osm_max(*m, mt), a = dq_cu_osm_alpha(*m, mn), sum = 0;
    for (int d = 0; d < VD; d++)
      o[d] *= a;
    for (int k = t0; k < t1; k++) {
      float p = dq_cu_osm_p(s[k], mn);
      sum += p;
      for (int d = 0; d < VD; d++)
        o[d] = fmaf(p, v[k * VD + d], o[d]);
    }
    *l = *l * a + sum;
    *m = mn;
  }
}

static void merge_into(float *m, float *l, float *o, float mb, float lb,
                       const float *ob) {
  float sa, sb;
  dq_cu_osm_merge(m, l, mb, lb, &sa, &sb);
  for (int d = 0; d < VD; d++)
    o[d] = o[d] * sa + ob[d] * sb;
}

static void test_online_softmax(void) {
  rng r = {7};
  static const int ns[] = {1, 2, 5, 63, 64, 65, 100, 1000, 4096};
  enum { MAXK = 4096, MAXP = 16 };
  static float s[MAXK], v[MAXK * VD];
  int bad = 0;
  for (int it = 0; it < 600; it++) {
    int n = ns[rng_int(&r, 9)], mask_mode = rng_int(&r, 4);
    float spread = rng_int(&r, 2) ? 1.0f : 30.0f;
    for (int k = 0; k < n; k++) {
      s[k] = spread * rng_normal(&r);
      for (int d = 0; d < VD; d++)
        v[k * VD + d] = rng_normal(&r);
    }
    /* masks: none, random, a masked prefix (sliding window), all masked */
    int pre = rng_int(&r, n + 1);
    for (int k = 0; k < n; k++)
      if ((mask_mode == 1 && rng_int(&r, 3) == 0) ||
          (mask_mode == 2 && k < pre) || mask_mode == 3)
        s[k] = -INFINITY;
    /* reference in double */
    double mx = -INFINITY, den = 0, num[VD] = {0};
    for (int k = 0; k < n; k++)
      mx = s[k] > mx ? s[k] : mx;
    for (int k = 0; k < n; k++) {
      if (s[k] == -INFINITY)
        continue;
      double e = exp((double)s[k] - mx);
      den += e;
      for (int d = 0; d < VD; d++)
        num[d] += e * v[k * VD + d];
    }
    double ref[VD];
    for (int d = 0; d < VD; d++)
      ref[d] = den > 0 ? num[d] / den : 0.0;

    /* one pass, tiles of 1, 7 and 64 */
    static const int tiles[] = {1, 7, 64};
    for (int ti = 0; ti < 3; ti++) {
      float m, l, o[VD];
      osm_partial(s, v, 0, n, tiles[ti], &m, &l, o);
      for (int d = 0; d < VD; d++) {
        float got = dq_cu_osm_out(o[d], l);
        int ok = fabs(got - ref[d]) <= 1e-5 * (1 + fabs(ref[d]));
        if (!ok && bad++ < 5)
          fprintf(stderr, "softmax n %d tile %d mask %d: %g vs %g\n", n,
                  tiles[ti], mask_mode, got, ref[d]);
        CHECK(ok);
      }
      if (den == 0)
        CHECK(l == 0.0f && m == -INFINITY);
      else
        CHECK_NEAR(l, den * exp(mx - m), 1e-5 * den * exp(mx - m));
    }

    /* split partials (some empty), merged forward, backward, shuffled and
     * as a tree */
    int np = 1 + rng_int(&r, MAXP), cut[MAXP + 1];
    cut[0] = 0;
    cut[np] = n;
    for (int i = 1; i < np; i++)
      cut[i] = rng_int(&r, n + 1);
    for (int i = 1; i < np; i++) /* sort the cuts */
      for (int j = i; j > 1 && cut[j] < cut[j - 1]; j--) {
        int t = cut[j];
        cut[j] = cut[j - 1];
        cut[j - 1] = t;
      }
    float pm[MAXP], pl[MAXP], po[MAXP][VD];
    for (int i = 0; i < np; i++)
      osm_partial(s, v, cut[i], cut[i + 1], 64, &pm[i], &pl[i], po[i]);
    int order[MAXP];
    for (int way = 0; way < 4; way++) {
      for (int i = 0; i < np; i++)
        order[i] = way == 1 ? np - 1 - i : i;
      if (way == 2)
        for (int i = np - 1; i > 0; i--) {
          int j = rng_int(&r, i + 1), t = order[i];
          order[i] = order[j];
          order[j] = t;
        }
      float m = -INFINITY, l = 0, o[VD] = {0, 0, 0};
      if (way < 3) {
        for (int i = 0; i < np; i++)
          merge_into(&m, &l, o, pm[order[i]], pl[order[i]], po[order[i]]);
      } else { /* tree: pairs, then pairs of pairs */
        float tm[MAXP], tl[MAXP], to[MAXP][VD];
        for (int i = 0; i < np; i++) {
          tm[i] = pm[i];
          tl[i] = pl[i];
          memcpy(to[i], po[i], sizeof to[i]);
        }
        for (int w = 1; w < np; w *= 2)
          for (int i = 0; i + w < np; i += 2 * w)
            merge_into(&tm[i], &tl[i], to[i], tm[i + w], tl[i + w], to[i + w]);
        m = tm[0];
        l = tl[0];
        memcpy(o, to[0], sizeof o);
      }
      for (int d = 0; d < VD; d++) {
        float got = dq_cu_osm_out(o[d], l);
        int ok = fabs(got - ref[d]) <= 1e-5 * (1 + fabs(ref[d]));
        if (!ok && bad++ < 5)
          fprintf(stderr, "merge n %d parts %d way %d mask %d: %g vs %g\n",
                  n, np, way, mask_mode, got, ref[d]);
        CHECK(ok);
      }
    }
  }
  /* an empty partial is neutral, bit for bit */
  float m = 1.5f, l = 2.0f, o[VD] = {1, 2, 3}, z[VD] = {0, 0, 0};
  merge_into(&m, &l, o, -INFINITY, 0.0f, z);
  CHECK(m == 1.5f && l == 2.0f && o[0] == 1 && o[1] == 2 && o[2] == 3);
  m = -INFINITY, l = 0;
  float ob[VD] = {4, 5, 6}, oz[VD] = {0, 0, 0};
  merge_into(&m, &l, oz, 0.5f, 3.0f, ob);
  CHECK(m == 0.5f && l == 3.0f && oz[0] == 4 && oz[2] == 6);
}

/* ---- cache layouts ---------------------------------------------------------- */

static float f16_round(float x) { return dq_f16_to_f32(dq_f32_to_f16(x)); }

static void test_layouts(dq_backend *be) {
  rng r = {99};
  static const int res[] = {32, 64, 96, 576, 1152};
  for (int ri = 0; ri < 5; ri++) {
    int re = res[ri], n_rows = 37, row0 = 5, total = 48; /* 3 panels */
    float *x = (float *)malloc(sizeof(float) * n_rows * re);
    for (int i = 0; i < n_rows * re; i++)
      x[i] = 4.0f * rng_normal(&r);
    uint16_t *kp = (uint16_t *)calloc((size_t)total * re, 2);
    uint16_t *vh = (uint16_t *)calloc((size_t)total * re, 2);
    float *vf = (float *)calloc((size_t)total * re, 4);
    uint8_t *q8 = (uint8_t *)calloc((size_t)total * (re / 32) * 34, 1);
    be->i.kv_store(be->ctx, kp, DQ_STORE_F16P, row0, x, n_rows, re);
    be->i.kv_store(be->ctx, vh, DQ_STORE_F16, row0, x, n_rows, re);
    be->i.kv_store(be->ctx, vf, DQ_STORE_F32, row0, x, n_rows, re);
    be->i.kv_store(be->ctx, q8, DQ_STORE_Q8_0, row0, x, n_rows, re);
    int bad = 0;
    for (int rr = 0; rr < n_rows; rr++) {
      size_t row = (size_t)(row0 + rr);
      float amax[64] = {0};
      for (int i = 0; i < re; i++)
        amax[i / 32] = fmaxf(amax[i / 32], fabsf(x[rr * re + i]));
      for (int i = 0; i < re; i++) {
        float xv = x[rr * re + i], h = f16_round(xv);
        int ok = kp[dq_cu_panel_index(row, re, i)] == dq_f32_to_f16(xv);
        ok &= dq_cu_kv_key<1>(kp, row, re, i) == h;
        ok &= dq_cu_kv_val<1>(vh, row, re, i) == h;
        ok &= dq_cu_kv_key<0>(vf, row, re, i) == xv;
        ok &= dq_cu_kv_val<0>(vf, row, re, i) == xv;
        /* Q8_0: within half a step of the block's scale (plus the scale's
         * own f16 rounding), and keys and values read alike */
        float q = dq_cu_kv_key<8>(q8, row, re, i), step = amax[i / 32] / 127;
        ok &= fabsf(q - xv) <= 0.5f * step + 1e-3f * fabsf(xv) + 1e-6f;
        ok &= q == dq_cu_kv_val<8>(q8, row, re, i);
        if (!ok && bad++ < 3)
          fprintf(stderr, "layout re %d row %zu elem %d: x %g q8 %g\n", re,
                  row, i, xv, q);
        CHECK(ok);
      }
    }
    /* the halves not written stay zero: the panels hold exactly our rows */
    size_t n_set = 0;
    for (size_t i = 0; i < (size_t)total * re; i++)
      n_set += kp[i] != 0;
    size_t n_nonzero = 0;
    for (int i = 0; i < n_rows * re; i++)
      n_nonzero += dq_f32_to_f16(x[i]) != 0;
    CHECK_EQ_INT(n_set, n_nonzero);
    free(x);
    free(kp);
    free(vh);
    free(vf);
    free(q8);
  }
}

/* ---- attention, emulated per row -------------------------------------- */

static int n_splits_seen; /* the most splits an emulated call had */
static int n_mma_splits_seen; /* likewise for the tensor-core path */

/* attn.cu's algorithm for one call, row by row: the split plan, tiles of 64
 * inside each split, online softmax, splits merged in order, statistics
 * from the final (max, sum). STORE as the kernel template. */
template <int STORE>
static void emulate(const dq_attn *a, int target_blocks, float *out,
                    float *stats) {
  const int hd = a->head_dim, group = a->n_head / a->n_head_kv;
  const int re = a->n_head_kv * hd, n_rows = a->n_tok * group;
  /* min_tiles 1 (the kernel uses 4): more splits from the small caches here */
  dq_cu_split sp = dq_cu_attn_plan(a, n_rows * a->n_head_kv, target_blocks, 1);
  n_splits_seen = sp.n_split > n_splits_seen ? sp.n_split : n_splits_seen;
  float *s = (float *)malloc(sizeof(float) * a->n_kv);
  float *o = (float *)malloc(sizeof(float) * hd);
  float *acc = (float *)malloc(sizeof(float) * hd);
  for (int t = 0; t < a->n_tok; t++)
    for (int h = 0; h < a->n_head; h++) {
      int g = h / group, lo, hi, p = a->pos0 + t;
      const float *q = a->q + ((size_t)t * a->n_head + h) * hd;
      dq_cu_attn_range(a->causal, a->window, a->n_kv, p, &lo, &hi);
      for (int k = 0; k < a->n_kv; k++) { /* all scores (for stats) */
        float d = 0;
        for (int i = 0; i < hd; i++)
          d = fmaf(q[i], dq_cu_kv_key<STORE>(a->k, (size_t)k, re, g * hd + i),
                   d);
        s[k] = k >= lo && k < hi
                   ? d * a->scale + (a->bias ? a->bias[k] : 0.0f)
                   : -INFINITY;
      }
      float mm = -INFINITY, ll = 0;
      for (int i = 0; i < hd; i++)
        acc[i] = 0;
      for (int si = 0; si < sp.n_split; si++) {
        int ks = sp.k_base + si * sp.split_len;
        int ke = ks + sp.split_len < a->n_kv ? ks + sp.split_len : a->n_kv;
        int l0 = lo > ks ? lo : ks, l1 = hi < ke ? hi : ke;
        float m = -INFINITY, l = 0;
        for (int i = 0; i < hd; i++)
          o[i] = 0;
        for (int k0 = l0 < l1 ? l0 / 64 * 64 : l1; k0 < l1; k0 += 64) {
          float mt = -INFINITY;
          for (int k = k0; k < k0 + 64 && k < a->n_kv; k++)
            mt = fmaxf(mt, k >= l0 && k < l1 ? s[k] : -INFINITY);
          float mn = dq_cu_osm_max(m, mt), al = dq_cu_osm_alpha(m, mn), sum = 0;
          for (int i = 0; i < hd; i++)
            o[i] *= al;
          for (int k = k0; k < k0 + 64 && k < a->n_kv; k++) {
            float pk = dq_cu_osm_p(k >= l0 && k < l1 ? s[k] : -INFINITY, mn);
            sum += pk;
            for (int i = 0; i < hd; i++)
              o[i] = fmaf(pk, dq_cu_kv_val<STORE>(a->v, (size_t)k, re, g * hd + i),
                          o[i]);
          }
          l = l * al + sum;
          m = mn;
        }
        if (sp.n_split == 1) {
          mm = m, ll = l;
          memcpy(acc, o, sizeof(float) * hd);
        } else {
          float sa, sb;
          dq_cu_osm_merge(&mm, &ll, m, l, &sa, &sb);
          for (int i = 0; i < hd; i++)
            acc[i] = acc[i] * sa + o[i] * sb;
        }
      }
      for (int i = 0; i < hd; i++)
        out[((size_t)t * a->n_head + h) * hd + i] = dq_cu_osm_out(acc[i], ll);
      if (stats && p >= a->stats_q0 && p < a->stats_q1)
        for (int k = lo; k < hi; k++)
          stats[(size_t)h * a->stats_stride + k] +=
              dq_cu_osm_out(dq_cu_osm_p(s[k], mm), ll);
    }
  free(s);
  free(o);
  free(acc);
}

/* ---- tensor-core prefill, emulated lane by lane ------------------------ */

/* One m16n8k16 product of a warp: d += a b, the operands in the lanes'
 * registers (A: 4 x 2 halves, B: 2 x 2 halves, C: 4 floats) placed by
 * attn_mma.cuh's fragment coordinates; products exact (f16 x f16 fits a
 * float), sums in float in k order. Checks that the coordinates cover
 * each element of A, B and C exactly once. */
static void mma_emul(const uint32_t (*a)[4], const uint32_t (*b)[2],
                     float (*c)[4]) {
  using namespace dq_mma;
  float A[16][16], B[16][8], C[16][8];
  int na[16][16] = {{0}}, nb[16][8] = {{0}}, nc[16][8] = {{0}};
  for (int lane = 0; lane < 32; lane++) {
    for (int r = 0; r < 4; r++)
      for (int e = 0; e < 2; e++) {
        int row = a_row(lane, r), col = a_col(lane, r, e);
        A[row][col] = dq_cu_h2f((uint16_t)(a[lane][r] >> (16 * e)));
        na[row][col]++;
      }
    for (int r = 0; r < 2; r++)
      for (int e = 0; e < 2; e++) {
        int row = b_row(lane, r, e), col = b_col(lane);
        B[row][col] = dq_cu_h2f((uint16_t)(b[lane][r] >> (16 * e)));
        nb[row][col]++;
      }
    for (int i = 0; i < 4; i++) {
      C[c_row(lane, i)][c_col(lane, i)] = c[lane][i];
      nc[c_row(lane, i)][c_col(lane, i)]++;
    }
  }
  int cover = 1;
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++)
      cover &= na[i][j] == 1 && (j >= 8 || (nb[i][j] == 1 && nc[i][j] == 1));
  CHECK(cover);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int row = c_row(lane, i), col = c_col(lane, i);
      float d = C[row][col];
      for (int k = 0; k < 16; k++)
        d = fmaf(A[row][k], B[k][col], d);
      c[lane][i] = d;
    }
}

/* attn.cu's attn_mma for one call (F16 cache, HD 64 or 128), every block
 * of the grid in turn, its 128 threads' per-lane steps in lane order
 * between the warp-wide ones; splits merged as attn_combine does; then,
 * when the call counts statistics, attn_stats_mma's pass (scores again on
 * the tensor cores) with the final (max, sum) the main pass left. */
template <int HD>
static void emulate_mma(const dq_attn *a, int target_blocks, float *out,
                        float *stats) {
  using namespace dq_mma;
  typedef dims<HD> D;
  const int group = a->n_head / a->n_head_kv, n_rows = a->n_tok * group;
  const int re = a->n_head_kv * HD, n_rt = (n_rows + ROWS - 1) / ROWS;
  dq_cu_split sp = dq_cu_attn_plan(a, n_rt * a->n_head_kv, target_blocks, 4);
  n_mma_splits_seen =
      sp.n_split > n_mma_splits_seen ? sp.n_split : n_mma_splits_seen;
  const size_t rows_all = (size_t)a->n_head_kv * n_rows;
  float *po = (float *)calloc((size_t)sp.n_split * rows_all * HD, 4);
  float *pml = (float *)calloc((size_t)sp.n_split * rows_all * 2, 4);
  float *fml = (float *)calloc(rows_all * 2, 4);
  uint16_t *Ks = (uint16_t *)calloc(D::ks_halves, 2);
  uint16_t *Vs = (uint16_t *)calloc(D::vs_halves, 2);
  lane_state<HD> *L = (lane_state<HD> *)malloc(128 * sizeof *L);
  const uint16_t *K = (const uint16_t *)a->k, *V = (const uint16_t *)a->v;
  static uint32_t A[32][4], B[32][2];
  static float C[32][4];
  for (int spi = 0; spi < sp.n_split; spi++)
    for (int g = 0; g < a->n_head_kv; g++)
      for (int rt = 0; rt < n_rt; rt++) {
        int ks = sp.k_base + spi * sp.split_len;
        int ke = ks + sp.split_len < a->n_kv ? ks + sp.split_len : a->n_kv;
        int kb = INT_MAX, kend = 0;
        for (int tid = 0; tid < 128; tid++) {
          lane_init<HD>(L[tid], tid & 31, tid >> 5, rt, g, a->q, n_rows,
                        group, a->n_head, a->pos0, a->causal, a->window,
                        a->n_kv, ks, ke);
          for (int j = 0; j < 2; j++)
            if (L[tid].lo[j] < L[tid].hi[j]) {
              kb = L[tid].lo[j] < kb ? L[tid].lo[j] : kb;
              kend = L[tid].hi[j] > kend ? L[tid].hi[j] : kend;
            }
        }
        kb = kend ? kb / KT * KT : 0;
        for (int k0 = kb; k0 < kend; k0 += KT) {
          for (int e = 0; e < 4 * HD * 2; e++) {
            int p = e / (2 * HD), d = (e >> 1) % HD, h8 = (e & 1) * 8;
            for (int i = 0; i < 8; i++)
              Ks[ks_index<HD>(p * 16 + h8, d) + i] =
                  k0 + p * 16 < a->n_kv
                      ? K[dq_cu_panel_index((size_t)(k0 + p * 16), re,
                                            g * HD + d) + h8 + i]
                      : 0;
          }
          for (int e = 0; e < KT * (HD / 8); e++) {
            int kk = e / (HD / 8), c8 = (e % (HD / 8)) * 8, key = k0 + kk;
            for (int i = 0; i < 8; i++)
              Vs[vs_index<HD>(kk, c8) + i] =
                  key < a->n_kv ? V[(size_t)key * re + g * HD + c8 + i] : 0;
          }
          for (int w = 0; w < WARPS; w++) {
            lane_state<HD> *W = L + 32 * w;
            for (int nt = 0; nt < 8; nt++) {
              for (int l = 0; l < 32; l++)
                for (int i = 0; i < 4; i++)
                  C[l][i] = 0.0f;
              for (int kk = 0; kk < D::KS; kk++) {
                for (int l = 0; l < 32; l++) {
                  memcpy(A[l], W[l].qa[kk], sizeof A[l]);
                  B[l][0] = k_frag<HD>(Ks, l, nt, kk, 0);
                  B[l][1] = k_frag<HD>(Ks, l, nt, kk, 1);
                }
                mma_emul(A, B, C);
              }
              for (int l = 0; l < 32; l++)
                memcpy(W[l].s[nt], C[l], sizeof C[l]);
            }
            float mx[32][2], sum[32][2];
            for (int l = 0; l < 32; l++)
              scale_mask<HD>(W[l], l, k0, a->scale, a->bias, mx[l]);
            for (int q = 0; q < 8; q++) /* the 4 lanes of a row group */
              for (int j = 0; j < 2; j++) {
                float m = fmaxf(fmaxf(mx[4 * q][j], mx[4 * q + 1][j]),
                                fmaxf(mx[4 * q + 2][j], mx[4 * q + 3][j]));
                for (int i = 0; i < 4; i++)
                  mx[4 * q + i][j] = m;
              }
            for (int l = 0; l < 32; l++)
              softmax_step<HD>(W[l], mx[l], sum[l]);
            for (int q = 0; q < 8; q++)
              for (int j = 0; j < 2; j++) {
                float t = (sum[4 * q][j] + sum[4 * q + 1][j]) +
                          (sum[4 * q + 2][j] + sum[4 * q + 3][j]);
                for (int i = 0; i < 4; i++)
                  sum[4 * q + i][j] = t;
              }
            for (int l = 0; l < 32; l++)
              softmax_sum<HD>(W[l], sum[l]);
            for (int j = 0; j < 4; j++)
              for (int n = 0; n < D::ND; n++) {
                for (int l = 0; l < 32; l++) {
                  for (int r = 0; r < 4; r++)
                    A[l][r] = p_frag<HD>(W[l], j, r);
                  B[l][0] = v_frag<HD>(Vs, l, n, j, 0);
                  B[l][1] = v_frag<HD>(Vs, l, n, j, 1);
                  memcpy(C[l], W[l].o[n], sizeof C[l]);
                }
                mma_emul(A, B, C);
                for (int l = 0; l < 32; l++)
                  memcpy(W[l].o[n], C[l], sizeof C[l]);
              }
          }
        }
        /* the kernel's epilogue, into the split partials */
        for (int tid = 0; tid < 128; tid++) {
          int lane = tid & 31, w = tid >> 5;
          for (int j = 0; j < 2; j++) {
            if (L[tid].t[j] < 0)
              continue;
            size_t r = (size_t)rt * ROWS + w * 16 + (lane >> 2) + 8 * j;
            size_t row = ((size_t)spi * a->n_head_kv + g) * n_rows + r;
            for (int n = 0; n < D::ND; n++)
              for (int e = 0; e < 2; e++)
                po[row * HD + n * 8 + c_col(lane, e)] = L[tid].o[n][2 * j + e];
            pml[row * 2] = L[tid].m[j];
            pml[row * 2 + 1] = L[tid].l[j];
          }
        }
      }
  /* attn_combine (one split: the kernel's own normalisation, the same) */
  for (int g = 0; g < a->n_head_kv; g++)
    for (int r = 0; r < n_rows; r++) {
      int t = r / group, h = g * group + r % group;
      for (int d = 0; d < HD; d++) {
        float mm = -INFINITY, l = 0.0f, acc = 0.0f;
        for (int s2 = 0; s2 < sp.n_split; s2++) {
          size_t row = ((size_t)s2 * a->n_head_kv + g) * n_rows + r;
          float fa, fb;
          dq_cu_osm_merge(&mm, &l, pml[row * 2], pml[row * 2 + 1], &fa, &fb);
          acc = acc * fa + po[row * HD + d] * fb;
        }
        out[((size_t)t * a->n_head + h) * HD + d] = dq_cu_osm_out(acc, l);
        if (d == 0) /* the rows' final (max, sum): attn.cu's ml */
          fml[((size_t)g * n_rows + r) * 2] = mm,
          fml[((size_t)g * n_rows + r) * 2 + 1] = l;
      }
    }
  if (stats) { /* attn_stats_mma, warp by warp */
    stats_call c;
    c.q = a->q, c.k = K, c.ml = fml, c.n_head = a->n_head, c.re = re;
    c.group = group, c.n_rows = n_rows, c.pos0 = a->pos0;
    c.causal = a->causal, c.window = a->window, c.n_kv = a->n_kv;
    c.scale = a->scale;
    c.bias = a->bias;
    int ts0 = a->stats_q0 - a->pos0 > 0 ? a->stats_q0 - a->pos0 : 0;
    c.ts1 = a->stats_q1 - a->pos0 < a->n_tok ? a->stats_q1 - a->pos0
                                             : a->n_tok;
    stats_lane<HD> *S = (stats_lane<HD> *)malloc(32 * sizeof *S);
    for (int h = 0; h < a->n_head; h++) {
      c.h = h, c.g = h / group, c.hh = h % group;
      for (int k0 = 0; k0 < a->n_kv; k0 += KT)
        for (int w = 0; w < WARPS; w++) {
          if (k0 + 16 * w >= a->n_kv)
            continue;
          for (int l = 0; l < 32; l++)
            stats_init<HD>(S[l], c, l, w, k0);
          for (int tb = ts0; tb < c.ts1; tb += 16) {
            float sc[32][2][4];
            for (int nt = 0; nt < 2; nt++) {
              for (int l = 0; l < 32; l++)
                for (int i = 0; i < 4; i++)
                  C[l][i] = 0.0f;
              for (int kk = 0; kk < D::KS; kk++) {
                for (int l = 0; l < 32; l++) {
                  for (int r = 0; r < 4; r++)
                    A[l][r] = stats_q_frag<HD>(c, l, tb, kk, r);
                  B[l][0] = S[l].kb[kk][nt][0];
                  B[l][1] = S[l].kb[kk][nt][1];
                }
                mma_emul(A, B, C);
              }
              for (int l = 0; l < 32; l++)
                memcpy(sc[l][nt], C[l], sizeof C[l]);
            }
            for (int l = 0; l < 32; l++)
              stats_accum<HD>(S[l], c, sc[l], l, w, k0, tb);
          }
          /* the butterfly over the 8 lanes of a key: xor 4, 8, 16 */
          for (int o = 4; o < 32; o <<= 1) {
            float nx[32][2][2];
            for (int l = 0; l < 32; l++)
              for (int nt = 0; nt < 2; nt++)
                for (int e = 0; e < 2; e++)
                  nx[l][nt][e] = S[l].acc[nt][e] + S[l ^ o].acc[nt][e];
            for (int l = 0; l < 32; l++)
              memcpy(S[l].acc, nx[l], sizeof nx[l]);
          }
          for (int l = 0; l < 4; l++)
            for (int nt = 0; nt < 2; nt++)
              for (int e = 0; e < 2; e++) {
                int key = k0 + 16 * w + 8 * nt + c_col(l, e);
                if (key < a->n_kv)
                  stats[(size_t)h * a->stats_stride + key] += S[l].acc[nt][e];
              }
        }
    }
    free(S);
  }
  free(po);
  free(pml);
  free(fml);
  free(Ks);
  free(Vs);
  free(L);
}

/* ldmatrix.sync.aligned.m8n8.x4.trans.b16 as the PTX ISA defines it: lane
 * 8 m + i gives the address (halves index into base) of row i of matrix
 * m; lane l's register m receives (rows 2 (l & 3), 2 (l & 3) + 1; column
 * l >> 2) of matrix m, the lower row in the lower half. */
static void ldsm_x4_trans_emul(const uint16_t *base, const int *addr,
                               uint32_t (*out)[4]) {
  for (int l = 0; l < 32; l++)
    for (int m = 0; m < 4; m++) {
      int r = 2 * (l & 3), c = l >> 2;
      out[l][m] = dq_mma::pack2(base[addr[8 * m + r] + c],
                                base[addr[8 * m + r + 1] + c]);
    }
}

/* One x4.trans load: lane l's row address addr_of(l) (counted in
 * misaligned when not 16-byte aligned), its 4 registers against
 * frag_of(l, m); mismatches added to *bad. */
template <class Addr, class Frag>
static void check_ldsm_load(const uint16_t *base, Addr addr_of, Frag frag_of,
                            int *bad, int *misaligned) {
  int addr[32];
  uint32_t got[32][4];
  for (int l = 0; l < 32; l++) {
    addr[l] = addr_of(l);
    *misaligned += addr[l] % 8 != 0;
  }
  ldsm_x4_trans_emul(base, addr, got);
  for (int l = 0; l < 32; l++)
    for (int m = 0; m < 4; m++)
      *bad += got[l][m] != frag_of(l, m);
}

/* The kernel's ldmatrix addressing (attn_mma.cuh ldsm_*) gives the B
 * fragments k_frag / v_frag define, for every lane, tile and step; and
 * every row address is 16-byte aligned. */
template <int HD> static void check_ldsm(rng *r) {
  using namespace dq_mma;
  typedef dims<HD> D;
  uint16_t *Ks = (uint16_t *)malloc(D::ks_halves * 2);
  uint16_t *Vs = (uint16_t *)malloc(D::vs_halves * 2);
  for (size_t i = 0; i < D::ks_halves; i++)
    Ks[i] = (uint16_t)rng_next(r);
  for (size_t i = 0; i < D::vs_halves; i++)
    Vs[i] = (uint16_t)rng_next(r);
  int bad = 0, misaligned = 0;
  for (int kk = 0; kk < D::KS; kk++)
    for (int nt2 = 0; nt2 < 4; nt2++)
      check_ldsm_load(
          Ks, [&](int l) { return ldsm_k_index<HD>(l, nt2, kk); },
          [&](int l, int m) {
            return k_frag<HD>(Ks, l, 2 * nt2 + (m >> 1), kk, m & 1);
          },
          &bad, &misaligned);
  for (int j = 0; j < 4; j++)
    for (int n2 = 0; n2 < D::ND / 2; n2++)
      check_ldsm_load(
          Vs, [&](int l) { return ldsm_v_index<HD>(l, n2, j); },
          [&](int l, int m) {
            return v_frag<HD>(Vs, l, 2 * n2 + (m >> 1), j, m & 1);
          },
          &bad, &misaligned);
  CHECK_MSG(bad == 0, "ldmatrix fragments (hd %d): %d differ", HD, bad);
  CHECK_EQ_INT(misaligned, 0);
  free(Ks);
  free(Vs);
}

typedef struct attn_case {
  int store, n_tok, pos0, n_head, n_head_kv, hd, causal, window, stats;
  int mma;  /* the tensor-core path (F16, hd 64 / 128) */
  int bias; /* per-key log weights (GSM's merged slots): log(1..4) */
} attn_case;

static void run_attn_case(dq_backend *be, const attn_case *c, rng *r) {
  const int n_kv = c->pos0 + c->n_tok, re = c->n_head_kv * c->hd;
  const int rows_alloc = (n_kv + 15) / 16 * 16;
  const size_t nq = (size_t)c->n_tok * c->n_head * c->hd;
  float *q = (float *)malloc(nq * sizeof(float));
  float *kx = (float *)malloc((size_t)n_kv * re * sizeof(float));
  float *vx = (float *)malloc((size_t)n_kv * re * sizeof(float));
  for (size_t i = 0; i < nq; i++)
    q[i] = rng_normal(r);
  for (size_t i = 0; i < (size_t)n_kv * re; i++) {
    kx[i] = rng_normal(r);
    vx[i] = rng_normal(r);
  }
  size_t cache_bytes = (size_t)rows_alloc * re * 4;
  void *kc = calloc(cache_bytes, 1), *vc = calloc(cache_bytes, 1);
  int kstore = c->store == DQ_STORE_F16 ? DQ_STORE_F16P : c->store;
  be->i.kv_store(be->ctx, kc, kstore, 0, kx, n_kv, re);
  be->i.kv_store(be->ctx, vc, c->store, 0, vx, n_kv, re);
  int stride = n_kv + 3;
  float *ref = (float *)calloc(nq, sizeof(float));
  float *got = (float *)calloc(nq, sizeof(float));
  float *st_ref = NULL, *st_got = NULL;
  if (c->stats) {
    st_ref = (float *)calloc((size_t)c->n_head * stride, sizeof(float));
    st_got = (float *)calloc((size_t)c->n_head * stride, sizeof(float));
  }
  int q0 = c->pos0 + c->n_tok / 3, q1 = c->pos0 + c->n_tok;
  float scale = 1.0f / sqrtf((float)c->hd);
  dq_attn a;
  memset(&a, 0, sizeof a);
  a.q = q, a.k = kc, a.v = vc, a.store = c->store;
  a.n_tok = c->n_tok, a.pos0 = c->pos0, a.n_kv = n_kv;
  a.n_head = c->n_head, a.n_head_kv = c->n_head_kv, a.head_dim = c->hd;
  a.causal = c->causal, a.window = c->window, a.scale = scale;
  a.out = ref, a.stats = st_ref, a.stats_stride = stride;
  a.stats_q0 = q0, a.stats_q1 = q1;
  float *bias = NULL;
  if (c->bias) {
    bias = (float *)malloc((size_t)n_kv * sizeof(float));
    for (int k = 0; k < n_kv; k++)
      bias[k] = logf((float)(1 + rng_int(r, 4)));
    a.bias = bias;
  }
  CHECK_EQ_INT(be->i.attention(be->ctx, &a), DQ_OK);
  dq_attn ca = a; /* the same call, into our own outputs */
  ca.out = got, ca.stats = st_got;
  /* a target that forces several splits where the keys allow them */
  int target = 8 * c->n_tok * c->n_head;
  if (c->mma && c->hd == 64)
    emulate_mma<64>(&ca, target, got, st_got);
  else if (c->mma)
    emulate_mma<128>(&ca, target, got, st_got);
  else if (c->store == 0)
    emulate<0>(&ca, target, got, st_got);
  else if (c->store == 1)
    emulate<1>(&ca, target, got, st_got);
  else
    emulate<8>(&ca, target, got, st_got);
  /* f32 tolerance: the two sides sum the same terms in other orders (the
   * CPU's dot products run in two chains, its exp is its own). The mma
   * path rounds Q and P to F16 (2^-12 relative each): scores move by
   * ~|q||k| 2^-12 scale (~3e-4 on these N(0,1) rows) and outputs, averages
   * of values of |v| ~ 1-4 with weights off by that much, by up to ~1e-3
   * absolute; bounded at 4e-3 + 4e-3 |ref| */
  double worst = 0, worst_abs = 0;
  for (size_t i = 0; i < nq; i++) {
    double d = fabs((double)got[i] - ref[i]);
    worst_abs = d > worst_abs ? d : worst_abs;
    d /= c->mma ? 4e-3 + 4e-3 * fabs(ref[i]) : 1e-5 + 1e-4 * fabs(ref[i]);
    worst = d > worst ? d : worst;
  }
  int ok = worst <= 1.0;
  if (!ok || getenv("DQ_TEST_VERBOSE"))
    fprintf(stderr,
            "attention%s store %d tok %d pos0 %d heads %d/%d hd %d causal "
            "%d window %d: worst abs error %g (%.2f of the tolerance)\n",
            c->mma ? " (mma)" : "", c->store, c->n_tok, c->pos0, c->n_head,
            c->n_head_kv, c->hd, c->causal, c->window, worst_abs, worst);
  CHECK(ok);
  if (c->stats) {
    double sworst = 0;
    for (size_t i = 0; i < (size_t)c->n_head * stride; i++)
      sworst = fmax(sworst, fabs((double)st_got[i] - st_ref[i]));
    /* the mma path's probabilities come from scores of F16-rounded
     * queries (~3e-4 relative each), summed over ~70 queries: 9e-5
     * measured, bounded at 2e-4 */
    double stol = c->mma ? 2e-4 : 1e-4;
    if (c->mma && getenv("DQ_TEST_VERBOSE"))
      fprintf(stderr, "  stats worst abs error %g (tol %g)\n", sworst, stol);
    CHECK_MSG(sworst <= stol, "stats worst abs error %g", sworst);
    /* padding between rows untouched */
    for (int h = 0; h < c->n_head; h++)
      CHECK(st_got[(size_t)h * stride + n_kv] == 0.0f);
  }
  free(q);
  free(kx);
  free(vx);
  free(kc);
  free(vc);
  free(ref);
  free(got);
  free(st_ref);
  free(st_got);
  free(bias);
}

static void test_split_plan(void) {
  dq_attn a;
  memset(&a, 0, sizeof a);
  rng r = {5};
  for (int it = 0; it < 2000; it++) {
    a.n_tok = 1 + rng_int(&r, 64);
    a.pos0 = rng_int(&r, 5000);
    a.n_kv = a.pos0 + a.n_tok + rng_int(&r, 3) * rng_int(&r, 100);
    a.causal = rng_int(&r, 4) != 0;
    a.window = rng_int(&r, 2) ? 1 + rng_int(&r, 3000) : 0;
    int blocks = 1 + rng_int(&r, 64), target = rng_int(&r, 2000);
    dq_cu_split sp = dq_cu_attn_plan(&a, blocks, target, 4);
    CHECK(sp.n_split >= 1 && sp.n_split <= DQ_CU_ATTN_MAX_SPLIT);
    CHECK(sp.split_len > 0 && sp.split_len % DQ_CU_ATTN_BK == 0);
    CHECK(sp.k_base % DQ_CU_ATTN_BK == 0);
    /* every query's keys are covered; no split starts past the last key */
    int lo, hi;
    dq_cu_attn_range(a.causal, a.window, a.n_kv, a.pos0, &lo, &hi);
    if (lo < hi)
      CHECK(sp.k_base <= lo);
    dq_cu_attn_range(a.causal, a.window, a.n_kv, a.pos0 + a.n_tok - 1, &lo,
                     &hi);
    if (lo < hi) {
      CHECK(sp.k_base + sp.n_split * sp.split_len >= hi);
      CHECK(sp.k_base + (sp.n_split - 1) * sp.split_len < hi);
    }
    if (sp.n_split > 1) /* a split has at least min_tiles tiles */
      CHECK(sp.split_len >= 4 * DQ_CU_ATTN_BK);
  }
}

static void test_attention(dq_backend *be) {
  rng r = {1234};
  static const attn_case cases[] = {
      /* store tok pos0 heads kv hd causal window stats */
      {1, 1, 700, 8, 2, 64, 1, 0, 1},    /* decode, GQA, F16, splits */
      {1, 37, 300, 4, 4, 128, 1, 0, 1},  /* prefill over a cache */
      {1, 70, 0, 6, 2, 80, 1, 50, 1},    /* sliding window, odd hd chunk */
      {0, 3, 500, 4, 1, 64, 1, 0, 1},    /* F32, MQA */
      {0, 20, 0, 2, 2, 32, 0, 0, 0},     /* non-causal (encoder) */
      {8, 1, 1000, 4, 2, 128, 1, 200, 1}, /* Q8_0 decode with a window */
      {8, 16, 100, 2, 1, 64, 1, 0, 1},   /* Q8_0 prefill */
      {1, 2, 300, 16, 1, 576, 1, 0, 1},  /* latent attention (MLA) */
      {1, 1, 5, 2, 1, 2, 1, 0, 1},       /* tiny head */
      {1, 40, 200, 4, 2, 64, 1, 0, 1, 0, 1}, /* per-key weights, F16 */
      {8, 1, 700, 4, 2, 64, 1, 0, 1, 0, 1},  /* per-key weights, Q8_0 */
  };
  int n = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < n; i++)
    if (!SANITIZED || cases[i].hd <= 128)
      run_attn_case(be, &cases[i], &r);
  CHECK(n_splits_seen >= 8); /* the merge of splits was exercised */
  /* the tensor-core prefill: rows past n_rows in the last tile, a tile
   * that starts mid-panel (pos0 % 16), splits (few row tiles, long cache) */
  static const attn_case mma_cases[] = {
      /* store tok pos0 heads kv hd causal window stats mma */
      {1, 70, 0, 8, 2, 128, 1, 0, 0, 1},    /* causal from 0, GQA */
      {1, 37, 300, 4, 4, 64, 1, 0, 0, 1},   /* over a cache, 3 row tiles */
      {1, 90, 41, 4, 1, 128, 1, 40, 0, 1},  /* sliding window, MQA */
      {1, 40, 0, 2, 2, 64, 0, 0, 0, 1},     /* non-causal (encoder) */
      {1, 33, 1500, 2, 2, 128, 1, 0, 0, 1}, /* one row tile: splits */
      {1, 100, 60, 8, 2, 64, 1, 0, 1, 1},   /* statistics (GSM's scores) */
      {1, 40, 900, 4, 4, 128, 1, 300, 1, 1}, /* stats, window, splits */
      {1, 70, 130, 4, 2, 64, 1, 0, 1, 1, 1}, /* per-key weights, stats */
  };
  check_ldsm<64>(&r);
  check_ldsm<128>(&r);
  int nm = (int)(sizeof mma_cases / sizeof mma_cases[0]);
  for (int i = 0; i < nm; i++)
    run_attn_case(be, &mma_cases[i], &r);
  CHECK(n_mma_splits_seen >= 2);
}

/* ---- GSM row gathers ------------------------------------------------------ */

/* gather.cuh's addressing (one word of dst per device thread) emulated
 * over every dst word, against the CPU backend's kv_gather, for each store
 * and several row sizes: rows 0..n-1 equal bit for bit. */
static void test_gather(dq_backend *be) {
  rng r = {7};
  static const int res[] = {32, 64, 96, 192, 576};
  static const int stores[] = {DQ_STORE_F32, DQ_STORE_F16, DQ_STORE_F16P,
                               DQ_STORE_Q8_0};
  int rows = 45, n = 37;
  int32_t map[37];
  for (int i = 0; i < n; i++)
    map[i] = rng_int(&r, rows);
  map[0] = rows - 1; /* the last row, and a repeat */
  map[1] = rows - 1;
  for (int ri = 0; ri < 5; ri++)
    for (int si = 0; si < 4; si++) {
      int re = res[ri], st = stores[si];
      size_t words = dqc_gather_span(st, re, rows); /* whole panels */
      CHECK(dqc_gather_units(st, re) > 0);
      float *x = (float *)malloc(sizeof(float) * rows * re);
      for (int i = 0; i < rows * re; i++)
        x[i] = 4.0f * rng_normal(&r);
      uint16_t *src = (uint16_t *)calloc(words, 2);
      uint16_t *ref = (uint16_t *)calloc(words, 2);
      uint16_t *emu = (uint16_t *)calloc(words, 2);
      be->i.kv_store(be->ctx, src, st, 0, x, rows, re);
      be->i.kv_gather(be->ctx, ref, src, st, map, n, re);
      size_t span = dqc_gather_span(st, re, n), bad = 0;
      for (size_t i = 0; i < span; i++) {
        size_t from = dqc_gather_src(st, re, n, map, i);
        if (from != (size_t)-1)
          emu[i] = src[from];
      }
      if (st == DQ_STORE_F16P) {
        for (int rr = 0; rr < n; rr++)
          for (int e = 0; e < re; e++) {
            size_t at = ((size_t)(rr / 16) * re + e) * 16 + rr % 16;
            bad += ref[at] != emu[at];
          }
        /* slots past n are left alone */
        for (size_t i = 0; i < span; i++)
          bad += dqc_gather_src(st, re, n, map, i) == (size_t)-1 &&
                 i % 16 < (size_t)(n % 16);
      } else {
        bad = memcmp(ref, emu, span * 2) != 0;
        CHECK(span == dqc_gather_units(st, re) * n);
      }
      CHECK_MSG(bad == 0, "gather store %d, row of %d: %zu mismatches", st,
                re, bad);
      free(x), free(src), free(ref), free(emu);
    }
  CHECK(dqc_gather_units(DQ_STORE_Q8_0, 48) == 0);
  CHECK(dqc_gather_units(5, 64) == 0);
}

/* ---- top-k selection (topk.cuh) ----------------------------------------- */

struct host_emit { /* __device__ too for tk_collect's sake; runs on the host */
  uint64_t *list;
  int count;
  __host__ __device__ void operator()(uint64_t key) {
    int slot = count++;
    if (slot < TK_CAND)
      list[slot] = key;
  }
};

static void emul_sort(uint64_t *a, int size) {
  for (int kk = 2; kk <= size; kk *= 2)
    for (int j = kk / 2; j > 0; j /= 2)
      for (int t = 0; t < TK_THREADS; t++)
        tk_bitonic_stage(a, size, kk, j, t);
}

/* k_top_k for one block: every thread's steps between two barriers, step
 * 3's threads in a shuffled order (the device's atomic slots come in any
 * order). */
static void emulate_top_k(const float *x, int n, const int32_t *pen,
                          int n_pen, float penalty, int k, int32_t *out,
                          rng *r) {
  static uint64_t keys[TK_CAND];
  if (penalty == 1.0f)
    n_pen = 0;
  for (int t = 0; t < TK_THREADS; t++)
    keys[t] = tk_thread_max(x, n, pen, n_pen, penalty, t);
  emul_sort(keys, TK_THREADS);
  uint64_t tau = keys[k - 1];
  int order[TK_THREADS];
  for (int t = 0; t < TK_THREADS; t++)
    order[t] = t;
  for (int t = TK_THREADS - 1; t > 0; t--) {
    int u = rng_int(r, t + 1), w = order[t];
    order[t] = order[u];
    order[u] = w;
  }
  host_emit emit = {keys, 0};
  for (int t = 0; t < TK_THREADS; t++)
    tk_collect(x, n, pen, n_pen, penalty, tau, order[t], emit);
  if (emit.count > TK_CAND) {
    out[0] = 0;
    return;
  }
  int size = tk_sort_size(emit.count);
  for (int i = emit.count; i < size; i++)
    keys[i] = 0;
  emul_sort(keys, size);
  for (int i = 0; i < k; i++)
    tk_write(out, k, i, keys[i]);
  out[0] = k;
}

/* Against the CPU's dq_top_k on random rows: sizes around the block's
 * 1024 threads up to a 128k vocabulary, normal draws, heavy ties, signed
 * zeros, infinities and NaN, k from 1 to TK_K_MAX, penalties above and
 * below 1 on up to TK_PEN_MAX tokens; ids exact, values bit for bit. And
 * a row the block must give up on (out[0] = 0). */
static void test_top_k(void) {
  rng r = {99};
  const int sizes[] = {1, 5, 300, 1023, 1024, 1025, 49152, 128256};
  int n_rows = 0, n_bad = 0;
  int32_t *pen = (int32_t *)malloc(TK_PEN_MAX * sizeof *pen);
  int32_t *got = (int32_t *)malloc((1 + 2 * TK_K_MAX) * sizeof *got);
  int32_t *ids = (int32_t *)malloc(TK_K_MAX * sizeof *ids);
  float *vals = (float *)malloc(TK_K_MAX * sizeof *vals);
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int n = sizes[si];
    float *x = (float *)malloc((size_t)n * sizeof *x);
    for (int kind = 0; kind < 3; kind++) {
      for (int i = 0; i < n; i++) {
        int q = rng_int(&r, 12);
        x[i] = kind == 0   ? 3 * rng_normal(&r)
               : kind == 1 ? (float)rng_int(&r, 4)
               : q == 0    ? 0.0f
               : q == 1    ? -0.0f
               : q == 2    ? INFINITY
               : q == 3    ? -INFINITY
               : q == 4    ? NAN
                           : rng_normal(&r);
      }
      const int ks[] = {1, 2, 40, 255, TK_K_MAX};
      for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        int k = ks[ki] < n ? ks[ki] : n;
        int want_pen = ki == 4 ? TK_PEN_MAX : 64, n_pen = 0;
        for (int i = 0; i < n && n_pen < want_pen; i++)
          if (rng_int(&r, n / want_pen + 2) == 0)
            pen[n_pen++] = i;
        float penalty = ki % 3 == 0 ? 1.0f : ki % 3 == 1 ? 1.3f : 0.6f;
        emulate_top_k(x, n, pen, n_pen, penalty, k, got, &r);
        CHECK_OK(dq_top_k(x, n, pen, n_pen, penalty, k, NULL, ids, vals),
                 "dq_top_k");
        int bad = got[0] != k;
        for (int i = 0; !bad && i < k; i++) {
          float v;
          memcpy(&v, &got[1 + k + i], 4);
          bad |= got[1 + i] != ids[i] ||
                 !(v == vals[i] || (isnan(v) && isnan(vals[i])));
        }
        if (bad)
          fprintf(stderr, "top-k n %d kind %d k %d: differs from dq_top_k "
                          "(count %d)\n",
                  n, kind, k, got[0]);
        n_bad += bad;
        n_rows++;
      }
    }
    free(x);
  }
  fprintf(stderr, "top-k: %d rows emulated, %d differ from dq_top_k\n",
          n_rows, n_bad);
  CHECK_EQ_INT(n_bad, 0);
  /* thread 0 holds 8192 elements of 1, the others 0: all 8192 are
   * candidates, more than TK_CAND */
  int n = 1 << 23;
  float *x = (float *)calloc((size_t)n, sizeof *x);
  for (int i = 0; i < n; i += TK_THREADS)
    x[i] = 1;
  emulate_top_k(x, n, NULL, 0, 1.0f, 2, got, &r);
  CHECK_EQ_INT(got[0], 0);
  CHECK_EQ_INT(dq_cu_top_k_supported(n, 0, TK_K_MAX + 1), 0);
  CHECK_EQ_INT(dq_cu_top_k_supported(n, TK_PEN_MAX + 1, 2), 0);
  free(x);
  free(pen);
  free(got);
  free(ids);
  free(vals);
}

/* ---- similarity merges (merge.cu) ---------------------------------------- */

enum { EM_MT = 512 }; /* merge.cu's MT */

/* pair_sim as one warp computes it: lanes 0..15's partials, lane 0's
 * shuffle combination, then the tail and the cosine. */
static float emul_pair_sim(const void *k, int store, int ra, int rb, int n_kv,
                           int hd) {
  int re = n_kv * hd;
  float s = 0.0f;
  for (int h = 0; h < n_kv; h++) {
    float p[3][32];
    memset(p, 0, sizeof p); /* lanes 16..31 hold 0 */
    for (int l = 0; l < 16; l++)
      dqm_partial(k, store, ra, rb, h, hd, re, l, &p[0][l], &p[1][l],
                  &p[2][l]);
    float v[3];
    for (int q = 0; q < 3; q++) {
      float slot[4];
      for (int j = 0; j < 4; j++)
        slot[j] = dqm_slot(p[q][j], p[q][j + 4], p[q][j + 8], p[q][j + 12]);
      v[q] = dqm_slots(slot[0], slot[1], slot[2], slot[3]);
    }
    dqm_tail(k, store, ra, rb, h, hd, re, v);
    s = dqm_cos_add(s, v);
  }
  return s / (float)n_kv;
}

/* A row's re values x written as row r, a warp's 32 elements at a time
 * (Q8_0: the block's amax over its lanes first, as elem_put shuffles it). */
static void emul_put_row(void *buf, int st, int r, int re, const float *x) {
  for (int e0 = 0; e0 < re; e0 += 32) {
    int n = re - e0 < 32 ? re - e0 : 32;
    float amax = 0.0f;
    for (int l = 0; l < n; l++)
      amax = fmaxf(amax, fabsf(x[e0 + l]));
    for (int l = 0; l < n; l++)
      if (st == 8)
        dqm_put_q8(buf, r, e0 + l, re, x[e0 + l], amax);
      else
        dqm_put(buf, st, r, e0 + l, re, x[e0 + l]);
  }
}

/* Both kernels for one job: k_merge_init, then k_merge_greedy's steps for
 * EM_MT threads between its barriers; sim (m floats) ends as the
 * scratch's similarities do. */
static void emul_merge_job(void *k, void *v, int sk, int sv, int n_kv,
                           int hd, const int32_t *rows, const int32_t *count,
                           int m, int n_merge, int32_t *pairs, float *sim) {
  int re = n_kv * hd;
  int32_t *nx = (int32_t *)malloc((size_t)m * 3 * sizeof *nx);
  int32_t *pv = nx + m, *cnt = pv + m;
  float *row = (float *)malloc((size_t)re * sizeof *row);
  for (int i = 0; i < m; i++) { /* a warp per position */
    sim[i] = i + 1 < m ? emul_pair_sim(k, sk, rows[i], rows[i + 1], n_kv, hd)
                       : -INFINITY;
    nx[i] = i + 1 < m ? i + 1 : -1;
    pv[i] = i - 1;
    cnt[i] = count[i];
  }
  static float tv[EM_MT];
  static int tb[EM_MT];
  for (int t = 0; t < n_merge; t++) {
    for (int tid = 0; tid < EM_MT; tid++) { /* each thread's scan */
      float bv = -INFINITY;
      int b = -1;
      for (int i = tid; i < m; i += EM_MT)
        if (nx[i] >= 0 && dqm_before(sim[i], i, bv, b))
          bv = sim[i], b = i;
      tv[tid] = bv, tb[tid] = b;
    }
    for (int w = 0; w < EM_MT / 32; w++) /* the warps' butterflies */
      for (int o = 16; o > 0; o >>= 1) {
        float nv[32];
        int nb[32];
        for (int l = 0; l < 32; l++) {
          int me = w * 32 + l, other = w * 32 + (l ^ o);
          int take = dqm_before(tv[other], tb[other], tv[me], tb[me]);
          nv[l] = take ? tv[other] : tv[me];
          nb[l] = take ? tb[other] : tb[me];
        }
        for (int l = 0; l < 32; l++)
          tv[w * 32 + l] = nv[l], tb[w * 32 + l] = nb[l];
      }
    float w = -INFINITY; /* thread 0 over the warps' lane 0 */
    int best = -1;
    for (int q = 0; q < EM_MT / 32; q++)
      if (dqm_before(tv[q * 32], tb[q * 32], w, best))
        w = tv[q * 32], best = tb[q * 32];
    if (best < 0) {
      for (int u = t; u < n_merge; u++)
        pairs[2 * u] = pairs[2 * u + 1] = -1;
      break;
    }
    int j = nx[best], ri = rows[best], rj = rows[j];
    float wa = (float)cnt[best] / (float)(cnt[best] + cnt[j]);
    for (int pass = 0; pass < 2; pass++) { /* keys, values */
      void *buf = pass ? v : k;
      int st = pass ? sv : sk;
      /* every element reads the two old rows before any is written (each
       * thread writes only the element it read; Q8_0 warps after their
       * shuffle) */
      for (int e = 0; e < re; e++)
        row[e] = dqm_mix(wa, dqm_get(buf, st, ri, e, re),
                         dqm_get(buf, st, rj, e, re));
      emul_put_row(buf, st, ri, re, row);
    }
    cnt[best] += cnt[j];
    nx[best] = nx[j];
    if (nx[j] >= 0)
      pv[nx[j]] = best;
    nx[j] = -2;
    pairs[2 * t] = best;
    pairs[2 * t + 1] = j;
    int prev = pv[best];
    sim[best] = nx[best] >= 0
                    ? emul_pair_sim(k, sk, ri, rows[nx[best]], n_kv, hd)
                    : -INFINITY;
    if (prev >= 0)
      sim[prev] = emul_pair_sim(k, sk, rows[prev], ri, n_kv, hd);
  }
  free(nx);
  free(row);
}

/* A cache of n_rows rows of n_kv x hd in `store` from random floats: every
 * fourth row a copy of the one before (equal neighbours: ties), rows 5 and
 * 6 zero keys. */
static void merge_cache(dq_backend *be, void *buf, int store, int n_rows,
                        int re, rng *r, int zero) {
  float *x = (float *)malloc((size_t)re * sizeof *x);
  for (int row = 0; row < n_rows; row++) {
    if (row % 4 != 3) /* else: the previous row's values again */
      for (int e = 0; e < re; e++)
        x[e] = (zero && (row == 5 || row == 6)) ? 0.0f : rng_unif(r) - 0.5f;
    be->i.kv_store(be->ctx, buf, store, row, x, 1, re);
  }
  free(x);
}

static size_t merge_bytes(int store, int n_rows, int re) {
  int padded = (n_rows + 15) / 16 * 16;
  return store == 0   ? (size_t)n_rows * re * 4
         : store == 8 ? (size_t)n_rows * (re / 32) * 34
                      : (size_t)padded * re * 2;
}

/* Two equal caches of `store` from merge_cache: c[0] for the emulation,
 * c[1] for the CPU backend. */
static void twin_caches(dq_backend *be, int store, int n_rows, int re,
                        rng *r, int zero, void *c[2]) {
  size_t nb = merge_bytes(store, n_rows, re);
  c[0] = calloc(1, nb);
  merge_cache(be, c[0], store, n_rows, re, r, zero);
  c[1] = malloc(nb);
  memcpy(c[1], c[0], nb);
}

static void test_merges(dq_backend *be) {
  struct {
    int sk, sv, n_kv, hd;
  } cases[] = {{0, 0, 2, 40}, {2, 1, 1, 64}, {2, 1, 2, 24},
               {8, 8, 2, 64}, {8, 8, 1, 96}, {0, 0, 4, 16}};
  rng r = {2024};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int sk = cases[c].sk, sv = cases[c].sv, n_kv = cases[c].n_kv;
    int hd = cases[c].hd, re = n_kv * hd;
    /* two jobs (layers): 37 memory rows of 80 (all merged but one), 700
     * rows of 1500 (more than a block's threads; 300 merges) */
    int n_rows[2] = {80, 1500}, ms[2] = {37, 700}, nm[2] = {36, 300};
    void *k[2][2], *v[2][2]; /* [job][0 ours, 1 the CPU's] */
    int32_t *rows = (int32_t *)malloc((37 + 700) * sizeof *rows);
    int32_t *count = (int32_t *)malloc((37 + 700) * sizeof *count);
    int32_t *pairs[2];
    for (int w = 0; w < 2; w++)
      pairs[w] = (int32_t *)calloc(2 * (37 + 700), sizeof(int32_t));
    void *scratch = malloc((size_t)16 * (37 + 700));
    dq_kv_merge_job jobs[2];
    int off = 0;
    for (int jb = 0; jb < 2; jb++) {
      twin_caches(be, sk, n_rows[jb], re, &r, 1, k[jb]);
      twin_caches(be, sv, n_rows[jb], re, &r, 0, v[jb]);
      for (int i = 0; i < ms[jb]; i++) { /* ascending rows, some skipped */
        rows[off + i] = (int32_t)(i * n_rows[jb] / ms[jb]);
        count[off + i] = 1 + (int32_t)(rng_next(&r) % 5);
      }
      jobs[jb] = (dq_kv_merge_job){k[jb][1], v[jb][1], off, ms[jb], nm[jb]};
      off += ms[jb];
    }
    dq_kv_merge a = {jobs, 2, sk, sv, n_kv, hd, rows, count, pairs[1],
                     scratch};
    CHECK_OK(be->i.kv_merge(be->ctx, &a), "cpu kv_merge");
    int bad_pairs = 0, bad_rows = 0, bad_sims = 0;
    float *sim = (float *)malloc(700 * sizeof *sim);
    for (int jb = 0; jb < 2; jb++) {
      int o = jobs[jb].off;
      emul_merge_job(k[jb][0], v[jb][0], sk, sv, n_kv, hd, rows + o,
                     count + o, ms[jb], nm[jb], pairs[0] + 2 * o, sim);
      /* the similarities (the choices hide a last-bit difference) */
      bad_sims += memcmp(sim, (uint8_t *)scratch + (size_t)16 * o,
                         (size_t)ms[jb] * 4) != 0;
      bad_pairs += memcmp(pairs[0] + 2 * o, pairs[1] + 2 * o,
                          (size_t)2 * nm[jb] * 4) != 0;
      bad_rows += memcmp(k[jb][0], k[jb][1], merge_bytes(sk, n_rows[jb], re)) != 0;
      bad_rows += memcmp(v[jb][0], v[jb][1], merge_bytes(sv, n_rows[jb], re)) != 0;
    }
    free(sim);
    CHECK_MSG(bad_pairs == 0 && bad_rows == 0 && bad_sims == 0,
              "merges, stores %d/%d, %d x %d: %d jobs' merges, %d jobs' "
              "similarities and %d row buffers differ from the CPU's", sk, sv,
              n_kv, hd, bad_pairs, bad_sims, bad_rows);
    /* the ties were there: some merge's pair was two equal rows */
    CHECK(pairs[1][1] >= 0 && pairs[1][2 * 37 + 1] >= 0);
    for (int jb = 0; jb < 2; jb++)
      for (int w = 0; w < 2; w++)
        free(k[jb][w]), free(v[jb][w]);
    free(rows), free(count), free(pairs[0]), free(pairs[1]), free(scratch);
  }
}

/* merge.cu's fold kernels for one job: init, each step from one half of
 * the scratch into the other, the store. */
static void emul_fold_job(void *k, void *v, int sk, int sv, int re,
                          const int32_t *rows, int f, const float *cf) {
  size_t dim = 2 * (size_t)re, n = (size_t)f * dim;
  float *in = (float *)malloc(2 * n * sizeof *in), *out = in + n;
  for (size_t i = 0; i < n; i++) {
    int t = (int)(i / dim), x = (int)(i % dim);
    float e = x < re ? dqm_get(k, sk, rows[t], x, re)
                     : dqm_get(v, sv, rows[t], x - re, re);
    in[i] = dqm_mul(e, cf[t]);
  }
  for (int st = 0, d = 1; d < f; st++, d *= 2) {
    const float *A = cf + (size_t)f * (1 + st);
    for (size_t i = 0; i < n; i++) {
      int t = (int)(i / dim);
      out[i] = t >= d ? dqm_add(dqm_mul(A[t], in[i - (size_t)d * dim]), in[i])
                      : in[i];
    }
    float *tmp = in;
    in = out;
    out = tmp;
  }
  const float *last = in + (size_t)(f - 1) * dim;
  emul_put_row(k, sk, rows[0], re, last);
  emul_put_row(v, sv, rows[0], re, last + re);
  free(in < out ? in : out);
}

static void test_folds(dq_backend *be) {
  struct {
    int sk, sv, re;
  } cases[] = {{0, 0, 80}, {2, 1, 64}, {2, 1, 40}, {8, 8, 96}};
  rng r = {77};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int sk = cases[c].sk, sv = cases[c].sv, re = cases[c].re;
    /* two jobs: 17 of 40 rows (the decode batch's fold), 300 of 320 */
    int n_rows[2] = {40, 320}, fs[2] = {17, 300};
    void *k[2][2], *v[2][2];
    int32_t rows[17 + 300];
    size_t n_coef = 0;
    for (int jb = 0; jb < 2; jb++)
      n_coef += (size_t)fs[jb] * (1 + dq_kv_fold_steps(fs[jb]));
    float *coef = (float *)malloc(n_coef * sizeof *coef);
    for (size_t i = 0; i < n_coef; i++)
      coef[i] = rng_unif(&r);
    float *scratch =
        (float *)malloc((size_t)2 * 300 * 2 * re * sizeof *scratch);
    dq_kv_fold_job jobs[2];
    int off = 0, coff = 0;
    for (int jb = 0; jb < 2; jb++) {
      twin_caches(be, sk, n_rows[jb], re, &r, 0, k[jb]);
      twin_caches(be, sv, n_rows[jb], re, &r, 0, v[jb]);
      for (int t = 0; t < fs[jb]; t++)
        rows[off + t] = (int32_t)(t * n_rows[jb] / fs[jb]);
      jobs[jb] = (dq_kv_fold_job){k[jb][1], v[jb][1], off, fs[jb], coff};
      off += fs[jb];
      coff += fs[jb] * (1 + dq_kv_fold_steps(fs[jb]));
    }
    dq_kv_fold a = {jobs, 2, sk, sv, re, rows, coef, scratch};
    CHECK_OK(be->i.kv_fold(be->ctx, &a), "cpu kv_fold");
    int bad = 0;
    for (int jb = 0; jb < 2; jb++) {
      emul_fold_job(k[jb][0], v[jb][0], sk, sv, re, rows + jobs[jb].off,
                    fs[jb], coef + jobs[jb].coef_off);
      bad += memcmp(k[jb][0], k[jb][1], merge_bytes(sk, n_rows[jb], re)) != 0;
      bad += memcmp(v[jb][0], v[jb][1], merge_bytes(sv, n_rows[jb], re)) != 0;
      for (int w = 0; w < 2; w++)
        free(k[jb][w]), free(v[jb][w]);
    }
    CHECK_MSG(bad == 0, "folds, stores %d/%d, %d elements: %d row buffers "
              "differ from the CPU's", sk, sv, re, bad);
    free(coef), free(scratch);
  }
}

int main(void) {
  test_routing();
  test_top_k();
  test_online_softmax();
  test_split_plan();
  dq_backend *be = NULL;
  dq_error err;
  memset(&err, 0, sizeof err);
  CHECK_OK(dq_backend_cpu_init(2, &be, &err), err.msg);
  if (be) {
    test_layouts(be);
    test_gather(be);
    test_attention(be);
    test_merges(be);
    test_folds(be);
    dq_backend_free(be);
  }
  return TEST_EXIT();
}
