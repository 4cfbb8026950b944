/*
 * test_index_docs.c - adding, re-ingesting and deleting documents keeps the
 * tables, the FTS index and the vectors consistent: after each step the
 * chunk rows, FTS matches, symbols/refs, stored embeddings and the vector
 * index describe exactly the current version; an aborted re-ingest leaves
 * the old version; lookups and listings report what was stored. Also the
 * xref lookups (symbols, refs, suggestions) and chat sessions.
 */
#include "index_testutil.h"

#define DIM 8

static size_t hits(dq_index *idx, const char *q) {
  dq_search_result *r = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_search(idx, NULL, q, NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  dq_search_results_free(r, n);
  return n;
}

static void embed(dq_index *idx, const int64_t *ids, size_t n, int seed) {
  float v[16 * DIM];
  for (size_t i = 0; i < n * DIM; i++)
    v[i] = (float)((i * 7 + (size_t)seed * 13) % 11) - 5.0f + 0.5f;
  CHECK_OK(dq_index_set_embeddings(idx, ids, v, n, DIM),
           dq_index_errmsg(idx));
}

/* Tables, FTS, embeddings and the vector index agree. */
static void check_consistent(dq_index *idx, const char *dir,
                             int64_t want_chunks) {
  dq_index_stats st;
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.n_chunks, want_chunks);
  CHECK_EQ_INT(st.n_vectors, st.n_embedded);
  CHECK(raw_integrity_ok(dir));
  sqlite3 *db = raw_open(dir);
  CHECK_EQ_INT(raw_int(db, "SELECT count(*) FROM chunks_fts"), want_chunks);
  CHECK_EQ_INT(raw_int(db, "SELECT count(*) FROM chunks c LEFT JOIN documents"
                           " d ON d.id = c.doc WHERE d.id IS NULL"),
               0);
  sqlite3_close(db);
}

static void check_lifecycle(void) {
  char *dir = scratch_dir("docs");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1, .embed_model = "m", .embed_dim = DIM};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  if (!idx)
    return;
  int64_t ids[4] = {0};
  const char *v1[] = {"apple orchard notes", "banana split recipe",
                      "cherry blossom season", NULL};
  dq_doc_info d = doc_info("fruit.md", "markdown");
  dq_index_doc *w = NULL;
  CHECK_OK(dq_index_doc_begin(idx, &d, &w), dq_index_errmsg(idx));
  for (int i = 0; v1[i]; i++) {
    dq_chunk_in c = chunk_in(v1[i], i + 1);
    c.section = "Fruit";
    CHECK_OK(dq_index_doc_add_chunk(w, &c, &ids[i]), dq_index_errmsg(idx));
  }
  dq_symbol_in sy = {.name = "make_pie", .kind = "function", .line = 3,
                     .col = 5};
  dq_ref_in rf = {.name = "make_pie", .kind = "call", .caller = "main",
                  .line = 9, .col = 2};
  CHECK_OK(dq_index_doc_add_symbol(w, &sy), dq_index_errmsg(idx));
  CHECK_OK(dq_index_doc_add_ref(w, &rf), dq_index_errmsg(idx));
  /* A second writer on the same handle is refused while one is open. */
  dq_index_doc *w2 = NULL;
  CHECK_EQ_INT(dq_index_doc_begin(idx, &d, &w2), DQ_ERR_BUSY);
  CHECK_OK(dq_index_doc_commit(w), dq_index_errmsg(idx));
  CHECK(ids[0] > 0 && ids[1] == ids[0] + 1 && ids[2] == ids[1] + 1);
  embed(idx, ids, 3, 1);
  check_consistent(idx, dir, 3);
  CHECK_EQ_INT(hits(idx, "banana"), 1);

  dq_doc_stat ds;
  CHECK_OK(dq_index_doc_lookup(idx, "/root", "fruit.md", &ds),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(ds.n_chunks, 3);
  CHECK_EQ_INT(ds.mtime, 1700000000);
  CHECK_EQ_STR(ds.sha256, "abc");
  CHECK_EQ_INT(dq_index_doc_lookup(idx, "/root", "nope.md", &ds),
               DQ_ERR_NOTFOUND);

  /* Re-ingest with different content: old chunks, FTS rows, vectors and
   * symbols are gone; the new ones are there. */
  const char *v2[] = {"durian smell warning", "elderberry syrup", NULL};
  int64_t ids2[2];
  CHECK_OK(put_doc(idx, "fruit.md", "markdown", v2, ids2),
           dq_index_errmsg(idx));
  CHECK(ids2[0] > ids[2]); /* row ids are never reused */
  check_consistent(idx, dir, 2);
  CHECK_EQ_INT(hits(idx, "banana"), 0);
  /* Both: the first chunk's words are every chunk's context. */
  CHECK_EQ_INT(hits(idx, "durian"), 2);
  CHECK_EQ_INT(hits(idx, "elderberry"), 1);
  dq_xref_hit *s = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_symbols_find(idx, "make_pie", NULL, &s, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 0);
  dq_xref_hits_free(s, n);
  embed(idx, ids2, 2, 2);
  check_consistent(idx, dir, 2);

  /* Re-ingest keeping one chunk's text: that chunk takes the stored
   * embedding over (the same bytes, in the vector index under its new
   * id); the changed one waits for the embedding pass. */
  sqlite3 *db = raw_open(dir);
  char sql[160];
  snprintf(sql, sizeof sql,
           "CREATE TABLE t_keep AS SELECT embedding AS e FROM chunks WHERE"
           " id = %lld",
           (long long)ids2[0]);
  CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_close(db);
  const char *v3[] = {"durian smell warning", "kiwi tart", NULL};
  int64_t ids3[2];
  CHECK_OK(put_doc(idx, "fruit.md", "markdown", v3, ids3),
           dq_index_errmsg(idx));
  dq_index_stats st3;
  CHECK_OK(dq_index_stats_get(idx, &st3), dq_index_errmsg(idx));
  CHECK_EQ_INT(st3.n_embedded, 1);
  CHECK_EQ_INT(st3.n_vectors, 1);
  db = raw_open(dir);
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM chunks c, t_keep k WHERE c.id = %lld AND"
           " c.embedding = k.e",
           (long long)ids3[0]);
  CHECK_EQ_INT(raw_int(db, sql), 1);
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM chunks WHERE id = %lld AND embedding IS NULL",
           (long long)ids3[1]);
  CHECK_EQ_INT(raw_int(db, sql), 1);
  CHECK(sqlite3_exec(db, "DROP TABLE t_keep", NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_close(db);
  /* dense search by the stored vector finds the chunk under its new id */
  float qv[DIM];
  for (size_t i = 0; i < DIM; i++) /* embed()'s first vector, seed 2 */
    qv[i] = (float)((i * 7 + 2 * 13) % 11) - 5.0f + 0.5f;
  dq_search_result *dr = NULL;
  size_t dn = 0;
  dq_search_opts so = {.k = 1, .no_symbols = 1};
  CHECK_OK(dq_index_search(idx, &so, NULL, qv, DIM, &dr, &dn),
           dq_index_errmsg(idx));
  CHECK(dn == 1 && dr[0].chunk_id == ids3[0]);
  dq_search_results_free(dr, dn);
  embed(idx, ids3 + 1, 1, 3);
  check_consistent(idx, dir, 2);
  /* back to v2 (its first chunk adopts again), for the steps below */
  CHECK_OK(put_doc(idx, "fruit.md", "markdown", v2, ids2),
           dq_index_errmsg(idx));
  embed(idx, ids2 + 1, 1, 2);
  check_consistent(idx, dir, 2);

  /* An aborted re-ingest leaves the stored version. */
  CHECK_OK(dq_index_doc_begin(idx, &d, &w), dq_index_errmsg(idx));
  dq_chunk_in c = chunk_in("fig newton", 1);
  CHECK_OK(dq_index_doc_add_chunk(w, &c, NULL), dq_index_errmsg(idx));
  dq_index_doc_abort(w);
  CHECK_EQ_INT(hits(idx, "fig"), 0);
  CHECK_EQ_INT(hits(idx, "durian"), 2);
  check_consistent(idx, dir, 2);

  /* A second document, then listing. */
  const char *other[] = {"grape vine", NULL};
  CHECK_OK(put_doc(idx, "a/other.txt", "text", other, NULL),
           dq_index_errmsg(idx));
  /* Save, reopen: the vector file matches and is used as is. */
  dq_index_close(idx);
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  dq_index_stats st;
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.rebuilt_at_open, 0);
  CHECK_EQ_INT(st.n_vectors, 2);

  /* Delete: everything of the document goes. */
  CHECK_OK(dq_index_doc_remove(idx, "/root", "fruit.md"),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(dq_index_doc_remove(idx, "/root", "fruit.md"),
               DQ_ERR_NOTFOUND);
  check_consistent(idx, dir, 1);
  CHECK_EQ_INT(hits(idx, "durian"), 0);
  CHECK_EQ_INT(hits(idx, "grape"), 1);
  dq_index_close(idx);
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.rebuilt_at_open, 0);
  CHECK_EQ_INT(st.n_vectors, 0);
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

typedef struct listing {
  char buf[512];
  int stop_after;
  int seen;
} listing;

static int list_cb(void *user, const dq_doc_info *d) {
  listing *l = user;
  size_t n = strlen(l->buf);
  snprintf(l->buf + n, sizeof l->buf - n, "%s%s:%s:%lld", n ? " " : "",
           d->path, d->kind, (long long)d->n_chunks);
  return ++l->seen == l->stop_after;
}

static void check_list(void) {
  char *dir = scratch_dir("docs_list");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  const char *t2[] = {"one", "two", NULL}, *t1[] = {"three", NULL};
  CHECK_OK(put_doc(idx, "b.txt", "text", t2, NULL), dq_index_errmsg(idx));
  CHECK_OK(put_doc(idx, "a.c", "c", t1, NULL), dq_index_errmsg(idx));
  listing l = {.stop_after = -1};
  CHECK_OK(dq_index_docs_list(idx, "/root", list_cb, &l),
           dq_index_errmsg(idx));
  CHECK_EQ_STR(l.buf, "a.c:c:1 b.txt:text:2");
  listing l2 = {.stop_after = -1};
  CHECK_OK(dq_index_docs_list(idx, "/elsewhere", list_cb, &l2),
           dq_index_errmsg(idx));
  CHECK_EQ_STR(l2.buf, "");
  listing l3 = {.stop_after = 1};
  CHECK_EQ_INT(dq_index_docs_list(idx, NULL, list_cb, &l3),
               DQ_ERR_INTERRUPTED);
  CHECK_EQ_INT(l3.seen, 1);
  /* Chunks without embeddings, paged by id. */
  dq_chunk_text *t = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_missing_embeddings(idx, 0, 2, &t, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 2);
  if (n == 2) {
    CHECK_EQ_STR(t[0].text, "one");
    CHECK_EQ_STR(t[1].text, "two");
    int64_t after = t[1].id;
    dq_chunk_texts_free(t, n);
    CHECK_OK(dq_index_missing_embeddings(idx, after, 10, &t, &n),
             dq_index_errmsg(idx));
    CHECK_EQ_INT(n, 1);
    if (n)
      CHECK_EQ_STR(t[0].text, "three");
  }
  dq_chunk_texts_free(t, n);
  /* No model recorded: embeddings are refused with a clear message. */
  int64_t id = 1;
  float v[4] = {1, 0, 0, 0};
  CHECK_EQ_INT(dq_index_set_embeddings(idx, &id, v, 1, 4), DQ_ERR_ARG);
  CHECK(strstr(dq_index_errmsg(idx), "no embedding model"));
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

static void check_xref_chat(void) {
  char *dir = scratch_dir("docs_xref");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  static const struct {
    const char *path, *name, *kind;
    int line;
  } defs[] = {{"src/ledger.c", "ledger_post", "function", 10},
              {"src/ledger.h", "ledger_post", "prototype", 4},
              {"src/ledger.c", "ledger_open", "function", 40},
              {"src/acct.c", "ledger_pos", "variable", 7},
              {"src/acct.c", "ledger", "struct", 2},
              {"src/acct.c", "T", "typedef", 3}};
  const size_t n_defs = sizeof defs / sizeof defs[0];
  for (size_t i = 0; i < n_defs; i++) {
    dq_doc_info d = doc_info(defs[i].path, "c");
    dq_index_doc *w = NULL;
    dq_doc_stat ds;
    if (dq_index_doc_lookup(idx, "/root", defs[i].path, &ds) == DQ_OK)
      continue; /* written together below */
    CHECK_OK(dq_index_doc_begin(idx, &d, &w), dq_index_errmsg(idx));
    for (size_t j = 0; j < n_defs; j++) {
      if (strcmp(defs[j].path, defs[i].path) != 0)
        continue;
      dq_symbol_in s = {.name = defs[j].name, .kind = defs[j].kind,
                        .line = defs[j].line, .col = 1};
      CHECK_OK(dq_index_doc_add_symbol(w, &s), dq_index_errmsg(idx));
    }
    dq_ref_in r = {.name = "ledger_post", .kind = "call", .caller = "main",
                   .line = 99, .col = 3};
    CHECK_OK(dq_index_doc_add_ref(w, &r), dq_index_errmsg(idx));
    CHECK_OK(dq_index_doc_commit(w), dq_index_errmsg(idx));
  }
  dq_xref_hit *s = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_symbols_find(idx, "ledger_post", NULL, &s, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 2);
  if (n == 2) { /* ordered by path */
    CHECK_EQ_STR(s[0].path, "src/ledger.c");
    CHECK_EQ_INT(s[0].line, 10);
    CHECK_EQ_STR(s[1].kind, "prototype");
  }
  dq_xref_hits_free(s, n);
  CHECK_OK(dq_index_symbols_find(idx, "ledger_post", "function", &s, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 1);
  dq_xref_hits_free(s, n);
  CHECK_OK(dq_index_refs_find(idx, "ledger_post", "call", &s, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 3); /* one per document */
  if (n)
    CHECK_EQ_STR(s[0].caller, "main");
  dq_xref_hits_free(s, n);
  char **names = NULL;
  CHECK_OK(dq_index_symbols_similar(idx, "ledger_psot", 5, &names, &n),
           dq_index_errmsg(idx));
  /* ledger_psot -> ledger_post: 2 edits (swap); ledger_pos: 2 edits;
   * ledger: 5 edits > limit 3 but at least half the query and inside it;
   * ledger_open: 4 edits and no containment; T: inside the query but far
   * shorter than half of it. Ties alphabetical. */
  CHECK_EQ_INT(n, 3);
  if (n == 3) {
    CHECK_EQ_STR(names[0], "ledger_pos");
    CHECK_EQ_STR(names[1], "ledger_post");
    CHECK_EQ_STR(names[2], "ledger");
  }
  dq_strings_free(names, n);

  int64_t sid = 0, t1 = 0, t2 = 0;
  CHECK_EQ_INT(dq_index_session_open(idx, "work", 0, &sid), DQ_ERR_NOTFOUND);
  CHECK_OK(dq_index_session_open(idx, "work", 1, &sid), dq_index_errmsg(idx));
  CHECK_OK(dq_index_turn_add(idx, sid, "user", "hi", 1, &t1),
           dq_index_errmsg(idx));
  CHECK_OK(dq_index_turn_add(idx, sid, "assistant", "hello", 2, &t2),
           dq_index_errmsg(idx));
  CHECK(dq_index_turn_add(idx, sid + 100, "user", "x", 1, NULL) != DQ_OK);
  dq_turn *tt = NULL;
  CHECK_OK(dq_index_turns_list(idx, sid, 0, &tt, &n), dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 2);
  if (n == 2) {
    CHECK_EQ_STR(tt[0].role, "user");
    CHECK_EQ_STR(tt[1].text, "hello");
  }
  dq_turns_free(tt, n);
  CHECK_OK(dq_index_turns_list(idx, sid, t1, &tt, &n), dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 1);
  dq_turns_free(tt, n);
  char *sum = NULL;
  int64_t upto = 0;
  CHECK_EQ_INT(dq_index_summary_get(idx, sid, &sum, &upto), DQ_ERR_NOTFOUND);
  CHECK_OK(dq_index_summary_set(idx, sid, t1, "greeted", 1),
           dq_index_errmsg(idx));
  CHECK_OK(dq_index_summary_set(idx, sid, t2, "greeted twice", 2),
           dq_index_errmsg(idx));
  CHECK_OK(dq_index_summary_get(idx, sid, &sum, &upto), dq_index_errmsg(idx));
  CHECK_EQ_STR(sum, "greeted twice");
  CHECK_EQ_INT(upto, t2);
  free(sum);
  /* A session survives reopening; deleting removes its turns. */
  dq_index_close(idx);
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  int64_t sid2 = 0;
  CHECK_OK(dq_index_session_open(idx, "work", 0, &sid2), dq_index_errmsg(idx));
  CHECK_EQ_INT(sid2, sid);
  CHECK_OK(dq_index_session_delete(idx, "work"), dq_index_errmsg(idx));
  CHECK_EQ_INT(dq_index_session_delete(idx, "work"), DQ_ERR_NOTFOUND);
  sqlite3 *db = raw_open(dir);
  CHECK_EQ_INT(raw_int(db, "SELECT count(*) FROM turns"), 0);
  sqlite3_close(db);
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

int main(void) {
  check_lifecycle();
  check_list();
  check_xref_chat();
  return TEST_EXIT();
}
