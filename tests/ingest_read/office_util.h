/*
 * office_util.h - helpers of the reader tests: a zip archive
 * built in memory (libzip), and a fixture of fixtures/ read with the real
 * reader. Include after read_util.h and test.h: its checks report through
 * CHECK.
 */
#ifndef DQ_OFFICE_UTIL_H
#define DQ_OFFICE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <zip.h>

typedef struct part {
  const char *name;
  const void *data;
  size_t n;
} part;

/* Builds a zip in memory from parts; returns malloc'd bytes. */
static inline char *make_zip(const part *parts, size_t n_parts, size_t *out_n) {
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *mem = zip_source_buffer_create(NULL, 0, 0, &ze);
  zip_source_keep(mem);
  zip_t *z = zip_open_from_source(mem, ZIP_TRUNCATE, &ze);
  CHECK(z != NULL);
  for (size_t i = 0; i < n_parts; i++) {
    zip_source_t *s = zip_source_buffer(z, parts[i].data, parts[i].n, 0);
    CHECK(zip_file_add(z, parts[i].name, s, ZIP_FL_OVERWRITE) >= 0);
  }
  CHECK(zip_close(z) == 0);
  zip_stat_t st;
  CHECK(zip_source_stat(mem, &st) == 0);
  char *buf = malloc(st.size ? st.size : 1);
  CHECK(zip_source_open(mem) == 0);
  CHECK(zip_source_read(mem, buf, st.size) == (zip_int64_t)st.size);
  zip_source_close(mem);
  zip_source_free(mem);
  *out_n = st.size;
  return buf;
}

/* A fixture read with the real reader; NULL (the failure checked) when it
 * cannot be. */
static inline dq_text *fixture(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/ingest_read/fixtures/%s", DQ_SOURCE_DIR,
           name);
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read(path, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err), err.msg);
  if (t)
    CHECK(text_invariants(t));
  return t;
}

#endif
