/*
 * needle.h - private to cli/: the needle-in-a-haystack trials of
 * `docqa bench needle` (cmd_bench_needle.c): the text cut into tokenized
 * sentences, one trial's prompt and spans, BM25 over the spans, and a
 * recall pass that reads every layer and head at once (for sweeps).
 *
 * A trial at length L and depth f (0..1):
 *   - a passkey (5 digits) and a vault colour drawn from a generator seeded
 *     by the caller; the haystack starts at a drawn sentence and takes
 *     sentences in order, wrapping around, until the prompt holds exactly L
 *     tokens (the last sentence is cut);
 *   - the needle " The secret passkey for the <colour> vault is <key>." goes
 *     before the first sentence at or after f of the haystack's tokens;
 *   - tokens: "Question: What is the secret passkey for the <colour>
 *     vault?" (with BOS; the pinned question), the sentences grouped into
 *     spans of at least span_tokens tokens (a tail under half of that joins
 *     the span before it), then " Question: ..." again, the probe, as
 *     dq_model_recall expects.
 */
#ifndef DQ_CLI_NEEDLE_H
#define DQ_CLI_NEEDLE_H

#include "engine.h"

#include <stddef.h>
#include <stdint.h>

/* The text with whitespace runs collapsed, cut after '.', '!' or '?'
 * followed by a space (and at 400 bytes, at a space), each sentence
 * tokenized with a leading space and no BOS. */
typedef struct needle_corpus {
  int n;          /* sentences */
  int *off;       /* n + 1 offsets into tok */
  int32_t *tok;   /* off[n] tokens */
} needle_corpus;

dq_status needle_corpus_build(dq_model *m, const char *text, size_t len,
                              needle_corpus *c, dq_error *err);
void needle_corpus_free(needle_corpus *c); /* accepts a zeroed corpus */

/* One trial's prompt and spans; free with needle_trial_free. */
typedef struct needle_trial {
  int key;              /* the passkey */
  const char *colour;   /* static string */
  char question[128];   /* "What is the secret passkey for the ... vault?" */
  int32_t *tok;         /* n tokens: question, spans, probe */
  int n;
  dq_span q, probe;
  dq_span *spans;       /* n_spans, in order, covering the haystack */
  int n_spans, needle_span;
} needle_trial;

/* Builds the trial of length L with the needle at depth f; `seed` draws the
 * passkey, colour and starting sentence. DQ_ERR_ARG when L leaves less than
 * two spans of haystack. */
dq_status needle_trial_make(dq_model *m, const needle_corpus *c, int L,
                            double f, int span_tokens, uint64_t seed,
                            needle_trial *t, dq_error *err);
void needle_trial_free(needle_trial *t); /* accepts a zeroed trial */

/* score[i] = Okapi BM25 of `query` over texts[i] (i < n): words are
 * lowercased runs of ASCII letters and digits, each distinct query word
 * counts once, k1 1.2, b 0.75, idf ln(1 + (n - df + 0.5) / (df + 0.5)). */
void needle_bm25(const char *query, char *const *texts, int n, float *score);

/* 1 + the number of other spans scoring at least score[t] (ties count
 * against span t). */
int needle_rank(const float *score, int n, int t);

/* The GSM pass of dq_model_recall (question pinned, GSM from the first
 * token, attention statistics of the probe), reading every layer and query
 * head: mass[(l * n_head + h) * n_spans + i] is the mass the probe's tokens
 * pay to span i at layer l, head h, divided by the probe's length, so that
 * averaging it over a layer range and heads gives dq_model_recall's
 * probe_score for that selection. With `probe` non-NULL, those n_probe
 * tokens replace the trial's probe (the calibration pass). mass is
 * caller-owned, n_layer * n_head * n_spans floats. */
dq_status needle_layer_mass(dq_model *m, const needle_trial *t,
                            const int32_t *probe, int n_probe,
                            const dq_gsm_opts *gsm, float *mass,
                            dq_error *err);

#endif /* DQ_CLI_NEEDLE_H */
