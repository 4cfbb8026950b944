/*
 * faiss_flat_floor.c - the floor for the index benchmark: FAISS's own exact
 * inner-product Flat search through its C API, nothing else. Its per-query
 * latency is what no docqa search can beat; its results are the exact top-k
 * that recall is measured against. Built into bench_index, and alone (with
 * DQ_FLOOR_MAIN) as `faiss_flat_floor [--n N] [--noise X]`.
 */
#include <stdint.h>
#include <stdlib.h>

#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/Index_c.h>

#include "bench_data.h"
#include "common.h"

/* Exact top-k of each query; ms[i] = latency of query i (one at a time). */
int bench_flat_floor(const float *xb, size_t n, int d, const float *xq,
                     size_t nq, int k, int64_t *labels, double *ms) {
  FaissIndexFlatIP *ix = NULL;
  if (faiss_IndexFlatIP_new_with(&ix, d) || faiss_Index_add(ix, (idx_t)n, xb))
    return -1;
  float *dist = malloc(sizeof(float) * (size_t)k);
  for (size_t i = 0; i < nq; i++) {
    double t0 = dq_now_ms();
    faiss_Index_search(ix, 1, xq + i * d, k, dist, (idx_t *)labels + i * k);
    ms[i] = dq_now_ms() - t0;
  }
  free(dist);
  faiss_Index_free(ix);
  return 0;
}

#ifdef DQ_FLOOR_MAIN
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  size_t n = 100000, nq = 200;
  double noise = 0.8;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--n") == 0)
      n = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--noise") == 0)
      noise = strtod(argv[++i], NULL);
  bench_data b;
  bench_data_make(&b, n, nq, 384, noise, 42);
  int64_t *lab = malloc(sizeof(int64_t) * nq * 10);
  double *ms = malloc(sizeof(double) * nq);
  if (bench_flat_floor(b.x, n, 384, b.q, nq, 10, lab, ms))
    return 1;
  printf("faiss Flat floor: n=%zu p50 %.3f ms p99 %.3f ms\n", n,
         bench_percentile(ms, nq, 50), bench_percentile(ms, nq, 99));
  return 0;
}
#endif
