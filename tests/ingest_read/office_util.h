/*
 * office_util.h - helpers of the reader tests: a zip archive
 * built in memory (libzip), a fixture of fixtures/ read with the real
 * reader, and two formats of one document checked to read alike. Include after
 * read_util.h and test.h: its checks report through CHECK.
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

/* The parts zipped and read as file `name` (its extension picks the
 * reader); a text read is checked for the dq_text invariants. */
static inline dq_status read_zipped(const char *name, const part *parts,
                                    size_t n_parts, dq_text **t,
                                    dq_error *err) {
  size_t n;
  char *zip = make_zip(parts, n_parts, &n);
  dq_status st =
      dq_read_buffer(name, zip, n, DQ_DOC_UNKNOWN, NULL, t, NULL, err);
  free(zip);
  if (st == DQ_OK && *t)
    CHECK(text_invariants(*t));
  return st;
}

/* Open Packaging Conventions' namespaces (PPTX, XLSX parts built in
 * tests). */
#define OPC_R                                                                  \
  "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/"           \
  "relationships\""
#define OPC_RELS                                                               \
  "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/"     \
  "relationships\">"
#define OPC_T                                                                  \
  "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

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

/* Two files of one document, written by one program in two formats
 * (`fmt`.`ext` against the same name in .docx, read with the real
 * readers), read alike: the same text, the same headings and levels. a
 * is of `kind`; with `own_lines`, its marks carry lines of the text. */
static inline void check_alike(const char *doc, const char *ext,
                               dq_doc_kind kind, int own_lines) {
  char na[64], nd[64];
  snprintf(na, sizeof na, "%s.%s", doc, ext);
  snprintf(nd, sizeof nd, "%s.docx", doc);
  dq_text *a = fixture(na), *d = fixture(nd);
  if (a && d) {
    CHECK_EQ_INT(a->kind, kind);
    CHECK_EQ_STR(a->text, d->text);
    CHECK_EQ_INT(a->n_headings, d->n_headings);
    for (size_t h = 0; h < a->n_headings && h < d->n_headings; h++) {
      CHECK_EQ_STR(a->headings[h].title, d->headings[h].title);
      CHECK_EQ_INT(a->headings[h].level, d->headings[h].level);
    }
    if (own_lines)
      CHECK(lines_are_text_lines(a));
  }
  dq_text_free(a);
  dq_text_free(d);
}

/* Fixture `name`, the workbook book.xlsx saved by another program in
 * another format (`kind`), read exactly as the XLSX reader reads
 * book.xlsx: text, headings, and each line's sheet and row. */
static inline void check_as_book_xlsx(const char *name, dq_doc_kind kind) {
  dq_text *o = fixture(name), *x = fixture("book.xlsx");
  if (o && x) {
    CHECK_EQ_INT(o->kind, kind);
    CHECK_EQ_STR(o->text, x->text);
    CHECK_EQ_INT(o->n_pages, x->n_pages);
    CHECK_EQ_INT(o->n_headings, x->n_headings);
    for (size_t h = 0; h < o->n_headings && h < x->n_headings; h++) {
      CHECK_EQ_STR(o->headings[h].title, x->headings[h].title);
      CHECK_EQ_INT(o->headings[h].level, x->headings[h].level);
    }
    for (size_t off = 0; off < o->n_bytes; off++) {
      if (off && o->text[off - 1] != '\n')
        continue;
      uint32_t lo, po, lx, px;
      dq_text_locate(o, off, &lo, &po);
      dq_text_locate(x, off, &lx, &px);
      CHECK_MSG(lo == lx && po == px, "%s offset %zu: %u:%u, xlsx %u:%u", name,
                off, po, lo, px, lx);
    }
  }
  dq_text_free(o);
  dq_text_free(x);
}

#endif
