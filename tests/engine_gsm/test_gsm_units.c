/*
 * test_gsm_units.c - gsm.c on hand-made keys, values and scores, with the
 * expected results worked out by hand in the comments: each compression
 * strategy (score, similarity, time_decay), anchors, the slot -> source
 * range bookkeeping, sinks and pinned spans that survive any eviction, the
 * parallel scan against the sequential recurrence, and chunk attention
 * against a naive softmax attention written here (full and sliding window).
 */
#include "gsm.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* an F32 cache's stored rows, as floats */
#define KF(rows) ((const float *)(const void *)(rows))

/* a one-layer, one-head cache of 2-element keys/values */
static dq_gsm *mk(int n_sink, int window, int anchors, int slots,
                  dq_gsm_merge strat, const int32_t *pins, int n_pins,
                  const int *exact_window) {
  dq_gsm_cfg c = {.n_layer = 1, .n_head = 1, .n_head_kv = 1, .head_dim = 2,
                  .scale = 1, .n_threads = 1, .max_chunk = 64};
  dq_gsm_opts_init(&c.o);
  c.o.n_sink = n_sink;
  c.o.window_size = window;
  c.o.num_global_anchors = anchors;
  c.o.memory_slots = slots;
  c.o.keep_ratio = 1;
  c.o.mode = DQ_GSM_LAYOUT_DYNAMIC;
  c.o.strategy = strat;
  c.o.pinned = pins;
  c.o.n_pinned = n_pins;
  c.layer_window = exact_window;
  dq_gsm *g = NULL;
  dq_error err = {0};
  CHECK_OK(dq_gsm_new(&c, &g, &err), err.msg);
  return g;
}

static void push(dq_gsm *g, int n, const float *kv2) {
  CHECK_OK(dq_gsm_append(g, 0, kv2, kv2, n, g->layers[0].n
                                                 ? g->layers[0].e[g->layers[0].n - 1].last + 1
                                                 : 0),
           "append");
}

static int has_pos(const dq_gsm_layer *L, int p, int kind) {
  for (int i = 0; i < L->n; i++)
    if (L->e[i].first == p && L->e[i].count == 1)
      return kind < 0 || L->e[i].kind == kind;
  return 0;
}

/* score: sink 0, window {6,7}; candidates 1..5 with accumulated scores
 * 1,5,3,7,2, seen by 8 - p queries: means 1/7=.14, 5/6=.83, 3/5=.6,
 * 7/4=1.75, 2/3=.67. anchor = 4; memory {1,2,3,5} over budget 2 -> drop
 * 1 and 3 (a plain sum would have dropped 1 and 5). */
static void test_score(void) {
  float k[16] = {0};
  dq_gsm *g = mk(1, 2, 1, 2, DQ_GSM_MERGE_SCORE, NULL, 0, NULL);
  if (!g)
    return;
  push(g, 8, k);
  float sc[8] = {9, 1, 5, 3, 7, 2, 0, 0};
  for (int i = 0; i < 8; i++)
    g->layers[0].e[i].score = sc[i];
  dq_gsm_compress(g, 0, 8, 2);
  const dq_gsm_layer *L = &g->layers[0];
  CHECK_EQ_INT(L->n, 6);
  CHECK(has_pos(L, 0, DQ_GSM_SINK));
  CHECK(!has_pos(L, 1, -1));
  CHECK(has_pos(L, 2, DQ_GSM_MEMORY));
  CHECK(!has_pos(L, 3, -1));
  CHECK(has_pos(L, 4, DQ_GSM_ANCHOR));
  CHECK(has_pos(L, 5, DQ_GSM_MEMORY));
  CHECK(has_pos(L, 6, DQ_GSM_WINDOW));
  CHECK(has_pos(L, 7, DQ_GSM_WINDOW));
  CHECK_EQ_INT(L->n_evicted, 2);
  dq_gsm_free(g);

  /* the same with position 1 pinned: it stays although its score is the
   * lowest; memory {2,3,5} over budget 2 drops 3 */
  int32_t pin[2] = {1, 2};
  g = mk(1, 2, 1, 2, DQ_GSM_MERGE_SCORE, pin, 1, NULL);
  if (!g)
    return;
  push(g, 8, k);
  for (int i = 0; i < 8; i++)
    g->layers[0].e[i].score = sc[i];
  dq_gsm_compress(g, 0, 8, 2);
  L = &g->layers[0];
  CHECK_EQ_INT(L->n, 7);
  CHECK(has_pos(L, 1, DQ_GSM_PINNED));
  CHECK(has_pos(L, 2, DQ_GSM_MEMORY) && has_pos(L, 5, DQ_GSM_MEMORY));
  CHECK(!has_pos(L, 3, -1));
  CHECK_EQ_INT(L->n_evicted, 1);
  dq_gsm_free(g);
}

/* similarity: memory keys (1,0) (1,.1) (0,1) (-1,0) at 1..4; budget 2.
 * cos: (1,2) .995, (2,3) .0995, (3,4) 0 -> merge 1+2: key (1,.05), count 2.
 * then cos((1,.05),(0,1)) = .0499 > 0 -> merge with 3: key
 * 2/3 (1,.05) + 1/3 (0,1) = (.6667, .3667), count 3, ranges [1,4). */
static void test_similarity(void) {
  float k[12] = {0, 0, 1, 0, 1, .1f, 0, 1, -1, 0, 5, 5};
  dq_gsm *g = mk(1, 1, 0, 2, DQ_GSM_MERGE_SIMILARITY, NULL, 0, NULL);
  if (!g)
    return;
  push(g, 6, k);
  dq_gsm_compress(g, 0, 6, 1);
  const dq_gsm_layer *L = &g->layers[0];
  CHECK_EQ_INT(L->n, 4); /* sink, slot [1,4), 4, window 5 */
  CHECK_EQ_INT(L->n_merged, 2);
  CHECK_EQ_INT(L->n_evicted, 0);
  if (L->n == 4) {
    const dq_gsm_entry *s = &L->e[1];
    CHECK_EQ_INT(s->count, 3);
    CHECK_EQ_INT(s->n_ranges, 1);
    CHECK_EQ_INT(s->rb[0], 1);
    CHECK_EQ_INT(s->re[0], 4);
    CHECK_EQ_INT(s->first, 1);
    CHECK_EQ_INT(s->last, 3);
    CHECK_NEAR(KF(L->k)[2], 2.0 / 3, 1e-5);
    CHECK_NEAR(KF(L->k)[3], 0.05 * 2 / 3 + 1.0 / 3, 1e-5);
    CHECK_NEAR(KF(L->v)[3], 0.05 * 2 / 3 + 1.0 / 3, 1e-5);
    CHECK_NEAR(s->logw, log(3.0), 1e-5);
    CHECK(has_pos(L, 4, DQ_GSM_MEMORY));
    CHECK(has_pos(L, 0, DQ_GSM_SINK) && has_pos(L, 5, DQ_GSM_WINDOW));
  }
  dq_gsm_free(g);
}

/* time_decay: window 2 keeps {4,5}; memory 0..3 (values 1,2,3,4) over
 * budget 2 folds the 3 oldest. gamma = exp(-1/2) = .60653, gaps 1:
 * a1 = g/(g+1) = .37754, h1 = .37754*1 + .62246*2 = 1.62246;
 * a2 = 2g/(2g+1) = .54813, h2 = .54813*1.62246 + .45187*3 = 2.24493. */
static void test_time_decay(void) {
  float k[12] = {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0};
  dq_gsm *g = mk(0, 2, 0, 2, DQ_GSM_MERGE_TIME_DECAY, NULL, 0, NULL);
  if (!g)
    return;
  push(g, 6, k);
  dq_gsm_compress(g, 0, 6, 2);
  const dq_gsm_layer *L = &g->layers[0];
  CHECK_EQ_INT(L->n, 4);
  CHECK_EQ_INT(L->n_merged, 2);
  if (L->n == 4) {
    CHECK_EQ_INT(L->e[0].count, 3);
    CHECK_EQ_INT(L->e[0].rb[0], 0);
    CHECK_EQ_INT(L->e[0].re[0], 3);
    CHECK_NEAR(KF(L->k)[0], 2.24493, 1e-4);
    CHECK_NEAR(KF(L->v)[0], 2.24493, 1e-4);
    CHECK_NEAR(KF(L->k)[2], 4, 0); /* position 3 untouched */
    CHECK(has_pos(L, 4, DQ_GSM_WINDOW) && has_pos(L, 5, DQ_GSM_WINDOW));
  }
  dq_gsm_free(g);
}

/* the scan equals the sequential recurrence; a hand case first */
static void test_scan(void) {
  float a[3] = {0, 0.5f, 0.25f}, b[3] = {2, 4, 8}, tmp[8];
  dq_gsm_scan(a, b, 3, 1, tmp);
  CHECK_NEAR(b[0], 2, 0);
  CHECK_NEAR(b[1], 5, 1e-6);    /* .5*2 + 4 */
  CHECK_NEAR(b[2], 9.25, 1e-6); /* .25*5 + 8 */
  enum { N = 37, D = 3 };
  float aa[N], bb[N * D], ref[N * D], t2[N * (D + 1)];
  unsigned r = 7;
  for (int i = 0; i < N; i++) {
    r = r * 1103515245u + 12345u;
    aa[i] = (float)((r >> 8) % 1000) / 1000.0f;
    for (int d = 0; d < D; d++)
      bb[i * D + d] = (float)((int)((r >> (4 + d)) % 200) - 100) / 50.0f;
  }
  for (int d = 0; d < D; d++) {
    float h = 0;
    for (int i = 0; i < N; i++)
      ref[i * D + d] = h = aa[i] * h + bb[i * D + d];
  }
  dq_gsm_scan(aa, bb, N, D, t2);
  double md = 0;
  for (int i = 0; i < N * D; i++)
    md = fmax(md, fabs(bb[i] - ref[i]));
  CHECK_MSG(md < 1e-5, "scan vs recurrence %g", md);
}

/* ranges: merging non-adjacent slots keeps separate ranges, more than
 * DQ_GSM_MAX_RANGES joins the closest; sinks/pins survive random scores */
static void test_ranges_and_pins(void) {
  int32_t pin[2] = {10, 13};
  dq_gsm *g = mk(3, 4, 2, 5, DQ_GSM_MERGE_SCORE, pin, 1, NULL);
  if (!g)
    return;
  unsigned r = 99;
  float k[2 * 16];
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < 32; i++) {
      r = r * 1103515245u + 12345u;
      k[i] = (float)((r >> 9) % 100) / 50.0f - 1;
    }
    push(g, 16, k);
    dq_gsm_layer *L = &g->layers[0];
    for (int i = 0; i < L->n; i++) {
      r = r * 1103515245u + 12345u;
      L->e[i].score += (float)((r >> 8) % 1000);
    }
    int n_seen = L->e[L->n - 1].last + 1;
    dq_gsm_compress(g, 0, n_seen, 4);
    int ok = 1;
    for (int p = 0; p < 3; p++)
      ok &= has_pos(L, p, DQ_GSM_SINK);
    for (int p = 10; p < 13 && n_seen > 12; p++)
      ok &= has_pos(L, p, DQ_GSM_PINNED);
    CHECK_MSG(ok, "round %d lost a sink or pinned token", round);
    /* 3 sinks + 3 pinned + 2 anchors + 5 memory + 4 window */
    CHECK_MSG(L->n <= 17, "round %d: %d entries", round, L->n);
  }
  dq_gsm_free(g);

  /* slot ranges: similarity merges of slots with a pinned token between */
  int32_t pin2[2] = {3, 4};
  float k2[16] = {1, 0, 1, 0, 1, 0, 9, 9, 1, 0, 1, 0, 1, 0, 0, 0};
  g = mk(0, 1, 0, 1, DQ_GSM_MERGE_SIMILARITY, pin2, 1, NULL);
  if (!g)
    return;
  push(g, 8, k2);
  dq_gsm_compress(g, 0, 8, 1);
  const dq_gsm_layer *L = &g->layers[0];
  /* memory 0,1,2,4,5,6 -> one slot with ranges [0,3) and [4,7) */
  CHECK_EQ_INT(L->n, 3);
  if (L->n == 3) {
    CHECK_EQ_INT(L->e[0].count, 6);
    CHECK_EQ_INT(L->e[0].n_ranges, 2);
    CHECK_EQ_INT(L->e[0].rb[0], 0);
    CHECK_EQ_INT(L->e[0].re[0], 3);
    CHECK_EQ_INT(L->e[0].rb[1], 4);
    CHECK_EQ_INT(L->e[0].re[1], 7);
    CHECK(L->e[1].kind == DQ_GSM_PINNED && L->e[1].first == 3);
  }
  dq_gsm_free(g);
}

/* naive causal softmax attention, one head; window > 0 hides p - j >= w */
static void naive(const float *q, const float *k, const float *v, int n,
                  int hd, int w, float *out) {
  for (int t = 0; t < n; t++) {
    double s[256], mx = -1e30, sum = 0;
    for (int j = 0; j <= t; j++) {
      s[j] = -1e30;
      if (w > 0 && t - j >= w)
        continue;
      double d = 0;
      for (int x = 0; x < hd; x++)
        d += (double)q[t * hd + x] * k[j * hd + x];
      s[j] = d * 0.5;
      mx = fmax(mx, s[j]);
    }
    for (int j = 0; j <= t; j++)
      sum += s[j] > -1e29 ? exp(s[j] - mx) : 0;
    for (int x = 0; x < hd; x++) {
      double o = 0;
      for (int j = 0; j <= t; j++)
        if (s[j] > -1e29)
          o += exp(s[j] - mx) / sum * v[j * hd + x];
      out[t * hd + x] = (float)o;
    }
  }
}

static void test_attention(int exact_window) {
  enum { N = 40, HD = 4 };
  float q[N * HD], k[N * HD], v[N * HD], want[N * HD], got[N * HD];
  unsigned r = 3;
  for (int i = 0; i < N * HD; i++) {
    r = r * 1103515245u + 12345u;
    q[i] = (float)((r >> 8) % 200) / 100.0f - 1;
    r = r * 1103515245u + 12345u;
    k[i] = (float)((r >> 8) % 200) / 100.0f - 1;
    r = r * 1103515245u + 12345u;
    v[i] = (float)((r >> 8) % 200) / 100.0f - 1;
  }
  naive(q, k, v, N, HD, exact_window, want);
  dq_gsm_cfg c = {.n_layer = 1, .n_head = 1, .n_head_kv = 1, .head_dim = HD,
                  .scale = 0.5f, .n_threads = 2, .max_chunk = 16};
  dq_gsm_opts_init(&c.o);
  c.o.window_size = 1000; /* holds everything */
  int win = exact_window;
  c.layer_window = &win;
  dq_gsm *g = NULL;
  dq_error err = {0};
  CHECK_OK(dq_gsm_new(&c, &g, &err), err.msg);
  if (!g)
    return;
  /* chunks of 16, 16, 8, compressing in between */
  for (int p = 0; p < N; p += 16) {
    int n = N - p < 16 ? N - p : 16;
    CHECK_OK(dq_gsm_attend(g, 0, q + p * HD, k + p * HD, v + p * HD, n, p,
                           got + p * HD),
             "attend");
    dq_gsm_compress(g, 0, p + n, 1000);
  }
  double md = 0;
  for (int i = 0; i < N * HD; i++)
    md = fmax(md, fabs(got[i] - want[i]));
  CHECK_MSG(md < 1e-5, "window %d: gsm vs naive attention %g", exact_window,
            md);
  /* the window's keys, plus fewer than a batch (16) of stale ones that
   * compress leaves until enough have gathered: hidden, as md shows */
  if (exact_window)
    CHECK(g->layers[0].n >= exact_window - 1 &&
          g->layers[0].n < exact_window - 1 + 16);
  dq_gsm_free(g);
}

/* The test's own RoPE (plain pairs, base 100) for dq_gsm_cfg.rope_fn. */
static void test_rope_fn(void *ctx, float *x, int n_tok, int n_head,
                         int head_dim, const int32_t *pos,
                         const dq_rope_params *r) {
  (void)ctx;
  for (int t = 0; t < n_tok; t++)
    for (int h = 0; h < n_head; h++)
      for (int i = 0; i < r->n_rot / 2; i++) {
        double th = pos[t] * pow(r->base, -2.0 * i / r->n_rot);
        float *v = x + ((size_t)t * n_head + h) * head_dim + 2 * i;
        double x0 = v[0], x1 = v[1];
        v[0] = (float)(x0 * cos(th) - x1 * sin(th));
        v[1] = (float)(x0 * sin(th) + x1 * cos(th));
      }
}

/* Cache positions renumbered lazily: a fixed layer (sink 1, window 6)
 * read in chunks of 4 with pos_limit 16, so positions run out every few
 * chunks. After each chunk: positions increase along the entries and stay
 * below the limit, and the output equals a naive attention in double
 * precision whose key e (the un-rotated source key) is rotated at entry e's
 * position and query t at its own entry's - so renumbering turned the
 * stored keys to exactly the positions the entries claim. */
static void test_cache_positions(void) {
  enum { N = 60, HD = 4, CH = 4, LIM = 16 };
  float q[N * HD], k[N * HD], v[N * HD], got[CH * HD];
  unsigned r = 7;
  for (int i = 0; i < N * HD; i++) {
    r = r * 1103515245u + 12345u;
    q[i] = (float)((r >> 8) % 200) / 50.0f - 2;
    r = r * 1103515245u + 12345u;
    k[i] = (float)((r >> 8) % 200) / 50.0f - 2;
    r = r * 1103515245u + 12345u;
    v[i] = (float)((r >> 8) % 200) / 100.0f - 1;
  }
  dq_rope_params rp = {.n_rot = HD, .base = 100, .freq_scale = 1,
                       .attn_factor = 1};
  dq_gsm_cfg c = {.n_layer = 1, .n_head = 1, .n_head_kv = 1, .head_dim = HD,
                  .scale = 0.5f, .n_threads = 1, .max_chunk = CH,
                  .rope = &rp, .rope_fn = test_rope_fn, .pos_limit = LIM};
  dq_gsm_opts_init(&c.o);
  c.o.mode = DQ_GSM_LAYOUT_FIXED;
  c.o.n_sink = 1;
  c.o.window_size = 6;
  c.o.encoder_window_scale = c.o.decoder_window_scale = 1;
  c.o.cache_positions = DQ_GSM_POS_CACHE;
  dq_gsm *g = NULL;
  dq_error err = {0};
  CHECK_OK(dq_gsm_new(&c, &g, &err), err.msg);
  if (!g)
    return;
  const dq_gsm_layer *L = &g->layers[0];
  double md = 0;
  int order_ok = 1;
  for (int p = 0; p < N; p += CH) {
    int n_old = L->n;
    CHECK_OK(dq_gsm_attend(g, 0, q + p * HD, k + p * HD, v + p * HD, CH, p,
                           got),
             "attend");
    for (int e = 0; e < L->n; e++)
      if (L->e[e].rpos >= LIM || (e && L->e[e].rpos <= L->e[e - 1].rpos))
        order_ok = 0;
    for (int t = 0; t < CH; t++) {
      int qe = n_old + t;
      float qr[HD];
      memcpy(qr, q + (p + t) * HD, sizeof qr);
      int32_t qp = L->e[qe].rpos;
      test_rope_fn(NULL, qr, 1, 1, HD, &qp, &rp);
      double s[64], mx = -1e30, sum = 0;
      for (int e = 0; e <= qe; e++) {
        float kr[HD];
        memcpy(kr, k + L->e[e].first * HD, sizeof kr);
        int32_t kp = L->e[e].rpos;
        test_rope_fn(NULL, kr, 1, 1, HD, &kp, &rp);
        double d = 0;
        for (int x = 0; x < HD; x++)
          d += (double)qr[x] * kr[x];
        s[e] = d * 0.5;
        mx = fmax(mx, s[e]);
      }
      for (int e = 0; e <= qe; e++)
        sum += exp(s[e] - mx);
      for (int x = 0; x < HD; x++) {
        double o = 0;
        for (int e = 0; e <= qe; e++)
          o += exp(s[e] - mx) / sum * v[L->e[e].first * HD + x];
        md = fmax(md, fabs(o - got[t * HD + x]));
      }
    }
    dq_gsm_compress(g, 0, p + CH, 6);
  }
  CHECK(order_ok);
  /* 60 tokens, at most 1 + 6 + 4 held: renumbered many times */
  CHECK_MSG(L->n_renumbered >= 5, "renumbered %d times", L->n_renumbered);
  CHECK_MSG(md < 1e-5, "cache positions vs naive attention %g", md);
  fprintf(stderr, "cache positions: %d renumberings, max diff %g\n",
          L->n_renumbered, md);
  dq_gsm_free(g);
}

/* dq_recall_combine: robust z-scores added, by hand. */
static void test_recall_combine(void) {
  /* probe: median 2, absolute deviations 2 1 0 1 2 -> MAD 1, z = x - 2;
   * toq: median 10, deviations 0 0 0 0 10 -> MAD 0, mean deviation 2,
   * z = (x - 10) / 2; constant: every deviation 0 -> z = 0 */
  const float ps[5] = {0, 1, 2, 3, 4}, tq[5] = {10, 10, 10, 10, 20};
  const float flat[5] = {7, 7, 7, 7, 7}, want[5] = {-2, -1, 0, 1, 7};
  float out[5];
  CHECK(dq_recall_combine(ps, tq, 5, 1, out) == DQ_OK);
  for (int i = 0; i < 5; i++)
    CHECK_MSG(out[i] == want[i], "span %d: %g, want %g", i, out[i], want[i]);
  /* the probe weighted 0.25: z = (x - 2) / 4 */
  CHECK(dq_recall_combine(ps, tq, 5, 0.25f, out) == DQ_OK);
  for (int i = 0; i < 5; i++)
    CHECK_MSG(out[i] == want[i] - (ps[i] - 2) * 0.75f, "weight 0.25, span %d: %g",
              i, out[i]);
  CHECK(dq_recall_combine(flat, ps, 5, 1, out) == DQ_OK);
  for (int i = 0; i < 5; i++)
    CHECK_MSG(out[i] == ps[i] - 2, "flat probe, span %d: %g", i, out[i]);
  /* an even count: the median of 1 3 5 7 is 4, deviations 3 1 1 3 -> 2 */
  const float e[4] = {1, 3, 5, 7}, z[4] = {0, 0, 0, 0};
  CHECK(dq_recall_combine(e, z, 4, 1, out) == DQ_OK);
  CHECK_MSG(out[0] == -1.5f && out[3] == 1.5f, "even: %g %g", out[0],
            out[3]);
  CHECK(dq_recall_combine(NULL, tq, 5, 1, out) == DQ_ERR_ARG);
  CHECK(dq_recall_combine(ps, tq, 0, 1, NULL) == DQ_OK);
}

/* Decoding past a full memory evicts in batches (gsm.c evict_slack): with
 * 1,280 slots the batch is 1280 / 128 = 10, so the memory, once over the
 * budget, goes down to 1,270 and then fills again one token per step:
 * never above the budget, never below 1,270, and 11 steps per compaction.
 * A fixed layer drops window tokens in batches of 300 / 128 = 2. */
static void test_evict_batches(void) {
  dq_gsm *g = mk(1, 8, 0, 1280, DQ_GSM_MERGE_SCORE, NULL, 0, NULL);
  if (!g)
    return;
  float kv[2] = {1, 0};
  int n_comp = 0, n_steps = 0, lo = 1 << 30, hi = 0;
  int64_t last_ev = 0;
  for (int p = 0; p < 1600; p++) {
    kv[1] = (float)(p % 5) * 0.1f;
    push(g, 1, kv);
    g->layers[0].e[g->layers[0].n - 1].score = (float)((p * 37) % 101);
    dq_gsm_compress(g, 0, p + 1, 8);
    const dq_gsm_layer *L = &g->layers[0];
    int m = 0;
    for (int i = 0; i < L->n; i++)
      m += L->e[i].kind == DQ_GSM_MEMORY;
    if (p >= 1400) { /* well past the first eviction */
      n_steps++;
      n_comp += L->n_evicted != last_ev;
      lo = m < lo ? m : lo;
      hi = m > hi ? m : hi;
    }
    last_ev = L->n_evicted;
  }
  CHECK_EQ_INT(hi, 1280);
  CHECK_EQ_INT(lo, 1270);
  CHECK(n_comp * 11 <= n_steps + 11 && n_comp * 11 >= n_steps - 11);
  dq_gsm_free(g);
  /* fixed layer, window 300: the window holds 298..300 tokens */
  dq_gsm_cfg c = {.n_layer = 1, .n_head = 1, .n_head_kv = 1, .head_dim = 2,
                  .scale = 1, .n_threads = 1, .max_chunk = 64};
  dq_gsm_opts_init(&c.o);
  c.o.n_sink = 1;
  c.o.window_size = 300;
  c.o.mode = DQ_GSM_LAYOUT_FIXED;
  dq_error err = {0};
  CHECK_OK(dq_gsm_new(&c, &g, &err), err.msg);
  if (!g)
    return;
  lo = 1 << 30, hi = 0;
  for (int p = 0; p < 700; p++) {
    push(g, 1, kv);
    dq_gsm_compress(g, 0, p + 1, 300);
    int w = g->layers[0].n - 1; /* all but the sink */
    if (p >= 400) {
      lo = w < lo ? w : lo;
      hi = w > hi ? w : hi;
    }
  }
  CHECK_EQ_INT(hi, 300);
  CHECK_EQ_INT(lo, 298);
  dq_gsm_free(g);
}

int main(void) {
  test_recall_combine();
  test_evict_batches();
  test_score();
  test_similarity();
  test_time_decay();
  test_scan();
  test_ranges_and_pins();
  test_attention(0);
  test_attention(5);
  test_cache_positions();
  return TEST_EXIT();
}
