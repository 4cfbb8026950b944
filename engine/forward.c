/*
 * forward.c - the forward pass, written once against the backend interface:
 * decoder layers (llama, qwen2, qwen3, gemma3, and the mixture-of-experts
 * qwen2moe, qwen3moe, olmoe, deepseek2) over a sequence's KV cache, and the
 * bert encoder for embeddings. Also the sequence object (scratch, logits,
 * attention statistics, expert load) that holds a forward pass's RunState.
 *
 * A decoder layer reads top to bottom:
 *   norm -> Q,K,V (+bias) -> [q/k norm] -> RoPE -> store K,V -> attention
 *   -> output proj -> [post-attn norm] -> residual -> norm -> gated FFN
 *   -> [post-ffw norm] -> residual
 * where deepseek2's attention is latent (attn_mla: a compressed cache read
 * as one KV head, key/value up-projections absorbed per head) and a MoE
 * layer's FFN is the router, the routed experts and any shared expert
 * (ffn_moe; routing and dispatch are backend ops).
 * An input of n tokens runs as ceil(n / n_batch) batches; each batch is
 * matrix-matrix through the backend, causal full attention over the cache
 * is the exact reference path (gemma3's local layers hide keys beyond the
 * sliding window). Nothing is read back to the host inside a layer.
 *
 * Early exit (speculate.c) splits the same layers in two: a draft runs a
 * token through the lower layers and straight to the output head, and a
 * later call finishes the drafted tokens through the upper layers as one
 * batch, continuing from the draft's residual rows.
 *
 * Sequences made by dq_seq_new_gsm run the same layers but, past
 * min_tokens, route each layer's attention through the GSM cache (gsm.c)
 * in chunks of chunk_size tokens instead of the full KV cache; this file
 * decides which path runs, moves a full cache over when a sequence grows
 * past min_tokens, and logs the choice.
 */
#include "gsm.h"
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH_DEFAULT 256
#define BATCH_DEVICE 1024 /* non-CPU backends */

static dq_status seq_alloc(dq_backend *be, void **p, size_t n_bytes) {
  return be->i.buf_alloc(be->ctx, n_bytes, p);
}

/* Host memory for inputs and logits: the backend's page-locked memory
 * when it has some to give (*pinned = 1: copies to and from it run
 * directly, and upload_async may read it), else malloc. */
static void *host_buf(dq_backend *be, size_t n_bytes, int *pinned) {
  void *p = NULL;
  *pinned = be->i.host_alloc && !be->i.host_alloc(be->ctx, n_bytes, &p);
  return *pinned ? p : malloc(n_bytes);
}
static void host_buf_free(dq_backend *be, void *p, int pinned) {
  if (pinned)
    be->i.host_free(be->ctx, p);
  else
    free(p);
}

static dq_status seq_create(dq_model *m, int n_ctx, const dq_gsm_opts *g,
                            dq_seq **out) {
  *out = NULL;
  if (!m)
    return DQ_ERR_ARG;
  const dq_hparams *hp = &m->hp;
  if (hp->arch == DQ_ARCH_BERT)
    return dq_error_set(&m->err, DQ_ERR_ARG,
                        "%s is an encoder (bert): use dq_model_embed, not a "
                        "sequence",
                        m->name);
  if (n_ctx <= 0)
    n_ctx = m->n_ctx_default;
  if (n_ctx < 1 || n_ctx > (1 << 24))
    return dq_error_set(&m->err, DQ_ERR_ARG, "context size %d out of range",
                        n_ctx);
  dq_seq *s = calloc(1, sizeof *s);
  if (!s)
    return dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
  dq_backend *be = m->be;
  s->m = m;
  s->n_ctx = n_ctx;
  /* a GPU backend dequantizes each weight matrix once per batch for its
   * matrix products: larger batches amortise that */
  int batch = dq_backend_cpu_caps(be) ? BATCH_DEFAULT : BATCH_DEVICE;
  s->n_batch = n_ctx < batch ? n_ctx : batch;
  int kv_rows = n_ctx;
  if (g && g->enabled) {
    /* another backend keeps the GSM cache's rows in device memory */
    s->gsm_dev = !dq_backend_cpu_caps(be) || g->device_rows;
    /* a GSM sequence runs its chunks as batches, and its full cache only
     * ever holds min_tokens rows (past that it moves to the GSM cache) */
    s->has_gsm = 1;
    s->gsm_opts = *g;
    s->gsm_opts.pinned = NULL;
    if (g->cache_positions == DQ_GSM_POS_AUTO) {
      /* original positions within the trained context (exact distances);
       * past it cache positions keep every distance in range
       * (docs/benchmarks.md: perplexity at 16k 12.3 vs 22.7, needle 1/3 vs
       * 0/3). Latent
       * attention cannot (its RoPE dims sit at the row's end), nor
       * Q8_0 rows on the device (their renumbering is the CPU's). */
      int past = n_ctx > hp->n_ctx_train && hp->n_ctx_train > 0;
      int dev_ok = !s->gsm_dev ||
                   dq_gsm_dev_cachepos(be, m->opts.kv_type == DQ_KV_Q8_0);
      s->gsm_opts.cache_positions = past && !hp->mla && dev_ok
                                        ? DQ_GSM_POS_CACHE
                                        : DQ_GSM_POS_ORIGINAL;
      if (past && !hp->mla && !dev_ok && !m->gsm_off_logged) {
        m->gsm_off_logged = 1;
        dq_log(m->log, DQ_LOG_WARN,
               "GSM on %s with a q8_0 KV cache: original positions past the "
               "trained context of %d (cache positions, which read further, "
               "need kv_type f16 or f32 here)",
               be_name(be), hp->n_ctx_train);
      }
    }
    if (g->n_pinned > 0) {
      s->gsm_pins = malloc((size_t)g->n_pinned * 2 * sizeof(int32_t));
      if (!s->gsm_pins)
        goto fail;
      memcpy(s->gsm_pins, g->pinned, (size_t)g->n_pinned * 2 * sizeof(int32_t));
      s->gsm_opts.pinned = s->gsm_pins;
    }
    s->n_batch = n_ctx < g->chunk_size ? n_ctx : g->chunk_size;
    kv_rows = g->min_tokens < n_ctx ? g->min_tokens : n_ctx;
    if (kv_rows < 1)
      kv_rows = 1;
  }
  size_t B = (size_t)s->n_batch, E = (size_t)hp->n_embd;
  size_t nq = (size_t)hp->n_head * hp->head_dim;
  size_t nkv = (size_t)hp->n_head_kv * hp->head_dim;
  size_t n_ff = (size_t)(hp->n_ff > hp->n_ff_shexp ? hp->n_ff : hp->n_ff_shexp);
  dq_status st = dq_kv_init(&s->kv, be, hp->n_layer, kv_rows, (int)nkv,
                            m->opts.kv_type, &m->err);
  if (st)
    goto fail_quiet;
  if ((st = seq_alloc(be, (void **)&s->x, B * E * 4)) ||
      (st = seq_alloc(be, (void **)&s->xb, B * E * 4)) ||
      (st = seq_alloc(be, (void **)&s->q, B * nq * 4)) ||
      (st = seq_alloc(be, (void **)&s->att, B * nq * 4)) ||
      (st = seq_alloc(be, (void **)&s->k, B * nkv * 4)) ||
      (st = seq_alloc(be, (void **)&s->v, B * nkv * 4)) ||
      (st = seq_alloc(be, (void **)&s->hb, B * n_ff * 4)) ||
      (st = seq_alloc(be, (void **)&s->hb2, B * n_ff * 4)) ||
      (st = seq_alloc(be, (void **)&s->ids, B * 4)) ||
      (st = seq_alloc(be, (void **)&s->pos, B * 4)) ||
      (st = seq_alloc(be, (void **)&s->logits_dev, (size_t)hp->n_vocab * 4)))
    goto fail;
  if (hp->n_expert > 0) {
    size_t X = (size_t)hp->n_expert, K = (size_t)hp->moe.n_used;
    if ((st = seq_alloc(be, (void **)&s->moe_logits, B * X * 4)) ||
        (st = seq_alloc(be, (void **)&s->moe_ids, B * K * 4)) ||
        (st = seq_alloc(be, (void **)&s->moe_w, B * K * 4)) ||
        (st = seq_alloc(be, (void **)&s->moe_out, B * E * 4)) ||
        (st = seq_alloc(be, (void **)&s->moe_g, B * 4)))
      goto fail;
  }
  if (hp->mla) {
    size_t H = (size_t)hp->n_head, R = (size_t)hp->kv_lora_rank;
    size_t dn = (size_t)hp->qk_nope, dv = (size_t)hp->v_head;
    /* mla_t: q_lora rows, the compressed KV part, q_nope and latent
     * outputs; mla_u: absorbed queries and value outputs */
    size_t t = R > dn ? R : dn, u = R > dv ? R : dv;
    if ((size_t)hp->q_lora_rank > t)
      t = (size_t)hp->q_lora_rank;
    if ((st = seq_alloc(be, (void **)&s->mla_q,
                        B * H * (dn + (size_t)hp->n_rot) * 4)) ||
        (st = seq_alloc(be, (void **)&s->mla_t, B * t * 4)) ||
        (st = seq_alloc(be, (void **)&s->mla_u, B * u * 4)) ||
        (st = seq_alloc(be, (void **)&s->mla_o, B * H * dv * 4)))
      goto fail;
  }
  s->pos_host = host_buf(be, B * sizeof *s->pos_host, &s->pos_pinned);
  s->ids_host = host_buf(be, B * sizeof *s->ids_host, &s->ids_pinned);
  if (!s->pos_host || !s->ids_host)
    goto fail;
  s->logits_cap_rows = 1;
  s->logits_dev_rows = 1;
  s->top_row = -1;
  s->logits = host_buf(be, (size_t)hp->n_vocab * 4, &s->logits_pinned);
  if (!s->logits)
    goto fail;
  *out = s;
  return DQ_OK;
fail:
  st = dq_error_set(&m->err, DQ_ERR_NOMEM,
                    "cannot allocate a sequence of %d tokens (batch %d)",
                    n_ctx, s->n_batch);
fail_quiet:
  dq_seq_free(s);
  return st;
}

dq_status dq_seq_new(dq_model *m, int n_ctx, dq_seq **out) {
  return seq_create(m, n_ctx, NULL, out);
}

dq_status dq_seq_new_gsm(dq_model *m, int n_ctx, const dq_gsm_opts *o,
                         dq_seq **out) {
  *out = NULL;
  if (!m || !o)
    return DQ_ERR_ARG;
  /* rows on the device: the parts of GSM that rewrite rows on the host
   * are the cpu backend's (gsm.h) */
  int dev = !dq_backend_cpu_caps(m->be) || o->device_rows;
  const char *why = o->enabled && dev
                        ? dq_gsm_dev_refusal(m->be, o,
                                             m->opts.kv_type == DQ_KV_Q8_0)
                        : NULL;
  if (why)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED, "GSM on %s: %s",
                        be_name(m->be), why);
  if (o->enabled && (o->chunk_size < 1 || o->min_tokens < 0 ||
                     o->window_size < 1 || o->n_pinned < 0))
    return dq_error_set(&m->err, DQ_ERR_ARG,
                        "GSM options: chunk_size %d, min_tokens %d, "
                        "window_size %d out of range",
                        o->chunk_size, o->min_tokens, o->window_size);
  if (o->enabled && (o->cache_type < DQ_KV_F16 || o->cache_type > DQ_KV_F32))
    return dq_error_set(&m->err, DQ_ERR_ARG, "GSM cache type %d out of range",
                        o->cache_type);
  if (o->enabled && o->cache_positions == DQ_GSM_POS_CACHE && m->hp.mla)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "GSM cache positions are not supported with latent "
                        "attention (%s): use sparse_attention.positions: "
                        "original",
                        m->hp.arch_name);
  return seq_create(m, n_ctx, o, out);
}

void dq_seq_free(dq_seq *s) {
  if (!s)
    return;
  dq_backend *be = s->m->be;
  void *bufs[] = {s->x,        s->xb,      s->q,       s->att,
                  s->k,        s->v,       s->hb,      s->hb2,
                  s->ids,      s->pos,     s->logits_dev, s->stats,
                  s->moe_logits, s->moe_ids, s->moe_w, s->moe_out,
                  s->moe_g,    s->moe_load, s->mla_q,  s->mla_t,
                  s->mla_u,    s->mla_o,    s->top_pen_dev, s->top_out_dev};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    if (bufs[i])
      be->i.buf_free(be->ctx, bufs[i]);
  dq_kv_free(&s->kv, be);
  dq_gsm_free(s->gsm);
  free(s->gsm_pins);
  host_buf_free(be, s->pos_host, s->pos_pinned);
  host_buf_free(be, s->ids_host, s->ids_pinned);
  if (s->qstats)
    be->i.buf_free(be->ctx, s->qstats);
  free(s->qstats_host);
  host_buf_free(be, s->logits, s->logits_pinned);
  if (s->top_pen_host)
    host_buf_free(be, s->top_pen_host, s->top_pen_pinned);
  if (s->top_out_host)
    host_buf_free(be, s->top_out_host, s->top_out_pinned);
  free(s->stats_host);
  free(s->moe_load_host);
  free(s);
}

const char *dq_seq_errmsg(const dq_seq *s) {
  return s ? dq_error_msg(&s->err) : "no sequence";
}
int dq_seq_n_past(const dq_seq *s) { return s ? s->n_past : 0; }
int dq_seq_n_ctx(const dq_seq *s) { return s ? s->n_ctx : 0; }

const float *dq_seq_logits(const dq_seq *s, int *n_rows) {
  if (n_rows)
    *n_rows = s ? s->n_logit_rows : 0;
  return s && s->n_logit_rows ? s->logits : NULL;
}

/* Room for n entries in a pair of top-k buffers (device and host). */
static dq_status top_reserve(dq_seq *s, int n, int32_t **dev, int32_t **host,
                             int *cap, int *pinned) {
  if (n <= *cap)
    return DQ_OK;
  dq_backend *be = s->m->be;
  int want = n < 64 ? 64 : n;
  int32_t *d = NULL, *h;
  int pin;
  if (seq_alloc(be, (void **)&d, (size_t)want * 4))
    return DQ_ERR_NOMEM;
  if (!(h = host_buf(be, (size_t)want * 4, &pin))) {
    be->i.buf_free(be->ctx, d);
    return DQ_ERR_NOMEM;
  }
  if (*dev)
    be->i.buf_free(be->ctx, *dev);
  if (*host)
    host_buf_free(be, *host, *pinned);
  *dev = d;
  *host = h;
  *cap = want;
  *pinned = pin;
  return DQ_OK;
}

/* The backend's selection (backend.h top_k) into ids/vals: DQ_OK, or
 * DQ_ERR_UNSUPPORTED when it has none or could not take this row (the
 * caller selects on the host), or a device failure. pen: n_pen ascending
 * distinct ids in s->top_pen_host. */
static dq_status top_k_backend(dq_seq *s, const float *row, int n_pen,
                               float penalty, int k, int32_t *ids,
                               float *vals) {
  dq_backend *be = s->m->be;
  void *c = be->ctx;
  if (!be->i.top_k)
    return DQ_ERR_UNSUPPORTED;
  if (top_reserve(s, 1 + 2 * k, &s->top_out_dev, &s->top_out_host,
                  &s->top_out_cap, &s->top_out_pinned))
    return DQ_ERR_NOMEM;
  dq_status st = DQ_OK;
  if (n_pen) {
    int async = be->i.upload_async && s->top_pen_pinned;
    st = (async ? be->i.upload_async : be->i.upload)(
        c, s->top_pen_dev, s->top_pen_host, (size_t)n_pen * 4);
  }
  if (!st)
    st = be->i.top_k(c, row, (int)s->m->hp.n_vocab, s->top_pen_dev, n_pen,
                     penalty, k, s->top_out_dev);
  if (!st)
    st = be->i.download(c, s->top_out_host, s->top_out_dev,
                        (size_t)(1 + 2 * k) * 4);
  if (st)
    return st;
  const int32_t *o = s->top_out_host;
  if (o[0] != k)
    return DQ_ERR_UNSUPPORTED;
  memcpy(ids, o + 1, (size_t)k * 4);
  memcpy(vals, o + 1 + k, (size_t)k * 4);
  return DQ_OK;
}

dq_status dq_seq_top_k(dq_seq *s, int k, const int32_t *pen, int n_pen,
                       float penalty, int32_t *ids, float *vals) {
  if (!s)
    return DQ_ERR_ARG;
  int nv = (int)s->m->hp.n_vocab;
  if (s->top_row < 0)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "no logits to select from: evaluate a token with "
                        "logits first");
  if (k < 1 || k > nv || !ids || !vals || n_pen < 0 || (n_pen && !pen) ||
      !(penalty > 0))
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "top-k of %d from %d logits (penalty %g over %d "
                        "tokens)",
                        k, nv, (double)penalty, n_pen);
  if (penalty == 1.0f)
    n_pen = 0;
  /* the penalty's tokens: in the vocabulary, ascending, each once */
  if (top_reserve(s, n_pen, &s->top_pen_dev, &s->top_pen_host,
                  &s->top_pen_cap, &s->top_pen_pinned))
    return dq_error_set(&s->err, DQ_ERR_NOMEM, "top-k: out of memory");
  if (n_pen)
    memcpy(s->top_pen_host, pen, (size_t)n_pen * 4);
  n_pen = dq_top_k_pen(s->top_pen_host, n_pen, nv);
  const float *row = s->logits_dev + (size_t)s->top_row * nv;
  dq_status st = top_k_backend(s, row, n_pen, penalty, k, ids, vals);
  if (st != DQ_ERR_UNSUPPORTED) {
    if (st)
      return dq_error_set(&s->err, st, "top-k selection failed: %s",
                          be_why(s->m->be, st));
    return DQ_OK;
  }
  /* on the host: the row is the host copy's last, or read back */
  const float *h;
  if (s->n_logit_rows) {
    h = s->logits + (size_t)(s->n_logit_rows - 1) * nv;
  } else {
    if ((st = s->m->be->i.download(s->m->be->ctx, s->logits, row,
                                   (size_t)nv * 4)))
      return dq_error_set(&s->err, st, "cannot read logits back");
    h = s->logits;
  }
  if ((st = dq_top_k(h, nv, s->top_pen_host, n_pen, penalty, k, NULL, ids,
                     vals)))
    return dq_error_set(&s->err, st, "top-k of %d: out of memory", k);
  return DQ_OK;
}

dq_status dq_seq_truncate(dq_seq *s, int n_past) {
  if (!s)
    return DQ_ERR_ARG;
  if (n_past < 0 || n_past > s->n_past)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "truncate to %d: the sequence holds %d tokens", n_past,
                        s->n_past);
  if (s->gsm && n_past != s->n_past)
    return dq_error_set(&s->err, DQ_ERR_UNSUPPORTED,
                        "truncate to %d: the sequence runs on GSM attention "
                        "(evicted tokens cannot be restored)",
                        n_past);
  s->n_past = n_past;
  return DQ_OK;
}

/* Uploads the positions n_past.. of the next n (<= n_batch) rows. */
static dq_status upload_pos(dq_seq *s, int n) {
  int32_t *posh = s->pos_host;
  for (int t = 0; t < n; t++)
    posh[t] = s->n_past + t;
  return s->m->be->i.upload(s->m->be->ctx, s->pos, posh, (size_t)n * 4);
}

/* Token embeddings of the n (<= n_batch) token ids already in s->ids
 * into x (n rows of n_embd). */
static dq_status embed_rows(dq_seq *s, int n, float *x) {
  dq_model *m = s->m;
  const dq_backend_i *B = &m->be->i;
  void *c = m->be->ctx;
  dq_status st = B->get_rows(c, &m->w.tok_embd, s->ids, n, x);
  if (!st && m->hp.embd_scale != 1.0f)
    B->scale(c, x, m->hp.embd_scale, (size_t)n * m->hp.n_embd);
  return st;
}

/* Token embeddings of n (<= n_batch) tokens into x. */
static dq_status embed(dq_seq *s, const int32_t *tokens, int n, float *x) {
  dq_status st = s->m->be->i.upload(s->m->be->ctx, s->ids, tokens,
                                    (size_t)n * 4);
  return st ? st : embed_rows(s, n, x);
}

/* The store type of a full-attention cache's keys (F16: panels). */
static int key_store(const dq_seq *s) {
  return s->kv.store == DQ_STORE_F16 ? DQ_STORE_F16P : s->kv.store;
}

/* Attention of layer il over its cache (full, or GSM once the sequence
 * runs on it) for n query rows q (n_head x head_dim each) whose new key
 * and value rows k, v (n_head_kv x head_dim) are stored first, unless
 * `stored` (rope_store has, full attention only); output rows into
 * s->att. */
static dq_status attend(dq_seq *s, int il, const float *q, const float *k,
                        const float *v, int n, int stored) {
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  const dq_layer *L = &m->w.layers[il];
  const dq_backend_i *B = &m->be->i;
  void *c = m->be->ctx;
  int nkv = hp->n_head_kv * hp->head_dim;
  if (s->gsm) {
    /* GSM path: rows on the host (CPU) or in device buffers (gsm.h) */
    dq_status st = dq_gsm_attend(s->gsm, il, q, k, v, n, s->n_past, s->att);
    if (!st)
      dq_gsm_compress(s->gsm, il, s->n_past + n, s->gsm_window);
    return st;
  }
  if (!stored) {
    B->kv_store(c, s->kv.k[il], key_store(s), s->n_past, k, n, nkv);
    B->kv_store(c, s->kv.v[il], s->kv.store, s->n_past, v, n, nkv);
  }
  dq_attn a = {
      .q = q, .k = s->kv.k[il], .v = s->kv.v[il], .store = s->kv.store,
      .n_tok = n, .pos0 = s->n_past, .n_kv = s->n_past + n,
      .n_head = hp->n_head, .n_head_kv = hp->n_head_kv,
      .head_dim = hp->head_dim, .causal = 1,
      .window = L->is_swa ? hp->window : 0, .scale = hp->attn_scale,
      .out = s->att};
  if (s->stats) {
    a.stats = s->stats + (size_t)il * hp->n_head * s->n_ctx;
    a.stats_stride = s->n_ctx;
    a.stats_q0 = s->stats_q0;
    a.stats_q1 = s->stats_q1;
  }
  if (s->qstats && s->gsm_opts.n_pinned > 0 && !L->is_swa) {
    /* each token's mass on the pinned question (recall.c), as GSM counts
     * it: not in sliding-window layers, nor on the sinks (GSM's first
     * n_sink tokens are sinks, pinned or not) */
    a.qmass = s->qstats + ((size_t)il * hp->n_head * s->n_ctx + s->n_past);
    a.qmass_stride = s->n_ctx;
    a.qmass_lo = s->gsm_pins[0] > s->gsm_opts.n_sink ? s->gsm_pins[0]
                                                     : s->gsm_opts.n_sink;
    a.qmass_hi = s->gsm_pins[1];
  }
  return B->attention(c, &a);
}

/* Multi-head latent attention (deepseek2) of n normed rows s->xb, output
 * projection input left in s->mla_o. Per token the cache holds one row
 * [c, k_pe]: c the normalised compressed KV (kv_lora_rank), k_pe the shared
 * RoPE key; it serves as key and value of a single KV head. Head h's query
 * is [W_uk,h^T q_nope,h, rope(q_pe,h)], so its score against a row equals
 * q_nope . (W_uk c) + q_pe . k_pe, the scores of the uncompressed form; its
 * output's first kv_lora_rank entries, through W_uv,h, give the head's
 * value. */
static dq_status attn_mla(dq_seq *s, int il, int n) {
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  const dq_layer *L = &m->w.layers[il];
  const dq_backend_i *B = &m->be->i;
  void *c = m->be->ctx;
  int H = hp->n_head, R = hp->kv_lora_rank, dr = hp->n_rot;
  int dn = hp->qk_nope, dv = hp->v_head, dq = dn + dr, dk = R + dr;
  dq_status st;
  if (L->wq_a.data) {
    if ((st = B->matmul(c, &L->wq_a, s->xb, s->mla_t, n)))
      return st;
    B->rmsnorm(c, s->mla_t, L->q_a_norm, s->mla_t, n, hp->q_lora_rank,
               hp->eps);
    st = B->matmul(c, &L->wq_b, s->mla_t, s->mla_q, n);
  } else {
    st = B->matmul(c, &L->wq, s->xb, s->mla_q, n);
  }
  if (st || (st = B->matmul(c, &L->wkv_a, s->xb, s->k, n)))
    return st;
  /* RoPE on the last dr entries of each query head and of the key row:
   * the rope op rotates the first n_rot entries of each head, so it is
   * pointed dn (R) entries in */
  B->rope(c, s->mla_q + dn, n, H, dq, s->pos, &hp->rope);
  B->rope(c, s->k + R, n, 1, dk, s->pos, &hp->rope);
  B->copy2d(c, s->mla_t, (size_t)R, s->k, (size_t)dk, n, R);
  B->rmsnorm(c, s->mla_t, L->kv_a_norm, s->mla_t, n, R, hp->eps);
  B->copy2d(c, s->k, (size_t)dk, s->mla_t, (size_t)R, n, R);
  for (int h = 0; h < H; h++) {
    B->copy2d(c, s->mla_t, (size_t)dn, s->mla_q + (size_t)h * dq,
              (size_t)H * dq, n, dn);
    if ((st = B->matmul(c, &L->wk_b[h], s->mla_t, s->mla_u, n)))
      return st;
    B->copy2d(c, s->q + (size_t)h * dk, (size_t)H * dk, s->mla_u, (size_t)R,
              n, R);
    B->copy2d(c, s->q + (size_t)h * dk + R, (size_t)H * dk,
              s->mla_q + (size_t)h * dq + dn, (size_t)H * dq, n, dr);
  }
  if ((st = attend(s, il, s->q, s->k, s->k, n, 0)))
    return st;
  for (int h = 0; h < H; h++) {
    B->copy2d(c, s->mla_t, (size_t)R, s->att + (size_t)h * dk, (size_t)H * dk,
              n, R);
    if ((st = B->matmul(c, &L->wv_b[h], s->mla_t, s->mla_u, n)))
      return st;
    B->copy2d(c, s->mla_o + (size_t)h * dv, (size_t)H * dv, s->mla_u,
              (size_t)dv, n, dv);
  }
  return DQ_OK;
}

/* Mixture-of-experts feed-forward of n normed rows s->xb into s->xb:
 * router logits, routing (backend moe_route, counting expert load when
 * statistics are on), the routed experts (moe_ffn), plus the shared
 * expert, gated by sigmoid(sh_inp . x) where the model has that gate. */
static dq_status ffn_moe(dq_seq *s, int il, int n) {
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  const dq_layer *L = &m->w.layers[il];
  const dq_backend_i *B = &m->be->i;
  void *c = m->be->ctx;
  int E = hp->n_embd;
  dq_status st;
  if ((st = B->matmul(c, &L->router, s->xb, s->moe_logits, n)))
    return st;
  dq_moe_route r = {.cfg = hp->moe, .logits = s->moe_logits,
                    .bias = L->router_bias, .n_tok = n, .ids = s->moe_ids,
                    .w = s->moe_w};
  if (s->moe_load)
    r.load = s->moe_load + (size_t)il * 2 * hp->n_expert;
  dq_moe_ffn f = {.x = s->xb, .n_tok = n, .ids = s->moe_ids, .w = s->moe_w,
                  .n_used = hp->moe.n_used, .n_expert = hp->n_expert,
                  .gate = &L->exp_gate, .up = &L->exp_up,
                  .down = &L->exp_down, .gate_stride = L->exp_gu_stride,
                  .up_stride = L->exp_gu_stride, .act = hp->ffn_act,
                  .out = s->moe_out};
  if ((st = B->moe_route(c, &r)) || (st = B->moe_ffn(c, &f)))
    return st;
  if (L->sh_up.data) {
    int S = hp->n_ff_shexp;
    if ((st = B->matmul(c, &L->sh_gate, s->xb, s->hb, n)) ||
        (st = B->matmul(c, &L->sh_up, s->xb, s->hb2, n)))
      return st;
    B->glu(c, s->hb, s->hb2, (size_t)n * S, hp->ffn_act);
    if (L->sh_inp.data &&
        (st = B->matmul(c, &L->sh_inp, s->xb, s->moe_g, n)))
      return st;
    if ((st = B->matmul(c, &L->sh_down, s->hb, s->xb, n)))
      return st;
    if (L->sh_inp.data)
      B->gate_rows(c, s->xb, s->moe_g, n, E);
    B->add(c, s->xb, s->moe_out, (size_t)n * E);
  } else {
    B->copy2d(c, s->xb, (size_t)n * E, s->moe_out, (size_t)n * E, 1, n * E);
  }
  return DQ_OK;
}

/* x += norm(W h) for the n rows of h (the block's output projection into
 * the residual stream; post_norm may be NULL): one fused product where the
 * backend has it and there is no norm between. */
static dq_status out_add(dq_seq *s, const dq_wmat *w, const float *h,
                         float *x, const float *post_norm, int n) {
  const dq_backend_i *B = &s->m->be->i;
  void *c = s->m->be->ctx;
  const int E = s->m->hp.n_embd;
  if (!post_norm && B->matmul_add && !s->m->no_fused)
    return B->matmul_add(c, w, h, x, n);
  dq_status st = B->matmul(c, w, h, s->xb, n);
  if (st)
    return st;
  if (post_norm)
    B->rmsnorm(c, s->xb, post_norm, s->xb, n, E, s->m->hp.eps);
  B->add(c, x, s->xb, (size_t)n * E);
  return DQ_OK;
}

/* Layers [l0, l1) over the residual stream x (n <= n_batch rows at positions
 * s->n_past.., already uploaded), in place. Each layer writes its K/V rows
 * for those positions; a layer's rows depend only on the layers below it,
 * which is what lets early exit (speculate.c) run the lower and the upper
 * layers of a token in separate calls. */
static dq_status run_layers(dq_seq *s, float *x, int n, int l0, int l1) {
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  dq_backend *be = m->be;
  const dq_backend_i *B = &be->i;
  void *c = be->ctx;
  int E = hp->n_embd, HD = hp->head_dim;
  int nq = hp->n_head * HD, nkv = hp->n_head_kv * HD;
  dq_status st;
  for (int il = l0; il < l1; il++) {
    const dq_layer *L = &m->w.layers[il];
    const dq_rope_params *rope = L->is_swa ? &hp->rope_local : &hp->rope;
    /* attention block */
    B->rmsnorm(c, x, L->attn_norm, s->xb, n, E, hp->eps);
    const float *attn_out = s->att;
    if (hp->mla) {
      if ((st = attn_mla(s, il, n)))
        return st;
      attn_out = s->mla_o;
      goto attn_done;
    }
    if (B->matmul_n && !m->no_fused) { /* the same values, one call */
      const dq_wmat *w3[3] = {&L->wq, &L->wk, &L->wv};
      float *y3[3] = {s->q, s->k, s->v};
      if ((st = B->matmul_n(c, w3, 3, s->xb, y3, n)))
        return st;
    } else if ((st = B->matmul(c, &L->wq, s->xb, s->q, n)) ||
               (st = B->matmul(c, &L->wk, s->xb, s->k, n)) ||
               (st = B->matmul(c, &L->wv, s->xb, s->v, n)))
      return st;
    if (L->bq) {
      B->add_row(c, s->q, L->bq, n, nq);
      B->add_row(c, s->k, L->bk, n, nkv);
      B->add_row(c, s->v, L->bv, n, nkv);
    }
    if (L->q_norm && hp->qk_norm_full) {
      B->rmsnorm(c, s->q, L->q_norm, s->q, n, nq, hp->eps);
      B->rmsnorm(c, s->k, L->k_norm, s->k, n, nkv, hp->eps);
    } else if (L->q_norm) {
      B->rmsnorm(c, s->q, L->q_norm, s->q, n * hp->n_head, HD, hp->eps);
      B->rmsnorm(c, s->k, L->k_norm, s->k, n * hp->n_head_kv, HD, hp->eps);
    }
    int stored = 0;
    if (!s->gsm && B->rope_store && !m->no_fused) {
      /* full attention: rotated and cached in one call, the same bytes */
      dq_rope_store rs = {
          .q = s->q, .k = s->k, .v = s->v, .n_tok = n,
          .n_head = hp->n_head, .n_head_kv = hp->n_head_kv, .head_dim = HD,
          .pos = s->pos, .rope = rope, .k_cache = s->kv.k[il],
          .v_cache = s->kv.v[il], .store_k = key_store(s),
          .store_v = s->kv.store, .row0 = s->n_past};
      B->rope_store(c, &rs);
      stored = 1;
    } else if (!(s->gsm &&
                 s->gsm_opts.cache_positions == DQ_GSM_POS_CACHE &&
                 !L->is_swa)) {
      /* cache positions: GSM rotates queries and keys at their cache
       * index */
      if (B->rope_qk && !m->no_fused)
        B->rope_qk(c, s->q, s->k, n, hp->n_head, hp->n_head_kv, HD, s->pos,
                   rope);
      else {
        B->rope(c, s->q, n, hp->n_head, HD, s->pos, rope);
        B->rope(c, s->k, n, hp->n_head_kv, HD, s->pos, rope);
      }
    }
    if ((st = attend(s, il, s->q, s->k, s->v, n, stored)))
      return st;
  attn_done:
    if ((st = out_add(s, &L->wo, attn_out, x, L->post_attn_norm, n)))
      return st;
    /* feed-forward block */
    B->rmsnorm(c, x, L->ffn_norm, s->xb, n, E, hp->eps);
    if (L->moe) {
      if ((st = ffn_moe(s, il, n)))
        return st;
      if (L->post_ffw_norm)
        B->rmsnorm(c, s->xb, L->post_ffw_norm, s->xb, n, E, hp->eps);
      B->add(c, x, s->xb, (size_t)n * E);
      continue;
    }
    if (B->matmul_glu && !m->no_fused) { /* the same values, one call */
      if ((st = B->matmul_glu(c, &L->ffn_gate, &L->ffn_up, s->xb, s->hb,
                              s->hb2, n, hp->ffn_act)))
        return st;
    } else {
      if ((st = B->matmul(c, &L->ffn_gate, s->xb, s->hb, n)) ||
          (st = B->matmul(c, &L->ffn_up, s->xb, s->hb2, n)))
        return st;
      B->glu(c, s->hb, s->hb2, (size_t)n * hp->n_ff, hp->ffn_act);
    }
    if ((st = out_add(s, &L->ffn_down, s->hb, x, L->post_ffw_norm, n)))
      return st;
  }
  return DQ_OK;
}

/* Final norm and output head w (the model's, or early exit's rows of it)
 * over the n rows of x into logits_dev (n <= logits_dev_rows); queued,
 * not waited for. */
static dq_status head_ops(dq_seq *s, const dq_wmat *w, const float *x, int n) {
  dq_model *m = s->m;
  const dq_backend_i *B = &m->be->i;
  void *c = m->be->ctx;
  B->rmsnorm(c, x, m->w.output_norm, s->xb, n, m->hp.n_embd, m->hp.eps);
  return B->matmul(c, w, s->xb, s->logits_dev, n);
}

/* head_ops, then waits for the backend. */
static dq_status head_w(dq_seq *s, const dq_wmat *w, const float *x, int n) {
  dq_status st = head_ops(s, w, x, n);
  return st ? st : be_sync(s->m->be);
}

/* Inputs copied without waiting (backend.h upload_async): from the
 * sequence's page-locked pos_host / ids_host, or on a backend without
 * page-locked memory whose copies run as queued (the CPU's). */
static int async_inputs(const dq_seq *s) {
  const dq_backend_i *B = &s->m->be->i;
  return B->upload_async &&
         ((s->pos_pinned && s->ids_pinned) || !B->host_alloc);
}

/* The ops of a batch: its positions and ids (async: queued from pos_host
 * and ids_host; else already uploaded), embeddings, layers, and the head
 * from row logits_from on; queued, not waited for. */
static dq_status batch_ops(dq_seq *s, int n, int logits_from, int async) {
  const dq_hparams *hp = &s->m->hp;
  const dq_backend_i *B = &s->m->be->i;
  void *c = s->m->be->ctx;
  dq_status st;
  int n_run = s->layer_stop > 0 && s->layer_stop < hp->n_layer
                  ? s->layer_stop
                  : hp->n_layer;
  if (async &&
      ((st = B->upload_async(c, s->pos, s->pos_host, (size_t)n * 4)) ||
       (st = B->upload_async(c, s->ids, s->ids_host, (size_t)n * 4))))
    return st;
  if ((st = embed_rows(s, n, s->x)) || (st = run_layers(s, s->x, n, 0, n_run)))
    return st;
  if (logits_from < n)
    return head_ops(s, &s->m->w.output,
                    s->x + (size_t)logits_from * hp->n_embd, n - logits_from);
  return DQ_OK;
}

/* A decode step the backend can run as one graph (backend.h graph_begin):
 * one token, on full attention or on GSM with its rows on the device
 * (dq_gsm_graph_step runs the waits and copies the step's attends would
 * make first; the step's bookkeeping on the host then runs while it is
 * recorded, and is undone when the recording fails). Not with attention /
 * question / expert statistics (read back between evals, written at
 * n_past; kept simple). *st: the GSM preparation's failure. */
static int graph_step(dq_seq *s, int n, dq_status *st) {
  *st = DQ_OK;
  if (s->m->graph_mode == DQ_GRAPHS_OFF || n != 1 || s->stats ||
      s->qstats || s->moe_load)
    return 0;
  if (!s->gsm)
    return 1;
  dq_status g = dq_gsm_graph_step(s->gsm, n);
  if (g != DQ_ERR_UNSUPPORTED)
    *st = g;
  return g == DQ_OK;
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* batch_ops recorded and launched as one graph; *ran = 0 when the
 * backend could not record it (nothing ran: the caller queues the ops
 * directly). A recording the backend gave up on is logged once. */
static dq_status batch_graph(dq_seq *s, int n, int logits_from, int async,
                             int *ran) {
  dq_model *m = s->m;
  const dq_backend_i *B = &m->be->i;
  void *c = m->be->ctx;
  *ran = 0;
  dq_status st = B->graph_begin(c);
  if (!st) {
    dq_status ops = batch_ops(s, n, logits_from, async);
    st = B->graph_end(c, ops != DQ_OK, ran);
    if (!st && !*ran && s->gsm) /* the step runs again op by op */
      dq_gsm_graph_undo(s->gsm);
  } else if (st == DQ_ERR_UNSUPPORTED) {
    st = DQ_OK;
  }
  if (st || *ran)
    return st;
  dq_graph_stats gs;
  B->graph_stats(c, &gs);
  if (gs.off_reason) {
    m->graph_mode = DQ_GRAPHS_OFF;
    dq_log(m->log, DQ_LOG_WARN,
           "cuda graphs off, decode steps run op by op: %s", gs.off_reason);
  }
  return DQ_OK;
}

/* One batch of n <= n_batch tokens at positions s->n_past... A decode
 * step that can run as a graph does so when the mode says (auto: as
 * graph_tune chose, its time recorded). */
static dq_status decode_batch(dq_seq *s, const int32_t *tokens, int n,
                              int logits_from) {
  dq_model *m = s->m;
  dq_backend *be = m->be;
  dq_status st;
  int can = graph_step(s, n, &st);
  if (st)
    return st;
  int tune = can && m->graph_mode == DQ_GRAPHS_AUTO;
  int want = can && (!tune || dq_graph_tune_next(&m->gtune));
  double t0 = tune ? seconds_now() : 0;
  int async = async_inputs(s);
  if (async) { /* copied by the batch's ops (in a graph: by the graph) */
    for (int t = 0; t < n; t++)
      s->pos_host[t] = s->n_past + t;
    memcpy(s->ids_host, tokens, (size_t)n * 4);
  } else if ((st = upload_pos(s, n)) ||
             (st = be->i.upload(be->ctx, s->ids, tokens, (size_t)n * 4))) {
    return st;
  }
  int ran = 0;
  if (want && (st = batch_graph(s, n, logits_from, async, &ran)))
    return st;
  if (!ran && (st = batch_ops(s, n, logits_from, async)))
    return st;
  if ((st = be_sync(be)))
    return st;
  /* a step whose recording failed ran twice as long: not a measurement */
  if (tune && ran == want && m->graph_mode == DQ_GRAPHS_AUTO)
    dq_graph_tune_record(&m->gtune, ran, seconds_now() - t0);
  return DQ_OK;
}

/* One cached row of a full-cache layer as f32 (migration to GSM); keys of
 * an F16 cache are in panels (backend.h). */
static void kv_row_f32(const dq_kv *kv, const void *buf, int is_key, int row,
                       float *dst) {
  const uint8_t *r = (const uint8_t *)buf + (size_t)row * kv->row_bytes;
  if (kv->store == DQ_STORE_F16 && is_key) {
    const dq_f16 *p = (const dq_f16 *)buf +
                      (size_t)(row / 16) * (size_t)kv->row_elems * 16 +
                      (size_t)(row % 16);
    for (int i = 0; i < kv->row_elems; i++)
      dst[i] = dq_f16_to_f32(p[(size_t)i * 16]);
  } else if (kv->store == DQ_STORE_F32) {
    memcpy(dst, r, (size_t)kv->row_elems * 4);
  } else if (kv->store == DQ_STORE_F16) {
    for (int i = 0; i < kv->row_elems; i++) {
      uint16_t h;
      memcpy(&h, r + 2 * i, 2);
      dst[i] = dq_f16_to_f32(h);
    }
  } else { /* Q8_0: blocks of 32, f16 scale + 32 int8 */
    for (int b = 0; b < kv->row_elems / 32; b++, r += 34) {
      uint16_t h;
      memcpy(&h, r, 2);
      float d = dq_f16_to_f32(h);
      for (int i = 0; i < 32; i++)
        dst[b * 32 + i] = (float)(int8_t)r[2 + i] * d;
    }
  }
}

/* Moves the sequence onto the GSM path: builds the GSM cache, copies the
 * full cache's n_past rows into it (zero accumulated scores), compresses,
 * and frees the full cache. */
static dq_status gsm_start(dq_seq *s) {
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  int *win = calloc((size_t)hp->n_layer, sizeof *win);
  float *kb = NULL, *vb = NULL;
  dq_status st = DQ_ERR_NOMEM;
  if (!win)
    goto fail;
  for (int l = 0; l < hp->n_layer; l++)
    win[l] = m->w.layers[l].is_swa ? hp->window : 0;
  /* the GSM cache's own type (kv_compress.cache_type); Q8_0 only where the
   * attention kernel's 8-bit path takes the head size (else its rows would
   * be converted on every attend: F16 instead, and the log says so).
   * Device rows keep the full cache's type: its rows are copied over as
   * they are, and the device attention reads every KV type. */
  int store = s->gsm_opts.cache_type == DQ_KV_F32 ? DQ_STORE_F32
              : s->gsm_opts.cache_type == DQ_KV_Q8_0 ? DQ_STORE_Q8_0
                                                     : DQ_STORE_F16;
  if (s->gsm_dev) {
    if (store != s->kv.store)
      dq_log(m->log, DQ_LOG_INFO,
             "GSM cache on %s: the sequence's KV type (kv_compress."
             "cache_type applies to the cpu backend)",
             be_name(m->be));
    store = s->kv.store;
  } else if (store == DQ_STORE_Q8_0 &&
             (hp->head_dim % 32 || hp->head_dim > DQ_ATTN_Q8_HD_MAX)) {
    dq_log(m->log, DQ_LOG_INFO,
           "GSM cache: f16 (the 8-bit cache needs a head size that is a "
           "multiple of 32, at most %d; this model's is %d)",
           DQ_ATTN_Q8_HD_MAX, hp->head_dim);
    store = DQ_STORE_F16;
  }
  dq_gsm_cfg cfg = {.n_layer = hp->n_layer, .n_head = hp->n_head,
                    .n_head_kv = hp->n_head_kv, .head_dim = hp->head_dim,
                    .scale = hp->attn_scale, .n_threads = m->opts.n_threads,
                    .store = store,
                    .max_chunk = s->n_batch, .extra_rows = s->n_past,
                    .layer_window = win, .o = s->gsm_opts,
                    .caps = dq_backend_cpu_caps(m->be),
                    .rope = &hp->rope, .rope_fn = m->be->i.rope,
                    .pos_limit = hp->n_ctx_train,
                    .rope_ctx = m->be->ctx,
                    .dev = s->gsm_dev ? m->be : NULL};
  if (cfg.n_threads <= 0) {
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    cfg.n_threads = nc > 0 ? (int)nc : 1;
  }
  if ((st = dq_gsm_new(&cfg, &s->gsm, &s->err)))
    goto fail;
  if (s->gsm_dev) { /* the rows move on the device */
    for (int l = 0; l < hp->n_layer && s->n_past > 0; l++) {
      if ((st = dq_gsm_adopt(s->gsm, l, s->kv.k[l], s->kv.v[l], s->n_past)))
        goto fail;
      dq_gsm_compress(s->gsm, l, s->n_past, s->gsm_window);
    }
    if ((st = dq_gsm_flush(s->gsm)) || (st = be_sync(m->be)))
      goto fail;
  } else if (s->n_past > 0) {
    size_t re = (size_t)s->kv.row_elems, np = (size_t)s->n_past;
    kb = malloc(np * re * sizeof(float));
    vb = malloc(np * re * sizeof(float));
    st = DQ_ERR_NOMEM;
    if (!kb || !vb)
      goto fail;
    for (int l = 0; l < hp->n_layer; l++) {
      for (int r = 0; r < s->n_past; r++) {
        kv_row_f32(&s->kv, s->kv.k[l], 1, r, kb + r * re);
        kv_row_f32(&s->kv, s->kv.v[l], 0, r, vb + r * re);
      }
      if (!m->w.layers[l].is_swa) /* cache positions: keys un-rotated */
        dq_gsm_unrotate(s->gsm, kb, s->n_past, 0);
      if ((st = dq_gsm_append(s->gsm, l, kb, vb, s->n_past, 0)))
        goto fail;
      dq_gsm_compress(s->gsm, l, s->n_past, s->gsm_window);
    }
  }
  dq_kv_free(&s->kv, m->be);
  if (s->stats) {
    s->gsm->track.stats = s->stats;
    s->gsm->track.stride = s->n_ctx;
    s->gsm->track.q0 = s->stats_q0;
    s->gsm->track.q1 = s->stats_q1;
  }
  s->gsm->track.qstats = s->qstats;
  if (s->gsm->track.qstats)
    s->gsm->track.stride = s->n_ctx;
  free(win);
  free(kb);
  free(vb);
  return DQ_OK;
fail:
  dq_gsm_free(s->gsm);
  s->gsm = NULL;
  free(win);
  free(kb);
  free(vb);
  return dq_error_set(&s->err, st, "cannot start GSM attention: %s",
                      dq_status_str(st));
}

static void gsm_log(dq_seq *s, int n) {
  dq_model *m = s->m;
  if (s->gsm_logged || !s->has_gsm)
    return;
  if (!s->gsm) {
    dq_log(m->log, DQ_LOG_INFO,
           "attention: full (%d tokens < min_tokens %d)", s->n_past + n,
           s->gsm_opts.min_tokens);
    s->gsm_logged = 1; /* logged again when GSM starts */
    return;
  }
  dq_gsm_stats st;
  dq_seq_gsm_stats(s, &st);
  dq_log(m->log, DQ_LOG_INFO,
         "attention: gsm (window %d, sinks %d, anchors %d, pinned %d tokens, "
         "memory <= %d slots, %s, %d fixed + %d dynamic + %d sliding layers, "
         "chunk %d, %s positions, %s cache)",
         st.window, st.n_sink, st.n_anchors, st.n_pinned_tokens,
         s->gsm_opts.memory_slots,
         s->gsm_opts.strategy == DQ_GSM_MERGE_SCORE        ? "score"
         : s->gsm_opts.strategy == DQ_GSM_MERGE_TIME_DECAY ? "time_decay"
                                                           : "similarity",
         st.n_layer_fixed, st.n_layer_dynamic, st.n_layer_swa, s->n_batch,
         st.positions, st.cache_type);
  s->gsm_logged = 2;
}

void dq_seq_gsm_stats(const dq_seq *s, dq_gsm_stats *st) {
  memset(st, 0, sizeof *st);
  st->path = s && s->gsm ? "gsm" : "full";
  if (!s || !s->gsm)
    return;
  const dq_gsm *g = s->gsm;
  st->window = s->gsm_window;
  st->positions =
      s->gsm_opts.cache_positions == DQ_GSM_POS_CACHE ? "cache" : "original";
  st->n_sink = s->gsm_opts.n_sink;
  st->n_anchors = s->gsm_opts.num_global_anchors;
  st->n_pinned_tokens = g->n_pinned_tokens;
  st->memory_budget = g->memory_budget;
  st->n_chunks = g->n_chunks;
  st->cache_type = g->c.store == DQ_STORE_Q8_0 ? "q8_0"
                   : g->c.store == DQ_STORE_F32 ? "f32"
                                                : "f16";
  for (int l = 0; l < g->c.n_layer; l++) {
    const dq_gsm_layer *L = &g->layers[l];
    if (L->exact_window > 0)
      st->n_layer_swa++;
    else if (L->dynamic)
      st->n_layer_dynamic++;
    else
      st->n_layer_fixed++;
    if (L->n > st->max_entries)
      st->max_entries = L->n;
    st->n_evicted += L->n_evicted;
    st->n_merged += L->n_merged;
    st->n_renumbered += L->n_renumbered;
  }
  st->cache_bytes = dq_gsm_used_bytes(g);
  st->cache_bytes_alloc = dq_gsm_bytes(g);
  st->compress_ms = g->compress_ms;
}

dq_status dq_seq_track_question(dq_seq *s) {
  if (!s)
    return DQ_ERR_ARG;
  const dq_hparams *hp = &s->m->hp;
  if (s->gsm_opts.n_pinned > 1 &&
      (!s->has_gsm || s->gsm_opts.min_tokens > 0 || s->gsm_dev))
    return dq_error_set(&s->err, DQ_ERR_UNSUPPORTED,
                        "question statistics on full attention or device rows "
                        "count one pinned span, not %d",
                        s->gsm_opts.n_pinned);
  dq_backend *be = s->m->be;
  size_t n = (size_t)hp->n_layer * hp->n_head * s->n_ctx;
  if (!s->qstats && be->i.buf_alloc(be->ctx, n * 4, (void **)&s->qstats))
    return dq_error_set(&s->err, DQ_ERR_NOMEM,
                        "cannot allocate question statistics (%zu floats)", n);
  if (!s->qstats_host &&
      !(s->qstats_host = malloc((size_t)s->n_ctx * sizeof(float))))
    return dq_error_set(&s->err, DQ_ERR_NOMEM, "out of memory");
  if (s->gsm) {
    s->gsm->track.qstats = s->qstats;
    s->gsm->track.stride = s->n_ctx;
  }
  return DQ_OK;
}

/* Room for `rows` rows of logits on the host, and for one batch's share of
 * them (at most n_batch rows) on the device: grown only for DQ_LOGITS_ALL
 * and early exit. */
static dq_status logits_reserve(dq_seq *s, int rows) {
  const dq_hparams *hp = &s->m->hp;
  if (rows > s->logits_cap_rows) {
    /* the old rows are not kept (every eval writes its own); page-locked
     * up to 64 MiB (decode steps and short prompts), plain memory above */
    size_t nb = (size_t)rows * hp->n_vocab * 4;
    int pinned = 0;
    float *p = nb <= ((size_t)64 << 20) ? host_buf(s->m->be, nb, &pinned)
                                        : malloc(nb);
    if (!p)
      return dq_error_set(&s->err, DQ_ERR_NOMEM,
                          "cannot hold %d rows of logits", rows);
    host_buf_free(s->m->be, s->logits, s->logits_pinned);
    s->logits = p;
    s->logits_pinned = pinned;
    s->logits_cap_rows = rows;
  }
  int dev_rows = rows < s->n_batch ? rows : s->n_batch;
  if (dev_rows > s->logits_dev_rows) {
    dq_backend *be = s->m->be;
    void *p = NULL;
    if (be->i.buf_alloc(be->ctx, (size_t)dev_rows * hp->n_vocab * 4, &p))
      return dq_error_set(&s->err, DQ_ERR_NOMEM,
                          "cannot hold %d rows of logits on the device",
                          dev_rows);
    be->i.buf_free(be->ctx, s->logits_dev);
    s->logits_dev = p;
    s->logits_dev_rows = dev_rows;
  }
  return DQ_OK;
}

/* ---- early exit (speculate.c) -------------------------------------------- */

/* What the two early-exit calls share: a plain full-cache sequence with
 * room for n more positions and rows of logits. */
static dq_status exit_check(dq_seq *s, int n, int n_exit) {
  if (s->has_gsm || s->layer_stop || s->stats)
    return dq_error_set(&s->err, DQ_ERR_UNSUPPORTED,
                        "early exit runs on plain full-attention sequences "
                        "only");
  if (n_exit < 1 || n_exit >= s->m->hp.n_layer)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "early exit after layer %d of %d", n_exit,
                        s->m->hp.n_layer);
  if (n < 1 || n > s->n_batch)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "early exit over %d tokens (1..%d)", n, s->n_batch);
  if (n > s->n_ctx - s->n_past)
    return dq_error_set(&s->err, DQ_ERR_LIMIT,
                        "context overflow: %d cached + %d new tokens exceed "
                        "the context of %d",
                        s->n_past, n, s->n_ctx);
  return logits_reserve(s, n);
}

/* Downloads n rows of n_cols logits from logits_dev into the host logits. */
static dq_status exit_logits(dq_seq *s, int n, int64_t n_cols) {
  dq_model *m = s->m;
  dq_status st = m->be->i.download(m->be->ctx, s->logits, s->logits_dev,
                                   (size_t)n * n_cols * 4);
  if (st)
    return dq_error_set(&s->err, st, "cannot read logits back");
  s->n_logit_rows = n;
  return DQ_OK;
}

dq_status dq_seq_draft(dq_seq *s, int32_t token, int n_exit, float *x,
                       const dq_wmat *w) {
  dq_status st = exit_check(s, 1, n_exit);
  if (st)
    return st;
  if (w && (w->n_cols != s->m->hp.n_embd || w->n_rows < 1 ||
            w->n_rows > s->m->hp.n_vocab))
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "draft head of %lld x %lld", (long long)w->n_rows,
                        (long long)w->n_cols);
  if (token < 0 || token >= s->m->hp.n_vocab)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "token %d is outside the vocabulary (%d)", token,
                        s->m->hp.n_vocab);
  s->n_logit_rows = 0;
  s->top_row = -1;
  if ((st = upload_pos(s, 1)) || (st = embed(s, &token, 1, x)) ||
      (st = run_layers(s, x, 1, 0, n_exit)) ||
      (st = w ? head_w(s, w, x, 1) : be_sync(s->m->be)))
    return dq_error_set(&s->err, st, "draft pass failed at position %d: %s",
                        s->n_past, be_why(s->m->be, st));
  if (w && (st = exit_logits(s, 1, w->n_rows)))
    return st;
  s->n_past++;
  return DQ_OK;
}

dq_status dq_seq_finish(dq_seq *s, float *x, int n, int n_exit) {
  dq_status st = exit_check(s, n, n_exit);
  if (st)
    return st;
  s->n_logit_rows = 0;
  s->top_row = -1;
  if ((st = upload_pos(s, n)) ||
      (st = run_layers(s, x, n, n_exit, s->m->hp.n_layer)) ||
      (st = head_w(s, &s->m->w.output, x, n)))
    return dq_error_set(&s->err, st, "verify pass failed at position %d: %s",
                        s->n_past, be_why(s->m->be, st));
  if ((st = exit_logits(s, n, s->m->hp.n_vocab)))
    return st;
  s->n_past += n;
  return DQ_OK;
}

dq_status dq_seq_eval(dq_seq *s, const int32_t *tokens, int n,
                      dq_logits_mode mode) {
  if (!s)
    return DQ_ERR_ARG;
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  if (!tokens || n <= 0)
    return dq_error_set(&s->err, DQ_ERR_ARG, "empty input: nothing to evaluate");
  if (n > s->n_ctx - s->n_past)
    return dq_error_set(&s->err, DQ_ERR_LIMIT,
                        "context overflow: %d cached + %d new tokens exceed "
                        "the context of %d",
                        s->n_past, n, s->n_ctx);
  for (int i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
      return dq_error_set(&s->err, DQ_ERR_ARG,
                          "token %d at input position %d is outside the "
                          "vocabulary (%d)",
                          tokens[i], i, hp->n_vocab);
  if (mode < DQ_LOGITS_LAST || mode > DQ_LOGITS_SAMPLE)
    return dq_error_set(&s->err, DQ_ERR_ARG, "logits mode %d", (int)mode);
  int keep = mode != DQ_LOGITS_NONE; /* the last row on the device */
  int rows = mode == DQ_LOGITS_ALL ? n : keep;
  if (rows && s->layer_stop)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "this sequence stops after layer %d: no logits",
                        s->layer_stop);
  dq_status rst = logits_reserve(s, rows);
  if (rst)
    return rst;
  if (s->gsm_failed)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "an earlier GSM eval failed: the sequence cannot "
                        "continue");
  if (s->has_gsm) {
    float sc = n > 1 ? s->gsm_opts.encoder_window_scale
                     : s->gsm_opts.decoder_window_scale;
    s->gsm_window = (int)lroundf((float)s->gsm_opts.window_size * sc);
    if (s->gsm_window < 1)
      s->gsm_window = 1;
    if (!s->gsm && s->n_past + n > s->kv.n_ctx) {
      dq_status st = gsm_start(s);
      if (st)
        return st;
    }
    if (s->gsm_logged < 2 && (s->gsm || !s->gsm_logged))
      gsm_log(s, n);
  }
  int n_past0 = s->n_past;
  s->n_logit_rows = 0;
  s->top_row = -1;
  for (int done = 0; done < n;) {
    int nb = n - done < s->n_batch ? n - done : s->n_batch;
    int last = done + nb == n;
    int from = mode == DQ_LOGITS_ALL ? 0 : (keep && last) ? nb - 1 : nb;
    dq_status st = decode_batch(s, tokens + done, nb, from);
    if (st) {
      s->n_past = n_past0;
      s->top_row = -1;
      if (s->gsm) /* the GSM cache cannot be rolled back */
        s->gsm_failed = 1;
      return dq_error_set(&s->err, st, "forward pass failed at position %d: %s",
                          n_past0 + done, be_why(m->be, st));
    }
    if (last && keep)
      s->top_row = nb - 1 - from;
    if (from < nb && mode != DQ_LOGITS_SAMPLE) {
      size_t nbytes = (size_t)(nb - from) * hp->n_vocab * 4;
      st = m->be->i.download(m->be->ctx,
                             s->logits + (size_t)s->n_logit_rows * hp->n_vocab,
                             s->logits_dev, nbytes);
      if (st) {
        s->n_past = n_past0;
        s->top_row = -1;
        return dq_error_set(&s->err, st, "cannot read logits back");
      }
      s->n_logit_rows += nb - from;
    }
    s->n_past += nb;
    done += nb;
    /* device rows: the batch's scores come back, the cache is compressed
     * (the next batch's attends would do it first anyway) */
    if (s->gsm && (st = dq_gsm_flush(s->gsm))) {
      s->gsm_failed = 1;
      return dq_error_set(&s->err, st, "GSM compression failed at position "
                          "%d: %s", s->n_past, be_why(m->be, st));
    }
  }
  return DQ_OK;
}

/* ---- attention statistics ----------------------------------------------- */

dq_status dq_seq_stats_begin(dq_seq *s, int q_begin, int q_end) {
  if (!s)
    return DQ_ERR_ARG;
  if (q_begin < 0 || q_end < q_begin || q_end > s->n_ctx)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "statistics query range [%d, %d) outside the context "
                        "of %d",
                        q_begin, q_end, s->n_ctx);
  dq_backend *be = s->m->be;
  const dq_hparams *hp = &s->m->hp;
  size_t n = (size_t)hp->n_layer * hp->n_head * s->n_ctx;
  if (s->stats)
    be->i.buf_free(be->ctx, s->stats);
  s->stats = NULL;
  if (s->gsm)
    s->gsm->track.stats = NULL;
  if (be->i.buf_alloc(be->ctx, n * 4, (void **)&s->stats))
    return dq_error_set(&s->err, DQ_ERR_NOMEM,
                        "cannot allocate attention statistics (%zu floats)", n);
  if (!s->stats_host && !(s->stats_host = malloc((size_t)s->n_ctx * 4))) {
    dq_seq_stats_end(s);
    return dq_error_set(&s->err, DQ_ERR_NOMEM, "out of memory");
  }
  s->stats_q0 = q_begin;
  s->stats_q1 = q_end;
  if (s->gsm) {
    s->gsm->track.stats = s->stats;
    s->gsm->track.stride = s->n_ctx;
    s->gsm->track.q0 = q_begin;
    s->gsm->track.q1 = q_end;
  }
  return DQ_OK;
}

/* One (layer, head) row of a statistics buffer (n_layer x n_head x n_ctx
 * on the backend) read back into host, positions 0..n_past-1; what: the
 * statistics' name, how: the call that turns them on. */
static dq_status stats_row(dq_seq *s, const float *buf, float *host,
                           const char *what, const char *how, int layer,
                           int head, const float **row, int *n_pos) {
  const dq_hparams *hp = &s->m->hp;
  if (!buf)
    return dq_error_set(&s->err, DQ_ERR_ARG, "%s statistics are off (%s)",
                        what, how);
  if (layer < 0 || layer >= hp->n_layer || head < 0 || head >= hp->n_head)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "%s statistics of layer %d head %d: the model has %d "
                        "layers of %d heads",
                        what, layer, head, hp->n_layer, hp->n_head);
  dq_backend *be = s->m->be;
  const float *src = buf + ((size_t)layer * hp->n_head + head) * s->n_ctx;
  if (s->n_past > 0) {
    dq_status st =
        be->i.download(be->ctx, host, src, (size_t)s->n_past * sizeof *host);
    if (st)
      return dq_error_set(&s->err, st, "cannot read %s statistics back",
                          what);
  }
  *row = host;
  *n_pos = s->n_past;
  return DQ_OK;
}

dq_status dq_seq_stats_read(dq_seq *s, int layer, int head, const float **mass,
                            int *n_pos) {
  if (!s)
    return DQ_ERR_ARG;
  return stats_row(s, s->stats, s->stats_host, "attention",
                   "dq_seq_stats_begin", layer, head, mass, n_pos);
}

dq_status dq_seq_qstats_read(dq_seq *s, int layer, int head,
                             const float **row, int *n_pos) {
  if (!s)
    return DQ_ERR_ARG;
  return stats_row(s, s->qstats, s->qstats_host, "question",
                   "dq_seq_track_question", layer, head, row, n_pos);
}

void dq_seq_stats_end(dq_seq *s) {
  if (!s)
    return;
  if (s->stats)
    s->m->be->i.buf_free(s->m->be->ctx, s->stats);
  s->stats = NULL;
  if (s->gsm)
    s->gsm->track.stats = NULL;
  free(s->stats_host);
  s->stats_host = NULL;
}

/* ---- expert load -------------------------------------------------------- */

dq_status dq_seq_moe_stats_begin(dq_seq *s) {
  if (!s)
    return DQ_ERR_ARG;
  const dq_hparams *hp = &s->m->hp;
  if (!hp->n_expert)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "%s has no experts: no expert load to count",
                        s->m->name && s->m->name[0] ? s->m->name
                                                    : hp->arch_name);
  dq_backend *be = s->m->be;
  size_t n = (size_t)hp->n_layer * 2 * hp->n_expert;
  if (!s->moe_load &&
      be->i.buf_alloc(be->ctx, n * 4, (void **)&s->moe_load))
    return dq_error_set(&s->err, DQ_ERR_NOMEM, "out of memory");
  if (!s->moe_load_host &&
      !(s->moe_load_host = malloc(2 * (size_t)hp->n_expert * 4)))
    return dq_error_set(&s->err, DQ_ERR_NOMEM, "out of memory");
  /* zero through an upload (the buffer is device memory) */
  uint32_t *zero = calloc(n, 4);
  if (!zero)
    return dq_error_set(&s->err, DQ_ERR_NOMEM, "out of memory");
  dq_status st = be->i.upload(be->ctx, s->moe_load, zero, n * 4);
  free(zero);
  return st ? dq_error_set(&s->err, st, "cannot reset expert load") : DQ_OK;
}

dq_status dq_seq_moe_load(dq_seq *s, int layer, const uint32_t **routed,
                          const uint32_t **flat, int *n_expert) {
  if (!s)
    return DQ_ERR_ARG;
  const dq_hparams *hp = &s->m->hp;
  *routed = *flat = NULL;
  *n_expert = 0;
  if (!s->moe_load)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "expert load is not counted (dq_seq_moe_stats_begin)");
  if (layer < 0 || layer >= hp->n_layer)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "expert load of layer %d: the model has %d layers",
                        layer, hp->n_layer);
  if (!s->m->w.layers[layer].moe)
    return DQ_OK;
  dq_backend *be = s->m->be;
  size_t X = (size_t)hp->n_expert;
  dq_status st = be->i.download(be->ctx, s->moe_load_host,
                                s->moe_load + (size_t)layer * 2 * X, 2 * X * 4);
  if (st)
    return dq_error_set(&s->err, st, "cannot read expert load back");
  *routed = s->moe_load_host;
  *flat = s->moe_load_host + X;
  *n_expert = (int)X;
  return DQ_OK;
}

/* ---- encoder (bert) ----------------------------------------------------- */

dq_status dq_forward_encode(dq_model *m, const int32_t *tokens, int n,
                            float *out) {
  const dq_hparams *hp = &m->hp;
  dq_backend *be = m->be;
  const dq_backend_i *B = &be->i;
  void *c = be->ctx;
  int E = hp->n_embd, HD = hp->head_dim, nq = hp->n_head * HD;
  dq_status st = DQ_OK;
  if (n <= 0 || n > hp->n_ctx_train)
    return dq_error_set(&m->err, DQ_ERR_ARG,
                        "encoder input of %d tokens (1..%d allowed)", n,
                        hp->n_ctx_train);
  for (int i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
      return dq_error_set(&m->err, DQ_ERR_ARG,
                          "token %d outside the vocabulary (%d)", tokens[i],
                          hp->n_vocab);
  size_t N = (size_t)n;
  float *x = NULL, *xb = NULL, *q = NULL, *k = NULL, *v = NULL, *att = NULL,
        *hb = NULL, *tmp = NULL, *pooled = NULL;
  int32_t *ids = NULL, *pos = NULL, *typ = NULL, *posh = NULL;
  if (B->buf_alloc(c, N * E * 4, (void **)&x) ||
      B->buf_alloc(c, N * E * 4, (void **)&xb) ||
      B->buf_alloc(c, N * E * 4, (void **)&tmp) ||
      B->buf_alloc(c, N * nq * 4, (void **)&q) ||
      B->buf_alloc(c, N * nq * 4, (void **)&k) ||
      B->buf_alloc(c, N * nq * 4, (void **)&v) ||
      B->buf_alloc(c, N * nq * 4, (void **)&att) ||
      B->buf_alloc(c, N * (size_t)hp->n_ff * 4, (void **)&hb) ||
      B->buf_alloc(c, (size_t)E * 4, (void **)&pooled) ||
      B->buf_alloc(c, N * 4, (void **)&ids) ||
      B->buf_alloc(c, N * 4, (void **)&pos) ||
      B->buf_alloc(c, N * 4, (void **)&typ) || !(posh = calloc(N, 4))) {
    st = dq_error_set(&m->err, DQ_ERR_NOMEM, "encoder: out of memory");
    goto done;
  }
  for (int t = 0; t < n; t++)
    posh[t] = t;
  if ((st = B->upload(c, ids, tokens, N * 4)) ||
      (st = B->upload(c, pos, posh, N * 4)))
    goto done;
  /* token + position + token-type 0 embeddings, then LayerNorm */
  if ((st = B->get_rows(c, &m->w.tok_embd, ids, n, x)) ||
      (st = B->get_rows(c, &m->w.pos_embd, pos, n, xb)))
    goto done;
  B->add(c, x, xb, N * E);
  if ((st = B->get_rows(c, &m->w.type_embd, typ, 1, xb)))
    goto done;
  B->add_row(c, x, xb, n, E);
  B->layernorm(c, x, m->w.tok_norm, m->w.tok_norm_b, x, n, E, hp->eps);
  for (int il = 0; il < hp->n_layer; il++) {
    const dq_layer *L = &m->w.layers[il];
    if ((st = B->matmul(c, &L->wq, x, q, n)) ||
        (st = B->matmul(c, &L->wk, x, k, n)) ||
        (st = B->matmul(c, &L->wv, x, v, n)))
      goto done;
    B->add_row(c, q, L->bq, n, nq);
    B->add_row(c, k, L->bk, n, nq);
    B->add_row(c, v, L->bv, n, nq);
    dq_attn a = {.q = q, .k = k, .v = v, .store = DQ_STORE_F32, .n_tok = n,
                 .pos0 = 0, .n_kv = n, .n_head = hp->n_head,
                 .n_head_kv = hp->n_head_kv, .head_dim = HD, .causal = 0,
                 .scale = hp->attn_scale, .out = att};
    if ((st = B->attention(c, &a)) || (st = B->matmul(c, &L->wo, att, xb, n)))
      goto done;
    B->add_row(c, xb, L->bo, n, E);
    B->add(c, xb, x, N * E);
    B->layernorm(c, xb, L->attn_out_norm, L->attn_out_norm_b, x, n, E,
                 hp->eps);
    if ((st = B->matmul(c, &L->ffn_up, x, hb, n)))
      goto done;
    B->add_row(c, hb, L->ffn_up_b, n, hp->n_ff);
    B->gelu(c, hb, N * hp->n_ff, 0);
    if ((st = B->matmul(c, &L->ffn_down, hb, xb, n)))
      goto done;
    B->add_row(c, xb, L->ffn_down_b, n, E);
    B->add(c, xb, x, N * E);
    B->layernorm(c, xb, L->out_norm, L->out_norm_b, x, n, E, hp->eps);
  }
  B->mean_pool_l2(c, x, n, E, pooled);
  if ((st = be_sync(be)) ||
      (st = B->download(c, out, pooled, (size_t)E * 4)))
    goto done;
done:;
  void *bufs[] = {x, xb, tmp, q, k, v, att, hb, pooled, ids, pos, typ};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    if (bufs[i])
      B->buf_free(c, bufs[i]);
  free(posh);
  return st;
}
