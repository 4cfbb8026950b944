/*
 * model.c - from an open GGUF file to a model's Config and Weights: reads
 * the architecture's hyperparameters (`<arch>.block_count`, ...), then binds
 * every tensor the architecture needs by name from one table per layer,
 * checking type and shape against the hyperparameters so that a file whose
 * tensors do not match fails at load with the tensor named, never later in
 * a kernel. Unknown architectures are refused by name.
 *
 * Weights stay in the mapping (CPU) or are mapped once onto the device via
 * the backend's weight_map. Nothing here computes.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  dq_arch arch;
} arch_names[] = {
    {"llama", DQ_ARCH_LLAMA},   {"mistral", DQ_ARCH_LLAMA},
    {"qwen2", DQ_ARCH_QWEN2},   {"qwen3", DQ_ARCH_QWEN3},
    {"gemma3", DQ_ARCH_GEMMA3}, {"bert", DQ_ARCH_BERT},
};

/* metadata helpers: `<arch>.<suffix>` */
static dq_status get_u32(dq_model *m, const char *suffix, int required,
                         uint32_t dflt, int *out) {
  char key[160];
  snprintf(key, sizeof key, "%s.%s", m->hp.arch_name, suffix);
  uint32_t v = dflt;
  dq_status s = dq_gguf_get_u32(m->gguf, key, &v);
  if (s == DQ_ERR_NOTFOUND && !required)
    v = dflt;
  else if (s)
    return dq_error_set(&m->err, s, "%s", dq_gguf_errmsg(m->gguf));
  if (v > (1u << 30))
    return dq_error_set(&m->err, DQ_ERR_LIMIT, "%s: %s = %u is out of range",
                        dq_gguf_path(m->gguf), key, v);
  *out = (int)v;
  return DQ_OK;
}

static float get_f32(dq_model *m, const char *suffix, float dflt) {
  char key[160];
  snprintf(key, sizeof key, "%s.%s", m->hp.arch_name, suffix);
  float v;
  return dq_gguf_get_f32(m->gguf, key, &v) == DQ_OK ? v : dflt;
}

static const char *get_str(dq_model *m, const char *key) {
  const char *v;
  return dq_gguf_get_str(m->gguf, key, &v, NULL) == DQ_OK ? v : NULL;
}

/* Binds matrix `name` with ne = {n_cols, n_rows}. Missing + !required leaves
 * out->data NULL. */
static dq_status bind_mat(dq_model *m, const char *name, int64_t n_cols,
                          int64_t n_rows, int required, dq_wmat *out) {
  memset(out, 0, sizeof *out);
  const dq_gguf_tensor *t = dq_gguf_tensor_get(m->gguf, name);
  if (!t) {
    if (!required)
      return DQ_OK;
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: tensor '%s' is missing (architecture %s)",
                        dq_gguf_path(m->gguf), name, m->hp.arch_name);
  }
  if (t->n_dims > 2 || (int64_t)t->ne[0] != n_cols ||
      (int64_t)t->ne[1] != n_rows)
    return dq_error_set(&m->err, DQ_ERR_MISMATCH,
                        "%s: tensor '%s' has shape [%llu, %llu], expected "
                        "[%lld, %lld] from the hyperparameters",
                        dq_gguf_path(m->gguf), name,
                        (unsigned long long)t->ne[0],
                        (unsigned long long)t->ne[1], (long long)n_cols,
                        (long long)n_rows);
  size_t rb = dq_row_bytes(t->type, n_cols);
  if (!rb)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s: tensor '%s' has type %s, which this runtime does "
                        "not support",
                        dq_gguf_path(m->gguf), name,
                        dq_gguf_type_name(t->type) ? dq_gguf_type_name(t->type)
                                                   : "unknown");
  if ((uint64_t)rb * (uint64_t)n_rows != t->n_bytes)
    return dq_error_set(&m->err, DQ_ERR_CORRUPT,
                        "%s: tensor '%s' holds %llu bytes, expected %llu",
                        dq_gguf_path(m->gguf), name,
                        (unsigned long long)t->n_bytes,
                        (unsigned long long)rb * (unsigned long long)n_rows);
  out->name = t->name;
  out->type = t->type;
  out->n_cols = n_cols;
  out->n_rows = n_rows;
  out->row_bytes = rb;
  dq_status s = m->be->i.weight_map(m->be->ctx, t->data, t->n_bytes, &out->data);
  if (s)
    return dq_error_set(&m->err, s, "%s: cannot map tensor '%s' on %s",
                        dq_gguf_path(m->gguf), name, be_name(m->be));
  return DQ_OK;
}

/* Binds an F32 vector of n elements. */
static dq_status bind_vec(dq_model *m, const char *name, int64_t n,
                          int required, const float **out) {
  *out = NULL;
  const dq_gguf_tensor *t = dq_gguf_tensor_get(m->gguf, name);
  if (!t) {
    if (!required)
      return DQ_OK;
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: tensor '%s' is missing (architecture %s)",
                        dq_gguf_path(m->gguf), name, m->hp.arch_name);
  }
  if ((int64_t)t->n_elems != n || t->ne[0] != (uint64_t)n)
    return dq_error_set(&m->err, DQ_ERR_MISMATCH,
                        "%s: tensor '%s' has %llu elements, expected %lld",
                        dq_gguf_path(m->gguf), name,
                        (unsigned long long)t->n_elems, (long long)n);
  if (t->type != DQ_GGUF_TYPE_F32)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s: tensor '%s' must be f32 (norms and biases)",
                        dq_gguf_path(m->gguf), name);
  const void *dev;
  dq_status s = m->be->i.weight_map(m->be->ctx, t->data, t->n_bytes, &dev);
  if (s)
    return dq_error_set(&m->err, s, "%s: cannot map tensor '%s'",
                        dq_gguf_path(m->gguf), name);
  *out = dev;
  return DQ_OK;
}

static dq_status load_hparams(dq_model *m) {
  dq_hparams *hp = &m->hp;
  dq_status s;
  const char *arch = get_str(m, "general.architecture");
  if (!arch)
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: key 'general.architecture' is missing",
                        dq_gguf_path(m->gguf));
  size_t k;
  for (k = 0; k < sizeof arch_names / sizeof *arch_names; k++)
    if (strcmp(arch, arch_names[k].name) == 0)
      break;
  if (k == sizeof arch_names / sizeof *arch_names)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s: architecture '%s' is not supported (supported: "
                        "llama, mistral, qwen2, qwen3, gemma3, bert)",
                        dq_gguf_path(m->gguf), arch);
  hp->arch = arch_names[k].arch;
  hp->arch_name = arch;
  if ((s = get_u32(m, "block_count", 1, 0, &hp->n_layer)) ||
      (s = get_u32(m, "context_length", 1, 0, &hp->n_ctx_train)) ||
      (s = get_u32(m, "embedding_length", 1, 0, &hp->n_embd)) ||
      (s = get_u32(m, "feed_forward_length", 1, 0, &hp->n_ff)) ||
      (s = get_u32(m, "attention.head_count", 1, 0, &hp->n_head)))
    return s;
  if ((s = get_u32(m, "attention.head_count_kv", 0, (uint32_t)hp->n_head,
                   &hp->n_head_kv)))
    return s;
  if (hp->n_layer < 1 || hp->n_layer > DQ_MAX_LAYERS || hp->n_head < 1 ||
      hp->n_head_kv < 1 || hp->n_head % hp->n_head_kv || hp->n_embd < 1 ||
      hp->n_ff < 1 || hp->n_ctx_train < 1)
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: inconsistent hyperparameters (block_count %d, "
                        "head_count %d, head_count_kv %d, embedding_length %d)",
                        dq_gguf_path(m->gguf), hp->n_layer, hp->n_head,
                        hp->n_head_kv, hp->n_embd);
  if ((s = get_u32(m, "attention.key_length", 0,
                   (uint32_t)(hp->n_embd / hp->n_head), &hp->head_dim)) ||
      (s = get_u32(m, "attention.value_length", 0, (uint32_t)hp->head_dim,
                   &hp->head_dim_v)) ||
      (s = get_u32(m, "rope.dimension_count", 0, (uint32_t)hp->head_dim,
                   &hp->n_rot)))
    return s;
  if (hp->head_dim_v != hp->head_dim || hp->head_dim < 2 ||
      hp->n_rot > hp->head_dim || hp->n_rot % 2)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s: head sizes key %d / value %d / rope %d are not "
                        "supported",
                        dq_gguf_path(m->gguf), hp->head_dim, hp->head_dim_v,
                        hp->n_rot);
  hp->eps = get_f32(m, "attention.layer_norm_rms_epsilon",
                    get_f32(m, "attention.layer_norm_epsilon", 1e-5f));
  hp->causal = hp->arch != DQ_ARCH_BERT;
  hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim);
  hp->embd_scale = 1.0f;
  hp->ffn_act = 0;

  /* RoPE: llama uses adjacent pairs (the converter permutes q/k); qwen and
   * gemma keep the HF "rotate half" layout (NeoX). */
  dq_rope_params *r = &hp->rope;
  r->n_rot = hp->n_rot;
  r->neox = hp->arch != DQ_ARCH_LLAMA;
  r->base = get_f32(m, "rope.freq_base", 10000.0f);
  r->freq_scale = 1.0f;
  r->attn_factor = 1.0f;
  const char *stype = NULL;
  {
    char key[160];
    snprintf(key, sizeof key, "%s.rope.scaling.type", arch);
    stype = get_str(m, key);
  }
  float factor = get_f32(m, "rope.scaling.factor",
                         get_f32(m, "rope.scale_linear", 1.0f));
  if (stype && strcmp(stype, "none") != 0 && strcmp(stype, "linear") != 0 &&
      strcmp(stype, "yarn") != 0)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s: %s.rope.scaling.type '%s' is not supported "
                        "(none, linear, yarn)",
                        dq_gguf_path(m->gguf), arch, stype);
  if (!(stype && strcmp(stype, "none") == 0) && factor > 0 && factor != 1.0f)
    r->freq_scale = 1.0f / factor;
  if (m->opts.rope_scale > 0)
    r->freq_scale = 1.0f / m->opts.rope_scale;
  if (m->opts.rope_base > 0)
    r->base = m->opts.rope_base;
  if (stype && strcmp(stype, "yarn") == 0 && r->freq_scale != 1.0f) {
    int n_orig = 0;
    if ((s = get_u32(m, "rope.scaling.original_context_length", 0,
                     (uint32_t)hp->n_ctx_train, &n_orig)))
      return s;
    r->ext_factor = 1.0f;
    /* ggml_rope_yarn_corr_dims with beta_fast 32, beta_slow 1 */
    float nd = (float)r->n_rot;
    float lo = floorf(nd * logf((float)n_orig / (32.0f * 2.0f * (float)M_PI)) /
                      (2.0f * logf(r->base)));
    float hi = ceilf(nd * logf((float)n_orig / (1.0f * 2.0f * (float)M_PI)) /
                     (2.0f * logf(r->base)));
    r->corr_low = fmaxf(0.0f, lo);
    r->corr_high = fminf(nd - 1, hi);
  }
  hp->rope_local = *r;

  if (hp->arch == DQ_ARCH_GEMMA3) {
    if ((s = get_u32(m, "attention.sliding_window", 0, 512, &hp->window)))
      return s;
    hp->rope_local.base = 10000.0f; /* local layers: fixed base, no scaling */
    hp->rope_local.freq_scale = 1.0f;
    hp->rope_local.ext_factor = 0.0f;
    hp->embd_scale = sqrtf((float)hp->n_embd);
    hp->ffn_act = 1;
    /* query_pre_attn_scalar = head_dim for the sizes we load */
    hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim);
  }
  return DQ_OK;
}

/* Gemma 3: which layers use the sliding window. From
 * `gemma3.attention.sliding_window_pattern` when the file has it (a u32
 * period N: layers with il % N < N - 1 are local; or a bool per layer),
 * else llama.cpp's rule for gemma3: every 6th layer is global. */
static int is_swa_layer(dq_model *m, int il) {
  char key[160];
  snprintf(key, sizeof key, "%s.attention.sliding_window_pattern",
           m->hp.arch_name);
  uint32_t period = 6;
  dq_gguf_vtype et;
  const void *raw = NULL;
  uint64_t n = 0;
  if (dq_gguf_find_key(m->gguf, key) >= 0) {
    if (dq_gguf_get_u32(m->gguf, key, &period) == DQ_OK && period > 0)
      return (uint32_t)il % period < period - 1;
    if (dq_gguf_get_arr_raw(m->gguf, key, &et, &raw, &n) == DQ_OK &&
        et == DQ_GGUF_BOOL && (uint64_t)il < n)
      return ((const uint8_t *)raw)[il] != 0;
    period = 6;
  }
  return il % (int)period < (int)period - 1;
}

static dq_status bind_layer(dq_model *m, int il) {
  dq_hparams *hp = &m->hp;
  dq_layer *L = &m->w.layers[il];
  int E = hp->n_embd, HD = hp->head_dim;
  int nq = hp->n_head * HD, nkv = hp->n_head_kv * HD;
  int bert = hp->arch == DQ_ARCH_BERT;
  char n[128];
  dq_status s;
#define T(suffix) (snprintf(n, sizeof n, "blk.%d.%s", il, suffix), n)
  if ((s = bind_mat(m, T("attn_q.weight"), E, nq, 1, &L->wq)) ||
      (s = bind_mat(m, T("attn_k.weight"), E, nkv, 1, &L->wk)) ||
      (s = bind_mat(m, T("attn_v.weight"), E, nkv, 1, &L->wv)) ||
      (s = bind_mat(m, T("attn_output.weight"), nq, E, 1, &L->wo)) ||
      (s = bind_mat(m, T("ffn_up.weight"), E, hp->n_ff, 1, &L->ffn_up)) ||
      (s = bind_mat(m, T("ffn_down.weight"), hp->n_ff, E, 1, &L->ffn_down)) ||
      (s = bind_mat(m, T("ffn_gate.weight"), E, hp->n_ff, !bert,
                    &L->ffn_gate)))
    return s;
  int qkv_bias = hp->arch == DQ_ARCH_QWEN2 || bert;
  if ((s = bind_vec(m, T("attn_q.bias"), nq, qkv_bias, &L->bq)) ||
      (s = bind_vec(m, T("attn_k.bias"), nkv, qkv_bias, &L->bk)) ||
      (s = bind_vec(m, T("attn_v.bias"), nkv, qkv_bias, &L->bv)) ||
      (s = bind_vec(m, T("attn_output.bias"), E, bert, &L->bo)))
    return s;
  if (bert) {
    if ((s = bind_vec(m, T("attn_output_norm.weight"), E, 1,
                      &L->attn_out_norm)) ||
        (s = bind_vec(m, T("attn_output_norm.bias"), E, 1,
                      &L->attn_out_norm_b)) ||
        (s = bind_vec(m, T("ffn_up.bias"), hp->n_ff, 1, &L->ffn_up_b)) ||
        (s = bind_vec(m, T("ffn_down.bias"), E, 1, &L->ffn_down_b)) ||
        (s = bind_vec(m, T("layer_output_norm.weight"), E, 1, &L->out_norm)) ||
        (s = bind_vec(m, T("layer_output_norm.bias"), E, 1, &L->out_norm_b)))
      return s;
    return DQ_OK;
  }
  if ((s = bind_vec(m, T("attn_norm.weight"), E, 1, &L->attn_norm)) ||
      (s = bind_vec(m, T("ffn_norm.weight"), E, 1, &L->ffn_norm)))
    return s;
  int qk_norm = hp->arch == DQ_ARCH_QWEN3 || hp->arch == DQ_ARCH_GEMMA3;
  if ((s = bind_vec(m, T("attn_q_norm.weight"), HD, qk_norm, &L->q_norm)) ||
      (s = bind_vec(m, T("attn_k_norm.weight"), HD, qk_norm, &L->k_norm)))
    return s;
  if (hp->arch == DQ_ARCH_GEMMA3) {
    if ((s = bind_vec(m, T("post_attention_norm.weight"), E, 1,
                      &L->post_attn_norm)) ||
        (s = bind_vec(m, T("post_ffw_norm.weight"), E, 1, &L->post_ffw_norm)))
      return s;
    L->is_swa = is_swa_layer(m, il);
  }
#undef T
  return DQ_OK;
}

dq_status dq_model_load_weights(dq_model *m) {
  dq_status s = load_hparams(m);
  if (s)
    return s;
  dq_hparams *hp = &m->hp;
  const dq_gguf_tensor *te = dq_gguf_tensor_get(m->gguf, "token_embd.weight");
  if (!te)
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: tensor 'token_embd.weight' is missing",
                        dq_gguf_path(m->gguf));
  if (te->ne[1] < 1 || te->ne[1] > (1u << 24))
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: tensor 'token_embd.weight' has %llu rows",
                        dq_gguf_path(m->gguf), (unsigned long long)te->ne[1]);
  hp->n_vocab = (int)te->ne[1];
  int E = hp->n_embd;
  if ((s = bind_mat(m, "token_embd.weight", E, hp->n_vocab, 1, &m->w.tok_embd)))
    return s;
  if (hp->arch == DQ_ARCH_BERT) {
    if ((s = bind_mat(m, "position_embd.weight", E, hp->n_ctx_train, 1,
                      &m->w.pos_embd)))
      return s;
    const dq_gguf_tensor *tt = dq_gguf_tensor_get(m->gguf, "token_types.weight");
    if ((s = bind_mat(m, "token_types.weight", E, tt ? (int64_t)tt->ne[1] : 2,
                      1, &m->w.type_embd)) ||
        (s = bind_vec(m, "token_embd_norm.weight", E, 1, &m->w.tok_norm)) ||
        (s = bind_vec(m, "token_embd_norm.bias", E, 1, &m->w.tok_norm_b)))
      return s;
  } else {
    if ((s = bind_vec(m, "output_norm.weight", E, 1, &m->w.output_norm)) ||
        (s = bind_mat(m, "output.weight", E, hp->n_vocab, 0, &m->w.output)))
      return s;
    if (!m->w.output.data)
      m->w.output = m->w.tok_embd; /* tied embeddings */
  }
  m->w.layers = calloc((size_t)hp->n_layer, sizeof *m->w.layers);
  if (!m->w.layers)
    return dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
  for (int il = 0; il < hp->n_layer; il++)
    if ((s = bind_layer(m, il)))
      return s;
  return DQ_OK;
}

void dq_model_unload_weights(dq_model *m) {
  free(m->w.layers);
  m->w.layers = NULL;
}
