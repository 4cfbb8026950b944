/*
 * test_read_odp.c - the OpenDocument presentation reader (read_odt.c's
 * dq_read_odp, LibreOffice Impress's .odp): deck.odp and board.odp, which
 * LibreOffice 7.4 wrote from the same sources as deck.pptx and board.pptx
 * (our deck.fodp; python-pptx's board.pptx), read as the PowerPoint
 * reader reads those (text, headings, each line's slide and line: two
 * independent files of one deck), but where the formats differ; and
 * content.xml parts built here for what the fixtures do not hold (a
 * hidden slide's style, boilerplate frames, a title in a group or of two
 * paragraphs, a shape's own text, notes starting with an empty paragraph,
 * a comment in a title) and for refusals naming the file. Expected text
 * was written by hand from the slides.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

/* a and b read alike: the same text, headings, each line's slide and
 * line within it */
static void check_same_deck(const dq_text *a, const dq_text *b) {
  CHECK_EQ_STR(a->text, b->text);
  CHECK_EQ_INT(a->n_pages, b->n_pages);
  CHECK_EQ_INT(a->n_headings, b->n_headings);
  for (size_t h = 0; h < a->n_headings && h < b->n_headings; h++) {
    CHECK_EQ_STR(a->headings[h].title, b->headings[h].title);
    CHECK_EQ_INT(a->headings[h].level, b->headings[h].level);
  }
  for (size_t off = 0; off < a->n_bytes && off < b->n_bytes; off++) {
    if (off && a->text[off - 1] != '\n')
      continue;
    uint32_t la, pa, lb, pb;
    dq_text_locate(a, off, &la, &pa);
    dq_text_locate(b, off, &lb, &pb);
    CHECK_MSG(la == lb && pa == pb, "offset %zu: %u:%u against %u:%u", off, pa,
              la, pb, lb);
  }
}

static void test_deck(void) {
  dq_text *o = fixture("deck.odp"), *p = fixture("deck.pptx");
  if (o && p) {
    CHECK_EQ_INT(o->kind, DQ_DOC_ODP);
    check_same_deck(o, p);
    CHECK_EQ_INT(page_of(o, "Legal has not agreed"), 2);
    CHECK_EQ_INT(line_of(o, "Legal has not agreed"), 7);
  }
  dq_text_free(o);
  dq_text_free(p);
}

static void test_board(void) {
  dq_text *t = fixture("board.odp");
  if (!t)
    return;
  CHECK_EQ_INT(t->kind, DQ_DOC_ODP);
  CHECK_EQ_INT(t->n_pages, 5);
  /* as board.pptx reads, but the line break inside the escrow bullet,
   * which LibreOffice keeps in the bullet's paragraph (one line number),
   * and the slide-number field of the notes pages, left out */
  CHECK_EQ_STR(t->text,
               "Slide 1\n"
               "Questions? Call Dana Whitfield.\n"
               "[notes] Dana is J\xC3\xBCrgen Gro\xC3\x9F's deputy.\n"
               "Slide 2: Project Falcon\n"
               "Acquisition review for the board\n"
               "Slide 3: Deal terms\n"
               "Purchase price of 48 million euros\n"
               "Escrow of 5 million\n"
               "released after 18 months\n"
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
  CHECK_EQ_INT(page_of(t, "Legal has not agreed"), 3);
  CHECK_EQ_INT(line_of(t, "Legal has not agreed"), 6);
  CHECK_EQ_INT(page_of(t, "2024 | 31.2 M"), 4);
  CHECK_EQ_INT(line_of(t, "[notes] Dana"), 3);
  dq_text_free(t);
}

#define NS                                                                     \
  "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "         \
  "xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\" "           \
  "xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" "             \
  "xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\" "           \
  "xmlns:draw=\"urn:oasis:names:tc:opendocument:xmlns:drawing:1.0\" "          \
  "xmlns:presentation=\"urn:oasis:names:tc:opendocument:xmlns:"                \
  "presentation:1.0\" "                                                        \
  "xmlns:dc=\"http://purl.org/dc/elements/1.1/\""
#define HEAD "<office:document-content " NS ">"
#define STYLES                                                                 \
  "<office:automatic-styles>"                                                  \
  "<style:style style:name=\"dp1\" style:family=\"drawing-page\"/>"            \
  "<style:style style:name=\"dp9\" style:family=\"drawing-page\">"             \
  "<style:drawing-page-properties presentation:visibility=\"hidden\"/>"        \
  "</style:style></office:automatic-styles>"
#define BODY "<office:body><office:presentation>"
#define TAIL "</office:presentation></office:body></office:document-content>"
#define MIME "application/vnd.oasis.opendocument.presentation"
#define FRAME(cls, paras)                                                      \
  "<draw:frame presentation:class=\"" cls "\"><draw:text-box>" paras           \
  "</draw:text-box></draw:frame>"
#define BOX(paras) "<draw:frame><draw:text-box>" paras "</draw:text-box></draw:frame>"
#define P(text) "<text:p>" text "</text:p>"

static dq_status read_content(const char *content, dq_text **t, dq_error *err) {
  part p[] = {{"mimetype", MIME, strlen(MIME)},
              {"content.xml", content, strlen(content)}};
  return read_zipped("d.odp", p, 2, t, err);
}

static void test_built(void) {
  static const char content[] =
      HEAD STYLES BODY
      /* slide 1: the boilerplate frames left out, a title of two
       * paragraphs with a line break and a comment, joined by blanks; a
       * shape's own paragraph; the white space between elements not
       * written */
      "<draw:page draw:name=\"page1\" draw:style-name=\"dp1\">\n  "
      FRAME("date-time", P("12/03/2026")) FRAME("footer", P("Confidential"))
      FRAME("page-number", P("<text:page-number>1</text:page-number>"))
      FRAME("title", P("Quarterly<text:line-break/>results")
                         P("<office:annotation><dc:creator>Ann</dc:creator>"
                           "<text:p>check</text:p></office:annotation>"
                           "for 2026"))
      "\n  <draw:custom-shape><text:p>Revenue up 12%</text:p>"
      "<draw:enhanced-geometry/></draw:custom-shape>\n"
      "</draw:page>"
      /* slide 2: hidden by its style; its title in a group; notes whose
       * first paragraph is empty and whose page number is boilerplate */
      "<draw:page draw:name=\"page2\" draw:style-name=\"dp9\">"
      "<draw:g>" FRAME("title", P("Backup")) BOX(P("Harrow withdrew")) "</draw:g>"
      "<presentation:notes><draw:page-thumbnail presentation:class=\"page\"/>"
      FRAME("notes", P("") P("Do not show this slide") P("unless asked"))
      FRAME("page-number", P("2"))
      "</presentation:notes></draw:page>"
      /* slide 3: no title; a table (a covered cell left out); an image's
       * frame */
      "<draw:page draw:name=\"page3\">"
      "<draw:frame><table:table><table:table-row>"
      "<table:table-cell table:number-columns-spanned=\"2\">" P("Total")
      "</table:table-cell><table:covered-table-cell/>"
      "<table:table-cell>" P("10") "</table:table-cell></table:table-row>"
      "</table:table></draw:frame>"
      "<draw:frame><draw:image/></draw:frame>"
      BOX("<text:list><text:list-item>" P("A point")
          "</text:list-item></text:list>")
      "</draw:page>" TAIL;
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(read_content(content, &t, &err), err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_INT(t->kind, DQ_DOC_ODP);
  CHECK_EQ_INT(t->n_pages, 3);
  CHECK_EQ_STR(t->text, "Slide 1: Quarterly results for 2026\n"
                        "Revenue up 12%\n"
                        "Slide 2 (hidden): Backup\n"
                        "Harrow withdrew\n"
                        "[notes] Do not show this slide\n"
                        "unless asked\n"
                        "Slide 3\n"
                        "Total | 10\n"
                        "A point\n");
  static const head_want want[] = {
      {1, "Slide 1: Quarterly results for 2026", 1, 1},
      {1, "Slide 2 (hidden): Backup", 2, 1},
      {1, "Slide 3", 3, 1}};
  CHECK_HEADINGS(t, want);
  CHECK_EQ_INT(page_of(t, "Revenue up"), 1);
  CHECK_EQ_INT(line_of(t, "Revenue up"), 2);
  CHECK_EQ_INT(page_of(t, "unless asked"), 2);
  CHECK_EQ_INT(line_of(t, "unless asked"), 5);
  CHECK_EQ_INT(page_of(t, "A point"), 3);
  dq_text_free(t);

  /* a title longer than 200 bytes: the heading cut at a character's
   * start, the line whole */
  char big[2048];
  char title[400] = "";
  for (int i = 0; i < 100; i++)
    strcat(title, "\xC3\xA9t"); /* "ét": 3 bytes */
  snprintf(big, sizeof big,
           HEAD BODY "<draw:page>" FRAME("title", P("%s")) "</draw:page>" TAIL,
           title);
  CHECK_OK(read_content(big, &t, &err), err.msg);
  if (t) {
    CHECK_EQ_INT(t->n_headings, 1);
    if (t->n_headings) {
      const char *h = t->headings[0].title;
      CHECK(strncmp(h, "Slide 1: \xC3\xA9t", 12) == 0);
      CHECK(strlen(h) <= 9 + 200);
      CHECK(strlen(h) >= 9 + 198);
    }
    CHECK(strlen(t->text) == 9 + 300 + 1);
    dq_text_free(t);
  }
}

static void test_refused(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  /* a text document named .odp */
  static const char text[] = HEAD "<office:body><office:text>" P("x")
      "</office:text></office:body></office:document-content>";
  CHECK_EQ_INT(read_content(text, &t, &err), DQ_ERR_FORMAT);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, "d.odp") && strstr(err.msg, "not a presentation"),
            "%s", err.msg);
  /* malformed XML */
  static const char bad[] = HEAD BODY "<draw:page>" FRAME("title", P("x"));
  CHECK(read_content(bad, &t, &err) != DQ_OK);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, "d.odp") && strstr(err.msg, "content.xml"), "%s",
            err.msg);
  /* no content.xml */
  part p[] = {{"mimetype", MIME, strlen(MIME)}};
  CHECK_EQ_INT(read_zipped("d.odp", p, 1, &t, &err), DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "content.xml"), "%s", err.msg);
  CHECK(t == NULL);
  /* not a zip */
  CHECK_EQ_INT(dq_read_buffer("x.odp", "not a zip", 9, DQ_DOC_UNKNOWN, NULL,
                              &t, NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "x.odp: not an ODP file"), "%s", err.msg);
  /* shapes nested past the limit */
  size_t cap = 64 * 1024;
  char *deep = malloc(cap);
  if (deep) {
    size_t n = (size_t)snprintf(deep, cap, HEAD BODY "<draw:page>");
    for (int i = 0; i < 300; i++)
      n += (size_t)snprintf(deep + n, cap - n, "<draw:g>");
    for (int i = 0; i < 300; i++)
      n += (size_t)snprintf(deep + n, cap - n, "</draw:g>");
    snprintf(deep + n, cap - n, "</draw:page>" TAIL);
    CHECK(read_content(deep, &t, &err) != DQ_OK);
    CHECK(t == NULL);
    CHECK_MSG(strstr(err.msg, "d.odp"), "%s", err.msg);
    free(deep);
  }
}

static void test_detect(void) {
  CHECK_EQ_INT(dq_detect_kind("deck.odp", "PK\x03\x04", 4, NULL), DQ_DOC_ODP);
  CHECK_EQ_INT(dq_detect_kind("MASTER.OTP", NULL, 0, NULL), DQ_DOC_ODP);
  CHECK_EQ_STR(dq_doc_kind_name(DQ_DOC_ODP), "odp");
  CHECK(dq_max_file_bytes(0, DQ_DOC_ODP) == DQ_READ_MAX_DOC_BYTES);
}

int main(void) {
  test_deck();
  test_board();
  test_built();
  test_refused();
  test_detect();
  return TEST_EXIT();
}
