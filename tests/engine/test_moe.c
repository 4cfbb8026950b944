/*
 * test_moe.c - mixture of experts and latent attention.
 *
 * Without model files: the routing rule (backend.h dq_moe_cfg) on router
 * logits worked out by hand - softmax with and without renormalisation,
 * sigmoid scores with DeepSeek-V3's selection bias and two-level group
 * routing (where flat top-k would choose differently), the scale, ties,
 * configuration errors - and the CPU backend's expert dispatch (tokens
 * grouped by expert) against a token-by-token evaluation of the same
 * experts, bit for bit on Q8_0 experts.
 *
 * With the fixtures in tests/fixtures/moe (tiny random models of each MoE
 * architecture, made by scripts/make-moe-fixtures.py with reference logits
 * from an independent numpy forward pass): see test_fixture below; GSM
 * attention on those models: test_fixture_gsm. DQ_MOE_VERBOSE=1 prints the
 * largest logit difference at every position.
 */
#include "backend.h"
#include "engine.h"
#include "kernels.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void route(const dq_moe_cfg *c, const float *logits, const float *bias,
                  int32_t *ids, float *w, int32_t *flat) {
  float scratch[2 * 64 + 16];
  dq_moe_route_one(c, logits, bias, ids, w, flat, scratch);
}

static void test_route_softmax(void) {
  dq_moe_cfg c = {.n_expert = 4,
                  .n_used = 2,
                  .gating = DQ_MOE_SOFTMAX,
                  .norm = 1,
                  .scale = 1.0f,
                  .n_group = 1};
  float lg[4] = {1, 3, 2, 0};
  int32_t ids[2], flat[2];
  float w[2];
  CHECK(dq_moe_cfg_check(&c) == NULL);
  route(&c, lg, NULL, ids, w, flat);
  CHECK_EQ_INT(ids[0], 1);
  CHECK_EQ_INT(ids[1], 2);
  /* renormalised: e^3 / (e^3 + e^2) */
  CHECK_NEAR(w[0], exp(3.0) / (exp(3.0) + exp(2.0)), 1e-6);
  CHECK_NEAR(w[1], exp(2.0) / (exp(3.0) + exp(2.0)), 1e-6);
  CHECK_EQ_INT(flat[0], 1);
  CHECK_EQ_INT(flat[1], 2);
  /* without renormalisation the weights are the softmax probabilities */
  c.norm = 0;
  route(&c, lg, NULL, ids, w, NULL);
  double z = exp(1.0) + exp(3.0) + exp(2.0) + 1.0;
  CHECK_NEAR(w[0], exp(3.0) / z, 1e-6);
  CHECK_NEAR(w[1], exp(2.0) / z, 1e-6);
  /* ties go to the lower expert id */
  float eq[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  c.n_used = 3;
  int32_t ids3[3];
  float w3[3];
  route(&c, eq, NULL, ids3, w3, NULL);
  CHECK_EQ_INT(ids3[0], 0);
  CHECK_EQ_INT(ids3[1], 1);
  CHECK_EQ_INT(ids3[2], 2);
  CHECK_NEAR(w3[0], 0.25, 1e-7);
}

/* Sigmoid scores, a selection bias, four groups of two experts, two groups
 * kept: the bias makes expert 0 the best single expert, but its group's
 * two best sum to less than groups 1 and 2, so two-level routing picks
 * experts 2 and 3 (group 1) where flat top-2 picks 0 and 2. The weights
 * are the unbiased sigmoid scores, renormalised, times the scale. */
static void test_route_groups(void) {
  dq_moe_cfg c = {.n_expert = 8,
                  .n_used = 2,
                  .gating = DQ_MOE_SIGMOID,
                  .norm = 1,
                  .scale = 2.5f,
                  .n_group = 4,
                  .n_group_used = 2};
  float lg[8] = {0, 0, 1, -1, 0, 0, 0, 0};
  float s2 = 1.0f / (1.0f + expf(-1.0f)), s3 = 1.0f / (1.0f + expf(1.0f));
  /* selection scores: 0.9 0.1 | 0.6 0.59 | 0.55 0.55 | 0.2 0.2 */
  float bias[8] = {0.4f,  -0.4f, 0.6f - s2, 0.59f - s3,
                   0.05f, 0.05f, -0.3f,     -0.3f};
  int32_t ids[2], flat[2];
  float w[2];
  CHECK(dq_moe_cfg_check(&c) == NULL);
  route(&c, lg, bias, ids, w, flat);
  CHECK_EQ_INT(ids[0], 2);
  CHECK_EQ_INT(ids[1], 3);
  CHECK_NEAR(w[0], 2.5 * s2 / (s2 + s3), 1e-6);
  CHECK_NEAR(w[1], 2.5 * s3 / (s2 + s3), 1e-6);
  CHECK_EQ_INT(flat[0], 0);
  CHECK_EQ_INT(flat[1], 2);
  /* one group kept: group 1 (1.19) beats group 2 (1.1) and group 0 (1.0) */
  c.n_group_used = 1;
  route(&c, lg, bias, ids, w, NULL);
  CHECK_EQ_INT(ids[0], 2);
  CHECK_EQ_INT(ids[1], 3);
  /* no renormalisation: weights are the sigmoid scores times the scale */
  c.n_group_used = 2;
  c.norm = 0;
  route(&c, lg, bias, ids, w, NULL);
  CHECK_NEAR(w[0], 2.5 * s2, 1e-6);
  /* flat routing on the same scores */
  c.n_group = 1;
  route(&c, lg, bias, ids, w, NULL);
  CHECK_EQ_INT(ids[0], 0);
  CHECK_EQ_INT(ids[1], 2);
  CHECK_NEAR(w[0], 2.5 * 0.5, 1e-6);
}

static void test_route_check(void) {
  dq_moe_cfg ok = {.n_expert = 8,
                   .n_used = 2,
                   .gating = DQ_MOE_SOFTMAX,
                   .norm = 0,
                   .scale = 1.0f,
                   .n_group = 1};
  dq_moe_cfg c = ok;
  c.n_used = 9;
  CHECK(dq_moe_cfg_check(&c) != NULL);
  c = ok;
  c.gating = 3;
  CHECK(dq_moe_cfg_check(&c) != NULL);
  c = ok;
  c.n_group = 3; /* does not divide 8 */
  c.n_group_used = 1;
  CHECK(dq_moe_cfg_check(&c) != NULL);
  c = ok;
  c.n_group = 4;
  c.n_group_used = 1; /* one group of 2 experts cannot give 4 */
  c.n_used = 4;
  CHECK(dq_moe_cfg_check(&c) != NULL);
  c.n_group_used = 2;
  CHECK(dq_moe_cfg_check(&c) == NULL);
  c = ok;
  c.scale = 0.0f;
  CHECK(dq_moe_cfg_check(&c) != NULL);
}

static float frand(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

/* A stack of n_mat random matrices of n_rows x n_cols in `type`. */
static void *random_stack(int type, int n_mat, int n_rows, int n_cols,
                          uint32_t *seed, dq_wmat *w) {
  size_t rb = dq_row_bytes((uint32_t)type, n_cols);
  uint8_t *buf = malloc(rb * (size_t)n_rows * n_mat);
  float *row = malloc((size_t)n_cols * 4);
  for (int r = 0; r < n_rows * n_mat; r++) {
    for (int i = 0; i < n_cols; i++)
      row[i] = frand(seed) / sqrtf((float)n_cols);
    dq_quantize_row(type, row, buf + (size_t)r * rb, n_cols);
  }
  free(row);
  *w = (dq_wmat){.name = "experts",
                 .type = (uint32_t)type,
                 .n_cols = n_cols,
                 .n_rows = n_rows,
                 .row_bytes = rb,
                 .data = buf};
  return buf;
}

/* The backend's grouped dispatch against each token alone, routed by hand
 * (some experts get several tokens, some none). */
static void test_dispatch(dq_backend *be, int type) {
  enum { NT = 7, E = 64, F = 32, X = 6, K = 2 };
  uint32_t seed = 7 + (uint32_t)type;
  dq_wmat g, u, d;
  void *bg = random_stack(type, X, F, E, &seed, &g);
  void *bu = random_stack(type, X, F, E, &seed, &u);
  void *bd = random_stack(type, X, E, F, &seed, &d);
  float x[NT * E], out[NT * E], one[E];
  for (int i = 0; i < NT * E; i++)
    x[i] = frand(&seed);
  int32_t ids[NT * K] = {0, 3, 3, 0, 5, 1, 0, 5, 3, 1, 1, 0, 5, 3};
  float w[NT * K];
  for (int i = 0; i < NT * K; i++)
    w[i] = 0.25f + 0.05f * (float)i;
  dq_moe_ffn f = {.x = x,
                  .n_tok = NT,
                  .ids = ids,
                  .w = w,
                  .n_used = K,
                  .n_expert = X,
                  .gate = &g,
                  .up = &u,
                  .down = &d,
                  .act = 0,
                  .out = out};
  CHECK_OK(be->i.moe_ffn(be->ctx, &f), "moe_ffn");
  double max_rel = 0;
  int same_bits = 1;
  for (int t = 0; t < NT; t++) {
    dq_moe_ffn f1 = f;
    f1.x = x + t * E;
    f1.n_tok = 1;
    f1.ids = ids + t * K;
    f1.w = w + t * K;
    f1.out = one;
    CHECK_OK(be->i.moe_ffn(be->ctx, &f1), "moe_ffn one token");
    same_bits &= memcmp(one, out + t * E, sizeof one) == 0;
    /* and by hand through plain matmuls in f32 */
    float ref[E] = {0};
    for (int j = 0; j < K; j++) {
      int e = ids[t * K + j];
      float gg[F], dd[E];
      for (int r = 0; r < F; r++) {
        float rg[E], ru[E];
        dq_dequantize_row(
            type, (const uint8_t *)bg + ((size_t)e * F + r) * g.row_bytes, rg,
            E);
        dq_dequantize_row(
            type, (const uint8_t *)bu + ((size_t)e * F + r) * u.row_bytes, ru,
            E);
        double sg = 0, su = 0;
        for (int i = 0; i < E; i++) {
          sg += (double)rg[i] * x[t * E + i];
          su += (double)ru[i] * x[t * E + i];
        }
        gg[r] = (float)(sg / (1.0 + exp(-sg)) * su);
      }
      for (int r = 0; r < E; r++) {
        float rd[F];
        dq_dequantize_row(
            type, (const uint8_t *)bd + ((size_t)e * E + r) * d.row_bytes, rd,
            F);
        double sd = 0;
        for (int i = 0; i < F; i++)
          sd += (double)rd[i] * gg[i];
        dd[r] = (float)sd;
      }
      for (int i = 0; i < E; i++)
        ref[i] += w[t * K + j] * dd[i];
    }
    for (int i = 0; i < E; i++) {
      double rel = fabs(ref[i] - out[t * E + i]) / (fabs(ref[i]) + 0.05);
      if (rel > max_rel)
        max_rel = rel;
    }
  }
  /* the kernels quantize activations to 8 bits per block for quantized
   * weights (relative error ~1% per product); f32 weights are exact up to
   * summation order */
  double tol = type == 0 ? 1e-4 : 0.05;
  fprintf(stderr, "dispatch type %d: max relative difference %.2e (tol %g)\n",
          type, max_rel, tol);
  CHECK_MSG(max_rel <= tol, "type %d: %.3e", type, max_rel);
  /* Q8_0 matmuls are batch-invariant: alone = in the batch, bit for bit */
  if (type == 8)
    CHECK_MSG(same_bits, "Q8_0 experts: a token's output depends on its batch");
  /* an expert id outside the layer is refused */
  int32_t bad[K] = {0, X};
  dq_moe_ffn fb = f;
  fb.n_tok = 1;
  fb.ids = bad;
  fb.out = one;
  CHECK(be->i.moe_ffn(be->ctx, &fb) != DQ_OK);
  free(bg);
  free(bu);
  free(bd);
}

static void test_route_op(dq_backend *be) {
  /* the backend op routes every token by the same rule and counts load */
  dq_moe_cfg c = {.n_expert = 8,
                  .n_used = 2,
                  .gating = DQ_MOE_SIGMOID,
                  .norm = 1,
                  .scale = 1.0f,
                  .n_group = 4,
                  .n_group_used = 2};
  float lg[3 * 8];
  uint32_t seed = 11;
  for (int i = 0; i < 24; i++)
    lg[i] = 2 * frand(&seed);
  int32_t ids[6], ids1[2], flat1[2];
  float w[6], w1[2];
  uint32_t load[16] = {0};
  dq_moe_route r = {
      .cfg = c, .logits = lg, .n_tok = 3, .ids = ids, .w = w, .load = load};
  CHECK_OK(be->i.moe_route(be->ctx, &r), "moe_route");
  uint32_t want[16] = {0};
  for (int t = 0; t < 3; t++) {
    route(&c, lg + 8 * t, NULL, ids1, w1, flat1);
    for (int j = 0; j < 2; j++) {
      CHECK_EQ_INT(ids[2 * t + j], ids1[j]);
      CHECK_NEAR(w[2 * t + j], w1[j], 0);
      want[ids1[j]]++;
      want[8 + flat1[j]]++;
    }
  }
  CHECK(memcmp(load, want, sizeof want) == 0);
}

/* ---- fixtures ------------------------------------------------------------ */

/* Why these tolerances. The fixtures' exact reference ("logits") is float64
 * on the weights the file holds (quantized tensors dequantized); the two
 * fixtures with only F32/F16 weights (qwen2moe, deepseek2-lite) must match
 * it to FIX_TOL_EXACT: our F16 kernels take f32 activations, so only f32
 * rounding differs (measured ~1e-5). With quantized weights our kernels,
 * like ggml's, round activations to 8-bit blocks first, which moves these
 * tiny models' logits by up to 0.16; those fixtures also hold
 * "logits_q8act", the reference with that rounding emulated, and
 * "q8act_flip_max_abs_diff", how far the logits move when activations are
 * jittered by 1e-6 so that some round to the neighbouring 8-bit step (the
 * floor for any float32 engine; one jitter pattern measures one sample of
 * it, so at least FIX_FLIP_MIN is assumed). We must match logits_q8act
 * within twice that spread plus FIX_TOL_EXACT. llama.cpp, on all-F32 copies of
 * the same models, agrees with the reference to 6e-6
 * (tests/fixtures/moe/README.md), which confirms the file conventions; a wrong
 * RoPE pairing, norm, routing or latent-attention absorption moves logits by
 * far more, and the expert load is compared exactly. */
#define FIX_TOL_EXACT 2e-3
#define FIX_FLIP_MIN 0.05

static json_t *fixture_list(void) {
  char p[8192];
  snprintf(p, sizeof p, "%s/tests/fixtures/moe", DQ_SOURCE_DIR);
  const char *names[] = {"mixtral", "qwen2moe",  "qwen3moe",
                         "olmoe",   "deepseek2", "deepseek2-lite"};
  json_t *a = json_array();
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char f[8300];
    snprintf(f, sizeof f, "%s/%s.json", p, names[i]);
    json_error_t e;
    json_t *j = json_load_file(f, 0, &e);
    if (!j) {
      fprintf(stderr, "fixture %s: %s (skipped)\n", f, e.text);
      continue;
    }
    json_object_set_new(j, "name", json_string(names[i]));
    json_array_append_new(a, j);
  }
  return a;
}

/* Max |ours - reference| over every position and vocabulary entry of the
 * rows in `ref` (a JSON array of rows); *top1_same counts positions whose
 * top-1 is the reference's or within tie_gap of it in the reference (a
 * near-tie that rounding may flip). */
static double logit_diff(const float *ours, json_t *ref, int n_vocab,
                         double tie_gap, int *top1_same) {
  double mx = 0;
  *top1_same = 0;
  for (size_t p = 0; p < json_array_size(ref); p++) {
    json_t *row = json_array_get(ref, p);
    int a = 0, b = 0;
    for (int v = 0; v < n_vocab; v++) {
      double r = json_real_value(json_array_get(row, (size_t)v));
      double o = ours[p * (size_t)n_vocab + v];
      double d = fabs(o - r);
      mx = d > mx ? d : mx;
      if (o > ours[p * (size_t)n_vocab + a])
        a = v;
      if (r > json_real_value(json_array_get(row, (size_t)b)))
        b = v;
    }
    *top1_same +=
        a == b || json_real_value(json_array_get(row, (size_t)b)) -
                          json_real_value(json_array_get(row, (size_t)a)) <=
                      tie_gap;
    if (getenv("DQ_MOE_VERBOSE")) {
      double pm = 0;
      for (int v = 0; v < n_vocab; v++) {
        double d = fabs(ours[p * (size_t)n_vocab + v] -
                        json_real_value(json_array_get(row, (size_t)v)));
        pm = d > pm ? d : pm;
      }
      fprintf(stderr, "  position %zu: max diff %.3e\n", p, pm);
    }
  }
  return mx;
}

/* GSM attention on a MoE model (deepseek2: over the latent cache, one KV
 * head of kv_lora_rank + rope dims): with a window holding every token it
 * must equal full attention; with a window of 8 and 8 memory slots it must
 * run in chunks with the cache bounded as configured. deepseek2 refuses
 * cache positions (its RoPE dims sit at the end of the row). */
static void test_fixture_gsm(dq_model *m, const dq_model_info *info,
                             const char *name, const int32_t *tok, int n) {
  dq_seq *a = NULL, *b = NULL, *c = NULL;
  dq_gsm_opts o;
  dq_gsm_opts_init(&o);
  o.min_tokens = 0;
  o.chunk_size = 16;
  o.window_size = 4096;
  o.cache_type = DQ_KV_F32; /* the full cache's type: the same values */
  CHECK_OK(dq_seq_new(m, n, &a), dq_model_errmsg(m));
  CHECK_OK(dq_seq_new_gsm(m, n, &o, &b), dq_model_errmsg(m));
  if (a && b) {
    CHECK_OK(dq_seq_eval(a, tok, n, DQ_LOGITS_LAST), dq_seq_errmsg(a));
    CHECK_OK(dq_seq_eval(b, tok, n, DQ_LOGITS_LAST), dq_seq_errmsg(b));
    const float *la = dq_seq_logits(a, NULL), *lb = dq_seq_logits(b, NULL);
    double md = 0;
    for (int i = 0; la && lb && i < info->n_vocab; i++)
      md = fmax(md, fabs(la[i] - lb[i]));
    dq_gsm_stats st;
    dq_seq_gsm_stats(b, &st);
    CHECK_EQ_STR(st.path, "gsm");
    fprintf(stderr, "%s: GSM holding everything vs full attention: %.2e\n",
            name, md);
    CHECK_MSG(md < 1e-4, "%s: GSM vs full %g", name, md);
  }
  o.window_size = 8;
  o.memory_slots = 8;
  o.n_sink = 2;
  o.num_global_anchors = 2;
  o.chunk_size = 8;
  CHECK_OK(dq_seq_new_gsm(m, n, &o, &c), dq_model_errmsg(m));
  if (c) {
    CHECK_OK(dq_seq_eval(c, tok, n, DQ_LOGITS_LAST), dq_seq_errmsg(c));
    dq_gsm_stats st;
    dq_seq_gsm_stats(c, &st);
    /* sinks + prefill window (x1.5) + anchors + memory */
    int bound = 2 + 12 + 2 + 8;
    CHECK_MSG(st.max_entries <= bound && st.n_evicted + st.n_merged > 0,
              "%s: %d entries (bound %d), %lld evicted", name, st.max_entries,
              bound, (long long)st.n_evicted);
    const float *l = dq_seq_logits(c, NULL);
    int finite = l != NULL;
    for (int i = 0; l && i < info->n_vocab; i++)
      finite &= isfinite(l[i]);
    CHECK(finite);
  }
  dq_seq *d = NULL;
  o.cache_positions = 1;
  dq_status st = dq_seq_new_gsm(m, n, &o, &d);
  if (info->kv_lora_rank > 0)
    CHECK_MSG(st != DQ_OK && strstr(dq_model_errmsg(m), "latent"),
              "%s: cache positions accepted", name);
  dq_seq_free(d);
  dq_seq_free(a);
  dq_seq_free(b);
  dq_seq_free(c);
}

/* One fixture: prefill of each sequence (all logits) and the same tokens
 * one at a time (the decode path: one token reads only its experts) against
 * the reference logits; the expert load counted by the engine against the
 * reference's routing, expert by expert. */
static void test_fixture(json_t *fx) {
  const char *name = json_string_value(json_object_get(fx, "name"));
  char path[8192];
  snprintf(path, sizeof path, "%s/tests/fixtures/moe/%s", DQ_SOURCE_DIR,
           json_string_value(json_object_get(fx, "gguf")));
  dq_model_opts mo;
  dq_model_opts_init(&mo);
  mo.backend = DQ_BACKEND_CPU;
  mo.n_threads = 2;
  mo.kv_type = DQ_KV_F32;
  dq_model *m = NULL;
  dq_error err = {0};
  CHECK_OK(dq_model_open(path, &mo, &m, &err), err.msg);
  if (!m)
    return;
  dq_model_info info;
  dq_model_get_info(m, &info);
  /* quantized tensors: compare with the activation-rounding reference */
  double q8 = json_real_value(json_object_get(fx, "q8act_max_abs_diff"));
  const char *lkey = q8 > 0 ? "logits_q8act" : "logits";
  double tol = FIX_TOL_EXACT;
  if (q8 > 0) {
    double flip =
        json_real_value(json_object_get(fx, "q8act_flip_max_abs_diff"));
    tol += 2 * (flip > FIX_FLIP_MIN ? flip : FIX_FLIP_MIN);
  }
  json_t *seqs = json_object_get(fx, "sequences");
  for (size_t si = 0; si < json_array_size(seqs); si++) {
    json_t *sq = json_object_get(json_array_get(seqs, si), "tokens");
    json_t *ref = json_object_get(json_array_get(seqs, si), lkey);
    json_t *experts = json_object_get(json_array_get(seqs, si), "experts");
    int n = (int)json_array_size(sq);
    int32_t *tok = malloc((size_t)n * 4);
    for (int i = 0; i < n; i++)
      tok[i] = (int32_t)json_integer_value(json_array_get(sq, (size_t)i));
    for (int mode = 0; mode < 2; mode++) { /* 0: prefill, 1: decode */
      dq_seq *s = NULL;
      CHECK_OK(dq_seq_new(m, n + 1, &s), dq_model_errmsg(m));
      if (!s)
        break;
      CHECK_OK(dq_seq_moe_stats_begin(s), dq_seq_errmsg(s));
      float *lg = malloc((size_t)n * info.n_vocab * 4);
      if (mode == 0) {
        CHECK_OK(dq_seq_eval(s, tok, n, DQ_LOGITS_ALL), dq_seq_errmsg(s));
        const float *l = dq_seq_logits(s, NULL);
        if (l)
          memcpy(lg, l, (size_t)n * info.n_vocab * 4);
      } else {
        for (int i = 0; i < n; i++) {
          CHECK_OK(dq_seq_eval(s, tok + i, 1, DQ_LOGITS_LAST),
                   dq_seq_errmsg(s));
          const float *l = dq_seq_logits(s, NULL);
          if (l)
            memcpy(lg + (size_t)i * info.n_vocab, l, (size_t)info.n_vocab * 4);
        }
      }
      int same;
      double d = logit_diff(lg, ref, info.n_vocab, tol, &same);
      fprintf(stderr,
              "%s seq %zu (%d tokens, %s): max |logit - %s| %.2e "
              "(tol %.3g), top-1 same at %d/%zu\n",
              name, si, n, mode ? "decode" : "prefill", lkey, d, tol, same,
              json_array_size(ref));
      CHECK_MSG(d <= tol, "%s seq %zu %s: %.3e", name, si,
                mode ? "decode" : "prefill", d);
      CHECK_EQ_INT(same, (int)json_array_size(ref));
      /* routing: per MoE layer, tokens per expert as the reference chose */
      int moe_i = 0;
      for (int l = 0; l < info.n_layer; l++) {
        const uint32_t *r, *f;
        int ne;
        CHECK_OK(dq_seq_moe_load(s, l, &r, &f, &ne), dq_seq_errmsg(s));
        if (!ne)
          continue;
        json_t *lay = json_array_get(experts, (size_t)moe_i++);
        uint32_t want[4096] = {0};
        for (size_t t = 0; t < json_array_size(lay); t++) {
          json_t *ids = json_array_get(lay, t);
          for (size_t j = 0; j < json_array_size(ids); j++)
            want[json_integer_value(json_array_get(ids, j))]++;
        }
        CHECK_MSG(memcmp(want, r, (size_t)ne * 4) == 0,
                  "%s seq %zu layer %d: expert load differs from the "
                  "reference routing",
                  name, si, l);
      }
      CHECK_EQ_INT(moe_i, (int)json_array_size(experts));
      free(lg);
      dq_seq_free(s);
    }
    if (si == 1)
      test_fixture_gsm(m, &info, name, tok, n);
    free(tok);
  }
  dq_model_free(m);
}

int main(void) {
  test_route_softmax();
  test_route_groups();
  test_route_check();
  dq_backend *be = NULL;
  dq_error err = {0};
  CHECK_OK(dq_backend_cpu_init(2, &be, &err), err.msg);
  if (be) {
    test_route_op(be);
    test_dispatch(be, 0); /* f32 */
    test_dispatch(be, 8); /* q8_0 */
    test_dispatch(be, 2); /* q4_0 */
    dq_backend_free(be);
  }
  json_t *fx = fixture_list();
  for (size_t i = 0; i < json_array_size(fx); i++)
    test_fixture(json_array_get(fx, i));
  CHECK_MSG(json_array_size(fx) > 0, "no MoE fixture in tests/fixtures/moe");
  json_decref(fx);
  return TEST_EXIT();
}
