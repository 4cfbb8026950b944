/*
 * test_index_schema.c - schema creation and migrations, and what opening
 * refuses: an index written by schema version 1 (built here from the v1
 * DDL as it shipped, with data) is migrated to the current version keeping
 * its data (and, from version 3, its full-text index rebuilt with stems and
 * each chunk's document context; from version 4, with diacritics folded,
 * checked from a stand-in v3 index too); a newer version is refused with a
 * clear message and left untouched; a directory or database that is not a docqa
 * index is refused; the embedding model recorded in meta must match the one
 * in use.
 */
#include "index_testutil.h"

#include <sys/stat.h>

static const char *const k_v1_ddl =
    "PRAGMA application_id = 1685152049;"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE documents(id INTEGER PRIMARY KEY, path TEXT NOT NULL,"
    " root TEXT NOT NULL, kind TEXT NOT NULL, sha256 TEXT,"
    " mtime INTEGER NOT NULL, bytes INTEGER NOT NULL, UNIQUE(root, path));"
    "CREATE TABLE chunks(id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " doc INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,"
    " ordinal INTEGER NOT NULL, byte_start INTEGER NOT NULL,"
    " byte_end INTEGER NOT NULL, line_start INTEGER NOT NULL,"
    " line_end INTEGER NOT NULL, section TEXT, text TEXT NOT NULL,"
    " tokens INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX chunks_doc ON chunks(doc, ordinal);"
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, section,"
    " content='chunks', content_rowid='id', tokenize='dq_ident');"
    "CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN"
    " INSERT INTO chunks_fts(rowid, text, section)"
    " VALUES (new.id, new.text, new.section); END;"
    "CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN"
    " INSERT INTO chunks_fts(chunks_fts, rowid, text, section)"
    " VALUES ('delete', old.id, old.text, old.section); END;"
    "INSERT INTO meta VALUES ('schema_version', '1');"
    "INSERT INTO documents VALUES (1, 'old.md', '/r', 'markdown', NULL, 5,"
    " 40);"
    "INSERT INTO chunks(doc, ordinal, byte_start, byte_end, line_start,"
    " line_end, section, text) VALUES (1, 0, 0, 40, 1, 3, 'Intro',"
    " 'legacy_widget configuration notes');";

static void make_v1(const char *dir) {
  char *p = join2(dir, "docqa.db");
  sqlite3 *db = NULL;
  CHECK(sqlite3_open(p, &db) == SQLITE_OK);
  CHECK(dq__fts5_register(db) == SQLITE_OK);
  int rc = sqlite3_exec(db, k_v1_ddl, NULL, NULL, NULL);
  CHECK_MSG(rc == SQLITE_OK, "%s", sqlite3_errmsg(db));
  sqlite3_close(db);
  free(p);
}

static long long file_size(const char *dir, const char *name) {
  char *p = join2(dir, name);
  struct stat sb;
  long long n = stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
  free(p);
  return n;
}

static void check_new(void) {
  char *dir = scratch_dir("schema_new");
  char *sub = join2(dir, "idx");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {0};
  /* Missing without create: not an index, nothing created. */
  CHECK_EQ_INT(dq_index_open(sub, &o, &idx, &err), DQ_ERR_NOTFOUND);
  CHECK(strstr(err.msg, sub) && strstr(err.msg, "not a docqa index"));
  CHECK(access(sub, F_OK) != 0);
  o.create = 1;
  CHECK_OK(dq_index_open(sub, &o, &idx, &err), err.msg);
  dq_index_close(idx);
  sqlite3 *db = raw_open(sub);
  CHECK_EQ_INT(raw_int(db, "SELECT value FROM meta WHERE key='schema_version'"),
               DQ_INDEX_SCHEMA_VERSION);
  CHECK_EQ_INT(raw_int(db, "PRAGMA application_id"), 0x64716131);
  sqlite3_stmt *st = NULL;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
  CHECK(sqlite3_step(st) == SQLITE_ROW);
  CHECK_EQ_STR((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  static const char *const tables[] = {"documents", "chunks", "chunks_fts",
                                       "symbols",   "refs",   "sessions",
                                       "turns",     "summaries", "meta"};
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    char q[128];
    snprintf(q, sizeof q,
             "SELECT count(*) FROM sqlite_master WHERE name = '%s'",
             tables[i]);
    CHECK_MSG(raw_int(db, q) == 1, "table %s", tables[i]);
  }
  sqlite3_close(db);
  rm_rf(dir);
  free(sub);
  free(dir);
}

static void check_migrate(void) {
  char *dir = scratch_dir("schema_v1");
  make_v1(dir);
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts ro = {.read_only = 1};
  char *db_file = join2(dir, "docqa.db");
  if (geteuid() != 0) { /* permissions mean nothing to root */
    /* A reader cannot migrate a read-only file: clear error, untouched. */
    chmod(db_file, 0444);
    CHECK_EQ_INT(dq_index_open(dir, &ro, &idx, &err), DQ_ERR_VERSION);
    CHECK(strstr(err.msg, "docqa.db") && strstr(err.msg, "version 1") &&
          strstr(err.msg, "read-only"));
    chmod(db_file, 0644);
    sqlite3 *raw = raw_open(dir);
    CHECK_EQ_INT(
        raw_int(raw, "SELECT value FROM meta WHERE key='schema_version'"), 1);
    sqlite3_close(raw);
  }
  free(db_file);
  /* A reader migrates a file it may write, then reads it. */
  CHECK_OK(dq_index_open(dir, &ro, &idx, &err), err.msg);
  if (idx) {
    dq_search_result *r = NULL;
    size_t n = 0;
    CHECK_OK(dq_index_search(idx, NULL, "widget", NULL, 0, &r, &n),
             dq_index_errmsg(idx));
    CHECK_EQ_INT(n, 1);
    dq_search_results_free(r, n);
    dq_index_close(idx);
  }
  dq_index_opts o = {0};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  if (idx) {
    dq_doc_stat ds;
    CHECK_OK(dq_index_doc_lookup(idx, "/r", "old.md", &ds),
             dq_index_errmsg(idx));
    CHECK_EQ_INT(ds.n_chunks, 1);
    CHECK_EQ_INT(ds.bytes, 40);
    dq_search_result *r = NULL;
    size_t n = 0;
    CHECK_OK(dq_index_search(idx, NULL, "widget", NULL, 0, &r, &n),
             dq_index_errmsg(idx));
    CHECK_EQ_INT(n, 1);
    if (n) {
      CHECK_EQ_STR(r[0].section, "Intro");
      CHECK_EQ_INT(r[0].page_start, 0); /* v2 column, default */
    }
    dq_search_results_free(r, n);
    /* v3: the full-text index was rebuilt with stems ("note" finds
     * "notes") and the document's context (its path's "old"). */
    static const char *const v3_queries[] = {"note", "old"};
    for (size_t i = 0; i < 2; i++) {
      CHECK_OK(dq_index_search(idx, NULL, v3_queries[i], NULL, 0, &r, &n),
               dq_index_errmsg(idx));
      CHECK_MSG(n == 1, "query %s: %zu results", v3_queries[i], n);
      dq_search_results_free(r, n);
    }
    /* v2 features work on the migrated index. */
    int64_t sid = 0;
    CHECK_OK(dq_index_session_open(idx, "s", 1, &sid), dq_index_errmsg(idx));
    CHECK(sid > 0);
    dq_index_close(idx);
  }
  sqlite3 *db = raw_open(dir);
  CHECK_EQ_INT(raw_int(db, "SELECT value FROM meta WHERE key='schema_version'"),
               DQ_INDEX_SCHEMA_VERSION);
  sqlite3_stmt *st = NULL;
  sqlite3_prepare_v2(db, "SELECT context FROM documents", -1, &st, NULL);
  CHECK(sqlite3_step(st) == SQLITE_ROW);
  CHECK_EQ_STR((const char *)sqlite3_column_text(st, 0),
               "old.md\nlegacy_widget configuration notes");
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK(raw_integrity_ok(dir));
  rm_rf(dir);
  free(dir);
}

/* Version 3's full-text keys kept diacritics ("café"); version 4's
 * tokenizer folds them, so opening rebuilds chunks_fts from the chunks;
 * version 5 adds documents.parts and symbols' and refs' page. A v3 index
 * is stood in for by a current one whose full-text rows were taken out (as
 * stale keys would miss), without those columns, and whose version was set
 * back. */
static void check_migrate_v3(void) {
  char *dir = NULL;
  dq_index *idx =
      scratch_index("schema_v3", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  const char *t[] = {"The Caf\xc3\xa9 M\xc3\xbcller lease", NULL};
  CHECK_OK(put_doc(idx, "lease.txt", "text", t, NULL), dq_index_errmsg(idx));
  dq_index_close(idx);
  sqlite3 *db = raw_open(dir);
  CHECK(sqlite3_exec(db,
                     "INSERT INTO chunks_fts(chunks_fts, rowid, text, section,"
                     " context) SELECT 'delete', id, text, section, context"
                     " FROM chunks_fts_src;"
                     "ALTER TABLE documents DROP COLUMN parts;"
                     "ALTER TABLE symbols DROP COLUMN page;"
                     "ALTER TABLE refs DROP COLUMN page;"
                     "UPDATE meta SET value = '3' WHERE key = "
                     "'schema_version';",
                     NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_close(db);
  dq_error err = {0};
  dq_index_opts o = {0};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  if (idx) {
    dq_search_result *r = NULL;
    size_t n = 0;
    CHECK_OK(dq_index_search(idx, NULL, "cafe muller", NULL, 0, &r, &n),
             dq_index_errmsg(idx));
    CHECK_EQ_INT(n, 1);
    dq_search_results_free(r, n);
    dq_index_close(idx);
  }
  db = raw_open(dir);
  CHECK_EQ_INT(raw_int(db, "SELECT value FROM meta WHERE key='schema_version'"),
               DQ_INDEX_SCHEMA_VERSION);
  /* version 5: the document stored before chunker versions has parts 0,
   * so the next ingest reads it again */
  CHECK_EQ_INT(raw_int(db, "SELECT parts FROM documents"), 0);
  sqlite3_close(db);
  CHECK(raw_integrity_ok(dir));
  rm_rf(dir);
  free(dir);
}

static void check_newer(void) {
  char *dir = scratch_dir("schema_newer");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  dq_index_close(idx);
  sqlite3 *db = raw_open(dir);
  CHECK(sqlite3_exec(db,
                     "UPDATE meta SET value = '99' WHERE key = "
                     "'schema_version'",
                     NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_close(db);
  long long before = file_size(dir, "docqa.db");
  CHECK_EQ_INT(dq_index_open(dir, &o, &idx, &err), DQ_ERR_VERSION);
  CHECK(idx == NULL);
  CHECK(strstr(err.msg, "docqa.db") && strstr(err.msg, "99") &&
        strstr(err.msg, "newer"));
  CHECK_EQ_INT(file_size(dir, "docqa.db"), before);
  db = raw_open(dir);
  CHECK_EQ_INT(raw_int(db, "SELECT value FROM meta WHERE key='schema_version'"),
               99);
  sqlite3_close(db);
  rm_rf(dir);
  free(dir);
}

static void check_not_index(void) {
  char *dir = scratch_dir("schema_notidx");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {0};
  /* An empty directory. */
  CHECK_EQ_INT(dq_index_open(dir, &o, &idx, &err), DQ_ERR_NOTFOUND);
  CHECK(strstr(err.msg, "not a docqa index"));
  /* Another program's SQLite database. */
  char *p = join2(dir, "docqa.db");
  sqlite3 *db = NULL;
  sqlite3_open(p, &db);
  sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, NULL,
               NULL);
  sqlite3_close(db);
  o.create = 1; /* even with create it must not adopt the foreign file */
  CHECK_EQ_INT(dq_index_open(dir, &o, &idx, &err), DQ_ERR_NOTFOUND);
  CHECK(strstr(err.msg, "docqa.db") && strstr(err.msg, "application_id"));
  /* A regular file given as the directory. */
  CHECK_EQ_INT(dq_index_open(p, &o, &idx, &err), DQ_ERR_NOTFOUND);
  CHECK(strstr(err.msg, "not a directory"));
  free(p);
  rm_rf(dir);
  free(dir);
}

static void check_model(void) {
  char *dir = scratch_dir("schema_model");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1, .embed_model = "bge-small", .embed_dim = 384};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  const char *m = NULL;
  int d = 0;
  dq_index_embed_model(idx, &m, &d);
  CHECK_EQ_STR(m, "bge-small");
  CHECK_EQ_INT(d, 384);
  dq_index_close(idx);
  o.embed_model = "minilm";
  CHECK_EQ_INT(dq_index_open(dir, &o, &idx, &err), DQ_ERR_MISMATCH);
  CHECK(strstr(err.msg, "bge-small") && strstr(err.msg, "minilm"));
  o.embed_model = "bge-small";
  o.embed_dim = 768;
  CHECK_EQ_INT(dq_index_open(dir, &o, &idx, &err), DQ_ERR_MISMATCH);
  CHECK(strstr(err.msg, "384") && strstr(err.msg, "768"));
  /* "Don't care" opens, and reports the recorded model. */
  dq_index_opts any = {0};
  CHECK_OK(dq_index_open(dir, &any, &idx, &err), err.msg);
  dq_index_embed_model(idx, &m, &d);
  CHECK_EQ_INT(d, 384);
  /* A query vector of the wrong dimension is a clear error. */
  float q[8] = {1};
  dq_search_result *r = NULL;
  size_t n = 0;
  CHECK_EQ_INT(dq_index_search(idx, NULL, "x", q, 8, &r, &n), DQ_ERR_MISMATCH);
  CHECK(strstr(dq_index_errmsg(idx), "dimension 8"));
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);
}

int main(void) {
  check_new();
  check_migrate();
  check_migrate_v3();
  check_newer();
  check_not_index();
  check_model();
  return TEST_EXIT();
}
