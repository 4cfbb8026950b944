/*
 * bench_index.c - the index benchmark (not a ctest test): builds an index of
 * n synthetic chunks (bench_data.h: 384-d vectors and 60-word texts) and
 * reports insert throughput, index size, and query latency p50/p99 of
 * hybrid, dense-only and BM25-only search, with recall@10 of the dense side
 * against exact search, for several IVF nprobe values. The floor, in the
 * same run: FAISS's own exact Flat search (faiss_flat_floor.c) over the same
 * (f16-rounded) vectors, which is also recall's ground truth.
 *
 *   bench_index [--n 100000] [--queries 200] [--noise 0.8] [--dir DIR]
 *               [--keep] [--reuse] [--nlist L]
 * --reuse: with --dir, skip inserting when DIR already holds the n chunks
 * of an earlier --keep run with the same --n/--noise (query timings only).
 * --nlist: IVF lists instead of the automatic choice (with --reuse the
 * vector index is retrained with it).
 */
#include "bench_data.h"
#include "index_int.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIM 384
#define K 10
#define DOC_CHUNKS 100

int bench_flat_floor(const float *xb, size_t n, int d, const float *xq,
                     size_t nq, int k, int64_t *labels, double *ms);

static int rm_cb(const char *p, const struct stat *sb, int f, struct FTW *w) {
  (void)sb, (void)f, (void)w;
  return remove(p);
}

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench_index: %s: %s\n", what, msg);
  exit(1);
}

typedef struct run {
  double p50, p99, recall;
} run;

/* mode: 0 hybrid, 1 dense only, 2 BM25 only. */
static run queries(dq_index *idx, const bench_data *b, int mode,
                   const int64_t *truth, const int64_t *ids) {
  double *ms = malloc(sizeof(double) * b->n_queries);
  double hit = 0;
  for (size_t i = 0; i < b->n_queries + 10; i++) {
    size_t qi = i < 10 ? i : i - 10; /* first 10: warm-up */
    dq_search_opts so = {.k = K};
    if (mode == 1)
      so.n_dense = K;
    dq_search_result *r = NULL;
    size_t n = 0;
    double t0 = dq_now_ms();
    if (dq_index_search(idx, &so, mode == 1 ? NULL : b->q_text[qi],
                        mode == 2 ? NULL : b->q + qi * DIM, DIM, &r, &n))
      die("search", dq_index_errmsg(idx));
    double t = dq_now_ms() - t0;
    if (i >= 10) {
      ms[qi] = t;
      if (mode == 1)
        for (size_t a = 0; a < n; a++)
          for (int c = 0; c < K; c++)
            hit += truth[qi * K + c] >= 0 &&
                   r[a].chunk_id == ids[truth[qi * K + c]];
    }
    dq_search_results_free(r, n);
  }
  run out = {bench_percentile(ms, b->n_queries, 50),
             bench_percentile(ms, b->n_queries, 99),
             hit / (double)(b->n_queries * K)};
  free(ms);
  return out;
}

int main(int argc, char **argv) {
  size_t n = 100000, nq = 200;
  const char *dir_arg = NULL;
  int keep = 0, reuse = 0, nlist = 0;
  double noise = 0.8;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
      n = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--queries") == 0 && i + 1 < argc)
      nq = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
      dir_arg = argv[++i];
    else if (strcmp(argv[i], "--noise") == 0 && i + 1 < argc)
      noise = strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--keep") == 0)
      keep = 1;
    else if (strcmp(argv[i], "--nlist") == 0 && i + 1 < argc)
      nlist = atoi(argv[++i]);
    else if (strcmp(argv[i], "--reuse") == 0)
      reuse = keep = 1;
    else {
      fprintf(stderr, "usage: bench_index [--n N] [--queries Q] [--noise X] "
                      "[--dir DIR] [--keep] [--reuse] [--nlist L]\n");
      return 2;
    }
  }
  char dir[512];
  if (dir_arg) {
    snprintf(dir, sizeof dir, "%s", dir_arg);
  } else {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/dq_bench_index_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir))
      die("mkdtemp", dir);
  }
  printf("index benchmark: n=%zu chunks, dim=%d, %zu queries, noise %.2f, "
         "dir %s\n",
         n, DIM, nq, noise, dir);
  bench_data b;
  double t0 = dq_now_ms();
  bench_data_make(&b, n, nq, DIM, noise, 42);
  printf("data generated in %.1f s\n", (dq_now_ms() - t0) / 1000);

  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1, .embed_model = "bench-synthetic",
                     .embed_dim = DIM, .nlist = nlist};
  if (dq_index_open(dir, &o, &idx, &err))
    die("open", err.msg);
  int64_t *ids = malloc(sizeof(int64_t) * n);
  char text[2048], path[64];
  dq_index_stats st;
  dq_index_stats_get(idx, &st);
  size_t start = 0;
  if (reuse && st.n_chunks == (int64_t)n) {
    for (size_t i = 0; i < n; i++) /* ids were assigned 1..n in order */
      ids[i] = (int64_t)i + 1;
    start = n;
    printf("reusing the index in %s\n", dir);
    if (nlist && dq_index_vectors_rebuild(idx))
      die("rebuild", dq_index_errmsg(idx));
  }
  t0 = dq_now_ms();
  for (size_t d0 = start; d0 < n; d0 += DOC_CHUNKS) {
    size_t m = n - d0 < DOC_CHUNKS ? n - d0 : DOC_CHUNKS;
    snprintf(path, sizeof path, "docs/%06zu.txt", d0 / DOC_CHUNKS);
    dq_doc_info info = {.path = path, .root = "/bench", .kind = "text",
                        .mtime = 1, .bytes = 1};
    dq_index_doc *w = NULL;
    if (dq_index_doc_begin(idx, &info, &w))
      die("begin", dq_index_errmsg(idx));
    for (size_t i = d0; i < d0 + m; i++) {
      dq_chunk_in c = {.text = text, .line_start = (int32_t)(i - d0) * 10 + 1,
                       .line_end = (int32_t)(i - d0) * 10 + 10};
      c.text_bytes = bench_chunk_text(&b, i, text, sizeof text);
      c.byte_end = (int64_t)c.text_bytes;
      if (dq_index_doc_add_chunk(w, &c, &ids[i]))
        die("add", dq_index_errmsg(idx));
    }
    if (dq_index_doc_commit(w))
      die("commit", dq_index_errmsg(idx));
    if (dq_index_set_embeddings(idx, ids + d0, b.x + d0 * DIM, m, DIM))
      die("embeddings", dq_index_errmsg(idx));
  }
  double t_insert = dq_now_ms() - t0;
  t0 = dq_now_ms();
  if (dq_index_vectors_save(idx))
    die("save", dq_index_errmsg(idx));
  double t_save = dq_now_ms() - t0;
  dq_index_stats_get(idx, &st);
  printf("insert: %.1f s, %.0f chunks/s (text + FTS + f16 embeddings, one "
         "transaction per 100-chunk document)\n",
         t_insert / 1000, n / (t_insert / 1000));
  printf("save vectors: %.1f s (%s%s)\n", t_save / 1000,
         st.vectors_ivf ? "IVF training + write" : "Flat write", "");
  printf("size: database %.1f MB + vectors %.1f MB = %.1f MB (%.0f bytes "
         "per chunk)\n",
         st.db_bytes / 1e6, st.vectors_bytes / 1e6,
         (st.db_bytes + st.vectors_bytes) / 1e6,
         (double)(st.db_bytes + st.vectors_bytes) / (double)n);
  printf("vectors: %s, nlist %lld\n", st.vectors_ivf ? "IVF" : "Flat (exact)",
         (long long)st.nlist);
  dq_index_close(idx);

  /* The floor, on the vectors as stored (f16-rounded). */
  float *xr = malloc(sizeof(float) * n * DIM);
  uint16_t *h = malloc(sizeof(uint16_t) * DIM);
  for (size_t i = 0; i < n; i++) {
    dq__f32_to_f16(b.x + i * DIM, h, DIM);
    dq__f16_to_f32(h, xr + i * DIM, DIM);
  }
  free(h);
  int64_t *truth = malloc(sizeof(int64_t) * nq * K);
  double *fms = malloc(sizeof(double) * nq);
  if (bench_flat_floor(xr, n, DIM, b.q, nq, K, truth, fms))
    die("floor", "FAISS Flat failed");
  double f50 = bench_percentile(fms, nq, 50), f99 = bench_percentile(fms, nq, 99);
  free(xr);
  printf("floor (FAISS Flat, exact, C API): p50 %.2f ms  p99 %.2f ms\n", f50,
         f99);

  printf("%-8s %-10s %10s %10s %10s %10s %10s %8s\n", "nprobe", "",
         "hybrid p50", "hybrid p99", "dense p50", "dense p99", "bm25 p50",
         "recall@10");
  int sweep[] = {0, 8, 16, 32, 64, 96, 128};
  for (size_t s = 0; s < sizeof sweep / sizeof sweep[0]; s++) {
    dq_index_opts ro = {.read_only = 0, .embed_model = "bench-synthetic",
                        .embed_dim = DIM, .nprobe = sweep[s]};
    if (dq_index_open(dir, &ro, &idx, &err))
      die("reopen", err.msg);
    dq_index_stats_get(idx, &st);
    if (st.rebuilt_at_open)
      die("reopen", "vector file was rebuilt (should match)");
    if (s > 0 && !st.vectors_ivf) {
      dq_index_close(idx);
      break;
    }
    run hy = queries(idx, &b, 0, truth, ids);
    run de = queries(idx, &b, 1, truth, ids);
    run bm = queries(idx, &b, 2, truth, ids);
    printf("%-8lld %-10s %10.2f %10.2f %10.2f %10.2f %10.2f %8.3f\n",
           (long long)st.nprobe, s == 0 ? "(default)" : "", hy.p50, hy.p99,
           de.p50, de.p99, bm.p50, de.recall);
    if (s == 0)
      printf("ratio to floor (default): hybrid p50 %.2fx, dense p50 %.2fx\n",
             hy.p50 / f50, de.p50 / f50);
    dq_index_close(idx);
  }
  free(truth);
  free(fms);
  free(ids);
  bench_data_free(&b);
  if (!keep && !dir_arg)
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}
