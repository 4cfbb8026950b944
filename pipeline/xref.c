/*
 * xref.c - `docqa xref`: definitions, references and callers of a symbol
 * (code identifiers, contract defined terms and section numbers) from the
 * symbols/refs tables, plus "did you mean" names and the source lines that
 * give each hit its context.
 */
#include "pipeline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dq_xref_result_clear(dq_xref_result *r) {
  if (!r)
    return;
  dq_xref_hits_free(r->defs, r->n_defs);
  dq_xref_hits_free(r->refs, r->n_refs);
  dq_strings_free(r->suggest, r->n_suggest);
  memset(r, 0, sizeof *r);
}

dq_status dq_xref_run(const char *index_dir, const char *symbol,
                      const char *kind, const dq_logger *log,
                      dq_xref_result *res, dq_error *err) {
  memset(res, 0, sizeof *res);
  if (!symbol || !symbol[0])
    return dq_error_set(err, DQ_ERR_ARG, "the symbol is empty");
  if (kind && strcmp(kind, "def") && strcmp(kind, "ref") &&
      strcmp(kind, "call"))
    return dq_error_set(err, DQ_ERR_ARG,
                        "--kind must be def, ref or call, not '%s'", kind);
  dq_index *idx = NULL;
  dq_index_opts io = {0};
  io.read_only = 1;
  io.logger = log;
  dq_status s = dq_index_open(index_dir, &io, &idx, err);
  if (s != DQ_OK) {
    if (s == DQ_ERR_NOTFOUND)
      dq_error_prefix(err, "no index at %s (create one with 'docqa ingest "
                           "PATH')", index_dir);
    return s;
  }
  if (!kind || !strcmp(kind, "def")) {
    s = dq_index_symbols_find(idx, symbol, NULL, &res->defs, &res->n_defs);
    if (s != DQ_OK)
      goto fail;
  }
  if (!kind || strcmp(kind, "def")) {
    const char *rk = kind && !strcmp(kind, "call") ? "call" : NULL;
    s = dq_index_refs_find(idx, symbol, rk, &res->refs, &res->n_refs);
    if (s != DQ_OK)
      goto fail;
  }
  if (res->n_defs == 0 && res->n_refs == 0) {
    s = dq_index_symbols_similar(idx, symbol, 8, &res->suggest,
                                 &res->n_suggest);
    if (s != DQ_OK)
      goto fail;
  }
  dq_index_close(idx);
  return DQ_OK;
fail:
  dq_error_set(err, s, "%s", dq_index_errmsg(idx));
  dq_index_close(idx);
  dq_xref_result_clear(res);
  return s;
}

struct dq_line_reader {
  FILE *f;
  char file[PATH_MAX];
  int line;  /* lines consumed from f so far */
  char *buf; /* the last line read */
  size_t cap;
};

dq_line_reader *dq_line_reader_new(void) {
  return calloc(1, sizeof(dq_line_reader));
}

void dq_line_reader_free(dq_line_reader *lr) {
  if (!lr)
    return;
  if (lr->f)
    fclose(lr->f);
  free(lr->buf);
  free(lr);
}

/* Binary formats have no meaningful source lines to show. */
static int has_text_lines(const char *path) {
  const char *dot = strrchr(path, '.');
  return !dot || (strcmp(dot, ".pdf") && strcmp(dot, ".docx"));
}

const char *dq_line_reader_get(dq_line_reader *lr, const char *root,
                               const char *path, int line) {
  char full[PATH_MAX];
  if (line < 1 || !has_text_lines(path) ||
      snprintf(full, sizeof full, "%s/%s", root, path) >= (int)sizeof full)
    return "";
  if (!lr->f || strcmp(full, lr->file) != 0 || line <= lr->line) {
    if (lr->f)
      fclose(lr->f);
    lr->f = fopen(full, "rb");
    lr->line = 0;
    snprintf(lr->file, sizeof lr->file, "%s", full);
    if (!lr->f)
      return "";
  }
  ssize_t n = 0;
  while (lr->line < line) {
    n = getline(&lr->buf, &lr->cap, lr->f);
    if (n < 0) {
      fclose(lr->f);
      lr->f = NULL;
      return "";
    }
    lr->line++;
  }
  while (n > 0 && (lr->buf[n - 1] == '\n' || lr->buf[n - 1] == '\r'))
    lr->buf[--n] = '\0';
  return lr->buf;
}
