/*
 * read_dispatch.c - the front door of the readers: dq_read (a file, read once
 * into memory under a size limit and hashed), dq_read_buffer (memory, for
 * tests and fuzzers), file-kind detection, and the dq_tbuf text builder every
 * reader appends to. The format-specific work lives in read_text.c (plain,
 * code, Markdown), read_xml.c (HTML, XML), read_docx.c, read_odt.c,
 * read_epub.c (their zip container: read_zip.c), read_mail.c,
 * read_rtf.c and read_pdf.c.
 */
#include "ingest_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- text builder ---- */

void dq_tbuf_init(dq_tbuf *b) {
  memset(b, 0, sizeof *b);
  b->line = 1;
}

void dq_tbuf_clear(dq_tbuf *b) {
  for (size_t i = 0; i < b->n_heads; i++)
    free(b->heads[i].title);
  free(b->heads);
  free(b->marks);
  free(b->text);
  dq_tbuf_init(b);
}

int dq_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t n = *cap ? *cap : 16;
  while (n < need) {
    if (n > SIZE_MAX / 2 / elem)
      return -1;
    n *= 2;
  }
  void *q = realloc(*p, n * elem);
  if (!q)
    return -1;
  *p = q;
  *cap = n;
  return 0;
}

/* Records that the byte at b->n comes from (b->line, b->page). */
static void mark(dq_tbuf *b) {
  if (b->n_marks) {
    dq_srcmark *last = &b->marks[b->n_marks - 1];
    if (last->line == b->line && last->page == b->page)
      return;
    if (last->offset == b->n) { /* nothing was written under it */
      last->line = b->line;
      last->page = b->page;
      return;
    }
  }
  if (dq_grow((void **)&b->marks, &b->cap_marks, b->n_marks + 1,
              sizeof *b->marks)) {
    b->oom = 1;
    return;
  }
  b->marks[b->n_marks++] = (dq_srcmark){b->n, b->line, b->page};
}

void dq_tbuf_put(dq_tbuf *b, const char *s, size_t n) {
  if (n == 0 || b->oom)
    return;
  mark(b);
  if (b->n + n + 1 < b->n ||
      dq_grow((void **)&b->text, &b->cap, b->n + n + 1, 1)) {
    b->oom = 1;
    return;
  }
  memcpy(b->text + b->n, s, n);
  b->n += n;
  b->text[b->n] = '\0';
}

size_t dq_utf8_encode(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | cp >> 18);
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

void dq_tbuf_put_cp(dq_tbuf *b, uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    b->n_replaced++;
    cp = 0xFFFD;
  }
  char u[4];
  dq_tbuf_put(b, u, dq_utf8_encode(cp, u));
}

size_t dq_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t need;
  unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
  uint32_t v;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
    v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    v = c & 0x0F;
    if (c == 0xE0)
      lo = 0xA0; /* overlong */
    else if (c == 0xED)
      hi = 0x9F; /* surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    v = c & 0x07;
    if (c == 0xF0)
      lo = 0x90;
    else if (c == 0xF4)
      hi = 0x8F; /* > U+10FFFF */
  } else {
    *cp = UINT32_MAX;
    return 1;
  }
  size_t i = 1;
  for (; i <= need; i++) {
    if (i >= n)
      break;
    unsigned d = s[i];
    unsigned l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (d < l || d > h)
      break;
    v = v << 6 | (d & 0x3F);
  }
  if (i <= need) {
    *cp = UINT32_MAX;
    return i;
  }
  *cp = v;
  return need + 1;
}

static void put_checked(dq_tbuf *b, const char *s, size_t n, int lines) {
  const unsigned char *u = (const unsigned char *)s;
  size_t run = 0; /* start of the pending run of bytes copied as they are */
  size_t i = 0;
  while (i < n) {
    unsigned c = u[i];
    if (c >= 0x20 && c < 0x80) {
      i++;
      continue;
    }
    if (c == '\n') {
      dq_tbuf_put(b, s + run, i + 1 - run);
      i++;
      run = i;
      if (lines)
        b->line++;
      continue;
    }
    if (c == '\r' && i + 1 < n && u[i + 1] == '\n') { /* CRLF -> LF */
      dq_tbuf_put(b, s + run, i - run);
      i++;
      run = i;
      continue;
    }
    if (c != 0 && c < 0x80) { /* other controls pass */
      i++;
      continue;
    }
    uint32_t cp = 0;
    size_t len = c ? dq_utf8_decode(u + i, n - i, &cp) : 1;
    if (c && cp != UINT32_MAX) {
      i += len;
      continue;
    }
    dq_tbuf_put(b, s + run, i - run);
    dq_tbuf_put(b, "\xEF\xBF\xBD", 3);
    b->n_replaced++;
    i += len;
    run = i;
  }
  dq_tbuf_put(b, s + run, n - run);
}

void dq_tbuf_put_utf8(dq_tbuf *b, const char *s, size_t n) {
  put_checked(b, s, n, 0);
}

void dq_tbuf_put_lines(dq_tbuf *b, const char *s, size_t n) {
  put_checked(b, s, n, 1);
}

void dq_tbuf_newline(dq_tbuf *b) {
  if (b->n && b->text[b->n - 1] != '\n')
    dq_tbuf_putc(b, '\n');
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

void dq_tbuf_heading(dq_tbuf *b, size_t offset, int level, const char *title,
                     size_t title_bytes) {
  if (b->oom)
    return;
  while (title_bytes && is_space(*title)) {
    title++;
    title_bytes--;
  }
  while (title_bytes && is_space(title[title_bytes - 1]))
    title_bytes--;
  if (dq_grow((void **)&b->heads, &b->cap_heads, b->n_heads + 1,
              sizeof *b->heads)) {
    b->oom = 1;
    return;
  }
  char *t = malloc(title_bytes + 1);
  if (!t) {
    b->oom = 1;
    return;
  }
  memcpy(t, title, title_bytes);
  t[title_bytes] = '\0';
  b->heads[b->n_heads++] = (dq_heading){offset, level, t};
}

#define COMMENT_AUTHOR_MAX 64
#define COMMENT_QUOTE_MAX 60

/* Copies s[0..n) into out[cap] with blanks folded to single spaces and
 * trimmed; longer text is cut at a word (else between characters) and
 * ends in "...". Returns the bytes written. */
static size_t fold_cut(const char *s, size_t n, char *out, size_t cap) {
  size_t k = 0, last_space = 0;
  int cut = 0;
  unsigned char next = 0; /* the first byte left out */
  for (size_t i = 0; i < n && !cut; i++) {
    if (is_space(s[i])) {
      if (k && out[k - 1] != ' ')
        out[k++] = ' ', last_space = k - 1;
      continue;
    }
    if (k + 1 > cap - 4) { /* room for "..." and the NUL */
      cut = 1;
      next = (unsigned char)s[i];
      break;
    }
    out[k++] = s[i];
  }
  while (k && out[k - 1] == ' ')
    k--;
  if (cut) {
    if (last_space > cap / 3) {
      k = last_space;
    } else if ((next & 0xC0) == 0x80) { /* inside a character: drop it */
      while (k && ((unsigned char)out[k - 1] & 0xC0) == 0x80)
        k--;
      if (k && (unsigned char)out[k - 1] >= 0xC0)
        k--;
    }
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
  return k;
}

void dq_comment_quote(const dq_tbuf *b, size_t off, size_t end, size_t p_start,
                      int in_cell, dq_comment *c) {
  if (off >= end || end > b->n || memchr(b->text + off, '\n', end - off))
    return;
  size_t line_start = off, line_end = end;
  while (line_start > 0 && b->text[line_start - 1] != '\n')
    line_start--;
  while (line_end < b->n && b->text[line_end] != '\n')
    line_end++;
  if ((off <= line_start || (!in_cell && off <= p_start)) && end >= line_end)
    return; /* all of it */
  c->quote = b->text + off;
  c->quote_n = end - off;
}

void dq_tbuf_comment(dq_tbuf *b, const dq_comment *c) {
  char quote[COMMENT_QUOTE_MAX + 4], author[COMMENT_AUTHOR_MAX + 4];
  size_t qn = c->quote ? fold_cut(c->quote, c->quote_n, quote, sizeof quote)
                       : 0; /* copied first: it may be b's own text */
  size_t an =
      c->author ? fold_cut(c->author, strlen(c->author), author, sizeof author)
                : 0;
  dq_tbuf_put(b, c->reply ? "[reply" : "[comment", c->reply ? 6 : 8);
  if (an) {
    dq_tbuf_put(b, ", ", 2);
    dq_tbuf_put_utf8(b, author, an);
  }
  const char *d = c->date;
  int dated = d != NULL;
  for (int i = 0; dated && i < 10; i++)
    dated = i == 4 || i == 7 ? d[i] == '-' : d[i] >= '0' && d[i] <= '9';
  if (dated && strncmp(d, "0000", 4) == 0) /* LibreOffice's "no date" */
    dated = 0;
  if (dated) {
    dq_tbuf_put(b, ", ", 2);
    dq_tbuf_put(b, d, 10);
  }
  if (c->resolved)
    dq_tbuf_put(b, ", resolved", 10);
  if (qn) {
    dq_tbuf_put(b, ", on \"", 6);
    dq_tbuf_put_utf8(b, quote, qn);
    dq_tbuf_putc(b, '"');
  }
  dq_tbuf_put(b, "] ", 2);
}

dq_status dq_tbuf_finish(dq_tbuf *b, dq_doc_kind kind, const char *lang,
                         dq_text **out, dq_error *err, const char *name) {
  *out = NULL;
  if (!b->oom && !b->text)
    b->text = calloc(1, 1);
  dq_text *t = b->oom || !b->text ? NULL : calloc(1, sizeof *t);
  if (!t) {
    dq_tbuf_clear(b);
    return dq_error_set(err, DQ_ERR_NOMEM, "%s: out of memory reading text",
                        name);
  }
  while (b->n_marks && b->marks[b->n_marks - 1].offset >= b->n)
    b->n_marks--; /* a mark left behind by text a reader took back */
  t->text = b->text;
  t->n_bytes = b->n;
  t->kind = kind;
  snprintf(t->lang, sizeof t->lang, "%s", lang ? lang : "");
  t->marks = b->marks;
  t->n_marks = b->n_marks;
  t->headings = b->heads;
  t->n_headings = b->n_heads;
  b->text = NULL;
  b->marks = NULL;
  b->heads = NULL;
  b->n_heads = 0;
  dq_tbuf_clear(b);
  *out = t;
  return DQ_OK;
}

/* ---- kind detection ---- */

/* Documents by extension; code is every extension dq_chunk_lang_for_path
 * knows (chunk_core.c: one table for both). */
static const struct {
  const char *ext;
  dq_doc_kind kind;
} EXT[] = {
    {"md", DQ_DOC_MARKDOWN}, {"markdown", DQ_DOC_MARKDOWN},
    {"html", DQ_DOC_HTML},   {"htm", DQ_DOC_HTML},
    {"xhtml", DQ_DOC_HTML},  {"xml", DQ_DOC_XML},
    {"docx", DQ_DOC_DOCX},   {"pdf", DQ_DOC_PDF},
    {"odt", DQ_DOC_ODT},     {"epub", DQ_DOC_EPUB},
    {"eml", DQ_DOC_EMAIL},   {"mbox", DQ_DOC_EMAIL},
    {"msg", DQ_DOC_EMAIL},   {"rtf", DQ_DOC_RTF},
    {"txt", DQ_DOC_TEXT},    {"png", DQ_DOC_IMAGE},
    {"jpg", DQ_DOC_IMAGE},   {"jpeg", DQ_DOC_IMAGE},
    {"tif", DQ_DOC_IMAGE},   {"tiff", DQ_DOC_IMAGE},
    {"pptx", DQ_DOC_PPTX},   {"pptm", DQ_DOC_PPTX},
    {"ppsx", DQ_DOC_PPTX},   {"xlsx", DQ_DOC_XLSX},
    {"xlsm", DQ_DOC_XLSX},   {"doc", DQ_DOC_DOC},
    {"ods", DQ_DOC_ODS},     {"ots", DQ_DOC_ODS},
    {"xls", DQ_DOC_XLS},     {"xlt", DQ_DOC_XLS},
    {"odp", DQ_DOC_ODP},     {"otp", DQ_DOC_ODP},
};

static int starts(const unsigned char *h, size_t n, const char *p) {
  size_t k = strlen(p);
  return n >= k && memcmp(h, p, k) == 0;
}

/* Whether t starts as a mailbox does: "From SENDER DATE" with a time
 * ("From rms@gnu.org Thu Jul 22 20:37:55 1999"), then a header line
 * ("Subject: ..."); "From the XZ Utils README:" is prose. */
static int mbox_start(const unsigned char *t, size_t nt) {
  if (!starts(t, nt, "From "))
    return 0;
  size_t i = 5, e;
  while (i < nt && t[i] != ' ' && t[i] != '\n')
    i++; /* the sender */
  for (e = i; e < nt && t[e] != '\n'; e++)
    ;
  int time = 0;
  for (size_t k = i; k + 4 < e && !time; k++)
    time = t[k] >= '0' && t[k] <= '9' && t[k + 1] >= '0' && t[k + 1] <= '9' &&
           t[k + 2] == ':' && t[k + 3] >= '0' && t[k + 3] <= '9';
  if (!time || e >= nt)
    return 0;
  size_t k = e + 1; /* the next line: a header's name and a colon */
  while (k < nt && (isalnum(t[k]) || t[k] == '-'))
    k++;
  return k > e + 1 && k < nt && t[k] == ':';
}

/* 1 when the bytes start as an image docqa reads does: PNG, JPEG, TIFF
 * (little- and big-endian). */
static int image_magic(const unsigned char *h, size_t n) {
  return starts(h, n, "\x89PNG\r\n\x1a\n") || starts(h, n, "\xFF\xD8\xFF") ||
         (n >= 4 && (!memcmp(h, "II*\0", 4) || !memcmp(h, "MM\0*", 4)));
}

/* 1 when the bytes open with an Excel 2.x-4.0 BOF record (BIFF2 0x0009,
 * BIFF3 0x0209, BIFF4 0x0409): a worksheet stream not in a compound
 * file, which the .xls reader names and refuses. */
static int biff_bof(const unsigned char *h, size_t n) {
  return n >= 4 &&
         (h[0] == 0x09 && (h[1] == 0x00 || h[1] == 0x02 || h[1] == 0x04)) &&
         h[2] >= 4 && h[2] <= 16 && h[3] == 0;
}

/* 1 when the sniffed bytes look like text (see dq_detect_kind). */
static int looks_text(const unsigned char *h, size_t n) {
  if (starts(h, n, "\xEF\xBB\xBF") || starts(h, n, "\xFF\xFE") ||
      starts(h, n, "\xFE\xFF"))
    return 1;
  size_t n_ctl = 0, n_bad = 0;
  for (size_t i = 0; i < n;) {
    unsigned c = h[i];
    if (c == 0)
      return 0;
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' &&
        c != '\b' && c != 0x1B)
      n_ctl++;
    if (c < 0x80) {
      i++;
      continue;
    }
    uint32_t cp;
    size_t len = dq_utf8_decode(h + i, n - i, &cp);
    if (cp == UINT32_MAX && i + len < n) /* a cut at the end is fine */
      n_bad += len;
    i += len;
  }
  return n_ctl * 100 <= n && n_bad * 10 <= n * 3;
}

dq_doc_kind dq_detect_kind(const char *name, const void *head, size_t n_head,
                           const char **lang) {
  const unsigned char *h = head;
  if (!h)
    n_head = 0;
  if (lang)
    *lang = "";
  const char *base = name ? strrchr(name, '/') : NULL;
  base = base ? base + 1 : (name ? name : "");
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) {
    dq_doc_kind kind = DQ_DOC_UNKNOWN;
    const char *code = dq_chunk_lang_for_path(base);
    if (code)
      kind = DQ_DOC_CODE;
    for (size_t i = 0; !code && i < sizeof EXT / sizeof EXT[0]; i++)
      if (strcasecmp(dot + 1, EXT[i].ext) == 0)
        kind = EXT[i].kind;
    /* an image by its name must be one by its bytes too: a favicon.png
     * that is an .ico is a binary file, skipped, not a damaged image */
    if (kind == DQ_DOC_IMAGE && n_head && !image_magic(h, n_head))
      return DQ_DOC_UNKNOWN;
    /* an Outlook .msg is a compound file; a ".msg" of text (a ROS
     * message definition, a commit message) is read by its bytes */
    if (kind == DQ_DOC_EMAIL && !strcasecmp(dot + 1, "msg")) {
      if (dq_cfb_magic(h, n_head))
        return DQ_DOC_EMAIL;
      kind = DQ_DOC_UNKNOWN;
    }
    /* a Word .doc is a compound file; an RTF or a text saved as ".doc"
     * (WordPad, old mail clients) is read by its bytes */
    if (kind == DQ_DOC_DOC && n_head && !dq_cfb_magic(h, n_head))
      kind = DQ_DOC_UNKNOWN;
    /* an Excel .xls is a compound file; web applications' "Excel"
     * exports are HTML or tab-separated text under that name, read by
     * their bytes, and an .xlsx renamed .xls is read as one */
    if (kind == DQ_DOC_XLS && n_head && !dq_cfb_magic(h, n_head))
      kind = starts(h, n_head, "PK\x03\x04") ? DQ_DOC_XLSX
             : biff_bof(h, n_head)           ? DQ_DOC_XLS
                                             : DQ_DOC_UNKNOWN;
    if (kind != DQ_DOC_UNKNOWN) {
      /* a ".c" or ".txt" full of binary is still binary */
      if (kind != DQ_DOC_DOCX && kind != DQ_DOC_ODT && kind != DQ_DOC_PDF &&
          kind != DQ_DOC_EPUB && kind != DQ_DOC_IMAGE && kind != DQ_DOC_PPTX &&
          kind != DQ_DOC_XLSX && kind != DQ_DOC_DOC && kind != DQ_DOC_ODS &&
          kind != DQ_DOC_XLS && kind != DQ_DOC_ODP && n_head &&
          !looks_text(h, n_head))
        return DQ_DOC_UNKNOWN;
      if (lang && code)
        *lang = code;
      return kind;
    }
  }
  if (starts(h, n_head, "%PDF-"))
    return DQ_DOC_PDF;
  if (starts(h, n_head, "{\\rtf"))
    return DQ_DOC_RTF;
  if (image_magic(h, n_head))
    return DQ_DOC_IMAGE;
  /* an EPUB's first entry is "mimetype", stored, at the local header's
   * name (offset 30) followed by its content */
  if (starts(h, n_head, "PK\x03\x04") && n_head > 30 &&
      starts(h + 30, n_head - 30, "mimetypeapplication/epub+zip"))
    return DQ_DOC_EPUB;
  if (!looks_text(h, n_head))
    return DQ_DOC_UNKNOWN;
  size_t skip = starts(h, n_head, "\xEF\xBB\xBF") ? 3 : 0;
  const unsigned char *t = h + skip;
  size_t nt = n_head - skip;
  while (nt && (*t == ' ' || *t == '\n' || *t == '\r' || *t == '\t')) {
    t++;
    nt--;
  }
  if (dq_starts_ci(t, nt, "<!DOCTYPE html") || dq_starts_ci(t, nt, "<html"))
    return DQ_DOC_HTML;
  if (starts(t, nt, "<?xml"))
    return DQ_DOC_XML;
  /* a mailbox, or a message as a mail server stored it (maildir) */
  static const char *const MAIL_FIRST[] = {
      "Return-Path:", "Received:",     "Delivered-To:",
      "Message-ID:",  "MIME-Version:", "X-Mozilla-Status:"};
  int mail = mbox_start(t, nt);
  for (size_t i = 0; !mail && i < sizeof MAIL_FIRST / sizeof *MAIL_FIRST; i++)
    mail = dq_starts_ci(t, nt, MAIL_FIRST[i]);
  if (mail)
    return DQ_DOC_EMAIL;
  if (starts(h, n_head, "#!")) {
    size_t e = 0;
    while (e < n_head && h[e] != '\n')
      e++;
    const char *l = (const char *)h;
    if (memmem(l, e, "python", 6)) {
      if (lang)
        *lang = "python";
      return DQ_DOC_CODE;
    }
    if (memmem(l, e, "node", 4)) {
      if (lang)
        *lang = "javascript";
      return DQ_DOC_CODE;
    }
  }
  return DQ_DOC_TEXT;
}

/* ---- entry points ---- */

uint64_t dq_max_file_bytes(uint64_t set, dq_doc_kind kind) {
  if (set)
    return set;
  switch (kind) {
  case DQ_DOC_UNKNOWN:
  case DQ_DOC_PDF:
  case DQ_DOC_DOCX:
  case DQ_DOC_ODT:
  case DQ_DOC_EPUB:
  case DQ_DOC_RTF:
  case DQ_DOC_EMAIL:
  case DQ_DOC_IMAGE:
  case DQ_DOC_PPTX:
  case DQ_DOC_XLSX:
  case DQ_DOC_DOC:
  case DQ_DOC_ODS:
  case DQ_DOC_XLS:
  case DQ_DOC_ODP:
    return DQ_READ_MAX_DOC_BYTES;
  default:
    return DQ_READ_MAX_FILE_BYTES;
  }
}

dq_status dq_read_buffer(const char *name, const void *data, size_t n_bytes,
                         dq_doc_kind kind, const dq_read_opts *o,
                         dq_text **out, dq_read_info *info, dq_error *err) {
  static const dq_read_opts defaults = {0};
  dq_read_info scratch;
  *out = NULL;
  if (!name)
    name = "(buffer)";
  if (!data && n_bytes)
    return dq_error_set(err, DQ_ERR_ARG, "%s: NULL data", name);
  if (!o)
    o = &defaults;
  if (!info)
    info = &scratch;
  memset(info, 0, sizeof *info);
  info->encoding = "utf-8";
  info->n_bytes = n_bytes;
  const char *lang = "";
  size_t n_sniff = n_bytes < DQ_SNIFF_BYTES ? n_bytes : DQ_SNIFF_BYTES;
  dq_doc_kind detected = dq_detect_kind(name, data, n_sniff, &lang);
  if (kind == DQ_DOC_UNKNOWN)
    kind = detected;
  uint64_t max = dq_max_file_bytes(o->max_file_bytes, kind);
  if (n_bytes > max)
    return dq_error_set(err, DQ_ERR_LIMIT,
                        "%s: %zu bytes, over the limit of %llu bytes%s", name,
                        n_bytes, (unsigned long long)max,
                        o->max_file_bytes ? "" : " for its kind");
  if (kind != DQ_DOC_CODE)
    lang = "";
  const char *src = data ? data : "";
  /* libxml2 sets up its tables once; idempotent after the first call (see
   * the thread-safety note in ingest.h) */
  xmlInitParser();
  dq_reader_ctx c = {name, o, info, err};
  dq_tbuf b;
  dq_tbuf_init(&b);
  uint32_t n_pages = 0;
  dq_status st;
  switch (kind) {
  case DQ_DOC_TEXT:
    st = dq_read_text(&c, src, n_bytes, &b);
    break;
  case DQ_DOC_CODE: st = dq_read_plain(&c, src, n_bytes, &b); break;
  case DQ_DOC_MARKDOWN: st = dq_read_markdown(&c, src, n_bytes, &b); break;
  case DQ_DOC_HTML: st = dq_read_html(&c, src, n_bytes, &b); break;
  case DQ_DOC_XML: st = dq_read_xml(&c, src, n_bytes, &b); break;
  case DQ_DOC_DOCX: st = dq_read_docx(&c, src, n_bytes, &b); break;
  case DQ_DOC_ODT:
    st = dq_read_odt(&c, src, n_bytes, &b);
    break;
  case DQ_DOC_EPUB:
    st = dq_read_epub(&c, src, n_bytes, &b);
    break;
  case DQ_DOC_EMAIL:
    st = dq_cfb_magic(src, n_bytes) ? dq_read_msg(&c, src, n_bytes, &b)
                                    : dq_read_mail(&c, src, n_bytes, &b);
    break;
  case DQ_DOC_RTF:
    st = dq_read_rtf(&c, src, n_bytes, &b);
    break;
  case DQ_DOC_PDF: st = dq_read_pdf(&c, src, n_bytes, &b, &n_pages); break;
  case DQ_DOC_IMAGE:
    st = dq_read_image(&c, src, n_bytes, &b, &n_pages);
    break;
  case DQ_DOC_PPTX:
    st = dq_read_pptx(&c, src, n_bytes, &b, &n_pages);
    break;
  case DQ_DOC_XLSX:
    st = dq_read_xlsx(&c, src, n_bytes, &b, &n_pages);
    break;
  case DQ_DOC_DOC:
    st = dq_read_doc(&c, src, n_bytes, &b);
    break;
  case DQ_DOC_ODS:
    st = dq_read_ods(&c, src, n_bytes, &b, &n_pages);
    break;
  case DQ_DOC_XLS:
    st = dq_read_xls(&c, src, n_bytes, &b, &n_pages);
    break;
  case DQ_DOC_ODP:
    st = dq_read_odp(&c, src, n_bytes, &b, &n_pages);
    break;
  default:
    return dq_error_set(err, DQ_ERR_FORMAT,
                        "%s: binary file (not a kind of document docqa reads)",
                        name);
  }
  if (st != DQ_OK) {
    dq_tbuf_clear(&b);
    return st;
  }
  info->n_replaced = b.n_replaced;
  st = dq_tbuf_finish(&b, kind, lang, out, err, name);
  if (st == DQ_OK)
    (*out)->n_pages = n_pages;
  return st;
}

dq_status dq_read(const char *path, dq_doc_kind kind, const dq_read_opts *o,
                  dq_text **out, dq_read_info *info, dq_error *err) {
  static const dq_read_opts defaults = {0};
  *out = NULL;
  if (!path)
    return dq_error_set(err, DQ_ERR_ARG, "dq_read: NULL path");
  if (!o)
    o = &defaults;
  /* the kind's limit; an unknown kind's is checked again once the bytes
   * tell it (dq_read_buffer) */
  uint64_t max = dq_max_file_bytes(o->max_file_bytes, kind);
  /* O_NONBLOCK: opening a fifo must not hang; it is refused below. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return dq_error_set(err, errno == ENOENT ? DQ_ERR_NOTFOUND : DQ_ERR_IO,
                        "%s: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  dq_status st = DQ_OK;
  struct stat s;
  if (fstat(fd, &s) != 0) {
    st = dq_error_set(err, DQ_ERR_IO, "%s: cannot stat: %s", path,
                      strerror(errno));
    goto fail;
  }
  if (!S_ISREG(s.st_mode)) {
    st = dq_error_set(err, DQ_ERR_IO, "%s: not a regular file (%s)", path,
                      S_ISDIR(s.st_mode)    ? "directory"
                      : S_ISFIFO(s.st_mode) ? "fifo"
                      : S_ISSOCK(s.st_mode) ? "socket"
                                            : "device");
    goto fail;
  }
  if ((uint64_t)s.st_size > max) {
    st = dq_error_set(err, DQ_ERR_LIMIT,
                      "%s: file is %lld bytes, over the limit of %llu bytes%s",
                      path, (long long)s.st_size, (unsigned long long)max,
                      o->max_file_bytes ? "" : " for its kind");
    goto fail;
  }
  size_t size = (size_t)s.st_size, got = 0;
  buf = malloc(size + 1);
  if (!buf) {
    st = dq_error_set(err, DQ_ERR_NOMEM, "%s: cannot allocate %zu bytes", path,
                      size + 1);
    goto fail;
  }
  /* Read what fstat promised; a file that shrinks meanwhile gives less. */
  while (got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      st = dq_error_set(err, DQ_ERR_IO, "%s: read error: %s", path,
                        strerror(errno));
      goto fail;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  fd = -1;
  buf[got] = '\0';
  dq_read_info scratch;
  if (!info)
    info = &scratch;
  st = dq_read_buffer(path, buf, got, kind, o, out, info, err);
  if (st == DQ_OK)
    dq_sha256(buf, got, info->sha256);
fail:
  if (fd >= 0)
    close(fd);
  free(buf);
  return st;
}
