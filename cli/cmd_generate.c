/*
 * cmd_generate.c - `docqa generate PROMPT`: runs the decoder model on one
 * prompt (under its chat template unless --raw) and prints the completion,
 * streamed as it is produced when stdout is a terminal. --json prints
 * {"text","tokens","prompt_tokens","prefill_tok_s","decode_tok_s",
 * "stop_reason","model","backend"}, plus "early_exit" (its statistics)
 * with --early-exit (or early_exit.enabled in the configuration), and
 * "experts" (load per expert and layer, balance of the model's routing
 * against flat top-k on the same scores) with --expert-stats.
 */
#include "cli.h"
#include "engine.h"
#include "pipeline.h" /* dq_config: the early_exit keys of docqa.yaml */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_STOP 16

static const char *stop_vals[MAX_STOP];

static cli_option generate_opts[] = {
    {.name = "raw", .has_arg = 0, .help = "plain completion, no chat template"},
    {.name = "max-tokens", .has_arg = 1, .metavar = "N",
     .help = "stop after N tokens (default 256)"},
    {.name = "temp", .has_arg = 1, .metavar = "T",
     .help = "sampling temperature (default 0 = greedy)"},
    {.name = "seed", .has_arg = 1, .metavar = "S", .help = "sampling seed"},
    {.name = "top-k", .has_arg = 1, .metavar = "K", .help = "top-k (default 40)"},
    {.name = "top-p", .has_arg = 1, .metavar = "P",
     .help = "nucleus mass (default 0.95)"},
    {.name = "min-p", .has_arg = 1, .metavar = "P",
     .help = "min-p (default 0.05)"},
    {.name = "repeat-penalty", .has_arg = 1, .metavar = "R",
     .help = "repetition penalty (default 1 = off)"},
    {.name = "stop", .has_arg = 1, .metavar = "TEXT",
     .help = "stop at TEXT (repeatable)", .repeat = stop_vals,
     .max_repeat = MAX_STOP},
    {.name = "system", .has_arg = 1, .metavar = "TEXT",
     .help = "system message (chat template only)"},
    {.name = "ctx", .has_arg = 1, .metavar = "N",
     .help = "context size in tokens (default min(model, 4096))"},
    {.name = "kv-type", .has_arg = 1, .metavar = "f16|q8_0|f32",
     .help = "KV cache type (default f16)"},
    {.name = "rope-scale", .has_arg = 1, .metavar = "F",
     .help = "override the linear RoPE scale factor"},
    {.name = "rope-base", .has_arg = 1, .metavar = "F",
     .help = "override the RoPE frequency base"},
    {.name = "early-exit", .has_arg = 0,
     .help = "self-speculative decoding from a shallow draft (same output)"},
    {.name = "ee-fraction", .has_arg = 1, .metavar = "F",
     .help = "early exit: fraction of the layers the draft runs (default "
             "0.67)"},
    {.name = "ee-threshold", .has_arg = 1, .metavar = "T",
     .help = "early exit: draft while its top probability >= T (default 0.9)"},
    {.name = "ee-max-draft", .has_arg = 1, .metavar = "N",
     .help = "early exit: most draft tokens per verify pass (default 8)"},
    {.name = "ee-draft-vocab", .has_arg = 1, .metavar = "N",
     .help = "early exit: candidate tokens the draft scores (default 4096; "
             "0 = all)"},
    {.name = "ee-always", .has_arg = 0,
     .help = "early exit: never switch itself off (for measuring)"},
    {.name = "expert-stats", .has_arg = 0,
     .help = "MoE models: report expert load per layer and its balance "
             "against flat top-k routing"},
    {0}};

static int parse_float(const dq_cli *cli, const char *opt, const char *text,
                       double lo, double hi, float *out) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (!end || end == text || *end || !(v >= lo && v <= hi)) { /* NaN too */
    cli_error(cli, "--%s must be a number from %g to %g, not '%s'", opt, lo,
              hi, text);
    return -1;
  }
  *out = (float)v;
  return 0;
}

static int stream_out(void *user, const char *piece, size_t len) {
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  return 0;
}

/* Model options shared with cmd_embed.c's pattern. */
static int model_opts(dq_cli *cli, cli_option *opts, dq_model_opts *mo) {
  dq_model_opts_init(mo);
  mo->backend = (dq_backend_kind)cli_backend_kind(cli);
  mo->n_threads = cli->threads;
  mo->log = &cli->log;
  const char *v;
  if ((v = cli_opt(opts, "ctx"))) {
    long n = cli_parse_count(cli, "ctx", v, 1, 1 << 20);
    if (n < 0)
      return -1;
    mo->n_ctx = (int)n;
  }
  if ((v = cli_opt(opts, "kv-type"))) {
    int t;
    if (cli_parse_kv_type(cli, v, &t, NULL))
      return -1;
    mo->kv_type = (dq_kv_type)t;
  }
  if ((v = cli_opt(opts, "rope-scale")) &&
      parse_float(cli, "rope-scale", v, 1e-3, 1e3, &mo->rope_scale))
    return -1;
  if ((v = cli_opt(opts, "rope-base")) &&
      parse_float(cli, "rope-base", v, 1, 1e12, &mo->rope_base))
    return -1;
  return 0;
}

/* The early-exit statistics as JSON: acceptance = accepted / drafted,
 * mean_accepted = accepted draft tokens per verify pass, tok/s of the
 * speculative passes and of the plain steps timed beside them. */
static json_t *ee_json(const dq_early_exit_stats *e) {
  json_t *o = json_object();
  json_object_set_new(o, "ran", json_boolean(e->ran));
  json_object_set_new(o, "exit_layer", json_integer(e->exit_layer));
  json_object_set_new(o, "n_layer", json_integer(e->n_layer));
  json_object_set_new(o, "draft_vocab", json_integer(e->draft_vocab));
  json_object_set_new(o, "verify_passes", json_integer(e->n_cycles));
  json_object_set_new(o, "drafted", json_integer(e->n_drafted));
  json_object_set_new(o, "accepted", json_integer(e->n_accepted));
  json_object_set_new(o, "acceptance",
                      json_real(e->n_drafted ? (double)e->n_accepted /
                                                   e->n_drafted
                                             : 0.0));
  json_object_set_new(o, "mean_accepted",
                      json_real(e->n_cycles ? (double)e->n_accepted /
                                                  e->n_cycles
                                            : 0.0));
  json_object_set_new(o, "spec_tokens", json_integer(e->n_tokens));
  json_object_set_new(o, "spec_tok_s",
                      json_real(e->ms > 0 ? e->n_tokens * 1000.0 / e->ms : 0));
  json_object_set_new(o, "plain_tokens", json_integer(e->n_plain));
  json_object_set_new(o, "plain_tok_s",
                      json_real(e->plain_ms > 0 ? e->n_plain * 1000.0 /
                                                      e->plain_ms
                                                : 0));
  json_object_set_new(o, "switched_off", json_boolean(e->switched_off));
  json_object_set_new(o, "off_reason", e->off_reason
                                           ? json_string(e->off_reason)
                                           : json_null());
  return o;
}

/* Balance of one layer's expert load: coefficient of variation (std /
 * mean over experts; 0 = perfectly even) and the busiest expert's share
 * relative to an even split (max / mean). */
static void balance(const uint32_t *load, int n, double *cv,
                    double *max_over_mean) {
  double sum = 0, sq = 0, mx = 0;
  for (int e = 0; e < n; e++) {
    sum += load[e];
    sq += (double)load[e] * load[e];
    mx = load[e] > mx ? load[e] : mx;
  }
  double mean = sum / n;
  double var = sq / n - mean * mean;
  *cv = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
  *max_over_mean = mean > 0 ? mx / mean : 0;
}

/* Expert load of every MoE layer: JSON, and lines on stderr unless --json. */
static json_t *expert_report(dq_cli *cli, const dq_model_info *info,
                             const dq_generate_result *res) {
  int X = res->n_expert;
  json_t *layers = json_array();
  double sum_cv = 0, sum_cv_flat = 0;
  int n_moe = 0;
  for (int l = 0; l < info->n_layer; l++) {
    const uint32_t *r = res->expert_load + (size_t)l * 2 * X, *f = r + X;
    uint64_t tot = 0;
    for (int e = 0; e < X; e++)
      tot += r[e];
    if (!tot)
      continue; /* a dense layer */
    double cv, mom, cvf, momf;
    balance(r, X, &cv, &mom);
    balance(f, X, &cvf, &momf);
    sum_cv += cv;
    sum_cv_flat += cvf;
    n_moe++;
    json_t *o = json_object(), *ra = json_array(), *fa = json_array();
    for (int e = 0; e < X; e++) {
      json_array_append_new(ra, json_integer(r[e]));
      json_array_append_new(fa, json_integer(f[e]));
    }
    json_object_set_new(o, "layer", json_integer(l));
    json_object_set_new(o, "routed", ra);
    json_object_set_new(o, "flat", fa);
    json_object_set_new(o, "routed_cv", json_real(cv));
    json_object_set_new(o, "flat_cv", json_real(cvf));
    json_object_set_new(o, "routed_max_over_mean", json_real(mom));
    json_object_set_new(o, "flat_max_over_mean", json_real(momf));
    json_array_append_new(layers, o);
    if (!cli->json) {
      int busiest = 0, idle = 0;
      for (int e = 0; e < X; e++) {
        busiest = r[e] > r[busiest] ? e : busiest;
        idle += r[e] == 0;
      }
      fprintf(stderr,
              "experts layer %2d: %llu routings; cv %.2f (flat top-k %.2f), "
              "max/mean %.2f (flat %.2f); busiest expert %d (%u), %d idle\n",
              l, (unsigned long long)tot, cv, cvf, mom, momf, busiest,
             r[busiest], idle);
    }
  }
  json_t *o = json_object();
  json_object_set_new(o, "n_expert", json_integer(X));
  json_object_set_new(o, "n_expert_used", json_integer(info->n_expert_used));
  json_object_set_new(o, "groups", json_integer(info->n_expert_group));
  json_object_set_new(o, "groups_used",
                      json_integer(info->n_expert_group_used));
  json_object_set_new(o, "mean_routed_cv",
                      json_real(n_moe ? sum_cv / n_moe : 0));
  json_object_set_new(o, "mean_flat_cv",
                      json_real(n_moe ? sum_cv_flat / n_moe : 0));
  json_object_set_new(o, "layers", layers);
  if (!cli->json)
    fprintf(stderr,
            "experts: %d MoE layers, mean cv %.3f with the model's routing "
            "(%d of %d groups), %.3f with flat top-%d\n",
            n_moe, n_moe ? sum_cv / n_moe : 0, info->n_expert_group_used,
           info->n_expert_group, n_moe ? sum_cv_flat / n_moe : 0,
           info->n_expert_used);
  return o;
}

static int run(dq_cli *cli, cli_option *opts) {
  char def[4096];
  const char *path = cli->model ? cli->model : cli_default_model(def, sizeof def);
  dq_model_opts mo;
  if (model_opts(cli, opts, &mo))
    return DQ_EXIT_USAGE;
  dq_generate_opts go;
  dq_generate_opts_init(&go);
  const char *v;
  go.raw = cli_opt(opts, "raw") != NULL;
  go.system = cli_opt(opts, "system");
  if ((v = cli_opt(opts, "max-tokens"))) {
    long n = cli_parse_count(cli, "max-tokens", v, 1, 1 << 20);
    if (n < 0)
      return DQ_EXIT_USAGE;
    go.max_tokens = (int)n;
  }
  if ((v = cli_opt(opts, "temp")) &&
      parse_float(cli, "temp", v, 0, 100, &go.sampling.temp))
    return DQ_EXIT_USAGE;
  if ((v = cli_opt(opts, "seed"))) {
    char *end = NULL;
    unsigned long long s = strtoull(v, &end, 10);
    if (!end || end == v || *end) {
      cli_error(cli, "--seed must be a whole number, not '%s'", v);
      return DQ_EXIT_USAGE;
    }
    go.sampling.seed = s;
  }
  if ((v = cli_opt(opts, "top-k"))) {
    long n = cli_parse_count(cli, "top-k", v, 0, 1 << 24);
    if (n < 0)
      return DQ_EXIT_USAGE;
    go.sampling.top_k = (int)n;
  }
  if ((v = cli_opt(opts, "top-p")) &&
      parse_float(cli, "top-p", v, 0, 1, &go.sampling.top_p))
    return DQ_EXIT_USAGE;
  if ((v = cli_opt(opts, "min-p")) &&
      parse_float(cli, "min-p", v, 0, 1, &go.sampling.min_p))
    return DQ_EXIT_USAGE;
  if ((v = cli_opt(opts, "repeat-penalty")) &&
      parse_float(cli, "repeat-penalty", v, 0.01, 100,
                  &go.sampling.repeat_penalty))
    return DQ_EXIT_USAGE;
  cli_option *so = NULL;
  for (cli_option *o = opts; o->name; o++)
    if (strcmp(o->name, "stop") == 0)
      so = o;
  if (so) {
    go.stop = so->repeat;
    go.n_stop = so->n_repeat;
  }
  /* early exit: docqa.yaml (defaults, --config, --set), then the flags */
  dq_config cfg;
  int crc = cli_config(cli, &cfg);
  if (crc)
    return crc;
  go.early_exit.enabled = cfg.early_exit.enabled;
  go.early_exit.layer_fraction = (float)cfg.early_exit.layer_fraction;
  go.early_exit.threshold = (float)cfg.early_exit.threshold;
  if (cli_opt(opts, "early-exit"))
    go.early_exit.enabled = 1;
  if ((v = cli_opt(opts, "ee-fraction")) &&
      parse_float(cli, "ee-fraction", v, 0.01, 0.99,
                  &go.early_exit.layer_fraction))
    return DQ_EXIT_USAGE;
  if ((v = cli_opt(opts, "ee-threshold")) &&
      parse_float(cli, "ee-threshold", v, 0.01, 1,
                  &go.early_exit.threshold))
    return DQ_EXIT_USAGE;
  if ((v = cli_opt(opts, "ee-max-draft"))) {
    long n = cli_parse_count(cli, "ee-max-draft", v, 1, 64);
    if (n < 0)
      return DQ_EXIT_USAGE;
    go.early_exit.max_draft = (int)n;
  }
  if ((v = cli_opt(opts, "ee-draft-vocab"))) {
    long n = cli_parse_count(cli, "ee-draft-vocab", v, 0, 1 << 24);
    if (n < 0)
      return DQ_EXIT_USAGE;
    go.early_exit.draft_vocab = (int)n;
  }
  if (cli_opt(opts, "ee-always"))
    go.early_exit.auto_off = 0;
  go.expert_stats = cli_opt(opts, "expert-stats") != NULL;
  const char *prompt = cli->args[0];
  if (!prompt[0]) {
    cli_error(cli, "the prompt is empty");
    return DQ_EXIT_USAGE;
  }
  int tty = !cli->json && isatty(STDOUT_FILENO);
  if (tty) {
    go.on_text = stream_out;
    go.user = NULL;
  }
  dq_model *m = NULL;
  dq_error err = {0};
  if (dq_model_open(path, &mo, &m, &err))
    return cli_fail(cli, &err);
  dq_model_info info;
  dq_model_get_info(m, &info);
  if (go.expert_stats && !info.n_expert) {
    cli_error(cli, "--expert-stats: %s has no experts (arch %s)", path,
              info.arch);
    dq_model_free(m);
    return DQ_EXIT_USAGE;
  }
  dq_generate_result res;
  dq_status s = dq_generate(m, prompt, &go, &res);
  if (s) {
    dq_error e2;
    dq_error_set(&e2, s, "%s", dq_model_errmsg(m));
    dq_model_free(m);
    return cli_fail(cli, &e2);
  }
  double pre = res.prefill_ms > 0 ? res.n_prompt_tokens * 1000.0 / res.prefill_ms : 0;
  double dec = res.decode_ms > 0 ? res.n_tokens * 1000.0 / res.decode_ms : 0;
  json_t *experts = res.expert_load ? expert_report(cli, &info, &res) : NULL;
  if (cli->json) {
    json_t *o = json_object();
    json_object_set_new(o, "text", json_string(res.text));
    json_object_set_new(o, "tokens", json_integer(res.n_tokens));
    json_object_set_new(o, "prompt_tokens", json_integer(res.n_prompt_tokens));
    json_object_set_new(o, "prefill_tok_s", json_real(pre));
    json_object_set_new(o, "decode_tok_s", json_real(dec));
    json_object_set_new(o, "stop_reason", json_string(res.stop_reason));
    json_object_set_new(o, "model", json_string(path));
    json_object_set_new(o, "backend", json_string(info.backend));
    json_object_set_new(o, "attention", json_string("full"));
    if (go.early_exit.enabled)
      json_object_set_new(o, "early_exit", ee_json(&res.early_exit));
    if (experts)
      json_object_set_new(o, "experts", experts);
    cli_json_print(o);
  } else {
    if (!tty)
      fputs(res.text, stdout);
    fputc('\n', stdout);
    dq_log(&cli->log, DQ_LOG_INFO,
           "%d prompt tokens at %.1f tok/s, %d generated at %.1f tok/s (%s, "
           "%s backend, full attention)",
           res.n_prompt_tokens, pre, res.n_tokens, dec, res.stop_reason,
           info.backend);
    const dq_early_exit_stats *e = &res.early_exit;
    if (go.early_exit.enabled)
      dq_log(&cli->log, DQ_LOG_INFO,
             "early exit (draft %d of %d layers): %d verify passes, %d of %d "
             "draft tokens accepted (%.0f%%), %.2f per pass, %.1f tok/s in "
             "passes vs %.1f tok/s plain%s%s",
             e->exit_layer, e->n_layer, e->n_cycles, e->n_accepted,
             e->n_drafted,
             e->n_drafted ? 100.0 * e->n_accepted / e->n_drafted : 0.0,
             e->n_cycles ? (double)e->n_accepted / e->n_cycles : 0.0,
             e->ms > 0 ? e->n_tokens * 1000.0 / e->ms : 0.0,
             e->plain_ms > 0 ? e->n_plain * 1000.0 / e->plain_ms : 0.0,
             e->switched_off ? "; switched off: " : "",
             e->switched_off ? e->off_reason : "");
    json_decref(experts);
  }
  dq_generate_result_clear(&res);
  dq_model_free(m);
  return DQ_EXIT_OK;
}

cli_command cli_cmd_generate = {
    .name = "generate",
    .usage = "docqa generate PROMPT [--raw] [--max-tokens N] [--temp T] [--seed S]\n"
             "       [--early-exit [--ee-fraction F] [--ee-threshold T]] [--expert-stats]",
    .summary = "run the model on a prompt (chat template unless --raw)",
    .help = "Runs the decoder model (--model, default SmolLM2-135M-Instruct) on\n"
            "PROMPT, wrapped in the model's chat template unless --raw, and\n"
            "prints the completion (streamed on a terminal). Greedy unless\n"
            "--temp > 0. With --json: {\"text\", \"tokens\", \"prefill_tok_s\",\n"
            "\"decode_tok_s\", ...}.\n"
            "\n"
            "--early-exit (or early_exit.enabled in docqa.yaml) drafts tokens\n"
            "from the first --ee-fraction of the layers while the draft's top\n"
            "probability is >= --ee-threshold, and has the full model verify\n"
            "them in one batched pass: greedy output is the full model's,\n"
            "sampling keeps its distribution. It times plain decoding first\n"
            "and switches itself off (and says so) when it is not faster.\n"
            "--json adds \"early_exit\": {acceptance, mean_accepted,\n"
            "spec_tok_s, plain_tok_s, switched_off, ...}.\n"
            "\n"
            "--expert-stats (mixture-of-experts models) counts, per layer,\n"
            "the tokens routed to each expert, and what flat top-k routing\n"
            "would have chosen on the same scores; it reports the balance\n"
            "(cv = std/mean of the per-expert load, 0 = even; max/mean) of\n"
            "both. --json adds \"experts\": {layers: [{routed, flat, ...}]}.\n",
    .opts = generate_opts,
    .min_args = 1,
    .max_args = 1,
    .run = run,
};
