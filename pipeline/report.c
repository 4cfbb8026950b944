/*
 * report.c - what an index holds, for `docqa status`: the index's counts
 * (documents, chunks, embeddings, symbols, references, chat sessions),
 * its files' sizes and embedding model, and per ingested root and per
 * document kind the documents, chunks and bytes. One walk over the
 * documents gives the groups and, for --docs, each document.
 */
#include "pipeline_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct walk {
  dq_report *r;
  dq_doc_fn each;
  void *user;
  int oom;
} walk;

static int add_doc(void *user, const dq_doc_info *d) {
  walk *w = user;
  dq_report *r = w->r;
  /* documents come by root: a new root is the last one or a new entry */
  const char *root = d->root ? d->root : "";
  if (!r->n_roots || strcmp(r->roots[r->n_roots - 1].root, root) != 0) {
    dq_report_root *g = realloc(r->roots, (r->n_roots + 1) * sizeof *g);
    if (!g) {
      w->oom = 1;
      return 1;
    }
    r->roots = g;
    g = &r->roots[r->n_roots];
    memset(g, 0, sizeof *g);
    if (!(g->root = strdup(root))) {
      w->oom = 1;
      return 1;
    }
    r->n_roots++;
  }
  dq_report_root *g = &r->roots[r->n_roots - 1];
  g->n_docs++;
  g->n_chunks += d->n_chunks;
  g->bytes += d->bytes;
  if (d->mtime > g->newest_mtime)
    g->newest_mtime = d->mtime;
  const char *kind = d->kind ? d->kind : "";
  size_t k = 0;
  while (k < r->n_kinds && strcmp(r->kinds[k].kind, kind) != 0)
    k++;
  if (k == r->n_kinds) {
    dq_report_kind *nk = realloc(r->kinds, (r->n_kinds + 1) * sizeof *nk);
    if (!nk) {
      w->oom = 1;
      return 1;
    }
    r->kinds = nk;
    memset(&nk[k], 0, sizeof nk[k]);
    if (!(nk[k].kind = strdup(kind))) {
      w->oom = 1;
      return 1;
    }
    r->n_kinds++;
  }
  r->kinds[k].n_docs++;
  r->kinds[k].n_chunks += d->n_chunks;
  return w->each ? w->each(w->user, d) : 0;
}

static int by_count(const void *a, const void *b) {
  const dq_report_kind *x = a, *y = b;
  if (x->n_docs != y->n_docs)
    return x->n_docs > y->n_docs ? -1 : 1;
  return strcmp(x->kind, y->kind);
}

dq_status pl_index_open(const char *dir, int read_only, const dq_logger *log,
                        dq_index **idx, dq_error *err) {
  dq_index_opts io = {0};
  io.read_only = read_only;
  io.logger = log;
  dq_status s = dq_index_open(dir, &io, idx, err);
  if (s == DQ_ERR_NOTFOUND)
    dq_error_prefix(err,
                    "no index at %s (create one with 'docqa ingest "
                    "PATH')",
                    dir);
  return s;
}

dq_status dq_report_run(const char *index_dir, const dq_logger *log,
                        dq_doc_fn each_doc, void *user, dq_report *out,
                        dq_error *err) {
  memset(out, 0, sizeof *out);
  dq_index *idx = NULL;
  dq_status s = pl_index_open(index_dir, 1, log, &idx, err);
  if (s != DQ_OK)
    return s;
  const char *model = NULL;
  if ((s = dq_index_stats_get(idx, &out->stats)) != DQ_OK ||
      (s = dq_index_embed_model(idx, &model, &out->embed_dim)) != DQ_OK) {
    dq_error_set(err, s, "%s", dq_index_errmsg(idx));
    goto done;
  }
  if (model && !(out->embed_model = strdup(model))) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  walk w = {.r = out, .each = each_doc, .user = user};
  s = dq_index_docs_list(idx, NULL, add_doc, &w);
  if (w.oom)
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  else if (s == DQ_ERR_INTERRUPTED && each_doc)
    s = DQ_OK; /* the caller stopped the walk */
  else if (s != DQ_OK)
    dq_error_set(err, s, "%s", dq_index_errmsg(idx));
  if (out->n_kinds > 1)
    qsort(out->kinds, out->n_kinds, sizeof *out->kinds, by_count);
  for (size_t i = 0; s == DQ_OK && i < out->n_roots; i++)
    if (!(out->roots[i].label =
              strdup(dq_index_root_label(idx, out->roots[i].root))))
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
done:
  dq_index_close(idx);
  if (s != DQ_OK)
    dq_report_clear(out);
  return s;
}

void dq_report_clear(dq_report *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->n_roots; i++) {
    free(r->roots[i].root);
    free(r->roots[i].label);
  }
  for (size_t i = 0; i < r->n_kinds; i++)
    free(r->kinds[i].kind);
  free(r->roots);
  free(r->kinds);
  free(r->embed_model);
  memset(r, 0, sizeof *r);
}
