/*
 * rank.c - "dq_bm25", the FTS5 ranking function BM25 search orders by: Okapi
 * BM25 (k1 = 1.2, b = 0.75, every column weight 1, the same constants as
 * FTS5's own bm25()) over query terms rather than phrases. A term may be
 * spelt by several phrases of the query: a word and its stem key (see
 * tokenizer.c: prose is indexed by stems, code by words, so "governs" is
 * ("governs" OR "\1govern")). Counted as separate phrases, each spelling
 * would have an idf of its own: a word common in code but rare in a
 * repository's few prose files would weigh far more in the prose, and a
 * README would outrank the code for every question. Here a term's
 * document frequency is the sum over its phrases (a chunk holds only one
 * of the spellings: prose has no unstemmed word that has a stem key, code
 * no stem keys) and its frequency in a chunk the sum of theirs.
 *
 *   dq_bm25(chunks_fts, groups)
 *
 * groups: one number per phrase of the query, in the query's order, the
 * term each belongs to ("0 0 1 2 2"), then optionally '|' and the terms
 * that are two adjacent words of the query ("3:1,2": term 3 is the
 * phrase of terms 1 and 2), whose idf is what they add to the rarer of
 * the two (never below 0); dq__fts_query_groups writes it. A missing or
 * malformed list makes every phrase its own term (FTS5's bm25).
 * Returns minus the score, so ORDER BY ascending puts the best first.
 */
#include "index_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K1 1.2
#define B 0.75

typedef struct rank_data {
  int n_phrase, n_term;
  int *term;   /* per phrase: its term */
  double *idf; /* per term */
  double *tf;  /* per term: scratch for the current row */
  double avgdl;
} rank_data;

static void rank_data_free(void *p) {
  rank_data *d = p;
  if (!d)
    return;
  free(d->term);
  free(d->idf);
  free(d->tf);
  free(d);
}

static int count_row(const Fts5ExtensionApi *api, Fts5Context *fts,
                     void *user) {
  (void)api;
  (void)fts;
  (*(int64_t *)user)++;
  return SQLITE_OK;
}

/* Phrase i's term from the groups text, or -1 when it is malformed. */
static int parse_groups(const char *g, int n_phrase, int *term) {
  int max = -1;
  const char *p = g;
  for (int i = 0; i < n_phrase; i++) {
    while (*p == ' ')
      p++;
    if (*p < '0' || *p > '9')
      return -1;
    char *end;
    long v = strtol(p, &end, 10);
    if (v < 0 || v >= n_phrase)
      return -1;
    p = end;
    term[i] = (int)v;
    if (v > max)
      max = (int)v;
  }
  while (*p == ' ')
    p++;
  return *p && *p != '|' ? -1 : max + 1;
}

/* The pairs after the groups' '|' ("P:A,B ..."): pair[t] = A * n_term + B
 * + 1 for pair term P (0: not a pair); malformed entries are left out. */
static void parse_pairs(const char *g, int n_term, int64_t *pair) {
  const char *p = strchr(g, '|');
  while (p && *p) {
    char *end;
    long t = strtol(p + 1, &end, 10), a, b;
    if (*end != ':')
      return;
    a = strtol(end + 1, &end, 10);
    if (*end != ',')
      return;
    b = strtol(end + 1, &end, 10);
    if (t >= 0 && t < n_term && a >= 0 && a < n_term && b >= 0 && b < n_term &&
        t != a && t != b)
      pair[t] = (int64_t)a * n_term + b + 1;
    p = *end == ' ' ? end : NULL;
  }
}

/* The query's constants, computed once per MATCH and kept as aux data. */
static int rank_setup(const Fts5ExtensionApi *api, Fts5Context *fts,
                      const char *groups, rank_data **out) {
  rank_data *d = calloc(1, sizeof *d);
  if (!d)
    return SQLITE_NOMEM;
  d->n_phrase = api->xPhraseCount(fts);
  int np = d->n_phrase ? d->n_phrase : 1;
  d->term = calloc((size_t)np, sizeof *d->term);
  d->idf = calloc((size_t)np, sizeof *d->idf);
  d->tf = calloc((size_t)np, sizeof *d->tf);
  int64_t *hits = calloc((size_t)np, sizeof *hits);
  sqlite3_int64 n_row = 0, n_tok = 0;
  int rc = d->term && d->idf && d->tf && hits ? SQLITE_OK : SQLITE_NOMEM;
  if (rc == SQLITE_OK) {
    d->n_term = groups ? parse_groups(groups, d->n_phrase, d->term) : -1;
    if (d->n_term < 0) {
      d->n_term = d->n_phrase;
      for (int i = 0; i < d->n_phrase; i++)
        d->term[i] = i;
    }
    rc = api->xRowCount(fts, &n_row);
  }
  if (rc == SQLITE_OK)
    rc = api->xColumnTotalSize(fts, -1, &n_tok);
  for (int i = 0; rc == SQLITE_OK && i < d->n_phrase; i++) {
    int64_t n = 0;
    rc = api->xQueryPhrase(fts, i, &n, count_row);
    hits[d->term[i]] += n;
  }
  if (rc == SQLITE_OK) {
    double n_rows = (double)(n_row > 0 ? n_row : 1);
    d->avgdl = (double)n_tok / n_rows;
    for (int t = 0; t < d->n_term; t++) {
      double n = (double)hits[t];
      double idf = log((n_rows - n + 0.5) / (n + 0.5));
      d->idf[t] = idf > 1e-6 ? idf : 1e-6; /* common terms still count */
    }
    /* a pair of words weighs what it tells beyond its rarer word: much
     * for a name whose words are common apart ("Gorseford Marine"),
     * nothing for words that come together anyway ("Disclosure Period") */
    int64_t *pair = NULL;
    if (groups && strchr(groups, '|') &&
        !(pair = calloc((size_t)d->n_term, sizeof *pair)))
      rc = SQLITE_NOMEM;
    if (pair) {
      parse_pairs(groups, d->n_term, pair);
      for (int t = 0; t < d->n_term; t++)
        if (pair[t]) {
          int a = (int)((pair[t] - 1) / d->n_term);
          int b = (int)((pair[t] - 1) % d->n_term);
          double rarer = d->idf[a] > d->idf[b] ? d->idf[a] : d->idf[b];
          d->idf[t] = d->idf[t] > rarer ? d->idf[t] - rarer : 0;
        }
    }
    free(pair);
  }
  free(hits);
  if (rc != SQLITE_OK) {
    rank_data_free(d);
    return rc;
  }
  *out = d;
  return SQLITE_OK;
}

static void dq_bm25(const Fts5ExtensionApi *api, Fts5Context *fts,
                    sqlite3_context *ctx, int n_val, sqlite3_value **val) {
  rank_data *d = api->xGetAuxdata(fts, 0);
  int rc = SQLITE_OK;
  if (!d) {
    const char *groups =
        n_val > 0 ? (const char *)sqlite3_value_text(val[0]) : NULL;
    if ((rc = rank_setup(api, fts, groups, &d)) == SQLITE_OK)
      rc = api->xSetAuxdata(fts, d, rank_data_free);
  }
  int n_inst = 0, len = 0;
  if (rc == SQLITE_OK)
    rc = api->xInstCount(fts, &n_inst);
  if (rc == SQLITE_OK)
    rc = api->xColumnSize(fts, -1, &len);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  for (int t = 0; t < d->n_term; t++)
    d->tf[t] = 0;
  for (int i = 0; i < n_inst && rc == SQLITE_OK; i++) {
    int phrase, col, off;
    rc = api->xInst(fts, i, &phrase, &col, &off);
    if (rc == SQLITE_OK && phrase >= 0 && phrase < d->n_phrase)
      d->tf[d->term[phrase]] += 1;
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  double norm = K1 * (1 - B + B * (double)len / (d->avgdl > 0 ? d->avgdl : 1));
  double score = 0;
  for (int t = 0; t < d->n_term; t++)
    if (d->tf[t] > 0)
      score += d->idf[t] * d->tf[t] * (K1 + 1) / (d->tf[t] + norm);
  sqlite3_result_double(ctx, -score);
}

int dq__rank_create(fts5_api *api) {
  return api->xCreateFunction(api, "dq_bm25", NULL, dq_bm25, NULL);
}
