/*
 * test_index_rank.c - dq_bm25 (index/rank.c) against two independent
 * references:
 *   - FTS5's own bm25() on queries whose terms are one phrase each (the
 *     same constants: k1 1.2, b 0.75, weights 1), and on any query when the
 *     groups argument is missing or malformed (each phrase its own term);
 *   - BM25 computed here from the index's own statistics read through
 *     fts5vocab (rows, token instances, positions), with a word and its
 *     stem key counted as one term: document frequency the sum of theirs,
 *     frequency in a chunk the sum of theirs.
 * On a small mixed index: code (words indexed as they are) and prose
 * (words indexed by stem keys). Then a question's pair of capitalised
 * words (a name): the chunk holding it whole first, and no weight for
 * words that only ever come together.
 */
#include "index_testutil.h"

#include <math.h>

typedef struct score {
  long long rowid;
  double s;
} score;

/* rowid and the expression's value for every row the query matches. */
static int scores(sqlite3 *db, const char *expr, const char *q,
                  const char *groups, score *out, int max) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT rowid, %s FROM chunks_fts WHERE chunks_fts MATCH ?1"
           " ORDER BY rowid",
           expr);
  sqlite3_stmt *st = NULL;
  int n = 0;
  CHECK_MSG(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s",
            sql, sqlite3_errmsg(db));
  sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
  if (groups)
    sqlite3_bind_text(st, 2, groups, -1, SQLITE_STATIC);
  while (st && sqlite3_step(st) == SQLITE_ROW && n < max) {
    out[n].rowid = sqlite3_column_int64(st, 0);
    out[n++].s = sqlite3_column_double(st, 1);
  }
  sqlite3_finalize(st);
  return n;
}

static long long one(sqlite3 *db, const char *sql, const char *a, long long b) {
  sqlite3_stmt *st = NULL;
  long long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  if (a)
    sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, b);
  if (sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* BM25 of row for terms, each spelt by the tokens in terms[t] (NULL-ended),
 * from fts5vocab's tables. */
static double reference(sqlite3 *db, long long row,
                        const char *const terms[][3], int n_terms) {
  double n_rows = (double)one(db, "SELECT count(*) FROM chunks_fts", NULL, 0);
  /* A row's length: its distinct positions (colocated tokens share one). */
  double total = (double)one(
      db, "SELECT count(*) FROM (SELECT DISTINCT doc, col, offset FROM vi)",
      NULL, 0);
  double len = (double)one(db,
                           "SELECT count(*) FROM (SELECT DISTINCT col, offset"
                           " FROM vi WHERE doc = ?2)",
                           NULL, row);
  double norm = 1.2 * (1 - 0.75 + 0.75 * len / (total / n_rows)), s = 0;
  for (int t = 0; t < n_terms; t++) {
    double df = 0, tf = 0;
    for (int k = 0; k < 3 && terms[t][k]; k++) {
      long long d =
          one(db, "SELECT doc FROM vr WHERE term = ?1", terms[t][k], 0);
      df += d > 0 ? (double)d : 0;
      tf += (double)one(db,
                        "SELECT count(*) FROM vi WHERE term = ?1 AND"
                        " doc = ?2",
                        terms[t][k], row);
    }
    double idf = log((n_rows - df + 0.5) / (df + 0.5));
    if (idf <= 1e-6)
      idf = 1e-6;
    if (tf > 0)
      s += idf * tf * 2.2 / (tf + norm);
  }
  return -s;
}

/* Two capitalised words side by side in the question: a term of their
 * own, weighed by what they tell beyond the rarer word. A name whose
 * words are common apart ranks the chunk holding it whole first; words
 * that only ever come together ("Disclosure Period") add nothing: the
 * scores equal those of the query without the pair. */
static void check_pairs(void) {
  char *dir = NULL;
  dq_index *idx = scratch_index("pairs", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  const char *a[] = {"Gorseford Optics paid the invoice late.",
                     "Ashwick Marine paid the invoice on time.",
                     "Gorseford Foods and Ashwick Marine share a depot.",
                     "Gorseford Marine paid the invoice.",
                     "During the Disclosure Period each party keeps records.",
                     "The Disclosure Period ends after two years.",
                     "Nothing else happens here.",
                     NULL};
  for (int i = 0; a[i]; i++) { /* a document each: a chunk's context
                                  (its document's name) is its own */
    char path[16];
    const char *one[] = {a[i], NULL};
    snprintf(path, sizeof path, "n%d.txt", i + 1);
    CHECK_OK(put_doc(idx, path, "text", one, NULL), dq_index_errmsg(idx));
  }
  dq_index_close(idx);
  sqlite3 *db = raw_open(dir);
  CHECK(dq__fts5_register(db) == SQLITE_OK);
  char *groups = NULL;
  char *q = dq__fts_query_groups("Who paid Gorseford Marine?", &groups);
  CHECK_EQ_STR(q, "(\"paid\" OR \"\001paid\") OR (\"gorseford\" OR "
                  "\"\001gorseford\") OR (\"marine\" OR \"\001marin\") OR "
                  "(\"gorseford marine\" OR \"\001gorseford \001marin\")");
  CHECK_EQ_STR(groups, "0 0 1 1 2 2 3 3|3:1,2");
  score s[16];
  int n = scores(db, "dq_bm25(chunks_fts, ?2)", q, groups, s, 16);
  CHECK_EQ_INT(n, 4);
  int best = 0;
  for (int i = 1; i < n; i++)
    if (s[i].s < s[best].s)
      best = i;
  CHECK_EQ_INT(s[best].rowid, 4); /* "Gorseford Marine paid ..." */
  /* without the pair's entry, the same phrase as a plain term: the
   * weight differs (here larger), so the '|' part is read */
  char plain[64];
  snprintf(plain, sizeof plain, "%.*s", (int)(strchr(groups, '|') - groups),
           groups);
  score t[16];
  CHECK_EQ_INT(scores(db, "dq_bm25(chunks_fts, ?2)", q, plain, t, 16), n);
  CHECK(fabs(t[best].s - s[best].s) > 1e-6);
  free(q);
  free(groups);
  /* words that come together anyway: the pair weighs 0 */
  q = dq__fts_query_groups("When does the Disclosure Period end?", &groups);
  CHECK(groups && strchr(groups, '|'));
  char *q0 = NULL, *g0 = NULL;
  q0 = dq__fts_query_groups("when does the disclosure period end?", &g0);
  CHECK(g0 && !strchr(g0, '|'));
  n = scores(db, "dq_bm25(chunks_fts, ?2)", q, groups, s, 16);
  int n0 = scores(db, "dq_bm25(chunks_fts, ?2)", q0, g0, t, 16);
  CHECK_EQ_INT(n, n0);
  for (int i = 0; i < n && i < n0; i++) {
    CHECK_EQ_INT(s[i].rowid, t[i].rowid);
    CHECK_NEAR(s[i].s, t[i].s, 1e-9);
  }
  free(q);
  free(groups);
  free(q0);
  free(g0);
  sqlite3_close(db);
  rm_rf(dir);
  free(dir);
}

int main(void) {
  check_pairs();
  char *dir = NULL;
  dq_index *idx = scratch_index("rank", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return TEST_EXIT();
  const char *msg_c[] = {"int message_count; /* each message header */",
                         "void send(message *m) { write(m); } /* x86 */", NULL};
  const char *parse_c[] = {"parse one message; items2 counted", NULL};
  const char *arch[] = {"Messages carry headers and a body.",
                        "The parser reads each message header, items2 too.",
                        NULL};
  const char *fill[] = {"nothing to see", NULL};
  CHECK_OK(put_doc(idx, "src/msg.c", "c", msg_c, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "src/parse.c", "c", parse_c, NULL),
           dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "docs/arch.md", "markdown", arch, NULL),
           dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "docs/fill.txt", "text", fill, NULL),
           dq_index_errmsg(idx));
  dq_index_close(idx);

  sqlite3 *db = raw_open(dir);
  CHECK(dq__fts5_register(db) == SQLITE_OK);
  CHECK(sqlite3_exec(db,
                     "CREATE VIRTUAL TABLE temp.vi USING"
                     " fts5vocab(main, chunks_fts, instance);"
                     "CREATE VIRTUAL TABLE temp.vr USING"
                     " fts5vocab(main, chunks_fts, row);",
                     NULL, NULL, NULL) == SQLITE_OK);
  score a[16], b[16];

  /* Words with no stem key (digits): one phrase per term, so dq_bm25 is
   * FTS5's bm25. */
  char *groups = NULL;
  char *q = dq__fts_query_groups("items2 x86", &groups);
  CHECK_EQ_STR(q, "\"items2\" OR \"x86\"");
  CHECK_EQ_STR(groups, "0 1");
  int na = scores(db, "dq_bm25(chunks_fts, ?2)", q, groups, a, 16);
  int nb = scores(db, "bm25(chunks_fts)", q, NULL, b, 16);
  CHECK_EQ_INT(na, 3);
  CHECK_EQ_INT(nb, na);
  for (int i = 0; i < na && i < nb; i++) {
    CHECK_EQ_INT(a[i].rowid, b[i].rowid);
    CHECK_NEAR(a[i].s, b[i].s, 1e-9);
  }
  free(q);
  free(groups);

  /* A word and its stem key: one term. "message" is in both code files
   * and (as "\1messag") in the prose; "header" likewise. */
  q = dq__fts_query_groups("message headers", &groups);
  CHECK_EQ_STR(q, "(\"message\" OR \"\001messag\") OR (\"headers\" OR "
                  "\"\001header\")");
  CHECK_EQ_STR(groups, "0 0 1 1");
  static const char *const terms[][3] = {{"message", "\001messag", NULL},
                                         {"headers", "\001header", NULL}};
  na = scores(db, "dq_bm25(chunks_fts, ?2)", q, groups, a, 16);
  CHECK_EQ_INT(na, 5); /* both chunks of each, parse.c's one */
  for (int i = 0; i < na; i++)
    CHECK_NEAR(a[i].s, reference(db, a[i].rowid, terms, 2), 1e-9);
  /* Each phrase its own term: the prose's rarer stem keys get idfs of
   * their own, so the scores differ, and equal FTS5's bm25. */
  static const char *const bad[] = {
      NULL, "", "0 0 1", "0 0 1 9", "0 0 1 x", "0 0 1 1 1", "-1 0 1 1"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    nb = scores(db, "dq_bm25(chunks_fts, ?2)", q, bad[k], b, 16);
    score c[16];
    int nc = scores(db, "bm25(chunks_fts)", q, NULL, c, 16);
    CHECK_EQ_INT(nb, na);
    CHECK_EQ_INT(nc, na);
    for (int i = 0; i < nb && i < nc; i++)
      CHECK_MSG(fabs(b[i].s - c[i].s) < 1e-9, "groups '%s': row %d %g vs %g",
                bad[k] ? bad[k] : "(null)", i, b[i].s, c[i].s);
  }
  int differ = 0;
  for (int i = 0; i < na && i < nb; i++)
    differ |= fabs(a[i].s - b[i].s) > 1e-6;
  CHECK(differ);
  free(q);
  free(groups);
  sqlite3_close(db);
  rm_rf(dir);
  free(dir);
  return TEST_EXIT();
}
