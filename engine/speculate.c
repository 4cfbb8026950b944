/*
 * speculate.c - self-speculative decoding with early exit (the cycle and
 * the acceptance rule are described in speculate.h), and the controller that
 * decides whether it pays.
 *
 * The controller: plain decoding is timed first (PROBE_STEPS one-token
 * steps, the first of them not counted: it pays for cold caches); then
 * speculative cycles run (the first not counted either), and after every
 * WINDOW_TOKENS tokens their time
 * per token is compared with the plain steps'. A window that is not faster
 * switches early exit off for the rest of the generation and logs why, once;
 * a window that is clearly slower (EARLY_RATIO after EARLY_TOKENS) does so
 * sooner, which bounds what a model whose draft never pays loses.
 * Every REPROBE_TOKENS speculative tokens the plain time is measured again,
 * so a machine whose load changes is compared with itself. Plain steps are
 * ordinary decoding, so probing costs nothing; the worst case is one slow
 * window. Without auto_off every step is a cycle.
 *
 * Not here: the forward pass halves (forward.c), the generation loop and
 * stop strings (engine.c).
 */
#include "model.h"
#include "speculate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_STEPS 8       /* plain steps timed before speculating */
#define REPROBE_STEPS 3     /* plain steps timed again later */
#define WINDOW_TOKENS 24    /* speculative tokens per comparison */
#define EARLY_TOKENS 6      /* a window this long that is already ... */
#define EARLY_RATIO 1.1     /* ... this much slower than plain ends early */
#define REPROBE_TOKENS 128  /* speculative tokens between plain probes */
#define MAX_DRAFT_LIMIT 64  /* most draft tokens per cycle accepted in opts */

struct dq_spec {
  dq_seq *s;
  dq_model *m;
  dq_early_exit_opts o;
  int n_exit;           /* layers the draft runs */
  int n_vocab, n_embd;
  float *x;             /* device: max_draft + 1 residual rows (n_embd) */
  float *q;             /* host: max_draft rows of draft probabilities, or
                           NULL until a sampling (non-greedy) cycle */
  float *work;          /* host: n_vocab floats */
  int32_t *draft;       /* max_draft tokens */
  /* The draft's head: with draft_vocab > 0, the rows of the output matrix
   * of the candidate tokens only (copied to the device as found), so that a
   * draft does not pay for the whole vocabulary (262k rows on gemma3: more
   * than the rest of the model). n_cand <= draft_vocab rows. */
  dq_wmat dhead;
  uint8_t *head_buf;    /* device: draft_vocab rows, dhead.data */
  const uint8_t *out_host; /* host bytes of the output matrix */
  int32_t *cand;        /* dhead row -> token id */
  uint8_t *is_cand;     /* n_vocab flags */
  int n_cand;
  float *dense;         /* host n_vocab: draft logits over the vocabulary */
  /* controller */
  int probe_left;       /* plain steps to time before the next cycle */
  int probe_skip;       /* 1: the next plain step is not counted */
  double ref_ms;        /* plain ms per token (0 = not measured yet) */
  double probe_ms;
  int probe_n;
  double win_ms;
  int win_tokens;
  int since_probe;      /* speculative tokens since the last probe */
  int off;
  int warm;             /* cycles run (the first is not compared: it pays
                           for first-touch buffers) */
  dq_early_exit_stats st;
};

void dq_early_exit_opts_init(dq_early_exit_opts *o) {
  memset(o, 0, sizeof *o);
  o->layer_fraction = 0.67f;
  o->threshold = 0.9f;
  o->max_draft = 8;
  o->draft_vocab = 4096;
  o->auto_off = 1;
}

void dq_spec_free(dq_spec *sp) {
  if (!sp)
    return;
  if (sp->x)
    sp->m->be->i.buf_free(sp->m->be->ctx, sp->x);
  free(sp->q);
  free(sp->work);
  free(sp->draft);
  if (sp->head_buf)
    sp->m->be->i.buf_free(sp->m->be->ctx, sp->head_buf);
  free(sp->cand);
  free(sp->is_cand);
  free(sp->dense);
  free(sp);
}

/* Makes token t a row of the draft's head (no-op when it is one or the head
 * is full). */
static dq_status cand_add(dq_spec *sp, int32_t t) {
  if (!sp->cand || t < 0 || t >= sp->n_vocab || sp->is_cand[t] ||
      sp->n_cand >= sp->o.draft_vocab)
    return DQ_OK;
  dq_backend *be = sp->m->be;
  size_t rb = sp->dhead.row_bytes;
  dq_status st = be->i.upload(be->ctx, sp->head_buf + (size_t)sp->n_cand * rb,
                              sp->out_host + (size_t)t * rb, rb);
  if (st)
    return st;
  sp->is_cand[t] = 1;
  sp->cand[sp->n_cand++] = t;
  sp->dhead.n_rows = sp->n_cand;
  return DQ_OK;
}

/* The draft head's rows: all of the output matrix, or a device buffer for
 * draft_vocab candidate rows seeded with the prompt's tokens. */
static dq_status head_init(dq_spec *sp, const int32_t *prompt, int n_prompt) {
  dq_model *m = sp->m;
  const dq_gguf_tensor *t = dq_gguf_tensor_get(m->gguf, m->w.output.name);
  if (sp->o.draft_vocab <= 0 || sp->o.draft_vocab >= sp->n_vocab || !t) {
    sp->o.draft_vocab = 0;
    sp->dhead = m->w.output;
    return DQ_OK;
  }
  sp->out_host = t->data;
  sp->dhead = m->w.output;
  sp->dhead.data = NULL;
  sp->dhead.n_rows = 0;
  void *dev = NULL;
  sp->cand = malloc((size_t)sp->o.draft_vocab * sizeof *sp->cand);
  sp->is_cand = calloc((size_t)sp->n_vocab, 1);
  sp->dense = malloc((size_t)sp->n_vocab * sizeof(float));
  if (!sp->cand || !sp->is_cand || !sp->dense ||
      m->be->i.buf_alloc(m->be->ctx,
                         (size_t)sp->o.draft_vocab * sp->dhead.row_bytes, &dev))
    return DQ_ERR_NOMEM;
  sp->head_buf = dev;
  sp->dhead.data = dev;
  dq_status st = DQ_OK;
  for (int i = 0; i < n_prompt && !st; i++)
    st = cand_add(sp, prompt[i]);
  return st;
}

dq_status dq_spec_new(dq_seq *s, const dq_early_exit_opts *o,
                      const int32_t *prompt, int n_prompt, dq_spec **out) {
  *out = NULL;
  dq_model *m = s->m;
  const dq_hparams *hp = &m->hp;
  if (!(o->layer_fraction > 0.0f && o->layer_fraction < 1.0f) ||
      !(o->threshold > 0.0f && o->threshold <= 1.0f) || o->max_draft < 1 ||
      o->max_draft > MAX_DRAFT_LIMIT)
    return dq_error_set(&m->err, DQ_ERR_ARG,
                        "early exit: layer_fraction %g must be in (0, 1), "
                        "threshold %g in (0, 1], max_draft %d in 1..%d",
                        (double)o->layer_fraction, (double)o->threshold,
                        o->max_draft, MAX_DRAFT_LIMIT);
  if (hp->n_layer < 2)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "early exit needs at least 2 layers (%s has %d)",
                        m->name, hp->n_layer);
  dq_spec *sp = calloc(1, sizeof *sp);
  if (!sp)
    return dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
  sp->s = s;
  sp->m = m;
  sp->o = *o;
  sp->n_vocab = hp->n_vocab;
  sp->n_embd = hp->n_embd;
  sp->n_exit = (int)lroundf(o->layer_fraction * (float)hp->n_layer);
  if (sp->n_exit < 1)
    sp->n_exit = 1;
  if (sp->n_exit > hp->n_layer - 1)
    sp->n_exit = hp->n_layer - 1;
  sp->work = malloc((size_t)hp->n_vocab * sizeof(float));
  sp->draft = malloc((size_t)o->max_draft * sizeof(int32_t));
  if (!sp->work || !sp->draft ||
      m->be->i.buf_alloc(m->be->ctx,
                         (size_t)(o->max_draft + 1) * hp->n_embd * 4,
                         (void **)&sp->x) ||
      head_init(sp, prompt, n_prompt)) {
    dq_spec_free(sp);
    return dq_error_set(&m->err, DQ_ERR_NOMEM,
                        "early exit: cannot allocate %d draft rows",
                        o->max_draft + 1);
  }
  if (o->auto_off) {
    sp->probe_left = PROBE_STEPS;
    sp->probe_skip = 1;
  }
  sp->st.enabled = 1;
  sp->st.exit_layer = sp->n_exit;
  sp->st.n_layer = hp->n_layer;
  sp->st.draft_vocab = sp->o.draft_vocab ? sp->o.draft_vocab : hp->n_vocab;
  *out = sp;
  return DQ_OK;
}

void dq_spec_stats(const dq_spec *sp, dq_early_exit_stats *st) {
  if (!sp) {
    memset(st, 0, sizeof *st);
    return;
  }
  *st = sp->st;
}

/* ---- controller ---------------------------------------------------------- */

int dq_spec_want(const dq_spec *sp) {
  return sp && !sp->off && sp->probe_left == 0;
}

void dq_spec_plain_step(dq_spec *sp, double ms) {
  if (!sp)
    return;
  sp->st.n_plain++;
  sp->st.plain_ms += ms;
  if (sp->probe_left == 0)
    return;
  if (sp->probe_skip)
    sp->probe_skip = 0;
  else {
    sp->probe_ms += ms;
    sp->probe_n++;
  }
  if (--sp->probe_left == 0 && sp->probe_n > 0) {
    sp->ref_ms = sp->probe_ms / sp->probe_n;
    sp->probe_ms = 0;
    sp->probe_n = 0;
  }
}

static void switch_off(dq_spec *sp, const char *why, double ms_per_token) {
  const dq_early_exit_stats *st = &sp->st;
  sp->off = 1;
  sp->st.switched_off = 1;
  sp->st.off_reason = why;
  dq_log(sp->m->log, DQ_LOG_INFO,
         "early exit: switched off (%s): %d verify passes, %d of %d draft "
         "tokens accepted (%.0f%%), %.2f per pass, %.1f ms/token vs %.1f "
         "ms/token plain",
         why, st->n_cycles, st->n_accepted, st->n_drafted,
         st->n_drafted ? 100.0 * st->n_accepted / st->n_drafted : 0.0,
         st->n_cycles ? (double)st->n_accepted / st->n_cycles : 0.0,
         ms_per_token, sp->ref_ms);
}

static void cycle_done(dq_spec *sp, double ms, int n_tokens) {
  sp->st.ms += ms;
  sp->st.n_tokens += n_tokens;
  if (!sp->o.auto_off || sp->warm++ == 0)
    return;
  sp->win_ms += ms;
  sp->win_tokens += n_tokens;
  sp->since_probe += n_tokens;
  double per_token = sp->win_ms / sp->win_tokens;
  if (sp->win_tokens >= EARLY_TOKENS && sp->ref_ms > 0 &&
      per_token >= EARLY_RATIO * sp->ref_ms) {
    switch_off(sp, "slower than plain decoding", per_token);
    return;
  }
  if (sp->win_tokens < WINDOW_TOKENS)
    return;
  sp->win_ms = 0;
  sp->win_tokens = 0;
  if (sp->ref_ms > 0 && per_token >= sp->ref_ms) {
    switch_off(sp, "slower than plain decoding", per_token);
    return;
  }
  if (sp->since_probe >= REPROBE_TOKENS) {
    sp->since_probe = 0;
    sp->probe_left = REPROBE_STEPS;
  }
}

/* ---- the acceptance rule ------------------------------------------------- */

int dq_spec_verify(dq_sampler *sm, const float *rows, int n_vocab,
                   const float *q, const int32_t *draft, int n_draft,
                   float *work, int32_t *next) {
  for (int i = 0; i <= n_draft; i++) {
    const float *row = rows + (size_t)i * n_vocab;
    if (!q) {
      /* greedy: the full model's choice, recorded as plain decoding would */
      int32_t f = 0;
      dq_sampler_sample(sm, row, &f);
      if (i < n_draft && f == draft[i])
        continue;
      *next = f;
      return i;
    }
    float *p = work;
    dq_sampler_probs(sm, row, p);
    if (i == n_draft) { /* every draft token kept: one more from p */
      *next = dq_sampler_draw(sm, p);
      dq_sampler_accept(sm, *next);
      return i;
    }
    const float *qi = q + (size_t)i * n_vocab;
    int32_t x = draft[i];
    /* accept with probability min(1, p(x) / q(x)); q(x) > 0 as x was drawn
     * from it */
    if (dq_sampler_unit(sm) * qi[x] < p[x]) {
      dq_sampler_accept(sm, x);
      continue;
    }
    /* rejected: the residual max(0, p - q), which has mass since p(x) <
     * q(x) means p and q differ */
    for (int t = 0; t < n_vocab; t++)
      p[t] = p[t] > qi[t] ? p[t] - qi[t] : 0.0f;
    int32_t f = dq_sampler_draw(sm, p);
    if (f < 0) { /* p == q up to rounding: p itself */
      dq_sampler_probs(sm, row, p);
      f = dq_sampler_draw(sm, p);
    }
    *next = f;
    dq_sampler_accept(sm, f);
    return i;
  }
  return n_draft; /* not reached */
}

/* ---- one cycle ----------------------------------------------------------- */

/* New candidates after a verify pass: the full model's CAND_TOP best tokens
 * at each of the n kept positions, and the next token. */
#define CAND_TOP 4
static dq_status cands_from(dq_spec *sp, const float *rows, int n,
                            int32_t next) {
  dq_status st = cand_add(sp, next);
  for (int r = 0; r < n && !st; r++) {
    const float *l = rows + (size_t)r * sp->n_vocab;
    int32_t top[CAND_TOP];
    int k = 0;
    for (int t = 0; t < sp->n_vocab; t++) {
      if (k == CAND_TOP && l[t] <= l[top[k - 1]])
        continue;
      int i = k < CAND_TOP ? k++ : k - 1;
      while (i > 0 && l[top[i - 1]] < l[t]) {
        top[i] = top[i - 1];
        i--;
      }
      top[i] = t;
    }
    for (int i = 0; i < k && !st; i++)
      st = cand_add(sp, top[i]);
  }
  return st;
}

/* Greedy draft: the argmax of the draft logits and its softmax probability. */
static int32_t draft_argmax(const float *l, int n_vocab, float *conf) {
  int32_t best = 0;
  for (int i = 1; i < n_vocab; i++)
    if (l[i] > l[best])
      best = i;
  double sum = 0;
  for (int i = 0; i < n_vocab; i++)
    sum += exp((double)(l[i] - l[best]));
  *conf = (float)(1.0 / sum);
  return best;
}

dq_status dq_spec_step(dq_spec *sp, dq_sampler *sm, int32_t t0, int max_out,
                       int32_t *out, int *n_out) {
  dq_seq *s = sp->s;
  dq_model *m = sp->m;
  int nv = sp->n_vocab;
  int greedy = dq_sampler_is_greedy(sm);
  dq_status st;
  *n_out = 0;
  double t_start = dq_now_ms();
  int P = s->n_past;
  /* draft tokens: within max_out (the cycle's extra token included), the
   * context (t0 and the drafts take positions P..P+j) and one batch */
  int room = sp->o.max_draft;
  if (room > max_out - 1)
    room = max_out - 1;
  if (room > s->n_ctx - P - 1)
    room = s->n_ctx - P - 1;
  if (room > s->n_batch - 1)
    room = s->n_batch - 1;
  if (room < 0)
    return dq_error_set(&m->err, DQ_ERR_LIMIT,
                        "early exit: no room in the context at %d", P);
  if (!greedy && !sp->q) {
    sp->q = malloc((size_t)sp->o.max_draft * nv * sizeof(float));
    if (!sp->q)
      return dq_error_set(&m->err, DQ_ERR_NOMEM,
                          "early exit: cannot hold draft probabilities");
  }
  if (!greedy)
    dq_sampler_mark(sm);
  int j = 0;
  int32_t tok = t0;
  for (;;) {
    int want = j < room && sp->dhead.n_rows > 0;
    float *xr = sp->x + (size_t)j * sp->n_embd;
    if ((st = dq_seq_draft(s, tok, sp->n_exit, xr, want ? &sp->dhead : NULL)))
      goto fail;
    if (!want)
      break;
    const float *l = s->logits;
    float conf;
    int32_t d;
    if (greedy) {
      d = draft_argmax(l, (int)sp->dhead.n_rows, &conf);
      if (sp->cand)
        d = sp->cand[d];
    } else {
      float *qj = sp->q + (size_t)j * nv;
      if (sp->cand) { /* candidates only: the rest has probability 0 */
        for (int t = 0; t < nv; t++)
          sp->dense[t] = -INFINITY;
        for (int c = 0; c < sp->n_cand; c++)
          sp->dense[sp->cand[c]] = l[c];
        l = sp->dense;
      }
      dq_sampler_probs(sm, l, qj);
      conf = 0;
      for (int t = 0; t < nv; t++)
        if (qj[t] > conf)
          conf = qj[t];
      d = conf >= sp->o.threshold ? dq_sampler_draw(sm, qj) : -1;
    }
    if (conf < sp->o.threshold || d < 0)
      break;
    if (!greedy)
      dq_sampler_accept(sm, d); /* the next draft sees it in the penalty */
    sp->draft[j++] = d;
    tok = d;
    if (dq_model_is_eog(m, d))
      room = j; /* nothing follows an end of generation */
  }
  if (!greedy)
    dq_sampler_rewind(sm);
  /* verify: the upper layers over t0 and the drafts, from their rows */
  if ((st = dq_seq_truncate(s, P)) ||
      (st = dq_seq_finish(s, sp->x, j + 1, sp->n_exit)))
    goto fail;
  int32_t next = 0;
  int a = dq_spec_verify(sm, s->logits, nv, greedy ? NULL : sp->q, sp->draft,
                         j, sp->work, &next);
  if ((st = dq_seq_truncate(s, P + 1 + a)))
    goto fail;
  memcpy(out, sp->draft, (size_t)a * sizeof *out);
  out[a] = next;
  *n_out = a + 1;
  if (sp->cand && (st = cands_from(sp, s->logits, a + 1, next)))
    goto fail;
  sp->st.ran = 1;
  sp->st.n_cycles++;
  sp->st.n_drafted += j;
  sp->st.n_accepted += a;
  cycle_done(sp, dq_now_ms() - t_start, a + 1);
  return DQ_OK;
fail:
  if (s->n_past > P)
    s->n_past = P;
  return dq_error_set(&m->err, st, "early exit: %s", dq_seq_errmsg(s));
}
