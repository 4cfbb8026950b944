/*
 * fuzz_config.c - libFuzzer harness for docqa.yaml loading
 * (pipeline/config.c over libyaml): the input is the file. Checks: a load
 * succeeds or fails with DQ_ERR_CONFIG whose message names the file; a
 * failed load leaves the configuration byte for byte as it was; a
 * successful one leaves every value in its documented range. Then the
 * first line's "key: value" (if any) goes through dq_config_set, as
 * --set would, with the same rules. Crashes, sanitizer reports, leaks and
 * broken invariants are findings.
 */
#include "pipeline.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_path[64];

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "invariant broken: %s\n", what);
    abort();
  }
}

static void cleanup(void) { unlink(g_path); }

static void check_ranges(const dq_config *c) {
  check(c->sparse_attention.window_size >= 1, "window_size >= 1");
  check(c->sparse_attention.mode <= DQ_GSM_HYBRID, "mode is a mode");
  check(c->kv_compress.keep_ratio > 0 && c->kv_compress.keep_ratio <= 1,
        "keep_ratio in (0, 1]");
  check(c->kv_compress.memory_slots >= 1, "memory_slots >= 1");
  check(c->kv_compress.recompute_threshold >= 0 &&
            c->kv_compress.recompute_threshold <= 1,
        "recompute_threshold in [0, 1]");
  check(c->kv_compress.cache_type >= 0 && c->kv_compress.cache_type <= 2,
        "cache_type is a type");
  check(c->encoder_decoder.encoder_batch_size >= 1 &&
            c->encoder_decoder.encoder_batch_size <= 4096,
        "encoder_batch_size in [1, 4096]");
  check(c->encoder_decoder.encoder_window_scale > 0 &&
            isfinite(c->encoder_decoder.encoder_window_scale),
        "encoder_window_scale > 0");
  check(c->prefill.chunk_size >= 1, "chunk_size >= 1");
  check(c->early_exit.enabled == 0 || c->early_exit.enabled == 1,
        "enabled is a bool");
  check(c->early_exit.layer_fraction > 0 && c->early_exit.layer_fraction < 1,
        "layer_fraction in (0, 1)");
  check(c->early_exit.threshold > 0 && c->early_exit.threshold <= 1,
        "threshold in (0, 1]");
  check(c->search.lexical_weight > 0 && c->search.lexical_weight <= 1,
        "lexical_weight in (0, 1]");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_path[0]) {
    snprintf(g_path, sizeof g_path, "/tmp/dq_fuzz_config_%d.yaml",
             (int)getpid());
    atexit(cleanup);
  }
  FILE *f = fopen(g_path, "wb");
  if (!f)
    return 0;
  size_t w = fwrite(data, 1, size, f);
  if (fclose(f) != 0 || w != size)
    return 0;
  dq_config c, before;
  memset(&c, 0, sizeof c);
  dq_config_defaults(&c);
  before = c;
  dq_error e = {0};
  dq_status s = dq_config_load(&c, g_path, &e);
  if (s == DQ_OK) {
    check_ranges(&c);
  } else {
    check(s == DQ_ERR_CONFIG || s == DQ_ERR_NOMEM, "a config error");
    check(memcmp(&c, &before, sizeof c) == 0, "a failed load changes nothing");
    check(strstr(dq_error_msg(&e), g_path) != NULL,
          "the message names the file");
  }
  /* --set KEY=VALUE from the first line, "key: value" */
  char line[256];
  size_t n = 0;
  while (n < size && n + 1 < sizeof line && data[n] != '\n' && data[n])
    n++;
  memcpy(line, data, n);
  line[n] = '\0';
  char *colon = strstr(line, ": ");
  if (colon) {
    *colon = '\0';
    dq_config after = c;
    s = dq_config_set(&after, line, colon + 2, &e);
    if (s == DQ_OK)
      check_ranges(&after);
    else
      check(memcmp(&after, &c, sizeof c) == 0,
            "a failed --set changes nothing");
  }
  return 0;
}
