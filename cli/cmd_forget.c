/*
 * cmd_forget.c - `docqa forget PATH...`: removes documents from the index
 * (a file, a folder, a whole ingested root), with their chunks, vectors,
 * symbols and references; --dry-run lists what would go. --json gives the
 * documents and the counts.
 */
#include "cli.h"
#include "pipeline.h"

#include <stdio.h>

static cli_option forget_opts[] = {
    {"dry-run", 0, NULL, "list what would be removed; change nothing", NULL,
     NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, NULL, 0, 0}};

typedef struct out {
  const dq_cli *cli;
  json_t *arr;
  int dry_run;
} out;

static int on_doc(void *user, const dq_doc_info *d) {
  out *o = user;
  if (o->arr) {
    json_array_append_new(o->arr, cli_doc_json(d));
  } else if (o->cli->verbosity >= 0) {
    printf("%s %s/%s (%lld chunk%s)\n", o->dry_run ? "would forget" : "forgot",
           d->root, d->path, (long long)d->n_chunks,
           d->n_chunks == 1 ? "" : "s");
  }
  return 0;
}

static int run(dq_cli *cli, cli_option *opts) {
  out o = {.cli = cli, .dry_run = cli_opt(opts, "dry-run") != NULL};
  if (cli->json)
    o.arr = json_array();
  dq_forget_opts fo = {.index_dir = cli->index_dir,
                       .log = &cli->log,
                       .dry_run = o.dry_run,
                       .on_doc = on_doc,
                       .user = &o};
  dq_forget_summary sum;
  dq_error err;
  dq_error_clear(&err);
  dq_status s = dq_forget_run(&fo, (const char *const *)cli->args,
                              (size_t)cli->n_args, &sum, &err);
  if (s != DQ_OK) {
    json_decref(o.arr);
    return cli_fail(cli, &err);
  }
  if (cli->json) {
    json_t *j = json_object();
    json_object_set_new(j, "dry_run", json_boolean(o.dry_run));
    json_object_set_new(j, "documents", json_integer(sum.n_docs));
    json_object_set_new(j, "chunks", json_integer(sum.n_chunks));
    json_object_set_new(j, "forgotten", o.arr);
    cli_json_print(j);
  } else if (cli->verbosity >= 0) {
    printf("%s %lld document%s, %lld chunks\n",
           o.dry_run ? "would forget" : "forgot", (long long)sum.n_docs,
           sum.n_docs == 1 ? "" : "s", (long long)sum.n_chunks);
  }
  return DQ_EXIT_OK;
}

cli_command cli_cmd_forget = {
    .name = "forget",
    .usage = "docqa forget PATH... [--dry-run]",
    .summary = "remove documents (a file, a folder, a root) from the index",
    .help =
        "Removes every document at or under each PATH from the index, with\n"
        "its chunks, vectors, symbols and references, one transaction per\n"
        "document (a crash keeps what was done). The files themselves are\n"
        "not touched. PATH is a file or folder on disk, as given to ingest\n"
        "(it may since have been deleted), or a document's path as stored,\n"
        "relative to its root (as 'docqa status --docs' and ask --doc show\n"
        "it), or as search and ask show it (in an index of several roots\n"
        "behind the root's name: beta/claim.c; the name alone is the whole\n"
        "root). Every PATH is matched first: one that matches nothing is an\n"
        "error and nothing is removed. --dry-run lists what would go.\n"
        "Re-ingesting a folder already drops the files deleted from it;\n"
        "forget is for what should leave the index while it stays on disk.\n"
        "\nExamples:\n"
        "  docqa forget ~/contracts/old --dry-run\n"
        "  docqa forget contracts/mutual_nda.md\n",
    .opts = forget_opts,
    .min_args = 1,
    .max_args = -1,
    .run = run};
