/*
 * test_read_image.c - image files read by OCR (read_image.c, ocr.c) on
 * fixtures/make_images.py's scans: a two-page TIFF and a PNG, their lines
 * back word for word at their page and line; known by content too; a
 * picture without words left empty; pages lying sideways and upside down
 * turned upright (and the turns themselves, exactly); refusals of an image
 * with OCR off, of bytes that are no image, and of a cut file.
 */
#include "read_util.h"
#include "test.h"

#include "ingest_int.h" /* dq_gray_turn */

#define FIX DQ_SOURCE_DIR "/tests/ingest_read/fixtures/"

typedef struct {
  const char *s;
  uint32_t page, line;
} want_line;

static void check_lines(const dq_text *t, const want_line *w, size_t n) {
  for (size_t i = 0; i < n; i++) {
    CHECK_MSG(find_in(t, w[i].s) >= 0, "missing \"%s\" in \"%s\"", w[i].s,
              t->text);
    CHECK_EQ_INT(page_of(t, w[i].s), w[i].page);
    CHECK_EQ_INT(line_of(t, w[i].s), w[i].line);
  }
}

static void test_tiff(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  dq_read_info info;
  CHECK_OK(dq_read(FIX "scan.tif", DQ_DOC_UNKNOWN, NULL, &t, &info, &err),
           err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_INT(t->kind, DQ_DOC_IMAGE);
  CHECK_EQ_INT(t->n_pages, 2);
  CHECK_EQ_INT(info.n_ocr_pages, 2);
  const want_line w[] = {
      {"7. Termination", 1, 1},
      {"Either party may end this lease on ninety days written notice.", 1, 2},
      {"The deposit of EUR 4,500 is returned within 30 days.", 1, 3},
      {"8. Governing law", 2, 1},
      {"This lease is governed by the laws of Ireland.", 2, 2},
      {"Signed at Dublin on 3 March 2026.", 2, 3}};
  check_lines(t, w, sizeof w / sizeof w[0]);

  /* progress: pages as they are read, the total known at the end; asked
   * to stop after the first, the read stops */
  progress_log pl = {0};
  dq_read_opts prog = {0};
  prog.progress = progress_record;
  prog.progress_user = &pl;
  dq_text *tp = NULL;
  CHECK_OK(dq_read(FIX "scan.tif", DQ_DOC_UNKNOWN, &prog, &tp, NULL, &err),
           err.msg);
  dq_text_free(tp);
  tp = NULL;
  CHECK_EQ_STR(pl.stage, "ocr");
  CHECK_EQ_INT(pl.done, 2);
  CHECK_EQ_INT(pl.total, 2);
  progress_log stop = {.stop_at = 2};
  prog.progress_user = &stop;
  CHECK_EQ_INT(dq_read(FIX "scan.tif", DQ_DOC_UNKNOWN, &prog, &tp, NULL, &err),
               DQ_ERR_INTERRUPTED);
  CHECK(tp == NULL);
  CHECK_MSG(strstr(err.msg, "scan.tif") != NULL, "%s", err.msg);

  /* two pages read at once: the same text */
  dq_read_opts two = {0};
  two.n_threads = 2;
  dq_text *t2 = NULL;
  CHECK_OK(dq_read(FIX "scan.tif", DQ_DOC_UNKNOWN, &two, &t2, NULL, &err),
           err.msg);
  if (t2)
    CHECK_EQ_STR(t2->text, t->text);
  dq_text_free(t2);
  dq_text_free(t);
}

static void test_png(void) {
  char *buf = NULL;
  size_t n = 0;
  dq_error err = {0};
  CHECK_OK(dq_read_file(FIX "scan.png", 1 << 20, &buf, &n, &err), err.msg);
  if (!buf)
    return;
  /* by its name, and by its bytes under another name */
  const char *names[] = {"scan.png", "scan-no-extension"};
  for (size_t k = 0; k < 2; k++) {
    dq_text *t = NULL;
    CHECK_OK(
        dq_read_buffer(names[k], buf, n, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
        err.msg);
    if (!t)
      continue;
    CHECK_EQ_INT(t->kind, DQ_DOC_IMAGE);
    CHECK_EQ_INT(t->n_pages, 1);
    const want_line w[] = {
        {"7. Termination", 1, 1},
        {"The deposit of EUR 4,500 is returned within 30 days.", 1, 3}};
    check_lines(t, w, sizeof w / sizeof w[0]);
    dq_text_free(t);
  }

  /* OCR off: an image cannot be read, and says so */
  dq_read_opts off = {0};
  off.no_ocr = 1;
  dq_text *t = NULL;
  dq_status st =
      dq_read_buffer("scan.png", buf, n, DQ_DOC_UNKNOWN, &off, &t, NULL, &err);
  CHECK_EQ_INT(st, DQ_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(err.msg, "scan.png") && strstr(err.msg, "OCR"), "%s",
            err.msg);
  CHECK(t == NULL);

  /* cut short: refused naming the file, or what could be read; no crash */
  st = dq_read_buffer("cut.png", buf, n / 3, DQ_DOC_UNKNOWN, NULL, &t, NULL,
                      &err);
  CHECK(st == DQ_ERR_FORMAT || (st == DQ_OK && text_invariants(t)));
  if (st != DQ_OK)
    CHECK_MSG(strstr(err.msg, "cut.png") != NULL, "%s", err.msg);
  dq_text_free(t);
  t = NULL;
  free(buf);

  /* a cut TIFF: its header names more than the file holds */
  CHECK_OK(dq_read_file(FIX "scan.tif", 1 << 20, &buf, &n, &err), err.msg);
  if (buf) {
    for (size_t cut = 8; cut < n; cut += n / 7) {
      st = dq_read_buffer("cut.tif", buf, cut, DQ_DOC_IMAGE, NULL, &t, NULL,
                          &err);
      CHECK(st == DQ_ERR_FORMAT || (st == DQ_OK && text_invariants(t)));
      dq_text_free(t);
      t = NULL;
    }
  }
  free(buf);

  const char *junk = "\x89PNG\r\n\x1a\nthis is no picture at all";
  st = dq_read_buffer("junk.png", junk, strlen(junk) + 1, DQ_DOC_UNKNOWN, NULL,
                      &t, NULL, &err);
  CHECK_EQ_INT(st, DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "junk.png") != NULL, "%s", err.msg);
  CHECK(t == NULL);
}

/* A picture without words (noise, as PNM): no text, not noise read as
 * words. */
static void test_no_words(void) {
  enum { W = 600, H = 400 };
  static char pnm[32 + W * H];
  int k = snprintf(pnm, sizeof pnm, "P5 %d %d 255\n", W, H);
  uint32_t x = 12345;
  for (int i = 0; i < W * H; i++) {
    x = x * 1103515245u + 12345u;
    pnm[k + i] = (char)(x >> 24);
  }
  dq_text *t = NULL;
  dq_error err = {0};
  dq_read_info info;
  CHECK_OK(dq_read_buffer("noise.pnm", pnm, (size_t)k + W * H, DQ_DOC_IMAGE,
                          NULL, &t, &info, &err),
           err.msg);
  if (!t)
    return;
  CHECK_EQ_INT(t->n_pages, 1);
  CHECK_EQ_INT(info.n_ocr_pages, 0);
  CHECK_MSG(t->n_bytes == 0, "noise read as \"%s\"", t->text);
  dq_text_free(t);
}

/* Kinds by name and bytes: an image's name with other bytes (an icon
 * saved as favicon.png) is a binary file, skipped by the walk. */
static void test_kinds(void) {
  static const char ico[] = "\0\0\1\0\3\0\x30\x30\0\0\1\0 \0";
  static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR";
  static const char tif[] = "MM\0*\0\0\0\x08";
  CHECK_EQ_INT(dq_detect_kind("favicon.png", ico, sizeof ico, NULL),
               DQ_DOC_UNKNOWN);
  CHECK_EQ_INT(dq_detect_kind("a.PNG", png, sizeof png, NULL), DQ_DOC_IMAGE);
  CHECK_EQ_INT(dq_detect_kind("fax", tif, sizeof tif, NULL), DQ_DOC_IMAGE);
  CHECK_EQ_INT(dq_detect_kind("photo.jpg", "\xFF\xD8\xFF\xE0", 4, NULL),
               DQ_DOC_IMAGE);
  CHECK_EQ_STR(dq_doc_kind_name(DQ_DOC_IMAGE), "image");
}

/* dq_gray_turn on a 3 x 2 picture whose rows are 4 bytes apart: each
 * quarter turn against the picture turned by hand. */
static void test_turn(void) {
  static const uint8_t src[] = {1, 2, 3, 99,  /* a b c (padding) */
                                4, 5, 6, 99}; /* d e f */
  static const struct {
    int turns, w, h;
    uint8_t px[6];
  } want[] = {{0, 3, 2, {1, 2, 3, 4, 5, 6}},
              {1, 2, 3, {4, 1, 5, 2, 6, 3}}, /* d a / e b / f c */
              {2, 3, 2, {6, 5, 4, 3, 2, 1}},
              {3, 2, 3, {3, 6, 2, 5, 1, 4}}, /* c f / b e / a d */
              {5, 2, 3, {4, 1, 5, 2, 6, 3}}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    int w = 0, h = 0;
    uint8_t *t = dq_gray_turn(src, 3, 2, 4, want[i].turns, &w, &h);
    CHECK(t != NULL);
    CHECK_EQ_INT(w, want[i].w);
    CHECK_EQ_INT(h, want[i].h);
    CHECK_MSG(t && memcmp(t, want[i].px, 6) == 0, "turns %d", want[i].turns);
    free(t);
  }
}

/* A page a quarter turn clockwise and one upside down (sideways.tif):
 * Tesseract's orientation detection turns them upright and their lines
 * read as scan.tif's. Needs osd.traineddata (setup-deps.sh installs it);
 * without it the pages are read as they lie, which tests/cli checks. */
static void test_sideways(void) {
  dq_text *t = NULL;
  dq_error err = {0};
  dq_read_info info;
  CHECK_OK(dq_read(FIX "sideways.tif", DQ_DOC_UNKNOWN, NULL, &t, &info, &err),
           err.msg);
  if (!t)
    return;
  CHECK(text_invariants(t));
  CHECK_EQ_INT(t->n_pages, 2);
  CHECK_EQ_INT(info.n_ocr_pages, 2);
  const want_line w[] = {
      {"Either party may end this lease on ninety days written notice.", 1, 2},
      {"The deposit of EUR 4,500 is returned within 30 days.", 1, 3},
      {"This lease is governed by the laws of Ireland.", 2, 2},
      {"Signed at Dublin on 3 March 2026.", 2, 3}};
  check_lines(t, w, sizeof w / sizeof w[0]);
  dq_text_free(t);
}

int main(void) {
  test_kinds();
  test_turn();
  test_sideways();
  test_tiff();
  test_png();
  test_no_words();
  return TEST_EXIT();
}
