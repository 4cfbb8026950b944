/*
 * cmd_show.c - `docqa show CITATION`: prints the lines a citation names,
 * as docqa read them (pipeline/show.c), under their section, with
 * --context lines around them; --json for scripts and editors.
 */
#include "cli.h"
#include "ingest.h"
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cli_option show_opts[] = {
    {"context", 1, "N",
     "lines shown before and after the lines cited (default 2)", NULL, NULL,
     0, 0},
    {"no-ocr", 0, NULL, "leave scanned pages and images unread", NULL, NULL, 0,
     0},
    {"ocr-lang", 1, "LANGS",
     "Tesseract languages, as given to ingest (default eng)", NULL, NULL, 0,
     0},
    {NULL, 0, NULL, NULL, NULL, NULL, 0, 0}};

/* "--- slide 4 ---" between lines of two pages */
static void page_rule(const dq_show_result *r, int32_t page) {
  char w[DQ_WHERE_MAX];
  printf("      --- %s ---\n", dq_where(w, r->unit, page, 0, 0) + 1);
}

static json_t *result_json(const dq_show_result *r) {
  json_t *j = json_object(), *lines = json_array();
  json_object_set_new(j, "path", json_string(r->path));
  json_object_set_new(j, "root", json_string(r->root));
  json_object_set_new(j, "shown", json_string(r->shown));
  json_object_set_new(j, "kind", json_string(r->kind));
  json_object_set_new(j, "page", r->page ? json_integer(r->page) : json_null());
  json_object_set_new(j, "page_unit",
                      r->page ? json_string(r->unit) : json_null());
  json_object_set_new(j, "line_start", r->line_start
                                           ? json_integer(r->line_start)
                                           : json_null());
  json_object_set_new(j, "line_end",
                      r->line_end ? json_integer(r->line_end) : json_null());
  json_object_set_new(j, "section", json_string(r->section));
  json_object_set_new(j, "stale", json_boolean(r->stale));
  for (size_t i = 0; i < r->n_lines; i++) {
    const dq_show_line *l = &r->lines[i];
    json_t *x = json_object();
    json_object_set_new(x, "page", l->page ? json_integer(l->page)
                                           : json_null());
    json_object_set_new(x, "line", json_integer(l->line));
    json_object_set_new(x, "cited", json_boolean(l->cited));
    json_object_set_new(x, "text", json_string(l->text));
    json_array_append_new(lines, x);
  }
  json_object_set_new(j, "lines", lines);
  return j;
}

static int run(dq_cli *cli, cli_option *opts) {
  dq_show_opts o = {.index_dir = cli->index_dir,
                    .context = 2,
                    .no_ocr = cli_opt(opts, "no-ocr") != NULL,
                    .ocr_lang = cli_opt(opts, "ocr-lang"),
                    .n_threads = cli->threads,
                    .log = &cli->log};
  const char *ctx = cli_opt(opts, "context");
  if (ctx) {
    char *end;
    long v = strtol(ctx, &end, 10);
    if (end == ctx || *end || v < 0 || v > 1000) {
      fprintf(stderr, "docqa show: --context takes 0 to 1000 lines, not "
                      "'%s'\n",
              ctx);
      return DQ_EXIT_USAGE;
    }
    o.context = (int)v;
  }
  if (o.ocr_lang && !dq_ocr_lang_ok(o.ocr_lang)) {
    fprintf(stderr, "docqa show: --ocr-lang '%s': languages are names of "
                    "Tesseract's traineddata joined by '+', as 'deu+eng'\n",
            o.ocr_lang);
    return DQ_EXIT_USAGE;
  }
  /* the citation may come as several words: "lease.pdf" "p.4" */
  size_t len = 1;
  for (int i = 0; i < cli->n_args; i++)
    len += strlen(cli->args[i]) + 1;
  char *citation = calloc(1, len);
  if (!citation) {
    fprintf(stderr, "docqa show: out of memory\n");
    return DQ_EXIT_ERROR;
  }
  for (int i = 0; i < cli->n_args; i++) {
    if (i)
      strcat(citation, " ");
    strcat(citation, cli->args[i]);
  }
  dq_show_result r;
  dq_error err;
  dq_error_clear(&err);
  dq_status s = dq_show_run(&o, citation, &r, &err);
  free(citation);
  if (s != DQ_OK)
    return cli_fail(cli, &err);
  if (r.stale)
    dq_log(&cli->log, DQ_LOG_WARN,
           "%s changed since it was ingested: the lines cited may have moved "
           "('docqa ingest' reads it again)",
           r.shown);
  if (cli->json) {
    cli_json_print(result_json(&r));
    dq_show_result_free(&r);
    return DQ_EXIT_OK;
  }
  int32_t first = r.n_lines ? r.lines[0].line : 0;
  int32_t last = r.n_lines ? r.lines[r.n_lines - 1].line : 0;
  int around = 0; /* lines not cited shown: mark the cited ones */
  for (size_t i = 0; i < r.n_lines; i++)
    around |= !r.lines[i].cited;
  /* the citation as asked: "lease.pdf p.4:3-9 (section)" */
  char w[DQ_WHERE_MAX];
  printf("%s%s", r.shown,
         dq_where(w, r.unit, r.page, r.line_start ? r.line_start : first,
                  r.line_start ? r.line_end : last));
  if (r.page && r.line_start && strcmp(r.unit, "sheet"))
    printf(":%d-%d", r.line_start, r.line_end);
  printf(r.section[0] ? " (%s)\n" : "%s\n", r.section);
  for (size_t i = 0; i < r.n_lines; i++) {
    const dq_show_line *l = &r.lines[i];
    if (i && l->page != r.lines[i - 1].page)
      page_rule(&r, l->page);
    printf("%c%6d  %s\n", around && l->cited ? '>' : ' ', l->line, l->text);
  }
  dq_show_result_free(&r);
  return DQ_EXIT_OK;
}

cli_command cli_cmd_show = {
    .name = "show",
    .usage = "docqa show CITATION [--context N] [--no-ocr] [--ocr-lang LANGS]",
    .summary = "print the lines a citation names, as docqa read them",
    .help =
        "Prints the lines an answer, a search result or xref cites, read\n"
        "again from the file by the reader ingest used, under the section\n"
        "they are in, with --context lines around them (marked '>': the\n"
        "cited ones). A citation counts what its reader counts: a PDF's\n"
        "lines within a page, a DOCX's or ODT's paragraphs, a deck's lines\n"
        "within a slide, a workbook's rows as the spreadsheet numbers them;\n"
        "places an editor does not open at, so show is how to check one.\n"
        "CITATION is written as docqa writes it, copied whole or in words:\n"
        "  path:12-20  path:12  path p.4  path p.4:3-9  path slide 3\n"
        "  path sheet 2 rows 14-20  path sheet 2 row 15\n"
        "an answer's '[2] ' before it and a ' (section)' after it are\n"
        "ignored, as is what follows an xref line's 'path:LINE:COL' (a line\n"
        "of xref's output works whole); a path alone prints the whole\n"
        "document. The path is a file on disk, or as search and ask show it\n"
        "(in an index of several roots behind the root's name). A file\n"
        "changed since ingest is\n"
        "warned of (its lines may have moved). Scanned pages are read by OCR\n"
        "again, as ingest read them (--ocr-lang as given to ingest).\n"
        "--json: the document, the citation and each line with its page,\n"
        "line number, whether it is cited, and text.\n"
        "\nExamples:\n"
        "  docqa show 'contracts/lease.pdf p.4:3-9'\n"
        "  docqa show contracts/msa.txt:159-171 --context 0\n"
        "  docqa show board.pptx slide 3\n"
        "  docqa show book.xlsx sheet 2 rows 14-20 --json\n",
    .opts = show_opts,
    .min_args = 1,
    .max_args = -1,
    .run = run};
