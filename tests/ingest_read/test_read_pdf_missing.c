/*
 * test_read_pdf_missing.c - the PDF reader where poppler-glib cannot be
 * opened: read_pdf.c compiled here with a library name that does not
 * exist (CMakeLists.txt). A PDF is refused as unsupported, the message
 * naming the file and the library; other documents read as before; the
 * version reads "not found".
 */
#include "read_util.h"
#include "test.h"

#define FIX DQ_SOURCE_DIR "/tests/ingest_read/fixtures/"

int main(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  for (int round = 0; round < 2; round++) { /* the failure is kept, too */
    dq_status st =
        dq_read(FIX "two_pages.pdf", DQ_DOC_UNKNOWN, NULL, &t, NULL, &err);
    CHECK_EQ_INT(st, DQ_ERR_UNSUPPORTED);
    CHECK(t == NULL);
    CHECK_MSG(strstr(err.msg, "two_pages.pdf") &&
                  strstr(err.msg, "libdq-no-such-poppler-glib.so") &&
                  strstr(err.msg, "poppler-glib"),
              "%s", err.msg);
  }
  const char *txt = "Plain text still reads.\n";
  CHECK_OK(dq_read_buffer("a.txt", txt, strlen(txt), DQ_DOC_UNKNOWN, NULL, &t,
                          NULL, &err),
           err.msg);
  dq_text_free(t);
  CHECK_EQ_STR(dq_ingest_poppler_version(), "not found");
  return TEST_EXIT();
}
