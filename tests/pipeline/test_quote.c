/*
 * test_quote.c - ask's quote (cite.c pl_quote_find): the sentence of the
 * retrieved chunks that holds the most of the question's terms, with the
 * lines it spans. Hand-built chunks, each rule checked by a case that
 * breaks without it:
 *   - a sentence across two lines is quoted whole, blanks collapsed, with
 *     both lines (the governing-law clause: its answer, "Delaware", is on
 *     the second line);
 *   - headings and other units under PL_QUOTE_MIN_WORDS words are not
 *     quoted, though they hold the terms;
 *   - from code the quote keeps its lines too, as they stand (without
 *     their common indentation, at most 12), for display;
 *   - two capitals are a term ("the NL tax table"), other short words not;
 *   - words fold as BM25 folds them (naïve, résumé decomposed, München);
 *     U+2019 and U+2014 separate words;
 *   - sentences end at ". " before a capital, not inside "10.1" or "e.g";
 *     a colon ends one before a capital but not before a number
 *     ("Deposit: 15,450") nor after a label of up to 3 words
 *     ("Deposit:\nGBP 15,450");
 *     units end at blank lines and before list items, enumerated
 *     items ("(d) ") and lines that open with a clause number ("11.1 ");
 *   - on a tie the better-ranked chunk's sentence wins;
 *   - a section's title counts as its units' words, but only a unit's
 *     own words meet the two-term minimum;
 *   - at least two of the question's terms, else no quote;
 *   - a chunk whose lines are not its source lines (HTML) gives its own
 *     line range;
 *   - a long sentence is cut to PL_QUOTE_MAX_BYTES and marked "...";
 *   - "long" after "how" ("how long is ...") is no term;
 *   - a table's row (" | " cells; a .csv's line) is a unit of its own,
 *     quoted from PL_QUOTE_MIN_ROW_WORDS words, its columns the
 *     section's "columns: ..." or else its table's first row, whose
 *     terms count as the row's section (one of the row's own and one
 *     of its header's meet the two-term minimum);
 *   - the terms that name a document (file name, its first chunk's title
 *     block), when that chunk is at hand, count half in each of the
 *     document's units, are said of each of them (one term of a unit's
 *     own is enough), and a unit of such terms only is quoted only when
 *     no unit has one of its own;
 *   - a label's terms ("Deposit: GBP ...") count twice;
 *   - words meet without their inflections (give/giving; check_keys);
 *   - a passage trimmed around a ranked term keeps its whole clause
 *     (check_trim_term).
 * Then random texts: no crash (the sanitizer build runs this), and any
 * quote lies within its chunk's lines.
 */
#include "pipeline_int.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dq_hit hit(const char *path, const char *kind, const char *section,
                  const char *text, int line_start) {
  dq_hit h = {0};
  h.path = (char *)path;
  h.kind = (char *)kind;
  h.section = (char *)section;
  h.text = (char *)text;
  int n = 1;
  for (const char *p = text; *p; p++)
    n += *p == '\n';
  h.line_start = line_start;
  h.line_end = line_start + n - 1;
  return h;
}

/* The quote of question over hits[0..n): 1 found, 0 none. */
static int quote(const char *question, const dq_hit *hits, size_t n,
                 dq_quote *q, size_t *which) {
  pl_terms t;
  pl_terms_init(&t, question, hits, n);
  *which = (size_t)-1;
  int r = pl_quote_find(&t, hits, n, q, which);
  CHECK(r >= 0);
  return r;
}

static void quote_free(dq_quote *q) {
  free(q->text);
  free(q->path);
  free(q->root);
  free(q->shown);
  free(q->section);
  free(q->lines);
  free(q->columns);
}

static const char nda[] = "## Article 9. General\n"
                          "\n"
                          "### 9.1 Governing Law\n"
                          "\n"
                          "This Agreement is governed by and construed in "
                          "accordance with the laws of\n"
                          "the State of Delaware, without regard to its "
                          "conflict of laws rules.\n"
                          "\n"
                          "### 9.2 Dispute Resolution\n"
                          "\n"
                          "Any dispute arising out of this Agreement shall be "
                          "submitted to the courts\n"
                          "of Delaware. Section 10.1 applies, e.g. to costs.\n"
                          "- Each Party bears its own costs of any dispute "
                          "resolution.\n";

static void check_rules(void) {
  dq_hit h[3];
  dq_quote q;
  size_t w;
  h[0] = hit("contracts/nda.md", "markdown", "Article 9 General", nda, 150);
  /* 1. across two lines, blanks collapsed */
  CHECK_EQ_INT(quote("Which law governs the agreement?", h, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "This Agreement is governed by and construed in "
                       "accordance with the laws of the State of Delaware, "
                       "without regard to its conflict of laws rules.");
  CHECK_EQ_INT(q.line_start, 154);
  CHECK_EQ_INT(q.line_end, 155);
  CHECK_EQ_STR(q.path, "contracts/nda.md");
  CHECK_EQ_STR(q.section, "Article 9 General");
  CHECK_EQ_INT(w, 0);
  CHECK(q.lines == NULL); /* prose: the sentence alone */
  quote_free(&q);
  /* 2. "Governing Law" and "Dispute Resolution" headings hold the terms
   * but are not sentences */
  CHECK_EQ_INT(quote("dispute resolution", h, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "- Each Party bears its own costs of any dispute "
                       "resolution.");
  CHECK_EQ_INT(q.line_start, 161);
  CHECK_EQ_INT(q.line_end, 161);
  quote_free(&q);
  /* 3. ". " before a capital ends a sentence; "10.1" and "e.g." do not */
  CHECK_EQ_INT(
      quote("which section applies to costs of the courts?", h, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "Section 10.1 applies, e.g. to costs.");
  CHECK_EQ_INT(q.line_start, 160);
  quote_free(&q);
  /* 3a. a colon before a number does not end the sentence that names
   * it; one before a capital does */
  dq_hit c = hit("lease.txt", "text", "Particulars",
                 "Particulars of the lease: Deposit: 15,450 pounds, held by "
                 "the Landlord for the Term: The Tenant pays it on signing.\n",
                 20);
  CHECK_EQ_INT(
      quote("How much is the deposit the landlord holds?", &c, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text,
               "Deposit: 15,450 pounds, held by the Landlord for the Term:");
  quote_free(&q);
  /* 3b. an enumerated item is a unit of its own */
  dq_hit e = hit("nda.md", "markdown", "3.1",
                 "3.1 The Receiving Party shall:\n"
                 "  (c) protect it with at least reasonable care of its own;"
                 " and\n"
                 "  (d) promptly notify the Disclosing Party in writing,\n"
                 "      within seventy-two (72) hours, of any unauthorised use"
                 ".\n",
                 50);
  CHECK_EQ_INT(
      quote("Within how many hours must the party notify unauthorised use?", &e,
            1, &q, &w),
      1);
  CHECK_EQ_STR(q.text, "(d) promptly notify the Disclosing Party in writing, "
                       "within seventy-two (72) hours, of any unauthorised "
                       "use.");
  CHECK_EQ_INT(q.line_start, 52);
  CHECK_EQ_INT(q.line_end, 53);
  quote_free(&q);
  /* 3c. a line that opens with a clause number starts a unit: the DOCX
   * heading above it is not part of the quote */
  dq_hit d = hit("licence.docx", "docx", "11 General",
                 "11. General\n"
                 "11.1 This Agreement is governed by the laws of Ireland, and"
                 " the courts of Ireland have exclusive jurisdiction.\n"
                 "11.2 Notices shall be in writing and sent to the registered"
                 " office.\n",
                 46);
  CHECK_EQ_INT(quote("Which law governs the licence agreement?", &d, 1, &q, &w),
               1);
  CHECK_EQ_STR(q.text, "11.1 This Agreement is governed by the laws of "
                       "Ireland, and the courts of Ireland have exclusive "
                       "jurisdiction.");
  CHECK_EQ_INT(q.line_start, 47);
  CHECK_EQ_INT(q.line_end, 47);
  quote_free(&q);
  /* ... a number with no dot does not ("30 days" stays in its sentence);
   * a wrapped line that happens to open with "11.1 " is cut there (the
   * rule's cost, rare in prose) */
  dq_hit d2 = hit("notes.txt", "text", "",
                  "The notice period under the licence agreement is\n"
                  "30 days, and clause\n"
                  "11.1 governs it.\n",
                  1);
  CHECK_EQ_INT(quote("What is the notice period under the licence agreement?",
                     &d2, 1, &q, &w),
               1);
  CHECK_EQ_STR(q.text, "The notice period under the licence agreement is 30 "
                       "days, and clause");
  quote_free(&q);
  /* 3c. two capitals are a term ("the NL tax table"), where other
   * two-letter words are not */
  static const char rates[] =
      "The tax table rounds every amount half up by default here.\n"
      "The NL table rounds half to even, as its rules require.\n"
      "Each table lists a rate for every tax category it knows.\n";
  dq_hit r1 = hit("rates.md", "markdown", "", rates, 1);
  pl_terms tn;
  pl_terms_init(&tn, "How does the NL tax table round amounts?", &r1, 1);
  int has_nl = 0, has_how = 0;
  for (int i = 0; i < tn.n; i++) {
    has_nl |= !strcmp(tn.key[i], "nl");
    has_how |= !strcmp(tn.key[i], "ho");
  }
  CHECK(has_nl && !has_how);
  CHECK_EQ_INT(
      quote("How does the NL tax table round amounts?", &r1, 1, &q, &w), 1);
  CHECK_MSG(q.text && !strncmp(q.text, "The NL table", 12), "quote: %s",
            q.text ? q.text : "(none)");
  CHECK_EQ_INT(q.line_start, 2);
  quote_free(&q);
  pl_terms_init(&tn, "is it on or in the UK?", &r1, 1);
  CHECK_EQ_INT(tn.n, 1); /* "UK"; not is, it, on, or, in */

  /* 3d. a label of up to 3 words and its colon open a unit with the value
   * after them (a PDF's particulars put each on its own line) */
  static const char particulars[] =
      "Permitted Use:\nOffices and design studio within Class E.\n"
      "Deposit:\nGBP 15,450 (three months' Initial Rent).\n"
      "Break Date:\nThe fifth (5th) anniversary of the Term Commencement "
      "Date.\n";
  dq_hit pa = hit("lease.pdf", "pdf", "", particulars, 1);
  CHECK_EQ_INT(quote("How much is the Deposit?", &pa, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "Deposit: GBP 15,450 (three months' Initial Rent).");
  CHECK_EQ_INT(q.line_start, 3);
  CHECK_EQ_INT(q.line_end, 4);
  quote_free(&q);

  /* 3c'. from code, the quote also keeps its lines as they stand (for
   * display), without their common indentation, at most 12 */
  static const char code[] =
      "    /* Rounds money: the single place ledgerlite rounds it. */\n"
      "    static long div_round(long num, long den) {\n"
      "      long q = num / den, r = num % den;\n"
      "      if (2 * r >= den)\n"
      "        q++;\n"
      "      return q;\n"
      "    }\n";
  dq_hit k =
      hit("src/money.c", "c", "static long div_round(long, long)", code, 10);
  CHECK_EQ_INT(quote("Which function is the single place ledgerlite rounds "
                     "money?",
                     &k, 1, &q, &w),
               1);
  CHECK(q.lines != NULL);
  if (q.lines) {
    CHECK(
        !strncmp(q.lines,
                 "/* Rounds money: the single place ledgerlite rounds it. */\n"
                 "static long div_round(long num, long den) {\n"
                 "  long q = num / den, r = num % den;\n",
                 strlen("/* Rounds money: the single place ledgerlite "
                        "rounds it. */\n"
                        "static long div_round(long num, long den) {\n"
                        "  long q = num / den, r = num % den;\n")));
    CHECK(strchr(q.lines, '\t') == NULL);
  }
  CHECK_EQ_INT(q.line_start, 10);
  quote_free(&q);
  char longcode[2048];
  size_t lo = (size_t)snprintf(longcode, sizeof longcode,
                               "int rounding_rule_xyz(int v) {\n");
  for (int i = 0; i < 20; i++)
    lo += (size_t)snprintf(longcode + lo, sizeof longcode - lo,
                           "  v = v * 3 + %d; /* keep rounding */\n", i);
  snprintf(longcode + lo, sizeof longcode - lo, "  return v;\n}\n");
  k = hit("src/r.c", "c", "int rounding_rule_xyz(int v)", longcode, 1);
  CHECK_EQ_INT(
      quote("what does rounding_rule_xyz keep rounding?", &k, 1, &q, &w), 1);
  CHECK(q.lines != NULL); /* the whole 23-line chunk is one unit */
  if (q.lines) {
    int nl = 0;
    for (const char *x = q.lines; *x; x++)
      nl += *x == '\n';
    CHECK_MSG(nl == 13, "%d lines", nl); /* 12 and "..." */
    size_t ln = strlen(q.lines);
    CHECK(ln > 4 && !strcmp(q.lines + ln - 4, "...\n"));
    CHECK(!strncmp(q.lines, "int rounding_rule_xyz(int v) {\n  v = v * 3",
                   strlen("int rounding_rule_xyz(int v) {\n  v = v * 3")));
  }
  quote_free(&q);
  /* 3d. words fold as BM25 folds them: "naive resume" and "Munchen"
   * meet "naïve résumé" and "München" (also decomposed: e + U+0301);
   * U+2019 and U+2014 still separate words */
  dq_hit f[2];
  f[0] = hit("cv.txt", "text", "",
             "The office moved to Berlin in 2019.\n"
             "A na\u00efve r\u00e9sume\u0301 was filed in M\u00fcnchen by "
             "the applicant.\n",
             1);
  f[1] = hit("other.txt", "text", "",
             "The naive approach uses a resume template for every "
             "applicant.\n",
             1);
  CHECK_EQ_INT(
      quote("Where was the naive resume filed in Munchen?", f, 2, &q, &w), 1);
  CHECK_EQ_INT(w, 0);
  CHECK_EQ_INT(q.line_start, 2);
  quote_free(&q);
  dq_hit g = hit("nda.md", "markdown", "",
                 "The Party\u2019s notice term\u2014thirty days\u2014applies "
                 "to every disclosure.\n",
                 3);
  CHECK_EQ_INT(quote("What notice term applies?", &g, 1, &q, &w), 1);
  quote_free(&q);
  CHECK_EQ_INT(quote("Which Party\u2019s term?", &g, 1, &q, &w), 1);
  quote_free(&q);
  /* 4. a tie: the better-ranked chunk */
  h[1] = hit("contracts/other.md", "markdown", "", nda, 1);
  h[2] = h[0];
  h[0] = h[1];
  h[1] = h[2];
  CHECK_EQ_INT(quote("Which law governs the agreement?", h, 2, &q, &w), 1);
  CHECK_EQ_INT(w, 0);
  CHECK_EQ_STR(q.path, "contracts/other.md");
  CHECK_EQ_INT(q.line_start, 5);
  quote_free(&q);
  /* 4b. the section's title speaks for its units: without it the two
   * sentences tie (two terms of equal idf each) and the better-ranked
   * chunk's would win */
  dq_hit l[2];
  l[0] = hit("lease.md", "markdown", "9 Yielding Up",
             "The Tenant shall give notice to the Landlord under each clause.",
             90);
  l[1] = hit("lease.md", "markdown", "7 Break Clause",
             "7.1 The Tenant may end this Lease on the Break Date by giving "
             "six months' written notice.",
             70);
  CHECK_EQ_INT(
      quote("What notice does the break clause require?", l, 2, &q, &w), 1);
  CHECK_EQ_INT(w, 1);
  CHECK_EQ_INT(q.line_start, 70);
  quote_free(&q);
  /* ... but its words alone do not make a quote */
  l[1].text = "7.1 The Tenant may end this Lease on a set date by paying.";
  l[0].text = "The Landlord keeps the keys to the building at all times.";
  CHECK_EQ_INT(
      quote("What notice does the break clause require?", l, 2, &q, &w), 0);
  /* 5. one term is not enough when the question has two */
  CHECK_EQ_INT(quote("Which laws mention Wyoming?", h, 2, &q, &w), 0);
  CHECK(q.text == NULL);
  /* ... but is when it has one */
  CHECK_EQ_INT(quote("laws?", h, 2, &q, &w), 1);
  quote_free(&q);
  CHECK_EQ_INT(quote("?", h, 2, &q, &w), 0);
  /* 6. HTML's lines are not its source lines: the chunk's range */
  dq_hit x = hit("dpa.html", "html", "Security",
                 "Security\nThe Processor encrypts Personal Data at rest "
                 "with AES-256.\n",
                 40);
  x.line_end = 90;
  CHECK_EQ_INT(quote("How is personal data encrypted at rest?", &x, 1, &q, &w),
               1);
  /* the heading "Security" is a unit of its own (no sentence's end) */
  CHECK_EQ_STR(q.text, "The Processor encrypts Personal Data at rest with "
                       "AES-256.");
  CHECK_EQ_INT(q.line_start, 40);
  CHECK_EQ_INT(q.line_end, 90);
  quote_free(&q);
  /* ... as is a PDF's heading line (no blank line after it), but not a
   * short first line that breaks on a joining word */
  x = hit("g.pdf", "pdf", "Field Guide > Animals",
          "Animals\nFrogs lay their eggs in the ponds each spring.\n"
          "Payment of the\nWardens falls due in each spring season.\n",
          1);
  CHECK_EQ_INT(quote("When do frogs lay eggs?", &x, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "Frogs lay their eggs in the ponds each spring.");
  CHECK_EQ_INT(q.line_start, 2);
  quote_free(&q);
  CHECK_EQ_INT(quote("When is payment of the wardens due?", &x, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "Payment of the Wardens falls due in each spring "
                       "season.");
  quote_free(&q);
  /* 6a. after "how", "long" (and the like) asks for an amount and is no
   * term: the sentence with "Disclosure Period" wins over the one that
   * also says "as long as"; without the rule the latter holds three
   * terms to two */
  dq_hit dp = hit("nda.md", "markdown", "Article 6 Term",
                  "6.1 This Agreement applies to information disclosed "
                  "during the Disclosure Period of two (2) years.\n"
                  "6.2 Obligations last five (5) years after the "
                  "Disclosure Period, or as long as a trade secret lasts.\n",
                  109);
  CHECK_EQ_INT(quote("How long is the Disclosure Period?", &dp, 1, &q, &w), 1);
  CHECK_EQ_INT(q.line_start, 109);
  quote_free(&q);
  /* "long" as a topic stays a term */
  CHECK_EQ_INT(quote("Is the Disclosure Period as long as a trade secret?", &dp,
                     1, &q, &w),
               1);
  CHECK_EQ_INT(q.line_start, 110);
  quote_free(&q);
  /* 6b. in a document's first chunk the words that name the document
   * (its file name, its first line) count half: the title sentence does
   * not answer what the document says (without the rule its four terms
   * outweigh the clause's three, which other lines share) */
  dq_hit nd[2];
  nd[0] = hit("contracts/mutual_nda.md", "markdown", "Mutual NDA",
              "# Mutual Non-Disclosure Agreement\n"
              "\n"
              "This Mutual Non-Disclosure Agreement is entered into as of 2 "
              "June 2025 by the parties.\n",
              1);
  nd[1] = hit("contracts/mutual_nda.md", "markdown", "Article 9 General",
              "9.1 This Agreement is governed by the laws of the State of "
              "Delaware.\n"
              "9.2 Each party complies with applicable law.\n"
              "9.3 Notices are governed by clause 12.\n"
              "9.4 Export is governed by law.\n",
              154);
  CHECK_EQ_INT(quote("Which law governs the mutual non-disclosure agreement?",
                     nd, 2, &q, &w),
               1);
  CHECK_EQ_INT(q.line_start, 154);
  quote_free(&q);
  CHECK_EQ_INT(quote("When was the mutual non-disclosure agreement entered "
                     "into?",
                     nd, 2, &q, &w),
               1);
  CHECK_EQ_INT(q.line_start, 3);
  quote_free(&q);
  /* a PDF's lines count from 1 on every page: page 4's first chunk is no
   * document's opening, and its words count whole */
  nd[0].page_start = 4;
  CHECK_EQ_INT(quote("Which law governs the mutual non-disclosure agreement?",
                     nd, 2, &q, &w),
               1);
  CHECK(q.text && strncmp(q.text, "This Mutual", 11) == 0);
  quote_free(&q);
  /* 6c. a title block's short lines name the document too, and what the
   * question names it by is said of each unit of its opening: one term of
   * the unit's own is enough there, and beats the title's lines however
   * rare their words (without either rule the address line is quoted) */
  const char *dep = "How much is the Deposit under the Unit 4 Wharfside "
                    "commercial lease?";
  dq_hit ls[3];
  ls[0] = hit("contracts/commercial_lease.pdf", "pdf", "PARTICULARS",
              "LEASE OF COMMERCIAL PREMISES\n"
              "\n"
              "Unit 4, Wharfside Business Park, Canal Street, Leeds\n"
              "\n"
              "THIS LEASE is dated 30 January 2026 and is made between the "
              "Landlord and the Tenant.\n"
              "Initial Rent: GBP 61,800 per year, exclusive of VAT.\n"
              "Deposit: GBP 15,450 (three months' Initial Rent).\n",
              1);
  ls[0].page_start = ls[0].page_end = 1;
  /* in the document's later chunks too: a unit of its naming words only
   * yields to one with a word of its own (the Building's line would win
   * on them) */
  ls[1] = hit("contracts/commercial_lease.pdf", "pdf", "1 DEFINITIONS",
              "1.1 In this Lease the following definitions apply.\n"
              "\"Building\" means the building known as Unit 4, Wharfside "
              "Business Park, of which the Premises form the whole.\n"
              "\"Deposit\" means the sum so named in the Particulars.\n",
              29);
  ls[1].page_start = ls[1].page_end = 1;
  ls[2] = hit("contracts/other.txt", "text", "",
              "The deposit is held by the agent on trust for the parties "
              "until the end.\n",
              1);
  CHECK_EQ_INT(quote(dep, ls, 3, &q, &w), 1);
  CHECK(q.text && strncmp(q.text, "Deposit: GBP 15,450", 19) == 0);
  quote_free(&q);
  /* without the document's first chunk its naming words are not known,
   * and count whole */
  CHECK_EQ_INT(quote(dep, ls + 1, 2, &q, &w), 1);
  CHECK(q.text && strncmp(q.text, "\"Building\"", 10) == 0);
  quote_free(&q);
  /* a unit of its own terms in another document still needs two */
  CHECK_EQ_INT(quote(dep, ls + 2, 1, &q, &w), 0);
  quote_free(&q);
  /* 6d. a label's terms count twice: the line that says what the Deposit
   * is beats the one before it that mentions it (a tie without the
   * rule) */
  dq_hit lb = hit("lease.txt", "text", "8 Deposit",
                  "8.1 The Tenant pays the Deposit payable under clause 8 "
                  "to the Landlord.\n"
                  "8.2 Deposit: GBP 15,450, payable on completion of this "
                  "Lease.\n",
                  40);
  CHECK_EQ_INT(quote("How much is the Deposit payable?", &lb, 1, &q, &w), 1);
  CHECK_EQ_INT(q.line_start, 41);
  quote_free(&q);
  /* with no unit of its own terms the title's line is still quoted */
  CHECK_EQ_INT(quote("Where is the Unit 4 Wharfside lease?", ls, 1, &q, &w), 1);
  CHECK(q.text && strncmp(q.text, "Unit 4, Wharfside", 17) == 0);
  quote_free(&q);
  /* 7. a long sentence is cut */
  char *big = malloc(4000);
  if (big) {
    size_t n = 0;
    n += (size_t)snprintf(big, 4000, "The licence grant covers ");
    while (n < 3000)
      n += (size_t)snprintf(big + n, 4000 - n, "copies and works ");
    snprintf(big + n, 4000 - n, "alike.");
    dq_hit b = hit("LICENSE", "text", "", big, 1);
    CHECK_EQ_INT(quote("What does the licence grant cover?", &b, 1, &q, &w), 1);
    if (q.text) {
      size_t len = strlen(q.text);
      /* cut at the first blank past the limit; words here are short */
      CHECK(len <= PL_QUOTE_MAX_BYTES + 16 && len >= PL_QUOTE_MAX_BYTES);
      CHECK(len >= 3 && strcmp(q.text + len - 3, "...") == 0);
      CHECK(strncmp(q.text, "The licence grant covers copies", 31) == 0);
    }
    quote_free(&q);
    free(big);
  }
  /* 14. a table's rows are units of their own, quoted from three words:
   * a sheet's " | " rows (the columns in the section count as the
   * row's words), a CSV's lines; the same lines in a .txt file run on */
  static const char sheet[] = "North | Customer 1499 | 2023 | 14990\n"
                              "North | Customer 1500 | 2020 | 15000\n"
                              "South | Customer 1501 | 2021 | 15010\n";
  dq_hit xs =
      hit("book.xlsx", "xlsx",
          "Sheet: Revenue > columns: Region | Customer | Year | Revenue", sheet,
          1500);
  xs.page_start = xs.page_end = 1;
  CHECK_EQ_INT(quote("What was the revenue of customer 1500?", &xs, 1, &q, &w),
               1);
  CHECK_EQ_STR(q.text, "North | Customer 1500 | 2020 | 15000");
  CHECK_EQ_INT(q.line_start, 1501);
  CHECK_EQ_INT(q.line_end, 1501);
  /* its columns from the section, which names them far from the header */
  CHECK_EQ_STR(q.columns, "Region | Customer | Year | Revenue");
  /* cited by sheet and row, as the spreadsheet numbers them */
  char wb[DQ_WHERE_MAX];
  CHECK_EQ_STR(q.unit, "sheet");
  CHECK_EQ_STR(dq_where(wb, q.unit, q.page, q.line_start, q.line_end),
               " sheet 1 row 1501");
  quote_free(&q);
  /* a table in a chunk (an HTML or DOCX table): the columns are its
   * first row; the header row itself, and a sentence, have none */
  static const char annex[] =
      "Annex 3. Approved Sub-processors\n"
      "Sub-processor | Service | Location\n"
      "Cobalt Cloud Hosting Ltd | Infrastructure hosting | United Kingdom\n"
      "Ferrule Mail Services Ltd | Transactional email | Ireland\n"
      "Signed on behalf of the Processor: Priya Raman, Managing Director.\n";
  dq_hit an = hit("dpa.html", "html", "Annex 3", annex, 201);
  CHECK_EQ_INT(quote("Which sub-processor provides transactional email?", &an,
                     1, &q, &w),
               1);
  CHECK_EQ_STR(q.text, "Ferrule Mail Services Ltd | Transactional email | "
                       "Ireland");
  CHECK_EQ_STR(q.columns, "Sub-processor | Service | Location");
  quote_free(&q);
  /* one term of the row's own, one of its header's */
  CHECK_EQ_INT(quote("What is the location of Cobalt?", &an, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "Cobalt Cloud Hosting Ltd | Infrastructure hosting | "
                       "United Kingdom");
  quote_free(&q);
  CHECK_EQ_INT(quote("sub-processor service location", &an, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "Sub-processor | Service | Location");
  CHECK(q.columns == NULL);
  quote_free(&q);
  CHECK_EQ_INT(quote("who signed on behalf of the processor", &an, 1, &q, &w),
               1);
  CHECK(q.text && !strncmp(q.text, "Signed on behalf", 16));
  CHECK(q.columns == NULL);
  quote_free(&q);
  static const char csv[] = "North,Customer 1499,2023,14990\n"
                            "North,Customer 1500,2020,15000\n"
                            "South,Customer 1501,2021,15010\n";
  dq_hit v = hit("data/sales.CSV", "text", "columns: Region,Customer,Revenue",
                 csv, 40);
  CHECK_EQ_INT(quote("revenue of customer 1501", &v, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "South,Customer 1501,2021,15010");
  CHECK_EQ_INT(q.line_start, 42);
  CHECK_EQ_STR(q.columns, "Region,Customer,Revenue");
  quote_free(&q);
  /* a CSV's first chunk: its first line is the header */
  static const char csv1[] = "Region,Customer,Year,Revenue\n"
                             "North,Acme,2020,10\n"
                             "South,Kestrel,2021,20\n";
  dq_hit v1 = hit("sales.csv", "text", "", csv1, 1);
  CHECK_EQ_INT(quote("What revenue came from Kestrel?", &v1, 1, &q, &w), 1);
  CHECK_EQ_STR(q.text, "South,Kestrel,2021,20");
  CHECK_EQ_STR(q.columns, "Region,Customer,Year,Revenue");
  quote_free(&q);
  v.path = "data/sales.txt";
  CHECK_EQ_INT(quote("revenue of customer 1501", &v, 1, &q, &w), 1);
  CHECK(q.text && strstr(q.text, "Customer 1499") && strstr(q.text, "1501"));
  quote_free(&q);
}

/* Random texts of words, punctuation, blanks and newlines. */
static void check_random(void) {
  static const char *const parts[] = {
      "law", "governs", "Delaware", "the",  "Agreement", ". ", ".", "; ",
      ": ",  "\n",      "\n\n",     "# ",   "- ",        "| ", " ", "\"",
      "(",   ")",       "10.1",     "e.g.", "\xc3\xa9",  "\t", "*", "?"};
  unsigned seed = 20261206;
  char text[3][512];
  for (int round = 0; round < 3000; round++) {
    dq_hit h[3];
    for (int i = 0; i < 3; i++) {
      test_random_text(parts, sizeof parts / sizeof *parts, 60, 0, &seed,
                       text[i], sizeof text[i]);
      h[i] = hit("f.md", (seed >> 8) & 1 ? "markdown" : "html", "", text[i],
                 1 + i * 100);
    }
    dq_quote q;
    size_t w;
    if (quote("Which law governs the Agreement in Delaware?", h, 3, &q, &w)) {
      CHECK(w < 3 && q.text && q.text[0]);
      if (w < 3)
        CHECK_MSG(q.line_start >= h[w].line_start &&
                      q.line_end <= h[w].line_end && q.line_start <= q.line_end,
                  "round %d: lines %d-%d outside %d-%d", round, q.line_start,
                  q.line_end, h[w].line_start, h[w].line_end);
      quote_free(&q);
    }
  }
}

/* pl_each_term's keys of s, " " after each, into out. */
static void key_add(const char *key, const char *word, size_t len, void *user) {
  (void)word;
  (void)len;
  char *out = user;
  size_t n = strlen(out);
  snprintf(out + n, 256 - n, "%s ", key);
}
static void check_keys(void) {
  char k[256] = "";
  /* one key per English word's inflections; identifiers whole; "ss"
   * keeps its s; short words keep their e */
  pl_each_term("give gives giving Leases leased address use tax_lines",
               strlen("give gives giving Leases leased address use "
                      "tax_lines"),
               key_add, k);
  CHECK_EQ_STR(k, "giv giv giv leas leas addre use tax_lines ");
}

/* The trim keeps a ranked term's whole clause, not only its line (the
 * facts quote the clause: GPL-3's "convey" goes on to the next line).
 * No model: a line costs its bytes / 3 + 2 tokens. */
static void check_trim_term(void) {
  static const char gpl[] =
      "0. Definitions.\n"
      "To \"modify\" a work means to copy from or adapt all or part.\n"
      "A \"covered work\" means either the unmodified Program or a work.\n"
      "To \"propagate\" a work means to do anything with it that needs.\n"
      "To \"convey\" a work means any kind of propagation that enables other\n"
      "parties to make or receive copies.  Mere interaction with a user\n"
      "through a computer network is not conveying at all, in this License.\n"
      "An interactive user interface displays Appropriate Legal Notices.\n"
      "1. Source Code.\n"
      "The source code for a work means the preferred form of the work.\n";
  dq_hit h = hit("GPL-3", "text", "0", gpl, 73);
  h.text = strdup(gpl);
  h.symbol = "convey";
  h.symbol_kind = "term";
  h.symbol_line = 77;
  h.symbol_strong = 1;
  pl_terms t;
  pl_terms_init(&t, "What does it mean to convey a work under GPL version 3?",
                &h, 1);
  /* room for three lines: the clause's two and one more */
  CHECK_EQ_INT(pl_passage_trim(NULL, &t, &h, 75, 0, 0), 1);
  CHECK_MSG(h.line_start <= 77 && h.line_end >= 78, "kept %d-%d", h.line_start,
            h.line_end);
  CHECK(h.text && strstr(h.text, "parties to make or receive copies"));
  free(h.text);
}

/* Where lines are, by the document's kind (dq_where, dq_page_unit). */
static void check_where(void) {
  char w[DQ_WHERE_MAX];
  CHECK_EQ_STR(dq_page_unit("pdf"), "page");
  CHECK_EQ_STR(dq_page_unit("image"), "page");
  CHECK_EQ_STR(dq_page_unit(NULL), "page");
  CHECK_EQ_STR(dq_page_unit("pptx"), "slide");
  CHECK_EQ_STR(dq_page_unit("xlsx"), "sheet");
  CHECK_EQ_STR(dq_page_unit("ods"), "sheet");
  CHECK_EQ_STR(dq_page_unit("xls"), "sheet");
  CHECK_EQ_STR(dq_page_unit("text"), "page");
  CHECK_EQ_STR(dq_where(w, "page", 0, 12, 20), ":12-20");
  CHECK_EQ_STR(dq_where(w, "sheet", 0, 12, 20), ":12-20");
  CHECK_EQ_STR(dq_where(w, "page", 4, 3, 9), " p.4");
  CHECK_EQ_STR(dq_where(w, NULL, 4, 3, 9), " p.4");
  CHECK_EQ_STR(dq_where(w, "slide", 3, 1, 7), " slide 3");
  CHECK_EQ_STR(dq_where(w, "sheet", 2, 14, 20), " sheet 2 rows 14-20");
  CHECK_EQ_STR(dq_where(w, "sheet", 2, 15, 15), " sheet 2 row 15");
  CHECK_EQ_STR(dq_where(w, "sheet", 2, 0, 0), " sheet 2");
  /* the largest numbers fit */
  dq_where(w, "sheet", INT32_MAX, INT32_MIN, INT32_MAX);
  CHECK(strlen(w) < DQ_WHERE_MAX);
  CHECK_EQ_STR(dq_where(w, "page", 0, INT32_MIN, INT32_MIN),
               ":-2147483648--2147483648");
}

int main(void) {
  check_where();
  check_keys();
  check_trim_term();
  check_rules();
  check_random();
  return TEST_EXIT();
}
