/*
 * output.c - how docqa talks to people and scripts: log lines and errors on
 * stderr, one JSON object on stdout with --json, number parsing with
 * messages that name the option.
 */
#include "cli.h"
#include "engine.h"
#include "pipeline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_log_sink(void *user, dq_log_level level, const char *msg) {
  const dq_cli *cli = user;
  static const char *const names[] = {"error", "warning", "info", "debug",
                                      "trace"};
  fprintf(stderr, "docqa %s: %s%s%s\n", cli->cmd,
          level <= DQ_LOG_WARN ? names[level] : "",
          level <= DQ_LOG_WARN ? ": " : "", msg);
}

void cli_error(const dq_cli *cli, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "docqa %s: error: ", cli->cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_fail(const dq_cli *cli, const dq_error *err) {
  cli_error(cli, "%s", dq_error_msg(err));
  if (err && err->code == DQ_ERR_NOT_IMPLEMENTED)
    return DQ_EXIT_USAGE;
  return DQ_EXIT_ERROR;
}

void cli_json_print(json_t *obj) {
  if (!obj)
    return;
  char *s = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
  json_decref(obj);
  if (s) {
    fputs(s, stdout);
    fputc('\n', stdout);
    free(s);
  }
  fflush(stdout);
}

void cli_format_bytes(char *buf, size_t n, double v) {
  if (v >= 1e9)
    snprintf(buf, n, "%.1f GB", v / 1e9);
  else if (v >= 1e6)
    snprintf(buf, n, "%.1f MB", v / 1e6);
  else
    snprintf(buf, n, "%.0f kB", v / 1e3);
}

long cli_parse_count(const dq_cli *cli, const char *opt_name, const char *text,
                     long min, long max) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || !end || end == text || *end != '\0' || v < min || v > max) {
    cli_error(cli, "--%s must be a whole number from %ld to %ld, not '%s'",
              opt_name, min, max, text);
    return -1;
  }
  return v;
}

int cli_backend_kind(const dq_cli *cli) {
  return strcmp(cli->backend, "cpu") == 0    ? DQ_BACKEND_CPU
         : strcmp(cli->backend, "cuda") == 0 ? DQ_BACKEND_CUDA
                                             : DQ_BACKEND_AUTO;
}

int cli_parse_kv_type(const dq_cli *cli, const char *text, int *type,
                      double *elem_bytes) {
  static const struct {
    const char *name;
    dq_kv_type type;
    double bytes;
  } kinds[] = {{"f16", DQ_KV_F16, 2.0},
               {"q8_0", DQ_KV_Q8_0, 34.0 / 32.0},
               {"f32", DQ_KV_F32, 4.0}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(text, kinds[i].name) == 0) {
      *type = (int)kinds[i].type;
      if (elem_bytes)
        *elem_bytes = kinds[i].bytes;
      return 0;
    }
  cli_error(cli, "--kv-type must be f16, q8_0 or f32, not '%s'", text);
  return -1;
}

int cli_not_implemented(dq_cli *cli, cli_option *opts) {
  cli_error(cli, "'docqa %s' is not yet implemented in this version (%s)",
            cli->cmd, dq_version());
  return DQ_EXIT_USAGE;
}

json_t *cli_quote_json(const dq_quote *q) {
  if (!q->text)
    return json_null();
  json_t *j = json_object();
  json_object_set_new(j, "text", json_string(q->text));
  json_object_set_new(j, "path", json_string(q->path));
  json_object_set_new(j, "root", json_string(q->root));
  json_object_set_new(j, "line_start", json_integer(q->line_start));
  json_object_set_new(j, "line_end", json_integer(q->line_end));
  json_object_set_new(j, "page", q->page ? json_integer(q->page) : json_null());
  json_object_set_new(j, "page_unit",
                      q->page ? json_string(q->unit ? q->unit : "page")
                              : json_null());
  json_object_set_new(j, "section", json_string(q->section));
  json_object_set_new(j, "lines",
                      q->lines ? json_string(q->lines) : json_null());
  json_object_set_new(j, "passage",
                      q->passage ? json_integer(q->passage) : json_null());
  json_object_set_new(j, "columns",
                      q->columns ? json_string(q->columns) : json_null());
  return j;
}

json_t *cli_grounding_json(const dq_ask_result *r) {
  json_t *j = json_object(), *names = json_array();
  for (const char *p = r->unsupported; p && *p;) {
    size_t n = strcspn(p, ",");
    json_array_append_new(names, json_stringn(p, n));
    p += n;
    p += strspn(p, ", ");
  }
  json_object_set_new(j, "verdict",
                      json_string(r->grounding ? r->grounding : "grounded"));
  json_object_set_new(j, "unsupported", names);
  json_object_set_new(j, "kept", json_boolean(r->kept));
  json_object_set_new(j, "model_answer",
                      r->model_answer ? json_string(r->model_answer)
                                      : json_null());
  return j;
}

/* Why the grounding check set the model's words aside (or doubts them). */
static void print_why(const dq_ask_result *r) {
  if (r->grounding && !strcmp(r->grounding, "restates"))
    printf("the model's answer only restates the question");
  else if (r->unsupported)
    printf("the model's answer names %s, which no passage read holds",
           r->unsupported);
  else
    printf("what the model's answer adds is in no passage read");
}

void cli_answer_print(const dq_ask_result *r, int streamed) {
  int doubt = r->grounding && (!strcmp(r->grounding, "unsupported") ||
                               !strcmp(r->grounding, "restates"));
  if (!streamed) {
    fputs(r->answer, stdout);
    if (r->model_answer) {
      printf(r->kept ? "\n\n(Cut short: " : "\n\n(Set aside: ");
      print_why(r);
      printf("; --json has it as grounding.model_answer.)");
    }
  } else if (r->model_answer) {
    /* the facts and the model's words are on the screen */
    const char *rest = r->answer;
    size_t nf = r->facts ? strlen(r->facts) : 0;
    if (nf)
      rest = strlen(rest) > nf + 2 ? rest + nf + 2 : "";
    printf(r->kept ? "\n\nCut short: " : "\n\nSet aside: ");
    print_why(r);
    printf(rest[0] ? ". Instead:\n%s" : "; the index's facts above answer.%s",
           rest);
  }
  if (doubt && !r->model_answer) {
    printf("\n\nCheck: ");
    print_why(r);
    printf(".");
  }
  printf("\n\n");
}

json_t *cli_doc_json(const dq_doc_info *d) {
  json_t *j = json_object();
  json_object_set_new(j, "root", json_string(d->root ? d->root : ""));
  json_object_set_new(j, "path", json_string(d->path ? d->path : ""));
  json_object_set_new(j, "kind", json_string(d->kind ? d->kind : ""));
  json_object_set_new(j, "chunks", json_integer(d->n_chunks));
  json_object_set_new(j, "bytes", json_integer(d->bytes));
  json_object_set_new(j, "mtime_ns", json_integer(d->mtime));
  return j;
}

void cli_print_where(const char *path, const char *unit, int page,
                     int line_start, int line_end, const char *section) {
  char w[DQ_WHERE_MAX];
  printf("%s%s", path, dq_where(w, unit, page, line_start, line_end));
  if (section[0])
    printf(" (%s)", section);
}

void cli_quote_print(const dq_quote *q) {
  if (!q->text)
    return;
  if (q->lines) { /* code: its lines as they stand */
    printf("Best matching lines: ");
    if (q->passage)
      printf("[%d] ", q->passage);
    cli_print_where(q->shown, q->unit, q->page, q->line_start, q->line_end,
                    q->section);
    printf("\n");
    for (const char *p = q->lines; *p;) {
      const char *nl = strchr(p, '\n');
      int n = nl ? (int)(nl - p) : (int)strlen(p);
      printf("    %.*s\n", n, p);
      p += n + (nl != NULL);
    }
    printf("\n");
    return;
  }
  if (q->columns) /* a table's row, and what its cells are */
    printf("Best matching row: \"%s\"\n  columns: %s\n  ", q->text, q->columns);
  else
    printf("Best matching sentence: \"%s\"\n  ", q->text);
  if (q->passage)
    printf("[%d] ", q->passage);
  cli_print_where(q->shown, q->unit, q->page, q->line_start, q->line_end,
                  q->section);
  printf("\n\n");
}
