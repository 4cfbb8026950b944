/*
 * search.c - hybrid retrieval: BM25 (FTS5) top-N, dense (FAISS) top-N and
 * the chunks of the symbols the query names (search_sym.c), fused (see
 * below), with path/kind filters, returning each chunk's text, location
 * and per-signal ranks and scores.
 *
 * BM25 ranks by dq_bm25 (rank.c), which counts a word and its stem key as
 * one term; among its candidates, a contents or index page
 * (dq_listing_text) counts half its score (listings_down).
 *
 * Fusion, in two steps:
 * - BM25 and dense fuse by a convex combination of their scores, each
 *   min-max normalised over its own candidates (a chunk the other leg did
 *   not return gets that leg's 0): cc = w nbm25 + (1 - w) ndense, w the
 *   lexical weight (DQ_LEXICAL_WEIGHT). Ordered by cc (ties: BM25 rank, then
 *   dense rank, then chunk id) that is the retrieval rank. Bruch, Gai and
 *   Ingber (ACM TOIS 2023, "An Analysis of Fusion Functions for Hybrid
 *   Retrieval") found such a combination better than RRF; here it was
 *   better on prose and code alike (docs/benchmarks.md): RRF let a dense
 *   ranking that hardly tells a clause from its document's title page
 *   outvote a clear BM25 winner.
 * - RRF with the symbol signal: score(c) = legs / (rrf_k + retrieval rank)
 *   + the symbol term, legs the number of legs (BM25, dense) that returned
 *   candidates, so a chunk first in both weighs as two first ranks did, and
 *   BM25 alone ranks exactly as before the combination. The symbol term is
 *   1 / (rrf_k + rank), ranks 1-based; a strong symbol's chunks weigh
 *   1 / (DQ__SYM_STRONG_K + rank) instead, rank that of its name's first
 *   chunk of the same kind (one term defined in two documents: both alike,
 *   the text legs decide), a named file's 1 / (2 DQ__SYM_STRONG_K) each.
 * Ties are broken by chunk id (older first) so results are deterministic.
 *
 * Filters apply before ranking: BM25 filters in SQL; dense asks FAISS for
 * more neighbours (x4 each round) until n_dense pass the filter or the
 * index is exhausted. Dense ids whose chunk no longer exists (a reader's
 * vector index older than the database) are skipped when the results are
 * read (so they may take a dense rank without being returned). all_chunks
 * skips ranking and lists documents' chunks in order.
 */
#include "index_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a listing's BM25 score counts (listings_down). */
#define LISTING_WEIGHT 0.5

typedef struct cand {
  int64_t id;
  int32_t bm25_rank, dense_rank, sym_rank, ret_rank;
  const dq__sym_hit *sym;
  double bm25_score, dense_score, cc, score;
} cand;

/* Whether filter p (a folder when it ends in '/') takes path. */
static int path_ok(const char *p, size_t n, const char *path) {
  return n && p[n - 1] == '/' ? strncmp(path, p, n) == 0 : strcmp(path, p) == 0;
}

int dq__filter_ok(dq_index *idx, const dq_search_opts *o, const char *root,
                  const char *path, const char *kind) {
  if (!o)
    return 1;
  if (o->kind && (!kind || strcmp(o->kind, kind) != 0))
    return 0;
  if (!o->n_paths)
    return 1;
  if (!path)
    return 0;
  for (size_t i = 0; i < o->n_paths; i++) {
    const char *p = o->paths[i];
    if (path_ok(p, strlen(p), path))
      return 1;
    const char *rest = dq_index_shown_rest(idx, root, p); /* as shown */
    if (rest && (!*rest || path_ok(rest, strlen(rest), path)))
      return 1; /* "label/" or "label": the whole root */
  }
  return 0;
}

static void sql_filter_ok(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  dq_index *idx = sqlite3_user_data(ctx);
  sqlite3_result_int(ctx,
                     dq__filter_ok(idx, idx->filter,
                                   (const char *)sqlite3_value_text(v[0]),
                                   (const char *)sqlite3_value_text(v[1]),
                                   (const char *)sqlite3_value_text(v[2])));
}

/* dq_shown_is(root, path, name): name is the path as shown
 * ("beta/claim.c" in an index of several roots). */
static void sql_shown_is(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  dq_index *idx = sqlite3_user_data(ctx);
  const char *root = (const char *)sqlite3_value_text(v[0]);
  const char *path = (const char *)sqlite3_value_text(v[1]);
  const char *name = (const char *)sqlite3_value_text(v[2]);
  const char *rest = root && path ? dq_index_shown_rest(idx, root, name) : NULL;
  sqlite3_result_int(ctx, rest && !strcmp(rest, path));
}

int dq__search_register(dq_index *idx) {
  int rc = sqlite3_create_function(idx->db, "dq_filter_ok", 3, SQLITE_UTF8, idx,
                                   sql_filter_ok, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(idx->db, "dq_shown_is", 3, SQLITE_UTF8, idx,
                                 sql_shown_is, NULL, NULL);
  return rc;
}

static int has_filter(const dq_search_opts *o) {
  return o->kind || o->n_paths;
}

static int bm25_cmp(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->bm25_score != y->bm25_score)
    return x->bm25_score > y->bm25_score ? -1 : 1;
  return x->bm25_rank < y->bm25_rank ? -1 : x->bm25_rank > y->bm25_rank;
}

/* BM25's candidates c[0..n) that are listings (contents and index pages,
 * dq_listing_text) score LISTING_WEIGHT of their BM25 score, and the BM25
 * ranks follow. Such a page names many rare terms in few words, a
 * function's name among a hundred others, so BM25 put it before the page
 * it points to. */
static dq_status listings_down(dq_index *idx, cand *c, size_t n) {
  if (!n)
    return DQ_OK;
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(idx, "SELECT text FROM chunks WHERE id = ?1", &st);
  if (s)
    return s;
  int moved = 0;
  for (size_t i = 0; i < n; i++) {
    sqlite3_bind_int64(st, 1, c[i].id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(st, 0);
      if (t && dq_listing_text(t, (size_t)sqlite3_column_bytes(st, 0))) {
        c[i].bm25_score *= LISTING_WEIGHT;
        moved = 1;
      }
    } else if (rc != SQLITE_DONE) {
      s = dq__db_err(idx, rc, "reading a chunk");
      break;
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  if (!s && moved) {
    qsort(c, n, sizeof *c, bm25_cmp);
    for (size_t i = 0; i < n; i++)
      c[i].bm25_rank = (int32_t)(i + 1);
  }
  return s;
}

static dq_status bm25_top(dq_index *idx, const dq_search_opts *o,
                          const char *query, cand *c, size_t *n_c) {
  char *groups = NULL;
  char *q = dq__fts_query_groups(query, &groups);
  if (!q)
    return DQ_OK; /* no words: BM25 contributes nothing */
  sqlite3_stmt *st = NULL;
  const char *sql =
      has_filter(o)
          ? "SELECT f.rowid, dq_bm25(chunks_fts, ?3) AS r FROM chunks_fts f"
            " JOIN chunks c ON c.id = f.rowid JOIN documents d ON"
            " d.id = c.doc WHERE chunks_fts MATCH ?1 AND"
            " dq_filter_ok(d.root, d.path, d.kind) ORDER BY r, f.rowid LIMIT ?2"
          : "SELECT rowid, dq_bm25(chunks_fts, ?3) AS r FROM chunks_fts"
            " WHERE chunks_fts MATCH ?1 ORDER BY r, rowid LIMIT ?2";
  dq_status s = dq__prepare(idx, sql, &st);
  if (s) {
    free(q);
    free(groups);
    return s;
  }
  sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, (int64_t)o->n_bm25);
  sqlite3_bind_text(st, 3, groups, -1, SQLITE_STATIC);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n_c < o->n_bm25) {
    cand *x = &c[(*n_c)++];
    memset(x, 0, sizeof *x);
    x->id = sqlite3_column_int64(st, 0);
    x->bm25_rank = (int32_t)*n_c;
    x->bm25_score = -sqlite3_column_double(st, 1);
  }
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    s = dq__db_err(idx, rc, "full-text search");
  sqlite3_finalize(st);
  free(q);
  free(groups);
  return s ? s : listings_down(idx, c, *n_c);
}

/* 1 when chunk id exists and passes the filter, 0 when not, <0 on error. */
static int chunk_ok(dq_index *idx, sqlite3_stmt *st, const dq_search_opts *o,
                    int64_t id) {
  sqlite3_bind_int64(st, 1, id);
  int rc = sqlite3_step(st), ok = 0;
  if (rc == SQLITE_ROW)
    ok = dq__filter_ok(idx, o, (const char *)sqlite3_column_text(st, 0),
                       (const char *)sqlite3_column_text(st, 1),
                       (const char *)sqlite3_column_text(st, 2));
  else if (rc != SQLITE_DONE)
    ok = -1;
  sqlite3_reset(st);
  return ok;
}

static dq_status dense_top(dq_index *idx, const dq_search_opts *o,
                           const float *qvec, int dim, cand *c, size_t n_bm,
                           size_t *n_c) {
  if (!idx->embed_dim)
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "%s: the index holds no embeddings; search without a "
                        "query vector",
                        idx->db_path);
  if (dim != idx->embed_dim)
    return dq_error_set(&idx->err, DQ_ERR_MISMATCH,
                        "%s: query vector has dimension %d but the index "
                        "holds model '%s' with dimension %d",
                        idx->db_path, dim, idx->embed_model, idx->embed_dim);
  int64_t total = dq__vectors_count(idx);
  if (!total)
    return DQ_OK;
  size_t d = (size_t)dim;
  float *q = malloc(d * sizeof *q);
  if (!q)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  double norm = 0;
  for (size_t j = 0; j < d; j++)
    norm += (double)qvec[j] * qvec[j];
  if (!(norm > 0) || !isfinite(norm)) {
    free(q);
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "query vector is zero or not finite");
  }
  for (size_t j = 0; j < d; j++)
    q[j] = (float)(qvec[j] / sqrt(norm));
  sqlite3_stmt *st = NULL;
  int64_t *ids = NULL;
  float *sc = NULL;
  dq_status s = dq__prepare(idx,
                            "SELECT d.root, d.path, d.kind FROM chunks c"
                            " JOIN documents d ON d.id = c.doc WHERE c.id = ?1",
                            &st);
  size_t want = o->n_dense, kk = want, got = 0;
  while (!s) {
    if ((int64_t)kk > total)
      kk = (size_t)total;
    int64_t *ni = realloc(ids, kk * sizeof *ni);
    if (ni)
      ids = ni;
    float *ns = ni ? realloc(sc, kk * sizeof *ns) : NULL;
    if (!ns) {
      s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
      break;
    }
    sc = ns;
    size_t n = 0;
    if ((s = dq__vectors_search(idx, q, kk, ids, sc, &n)))
      break;
    got = 0;
    size_t keep = *n_c;
    for (size_t i = 0; i < n && got < want; i++) {
      /* Unfiltered: a missing chunk is skipped when results are read. */
      int ok = has_filter(o) ? chunk_ok(idx, st, o, ids[i]) : 1;
      if (ok < 0) {
        s = dq__db_err(idx, SQLITE_ERROR, "reading a chunk");
        break;
      }
      if (!ok)
        continue;
      got++;
      cand *x = NULL;
      for (size_t j = 0; j < n_bm; j++)
        if (c[j].id == ids[i])
          x = &c[j];
      if (!x) {
        x = &c[(*n_c)++];
        memset(x, 0, sizeof *x);
        x->id = ids[i];
      }
      x->dense_rank = (int32_t)got;
      x->dense_score = sc[i];
    }
    if (s || got >= want || (int64_t)kk >= total)
      break;
    /* Too few passed the filter: undo this round and ask for more. */
    for (size_t j = 0; j < n_bm; j++)
      c[j].dense_rank = 0, c[j].dense_score = 0;
    *n_c = keep;
    kk *= 4;
  }
  sqlite3_finalize(st);
  free(ids);
  free(sc);
  free(q);
  return s;
}

/* The symbol signal's chunks, merged into the candidates. */
static dq_status symbol_top(dq_index *idx, const dq_search_opts *o,
                            const char *query, cand *c, size_t *n_c,
                            dq__sym_list *l) {
  dq_status s = dq__symbol_top(idx, query, o->n_symbol, l);
  for (size_t i = 0; !s && i < l->n; i++) {
    cand *x = NULL;
    for (size_t j = 0; j < *n_c && !x; j++)
      if (c[j].id == l->hit[i].chunk)
        x = &c[j];
    if (!x) {
      x = &c[(*n_c)++];
      memset(x, 0, sizeof *x);
      x->id = l->hit[i].chunk;
    }
    x->sym_rank = (int32_t)(i + 1);
    x->sym = &l->hit[i];
  }
  return s;
}

/* Every chunk passing the filter, in document order, at most o->k. */
static dq_status doc_order(dq_index *idx, const dq_search_opts *o, cand *c,
                           size_t *n_c) {
  sqlite3_stmt *st = NULL;
  dq_status s =
      dq__prepare(idx,
                  "SELECT c.id FROM chunks c JOIN documents d ON"
                  " d.id = c.doc WHERE dq_filter_ok(d.root, d.path, d.kind)"
                  " ORDER BY d.root, d.path, c.ordinal LIMIT ?1",
                  &st);
  if (s)
    return s;
  sqlite3_bind_int64(st, 1, (int64_t)o->k);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && *n_c < o->k) {
    cand *x = &c[(*n_c)++];
    memset(x, 0, sizeof *x);
    x->id = sqlite3_column_int64(st, 0);
  }
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    s = dq__db_err(idx, rc, "listing a document's chunks");
  sqlite3_finalize(st);
  return s;
}

static int cc_cmp(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->cc != y->cc)
    return x->cc > y->cc ? -1 : 1;
  /* Unranked (0) last. */
  if (x->bm25_rank != y->bm25_rank)
    return (uint32_t)x->bm25_rank - 1 < (uint32_t)y->bm25_rank - 1 ? -1 : 1;
  if (x->dense_rank != y->dense_rank)
    return (uint32_t)x->dense_rank - 1 < (uint32_t)y->dense_rank - 1 ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Min-max normalisation of v over [lo, hi]; 1 when they are equal. */
static double unit(double v, double lo, double hi) {
  return hi > lo ? (v - lo) / (hi - lo) : 1.0;
}

/* Sets each candidate's retrieval rank (see the top) and returns the
 * number of legs that returned candidates. Reorders c. */
static int retrieval_rank(cand *c, size_t n, double w) {
  double blo = INFINITY, bhi = -INFINITY, dlo = INFINITY, dhi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (c[i].bm25_rank) {
      blo = fmin(blo, c[i].bm25_score);
      bhi = fmax(bhi, c[i].bm25_score);
    }
    if (c[i].dense_rank) {
      dlo = fmin(dlo, c[i].dense_score);
      dhi = fmax(dhi, c[i].dense_score);
    }
  }
  for (size_t i = 0; i < n; i++)
    c[i].cc =
        (c[i].bm25_rank ? w * unit(c[i].bm25_score, blo, bhi) : 0) +
        (c[i].dense_rank ? (1 - w) * unit(c[i].dense_score, dlo, dhi) : 0);
  qsort(c, n, sizeof *c, cc_cmp);
  int32_t r = 0;
  for (size_t i = 0; i < n; i++)
    c[i].ret_rank = c[i].bm25_rank || c[i].dense_rank ? ++r : 0;
  return (blo <= bhi) + (dlo <= dhi);
}

static int cand_cmp(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static char *col_dup(sqlite3_stmt *st, int i, int *oom) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  if (!t)
    return NULL;
  char *p = strdup(t);
  if (!p)
    *oom = 1;
  return p;
}

static void result_clear(dq_search_result *r) {
  free(r->path);
  free(r->shown);
  free(r->root);
  free(r->kind);
  free(r->section);
  free(r->text);
  free(r->symbol);
  free(r->symbol_kind);
  free(r->symbol_where);
}

void dq_search_results_free(dq_search_result *r, size_t n) {
  if (!r)
    return;
  for (size_t i = 0; i < n; i++)
    result_clear(&r[i]);
  free(r);
}

dq_status dq_index_search(dq_index *idx, const dq_search_opts *opts,
                          const char *query, const float *qvec, int dim,
                          dq_search_result **out, size_t *n_out) {
  dq_search_opts o = opts ? *opts : (dq_search_opts){0};
  *out = NULL;
  *n_out = 0;
  if (!o.k)
    o.k = 10;
  if (!o.n_bm25)
    o.n_bm25 = 50;
  if (!o.n_dense)
    o.n_dense = 50;
  if (!o.n_symbol)
    o.n_symbol = 50;
  if (o.no_symbols)
    o.n_symbol = 0;
  if (o.rrf_k <= 0)
    o.rrf_k = 60;
  if (o.lexical_weight == 0)
    o.lexical_weight = DQ_LEXICAL_WEIGHT;
  if (!(o.lexical_weight > 0 && o.lexical_weight <= 1))
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "the lexical weight must be within (0, 1], not %g",
                        o.lexical_weight);
  if (o.n_bm25 > 100000 || o.n_dense > 100000 || o.n_symbol > 100000 ||
      o.k > 100000)
    return dq_error_set(&idx->err, DQ_ERR_LIMIT,
                        "search asks for too many results");
  if (o.all_chunks && !o.n_paths)
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "reading whole documents needs document paths");
  cand *c =
      calloc(o.all_chunks ? o.k : o.n_bm25 + o.n_dense + o.n_symbol, sizeof *c);
  dq__sym_list syms = {0};
  dq_search_result *r = NULL;
  sqlite3_stmt *st = NULL;
  size_t n_c = 0, n_r = 0;
  if (!c)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  idx->filter = &o;
  dq_status s;
  if (o.all_chunks) {
    s = doc_order(idx, &o, c, &n_c);
  } else {
    s = bm25_top(idx, &o, query, c, &n_c);
    size_t n_bm = n_c;
    if (!s && qvec)
      s = dense_top(idx, &o, qvec, dim, c, n_bm, &n_c);
    if (!s)
      s = symbol_top(idx, &o, query, c, &n_c, &syms);
  }
  idx->filter = NULL;
  if (s)
    goto fail;
  if (!o.all_chunks) {
    double legs = retrieval_rank(c, n_c, o.lexical_weight);
    for (size_t i = 0; i < n_c; i++) {
      /* a strong name's leading chunks of one kind weigh alike, as its
       * best-ranked one: their order (by path) says nothing of the
       * question, so BM25 and vectors choose among them ("Schedule 2 of the
       * Master Services Agreement": the lease's Schedule 2 sorts first by
       * path); a function still leads its macro alias */
      int32_t rank = c[i].sym_rank;
      for (size_t j = 0; c[i].sym && c[i].sym->strong == 1 && j < n_c; j++)
        if (c[j].sym && c[j].sym->strong == 1 && c[j].sym_rank < rank &&
            c[j].sym->name == c[i].sym->name && c[j].sym->kind &&
            c[i].sym->kind && !strcmp(c[j].sym->kind, c[i].sym->kind))
          rank = c[j].sym_rank;
      c[i].sym_rank = rank; /* reported so too: tied */
      c[i].score =
          (c[i].ret_rank ? legs / (o.rrf_k + c[i].ret_rank) : 0) +
          (!c[i].sym               ? 0
           : c[i].sym->strong == 2 ? 1.0 / (2 * DQ__SYM_STRONG_K)
           : c[i].sym->strong      ? 1.0 / (DQ__SYM_STRONG_K + c[i].sym_rank)
                                   : 1.0 / (o.rrf_k + c[i].sym_rank));
    }
    qsort(c, n_c, sizeof *c, cand_cmp);
  }
  r = calloc(o.k < n_c ? o.k : (n_c ? n_c : 1), sizeof *r);
  if (!r) {
    s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if ((s = dq__prepare(idx,
                       "SELECT c.doc, d.path, d.root, d.kind, c.section,"
                       " c.text, c.byte_start, c.byte_end, c.line_start,"
                       " c.line_end, c.page_start, c.page_end FROM chunks c"
                       " JOIN documents d ON d.id = c.doc WHERE c.id = ?1",
                       &st)))
    goto fail;
  for (size_t i = 0; i < n_c && n_r < o.k; i++) {
    sqlite3_bind_int64(st, 1, c[i].id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      dq_search_result *x = &r[n_r++];
      int oom = 0;
      x->chunk_id = c[i].id;
      x->doc_id = sqlite3_column_int64(st, 0);
      x->path = col_dup(st, 1, &oom);
      x->root = col_dup(st, 2, &oom);
      x->kind = col_dup(st, 3, &oom);
      if (!oom && !(x->shown = dq_index_shown_path(idx, x->root, x->path)))
        oom = 1;
      x->section = col_dup(st, 4, &oom);
      x->text = col_dup(st, 5, &oom);
      x->byte_start = sqlite3_column_int64(st, 6);
      x->byte_end = sqlite3_column_int64(st, 7);
      x->line_start = sqlite3_column_int(st, 8);
      x->line_end = sqlite3_column_int(st, 9);
      x->page_start = sqlite3_column_int(st, 10);
      x->page_end = sqlite3_column_int(st, 11);
      x->score = c[i].score;
      x->bm25_rank = c[i].bm25_rank;
      x->bm25_score = c[i].bm25_score;
      x->dense_rank = c[i].dense_rank;
      x->dense_score = c[i].dense_score;
      const dq__sym_hit *sh = c[i].sym;
      if (sh) {
        x->symbol_rank = c[i].sym_rank;
        x->symbol_strong = sh->strong;
        x->symbol = strdup(sh->name);
        x->symbol_kind = sh->kind ? strdup(sh->kind) : NULL;
        x->symbol_where = sh->where ? strdup(sh->where) : NULL;
        x->symbol_line = sh->line;
        oom |= !x->symbol || (sh->kind && !x->symbol_kind) ||
               (sh->where && !x->symbol_where);
      }
      if (oom || !x->text) {
        s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
        goto fail;
      }
    } else if (rc != SQLITE_DONE) {
      s = dq__db_err(idx, rc, "reading a result");
      goto fail;
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  dq__sym_list_free(&syms);
  free(c);
  *out = r;
  *n_out = n_r;
  return DQ_OK;
fail:
  idx->filter = NULL;
  sqlite3_finalize(st);
  dq_search_results_free(r, n_r);
  dq__sym_list_free(&syms);
  free(c);
  return s;
}
