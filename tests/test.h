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

/* A random text into buf (cap bytes, NUL-terminated): up to max_parts of
 * parts[0..n_parts), each followed by a blank half the time, or with raw
 * set that many random bytes 1..255; advances *seed (an LCG). Returns its
 * length. For tests that feed text processors random input. */
static inline size_t test_random_text(const char *const *parts,
                                      size_t n_parts, int max_parts, int raw,
                                      unsigned *seed, char *buf, size_t cap) {
  size_t n = 0;
  *seed = *seed * 1664525u + 1013904223u;
  int k = (int)(*seed >> 24) % max_parts;
  for (int j = 0; j < k; j++) {
    *seed = *seed * 1664525u + 1013904223u;
    if (raw) {
      if (n + 2 >= cap)
        break;
      buf[n++] = (char)(1 + (*seed >> 16) % 255);
      continue;
    }
    const char *p = parts[(*seed >> 16) % n_parts];
    size_t pl = strlen(p);
    if (n + pl + 1 >= cap)
      break;
    memcpy(buf + n, p, pl);
    n += pl;
    if (*seed & 1)
      buf[n++] = ' ';
  }
  buf[n] = '\0';
  return n;
}

#define TEST_EXIT()                                                            \
  (fprintf(stderr, "%s: %d checks, %d failed\n", __FILE__, test_checks_,       \
           test_failures_),                                                    \
   test_failures_ ? 1 : 0)

#endif /* DQ_TEST_H */
