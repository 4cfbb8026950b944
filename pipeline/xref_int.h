/*
 * xref_int.h - what qualified xref lookups (xref_owner.c) read from source
 * text (xref_text.c): the receiver before a member's name, whether an
 * occurrence of a name declares it and with which type, and small word
 * helpers. Text only: no index, no files. Private to pipeline/.
 */
#ifndef DQ_XREF_INT_H
#define DQ_XREF_INT_H

#include <stddef.h>

#define XR_NAME_BYTES 128 /* a name part, a type name (longer: skipped) */
#define XR_MAX_CANDS 8    /* type names one declaration gives */
#define XR_CHAIN_MAX 8    /* names in a receiver a.b.c */
#define XR_FROM_BYTES 512 /* a chain "a.b.c" as text */

typedef enum { XR_RCV_NONE, XR_RCV_SELF, XR_RCV_NAME, XR_RCV_EXPR } xr_rcv_kind;

/* The receiver before a member's name: XR_RCV_NAME `a.b[i]->c.member` is
 * the chain a, b, c, or after a cast `((Box *)p)->a.member` the cast's
 * type and a (copied: the text may be freed before it is used);
 * XR_RCV_SELF self/this/@/$this/Self/static; XR_RCV_NONE a bare name;
 * XR_RCV_EXPR anything else (a call, a dereference, super, a literal). */
typedef struct xr_rcv {
  xr_rcv_kind k;
  int n;
  char id[XR_CHAIN_MAX][XR_NAME_BYTES];
  int of_self;                 /* id[0] is self/this */
  size_t start;                /* offset of id[0] in its line */
  char cast[XR_NAME_BYTES];    /* XR_RCV_NAME after a cast ((Box *)p)->a.m:
                                  its type ("Box"); id[] the members after it */
  char call[XR_NAME_BYTES];    /* XR_RCV_NAME after a call a.get(i)->b.m: the
                                  function ("get"); id[] the members after it */
  int call_bare;               /* the call has no receiver: get(i)->m */
  char call_on[XR_FROM_BYTES]; /* else its receiver's chain ("a.b" for
                                  a.b.get()), "" when not a chain */
} xr_rcv;

typedef struct xr_cands { /* type names a declaration gives, best first */
  char name[XR_MAX_CANDS][XR_NAME_BYTES];
  int k;
  /* With no type named (k == 0), what the declaration's value shows: */
  char from[XR_FROM_BYTES]; /* a chain of names, joined by '.': `v := a.b`,
                               `p = q->next`, Go's `range a.items` ("" none) */
  int tswitch;              /* Go's `v := x.(type)`: the type is the case's */
  char call[XR_NAME_BYTES]; /* the value is a call's result: `v := a.get(i)`,
                               `v, err := get()` (the function, "get") */
  int call_bare;            /* ... with no receiver: get() (else from is the
                               receiver's chain, "a" for a.get()) */
  int nth;                  /* Go: the name's place in `a, b := f()` */
  size_t at;                /* xr_decl_find: the declaration's offset */
} xr_cands;

/* What xr_decl_at says of an occurrence of a name. */
enum {
  XR_DECL_NONE,  /* nothing */
  XR_DECL_YES,   /* a declaration: a parameter, a local, a field */
  XR_DECL_ASSIGN /* an assignment that declares nothing in its language
                    but shows a type (`b = Box(1)` in C++) */
};

/* Identifier bytes: letters, digits, '_', '$' and every non-ASCII byte. */
int xr_ident_char(int c);
/* ch is a non-NUL byte of set. */
int xr_one_of(int ch, const char *set);
/* s[0..n) is the word w / one of list's (NULL-terminated). */
int xr_word_is(const char *s, size_t n, const char *w);
int xr_word_in(const char *s, size_t n, const char *const *list);
/* Past spaces and tabs from s[i] (up to end), back from s[i] (to 0). */
size_t xr_skip_space(const char *s, size_t i, size_t end);
size_t xr_skip_space_back(const char *s, size_t i);
/* s[0..n) is self, this, $this, Self, static or me. */
int xr_is_self(const char *s, size_t n);
/* Appends s[0..n) to c unless full, too long or starting with a digit. */
void xr_cand_add(xr_cands *c, const char *p, size_t n);

/* The receiver of the name at line[pos]; line[0] is its line's start. */
void xr_receiver(const char *line, size_t pos, xr_rcv *r);
/* What the text around the name at s[a..b) says of it, s[0..end) being
 * all that may be read; lang as dq_chunk_lang_for_path gives it (NULL:
 * C-like). Types go to c (a declaration may give none: `var b = f()`). */
int xr_decl_at(const char *s, size_t a, size_t b, size_t end, const char *lang,
               xr_cands *c);
/* The nearest declaration of the name v in s[0..end), else (unless
 * decl_only) its nearest typed assignment: its types in c. Returns 1 when
 * one was found. Occurrences that look commented out are skipped. */
int xr_decl_find(const char *s, size_t end, const char *v, size_t vn,
                 const char *lang, int decl_only, xr_cands *c);
/* The return type of the function whose name is at s[a..b) on its
 * definition (s[0..end) all that may be read): the type before the name
 * (C, C++, Java, C#), after the parameters (`-> Box`, `): Box`, Go's
 * `) *Box {` or `) (b *Box, err error)`; nth > 0: Go's nth result).
 * 1 when found. */
int xr_return_type(const char *s, size_t a, size_t b, size_t end,
                   const char *lang, int nth, xr_cands *c);
/* The type a C macro whose name ends at s[b] gives when its body casts
 * (`#define tolstream(L) ((LStream *)luaL_checkudata(L, 1, F))`): 1 when
 * found. */
int xr_macro_type(const char *s, size_t b, size_t end, xr_cands *c);
/* The type of a Go type switch's variable declared at s[at] (`switch v :=
 * x.(type) {`) at s[end]: the type of the case clause around s[end] when
 * it names one (`case *Box:` gives Box). 1 when found. */
int xr_case_type(const char *s, size_t at, size_t end, xr_cands *c);
/* Moves *k from just past a '}' in b to its '{' (b[stop..] only), not
 * counting braces in block comments, after a // on their line or in
 * character literals. 0 when there is none. */
int xr_brace_open(const char *b, size_t stop, size_t *k);

#endif
