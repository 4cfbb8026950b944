/*
 * test_read_doc.c - the Word 97-2003 reader on word97.doc, which
 * LibreOffice 7.4 wrote from our word97.fodt: paragraphs, code page 1252
 * and UTF-16 text, a footnote, a comment, a hyperlink and a page-number
 * field (their results, not their codes), a line break, an empty
 * paragraph, a table with a two-paragraph cell; then copies of it with
 * its File Information Block changed (found at its 0xA5EC signature):
 * encrypted, Word 95's format, a piece table past its stream, too many
 * characters, and the file cut short, each refused with a message naming
 * the file. Expected text was written by hand from word97.fodt.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

static void test_fixture(void) {
  dq_text *t = fixture("word97.doc");
  if (!t)
    return;
  CHECK_EQ_INT(t->kind, DQ_DOC_DOC);
  CHECK_EQ_STR(t->text,
               "Lease Agreement for Unit 4\n"
               "The Tenant pays \xE2\x82\xAC" "1,250 monthly to the Landlord"
               "\xE2\x80\x99s \xE2\x80\x9C" "escrow\xE2\x80\x9D account.\n"
               "Notices go to legal@harbour.example or by post.\n"
               "Second line of the same paragraph.\n"
               "Item | Amount | Due\n"
               "Deposit | \xE2\x82\xAC" "3,750 held by Harbour Bank | On "
               "signing\n"
               "Signed by J\xC3\xBCrgen Gro\xC3\x9F on page 1.\n"
               "[footnotes]\n"
               "Payable in advance on the first day of each month.\n"
               "[comments]\n"
               "Check the signatory.\n");
  /* lines are paragraphs: the empty third paragraph counts, a line
   * break does not start one */
  CHECK_EQ_INT(line_of(t, "Notices go"), 4);
  CHECK_EQ_INT(line_of(t, "Second line"), 4);
  CHECK_EQ_INT(line_of(t, "Item |"), 5);
  CHECK(line_of(t, "Signed by") > line_of(t, "Deposit |"));
  CHECK_EQ_INT(t->n_headings, 0);
  dq_text_free(t);
}

/* The fixture's bytes, and the offset of its FIB (the WordDocument
 * stream's start, at a sector boundary), or NULL. */
static unsigned char *load(size_t *n, size_t *fib) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/ingest_read/fixtures/word97.doc",
           DQ_SOURCE_DIR);
  char *buf = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read_file(path, 1 << 20, &buf, n, &err), err.msg);
  *fib = 0;
  for (size_t at = 512; buf && at + 0x200 < *n && !*fib; at += 512)
    if ((unsigned char)buf[at] == 0xEC && (unsigned char)buf[at + 1] == 0xA5)
      *fib = at;
  CHECK(*fib != 0);
  return (unsigned char *)buf;
}

static size_t le16(const unsigned char *p) { return p[0] | (size_t)p[1] << 8; }

static void expect_refused(const unsigned char *b, size_t n, dq_status want,
                           const char *msg) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_EQ_INT(dq_read_buffer("w.doc", b, n, DQ_DOC_UNKNOWN, NULL, &t, NULL,
                              &err),
               want);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, "w.doc") && strstr(err.msg, msg), "%s",
            err.msg);
}

static void test_refused(void) {
  size_t n, fib;
  unsigned char *orig = load(&n, &fib);
  if (!orig || !fib) {
    free(orig);
    return;
  }
  unsigned char *b = malloc(n);
  /* encrypted (fEncrypted, bit 8 of the flags at 0x0A) */
  memcpy(b, orig, n);
  b[fib + 0x0B] |= 0x01;
  expect_refused(b, n, DQ_ERR_UNSUPPORTED, "encrypted Word document");
  /* Word 95's nFib */
  memcpy(b, orig, n);
  b[fib + 2] = 0x65;
  b[fib + 3] = 0x00;
  expect_refused(b, n, DQ_ERR_UNSUPPORTED, "a Word 6 or 95 document");
  /* the piece table's offset (FibRgFcLcb pair 33) past the table stream */
  memcpy(b, orig, n);
  size_t csw = le16(b + fib + 0x20), lw = fib + 0x22 + 2 * csw + 2;
  size_t cslw = le16(b + lw - 2);
  size_t pairs = lw + 4 * cslw + 2;
  b[pairs + 8 * 33 + 3] = 0x7F;
  expect_refused(b, n, DQ_ERR_FORMAT, "piece table lies past");
  /* more characters than the limit (ccpText, FibRgLw index 3) */
  memcpy(b, orig, n);
  b[lw + 12 + 3] = 0x7F;
  expect_refused(b, n, DQ_ERR_LIMIT, "characters, over the limit");
  /* no FIB signature */
  memcpy(b, orig, n);
  b[fib] = 0;
  expect_refused(b, n, DQ_ERR_FORMAT, "no Word file information block");
  /* cut short: the container's chains leave the file */
  expect_refused(orig, fib + 100, DQ_ERR_FORMAT,
                 "not a readable Word document (.doc)");
  free(b);
  free(orig);
}

static void test_detect(void) {
  static const unsigned char cfb[8] = {0xD0, 0xCF, 0x11, 0xE0,
                                       0xA1, 0xB1, 0x1A, 0xE1};
  CHECK_EQ_INT(dq_detect_kind("a.doc", cfb, 8, NULL), DQ_DOC_DOC);
  /* an RTF or a text saved as .doc is read by its bytes */
  CHECK_EQ_INT(dq_detect_kind("b.DOC", "{\\rtf1\\ansi x}", 14, NULL),
               DQ_DOC_RTF);
  CHECK_EQ_INT(dq_detect_kind("c.doc", "plain words\n", 12, NULL),
               DQ_DOC_TEXT);
  CHECK_EQ_STR(dq_doc_kind_name(DQ_DOC_DOC), "doc");
}

int main(void) {
  test_fixture();
  test_refused();
  test_detect();
  return TEST_EXIT();
}
