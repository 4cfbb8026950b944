/*
 * read_image.c - image files (a scan saved as TIFF, PNG or JPEG; a
 * screenshot; a fax) read by OCR: each page (a TIFF's frames; one for
 * other formats) decoded by leptonica, read by Tesseract (ocr.c), its
 * lines the page's, so a citation reads "page 2, line 7" as a PDF's does.
 *
 * A page is left empty unless Tesseract is sure (a word confidence of 80
 * or more) of IMG_MIN_SURE of its words and of IMG_MIN_SURE_PCT percent of
 * them: OCR of a picture without text (a photo, a logo) reads noise
 * ("| ~~ ee 8") that only queries that should find nothing would find.
 * Measured on libtasn1's manual as a 300 dpi TIFF and 54 pictures of
 * Rust's documentation: text pages had 22-97% of their words sure (the
 * lowest an index's, its dot leaders read as words), screenshots 25-100%,
 * two photos of circuit boards 2% and 5% (8 of 157 words, so a count
 * alone would not do).
 *
 * Pages are decoded here one after another and read n_threads at a time.
 * With OCR off, or Tesseract missing, an image is refused as unsupported
 * (the ingest skips images then, before reading them).
 */
#include "ingest_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMG_MIN_SURE 5
#define IMG_MIN_SURE_PCT 15
#define IMG_MAX_PAGES 10000

dq_status dq_read_image(const dq_reader_ctx *c, const char *data, size_t n,
                        dq_tbuf *b, uint32_t *n_pages) {
  *n_pages = 0;
  if (c->o->no_ocr)
    return dq_error_set(c->err, DQ_ERR_UNSUPPORTED,
                        "%s: an image is read only by OCR, which is off",
                        c->name);
  char why[300];
  dq_ocr_img *im = NULL;
  dq_status st = dq_ocr_img_open(data, n, &im, why, sizeof why);
  if (st != DQ_OK)
    return dq_error_set(c->err, st, "%s: %s", c->name, why);
  int n_threads = dq_ocr_threads(c->o);
  const char *lang = dq_ocr_lang(c->o);
  dq_ocr_job *jobs = calloc((size_t)n_threads, sizeof *jobs);
  if (!jobs) {
    dq_ocr_img_close(im);
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
  }
  uint32_t page = 0;
  int more = 1;
  if (c->o->progress && /* its start: the bar's time counts from here */
      c->o->progress(c->o->progress_user, "ocr", 0, 0, "pages")) {
    st = dq_error_set(c->err, DQ_ERR_INTERRUPTED,
                      "%s: interrupted while OCR read its pages", c->name);
    more = 0;
  }
  while (more && st == DQ_OK) {
    int n_b = 0;
    while (n_b < n_threads && page + (uint32_t)n_b < IMG_MAX_PAGES) {
      dq_ocr_job *j = &jobs[n_b];
      memset(j, 0, sizeof *j);
      dq_status ds = dq_ocr_img_next(im, j, why, sizeof why);
      if (ds == DQ_ERR_NOTFOUND) {
        more = 0;
        break;
      }
      if (ds != DQ_OK) { /* a damaged page: the pages before it stay */
        more = 0;
        if (page + (uint32_t)n_b == 0 || ds == DQ_ERR_NOMEM)
          st = dq_error_set(c->err, ds, "%s: %s", c->name, why);
        else
          dq_log(c->o->log, DQ_LOG_WARN, "%s: page %u: %s; read up to it",
                 c->name, page + (uint32_t)n_b + 1, why);
        break;
      }
      j->page = (int)(page + (uint32_t)n_b);
      n_b++;
    }
    if (page + (uint32_t)n_b >= IMG_MAX_PAGES)
      more = 0;
    dq_ocr_jobs(jobs, n_b, lang);
    if (st == DQ_OK && c->o->progress &&
        c->o->progress(c->o->progress_user, "ocr", page + (uint32_t)n_b,
                       more ? 0 : page + (uint32_t)n_b, "pages")) {
      st = dq_error_set(c->err, DQ_ERR_INTERRUPTED,
                        "%s: interrupted while OCR read its pages", c->name);
      more = 0;
    }
    for (int k = 0; k < n_b; k++) {
      dq_ocr_job *j = &jobs[k];
      page++;
      if (j->st == DQ_OK)
        dq_log(c->o->log, DQ_LOG_DEBUG, "%s: page %u: %d words read, %d sure",
               c->name, page, j->words, j->sure);
      if (j->st != DQ_OK) {
        if (st == DQ_OK)
          st = dq_error_set(c->err, j->st, "%s: page %u: %s", c->name, page,
                            j->why);
      } else if (j->sure >= IMG_MIN_SURE &&
                 j->sure * 100 >= IMG_MIN_SURE_PCT * j->words) {
        uint32_t line = 1;
        const char *t = j->text;
        size_t len = strlen(t);
        for (size_t s = 0; s < len;) {
          const char *nl = memchr(t + s, '\n', len - s);
          size_t e = nl ? (size_t)(nl - t) : len;
          dq_tbuf_pos(b, line++, page);
          dq_tbuf_put_utf8(b, t + s, e - s);
          dq_tbuf_putc(b, '\n');
          s = e + 1;
        }
        c->info->n_ocr_pages++;
      } else {
        dq_log(c->o->log, DQ_LOG_DEBUG,
               "%s: page %u: no text (%d words read, %d of them sure)", c->name,
               page, j->words, j->sure);
      }
      free(j->text);
      j->text = NULL;
    }
  }
  free(jobs);
  dq_ocr_img_close(im);
  *n_pages = page;
  return st;
}
