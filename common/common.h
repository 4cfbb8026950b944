/*
 * common.h - the few conventions every docqa layer shares: status codes,
 * error messages carried on handles, logging through a caller-supplied sink,
 * progress callbacks, and checked arithmetic for parsers.
 *
 * It is the bottom of the layer stack (cli -> pipeline -> {ingest, index,
 * engine} -> kernels -> common) and holds no mutable global state: a logger is
 * a value the caller owns and passes down in each layer's options.
 * It is not a grab-bag: output formatting (JSON, progress bars) lives in cli/.
 */
#ifndef DQ_COMMON_H
#define DQ_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Status codes. Append only: never renumber or reuse a code (scripts and
 * tests match on names and numbers). One line per code: name, value, message.
 */
#define DQ_STATUS_MAP(X)                                                       \
  X(OK, 0, "success")                                                          \
  X(ERR_NOMEM, 1, "out of memory")                                             \
  X(ERR_ARG, 2, "invalid argument")                                            \
  X(ERR_IO, 3, "input/output error")                                           \
  X(ERR_NOTFOUND, 4, "not found")                                              \
  X(ERR_FORMAT, 5, "malformed input")                                          \
  X(ERR_CORRUPT, 6, "corrupt file")                                            \
  X(ERR_VERSION, 7, "unsupported version")                                     \
  X(ERR_UNSUPPORTED, 8, "unsupported feature")                                 \
  X(ERR_MISMATCH, 9, "mismatch between components")                            \
  X(ERR_FULL, 10, "disk or buffer full")                                       \
  X(ERR_READONLY, 11, "read-only storage")                                     \
  X(ERR_LIMIT, 12, "size limit exceeded")                                      \
  X(ERR_INTERRUPTED, 13, "interrupted")                                        \
  X(ERR_DEVICE, 14, "compute device error")                                    \
  X(ERR_NOT_IMPLEMENTED, 15, "not yet implemented")                            \
  X(ERR_DB, 16, "database error")                                              \
  X(ERR_BUSY, 17, "resource busy")                                             \
  X(ERR_CONFIG, 18, "configuration error")                                     \
  X(ERR_INTERNAL, 19, "internal error")

typedef enum {
#define DQ_STATUS_ENUM(name, val, msg) DQ_##name = val,
  DQ_STATUS_MAP(DQ_STATUS_ENUM)
#undef DQ_STATUS_ENUM
} dq_status;

/* "ERR_IO" style name; "UNKNOWN" for values outside the map. Static string. */
const char *dq_status_name(dq_status s);
/* One-line human message for the code. Static string. */
const char *dq_status_str(dq_status s);

/*
 * An error as carried on a handle (like sqlite3_errmsg): the status plus a
 * message naming the file, field or offset at fault. Embed it by value in
 * handles; constructors that can fail before a handle exists take a
 * `dq_error *err` out-parameter (may be NULL).
 */
#define DQ_ERRMSG_MAX 1024
typedef struct dq_error {
  dq_status code;
  char msg[DQ_ERRMSG_MAX];
} dq_error;

/* Records code and a printf-style message in `e` (if not NULL) and returns
 * code, so callers can write `return dq_error_set(err, DQ_ERR_IO, ...)`. */
dq_status dq_error_set(dq_error *e, dq_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
dq_status dq_error_setv(dq_error *e, dq_status code, const char *fmt,
                        va_list ap) __attribute__((format(printf, 3, 0)));
/* Prefixes the current message: "prefix: old message". Keeps the code. */
void dq_error_prefix(dq_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dq_error_clear(dq_error *e);
/* The message, or the code's generic message when none was set. Valid while
 * `e` is unchanged. */
const char *dq_error_msg(const dq_error *e);

/* Logging. Levels are ordered; a message is emitted when level <= log->level. */
typedef enum {
  DQ_LOG_ERROR = 0,
  DQ_LOG_WARN = 1,
  DQ_LOG_INFO = 2,
  DQ_LOG_DEBUG = 3,
  DQ_LOG_TRACE = 4
} dq_log_level;

typedef void (*dq_log_fn)(void *user, dq_log_level level, const char *msg);

/* A log sink. A NULL `dq_logger *` anywhere means "silent". */
typedef struct dq_logger {
  dq_log_level level;
  dq_log_fn fn;
  void *user;
} dq_logger;

void dq_log(const dq_logger *lg, dq_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define dq_log_enabled(lg, lvl) ((lg) && (lg)->fn && (lvl) <= (lg)->level)

/* Progress of long work, reported by libraries and drawn by cli/.
 * `done`/`total` are in `unit` ("files", "bytes", "tokens"); total 0 means
 * unknown. Returning non-zero asks the library to stop (DQ_ERR_INTERRUPTED). */
typedef int (*dq_progress_fn)(void *user, const char *stage, uint64_t done,
                              uint64_t total, const char *unit);

/* Checked arithmetic for parsers: return 0 and store on success, -1 on
 * overflow (nothing stored). */
static inline int dq_add_overflow(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_add_overflow(a, b, out) ? -1 : 0;
}
static inline int dq_mul_overflow(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* FNV-1a, 64 bits, of p[0..n): hash tables and content keys (not
 * cryptographic). */
static inline uint64_t dq_fnv1a(const void *p, size_t n) {
  const unsigned char *s = (const unsigned char *)p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

/* Monotonic clock in milliseconds, for timings reported to users. */
double dq_now_ms(void);

/* Reads a whole file (up to max_bytes) into a NUL-terminated malloc'd buffer.
 * The caller frees *out. Errors name the path. */
dq_status dq_read_file(const char *path, size_t max_bytes, char **out,
                       size_t *out_bytes, dq_error *err);

/* A growable NUL-terminated string. Zero-initialise it ({0}); appends never
 * fail loudly: on allocation failure `oom` is set and later appends do
 * nothing, so callers check once at the end. The caller frees `p`. */
typedef struct dq_strbuf {
  char *p;    /* NULL until the first append */
  size_t n;   /* bytes used, excluding the NUL */
  size_t cap; /* bytes allocated */
  int oom;
} dq_strbuf;
void dq_strbuf_add(dq_strbuf *b, const char *s, size_t n);
void dq_strbuf_adds(dq_strbuf *b, const char *s); /* NUL-terminated s */
void dq_strbuf_printf(dq_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Contents and index entries ("Introduction . . . . 1"): whether
 * s[0..n) holds a dot leader ("...." or ". . ."), and whether a text is a
 * listing of such entries, a contents or index page: at least
 * DQ_LISTING_MIN_LINES of its lines with text, and a quarter of them, have
 * one or end in a tab and a page number (a DOCX's contents,
 * "1.\tDefinitions\t3"). Readers keep such pages' entries from being headings
 * (read_pdf.c); search ranks them below the pages they point to
 * (index/search.c). */
#define DQ_LISTING_MIN_LINES 3
int dq_dot_leader(const char *s, size_t n);
int dq_listing_text(const char *s, size_t n);

/* Version string of docqa itself, e.g. "0.1.0". Static string. */
const char *dq_version(void);

#ifdef __cplusplus
}
#endif
#endif /* DQ_COMMON_H */
