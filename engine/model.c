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
    {"qwen2moe", DQ_ARCH_QWEN2MOE}, {"qwen3moe", DQ_ARCH_QWEN3MOE},
    {"olmoe", DQ_ARCH_OLMOE},   {"deepseek2", DQ_ARCH_DEEPSEEK2},
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

/* F32 matrix t (n_rows rows of n_cols, checked) as a Q8_0 copy, one row at
 * a time through the kernels' own quantizer; the model owns the copy.
 * NULL (m->err set) on failure. */
static const void *q8_copy(dq_model *m, const dq_gguf_tensor *t, int64_t n_cols,
                           int64_t n_rows, size_t rb) {
  void **bufs = realloc(m->q8_bufs, (size_t)(m->n_q8_bufs + 1) * sizeof *bufs);
  uint8_t *p = bufs ? malloc(rb * (size_t)n_rows) : NULL;
  if (bufs)
    m->q8_bufs = bufs;
  if (!p) {
    dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
    return NULL;
  }
  m->q8_bufs[m->n_q8_bufs++] = p;
  const float *x = t->data;
  for (int64_t r = 0; r < n_rows; r++) {
    dq_status s = dq_quantize_row(DQ_GGUF_TYPE_Q8_0, x + r * n_cols,
                                  p + (size_t)r * rb, n_cols);
    if (s) {
      dq_error_set(&m->err, s, "%s: cannot quantize tensor '%s'",
                   dq_gguf_path(m->gguf), t->name);
      return NULL;
    }
  }
  m->n_requant++;
  return p;
}

/* Checks t's type and byte size for n_rows rows of n_cols and maps it. */
static dq_status bind_mat_rows(dq_model *m, const dq_gguf_tensor *t,
                               int64_t n_cols, int64_t n_rows, dq_wmat *out) {
  const char *name = t->name;
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
  const void *data = t->data;
  size_t n_bytes = t->n_bytes;
  out->type = t->type;
  if (m->requant && t->type == DQ_GGUF_TYPE_F32 && n_cols % DQ_QK == 0) {
    out->type = DQ_GGUF_TYPE_Q8_0; /* an encoder's layers, for ingest */
    rb = dq_row_bytes(out->type, n_cols);
    n_bytes = rb * (size_t)n_rows;
    if (!(data = q8_copy(m, t, n_cols, n_rows, rb)))
      return m->err.code;
  }
  out->name = t->name;
  out->n_cols = n_cols;
  out->n_rows = n_rows;
  out->row_bytes = rb;
  dq_status s = m->be->i.weight_map(m->be->ctx, data, n_bytes, &out->data);
  if (s)
    return dq_error_set(&m->err, s, "%s: cannot map tensor '%s' on %s",
                        dq_gguf_path(m->gguf), name, be_name(m->be));
  return DQ_OK;
}

/* Tensor `name`, or NULL (DQ_OK) when it is missing and not required. */
static dq_status find_tensor(dq_model *m, const char *name, int required,
                             const dq_gguf_tensor **out) {
  *out = dq_gguf_tensor_get(m->gguf, name);
  if (*out || !required)
    return DQ_OK;
  return dq_error_set(&m->err, DQ_ERR_FORMAT,
                      "%s: tensor '%s' is missing (architecture %s)",
                      dq_gguf_path(m->gguf), name, m->hp.arch_name);
}

/* Binds a stack of n_mat matrices (3-D tensor, ne = {n_cols, n_rows,
 * n_mat}: experts, or latent attention's per-head up-projections; n_mat 1:
 * one matrix, ne = {n_cols, n_rows}) as one dq_wmat of n_rows rows;
 * matrix i starts at data + i * n_rows * row_bytes. Missing + !required
 * leaves out->data NULL. */
static dq_status bind_mat3(dq_model *m, const char *name, int64_t n_cols,
                           int64_t n_rows, int64_t n_mat, int required,
                           dq_wmat *out) {
  memset(out, 0, sizeof *out);
  const dq_gguf_tensor *t;
  dq_status s = find_tensor(m, name, required, &t);
  if (s || !t)
    return s;
  if (t->n_dims > (n_mat > 1 ? 3u : 2u) || (int64_t)t->ne[0] != n_cols ||
      (int64_t)t->ne[1] != n_rows || (int64_t)t->ne[2] != n_mat) {
    char got[96], want[96];
    snprintf(got, sizeof got, "[%llu, %llu", (unsigned long long)t->ne[0],
             (unsigned long long)t->ne[1]);
    snprintf(want, sizeof want, "[%lld, %lld", (long long)n_cols,
             (long long)n_rows);
    if (n_mat > 1 || t->n_dims > 2) {
      size_t g = strlen(got), w = strlen(want);
      snprintf(got + g, sizeof got - g, ", %llu",
               (unsigned long long)t->ne[2]);
      snprintf(want + w, sizeof want - w, ", %lld", (long long)n_mat);
    }
    return dq_error_set(&m->err, DQ_ERR_MISMATCH,
                        "%s: tensor '%s' has shape %s], expected %s] from "
                        "the hyperparameters",
                        dq_gguf_path(m->gguf), name, got, want);
  }
  /* the rows of all matrices, checked as one 2-D matrix */
  s = bind_mat_rows(m, t, n_cols, n_rows * n_mat, out);
  if (!s)
    out->n_rows = n_rows;
  return s;
}

/* Binds matrix `name` with ne = {n_cols, n_rows}. */
static dq_status bind_mat(dq_model *m, const char *name, int64_t n_cols,
                          int64_t n_rows, int required, dq_wmat *out) {
  return bind_mat3(m, name, n_cols, n_rows, 1, required, out);
}

/* Binds an F32 vector of n elements. */
static dq_status bind_vec(dq_model *m, const char *name, int64_t n,
                          int required, const float **out) {
  *out = NULL;
  const dq_gguf_tensor *t;
  dq_status fs = find_tensor(m, name, required, &t);
  if (fs || !t)
    return fs;
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

static int get_bool(dq_model *m, const char *suffix, int dflt) {
  char key[160];
  snprintf(key, sizeof key, "%s.%s", m->hp.arch_name, suffix);
  bool v;
  return dq_gguf_get_bool(m->gguf, key, &v) == DQ_OK ? (int)v : dflt;
}

/* Routing and expert sizes (`<arch>.expert_*`), with each architecture's
 * defaults where the file is silent: llama (Mixtral) and qwen3moe
 * renormalise the chosen weights, qwen2moe and olmoe do not, deepseek2
 * says so in expert_weights_norm. */
static dq_status load_moe(dq_model *m) {
  dq_hparams *hp = &m->hp;
  dq_moe_cfg *c = &hp->moe;
  dq_status s;
  int gating = 0;
  if ((s = get_u32(m, "expert_used_count", 1, 0, &c->n_used)) ||
      (s = get_u32(m, "expert_feed_forward_length", 0, (uint32_t)hp->n_ff,
                   &hp->n_ff_exp)) ||
      (s = get_u32(m, "expert_gating_func", 0, DQ_MOE_SOFTMAX, &gating)) ||
      (s = get_u32(m, "expert_group_count", 0, 1, &c->n_group)) ||
      (s = get_u32(m, "expert_group_used_count", 0, 1, &c->n_group_used)) ||
      (s = get_u32(m, "leading_dense_block_count", 0, 0, &hp->n_layer_dense)))
    return s;
  c->n_expert = hp->n_expert;
  c->gating = gating ? gating : DQ_MOE_SOFTMAX; /* 0: unset, as llama.cpp */
  c->norm = get_bool(m, "expert_weights_norm",
                     hp->arch == DQ_ARCH_LLAMA || hp->arch == DQ_ARCH_QWEN3MOE);
  c->scale = get_f32(m, "expert_weights_scale", 1.0f);
  if (c->scale == 0.0f) /* written as 0 by converters when unused */
    c->scale = 1.0f;
  if (hp->arch == DQ_ARCH_QWEN2MOE) {
    if ((s = get_u32(m, "expert_shared_feed_forward_length", 0, 0,
                     &hp->n_ff_shexp)))
      return s;
  } else if (hp->arch == DQ_ARCH_DEEPSEEK2) {
    int n_shared = 0;
    if ((s = get_u32(m, "expert_shared_count", 0, 0, &n_shared)))
      return s;
    hp->n_ff_shexp = n_shared * hp->n_ff_exp;
  }
  const char *why = dq_moe_cfg_check(c);
  if (!why && (hp->n_ff_exp < 1 || hp->n_layer_dense > hp->n_layer))
    why = "expert_feed_forward_length / leading_dense_block_count out of "
          "range";
  if (why)
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: %s (expert_count %d, expert_used_count %d, "
                        "groups %d/%d)",
                        dq_gguf_path(m->gguf), why, c->n_expert, c->n_used,
                        c->n_group_used, c->n_group);
  return DQ_OK;
}

/* deepseek2's multi-head latent attention sizes. Files from current
 * converters give the per-head sizes as key_length_mla / value_length_mla
 * (key_length / value_length then describe the compressed MQA view);
 * older files give them as key_length / value_length. The attention then
 * runs as one KV head of kv_lora_rank + n_rot. */
static dq_status load_mla(dq_model *m) {
  dq_hparams *hp = &m->hp;
  dq_status s;
  int dk = 0, dv = 0;
  if ((s = get_u32(m, "attention.q_lora_rank", 0, 0, &hp->q_lora_rank)) ||
      (s = get_u32(m, "attention.kv_lora_rank", 1, 0, &hp->kv_lora_rank)) ||
      (s = get_u32(m, "attention.key_length_mla", 0, (uint32_t)hp->head_dim,
                   &dk)) ||
      (s = get_u32(m, "attention.value_length_mla", 0,
                   (uint32_t)hp->head_dim_v, &dv)))
    return s;
  hp->mla = 1;
  hp->qk_nope = dk - hp->n_rot;
  hp->v_head = dv;
  if (hp->qk_nope < 1 || hp->v_head < 1 || hp->kv_lora_rank < 1 ||
      hp->n_rot < 2 || hp->n_rot % 2)
    return dq_error_set(&m->err, DQ_ERR_FORMAT,
                        "%s: latent attention sizes key %d (rope %d) / value "
                        "%d / kv_lora_rank %d are inconsistent",
                        dq_gguf_path(m->gguf), dk, hp->n_rot, dv,
                        hp->kv_lora_rank);
  hp->n_head_kv = 1;
  hp->head_dim = hp->head_dim_v = hp->kv_lora_rank + hp->n_rot;
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
                        "llama, mistral, qwen2, qwen3, gemma3, bert, "
                        "qwen2moe, qwen3moe, olmoe, deepseek2)",
                        dq_gguf_path(m->gguf), arch);
  hp->arch = arch_names[k].arch;
  hp->arch_name = arch;
  if ((s = get_u32(m, "expert_count", 0, 0, &hp->n_expert)) ||
      (s = get_u32(m, "expert_feed_forward_length", 0, 0, &hp->n_ff_exp)))
    return s;
  /* MoE files may have no dense FFN width (qwen2moe, olmoe) */
  if ((s = get_u32(m, "block_count", 1, 0, &hp->n_layer)) ||
      (s = get_u32(m, "context_length", 1, 0, &hp->n_ctx_train)) ||
      (s = get_u32(m, "embedding_length", 1, 0, &hp->n_embd)) ||
      (s = get_u32(m, "feed_forward_length", hp->n_expert == 0,
                   (uint32_t)hp->n_ff_exp, &hp->n_ff)) ||
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
  if (hp->arch == DQ_ARCH_DEEPSEEK2 && (s = load_mla(m)))
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
  hp->attn_scale = 1.0f / sqrtf((float)(hp->mla ? hp->qk_nope + hp->n_rot
                                                 : hp->head_dim));
  hp->embd_scale = 1.0f;
  hp->ffn_act = 0;

  if (hp->n_expert > 0 && (s = load_moe(m)))
    return s;

  /* RoPE: llama uses adjacent pairs (the converter permutes q/k), as
   * deepseek2 does; qwen, olmoe and gemma keep the HF "rotate half" layout
   * (NeoX). */
  dq_rope_params *r = &hp->rope;
  r->n_rot = hp->n_rot;
  r->neox = hp->arch != DQ_ARCH_LLAMA && hp->arch != DQ_ARCH_DEEPSEEK2;
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
    if (hp->arch == DQ_ARCH_DEEPSEEK2) {
      /* DeepSeek's YaRN: the magnitude correction goes into the attention
       * scale (mscale squared), not into the rotated q/k */
      float lm = get_f32(m, "rope.scaling.yarn_log_multiplier", 0.0f);
      float ms = 1.0f + lm * logf(1.0f / r->freq_scale);
      hp->attn_scale *= ms * ms;
      r->attn_factor = 1.0f / (1.0f + 0.1f * logf(1.0f / r->freq_scale));
    }
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

/* Latent attention of layer il (deepseek2): the query path (direct, or
 * through q_lora), the compressed KV projection and the per-head
 * up-projections, as attn_k_b / attn_v_b (current converters: the key part
 * already transposed for absorption) or as one attn_kv_b (older files: the
 * key part is transposed here, once, into F32). */
static dq_status bind_mla(dq_model *m, int il, char *n, size_t nn) {
  dq_hparams *hp = &m->hp;
  dq_layer *L = &m->w.layers[il];
  int E = hp->n_embd, H = hp->n_head, R = hp->kv_lora_rank;
  int dn = hp->qk_nope, dv = hp->v_head, dq = dn + hp->n_rot;
  dq_status s;
#define T(suffix) (snprintf(n, nn, "blk.%d.%s", il, suffix), n)
  if (hp->q_lora_rank > 0) {
    if ((s = bind_mat(m, T("attn_q_a.weight"), E, hp->q_lora_rank, 1,
                      &L->wq_a)) ||
        (s = bind_vec(m, T("attn_q_a_norm.weight"), hp->q_lora_rank, 1,
                      &L->q_a_norm)) ||
        (s = bind_mat(m, T("attn_q_b.weight"), hp->q_lora_rank, H * dq, 1,
                      &L->wq_b)))
      return s;
  } else if ((s = bind_mat(m, T("attn_q.weight"), E, H * dq, 1, &L->wq))) {
    return s;
  }
  if ((s = bind_mat(m, T("attn_kv_a_mqa.weight"), E, R + hp->n_rot, 1,
                    &L->wkv_a)) ||
      (s = bind_vec(m, T("attn_kv_a_norm.weight"), R, 1, &L->kv_a_norm)) ||
      (s = bind_mat(m, T("attn_output.weight"), H * dv, E, 1, &L->wo)))
    return s;
  L->wk_b = m->w.mla_heads + (size_t)il * 2 * H;
  L->wv_b = L->wk_b + H;
  dq_wmat kb, vb, kvb;
  if (!m->w.mla_kb) { /* the file's form, chosen by layer 0 at load */
    if ((s = bind_mat3(m, T("attn_k_b.weight"), dn, R, H, 1, &kb)) ||
        (s = bind_mat3(m, T("attn_v_b.weight"), R, dv, H, 1, &vb)))
      return s;
    for (int h = 0; h < H; h++) {
      L->wk_b[h] = kb;
      L->wk_b[h].data = (const uint8_t *)kb.data + (size_t)h * R * kb.row_bytes;
      L->wv_b[h] = vb;
      L->wv_b[h].data = (const uint8_t *)vb.data + (size_t)h * dv * vb.row_bytes;
    }
    return DQ_OK;
  }
  if ((s = bind_mat(m, T("attn_kv_b.weight"), R, (int64_t)H * (dn + dv), 1,
                    &kvb)))
    return s;
  /* kv_b rows per head: dn key rows, then dv value rows (R columns each) */
  float *kt = m->w.mla_kb + (size_t)il * H * R * dn;
  float *row = malloc((size_t)R * sizeof *row);
  if (!row)
    return dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
  for (int h = 0; h < H; h++) {
    float *kh = kt + (size_t)h * R * dn; /* R rows of dn: transposed */
    for (int i = 0; i < dn; i++) {
      const uint8_t *src = (const uint8_t *)kvb.data +
                           ((size_t)h * (dn + dv) + i) * kvb.row_bytes;
      if ((s = dq_dequantize_row((int)kvb.type, src, row, R))) {
        free(row);
        return dq_error_set(&m->err, s, "%s: cannot read tensor '%s'",
                            dq_gguf_path(m->gguf), n);
      }
      for (int j = 0; j < R; j++)
        kh[(size_t)j * dn + i] = row[j];
    }
    dq_wmat *k = &L->wk_b[h];
    memset(k, 0, sizeof *k);
    k->name = kvb.name;
    k->type = DQ_GGUF_TYPE_F32;
    k->n_cols = dn;
    k->n_rows = R;
    k->row_bytes = (size_t)dn * 4;
    if ((s = m->be->i.weight_map(m->be->ctx, kh, (size_t)R * dn * 4,
                                 &k->data))) {
      free(row);
      return dq_error_set(&m->err, s, "%s: cannot map '%s'",
                          dq_gguf_path(m->gguf), n);
    }
    L->wv_b[h] = kvb;
    L->wv_b[h].n_rows = dv;
    L->wv_b[h].data = (const uint8_t *)kvb.data +
                      ((size_t)h * (dn + dv) + dn) * kvb.row_bytes;
  }
  free(row);
#undef T
  return DQ_OK;
}

/* The feed-forward block of layer il when it is a mixture of experts. */
static dq_status bind_moe(dq_model *m, int il, char *n, size_t nn) {
  dq_hparams *hp = &m->hp;
  dq_layer *L = &m->w.layers[il];
  int E = hp->n_embd, X = hp->n_expert, F = hp->n_ff_exp, S = hp->n_ff_shexp;
  dq_status s;
#define T(suffix) (snprintf(n, nn, "blk.%d.%s", il, suffix), n)
  L->moe = 1;
  if ((s = bind_mat(m, T("ffn_gate_inp.weight"), E, X, 1, &L->router)))
    return s;
  if (L->router.type != DQ_GGUF_TYPE_F32)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s: tensor '%s' must be f32 (router scores choose "
                        "experts; rounding them changes the choice)",
                        dq_gguf_path(m->gguf), n);
  /* gate and up: two tensors, or one ffn_gate_up_exps holding per expert
   * its F gate rows then its F up rows (current deepseek2 converters) */
  if (dq_gguf_tensor_get(m->gguf, T("ffn_gate_up_exps.weight"))) {
    if ((s = bind_mat3(m, n, E, 2 * (int64_t)F, X, 1, &L->exp_gate)))
      return s;
    L->exp_gate.n_rows = F;
    L->exp_gu_stride = 2 * (size_t)F * L->exp_gate.row_bytes;
    L->exp_up = L->exp_gate;
    L->exp_up.data =
        (const uint8_t *)L->exp_gate.data + (size_t)F * L->exp_gate.row_bytes;
  } else if ((s = bind_mat3(m, T("ffn_gate_exps.weight"), E, F, X, 1,
                            &L->exp_gate)) ||
             (s = bind_mat3(m, T("ffn_up_exps.weight"), E, F, X, 1,
                            &L->exp_up))) {
    return s;
  }
  if ((s = bind_mat3(m, T("ffn_down_exps.weight"), F, E, X, 1,
                     &L->exp_down)) ||
      (s = bind_vec(m, T("exp_probs_b.bias"), X, 0, &L->router_bias)))
    return s;
  if (S > 0) {
    if ((s = bind_mat(m, T("ffn_gate_shexp.weight"), E, S, 1, &L->sh_gate)) ||
        (s = bind_mat(m, T("ffn_up_shexp.weight"), E, S, 1, &L->sh_up)) ||
        (s = bind_mat(m, T("ffn_down_shexp.weight"), S, E, 1, &L->sh_down)) ||
        (s = bind_mat(m, T("ffn_gate_inp_shexp.weight"), E, 1,
                      hp->arch == DQ_ARCH_QWEN2MOE, &L->sh_inp)))
      return s;
  }
#undef T
  return DQ_OK;
}

static dq_status bind_layer(dq_model *m, int il) {
  dq_hparams *hp = &m->hp;
  dq_layer *L = &m->w.layers[il];
  int E = hp->n_embd, HD = hp->head_dim;
  int nq = hp->n_head * HD, nkv = hp->n_head_kv * HD;
  int bert = hp->arch == DQ_ARCH_BERT;
  int moe = hp->n_expert > 0 && il >= hp->n_layer_dense;
  char n[128];
  dq_status s;
#define T(suffix) (snprintf(n, sizeof n, "blk.%d.%s", il, suffix), n)
  if (hp->mla) {
    if ((s = bind_mla(m, il, n, sizeof n)))
      return s;
  } else if ((s = bind_mat(m, T("attn_q.weight"), E, nq, 1, &L->wq)) ||
             (s = bind_mat(m, T("attn_k.weight"), E, nkv, 1, &L->wk)) ||
             (s = bind_mat(m, T("attn_v.weight"), E, nkv, 1, &L->wv)) ||
             (s = bind_mat(m, T("attn_output.weight"), nq, E, 1, &L->wo))) {
    return s;
  }
  if (moe) {
    if ((s = bind_moe(m, il, n, sizeof n)))
      return s;
  } else if ((s = bind_mat(m, T("ffn_up.weight"), E, hp->n_ff, 1,
                           &L->ffn_up)) ||
             (s = bind_mat(m, T("ffn_down.weight"), hp->n_ff, E, 1,
                           &L->ffn_down)) ||
             (s = bind_mat(m, T("ffn_gate.weight"), E, hp->n_ff, !bert,
                           &L->ffn_gate))) {
    return s;
  }
  int qkv_bias = hp->arch == DQ_ARCH_QWEN2 || hp->arch == DQ_ARCH_QWEN2MOE ||
                 bert;
  if (!hp->mla &&
      ((s = bind_vec(m, T("attn_q.bias"), nq, qkv_bias, &L->bq)) ||
       (s = bind_vec(m, T("attn_k.bias"), nkv, qkv_bias, &L->bk)) ||
       (s = bind_vec(m, T("attn_v.bias"), nkv, qkv_bias, &L->bv)) ||
       (s = bind_vec(m, T("attn_output.bias"), E, bert, &L->bo))))
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
  /* q/k norms: per head (qwen3, qwen3moe, gemma3) or over the whole
   * projection (olmoe) */
  int qk_norm = hp->arch == DQ_ARCH_QWEN3 || hp->arch == DQ_ARCH_GEMMA3 ||
                hp->arch == DQ_ARCH_QWEN3MOE || hp->arch == DQ_ARCH_OLMOE;
  int full = hp->qk_norm_full = hp->arch == DQ_ARCH_OLMOE;
  if (!hp->mla &&
      ((s = bind_vec(m, T("attn_q_norm.weight"), full ? nq : HD, qk_norm,
                     &L->q_norm)) ||
       (s = bind_vec(m, T("attn_k_norm.weight"), full ? nkv : HD, qk_norm,
                     &L->k_norm))))
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
  if (hp->mla) {
    size_t nh = (size_t)hp->n_layer * hp->n_head;
    m->w.mla_heads = calloc(2 * nh, sizeof *m->w.mla_heads);
    /* absorbed keys for files with attn_kv_b only (filled by bind_mla) */
    int legacy = !dq_gguf_tensor_get(m->gguf, "blk.0.attn_k_b.weight");
    if (legacy)
      m->w.mla_kb = malloc(nh * hp->kv_lora_rank * hp->qk_nope * 4);
    if (!m->w.mla_heads || (legacy && !m->w.mla_kb))
      return dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
  }
  /* an encoder's layer matrices as Q8_0 for bulk embedding: the kernels'
   * 8-bit products (VNNI where it works) embed 2.4x faster than F32's */
  m->requant = hp->arch == DQ_ARCH_BERT && m->opts.q8_at_load;
  for (int il = 0; il < hp->n_layer; il++)
    if ((s = bind_layer(m, il)))
      break;
  m->requant = 0;
  if (!s && m->n_requant)
    dq_log(m->log, DQ_LOG_INFO,
           "%s: %d F32 layer matrices quantized to Q8_0 for embedding "
           "(DOCQA_EMBED_EXACT=1 keeps F32)",
           dq_gguf_path(m->gguf), m->n_requant);
  return s;
}

void dq_model_unload_weights(dq_model *m) {
  for (int i = 0; i < m->n_q8_bufs; i++)
    free(m->q8_bufs[i]);
  free(m->q8_bufs);
  m->q8_bufs = NULL;
  m->n_q8_bufs = m->n_requant = 0;
  free(m->w.layers);
  m->w.layers = NULL;
  free(m->w.mla_heads);
  m->w.mla_heads = NULL;
  free(m->w.mla_kb);
  m->w.mla_kb = NULL;
}
