/*
 * test_cite_parse.c - citations as docqa writes them (cite.c dq_where)
 * read back by show.c's dq_cite_parse: every form, with an answer's "[n] "
 * before and a section after; paths with blanks, parentheses, colons and
 * location-like words in them; what is not a location left in the path;
 * numbers out of range refused as locations. And a round trip: each
 * dq_where form of random pages and lines, behind a random path, parses
 * back to that path, page and lines.
 */
#include "pipeline.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect(const char *s, const char *path, const char *unit,
                   int page, int a, int b) {
  dq_cite_ref c;
  CHECK_MSG(dq_cite_parse(s, &c) == 0, "%s", s);
  CHECK_MSG(!strcmp(c.path, path), "%s: path '%s', want '%s'", s, c.path,
            path);
  CHECK_MSG((unit == NULL) == (c.unit == NULL) &&
                (!unit || !strcmp(unit, c.unit)),
            "%s: unit %s, want %s", s, c.unit ? c.unit : "none",
            unit ? unit : "none");
  CHECK_MSG(c.page == page && c.line_start == a && c.line_end == b,
            "%s: %d %d-%d, want %d %d-%d", s, c.page, c.line_start,
            c.line_end, page, a, b);
}

int main(void) {
  expect("contracts/msa.txt:159-171", "contracts/msa.txt", NULL, 0, 159, 171);
  expect("msa.txt:12", "msa.txt", NULL, 0, 12, 12);
  expect("lease.pdf p.4", "lease.pdf", "page", 4, 0, 0);
  expect("lease.pdf p.4:3-9", "lease.pdf", "page", 4, 3, 9);
  expect("lease.pdf page 4", "lease.pdf", "page", 4, 0, 0);
  expect("deck.pptx slide 3", "deck.pptx", "slide", 3, 0, 0);
  expect("deck.pptx slide 3:2-4", "deck.pptx", "slide", 3, 2, 4);
  expect("book.xlsx sheet 2 rows 14-20", "book.xlsx", "sheet", 2, 14, 20);
  expect("book.xlsx sheet 2 row 15", "book.xlsx", "sheet", 2, 15, 15);
  expect("book.xlsx sheet 2", "book.xlsx", "sheet", 2, 0, 0);
  /* as answers and search print them */
  expect("[2] lease.pdf p.4 (7 BREAK CLAUSE)", "lease.pdf", "page", 4, 0, 0);
  expect("  [12] msa.txt:1-3 (Article 9 > 9.1 (a))  ", "msa.txt", NULL, 0, 1,
         3);
  expect("book.xlsx sheet 1 rows 3-4 (Sheet: Revenue > columns: A | B)",
         "book.xlsx", "sheet", 1, 3, 4);
  expect("deck.pptx  slide  3", "deck.pptx", "slide", 3, 0, 0);
  /* xref's sites, "path:LINE:COL: kind in scope: text" */
  expect("repo/src/main.c:32:5: call in main: tax_compute(x);",
         "repo/src/main.c", NULL, 0, 32, 32);
  expect("contracts/commercial_lease.pdf p.2:1:2: term in 1.1: \"Term\" "
         "means ...",
         "contracts/commercial_lease.pdf", "page", 2, 1, 1);
  expect("a.c:7:3", "a.c", NULL, 0, 7, 7);
  expect("lease.pdf p.2:1:2: use in 1: see p.5", "lease.pdf", "page", 2, 1, 1);
  expect("a:1:b.c:7:3: def: x", "a:1:b.c", NULL, 0, 7, 7);
  /* paths with blanks, parentheses, colons, location words */
  expect("Board Deck (final).pptx slide 3", "Board Deck (final).pptx",
         "slide", 3, 0, 0);
  expect("notes p.3 draft.pdf p.4:1-2", "notes p.3 draft.pdf", "page", 4, 1,
         2);
  expect("a:b/c.txt:7", "a:b/c.txt", NULL, 0, 7, 7);
  expect("My Contract.docx", "My Contract.docx", NULL, 0, 0, 0);
  expect("report (copy).docx", "report (copy).docx", NULL, 0, 0, 0);
  expect("[x] a.txt", "[x] a.txt", NULL, 0, 0, 0);
  /* not locations: left in the path */
  expect("lease.pdf p.4 extra", "lease.pdf p.4 extra", NULL, 0, 0, 0);
  expect("a.txt:12-", "a.txt:12-", NULL, 0, 0, 0);
  expect("a.txt:3-4:5: x", "a.txt:3-4:5: x", NULL, 0, 0, 0);
  expect("a.txt:9-3", "a.txt:9-3", NULL, 0, 0, 0);
  expect("a.txt:0", "a.txt:0", NULL, 0, 0, 0);
  expect("a.txt:99999999999", "a.txt:99999999999", NULL, 0, 0, 0);
  expect("lease.pdf p.0", "lease.pdf p.0", NULL, 0, 0, 0);
  expect("book.xlsx sheet 2 rows", "book.xlsx sheet 2 rows", NULL, 0, 0, 0);
  expect("p.4", "p.4", NULL, 0, 0, 0); /* no path before it */
  dq_cite_ref c;
  CHECK(dq_cite_parse("", &c) != 0);
  CHECK(dq_cite_parse("   ", &c) != 0);
  CHECK(dq_cite_parse("[1] ", &c) != 0);
  char *big = malloc(8192);
  if (big) {
    memset(big, 'a', 8191);
    big[8191] = '\0';
    CHECK(dq_cite_parse(big, &c) != 0);
    free(big);
  }
  /* round trip through dq_where */
  static const char *const units[] = {"page", "slide", "sheet"};
  srand(5);
  for (int i = 0; i < 2000; i++) {
    const char *unit = units[rand() % 3];
    int32_t page = rand() % 3 ? 1 + rand() % 500 : 0;
    int32_t a = 1 + rand() % 100000, b = a + rand() % 50;
    char path[64], w[DQ_WHERE_MAX], s[160];
    snprintf(path, sizeof path, "dir %d/file (%d).x", rand() % 9, i);
    dq_where(w, unit, page, a, b);
    snprintf(s, sizeof s, "[%d] %s%s (Section %d)", 1 + i % 9, path, w, i);
    CHECK(dq_cite_parse(s, &c) == 0);
    CHECK_MSG(!strcmp(c.path, path), "%s -> %s", s, c.path);
    CHECK_EQ_INT(c.page, page);
    if (!page || !strcmp(unit, "sheet")) { /* their lines are written */
      CHECK_EQ_INT(c.line_start, a);
      CHECK_EQ_INT(c.line_end, b);
    }
  }
  /* random texts of the citations' letters: parsed or refused, never past
   * their end; a path parsed is a piece of the text, lines in order */
  static const char abc[] = "[]0123456789 :-p.slideheetrow()ab/\t";
  for (int r = 0; r < 20000; r++) {
    char t[96];
    size_t len = (size_t)(rand() % (int)sizeof t);
    for (size_t i = 0; i < len; i++)
      t[i] = abc[rand() % (int)(sizeof abc - 1)];
    t[len] = '\0';
    if (dq_cite_parse(t, &c) != 0)
      continue;
    CHECK_MSG(c.path[0] && strstr(t, c.path) != NULL, "'%s' -> '%s'", t,
              c.path);
    CHECK(c.line_start <= c.line_end && c.page >= 0 && c.line_start >= 0);
    CHECK(!c.page || c.unit);
  }
  return TEST_EXIT();
}
