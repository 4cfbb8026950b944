/*
 * test_read_xls.c - the Excel 97-2003 reader (read_xlsx.c's dq_read_xls,
 * BIFF8): book.xls, which LibreOffice 7.4 wrote from book.xlsx, reads
 * exactly as the XLSX reader reads book.xlsx (text, headings, every mark's
 * sheet and row: two independent files of one workbook); long.xls
 * (LibreOffice, from make_long_xls.py's workbook) has shared strings that
 * run on in CONTINUE records, one of one-byte and one of two-byte
 * characters, each read whole, and an embedded chart whose substream
 * does not end the sheet's; refusals by name: an encrypted workbook
 * (FILEPASS), Excel 5.0/95 (BIFF5), a record running past the stream;
 * and what a ".xls" holds decides its reading: HTML and text exports by
 * their bytes, a zip as an .xlsx. A workbook built here (records wrapped
 * in a compound file written by the test) checks what LibreOffice's
 * files do not show: a shared string whose characters change from two
 * bytes to one in its CONTINUE record, RK and MULRK numbers, a formula's
 * string result, errors and booleans, an embedded chart's records
 * between two cells, and a file cut inside its last sector.
 */
#include "read_util.h"
#include "test.h"

#include "cfb_build.h"
#include "office_util.h" /* after test.h: its checks use CHECK */

static void test_book(void) { check_as_book_xlsx("book.xls", DQ_DOC_XLS); }

/* The number of times s occurs in t. */
static size_t count(const char *t, const char *s) {
  size_t n = 0;
  for (const char *p = t; (p = strstr(p, s)); p += strlen(s))
    n++;
  return n;
}

static void test_long(void) {
  dq_text *t = fixture("long.xls");
  if (!t)
    return;
  CHECK(!strncmp(t->text, "Sheet: Long\nId | Text\n0 | short string number 0\n",
                 48));
  CHECK(strstr(t->text, "\n49 | short string number 49\n") != NULL);
  /* the one-byte string, 9,000 A's then its end, on row 52 */
  char *a = malloc(9000 + 32);
  memset(a, 'A', 9000);
  strcpy(a + 9000, " end of the long one\n");
  const char *at = strstr(t->text, a);
  CHECK_MSG(at != NULL, "the long one-byte string is not whole");
  if (at) {
    uint32_t line, page;
    dq_text_locate(t, (size_t)(at - t->text), &line, &page);
    CHECK_EQ_INT(line, 52);
    CHECK(at > t->text + 3 && !strncmp(at - 3, " | ", 3)); /* column B */
  }
  free(a);
  /* the two-byte one: 3,000 "é€" then its end */
  CHECK_EQ_INT(count(t->text, "\xC3\xA9\xE2\x82\xAC"), 3000);
  CHECK(strstr(t->text, "\xC3\xA9\xE2\x82\xAC wide end\n") != NULL);
  /* after the strings, the row the chart's substream follows */
  CHECK(strstr(t->text, "\n0.5\n") != NULL);
  dq_text_free(t);
}

/* book.xls with the first occurrence of `from` changed to `to` (n bytes),
 * read under `name`; the error message, or "" when it reads. */
static void read_patched(const char *from, const char *to, size_t n,
                         const char *name, dq_status *st, char *msg,
                         size_t cap) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/ingest_read/fixtures/book.xls",
           DQ_SOURCE_DIR);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  static char buf[65536];
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f)
    fclose(f);
  char *hit = memmem(buf, len, from, n);
  CHECK_MSG(hit != NULL, "pattern not in book.xls");
  if (hit)
    memcpy(hit, to, n);
  dq_text *t = NULL;
  dq_error err = {0};
  *st = dq_read_buffer(name, buf, len, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err);
  snprintf(msg, cap, "%s", *st == DQ_OK ? "" : err.msg);
  dq_text_free(t);
}

/* ---- a workbook built here: BIFF8 records in a compound file ---- */

typedef struct bytes {
  unsigned char p[8192];
  size_t n;
} bytes;

static void put16(bytes *b, unsigned v) {
  b->p[b->n++] = (unsigned char)v;
  b->p[b->n++] = (unsigned char)(v >> 8);
}

static void put32(bytes *b, uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}

static void put(bytes *b, const void *s, size_t n) {
  if (n) /* an empty record's data may be NULL */
    memcpy(b->p + b->n, s, n);
  b->n += n;
}

/* A record: its type, length, then the data. */
static void rec(bytes *b, unsigned type, const void *data, size_t n) {
  put16(b, type);
  put16(b, (unsigned)n);
  put(b, data, n);
}

/* rw, col, ixfe (0) of a cell record, then more */
static void cell_head(bytes *d, unsigned row, unsigned col) {
  d->n = 0;
  put16(d, row);
  put16(d, col);
  put16(d, 0);
}

/* Shared strings whose first string's characters cross into a CONTINUE
 * record and change there from two bytes to one; cells of every kind; an
 * embedded chart's substream between two cells. */
static void test_built(void) {
  static bytes ws, d;
  ws.n = 0;
  static const unsigned char bof_globals[16] = {0x00, 0x06, 0x05, 0x00};
  rec(&ws, 0x0809, bof_globals, 16);
  size_t bound_at = ws.n; /* BOUNDSHEET8: its offset patched below */
  static const unsigned char bound[] = {0, 0, 0, 0, 0, 0, 1, 0, 'S'};
  rec(&ws, 0x0085, bound, sizeof bound);
  d.n = 0; /* SST: 2 strings; "ÀÀÀÀ" wide, then on in the CONTINUE */
  put32(&d, 2);
  put32(&d, 2);
  put16(&d, 10);
  d.p[d.n++] = 1;
  for (int i = 0; i < 4; i++)
    put16(&d, 0xC0);
  rec(&ws, 0x00FC, d.p, d.n);
  d.n = 0; /* CONTINUE: an option byte (one-byte characters), "bcdefg",
              then the second string whole */
  d.p[d.n++] = 0;
  put(&d, "bcdefg", 6);
  put16(&d, 3);
  d.p[d.n++] = 0;
  put(&d, "xyz", 3);
  rec(&ws, 0x003C, d.p, d.n);
  rec(&ws, 0x000A, NULL, 0);
  uint32_t sheet_at = (uint32_t)ws.n;
  for (int i = 0; i < 4; i++)
    ws.p[bound_at + 4 + i] = (unsigned char)(sheet_at >> (8 * i));
  static const unsigned char bof_sheet[16] = {0x00, 0x06, 0x10, 0x00};
  rec(&ws, 0x0809, bof_sheet, 16);
  for (unsigned r = 0; r < 2; r++) { /* LABELSST */
    cell_head(&d, r, 0);
    put32(&d, r);
    rec(&ws, 0x00FD, d.p, d.n);
  }
  static const unsigned char bof_chart[16] = {0x00, 0x06, 0x20, 0x00};
  rec(&ws, 0x0809, bof_chart, 16); /* a chart inside the sheet */
  cell_head(&d, 9, 9);
  put32(&d, (99u << 2) | 2); /* an RK inside it: not the sheet's */
  rec(&ws, 0x027E, d.p, d.n);
  rec(&ws, 0x000A, NULL, 0);
  cell_head(&d, 2, 1); /* NUMBER 2.5 */
  double v = 2.5;
  uint64_t bits;
  memcpy(&bits, &v, 8);
  put32(&d, (uint32_t)bits);
  put32(&d, (uint32_t)(bits >> 32));
  rec(&ws, 0x0203, d.p, d.n);
  cell_head(&d, 3, 0); /* RK: the integer 7 */
  put32(&d, (7u << 2) | 2);
  rec(&ws, 0x027E, d.p, d.n);
  d.n = 0; /* MULRK: row 4, columns 0 and 1, 150 / 100 each */
  put16(&d, 4);
  put16(&d, 0);
  for (int i = 0; i < 2; i++) {
    put16(&d, 0);
    put32(&d, (150u << 2) | 3);
  }
  put16(&d, 1);
  rec(&ws, 0x00BD, d.p, d.n);
  cell_head(&d, 5, 0); /* FORMULA with a string result, then STRING */
  static const unsigned char fstr[14] = {0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  put(&d, fstr, sizeof fstr);
  rec(&ws, 0x0006, d.p, d.n);
  d.n = 0;
  put16(&d, 2);
  d.p[d.n++] = 0;
  put(&d, "fx", 2);
  rec(&ws, 0x0207, d.p, d.n);
  cell_head(&d, 5, 1); /* BOOLERR: #DIV/0! */
  d.p[d.n++] = 0x07;
  d.p[d.n++] = 1;
  rec(&ws, 0x0205, d.p, d.n);
  cell_head(&d, 6, 0); /* BOOLERR: TRUE */
  d.p[d.n++] = 1;
  d.p[d.n++] = 0;
  rec(&ws, 0x0205, d.p, d.n);
  rec(&ws, 0x000A, NULL, 0);
  static unsigned char file[16384];
  size_t n = cfb_build("Workbook", ws.p, ws.n, file, sizeof file);
  CHECK(n > 0);
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read_buffer("built.xls", file, n, DQ_DOC_UNKNOWN, NULL, &t, NULL,
                          &err),
           err.msg);
  if (t) {
    CHECK_EQ_STR(t->text, "Sheet: S\n"
                          "\xC3\x80\xC3\x80\xC3\x80\xC3\x80"
                          "bcdefg\n"
                          "xyz\n"
                          " | 2.5\n"
                          "7\n"
                          "1.5 | 1.5\n"
                          "fx | #DIV/0!\n"
                          "TRUE\n");
    uint32_t line, page;
    dq_text_locate(t, (size_t)(strstr(t->text, "TRUE") - t->text), &line,
                   &page);
    CHECK_EQ_INT(line, 7);
    CHECK_EQ_INT(page, 1);
  }
  /* a file cut inside its last sector (as some writers leave it): that
   * sector read as far as it goes */
  dq_text *cut = NULL;
  CHECK_OK(dq_read_buffer("cut.xls", file, n - 100, DQ_DOC_UNKNOWN, NULL, &cut,
                          NULL, &err),
           err.msg);
  if (t && cut)
    CHECK_EQ_STR(cut->text, t->text);
  dq_text_free(cut);
  dq_text_free(t);
}

static void test_refused(void) {
  dq_status st;
  char msg[1100];
  /* the globals' CODEPAGE record made a FILEPASS: encrypted */
  read_patched("\x42\x00\x02\x00", "\x2F\x00\x02\x00", 4, "b.xls", &st, msg,
               sizeof msg);
  CHECK(st != DQ_OK);
  CHECK_MSG(strstr(msg, "b.xls: encrypted Excel workbook"), "%s", msg);
  /* the globals' BOF says BIFF5 */
  read_patched("\x09\x08\x10\x00\x00\x06\x05\x00",
               "\x09\x08\x10\x00\x00\x05\x05\x00", 8, "b.xls", &st, msg,
               sizeof msg);
  CHECK(st != DQ_OK);
  CHECK_MSG(strstr(msg, "b.xls") && strstr(msg, "Excel 5.0/95"), "%s", msg);
  /* the CODEPAGE record's length made huge: past the stream's end */
  read_patched("\x42\x00\x02\x00", "\x42\x00\xF0\xFF", 4, "b.xls", &st, msg,
               sizeof msg);
  CHECK(st != DQ_OK);
  CHECK_MSG(strstr(msg, "b.xls") && strstr(msg, "runs past its end"), "%s",
            msg);
  /* Excel 2.x-4.0: a bare BIFF4 stream, named and refused */
  static const char biff4[] = "\x09\x04\x06\x00\x00\x00\x10\x00";
  dq_text *t4 = NULL;
  dq_error e4 = {0};
  CHECK(dq_read_buffer("old.xls", biff4, sizeof biff4 - 1, DQ_DOC_UNKNOWN,
                       NULL, &t4, NULL, &e4) != DQ_OK);
  CHECK_MSG(strstr(e4.msg, "old.xls: an Excel 2.x-4.0 worksheet"), "%s",
            e4.msg);
  /* not a compound file at all, binary bytes */
  dq_text *t = NULL;
  dq_error err = {0};
  static const char junk[] = "\x01\x02\x03\x00\xff\xfe binary";
  CHECK(dq_read_buffer("j.xls", junk, sizeof junk - 1, DQ_DOC_UNKNOWN, NULL,
                       &t, NULL, &err) != DQ_OK);
  CHECK(t == NULL);
}

static void test_detect(void) {
  /* a web application's "Excel" export: HTML, or tab-separated text */
  static const char html[] = "<html><body><table><tr><td>Name</td><td>"
                             "Total</td></tr></table></body></html>";
  CHECK_EQ_INT(dq_detect_kind("export.xls", html, sizeof html - 1, NULL),
               DQ_DOC_HTML);
  static const char tsv[] = "Name\tTotal\nAcme\t12\n";
  CHECK_EQ_INT(dq_detect_kind("export.xls", tsv, sizeof tsv - 1, NULL),
               DQ_DOC_TEXT);
  CHECK_EQ_INT(dq_detect_kind("renamed.xls", "PK\x03\x04", 4, NULL),
               DQ_DOC_XLSX);
  CHECK_EQ_INT(dq_detect_kind("b.xls", "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8,
                              NULL),
               DQ_DOC_XLS);
  CHECK_EQ_INT(dq_detect_kind("T.XLT", NULL, 0, NULL), DQ_DOC_XLS);
  CHECK_EQ_STR(dq_doc_kind_name(DQ_DOC_XLS), "xls");
}

int main(void) {
  test_book();
  test_long();
  test_built();
  test_refused();
  test_detect();
  return TEST_EXIT();
}
