/*
 * symbols.c - lookups for xref: definitions (symbols) and uses (refs) of a
 * name, and "did you mean" suggestions among the defined names. Rows are
 * written by the document writer (docs.c); this file only reads.
 *
 * Suggestions rank distinct defined names by case-insensitive Levenshtein
 * distance (names whose length differs by more than MAX_EDIT are skipped
 * without computing it), then by whether one contains the other, then
 * alphabetically; a name qualifies when its distance is at most
 * max(2, len/3) or it contains the query (or the query contains it).
 */
#include "index_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME_BYTES 256
#define MAX_EDIT 8

static char *dup_col(sqlite3_stmt *st, int i, int *oom) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  if (!t)
    return NULL;
  char *p = strdup(t);
  if (!p)
    *oom = 1;
  return p;
}

void dq_xref_hits_free(dq_xref_hit *s, size_t n) {
  if (!s)
    return;
  for (size_t i = 0; i < n; i++) {
    free(s[i].name);
    free(s[i].kind);
    free(s[i].scope);
    free(s[i].caller);
    free(s[i].path);
    free(s[i].root);
    free(s[i].shown);
  }
  free(s);
}

/* Rows of `sql` for ?1 = name (or, when name is NULL, ?1 = doc) and
 * ?2 = kind (NULL: any). */
static dq_status find(dq_index *idx, const char *sql, const char *name,
                      int64_t doc, const char *kind, int is_ref,
                      dq_xref_hit **out, size_t *n_out) {
  sqlite3_stmt *st = NULL;
  dq_xref_hit *v = NULL;
  size_t n = 0, cap = 0;
  *out = NULL;
  *n_out = 0;
  dq_status s = dq__prepare(idx, sql, &st);
  if (s)
    return s;
  if (name)
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  else
    sqlite3_bind_int64(st, 1, doc);
  if (kind)
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
  int rc, oom = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (n == cap) {
      size_t c = cap ? cap * 2 : 16;
      dq_xref_hit *p = realloc(v, c * sizeof *p);
      if (!p) {
        oom = 1;
        break;
      }
      v = p;
      cap = c;
    }
    dq_xref_hit *x = &v[n++];
    memset(x, 0, sizeof *x);
    x->name = dup_col(st, 0, &oom);
    x->kind = dup_col(st, 1, &oom);
    if (is_ref)
      x->caller = dup_col(st, 2, &oom);
    else
      x->scope = dup_col(st, 2, &oom);
    x->path = dup_col(st, 3, &oom);
    x->root = dup_col(st, 4, &oom);
    if (!oom && !(x->shown = dq_index_shown_path(idx, x->root, x->path)))
      oom = 1;
    x->line = sqlite3_column_int(st, 5);
    x->col = sqlite3_column_int(st, 6);
    x->doc_id = sqlite3_column_int64(st, 7);
    x->page = sqlite3_column_int(st, 8);
    if (oom)
      break;
  }
  sqlite3_finalize(st);
  if (oom) {
    dq_xref_hits_free(v, n);
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  }
  if (rc != SQLITE_DONE) {
    dq_xref_hits_free(v, n);
    return dq__db_err(idx, rc, "symbol lookup");
  }
  *out = v;
  *n_out = n;
  return DQ_OK;
}

dq_status dq_index_symbols_find(dq_index *idx, const char *name,
                                const char *kind, dq_xref_hit **out, size_t *n) {
  if (!name)
    return dq_error_set(&idx->err, DQ_ERR_ARG, "symbol name missing");
  return find(idx,
              "SELECT s.name, s.kind, s.scope, d.path, d.root, s.line, s.col,"
              " s.doc, s.page FROM symbols s JOIN documents d ON d.id = s.doc"
              " WHERE s.name = ?1 AND (?2 IS NULL OR s.kind = ?2)"
              " ORDER BY d.root, d.path, s.page, s.line, s.col",
              name, 0, kind, 0, out, n);
}

dq_status dq_index_refs_find(dq_index *idx, const char *name,
                             const char *kind, dq_xref_hit **out, size_t *n) {
  if (!name)
    return dq_error_set(&idx->err, DQ_ERR_ARG, "symbol name missing");
  return find(idx,
              "SELECT r.name, r.kind, r.caller, d.path, d.root, r.line, r.col,"
              " r.doc, r.page FROM refs r JOIN documents d ON d.id = r.doc"
              " WHERE r.name = ?1 AND (?2 IS NULL OR r.kind = ?2)"
              " ORDER BY d.root, d.path, r.page, r.line, r.col",
              name, 0, kind, 1, out, n);
}

dq_status dq_index_symbols_in_doc(dq_index *idx, int64_t doc_id,
                                  dq_xref_hit **out, size_t *n) {
  return find(idx,
              "SELECT s.name, s.kind, s.scope, d.path, d.root, s.line, s.col,"
              " s.doc, s.page FROM symbols s JOIN documents d ON d.id = s.doc"
              " WHERE s.doc = ?1 ORDER BY s.page, s.line, s.col",
              NULL, doc_id, NULL, 0, out, n);
}

void dq_strings_free(char **s, size_t n) {
  if (!s)
    return;
  for (size_t i = 0; i < n; i++)
    free(s[i]);
  free(s);
}

/* Case-insensitive Levenshtein distance of a and b (both <= MAX_NAME_BYTES). */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb) {
  int row[MAX_NAME_BYTES + 1];
  for (size_t j = 0; j <= nb; j++)
    row[j] = (int)j;
  for (size_t i = 1; i <= na; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int up = row[j];
      int cost = tolower((unsigned char)a[i - 1]) !=
                 tolower((unsigned char)b[j - 1]);
      int best = diag + cost;
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

static int contains_ci(const char *hay, const char *needle) {
  return strcasestr(hay, needle) != NULL;
}

typedef struct sugg {
  char *name;
  int dist, contains;
} sugg;

static int sugg_cmp(const void *a, const void *b) {
  const sugg *x = a, *y = b;
  if (x->dist != y->dist)
    return x->dist - y->dist;
  if (x->contains != y->contains)
    return y->contains - x->contains;
  return strcmp(x->name, y->name);
}

dq_status dq_index_symbols_similar(dq_index *idx, const char *name,
                                   size_t max, char ***out, size_t *n_out) {
  *out = NULL;
  *n_out = 0;
  size_t nq = name ? strlen(name) : 0;
  if (!nq || nq > MAX_NAME_BYTES || !max)
    return DQ_OK;
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(idx, "SELECT DISTINCT name FROM symbols", &st);
  if (s)
    return s;
  sugg *v = NULL;
  size_t n = 0, cap = 0;
  int rc, limit = nq / 3 > 2 ? (int)(nq / 3) : 2;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    size_t nt = t ? strlen(t) : 0;
    if (!nt || nt > MAX_NAME_BYTES || strcmp(t, name) == 0)
      continue;
    /* a name inside the query counts only when it is at least half of
     * it: "runL2SelectMin" suggests SelectMin, not T, min or run */
    int contains = contains_ci(t, name) ||
                   (2 * nt >= nq && contains_ci(name, t));
    size_t diff = nt > nq ? nt - nq : nq - nt;
    int dist = diff > MAX_EDIT ? 1000 : edit_distance(name, nq, t, nt);
    if (dist > limit && !contains)
      continue;
    if (n == cap) {
      size_t c = cap ? cap * 2 : 16;
      sugg *p = realloc(v, c * sizeof *p);
      if (!p)
        goto nomem;
      v = p;
      cap = c;
    }
    if (!(v[n].name = strdup(t)))
      goto nomem;
    v[n].dist = dist;
    v[n++].contains = contains;
  }
  sqlite3_finalize(st);
  st = NULL;
  if (rc != SQLITE_DONE) {
    s = dq__db_err(idx, rc, "listing symbol names");
    goto fail;
  }
  if (n) /* qsort's array must not be NULL, even for 0 elements */
    qsort(v, n, sizeof *v, sugg_cmp);
  size_t m = n < max ? n : max;
  char **res = calloc(m ? m : 1, sizeof *res);
  if (!res)
    goto nomem;
  for (size_t i = 0; i < m; i++) {
    res[i] = v[i].name;
    v[i].name = NULL;
  }
  for (size_t i = 0; i < n; i++)
    free(v[i].name);
  free(v);
  *out = res;
  *n_out = m;
  return DQ_OK;
nomem:
  s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
fail:
  sqlite3_finalize(st);
  for (size_t i = 0; i < n; i++)
    free(v[i].name);
  free(v);
  return s;
}
