/*
 * test_ground.c - the grounding check (ground.c pl_ground_check): what an
 * answer adds to the question, looked up in the texts the model read.
 * Each rule by a case that breaks without it:
 *   - an invented name is unsupported and named (the 135M model's
 *     "... Agreement Act (CNMDA)" for the NDA's governing law), while the
 *     passage's own words are grounded;
 *   - words meet by pl_terms' keys: "contracts" is held by "contract";
 *   - an answer of the question's words, the instruction's, passage
 *     labels ("[1] Apache-2.0:107-113 (4)") or the number of a clause the
 *     sources open a line with ("The answer is: 7.2") restates;
 *   - numbers count whatever their length: "72" is held by "(72)", "10
 *     years" against "two (2) years" is unsupported, "15450" meets
 *     "15,450";
 *   - identifiers are names: `tax_values` where only tax_compute_line is;
 *   - mostly words from nowhere is unsupported even without a name;
 *   - a capital that opens a sentence is no name; a last word the token
 *     limit may have cut ("Prem") is not listed;
 *   - an answer that says the passages do not answer declines;
 *   - the conversation and facts are sources too (NULL ones skipped).
 * Then random answers and sources: no crash (the sanitizer build runs
 * this), and the counts agree with the verdict.
 */
#include "pipeline_int.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char nda[] =
    "### 9.1 Governing Law\n"
    "This Agreement is governed by and construed in accordance with the laws "
    "of\nthe State of Delaware, without regard to its conflict of laws "
    "rules.\n"
    "3.4 The Receiving Party shall protect the Confidential Information as a "
    "contract requires.";

static pl_grounding check(const char *answer, const char *question,
                          const char *src0, const char *src1) {
  const char *src[3] = {src0, NULL, src1};
  pl_grounding g;
  CHECK_EQ_INT(pl_ground_check(answer, question, src, 3, &g), 0);
  return g;
}

static void check_rules(void) {
  const char *law = "Which law governs the mutual non-disclosure agreement?";
  pl_grounding g = check("The law that governs the mutual non-disclosure "
                         "agreement is Article 3 of the Contracts and Mutual "
                         "Non-Disclosure Agreement Act (CNMDA).",
                         law, nda, "Article 3 Obligations");
  CHECK_EQ_STR(pl_ground_name(g.verdict), "unsupported");
  CHECK_MSG(strstr(g.names, "CNMDA") != NULL, "names: %s", g.names);
  /* "Contracts" meets "contract"; "Article" is in a source */
  CHECK_MSG(!strstr(g.names, "Contracts") && !strstr(g.names, "Article"),
            "names: %s", g.names);

  g = check("It is governed by the laws of the State of Delaware [1].", law,
            nda, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");
  CHECK_EQ_STR(g.names, "");
  CHECK_EQ_INT(g.n_unsupported, 0);
  CHECK(g.n_new >= 2); /* state, delaware, construed ... */

  g = check("The mutual NDA defines Derived Materials.",
            "How does the mutual NDA define Derived Materials?", nda, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "restates");
  CHECK_EQ_INT(g.n_new, 0);
  g = check("[1] Apache-2.0:107-113 (4)",
            "Under the Apache License 2.0, what must you give recipients?",
            "You must give any other recipients a copy of this License.", NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "restates");
  g = check("The answer to this question is: \"GPL-3:392-399 (7)\"",
            "What does it mean to convey a work under GPL version 3?",
            "To convey a work means any kind of propagation.", NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "restates");
  g = check("", law, nda, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "restates");
  /* a clause's number alone ("3.4" opens a line of nda) says nothing of
   * what the clause says; with words of the clause it is grounded, and a
   * number the sources hold only inside a line is no clause's */
  const char *protect = "What must the Receiving Party do?";
  g = check("The answer is: 3.4\n\nThe passage is: 3.4", protect, nda, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "restates");
  CHECK_EQ_INT(g.n_new, 1);
  g = check("Under 3.4 it shall protect the Confidential Information.",
            protect, nda, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");
  g = check("It is 9.1.", protect, "Clause 9.1 and 3.4 say so.", NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");
  g = check("It is: 1.", "What does the lease define first?",
            "1. DEFINITIONS\n1.1 In this Lease the following apply.", NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "restates");

  const char *notify = "Within how many hours must the Receiving Party "
                       "notify the Disclosing Party?";
  const char *within = "(d) promptly notify the Disclosing Party in writing, "
                       "and in any event within seventy-two (72) hours";
  g = check("The answer to the question is: Within 72 hours.", notify, within,
            NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");
  g = check("Within 48 hours [1].", notify, within, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "unsupported");
  CHECK_EQ_STR(g.names, "48");
  g = check("The Disclosure Period is 10 years.",
            "How long is the Disclosure Period?",
            "disclosed during the period of two (2) years from the Effective "
            "Date",
            NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "unsupported");
  CHECK_EQ_STR(g.names, "10");
  g = check("The Deposit is 15450 pounds.", "How much is the Deposit?",
            "Deposit: 15,450 pounds, held by the Landlord", NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");
  g = check("The Deposit is 1.5 million.", "How much is the Deposit?",
            "Deposit: 15 pounds and a million thanks", NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "unsupported");
  CHECK_EQ_STR(g.names, "1.5");

  const char *tax = "ll_status tax_compute_line(const tax_table *table, "
                    "money_t net) { return tax_round(net); }";
  g = check("It calls `tax_values` and then tax_round.",
            "Which function does tax_compute_line call?", tax, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "unsupported");
  CHECK_EQ_STR(g.names, "tax_values");
  g = check("It calls tax_round on the net amount.",
            "Which function does tax_compute_line call?", tax, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");

  g = check("#include <iostream> #include <vector> #include <cassert> "
            "#include <cstdint> #include <string>",
            "Which C function computes the tax on a line?",
            "#include <stdio.h>\n#include \"tax.h\"\nint main(void)", NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "unsupported");
  CHECK_EQ_STR(g.names, "");
  CHECK(g.n_unsupported >= 3 && 2 * g.n_unsupported >= g.n_new);
  /* one paraphrase among words the passages hold stays grounded */
  g = check("Moreover, the Receiving Party must safeguard and protect the "
            "Confidential Information.",
            "What must the Receiving Party do?", nda, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");
  CHECK_EQ_STR(g.names, "");
  CHECK_EQ_INT(g.n_unsupported, 2); /* moreover, safeguard */

  g = check("The governing law is that of the State of Prem", law, nda, NULL);
  CHECK_EQ_STR(g.names, "");
  g = check("The governing law is that of the State of Prem.", law, nda, NULL);
  CHECK_EQ_STR(g.names, "Prem");

  g = check("The passages do not contain the answer.", law, nda, NULL);
  CHECK_EQ_STR(pl_ground_name(g.verdict), "declines");

  /* the second source (after a NULL) holds "Saltmarsh" */
  g = check("The other party is Saltmarsh Ltd.", "Who is the other party?", nda,
            "Recent conversation:\nUser: Saltmarsh Ltd signed it?");
  CHECK_EQ_STR(pl_ground_name(g.verdict), "grounded");
}

/* Random answers and sources from a few words, numbers and labels, and
 * (every fourth round) raw bytes. */
static void check_random(void) {
  static const char *const parts[] = {
      "law",         "Delaware", "the",
      "Act",         "CNMDA",    "72",
      "(72)",        "[1]",      "[1, 2]",
      "a.c:1",       "15,450",   "1.5",
      ". ",          "\n",       "tax_x",
      "`",           "\"",       "(",
      ")",           ":",        "\xc3\xa9t\xc3\xa9",
      "not contain", "-",        "9.",
      "0,",          "Prem"};
  unsigned seed = 20261206;
  char text[2][400];
  for (int round = 0; round < 5000; round++) {
    /* every fourth round raw bytes: the model's text is any UTF-8 */
    for (int i = 0; i < 2; i++)
      test_random_text(parts, sizeof parts / sizeof *parts, 40, round % 4 == 3,
                       &seed, text[i], sizeof text[i]);
    const char *src[1] = {text[1]};
    pl_grounding g;
    CHECK_EQ_INT(pl_ground_check(text[0], "Which law?", src, 1, &g), 0);
    CHECK(g.n_unsupported >= 0 && g.n_unsupported <= g.n_new);
    CHECK(strlen(g.names) < sizeof g.names);
    if (g.verdict == PL_RESTATES) /* nothing new, or clause numbers */
      CHECK(g.n_unsupported == 0 && !g.names[0]);
    if (g.verdict == PL_GROUNDED)
      CHECK_MSG(g.n_new > g.n_unsupported && !g.names[0],
                "round %d: %d new, %d unsupported, names '%s'", round, g.n_new,
                g.n_unsupported, g.names);
  }
}

int main(void) {
  check_rules();
  check_random();
  return TEST_EXIT();
}
