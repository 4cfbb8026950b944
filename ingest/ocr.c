/*
 * ocr.c - text from an image of a page, through Tesseract's C API, and
 * image files' pages decoded by leptonica (Tesseract's image library,
 * reached through the same handle).
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
 * A page read sideways or upside down (a landscape schedule scanned in
 * portrait, a sheet fed the wrong way round) reads as noise: few words of
 * which Tesseract is sure. Such a page is shown to Tesseract's orientation
 * detection (osd.traineddata, Debian's tesseract-ocr-osd), turned as it
 * says and read again, and the reading with more sure words is kept. A
 * page read well costs nothing more; without the osd data pages are read
 * as they lie.
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
  int *(*word_confs)(TessBaseAPI *);
  void (*delete_ints)(const int *);
  /* leptonica's (Tesseract's image library, found through its handle):
   * image files' decoding */
  struct Pix *(*pix_read_mem)(const unsigned char *, size_t);
  struct Pix *(*pix_read_tiff_page)(const unsigned char *, size_t, size_t *);
  int (*pix_read_header_mem)(const unsigned char *, size_t, int *format, int *w,
                             int *h, int *bps, int *spp, int *cmap);
  struct Pix *(*pix_to_8)(struct Pix *, int cmapflag);
  void (*pix_destroy)(struct Pix **);
  int (*pix_w)(const struct Pix *);
  int (*pix_h)(const struct Pix *);
  int (*pix_wpl)(const struct Pix *);
  int (*pix_xres)(const struct Pix *);
  uint32_t *(*pix_data)(struct Pix *);
  int (*set_msg_severity)(int);
  /* orientation detection (Tesseract 4+ with its legacy engine); NULL
   * when the library has none */
  int (*detect_os)(TessBaseAPI *, int *deg, float *conf, const char **script,
                   float *script_conf);
  /* OpenMP's, when the library uses it (Debian's does); else NULL */
  int (*omp_get_levels)(void);
  void (*omp_set_levels)(int);
  char why[300]; /* empty when loaded */
} tess;
static pthread_once_t tess_once = PTHREAD_ONCE_INIT;

static void quiet(const char *msg) { (void)msg; }

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
                                      "TessBaseAPISetVariable",
                                      "pixReadMem",
                                      "pixReadMemFromMultipageTiff",
                                      "pixReadHeaderMem",
                                      "pixConvertTo8",
                                      "pixDestroy",
                                      "pixGetWidth",
                                      "pixGetHeight",
                                      "pixGetWpl",
                                      "pixGetXRes",
                                      "pixGetData",
                                      "setMsgSeverity",
                                      "TessBaseAPIAllWordConfidences",
                                      "TessDeleteIntArray"};
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
  *(void **)&tess.pix_read_mem = fn[10];
  *(void **)&tess.pix_read_tiff_page = fn[11];
  *(void **)&tess.pix_read_header_mem = fn[12];
  *(void **)&tess.pix_to_8 = fn[13];
  *(void **)&tess.pix_destroy = fn[14];
  *(void **)&tess.pix_w = fn[15];
  *(void **)&tess.pix_h = fn[16];
  *(void **)&tess.pix_wpl = fn[17];
  *(void **)&tess.pix_xres = fn[18];
  *(void **)&tess.pix_data = fn[19];
  *(void **)&tess.set_msg_severity = fn[20];
  *(void **)&tess.word_confs = fn[21];
  *(void **)&tess.delete_ints = fn[22];
  /* leptonica's messages ("Error in pixReadMem: ...") would go to our
   * stderr: a bad image is reported once, by us (L_SEVERITY_NONE) */
  tess.set_msg_severity(6);
  /* and those it writes past its severity ("Bad file: amount too big"),
   * and libtiff's; libpng's own "libpng error" line is not ours to
   * silence */
  void (*set_stderr)(void (*)(const char *));
  *(void **)&set_stderr = dlsym(h, "leptSetStderrHandler");
  if (set_stderr)
    set_stderr(quiet);
  void *(*tiff_handler)(void *);
  static const char *const tiff_setters[] = {"TIFFSetErrorHandler",
                                             "TIFFSetWarningHandler"};
  for (size_t i = 0; i < 2; i++)
    if ((*(void **)&tiff_handler = dlsym(h, tiff_setters[i])))
      tiff_handler(NULL);
  *(void **)&tess.detect_os = dlsym(h, "TessBaseAPIDetectOrientationScript");
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

int dq_ocr_can_orient(void) {
  pthread_once(&tess_once, tess_open);
  if (tess.why[0] || !tess.detect_os)
    return 0;
  char why[300];
  ocr_engine *e = engine_take("osd", why, sizeof why);
  if (e)
    engine_put(e);
  return e != NULL;
}

int dq_ocr_lang_ok(const char *lang) {
  size_t n = strlen(lang);
  return n > 0 && n < sizeof pool[0]->lang &&
         strspn(lang, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789_+") == n;
}

/* Reads the image on engine e: its text (malloc'd, NULL when Tesseract
 * read nothing) and the count of its words and of those Tesseract is sure
 * of (confidence 80 or more: a page of text has many, a photo's noise
 * few; a page's mean is no measure, as an index page's dot leaders pull
 * it under 40). */
static dq_status read_image(ocr_engine *e, const uint8_t *gray, int w, int h,
                            int stride, int ppi, char **out, int *sure,
                            int *words, char *why, size_t why_cap) {
  *out = NULL;
  *sure = *words = 0;
  tess.set_image(e->api, gray, w, h, 1, stride);
  if (ppi > 0) /* else Tesseract estimates it from the text's height */
    tess.set_resolution(e->api, ppi);
  char *t = tess.get_text(e->api);
  dq_status st = DQ_OK;
  if (t) {
    int *wc = tess.word_confs(e->api);
    for (int k = 0; wc && wc[k] >= 0; k++) {
      *sure += wc[k] >= 80;
      ++*words;
    }
    if (wc)
      tess.delete_ints(wc);
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
  tess.clear(e->api); /* the image and results, not the language */
  return st;
}

/* Below half its words sure, or under OCR_SURE_MIN of them: a page that
 * may lie sideways. */
#define OCR_SURE_MIN 5
/* Orientation detection's confidence below which a page is left as it
 * lies (tesseract --psm 0 reports 3-5 for a page of text) */
#define OSD_CONF_MIN 1.0f

/* The clockwise quarter turns that set the page upright, from
 * Tesseract's orientation detection; 0 when upright, unsure or when the
 * osd data is missing. */
static int upright_turns(const uint8_t *gray, int w, int h, int stride,
                         int ppi) {
  if (!tess.detect_os)
    return 0;
  char why[300];
  ocr_engine *e = engine_take("osd", why, sizeof why);
  if (!e)
    return 0;
  tess.set_image(e->api, gray, w, h, 1, stride);
  if (ppi > 0)
    tess.set_resolution(e->api, ppi);
  int deg = 0;
  float conf = 0, script_conf = 0;
  const char *script = NULL;
  int ok = tess.detect_os(e->api, &deg, &conf, &script, &script_conf);
  tess.clear(e->api);
  engine_put(e);
  if (!ok || conf < OSD_CONF_MIN || deg % 90 != 0)
    return 0;
  return ((360 - deg) / 90) % 4;
}

uint8_t *dq_gray_turn(const uint8_t *src, int w, int h, int stride, int turns,
                      int *tw, int *th) {
  turns &= 3;
  *tw = turns % 2 ? h : w;
  *th = turns % 2 ? w : h;
  uint8_t *dst = malloc((size_t)w * (size_t)h);
  if (!dst)
    return NULL;
  for (int y = 0; y < *th; y++) {
    uint8_t *o = dst + (size_t)y * (size_t)*tw;
    for (int x = 0; x < *tw; x++) {
      int sx = turns == 0   ? x
               : turns == 1 ? y
               : turns == 2 ? w - 1 - x
                            : w - 1 - y;
      int sy = turns == 0   ? y
               : turns == 1 ? h - 1 - x
               : turns == 2 ? h - 1 - y
                            : x;
      o[x] = src[(size_t)sy * (size_t)stride + (size_t)sx];
    }
  }
  return dst;
}

dq_status dq_ocr_page(const uint8_t *gray, int w, int h, int stride, int ppi,
                      const char *lang, char **out, int *sure, int *words,
                      char *why, size_t why_cap) {
  *out = NULL;
  *sure = *words = 0;
  pthread_once(&tess_once, tess_open);
  if (tess.why[0]) {
    snprintf(why, why_cap, "%s", tess.why);
    return DQ_ERR_UNSUPPORTED;
  }
  if (!dq_ocr_lang_ok(lang)) {
    snprintf(why, why_cap,
             "'%s' is no Tesseract language list (\"eng\", "
             "\"deu+eng\")",
             lang);
    return DQ_ERR_ARG;
  }
  ocr_engine *e = engine_take(lang, why, why_cap);
  if (!e)
    return DQ_ERR_UNSUPPORTED;
  int levels = tess.omp_get_levels ? tess.omp_get_levels() : -1;
  if (levels > 0)
    tess.omp_set_levels(0);
  dq_status st =
      read_image(e, gray, w, h, stride, ppi, out, sure, words, why, why_cap);
  int turns = st == DQ_OK && (*sure < OCR_SURE_MIN || *sure * 2 < *words)
                  ? upright_turns(gray, w, h, stride, ppi)
                  : 0;
  int tw, th;
  uint8_t *turned =
      turns ? dq_gray_turn(gray, w, h, stride, turns, &tw, &th) : NULL;
  if (turned) {
    char *t2 = NULL, why2[300];
    int sure2 = 0, words2 = 0;
    if (read_image(e, turned, tw, th, tw, ppi, &t2, &sure2, &words2, why2,
                   sizeof why2) == DQ_OK &&
        sure2 > *sure) {
      free(*out);
      *out = t2;
      *sure = sure2;
      *words = words2;
      t2 = NULL;
    }
    free(t2);
    free(turned);
  }
  if (levels > 0)
    tess.omp_set_levels(levels);
  engine_put(e);
  return st;
}

static void *jobs_worker(void *arg) {
  dq_ocr_batch *b = arg;
  for (;;) {
    int k = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
    if (k >= b->n)
      return NULL;
    dq_ocr_job *j = &b->jobs[k];
    j->st = dq_ocr_page(j->gray, j->w, j->h, j->w, j->ppi, b->lang, &j->text,
                        &j->sure, &j->words, j->why, sizeof j->why);
    free(j->gray);
    j->gray = NULL;
  }
}

void dq_ocr_jobs(dq_ocr_job *jobs, int n, const char *lang) {
  dq_ocr_batch b = {jobs, n, 0, lang};
  pthread_t th[DQ_OCR_MAX_THREADS];
  int n_th = 0;
  for (; n_th < n - 1 && n_th < DQ_OCR_MAX_THREADS; n_th++)
    if (pthread_create(&th[n_th], NULL, jobs_worker, &b) != 0)
      break;
  jobs_worker(&b); /* this thread reads too */
  for (int t = 0; t < n_th; t++)
    pthread_join(th[t], NULL);
}

/* ---- image files (leptonica) ---- */

/* Pixels an image may have: a 600 dpi A3 scan is 70 M. */
#define IMG_MAX_PIXELS 100e6

struct dq_ocr_img {
  const unsigned char *data;
  size_t n;
  int tiff;      /* pages: a TIFF's frames, one after another */
  size_t offset; /* the next frame's (pixReadMemFromMultipageTiff's) */
  int done;
};

dq_status dq_ocr_img_open(const char *data, size_t n, dq_ocr_img **out,
                          char *why, size_t why_cap) {
  *out = NULL;
  pthread_once(&tess_once, tess_open);
  if (tess.why[0]) {
    snprintf(why, why_cap, "%s", tess.why);
    return DQ_ERR_UNSUPPORTED;
  }
  int format = 0, w = 0, h = 0, bps = 0, spp = 0, cmap = 0;
  if (tess.pix_read_header_mem((const unsigned char *)data, n, &format, &w, &h,
                               &bps, &spp, &cmap) != 0 ||
      w <= 0 || h <= 0) {
    snprintf(why, why_cap,
             "not an image leptonica can read (PNG, JPEG, "
             "TIFF, GIF, WebP, BMP, PNM), or a damaged one");
    return DQ_ERR_FORMAT;
  }
  if ((double)w * h > IMG_MAX_PIXELS) {
    snprintf(why, why_cap, "%d x %d pixels: over the %.0f million docqa reads",
             w, h, IMG_MAX_PIXELS / 1e6);
    return DQ_ERR_LIMIT;
  }
  dq_ocr_img *im = calloc(1, sizeof *im);
  if (!im) {
    snprintf(why, why_cap, "out of memory");
    return DQ_ERR_NOMEM;
  }
  im->data = (const unsigned char *)data;
  im->n = n;
  /* leptonica's IFF_TIFF .. IFF_TIFF_ZIP, IFF_TIFF_JPEG */
  im->tiff = (format >= 4 && format <= 10) || format == 17;
  *out = im;
  return DQ_OK;
}

dq_status dq_ocr_img_next(dq_ocr_img *im, dq_ocr_job *j, char *why,
                          size_t why_cap) {
  if (im->done)
    return DQ_ERR_NOTFOUND;
  struct Pix *pix;
  if (im->tiff) {
    pix = tess.pix_read_tiff_page(im->data, im->n, &im->offset);
    im->done = im->offset == 0; /* no frame after this one */
  } else {
    pix = tess.pix_read_mem(im->data, im->n);
    im->done = 1;
  }
  if (!pix) {
    im->done = 1;
    snprintf(why, why_cap, "cannot decode the image%s",
             im->tiff ? "'s next page" : "");
    return DQ_ERR_FORMAT;
  }
  int w = tess.pix_w(pix), h = tess.pix_h(pix);
  int xres = tess.pix_xres(pix);
  if (w <= 0 || h <= 0 || (double)w * h > IMG_MAX_PIXELS) {
    tess.pix_destroy(&pix);
    im->done = 1;
    snprintf(why, why_cap,
             "a page of %d x %d pixels: over the %.0f million "
             "docqa reads",
             w, h, IMG_MAX_PIXELS / 1e6);
    return DQ_ERR_LIMIT;
  }
  struct Pix *g = tess.pix_to_8(pix, 0); /* grey, no colour map */
  tess.pix_destroy(&pix);
  uint8_t *gray = g ? malloc((size_t)w * (size_t)h) : NULL;
  if (!gray) {
    if (g)
      tess.pix_destroy(&g);
    snprintf(why, why_cap, g ? "out of memory" : "cannot convert to grey");
    return g ? DQ_ERR_NOMEM : DQ_ERR_FORMAT;
  }
  /* leptonica keeps a row in 32-bit words, its first pixel in a word's
   * most significant byte */
  const uint32_t *data = tess.pix_data(g);
  int wpl = tess.pix_wpl(g);
  for (int y = 0; y < h; y++) {
    const uint32_t *row = data + (size_t)y * (size_t)wpl;
    uint8_t *o = gray + (size_t)y * (size_t)w;
    for (int x = 0; x < w; x++)
      o[x] = (uint8_t)(row[x >> 2] >> (24 - 8 * (x & 3)));
  }
  tess.pix_destroy(&g);
  j->gray = gray;
  j->w = w;
  j->h = h;
  /* a file without its resolution (or a screen's 72 dpi): Tesseract
   * guesses from the text's height */
  j->ppi = xres >= 100 && xres <= 2400 ? xres : 0;
  return DQ_OK;
}

void dq_ocr_img_close(dq_ocr_img *im) { free(im); }
