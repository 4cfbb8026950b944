/*
 * cmd_status.c - `docqa status`: what the index holds, without changing
 * it: documents per ingested root and per kind, chunks and how many are
 * embedded (and with which model), symbols and references, chat sessions,
 * the files' sizes; --docs lists every document. Says what to run when
 * chunks wait for embeddings. --json gives the same as one object.
 */
#include "cli.h"
#include "pipeline.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static cli_option status_opts[] = {
    {"docs", 0, NULL,
     "list every document: root/path, kind, chunks, bytes, file time", NULL,
     NULL, 0, 0},
    {NULL, 0, NULL, NULL, NULL, NULL, 0, 0}};

/* "2026-12-06 04:05" (UTC) of ns since the epoch; "-" when 0. */
static void fmt_time(char *buf, size_t n, int64_t ns) {
  time_t t = (time_t)(ns / 1000000000);
  struct tm tm;
  if (ns <= 0 || !gmtime_r(&t, &tm) ||
      !strftime(buf, n, "%Y-%m-%d %H:%M UTC", &tm))
    snprintf(buf, n, "-");
}

typedef struct docs_out {
  int json;
  json_t *arr;
} docs_out;

static int print_doc(void *user, const dq_doc_info *d) {
  docs_out *o = user;
  char when[40], size[32];
  if (o->json) {
    json_array_append_new(o->arr, cli_doc_json(d));
    return 0;
  }
  fmt_time(when, sizeof when, d->mtime);
  cli_format_bytes(size, sizeof size, (double)d->bytes);
  printf("  %s/%s  %s, %lld chunk%s, %s, %s\n", d->root ? d->root : "",
         d->path ? d->path : "", d->kind ? d->kind : "?",
         (long long)d->n_chunks, d->n_chunks == 1 ? "" : "s", size, when);
  return 0;
}

static json_t *report_json(const dq_cli *cli, const dq_report *r) {
  const dq_index_stats *st = &r->stats;
  json_t *o = json_object();
  json_object_set_new(o, "index", json_string(cli->index_dir));
  json_object_set_new(o, "documents", json_integer(st->n_docs));
  json_object_set_new(o, "chunks", json_integer(st->n_chunks));
  json_object_set_new(o, "embedded", json_integer(st->n_embedded));
  json_object_set_new(o, "vectors", json_integer(st->n_vectors));
  json_object_set_new(o, "vector_index",
                      json_string(st->vectors_ivf ? "ivf" : "flat"));
  if (st->vectors_ivf) {
    json_object_set_new(o, "nlist", json_integer(st->nlist));
    json_object_set_new(o, "nprobe", json_integer(st->nprobe));
  }
  json_object_set_new(o, "embed_model",
                      r->embed_model ? json_string(r->embed_model)
                                     : json_null());
  json_object_set_new(o, "embed_dim", json_integer(r->embed_dim));
  json_object_set_new(o, "symbols", json_integer(st->n_symbols));
  json_object_set_new(o, "references", json_integer(st->n_refs));
  json_object_set_new(o, "sessions", json_integer(st->n_sessions));
  json_object_set_new(o, "turns", json_integer(st->n_turns));
  json_object_set_new(o, "db_bytes", json_integer(st->db_bytes));
  json_object_set_new(o, "vectors_bytes", json_integer(st->vectors_bytes));
  json_t *roots = json_array();
  for (size_t i = 0; i < r->n_roots; i++) {
    const dq_report_root *g = &r->roots[i];
    json_t *j = json_object();
    json_object_set_new(j, "root", json_string(g->root));
    json_object_set_new(j, "label", json_string(g->label ? g->label : ""));
    json_object_set_new(j, "documents", json_integer(g->n_docs));
    json_object_set_new(j, "chunks", json_integer(g->n_chunks));
    json_object_set_new(j, "bytes", json_integer(g->bytes));
    json_object_set_new(j, "newest_mtime_ns", json_integer(g->newest_mtime));
    json_array_append_new(roots, j);
  }
  json_object_set_new(o, "roots", roots);
  json_t *kinds = json_array();
  for (size_t i = 0; i < r->n_kinds; i++) {
    json_t *j = json_object();
    json_object_set_new(j, "kind", json_string(r->kinds[i].kind));
    json_object_set_new(j, "documents", json_integer(r->kinds[i].n_docs));
    json_object_set_new(j, "chunks", json_integer(r->kinds[i].n_chunks));
    json_array_append_new(kinds, j);
  }
  json_object_set_new(o, "kinds", kinds);
  return o;
}

static void report_print(const dq_cli *cli, const dq_report *r) {
  const dq_index_stats *st = &r->stats;
  char a[32], b[32], c[32], when[40];
  cli_format_bytes(a, sizeof a, (double)(st->db_bytes + st->vectors_bytes));
  cli_format_bytes(b, sizeof b, (double)st->db_bytes);
  cli_format_bytes(c, sizeof c, (double)st->vectors_bytes);
  printf("index      %s (%s: database %s, vectors %s)\n", cli->index_dir, a, b,
         c);
  printf("documents  %lld in %zu root%s, %lld chunks\n", (long long)st->n_docs,
         r->n_roots, r->n_roots == 1 ? "" : "s", (long long)st->n_chunks);
  for (size_t i = 0; i < r->n_roots; i++) {
    const dq_report_root *g = &r->roots[i];
    cli_format_bytes(a, sizeof a, (double)g->bytes);
    fmt_time(when, sizeof when, g->newest_mtime);
    printf("  %s", g->root);
    if (g->label && g->label[0])
      printf(" (shown as %s%s)", g->label,
             g->label[strlen(g->label) - 1] == '/' ? "" : "/");
    printf(": %lld document%s, %lld chunk%s, %s, newest file %s\n",
           (long long)g->n_docs, g->n_docs == 1 ? "" : "s",
           (long long)g->n_chunks, g->n_chunks == 1 ? "" : "s", a, when);
  }
  if (r->n_kinds) {
    printf("by kind   ");
    for (size_t i = 0; i < r->n_kinds; i++)
      printf("%s %s %lld", i ? "," : "", r->kinds[i].kind,
             (long long)r->kinds[i].n_docs);
    printf("\n");
  }
  if (r->embed_model)
    printf("vectors    %lld of %lld chunks embedded (%s, %d-d; %s search)\n",
           (long long)st->n_embedded, (long long)st->n_chunks, r->embed_model,
           r->embed_dim, st->vectors_ivf ? "approximate (IVF)" : "exact");
  else
    printf("vectors    none (BM25 and symbols only)\n");
  printf("symbols    %lld definitions, %lld references\n",
         (long long)st->n_symbols, (long long)st->n_refs);
  printf("chat       %lld session%s, %lld turns\n", (long long)st->n_sessions,
         st->n_sessions == 1 ? "" : "s", (long long)st->n_turns);
}

static int run(dq_cli *cli, cli_option *opts) {
  int docs = cli_opt(opts, "docs") != NULL;
  docs_out d = {.json = cli->json};
  if (docs && cli->json)
    d.arr = json_array();
  if (docs && !cli->json)
    printf("documents (root/path, kind, chunks, bytes, file time):\n");
  dq_report r;
  dq_error err;
  dq_error_clear(&err);
  dq_status s = dq_report_run(cli->index_dir, &cli->log,
                              docs ? print_doc : NULL, &d, &r, &err);
  if (s != DQ_OK) {
    json_decref(d.arr);
    return cli_fail(cli, &err);
  }
  int64_t waiting = r.stats.n_chunks - r.stats.n_embedded;
  if (cli->json) {
    json_t *o = report_json(cli, &r);
    if (d.arr)
      json_object_set_new(o, "docs", d.arr);
    cli_json_print(o);
  } else {
    if (docs)
      printf("\n");
    report_print(cli, &r);
  }
  if (r.embed_model && waiting > 0)
    dq_log(&cli->log, DQ_LOG_WARN,
           "%lld chunks have no embedding yet (search ranks them by BM25 "
           "alone); run 'docqa ingest --embed-only --index %s'",
           (long long)waiting, cli->index_dir);
  dq_report_clear(&r);
  return DQ_EXIT_OK;
}

cli_command cli_cmd_status = {
    .name = "status",
    .usage = "docqa status [--docs]",
    .summary = "what the index holds: documents, chunks, vectors, symbols",
    .help = "Reads the index (never writes it) and prints what it holds: each\n"
            "ingested root with its documents, chunks, bytes and newest file;\n"
            "documents by kind; how many chunks are embedded and with which\n"
            "model (and whether vector search is exact or approximate);\n"
            "symbols and references; chat sessions; the size of the database\n"
            "and the vector file. Warns when chunks still wait for their\n"
            "embeddings. --docs lists every document first. --json gives one\n"
            "object (docs: with --docs); file times are the sources' own,\n"
            "in UTC.\n"
            "\nExamples:\n"
            "  docqa status\n"
            "  docqa status --docs --json | jq -r '.docs[].path'\n",
    .opts = status_opts,
    .min_args = 0,
    .max_args = 0,
    .run = run};
