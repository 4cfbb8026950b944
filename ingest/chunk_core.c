/*
 * chunk_core.c - dq_chunk_document: picks a chunker (code, contract, generic),
 * and the machinery they share: recording symbols/refs with line and column,
 * the list of cuts, and the packer that turns cuts into chunks within the
 * token budget (see chunk_int.h for the packing rules).
 *
 * Token estimate: ceil(bytes / 4) (DQ_CHUNK_BYTES_PER_TOKEN). It is cheap,
 * additive and errs high for code; the engine's tokenizer is not available
 * here. The chunkers themselves live in chunk_code.c, chunk_contract.c and
 * chunk_generic.c.
 */
#include "chunk_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *dq_chunk_kind_name(dq_chunk_kind k) {
  switch (k) {
  case DQ_CHUNK_AUTO:
    return "auto";
  case DQ_CHUNK_GENERIC:
    return "generic";
  case DQ_CHUNK_CONTRACT:
    return "contract";
  case DQ_CHUNK_CODE:
    return "code";
  }
  return "unknown";
}

uint32_t dq_chunk_estimate_tokens(size_t n_bytes) {
  size_t n =
      (n_bytes + DQ_CHUNK_BYTES_PER_TOKEN - 1) / DQ_CHUNK_BYTES_PER_TOKEN;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

ck_lang ck_lang_from_name(const char *name) {
  static const struct {
    const char *name;
    ck_lang lang;
  } names[] = {
      {"c", CK_LANG_C},           {"cpp", CK_LANG_CPP},
      {"c++", CK_LANG_CPP},       {"python", CK_LANG_PYTHON},
      {"javascript", CK_LANG_JS}, {"js", CK_LANG_JS},
      {"typescript", CK_LANG_TS}, {"ts", CK_LANG_TS},
      {"go", CK_LANG_GO},         {"rust", CK_LANG_RUST},
      {"java", CK_LANG_JAVA},     {"csharp", CK_LANG_CSHARP},
      {"c#", CK_LANG_CSHARP},     {"kotlin", CK_LANG_KOTLIN},
      {"php", CK_LANG_PHP},       {"swift", CK_LANG_SWIFT},
      {"ruby", CK_LANG_RUBY},
  };
  if (!name)
    return CK_LANG_NONE;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(name, names[i].name) == 0)
      return names[i].lang;
  return CK_LANG_NONE;
}

static ck_lang text_lang(const dq_text *t, const char *path) {
  if (t->lang[0])
    return ck_lang_from_name(t->lang);
  return ck_lang_from_name(dq_chunk_lang_for_path(path));
}

/* ---- results --------------------------------------------------------- */

static int grow(void **arr, size_t *cap, size_t n, size_t elem) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 64;
  void *p = realloc(*arr, ncap * elem);
  if (!p)
    return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

size_t ck_line_index(const ck_ctx *c, size_t offset) {
  /* Last line start <= offset. line_starts[0] == 0. */
  size_t lo = 0, hi = c->n_lines;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->line_starts[mid] <= offset)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

size_t ck_line_start(const ck_ctx *c, size_t offset) {
  return c->line_starts[ck_line_index(c, offset)];
}

/* whether s[a..b) holds only blanks */
static int blank_span(const char *s, size_t a, size_t b) {
  for (; a < b; a++)
    if (s[a] != ' ' && s[a] != '\t' && s[a] != '\r' && s[a] != '\f')
      return 0;
  return 1;
}

/* Whether the line at ls (of s[0..n)) has blank lines or the text's ends
 * on both sides. */
static int set_apart(const char *s, size_t n, size_t ls) {
  const char *nl = memchr(s + ls, '\n', n - ls);
  size_t le = nl ? (size_t)(nl - s) : n;
  if (ls > 0) { /* the line before: [p, ls - 1) */
    size_t p = ls - 1;
    while (p > 0 && s[p - 1] != '\n')
      p--;
    if (!blank_span(s, p, ls - 1))
      return 0;
  }
  if (le < n) { /* the line after: [le + 1, q) */
    nl = memchr(s + le + 1, '\n', n - le - 1);
    if (!blank_span(s, le + 1, nl ? (size_t)(nl - s) : n))
      return 0;
  }
  return 1;
}

/* Whether s[ls..) opens with a Markdown heading's marks: 1-6 '#' and a
 * blank. */
static int hash_line(const char *s, size_t n, size_t ls) {
  size_t k = 0;
  while (ls + k < n && k < 7 && s[ls + k] == '#')
    k++;
  return k >= 1 && k <= 6 && ls + k < n &&
         (s[ls + k] == ' ' || s[ls + k] == '\t');
}

int ck_fence_line(const char *s, size_t a, size_t e) {
  return e - a >= 3 && (!strncmp(s + a, "```", 3) || !strncmp(s + a, "~~~", 3));
}

int ck_md_heading_ok(ck_ctx *c, size_t ls) {
  const dq_text *t = c->t;
  const char *s = t->text;
  size_t n = t->n_bytes;
  if (t->kind == DQ_DOC_MARKDOWN)
    return 1;
  if (t->kind != DQ_DOC_TEXT && t->kind != DQ_DOC_UNKNOWN)
    return 0; /* a PDF's or a DOCX's "# comment" is text */
  if (!c->text_heads) {
    size_t n_hash = 0, n_apart = 0;
    for (size_t i = 0; i < c->n_lines; i++)
      if (hash_line(s, n, c->line_starts[i])) {
        n_hash++;
        n_apart += set_apart(s, n, c->line_starts[i]);
      }
    int script = n >= 2 && s[0] == '#' && s[1] == '!';
    c->text_heads = !script && 2 * n_apart >= n_hash ? 1 : -1;
  }
  return c->text_heads > 0 && set_apart(s, n, ls);
}

size_t ck_next_line(const ck_ctx *c, size_t offset) {
  /* First line start > offset, by the line index: a scan for the next
   * newline made every call on one long line (minified code) cost the rest
   * of the file, 82% of a 12 MB one-line file's ingest. */
  size_t lo = 0, hi = c->n_lines;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->line_starts[mid] <= offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < c->n_lines ? c->line_starts[lo] : c->t->n_bytes;
}

/* Index of the last element of off[0..n) (ascending, off[0] <= x) that is
 * <= x, searching from `hint` first: the next element or two, else a binary
 * search on the side of the hint that holds x. */
#define LAST_LE(arr, field, n, x, hint)                                        \
  do {                                                                         \
    size_t lo_ = 0, hi_ = (n);                                                 \
    if ((hint) < (n) && arr[hint] field <= (x)) {                              \
      if ((hint) + 1 >= (n) || arr[(hint) + 1] field > (x))                    \
        break;                                                                 \
      if ((hint) + 2 >= (n) || arr[(hint) + 2] field > (x)) {                  \
        (hint)++;                                                              \
        break;                                                                 \
      }                                                                        \
      lo_ = (hint) + 2;                                                        \
    } else if ((hint) < (n)) {                                                 \
      hi_ = (hint);                                                            \
    }                                                                          \
    while (hi_ - lo_ > 1) {                                                    \
      size_t mid_ = lo_ + (hi_ - lo_) / 2;                                     \
      if (arr[mid_] field <= (x))                                              \
        lo_ = mid_;                                                            \
      else                                                                     \
        hi_ = mid_;                                                            \
    }                                                                          \
    (hint) = lo_;                                                              \
  } while (0)

/* Line (as dq_text_locate) and 1-based byte column of offset. */
static void position(ck_ctx *c, size_t offset, uint32_t *line,
                     uint32_t *col, uint32_t *page) {
  const dq_text *t = c->t;
  *line = 1;
  *page = 0;
  if (t->n_marks) {
    LAST_LE(t->marks, .offset, t->n_marks, offset, c->hint_mark);
    *line = t->marks[c->hint_mark].line;
    *page = t->marks[c->hint_mark].page;
  }
  LAST_LE(c->line_starts, , c->n_lines, offset, c->hint_line);
  size_t col0 = offset - c->line_starts[c->hint_line] + 1;
  *col = col0 > UINT32_MAX ? UINT32_MAX : (uint32_t)col0;
}

static char *dupn(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

dq_status ck_add_symbol(ck_ctx *c, const char *name, size_t name_len,
                        const char *kind, size_t offset, const char *scope) {
  dq_doc_parts *p = c->p;
  if (grow((void **)&p->symbols, &c->cap_symbols, p->n_symbols,
           sizeof *p->symbols))
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  dq_symbol *s = &p->symbols[p->n_symbols];
  memset(s, 0, sizeof *s);
  s->name = dupn(name, name_len);
  s->scope = strdup(scope ? scope : "");
  if (!s->name || !s->scope) {
    free(s->name);
    free(s->scope);
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  }
  strncpy(s->kind, kind, sizeof s->kind - 1);
  position(c, offset, &s->line, &s->col, &s->page);
  p->n_symbols++;
  return DQ_OK;
}

dq_status ck_add_ref(ck_ctx *c, const char *name, size_t name_len,
                     const char *kind, size_t offset, const char *caller) {
  dq_doc_parts *p = c->p;
  if (grow((void **)&p->refs, &c->cap_refs, p->n_refs, sizeof *p->refs))
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  dq_ref *r = &p->refs[p->n_refs];
  memset(r, 0, sizeof *r);
  r->name = dupn(name, name_len);
  r->caller = strdup(caller ? caller : "");
  if (!r->name || !r->caller) {
    free(r->name);
    free(r->caller);
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  }
  strncpy(r->kind, kind, sizeof r->kind - 1);
  position(c, offset, &r->line, &r->col, &r->page);
  p->n_refs++;
  return DQ_OK;
}

dq_status ck_add_cut(ck_ctx *c, size_t offset, int hard, const char *section) {
  if (grow((void **)&c->cuts, &c->cap_cuts, c->n_cuts, sizeof *c->cuts))
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  ck_cut *k = &c->cuts[c->n_cuts];
  k->offset = offset;
  k->seq = c->n_cuts;
  k->hard = hard;
  k->section = NULL;
  if (section && !(k->section = strdup(section)))
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  c->n_cuts++;
  return DQ_OK;
}

/* ---- regex helpers ----------------------------------------------------- */

pcre2_code *ck_re(ck_ctx *c, const char *pattern, uint32_t flags) {
  int errcode;
  PCRE2_SIZE erroff;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                 flags, &errcode, &erroff, NULL);
  if (!re) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(errcode, msg, sizeof msg);
    dq_error_set(c->err, DQ_ERR_INTERNAL,
                 "chunker regex does not compile at offset %zu: %s",
                 (size_t)erroff, (const char *)msg);
    return NULL;
  }
  /* JIT is an accelerator only: without it the interpreter gives the same
   * matches. Compiling it costs more than it saves on small texts, which the
   * interpreter scans quickly anyway. */
  if (!c->t || c->t->n_bytes >= CK_JIT_MIN_BYTES)
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
  return re;
}

int ck_re_next(pcre2_code *re, pcre2_match_data *md, const char *subj, size_t n,
               size_t from, PCRE2_SIZE **ov) {
  if (from > n)
    return 0;
  int rc =
      pcre2_match(re, (PCRE2_SPTR)subj, n, from, PCRE2_NO_UTF_CHECK, md, NULL);
  if (rc < 0) /* no match, or a match/depth limit: the scan ends */
    return 0;
  *ov = pcre2_get_ovector_pointer(md);
  return 1;
}

/* ---- packing ----------------------------------------------------------- */

static int cut_cmp(const void *a, const void *b) {
  const ck_cut *x = a, *y = b;
  if (x->offset != y->offset)
    return x->offset < y->offset ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int is_space(unsigned char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
         ch == '\v';
}

/* A chunk's first piece under 1/PIECE_MIN_PART of the budget is too small
 * to end the chunk (ck_pack). */
#define PIECE_MIN_PART 8

/* End of a piece of at most `max` bytes from `pos` inside a block that does
 * not fit: the last line start, else after the last blank, else the last
 * UTF-8 boundary. Always > pos. */
static size_t split_point(const ck_ctx *c, size_t pos, size_t max) {
  const char *s = c->t->text;
  size_t lim = pos + max;
  if (lim >= c->t->n_bytes)
    return c->t->n_bytes;
  for (size_t i = lim; i > pos + 1; i--)
    if (s[i - 1] == '\n')
      return i;
  for (size_t i = lim; i > pos + 1; i--)
    if (s[i - 1] == ' ' || s[i - 1] == '\t')
      return i;
  size_t i = lim;
  while (i > pos + 1 && ((unsigned char)s[i] & 0xC0) == 0x80)
    i--;
  if (i <= pos) /* cannot happen for budgets >= 4 bytes */
    i = lim;
  return i;
}

/* Whether s[a..b) holds only its heading: one line of text at most besides
 * blank lines and lines of one punctuation character repeated ("=====" under
 * a title), or the words of `label`, the last part of the section path
 * `sec` (a title over two lines, "Field Guide" / "to Ponds"). */
static int heading_only(const char *s, size_t a, size_t b, const char *sec) {
  const char *label = sec;
  for (const char *p; (p = strstr(label, " > "));)
    label = p + 3;
  int n_text = 0, same = 1;
  while (a < b) {
    const char *nl = memchr(s + a, '\n', b - a);
    size_t e = nl ? (size_t)(nl - s) : b;
    size_t i = a;
    while (i < e && is_space((unsigned char)s[i]))
      i++;
    size_t k = i;
    while (k < e && s[k] == s[i])
      k++;
    while (k < e && is_space((unsigned char)s[k]))
      k++;
    int rule = k == e && k - i >= 3 && ispunct((unsigned char)s[i]);
    n_text += i < e && !rule;
    for (k = i; !rule && same && k < e; k++) { /* the label's, blanks aside */
      if (is_space((unsigned char)s[k]))
        continue;
      while (*label && is_space((unsigned char)*label))
        label++;
      same = *label == s[k];
      label += same;
    }
    a = e + 1;
  }
  while (*label && is_space((unsigned char)*label))
    label++;
  return n_text <= 1 || (same && !*label);
}

/* Whether the section path `sub` lies under `path` ("A > B" under "A"). */
static int sub_path(const char *sub, const char *path) {
  size_t n = strlen(path);
  return n && !strncmp(sub, path, n) && !strncmp(sub + n, " > ", 3);
}

static dq_status emit(ck_ctx *c, size_t start, size_t end, const char *sec) {
  const char *s = c->t->text;
  dq_doc_parts *p = c->p;
  /* Overlap: repeat the tail of the previous chunk, from a line start (or,
   * when no line starts in the window, from a word start). */
  if (c->overlap_bytes && p->n_chunks > 0) {
    const dq_chunk *prev = &p->chunks[p->n_chunks - 1];
    size_t want = start > c->overlap_bytes ? start - c->overlap_bytes : 0;
    if (want < prev->byte_start)
      want = prev->byte_start;
    size_t ls = want;
    if (ls > 0 && s[ls - 1] != '\n')
      ls = ck_next_line(c, ls);
    while (ls < start && is_space((unsigned char)s[ls]))
      ls++;
    if (ls >= start) { /* long lines: from a word start instead */
      ls = want;
      while (ls < start && !(ls > 0 && is_space((unsigned char)s[ls - 1])))
        ls++;
      while (ls < start && is_space((unsigned char)s[ls]))
        ls++;
    }
    if (ls < start) { /* never across a page break (PDF) */
      uint32_t l0, p0, l1, p1;
      dq_text_locate(c->t, ls, &l0, &p0);
      dq_text_locate(c->t, start, &l1, &p1);
      if (p0 == p1)
        start = ls;
    }
  }
  if (grow((void **)&p->chunks, &c->cap_chunks, p->n_chunks, sizeof *p->chunks))
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  dq_chunk *k = &p->chunks[p->n_chunks];
  memset(k, 0, sizeof *k);
  k->byte_start = start;
  k->byte_end = end;
  k->text = dupn(s + start, end - start);
  k->section = strdup(sec ? sec : "");
  if (!k->text || !k->section) {
    free(k->text);
    free(k->section);
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  }
  dq_text_locate(c->t, start, &k->line_start, &k->page_start);
  dq_text_locate(c->t, end - 1, &k->line_end, &k->page_end);
  k->n_tokens = dq_chunk_estimate_tokens(end - start);
  p->n_chunks++;
  return DQ_OK;
}

dq_status ck_pack(ck_ctx *c) {
  const char *s = c->t->text;
  size_t n = c->t->n_bytes;
  dq_status st;
  if ((st = ck_add_cut(c, 0, 1, NULL)) != DQ_OK)
    return st;
  c->cuts[c->n_cuts - 1].seq = 0; /* the implicit start loses to real cuts */
  for (size_t i = 0; i < c->n_cuts - 1; i++)
    c->cuts[i].seq++;
  qsort(c->cuts, c->n_cuts, sizeof *c->cuts, cut_cmp);
  /* Merge cuts at one offset (hard if any is, the last section wins) and
   * resolve inherited sections. */
  size_t m = 0;
  const char *cur = "";
  for (size_t i = 0; i < c->n_cuts; i++) {
    ck_cut *k = &c->cuts[i];
    if (k->offset >= n) {
      free(k->section);
      continue;
    }
    if (m > 0 && c->cuts[m - 1].offset == k->offset) {
      ck_cut *d = &c->cuts[m - 1];
      d->hard |= k->hard;
      if (k->section) {
        free(d->section);
        d->section = k->section;
        cur = d->section;
      }
      continue;
    }
    if (k->section)
      cur = k->section;
    else if (!(k->section = strdup(cur)))
      return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
    c->cuts[m++] = *k;
  }
  c->n_cuts = m;

  size_t content = c->budget_bytes - c->overlap_bytes;
  size_t pos = 0, ci = 0; /* cuts[ci] is the last cut <= pos */
  while (pos < n) {
    /* the chunk's section is that of its first text: a heading below a
     * PDF page's emptied running header names the chunk, not the section
     * the page cut inherited */
    size_t text0 = pos;
    while (text0 < n && is_space((unsigned char)s[text0]))
      text0++;
    while (ci + 1 < c->n_cuts && c->cuts[ci + 1].offset <= text0)
      ci++;
    const char *sec = c->n_cuts ? c->cuts[ci].section : "";
    size_t e = pos;
    int full = 0; /* the next piece did not fit */
    /* A piece too small to stand alone, a heading whose first clause or
     * first sub-heading follows it, does not end the chunk: a chunk of
     * only "1. Definitions" is found by every question naming the heading
     * and answers none. Before a sub-heading (a hard cut whose path
     * extends this one's), or when it is a prose document's titled first
     * piece ("Mozilla Public License Version 2.0" over "1. Definitions"),
     * the chunk goes on under the next heading's path; before a clause that
     * does not fit it takes the clause's start. */
    for (size_t j = ci + 1;; j++) {
      size_t off = j < c->n_cuts ? c->cuts[j].offset : n;
      if (off - pos > content) {
        full = 1;
        break;
      }
      e = off;
      if (j >= c->n_cuts)
        break;
      if (c->cuts[j].hard) {
        if ((e - pos) * PIECE_MIN_PART < content &&
            (sub_path(c->cuts[j].section, sec) ||
             (c->prose && c->p->n_chunks == 0 && sec[0])) &&
            heading_only(s, pos, e, sec)) {
          sec = c->cuts[j].section;
          continue;
        }
        break;
      }
    }
    if (e == pos || (full && (e - pos) * PIECE_MIN_PART < content))
      e = split_point(c, pos, content);
    size_t a = pos, b = e;
    while (a < b && is_space((unsigned char)s[a]))
      a++;
    while (b > a && is_space((unsigned char)s[b - 1]))
      b--;
    if (a < b && (st = emit(c, a, b, sec)) != DQ_OK)
      return st;
    pos = e;
  }
  return DQ_OK;
}

/* ---- table columns ----------------------------------------------------- */

/* Rows read far from their table's header mean little on their own
 * ("Acme | 2023 | 1200000"): a chunk of a spreadsheet's sheet, or of a
 * .csv/.tsv file, that does not hold its table's header row names the
 * columns in its section, "Sheet: Revenue > columns: Region | Year |
 * Revenue", which the prompt's label, the FTS index (section column) and
 * the quote's terms read. The header is the first of a sheet's first
 * COLUMNS_SCAN_ROWS rows with two cells or more, one of them holding a
 * letter (a title row above it has one cell); a CSV's is its first line.
 * Cut at a cell boundary within COLUMNS_MAX_BYTES. */
#define COLUMNS_SCAN_ROWS 5
#define COLUMNS_MAX_BYTES 240

int dq_csv_path(const char *path) {
  size_t n = path ? strlen(path) : 0;
  return n > 4 && (!strcasecmp(path + n - 4, ".csv") ||
                   !strcasecmp(path + n - 4, ".tsv"));
}

/* Whether a text of this kind at path is a .csv or .tsv table. */
static int csv_file(dq_doc_kind kind, const char *path) {
  return kind == DQ_DOC_TEXT && dq_csv_path(path);
}

/* Whether row line s[0..n) (cells joined by sep) looks like a header. */
static int header_row(const char *s, size_t n, const char *sep) {
  size_t k = strlen(sep);
  int cells = 0, letter = 0;
  for (size_t a = 0; a <= n;) {
    const char *hit = k ? memmem(s + a, n - a, sep, k) : NULL;
    size_t b = hit ? (size_t)(hit - s) : n;
    int full = 0;
    for (size_t i = a; i < b; i++) {
      unsigned char ch = (unsigned char)s[i];
      full |= !is_space(ch) && ch != '"';
      letter |= isalpha(ch) || ch >= 0x80;
    }
    cells += full;
    if (!hit)
      break;
    a = b + k;
  }
  return cells >= 2 && letter;
}

/* A CSV's separator, from its first line [0, e): tab, comma or semicolon. */
static const char *csv_sep(const char *s, size_t e) {
  return memchr(s, '\t', e) ? "\t" : memchr(s, ',', e) ? "," : ";";
}

/* The table's header for a chunk starting at `at`: its line [*hs, *he),
 * when the chunk does not hold it (0: it does, or there is none). *h:
 * the sheet's heading found for the chunk before (chunks come in order),
 * where the search starts. */
static int columns_of(const ck_ctx *c, size_t at, int csv, size_t *h,
                      size_t *hs, size_t *he) {
  const dq_text *t = c->t;
  size_t ls = 0, stop = t->n_bytes;
  if (!csv) { /* the sheet: from the line after its heading */
    while (*h + 1 < t->n_headings && t->headings[*h + 1].offset <= at)
      ++*h;
    if (!t->n_headings || t->headings[*h].offset > at)
      return 0;
    if (*h + 1 < t->n_headings)
      stop = t->headings[*h + 1].offset;
    ls = ck_next_line(c, t->headings[*h].offset);
  }
  for (int row = 0; row < (csv ? 1 : COLUMNS_SCAN_ROWS) && ls < stop; row++) {
    size_t le = ck_next_line(c, ls), e = le > stop ? stop : le;
    while (e > ls && (t->text[e - 1] == '\n' || t->text[e - 1] == '\r'))
      e--;
    const char *sep = csv ? csv_sep(t->text + ls, e - ls) : " | ";
    if (header_row(t->text + ls, e - ls, sep)) {
      *hs = ls;
      *he = e;
      return at > ls;
    }
    ls = le;
  }
  return 0;
}

static dq_status table_columns(ck_ctx *c) {
  const dq_text *t = c->t;
  int csv = csv_file(t->kind, c->path);
  if (!csv && t->kind != DQ_DOC_XLSX && t->kind != DQ_DOC_ODS &&
      t->kind != DQ_DOC_XLS)
    return DQ_OK;
  size_t sheet = 0;
  for (size_t i = 0; i < c->p->n_chunks; i++) {
    dq_chunk *k = &c->p->chunks[i];
    size_t hs, he;
    if (!columns_of(c, k->byte_start, csv, &sheet, &hs, &he))
      continue;
    size_t n = he - hs;
    if (n > COLUMNS_MAX_BYTES) { /* after a cell, else at a character */
      const char *h = t->text + hs;
      const char *sep = csv ? csv_sep(h, n) : " | ";
      size_t cut = COLUMNS_MAX_BYTES, sl = strlen(sep);
      while (cut > 0 && (h[cut] & 0xC0) == 0x80)
        cut--;
      for (size_t j = COLUMNS_MAX_BYTES - sl; j > COLUMNS_MAX_BYTES / 2; j--)
        if (!memcmp(h + j, sep, sl)) {
          cut = j;
          break;
        }
      n = cut;
    }
    dq_strbuf b = {0};
    dq_strbuf_printf(&b, "%s%scolumns: %.*s%s", k->section,
                     k->section[0] ? " > " : "", (int)n, t->text + hs,
                     n < he - hs ? " ..." : "");
    if (b.oom)
      return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
    free(k->section);
    k->section = b.p;
  }
  return DQ_OK;
}

/* ---- entry ------------------------------------------------------------- */

int dq_chunk_version_current(dq_doc_kind kind, const char *path, int stored) {
  if (stored == DQ_CHUNK_VERSION)
    return 1;
  /* 10 read a DOCX's and an ODT's page headers and footers and an XLSX's
   * and an ODS's cell comments; 9 named a table's columns in its chunks'
   * sections (workbooks, .csv and .tsv files); 8 changed how a mailbox
   * reads: version 7 is current for the rest */
  int office = kind == DQ_DOC_DOCX || kind == DQ_DOC_ODT ||
               kind == DQ_DOC_XLSX || kind == DQ_DOC_ODS;
  if (stored == 9)
    return !office;
  int table = kind == DQ_DOC_XLSX || kind == DQ_DOC_ODS || kind == DQ_DOC_XLS ||
              csv_file(kind, path);
  return !office && !table &&
         (stored == 8 || (stored == 7 && kind != DQ_DOC_EMAIL));
}

dq_chunk_kind dq_chunk_detect(const dq_text *t, const char *path) {
  if (!t)
    return DQ_CHUNK_GENERIC;
  if ((t->kind == DQ_DOC_CODE || t->kind == DQ_DOC_UNKNOWN ||
       t->kind == DQ_DOC_TEXT) &&
      text_lang(t, path) != CK_LANG_NONE)
    return DQ_CHUNK_CODE;
  if (t->kind == DQ_DOC_CODE)
    return DQ_CHUNK_GENERIC;
  /* a mail's sections are its messages (and their attachments): one
   * message's numbered list must not make a mailbox a contract */
  if (t->kind == DQ_DOC_EMAIL || t->kind == DQ_DOC_PPTX ||
      t->kind == DQ_DOC_ODP || t->kind == DQ_DOC_XLSX ||
      t->kind == DQ_DOC_ODS || t->kind == DQ_DOC_XLS)
    return DQ_CHUNK_GENERIC; /* a deck's slides, a workbook's sheets */
  dq_doc_parts parts = {0};
  ck_ctx c = {0};
  dq_error err;
  c.t = t;
  c.path = path ? path : "<text>";
  c.p = &parts;
  c.err = &err;
  int score = 0;
  /* Detection needs no line index: ck_chunk_contract(emit=0) only counts. */
  if (ck_chunk_contract(&c, 0, &score) != DQ_OK)
    score = 0;
  return score >= CK_CONTRACT_MIN_SCORE ? DQ_CHUNK_CONTRACT : DQ_CHUNK_GENERIC;
}

dq_status dq_chunk_document(const dq_text *t, const char *path,
                            const dq_chunk_opts *o, dq_doc_parts **out,
                            dq_error *err) {
  if (!out || !t || (t->n_bytes && !t->text))
    return dq_error_set(err, DQ_ERR_ARG, "dq_chunk_document: NULL argument");
  *out = NULL;
  dq_chunk_opts def = {0};
  if (!o)
    o = &def;
  ck_ctx c = {0};
  c.t = t;
  c.path = path ? path : "<text>";
  c.err = err;
  c.log = o->log;
  uint32_t max_tokens =
      o->max_tokens ? o->max_tokens : DQ_CHUNK_MAX_TOKENS_DEFAULT;
  uint32_t overlap = o->overlap_tokens;
  if (overlap > max_tokens / 2)
    overlap = max_tokens / 2;
  c.budget_bytes = (size_t)max_tokens * DQ_CHUNK_BYTES_PER_TOKEN;
  c.overlap_bytes = (size_t)overlap * DQ_CHUNK_BYTES_PER_TOKEN;
  dq_status st = DQ_ERR_NOMEM;
  c.p = calloc(1, sizeof *c.p);
  if (!c.p) {
    dq_error_set(err, st, "%s: out of memory", c.path);
    goto fail;
  }
  if (t->n_bytes == 0) {
    *out = c.p;
    return DQ_OK;
  }
  /* Line index of the text (columns, line starts for cuts). */
  size_t cap = 1024;
  c.line_starts = malloc(cap * sizeof *c.line_starts);
  if (!c.line_starts) {
    dq_error_set(err, st, "%s: out of memory", c.path);
    goto fail;
  }
  c.line_starts[c.n_lines++] = 0;
  for (const char *q = t->text, *end = t->text + t->n_bytes;
       (q = memchr(q, '\n', (size_t)(end - q))) != NULL;) {
    q++;
    if (grow((void **)&c.line_starts, &cap, c.n_lines, sizeof *c.line_starts)) {
      dq_error_set(err, st, "%s: out of memory", c.path);
      goto fail;
    }
    c.line_starts[c.n_lines++] = (size_t)(q - t->text);
  }

  dq_chunk_kind kind = o->force_kind;
  if (kind == DQ_CHUNK_AUTO)
    kind = dq_chunk_detect(t, path);
  ck_lang lang = text_lang(t, path);
  if (kind == DQ_CHUNK_CODE && lang == CK_LANG_NONE)
    kind = DQ_CHUNK_GENERIC;
  dq_log(c.log, DQ_LOG_DEBUG, "%s: %s chunker, budget %u tokens", c.path,
         dq_chunk_kind_name(kind), max_tokens);
  c.prose = kind != DQ_CHUNK_CODE;
  switch (kind) {
  case DQ_CHUNK_CODE:
    st = ck_chunk_code(&c, lang);
    break;
  case DQ_CHUNK_CONTRACT:
    st = ck_chunk_contract(&c, 1, NULL);
    break;
  default:
    st = ck_chunk_generic(&c);
    break;
  }
  if (st != DQ_OK)
    goto fail;
  /* Paged text (PDF): a chunk never spans two pages, so its page is exact
   * and its line range (lines count within a page) is ordered. */
  for (size_t i = 1; i < t->n_marks && kind != DQ_CHUNK_CODE; i++)
    if (t->marks[i].page != t->marks[i - 1].page && t->marks[i].offset > 0 &&
        (st = ck_add_cut(&c, ck_line_start(&c, t->marks[i].offset), 1,
                         NULL)) != DQ_OK)
      goto fail;
  if ((st = ck_pack(&c)) != DQ_OK || (st = table_columns(&c)) != DQ_OK)
    goto fail;
  for (size_t i = 0; i < c.n_cuts; i++)
    free(c.cuts[i].section);
  free(c.cuts);
  free(c.line_starts);
  *out = c.p;
  return DQ_OK;
fail:
  for (size_t i = 0; i < c.n_cuts; i++)
    free(c.cuts[i].section);
  free(c.cuts);
  free(c.line_starts);
  dq_doc_parts_free(c.p);
  return st;
}
