/*
 * test_loop.c - where a generated answer starts to loop (loop.c
 * pl_loop_start), which stops ask's and chat's generation and keeps one
 * copy. Each case is text the 135M model wrote, or the case a rule keeps
 * out:
 *   - one sentence over and over: cut after its first copy; one over 64
 *     bytes at its third copy, a shorter one at its fourth; where the
 *     copy begins inside a line, at that line's end;
 *   - "1.1.1.1.1...": a short unit;
 *   - units whose numbers change: with words ("[1] Apache-2.0:107-113
 *     (4)\n[2] ...") cut at four copies over 128 bytes, numbers alone
 *     ("2.0, 3.0, 3.2, ...") at eight over 64;
 *   - a short numbered list ("Sections 3.1, 3.2, 3.3"), table rules and
 *     a table's rows of one shape are not loops;
 *   - text that does not end in a loop is left whole (n);
 * then random texts of few letters: the result is never past n, and text
 * before it that is cut never repeats the rule's minimum.
 * Then where the model starts to write a passage out in the prompt's
 * layout (pl_echo_start), from the model's own chat answers: a later line
 * opening like a passage's label ("[1] path:159-171 (...)", "[2] path
 * p.4", "[n] ...") is cut, with what may still become one held back, or
 * after a colon kept, the cut at its end; a first line, or a line that
 * cites ("[1] states ..."), is not.
 */
#include "pipeline_int.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t cut(const char *s) { return pl_loop_start(s, strlen(s)); }

/* s repeated `times` times after `head`, in buf. */
static const char *rep(char *buf, size_t cap, const char *head, const char *s,
                       int times) {
  size_t n = (size_t)snprintf(buf, cap, "%s", head);
  for (int i = 0; i < times && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s", s);
  return buf;
}

static size_t echo(const char *s, size_t *hold) {
  return pl_echo_start(s, strlen(s), hold);
}

static void check_echo(void) {
  static const struct {
    const char *text;
    const char *cut;  /* where it is cut, or NULL: not */
    const char *hold; /* where it is held, or NULL: not */
  } c[] = {
      {"9.1 The term is five (5) years.\n\n[n] This Agreement, its "
       "Schedule ...",
       "[n] This", NULL},
      {"The notice period is set out in Schedule 4.\n\n[1] "
       "contracts/master_services_agreement.txt:159-171 (Article 12 "
       "GENERAL)\n1.1 Notices. A notice ...",
       "[1] contracts", NULL},
      {"Six months.\n[2] contracts/commercial_lease.pdf p.4 (7 BREAK)",
       "[2] contracts", NULL},
      /* a deck's slide, a workbook's sheet (dq_where) */
      {"It is Q3.\n[1] board/q3.pptx slide 4 (Slide 4: Plan)", "[1] board",
       NULL},
      {"Ireland.\n[2] book.xlsx sheet 2 rows 14-20 (Sheet: Vendors)",
       "[2] book", NULL},
      {"Ireland.\n[2] book.xlsx sheet x", NULL, NULL},
      {"Ireland.\n[2] book.xlsx slider 2", NULL, NULL},
      /* after a colon: the model's pointer to its passage, kept; the
       * answer ends with it */
      {"The answer to this question is:\n\n[1] GPL-3:257-263 (6)\n\nThe "
       "licence ...",
       "\n\nThe licence", NULL},
      {"The answer to this question is:\n\n[1] GPL-3:257-263 (6)", NULL, NULL},
      /* the first line is the answer's own */
      {"[1] Apache-2.0:107-113 (4) The licence is granted ...", NULL, NULL},
      {"  \n[1] a.txt:1-2\nb", NULL, NULL},
      /* citing lines, lists, prose in brackets */
      {"The fee is due.\n[1] states it in full.", NULL, NULL},
      {"Terms:\n- [1] a.txt:3-4", NULL, NULL},
      {"Terms:\n[1] a.txt (the lease)", NULL, NULL},
      {"Terms:\n[12345] a.txt:3", NULL, NULL},
      {"Terms:\n[x] a.txt:3", NULL, NULL},
      {"Terms:\n[1]a.txt:3", NULL, NULL},
      {"Terms:\n[1] path:\nnext", NULL, NULL},
      /* not told yet: held from the line's start */
      {"Done.\n[", NULL, "["},
      {"Done.\n[12", NULL, "[12"},
      {"Done.\n[3] ", NULL, "[3] "},
      {"Done.\n[3] contracts/msa.txt", NULL, "[3] contracts"},
      {"Done.\n[3] contracts/msa.txt:", NULL, "[3] contracts"},
      {"Done.\n[3] lease.pdf p", NULL, "[3] lease"},
      {"Done.\n[3] lease.pdf p.", NULL, "[3] lease"},
      {"Done.\n[3] q3.pptx sl", NULL, "[3] q3"},
      {"Done.\n[3] book.xlsx sheet ", NULL, "[3] book"},
      {"Done.\n[3] book.xlsx s", NULL, "[3] book"},
      {"Done.\n[n]", NULL, "[n]"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    size_t hold = 0, n = strlen(c[i].text);
    size_t at = echo(c[i].text, &hold);
    size_t want =
        c[i].cut ? (size_t)(strstr(c[i].text, c[i].cut) - c[i].text) : n;
    size_t want_hold =
        c[i].hold ? (size_t)(strstr(c[i].text, c[i].hold) - c[i].text) : n;
    CHECK_MSG(at == want, "case %zu: cut at %zu, want %zu", i, at, want);
    CHECK_MSG(hold == want_hold, "case %zu: held at %zu, want %zu", i, hold,
              want_hold);
  }
  /* Fed a byte at a time, as a stream: every prefix is cut where the
   * whole text is or not at all, and holds nothing past what it can
   * still tell. */
  const char *t = c[1].text;
  size_t whole_hold, whole = echo(t, &whole_hold);
  for (size_t k = 1; k <= strlen(t); k++) {
    size_t hold, at = pl_echo_start(t, k, &hold);
    CHECK(at == k || at == whole);
    CHECK(hold <= k && (at == k || hold == k));
    if (at < k) /* once told, every longer prefix says the same */
      CHECK(at == whole);
  }
  /* random texts of brackets, digits, colons and newlines */
  srand(11);
  for (int r = 0; r < 3000; r++) {
    static const char abc[] = "[]1n :.p\nx/";
    char b[200];
    size_t len = (size_t)(rand() % (int)sizeof b);
    for (size_t i = 0; i < len; i++)
      b[i] = abc[rand() % (int)(sizeof abc - 1)];
    size_t hold, at = pl_echo_start(b, len, &hold);
    CHECK(at <= len && hold <= len);
    if (at < len) /* a line's start after the first, or a label's end */
      CHECK(at > 0 && ((b[at - 1] == '\n' && b[at] == '[') || b[at] == '\n'));
    if (hold < len)
      CHECK(hold > 0 && b[hold - 1] == '\n' && at == len);
  }
}

int main(void) {
  char buf[4096];
  /* one sentence, exactly: kept once (the blank before its first copy
   * matches its last character, so the cut comes one byte early) */
  const char *s =
      rep(buf, sizeof buf, "Answer: ", "The term is five years. ", 4);
  CHECK_EQ_INT((int)cut(s), (int)strlen("Answer: The term is five years."));
  /* three copies (72 bytes) are not yet a loop */
  s = rep(buf, sizeof buf, "Answer: ", "The term is five years. ", 3);
  CHECK_EQ_INT((int)cut(s), (int)strlen(s));
  /* "1.1.1.1.1..." */
  s = rep(buf, sizeof buf, "1", ".1", 30);
  CHECK((int)cut(s) < 8);
  /* numbers that change: "[n] path:lines (4)" lines of 27 bytes, cut at
   * the fifth (four copies, 135 bytes) */
  size_t n = 0;
  for (int i = 1; i <= 9; i++) {
    n += (size_t)snprintf(buf + n, sizeof buf - n,
                          "[%d] Apache-2.0:107-113 (4)\n", i);
    size_t c = cut(buf);
    if (i < 5)
      CHECK_MSG(c == n, "%d lines: cut at %zu of %zu", i, c, n);
    else
      CHECK_MSG(c == strlen("[1] Apache-2.0:107-113 (4)\n"),
                "%d lines: cut at %zu", i, c);
  }
  /* a longer unit: four copies are enough */
  n = 0;
  buf[0] = '\0';
  static const int lines[][2] = {
      {257, 263}, {269, 276}, {269, 276}, {293, 293}};
  for (int i = 0; i < 4; i++) {
    size_t c = cut(buf);
    CHECK_MSG(c == n, "%d copies: cut at %zu of %zu", i, c, n);
    n += (size_t)snprintf(buf + n, sizeof buf - n,
                          "The answer to this question is:\n\n[%d] GPL-3:%d-%d "
                          "(6)\n\n",
                          i + 1, lines[i][0], lines[i][1]);
  }
  CHECK_EQ_INT((int)cut(buf), (int)(n / 4));
  /* sentences over 64 bytes, as the model wrote them: cut at the third
   * copy, after the first */
  static const char *const longs[] = {
      "The BM25 and dense algorithm is a benchmark for the BM25 and dense "
      "algorithm.\n\n",
      "The answer to the question \"What does pl_echo_start return?\" "
      "is:\n\n"};
  for (int i = 0; i < 2; i++) {
    size_t u = strlen(longs[i]);
    CHECK(u > 64);
    s = rep(buf, sizeof buf, "Answer: ", longs[i], 2);
    CHECK_EQ_INT((int)cut(s), (int)strlen(s));
    s = rep(buf, sizeof buf, "Answer: ", longs[i], 3);
    CHECK_EQ_INT((int)cut(s), (int)(strlen("Answer: ") + u));
    /* and still once it goes on, mid-copy */
    s = rep(buf, sizeof buf, "Answer: ", longs[i], 5);
    buf[strlen(s) - 10] = '\0';
    CHECK_EQ_INT((int)cut(s), (int)(strlen("Answer: ") + u));
  }
  /* the loop's first copy begins inside an earlier sentence that ends
   * as it does (the model's answer): the cut goes back to that line's
   * end, not into "The BM25 and dense algorithm" */
  const char *first = "The BM25 weight combined with the vector score is a "
                      "benchmark for the BM25 and dense algorithm.\n\n";
  s = rep(buf, sizeof buf, first, longs[0], 4);
  CHECK_EQ_INT((int)cut(s), (int)strlen(first));
  /* a copy that begins with the line break: the cut stays after it */
  s = rep(buf, sizeof buf, "Intro", "\nThe term is five years and a day.", 4);
  CHECK_EQ_INT((int)cut(s),
               (int)strlen("Intro\nThe term is five years and a day."));
  /* a unit over 320 bytes is not looked for */
  char big[400];
  for (int i = 0; i < 330; i++)
    big[i] = (char)('a' + i % 23 + (i % 7 == 0));
  big[330] = '\0';
  s = rep(buf, sizeof buf, "", big, 3);
  CHECK_EQ_INT((int)cut(s), (int)strlen(s));
  /* rows of one shape longer than 64 bytes (a table): not cut */
  n = 0;
  for (int i = 1; i <= 8; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n,
                          "| 20%02d | revenue of the northern region | %d.%d "
                          "million |\n",
                          i, i + 3, i);
  CHECK_EQ_INT((int)cut(buf), (int)n);
  /* four copies of one shape, but under 128 bytes: an answer */
  const char *w = "Section 3 applies; Section 4 applies; Section 5 applies; "
                  "Section 6 applies; ";
  CHECK_EQ_INT((int)cut(w), (int)strlen(w));
  /* versions counting up, after a sentence: cut within the list */
  const char *v = "The Mozilla Public License 2.0, v. 2.0, 1.0, and 2.0, 2.0, "
                  "3.0, 3.2, 3.4, 3.5, 3.6, 3.7, 3.8, 3.9, 4.0, 4.1, 4.2, 4.3";
  size_t cv = cut(v);
  CHECK_MSG(cv > strlen("The Mozilla Public License") && cv < 64, "cut at %zu",
            cv);
  /* a short numbered list is an answer */
  const char *l = "Clause 3 applies: Sections 3.1, 3.2, 3.3, 3.4, 3.5 and 3.6.";
  CHECK_EQ_INT((int)cut(l), (int)strlen(l));
  /* "Sections 3.1, 3.2, ..." with the trailing unit still forming: not
   * yet eight copies over 64 bytes */
  l = "See 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, ";
  CHECK_EQ_INT((int)cut(l), (int)strlen(l));
  /* a table rule, and indentation, have no letter or digit */
  s = rep(buf, sizeof buf, "| a | b |\n", "|---", 40);
  CHECK_EQ_INT((int)cut(s), (int)strlen(s));
  s = rep(buf, sizeof buf, "x", " ", 200);
  CHECK_EQ_INT((int)cut(s), (int)strlen(s));
  /* a loop earlier in the text, then something else: not cut (only a
   * tail that loops stops generation) */
  s = rep(buf, sizeof buf, "", "ab ", 30);
  strcat(buf, "and then the answer ends here.");
  CHECK_EQ_INT((int)cut(s), (int)strlen(s));
  CHECK_EQ_INT((int)cut(""), 0);
  CHECK_EQ_INT((int)pl_loop_start("a", 1), 1);
  /* random texts over a small alphabet (loops come easily) */
  srand(7);
  for (int t = 0; t < 3000; t++) {
    static const char abc[] = "ab1. \n";
    size_t len = (size_t)(rand() % 300);
    char *r = malloc(len + 1);
    if (!r)
      break;
    for (size_t i = 0; i < len; i++)
      r[i] = abc[rand() % (int)(sizeof abc - 1)];
    r[len] = '\0';
    size_t c = pl_loop_start(r, len);
    CHECK(c <= len);
    if (c < len) /* the text from one copy before c to the end loops */
      CHECK(c > 0);
    free(r);
  }
  check_echo();
  return TEST_EXIT();
}
