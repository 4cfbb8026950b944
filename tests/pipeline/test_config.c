/* test_config.c - docqa.yaml loading: defaults from DESIGN.md, block and
 * flow style, overrides, and errors that name the file, line and key while
 * leaving the configuration unchanged. */
#include "pipeline.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char path[] = "/tmp/dq_test_config_XXXXXX";

static void write_cfg(const char *text) {
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

int main(void) {
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  dq_config c;
  dq_error e;
  dq_config_defaults(&c);
  /* Defaults as listed in DESIGN.md. */
  CHECK_EQ_INT(c.sparse_attention.window_size, 384);
  CHECK_EQ_INT(c.sparse_attention.num_global_anchors, 6);
  CHECK_EQ_INT(c.sparse_attention.n_sink, 4);
  CHECK_EQ_INT(c.sparse_attention.mode, DQ_GSM_HYBRID);
  CHECK_EQ_INT(c.sparse_attention.min_tokens, 1024);
  CHECK_EQ_INT(c.sparse_attention.cache_positions, DQ_GSM_POS_AUTO);
  CHECK_NEAR(c.kv_compress.keep_ratio, 0.75, 0);
  CHECK_EQ_INT(c.kv_compress.strategy, DQ_KV_SCORE);
  CHECK_EQ_INT(c.kv_compress.memory_slots, 4096);
  CHECK_EQ_INT(c.kv_compress.cache_type, DQ_KV_Q8_0); /* (not in DESIGN.md) */
  CHECK_NEAR(c.encoder_decoder.encoder_window_scale, 1.5, 0);
  CHECK_EQ_INT(c.prefill.chunk_size, 2048);
  CHECK_EQ_INT(c.early_exit.enabled, 0);
  CHECK_NEAR(c.early_exit.layer_fraction, 0.67, 0);
  CHECK_NEAR(c.search.lexical_weight, DQ_LEXICAL_WEIGHT, 0);
  CHECK_EQ_INT(c.ingest.ocr, 1);

  /* The DESIGN.md example in flow style, changed values, plus block style. */
  write_cfg("sparse_attention: {window_size: 512, num_global_anchors: 8, "
            "n_sink: 2,\n                   mode: dynamic, "
            "anchor_selection: static, min_tokens: 0, positions: cache}\n"
            "kv_compress:\n  strategy: similarity\n  keep_ratio: 0.5\n"
            "  cache_type: f16\n"
            "early_exit: {enabled: true}\n"
            "search: {lexical_weight: 1}\n"
            "ingest: {ocr: false}\n");
  CHECK_OK(dq_config_load(&c, path, &e), dq_error_msg(&e));
  CHECK_EQ_INT(c.sparse_attention.window_size, 512);
  CHECK_EQ_INT(c.sparse_attention.n_sink, 2);
  CHECK_EQ_INT(c.sparse_attention.mode, DQ_GSM_DYNAMIC);
  CHECK_EQ_INT(c.sparse_attention.anchor_selection_dynamic, 0);
  CHECK_EQ_INT(c.sparse_attention.min_tokens, 0);
  CHECK_EQ_INT(c.sparse_attention.cache_positions, 1);
  CHECK_EQ_INT(c.kv_compress.strategy, DQ_KV_SIMILARITY);
  CHECK_NEAR(c.kv_compress.keep_ratio, 0.5, 0);
  CHECK_EQ_INT(c.early_exit.enabled, 1);
  CHECK_NEAR(c.search.lexical_weight, 1, 0);
  CHECK_EQ_INT(c.ingest.ocr, 0);
  CHECK_EQ_INT(c.kv_compress.memory_slots, 4096); /* untouched */
  /* ...and reach the engine's GSM options */
  dq_gsm_opts g;
  dq_config_gsm_opts(&c, &g);
  CHECK_EQ_INT(g.window_size, 512);
  CHECK_EQ_INT(g.num_global_anchors, 8);
  CHECK_EQ_INT(g.n_sink, 2);
  CHECK_EQ_INT(g.mode, DQ_GSM_LAYOUT_DYNAMIC);
  CHECK_EQ_INT(g.static_anchors, 1);
  CHECK_EQ_INT(g.min_tokens, 0);
  CHECK_EQ_INT(g.cache_positions, 1);
  CHECK_EQ_INT(g.strategy, DQ_GSM_MERGE_SIMILARITY);
  CHECK_NEAR(g.keep_ratio, 0.5, 0);
  CHECK_EQ_INT(g.memory_slots, 4096);
  CHECK_EQ_INT(g.cache_type, DQ_KV_F16);
  CHECK_EQ_INT(g.chunk_size, 2048);
  CHECK(g.enabled);

  /* An empty file changes nothing. */
  dq_config before = c;
  write_cfg("");
  CHECK_OK(dq_config_load(&c, path, &e), dq_error_msg(&e));
  CHECK(memcmp(&before, &c, sizeof c) == 0);

  /* Errors: message names file, line and key; config unchanged. */
  struct {
    const char *text, *want;
  } bad[] = {
      {"sparse_attention:\n  window_size: 0\n", ":2: sparse_attention.window_size: 0 is out of range"},
      {"sparse_attention:\n  windw_size: 10\n", ":2: unknown key 'sparse_attention.windw_size'"},
      {"gsm: {a: 1}\n", ":1: unknown section 'gsm'"},
      {"kv_compress: {strategy: lru}\n", "kv_compress.strategy: 'lru' is not one of: score, time_decay, similarity"},
      {"kv_compress: {cache_type: q4_0}\n", "kv_compress.cache_type: 'q4_0' is not one of: f16, q8_0, f32"},
      {"kv_compress: {keep_ratio: 0}\n", "kv_compress.keep_ratio: 0 is out of range (0, 1]"},
      {"kv_compress: {keep_ratio: 1.5}\n", "kv_compress.keep_ratio: 1.5 is out of range"},
      {"prefill: {chunk_size: 12.5}\n", "prefill.chunk_size: '12.5' must be a whole number"},
      {"prefill: {chunk_size: lots}\n", "prefill.chunk_size: 'lots' is not a number"},
      {"early_exit: {enabled: maybe}\n", "early_exit.enabled: 'maybe' is not a boolean"},
      {"search: {lexical_weight: 0}\n", "search.lexical_weight: 0 is out of range (0, 1]"},
      {"search: {lexical_weight: 1.01}\n", "search.lexical_weight: 1.01 is out of range"},
      {"prefill: 5\n", "section 'prefill' must be a mapping"},
      {"prefill: {chunk_size: [1, 2]}\n", "prefill.chunk_size: value must be a scalar"},
      {"- a\n- b\n", "top level must be a mapping"},
      {"prefill: {chunk_size: 1\n", "invalid YAML"},
      /* The first key is valid: nothing may be applied when a later one fails. */
      {"prefill: {chunk_size: 64}\nmoe: {top_k: -1}\n", "moe.top_k: -1 is out of range"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_cfg(bad[i].text);
    dq_error_clear(&e);
    dq_status s = dq_config_load(&c, path, &e);
    CHECK_EQ_INT(s, DQ_ERR_CONFIG);
    CHECK_MSG(strstr(e.msg, bad[i].want) != NULL, "case %zu: got '%s'", i, e.msg);
    CHECK_MSG(strstr(e.msg, path) != NULL, "case %zu: no path in '%s'", i, e.msg);
    CHECK(memcmp(&before, &c, sizeof c) == 0);
  }
  CHECK_EQ_INT(dq_config_load(&c, "/nonexistent/docqa.yaml", &e), DQ_ERR_NOTFOUND);
  CHECK(strstr(e.msg, "/nonexistent/docqa.yaml") != NULL);

  /* Command-line style overrides. */
  CHECK_OK(dq_config_set(&c, "prefill.chunk_size", "4096", &e), e.msg);
  CHECK_EQ_INT(c.prefill.chunk_size, 4096);
  CHECK_EQ_INT(dq_config_set(&c, "prefill.chunk", "1", &e), DQ_ERR_CONFIG);
  CHECK(strstr(e.msg, "unknown config key 'prefill.chunk'") != NULL);
  CHECK_EQ_INT(dq_config_set(&c, "nodot", "1", &e), DQ_ERR_CONFIG);
  CHECK_EQ_INT(dq_config_set(&c, "kv_compress.memory_slots", "0", &e), DQ_ERR_CONFIG);
  CHECK_EQ_INT(c.kv_compress.memory_slots, 4096);
  CHECK_EQ_STR(dq_gsm_mode_name(DQ_GSM_FIXED), "fixed");
  CHECK_EQ_STR(dq_kv_strategy_name(DQ_KV_TIME_DECAY), "time_decay");
  unlink(path);
  return TEST_EXIT();
}
