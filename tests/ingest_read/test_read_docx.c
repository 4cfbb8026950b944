/*
 * test_read_docx.c - the DOCX reader on archives built here with libzip:
 * paragraphs, headings by style id / style name, list numbering from
 * numbering.xml, tables as " | " rows, deleted text left out, paragraph
 * numbers as lines; and refusals: not a zip, no document part, malformed
 * XML, a zip bomb (ratio), a part over the size limit. Expected text was
 * written by hand from the XML below.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

#include <time.h>

#define W "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\""

static const char *DOC =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<w:document " W "><w:body>"
    /* 1 */ "<w:p><w:pPr><w:pStyle w:val=\"Title\"/></w:pPr>"
    "<w:r><w:t>Agreement Title</w:t></w:r></w:p>"
    /* 2 */ "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr>"
    "<w:r><w:t>Definitions</w:t></w:r></w:p>"
    /* 3 */ "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"1\"/>"
    "</w:numPr></w:pPr><w:r><w:t>First item</w:t></w:r></w:p>"
    /* 4 */ "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"1\"/>"
    "</w:numPr></w:pPr><w:r><w:t>Second item</w:t></w:r></w:p>"
    /* 5 */ "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"1\"/><w:numId w:val=\"1\"/>"
    "</w:numPr></w:pPr><w:r><w:t>Sub item</w:t></w:r></w:p>"
    /* 6 */ "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"1\"/><w:numId w:val=\"1\"/>"
    "</w:numPr></w:pPr><w:r><w:t>Sub two</w:t></w:r></w:p>"
    /* 7 */ "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"1\"/>"
    "</w:numPr></w:pPr><w:r><w:t>Third item</w:t></w:r></w:p>"
    /* 8 */ "<w:p/>"
    "<w:tbl><w:tr>"
    /* 9, 10 */ "<w:tc><w:p><w:r><w:t>Name</w:t></w:r></w:p></w:tc>"
    "<w:tc><w:p><w:r><w:t>Value</w:t></w:r></w:p></w:tc></w:tr><w:tr>"
    /* 11, 12, 13 */ "<w:tc><w:p><w:r><w:t>Fee</w:t></w:r></w:p></w:tc>"
    "<w:tc><w:p><w:r><w:t>100</w:t></w:r></w:p>"
    "<w:p><w:r><w:t>EUR</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
    /* 14 */ "<w:p><w:pPr><w:pStyle w:val=\"Ueberschrift2\"/></w:pPr>"
    "<w:r><w:t>Scope</w:t></w:r></w:p>"
    /* 15 */ "<w:p><w:r><w:t xml:space=\"preserve\">Run one</w:t></w:r>"
    "<w:r><w:t xml:space=\"preserve\"> "
    "non</w:t><w:noBreakHyphen/><w:t>stop</w:t>"
    "</w:r>"
    "<w:r><w:tab/><w:t>two</w:t></w:r>"
    "<w:del><w:r><w:delText>DELETED</w:delText></w:r></w:del>"
    "<w:ins><w:r><w:t> inserted</w:t></w:r></w:ins></w:p>"
    /* 16 */ "<w:sdt><w:sdtContent><w:p><w:r><w:t>In control</w:t></w:r>"
    "</w:p></w:sdtContent></w:sdt>"
    "<w:sectPr/></w:body></w:document>";

static const char *STYLES =
    "<?xml version=\"1.0\"?><w:styles " W ">"
    "<w:style w:type=\"paragraph\" w:styleId=\"Title\"><w:name w:val=\"Title\"/>"
    "</w:style>"
    "<w:style w:type=\"paragraph\" w:styleId=\"Heading1\">"
    "<w:name w:val=\"heading 1\"/></w:style>"
    "<w:style w:type=\"paragraph\" w:styleId=\"Ueberschrift2\">"
    "<w:name w:val=\"heading 2\"/></w:style>"
    "<w:style w:type=\"paragraph\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/>"
    "</w:style></w:styles>";

static const char *NUMBERING =
    "<?xml version=\"1.0\"?><w:numbering " W ">"
    "<w:abstractNum w:abstractNumId=\"7\">"
    "<w:lvl w:ilvl=\"0\"><w:start w:val=\"1\"/><w:numFmt w:val=\"decimal\"/>"
    "<w:lvlText w:val=\"%1.\"/></w:lvl>"
    "<w:lvl w:ilvl=\"1\"><w:start w:val=\"1\"/><w:numFmt w:val=\"lowerLetter\"/>"
    "<w:lvlText w:val=\"(%2)\"/></w:lvl></w:abstractNum>"
    "<w:num w:numId=\"1\"><w:abstractNumId w:val=\"7\"/></w:num>"
    "</w:numbering>";

static dq_status read_zip(const part *parts, size_t n_parts,
                          const dq_read_opts *o, dq_text **t, dq_error *err) {
  size_t n;
  char *zip = make_zip(parts, n_parts, &n);
  dq_status st = dq_read_buffer("c.docx", zip, n, DQ_DOC_UNKNOWN, o, t, NULL,
                                err);
  free(zip);
  return st;
}

static void test_document(void) {
  part parts[] = {{"word/document.xml", DOC, strlen(DOC)},
                  {"word/styles.xml", STYLES, strlen(STYLES)},
                  {"word/numbering.xml", NUMBERING, strlen(NUMBERING)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_zip(parts, 3, NULL, &t, &err), err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_INT(t->kind, DQ_DOC_DOCX);
  CHECK_EQ_STR(t->text, "Agreement Title\n"
                        "Definitions\n"
                        "1. First item\n"
                        "2. Second item\n"
                        "(a) Sub item\n"
                        "(b) Sub two\n"
                        "3. Third item\n"
                        "Name | Value\n"
                        "Fee | 100 EUR\n"
                        "Scope\n"
                        "Run one non-stop\ttwo inserted\n"
                        "In control\n");
  CHECK_EQ_INT(line_of(t, "Definitions"), 2);
  CHECK_EQ_INT(line_of(t, "(b) Sub two"), 6);
  CHECK_EQ_INT(line_of(t, "Name"), 9);
  CHECK_EQ_INT(line_of(t, "Fee"), 11);
  CHECK_EQ_INT(line_of(t, "Scope"), 14);
  CHECK_EQ_INT(line_of(t, "Run one"), 15);
  CHECK_EQ_INT(line_of(t, "In control"), 16);
  CHECK_EQ_INT(t->n_headings, 3);
  if (t->n_headings == 3) {
    CHECK_EQ_STR(t->headings[0].title, "Agreement Title");
    CHECK_EQ_INT(t->headings[0].level, 1);
    CHECK_EQ_STR(t->headings[1].title, "Definitions");
    CHECK_EQ_INT(t->headings[1].level, 1);
    CHECK_EQ_INT(t->headings[1].offset, (size_t)find_in(t, "Definitions"));
    CHECK_EQ_STR(t->headings[2].title, "Scope");
    CHECK_EQ_INT(t->headings[2].level, 2);
  }
  dq_text_free(t);

  /* without styles.xml and numbering.xml: ids "Heading1"/"Title" still make
   * headings, lists keep order with "1." labels */
  CHECK_OK(read_zip(parts, 1, NULL, &t, &err), err.msg);
  if (t) {
    CHECK_EQ_INT(t->n_headings, 2);
    CHECK(find_in(t, "Sub item") >= 0);
  }
  dq_text_free(t);
}

/* A legal template numbers its headings through their styles: Heading1
 * and Heading2 carry the list without an ilvl (the level is the one whose
 * w:pStyle names the style), a style based on Heading2 inherits it, and a
 * paragraph's numId 0 turns it off. */
static void test_style_numbering(void) {
  static const char *doc =
      "<?xml version=\"1.0\"?><w:document " W "><w:body>"
      "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr>"
      "<w:r><w:t>Definitions</w:t></w:r></w:p>"
      "<w:p><w:pPr><w:pStyle w:val=\"Heading2\"/></w:pPr>"
      "<w:r><w:t>Terms</w:t></w:r></w:p>"
      "<w:p><w:r><w:t>Plain text.</w:t></w:r></w:p>"
      "<w:p><w:pPr><w:pStyle w:val=\"Clause\"/></w:pPr>"
      "<w:r><w:t>More terms</w:t></w:r></w:p>"
      "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr>"
      "<w:r><w:t>Payment</w:t></w:r></w:p>"
      "<w:p><w:pPr><w:pStyle w:val=\"Heading2\"/></w:pPr>"
      "<w:r><w:t>Fees</w:t></w:r></w:p>"
      "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/><w:numPr><w:numId"
      " w:val=\"0\"/></w:numPr></w:pPr><w:r><w:t>Schedule</w:t></w:r></w:p>"
      "</w:body></w:document>";
  static const char *styles =
      "<?xml version=\"1.0\"?><w:styles " W ">"
      "<w:style w:type=\"paragraph\" w:styleId=\"Heading1\">"
      "<w:name w:val=\"heading 1\"/><w:pPr><w:numPr><w:numId w:val=\"3\"/>"
      "</w:numPr></w:pPr></w:style>"
      "<w:style w:type=\"paragraph\" w:styleId=\"Heading2\">"
      "<w:name w:val=\"heading 2\"/><w:pPr><w:numPr><w:numId w:val=\"3\"/>"
      "</w:numPr></w:pPr></w:style>"
      "<w:style w:type=\"paragraph\" w:styleId=\"Clause\">"
      "<w:name w:val=\"Clause\"/><w:basedOn w:val=\"Heading2\"/></w:style>"
      "</w:styles>";
  static const char *numbering =
      "<?xml version=\"1.0\"?><w:numbering " W ">"
      "<w:abstractNum w:abstractNumId=\"0\">"
      "<w:lvl w:ilvl=\"0\"><w:start w:val=\"1\"/><w:pStyle"
      " w:val=\"Heading1\"/><w:lvlText w:val=\"%1.\"/></w:lvl>"
      "<w:lvl w:ilvl=\"1\"><w:start w:val=\"1\"/><w:pStyle"
      " w:val=\"Heading2\"/><w:lvlText w:val=\"%1.%2\"/></w:lvl>"
      "</w:abstractNum><w:num w:numId=\"3\"><w:abstractNumId w:val=\"0\"/>"
      "</w:num></w:numbering>";
  part parts[] = {{"word/document.xml", doc, strlen(doc)},
                  {"word/styles.xml", styles, strlen(styles)},
                  {"word/numbering.xml", numbering, strlen(numbering)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_zip(parts, 3, NULL, &t, &err), err.msg);
  if (!t)
    return;
  CHECK_EQ_STR(t->text, "1. Definitions\n"
                        "1.1 Terms\n"
                        "Plain text.\n"
                        "1.2 More terms\n"
                        "2. Payment\n"
                        "2.1 Fees\n"
                        "Schedule\n");
  static const head_want want[] = {{1, "1. Definitions", 0, 1},
                                   {2, "1.1 Terms", 0, 2},
                                   {1, "2. Payment", 0, 5},
                                   {2, "2.1 Fees", 0, 6},
                                   {1, "Schedule", 0, 7}};
  CHECK_HEADINGS(t, want);
  dq_text_free(t);
}

/* LibreOffice's own DOCX files (fixtures/README.md): heading styles that
 * carry the outline numbering; footnotes and an endnote; a text box, which
 * the file holds twice (mc:Choice and mc:Fallback); a contents field,
 * whose entries "1. Definitions\t1" are the shape search's
 * dq_listing_text counts. */
static void test_libreoffice(void) {
  dq_text *t = fixture("outline.docx");
  static const head_want want[] = {{1, "1. Definitions", 0, 1},
                                   {2, "1.1 Interpretation", 0, 3},
                                   {1, "2. Licence", 0, 5},
                                   {2, "2.1 Grant", 0, 6},
                                   {2, "2.2 Restrictions", 0, 8}};
  if (t) {
    CHECK_HEADINGS(t, want);
    CHECK(find_in(t, "In this Agreement") > find_in(t, "1. Definitions\n"));
  }
  dq_text_free(t);
  t = fixture("notes.docx");
  if (t)
    CHECK_EQ_STR(t->text,
                 "The Tenant pays the rent monthly[1] by bank transfer.\n"
                 "[1] Payable in advance on the first day of each month.\n"
                 "The deposit is held by the Landlord[i].\n"
                 "[i] In a protected account at Harbour Bank.\n"
                 "Service charge | GBP 1,200[2]\n"
                 "[2] Excluding VAT.\n"
                 "Last paragraph.\n");
  dq_text_free(t);
  t = fixture("box.docx");
  if (t)
    CHECK_EQ_STR(t->text,
                 "Before the box. Boxed note: rent is reviewed yearly.\n"
                 "After the box.\n");
  dq_text_free(t);
  t = fixture("toc.docx");
  const char *toc = "Contents\n1. Definitions\t1\n2. Licence\t1\n3. Fees\t2\n";
  if (t) {
    CHECK(strncmp(t->text, toc, strlen(toc)) == 0);
    CHECK(find_in(t, "1. Definitions\nThe \"Software\"") > 0);
  }
  CHECK(dq_listing_text(toc, strlen(toc)));
  dq_text_free(t);
}

/* Footnotes and endnotes: the reference reads "[1]" ("[i]" for an
 * endnote), the note's text follows on its own line after the paragraph
 * (a table's row) with that paragraph's number; separators are no notes;
 * moved-away text is left out, moved-in text kept. */
static void test_notes(void) {
  static const char *doc =
      "<?xml version=\"1.0\"?><w:document " W "><w:body>"
      "<w:p><w:r><w:t>The fee is due monthly</w:t></w:r><w:r><w:rPr>"
      "<w:rStyle w:val=\"FootnoteReference\"/></w:rPr><w:footnoteReference"
      " w:id=\"2\"/></w:r><w:r><w:t>. More text.</w:t></w:r></w:p>"
      "<w:p><w:r><w:t>See the annex</w:t></w:r><w:r><w:endnoteReference"
      " w:id=\"1\"/></w:r><w:r><w:t>.</w:t></w:r></w:p>"
      "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Name</w:t></w:r></w:p></w:tc>"
      "<w:tc><w:p><w:r><w:t>Fee</w:t></w:r><w:r><w:footnoteReference"
      " w:id=\"3\"/></w:r></w:p></w:tc></w:tr></w:tbl>"
      "<w:p><w:moveFrom w:id=\"9\"><w:r><w:t>Moved away.</w:t></w:r>"
      "</w:moveFrom><w:moveTo w:id=\"10\"><w:r><w:t>Moved here.</w:t></w:r>"
      "</w:moveTo></w:p></w:body></w:document>";
  static const char *foot =
      "<?xml version=\"1.0\"?><w:footnotes " W ">"
      "<w:footnote w:type=\"separator\" w:id=\"-1\"><w:p><w:r><w:separator/>"
      "</w:r></w:p></w:footnote>"
      "<w:footnote w:type=\"continuationSeparator\" w:id=\"0\"><w:p><w:r>"
      "<w:t>rule</w:t></w:r></w:p></w:footnote>"
      "<w:footnote w:id=\"3\"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t"
      " xml:space=\"preserve\"> Excluding VAT.</w:t></w:r></w:p></w:footnote>"
      "<w:footnote w:id=\"2\"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t>"
      "Payable in advance.</w:t></w:r></w:p><w:p><w:r><w:t>By transfer."
      "</w:t></w:r></w:p></w:footnote></w:footnotes>";
  static const char *end =
      "<?xml version=\"1.0\"?><w:endnotes " W ">"
      "<w:endnote w:id=\"1\"><w:p><w:r><w:endnoteRef/></w:r><w:r><w:t>"
      "Annex A is attached.</w:t></w:r></w:p></w:endnote></w:endnotes>";
  part parts[] = {{"word/document.xml", doc, strlen(doc)},
                  {"word/footnotes.xml", foot, strlen(foot)},
                  {"word/endnotes.xml", end, strlen(end)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_zip(parts, 3, NULL, &t, &err), err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_STR(t->text, "The fee is due monthly[1]. More text.\n"
                        "[1] Payable in advance. By transfer.\n"
                        "See the annex[i].\n"
                        "[i] Annex A is attached.\n"
                        "Name | Fee[2]\n"
                        "[2] Excluding VAT.\n"
                        "Moved here.\n");
  CHECK_EQ_INT(line_of(t, "Payable"), 1);
  CHECK_EQ_INT(line_of(t, "Annex A"), 2);
  CHECK_EQ_INT(line_of(t, "Excluding"), 4);
  CHECK_EQ_INT(line_of(t, "Moved here"), 5);
  dq_text_free(t);
}

/* Reviewers' comments, as Word writes them: each on a line of its own
 * after the paragraph (a table's row) it is anchored in, with that
 * paragraph's number and no mark in the text; the text the comment marks
 * quoted when it is part of one paragraph (cut at a word past 60 bytes,
 * an author past 64);
 * replies and resolved threads from commentsExtended.xml by paraId; a
 * reference to a comment that does not exist, a range over two
 * paragraphs and an over-long author are handled. */
static void test_comments(void) {
#define W14                                                                    \
  " xmlns:w14=\"http://schemas.microsoft.com/office/word/2010/wordml\""
  static const char *doc =
      "<?xml version=\"1.0\"?><w:document " W "><w:body>"
      /* 1: the whole paragraph, answered, resolved */
      "<w:p><w:commentRangeStart w:id=\"0\"/><w:commentRangeStart "
      "w:id=\"1\"/><w:r><w:t>The Supplier shall indemnify the Customer."
      "</w:t></w:r><w:commentRangeEnd w:id=\"0\"/><w:r><w:commentReference"
      " w:id=\"0\"/></w:r><w:commentRangeEnd w:id=\"1\"/><w:r>"
      "<w:commentReference w:id=\"1\"/></w:r></w:p>"
      /* 2: part of it, a comment of two paragraphs */
      "<w:p><w:r><w:t xml:space=\"preserve\">Fees are due within </w:t>"
      "</w:r><w:commentRangeStart w:id=\"2\"/><w:r><w:t>30 days</w:t></w:r>"
      "<w:commentRangeEnd w:id=\"2\"/><w:r><w:commentReference w:id=\"2\"/>"
      "</w:r><w:r><w:t xml:space=\"preserve\"> of invoice.</w:t></w:r></w:p>"
      /* 3: a row, one cell marked; a reference to no comment */
      "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Fee</w:t></w:r></w:p></w:tc>"
      "<w:tc><w:p><w:commentRangeStart w:id=\"3\"/><w:r><w:t>100</w:t>"
      "</w:r><w:commentRangeEnd w:id=\"3\"/><w:r><w:commentReference "
      "w:id=\"3\"/><w:commentReference w:id=\"77\"/></w:r></w:p></w:tc>"
      "</w:tr></w:tbl>"
      /* 4, 5: a range over two paragraphs */
      "<w:p><w:commentRangeStart w:id=\"4\"/><w:r><w:t>First half.</w:t>"
      "</w:r></w:p><w:p><w:r><w:t>Second half.</w:t></w:r>"
      "<w:commentRangeEnd w:id=\"4\"/><w:r><w:commentReference w:id=\"4\"/>"
      "</w:r></w:p>"
      /* 6: a long quote */
      "<w:p><w:r><w:t xml:space=\"preserve\">Term: </w:t></w:r>"
      "<w:commentRangeStart w:id=\"5\"/><w:r><w:t>this Agreement continues"
      " for five years and renews each year unless a party ends it in "
      "writing</w:t></w:r><w:commentRangeEnd w:id=\"5\"/><w:r>"
      "<w:commentReference w:id=\"5\"/></w:r><w:r><w:t>.</w:t></w:r></w:p>"
      /* 7: all of a numbered paragraph's text */
      "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"5\"/>"
      "</w:numPr></w:pPr><w:commentRangeStart w:id=\"6\"/><w:r><w:t>"
      "Numbered.</w:t></w:r><w:commentRangeEnd w:id=\"6\"/><w:r>"
      "<w:commentReference w:id=\"6\"/></w:r></w:p>"
      /* 8: a long quote without blanks, cut between characters */
      "<w:p><w:r><w:t xml:space=\"preserve\">Name: </w:t></w:r>"
      "<w:commentRangeStart "
      "w:id=\"7\"/"
      "><w:r><w:t>"
      "a\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC</w:t></w:r>"
      "<w:commentRangeEnd w:id=\"7\"/><w:r><w:commentReference w:id=\"7\"/>"
      "</w:r><w:r><w:t xml:space=\"preserve\"> end.</w:t></w:r></w:p>"
      "</w:body></w:document>";
  static const char *comments =
      "<?xml version=\"1.0\"?><w:comments " W W14 ">"
      "<w:comment w:id=\"0\" w:author=\"Jane Doe\" w:initials=\"JD\" "
      "w:date=\"2026-03-01T10:00:00Z\"><w:p w14:paraId=\"0A000001\"><w:r>"
      "<w:annotationRef/></w:r><w:r><w:t>We cannot accept an uncapped "
      "indemnity.</w:t></w:r></w:p></w:comment>"
      "<w:comment w:id=\"1\" w:author=\"John Roe\" w:date=\"2026-03-02T09:"
      "00:00Z\"><w:p w14:paraId=\"0A000002\"><w:r><w:annotationRef/></w:r>"
      "<w:r><w:t>Capped at the fees paid.</w:t></w:r></w:p></w:comment>"
      "<w:comment w:id=\"2\" w:author=\"John Roe\" w:date=\"soon\">"
      "<w:p><w:r><w:t>Client asks for 60 days.</w:t></w:r></w:p>"
      "<w:p w14:paraId=\"0A000003\"><w:r><w:t>Or 45.</w:t></w:r></w:p>"
      "</w:comment>"
      "<w:comment w:id=\"3\"><w:p><w:r><w:t>Plus VAT?</w:t></w:r></w:p>"
      "</w:comment>"
      "<w:comment w:id=\"4\" w:author=\"Legal Department of the Customer "
      "Group, Contracts and Compliance Office\"><w:p><w:r><w:t>Merge these."
      "</w:t></w:r></w:p></w:comment>"
      "<w:comment w:id=\"5\" w:author=\"JD\"><w:p><w:r><w:t>Too long."
      "</w:t></w:r></w:p></w:comment>"
      "<w:comment w:id=\"6\"><w:p><w:r><w:t>Whole.</w:t></w:r></w:p>"
      "</w:comment>"
      "<w:comment w:id=\"7\"><w:p><w:r><w:t>Umlauts.</w:t></w:r></w:p>"
      "</w:comment></w:comments>";
  static const char *ext =
      "<?xml version=\"1.0\"?><w15:commentsEx xmlns:w15=\"http://schemas."
      "microsoft.com/office/word/2012/wordml\">"
      "<w15:commentEx w15:paraId=\"0A000001\" w15:done=\"1\"/>"
      "<w15:commentEx w15:paraId=\"0A000002\" w15:paraIdParent=\"0A000001\""
      " w15:done=\"0\"/>"
      "<w15:commentEx w15:paraId=\"0A000003\" w15:done=\"0\"/>"
      "</w15:commentsEx>";
  part parts[] = {{"word/document.xml", doc, strlen(doc)},
                  {"word/comments.xml", comments, strlen(comments)},
                  {"word/commentsExtended.xml", ext, strlen(ext)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_zip(parts, 3, NULL, &t, &err), err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_STR(
      t->text,
      "The Supplier shall indemnify the Customer.\n"
      "[comment, Jane Doe, 2026-03-01, resolved] We cannot accept an "
      "uncapped indemnity.\n"
      "[reply, John Roe, 2026-03-02] Capped at the fees paid.\n"
      "Fees are due within 30 days of invoice.\n"
      "[comment, John Roe, on \"30 days\"] Client asks for 60 days. Or 45.\n"
      "Fee | 100\n"
      "[comment, on \"100\"] Plus VAT?\n"
      "First half.\n"
      "Second half.\n"
      "[comment, Legal Department of the Customer Group, Contracts and "
      "Compliance...] "
      "Merge these.\n"
      "Term: this Agreement continues for five years and renews each year "
      "unless a party ends it in writing.\n"
      "[comment, JD, on \"this Agreement continues for five years and renews"
      " each year...\"] Too long.\n"
      "1. Numbered.\n"
      "[comment] Whole.\n"
      "Name: "
      "a\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC end.\n"
      "[comment, on "
      "\"a\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC\xC3"
      "\xBC\xC3\xBC\xC3\xBC...\"] Umlauts.\n");
  CHECK_EQ_INT(line_of(t, "We cannot"), 1);
  CHECK_EQ_INT(line_of(t, "Capped at"), 1);
  CHECK_EQ_INT(line_of(t, "Client asks"), 2);
  CHECK_EQ_INT(line_of(t, "Plus VAT"), 4); /* the row's last paragraph */
  CHECK_EQ_INT(line_of(t, "Merge these"), 6);
  CHECK_EQ_INT(line_of(t, "Too long"), 7);
  dq_text_free(t);

  /* without comments.xml the references are no text */
  CHECK_OK(read_zip(parts, 1, NULL, &t, &err), err.msg);
  if (t)
    CHECK(!strstr(t->text, "[comment") && strstr(t->text, "30 days of"));
  dq_text_free(t);
#undef W14
}

static void test_refusals(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  /* not a zip */
  CHECK_EQ_INT(dq_read_buffer("fake.docx", "hello world", 11, DQ_DOC_UNKNOWN,
                              NULL, &t, NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "fake.docx") && strstr(err.msg, "not a DOCX"),
            "%s", err.msg);
  /* a zip without word/document.xml */
  part other[] = {{"hello.txt", "hi", 2}};
  CHECK_EQ_INT(read_zip(other, 1, NULL, &t, &err), DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "word/document.xml") != NULL, "%s", err.msg);
  /* malformed document.xml */
  const char *bad = "<w:document " W "><w:body><w:p></w:body></w:document>";
  part malformed[] = {{"word/document.xml", bad, strlen(bad)}};
  CHECK_EQ_INT(read_zip(malformed, 1, NULL, &t, &err), DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "word/document.xml") && strstr(err.msg, "line"),
            "%s", err.msg);

  /* zip bomb: 16 MiB of zeros deflate about 1000:1 */
  size_t n_zero = (size_t)16 << 20;
  char *zeros = calloc(1, n_zero);
  part bomb[] = {{"word/document.xml", zeros, n_zero}};
  clock_t c0 = clock();
  CHECK_EQ_INT(read_zip(bomb, 1, NULL, &t, &err), DQ_ERR_LIMIT);
  CHECK_MSG(strstr(err.msg, "zip bomb") && strstr(err.msg, "c.docx"), "%s",
            err.msg);
  /* the same part over a configured size limit is refused by size first */
  dq_read_opts o = {.max_part_bytes = 1 << 20};
  CHECK_EQ_INT(read_zip(bomb, 1, &o, &t, &err), DQ_ERR_LIMIT);
  CHECK_MSG(strstr(err.msg, "over the limit of 1048576"), "%s", err.msg);
  /* a raised ratio limit lets the size through to the XML parser */
  o = (dq_read_opts){.max_zip_ratio = 100000};
  CHECK_EQ_INT(read_zip(bomb, 1, &o, &t, &err), DQ_ERR_FORMAT);
  /* a part that inflates to more than its headers declare: 200 KB of
   * "a" with both size fields (local header offset 22, central directory
   * offset 24, per APPNOTE 4.3.7 / 4.3.12) patched down to 1000 bytes */
  size_t n_a = 200000;
  char *as = malloc(n_a);
  memset(as, 'a', n_a);
  part liar[] = {{"word/document.xml", as, n_a}};
  size_t n_zip;
  unsigned char *zip = (unsigned char *)make_zip(liar, 1, &n_zip);
  int patched = 0;
  for (size_t i = 0; i + 28 < n_zip; i++) {
    size_t at = 0;
    if (memcmp(zip + i, "PK\x03\x04", 4) == 0)
      at = i + 22;
    else if (memcmp(zip + i, "PK\x01\x02", 4) == 0)
      at = i + 24;
    if (at) {
      CHECK(zip[at] == (n_a & 0xFF) && zip[at + 1] == ((n_a >> 8) & 0xFF));
      zip[at] = 1000 & 0xFF;
      zip[at + 1] = 1000 >> 8;
      zip[at + 2] = zip[at + 3] = 0;
      patched++;
    }
  }
  CHECK_EQ_INT(patched, 2);
  dq_status st = dq_read_buffer("liar.docx", zip, n_zip, DQ_DOC_DOCX, NULL, &t,
                                NULL, &err);
  CHECK_MSG(st == DQ_ERR_CORRUPT, "status %d: %s", st, err.msg);
  CHECK_MSG(strstr(err.msg, "liar.docx") != NULL, "%s", err.msg);
  fprintf(stderr, "lying header: %s\n", err.msg);
  free(zip);
  free(as);
  fprintf(stderr, "zip bomb cases: %.2f s\n",
          (double)(clock() - c0) / CLOCKS_PER_SEC);
  free(zeros);
  CHECK(t == NULL);
}

/* Page headers and footers: after the body under their heading, each
 * line once, "[header] " or "[footer] " before it; a page number's field
 * (complex or simple) and the words it leaves ("Page of") dropped; a
 * header's table row; a relationship to a part the zip lacks, or above it,
 * skipped. headers.docx is LibreOffice's from our headers.fodt: two page
 * styles (the second for the schedule), a PAGE and a NUMPAGES field. */
static void test_headers(void) {
  dq_text *t = fixture("headers.docx");
  if (t) {
    CHECK_EQ_STR(t->text,
                 "Haulage Agreement\n"
                 "The Carrier shall collect the Goods within two Business "
                 "Days.\n"
                 "The Customer pays each invoice within thirty days.\n"
                 "Schedule 1\n"
                 "Full load: EUR 1,450 per trip.\n"
                 "Headers and footers\n"
                 "[header] PRIVILEGED & CONFIDENTIAL\n"
                 "[header] Harbour Logistics Ltd / Quayside Freight GmbH\n"
                 "[header] Schedule 1: Rates\n"
                 "[footer] Draft 3, 12 March 2026, ref. HL-2026-041\n");
    static const head_want want[] = {{1, "Haulage Agreement", 0, 1},
                                     {1, "Schedule 1", 0, 4},
                                     {1, "Headers and footers", 0, 6}};
    CHECK_HEADINGS(t, want);
    CHECK_EQ_INT(line_of(t, "[header] PRIVILEGED"), 7);
    CHECK(line_of(t, "[footer] Draft 3") > line_of(t, "[header] Schedule"));
  }
  dq_text_free(t);

#define HDR(body) "<w:hdr " W ">" body "</w:hdr>"
#define FTR(body) "<w:ftr " W ">" body "</w:ftr>"
#define WP(runs) "<w:p>" runs "</w:p>"
#define WR(text) "<w:r><w:t xml:space=\"preserve\">" text "</w:t></w:r>"
#define FLD(instr, shown)                                                      \
  "<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText>" instr    \
  "</w:instrText></w:r><w:r><w:fldChar w:fldCharType=\"separate\"/></w:r>" WR( \
      shown) "<w:r><w:fldChar w:fldCharType=\"end\"/></w:r>"
  static const char doc
      [] = "<w:document " W " " OPC_R
           "><w:body>" WP(
               WR(
                   "Body text.")) "<w:p><w:pPr><w:sectPr><w:headerReference "
                                  "w:type=\"default\" "
                                  "r:id=\"rH1\"/><w:headerReference "
                                  "w:type=\"first\" r:id=\"rH2\"/>"
                                  "</w:sectPr></w:pPr>" WR("End of section "
                                                           "one.") "</w:p>" WP(
                                      WR("Section two.")) "<w:sectPr><w:"
                                                          "headerReference "
                                                          "w:type=\"default\" "
                                                          "r:id=\"rH1\"/>"
                                                          "<w:footerReference "
                                                          "w:type=\"default\" "
                                                          "r:id=\"rF1\"/>"
                                                          "<w:footerReference "
                                                          "w:type=\"even\" "
                                                          "r:id=\"rGone\"/>"
                                                          "<w:headerReference "
                                                          "w:type=\"even\" "
                                                          "r:id=\"rUp\"/>"
                                                          "</w:sectPr></"
                                                          "w:body></"
                                                          "w:document>";
  static const char rels[] = OPC_RELS
      "<Relationship Id=\"rH1\" Type=\"" OPC_T "header\" "
      "Target=\"header1.xml\"/><Relationship Id=\"rH2\" Type=\"" OPC_T
      "header\" Target=\"header2.xml\"/><Relationship Id=\"rF1\" Type=\"" OPC_T
      "footer\" Target=\"footer1.xml\"/><Relationship Id=\"rGone\" "
      "Type=\"" OPC_T "footer\" Target=\"footer9.xml\"/><Relationship "
      "Id=\"rUp\" Type=\"" OPC_T "header\" Target=\"../../up.xml\"/>"
      "</Relationships>";
  /* the default header: a title, a table row of three cells */
  static const char h1[] = HDR(
      WP(WR("ACME LTD - STRICTLY CONFIDENTIAL")) "<w:tbl><w:tr><w:tc>" WP(WR("R"
                                                                             "e"
                                                                             "f"
                                                                             "."
                                                                             " "
                                                                             "7"
                                                                             "7"
                                                                             "3"
                                                                             "1")) "</w:tc><w:tc>" WP(
          WR("Version 2")) "</w:tc><w:tc>" WP(WR("Page ")
                                                  FLD(" PAGE ",
                                                      "3")) "</w:tc></w:tr></"
                                                            "w:tbl>");
  /* the first page's: the same title again, a simple field */
  static const char h2[] = HDR(WP(WR("ACME LTD - STRICTLY CONFIDENTIAL")) WP(
      WR("Sheets: ") "<w:fldSimple w:instr=\" NUMPAGES \">" WR(
          "9") "</w:fldSimple>" WR(" in all")));
  /* the footer: page X of Y, a date field kept, a nested page field */
  static const char f1[] = FTR(
      WP(WR("Page ") FLD("PAGE \\* MERGEFORMAT", "1") WR(" of ")
             FLD(" NUMPAGES ", "4")) WP(WR("Printed ")
                                            FLD(" DATE \\@ \"d MMMM yyyy\" ",
                                                "4 March 2026"))
          WP("<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText>"
             " IF 1 = 1 </w:instrText></w:r><w:r><w:fldChar "
             "w:fldCharType=\"separate\"/></w:r>" WR("Counsel copy ")
                 FLD(" PAGE ",
                     "2") "<w:r><w:fldChar w:fldCharType=\"end\"/></w:r>"));
  part parts[] = {{"word/document.xml", doc, strlen(doc)},
                  {"word/_rels/document.xml.rels", rels, strlen(rels)},
                  {"word/header1.xml", h1, strlen(h1)},
                  {"word/header2.xml", h2, strlen(h2)},
                  {"word/footer1.xml", f1, strlen(f1)}};
  dq_error err = {0};
  t = NULL;
  CHECK_OK(read_zip(parts, 5, NULL, &t, &err), err.msg);
  if (t) {
    CHECK(text_invariants(t));
    CHECK_EQ_STR(t->text, "Body text.\n"
                          "End of section one.\n"
                          "Section two.\n"
                          "Headers and footers\n"
                          "[header] ACME LTD - STRICTLY CONFIDENTIAL\n"
                          "[header] Ref. 7731 | Version 2 | Page\n"
                          "[header] Sheets:  in all\n"
                          "[footer] Printed 4 March 2026\n"
                          "[footer] Counsel copy\n");
    CHECK_EQ_INT(t->n_headings, 1);
    CHECK_EQ_INT(line_of(t, "[header] ACME"), 5);
    dq_text_free(t);
  }
  /* no header with text: no heading, the body as it was */
  static const char empty[] = HDR(WP(WR("Page ") FLD(" PAGE ", "1")));
  part p2[] = {{"word/document.xml", doc, strlen(doc)},
               {"word/_rels/document.xml.rels", rels, strlen(rels)},
               {"word/header1.xml", empty, strlen(empty)}};
  t = NULL;
  CHECK_OK(read_zip(p2, 3, NULL, &t, &err), err.msg);
  if (t) {
    CHECK(text_invariants(t));
    CHECK_EQ_STR(t->text, "Body text.\nEnd of section one.\nSection two.\n");
    CHECK_EQ_INT(t->n_headings, 0);
    dq_text_free(t);
  }
  /* a header part that is not XML: an error naming it */
  static const char bad[] = "<w:hdr " W "><w:p>";
  part p3[] = {{"word/document.xml", doc, strlen(doc)},
               {"word/_rels/document.xml.rels", rels, strlen(rels)},
               {"word/header1.xml", bad, strlen(bad)}};
  t = NULL;
  CHECK(read_zip(p3, 3, NULL, &t, &err) != DQ_OK);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, "word/header1.xml"), "%s", err.msg);
}

int main(void) {
  test_document();
  test_headers();
  test_style_numbering();
  test_libreoffice();
  test_notes();
  test_comments();
  test_refusals();
  return TEST_EXIT();
}
