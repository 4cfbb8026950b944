/*
 * text.c - the shared records of the ingest layer (dq_text, dq_doc_parts):
 * freeing them, mapping a text offset back to its source line/page, the
 * code languages by file extension (one table for dq_detect_kind and the
 * chunkers) and the versions of the reader libraries. Readers and chunkers
 * live elsewhere.
 */
#include "ingest.h"

#include <glib.h>
#include <libxml/xmlversion.h>
#include <zip.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *dq_doc_kind_name(dq_doc_kind k) {
  switch (k) {
  case DQ_DOC_TEXT: return "text";
  case DQ_DOC_MARKDOWN: return "markdown";
  case DQ_DOC_HTML: return "html";
  case DQ_DOC_XML: return "xml";
  case DQ_DOC_DOCX: return "docx";
  case DQ_DOC_ODT:
    return "odt";
  case DQ_DOC_EPUB:
    return "epub";
  case DQ_DOC_EMAIL:
    return "email";
  case DQ_DOC_RTF:
    return "rtf";
  case DQ_DOC_IMAGE:
    return "image";
  case DQ_DOC_PPTX:
    return "pptx";
  case DQ_DOC_XLSX:
    return "xlsx";
  case DQ_DOC_DOC:
    return "doc";
  case DQ_DOC_ODS:
    return "ods";
  case DQ_DOC_XLS:
    return "xls";
  case DQ_DOC_ODP:
    return "odp";
  case DQ_DOC_PDF: return "pdf";
  case DQ_DOC_CODE: return "code";
  case DQ_DOC_UNKNOWN: break;
  }
  return "unknown";
}

void dq_text_free(dq_text *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->n_headings; i++)
    free(t->headings[i].title);
  free(t->headings);
  free(t->marks);
  free(t->text);
  free(t);
}

void dq_text_locate(const dq_text *t, size_t offset, uint32_t *line,
                    uint32_t *page) {
  *line = 1;
  *page = 0;
  if (!t || t->n_marks == 0)
    return;
  /* Last mark whose offset <= offset. marks[0].offset == 0 by invariant. */
  size_t lo = 0, hi = t->n_marks;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->marks[mid].offset <= offset)
      lo = mid;
    else
      hi = mid;
  }
  *line = t->marks[lo].line;
  *page = t->marks[lo].page;
}

void dq_doc_parts_free(dq_doc_parts *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->n_chunks; i++) {
    free(p->chunks[i].section);
    free(p->chunks[i].text);
  }
  for (size_t i = 0; i < p->n_symbols; i++) {
    free(p->symbols[i].name);
    free(p->symbols[i].scope);
  }
  for (size_t i = 0; i < p->n_refs; i++) {
    free(p->refs[i].name);
    free(p->refs[i].caller);
  }
  free(p->chunks);
  free(p->symbols);
  free(p->refs);
  free(p);
}

const char *dq_ingest_libxml2_version(void) { return LIBXML_DOTTED_VERSION; }

void dq_ingest_pcre2_version(char *buf, size_t buf_bytes) {
  if (buf_bytes == 0)
    return;
  buf[0] = '\0';
  int n = pcre2_config(PCRE2_CONFIG_VERSION, NULL);
  if (n > 0 && (size_t)n <= buf_bytes)
    pcre2_config(PCRE2_CONFIG_VERSION, buf);
}

const char *dq_ingest_libzip_version(void) { return zip_libzip_version(); }

/* ---- code languages by extension ---- */

static const struct {
  const char *ext;
  const char *lang;
} ext_langs[] = {
    {"c", "c"},
    {"h", "c"},
    {"cc", "cpp"},
    {"cpp", "cpp"},
    {"cxx", "cpp"},
    {"hpp", "cpp"},
    {"hh", "cpp"},
    {"hxx", "cpp"},
    {"cu", "cpp"}, /* CUDA: C++ with kernels */
    {"cuh", "cpp"},
    {"py", "python"},
    {"pyi", "python"},
    {"js", "javascript"},
    {"mjs", "javascript"},
    {"cjs", "javascript"},
    {"jsx", "javascript"},
    {"ts", "typescript"},
    {"tsx", "typescript"},
    {"mts", "typescript"},
    {"cts", "typescript"},
    {"go", "go"},
    {"rs", "rust"},
    {"java", "java"},
    {"cs", "csharp"},
    {"kt", "kotlin"},
    {"kts", "kotlin"},
    {"php", "php"},
    {"swift", "swift"},
    {"rb", "ruby"},
    {"rake", "ruby"},
};

const char *dq_chunk_lang_for_path(const char *path) {
  if (!path)
    return NULL;
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base)
    return NULL;
  for (size_t i = 0; i < sizeof ext_langs / sizeof ext_langs[0]; i++)
    if (strcasecmp(dot + 1, ext_langs[i].ext) == 0)
      return ext_langs[i].lang;
  return NULL;
}
