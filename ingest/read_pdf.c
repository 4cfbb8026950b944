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
 */
#include "ingest_int.h"

#include <glib.h>
#include <poppler.h>
#include <string.h>

dq_status dq_read_pdf(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_pages) {
  *n_pages = 0;
  GError *gerr = NULL;
  GBytes *bytes = g_bytes_new_static(data, n);
  PopplerDocument *doc = poppler_document_new_from_bytes(bytes, NULL, &gerr);
  dq_status st = DQ_OK;
  if (!doc) {
    int encrypted = gerr && gerr->domain == POPPLER_ERROR &&
                    gerr->code == POPPLER_ERROR_ENCRYPTED;
    st = dq_error_set(c->err, encrypted ? DQ_ERR_UNSUPPORTED : DQ_ERR_FORMAT,
                      encrypted ? "%s: encrypted PDF (a password is needed)%s%s"
                                : "%s: cannot open PDF%s%s",
                      c->name, gerr ? ": " : "", gerr ? gerr->message : "");
    goto fail;
  }
  int count = poppler_document_get_n_pages(doc);
  for (int i = 0; i < count; i++) {
    PopplerPage *page = poppler_document_get_page(doc, i);
    if (!page)
      continue;
    char *text = poppler_page_get_text(page);
    g_object_unref(page);
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
    g_free(text);
  }
  *n_pages = count > 0 ? (uint32_t)count : 0;
fail:
  if (doc)
    g_object_unref(doc);
  g_bytes_unref(bytes);
  if (gerr)
    g_error_free(gerr);
  return st;
}
