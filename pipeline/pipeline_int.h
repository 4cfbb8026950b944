/*
 * pipeline_int.h - internals shared by the pipeline's files: model opening
 * and small helpers. Not part of the public interface (pipeline.h).
 */
#ifndef DQ_PIPELINE_INT_H
#define DQ_PIPELINE_INT_H

#include "engine.h"
#include "index.h"
#include "ingest.h"
#include "pipeline.h"

/* Maps "cpu"/"cuda"/"auto" (NULL = auto) to the engine's enum. */
dq_status pl_backend_kind(const char *name, dq_backend_kind *out,
                          dq_error *err);
/* Opens a model file; a missing file is DQ_ERR_NOTFOUND with a message that
 * says how to fetch the defaults. `what` is "embedding" or "language". */
dq_status pl_model_open(const char *path, const char *what,
                        const char *backend, int n_threads,
                        const dq_logger *log, dq_model **out, dq_error *err);
/* The last path component (points into `path`). */
const char *pl_basename(const char *path);

/* Numbered sources in prompts (cite.c). */
/* Tokens of s as the model counts them (an over-estimate from its length
 * when tokenizing fails), for context budgets. */
int pl_count_tokens(dq_model *m, const char *s);
/* Sets c[n-1].cited = 1 for each [n] in `answer` ("[3]", "[1, 2]",
 * "[1][2]"); numbers outside 1..n are ignored, so only sources that were in
 * the prompt can be cited. */
void pl_cite_mark(const char *answer, dq_citation *c, size_t n);
/* When `answer` cites nothing, marks cited = 2 (inferred) on the one source
 * (hits[i] is c[i]; its text) holding most of the answer's key terms, if at
 * least two distinct terms match. */
void pl_cite_infer(const char *answer, const char *question,
                   const dq_hit *hits, dq_citation *c, size_t n);

/* The read-and-answer step shared by ask and chat. */
typedef struct pl_answer_in {
  const char *question;
  const char *summary; /* rolling summary of older turns, or NULL */
  const char *recent;  /* recent turns as "User: ...\nAssistant: ..." or NULL */
  int max_tokens;      /* 0 = 256 */
  dq_text_fn_pl on_text;
  void *user;
} pl_answer_in;

/* Builds the position-aware prompt from `hits` (best first; those that do
 * not fit the context are dropped, and hits[] is reordered so that hits[i]
 * is res->passages[i]), generates the answer and marks cited passages.
 * Fills res->answer, passages, token counts and prefill/generate times. */
dq_status pl_answer(dq_model *m, const pl_answer_in *in, dq_hit *hits,
                    size_t n_hits, dq_ask_result *res, dq_error *err);

/* The GSM coarse-recall step (rerank.c). */
typedef struct pl_recall_in {
  const char *question;
  const dq_config *config; /* GSM options; NULL = defaults */
  double layer_from, layer_to; /* layers read, as fractions of the depth */
  double weight;           /* recall's weight in the rank fusion */
  int max_pass_tokens;     /* 0 = the model's trained context */
  int unranked;            /* the input order is not a ranking (whole
                              documents): order by recall alone */
} pl_recall_in;

/* Scores hits[0..n) (in retrieval order) by GSM recall passes and reorders
 * them by the fused rank; sets each hit's retrieval_rank, recall_rank and
 * recall_score. n < 2: nothing to do (info->ran 0). */
dq_status pl_recall_rerank(dq_model *m, const pl_recall_in *in, dq_hit *hits,
                           size_t n, dq_recall_info *info, dq_error *err);

#endif /* DQ_PIPELINE_INT_H */
