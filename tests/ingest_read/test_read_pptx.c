/*
 * test_read_pptx.c - the PowerPoint reader: board.pptx (python-pptx, from
 * its PowerPoint-made template: real title, body and notes placeholders)
 * and deck.pptx (LibreOffice 7.4 from our deck.fodp: text boxes only) read
 * exactly, slide by slide in the presentation's order, with their notes,
 * tables, groups and hidden slides; decks built here for what those two
 * do not hold (boilerplate placeholders, fields, a title in a group, a
 * long title, relationship targets from the root and with "..", a
 * presentation part named elsewhere) and for refusals naming the part at
 * fault. Expected text was written by hand from the slides.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

static void test_board(void) {
  dq_text *t = fixture("board.pptx");
  if (!t)
    return;
  CHECK_EQ_INT(t->kind, DQ_DOC_PPTX);
  CHECK_EQ_INT(t->n_pages, 5);
  CHECK_EQ_STR(t->text,
               "Slide 1\n"
               "Questions? Call Dana Whitfield.\n"
               "[notes] Dana is J\xC3\xBCrgen Gro\xC3\x9F's deputy.\n"
               "Slide 2: Project Falcon\n"
               "Acquisition review for the board\n"
               "Slide 3: Deal terms\n"
               "Purchase price of 48 million euros\n"
               "Escrow of 5 million released after 18 months\n"
               "Closing expected in Q3\n"
               "[notes] The seller asked for a shorter escrow.\n"
               "Legal has not agreed to the indemnity cap.\n"
               "Slide 4\n"
               "Financials\n"
               "Year | Revenue | EBITDA\n"
               "2024 | 31.2 M | 4.1 M\n"
               "Total | 10.0 M\n"
               "Source: audited accounts\n"
               "2025 unaudited\n"
               "Slide 5 (hidden): Rejected bidders\n"
               "Kestrel Partners bid 41 million\n");
  static const head_want want[] = {{1, "Slide 1", 1, 1},
                                   {1, "Slide 2: Project Falcon", 2, 1},
                                   {1, "Slide 3: Deal terms", 3, 1},
                                   {1, "Slide 4", 4, 1},
                                   {1, "Slide 5 (hidden): Rejected bidders",
                                    5, 1}};
  CHECK_HEADINGS(t, want);
  /* cited by slide (page) and line within it */
  CHECK_EQ_INT(page_of(t, "Legal has not agreed"), 3);
  CHECK_EQ_INT(line_of(t, "Legal has not agreed"), 6);
  CHECK_EQ_INT(page_of(t, "2024 | 31.2 M"), 4);
  CHECK_EQ_INT(line_of(t, "2024 | 31.2 M"), 4);
  CHECK_EQ_INT(line_of(t, "[notes] Dana"), 3);
  dq_text_free(t);
}

static void test_libreoffice(void) {
  dq_text *t = fixture("deck.pptx");
  if (!t)
    return;
  /* LibreOffice wrote our frames as text boxes: no titles */
  CHECK_EQ_STR(t->text, "Slide 1\n"
                        "Project Falcon: Acquisition Review\n"
                        "Board meeting, 12 March 2026\n"
                        "Slide 2\n"
                        "Deal terms\n"
                        "Purchase price of 48 million euros\n"
                        "Escrow of 5 million for 18 months\n"
                        "Closing expected in the third quarter\n"
                        "[notes] Mention that the seller asked for a shorter "
                        "escrow.\n"
                        "Legal has not agreed to the indemnity cap yet.\n"
                        "Slide 3\n"
                        "Financials\n"
                        "Year | Revenue | EBITDA\n"
                        "2024 | 31.2 M | 4.1 M\n"
                        "2025 | 36.8 M | 5.9 M\n"
                        "Source: audited accounts, unaudited for 2025.\n"
                        "Slide 4 (hidden)\n"
                        "Backup: rejected bidders\n"
                        "Harrow Capital withdrew in January.\n"
                        "Kestrel Partners bid 41 million.\n"
                        "Slide 5\n"
                        "Questions?\n");
  CHECK_EQ_INT(t->n_headings, 5);
  dq_text_free(t);
}

#define P "xmlns:p=\"http://schemas.openxmlformats.org/presentationml/2006/main\""
#define A "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\""
#define R OPC_R
#define RELS OPC_RELS
#define T_SLIDE                                                                \
  "http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide"
#define T_NOTES                                                                \
  "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"      \
  "notesSlide"
#define T_DOC                                                                  \
  "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"      \
  "officeDocument"

/* A shape: placeholder element ph (PH(type), PH_BODY; "": a text box)
 * holding paragraphs paras (a:p elements). */
#define SP(ph, paras)                                                          \
  "<p:sp><p:nvSpPr><p:cNvPr id=\"2\" name=\"s\"/><p:cNvSpPr/><p:nvPr>" ph     \
  "</p:nvPr></p:nvSpPr><p:txBody><a:bodyPr/>" paras "</p:txBody></p:sp>"
#define PH(type) "<p:ph type=\"" type "\"/>"
#define PH_BODY "<p:ph idx=\"1\"/>" /* a body: no type */
#define PARA(text) "<a:p><a:r><a:t>" text "</a:t></a:r></a:p>"
#define SLIDE(shapes)                                                          \
  "<p:sld " P " " A " " R "><p:cSld><p:spTree>" shapes                         \
  "</p:spTree></p:cSld></p:sld>"

static dq_status read_deck(const part *parts, size_t n_parts, dq_text **t,
                           dq_error *err) {
  return read_zipped("d.pptx", parts, n_parts, t, err);
}

static const char PRES[] =
    "<p:presentation " P " " R "><p:sldIdLst>"
    "<p:sldId id=\"256\" r:id=\"rId2\"/><p:sldId id=\"257\" r:id=\"rId3\"/>"
    "</p:sldIdLst></p:presentation>";

static void test_built(void) {
  /* slide 1: boilerplate placeholders (date, footer, number) left out; a
   * field's text read, an escaped vertical tab (_x000B_, a soft break)
   * a blank; the title inside
   * a group; mc:AlternateContent's Choice read, its Fallback not */
  static const char s1[] = SLIDE(
      SP(PH("dt"), PARA("12/03/2026")) SP(PH("ftr"), PARA("Confidential"))
      SP(PH("sldNum"), "<a:p><a:fld id=\"{1}\" type=\"slidenum\"><a:t>1"
                       "</a:t></a:fld></a:p>")
      "<p:grpSp>" SP(PH("title"), PARA("Grouped title")) "</p:grpSp>"
      SP(PH_BODY, "<a:p><a:r><a:t>Due on</a:t></a:r><a:fld id=\"{2}\" "
             "type=\"datetime\"><a:t> 1 May</a:t></a:fld></a:p>"
             "<a:p><a:r><a:t>line one_x000B_line two</a:t></a:r></a:p>")
      "<mc:AlternateContent xmlns:mc=\"http://schemas.openxmlformats.org/"
      "markup-compatibility/2006\"><mc:Choice Requires=\"p14\">" SP(
          "", PARA("chosen")) "</mc:Choice><mc:Fallback>" SP("",
                                                               PARA("fallback"))
      "</mc:Fallback></mc:AlternateContent>");
  /* slide 2, named from the root ("/ppt/..."), its notes through ".." */
  static const char s2[] = SLIDE(SP(PH("title"), PARA("Second")));
  static const char notes[] =
      "<p:notes " P " " A "><p:cSld><p:spTree>" SP(PH("sldImg"), "")
          SP(PH("body"), PARA("Say it slowly.")) SP(PH("sldNum"), PARA("2"))
      "</p:spTree></p:cSld></p:notes>";
  static const char rels[] =
      RELS "<Relationship Id=\"rId9\" Type=\"http://x/hyperlink\" "
           "Target=\"https://example.com/\" TargetMode=\"External\"/>"
           "<Relationship Id=\"rId2\" Type=\"" T_SLIDE
           "\" Target=\"slides/./a.xml\"/>"
           "<Relationship Id=\"rId3\" Type=\"" T_SLIDE
           "\" Target=\"/ppt/slides/b.xml\"/></Relationships>";
  static const char s2rels[] =
      RELS "<Relationship Id=\"rId1\" Type=\"" T_NOTES
           "\" Target=\"../notes/../notesSlides/n.xml\"/></Relationships>";
  part parts[] = {{"ppt/presentation.xml", PRES, strlen(PRES)},
                  {"ppt/_rels/presentation.xml.rels", rels, strlen(rels)},
                  {"ppt/slides/a.xml", s1, strlen(s1)},
                  {"ppt/slides/b.xml", s2, strlen(s2)},
                  {"ppt/slides/_rels/b.xml.rels", s2rels, strlen(s2rels)},
                  {"ppt/notesSlides/n.xml", notes, strlen(notes)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_deck(parts, 6, &t, &err), err.msg);
  if (t)
    CHECK_EQ_STR(t->text, "Slide 1: Grouped title\n"
                          "Due on 1 May\n"
                          "line one line two\n"
                          "chosen\n"
                          "Slide 2: Second\n"
                          "[notes] Say it slowly.\n");
  dq_text_free(t);

  /* the presentation part where _rels/.rels says; a title of 300 bytes
   * (two-byte characters): the heading cut at 200 bytes of it, at a
   * character, the line whole */
  char title[301];
  for (int i = 0; i < 150; i++)
    memcpy(title + 2 * i, "\xC3\xA9", 2);
  title[300] = '\0';
  char s3[2048];
  snprintf(s3, sizeof s3,
           "<p:sld " P " " A "><p:cSld><p:spTree>" SP(PH("ctrTitle"),
                                                      "<a:p><a:r><a:t>%s"
                                                      "</a:t></a:r></a:p>")
               "</p:spTree></p:cSld></p:sld>",
           title);
  static const char top[] =
      RELS "<Relationship Id=\"rId1\" Type=\"" T_DOC
           "\" Target=\"deck/main.xml\"/></Relationships>";
  static const char pres1[] =
      "<p:presentation " P " " R "><p:sldIdLst><p:sldId id=\"256\" "
      "r:id=\"rId1\"/></p:sldIdLst></p:presentation>";
  static const char rels1[] = RELS "<Relationship Id=\"rId1\" Type=\"" T_SLIDE
                                   "\" Target=\"s/one.xml\"/></Relationships>";
  part p2[] = {{"_rels/.rels", top, strlen(top)},
               {"deck/main.xml", pres1, strlen(pres1)},
               {"deck/_rels/main.xml.rels", rels1, strlen(rels1)},
               {"deck/s/one.xml", s3, strlen(s3)}};
  CHECK_OK(read_deck(p2, 4, &t, &err), err.msg);
  if (t) {
    CHECK(strstr(t->text, title) != NULL);
    CHECK_EQ_INT(t->n_headings, 1);
    if (t->n_headings) {
      CHECK_EQ_INT(strlen(t->headings[0].title), strlen("Slide 1: ") + 200);
      CHECK(!strncmp(t->headings[0].title, "Slide 1: \xC3\xA9", 11));
    }
  }
  dq_text_free(t);

  /* no slides: an empty text */
  static const char empty[] = "<p:presentation " P "/>";
  static const char norels[] = RELS "</Relationships>";
  part p3[] = {{"ppt/presentation.xml", empty, strlen(empty)},
               {"ppt/_rels/presentation.xml.rels", norels, strlen(norels)}};
  CHECK_OK(read_deck(p3, 2, &t, &err), err.msg);
  if (t)
    CHECK_EQ_INT(t->n_bytes, 0);
  dq_text_free(t);
}

static void expect_refused(const part *parts, size_t n, dq_status want,
                           const char *msg) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_EQ_INT(read_deck(parts, n, &t, &err), want);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, msg) && strstr(err.msg, "d.pptx"), "%s", err.msg);
}

static void test_refused(void) {
  static const char s[] = SLIDE(SP(PH("title"), PARA("x")));
  static const char rels_ok[] = RELS "<Relationship Id=\"rId2\" Type=\"" T_SLIDE
                                     "\" Target=\"slides/s.xml\"/>"
                                     "<Relationship Id=\"rId3\" Type=\"" T_SLIDE
                                     "\" Target=\"slides/s.xml\"/>"
                                     "</Relationships>";
  /* no presentation part */
  part p1[] = {{"ppt/slides/s.xml", s, strlen(s)}};
  expect_refused(p1, 1, DQ_ERR_FORMAT, "no ppt/presentation.xml in the zip");
  /* a slide id the relationships do not hold */
  static const char rels_short[] = RELS "<Relationship Id=\"rId2\" Type=\"" T_SLIDE
                                        "\" Target=\"slides/s.xml\"/>"
                                        "</Relationships>";
  part p2[] = {{"ppt/presentation.xml", PRES, strlen(PRES)},
               {"ppt/_rels/presentation.xml.rels", rels_short,
                strlen(rels_short)},
               {"ppt/slides/s.xml", s, strlen(s)}};
  expect_refused(p2, 3, DQ_ERR_FORMAT, "slide 2: rId3 names no slide part");
  /* a target above the package's root */
  static const char rels_up[] = RELS "<Relationship Id=\"rId2\" Type=\"" T_SLIDE
                                     "\" Target=\"../../s.xml\"/>"
                                     "<Relationship Id=\"rId3\" Type=\"" T_SLIDE
                                     "\" Target=\"slides/s.xml\"/>"
                                     "</Relationships>";
  part p3[] = {{"ppt/presentation.xml", PRES, strlen(PRES)},
               {"ppt/_rels/presentation.xml.rels", rels_up, strlen(rels_up)},
               {"ppt/slides/s.xml", s, strlen(s)}};
  expect_refused(p3, 3, DQ_ERR_FORMAT, "slide 1: rId2 names no slide part");
  /* a slide part the zip lacks */
  part p4[] = {{"ppt/presentation.xml", PRES, strlen(PRES)},
               {"ppt/_rels/presentation.xml.rels", rels_ok, strlen(rels_ok)}};
  expect_refused(p4, 2, DQ_ERR_FORMAT, "no ppt/slides/s.xml in the zip");
  /* a slide that is not XML */
  static const char bad[] = "<p:sld " P "><p:cSld>";
  part p5[] = {{"ppt/presentation.xml", PRES, strlen(PRES)},
               {"ppt/_rels/presentation.xml.rels", rels_ok, strlen(rels_ok)},
               {"ppt/slides/s.xml", bad, strlen(bad)}};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK(read_deck(p5, 3, &t, &err) != DQ_OK);
  CHECK_MSG(strstr(err.msg, "ppt/slides/s.xml"), "%s", err.msg);
  CHECK(t == NULL);
  /* not a zip */
  CHECK_EQ_INT(dq_read_buffer("x.pptx", "not a zip", 9, DQ_DOC_UNKNOWN, NULL,
                              &t, NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "x.pptx: not a PPTX file"), "%s", err.msg);
}

static void test_detect(void) {
  CHECK_EQ_INT(dq_detect_kind("deck.pptx", "PK\x03\x04", 4, NULL),
               DQ_DOC_PPTX);
  CHECK_EQ_INT(dq_detect_kind("DECK.PPTM", "PK\x03\x04", 4, NULL),
               DQ_DOC_PPTX);
  CHECK_EQ_INT(dq_detect_kind("show.ppsx", NULL, 0, NULL), DQ_DOC_PPTX);
  CHECK_EQ_STR(dq_doc_kind_name(DQ_DOC_PPTX), "pptx");
  CHECK(dq_max_file_bytes(0, DQ_DOC_PPTX) == DQ_READ_MAX_DOC_BYTES);
}

int main(void) {
  test_board();
  test_libreoffice();
  test_built();
  test_refused();
  test_detect();
  return TEST_EXIT();
}
