/*
 * model.h - private to engine/: a loaded model split the llama2.c way into
 * Config (dq_hparams, read from GGUF metadata), Weights (dq_weights: device
 * views of the mmap'd tensors, bound and shape-checked by model.c) and the
 * RunState of a sequence (dq_seq in forward.c / kv.c).
 */
#ifndef DQ_ENGINE_MODEL_H
#define DQ_ENGINE_MODEL_H

#include "backend.h"
#include "engine.h"
#include "gguf.h"
#include "graph_tune.h"

typedef enum {
  DQ_ARCH_LLAMA = 0,
  DQ_ARCH_QWEN2,
  DQ_ARCH_QWEN3,
  DQ_ARCH_GEMMA3,
  DQ_ARCH_BERT,
  DQ_ARCH_QWEN2MOE,  /* qwen2 attention, MoE + gated shared expert */
  DQ_ARCH_QWEN3MOE,  /* qwen3 attention, MoE */
  DQ_ARCH_OLMOE,     /* q/k RMSNorm over the whole projection, MoE */
  DQ_ARCH_DEEPSEEK2, /* multi-head latent attention, grouped MoE */
} dq_arch;

#define DQ_MAX_LAYERS 512

typedef struct dq_hparams {
  dq_arch arch;
  const char *arch_name; /* as in general.architecture */
  int n_vocab, n_ctx_train, n_embd, n_layer, n_head, n_head_kv, n_ff;
  int head_dim;          /* key/query head size (attention.key_length) */
  int head_dim_v;        /* value head size; == head_dim for all we load */
  int n_rot;             /* rope.dimension_count */
  float eps;             /* norm epsilon */
  int causal;            /* 0 for encoders */
  dq_rope_params rope;          /* global layers (base, scaling from metadata) */
  dq_rope_params rope_local;    /* sliding-window layers (gemma3: base 10000) */
  int window;            /* sliding window in tokens; 0 = none */
  float attn_scale;      /* multiplies q.k (1/sqrt(head_dim) by default) */
  float embd_scale;      /* multiplies token embeddings (gemma: sqrt(n_embd)) */
  int ffn_act;           /* 0 = SiLU gate, 1 = GELU-tanh gate (gemma) */
  int qk_norm_full;      /* q/k norms span the whole projection (olmoe),
                            not one head */
  /* mixture of experts (n_expert 0: dense model) */
  int n_expert, n_expert_used;
  int n_ff_exp;          /* width of one routed expert */
  int n_ff_shexp;        /* width of the shared expert(s); 0 = none */
  int n_layer_dense;     /* leading layers with a dense FFN (deepseek2) */
  dq_moe_cfg moe;        /* routing (backend.h) */
  /* multi-head latent attention (deepseek2): the cache holds, per token,
   * the normalised compressed KV (kv_lora_rank) and the shared RoPE key
   * (n_rot); attention runs as one KV head of head_dim = kv_lora_rank +
   * n_rot whose values are the same rows (the first kv_lora_rank outputs
   * are used), with the key/value up-projections absorbed per head */
  int mla;
  int q_lora_rank;       /* 0: queries projected directly (attn_q) */
  int kv_lora_rank;
  int qk_nope;           /* non-rotated key dims per head (key_length_mla -
                            n_rot) */
  int v_head;            /* value dims per head (value_length_mla) */
} dq_hparams;

/* One layer's weights. Vectors are F32 device pointers; NULL when the
 * architecture has no such tensor. Matrices: ne = {n_cols, n_rows}. */
typedef struct dq_layer {
  int is_swa;            /* uses the sliding window and rope_local */
  const float *attn_norm, *attn_norm_b; /* (n_embd) */
  dq_wmat wq;            /* (n_embd -> n_head * head_dim) */
  dq_wmat wk, wv;        /* (n_embd -> n_head_kv * head_dim) */
  dq_wmat wo;            /* (n_head * head_dim -> n_embd) */
  const float *bq, *bk, *bv, *bo; /* biases (qwen2: q/k/v; bert: all) */
  const float *q_norm, *k_norm;   /* (head_dim) qwen3, gemma3 */
  const float *post_attn_norm;    /* (n_embd) gemma3 */
  const float *attn_out_norm, *attn_out_norm_b; /* bert post-LN */
  const float *ffn_norm;          /* (n_embd) pre-FFN RMSNorm */
  dq_wmat ffn_gate;               /* (n_embd -> n_ff); absent for bert */
  dq_wmat ffn_up;                 /* (n_embd -> n_ff) */
  dq_wmat ffn_down;               /* (n_ff -> n_embd) */
  const float *ffn_up_b, *ffn_down_b; /* bert */
  const float *post_ffw_norm;     /* (n_embd) gemma3 */
  const float *out_norm, *out_norm_b; /* bert layer_output_norm */
  /* mixture of experts (moe != 0): router, routed experts stacked as 3-D
   * tensors (expert e's matrix at data + e * n_rows * row_bytes), optional
   * selection bias and shared expert (gated by sigmoid(shexp_gate . x) when
   * shexp_gate is present) */
  int moe;
  dq_wmat router;                 /* (n_embd -> n_expert), F32 */
  const float *router_bias;       /* (n_expert) exp_probs_b, or NULL */
  dq_wmat exp_gate, exp_up;       /* per expert (n_embd -> n_ff_exp) */
  size_t exp_gu_stride;           /* bytes between experts of exp_gate and
                                     exp_up: 0 when packed, twice a matrix
                                     when merged (ffn_gate_up_exps) */
  dq_wmat exp_down;               /* per expert (n_ff_exp -> n_embd) */
  dq_wmat sh_gate, sh_up, sh_down; /* shared expert, or data NULL */
  dq_wmat sh_inp;                 /* (n_embd -> 1) gate of the shared expert */
  /* multi-head latent attention (hparams mla) */
  dq_wmat wq_a, wq_b;             /* q_lora: n_embd -> q_lora_rank -> heads */
  const float *q_a_norm;          /* (q_lora_rank) */
  dq_wmat wkv_a;                  /* n_embd -> kv_lora_rank + n_rot */
  const float *kv_a_norm;         /* (kv_lora_rank) */
  dq_wmat *wk_b;                  /* n_head: (qk_nope -> kv_lora_rank) */
  dq_wmat *wv_b;                  /* n_head: (kv_lora_rank -> v_head) */
} dq_layer;

typedef struct dq_weights {
  dq_wmat tok_embd;              /* (n_embd) x n_vocab rows */
  dq_wmat output;                /* lm head; == tok_embd when tied */
  dq_wmat pos_embd, type_embd;   /* bert */
  const float *tok_norm, *tok_norm_b; /* bert embedding LayerNorm */
  const float *output_norm;      /* (n_embd) decoders */
  dq_layer *layers;              /* n_layer */
  dq_wmat *mla_heads;            /* 2 * n_layer * n_head per-head views */
  float *mla_kb;                 /* absorbed key matrices built at load from
                                    attn_kv_b (older files), or NULL */
} dq_weights;

struct dq_tokenizer;

struct dq_model {
  dq_error err;
  dq_gguf *gguf;
  dq_backend *be;
  dq_hparams hp;
  dq_weights w;
  dq_model_opts opts;
  const dq_logger *log;
  int graph_mode;     /* dq_graphs_mode; OFF where the backend has none */
  dq_graph_tune gtune; /* AUTO's measurements */
  int no_fused;        /* dq_model_set_fused(m, 0): the separate ops */
  int weights_read;    /* the CPU's weights were read (dq_gguf_read_data) */
  int requant;         /* bind_mat: F32 matrices become Q8_0 (an encoder's
                          layers, with opts.q8_at_load) */
  void **q8_bufs;      /* those matrices' Q8_0 copies (host), freed with
                          the weights */
  int n_q8_bufs, n_requant;
  int gsm_off_logged; /* the "GSM on the device with Q8_0 rows: original
                         positions" warning was given */
  const char *name;
  const char *chat_template; /* name, "" when unknown */
  int chat_tmpl;             /* dq_chat_tmpl, 0 = none (plain text) */
  const char *chat_default_system; /* the template's built-in system text */
  void *tok;                 /* tokenizer (engine.c), may be NULL */
  int32_t bos, eos;
  int n_ctx_default;
};

/* Reads hyperparameters and binds every tensor of m->gguf (already open)
 * into m->hp / m->w, checking shapes; errors go to m->err. */
dq_status dq_model_load_weights(dq_model *m);
void dq_model_unload_weights(dq_model *m);


/* KV cache of one sequence (kv.c): per layer, n_ctx rows of row_elems
 * (n_head_kv * head_dim) elements of `store` type, on the device. Rows
 * [0, n_past) are valid; position p lives in row p. */
typedef struct dq_kv {
  int store;        /* DQ_STORE_F16 / Q8_0 / F32 */
  int n_layer, n_ctx, row_elems;
  size_t row_bytes;
  void **k, **v;    /* n_layer device buffers each */
} dq_kv;

dq_status dq_kv_init(dq_kv *kv, dq_backend *be, int n_layer, int n_ctx,
                     int row_elems, dq_kv_type type, dq_error *err);
void dq_kv_free(dq_kv *kv, dq_backend *be);
/* Bytes the cache takes on the device. */
size_t dq_kv_bytes(const dq_kv *kv);

/* A sequence's RunState (forward.c). Scratch holds one batch of up to
 * n_batch tokens; longer inputs run in several batches. */
struct dq_seq {
  dq_error err;
  dq_model *m;
  int n_ctx, n_past, n_batch;
  dq_kv kv;
  float *x, *xb, *q, *k, *v, *att, *hb, *hb2; /* device scratch */
  int32_t *ids, *pos;                         /* device, n_batch */
  /* mixture of experts (n_expert > 0): router logits, routing, output */
  float *moe_logits, *moe_w, *moe_out, *moe_g;
  int32_t *moe_ids;
  uint32_t *moe_load; /* device: n_layer x 2 x n_expert, or NULL (off) */
  uint32_t *moe_load_host; /* one layer's 2 x n_expert */
  /* latent attention (mla): raw queries (n_head x (qk_nope + n_rot)),
   * per-head temporaries, and the heads' value outputs (n_head x v_head) */
  float *mla_q, *mla_t, *mla_u, *mla_o;
  float *logits_dev;  /* logits_dev_rows * n_vocab */
  int logits_dev_rows;
  float *logits;      /* host copy: n_logit_rows x n_vocab */
  int n_logit_rows, logits_cap_rows;
  int logits_pinned;  /* logits from the backend's host_alloc */
  /* dq_seq_top_k: the last evaluated token's logits are row top_row of
   * logits_dev (top_row < 0: none); the penalty list and the selection
   * (backend.h top_k's words) on the device and on the host */
  int top_row;
  int32_t *top_pen_dev, *top_out_dev, *top_pen_host, *top_out_host;
  int top_pen_cap, top_out_cap; /* entries of the pen / out buffers */
  int top_pen_pinned, top_out_pinned;
  float *stats;       /* device: n_layer x n_head x n_ctx, or NULL */
  float *stats_host;  /* one (layer, head) row */
  int stats_q0, stats_q1;
  int32_t *pos_host;  /* n_batch positions of the current batch */
  int32_t *ids_host;  /* n_batch token ids of the current batch */
  int pos_pinned, ids_pinned; /* from host_alloc (else malloc) */
  /* GSM (gsm.h): has_gsm when made by dq_seq_new_gsm; gsm non-NULL once
   * the sequence runs on the GSM path (the full cache kv is then freed). */
  int has_gsm, gsm_failed, gsm_logged;
  int gsm_dev;        /* GSM rows in device memory (gsm.h cfg.dev) */
  dq_gsm_opts gsm_opts;
  int32_t *gsm_pins;  /* copy of gsm_opts.pinned */
  struct dq_gsm *gsm;
  int gsm_window;     /* window of the current eval (scaled) */
  float *qstats;      /* backend buffer, n_layer x n_head x n_ctx: mass
                         each query gives to pinned tokens (recall.c), or
                         NULL */
  float *qstats_host; /* one (layer, head) row of it */
  int layer_stop;     /* > 0: run only layers [0, layer_stop) and produce no
                         logits (recall.c reads attention statistics of the
                         lower layers only) */
};

/* Early exit (speculate.c). A draft runs one token through layers
 * [0, n_exit) only, then the final norm and the head w (NULL: none, no
 * logits; else the model's output matrix or a copy of some of its rows, one
 * logit per row of w); finishing runs the
 * layers [n_exit, n_layer) and the head over drafted tokens. x is the
 * caller's device buffer of residual rows (n_embd floats each): the draft
 * leaves the token's state after layer n_exit in it, and finishing continues
 * from those rows in place. Both write the K/V rows of the layers they run
 * at positions n_past.., leave their logits (1 row, n rows) in
 * dq_seq_logits and advance n_past; roll back with dq_seq_truncate. A token
 * drafted at position p and finished at p gives the same K/V rows and
 * logits as dq_seq_eval of it at p, up to the batched kernels' rounding.
 * Plain full-cache sequences only (not GSM, no statistics, no layer_stop);
 * n <= n_batch. */
dq_status dq_seq_draft(dq_seq *s, int32_t token, int n_exit, float *x,
                       const dq_wmat *w);
dq_status dq_seq_finish(dq_seq *s, float *x, int n, int n_exit);

/* recall.c: turns on the per-query mass to pinned tokens (GSM and full
 * attention; full attention counts the first pinned span only, and refuses
 * more than one). Before the first eval that should count. */
dq_status dq_seq_track_question(dq_seq *s);
/* Each query position's mass to the pinned tokens in layer `layer`, head
 * `head`, positions 0..n_past-1 (*row, valid until the next call). */
dq_status dq_seq_qstats_read(dq_seq *s, int layer, int head,
                             const float **row, int *n_pos);

/* Runs the encoder over n tokens (n <= n_ctx_train) and writes the pooled,
 * normalised embedding into out (host, n_embd floats). forward.c. */
dq_status dq_forward_encode(dq_model *m, const int32_t *tokens, int n,
                            float *out);

/* Tokenizer glue (model_tok.c): opens the tokenizer and chat template from
 * the GGUF metadata into m->tok / m->chat_template / m->bos / m->eos. */
dq_status dq_tok_glue_open(dq_model *m);
void dq_tok_glue_close(dq_model *m);

#endif /* DQ_ENGINE_MODEL_H */
