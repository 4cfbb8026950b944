/*
 * moe.c - the mixture-of-experts routing rule (backend.h dq_moe_cfg), one
 * token at a time on the host: every backend's routing op calls it (the
 * CPU backend directly; a GPU backend would port this one function), and
 * the unit tests check it on hand-made router logits.
 *
 * Ties are broken towards the lower expert (and group) id so that the
 * choice is a function of the scores alone, whatever the backend.
 */
#include "backend.h"

#include <math.h>

const char *dq_moe_cfg_check(const dq_moe_cfg *c) {
  if (c->n_expert < 1 || c->n_expert > 4096)
    return "expert_count must be 1..4096";
  if (c->n_used < 1 || c->n_used > c->n_expert)
    return "expert_used_count must be 1..expert_count";
  if (c->gating != DQ_MOE_SOFTMAX && c->gating != DQ_MOE_SIGMOID)
    return "expert_gating_func must be 1 (softmax) or 2 (sigmoid)";
  if (!(c->scale > 0.0f) || !isfinite(c->scale))
    return "expert_weights_scale must be positive";
  if (c->n_group > 1) {
    if (c->n_expert % c->n_group)
      return "expert_group_count must divide expert_count";
    if (c->n_group_used < 1 || c->n_group_used > c->n_group)
      return "expert_group_used_count must be 1..expert_group_count";
    if (c->n_group_used * (c->n_expert / c->n_group) < c->n_used)
      return "the chosen groups hold fewer experts than expert_used_count";
  }
  return NULL;
}

/* Indices of the k largest of v[0..n) (skipping -INFINITY) into out, best
 * first, ties to the lower index. O(k n); k is small. */
static void top_k(const float *v, int n, int k, int32_t *out) {
  for (int j = 0; j < k; j++) {
    int best = -1;
    for (int i = 0; i < n; i++) {
      if (v[i] == -INFINITY)
        continue;
      int taken = 0;
      for (int q = 0; q < j && !taken; q++)
        taken = out[q] == i;
      if (!taken && (best < 0 || v[i] > v[best]))
        best = i;
    }
    out[j] = best < 0 ? 0 : best;
  }
}

void dq_moe_route_one(const dq_moe_cfg *c, const float *logits,
                      const float *bias, int32_t *ids, float *w,
                      int32_t *flat, float *scratch) {
  int n = c->n_expert, k = c->n_used;
  float *p = scratch, *sel = scratch + n;
  if (c->gating == DQ_MOE_SOFTMAX) {
    float mx = logits[0];
    for (int e = 1; e < n; e++)
      mx = logits[e] > mx ? logits[e] : mx;
    double sum = 0;
    for (int e = 0; e < n; e++)
      sum += p[e] = expf(logits[e] - mx);
    float inv = (float)(1.0 / sum);
    for (int e = 0; e < n; e++)
      p[e] *= inv;
  } else {
    for (int e = 0; e < n; e++)
      p[e] = 1.0f / (1.0f + expf(-logits[e]));
  }
  for (int e = 0; e < n; e++)
    sel[e] = bias ? p[e] + bias[e] : p[e];
  if (flat)
    top_k(sel, n, k, flat);
  if (c->n_group > 1) {
    /* group score: the sum of the group's two best selection scores */
    int gs = n / c->n_group, ng = c->n_group;
    float *gscore = scratch + 2 * n;
    for (int g = 0; g < ng; g++) {
      const float *v = sel + g * gs;
      float b1 = -INFINITY, b2 = -INFINITY;
      for (int i = 0; i < gs; i++) {
        if (v[i] > b1) {
          b2 = b1;
          b1 = v[i];
        } else if (v[i] > b2) {
          b2 = v[i];
        }
      }
      gscore[g] = gs > 1 ? b1 + b2 : b1;
    }
    /* only the n_group_used best groups stay eligible */
    for (int g = 0; g < ng; g++) {
      /* rank of group g: how many groups beat it (ties: lower id wins) */
      int rank = 0;
      for (int h = 0; h < ng; h++)
        rank += gscore[h] > gscore[g] || (gscore[h] == gscore[g] && h < g);
      if (rank >= c->n_group_used)
        for (int i = 0; i < gs; i++)
          sel[g * gs + i] = -INFINITY;
    }
  }
  top_k(sel, n, k, ids);
  float sum = 0.0f;
  for (int j = 0; j < k; j++)
    sum += w[j] = p[ids[j]];
  float mul = c->scale;
  if (c->norm)
    mul /= sum > 6.103515625e-5f ? sum : 6.103515625e-5f;
  for (int j = 0; j < k; j++)
    w[j] *= mul;
}
