/*
 * fuzz_docx_parts.c - structure-aware libFuzzer harness for read_docx.c's
 * WordprocessingML handling: the input is split at "\n--8<--\n" into
 * word/document.xml, word/styles.xml, word/numbering.xml,
 * word/footnotes.xml, word/endnotes.xml, word/comments.xml,
 * word/commentsExtended.xml, the document's relationships and a header
 * and a footer part, which the harness stores
 * (uncompressed) in a zip and reads as a DOCX. Random bytes rarely survive
 * deflate and the zip directory, so fuzz_read_docx mostly exercises the
 * container; this one reaches paragraphs, tables, styles, list numbering
 * (a style's too), notes and comments. Built with DQ_FUZZ_ODT (fuzz_odt_parts),
 * the parts are an ODT's content.xml and styles.xml; with DQ_FUZZ_EPUB
 * (fuzz_epub_parts), an EPUB's container.xml, package, nav, NCX, two
 * chapters (OEBPS/c1.xhtml, OEBPS/c2.xhtml) and encryption.xml; with
 * DQ_FUZZ_PPTX (fuzz_pptx_parts), a deck's package and presentation
 * relationships, presentation.xml, two slides, the first's relationships
 * and its notes; with DQ_FUZZ_XLSX (fuzz_xlsx_parts), a workbook, its
 * relationships, shared strings, styles, two worksheets, the first's
 * relationships and its comments; with
 * DQ_FUZZ_ODS (fuzz_ods_parts), an OpenDocument spreadsheet's
 * content.xml; with DQ_FUZZ_ODP (fuzz_odp_parts), an OpenDocument
 * presentation's content.xml and styles.xml. Checks as in
 * fuzz_read.c: crashes, sanitizers, leaks.
 */
#include "ingest.h"

#include <stdlib.h>
#include <string.h>
#include <zip.h>

#if defined DQ_FUZZ_ODT /* fuzz_odt_parts: an ODT's content.xml, styles.xml */
static const char *const PARTS[] = {"content.xml", "styles.xml"};
#define FUZZ_NAME "fuzz.odt"
#define FUZZ_KIND DQ_DOC_ODT
#elif defined DQ_FUZZ_EPUB /* fuzz_epub_parts: container, package, contents */
static const char *const PARTS[] = {
    "META-INF/container.xml", "OEBPS/content.opf", "OEBPS/nav.xhtml",
    "OEBPS/toc.ncx",          "OEBPS/c1.xhtml",    "OEBPS/c2.xhtml",
    "META-INF/encryption.xml"};
#define FUZZ_NAME "fuzz.epub"
#define FUZZ_KIND DQ_DOC_EPUB
#elif defined DQ_FUZZ_PPTX /* fuzz_pptx_parts: a deck's parts */
static const char *const PARTS[] = {"_rels/.rels",
                                    "ppt/presentation.xml",
                                    "ppt/_rels/presentation.xml.rels",
                                    "ppt/slides/slide1.xml",
                                    "ppt/slides/_rels/slide1.xml.rels",
                                    "ppt/notesSlides/notesSlide1.xml",
                                    "ppt/slides/slide2.xml"};
#define FUZZ_NAME "fuzz.pptx"
#define FUZZ_KIND DQ_DOC_PPTX
#elif defined DQ_FUZZ_XLSX /* fuzz_xlsx_parts: a workbook's parts */
static const char *const PARTS[] = {"xl/workbook.xml",
                                    "xl/_rels/workbook.xml.rels",
                                    "xl/sharedStrings.xml",
                                    "xl/styles.xml",
                                    "xl/worksheets/sheet1.xml",
                                    "xl/worksheets/sheet2.xml",
                                    "xl/worksheets/_rels/sheet1.xml.rels",
                                    "xl/comments1.xml"};
#define FUZZ_NAME "fuzz.xlsx"
#define FUZZ_KIND DQ_DOC_XLSX
#elif defined DQ_FUZZ_ODS /* fuzz_ods_parts: a spreadsheet's content.xml */
static const char *const PARTS[] = {"content.xml"};
#define FUZZ_NAME "fuzz.ods"
#define FUZZ_KIND DQ_DOC_ODS
#elif defined DQ_FUZZ_ODP /* fuzz_odp_parts: a presentation's parts */
static const char *const PARTS[] = {"content.xml", "styles.xml"};
#define FUZZ_NAME "fuzz.odp"
#define FUZZ_KIND DQ_DOC_ODP
#else
static const char *const PARTS[] = {
    "word/document.xml",         "word/styles.xml",
    "word/numbering.xml",        "word/footnotes.xml",
    "word/endnotes.xml",         "word/comments.xml",
    "word/commentsExtended.xml", "word/_rels/document.xml.rels",
    "word/header1.xml",          "word/footer1.xml"};
#define FUZZ_NAME "fuzz.docx"
#define FUZZ_KIND DQ_DOC_DOCX
#endif
#define N_PARTS (sizeof PARTS / sizeof *PARTS)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  static const char SEP[] = "\n--8<--\n";
  const size_t n_sep = sizeof SEP - 1;
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *mem = zip_source_buffer_create(NULL, 0, 0, &ze);
  if (!mem)
    return 0;
  zip_source_keep(mem);
  zip_t *z = zip_open_from_source(mem, ZIP_TRUNCATE, &ze);
  if (!z) {
    zip_source_free(mem);
    return 0;
  }
  size_t at = 0;
  for (size_t i = 0; i < N_PARTS && at <= n; i++) {
    const unsigned char *end = NULL;
    for (size_t k = at; k + n_sep <= n && !end; k++)
      if (memcmp(data + k, SEP, n_sep) == 0)
        end = data + k;
    size_t len = end ? (size_t)(end - (data + at)) : n - at;
    zip_source_t *s = zip_source_buffer(z, data + at, len, 0);
    zip_int64_t idx = s ? zip_file_add(z, PARTS[i], s, 0) : -1;
    if (idx < 0)
      zip_source_free(s);
    else
      zip_set_file_compression(z, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
    if (!end)
      break;
    at += len + n_sep;
  }
  if (zip_close(z) != 0) {
    zip_discard(z);
    zip_source_free(mem);
    return 0;
  }
  zip_stat_t st;
  char *buf = NULL;
  if (zip_source_stat(mem, &st) == 0 && zip_source_open(mem) == 0) {
    buf = malloc(st.size ? st.size : 1);
    if (buf && zip_source_read(mem, buf, st.size) == (zip_int64_t)st.size) {
      dq_text *t = NULL;
      dq_error err = {0};
      dq_read_opts o = {.max_part_bytes = 4 << 20};
      if (dq_read_buffer(FUZZ_NAME, buf, st.size, FUZZ_KIND, &o, &t, NULL,
                         &err) == DQ_OK) {
        if (!t || t->text[t->n_bytes] != '\0' ||
            strlen(t->text) != t->n_bytes)
          abort();
        for (size_t i = 1; i < t->n_marks; i++)
          if (t->marks[i].offset <= t->marks[i - 1].offset ||
              t->marks[i].offset >= t->n_bytes)
            abort();
      } else if (t) {
        abort();
      }
      dq_text_free(t);
    }
    zip_source_close(mem);
  }
  free(buf);
  zip_source_free(mem);
  return 0;
}
