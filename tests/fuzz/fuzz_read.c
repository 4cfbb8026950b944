/*
 * fuzz_read.c - libFuzzer harness for one reader: feeds the input to
 * dq_read_buffer as DQ_FUZZ_KIND (set per executable by CMakeLists.txt) and
 * checks the dq_text invariants of ingest.h on success. Crashes, sanitizer
 * reports, leaks and broken invariants are findings. With
 * DQ_FUZZ_CFB_STREAM (a stream's name), the input is that stream of a
 * compound file the harness writes around it (tests/ingest_read/
 * cfb_build.h): fuzz_xls_stream's BIFF8 records.
 */
#include "ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DQ_FUZZ_KIND
#define DQ_FUZZ_KIND DQ_DOC_TEXT
#endif

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "invariant broken: %s\n", what);
    abort();
  }
}

#ifdef DQ_FUZZ_CFB_STREAM
#include "ingest_read/cfb_build.h"
#endif

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
#ifdef DQ_FUZZ_CFB_STREAM
  /* the input is one stream of a compound file, wrapped here, so that
   * mutations reach its records rather than the container's */
  static unsigned char file[512 * 3 + CFB_BUILD_MAX_STREAM];
  n = cfb_build(DQ_FUZZ_CFB_STREAM, data, n, file, sizeof file);
  if (!n)
    return 0;
  data = file;
#endif
  dq_text *t = NULL;
  dq_error err = {0};
  dq_read_info info;
  /* small limits so the fuzzer cannot spend its time on huge outputs */
  dq_read_opts o = {.max_file_bytes = 1 << 20, .max_part_bytes = 4 << 20};
  dq_status st = dq_read_buffer("fuzz", data, n, DQ_FUZZ_KIND, &o, &t, &info,
                                &err);
  if (st != DQ_OK) {
    check(t == NULL, "NULL text on error");
    check(err.msg[0] != '\0', "a message on error");
    return 0;
  }
  check(t && t->text, "text");
  check(t->text[t->n_bytes] == '\0', "NUL terminated");
  check(strlen(t->text) == t->n_bytes, "no NUL inside");
  check(t->n_bytes == 0 || (t->n_marks >= 1 && t->marks[0].offset == 0),
        "first mark at 0");
  for (size_t i = 1; i < t->n_marks; i++)
    check(t->marks[i].offset > t->marks[i - 1].offset &&
              t->marks[i].offset < t->n_bytes,
          "marks increasing, inside text");
  for (size_t i = 0; i < t->n_headings; i++)
    check(t->headings[i].offset <= t->n_bytes && t->headings[i].title,
          "headings inside text");
  /* UTF-8 validity */
  const unsigned char *s = (const unsigned char *)t->text;
  for (size_t i = 0; i < t->n_bytes;) {
    unsigned c = s[i];
    size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    check(c < 0x80 || (c >= 0xC2 && c <= 0xF4), "UTF-8 lead byte");
    check(i + len <= t->n_bytes, "UTF-8 sequence inside text");
    for (size_t k = 1; k < len; k++)
      check((s[i + k] & 0xC0) == 0x80, "UTF-8 continuation");
    i += len;
  }
  dq_text_free(t);
  return 0;
}
