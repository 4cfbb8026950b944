/*
 * chunk_generic.c - the chunker for prose that is neither code nor contract:
 * headings (from the reader's dq_text.headings, or Markdown '#' lines outside
 * code fences when the reader gave none; in plain text only '#' lines set
 * apart by blank lines, ck_md_heading_ok) start a new chunk and set the
 * section path "Guide > Install"; paragraphs (a line after an empty line)
 * are soft cuts packed up to the budget. No symbols or references.
 */
#include "chunk_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LEVELS 8

static dq_status heading(ck_ctx *c, char **stack, int level, const char *title,
                         size_t title_len, size_t ls) {
  if (level < 1)
    level = 1;
  if (level > MAX_LEVELS)
    level = MAX_LEVELS;
  for (int l = level - 1; l < MAX_LEVELS; l++) {
    free(stack[l]);
    stack[l] = NULL;
  }
  if (!(stack[level - 1] = strndup(title, title_len)))
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  size_t n = 0;
  for (int l = 0; l < MAX_LEVELS; l++)
    if (stack[l])
      n += strlen(stack[l]) + 3;
  char *path = malloc(n + 1);
  if (!path)
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  path[0] = '\0';
  for (int l = 0; l < MAX_LEVELS; l++)
    if (stack[l]) {
      if (path[0])
        strcat(path, " > ");
      strcat(path, stack[l]);
    }
  dq_status st = ck_add_cut(c, ls, 1, path);
  free(path);
  return st;
}

dq_status ck_chunk_generic(ck_ctx *c) {
  const dq_text *t = c->t;
  const char *s = t->text;
  char *stack[MAX_LEVELS] = {0};
  dq_status st = DQ_OK;
  for (size_t h = 0; h < t->n_headings && st == DQ_OK; h++) {
    const dq_heading *hd = &t->headings[h];
    if (hd->offset >= t->n_bytes || !hd->title)
      continue;
    st = heading(c, stack, hd->level, hd->title, strlen(hd->title),
                 ck_line_start(c, hd->offset));
  }
  int md = t->n_headings == 0 &&
           (t->kind == DQ_DOC_MARKDOWN || t->kind == DQ_DOC_TEXT ||
            t->kind == DQ_DOC_UNKNOWN);
  int fence = 0, prev_empty = 0;
  for (size_t li = 0; li < c->n_lines && st == DQ_OK; li++) {
    size_t ls = c->line_starts[li];
    size_t le = li + 1 < c->n_lines ? c->line_starts[li + 1] - 1 : t->n_bytes;
    size_t a = ls;
    while (a < le && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r'))
      a++;
    int empty = a >= le;
    if (md && ck_fence_line(s, a, le))
      fence = !fence;
    int level = 0;
    if (md && !fence && a == ls)
      while (a + level < le && s[a + level] == '#')
        level++;
    if (level >= 1 && level <= 6 && a + level < le &&
        (s[a + level] == ' ' || s[a + level] == '\t') &&
        ck_md_heading_ok(c, ls)) {
      size_t b = a + level, e = le;
      while (b < e && (s[b] == ' ' || s[b] == '\t'))
        b++;
      while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' ||
                       s[e - 1] == '\r' || s[e - 1] == '#'))
        e--;
      st = heading(c, stack, level, s + b, e - b, ls);
    } else if (!empty && prev_empty) {
      st = ck_add_cut(c, ls, 0, NULL);
    }
    prev_empty = empty;
  }
  for (int l = 0; l < MAX_LEVELS; l++)
    free(stack[l]);
  return st;
}
