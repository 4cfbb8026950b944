/*
 * fuzz_tokenize.c - libFuzzer harness for the dq_ident tokenizer on
 * documents and for dq_bm25 (index/tokenizer.c, index/rank.c). The input,
 * as any bytes, is indexed twice in an in-memory FTS5 table: as code and,
 * with the prose mark, as prose (stem keys); then it is searched with
 * itself as the query (the query builder's phrases and their groups). A
 * prefix byte picks how the input is split: whole, or at its first NUL into
 * document and query. Checks: inserting and searching succeed, FTS5's
 * integrity-check passes, both rows match their own words, every score is
 * finite and not positive. Crashes, sanitizer reports, leaks and broken
 * invariants are findings.
 */
#include "index_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *g_db;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "invariant broken: %s (%s)\n", what,
            g_db ? sqlite3_errmsg(g_db) : "-");
    abort();
  }
}

static void cleanup(void) { sqlite3_close(g_db); }

static void setup(void) {
  check(sqlite3_open(":memory:", &g_db) == SQLITE_OK, "open");
  check(dq__fts5_register(g_db) == SQLITE_OK, "tokenizer and dq_bm25");
  check(sqlite3_exec(g_db,
                     "CREATE VIRTUAL TABLE t USING fts5(x, y,"
                     " tokenize='dq_ident');",
                     NULL, NULL, NULL) == SQLITE_OK,
        "create");
  atexit(cleanup);
}

static void exec(const char *sql) {
  check(sqlite3_exec(g_db, sql, NULL, NULL, NULL) == SQLITE_OK, sql);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (!g_db)
    setup();
  if (size < 1 || size > 4096)
    return 0;
  int split = data[0] & 1;
  const char *text = (const char *)data + 1;
  size_t n = size - 1, nq = n;
  const char *qtext = text;
  if (split) {
    const char *nul = memchr(text, '\0', n);
    if (nul) {
      qtext = nul + 1;
      nq = n - (size_t)(qtext - text);
      n = (size_t)(nul - text);
    }
  }
  char *prose = malloc(n + 2);
  char *query = malloc(nq + 1);
  check(prose && query, "malloc");
  prose[0] = DQ__PROSE_MARK;
  memcpy(prose + 1, text, n);
  memcpy(query, qtext, nq);
  query[nq] = '\0';
  exec("DELETE FROM t");
  sqlite3_stmt *st = NULL;
  check(sqlite3_prepare_v2(g_db, "INSERT INTO t(rowid, x, y) VALUES (?1, ?2,"
                                 " ?3)",
                           -1, &st, NULL) == SQLITE_OK,
        "prepare insert");
  for (int row = 1; row <= 2; row++) {
    sqlite3_bind_int(st, 1, row);
    if (row == 1)
      sqlite3_bind_text(st, 2, text, (int)n, SQLITE_STATIC);
    else
      sqlite3_bind_text(st, 2, prose, (int)n + 1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, row == 1 ? "code" : "\001prose", -1,
                      SQLITE_STATIC);
    check(sqlite3_step(st) == SQLITE_DONE, "insert");
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  exec("INSERT INTO t(t) VALUES ('integrity-check')");

  char *groups = NULL;
  char *q = dq__fts_query_groups(query, &groups);
  if (q) {
    check(groups != NULL, "groups with the query");
    check(sqlite3_prepare_v2(g_db,
                             "SELECT rowid, dq_bm25(t, ?2) FROM t WHERE t"
                             " MATCH ?1",
                             -1, &st, NULL) == SQLITE_OK,
          "prepare match");
    sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, groups, -1, SQLITE_STATIC);
    int rc, rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      double s = sqlite3_column_double(st, 1);
      check(isfinite(s) && s <= 0, "score finite, not positive");
      rows++;
    }
    check(rc == SQLITE_DONE, "match");
    sqlite3_finalize(st);
    /* The document searched with itself matches both of its rows, unless
     * the query builder cut the query (64 terms) or the words are cut at
     * DQ__TOK_MAX_BYTES differently: only check short, whole inputs. */
    if (!split && n < 200 && strlen(query) == nq)
      check(rows == 2, "a text matches itself as code and as prose");
  }
  free(q);
  free(groups);
  free(prose);
  free(query);
  return 0;
}
