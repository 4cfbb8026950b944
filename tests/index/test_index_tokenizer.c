/*
 * test_index_tokenizer.c - the dq_ident FTS5 tokenizer and query builder:
 * exact tokens and positions for code identifiers (snake_case, camelCase,
 * acronyms, dotted names, numbers, unicode letters) and, in a text marked
 * as prose, English stems, read back through fts5vocab; the FTS5 query text
 * built from user queries; and end-to-end matching through dq_index_search,
 * stems included. Expected token lists are worked out by hand from the rules in
 * index/tokenizer.c's header comment.
 */
#include "index_testutil.h"

/* "term@pos ..." for document `rowid` of table t, ordered by position then
 * term. */
static char *tokens_of(sqlite3 *db, long long rowid) {
  sqlite3_stmt *st = NULL;
  static char buf[2048];
  buf[0] = '\0';
  sqlite3_prepare_v2(db,
                     "SELECT term, offset FROM v WHERE doc = ?1"
                     " ORDER BY offset, term",
                     -1, &st, NULL);
  sqlite3_bind_int64(st, 1, rowid);
  while (sqlite3_step(st) == SQLITE_ROW) {
    size_t n = strlen(buf);
    snprintf(buf + n, sizeof buf - n, "%s%s@%d", n ? " " : "",
             (const char *)sqlite3_column_text(st, 0),
             sqlite3_column_int(st, 1));
  }
  sqlite3_finalize(st);
  return buf;
}

static void check_tokens(void) {
  sqlite3 *db = NULL;
  CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
  CHECK(dq__fts5_register(db) == SQLITE_OK);
  CHECK(sqlite3_exec(db,
                     "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='dq_ident');"
                     "CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);",
                     NULL, NULL, NULL) == SQLITE_OK);
  static const char *const cases[][2] = {
      {"call get_user(x)", "call@0 get@1 get_user@1 user@2 x@3"},
      {"getUser HTTPServer utf8Decode",
       "get@0 getuser@0 user@1 http@2 httpserver@2 server@3 utf8@4 "
       "utf8decode@4 decode@5"},
      {"os.path.join(a.b) end.",
       "os@0 os.path.join@0 path@1 join@2 a@3 a.b@3 b@4 end@5"},
      {"Gr\xc3\xb6\xc3\x9f"
       "e \xce\x91\xce\x92\xce\x93 Caf\xc3\xa9 __init__",
       "grosse@0 \xce\xb1\xce\xb2\xce\xb3@1 cafe@2 __init__@3 init@3"},
      /* Latin letters fold to ASCII (Ø, Ł, Œ, ó, ź, ß have spellings of
       * their own); decomposed text (e + U+0301) folds alike; a lone
       * combining mark stays as it is. */
      {"\xc3\x98resund \xc5\x81\xc3\xb3"
       "d\xc5\xba \xc5\x92uvre "
       "Re\xcc\x81sume\xcc\x81 \xcc\x81",
       "oresund@0 lodz@1 oeuvre@2 resume@3 \xcc\x81@4"},
      /* ß takes its neighbours' case: GRÖßE is one word, straßeName two */
      {"GR\xc3\x96\xc3\x9f"
       "E stra\xc3\x9f"
       "eName",
       "grosse@0 strasse@1 strassename@1 name@2"},
      {"MAX_SIZE value2 3.14", "max@0 max_size@0 size@1 value2@2 3@3 3.14@3 "
                               "14@4"},
      {"a--b, (c); \xe2\x80\x94 d", "a@0 b@1 c@2 d@3"},
      /* Prose (marked): words as their stem keys (plural, -ies, -es,
       * -ed, -ing, final e), folded Latin words too ("Cafés"); short
       * words, stopwords, other scripts' words and words with digits as
       * they are; parts are stemmed, the whole identifier is not. */
      {"\001Governed laws, parties' notices; GOVERNING boxes",
       "\001govern@0 \001law@1 \001party@2 \001notic@3 \001govern@4 "
       "\001box@5"},
      {"\001get_users was is Caf\xc3\xa9s items2 law",
       "\001get@0 get_users@0 \001user@1 was@2 is@3 \001cafe@4 "
       "items2@5 \001law@6"},
      /* Code (unmarked): no stems. */
      {"#define get_users laws", "define@0 get@1 get_users@1 users@2 laws@3"},
  };
  size_t n = sizeof cases / sizeof cases[0];
  for (size_t i = 0; i < n; i++) {
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, "INSERT INTO t(rowid, x) VALUES (?1, ?2)", -1, &st,
                       NULL);
    sqlite3_bind_int64(st, 1, (long long)i + 1);
    sqlite3_bind_text(st, 2, cases[i][0], -1, SQLITE_STATIC);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
  }
  /* Expected lists are ordered by position, then term. */
  for (size_t i = 0; i < n; i++)
    CHECK_EQ_STR(tokens_of(db, (long long)i + 1), cases[i][1]);
  sqlite3_close(db);
}

static void check_query(void) {
  char *q = dq__fts_query("How does get_user work?");
  CHECK_EQ_STR(q, "(\"get_user\" OR \"get user\") OR (\"work\" OR "
                  "\"\001work\")");
  free(q);
  q = dq__fts_query("the");
  CHECK_EQ_STR(q, "\"the\""); /* only stopwords: keep them */
  free(q);
  q = dq__fts_query("getUser getuser GETUSER");
  CHECK_EQ_STR(q, "(\"getuser\" OR \"get user\")");
  free(q);
  q = dq__fts_query("x\"y OR z*");
  CHECK_EQ_STR(q, "\"x\" OR \"y\" OR \"z\""); /* or is a stopword */
  free(q);
  q = dq__fts_query("!!! ...");
  CHECK(q == NULL);
  free(q);
  /* A dotted name's segments are terms too (code writes "class
   * StreamWriter" and "def close" apart); not numbers or single letters. */
  q = dq__fts_query("StreamWriter.close");
  CHECK_EQ_STR(q, "(\"streamwriter.close\" OR \"stream writer close\") OR "
                  "\"streamwriter\" OR \"close\"");
  free(q);
  /* a receiver is no owner: not a term of its own */
  q = dq__fts_query("this.total self.rows");
  CHECK_EQ_STR(q, "(\"this.total\" OR \"this total\") OR \"total\" OR "
                  "(\"self.rows\" OR \"self rows\") OR \"rows\"");
  free(q);
  q = dq__fts_query("tax.c");
  CHECK_EQ_STR(q, "(\"tax.c\" OR \"tax c\")"); /* a file: its path whole */
  free(q);
  q = dq__fts_query("MPL-2.0 e.g.");
  CHECK_EQ_STR(q, "(\"mpl\" OR \"\001mpl\") OR (\"2.0\" OR \"2 0\") OR "
                  "(\"e.g\" OR \"e g\")");
  free(q);
  /* Two capitalised words side by side (a name, not the question's
   * first word) are a phrase too, as written and as prose indexes it. */
  q = dq__fts_query("revenue of Acme Holdings");
  CHECK_EQ_STR(q, "(\"revenue\" OR \"\001revenu\") OR (\"acme\" OR "
                  "\"\001acme\") OR (\"holdings\" OR \"\001holding\") OR "
                  "(\"acme holdings\" OR \"\001acme \001holding\")");
  free(q);
  q = dq__fts_query("Acme Holdings revenue"); /* first word: no pair */
  CHECK(q && !strstr(q, "acme holdings"));
  free(q);
  q = dq__fts_query("Acme of Holdings"); /* a stopword between: none */
  CHECK(q && !strstr(q, "acme holdings"));
  free(q);
  /* A word of three or more letters also asks for its stem key. */
  q = dq__fts_query("Which laws govern governing agreements?");
  CHECK_EQ_STR(q, "(\"laws\" OR \"\001law\") OR (\"govern\" OR "
                  "\"\001govern\") OR (\"governing\" OR \"\001govern\") OR "
                  "(\"agreements\" OR \"\001agreement\")");
  free(q);
}

/* In prose, a word's forms meet through its stem; in code, only the
 * word itself matches. */
static void check_stems(void) {
  char *dir = NULL;
  dq_index *idx = scratch_index("tok_stem", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  const char *a[] = {"This Agreement is governed by the laws of Ireland.",
                     NULL};
  const char *b[] = {"Which court governs a dispute is set out below.", NULL};
  const char *c[] = {"Payment is due within thirty days of the invoice.", NULL};
  CHECK_OK(put_doc(idx, "a.txt", "text", a, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "b.txt", "text", b, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "c.txt", "text", c, NULL), dq_index_errmsg(idx));
  /* Code is not stemmed: these match only where the query's word is. */
  const char *d[] = {"/* laws governed here, defined below */", NULL};
  const char *e[] = {"#define LIMIT 3", NULL};
  CHECK_OK(put_doc(idx, "d.c", "c", d, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "e.c", "c", e, NULL), dq_index_errmsg(idx));
  static const struct {
    const char *q, *first, *second;
  } m[] = {
      {"governs", "a.txt", "b.txt"}, /* by the stem, a tie: older first */
      {"governing", "a.txt", "b.txt"},
      {"law", "a.txt", NULL},
      {"which law governs", "a.txt", "b.txt"},
      {"disputes", "b.txt", NULL},
      {"invoices paid", "c.txt", NULL},
      {"defined", "d.c", NULL}, /* not e.c's #define */
  };
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    dq_search_result *r = NULL;
    size_t n = 0;
    CHECK_OK(dq_index_search(idx, NULL, m[i].q, NULL, 0, &r, &n),
             dq_index_errmsg(idx));
    CHECK_MSG(n == (m[i].second ? 2u : 1u), "query %s: %zu results", m[i].q, n);
    CHECK_MSG(n >= 1 && strcmp(r[0].path, m[i].first) == 0,
              "query %s: first %s, want %s", m[i].q, n ? r[0].path : "-",
              m[i].first);
    if (m[i].second)
      CHECK_MSG(n >= 2 && strcmp(r[1].path, m[i].second) == 0,
                "query %s: second %s, want %s", m[i].q,
                n >= 2 ? r[1].path : "-", m[i].second);
    dq_search_results_free(r, n);
  }
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

static int has_path(dq_search_result *r, size_t n, const char *path) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(r[i].path, path) == 0)
      return 1;
  return 0;
}

static void check_matching(void) {
  char *dir = NULL;
  dq_index *idx = scratch_index("tok", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  const char *a[] = {"int get_user(int id) { return 0; }", NULL};
  const char *b[] = {"user = this.getUser();", NULL};
  const char *c[] = {"new HTTPServer(port)", NULL};
  const char *d[] = {"os.path.join(root, name)", NULL};
  const char *e[] = {"Die Gr\xc3\xb6\xc3\x9f" "e des Caf\xc3\xa9s", NULL};
  CHECK_OK(put_doc(idx, "a.c", "c", a, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "b.js", "js", b, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "c.java", "java", c, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "d.py", "python", d, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "e.txt", "text", e, NULL), dq_index_errmsg(idx));
  const char *h[] = {"A naive reading of the Munchen office lease", NULL};
  const char *i2[] = {"Attach your resume (decomposed: Re\xcc\x81sume\xcc\x81)",
                      NULL};
  CHECK_OK(put_doc(idx, "h.txt", "text", h, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "i.md", "markdown", i2, NULL), dq_index_errmsg(idx));
  static const struct {
    const char *q;
    const char *yes[3];
    const char *no[3];
  } m[] = {
      {"user", {"a.c", "b.js"}, {"c.java"}},
      {"get_user", {"a.c", "b.js"}, {"c.java", "d.py"}},
      {"getUser", {"a.c", "b.js"}, {"c.java"}},
      {"server", {"c.java"}, {"a.c"}},
      {"HTTPServer", {"c.java"}, {"a.c"}},
      {"ser", {NULL}, {"c.java"}},
      {"os.path.join", {"d.py"}, {"a.c"}},
      {"join", {"d.py"}, {"c.java"}},
      {"GR\xc3\x96\xc3\x9f"
       "E",
       {"e.txt"},
       {"d.py"}},
      {"caf\xc3\xa9s", {"e.txt"}, {"a.c"}},
      /* without the diacritics, as users type them, and back */
      {"grosse des cafes", {"e.txt"}, {"a.c"}},
      {"na\xc3\xafve M\xc3\xbcnchen", {"h.txt"}, {"e.txt"}},
      {"Munchen", {"h.txt"}, {"e.txt"}},
      {"R\xc3\xa9sum\xc3\xa9", {"i.md"}, {"h.txt"}},
  };
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    dq_search_result *r = NULL;
    size_t n = 0;
    CHECK_OK(dq_index_search(idx, NULL, m[i].q, NULL, 0, &r, &n),
             dq_index_errmsg(idx));
    for (int k = 0; k < 3 && m[i].yes[k]; k++)
      CHECK_MSG(has_path(r, n, m[i].yes[k]), "query %s should find %s",
                m[i].q, m[i].yes[k]);
    for (int k = 0; k < 3 && m[i].no[k]; k++)
      CHECK_MSG(!has_path(r, n, m[i].no[k]), "query %s should not find %s",
                m[i].q, m[i].no[k]);
    dq_search_results_free(r, n);
  }
  /* The exact identifier ranks its own document first. */
  dq_search_result *r = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_search(idx, NULL, "get_user", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK(n >= 1 && strcmp(r[0].path, "a.c") == 0);
  dq_search_results_free(r, n);
  /* Owner.member, which code writes apart, finds the owner's member first
   * (BM25 alone: no symbols in this index). */
  const char *f[] = {"class Server:\n    def close(self):\n        pass", NULL};
  const char *g[] = {"class StreamWriter:\n    def close(self):\n        pass",
                     NULL};
  CHECK_OK(put_doc(idx, "f.py", "python", f, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "g.py", "python", g, NULL), dq_index_errmsg(idx));
  CHECK_OK(dq_index_search(idx, NULL, "Where is StreamWriter.close defined?",
                           NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK_MSG(n >= 1 && strcmp(r[0].path, "g.py") == 0, "first: %s",
            n ? r[0].path : "-");
  dq_search_results_free(r, n);
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

/* dq_index_fold: the public fold (cite.c's quote uses it) */
static void check_fold(void) {
  char out[64];
  const char *w = "\u00dcn\u00efc\u00f6de STRA\u00dfE \u0141\u00f3d\u017a";
  CHECK_EQ_INT((int)dq_index_fold(w, strlen(w), out, sizeof out),
               (int)strlen("unicode strasse lodz"));
  CHECK_EQ_STR(out, "unicode strasse lodz");
  w = "cafe\u0301"; /* decomposed */
  dq_index_fold(w, strlen(w), out, sizeof out);
  CHECK_EQ_STR(out, "cafe");
  w = "\u0301\u0301"; /* marks alone stay */
  dq_index_fold(w, strlen(w), out, sizeof out);
  CHECK_EQ_STR(out, w);
  w = "\u65e5\u672c"; /* cut at a character: 4 bytes hold one of 3 */
  CHECK_EQ_INT((int)dq_index_fold(w, strlen(w), out, 5), 3);
  CHECK(!memcmp(out, w, 3) && out[3] == '\0');
  CHECK_EQ_INT((int)dq_index_fold(w, strlen(w), out, 1), 0);
  CHECK_EQ_STR(out, "");
  CHECK_EQ_INT((int)dq_index_fold("", 0, out, sizeof out), 0);
}

int main(void) {
  check_fold();
  check_tokens();
  check_query();
  check_stems();
  check_matching();
  return TEST_EXIT();
}
