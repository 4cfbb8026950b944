/*
 * topk.c - the k largest of n logits, ties to the lower index, after a
 * repetition penalty: what a sampler needs from a row of logits (kernels.h
 * dq_top_k). The order is a total one on 64-bit keys (dq_top_k_key), so
 * the answer does not depend on the algorithm: a min-heap of k keys when k
 * is small next to n (one comparison per element that does not make it,
 * which is almost all of them), a sort of all n keys otherwise. The CUDA
 * kernel (kernels/cuda/topk.cuh) selects by the same keys, so both
 * backends give a sampler the same candidates in the same order.
 */
#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void sift_down(uint64_t *h, int k, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < k && h[l] < h[m])
      m = l;
    if (r < k && h[r] < h[m])
      m = r;
    if (m == i)
      return;
    uint64_t t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static int cmp_key_desc(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Sorts a[0..n) descending: qsort for short lists, else an LSD radix sort
 * by bytes of ~key (skipping bytes all keys share), about 4x faster than
 * qsort over a 128k vocabulary here. Falls back to qsort without memory. */
static void sort_desc(uint64_t *a, int n) {
  uint64_t *b = n > 2048 ? malloc((size_t)n * sizeof *b) : NULL;
  if (!b) {
    qsort(a, (size_t)n, sizeof *a, cmp_key_desc);
    return;
  }
  uint64_t *src = a, *dst = b;
  for (int shift = 0; shift < 64; shift += 8) {
    size_t cnt[256] = {0};
    for (int i = 0; i < n; i++)
      cnt[(~src[i] >> shift) & 0xff]++;
    if (cnt[(~src[0] >> shift) & 0xff] == (size_t)n)
      continue; /* every key has this byte */
    size_t at = 0;
    for (int d = 0; d < 256; d++) {
      size_t c = cnt[d];
      cnt[d] = at;
      at += c;
    }
    for (int i = 0; i < n; i++)
      dst[cnt[(~src[i] >> shift) & 0xff]++] = src[i];
    uint64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, (size_t)n * sizeof *a);
  free(b);
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

int dq_top_k_pen(int32_t *pen, int n, int n_vocab) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (pen[i] >= 0 && pen[i] < n_vocab)
      pen[m++] = pen[i];
  if (m > 1)
    qsort(pen, (size_t)m, sizeof *pen, cmp_i32);
  int d = 0;
  for (int i = 0; i < m; i++)
    if (d == 0 || pen[i] != pen[d - 1])
      pen[d++] = pen[i];
  return d;
}

/* Offers element i with value v to the heap h of k keys (h[0] the
 * smallest); *thr is h[0]'s value, below which nothing gets in. */
static inline void offer(uint64_t *h, int k, float v, int i, float *thr) {
  uint64_t key = dq_top_k_key(v, i);
  if (key > h[0]) {
    h[0] = key;
    sift_down(h, k, 0);
    *thr = dq_top_k_key_value(h[0]);
  }
}

dq_status dq_top_k(const float *x, int n, const int32_t *pen, int n_pen,
                   float penalty, int k, uint64_t *keys, int32_t *ids,
                   float *vals) {
  if (!x || n < 1 || n > (1 << 30) || k < 1 || k > n || !ids || !vals ||
      n_pen < 0 || (n_pen && !pen) || !(penalty > 0))
    return DQ_ERR_ARG;
  if (penalty == 1.0f)
    n_pen = 0;
  /* all n keys sorted when k is a fair share of n; else a heap of k */
  int all = (int64_t)k * 8 >= n;
  int cap = all ? n : k;
  uint64_t *h = keys ? keys : malloc((size_t)cap * sizeof *h);
  if (!h)
    return DQ_ERR_NOMEM;
  if (all) {
    for (int i = 0; i < n; i++)
      h[i] = dq_top_k_key(x[i], i);
    for (int j = 0; j < n_pen; j++)
      h[pen[j]] =
          dq_top_k_key(dq_top_k_penalise(x[pen[j]], penalty), pen[j]);
  } else {
    /* the heap starts as k keys no element's is below (the smallest is
     * NaN's of the largest index); each element not below the current
     * threshold (a float compare, which NaN always passes) is offered,
     * the penalised ones by their penalised value */
    for (int i = 0; i < k; i++)
      h[i] = dq_top_k_key(NAN, 0x7fffffff - i);
    float thr = NAN;
    int i = 0;
    for (int j = 0; j <= n_pen; j++) {
      int end = j < n_pen ? pen[j] : n;
      for (; i < end; i++)
        if (!(x[i] < thr))
          offer(h, k, x[i], i, &thr);
      if (j < n_pen) {
        offer(h, k, dq_top_k_penalise(x[i], penalty), i, &thr);
        i++;
      }
    }
  }
  sort_desc(h, cap);
  for (int i = 0; i < k; i++) {
    ids[i] = dq_top_k_key_id(h[i]);
    vals[i] = dq_top_k_key_value(h[i]);
  }
  if (h != keys)
    free(h);
  return DQ_OK;
}
