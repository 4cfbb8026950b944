/*
 * common.c - status table, error messages, logging and small file helpers
 * shared by all layers. See common.h; nothing here keeps global state.
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef DQ_VERSION_STRING
#define DQ_VERSION_STRING "0.0.0"
#endif

const char *dq_version(void) { return DQ_VERSION_STRING; }

const char *dq_status_name(dq_status s) {
  switch (s) {
#define DQ_STATUS_NAME(name, val, msg)                                         \
  case DQ_##name:                                                              \
    return #name;
    DQ_STATUS_MAP(DQ_STATUS_NAME)
#undef DQ_STATUS_NAME
  }
  return "UNKNOWN";
}

const char *dq_status_str(dq_status s) {
  switch (s) {
#define DQ_STATUS_STR(name, val, msg)                                          \
  case DQ_##name:                                                              \
    return msg;
    DQ_STATUS_MAP(DQ_STATUS_STR)
#undef DQ_STATUS_STR
  }
  return "unknown status";
}

dq_status dq_error_setv(dq_error *e, dq_status code, const char *fmt,
                        va_list ap) {
  if (e) {
    e->code = code;
    if (fmt)
      vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    else
      e->msg[0] = '\0';
  }
  return code;
}

dq_status dq_error_set(dq_error *e, dq_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dq_error_setv(e, code, fmt, ap);
  va_end(ap);
  return code;
}

void dq_error_prefix(dq_error *e, const char *fmt, ...) {
  if (!e)
    return;
  char prefix[DQ_ERRMSG_MAX];
  char old[DQ_ERRMSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, e->msg, sizeof old);
  old[sizeof old - 1] = '\0';
  /* Big enough for both parts, so snprintf never truncates; the copy back
   * into e->msg does, on purpose. */
  char joined[2 * DQ_ERRMSG_MAX + 2];
  snprintf(joined, sizeof joined, old[0] ? "%s: %s" : "%s%s", prefix, old);
  size_t n = strlen(joined);
  if (n >= sizeof e->msg)
    n = sizeof e->msg - 1;
  memcpy(e->msg, joined, n);
  e->msg[n] = '\0';
}

void dq_error_clear(dq_error *e) {
  if (e) {
    e->code = DQ_OK;
    e->msg[0] = '\0';
  }
}

const char *dq_error_msg(const dq_error *e) {
  if (!e)
    return "no error information";
  if (e->msg[0])
    return e->msg;
  return dq_status_str(e->code);
}

void dq_log(const dq_logger *lg, dq_log_level level, const char *fmt, ...) {
  if (!dq_log_enabled(lg, level))
    return;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  lg->fn(lg->user, level, buf);
}

double dq_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

dq_status dq_read_file(const char *path, size_t max_bytes, char **out,
                       size_t *out_bytes, dq_error *err) {
  *out = NULL;
  if (out_bytes)
    *out_bytes = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return dq_error_set(err, errno == ENOENT ? DQ_ERR_NOTFOUND : DQ_ERR_IO,
                        "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    int e = errno;
    fclose(f);
    return dq_error_set(err, DQ_ERR_IO, "%s: cannot stat: %s", path,
                        strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    fclose(f);
    return dq_error_set(err, DQ_ERR_ARG, "%s: is a directory", path);
  }
  if ((uint64_t)st.st_size > (uint64_t)max_bytes) {
    fclose(f);
    return dq_error_set(err, DQ_ERR_LIMIT,
                        "%s: file is %lld bytes, over the limit of %zu bytes",
                        path, (long long)st.st_size, max_bytes);
  }
  size_t cap = (size_t)st.st_size;
  char *buf = malloc(cap + 1);
  if (!buf) {
    fclose(f);
    return dq_error_set(err, DQ_ERR_NOMEM, "%s: cannot allocate %zu bytes",
                        path, cap + 1);
  }
  size_t n = fread(buf, 1, cap, f);
  if (n != cap && ferror(f)) {
    int e = errno;
    free(buf);
    fclose(f);
    return dq_error_set(err, DQ_ERR_IO, "%s: read failed: %s", path,
                        strerror(e));
  }
  fclose(f);
  buf[n] = '\0';
  *out = buf;
  if (out_bytes)
    *out_bytes = n;
  return DQ_OK;
}

/* Makes room for `extra` more bytes plus the NUL; 0 on success, -1 (and
 * b->oom set) on allocation failure. */
static int strbuf_reserve(dq_strbuf *b, size_t extra) {
  if (b->oom)
    return -1;
  if (b->n + extra + 1 <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + extra + 1)
    cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void dq_strbuf_add(dq_strbuf *b, const char *s, size_t n) {
  if (strbuf_reserve(b, n) != 0)
    return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void dq_strbuf_adds(dq_strbuf *b, const char *s) {
  dq_strbuf_add(b, s, strlen(s));
}

void dq_strbuf_printf(dq_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || strbuf_reserve(b, (size_t)n) != 0)
    return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

int dq_dot_leader(const char *s, size_t n) {
  return memmem(s, n, "....", 4) || memmem(s, n, ". . .", 5);
}

/* Whether s[0..n) ends in a title, a tab and a page number
 * ("1.\tDefinitions\t3", a DOCX contents entry, whose leader dots the tab
 * stop draws); the field before the number has a letter, so a table's
 * row of numbers ("Alpha\t100\t3") is none. */
static int tab_page(const char *s, size_t n) {
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
    n--;
  size_t k = n;
  while (k && n - k < 6 &&
         ((s[k - 1] >= '0' && s[k - 1] <= '9') ||
          (s[k - 1] && strchr("ivxlcdmIVXLCDM", s[k - 1]))))
    k--;
  if (k == n || k < 2 || s[k - 1] != '\t')
    return 0;
  int letter = 0;
  for (size_t i = k - 1; i > 0 && s[i - 1] != '\t'; i--)
    letter |= ((s[i - 1] | 0x20) >= 'a' && (s[i - 1] | 0x20) <= 'z') ||
              (unsigned char)s[i - 1] >= 0x80;
  return letter;
}

int dq_listing_text(const char *s, size_t n) {
  size_t lines = 0, leaders = 0;
  for (size_t a = 0; a < n;) {
    const char *nl = memchr(s + a, '\n', n - a);
    size_t e = nl ? (size_t)(nl - s) : n;
    size_t i = a;
    while (i < e && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
      i++;
    if (i < e) {
      lines++;
      leaders += dq_dot_leader(s + i, e - i) || tab_page(s + i, e - i);
    }
    a = e + 1;
  }
  return leaders >= DQ_LISTING_MIN_LINES && 4 * leaders >= lines;
}
