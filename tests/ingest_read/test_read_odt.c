/*
 * test_read_odt.c - the OpenDocument text reader: on LibreOffice's own ODT
 * files (fixtures/README.md), each read as LibreOffice's DOCX of the same
 * document reads (headings numbered by the outline style, footnotes and an
 * endnote, a table of contents, lists with their labels, nested, continued
 * and bulleted, a comment after its paragraph); and on archives built here: a
 * text box, a tracked deletion left out, an unnumbered heading, paragraph
 * numbers as lines; and refusals: not a zip, no content.xml, a spreadsheet.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

#define NS                                                                     \
  "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "         \
  "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" "             \
  "xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\" "           \
  "xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\" "           \
  "xmlns:draw=\"urn:oasis:names:tc:opendocument:xmlns:drawing:1.0\""

/* The ODT and the DOCX LibreOffice wrote of one document read alike. */
static void test_alike(void) {
  static const char *const docs[] = {"outline", "notes",    "toc",
                                     "lists",   "comments", "headers"};
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
    check_alike(docs[i], "odt", DQ_DOC_ODT, 0);
  dq_text *t = fixture("lists.odt");
  if (t)
    CHECK_EQ_STR(t->text, "The Tenant shall:\n"
                          "(a) pay the rent;\n"
                          "(b) keep the premises   in repair:\n"
                          "(i) inside;\n"
                          "(ii) outside;\n"
                          "and also shall:\n"
                          "[comment, Ann] check this\n"
                          "(c) insure the premises.\n"
                          "\xE2\x80\xA2 A bullet.\n");
  dq_text_free(t);
  t = fixture("comments.odt");
  if (t)
    CHECK_EQ_STR(t->text,
                 "Payment\n"
                 "The Customer pays each invoice within 30 days of receiving"
                 " it.\n"
                 "[comment, J\xC3\xBCrgen Gro\xC3\x9F, 2026-03-01, on \"30 "
                 "days\"] The client asks for 60 days. We could offer 45.\n"
                 "Late amounts bear interest at 8% a year.\n"
                 "[comment, Ann Lee, 2026-03-02] Statutory rate instead?\n"
                 "Set-up | 5,000 EUR\n"
                 "[comment, Ann Lee, 2026-03-02, on \"5,000 EUR\"] Waived in "
                 "the offer.\n"
                 "Either party may assign this Agreement.\n"
                 "[comment, J\xC3\xBCrgen Gro\xC3\x9F, 2026-03-03] Delete "
                 "this clause.\n");
  if (t)
    CHECK_EQ_INT(line_of(t, "Statutory"), 3);
  dq_text_free(t);
  t = fixture("box.odt");
  if (t)
    CHECK_EQ_STR(t->text, "Boxed note: rent is reviewed yearly. Before the "
                          "box.\nAfter the box.\n");
  dq_text_free(t);
}

static dq_status read_zip(const char *content, const char *styles, dq_text **t,
                          dq_error *err) {
  part parts[2] = {{"content.xml", content, content ? strlen(content) : 0},
                   {"styles.xml", styles, styles ? strlen(styles) : 0}};
  size_t n;
  char *zip = make_zip(content ? parts : parts + 1,
                       (content ? 1 : 0) + (styles ? 1 : 0), &n);
  dq_status st =
      dq_read_buffer("c.odt", zip, n, DQ_DOC_UNKNOWN, NULL, t, NULL, err);
  free(zip);
  return st;
}

static void test_built(void) {
  static const char *content =
      "<?xml version=\"1.0\"?><office:document-content " NS ">"
      "<office:body><office:text>"
      /* 1 */ "<text:h text:outline-level=\"1\">Scope</text:h>"
      /* 2 */ "<text:p>Kept<text:tracked-changes/> text.</text:p>"
      "<text:tracked-changes><text:changed-region><text:deletion><text:p>"
      "DELETED</text:p></text:deletion></text:changed-region>"
      "</text:tracked-changes>"
      /* 3 */ "<text:h text:outline-level=\"2\" text:is-list-header=\"true\">"
      "Unnumbered</text:h>"
      /* 4 */ "<text:h text:outline-level=\"2\">Terms</text:h>"
      "<table:table><table:table-header-rows><table:table-row>"
      /* 5, 6 */ "<table:table-cell><text:p>Fee</text:p></table:table-cell>"
      "<table:table-cell><text:p>100</text:p></table:table-cell>"
      "</table:table-row></table:table-header-rows><table:table-row>"
      /* 7, 8, 9: a list in a cell stays on the row's line */
      "<table:table-cell><text:list><text:list-item><text:p>one</text:p>"
      "</text:list-item><text:list-item><text:p>two</text:p></text:list-item>"
      "</text:list></table:table-cell><table:table-cell><text:p>x</text:p>"
      "</table:table-cell></table:table-row></table:table>"
      /* 10 */ "<text:section><text:p>In a<text:tab/>section<text:line-break/>"
      "broken</text:p></text:section>"
      "</office:text></office:body></office:document-content>";
  static const char *styles =
      "<?xml version=\"1.0\"?><office:document-styles " NS "><office:styles>"
      "<text:outline-style><text:outline-level-style text:level=\"1\" "
      "style:num-format=\"I\" style:num-prefix=\"Part \"/>"
      "<text:outline-level-style text:level=\"2\" style:num-format=\"1\" "
      "text:display-levels=\"2\"/></text:outline-style>"
      "</office:styles></office:document-styles>";
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_zip(content, styles, &t, &err), err.msg);
  if (!t)
    return;
  CHECK_EQ_STR(t->text, "Part I Scope\n"
                        "Kept text.\n"
                        "Unnumbered\n"
                        "I.1 Terms\n"
                        "Fee | 100\n"
                        "one two | x\n"
                        "In a\tsection\nbroken\n");
  static const head_want want[] = {{1, "Part I Scope", 0, 1},
                                   {2, "Unnumbered", 0, 3},
                                   {2, "I.1 Terms", 0, 4}};
  CHECK_HEADINGS(t, want);
  CHECK_EQ_INT(line_of(t, "Fee"), 5);
  CHECK_EQ_INT(line_of(t, "two"), 8);
  CHECK_EQ_INT(line_of(t, "broken"), 10);
  dq_text_free(t);
  /* without styles.xml: headings without numbers */
  CHECK_OK(read_zip(content, NULL, &t, &err), err.msg);
  if (t)
    CHECK(strncmp(t->text, "Scope\nKept text.\n", 17) == 0);
  dq_text_free(t);
}

/* Comments LibreOffice 7.4 does not write: a reply (loext:parent-name,
 * as later versions write it), a resolved thread, a comment whose end is
 * in the next paragraph (no quote; after the paragraph it starts in, where
 * it is anchored), a comment in a note (its note's text only), an empty
 * one. */
static void test_comments(void) {
  static const char *content =
      "<?xml version=\"1.0\"?><office:document-content " NS
      " xmlns:dc=\"http://purl.org/dc/elements/1.1/\""
      " xmlns:loext=\"urn:org:documentfoundation:names:experimental:office:"
      "xmlns:loext:1.0\"><office:body><office:text>"
      /* 1 */ "<text:p>Rent <office:annotation office:name=\"a\" "
      "loext:resolved=\"true\"><dc:creator>Ann</dc:creator><text:p>Too "
      "high.</text:p></office:annotation>is 900<office:annotation-end "
      "office:name=\"a\"/><office:annotation loext:parent-name=\"a\">"
      "<dc:creator>Bo</dc:creator><dc:date>2026-04-01T08:00:00</dc:date>"
      "<text:p>Agreed, 800.</text:p></office:annotation> a month.</text:p>"
      /* 2, 3 */ "<text:p>Across <office:annotation office:name=\"x\">"
      "<text:p>Two lines.</text:p></office:annotation>here</text:p>"
      "<text:p>and there<office:annotation-end office:name=\"x\"/>.</text:p>"
      /* 4 */ "<text:p>Noted<text:note><text:note-citation>1</"
              "text:note-citation>"
      "<text:note-body><text:p>A note<office:annotation><text:p>inner"
      "</text:p></office:annotation>.</text:p></text:note-body></text:note>"
      "<office:annotation><dc:creator>Cy</dc:creator></office:annotation>"
      ".</text:p>"
      "</office:text></office:body></office:document-content>";
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_zip(content, NULL, &t, &err), err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_STR(t->text, "Rent is 900 a month.\n"
                        "[comment, Ann, resolved, on \"is 900\"] Too high.\n"
                        "[reply, Bo, 2026-04-01] Agreed, 800.\n"
                        "Across here\n"
                        "[comment] Two lines.\n"
                        "and there.\n"
                        "Noted[1].\n"
                        "[1] A note.\n"
                        "[comment, Cy]\n");
  CHECK_EQ_INT(line_of(t, "Agreed"), 1);
  CHECK_EQ_INT(line_of(t, "Two lines"), 2); /* where it is anchored */
  dq_text_free(t);
}

static void test_refusals(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_EQ_INT(dq_read_buffer("x.odt", "not a zip", 9, DQ_DOC_UNKNOWN, NULL, &t,
                              NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "x.odt") && strstr(err.msg, "not an ODT file") &&
                strstr(err.msg, "zip"),
            "%s", err.msg);
  CHECK_EQ_INT(read_zip(NULL, "<x/>", &t, &err), DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "content.xml"), "%s", err.msg);
  CHECK_EQ_INT(read_zip("<?xml version=\"1.0\"?><office:document-content " NS
                        "><office:body><office:spreadsheet/></office:body>"
                        "</office:document-content>",
                        NULL, &t, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "not a text document"), "%s", err.msg);
  CHECK_EQ_INT(read_zip("<office:document-content", NULL, &t, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "c.odt") && strstr(err.msg, "content.xml"), "%s",
            err.msg);
  CHECK(t == NULL);
}

/* Page headers and footers of styles.xml's master pages: after the body
 * under their heading, each line once; a page number's and count's value
 * left out (the words around it kept), a header's table row, a heading
 * in a header no section; none with text: no heading. */
static void test_headers(void) {
  static const char content[] =
      "<office:document-content " NS "><office:body><office:text>"
      "<text:p>Body.</text:p></office:text></office:body>"
      "</office:document-content>";
  static const char styles[] =
      "<office:document-styles " NS "><office:master-styles>"
      "<style:master-page style:name=\"Standard\"><style:header>"
      "<text:h text:outline-level=\"1\">Acme Ltd</text:h>"
      "<table:table><table:table-row><table:table-cell><text:p>Ref 7"
      "</text:p></table:table-cell><table:table-cell><text:p>v2</text:p>"
      "</table:table-cell></table:table-row></table:table></style:header>"
      "<style:header-first><text:p>Acme Ltd</text:p></style:header-first>"
      "<style:footer><text:p>Sheet <text:page-number>5</text:page-number> "
      "of the draft, <text:page-count>9</text:page-count> in all</text:p>"
      "</style:footer></style:master-page>"
      "<style:master-page style:name=\"Other\"><style:footer-left><text:p>"
      "Page <text:page-number>2</text:page-number></text:p>"
      "</style:footer-left></style:master-page>"
      "</office:master-styles></office:document-styles>";
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_zip(content, styles, &t, &err), err.msg);
  if (t) {
    CHECK(text_invariants(t));
    CHECK_EQ_STR(t->text, "Body.\n"
                          "Headers and footers\n"
                          "[header] Acme Ltd\n"
                          "[header] Ref 7 | v2\n"
                          "[footer] Sheet  of the draft,  in all\n");
    static const head_want want[] = {{1, "Headers and footers", 0, 2}};
    CHECK_HEADINGS(t, want);
    dq_text_free(t);
  }
  static const char none[] =
      "<office:document-styles " NS "><office:master-styles>"
      "<style:master-page style:name=\"Standard\"><style:footer><text:p>"
      "<text:page-number>1</text:page-number></text:p></style:footer>"
      "</style:master-page></office:master-styles></office:document-styles>";
  t = NULL;
  CHECK_OK(read_zip(content, none, &t, &err), err.msg);
  if (t) {
    CHECK_EQ_STR(t->text, "Body.\n");
    CHECK_EQ_INT(t->n_headings, 0);
    dq_text_free(t);
  }
}

int main(void) {
  test_headers();
  test_alike();
  test_built();
  test_comments();
  test_refusals();
  return TEST_EXIT();
}
