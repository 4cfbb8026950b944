/*
 * test_read_text.c - plain text (with reStructuredText-style titles), code
 * and Markdown readers, kind detection,
 * and the file-level failures of dq_read (size limit, empty file, fifo,
 * dangling symlink, unreadable file, folder). Expected strings are worked
 * out by hand; the U+FFFD placement for invalid UTF-8 follows Python's
 * bytes.decode("utf-8", "replace") (same maximal-subpart rule), noted per
 * case.
 */
#include "read_util.h"
#include "test.h"

#include <errno.h>
#include <sys/stat.h>
#include <time.h>

static dq_text *rd(const char *name, const char *data, size_t n,
                   dq_doc_kind kind, dq_read_info *info) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read_buffer(name, data, n, kind, NULL, &t, info, &err), err.msg);
  CHECK(text_invariants(t));
  return t;
}

static void test_plain(void) {
  dq_read_info info;
  const char src[] = "alpha\nbeta\r\ngamma\n\ndelta";
  dq_text *t = rd("a.txt", src, sizeof src - 1, DQ_DOC_UNKNOWN, &info);
  CHECK_EQ_STR(t->text, "alpha\nbeta\ngamma\n\ndelta");
  CHECK_EQ_INT(t->kind, DQ_DOC_TEXT);
  CHECK_EQ_STR(info.encoding, "utf-8");
  CHECK_EQ_INT(info.n_replaced, 0);
  CHECK_EQ_INT(line_of(t, "alpha"), 1);
  CHECK_EQ_INT(line_of(t, "beta"), 2);
  CHECK_EQ_INT(line_of(t, "gamma"), 3);
  CHECK_EQ_INT(line_of(t, "delta"), 5);
  CHECK_EQ_INT(page_of(t, "delta"), 0);
  dq_text_free(t);

  /* UTF-8 BOM is dropped */
  t = rd("b.txt", "\xEF\xBB\xBFhi\nthere", 11, DQ_DOC_TEXT, &info);
  CHECK_EQ_STR(t->text, "hi\nthere");
  CHECK_EQ_INT(line_of(t, "there"), 2);
  dq_text_free(t);
}

static void test_latin1(void) {
  dq_read_info info;
  /* ISO-8859-1 0xE9 e-acute, 0xEF i-diaeresis; 0x80 is the euro sign in
   * Windows-1252 (E2 82 AC in UTF-8) */
  const char src[] = "caf\xE9 na\xEFve\n\x80uro \xA3";
  dq_text *t = rd("l.txt", src, sizeof src - 1, DQ_DOC_TEXT, &info);
  CHECK_EQ_STR(t->text, "caf\xC3\xA9 na\xC3\xAFve\n\xE2\x82\xACuro \xC2\xA3");
  CHECK_EQ_STR(info.encoding, "latin-1");
  CHECK_EQ_INT(info.n_replaced, 0);
  CHECK_EQ_INT(line_of(t, "uro"), 2);
  dq_text_free(t);
}

static void test_utf16(void) {
  dq_read_info info;
  /* LE BOM, "hi\r\n" then U+1F600 as the pair D83D DE00, then "!" */
  const unsigned char le[] = {0xFF, 0xFE, 'h', 0, 'i', 0, '\r', 0, '\n', 0,
                              0x3D, 0xD8, 0x00, 0xDE, '!', 0};
  dq_text *t = rd("u.txt", (const char *)le, sizeof le, DQ_DOC_UNKNOWN, &info);
  CHECK_EQ_STR(t->text, "hi\n\xF0\x9F\x98\x80!");
  CHECK_EQ_STR(info.encoding, "utf-16le");
  CHECK_EQ_INT(line_of(t, "!"), 2);
  dq_text_free(t);
  /* BE BOM, "A", U+00E9, then an unpaired high surrogate and "x" */
  const unsigned char be[] = {0xFE, 0xFF, 0, 'A', 0x00, 0xE9,
                              0xD8, 0x00, 0,    'x'};
  t = rd("u.txt", (const char *)be, sizeof be, DQ_DOC_UNKNOWN, &info);
  CHECK_EQ_STR(t->text, "A\xC3\xA9\xEF\xBF\xBDx");
  CHECK_EQ_STR(info.encoding, "utf-16be");
  CHECK_EQ_INT(info.n_replaced, 1);
  dq_text_free(t);
}

static void test_invalid_utf8(void) {
  dq_read_info info;
  /* Python: b'\xc3\xa9 ok \xff \xe2\x82 end \xc3\xa9 \xc3\xa8'.decode(
   *   'utf-8', 'replace') == 'é ok \ufffd \ufffd end é è' */
  const char a[] = "\xC3\xA9 ok \xFF \xE2\x82 end \xC3\xA9 \xC3\xA8";
  dq_text *t = rd("i.txt", a, sizeof a - 1, DQ_DOC_TEXT, &info);
  CHECK_EQ_STR(t->text, "\xC3\xA9 ok \xEF\xBF\xBD \xEF\xBF\xBD end \xC3\xA9 "
                        "\xC3\xA8");
  CHECK_EQ_INT(info.n_replaced, 2);
  CHECK_EQ_STR(info.encoding, "utf-8");
  dq_text_free(t);
  /* twelve e-acute (valid, so the file reads as UTF-8), then a truncated
   * 4-byte sequence, a surrogate, an overlong "/", a code point above
   * U+10FFFF and a NUL. Python: b' a\xf0\x9f\x98 b \xed\xa0\x80 c \xc0\xaf
   * d \xf4\x90\x80\x80 e'.decode('utf-8', 'replace') == ' a\ufffd b
   * \ufffd\ufffd\ufffd c \ufffd\ufffd d \ufffd\ufffd\ufffd\ufffd e' */
  char b[512];
  size_t n = 0;
  for (int i = 0; i < 12; i++) {
    memcpy(b + n, "\xC3\xA9", 2);
    n += 2;
  }
  const char tail[] = " a\xF0\x9F\x98 b \xED\xA0\x80 c \xC0\xAF d "
                      "\xF4\x90\x80\x80 e\x00z";
  memcpy(b + n, tail, sizeof tail - 1);
  n += sizeof tail - 1;
  t = rd("i.txt", b, n, DQ_DOC_TEXT, &info);
  const char *want_tail = " a\xEF\xBF\xBD b \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF"
                          "\xBD c \xEF\xBF\xBD\xEF\xBF\xBD d \xEF\xBF\xBD\xEF"
                          "\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD e\xEF\xBF\xBDz";
  CHECK(t->n_bytes == 24 + strlen(want_tail));
  CHECK(strcmp(t->text + 24, want_tail) == 0);
  CHECK_EQ_INT(info.n_replaced, 11); /* 10 invalid + the NUL */
  dq_text_free(t);
}

static void test_markdown(void) {
  const char md[] = "Intro line\n"              /* 1 */
                    "# Title #\n"               /* 2 */
                    "\n"                        /* 3 */
                    "Sub heading\n"             /* 4 */
                    "-----------\n"             /* 5 */
                    "```c\n"                    /* 6 */
                    "# not a heading\n"         /* 7 */
                    "```\n"                     /* 8 */
                    "\n"                        /* 9 */
                    "    # indented code\n"     /* 10 */
                    "\n"                        /* 11 */
                    "Para one\n"                /* 12 */
                    "para two\n"                /* 13 */
                    "========\n"                /* 14 */
                    "####### seven hashes\n"    /* 15 */
                    "#nospace\n"                /* 16 */
                    "  ## Two ##  \n"           /* 17 */
                    "###\n"                     /* 18: empty heading */
                    "\n"                        /* 19 */
                    "---\n";                    /* 20: thematic break */
  dq_text *t = rd("r.md", md, sizeof md - 1, DQ_DOC_UNKNOWN, NULL);
  CHECK_EQ_INT(t->kind, DQ_DOC_MARKDOWN);
  CHECK_EQ_STR(t->text, md); /* Markdown text is kept as written */
  static const head_want want[] = {{1, "Title", 0, 2},
                                   {2, "Sub heading", 0, 4},
                                   {1, "Para one para two", 0, 12},
                                   {2, "Two", 0, 17},
                                   {3, "", 0, 18}};
  CHECK_HEADINGS(t, want);
  dq_text_free(t);
}

/* Plain text: reStructuredText titles, levels by style in order of first
 * appearance; what is no title (a table's header row, a script's '#' box,
 * an underline too short, no blank line above or below, indentation). */
static void test_rst(void) {
  const char txt[] = "==============\n"              /* 1 */
                     " Guide Title\n"                /* 2: overlined */
                     "==============\n"              /* 3 */
                     "\n"                            /* 4 */
                     "Install\n"                     /* 5 */
                     "=======\n"                     /* 6 */
                     "\n"                            /* 7 */
                     "On Linux\n"                    /* 8 */
                     "--------\n"                    /* 9 */
                     "\n"                            /* 10 */
                     "Name   Value\n"                /* 11: columns */
                     "------------\n"                /* 12 */
                     "\n"                            /* 13 */
                     "Too short\n"                   /* 14 */
                     "-----\n"                       /* 15 */
                     "\n"                            /* 16 */
                     "Row header\n"                  /* 17: rows below */
                     "----------\n"                  /* 18 */
                     "a 1\n"                         /* 19 */
                     "text\n"                        /* 20: no blank above */
                     "----\n"                        /* 21 */
                     "\n"                            /* 22 */
                     "#########\n"                   /* 23 */
                     "# box  #\n"                    /* 24: opens with '#' */
                     "#########\n"                   /* 25 */
                     "\n"                            /* 26 */
                     "  Indented\n"                  /* 27: no overline */
                     "  ----------\n"                /* 28 */
                     "\n"                            /* 29 */
                     "Caf\xC3\xA9 \xC3\xA0 la carte\n" /* 30: 16 chars */
                     "================\n"            /* 31 */
                     "\n"                            /* 32 */
                     "Last\n"                        /* 33: the end below */
                     "~~~~";                          /* 34 */
  dq_text *t = rd("guide.txt", txt, sizeof txt - 1, DQ_DOC_UNKNOWN, NULL);
  CHECK_EQ_INT(t->kind, DQ_DOC_TEXT);
  static const head_want want[] = {{1, "Guide Title", 0, 1},
                                   {2, "Install", 0, 5},
                                   {3, "On Linux", 0, 8},
                                   {2, "Caf\xC3\xA9 \xC3\xA0 la carte", 0, 30},
                                   {4, "Last", 0, 33}};
  CHECK_HEADINGS(t, want);
  dq_text_free(t);
}

static void test_detect(void) {
  struct {
    const char *name, *head;
    dq_doc_kind kind;
    const char *lang;
  } cases[] = {
      {"src/main.c", "int x;", DQ_DOC_CODE, "c"},
      {"inc/a.h", "", DQ_DOC_CODE, "c"},
      {"a.cpp", "", DQ_DOC_CODE, "cpp"},
      {"a.HPP", "", DQ_DOC_CODE, "cpp"},
      {"k.cu", "__global__ void k() {}", DQ_DOC_CODE, "cpp"},
      {"k.cuh", "", DQ_DOC_CODE, "cpp"},
      {"m.mts", "", DQ_DOC_CODE, "typescript"},
      {"Ledger.cs", "namespace A { }", DQ_DOC_CODE, "csharp"},
      {"Main.kt", "fun main() {}", DQ_DOC_CODE, "kotlin"},
      {"build.gradle.kts", "", DQ_DOC_CODE, "kotlin"},
      {"x.py", "", DQ_DOC_CODE, "python"},
      {"x.js", "", DQ_DOC_CODE, "javascript"},
      {"x.ts", "", DQ_DOC_CODE, "typescript"},
      {"x.go", "", DQ_DOC_CODE, "go"},
      {"x.rs", "", DQ_DOC_CODE, "rust"},
      {"X.java", "", DQ_DOC_CODE, "java"},
      {"README.md", "# hi", DQ_DOC_MARKDOWN, ""},
      {"n.markdown", "", DQ_DOC_MARKDOWN, ""},
      {"p.htm", "", DQ_DOC_HTML, ""},
      {"p.xhtml", "", DQ_DOC_HTML, ""},
      {"d.xml", "", DQ_DOC_XML, ""},
      {"c.docx", "PK\x03\x04", DQ_DOC_DOCX, ""},
      {"c.pdf", "%PDF-1.4", DQ_DOC_PDF, ""},
      {"notes.txt", "plain", DQ_DOC_TEXT, ""},
      {"LICENSE", "Permission is granted", DQ_DOC_TEXT, ""},
      {"noext", "%PDF-1.7\n", DQ_DOC_PDF, ""},
      {"page", "  <!doctype html><html>", DQ_DOC_HTML, ""},
      {"feed", "<?xml version='1.0'?><a/>", DQ_DOC_XML, ""},
      {"tool", "#!/usr/bin/env python3\nprint(1)\n", DQ_DOC_CODE, "python"},
      {"run", "#!/usr/bin/node\n", DQ_DOC_CODE, "javascript"},
      {"run.sh", "#!/bin/sh\necho\n", DQ_DOC_TEXT, ""},
      {"img.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", DQ_DOC_IMAGE, ""},
      {"img.jpg", "GIF89a\x01\x00", DQ_DOC_UNKNOWN, ""}, /* not a JPEG */
      {"data.txt", "abc\x01\x02\x03\x04\x05\x06\x07", DQ_DOC_UNKNOWN, ""},
      {"obj.c", "\x7f" "ELF\x02\x01\x01\x03\x04\x05\x06\x07", DQ_DOC_UNKNOWN, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *lang = "?";
    size_t n = strlen(cases[i].head);
    if (strcmp(cases[i].name, "img.png") == 0)
      n = 16;
    dq_doc_kind k = dq_detect_kind(cases[i].name, cases[i].head, n, &lang);
    CHECK_MSG(k == cases[i].kind, "%s: kind %d, want %d", cases[i].name, k,
              cases[i].kind);
    CHECK_MSG(strcmp(lang, cases[i].lang) == 0, "%s: lang %s", cases[i].name,
              lang);
  }
  /* a code file read keeps its language */
  dq_text *t = rd("m.go", "package main\n", 13, DQ_DOC_UNKNOWN, NULL);
  CHECK_EQ_INT(t->kind, DQ_DOC_CODE);
  CHECK_EQ_STR(t->lang, "go");
  dq_text_free(t);
  /* binary content is refused with a reason naming the buffer */
  dq_error err = {0};
  CHECK_EQ_INT(dq_read_buffer("blob.bin", "a\0b", 3, DQ_DOC_UNKNOWN, NULL, &t,
                              NULL, &err),
               DQ_ERR_FORMAT);
  CHECK(t == NULL);
  CHECK(strstr(err.msg, "blob.bin") && strstr(err.msg, "binary"));
}

static void test_files(void) {
  char *dir = scratch_dir("rtext");
  char path[4200];
  dq_error err = {0};
  dq_text *t = NULL;

  /* 0-byte file: empty text, no marks */
  CHECK(write_at(dir, "empty.txt", "", 0) == 0);
  snprintf(path, sizeof path, "%s/empty.txt", dir);
  dq_read_info info;
  CHECK_OK(dq_read(path, DQ_DOC_UNKNOWN, NULL, &t, &info, &err), err.msg);
  CHECK(t && t->n_bytes == 0 && t->text && t->text[0] == '\0' &&
        t->n_marks == 0);
  CHECK_EQ_INT(info.n_bytes, 0);
  dq_text_free(t);

  /* over the size limit: refused before reading, message names the file */
  CHECK(write_str(dir, "big.txt", "0123456789A") == 0);
  snprintf(path, sizeof path, "%s/big.txt", dir);
  dq_read_opts o = {.max_file_bytes = 10};
  CHECK_EQ_INT(dq_read(path, DQ_DOC_UNKNOWN, &o, &t, NULL, &err),
               DQ_ERR_LIMIT);
  CHECK(t == NULL && strstr(err.msg, "big.txt") && strstr(err.msg, "11"));
  o.max_file_bytes = 11;
  CHECK_OK(dq_read(path, DQ_DOC_UNKNOWN, &o, &t, NULL, &err), err.msg);
  dq_text_free(t);

  /* a 2 GiB file (sparse: no disk used) is refused from its size, without
   * reading it */
  snprintf(path, sizeof path, "%s/huge.txt", dir);
  FILE *f = fopen(path, "wb");
  CHECK(f && ftruncate(fileno(f), (off_t)2 << 30) == 0);
  if (f)
    fclose(f);
  time_t h0 = time(NULL);
  CHECK_EQ_INT(dq_read(path, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
               DQ_ERR_LIMIT);
  CHECK(strstr(err.msg, "huge.txt") && strstr(err.msg, "2147483648"));
  CHECK(time(NULL) - h0 < 5);
  unlink(path);

  /* a fifo must be refused at once, not block */
  snprintf(path, sizeof path, "%s/pipe", dir);
  CHECK(mkfifo(path, 0644) == 0);
  time_t t0 = time(NULL);
  CHECK_EQ_INT(dq_read(path, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
               DQ_ERR_IO);
  CHECK(strstr(err.msg, "fifo") && strstr(err.msg, "pipe"));
  CHECK(time(NULL) - t0 < 5);

  /* dangling symlink */
  char link[4200];
  snprintf(link, sizeof link, "%s/dangling.txt", dir);
  CHECK(symlink("/nonexistent/dq/target", link) == 0);
  CHECK_EQ_INT(dq_read(link, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
               DQ_ERR_NOTFOUND);
  CHECK(strstr(err.msg, "dangling.txt") != NULL);

  /* a folder */
  CHECK_EQ_INT(dq_read(dir, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err), DQ_ERR_IO);
  CHECK(strstr(err.msg, "directory") != NULL);

  /* unreadable: root bypasses permissions, so only checked as non-root */
  CHECK(write_str(dir, "secret.txt", "x") == 0);
  snprintf(path, sizeof path, "%s/secret.txt", dir);
  chmod(path, 0);
  if (geteuid() == 0) {
    fprintf(stderr, "running as root: chmod 000 case skipped\n");
  } else {
    CHECK_EQ_INT(dq_read(path, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
                 DQ_ERR_IO);
    CHECK(strstr(err.msg, "secret.txt") && strstr(err.msg, "ermission"));
  }
  rm_tree(dir);
  free(dir);
}

int main(void) {
  test_plain();
  test_latin1();
  test_utf16();
  test_invalid_utf8();
  test_markdown();
  test_rst();
  test_detect();
  test_files();
  return TEST_EXIT();
}
