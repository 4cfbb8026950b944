/*
 * cmd_embed.c - `docqa embed TEXT...`: embeddings of texts from the
 * embedding model (mean-pooled, L2-normalised). Text output: one line per
 * text of space-separated floats; --json: {"model","dim","embeddings"}.
 */
#include "cli.h"
#include "engine.h"

#include <stdlib.h>
#include <string.h>

static int run(dq_cli *cli, cli_option *opts) {
  char def[4096];
  const char *path = cli->model         ? cli->model
                     : cli->embed_model ? cli->embed_model
                                        : cli_default_embed_model(def, sizeof def);
  dq_model_opts mo;
  dq_model_opts_init(&mo);
  mo.backend = (dq_backend_kind)cli_backend_kind(cli);
  mo.n_threads = cli->threads;
  mo.log = &cli->log;
  dq_model *m = NULL;
  dq_error err = {0};
  if (dq_model_open(path, &mo, &m, &err))
    return cli_fail(cli, &err);
  dq_model_info info;
  dq_model_get_info(m, &info);
  if (!info.is_encoder) {
    cli_error(cli, "%s: architecture %s is not an embedding model (use "
              "--embed-model or --model with a bert GGUF)", path, info.arch);
    dq_model_free(m);
    return DQ_EXIT_ERROR;
  }
  int dim = dq_model_embed_dim(m);
  float *e = malloc(sizeof(float) * (size_t)dim * (size_t)cli->n_args);
  if (!e) {
    cli_error(cli, "out of memory");
    dq_model_free(m);
    return DQ_EXIT_ERROR;
  }
  dq_status s = dq_model_embed(m, (const char *const *)cli->args,
                               cli->n_args, e);
  if (s) {
    dq_error e2;
    dq_error_set(&e2, s, "%s", dq_model_errmsg(m));
    free(e);
    dq_model_free(m);
    return cli_fail(cli, &e2);
  }
  if (cli->json) {
    json_t *o = json_object(), *arr = json_array();
    json_object_set_new(o, "model", json_string(path));
    json_object_set_new(o, "dim", json_integer(dim));
    for (int i = 0; i < cli->n_args; i++) {
      json_t *v = json_array();
      for (int d = 0; d < dim; d++)
        json_array_append_new(v, json_real(e[(size_t)i * dim + d]));
      json_array_append_new(arr, v);
    }
    json_object_set_new(o, "embeddings", arr);
    cli_json_print(o);
  } else {
    for (int i = 0; i < cli->n_args; i++) {
      for (int d = 0; d < dim; d++)
        printf(d ? " %.6f" : "%.6f", e[(size_t)i * dim + d]);
      putchar('\n');
    }
  }
  free(e);
  dq_model_free(m);
  return DQ_EXIT_OK;
}

cli_command cli_cmd_embed = {
    .name = "embed",
    .usage = "docqa embed TEXT...",
    .summary = "print embeddings of texts from the embedding model",
    .help = "Embeds each TEXT with the embedding model (--model or\n"
            "--embed-model, default all-MiniLM-L6-v2): mean pooling, L2\n"
            "normalisation. Prints one line of floats per text, or with\n"
            "--json {\"model\", \"dim\", \"embeddings\": [[...]]}.\n",
    .opts = NULL,
    .min_args = 1,
    .max_args = -1,
    .run = run,
};
