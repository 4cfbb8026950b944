/*
 * chunk_code.c - the code chunker: symbols and references come from
 * sym_code.c; this file turns its scopes into cuts. Every top-level
 * definition with a body (function, class, struct, impl ...) starts a new
 * chunk (its leading comment/decorator lines included) whose section is its
 * signature ("static int foo(int a)", "def run(self)"); definitions nested one
 * level (methods) are soft cuts with "class Foo > def bar(self)" as section,
 * so a class larger than the budget splits between methods. Blank lines are
 * soft cuts for everything else.
 */
#include "chunk_int.h"

#include <stdlib.h>
#include <string.h>

#define SIG_MAX_BYTES 160

static int blank_ch(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
         ch == '\v';
}

/* src[a..b) with blank runs collapsed to one space, trimmed, at most
 * SIG_MAX_BYTES (cut at a UTF-8 boundary). */
static char *signature(const char *src, size_t a, size_t b) {
  char *s = malloc(SIG_MAX_BYTES + 1);
  if (!s)
    return NULL;
  size_t m = 0;
  int pend = 0;
  for (size_t i = a; i < b; i++) {
    if (blank_ch(src[i])) {
      pend = m > 0;
      continue;
    }
    unsigned char lead = (unsigned char)src[i];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (i + need > b)
      need = b - i;
    if (m + (size_t)pend + need > SIG_MAX_BYTES)
      break;
    if (pend)
      s[m++] = ' ';
    pend = 0;
    memcpy(s + m, src + i, need);
    m += need;
    i += need - 1;
  }
  s[m] = '\0';
  return s;
}

/* Whether the line [ls, le) is a comment/decorator/attribute line. */
static int lead_line(const char *src, size_t ls, size_t le, ck_lang lang) {
  size_t i = ls;
  while (i < le && (src[i] == ' ' || src[i] == '\t'))
    i++;
  if (i >= le)
    return 0;
  if (src[i] == '/' && i + 1 < le && (src[i + 1] == '/' || src[i + 1] == '*'))
    return 1;
  if (src[i] == '*')
    return 1;
  if (src[i] == '@' || (src[i] == '[' && lang == CK_LANG_CSHARP))
    return 1;
  if (src[i] == '#' &&
      (lang == CK_LANG_PYTHON || lang == CK_LANG_PHP || lang == CK_LANG_RUBY ||
       (lang == CK_LANG_RUST && i + 1 < le && src[i + 1] == '[')))
    return 1;
  return 0;
}

/* Start of a unit: the line of `head`, extended up over comment lines but not
 * before `floor`. */
static size_t unit_start(ck_ctx *c, size_t head, size_t floor, ck_lang lang) {
  size_t ls = ck_line_start(c, head);
  while (ls > floor && ls > 0) {
    size_t prev = ck_line_start(c, ls - 1);
    if (prev < floor || !lead_line(c->t->text, prev, ls - 1, lang))
      break;
    ls = prev;
  }
  return ls < floor ? floor : ls;
}

/* Namespaces (and Ruby's modules, which mostly are) are transparent:
 * their members are top-level units. */
static int transparent(const ck_scope *s) {
  return !strcmp(s->kind, "namespace") || !strcmp(s->kind, "module");
}

static int chunk_parent(const ck_scopes *sc, int i) {
  while (i >= 0 && transparent(&sc->v[i]))
    i = sc->v[i].parent;
  return i;
}

dq_status ck_chunk_code(ck_ctx *c, ck_lang lang) {
  ck_scopes sc = {0};
  dq_status st = ck_code_symbols(c, lang, &sc);
  char **sig = NULL;
  if (st != DQ_OK)
    goto out;
  sig = calloc(sc.n ? sc.n : 1, sizeof *sig);
  if (!sig) {
    st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
    goto out;
  }
  const char *src = c->t->text;
  size_t floor = 0;
  for (size_t i = 0; i < sc.n && st == DQ_OK; i++) {
    const ck_scope *s = &sc.v[i];
    if (transparent(s))
      continue;
    int par = chunk_parent(&sc, s->parent);
    int depth = par < 0 ? 0 : chunk_parent(&sc, sc.v[par].parent) < 0 ? 1 : 2;
    if (depth > 1)
      continue;
    if (!(sig[i] = signature(src, s->head, s->sig_end))) {
      st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
      break;
    }
    size_t end =
        s->close < c->t->n_bytes ? ck_next_line(c, s->close) : c->t->n_bytes;
    if (depth == 0) {
      size_t us = unit_start(c, s->head, floor, lang);
      st = ck_add_cut(c, us, 1, sig[i]);
      if (st == DQ_OK)
        st = ck_add_cut(c, end, 1, "");
      floor = end;
    } else {
      const ck_scope *ps = &sc.v[par];
      size_t pfloor = ck_next_line(c, ps->open);
      size_t us = unit_start(c, s->head, pfloor, lang);
      size_t plen = strlen(sig[par]), slen = strlen(sig[i]);
      char *path = malloc(plen + 3 + slen + 1);
      if (!path) {
        st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
        break;
      }
      memcpy(path, sig[par], plen);
      memcpy(path + plen, " > ", 3);
      memcpy(path + plen + 3, sig[i], slen + 1);
      st = ck_add_cut(c, us, 0, path);
      free(path);
      if (st == DQ_OK && end < ps->close)
        st = ck_add_cut(c, end, 0, sig[par]);
    }
  }
  /* Paragraph-like soft cuts: the line after an empty line. */
  int prev_empty = 0;
  for (size_t li = 0; li < c->n_lines && st == DQ_OK; li++) {
    size_t ls = c->line_starts[li];
    size_t le = li + 1 < c->n_lines ? c->line_starts[li + 1] : c->t->n_bytes;
    int empty = 1;
    for (size_t k = ls; k < le; k++)
      if (!blank_ch(src[k])) {
        empty = 0;
        break;
      }
    if (!empty && prev_empty)
      st = ck_add_cut(c, ls, 0, NULL);
    prev_empty = empty;
  }
out:
  for (size_t i = 0; sig && i < sc.n; i++)
    free(sig[i]);
  free(sig);
  free(sc.v);
  return st;
}
