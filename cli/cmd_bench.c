/*
 * cmd_bench.c - `docqa bench engine`: the speed of our CPU (or CUDA) engine
 * measured the way llama-bench measures llama.cpp, so scripts/bench-engine.sh
 * can print both side by side and the ratios:
 *
 *   ppN  a fresh sequence evaluates N prompt tokens in one dq_seq_eval
 *        (last-token logits only); tokens/s = N / time.
 *   tgN  a fresh sequence evaluates N tokens one at a time (each call one
 *        token, logits of that token); tokens/s = N / time.
 *
 * Tokens are pseudo-random vocabulary ids (fixed seed): speed does not
 * depend on what they are. One untimed warm-up run of each test precedes
 * `--reps` timed runs; the median is reported with the min and max. Peak RSS
 * is getrusage's ru_maxrss at the end. Each run's process CPU time is
 * reported too (tokens per CPU second): on a machine shared with other
 * work it moves much less than wall time.
 *
 * This file also holds the option table of every `bench` target (the
 * parser knows one table per command) and dispatches `bench gsm`
 * (cmd_bench_gsm.c: GSM vs full attention at length) and `bench needle`
 * (cmd_bench_needle.c: coarse recall vs BM25); an option given to a target
 * that does not read it is an error. `bench index` and `bench ingest` are
 * not implemented here; tests/bench/ holds their stand-alone programs.
 */
#include "cli.h"
#include "engine.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_TESTS 16
#define MAX_REPS 100

#define MAX_TEXT_FILES 64
static const char *text_files[MAX_TEXT_FILES];

/* Every target's options; each help text opens with the targets that read
 * the option (check_targets relies on it). */
static cli_option bench_opts[] = {
    {.name = "pp", .has_arg = 1, .metavar = "N[,N...]",
     .help = "engine: prompt lengths to time (default 512; 0 = none)"},
    {.name = "tg", .has_arg = 1, .metavar = "N[,N...]",
     .help = "engine: generation lengths to time (default 128; 0 = none)"},
    {.name = "reps", .has_arg = 1, .metavar = "N",
     .help = "engine: timed repetitions of each test (default 5)"},
    {.name = "kv-type", .has_arg = 1, .metavar = "f16|q8_0|f32",
     .help = "engine, gsm, needle: KV cache type (default f16)"},
    {.name = "lengths", .has_arg = 1, .metavar = "N[,N...]",
     .help = "gsm, needle: input lengths in tokens (gsm default "
             "2048,4096,8192,16384; needle 2048,4096,8192)"},
    {.name = "text", .has_arg = 1, .metavar = "FILE",
     .help = "gsm, needle: text to read (repeatable, concatenated; default "
             "/usr/share/common-licenses/*)",
     .repeat = text_files, .max_repeat = MAX_TEXT_FILES},
    {.name = "full-max", .has_arg = 1, .metavar = "N",
     .help = "gsm: skip full attention above N tokens (default 16384)"},
    {.name = "decode", .has_arg = 1, .metavar = "N",
     .help = "gsm: single-token steps timed after each prefill (default 32)"},
    {.name = "ppl-chunk", .has_arg = 1, .metavar = "N",
     .help = "gsm: tokens per eval in the perplexity pass (default 512)"},
    {.name = "no-ppl", .has_arg = 0,
     .help = "gsm: skip the perplexity passes (about halves the time)"},
    {.name = "depths", .has_arg = 1, .metavar = "D",
     .help = "needle: needle depths, evenly from 0% to 100% (default 10)"},
    {.name = "span-tokens", .has_arg = 1, .metavar = "N",
     .help = "needle: about this many tokens per span (default 128)"},
    {.name = "trials", .has_arg = 1, .metavar = "N",
     .help = "needle: trials per length and depth (default 1)"},
    {.name = "seed", .has_arg = 1, .metavar = "S",
     .help = "needle: seed of passkeys and haystack offsets (default 1)"},
    {.name = "layers", .has_arg = 1, .metavar = "SEL",
     .help = "needle: layers read by recall: A:B ([A, B)), all, lower, "
             "middle or upper (default all)"},
    {.name = "heads", .has_arg = 1, .metavar = "H[,H...]",
     .help = "needle: query heads read by recall (default all)"},
    {.name = "calib", .has_arg = 0,
     .help = "needle: subtract a content-free probe's scores"},
    {.name = "calib-text", .has_arg = 1, .metavar = "TEXT",
     .help = "needle: the content-free probe (default \" Question: N/A\", "
             "the probe's template; implies --calib)"},
    {.name = "toq-top", .has_arg = 1, .metavar = "K",
     .help = "needle: toq of a span over its K tokens that attend most to "
             "the question (default 4; 0: all its tokens)"},
    {.name = "toq-detrend", .has_arg = 1, .metavar = "0|1",
     .help = "needle: toq relative to the tokens at about the same "
             "distance from the question (1, default) or raw (0)"},
    {.name = "scores", .has_arg = 0,
     .help = "needle: with --json, each run's per-span gsm and toq scores "
             "too"},
    {.name = "token-scores", .has_arg = 0,
     .help = "needle: with --json, each run's per-token gsm and toq scores "
             "(and the spans) instead"},
    {.name = "sweep", .has_arg = 0,
     .help = "needle: rank under every layer selection and head from one "
             "pass (+ one calibration pass) per trial"},
    {0}};

/* An option meant for another target is a usage error, not ignored. The
 * targets that read an option open its help text: "gsm, needle: ...". */
static int check_targets(const dq_cli *cli, const cli_option *opts,
                         const char *target) {
  size_t n = strlen(target);
  for (int i = 0; opts[i].name; i++) {
    if (!opts[i].value)
      continue;
    const char *t = opts[i].help, *colon = strchr(t, ':');
    int ok = colon == NULL; /* no target list: every target reads it */
    for (const char *p = t; p && p < colon && !ok; p = strchr(p, ',')) {
      while (*p == ',' || *p == ' ')
        p++;
      ok = strncmp(p, target, n) == 0 && (p[n] == ',' || p[n] == ':');
    }
    if (!ok) {
      cli_error(cli, "--%s is an option of bench %.*s, not of bench %s",
                opts[i].name, (int)(colon - t), t, target);
      return -1;
    }
  }
  return 0;
}

static double cpu_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* "512,2048" -> {512, 2048}; "0" -> none. -1 on bad text. */
static int parse_list(const dq_cli *cli, const char *name, const char *text,
                      int *out, int *n_out) {
  *n_out = 0;
  const char *p = text;
  for (;;) {
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0 || v > (1 << 20) || (*end && *end != ',') ||
        *n_out >= MAX_TESTS) {
      cli_error(cli, "--%s must be a comma-separated list of token counts "
                "(0..1048576, at most %d), not '%s'", name, MAX_TESTS, text);
      return -1;
    }
    if (v > 0)
      out[(*n_out)++] = (int)v;
    if (!*end)
      return 0;
    p = end + 1;
  }
}

typedef struct bench_test {
  const char *kind; /* "pp" or "tg" */
  int n_tokens;
  double t_s[MAX_REPS];   /* wall seconds per timed run */
  double cpu_s[MAX_REPS]; /* process CPU seconds (all threads) per run */
} bench_test;

/* One timed run of test t into *secs; on failure fills err. */
static dq_status run_once(dq_model *m, const bench_test *t, int n_ctx,
                          const int32_t *toks, double *secs, double *cpu,
                          dq_error *err) {
  dq_seq *s = NULL;
  dq_status st = dq_seq_new(m, n_ctx, &s);
  if (st) {
    dq_error_set(err, st, "%s", dq_model_errmsg(m));
    return st;
  }
  double t0 = now_s(), c0 = cpu_now_s();
  if (t->kind[0] == 'p') {
    st = dq_seq_eval(s, toks, t->n_tokens, DQ_LOGITS_LAST);
  } else {
    for (int i = 0; i < t->n_tokens && !st; i++)
      st = dq_seq_eval(s, toks + i, 1, DQ_LOGITS_LAST);
  }
  *secs = now_s() - t0;
  *cpu = cpu_now_s() - c0;
  if (st)
    dq_error_set(err, st, "%s %d: %s", t->kind, t->n_tokens, dq_seq_errmsg(s));
  dq_seq_free(s);
  return st;
}

static int run_engine(dq_cli *cli, cli_option *opts) {
  char def[4096];
  const char *path = cli->model ? cli->model : cli_default_model(def, sizeof def);
  int pp[MAX_TESTS], tg[MAX_TESTS], n_pp = 1, n_tg = 1, reps = 5;
  pp[0] = 512;
  tg[0] = 128;
  const char *v;
  if ((v = cli_opt(opts, "pp")) && parse_list(cli, "pp", v, pp, &n_pp))
    return DQ_EXIT_USAGE;
  if ((v = cli_opt(opts, "tg")) && parse_list(cli, "tg", v, tg, &n_tg))
    return DQ_EXIT_USAGE;
  if ((v = cli_opt(opts, "reps"))) {
    long n = cli_parse_count(cli, "reps", v, 1, MAX_REPS);
    if (n < 0)
      return DQ_EXIT_USAGE;
    reps = (int)n;
  }
  dq_model_opts mo;
  dq_model_opts_init(&mo);
  mo.backend = (dq_backend_kind)cli_backend_kind(cli);
  mo.n_threads = cli->threads;
  mo.log = &cli->log;
  if ((v = cli_opt(opts, "kv-type"))) {
    int t;
    if (cli_parse_kv_type(cli, v, &t, NULL))
      return DQ_EXIT_USAGE;
    mo.kv_type = (dq_kv_type)t;
  }
  int n_max = 1;
  for (int i = 0; i < n_pp; i++)
    n_max = pp[i] > n_max ? pp[i] : n_max;
  for (int i = 0; i < n_tg; i++)
    n_max = tg[i] > n_max ? tg[i] : n_max;

  bench_test tests[2 * MAX_TESTS];
  int n_tests = 0;
  for (int i = 0; i < n_pp; i++)
    tests[n_tests++] = (bench_test){.kind = "pp", .n_tokens = pp[i]};
  for (int i = 0; i < n_tg; i++)
    tests[n_tests++] = (bench_test){.kind = "tg", .n_tokens = tg[i]};

  dq_model *m = NULL;
  dq_error err = {0};
  int32_t *toks = NULL;
  int rc = DQ_EXIT_ERROR;
  double t_load = now_s();
  if (dq_model_open(path, &mo, &m, &err))
    return cli_fail(cli, &err);
  t_load = now_s() - t_load;
  dq_model_info info;
  dq_model_get_info(m, &info);
  if (info.is_encoder) {
    cli_error(cli, "%s: bench engine needs a decoder model, this is %s", path,
              info.arch);
    rc = DQ_EXIT_USAGE;
    goto done;
  }
  if (n_max > info.n_ctx_train) {
    cli_error(cli, "%d tokens exceed the model's context of %d", n_max,
              info.n_ctx_train);
    rc = DQ_EXIT_USAGE;
    goto done;
  }
  if (!(toks = malloc((size_t)n_max * sizeof *toks))) {
    cli_error(cli, "out of memory");
    goto done;
  }
  uint64_t rng = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < n_max; i++) {
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    toks[i] = (int32_t)((rng >> 33) % (uint64_t)info.n_vocab);
  }
  for (int k = 0; k < n_tests; k++) {
    bench_test *t = &tests[k];
    double warm, warm_cpu;
    if (run_once(m, t, n_max, toks, &warm, &warm_cpu, &err)) {
      rc = cli_fail(cli, &err);
      goto done;
    }
    for (int r = 0; r < reps; r++)
      if (run_once(m, t, n_max, toks, &t->t_s[r], &t->cpu_s[r], &err)) {
        rc = cli_fail(cli, &err);
        goto done;
      }
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double rss_mib = (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB */
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0)
    load[0] = load[1] = load[2] = -1;

  json_t *jt = cli->json ? json_array() : NULL;
  if (!cli->json)
    printf("model: %s (%s, %s backend%s%s, weights %s, %d threads)\n%-8s "
           "%10s %10s %10s %10s %10s\n",
           path, info.arch, info.backend, info.cpu_path[0] ? ": " : "",
           info.cpu_path, info.weights, cli->threads, "test", "tok/s", "min",
           "max", "ms", "tok/cpu-s");
  for (int k = 0; k < n_tests; k++) {
    bench_test *t = &tests[k];
    double sorted[MAX_REPS];
    memcpy(sorted, t->t_s, (size_t)reps * sizeof *sorted);
    qsort(sorted, (size_t)reps, sizeof *sorted, cmp_double);
    double med = reps % 2 ? sorted[reps / 2]
                          : 0.5 * (sorted[reps / 2 - 1] + sorted[reps / 2]);
    memcpy(sorted, t->cpu_s, (size_t)reps * sizeof *sorted);
    qsort(sorted, (size_t)reps, sizeof *sorted, cmp_double);
    double cpu_med = reps % 2 ? sorted[reps / 2]
                              : 0.5 * (sorted[reps / 2 - 1] + sorted[reps / 2]);
    memcpy(sorted, t->t_s, (size_t)reps * sizeof *sorted);
    qsort(sorted, (size_t)reps, sizeof *sorted, cmp_double);
    double tps = t->n_tokens / med, lo = t->n_tokens / sorted[reps - 1],
           hi = t->n_tokens / sorted[0];
    if (cli->json) {
      json_t *o = json_object(), *runs = json_array(), *cruns = json_array();
      for (int r = 0; r < reps; r++) {
        json_array_append_new(runs, json_real(t->t_s[r] * 1e3));
        json_array_append_new(cruns, json_real(t->cpu_s[r] * 1e3));
      }
      json_object_set_new(o, "test", json_sprintf("%s%d", t->kind, t->n_tokens));
      json_object_set_new(o, "kind", json_string(t->kind));
      json_object_set_new(o, "n_tokens", json_integer(t->n_tokens));
      json_object_set_new(o, "tok_s", json_real(tps));
      json_object_set_new(o, "tok_s_min", json_real(lo));
      json_object_set_new(o, "tok_s_max", json_real(hi));
      json_object_set_new(o, "runs_ms", runs);
      json_object_set_new(o, "cpu_ms", cruns);
      json_object_set_new(o, "tok_per_cpu_s", json_real(t->n_tokens / cpu_med));
      json_array_append_new(jt, o);
    } else {
      char name[32];
      snprintf(name, sizeof name, "%s%d", t->kind, t->n_tokens);
      printf("%-8s %10.1f %10.1f %10.1f %10.1f %10.1f\n", name, tps, lo, hi,
             med * 1e3, t->n_tokens / cpu_med);
    }
  }
  if (cli->json) {
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(path));
    json_object_set_new(o, "arch", json_string(info.arch));
    json_object_set_new(o, "backend", json_string(info.backend));
    if (info.cpu_path[0])
      json_object_set_new(o, "cpu_path", json_string(info.cpu_path));
    json_object_set_new(o, "weights", json_string(info.weights));
    json_object_set_new(o, "threads", json_integer(cli->threads));
    json_object_set_new(o, "reps", json_integer(reps));
    json_object_set_new(o, "load_s", json_real(t_load));
    json_object_set_new(o, "peak_rss_mib", json_real(rss_mib));
    json_object_set_new(o, "loadavg", json_pack("[fff]", load[0], load[1], load[2]));
    json_object_set_new(o, "tests", jt);
    cli_json_print(o);
  } else {
    printf("peak RSS %.1f MiB, load %.2fs, load average %.2f %.2f %.2f\n",
           rss_mib, t_load, load[0], load[1], load[2]);
  }
  rc = DQ_EXIT_OK;
done:
  free(toks);
  dq_model_free(m);
  return rc;
}

static int run(dq_cli *cli, cli_option *opts) {
  const char *target = cli->args[0];
  int (*fn)(dq_cli *, cli_option *) = NULL;
  if (strcmp(target, "engine") == 0)
    fn = run_engine;
  else if (strcmp(target, "gsm") == 0)
    fn = cli_bench_gsm;
  else if (strcmp(target, "needle") == 0)
    fn = cli_bench_needle;
  else if (strcmp(target, "index") == 0 || strcmp(target, "ingest") == 0)
    return cli_not_implemented(cli, opts);
  if (!fn) {
    cli_error(cli, "unknown benchmark '%s' (engine, gsm, needle, index, "
              "ingest)", target);
    return DQ_EXIT_USAGE;
  }
  if (cli->n_args > 1) {
    cli_error(cli, "bench %s takes no positional arguments", target);
    return DQ_EXIT_USAGE;
  }
  if (check_targets(cli, opts, target))
    return DQ_EXIT_USAGE;
  return fn(cli, opts);
}

cli_command cli_cmd_bench = {
    .name = "bench",
    .usage = "docqa bench engine|gsm|needle|index|ingest [...]",
    .summary = "benchmarks, side by side with a named reference",
    .help =
        "bench engine [--model M] [--pp 512,2048] [--tg 128] [--reps N]\n"
        "[--threads N] [--json]: prompt-processing and generation speed\n"
        "of the engine, measured as llama-bench does (ppN: one batch of N\n"
        "tokens into a fresh sequence; tgN: N single-token steps), median\n"
        "of --reps runs after one warm-up, and peak RSS. The header (and\n"
        "--json) names the CPU kernels' path and where the weights are:\n"
        "mapped from the file, or read into huge-page memory\n"
        "(DOCQA_WEIGHTS=read).\n"
        "scripts/bench-engine.sh runs it beside llama.cpp on the same\n"
        "model and prints the ratios.\n"
        "\n"
        "bench gsm [--lengths 2048,4096,8192,16384] [--text FILE]...\n"
        "[--full-max N] [--decode N] [--ppl-chunk N] [--no-ppl]: GSM sparse\n"
        "attention (docqa.yaml defaults) against our full attention on the\n"
        "first L tokens of a long real text (the licences, repeated as\n"
        "needed). Per length and path: prefill ms/token (one dq_seq_eval of\n"
        "L tokens into a fresh sequence, after one small warm-up eval),\n"
        "decode ms/token at depth L (--decode single-token steps on the\n"
        "text's next tokens), the KV bytes held after the prefill (full:\n"
        "layers x L x K+V rows of the cache type; GSM: the rows it keeps and\n"
        "the rows it has allocated), and perplexity over the L tokens (a\n"
        "second, untimed pass in evals of --ppl-chunk tokens keeping every\n"
        "row of logits). Full attention beyond the model's trained context is\n"
        "run anyway, to show how it degrades. scripts/bench-gsm.sh adds\n"
        "llama.cpp on the same text and plots the curves.\n"
        "\n"
        "bench needle [--lengths 2048,4096,8192] [--depths 10]\n"
        "[--span-tokens 128] [--trials N] [--layers A:B] [--heads H,...]\n"
        "[--calib] [--toq-top K] [--toq-detrend 0|1] [--scores]\n"
        "[--token-scores]: coarse recall (dq_model_recall) finding a needle\n"
        "sentence\n"
        "(\"The secret passkey for the <colour> vault is <5 digits>.\", seeded\n"
        "per trial) hidden in a haystack of licence sentences at depths\n"
        "0%..100%. The prompt is the question (pinned), the haystack cut at\n"
        "sentence boundaries into spans of about --span-tokens tokens, and\n"
        "the question again as the probe. Reports the needle span's rank by\n"
        "(a) the probe's attention mass (gsm), (b) the span's attention to\n"
        "the pinned question over its K most attending tokens, each token's\n"
        "relative to the tokens at about its distance from the question\n"
        "(toq), the two's robust z-scores added (both), and (c) BM25 over\n"
        "the same spans with the same question (words: lowercased ASCII\n"
        "letter/digit runs;\n"
        "k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5) / (df + 0.5)) over the\n"
        "spans);\n"
        "hit@1 and hit@3 per length, and the time of each recall call.\n"
        "--scores adds each run's per-span gsm and toq scores to --json (to\n"
        "try other ways of combining them without rerunning the passes);\n"
        "--token-scores the scores of every haystack token and the spans\n"
        "(the pass then scores one-token spans, adding them up per span).\n"
        "--layers takes A:B (layers [A, B)) or all, lower (first half),\n"
        "middle (middle third), upper (second half).\n"
        "\n"
        "gsm and needle take the GSM options of docqa.yaml: defaults,\n"
        "--config FILE, then --set KEY=VALUE (e.g. --set\n"
        "sparse_attention.mode=dynamic). gsm runs on --backend cuda too (its\n"
        "rows on the device; kv_compress.strategy score only); needle runs\n"
        "on the CPU (it reads GSM's attention statistics, kept on the host).\n",
    .opts = bench_opts,
    .min_args = 1,
    .max_args = -1,
    .run = run,
};
