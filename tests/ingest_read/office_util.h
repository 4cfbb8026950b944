/*
 * zip_util.h - building a zip archive in memory for the DOCX and ODT reader
 * tests (libzip). Include after test.h: its checks report through CHECK.
 */
#ifndef DQ_ZIP_UTIL_H
#define DQ_ZIP_UTIL_H

#include <stdlib.h>
#include <zip.h>

typedef struct part {
  const char *name;
  const void *data;
  size_t n;
} part;

/* Builds a zip in memory from parts; returns malloc'd bytes. */
static char *make_zip(const part *parts, size_t n_parts, size_t *out_n) {
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

#endif
