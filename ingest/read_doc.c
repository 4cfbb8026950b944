/*
 * read_doc.c - Word 97-2003 documents (.doc, [MS-DOC]): the text of a
 * compound file's WordDocument stream, in the order its piece table puts
 * it. The container is read_cfb.c's.
 *
 * The File Information Block at the stream's start: FibBase (wIdent
 * 0xA5EC, nFib, and flags: fEncrypted 0x0100, fWhichTblStm 0x0200 naming
 * the table stream "1Table" or "0Table"), then csw 16-bit and cslw 32-bit
 * values (FibRgLw97: ccpText, ccpFtn, ccpHdd, ccpMcr, ccpAtn, ccpEdn,
 * ccpTxbx, ccpHdrTxbx at indices 3 to 10, the characters of the main
 * text and each sub-document after it), then cbRgFcLcb pairs of (offset,
 * size) into the table stream, of which pair 33 is the Clx. The Clx: Prc
 * records (0x01, a 16-bit size, property data) then the Pcdt (0x02, a
 * 32-bit size, a PlcPcd: n + 1 character positions, then n 8-byte piece
 * descriptors whose 32-bit fc at offset 2 says where the piece's text is:
 * bit 30 set, 8-bit text at byte fc / 2 (code page 1252); clear, UTF-16LE
 * at byte fc).
 *
 * Output: the main text, a paragraph (0x0D) a line, then the footnotes,
 * the comments, the endnotes and the text boxes, each after a line
 * "[footnotes]", "[comments]", "[endnotes]", "[text boxes]" when there
 * are any (headers and footers are left out: a page's boilerplate). A
 * table's cells (each ending in 0x07, the row with one more) are joined
 * by " | ", a row a line. Fields (0x13 code 0x14 result 0x15) show their
 * result, not their code ("PAGE", "HYPERLINK ..."); a line break (0x0B),
 * page or column break is a line's end; a non-breaking hyphen (0x1E) a
 * '-'; the optional hyphen (0x1F), pictures and note and comment marks
 * are dropped. Marks carry line = the paragraph's number, as a DOCX's;
 * no headings (the style sheet is not read).
 *
 * Refused, each named: an encrypted document, a Word 6 or 95 one (its
 * FIB signed 0xA5DC, or nFib below 193: another layout), a FIB, Clx or piece past its stream, piece
 * positions that do not increase, more than DOC_MAX_CHARS characters.
 */
#include "ingest_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC_MAX_CHARS (64u << 20) /* characters of all the text */
#define DOC_MAX_FIELDS 64         /* fields nested in fields */
#define DOC_NFIB_97 193           /* Word 97's FIB; earlier ones differ */

/* Code page 1252's 0x80-0x9F (the rest is Latin-1); its five holes kept as
 * the C1 control they would be. */
static const uint16_t CP1252_HIGH[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

typedef struct doc {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  const dq_cfb *f;         /* its container, for messages */
  const unsigned char *wd; /* the WordDocument stream */
  size_t n_wd;
  const unsigned char *cps; /* the PlcPcd's positions, n_pieces + 1 */
  const unsigned char *pcds;
  size_t n_pieces;
  uint32_t para; /* the paragraph being written, 1-based */
  /* fields: for each open one, whether its result has begun */
  unsigned char field[DOC_MAX_FIELDS];
  unsigned n_fields, deep_fields; /* open ones; past DOC_MAX_FIELDS */
  int cell;      /* the last character was a cell's end */
  int in_row;    /* inside a table's row */
  size_t sep_at; /* where the last cell's " | " starts */
} doc;

/* Whether text is shown now: not inside a field's code. */
static int shown(const doc *d) {
  for (unsigned i = 0; i < d->n_fields; i++)
    if (!d->field[i])
      return 0;
  return !d->deep_fields;
}

/* Ends the paragraph: its line, unless it holds nothing (an empty
 * paragraph is no line, but counts). */
static void end_line(doc *d) {
  dq_tbuf_trim_spaces(d->b, 0);
  if (d->b->n && dq_tbuf_last(d->b) != '\n')
    dq_tbuf_putc(d->b, '\n');
  dq_tbuf_pos(d->b, ++d->para, 0);
}

/* One character of the text. */
static void put_char(doc *d, uint32_t ch) {
  switch (ch) {
  case 0x13: /* a field's code begins */
    if (d->n_fields < DOC_MAX_FIELDS)
      d->field[d->n_fields++] = 0;
    else
      d->deep_fields++;
    return;
  case 0x14: /* its result begins */
    if (!d->deep_fields && d->n_fields)
      d->field[d->n_fields - 1] = 1;
    return;
  case 0x15: /* it ends */
    if (d->deep_fields)
      d->deep_fields--;
    else if (d->n_fields)
      d->n_fields--;
    return;
  }
  if (!shown(d))
    return;
  if (ch == 0x07) {
    if (d->cell) { /* right after a cell's end: the row's end */
      dq_tbuf_truncate(d->b, d->sep_at);
      d->cell = d->in_row = 0;
      end_line(d);
    } else { /* a cell's end */
      dq_tbuf_trim_spaces(d->b, 0);
      d->sep_at = d->b->n;
      dq_tbuf_put(d->b, " | ", 3);
      d->cell = d->in_row = 1;
    }
    return;
  }
  d->cell = 0;
  int line_start = !d->b->n || dq_tbuf_last(d->b) == '\n';
  if (ch == 0x0D || ch == 0x0B || ch == 0x0C || ch == 0x0E) {
    /* a paragraph's end, a line, page or column break: in a row, a
     * blank (the row stays a line); a line break keeps the paragraph */
    if (d->in_row) {
      dq_tbuf_space(d->b);
    } else if (ch == 0x0B) {
      dq_tbuf_trim_spaces(d->b, 0);
      if (!line_start)
        dq_tbuf_putc(d->b, '\n');
    } else {
      end_line(d);
    }
  } else if ((ch == 0x09 || ch == ' ') && line_start) {
    /* blanks that open a line: a note's text after its mark and tab */
  } else if (ch == 0x09) {
    dq_tbuf_putc(d->b, '\t');
  } else if (ch == 0x1E) {
    dq_tbuf_putc(d->b, '-');
  } else if (ch == 0xA0) {
    dq_tbuf_putc(d->b, ' ');
  } else if (ch >= 0x20 && ch != 0xFFFF) {
    dq_tbuf_put_cp(d->b, ch);
  } /* other controls: pictures, note marks, the optional hyphen */
}

/* The characters at positions [from, to) of the text, through the
 * pieces. */
static dq_status put_range(doc *d, uint32_t from, uint32_t to) {
  uint32_t pending_high = 0; /* a UTF-16 high surrogate */
  for (size_t i = 0; i < d->n_pieces && from < to; i++) {
    uint32_t a = dq_le32(d->cps + 4 * i), z = dq_le32(d->cps + 4 * i + 4);
    if (z <= from || a >= to)
      continue;
    uint32_t fc = dq_le32(d->pcds + 8 * i + 2);
    int compressed = (fc & 0x40000000u) != 0;
    uint64_t at = compressed ? (fc & 0x3FFFFFFFu) / 2 : (fc & 0x3FFFFFFFu);
    uint32_t lo = from > a ? from : a, hi = to < z ? to : z;
    uint64_t unit = compressed ? 1 : 2;
    uint64_t start = at + (uint64_t)(lo - a) * unit;
    uint64_t end = at + (uint64_t)(hi - a) * unit;
    if (end > d->n_wd || start > end)
      return dq_cfb_bad(d->f,
                        "a piece of text lies past the WordDocument stream");
    for (uint64_t p = start; p < end; p += unit) {
      uint32_t ch;
      if (compressed) {
        ch = d->wd[p];
        if (ch >= 0x80 && ch < 0xA0)
          ch = CP1252_HIGH[ch - 0x80];
      } else {
        ch = dq_le16(d->wd + p);
        if (ch >= 0xD800 && ch < 0xDC00) {
          pending_high = ch;
          continue;
        }
        if (ch >= 0xDC00 && ch < 0xE000) {
          ch = pending_high
                   ? 0x10000 + ((pending_high - 0xD800) << 10) + (ch - 0xDC00)
                   : 0xFFFD;
        } else if (pending_high) {
          put_char(d, 0xFFFD);
        }
        pending_high = 0;
      }
      put_char(d, ch);
    }
    from = hi;
  }
  return DQ_OK;
}

dq_status dq_read_doc(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b) {
  dq_cfb f;
  doc d = {0};
  d.c = c;
  d.b = b;
  unsigned char *wd = NULL, *table = NULL;
  size_t n_table = 0;
  d.f = &f;
  dq_status st = dq_cfb_open(&f, c, data, n, "Word document (.doc)");
  if (st != DQ_OK)
    goto done;
  long wi = dq_cfb_child_named(&f, 0, "WordDocument");
  if (wi < 0) {
    st = dq_cfb_bad(&f, "no WordDocument stream (another Office file?)");
    goto done;
  }
  if ((st = dq_cfb_stream(&f, (size_t)wi, &wd, &d.n_wd)) != DQ_OK)
    goto done;
  d.wd = wd;
  if (d.n_wd < 0x22 ||
      (dq_le16(wd) != 0xA5EC && dq_le16(wd) != 0xA5DC)) {
    st = dq_cfb_bad(&f, "no Word file information block");
    goto done;
  }
  /* Word 6 and 95 sign theirs 0xA5DC (and some 0xA5EC with an old nFib) */
  unsigned nfib = dq_le16(wd) == 0xA5DC ? 0 : dq_le16(wd + 2);
  unsigned flags = dq_le16(wd + 0x0A);
  if (flags & 0x0100) {
    st = dq_error_set(c->err, DQ_ERR_UNSUPPORTED,
                      "%s: encrypted Word document (a password is needed)",
                      c->name);
    goto done;
  }
  if (nfib < DOC_NFIB_97) {
    st = dq_error_set(c->err, DQ_ERR_UNSUPPORTED,
                      "%s: a Word 6 or 95 document (file format %u): only "
                      "Word 97 and later are read",
                      c->name, dq_le16(wd + 2));
    goto done;
  }
  /* FibRgW, FibRgLw, then FibRgFcLcb: each size checked against the
   * stream */
  size_t at = 0x20;
  size_t csw = dq_le16(wd + at);
  at += 2 + 2 * csw;
  if (at + 2 > d.n_wd) {
    st = dq_cfb_bad(&f, "its file information block is cut short");
    goto done;
  }
  size_t cslw = dq_le16(wd + at), lw = at + 2;
  at = lw + 4 * cslw;
  if (cslw < 11 || at + 2 > d.n_wd) {
    st = dq_cfb_bad(&f, "its file information block is cut short");
    goto done;
  }
  size_t n_pairs = dq_le16(wd + at), pairs = at + 2;
  if (n_pairs < 34 || pairs + 8 * 34 > d.n_wd) {
    st = dq_cfb_bad(&f, "its file information block has no piece table entry");
    goto done;
  }
  uint32_t ccp[8]; /* text, footnotes, headers, macros, comments, endnotes,
                      text boxes, header text boxes */
  uint64_t total = 0;
  for (int k = 0; k < 8; k++) {
    ccp[k] = dq_le32(wd + lw + 4 * (3 + k));
    total += ccp[k];
  }
  if (total > DOC_MAX_CHARS) {
    st = dq_error_set(c->err, DQ_ERR_LIMIT,
                      "%s: %llu characters, over the limit of %u", c->name,
                      (unsigned long long)total, DOC_MAX_CHARS);
    goto done;
  }
  uint32_t fc_clx = dq_le32(wd + pairs + 8 * 33);
  uint32_t lcb_clx = dq_le32(wd + pairs + 8 * 33 + 4);
  long ti = dq_cfb_child_named(&f, 0, flags & 0x0200 ? "1Table" : "0Table");
  if (ti < 0) {
    st = dq_cfb_bad(&f, "no table stream");
    goto done;
  }
  if ((st = dq_cfb_stream(&f, (size_t)ti, &table, &n_table)) != DQ_OK)
    goto done;
  if ((uint64_t)fc_clx + lcb_clx > n_table) {
    st = dq_cfb_bad(&f, "its piece table lies past the table stream");
    goto done;
  }
  /* the Clx: property records, then the piece table */
  const unsigned char *x = table + fc_clx, *xe = x + lcb_clx;
  while (x < xe && *x == 0x01) {
    if (xe - x < 3 || (size_t)(xe - x) < 3u + dq_le16(x + 1)) {
      st = dq_cfb_bad(&f, "its piece table's property records are cut short");
      goto done;
    }
    x += 3 + dq_le16(x + 1);
  }
  if (xe - x < 5 || *x != 0x02) {
    st = dq_cfb_bad(&f, "no piece table");
    goto done;
  }
  uint32_t lcb = dq_le32(x + 1);
  if (lcb > (size_t)(xe - x - 5) || lcb < 4 || (lcb - 4) % 12) {
    st = dq_cfb_bad(&f, "a piece table of a size no table has");
    goto done;
  }
  d.n_pieces = (lcb - 4) / 12;
  d.cps = x + 5;
  d.pcds = d.cps + 4 * (d.n_pieces + 1);
  for (size_t i = 0; i < d.n_pieces; i++)
    if (dq_le32(d.cps + 4 * i) >= dq_le32(d.cps + 4 * i + 4)) {
      st = dq_cfb_bad(&f, "piece positions that do not increase");
      goto done;
    }
  /* the main text, then the notes, comments and text boxes */
  dq_tbuf_pos(b, d.para = 1, 0);
  uint32_t pos = 0;
  static const struct {
    int k;
    const char *label;
  } parts[] = {{0, NULL},           {1, "[footnotes]"}, {2, NULL},
               {3, NULL},           {4, "[comments]"},  {5, "[endnotes]"},
               {6, "[text boxes]"}, {7, NULL}};
  for (int p = 0; p < 8 && st == DQ_OK; p++) {
    uint32_t len = ccp[parts[p].k];
    if (len && (p == 0 || parts[p].label)) {
      if (parts[p].label) {
        dq_tbuf_put(b, parts[p].label, strlen(parts[p].label));
        end_line(&d);
      }
      d.n_fields = d.deep_fields = 0;
      d.cell = d.in_row = 0;
      st = put_range(&d, pos, pos + len);
      end_line(&d);
    }
    pos += len;
  }
done:
  free(wd);
  free(table);
  dq_cfb_close(&f);
  return st;
}
