/*
 * ingest_job.c - `docqa ingest`: walk -> read -> chunk -> store, then embed.
 *
 * Each path is walked once up front (so progress knows the total), then each
 * file is compared with what the index holds (size + mtime, then sha256;
 * a document an older chunker stored, DQ_CHUNK_VERSION, is read again),
 * read, chunked and written as one transaction: a crash or Ctrl-C leaves every
 * document either in its old or its new version. Files that disappeared from
 * a walked folder are removed. Embedding is a separate stage over every chunk
 * that has none yet, so `--no-embed` then `--embed-only` works, and an
 * interrupted embedding resumes where it stopped; a rewritten document's
 * chunks whose text its stored version had keep their embeddings
 * (index/docs.c), so only what changed is embedded again.
 *
 * Roots do not nest: a path inside a folder ingested before is walked as
 * part of it (dq_walk_opts.base), and a folder that holds a root ingested
 * before takes that root's documents over.
 */
#include "pipeline_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/file.h>
#include <unistd.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Chunks embedded per engine call: large enough to amortise the call, small
 * enough that progress moves and a Ctrl-C loses little work. */
#define EMBED_BATCH 16

typedef struct file_entry {
  char *rel, *abs;
  uint64_t size;
  int64_t mtime_ns;
  dq_doc_kind kind;
  char lang[16];
} file_entry;

typedef struct walk_list {
  file_entry *v;
  size_t n, cap;
  const dq_ingest_opts *o;
  dq_ingest_summary *sum;
  int oom;
} walk_list;

static int collect(void *user, const dq_walk_entry *e) {
  walk_list *wl = user;
  wl->sum->files_seen++;
  if (e->skip_reason) {
    wl->sum->files_skipped++;
    if (e->too_large) {
      /* not a policy skip the user expects: a document left unread */
      wl->sum->files_too_large++;
      if (e->size > wl->sum->largest_skipped)
        wl->sum->largest_skipped = e->size;
      dq_log(wl->o->log, DQ_LOG_WARN, "skipped %s: %s", e->rel_path,
             e->skip_reason);
    }
    if (wl->o->on_skip)
      wl->o->on_skip(wl->o->skip_user, e->rel_path, e->skip_reason);
    return 0;
  }
  if (wl->n == wl->cap) {
    size_t cap = wl->cap ? wl->cap * 2 : 256;
    file_entry *v = realloc(wl->v, cap * sizeof *v);
    if (!v) {
      wl->oom = 1;
      return 1;
    }
    wl->v = v;
    wl->cap = cap;
  }
  file_entry *f = &wl->v[wl->n];
  memset(f, 0, sizeof *f);
  f->rel = strdup(e->rel_path);
  f->abs = strdup(e->path);
  if (!f->rel || !f->abs) {
    free(f->rel);
    free(f->abs);
    wl->oom = 1;
    return 1;
  }
  f->size = e->size;
  f->mtime_ns = e->mtime_ns;
  f->kind = e->kind;
  snprintf(f->lang, sizeof f->lang, "%s", e->lang ? e->lang : "");
  wl->n++;
  return 0;
}

static void walk_list_clear(walk_list *wl) {
  for (size_t i = 0; i < wl->n; i++) {
    free(wl->v[i].rel);
    free(wl->v[i].abs);
  }
  free(wl->v);
  wl->v = NULL;
  wl->n = wl->cap = 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The chunker version stored for a document some of whose pages no reader
 * read (a scan's, with OCR off or Tesseract missing): never current, so
 * the next ingest reads the file again even when it has not changed. */
#define PARTS_INCOMPLETE (-1)

/* Progress through one file, shown as "ocr FILE" (OCR's pages), "read
 * FILE" (a large mailbox's MiB) or "store FILE" (a large document's
 * chunks); Ctrl-C (the stop flag) stops it between pages, messages or
 * chunks, not only between files. */
typedef struct read_progress {
  const dq_ingest_opts *o;
  const char *rel;
} read_progress;

static int on_read_progress(void *user, const char *stage, uint64_t done,
                            uint64_t total, const char *unit) {
  const read_progress *p = user;
  if (p->o->stop && *p->o->stop)
    return 1;
  if (!p->o->progress)
    return 0;
  char label[96];
  size_t n = strlen(p->rel);
  snprintf(label, sizeof label, "%s %s%s", stage, n > 60 ? "..." : "",
           n > 60 ? p->rel + n - 60 : p->rel);
  return p->o->progress(p->o->progress_user, label, done, total, unit);
}

/* Chunks written between looks at the stop flag and the progress bar. */
#define STORE_STEP_CHUNKS 1024

/* Writes one document's parts in one transaction. A stop (Ctrl-C) while a
 * large one is written rolls it back: the index keeps its stored version. */
static dq_status store_doc(dq_index *idx, const char *root, const file_entry *f,
                           const dq_doc_parts *p, const char *sha_hex,
                           int complete, read_progress *rp, dq_error *err) {
  dq_doc_info di = {0};
  di.path = f->rel;
  di.root = root;
  di.kind = f->kind == DQ_DOC_CODE && f->lang[0] ? f->lang
                                                  : dq_doc_kind_name(f->kind);
  di.sha256 = sha_hex;
  di.mtime = f->mtime_ns;
  di.bytes = (int64_t)f->size;
  di.parts = complete ? DQ_CHUNK_VERSION : PARTS_INCOMPLETE;
  dq_index_doc *w = NULL;
  dq_status s = dq_index_doc_begin(idx, &di, &w);
  if (s != DQ_OK)
    goto fail;
  for (size_t i = 0; i < p->n_chunks; i++) {
    if (i && i % STORE_STEP_CHUNKS == 0 &&
        on_read_progress(rp, "store", i, p->n_chunks, "chunks")) {
      dq_index_doc_abort(w);
      return dq_error_set(err, DQ_ERR_INTERRUPTED,
                          "%s: stopped while storing its %zu chunks (its "
                          "stored version, if any, is kept); every finished "
                          "file is saved",
                          f->rel, p->n_chunks);
    }
    const dq_chunk *c = &p->chunks[i];
    dq_chunk_in ci = {0};
    ci.byte_start = (int64_t)c->byte_start;
    ci.byte_end = (int64_t)c->byte_end;
    ci.line_start = (int32_t)c->line_start;
    ci.line_end = (int32_t)c->line_end;
    ci.page_start = (int32_t)c->page_start;
    ci.page_end = (int32_t)c->page_end;
    ci.section = c->section && c->section[0] ? c->section : NULL;
    ci.text = c->text;
    ci.tokens = (int32_t)c->n_tokens;
    if ((s = dq_index_doc_add_chunk(w, &ci, NULL)) != DQ_OK)
      goto fail;
  }
  for (size_t i = 0; i < p->n_symbols; i++) {
    const dq_symbol *y = &p->symbols[i];
    dq_symbol_in si = {y->name, y->kind, y->scope, (int32_t)y->line,
                       (int32_t)y->col, (int32_t)y->page};
    if ((s = dq_index_doc_add_symbol(w, &si)) != DQ_OK)
      goto fail;
  }
  for (size_t i = 0; i < p->n_refs; i++) {
    const dq_ref *r = &p->refs[i];
    dq_ref_in ri = {r->name, r->kind, r->caller, (int32_t)r->line,
                    (int32_t)r->col, (int32_t)r->page};
    if ((s = dq_index_doc_add_ref(w, &ri)) != DQ_OK)
      goto fail;
  }
  s = dq_index_doc_commit(w);
  w = NULL;
  if (s != DQ_OK)
    goto fail;
  return DQ_OK;
fail:
  dq_index_doc_abort(w);
  return dq_error_set(err, s, "%s: %s", f->abs, dq_index_errmsg(idx));
}

/* Reads, compares and stores one file. File-level problems are counted and
 * logged (return DQ_OK); index failures are returned. */
static dq_status ingest_file(dq_index *idx, const char *root,
                             const file_entry *f, const dq_ingest_opts *o,
                             int n_threads, dq_ingest_summary *sum,
                             dq_error *err) {
  dq_doc_stat st;
  dq_status s = dq_index_doc_lookup(idx, root, f->rel, &st);
  int stored = s == DQ_OK;
  if (s != DQ_OK && s != DQ_ERR_NOTFOUND)
    return dq_error_set(err, s, "%s", dq_index_errmsg(idx));
  /* stored by an older chunker: read again, whether the file changed or
   * not */
  int current =
      stored && dq_chunk_version_current(f->kind, f->rel, (int)st.parts);
  if (current && st.bytes == (int64_t)f->size && st.mtime == f->mtime_ns) {
    sum->files_unchanged++;
    return DQ_OK;
  }
  if (f->kind == DQ_DOC_IMAGE &&
      (o->no_ocr || !strcmp(dq_ocr_version(), "not found"))) {
    /* an image is only read by OCR: without it, it is skipped like any
     * binary file (a stored one stays as it is) */
    const char *why = o->no_ocr ? "an image, and OCR is off"
                                : "an image, and OCR needs Tesseract "
                                  "(Debian: libtesseract5 and "
                                  "tesseract-ocr-eng)";
    sum->files_skipped++;
    if (!o->no_ocr && !sum->images_unread++)
      dq_log(o->log, DQ_LOG_WARN, "%s: %s; images are skipped", f->rel, why);
    if (o->on_skip)
      o->on_skip(o->skip_user, f->rel, why);
    return DQ_OK;
  }
  dq_read_opts ro = {0};
  ro.log = o->log;
  ro.no_ocr = o->no_ocr;
  ro.ocr_lang = o->ocr_lang;
  ro.max_file_bytes = o->max_file_bytes;
  ro.n_threads = n_threads;
  read_progress op = {o, f->rel};
  ro.progress = on_read_progress;
  ro.progress_user = &op;
  dq_text *t = NULL;
  dq_read_info info;
  dq_error ferr;
  dq_error_clear(&ferr);
  double t0 = dq_now_ms();
  s = dq_read(f->abs, f->kind, &ro, &t, &info, &ferr);
  if (s == DQ_ERR_INTERRUPTED) /* Ctrl-C while a reader read it: stop */
    return dq_error_set(err, s, "%s; every finished file is saved",
                        dq_error_msg(&ferr));
  if (s != DQ_OK) {
    sum->files_failed++;
    dq_log(o->log, DQ_LOG_WARN, "skipped %s", dq_error_msg(&ferr));
    if (o->on_skip)
      o->on_skip(o->skip_user, f->rel, dq_error_msg(&ferr));
    return DQ_OK;
  }
  sum->bytes_read += info.n_bytes;
  sum->ocr_pages += info.n_ocr_pages;
  sum->pages_no_text += info.n_pages_no_text;
  if (info.n_ocr_pages)
    dq_log(o->log, DQ_LOG_INFO, "%s: %u pages read by OCR (%.1f s)", f->rel,
           info.n_ocr_pages, (dq_now_ms() - t0) / 1e3);
  if (info.n_pages_no_text)
    dq_log(o->log, DQ_LOG_WARN,
           "%s: %u pages have no text layer (a scan?) and were not read: %s; "
           "the next ingest reads this file again",
           f->abs, info.n_pages_no_text, info.ocr_why);
  char hex[65];
  dq_sha256_hex(info.sha256, hex);
  if (current && strcmp(st.sha256, hex) == 0) {
    /* Touched but not changed: nothing to redo. */
    dq_text_free(t);
    sum->files_unchanged++;
    return DQ_OK;
  }
  dq_chunk_opts co = {0};
  co.max_tokens = o->max_chunk_tokens;
  co.log = o->log;
  dq_doc_parts *parts = NULL;
  s = dq_chunk_document(t, f->rel, &co, &parts, &ferr);
  if (s != DQ_OK) {
    dq_text_free(t);
    sum->files_failed++;
    dq_log(o->log, DQ_LOG_WARN, "skipped %s: %s", f->abs, dq_error_msg(&ferr));
    return DQ_OK;
  }
  s = store_doc(idx, root, f, parts, hex, info.n_pages_no_text == 0, &op, err);
  if (s == DQ_ERR_ARG) {
    /* The index refused this document's records (a reader/chunker bug):
     * nothing of it was written; the rest of the ingest goes on. */
    sum->files_failed++;
    dq_log(o->log, DQ_LOG_WARN, "skipped %s", dq_error_msg(err));
    s = DQ_OK;
  } else if (s == DQ_OK) {
    if (stored) {
      sum->files_updated++;
      if (!current && st.parts != PARTS_INCOMPLETE && st.sha256[0] &&
          !strcmp(st.sha256, hex)) {
        if (!sum->files_reread++)
          dq_log(o->log, DQ_LOG_INFO,
                 "%s was stored by an older docqa (chunker version %d, now "
                 "%d): reading it again, and every such document",
                 f->rel, (int)st.parts, DQ_CHUNK_VERSION);
      }
    } else
      sum->files_added++;
    _Static_assert(DQ_DOC_KINDS <= sizeof sum->by_kind / sizeof *sum->by_kind,
                   "ingest_summary.by_kind holds every kind");
    if ((unsigned)f->kind < DQ_DOC_KINDS)
      sum->by_kind[f->kind]++;
    sum->n_chunks += parts->n_chunks;
    sum->n_symbols += parts->n_symbols;
    sum->n_refs += parts->n_refs;
    dq_log(o->log, DQ_LOG_INFO, "%s %s: %zu chunks, %zu symbols (%.0f ms)",
           stored ? "updated" : "added", f->rel, parts->n_chunks,
           parts->n_symbols, dq_now_ms() - t0);
  }
  dq_doc_parts_free(parts);
  dq_text_free(t);
  return s;
}

typedef struct removal_ctx {
  const char *under; /* only documents under this folder ("sub/"), or "" */
  char **seen;       /* sorted */
  size_t n_seen;
  char **gone;
  size_t n_gone, cap;
  int oom;
} removal_ctx;

/* Adds d's path to rc->gone; non-zero when out of memory. */
static int add_path(void *user, const dq_doc_info *d) {
  removal_ctx *rc = user;
  if (rc->n_gone == rc->cap) {
    size_t cap = rc->cap ? rc->cap * 2 : 16;
    char **g = realloc(rc->gone, cap * sizeof *g);
    if (!g)
      return rc->oom = 1;
    rc->gone = g;
    rc->cap = cap;
  }
  if (!(rc->gone[rc->n_gone] = strdup(d->path)))
    return rc->oom = 1;
  rc->n_gone++;
  return 0;
}

static int find_gone(void *user, const dq_doc_info *d) {
  removal_ctx *rc = user;
  const char *key = d->path;
  if (strncmp(key, rc->under, strlen(rc->under)) != 0 ||
      bsearch(&key, rc->seen, rc->n_seen, sizeof *rc->seen, cmp_str))
    return 0;
  return add_path(user, d);
}

dq_status pl_index_lock(const char *dir, int *fd, dq_error *err) {
  char lock_path[PATH_MAX];
  snprintf(lock_path, sizeof lock_path, "%s/ingest.lock", dir);
  *fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (*fd < 0 || flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    if (*fd >= 0)
      close(*fd);
    *fd = -1;
    return dq_error_set(err, DQ_ERR_BUSY,
                        "%s: another 'docqa ingest' or 'docqa forget' is "
                        "writing this index; wait for it to finish",
                        lock_path);
  }
  return DQ_OK;
}

/* Removes documents of `root` under folder `under` ("" for all, else
 * "sub/") whose files the walk no longer found. */
static dq_status remove_deleted(dq_index *idx, const char *root,
                                const char *under, const walk_list *wl,
                                const dq_ingest_opts *o, dq_ingest_summary *sum,
                                dq_error *err) {
  removal_ctx rc = {.under = under};
  dq_status s = DQ_OK;
  rc.seen = malloc((wl->n + 1) * sizeof *rc.seen);
  if (!rc.seen)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < wl->n; i++)
    rc.seen[i] = wl->v[i].rel;
  rc.n_seen = wl->n;
  qsort(rc.seen, rc.n_seen, sizeof *rc.seen, cmp_str);
  s = dq_index_docs_list(idx, root, find_gone, &rc);
  if (rc.oom)
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  else if (s != DQ_OK)
    dq_error_set(err, s, "%s", dq_index_errmsg(idx));
  for (size_t i = 0; s == DQ_OK && i < rc.n_gone; i++) {
    s = dq_index_doc_remove(idx, root, rc.gone[i]);
    if (s != DQ_OK) {
      dq_error_set(err, s, "%s", dq_index_errmsg(idx));
      break;
    }
    sum->files_removed++;
    dq_log(o->log, DQ_LOG_INFO, "removed %s (no longer in %s, or now skipped)",
           rc.gone[i], root);
  }
  for (size_t i = 0; i < rc.n_gone; i++)
    free(rc.gone[i]);
  free(rc.gone);
  free(rc.seen);
  return s;
}

static dq_status embed_missing(dq_index *idx, dq_model *m,
                               const dq_ingest_opts *o, dq_ingest_summary *sum,
                               dq_error *err) {
  int dim = dq_model_embed_dim(m);
  dq_index_stats stats;
  dq_status s = dq_index_stats_get(idx, &stats);
  if (s != DQ_OK)
    return dq_error_set(err, s, "%s", dq_index_errmsg(idx));
  uint64_t total = (uint64_t)(stats.n_chunks - stats.n_embedded);
  float *vecs = malloc((size_t)EMBED_BATCH * (size_t)dim * sizeof *vecs);
  if (!vecs)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  int64_t after = 0;
  uint64_t done = 0;
  double t0 = dq_now_ms();
  for (;;) {
    if (o->stop && *o->stop) {
      s = dq_error_set(err, DQ_ERR_INTERRUPTED,
                       "interrupted: %llu chunks embedded, the rest "
                       "resume with 'docqa ingest --embed-only'",
                       (unsigned long long)done);
      break;
    }
    dq_chunk_text *ct = NULL;
    size_t n = 0;
    s = dq_index_missing_embeddings(idx, after, EMBED_BATCH, &ct, &n);
    if (s != DQ_OK) {
      dq_error_set(err, s, "%s", dq_index_errmsg(idx));
      break;
    }
    if (n == 0)
      break;
    const char *texts[EMBED_BATCH];
    int64_t ids[EMBED_BATCH];
    for (size_t i = 0; i < n; i++) {
      texts[i] = ct[i].text;
      ids[i] = ct[i].id;
    }
    after = ct[n - 1].id;
    s = dq_model_embed(m, texts, (int)n, vecs);
    dq_chunk_texts_free(ct, n);
    if (s != DQ_OK) {
      dq_error_set(err, s, "embedding: %s", dq_model_errmsg(m));
      break;
    }
    s = dq_index_set_embeddings(idx, ids, vecs, n, dim);
    if (s != DQ_OK) {
      dq_error_set(err, s, "%s", dq_index_errmsg(idx));
      break;
    }
    done += n;
    sum->n_embedded += n;
    if (o->progress && o->progress(o->progress_user, "embed", done, total,
                                   "chunks")) {
      s = dq_error_set(err, DQ_ERR_INTERRUPTED, "interrupted");
      break;
    }
  }
  free(vecs);
  sum->ms_embed += dq_now_ms() - t0;
  /* Save even after an interruption: what was embedded is kept. */
  dq_status s2 = dq_index_vectors_save(idx);
  if (s == DQ_OK && s2 != DQ_OK)
    s = dq_error_set(err, s2, "%s", dq_index_errmsg(idx));
  return s;
}

/* Whether absolute path p lies strictly under folder dir. */
static int is_under(const char *p, const char *dir) {
  size_t k = strlen(dir);
  return k == 1 ? p[0] == '/' && p[1] : !strncmp(p, dir, k) && p[k] == '/';
}

/* The longest of roots[0..n) that holds path t (a folder or file strictly
 * under it), or NULL. */
static const char *outer_root(char *const *roots, size_t n, const char *t) {
  const char *best = NULL;
  for (size_t i = 0; i < n; i++)
    if (is_under(t, roots[i]) && (!best || strlen(roots[i]) > strlen(best)))
      best = roots[i];
  return best;
}

/* After folder t was ingested: the documents of every root inside it
 * (roots[0..n), as the index held them before) are t's now, read again
 * with t's paths; they go from the inner root, which is then no more. */
static dq_status absorb_inner(dq_index *idx, const char *t, char *const *roots,
                              size_t n, const dq_ingest_opts *o,
                              dq_ingest_summary *sum, dq_error *err) {
  dq_status s = DQ_OK;
  for (size_t i = 0; i < n && s == DQ_OK; i++) {
    if (!is_under(roots[i], t))
      continue;
    removal_ctx rc = {0};
    s = dq_index_docs_list(idx, roots[i], add_path, &rc);
    if (rc.oom)
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    else if (s != DQ_OK)
      dq_error_set(err, s, "%s", dq_index_errmsg(idx));
    for (size_t k = 0; s == DQ_OK && k < rc.n_gone; k++) {
      if ((s = dq_index_doc_remove(idx, roots[i], rc.gone[k])) != DQ_OK)
        dq_error_set(err, s, "%s", dq_index_errmsg(idx));
      else
        sum->files_removed++;
    }
    if (s == DQ_OK)
      dq_log(o->log, DQ_LOG_INFO,
             "%s was ingested on its own before; its %zu documents are now "
             "%s's",
             roots[i], rc.n_gone, t);
    for (size_t k = 0; k < rc.n_gone; k++)
      free(rc.gone[k]);
    free(rc.gone);
  }
  return s;
}

dq_status dq_ingest_run(const dq_ingest_opts *o, const char *const *paths,
                        size_t n_paths, dq_ingest_summary *sum,
                        dq_error *err) {
  memset(sum, 0, sizeof *sum);
  double t_start = dq_now_ms();
  /* pages of a scan read by OCR at once */
  long n_cores = sysconf(_SC_NPROCESSORS_ONLN);
  int n_threads =
      o->n_threads > 0 ? o->n_threads : (int)(n_cores > 0 ? n_cores : 1);
  dq_model *m = NULL;
  dq_index *idx = NULL;
  walk_list wl = {0};
  dq_status s = DQ_OK;
  int lock_fd = -1;
  char **have = NULL; /* the index's roots before each path */
  size_t n_have = 0;
  char *under = NULL;
  char **roots = calloc(n_paths + 1, sizeof *roots);
  char **files = calloc(n_paths + 1, sizeof *files);
  if (!roots || !files) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  /* Resolve every path first: a typo fails before any work. */
  for (size_t i = 0; !o->embed_only && i < n_paths; i++) {
    char abs[PATH_MAX];
    struct stat st;
    if (!realpath(paths[i], abs) || stat(abs, &st) != 0) {
      s = dq_error_set(err, errno == ENOENT ? DQ_ERR_NOTFOUND : DQ_ERR_IO,
                       "%s: %s", paths[i], strerror(errno));
      goto done;
    }
    if (S_ISDIR(st.st_mode)) {
      roots[i] = strdup(abs);
    } else {
      files[i] = strdup(abs);
      roots[i] = strdup(dirname(abs));
    }
    if (!roots[i] || (!S_ISDIR(st.st_mode) && !files[i])) {
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
  }
  const char *model_id = NULL;
  int dim = 0;
  if (!o->no_embed) {
    s = pl_embedder_open_bulk(o->embed_model, o->backend, o->n_threads, o->log,
                              &m, err);
    if (s != DQ_OK)
      goto done;
    dq_model_info mi;
    dq_model_get_info(m, &mi);
    if (!mi.is_encoder) {
      s = dq_error_set(err, DQ_ERR_ARG,
                       "%s: '%s' is not an embedding model (architecture %s)",
                       o->embed_model, mi.name, mi.arch);
      goto done;
    }
    model_id = pl_basename(o->embed_model);
    dim = dq_model_embed_dim(m);
  }
  dq_index_opts io = {0};
  io.create = 1;
  io.logger = o->log;
  io.embed_model = model_id;
  io.embed_dim = dim;
  s = dq_index_open(o->index_dir, &io, &idx, err);
  if (s != DQ_OK)
    goto done;
  if ((s = pl_index_lock(o->index_dir, &lock_fd, err)) != DQ_OK)
    goto done;

  for (size_t i = 0; !o->embed_only && i < n_paths; i++) {
    double t0 = dq_now_ms();
    wl.o = o;
    wl.sum = sum;
    /* A path inside a folder ingested before is part of that root: its
     * files keep their paths from there, and its ignore files apply (a
     * root per subfolder would hold every file twice). */
    dq_strings_free(have, n_have);
    have = NULL;
    n_have = 0;
    if ((s = dq_index_roots(idx, &have, &n_have)) != DQ_OK) {
      dq_error_set(err, s, "%s", dq_index_errmsg(idx));
      goto done;
    }
    const char *target = files[i] ? files[i] : roots[i];
    const char *outer = outer_root(have, n_have, target);
    const char *root = outer ? outer : roots[i];
    free(under);
    under = NULL;
    if (outer) {
      /* "sub/": the folder's documents, as stored under the outer root */
      size_t k = strlen(outer) + (strlen(outer) > 1);
      if (!(under = malloc(strlen(roots[i]) + 2))) {
        s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
        goto done;
      }
      if (strlen(roots[i]) > k)
        sprintf(under, "%s/", roots[i] + k);
      else
        under[0] = '\0'; /* a file of the outer root's own folder */
      dq_log(o->log, DQ_LOG_INFO,
             "%s is inside %s, ingested before: its "
             "files are stored as that folder's",
             target, outer);
    }
    dq_walk_opts wo = {0};
    wo.log = o->log;
    wo.hidden = o->hidden;
    wo.max_file_bytes = o->max_file_bytes;
    wo.base = outer;
    s = dq_walk(target, &wo, collect, &wl, err);
    if (s == DQ_OK && wl.oom)
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory while walking %s",
                       roots[i]);
    if (s != DQ_OK)
      goto done;
    for (size_t j = 0; j < wl.n; j++) {
      if (o->stop && *o->stop) {
        s = dq_error_set(err, DQ_ERR_INTERRUPTED,
                         "interrupted after %zu of %zu files of %s; every "
                         "finished file is saved",
                         j, wl.n, roots[i]);
        goto done;
      }
      s = ingest_file(idx, root, &wl.v[j], o, n_threads, sum, err);
      if (s != DQ_OK)
        goto done;
      if (o->progress && o->progress(o->progress_user, "ingest", j + 1, wl.n,
                                     "files")) {
        s = dq_error_set(err, DQ_ERR_INTERRUPTED, "interrupted");
        goto done;
      }
    }
    if (!files[i]) {
      s = remove_deleted(idx, root, under ? under : "", &wl, o, sum, err);
      if (s == DQ_OK && !outer)
        s = absorb_inner(idx, roots[i], have, n_have, o, sum, err);
      if (s != DQ_OK)
        goto done;
    }
    walk_list_clear(&wl);
    sum->ms_walk_read += dq_now_ms() - t0;
  }
  if (!o->no_embed)
    s = embed_missing(idx, m, o, sum, err);

done:
  walk_list_clear(&wl);
  dq_strings_free(have, n_have);
  free(under);
  dq_index_close(idx);
  if (lock_fd >= 0)
    close(lock_fd); /* releases the lock */
  dq_model_free(m);
  for (size_t i = 0; roots && i < n_paths; i++)
    free(roots[i]);
  for (size_t i = 0; files && i < n_paths; i++)
    free(files[i]);
  free(roots);
  free(files);
  sum->ms_total = dq_now_ms() - t_start;
  return s;
}
