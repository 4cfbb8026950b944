/*
 * rerank.c - the coarse-recall step of ask (and `search --recall`): one or
 * more GSM passes of the language model over the question, the candidate
 * passages and the question again (the probe), scoring each passage by the
 * attention the probe pays to it (engine.h dq_model_recall; the passage's
 * attention to the pinned question is reported too, recall_toq), then
 * fusing that ranking with the retrieval ranking.
 *
 * Prompt of one pass (plain text, no chat template):
 *   "Question: Q\n\nPassages:\n\n" + for each passage "[i] label\ntext\n\n"
 *   + "Question: Q"
 * The first Q is pinned in the GSM cache; the last is the probe. Passages are
 * tokenized one by one so their token spans are exact. A pass holds at most
 * the model's trained context (positions are never extrapolated, see
 * engine/gsm.h); more passages are read in consecutive passes, each with the
 * question and probe, whose scores are merged (attention masses per probe
 * token, and per-token ratios to the text around them: comparable across
 * passes).
 *
 * Fusion: reciprocal-rank fusion, 1/(60 + retrieval rank) + w/(60 + recall
 * rank), w = recall_weight (w = 0 keeps the retrieval order). The weight and
 * the layers read are chosen by tests/eval/run.py (numbers in
 * docs/benchmarks.md).
 * Not here: retrieval itself (search.c) and the answer (ask.c).
 */
#include "pipeline_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RRF_K 60.0

void dq_config_gsm_opts(const dq_config *c, dq_gsm_opts *o) {
  dq_gsm_opts_init(o);
  if (!c)
    return;
  o->window_size = (int)c->sparse_attention.window_size;
  o->num_global_anchors = (int)c->sparse_attention.num_global_anchors;
  o->n_sink = (int)c->sparse_attention.n_sink;
  o->mode = c->sparse_attention.mode == DQ_GSM_FIXED     ? DQ_GSM_LAYOUT_FIXED
            : c->sparse_attention.mode == DQ_GSM_DYNAMIC ? DQ_GSM_LAYOUT_DYNAMIC
                                                         : DQ_GSM_LAYOUT_HYBRID;
  o->static_anchors = !c->sparse_attention.anchor_selection_dynamic;
  o->min_tokens = (int)c->sparse_attention.min_tokens;
  o->cache_positions = c->sparse_attention.cache_positions;
  o->keep_ratio = (float)c->kv_compress.keep_ratio;
  o->strategy = c->kv_compress.strategy == DQ_KV_TIME_DECAY
                    ? DQ_GSM_MERGE_TIME_DECAY
                : c->kv_compress.strategy == DQ_KV_SIMILARITY
                    ? DQ_GSM_MERGE_SIMILARITY
                    : DQ_GSM_MERGE_SCORE;
  o->memory_slots = (int)c->kv_compress.memory_slots;
  o->cache_type = c->kv_compress.cache_type;
  o->chunk_size = (int)c->prefill.chunk_size;
  o->encoder_window_scale = (float)c->encoder_decoder.encoder_window_scale;
  o->decoder_window_scale = (float)c->encoder_decoder.decoder_window_scale;
}

void dq_config_early_exit(const dq_config *c, dq_early_exit_opts *o) {
  dq_early_exit_opts_init(o);
  if (!c)
    return;
  o->enabled = c->early_exit.enabled;
  o->layer_fraction = (float)c->early_exit.layer_fraction;
  o->threshold = (float)c->early_exit.threshold;
}

/* Growing token buffer. */
typedef struct tokbuf {
  int32_t *t;
  int n, cap;
} tokbuf;

static dq_status tok_add(dq_model *m, tokbuf *b, const char *text, int bos,
                         dq_span *span) {
  int32_t *t = NULL;
  int n = 0;
  dq_status s = dq_model_tokenize(m, text, strlen(text), bos, &t, &n);
  if (s != DQ_OK)
    return s;
  if (b->n + n > b->cap) {
    int cap = (b->n + n) * 2 + 256;
    int32_t *p = realloc(b->t, (size_t)cap * sizeof *p);
    if (!p) {
      free(t);
      return DQ_ERR_NOMEM;
    }
    b->t = p;
    b->cap = cap;
  }
  memcpy(b->t + b->n, t, (size_t)n * sizeof *t);
  if (span)
    *span = (dq_span){b->n, b->n + n};
  b->n += n;
  free(t);
  return DQ_OK;
}

static char *passage_text(size_t i, const dq_hit *h) {
  dq_strbuf b = {0};
  char w[DQ_WHERE_MAX];
  dq_strbuf_printf(&b, "[%zu] %s%s", i + 1, h->path,
                   dq_where(w, dq_page_unit(h->kind), h->page_start,
                            h->line_start, h->line_end));
  dq_strbuf_adds(&b, "\n");
  dq_strbuf_adds(&b, h->text);
  dq_strbuf_adds(&b, "\n\n");
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

typedef struct fused {
  double score;
  size_t idx;
} fused;

static int fused_desc(const void *x, const void *y) {
  const fused *a = x, *b = y;
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* One pass over passages [i0, i1): their probe scores into score[], their
 * attention to the question into toq[] (NULL: not computed). */
static dq_status one_pass(dq_model *m, const dq_recall_opts *ro,
                          const char *question, const dq_hit *hits, size_t i0,
                          size_t i1, double *score, double *toq,
                          dq_recall_info *info, dq_error *err) {
  tokbuf b = {0};
  dq_span q, probe, *spans = calloc(i1 - i0 + 1, sizeof *spans);
  float *ps = calloc(2 * (i1 - i0) + 1, sizeof *ps), *tq = NULL;
  dq_status s = DQ_ERR_NOMEM;
  if (!spans || !ps)
    goto done;
  tq = ps + (i1 - i0);
  if ((s = tok_add(m, &b, "Question: ", 1, NULL)) ||
      (s = tok_add(m, &b, question, 0, &q)) ||
      (s = tok_add(m, &b, "\n\nPassages:\n\n", 0, NULL)))
    goto done;
  for (size_t i = i0; i < i1; i++) {
    char *p = passage_text(i, &hits[i]);
    if (!p) {
      s = DQ_ERR_NOMEM;
      goto done;
    }
    s = tok_add(m, &b, p, 0, &spans[i - i0]);
    free(p);
    if (s)
      goto done;
  }
  if ((s = tok_add(m, &b, "Question: ", 0, NULL)) ||
      (s = tok_add(m, &b, question, 0, &probe)))
    goto done;
  s = dq_model_recall(m, b.t, b.n, spans, (int)(i1 - i0), q, probe, ro, ps,
                      toq ? tq : NULL);
  if (s != DQ_OK) {
    dq_error_set(err, s, "recall pass: %s", dq_model_errmsg(m));
    goto done;
  }
  for (size_t i = i0; i < i1; i++) {
    score[i] = ps[i - i0];
    if (toq)
      toq[i] = tq[i - i0];
  }
  info->n_tokens += b.n;
  info->n_passes++;
done:
  if (s == DQ_ERR_NOMEM && !err->code)
    dq_error_set(err, s, "out of memory");
  free(b.t);
  free(spans);
  free(ps);
  return s;
}

dq_status pl_recall_rerank(dq_model *m, const pl_recall_in *in, dq_hit *hits,
                           size_t n, dq_recall_info *info, dq_error *err) {
  memset(info, 0, sizeof *info);
  if (n < 2)
    return DQ_OK;
  double t0 = dq_now_ms();
  dq_model_info mi;
  dq_model_get_info(m, &mi);
  dq_recall_opts ro;
  dq_recall_opts_init(&ro);
  dq_config_gsm_opts(in->config, &ro.gsm);
  /* layers read: [begin, end) as fractions of the depth */
  ro.layer_begin = (int)floor(in->layer_from * mi.n_layer);
  ro.layer_end = (int)ceil(in->layer_to * mi.n_layer);
  if (ro.layer_end > mi.n_layer)
    ro.layer_end = mi.n_layer;
  if (ro.layer_begin >= ro.layer_end)
    ro.layer_begin = ro.layer_end - 1;
  info->n_candidates = (int)n;
  info->weight = in->weight;
  info->layer_begin = ro.layer_begin;
  info->layer_end = ro.layer_end;
  /* calibration (opt-in): the content-free probe in the probe's place,
   * after the same "Question: ". On needles it lifts hit@1 from 0.40 to 1.00
   * (bench needle --sweep, upper half of SmolLM2's layers); on the 39 real
   * questions it lowers recall's own hit@1/3/5 from 15/56/82% to 13/41/54%
   * (tests/eval/run.py --recall 0.5:1 --pool 10 [--calib]), so it is off */
  int32_t *calib = NULL;
  int n_calib = 0;
  if (in->calib) {
    if (dq_model_tokenize(m, "N/A", 3, 0, &calib, &n_calib) != DQ_OK ||
        n_calib < 1) {
      free(calib);
      return dq_error_set(err, DQ_ERR_NOMEM,
                          "recall: cannot tokenize the calibration probe");
    }
    ro.calib_probe = calib;
    ro.n_calib = n_calib;
    info->calibrated = 1;
  }
  double *score = calloc(2 * n, sizeof *score), *toq = NULL;
  fused *f = calloc(n, sizeof *f);
  dq_hit *tmp = calloc(n, sizeof *tmp);
  dq_status s = DQ_ERR_NOMEM;
  if (!score || !f || !tmp) {
    dq_error_set(err, s, "out of memory");
    goto done;
  }
  toq = in->toq ? score + n : NULL;
  /* passes of at most the trained context (and at most max_pass_tokens) */
  int limit = mi.n_ctx_train > 0 ? mi.n_ctx_train : mi.n_ctx;
  if (in->max_pass_tokens > 0 && in->max_pass_tokens < limit)
    limit = in->max_pass_tokens;
  int fixed = 2 * (int)(strlen(in->question) / 2 + 16) + 32; /* rough */
  size_t i0 = 0;
  while (i0 < n) {
    size_t i1 = i0;
    int used = fixed;
    while (i1 < n) {
      char *p = passage_text(i1, &hits[i1]);
      int nt = 0;
      int32_t *t = NULL;
      if (!p || dq_model_tokenize(m, p, strlen(p), 0, &t, &nt) != DQ_OK) {
        free(p);
        s = dq_error_set(err, DQ_ERR_NOMEM, "recall: cannot tokenize");
        goto done;
      }
      free(p);
      free(t);
      if (i1 > i0 && used + nt > limit)
        break;
      used += nt;
      i1++;
    }
    if ((s = one_pass(m, &ro, in->question, hits, i0, i1, score, toq, info,
                      err)))
      goto done;
    i0 = i1;
  }
  /* recall rank by the probe's attention alone, then fusion with the
   * retrieval rank (the input order). Not by dq_recall_combine, which finds
   * needles: on the 39 questions of tests/eval/run.py (SmolLM2, layers
   * 0.5:1, pool 10) ranking by both scores and fusing at weight 1 gives
   * hit@1 28% where the probe alone gives 67% (hybrid alone 67%); recall_toq
   * alone 2/39: in a pool of retrieved passages both scores follow the
   * passage's place in the prompt more than its content */
  for (size_t i = 0; i < n; i++)
    f[i] = (fused){score[i], i};
  qsort(f, n, sizeof *f, fused_desc);
  for (size_t r = 0; r < n; r++)
    hits[f[r].idx].recall_rank = (int32_t)r + 1;
  for (size_t i = 0; i < n; i++) {
    hits[i].recall_score = score[i];
    hits[i].recall_toq = toq ? toq[i] : 0;
    hits[i].retrieval_rank = (int32_t)i + 1;
    f[i] = (fused){(in->unranked ? 0 : 1.0 / (RRF_K + (double)i + 1)) +
                       (in->unranked ? 1 : in->weight) /
                           (RRF_K + hits[i].recall_rank),
                   i};
  }
  qsort(f, n, sizeof *f, fused_desc);
  for (size_t r = 0; r < n; r++)
    tmp[r] = hits[f[r].idx];
  memcpy(hits, tmp, n * sizeof *hits);
  info->ran = 1;
  s = DQ_OK;
done:
  info->ms = dq_now_ms() - t0;
  free(calib);
  free(score);
  free(f);
  free(tmp);
  return s;
}
