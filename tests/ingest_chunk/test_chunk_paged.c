/*
 * test_chunk_paged.c - contract structure from reader output, built by hand:
 * a paged text (PDF-like marks: line within page) where a running footer
 * "Page 1 of 2" ends page 1 and the next clause heading opens page 2 (a
 * heading, and chunks never span pages); reader headings (DOCX-like) with a
 * document title that must not prefix every section path; and Markdown
 * headings without a recognised form ("## Signatures") ranked like the
 * "## Article N" headings of the same level, their closing '#'s dropped; a
 * table of contents' entries
 * ("1. SCOPE ....... 2") that name clauses without opening them; and '#'
 * lines that are not Markdown headings (in a PDF, in a code fence).
 * Expected chunks, lines, pages,
 * sections and columns were worked out by hand.
 */
#include "chunk_test.h"

/* Marks: one per line with the given (line, page) pairs. */
static dq_text *paged_text(const char *s, const uint32_t (*lp)[2]) {
  dq_text *t = text_of(s, DQ_DOC_PDF, NULL);
  for (size_t i = 0; i < t->n_marks; i++) {
    t->marks[i].line = lp[i][0];
    t->marks[i].page = lp[i][1];
  }
  t->n_pages = lp[t->n_marks - 1][1];
  return t;
}

static void test_paged(void) {
  const char *s = "LEASE\n"                                                /* p1 l1 */
                  "1. GRANT\n"                                             /* p1 l2 */
                  "1.1 The Landlord lets the premises (the \"Premises\") to the Tenant\n" /* p1 l3 */
                  "for the Term, and the rent runs from the\n"             /* p1 l4 */
                  "Page 1 of 2\n"                                          /* p1 l5 */
                  "2. BREAK\n"                                             /* p2 l1 */
                  "2.1 The Tenant may end the Premises lease.\n";          /* p2 l2 */
  static const uint32_t lp[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1},
                                   {5, 1}, {1, 2}, {2, 2}};
  dq_text *t = paged_text(s, lp);
  dq_chunk_opts o = {.force_kind = DQ_CHUNK_CONTRACT};
  dq_doc_parts *p = NULL;
  dq_error err = {0};
  CHECK_OK(dq_chunk_document(t, "lease.pdf", &o, &p, &err), dq_error_msg(&err));
  CHECK_EQ_INT(p->n_chunks, 3);
  CHECK_CHUNK(p, 0, 1, 1, "");
  CHECK_CHUNK(p, 1, 2, 5, "1 GRANT");
  CHECK_CHUNK(p, 2, 1, 2, "2 BREAK");
  if (p->n_chunks == 3) {
    CHECK_EQ_INT(p->chunks[1].page_start, 1);
    CHECK_EQ_INT(p->chunks[1].page_end, 1);
    CHECK_EQ_INT(p->chunks[2].page_start, 2);
    CHECK_EQ_INT(p->chunks[2].page_end, 2);
  }
  CHECK_SYM(p, "2", "section", 1, 1, "");
  CHECK_SYM(p, "2.1", "section", 2, 1, "2 BREAK");
  CHECK_SYM(p, "Premises", "term", 3, 42, "1.1");
  CHECK_REF(p, "Premises", "use", 2, 28, "2.1");
  dq_doc_parts_free(p);

  /* a PDF's headings from its fonts: the clause numbers stay its
   * structure; the title (the only heading of the largest font) alone is
   * no chunk, it joins the first clause as a reader's title does */
  static const char *const heads[] = {"LEASE", "2. BREAK"};
  t->headings = calloc(2, sizeof *t->headings);
  t->n_headings = 2;
  for (int i = 0; i < 2; i++) {
    t->headings[i].offset = (size_t)(strstr(t->text, heads[i]) - t->text);
    t->headings[i].level = 1 + i;
    t->headings[i].title = strdup(heads[i]);
  }
  p = NULL;
  CHECK_OK(dq_chunk_document(t, "lease.pdf", &o, &p, &err), dq_error_msg(&err));
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 5, "1 GRANT");
  CHECK_CHUNK(p, 1, 1, 2, "2 BREAK");
  CHECK_SYM(p, "2", "section", 1, 1, "");
  dq_doc_parts_free(p);

  /* Small budget and overlap: no chunk spans pages, overlap included. */
  o.max_tokens = 40; /* 160 bytes */
  o.overlap_tokens = 10;
  p = NULL;
  CHECK_OK(dq_chunk_document(t, "lease.pdf", &o, &p, &err), dq_error_msg(&err));
  CHECK(p->n_chunks >= 3);
  for (size_t i = 0; p && i < p->n_chunks; i++)
    CHECK(p->chunks[i].page_start == p->chunks[i].page_end);
  const dq_chunk *last = p->n_chunks ? &p->chunks[p->n_chunks - 1] : NULL;
  if (last) { /* page 2 starts its own chunk: no overlap from page 1 */
    CHECK(strncmp(last->text, "2. BREAK", 8) == 0);
    CHECK_EQ_INT(last->line_start, 1);
  }
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_title(void) {
  const char *s = "AGREEMENT\n"                                  /* 1 */
                  "This agreement (the \"Agreement\") is made.\n" /* 2 */
                  "1. Scope\n"                                   /* 3 */
                  "1.1 The \"Work\" is the work.\n"              /* 4 */
                  "2. Fees\n"                                    /* 5 */
                  "2.1 Fees for the Work under Section 1.1.\n"   /* 6 */
                  "Signatures\n"                                 /* 7 */
                  "Signed.\n";                                   /* 8 */
  dq_text *t = text_of(s, DQ_DOC_DOCX, NULL);
  static const struct {
    int level;
    const char *title;
  } hs[] = {{1, "AGREEMENT"}, {2, "1. Scope"}, {2, "2. Fees"},
            {2, "Signatures"}};
  t->headings = calloc(4, sizeof *t->headings);
  t->n_headings = 4;
  for (int i = 0; i < 4; i++) { /* each title opens a line */
    const char *at = strstr(t->text, hs[i].title);
    CHECK(at && (at == t->text || at[-1] == '\n'));
    t->headings[i].offset = at ? (size_t)(at - t->text) : 0;
    t->headings[i].level = hs[i].level;
    t->headings[i].title = strdup(hs[i].title);
  }
  dq_doc_parts *p = chunk_of(t, "a.docx", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 4);
  CHECK_CHUNK(p, 0, 1, 2, "AGREEMENT");
  CHECK_CHUNK(p, 1, 3, 4, "1 Scope");
  CHECK_CHUNK(p, 2, 5, 6, "2 Fees");
  CHECK_CHUNK(p, 3, 7, 8, "Signatures");
  CHECK_SYM(p, "1.1", "section", 4, 1, "1 Scope");
  CHECK_REF(p, "1.1", "xref", 6, 37, "2.1");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_md_levels(void) {
  const char *s = "## Article 1. Scope ##\n"                      /* 1 */
                  "\n"                                            /* 2 */
                  "1.1 The \"Work\" is defined in Section 1.2.\n" /* 3 */
                  "\n"                                            /* 4 */
                  "1.2 The Work is done.\n"                       /* 5 */
                  "\n"                                            /* 6 */
                  "## Signatures ##\n"                            /* 7 */
                  "\n"                                            /* 8 */
                  "Signed.\n";                                    /* 9 */
  dq_text *t = text_of(s, DQ_DOC_MARKDOWN, NULL);
  dq_doc_parts *p = contract_of(t, "a.md");
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 5, "Article 1 Scope");
  CHECK_CHUNK(p, 1, 7, 9, "Signatures");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* A PDF's font heading opens a paragraph where a numbered heading may
 * stand: "2. FEES" after an example's last line (no sentence's end). */
static void test_font_paragraph(void) {
  const char *s = "1. SCOPE\n"                            /* p1 l1 */
                  "1.1 The Supplier runs the tool thus\n" /* p1 l2 */
                  "  tool --run --all\n"                  /* p1 l3 */
                  "2. FEES\n"                             /* p1 l4 */
                  "2.1 The Customer pays.\n";             /* p1 l5 */
  static const uint32_t lp[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}};
  dq_text *t = paged_text(s, lp);
  dq_doc_parts *p = contract_of(t, "a.pdf");
  CHECK(find_sym(p, "2", "section") == NULL); /* the text alone: no */
  dq_doc_parts_free(p);
  t->headings = calloc(1, sizeof *t->headings);
  t->n_headings = 1;
  t->headings[0] =
      (dq_heading){(size_t)(strstr(s, "2. FEES") - s), 1, strdup("2. FEES")};
  p = contract_of(t, "a.pdf");
  CHECK_SYM(p, "2", "section", 4, 1, "");
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 1, 4, 5, "2 FEES");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* A manual's font headings: "1 Introduction" (no period, not in
 * capitals) is a numbered heading in a heading's font; a heading without a
 * number ranks as its font's numbered ones ("Concept Index" with
 * "Appendix A", outside it) or, deeper than an open section's font, one
 * below it ("create element" under "2.1"); a title page's line before any
 * number is no heading. A heading below a page's emptied running header
 * names its chunk. */
static void test_font_manual(void) {
  const char *s = "Libfoo Manual\n"                      /* p1 l1, L1 */
                  "1 Introduction\n"                     /* p1 l2, L1 */
                  "Libfoo reads trees. See Section 2.\n" /* p1 l3 */
                  "2 Functions\n"                        /* p1 l4, L1 */
                  "2.1 Field functions\n"                /* p1 l5, L2 */
                  "create element\n"                     /* p1 l6, L3 */
                  "int create_element (node *n);\n"      /* p1 l7 */
                  "   \n"                                /* p2 l1 */
                  "delete element\n"                     /* p2 l2, L3 */
                  "int delete_element (node *n);\n"      /* p2 l3 */
                  "Appendix A Copying\n"                 /* p2 l4, L1 */
                  "The licence text.\n"                  /* p2 l5 */
                  "Concept Index\n"                      /* p2 l6, L1 */
                  "trees . . . . . . 1\n";               /* p2 l7 */
  static const uint32_t lp[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1},
                                   {6, 1}, {7, 1}, {1, 2}, {2, 2}, {3, 2},
                                   {4, 2}, {5, 2}, {6, 2}, {7, 2}};
  dq_text *t = paged_text(s, lp);
  static const struct {
    const char *title;
    int level;
  } hs[] = {{"Libfoo Manual", 1},      {"1 Introduction", 1},
            {"2 Functions", 1},        {"2.1 Field functions", 2},
            {"create element", 3},     {"delete element", 3},
            {"Appendix A Copying", 1}, {"Concept Index", 1}};
  size_t n = sizeof hs / sizeof *hs;
  t->headings = calloc(n, sizeof *t->headings);
  t->n_headings = n;
  for (size_t i = 0; i < n; i++)
    t->headings[i] = (dq_heading){(size_t)(strstr(s, hs[i].title) - s),
                                  hs[i].level, strdup(hs[i].title)};
  dq_doc_parts *p = contract_of(t, "manual.pdf");
  CHECK_SYM(p, "1", "section", 2, 1, "");
  CHECK_SYM(p, "2.1", "section", 5, 1, "2 Functions");
  CHECK(find_sym(p, "create element", "section") == NULL);
  CHECK_EQ_INT(p->n_chunks, 6);
  CHECK_CHUNK(p, 0, 1, 1, "");
  CHECK_CHUNK(p, 1, 2, 3, "1 Introduction");
  CHECK_CHUNK(p, 2, 4, 7, "2 Functions");
  CHECK_CHUNK(p, 3, 2, 3, "2 Functions > 2.1 Field functions > delete element");
  CHECK_CHUNK(p, 4, 4, 5, "Appendix A Copying");
  CHECK_CHUNK(p, 5, 6, 7, "Concept Index");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* A list numbered from 1 inside a clause ("1. "Adaptation" means ...") is
 * paragraphs of that clause, not clauses 1, 2, ... again: the clause
 * numbers go on after it ("2. Fair Dealing Rights."), an item after a line
 * ending in "and," counts too, a list indented deeper is the clause's,
 * and a titled next clause number wins over the list's ("4. Restrictions."
 * after the list's "3."). Run-in titles ("Fair Dealing Rights.") are the
 * clauses' labels. */
static void test_restarted_list(void) {
  const char *s = "1. Definitions\n"                                    /* 1 */
                  "\n"                                                  /* 2 */
                  "1. \"Adaptation\" means a work based on the Work.\n" /* 3 */
                  "2. \"Collection\" means a set of works.\n"           /* 4 */
                  "\n"                                                  /* 5 */
                  "2. Fair Dealing Rights. Nothing here limits it.\n"   /* 6 */
                  "\n"                                                  /* 7 */
                  "3. License Grant. The Licensor grants:\n"            /* 8 */
                  "1.  to Reproduce the Work, and,\n"                   /* 9 */
                  "2.  to Distribute it.\n"                             /* 10 */
                  "3.  For the avoidance of doubt:\n"                   /* 11 */
                  "    1.  Waivable Schemes\n"                          /* 12 */
                  "\n"                                                  /* 13 */
                  "4. Restrictions. The licence is limited.\n"          /* 14 */
                  "\n"                                                  /* 15 */
                  "7. Disclaimer of Warranty. Unless required by law\n" /* 16 */
                  "the Work is provided AS IS.\n";                      /* 17 */
  dq_text *t = text_of(s, DQ_DOC_TEXT, NULL);
  dq_doc_parts *p = contract_of(t, "cc.txt");
  size_t n_sec = 0;
  for (size_t i = 0; p && i < p->n_symbols; i++)
    n_sec += !strcmp(p->symbols[i].kind, "section");
  CHECK_EQ_INT(n_sec, 5);
  CHECK_SYM(p, "1", "section", 1, 1, "");
  CHECK_SYM(p, "2", "section", 6, 1, "");
  CHECK_SYM(p, "3", "section", 8, 1, "");
  CHECK_SYM(p, "4", "section", 14, 1, "");
  CHECK_SYM(p, "7", "section", 16, 1, "");
  CHECK_EQ_INT(p->n_chunks, 5);
  CHECK_CHUNK(p, 0, 1, 4, "1 Definitions");
  CHECK_CHUNK(p, 1, 6, 6, "2 Fair Dealing Rights");
  CHECK_CHUNK(p, 2, 8, 12, "3 License Grant");
  CHECK_CHUNK(p, 3, 14, 14, "4 Restrictions");
  CHECK_CHUNK(p, 4, 16, 17, "7 Disclaimer of Warranty");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_toc(void) {
  const char *s = "CONTENTS\n"                                    /* 1 */
                  "\n"                                            /* 2 */
                  "1. SCOPE .................... 2\n"             /* 3 */
                  "\n"                                            /* 4 */
                  "2. FEES . . . . . . . . . iv\n"                /* 5 */
                  "\n"                                            /* 6 */
                  "3. NOTICES \xE2\x80\xA6 7\n"                   /* 7 */
                  "4. LAW\t8\n"                                   /* 8 */
                  "\n"                                            /* 9 */
                  "1. SCOPE\n"                                    /* 10 */
                  "\n"                                            /* 11 */
                  "1.1 The Supplier provides the \"Services\".\n" /* 12 */
                  "\n"                                            /* 13 */
                  "2. FEES\n"                                     /* 14 */
                  "\n"                                            /* 15 */
                  "2.1 The Customer pays for the Services.\n"     /* 16 */
                  "\n"                                            /* 17 */
                  "3. NOTICES\n"                                  /* 18 */
                  "\n"                                            /* 19 */
                  "3.1 Notices under Section 2.1 are written.\n"  /* 20 */
                  "\n"                                            /* 21 */
                  "4. LAW\n"                                      /* 22 */
                  "\n"                                            /* 23 */
                  "4.1 English law applies.\n";                   /* 24 */
  dq_text *t = text_of(s, DQ_DOC_TEXT, NULL);
  dq_doc_parts *p = contract_of(t, "msa.txt");
  CHECK_EQ_INT(p->n_chunks, 5);
  CHECK_CHUNK(p, 0, 1, 8, "");
  CHECK_CHUNK(p, 1, 10, 12, "1 SCOPE");
  CHECK_CHUNK(p, 2, 14, 16, "2 FEES");
  CHECK_CHUNK(p, 3, 18, 20, "3 NOTICES");
  CHECK_CHUNK(p, 4, 22, 24, "4 LAW");
  /* each clause once, where it opens (find_sym: the first of the name) */
  CHECK_SYM(p, "1", "section", 10, 1, "");
  CHECK_SYM(p, "2", "section", 14, 1, "");
  CHECK_SYM(p, "3", "section", 18, 1, "");
  CHECK_SYM(p, "4", "section", 22, 1, "");
  CHECK_REF(p, "2.1", "xref", 20, 27, "3.1");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_hash_lines(void) {
  /* a PDF: "# example" is a comment shown in the document */
  const char *s = "1. SCOPE\n"                                   /* p1 l1 */
                  "1.1 The Supplier runs the tool as follows.\n" /* p1 l2 */
                  "# example: see Section 2.1.\n"                /* p1 l3 */
                  "2. FEES\n"                                    /* p1 l4 */
                  "2.1 The Customer pays.\n";                    /* p1 l5 */
  static const uint32_t lp[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}};
  dq_text *t = paged_text(s, lp);
  dq_doc_parts *p = contract_of(t, "a.pdf");
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 3, "1 SCOPE");
  CHECK_CHUNK(p, 1, 4, 5, "2 FEES");
  CHECK_REF(p, "2.1", "xref", 3, 24, "1.1");
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* Markdown: a '#' line in a code fence is code */
  s = "1. SCOPE\n"                          /* 1 */
      "\n"                                  /* 2 */
      "1.1 Install it as in Section 2.1.\n" /* 3 */
      "\n"                                  /* 4 */
      "```sh\n"                             /* 5 */
      "# install the tool\n"                /* 6 */
      "make install\n"                      /* 7 */
      "```\n"                               /* 8 */
      "\n"                                  /* 9 */
      "2. FEES\n"                           /* 10 */
      "\n"                                  /* 11 */
      "2.1 The fees are due.\n";            /* 12 */
  t = text_of(s, DQ_DOC_MARKDOWN, NULL);
  p = contract_of(t, "a.md");
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 8, "1 SCOPE");
  CHECK_CHUNK(p, 1, 10, 12, "2 FEES");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

int main(void) {
  test_paged();
  test_toc();
  test_hash_lines();
  test_font_paragraph();
  test_font_manual();
  test_restarted_list();
  test_title();
  test_md_levels();
  return TEST_EXIT();
}
