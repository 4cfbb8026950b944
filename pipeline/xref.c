/*
 * xref.c - `docqa xref`: definitions, references and callers of a symbol
 * (code identifiers, contract defined terms and section numbers) from the
 * symbols/refs tables, plus "did you mean" names and the source lines that
 * give each hit its context; and --explain, which has the decoder model
 * summarise how the symbol is used from numbered snippets around the hits.
 * Also whether a file changed since it was ingested (pl_doc_changed, which
 * search's results use too), since the lines read here may have moved.
 */
#include "pipeline_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

void dq_xref_result_clear(dq_xref_result *r) {
  if (!r)
    return;
  dq_xref_hits_free(r->defs, r->n_defs);
  dq_xref_hits_free(r->refs, r->n_refs);
  dq_strings_free(r->suggest, r->n_suggest);
  dq_strings_free(r->stale, r->n_stale);
  free(r->owner);
  free(r->member);
  free(r->via);
  memset(r, 0, sizeof *r);
}

int pl_doc_changed(dq_index *idx, const char *root, const char *path) {
  char full[PATH_MAX];
  dq_doc_stat ds;
  struct stat st;
  if (snprintf(full, sizeof full, "%s/%s", root, path) >= (int)sizeof full ||
      dq_index_doc_lookup(idx, root, path, &ds) != DQ_OK)
    return 0; /* cannot tell */
  if (stat(full, &st) != 0)
    return 1;
  int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  if ((int64_t)st.st_size != ds.bytes)
    return 1;
  if (mtime == ds.mtime || !ds.sha256[0])
    return 0;
  uint8_t sum[32];
  char hex[65];
  dq_error e;
  dq_error_clear(&e);
  if (dq_sha256_file(full, sum, &e) != DQ_OK)
    return 1;
  dq_sha256_hex(sum, hex);
  return strcmp(hex, ds.sha256) != 0;
}

static int by_doc(const void *a, const void *b) {
  const dq_xref_hit *x = *(dq_xref_hit *const *)a,
                    *y = *(dq_xref_hit *const *)b;
  return x->doc_id < y->doc_id ? -1 : x->doc_id > y->doc_id;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Marks the hits whose file changed since it was ingested, and lists
 * those files in res->stale. */
static dq_status mark_stale(dq_index *idx, dq_xref_result *res) {
  size_t n = res->n_defs + res->n_refs;
  if (!n)
    return DQ_OK;
  dq_xref_hit **v = malloc(n * sizeof *v);
  if (!v)
    return DQ_ERR_NOMEM;
  for (size_t i = 0; i < res->n_defs; i++)
    v[i] = &res->defs[i];
  for (size_t i = 0; i < res->n_refs; i++)
    v[res->n_defs + i] = &res->refs[i];
  qsort(v, n, sizeof *v, by_doc);
  dq_status s = DQ_OK;
  for (size_t i = 0, j; i < n && !s; i = j) {
    for (j = i + 1; j < n && v[j]->doc_id == v[i]->doc_id;)
      j++;
    if (!pl_doc_changed(idx, v[i]->root, v[i]->path))
      continue;
    for (size_t k = i; k < j; k++)
      v[k]->stale = 1;
    char **p = realloc(res->stale, (res->n_stale + 1) * sizeof *p);
    if (!p ||
        !(p[res->n_stale] = strdup(v[i]->shown ? v[i]->shown : v[i]->path))) {
      if (p)
        res->stale = p;
      s = DQ_ERR_NOMEM;
      break;
    }
    res->stale = p;
    res->n_stale++;
  }
  free(v);
  if (res->n_stale > 1)
    qsort(res->stale, res->n_stale, sizeof *res->stale, by_name);
  return s;
}

dq_status dq_xref_run(const char *index_dir, const char *symbol,
                      const char *kind, const dq_logger *log,
                      dq_xref_result *res, dq_error *err) {
  memset(res, 0, sizeof *res);
  if (!symbol || !symbol[0])
    return dq_error_set(err, DQ_ERR_ARG, "the symbol is empty");
  if (kind && strcmp(kind, "def") && strcmp(kind, "ref") &&
      strcmp(kind, "call"))
    return dq_error_set(err, DQ_ERR_ARG,
                        "--kind must be def, ref or call, not '%s'", kind);
  dq_index *idx = NULL;
  dq_status s = pl_index_open(index_dir, 1, log, &idx, err);
  if (s != DQ_OK)
    return s;
  if (!kind || !strcmp(kind, "def")) {
    s = dq_index_symbols_find(idx, symbol, NULL, &res->defs, &res->n_defs);
    if (s != DQ_OK)
      goto fail;
  }
  if (!kind || strcmp(kind, "def")) {
    const char *rk = kind && !strcmp(kind, "call") ? "call" : NULL;
    s = dq_index_refs_find(idx, symbol, rk, &res->refs, &res->n_refs);
    if (s != DQ_OK)
      goto fail;
  }
  res->n_refs_known = res->n_refs;
  if (res->n_defs == 0 && res->n_refs == 0 && pl_xref_is_qualified(symbol)) {
    dq_xref_result_clear(res);
    s = pl_xref_qualified(idx, symbol, kind, res);
    if (s == DQ_ERR_NOMEM) {
      dq_error_set(err, s, "out of memory looking up %s", symbol);
      goto fail_set;
    }
    if (s != DQ_OK)
      goto fail;
  }
  if (res->n_defs == 0 && res->n_refs == 0 && res->n_suggest == 0) {
    s = dq_index_symbols_similar(idx, symbol, 8, &res->suggest,
                                 &res->n_suggest);
    if (s != DQ_OK)
      goto fail;
  }
  if ((s = mark_stale(idx, res)) != DQ_OK) {
    dq_error_set(err, s, "out of memory looking up %s", symbol);
    goto fail_set;
  }
  dq_index_close(idx);
  return DQ_OK;
fail:
  dq_error_set(err, s, "%s", dq_index_errmsg(idx));
fail_set:
  dq_index_close(idx);
  dq_xref_result_clear(res);
  return s;
}

/* The last file read through its ingest reader, so hits in one file cost
 * one read (xref --explain's context, the line reader's PDF and DOCX
 * lines). */
typedef struct text_cache {
  char file[PATH_MAX];
  dq_text *t; /* NULL when the file could not be read */
} text_cache;

/* The text of file `full` (shown as `path` in the warning logged when it
 * cannot be read; log NULL: silent), or NULL. */
static const dq_text *cache_read(text_cache *c, const char *full,
                                 const char *path, const dq_logger *log) {
  if (c->file[0] && !strcmp(c->file, full))
    return c->t; /* also a failed read: not tried again per hit */
  dq_text_free(c->t);
  c->t = NULL;
  snprintf(c->file, sizeof c->file, "%s", full);
  dq_read_opts ro = {0};
  ro.log = log;
  dq_error e;
  dq_error_clear(&e);
  if (dq_read(full, DQ_DOC_UNKNOWN, &ro, &c->t, NULL, &e) != DQ_OK)
    dq_log(log, DQ_LOG_WARN, "xref --explain: no context for %s: %s", path,
           dq_error_msg(&e));
  return c->t;
}

static const dq_text *cache_get(text_cache *c, const dq_xref_hit *h,
                                const dq_logger *log) {
  char full[PATH_MAX];
  if (snprintf(full, sizeof full, "%s/%s", h->root, h->path) >=
      (int)sizeof full)
    return NULL;
  return cache_read(c, full, h->path, log);
}

/* The text from marks[i] to the next mark. */
static const char *segment(const dq_text *t, size_t i, size_t *n) {
  size_t end = i + 1 < t->n_marks ? t->marks[i + 1].offset : t->n_bytes;
  *n = end - t->marks[i].offset;
  return t->text + t->marks[i].offset;
}

struct dq_line_reader {
  FILE *f;
  char file[PATH_MAX];
  int line;  /* lines consumed from f so far */
  char *buf; /* the last line read */
  size_t cap;
  text_cache pdf; /* a PDF's or DOCX's text, as its reader gives it */
};

dq_line_reader *dq_line_reader_new(void) {
  return calloc(1, sizeof(dq_line_reader));
}

void dq_line_reader_free(dq_line_reader *lr) {
  if (!lr)
    return;
  if (lr->f)
    fclose(lr->f);
  free(lr->buf);
  dq_text_free(lr->pdf.t);
  free(lr);
}

/* Line `line` of `page` of a binary format's text (as xref --explain's
 * context reads it): the first line of the segment its mark opens. */
static const char *extracted_line(dq_line_reader *lr, const char *full,
                                  int page, int line) {
  const dq_text *t = cache_read(&lr->pdf, full, full, NULL);
  for (size_t i = 0; t && i < t->n_marks; i++) {
    const dq_srcmark *mk = &t->marks[i];
    if (mk->line != (uint32_t)line || (page > 0 && mk->page != (uint32_t)page))
      continue;
    size_t n;
    const char *s = segment(t, i, &n);
    const char *nl = memchr(s, '\n', n);
    if (nl)
      n = (size_t)(nl - s);
    while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' '))
      n--;
    if (n + 1 > lr->cap) {
      char *b = realloc(lr->buf, n + 1);
      if (!b)
        return "";
      lr->buf = b;
      lr->cap = n + 1;
    }
    memcpy(lr->buf, s, n);
    lr->buf[n] = '\0';
    return lr->buf;
  }
  return "";
}

int pl_has_text_lines(const char *path) {
  /* by its name, as ingest tells kinds apart: the extracted lines of a
   * container (PDF, Office files, e-mail, images) are not the file's */
  switch (dq_detect_kind(path, NULL, 0, NULL)) {
  case DQ_DOC_UNKNOWN:
  case DQ_DOC_TEXT:
  case DQ_DOC_MARKDOWN:
  case DQ_DOC_HTML:
  case DQ_DOC_XML:
  case DQ_DOC_CODE:
    return 1;
  default:
    return 0;
  }
}

const char *dq_line_reader_get(dq_line_reader *lr, const char *root,
                               const char *path, int page, int line) {
  char full[PATH_MAX];
  if (line < 1 ||
      snprintf(full, sizeof full, "%s/%s", root, path) >= (int)sizeof full)
    return "";
  if (!pl_has_text_lines(path))
    return extracted_line(lr, full, page, line);
  if (!lr->f || strcmp(full, lr->file) != 0 || line <= lr->line) {
    if (lr->f)
      fclose(lr->f);
    lr->f = fopen(full, "rb");
    lr->line = 0;
    snprintf(lr->file, sizeof lr->file, "%s", full);
    if (!lr->f)
      return "";
  }
  ssize_t n = 0;
  while (lr->line < line) {
    n = getline(&lr->buf, &lr->cap, lr->f);
    if (n < 0) {
      fclose(lr->f);
      lr->f = NULL;
      return "";
    }
    lr->line++;
  }
  while (n > 0 && (lr->buf[n - 1] == '\n' || lr->buf[n - 1] == '\r'))
    lr->buf[--n] = '\0';
  return lr->buf;
}

/* ---- --explain ------------------------------------------------------------
 *
 * Each definition and each chosen reference becomes a numbered snippet: its
 * path and context lines, labelled with what the hit is ("call in main").
 * The lines come from the files as the ingest readers see them (so PDF and
 * DOCX work, and HTML shows text, not markup). The prompt is xref's own:
 * with ask's layout (a "Passages:" block of range-labelled chunks) the
 * small default models copied the code back instead of describing it. The
 * context budget and the [n] citation marking are ask's (cite.c).
 */

#define EXPLAIN_MAX_DEFS 4       /* definitions shown; the rest are repeats */
#define EXPLAIN_SITES 8          /* default max_sites */
#define EXPLAIN_TOKENS 192       /* default max_tokens */
#define DEF_LINES_BEFORE 1       /* a definition: its line and what follows */
#define DEF_LINES_AFTER 6
#define REF_LINES_AROUND 2       /* a use: the lines either side */
/* Tokens held back for the chat template around the user message (as
 * ask's PROMPT_OVERHEAD_TOKENS). There is no system prompt: with one, the
 * 135M default model degenerated into lists of numbers on contract terms. */
#define EXPLAIN_OVERHEAD_TOKENS 160
#define EXPLAIN_REPEAT_PENALTY 1.15f

void dq_xref_explanation_clear(dq_xref_explanation *ex) {
  if (!ex)
    return;
  free(ex->text);
  free(ex->snippets);
  memset(ex, 0, sizeof *ex);
}

/* Case-insensitive search for w in s[0..n). */
static const char *find_ci(const char *s, size_t n, const char *w) {
  size_t wn = strlen(w);
  for (size_t i = 0; wn && i + wn <= n; i++)
    if (strncasecmp(s + i, w, wn) == 0)
      return s + i;
  return NULL;
}

/* Indexes into refs[] (sorted by path) of up to max sites, spread over
 * files: the first use in each file, then the second, ...; returned in path
 * and line order. */
static size_t pick_sites(const dq_xref_hit *refs, size_t n, size_t max,
                         size_t *out) {
  size_t *rank = malloc((n ? n : 1) * sizeof *rank), n_out = 0;
  if (!rank)
    return 0;
  for (size_t i = 0; i < n; i++)
    rank[i] = i && !strcmp(refs[i].path, refs[i - 1].path) &&
                      !strcmp(refs[i].root, refs[i - 1].root)
                  ? rank[i - 1] + 1
                  : 0;
  for (size_t r = 0, any = 1; any && n_out < max; r++) {
    any = 0;
    for (size_t i = 0; i < n && n_out < max; i++)
      if (rank[i] == r) {
        any = 1;
        out[n_out++] = i;
      }
  }
  free(rank);
  /* Insertion sort: n_out is small. */
  for (size_t i = 1; i < n_out; i++)
    for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
      size_t t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return n_out;
}

/* PDF lines are numbered within a page, and a hit stored before pages were
 * recorded carries none: the page whose line `line` holds the symbol, else
 * the only page that has such a line; 0 when unpaged or ambiguous (-1: no
 * such line anywhere). */
static long pick_page(const dq_text *t, uint32_t line, const char *symbol) {
  if (t->n_pages == 0)
    return 0;
  long only = -1;
  for (size_t i = 0; i < t->n_marks; i++) {
    if (t->marks[i].line != line)
      continue;
    size_t n;
    const char *s = segment(t, i, &n);
    if (find_ci(s, n, symbol))
      return t->marks[i].page;
    only = only == -1 || only == (long)t->marks[i].page ? (long)t->marks[i].page
                                                        : 0;
  }
  return only;
}

void dq_line_window(const char *s, size_t n, size_t pos, size_t max,
                    size_t *start, size_t *end) {
  *start = 0;
  *end = n;
  if (n <= max)
    return;
  size_t a = pos > max / 3 ? pos - max / 3 : 0;
  if (a + max > n)
    a = n - max;
  while (a < n && ((unsigned char)s[a] & 0xC0) == 0x80)
    a++;
  size_t e = a + max < n ? a + max : n;
  while (e < n && e > a && ((unsigned char)s[e] & 0xC0) == 0x80)
    e--;
  *start = a;
  *end = e;
}

/* Appends one line (without its newline), cut to DQ_XREF_LINE_BYTES around
 * the symbol's first occurrence when longer, on UTF-8 boundaries. */
static void add_line(dq_strbuf *b, const char *s, size_t n,
                     const char *symbol) {
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
    n--;
  const char *at = n > DQ_XREF_LINE_BYTES ? find_ci(s, n, symbol) : NULL;
  size_t start, end;
  dq_line_window(s, n, at ? (size_t)(at - s) : 0, DQ_XREF_LINE_BYTES, &start,
                 &end);
  dq_strbuf_adds(b, start ? "..." : "");
  dq_strbuf_add(b, s + start, end - start);
  dq_strbuf_adds(b, end < n ? "...\n" : "\n");
}

/* One line of extracted text and the source line it came from. */
typedef struct piece {
  const char *s;
  size_t n; /* without the newline */
  uint32_t line;
} piece;

static int is_blank(const piece *p) {
  return strspn(p->s, " \t\r") >= p->n;
}

/* The paragraph around source line `line` of `page`, within lines
 * first..last, into b: from the blank line before it to the blank line
 * after it, so a definition does not run on into the next one. When the
 * line itself is blank (a PDF heading laid out apart), the whole window
 * without its blank ends. *lo and *hi get the source lines shown (0 when
 * none). */
static void add_context(dq_strbuf *b, const dq_text *t, uint32_t page,
                        uint32_t line, uint32_t first, uint32_t last,
                        const char *symbol, int32_t *lo, int32_t *hi) {
  piece *v = NULL;
  size_t n = 0, cap = 0;
  *lo = *hi = 0;
  for (size_t i = 0; i < t->n_marks; i++) {
    const dq_srcmark *mk = &t->marks[i];
    if (mk->page != page || mk->line < first || mk->line > last)
      continue;
    size_t len;
    const char *s = segment(t, i, &len);
    /* A segment normally is one line; if it holds several, they follow. */
    for (uint32_t k = 0; len > 0; k++) {
      const char *nl = memchr(s, '\n', len);
      size_t pn = nl ? (size_t)(nl - s) : len;
      if (n == cap) {
        size_t nc = cap ? 2 * cap : 16;
        piece *nv = realloc(v, nc * sizeof *v);
        if (!nv) {
          b->oom = 1;
          free(v);
          return;
        }
        v = nv;
        cap = nc;
      }
      v[n++] = (piece){s, pn, mk->line + k};
      s += pn + (nl != NULL);
      len -= pn + (nl != NULL);
    }
  }
  size_t at = n, from = 0, to = n; /* v[from..to) is shown */
  for (size_t i = 0; i < n && at == n; i++)
    if (v[i].line == line && !is_blank(&v[i]))
      at = i;
  if (at < n) {
    from = to = at;
    while (from > 0 && !is_blank(&v[from - 1]))
      from--;
    while (to < n && !is_blank(&v[to]))
      to++;
  }
  while (from < to && is_blank(&v[from]))
    from++;
  while (to > from && is_blank(&v[to - 1]))
    to--;
  for (size_t i = from; i < to; i++) {
    /* Runs of blank lines inside the window become one. */
    if (i > from && is_blank(&v[i]) && is_blank(&v[i - 1]))
      continue;
    add_line(b, v[i].s, v[i].n, symbol);
  }
  if (from < to) {
    *lo = (int32_t)v[from].line;
    *hi = (int32_t)v[to - 1].line;
  }
  free(v);
}

/* Fills hits[*n] for one xref hit (chunk_id = `which`, the snippet's index
 * in the caller's table); leaves *n unchanged when no context was found or
 * an earlier snippet already shows the hit's line. */
static dq_status add_snippet(dq_hit *hits, size_t *n, size_t which,
                             const dq_xref_hit *h, int is_def,
                             const char *symbol, text_cache *cache,
                             const dq_logger *log) {
  const dq_text *t = cache_get(cache, h, log);
  if (!t)
    return DQ_OK;
  long page = h->page > 0 && t->n_pages ? (long)h->page
                                        : pick_page(t, (uint32_t)h->line, symbol);
  if (page < 0 || (page == 0 && t->n_pages))
    return DQ_OK; /* gone from the file, or a PDF line we cannot place */
  for (size_t i = 0; i < *n; i++)
    if (hits[i].page_start == page && h->line >= hits[i].line_start &&
        h->line <= hits[i].line_end && !strcmp(hits[i].path, h->path) &&
        !strcmp(hits[i].root, h->root))
      return DQ_OK; /* already shown by an earlier snippet */
  uint32_t line = (uint32_t)h->line;
  uint32_t before = is_def ? DEF_LINES_BEFORE : REF_LINES_AROUND;
  uint32_t after = is_def ? DEF_LINES_AFTER : REF_LINES_AROUND;
  dq_strbuf text = {0}, label = {0};
  dq_hit *x = &hits[*n];
  add_context(&text, t, (uint32_t)page, line,
              line > before ? line - before : 1, line + after, symbol,
              &x->line_start, &x->line_end);
  const char *who = is_def ? h->scope : h->caller;
  dq_strbuf_printf(&label, "%s%s", is_def ? "definition, " : "",
                   h->kind ? h->kind : "");
  if (who && who[0])
    dq_strbuf_printf(&label, " in %s", who);
  if (text.oom || label.oom) {
    free(text.p);
    free(label.p);
    return DQ_ERR_NOMEM;
  }
  if (!text.p || !text.p[strspn(text.p, " \t\n")]) {
    free(text.p);
    free(label.p);
    return DQ_OK;
  }
  x->text = text.p;
  x->section = label.p;
  x->path = strdup(h->path);
  x->root = strdup(h->root);
  x->shown = strdup(h->shown ? h->shown : h->path);
  x->page_start = x->page_end = (int32_t)page;
  x->chunk_id = (int64_t)which;
  (*n)++;
  return x->path && x->root && x->shown ? DQ_OK : DQ_ERR_NOMEM;
}

/* "Snippet 2, path line 12 (call in main):" then the lines; PDFs name the
 * page too, since their lines count within it. No brackets: small models
 * echo labels, and an echoed "[2]" would count as citing snippet 2. */
static void snippet_text(dq_strbuf *b, size_t n, const dq_hit *h,
                         const dq_xref_hit *x) {
  dq_strbuf_printf(b, "Snippet %zu, %s", n, h->shown);
  if (h->page_start)
    dq_strbuf_printf(b, " page %d", h->page_start);
  dq_strbuf_printf(b, " line %d (%s):\n", x->line, h->section);
  dq_strbuf_adds(b, h->text); /* ends with a newline */
}

dq_status dq_xref_explain(const dq_xref_explain_opts *o, const char *symbol,
                          const dq_xref_result *xr, dq_xref_explanation *ex,
                          dq_error *err) {
  memset(ex, 0, sizeof *ex);
  double t_start = dq_now_ms();
  if (xr->n_defs + xr->n_refs == 0)
    return dq_error_set(err, DQ_ERR_NOTFOUND,
                        "nothing to explain: '%s' has no definitions or "
                        "references", symbol);
  size_t n_defs = xr->n_defs < EXPLAIN_MAX_DEFS ? xr->n_defs : EXPLAIN_MAX_DEFS;
  size_t max_sites = o->max_sites ? o->max_sites : EXPLAIN_SITES;
  /* sites of a qualified lookup: only those shown to be the owner's */
  size_t n_sites_all = xr->n_refs_known;
  size_t n_cand = n_defs + (n_sites_all < max_sites ? n_sites_all : max_sites);
  /* cand[i]: the xref hit behind candidate snippet i (defs, then sites);
   * hits[j] is the text of the j-th one that had context, and its chunk_id
   * is that i. */
  dq_xref_snippet *cand = calloc(n_cand, sizeof *cand);
  size_t *sites = calloc(n_cand, sizeof *sites);
  dq_hit *hits = calloc(n_cand, sizeof *hits);
  dq_citation *cites = calloc(n_cand, sizeof *cites);
  size_t n_hits = 0, n_used = 0;
  text_cache cache = {{0}, NULL};
  dq_model *m = NULL;
  dq_strbuf head = {0}, tail = {0}, b = {0};
  dq_generate_result gr = {0};
  dq_status s = DQ_OK;
  if (!cand || !sites || !hits || !cites) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n_defs; i++) {
    cand[i].hit = &xr->defs[i];
    cand[i].is_def = 1;
  }
  size_t n_sites = pick_sites(xr->refs, n_sites_all, n_cand - n_defs, sites);
  for (size_t i = 0; i < n_sites; i++)
    cand[n_defs + i].hit = &xr->refs[sites[i]];
  n_cand = n_defs + n_sites;
  /* a qualified lookup's lines hold the member's name, not "Owner.m" */
  const char *name = xr->member ? xr->member : symbol;
  for (size_t i = 0; i < n_cand && s == DQ_OK; i++)
    s = add_snippet(hits, &n_hits, i, cand[i].hit, cand[i].is_def, name,
                    &cache, o->log);
  if (s != DQ_OK) {
    dq_error_set(err, s, "out of memory");
    goto done;
  }
  ex->ms_context = dq_now_ms() - t_start;
  if (n_hits == 0) {
    s = dq_error_set(err, DQ_ERR_NOTFOUND,
                     "nothing to explain: the source lines of '%s' could not "
                     "be read (files moved or changed since ingest?)",
                     symbol);
    goto done;
  }

  double t0 = dq_now_ms();
  s = pl_decoder_open(o->model, "language", "xref --explain", o->backend,
                      o->n_threads, o->log, &m, err);
  if (s != DQ_OK)
    goto done;
  dq_model_info mi;
  dq_model_get_info(m, &mi);
  ex->backend = strcmp(mi.backend, "cuda") == 0 ? "cuda" : "cpu";
  ex->ms_load = dq_now_ms() - t0;

  /* The question first and again last (as ask places it); snippets in
   * between, definitions first, each kept only if it fits what is left of
   * the context after the answer and the chat template. "[n]", not "[1]":
   * an echoed instruction must not cite anything. */
  const char *what = symbol;
  char qual[512]; /* "net (the field of invoice_line)" for Owner.member */
  if (xr->member && xr->owner && xr->n_defs) {
    snprintf(qual, sizeof qual, "%s (the %s of %s)", xr->member,
             xr->defs[0].kind ? xr->defs[0].kind : "member", xr->owner);
    what = qual;
  }
  dq_strbuf_printf(&head, "How is %s used? Answer in two or three sentences, "
                   "citing the snippets as [n].\n\n", what);
  dq_strbuf_printf(&tail, "In two or three sentences: what is %s, and how "
                   "is it used? Cite the snippets as [n].", what);
  if (head.oom || tail.oom) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  int max_tokens = o->max_tokens > 0 ? o->max_tokens : EXPLAIN_TOKENS;
  int budget = mi.n_ctx - max_tokens - EXPLAIN_OVERHEAD_TOKENS -
               pl_count_tokens(m, head.p) - pl_count_tokens(m, tail.p);
  dq_strbuf_adds(&b, head.p);
  for (size_t i = 0; i < n_hits; i++) {
    dq_strbuf one = {0};
    snippet_text(&one, n_used + 1, &hits[i], cand[hits[i].chunk_id].hit);
    int nt = one.oom ? budget + 1 : pl_count_tokens(m, one.p);
    if (nt <= budget) {
      budget -= nt;
      dq_strbuf_add(&b, one.p, one.n);
      dq_strbuf_adds(&b, "\n");
      if (n_used != i) { /* keep hits[0..n_used) the snippets in the prompt */
        dq_hit t = hits[n_used];
        hits[n_used] = hits[i];
        hits[i] = t;
      }
      n_used++;
    }
    free(one.p);
  }
  dq_strbuf_adds(&b, tail.p);
  if (b.oom) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (n_used == 0) {
    s = dq_error_set(err, DQ_ERR_LIMIT,
                     "nothing to explain: no snippet of '%s' fits the "
                     "model's context of %d tokens", symbol, mi.n_ctx);
    goto done;
  }

  /* A model that starts a new "Snippet" line is copying the prompt back,
   * not explaining: stop there. */
  static const char *const stop[] = {"\nSnippet "};
  dq_generate_opts go;
  dq_generate_opts_init(&go);
  go.max_tokens = max_tokens;
  go.stop = stop;
  go.n_stop = 1;
  /* Greedy decoding of the 135M default model loops on a phrase of the
   * snippets ("Personal Data Breach\n\nPersonal Data Breach"); a mild
   * penalty on recent tokens keeps it writing. */
  go.sampling.repeat_penalty = EXPLAIN_REPEAT_PENALTY;
  go.on_text = o->on_text;
  go.user = o->user;
  s = dq_generate(m, b.p, &go, &gr);
  if (s != DQ_OK) {
    dq_error_set(err, s, "%s", dq_model_errmsg(m));
    goto done;
  }
  if (!gr.text && !(gr.text = strdup(""))) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  pl_cite_mark(gr.text, cites, n_used);
  pl_cite_infer(gr.text, tail.p, hits, cites, n_used);
  ex->snippets = calloc(n_used, sizeof *ex->snippets);
  if (!ex->snippets) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n_used; i++) {
    dq_xref_snippet *sn = &ex->snippets[i];
    *sn = cand[hits[i].chunk_id];
    sn->line_start = hits[i].line_start;
    sn->line_end = hits[i].line_end;
    sn->page = hits[i].page_start;
    sn->cited = cites[i].cited;
  }
  ex->n_snippets = n_used;
  ex->text = gr.text;
  gr.text = NULL;
  ex->n_prompt_tokens = gr.n_prompt_tokens;
  ex->n_answer_tokens = gr.n_tokens;
  ex->ms_prefill = gr.prefill_ms;
  ex->ms_generate = gr.decode_ms;
done:
  dq_generate_result_clear(&gr);
  free(head.p);
  free(tail.p);
  free(b.p);
  dq_model_free(m);
  dq_text_free(cache.t);
  dq_hits_free(hits, n_hits);
  free(cites);
  free(sites);
  free(cand);
  ex->ms_total = dq_now_ms() - t_start;
  if (s != DQ_OK)
    dq_xref_explanation_clear(ex);
  return s;
}
