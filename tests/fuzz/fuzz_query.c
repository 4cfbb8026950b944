/*
 * fuzz_query.c - libFuzzer harness for a query's way through search: the
 * FTS5 query builder (index/tokenizer.c) and the symbol signal's reading
 * of the query (index/search_sym.c: tokens, section tails, n-grams, case
 * variants, stems, prefix ranges), over a small index made once with a
 * symbol of every kind the signal treats differently, their uses, and a
 * PDF's paged chunks. The input is the query (a NUL ends it); an odd first
 * byte also filters by path. Checks: the search succeeds, results come in
 * score order, a symbol rank comes with its name. Crashes, sanitizer
 * reports, leaks and broken invariants are findings.
 */
#include "index_int.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static dq_index *g_idx;
static char g_dir[64];

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "invariant broken: %s\n", what);
    abort();
  }
}

static int rm_cb(const char *p, const struct stat *sb, int flag,
                 struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p);
}

static void cleanup(void) {
  dq_index_close(g_idx);
  nftw(g_dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

typedef struct row {
  const char *name, *kind; /* kind "call"/"use": a reference */
  int line;
} row;

static void put(const char *path, const char *kind, const char *const *text,
                int page, const row *rows) {
  dq_doc_info d = {.path = path, .root = "/r", .kind = kind, .mtime = 1,
                   .bytes = 1};
  dq_index_doc *w = NULL;
  check(dq_index_doc_begin(g_idx, &d, &w) == DQ_OK, "doc begin");
  for (int i = 0; text[i]; i++) {
    dq_chunk_in c = {.text = text[i], .line_start = 1 + (page ? 0 : 10 * i),
                     .line_end = 10 + (page ? 0 : 10 * i),
                     .page_start = page ? i + 1 : 0,
                     .page_end = page ? i + 1 : 0,
                     .byte_start = 100 * i,
                     .byte_end = 100 * i + (int64_t)strlen(text[i])};
    check(dq_index_doc_add_chunk(w, &c, NULL) == DQ_OK, "add chunk");
  }
  for (int i = 0; rows[i].name; i++) {
    int is_ref = !strcmp(rows[i].kind, "call") || !strcmp(rows[i].kind, "use");
    if (is_ref) {
      dq_ref_in r = {rows[i].name, rows[i].kind, "f", rows[i].line, 1, 0};
      check(dq_index_doc_add_ref(w, &r) == DQ_OK, "add ref");
    } else {
      dq_symbol_in s = {rows[i].name, rows[i].kind, NULL, rows[i].line, 1, 0};
      check(dq_index_doc_add_symbol(w, &s) == DQ_OK, "add symbol");
    }
  }
  check(dq_index_doc_commit(w) == DQ_OK, "commit");
}

static void setup(void) {
  const char *t = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/dq_fuzzq_XXXXXX", t && *t ? t : "/tmp");
  check(mkdtemp(g_dir) != NULL, "mkdtemp");
  dq_index_opts o = {.create = 1};
  dq_error err = {0};
  check(dq_index_open(g_dir, &o, &g_idx, &err) == DQ_OK, "open");
  atexit(cleanup);
  static const char *const code[] = {
      "int tax_compute_line(line *l) { return div_round(l->n, 3); }",
      "void sweeplist(void) { tax_compute_line(0); } int LTfloatint;",
      "#define read_string(x) x\nstruct Parser { int line; };", NULL};
  static const row code_rows[] = {
      {"tax_compute_line", "function", 1}, {"tax_compute_line", "prototype", 2},
      {"div_round", "function", 3},        {"sweeplist", "function", 11},
      {"LTfloatint", "variable", 12},      {"read_string", "macro", 21},
      {"read_numeral", "function", 22},    {"Parser", "struct", 23},
      {"line", "field", 24},               {"c", "variable", 25},
      {"tax_compute_line", "call", 13},    {"div_round", "use", 5},
      {"sweeplist", "call", 28},           {NULL, NULL, 0}};
  put("src/tax.c", "c", code, 0, code_rows);
  static const char *const nda[] = {
      "\"Derived Materials\" means notes. 2.1 (d) Article 3 Section 5",
      "Orchard Peak and Derived Materials; see clause 2.1(d).", NULL};
  static const row nda_rows[] = {
      {"Derived Materials", "term", 1}, {"Orchard Peak", "term", 11},
      {"2.1(d)", "section", 2},         {"Article 3", "section", 3},
      {"5", "section", 4},              {"Section 5", "section", 4},
      {"Derived Materials", "use", 12}, {"2.1(d)", "use", 13},
      {NULL, NULL, 0}};
  put("docs/nda.md", "markdown", nda, 0, nda_rows);
  static const char *const pdf[] = {"\"Rent\" is due.", "Rent: 5.", NULL};
  static const row pdf_rows[] = {{"Rent", "term", 1}, {NULL, NULL, 0}};
  put("lease.pdf", "pdf", pdf, 1, pdf_rows);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  if (!g_idx)
    setup();
  char *q = strndup((const char *)data, n);
  if (!q)
    return 0;
  static const char *const docs[] = {"docs/"};
  dq_search_opts o = {0};
  if (n && (data[0] & 1)) {
    o.paths = docs;
    o.n_paths = 1;
  }
  dq_search_result *r = NULL;
  size_t nr = 0;
  dq_status s = dq_index_search(g_idx, &o, q, NULL, 0, &r, &nr);
  check(s == DQ_OK, dq_index_errmsg(g_idx));
  for (size_t i = 0; i < nr; i++) {
    check(i == 0 || r[i - 1].score >= r[i].score, "score order");
    check((r[i].symbol_rank > 0) == (r[i].symbol != NULL), "symbol name");
    check((r[i].symbol != NULL) == (r[i].symbol_kind != NULL), "symbol kind");
    check(r[i].symbol || !r[i].symbol_where, "symbol where");
    check(r[i].symbol_rank || r[i].bm25_rank, "ranked by no signal");
    check(!o.n_paths || strncmp(r[i].path, "docs/", 5) == 0, "path filter");
  }
  dq_search_results_free(r, nr);
  free(q);
  return 0;
}
