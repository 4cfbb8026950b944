/*
 * cmd_ask.c - `docqa ask QUESTION`: the answer (streamed on a terminal),
 * then the passages it cites as path:line_start-line_end (section); --json
 * gives the DESIGN.md shape with timings per stage.
 */
#include "cli.h"
#include "pipeline.h"

#include <string.h>
#include <unistd.h>

#define MAX_DOCS 64
#define STR_(x) #x
#define STR(x) STR_(x) /* a number macro as a string, for the help text */

static const char *docs[MAX_DOCS];
/* clang-format off */
static cli_option ask_opts[] = {
    {.name = "doc", .has_arg = 1, .metavar = "PATH",
     .help = "only this document (relative to its root, or as shown;\n"
             "                         a trailing / means a folder); repeatable",
     .repeat = docs, .max_repeat = MAX_DOCS},
    {.name = "effort", .has_arg = 1, .metavar = "high|max",
     .help = "high (default): fast; max: more passages + a support check"},
    {.name = "k", .has_arg = 1, .metavar = "N",
     .help = "passages retrieved, at most this many read within\n"
             "                         --passage-tokens (default 6; 10 with\n"
             "                         --effort max)"},
    {.name = "passage-tokens", .has_arg = 1, .metavar = "N",
     .help = "tokens of passages in the prompt, best first, each trimmed\n"
             "                         to its lines about the question (default\n"
             "                         " STR(DQ_ASK_PASSAGE_TOKENS) "; " STR(DQ_ASK_PASSAGE_TOKENS_MAX) " with --effort max)"},
    {.name = "max-tokens", .has_arg = 1, .metavar = "N",
     .help = "longest answer in tokens (default " STR(DQ_ASK_MAX_TOKENS) ")"},
    {.name = "recall", .has_arg = 0,
     .help = "run the GSM recall pass over a pool of candidates (default:\n"
             "                         only with --doc)"},
    {.name = "pool", .has_arg = 1, .metavar = "N",
     .help = "candidates the recall pass reads (default 3 x k; implies\n"
             "                         --recall)"},
    {.name = "recall-model", .has_arg = 1, .metavar = "PATH",
     .help = "decoder GGUF for the recall pass (default: --model): a path\n"
             "                         or a file name in the models directory,\n"
             "                         e.g. gemma3-270m-q4_k_m.gguf: a 32k-context\n"
             "                         model that finds needles SmolLM2 misses"},
    {.name = "no-recall", .has_arg = 0,
     .help = "never run the recall pass (with --doc: read the ranked\n"
             "                         chunks first)"},
    {0}};
/* clang-format on */

static int stream_out(void *user, const char *piece, size_t len) {
  (void)user;
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  return 0;
}

static int run(dq_cli *cli, cli_option *opts) {
  char model_buf[4096], embed_buf[4096];
  dq_ask_opts o = {0};
  o.index_dir = cli->index_dir;
  o.model = cli->model ? cli->model
                       : cli_default_model(model_buf, sizeof model_buf);
  o.embed_model = cli->embed_model
                      ? cli->embed_model
                      : cli_default_embed_model(embed_buf, sizeof embed_buf);
  o.backend = cli->backend;
  o.n_threads = cli->threads;
  o.log = &cli->log;
  const char *effort = cli_opt(opts, "effort");
  if (effort && strcmp(effort, "high") && strcmp(effort, "max")) {
    cli_error(cli, "--effort must be high or max, not '%s'", effort);
    return DQ_EXIT_USAGE;
  }
  o.effort_max = effort && !strcmp(effort, "max");
  const char *k = cli_opt(opts, "k");
  if (k) {
    long v = cli_parse_count(cli, "k", k, 1, 100);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.k = (size_t)v;
  }
  const char *pt = cli_opt(opts, "passage-tokens");
  if (pt) {
    long v = cli_parse_count(cli, "passage-tokens", pt, 32, 1000000);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.passage_tokens = (int)v;
  }
  const char *mt = cli_opt(opts, "max-tokens");
  if (mt) {
    long v = cli_parse_count(cli, "max-tokens", mt, 1, 8192);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.max_tokens = (int)v;
  }
  const char *pool = cli_opt(opts, "pool");
  if (pool) {
    long v = cli_parse_count(cli, "pool", pool, 1, 100000);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.pool = (size_t)v;
  }
  if (cli_opt(opts, "no-recall") && (cli_opt(opts, "recall") || pool)) {
    cli_error(cli, "--no-recall contradicts --recall/--pool");
    return DQ_EXIT_USAGE;
  }
  char recall_buf[4096];
  o.recall_model = cli_model_arg(cli_opt(opts, "recall-model"), recall_buf,
                                 sizeof recall_buf);
  if (o.recall_model && cli_opt(opts, "no-recall")) {
    cli_error(cli, "--no-recall contradicts --recall-model");
    return DQ_EXIT_USAGE;
  }
  o.recall = cli_opt(opts, "no-recall")              ? -1
             : cli_opt(opts, "recall") || pool ? 1
                                                     : 0;
  if (!cli->args[0][strspn(cli->args[0], " \t\r\n")]) {
    cli_error(cli, "the question is empty");
    return DQ_EXIT_USAGE;
  }
  dq_config cfg;
  int crc = cli_config(cli, &cfg);
  if (crc)
    return crc;
  o.config = &cfg;
  for (cli_option *op = opts; op->name; op++)
    if (!strcmp(op->name, "doc")) {
      o.docs = op->repeat;
      o.n_docs = (size_t)op->n_repeat;
    }
  int streaming = !cli->json && isatty(STDOUT_FILENO);
  if (streaming)
    o.on_text = stream_out;

  dq_ask_result r;
  dq_error err;
  dq_error_clear(&err);
  if (dq_ask_run(&o, cli->args[0], &r, &err) != DQ_OK)
    return cli_fail(cli, &err);

  if (cli->json) {
    json_t *j = json_object();
    json_object_set_new(j, "answer", json_string(r.answer));
    json_object_set_new(j, "grounding", cli_grounding_json(&r));
    json_object_set_new(j, "facts",
                        r.facts ? json_string(r.facts) : json_null());
    json_object_set_new(j, "quote", cli_quote_json(&r.quote));
    json_t *cits = json_array(), *read = json_array();
    for (size_t i = 0; i < r.n_passages; i++) {
      const dq_citation *c = &r.passages[i];
      json_t *x = json_object();
      json_object_set_new(x, "path", json_string(c->path));
      json_object_set_new(x, "root", json_string(c->root));
      json_object_set_new(x, "stale", json_boolean(c->stale));
      json_object_set_new(x, "line_start", json_integer(c->line_start));
      json_object_set_new(x, "line_end", json_integer(c->line_end));
      json_object_set_new(x, "page", c->page ? json_integer(c->page) : json_null());
      json_object_set_new(x, "page_unit",
                          c->page ? json_string(c->unit ? c->unit : "page")
                                  : json_null());
      json_object_set_new(x, "section", json_string(c->section));
      json_object_set_new(x, "score", json_real(c->score));
      json_object_set_new(x, "n", json_integer((json_int_t)i + 1));
      json_object_set_new(x, "inferred", json_boolean(c->cited == 2));
      json_object_set_new(x, "trimmed", json_boolean(c->trimmed));
      json_object_set_new(x, "text", json_string(c->text));
      json_array_append(read, x);
      if (c->cited)
        json_array_append(cits, x);
      json_decref(x);
    }
    json_object_set_new(j, "citations", cits);
    json_object_set_new(j, "passages", read);
    json_t *t = json_object();
    json_object_set_new(t, "load", json_real(r.ms_load));
    json_object_set_new(t, "retrieve", json_real(r.ms_retrieve));
    if (r.recall.ran)
      json_object_set_new(t, "recall", json_real(r.recall.ms));
    json_object_set_new(t, "prefill", json_real(r.ms_prefill));
    json_object_set_new(t, "generate", json_real(r.ms_generate));
    if (o.effort_max)
      json_object_set_new(t, "check", json_real(r.ms_check));
    json_object_set_new(t, "total", json_real(r.ms_total));
    json_object_set_new(j, "timings_ms", t);
    json_object_set_new(j, "backend", json_string(r.backend ? r.backend : "cpu"));
    json_object_set_new(j, "attention", json_string(r.attention));
    json_object_set_new(j, "retrieval", json_string(r.retrieval ? r.retrieval : "bm25"));
    json_t *tk = json_object();
    json_object_set_new(tk, "prompt", json_integer(r.n_prompt_tokens));
    json_object_set_new(tk, "answer", json_integer(r.n_answer_tokens));
    json_object_set_new(tk, "passages", json_integer(r.n_passage_tokens));
    json_object_set_new(tk, "passage_budget", json_integer(r.passage_budget));
    json_object_set_new(j, "tokens", tk);
    if (r.support)
      json_object_set_new(j, "support", json_string(r.support));
    if (r.recall.ran) {
      json_t *rc = json_object();
      json_object_set_new(rc, "candidates", json_integer(r.recall.n_candidates));
      json_object_set_new(rc, "passes", json_integer(r.recall.n_passes));
      json_object_set_new(rc, "tokens", json_integer(r.recall.n_tokens));
      json_object_set_new(rc, "layers", json_pack("[ii]", r.recall.layer_begin,
                                                  r.recall.layer_end));
      json_object_set_new(rc, "weight", json_real(r.recall.weight));
      json_object_set_new(rc, "calibrated", json_boolean(r.recall.calibrated));
      json_object_set_new(rc, "model",
                          json_string(o.recall_model ? o.recall_model : o.model));
      json_object_set_new(j, "recall", rc);
    }
    cli_json_print(j);
  } else {
    cli_answer_print(&r, streaming);
    if (!r.model_answer) /* else the answer is the quote */
      cli_quote_print(&r.quote);
    int any = 0;
    for (size_t i = 0; i < r.n_passages; i++)
      any |= r.passages[i].cited;
    if (r.n_passages)
      printf("%s\n",
             any ? "Sources:" : "The answer cites no passage; passages read:");
    for (size_t i = 0; i < r.n_passages; i++) {
      if (any && !r.passages[i].cited)
        continue;
      printf("  [%zu] ", i + 1);
      const dq_citation *c = &r.passages[i];
      cli_print_where(c->shown, c->unit, c->page, c->line_start, c->line_end,
                      c->section);
      printf("%s%s\n",
             r.passages[i].cited == 2
                 ? "  (not cited by the model; holds the answer's terms)"
                 : "",
             c->stale ? "  (file changed since ingest)" : "");
    }
    if (r.support)
      printf("Check: the cited passages %s the answer.\n",
             !strcmp(r.support, "supported") ? "support" : "do not clearly support");
    dq_log(&cli->log, DQ_LOG_INFO,
           "%s retrieval, %s attention on %s; %.0f ms total (retrieve %.0f, "
           "recall %.0f, prefill %.0f, generate %.0f)",
           r.retrieval, r.attention, r.backend, r.ms_total, r.ms_retrieve,
           r.recall.ms, r.ms_prefill, r.ms_generate);
  }
  dq_ask_result_clear(&r);
  return DQ_EXIT_OK;
}

cli_command cli_cmd_ask = {
    .name = "ask",
    .usage = "docqa ask QUESTION [--doc PATH]... [--effort high|max] [--k N]\n"
             "       [--passage-tokens N] [--max-tokens N] [--recall] [--pool N]\n"
             "       [--no-recall]",
    .summary = "answer a question from the index, with citations",
    .help =
        "Retrieves the best passages (BM25 + vectors), has the local model\n"
        "answer from them only, and lists the passages the answer cites as\n"
        "path:line_start-line_end (section), or by page: \"p.4\" for a PDF's\n"
        "or a scan's, \"slide 3\" for a deck's, \"sheet 2 rows 14-20\" for a\n"
        "workbook's (its rows as the spreadsheet numbers them); only\n"
        "passages given to the model can be cited. 'docqa show' prints a\n"
        "source's lines as docqa read them: docqa show '[2] lease.pdf p.4'.\n"
        "The prompt holds at most --passage-tokens of passages, best first,\n"
        "each cut to the run of its lines that holds the question's terms,\n"
        "so that prefill stays short; a citation names the lines the model\n"
        "read (--json: each passage's text, and tokens.passages).\n"
        "Beside the answer it quotes the best matching sentence of the\n"
        "retrieved passages word for word, with its lines: the sentence\n"
        "holding the most of the question's rarer words (--json: quote).\n"
        "A small model can garble an answer; the quote cannot, though it\n"
        "may be the wrong sentence. The passages hold the quote's lines\n"
        "(up to half the budget), and the prompt repeats it just before\n"
        "the question (-v -v prints the whole prompt).\n"
        "The answer's words are then checked against what the model read\n"
        "(--json: grounding): an answer that only restates the question,\n"
        "or names what no passage holds (a name, number or identifier it\n"
        "made up), is set aside for the quote, cited; its sentences before\n"
        "the first such name stay when the passages hold their words\n"
        "(grounding.model_answer keeps the model's text).\n"
        "With --doc PATH the candidates are every chunk of those documents:\n"
        "the model reads them all in GSM passes (question, chunks, question\n"
        "again; as many passes as the length needs), scores each chunk by\n"
        "the attention the final question pays to it, fuses that with the\n"
        "retrieval rank, and re-reads the best that fit with full attention,\n"
        "so questions about a whole document work. --recall runs the same\n"
        "pass over 3 x k retrieved candidates for any question (off by\n"
        "default: with the default model it does not improve on retrieval's\n"
        "ranking, see docs/benchmarks.md). GSM settings come from\n"
        "--config/--set (sparse_attention.*, kv_compress.*,\n"
        "prefill.chunk_size).\n"
        "\nExample:\n"
        "  docqa ask \"What is the notice period for termination?\"\n",
    .opts = ask_opts, .min_args = 1, .max_args = 1, .run = run};
