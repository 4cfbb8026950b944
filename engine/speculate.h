/*
 * speculate.h - private to engine/: self-speculative decoding with early
 * exit (speculate.c), used by dq_generate, and the sampler hooks it needs
 * (sample.c). Tests reach the acceptance rule through this header.
 *
 * One cycle starts from a token t0 the full model has chosen but that is
 * not in the cache yet. The draft runs t0 through the first n_exit layers
 * and the output head; while the draft's top probability is at least the
 * threshold it picks a draft token and drafts again from it (at most
 * max_draft tokens). The verify pass then finishes all of them through the
 * remaining layers as one batch, continuing from the draft's residual
 * rows (the lower layers' K/V rows are the draft's own, which are the full
 * model's: a layer's rows depend only on the layers below it). The
 * acceptance rule keeps the longest run of draft tokens the full model
 * agrees with, and the full model supplies one more token, so every cycle
 * yields at least one token and the output is the full model's:
 *   greedy    the full model's argmax at every position (identical tokens,
 *             up to the batched kernels' rounding between near-ties);
 *   sampling  the standard speculative rule: accept draft token x with
 *             probability min(1, p(x) / q(x)), else draw from the
 *             normalised max(0, p - q) and stop, where p and q are the
 *             sampler's filtered distributions (penalty, top-k, temperature,
 *             top-p, min-p) over the full and the draft logits.
 * The cache is rolled back to the accepted tokens with dq_seq_truncate
 * (rows are position-indexed, sliding-window layers included).
 *
 * Not here: the decision to run it (engine.c asks dq_spec_want), the
 * forward pass halves (forward.c: dq_seq_draft, dq_seq_finish).
 */
#ifndef DQ_ENGINE_SPECULATE_H
#define DQ_ENGINE_SPECULATE_H

#include "engine.h"

/* ---- sampler hooks (sample.c) ------------------------------------------ */

/* 1 when the sampler picks the argmax (temp <= 0). */
int dq_sampler_is_greedy(const dq_sampler *sm);
/* The distribution dq_sampler_sample would draw from for `logits` given the
 * recent tokens now recorded, as n_vocab probabilities summing to 1 (greedy:
 * 1 at the argmax). Records nothing, draws nothing. */
void dq_sampler_probs(dq_sampler *sm, const float *logits, float *probs);
/* A uniform number in [0, 1) from the sampler's PRNG. */
double dq_sampler_unit(dq_sampler *sm);
/* Draws an id with probability weights[i] / sum (weights >= 0, n_vocab of
 * them) from the sampler's PRNG; -1 when every weight is 0. Records
 * nothing. */
int32_t dq_sampler_draw(dq_sampler *sm, const float *weights);
/* Saves / restores the recent tokens of the repetition penalty (a draft
 * records its tokens to draft the next one; verify starts again from the
 * mark). The PRNG is not rewound. */
void dq_sampler_mark(dq_sampler *sm);
void dq_sampler_rewind(dq_sampler *sm);

/* ---- the acceptance rule ------------------------------------------------ */

/* rows: n_draft + 1 rows of n_vocab full-model logits, row i for the
 * position after the i-th token of [t0, draft[0], ..., draft[n_draft-1]].
 * q: NULL for a greedy sampler; otherwise n_draft rows of n_vocab draft
 * probabilities, row i the distribution draft[i] was drawn from. Returns how
 * many draft tokens are accepted (0..n_draft) and sets *next to the full
 * model's token after them. Records every accepted token and *next in the
 * sampler (as dq_sampler_sample does). work: n_vocab floats of scratch. */
int dq_spec_verify(dq_sampler *sm, const float *rows, int n_vocab,
                   const float *q, const int32_t *draft, int n_draft,
                   float *work, int32_t *next);

/* ---- decoding ----------------------------------------------------------- */

typedef struct dq_spec dq_spec;

/* Speculative decoding state for sequence s (a plain dq_seq_new sequence)
 * with options o (layer_fraction, threshold, max_draft, draft_vocab,
 * auto_off); the prompt's tokens seed the draft's vocabulary. Errors go
 * to the model's message. Free with dq_spec_free before the sequence. */
dq_status dq_spec_new(dq_seq *s, const dq_early_exit_opts *o,
                      const int32_t *prompt, int n_prompt, dq_spec **out);
void dq_spec_free(dq_spec *sp); /* accepts NULL */

/* 1 when the next decode step should be a speculative cycle, 0 for a plain
 * one (the probe that measures plain decoding, or switched off). */
int dq_spec_want(const dq_spec *sp);
/* Reports a plain decode step (one token) that took ms. */
void dq_spec_plain_step(dq_spec *sp, double ms);

/* One cycle from t0 (chosen, not yet in the cache; n_past = P): out gets the
 * accepted draft tokens and the full model's next token, *n_out of them
 * (1..max_out). Afterwards the cache holds t0 and the accepted tokens (P + 1
 * + *n_out - 1 positions) and the last out token is not cached, like t0
 * was. max_out >= 1; at least one position must be free. */
dq_status dq_spec_step(dq_spec *sp, dq_sampler *sm, int32_t t0, int max_out,
                       int32_t *out, int *n_out);

/* What ran so far. */
void dq_spec_stats(const dq_spec *sp, dq_early_exit_stats *st);

#endif /* DQ_ENGINE_SPECULATE_H */
