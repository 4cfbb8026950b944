/*
 * read_util.h - helpers shared by the ingest_read tests: scratch folders,
 * writing files, and finding where a string landed in a dq_text.
 */
#ifndef DQ_READ_UTIL_H
#define DQ_READ_UTIL_H

#include "ingest.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline int rm_one_(const char *p, const struct stat *s, int f,
                   struct FTW *w) {
  (void)s, (void)f, (void)w;
  return remove(p);
}

/* Removes a scratch tree (never follows symlinks). */
static inline void rm_tree(const char *dir) {
  nftw(dir, rm_one_, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh scratch folder under /tmp; the caller frees and removes it. */
static inline char *scratch_dir(const char *tag) {
  char tmpl[256];
  snprintf(tmpl, sizeof tmpl, "/tmp/dq_%s_XXXXXX", tag);
  char *d = mkdtemp(tmpl);
  return d ? strdup(d) : NULL;
}

/* Writes n bytes to dir/rel, creating parent folders. Returns 0 on success. */
static inline int write_at(const char *dir, const char *rel, const void *data,
                    size_t n) {
  char path[4096];
  if (!dir || !rel)
    return -1;
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  for (char *p = path + strlen(dir) + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0755);
      *p = '/';
    }
  }
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t w = fwrite(data, 1, n, f);
  return fclose(f) == 0 && w == n ? 0 : -1;
}

static inline int write_str(const char *dir, const char *rel, const char *s) {
  return write_at(dir, rel, s, strlen(s));
}

/* Offset of the first occurrence of needle in t->text, or -1. */
/* A progress callback's record (dq_read_opts.progress): the calls, the
 * last stage, done and total; it asks to stop at call stop_at (0: never). */
typedef struct progress_log {
  int calls, stop_at;
  char stage[32];
  uint64_t done, total;
} progress_log;

static inline int progress_record(void *user, const char *stage, uint64_t done,
                                  uint64_t total, const char *unit) {
  progress_log *p = user;
  (void)unit;
  p->calls++;
  snprintf(p->stage, sizeof p->stage, "%s", stage);
  p->done = done;
  p->total = total;
  return p->stop_at && p->calls >= p->stop_at;
}

static inline long find_in(const dq_text *t, const char *needle) {
  const char *p = t && t->text ? strstr(t->text, needle) : NULL;
  return p ? (long)(p - t->text) : -1;
}

/* Source line of the first occurrence of needle (0 when absent). */
static inline uint32_t line_of(const dq_text *t, const char *needle) {
  long off = find_in(t, needle);
  if (off < 0)
    return 0;
  uint32_t line, page;
  dq_text_locate(t, (size_t)off, &line, &page);
  return line;
}

static inline uint32_t page_of(const dq_text *t, const char *needle) {
  long off = find_in(t, needle);
  if (off < 0)
    return 0;
  uint32_t line, page;
  dq_text_locate(t, (size_t)off, &line, &page);
  return page;
}

/* A heading a reader should find: its level, title and where its line is
 * (page 0: not checked, for texts without pages). */
typedef struct head_want {
  int level;
  const char *title;
  uint32_t page, line;
} head_want;

/* Checks that t's headings are exactly want[] (an array), in order; a macro
 * so that test.h's CHECK macros, included after this file, report the
 * caller's line. */
#define CHECK_HEADINGS(t, want)                                                \
  do {                                                                         \
    size_t n_want_ = sizeof(want) / sizeof((want)[0]);                         \
    CHECK_EQ_INT((t)->n_headings, n_want_);                                    \
    for (size_t i_ = 0; i_ < n_want_ && i_ < (t)->n_headings; i_++) {          \
      uint32_t line_, page_;                                                   \
      dq_text_locate((t), (t)->headings[i_].offset, &line_, &page_);           \
      CHECK_EQ_INT((t)->headings[i_].level, (want)[i_].level);                 \
      CHECK_EQ_STR((t)->headings[i_].title, (want)[i_].title);                 \
      CHECK_EQ_INT(line_, (want)[i_].line);                                    \
      if ((want)[i_].page)                                                     \
        CHECK_EQ_INT(page_, (want)[i_].page);                                  \
    }                                                                          \
  } while (0)

/* Whether every line of t carries its own 1-based number, on page 0: the
 * marks of readers whose lines are those of the extracted text (EPUB,
 * e-mail). */
static inline int lines_are_text_lines(const dq_text *t) {
  uint32_t want = 1;
  for (size_t i = 0; i < t->n_bytes; i++) {
    if (i == 0 || t->text[i - 1] == '\n') {
      uint32_t line, page;
      dq_text_locate(t, i, &line, &page);
      if (line != want || page != 0)
        return 0;
      want++;
    }
  }
  return 1;
}

/* Checks the dq_text invariants documented in ingest.h. 1 when they hold. */
static inline int text_invariants(const dq_text *t) {
  if (!t || !t->text || t->text[t->n_bytes] != '\0' ||
      strlen(t->text) != t->n_bytes)
    return 0;
  if (t->n_bytes > 0 && (t->n_marks < 1 || t->marks[0].offset != 0))
    return 0;
  for (size_t i = 1; i < t->n_marks; i++)
    if (t->marks[i].offset <= t->marks[i - 1].offset ||
        t->marks[i].offset >= t->n_bytes)
      return 0;
  for (size_t i = 0; i < t->n_headings; i++)
    if (t->headings[i].offset > t->n_bytes || !t->headings[i].title)
      return 0;
  return 1;
}

#endif /* DQ_READ_UTIL_H */
