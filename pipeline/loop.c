/*
 * loop.c - where a generated answer has started to loop.
 *
 * A small model sometimes loops until max_tokens, which is then most of
 * the answer's time: one sentence over and over, "1.1.1.1.1...", or a
 * unit whose numbers change from copy to copy ("[1] Apache-2.0:107-113
 * (4)\n[2] Apache-2.0:107-113 (4)\n...", "2.0, 3.0, 3.2, 3.4, ..."). ask
 * and chat stop generating at the first loop and keep one copy.
 */
#include "pipeline_int.h"

#include <ctype.h>

/* An exact loop: one unit of up to LOOP_MAX_UNIT_BYTES, with a letter or
 * digit (not a table rule or indentation), at least LOOP_MIN_COPIES times
 * over LOOP_MIN_BYTES. */
#define LOOP_MAX_UNIT_BYTES 64
#define LOOP_MIN_BYTES 48
#define LOOP_MIN_COPIES 4
/* A loop in shape (digits may differ, all else the same, and the unit
 * has a digit) needs more: with a letter in the unit (the model echoing
 * passage labels) SHAPE_MIN_COPIES copies over SHAPE_MIN_BYTES; numbers
 * alone ("2.0, 3.0, 3.2, ...") twice the copies, over half the bytes. A
 * numbered list of that length in one shape is rare in an answer
 * ("Sections 3.1, 3.2, 3.3" is not cut). */
#define SHAPE_MIN_BYTES 128
#define SHAPE_MIN_COPIES 4

static int same_shape(unsigned char a, unsigned char b) {
  return a == b || (isdigit(a) && isdigit(b));
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
    if (span >= LOOP_MIN_BYTES && span >= LOOP_MIN_COPIES * u)
      return n - span + u;
    if (!digit)
      continue;
    while (k + u < n && same_shape((unsigned char)s[n - 1 - k],
                                   (unsigned char)s[n - 1 - k - u]))
      k++;
    span = k + u;
    size_t min_bytes = alpha ? SHAPE_MIN_BYTES : SHAPE_MIN_BYTES / 2;
    size_t min_copies = alpha ? SHAPE_MIN_COPIES : 2 * SHAPE_MIN_COPIES;
    if (span >= min_bytes && span >= min_copies * u)
      return n - span + u;
  }
  return n;
}
