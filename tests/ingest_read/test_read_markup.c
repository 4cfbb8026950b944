/*
 * test_read_markup.c - HTML and XML readers: text of block elements on their
 * own lines, source line of each word (including text nodes longer than
 * libxml2's 300-byte delivery chunks), h1..h6 headings, dropped script and
 * style, table rows (a cell's paragraphs and lists on the row's line),
 * notes ("rent[1]", "[1] Due monthly."), encodings, malformed XML, and
 * the safety rules (no
 * external entity is read, no entity expansion bomb). Line numbers were
 * counted by hand in the sources below.
 */
#include "read_util.h"
#include "test.h"

#include <time.h>

static dq_text *rd(const char *name, const char *data, dq_doc_kind kind) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read_buffer(name, data, strlen(data), kind, NULL, &t, NULL,
                          &err),
           err.msg);
  CHECK(text_invariants(t));
  return t;
}

static void test_html(void) {
  const char *html =
      "<!DOCTYPE html>\n"                        /* 1 */
      "<html><head><title>Doc Title</title>\n"   /* 2 */
      "<style>p { color: red }</style></head>\n" /* 3 */
      "<body>\n"                                 /* 4 */
      "<h1>Main\n"                               /* 5 */
      "Heading</h1>\n"                           /* 6 */
      "<p>First para with <b>bold</b>\n"         /* 7 */
      "continues here.</p>\n"                    /* 8 */
      "<script>var secret = 1;</script>\n"       /* 9 */
      "<table><tr><td>A1</td><td>B1</td></tr>\n" /* 10 */
      "<tr><th>A2</th><td><p>B2</p><ul><li>x<li>y</ul></td></tr></"
      "table>\n"                                              /* 11 */
      "<p>caf&eacute; &amp; caf\xC3\xA9<br>after break</p>\n" /* 12 */
      "<h3 id=x>Small <i>one</i></h3><div>in div</div>\n"     /* 13 */
      "<!-- a comment -->\n"                                  /* 14 */
      "<pre>keep   spaces\n"                                  /* 15 */
      "  and lines</pre>\n"                                   /* 16 */
      "</body></html>\n";
  dq_text *t = rd("page.html", html, DQ_DOC_UNKNOWN);
  CHECK_EQ_INT(t->kind, DQ_DOC_HTML);
  const char *want = "Doc Title\n"
                     "Main Heading\n"
                     "First para with bold continues here.\n"
                     "A1 | B1\n"
                     "A2 | B2 x y\n"
                     "caf\xC3\xA9 & caf\xC3\xA9\n"
                     "after break\n"
                     "Small one\n"
                     "in div\n"
                     "keep   spaces\n"
                     "  and lines\n";
  CHECK_EQ_STR(t->text, want);
  CHECK_EQ_INT(line_of(t, "Doc Title"), 2);
  CHECK_EQ_INT(line_of(t, "Main"), 5);
  CHECK_EQ_INT(line_of(t, "Heading"), 6);
  CHECK_EQ_INT(line_of(t, "First"), 7);
  CHECK_EQ_INT(line_of(t, "bold"), 7);
  CHECK_EQ_INT(line_of(t, "continues"), 8);
  CHECK_EQ_INT(line_of(t, "A1"), 10);
  CHECK_EQ_INT(line_of(t, "B2"), 11);
  CHECK_EQ_INT(line_of(t, "caf"), 12);
  CHECK_EQ_INT(line_of(t, "after break"), 12);
  CHECK_EQ_INT(line_of(t, "in div"), 13);
  CHECK_EQ_INT(line_of(t, "keep"), 15);
  CHECK_EQ_INT(line_of(t, "and lines"), 16);
  CHECK(find_in(t, "secret") < 0 && find_in(t, "color") < 0 &&
        find_in(t, "comment") < 0);
  CHECK_EQ_INT(t->n_headings, 2);
  if (t->n_headings == 2) {
    CHECK_EQ_INT(t->headings[0].level, 1);
    CHECK_EQ_STR(t->headings[0].title, "Main Heading");
    CHECK_EQ_INT(t->headings[0].offset, (size_t)find_in(t, "Main"));
    CHECK_EQ_INT(t->headings[1].level, 3);
    CHECK_EQ_STR(t->headings[1].title, "Small one");
  }
  dq_text_free(t);

  /* a text node of 60 lines (~2.4 KB, several parser chunks): each word
   * keeps its own source line */
  char big[8192];
  size_t n = (size_t)snprintf(big, sizeof big, "<html><body>\n<p>");
  for (int i = 1; i <= 60; i++)
    n += (size_t)snprintf(big + n, sizeof big - n,
                          "w%02d filler words to make it long\n", i);
  snprintf(big + n, sizeof big - n, "</p></body></html>\n");
  t = rd("long.html", big, DQ_DOC_HTML);
  /* "w01" is on source line 2 (after "<p>"), "wNN" on line NN + 1 */
  CHECK_EQ_INT(line_of(t, "w01"), 2);
  CHECK_EQ_INT(line_of(t, "w17"), 18);
  CHECK_EQ_INT(line_of(t, "w60"), 61);
  dq_text_free(t);

  /* permalink marks (Sphinx's, Node's, an icon's) are no text; a local
   * link with words is */
  t = rd("perma.html",
         "<html><body><h2>1. Copyright<a class=\"headerlink\""
         " href=\"#copyright\">\xC2\xB6</a></h2>\n"
         "<h3>File system<span><a class=\"mark\" href=\"#fs\">#</a>"
         "</span></h3>\n<h3>Icons<a href=\"#i\"><svg></svg></a></h3>\n"
         "<p>See <a href=\"#fs\">the file system</a> or <a href=\"#x\">"
         "3</a>.</p></body></html>",
         DQ_DOC_HTML);
  CHECK_EQ_STR(t->text, "1. Copyright\nFile system\nIcons\n"
                        "See the file system or 3.\n");
  CHECK_EQ_INT(t->n_headings, 3);
  if (t->n_headings == 3) {
    CHECK_EQ_STR(t->headings[0].title, "1. Copyright");
    CHECK_EQ_STR(t->headings[1].title, "File system");
  }
  dq_text_free(t);

  /* Latin-1 declared in a meta tag */
  t = rd("l.html",
         "<html><head><meta charset=\"iso-8859-1\"></head><body>"
         "<p>na\xEFve</p></body></html>",
         DQ_DOC_HTML);
  CHECK_EQ_STR(t->text, "na\xC3\xAFve\n");
  dq_text_free(t);

  /* empty and whitespace-only HTML give empty text */
  t = rd("e.html", " \n ", DQ_DOC_HTML);
  CHECK(t && t->n_bytes == 0);
  dq_text_free(t);
}

/* A data cell's paragraphs and lists join its row's line; a cell that
 * lays the page out (a heading in it, or a long text) keeps their lines. */
static void test_html_cells(void) {
  char long_p[600];
  memset(long_p, 'x', 450);
  long_p[450] = '\0';
  char html[2048];
  snprintf(html, sizeof html,
           "<table><tr><td><p>v6.0.0</p></td><td><p>Throws now.</p><ul>"
           "<li>a</li><li>b</li></ul></td></tr>\n"
           "<tr><td><h2>Menu</h2><p>Home</p><p>News</p></td></tr>\n"
           "<tr><td><p>%s</p><p>After.</p></td></tr></table>",
           long_p);
  dq_text *t = rd("cells.html", html, DQ_DOC_HTML);
  char want[2048];
  snprintf(want, sizeof want,
           "v6.0.0 | Throws now. a b\nMenu\nHome\nNews\n%s\nAfter.\n", long_p);
  CHECK_EQ_STR(t->text, want);
  CHECK_EQ_INT(line_of(t, "News"), 2);
  dq_text_free(t);
}

/* An ordered list's lettered and roman items carry their labels, "(c)"
 * and "(iv)" (the type attribute, or CSS's list-style-type), counted from
 * the ol's start or an item's value; a nested list counts on its own;
 * numbered items and bullets get none. */
static void test_html_lists(void) {
  const char *html =
      "<p>The Tenant shall:</p><ol type=\"a\"><li>pay;</li>"
      "<li value=\"5\">repair:<ol style=\"list-style-type: lower-roman\">"
      "<li>inside;</li><li>outside;</li></ol></li><li>insure.</li></ol>"
      "<ol start=\"3\"><li><p>Third.</p></li></ol><ul><li>Bullet.</li></ul>"
      "<ol type=\"I\"><li>Part.</li></ol>";
  dq_text *t = rd("lists.html", html, DQ_DOC_HTML);
  CHECK_EQ_STR(t->text, "The Tenant shall:\n"
                        "(a) pay;\n"
                        "(e) repair:\n"
                        "(i) inside;\n"
                        "(ii) outside;\n"
                        "(f) insure.\n"
                        "Third.\n"
                        "Bullet.\n"
                        "(I) Part.\n");
  dq_text_free(t);
}

/* Notes as pandoc's HTML5 writes them (a doc-noteref link holding a sup,
 * a doc-endnotes section whose ol numbers the notes), as Word's HTML does
 * (a local link whose text is "[2]"), and what is no note: an exponent,
 * a sup linking elsewhere, a long superscript link. */
static void test_html_notes(void) {
  const char *html =
      "<html><body>\n"
      "<p>Rent<a href=\"#fn1\" class=\"footnote-ref\" role=\"doc-noteref\">"
      "<sup>1</sup></a> is due.</p>\n" /* 2 */
      "<p>Area 5 m<sup>2</sup>, see<sup><a href=\"https://x.org/\">3</a>"
      "</sup> and <sup><a href=\"#s\">section two</a></sup>.</p>\n"     /* 3 */
      "<p>Word<a href=\"#_ftn2\" name=\"_ftnref2\">[2]</a> note.</p>\n" /* 4 */
      "<section id=\"footnotes\" role=\"doc-endnotes\"><hr/><ol>\n"
      "<li id=\"fn1\"><p>Due monthly.<a href=\"#fnref1\" "
      "role=\"doc-backlink\">\xE2\x86\xA9</a></p></li>\n" /* 6 */
      "</ol></section>\n"
      "<div id=\"ftn2\"><p><a href=\"#_ftnref2\" name=\"_ftn2\">[2]</a> "
      "Word's note.</p></div>\n" /* 8 */
      "</body></html>\n";
  dq_text *t = rd("notes.html", html, DQ_DOC_UNKNOWN);
  CHECK_EQ_STR(t->text, "Rent[1] is due.\n"
                        "Area 5 m2, see3 and section two.\n"
                        "Word[2] note.\n"
                        "[1] Due monthly.\n"
                        "[2] Word's note.\n");
  CHECK_EQ_INT(line_of(t, "[1] is"), 2);
  CHECK_EQ_INT(line_of(t, "[1] Due"), 6);
  dq_text_free(t);
}

static void test_xml(void) {
  const char *xml = "<?xml version=\"1.0\"?>\n"                   /* 1 */
                    "<doc>\n"                                     /* 2 */
                    "  <title>XML Title</title>\n"                /* 3 */
                    "  <para>Some <em>mixed</em> content\n"       /* 4 */
                    "  across lines &amp; more</para>\n"          /* 5 */
                    "  <list><item>one</item><item>two</item>\n"  /* 6 */
                    "  <item><![CDATA[<three>]]></item></list>\n" /* 7 */
                    "  <?pi ignored?><!-- note -->\n"             /* 8 */
                    "</doc>\n";
  dq_text *t = rd("d.xml", xml, DQ_DOC_UNKNOWN);
  CHECK_EQ_INT(t->kind, DQ_DOC_XML);
  CHECK_EQ_STR(t->text, "XML Title\n"
                        "Some mixed content across lines & more\n"
                        "one\n"
                        "two\n"
                        "<three>\n");
  CHECK_EQ_INT(line_of(t, "XML Title"), 3);
  CHECK_EQ_INT(line_of(t, "mixed"), 4);
  CHECK_EQ_INT(line_of(t, "across"), 5);
  CHECK_EQ_INT(line_of(t, "two"), 6);
  CHECK_EQ_INT(line_of(t, "<three>"), 7);
  dq_text_free(t);

  /* malformed: refused, message names the file and a line */
  dq_error err = {0};
  t = NULL;
  const char *bad = "<a>\n<b>\n</a>\n";
  CHECK_EQ_INT(dq_read_buffer("bad.xml", bad, strlen(bad), DQ_DOC_XML, NULL,
                              &t, NULL, &err),
               DQ_ERR_FORMAT);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, "bad.xml") && strstr(err.msg, "line 3"), "%s",
            err.msg);
  /* libxml2 quotes the comment, newlines and all: one line here */
  const char *bad2 = "<a>\n<!-- \nA bad -- comment\n-->\n</a>\n";
  CHECK_EQ_INT(dq_read_buffer("bad2.xml", bad2, strlen(bad2), DQ_DOC_XML, NULL,
                              &t, NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "bad2.xml") && strstr(err.msg, "omment") &&
                !strchr(err.msg, '\n') && !strchr(err.msg, '\t') &&
                !strstr(err.msg, "  "),
            "%s", err.msg);
  CHECK_EQ_INT(dq_read_buffer("empty.xml", "", 0, DQ_DOC_XML, NULL, &t, NULL,
                              &err),
               DQ_ERR_FORMAT);

  /* external entity: never read (the file holds a marker we look for) */
  char *dir = scratch_dir("xxe");
  CHECK(write_str(dir, "secret.txt", "XXE_SECRET_MARKER") == 0);
  char doc[8192];
  snprintf(doc, sizeof doc,
           "<?xml version=\"1.0\"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM "
           "\"file://%s/secret.txt\">]>\n<d>before &x; after</d>\n",
           dir);
  dq_text *x = NULL;
  dq_status st = dq_read_buffer("xxe.xml", doc, strlen(doc), DQ_DOC_XML, NULL,
                                &x, NULL, &err);
  CHECK(st == DQ_OK || st == DQ_ERR_FORMAT);
  if (x) {
    CHECK(find_in(x, "XXE_SECRET_MARKER") < 0);
    CHECK(find_in(x, "before") >= 0);
  }
  dq_text_free(x);
  rm_tree(dir);
  free(dir);

  /* billion laughs: 10^9 "lol" if expanded; must end fast and small */
  const char *lol =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n"
      "<!ENTITY lol \"lol\">\n"
      "<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
      "<!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;"
      "&lol1;\">\n"
      "<!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"
      "&lol2;\">\n"
      "<!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;"
      "&lol3;\">\n"
      "<!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;"
      "&lol4;\">\n"
      "<!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;"
      "&lol5;\">\n"
      "<!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;"
      "&lol6;\">\n"
      "<!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;"
      "&lol7;\">\n"
      "<!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;"
      "&lol8;\">\n"
      "]>\n<lolz>&lol9;</lolz>\n";
  clock_t c0 = clock();
  x = NULL;
  st = dq_read_buffer("lol.xml", lol, strlen(lol), DQ_DOC_XML, NULL, &x, NULL,
                      &err);
  double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
  CHECK(st == DQ_OK || st == DQ_ERR_FORMAT);
  CHECK(!x || x->n_bytes < 4096);
  CHECK_MSG(secs < 2.0, "billion laughs took %.2f s", secs);
  dq_text_free(x);

  /* nesting over DQ_XML_MAX_DEPTH is refused (libxml2 or our walk) */
  char *deep = malloc(20000);
  size_t k = 0;
  for (int i = 0; i < 300; i++)
    k += (size_t)sprintf(deep + k, "<a>");
  for (int i = 0; i < 300; i++)
    k += (size_t)sprintf(deep + k, "</a>");
  x = NULL;
  st = dq_read_buffer("deep.xml", deep, k, DQ_DOC_XML, NULL, &x, NULL, &err);
  CHECK(st == DQ_ERR_FORMAT || st == DQ_ERR_LIMIT);
  dq_text_free(x);
  free(deep);
}

int main(void) {
  test_html();
  test_html_cells();
  test_html_notes();
  test_html_lists();
  test_xml();
  return TEST_EXIT();
}
