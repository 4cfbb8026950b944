/*
 * test_read_epub.c - the EPUB reader: on pandoc's EPUB 3 and EPUB 2 of
 * one book (fixtures/README.md), which read alike, and LibreOffice's EPUB,
 * whose headings are plain paragraphs and come from its NCX; on archives
 * built here: the spine's order, each part once, the navigation document
 * and non-XHTML items left out, hrefs percent-decoded and with "..",
 * headings from the nav (EPUB 3) or the NCX (EPUB 2) at their fragment's
 * line where a part has none of its own, a part's <head> left out, HTML
 * entities, lines of the extracted text; detection by content; and
 * refusals naming the file and the part: not a zip, no container, no
 * rootfile, no package, a spine item the manifest lacks, a part the zip
 * lacks, a package that is not XML.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: its checks use CHECK */

static size_t count_of(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

static void test_fixtures(void) {
  dq_text *e3 = fixture("handbook.epub"), *e2 = fixture("handbook2.epub");
  if (e3 && e2) {
    CHECK_EQ_INT(e3->kind, DQ_DOC_EPUB);
    CHECK_EQ_STR(e3->text, e2->text); /* nav (EPUB 3) or NCX (EPUB 2) */
    CHECK(strncmp(e3->text,
                  "The Harbour Lease Handbook\nA. Writer\nIntroduction\n"
                  "This handbook explains the harbour lease. Read it before "
                  "you sign & keep it.\nRent and Deposits\nRent\n",
                  150) == 0);
    CHECK(strstr(e3->text, "Rent | 1,200\nDeposit | 2,400\n") != NULL);
    /* pandoc's note: its reference, its number from the notes' ol */
    CHECK_EQ_INT(line_of(e3, "in advance.[1]\n"), 7);
    CHECK_EQ_INT(line_of(e3, "[1] Rent is due on the first working day"), 13);
    /* the nav document is not read, nor a part's <title> */
    CHECK_EQ_INT(count_of(e3->text, "Ending the Lease"), 1);
    CHECK(strstr(e3->text, "ch00") == NULL);
    static const head_want want[] = {{1, "The Harbour Lease Handbook", 0, 1},
                                     {1, "Introduction", 0, 3},
                                     {1, "Rent and Deposits", 0, 5},
                                     {2, "Rent", 0, 6},
                                     {2, "Deposits", 0, 11},
                                     {1, "Ending the Lease", 0, 14}};
    CHECK_HEADINGS(e3, want);
    CHECK_HEADINGS(e2, want);
    CHECK(lines_are_text_lines(e3));
    CHECK_EQ_INT(line_of(e3, "notice_period = 6 months"), 16);
  }
  dq_text_free(e3);
  dq_text_free(e2);
  /* LibreOffice writes headings as <p>: the NCX names them */
  dq_text *t = fixture("outline.epub");
  if (t) {
    static const head_want want[] = {{1, "Definitions", 0, 1},
                                     {1, "Licence", 0, 5}};
    CHECK_HEADINGS(t, want);
    CHECK(strncmp(t->text, "Definitions\nIn this Agreement", 29) == 0);
    CHECK(lines_are_text_lines(t));
  }
  dq_text_free(t);
  /* LibreOffice's notes (an aside each, its number a link back) read as
   * the ODT's do: each line of the ODT is a line of the EPUB */
  dq_text *e = fixture("notes.epub"), *o = fixture("notes.odt");
  if (e && o) {
    CHECK(strstr(e->text, "GBP 1,200[2]\n") != NULL);
    for (const char *l = o->text; *l;) {
      const char *nl = strchr(l, '\n');
      char line[256];
      snprintf(line, sizeof line, "\n%.*s\n", (int)(nl - l), l);
      CHECK_MSG(strstr(e->text, line) ||
                    !strncmp(e->text, line + 1, strlen(line + 1)),
                "%s", line);
      l = nl + 1;
    }
  }
  dq_text_free(e);
  dq_text_free(o);
}

/* ---- built archives ---- */

#define CONTAINER                                                              \
  "<?xml version=\"1.0\"?><container version=\"1.0\" "                         \
  "xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\"><rootfiles>"      \
  "<rootfile full-path=\"OEBPS/content.opf\" "                                 \
  "media-type=\"application/oebps-package+xml\"/></rootfiles></container>"

#define XHTML_HEAD                                                             \
  "<?xml version=\"1.0\" encoding=\"UTF-8\"?><html "                           \
  "xmlns=\"http://www.w3.org/1999/xhtml\" "                                    \
  "xmlns:epub=\"http://www.idpf.org/2007/ops\"><head><title>Book Title"        \
  "</title></head><body>"

static const char C1[] =
    XHTML_HEAD "<p>Opening words of part one.</p>"
               "<p>Caf&eacute; &amp; bar.</p></body></html>";
static const char C2[] =
    XHTML_HEAD "<p>Before the section.</p><div id=\"s2\"><p>In the second "
               "section.</p></div><p>Line<br/>broken</p><table><tr><td><p>a"
               "</p></td><td>b</td></tr><tr><td></td><td></td></tr></table>"
               "</body></html>";
static const char C3[] = XHTML_HEAD "<h2>Own Heading</h2><p>Its text.</p>"
                                    "</body></html>";
static const char NAV[] =
    XHTML_HEAD "<nav epub:type=\"landmarks\"><ol><li><a href=\"c3.xhtml\">"
               "Landmark</a></li></ol></nav><nav epub:type=\"toc\"><ol>"
               "<li><a href=\"text/chapter%201.xhtml\">Part\n  One</a><ol>"
               "<li><a href=\"text/c2.xhtml\">Part Two</a></li>"
               "<li><a href=\"text/c2.xhtml#s2\">Second Section</a></li>"
               "<li><a href=\"text/c2.xhtml#nowhere\">Lost</a></li></ol></li>"
               "<li><a href=\"c3.xhtml\">Ignored Label</a></li></ol></nav>"
               "</body></html>";
static const char NCX[] =
    "<?xml version=\"1.0\"?><ncx "
    "xmlns=\"http://www.daisy.org/z3986/2005/ncx/\" "
    "version=\"2005-1\"><navMap><navPoint id=\"a\"><navLabel><text>Part One"
    "</text></navLabel><content src=\"text/chapter%201.xhtml\"/>"
    "<navPoint id=\"b\"><navLabel><text>Part Two</text></navLabel>"
    "<content src=\"text/c2.xhtml\"/></navPoint>"
    "<navPoint id=\"c\"><navLabel><text>Second Section</text></navLabel>"
    "<content src=\"text/c2.xhtml#s2\"/></navPoint>"
    "<navPoint id=\"d\"><navLabel><text>Lost</text></navLabel>"
    "<content src=\"text/c2.xhtml#nowhere\"/></navPoint></navPoint>"
    "<navPoint id=\"e\"><navLabel><text>Ignored Label</text></navLabel>"
    "<content src=\"c3.xhtml\"/></navPoint></navMap></ncx>";

/* The package: the nav in the spine (left out), chapter 1 by a
 * percent-encoded href, chapter 2 by a path through "..", chapter 1
 * again, by its item and by another item naming its part through "."
 * (read once), an image and a remote part (left out), chapter 3. */
#define OPF_HEAD                                                               \
  "<?xml version=\"1.0\"?><package xmlns=\"http://www.idpf.org/2007/opf\" "    \
  "version=\"3.0\"><metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\">"   \
  "<dc:title>Book</dc:title></metadata><manifest>"                             \
  "<item id=\"c1\" href=\"text/chapter%201.xhtml\" "                           \
  "media-type=\"application/xhtml+xml\"/>"                                     \
  "<item id=\"c2\" href=\"../OEBPS/text/c2.xhtml\" "                           \
  "media-type=\"application/xhtml+xml\"/>"                                     \
  "<item id=\"c3\" href=\"c3.xhtml\" media-type=\"application/xhtml+xml\"/>"   \
  "<item id=\"c1b\" href=\"./text/chapter 1.xhtml\"/>"                         \
  "<item id=\"img\" href=\"pic.png\" media-type=\"image/png\"/>"               \
  "<item id=\"far\" href=\"http://example.com/x.xhtml\" "                      \
  "media-type=\"application/xhtml+xml\"/>"
#define SPINE_ITEMS                                                            \
  "<itemref idref=\"c1\"/><itemref idref=\"c2\"/><itemref idref=\"c1\"/>"      \
  "<itemref idref=\"c1b\"/>"                                                   \
  "<itemref idref=\"img\"/><itemref idref=\"far\"/><itemref idref=\"c3\"/>"
static const char OPF3[] =
    OPF_HEAD "<item id=\"nav\" href=\"nav.xhtml\" properties=\"nav\" "
             "media-type=\"application/xhtml+xml\"/></manifest><spine>"
             "<itemref idref=\"nav\"/>" SPINE_ITEMS "</spine></package>";
static const char OPF2[] =
    OPF_HEAD "<item id=\"toc\" href=\"toc.ncx\" "
             "media-type=\"application/x-dtbncx+xml\"/></manifest>"
             "<spine toc=\"toc\">" SPINE_ITEMS "</spine></package>";

#define P(name, s)                                                             \
  { name, s, sizeof s - 1 }

static dq_status read_parts(const part *parts, size_t n_parts, const char *name,
                            dq_text **t, dq_error *err) {
  size_t n;
  char *zip = make_zip(parts, n_parts, &n);
  dq_status st =
      dq_read_buffer(name, zip, n, DQ_DOC_UNKNOWN, NULL, t, NULL, err);
  free(zip);
  return st;
}

static void check_built(dq_text *t) {
  CHECK_EQ_STR(t->text, "Opening words of part one.\n"
                        "Caf\xC3\xA9 & bar.\n"
                        "Before the section.\n"
                        "In the second section.\n"
                        "Line\n"
                        "broken\n"
                        "a | b\n"
                        " | \n"
                        "Own Heading\n"
                        "Its text.\n");
  /* "Part Two" and "Second Section" name chapter 2, "Lost" nothing;
   * chapter 3's own heading wins over its entry */
  static const head_want want[] = {{1, "Part One", 0, 1},
                                   {2, "Part Two", 0, 3},
                                   {2, "Second Section", 0, 4},
                                   {2, "Own Heading", 0, 9}};
  CHECK_HEADINGS(t, want);
  CHECK(lines_are_text_lines(t));
}

static void test_built(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  const part v3[] = {P("mimetype", "application/epub+zip"),
                     P("META-INF/container.xml", CONTAINER),
                     P("OEBPS/content.opf", OPF3),
                     P("OEBPS/nav.xhtml", NAV),
                     P("OEBPS/text/chapter 1.xhtml", C1),
                     P("OEBPS/text/c2.xhtml", C2),
                     P("OEBPS/c3.xhtml", C3),
                     P("OEBPS/pic.png", "\x89PNG")};
  CHECK_OK(read_parts(v3, sizeof v3 / sizeof *v3, "b.epub", &t, &err), err.msg);
  if (t) {
    CHECK(text_invariants(t));
    check_built(t);
  }
  dq_text_free(t);
  t = NULL;
  const part v2[] = {P("META-INF/container.xml", CONTAINER),
                     P("OEBPS/content.opf", OPF2),
                     P("OEBPS/toc.ncx", NCX),
                     P("OEBPS/text/chapter 1.xhtml", C1),
                     P("OEBPS/text/c2.xhtml", C2),
                     P("OEBPS/c3.xhtml", C3)};
  CHECK_OK(read_parts(v2, sizeof v2 / sizeof *v2, "b.epub", &t, &err), err.msg);
  if (t)
    check_built(t);
  dq_text_free(t);
  t = NULL;
  /* a broken NCX: the book is read without contents */
  const part v2b[] = {P("META-INF/container.xml", CONTAINER),
                      P("OEBPS/content.opf", OPF2),
                      P("OEBPS/toc.ncx", "<ncx><navMap>"),
                      P("OEBPS/text/chapter 1.xhtml", C1),
                      P("OEBPS/text/c2.xhtml", C2),
                      P("OEBPS/c3.xhtml", C3)};
  CHECK_OK(read_parts(v2b, sizeof v2b / sizeof *v2b, "b.epub", &t, &err),
           err.msg);
  if (t) {
    static const head_want want[] = {{2, "Own Heading", 0, 9}};
    CHECK_HEADINGS(t, want);
  }
  dq_text_free(t);
}

/* An EPUB is known by its first bytes: the zip's first entry "mimetype"
 * holding "application/epub+zip", stored. */
static void test_detect(void) {
  char head[64] = "PK\x03\x04";
  memcpy(head + 30, "mimetypeapplication/epub+zip", 28);
  CHECK_EQ_INT(dq_detect_kind("book", head, sizeof head, NULL), DQ_DOC_EPUB);
  CHECK_EQ_INT(dq_detect_kind("book.epub", "PK\x03\x04", 4, NULL), DQ_DOC_EPUB);
  memcpy(head + 30, "mimetypeapplication/zip+epub", 28);
  CHECK(dq_detect_kind("book", head, sizeof head, NULL) != DQ_DOC_EPUB);
  char path[512];
  snprintf(path, sizeof path, "%s/tests/ingest_read/fixtures/handbook.epub",
           DQ_SOURCE_DIR);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f) {
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    dq_text *t = NULL;
    dq_error err = {0};
    CHECK_OK(dq_read_buffer("handbook", buf, n, DQ_DOC_UNKNOWN, NULL, &t, NULL,
                            &err),
             err.msg);
    if (t)
      CHECK_EQ_INT(t->kind, DQ_DOC_EPUB);
    dq_text_free(t);
  }
}

static void refused(const part *parts, size_t n_parts, dq_status want,
                    const char *needle, const char *needle2) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_EQ_INT(read_parts(parts, n_parts, "bad.epub", &t, &err), want);
  CHECK_MSG(strstr(err.msg, "bad.epub") && strstr(err.msg, needle) &&
                (!needle2 || strstr(err.msg, needle2)),
            "%s", err.msg);
  CHECK(t == NULL);
}

static void test_refusals(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_EQ_INT(dq_read_buffer("x.epub", "not a zip", 9, DQ_DOC_UNKNOWN, NULL,
                              &t, NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "x.epub") && strstr(err.msg, "not an EPUB file"),
            "%s", err.msg);
  const part none[] = {P("OEBPS/content.opf", OPF3)};
  refused(none, 1, DQ_ERR_FORMAT, "META-INF/container.xml", NULL);
  const part no_root[] = {
      P("META-INF/container.xml", "<container><rootfiles/></container>")};
  refused(no_root, 1, DQ_ERR_FORMAT, "no package", NULL);
  const part outside[] = {P("META-INF/container.xml",
                            "<container><rootfiles><rootfile full-path="
                            "\"../x.opf\"/></rootfiles></container>")};
  refused(outside, 1, DQ_ERR_FORMAT, "outside the archive", "../x.opf");
  const part no_opf[] = {P("META-INF/container.xml", CONTAINER)};
  refused(no_opf, 1, DQ_ERR_FORMAT, "OEBPS/content.opf", NULL);
  const part bad_opf[] = {P("META-INF/container.xml", CONTAINER),
                          P("OEBPS/content.opf", "<package><manifest>")};
  refused(bad_opf, 2, DQ_ERR_FORMAT, "OEBPS/content.opf", NULL);
  const part no_spine[] = {P("META-INF/container.xml", CONTAINER),
                           P("OEBPS/content.opf", "<package/>")};
  refused(no_spine, 2, DQ_ERR_FORMAT, "no spine", NULL);
  const part no_item[] = {P("META-INF/container.xml", CONTAINER),
                          P("OEBPS/content.opf",
                            "<package><manifest/><spine><itemref "
                            "idref=\"ghost\"/></spine></package>")};
  refused(no_item, 2, DQ_ERR_FORMAT, "'ghost'", "manifest");
  const part no_part[] = {P("META-INF/container.xml", CONTAINER),
                          P("OEBPS/content.opf", OPF3),
                          P("OEBPS/text/chapter 1.xhtml", C1)};
  refused(no_part, 3, DQ_ERR_FORMAT, "OEBPS/text/c2.xhtml", "not an EPUB");
  /* DRM: a chapter encrypted; fonts obfuscated only are no matter */
  static const char ENC[] =
      "<encryption xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\" "
      "xmlns:enc=\"http://www.w3.org/2001/04/xmlenc#\"><enc:EncryptedData>"
      "<enc:EncryptionMethod Algorithm=\"http://www.idpf.org/2008/embedding\"/>"
      "<enc:CipherData><enc:CipherReference URI=\"OEBPS/font.otf\"/>"
      "</enc:CipherData></enc:EncryptedData>%s</encryption>";
  static const char LOCK[] =
      "<enc:EncryptedData><enc:EncryptionMethod Algorithm=\"http://www.w3.org/"
      "2001/04/xmlenc#aes128-cbc\"/><enc:CipherData><enc:CipherReference "
      "URI=\"OEBPS/text/c2.xhtml\"/></enc:CipherData></enc:EncryptedData>";
  char fonts[1024], drm[1024];
  snprintf(fonts, sizeof fonts, ENC, "");
  snprintf(drm, sizeof drm, ENC, LOCK);
  part book[] = {{"META-INF/container.xml", CONTAINER, sizeof CONTAINER - 1},
                 {"META-INF/encryption.xml", fonts, strlen(fonts)},
                 {"OEBPS/content.opf", OPF2, sizeof OPF2 - 1},
                 {"OEBPS/text/chapter 1.xhtml", C1, sizeof C1 - 1},
                 {"OEBPS/text/c2.xhtml", C2, sizeof C2 - 1},
                 {"OEBPS/c3.xhtml", C3, sizeof C3 - 1}};
  dq_text *t2 = NULL;
  CHECK_OK(read_parts(book, 6, "fonts.epub", &t2, &err), err.msg);
  dq_text_free(t2);
  book[1] = (part){"META-INF/encryption.xml", drm, strlen(drm)};
  refused(book, 6, DQ_ERR_UNSUPPORTED, "OEBPS/text/c2.xhtml is encrypted",
          "AES-128");
}

int main(void) {
  test_fixtures();
  test_built();
  test_detect();
  test_refusals();
  return TEST_EXIT();
}
