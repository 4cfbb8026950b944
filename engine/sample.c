/*
 * sample.c - token sampling: greedy, or temperature with top-k, top-p
 * (nucleus), min-p filtering and a repetition penalty, drawn with the
 * sampler's own PRNG (xoshiro256**, seeded through splitmix64) so that the
 * same seed over the same logits gives the same tokens on every platform.
 *
 * Order of the filters (llama.cpp's default chain): repetition penalty on
 * raw logits -> top-k -> softmax at temperature -> top-p -> min-p -> draw.
 * The first two are a selection (kernels.h dq_top_k: a heap of k, not a
 * sort of the vocabulary: ~0.06 ms instead of ~20 ms for a 128k vocabulary
 * with top-k 40 here) that dq_sampler_sample_seq leaves to the sequence's
 * backend (dq_seq_top_k): on CUDA the logits stay on the device and only
 * the candidates come back. Both give the same candidates in the same
 * order, so the same tokens for a seed.
 * Speculative decoding (speculate.c) reads the same filtered distribution
 * as a dense vector (dq_sampler_probs), draws from vectors it builds, and
 * rewinds the penalty's recent tokens after a draft; those hooks are
 * declared in speculate.h.
 *
 * Not here: stop strings and streaming (engine.c).
 */
#include "engine.h"
#include "kernels.h"
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
  int32_t *pen;      /* the ring's distinct tokens, ascending */
  int32_t *idx;      /* candidates (n_vocab), best first */
  float *val;        /* their penalised logits, then probabilities */
  uint64_t *keys;    /* dq_top_k's scratch (n_vocab) */
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
  sm->val = malloc((size_t)n_vocab * sizeof(float));
  sm->idx = malloc((size_t)n_vocab * sizeof(int32_t));
  sm->keys = malloc((size_t)n_vocab * sizeof(uint64_t));
  size_t ring_bytes =
      (size_t)(o->repeat_last_n ? o->repeat_last_n : 1) * sizeof(int32_t);
  sm->recent = malloc(ring_bytes);
  sm->saved = malloc(ring_bytes);
  sm->pen = malloc(ring_bytes);
  if (!sm->val || !sm->idx || !sm->keys || !sm->recent || !sm->saved ||
      !sm->pen) {
    dq_sampler_free(sm);
    return DQ_ERR_NOMEM;
  }
  *out = sm;
  return DQ_OK;
}

void dq_sampler_free(dq_sampler *sm) {
  if (!sm)
    return;
  free(sm->val);
  free(sm->idx);
  free(sm->keys);
  free(sm->recent);
  free(sm->saved);
  free(sm->pen);
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

/* The recent tokens the repetition penalty applies to, each once,
 * ascending, into sm->pen; their count (0 without a penalty). */
static int penalty_list(dq_sampler *sm) {
  if (sm->o.repeat_penalty == 1.0f || sm->n_recent == 0)
    return 0;
  memcpy(sm->pen, sm->recent, (size_t)sm->n_recent * sizeof *sm->pen);
  return dq_top_k_pen(sm->pen, sm->n_recent, sm->n_vocab);
}

/* How many candidates the filters start from: 1 greedy, top_k, or all. */
static int n_candidates(const dq_sampler *sm) {
  if (sm->o.temp <= 0.0f)
    return 1;
  if (sm->o.top_k > 0 && sm->o.top_k < sm->n_vocab)
    return sm->o.top_k;
  return sm->n_vocab;
}

/* The filters after the candidates: idx[0..n) best first (dq_top_k's
 * order: penalised logit, ties to the lower id), val[] their penalised
 * logits. Greedy: returns 0 with the argmax in *pick. Otherwise the softmax
 * at temperature over them into val[], then top-p and min-p cut the list;
 * returns the survivors' count, their probabilities summing to *total (not
 * renormalised after the cuts). */
static int finish(dq_sampler *sm, int n, int32_t *pick, double *total) {
  float *w = sm->val;
  if (sm->o.temp <= 0.0f) {
    *pick = sm->idx[0];
    return 0;
  }
  float mx = w[0];
  double sum = 0;
  for (int i = 0; i < n; i++) {
    w[i] = expf((w[i] - mx) / sm->o.temp);
    sum += w[i];
  }
  for (int i = 0; i < n; i++)
    w[i] = (float)(w[i] / sum);
  /* top-p: the smallest prefix whose mass reaches top_p */
  if (sm->o.top_p < 1.0f) {
    double cum = 0;
    for (int i = 0; i < n; i++) {
      cum += w[i];
      if (cum >= sm->o.top_p) {
        n = i + 1;
        break;
      }
    }
  }
  /* min-p: keep p >= min_p * p_max (p_max is the first) */
  if (sm->o.min_p > 0.0f) {
    float thr = sm->o.min_p * w[0];
    int k = 1;
    while (k < n && w[k] >= thr)
      k++;
    n = k;
  }
  double tot = 0;
  for (int i = 0; i < n; i++)
    tot += w[i];
  *total = tot;
  return n;
}

/* The filter chain over a row of logits: penalty and candidates by
 * dq_top_k, then finish. dq_top_k cannot fail here: its scratch is
 * preallocated and dq_sampler_new checked what its arguments come from. */
static int filter(dq_sampler *sm, const float *logits, int32_t *pick,
                  double *total) {
  int k = n_candidates(sm), n_pen = penalty_list(sm);
  dq_top_k(logits, sm->n_vocab, sm->pen, n_pen, sm->o.repeat_penalty, k,
           sm->keys, sm->idx, sm->val);
  return finish(sm, k, pick, total);
}

/* Draws from the n survivors of finish (or takes its greedy pick), and
 * records the token for the penalty. */
static int32_t draw(dq_sampler *sm, int n, int32_t pick, double tot) {
  if (n > 0) {
    const float *w = sm->val;
    double r = next_unit(sm) * tot, acc = 0;
    pick = sm->idx[n - 1];
    for (int i = 0; i < n; i++) {
      acc += w[i];
      if (r < acc) {
        pick = sm->idx[i];
        break;
      }
    }
  }
  dq_sampler_accept(sm, pick);
  return pick;
}

dq_status dq_sampler_sample(dq_sampler *sm, const float *logits,
                            int32_t *token) {
  if (!sm || !logits || !token)
    return DQ_ERR_ARG;
  int32_t pick = 0;
  double tot = 0;
  int n = filter(sm, logits, &pick, &tot);
  *token = draw(sm, n, pick, tot);
  return DQ_OK;
}

dq_status dq_sampler_sample_seq(dq_sampler *sm, dq_seq *s, int32_t *token) {
  if (!sm || !s || !token)
    return DQ_ERR_ARG;
  int k = n_candidates(sm), n_pen = penalty_list(sm);
  dq_status st = dq_seq_top_k(s, k, sm->pen, n_pen, sm->o.repeat_penalty,
                              sm->idx, sm->val);
  if (st)
    return st;
  int32_t pick = 0;
  double tot = 0;
  int n = finish(sm, k, &pick, &tot);
  *token = draw(sm, n, pick, tot);
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
    probs[sm->idx[i]] = (float)(sm->val[i] / tot);
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
