/*
 * test_index_search.c - hybrid search on a hand-checked example.
 *
 * Ten chunks; four match the query word "alpha" or carry a vector:
 *   c1 "alpha alpha alpha"            vector (0.5, 0, 0.866, 0)
 *   c2 "alpha beta"                   vector (0, 1, 0, 0)
 *   c3 "gamma delta alpha eps zeta"   vector (0.9, 0.436, 0, 0)
 *   c4 "omega"                        vector (1, 0, 0, 0)
 * plus six filler chunks without "alpha" or vectors (so BM25's idf for
 * alpha is positive: N = 10, n = 3). Query "alpha", vector (1, 0, 0, 0).
 * BM25 order: c1, c2, c3 (c2 is markdown, so its first words, "alpha
 * beta", are also its document's context and it meets alpha twice).
 * Dense order (inner product 1, 0.9, 0.5, 0): c4, c3, c1, c2.
 * Convex combination with BM25 weight w, each leg min-max normalised over
 * its candidates (dense: c4 1, c3 0.9, c1 0.5, c2 0; BM25: c1 1, c3 0, c2
 * b = (bm25(c2) - bm25(c3)) / (bm25(c1) - bm25(c3)), read from the scores):
 *   w = 0.7 (default): c1 0.85, c2 0.7 b, c4 0.3, c3 0.27
 *                      -> c1, c2, c4, c3 when b > 3/7 (checked)
 *   w = 0.1:           c4 0.9, c3 0.81, c1 0.55, c2 0.1 b -> c4, c3, c1, c2
 *   w = 1:             BM25's order, then dense alone: c1, c2, c3, c4
 * Equal-weight RRF (k = 60) would have ranked c3 second (1/63 + 1/62)
 * and c2 third (1/62 + 1/64): its ranks do not see that c2's BM25 score
 * is close to c1's while c3's dense score is close to c1's only.
 * The fused score is legs / (rrf_k + rank): 2 / 61 for the first.
 * Then filters (path prefix, exact path, kind) and BM25-only search.
 * Before all that, check_context: the document context indexed with each
 * chunk.
 */
#include "index_testutil.h"

#define DIM 4

static void put(dq_index *idx, const char *path, const char *kind,
                const char *text, const float *vec, int64_t *id) {
  const char *t[] = {text, NULL};
  CHECK_OK(put_doc(idx, path, kind, t, id), dq_index_errmsg(idx));
  if (vec)
    CHECK_OK(dq_index_set_embeddings(idx, id, vec, 1, DIM),
             dq_index_errmsg(idx));
}

static void order(dq_index *idx, const dq_search_opts *o, const float *q,
                  const int64_t *want, size_t n_want) {
  dq_search_result *r = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_search(idx, o, "alpha", q, DIM, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, n_want);
  for (size_t i = 0; i < n && i < n_want; i++)
    CHECK_MSG(r[i].chunk_id == want[i], "rank %zu: chunk %lld, want %lld",
              i + 1, (long long)r[i].chunk_id, (long long)want[i]);
  dq_search_results_free(r, n);
}

/* A document's context (its path; for prose also its first words) is
 * indexed with every chunk: a question that names the document and a
 * clause finds that clause of that document, not the document's title
 * passage nor the same clause of another document. */
static void check_context(void) {
  char *dir = NULL;
  dq_index *idx =
      scratch_index("search_ctx", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  const char *nda[] = {
      "Mutual Non-Disclosure Agreement. This Mutual Non-Disclosure Agreement"
      " is made between Orchard Peak and Saltmarsh.",
      "Confidential Information means all information that a party"
      " discloses to the other.",
      "9.1 This Agreement is governed by the laws of the State of Delaware.",
      NULL};
  const char *msa[] = {
      "Master Services Agreement between Kestrel Ledger and Wharfside.",
      "12.5 This Agreement is governed by the law of England and Wales.", NULL};
  const char *code[] = {"/* Copyright notice: mutual licence terms */",
                        "int total(void) { return 0; }", NULL};
  int64_t nda_id[3], msa_id[2], code_id[2];
  CHECK_OK(put_doc(idx, "contracts/mutual_nda.md", "markdown", nda, nda_id),
           dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "contracts/msa.txt", "text", msa, msa_id),
           dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "src/invoice.c", "c", code, code_id),
           dq_index_errmsg(idx));
  static const struct {
    const char *q;
    int doc, chunk; /* 0 nda, 1 msa, 2 code */
  } m[] = {
      {"Which law governs the mutual non-disclosure agreement?", 0, 2},
      {"Which law governs the Kestrel agreement?", 1, 1},
      {"What does the NDA between Orchard Peak and Saltmarsh say about"
       " confidential information?",
       0, 1},
      {"invoice total", 2, 1}, /* the file's name, then the word */
  };
  const int64_t *ids[] = {nda_id, msa_id, code_id};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    dq_search_result *r = NULL;
    size_t n = 0;
    CHECK_OK(dq_index_search(idx, NULL, m[i].q, NULL, 0, &r, &n),
             dq_index_errmsg(idx));
    CHECK_MSG(n >= 1 && r[0].chunk_id == ids[m[i].doc][m[i].chunk],
              "query %s: first chunk %lld (%s), want %lld", m[i].q,
              n ? (long long)r[0].chunk_id : -1LL, n ? r[0].path : "-",
              (long long)ids[m[i].doc][m[i].chunk]);
    dq_search_results_free(r, n);
  }
  /* A code file's context is its path alone: its header comment's words
   * ("mutual", "licence") are not every chunk's. */
  dq_search_result *r = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_search(idx, NULL, "licence", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 1);
  CHECK(n == 1 && r[0].chunk_id == code_id[0]);
  dq_search_results_free(r, n);
  dq_index_close(idx);
  sqlite3 *db = raw_open(dir);
  sqlite3_stmt *st = NULL;
  sqlite3_prepare_v2(db,
                     "SELECT d.context FROM chunks c JOIN documents d ON"
                     " d.id = c.doc WHERE c.id = ?1",
                     -1, &st, NULL);
  static const struct {
    int doc, chunk;
    const char *want;
  } c[] = {
      {0, 2,
       "contracts/mutual_nda.md\nMutual Non-Disclosure Agreement. This"
       " Mutual Non-Disclosure Agreement is made between Orchard Peak"
       " and Saltmarsh"},
      {2, 1, "src/invoice.c\n"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    sqlite3_bind_int64(st, 1, ids[c[i].doc][c[i].chunk]);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    CHECK_EQ_STR((const char *)sqlite3_column_text(st, 0), c[i].want);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK(raw_integrity_ok(dir));
  rm_rf(dir);
  free(dir);
}

/* A contents or index page names many terms in few words: BM25 puts it
 * first for a function's name it lists, before the page that documents
 * the function. Its score counts half, so the documenting page leads. */
static void check_listing(void) {
  char *dir = NULL;
  dq_index *idx =
      scratch_index("search_listing", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  const char *manual[] = {
      "Function Index\nasn1_copy_node . . . . . . 14\n"
      "asn1_create_element . . . . 13\nasn1_delete_element . . . . 12\n",
      "asn1_create_element\nint asn1_create_element (asn1_node definitions,"
      " const char *source_name, asn1_node *element)\nCreates a structure"
      " called source_name from the definitions and returns it in"
      " element; the structure must be deleted when no longer used.",
      "asn1_copy_node\nCopies a node and its children to another node.",
      "asn1_delete_element\nDeletes the element named in a structure.", NULL};
  int64_t id[4];
  CHECK_OK(put_doc(idx, "manual.pdf", "pdf", manual, id), dq_index_errmsg(idx));
  /* FTS5's own BM25 puts the listing first (else this test says
   * nothing) */
  sqlite3 *db = raw_open(dir);
  CHECK_EQ_INT(raw_int(db, "SELECT rowid FROM chunks_fts WHERE chunks_fts"
                           " MATCH 'asn1_create_element' ORDER BY"
                           " bm25(chunks_fts) LIMIT 1"),
               id[0]);
  sqlite3_close(db);
  dq_search_result *r = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_search(idx, NULL, "asn1_create_element", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 4); /* the document's first words go with every chunk */
  if (n == 4) {
    CHECK_EQ_INT(r[0].chunk_id, id[1]);
    CHECK_EQ_INT(r[0].bm25_rank, 1);
    for (size_t i = 1; i < n; i++)
      if (r[i].chunk_id == id[0])
        CHECK(r[i].bm25_rank > 1);
  }
  dq_search_results_free(r, n);
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

int main(void) {
  check_context();
  check_listing();
  char *dir = NULL;
  dq_error err = {0};
  dq_index *idx = scratch_index(
      "search",
      (dq_index_opts){.create = 1, .embed_model = "t", .embed_dim = DIM}, &dir);
  if (!idx)
    return TEST_EXIT();
  const float v1[] = {0.5f, 0, 0.866f, 0}, v2[] = {0, 1, 0, 0},
              v3[] = {0.9f, 0.436f, 0, 0}, v4[] = {1, 0, 0, 0};
  int64_t c1, c2, c3, c4, f;
  put(idx, "docs/one.md", "markdown", "alpha alpha alpha", v1, &c1);
  put(idx, "docs/two.md", "markdown", "alpha beta", v2, &c2);
  put(idx, "src/three.c", "c", "gamma delta alpha eps zeta", v3, &c3);
  put(idx, "src/four.c", "c", "omega", v4, &c4);
  static const char *const filler[] = {"red", "green", "blue",
                                       "cyan", "magenta", "yellow"};
  for (int i = 0; i < 6; i++) {
    char p[32];
    snprintf(p, sizeof p, "fill/%d.txt", i);
    put(idx, p, "text", filler[i], NULL, &f);
  }
  dq_search_result *r = NULL;
  size_t n = 0;
  const float q[] = {1, 0, 0, 0};
  dq_search_opts so = {.rrf_k = 60};
  int64_t want07[] = {c1, c2, c4, c3};
  order(idx, &so, q, want07, 4);
  so.lexical_weight = 0.1;
  int64_t want01[] = {c4, c3, c1, c2};
  order(idx, &so, q, want01, 4);
  so.lexical_weight = 1;
  int64_t want1[] = {c1, c2, c3, c4};
  order(idx, &so, q, want1, 4);
  so.lexical_weight = 1.5;
  CHECK(dq_index_search(idx, &so, "alpha", q, DIM, &r, &n) == DQ_ERR_ARG);
  so.lexical_weight = -0.5;
  CHECK(dq_index_search(idx, &so, "alpha", q, DIM, &r, &n) == DQ_ERR_ARG);

  /* Per-signal ranks and scores, and the fused score, recomputed here
   * from the scores the search reports. */
  dq_search_opts s60 = {.rrf_k = 60};
  CHECK_OK(dq_index_search(idx, &s60, "alpha", q, DIM, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 4);
  if (n == 4) {
    CHECK_EQ_INT(r[0].bm25_rank, 1);
    CHECK_EQ_INT(r[0].dense_rank, 3);
    CHECK_NEAR(r[0].score, 2.0 / 61, 1e-12);
    CHECK_NEAR(r[3].score, 2.0 / 64, 1e-12);
    CHECK_NEAR(r[0].dense_score, 0.5, 2e-3); /* f16-stored, normalised */
    double b1 = r[0].bm25_score, b2 = r[1].bm25_score, b3 = r[3].bm25_score;
    CHECK(b1 > b2 && b2 > b3 && b3 > 0);
    double b = (b2 - b3) / (b1 - b3);
    CHECK_MSG(b > 3.0 / 7, "c2's normalised BM25 %g", b);
    double dlo = r[1].dense_score, dhi = r[2].dense_score;
    CHECK_NEAR(dlo, 0.0, 1e-3);
    CHECK_NEAR(dhi, 1.0, 1e-3);
    double cc[4];
    for (int i = 0; i < 4; i++)
      cc[i] =
          (r[i].bm25_rank ? 0.7 * (r[i].bm25_score - b3) / (b1 - b3) : 0) +
          (r[i].dense_rank ? 0.3 * (r[i].dense_score - dlo) / (dhi - dlo) : 0);
    CHECK_NEAR(cc[0], 0.85, 1e-3);
    CHECK_NEAR(cc[2], 0.3, 1e-3);
    CHECK_NEAR(cc[3], 0.27, 1e-3);
    for (int i = 0; i + 1 < 4; i++)
      CHECK_MSG(cc[i] > cc[i + 1], "rank %d: %g after %g", i + 2, cc[i + 1],
                cc[i]);
    CHECK_EQ_INT(r[2].bm25_rank, 0);
    CHECK_EQ_INT(r[2].dense_rank, 1);
    CHECK_EQ_STR(r[3].path, "src/three.c");
    CHECK_EQ_STR(r[3].root, "/root");
    CHECK_EQ_STR(r[3].text, "gamma delta alpha eps zeta");
    CHECK_EQ_INT(r[3].line_start, 1);
    CHECK_EQ_INT(r[3].line_end, 2);
  }
  dq_search_results_free(r, n);
  /* rrf_k scales the score, not the order of BM25 and dense. */
  so = (dq_search_opts){.rrf_k = 0.5};
  order(idx, &so, q, want07, 4);

  /* k limits the results. */
  dq_search_opts k2 = {.k = 2};
  CHECK_OK(dq_index_search(idx, &k2, "alpha", q, DIM, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 2);
  dq_search_results_free(r, n);

  /* Path prefix filter: only src/ (c3, c4): c3 is BM25's only candidate
   * (normalised 1) and dense's last (0), c4 dense's first: c3 0.7 > c4
   * 0.3. */
  const char *src_only[] = {"src/"};
  dq_search_opts pf = {.paths = src_only, .n_paths = 1};
  int64_t want_src[] = {c3, c4};
  order(idx, &pf, q, want_src, 2);
  /* Exact path filter; the dense side must look past c4, c3 to find c2. */
  const char *two[] = {"docs/two.md"};
  dq_search_opts ef = {.paths = two, .n_paths = 1, .n_dense = 1};
  CHECK_OK(dq_index_search(idx, &ef, "alpha", q, DIM, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 1);
  if (n) {
    CHECK_EQ_INT(r[0].chunk_id, c2);
    CHECK_EQ_INT(r[0].dense_rank, 1);
    CHECK_EQ_INT(r[0].bm25_rank, 1);
  }
  dq_search_results_free(r, n);
  /* Whole documents: every chunk under src/ and fill/0.txt in document
   * order (path), whatever the query; k caps; no paths is an error. */
  const char *whole[] = {"src/", "fill/0.txt"};
  dq_search_opts wf = {.paths = whole, .n_paths = 2, .all_chunks = 1,
                       .k = 100};
  CHECK_OK(dq_index_search(idx, &wf, "nothing matches", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 3);
  if (n == 3) {
    CHECK_EQ_STR(r[0].path, "fill/0.txt");
    CHECK_EQ_INT(r[1].chunk_id, c4); /* src/four.c before src/three.c */
    CHECK_EQ_INT(r[2].chunk_id, c3);
    CHECK_EQ_INT(r[2].bm25_rank, 0);
  }
  dq_search_results_free(r, n);
  wf.k = 2;
  CHECK_OK(dq_index_search(idx, &wf, "", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 2);
  dq_search_results_free(r, n);
  dq_search_opts nf = {.all_chunks = 1};
  CHECK(dq_index_search(idx, &nf, "alpha", NULL, 0, &r, &n) == DQ_ERR_ARG);
  /* Kind filter. */
  dq_search_opts kf = {.kind = "markdown"};
  int64_t want_md[] = {c1, c2}; /* c1: 2/61 (first on both), c2: 2/62 */
  order(idx, &kf, q, want_md, 2);

  /* BM25 only (no vector): c1, c2, c3 with no dense ranks. */
  CHECK_OK(dq_index_search(idx, NULL, "alpha", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 3);
  if (n == 3) {
    CHECK_EQ_INT(r[0].chunk_id, c1);
    CHECK_EQ_INT(r[1].chunk_id, c2);
    CHECK_EQ_INT(r[2].chunk_id, c3);
    CHECK_EQ_INT(r[2].dense_rank, 0);
    CHECK_NEAR(r[1].score, 1.0 / 62, 1e-12);
  }
  dq_search_results_free(r, n);
  /* A query with no words and no vector finds nothing (no error). */
  CHECK_OK(dq_index_search(idx, NULL, "?!", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 0);
  dq_search_results_free(r, n);

  /* WAL: a reader opens and searches while a writer is in the middle of
   * re-ingesting c1's document, and sees the committed state; after the
   * commit a new search sees the new version. */
  dq_doc_info di = doc_info("docs/one.md", "markdown");
  dq_index_doc *w = NULL;
  CHECK_OK(dq_index_doc_begin(idx, &di, &w), dq_index_errmsg(idx));
  dq_chunk_in ch = chunk_in("replacement text", 1);
  CHECK_OK(dq_index_doc_add_chunk(w, &ch, NULL), dq_index_errmsg(idx));
  dq_index *rd = NULL;
  dq_index_opts ro = {.read_only = 1};
  CHECK_OK(dq_index_open(dir, &ro, &rd, &err), err.msg);
  if (rd) {
    dq_search_opts s = {.rrf_k = 60};
    order(rd, &s, q, want07, 4);
    CHECK_OK(dq_index_doc_commit(w), dq_index_errmsg(idx));
    w = NULL;
    CHECK_OK(dq_index_search(rd, NULL, "replacement", NULL, 0, &r, &n),
             dq_index_errmsg(rd));
    CHECK_EQ_INT(n, 1);
    dq_search_results_free(r, n);
    dq_index_close(rd);
  }
  dq_index_doc_abort(w);
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
  return TEST_EXIT();
}
