/*
 * needle.c - the needle trials of `docqa bench needle` (see needle.h for
 * how a trial is built): sentences of the text, prompts and spans, BM25,
 * and the all-layers recall pass of sweeps. No printing, no timing.
 */
#include "needle.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SENTENCE_BYTES 400 /* longer runs without a full stop are cut */
#define MAX_TERMS 32

/* ---- sentences of the text ----------------------------------------------- */

void needle_corpus_free(needle_corpus *c) {
  free(c->off);
  free(c->tok);
  memset(c, 0, sizeof *c);
}

/* Collapses whitespace runs into one space, then cuts after '.', '!' or '?'
 * followed by a space, and at MAX_SENTENCE_BYTES (at a space). */
dq_status needle_corpus_build(dq_model *m, const char *text, size_t len,
                              needle_corpus *c, dq_error *err) {
  memset(c, 0, sizeof *c);
  char *flat = malloc(len + 2);
  if (!flat)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = text[i];
    if (isspace((unsigned char)ch)) {
      if (n > 0 && flat[n - 1] != ' ')
        flat[n++] = ' ';
    } else {
      flat[n++] = ch;
    }
  }
  flat[n] = '\0';
  dq_strbuf tb = {0};
  int cap = 1024;
  c->off = malloc((size_t)(cap + 1) * sizeof *c->off);
  dq_status st = DQ_OK;
  if (!c->off) {
    st = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  c->off[0] = 0;
  size_t s0 = 0;
  while (s0 < n) {
    size_t e = s0, last_space = 0;
    for (; e < n && e - s0 < MAX_SENTENCE_BYTES; e++) {
      if (flat[e] == ' ')
        last_space = e;
      if ((flat[e] == '.' || flat[e] == '!' || flat[e] == '?') &&
          (e + 1 == n || flat[e + 1] == ' ')) {
        e++;
        break;
      }
    }
    if (e - s0 >= MAX_SENTENCE_BYTES && last_space > s0)
      e = last_space;
    /* " " + sentence, as it would follow another sentence */
    char *piece = malloc(e - s0 + 2);
    if (!piece) {
      st = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
    piece[0] = ' ';
    memcpy(piece + 1, flat + s0, e - s0);
    piece[e - s0 + 1] = '\0';
    int32_t *t = NULL;
    int nt = 0;
    st = dq_model_tokenize(m, piece, e - s0 + 1, 0, &t, &nt);
    free(piece);
    if (st) {
      dq_error_set(err, st, "tokenizing the text: %s", dq_model_errmsg(m));
      goto done;
    }
    if (nt > 0) {
      if (c->n == cap) {
        cap *= 2;
        int *no = realloc(c->off, (size_t)(cap + 1) * sizeof *no);
        if (!no) {
          free(t);
          st = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
          goto done;
        }
        c->off = no;
      }
      dq_strbuf_add(&tb, (const char *)t, (size_t)nt * sizeof *t);
      c->off[c->n + 1] = c->off[c->n] + nt;
      c->n++;
    }
    free(t);
    s0 = e;
    while (s0 < n && flat[s0] == ' ')
      s0++;
  }
  if (tb.oom) {
    st = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  c->tok = (int32_t *)tb.p;
  tb.p = NULL;
  if (c->n == 0)
    st = dq_error_set(err, DQ_ERR_ARG, "the text holds no sentences");
done:
  free(tb.p);
  free(flat);
  if (st)
    needle_corpus_free(c);
  return st;
}

/* ---- BM25 over the spans --------------------------------------------------- */

/* Next word (lowercased run of ASCII letters/digits) of s from *i into w. */
static int next_word(const char *s, size_t *i, char *w, size_t w_bytes) {
  while (s[*i] && !isalnum((unsigned char)s[*i]))
    (*i)++;
  if (!s[*i])
    return 0;
  size_t k = 0;
  while (s[*i] && isalnum((unsigned char)s[*i])) {
    if (k + 1 < w_bytes)
      w[k++] = (char)tolower((unsigned char)s[*i]);
    (*i)++;
  }
  w[k] = '\0';
  return 1;
}

/* score[i] = BM25 of `query` over texts[i], i < n. */
void needle_bm25(const char *query, char *const *texts, int n, float *score) {
  char terms[MAX_TERMS][64], w[64];
  int nq = 0;
  size_t i = 0;
  while (nq < MAX_TERMS && next_word(query, &i, w, sizeof w)) {
    int dup = 0;
    for (int k = 0; k < nq; k++)
      dup |= strcmp(terms[k], w) == 0;
    if (!dup)
      strcpy(terms[nq++], w);
  }
  int *tf = calloc((size_t)n * MAX_TERMS, sizeof *tf);
  int *dl = calloc((size_t)n + 1, sizeof *dl);
  if (!tf || !dl) {
    for (int s = 0; s < n; s++)
      score[s] = 0;
    free(tf);
    free(dl);
    return;
  }
  int df[MAX_TERMS] = {0};
  double total = 0;
  for (int s = 0; s < n; s++) {
    i = 0;
    while (next_word(texts[s], &i, w, sizeof w)) {
      dl[s]++;
      for (int k = 0; k < nq; k++)
        if (strcmp(terms[k], w) == 0)
          tf[(size_t)s * MAX_TERMS + k]++;
    }
    total += dl[s];
    for (int k = 0; k < nq; k++)
      df[k] += tf[(size_t)s * MAX_TERMS + k] > 0;
  }
  const double k1 = 1.2, b = 0.75, avgdl = n ? total / n : 1;
  for (int s = 0; s < n; s++) {
    double sc = 0;
    for (int k = 0; k < nq; k++) {
      double f = tf[(size_t)s * MAX_TERMS + k];
      if (f == 0)
        continue;
      double idf = log(1 + (n - df[k] + 0.5) / (df[k] + 0.5));
      sc += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * dl[s] / avgdl));
    }
    score[s] = (float)sc;
  }
  free(tf);
  free(dl);
}

/* 1 + the spans scoring at least as high as span `t` (ties count against). */
int needle_rank(const float *score, int n, int t) {
  int r = 1;
  for (int i = 0; i < n; i++)
    if (i != t && score[i] >= score[t])
      r++;
  return r;
}

/* ---- trials ----------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static const char *const colours[] = {"blue",  "red",   "green", "amber",
                                      "black", "white", "violet", "silver"};
#define N_COLOURS (int)(sizeof colours / sizeof *colours)

void needle_trial_free(needle_trial *t) {
  free(t->tok);
  free(t->spans);
  t->tok = NULL;
  t->spans = NULL;
}

static dq_status append_text(dq_model *m, const char *s, int add_special,
                             int32_t *tok, int *n, int cap, dq_span *sp,
                             dq_error *err) {
  int32_t *t = NULL;
  int nt = 0;
  dq_status st = dq_model_tokenize(m, s, strlen(s), add_special, &t, &nt);
  if (st)
    return dq_error_set(err, st, "tokenizing '%s': %s", s, dq_model_errmsg(m));
  if (*n + nt > cap) {
    free(t);
    return dq_error_set(err, DQ_ERR_LIMIT, "prompt over %d tokens", cap);
  }
  memcpy(tok + *n, t, (size_t)nt * sizeof *t);
  sp->begin = *n;
  *n += nt;
  sp->end = *n;
  free(t);
  return DQ_OK;
}

/* Builds the trial at length L, depth fraction f. */
dq_status needle_trial_make(dq_model *m, const needle_corpus *c, int L, double f,
                            int span_tokens, uint64_t seed, needle_trial *t,
                            dq_error *err) {
  memset(t, 0, sizeof *t);
  uint64_t rng = seed;
  t->key = 10000 + (int)(splitmix(&rng) % 90000);
  t->colour = colours[splitmix(&rng) % N_COLOURS];
  int start = (int)(splitmix(&rng) % (uint64_t)c->n);
  snprintf(t->question, sizeof t->question,
           "What is the secret passkey for the %s vault?", t->colour);
  char qline[192], pline[192], needle[160];
  snprintf(qline, sizeof qline, "Question: %s", t->question);
  snprintf(pline, sizeof pline, " Question: %s", t->question);
  snprintf(needle, sizeof needle,
           " The secret passkey for the %s vault is %d.", t->colour, t->key);
  int cap = L + 64;
  t->tok = malloc((size_t)cap * sizeof *t->tok);
  /* pieces: haystack sentences (index into c, tokens taken) + the needle */
  int max_pieces = L + 2;
  int *p_sent = malloc((size_t)max_pieces * sizeof *p_sent);
  int *p_len = malloc((size_t)max_pieces * sizeof *p_len);
  int *p_begin = malloc((size_t)(max_pieces + 1) * sizeof *p_begin);
  t->spans = malloc((size_t)max_pieces * sizeof *t->spans);
  dq_status st = DQ_OK;
  int32_t *ntok = NULL, *ptok = NULL;
  int n_needle = 0, n_probe = 0;
  if (!t->tok || !p_sent || !p_len || !p_begin || !t->spans) {
    st = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((st = append_text(m, qline, 1, t->tok, &t->n, cap, &t->q, err)))
    goto done;
  if ((st = dq_model_tokenize(m, needle, strlen(needle), 0, &ntok,
                              &n_needle)) ||
      (st = dq_model_tokenize(m, pline, strlen(pline), 0, &ptok, &n_probe))) {
    dq_error_set(err, st, "tokenizing: %s", dq_model_errmsg(m));
    goto done;
  }
  int hay = L - t->n - n_needle - n_probe;
  if (hay < 2 * span_tokens) {
    st = dq_error_set(err, DQ_ERR_ARG,
                      "%d tokens leave %d for the haystack, under two spans of "
                      "%d: use longer --lengths or smaller --span-tokens",
                      L, hay, span_tokens);
    goto done;
  }
  /* haystack sentences, the last one cut to fill exactly `hay` tokens */
  int n_p = 0, got = 0;
  for (int s = start; got < hay; s = (s + 1) % c->n) {
    int len = c->off[s + 1] - c->off[s];
    if (len > hay - got)
      len = hay - got;
    p_sent[n_p] = s;
    p_len[n_p++] = len;
    got += len;
  }
  /* the needle before the first sentence starting at >= f of the haystack */
  int at = 0;
  for (int cum = 0; at < n_p && cum < f * hay; at++)
    cum += p_len[at];
  memmove(p_sent + at + 1, p_sent + at, (size_t)(n_p - at) * sizeof *p_sent);
  memmove(p_len + at + 1, p_len + at, (size_t)(n_p - at) * sizeof *p_len);
  p_sent[at] = -1;
  p_len[at] = n_needle;
  n_p++;
  for (int i = 0; i < n_p; i++) {
    p_begin[i] = t->n;
    const int32_t *src = p_sent[i] < 0 ? ntok : c->tok + c->off[p_sent[i]];
    memcpy(t->tok + t->n, src, (size_t)p_len[i] * sizeof *src);
    t->n += p_len[i];
  }
  p_begin[n_p] = t->n;
  /* spans: runs of whole pieces of >= span_tokens; a short tail joins the
   * span before it */
  int b = 0;
  for (int i = 0; i < n_p; i++) {
    if (p_begin[i + 1] - p_begin[b] >= span_tokens || i == n_p - 1) {
      int end = p_begin[i + 1];
      if (p_begin[i + 1] - p_begin[b] < span_tokens / 2 && t->n_spans > 0)
        t->spans[t->n_spans - 1].end = end;
      else
        t->spans[t->n_spans++] = (dq_span){p_begin[b], end};
      b = i + 1;
    }
  }
  int needle_pos = p_begin[at];
  for (int i = 0; i < t->n_spans; i++)
    if (t->spans[i].begin <= needle_pos && needle_pos < t->spans[i].end)
      t->needle_span = i;
  memcpy(t->tok + t->n, ptok, (size_t)n_probe * sizeof *ptok);
  t->probe = (dq_span){t->n, t->n + n_probe};
  t->n += n_probe;
done:
  free(ntok);
  free(ptok);
  free(p_sent);
  free(p_len);
  free(p_begin);
  if (st)
    needle_trial_free(t);
  return st;
}


/* ---- the all-layers recall pass --------------------------------------------- */

dq_status needle_layer_mass(dq_model *m, const needle_trial *t,
                            const int32_t *probe, int n_probe,
                            const dq_gsm_opts *gsm, float *mass,
                            dq_error *err) {
  dq_model_info info;
  dq_model_get_info(m, &info);
  const int32_t *tok = t->tok;
  int n = t->n;
  dq_span pr = t->probe;
  int32_t *alt = NULL;
  if (probe) {
    n = t->probe.begin + n_probe;
    if (!(alt = malloc((size_t)n * sizeof *alt)))
      return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    memcpy(alt, t->tok, (size_t)t->probe.begin * sizeof *alt);
    memcpy(alt + t->probe.begin, probe, (size_t)n_probe * sizeof *alt);
    tok = alt;
    pr = (dq_span){t->probe.begin, n};
  }
  /* as recall.c's pass: GSM from the first token, the question pinned */
  dq_gsm_opts g = *gsm;
  int32_t pin[2] = {t->q.begin, t->q.end};
  g.enabled = 1;
  g.min_tokens = 0;
  g.pinned = pin;
  g.n_pinned = 1;
  dq_seq *s = NULL;
  dq_status st = dq_seq_new_gsm(m, n, &g, &s);
  if (st) {
    dq_error_set(err, st, "%s", dq_model_errmsg(m));
    goto done;
  }
  if ((st = dq_seq_stats_begin(s, pr.begin, pr.end)) ||
      (st = dq_seq_eval(s, tok, n, DQ_LOGITS_NONE))) {
    dq_error_set(err, st, "recall pass: %s", dq_seq_errmsg(s));
    goto done;
  }
  double norm = pr.end - pr.begin;
  for (int l = 0; l < info.n_layer; l++)
    for (int h = 0; h < info.n_head; h++) {
      const float *row = NULL;
      int n_pos = 0;
      if ((st = dq_seq_stats_read(s, l, h, &row, &n_pos))) {
        dq_error_set(err, st, "recall pass: %s", dq_seq_errmsg(s));
        goto done;
      }
      float *out = mass + ((size_t)l * info.n_head + h) * t->n_spans;
      for (int i = 0; i < t->n_spans; i++) {
        double a = 0;
        for (int p = t->spans[i].begin; p < t->spans[i].end && p < n_pos; p++)
          a += row[p];
        out[i] = (float)(a / norm);
      }
    }
done:
  dq_seq_free(s);
  free(alt);
  return st;
}
