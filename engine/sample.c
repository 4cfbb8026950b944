/*
 * sample.c - token sampling: greedy, or temperature with top-k, top-p
 * (nucleus), min-p filtering and a repetition penalty, drawn with the
 * sampler's own PRNG (xoshiro256**, seeded through splitmix64) so that the
 * same seed over the same logits gives the same tokens on every platform.
 *
 * Order of the filters (llama.cpp's default chain): repetition penalty on
 * raw logits -> top-k -> softmax at temperature -> top-p -> min-p -> draw.
 * Speculative decoding (speculate.c) reads the same filtered distribution
 * as a dense vector (dq_sampler_probs), draws from vectors it builds, and
 * rewinds the penalty's recent tokens after a draft; those hooks are
 * declared in speculate.h.
 *
 * Not here: stop strings and streaming (engine.c).
 */
#include "engine.h"
#include "speculate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dq_sampler {
  dq_sampler_opts o;
  int n_vocab;
  uint64_t s[4];     /* xoshiro256** state */
  int32_t *recent;   /* ring of the last repeat_last_n tokens */
  int n_recent, recent_head;
  int32_t *saved;    /* the ring at dq_sampler_mark */
  int n_saved, saved_head;
  float *work;       /* n_vocab logits */
  int32_t *idx;      /* n_vocab candidate ids */
};

void dq_sampler_opts_init(dq_sampler_opts *o) {
  memset(o, 0, sizeof *o);
  o->temp = 0.0f;
  o->top_k = 40;
  o->top_p = 0.95f;
  o->min_p = 0.05f;
  o->repeat_penalty = 1.0f;
  o->repeat_last_n = 64;
  o->seed = 0;
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static uint64_t next_u64(dq_sampler *sm) {
  uint64_t *s = sm->s;
  uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return r;
}

/* uniform in [0, 1) with 53 random bits */
static double next_unit(dq_sampler *sm) {
  return (double)(next_u64(sm) >> 11) * (1.0 / 9007199254740992.0);
}

dq_status dq_sampler_new(const dq_sampler_opts *o, int n_vocab,
                         dq_sampler **out) {
  *out = NULL;
  if (!o || n_vocab < 1 || o->top_k < 0 || o->top_p < 0 || o->top_p > 1 ||
      o->min_p < 0 || o->min_p > 1 || o->repeat_penalty <= 0 ||
      o->repeat_last_n < 0)
    return DQ_ERR_ARG;
  dq_sampler *sm = calloc(1, sizeof *sm);
  if (!sm)
    return DQ_ERR_NOMEM;
  sm->o = *o;
  sm->n_vocab = n_vocab;
  uint64_t x = o->seed;
  for (int i = 0; i < 4; i++)
    sm->s[i] = splitmix64(&x);
  sm->work = malloc((size_t)n_vocab * sizeof(float));
  sm->idx = malloc((size_t)n_vocab * sizeof(int32_t));
  size_t ring_bytes =
      (size_t)(o->repeat_last_n ? o->repeat_last_n : 1) * sizeof(int32_t);
  sm->recent = malloc(ring_bytes);
  sm->saved = malloc(ring_bytes);
  if (!sm->work || !sm->idx || !sm->recent || !sm->saved) {
    dq_sampler_free(sm);
    return DQ_ERR_NOMEM;
  }
  *out = sm;
  return DQ_OK;
}

void dq_sampler_free(dq_sampler *sm) {
  if (!sm)
    return;
  free(sm->work);
  free(sm->idx);
  free(sm->recent);
  free(sm->saved);
  free(sm);
}

void dq_sampler_accept(dq_sampler *sm, int32_t token) {
  if (!sm || sm->o.repeat_last_n == 0)
    return;
  sm->recent[sm->recent_head] = token;
  sm->recent_head = (sm->recent_head + 1) % sm->o.repeat_last_n;
  if (sm->n_recent < sm->o.repeat_last_n)
    sm->n_recent++;
}

/* sorts idx[0..n) by work[] descending; ties by lower id */
static int cmp_desc(const void *a, const void *b, void *w) {
  const float *v = w;
  int32_t ia = *(const int32_t *)a, ib = *(const int32_t *)b;
  if (v[ia] > v[ib])
    return -1;
  if (v[ia] < v[ib])
    return 1;
  return ia < ib ? -1 : ia > ib;
}

/* The filter chain over `logits` into sm->work and sm->idx. Greedy: returns
 * 0 with the argmax in *pick. Otherwise returns the number n of surviving
 * candidates: idx[0..n) sorted by probability, work[idx[i]] their
 * probabilities (summing to *total, not renormalised after top-p/min-p). */
static int filter(dq_sampler *sm, const float *logits, int32_t *pick,
                  double *total) {
  int nv = sm->n_vocab;
  float *w = sm->work;
  memcpy(w, logits, (size_t)nv * sizeof(float));
  /* repetition penalty: each distinct recent token once */
  if (sm->o.repeat_penalty != 1.0f) {
    for (int i = 0; i < sm->n_recent; i++) {
      int32_t t = sm->recent[i];
      if (t < 0 || t >= nv)
        continue;
      int seen = 0;
      for (int j = 0; j < i; j++)
        seen |= sm->recent[j] == t;
      if (seen)
        continue;
      w[t] = w[t] > 0 ? w[t] / sm->o.repeat_penalty
                      : w[t] * sm->o.repeat_penalty;
    }
  }
  if (sm->o.temp <= 0.0f) {
    int32_t best = 0;
    for (int i = 1; i < nv; i++)
      if (w[i] > w[best])
        best = i;
    *pick = best;
    return 0;
  }
  /* candidates sorted by logit */
  int n = nv;
  for (int i = 0; i < nv; i++)
    sm->idx[i] = i;
  qsort_r(sm->idx, (size_t)nv, sizeof(int32_t), cmp_desc, w);
  if (sm->o.top_k > 0 && sm->o.top_k < n)
    n = sm->o.top_k;
  /* softmax at temperature over the survivors; probabilities into w */
  float mx = w[sm->idx[0]];
  double sum = 0;
  for (int i = 0; i < n; i++) {
    int32_t t = sm->idx[i];
    w[t] = expf((w[t] - mx) / sm->o.temp);
    sum += w[t];
  }
  for (int i = 0; i < n; i++)
    w[sm->idx[i]] = (float)(w[sm->idx[i]] / sum);
  /* top-p: the smallest prefix whose mass reaches top_p */
  if (sm->o.top_p < 1.0f) {
    double cum = 0;
    for (int i = 0; i < n; i++) {
      cum += w[sm->idx[i]];
      if (cum >= sm->o.top_p) {
        n = i + 1;
        break;
      }
    }
  }
  /* min-p: keep p >= min_p * p_max (p_max is the first) */
  if (sm->o.min_p > 0.0f) {
    float thr = sm->o.min_p * w[sm->idx[0]];
    int k = 1;
    while (k < n && w[sm->idx[k]] >= thr)
      k++;
    n = k;
  }
  double tot = 0;
  for (int i = 0; i < n; i++)
    tot += w[sm->idx[i]];
  *total = tot;
  return n;
}

dq_status dq_sampler_sample(dq_sampler *sm, const float *logits,
                            int32_t *token) {
  if (!sm || !logits || !token)
    return DQ_ERR_ARG;
  int32_t pick = 0;
  double tot = 0;
  int n = filter(sm, logits, &pick, &tot);
  if (n > 0) {
    const float *w = sm->work;
    double r = next_unit(sm) * tot, acc = 0;
    pick = sm->idx[n - 1];
    for (int i = 0; i < n; i++) {
      acc += w[sm->idx[i]];
      if (r < acc) {
        pick = sm->idx[i];
        break;
      }
    }
  }
  *token = pick;
  dq_sampler_accept(sm, pick);
  return DQ_OK;
}

/* ---- hooks for speculative decoding (speculate.h) ----------------------- */

int dq_sampler_is_greedy(const dq_sampler *sm) { return sm->o.temp <= 0.0f; }

void dq_sampler_probs(dq_sampler *sm, const float *logits, float *probs) {
  int32_t pick = 0;
  double tot = 0;
  int n = filter(sm, logits, &pick, &tot);
  memset(probs, 0, (size_t)sm->n_vocab * sizeof(float));
  if (n == 0) {
    probs[pick] = 1.0f;
    return;
  }
  for (int i = 0; i < n; i++)
    probs[sm->idx[i]] = (float)(sm->work[sm->idx[i]] / tot);
}

double dq_sampler_unit(dq_sampler *sm) { return next_unit(sm); }

int32_t dq_sampler_draw(dq_sampler *sm, const float *weights) {
  int nv = sm->n_vocab;
  double tot = 0;
  int32_t last = -1;
  for (int i = 0; i < nv; i++)
    if (weights[i] > 0) {
      tot += weights[i];
      last = i;
    }
  if (last < 0)
    return -1;
  double r = next_unit(sm) * tot, acc = 0;
  for (int i = 0; i < nv; i++) {
    if (weights[i] <= 0)
      continue;
    acc += weights[i];
    if (r < acc)
      return i;
  }
  return last; /* rounding: r landed on the total */
}

void dq_sampler_mark(dq_sampler *sm) {
  if (sm->o.repeat_last_n)
    memcpy(sm->saved, sm->recent,
           (size_t)sm->o.repeat_last_n * sizeof(int32_t));
  sm->n_saved = sm->n_recent;
  sm->saved_head = sm->recent_head;
}

void dq_sampler_rewind(dq_sampler *sm) {
  if (sm->o.repeat_last_n)
    memcpy(sm->recent, sm->saved,
           (size_t)sm->o.repeat_last_n * sizeof(int32_t));
  sm->n_recent = sm->n_saved;
  sm->recent_head = sm->saved_head;
}
