/*
 * test_ee_units.c - the acceptance rule of early exit (dq_spec_verify) on
 * hand-made logits: greedy keeps the longest agreeing prefix and adds the
 * full model's next token; sampling is reproducible for a seed, and the
 * token it emits first is distributed as the full model's filtered
 * distribution p, whatever the draft's q, with acceptance rate
 * sum_x min(p(x), q(x)) (the textbook values, computed here from the
 * logits, not from our sampler). Also the sampler's mark/rewind of the
 * repetition penalty's recent tokens.
 */
#include "engine.h"
#include "speculate.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV 6

/* a row of NV logits whose argmax is `top` */
static void row_top(float *row, int top) {
  for (int i = 0; i < NV; i++)
    row[i] = (float)(i % 3) * 0.1f;
  row[top] = 5.0f;
}

static dq_sampler *new_sampler(float temp, int top_k, uint64_t seed, int nv) {
  dq_sampler_opts so;
  dq_sampler_opts_init(&so);
  so.temp = temp;
  so.top_k = top_k;
  so.top_p = 1.0f;
  so.min_p = 0.0f;
  so.seed = seed;
  dq_sampler *sm = NULL;
  CHECK(dq_sampler_new(&so, nv, &sm) == DQ_OK);
  return sm;
}

static void test_greedy(void) {
  dq_sampler *sm = new_sampler(0, 40, 0, NV);
  float rows[4 * NV], work[NV];
  int32_t next = -1;
  /* the full model agrees with all three drafts, then says 5 */
  int32_t d1[3] = {2, 3, 1};
  row_top(rows, 2);
  row_top(rows + NV, 3);
  row_top(rows + 2 * NV, 1);
  row_top(rows + 3 * NV, 5);
  CHECK_EQ_INT(dq_spec_verify(sm, rows, NV, NULL, d1, 3, work, &next), 3);
  CHECK_EQ_INT(next, 5);
  /* agrees with the first only: the second position's choice (4) follows */
  row_top(rows + NV, 4);
  CHECK_EQ_INT(dq_spec_verify(sm, rows, NV, NULL, d1, 3, work, &next), 1);
  CHECK_EQ_INT(next, 4);
  /* disagrees at once */
  row_top(rows, 0);
  CHECK_EQ_INT(dq_spec_verify(sm, rows, NV, NULL, d1, 3, work, &next), 0);
  CHECK_EQ_INT(next, 0);
  /* no draft: the verify pass is a plain decode step */
  CHECK_EQ_INT(dq_spec_verify(sm, rows + 3 * NV, NV, NULL, d1, 0, work, &next),
               0);
  CHECK_EQ_INT(next, 5);
  dq_sampler_free(sm);
}

/* p: softmax at temperature 1 of the top_k largest logits, by hand */
static void ref_probs(const float *l, int n, int top_k, double *p) {
  int keep[16] = {0};
  for (int k = 0; k < top_k; k++) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (!keep[i] && (best < 0 || l[i] > l[best]))
        best = i;
    keep[best] = 1;
  }
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += keep[i] ? exp(l[i]) : 0;
  for (int i = 0; i < n; i++)
    p[i] = keep[i] ? exp(l[i]) / sum : 0;
}

/* One draft token x ~ q, then the rule: the emitted token (x when accepted,
 * else the residual draw) must follow p. */
static void check_distribution(const float *full, const float *q, int nv,
                               int top_k, uint64_t seed) {
  dq_sampler *sm = new_sampler(1.0f, top_k, seed, nv);
  double p[16], count[16] = {0}, expect_acc = 0;
  ref_probs(full, nv, top_k, p);
  for (int i = 0; i < nv; i++)
    expect_acc += p[i] < q[i] ? p[i] : q[i];
  float rows[2 * 16], work[16];
  memcpy(rows, full, (size_t)nv * sizeof(float));
  memcpy(rows + nv, full, (size_t)nv * sizeof(float)); /* bonus row */
  const int trials = 200000;
  int accepted = 0, bad = 0;
  for (int t = 0; t < trials; t++) {
    int32_t x = dq_sampler_draw(sm, q), next = -1;
    int a = dq_spec_verify(sm, rows, nv, q, &x, 1, work, &next);
    int32_t first = a == 1 ? x : next;
    if (first >= 0 && first < nv)
      count[first]++;
    else
      bad++;
    accepted += a;
  }
  CHECK_EQ_INT(bad, 0);
  for (int i = 0; i < nv; i++)
    CHECK_NEAR(count[i] / trials, p[i], 0.005); /* ~5 standard errors */
  CHECK_NEAR((double)accepted / trials, expect_acc, 0.005);
  dq_sampler_free(sm);
}

static void test_distribution(void) {
  /* q unlike p: favours a token p rarely picks */
  float full[5] = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
  float q1[5] = {0.1f, 0.2f, 0.6f, 0.0f, 0.1f};
  check_distribution(full, q1, 5, 5, 7);
  /* top-k 3 in p: tokens 2 and 3 have p = 0, and q puts mass there */
  float q2[5] = {0.3f, 0.1f, 0.3f, 0.2f, 0.1f};
  check_distribution(full, q2, 5, 3, 11);
  /* q = p: everything accepted */
  double p[5];
  ref_probs(full, 5, 5, p);
  float q3[5];
  for (int i = 0; i < 5; i++)
    q3[i] = (float)p[i];
  check_distribution(full, q3, 5, 5, 13);
}

static void test_seeded(void) {
  float full[5] = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
  float q[5] = {0.1f, 0.2f, 0.6f, 0.0f, 0.1f};
  float rows[10], work[5];
  memcpy(rows, full, sizeof full);
  memcpy(rows + 5, full, sizeof full);
  int32_t out[2][64];
  for (int r = 0; r < 2; r++) {
    dq_sampler *sm = new_sampler(0.8f, 40, 42, 5);
    for (int t = 0; t < 32; t++) {
      int32_t x = dq_sampler_draw(sm, q), next = -1;
      int a = dq_spec_verify(sm, rows, 5, q, &x, 1, work, &next);
      out[r][2 * t] = a;
      out[r][2 * t + 1] = next;
    }
    dq_sampler_free(sm);
  }
  CHECK(memcmp(out[0], out[1], sizeof out[0]) == 0);
}

static void test_rewind(void) {
  dq_sampler_opts so;
  dq_sampler_opts_init(&so);
  so.temp = 1.0f;
  so.top_k = 0;
  so.top_p = 1.0f;
  so.min_p = 0.0f;
  so.repeat_penalty = 2.0f;
  so.repeat_last_n = 4;
  dq_sampler *sm = NULL;
  CHECK(dq_sampler_new(&so, 4, &sm) == DQ_OK);
  float l[4] = {1.0f, 1.0f, 1.0f, 1.0f}, before[4], drafted[4], after[4];
  dq_sampler_accept(sm, 0);
  dq_sampler_probs(sm, l, before);
  CHECK(before[0] < before[1]); /* token 0 is penalised */
  dq_sampler_mark(sm);
  for (int t = 1; t < 4; t++)
    dq_sampler_accept(sm, t); /* a draft records its tokens */
  dq_sampler_probs(sm, l, drafted);
  CHECK_NEAR(drafted[0], 0.25, 1e-6); /* all four penalised alike */
  dq_sampler_rewind(sm);
  dq_sampler_probs(sm, l, after);
  for (int i = 0; i < 4; i++)
    CHECK_NEAR(after[i], before[i], 0);
  dq_sampler_free(sm);
}

int main(void) {
  test_greedy();
  test_distribution();
  test_seeded();
  test_rewind();
  return TEST_EXIT();
}
