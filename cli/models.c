/*
 * models.c - where the default models live: the cache that
 * scripts/fetch-models.sh fills ($DOCQA_MODELS, else $XDG_CACHE_HOME/docqa/
 * models, else ~/.cache/docqa/models). The file names here and in the script
 * must agree.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_MODEL_FILE "smollm2-135m-instruct-q4_1.gguf"
#define DEFAULT_EMBED_FILE "all-minilm-l6-v2-f32.gguf"

const char *cli_models_dir(char *buf, size_t buf_bytes) {
  const char *m = getenv("DOCQA_MODELS");
  const char *x = getenv("XDG_CACHE_HOME");
  const char *h = getenv("HOME");
  if (m && m[0])
    snprintf(buf, buf_bytes, "%s", m);
  else if (x && x[0])
    snprintf(buf, buf_bytes, "%s/docqa/models", x);
  else
    snprintf(buf, buf_bytes, "%s/.cache/docqa/models", h ? h : ".");
  return buf;
}

const char *cli_default_model(char *buf, size_t buf_bytes) {
  char dir[4096];
  snprintf(buf, buf_bytes, "%s/%s", cli_models_dir(dir, sizeof dir),
           DEFAULT_MODEL_FILE);
  return buf;
}

const char *cli_default_embed_model(char *buf, size_t buf_bytes) {
  char dir[4096];
  snprintf(buf, buf_bytes, "%s/%s", cli_models_dir(dir, sizeof dir),
           DEFAULT_EMBED_FILE);
  return buf;
}

const char *cli_model_arg(const char *arg, char *buf, size_t buf_bytes) {
  if (!arg || strchr(arg, '/') || access(arg, F_OK) == 0)
    return arg;
  char dir[4096];
  int n = snprintf(buf, buf_bytes, "%s/%s", cli_models_dir(dir, sizeof dir),
                   arg);
  if (n < 0 || (size_t)n >= buf_bytes || access(buf, F_OK) != 0)
    return arg; /* not there either: the open names the file as given */
  return buf;
}
