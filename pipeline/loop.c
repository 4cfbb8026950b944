/*
 * loop.c - where a generated answer has started to loop, or to write the
 * prompt's passages out again.
 *
 * A small model sometimes loops until max_tokens, which is then most of
 * the answer's time: one sentence over and over, "1.1.1.1.1...", or a
 * unit whose numbers change from copy to copy ("[1] Apache-2.0:107-113
 * (4)\n[2] Apache-2.0:107-113 (4)\n...", "2.0, 3.0, 3.2, 3.4, ..."). ask
 * and chat stop generating at the first loop and keep one copy.
 *
 * It also goes on, after an answer, to write a passage of its own in the
 * prompt's layout: "[1] contracts/msa.txt:159-171 (Article 12 GENERAL)"
 * and a clause under it, or "[n] This Agreement ..." after the
 * instruction's "citing them as [n]" (in chat, on the samples, 2 of 2
 * answers of a session). Such a line never belongs to an answer: ask and
 * chat stop at it and drop it, unless the answer's text before it ends
 * in a colon ("The answer is:"): then the label is the answer's pointer
 * to its passage, kept, and the answer stops at its end.
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <string.h>

/* An exact loop: one unit of up to LOOP_MAX_UNIT_BYTES, with a letter or
 * digit (not a table rule or indentation), at least LOOP_MIN_COPIES times
 * over LOOP_MIN_BYTES. A unit longer than SHORT_UNIT_BYTES, a sentence
 * or a line ("The answer to the question \"...\" is:\n\n", 67 bytes),
 * needs LONG_MIN_COPIES: an answer that says a whole sentence three
 * times in a row has stopped answering, and each further copy costs
 * its tokens' decoding. */
#define LOOP_MAX_UNIT_BYTES 320
#define SHORT_UNIT_BYTES 64
#define LOOP_MIN_BYTES 48
#define LOOP_MIN_COPIES 4
#define LONG_MIN_COPIES 3
/* A loop in shape (digits may differ, all else the same, and the unit,
 * of up to SHORT_UNIT_BYTES, has a digit) needs more: with a letter in the unit
 * (the model echoing passage labels) SHAPE_MIN_COPIES copies over
 * SHAPE_MIN_BYTES; numbers alone ("2.0, 3.0, 3.2, ...") twice the copies, over
 * half the bytes. A numbered list of that length in one shape is rare in an
 * answer
 * ("Sections 3.1, 3.2, 3.3" is not cut), but a table's rows of one
 * shape, longer lines, are not. */
#define SHAPE_MIN_BYTES 128
#define SHAPE_MIN_COPIES 4

static int same_shape(unsigned char a, unsigned char b) {
  return a == b || (isdigit(a) && isdigit(b));
}

/* The cut after a loop's first copy s[c-u..c), moved back to just after
 * the copy's last line break (past its first byte) where it has one: the
 * copy may begin inside a sentence that shares the loop's ending ("The
 * weight is a benchmark for the algorithm.\n\nThe algorithm is a
 * benchmark for the algorithm.\n\n..."), and would end in a fragment of
 * the next line ("\n\nThe algorithm"). */
static size_t cut_at_line(const char *s, size_t c, size_t u) {
  for (size_t i = c; i > c - u + 1; i--)
    if (s[i - 1] == '\n')
      return i;
  return c;
}

size_t pl_loop_start(const char *s, size_t n) {
  int alpha = 0, digit = 0; /* in the unit s[n-u..n), grown by one a step */
  for (size_t u = 1; u <= LOOP_MAX_UNIT_BYTES && u < n; u++) {
    alpha |= isalpha((unsigned char)s[n - u]) != 0;
    digit |= isdigit((unsigned char)s[n - u]) != 0;
    if (!alpha && !digit)
      continue;
    size_t k = 0; /* s[n-k-u..n) has period u */
    while (k + u < n && s[n - 1 - k] == s[n - 1 - k - u])
      k++;
    size_t span = k + u;
    size_t copies = u > SHORT_UNIT_BYTES ? LONG_MIN_COPIES : LOOP_MIN_COPIES;
    if (span >= LOOP_MIN_BYTES && span >= copies * u)
      return cut_at_line(s, n - span + u, u);
    if (!digit || u > SHORT_UNIT_BYTES)
      continue;
    while (k + u < n && same_shape((unsigned char)s[n - 1 - k],
                                   (unsigned char)s[n - 1 - k - u]))
      k++;
    span = k + u;
    size_t min_bytes = alpha ? SHAPE_MIN_BYTES : SHAPE_MIN_BYTES / 2;
    size_t min_copies = alpha ? SHAPE_MIN_COPIES : 2 * SHAPE_MIN_COPIES;
    if (span >= min_bytes && span >= min_copies * u)
      return cut_at_line(s, n - span + u, u);
  }
  return n;
}

/* The shape of a passage's label at s[0..n), the start of a line: "[n] "
 * or "[digits] " and a path with ":line" or " p.page" after it. 1: it is
 * one; 0: it is not; -1: s is too short to tell (it may become one). */
#define ECHO_MAX_PATH 256
static int label_line(const char *s, size_t n) {
  if (n == 0)
    return -1;
  if (s[0] != '[')
    return 0;
  size_t i = 1;
  if (i < n && s[i] == 'n') {
    i++;
  } else {
    size_t d = i;
    while (i < n && i - d < 4 && isdigit((unsigned char)s[i]))
      i++;
    if (i < n && i == d)
      return 0;
  }
  if (i >= n)
    return -1;
  if (s[i] != ']')
    return 0;
  if (++i >= n)
    return -1;
  if (s[i] != ' ')
    return 0;
  if (s[1] == 'n')
    return 1;     /* "[n] ": the instruction's own placeholder */
  size_t p = ++i; /* the path: up to a blank */
  while (i < n && s[i] != ' ' && s[i] != '\n' && i - p < ECHO_MAX_PATH) {
    if (s[i] == ':' && i > p && i + 1 < n && isdigit((unsigned char)s[i + 1]))
      return 1;
    i++;
  }
  if (i - p >= ECHO_MAX_PATH || (i < n && i == p))
    return 0;
  if (i >= n)
    return -1;
  if (s[i] == '\n')
    return 0;
  /* "path p.4", "path slide 3", "path sheet 2 rows 4-9" (dq_where) */
  static const char *const units[] = {" p.", " slide ", " sheet "};
  int open = 0; /* a unit s may still become */
  for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
    size_t k = 0, len = strlen(units[u]);
    while (k < len && i + k < n && s[i + k] == units[u][k])
      k++;
    if (k < len) {
      open |= i + k >= n;
      continue;
    }
    if (i + len >= n)
      return -1;
    if (isdigit((unsigned char)s[i + len]))
      return 1;
  }
  return open ? -1 : 0;
}

/* Does the text before line start ls end with a colon? Then the label
 * after it is the model's pointer to a passage ("The answer to this
 * question is:\n\n[1] GPL-3:257-263 (6)"): without it the answer would
 * end in "is:". */
static int introduced(const char *s, size_t ls) {
  while (ls > 0 && isspace((unsigned char)s[ls - 1]))
    ls--;
  return ls > 0 && s[ls - 1] == ':';
}

size_t pl_echo_start(const char *s, size_t n, size_t *hold) {
  *hold = n;
  size_t i = 0;
  while (i < n && isspace((unsigned char)s[i]))
    i++;
  /* the first line is the answer's, whatever it looks like */
  const char *nl = memchr(s + i, '\n', n - i);
  while (nl) {
    size_t ls = (size_t)(nl - s) + 1;
    int r = label_line(s + ls, n - ls);
    if (r == 1 && !introduced(s, ls))
      return ls;
    if (r == 1) { /* kept, and the answer ends with it */
      const char *end = memchr(s + ls, '\n', n - ls);
      return end ? (size_t)(end - s) : n;
    }
    if (r < 0) {
      *hold = ls;
      return n;
    }
    nl = memchr(s + ls, '\n', n - ls);
  }
  return n;
}
