/*
 * index_testutil.h - helpers shared by the index layer's tests: scratch
 * directories under $TMPDIR, a raw SQLite connection with our tokenizer for
 * white-box checks (integrity_check, FTS5 integrity), and small builders for
 * documents. Test-only; not part of the library.
 */
#ifndef DQ_INDEX_TESTUTIL_H
#define DQ_INDEX_TESTUTIL_H

#include "index_int.h"
#include "test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline int rm_cb(const char *p, const struct stat *sb, int flag,
                 struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p);
}

static inline void rm_rf(const char *dir) { nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

/* A fresh scratch directory (malloc'd path). */
static inline char *scratch_dir(const char *tag) {
  const char *t = getenv("TMPDIR");
  char *p = malloc(512);
  snprintf(p, 512, "%s/dq_%s_XXXXXX", t && *t ? t : "/tmp", tag);
  if (!mkdtemp(p)) {
    perror("mkdtemp");
    exit(2);
  }
  return p;
}

/* A new index in a fresh scratch directory (*dir, malloc'd), opened with
 * o (set .create); NULL, with the failure checked, when it cannot be. */
static inline dq_index *scratch_index(const char *tag, dq_index_opts o,
                                      char **dir) {
  *dir = scratch_dir(tag);
  dq_index *idx = NULL;
  dq_error err = {0};
  CHECK_OK(dq_index_open(*dir, &o, &idx, &err), err.msg);
  return idx;
}

static inline char *join2(const char *a, const char *b) {
  char *p = malloc(strlen(a) + strlen(b) + 2);
  sprintf(p, "%s/%s", a, b);
  return p;
}

/* A raw connection to DIR/docqa.db with the dq_ident tokenizer. */
static inline sqlite3 *raw_open(const char *dir) {
  char *p = join2(dir, DQ_INDEX_DB_NAME);
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
    fprintf(stderr, "raw_open %s: %s\n", p, sqlite3_errmsg(db));
    exit(2);
  }
  free(p);
  dq__fts5_register(db);
  return db;
}

/* First column of the first row as an integer (-1 on error). */
static inline long long raw_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  long long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  else
    fprintf(stderr, "raw_int(%s): %s\n", sql, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return v;
}

/* 1 when PRAGMA integrity_check says ok and the FTS index matches chunks. */
static inline int raw_integrity_ok(const char *dir) {
  sqlite3 *db = raw_open(dir);
  sqlite3_stmt *st = NULL;
  int ok = 0;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    ok = strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
  if (!ok)
    fprintf(stderr, "integrity_check: %s\n",
            st ? (const char *)sqlite3_column_text(st, 0) : "?");
  sqlite3_finalize(st);
  if (ok && sqlite3_exec(db,
                         "INSERT INTO chunks_fts(chunks_fts, rank) "
                         "VALUES('integrity-check', 1)",
                         NULL, NULL, NULL) != SQLITE_OK) {
    fprintf(stderr, "fts integrity-check: %s\n", sqlite3_errmsg(db));
    ok = 0;
  }
  sqlite3_close(db);
  return ok;
}

static inline dq_doc_info doc_info(const char *path, const char *kind) {
  dq_doc_info d = {0};
  d.path = path;
  d.root = "/root";
  d.kind = kind;
  d.sha256 = "abc";
  d.mtime = 1700000000;
  d.bytes = 100;
  return d;
}

static inline dq_chunk_in chunk_in(const char *text, int line) {
  dq_chunk_in c = {0};
  c.text = text;
  c.byte_start = line * 10;
  c.byte_end = line * 10 + (int64_t)strlen(text);
  c.line_start = line;
  c.line_end = line + 1;
  return c;
}

/* Writes one document made of the given texts (NULL-terminated); ids out. */
static inline dq_status put_doc(dq_index *idx, const char *path, const char *kind,
                         const char *const *texts, int64_t *ids) {
  dq_doc_info d = doc_info(path, kind);
  dq_index_doc *w = NULL;
  dq_status s = dq_index_doc_begin(idx, &d, &w);
  if (s)
    return s;
  for (int i = 0; texts[i]; i++) {
    dq_chunk_in c = chunk_in(texts[i], i * 2 + 1);
    if ((s = dq_index_doc_add_chunk(w, &c, ids ? &ids[i] : NULL))) {
      dq_index_doc_abort(w);
      return s;
    }
  }
  return dq_index_doc_commit(w);
}

#endif
