/*
 * read_pdf.c - PDF reader on poppler-glib: the text of each page as poppler
 * lays it out (poppler_page_get_text), pages in order.
 *
 * Marks: `page` is the 1-based page number and `line` the 1-based line within
 * that page (not a running line over the document), so a citation reads
 * "page 3, line 12". Each page's text ends with a newline; nothing else marks
 * the page break in the text. Encrypted PDFs that need a password and files
 * poppler cannot open are refused with a message naming the file; we never
 * supply a password.
 *
 * poppler-glib is opened when the first PDF is read (dlopen), not linked:
 * it brings 51 libraries, whose loading cost every docqa process about
 * 6 ms at start (`docqa xref` p50 14.2 -> 8.0 ms, 0.8 of it its own
 * query). A machine without it reads everything but PDFs, which are
 * refused naming the library.
 */
#include "ingest_int.h"

#include <dlfcn.h>
#include <glib.h>
#include <poppler.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef DQ_POPPLER_GLIB_SONAME
#define DQ_POPPLER_GLIB_SONAME "libpoppler-glib.so.8"
#endif

/* The calls this reader makes, taken from the library once. */
static struct {
  GBytes *(*bytes_new_static)(gconstpointer, gsize);
  void (*bytes_unref)(GBytes *);
  void (*object_unref)(gpointer);
  void (*free)(gpointer);
  void (*error_free)(GError *);
  GQuark (*error_quark)(void);
  PopplerDocument *(*document_new_from_bytes)(GBytes *, const char *,
                                              GError **);
  int (*document_get_n_pages)(PopplerDocument *);
  PopplerPage *(*document_get_page)(PopplerDocument *, int);
  char *(*page_get_text)(PopplerPage *);
  const char *(*get_version)(void);
  char why[300]; /* empty when loaded */
} pdf;
static pthread_once_t pdf_once = PTHREAD_ONCE_INIT;

static void pdf_open(void) {
  /* RTLD_LOCAL: glib's symbols are for poppler, not for everyone */
  void *h = dlopen(DQ_POPPLER_GLIB_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(pdf.why, sizeof pdf.why,
             "PDF support needs poppler-glib (%s, Debian's libpoppler-glib8): "
             "%s",
             DQ_POPPLER_GLIB_SONAME, e ? e : "cannot load it");
    return;
  }
  static const char *const names[] = {"g_bytes_new_static",
                                      "g_bytes_unref",
                                      "g_object_unref",
                                      "g_free",
                                      "g_error_free",
                                      "poppler_error_quark",
                                      "poppler_document_new_from_bytes",
                                      "poppler_document_get_n_pages",
                                      "poppler_document_get_page",
                                      "poppler_page_get_text",
                                      "poppler_get_version"};
  void *fn[sizeof names / sizeof names[0]];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(fn[i] = dlsym(h, names[i]))) { /* its dependencies too */
      snprintf(pdf.why, sizeof pdf.why, "%s has no %s", DQ_POPPLER_GLIB_SONAME,
               names[i]);
      dlclose(h);
      return;
    }
  /* POSIX: a function pointer may be converted from dlsym's void * */
  *(void **)&pdf.bytes_new_static = fn[0];
  *(void **)&pdf.bytes_unref = fn[1];
  *(void **)&pdf.object_unref = fn[2];
  *(void **)&pdf.free = fn[3];
  *(void **)&pdf.error_free = fn[4];
  *(void **)&pdf.error_quark = fn[5];
  *(void **)&pdf.document_new_from_bytes = fn[6];
  *(void **)&pdf.document_get_n_pages = fn[7];
  *(void **)&pdf.document_get_page = fn[8];
  *(void **)&pdf.page_get_text = fn[9];
  *(void **)&pdf.get_version = fn[10];
}

/* NULL when poppler-glib is ready, else why not. */
static const char *pdf_load(void) {
  pthread_once(&pdf_once, pdf_open);
  return pdf.why[0] ? pdf.why : NULL;
}

const char *dq_ingest_poppler_version(void) {
  return pdf_load() ? "not found" : pdf.get_version();
}

dq_status dq_read_pdf(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_pages) {
  *n_pages = 0;
  const char *why = pdf_load();
  if (why)
    return dq_error_set(c->err, DQ_ERR_UNSUPPORTED, "%s: %s", c->name, why);
  GError *gerr = NULL;
  GBytes *bytes = pdf.bytes_new_static(data, n);
  PopplerDocument *doc = pdf.document_new_from_bytes(bytes, NULL, &gerr);
  dq_status st = DQ_OK;
  if (!doc) {
    int encrypted = gerr && gerr->domain == pdf.error_quark() &&
                    gerr->code == POPPLER_ERROR_ENCRYPTED;
    st = dq_error_set(c->err, encrypted ? DQ_ERR_UNSUPPORTED : DQ_ERR_FORMAT,
                      encrypted ? "%s: encrypted PDF (a password is needed)%s%s"
                                : "%s: cannot open PDF%s%s",
                      c->name, gerr ? ": " : "", gerr ? gerr->message : "");
    goto fail;
  }
  int count = pdf.document_get_n_pages(doc);
  for (int i = 0; i < count; i++) {
    PopplerPage *page = pdf.document_get_page(doc, i);
    if (!page)
      continue;
    char *text = pdf.page_get_text(page);
    pdf.object_unref(page);
    if (!text)
      continue;
    uint32_t line = 1;
    size_t len = strlen(text);
    for (size_t s = 0; s < len;) {
      const char *nl = memchr(text + s, '\n', len - s);
      size_t e = nl ? (size_t)(nl - text) : len;
      dq_tbuf_pos(b, line, (uint32_t)i + 1);
      dq_tbuf_put_utf8(b, text + s, e - s);
      dq_tbuf_putc(b, '\n');
      line++;
      s = e + 1;
    }
    pdf.free(text);
  }
  *n_pages = count > 0 ? (uint32_t)count : 0;
fail:
  if (doc)
    pdf.object_unref(doc);
  pdf.bytes_unref(bytes);
  if (gerr)
    pdf.error_free(gerr);
  return st;
}
