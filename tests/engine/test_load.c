/*
 * test_load.c - loading rules on small GGUF files written by the test
 * (tests/engine_tok/gguf_writer.h), no model download needed: every
 * supported decoder layout (llama, qwen2 with q/k/v biases, qwen3 with q/k
 * norms, gemma3 with post-norms) loads and runs a forward pass with finite
 * logits; an unknown architecture is refused by name; a tensor whose shape
 * does not match the hyperparameters, or a missing tensor, fails at load
 * with the tensor named; files without a tokenizer refuse text input.
 * Mixture-of-experts layers (Mixtral's layout) load and run the same way;
 * inconsistent routing sizes and a wrong or missing expert tensor are
 * refused with the key or tensor named.
 * Also: a causal model's logits at position p do not depend on later tokens,
 * prefill in one batch equals token-by-token decode, and weights read into
 * memory (DQ_WEIGHTS_READ) give the mapping's logits bit for bit.
 */
#include "engine.h"
#include "test.h"

#include "engine_tok/gguf_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { E = 64, HD = 32, NH = 2, NKV = 1, FF = 96, NV = 50, NL = 2 };

typedef struct {
  const char *arch;
  int bias, qk_norm, post_norms;
  const char *skip; /* tensor to leave out */
  const char *bad;  /* tensor written with a wrong shape */
  /* mixture of experts (n_expert 0: dense FFNs) */
  int n_expert, n_used, n_group, n_group_used;
} spec;

static uint32_t rng = 12345;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return ((rng >> 8) / 16777216.0f - 0.5f) * 0.2f;
}

/* An F32 tensor of ne {n0, n1, n2} (n2 > 1: 3-D, a stack of experts). */
static void add_f32_3(gw *w, const spec *sp, const char *name, uint64_t n0,
                      uint64_t n1, uint64_t n2, float base) {
  if (sp->skip && strcmp(sp->skip, name) == 0)
    return;
  if (sp->bad && strcmp(sp->bad, name) == 0)
    n1 += 1;
  size_t n = (size_t)(n0 * n1 * n2);
  float *d = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++)
    d[i] = base + frand();
  uint64_t ne[3] = {n0, n1, n2};
  gw_add_tensor(w, name, 0,
                n2 > 1   ? 3
                : n1 > 1 ? 2
                         : 1,
                ne, d, n * sizeof(float));
  free(d);
}

static void add_f32(gw *w, const spec *sp, const char *name, uint64_t n0,
                    uint64_t n1, float base) {
  add_f32_3(w, sp, name, n0, n1, 1, base);
}

static char *write_model(const spec *sp) {
  gw w;
  gw_init(&w);
  rng = 12345; /* the same spec, the same weights */
  char k[128];
  gw_add_str(&w, "general.architecture", sp->arch);
#define KEY(s) (snprintf(k, sizeof k, "%s.%s", sp->arch, s), k)
  gw_add_u32(&w, KEY("block_count"), NL);
  gw_add_u32(&w, KEY("context_length"), 128);
  gw_add_u32(&w, KEY("embedding_length"), E);
  gw_add_u32(&w, KEY("feed_forward_length"), FF);
  gw_add_u32(&w, KEY("attention.head_count"), NH);
  gw_add_u32(&w, KEY("attention.head_count_kv"), NKV);
  gw_add_u32(&w, KEY("attention.key_length"), HD);
  gw_add_u32(&w, KEY("attention.value_length"), HD);
  gw_add_f32(&w, KEY("attention.layer_norm_rms_epsilon"), 1e-6f);
  gw_add_f32(&w, KEY("rope.freq_base"), 10000.0f);
  if (sp->n_expert) {
    gw_add_u32(&w, KEY("expert_count"), (uint32_t)sp->n_expert);
    gw_add_u32(&w, KEY("expert_used_count"), (uint32_t)sp->n_used);
    gw_add_u32(&w, KEY("expert_group_count"), (uint32_t)sp->n_group);
    gw_add_u32(&w, KEY("expert_group_used_count"), (uint32_t)sp->n_group_used);
  }
#undef KEY
  add_f32(&w, sp, "token_embd.weight", E, NV, 0);
  add_f32(&w, sp, "output_norm.weight", E, 1, 1);
  for (int l = 0; l < NL; l++) {
    char n[64];
#define T(s) (snprintf(n, sizeof n, "blk.%d.%s", l, s), n)
    add_f32(&w, sp, T("attn_norm.weight"), E, 1, 1);
    add_f32(&w, sp, T("attn_q.weight"), E, NH * HD, 0);
    add_f32(&w, sp, T("attn_k.weight"), E, NKV * HD, 0);
    add_f32(&w, sp, T("attn_v.weight"), E, NKV * HD, 0);
    add_f32(&w, sp, T("attn_output.weight"), NH * HD, E, 0);
    if (sp->bias) {
      add_f32(&w, sp, T("attn_q.bias"), NH * HD, 1, 0);
      add_f32(&w, sp, T("attn_k.bias"), NKV * HD, 1, 0);
      add_f32(&w, sp, T("attn_v.bias"), NKV * HD, 1, 0);
    }
    if (sp->qk_norm) {
      add_f32(&w, sp, T("attn_q_norm.weight"), HD, 1, 1);
      add_f32(&w, sp, T("attn_k_norm.weight"), HD, 1, 1);
    }
    if (sp->post_norms) {
      add_f32(&w, sp, T("post_attention_norm.weight"), E, 1, 1);
      add_f32(&w, sp, T("post_ffw_norm.weight"), E, 1, 1);
    }
    add_f32(&w, sp, T("ffn_norm.weight"), E, 1, 1);
    if (sp->n_expert) {
      int X = sp->n_expert;
      add_f32(&w, sp, T("ffn_gate_inp.weight"), E, (uint64_t)X, 0);
      add_f32_3(&w, sp, T("ffn_gate_exps.weight"), E, FF, (uint64_t)X, 0);
      add_f32_3(&w, sp, T("ffn_up_exps.weight"), E, FF, (uint64_t)X, 0);
      add_f32_3(&w, sp, T("ffn_down_exps.weight"), FF, E, (uint64_t)X, 0);
      continue;
    }
    add_f32(&w, sp, T("ffn_gate.weight"), E, FF, 0);
    add_f32(&w, sp, T("ffn_up.weight"), E, FF, 0);
    add_f32(&w, sp, T("ffn_down.weight"), FF, E, 0);
#undef T
  }
  size_t len;
  uint8_t *buf = gw_finish(&w, &len);
  gw_free(&w);
  static int seq;
  char *path = malloc(256);
  snprintf(path, 256, "/tmp/dq_engine_load_%d_%d.gguf", (int)getpid(), seq++);
  FILE *f = fopen(path, "wb");
  fwrite(buf, 1, len, f);
  fclose(f);
  free(buf);
  return path;
}

static dq_status open_spec_w(const spec *sp, dq_weights_mode wm, dq_model **m,
                             dq_error *err) {
  char *path = write_model(sp);
  dq_model_opts o;
  dq_model_opts_init(&o);
  o.backend = DQ_BACKEND_CPU;
  o.n_threads = 2;
  o.weights = wm;
  dq_status s = dq_model_open(path, &o, m, err);
  unlink(path); /* the mapping keeps the data alive */
  free(path);
  return s;
}

static dq_status open_spec(const spec *sp, dq_model **m, dq_error *err) {
  return open_spec_w(sp, DQ_WEIGHTS_MAP, m, err);
}

/* The weights read into memory (DQ_WEIGHTS_READ) give the mapping's logits,
 * bit for bit. */
static void check_read_weights(const spec *sp, const int32_t *toks, int n,
                               const float *want) {
  dq_model *m = NULL;
  dq_error err = {0};
  CHECK_OK(open_spec_w(sp, DQ_WEIGHTS_READ, &m, &err), err.msg);
  if (!m)
    return;
  dq_model_info info;
  dq_model_get_info(m, &info);
  CHECK_EQ_STR(info.weights, "read");
  dq_seq *a = NULL;
  CHECK_OK(dq_seq_new(m, 16, &a), dq_model_errmsg(m));
  CHECK_OK(dq_seq_eval(a, toks, n, DQ_LOGITS_ALL), dq_seq_errmsg(a));
  const float *got = dq_seq_logits(a, NULL);
  CHECK_MSG(got && !memcmp(got, want, sizeof(float) * (size_t)(n * NV)),
            "%s: logits with the weights read differ from mapped", sp->arch);
  dq_seq_free(a);
  dq_model_free(m);
}

static void check_runs_spec(spec sp);
static void check_runs(const char *arch, int bias, int qk, int post) {
  check_runs_spec((spec){arch, bias, qk, post, NULL, NULL, 0, 0, 0, 0});
}

static void check_runs_spec(spec sp) {
  const char *arch = sp.arch;
  dq_model *m = NULL;
  dq_error err = {0};
  CHECK_OK(open_spec(&sp, &m, &err), err.msg);
  if (!m)
    return;
  dq_model_info info;
  dq_model_get_info(m, &info);
  CHECK_EQ_STR(info.arch, arch);
  CHECK_EQ_INT(info.n_vocab, NV);
  CHECK_EQ_INT(info.head_dim, HD);
  CHECK_EQ_STR(info.weights, "mapped");
  dq_seq *a = NULL, *b = NULL;
  CHECK_OK(dq_seq_new(m, 16, &a), dq_model_errmsg(m));
  CHECK_OK(dq_seq_new(m, 16, &b), dq_model_errmsg(m));
  int32_t toks[6] = {3, 17, 42, 8, 8, 1};
  /* one batch */
  CHECK_OK(dq_seq_eval(a, toks, 6, DQ_LOGITS_ALL), dq_seq_errmsg(a));
  int rows = 0;
  const float *la = dq_seq_logits(a, &rows);
  CHECK_EQ_INT(rows, 6);
  int finite = 1;
  for (int i = 0; la && i < 6 * NV; i++)
    finite &= isfinite(la[i]) != 0;
  CHECK(finite);
  if (la)
    check_read_weights(&sp, toks, 6, la);
  /* token by token: same logits (causality + KV cache) up to rounding of
   * the batched vs single-row activation quantization */
  double md = 0;
  for (int t = 0; t < 6 && la; t++) {
    CHECK_OK(dq_seq_eval(b, &toks[t], 1, DQ_LOGITS_LAST), dq_seq_errmsg(b));
    const float *lb = dq_seq_logits(b, NULL);
    for (int i = 0; lb && i < NV; i++)
      md = fmax(md, fabs(lb[i] - la[t * NV + i]));
  }
  CHECK_MSG(md < 1e-3, "%s: batch vs token-by-token max diff %g", arch, md);
  /* no tokenizer: text is refused */
  int32_t *ids = NULL;
  int n = 0;
  CHECK(dq_model_tokenize(m, "hi", 2, 1, &ids, &n) == DQ_ERR_UNSUPPORTED);
  free(ids);
  dq_seq_free(a);
  dq_seq_free(b);
  dq_model_free(m);
}

static void check_refused(spec sp, dq_status want, const char *needle) {
  dq_model *m = NULL;
  dq_error err = {0};
  dq_status s = open_spec(&sp, &m, &err);
  CHECK_MSG(s == want, "%s: status %d, want %d (%s)", sp.arch, s, want,
            err.msg);
  CHECK_MSG(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg,
            needle);
  CHECK(m == NULL);
}

int main(void) {
  unsetenv("DOCQA_WEIGHTS"); /* the options say */
  check_runs("llama", 0, 0, 0);
  check_runs("qwen2", 1, 0, 0);
  check_runs("qwen3", 0, 1, 0);
  check_runs("gemma3", 0, 1, 1);
  /* mixture of experts (Mixtral layout: llama with experts), flat and with
   * two-level routing */
  check_runs_spec((spec){"llama", 0, 0, 0, NULL, NULL, 4, 2, 1, 1});
  check_runs_spec((spec){"llama", 0, 0, 0, NULL, NULL, 8, 2, 4, 2});
  check_refused((spec){"llama", 0, 0, 0, NULL, NULL, 4, 5, 1, 1}, DQ_ERR_FORMAT,
                "expert_used_count");
  check_refused((spec){"llama", 0, 0, 0, NULL, NULL, 8, 2, 3, 1}, DQ_ERR_FORMAT,
                "expert_group_count must divide");
  check_refused(
      (spec){"llama", 0, 0, 0, NULL, "blk.1.ffn_down_exps.weight", 4, 2, 1, 1},
      DQ_ERR_MISMATCH, "blk.1.ffn_down_exps.weight");
  check_refused(
      (spec){"llama", 0, 0, 0, "blk.0.ffn_up_exps.weight", NULL, 4, 2, 1, 1},
      DQ_ERR_FORMAT, "blk.0.ffn_up_exps.weight");
  check_refused((spec){"mamba", 0, 0, 0, NULL, NULL, 0, 0, 0, 0},
                DQ_ERR_UNSUPPORTED, "mamba");
  check_refused(
      (spec){"llama", 0, 0, 0, NULL, "blk.1.attn_q.weight", 0, 0, 0, 0},
      DQ_ERR_MISMATCH, "blk.1.attn_q.weight");
  check_refused(
      (spec){"llama", 0, 0, 0, NULL, "blk.0.ffn_down.weight", 0, 0, 0, 0},
      DQ_ERR_MISMATCH, "blk.0.ffn_down.weight");
  check_refused(
      (spec){"qwen3", 0, 1, 0, "blk.1.attn_k_norm.weight", NULL, 0, 0, 0, 0},
      DQ_ERR_FORMAT, "blk.1.attn_k_norm.weight");
  check_refused((spec){"qwen2", 1, 0, 0, "blk.0.attn_v.bias", NULL, 0, 0, 0, 0},
                DQ_ERR_FORMAT, "blk.0.attn_v.bias");
  check_refused(
      (spec){"gemma3", 0, 1, 1, "blk.0.post_ffw_norm.weight", NULL, 0, 0, 0, 0},
      DQ_ERR_FORMAT, "post_ffw_norm");
  return TEST_EXIT();
}
