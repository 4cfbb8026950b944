/*
 * test_units.c - model-free checks of the runtime's pieces against values
 * worked out by hand: f16 conversion, block dequantization, RoPE (normal and
 * NeoX pairing) against a hand-computed rotation, attention and its
 * statistics on a 2-token case, sliding window and grouped-query heads, the
 * F16/Q8_0 KV stores, and the sampler (greedy, top-k, top-p, min-p,
 * repetition penalty, seed reproducibility; its distribution bit for bit
 * against a full-sort reference), and the auto choice between
 * CUDA graphs and op-by-op decode steps (graph_tune.c) on made-up timings.
 */
#include "backend.h"
#include "engine.h"
#include "graph_tune.h"
#include "kernels.h"
#include "speculate.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_f16(void) {
  CHECK_EQ_INT(dq_f32_to_f16(1.0f), 0x3C00);
  CHECK_EQ_INT(dq_f32_to_f16(-2.0f), 0xC000);
  CHECK_EQ_INT(dq_f32_to_f16(65504.0f), 0x7BFF);
  CHECK_EQ_INT(dq_f32_to_f16(0.1f), 0x2E66); /* 0.0999755859375 */
  CHECK_NEAR(dq_f16_to_f32(0x3555), 0.333251953125, 0);
  CHECK_NEAR(dq_f16_to_f32(0x0001), 5.9604644775390625e-08, 0); /* subnormal */
}

static void test_dequant(void) {
  /* Q8_0: d = 0.5 (0x3800), q = -3, 0, 7, ... */
  uint8_t b8[34] = {0};
  b8[0] = 0x00, b8[1] = 0x38;
  b8[2] = (uint8_t)(int8_t)-3;
  b8[4] = 7;
  float y[32];
  CHECK_OK(dq_dequantize_row(8, b8, y, 32), "q8_0");
  CHECK_NEAR(y[0], -1.5, 0);
  CHECK_NEAR(y[1], 0, 0);
  CHECK_NEAR(y[2], 3.5, 0);
  /* Q4_1: d = 2, m = -1; qs[0] = 0x5A -> x0 = 10*2-1 = 19, x16 = 5*2-1 = 9 */
  uint8_t b41[20] = {0};
  b41[1] = 0x40;             /* d = 2.0 */
  b41[2] = 0x00, b41[3] = 0xBC; /* m = -1.0 */
  b41[4] = 0x5A;
  CHECK_OK(dq_dequantize_row(3, b41, y, 32), "q4_1");
  CHECK_NEAR(y[0], 19, 0);
  CHECK_NEAR(y[16], 9, 0);
  CHECK_NEAR(y[1], -1, 0);
  /* Q4_0: d = 1: nibble 0xF -> 7, 0x0 -> -8 */
  uint8_t b40[18] = {0};
  b40[1] = 0x3C;
  b40[2] = 0x0F;
  CHECK_OK(dq_dequantize_row(2, b40, y, 32), "q4_0");
  CHECK_NEAR(y[0], 7, 0);
  CHECK_NEAR(y[16], -8, 0);
  /* Q5_0: d = 1, qs[0] low nibble 0, high bit of element 0 set -> 16-16 = 0;
   * element 1: nibble 0, no high bit -> -16 */
  uint8_t b50[22] = {0};
  b50[1] = 0x3C;
  b50[2] = 0x01; /* qh bit 0 */
  CHECK_OK(dq_dequantize_row(6, b50, y, 32), "q5_0");
  CHECK_NEAR(y[0], 0, 0);
  CHECK_NEAR(y[1], -16, 0);
  CHECK_EQ_INT(dq_row_bytes(12, 512), 288);
  CHECK_EQ_INT(dq_row_bytes(14, 256), 210);
  CHECK_EQ_INT(dq_row_bytes(2, 33), 0);
}

static void test_rope(dq_backend *be) {
  /* one head of 4 dims at position 1, base 10000: pair 0 turns by 1 rad,
   * pair 1 by 10000^(-2/4) = 0.01 rad */
  const double c1 = 0.5403023058681398, s1 = 0.8414709848078965;
  const double c01 = 0.9999500004166653, s01 = 0.009999833334166664;
  dq_rope_params r = {.n_rot = 4, .neox = 0, .base = 10000.0f, .freq_scale = 1.0f,
               .attn_factor = 1.0f};
  int32_t pos[1] = {1};
  float x[4] = {1, 0, 0, 1};
  be->i.rope(be->ctx, x, 1, 1, 4, pos, &r);
  CHECK_NEAR(x[0], c1, 1e-6);
  CHECK_NEAR(x[1], s1, 1e-6);
  CHECK_NEAR(x[2], -s01, 1e-6);
  CHECK_NEAR(x[3], c01, 1e-6);
  /* NeoX pairs (0,2) and (1,3) */
  float y[4] = {1, 0, 0, 1};
  r.neox = 1;
  be->i.rope(be->ctx, y, 1, 1, 4, pos, &r);
  CHECK_NEAR(y[0], c1, 1e-6);
  CHECK_NEAR(y[2], s1, 1e-6);
  CHECK_NEAR(y[1], -s01, 1e-6);
  CHECK_NEAR(y[3], c01, 1e-6);
  /* linear scaling by 2: position 2 turns like position 1 unscaled */
  float z[4] = {1, 0, 0, 1};
  int32_t pos2[1] = {2};
  r.neox = 0;
  r.freq_scale = 0.5f;
  be->i.rope(be->ctx, z, 1, 1, 4, pos2, &r);
  CHECK_NEAR(z[0], c1, 1e-6);
  CHECK_NEAR(z[1], s1, 1e-6);
  /* position 0 leaves the vector unchanged */
  float w[4] = {0.3f, -0.2f, 0.7f, 0.1f};
  int32_t pos0[1] = {0};
  be->i.rope(be->ctx, w, 1, 1, 4, pos0, &r);
  CHECK_NEAR(w[2], 0.7, 1e-7);
}

static void test_attention(dq_backend *be) {
  /* keys k0 = (1,0), k1 = (0,1); values v0 = (1,2), v1 = (3,4).
   * Query at position 1: q = (ln 3, 0): scores (ln 3, 0), softmax (3/4, 1/4),
   * output 3/4 v0 + 1/4 v1 = (1.5, 2.5). Query at position 0 (causal) sees
   * only k0: output v0. */
  float k[4] = {1, 0, 0, 1}, v[4] = {1, 2, 3, 4};
  float q[4] = {0.5f, 0.5f, logf(3.0f), 0};
  float out[4], stats[2] = {0, 0};
  dq_attn a = {.q = q, .k = k, .v = v, .store = DQ_STORE_F32, .n_tok = 2,
               .pos0 = 0, .n_kv = 2, .n_head = 1, .n_head_kv = 1,
               .head_dim = 2, .causal = 1, .scale = 1.0f, .out = out,
               .stats = stats, .stats_stride = 2, .stats_q0 = 0,
               .stats_q1 = 2};
  CHECK_OK(be->i.attention(be->ctx, &a), "attention");
  CHECK_NEAR(out[0], 1, 1e-6);
  CHECK_NEAR(out[1], 2, 1e-6);
  CHECK_NEAR(out[2], 1.5, 1e-6);
  CHECK_NEAR(out[3], 2.5, 1e-6);
  /* mass received: position 0 gets 1 (from query 0) + 3/4, position 1 1/4 */
  CHECK_NEAR(stats[0], 1.75, 1e-6);
  CHECK_NEAR(stats[1], 0.25, 1e-6);
  /* window of 1: query 1 sees only itself */
  a.window = 1;
  a.stats = NULL;
  CHECK_OK(be->i.attention(be->ctx, &a), "attention window");
  CHECK_NEAR(out[2], 3, 1e-6);
  CHECK_NEAR(out[3], 4, 1e-6);
  /* not causal: query 0 = (0.5, 0.5) sees both keys equally */
  a.window = 0;
  a.causal = 0;
  CHECK_OK(be->i.attention(be->ctx, &a), "attention bidirectional");
  CHECK_NEAR(out[0], 2, 1e-6);
  CHECK_NEAR(out[1], 3, 1e-6);
  /* grouped-query: two query heads share one KV head; one query token at
   * position 1, head 0 = (ln 3, 0), head 1 = (0, ln 3) -> (1.5,2.5), (2.5,3.5) */
  float qg[4] = {logf(3.0f), 0, 0, logf(3.0f)}, og[4];
  dq_attn g = {.q = qg, .k = k, .v = v, .store = DQ_STORE_F32, .n_tok = 1,
               .pos0 = 1, .n_kv = 2, .n_head = 2, .n_head_kv = 1,
               .head_dim = 2, .causal = 1, .scale = 1.0f, .out = og};
  CHECK_OK(be->i.attention(be->ctx, &g), "gqa");
  CHECK_NEAR(og[0], 1.5, 1e-6);
  CHECK_NEAR(og[1], 2.5, 1e-6);
  CHECK_NEAR(og[2], 2.5, 1e-6);
  CHECK_NEAR(og[3], 3.5, 1e-6);
}

/* Query mass (dq_attn.qmass): each query's probability on key rows
 * [qmass_lo, qmass_hi) against a slow exact reference (the softmax of
 * every query in double), on random inputs: GQA, a chunk after a prefix,
 * causal with and without a window, not causal, a range partly inside the
 * chunk. f32 tolerance 2e-6 (probabilities <= 1 summed over <= 90 keys).
 * The statistics and the output do not change when it is asked for. */
static void test_attention_qmass(dq_backend *be) {
  enum { H = 4, HKV = 2, HD = 16, NT = 37, P0 = 53, NKV = P0 + NT };
  static float q[NT * H * HD], k[NKV * HKV * HD], v[NKV * HKV * HD];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof q / sizeof *q; i++)
    q[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 24) * 2 - 1;
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    k[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 24) * 4 - 2;
    v[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / (1 << 24) * 2 - 1;
  }
  struct { int causal, window, lo, hi; } cs[] = {
      {1, 0, 10, 30}, {1, 20, 40, 70}, {0, 0, 0, 5}, {1, 0, 60, NKV}};
  for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
    enum { STRIDE = NT + 3 };
    static float qm[H * STRIDE], st0[H * NKV], st1[H * NKV], o0[NT * H * HD],
        o1[NT * H * HD];
    for (int i = 0; i < H * STRIDE; i++)
      qm[i] = i % STRIDE >= NT ? -7.0f : 0.5f; /* padding stays, += 0.5 */
    memset(st0, 0, sizeof st0);
    memset(st1, 0, sizeof st1);
    dq_attn a = {.q = q, .k = k, .v = v, .store = DQ_STORE_F32, .n_tok = NT,
                 .pos0 = P0, .n_kv = NKV, .n_head = H, .n_head_kv = HKV,
                 .head_dim = HD, .causal = cs[c].causal,
                 .window = cs[c].window, .scale = 0.3f, .out = o0,
                 .stats = st0, .stats_stride = NKV, .stats_q0 = P0 + 5,
                 .stats_q1 = P0 + 30};
    CHECK_OK(be->i.attention(be->ctx, &a), "attention without qmass");
    a.out = o1;
    a.stats = st1;
    a.qmass = qm;
    a.qmass_stride = STRIDE;
    a.qmass_lo = cs[c].lo;
    a.qmass_hi = cs[c].hi;
    CHECK_OK(be->i.attention(be->ctx, &a), "attention with qmass");
    CHECK_MSG(memcmp(o0, o1, sizeof o0) == 0 && memcmp(st0, st1, sizeof st0) == 0,
              "case %zu: qmass changed the output or the statistics", c);
    double worst = 0;
    for (int h = 0; h < H; h++)
      for (int t = 0; t < NT; t++) {
        int p = P0 + t, hi = cs[c].causal ? p + 1 : NKV, lo = 0;
        if (cs[c].causal && cs[c].window > 0 && p - cs[c].window + 1 > 0)
          lo = p - cs[c].window + 1;
        double sc[NKV], mx = -1e300, z = 0, in = 0;
        const float *qr = q + ((size_t)t * H + h) * HD;
        for (int j = lo; j < hi; j++) {
          const float *kr = k + ((size_t)j * HKV + h / (H / HKV)) * HD;
          double d = 0;
          for (int i = 0; i < HD; i++)
            d += (double)qr[i] * kr[i];
          sc[j] = 0.3 * d;
          mx = sc[j] > mx ? sc[j] : mx;
        }
        for (int j = lo; j < hi; j++) {
          double e = exp(sc[j] - mx);
          z += e;
          if (j >= cs[c].lo && j < cs[c].hi)
            in += e;
        }
        double want = 0.5 + in / z, got = qm[h * STRIDE + t];
        worst = fmax(worst, fabs(got - want));
      }
    CHECK_MSG(worst < 2e-6, "case %zu: qmass off by %.3g", c, worst);
    for (int h = 0; h < H; h++)
      for (int t = NT; t < STRIDE; t++)
        CHECK_MSG(qm[h * STRIDE + t] == -7.0f, "case %zu: qmass wrote past "
                  "the call's tokens", c);
  }
}

/* The same attention through F16 and Q8_0 caches stays within their
 * rounding (f16: 2^-11 relative; q8_0: amax/254 per element). F16 keys are
 * stored in their 16-position panels (DQ_STORE_F16P), which the attention
 * reads in place. */
static void test_kv_stores(dq_backend *be) {
  enum { HD = 32, N = 3 };
  float k[N * HD], v[N * HD], q[HD], ref[HD], out[HD];
  for (int i = 0; i < N * HD; i++) {
    k[i] = sinf(0.37f * i);
    v[i] = cosf(0.11f * i);
  }
  for (int i = 0; i < HD; i++)
    q[i] = 0.2f * cosf(0.5f * i);
  dq_attn a = {.q = q, .k = k, .v = v, .store = DQ_STORE_F32, .n_tok = 1,
               .pos0 = N - 1, .n_kv = N, .n_head = 1, .n_head_kv = 1,
               .head_dim = HD, .causal = 1, .scale = 1.0f, .out = ref};
  CHECK_OK(be->i.attention(be->ctx, &a), "f32");
  int stores[2] = {DQ_STORE_F16, DQ_STORE_Q8_0};
  double tol[2] = {2e-3, 2e-2};
  for (int s = 0; s < 2; s++) {
    uint8_t kc[16 * HD * 4], vc[16 * HD * 4]; /* one whole panel */
    be->i.kv_store(be->ctx, kc,
                   stores[s] == DQ_STORE_F16 ? DQ_STORE_F16P : stores[s], 0,
                   k, N, HD);
    be->i.kv_store(be->ctx, vc, stores[s], 0, v, N, HD);
    a.k = kc;
    a.v = vc;
    a.store = stores[s];
    a.out = out;
    CHECK_OK(be->i.attention(be->ctx, &a), "stored");
    double md = 0;
    for (int i = 0; i < HD; i++)
      md = fmax(md, fabs(out[i] - ref[i]));
    CHECK_MSG(md < tol[s], "store %d: max diff %g", stores[s], md);
  }
}

static void test_norms(dq_backend *be) {
  /* rmsnorm of (3, 4): rms = sqrt(12.5) */
  float x[2] = {3, 4}, w[2] = {1, 2}, y[2];
  be->i.rmsnorm(be->ctx, x, w, y, 1, 2, 0.0f);
  CHECK_NEAR(y[0], 3 / sqrt(12.5), 1e-6);
  CHECK_NEAR(y[1], 8 / sqrt(12.5), 1e-6);
  /* layernorm of (1, 3): mean 2, var 1 -> (-1, 1) */
  float l[2] = {1, 3}, b[2] = {0.5f, 0};
  be->i.layernorm(be->ctx, l, NULL, b, y, 1, 2, 0.0f);
  CHECK_NEAR(y[0], -0.5, 1e-6);
  CHECK_NEAR(y[1], 1, 1e-6);
  /* SiLU(1) * 2 = 2 / (1 + e^-1) */
  float g[1] = {1}, u[1] = {2};
  be->i.glu(be->ctx, g, u, 1, 0);
  CHECK_NEAR(g[0], 2 / (1 + exp(-1.0)), 1e-6);
  /* GELU-tanh(1) = 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.8411920 */
  float h[1] = {1}, one[1] = {1};
  be->i.glu(be->ctx, h, one, 1, 1);
  CHECK_NEAR(h[0], 0.8411919906082768, 1e-6);
  /* exact GELU(1) = Phi(1) = 0.8413447461 */
  float e[1] = {1};
  be->i.gelu(be->ctx, e, 1, 0);
  CHECK_NEAR(e[0], 0.8413447460685429, 1e-6);
}

static void test_matmul(dq_backend *be) {
  /* W (2 x 3, f32) times two rows of x */
  float W[6] = {1, 2, 3, -1, 0, 1}, x[6] = {1, 1, 1, 0, 2, -1}, y[4];
  dq_wmat w = {.name = "w", .type = 0, .n_cols = 3, .n_rows = 2,
               .row_bytes = 12, .data = W};
  CHECK_OK(be->i.matmul(be->ctx, &w, x, y, 2), "matmul");
  CHECK_NEAR(y[0], 6, 0);
  CHECK_NEAR(y[1], 0, 0);
  CHECK_NEAR(y[2], 1, 0);
  CHECK_NEAR(y[3], -1, 0);
}

static int count_draws(const dq_sampler_opts *o, const float *logits, int nv,
                       int n_draws, int *hist) {
  dq_sampler *sm;
  if (dq_sampler_new(o, nv, &sm))
    return -1;
  memset(hist, 0, sizeof(int) * (size_t)nv);
  for (int i = 0; i < n_draws; i++) {
    int32_t t;
    dq_sampler_sample(sm, logits, &t);
    hist[t]++;
  }
  dq_sampler_free(sm);
  return 0;
}

static void test_sampler(void) {
  /* probabilities 0.5, 0.3, 0.15, 0.05 at temperature 1 */
  float lg[4] = {logf(0.5f), logf(0.3f), logf(0.15f), logf(0.05f)};
  int hist[4];
  dq_sampler_opts o;
  dq_sampler_opts_init(&o);
  o.top_k = 0, o.top_p = 1, o.min_p = 0;
  /* greedy */
  count_draws(&o, lg, 4, 10, hist);
  CHECK_EQ_INT(hist[0], 10);
  /* plain sampling: all four appear, frequencies near p (n = 4000) */
  o.temp = 1;
  o.seed = 42;
  count_draws(&o, lg, 4, 4000, hist);
  CHECK_MSG(abs(hist[0] - 2000) < 150 && abs(hist[3] - 200) < 60,
            "hist %d %d %d %d", hist[0], hist[1], hist[2], hist[3]);
  /* top-k 2: only ids 0 and 1 */
  o.top_k = 2;
  count_draws(&o, lg, 4, 1000, hist);
  CHECK(hist[2] == 0 && hist[3] == 0 && hist[0] > 0 && hist[1] > 0);
  /* top-p 0.7: 0.5 < 0.7 <= 0.8, so ids 0 and 1 survive, renormalised to
   * 0.625 / 0.375 */
  o.top_k = 0;
  o.top_p = 0.7f;
  count_draws(&o, lg, 4, 4000, hist);
  CHECK(hist[2] == 0 && hist[3] == 0);
  CHECK_MSG(abs(hist[0] - 2500) < 150, "top-p hist0 %d", hist[0]);
  /* top-p 0.5: id 0 alone reaches it */
  o.top_p = 0.5f;
  count_draws(&o, lg, 4, 200, hist);
  CHECK_EQ_INT(hist[0], 200);
  /* min-p 0.25: threshold 0.125 keeps 0.5, 0.3, 0.15, drops 0.05 */
  o.top_p = 1;
  o.min_p = 0.25f;
  count_draws(&o, lg, 4, 2000, hist);
  CHECK(hist[3] == 0 && hist[2] > 0);
  /* min-p 0.7: threshold 0.35 keeps only id 0 */
  o.min_p = 0.7f;
  count_draws(&o, lg, 4, 200, hist);
  CHECK_EQ_INT(hist[0], 200);
  /* seed reproducibility */
  o.min_p = 0;
  dq_sampler *a, *b, *c;
  o.seed = 7;
  CHECK_OK(dq_sampler_new(&o, 4, &a), "new");
  CHECK_OK(dq_sampler_new(&o, 4, &b), "new");
  o.seed = 8;
  CHECK_OK(dq_sampler_new(&o, 4, &c), "new");
  int same_ab = 1, same_ac = 1;
  for (int i = 0; i < 64; i++) {
    int32_t ta, tb, tc;
    dq_sampler_sample(a, lg, &ta);
    dq_sampler_sample(b, lg, &tb);
    dq_sampler_sample(c, lg, &tc);
    same_ab &= ta == tb;
    same_ac &= ta == tc;
  }
  CHECK(same_ab);
  CHECK(!same_ac);
  dq_sampler_free(a);
  dq_sampler_free(b);
  dq_sampler_free(c);
  /* repetition penalty 1.2 after token 0: 2.0 / 1.2 = 1.67 < 1.9 */
  float rp[2] = {2.0f, 1.9f};
  dq_sampler_opts_init(&o);
  o.repeat_penalty = 1.2f;
  dq_sampler *r;
  CHECK_OK(dq_sampler_new(&o, 2, &r), "new");
  int32_t t;
  dq_sampler_sample(r, rp, &t);
  CHECK_EQ_INT(t, 0);
  dq_sampler_sample(r, rp, &t);
  CHECK_EQ_INT(t, 1);
  dq_sampler_free(r);
  /* bad options are refused */
  o.top_p = 1.5f;
  CHECK(dq_sampler_new(&o, 2, &r) == DQ_ERR_ARG);
  dq_sampler_free(NULL);
}

/* ---- the sampler's distribution against the full-sort reference -------- *
 * The sampler selects its candidates with dq_top_k (a heap, not a sort of
 * the vocabulary). Reference: the chain as first written here, sorting
 * every id by (penalised logit desc, id asc) with qsort_r, the penalty
 * over the distinct recent tokens on a copy, softmax over the top-k in
 * sorted order (double sum), top-p prefix, min-p cut. The two must give
 * the same distribution bit for bit, so the same tokens for a seed. */
static int ref_cmp(const void *a, const void *b, void *w) {
  const float *v = w;
  int32_t ia = *(const int32_t *)a, ib = *(const int32_t *)b;
  if (v[ia] > v[ib])
    return -1;
  if (v[ia] < v[ib])
    return 1;
  return ia < ib ? -1 : ia > ib;
}

static void ref_probs(const dq_sampler_opts *o, const float *logits, int nv,
                      const int32_t *recent, int n_recent, float *probs) {
  float *w = malloc((size_t)nv * sizeof *w);
  int32_t *idx = malloc((size_t)nv * sizeof *idx);
  memcpy(w, logits, (size_t)nv * sizeof *w);
  for (int i = 0; o->repeat_penalty != 1.0f && i < n_recent; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++)
      seen |= recent[j] == recent[i];
    if (!seen)
      w[recent[i]] = w[recent[i]] > 0 ? w[recent[i]] / o->repeat_penalty
                                      : w[recent[i]] * o->repeat_penalty;
  }
  memset(probs, 0, (size_t)nv * sizeof *probs);
  for (int i = 0; i < nv; i++)
    idx[i] = i;
  qsort_r(idx, (size_t)nv, sizeof *idx, ref_cmp, w);
  if (o->temp <= 0) {
    probs[idx[0]] = 1;
  } else {
    int n = o->top_k > 0 && o->top_k < nv ? o->top_k : nv;
    float mx = w[idx[0]];
    double sum = 0;
    for (int i = 0; i < n; i++) {
      w[idx[i]] = expf((w[idx[i]] - mx) / o->temp);
      sum += w[idx[i]];
    }
    for (int i = 0; i < n; i++)
      w[idx[i]] = (float)(w[idx[i]] / sum);
    double cum = 0;
    for (int i = 0; o->top_p < 1 && i < n; i++)
      if ((cum += w[idx[i]]) >= o->top_p) {
        n = i + 1;
        break;
      }
    int k = 1;
    while (o->min_p > 0 && k < n && w[idx[k]] >= o->min_p * w[idx[0]])
      k++;
    if (o->min_p > 0)
      n = k;
    double tot = 0;
    for (int i = 0; i < n; i++)
      tot += w[idx[i]];
    for (int i = 0; i < n; i++)
      probs[idx[i]] = (float)(w[idx[i]] / tot);
  }
  free(w);
  free(idx);
}

static void test_sampler_reference(void) {
  uint64_t x = 12345;
  const int nv = 3000;
  float *lg = malloc(nv * sizeof *lg), *got = malloc(nv * sizeof *got),
        *want = malloc(nv * sizeof *want);
  int n_cases = 0, n_diff = 0;
  for (int c = 0; c < 48; c++) {
    dq_sampler_opts o;
    dq_sampler_opts_init(&o);
    o.temp = c % 6 == 0 ? 0.0f : 0.3f + 0.2f * (float)(c % 5);
    o.top_k = (int[]){0, 1, 40, 500, 3000, 2999}[c % 6 == 0 ? 2 : (c / 2) % 6];
    o.top_p = c % 3 == 0 ? 1.0f : 0.9f;
    o.min_p = c % 4 == 0 ? 0.0f : 0.05f;
    o.repeat_penalty = c % 2 ? 1.3f : (c % 4 == 2 ? 0.8f : 1.0f);
    dq_sampler *sm;
    if (dq_sampler_new(&o, nv, &sm))
      break;
    int32_t recent[64];
    for (int i = 0; i < 64; i++) { /* repeats on purpose */
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      recent[i] = (int32_t)((x >> 33) % (c % 2 ? 50 : nv));
      dq_sampler_accept(sm, recent[i]);
    }
    for (int i = 0; i < nv; i++) { /* ties: quarter steps over [-6, 6) */
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      lg[i] = c % 3 == 1 ? (float)((int)((x >> 33) % 48) - 24) / 4
                         : (float)((double)(x >> 11) * 0x1p-53 * 12 - 6);
    }
    dq_sampler_probs(sm, lg, got);
    ref_probs(&o, lg, nv, recent, 64, want);
    n_diff += memcmp(got, want, nv * sizeof *got) != 0;
    n_cases++;
    dq_sampler_free(sm);
  }
  CHECK_EQ_INT(n_cases, 48);
  CHECK_MSG(n_diff == 0, "%d of %d distributions differ from the reference",
            n_diff, n_cases);
  free(lg);
  free(got);
  free(want);
}

/* Runs n steps of the tuner with step times tg (graph) / td (op by op);
 * counts the graph steps. */
static int tune_steps(dq_graph_tune *g, int n, double tg, double td) {
  int n_graph = 0;
  for (int i = 0; i < n; i++) {
    int mode = dq_graph_tune_next(g);
    n_graph += mode;
    /* one slow outlier per mode (an instantiation, a hiccup) */
    double t = mode ? tg : td;
    if (i == 0 || i == 5)
      t *= 20;
    dq_graph_tune_record(g, mode, t);
  }
  return n_graph;
}

static void test_graph_tune(void) {
  dq_graph_tune g;
  dq_graph_tune_init(&g);
  CHECK_EQ_INT(g.choice, -1);
  /* a trial alternates, graphs first */
  CHECK_EQ_INT(dq_graph_tune_next(&g), 1);
  CHECK_EQ_INT(tune_steps(&g, 2 * GT_TRIAL, 100e-6, 150e-6), GT_TRIAL);
  CHECK_EQ_INT(g.choice, 1);
  CHECK_NEAR(g.med[1], 100e-6, 1e-12);
  CHECK_NEAR(g.med[0], 150e-6, 1e-12);
  /* kept until the next trial, whatever the times meanwhile */
  CHECK_EQ_INT(tune_steps(&g, GT_PERIOD, 900e-6, 150e-6), GT_PERIOD);
  /* the next trial sees graphs slower now: op by op from then on */
  CHECK_EQ_INT(tune_steps(&g, 2 * GT_TRIAL, 200e-6, 150e-6), GT_TRIAL);
  CHECK_EQ_INT(g.choice, 0);
  CHECK_EQ_INT(tune_steps(&g, 100, 1e-6, 150e-6), 0);
  /* a trial in which only one mode ran keeps that mode */
  dq_graph_tune_init(&g);
  for (int i = 0; i < 2 * GT_TRIAL; i++)
    dq_graph_tune_record(&g, 0, 1e-4);
  CHECK_EQ_INT(g.choice, 0);
}

int main(void) {
  dq_backend *be = NULL;
  dq_error err = {0};
  CHECK_OK(dq_backend_cpu_init(2, &be, &err), err.msg);
  if (!be)
    return TEST_EXIT();
  CHECK_EQ_STR(be_name(be), "cpu");
  test_f16();
  test_dequant();
  test_rope(be);
  test_attention(be);
  test_attention_qmass(be);
  test_kv_stores(be);
  test_norms(be);
  test_matmul(be);
  test_sampler();
  test_sampler_reference();
  test_graph_tune();
  dq_backend *cu = NULL;
  dq_status s = dq_backend_cuda_init(0, &cu, &err);
#ifdef DQ_HAVE_CUDA
  /* no device here (the CI machines) or a working one */
  CHECK(s == DQ_ERR_DEVICE || s == DQ_OK);
  CHECK(s == DQ_OK ? cu && !strcmp(be_name(cu), "cuda")
                   : !cu && strstr(err.msg, "cuda backend") != NULL);
#else
  CHECK_EQ_INT(s, DQ_ERR_UNSUPPORTED);
  CHECK(!cu && strstr(err.msg, "built without CUDA") != NULL);
#endif
  dq_backend_free(cu);
  dq_backend_free(be);
  dq_backend_free(NULL);
  return TEST_EXIT();
}
