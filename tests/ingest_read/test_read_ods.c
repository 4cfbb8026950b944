/*
 * test_read_ods.c - the OpenDocument spreadsheet reader (read_xlsx.c's
 * dq_read_ods): book.ods, which LibreOffice 7.4 wrote from book.xlsx,
 * reads exactly as the XLSX reader reads book.xlsx (text, headings, every
 * mark's sheet and row: two independent files of one workbook); and
 * content.xml parts built here for repeated rows and cells (filled ones
 * written again, empty ones only counted, so a row after a million empty
 * ones has its number), the inline elements of a cell's paragraphs,
 * shapes left out, comments after their row (notes.ods, LibreOffice's of
 * notes.xlsx, reads as the XLSX reader reads that), values as the XLSX reader
 * writes them (numbers without grouping, TRUE/FALSE, ISO dates, times,
 * percentages) and a shown text kept where it is not a plain number (a
 * currency), a hidden sheet, and refusals: a text bomb of repeated cells,
 * malformed XML, a missing part. Expected text was written by hand.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

static void test_book(void) { check_as_book_xlsx("book.ods", DQ_DOC_ODS); }

/* notes.ods, LibreOffice's of notes.xlsx: its comments after their rows
 * as the XLSX reader writes notes.xlsx's, at the same rows and sheets;
 * LibreOffice kept no author (XlsxWriter's authors were not read). */
static void test_notes(void) {
  dq_text *o = fixture("notes.ods"), *x = fixture("notes.xlsx");
  if (o)
    CHECK_EQ_STR(o->text,
                 "Sheet: Budget\n"
                 "Item | Amount | Owner\n"
                 "[comment, on B1] Amounts in EUR, excluding VAT.\n"
                 "Freight | 1450 | Ravi\n"
                 "[comment, on B2] Adjusted for the fuel surcharge. See the "
                 "March invoice.\n"
                 "[comment, on C2] Ravi leaves in June.\n"
                 "Storage | 300 | Mei\n"
                 "[comment, on D4] Row 4 left empty on purpose.\n"
                 "Insurance | 95 | Ravi\n"
                 "Sheet: Notes\n"
                 "[comment, on C7] Nothing here yet.\n");
  if (o && x) { /* line by line, the same sheet and row */
    const char *a = o->text, *b = x->text;
    while (*a && *b) {
      uint32_t la, pa, lb, pb;
      dq_text_locate(o, (size_t)(a - o->text), &la, &pa);
      dq_text_locate(x, (size_t)(b - x->text), &lb, &pb);
      CHECK_MSG(la == lb && pa == pb, "%.30s: %u:%u, xlsx %u:%u", a, pa, la, pb,
                lb);
      a = strchr(a, '\n');
      b = strchr(b, '\n');
      if (!a || !b)
        break;
      a++, b++;
    }
  }
  dq_text_free(o);
  dq_text_free(x);
}

#define NS                                                                     \
  "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "         \
  "xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\" "           \
  "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" "             \
  "xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\" "           \
  "xmlns:draw=\"urn:oasis:names:tc:opendocument:xmlns:drawing:1.0\" "          \
  "xmlns:dc=\"http://purl.org/dc/elements/1.1/\""
#define HEAD "<office:document-content " NS ">"
#define BODY "<office:body><office:spreadsheet>"
#define TAIL "</office:spreadsheet></office:body></office:document-content>"
#define MIME "application/vnd.oasis.opendocument.spreadsheet"

static dq_status read_content(const char *content, dq_text **t, dq_error *err) {
  part p[] = {{"mimetype", MIME, strlen(MIME)},
              {"content.xml", content, strlen(content)}};
  return read_zipped("s.ods", p, 2, t, err);
}

/* content read, the text checked; the dq_text returned to check more */
static dq_text *read_ok(const char *content, const char *want) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_content(content, &t, &err), err.msg);
  if (t)
    CHECK_EQ_STR(t->text, want);
  return t;
}

static uint32_t row_of(const dq_text *t, const char *s) {
  const char *at = strstr(t->text, s);
  uint32_t line = 0, page = 0;
  if (at)
    dq_text_locate(t, (size_t)(at - t->text), &line, &page);
  return line;
}

static void test_repeats(void) {
  /* a filled cell repeated twice, an empty cell between values, the
   * trailing empty cells LibreOffice writes to column 16384, a filled row
   * repeated three times, a million empty rows, a row after them */
  static const char c[] =
      HEAD BODY "<table:table table:name=\"Data\">"
      "<table:table-column table:number-columns-repeated=\"16384\"/>"
      "<table:table-row><table:table-cell office:value-type=\"string\">"
      "<text:p>Name</text:p></table:table-cell>"
      "<table:table-cell table:number-columns-repeated=\"2\" "
      "office:value-type=\"string\"><text:p>Q</text:p></table:table-cell>"
      "<table:table-cell/><table:table-cell office:value-type=\"float\" "
      "office:value=\"7\"><text:p>7</text:p></table:table-cell>"
      "<table:table-cell table:number-columns-repeated=\"16379\"/>"
      "</table:table-row>"
      "<table:table-row table:number-rows-repeated=\"3\">"
      "<table:table-cell office:value-type=\"string\"><text:p>same</text:p>"
      "</table:table-cell><table:covered-table-cell/>"
      "<table:table-cell office:value-type=\"float\" office:value=\"1\">"
      "<text:p>1</text:p></table:table-cell></table:table-row>"
      "<table:table-row table:number-rows-repeated=\"1048000\">"
      "<table:table-cell table:number-columns-repeated=\"16384\"/>"
      "</table:table-row>"
      "<table:table-row><table:table-cell office:value-type=\"string\">"
      "<text:p>last</text:p></table:table-cell></table:table-row>"
      "</table:table>" TAIL;
  dq_text *t = read_ok(c, "Sheet: Data\n"
                          "Name | Q | Q |  | 7\n"
                          "same |  | 1\n"
                          "same |  | 1\n"
                          "same |  | 1\n"
                          "last\n");
  if (t) {
    CHECK_EQ_INT(row_of(t, "Name"), 1);
    CHECK_EQ_INT(row_of(t, "last"), 1048005);
    CHECK_EQ_INT(t->n_pages, 1);
  }
  dq_text_free(t);
}

static void test_inline(void) {
  /* spaces, tabs, line breaks, spans, two paragraphs; a shape in cells,
   * and a table inside a shape, left out; a comment on its own line after
   * the row, its dc:date not written (as an .xlsx's, which has none) */
  static const char c[] = HEAD BODY
      "<table:table table:name=\"Notes\">"
      "<table:shapes><draw:frame><draw:text-box><text:p>shape text</text:p>"
      "</draw:text-box></draw:frame></table:shapes>"
      "<table:table-row><table:table-cell office:value-type=\"string\">"
      "<office:annotation><dc:creator>Ann</dc:creator><dc:date>2026-03-01"
      "T10:00:00</dc:date><text:p>a comment</text:p><text:p>on <text:span>"
      "two</text:span> lines</text:p></office:annotation>"
      "<text:p>a<text:s text:c=\"3\"/>b<text:tab/>c<text:line-break/>d "
      "<text:span>e</text:span></text:p><text:p>second</text:p>"
      "</table:table-cell><table:table-cell office:value-type=\"string\">"
      "<draw:frame><draw:text-box><text:p>in a frame</text:p>"
      "<table:table><table:table-row><table:table-cell><text:p>inner</text:p>"
      "</table:table-cell></table:table-row></table:table>"
      "</draw:text-box></draw:frame><text:p>kept</text:p></table:table-cell>"
      "</table:table-row></table:table>" TAIL;
  dq_text *t = read_ok(c, "Sheet: Notes\n"
                          "a   b c d e second | kept\n"
                          "[comment, Ann, on A1] a comment on two lines\n");
  dq_text_free(t);
}

static void test_values(void) {
  static const char c[] =
      HEAD
      "<office:automatic-styles><style:style style:name=\"ta1\" "
      "style:family=\"table\"><style:table-properties "
      "table:display=\"true\"/></style:style><style:style "
      "style:name=\"ta2\" style:family=\"table\"><style:table-properties "
      "table:display=\"false\"/></style:style></office:automatic-styles>" BODY
      "<table:table table:name=\"Values\" table:style-name=\"ta1\">"
      "<table:table-row>"
      "<table:table-cell office:value-type=\"float\" office:value=\"1234.5\">"
      "<text:p>1,234.50</text:p></table:table-cell>"
      "<table:table-cell office:value-type=\"currency\" office:value=\"12\" "
      "office:currency=\"USD\"><text:p>$12.00</text:p></table:table-cell>"
      "<table:table-cell office:value-type=\"boolean\" "
      "office:boolean-value=\"true\"><text:p>WAHR</text:p></table:table-cell>"
      "<table:table-cell office:value-type=\"date\" "
      "office:date-value=\"2024-03-12T14:30:15\"><text:p>12.03.24</text:p>"
      "</table:table-cell>"
      "<table:table-cell office:value-type=\"date\" "
      "office:date-value=\"1999-12-31\"><text:p>31/12/99</text:p>"
      "</table:table-cell>"
      "<table:table-cell office:value-type=\"time\" "
      "office:time-value=\"PT14H30M15S\"><text:p>2:30:15 PM</text:p>"
      "</table:table-cell>"
      "<table:table-cell office:value-type=\"percentage\" "
      "office:value=\"0.075\"><text:p>8%</text:p></table:table-cell>"
      "<table:table-cell office:value-type=\"float\" office:value=\"0.5\">"
      "<text:p>1/2</text:p></table:table-cell>"
      "</table:table-row><table:table-row>"
      /* no paragraph: the value as stored */
      "<table:table-cell office:value-type=\"float\" office:value=\"42\"/>"
      "<table:table-cell office:value-type=\"string\" "
      "office:string-value=\"from attribute\"/>"
      "<table:table-cell office:value-type=\"boolean\" "
      "office:boolean-value=\"false\"/>"
      "</table:table-row></table:table>"
      "<table:table table:name=\"Secret\" table:style-name=\"ta2\">"
      "<table:table-row><table:table-cell office:value-type=\"string\">"
      "<text:p>hidden sheet</text:p></table:table-cell></table:table-row>"
      "</table:table>" TAIL;
  dq_text *t = read_ok(c, "Sheet: Values\n"
                          "1234.5 | $12.00 | TRUE | 2024-03-12 14:30:15 | "
                          "1999-12-31 | 14:30:15 | 7.5% | 1/2\n"
                          "42 | from attribute | FALSE\n"
                          "Sheet: Secret (hidden)\n"
                          "hidden sheet\n");
  if (t) {
    CHECK_EQ_INT(t->n_pages, 2);
    CHECK_EQ_INT(t->n_headings, 2);
    uint32_t line, page;
    dq_text_locate(t, (size_t)(strstr(t->text, "hidden sheet") - t->text),
                   &line, &page);
    CHECK_EQ_INT(page, 2);
    CHECK_EQ_INT(line, 1);
  }
  dq_text_free(t);
}

static void expect_refused(const char *content, const char *msg) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK(read_content(content, &t, &err) != DQ_OK);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, msg) && strstr(err.msg, "s.ods"), "%s", err.msg);
}

static void test_refused(void) {
  /* 1 KB in every cell of a row, repeated a million times: a few hundred
   * bytes in the file, a terabyte of text */
  char bomb[2048];
  char kb[1025];
  memset(kb, 'x', 1024);
  kb[1024] = '\0';
  snprintf(bomb, sizeof bomb,
           HEAD BODY "<table:table table:name=\"B\"><table:table-row "
                     "table:number-rows-repeated=\"1048576\"><table:table-cell "
                     "table:number-columns-repeated=\"16384\" "
                     "office:value-type=\"string\"><text:p>%s</text:p>"
                     "</table:table-cell></table:table-row></table:table>" TAIL,
           kb);
  expect_refused(bomb, "content.xml: the sheets' text passes 256 MiB");
  expect_refused(HEAD BODY "<table:table table:name=\"A\"><table:table-row>"
                           "</table:table>" TAIL,
                 "malformed content.xml near line 1");
  /* a zip without content.xml */
  part p[] = {{"mimetype", MIME, strlen(MIME)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK(read_zipped("s.ods", p, 1, &t, &err) != DQ_OK);
  CHECK_MSG(strstr(err.msg, "no content.xml in the zip"), "%s", err.msg);
  /* not a zip at all */
  CHECK(dq_read_buffer("s.ods", "not a zip", 9, DQ_DOC_UNKNOWN, NULL, &t,
                       NULL, &err) != DQ_OK);
  CHECK_MSG(strstr(err.msg, "s.ods") && strstr(err.msg, "ODS"), "%s",
            err.msg);
}

static void test_detect(void) {
  CHECK_EQ_INT(dq_detect_kind("s.ods", "PK\x03\x04", 4, NULL), DQ_DOC_ODS);
  CHECK_EQ_INT(dq_detect_kind("T.OTS", NULL, 0, NULL), DQ_DOC_ODS);
  CHECK_EQ_STR(dq_doc_kind_name(DQ_DOC_ODS), "ods");
}

int main(void) {
  test_book();
  test_notes();
  test_repeats();
  test_inline();
  test_values();
  test_refused();
  test_detect();
  return TEST_EXIT();
}
