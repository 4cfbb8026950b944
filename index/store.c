/*
 * store.c - opening and closing an index directory: the SQLite database's
 * schema and its migrations, the meta table, pragmas, the embedding-model
 * check, and the mapping of SQLite failures onto dq_status with messages
 * naming the file. Documents, vectors and search live in their own files.
 *
 * Schema history (meta.schema_version; PRAGMA application_id = "dqa1"):
 *   1  meta, documents, chunks (byte/line ranges, section, text, tokens),
 *      chunks_fts (FTS5, external content = chunks, kept by triggers).
 *   2  chunks gain page_start/page_end and embedding (f16 blob); symbols,
 *      refs, sessions, turns, summaries.
 *   3  documents gain context (the path and, for prose, the first words:
 *      docs.c), which chunks_fts indexes as every chunk's third column,
 *      and prose (1 for prose kinds). chunks_fts reads the view
 *      chunks_fts_src, whose columns start with char(1) for prose: that
 *      mark makes the dq_ident tokenizer index words by their English
 *      stems (tokenizer.c). Rebuilt from the chunks. A document's
 *      chunks are deleted before it (trigger documents_bd), while their
 *      delete trigger can still read its context.
 *   4  the same tables; chunks_fts rebuilt, since the tokenizer now folds
 *      Latin diacritics (café -> cafe, tokenizer.c).
 *   5  documents gain parts: the chunker version that made their chunks,
 *      symbols and refs (0 for those stored before), so that an ingest
 *      reads again what an older chunker made; symbols and refs gain page
 *      (a PDF's lines count within their page).
 * Each migration runs in the same transaction as the version bump, so an
 * interrupted migration leaves the old version.
 *
 * Before SQLite sees the file, the 100-byte header is checked: the magic
 * string, the page size, and the page count against the file size (when no
 * WAL holds newer pages), so a truncated database is reported as such
 * instead of failing later on some query.
 */
#include "index_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A column as chunks_fts reads it: marked for the tokenizer's stems when
 * the chunk's document is prose (see tokenizer.c). d is the documents row:
 * its context is every chunk's third column. */
#define DQ__MARKED(col)                                                        \
  "CASE WHEN d.prose THEN char(1) || " col " ELSE " col " END"
/* A chunk row's three columns, for the triggers: the document's row must
 * still exist, so documents_bd deletes a document's chunks before it. */
#define DQ__MARKED_ROW(row)                                                    \
  DQ__MARKED(row "text") ", " DQ__MARKED(row "section") ", "                   \
      DQ__MARKED("d.context") " FROM documents d WHERE d.id = " row "doc"

static const char *const k_migrations[DQ_INDEX_SCHEMA_VERSION] = {
    /* 0 -> 1 */
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
    "CREATE TRIGGER chunks_au AFTER UPDATE OF text, section ON chunks BEGIN"
    " INSERT INTO chunks_fts(chunks_fts, rowid, text, section)"
    " VALUES ('delete', old.id, old.text, old.section);"
    " INSERT INTO chunks_fts(rowid, text, section)"
    " VALUES (new.id, new.text, new.section); END;",
    /* 1 -> 2 */
    "ALTER TABLE chunks ADD COLUMN page_start INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE chunks ADD COLUMN page_end INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE chunks ADD COLUMN embedding BLOB;"
    "CREATE INDEX chunks_noemb ON chunks(id) WHERE embedding IS NULL;"
    "CREATE TABLE symbols(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " kind TEXT NOT NULL, doc INTEGER NOT NULL REFERENCES documents(id)"
    " ON DELETE CASCADE, line INTEGER NOT NULL, col INTEGER NOT NULL,"
    " scope TEXT);"
    "CREATE INDEX symbols_name ON symbols(name);"
    "CREATE INDEX symbols_doc ON symbols(doc);"
    "CREATE TABLE refs(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " doc INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,"
    " line INTEGER NOT NULL, col INTEGER NOT NULL, kind TEXT NOT NULL,"
    " caller TEXT);"
    "CREATE INDEX refs_name ON refs(name);"
    "CREATE INDEX refs_doc ON refs(doc);"
    "CREATE TABLE sessions(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
    " created INTEGER NOT NULL);"
    "CREATE TABLE turns(id INTEGER PRIMARY KEY, session INTEGER NOT NULL"
    " REFERENCES sessions(id) ON DELETE CASCADE, role TEXT NOT NULL,"
    " text TEXT NOT NULL, tokens INTEGER NOT NULL DEFAULT 0,"
    " created INTEGER NOT NULL);"
    "CREATE INDEX turns_session ON turns(session, id);"
    "CREATE TABLE summaries(id INTEGER PRIMARY KEY, session INTEGER NOT NULL"
    " REFERENCES sessions(id) ON DELETE CASCADE, upto_turn INTEGER NOT NULL,"
    " text TEXT NOT NULL, tokens INTEGER NOT NULL DEFAULT 0,"
    " created INTEGER NOT NULL);"
    "CREATE INDEX summaries_session ON summaries(session, id);",
    /* 2 -> 3 */
    "ALTER TABLE documents ADD COLUMN context TEXT;"
    "ALTER TABLE documents ADD COLUMN prose INTEGER NOT NULL DEFAULT 0;"
    "UPDATE documents SET prose = dq_prose_kind(kind), context ="
    " dq_doc_context(path, kind, (SELECT text FROM chunks WHERE"
    " doc = documents.id AND ordinal = 0));"
    "DROP TRIGGER IF EXISTS chunks_ai;"
    "DROP TRIGGER IF EXISTS chunks_ad;"
    "DROP TRIGGER IF EXISTS chunks_au;"
    "DROP TABLE chunks_fts;"
    "CREATE VIEW chunks_fts_src AS SELECT c.id AS id, " DQ__MARKED("c.text")
    " AS text, " DQ__MARKED("c.section") " AS section, "
    DQ__MARKED("d.context") " AS context FROM chunks c JOIN documents d ON"
    " d.id = c.doc;"
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, section, context,"
    " content='chunks_fts_src', content_rowid='id', tokenize='dq_ident');"
    "CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN"
    " INSERT INTO chunks_fts(rowid, text, section, context) SELECT new.id, "
    DQ__MARKED_ROW("new.") "; END;"
    "CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN"
    " INSERT INTO chunks_fts(chunks_fts, rowid, text, section, context)"
    " SELECT 'delete', old.id, " DQ__MARKED_ROW("old.") "; END;"
    "CREATE TRIGGER chunks_au AFTER UPDATE OF text, section ON chunks BEGIN"
    " INSERT INTO chunks_fts(chunks_fts, rowid, text, section, context)"
    " SELECT 'delete', old.id, " DQ__MARKED_ROW("old.") ";"
    " INSERT INTO chunks_fts(rowid, text, section, context) SELECT new.id, "
    DQ__MARKED_ROW("new.") "; END;"
    "CREATE TRIGGER documents_bd BEFORE DELETE ON documents BEGIN"
    " DELETE FROM chunks WHERE doc = old.id; END;"
    "INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');",
    /* 3 -> 4: the tokenizer folds diacritics; an external-content index
     * must hold the keys its tokenizer gives, or deletes go astray */
    "INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');",
    /* 4 -> 5 */
    "ALTER TABLE documents ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE symbols ADD COLUMN page INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE refs ADD COLUMN page INTEGER NOT NULL DEFAULT 0;",
};

char *dq__strdup0(const char *s) { return s ? strdup(s) : NULL; }

static dq_status map_rc(int rc) {
  switch (rc & 0xff) {
  case SQLITE_OK:
  case SQLITE_DONE:
  case SQLITE_ROW:
    return DQ_OK;
  case SQLITE_NOMEM:
    return DQ_ERR_NOMEM;
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB:
    return DQ_ERR_CORRUPT;
  case SQLITE_FULL:
    return DQ_ERR_FULL;
  case SQLITE_READONLY:
    return DQ_ERR_READONLY;
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return DQ_ERR_BUSY;
  case SQLITE_IOERR:
  case SQLITE_CANTOPEN:
    return DQ_ERR_IO;
  case SQLITE_INTERRUPT:
    return DQ_ERR_INTERRUPTED;
  default:
    return DQ_ERR_DB;
  }
}

dq_status dq__db_err(dq_index *idx, int rc, const char *what) {
  const char *m = idx->db ? sqlite3_errmsg(idx->db) : sqlite3_errstr(rc);
  return dq_error_set(&idx->err, map_rc(rc), "%s: %s: %s", idx->db_path, what,
                      m);
}

dq_status dq__exec(dq_index *idx, const char *sql) {
  int rc = sqlite3_exec(idx->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? DQ_OK : dq__db_err(idx, rc, sql);
}

dq_status dq__prepare(dq_index *idx, const char *sql, sqlite3_stmt **st) {
  int rc = sqlite3_prepare_v2(idx->db, sql, -1, st, NULL);
  return rc == SQLITE_OK ? DQ_OK : dq__db_err(idx, rc, "prepare");
}

dq_status dq__begin(dq_index *idx) {
  int rc = sqlite3_exec(idx->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  return rc == SQLITE_OK ? DQ_OK
                         : dq__db_err(idx, rc, "cannot start a transaction");
}

dq_status dq__commit(dq_index *idx) {
  int rc = sqlite3_exec(idx->db, "COMMIT", NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    return DQ_OK;
  dq_status s = dq__db_err(idx, rc, "commit failed");
  dq__rollback(idx);
  return s;
}

void dq__rollback(dq_index *idx) {
  if (!sqlite3_get_autocommit(idx->db))
    sqlite3_exec(idx->db, "ROLLBACK", NULL, NULL, NULL);
}

dq_status dq__check_writable(dq_index *idx) {
  if (idx->read_only)
    return dq_error_set(&idx->err, DQ_ERR_READONLY,
                        "%s: index opened read-only", idx->db_path);
  if (idx->writer)
    return dq_error_set(&idx->err, DQ_ERR_BUSY,
                        "%s: a document write is in progress on this handle",
                        idx->db_path);
  return DQ_OK;
}

dq_status dq__meta_get(dq_index *idx, const char *key, char **val) {
  sqlite3_stmt *st = NULL;
  *val = NULL;
  dq_status s = dq__prepare(idx, "SELECT value FROM meta WHERE key = ?1", &st);
  if (s)
    return s;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const char *v = (const char *)sqlite3_column_text(st, 0);
    *val = strdup(v ? v : "");
    s = *val ? DQ_OK : dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  } else if (rc != SQLITE_DONE) {
    s = dq__db_err(idx, rc, "reading meta");
  }
  sqlite3_finalize(st);
  return s;
}

dq_status dq__meta_set(dq_index *idx, const char *key, const char *val) {
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(
      idx, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", &st);
  if (s)
    return s;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, val, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc != SQLITE_DONE)
    s = dq__db_err(idx, rc, "writing meta");
  sqlite3_finalize(st);
  return s;
}

static char *path_join(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *p = malloc(na + nb + 2);
  if (p) {
    memcpy(p, a, na);
    p[na] = '/';
    memcpy(p + na + 1, b, nb + 1);
  }
  return p;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

/* The header checks described at the top of the file. DQ_OK for an empty
 * file (SQLite treats it as a new database). */
static dq_status check_header(dq_index *idx) {
  unsigned char h[100];
  struct stat sb;
  int fd = open(idx->db_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return dq_error_set(&idx->err, errno == EACCES ? DQ_ERR_READONLY : DQ_ERR_IO,
                        "%s: cannot open: %s", idx->db_path, strerror(errno));
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return dq_error_set(&idx->err, DQ_ERR_IO, "%s: %s", idx->db_path,
                        strerror(errno));
  }
  ssize_t got = sb.st_size ? read(fd, h, sizeof h) : 0;
  close(fd);
  if (sb.st_size == 0)
    return DQ_OK;
  if (got != (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
    return dq_error_set(&idx->err, DQ_ERR_CORRUPT,
                        "%s: not a SQLite database (%lld bytes, bad header)",
                        idx->db_path, (long long)sb.st_size);
  uint32_t page_bytes = (uint32_t)h[16] << 8 | h[17];
  if (page_bytes == 1)
    page_bytes = 65536;
  if (page_bytes < 512 || (page_bytes & (page_bytes - 1)))
    return dq_error_set(&idx->err, DQ_ERR_CORRUPT,
                        "%s: bad page size %u in header", idx->db_path,
                        page_bytes);
  uint32_t n_pages = be32(h + 28);
  int count_valid = memcmp(h + 24, h + 92, 4) == 0 && n_pages > 0;
  /* A WAL with frames may legitimately hold pages beyond the main file. */
  char *wal = malloc(strlen(idx->db_path) + 5);
  if (!wal)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  sprintf(wal, "%s-wal", idx->db_path);
  struct stat wb;
  int have_wal = stat(wal, &wb) == 0 && wb.st_size > 32;
  free(wal);
  if (!have_wal && count_valid &&
      (uint64_t)sb.st_size < (uint64_t)n_pages * page_bytes)
    return dq_error_set(&idx->err, DQ_ERR_CORRUPT,
                        "%s: truncated: %lld bytes, header says %llu pages of "
                        "%u bytes",
                        idx->db_path, (long long)sb.st_size,
                        (unsigned long long)n_pages, page_bytes);
  if (!have_wal && sb.st_size % page_bytes)
    return dq_error_set(&idx->err, DQ_ERR_CORRUPT,
                        "%s: size %lld is not a multiple of the page size %u",
                        idx->db_path, (long long)sb.st_size, page_bytes);
  return DQ_OK;
}

static dq_status int_query(dq_index *idx, const char *sql, int64_t *v) {
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(idx, sql, &st);
  if (s)
    return s;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *v = sqlite3_column_int64(st, 0);
  else
    s = dq__db_err(idx, rc, sql);
  sqlite3_finalize(st);
  return s;
}

static dq_status open_db(dq_index *idx, int create, int immutable);
static dq_status migrate(dq_index *idx, int create);

/* A reader found an older schema in a file it may write: migrates it
 * through a connection of its own (the reader's sees the new schema at its
 * next statement), so the first search after an upgrade just works. */
static dq_status migrate_for_reader(dq_index *idx) {
  dq_index w = {0};
  w.dir = idx->dir;
  w.db_path = idx->db_path;
  w.log = idx->log;
  dq_status s = open_db(&w, 0, 0);
  if (!s)
    s = dq__exec(&w, "PRAGMA foreign_keys=ON");
  if (!s)
    s = migrate(&w, 0);
  if (s)
    idx->err = w.err;
  sqlite3_close(w.db);
  return s;
}

/* Brings the schema to DQ_INDEX_SCHEMA_VERSION, or refuses a newer one. */
static dq_status migrate(dq_index *idx, int create) {
  int64_t app_id = 0, n_tables = 0;
  dq_status s = int_query(idx, "PRAGMA application_id", &app_id);
  if (!s)
    s = int_query(idx, "SELECT count(*) FROM sqlite_master", &n_tables);
  if (s)
    return s;
  int version = 0;
  if (n_tables == 0) {
    if (!create || idx->read_only)
      return dq_error_set(&idx->err, DQ_ERR_NOTFOUND,
                          "%s: not a docqa index (empty database)",
                          idx->db_path);
  } else {
    if (app_id != DQ_INDEX_APP_ID)
      return dq_error_set(&idx->err, DQ_ERR_NOTFOUND,
                          "%s: not a docqa index (SQLite database with "
                          "application_id %lld)",
                          idx->db_path, (long long)app_id);
    char *v = NULL;
    if ((s = dq__meta_get(idx, "schema_version", &v)))
      return s;
    version = v ? atoi(v) : 0;
    free(v);
    if (version <= 0)
      return dq_error_set(&idx->err, DQ_ERR_CORRUPT,
                          "%s: meta.schema_version missing or invalid",
                          idx->db_path);
  }
  if (version > DQ_INDEX_SCHEMA_VERSION)
    return dq_error_set(&idx->err, DQ_ERR_VERSION,
                        "%s: schema version %d was written by a newer docqa "
                        "(this one reads up to %d); upgrade docqa",
                        idx->db_path, version, DQ_INDEX_SCHEMA_VERSION);
  if (version == DQ_INDEX_SCHEMA_VERSION)
    return DQ_OK;
  if (idx->read_only) {
    if (access(idx->dir, W_OK) == 0 && access(idx->db_path, W_OK) == 0)
      return migrate_for_reader(idx);
    return dq_error_set(&idx->err, DQ_ERR_VERSION,
                        "%s: schema version %d needs migrating to %d, and "
                        "the file is read-only; open it once writable (e.g. "
                        "docqa ingest)",
                        idx->db_path, version, DQ_INDEX_SCHEMA_VERSION);
  }
  if ((s = dq__begin(idx)))
    return s;
  for (int v = version; v < DQ_INDEX_SCHEMA_VERSION; v++) {
    if ((s = dq__exec(idx, k_migrations[v])))
      goto fail;
    dq_log(idx->log, DQ_LOG_INFO, "%s: schema migrated to version %d",
           idx->db_path, v + 1);
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%d", DQ_INDEX_SCHEMA_VERSION);
  if ((s = dq__meta_set(idx, "schema_version", buf)))
    goto fail;
  snprintf(buf, sizeof buf, "PRAGMA application_id = %d", DQ_INDEX_APP_ID);
  if ((s = dq__exec(idx, buf)))
    goto fail;
  return dq__commit(idx);
fail:
  dq__rollback(idx);
  dq_error_prefix(&idx->err, "migrating from schema version %d", version);
  return s;
}

static dq_status load_embed_model(dq_index *idx) {
  char *m = NULL, *d = NULL;
  dq_status s = dq__meta_get(idx, "embed_model", &m);
  if (!s)
    s = dq__meta_get(idx, "embed_dim", &d);
  free(idx->embed_model);
  idx->embed_model = m;
  idx->embed_dim = d ? atoi(d) : 0;
  free(d);
  if (!s && (idx->embed_dim < 0 || idx->embed_dim > DQ_INDEX_MAX_DIM))
    s = dq_error_set(&idx->err, DQ_ERR_CORRUPT,
                     "%s: meta.embed_dim %d out of range", idx->db_path,
                     idx->embed_dim);
  return s;
}

dq_status dq_index_embed_model(dq_index *idx, const char **model, int *dim) {
  if (model)
    *model = idx->embed_model;
  if (dim)
    *dim = idx->embed_dim;
  return DQ_OK;
}

dq_status dq_index_set_embed_model(dq_index *idx, const char *model,
                                   int dim) {
  if (!model || dim <= 0 || dim > DQ_INDEX_MAX_DIM)
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "embedding model needs an id and a dimension in "
                        "1..%d",
                        DQ_INDEX_MAX_DIM);
  if (idx->embed_model || idx->embed_dim) {
    if ((idx->embed_model && strcmp(idx->embed_model, model) != 0) ||
        idx->embed_dim != dim)
      return dq_error_set(
          &idx->err, DQ_ERR_MISMATCH,
          "%s: index was embedded with model '%s' (dim %d) but model '%s' "
          "(dim %d) is in use; use that model or re-ingest into a new index",
          idx->db_path, idx->embed_model ? idx->embed_model : "?",
          idx->embed_dim, model, dim);
    return DQ_OK;
  }
  dq_status s = dq__check_writable(idx);
  if (s)
    return s;
  char buf[32];
  snprintf(buf, sizeof buf, "%d", dim);
  if ((s = dq__begin(idx)))
    return s;
  if ((s = dq__meta_set(idx, "embed_model", model)) ||
      (s = dq__meta_set(idx, "embed_dim", buf))) {
    dq__rollback(idx);
    return s;
  }
  if ((s = dq__commit(idx)))
    return s;
  return load_embed_model(idx);
}

const char *dq_index_errmsg(const dq_index *idx) {
  return idx ? dq_error_msg(&idx->err) : "no index handle";
}

static dq_status open_db(dq_index *idx, int create, int immutable) {
  int flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
  flags |= idx->read_only ? SQLITE_OPEN_READONLY
                          : SQLITE_OPEN_READWRITE |
                                (create ? SQLITE_OPEN_CREATE : 0);
  /* The URI form lets read-only media be read without -shm/-wal files. */
  size_t n = strlen(idx->db_path) * 3 + 32;
  char *uri = malloc(n), *q = uri;
  if (!uri)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  q += sprintf(q, "file:");
  for (const char *p = idx->db_path; *p; p++) {
    if (*p == '%' || *p == '?' || *p == '#')
      q += sprintf(q, "%%%02X", (unsigned char)*p);
    else
      *q++ = *p;
  }
  sprintf(q, "%s", immutable ? "?immutable=1" : "");
  int rc = sqlite3_open_v2(uri, &idx->db, flags, NULL);
  free(uri);
  if (rc != SQLITE_OK)
    return dq__db_err(idx, rc, "cannot open");
  sqlite3_extended_result_codes(idx->db, 1);
  sqlite3_busy_timeout(idx->db, 10000);
  if (dq__fts5_register(idx->db) != SQLITE_OK)
    return dq__db_err(idx, SQLITE_ERROR,
                      "registering the FTS5 tokenizer and ranking");
  if (dq__search_register(idx) != SQLITE_OK ||
      dq__docs_register(idx->db) != SQLITE_OK)
    return dq__db_err(idx, SQLITE_ERROR, "registering SQL functions");
  return DQ_OK;
}

dq_status dq_index_open(const char *dir, const dq_index_opts *o,
                        dq_index **out, dq_error *err) {
  dq_index_opts dflt = {0};
  dq_status s;
  struct stat sb;
  if (!o)
    o = &dflt;
  *out = NULL;
  if (!dir || !*dir)
    return dq_error_set(err, DQ_ERR_ARG, "index directory not given");
  dq_index *idx = calloc(1, sizeof *idx);
  if (!idx)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  idx->read_only = o->read_only;
  idx->log = o->logger;
  idx->roots_changes = -1;
  idx->ivf_threshold = o->ivf_threshold ? o->ivf_threshold
                                        : DQ_INDEX_IVF_THRESHOLD;
  idx->nprobe_opt = o->nprobe;
  idx->nlist_opt = o->nlist;
  idx->dir = strdup(dir);
  idx->db_path = path_join(dir, DQ_INDEX_DB_NAME);
  idx->vec_path = path_join(dir, DQ_INDEX_VEC_NAME);
  if (!idx->dir || !idx->db_path || !idx->vec_path) {
    s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    goto fail;
  }
  int create = o->create && !o->read_only;
  if (stat(dir, &sb) != 0) {
    if (!create || errno != ENOENT) {
      s = dq_error_set(&idx->err, DQ_ERR_NOTFOUND,
                       "%s: not a docqa index: %s", dir, strerror(errno));
      goto fail;
    }
    if (mkdir(dir, 0777) != 0) {
      s = dq_error_set(&idx->err,
                       errno == EROFS || errno == EACCES ? DQ_ERR_READONLY
                                                         : DQ_ERR_IO,
                       "%s: cannot create index directory: %s", dir,
                       strerror(errno));
      goto fail;
    }
  } else if (!S_ISDIR(sb.st_mode)) {
    s = dq_error_set(&idx->err, DQ_ERR_NOTFOUND,
                     "%s: not a docqa index (not a directory)", dir);
    goto fail;
  }
  int db_exists = stat(idx->db_path, &sb) == 0;
  if (!db_exists && !create) {
    s = dq_error_set(&idx->err, DQ_ERR_NOTFOUND,
                     "%s: not a docqa index (no %s)", dir, DQ_INDEX_DB_NAME);
    goto fail;
  }
  int dir_writable = access(dir, W_OK) == 0;
  int file_writable = !db_exists || access(idx->db_path, W_OK) == 0;
  if (!idx->read_only && (!dir_writable || !file_writable)) {
    s = dq_error_set(&idx->err, DQ_ERR_READONLY,
                     "%s: read-only (%s not writable); searching works, "
                     "changing the index does not",
                     dir, dir_writable ? idx->db_path : dir);
    goto fail;
  }
  if (db_exists && (s = check_header(idx)))
    goto fail;
  if ((s = open_db(idx, create, idx->read_only && !dir_writable)))
    goto fail;
  if (!idx->read_only) {
    /* WAL: readers keep working while one writer ingests. NORMAL sync is
     * durable across process crashes (kill -9); after a power loss the last
     * commits may roll back, never half-apply. */
    if ((s = dq__exec(idx, "PRAGMA journal_mode=WAL")) ||
        (s = dq__exec(idx, "PRAGMA synchronous=NORMAL")))
      goto fail;
  }
  if ((s = dq__exec(idx, "PRAGMA foreign_keys=ON")))
    goto fail;
  if ((s = migrate(idx, create)))
    goto fail;
  if ((s = load_embed_model(idx)))
    goto fail;
  if (o->embed_model || o->embed_dim) {
    if (!idx->embed_model && idx->read_only) {
      /* Nothing recorded and nothing may be written: BM25 still works. */
    } else if ((s = dq_index_set_embed_model(idx, o->embed_model
                                                      ? o->embed_model
                                                      : "",
                                             o->embed_dim))) {
      goto fail;
    }
  }
  if ((s = dq__vectors_open(idx)))
    goto fail;
  *out = idx;
  return DQ_OK;
fail:
  if (err) {
    *err = idx->err;
    err->code = s;
  }
  idx->vec_dirty = 0;
  dq_index_close(idx);
  return s;
}

void dq_index_close(dq_index *idx) {
  if (!idx)
    return;
  if (idx->writer)
    dq_index_doc_abort(idx->writer);
  if (idx->vec_dirty && !idx->read_only && dq_index_vectors_save(idx))
    dq_log(idx->log, DQ_LOG_WARN, "%s (it will be rebuilt at next open)",
           dq_error_msg(&idx->err));
  dq__vectors_free(idx);
  if (idx->db)
    sqlite3_close_v2(idx->db);
  free(idx->embed_model);
  free(idx->dir);
  free(idx->db_path);
  free(idx->vec_path);
  dq__roots_free(idx);
  free(idx);
}
