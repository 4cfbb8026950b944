/*
 * test_read_pdf.c - the PDF reader on fixtures written by
 * fixtures/make_pdf.py (text and layout stated there): page numbers and
 * lines within the page of specific strings, page count, and refusals of an
 * encrypted PDF (user password "secret"), garbage and truncated files;
 * running headers and footers emptied in place (running.pdf); headings
 * from the fonts (headings.pdf); and
 * that poppler-glib is opened when the first PDF is read, not before
 * (read_pdf.c: not linked); a scan's picture pages read by OCR (scan.pdf),
 * Tesseract opened only then.
 */
#include "read_util.h"
#include "test.h"

#define FIX DQ_SOURCE_DIR "/tests/ingest_read/fixtures/"

static void test_two_pages(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  dq_read_info info;
  CHECK_OK(dq_read(FIX "two_pages.pdf", DQ_DOC_UNKNOWN, NULL, &t, &info, &err),
           err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_INT(t->kind, DQ_DOC_PDF);
  CHECK_EQ_INT(t->n_pages, 2);
  struct {
    const char *s;
    uint32_t page, line;
  } want[] = {{"Page one first line", 1, 1}, {"Alpha clause text", 1, 2},
              {"Gamma closing words", 1, 3}, {"Second page heading", 2, 1},
              {"Delta payment terms", 2, 2}, {"Omega end", 2, 3}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CHECK_MSG(find_in(t, want[i].s) >= 0, "missing \"%s\" in \"%s\"",
              want[i].s, t->text);
    CHECK_EQ_INT(page_of(t, want[i].s), want[i].page);
    CHECK_EQ_INT(line_of(t, want[i].s), want[i].line);
  }
  /* order is kept: page 1's text comes before page 2's */
  CHECK(find_in(t, "Gamma") < find_in(t, "Second page"));
  CHECK_EQ_INT(info.n_bytes, 1074);
  dq_text_free(t);
}

/* count of needle in t's text */
static int count_in(const dq_text *t, const char *needle) {
  int k = 0;
  for (const char *p = t->text; (p = strstr(p, needle)); p++)
    k++;
  return k;
}

static void test_running(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read(FIX "running.pdf", DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
           err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_INT(t->n_pages, 4);
  /* the header stays once, as the document's first line (its title) */
  CHECK_EQ_INT(count_in(t, "ACME SUPPLY AGREEMENT"), 1);
  CHECK_EQ_INT(page_of(t, "ACME SUPPLY AGREEMENT"), 1);
  CHECK_EQ_INT(line_of(t, "ACME SUPPLY AGREEMENT"), 1);
  /* the footers on every page go, digits and all */
  CHECK_MSG(count_in(t, "Page ") == 0, "%s", t->text);
  /* repeated, but never at a page's edge; at an edge on two pages only */
  CHECK_EQ_INT(count_in(t, "Standard terms apply."), 4);
  CHECK_EQ_INT(count_in(t, "Reference R-7"), 2);
  /* the emptied lines keep their place: lines are the page's layout */
  struct {
    const char *s;
    uint32_t page, line;
  } want[] = {{"1. Scope of supply", 1, 2},
              {"Alpha clause text", 1, 4},
              {"2. Price", 2, 2},
              {"Beta clause text", 2, 4},
              {"4. Law", 4, 2},
              {"Delta clause text", 4, 4}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CHECK_EQ_INT(page_of(t, want[i].s), want[i].page);
    CHECK_EQ_INT(line_of(t, want[i].s), want[i].line);
  }
  dq_text_free(t);
}

static void test_headings(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read(FIX "headings.pdf", DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
           err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  /* 20 pt over two lines, 14 pt, 12 pt bold over a 12 pt regular body;
   * four bold lines in a row are a paragraph; on the contents page only
   * its title, not the bold entry "Appendix A" */
  static const head_want want[] = {{1, "Field Guide to Ponds", 1, 1},
                                   {2, "Introduction", 1, 3},
                                   {3, "Water plants", 1, 6},
                                   {2, "Animals", 2, 1},
                                   {2, "Contents", 3, 1}};
  CHECK_HEADINGS(t, want);
  dq_text_free(t);
}

static void test_refusals(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  dq_status st = dq_read(FIX "encrypted.pdf", DQ_DOC_UNKNOWN, NULL, &t, NULL,
                         &err);
  CHECK_EQ_INT(st, DQ_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(err.msg, "encrypted.pdf") && strstr(err.msg, "encrypted"),
            "%s", err.msg);
  CHECK(t == NULL);

  const char *junk = "%PDF-1.4\nthis is not a pdf body\n";
  st = dq_read_buffer("junk.pdf", junk, strlen(junk), DQ_DOC_UNKNOWN, NULL,
                      &t, NULL, &err);
  CHECK_EQ_INT(st, DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "junk.pdf") != NULL, "%s", err.msg);
  CHECK(t == NULL);

  /* the first 300 bytes of a good file: refused or (if poppler recovers)
   * valid text, never a crash */
  char *buf = NULL;
  size_t n = 0;
  CHECK_OK(dq_read_file(FIX "two_pages.pdf", 1 << 20, &buf, &n, &err),
           err.msg);
  if (buf) {
    st = dq_read_buffer("cut.pdf", buf, 300, DQ_DOC_PDF, NULL, &t, NULL, &err);
    CHECK(st == DQ_ERR_FORMAT || (st == DQ_OK && text_invariants(t)));
    dq_text_free(t);
  }
  free(buf);
}

/* scan.pdf: page 1 has a text layer, pages 2 and 3 are pictures only,
 * which OCR reads (Tesseract and its English, installed by
 * scripts/setup-deps.sh). The fixture's lines are clean 12 pt Helvetica at
 * 200 dpi: each must come back word for word, at its page and line. */
static dq_text *read_scan(const dq_read_opts *o, dq_read_info *info) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read(FIX "scan.pdf", DQ_DOC_UNKNOWN, o, &t, info, &err), err.msg);
  if (t) {
    CHECK(text_invariants(t));
    CHECK_EQ_INT(t->n_pages, 3);
  }
  return t;
}

static void test_scan(void) {
  CHECK_EQ_INT(test_mapped("libtesseract"), 0); /* not before a scan */
  dq_read_info info;
  dq_text *t = read_scan(NULL, &info);
  if (!t)
    return;
  CHECK(test_mapped("libtesseract") > 0);
  CHECK(strcmp(dq_ocr_version(), "not found") != 0);
  CHECK_EQ_INT(info.n_ocr_pages, 2);
  CHECK_EQ_INT(info.n_pages_no_text, 0);
  CHECK_EQ_STR(info.ocr_why, "");
  struct {
    const char *s;
    uint32_t page, line;
  } want[] = {
      {"Lease of Unit 4, Harbour Street", 1, 1},
      {"Signed copy, as scanned", 1, 2},
      {"7. Termination", 2, 1},
      {"Either party may end this lease on ninety days written notice.", 2, 2},
      {"The deposit of EUR 4,500 is returned within 30 days.", 2, 3},
      {"8. Governing law", 3, 1},
      {"This lease is governed by the laws of Ireland.", 3, 2},
      {"Signed at Dublin on 3 March 2026.", 3, 3}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CHECK_MSG(find_in(t, want[i].s) >= 0, "missing \"%s\" in \"%s\"", want[i].s,
              t->text);
    CHECK_EQ_INT(page_of(t, want[i].s), want[i].page);
    CHECK_EQ_INT(line_of(t, want[i].s), want[i].line);
  }

  /* pages read two at a time (two engines, two threads): the same text */
  dq_read_opts two = {0};
  two.n_threads = 2;
  dq_read_info info2;
  dq_text *t2 = read_scan(&two, &info2);
  if (t2) {
    CHECK_EQ_STR(t2->text, t->text);
    CHECK_EQ_INT(info2.n_ocr_pages, 2);
  }
  dq_text_free(t2);

  /* progress as pages are read, from 0 of 2 to 2 of 2; asked to stop
   * after the first page, the read stops, naming the file */
  progress_log pl = {0};
  dq_read_opts prog = {0};
  prog.progress = progress_record;
  prog.progress_user = &pl;
  t2 = read_scan(&prog, &info2);
  CHECK_EQ_STR(pl.stage, "ocr");
  CHECK_EQ_INT(pl.calls, 3);
  CHECK_EQ_INT(pl.done, 2);
  CHECK_EQ_INT(pl.total, 2);
  dq_text_free(t2);
  progress_log stop = {.stop_at = 2};
  prog.progress_user = &stop;
  t2 = NULL;
  dq_error err2 = {0};
  CHECK_EQ_INT(dq_read(FIX "scan.pdf", DQ_DOC_UNKNOWN, &prog, &t2, NULL, &err2),
               DQ_ERR_INTERRUPTED);
  CHECK(t2 == NULL);
  CHECK_MSG(strstr(err2.msg, "scan.pdf") && strstr(err2.msg, "interrupted"),
            "%s", err2.msg);
  CHECK_EQ_INT(stop.calls, 2);

  /* OCR off: the picture pages stay empty and are counted */
  dq_read_opts off = {0};
  off.no_ocr = 1;
  t2 = read_scan(&off, &info2);
  if (t2) {
    CHECK(find_in(t2, "Lease of Unit 4") >= 0);
    CHECK(find_in(t2, "Termination") < 0);
    CHECK_EQ_INT(info2.n_ocr_pages, 0);
    CHECK_EQ_INT(info2.n_pages_no_text, 2);
    CHECK_EQ_STR(info2.ocr_why, "OCR is off");
  }
  dq_text_free(t2);

  /* a language whose traineddata is missing: counted, the reason names it;
   * a malformed language list is refused the same way, never opened */
  const char *langs[] = {"xxnone", "../eng"};
  for (size_t i = 0; i < 2; i++) {
    dq_read_opts bad = {0};
    bad.ocr_lang = langs[i];
    t2 = read_scan(&bad, &info2);
    if (t2) {
      CHECK(find_in(t2, "Termination") < 0);
      CHECK_EQ_INT(info2.n_pages_no_text, 2);
      CHECK_MSG(strstr(info2.ocr_why, langs[i]) != NULL, "%s", info2.ocr_why);
    }
    dq_text_free(t2);
  }

  /* a PDF with text on every page needs no OCR */
  dq_text_free(t);
  t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read(FIX "two_pages.pdf", DQ_DOC_UNKNOWN, NULL, &t, &info, &err),
           err.msg);
  CHECK_EQ_INT(info.n_ocr_pages, 0);
  CHECK_EQ_INT(info.n_pages_no_text, 0);
  dq_text_free(t);
}

int main(void) {
  CHECK_EQ_INT(test_mapped("libpoppler"), 0);
  test_two_pages();
  test_running();
  test_headings();
  CHECK(test_mapped("libpoppler-glib") > 0);
  CHECK(strcmp(dq_ingest_poppler_version(), "not found") != 0);
  test_refusals();
  test_scan();
  return TEST_EXIT();
}
