/*
 * test_topk.c - dq_top_k (kernels/cpu/topk.c) against a slow exact
 * reference: every index sorted by qsort with a comparator written from
 * the contract (higher value first, -0 equal to +0, NaN below every
 * number, ties to the lower index), the penalty applied to a copy first.
 * Rows of several sizes (1 to a 128k vocabulary) and value mixes (normal
 * draws, heavy ties on a few integers, signed zeros, infinities, NaN,
 * rows of mostly NaN), k
 * from 1 to n across the heap / full-sort switch (k = n/8), penalties
 * above and below 1. Ids must match exactly and values bit for bit (up to
 * the sign of zero). Also the key's round trip and bad arguments.
 */
#include "kt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kt_rng rng = {42};
static uint64_t rnd(void) { return kt_next(&rng); }
static float unif(void) { return (float)(rnd() >> 40) / (float)(1 << 24); }
static float normal(void) {
  float u = unif() + 1e-7f, v = unif();
  return sqrtf(-2 * logf(u)) * cosf(6.2831853f * v);
}

static const float *ref_x;
static int ref_cmp(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  float u = ref_x[i], v = ref_x[j];
  int nu = isnan(u), nvn = isnan(v);
  if (nu != nvn)
    return nu ? 1 : -1; /* NaN last */
  if (!nu && u != v)
    return u > v ? -1 : 1;
  return i < j ? -1 : i > j;
}

static int same_value(float a, float b) {
  return (isnan(a) && isnan(b)) || a == b;
}

/* one row against the reference; returns the number of mismatches */
static int check_row(const float *x, int n, const int32_t *pen, int n_pen,
                     float penalty, int k, int use_keys) {
  float *y = malloc((size_t)n * sizeof *y);
  int *order = malloc((size_t)n * sizeof *order);
  int32_t *ids = malloc((size_t)k * sizeof *ids);
  float *vals = malloc((size_t)k * sizeof *vals);
  uint64_t *keys = use_keys ? malloc((size_t)n * sizeof *keys) : NULL;
  memcpy(y, x, (size_t)n * sizeof *y);
  if (penalty != 1.0f)
    for (int j = 0; j < n_pen; j++)
      y[pen[j]] = y[pen[j]] > 0 ? y[pen[j]] / penalty : y[pen[j]] * penalty;
  for (int i = 0; i < n; i++)
    order[i] = i;
  ref_x = y;
  qsort(order, (size_t)n, sizeof *order, ref_cmp);
  int bad = 0;
  CHECK_OK(dq_top_k(x, n, pen, n_pen, penalty, k, keys, ids, vals), "top_k");
  for (int i = 0; i < k; i++)
    if (ids[i] != order[i] || !same_value(vals[i], y[order[i]])) {
      if (!bad)
        fprintf(stderr, "n %d k %d pen %d x %g: rank %d got %d (%g) want %d "
                        "(%g)\n",
                n, k, n_pen, (double)penalty, i, ids[i], (double)vals[i],
                order[i], (double)y[order[i]]);
      bad++;
    }
  free(y);
  free(order);
  free(ids);
  free(vals);
  free(keys);
  return bad;
}

/* a random row of kind: 0 normal, 1 a few integers (ties), 2 specials,
 * 3 mostly NaN (so NaN entries make the top k) */
static void fill(float *x, int n, int kind) {
  for (int i = 0; i < n; i++) {
    if (kind == 0)
      x[i] = 4 * normal();
    else if (kind == 1)
      x[i] = (float)(int)(rnd() % 5) - 2;
    else if (kind == 3)
      x[i] = rnd() % 20 ? NAN : normal();
    else {
      int r = (int)(rnd() % 10);
      x[i] = r == 0   ? 0.0f
             : r == 1 ? -0.0f
             : r == 2 ? INFINITY
             : r == 3 ? -INFINITY
             : r == 4 ? NAN
                      : normal();
    }
  }
}

int main(void) {
  /* keys: order and round trip */
  const float vs[] = {-INFINITY, -3.5f, -1e-30f, -0.0f, 0.0f, 1e-30f, 2.0f,
                      INFINITY};
  for (int i = 0; i + 1 < 8; i++) {
    uint64_t a = dq_top_k_key(vs[i], 5), b = dq_top_k_key(vs[i + 1], 5);
    CHECK_MSG(vs[i] == vs[i + 1] ? a == b : a < b, "key order at %d", i);
    CHECK(dq_top_k_key_value(a) == vs[i]);
    CHECK_EQ_INT(dq_top_k_key_id(a), 5);
  }
  CHECK(dq_top_k_key(NAN, 0) < dq_top_k_key(-INFINITY, 1 << 30));
  CHECK(dq_top_k_key(NAN, 0) > 0);
  CHECK(isnan(dq_top_k_key_value(dq_top_k_key(NAN, 3))));
  CHECK(dq_top_k_key(1.0f, 3) > dq_top_k_key(1.0f, 4)); /* lower id first */

  /* rows against the reference */
  const int sizes[] = {1, 2, 7, 100, 1000, 5000, 128256};
  int n_rows = 0, n_bad = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int n = sizes[si];
    float *x = malloc((size_t)n * sizeof *x);
    int32_t *pen = malloc(64 * sizeof *pen);
    for (int kind = 0; kind < 4; kind++) {
      fill(x, n, kind);
      int ks[] = {1, 2, 40, n / 8 - 1, n / 8, n / 8 + 1, n - 1, n};
      for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        int k = ks[ki];
        if (k < 1 || k > n || (n > 5000 && k > 1000 && k < n))
          continue;
        /* penalty list: ascending distinct, some of the best ones */
        int n_pen = 0;
        for (int i = 0; i < n && n_pen < 64; i++)
          if (rnd() % (uint64_t)(n / 32 + 2) == 0)
            pen[n_pen++] = i;
        const float pens[] = {1.0f, 1.3f, 0.7f};
        for (int pi = 0; pi < 3; pi++) {
          n_bad += check_row(x, n, pen, n_pen, pens[pi], k, (ki + pi) & 1);
          n_rows++;
        }
      }
    }
    free(x);
    free(pen);
  }
  fprintf(stderr, "top-k: %d rows, %d mismatched entries\n", n_rows, n_bad);
  CHECK_EQ_INT(n_bad, 0);

  /* bad arguments */
  float x[4] = {1, 2, 3, 4};
  int32_t ids[4];
  float vals[4];
  int32_t pen[1] = {2};
  CHECK(dq_top_k(x, 4, NULL, 0, 1, 0, NULL, ids, vals) == DQ_ERR_ARG);
  CHECK(dq_top_k(x, 4, NULL, 0, 1, 5, NULL, ids, vals) == DQ_ERR_ARG);
  CHECK(dq_top_k(x, 4, pen, 1, 0, 2, NULL, ids, vals) == DQ_ERR_ARG);
  CHECK(dq_top_k(x, 4, NULL, 1, 2, 2, NULL, ids, vals) == DQ_ERR_ARG);
  CHECK(dq_top_k(x, 0, NULL, 0, 1, 1, NULL, ids, vals) == DQ_ERR_ARG);
  /* a penalty list made to fit: sorted, repeats and outsiders dropped */
  int32_t pl[6] = {5, -1, 3, 5, 100, 3};
  CHECK_EQ_INT(dq_top_k_pen(pl, 6, 10), 2);
  CHECK(pl[0] == 3 && pl[1] == 5);
  CHECK_EQ_INT(dq_top_k_pen(pl, 0, 10), 0);
  /* the penalty moves id 2 (3 / 2 = 1.5) below id 1 */
  CHECK_OK(dq_top_k(x, 4, pen, 1, 2.0f, 4, NULL, ids, vals), "top_k");
  CHECK(ids[0] == 3 && ids[1] == 1 && ids[2] == 2 && ids[3] == 0);
  CHECK(vals[2] == 1.5f);
  return TEST_EXIT();
}
