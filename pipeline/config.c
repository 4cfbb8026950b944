/*
 * config.c - docqa.yaml: defaults, loading with libyaml, validation, and
 * single-key overrides from the command line.
 *
 * The file is a mapping of sections to mappings of keys to scalars (block or
 * flow style), e.g.
 *   sparse_attention: {window_size: 384, mode: hybrid}
 *   kv_compress:
 *     strategy: similarity
 * One table (`keys`) lists every key with its type, place in dq_config and
 * allowed range; loading, overriding and messages all go through it, so a new
 * key is one line. Values are applied to a copy and committed only when the
 * whole file is valid.
 */
#include "pipeline.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Files larger than this are not configuration; refuse before parsing. */
#define CONFIG_MAX_BYTES (1u << 20)

typedef enum { T_U32, T_F64, T_BOOL, T_ENUM } key_type;

typedef struct key_def {
  const char *section;
  const char *key;
  key_type type;
  size_t offset;
  double min, max;           /* inclusive range for numbers */
  int min_open, max_open;    /* 1 = exclusive bound */
  const char *const *names;  /* T_ENUM: NULL-terminated value names */
} key_def;

static const char *const mode_names[] = {"fixed", "dynamic", "hybrid", NULL};
static const char *const strategy_names[] = {"score", "time_decay",
                                             "similarity", NULL};
static const char *const anchor_names[] = {"static", "dynamic", NULL};
/* indices are the engine's DQ_GSM_POS_* values */
static const char *const position_names[] = {"original", "cache", "auto",
                                             NULL};
/* indices are the engine's dq_kv_type values */
static const char *const cache_type_names[] = {"f16", "q8_0", "f32", NULL};

#define OFF(f) offsetof(dq_config, f)
/* clang-format off: one key a line */
static const key_def keys[] = {
    {"sparse_attention", "window_size", T_U32, OFF(sparse_attention.window_size), 1, 1 << 24, 0, 0, NULL},
    {"sparse_attention", "num_global_anchors", T_U32, OFF(sparse_attention.num_global_anchors), 0, 1 << 20, 0, 0, NULL},
    {"sparse_attention", "n_sink", T_U32, OFF(sparse_attention.n_sink), 0, 1 << 20, 0, 0, NULL},
    {"sparse_attention", "mode", T_ENUM, OFF(sparse_attention.mode), 0, 0, 0, 0, mode_names},
    {"sparse_attention", "anchor_selection", T_ENUM, OFF(sparse_attention.anchor_selection_dynamic), 0, 0, 0, 0, anchor_names},
    {"sparse_attention", "min_tokens", T_U32, OFF(sparse_attention.min_tokens), 0, 1u << 30, 0, 0, NULL},
    {"sparse_attention", "positions", T_ENUM, OFF(sparse_attention.cache_positions), 0, 0, 0, 0, position_names},
    {"kv_compress", "keep_ratio", T_F64, OFF(kv_compress.keep_ratio), 0, 1, 1, 0, NULL},
    {"kv_compress", "strategy", T_ENUM, OFF(kv_compress.strategy), 0, 0, 0, 0, strategy_names},
    {"kv_compress", "memory_slots", T_U32, OFF(kv_compress.memory_slots), 1, 1 << 24, 0, 0, NULL},
    {"kv_compress", "cache_type", T_ENUM, OFF(kv_compress.cache_type), 0, 0, 0, 0, cache_type_names},
    {"kv_compress", "recompute_threshold", T_F64, OFF(kv_compress.recompute_threshold), 0, 1, 0, 0, NULL},
    {"encoder_decoder", "encoder_batch_size", T_U32, OFF(encoder_decoder.encoder_batch_size), 1, 4096, 0, 0, NULL},
    {"encoder_decoder", "decoder_batch_size", T_U32, OFF(encoder_decoder.decoder_batch_size), 1, 4096, 0, 0, NULL},
    {"encoder_decoder", "encoder_window_scale", T_F64, OFF(encoder_decoder.encoder_window_scale), 0, 64, 1, 0, NULL},
    {"encoder_decoder", "decoder_window_scale", T_F64, OFF(encoder_decoder.decoder_window_scale), 0, 64, 1, 0, NULL},
    {"prefill", "chunk_size", T_U32, OFF(prefill.chunk_size), 1, 1 << 20, 0, 0, NULL},
    {"moe", "top_k", T_U32, OFF(moe.top_k), 0, 4096, 0, 0, NULL},
    {"moe", "n_group", T_U32, OFF(moe.n_group), 0, 4096, 0, 0, NULL},
    {"moe", "topk_group", T_U32, OFF(moe.topk_group), 0, 4096, 0, 0, NULL},
    {"early_exit", "enabled", T_BOOL, OFF(early_exit.enabled), 0, 0, 0, 0, NULL},
    {"early_exit", "layer_fraction", T_F64, OFF(early_exit.layer_fraction), 0, 1, 1, 1, NULL},
    {"early_exit", "threshold", T_F64, OFF(early_exit.threshold), 0, 1, 1, 0, NULL},
    {"search", "lexical_weight", T_F64, OFF(search.lexical_weight), 0, 1, 1, 0, NULL},
    {"ingest", "ocr", T_BOOL, OFF(ingest.ocr), 0, 0, 0, 0, NULL},
    {"ingest", "max_file_mb", T_U32, OFF(ingest.max_file_mb), 0, 1 << 20, 0, 0, NULL},
};
/* clang-format on */
#undef OFF
#define N_KEYS (sizeof keys / sizeof keys[0])

/* apply() stores enum values through an int pointer. */
_Static_assert(sizeof(dq_gsm_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(dq_kv_strategy) == sizeof(int), "enum size");

void dq_config_defaults(dq_config *c) {
  memset(c, 0, sizeof *c);
  c->sparse_attention.window_size = 384;
  c->sparse_attention.num_global_anchors = 6;
  c->sparse_attention.n_sink = 4;
  c->sparse_attention.mode = DQ_GSM_HYBRID;
  c->sparse_attention.anchor_selection_dynamic = 1;
  c->sparse_attention.min_tokens = 1024;
  c->sparse_attention.cache_positions = DQ_GSM_POS_AUTO;
  c->kv_compress.keep_ratio = 0.75;
  c->kv_compress.strategy = DQ_KV_SCORE;
  c->kv_compress.memory_slots = 4096;
  c->kv_compress.recompute_threshold = 0.3;
  c->kv_compress.cache_type = DQ_KV_Q8_0;
  c->encoder_decoder.encoder_batch_size = 8;
  c->encoder_decoder.decoder_batch_size = 1;
  c->encoder_decoder.encoder_window_scale = 1.5;
  c->encoder_decoder.decoder_window_scale = 0.8;
  c->prefill.chunk_size = 2048;
  c->early_exit.enabled = 0;
  c->early_exit.layer_fraction = 0.67;
  c->early_exit.threshold = 0.9;
  c->search.lexical_weight = DQ_LEXICAL_WEIGHT;
  c->ingest.ocr = 1;
}

const char *dq_gsm_mode_name(dq_gsm_mode m) {
  return (unsigned)m < 3 ? mode_names[m] : "unknown";
}

const char *dq_kv_strategy_name(dq_kv_strategy s) {
  return (unsigned)s < 3 ? strategy_names[s] : "unknown";
}

const char *dq_kv_cache_type_name(dq_kv_type t) {
  return (unsigned)t < 3 ? cache_type_names[t] : "unknown";
}

static const key_def *find_key(const char *section, const char *key) {
  for (size_t i = 0; i < N_KEYS; i++)
    if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
      return &keys[i];
  return NULL;
}

static int known_section(const char *section) {
  for (size_t i = 0; i < N_KEYS; i++)
    if (strcmp(keys[i].section, section) == 0)
      return 1;
  return 0;
}

/* Formats the "where" part of messages: "file:line: section.key" or, for
 * command-line overrides (line 0), just "section.key". */
static void where(char *buf, size_t n, const char *file, size_t line,
                  const key_def *k) {
  if (file && line)
    snprintf(buf, n, "%s:%zu: %s.%s", file, line, k->section, k->key);
  else
    snprintf(buf, n, "%s.%s", k->section, k->key);
}

/* Parses `text` for key `k` and stores it into `c`. */
static dq_status apply(dq_config *c, const key_def *k, const char *text,
                       const char *file, size_t line, dq_error *err) {
  char w[512];
  where(w, sizeof w, file, line, k);
  char *p = (char *)c + k->offset;
  if (k->type == T_ENUM) {
    for (int i = 0; k->names[i]; i++)
      if (strcmp(text, k->names[i]) == 0) {
        *(int *)p = i; /* enum fields are int-sized */
        return DQ_OK;
      }
    char allowed[256] = "";
    for (int i = 0; k->names[i]; i++) {
      strncat(allowed, i ? ", " : "", sizeof allowed - strlen(allowed) - 1);
      strncat(allowed, k->names[i], sizeof allowed - strlen(allowed) - 1);
    }
    return dq_error_set(err, DQ_ERR_CONFIG, "%s: '%s' is not one of: %s", w,
                        text, allowed);
  }
  if (k->type == T_BOOL) {
    if (!strcmp(text, "true") || !strcmp(text, "yes") || !strcmp(text, "on") ||
        !strcmp(text, "1")) {
      *(int *)p = 1;
      return DQ_OK;
    }
    if (!strcmp(text, "false") || !strcmp(text, "no") ||
        !strcmp(text, "off") || !strcmp(text, "0")) {
      *(int *)p = 0;
      return DQ_OK;
    }
    return dq_error_set(err, DQ_ERR_CONFIG,
                        "%s: '%s' is not a boolean (true or false)", w, text);
  }
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end != '\0' || !isfinite(v))
    return dq_error_set(err, DQ_ERR_CONFIG, "%s: '%s' is not a number", w,
                        text);
  if (k->type == T_U32 && v != floor(v))
    return dq_error_set(err, DQ_ERR_CONFIG, "%s: '%s' must be a whole number",
                        w, text);
  int low_bad = k->min_open ? !(v > k->min) : !(v >= k->min);
  int high_bad = k->max_open ? !(v < k->max) : !(v <= k->max);
  if (low_bad || high_bad)
    return dq_error_set(err, DQ_ERR_CONFIG, "%s: %s is out of range %c%g, %g%c",
                        w, text, k->min_open ? '(' : '[', k->min, k->max,
                        k->max_open ? ')' : ']');
  if (k->type == T_U32)
    *(uint32_t *)p = (uint32_t)v;
  else
    *(double *)p = v;
  return DQ_OK;
}

dq_status dq_config_set(dq_config *c, const char *key, const char *value,
                        dq_error *err) {
  const char *dot = strchr(key, '.');
  char section[64];
  if (!dot || (size_t)(dot - key) >= sizeof section)
    return dq_error_set(err, DQ_ERR_CONFIG,
                        "config key '%s' must be section.key", key);
  memcpy(section, key, (size_t)(dot - key));
  section[dot - key] = '\0';
  const key_def *k = find_key(section, dot + 1);
  if (!k)
    return dq_error_set(err, DQ_ERR_CONFIG, "unknown config key '%s'", key);
  dq_config tmp = *c;
  dq_status s = apply(&tmp, k, value, NULL, 0, err);
  if (s == DQ_OK)
    *c = tmp;
  return s;
}

static const char *scalar(yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
                                          : NULL;
}

dq_status dq_config_load(dq_config *c, const char *path, dq_error *err) {
  char *buf = NULL;
  size_t n = 0;
  dq_status s = dq_read_file(path, CONFIG_MAX_BYTES, &buf, &n, err);
  if (s != DQ_OK)
    return s;
  yaml_parser_t parser;
  yaml_document_t doc;
  int have_doc = 0;
  dq_config tmp = *c;
  if (!yaml_parser_initialize(&parser)) {
    free(buf);
    return dq_error_set(err, DQ_ERR_NOMEM, "%s: cannot start YAML parser",
                        path);
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)buf, n);
  if (!yaml_parser_load(&parser, &doc)) {
    s = dq_error_set(err, DQ_ERR_CONFIG, "%s:%zu:%zu: invalid YAML: %s", path,
                     parser.problem_mark.line + 1,
                     parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "parse error");
    goto done;
  }
  have_doc = 1;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root) /* empty file: all defaults */
    goto done;
  if (root->type != YAML_MAPPING_NODE) {
    s = dq_error_set(err, DQ_ERR_CONFIG,
                     "%s:%zu: the top level must be a mapping of sections",
                     path, root->start_mark.line + 1);
    goto done;
  }
  for (yaml_node_pair_t *sp = root->data.mapping.pairs.start;
       sp < root->data.mapping.pairs.top; sp++) {
    yaml_node_t *sk = yaml_document_get_node(&doc, sp->key);
    yaml_node_t *sv = yaml_document_get_node(&doc, sp->value);
    const char *section = scalar(sk);
    size_t line = sk ? sk->start_mark.line + 1 : 0;
    if (!section || !known_section(section)) {
      s = dq_error_set(err, DQ_ERR_CONFIG,
                       "%s:%zu: unknown section '%s' (known: sparse_attention, "
                       "kv_compress, encoder_decoder, prefill, moe, "
                       "early_exit, search)",
                       path, line, section ? section : "?");
      goto done;
    }
    if (!sv || sv->type != YAML_MAPPING_NODE) {
      s = dq_error_set(err, DQ_ERR_CONFIG,
                       "%s:%zu: section '%s' must be a mapping of keys", path,
                       line, section);
      goto done;
    }
    for (yaml_node_pair_t *kp = sv->data.mapping.pairs.start;
         kp < sv->data.mapping.pairs.top; kp++) {
      yaml_node_t *kk = yaml_document_get_node(&doc, kp->key);
      yaml_node_t *kv = yaml_document_get_node(&doc, kp->value);
      const char *key = scalar(kk);
      const char *val = scalar(kv);
      size_t kline = kk ? kk->start_mark.line + 1 : line;
      const key_def *k = key ? find_key(section, key) : NULL;
      if (!k) {
        s = dq_error_set(err, DQ_ERR_CONFIG, "%s:%zu: unknown key '%s.%s'",
                         path, kline, section, key ? key : "?");
        goto done;
      }
      if (!val) {
        s = dq_error_set(err, DQ_ERR_CONFIG,
                         "%s:%zu: %s.%s: value must be a scalar", path, kline,
                         section, key);
        goto done;
      }
      s = apply(&tmp, k, val, path, kline, err);
      if (s != DQ_OK)
        goto done;
    }
  }
done:
  if (have_doc)
    yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  free(buf);
  if (s == DQ_OK)
    *c = tmp;
  return s;
}
