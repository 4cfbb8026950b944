/*
 * read_text.c - readers for plain text, source code and Markdown: decoding to
 * UTF-8 with one mark per source line, and Markdown headings.
 *
 * Encodings: a BOM decides (EF BB BF UTF-8, FF FE UTF-16LE, FE FF UTF-16BE).
 * Without one, bytes that are valid UTF-8 are UTF-8; otherwise, when invalid
 * sequences outnumber valid multi-byte ones the file is taken as Latin-1
 * (with Windows-1252's printable characters in 0x80-0x9F, which is what
 * "Latin-1" files in the wild usually are); else it is UTF-8 with its invalid
 * sequences replaced by U+FFFD and counted. Only LF ends a line (CRLF is
 * folded to LF; a lone CR is kept and does not count).
 *
 * Markdown headings: ATX ("#".."######" then a space or end of line, at most
 * three spaces of indent, optional closing #s) and setext (a paragraph
 * underlined by "===" for level 1 or "---" for level 2), outside fenced code
 * blocks (``` or ~~~) and indented code. A heading's offset is the start of
 * the line where it begins; its title is the text without the markup.
 *
 * Plain text headings (dq_read_text): reStructuredText's section titles, as
 * Sphinx documentation, the Linux kernel's Documentation/ and many README
 * files write them: a title line under a blank line (or the text's start),
 * underlined by one punctuation character (= - ~ ^ * + # ` : ' " . _)
 * repeated at least as wide as the title, optionally with the same line
 * above it as an overline, and a blank line (or the end) below. Adornment lines
 * start in column 0 and hold nothing else; a title holds a letter or digit and
 * does not open with its adornment's character (a script's "# comment #" boxed
 * in '#' lines is no title). Levels are the styles (character, overlined or
 * not) in the order they first appear, as RST reads them.
 */
#include "ingest_int.h"

#include <stdlib.h>
#include <string.h>

/* Windows-1252 0x80..0x9F; the five holes map to the C1 controls. */
static const uint16_t CP1252[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

static void put_unit(dq_tbuf *b, uint32_t cp, uint32_t next) {
  if (cp == '\r' && next == '\n')
    return;
  dq_tbuf_put_cp(b, cp);
  if (cp == '\n')
    b->line++;
}

static void decode_latin1(dq_tbuf *b, const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t cp = s[i] >= 0x80 && s[i] < 0xA0 ? CP1252[s[i] - 0x80] : s[i];
    put_unit(b, cp, i + 1 < n ? s[i + 1] : 0);
  }
}

static void decode_utf16(dq_tbuf *b, const unsigned char *s, size_t n,
                         int big) {
  size_t n_units = n / 2;
#define UNIT(i) (big ? (uint32_t)s[2 * (i)] << 8 | s[2 * (i) + 1]            \
                     : (uint32_t)s[2 * (i) + 1] << 8 | s[2 * (i)])
  for (size_t i = 0; i < n_units; i++) {
    uint32_t u = UNIT(i), cp = u;
    if (u >= 0xD800 && u <= 0xDBFF && i + 1 < n_units) {
      uint32_t lo = UNIT(i + 1);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        i++;
      }
    }
    /* an unpaired surrogate stays in the D800-DFFF range and put_cp
     * replaces it */
    put_unit(b, cp, i + 1 < n_units ? UNIT(i + 1) : 0);
  }
#undef UNIT
  if (n % 2) { /* a dangling odd byte */
    dq_tbuf_put_cp(b, 0xFFFD);
    b->n_replaced++;
  }
}

dq_status dq_read_plain(const dq_reader_ctx *c, const char *data, size_t n,
                        dq_tbuf *b) {
  const unsigned char *s = (const unsigned char *)data;
  if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
    c->info->encoding = "utf-8";
    dq_tbuf_put_lines(b, data + 3, n - 3);
    return DQ_OK;
  }
  if (n >= 2 && (s[0] == 0xFF && s[1] == 0xFE)) {
    c->info->encoding = "utf-16le";
    decode_utf16(b, s + 2, n - 2, 0);
    return DQ_OK;
  }
  if (n >= 2 && (s[0] == 0xFE && s[1] == 0xFF)) {
    c->info->encoding = "utf-16be";
    decode_utf16(b, s + 2, n - 2, 1);
    return DQ_OK;
  }
  size_t n_mb = 0, n_bad = 0;
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) {
      i++;
      continue;
    }
    uint32_t cp;
    size_t len = dq_utf8_decode(s + i, n - i, &cp);
    if (cp == UINT32_MAX)
      n_bad++;
    else
      n_mb++;
    i += len;
  }
  if (n_bad > n_mb) {
    c->info->encoding = "latin-1";
    decode_latin1(b, s, n);
  } else {
    c->info->encoding = "utf-8";
    dq_tbuf_put_lines(b, data, n);
  }
  return DQ_OK;
}

/* ---- Markdown ---- */

static size_t indent_of(const char *l, size_t n, size_t *pos) {
  size_t col = 0, i = 0;
  for (; i < n && (l[i] == ' ' || l[i] == '\t'); i++)
    col = l[i] == '\t' ? (col / 4 + 1) * 4 : col + 1;
  *pos = i;
  return col;
}

static int is_blank(const char *l, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (l[i] != ' ' && l[i] != '\t' && l[i] != '\r')
      return 0;
  return 1;
}

/* A line of only `ch` (>= min of them, then spaces): returns the count. */
static size_t run_only(const char *l, size_t n, char ch, size_t min) {
  size_t k = 0;
  while (k < n && l[k] == ch)
    k++;
  if (k < min || !is_blank(l + k, n - k))
    return 0;
  return k;
}

/* Records a setext heading whose paragraph spans text[start, end). */
static void setext(dq_tbuf *b, size_t start, size_t end, int level) {
  size_t len = end - start;
  char *t = malloc(len + 1);
  if (!t) {
    b->oom = 1;
    return;
  }
  memcpy(t, b->text + start, len);
  for (size_t i = 0; i < len; i++)
    if (t[i] == '\n')
      t[i] = ' ';
  dq_tbuf_heading(b, start, level, t, len);
  free(t);
}

/* ---- plain text: reStructuredText section titles ---- */

#define RST_TITLE_MAX 120 /* characters of a title line */
#define RST_STYLES 8      /* levels; deeper styles share the last */

/* The adornment character of the line l[0..n) (all one punctuation
 * character, at least 3, from column 0, trailing blanks allowed), or 0. */
static char adornment(const char *l, size_t n) {
  if (n < 3 || !strchr("=-~^*+#`:'\"._", l[0]) || l[0] == '\0')
    return 0;
  size_t k = run_only(l, n, l[0], 3);
  return k ? l[0] : 0;
}

/* Width in characters (UTF-8 sequences) of the title l[0..n) without its
 * outer blanks, into *a..*e; 0 when it is no title (blank, too long, no
 * letter or digit, columns apart by a tab or 3+ spaces). */
static size_t title_width(const char *l, size_t n, size_t *a, size_t *e) {
  size_t i = 0, j = n;
  while (i < j && (l[i] == ' ' || l[i] == '\t'))
    i++;
  while (j > i && (l[j - 1] == ' ' || l[j - 1] == '\t' || l[j - 1] == '\r'))
    j--;
  size_t w = 0, spaces = 0;
  int alnum = 0;
  for (size_t k = i; k < j; k++) {
    unsigned char ch = (unsigned char)l[k];
    spaces = ch == ' ' ? spaces + 1 : 0;
    if (spaces >= 3 || ch == '\t') /* columns: a table's header row */
      return 0;
    w += (ch & 0xC0) != 0x80;
    alnum |= (ch >= '0' && ch <= '9') ||
             ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') || ch >= 0x80;
  }
  *a = i;
  *e = j;
  return alnum && w <= RST_TITLE_MAX ? w : 0;
}

dq_status dq_read_text(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b) {
  dq_status st = dq_read_plain(c, data, n, b);
  if (st != DQ_OK || b->oom)
    return st;
  /* three lines at a time: p (before), l (the candidate title), u (after) */
  struct {
    char ch;
    int over;
  } styles[RST_STYLES];
  int n_styles = 0;
  size_t prev_start = SIZE_MAX, prev_end = 0; /* the line before l */
  int prev2_blank = 1; /* whether the line before that is blank / none */
  for (size_t ls = 0; ls < b->n;) {
    const char *nl = memchr(b->text + ls, '\n', b->n - ls);
    size_t le = nl ? (size_t)(nl - b->text) : b->n;
    size_t next = nl ? le + 1 : b->n;
    const char *l = b->text + ls;
    size_t ln = le - ls;
    size_t ta, te, w;
    if (next < b->n && (w = title_width(l, ln, &ta, &te))) {
      const char *unl = memchr(b->text + next, '\n', b->n - next);
      size_t ue = unl ? (size_t)(unl - b->text) : b->n;
      char ch = adornment(b->text + next, ue - next);
      int prev_blank = prev_start == SIZE_MAX ||
                       is_blank(b->text + prev_start, prev_end - prev_start);
      /* overlined: the line before is the same adornment, a blank above */
      int over = ch && !prev_blank &&
                 adornment(b->text + prev_start, prev_end - prev_start) == ch &&
                 prev2_blank;
      size_t u_len = ch ? run_only(b->text + next, ue - next, ch, 3) : 0;
      /* and a blank line (or the end) after: a table's underlined header
       * row has its rows there */
      int after_blank = 1;
      if (unl) {
        const char *anl =
            memchr(unl + 1, '\n', (size_t)(b->text + b->n - unl - 1));
        size_t ae = anl ? (size_t)(anl - b->text) : b->n;
        after_blank = is_blank(unl + 1, ae - (ue + 1));
      }
      if (ch && after_blank && (prev_blank || over) && l[ta] != ch &&
          u_len >= w && (over || ta == 0)) {
        int level = 0;
        while (level < n_styles &&
               !(styles[level].ch == ch && styles[level].over == over))
          level++;
        if (level == n_styles && n_styles < RST_STYLES) {
          styles[n_styles].ch = ch;
          styles[n_styles].over = over;
          n_styles++;
        }
        if (level >= RST_STYLES)
          level = RST_STYLES - 1;
        dq_tbuf_heading(b, over ? prev_start : ls, level + 1, l + ta, te - ta);
        /* the underline is no candidate title's line before */
        prev2_blank = 0;
        prev_start = next;
        prev_end = ue;
        ls = unl ? ue + 1 : b->n;
        continue;
      }
    }
    prev2_blank = prev_start == SIZE_MAX ||
                  is_blank(b->text + prev_start, prev_end - prev_start);
    prev_start = ls;
    prev_end = le;
    ls = next;
  }
  return DQ_OK;
}

dq_status dq_read_markdown(const dq_reader_ctx *c, const char *data, size_t n,
                           dq_tbuf *b) {
  dq_status st = dq_read_plain(c, data, n, b);
  if (st != DQ_OK || b->oom)
    return st;
  int in_fence = 0;
  char fence_ch = 0;
  size_t fence_len = 0;
  size_t para = SIZE_MAX, para_end = 0; /* current paragraph's text range */
  for (size_t ls = 0; ls < b->n;) {
    const char *nl = memchr(b->text + ls, '\n', b->n - ls);
    size_t le = nl ? (size_t)(nl - b->text) : b->n;
    const char *l = b->text + ls;
    size_t ln = le - ls, p;
    size_t ind = indent_of(l, ln, &p);
    const char *t = l + p;
    size_t tn = ln - p;
    size_t next = nl ? le + 1 : b->n;
    if (in_fence) {
      if (ind < 4 && run_only(t, tn, fence_ch, fence_len))
        in_fence = 0;
      ls = next;
      continue;
    }
    if (ind < 4 && tn >= 3 && (t[0] == '`' || t[0] == '~') && t[1] == t[0] &&
        t[2] == t[0]) {
      in_fence = 1;
      fence_ch = t[0];
      fence_len = 0;
      while (fence_len < tn && t[fence_len] == fence_ch)
        fence_len++;
      para = SIZE_MAX;
      ls = next;
      continue;
    }
    if (is_blank(l, ln)) {
      para = SIZE_MAX;
      ls = next;
      continue;
    }
    if (ind < 4 && t[0] == '#') {
      size_t h = 0;
      while (h < tn && t[h] == '#')
        h++;
      if (h <= 6 && (h == tn || t[h] == ' ' || t[h] == '\t')) {
        size_t e = tn;
        while (e > h && (t[e - 1] == ' ' || t[e - 1] == '\t' ||
                         t[e - 1] == '\r'))
          e--;
        size_t k = e; /* optional closing sequence, preceded by a space */
        while (k > h && t[k - 1] == '#')
          k--;
        if (k == h || t[k - 1] == ' ' || t[k - 1] == '\t')
          e = k;
        dq_tbuf_heading(b, ls, (int)h, t + h, e > h ? e - h : 0);
        para = SIZE_MAX;
        ls = next;
        continue;
      }
    }
    if (ind < 4 && para != SIZE_MAX &&
        (run_only(t, tn, '=', 1) || run_only(t, tn, '-', 1))) {
      setext(b, para, para_end, t[0] == '=' ? 1 : 2);
      para = SIZE_MAX;
      ls = next;
      continue;
    }
    if (para == SIZE_MAX && ind >= 4) { /* indented code */
      ls = next;
      continue;
    }
    if (para == SIZE_MAX)
      para = ls;
    para_end = le;
    ls = next;
  }
  return DQ_OK;
}
