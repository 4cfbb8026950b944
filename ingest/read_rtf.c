/*
 * read_rtf.c - Rich Text Format reader (.rtf: what Word, WordPad and
 * LibreOffice write, and what many firms' older precedents are kept in).
 * Before this reader an .rtf was read as plain text, control words and
 * font tables included.
 *
 * The format (RTF 1.9.1): groups in braces, control words (a backslash,
 * letters, an optional signed number, an optional space), control symbols
 * (a backslash and one other character), and text. Read here:
 *   - text, \'hh in the document's code page (\ansicpgN, else 1252;
 *     converted once per file through iconv), \uN Unicode (surrogate pairs
 *     joined) with the \ucN fallback characters after it skipped, the
 *     symbols \~ \_ \- \{ \} \\, and \emdash \endash \lquote \rquote
 *     \ldblquote \rdblquote \bullet;
 *   - paragraphs (\par, and \sect, \page), \line, \tab; tables: \cell
 *     and \nestcell end a cell, \row and \nestrow a row, whose cells are
 *     joined by " | " on one line (a cell's paragraphs stay on it);
 *   - list numbers as the writer rendered them ({\listtext 2.1\tab},
 *     {\pntext ...}), written before the paragraph, "2.1 Grant";
 *   - headings: a paragraph's \outlinelevelN, else its style's (\sN in
 *     the stylesheet, with an \outlinelevel or a name "heading N");
 *   - footnotes and endnotes ({\*\footnote ...}, \ftnalt for an endnote):
 *     the reference reads "[1]" ("[i]" for an endnote) and the note's text
 *     follows as "[1] text" on a line of its own after the paragraph or
 *     the table row that refers to it, as read_docx.c writes them;
 *   - comments ({\*\atnauthor Name}\chatn{\*\annotation{\*\atnref N}
 *     {\*\atndate DTTM} text}, marking the text from {\*\atrfstart N} to
 *     {\*\atrfend N}; {\*\atnparent N} in a reply): no mark in the text,
 *     "[comment, Name, 2026-03-01, on "30 days"] text" on a line of its own
 *     after the paragraph, as read_docx.c writes them.
 * Left out: destinations that hold no text of the document (font, colour
 * and style tables, document info, pictures and objects, headers and
 * footers, field instructions, hidden contents and index
 * entries (\tc, \xe) and every other \* destination
 * not named above), hidden text (\v), \binN data (skipped by length).
 *
 * Marks carry page 0 and `line` = the 1-based line of the extracted text,
 * as DOCX's paragraphs are counted (one line per paragraph or table row).
 *
 * Bad input: not starting with "{\rtf": an error naming the file. Groups
 * nested deeper than DQ_XML_MAX_DEPTH: an error; unbalanced braces at the
 * end are tolerated (a truncated file keeps what it has).
 */
#include "ingest_int.h"

#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_STYLES 4096 /* style numbers \s0 .. \s4095 */
#define MAX_NOTES 64    /* notes pending on one paragraph */
#define WORD_MAX 32     /* letters of a control word */

/* DEST_FIELD: a comment's author, date, reference or range mark, kept in
 * rtf.field until its group ends */
typedef enum { DEST_TEXT, DEST_SKIP, DEST_NOTE, DEST_STYLES, DEST_FIELD } dest;

typedef struct group {
  dest d;
  int hidden;    /* \v */
  int uc;        /* fallback characters after \uN */
  int list_text; /* inside \listtext or \pntext: \tab is a space */
  int in_box;    /* a text box's text (\shptxt): \par is a space */
} group;

typedef struct note {
  char *text; /* malloc'd */
  int end;    /* an endnote */
  int number;
  /* a comment: */
  int comment, reply;
  char author[80], date[11];
  size_t q_off, q_end, p_start; /* the text it marks in b, its paragraph's */
  int p_cell;
} note;

#define FIELD_MAX 80 /* bytes kept of a comment's author, date or id */

typedef struct rtf {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  group g[DQ_XML_MAX_DEPTH + 1];
  unsigned depth;
  char cp[256][4]; /* the code page's bytes 0x80..0xFF as UTF-8 */
  int skip;        /* fallback characters still to skip */
  uint32_t high;   /* a \u high surrogate waiting for its pair */
  uint32_t line;   /* of the extracted text, where the next byte goes */
  /* the paragraph being read */
  size_t para_start;
  int outline;         /* \outlinelevelN + 1, 0 = none */
  int style;           /* \sN, -1 = none */
  int in_table, cells; /* \intbl; cells ended in this row */
  int cell_open;       /* text since the last cell's end */
  /* styles: outline level + 1 by style number (0 = none) */
  unsigned char style_level[MAX_STYLES];
  int def_style;       /* the style being defined in the stylesheet */
  char style_name[64]; /* its name so far */
  size_t style_name_n;
  /* notes: the one being read, those waiting for their paragraph's end */
  dq_strbuf note_text;
  int note_end;
  unsigned note_depth;
  note pending[MAX_NOTES];
  size_t n_pending;
  int n_foot, n_end;
  /* comments: the field being read, the next comment's author, date and
   * range (by its \atnref), the ranges begun */
  char field[FIELD_MAX], field_word[16];
  size_t field_n;
  unsigned field_depth;
  char atn_author[FIELD_MAX], atn_date[11], atn_ref[FIELD_MAX];
  int atn_reply;
  struct {
    char id[FIELD_MAX];
    size_t off, end; /* end SIZE_MAX until \atrfend */
  } range[MAX_NOTES];
  size_t n_range;
} rtf;

/* ---- output ---- */

static void newline(rtf *r) {
  dq_tbuf_putc(r->b, '\n');
  dq_tbuf_pos(r->b, ++r->line, 0);
}

/* A table cell's first text follows: " | " after the cell before. */
static void open_cell(rtf *r) {
  if (r->in_table && r->cells > 0 && !r->cell_open) {
    dq_tbuf_trim_spaces(r->b, r->para_start); /* "A1 \cell" */
    dq_tbuf_put(r->b, " | ", 3);
  }
  r->cell_open = 1;
}

/* UTF-8 text into the paragraph or the note being read. */
static void put(rtf *r, const char *s, size_t n) {
  group *g = &r->g[r->depth];
  if (g->hidden || g->d == DEST_SKIP || !n)
    return;
  if (g->d == DEST_STYLES) {
    for (size_t i = 0; i < n && r->style_name_n + 1 < sizeof r->style_name; i++)
      r->style_name[r->style_name_n++] = s[i];
    r->style_name[r->style_name_n] = '\0';
    return;
  }
  if (g->d == DEST_FIELD) {
    for (size_t i = 0; i < n && r->field_n + 1 < sizeof r->field; i++)
      r->field[r->field_n++] = s[i];
    r->field[r->field_n] = '\0';
    return;
  }
  if (g->d == DEST_NOTE) {
    if (r->note_text.n == 0) /* the note's leading blanks */
      while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
      }
    dq_strbuf_add(&r->note_text, s, n);
    return;
  }
  if (r->b->n == r->para_start) /* a paragraph's leading blanks */
    while (n && (*s == ' ' || *s == '\t')) {
      s++;
      n--;
    }
  if (!n)
    return;
  open_cell(r);
  dq_tbuf_put_utf8(r->b, s, n);
}

static void put_cp(rtf *r, uint32_t cp) {
  if (cp >= 0xD800 && cp < 0xE000)
    cp = 0xFFFD; /* a surrogate left alone */
  char buf[4];
  put(r, buf, dq_utf8_encode(cp, buf));
}

/* A byte of text in the code page (a literal one or \'hh). */
static void put_byte(rtf *r, unsigned char ch) {
  if (r->skip > 0) { /* the fallback of a \uN */
    r->skip--;
    return;
  }
  if (ch < 0x80) {
    char c = (char)ch;
    put(r, &c, 1);
  } else {
    put(r, r->cp[ch], strnlen(r->cp[ch], 4));
  }
}

/* The notes of the paragraph just ended, each "[1] text" on a line. */
static void flush_notes(rtf *r) {
  for (size_t i = 0; i < r->n_pending; i++) {
    note *n = &r->pending[i];
    if (n->comment) {
      dq_comment h = {0};
      h.reply = n->reply;
      h.author = n->author[0] ? n->author : NULL;
      h.date = n->date;
      if (!h.reply)
        dq_comment_quote(r->b, n->q_off, n->q_end, n->p_start, n->p_cell, &h);
      dq_tbuf_comment(r->b, &h);
      dq_tbuf_put_utf8(r->b, n->text, strlen(n->text));
      dq_tbuf_trim_spaces(r->b, 0);
      newline(r);
      free(n->text);
      continue;
    }
    char label[32];
    dq_format_counter(label, sizeof label,
                      n->end ? DQ_FMT_LROMAN : DQ_FMT_DECIMAL, n->number);
    dq_tbuf_put(r->b, "[", 1);
    dq_tbuf_put(r->b, label, strlen(label));
    dq_tbuf_put(r->b, "] ", 2);
    dq_tbuf_put_utf8(r->b, n->text, strlen(n->text));
    newline(r);
    free(n->text);
  }
  r->n_pending = 0;
  r->n_range = 0;
}

/* The paragraph (or table row) ends: its heading, its line, its notes. */
static void end_paragraph(rtf *r) {
  dq_tbuf *b = r->b;
  int level = r->outline;
  if (!level && r->style >= 0 && r->style < MAX_STYLES)
    level = r->style_level[r->style];
  size_t e = b->n;
  while (e > r->para_start && (b->text[e - 1] == ' ' || b->text[e - 1] == '\t'))
    e--;
  dq_tbuf_truncate(b, e);
  if (e > r->para_start) {
    if (level && !r->in_table && !b->oom)
      dq_tbuf_heading(b, r->para_start, level > 9 ? 9 : level,
                      b->text + r->para_start, e - r->para_start);
    newline(r);
  }
  flush_notes(r);
  r->para_start = b->n;
  r->cells = 0;
  r->cell_open = 0;
}

/* ---- control words ---- */

/* Destinations whose text is not the document's, each between blanks. */
static const char SKIPPED[] =
    " fonttbl colortbl info pict object objdata header headerl headerr"
    " headerf footer footerl footerr footerf fldinst themedata"
    " colorschememapping datastore latentstyles listoverridetable listtable"
    " rsidtbl generator xmlnstbl filetbl revtbl pgdsctbl atnicn atntime"
    " ftnsep ftnsepc aftnsep aftnsepc bkmkstart bkmkend mmathPr"
    " defchp defpap userprops docvar sp shprslt nonshppict tc tcn xe ";

/* Whether w is one of the words of `list` (" a b c "). */
static int in_words(const char *list, const char *w) {
  size_t k = strlen(w);
  for (const char *p = strstr(list, w); p; p = strstr(p + 1, w))
    if (p[-1] == ' ' && p[k] == ' ')
      return 1;
  return 0;
}

/* Groups whose text is a comment's field (rtf.field). */
static const char FIELDS[] = " atnauthor atnid atnref atndate atnparent"
                             " atrfstart atrfend ";

/* The date of a Word DTTM (minutes 0-5, hours 6-10, day 11-15, month
 * 16-19, years since 1900 20-28) as YYYY-MM-DD, or "" for none (0). */
static void dttm_date(const char *digits, char out[11]) {
  unsigned long v = strtoul(digits, NULL, 10);
  unsigned day = (v >> 11) & 31, month = (v >> 16) & 15;
  unsigned year = ((v >> 20) & 511) + 1900;
  out[0] = '\0';
  if (v && day >= 1 && month >= 1 && month <= 12)
    snprintf(out, 11, "%04u-%02u-%02u", year, month, day);
}

/* A comment's field group ends: its author, date, reference, a range's
 * start or end. */
static void end_field(rtf *r) {
  const char *w = r->field_word;
  char *f = r->field + strspn(r->field, " ");
  size_t n = strlen(f);
  while (n && f[n - 1] == ' ')
    f[--n] = '\0';
  if (!strcmp(w, "atnauthor") || (!strcmp(w, "atnid") && !r->atn_author[0]))
    snprintf(r->atn_author, sizeof r->atn_author, "%s", f);
  else if (!strcmp(w, "atnref"))
    snprintf(r->atn_ref, sizeof r->atn_ref, "%s", f);
  else if (!strcmp(w, "atndate"))
    dttm_date(f, r->atn_date);
  else if (!strcmp(w, "atnparent"))
    r->atn_reply = 1;
  else if (!strcmp(w, "atrfstart") && r->n_range < MAX_NOTES) {
    open_cell(r); /* the text it marks starts after the cells' " | " */
    snprintf(r->range[r->n_range].id, sizeof r->range[0].id, "%s", f);
    r->range[r->n_range].off = r->b->n;
    r->range[r->n_range++].end = SIZE_MAX;
  } else if (!strcmp(w, "atrfend")) {
    for (size_t i = 0; i < r->n_range; i++)
      if (!strcmp(r->range[i].id, f))
        r->range[i].end = r->b->n;
  }
}

static void start_note(rtf *r, int end) {
  r->g[r->depth].d = DEST_NOTE;
  r->note_depth = r->depth;
  r->note_end = end;
  r->note_text.n = 0;
  if (r->note_text.p)
    r->note_text.p[0] = '\0';
}

/* Control word w with parameter v (has_v: one was given). starred: the
 * group began with \*. */
static void control(rtf *r, const char *w, long v, int has_v, int starred) {
  group *g = &r->g[r->depth];
  if (!strcmp(w, "footnote")) {
    if (g->d != DEST_SKIP && g->d != DEST_NOTE && r->depth > 0)
      start_note(r, 0);
    return;
  }
  if (g->d == DEST_NOTE && !strcmp(w, "ftnalt")) {
    r->note_end = 1;
    return;
  }
  if (!strcmp(w, "annotation")) {
    if (g->d != DEST_SKIP && g->d != DEST_NOTE && r->depth > 0)
      start_note(r, 2);
    else
      g->d = DEST_SKIP;
    return;
  }
  if (in_words(FIELDS, w) && g->d != DEST_SKIP && g->d != DEST_FIELD &&
      r->depth > 0) {
    g->d = DEST_FIELD;
    r->field_depth = r->depth;
    snprintf(r->field_word, sizeof r->field_word, "%s", w);
    r->field_n = 0;
    r->field[0] = '\0';
    if (has_v) /* \atrfstart12 as well as \atrfstart 12 */
      r->field_n = (size_t)snprintf(r->field, sizeof r->field, "%ld", v);
    return;
  }
  if (!strcmp(w, "stylesheet")) {
    g->d = DEST_STYLES;
    return;
  }
  if (!strcmp(w, "shpinst")) /* a shape: its properties are skipped (sp), */
    return;                  /* its text read (shptxt) */
  if (!strcmp(w, "shptxt")) {
    g->in_box = 1;
    return;
  }
  if (in_words(SKIPPED, w) || (starred && g->d != DEST_SKIP &&
                               strcmp(w, "listtext") && strcmp(w, "pntext"))) {
    g->d = DEST_SKIP;
    return;
  }
  if (g->d == DEST_SKIP)
    return;
  if (g->d == DEST_STYLES) { /* a style's number and outline level */
    if (!strcmp(w, "s") && has_v && v >= 0 && v < MAX_STYLES)
      r->def_style = (int)v;
    else if (!strcmp(w, "outlinelevel") && has_v && v >= 0 && v < 9 &&
             r->def_style >= 0)
      r->style_level[r->def_style] = (unsigned char)(v + 1);
    return;
  }
  if (g->d == DEST_FIELD && strcmp(w, "u") && strcmp(w, "uc"))
    return; /* a field's text only */
  if (!strcmp(w, "listtext") || !strcmp(w, "pntext")) {
    g->list_text = 1;
    return;
  }
  if (!strcmp(w, "par") || !strcmp(w, "sect") || !strcmp(w, "page")) {
    if (g->d == DEST_NOTE || g->in_box)
      put(r, " ", 1);
    else if (r->in_table) /* a cell's paragraphs: on the row's line */
      put(r, " ", 1);
    else
      end_paragraph(r);
  } else if (!strcmp(w, "line")) {
    if (g->d == DEST_NOTE || r->in_table)
      put(r, " ", 1);
    else if (!g->hidden) {
      newline(r);
    }
  } else if (!strcmp(w, "tab")) {
    put(r, g->list_text || g->d == DEST_NOTE ? " " : "\t", 1);
  } else if (!strcmp(w, "cell") || !strcmp(w, "nestcell")) {
    if (g->d == DEST_TEXT) {
      r->cells++;
      r->cell_open = 0;
    }
  } else if (!strcmp(w, "row") || !strcmp(w, "nestrow")) {
    if (g->d == DEST_TEXT) {
      r->in_table = 0;
      end_paragraph(r);
    }
  } else if ((g->d == DEST_NOTE || g->list_text) &&
             (!strcmp(w, "pard") || !strcmp(w, "intbl") ||
              !strcmp(w, "outlinelevel") || !strcmp(w, "s"))) {
    /* a note's or a list label's own \pard: not the paragraph's */
  } else if (!strcmp(w, "intbl")) {
    r->in_table = 1;
  } else if (!strcmp(w, "pard")) {
    r->outline = 0;
    r->style = -1;
    r->in_table = 0;
  } else if (!strcmp(w, "outlinelevel") && has_v && v >= 0 && v < 9) {
    r->outline = (int)v + 1;
  } else if (!strcmp(w, "s") && has_v) {
    r->style = v >= 0 && v < MAX_STYLES ? (int)v : -1;
  } else if (!strcmp(w, "plain")) {
    g->hidden = 0;
  } else if (!strcmp(w, "v")) {
    g->hidden = !has_v || v != 0;
  } else if (!strcmp(w, "uc") && has_v && v >= 0 && v < 16) {
    g->uc = (int)v;
  } else if (!strcmp(w, "u") && has_v) {
    uint32_t cp = (uint32_t)(v < 0 ? v + 65536 : v) & 0xFFFF;
    if (cp >= 0xD800 && cp < 0xDC00) {
      r->high = cp;
    } else if (cp >= 0xDC00 && cp < 0xE000 && r->high) {
      put_cp(r, 0x10000 + ((r->high - 0xD800) << 10) + (cp - 0xDC00));
      r->high = 0;
    } else {
      put_cp(r, cp ? cp : 0xFFFD);
      r->high = 0;
    }
    r->skip = g->uc;
  } else {
    static const struct {
      const char *word;
      uint32_t cp;
    } SYMBOLS[] = {{"emdash", 0x2014},    {"endash", 0x2013},
                   {"lquote", 0x2018},    {"rquote", 0x2019},
                   {"ldblquote", 0x201C}, {"rdblquote", 0x201D},
                   {"bullet", 0x2022}};
    for (size_t i = 0; i < sizeof SYMBOLS / sizeof *SYMBOLS; i++)
      if (!strcmp(w, SYMBOLS[i].word)) {
        put_cp(r, SYMBOLS[i].cp);
        break;
      }
  }
}

/* The note group just closed: its reference "[n]" where it stood, its
 * text waiting for the paragraph's end. */
static void end_note(rtf *r) {
  if (r->note_end == 2) { /* a comment: no mark in the text */
    note c = {0};
    c.comment = 1;
    c.reply = r->atn_reply;
    snprintf(c.author, sizeof c.author, "%s", r->atn_author);
    memcpy(c.date, r->atn_date, sizeof c.date);
    c.q_off = 1;
    for (size_t i = 0; i < r->n_range && r->atn_ref[0]; i++)
      if (!strcmp(r->range[i].id, r->atn_ref)) {
        c.q_off = r->range[i].off;
        c.q_end = r->range[i].end == SIZE_MAX ? r->b->n : r->range[i].end;
      }
    c.p_start = r->para_start;
    c.p_cell = r->in_table;
    r->atn_author[0] = r->atn_date[0] = r->atn_ref[0] = '\0';
    r->atn_reply = 0;
    if (r->n_pending == MAX_NOTES)
      return;
    size_t n = r->note_text.n;
    c.text = strndup(r->note_text.p ? r->note_text.p : "", n);
    if (!c.text) {
      r->b->oom = 1;
      return;
    }
    r->pending[r->n_pending++] = c;
    return;
  }
  int number = r->note_end ? ++r->n_end : ++r->n_foot;
  char num[32], label[40];
  dq_format_counter(num, sizeof num,
                    r->note_end ? DQ_FMT_LROMAN : DQ_FMT_DECIMAL, number);
  snprintf(label, sizeof label, "[%s]", num);
  put(r, label, strlen(label));
  if (r->n_pending < MAX_NOTES) {
    size_t n = r->note_text.n;
    while (n && (r->note_text.p[n - 1] == ' ' || r->note_text.p[n - 1] == '\t'))
      n--;
    char *text = strndup(r->note_text.p ? r->note_text.p : "", n);
    if (!text) {
      r->b->oom = 1;
      return;
    }
    r->pending[r->n_pending++] =
        (note){.text = text, .end = r->note_end, .number = number};
  }
}

/* The code page's upper half as UTF-8, through iconv ("CP1252"); bytes
 * it cannot map, or a code page it does not know, are U+FFFD. */
static void load_codepage(rtf *r, long cp) {
  char name[32];
  snprintf(name, sizeof name, "CP%ld", cp > 0 && cp < 100000 ? cp : 1252);
  iconv_t cd = iconv_open("UTF-8", name);
  for (int i = 0; i < 256; i++) {
    memset(r->cp[i], 0, 4);
    if (i < 0x80) {
      r->cp[i][0] = (char)i;
      continue;
    }
    char in = (char)i, *pin = &in, out[8], *pout = out;
    size_t nin = 1, nout = sizeof out;
    if (cd != (iconv_t)-1 &&
        iconv(cd, &pin, &nin, &pout, &nout) != (size_t)-1 && pout - out <= 4 &&
        pout > out) {
      memcpy(r->cp[i], out, (size_t)(pout - out));
    } else {
      memcpy(r->cp[i], "\xEF\xBF\xBD", 3);
      if (cd != (iconv_t)-1)
        iconv(cd, NULL, NULL, NULL, NULL);
    }
  }
  if (cd != (iconv_t)-1)
    iconv_close(cd);
}

/* The code page named at the document's start (\ansicpgN), read ahead. */
static long find_codepage(const char *s, size_t n) {
  size_t lim = n < 4096 ? n : 4096;
  for (size_t i = 0; i + 8 < lim; i++)
    if (!memcmp(s + i, "\\ansicpg", 8)) { /* digits within s[0..n) */
      long cp = 0;
      for (size_t k = i + 8; k < n && k < i + 14 && s[k] >= '0' && s[k] <= '9';
           k++)
        cp = cp * 10 + (s[k] - '0');
      return cp;
    }
  return 1252;
}

static int is_letter(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

dq_status dq_read_rtf(const dq_reader_ctx *c, const char *s, size_t n,
                      dq_tbuf *b) {
  if (n < 5 || memcmp(s, "{\\rtf", 5) != 0)
    return dq_error_set(c->err, DQ_ERR_FORMAT,
                        "%s: not an RTF file (it does not start with "
                        "\"{\\rtf\")",
                        c->name);
  rtf *r = calloc(1, sizeof *r);
  if (!r)
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
  r->c = c;
  r->b = b;
  r->g[0] = (group){DEST_TEXT, 0, 1, 0, 0};
  r->style = -1;
  r->def_style = -1;
  r->line = 1;
  dq_tbuf_pos(b, 1, 0);
  load_codepage(r, find_codepage(s, n));
  dq_status st = DQ_OK;
  int starred = 0; /* the last token was \* at a group's start */
  for (size_t i = 0; i < n && st == DQ_OK;) {
    char ch = s[i];
    if (ch == '{') {
      if (r->depth >= DQ_XML_MAX_DEPTH) {
        st = dq_error_set(c->err, DQ_ERR_LIMIT,
                          "%s: groups nested deeper than %u (byte %zu)",
                          c->name, DQ_XML_MAX_DEPTH, i);
        break;
      }
      r->g[r->depth + 1] = r->g[r->depth];
      r->g[r->depth + 1].list_text = 0;
      r->depth++;
      starred = 0;
      i++;
      continue;
    }
    if (ch == '}' && r->depth == 0) { /* unbalanced: ignored */
      i++;
      continue;
    }
    if (ch == '}') {
      group *g = &r->g[r->depth];
      if (g->d == DEST_NOTE && r->depth == r->note_depth) {
        r->depth--;
        end_note(r);
      } else if (g->d == DEST_FIELD && r->depth == r->field_depth) {
        r->depth--;
        end_field(r);
      } else if (g->d == DEST_STYLES && r->depth > 0 &&
                 r->g[r->depth - 1].d == DEST_STYLES) {
        /* a style's group ends: "heading 2;" names a level too */
        const char *nm = r->style_name + strspn(r->style_name, " \t");
        if (r->def_style >= 0 && !r->style_level[r->def_style] &&
            !strncasecmp(nm, "heading ", 8) && nm[8] >= '1' && nm[8] <= '9')
          r->style_level[r->def_style] = (unsigned char)(nm[8] - '0');
        r->def_style = -1;
        r->style_name_n = 0;
        r->style_name[0] = '\0';
        r->depth--;
      } else if (r->depth > 0) {
        r->depth--;
      }
      starred = 0;
      i++;
      continue;
    }
    if (ch == '\r' || ch == '\n') { /* line breaks in the source: none */
      i++;
      continue;
    }
    if (ch != '\\') {
      put_byte(r, (unsigned char)ch);
      i++;
      continue;
    }
    /* a control word or symbol */
    if (i + 1 >= n)
      break;
    char sym = s[i + 1];
    if (!is_letter(sym)) {
      i += 2;
      switch (sym) {
      case '*':
        starred = 1;
        continue;
      case '\'':
        if (i + 2 <= n && dq_hex_digit(s[i]) >= 0 &&
            dq_hex_digit(s[i + 1]) >= 0) {
          put_byte(r, (unsigned char)(dq_hex_digit(s[i]) * 16 +
                                      dq_hex_digit(s[i + 1])));
          i += 2;
        }
        break;
      case '~':
        put_cp(r, 0xA0);
        break;
      case '_':
        put(r, "-", 1);
        break;
      case '-':
        break; /* an optional hyphen */
      case '\\':
      case '{':
      case '}':
        put_byte(r, (unsigned char)sym);
        break;
      case '\n':
      case '\r':
        control(r, "par", 0, 0, 0);
        break;
      default:
        break;
      }
      starred = 0;
      continue;
    }
    char word[WORD_MAX + 1];
    size_t k = 0, j = i + 1;
    while (j < n && is_letter(s[j])) {
      if (k < WORD_MAX)
        word[k++] = s[j];
      j++;
    }
    word[k] = '\0';
    long v = 0;
    int has_v = 0, neg = 0;
    if (j < n && s[j] == '-') {
      neg = 1;
      j++;
    }
    while (j < n && s[j] >= '0' && s[j] <= '9') {
      if (v < 100000000)
        v = v * 10 + (s[j] - '0');
      has_v = 1;
      j++;
    }
    if (neg)
      v = -v;
    if (j < n && s[j] == ' ')
      j++; /* the delimiter */
    i = j;
    if (!strcmp(word, "bin") && has_v) { /* binary data: skipped */
      i += v > 0 && (size_t)v < n - i ? (size_t)v : (v > 0 ? n - i : 0);
      starred = 0;
      continue;
    }
    control(r, word, v, has_v, starred);
    starred = 0;
  }
  if (st == DQ_OK) {
    end_paragraph(r); /* the last paragraph, without its \par */
    if (b->n && b->text[b->n - 1] != '\n')
      dq_tbuf_newline(b);
  }
  for (size_t i = 0; i < r->n_pending; i++)
    free(r->pending[i].text);
  free(r->note_text.p);
  free(r);
  return st;
}
