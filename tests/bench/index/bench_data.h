/*
 * bench_data.h - the synthetic collection both index benchmarks use, so
 * docqa and the FAISS floor see the same vectors: n chunks of dim-d unit
 * vectors drawn around 1000 topic centres (|noise| = `noise` times the
 * centre's length: at 0.8 members of a topic have cosine about 0.6, like
 * sentence embeddings; at 1.5 about 0.3 and topics blur together),
 * chunk texts of 60 words (70% Zipf-distributed general vocabulary, 30% the
 * topic's own words, plus an identifier now and then), and queries made
 * from a random chunk's vector plus noise and three of its topic's words.
 * Deterministic for a given seed.
 */
#ifndef DQ_BENCH_DATA_H
#define DQ_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_TOPICS 1000

typedef struct bench_data {
  size_t n, n_queries;
  int dim;
  float *x;       /* n x dim, unit length */
  int *topic;     /* n */
  float *q;       /* n_queries x dim, unit length */
  char **q_text;  /* n_queries */
} bench_data;

/* noise: length of the noise added to a topic centre (0.8 by default;
 * larger makes topics overlap and approximate search harder). */
void bench_data_make(bench_data *b, size_t n, size_t n_queries, int dim,
                     double noise, uint64_t seed);
/* Text of chunk i (60 words) into buf; returns its length. */
size_t bench_chunk_text(const bench_data *b, size_t i, char *buf, size_t cap);
void bench_data_free(bench_data *b);
/* p-th percentile (0..100) of v[0..n), sorting v. */
double bench_percentile(double *v, size_t n, double p);

#endif
