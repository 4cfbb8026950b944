/*
 * sym_int.h - state shared by the code symbol extractor's files: sym_code.c
 * (blanking, scopes from '{' headers or Python indentation, the entry point),
 * sym_lines.c (definitions without a body, imports, scope paths and the
 * reference scan) and sym_kw.c (keywords per language). Private to ingest/.
 */
#ifndef DQ_SYM_INT_H
#define DQ_SYM_INT_H

#include "chunk_int.h"

#include <stdlib.h>
#include <string.h>

#define KW_SLOTS 512
typedef struct kwset { /* open addressing over static keyword strings */
  const char *slot[KW_SLOTS];
} kwset;

/* Fills k with the keywords of lang (never references). */
void sym_kw_init(kwset *k, ck_lang lang);
int sym_kw_has(const kwset *k, const char *s, size_t n);

typedef struct span {
  size_t a, b;
} span;

typedef struct sym_state {
  ck_ctx *c;
  ck_lang lang;
  const char *src; /* original text */
  size_t n;
  char *blank; /* comments and strings blanked */
  char *view;  /* blank, or (C/C++) directives blanked too */
  ck_scopes *sc;
  size_t *defs; /* name offsets of definitions: not references */
  size_t n_defs, cap_defs;
  span *skip; /* import statements: no identifier refs inside */
  size_t n_skip, cap_skip;
  /* C# expression bodies ("int Area() => w * h;"): the member's name is
   * the caller of the references in [a, b); in text order */
  span *bodies;
  char **body_name;
  size_t n_bodies, cap_bodies, cap_body_name;
  kwset kw;
  pcre2_match_data *md;
  pcre2_code *re[8]; /* per-language header regexes, see compile_lang */
  const char *pat[8]; /* their patterns: compiled on first use */
  int re_failed;      /* a pattern did not compile (a bug): DQ_ERR_INTERNAL */
  const char *sep;   /* scope separator: "::" or "." */
  /* Python: line i starts inside a triple-quoted string (its text at
   * column 0 ends no scope); NULL elsewhere */
  unsigned char *str_lines;
} sym_state;

/* Scope paths ("Outer::Inner") per scope, built in order (parents first). */
typedef struct paths {
  char **path;  /* path naming scope i itself (its children's scope) */
  char **scope; /* the scope string of scope i's own symbol */
} paths;

static inline int sym_grow(void **arr, size_t *cap, size_t n, size_t elem) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 64;
  void *p = realloc(*arr, ncap * elem);
  if (!p)
    return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

static inline dq_status sym_oom(sym_state *a) {
  return dq_error_set(a->c->err, DQ_ERR_NOMEM, "%s: out of memory", a->c->path);
}

static inline dq_status sym_add_def(sym_state *a, size_t off) {
  if (sym_grow((void **)&a->defs, &a->cap_defs, a->n_defs, sizeof *a->defs))
    return sym_oom(a);
  a->defs[a->n_defs++] = off;
  return DQ_OK;
}

static inline dq_status sym_add_skip(sym_state *a, size_t from, size_t to) {
  if (sym_grow((void **)&a->skip, &a->cap_skip, a->n_skip, sizeof *a->skip))
    return sym_oom(a);
  a->skip[a->n_skip].a = from;
  a->skip[a->n_skip].b = to;
  a->n_skip++;
  return DQ_OK;
}

/* Records view[from..to) as the body of the member named src[name..+len). */
static inline dq_status sym_add_body(sym_state *a, size_t from, size_t to,
                                     size_t name, size_t len) {
  if (sym_grow((void **)&a->bodies, &a->cap_bodies, a->n_bodies,
               sizeof *a->bodies) ||
      sym_grow((void **)&a->body_name, &a->cap_body_name, a->n_bodies,
               sizeof *a->body_name))
    return sym_oom(a);
  char *s = malloc(len + 1);
  if (!s)
    return sym_oom(a);
  memcpy(s, a->src + name, len);
  s[len] = '\0';
  a->bodies[a->n_bodies] = (span){from, to};
  a->body_name[a->n_bodies++] = s;
  return DQ_OK;
}

static inline int sym_id0(unsigned char ch, ck_lang lang) {
  return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
         ch >= 0x80 ||
         (ch == '$' && (lang == CK_LANG_JS || lang == CK_LANG_TS));
}
static inline int sym_id(unsigned char ch, ck_lang lang) {
  return sym_id0(ch, lang) || (ch >= '0' && ch <= '9');
}
static inline int sym_blank(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
         ch == '\v';
}
/* +1 for an opening bracket ( [ {, -1 for a closing one, else 0. */
static inline int sym_bracket(char ch) {
  return ch == '(' || ch == '[' || ch == '{'   ? 1
         : ch == ')' || ch == ']' || ch == '}' ? -1
                                               : 0;
}

/* Previous non-blank byte of b before i (not before lo), or 0. */
static inline char sym_prev(const char *b, size_t i, size_t lo) {
  while (i > lo) {
    char ch = b[--i];
    if (!sym_blank(ch))
      return ch;
  }
  return 0;
}

/* Sorts offsets ascending (most arrays arrive sorted: checked first). */
static inline int sym_size_cmp(const void *x, const void *y) {
  size_t a = *(const size_t *)x, b = *(const size_t *)y;
  return a < b ? -1 : a > b;
}
static inline void sym_sort_offsets(size_t *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (v[i - 1] > v[i]) {
      qsort(v, n, sizeof *v, sym_size_cmp);
      return;
    }
}

/* sym_lines.c */
void sym_split_qual(const char *s, size_t len, size_t *qual_len,
                    size_t *last_off);
dq_status sym_build_paths(sym_state *a, paths *p);
void sym_free_paths(paths *p, size_t n);
dq_status sym_line_rules(sym_state *a, const paths *p);
dq_status sym_scan_refs(sym_state *a);
/* sym_decl.c: declarations without a body (prototypes, interface methods). */
dq_status sym_decls(sym_state *a, const paths *p);

#endif /* DQ_SYM_INT_H */
