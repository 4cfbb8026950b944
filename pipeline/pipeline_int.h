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

#endif /* DQ_PIPELINE_INT_H */
