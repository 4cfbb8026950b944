/*
 * cmd_xref.c - `docqa xref SYMBOL`: definitions first, then references, as
 * `path:line:col: kind [in caller]: source line` so editors can jump to them;
 * --json per DESIGN.md. Unknown symbols get "did you mean" suggestions and
 * exit code 1.
 */
#include "cli.h"
#include "pipeline.h"

#include <string.h>

static cli_option xref_opts[] = {
    {.name = "kind", .has_arg = 1, .metavar = "def|ref|call",
     .help = "only definitions, references or calls"},
    {.name = "explain", .has_arg = 0,
     .help = "summarise usage with the model (not yet implemented)"},
    {0}};

static json_t *hit_json(const dq_xref_hit *h, int is_ref) {
  json_t *o = json_object();
  json_object_set_new(o, "path", json_string(h->path));
  json_object_set_new(o, "line", json_integer(h->line));
  json_object_set_new(o, "col", json_integer(h->col));
  json_object_set_new(o, "kind", json_string(h->kind ? h->kind : ""));
  if (is_ref)
    json_object_set_new(o, "caller", h->caller && h->caller[0]
                                         ? json_string(h->caller)
                                         : json_null());
  else
    json_object_set_new(o, "scope", h->scope && h->scope[0]
                                        ? json_string(h->scope)
                                        : json_null());
  return o;
}

static void print_hit(dq_line_reader *lr, const dq_xref_hit *h, int is_ref) {
  const char *ctx = dq_line_reader_get(lr, h->root, h->path, h->line);
  while (*ctx == ' ' || *ctx == '\t')
    ctx++;
  printf("%s:%d:%d: %s", h->path, h->line, h->col, h->kind ? h->kind : "");
  const char *who = is_ref ? h->caller : h->scope;
  if (who && who[0])
    printf(" in %s", who);
  printf(": %s\n", ctx);
}

static int run(dq_cli *cli, cli_option *opts) {
  if (cli_opt(opts, "explain")) {
    cli_error(cli, "--explain is not yet implemented in this version");
    return DQ_EXIT_USAGE;
  }
  dq_xref_result r;
  dq_error err;
  dq_error_clear(&err);
  double t0 = dq_now_ms();
  if (dq_xref_run(cli->index_dir, cli->args[0], cli_opt(opts, "kind"),
                  &cli->log, &r, &err) != DQ_OK)
    return cli_fail(cli, &err);
  double ms = dq_now_ms() - t0;
  int found = r.n_defs + r.n_refs > 0;
  if (cli->json) {
    json_t *o = json_object(), *d = json_array(), *rf = json_array();
    json_object_set_new(o, "symbol", json_string(cli->args[0]));
    for (size_t i = 0; i < r.n_defs; i++)
      json_array_append_new(d, hit_json(&r.defs[i], 0));
    for (size_t i = 0; i < r.n_refs; i++)
      json_array_append_new(rf, hit_json(&r.refs[i], 1));
    json_object_set_new(o, "definitions", d);
    json_object_set_new(o, "references", rf);
    json_t *sg = json_array();
    for (size_t i = 0; i < r.n_suggest; i++)
      json_array_append_new(sg, json_string(r.suggest[i]));
    json_object_set_new(o, "suggestions", sg);
    json_object_set_new(o, "time_ms", json_real(ms));
    cli_json_print(o);
  } else {
    dq_line_reader *lr = dq_line_reader_new();
    for (size_t i = 0; lr && i < r.n_defs; i++)
      print_hit(lr, &r.defs[i], 0);
    for (size_t i = 0; lr && i < r.n_refs; i++)
      print_hit(lr, &r.refs[i], 1);
    dq_line_reader_free(lr);
    if (!found) {
      fprintf(stderr, "docqa xref: '%s' is not defined or used in %s",
              cli->args[0], cli->index_dir);
      for (size_t i = 0; i < r.n_suggest; i++)
        fprintf(stderr, "%s%s", i ? ", " : "; did you mean: ", r.suggest[i]);
      fputc('\n', stderr);
    }
    dq_log(&cli->log, DQ_LOG_INFO, "%zu definitions, %zu references in %.1f ms",
           r.n_defs, r.n_refs, ms);
  }
  dq_xref_result_clear(&r);
  return found ? DQ_EXIT_OK : DQ_EXIT_ERROR;
}

cli_command cli_cmd_xref = {
    .name = "xref",
    .usage = "docqa xref SYMBOL [--kind def|ref|call]",
    .summary = "definitions, references and callers of a symbol or defined term",
    .help =
        "Looks SYMBOL up in the symbols and references extracted at ingest:\n"
        "functions, types and macros in code; defined terms and section\n"
        "numbers in contracts. Prints path:line:col: kind [in caller]: line,\n"
        "definitions first. Exit code 1 when nothing matches (with\n"
        "suggestions of close names).\n"
        "\nExamples:\n"
        "  docqa xref tax_compute_line --kind call\n"
        "  docqa xref \"Confidential Information\"\n"
        "  docqa xref 8.2\n",
    .opts = xref_opts, .min_args = 1, .max_args = 1, .run = run};
