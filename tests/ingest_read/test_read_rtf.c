/*
 * test_read_rtf.c - the RTF reader: on LibreOffice's RTF of our documents
 * (fixtures/README.md), which read as LibreOffice's DOCX of the same
 * documents does (outline numbers as list text, headings by outline
 * level, footnotes and an endnote, a contents field, lists), and a text
 * box as its ODT reads; on RTF written here as Word writes it: the code
 * page's \'hh, \uN with its fallback skipped, a surrogate pair, a heading
 * by its style's name, hidden text, \bin data, fields, headers and
 * unknown \* destinations left out, symbols, a table with two paragraphs
 * in a cell, lines of the extracted text; a truncated file; and refusals:
 * not RTF, groups nested too deep.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: fixture() uses CHECK */

static void test_alike(void) {
  static const char *const docs[] = {"outline", "notes", "toc", "lists",
                                     "comments"};
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
    check_alike(docs[i], "rtf", DQ_DOC_RTF, 1);
  dq_text *r = fixture("box.rtf"), *o = fixture("box.odt");
  if (r && o)
    CHECK_EQ_STR(r->text, o->text);
  dq_text_free(r);
  dq_text_free(o);
}

static dq_text *rd(const char *s) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read_buffer("w.rtf", s, strlen(s), DQ_DOC_UNKNOWN, NULL, &t, NULL,
                          &err),
           err.msg);
  if (t)
    CHECK(text_invariants(t));
  return t;
}

static void test_built(void) {
  static const char *word =
      "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Times;}}"
      "{\\colortbl;\\red0\\green0\\blue0;}"
      "{\\stylesheet{\\s0 Normal;}{\\s2\\sbasedon0  heading 2;}}"
      "{\\info{\\title Secret Title}}"
      "{\\header Page header}"
      "{\\*\\generator Word;}"
      "\\pard\\plain\\s2 Caf\\'e9 terms\\par"
      "\\pard\\plain Price \\u8364?10{\\uc0\\u8364 5}, smile \\u-10179?\\u-8704?"
      "{\\v hidden words} seen\\line next\\tab tab\\~nbsp non\\_break "
      "opt\\-hyphen\\emdash{\\*\\unknown gone}{\\pict\\bin3 }}}}done\\par"
      "{\\field{\\*\\fldinst HYPERLINK \"x\"}{\\fldrslt link text}}\\par"
      "\\trowd\\cellx100\\cellx200\\pard\\intbl A1\\par more \\cell "
      "\\pard\\intbl B1\\cell\\row"
      "\\pard\\plain \\ldblquote quoted\\rdblquote\\par}";
  dq_text *t = rd(word);
  if (t) {
    CHECK_EQ_INT(t->kind, DQ_DOC_RTF);
    CHECK_EQ_STR(t->text,
                 "Caf\xC3\xA9 terms\n"
                 "Price \xE2\x82\xAC"
                 "10\xE2\x82\xAC"
                 "5, smile \xF0\x9F\x98\x80 seen\n"
                 "next\ttab\xC2\xA0nbsp non-break opthyphen\xE2\x80\x94"
                 "done\n"
                 "link text\n"
                 "A1 more | B1\n"
                 "\xE2\x80\x9Cquoted\xE2\x80\x9D\n");
    static const head_want want[] = {{2, "Caf\xC3\xA9 terms", 0, 1}};
    CHECK_HEADINGS(t, want);
    CHECK(lines_are_text_lines(t));
  }
  dq_text_free(t);
  /* a truncated file keeps what it has */
  t = rd("{\\rtf1 {\\b First} paragraph\\par Second, cut");
  if (t)
    CHECK_EQ_STR(t->text, "First paragraph\nSecond, cut\n");
  dq_text_free(t);
  /* closing braces past the first group are ignored; \\footnote outside
   * a group is no note (fuzz_read_rtf found the group stack underflow) */
  t = rd("{\\rtf1 a}} b\\footnote c}}{\\footnote d} e");
  if (t)
    CHECK_EQ_STR(t->text, "a bc[1] e\n[1] d\n");
  dq_text_free(t);
}

/* Comments as Word writes them: the text they mark between \atrfstart
 * and \atrfend quoted, the author's \uN, a DTTM date, a reply
 * (\atnparent), a comment on a table cell, a \par inside one, initials
 * when there is no author, a date of 0 left out; a comment's group cut
 * short by the end of the file. */
static void test_comments(void) {
  dq_text *t = rd(
      "{\\rtf1\\ansi\\pard Rent {\\*\\atrfstart 7}is 900{\\*\\atrfend 7} a "
      "month.{\\*\\atnid AL}{\\*\\atnauthor "
      "J\\u252?rgen}\\chatn{\\*\\annotation"
      "{\\*\\atnref 7}{\\*\\atndate 132319872}\\pard Too high.\\par Really.}"
      "{\\*\\atnid BO}\\chatn{\\*\\annotation{\\*\\atnref 8}{\\*\\atnparent 7}"
      "{\\*\\atndate 0}Agreed.}\\par"
      "\\trowd\\cellx100\\cellx200\\pard\\intbl Fee\\cell\\pard\\intbl"
      "{\\*\\atrfstart 9}100{\\*\\atrfend 9}{\\*\\atnauthor Cy}\\chatn"
      "{\\*\\annotation{\\*\\atnref 9}Plus VAT?}\\cell\\row"
      "\\pard Last{\\*\\atnauthor Di}\\chatn{\\*\\annotation cut");
  if (t)
    CHECK_EQ_STR(t->text,
                 "Rent is 900 a month.\n"
                 "[comment, J\xC3\xBCrgen, 2026-03-01, on \"is 900\"] Too "
                 "high. Really.\n"
                 "[reply, BO] Agreed.\n"
                 "Fee | 100\n"
                 "[comment, Cy, on \"100\"] Plus VAT?\n"
                 "Last\n");
  dq_text_free(t);
}

static void test_refusals(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_EQ_INT(dq_read_buffer("x.rtf", "plain words", 11, DQ_DOC_UNKNOWN, NULL,
                              &t, NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "x.rtf") && strstr(err.msg, "not an RTF file"),
            "%s", err.msg);
  char deep[2048] = "{\\rtf1 ";
  for (int i = 0; i < 300; i++)
    strcat(deep, "{");
  CHECK_EQ_INT(dq_read_buffer("deep.rtf", deep, strlen(deep), DQ_DOC_UNKNOWN,
                              NULL, &t, NULL, &err),
               DQ_ERR_LIMIT);
  CHECK_MSG(strstr(err.msg, "deep.rtf") && strstr(err.msg, "nested"), "%s",
            err.msg);
  CHECK(t == NULL);
  /* known by its first bytes, whatever its name */
  CHECK_EQ_INT(dq_detect_kind("letter", "{\\rtf1\\ansi x}", 14, NULL),
               DQ_DOC_RTF);
}

int main(void) {
  test_alike();
  test_built();
  test_comments();
  test_refusals();
  return TEST_EXIT();
}
