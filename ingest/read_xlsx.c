/*
 * read_xlsx.c - Excel workbooks (.xlsx, .xlsm; ECMA-376 SpreadsheetML):
 * each worksheet's rows in the workbook's order, a row a line. The zip
 * container and its limits are read_zip.c's; the small parts (workbook,
 * relationships, styles) are parsed whole with read_xml.c's safe parse,
 * the large ones (shared strings, worksheets) streamed through libxml2's
 * xmlTextReader with the same options (no network, no DTD, no entity
 * substitution), so a sheet of a million cells costs its text, not a
 * tree of it. Elements are compared by local name.
 *
 * Parts used:
 *   _rels/.rels                  officeDocument -> xl/workbook.xml
 *   xl/workbook.xml              sheets/sheet@name, @r:id, @state
 *                                ("hidden", "veryHidden"); workbookPr
 *                                @date1904
 *   xl/_rels/workbook.xml.rels   Relationship@Id -> @Target (worksheets;
 *                                a chartsheet's part has no cells)
 *   xl/sharedStrings.xml         sst/si: t, or rich runs r/t (rPh, the
 *                                phonetic guide, left out)
 *   xl/styles.xml                cellXfs/xf@numFmtId (a cell's s indexes
 *                                it), numFmts/numFmt@numFmtId,@formatCode
 *   xl/worksheets/sheetN.xml     dimension@ref; sheetData/row@r of c@r,
 *                                @t (s: a shared string, inlineStr: is/t,
 *                                str: a formula's text, b: boolean, e: an
 *                                error, d: an ISO 8601 date, else a
 *                                number), @s, holding v (f, the formula,
 *                                is not read: its cached value v is)
 *
 * Output: a sheet opens with its heading line, "Sheet: Revenue" ("Sheet:
 * Old (hidden)"), a level-1 heading, so that a sheet is a section; then
 * each row that holds a value is a line of its cells joined by " | ",
 * from the sheet's first used column (dimension@ref, else A) to the row's
 * last value, empty cells kept so that a column lines up with its header.
 * Numbers as Excel stores them, to 15 significant digits (31.2, not
 * 31.199999999999999); a number in a date or time format as its date
 * ("2024-03-12", "2024-03-12 14:30", "14:30"; the 1900 system's phantom
 * 29 February 1900 and the 1904 system both handled); a percent format's
 * as a percentage ("12.5%"); booleans TRUE / FALSE; errors as written
 * ("#DIV/0!"). A line break in a cell is a blank. Marks carry page = the
 * sheet's number and line = the row's number, so a citation reads
 * "book.xlsx p.2:15" for row 15 of the second sheet; the heading takes
 * the first row's number. A cell's comment (a note: the sheet's
 * relationship of type comments, commentList/comment@ref,@authorId) is a
 * line of its own after its row, at the row's number: "[comment, Jane
 * Doe, on B3] Adjusted for FX" (Excel's "Jane Doe:" before the text, and a
 * threaded comment's notice, left out; its replies after " / "); a
 * comment on an empty row's cell comes between the rows around it.
 * Left out: formulas' text, charts, pictures, pivot caches, defined names,
 * threaded comments' own parts (their legacy text is read); other number
 * formats (currency, thousands separators, fixed decimals) give the plain
 * number.
 *
 * Limits: XLSX_MAX_SHEETS sheets; rows 1..1048576 and columns 1..16384
 * (Excel's), cells beyond them left out; a shared string index must be
 * one of the table's; XLSX_MAX_TEXT bytes of text in all. A sheet whose
 * relationship names no part is left out with a warning, as Excel does.
 *
 * OpenDocument spreadsheets (.ods, .ots; OpenDocument 1.2 part 1, 9.1:
 * LibreOffice Calc's own format) read here too (dq_read_ods), the same
 * output from content.xml, streamed:
 *   office:automatic-styles  style:style@style:name of family "table"
 *                            whose style:table-properties has
 *                            table:display="false": a hidden sheet
 *   office:spreadsheet       table:table@table:name, @table:style-name;
 *                            table:table-row (also inside header-rows,
 *                            row-groups) @table:number-rows-repeated of
 *                            table:table-cell / table:covered-table-cell
 *                            @table:number-columns-repeated,
 *                            @office:value-type (float, percentage,
 *                            currency, date, time, boolean, string),
 *                            @office:value, date-value, time-value,
 *                            boolean-value, string-value; text:p (the text
 *                            the cell shows; text:span, text:a inline,
 *                            text:s, text:tab, text:line-break blanks)
 * A cell is written as the XLSX reader writes its value: a float whose
 * shown text is a plain number as its value to 15 digits (no grouping:
 * "1234567"), a percentage as "7.5%", a date as ISO ("2024-03-12",
 * "2024-03-12 14:30"), a time as "14:30", a boolean TRUE / FALSE; any
 * other as the text it shows (a currency "$12.00", a fraction "1/2", an
 * error "#DIV/0!"), or without a paragraph its stored value. A repeated
 * cell or row that holds a value is written once per repeat; empty
 * repeats (LibreOffice's trailing cells to column 16384, rows to 1048576)
 * only move the column and row numbers on. Rows are written from column
 * A (no dimension). A cell's office:annotation (dc:creator, text:p; its
 * dc:date not written, as an .xlsx's comment has none) is a comment line
 * after its row, as the XLSX reader writes one. Left out: shapes
 * (table:shapes, draw:frame, and tables inside them), formulas' text.
 */
#include "ingest_int.h"
#include "xml_names.h"

#include <ctype.h>
#include <libxml/tree.h>
#include <libxml/xmlreader.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define XLSX_MAX_SHEETS 4096u
#define XLSX_MAX_ROW 1048576u
#define XLSX_MAX_COL 16384u
#define PART_PATH_MAX 512
#define NAME_MAX_BYTES 200 /* of a sheet's name in its heading */
/* Text of a workbook's sheets: a short part can show far more, a long
 * shared string in every cell (Apache POI's poc-shared-strings.xlsx: 1 MB
 * in 12,000 cells, 12 GB) */
#define XLSX_MAX_TEXT ((size_t)256 << 20)

/* One cell of the row being read: its column and text in row_text. */
typedef struct cell {
  uint32_t col;
  size_t off, n;
} cell;

/* A cell's comment (a note): its cell, its author's name and its text at
 * offsets of xlsx.note_pool. */
typedef struct note_cell {
  uint32_t row, col;
  size_t author, text;
} note_cell;

typedef struct xlsx {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  dq_zip z;
  /* shared strings: text in pool, string i at pool.p + str_off[i] */
  dq_strbuf pool;
  size_t *str_off;
  size_t n_str, cap_str;
  /* styles: the number format kind of cellXfs entry i */
  unsigned char *xf_kind;
  size_t n_xf;
  int date1904;
  /* the row being read */
  cell *cells;
  size_t n_cells, cap_cells;
  dq_strbuf row_text;
  uint32_t sheet; /* 1-based number of the sheet being read */
  int over;       /* the text passed XLSX_MAX_TEXT */
  char why[160];  /* the streamed part's first XML error */
  /* the sheet's cell comments, by row and column; note_pool holds their
   * authors and texts, NUL-terminated */
  note_cell *notes;
  size_t n_notes, cap_notes, next_note;
  dq_strbuf note_pool;
} xlsx;

/* ---- number formats ---- */

enum { FMT_PLAIN, FMT_DATE, FMT_DATETIME, FMT_TIME, FMT_PERCENT };

/* The kind of a format code: what a date/time/percent format shows. */
static int code_kind(const char *code) {
  int date = 0, time = 0, percent = 0;
  for (const char *p = code; *p; p++) {
    char ch = (char)tolower((unsigned char)*p);
    if (*p == '"') { /* a literal string */
      const char *e = strchr(p + 1, '"');
      if (!e)
        break;
      p = e;
    } else if (*p == '\\' || *p == '_' || *p == '*') { /* one literal */
      if (!p[1])
        break;
      p++;
    } else if (*p == '[') { /* [Red], [$-409], [h] elapsed hours */
      const char *e = strchr(p + 1, ']');
      if (!e)
        break;
      if (p[1] == 'h' || p[1] == 'H' || p[1] == 'm' || p[1] == 's')
        time = 1;
      p = e;
    } else if (*p == ';') { /* the first section decides */
      break;
    } else if (ch == 'y' || ch == 'd') {
      date = 1;
    } else if (ch == 'h' || ch == 's') {
      time = 1;
    } else if (*p == '%') {
      percent = 1;
    }
  }
  if (date)
    return time ? FMT_DATETIME : FMT_DATE;
  if (time)
    return FMT_TIME;
  return percent ? FMT_PERCENT : FMT_PLAIN;
}

/* The kind of a built-in format id (ECMA-376 part 1, 18.8.30). */
static int builtin_kind(int id) {
  if (id == 9 || id == 10)
    return FMT_PERCENT;
  if ((id >= 14 && id <= 17) || (id >= 27 && id <= 31) ||
      (id >= 34 && id <= 36) || (id >= 50 && id <= 58))
    return FMT_DATE;
  if (id == 22)
    return FMT_DATETIME;
  if ((id >= 18 && id <= 21) || (id >= 32 && id <= 33) ||
      (id >= 45 && id <= 47))
    return FMT_TIME;
  return FMT_PLAIN;
}

static dq_status load_styles(xlsx *x, const char *path) {
  xmlDocPtr doc = NULL;
  dq_status st = dq_zip_xml(&x->z, path, 0, &doc);
  if (st != DQ_OK || !doc)
    return st;
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr fmts = child(root, "numFmts"), xfs = child(root, "cellXfs");
  size_t n = 0;
  for (xmlNodePtr k = xfs ? xfs->children : NULL; k; k = k->next)
    n += is(k, "xf");
  x->xf_kind = calloc(n ? n : 1, 1);
  if (!x->xf_kind) {
    xmlFreeDoc(doc);
    return dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        x->c->name);
  }
  for (xmlNodePtr k = xfs ? xfs->children : NULL; k; k = k->next) {
    if (!is(k, "xf"))
      continue;
    int id = attr_int(k, "numFmtId", 0), kind = builtin_kind(id);
    for (xmlNodePtr f = fmts ? fmts->children : NULL; f; f = f->next)
      if (is(f, "numFmt") && attr_int(f, "numFmtId", -1) == id) {
        const char *code = attr(f, "formatCode");
        kind = code ? code_kind(code) : FMT_PLAIN;
        break;
      }
    x->xf_kind[x->n_xf++] = (unsigned char)kind;
  }
  xmlFreeDoc(doc);
  return DQ_OK;
}

/* Writes serial day number v (with its fraction, the time of day) as
 * kind shows it: "2024-03-12", "2024-03-12 14:30", "14:30". 0 when v is
 * no date (negative, or past 9999). */
static int format_date(const xlsx *x, double v, int kind, char *out,
                       size_t cap) {
  if (!(v >= 0 && v < 2958466))
    return 0;
  long days = (long)floor(v);
  long secs = lround((v - (double)days) * 86400.0);
  if (secs >= 86400) {
    days++;
    secs -= 86400;
  }
  /* days since 1970-01-01 */
  long z;
  if (x->date1904)
    z = days - 24107; /* 1904-01-01 */
  else if (days >= 61)
    z = days - 25569; /* 1899-12-30, past the phantom 1900-02-29 */
  else if (days == 60) {
    if (kind == FMT_TIME)
      z = 0;
    else
      return snprintf(out, cap, "1900-02-29") > 0;
  } else
    z = days - 25568; /* 1899-12-31 */
  /* civil from days (Howard Hinnant's algorithm, public domain) */
  z += 719468;
  long era = (z >= 0 ? z : z - 146096) / 146097;
  long doe = z - era * 146097;
  long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  long mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
  long m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  long hh = secs / 3600, mm = secs / 60 % 60, ss = secs % 60;
  int w;
  if (kind == FMT_TIME)
    w = ss ? snprintf(out, cap, "%02ld:%02ld:%02ld", hh, mm, ss)
           : snprintf(out, cap, "%02ld:%02ld", hh, mm);
  else if (kind == FMT_DATETIME && secs)
    w = ss ? snprintf(out, cap, "%04ld-%02ld-%02ld %02ld:%02ld:%02ld", y, m, d,
                      hh, mm, ss)
           : snprintf(out, cap, "%04ld-%02ld-%02ld %02ld:%02ld", y, m, d, hh,
                      mm);
  else
    w = snprintf(out, cap, "%04ld-%02ld-%02ld", y, m, d);
  return w > 0 && (size_t)w < cap;
}

/* A number cell's text v (as stored) as its style shows it, into out. */
static void format_number(const xlsx *x, const char *v, long style, char *out,
                          size_t cap) {
  char *end;
  double d = strtod(v, &end);
  while (*end == ' ')
    end++;
  if (end == v || *end || !isfinite(d)) { /* not a number: as written */
    snprintf(out, cap, "%s", v);
    return;
  }
  int kind =
      style >= 0 && (size_t)style < x->n_xf ? x->xf_kind[style] : FMT_PLAIN;
  if (kind != FMT_PLAIN && kind != FMT_PERCENT &&
      format_date(x, d, kind, out, cap))
    return;
  if (kind == FMT_PERCENT)
    snprintf(out, cap, "%.15g%%", d * 100);
  else
    snprintf(out, cap, "%.15g", d);
}

/* ---- streamed parts ---- */

/* Keeps libxml2's first message about a streamed part, line ending cut. */
static void on_xml_error(void *user, xmlErrorPtr e) {
  xlsx *x = user;
  if (x->why[0] || !e || !e->message)
    return;
  snprintf(x->why, sizeof x->why, "%s", e->message);
  size_t n = strlen(x->why);
  while (n && (x->why[n - 1] == '\n' || x->why[n - 1] == ' '))
    x->why[--n] = '\0';
}

/* A streaming reader over part `path` read whole (NULL, DQ_OK when the
 * part is missing and not required). *buf keeps its bytes. */
static dq_status open_stream(xlsx *x, const char *path, int required,
                             char **buf, xmlTextReaderPtr *out) {
  size_t n;
  *out = NULL;
  dq_status st = dq_zip_read(&x->z, path, required, buf, &n);
  if (st != DQ_OK || !*buf)
    return st;
  if (n > INT_MAX)
    return dq_error_set(x->c->err, DQ_ERR_LIMIT, "%s: %s is too large",
                        x->c->name, path);
  *out = xmlReaderForMemory(*buf, (int)n, NULL, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR |
                                XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
  if (!*out)
    return dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        x->c->name);
  x->why[0] = '\0';
  xmlTextReaderSetStructuredErrorHandler(*out, on_xml_error, x);
  return DQ_OK;
}

static dq_status stream_error(const xlsx *x, xmlTextReaderPtr r,
                              const char *path) {
  int line = xmlTextReaderGetParserLineNumber(r);
  return dq_error_set(x->c->err, DQ_ERR_FORMAT,
                      "%s: malformed %s near line %d%s%s", x->c->name, path,
                      line, x->why[0] ? ": " : "", x->why);
}

static int local_is(xmlTextReaderPtr r, const char *name) {
  const xmlChar *l = xmlTextReaderConstLocalName(r);
  return l && !strcmp((const char *)l, name);
}

static int is_text(int type) {
  return type == XML_READER_TYPE_TEXT ||
         type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE ||
         type == XML_READER_TYPE_CDATA;
}

/* Opens shared string x->n_str in the pool (its text follows, then a
 * NUL); 0 when out of memory (pool.oom set). */
static int pool_begin(xlsx *x) {
  if (dq_grow((void **)&x->str_off, &x->cap_str, x->n_str + 1,
              sizeof *x->str_off)) {
    x->pool.oom = 1;
    return 0;
  }
  dq_strbuf_add(&x->pool, "", 0);
  x->str_off[x->n_str++] = x->pool.n;
  return !x->pool.oom;
}

/* xl/sharedStrings.xml: each si's text (its t, or its runs' t; not the
 * phonetic rPh) in the pool. */
static dq_status load_strings(xlsx *x, const char *path) {
  char *buf = NULL;
  xmlTextReaderPtr r = NULL;
  dq_status st = open_stream(x, path, 0, &buf, &r);
  if (st != DQ_OK || !r) {
    free(buf);
    return st;
  }
  int in_si = 0, t_depth = -1, rph_depth = -1, ret;
  while ((ret = xmlTextReaderRead(r)) == 1) {
    int type = xmlTextReaderNodeType(r), depth = xmlTextReaderDepth(r);
    if (type == XML_READER_TYPE_ELEMENT) {
      int empty = xmlTextReaderIsEmptyElement(r);
      if (local_is(r, "si")) {
        if (!pool_begin(x))
          break;
        in_si = !empty;
        if (empty)
          dq_strbuf_add(&x->pool, "\0", 1);
      } else if (in_si && local_is(r, "rPh") && !empty && rph_depth < 0) {
        rph_depth = depth;
      } else if (in_si && local_is(r, "t") && !empty && rph_depth < 0) {
        t_depth = depth;
      }
    } else if (type == XML_READER_TYPE_END_ELEMENT) {
      if (depth == t_depth)
        t_depth = -1;
      else if (depth == rph_depth)
        rph_depth = -1;
      else if (in_si && local_is(r, "si")) {
        dq_strbuf_add(&x->pool, "\0", 1); /* its end */
        in_si = 0;
      }
    } else if (is_text(type) && t_depth >= 0) {
      const char *v = (const char *)xmlTextReaderConstValue(r);
      if (v)
        dq_strbuf_add(&x->pool, v, strlen(v));
    }
  }
  if (ret < 0)
    st = stream_error(x, r, path);
  else if (x->pool.oom)
    st = dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory", x->c->name);
  xmlFreeTextReader(r);
  free(buf);
  return st;
}

/* "BC12" -> column 55 (1-based), row 12; 0 where a part is missing or
 * out of Excel's range. */
static void cell_ref(const char *ref, uint32_t *col, uint32_t *row) {
  uint32_t c = 0, rw = 0;
  const char *p = ref;
  for (; p && isalpha((unsigned char)*p) && c <= XLSX_MAX_COL; p++)
    c = c * 26 + (uint32_t)(toupper((unsigned char)*p) - 'A' + 1);
  for (; p && isdigit((unsigned char)*p) && rw <= XLSX_MAX_ROW; p++)
    rw = rw * 10 + (uint32_t)(*p - '0');
  *col = c <= XLSX_MAX_COL ? c : 0;
  *row = rw <= XLSX_MAX_ROW ? rw : 0;
}

/* Writes the row read as a line of b: its columns from first_col to its
 * last value joined by " | ", empty ones too. Cells before first_col, or
 * out of column order, are left out. */
static void put_row(xlsx *x, uint32_t row, uint32_t first_col) {
  size_t start = x->b->n;
  uint32_t at = first_col; /* the next column to write */
  dq_tbuf_pos(x->b, row, x->sheet);
  for (size_t i = 0; i < x->n_cells; i++) {
    const cell *k = &x->cells[i];
    /* a cell's blanks around its text go (a blank cell is empty), its
     * line breaks and tabs inside are blanks */
    const char *s = x->row_text.p + k->off;
    size_t a = 0, e = k->n;
    while (a < e &&
           (s[a] == ' ' || s[a] == '\t' || s[a] == '\n' || s[a] == '\r'))
      a++;
    while (e > a && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' ||
                     s[e - 1] == '\r'))
      e--;
    if (a == e || k->col < at)
      continue;
    for (; at <= k->col; at++) /* a separator before each column */
      if (at > first_col)
        dq_tbuf_put(x->b, " | ", 3);
    for (size_t j = a; j < e;) {
      size_t run = 0;
      while (j + run < e && s[j + run] != '\n' && s[j + run] != '\r' &&
             s[j + run] != '\t')
        run++;
      dq_tbuf_put_utf8(x->b, s + j, run);
      j += run;
      if (j < e) {
        dq_tbuf_space(x->b);
        j++;
      }
    }
  }
  if (at == first_col) /* no value */
    dq_tbuf_truncate(x->b, start);
  else
    dq_tbuf_putc(x->b, '\n');
}

/* Adds a cell of the row: column col, its text row_text[off, off + n). */
static void add_cell(xlsx *x, uint32_t col, size_t off, size_t n) {
  if (dq_grow((void **)&x->cells, &x->cap_cells, x->n_cells + 1,
              sizeof *x->cells)) {
    x->row_text.oom = 1;
    return;
  }
  x->cells[x->n_cells++] = (cell){col, off, n};
}

/* Ends the cell whose raw value is row_text[off..]: replaces it with what
 * the cell shows (by its type t and style) and adds the cell to the row. */
static void end_cell(xlsx *x, uint32_t col, const char *t, long style,
                     size_t off) {
  const char *raw = x->row_text.p ? x->row_text.p + off : "";
  size_t n = x->row_text.n - off;
  char shown[64];
  const char *text = raw;
  if (!strcmp(t, "n")) { /* a number (NUL-terminated: dq_strbuf's) */
    if (n && n < 48) {
      format_number(x, raw, style, shown, sizeof shown);
      text = shown;
      n = strlen(shown);
    }
  } else if (!strcmp(t, "s")) {
    char *end;
    long i = strtol(raw, &end, 10);
    if (n && !*end && i >= 0 && (size_t)i < x->n_str) {
      text = x->pool.p + x->str_off[i];
      n = strlen(text);
    } else
      n = 0; /* an index the table does not hold: nothing */
  } else if (!strcmp(t, "b")) {
    text = n == 1 && raw[0] == '1' ? "TRUE" : "FALSE";
    n = n ? strlen(text) : 0;
  } else if (!strcmp(t, "d")) { /* ISO 8601: its time only when not 0:00 */
    const char *tee = memchr(raw, 'T', n);
    if (tee && !strcmp(tee, "T00:00:00"))
      n = (size_t)(tee - raw);
  }
  if (x->b->n + off + n > XLSX_MAX_TEXT) {
    x->over = 1;
    x->row_text.n = off;
    return;
  }
  if (text != raw) {
    x->row_text.n = off;
    dq_strbuf_add(&x->row_text, text, n);
  } else
    x->row_text.n = off + n;
  add_cell(x, col, off, x->row_text.n - off);
}

/* Writes a sheet's heading line, "Sheet: NAME" ("(hidden)" after a
 * hidden one's), at row `row`: a level-1 heading. */
static void sheet_heading(xlsx *x, uint32_t row, const char *name, int hidden) {
  dq_tbuf_newline(x->b);
  dq_tbuf_pos(x->b, row, x->sheet);
  size_t at = x->b->n;
  dq_tbuf_put(x->b, "Sheet: ", 7);
  dq_tbuf_put_utf8(x->b, name, strlen(name));
  if (hidden)
    dq_tbuf_put(x->b, " (hidden)", 9);
  if (!x->b->oom)
    dq_tbuf_heading(x->b, at, 1, x->b->text + at, x->b->n - at);
  dq_tbuf_putc(x->b, '\n');
}

/* ---- cell comments ---- */

/* Column col's letters ("A", "AB", "XFD") into out[4]. */
static void col_name(uint32_t col, char *out) {
  char rev[4];
  int n = 0;
  for (; col && n < 3; col = (col - 1) / 26)
    rev[n++] = (char)('A' + (col - 1) % 26);
  for (int i = 0; i < n; i++)
    out[i] = rev[n - 1 - i];
  out[n] = '\0';
}

/* Adds s[0..n) to note_pool, its blanks and line breaks each one blank,
 * trimmed, NUL-terminated: its offset. */
static size_t pool_text(dq_strbuf *pool, const char *s, size_t n) {
  size_t at = pool->n;
  int blank = 1; /* drops leading blanks */
  for (size_t i = 0; i < n; i++) {
    int sp = s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r';
    if (sp && !blank)
      dq_strbuf_add(pool, " ", 1);
    else if (!sp)
      dq_strbuf_add(pool, s + i, 1);
    blank = sp;
  }
  while (pool->n > at && pool->p[pool->n - 1] == ' ')
    pool->n--;
  dq_strbuf_add(pool, "", 1);
  return at;
}

/* A legacy comment's text: its runs' t (rPh, the phonetic guide, left
 * out), appended to b. */
static void note_runs(xmlNodePtr n, dq_strbuf *b, unsigned depth) {
  for (xmlNodePtr k = n ? n->children : NULL; k && depth <= DQ_XML_MAX_DEPTH;
       k = k->next) {
    if (k->type != XML_ELEMENT_NODE || is(k, "rPh"))
      continue;
    if (is(k, "t")) {
      xmlChar *t = xmlNodeGetContent(k);
      if (t)
        dq_strbuf_adds(b, (const char *)t);
      xmlFree(t);
    } else {
      note_runs(k, b, depth + 1);
    }
  }
}

/* Adds a comment on cell (row, col) by author[0..an) with text[0..tn),
 * blanks collapsed (either may be NULL when empty); an empty one is none.
 * Out of memory: note_pool.oom. */
static void add_note(xlsx *x, uint32_t row, uint32_t col, const char *author,
                     size_t an, const char *text, size_t tn) {
  if (row < 1 || row > XLSX_MAX_ROW || col < 1 || col > XLSX_MAX_COL)
    return;
  if (dq_grow((void **)&x->notes, &x->cap_notes, x->n_notes + 1,
              sizeof *x->notes)) {
    x->note_pool.oom = 1;
    return;
  }
  note_cell *nc = &x->notes[x->n_notes];
  nc->row = row;
  nc->col = col;
  nc->author = pool_text(&x->note_pool, author ? author : "", author ? an : 0);
  nc->text = pool_text(&x->note_pool, text ? text : "", text ? tn : 0);
  if (!x->note_pool.oom && x->note_pool.p[nc->text])
    x->n_notes++;
}

static int note_cmp(const void *a, const void *b) {
  const note_cell *x = a, *y = b;
  if (x->row != y->row)
    return x->row < y->row ? -1 : 1;
  return x->col < y->col ? -1 : x->col > y->col;
}

/* The comments of worksheet part `part` (its relationship of type
 * comments: commentList/comment@ref,@authorId holding text/r/t, authors/
 * author), sorted by cell. Excel writes the author's "Name:" before a
 * comment's text, and for a threaded comment a notice before
 * "Comment:" and "Reply:" lines: both left out. */
static dq_status load_comments(xlsx *x, const char *part) {
  x->n_notes = x->next_note = 0;
  x->note_pool.n = 0;
  char rp[DQ_OPC_PATH_MAX], cp[DQ_OPC_PATH_MAX];
  xmlDocPtr rels = NULL, doc = NULL;
  dq_status st = DQ_OK;
  if (!dq_opc_rels_of(part, rp, sizeof rp) ||
      (st = dq_zip_xml(&x->z, rp, 0, &rels)) != DQ_OK || !rels)
    return st;
  if (dq_opc_rel_target(rels, part, NULL, "comments", cp, sizeof cp))
    st = dq_zip_xml(&x->z, cp, 0, &doc);
  xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
  xmlNodePtr *authors = NULL;
  size_t n_authors = 0, cap_authors = 0;
  for (xmlNodePtr a = child(child(root, "authors"), "author"); a && st == DQ_OK;
       a = a->next) {
    if (!is(a, "author"))
      continue;
    if (dq_grow((void **)&authors, &cap_authors, n_authors + 1,
                sizeof *authors))
      st = dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        x->c->name);
    else
      authors[n_authors++] = a;
  }
  dq_strbuf text = {0};
  for (xmlNodePtr k = child(child(root, "commentList"), "comment");
       k && st == DQ_OK && !x->note_pool.oom; k = k->next) {
    uint32_t col = 0, row = 0;
    if (!is(k, "comment"))
      continue;
    cell_ref(attr(k, "ref"), &col, &row);
    if (!col || !row)
      continue;
    long id = attr(k, "authorId") ? strtol(attr(k, "authorId"), NULL, 10) : -1;
    xmlChar *who = id >= 0 && (size_t)id < n_authors
                       ? xmlNodeGetContent(authors[id])
                       : NULL;
    text.n = 0;
    note_runs(child(k, "text"), &text, 0);
    dq_strbuf_add(&text, "", 1);
    const char *t = text.oom ? "" : text.p;
    size_t wn = who ? strlen((const char *)who) : 0;
    if (wn && !strncmp(t, (const char *)who, wn) && t[wn] == ':')
      t += wn + 1; /* "Jane Doe:\nChecked." */
    if (wn > 3 && !strncmp((const char *)who, "tc={", 4))
      wn = 0; /* a threaded comment's id, not its author's name */
    if (!strncmp(t, "[Threaded comment]", 18)) {
      const char *c = strstr(t, "\nComment:");
      t = c ? c + 9 : t;
    }
    dq_strbuf thread = {0}; /* "Comment: a Reply: b" -> "a / b" */
    for (const char *r = t; *r;) {
      const char *next = strstr(r, "\nReply:");
      size_t len = next ? (size_t)(next - r) : strlen(r);
      if (thread.n)
        dq_strbuf_add(&thread, " / ", 3);
      dq_strbuf_add(&thread, r, len);
      r = next ? next + 7 : r + len;
    }
    if (thread.oom)
      x->note_pool.oom = 1;
    else
      add_note(x, row, col, (const char *)who, wn, thread.p, thread.n);
    free(thread.p);
    xmlFree(who);
  }
  free(text.p);
  free(authors);
  xmlFreeDoc(doc);
  xmlFreeDoc(rels);
  if (st == DQ_OK && x->note_pool.oom)
    st = dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory", x->c->name);
  if (st == DQ_OK && x->n_notes > 1)
    qsort(x->notes, x->n_notes, sizeof *x->notes, note_cmp);
  return st;
}

/* Writes the comments of rows before `row` (with `row` too when
 * inclusive), each on a line of its own at its row's number: "[comment,
 * Jane Doe, on B3] Adjusted for FX". The sheet's heading first when none
 * is written yet. */
static void put_comments(xlsx *x, uint32_t row, int inclusive, const char *name,
                         int hidden, int *headed) {
  while (x->next_note < x->n_notes &&
         (x->notes[x->next_note].row < row ||
          (inclusive && x->notes[x->next_note].row == row))) {
    const note_cell *nc = &x->notes[x->next_note++];
    if (!*headed) {
      sheet_heading(x, nc->row, name, hidden);
      *headed = 1;
    }
    dq_tbuf_newline(x->b);
    dq_tbuf_pos(x->b, nc->row, x->sheet);
    const char *who = x->note_pool.p + nc->author;
    char ref[16];
    col_name(nc->col, ref);
    snprintf(ref + strlen(ref), sizeof ref - strlen(ref), "%u", nc->row);
    dq_tbuf_put(x->b, "[comment, ", 10);
    if (*who) {
      dq_tbuf_put_utf8(x->b, who, strlen(who));
      dq_tbuf_put(x->b, ", ", 2);
    }
    dq_tbuf_put(x->b, "on ", 3);
    dq_tbuf_put(x->b, ref, strlen(ref));
    dq_tbuf_put(x->b, "] ", 2);
    const char *t = x->note_pool.p + nc->text;
    dq_tbuf_put_utf8(x->b, t, strlen(t));
    dq_tbuf_putc(x->b, '\n');
  }
}

/* A worksheet part: its rows as lines after the sheet's heading. */
static dq_status sheet(xlsx *x, const char *path, const char *name,
                       int hidden) {
  char *buf = NULL;
  xmlTextReaderPtr r = NULL;
  dq_status st = open_stream(x, path, 1, &buf, &r);
  if (st != DQ_OK) {
    free(buf);
    return st;
  }
  uint32_t first_col = 1, row = 0, col = 0;
  int headed = 0, in_cell = 0, in_value = 0, is_depth = -1, rph_depth = -1;
  int ret = 1;
  char type[16] = "";
  long style = -1;
  size_t cell_off = 0;
  while (!x->row_text.oom && !x->over && (ret = xmlTextReaderRead(r)) == 1) {
    int nt = xmlTextReaderNodeType(r), depth = xmlTextReaderDepth(r);
    if (nt == XML_READER_TYPE_ELEMENT) {
      int empty = xmlTextReaderIsEmptyElement(r);
      if (local_is(r, "dimension")) {
        char *ref = (char *)xmlTextReaderGetAttribute(r, BAD_CAST "ref");
        uint32_t c0, r0;
        cell_ref(ref, &c0, &r0);
        if (c0)
          first_col = c0;
        xmlFree(ref);
      } else if (local_is(r, "row")) {
        char *rv = (char *)xmlTextReaderGetAttribute(r, BAD_CAST "r");
        long v = rv ? strtol(rv, NULL, 10) : 0;
        row = v > 0 && v <= (long)XLSX_MAX_ROW ? (uint32_t)v : row + 1;
        xmlFree(rv);
        x->n_cells = 0;
        x->row_text.n = 0;
        col = 0;
      } else if (local_is(r, "c")) {
        char *ref = (char *)xmlTextReaderGetAttribute(r, BAD_CAST "r");
        char *t = (char *)xmlTextReaderGetAttribute(r, BAD_CAST "t");
        char *s = (char *)xmlTextReaderGetAttribute(r, BAD_CAST "s");
        uint32_t c0 = 0, r0;
        if (ref)
          cell_ref(ref, &c0, &r0);
        col = ref ? c0 : col + 1;
        snprintf(type, sizeof type, "%s", t ? t : "n");
        style = s ? strtol(s, NULL, 10) : -1;
        xmlFree(ref);
        xmlFree(t);
        xmlFree(s);
        cell_off = x->row_text.n;
        in_cell = !empty;
      } else if (in_cell && local_is(r, "v") && !empty) {
        in_value = depth;
      } else if (in_cell && local_is(r, "is") && !empty) {
        is_depth = depth;
      } else if (is_depth >= 0 && local_is(r, "rPh") && !empty &&
                 rph_depth < 0) {
        rph_depth = depth;
      } else if (is_depth >= 0 && rph_depth < 0 && local_is(r, "t") && !empty) {
        in_value = depth;
      }
    } else if (nt == XML_READER_TYPE_END_ELEMENT) {
      if (in_value && depth == in_value)
        in_value = 0;
      else if (depth == rph_depth)
        rph_depth = -1;
      else if (depth == is_depth)
        is_depth = -1;
      else if (in_cell && local_is(r, "c")) {
        in_cell = 0;
        if (col >= 1 && col <= XLSX_MAX_COL)
          end_cell(x, col, type, style, cell_off);
        else
          x->row_text.n = cell_off;
      } else if (local_is(r, "row") && row) {
        put_comments(x, row, 0, name, hidden, &headed);
        if (!headed && x->n_cells) {
          /* the heading takes the first row's number */
          sheet_heading(x, row, name, hidden);
          headed = 1;
        }
        put_row(x, row, first_col);
        put_comments(x, row, 1, name, hidden, &headed);
        x->n_cells = 0;
        x->row_text.n = 0;
      }
    } else if (is_text(nt) && in_cell && in_value) {
      const char *v = (const char *)xmlTextReaderConstValue(r);
      if (v)
        dq_strbuf_add(&x->row_text, v, strlen(v));
    }
  }
  if (ret == 0) /* the comments of rows after the last */
    put_comments(x, UINT32_MAX, 1, name, hidden, &headed);
  if (x->over)
    st = dq_error_set(x->c->err, DQ_ERR_LIMIT,
                      "%s: %s: the sheets' text passes %zu MiB (a long "
                      "shared string in many cells?)",
                      x->c->name, path, XLSX_MAX_TEXT >> 20);
  else if (ret < 0)
    st = stream_error(x, r, path);
  else if (x->row_text.oom)
    st = dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory", x->c->name);
  xmlFreeTextReader(r);
  free(buf);
  return st;
}

/* A name cut to NAME_MAX_BYTES at a character's start, into
 * label[NAME_MAX_BYTES + 1]. */
static void sheet_label(const char *name, char *label) {
  size_t ln = name ? strlen(name) : 0;
  if (ln > NAME_MAX_BYTES) {
    ln = NAME_MAX_BYTES;
    while (ln && ((unsigned char)name[ln] & 0xC0) == 0x80)
      ln--;
  }
  if (ln)
    memcpy(label, name, ln);
  label[ln] = '\0';
}

/* The workbook's sheets in order: each worksheet read. */
dq_status dq_read_xlsx(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b, uint32_t *n_sheets) {
  xlsx x = {0};
  x.c = c;
  x.b = b;
  *n_sheets = 0;
  xmlDocPtr book = NULL, rels = NULL;
  char main[DQ_OPC_PATH_MAX], rp[DQ_OPC_PATH_MAX], part[DQ_OPC_PATH_MAX];
  dq_status st = dq_zip_open(&x.z, c, data, n, "an XLSX");
  if (st != DQ_OK || (st = dq_opc_main(&x.z, "xl/workbook.xml", main, rp, &book,
                                       &rels)) != DQ_OK)
    goto done;
  xmlNodePtr root = xmlDocGetRootElement(book);
  const char *d1904 = attr(child(root, "workbookPr"), "date1904");
  x.date1904 = d1904 && (!strcmp(d1904, "1") || !strcmp(d1904, "true"));
  if (dq_opc_rel_target(rels, main, NULL, "sharedStrings", part, sizeof part) &&
      (st = load_strings(&x, part)) != DQ_OK)
    goto done;
  if (dq_opc_rel_target(rels, main, NULL, "styles", part, sizeof part) &&
      (st = load_styles(&x, part)) != DQ_OK)
    goto done;
  xmlNodePtr list = child(root, "sheets");
  for (xmlNodePtr s = list ? list->children : NULL; s && st == DQ_OK;
       s = s->next) {
    if (!is(s, "sheet"))
      continue;
    if (x.sheet == XLSX_MAX_SHEETS) {
      st = dq_error_set(c->err, DQ_ERR_LIMIT, "%s: more than %u sheets",
                        c->name, XLSX_MAX_SHEETS);
      break;
    }
    x.sheet++;
    const char *id = dq_opc_rel_id(s);
    if (!id || !dq_opc_rel_target(rels, main, id, NULL, part, sizeof part)) {
      /* Excel opens such a workbook without the sheet (POI's 60825.xlsx:
       * a VBA module's sheet with r:id="") */
      dq_log(c->o->log, DQ_LOG_WARN,
             "%s: sheet %u (%s) names no part in %s: left out", c->name,
             x.sheet, attr(s, "name") ? attr(s, "name") : "no name", rp);
      continue;
    }
    /* a chart sheet (or a dialog, macro sheet) has no cells to read */
    if (!dq_opc_rel_target(rels, main, id, "worksheet", part, sizeof part))
      continue;
    const char *name = attr(s, "name"), *state = attr(s, "state");
    /* Excel's names are 31 characters; a longer one is cut */
    char label[NAME_MAX_BYTES + 1];
    sheet_label(name, label);
    if ((st = load_comments(&x, part)) != DQ_OK)
      break;
    st = sheet(&x, part, label,
               state &&
                   (!strcmp(state, "hidden") || !strcmp(state, "veryHidden")));
  }
  *n_sheets = x.sheet;
done:
  xmlFreeDoc(rels);
  xmlFreeDoc(book);
  dq_zip_close(&x.z);
  free(x.pool.p);
  free(x.str_off);
  free(x.xf_kind);
  free(x.cells);
  free(x.row_text.p);
  free(x.notes);
  free(x.note_pool.p);
  return st;
}

/* ---- OpenDocument spreadsheets (.ods) ---- */

/* A repeat count attribute (number-rows-repeated, number-columns-
 * repeated): 1 when absent or not a positive number, at most max. */
static uint32_t repeats(xmlTextReaderPtr r, const char *name, uint32_t max) {
  char *v = (char *)xmlTextReaderGetAttribute(r, BAD_CAST name);
  long n = v ? strtol(v, NULL, 10) : 1;
  xmlFree(v);
  return n < 1 ? 1 : n > (long)max ? max : (uint32_t)n;
}

/* An ODS date-value ("2024-03-12", "2024-03-12T14:30:00[.5]") as the
 * XLSX reader writes dates: its time only when not midnight, seconds
 * only when not 0. 0 when it is no date. */
static int ods_date(const char *v, char *out, size_t cap) {
  int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
  if (!v || sscanf(v, "%d-%d-%d%n", &y, &mo, &d, &n) != 3 || y < 0 ||
      y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31)
    return 0;
  if (v[n] == 'T' && sscanf(v + n, "T%d:%d:%d", &h, &mi, &sec) < 2)
    return 0;
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
    return 0;
  int w = !h && !mi && !sec ? snprintf(out, cap, "%04d-%02d-%02d", y, mo, d)
          : sec
              ? snprintf(out, cap, "%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h,
                         mi, sec)
              : snprintf(out, cap, "%04d-%02d-%02d %02d:%02d", y, mo, d, h, mi);
  return w > 0 && (size_t)w < cap;
}

/* An ODS time-value ("PT09H05M00S", ISO 8601's duration) as "09:05"
 * ("09:05:30" with seconds). 0 when it is none. */
static int ods_time(const char *v, char *out, size_t cap) {
  long h = 0, mi = 0;
  double sec = 0;
  if (!v || strncmp(v, "PT", 2))
    return 0;
  const char *p = v + 2;
  while (*p) {
    char *end;
    double num = strtod(p, &end);
    if (end == p || num < 0 || num > 1e6)
      return 0;
    if (*end == 'H')
      h = (long)num;
    else if (*end == 'M')
      mi = (long)num;
    else if (*end == 'S')
      sec = num;
    else
      return 0;
    p = end + 1;
  }
  long s = lround(sec);
  int w = s ? snprintf(out, cap, "%02ld:%02ld:%02ld", h, mi, s)
            : snprintf(out, cap, "%02ld:%02ld", h, mi);
  return w > 0 && (size_t)w < cap;
}

/* Whether shown text s is a plain number (digits, sign, point, grouping
 * commas or blanks): a float's value then speaks for it, as the XLSX
 * reader writes numbers ("1234567" for "1,234,567"). */
static int plain_number(const char *s, size_t n) {
  int digit = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (isdigit(ch))
      digit = 1;
    else if (!strchr("+-., ", ch))
      return 0;
  }
  return digit;
}

/* An ODS cell's value attributes, read at its start. */
typedef struct ods_cell {
  char type[16];
  char *value, *date, *time, *boolean, *string;
} ods_cell;

static void ods_cell_clear(ods_cell *k) {
  xmlFree(k->value);
  xmlFree(k->date);
  xmlFree(k->time);
  xmlFree(k->boolean);
  xmlFree(k->string);
  memset(k, 0, sizeof *k);
}

/* Replaces the cell's shown text, row_text[off..], with what the XLSX
 * reader would write for its value (module comment); adds it to the row
 * `reps` times from column col (empty: none). */
static void ods_end_cell(xlsx *x, const ods_cell *k, uint32_t col,
                         uint32_t reps, size_t off) {
  const char *shown = x->row_text.p ? x->row_text.p + off : "";
  size_t n = x->row_text.n - off;
  char buf[64];
  const char *text = NULL;
  if (!strcmp(k->type, "date") && ods_date(k->date, buf, sizeof buf))
    text = buf;
  else if (!strcmp(k->type, "time") && ods_time(k->time, buf, sizeof buf))
    text = buf;
  else if (!strcmp(k->type, "boolean") && k->boolean)
    text = !strcmp(k->boolean, "true") ? "TRUE" : "FALSE";
  else if (!strcmp(k->type, "percentage") && k->value) {
    double d = strtod(k->value, NULL);
    if (isfinite(d) && snprintf(buf, sizeof buf, "%.15g%%", d * 100) > 0)
      text = buf;
  } else if (!strcmp(k->type, "float") && k->value &&
             (!n || plain_number(shown, n))) {
    double d = strtod(k->value, NULL);
    if (isfinite(d) && snprintf(buf, sizeof buf, "%.15g", d) > 0)
      text = buf;
  } else if (!n) /* no paragraph: the value as stored */
    text = k->string  ? k->string
           : k->value ? k->value
           : k->date  ? k->date
                      : NULL;
  if (text) {
    x->row_text.n = off;
    dq_strbuf_add(&x->row_text, text, strlen(text));
    n = x->row_text.n - off;
  }
  if (!n || col > XLSX_MAX_COL)
    return;
  if (x->b->n + off + (size_t)reps * n > XLSX_MAX_TEXT) {
    x->over = 1;
    return;
  }
  for (uint32_t i = 0; i < reps && col + i <= XLSX_MAX_COL; i++)
    add_cell(x, col + i, off, n);
}

/* Names of the automatic table styles that hide a sheet
 * (style:table-properties table:display="false"), NUL-separated. */
static int hidden_style(const dq_strbuf *hidden, const char *name) {
  for (size_t i = 0; name && i < hidden->n; i += strlen(hidden->p + i) + 1)
    if (!strcmp(hidden->p + i, name))
      return 1;
  return 0;
}

dq_status dq_read_ods(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_sheets) {
  xlsx x = {0};
  x.c = c;
  x.b = b;
  *n_sheets = 0;
  char *buf = NULL, *style = NULL;
  xmlTextReaderPtr r = NULL;
  dq_strbuf hidden = {0};
  dq_strbuf ann_author = {0}, ann_text = {0}; /* a comment's */
  ods_cell k = {0};
  dq_status st = dq_zip_open(&x.z, c, data, n, "an ODS");
  if (st != DQ_OK ||
      (st = open_stream(&x, "content.xml", 1, &buf, &r)) != DQ_OK)
    goto done;
  /* depths: of the sheet (-1 outside one), of the cell, of a part of a
   * cell left out (a comment, a shape, a nested table) */
  int table = -1, in_cell = -1, skip = -1, paras = 0, headed = 0, ret = 1;
  int sheet_hidden = 0;
  /* a cell's comment (office:annotation) being read: its depth, of its
   * dc:creator and dc:date, its paragraphs so far */
  int ann = -1, ann_who = -1, ann_date = -1, ann_paras = 0;
  uint32_t row = 0, col = 0, cell_col = 1, row_reps = 1, cell_reps = 1;
  char label[NAME_MAX_BYTES + 1] = "";
  size_t cell_off = 0;
  while (!x.row_text.oom && !hidden.oom && !x.over &&
         (ret = xmlTextReaderRead(r)) == 1) {
    int nt = xmlTextReaderNodeType(r), depth = xmlTextReaderDepth(r);
    if (nt == XML_READER_TYPE_ELEMENT) {
      int empty = xmlTextReaderIsEmptyElement(r);
      if (skip >= 0)
        continue;
      if (ann >= 0) { /* inside a comment */
        if (local_is(r, "creator") && !empty)
          ann_who = depth;
        else if (local_is(r, "date") && !empty)
          ann_date = depth;
        else if (local_is(r, "p") && ann_paras++)
          dq_strbuf_add(&ann_text, " ", 1);
        else if (local_is(r, "s") || local_is(r, "tab") ||
                 local_is(r, "line-break"))
          dq_strbuf_add(&ann_text, " ", 1);
        continue;
      }
      if (table < 0 && local_is(r, "style")) {
        xmlFree(style);
        style = (char *)xmlTextReaderGetAttribute(r, BAD_CAST "style:name");
      } else if (table < 0 && local_is(r, "table-properties")) {
        char *d =
            (char *)xmlTextReaderGetAttribute(r, BAD_CAST "table:display");
        if (d && style && !strcmp(d, "false"))
          dq_strbuf_add(&hidden, style, strlen(style) + 1);
        xmlFree(d);
      } else if (local_is(r, "table") && table < 0) {
        if (x.sheet == XLSX_MAX_SHEETS) {
          st = dq_error_set(c->err, DQ_ERR_LIMIT, "%s: more than %u sheets",
                            c->name, XLSX_MAX_SHEETS);
          break;
        }
        x.sheet++;
        char *name =
            (char *)xmlTextReaderGetAttribute(r, BAD_CAST "table:name");
        char *ts =
            (char *)xmlTextReaderGetAttribute(r, BAD_CAST "table:style-name");
        sheet_label(name, label);
        sheet_hidden = hidden_style(&hidden, ts);
        xmlFree(name);
        xmlFree(ts);
        table = empty ? -1 : depth;
        row = 0;
        headed = 0;
        x.n_notes = x.next_note = 0;
        x.note_pool.n = 0;
      } else if (table < 0) {
        continue;
      } else if (in_cell >= 0 && local_is(r, "annotation")) {
        if (!empty) { /* a comment on the cell: after its row */
          ann = depth;
          ann_who = ann_date = -1;
          ann_paras = 0;
          ann_author.n = ann_text.n = 0;
        }
      } else if (local_is(r, "table") || local_is(r, "annotation") ||
                 local_is(r, "shapes") || local_is(r, "frame")) {
        skip = empty ? -1 : depth; /* not the sheet's own cells */
      } else if (local_is(r, "table-row")) {
        row_reps = repeats(r, "table:number-rows-repeated", XLSX_MAX_ROW);
        x.n_cells = 0;
        x.row_text.n = 0;
        col = 0;
        if (empty)
          row = row + row_reps > XLSX_MAX_ROW ? XLSX_MAX_ROW : row + row_reps;
      } else if (local_is(r, "table-cell") ||
                 local_is(r, "covered-table-cell")) {
        cell_reps = repeats(r, "table:number-columns-repeated", XLSX_MAX_COL);
        ods_cell_clear(&k);
        char *t =
            (char *)xmlTextReaderGetAttribute(r, BAD_CAST "office:value-type");
        snprintf(k.type, sizeof k.type, "%s", t ? t : "");
        xmlFree(t);
        k.value = (char *)xmlTextReaderGetAttribute(r, BAD_CAST "office:value");
        k.date =
            (char *)xmlTextReaderGetAttribute(r, BAD_CAST "office:date-value");
        k.time =
            (char *)xmlTextReaderGetAttribute(r, BAD_CAST "office:time-value");
        k.boolean = (char *)xmlTextReaderGetAttribute(r, BAD_CAST
                                                      "office:boolean-value");
        k.string = (char *)xmlTextReaderGetAttribute(r, BAD_CAST
                                                     "office:string-value");
        cell_off = x.row_text.n;
        paras = 0;
        cell_col = col + 1;
        col = col + cell_reps > XLSX_MAX_COL ? XLSX_MAX_COL : col + cell_reps;
        if (empty)
          ods_end_cell(&x, &k, cell_col, cell_reps, cell_off);
        else
          in_cell = depth;
      } else if (in_cell >= 0 && local_is(r, "p")) {
        if (paras++) /* a cell's paragraphs: one line, as a line break */
          dq_strbuf_add(&x.row_text, " ", 1);
      } else if (in_cell >= 0 && local_is(r, "s")) {
        uint32_t sp = repeats(r, "text:c", 64);
        for (uint32_t i = 0; i < sp; i++)
          dq_strbuf_add(&x.row_text, " ", 1);
      } else if (in_cell >= 0 &&
                 (local_is(r, "tab") || local_is(r, "line-break"))) {
        dq_strbuf_add(&x.row_text, " ", 1);
      }
    } else if (nt == XML_READER_TYPE_END_ELEMENT) {
      if (skip >= 0) {
        if (depth == skip)
          skip = -1;
      } else if (ann >= 0) {
        if (depth == ann) {
          ann = -1;
          add_note(&x, row + 1, cell_col, ann_author.p, ann_author.n,
                   ann_text.p, ann_text.n);
        } else if (depth == ann_who) {
          ann_who = -1;
        } else if (depth == ann_date) {
          ann_date = -1;
        }
      } else if (depth == in_cell) {
        in_cell = -1;
        ods_end_cell(&x, &k, cell_col, cell_reps, cell_off);
      } else if (table >= 0 && depth == table) {
        table = -1;
      } else if (table >= 0 && local_is(r, "table-row")) {
        uint32_t first = row + 1;
        if (x.n_cells && !headed) { /* at its first row with a value */
          sheet_heading(&x, first, label, sheet_hidden);
          headed = 1;
        }
        /* the row's line and its repeats, measured before they are
         * written: a cell's text repeated over columns and rows is
         * small in the file, not in memory */
        size_t line = x.n_cells ? 3 * (size_t)x.cells[x.n_cells - 1].col : 0;
        for (size_t i = 0; i < x.n_cells; i++)
          line += x.cells[i].n; /* and " | " before each column */
        if (x.n_cells && x.b->n + (double)line * row_reps > XLSX_MAX_TEXT)
          x.over = 1;
        for (uint32_t i = 0; x.n_cells && i < row_reps && !x.over; i++) {
          if (first + i > XLSX_MAX_ROW)
            break;
          put_row(&x, first + i, 1);
          if (i == 0) /* a repeated cell's comments: on its first row */
            put_comments(&x, first, 1, label, sheet_hidden, &headed);
        }
        put_comments(&x, first, 1, label, sheet_hidden, &headed);
        row = row + row_reps > XLSX_MAX_ROW ? XLSX_MAX_ROW : row + row_reps;
        x.n_cells = 0;
        x.row_text.n = 0;
      }
    } else if (is_text(nt) && ann >= 0 && skip < 0) {
      const char *v = (const char *)xmlTextReaderConstValue(r);
      if (v && ann_who >= 0)
        dq_strbuf_add(&ann_author, v, strlen(v));
      else if (v && ann_date < 0 && ann_paras)
        dq_strbuf_add(&ann_text, v, strlen(v));
    } else if (is_text(nt) && in_cell >= 0 && skip < 0 && paras) {
      const char *v = (const char *)xmlTextReaderConstValue(r);
      if (v)
        dq_strbuf_add(&x.row_text, v, strlen(v));
    }
  }
  if (st == DQ_OK && x.over)
    st = dq_error_set(c->err, DQ_ERR_LIMIT,
                      "%s: content.xml: the sheets' text passes %zu MiB (a "
                      "long text repeated in many cells?)",
                      c->name, XLSX_MAX_TEXT >> 20);
  else if (st == DQ_OK && ret < 0)
    st = stream_error(&x, r, "content.xml");
  else if (st == DQ_OK && (x.row_text.oom || hidden.oom || ann_text.oom ||
                           ann_author.oom || x.note_pool.oom))
    st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
  *n_sheets = x.sheet;
done:
  free(ann_author.p);
  free(ann_text.p);
  free(x.notes);
  free(x.note_pool.p);
  ods_cell_clear(&k);
  xmlFreeTextReader(r);
  free(buf);
  xmlFree(style);
  free(hidden.p);
  dq_zip_close(&x.z);
  free(x.cells);
  free(x.row_text.p);
  return st;
}

/* ---- Excel 97-2003 workbooks (.xls, BIFF8) ---- */

#define BIFF_BOF 0x0809
#define BIFF_EOF 0x000A
#define BIFF_FILEPASS 0x002F
#define BIFF_DATEMODE 0x0022
#define BIFF_BOUNDSHEET 0x0085
#define BIFF_SST 0x00FC
#define BIFF_CONTINUE 0x003C
#define BIFF_FORMAT 0x041E
#define BIFF_XF 0x00E0
#define BIFF_LABELSST 0x00FD
#define BIFF_LABEL 0x0204
#define BIFF_RSTRING 0x00D6
#define BIFF_NUMBER 0x0203
#define BIFF_RK 0x027E
#define BIFF_MULRK 0x00BD
#define BIFF_FORMULA 0x0006
#define BIFF_FORMULA4 0x0406 /* BIFF4's id, which some writers use */
#define BIFF_SHRFMLA 0x04BC
#define BIFF_ARRAY 0x0221
#define BIFF_TABLE 0x0236
#define BIFF_STRING 0x0207
#define BIFF_BOOLERR 0x0205
#define XLS_MAX_CELLS 4194304u /* 65536 rows x 64 columns, a sheet */

/* Record data split over a record and its CONTINUE records: a cursor
 * that reads on across them (the SST). */
typedef struct biff_seg {
  const unsigned char *p;
  size_t n;
} biff_seg;

typedef struct biff_segs {
  biff_seg *s;
  size_t n_segs, cap_segs, seg, off;
} biff_segs;

static size_t segs_left(const biff_segs *s) {
  return s->seg < s->n_segs ? s->s[s->seg].n - s->off : 0;
}

/* The next byte, moving on to the next segment at an end; -1 past all. */
static int segs_byte(biff_segs *s) {
  while (s->seg < s->n_segs && s->off >= s->s[s->seg].n) {
    s->seg++;
    s->off = 0;
  }
  return s->seg < s->n_segs ? s->s[s->seg].p[s->off++] : -1;
}

static int segs_skip(biff_segs *s, uint64_t n) {
  while (n) {
    size_t k = segs_left(s);
    if (!k) {
      if (++s->seg >= s->n_segs)
        return 0;
      s->off = 0;
      continue;
    }
    k = k < n ? k : (size_t)n;
    s->off += k;
    n -= k;
  }
  return 1;
}

/* Appends UTF-16 code unit u (a surrogate pair's halves kept in *high)
 * to out as UTF-8. */
static void utf16_put(dq_strbuf *out, uint32_t u, uint32_t *high) {
  char enc[4];
  uint32_t cp = u;
  if (u >= 0xD800 && u <= 0xDBFF) {
    *high = u;
    return;
  }
  if (u >= 0xDC00 && u <= 0xDFFF) {
    if (!*high)
      return;
    cp = 0x10000 + ((*high - 0xD800) << 10) + (u - 0xDC00);
  }
  *high = 0;
  if (cp == 0)
    return;
  dq_strbuf_add(out, enc, dq_utf8_encode(cp, enc));
}

/* An XLUnicodeRichExtendedString (SST) at the cursor, its characters
 * appended to out; where they run on into a CONTINUE record, its first
 * byte says again whether they are one byte or two. 0 when it is cut. */
static int sst_string(biff_segs *s, dq_strbuf *out) {
  int lo = segs_byte(s), hi = segs_byte(s), fl = segs_byte(s);
  if (lo < 0 || hi < 0 || fl < 0)
    return 0;
  size_t cch = (size_t)lo | (size_t)hi << 8;
  uint64_t runs = 0, ext = 0;
  if (fl & 0x08) {
    int a = segs_byte(s), b = segs_byte(s);
    if (a < 0 || b < 0)
      return 0;
    runs = (uint64_t)((unsigned)a | (unsigned)b << 8) * 4;
  }
  if (fl & 0x04) {
    for (int i = 0; i < 4; i++) {
      int a = segs_byte(s);
      if (a < 0)
        return 0;
      ext |= (uint64_t)a << (8 * i);
    }
  }
  int wide = fl & 1;
  uint32_t high = 0;
  while (cch) {
    if (!segs_left(s)) { /* on in a CONTINUE: its own option byte */
      if (++s->seg >= s->n_segs)
        return 0;
      s->off = 0;
      int f = segs_byte(s);
      if (f < 0)
        return 0;
      wide = f & 1;
      continue;
    }
    const unsigned char *p = s->s[s->seg].p + s->off;
    size_t avail = segs_left(s), k = wide ? avail / 2 : avail;
    if (!k)
      return 0; /* half a character at a record's end */
    k = k < cch ? k : cch;
    for (size_t i = 0; i < k; i++)
      utf16_put(out,
                wide ? (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8 : p[i],
                &high);
    s->off += wide ? 2 * k : k;
    cch -= k;
  }
  return segs_skip(s, runs + ext);
}

/* cch characters at p[0..n), one byte or two each, cut where n ends. */
static void xl_chars(const unsigned char *p, size_t n, size_t cch, int wide,
                     dq_strbuf *out) {
  size_t have = n / (wide ? 2 : 1);
  cch = cch < have ? cch : have;
  uint32_t high = 0;
  for (size_t i = 0; i < cch; i++)
    utf16_put(out, wide ? dq_le16(p + 2 * i) : p[i], &high);
}

/* An XLUnicodeString in one record (LABEL, STRING, FORMAT): 16-bit count,
 * option byte, characters; cut where the record ends. */
static void xl_string(const unsigned char *p, size_t n, dq_strbuf *out) {
  if (n >= 3)
    xl_chars(p + 3, n - 3, dq_le16(p), p[2] & 1, out);
}

/* An RK number: an integer or the top 30 bits of a double, maybe / 100. */
static double rk_value(uint32_t rk) {
  double v;
  if (rk & 2)
    v = (double)((int32_t)rk >> 2);
  else {
    uint64_t bits = (uint64_t)(rk & 0xFFFFFFFCu) << 32;
    memcpy(&v, &bits, sizeof v);
  }
  return rk & 1 ? v / 100 : v;
}

static const char *biff_error(int code) {
  switch (code) {
  case 0x00:
    return "#NULL!";
  case 0x07:
    return "#DIV/0!";
  case 0x0F:
    return "#VALUE!";
  case 0x17:
    return "#REF!";
  case 0x1D:
    return "#NAME?";
  case 0x24:
    return "#NUM!";
  case 0x2A:
    return "#N/A";
  default:
    return "#ERROR!";
  }
}

/* A cell of a sheet being read: its row and, in x->row_text, its text. */
typedef struct xls_cell {
  uint32_t row;
  cell k;
} xls_cell;

typedef struct xls {
  xlsx *x;
  xls_cell *cells;
  size_t n_cells, cap_cells;
  int over; /* more than XLS_MAX_CELLS */
} xls;

/* Adds the cell at (row, col), 0-based, whose text is
 * x->row_text[off..] (nothing when that is empty). */
static void xls_add(xls *s, uint32_t row, uint32_t col, size_t off) {
  xlsx *x = s->x;
  size_t n = x->row_text.n - off;
  if (!n)
    return;
  if (x->row_text.n > XLSX_MAX_TEXT) {
    x->over = 1;
    return;
  }
  if (s->n_cells == XLS_MAX_CELLS) {
    s->over = 1;
    return;
  }
  if (dq_grow((void **)&s->cells, &s->cap_cells, s->n_cells + 1,
              sizeof *s->cells)) {
    x->row_text.oom = 1;
    return;
  }
  s->cells[s->n_cells++] = (xls_cell){row, {col + 1, off, n}};
}

static void xls_number(xls *s, uint32_t row, uint32_t col, uint32_t xf,
                       double v) {
  char raw[40], shown[64];
  if (!isfinite(v))
    return;
  snprintf(raw, sizeof raw, "%.17g", v);
  format_number(s->x, raw, (long)xf, shown, sizeof shown);
  size_t off = s->x->row_text.n;
  dq_strbuf_adds(&s->x->row_text, shown);
  xls_add(s, row, col, off);
}

static void xls_text(xls *s, uint32_t row, uint32_t col, const char *t) {
  size_t off = s->x->row_text.n;
  dq_strbuf_adds(&s->x->row_text, t);
  xls_add(s, row, col, off);
}

static int xls_cell_cmp(const void *a, const void *b) {
  const xls_cell *p = a, *q = b;
  if (p->row != q->row)
    return p->row < q->row ? -1 : 1;
  return p->k.col < q->k.col ? -1 : p->k.col > q->k.col;
}

/* One worksheet's substream from its BOF at wb[at]: its cells, sorted by
 * row and column (a writer may put them in any order), written as rows. */
static dq_status xls_sheet(xlsx *x, const unsigned char *wb, size_t n_wb,
                           size_t at, const char *name, int hidden) {
  xls s = {x, NULL, 0, 0, 0};
  x->row_text.n = 0;
  size_t pos = at;
  int32_t str_row = -1, str_col = -1; /* a string formula's cell */
  int first = 1, depth = 0; /* depth: in an embedded chart's substream */
  while (pos + 4 <= n_wb && !x->over && !s.over && !x->row_text.oom) {
    uint32_t type = dq_le16(wb + pos), len = dq_le16(wb + pos + 2);
    const unsigned char *r = wb + pos + 4;
    if (pos + 4 + len > n_wb)
      break; /* cut short: what was read stays */
    pos += 4 + len;
    if (first) { /* the substream opens with its BOF */
      first = 0;
      if (type != BIFF_BOF)
        break;
      continue;
    }
    if (type == BIFF_BOF) { /* a chart's substream inside the sheet's */
      depth++;
      continue;
    }
    if (type == BIFF_EOF && depth-- == 0)
      break;
    if (depth > 0)
      continue;
    uint32_t row = len >= 2 ? dq_le16(r) : 0;
    uint32_t col = len >= 4 ? dq_le16(r + 2) : 0;
    uint32_t xf = len >= 6 ? dq_le16(r + 4) : 0;
    /* a string formula's STRING record follows it, maybe after the
     * shared or array formula it defines */
    if (type != BIFF_STRING && type != BIFF_SHRFMLA && type != BIFF_ARRAY &&
        type != BIFF_TABLE)
      str_row = -1;
    switch (type) {
    case BIFF_LABELSST:
      if (len >= 10) {
        uint32_t i = dq_le32(r + 6);
        if (i < x->n_str)
          xls_text(&s, row, col, x->pool.p + x->str_off[i]);
      }
      break;
    case BIFF_LABEL:
    case BIFF_RSTRING:
      if (len >= 6) {
        size_t off = x->row_text.n;
        xl_string(r + 6, len - 6, &x->row_text);
        xls_add(&s, row, col, off);
      }
      break;
    case BIFF_NUMBER:
      if (len >= 14) {
        double v;
        uint64_t bits = dq_le64(r + 6);
        memcpy(&v, &bits, sizeof v);
        xls_number(&s, row, col, xf, v);
      }
      break;
    case BIFF_RK:
      if (len >= 10)
        xls_number(&s, row, col, xf, rk_value(dq_le32(r + 6)));
      break;
    case BIFF_MULRK:
      for (size_t i = 0; len >= 6 && 4 + 6 * (i + 1) <= len - 2; i++)
        xls_number(&s, row, col + (uint32_t)i, dq_le16(r + 4 + 6 * i),
                   rk_value(dq_le32(r + 6 + 6 * i)));
      break;
    case BIFF_FORMULA: /* its cached value */
    case BIFF_FORMULA4:
      if (len >= 14) {
        const unsigned char *v = r + 6;
        if (v[6] != 0xFF || v[7] != 0xFF) {
          double d;
          uint64_t bits = dq_le64(v);
          memcpy(&d, &bits, sizeof d);
          xls_number(&s, row, col, xf, d);
        } else if (v[0] == 0) { /* a string: the STRING record after it */
          str_row = (int32_t)row;
          str_col = (int32_t)col;
        } else if (v[0] == 1)
          xls_text(&s, row, col, v[2] ? "TRUE" : "FALSE");
        else if (v[0] == 2)
          xls_text(&s, row, col, biff_error(v[2]));
      }
      break;
    case BIFF_STRING:
      if (str_row >= 0) {
        size_t off = x->row_text.n;
        xl_string(r, len, &x->row_text);
        xls_add(&s, (uint32_t)str_row, (uint32_t)str_col, off);
        str_row = -1;
      }
      break;
    case BIFF_BOOLERR:
      if (len >= 8)
        xls_text(&s, row, col,
                 r[7]   ? biff_error(r[6])
                 : r[6] ? "TRUE"
                        : "FALSE");
      break;
    default:
      break;
    }
  }
  dq_status st = DQ_OK;
  if (x->row_text.oom) {
    st = dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory", x->c->name);
  } else if (s.over) {
    st = dq_error_set(x->c->err, DQ_ERR_LIMIT,
                      "%s: sheet %u (%s) has more than %u cells", x->c->name,
                      x->sheet, name, XLS_MAX_CELLS);
  } else if (s.n_cells) {
    qsort(s.cells, s.n_cells, sizeof *s.cells, xls_cell_cmp);
    uint32_t first_col = UINT32_MAX;
    for (size_t i = 0; i < s.n_cells; i++)
      if (s.cells[i].k.col < first_col)
        first_col = s.cells[i].k.col;
    sheet_heading(x, s.cells[0].row + 1, name, hidden);
    for (size_t i = 0; i < s.n_cells && !x->over;) {
      size_t j = i;
      x->n_cells = 0;
      for (; j < s.n_cells && s.cells[j].row == s.cells[i].row; j++)
        add_cell(x, s.cells[j].k.col, s.cells[j].k.off, s.cells[j].k.n);
      put_row(x, s.cells[i].row + 1, first_col);
      x->over = x->b->n > XLSX_MAX_TEXT;
      i = j;
    }
    x->n_cells = 0;
  }
  free(s.cells);
  return st;
}

/* The globals' shared strings: the SST record and its CONTINUE records
 * from wb[at] on, into x->pool / x->str_off. */
static dq_status xls_sst(xlsx *x, const unsigned char *wb, size_t n_wb,
                         size_t at) {
  biff_segs s = {0};
  for (size_t pos = at; pos + 4 <= n_wb;) {
    uint32_t type = dq_le16(wb + pos), len = dq_le16(wb + pos + 2);
    if (pos + 4 + len > n_wb || (pos != at && type != BIFF_CONTINUE))
      break;
    if (dq_grow((void **)&s.s, &s.cap_segs, s.n_segs + 1, sizeof *s.s)) {
      free(s.s);
      return dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                          x->c->name);
    }
    s.s[s.n_segs++] = (biff_seg){wb + pos + 4, len};
    pos += 4 + len;
  }
  dq_status st = DQ_OK;
  if (s.n_segs && s.s[0].n >= 8) {
    size_t unique = dq_le32(s.s[0].p + 4);
    s.off = 8;
    for (size_t i = 0; i < unique && pool_begin(x); i++) {
      int ok = sst_string(&s, &x->pool);
      dq_strbuf_add(&x->pool, "\0", 1);
      if (!ok)
        break; /* cut short: the strings read so far stand */
      if (x->pool.n > XLSX_MAX_TEXT) {
        st = dq_error_set(x->c->err, DQ_ERR_LIMIT,
                          "%s: its shared strings pass %zu MiB", x->c->name,
                          XLSX_MAX_TEXT >> 20);
        break;
      }
    }
    if (st == DQ_OK && x->pool.oom)
      st = dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        x->c->name);
  }
  free(s.s);
  return st;
}

typedef struct xls_sheet_ref {
  uint32_t at; /* its BOF's offset in the Workbook stream */
  int kind, hidden;
  char name[NAME_MAX_BYTES + 1];
} xls_sheet_ref;

dq_status dq_read_xls(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_sheets) {
  xlsx x = {0};
  x.c = c;
  x.b = b;
  *n_sheets = 0;
  dq_cfb f;
  unsigned char *wb = NULL;
  size_t n_wb = 0, n_refs = 0, n_xf = 0, n_fmt = 0;
  xls_sheet_ref *refs = NULL;
  uint16_t *xf_fmt = NULL;
  struct fmt {
    uint16_t id;
    unsigned char kind;
  } *fmts = NULL;
  dq_strbuf tmp = {0};
  dq_status st;
  if (!dq_cfb_magic(data, n)) { /* Excel 2.x-4.0: a bare record stream */
    memset(&f, 0, sizeof f);
    st = dq_error_set(c->err, DQ_ERR_FORMAT,
                      "%s: an Excel 2.x-4.0 worksheet (BIFF2-4), which docqa "
                      "does not read",
                      c->name);
    goto done;
  }
  st = dq_cfb_open(&f, c, data, n, "Excel workbook (.xls)");
  if (st != DQ_OK)
    goto done;
  long wi = dq_cfb_child_named(&f, 0, "Workbook");
  if (wi < 0) {
    st = dq_cfb_bad(&f, dq_cfb_child_named(&f, 0, "Book") >= 0
                            ? "an Excel 5.0/95 workbook (BIFF5), which docqa "
                              "does not read"
                            : "no Workbook stream (another Office file?)");
    goto done;
  }
  if ((st = dq_cfb_stream(&f, (size_t)wi, &wb, &n_wb)) != DQ_OK)
    goto done;
  if (n_wb < 8 || dq_le16(wb) != BIFF_BOF || dq_le16(wb + 4) != 0x0600) {
    /* (Excel 5.0/95 writes a BIFF5 BOF in a Workbook stream too) */
    st = dq_cfb_bad(&f, n_wb >= 8 && dq_le16(wb) == BIFF_BOF
                            ? "an Excel 5.0/95 workbook (BIFF5), which docqa "
                              "does not read"
                            : "its Workbook stream opens with no BIFF8 BOF");
    goto done;
  }
  /* the globals: up to their EOF */
  size_t pos = 0, cap_refs = 0, cap_xf = 0, cap_fmt = 0;
  while (st == DQ_OK && pos + 4 <= n_wb) {
    uint32_t type = dq_le16(wb + pos), len = dq_le16(wb + pos + 2);
    const unsigned char *r = wb + pos + 4;
    if (pos + 4 + len > n_wb) {
      st = dq_cfb_bad(&f, "a record of its Workbook stream runs past its end");
      break;
    }
    size_t here = pos;
    pos += 4 + len;
    if (type == BIFF_EOF)
      break;
    if (type == BIFF_FILEPASS) {
      st = dq_error_set(c->err, DQ_ERR_FORMAT,
                        "%s: encrypted Excel workbook (a password to open); "
                        "save it without one to index it",
                        c->name);
    } else if (type == BIFF_DATEMODE && len >= 2) {
      x.date1904 = dq_le16(r) == 1;
    } else if (type == BIFF_SST) {
      st = xls_sst(&x, wb, n_wb, here);
    } else if (type == BIFF_XF && len >= 4) {
      if (dq_grow((void **)&xf_fmt, &cap_xf, n_xf + 1, sizeof *xf_fmt))
        goto oom;
      xf_fmt[n_xf++] = (uint16_t)dq_le16(r + 2);
    } else if (type == BIFF_FORMAT && len >= 2) {
      if (dq_grow((void **)&fmts, &cap_fmt, n_fmt + 1, sizeof *fmts))
        goto oom;
      tmp.n = 0;
      xl_string(r + 2, len - 2, &tmp);
      dq_strbuf_add(&tmp, "", 0);
      fmts[n_fmt].id = (uint16_t)dq_le16(r);
      fmts[n_fmt++].kind = (unsigned char)code_kind(tmp.p ? tmp.p : "");
    } else if (type == BIFF_BOUNDSHEET && len >= 8) {
      if (n_refs == XLSX_MAX_SHEETS) {
        st = dq_error_set(c->err, DQ_ERR_LIMIT, "%s: more than %u sheets",
                          c->name, XLSX_MAX_SHEETS);
        break;
      }
      if (dq_grow((void **)&refs, &cap_refs, n_refs + 1, sizeof *refs))
        goto oom;
      xls_sheet_ref *s = &refs[n_refs++];
      s->at = dq_le32(r);
      s->hidden = (r[4] & 3) != 0;
      s->kind = r[5];
      /* ShortXLUnicodeString: an 8-bit count */
      tmp.n = 0;
      xl_chars(r + 8, len - 8, r[6], r[7] & 1, &tmp);
      dq_strbuf_add(&tmp, "", 0);
      sheet_label(tmp.p ? tmp.p : "", s->name);
    }
    if (tmp.oom)
      goto oom;
  }
  if (st != DQ_OK)
    goto done;
  /* each XF's number format kind, as the XLSX reader's styles */
  if (!(x.xf_kind = calloc(n_xf ? n_xf : 1, 1)))
    goto oom;
  for (size_t i = 0; i < n_xf; i++) {
    int kind = builtin_kind(xf_fmt[i]);
    for (size_t k = 0; k < n_fmt; k++)
      if (fmts[k].id == xf_fmt[i])
        kind = fmts[k].kind;
    x.xf_kind[x.n_xf++] = (unsigned char)kind;
  }
  for (size_t i = 0; i < n_refs && st == DQ_OK; i++) {
    x.sheet = (uint32_t)i + 1;
    if (refs[i].kind != 0) /* a chart, macro or module sheet: no cells */
      continue;
    if (refs[i].at >= n_wb) {
      dq_log(c->o->log, DQ_LOG_WARN,
             "%s: sheet %zu (%s) lies past the Workbook stream: left out",
             c->name, i + 1, refs[i].name);
      continue;
    }
    st = xls_sheet(&x, wb, n_wb, refs[i].at, refs[i].name, refs[i].hidden);
    if (st == DQ_OK && x.over)
      st = dq_error_set(c->err, DQ_ERR_LIMIT,
                        "%s: the sheets' text passes %zu MiB", c->name,
                        XLSX_MAX_TEXT >> 20);
  }
  *n_sheets = (uint32_t)n_refs;
  goto done;
oom:
  st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
done:
  dq_cfb_close(&f);
  free(wb);
  free(refs);
  free(xf_fmt);
  free(fmts);
  free(tmp.p);
  free(x.pool.p);
  free(x.str_off);
  free(x.xf_kind);
  free(x.cells);
  free(x.row_text.p);
  return st;
}
