/*
 * test.h - the minimal harness our C tests use: CHECK* macros that report
 * file:line and the values involved, count failures, and keep going, so one
 * run shows every broken expectation. A test program returns
 * TEST_EXIT() from main: 0 when nothing failed, 1 otherwise (ctest reads it).
 */
#ifndef DQ_TEST_H
#define DQ_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

/* 1 in an AddressSanitizer build (about 10x slower): model-driven tests
 * use it to run a smaller sample of the same code paths. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static int test_failures_;
static int test_checks_;

#define CHECK(cond)                                                            \
  do {                                                                         \
    test_checks_++;                                                            \
    if (!(cond)) {                                                             \
      test_failures_++;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_MSG(cond, ...)                                                   \
  do {                                                                         \
    test_checks_++;                                                            \
    if (!(cond)) {                                                             \
      test_failures_++;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                     \
  do {                                                                         \
    long long a_ = (long long)(a), b_ = (long long)(b);                        \
    CHECK_MSG(a_ == b_, "%s = %lld, %s = %lld", #a, a_, #b, b_);               \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                     \
  do {                                                                         \
    const char *a_ = (a), *b_ = (b);                                           \
    CHECK_MSG(a_ && b_ && strcmp(a_, b_) == 0, "%s = \"%s\", %s = \"%s\"", #a, \
              a_ ? a_ : "(null)", #b, b_ ? b_ : "(null)");                     \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                  \
  do {                                                                         \
    double a_ = (double)(a), b_ = (double)(b);                                 \
    CHECK_MSG(fabs(a_ - b_) <= (tol), "%s = %g, %s = %g, tolerance %g", #a,    \
              a_, #b, b_, (double)(tol));                                      \
  } while (0)

/* A status-returning call that must succeed; prints the handle's message. */
#define CHECK_OK(call, errmsg_expr)                                            \
  do {                                                                         \
    int s_ = (int)(call);                                                      \
    CHECK_MSG(s_ == 0, "%s returned %d: %s", #call, s_, (errmsg_expr));        \
  } while (0)

/* How many of this process's mappings name `lib` (-1: no /proc): checks
 * that a library is opened when first needed, not linked. */
static inline int test_mapped(const char *lib) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[1024];
  int n = 0;
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    n += strstr(line, lib) != NULL;
  fclose(f);
  return n;
}

#define TEST_EXIT()                                                            \
  (fprintf(stderr, "%s: %d checks, %d failed\n", __FILE__, test_checks_,       \
           test_failures_),                                                    \
   test_failures_ ? 1 : 0)

#endif /* DQ_TEST_H */
