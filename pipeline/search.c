/*
 * search.c - `docqa search` and the retrieval step of ask/chat: open the
 * index read-only, embed the query when the index has vectors, and run the
 * index's hybrid (BM25 + dense, reciprocal-rank fused) search.
 */
#include "pipeline_int.h"

#include <stdlib.h>
#include <string.h>

void dq_hit_clear(dq_hit *h) {
  free(h->path);
  free(h->shown);
  free(h->root);
  free(h->section);
  free(h->text);
  free(h->kind);
  free(h->symbol);
  free(h->symbol_kind);
  free(h->symbol_where);
  h->path = h->root = h->section = h->text = h->kind = h->shown = NULL;
  h->symbol = h->symbol_kind = h->symbol_where = NULL;
}

void dq_hits_free(dq_hit *h, size_t n) {
  if (!h)
    return;
  for (size_t i = 0; i < n; i++)
    dq_hit_clear(&h[i]);
  free(h);
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

dq_status dq_search_run(const dq_search_job *job, const char *query,
                        dq_hit **hits, size_t *n_hits, const char **mode_out,
                        dq_error *err) {
  *hits = NULL;
  *n_hits = 0;
  if (mode_out)
    *mode_out = "bm25";
  if (!query || !query[strspn(query, " \t\r\n")])
    return dq_error_set(err, DQ_ERR_ARG, "the query is empty");
  dq_index *idx = NULL;
  dq_model *m = NULL;
  float *qvec = NULL;
  dq_search_result *r = NULL;
  size_t n = 0;
  int dim = 0;
  dq_status s = pl_index_open(job->index_dir, 1, job->log, &idx, err);
  if (s != DQ_OK)
    return s;
  const char *rec_model = NULL;
  int rec_dim = 0;
  if (dq_index_embed_model(idx, &rec_model, &rec_dim) == DQ_OK && rec_model &&
      rec_dim > 0) {
    dq_index_stats st;
    int have_vectors = dq_index_stats_get(idx, &st) == DQ_OK && st.n_vectors > 0;
    const char *want = job->embed_model ? pl_basename(job->embed_model) : "";
    if (have_vectors && strcmp(want, rec_model) != 0) {
      s = dq_error_set(err, DQ_ERR_MISMATCH,
                       "%s: the index was embedded with '%s' but the "
                       "embedding model in use is '%s' (pass --embed-model, "
                       "or re-ingest)",
                       job->index_dir, rec_model, want);
      goto done;
    }
    if (have_vectors) {
      dq_error merr;
      dq_error_clear(&merr);
      if (pl_model_open(job->embed_model, "embedding", job->backend,
                        job->n_threads, job->log, &m, &merr) != DQ_OK) {
        dq_log(job->log, DQ_LOG_WARN, "%s; searching with BM25 only",
               dq_error_msg(&merr));
      } else {
        dim = dq_model_embed_dim(m);
        qvec = malloc((size_t)dim * sizeof *qvec);
        if (!qvec) {
          s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
          goto done;
        }
        s = dq_model_embed(m, &query, 1, qvec);
        if (s != DQ_OK) {
          dq_error_set(err, s, "embedding the query: %s", dq_model_errmsg(m));
          goto done;
        }
      }
    }
  }
  dq_search_opts so = {0};
  size_t k_final = job->k ? job->k : 10;
  so.k = k_final;
  if (job->recall)
    so.k = !job->pool ? 3 * k_final
           : job->pool > k_final ? job->pool : k_final;
  so.paths = job->paths;
  so.no_symbols = job->no_symbols;
  so.n_paths = job->n_paths;
  so.all_chunks = job->all_chunks;
  if (job->config)
    so.lexical_weight = job->config->search.lexical_weight;
  s = dq_index_search(idx, &so, query, qvec, dim, &r, &n);
  if (s != DQ_OK) {
    dq_error_set(err, s, "%s", dq_index_errmsg(idx));
    goto done;
  }
  /* no result from an index that holds nothing: say how to fill it */
  dq_index_stats st;
  if (!n && dq_index_stats_get(idx, &st) == DQ_OK && !st.n_chunks) {
    s = dq_error_set(err, DQ_ERR_NOTFOUND,
                     "%s holds no %s yet: add some with 'docqa ingest PATH "
                     "--index %s'",
                     job->index_dir, st.n_docs ? "text" : "documents",
                     job->index_dir);
    goto done;
  }
  /* a path filter that names no document is the user's error, not an
   * empty answer (nor, beside others, one quietly left out): looked for
   * when there is no result, or more than one filter */
  for (size_t i = 0; (!n || so.n_paths > 1) && !so.all_chunks && i < so.n_paths;
       i++) {
    dq_search_opts one = {
        .k = 1, .all_chunks = 1, .paths = &so.paths[i], .n_paths = 1};
    dq_search_result *x = NULL;
    size_t nx = 0;
    s = dq_index_search(idx, &one, query, NULL, 0, &x, &nx);
    dq_search_results_free(x, nx);
    if (s != DQ_OK) {
      dq_error_set(err, s, "%s", dq_index_errmsg(idx));
      goto done;
    }
    if (!nx) {
      s = dq_error_set(err, DQ_ERR_NOTFOUND,
                       "%s%s%s: no document in the index is at or under it "
                       "(give a path as search shows it, a folder ending in "
                       "'/'; 'docqa status --docs' lists them)",
                       job->paths_option ? job->paths_option : "",
                       job->paths_option ? " " : "", so.paths[i]);
      goto done;
    }
  }
  if (mode_out)
    *mode_out = qvec ? "hybrid" : "bm25";
  dq_hit *h = calloc(n ? n : 1, sizeof *h);
  if (!h) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    h[i].path = dup_or_empty(r[i].path);
    h[i].root = dup_or_empty(r[i].root);
    h[i].shown = dup_or_empty(r[i].shown ? r[i].shown : r[i].path);
    h[i].section = dup_or_empty(r[i].section);
    h[i].text = dup_or_empty(r[i].text);
    h[i].kind = dup_or_empty(r[i].kind);
    /* the index's strings move to the hit */
    h[i].symbol = r[i].symbol;
    h[i].symbol_kind = r[i].symbol_kind;
    h[i].symbol_where = r[i].symbol_where;
    r[i].symbol = r[i].symbol_kind = r[i].symbol_where = NULL;
    if (!h[i].path || !h[i].root || !h[i].section || !h[i].text || !h[i].kind ||
        !h[i].shown) {
      dq_hits_free(h, i + 1);
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
    h[i].line_start = r[i].line_start;
    h[i].line_end = r[i].line_end;
    h[i].page_start = r[i].page_start;
    h[i].page_end = r[i].page_end;
    h[i].chunk_id = r[i].chunk_id;
    h[i].score = r[i].score;
    h[i].bm25_rank = r[i].bm25_rank;
    h[i].dense_rank = r[i].dense_rank;
    h[i].bm25_score = r[i].bm25_score;
    h[i].dense_score = r[i].dense_score;
    h[i].symbol_rank = r[i].symbol_rank;
    h[i].symbol_strong = r[i].symbol_strong;
    h[i].symbol_line = r[i].symbol_line;
    /* one look at each file: a chunk of the same file among the 64 before
     * (whole documents come in document order) gives its mark */
    size_t j = i > 64 ? i - 64 : 0;
    while (j < i &&
           (strcmp(h[j].path, h[i].path) || strcmp(h[j].root, h[i].root)))
      j++;
    h[i].stale = j < i ? h[j].stale : pl_doc_changed(idx, h[i].root, h[i].path);
  }
  *hits = h;
  *n_hits = n;
  if (job->recall && n > 1) {
    /* the embedder is no longer needed; the decoder reads the candidates */
    dq_model_free(m);
    m = NULL;
    if ((s = pl_decoder_open(job->model, "language", "search --recall",
                             job->backend, job->n_threads, job->log, &m,
                             err)) != DQ_OK)
      goto recall_fail;
    dq_recall_info info;
    pl_recall_in in = {.question = query, .config = job->config,
                       .layer_from = job->layer_from,
                       .layer_to = job->layer_to,
                       .weight = job->recall_weight,
                       .calib = job->recall_calib,
                       .toq = 1};
    if ((s = pl_recall_rerank(m, &in, h, n, &info, err)) != DQ_OK)
      goto recall_fail;
    if (job->recall_info)
      *job->recall_info = info;
    if (n > k_final) {
      for (size_t i = k_final; i < n; i++)
        dq_hit_clear(&h[i]);
      *n_hits = k_final;
    }
  }
  goto done;
recall_fail:
  dq_hits_free(h, n);
  *hits = NULL;
  *n_hits = 0;
done:
  dq_search_results_free(r, n);
  free(qvec);
  dq_model_free(m);
  dq_index_close(idx);
  return s;
}
