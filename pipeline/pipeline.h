/*
 * pipeline.h - the public interface of the pipeline layer: configuration
 * (docqa.yaml), and the jobs that wire ingest, index and engine together
 * (ingest a folder, search, ask, xref, chat).
 *
 * The pipeline owns no storage format and no model math; it decides what
 * flows where. Only cli/ sits above it.
 */
#ifndef DQ_PIPELINE_H
#define DQ_PIPELINE_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Configuration (config.c) ------------------------------------------ */

typedef enum {
  DQ_GSM_FIXED = 0,   /* sinks + window only */
  DQ_GSM_DYNAMIC = 1, /* anchors and memory chosen by attention */
  DQ_GSM_HYBRID = 2   /* fixed in lower layers, dynamic in upper layers */
} dq_gsm_mode;

typedef enum {
  DQ_KV_SCORE = 0,      /* evict lowest accumulated attention */
  DQ_KV_TIME_DECAY = 1, /* merge oldest neighbours (gated state update) */
  DQ_KV_SIMILARITY = 2  /* merge most similar neighbouring keys */
} dq_kv_strategy;

/* Every key of docqa.yaml (DESIGN.md "Config"), with its default. Sections
 * and keys mirror the file one to one so messages can name them. */
typedef struct dq_config {
  struct {
    uint32_t window_size;        /* 384 */
    uint32_t num_global_anchors; /* 6 */
    uint32_t n_sink;             /* 4 */
    dq_gsm_mode mode;            /* hybrid */
    int anchor_selection_dynamic; /* 1 = dynamic, 0 = static */
    uint32_t min_tokens;         /* 1024 */
  } sparse_attention;
  struct {
    double keep_ratio;            /* 0.75, in (0, 1] */
    dq_kv_strategy strategy;      /* score */
    uint32_t memory_slots;        /* 4096 */
    double recompute_threshold;   /* 0.3, in [0, 1] */
  } kv_compress;
  struct {
    uint32_t encoder_batch_size;  /* 8 */
    uint32_t decoder_batch_size;  /* 1 */
    double encoder_window_scale;  /* 1.5 */
    double decoder_window_scale;  /* 0.8 */
  } encoder_decoder;
  struct {
    uint32_t chunk_size; /* 2048 */
  } prefill;
  struct {
    uint32_t top_k;      /* 0 = from the model */
    uint32_t n_group;    /* 0 = from the model */
    uint32_t topk_group; /* 0 = from the model */
  } moe;
  struct {
    int enabled;           /* false */
    double layer_fraction; /* 0.67, in (0, 1) */
    double threshold;      /* 0.9, in (0, 1] */
  } early_exit;
} dq_config;

/* Fills `c` with the defaults above. */
void dq_config_defaults(dq_config *c);

/* Reads a docqa.yaml file over the values already in `c` (call
 * dq_config_defaults first). Unknown sections or keys, wrong types and
 * out-of-range values are errors naming the file, line and key, e.g.
 * "docqa.yaml:3: sparse_attention.window_size: must be >= 1". On error `c`
 * is unchanged. */
dq_status dq_config_load(dq_config *c, const char *path, dq_error *err);

/* Sets one key from text, as a command-line override would:
 * dq_config_set(c, "kv_compress.strategy", "similarity", err). Same checks
 * and messages as the file. */
dq_status dq_config_set(dq_config *c, const char *key, const char *value,
                        dq_error *err);

/* Names for enums, as written in the file. Static strings. */
const char *dq_gsm_mode_name(dq_gsm_mode m);
const char *dq_kv_strategy_name(dq_kv_strategy s);

#ifdef __cplusplus
}
#endif
#endif /* DQ_PIPELINE_H */
