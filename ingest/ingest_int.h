/*
 * ingest_int.h - internals shared by the files of the ingest layer (private:
 * never included outside ingest/). Append only: several files depend on it.
 *
 * The readers build their dq_text through a dq_tbuf: text is appended while
 * the reader says which source line/page it is at, and the buffer records a
 * dq_srcmark whenever that position changes, so marks are strictly increasing
 * by offset by construction. Allocation failures are sticky (b->oom) and
 * reported once by dq_tbuf_finish, which keeps the readers free of checks on
 * every append.
 */
#ifndef DQ_INGEST_INT_H
#define DQ_INGEST_INT_H

#include "ingest.h"

#include <stddef.h>
#include <stdint.h>

/* ---- Text builder (read_dispatch.c) ---- */

typedef struct dq_tbuf {
  char *text; /* NUL-terminated at text[n] when cap > 0 */
  size_t n, cap;
  dq_srcmark *marks;
  size_t n_marks, cap_marks;
  dq_heading *heads;
  size_t n_heads, cap_heads;
  uint32_t line, page; /* source position of the next byte appended */
  size_t n_replaced;   /* invalid UTF-8 / NUL replaced by U+FFFD */
  int oom;
} dq_tbuf;

void dq_tbuf_init(dq_tbuf *b);
void dq_tbuf_clear(dq_tbuf *b); /* frees everything, back to init state */
/* Text appended from now on comes from source line `line`, page `page`. */
static inline void dq_tbuf_pos(dq_tbuf *b, uint32_t line, uint32_t page) {
  b->line = line;
  b->page = page;
}
/* Appends bytes the caller knows are valid UTF-8 without NUL. */
void dq_tbuf_put(dq_tbuf *b, const char *s, size_t n);
static inline void dq_tbuf_putc(dq_tbuf *b, char c) { dq_tbuf_put(b, &c, 1); }
/* Appends a code point as UTF-8 (invalid ones and 0 as U+FFFD, counted). */
void dq_tbuf_put_cp(dq_tbuf *b, uint32_t cp);
/* Appends UTF-8 from an untrusted source: invalid sequences (maximal
 * subparts, as Unicode recommends) and NUL become U+FFFD and are counted;
 * CRLF becomes LF. Does not track lines (see dq_tbuf_put_lines). */
void dq_tbuf_put_utf8(dq_tbuf *b, const char *s, size_t n);
/* Like dq_tbuf_put_utf8, but advances b->line at each LF of the input. */
void dq_tbuf_put_lines(dq_tbuf *b, const char *s, size_t n);
/* Ends the current line unless the text is empty or already ends with LF. */
void dq_tbuf_newline(dq_tbuf *b);
/* The last byte appended, or '\n' when empty (so "at line start"). */
static inline char dq_tbuf_last(const dq_tbuf *b) {
  return b->n ? b->text[b->n - 1] : '\n';
}
/* Cuts the text back to its first n bytes (n <= b->n): an empty
 * paragraph's label, an unused separator. */
static inline void dq_tbuf_truncate(dq_tbuf *b, size_t n) {
  b->n = n;
  if (b->text)
    b->text[n] = '\0';
  while (b->n_marks && b->marks[b->n_marks - 1].offset > n)
    b->n_marks--; /* marks of the text taken back (kept: one for byte n) */
}
/* Drops the spaces that end the text after byte `from`: a text box's
 * separator at a paragraph's end. */
static inline void dq_tbuf_trim_spaces(dq_tbuf *b, size_t from) {
  while (b->n > from && b->text[b->n - 1] == ' ')
    dq_tbuf_truncate(b, b->n - 1);
}
/* A document's page headers and footers (read_docx.c, read_odt.c), written
 * after its body under a level-1 heading DQ_HF_HEADING, each line after
 * "[header] " or "[footer] ", once. dq_hf_begin writes the heading at
 * source position (line, page); dq_hf_line keeps the line (or a table's
 * row) written at b[start..), its text after the prefix at b[text..),
 * when it is worth a line: not what a page-number footer leaves ("Page
 * of", "- -"), not a line written before (a first page's header is often
 * the others'); else it takes the line back and returns 0. dq_hf_end
 * closes them: with no line kept, b is as it was before dq_hf_begin. */
#define DQ_HF_HEADING "Headers and footers"
#define DQ_HF_MAX_LINES 256 /* lines remembered, and written at most */
typedef struct dq_hf {
  uint64_t seen[DQ_HF_MAX_LINES]; /* the hashes of the lines kept */
  size_t n_seen;
  size_t at, heads; /* b's text and headings before dq_hf_begin */
} dq_hf;
void dq_hf_begin(dq_tbuf *b, dq_hf *h, uint32_t line, uint32_t page);
int dq_hf_line(dq_tbuf *b, dq_hf *h, size_t start, size_t text);
void dq_hf_end(dq_tbuf *b, dq_hf *h);
/* Whether a field's instruction (" PAGE \\* MERGEFORMAT ") is a page
 * number's or count's (PAGE, NUMPAGES, SECTIONPAGES), whose shown value
 * is the page Word last laid out, not the document's. */
int dq_page_field(const char *instr);

/* A space unless the text is empty or ends in a blank: words apart. */
static inline void dq_tbuf_space(dq_tbuf *b) {
  char last = dq_tbuf_last(b);
  if (b->n && last != ' ' && last != '\n' && last != '\t')
    dq_tbuf_putc(b, ' ');
}
/* Records a heading starting at byte `offset` (title copied, trimmed). */
void dq_tbuf_heading(dq_tbuf *b, size_t offset, int level, const char *title,
                     size_t title_bytes);
/* A reviewer's comment (DOCX, ODT, RTF): its head is written where the
 * comment's line starts, on a line of its own after the paragraph it is
 * anchored in, its text after it. */
typedef struct dq_comment {
  int reply;          /* an answer in a thread */
  int resolved;       /* marked done */
  const char *author; /* NULL when not given */
  const char *date;   /* ISO 8601; its YYYY-MM-DD part is kept */
  const char *quote;  /* the text the comment marks, when part of a line */
  size_t quote_n;
} dq_comment;
/* Writes "[comment, AUTHOR, DATE, resolved, on \"QUOTE\"] " ("[reply, ..."):
 * the author and the quote cut to a few dozen bytes, blanks folded; `quote`
 * may point into b's own text. */
void dq_tbuf_comment(dq_tbuf *b, const dq_comment *c);
/* Sets c's quote to b's text [off, end) when the comment marks part of
 * one line: not across lines, not all of its line, nor all of a paragraph
 * whose text starts at p_start after its list number (unless in_cell: a
 * cell is part of its row's line). Leaves it unset otherwise, or when
 * off >= end. Call after the paragraph's line is written. */
void dq_comment_quote(const dq_tbuf *b, size_t off, size_t end, size_t p_start,
                      int in_cell, dq_comment *c);
/* Moves the result into a new dq_text (b is left cleared). */
dq_status dq_tbuf_finish(dq_tbuf *b, dq_doc_kind kind, const char *lang,
                         dq_text **out, dq_error *err, const char *name);

/* The value of hex digit ch, or -1 (a URI's and quoted-printable's %XX
 * and =XX). */
static inline int dq_hex_digit(char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
    return (ch | 0x20) - 'a' + 10;
  return -1;
}

/* Decodes one UTF-8 sequence at s[0..n) (n > 0). Returns its length and
 * stores the code point, or returns the length of the maximal invalid subpart
 * (>= 1) and stores UINT32_MAX. */
size_t dq_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* Writes code point cp (< 0x110000, the caller's to check) as UTF-8 into
 * out; returns its length, 1 to 4. */
size_t dq_utf8_encode(uint32_t cp, char out[4]);

/* ---- Readers (read_*.c): each appends to a fresh dq_tbuf ---- */

typedef struct dq_reader_ctx {
  const char *name; /* for messages */
  const dq_read_opts *o;
  dq_read_info *info; /* never NULL inside readers */
  dq_error *err;
} dq_reader_ctx;

dq_status dq_read_plain(const dq_reader_ctx *c, const char *data, size_t n,
                        dq_tbuf *b);
/* dq_read_plain, then reStructuredText-style section titles as headings
 * (read_text.c). */
dq_status dq_read_text(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b);
dq_status dq_read_markdown(const dq_reader_ctx *c, const char *data, size_t n,
                           dq_tbuf *b);
dq_status dq_read_html(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b);
dq_status dq_read_xml(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b);
dq_status dq_read_docx(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b);
/* Makes room for `need` elements of `elem` bytes in *p (capacity *cap,
 * doubled as needed; read_dispatch.c): 0, or -1 when out of memory or
 * the size would overflow (*p unchanged). */
int dq_grow(void **p, size_t *cap, size_t need, size_t elem);
/* A zip archive in memory (read_zip.c): DOCX, ODT and EPUB files. */
struct zip;
typedef struct dq_zip {
  const dq_reader_ctx *c;
  const char *format; /* "a DOCX", "an ODT": for messages */
  struct zip *za;
  uint64_t max_part, n_unzipped, n_zipped;
  uint32_t ratio;
} dq_zip;
/* Opens data[0..n) (not copied: it must outlive the dq_zip); a message
 * names the file as not a `format` file when it is no zip. */
dq_status dq_zip_open(dq_zip *z, const dq_reader_ctx *c, const char *data,
                      size_t n, const char *format);
void dq_zip_close(dq_zip *z); /* NULL and closed ones too */
/* Reads part whole into *out (malloc'd, NUL-terminated; the caller frees),
 * under the zip-bomb limits. A missing part is an error when required,
 * else DQ_OK with *out NULL. */
dq_status dq_zip_read(dq_zip *z, const char *part, int required, char **out,
                      size_t *out_bytes);
/* The same, parsed as XML (dq_xml_parse); *doc NULL when the part is
 * missing and not required. */
struct _xmlDoc;
dq_status dq_zip_xml(dq_zip *z, const char *part, int required,
                     struct _xmlDoc **doc);
/* Open Packaging Conventions (DOCX, PPTX, XLSX), read_zip.c. Part names
 * are at most DQ_OPC_PATH_MAX bytes.
 * dq_opc_resolve: the part a relationship's target names, `target`
 * relative to the folder of part `from` (from the package's root when it
 * starts with '/'), "." and ".." resolved, into out; 0 when it leaves the
 * package, is empty or is too long.
 * dq_opc_rels_of: the relationships part of part `path`
 * ("ppt/_rels/presentation.xml.rels"); 0 when too long.
 * dq_opc_rel_target: in the relationships document rels (may be NULL),
 * the target of the first relationship with Id `id` whose Type ends in
 * "/" `type` (either NULL: any), resolved against part `from`; external
 * targets (hyperlinks) are none; 0 when there is none.
 * dq_opc_main: the package's main part, the officeDocument relationship's
 * target in _rels/.rels (else `dflt`), into main[DQ_OPC_PATH_MAX], parsed
 * into *doc, and its relationships part, named in rp[DQ_OPC_PATH_MAX],
 * parsed into *rels (both required); the caller frees both docs, also on
 * failure.
 * dq_opc_rel_id: an element's r:id, the "id" attribute in the
 * relationships namespace (beside a plain "id"), or NULL. */
#define DQ_OPC_PATH_MAX 512
struct _xmlNode;
int dq_opc_resolve(const char *from, const char *target, char *out,
                   size_t cap);
int dq_opc_rels_of(const char *path, char *out, size_t cap);
int dq_opc_rel_target(struct _xmlDoc *rels, const char *from, const char *id,
                      const char *type, char *out, size_t cap);
const char *dq_opc_rel_id(struct _xmlNode *n);
dq_status dq_opc_main(dq_zip *z, const char *dflt, char *main, char *rp,
                      struct _xmlDoc **doc, struct _xmlDoc **rels);
/* A list number's format, and the number v written in it ("iv", "c", "27";
 * letters repeat past z as Word's do: "aa"); out holds cap bytes. */
typedef enum {
  DQ_FMT_DECIMAL,
  DQ_FMT_LLETTER,
  DQ_FMT_ULETTER,
  DQ_FMT_LROMAN,
  DQ_FMT_UROMAN,
  DQ_FMT_BULLET,
  DQ_FMT_NONE
} dq_num_fmt;
void dq_format_counter(char *out, size_t cap, dq_num_fmt f, int v);
dq_status dq_read_odt(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b);
/* dq_read_html appending to b after what it holds, its marks carrying the
 * line of the extracted text rather than of the source: an EPUB's parts
 * (read_epub.c), whose source lines start again in each. `part` keeps the
 * count of b's lines between calls (zero for an empty b), and finds
 * elements by id: ids sorted by strcmp, at[i] SIZE_MAX on the call, set to
 * the offset in b of the first word put inside or after the first element
 * with id ids[i]; an offset >= b->n after the call means none. */
typedef struct dq_html_part {
  size_t counted; /* b->text[0..counted) counted */
  uint32_t lines; /* newlines in it */
  const char *const *ids;
  size_t n_ids;
  size_t *at;
} dq_html_part;
dq_status dq_read_html_lines(const dq_reader_ctx *c, const char *data, size_t n,
                             dq_tbuf *b, dq_html_part *part);
/* The 1-based line of b's text where the next byte goes, counting the
 * newlines t has not counted yet (read_xml.c; the EPUB and mail readers'
 * marks carry lines of the extracted text). */
uint32_t dq_text_line(dq_html_part *t, const dq_tbuf *b);
dq_status dq_read_epub(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b);
dq_status dq_read_mail(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b);
/* Whether s[0..n) starts with `lit`, ASCII case folded. Not strncasecmp:
 * s may be a line inside a whole file, or a sniffed head with no NUL, and
 * a string function may read (and a sanitizer check) all that follows. */
static inline unsigned dq_ascii_lower(unsigned c) {
  return c - 'A' < 26u ? c | 0x20u : c;
}
static inline int dq_starts_ci(const void *s, size_t n, const char *lit) {
  const unsigned char *p = s;
  for (size_t k = 0; lit[k]; k++)
    if (k >= n || dq_ascii_lower(p[k]) != dq_ascii_lower((unsigned char)lit[k]))
      return 0;
  return 1;
}

/* Little-endian integers at p. */
static inline uint16_t dq_le16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t dq_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static inline uint64_t dq_le64(const unsigned char *p) {
  return (uint64_t)dq_le32(p) | (uint64_t)dq_le32(p + 4) << 32;
}

/* A compound file (read_cfb.c): .msg and .doc. Entry 0 is the root
 * storage. Every sector, chain, size and tree link is checked. */
#define CFB_ENDOFCHAIN 0xFFFFFFFEu
/* directory entries visited in all lookups: a directory whose storages
 * share their subtrees would otherwise cost entries x lookups */
#define CFB_MAX_VISITS 20000000
typedef struct dq_cfb_entry {
  char name[64]; /* ASCII; other characters '?' */
  int type;      /* 1 storage, 2 stream, 5 root */
  uint32_t left, right, child, start;
  uint64_t size;
} dq_cfb_entry;

typedef struct dq_cfb {
  const dq_reader_ctx *c;
  const char *format; /* "Word document (.doc)": for messages */
  const unsigned char *d;
  size_t n;
  size_t sec;      /* sector size */
  uint32_t n_secs; /* sectors the file holds after its header, a last
                      partial one counted */
  unsigned char *tail; /* that partial sector, padded with zeros; NULL
                          when the file ends at a sector's end */
  uint32_t *fat;   /* next sector of each sector */
  size_t n_fat;
  uint32_t *minifat;
  size_t n_minifat;
  unsigned char *ministream;
  size_t n_ministream;
  dq_cfb_entry *e;
  size_t n_e;
  uint32_t cutoff; /* streams under it are in the mini stream */
  size_t visits;   /* directory entries visited, up to CFB_MAX_VISITS */
} dq_cfb;

/* Opens data[0..n) (not copied); `format` names the file's kind in
 * messages ("Word document (.doc)"). Close it even on failure. */
dq_status dq_cfb_open(dq_cfb *f, const dq_reader_ctx *c, const char *data,
                      size_t n, const char *format);
void dq_cfb_close(dq_cfb *f);
/* The children of storage s (malloc'd, *n of them), each visited once; NULL
 * with *n 0 when none, out of memory, or past the visit budget. */
uint32_t *dq_cfb_children(dq_cfb *f, size_t s, size_t *n);
/* The entry named `name` (ASCII, case folded) among storage s's children,
 * or -1. */
long dq_cfb_child_named(dq_cfb *f, size_t s, const char *name);
/* The bytes of stream entry i (malloc'd). */
dq_status dq_cfb_stream(dq_cfb *f, size_t i, unsigned char **out, size_t *n);
/* A DQ_ERR_FORMAT: "NAME: not a readable FORMAT: what". */
dq_status dq_cfb_bad(const dq_cfb *f, const char *what);
/* An Outlook message (.msg, a compound file), written out as RFC 5322 text
 * and read by dq_read_mail (read_msg.c). */
dq_status dq_read_msg(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b);
/* Whether data starts with a compound file's signature (.msg, .doc). */
int dq_cfb_magic(const void *data, size_t n);
dq_status dq_read_rtf(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b);
/* An OpenDocument presentation (.odp, LibreOffice Impress; read_odt.c):
 * as dq_read_pptx's output. */
dq_status dq_read_odp(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_slides);
/* Ends a slide's heading line "Slide N: TITLE" written from `start`, its
 * title from `text` (read_pptx.c; also the ODP reader's): without a title
 * "Slide N"; the heading's title cut at 200 bytes, at a character's start,
 * the line keeping all of it; then its newline. */
void dq_slide_heading_end(dq_tbuf *b, size_t start, size_t text);
/* A PowerPoint deck (read_pptx.c): *n_slides its slides, each a level-1
 * heading "Slide N: TITLE", marks' page the slide's number. */
dq_status dq_read_pptx(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b, uint32_t *n_slides);
/* An Excel workbook (read_xlsx.c): *n_sheets its sheets, each worksheet a
 * level-1 heading "Sheet: NAME", a row a line, marks' page the sheet's
 * number and line the row's. */
dq_status dq_read_xlsx(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b, uint32_t *n_sheets);
/* An OpenDocument spreadsheet (read_xlsx.c): as an Excel workbook. */
dq_status dq_read_ods(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_sheets);
/* An Excel 97-2003 workbook (read_xlsx.c, BIFF8 in a compound file): as
 * an Excel workbook. */
dq_status dq_read_xls(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_sheets);
/* A Word 97-2003 document (read_doc.c, a compound file). */
dq_status dq_read_doc(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b);

/* Parses XML from memory with the safe options of read_xml.c (no network,
 * no DTD, no entity substitution). `what` names the part in messages
 * ("XML", "word/document.xml"). *out is freed with xmlFreeDoc. */
dq_status dq_xml_parse(const dq_reader_ctx *c, const char *data, size_t n,
                       const char *what, struct _xmlDoc **out);
dq_status dq_read_pdf(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_pages);
/* The text of a page image, 8-bit grey (0 black), w x h pixels, rows
 * `stride` bytes apart, at ppi pixels per inch (0: unknown), read by
 * Tesseract with languages `lang` ("eng", "deu+eng") into *out (malloc'd
 * UTF-8, lines ending in LF; the caller frees), *words how many words it
 * read, *sure how many of them it is sure of (a confidence of 80 or
 * more). A page with few sure words is turned upright as Tesseract's
 * orientation detection says, when its data is installed, and read again
 * (the better reading kept). Thread-safe. On failure why says what is
 * wrong:
 * DQ_ERR_UNSUPPORTED when Tesseract or the language is missing,
 * DQ_ERR_ARG for a malformed language list (ocr.c). */
dq_status dq_ocr_page(const uint8_t *gray, int w, int h, int stride, int ppi,
                      const char *lang, char **out, int *sure, int *words,
                      char *why, size_t why_cap);
/* The grey image src (w x h, stride bytes a row) turned clockwise by
 * `turns` quarter turns, into a new buffer (*tw x *th, tightly packed);
 * NULL when out of memory. */
uint8_t *dq_gray_turn(const uint8_t *src, int w, int h, int stride, int turns,
                      int *tw, int *th);
/* Pages to read: each one's grey image in, its text out. */
typedef struct dq_ocr_job {
  int page;      /* the caller's */
  uint8_t *gray; /* malloc'd, w bytes a row; dq_ocr_jobs frees it */
  int w, h, ppi;
  char *text; /* malloc'd (the caller frees), or NULL when st fails */
  int sure, words; /* dq_ocr_page's */
  dq_status st;
  char why[300];
} dq_ocr_job;
#define DQ_OCR_MAX_THREADS 64
/* The OCR threads and languages o asks for: n_threads (1 when 0) up to
 * DQ_OCR_MAX_THREADS; ocr_lang, "eng" when unset. */
static inline int dq_ocr_threads(const dq_read_opts *o) {
  int n = o->n_threads > 0 ? o->n_threads : 1;
  return n < DQ_OCR_MAX_THREADS ? n : DQ_OCR_MAX_THREADS;
}
static inline const char *dq_ocr_lang(const dq_read_opts *o) {
  return o->ocr_lang && o->ocr_lang[0] ? o->ocr_lang : "eng";
}
typedef struct dq_ocr_batch {
  dq_ocr_job *jobs;
  int n, next;
  const char *lang;
} dq_ocr_batch;
/* Reads jobs[0..n) with dq_ocr_page, n threads at once (this one too; n
 * at most DQ_OCR_MAX_THREADS). */
void dq_ocr_jobs(dq_ocr_job *jobs, int n, const char *lang);
/* An image file in memory (PNG, JPEG, TIFF, GIF, WebP, BMP, PNM: what
 * Tesseract's leptonica reads), its pages (a TIFF's frames) decoded one
 * after another to grey for dq_ocr_jobs. data must outlive it. open fails
 * (why set) when Tesseract is missing (DQ_ERR_UNSUPPORTED), the bytes are
 * no image (DQ_ERR_FORMAT) or too large (DQ_ERR_LIMIT); next sets j's
 * gray, w, h and ppi, and returns DQ_ERR_NOTFOUND after the last page. */
typedef struct dq_ocr_img dq_ocr_img;
dq_status dq_ocr_img_open(const char *data, size_t n, dq_ocr_img **out,
                          char *why, size_t why_cap);
dq_status dq_ocr_img_next(dq_ocr_img *im, dq_ocr_job *j, char *why,
                          size_t why_cap);
void dq_ocr_img_close(dq_ocr_img *im);
dq_status dq_read_image(const dq_reader_ctx *c, const char *data, size_t n,
                        dq_tbuf *b, uint32_t *n_pages);

#endif /* DQ_INGEST_INT_H */
