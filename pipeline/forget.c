/*
 * forget.c - `docqa forget PATH...`: removes the documents at or under
 * each path from the index (chunks, vectors, symbols, references with
 * them), the way ingest removes a deleted file. The paths are matched
 * against every stored document first, so a typo removes nothing: as
 * files on disk, else as paths stored or shown (relative to their root,
 * behind its name in an index of several roots).
 */
#include "pipeline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef pl_doc_ref gone_doc; /* one document to remove */

typedef struct match_ctx {
  dq_index *idx;
  const char *abs; /* the path as an absolute one */
  const char *rel; /* as written, without trailing '/': a stored path, or
                      one as shown ("beta/claim.c" in an index of several
                      roots, index.h dq_index_shown_path) */
  int use_rel;     /* second pass: match `rel` against stored paths */
  gone_doc *v;
  size_t n, cap;
  size_t hits; /* documents this path matched */
  int oom;
} match_ctx;

/* p equals `at` or lies under it. */
static int at_or_under(const char *p, const char *at) {
  size_t n = strlen(at);
  while (n > 1 && at[n - 1] == '/')
    n--;
  if (strncmp(p, at, n) != 0)
    return 0;
  return p[n] == '\0' || p[n] == '/' || (n == 1 && at[0] == '/');
}

/* Whether rel names the document (root, path) as shown, or a folder of it:
 * "label/path", "label/folder" or "label" alone, the whole root. */
static int shown_under(dq_index *idx, const char *root, const char *path,
                       const char *rel) {
  const char *rest = dq_index_shown_rest(idx, root, rel);
  return rest && (!*rest || at_or_under(path, rest));
}

static int match_doc(void *user, const dq_doc_info *d) {
  match_ctx *m = user;
  const char *root = d->root ? d->root : "", *path = d->path ? d->path : "";
  int hit;
  if (m->use_rel) {
    hit = m->rel[0] && (at_or_under(path, m->rel) ||
                        shown_under(m->idx, root, path, m->rel));
  } else {
    size_t n = strlen(root) + strlen(path) + 2;
    char *full = malloc(n);
    if (!full) {
      m->oom = 1;
      return 1;
    }
    snprintf(full, n, "%s/%s", root, path);
    hit = at_or_under(full, m->abs);
    free(full);
  }
  if (!hit)
    return 0;
  m->hits++;
  for (size_t i = 0; i < m->n; i++)
    if (m->v[i].id == d->id)
      return 0; /* an earlier path matched it too */
  if (m->n == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 16;
    gone_doc *v = realloc(m->v, cap * sizeof *v);
    if (!v) {
      m->oom = 1;
      return 1;
    }
    m->v = v;
    m->cap = cap;
  }
  gone_doc *g = &m->v[m->n];
  *g = (gone_doc){.id = d->id,
                  .n_chunks = d->n_chunks,
                  .bytes = d->bytes,
                  .mtime = d->mtime,
                  .root = strdup(root),
                  .path = strdup(path),
                  .kind = strdup(d->kind ? d->kind : "")};
  m->n++;
  if (!g->root || !g->path || !g->kind) {
    m->oom = 1;
    return 1;
  }
  return 0;
}

/* `path` made absolute: realpath when it exists, else lexically (cwd
 * joined, "." and ".." and repeated '/' folded), since a forgotten folder
 * may be gone from disk. */
static int absolute(const char *path, char *out) {
  if (realpath(path, out))
    return 0;
  char buf[PATH_MAX];
  if (path[0] == '/') {
    if (strlen(path) >= sizeof buf)
      return -1;
    strcpy(buf, path);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) ||
        (size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= sizeof buf)
      return -1;
  }
  size_t n = 0; /* out[0..n): the folded path, always starting with '/' */
  out[n++] = '/';
  for (char *s = buf, *seg; (seg = strtok_r(s, "/", &s));) {
    if (!strcmp(seg, "."))
      continue;
    if (!strcmp(seg, "..")) {
      while (n > 1 && out[n - 1] != '/')
        n--;
      if (n > 1)
        n--; /* the '/' before the dropped segment */
      continue;
    }
    size_t len = strlen(seg);
    if (n + (n > 1) + len + 1 > PATH_MAX)
      return -1;
    if (n > 1)
      out[n++] = '/';
    memcpy(out + n, seg, len);
    n += len;
  }
  out[n] = '\0';
  return 0;
}

void pl_doc_refs_free(pl_doc_ref *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].root);
    free(v[i].path);
    free(v[i].kind);
  }
  free(v);
}

dq_status pl_docs_at(dq_index *idx, const char *path, pl_doc_ref **v, size_t *n,
                     size_t *cap, size_t *hits, dq_error *err) {
  char abs[PATH_MAX], rel[PATH_MAX];
  size_t rl = strlen(path);
  *hits = 0;
  if (!rl || rl >= sizeof rel || absolute(path, abs) != 0)
    return dq_error_set(err, DQ_ERR_ARG, "'%s': not a usable path", path);
  memcpy(rel, path, rl + 1);
  while (rl > 1 && rel[rl - 1] == '/')
    rel[--rl] = '\0';
  match_ctx m = {
      .idx = idx, .abs = abs, .rel = rel, .v = *v, .n = *n, .cap = *cap};
  dq_status s = DQ_OK;
  for (m.use_rel = 0; m.use_rel < 2 && !m.hits && s == DQ_OK; m.use_rel++)
    s = dq_index_docs_list(idx, NULL, match_doc, &m);
  *v = m.v;
  *n = m.n;
  *cap = m.cap;
  *hits = m.hits;
  if (m.oom)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  if (s != DQ_OK)
    return dq_error_set(err, s, "%s", dq_index_errmsg(idx));
  return DQ_OK;
}

static int by_place(const void *a, const void *b) {
  const gone_doc *x = a, *y = b;
  int c = strcmp(x->root, y->root);
  return c ? c : strcmp(x->path, y->path);
}

dq_status dq_forget_run(const dq_forget_opts *o, const char *const *paths,
                        size_t n_paths, dq_forget_summary *sum, dq_error *err) {
  memset(sum, 0, sizeof *sum);
  if (!n_paths)
    return dq_error_set(err, DQ_ERR_ARG, "no path to forget");
  dq_index *idx = NULL;
  int lock_fd = -1;
  gone_doc *docs = NULL;
  size_t n_docs = 0, cap = 0;
  dq_status s = pl_index_open(o->index_dir, o->dry_run, o->log, &idx, err);
  if (s != DQ_OK)
    return s;
  if (!o->dry_run && (s = pl_index_lock(o->index_dir, &lock_fd, err)))
    goto done;
  for (size_t i = 0; i < n_paths; i++) {
    size_t hits = 0;
    if ((s = pl_docs_at(idx, paths[i], &docs, &n_docs, &cap, &hits, err)))
      goto done;
    if (!hits) {
      char abs[PATH_MAX];
      s = dq_error_set(err, DQ_ERR_NOTFOUND,
                       "%s: no document in the index is at or under it (as "
                       "%s, or as a stored path relative to its root); "
                       "'docqa status --docs' lists them",
                       paths[i], absolute(paths[i], abs) ? paths[i] : abs);
      goto done;
    }
  }
  qsort(docs, n_docs, sizeof *docs, by_place);
  for (size_t i = 0; i < n_docs; i++) {
    gone_doc *g = &docs[i];
    if (!o->dry_run) {
      s = dq_index_doc_remove(idx, g->root, g->path);
      if (s != DQ_OK) {
        dq_error_set(err, s, "%s (%lld of %zu documents removed before it)",
                     dq_index_errmsg(idx), (long long)sum->n_docs, n_docs);
        goto done;
      }
    }
    sum->n_docs++;
    sum->n_chunks += g->n_chunks;
    if (o->on_doc) {
      dq_doc_info d = {.id = g->id,
                       .path = g->path,
                       .root = g->root,
                       .kind = g->kind,
                       .mtime = g->mtime,
                       .bytes = g->bytes,
                       .n_chunks = g->n_chunks};
      o->on_doc(o->user, &d);
    }
  }
done:
  pl_doc_refs_free(docs, n_docs);
  dq_index_close(idx); /* saves the vector file when it changed */
  if (lock_fd >= 0)
    close(lock_fd);
  return s;
}
