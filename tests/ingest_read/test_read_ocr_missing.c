/*
 * test_read_ocr_missing.c - a scanned PDF where Tesseract cannot be opened:
 * ocr.c compiled here with a library name that does not exist
 * (CMakeLists.txt). The PDF still reads: its text page as before, its two
 * picture-only pages empty and counted in n_pages_no_text, the reason
 * naming the library; an image file is refused, naming it and the
 * library; the OCR version reads "not found".
 */
#include "read_util.h"
#include "test.h"

#define FIX DQ_SOURCE_DIR "/tests/ingest_read/fixtures/"

int main(void) {
  for (int round = 0; round < 2; round++) { /* the failure is kept, too */
    dq_text *t = NULL;
    dq_error err = {0};
    dq_read_info info;
    CHECK_OK(dq_read(FIX "scan.pdf", DQ_DOC_UNKNOWN, NULL, &t, &info, &err),
             err.msg);
    if (!t)
      return TEST_EXIT();
    CHECK(text_invariants(t));
    CHECK_EQ_INT(t->n_pages, 3);
    CHECK_EQ_INT(page_of(t, "Lease of Unit 4"), 1);
    CHECK(find_in(t, "Termination") < 0);
    CHECK_EQ_INT(info.n_ocr_pages, 0);
    CHECK_EQ_INT(info.n_pages_no_text, 2);
    CHECK_MSG(strstr(info.ocr_why, "libdq-no-such-tesseract.so.5") &&
                  strstr(info.ocr_why, "Tesseract"),
              "%s", info.ocr_why);
    dq_text_free(t);
  }
  /* an image is read only by OCR: refused, naming the file and why */
  dq_text *t = NULL;
  dq_error err = {0};
  dq_status st = dq_read(FIX "scan.tif", DQ_DOC_UNKNOWN, NULL, &t, NULL, &err);
  CHECK_EQ_INT(st, DQ_ERR_UNSUPPORTED);
  CHECK(t == NULL);
  CHECK_MSG(strstr(err.msg, "scan.tif") &&
                strstr(err.msg, "libdq-no-such-tesseract.so.5"),
            "%s", err.msg);
  CHECK_EQ_STR(dq_ocr_version(), "not found");
  return TEST_EXIT();
}
