/*
 * show.c - `docqa show CITATION`: the lines a citation names, as docqa
 * read them. A citation of a DOCX counts its paragraphs, of a PDF the
 * lines of a page as poppler lays them out, of a workbook a sheet's rows:
 * places no editor opens at. Show reads the document again with its ingest
 * reader and prints those lines, with a few around them, under the
 * section they are in, so that an answer's source can be checked.
 *
 * A citation is taken as docqa writes it (cite.c dq_where), copied from an
 * answer, a search result or xref: "path:12-20", "path:12", "path p.4",
 * "path p.4:3-9", "path slide 3", "path sheet 2 rows 14-20", "path sheet 2
 * row 15", after "[n] " and before " (section)", or a path alone (the whole
 * document). The path is one of the index's documents, named as on disk,
 * as stored or as shown (forget.c pl_docs_at).
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- parsing ---- */

/* Digits at s as a number 1..INT32_MAX: their count, 0 when none or out
 * of range. */
static size_t number(const char *s, int32_t *v) {
  size_t i = 0;
  long long x = 0;
  while (isdigit((unsigned char)s[i])) {
    x = x * 10 + (s[i] - '0');
    if (x > INT32_MAX)
      return 0;
    i++;
  }
  if (!i || x < 1)
    return 0;
  *v = (int32_t)x;
  return i;
}

/* "A" or "A-B" at s: its length, 0 when none (B < A is refused). */
static size_t range(const char *s, int32_t *a, int32_t *b) {
  size_t i = number(s, a);
  if (!i)
    return 0;
  *b = *a;
  if (s[i] == '-') {
    size_t k = number(s + i + 1, b);
    if (!k || *b < *a)
      return 0;
    i += 1 + k;
  }
  return i;
}

static int starts(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

/* What may follow a location: nothing, or blanks and "(" (a section) */
static int tail_ok(const char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  return *s == '\0' || *s == '(';
}

/* After an xref site's line: ":COL: ..." or ":COL" (xref's
 * "path:LINE:COL: kind in scope: text"). */
static int xref_tail(const char *s) {
  int32_t col;
  size_t k = s[0] == ':' ? number(s + 1, &col) : 0;
  return k && (s[1 + k] == ':' || s[1 + k] == '\0');
}

/* A location at s ("p.4", "p.4:3-9", "slide 3", "sheet 2 rows 14-20",
 * "p.4:12:7: ..." of xref, ...) into c: its length, 0 when s holds none
 * followed by tail_ok. */
static size_t location(const char *s, dq_cite_ref *c) {
  static const struct {
    const char *word, *unit;
  } units[] = {{"p.", "page"},
               {"page ", "page"},
               {"slide ", "slide"},
               {"sheet ", "sheet"}};
  for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
    if (!starts(s, units[u].word))
      continue;
    size_t i = strlen(units[u].word);
    while (s[i] == ' ') /* "slide  3" */
      i++;
    size_t k = number(s + i, &c->page);
    if (!k)
      return 0;
    i += k;
    c->unit = units[u].unit;
    c->line_start = c->line_end = 0;
    if (s[i] == ':') {
      if (!(k = range(s + i + 1, &c->line_start, &c->line_end)))
        return 0;
      i += 1 + k;
      if (c->line_start == c->line_end && xref_tail(s + i))
        return i;
    } else if (starts(s + i, " rows ") || starts(s + i, " row ")) {
      size_t w = starts(s + i, " rows ") ? 6 : 5;
      if (!(k = range(s + i + w, &c->line_start, &c->line_end)))
        return 0;
      i += w + k;
    }
    return tail_ok(s + i) ? i : 0;
  }
  return 0;
}

int dq_cite_parse(const char *s, dq_cite_ref *c) {
  memset(c, 0, sizeof *c);
  while (*s == ' ' || *s == '\t')
    s++;
  /* "[3] ": an answer's source line */
  if (s[0] == '[') {
    size_t i = 1;
    while (isdigit((unsigned char)s[i]))
      i++;
    if (i > 1 && s[i] == ']' && s[i + 1] == ' ')
      for (s += i + 2; *s == ' ';)
        s++;
  }
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
    n--;
  if (!n || n >= sizeof c->path)
    return -1;
  char buf[sizeof c->path];
  memcpy(buf, s, n);
  buf[n] = '\0';
  /* the first " p.4", " slide 3", ... that parses whole (an xref site's
   * text after it may hold another) */
  for (size_t i = 1; i < n; i++) {
    dq_cite_ref t = {0};
    if (buf[i] == ' ' && location(buf + i + 1, &t)) {
      size_t p = i;
      while (p && buf[p - 1] == ' ')
        p--;
      if (!p)
        break;
      *c = t;
      memcpy(c->path, buf, p);
      c->path[p] = '\0';
      return 0;
    }
  }
  /* "path:12-20"; "path:12:7: def in f: ..." (xref's): the first colon
   * that lines follow */
  for (size_t i = 1; i < n; i++) {
    if (buf[i] != ':')
      continue;
    int32_t a, b;
    size_t k = range(buf + i + 1, &a, &b);
    if (k &&
        (tail_ok(buf + i + 1 + k) || (a == b && xref_tail(buf + i + 1 + k)))) {
      c->line_start = a;
      c->line_end = b;
      memcpy(c->path, buf, i);
      c->path[i] = '\0';
      return 0;
    }
  }
  memcpy(c->path, buf, n + 1);
  return 0;
}

/* ---- the lines ---- */

void dq_show_result_free(dq_show_result *r) {
  if (!r)
    return;
  free(r->root);
  free(r->path);
  free(r->shown);
  free(r->kind);
  free(r->section);
  for (size_t i = 0; i < r->n_lines; i++)
    free(r->lines[i].text);
  free(r->lines);
  memset(r, 0, sizeof *r);
}

/* The headings' path at `offset` of t: "Article 9 > 9.1 Governing Law". */
static char *section_at(const dq_text *t, size_t offset) {
  enum { MAX_LEVEL = 16 };
  const char *stack[MAX_LEVEL] = {0};
  for (size_t i = 0; i < t->n_headings && t->headings[i].offset <= offset;
       i++) {
    int lv = t->headings[i].level;
    lv = lv < 1 ? 1 : lv > MAX_LEVEL ? MAX_LEVEL : lv;
    stack[lv - 1] = t->headings[i].title;
    for (int k = lv; k < MAX_LEVEL; k++)
      stack[k] = NULL;
  }
  dq_strbuf b = {0};
  dq_strbuf_adds(&b, "");
  for (int k = 0; k < MAX_LEVEL; k++)
    if (stack[k])
      dq_strbuf_printf(&b, "%s%s", b.n ? " > " : "", stack[k]);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

typedef struct text_line {
  size_t off, len;
  uint32_t line, page;
} text_line;

/* The lines of t, each with its source line and page. */
static text_line *split_lines(const dq_text *t, size_t *n) {
  size_t cap = 0;
  for (size_t i = 0; i < t->n_bytes; i++)
    cap += t->text[i] == '\n';
  text_line *v = malloc((cap + 1) * sizeof *v);
  if (!v)
    return NULL;
  *n = 0;
  for (size_t off = 0; off < t->n_bytes;) {
    const char *nl = memchr(t->text + off, '\n', t->n_bytes - off);
    size_t len = nl ? (size_t)(nl - (t->text + off)) : t->n_bytes - off;
    text_line *l = &v[(*n)++];
    l->off = off;
    l->len = len;
    while (l->len && t->text[off + l->len - 1] == '\r')
      l->len--;
    dq_text_locate(t, off, &l->line, &l->page);
    off += len + 1;
  }
  return v;
}

/* "12" or "12-20" */
static const char *range_text(char *buf, size_t cap, int32_t a, int32_t b) {
  if (a == b)
    snprintf(buf, cap, "%d", a);
  else
    snprintf(buf, cap, "%d-%d", a, b);
  return buf;
}

/* Whether line l is one citation c names. */
static int cited(const text_line *l, const dq_cite_ref *c) {
  return (!c->page || l->page == (uint32_t)c->page) &&
         (!c->line_start || (l->line >= (uint32_t)c->line_start &&
                             l->line <= (uint32_t)c->line_end));
}

/* The error for a citation no line of t answers: what t has instead. */
static dq_status no_lines(const dq_text *t, const text_line *v, size_t n,
                          const dq_cite_ref *c, const char *name,
                          const char *unit, dq_error *err) {
  const char *what = strcmp(unit, "sheet") ? "lines" : "rows";
  char w[DQ_WHERE_MAX + 32], rg[32];
  range_text(rg, sizeof rg, c->line_start, c->line_end);
  if (!strcmp(unit, "sheet"))
    dq_where(w, unit, c->page, c->line_start, c->line_end);
  else
    snprintf(w, sizeof w, " %s%d:%s", !strcmp(unit, "page") ? "p." : "slide ",
             c->page, rg);
  uint32_t lo = UINT32_MAX, hi = 0;
  for (size_t i = 0; i < n; i++)
    if (!c->page || v[i].page == (uint32_t)c->page) {
      lo = v[i].line < lo ? v[i].line : lo;
      hi = v[i].line > hi ? v[i].line : hi;
    }
  if (c->page && lo == UINT32_MAX && (uint32_t)c->page <= t->n_pages)
    return dq_error_set(err, DQ_ERR_NOTFOUND,
                        "%s: %s %d holds no text docqa reads (a chart, a "
                        "picture, an empty %s?)",
                        name, unit, c->page, unit);
  if (c->page && lo == UINT32_MAX)
    return dq_error_set(err, DQ_ERR_NOTFOUND, "%s has no %s %d (it has %u %ss)",
                        name, unit, c->page, t->n_pages, unit);
  if (lo == UINT32_MAX)
    return dq_error_set(err, DQ_ERR_NOTFOUND, "%s: no text to show", name);
  if (c->page)
    return dq_error_set(err, DQ_ERR_NOTFOUND,
                        "%s%s: no such %s (%s %d has %s %u-%u)", name, w, what,
                        unit, c->page, what, lo, hi);
  return dq_error_set(err, DQ_ERR_NOTFOUND,
                      "%s:%s: no such lines (it has lines %u-%u)", name, rg,
                      lo, hi);
}

/* Finds the one document c->path names in the index, into r. */
static dq_status find_doc(const dq_show_opts *o, dq_cite_ref *c,
                          dq_show_result *r, dq_error *err) {
  dq_index *idx = NULL;
  dq_status s = pl_index_open(o->index_dir, 1, o->log, &idx, err);
  if (s != DQ_OK)
    return s;
  pl_doc_ref *v = NULL;
  size_t n = 0, cap = 0, hits = 0;
  s = pl_docs_at(idx, c->path, &v, &n, &cap, &hits, err);
  /* a path alone that ends in " (section)": the path before it */
  char *paren = s == DQ_OK && !n && !c->page && !c->line_start
                    ? strstr(c->path, " (")
                    : NULL;
  if (paren) {
    while (strstr(paren + 1, " ("))
      paren = strstr(paren + 1, " (");
    *paren = '\0';
    s = pl_docs_at(idx, c->path, &v, &n, &cap, &hits, err);
  }
  if (s == DQ_OK && n == 0)
    s = dq_error_set(err, DQ_ERR_NOTFOUND,
                     "%s: no document in the index is named so (a file on "
                     "disk, or a path as search and ask show it); 'docqa "
                     "status --docs' lists them",
                     c->path);
  else if (s == DQ_OK && n > 1)
    s = dq_error_set(err, DQ_ERR_ARG,
                     "%s names %zu documents (a folder?): name one, as "
                     "'%s'",
                     c->path, n, v[0].path);
  if (s == DQ_OK) {
    r->root = strdup(v[0].root);
    r->path = strdup(v[0].path);
    r->kind = strdup(v[0].kind);
    r->shown = dq_index_shown_path(idx, v[0].root, v[0].path);
    r->stale = pl_doc_changed(idx, v[0].root, v[0].path);
    if (!r->root || !r->path || !r->kind || !r->shown)
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  }
  pl_doc_refs_free(v, n);
  dq_index_close(idx);
  return s;
}

dq_status dq_show_run(const dq_show_opts *o, const char *citation,
                      dq_show_result *r, dq_error *err) {
  memset(r, 0, sizeof *r);
  dq_cite_ref c;
  if (dq_cite_parse(citation, &c) != 0)
    return dq_error_set(err, DQ_ERR_ARG,
                        "'%s': not a citation (a path, 'path:12-20', 'path "
                        "p.4', 'path slide 3', 'path sheet 2 rows 14-20')",
                        citation);
  dq_status s = find_doc(o, &c, r, err);
  if (s != DQ_OK) {
    dq_show_result_free(r);
    return s;
  }
  r->unit = dq_page_unit(r->kind);
  r->page = c.page;
  r->line_start = c.line_start;
  r->line_end = c.line_end;
  char full[PATH_MAX];
  struct stat st;
  if (snprintf(full, sizeof full, "%s/%s", r->root, r->path) >=
      (int)sizeof full) {
    s = dq_error_set(err, DQ_ERR_ARG, "%s/%s: path too long", r->root,
                     r->path);
    goto fail;
  }
  if (stat(full, &st) != 0) {
    s = dq_error_set(err, DQ_ERR_IO,
                     "%s: %s; the index still holds it ('docqa forget %s' "
                     "removes it)",
                     full, strerror(errno), r->shown);
    goto fail;
  }
  dq_read_opts ro = {0};
  ro.log = o->log;
  ro.no_ocr = o->no_ocr;
  ro.ocr_lang = o->ocr_lang;
  ro.n_threads = o->n_threads;
  dq_text *t = NULL;
  if ((s = dq_read(full, DQ_DOC_UNKNOWN, &ro, &t, NULL, err)) != DQ_OK)
    goto fail;
  size_t n = 0;
  text_line *v = split_lines(t, &n);
  if (!v) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto read_fail;
  }
  int paged = t->n_pages > 0;
  if (c.page && !paged) {
    s = dq_error_set(err, DQ_ERR_ARG,
                     "%s has no pages: cite its lines, as '%s:12-20'",
                     r->shown, r->shown);
    goto lines_fail;
  }
  if (!c.page && c.line_start && paged) {
    char rg[32];
    range_text(rg, sizeof rg, c.line_start, c.line_end);
    int sheet = !strcmp(r->unit, "sheet"), slide = !strcmp(r->unit, "slide");
    s = dq_error_set(
        err, DQ_ERR_ARG,
        "%s counts its %s in each %s: say which, as '%s%s%s%s'", r->shown,
        sheet ? "rows" : "lines", r->unit, r->shown,
        sheet   ? " sheet 1"
        : slide ? " slide 1"
                : " p.1",
        sheet ? (c.line_start == c.line_end ? " row " : " rows ") : ":", rg);
    goto lines_fail;
  }
  size_t first = SIZE_MAX, last = 0;
  for (size_t i = 0; i < n; i++) {
    if (cited(&v[i], &c)) {
      first = first == SIZE_MAX ? i : first;
      last = i;
    }
  }
  if (first == SIZE_MAX) {
    s = no_lines(t, v, n, &c, r->shown, r->unit, err);
    goto lines_fail;
  }
  /* lines around the cited ones, where the citation names lines */
  size_t ctx = c.line_start && o->context > 0 ? (size_t)o->context : 0;
  size_t from = first > ctx ? first - ctx : 0;
  size_t to = last + ctx < n ? last + ctx : n - 1;
  r->lines = calloc(to - from + 1, sizeof *r->lines);
  r->section = section_at(t, v[first].off);
  if (!r->lines || !r->section) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto lines_fail;
  }
  for (size_t i = from; i <= to; i++) {
    dq_show_line *l = &r->lines[r->n_lines++];
    l->page = (int32_t)v[i].page;
    l->line = (int32_t)v[i].line;
    l->cited = i >= first && i <= last && cited(&v[i], &c);
    l->text = malloc(v[i].len + 1);
    if (!l->text) {
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
      goto lines_fail;
    }
    memcpy(l->text, t->text + v[i].off, v[i].len);
    l->text[v[i].len] = '\0';
  }
  free(v);
  dq_text_free(t);
  return DQ_OK;
lines_fail:
  free(v);
read_fail:
  dq_text_free(t);
fail:
  dq_show_result_free(r);
  return s;
}
