/*
 * cmd_xref.c - `docqa xref SYMBOL`: definitions first, then references, as
 * `path:line:col: kind [in caller]: source line` so editors can jump to them;
 * --json per DESIGN.md. Unknown symbols get "did you mean" suggestions and
 * exit code 1. --explain adds the model's summary of how the symbol is used
 * (streamed on a terminal) and the snippets it cites as path:line.
 */
#include "cli.h"
#include "pipeline.h"

#include <string.h>
#include <unistd.h>

static cli_option xref_opts[] = {
    {.name = "kind", .has_arg = 1, .metavar = "def|ref|call",
     .help = "only definitions, references or calls"},
    {.name = "explain", .has_arg = 0,
     .help = "summarise how the symbol is used with the model, citing\n"
             "                         the definitions and sites it read"},
    {.name = "sites", .has_arg = 1, .metavar = "N",
     .help = "with --explain: reference/call sites to show the model\n"
             "                         (default 8, spread over files)"},
    {.name = "max-tokens", .has_arg = 1, .metavar = "N",
     .help = "with --explain: longest explanation in tokens (default 192)"},
    {0}};

/* The site's line as shown: its leading blanks dropped, cut to
 * DQ_XREF_LINE_BYTES around the column ("..." where cut), into buf. */
static const char *site_text(dq_line_reader *lr, const dq_xref_hit *h,
                             char *buf, size_t cap) {
  const char *line =
      dq_line_reader_get(lr, h->root, h->path, h->page, h->line);
  const char *ctx = line + strspn(line, " \t");
  size_t n = strlen(ctx), start, end;
  size_t col = h->col > 0 ? (size_t)h->col - 1 : 0; /* byte offset in line */
  size_t pos = col > (size_t)(ctx - line) ? col - (size_t)(ctx - line) : 0;
  dq_line_window(ctx, n, pos < n ? pos : 0, DQ_XREF_LINE_BYTES, &start, &end);
  snprintf(buf, cap, "%s%.*s%s", start ? "..." : "", (int)(end - start),
           ctx + start, end < n ? "..." : "");
  return buf;
}

/* is_ref: 0 a definition, 1 a reference; via: for a reference of a
 * qualified lookup, how its owner was told (NULL: not known). */
static json_t *hit_json(dq_line_reader *lr, const dq_xref_hit *h, int is_ref,
                        int qualified, const char *via) {
  json_t *o = json_object();
  char text[DQ_XREF_LINE_BYTES + 8];
  json_object_set_new(o, "path", json_string(h->path));
  json_object_set_new(o, "root", json_string(h->root ? h->root : ""));
  json_object_set_new(o, "line", json_integer(h->line));
  json_object_set_new(o, "col", json_integer(h->col));
  json_object_set_new(o, "page",
                      h->page > 0 ? json_integer(h->page) : json_null());
  json_object_set_new(o, "kind", json_string(h->kind ? h->kind : ""));
  json_object_set_new(o, "stale", json_boolean(h->stale));
  json_object_set_new(o, "text",
                      json_string(site_text(lr, h, text, sizeof text)));
  if (is_ref) {
    json_object_set_new(o, "caller", h->caller && h->caller[0]
                                         ? json_string(h->caller)
                                         : json_null());
    if (qualified) {
      json_object_set_new(o, "owner_known", json_boolean(via != NULL));
      json_object_set_new(o, "via", via ? json_string(via) : json_null());
    }
  } else
    json_object_set_new(o, "scope", h->scope && h->scope[0]
                                        ? json_string(h->scope)
                                        : json_null());
  return o;
}

static const char k_stale[] = "file changed since ingest";
static const char k_unknown_stale[] =
    "owner not known; file changed since ingest";

static void print_hit(dq_line_reader *lr, const dq_xref_hit *h, int is_ref,
                      const char *note) {
  char text[DQ_XREF_LINE_BYTES + 8];
  site_text(lr, h, text, sizeof text);
  /* a PDF's lines count within their page: "lease.pdf p.3:12:5" */
  if (h->page > 0)
    printf("%s p.%d:%d:%d: %s", h->shown ? h->shown : h->path, h->page,
           h->line, h->col, h->kind ? h->kind : "");
  else
    printf("%s:%d:%d: %s", h->shown ? h->shown : h->path, h->line, h->col,
           h->kind ? h->kind : "");
  const char *who = is_ref ? h->caller : h->scope;
  if (who && who[0])
    printf(" in %s", who);
  if (note)
    printf(" (%s)", note);
  printf(": %s\n", text);
}

static int stream_out(void *user, const char *piece, size_t len) {
  (void)user;
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  return 0;
}

static json_t *explanation_json(const dq_xref_explanation *ex,
                                const char *model) {
  json_t *j = json_object(), *cits = json_array();
  json_object_set_new(j, "text", json_string(ex->text));
  for (size_t i = 0; i < ex->n_snippets; i++) {
    const dq_xref_snippet *sn = &ex->snippets[i];
    json_t *x = json_object();
    json_object_set_new(x, "n", json_integer((json_int_t)i + 1));
    json_object_set_new(x, "path", json_string(sn->hit->path));
    json_object_set_new(x, "root",
                        json_string(sn->hit->root ? sn->hit->root : ""));
    json_object_set_new(x, "line", json_integer(sn->hit->line));
    json_object_set_new(x, "col", json_integer(sn->hit->col));
    json_object_set_new(x, "kind", json_string(sn->hit->kind ? sn->hit->kind : ""));
    json_object_set_new(x, "definition", json_boolean(sn->is_def));
    json_object_set_new(x, "line_start", json_integer(sn->line_start));
    json_object_set_new(x, "line_end", json_integer(sn->line_end));
    json_object_set_new(x, "page", sn->page ? json_integer(sn->page) : json_null());
    json_object_set_new(x, "cited", json_boolean(sn->cited != 0));
    json_object_set_new(x, "inferred", json_boolean(sn->cited == 2));
    json_array_append_new(cits, x);
  }
  json_object_set_new(j, "citations", cits);
  json_t *t = json_object();
  json_object_set_new(t, "context", json_real(ex->ms_context));
  json_object_set_new(t, "load", json_real(ex->ms_load));
  json_object_set_new(t, "prefill", json_real(ex->ms_prefill));
  json_object_set_new(t, "generate", json_real(ex->ms_generate));
  json_object_set_new(t, "total", json_real(ex->ms_total));
  json_object_set_new(j, "timings_ms", t);
  const char *base = strrchr(model, '/');
  json_object_set_new(j, "model", json_string(base ? base + 1 : model));
  json_object_set_new(j, "backend", json_string(ex->backend ? ex->backend : "cpu"));
  json_t *tk = json_object();
  json_object_set_new(tk, "prompt", json_integer(ex->n_prompt_tokens));
  json_object_set_new(tk, "answer", json_integer(ex->n_answer_tokens));
  json_object_set_new(j, "tokens", tk);
  return j;
}

/* After the streamed or printed text: the snippets it cites, as path:line
 * (all snippets read when it cites none). */
static void print_sources(const dq_xref_explanation *ex) {
  int any = 0;
  for (size_t i = 0; i < ex->n_snippets; i++)
    any |= ex->snippets[i].cited;
  printf("\n\n%s\n", any ? "Sources:"
                         : "The explanation cites no snippet; snippets read:");
  for (size_t i = 0; i < ex->n_snippets; i++) {
    const dq_xref_snippet *sn = &ex->snippets[i];
    if (any && !sn->cited)
      continue;
    printf("  [%zu] %s:%d%s\n", i + 1,
           sn->hit->shown ? sn->hit->shown : sn->hit->path, sn->hit->line,
           sn->cited == 2
               ? "  (not cited by the model; holds the explanation's terms)"
               : "");
  }
}

static int run(dq_cli *cli, cli_option *opts) {
  int explain = cli_opt(opts, "explain") != NULL;
  char model_buf[4096];
  dq_xref_explain_opts eo = {0};
  eo.model = cli->model ? cli->model
                        : cli_default_model(model_buf, sizeof model_buf);
  eo.backend = cli->backend;
  eo.n_threads = cli->threads;
  eo.log = &cli->log;
  const char *v = cli_opt(opts, "sites");
  if (v) {
    long n = cli_parse_count(cli, "sites", v, 1, 64);
    if (n < 0)
      return DQ_EXIT_USAGE;
    eo.max_sites = (size_t)n;
  }
  v = cli_opt(opts, "max-tokens");
  if (v) {
    long n = cli_parse_count(cli, "max-tokens", v, 1, 4096);
    if (n < 0)
      return DQ_EXIT_USAGE;
    eo.max_tokens = (int)n;
  }
  if (!explain && (cli_opt(opts, "sites") || cli_opt(opts, "max-tokens"))) {
    cli_error(cli, "--sites and --max-tokens only apply with --explain");
    return DQ_EXIT_USAGE;
  }
  /* usage errors (exit 2) before the index is opened; dq_xref_run checks
   * the same for other callers */
  const char *kind = cli_opt(opts, "kind");
  if (kind && strcmp(kind, "def") && strcmp(kind, "ref") &&
      strcmp(kind, "call")) {
    cli_error(cli, "--kind must be def, ref or call, not '%s'", kind);
    return DQ_EXIT_USAGE;
  }
  if (!cli->args[0][0]) {
    cli_error(cli, "the symbol is empty");
    return DQ_EXIT_USAGE;
  }
  int streaming = explain && !cli->json && isatty(STDOUT_FILENO);
  if (streaming)
    eo.on_text = stream_out;

  dq_xref_result r;
  dq_error err;
  dq_error_clear(&err);
  double t0 = dq_now_ms();
  if (dq_xref_run(cli->index_dir, cli->args[0], kind, &cli->log, &r, &err) !=
      DQ_OK)
    return cli_fail(cli, &err);
  double ms = dq_now_ms() - t0;
  int found = r.n_defs + r.n_refs > 0;
  int rc = found ? DQ_EXIT_OK : DQ_EXIT_ERROR;
  dq_xref_explanation ex = {0};
  if (cli->json) {
    /* One object on stdout: explain first, so a failure leaves it empty. */
    json_t *ej = NULL;
    if (explain && found) {
      if (dq_xref_explain(&eo, cli->args[0], &r, &ex, &err) != DQ_OK) {
        dq_xref_result_clear(&r);
        return cli_fail(cli, &err);
      }
      ej = explanation_json(&ex, eo.model);
    }
    json_t *o = json_object(), *d = json_array(), *rf = json_array();
    json_object_set_new(o, "symbol", json_string(cli->args[0]));
    int q = r.owner != NULL;
    dq_line_reader *lr = dq_line_reader_new();
    for (size_t i = 0; lr && i < r.n_defs; i++)
      json_array_append_new(d, hit_json(lr, &r.defs[i], 0, q, NULL));
    for (size_t i = 0; lr && i < r.n_refs; i++)
      json_array_append_new(
          rf, hit_json(lr, &r.refs[i], 1, q, q ? r.via[i] : NULL));
    dq_line_reader_free(lr);
    json_object_set_new(o, "definitions", d);
    json_object_set_new(o, "references", rf);
    json_t *sg = json_array();
    for (size_t i = 0; i < r.n_suggest; i++)
      json_array_append_new(sg, json_string(r.suggest[i]));
    json_object_set_new(o, "suggestions", sg);
    json_t *stale = json_array();
    for (size_t i = 0; i < r.n_stale; i++)
      json_array_append_new(stale, json_string(r.stale[i]));
    json_object_set_new(o, "stale_files", stale);
    if (q) {
      json_object_set_new(o, "owner", json_string(r.owner));
      json_object_set_new(o, "member", json_string(r.member));
      json_object_set_new(o, "other_owner_uses",
                          json_integer((json_int_t)r.n_refs_other));
    }
    json_object_set_new(o, "time_ms", json_real(ms));
    if (explain)
      json_object_set_new(o, "explanation", ej ? ej : json_null());
    cli_json_print(o);
  } else {
    dq_line_reader *lr = dq_line_reader_new();
    for (size_t i = 0; lr && i < r.n_defs; i++)
      print_hit(lr, &r.defs[i], 0, r.defs[i].stale ? k_stale : NULL);
    for (size_t i = 0; lr && i < r.n_refs; i++) {
      int known = i < r.n_refs_known;
      print_hit(lr, &r.refs[i], 1,
                r.refs[i].stale ? (known ? k_stale : k_unknown_stale)
                : known         ? NULL
                                : "owner not known");
    }
    dq_line_reader_free(lr);
    dq_log(&cli->log, DQ_LOG_INFO, "%zu definitions, %zu references in %.1f ms",
           r.n_defs, r.n_refs, ms);
    if (found && explain) {
      printf("\n");
      fflush(stdout);
      if (dq_xref_explain(&eo, cli->args[0], &r, &ex, &err) != DQ_OK)
        rc = cli_fail(cli, &err);
      else {
        if (!ex.text[strspn(ex.text, " \t\r\n")])
          fputs("(the model gave no explanation)", stdout);
        else if (!streaming)
          fputs(ex.text, stdout);
        print_sources(&ex);
        dq_log(&cli->log, DQ_LOG_INFO,
               "explained from %zu snippets on %s; %.0f ms total (context "
               "%.0f, load %.0f, prefill %.0f, generate %.0f)",
               ex.n_snippets, ex.backend, ex.ms_total, ex.ms_context,
               ex.ms_load, ex.ms_prefill, ex.ms_generate);
      }
    }
  }
  if (r.owner && found && r.n_refs + r.n_refs_other > 0 &&
      cli->verbosity >= 0) {
    size_t unknown = r.n_refs - r.n_refs_known;
    fflush(stdout); /* after the hits when both go to one file */
    fprintf(stderr, "docqa xref: %zu uses of %s in %s shown by their site",
            r.n_refs_known, r.member, r.owner);
    if (unknown)
      fprintf(stderr, ", %zu whose owner is not known (marked)", unknown);
    if (r.n_refs_other)
      fprintf(stderr, ", %zu of other owners left out", r.n_refs_other);
    fprintf(stderr, "\n");
  }
  if (r.n_stale && cli->verbosity >= 0) {
    fflush(stdout);
    fprintf(stderr,
            "docqa xref: warning: %zu file%s changed since %s ingested, so "
            "%s lines may have moved (marked): ",
            r.n_stale, r.n_stale > 1 ? "s" : "",
            r.n_stale > 1 ? "they were" : "it was",
            r.n_stale > 1 ? "their" : "its");
    for (size_t i = 0; i < r.n_stale && i < 5; i++)
      fprintf(stderr, "%s%s", i ? ", " : "", r.stale[i]);
    if (r.n_stale > 5)
      fprintf(stderr, " and %zu more", r.n_stale - 5);
    fprintf(stderr, "; 'docqa ingest' again updates the index\n");
  }
  if (!found && r.owner && r.n_suggest) {
    fprintf(stderr, "docqa xref: no definition of %s in %s in %s; %s is "
                    "defined as: ",
            r.member, r.owner, cli->index_dir, r.member);
    for (size_t i = 0; i < r.n_suggest; i++)
      fprintf(stderr, "%s%s", i ? ", " : "", r.suggest[i]);
    fprintf(stderr, "%s\n", explain ? "; nothing to explain" : "");
  } else if (!found) {
    fprintf(stderr, "docqa xref: '%s' is not defined or used in %s",
            cli->args[0], cli->index_dir);
    for (size_t i = 0; i < r.n_suggest; i++)
      fprintf(stderr, "%s%s", i ? ", " : "; did you mean: ", r.suggest[i]);
    fprintf(stderr, "%s\n", explain ? "; nothing to explain" : "");
  }
  dq_xref_explanation_clear(&ex);
  dq_xref_result_clear(&r);
  return rc;
}

cli_command cli_cmd_xref = {
    .name = "xref",
    .usage = "docqa xref SYMBOL [--kind def|ref|call] [--explain [--sites N]]",
    .summary = "definitions, references and callers of a symbol or defined term",
    .help =
        "Looks SYMBOL up in the symbols and references extracted at ingest:\n"
        "functions, methods, types and macros in code, and outside function\n"
        "bodies variables, constants, fields, properties and enumerators\n"
        "(\"field in Point\"); defined terms and section numbers in\n"
        "contracts. Prints path:line:col: kind [in scope or caller]: line,\n"
        "definitions first. Exit code 1 when nothing matches (with\n"
        "suggestions of close names).\n"
        "\nOwner.member (also ns::Type::member or Type#member) asks for\n"
        "the member of one type, not every use of the name: definitions\n"
        "whose scope ends with the owner, then uses whose site shows that\n"
        "owner - self/this in its methods (or a derived class's), the bare\n"
        "name where the language implies this, Type.member, a receiver\n"
        "declared above the site (parameter, local, field, C typedef,\n"
        "chains a.b->c) as that type or one derived from it; where no\n"
        "other type defines the name, every use - then, marked \"owner not\n"
        "known\", uses whose site does not tell (an expression or untyped\n"
        "receiver). Uses of other owners, locals of the same name and\n"
        "other languages' uses are left out; stderr says how many. --json\n"
        "adds owner_known and via to each reference.\n"
        "\n--explain then gives the language model (--model, default as for\n"
        "ask) the definitions and up to --sites reference/call sites as\n"
        "numbered snippets with a few lines of context, prints its short\n"
        "summary of how SYMBOL is used, and lists the snippets it cites as\n"
        "path:line. Only snippets the model read can be cited. A symbol with\n"
        "no results is not sent to the model.\n"
        "\nExamples:\n"
        "  docqa xref tax_compute_line --kind call\n"
        "  docqa xref \"Confidential Information\"\n"
        "  docqa xref 8.2\n"
        "  docqa xref invoice_line.net --kind ref\n"
        "  docqa xref money_parse --explain\n",
    .opts = xref_opts, .min_args = 1, .max_args = 1, .run = run};
