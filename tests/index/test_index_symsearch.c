/*
 * test_index_symsearch.c - the symbol signal of hybrid search
 * (index/search_sym.c) on a hand-built index, BM25 only (no vectors), so
 * every rank below is worked out from the rules:
 *
 *   src/tax.c      A lines 1-10   defines tax_compute_line (line 3)
 *                  B lines 11-20  defines div_round (line 12), variable c
 *   include/tax.h  P lines 1-10   prototype of tax_compute_line (line 5)
 *   src/invoice.c  I lines 1-20   defines invoice_compute_totals (line 2),
 *                                 calls tax_compute_line (line 8)
 *   src/report.c   R lines 1-10   uses tax_compute_line (line 4, no call)
 *   docs/nda.md    N1 lines 1-10  term Orchard Peak (line 2)
 *                  N2 lines 11-20 term Derived Materials (line 12),
 *                                 section 2.1(d) (line 15)
 *                  N3 lines 21-30 section Article 3 (line 21), uses
 *                                 Derived Materials (line 25)
 *   lease.pdf      L1 page 1 lines 1-9, L2 page 2 lines 1-9: term Rent
 *                                 defined on page 2's line 3
 *   src/gc.c       G1 lines 1-10  defines sweeplist (line 3), LTfloatint
 *                                 (line 5), read_string (line 6),
 *                                 read_numeral (line 7), field line (8),
 *                                 macro lua_call (9)
 *                  G2 lines 11-20 defines function lua_call (12), calls
 *                                 sweeplist (15), uses SQLite (16)
 * plus filler chunks. A strong name's leading chunk scores
 * 1 / (DQ__SYM_STRONG_K + rank) + its BM25 share; a weak one's
 * 1 / (rrf_k + rank).
 */
#include "index_testutil.h"

typedef struct sym {
  const char *name, *kind;
  int line;
} sym;

typedef struct ref {
  const char *name, *kind, *caller;
  int line;
} ref;

typedef struct chunk {
  const char *text;
  int line_start, line_end, page;
} chunk;

static void put(dq_index *idx, const char *path, const char *kind,
                const chunk *c, int n_c, const sym *s, int n_s, const ref *r,
                int n_r, int64_t *ids) {
  dq_doc_info d = doc_info(path, kind);
  dq_index_doc *w = NULL;
  CHECK_OK(dq_index_doc_begin(idx, &d, &w), dq_index_errmsg(idx));
  if (!w)
    return;
  for (int i = 0; i < n_c; i++) {
    dq_chunk_in ci = {0};
    ci.text = c[i].text;
    ci.byte_start = i * 1000;
    ci.byte_end = i * 1000 + (int64_t)strlen(c[i].text);
    ci.line_start = c[i].line_start;
    ci.line_end = c[i].line_end;
    ci.page_start = ci.page_end = c[i].page;
    CHECK_OK(dq_index_doc_add_chunk(w, &ci, &ids[i]), dq_index_errmsg(idx));
  }
  for (int i = 0; i < n_s; i++) {
    dq_symbol_in si = {s[i].name, s[i].kind, NULL, s[i].line, 1, 0};
    CHECK_OK(dq_index_doc_add_symbol(w, &si), dq_index_errmsg(idx));
  }
  for (int i = 0; i < n_r; i++) {
    dq_ref_in ri = {r[i].name, r[i].kind, r[i].caller, r[i].line, 5, 0};
    CHECK_OK(dq_index_doc_add_ref(w, &ri), dq_index_errmsg(idx));
  }
  CHECK_OK(dq_index_doc_commit(w), dq_index_errmsg(idx));
}

static dq_search_result *search(dq_index *idx, const dq_search_opts *o,
                                const char *q, size_t *n) {
  dq_search_result *r = NULL;
  *n = 0;
  CHECK_OK(dq_index_search(idx, o, q, NULL, 0, &r, n), dq_index_errmsg(idx));
  return r;
}

/* The result for chunk id, or NULL. */
static const dq_search_result *find(const dq_search_result *r, size_t n,
                                    int64_t id) {
  for (size_t i = 0; i < n; i++)
    if (r[i].chunk_id == id)
      return &r[i];
  return NULL;
}

/* The query's first result is chunk `first`, ranked by symbol `name` with
 * the given strength; chunks in `unranked` got no symbol rank. */
static void expect(dq_index *idx, const char *q, int64_t first,
                   const char *name, int strong, const int64_t *unranked,
                   int n_unranked) {
  size_t n = 0;
  dq_search_result *r = search(idx, NULL, q, &n);
  CHECK_MSG(n > 0 && r[0].chunk_id == first,
            "%s: first is chunk %lld, want "
            "%lld",
            q, n ? (long long)r[0].chunk_id : -1LL, (long long)first);
  if (n && r[0].chunk_id == first) {
    CHECK_MSG(r[0].symbol_rank == 1, "%s: symbol rank %d", q, r[0].symbol_rank);
    CHECK_MSG(r[0].symbol && strcmp(r[0].symbol, name) == 0,
              "%s: symbol %s, want %s", q, r[0].symbol ? r[0].symbol : "-",
              name);
    CHECK_MSG(r[0].symbol_strong == strong, "%s: strong %d", q,
              r[0].symbol_strong);
    double bm = r[0].bm25_rank ? 1.0 / (60 + r[0].bm25_rank) : 0;
    CHECK_NEAR(r[0].score,
               bm + (strong == 2 ? 1.0 / (2 * DQ__SYM_STRONG_K)
                     : strong    ? 1.0 / (DQ__SYM_STRONG_K + 1)
                                 : 1.0 / 61),
               1e-12);
  }
  for (int i = 0; i < n_unranked; i++) {
    const dq_search_result *x = find(r, n, unranked[i]);
    CHECK_MSG(!x || !x->symbol_rank, "%s: chunk %lld has symbol rank %d (%s)",
              q, (long long)unranked[i], x ? x->symbol_rank : 0,
              x && x->symbol ? x->symbol : "-");
  }
  dq_search_results_free(r, n);
}

/* No result of the query has a symbol rank. */
static void expect_none(dq_index *idx, const char *q) {
  size_t n = 0;
  dq_search_result *r = search(idx, NULL, q, &n);
  for (size_t i = 0; i < n; i++)
    CHECK_MSG(!r[i].symbol_rank && !r[i].symbol,
              "%s: chunk %lld ranked by symbol %s", q, (long long)r[i].chunk_id,
              r[i].symbol ? r[i].symbol : "-");
  dq_search_results_free(r, n);
}

/* A qualified name (StreamWriter.close, Pool::take, Type#member) puts the
 * owner's definition first, as a strong name, and the other owners'
 * definitions of the member after it as weak ones; with no definition of
 * that owner (conn->close: a variable) every definition is strong, as for
 * the bare name. */
static void check_owner(void) {
  char *dir = NULL;
  dq_index *idx =
      scratch_index("symsearch_owner", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  /* Three classes in path order a/, b/, c/, each with a close method, and
   * first of all a function close of no class (its scope NULL). */
  static const char *const cls[] = {"Server", "StreamWriter", "Pool"};
  static const char *const path[] = {"a/server.py", "b/streams.py",
                                     "c/pool.py"};
  int64_t id[3], top;
  const char *fn[] = {"def close(handle):\n    handle.release()\n", NULL};
  dq_doc_info d0 = doc_info("0/util.py", "python");
  dq_index_doc *w0 = NULL;
  CHECK_OK(dq_index_doc_begin(idx, &d0, &w0), dq_index_errmsg(idx));
  if (w0) {
    dq_chunk_in c0 = {.text = fn[0],
                      .byte_end = (int64_t)strlen(fn[0]),
                      .line_start = 1,
                      .line_end = 3};
    CHECK_OK(dq_index_doc_add_chunk(w0, &c0, &top), dq_index_errmsg(idx));
    dq_symbol_in f0 = {"close", "function", NULL, 1, 5, 0};
    CHECK_OK(dq_index_doc_add_symbol(w0, &f0), dq_index_errmsg(idx));
    CHECK_OK(dq_index_doc_commit(w0), dq_index_errmsg(idx));
  }
  for (int i = 0; i < 3; i++) {
    dq_doc_info d = doc_info(path[i], "python");
    dq_index_doc *w = NULL;
    CHECK_OK(dq_index_doc_begin(idx, &d, &w), dq_index_errmsg(idx));
    if (!w)
      continue;
    char text[128];
    snprintf(text, sizeof text, "class %s:\n    def close(self):\n", cls[i]);
    dq_chunk_in ci = {.text = text,
                      .byte_end = (int64_t)strlen(text),
                      .line_start = 1,
                      .line_end = 9};
    CHECK_OK(dq_index_doc_add_chunk(w, &ci, &id[i]), dq_index_errmsg(idx));
    char scope[64];
    snprintf(scope, sizeof scope, i == 2 ? "pkg.%s" : "%s", cls[i]);
    dq_symbol_in cs = {cls[i], "class", NULL, 1, 7, 0};
    dq_symbol_in ms = {"close", "method", scope, 2, 9, 0};
    CHECK_OK(dq_index_doc_add_symbol(w, &cs), dq_index_errmsg(idx));
    CHECK_OK(dq_index_doc_add_symbol(w, &ms), dq_index_errmsg(idx));
    CHECK_OK(dq_index_doc_commit(w), dq_index_errmsg(idx));
  }
  static const struct {
    const char *q;
    int first; /* index into id; -1: path order (the function first), every
                  one strong */
  } c[] = {
      {"Where is StreamWriter.close defined?", 1},
      {"what does Pool::close do", 2}, /* scope pkg.Pool */
      {"Server#close", 0},
      {"Where is conn->close defined?", -1},
      {"Where is close defined?", -1},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    size_t n = 0;
    dq_search_result *r = search(idx, NULL, c[i].q, &n);
    int64_t first = c[i].first < 0 ? top : id[c[i].first];
    CHECK_MSG(n == 4 && r[0].chunk_id == first,
              "%s: %zu results, first chunk %lld, want %lld", c[i].q, n,
              n ? (long long)r[0].chunk_id : -1LL, (long long)first);
    for (size_t j = 0; j < n && n == 4; j++) {
      int want = c[i].first < 0 || j == 0;
      CHECK_MSG(r[j].symbol && strcmp(r[j].symbol, "close") == 0 &&
                    r[j].symbol_strong == want,
                "%s: result %zu symbol %s strong %d, want close %d", c[i].q,
                j + 1, r[j].symbol ? r[j].symbol : "-", r[j].symbol_strong,
                want);
    }
    dq_search_results_free(r, n);
  }
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

int main(void) {
  check_owner();
  char *dir = NULL;
  dq_index *idx =
      scratch_index("symsearch", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return TEST_EXIT();
  int64_t A[2], P[1], I[1], R[1], N[3], L[2], G[2], F[1], D[2], S1[1], S2[1],
      V[2];
  const chunk tax_c[] = {
      {"/* one line's tax */\nint tax_compute_line(const line *l) {\n"
       "  return l->net * rate(l);\n}",
       1, 10, 0},
      {"static int div_round(int a, int b) { int c = a / b; return c; }", 11,
       20, 0}};
  const sym tax_s[] = {{"tax_compute_line", "function", 3},
                       {"div_round", "function", 12},
                       {"c", "variable", 12}};
  put(idx, "src/tax.c", "c", tax_c, 2, tax_s, 3, NULL, 0, A);
  const chunk tax_h[] = {{"int tax_compute_line(const line *l);", 1, 10, 0}};
  const sym tax_hs[] = {{"tax_compute_line", "prototype", 5}};
  put(idx, "include/tax.h", "c", tax_h, 1, tax_hs, 1, NULL, 0, P);
  const chunk inv_c[] = {{"int invoice_compute_totals(invoice *inv) {\n"
                          "  for (...) sum += tax_compute_line(&l);\n}",
                          1, 20, 0}};
  const sym inv_s[] = {{"invoice_compute_totals", "function", 2}};
  const ref inv_r[] = {
      {"tax_compute_line", "call", "invoice_compute_totals", 8}};
  put(idx, "src/invoice.c", "c", inv_c, 1, inv_s, 1, inv_r, 1, I);
  const chunk rep_c[] = {
      {"static fn_t table[] = { tax_compute_line };", 1, 10, 0}};
  const ref rep_r[] = {{"tax_compute_line", "use", NULL, 4}};
  put(idx, "src/report.c", "c", rep_c, 1, NULL, 0, rep_r, 1, R);
  const chunk nda[] = {
      {"This agreement is between Orchard Peak (\"Orchard Peak\") and "
       "its counterparty.",
       1, 10, 0},
      {"2.1 \"Derived Materials\" means notes and analyses. (d) anything "
       "else marked confidential.",
       11, 20, 0},
      {"Article 3 Return. Derived Materials are destroyed at termination "
       "by Orchard Peak.",
       21, 30, 0}};
  const sym nda_s[] = {{"Orchard Peak", "term", 2},
                       {"Derived Materials", "term", 12},
                       {"2.1(d)", "section", 15},
                       {"Article 3", "section", 21}};
  const ref nda_r[] = {{"Derived Materials", "use", "Article 3", 25},
                       {"Orchard Peak", "use", "Article 3", 26}};
  put(idx, "docs/nda.md", "markdown", nda, 3, nda_s, 4, nda_r, 2, N);
  const chunk lease[] = {{"Page one: the parties and the premises.", 1, 9, 1},
                         {"\"Rent\" means the yearly sum.", 1, 9, 2}};
  const sym lease_s[] = {{"Rent", "term", 3}};
  put(idx, "lease.pdf", "pdf", lease, 2, lease_s, 1, NULL, 0, L);
  /* a term whose page is recorded maps to that page's chunk, though the
   * other page's chunk holds a line of that number and the word too */
  const chunk lease2[] = {{"The Deposit is held by the Landlord.", 1, 9, 1},
                          {"\"Deposit\" means the sum paid.", 1, 9, 2}};
  {
    dq_doc_info d2 = doc_info("lease2.pdf", "pdf");
    dq_index_doc *w2 = NULL;
    CHECK_OK(dq_index_doc_begin(idx, &d2, &w2), dq_index_errmsg(idx));
    for (int i = 0; w2 && i < 2; i++) {
      dq_chunk_in ci = {.text = lease2[i].text,
                        .byte_start = i * 1000,
                        .byte_end = i * 1000 + (int64_t)strlen(lease2[i].text),
                        .line_start = 1,
                        .line_end = 9,
                        .page_start = i + 1,
                        .page_end = i + 1};
      CHECK_OK(dq_index_doc_add_chunk(w2, &ci, &D[i]), dq_index_errmsg(idx));
    }
    dq_symbol_in ds = {"Deposit", "term", NULL, 3, 2, 2};
    if (w2) {
      CHECK_OK(dq_index_doc_add_symbol(w2, &ds), dq_index_errmsg(idx));
      CHECK_OK(dq_index_doc_commit(w2), dq_index_errmsg(idx));
    }
  }
  /* a licence's lower-case term (GPL-3's "convey") */
  const chunk gpl[] = {
      {"You may convey verbatim copies of the work you receive.", 1, 9, 0},
      {"To \"convey\" a work means propagation that lets others make "
       "copies.",
       10, 19, 0}};
  const sym gpl_s[] = {{"convey", "term", 11}};
  const ref gpl_r[] = {{"convey", "use", NULL, 2}};
  put(idx, "GPL-3", "text", gpl, 2, gpl_s, 1, gpl_r, 1, V);
  /* one term defined in two documents: the one that sorts first by path is
   * not the one the question's other words point at */
  const chunk sc1[] = {{"\"Service Credit\" means a credit under the hosting "
                        "terms.",
                        1, 3, 0}};
  const chunk sc2[] = {{"\"Service Credit\" means a refund under the support "
                        "plan.",
                        1, 3, 0}};
  const sym sc_s[] = {{"Service Credit", "term", 1}};
  put(idx, "docs/credit_a.md", "markdown", sc1, 1, sc_s, 1, NULL, 0, S1);
  put(idx, "docs/credit_b.md", "markdown", sc2, 1, sc_s, 1, NULL, 0, S2);
  const chunk gc_c[] = {
      {"static void sweeplist (lua_State *L) { }\nint LTfloatint (double f)"
       "\nvoid read_string (void)\nvoid read_numeral (void)\nint line;",
       1, 10, 0},
      {"static void fullgc (lua_State *L) { sweeplist(L); }", 11, 20, 0}};
  const sym gc_s[] = {
      {"sweeplist", "function", 3},   {"LTfloatint", "function", 5},
      {"read_string", "function", 6}, {"read_numeral", "function", 7},
      {"line", "field", 8},           {"lua_call", "macro", 9},
      {"lua_call", "function", 12}};
  const ref gc_r[] = {{"sweeplist", "call", "fullgc", 15},
                      {"SQLite", "use", "fullgc", 16}};
  put(idx, "src/gc.c", "c", gc_c, 2, gc_s, 7, gc_r, 2, G);
  static const char *const filler[] = {"tax tables by country",
                                       "line items and totals",
                                       "the function index", NULL};
  for (int i = 0; filler[i]; i++) {
    char p[32];
    snprintf(p, sizeof p, "fill/%d.txt", i);
    const chunk f[] = {{filler[i], 1, 2, 0}};
    put(idx, p, "text", f, 1, NULL, 0, NULL, 0, F);
  }

  /* An identifier: its definition leads, not the prototype (a definition
   * exists), then its call site and use follow as weak. */
  expect(idx, "Where is tax_compute_line defined?", A[0], "tax_compute_line", 1,
         P, 1);
  size_t n = 0;
  dq_search_result *r = search(idx, NULL, "what does tax_compute_line do", &n);
  const dq_search_result *x = find(r, n, I[0]), *y = find(r, n, R[0]);
  CHECK(x && x->symbol_rank == 2 && !x->symbol_strong);
  CHECK(y && y->symbol_rank == 3 && !y->symbol_strong);
  dq_search_results_free(r, n);
  /* "declared" asks for the prototype too. */
  r = search(idx, NULL, "where is tax_compute_line declared", &n);
  x = find(r, n, P[0]);
  CHECK(x && x->symbol_rank == 2 && x->symbol_strong);
  dq_search_results_free(r, n);
  /* Callers: the call site leads; the definition is not listed. */
  expect(idx, "Which function calls tax_compute_line?", I[0],
         "tax_compute_line", 1, A, 1);
  /* What the chunk holds of the name, and where. */
  r = search(idx, NULL, "Which function calls tax_compute_line?", &n);
  CHECK(n && r[0].symbol_kind && !strcmp(r[0].symbol_kind, "call") &&
        r[0].symbol_where &&
        !strcmp(r[0].symbol_where, "invoice_compute_totals"));
  dq_search_results_free(r, n);
  r = search(idx, NULL, "Where is tax_compute_line defined?", &n);
  CHECK(n && r[0].symbol_kind && !strcmp(r[0].symbol_kind, "function") &&
        !r[0].symbol_where);
  x = find(r, n, R[0]);
  CHECK(x && x->symbol_kind && !strcmp(x->symbol_kind, "use"));
  dq_search_results_free(r, n);
  expect(idx, "where is tax_compute_line called", I[0], "tax_compute_line", 1,
         A, 1);
  expect(idx, "callers of tax_compute_line", I[0], "tax_compute_line", 1, A, 1);
  /* ... but the name's own calls are in its body, and "the function called
   * X" names X. */
  expect(idx, "What does tax_compute_line call?", A[0], "tax_compute_line", 1,
         NULL, 0);
  expect(idx, "show the function called tax_compute_line", A[0],
         "tax_compute_line", 1, NULL, 0);
  /* Other spellings of an identifier. */
  expect(idx, "TAX_COMPUTE_LINE", A[0], "tax_compute_line", 1, NULL, 0);
  expect(idx, "what is ledger.tax_compute_line", A[0], "tax_compute_line", 1,
         NULL, 0);
  expect(idx, "what does `div_round` return", A[1], "div_round", 1, NULL, 0);
  expect(idx, "where is LTfloatint", G[0], "LTfloatint", 1, NULL, 0);
  /* capitals alone make a name only when the index defines it */
  expect_none(idx, "which functions write an SQLite value");
  /* a function before a macro of the same name */
  expect(idx, "where is lua_call defined", G[1], "lua_call", 1, NULL, 0);
  /* A plain word where a question puts a code name, when it names a
   * function or type: not the field line, not after "which function". */
  expect(idx, "Which functions call sweeplist?", G[1], "sweeplist", 1, G, 1);
  expect(idx, "What does sweeplist do?", G[0], "sweeplist", 1, NULL, 0);
  expect(idx, "where is sweeplist defined", G[0], "sweeplist", 1, NULL, 0);
  expect_none(idx, "how is sweeplist related to memory");
  expect_none(idx, "where is line defined");
  /* A file the query names: its chunks, in order, each the same weight;
   * its extension is not the variable c. */
  r = search(idx, NULL, "what is in tax.c", &n);
  CHECK_EQ_INT(n, 2);
  for (int k = 0; k < 2; k++) {
    x = find(r, n, A[k]);
    CHECK_MSG(x && x->symbol_strong == 2 && x->symbol_rank == k + 1 &&
                  x->symbol && !strcmp(x->symbol, "tax.c") &&
                  !strcmp(x->symbol_kind, "file") && !x->symbol_where,
              "tax.c chunk %d", k);
  }
  /* Same weight each: BM25 orders them. Both match the file's name in
   * their context, so the shorter comes first. */
  CHECK(n == 2 && r[0].chunk_id == A[1] && r[1].chunk_id == A[0]);
  dq_search_results_free(r, n);
  /* the folders written before the name count; where they match no
   * path, the name alone */
  expect(idx, "summarise docs/nda.md", N[0], "docs/nda.md", 2, NULL, 0);
  expect(idx, "summarise ./docs/nda.md", N[0], "docs/nda.md", 2, NULL, 0);
  expect(idx, "summarise old/nda.md", N[0], "nda.md", 2, NULL, 0);
  expect_none(idx, "summarise a.md"); /* not the end of docs/nda.md */
  /* with a name: the name's definition leads, the file's chunks follow */
  r = search(idx, NULL, "where is tax_compute_line defined in tax.c", &n);
  CHECK(n >= 2 && r[0].chunk_id == A[0] && r[0].symbol_strong == 1 &&
        r[1].chunk_id == A[1] && r[1].symbol_strong == 2);
  dq_search_results_free(r, n);
  /* By its words: all of tax_compute_line's parts are in the query. */
  expect(idx, "Which function computes the tax on a single line?", A[0],
         "tax_compute_line", 0, P, 1);
  expect(idx, "how is the tax of a line computed", A[0], "tax_compute_line", 0,
         NULL, 0);
  /* Two words say too little, kind named or not; a kind named keeps only
   * symbols of that kind. */
  expect_none(idx, "how do we round a div");
  expect_none(idx, "which function rounds a div");
  expect_none(idx, "which function reads a numeral string");
  expect_none(idx, "which struct computes the tax of a line");
  /* An identifier named: no word matches besides (tax_compute_line's
   * words would match). */
  r = search(idx, NULL, "which function computes the tax line of div_round",
             &n);
  CHECK(n && r[0].chunk_id == A[1] && r[0].symbol_strong);
  x = find(r, n, A[0]);
  CHECK(!x || !x->symbol_rank);
  dq_search_results_free(r, n);
  /* Terms: strong when their meaning is asked, else left to BM25. */
  expect(idx,
         "How does the agreement with Orchard Peak define Derived "
         "Materials?",
         N[1], "Derived Materials", 1, N, 1);
  expect(idx, "what does derived materials mean", N[1], "Derived Materials", 1,
         NULL, 0);
  expect_none(idx, "What happens to Derived Materials at termination?");
  /* a one-word lower-case term: "mean to" asks its meaning; used in
   * passing it is left to BM25 */
  expect(idx, "What does it mean to convey a work under GPL version 3?", V[1],
         "convey", 1, NULL, 0);
  expect(idx, "how does the GPL define convey", V[1], "convey", 1, NULL, 0);
  expect_none(idx, "May I convey verbatim copies?");
  /* or when a question asks about it after "is the", ending there or going
   * on with where it is defined; not when it only opens a clause */
  expect(idx, "What is the Derived Materials of the NDA?", N[1],
         "Derived Materials", 1, NULL, 0);
  expect(idx, "how long is the Derived Materials", N[1], "Derived Materials",
         1, NULL, 0);
  expect_none(idx, "What is the Derived Materials retention duty?");
  expect_none(idx, "The retention is the Derived Materials?");
  /* Sections by their number. */
  expect(idx, "What does section 2.1(d) cover?", N[1], "2.1(d)", 1, NULL, 0);
  expect(idx, "summarise article 3", N[2], "Article 3", 1, NULL, 0);
  expect_none(idx, "an interest of 2.1 percent");
  /* PDF lines count within a page: the chunk of the page whose text has
   * the term. */
  expect(idx, "what does Rent mean", L[1], "Rent", 1, NULL, 0);
  expect(idx, "what does Deposit mean", D[1], "Deposit", 1, NULL, 0);
  /* a name's definitions of one kind weigh alike: the text decides */
  expect(idx, "what does Service Credit mean in the support plan", S2[0],
         "Service Credit", 1, NULL, 0);
  expect(idx, "what does Service Credit mean for hosting", S1[0],
         "Service Credit", 1, NULL, 0);
  /* Filters apply: under docs/ the code's chunks are not candidates. */
  const char *docs[] = {"docs/"};
  dq_search_opts pf = {.paths = docs, .n_paths = 1};
  r = search(idx, &pf, "tax_compute_line and Derived Materials defined", &n);
  for (size_t i = 0; i < n; i++)
    CHECK_MSG(strncmp(r[i].path, "docs/", 5) == 0, "filtered: %s", r[i].path);
  dq_search_results_free(r, n);
  /* Off: BM25 alone. */
  dq_search_opts off = {.no_symbols = 1};
  r = search(idx, &off, "Which function calls tax_compute_line?", &n);
  for (size_t i = 0; i < n; i++)
    CHECK(!r[i].symbol_rank && !r[i].symbol && r[i].bm25_rank);
  dq_search_results_free(r, n);
  /* Odd queries find what BM25 finds and nothing breaks. */
  char longq[3000];
  memset(longq, 'x', sizeof longq - 1);
  longq[sizeof longq - 1] = '\0';
  for (int i = 0; i < 2900; i += 7)
    longq[i] = i % 3 ? ' ' : '_';
  static const char *const odd[] = {"",
                                    "()",
                                    "section",
                                    "section (",
                                    "2.1(",
                                    "2.1(abcdefgh)",
                                    "a.b.",
                                    "`",
                                    "::x",
                                    "x::",
                                    "->",
                                    "#",
                                    "\xff\xfe define",
                                    "define",
                                    "callers",
                                    NULL};
  for (int i = 0; odd[i]; i++) {
    r = search(idx, NULL, odd[i], &n);
    dq_search_results_free(r, n);
  }
  r = search(idx, NULL, longq, &n);
  dq_search_results_free(r, n);
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
  return TEST_EXIT();
}
