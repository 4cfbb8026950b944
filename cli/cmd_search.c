/*
 * cmd_search.c - `docqa search QUERY`: hybrid retrieval without the model.
 * Text output is one result per block, `path:lines (section)` first so
 * editors and terminals can jump to it; --json follows DESIGN.md.
 */
#include "cli.h"
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

/* clang-format off */
static cli_option search_opts[] = {
    {.name = "k", .has_arg = 1, .metavar = "N",
     .help = "number of results (default 10)"},
    {.name = "path", .has_arg = 1, .metavar = "PREFIX",
     .help = "only paths equal to PREFIX, or under it when it ends in '/'\n"
             "                         (as stored, or as shown: beta/src/)"},
    {.name = "no-symbols", .has_arg = 0,
     .help = "rank by BM25 and vectors only, not by the symbols, terms and "
             "sections the query names"},
    {.name = "recall", .has_arg = 0,
     .help = "re-rank with a GSM recall pass of the language model"},
    {.name = "pool", .has_arg = 1, .metavar = "N",
     .help = "with --recall: candidates the pass reads (default 3 x k)"},
    {.name = "recall-weight", .has_arg = 1, .metavar = "W",
     .help = "with --recall: weight of recall in the rank fusion (default 1;"
             " 0 = retrieval order)"},
    {.name = "recall-layers", .has_arg = 1, .metavar = "A:B",
     .help = "with --recall: layers read, as fractions of the depth "
             "(default 0.5:1)"},
    {.name = "recall-calib", .has_arg = 0,
     .help = "with --recall: subtract a content-free probe's scores "
             "(calibration)"},
    {0}};
/* clang-format on */

/* "0.25:0.75" -> two fractions 0 <= a < b <= 1. */
static int parse_layers(const dq_cli *cli, const char *text, double *a,
                        double *b) {
  char *end = NULL;
  *a = strtod(text, &end);
  if (end == text || *end != ':') {
    cli_error(cli, "--recall-layers needs A:B (fractions), not '%s'", text);
    return -1;
  }
  const char *t2 = end + 1;
  *b = strtod(t2, &end);
  if (end == t2 || *end || !(*a >= 0 && *a < *b && *b <= 1)) {
    cli_error(cli, "--recall-layers needs 0 <= A < B <= 1, not '%s'", text);
    return -1;
  }
  return 0;
}

/* Prints at most `max_lines` lines of `text`, indented. */
static void print_excerpt(const char *text, int max_lines) {
  const char *p = text;
  for (int i = 0; i < max_lines && *p; i++) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len > 160)
      len = 160;
    printf("    %.*s\n", (int)len, p);
    if (!nl)
      break;
    p = nl + 1;
  }
}

static int run(dq_cli *cli, cli_option *opts) {
  char model_buf[4096];
  dq_search_job job = {0};
  job.index_dir = cli->index_dir;
  job.embed_model = cli->embed_model
                        ? cli->embed_model
                        : cli_default_embed_model(model_buf, sizeof model_buf);
  job.backend = cli->backend;
  job.n_threads = cli->threads;
  job.log = &cli->log;
  job.k = 10;
  const char *k = cli_opt(opts, "k");
  if (k) {
    long v = cli_parse_count(cli, "k", k, 1, 1000);
    if (v < 0)
      return DQ_EXIT_USAGE;
    job.k = (size_t)v;
  }
  const char *path = cli_opt(opts, "path");
  if (path) {
    job.paths = &path;
    job.n_paths = 1;
    job.paths_option = "--path";
  }
  char dec_buf[4096];
  dq_config cfg;
  dq_recall_info info = {0};
  job.no_symbols = cli_opt(opts, "no-symbols") != NULL;
  if (!cli->args[0][strspn(cli->args[0], " \t\r\n")]) {
    cli_error(cli, "the query is empty");
    return DQ_EXIT_USAGE;
  }
  int cfg_rc = cli_config(cli, &cfg);
  if (cfg_rc)
    return cfg_rc;
  job.config = &cfg;
  if (cli_opt(opts, "recall")) {
    job.recall = 1;
    job.model = cli->model ? cli->model
                           : cli_default_model(dec_buf, sizeof dec_buf);
    job.recall_weight = DQ_RECALL_WEIGHT;
    job.layer_from = DQ_RECALL_LAYER_FROM;
    job.layer_to = DQ_RECALL_LAYER_TO;
    job.recall_info = &info;
    const char *pool = cli_opt(opts, "pool");
    if (pool) {
      long v = cli_parse_count(cli, "pool", pool, 1, 1000);
      if (v < 0)
        return DQ_EXIT_USAGE;
      job.pool = (size_t)v;
    }
    const char *w = cli_opt(opts, "recall-weight");
    if (w) {
      char *end = NULL;
      job.recall_weight = strtod(w, &end);
      if (end == w || *end || !(job.recall_weight >= 0) ||
          job.recall_weight > 1e6) {
        cli_error(cli, "--recall-weight needs a number >= 0, not '%s'", w);
        return DQ_EXIT_USAGE;
      }
    }
    const char *ly = cli_opt(opts, "recall-layers");
    if (ly && parse_layers(cli, ly, &job.layer_from, &job.layer_to))
      return DQ_EXIT_USAGE;
    job.recall_calib = cli_opt(opts, "recall-calib") != NULL;
  } else if (cli_opt(opts, "pool") || cli_opt(opts, "recall-weight") ||
             cli_opt(opts, "recall-layers") ||
             cli_opt(opts, "recall-calib")) {
    cli_error(cli, "--pool, --recall-weight, --recall-layers and "
                   "--recall-calib need --recall");
    return DQ_EXIT_USAGE;
  }
  dq_hit *h = NULL;
  size_t n = 0;
  const char *mode = NULL;
  dq_error err;
  dq_error_clear(&err);
  double t0 = dq_now_ms();
  if (dq_search_run(&job, cli->args[0], &h, &n, &mode, &err) != DQ_OK)
    return cli_fail(cli, &err);
  double ms = dq_now_ms() - t0;
  if (cli->json) {
    json_t *o = json_object();
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
      json_t *r = json_object();
      json_object_set_new(r, "path", json_string(h[i].path));
      json_object_set_new(r, "kind", json_string(h[i].kind));
      json_object_set_new(r, "line_start", json_integer(h[i].line_start));
      json_object_set_new(r, "line_end", json_integer(h[i].line_end));
      json_object_set_new(r, "page", h[i].page_start
                                         ? json_integer(h[i].page_start)
                                         : json_null());
      json_object_set_new(r, "page_unit",
                          h[i].page_start ? json_string(dq_page_unit(h[i].kind))
                                          : json_null());
      json_object_set_new(r, "section", json_string(h[i].section));
      json_object_set_new(r, "text", json_string(h[i].text));
      json_object_set_new(r, "score", json_real(h[i].score));
      json_object_set_new(r, "bm25_rank", h[i].bm25_rank
                                              ? json_integer(h[i].bm25_rank)
                                              : json_null());
      json_object_set_new(r, "dense_rank", h[i].dense_rank
                                               ? json_integer(h[i].dense_rank)
                                               : json_null());
      json_object_set_new(r, "bm25_score",
                          h[i].bm25_rank ? json_real(h[i].bm25_score)
                                         : json_null());
      json_object_set_new(r, "dense_score",
                          h[i].dense_rank ? json_real(h[i].dense_score)
                                          : json_null());
      json_object_set_new(r, "symbol_rank",
                          h[i].symbol_rank ? json_integer(h[i].symbol_rank)
                                           : json_null());
      json_object_set_new(r, "symbol",
                          h[i].symbol ? json_string(h[i].symbol) : json_null());
      json_object_set_new(r, "symbol_kind",
                          h[i].symbol_kind ? json_string(h[i].symbol_kind)
                                           : json_null());
      json_object_set_new(r, "symbol_where",
                          h[i].symbol_where ? json_string(h[i].symbol_where)
                                            : json_null());
      json_object_set_new(r, "symbol_line",
                          h[i].symbol_line ? json_integer(h[i].symbol_line)
                                           : json_null());
      json_object_set_new(r, "root", json_string(h[i].root));
      json_object_set_new(r, "stale", json_boolean(h[i].stale));
      if (info.ran) {
        json_object_set_new(r, "retrieval_rank",
                            json_integer(h[i].retrieval_rank));
        json_object_set_new(r, "recall_rank", json_integer(h[i].recall_rank));
        json_object_set_new(r, "recall_score", json_real(h[i].recall_score));
        json_object_set_new(r, "recall_toq", json_real(h[i].recall_toq));
      }
      json_array_append_new(a, r);
    }
    json_object_set_new(o, "results", a);
    json_object_set_new(o, "mode", json_string(mode));
    json_object_set_new(o, "time_ms", json_real(ms));
    if (info.ran) {
      json_t *rc = json_object();
      json_object_set_new(rc, "candidates", json_integer(info.n_candidates));
      json_object_set_new(rc, "passes", json_integer(info.n_passes));
      json_object_set_new(rc, "tokens", json_integer(info.n_tokens));
      json_object_set_new(rc, "layers", json_pack("[ii]", info.layer_begin,
                                                  info.layer_end));
      json_object_set_new(rc, "weight", json_real(info.weight));
      json_object_set_new(rc, "calibrated", json_boolean(info.calibrated));
      json_object_set_new(rc, "time_ms", json_real(info.ms));
      json_object_set_new(o, "recall", rc);
    }
    cli_json_print(o);
  } else {
    if (n == 0)
      printf("no results for \"%s\"\n", cli->args[0]);
    for (size_t i = 0; i < n; i++) {
      char where[DQ_WHERE_MAX];
      dq_where(where, dq_page_unit(h[i].kind), h[i].page_start, h[i].line_start,
               h[i].line_end);
      printf("%zu. %s%s%s%s%s  [score %.4f", i + 1, h[i].shown, where,
             h[i].section[0] ? " (" : "", h[i].section,
             h[i].section[0] ? ")" : "", h[i].score);
      if (h[i].bm25_rank)
        printf(", bm25 #%d", h[i].bm25_rank);
      if (h[i].dense_rank)
        printf(", dense #%d", h[i].dense_rank);
      if (h[i].symbol_rank) {
        printf(", symbol #%d%s %s", h[i].symbol_rank,
               h[i].symbol_strong ? "" : " (weak)", h[i].symbol);
        if (h[i].symbol_kind)
          printf(": %s%s%s", h[i].symbol_kind, h[i].symbol_where ? " in " : "",
                 h[i].symbol_where ? h[i].symbol_where : "");
      }
      if (h[i].recall_rank)
        printf(", retrieval #%d, recall #%d", h[i].retrieval_rank,
               h[i].recall_rank);
      printf("]%s\n", h[i].stale ? "  (file changed since ingest)" : "");
      print_excerpt(h[i].text, 3);
    }
    dq_log(&cli->log, DQ_LOG_INFO, "%zu results (%s) in %.1f ms", n, mode, ms);
  }
  dq_hits_free(h, n);
  return DQ_EXIT_OK;
}

cli_command cli_cmd_search = {
    .name = "search",
    .usage = "docqa search QUERY [--k N] [--path PREFIX] [--no-symbols] "
             "[--recall]",
    .summary = "hybrid retrieval (BM25 + vectors + symbols) without the "
               "model",
    .help = "Prints the best passages for QUERY: path:lines (section), the\n"
            "fused score with each signal's rank, and the first lines. Uses\n"
            "vectors when the index has them (see 'docqa ingest'), BM25 only\n"
            "otherwise. BM25 and vector scores, each scaled to 0..1 over its\n"
            "candidates, combine as w BM25 + (1 - w) vectors, w 0.7 by\n"
            "default ('--set search.lexical_weight=W', within (0, 1]; 1:\n"
            "vectors only add candidates after BM25's).\n"
            "Symbols: when QUERY names a symbol the index knows (an\n"
            "identifier such as tax_compute_line or getUser, a defined term\n"
            "such as \"Derived Materials\", a section such as \"section\n"
            "2.1(d)\"), the chunks that define it rank high, or with \"who\n"
            "calls X\", \"where is X used\" the chunks that use it. Names\n"
            "whose every word is in QUERY count too, less: \"which function\n"
            "computes the tax on a line\" finds tax_compute_line. Each\n"
            "result says which symbol ranked it ('(weak)': one that counts\n"
            "like BM25 or vectors, not ahead of them) and what the passage\n"
            "holds of it: 'call in invoice_compute_totals', 'function',\n"
            "'term in 2.2'.\n"
            "With --recall the language model reads --pool candidates in\n"
            "one GSM pass (question, passages, question again) and each\n"
            "passage is scored by the attention the final question pays to\n"
            "it; that ranking is fused with retrieval's (the step 'docqa\n"
            "ask' runs before it reads the best passages).\n",
    .opts = search_opts, .min_args = 1, .max_args = 1, .run = run};
