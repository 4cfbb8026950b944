/*
 * read_pdf.c - PDF reader on poppler-glib: the text of each page as poppler
 * lays it out (poppler_page_get_text), pages in order.
 *
 * Marks: `page` is the 1-based page number and `line` the 1-based line within
 * that page (not a running line over the document), so a citation reads
 * "page 3, line 12". Each page's text ends with a newline; nothing else marks
 * the page break in the text. Encrypted PDFs that need a password and files
 * poppler cannot open are refused with a message naming the file; we never
 * supply a password.
 *
 * Running headers and footers ("Chapter 4: Function reference", "Page 3 of
 * 12", a bare page number) are emptied, their lines kept, so line numbers
 * still match the page's layout: a line among the first or last RUN_EDGE
 * non-empty lines of a page whose text, digits aside, stands there on at
 * least RUN_MIN_PAGES pages. Left in, they read as headings ("Appendix A:
 * Copying Information" on every page of the appendix) and as words of every
 * chunk. The document's first line stays: a title repeated as the header
 * of later pages is the title on page 1.
 *
 * Headings come from the fonts (poppler_page_get_text_attributes; none
 * where the library lacks it): the body's font size is the one most
 * characters have; a line of at most HEAD_MAX_CHARS characters, nearly all
 * in one font that is at least HEAD_SIZE_RATIO times the body's size, or
 * bold where the body is not, is a heading line; up to HEAD_MAX_LINES
 * such lines in a row in one font are one heading (more are a paragraph
 * in that font). Levels: the fonts by size, larger first, bold before
 * regular. A contents page (a quarter of its lines with dot leaders) has
 * one heading at most, its first line ("Function and Data Index"); its
 * bold entries are none. Other PDFs get their section paths from them;
 * the contract chunker takes them where clause numbers leave room
 * (chunk_contract.c).
 *
 * Scans: a page whose text layer is (nearly) empty while pictures cover a
 * third of it is rendered at 300 dpi through poppler's cairo and read by
 * OCR (ocr.c, Tesseract), unless dq_read_opts.no_ocr; its lines are then
 * Tesseract's, with no fonts, so no font headings (clause numbers still
 * make sections). Pages are rendered here one at a time (a poppler
 * document is not for several threads) and read by n_threads threads, one
 * Tesseract engine each. Pages left unread (OCR off, Tesseract or the
 * language missing) are counted in dq_read_info with the reason; the PDF
 * still reads.
 *
 * poppler-glib is opened when the first PDF is read (dlopen), not linked:
 * it brings 51 libraries, whose loading cost every docqa process about
 * 6 ms at start (`docqa xref` p50 14.2 -> 8.0 ms, 0.8 of it its own
 * query). A machine without it reads everything but PDFs, which are
 * refused naming the library.
 */
#include "ingest_int.h"

#include <dlfcn.h>
#include <glib.h>
#include <math.h>
#include <poppler.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DQ_POPPLER_GLIB_SONAME
#define DQ_POPPLER_GLIB_SONAME "libpoppler-glib.so.8"
#endif

/* The calls this reader makes, taken from the library once. */
static struct {
  GBytes *(*bytes_new_static)(gconstpointer, gsize);
  void (*bytes_unref)(GBytes *);
  void (*object_unref)(gpointer);
  void (*free)(gpointer);
  void (*error_free)(GError *);
  GQuark (*error_quark)(void);
  PopplerDocument *(*document_new_from_bytes)(GBytes *, const char *,
                                              GError **);
  int (*document_get_n_pages)(PopplerDocument *);
  PopplerPage *(*document_get_page)(PopplerDocument *, int);
  char *(*page_get_text)(PopplerPage *);
  const char *(*get_version)(void);
  /* optional: NULL when the library lacks them (then no headings) */
  GList *(*page_get_text_attributes)(PopplerPage *);
  void (*page_free_text_attributes)(GList *);
  /* optional, for OCR (ocr_render): NULL when missing (then no OCR) */
  void (*page_render)(PopplerPage *, cairo_t *);
  void (*page_get_size)(PopplerPage *, double *, double *);
  GList *(*page_get_image_mapping)(PopplerPage *);
  void (*page_free_image_mapping)(GList *);
  char *(*strdup)(const char *);
  cairo_surface_t *(*surface_create)(cairo_format_t, int, int);
  cairo_status_t (*surface_status)(cairo_surface_t *);
  void (*surface_flush)(cairo_surface_t *);
  unsigned char *(*surface_data)(cairo_surface_t *);
  int (*surface_stride)(cairo_surface_t *);
  void (*surface_destroy)(cairo_surface_t *);
  cairo_t *(*cairo_create)(cairo_surface_t *);
  void (*cairo_destroy)(cairo_t *);
  void (*cairo_scale)(cairo_t *, double, double);
  void (*cairo_set_source_rgb)(cairo_t *, double, double, double);
  void (*cairo_paint)(cairo_t *);
  int can_render;
  char why[300]; /* empty when loaded */
} pdf;
static pthread_once_t pdf_once = PTHREAD_ONCE_INIT;

static void pdf_open(void) {
  /* RTLD_LOCAL: glib's symbols are for poppler, not for everyone */
  void *h = dlopen(DQ_POPPLER_GLIB_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(pdf.why, sizeof pdf.why,
             "PDF support needs poppler-glib (%s, Debian's libpoppler-glib8): "
             "%s",
             DQ_POPPLER_GLIB_SONAME, e ? e : "cannot load it");
    return;
  }
  static const char *const names[] = {"g_bytes_new_static",
                                      "g_bytes_unref",
                                      "g_object_unref",
                                      "g_free",
                                      "g_error_free",
                                      "poppler_error_quark",
                                      "poppler_document_new_from_bytes",
                                      "poppler_document_get_n_pages",
                                      "poppler_document_get_page",
                                      "poppler_page_get_text",
                                      "poppler_get_version"};
  void *fn[sizeof names / sizeof names[0]];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(fn[i] = dlsym(h, names[i]))) { /* its dependencies too */
      snprintf(pdf.why, sizeof pdf.why, "%s has no %s", DQ_POPPLER_GLIB_SONAME,
               names[i]);
      dlclose(h);
      return;
    }
  /* POSIX: a function pointer may be converted from dlsym's void * */
  *(void **)&pdf.bytes_new_static = fn[0];
  *(void **)&pdf.bytes_unref = fn[1];
  *(void **)&pdf.object_unref = fn[2];
  *(void **)&pdf.free = fn[3];
  *(void **)&pdf.error_free = fn[4];
  *(void **)&pdf.error_quark = fn[5];
  *(void **)&pdf.document_new_from_bytes = fn[6];
  *(void **)&pdf.document_get_n_pages = fn[7];
  *(void **)&pdf.document_get_page = fn[8];
  *(void **)&pdf.page_get_text = fn[9];
  *(void **)&pdf.get_version = fn[10];
  *(void **)&pdf.page_get_text_attributes =
      dlsym(h, "poppler_page_get_text_attributes");
  *(void **)&pdf.page_free_text_attributes =
      dlsym(h, "poppler_page_free_text_attributes");
  if (!pdf.page_free_text_attributes)
    pdf.page_get_text_attributes = NULL;
  /* rendering for OCR: poppler-glib's cairo (a dependency of the library,
   * so found through its handle) */
  static const char *const render[] = {"poppler_page_render",
                                       "poppler_page_get_size",
                                       "poppler_page_get_image_mapping",
                                       "poppler_page_free_image_mapping",
                                       "g_strdup",
                                       "cairo_image_surface_create",
                                       "cairo_surface_status",
                                       "cairo_surface_flush",
                                       "cairo_image_surface_get_data",
                                       "cairo_image_surface_get_stride",
                                       "cairo_surface_destroy",
                                       "cairo_create",
                                       "cairo_destroy",
                                       "cairo_scale",
                                       "cairo_set_source_rgb",
                                       "cairo_paint"};
  void *rf[sizeof render / sizeof render[0]];
  pdf.can_render = 1;
  for (size_t i = 0; i < sizeof render / sizeof render[0]; i++)
    if (!(rf[i] = dlsym(h, render[i])))
      pdf.can_render = 0;
  if (pdf.can_render) {
    *(void **)&pdf.page_render = rf[0];
    *(void **)&pdf.page_get_size = rf[1];
    *(void **)&pdf.page_get_image_mapping = rf[2];
    *(void **)&pdf.page_free_image_mapping = rf[3];
    *(void **)&pdf.strdup = rf[4];
    *(void **)&pdf.surface_create = rf[5];
    *(void **)&pdf.surface_status = rf[6];
    *(void **)&pdf.surface_flush = rf[7];
    *(void **)&pdf.surface_data = rf[8];
    *(void **)&pdf.surface_stride = rf[9];
    *(void **)&pdf.surface_destroy = rf[10];
    *(void **)&pdf.cairo_create = rf[11];
    *(void **)&pdf.cairo_destroy = rf[12];
    *(void **)&pdf.cairo_scale = rf[13];
    *(void **)&pdf.cairo_set_source_rgb = rf[14];
    *(void **)&pdf.cairo_paint = rf[15];
  }
}

/* NULL when poppler-glib is ready, else why not. */
static const char *pdf_load(void) {
  pthread_once(&pdf_once, pdf_open);
  return pdf.why[0] ? pdf.why : NULL;
}

/* Running lines: RUN_EDGE lines at either end of a page looked at, a line
 * repeated on RUN_MIN_PAGES pages is running; a longer line (RUN_KEY_MAX
 * bytes, digits aside) is text, never a header. */
#define RUN_EDGE 2
#define RUN_MIN_PAGES 3
#define RUN_KEY_MAX 120

/* One edge line of a page: where it is and its key (the line without its
 * outer blanks, inner blank runs as one space, digit runs as '#'). */
typedef struct edge_line {
  int page;
  int nth;         /* among the page's non-empty lines, from 0 */
  size_t off, len; /* in the page's text */
  int running;
  char key[RUN_KEY_MAX + 1];
} edge_line;

static int is_blank(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f';
}

/* The key of line[0..n) into key; 0 when the line is too long to be a
 * header (it has no key). */
static int edge_key(const char *line, size_t n, char *key) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = line[i];
    if (is_blank(ch)) {
      if (k && key[k - 1] != ' ')
        key[k++] = ' ';
    } else if (ch >= '0' && ch <= '9') {
      if (!k || key[k - 1] != '#')
        key[k++] = '#';
    } else {
      key[k++] = ch;
    }
    if (k >= RUN_KEY_MAX)
      return 0;
  }
  while (k && key[k - 1] == ' ')
    k--;
  key[k] = '\0';
  return k > 0;
}

static int edge_cmp(const void *a, const void *b) {
  const edge_line *x = *(edge_line *const *)a, *y = *(edge_line *const *)b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->page > y->page) - (x->page < y->page);
}

/* Appends page p's edge lines (text[0..len)) to e[*n..]: its first and its
 * last RUN_EDGE non-empty lines, each once; at most 2 * RUN_EDGE. Returns
 * how many non-empty lines the page has. */
static int page_edges(const char *text, size_t len, int p, edge_line *e,
                      size_t *n) {
  size_t off[2 * RUN_EDGE], ln[2 * RUN_EDGE];
  int nth[2 * RUN_EDGE], n_lines = 0, n_edge = 0;
  size_t tail_off[RUN_EDGE], tail_len[RUN_EDGE]; /* ring: the last ones */
  for (size_t s = 0; s < len;) {
    const char *nl = memchr(text + s, '\n', len - s);
    size_t end = nl ? (size_t)(nl - text) : len;
    size_t a = s;
    while (a < end && is_blank(text[a]))
      a++;
    if (a < end) {
      if (n_lines < RUN_EDGE) {
        off[n_edge] = s;
        ln[n_edge] = end - s;
        nth[n_edge++] = n_lines;
      }
      tail_off[n_lines % RUN_EDGE] = s;
      tail_len[n_lines % RUN_EDGE] = end - s;
      n_lines++;
    }
    s = end + 1;
  }
  int t = n_lines - RUN_EDGE > n_edge ? n_lines - RUN_EDGE : n_edge;
  for (; t < n_lines; t++) {
    off[n_edge] = tail_off[t % RUN_EDGE];
    ln[n_edge] = tail_len[t % RUN_EDGE];
    nth[n_edge++] = t;
  }
  for (int i = 0; i < n_edge; i++) {
    edge_line *x = &e[*n];
    if (!edge_key(text + off[i], ln[i], x->key))
      continue;
    x->page = p;
    x->nth = nth[i];
    x->off = off[i];
    x->len = ln[i];
    x->running = 0;
    (*n)++;
  }
  return n_lines;
}

/* Blanks (with spaces) the running lines of the pages texts[0..n_pages)
 * (NULL for a page without text), all but the document's first non-empty
 * line. Returns DQ_ERR_NOMEM or DQ_OK. */
static dq_status blank_running(char **texts, const size_t *lens, int n_pages) {
  if (n_pages < RUN_MIN_PAGES)
    return DQ_OK;
  size_t cap = (size_t)n_pages * 2 * RUN_EDGE, n = 0;
  edge_line *e = malloc(cap * sizeof *e);
  edge_line **by = malloc(cap * sizeof *by);
  if (!e || !by) {
    free(e);
    free(by);
    return DQ_ERR_NOMEM;
  }
  int first_page = -1; /* the first page with a non-empty line */
  for (int p = 0; p < n_pages; p++)
    if (texts[p] && page_edges(texts[p], lens[p], p, e, &n) && first_page < 0)
      first_page = p;
  for (size_t i = 0; i < n; i++)
    by[i] = &e[i];
  qsort(by, n, sizeof *by, edge_cmp);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    int pages = 0;
    for (; j < n && !strcmp(by[j]->key, by[i]->key); j++)
      pages += j == i || by[j]->page != by[j - 1]->page;
    for (size_t k = i; k < j; k++)
      by[k]->running = pages >= RUN_MIN_PAGES;
    i = j;
  }
  for (size_t i = 0; i < n; i++)
    if (e[i].running && !(e[i].page == first_page && e[i].nth == 0))
      memset(texts[e[i].page] + e[i].off, ' ', e[i].len);
  free(e);
  free(by);
  return DQ_OK;
}

/* Headings from fonts (see the top). */
#define HEAD_SIZE_RATIO 1.15
#define HEAD_MAX_CHARS 100
#define HEAD_MAX_LINES 3
#define HEAD_MIN_SHARE 0.8 /* of a line's characters in its font */
#define HEAD_MAX_LEVEL 6

/* A line of a page and the font most of its characters have. */
typedef struct pdf_line {
  int page;
  size_t off, len; /* in the page's text */
  size_t n_chars;
  int font;  /* size_key * 2 + bold, -1 when mixed or empty */
  int level; /* of the heading it opens, 0 none */
  int n_head_lines; /* the heading's lines, this one and those after it */
} pdf_line;

typedef struct pdf_lines {
  pdf_line *v;
  size_t n, cap;
} pdf_lines;

static int bold_font(const char *name) {
  if (!name)
    return 0;
  static const char *const marks[] = {"bold", "black", "heavy", "demi"};
  for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
    if (strcasestr(name, marks[i]))
      return 1;
  /* TeX's Computer Modern bold fonts (CMBX12), "Arial-Bd" */
  return !strncmp(name, "CMBX", 4) || strstr(name, "-Bd") != NULL;
}

/* A font's key: its size in half points, twice, plus 1 when bold. */
static int font_key(double size, int bold) {
  if (!(size > 0) || size > 1000)
    return -1;
  return (int)(size * 2 + 0.5) * 2 + (bold ? 1 : 0);
}

/* Lines in page order, and in text order within a page. */
static int line_cmp(const void *a, const void *b) {
  const pdf_line *x = a, *y = b;
  if (x->page != y->page)
    return x->page < y->page ? -1 : 1;
  return (x->off > y->off) - (x->off < y->off);
}

/* Appends page p's lines (text[0..len)) with their fonts from the
 * attribute spans attrs (poppler's, in text order, character indices).
 * Returns 0, or -1 when out of memory. */
static int page_lines(const char *text, size_t len, int p, GList *attrs,
                      pdf_lines *out) {
  GList *span = attrs;
  long ci = 0; /* character index of the line's start */
  for (size_t s = 0; s < len;) {
    const char *nl = memchr(text + s, '\n', len - s);
    size_t end = nl ? (size_t)(nl - text) : len;
    long n_chars = 0;
    for (size_t k = s; k < end; k++)
      n_chars += ((unsigned char)text[k] & 0xC0) != 0x80;
    if (out->n == out->cap) {
      size_t cap = out->cap ? 2 * out->cap : 256;
      pdf_line *v = realloc(out->v, cap * sizeof *v);
      if (!v)
        return -1;
      out->v = v;
      out->cap = cap;
    }
    pdf_line *l = &out->v[out->n++];
    memset(l, 0, sizeof *l);
    l->page = p;
    l->off = s;
    l->len = end - s;
    l->n_chars = (size_t)n_chars;
    l->font = -1;
    /* the fonts of [ci, ci + n_chars): up to 4 kept, by characters */
    int keys[4], n_keys = 0;
    long counts[4] = {0}, total = 0;
    while (span && ((PopplerTextAttributes *)span->data)->end_index < ci)
      span = span->next;
    for (GList *g = span; g; g = g->next) {
      const PopplerTextAttributes *a = g->data;
      if (a->start_index >= ci + n_chars)
        break;
      long lo = a->start_index > ci ? a->start_index : ci;
      long hi =
          a->end_index + 1 < ci + n_chars ? a->end_index + 1 : ci + n_chars;
      if (hi <= lo)
        continue;
      int key = font_key(a->font_size, bold_font(a->font_name));
      int k = 0;
      while (k < n_keys && keys[k] != key)
        k++;
      if (k == n_keys && n_keys < 4)
        keys[n_keys++] = key;
      if (k < n_keys)
        counts[k] += hi - lo;
      total += hi - lo;
    }
    int best = -1;
    for (int k = 0; k < n_keys; k++)
      if (best < 0 || counts[k] > counts[best])
        best = k;
    if (best >= 0 && keys[best] >= 0 && counts[best] >= HEAD_MIN_SHARE * total)
      l->font = keys[best];
    ci += n_chars + 1; /* the newline is a character too */
    s = end + 1;
  }
  return 0;
}

/* Whether line l of texts could be a heading line on its own words: not
 * blank, has a letter, not too long, not a contents entry, not ending a
 * clause (',' ';'). */
static int head_words(const char *text, const pdf_line *l) {
  if (l->n_chars > HEAD_MAX_CHARS)
    return 0;
  const char *s = text + l->off;
  size_t n = l->len;
  while (n && is_blank(s[n - 1]))
    n--;
  if (!n || s[n - 1] == ',' || s[n - 1] == ';')
    return 0;
  int letter = 0;
  for (size_t i = 0; i < n; i++)
    letter |= ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') ||
              (unsigned char)s[i] >= 0x80;
  return letter && !dq_dot_leader(s, n);
}

/* Whether line l of texts has words: not blank and not a bare page number
 * ("12", "iv"). */
static int line_words(const char *text, const pdf_line *l) {
  const char *s = text + l->off;
  size_t n = l->len, a = 0;
  while (n && is_blank(s[n - 1]))
    n--;
  while (a < n && is_blank(s[a]))
    a++;
  if (a == n)
    return 0;
  if (n - a > 8)
    return 1;
  for (size_t i = a; i < n; i++)
    if (!(s[i] >= '0' && s[i] <= '9') &&
        (!s[i] || !strchr("ivxlcdmIVXLCDM", s[i])))
      return 1;
  return 0;
}

/* Marks the pages of lines that are contents pages (at least a quarter of
 * their lines with text have a dot leader): their bold and large lines are
 * entries ("Appendix A" over "Copying Information . . . 24"), not
 * headings, but the first (the page's title, "Function and Data Index").
 * toc[p] for page p. */
static void contents_pages(char **texts, const pdf_lines *ls, int n_pages,
                           unsigned char *toc) {
  for (size_t i = 0; i < ls->n;) {
    int p = ls->v[i].page, lines = 0, leaders = 0;
    for (; i < ls->n && ls->v[i].page == p; i++) {
      const pdf_line *l = &ls->v[i];
      if (!l->n_chars)
        continue;
      lines++;
      leaders += dq_dot_leader(texts[p] + l->off, l->len);
    }
    if (p >= 0 && p < n_pages)
      toc[p] = lines && 4 * leaders >= lines;
  }
}

/* Sets the heading levels of lines (see the top). */
static void font_headings(char **texts, pdf_lines *ls, int n_pages) {
  /* the body's font: the key with the most characters */
  int body = -1;
  {
    enum { N_KEYS = 4096 }; /* sizes to 1000 pt in half points, twice */
    long *count = calloc(N_KEYS, sizeof *count);
    if (!count)
      return;
    for (size_t i = 0; i < ls->n; i++)
      if (ls->v[i].font >= 0 && ls->v[i].font < N_KEYS)
        count[ls->v[i].font] += (long)ls->v[i].n_chars;
    for (int k = 0; k < N_KEYS; k++)
      if (count[k] && (body < 0 || count[k] > count[body]))
        body = k;
    free(count);
  }
  if (body < 0)
    return;
  unsigned char *toc = calloc((size_t)n_pages, 1);
  if (!toc)
    return;
  contents_pages(texts, ls, n_pages, toc);
  double body_size = (body / 2) / 2.0;
  int body_bold = body & 1;
  int styles[HEAD_MAX_LEVEL * 4], n_styles = 0;
  int words_page = -1; /* the page of the last line with words */
  for (size_t i = 0; i < ls->n;) {
    pdf_line *l = &ls->v[i];
    int f = l->font;
    double size = (f / 2) / 2.0;
    int first = words_page != l->page; /* the page's first line of words */
    if (line_words(texts[l->page], l))
      words_page = l->page;
    int head = f >= 0 && f != body && (!toc[l->page] || first) &&
               head_words(texts[l->page], l) &&
               (size >= body_size * HEAD_SIZE_RATIO ||
                ((f & 1) && !body_bold && size >= body_size * 0.95));
    if (!head) {
      i++;
      continue;
    }
    size_t j = i + 1; /* the run of lines in this font on this page */
    while (j < ls->n && ls->v[j].page == l->page && ls->v[j].font == f &&
           head_words(texts[l->page], &ls->v[j]))
      j++;
    if (j - i <= HEAD_MAX_LINES) {
      l->level = 1; /* a placeholder: levels below */
      l->n_head_lines = (int)(j - i);
      int k = 0;
      while (k < n_styles && styles[k] != f)
        k++;
      if (k == n_styles && n_styles < (int)(sizeof styles / sizeof *styles))
        styles[n_styles++] = f;
    }
    i = j;
  }
  /* levels: larger first, bold before regular at one size */
  for (size_t i = 0; i < ls->n; i++) {
    pdf_line *l = &ls->v[i];
    if (l->level <= 0)
      continue;
    int above = 0;
    for (int k = 0; k < n_styles; k++)
      above += styles[k] > l->font;
    l->level = above + 1 > HEAD_MAX_LEVEL ? HEAD_MAX_LEVEL : above + 1;
  }
  free(toc);
}

/* The title of the heading that line l opens, its lines joined by a
 * space, into *buf (grown; *cap its size). Returns 0 when out of memory
 * (no title then). */
static int head_title(char **texts, const pdf_line *l, char **buf,
                      size_t *cap) {
  size_t need = 1;
  for (int k = 0; k < l->n_head_lines; k++)
    need += l[k].len + 1;
  if (need > *cap) {
    char *p = realloc(*buf, need);
    if (!p)
      return 0;
    *buf = p;
    *cap = need;
  }
  size_t n = 0;
  for (int k = 0; k < l->n_head_lines; k++) {
    if (n)
      (*buf)[n++] = ' ';
    memcpy(*buf + n, texts[l[k].page] + l[k].off, l[k].len);
    n += l[k].len;
  }
  (*buf)[n] = '\0';
  return 1;
}

/* OCR (see the top): a page whose text layer has fewer than OCR_MIN_CHARS
 * non-blank characters, and whose images cover OCR_MIN_IMAGE_SHARE of it,
 * is rendered at OCR_PPI (less for a page over OCR_MAX_PIXELS: a poster)
 * and read by Tesseract (ocr.c), n_threads pages at a time. */
#define OCR_MIN_CHARS 24
#define OCR_MIN_IMAGE_SHARE 0.3
#define OCR_PPI 300.0
#define OCR_MAX_PIXELS 36e6

static size_t nonblank_chars(const char *t, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k +=
        !is_blank(t[i]) && t[i] != '\n' && ((unsigned char)t[i] & 0xC0) != 0x80;
  return k;
}

static int wants_ocr(PopplerPage *page, const char *text, size_t len) {
  if (nonblank_chars(text, len) >= OCR_MIN_CHARS)
    return 0;
  double pw = 0, ph = 0;
  pdf.page_get_size(page, &pw, &ph);
  if (!(pw > 0 && ph > 0))
    return 0;
  GList *m = pdf.page_get_image_mapping(page);
  double area = 0;
  for (GList *g = m; g; g = g->next) {
    const PopplerImageMapping *im = g->data;
    area += fabs((im->area.x2 - im->area.x1) * (im->area.y2 - im->area.y1));
  }
  pdf.page_free_image_mapping(m);
  return area >= OCR_MIN_IMAGE_SHARE * pw * ph;
}

/* Renders page into j->gray on a white ground. */
static dq_status ocr_render(PopplerPage *page, dq_ocr_job *j) {
  double pw = 0, ph = 0;
  pdf.page_get_size(page, &pw, &ph);
  double ppi = OCR_PPI;
  double px = (pw / 72 * ppi) * (ph / 72 * ppi);
  if (px > OCR_MAX_PIXELS)
    ppi *= sqrt(OCR_MAX_PIXELS / px);
  double wd = pw / 72 * ppi, hd = ph / 72 * ppi;
  if (!(wd >= 1 && hd >= 1 && wd < 1e5 && hd < 1e5))
    return DQ_ERR_FORMAT; /* a page of no size, or a sliver */
  int w = (int)(wd + 0.5), h = (int)(hd + 0.5);
  cairo_surface_t *sf = pdf.surface_create(CAIRO_FORMAT_RGB24, w, h);
  if (pdf.surface_status(sf) != CAIRO_STATUS_SUCCESS) {
    pdf.surface_destroy(sf);
    return DQ_ERR_NOMEM;
  }
  cairo_t *cr = pdf.cairo_create(sf);
  pdf.cairo_set_source_rgb(cr, 1, 1, 1);
  pdf.cairo_paint(cr);
  pdf.cairo_scale(cr, ppi / 72, ppi / 72);
  pdf.page_render(page, cr);
  pdf.cairo_destroy(cr);
  pdf.surface_flush(sf);
  const unsigned char *data = pdf.surface_data(sf);
  int stride = pdf.surface_stride(sf);
  j->gray = data ? malloc((size_t)w * (size_t)h) : NULL;
  if (!j->gray) {
    pdf.surface_destroy(sf);
    return DQ_ERR_NOMEM;
  }
  for (int y = 0; y < h; y++) {
    const uint32_t *row = (const uint32_t *)(data + (size_t)y * (size_t)stride);
    uint8_t *out = j->gray + (size_t)y * (size_t)w;
    for (int x = 0; x < w; x++) { /* RGB24: 0x00RRGGBB, native order */
      uint32_t v = row[x];
      out[x] = (uint8_t)((((v >> 16) & 255) * 77 + ((v >> 8) & 255) * 150 +
                          (v & 255) * 29) >>
                         8);
    }
  }
  pdf.surface_destroy(sf);
  j->w = w;
  j->h = h;
  j->ppi = (int)(ppi + 0.5);
  return DQ_OK;
}

/* Reads the pages want[] marks through OCR, texts[i] replaced by what it
 * reads. Pages it cannot read keep their text and are counted in
 * info->n_pages_no_text, with the reason once in info->ocr_why. Returns
 * DQ_ERR_NOMEM, DQ_ERR_INTERRUPTED (the progress callback asked), else
 * DQ_OK. */
static dq_status ocr_pages(const dq_reader_ctx *c, PopplerDocument *doc,
                           const unsigned char *want, int count, char **texts,
                           size_t *lens) {
  dq_read_info *info = c->info;
  int n_threads = dq_ocr_threads(c->o);
  const char *lang = dq_ocr_lang(c->o);
  int n_want = 0;
  for (int i = 0; i < count; i++)
    n_want += want[i];
  dq_ocr_job *jobs = calloc((size_t)n_threads, sizeof *jobs);
  if (!jobs)
    return DQ_ERR_NOMEM;
  dq_status st = DQ_OK;
  int failed = 0; /* the library or language is missing: read no more */
  int done = 0;
  if (c->o->progress && /* its start: the bar's time counts from here */
      c->o->progress(c->o->progress_user, "ocr", 0, (uint64_t)n_want, "pages"))
    st = DQ_ERR_INTERRUPTED;
  for (int i = 0; i < count && st == DQ_OK;) {
    int n_b = 0;
    /* render up to n_threads pages here: poppler's document is not for
     * several threads at once */
    for (; i < count && n_b < n_threads; i++) {
      if (!want[i])
        continue;
      if (failed) {
        info->n_pages_no_text++;
        continue;
      }
      dq_ocr_job *j = &jobs[n_b];
      memset(j, 0, sizeof *j);
      j->page = i;
      PopplerPage *page = pdf.document_get_page(doc, i);
      dq_status rs = page ? ocr_render(page, j) : DQ_ERR_FORMAT;
      if (page)
        pdf.object_unref(page);
      if (rs == DQ_ERR_NOMEM) {
        st = rs;
        break;
      }
      if (rs != DQ_OK) {
        info->n_pages_no_text++;
        continue;
      }
      n_b++;
    }
    dq_ocr_jobs(jobs, n_b, lang);
    for (int k = 0; k < n_b; k++) {
      dq_ocr_job *j = &jobs[k]; /* its gray freed by dq_ocr_jobs */
      if (j->st == DQ_OK) {
        char *t = pdf.strdup(j->text);
        if (!t) {
          st = DQ_ERR_NOMEM;
        } else {
          pdf.free(texts[j->page]);
          texts[j->page] = t;
          lens[j->page] = strlen(t);
          info->n_ocr_pages++;
        }
      } else {
        if (j->st == DQ_ERR_NOMEM)
          st = DQ_ERR_NOMEM;
        else if (j->st == DQ_ERR_UNSUPPORTED || j->st == DQ_ERR_ARG)
          failed = 1;
        if (!info->ocr_why[0])
          snprintf(info->ocr_why, sizeof info->ocr_why, "%s", j->why);
        info->n_pages_no_text++;
      }
      free(j->text);
    }
    done += n_b;
    if (st == DQ_OK && c->o->progress &&
        c->o->progress(c->o->progress_user, "ocr", (uint64_t)done,
                       (uint64_t)n_want, "pages"))
      st = DQ_ERR_INTERRUPTED;
  }
  free(jobs);
  return st;
}

const char *dq_ingest_poppler_version(void) {
  return pdf_load() ? "not found" : pdf.get_version();
}

dq_status dq_read_pdf(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_pages) {
  *n_pages = 0;
  const char *why = pdf_load();
  if (why)
    return dq_error_set(c->err, DQ_ERR_UNSUPPORTED, "%s: %s", c->name, why);
  GError *gerr = NULL;
  char **texts = NULL; /* each page's, poppler's (g_free) */
  size_t *lens = NULL;
  pdf_lines lines = {0}; /* every line of the pages with text, in order */
  char *title = NULL;    /* a heading's, joined over its lines */
  size_t title_cap = 0;
  unsigned char *want = NULL; /* pages to read by OCR */
  int count = 0;
  GBytes *bytes = pdf.bytes_new_static(data, n);
  PopplerDocument *doc = pdf.document_new_from_bytes(bytes, NULL, &gerr);
  dq_status st = DQ_OK;
  if (!doc) {
    int encrypted = gerr && gerr->domain == pdf.error_quark() &&
                    gerr->code == POPPLER_ERROR_ENCRYPTED;
    st = dq_error_set(c->err, encrypted ? DQ_ERR_UNSUPPORTED : DQ_ERR_FORMAT,
                      encrypted ? "%s: encrypted PDF (a password is needed)%s%s"
                                : "%s: cannot open PDF%s%s",
                      c->name, gerr ? ": " : "", gerr ? gerr->message : "");
    goto fail;
  }
  count = pdf.document_get_n_pages(doc);
  if (count <= 0)
    goto fail;
  /* all pages first: running headers are known only across pages */
  texts = calloc((size_t)count, sizeof *texts);
  lens = calloc((size_t)count, sizeof *lens);
  if (!texts || !lens) {
    st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
    goto fail;
  }
  want = calloc((size_t)count, 1);
  if (!want) {
    st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
    goto fail;
  }
  int n_want = 0;
  for (int i = 0; i < count; i++) {
    PopplerPage *page = pdf.document_get_page(doc, i);
    if (!page)
      continue;
    texts[i] = pdf.page_get_text(page);
    lens[i] = texts[i] ? strlen(texts[i]) : 0;
    if (texts[i] && pdf.can_render && wants_ocr(page, texts[i], lens[i])) {
      want[i] = 1;
      n_want++;
    } else if (texts[i] && pdf.page_get_text_attributes) {
      /* on this page object, which has laid its text out already: a new
       * one would lay it out again */
      GList *attrs = pdf.page_get_text_attributes(page);
      int rc = page_lines(texts[i], lens[i], i, attrs, &lines);
      pdf.page_free_text_attributes(attrs);
      if (rc) {
        pdf.object_unref(page);
        st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
        goto fail;
      }
    }
    pdf.object_unref(page);
  }
  if (n_want && c->o->no_ocr) {
    c->info->n_pages_no_text += (uint32_t)n_want;
    snprintf(c->info->ocr_why, sizeof c->info->ocr_why, "OCR is off");
  } else if (n_want &&
             (st = ocr_pages(c, doc, want, count, texts, lens)) != DQ_OK) {
    st = st == DQ_ERR_INTERRUPTED
             ? dq_error_set(c->err, st,
                            "%s: interrupted while OCR read its "
                            "scanned pages",
                            c->name)
             : dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
    goto fail;
  }
  /* the lines of the pages OCR read (no fonts), then every line in page
   * order, as the pages are emitted */
  for (int i = 0; n_want && i < count && pdf.page_get_text_attributes; i++)
    if (want[i] && texts[i] &&
        page_lines(texts[i], lens[i], i, NULL, &lines) != 0) {
      st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
      goto fail;
    }
  if (n_want && lines.n)
    qsort(lines.v, lines.n, sizeof *lines.v, line_cmp);
  if (blank_running(texts, lens, count) != DQ_OK) {
    st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
    goto fail;
  }
  font_headings(texts, &lines, count);
  size_t li = 0; /* lines.v[li]: the next line emitted (when known) */
  for (int i = 0; i < count; i++) {
    const char *text = texts[i];
    if (!text)
      continue;
    uint32_t line = 1;
    size_t len = lens[i];
    for (size_t s = 0; s < len;) {
      const char *nl = memchr(text + s, '\n', len - s);
      size_t e = nl ? (size_t)(nl - text) : len;
      size_t a = s;
      while (a < e && is_blank(text[a]))
        a++;
      dq_tbuf_pos(b, line, (uint32_t)i + 1);
      const pdf_line *pl = li < lines.n ? &lines.v[li++] : NULL;
      if (pl && pl->level > 0 && head_title(texts, pl, &title, &title_cap))
        dq_tbuf_heading(b, b->n, pl->level, title, strlen(title));
      if (a < e) /* a blank or blanked line is empty */
        dq_tbuf_put_utf8(b, text + s, e - s);
      dq_tbuf_putc(b, '\n');
      line++;
      s = e + 1;
    }
  }
  *n_pages = count > 0 ? (uint32_t)count : 0;
fail:
  free(lines.v);
  free(title);
  free(want);
  for (int i = 0; texts && i < count; i++)
    pdf.free(texts[i]);
  free(texts);
  free(lens);
  if (doc)
    pdf.object_unref(doc);
  pdf.bytes_unref(bytes);
  if (gerr)
    pdf.error_free(gerr);
  return st;
}
