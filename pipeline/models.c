/*
 * models.c - opening engine models the way every pipeline job does: backend
 * from its command-line name, thread count, the caller's logger, and an error
 * that tells the user how to get a missing default model.
 */
#include "pipeline_int.h"

#include <string.h>
#include <sys/stat.h>

dq_status pl_backend_kind(const char *name, dq_backend_kind *out,
                          dq_error *err) {
  if (!name || !strcmp(name, "auto"))
    *out = DQ_BACKEND_AUTO;
  else if (!strcmp(name, "cpu"))
    *out = DQ_BACKEND_CPU;
  else if (!strcmp(name, "cuda"))
    *out = DQ_BACKEND_CUDA;
  else
    return dq_error_set(err, DQ_ERR_ARG,
                        "backend must be cpu, cuda or auto, not '%s'", name);
  return DQ_OK;
}

static dq_status open_model(const char *path, const char *what,
                            const char *backend, int n_threads, int q8,
                            const dq_logger *log, dq_model **out,
                            dq_error *err) {
  *out = NULL;
  struct stat st;
  if (!path || stat(path, &st) != 0)
    return dq_error_set(err, DQ_ERR_NOTFOUND,
                        "%s model not found: %s (run scripts/fetch-models.sh "
                        "to fetch the default models, or pass a GGUF file)",
                        what, path ? path : "(none)");
  dq_model_opts mo;
  dq_model_opts_init(&mo);
  dq_status s = pl_backend_kind(backend, &mo.backend, err);
  if (s != DQ_OK)
    return s;
  mo.n_threads = n_threads;
  mo.log = log;
  mo.q8_at_load = q8;
  return dq_model_open(path, &mo, out, err);
}

dq_status pl_model_open(const char *path, const char *what, const char *backend,
                        int n_threads, const dq_logger *log, dq_model **out,
                        dq_error *err) {
  return open_model(path, what, backend, n_threads, 0, log, out, err);
}

dq_status pl_embedder_open_bulk(const char *path, const char *backend,
                                int n_threads, const dq_logger *log,
                                dq_model **out, dq_error *err) {
  return open_model(path, "embedding", backend, n_threads, 1, log, out, err);
}

dq_status pl_decoder_open(const char *path, const char *what,
                          const char *needed_by, const char *backend,
                          int n_threads, const dq_logger *log, dq_model **out,
                          dq_error *err) {
  dq_status s = pl_model_open(path, what, backend, n_threads, log, out, err);
  if (s != DQ_OK)
    return s;
  dq_model_info mi;
  dq_model_get_info(*out, &mi);
  if (!mi.is_encoder)
    return DQ_OK;
  s = dq_error_set(err, DQ_ERR_ARG,
                   "%s is an embedding model (%s); %s needs a decoder model",
                   path, mi.arch, needed_by);
  dq_model_free(*out); /* after the message: mi points into the model */
  *out = NULL;
  return s;
}

const char *pl_basename(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}
