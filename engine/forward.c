/*
 * forward.c - the forward pass, written once against the backend interface:
 * decoder layers (llama, qwen2, qwen3, gemma3) over a sequence's KV cache,
 * and the bert encoder for embeddings. Also the sequence object (scratch,
 * logits, attention statistics) that holds a forward pass's RunState.
 *
 * A decoder layer reads top to bottom:
 *   norm -> Q,K,V (+bias) -> [q/k norm] -> RoPE -> store K,V -> attention
 *   -> output proj -> [post-attn norm] -> residual -> norm -> gated FFN
 *   -> [post-ffw norm] -> residual
 * An input of n tokens runs as ceil(n / n_batch) batches; each batch is
 * matrix-matrix through the backend, causal full attention over the cache
 * is the exact reference path (gemma3's local layers hide keys beyond the
 * sliding window). Nothing is read back to the host inside a layer.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#define BATCH_DEFAULT 256

static dq_status seq_alloc(dq_backend *be, void **p, size_t n_bytes) {
  return be->i.buf_alloc(be->ctx, n_bytes, p);
}

dq_status dq_seq_new(dq_model *m, int n_ctx, dq_seq **out) {
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
  s->n_batch = n_ctx < BATCH_DEFAULT ? n_ctx : BATCH_DEFAULT;
  size_t B = (size_t)s->n_batch, E = (size_t)hp->n_embd;
  size_t nq = (size_t)hp->n_head * hp->head_dim;
  size_t nkv = (size_t)hp->n_head_kv * hp->head_dim;
  dq_status st = dq_kv_init(&s->kv, be, hp->n_layer, n_ctx, (int)nkv,
                            m->opts.kv_type, &m->err);
  if (st)
    goto fail_quiet;
  if ((st = seq_alloc(be, (void **)&s->x, B * E * 4)) ||
      (st = seq_alloc(be, (void **)&s->xb, B * E * 4)) ||
      (st = seq_alloc(be, (void **)&s->q, B * nq * 4)) ||
      (st = seq_alloc(be, (void **)&s->att, B * nq * 4)) ||
      (st = seq_alloc(be, (void **)&s->k, B * nkv * 4)) ||
      (st = seq_alloc(be, (void **)&s->v, B * nkv * 4)) ||
      (st = seq_alloc(be, (void **)&s->hb, B * (size_t)hp->n_ff * 4)) ||
      (st = seq_alloc(be, (void **)&s->hb2, B * (size_t)hp->n_ff * 4)) ||
      (st = seq_alloc(be, (void **)&s->ids, B * 4)) ||
      (st = seq_alloc(be, (void **)&s->pos, B * 4)) ||
      (st = seq_alloc(be, (void **)&s->logits_dev, (size_t)hp->n_vocab * 4)))
    goto fail;
  s->logits_cap_rows = 1;
  s->logits_dev_rows = 1;
  s->logits = malloc((size_t)hp->n_vocab * 4);
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

void dq_seq_free(dq_seq *s) {
  if (!s)
    return;
  dq_backend *be = s->m->be;
  void *bufs[] = {s->x,   s->xb, s->q,   s->att, s->k, s->v,
                  s->hb,  s->hb2, s->ids, s->pos, s->logits_dev, s->stats};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    if (bufs[i])
      be->i.buf_free(be->ctx, bufs[i]);
  dq_kv_free(&s->kv, be);
  free(s->logits);
  free(s->stats_host);
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

dq_status dq_seq_truncate(dq_seq *s, int n_past) {
  if (!s)
    return DQ_ERR_ARG;
  if (n_past < 0 || n_past > s->n_past)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "truncate to %d: the sequence holds %d tokens", n_past,
                        s->n_past);
  s->n_past = n_past;
  return DQ_OK;
}

/* One batch of n <= n_batch tokens at positions s->n_past... */
static dq_status decode_batch(dq_seq *s, const int32_t *tokens, int n,
                              int logits_from) {
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  dq_backend *be = m->be;
  const dq_backend_i *B = &be->i;
  void *c = be->ctx;
  int E = hp->n_embd, HD = hp->head_dim;
  int nq = hp->n_head * HD, nkv = hp->n_head_kv * HD;
  int32_t posh[BATCH_DEFAULT];
  dq_status st;
  for (int t = 0; t < n; t++)
    posh[t] = s->n_past + t;
  if ((st = B->upload(c, s->ids, tokens, (size_t)n * 4)) ||
      (st = B->upload(c, s->pos, posh, (size_t)n * 4)))
    return st;
  if ((st = B->get_rows(c, &m->w.tok_embd, s->ids, n, s->x)))
    return st;
  if (hp->embd_scale != 1.0f)
    B->scale(c, s->x, hp->embd_scale, (size_t)n * E);
  int n_kv = s->n_past + n;

  for (int il = 0; il < hp->n_layer; il++) {
    const dq_layer *L = &m->w.layers[il];
    const dq_rope_params *rope = L->is_swa ? &hp->rope_local : &hp->rope;
    /* attention block */
    B->rmsnorm(c, s->x, L->attn_norm, s->xb, n, E, hp->eps);
    if ((st = B->matmul(c, &L->wq, s->xb, s->q, n)) ||
        (st = B->matmul(c, &L->wk, s->xb, s->k, n)) ||
        (st = B->matmul(c, &L->wv, s->xb, s->v, n)))
      return st;
    if (L->bq) {
      B->add_row(c, s->q, L->bq, n, nq);
      B->add_row(c, s->k, L->bk, n, nkv);
      B->add_row(c, s->v, L->bv, n, nkv);
    }
    if (L->q_norm) {
      B->rmsnorm(c, s->q, L->q_norm, s->q, n * hp->n_head, HD, hp->eps);
      B->rmsnorm(c, s->k, L->k_norm, s->k, n * hp->n_head_kv, HD, hp->eps);
    }
    B->rope(c, s->q, n, hp->n_head, HD, s->pos, rope);
    B->rope(c, s->k, n, hp->n_head_kv, HD, s->pos, rope);
    B->kv_store(c, s->kv.k[il], s->kv.store, s->n_past, s->k, n, nkv);
    B->kv_store(c, s->kv.v[il], s->kv.store, s->n_past, s->v, n, nkv);
    dq_attn a = {
        .q = s->q, .k = s->kv.k[il], .v = s->kv.v[il], .store = s->kv.store,
        .n_tok = n, .pos0 = s->n_past, .n_kv = n_kv, .n_head = hp->n_head,
        .n_head_kv = hp->n_head_kv, .head_dim = HD, .causal = 1,
        .window = L->is_swa ? hp->window : 0, .scale = hp->attn_scale,
        .out = s->att};
    if (s->stats) {
      a.stats = s->stats + (size_t)il * hp->n_head * s->n_ctx;
      a.stats_stride = s->n_ctx;
      a.stats_q0 = s->stats_q0;
      a.stats_q1 = s->stats_q1;
    }
    if ((st = B->attention(c, &a)) ||
        (st = B->matmul(c, &L->wo, s->att, s->xb, n)))
      return st;
    if (L->post_attn_norm)
      B->rmsnorm(c, s->xb, L->post_attn_norm, s->xb, n, E, hp->eps);
    B->add(c, s->x, s->xb, (size_t)n * E);
    /* feed-forward block */
    B->rmsnorm(c, s->x, L->ffn_norm, s->xb, n, E, hp->eps);
    if ((st = B->matmul(c, &L->ffn_gate, s->xb, s->hb, n)) ||
        (st = B->matmul(c, &L->ffn_up, s->xb, s->hb2, n)))
      return st;
    B->glu(c, s->hb, s->hb2, (size_t)n * hp->n_ff, hp->ffn_act);
    if ((st = B->matmul(c, &L->ffn_down, s->hb, s->xb, n)))
      return st;
    if (L->post_ffw_norm)
      B->rmsnorm(c, s->xb, L->post_ffw_norm, s->xb, n, E, hp->eps);
    B->add(c, s->x, s->xb, (size_t)n * E);
  }
  if (logits_from < n) {
    int nl = n - logits_from;
    float *xl = s->x + (size_t)logits_from * E;
    B->rmsnorm(c, xl, m->w.output_norm, s->xb, nl, E, hp->eps);
    if ((st = B->matmul(c, &m->w.output, s->xb, s->logits_dev, nl)))
      return st;
  }
  return be_sync(be);
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
  int rows = mode == DQ_LOGITS_ALL ? n : mode == DQ_LOGITS_LAST ? 1 : 0;
  if (rows > s->logits_cap_rows) {
    float *p = realloc(s->logits, (size_t)rows * hp->n_vocab * 4);
    if (!p)
      return dq_error_set(&s->err, DQ_ERR_NOMEM,
                          "cannot hold %d rows of logits", rows);
    s->logits = p;
    s->logits_cap_rows = rows;
  }
  /* device rows for one batch's logits: grown only for DQ_LOGITS_ALL */
  int dev_rows = rows < s->n_batch ? rows : s->n_batch;
  if (dev_rows > s->logits_dev_rows) {
    dq_backend *be = m->be;
    void *p = NULL;
    if (be->i.buf_alloc(be->ctx, (size_t)dev_rows * hp->n_vocab * 4, &p))
      return dq_error_set(&s->err, DQ_ERR_NOMEM,
                          "cannot hold %d rows of logits on the device",
                          dev_rows);
    be->i.buf_free(be->ctx, s->logits_dev);
    s->logits_dev = p;
    s->logits_dev_rows = dev_rows;
  }
  int n_past0 = s->n_past;
  s->n_logit_rows = 0;
  for (int done = 0; done < n;) {
    int nb = n - done < s->n_batch ? n - done : s->n_batch;
    int last = done + nb == n;
    int from = mode == DQ_LOGITS_ALL ? 0 : (mode == DQ_LOGITS_LAST && last)
                                               ? nb - 1
                                               : nb;
    dq_status st = decode_batch(s, tokens + done, nb, from);
    if (st) {
      s->n_past = n_past0;
      return dq_error_set(&s->err, st, "forward pass failed at position %d: %s",
                          n_past0 + done, dq_status_str(st));
    }
    if (from < nb) {
      size_t nbytes = (size_t)(nb - from) * hp->n_vocab * 4;
      st = m->be->i.download(m->be->ctx,
                             s->logits + (size_t)s->n_logit_rows * hp->n_vocab,
                             s->logits_dev, nbytes);
      if (st) {
        s->n_past = n_past0;
        return dq_error_set(&s->err, st, "cannot read logits back");
      }
      s->n_logit_rows += nb - from;
    }
    s->n_past += nb;
    done += nb;
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
  if (be->i.buf_alloc(be->ctx, n * 4, (void **)&s->stats))
    return dq_error_set(&s->err, DQ_ERR_NOMEM,
                        "cannot allocate attention statistics (%zu floats)", n);
  if (!s->stats_host && !(s->stats_host = malloc((size_t)s->n_ctx * 4))) {
    dq_seq_stats_end(s);
    return dq_error_set(&s->err, DQ_ERR_NOMEM, "out of memory");
  }
  s->stats_q0 = q_begin;
  s->stats_q1 = q_end;
  return DQ_OK;
}

dq_status dq_seq_stats_read(dq_seq *s, int layer, int head, const float **mass,
                            int *n_pos) {
  if (!s)
    return DQ_ERR_ARG;
  const dq_hparams *hp = &s->m->hp;
  if (!s->stats)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "attention statistics are off (dq_seq_stats_begin)");
  if (layer < 0 || layer >= hp->n_layer || head < 0 || head >= hp->n_head)
    return dq_error_set(&s->err, DQ_ERR_ARG,
                        "statistics of layer %d head %d: the model has %d "
                        "layers of %d heads",
                        layer, head, hp->n_layer, hp->n_head);
  dq_backend *be = s->m->be;
  const float *row =
      s->stats + ((size_t)layer * hp->n_head + head) * s->n_ctx;
  if (s->n_past > 0) {
    dq_status st = be->i.download(be->ctx, s->stats_host, row,
                                  (size_t)s->n_past * 4);
    if (st)
      return dq_error_set(&s->err, st, "cannot read statistics back");
  }
  *mass = s->stats_host;
  *n_pos = s->n_past;
  return DQ_OK;
}

void dq_seq_stats_end(dq_seq *s) {
  if (!s)
    return;
  if (s->stats)
    s->m->be->i.buf_free(s->m->be->ctx, s->stats);
  s->stats = NULL;
  free(s->stats_host);
  s->stats_host = NULL;
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
