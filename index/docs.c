/*
 * docs.c - documents in the index: the per-document writer (one transaction
 * per (re)ingest), lookup for incremental ingest, removal, and listing.
 *
 * Invariant: a document's rows (documents, chunks, chunks_fts through the
 * chunks triggers, symbols, refs) change only inside one transaction, so a
 * crash leaves either the old version or the new one. The in-memory vector
 * index is changed only after the commit succeeded (old chunk ids removed,
 * the vectors of new chunks that took a stored chunk's embedding added);
 * the vector file on disk catches up at the next save, and until then the
 * id checksum in meta no longer matches, so a crash in between makes the
 * next open rebuild the file from stored embeddings.
 *
 * A document's row also carries its context (dq__doc_context, set with its
 * first chunk), which chunks_fts indexes as every chunk's third column, and
 * whether it is prose, whose words chunks_fts indexes by their stems.
 * chunks_fts's triggers read both, so a document's chunks are deleted
 * before it (a trigger, see store.c).
 */
#include "index_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chunk of a document's stored version with its embedding, which a chunk
 * of the new version with the same text takes over (the embedding model
 * reads the text alone). */
typedef struct old_emb {
  uint64_t hash; /* of the text */
  size_t len;
  char *text;
  uint16_t *h; /* F16, embed_dim */
} old_emb;

struct dq_index_doc {
  dq_index *idx;
  int64_t doc_id;
  int32_t ordinal;
  sqlite3_stmt *ins_chunk, *ins_sym, *ins_ref, *set_emb;
  int64_t *old_ids; /* chunk ids with vectors that the commit removes */
  size_t n_old, cap_old;
  char *path, *kind; /* the document's, for its context */
  char *context;     /* dq__doc_context, set with the first chunk */
  old_emb *olds;     /* the stored version's embedded chunks, by hash */
  size_t n_olds;
  int64_t *adopt_ids; /* new chunks given an old embedding, */
  const uint16_t **adopt_h; /* and that embedding (in olds) */
  size_t n_adopt, cap_adopt;
};

static int by_hash(const void *a, const void *b) {
  uint64_t x = ((const old_emb *)a)->hash, y = ((const old_emb *)b)->hash;
  return x < y ? -1 : x > y;
}

/* The embedded chunks of stored document doc: their ids into *ids (the
 * commit removes their vectors) and, when olds is not NULL, those with the
 * recorded model's dimension with their texts and embeddings into *olds,
 * by text hash. */
static dq_status old_embedded(dq_index *idx, int64_t doc, int64_t **ids,
                              size_t *n_ids, size_t *cap_ids, old_emb **olds,
                              size_t *n_olds) {
  size_t d = (size_t)idx->embed_dim, cap = 0;
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(idx,
                            olds ? "SELECT id, text, embedding FROM chunks"
                                   " WHERE doc = ?1 AND embedding IS NOT NULL"
                                 : "SELECT id FROM chunks WHERE doc = ?1 AND"
                                   " embedding IS NOT NULL",
                            &st);
  if (s)
    return s;
  sqlite3_bind_int64(st, 1, doc);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n_ids == *cap_ids) {
      size_t c = *cap_ids ? *cap_ids * 2 : 64;
      int64_t *p = realloc(*ids, c * sizeof *p);
      if (!p)
        goto nomem;
      *ids = p;
      *cap_ids = c;
    }
    (*ids)[(*n_ids)++] = sqlite3_column_int64(st, 0);
    if (!olds)
      continue;
    size_t n = (size_t)sqlite3_column_bytes(st, 1);
    const char *t = (const char *)sqlite3_column_text(st, 1);
    const void *b = sqlite3_column_blob(st, 2);
    if (!d || !t || !b || (size_t)sqlite3_column_bytes(st, 2) != d * 2)
      continue; /* not this model's: embedded again */
    if (*n_olds == cap) {
      size_t c = cap ? cap * 2 : 16;
      old_emb *p = realloc(*olds, c * sizeof *p);
      if (!p)
        goto nomem;
      *olds = p;
      cap = c;
    }
    old_emb *o = &(*olds)[*n_olds];
    o->hash = dq_fnv1a(t, n);
    o->len = n;
    o->text = malloc(n + 1);
    o->h = malloc(d * 2);
    if (!o->text || !o->h) {
      free(o->text);
      free(o->h);
      goto nomem;
    }
    memcpy(o->text, t, n);
    o->text[n] = '\0';
    memcpy(o->h, b, d * 2);
    (*n_olds)++;
  }
  if (rc != SQLITE_DONE)
    s = dq__db_err(idx, rc, "reading a document's chunks");
  sqlite3_finalize(st);
  if (!s && olds && *n_olds > 1)
    qsort(*olds, *n_olds, sizeof **olds, by_hash);
  return s;
nomem:
  sqlite3_finalize(st);
  return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
}

/* A new chunk (id) whose text a stored chunk had takes its embedding. */
static dq_status adopt_embedding(dq_index_doc *w, int64_t id, const char *t,
                                 size_t n) {
  uint64_t hash = dq_fnv1a(t, n);
  size_t lo = 0, hi = w->n_olds; /* the first of that hash (sorted) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (w->olds[mid].hash < hash)
      lo = mid + 1;
    else
      hi = mid;
  }
  const old_emb *o = NULL;
  for (size_t i = lo; i < w->n_olds && w->olds[i].hash == hash && !o; i++)
    if (w->olds[i].len == n && !memcmp(w->olds[i].text, t, n))
      o = &w->olds[i];
  if (!o)
    return DQ_OK;
  dq_index *idx = w->idx;
  if (w->n_adopt == w->cap_adopt) {
    size_t c = w->cap_adopt ? w->cap_adopt * 2 : 16;
    int64_t *ids = realloc(w->adopt_ids, c * sizeof *ids);
    if (ids)
      w->adopt_ids = ids;
    const uint16_t **hs = realloc(w->adopt_h, c * sizeof *hs);
    if (hs)
      w->adopt_h = hs;
    if (!ids || !hs)
      return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    w->cap_adopt = c;
  }
  dq_status s;
  if (!w->set_emb &&
      (s = dq__prepare(idx, "UPDATE chunks SET embedding = ?2 WHERE id = ?1",
                       &w->set_emb)))
    return s;
  sqlite3_bind_int64(w->set_emb, 1, id);
  sqlite3_bind_blob(w->set_emb, 2, o->h, idx->embed_dim * 2, SQLITE_STATIC);
  int rc = sqlite3_step(w->set_emb);
  sqlite3_reset(w->set_emb);
  if (rc != SQLITE_DONE)
    return dq__db_err(idx, rc, "storing an embedding");
  w->adopt_ids[w->n_adopt] = id;
  w->adopt_h[w->n_adopt++] = o->h;
  return DQ_OK;
}

int dq__prose_kind(const char *kind) {
  static const char *const k_prose[] = {
      "text", "markdown", "html", "xml",  "docx", "odt", "epub", "email", "rtf",
      "pdf",  "image",    "pptx", "xlsx", "doc",  "ods", "xls",  "odp"};
  for (size_t i = 0; kind && i < sizeof k_prose / sizeof k_prose[0]; i++)
    if (strcmp(kind, k_prose[i]) == 0)
      return 1;
  return 0;
}

int dq_index_prose_kind(const char *kind) { return dq__prose_kind(kind); }

char *dq__doc_context(const char *path, const char *kind, const char *first,
                      size_t n) {
  const unsigned char *s = (const unsigned char *)first;
  int len = first ? (int)(n > (1u << 20) ? 1u << 20 : n) : 0, pos = 0;
  int words = dq__prose_kind(kind) ? DQ__CONTEXT_WORDS : 0, end = 0;
  dq__ident id;
  for (int k = 0; k < words && dq__ident_next(s, len, &pos, &id); k++)
    end = id.end;
  size_t np = path ? strlen(path) : 0;
  char *out = malloc(np + (size_t)end + 2);
  if (!out)
    return NULL;
  memcpy(out, path ? path : "", np);
  out[np] = '\n';
  memcpy(out + np + 1, first ? first : "", (size_t)end);
  out[np + 1 + end] = '\0';
  return out;
}

static void sql_doc_context(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  const char *text = (const char *)sqlite3_value_text(v[2]);
  char *c = dq__doc_context((const char *)sqlite3_value_text(v[0]),
                            (const char *)sqlite3_value_text(v[1]), text,
                            text ? (size_t)sqlite3_value_bytes(v[2]) : 0);
  if (c)
    sqlite3_result_text(ctx, c, -1, free);
  else
    sqlite3_result_error_nomem(ctx);
}

static void sql_prose_kind(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  sqlite3_result_int(ctx,
                     dq__prose_kind((const char *)sqlite3_value_text(v[0])));
}

int dq__docs_register(sqlite3 *db) {
  int rc = sqlite3_create_function(db, "dq_doc_context", 3,
                                   SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                   sql_doc_context, NULL, NULL);
  return rc != SQLITE_OK
             ? rc
             : sqlite3_create_function(db, "dq_prose_kind", 1,
                                       SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                       sql_prose_kind, NULL, NULL);
}

/* Finds (root, path): *doc = id, or 0 when not stored. */
static dq_status find_doc(dq_index *idx, const char *root, const char *path,
                          int64_t *doc) {
  sqlite3_stmt *st = NULL;
  *doc = 0;
  dq_status s = dq__prepare(
      idx, "SELECT id FROM documents WHERE root = ?1 AND path = ?2", &st);
  if (s)
    return s;
  sqlite3_bind_text(st, 1, root, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *doc = sqlite3_column_int64(st, 0);
  else if (rc != SQLITE_DONE)
    s = dq__db_err(idx, rc, "looking up a document");
  sqlite3_finalize(st);
  return s;
}

/* Its chunks, symbols and refs go with it (store.c's documents_bd trigger
 * deletes the chunks first, while their delete trigger can still read the
 * document's context). */
static dq_status delete_doc(dq_index *idx, int64_t doc) {
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(idx, "DELETE FROM documents WHERE id = ?1", &st);
  if (s)
    return s;
  sqlite3_bind_int64(st, 1, doc);
  int rc = sqlite3_step(st);
  if (rc != SQLITE_DONE)
    s = dq__db_err(idx, rc, "deleting a document");
  sqlite3_finalize(st);
  return s;
}

static void writer_free(dq_index_doc *w) {
  sqlite3_finalize(w->ins_chunk);
  sqlite3_finalize(w->ins_sym);
  sqlite3_finalize(w->ins_ref);
  sqlite3_finalize(w->set_emb);
  for (size_t i = 0; i < w->n_olds; i++) {
    free(w->olds[i].text);
    free(w->olds[i].h);
  }
  free(w->olds);
  free(w->adopt_ids);
  free(w->adopt_h);
  free(w->old_ids);
  free(w->path);
  free(w->kind);
  free(w->context);
  if (w->idx->writer == w)
    w->idx->writer = NULL;
  free(w);
}

dq_status dq_index_doc_begin(dq_index *idx, const dq_doc_info *info,
                             dq_index_doc **out) {
  *out = NULL;
  dq_status s = dq__check_writable(idx);
  if (s)
    return s;
  if (!info || !info->path || !info->root || !info->kind || info->bytes < 0)
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "document needs path, root, kind and a size >= 0");
  dq_index_doc *w = calloc(1, sizeof *w);
  if (!w)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  w->idx = idx;
  idx->writer = w;
  if (!(w->path = strdup(info->path)) || !(w->kind = strdup(info->kind))) {
    writer_free(w);
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  }
  if ((s = dq__begin(idx)))
    goto fail_notx;
  int64_t old = 0;
  if ((s = find_doc(idx, info->root, info->path, &old)))
    goto fail;
  if (old) {
    if ((s = old_embedded(idx, old, &w->old_ids, &w->n_old, &w->cap_old,
                          &w->olds, &w->n_olds)) ||
        (s = dq__emb_forget(idx, w->old_ids, w->n_old)) ||
        (s = delete_doc(idx, old)))
      goto fail;
  }
  sqlite3_stmt *st = NULL;
  if ((s = dq__prepare(idx,
                       "INSERT INTO documents(path, root, kind, sha256, mtime,"
                       " bytes, prose, parts) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
                       " ?7, ?8)",
                       &st)))
    goto fail;
  sqlite3_bind_text(st, 1, info->path, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, info->root, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, info->kind, -1, SQLITE_STATIC);
  if (info->sha256)
    sqlite3_bind_text(st, 4, info->sha256, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 5, info->mtime);
  sqlite3_bind_int64(st, 6, info->bytes);
  sqlite3_bind_int(st, 7, dq__prose_kind(info->kind));
  sqlite3_bind_int(st, 8, info->parts);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    s = dq__db_err(idx, rc, "inserting a document");
    goto fail;
  }
  w->doc_id = sqlite3_last_insert_rowid(idx->db);
  if ((s = dq__prepare(idx,
                       "INSERT INTO chunks(doc, ordinal, byte_start, byte_end,"
                       " line_start, line_end, page_start, page_end, section,"
                       " text, tokens) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,"
                       "?11)",
                       &w->ins_chunk)) ||
      (s = dq__prepare(idx,
                       "INSERT INTO symbols(name, kind, doc, line, col, scope,"
                       " page) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                       &w->ins_sym)) ||
      (s = dq__prepare(idx,
                       "INSERT INTO refs(name, kind, doc, line, col, caller,"
                       " page) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                       &w->ins_ref)))
    goto fail;
  *out = w;
  return DQ_OK;
fail:
  dq__rollback(idx);
fail_notx:
  dq_error_prefix(&idx->err, "%s/%s", info->root, info->path);
  writer_free(w);
  return s;
}

static dq_status step_insert(dq_index_doc *w, sqlite3_stmt *st,
                             const char *what) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc == SQLITE_DONE ? DQ_OK : dq__db_err(w->idx, rc, what);
}

dq_status dq_index_doc_add_chunk(dq_index_doc *w, const dq_chunk_in *c,
                                 int64_t *chunk_id) {
  dq_index *idx = w->idx;
  if (!c || !c->text || c->byte_end < c->byte_start ||
      c->page_end < c->page_start ||
      /* paged sources number lines within each page: (page, line) order */
      (c->page_end == c->page_start && c->line_end < c->line_start))
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "chunk %d: text missing or a range ends before it "
                        "starts",
                        w->ordinal);
  size_t n = c->text_bytes ? c->text_bytes : strlen(c->text);
  if (n > 0x7fffffff)
    return dq_error_set(&idx->err, DQ_ERR_LIMIT, "chunk %d: text too large",
                        w->ordinal);
  if (!w->context) { /* the first chunk: the document's context */
    if (!(w->context = dq__doc_context(w->path, w->kind, c->text, n)))
      return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    sqlite3_stmt *up = NULL;
    dq_status s = dq__prepare(
        idx, "UPDATE documents SET context = ?1 WHERE id = ?2", &up);
    if (s)
      return s;
    sqlite3_bind_text(up, 1, w->context, -1, SQLITE_STATIC);
    sqlite3_bind_int64(up, 2, w->doc_id);
    if ((s = step_insert(w, up, "recording a document's context"))) {
      sqlite3_finalize(up);
      return s;
    }
    sqlite3_finalize(up);
  }
  sqlite3_stmt *st = w->ins_chunk;
  sqlite3_bind_int64(st, 1, w->doc_id);
  sqlite3_bind_int(st, 2, w->ordinal);
  sqlite3_bind_int64(st, 3, c->byte_start);
  sqlite3_bind_int64(st, 4, c->byte_end);
  sqlite3_bind_int(st, 5, c->line_start);
  sqlite3_bind_int(st, 6, c->line_end);
  sqlite3_bind_int(st, 7, c->page_start);
  sqlite3_bind_int(st, 8, c->page_end);
  if (c->section)
    sqlite3_bind_text(st, 9, c->section, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 10, c->text, (int)n, SQLITE_STATIC);
  sqlite3_bind_int(st, 11, c->tokens);
  dq_status s = step_insert(w, st, "inserting a chunk");
  if (s)
    return s;
  int64_t id = sqlite3_last_insert_rowid(idx->db);
  if (chunk_id)
    *chunk_id = id;
  w->ordinal++;
  return w->n_olds ? adopt_embedding(w, id, c->text, n) : DQ_OK;
}

static dq_status add_named(dq_index_doc *w, sqlite3_stmt *st, const char *name,
                           const char *kind, int32_t line, int32_t col,
                           int32_t page, const char *extra, const char *what) {
  if (!name || !*name || !kind)
    return dq_error_set(&w->idx->err, DQ_ERR_ARG, "%s: name and kind needed",
                        what);
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, w->doc_id);
  sqlite3_bind_int(st, 4, line);
  sqlite3_bind_int(st, 5, col);
  if (extra)
    sqlite3_bind_text(st, 6, extra, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 7, page);
  return step_insert(w, st, what);
}

dq_status dq_index_doc_add_symbol(dq_index_doc *w, const dq_symbol_in *s) {
  return add_named(w, w->ins_sym, s->name, s->kind, s->line, s->col, s->page,
                   s->scope, "inserting a symbol");
}

dq_status dq_index_doc_add_ref(dq_index_doc *w, const dq_ref_in *r) {
  return add_named(w, w->ins_ref, r->name, r->kind, r->line, r->col, r->page,
                   r->caller, "inserting a reference");
}

dq_status dq_index_doc_commit(dq_index_doc *w) {
  dq_index *idx = w->idx;
  sqlite3_finalize(w->ins_chunk);
  sqlite3_finalize(w->ins_sym);
  sqlite3_finalize(w->ins_ref);
  sqlite3_finalize(w->set_emb);
  w->ins_chunk = w->ins_sym = w->ins_ref = w->set_emb = NULL;
  dq_status s = dq__emb_adopt(idx, w->adopt_ids, w->n_adopt);
  if (s) {
    dq__rollback(idx);
    writer_free(w);
    return s;
  }
  s = dq__commit(idx);
  if (!s && w->n_old)
    s = dq__vectors_remove(idx, w->old_ids, w->n_old);
  if (!s && w->n_adopt)
    s = dq__vectors_add_f16(idx, w->adopt_ids, w->adopt_h, w->n_adopt);
  writer_free(w);
  return s;
}

void dq_index_doc_abort(dq_index_doc *w) {
  if (!w)
    return;
  sqlite3_finalize(w->ins_chunk);
  sqlite3_finalize(w->ins_sym);
  sqlite3_finalize(w->ins_ref);
  sqlite3_finalize(w->set_emb);
  w->ins_chunk = w->ins_sym = w->ins_ref = w->set_emb = NULL;
  dq__rollback(w->idx);
  writer_free(w);
}

dq_status dq_index_doc_lookup(dq_index *idx, const char *root,
                              const char *path, dq_doc_stat *out) {
  sqlite3_stmt *st = NULL;
  memset(out, 0, sizeof *out);
  dq_status s = dq__prepare(
      idx,
      "SELECT id, mtime, bytes, sha256, (SELECT count(*) FROM chunks c"
      " WHERE c.doc = d.id), parts FROM documents d WHERE root = ?1 AND"
      " path = ?2",
      &st);
  if (s)
    return s;
  sqlite3_bind_text(st, 1, root, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    out->id = sqlite3_column_int64(st, 0);
    out->mtime = sqlite3_column_int64(st, 1);
    out->bytes = sqlite3_column_int64(st, 2);
    const char *h = (const char *)sqlite3_column_text(st, 3);
    if (h)
      snprintf(out->sha256, sizeof out->sha256, "%s", h);
    out->n_chunks = sqlite3_column_int64(st, 4);
    out->parts = sqlite3_column_int(st, 5);
  } else if (rc == SQLITE_DONE) {
    s = dq_error_set(&idx->err, DQ_ERR_NOTFOUND, "%s/%s: not in the index",
                     root, path);
  } else {
    s = dq__db_err(idx, rc, "looking up a document");
  }
  sqlite3_finalize(st);
  return s;
}

dq_status dq_index_doc_remove(dq_index *idx, const char *root,
                              const char *path) {
  dq_status s = dq__check_writable(idx);
  int64_t *ids = NULL, doc = 0;
  size_t n = 0, cap = 0;
  if (s)
    return s;
  if ((s = dq__begin(idx)))
    return s;
  if ((s = find_doc(idx, root, path, &doc)))
    goto fail;
  if (!doc) {
    s = dq_error_set(&idx->err, DQ_ERR_NOTFOUND, "%s/%s: not in the index",
                     root, path);
    goto fail;
  }
  if ((s = old_embedded(idx, doc, &ids, &n, &cap, NULL, NULL)) ||
      (s = dq__emb_forget(idx, ids, n)) || (s = delete_doc(idx, doc)) ||
      (s = dq__commit(idx)))
    goto fail;
  if (n)
    s = dq__vectors_remove(idx, ids, n);
  free(ids);
  return s;
fail:
  dq__rollback(idx);
  free(ids);
  return s;
}

dq_status dq_index_docs_list(dq_index *idx, const char *root, dq_doc_fn fn,
                             void *user) {
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(
      idx,
      "SELECT id, path, root, kind, sha256, mtime, bytes, (SELECT count(*)"
      " FROM chunks c WHERE c.doc = d.id) FROM documents d"
      " WHERE ?1 IS NULL OR root = ?1 ORDER BY root, path",
      &st);
  if (s)
    return s;
  if (root)
    sqlite3_bind_text(st, 1, root, -1, SQLITE_STATIC);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    dq_doc_info d = {
        .id = sqlite3_column_int64(st, 0),
        .path = (const char *)sqlite3_column_text(st, 1),
        .root = (const char *)sqlite3_column_text(st, 2),
        .kind = (const char *)sqlite3_column_text(st, 3),
        .sha256 = (const char *)sqlite3_column_text(st, 4),
        .mtime = sqlite3_column_int64(st, 5),
        .bytes = sqlite3_column_int64(st, 6),
        .n_chunks = sqlite3_column_int64(st, 7),
    };
    if (fn(user, &d)) {
      s = dq_error_set(&idx->err, DQ_ERR_INTERRUPTED, "listing stopped");
      break;
    }
  }
  if (!s && rc != SQLITE_DONE)
    s = dq__db_err(idx, rc, "listing documents");
  sqlite3_finalize(st);
  return s;
}
