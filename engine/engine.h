/*
 * engine.h - the public interface of the model runtime: open a GGUF model,
 * tokenize, embed texts (encoder models), run decoder sequences (prefill in
 * batches, then one token at a time), read attention statistics, and sample.
 *
 * Objects:
 *   dq_model    weights (read-only, mmap'd), hyperparameters, tokenizer and
 *               the compute backend. Immutable after open.
 *   dq_seq      one sequence: its own KV cache, activations and logits.
 *   dq_sampler  sampling state (its own PRNG, recent tokens for penalties).
 *
 * Threads: a dq_model may be shared by several threads for tokenizing and
 * reading info; compute (dq_seq_eval / dq_model_embed*) uses the model's
 * backend and its worker threads, so run one compute call per model at a
 * time. No global state: two models are fully independent.
 *
 * GSM sparse attention and coarse recall: see their section below.
 * Early exit (self-speculative decoding) is an option of dq_generate.
 * Mixture-of-experts models run through the same calls; their expert load
 * is read with dq_seq_moe_load.
 * Not here: retrieval and prompt building (pipeline/).
 */
#ifndef DQ_ENGINE_H
#define DQ_ENGINE_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dq_model dq_model;
typedef struct dq_seq dq_seq;
typedef struct dq_sampler dq_sampler;

/* KV cache element type. */
typedef enum {
  DQ_KV_F16 = 0,  /* default */
  DQ_KV_Q8_0 = 1, /* blocks of 32: one f16 scale + 32 int8 */
  DQ_KV_F32 = 2,  /* exact, twice the memory of F16 */
} dq_kv_type;

typedef enum {
  DQ_BACKEND_AUTO = 0, /* CUDA when built and a device is present, else CPU */
  DQ_BACKEND_CPU = 1,
  DQ_BACKEND_CUDA = 2,
} dq_backend_kind;

/* Decode steps on the CUDA backend: as one CUDA graph each, or op by op. */
typedef enum {
  DQ_GRAPHS_AUTO = 0, /* default: both measured now and then, the faster kept */
  DQ_GRAPHS_ON = 1,
  DQ_GRAPHS_OFF = 2,
} dq_graphs_mode;

/* Where the CPU backend reads weights from; DOCQA_WEIGHTS=map|read
 * overrides. */
typedef enum {
  DQ_WEIGHTS_MAP = 0,  /* default: in place in the file's mapping (4 KiB
                          pages, shared with the page cache, nothing read
                          at load) */
  DQ_WEIGHTS_READ = 1, /* read at load into memory advised for transparent
                          huge pages (2 MiB): decode 6-14% faster where
                          weights stream from memory (Zen 4 VM, 1 thread),
                          for a load that reads the whole file (0.1-0.5 s
                          per 250 MB on that VM): pays after some tens to
                          hundreds of generated tokens */
} dq_weights_mode;

typedef struct dq_model_opts {
  dq_backend_kind backend;
  int cuda_device;      /* device index for DQ_BACKEND_CUDA */
  int n_threads;        /* CPU worker threads; 0 = all online cores */
  int n_ctx;            /* default context of new sequences; 0 = min(train, 4096) */
  dq_kv_type kv_type;
  float rope_base;      /* > 0 overrides the model's RoPE frequency base */
  float rope_scale;     /* > 0 overrides the linear RoPE scale factor
                           (positions are divided by it) */
  const dq_logger *log; /* may be NULL (silent); must outlive the model */
  dq_graphs_mode cuda_graphs; /* a graph that cannot be recorded turns
                                 graphs off, with a warning */
  dq_weights_mode weights;    /* CPU backend; others upload at load */
  /* encoders (bert): 1 quantizes their F32 layer matrices to Q8_0 at
   * load, for bulk embedding (ingest): 2.4x faster on the development VM,
   * vectors within cosine 0.9994 of the exact ones (docs/benchmarks.md),
   * for 60 ms more load; 0 (default) keeps F32, for a query's one text.
   * DOCQA_EMBED_EXACT=1 (not "0") turns it off. */
  int q8_at_load;
} dq_model_opts;

/* Fills defaults: AUTO backend, all cores, n_ctx 0, F16 KV, no overrides,
 * weights mapped. */
void dq_model_opts_init(dq_model_opts *o);

/* Opens a GGUF model. Supported architectures: llama (SmolLM2, Llama 2/3,
 * Mistral, and with experts Mixtral), qwen2, qwen3, gemma3, bert, and the
 * mixture-of-experts qwen2moe, qwen3moe, olmoe and deepseek2 (V2/V3, with
 * multi-head latent attention). Every tensor's type and shape is
 * checked against the hyperparameters; an unknown architecture is refused by
 * name. On success *out owns everything; free with dq_model_free. On failure
 * *out is NULL and `err` (may be NULL) names the file, key or tensor. */
dq_status dq_model_open(const char *path, const dq_model_opts *o,
                        dq_model **out, dq_error *err);
/* Accepts NULL. All sequences of the model must be freed first. */
void dq_model_free(dq_model *m);
/* Message of the last failing call on m (or on one of its sequences'
 * helpers that take only m). Valid until the next failing call on m. */
const char *dq_model_errmsg(const dq_model *m);

typedef struct dq_model_info {
  const char *arch;          /* general.architecture: "llama", "qwen2",
                                "qwen3", "gemma3", "bert", "qwen2moe",
                                "qwen3moe", "olmoe", "deepseek2" */
  const char *name;          /* general.name or "" */
  const char *backend;       /* "cpu" or "cuda" */
  const char *cpu_path;      /* cpu: the kernels' SIMD path and the features
                                that work, "avx2 (avx2 avxvnni)"; else "" */
  const char *chat_template; /* template name ("chatml", "gemma", ...) or "" */
  const char *weights;       /* cpu: "read" or "mapped" (dq_weights_mode);
                                else "uploaded" */
  int is_encoder;            /* 1 for bert (embeddings only) */
  int n_q8_at_load;          /* F32 matrices quantized to Q8_0 at load
                                (dq_model_opts.q8_at_load) */
  int n_ctx_train;
  int n_ctx;                 /* default context of new sequences */
  int n_embd, n_vocab, n_layer, n_head, n_head_kv, head_dim, n_ff;
  int32_t bos, eos;          /* -1 when the model has none */
  /* mixture of experts (n_expert 0: dense): routed experts per token, the
   * two-level routing's groups (n_expert_group 1: flat), leading dense
   * layers, width of one expert */
  int n_expert, n_expert_used, n_expert_group, n_expert_group_used;
  int n_layer_dense, n_ff_exp;
  int kv_lora_rank;          /* latent attention (deepseek2), else 0 */
} dq_model_info;

/* Strings stay valid until dq_model_free. */
void dq_model_get_info(const dq_model *m, dq_model_info *info);

/* Decode steps run as CUDA graphs (all zero on other backends). A
 * single-token step on full attention without attention or expert
 * statistics is recorded, then launched as one graph: instantiated the
 * first time and whenever the step's kernels change (e.g. attention starts
 * splitting its keys), otherwise the instantiation is updated with the
 * step's parameters. */
typedef struct dq_graph_stats {
  uint64_t n_launched;     /* steps run as a graph */
  uint64_t n_instantiated; /* graphs instantiated anew */
  const char *off_reason;  /* NULL, or why the backend turned graphs off */
  /* DQ_GRAPHS_AUTO: 1 graphs, 0 op by op, -1 not chosen yet (or not auto);
   * the last trial's median step times, microseconds (0: none yet) */
  int auto_choice;
  double us_graph, us_direct;
} dq_graph_stats;
void dq_model_graph_stats(const dq_model *m, dq_graph_stats *st);
/* Sets the mode from the next step on (e.g. to measure both in one run;
 * AUTO starts a new trial); ON where the backend has no graphs runs op by
 * op. */
void dq_model_set_graphs(dq_model *m, dq_graphs_mode mode);
/* Whether the forward pass uses the backend's fused ops (one call for q, k
 * and v; gate, up and the gated unit; the output projections with the
 * residual add; RoPE of q and k): on by default where the backend has
 * them (CUDA), the same values either way; off runs the separate ops (to
 * measure both). */
void dq_model_set_fused(dq_model *m, int on);

/* ---- text <-> tokens ---------------------------------------------------- */

/* Tokenizes `text` (len bytes). add_special: add BOS/CLS..SEP as the model
 * wants. *tokens is malloc'd (caller frees with free()), *n_tokens its length. */
dq_status dq_model_tokenize(dq_model *m, const char *text, size_t len,
                            int add_special, int32_t **tokens, int *n_tokens);
/* Decodes tokens into a malloc'd NUL-terminated string (caller frees). */
dq_status dq_model_detokenize(dq_model *m, const int32_t *tokens, int n,
                              char **text);
/* 1 when `token` ends generation (EOS, <end_of_turn>, <|im_end|>, ...). */
int dq_model_is_eog(const dq_model *m, int32_t token);
/* The prompt for one user message under the model's chat template, ready
 * for dq_model_tokenize with add_special = 1. malloc'd, caller frees. */
dq_status dq_model_chat_prompt(dq_model *m, const char *system,
                               const char *user, char **prompt);

/* ---- embeddings (encoder models) ----------------------------------------- */

/* Embedding dimension (n_embd), for sizing `out` below. */
int dq_model_embed_dim(const dq_model *m);
/* Embeds n_texts texts: out[i * dim .. (i+1) * dim) is text i's mean-pooled,
 * L2-normalised vector. Texts longer than the model's context are cut to it
 * (logged at INFO). `out` holds n_texts * dim floats, caller-owned. */
dq_status dq_model_embed(dq_model *m, const char *const *texts, int n_texts,
                         float *out);
/* Same for one already tokenized input (with its CLS/SEP). */
dq_status dq_model_embed_tokens(dq_model *m, const int32_t *tokens, int n,
                                float *out);

/* ---- sequences (decoder models) ------------------------------------------ */

/* A new empty sequence with its own KV cache for n_ctx tokens (0 = the
 * model's default). Free with dq_seq_free before the model. */
dq_status dq_seq_new(dq_model *m, int n_ctx, dq_seq **out);
void dq_seq_free(dq_seq *s); /* accepts NULL */
const char *dq_seq_errmsg(const dq_seq *s);
int dq_seq_n_past(const dq_seq *s); /* tokens in the KV cache */
int dq_seq_n_ctx(const dq_seq *s);

/* Which logits dq_seq_eval keeps. */
typedef enum {
  DQ_LOGITS_LAST = 0, /* the last token's (for sampling) */
  DQ_LOGITS_ALL = 1,  /* one row per input token */
  DQ_LOGITS_NONE = 2,
  DQ_LOGITS_SAMPLE = 3, /* the last token's, left where the backend computed
                           it: read with dq_seq_top_k (dq_seq_logits has
                           none); on CUDA nothing is copied back */
} dq_logits_mode;

/* Appends n tokens at positions n_past.. and runs the model over them as one
 * batch (matrix-matrix products; chunked internally). Context overflow
 * (n_past + n > n_ctx) is DQ_ERR_LIMIT, empty input DQ_ERR_ARG, a token
 * outside the vocabulary DQ_ERR_ARG; on error the sequence is unchanged. */
dq_status dq_seq_eval(dq_seq *s, const int32_t *tokens, int n,
                      dq_logits_mode mode);
/* Logits of the last dq_seq_eval: n_rows rows of n_vocab floats (1 row for
 * LAST, n for ALL). Valid until the next eval/free. */
const float *dq_seq_logits(const dq_seq *s, int *n_rows);
/* The k highest logits of the last evaluated token (eval with LAST, ALL or
 * SAMPLE), best first, in kernels.h dq_top_k's order (ties to the lower
 * id) after its repetition penalty on the tokens pen[0..n_pen) (any order,
 * repeats and ids outside the vocabulary ignored; penalty 1 = none): ids[i]
 * and vals[i] (penalised logits), k entries. The backend selects where the
 * logits are (on CUDA a kernel, and only the k pairs come back; where it
 * cannot, the row is read back and selected here: same answer).
 * DQ_ERR_ARG: no logits, k outside 1..n_vocab, penalty <= 0. */
dq_status dq_seq_top_k(dq_seq *s, int k, const int32_t *pen, int n_pen,
                       float penalty, int32_t *ids, float *vals);
/* Drops cached tokens from position n_past on (0 <= n_past <= current). */
dq_status dq_seq_truncate(dq_seq *s, int n_past);

/* Attention statistics. After dq_seq_stats_begin(s, q0, q1), every eval
 * adds, for each layer and query head, the attention probability that each
 * query at position p in [q0, q1) gives to each cached position j: the
 * "mass" position j receives. Statistics cover the whole context. */
dq_status dq_seq_stats_begin(dq_seq *s, int q_begin, int q_end);
/* mass[j] for j < n_pos (= n_past): sum over the chosen queries of layer
 * `layer`, head `head`. Valid until the next eval, stats call or free. */
dq_status dq_seq_stats_read(dq_seq *s, int layer, int head, const float **mass,
                            int *n_pos);
/* Stops accumulating and frees the statistics. */
void dq_seq_stats_end(dq_seq *s);

/* ---- mixture of experts ------------------------------------------------- */

/* Starts (or restarts from zero) counting expert load on a MoE model: for
 * every evaluated token and MoE layer, which experts the routing chose,
 * and which flat top-k would have chosen on the same selection scores
 * (the comparison for two-level routing). DQ_ERR_ARG on a dense model. */
dq_status dq_seq_moe_stats_begin(dq_seq *s);
/* Counts of layer `layer` since dq_seq_moe_stats_begin: routed[e] and
 * flat[e] for e < *n_expert; both NULL and *n_expert 0 for a dense layer.
 * Valid until the next call on s. */
dq_status dq_seq_moe_load(dq_seq *s, int layer, const uint32_t **routed,
                          const uint32_t **flat, int *n_expert);

/* ---- GSM sparse attention (gsm.c, recall.c) -------------------------------
 * Training-free sparse attention for long inputs: per layer the cache keeps
 * sinks (first n_sink tokens), pinned spans (the question), dynamic anchors
 * (highest accumulated attention), a local window and a bounded memory of
 * evicted tokens compressed by a strategy. RoPE positions: original, or
 * cache positions (renumbered to stay within the trained context; gsm.h),
 * auto by default. On the CPU backend every option; elsewhere (CUDA) the
 * rows live on the device (gsm.h device rows): every strategy (merges
 * staged through host memory), cache positions with F16/F32 rows; what they cannot run is DQ_ERR_UNSUPPORTED
 * with the reason (gsm.h dq_gsm_dev_refusal).
 * The docqa.yaml keys map one to one (pipeline converts dq_config). */

typedef enum {
  DQ_GSM_LAYOUT_FIXED = 0,   /* sinks + pinned + window in every layer */
  DQ_GSM_LAYOUT_DYNAMIC = 1, /* + anchors and memory in every layer */
  DQ_GSM_LAYOUT_HYBRID = 2,  /* fixed below hybrid_split, dynamic above */
} dq_gsm_layout;

typedef enum {
  DQ_GSM_MERGE_SCORE = 0,      /* evict lowest accumulated attention (H2O) */
  DQ_GSM_MERGE_TIME_DECAY = 1, /* fold oldest slots into a decayed state */
  DQ_GSM_MERGE_SIMILARITY = 2, /* merge most similar neighbouring keys */
} dq_gsm_merge;

enum {
  DQ_GSM_POS_ORIGINAL = 0,
  DQ_GSM_POS_CACHE = 1,
  DQ_GSM_POS_AUTO = 2,
};

typedef struct dq_gsm_opts {
  int enabled;               /* 0: full attention always (default 1) */
  int window_size;           /* sparse_attention.window_size, 384 */
  int num_global_anchors;    /* 6 */
  int n_sink;                /* 4 */
  dq_gsm_layout mode;        /* hybrid */
  int hybrid_split;          /* first dynamic layer; -1 = n_layer / 2 */
  int static_anchors;        /* anchor_selection static: an anchor, once
                                chosen, stays one (0 = re-chosen, dynamic) */
  int min_tokens;            /* 1024: shorter sequences use full attention */
  float keep_ratio;          /* kv_compress.keep_ratio 0.75: memory slots <=
                                keep_ratio x tokens seen */
  dq_gsm_merge strategy;     /* score */
  int memory_slots;          /* 4096 */
  int chunk_size;            /* prefill.chunk_size 2048 */
  int cache_positions;       /* RoPE positions on the GSM path
                                (DQ_GSM_POS_*): ORIGINAL = each token's
                                original position (exact relative
                                distances; distances grow with the input),
                                CACHE = its index in the retained cache, as
                                StreamingLLM does (distances stay below the
                                cache size, so a model reads past its
                                trained context), AUTO (default) = CACHE
                                when the sequence's n_ctx exceeds the
                                model's trained context (and the model is
                                not latent-attention), else ORIGINAL.
                                Sliding-window layers keep original
                                positions either way. */
  int cache_type;            /* kv_compress.cache_type: the element type of
                                the GSM cache, a dq_kv_type (default
                                DQ_KV_Q8_0: 8-bit keys and values that the
                                attention kernel reads in place, about half
                                the bytes of F16; with VNNI its attention
                                is 2x (AVX-512) or 1.7x (AVX-VNNI) F16's,
                                without VNNI ~15% slower; F16 and F32 on
                                request). Head sizes the 8-bit path does not
                                take get F16. The full cache of a sequence's
                                first min_tokens keeps the model's kv_type. */
  float encoder_window_scale; /* 1.5: window x this for multi-token evals */
  float decoder_window_scale; /* 0.8: window x this for one-token evals */
  const int32_t *pinned;     /* n_pinned [begin, end) position pairs, never
                                evicted; copied at dq_seq_new_gsm */
  int n_pinned;
  int device_rows;           /* GPU backends keep the GSM cache's rows in
                                device memory (entries and compression on
                                the host, one wait per batch; merges
                                staged there, cache positions not with a
                                q8_0 KV cache, one pinned span where the
                                question mass is tracked);
                                1 = that path on the cpu backend too
                                (tests compare it with the host path) */
} dq_gsm_opts;

/* Fills the docqa.yaml defaults above (enabled, hybrid, score, ...). */
void dq_gsm_opts_init(dq_gsm_opts *o);

/* A sequence that switches to GSM attention once it holds min_tokens
 * tokens (a first eval of >= min_tokens tokens starts on GSM directly;
 * a sequence that grows past min_tokens moves its full cache over, with
 * zero accumulated scores). Prefill runs in chunks of chunk_size tokens;
 * memory is bounded by the options, independent of n_ctx (n_ctx only caps
 * positions). Free with dq_seq_free. dq_seq_truncate is refused once on
 * GSM (DQ_ERR_UNSUPPORTED). */
dq_status dq_seq_new_gsm(dq_model *m, int n_ctx, const dq_gsm_opts *o,
                         dq_seq **out);

/* What ran, for logs and `--json`. */
typedef struct dq_gsm_stats {
  const char *path;       /* "full" or "gsm" (static string) */
  const char *positions;  /* "original" or "cache" (gsm path), else NULL */
  const char *cache_type; /* "q8_0", "f16" or "f32" (gsm path), else NULL */
  int n_layer_fixed, n_layer_dynamic, n_layer_swa;
  int window;             /* window of the last eval (scaled) */
  int n_sink, n_anchors, n_pinned_tokens;
  int memory_budget;      /* slot budget applied last */
  int max_entries;        /* most retained entries in any layer now */
  int n_chunks;           /* GSM chunks run */
  int64_t n_evicted;      /* tokens dropped, summed over layers */
  int64_t n_merged;       /* merge operations, summed over layers */
  int n_renumbered;       /* cache positions: renumberings, summed over
                             layers */
  double compress_ms;     /* host time spent choosing what to keep (ms; with
                             device rows the device waits meanwhile) */
  size_t cache_bytes;     /* retained K/V rows now, all layers */
  size_t cache_bytes_alloc; /* K/V bytes allocated (bounded by options) */
} dq_gsm_stats;

/* Fills st for s (path "full" for sequences without GSM). */
void dq_seq_gsm_stats(const dq_seq *s, dq_gsm_stats *st);

/* ---- coarse recall (recall.c) ------------------------------------------- */

typedef struct dq_span {
  int begin, end; /* token positions [begin, end) */
} dq_span;

typedef struct dq_recall_opts {
  dq_gsm_opts gsm;         /* cache layout of the pass; min_tokens is
                              ignored (the pass always runs on GSM) and the
                              question span is pinned */
  int layer_begin, layer_end; /* layers read; 0, 0 = all */
  const int *heads;        /* query heads read; NULL = all */
  int n_heads;
  const int32_t *calib_probe; /* content-free probe (e.g. "N/A"); when set,
                                 the same pass with it in place of the probe
                                 is subtracted (calibration) */
  int n_calib;
  int toq_top;             /* to_question of a span: the mean over its
                              toq_top tokens that attend most to the
                              question (default 4; 0 = all its tokens) */
  int toq_detrend;         /* 1 (default): each token's mass to the question
                              divided by the median mass of the tokens at
                              about its distance (recall.c detrend) before
                              the span's top tokens are taken; 0: raw */
} dq_recall_opts;

/* gsm defaults, all layers and heads, no calibration. */
void dq_recall_opts_init(dq_recall_opts *o);

/* Coarse recall over one long token sequence: `spans` mark the passages,
 * `question` the question (pinned), `probe` the question repeated at the
 * end (must be the last tokens). probe_score[i] is the attention mass the
 * probe's tokens pay to span i's tokens (anchors and memory slots count
 * through their source ranges), averaged over the chosen layers, heads and
 * probe tokens; to_question[i] (may be NULL) is the mass span i's tokens
 * pay to the question, averaged over the same layers and heads, each
 * token's taken relative to the tokens at about its distance (toq_detrend)
 * and the mean over the span's toq_top highest. Both caller-owned arrays
 * of n_spans. */
dq_status dq_model_recall(dq_model *m, const int32_t *tokens, int n,
                          const dq_span *spans, int n_spans, dq_span question,
                          dq_span probe, const dq_recall_opts *o,
                          float *probe_score, float *to_question);

/* One score per span from both of dq_model_recall's: to_question's robust
 * z-score ((x - median) / median absolute deviation over the n spans) plus
 * probe_weight times the probe score's. The probe finds what the cache still
 * holds; to_question also what was evicted before the probe reads it.
 * DQ_RECALL_PROBE_WEIGHT was chosen on bench needle (10 depths; hit@1 of
 * to_question alone / the probe alone / weight 1 / 0.25): Gemma 3 270M at
 * 2k-32k 0.9 / 0.1-0.8 / 0.7-1.0 / 0.9 at every length (weight 1 lets the
 * probe's noise in at 32k: 0.7), SmolLM2-135M at 2k / 4k / 8k 0.9, 0.5,
 * 0.3 / 1.0, 1.0, 0.6 / 1.0, 1.0, 0.7 / 1.0, 0.9, 0.6. A needle finder:
 * over a pool of retrieved passages (tests/eval/run.py) both scores follow
 * the passage's place in the prompt, and ask ranks by the probe alone
 * (pipeline/rerank.c). DQ_ERR_NOMEM, DQ_ERR_ARG (a NULL array); out is
 * caller-owned. */
#define DQ_RECALL_PROBE_WEIGHT 0.25f
dq_status dq_recall_combine(const float *probe_score, const float *to_question,
                            int n, float probe_weight, float *out);

/* ---- sampling ------------------------------------------------------------ */

typedef struct dq_sampler_opts {
  float temp;           /* <= 0: greedy (argmax) */
  int top_k;            /* 0 = off */
  float top_p;          /* 1 = off */
  float min_p;          /* 0 = off: drop tokens with p < min_p * p_max */
  float repeat_penalty; /* 1 = off (llama.cpp rule: divide positive logits,
                           multiply negative ones) */
  int repeat_last_n;    /* how many recent tokens the penalty looks at */
  uint64_t seed;
} dq_sampler_opts;

/* greedy; top_k 40, top_p 0.95, min_p 0.05, no penalty, last 64, seed 0 */
void dq_sampler_opts_init(dq_sampler_opts *o);
dq_status dq_sampler_new(const dq_sampler_opts *o, int n_vocab,
                         dq_sampler **out);
void dq_sampler_free(dq_sampler *sm); /* accepts NULL */
/* Picks a token from n_vocab logits (not modified) and records it for the
 * repetition penalty. Same seed + same logits sequence = same tokens. */
dq_status dq_sampler_sample(dq_sampler *sm, const float *logits,
                            int32_t *token);
/* Records a token (e.g. prompt tokens) for the repetition penalty. */
void dq_sampler_accept(dq_sampler *sm, int32_t token);
/* The same pick from the last evaluated token of s (any logits mode but
 * NONE; DQ_LOGITS_SAMPLE keeps a CUDA sequence's logits on the device) as
 * dq_sampler_sample from its logits row, through dq_seq_top_k: greedy asks
 * for 1 candidate, top_k for top_k, no top_k for the whole vocabulary. */
dq_status dq_sampler_sample_seq(dq_sampler *sm, dq_seq *s, int32_t *token);

/* ---- early exit (speculate.c) ------------------------------------------- *
 * Self-speculative decoding: a draft from the first layer_fraction of the
 * layers (then the final norm and output head) proposes tokens while its
 * top probability is at least `threshold`; the full model checks them in
 * one batched pass over the remaining layers. The output is the full
 * model's: greedy decoding gives the same tokens (up to rounding between
 * near-tied logits, as any batched evaluation), sampling follows the
 * standard speculative acceptance rule, so tokens come from the same
 * distribution (not the same draws for a seed). With auto_off it measures
 * plain decoding first and switches itself off, once and for good, when a
 * window of speculative decoding is not faster. The docqa.yaml keys
 * early_exit.{enabled,layer_fraction,threshold} map one to one. */

typedef struct dq_early_exit_opts {
  int enabled;          /* 0 (default): plain decoding */
  float layer_fraction; /* 0.67: the draft runs round(f * n_layer) layers
                           (at least 1, at most n_layer - 1) */
  float threshold;      /* 0.9: draft while the top probability >= this */
  int max_draft;        /* 8: most draft tokens per verify pass */
  int draft_vocab;      /* 4096: the draft scores only this many candidate
                           tokens (the prompt's, then the full model's top
                           choices as it goes); 0 = the whole vocabulary.
                           The verify pass always uses the whole head. */
  int auto_off;         /* 1: switch off when it does not pay */
} dq_early_exit_opts;

void dq_early_exit_opts_init(dq_early_exit_opts *o);

typedef struct dq_early_exit_stats {
  int enabled;          /* asked for (opts.enabled) */
  int ran;              /* at least one speculative cycle ran */
  int exit_layer;       /* layers the draft runs */
  int n_layer;
  int draft_vocab;      /* most rows of the draft's head */
  int n_cycles;         /* verify passes */
  int n_drafted;        /* draft tokens proposed */
  int n_accepted;       /* draft tokens the full model kept */
  int n_tokens;         /* tokens produced by cycles (accepted + 1 each) */
  double ms;            /* time in cycles */
  int n_plain;          /* plain decode steps timed (the probes) */
  double plain_ms;
  int switched_off;     /* 1: it turned itself off (see off_reason) */
  const char *off_reason; /* static string or NULL: "slower than plain
                             decoding" */
} dq_early_exit_stats;

/* ---- generation (convenience over seq + sampler) ------------------------- */

/* Streaming callback: `piece` is the next decoded text (not NUL-terminated).
 * Return non-zero to stop. */
typedef int (*dq_text_fn)(void *user, const char *piece, size_t len);

typedef struct dq_generate_opts {
  int max_tokens;             /* default 256 */
  int raw;                    /* 1: no chat template */
  const char *system;         /* optional system message (chat only) */
  dq_sampler_opts sampling;
  const char *const *stop;    /* stop strings (not included in the text) */
  int n_stop;
  /* strings the text may not begin with (after blanks), e.g. a prompt's
   * own labels that small models echo ("Question:"): until the first
   * non-blank text, each token is the best of the DQ_NO_START_CANDIDATES
   * likeliest whose text, added to what came before, neither begins one
   * nor is begun by one (the likeliest when none qualifies), picked
   * greedily whatever the sampling options */
  const char *const *no_start;
  int n_no_start;
  dq_text_fn on_text;         /* may be NULL */
  void *user;
  dq_early_exit_opts early_exit; /* off by default */
  int expert_stats;           /* MoE models: count expert load (result) */
} dq_generate_opts;

#define DQ_NO_START_CANDIDATES 32

void dq_generate_opts_init(dq_generate_opts *o);

typedef struct dq_generate_result {
  char *text;           /* valid UTF-8 (stray bytes become U+FFFD);
                           malloc'd; free with dq_generate_result_clear */
  int n_prompt_tokens;
  int n_tokens;         /* generated */
  double prefill_ms, decode_ms;
  const char *stop_reason; /* "eog", "max_tokens", "stop_string", "callback",
                              "context" (static strings) */
  dq_early_exit_stats early_exit; /* zero unless early_exit.enabled */
  /* with expert_stats on a MoE model: for each layer l, expert_load[(l * 2
   * + 0) * n_expert + e] tokens routed to expert e (every evaluated token:
   * prompt, generated, and early exit's rejected drafts),
   * [(l * 2 + 1) * n_expert + e] those flat top-k would have sent there
   * (dq_seq_moe_load); all zero for dense layers. malloc'd, or NULL */
  uint32_t *expert_load;
  int n_expert;
} dq_generate_result;

dq_status dq_generate(dq_model *m, const char *prompt,
                      const dq_generate_opts *o, dq_generate_result *res);
void dq_generate_result_clear(dq_generate_result *r);

#ifdef __cplusplus
}
#endif
#endif /* DQ_ENGINE_H */
