/*
 * graph_tune.c - the auto choice between graphs and op-by-op decode steps
 * (graph_tune.h).
 */
#include "graph_tune.h"

#include <stdlib.h>
#include <string.h>

void dq_graph_tune_init(dq_graph_tune *g) {
  memset(g, 0, sizeof *g);
  g->trial_left = 2 * GT_TRIAL;
  g->choice = -1;
}

/* In a trial the modes alternate, graphs first (its first step
 * instantiates; the median discounts that). */
int dq_graph_tune_next(const dq_graph_tune *g) {
  if (g->trial_left > 0)
    return g->trial_left % 2 == 0;
  return g->choice == 1;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  if (n <= 0)
    return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void dq_graph_tune_record(dq_graph_tune *g, int mode, double seconds) {
  mode = mode != 0;
  if (g->trial_left == 0) {
    if (--g->until_trial <= 0) { /* start the next trial */
      g->trial_left = 2 * GT_TRIAL;
      g->n[0] = g->n[1] = 0;
    }
    return;
  }
  if (g->n[mode] < GT_TRIAL)
    g->t[mode][g->n[mode]++] = seconds;
  if (--g->trial_left > 0)
    return;
  if (g->n[0] && g->n[1]) {
    g->med[0] = median(g->t[0], g->n[0]);
    g->med[1] = median(g->t[1], g->n[1]);
    g->choice = g->med[1] < g->med[0];
  } else if (g->choice < 0) {
    g->choice = mode; /* only one mode could run: keep it */
  }
  g->until_trial = GT_PERIOD;
}
