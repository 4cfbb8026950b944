/* test_common.c - status table, error messages and file reading in common/. */
#include "common.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

int main(void) {
  /* Codes are append-only: these numbers are part of the interface. */
  CHECK_EQ_INT(DQ_OK, 0);
  CHECK_EQ_INT(DQ_ERR_NOMEM, 1);
  CHECK_EQ_INT(DQ_ERR_NOT_IMPLEMENTED, 15);
  CHECK_EQ_STR(dq_status_name(DQ_ERR_IO), "ERR_IO");
  CHECK_EQ_STR(dq_status_str(DQ_ERR_NOTFOUND), "not found");
  CHECK_EQ_STR(dq_status_name((dq_status)9999), "UNKNOWN");

  dq_error e;
  dq_error_clear(&e);
  CHECK_EQ_STR(dq_error_msg(&e), "success");
  CHECK_EQ_INT(dq_error_set(&e, DQ_ERR_FORMAT, "%s: bad byte at offset %d",
                            "x.gguf", 42),
               DQ_ERR_FORMAT);
  CHECK_EQ_STR(dq_error_msg(&e), "x.gguf: bad byte at offset 42");
  dq_error_prefix(&e, "opening model");
  CHECK_EQ_STR(dq_error_msg(&e),
               "opening model: x.gguf: bad byte at offset 42");
  CHECK_EQ_INT(e.code, DQ_ERR_FORMAT);
  /* A NULL error sink is allowed everywhere. */
  CHECK_EQ_INT(dq_error_set(NULL, DQ_ERR_IO, "ignored"), DQ_ERR_IO);

  /* Messages longer than the buffer are truncated, never overflow. */
  char big[3000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  dq_error_set(&e, DQ_ERR_ARG, "%s", big);
  CHECK_EQ_INT(strlen(e.msg), DQ_ERRMSG_MAX - 1);

  uint64_t r;
  CHECK_EQ_INT(dq_add_overflow(UINT64_MAX, 1, &r), -1);
  CHECK_EQ_INT(dq_mul_overflow(1ull << 32, 1ull << 32, &r), -1);
  CHECK_EQ_INT(dq_mul_overflow(3, 5, &r), 0);
  CHECK_EQ_INT(r, 15);

  /* dq_read_file: contents, limit, missing file. */
  char path[] = "/tmp/dq_test_common_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK_EQ_INT(write(fd, "hello\nworld\n", 12), 12);
  close(fd);
  char *buf = NULL;
  size_t n = 0;
  CHECK_EQ_INT(dq_read_file(path, 100, &buf, &n, &e), DQ_OK);
  CHECK_EQ_INT(n, 12);
  CHECK_EQ_STR(buf, "hello\nworld\n");
  free(buf);
  CHECK_EQ_INT(dq_read_file(path, 5, &buf, &n, &e), DQ_ERR_LIMIT);
  CHECK(buf == NULL);
  CHECK(strstr(e.msg, path) != NULL);
  unlink(path);
  CHECK_EQ_INT(dq_read_file("/nonexistent/x", 100, &buf, &n, &e),
               DQ_ERR_NOTFOUND);
  CHECK(strstr(e.msg, "/nonexistent/x") != NULL);
  /* dq_strbuf: appends across several reallocations stay intact. */
  dq_strbuf sb = {0};
  for (int i = 0; i < 1000; i++)
    dq_strbuf_printf(&sb, "%d,", i % 10);
  dq_strbuf_adds(&sb, "end");
  dq_strbuf_add(&sb, "xyz", 2);
  CHECK(!sb.oom);
  CHECK_EQ_INT(sb.n, 2000 + 5);
  CHECK_EQ_INT(strlen(sb.p), sb.n);
  CHECK(strncmp(sb.p, "0,1,2,3,", 8) == 0);
  CHECK_EQ_STR(sb.p + 2000, "endxy");
  free(sb.p);
  /* Dot leaders and listings: a contents page (a heading, blank lines,
   * letters over index entries) is one; a prose ellipsis, two entries, or
   * three among thirteen lines of text are not. */
  CHECK(dq_dot_leader("Introduction . . . . 1", 22));
  CHECK(dq_dot_leader("Scope..........2", 16));
  CHECK(!dq_dot_leader("wait... and see. . then", 23));
  static const char toc[] = "Contents\n\n  A\nScope . . . . 1\n"
                            "Price . . . . 2\nLaw .... 3\n";
  CHECK(dq_listing_text(toc, sizeof toc - 1));
  static const char two[] = "Scope . . . . 1\nPrice . . . . 2\n";
  CHECK(!dq_listing_text(two, sizeof two - 1));
  static const char prose[] =
      "The Tenant shall . . . pay.\nThe rent is due . . . monthly.\n"
      "Notices go . . . by post.\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
  CHECK(!dq_listing_text(prose, sizeof prose - 1));
  CHECK(dq_listing_text(prose, 88)); /* the three among five lines */
  static const char docx_toc[] = "Contents\n1.\tDefinitions\t1\n"
                                 "2.\tGrant\t2\nSchedule 1\tiv\n";
  CHECK(dq_listing_text(docx_toc, sizeof docx_toc - 1));
  static const char table[] = "Name\tFee\tDays\nAlpha\t100\t3\n"
                              "Beta\t200\t5\nGamma\t300\t7\nTotal\t600\t15\n"
                              "The fees are due within 30 days of invoice.\n";
  CHECK(!dq_listing_text(table, sizeof table - 1)); /* rows of numbers */
  return TEST_EXIT();
}
