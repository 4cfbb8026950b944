/*
 * test_read_xlsx.c - the Excel reader: book.xlsx (XlsxWriter, which writes
 * workbooks as Excel does) read exactly: sheets in order as sections,
 * rows as lines numbered as Excel numbers them, numbers, percentages,
 * dates and times as the cells show them, a chart sheet and a hidden
 * sheet; workbooks built here for the 1904 date system, the phantom 29
 * February 1900, inline and rich strings with a phonetic guide, cells and
 * rows without references, a dimension that starts past column A, and
 * refusals naming the part at fault. Expected text was written by hand
 * and agrees with openpyxl's reading of the same file.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

static void test_book(void) {
  dq_text *t = fixture("book.xlsx");
  if (!t)
    return;
  CHECK_EQ_INT(t->kind, DQ_DOC_XLSX);
  CHECK_EQ_INT(t->n_pages, 4);
  CHECK_EQ_STR(t->text, "Sheet: Revenue\n"
                        "Year | Revenue | Margin | Closed | Booked\n"
                        "2024 | 31.2 | 12.5% | 2024-03-12 | 2024-03-12 14:30\n"
                        "2025 |  |  | TRUE | 68\n"
                        " |  | Total only\n"
                        "Line one Line two\n"
                        "Bold then plain\n"
                        "Sheet: \xC3\x9C"
                        "bersicht\n"
                        "09:05 | #DIV/0! | 1234567\n"
                        "Sheet: Old (hidden)\n"
                        "Kestrel Partners bid 41 million\n");
  /* sheets are pages (the chart sheet, second, counts), rows lines */
  static const head_want want[] = {{1, "Sheet: Revenue", 1, 1},
                                   {1,
                                    "Sheet: \xC3\x9C"
                                    "bersicht",
                                    3, 1},
                                   {1, "Sheet: Old (hidden)", 4, 1}};
  CHECK_HEADINGS(t, want);
  CHECK_EQ_INT(line_of(t, "2025 |"), 3);
  CHECK_EQ_INT(line_of(t, " |  | Total only"), 5);
  CHECK_EQ_INT(line_of(t, "Bold then plain"), 7);
  CHECK_EQ_INT(page_of(t, "09:05"), 3);
  dq_text_free(t);
}

#define S "xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\""
#define R OPC_R
#define RELS OPC_RELS
#define T_REL OPC_T

static dq_status read_book(const part *parts, size_t n_parts, dq_text **t,
                           dq_error *err) {
  return read_zipped("b.xlsx", parts, n_parts, t, err);
}

static const char RELS_ONE[] =
    RELS "<Relationship Id=\"rId1\" Type=\"" T_REL
         "worksheet\" Target=\"worksheets/s1.xml\"/>"
         "<Relationship Id=\"rId2\" Type=\"" T_REL
         "sharedStrings\" Target=\"/xl/sst.xml\"/>"
         "<Relationship Id=\"rId3\" Type=\"" T_REL
         "styles\" Target=\"styles.xml\"/></Relationships>";

static const char STYLES[] =
    "<styleSheet " S "><numFmts count=\"2\">"
    "<numFmt numFmtId=\"164\" formatCode=\"&quot;day&quot; dd/mm/yyyy\"/>"
    "<numFmt numFmtId=\"165\" formatCode=\"[Red]0.00;[Blue]\\-0.00\"/>"
    "</numFmts><cellXfs count=\"4\"><xf numFmtId=\"0\"/>"
    "<xf numFmtId=\"164\"/><xf numFmtId=\"165\"/><xf numFmtId=\"22\"/>"
    "</cellXfs></styleSheet>";

static void test_built(void) {
  /* the 1904 date system; a custom date format with a quoted word; a
   * format whose letters are only in brackets and escapes (no date);
   * built-in 22, a date and time */
  static const char book[] =
      "<workbook " S " " R "><workbookPr date1904=\"1\"/><sheets>"
      "<sheet name=\"One\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>";
  static const char sst[] =
      "<sst " S "><si><t>plain</t></si>"
      "<si><r><t>rich </t></r><r><rPr><b/></rPr><t>runs</t></r>"
      "<rPh sb=\"0\" eb=\"1\"><t>FURIGANA</t></rPh></si>"
      "<si/><si><t xml:space=\"preserve\"> spaced </t></si></sst>";
  static const char s1[] =
      "<worksheet " S "><dimension ref=\"A2:E9\"/><sheetData>"
      "<row r=\"2\"><c r=\"B2\" s=\"1\"><v>0</v></c>"
      "<c r=\"C2\" s=\"2\"><v>-1.5</v></c>"
      "<c r=\"D2\" s=\"3\"><v>1.5</v></c></row>"
      /* no references: the row after 2, cells from its first column */
      "<row><c t=\"s\"><v>1</v></c><c t=\"s\"><v>0</v></c>"
      "<c t=\"s\"><v>99</v></c><c t=\"s\"><v>3</v></c></row>"
      "<row r=\"5\"><c r=\"C5\" t=\"inlineStr\"><is><r><t>in</t></r>"
      "<r><t>line</t></r><rPh><t>x</t></rPh></is></c>"
      "<c r=\"D5\" t=\"d\"><v>2026-12-07T00:00:00</v></c>"
      "<c r=\"E5\" t=\"e\"><v>#N/A</v></c></row>"
      "<row r=\"7\"><c r=\"A7\"><v>1</v></c><c r=\"B7\" t=\"b\"><v>0</v>"
      "</c></row>"
      "<row r=\"8\"><c r=\"B8\"/><c r=\"C8\" t=\"s\"/></row>"
      "<row r=\"9\"><c r=\"E9\" t=\"str\"><f>A1</f><v>formula text</v></c>"
      "</row></sheetData></worksheet>";
  part parts[] = {{"xl/workbook.xml", book, strlen(book)},
                  {"xl/_rels/workbook.xml.rels", RELS_ONE, strlen(RELS_ONE)},
                  {"xl/sst.xml", sst, strlen(sst)},
                  {"xl/styles.xml", STYLES, strlen(STYLES)},
                  {"xl/worksheets/s1.xml", s1, strlen(s1)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_book(parts, 5, &t, &err), err.msg);
  if (t) {
    CHECK_EQ_STR(t->text, "Sheet: One\n"
                          " | 1904-01-01 | -1.5 | 1904-01-02 12:00\n"
                          "rich runs | plain |  | spaced\n"
                          " |  | inline | 2026-12-07 | #N/A\n"
                          "1 | FALSE\n"
                          " |  |  |  | formula text\n");
    CHECK_EQ_INT(line_of(t, "rich runs"), 3);
    CHECK_EQ_INT(line_of(t, " |  | inline"), 5);
    CHECK_EQ_INT(line_of(t, " |  |  |  | formula"), 9);
  }
  dq_text_free(t);

  /* the 1900 system: serial 59 is 1900-02-28, 60 Excel's phantom
   * 1900-02-29, 61 1900-03-01; 45363.5 a date and noon; a negative
   * number in a date format stays a number; a style the table lacks is
   * none; the sheet's columns start at B (dimension), A's value is out,
   * as is a cell out of column order */
  static const char book2[] =
      "<workbook " S " " R "><sheets><sheet name=\"D\" sheetId=\"1\" "
      "r:id=\"rId1\"/></sheets></workbook>";
  static const char s2[] =
      "<worksheet " S "><dimension ref=\"B1:G1\"/><sheetData><row r=\"1\">"
      "<c r=\"A1\"><v>7</v></c><c r=\"B1\" s=\"1\"><v>59</v></c>"
      "<c r=\"C1\" s=\"1\"><v>60</v></c><c r=\"D1\" s=\"1\"><v>61</v></c>"
      "<c r=\"E1\" s=\"3\"><v>45363.5</v></c><c r=\"F1\" s=\"1\"><v>-3</v>"
      "</c><c r=\"G1\" s=\"7\"><v>0.1</v></c><c r=\"C1\"><v>8</v></c>"
      "</row></sheetData></worksheet>";
  part p2[] = {{"xl/workbook.xml", book2, strlen(book2)},
               {"xl/_rels/workbook.xml.rels", RELS_ONE, strlen(RELS_ONE)},
               {"xl/styles.xml", STYLES, strlen(STYLES)},
               {"xl/worksheets/s1.xml", s2, strlen(s2)}};
  CHECK_OK(read_book(p2, 4, &t, &err), err.msg);
  if (t)
    CHECK_EQ_STR(t->text, "Sheet: D\n"
                          "1900-02-28 | 1900-02-29 | 1900-03-01 | "
                          "2024-03-12 12:00 | -3 | 0.1\n");
  dq_text_free(t);

  /* a workbook part named by _rels/.rels; a sheet whose relationship
   * names no part is left out, as Excel does */
  static const char top[] =
      RELS "<Relationship Id=\"rId1\" Type=\"" T_REL
           "officeDocument\" Target=\"book/wb.xml\"/></Relationships>";
  static const char book3[] =
      "<workbook " S " " R "><sheets><sheet name=\"Gone\" sheetId=\"1\" "
      "r:id=\"\"/><sheet name=\"Kept\" sheetId=\"2\" r:id=\"rId1\"/>"
      "</sheets></workbook>";
  static const char rels3[] =
      RELS "<Relationship Id=\"rId1\" Type=\"" T_REL
           "worksheet\" Target=\"../book/ws/a.xml\"/></Relationships>";
  static const char s3[] = "<worksheet " S "><sheetData><row r=\"1\"><c "
                           "r=\"A1\" t=\"inlineStr\"><is><t>kept</t></is>"
                           "</c></row></sheetData></worksheet>";
  part p3[] = {{"_rels/.rels", top, strlen(top)},
               {"book/wb.xml", book3, strlen(book3)},
               {"book/_rels/wb.xml.rels", rels3, strlen(rels3)},
               {"book/ws/a.xml", s3, strlen(s3)}};
  CHECK_OK(read_book(p3, 4, &t, &err), err.msg);
  if (t) {
    CHECK_EQ_STR(t->text, "Sheet: Kept\nkept\n");
    CHECK_EQ_INT(page_of(t, "kept\n"), 2);
  }
  dq_text_free(t);
}

static void expect_refused(const part *parts, size_t n, const char *msg) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK(read_book(parts, n, &t, &err) != DQ_OK);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, msg) && strstr(err.msg, "b.xlsx"), "%s", err.msg);
}

static void test_refused(void) {
  static const char book[] =
      "<workbook " S " " R "><sheets><sheet name=\"A\" sheetId=\"1\" "
      "r:id=\"rId1\"/></sheets></workbook>";
  static const char bad[] = "<worksheet " S "><sheetData><row><c><v>1</v>"
                            "</row></sheetData></worksheet>";
  part p1[] = {{"xl/workbook.xml", book, strlen(book)},
               {"xl/_rels/workbook.xml.rels", RELS_ONE, strlen(RELS_ONE)},
               {"xl/worksheets/s1.xml", bad, strlen(bad)}};
  expect_refused(p1, 3, "malformed xl/worksheets/s1.xml near line 1");
  part p2[] = {{"xl/workbook.xml", book, strlen(book)},
               {"xl/_rels/workbook.xml.rels", RELS_ONE, strlen(RELS_ONE)}};
  expect_refused(p2, 2, "no xl/worksheets/s1.xml in the zip");
  part p3[] = {{"xl/_rels/workbook.xml.rels", RELS_ONE, strlen(RELS_ONE)}};
  expect_refused(p3, 1, "no xl/workbook.xml in the zip");
  /* an entity that expands to itself: refused, not followed */
  static const char loop[] =
      "<?xml version=\"1.0\"?><!DOCTYPE sst [<!ENTITY a \"&b;\">"
      "<!ENTITY b \"&a;\">]><sst " S "><si><t>&a;</t></si></sst>";
  part p4[] = {{"xl/workbook.xml", book, strlen(book)},
               {"xl/_rels/workbook.xml.rels", RELS_ONE, strlen(RELS_ONE)},
               {"xl/sst.xml", loop, strlen(loop)}};
  expect_refused(p4, 3, "malformed xl/sst.xml");
}

static void test_detect(void) {
  CHECK_EQ_INT(dq_detect_kind("b.xlsx", "PK\x03\x04", 4, NULL), DQ_DOC_XLSX);
  CHECK_EQ_INT(dq_detect_kind("M.XLSM", NULL, 0, NULL), DQ_DOC_XLSX);
  CHECK_EQ_STR(dq_doc_kind_name(DQ_DOC_XLSX), "xlsx");
}

/* Cell comments (notes): on their own lines after their row, at its
 * number, "[comment, Author, on B2] text"; on an empty row's cell between
 * the rows; on a sheet of no cells under its heading. notes.xlsx is
 * XlsxWriter's (make_xlsx.py). Built: Excel's author prefix and a threaded
 * comment's notice left out, its replies joined; a comment part that is
 * missing, or a comment off the sheet, skipped. */
static void test_comments(void) {
  dq_text *t = fixture("notes.xlsx");
  if (t) {
    CHECK_EQ_STR(t->text,
                 "Sheet: Budget\n"
                 "Item | Amount | Owner\n"
                 "[comment, Jane Doe, on B1] Amounts in EUR, excluding VAT.\n"
                 "Freight | 1450 | Ravi\n"
                 "[comment, Jane Doe, on B2] Adjusted for the fuel surcharge. "
                 "See the March invoice.\n"
                 "[comment, Tom Price, on C2] Ravi leaves in June.\n"
                 "Storage | 300 | Mei\n"
                 "[comment, Tom Price, on D4] Row 4 left empty on purpose.\n"
                 "Insurance | 95 | Ravi\n"
                 "Sheet: Notes\n"
                 "[comment, Jane Doe, on C7] Nothing here yet.\n");
    CHECK_EQ_INT(line_of(t, "[comment, Tom Price, on D4]"), 4);
    CHECK_EQ_INT(line_of(t, "[comment, Tom Price, on C2]"), 2);
    CHECK_EQ_INT(page_of(t, "[comment, Jane Doe, on C7]"), 2);
    CHECK_EQ_INT(line_of(t, "Sheet: Notes"), 7);
  }
  dq_text_free(t);

  static const char book[] =
      "<workbook " S " " R "><sheets><sheet name=\"One\" sheetId=\"1\" "
      "r:id=\"rId1\"/><sheet name=\"Two\" sheetId=\"2\" r:id=\"rId4\"/>"
      "</sheets></workbook>";
  static const char rels[] =
      RELS "<Relationship Id=\"rId1\" Type=\"" T_REL
           "worksheet\" Target=\"worksheets/s1.xml\"/><Relationship "
           "Id=\"rId4\" Type=\"" T_REL
           "worksheet\" Target=\"worksheets/s2.xml\"/></Relationships>";
  static const char s1[] =
      "<worksheet " S "><sheetData><row r=\"1\"><c r=\"A1\" "
      "t=\"inlineStr\"><is><t>Rate</t></is></c></row><row r=\"3\"><c "
      "r=\"A3\"><v>4.5</v></c></row></sheetData></worksheet>";
  static const char s1_rels[] =
      RELS "<Relationship Id=\"c\" Type=\"" T_REL
           "comments\" Target=\"../comments1.xml\"/></Relationships>";
  static const char comments[] =
      "<comments " S "><authors><author>Ann Lee</author>"
      "<author>tc={0AB}</author></authors><commentList>"
      /* Excel's bold "Ann Lee:" run before the text */
      "<comment ref=\"A3\" authorId=\"0\"><text><r><rPr><b/></rPr>"
      "<t>Ann Lee:</t></r><r><t xml:space=\"preserve\">\n"
      "Base rate plus 2.</t></r></text></comment>"
      /* a threaded comment's legacy text */
      "<comment ref=\"A1\" authorId=\"1\"><text><t>[Threaded comment]\n\n"
      "Your version of Excel allows you to read this threaded comment; "
      "however, any edits to it will get removed if the file is opened in a "
      "newer version of Excel.\n\nComment:\n    Which rate?\nReply:\n    "
      "The 2026 one.</t></text></comment>"
      /* off the sheet; an author id out of range; empty */
      "<comment ref=\"XFZ9\" authorId=\"0\"><text><t>off</t></text>"
      "</comment><comment ref=\"A2\" authorId=\"7\"><text><t>no "
      "author</t></text></comment><comment ref=\"B3\" authorId=\"0\">"
      "<text><t> </t></text></comment></commentList></comments>";
  static const char s2[] =
      "<worksheet " S "><sheetData><row r=\"2\"><c r=\"B2\"><v>1</v></c>"
      "</row></sheetData></worksheet>";
  static const char s2_rels[] =
      RELS "<Relationship Id=\"c\" Type=\"" T_REL
           "comments\" Target=\"../gone.xml\"/></Relationships>";
  part parts[] = {
      {"xl/workbook.xml", book, strlen(book)},
      {"xl/_rels/workbook.xml.rels", rels, strlen(rels)},
      {"xl/worksheets/s1.xml", s1, strlen(s1)},
      {"xl/worksheets/_rels/s1.xml.rels", s1_rels, strlen(s1_rels)},
      {"xl/comments1.xml", comments, strlen(comments)},
      {"xl/worksheets/s2.xml", s2, strlen(s2)},
      {"xl/worksheets/_rels/s2.xml.rels", s2_rels, strlen(s2_rels)}};
  dq_error err = {0};
  t = NULL;
  CHECK_OK(read_book(parts, 7, &t, &err), err.msg);
  if (t) {
    CHECK(text_invariants(t));
    CHECK_EQ_STR(t->text, "Sheet: One\n"
                          "Rate\n"
                          "[comment, on A1] Which rate? / The 2026 one.\n"
                          "[comment, on A2] no author\n"
                          "4.5\n"
                          "[comment, Ann Lee, on A3] Base rate plus 2.\n"
                          "Sheet: Two\n"
                          " | 1\n");
    CHECK_EQ_INT(line_of(t, "[comment, on A2]"), 2);
    dq_text_free(t);
  }
  /* a comments part that is not XML: an error naming it */
  static const char bad[] = "<comments " S "><commentList>";
  part p2[] = {{"xl/workbook.xml", book, strlen(book)},
               {"xl/_rels/workbook.xml.rels", rels, strlen(rels)},
               {"xl/worksheets/s1.xml", s1, strlen(s1)},
               {"xl/worksheets/_rels/s1.xml.rels", s1_rels, strlen(s1_rels)},
               {"xl/comments1.xml", bad, strlen(bad)},
               {"xl/worksheets/s2.xml", s2, strlen(s2)}};
  t = NULL;
  CHECK(read_book(p2, 6, &t, &err) != DQ_OK);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, "xl/comments1.xml"), "%s", err.msg);
}

int main(void) {
  test_comments();
  test_book();
  test_built();
  test_refused();
  test_detect();
  return TEST_EXIT();
}
