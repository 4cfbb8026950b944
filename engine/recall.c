/*
 * recall.c - coarse recall (engine.h dq_model_recall): one GSM pass over a
 * long prompt (question, passages, ..., the question again as a probe)
 * scores each passage by the attention the probe pays to it, and by the
 * attention the passage pays to the pinned question.
 *
 * The pass always runs on GSM (min_tokens 0) with the question pinned.
 * Probe mass reaches evicted tokens only through what the cache kept:
 * anchors, window tokens, and memory slots, whose mass is spread over the
 * source ranges they stand for (gsm.c). Calibration subtracts the scores of
 * the same pass with a content-free probe, removing the position and
 * recency bias every probe shares; the prefix up to the probe's chunk is
 * read once and the cache snapshotted there, so the second probe costs one
 * chunk, not a second pass. The pass runs only the layers up to
 * the last one read (no logits are needed), so reading the lower half of
 * the layers costs about half a prefill. Not here: how spans are chosen or the
 * prompt is built (pipeline/).
 */
#include "gsm.h"
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dq_recall_opts_init(dq_recall_opts *o) {
  memset(o, 0, sizeof *o);
  dq_gsm_opts_init(&o->gsm);
  /* bench needle, Gemma 3 270M at 16k, 5 depths: the needle's toq rank
   * 1/1/1/1/2 over its 4 best tokens vs 1/2/3/3/3 over all of them */
  o->toq_top = 4;
  o->toq_detrend = 1;
}

static int span_ok(dq_span sp, int n) {
  return sp.begin >= 0 && sp.end >= sp.begin && sp.end <= n;
}

#define TOQ_SAMPLES 64 /* most values a detrending median looks at */
#define TOQ_EPS 1e-6f   /* keeps the ratio finite where the text pays 0 */

static int cmp_float(const void *x, const void *y) {
  float a = *(const float *)x, b = *(const float *)y;
  return (a > b) - (a < b);
}

/* out[p - lo] = v[p] / (median of v around p + TOQ_EPS), p in [lo, hi): the
 * neighbourhood is the tokens within max(8, d / 2) of p, d = p's distance
 * to the question's end q_end (wider far from the question, where the mass
 * changes slowly; narrow next to it, where it falls steeply), clipped to
 * [lo, hi), the median taken over at most TOQ_SAMPLES evenly spaced ones.
 * A token that attends to the question much more than the tokens at about
 * its distance scores high, whatever that distance: the tokens right after
 * the question attend to it by proximity alone (bench needle, raw: the
 * first span outranked the needle at nearly every depth). */
static void detrend(const float *v, int lo, int hi, int q_end, float *out,
                    float *smp) {
  for (int p = lo; p < hi; p++) {
    int d = p - q_end > 0 ? p - q_end : 0, w = d / 2 > 8 ? d / 2 : 8;
    int a = p - w > lo ? p - w : lo, b = p + w + 1 < hi ? p + w + 1 : hi;
    int step = (b - a + TOQ_SAMPLES - 1) / TOQ_SAMPLES, n = 0;
    for (int x = a; x < b; x += step)
      smp[n++] = v[x];
    qsort(smp, (size_t)n, sizeof *smp, cmp_float);
    float med = n % 2 ? smp[n / 2] : 0.5f * (smp[n / 2 - 1] + smp[n / 2]);
    out[p - lo] = v[p] / (med + TOQ_EPS);
  }
}

/* Adds the probe's mass per span (and, with tq, the spans' mass to the
 * question) from the statistics of s into ps / tq. */
static dq_status accumulate(dq_model *m, dq_seq *s, const dq_span *spans,
                            int n_spans, dq_span question, dq_span probe,
                            const dq_recall_opts *o, int l0, int l1,
                            float *ps, float *tq) {
  const dq_hparams *hp = &m->hp;
  int p_lo = s->n_ctx, p_hi = 0;
  for (int i = 0; i < n_spans; i++) {
    p_lo = spans[i].begin < p_lo ? spans[i].begin : p_lo;
    p_hi = spans[i].end > p_hi ? spans[i].end : p_hi;
  }
  if (p_hi > s->n_ctx)
    p_hi = s->n_ctx;
  /* per position: mass to the question; then room for the detrended
   * values, one span's copy (a span lies inside [p_lo, p_hi)) and the
   * median's samples */
  float *tokq = NULL;
  size_t nw = p_hi > p_lo ? (size_t)(p_hi - p_lo) : 0;
  if (tq && s->qstats &&
      !(tokq = calloc((size_t)s->n_ctx + 2 * nw + TOQ_SAMPLES, sizeof *tokq)))
    return dq_error_set(&m->err, DQ_ERR_NOMEM, "recall: out of memory");
  int nh = o->heads ? o->n_heads : hp->n_head;
  float norm = (float)(l1 - l0) * (float)nh *
               (float)(probe.end > probe.begin ? probe.end - probe.begin : 1);
  for (int l = l0; l < l1; l++) {
    for (int hi = 0; hi < nh; hi++) {
      int h = o->heads ? o->heads[hi] : hi;
      const float *mass = NULL;
      int n_pos = 0;
      dq_status st = dq_seq_stats_read(s, l, h, &mass, &n_pos);
      if (st) {
        free(tokq);
        return dq_error_set(&m->err, st, "recall: %s", dq_seq_errmsg(s));
      }
      const float *qrow = NULL;
      int n_q = 0;
      if (tokq && (st = dq_seq_qstats_read(s, l, h, &qrow, &n_q))) {
        free(tokq);
        return dq_error_set(&m->err, st, "recall: %s", dq_seq_errmsg(s));
      }
      for (int i = 0; i < n_spans; i++) {
        double a = 0;
        for (int p = spans[i].begin; p < spans[i].end && p < n_pos; p++)
          a += mass[p];
        ps[i] += (float)(a / norm);
      }
      /* per token: its mass to the question, averaged over layers/heads
       * (every position the spans cover, once: spans may overlap) */
      for (int p = p_lo; tokq && qrow && p < p_hi && p < n_q; p++)
        tokq[p] += qrow[p] / (float)((l1 - l0) * nh);
    }
  }
  /* each token's mass relative to the text around it (toq_detrend) */
  float *rel = tokq ? tokq + s->n_ctx : NULL;
  if (tokq && o->toq_detrend)
    detrend(tokq, p_lo, p_hi, question.end, rel, rel + 2 * nw);
  else if (tokq)
    memcpy(rel, tokq + p_lo, nw * sizeof *rel);
  /* a span's score: the mean over its tokens, or over its toq_top highest
   * (a needle sentence is a few tokens in a long span) */
  for (int i = 0; tokq && i < n_spans; i++) {
    int len = spans[i].end - spans[i].begin, k = len;
    if (len <= 0)
      continue;
    const float *v = rel + (spans[i].begin - p_lo);
    double b = 0;
    if (o->toq_top > 0 && o->toq_top < len) {
      /* the k highest: k selection passes over a copy (k is small) */
      k = o->toq_top;
      float *c = rel + nw;
      memcpy(c, v, (size_t)len * sizeof *c);
      for (int a = 0; a < k; a++) {
        int best = a;
        for (int t = a + 1; t < len; t++)
          if (c[t] > c[best])
            best = t;
        float x = c[a];
        c[a] = c[best];
        c[best] = x;
        b += c[a];
      }
    } else {
      for (int t = 0; t < len; t++)
        b += v[t];
    }
    tq[i] += (float)(b / k);
  }
  free(tokq);
  return DQ_OK;
}

/* A GSM sequence for one recall pass (question pinned, GSM from the first
 * token) that runs only the layers up to the last one read. */
static dq_status pass_seq(dq_model *m, const dq_gsm_opts *g, int n_ctx,
                          int l1, dq_seq **out) {
  dq_status st = dq_seq_new_gsm(m, n_ctx, g, out);
  if (!st)
    (*out)->layer_stop = l1; /* the layers above are not run */
  return st;
}

/* One pass: adds probe and question mass per span into ps / tq. With
 * calib (n_calib tokens in place of the probe) the content-free probe is
 * read too, its mass per span into cal: the cache is snapshotted at the
 * last chunk boundary before the probe, the probe's chunk and the probe
 * read, the cache restored and that chunk read again with the content-free
 * probe (when the probe's chunk starts the input there is nothing to share:
 * a fresh sequence reads it). The prefix runs once, and both probes see the
 * cache exactly as a single pass over their input would (same chunks, same
 * compression). */
static dq_status recall_pass(dq_model *m, const int32_t *tokens, int n,
                             const dq_span *spans, int n_spans,
                             dq_span question, dq_span probe,
                             const dq_recall_opts *o, float *ps, float *tq,
                             const int32_t *calib, int n_calib, float *cal) {
  const dq_hparams *hp = &m->hp;
  dq_gsm_opts g = o->gsm;
  int32_t pin[2] = {question.begin, question.end};
  g.enabled = 1;
  g.min_tokens = 0;
  g.pinned = pin;
  g.n_pinned = question.end > question.begin ? 1 : 0;
  int n_ctx = calib && probe.begin + n_calib > n ? probe.begin + n_calib : n;
  int chunk = g.chunk_size < n_ctx ? g.chunk_size : n_ctx; /* the batch */
  int at = calib ? probe.begin / chunk * chunk : 0; /* snapshot position */
  int l0 = o->layer_begin, l1 = o->layer_end;
  if (l0 == 0 && l1 == 0)
    l1 = hp->n_layer;
  dq_seq *s = NULL;
  dq_gsm_snap *snap = NULL;
  int32_t *alt = NULL;
  dq_status st = pass_seq(m, &g, n_ctx, l1, &s);
  if (st)
    return st;
  if ((st = dq_seq_stats_begin(s, probe.begin, probe.end)) ||
      (tq && (st = dq_seq_track_question(s))) ||
      (at > 0 && (st = dq_seq_eval(s, tokens, at, DQ_LOGITS_NONE)))) {
    dq_error_set(&m->err, st, "recall: %s", dq_seq_errmsg(s));
    goto done;
  }
  /* a sequence on full attention (a backend without GSM) is cut back
   * instead of restored */
  if (at > 0 && s->gsm && (st = dq_gsm_snapshot(s->gsm, &snap))) {
    dq_error_set(&m->err, st, "recall: cannot copy the cache");
    goto done;
  }
  if ((st = dq_seq_eval(s, tokens + at, n - at, DQ_LOGITS_NONE))) {
    dq_error_set(&m->err, st, "recall: %s", dq_seq_errmsg(s));
    goto done;
  }
  if ((st = accumulate(m, s, spans, n_spans, question, probe, o, l0, l1, ps,
                      tq)) ||
      !calib)
    goto done;
  /* the probe's chunk again, the content-free probe in place of the probe */
  int na = probe.begin - at + n_calib;
  if (!(alt = malloc((size_t)na * sizeof *alt))) {
    st = dq_error_set(&m->err, DQ_ERR_NOMEM, "recall: out of memory");
    goto done;
  }
  memcpy(alt, tokens + at, (size_t)(probe.begin - at) * sizeof *alt);
  memcpy(alt + probe.begin - at, calib, (size_t)n_calib * sizeof *alt);
  if (snap) {
    if ((st = dq_gsm_restore(s->gsm, snap))) {
      dq_error_set(&m->err, st, "recall: cannot restore the cache");
      goto done;
    }
    s->n_past = at;
    s->gsm->track.qstats = NULL; /* the spans' mass to the question is read */
  } else if (at > 0) {
    if ((st = dq_seq_truncate(s, at))) {
      dq_error_set(&m->err, st, "recall: %s", dq_seq_errmsg(s));
      goto done;
    }
  } else {
    dq_seq_free(s);
    s = NULL;
    if ((st = pass_seq(m, &g, n_ctx, l1, &s)))
      goto done;
  }
  dq_span cprobe = {probe.begin, probe.begin + n_calib};
  if ((st = dq_seq_stats_begin(s, cprobe.begin, cprobe.end)) ||
      (st = dq_seq_eval(s, alt, na, DQ_LOGITS_NONE))) {
    dq_error_set(&m->err, st, "recall: %s", dq_seq_errmsg(s));
    goto done;
  }
  st = accumulate(m, s, spans, n_spans, question, cprobe, o, l0, l1, cal,
                  NULL);
done:
  free(alt);
  dq_gsm_snap_free(snap);
  dq_seq_free(s);
  return st;
}

dq_status dq_model_recall(dq_model *m, const int32_t *tokens, int n,
                          const dq_span *spans, int n_spans, dq_span question,
                          dq_span probe, const dq_recall_opts *o,
                          float *probe_score, float *to_question) {
  if (!m)
    return DQ_ERR_ARG;
  dq_recall_opts def;
  if (!o) {
    dq_recall_opts_init(&def);
    o = &def;
  }
  const dq_hparams *hp = &m->hp;
  if (!tokens || n <= 0 || n_spans < 0 || (n_spans && (!spans || !probe_score)))
    return dq_error_set(&m->err, DQ_ERR_ARG, "recall: empty input");
  if (!span_ok(question, n) || !span_ok(probe, n) || probe.end != n ||
      probe.end == probe.begin)
    return dq_error_set(&m->err, DQ_ERR_ARG,
                        "recall: question [%d, %d) or probe [%d, %d) outside "
                        "the %d tokens (the probe must end the input)",
                        question.begin, question.end, probe.begin, probe.end,
                        n);
  for (int i = 0; i < n_spans; i++)
    if (!span_ok(spans[i], n))
      return dq_error_set(&m->err, DQ_ERR_ARG,
                          "recall: span %d [%d, %d) outside the %d tokens", i,
                          spans[i].begin, spans[i].end, n);
  int l0 = o->layer_begin, l1 = o->layer_end;
  if (!(l0 == 0 && l1 == 0) && (l0 < 0 || l1 <= l0 || l1 > hp->n_layer))
    return dq_error_set(&m->err, DQ_ERR_ARG,
                        "recall: layers [%d, %d) outside the model's %d", l0,
                        l1, hp->n_layer);
  if (o->heads) {
    if (o->n_heads <= 0)
      return dq_error_set(&m->err, DQ_ERR_ARG, "recall: empty head list");
    for (int i = 0; i < o->n_heads; i++)
      if (o->heads[i] < 0 || o->heads[i] >= hp->n_head)
        return dq_error_set(&m->err, DQ_ERR_ARG,
                            "recall: head %d outside the model's %d",
                            o->heads[i], hp->n_head);
  }
  if (o->calib_probe && o->n_calib <= 0)
    return dq_error_set(&m->err, DQ_ERR_ARG, "recall: empty calibration probe");
  for (int i = 0; i < n_spans; i++) {
    probe_score[i] = 0;
    if (to_question)
      to_question[i] = 0;
  }
  float *cal = NULL;
  if (o->calib_probe &&
      !(cal = calloc((size_t)n_spans + 1, sizeof *cal)))
    return dq_error_set(&m->err, DQ_ERR_NOMEM, "recall: out of memory");
  dq_status st = recall_pass(m, tokens, n, spans, n_spans, question, probe, o,
                             probe_score, to_question, o->calib_probe,
                             o->n_calib, cal);
  for (int i = 0; st == DQ_OK && cal && i < n_spans; i++)
    probe_score[i] -= cal[i];
  free(cal);
  return st;
}

/* (x - median) / median absolute deviation, over n values (the mean
 * absolute deviation where over half of them are equal, 1 where all are). */
static void robust_z(const float *x, int n, float w, float *tmp, float *out) {
  memcpy(tmp, x, (size_t)n * sizeof *tmp);
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_float);
  float med = n % 2 ? tmp[n / 2] : 0.5f * (tmp[n / 2 - 1] + tmp[n / 2]);
  double mean_dev = 0;
  for (int i = 0; i < n; i++) {
    tmp[i] = fabsf(x[i] - med);
    mean_dev += tmp[i];
  }
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_float);
  double dev = n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
  if (!(dev > 0))
    dev = mean_dev / n;
  if (!(dev > 0))
    dev = 1;
  for (int i = 0; i < n; i++)
    out[i] += (float)(w * ((x[i] - med) / dev));
}

dq_status dq_recall_combine(const float *probe_score, const float *to_question,
                            int n, float probe_weight, float *out) {
  if (n <= 0)
    return DQ_OK;
  if (!probe_score || !to_question || !out)
    return DQ_ERR_ARG;
  float *tmp = malloc((size_t)n * sizeof *tmp);
  if (!tmp)
    return DQ_ERR_NOMEM;
  memset(out, 0, (size_t)n * sizeof *out);
  robust_z(to_question, n, 1, tmp, out);
  robust_z(probe_score, n, probe_weight, tmp, out);
  free(tmp);
  return DQ_OK;
}
