/*
 * bench_data.c - the synthetic collection of bench_data.h (vectors, texts,
 * queries) and a percentile helper. Benchmark-only code.
 */
#include "bench_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOCAB 5000
#define TOPIC_WORDS 20

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static double rng_unit(uint64_t *s) {
  return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static double rng_gauss(uint64_t *s) {
  double u = rng_unit(s), v = rng_unit(s);
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static void normalise(float *v, int d) {
  double n = 0;
  for (int j = 0; j < d; j++)
    n += (double)v[j] * v[j];
  float inv = (float)(1.0 / sqrt(n));
  for (int j = 0; j < d; j++)
    v[j] *= inv;
}

/* Word w of the vocabulary: syllables from its number, e.g. "kalomi". */
static size_t word(unsigned w, char *out) {
  static const char *const syl[] = {"ka", "lo", "mi", "ne", "ru", "ta", "vi",
                                    "zo", "pe", "su", "do", "fa", "gi", "ho",
                                    "ju", "be"};
  size_t n = 0;
  unsigned x = w + 17;
  do {
    memcpy(out + n, syl[x % 16], 2);
    n += 2;
    x /= 16;
  } while (x);
  return n;
}

static unsigned zipf_word(uint64_t *s) {
  /* Inverse-CDF of p(r) ~ 1/r over 1..VOCAB, approximated by exp(u ln V). */
  double u = rng_unit(s);
  unsigned r = (unsigned)exp(u * log((double)VOCAB));
  return r ? r - 1 : 0;
}

static unsigned topic_word(int topic, unsigned k) {
  return 500 + (unsigned)((topic * 7919u + k * 104729u) % (VOCAB - 500));
}

void bench_data_make(bench_data *b, size_t n, size_t n_queries, int dim,
                     double noise, uint64_t seed) {
  uint64_t s = seed | 1;
  memset(b, 0, sizeof *b);
  b->n = n;
  b->n_queries = n_queries;
  b->dim = dim;
  float *c = malloc(sizeof(float) * BENCH_TOPICS * (size_t)dim);
  for (size_t i = 0; i < (size_t)BENCH_TOPICS * dim; i++)
    c[i] = (float)rng_gauss(&s);
  for (int t = 0; t < BENCH_TOPICS; t++)
    normalise(c + (size_t)t * dim, dim);
  b->x = malloc(sizeof(float) * n * (size_t)dim);
  b->topic = malloc(sizeof(int) * n);
  double sigma = noise / sqrt((double)dim);
  for (size_t i = 0; i < n; i++) {
    int t = (int)(rng_next(&s) % BENCH_TOPICS);
    b->topic[i] = t;
    for (int j = 0; j < dim; j++)
      b->x[i * dim + j] = c[(size_t)t * dim + j] + (float)(sigma * rng_gauss(&s));
    normalise(b->x + i * dim, dim);
  }
  b->q = malloc(sizeof(float) * n_queries * (size_t)dim);
  b->q_text = malloc(sizeof(char *) * n_queries);
  for (size_t k = 0; k < n_queries; k++) {
    size_t i = (size_t)(rng_next(&s) % n);
    for (int j = 0; j < dim; j++)
      b->q[k * dim + j] = b->x[i * dim + j] + (float)(sigma * rng_gauss(&s));
    normalise(b->q + k * dim, dim);
    char buf[128];
    size_t m = 0;
    for (int w = 0; w < 3; w++) {
      if (w)
        buf[m++] = ' ';
      m += word(topic_word(b->topic[i], (unsigned)(rng_next(&s) % TOPIC_WORDS)),
                buf + m);
    }
    buf[m] = '\0';
    b->q_text[k] = strdup(buf);
  }
  free(c);
}

size_t bench_chunk_text(const bench_data *b, size_t i, char *buf,
                        size_t cap) {
  uint64_t s = (uint64_t)i * 0x9e3779b97f4a7c15ull + 1;
  size_t m = 0;
  for (int w = 0; w < 60 && m + 40 < cap; w++) {
    if (w)
      buf[m++] = ' ';
    uint64_t r = rng_next(&s) % 100;
    if (r < 70) {
      m += word(zipf_word(&s), buf + m);
    } else if (r < 99) {
      m += word(topic_word(b->topic[i], (unsigned)(rng_next(&s) % TOPIC_WORDS)),
                buf + m);
    } else {
      m += (size_t)snprintf(buf + m, cap - m, "ledger_post%u.getValue",
                            (unsigned)(i % 97));
    }
  }
  buf[m] = '\0';
  return m;
}

void bench_data_free(bench_data *b) {
  free(b->x);
  free(b->topic);
  free(b->q);
  for (size_t k = 0; k < b->n_queries; k++)
    free(b->q_text[k]);
  free(b->q_text);
}

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_percentile(double *v, size_t n, double p) {
  if (!n)
    return 0;
  qsort(v, n, sizeof *v, dcmp);
  size_t i = (size_t)ceil(p / 100.0 * (double)n);
  return v[i ? i - 1 : 0];
}
