/*
 * ocr.c - text from an image of a page, through Tesseract's C API.
 *
 * libtesseract is opened when the first page needs it (dlopen), not linked:
 * most runs never OCR anything, and the library brings about 60 others
 * (leptonica, libarchive, curl, ...). A machine without it, or without the
 * language's traineddata, reads everything as before and leaves pages that
 * have no text layer empty; dq_ocr_page says why, once per page, and the
 * caller counts them (dq_read_info.n_pages_no_text).
 *
 * The prototypes below are the C API's (tesseract/capi.h, stable since 3.x);
 * declaring them here means building docqa does not need libtesseract-dev.
 *
 * Tesseract's LSTM runs some loops as OpenMP parallel regions of a fixed
 * 10 threads. In a process that reads several pages at once, or on a
 * laptop's 2-4 cores, that is many more threads than cores, and libgomp's
 * waiting threads spin: a page took 12.7 s on 2 cores, against 1.7 s for
 * the tesseract program with OMP_THREAD_LIMIT=1. Environment variables
 * are read when libgomp starts, before main (FAISS links it), so
 * dq_ocr_page sets OpenMP's max-active-levels to 0 while it reads, which
 * runs every parallel region on its one calling thread. That setting is
 * the calling thread's (OpenMP 5's data environment; libgomp since GCC
 * 11), so it is set on every call, and restored after it; pages are read
 * in parallel by the caller's own threads.
 *
 * Engines (a TessBaseAPI with its languages loaded) are kept in a pool
 * for the process's life: loading a traineddata costs 50-200 ms, a page's
 * OCR about a second, and a folder of scans holds many PDFs. One engine
 * reads one page at a time; the pool holds as many as pages were read at
 * once.
 */
#include "ingest_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DQ_TESSERACT_SONAME
#define DQ_TESSERACT_SONAME "libtesseract.so.5"
#endif

typedef struct TessBaseAPI TessBaseAPI;

static struct {
  TessBaseAPI *(*create)(void);
  void (*destroy)(TessBaseAPI *);
  int (*init3)(TessBaseAPI *, const char *datapath, const char *lang);
  void (*set_image)(TessBaseAPI *, const unsigned char *, int w, int h,
                    int bytes_per_pixel, int bytes_per_line);
  void (*set_resolution)(TessBaseAPI *, int ppi);
  char *(*get_text)(TessBaseAPI *);
  void (*delete_text)(const char *);
  void (*clear)(TessBaseAPI *);
  const char *(*version)(void);
  int (*set_variable)(TessBaseAPI *, const char *, const char *);
  /* OpenMP's, when the library uses it (Debian's does); else NULL */
  int (*omp_get_levels)(void);
  void (*omp_set_levels)(int);
  char why[300]; /* empty when loaded */
} tess;
static pthread_once_t tess_once = PTHREAD_ONCE_INIT;

static void tess_open(void) {
  void *h = dlopen(DQ_TESSERACT_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(tess.why, sizeof tess.why,
             "OCR needs Tesseract (%s; Debian: libtesseract5 and "
             "tesseract-ocr-eng): %s",
             DQ_TESSERACT_SONAME, e ? e : "cannot load it");
    return;
  }
  static const char *const names[] = {"TessBaseAPICreate",
                                      "TessBaseAPIDelete",
                                      "TessBaseAPIInit3",
                                      "TessBaseAPISetImage",
                                      "TessBaseAPISetSourceResolution",
                                      "TessBaseAPIGetUTF8Text",
                                      "TessDeleteText",
                                      "TessBaseAPIClear",
                                      "TessVersion",
                                      "TessBaseAPISetVariable"};
  void *fn[sizeof names / sizeof names[0]];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(fn[i] = dlsym(h, names[i]))) {
      snprintf(tess.why, sizeof tess.why, "%s has no %s", DQ_TESSERACT_SONAME,
               names[i]);
      dlclose(h);
      return;
    }
  /* POSIX: a function pointer may be converted from dlsym's void * */
  *(void **)&tess.create = fn[0];
  *(void **)&tess.destroy = fn[1];
  *(void **)&tess.init3 = fn[2];
  *(void **)&tess.set_image = fn[3];
  *(void **)&tess.set_resolution = fn[4];
  *(void **)&tess.get_text = fn[5];
  *(void **)&tess.delete_text = fn[6];
  *(void **)&tess.clear = fn[7];
  *(void **)&tess.version = fn[8];
  *(void **)&tess.set_variable = fn[9];
  *(void **)&tess.omp_get_levels = dlsym(h, "omp_get_max_active_levels");
  *(void **)&tess.omp_set_levels = dlsym(h, "omp_set_max_active_levels");
  if (!tess.omp_get_levels || !tess.omp_set_levels)
    tess.omp_get_levels = NULL;
}

const char *dq_ocr_version(void) {
  pthread_once(&tess_once, tess_open);
  return tess.why[0] ? "not found" : tess.version();
}

/* An engine loaded with one language list; idle ones wait in a pool for
 * the next page, whichever thread reads it. */
typedef struct ocr_engine {
  TessBaseAPI *api;
  char lang[64];
} ocr_engine;
#define POOL_MAX 64
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ocr_engine *pool[POOL_MAX];
static int n_pool;
static char failed_lang[64], failed_why[300]; /* the last that failed */

static void engine_free(ocr_engine *e) {
  if (e && e->api)
    tess.destroy(e->api);
  free(e);
}

static void pool_drain(void) {
  pthread_mutex_lock(&pool_mu);
  while (n_pool > 0)
    engine_free(pool[--n_pool]);
  pthread_mutex_unlock(&pool_mu);
}

static pthread_once_t drain_once = PTHREAD_ONCE_INIT;
static void drain_at_exit(void) { atexit(pool_drain); }

/* An idle engine for lang, or a new one; NULL with why set. */
static ocr_engine *engine_take(const char *lang, char *why, size_t why_cap) {
  pthread_mutex_lock(&pool_mu);
  for (int i = n_pool - 1; i >= 0; i--)
    if (strcmp(pool[i]->lang, lang) == 0) {
      ocr_engine *e = pool[i];
      pool[i] = pool[--n_pool];
      pthread_mutex_unlock(&pool_mu);
      return e;
    }
  if (strcmp(failed_lang, lang) == 0) {
    snprintf(why, why_cap, "%s", failed_why);
    pthread_mutex_unlock(&pool_mu);
    return NULL;
  }
  pthread_mutex_unlock(&pool_mu);
  ocr_engine *e = calloc(1, sizeof *e);
  if (!e) {
    snprintf(why, why_cap, "out of memory");
    return NULL;
  }
  snprintf(e->lang, sizeof e->lang, "%s", lang);
  e->api = tess.create();
  /* Tesseract's own messages ("Error opening data file ...") would go to
   * our stderr; what went wrong is said once, below */
  if (e->api)
    tess.set_variable(e->api, "debug_file", "/dev/null");
  /* Init3 with a NULL path reads TESSDATA_PREFIX, else the path the
   * library was built with (Debian: /usr/share/tesseract-ocr/5/tessdata) */
  if (!e->api || tess.init3(e->api, NULL, lang) != 0) {
    snprintf(why, why_cap,
             "Tesseract cannot load language '%s' (its traineddata is "
             "missing: Debian's tesseract-ocr-%s, or set TESSDATA_PREFIX)",
             lang, lang);
    engine_free(e);
    pthread_mutex_lock(&pool_mu); /* not tried again */
    snprintf(failed_lang, sizeof failed_lang, "%s", lang);
    snprintf(failed_why, sizeof failed_why, "%s", why);
    pthread_mutex_unlock(&pool_mu);
    return NULL;
  }
  /* idle engines are deleted at exit before the library's own caches,
   * which it builds during the first Init3 (so their destructors run
   * after a handler registered now) and which complain of every
   * traineddata still held */
  pthread_once(&drain_once, drain_at_exit);
  return e;
}

static void engine_put(ocr_engine *e) {
  pthread_mutex_lock(&pool_mu);
  if (n_pool < POOL_MAX) {
    pool[n_pool++] = e;
    e = NULL;
  }
  pthread_mutex_unlock(&pool_mu);
  engine_free(e);
}

dq_status dq_ocr_page(const uint8_t *gray, int w, int h, int stride, int ppi,
                      const char *lang, char **out, char *why, size_t why_cap) {
  *out = NULL;
  pthread_once(&tess_once, tess_open);
  if (tess.why[0]) {
    snprintf(why, why_cap, "%s", tess.why);
    return DQ_ERR_UNSUPPORTED;
  }
  /* a language list is letters, digits, '_' and '+' ("deu+eng"): never a
   * path that Tesseract would open */
  size_t n_lang = strlen(lang);
  if (!n_lang || n_lang >= sizeof pool[0]->lang ||
      strspn(lang, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789_+") != n_lang) {
    snprintf(why, why_cap,
             "'%s' is no Tesseract language list (\"eng\", "
             "\"deu+eng\")",
             lang);
    return DQ_ERR_ARG;
  }
  ocr_engine *e = engine_take(lang, why, why_cap);
  if (!e)
    return DQ_ERR_UNSUPPORTED;
  TessBaseAPI *api = e->api;
  int levels = tess.omp_get_levels ? tess.omp_get_levels() : -1;
  if (levels > 0)
    tess.omp_set_levels(0);
  tess.set_image(api, gray, w, h, 1, stride);
  tess.set_resolution(api, ppi);
  char *t = tess.get_text(api);
  dq_status st = DQ_OK;
  if (t) {
    *out = strdup(t);
    tess.delete_text(t);
    if (!*out) {
      snprintf(why, why_cap, "out of memory");
      st = DQ_ERR_NOMEM;
    }
  } else {
    snprintf(why, why_cap, "Tesseract read nothing from the page image");
    st = DQ_ERR_FORMAT;
  }
  tess.clear(api); /* the image and results, not the language */
  if (levels > 0)
    tess.omp_set_levels(levels);
  engine_put(e);
  return st;
}
