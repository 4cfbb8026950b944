/*
 * test_chunk_contract.c - the contract chunker on a small agreement written
 * for this test: which chunk starts at which clause and with which section
 * path (for two budgets, worked out by hand from the line lengths), section
 * symbols, defined terms (straight and curly quotes), cross-references and
 * uses of defined terms with their callers, and detection.
 */
#include "chunk_test.h"

/* Line numbers are in the comments; lengths in bytes (for the budget cases):
 * 1:25 3:125 5:14 7:101 9:58 11:11 13:94 15:92 17:31 19:16 21:24 23:70 25:10
 * 27:13, even lines empty. */
static const char *contract =
    "MASTER SERVICES AGREEMENT\n"
    "\n"
    "This Master Services Agreement (the \"Agreement\") is made between Acme "
    "Ltd (the \"Supplier\") and Beta plc (the “Customer”).\n"
    "\n"
    "1. DEFINITIONS\n"
    "\n"
    "1.1 \"Confidential Information\" means any information disclosed by a "
    "party, as set out in Section 5.2.\n"
    "\n"
    "1.2 \"Services\" means the services described in Schedule 2.\n"
    "\n"
    "2. SERVICES\n"
    "\n"
    "2.1 The Supplier shall provide the Services to the Customer in accordance "
    "with this Agreement.\n"
    "\n"
    "2.2 The Customer shall pay the fees in accordance with Clause 3 and "
    "Sections 4.1 and 4.2(a).\n"
    "\n"
    "(a) first item of the Customer;\n"
    "\n"
    "(b) second item.\n"
    "\n"
    "ARTICLE IV MISCELLANEOUS\n"
    "\n"
    "Nothing in Article IV limits the Confidential Information obligations.\n"
    "\n"
    "SCHEDULE 2\n"
    "\n"
    "The Services.\n";

int main(void) {
  dq_text *t = text_of(contract, DQ_DOC_TEXT, NULL);
  CHECK_EQ_INT(dq_chunk_detect(t, "msa.txt"), DQ_CHUNK_CONTRACT);

  /* Default budget: one chunk per top-level section (hard cuts at "1.",
   * "2.", ARTICLE, SCHEDULE), clauses packed inside. */
  dq_doc_parts *p = chunk_of(t, "msa.txt", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 5);
  CHECK_CHUNK(p, 0, 1, 3, "");
  CHECK_CHUNK(p, 1, 5, 9, "1 DEFINITIONS");
  CHECK_CHUNK(p, 2, 11, 19, "2 SERVICES");
  CHECK_CHUNK(p, 3, 21, 23, "Article IV MISCELLANEOUS");
  CHECK_CHUNK(p, 4, 25, 27, "Schedule 2");

  /* Section symbols: name, line, col, scope = parent path. */
  CHECK_SYM(p, "1", "section", 5, 1, "");
  CHECK_SYM(p, "1.1", "section", 7, 1, "1 DEFINITIONS");
  CHECK_SYM(p, "2.2", "section", 15, 1, "2 SERVICES");
  CHECK_SYM(p, "2.2(a)", "section", 17, 1, "2 SERVICES > 2.2");
  CHECK_SYM(p, "2.2(b)", "section", 19, 1, "2 SERVICES > 2.2");
  CHECK_SYM(p, "Article IV", "section", 21, 1, "");
  CHECK_SYM(p, "Schedule 2", "section", 25, 1, "");

  /* Defined terms: "X" means, (the "X"), curly quotes (3 bytes each, so
   * "Customer" is at byte column 113 of line 3). Scope: enclosing section. */
  CHECK_SYM(p, "Agreement", "term", 3, 38, "");
  CHECK_SYM(p, "Supplier", "term", 3, 81, "");
  CHECK_SYM(p, "Customer", "term", 3, 113, "");
  CHECK_SYM(p, "Confidential Information", "term", 7, 6, "1.1");
  CHECK_SYM(p, "Services", "term", 9, 6, "1.2");

  /* Cross-references, caller = innermost section. */
  CHECK_REF(p, "5.2", "xref", 7, 98, "1.1");
  CHECK_REF(p, "Schedule 2", "xref", 9, 48, "1.2");
  CHECK_REF(p, "3", "xref", 15, 63, "2.2");
  CHECK_REF(p, "4.1", "xref", 15, 78, "2.2");
  CHECK_REF(p, "4.2(a)", "xref", 15, 86, "2.2");
  CHECK_REF(p, "Article IV", "xref", 23, 12, "Article IV");
  /* Heading lines are not cross-references to themselves. */
  CHECK(find_ref(p, "Article IV", "xref", 21) == NULL);
  CHECK(find_ref(p, "Schedule 2", "xref", 25) == NULL);

  /* Uses of defined terms (not at their definitions). */
  CHECK_REF(p, "Supplier", "use", 13, 9, "2.1");
  CHECK_REF(p, "Customer", "use", 17, 23, "2.2(a)");
  CHECK_REF(p, "Confidential Information", "use", 23, 34, "Article IV");
  CHECK(find_ref(p, "Agreement", "use", 3) !=
        NULL); /* "Master Services Agreement" */
  for (size_t i = 0; i < p->n_refs; i++)
    CHECK_MSG(!(p->refs[i].line == 3 && p->refs[i].col == 38),
              "definition site of Agreement counted as a use");
  dq_doc_parts_free(p);

  /* 40 tokens = 160 bytes: section 1 (lines 5..9 = 179 bytes with line 9)
   * splits before 1.2; section 2 splits before 2.2 (lines 11-13 = 109 bytes,
   * 15-19 = 145 bytes). */
  p = chunk_of(t, "msa.txt", 40, 0);
  CHECK_EQ_INT(p->n_chunks, 7);
  CHECK_CHUNK(p, 0, 1, 3, "");
  CHECK_CHUNK(p, 1, 5, 7, "1 DEFINITIONS");
  CHECK_CHUNK(p, 2, 9, 9, "1 DEFINITIONS > 1.2");
  CHECK_CHUNK(p, 3, 11, 13, "2 SERVICES");
  CHECK_CHUNK(p, 4, 15, 19, "2 SERVICES > 2.2");
  CHECK_CHUNK(p, 5, 21, 23, "Article IV MISCELLANEOUS");
  CHECK_CHUNK(p, 6, 25, 27, "Schedule 2");
  for (size_t i = 0; i < p->n_chunks; i++)
    CHECK(p->chunks[i].n_tokens <= 40);
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* Markdown-style headings, § and "Section" forms, roman sub-clauses and
   * (i) after (h) as a letter. */
  t = text_of("# 8. Termination\n"
              "\n"
              "8.1 Either party may terminate under Section 8.2(a)(ii).\n"
              "\n"
              "8.2 The Buyer (each, a \"Party\") may terminate if:\n"
              "(a) the other Party breaches; and\n"
              "(i) notice is given under \xC2\xA7 9;\n"
              "(ii) thirty days pass.\n"
              "\n"
              "9. NOTICES\n",
              DQ_DOC_MARKDOWN, NULL);
  CHECK_EQ_INT(dq_chunk_detect(t, "t.md"), DQ_CHUNK_CONTRACT);
  p = chunk_of(t, "t.md", 0, 0);
  CHECK_SYM(p, "8", "section", 1, 3, "");
  CHECK_SYM(p, "8.2(a)", "section", 6, 1, "8 Termination > 8.2");
  CHECK_SYM(p, "8.2(a)(i)", "section", 7, 1, "8 Termination > 8.2 > (a)");
  CHECK_SYM(p, "8.2(a)(ii)", "section", 8, 1, "8 Termination > 8.2 > (a)");
  CHECK_SYM(p, "Party", "term", 5, 25, "8.2");
  CHECK_REF(p, "8.2(a)(ii)", "xref", 3, 46, "8.1");
  CHECK_REF(p, "9", "xref", 7, 30, "8.2(a)(i)"); /* § is 2 bytes */
  CHECK_REF(p, "Party", "use", 6, 15, "8.2(a)");
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 8, "8 Termination");
  CHECK_CHUNK(p, 1, 10, 10, "9 NOTICES");
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* Terms after "each a" / "together the" / "is the", with Markdown
   * emphasis inside the quotes; a list of cross-references. */
  t = text_of("Acme and Beta are each a \"**Party**\" and together the "
              "\"**Parties**\".\n"
              "A Party disclosing information is the \xE2\x80\x9C"
              "Discloser\xE2\x80\x9D; see Sections 5.2 and 5.3.\n",
              DQ_DOC_MARKDOWN, NULL);
  /* Too little structure to be detected: force the contract chunker. */
  CHECK_EQ_INT(dq_chunk_detect(t, "nda.md"), DQ_CHUNK_GENERIC);
  p = contract_of(t, "nda.md");
  CHECK_SYM(p, "Party", "term", 1, 29, "");
  CHECK_SYM(p, "Parties", "term", 1, 58, "");
  CHECK_SYM(p, "Discloser", "term", 2, 42, "");
  CHECK_REF(p, "Party", "use", 2, 3, "");
  CHECK_REF(p, "5.2", "xref", 2, 69, "");
  CHECK_REF(p, "5.3", "xref", 2, 77, "");
  CHECK_EQ_INT(count_refs(p, "Parties"), 0); /* "Party" inside it is no use */
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* A term wrapped at a line break, its definition and uses: named with
   * one space; a quote left open at a blank line is no term. */
  t = text_of("Information disclosed during the period of two (2) years "
              "(the \"**Disclosure\n  Period**\"). Either Party may end the "
              "Disclosure\nPeriod early.\n\nSee \"Open\n\nQuote\" means x.\n",
              DQ_DOC_MARKDOWN, NULL);
  p = contract_of(t, "nda.md");
  CHECK_SYM(p, "Disclosure Period", "term", 1, 66, "");
  CHECK_REF(p, "Disclosure Period", "use", 2, 40, "");
  CHECK_EQ_INT(count_refs(p, "Disclosure Period"), 1);
  CHECK_EQ_INT(count_syms(p, "Open Quote", NULL), 0);
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* A licence's terms (GPL-3): lower-case after To / A / The, and "X"
   * for a few words then means; a quoted word before another word and
   * "means" is none. */
  t = text_of("  0. Definitions.\n\n  To \"convey\" a work means any kind of "
              "propagation that enables other\nparties to make copies.\n\n"
              "  A \"covered work\" means the Program or a work based on "
              "it.\n\n  The \"Corresponding Source\" for a work in object "
              "code form means all\nthe source code.\n\n  1. Source Code.\n\n"
              "  You may convey a covered work. The \"hello\" word means "
              "nothing.\n",
              DQ_DOC_TEXT, NULL);
  p = contract_of(t, "GPL-3");
  CHECK_SYM(p, "convey", "term", 3, 7, "0");
  CHECK_SYM(p, "covered work", "term", 6, 6, "0");
  CHECK_SYM(p, "Corresponding Source", "term", 8, 8, "0");
  CHECK_REF(p, "convey", "use", 13, 11, "1");
  CHECK_EQ_INT(count_syms(p, "hello", NULL), 0);
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* A README with many Markdown headings and a quoted word is not one. */
  t = text_of("# Tool\n\n## Layout\n\n## Use\n\n## Build\n\n## Notes\n\n"
              "See the sample (the \"Agreement\").\n",
              DQ_DOC_MARKDOWN, NULL);
  CHECK_EQ_INT(dq_chunk_detect(t, "README.md"), DQ_CHUNK_GENERIC);
  dq_text_free(t);

  /* Prose with a numbered list is not a contract. */
  t = text_of("Install\n\n1. Download the file.\n2. Run it.\n", DQ_DOC_TEXT,
              NULL);
  CHECK_EQ_INT(dq_chunk_detect(t, "readme.txt"), DQ_CHUNK_GENERIC);
  dq_text_free(t);
  return TEST_EXIT();
}
