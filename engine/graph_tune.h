/*
 * graph_tune.h - private to engine/: whether a decode step runs faster as
 * one CUDA graph or op by op, measured rather than assumed. A graph saves
 * the per-kernel launch cost, but it is recorded anew every step while the
 * device waits; op by op the device starts on the first kernel while the
 * host queues the rest. Which wins depends on the model's size and the
 * host (small models: graphs; large ones may be a wash), so in auto mode
 * forward.c alternates the two for a trial of GT_TRIAL steps each, keeps
 * the one with the lower median step time, and tries again every
 * GT_PERIOD steps (the balance moves as the context grows). Both give the
 * same bits, so switching never changes an answer.
 */
#ifndef DQ_ENGINE_GRAPH_TUNE_H
#define DQ_ENGINE_GRAPH_TUNE_H

enum { GT_TRIAL = 8, GT_PERIOD = 1024 };

typedef struct dq_graph_tune {
  int trial_left;  /* steps left in the running trial; 0: none running */
  int until_trial; /* steps until the next trial starts */
  int choice;      /* 1 graphs, 0 op by op; -1 until the first trial ends */
  double t[2][GT_TRIAL]; /* the trial's step times, [mode][i] */
  int n[2];
  double med[2];   /* the last trial's medians, seconds per step */
} dq_graph_tune;

void dq_graph_tune_init(dq_graph_tune *g);
/* The mode of the next step: 1 graph, 0 op by op. */
int dq_graph_tune_next(const dq_graph_tune *g);
/* A step ran in `mode` and took `seconds` (upload to sync). */
void dq_graph_tune_record(dq_graph_tune *g, int mode, double seconds);

#endif /* DQ_ENGINE_GRAPH_TUNE_H */
