/*
 * cmd_ingest.c - `docqa ingest PATH...`: add folders and files to the index.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static cli_option ingest_opts[] = {
    {.name = "no-embed", .has_arg = 0,
     .help = "store text, symbols and BM25 only; embed later"},
    {.name = "embed-only", .has_arg = 0,
     .help = "only embed chunks stored without embeddings"},
    {0}};

static int run(dq_cli *cli, cli_option *opts) {
  for (int i = 0; i < cli->n_args; i++) {
    struct stat st;
    if (stat(cli->args[i], &st) != 0) {
      cli_error(cli, "%s: %s", cli->args[i], strerror(errno));
      return DQ_EXIT_ERROR;
    }
  }
  return cli_not_implemented(cli, opts);
}

cli_command cli_cmd_ingest = {
    .name = "ingest",
    .usage = "docqa ingest PATH... [--no-embed | --embed-only]",
    .summary = "add folders and files to the index (incremental)",
    .help = "Walks each PATH (honouring .gitignore and .docqaignore), reads\n"
            "text, Markdown, HTML/XML, DOCX, PDF and source code, cuts chunks\n"
            "with section paths, extracts symbols, and stores everything in the\n"
            "index. Unchanged files are skipped; deleted files are removed.\n",
    .opts = ingest_opts, .min_args = 1, .max_args = -1, .run = run};

static cli_option search_opts[] = {
    {.name = "k", .has_arg = 1, .metavar = "N",
     .help = "number of results (default 10)"},
    {0}};
cli_command cli_cmd_search = {
    .name = "search",
    .usage = "docqa search QUERY [--k N]",
    .summary = "hybrid retrieval (BM25 + vectors) without the model",
    .help = "Prints the best passages for QUERY with path, lines and section.\n",
    .opts = search_opts, .min_args = 1, .max_args = 1,
    .run = cli_not_implemented};
