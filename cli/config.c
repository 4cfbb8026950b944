/*
 * config.c - the configuration a command runs with: docqa.yaml defaults,
 * then --config FILE, then each --set KEY=VALUE in order. Checking keys and
 * values is pipeline/config.c's job; this file only sequences the sources
 * and reports errors the CLI way.
 */
#include "cli.h"
#include "pipeline.h"

#include <string.h>

int cli_config(const dq_cli *cli, dq_config *out) {
  dq_config_defaults(out);
  dq_error err;
  dq_error_clear(&err);
  if (cli->config && dq_config_load(out, cli->config, &err) != DQ_OK)
    return cli_fail(cli, &err);
  for (int i = 0; i < cli->n_sets; i++) {
    const char *eq = strchr(cli->sets[i], '=');
    if (!eq || eq == cli->sets[i]) {
      cli_error(cli, "--set needs KEY=VALUE (e.g. sparse_attention.window_size"
                     "=512), not '%s'", cli->sets[i]);
      return DQ_EXIT_USAGE;
    }
    char key[128];
    size_t n = (size_t)(eq - cli->sets[i]);
    if (n >= sizeof key) {
      cli_error(cli, "--set: key too long in '%s'", cli->sets[i]);
      return DQ_EXIT_USAGE;
    }
    memcpy(key, cli->sets[i], n);
    key[n] = '\0';
    if (dq_config_set(out, key, eq + 1, &err) != DQ_OK) {
      cli_error(cli, "--set %s: %s", cli->sets[i], dq_error_msg(&err));
      return DQ_EXIT_USAGE;
    }
  }
  return DQ_EXIT_OK;
}
