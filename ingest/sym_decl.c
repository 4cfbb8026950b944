/*
 * sym_decl.c - declarations without a body, so that they become symbols and
 * not "call" references: C/C++ prototypes at file, namespace or class scope
 * ("ll_status tax_compute_line(const tax_table *t, int c);", "extern int
 * f(void);", "virtual void g() = 0;") as kind "prototype"; Rust trait method
 * declarations ("fn area(&self) -> f64;") and Java/TypeScript interface or
 * abstract method declarations ("void changed(int v);", "changed(v: number):
 * void") as kind "method" with the interface/trait/class as scope; TS/JS
 * overload signatures ("function f(a: string): void;") and Go interface
 * method specs ("Area() float64") too; C# interface and abstract methods,
 * delegates, and expression-bodied methods and properties ("int Count =>
 * n;"). Also the variables and fields of C, C++, Java and C# ("static int
 * a = 1, *b[4];", "std::map<int, int> m;", "} obj;" after an unnamed
 * struct, C# events), and enumerators (C, C++, Java, C#, TS, Rust) and
 * Rust struct fields from the comma-separated bodies of those types.
 *
 * Method: one walk over the brace structure found by sym_code.c (the '{' of
 * each scope is known), tracking whether the current block lies inside a
 * function body. Statements - the text since the previous ';', '{' or '}',
 * ending at ';' (in TS and Go interface bodies also at a newline or ',' outside
 * parentheses) - outside function bodies are examined: C/C++/Java ones are
 * read backwards from their end (trailers such as "const", "= 0",
 * "throws E", __attribute__((...)) dropped; then "name(params)" must end
 * the statement) and need a type before the name ("foo(x);", "x = f(1);" or
 * "return f(x);" is never one); Rust, TS/JS and Go ones are matched with
 * anchored regexes. A call statement inside a function body is never looked
 * at.
 */
#include "sym_int.h"

#include <string.h>

#define DECL_MAX_BYTES 4096 /* longer statements are not examined */

#define PARENS(n) "(\\((?:[^()]++|(?" #n "))*+\\))"

enum { D_RUST, D_TSFN, D_TSMETH, D_GO, D_N };

typedef struct dframe {
  int def;     /* innermost enclosing definition scope, -1 at top */
  int in_func; /* inside a function body */
  int direct;  /* this block is the body of scope `def` itself */
  int agg;     /* C/C++: the body of an unnamed struct or union */
  int typed;   /* C/C++: a struct, union, enum or class body: declarators
                  may follow its '}' ("} aSyscall[] = {...};") */
} dframe;

typedef struct dstate {
  sym_state *a;
  const paths *p;
  pcre2_code *re[D_N];
  size_t n_sorted; /* a->defs[0..n_sorted) is sorted */
} dstate;

static const char *const deny_words[] = {
    "return", "else",  "case",      "goto",     "do",     "throw",
    "new",    "delete", "sizeof",   "co_return", "co_yield", "co_await",
    "using",  "typedef", "yield",   "assert",   "await",  "typeof",
    "operator", "define", NULL};

static int is_deny(const char *s, size_t n) {
  for (int i = 0; deny_words[i]; i++)
    if (strlen(deny_words[i]) == n && memcmp(deny_words[i], s, n) == 0)
      return 1;
  return 0;
}

static int has_def_sorted(const dstate *d, size_t off) {
  size_t lo = 0, hi = d->n_sorted;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->a->defs[mid] < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < d->n_sorted && d->a->defs[lo] == off;
}

/* Whether the word w (n bytes) occurs as a whole word in v[s..e). */
static int has_word(const sym_state *a, size_t s, size_t e, const char *w) {
  size_t n = strlen(w);
  for (size_t i = s; i + n <= e; i++)
    if (a->view[i] == w[0] && memcmp(a->view + i, w, n) == 0 &&
        (i == s || !sym_id((unsigned char)a->view[i - 1], a->lang)) &&
        (i + n == e || !sym_id((unsigned char)a->view[i + n], a->lang)))
      return 1;
  return 0;
}

/* The type-before-name rule of C/C++/Java: pre = view[s..name). Returns 1
 * when a type (or modifiers) precede the name, 0 when nothing does, -1 when
 * what precedes makes it an expression ("return", "x =", "a.", "p->"). */
static int type_prefix(const sym_state *a, size_t s, size_t name) {
  const char *v = a->view;
  size_t e = name;
  while (e > s && sym_blank(v[e - 1]))
    e--;
  if (e == s)
    return 0;
  for (size_t i = s; i < e; i++)
    if (v[i] == '=')
      return -1;
  char last = v[e - 1];
  if (last == ':' && !(e - 1 > s && v[e - 2] == ':')) {
    /* "public:" access label (C++): what follows starts afresh. */
    return 0;
  }
  if (last == '*' || last == '&' || last == ']')
    return 1;
  if (last == '>')
    return e - 1 > s && v[e - 2] == '-' ? -1 : 1;
  if (!sym_id((unsigned char)last, a->lang))
    return -1;
  size_t w = e;
  while (w > s && sym_id((unsigned char)v[w - 1], a->lang))
    w--;
  if (w > s && (v[w - 1] == '.' || (v[w - 1] == '>' && w - 1 > s &&
                                    v[w - 2] == '-')))
    return -1;
  if (is_deny(v + w, e - w) || has_word(a, s, e, "typedef"))
    return -1;
  return 1;
}

/* Arguments that are values, not parameters: "v(10)", "s(\"x\")". */
static int value_args(const sym_state *a, size_t open) {
  size_t i = open + 1;
  while (i < a->n && sym_blank(a->view[i]))
    i++;
  char ch = i < a->n ? a->view[i] : 0;
  return (ch >= '0' && ch <= '9') || ch == '"' || ch == '\'' || ch == '-';
}

static dq_status add_decl(dstate *d, size_t off, size_t len, const char *kind,
                          int def) {
  sym_state *a = d->a;
  if (has_def_sorted(d, off) || sym_kw_has(&a->kw, a->src + off, len))
    return DQ_OK;
  const char *base = def >= 0 ? d->p->path[def] : "";
  size_t ql = 0, lo = 0;
  sym_split_qual(a->src + off, len, &ql, &lo);
  char *scope = NULL;
  if (ql) {
    size_t lb = strlen(base), ls = lb ? strlen(a->sep) : 0;
    if (!(scope = malloc(lb + ls + ql + 1)))
      return sym_oom(a);
    memcpy(scope, base, lb);
    memcpy(scope + lb, a->sep, ls);
    memcpy(scope + lb + ls, a->src + off, ql);
    scope[lb + ls + ql] = '\0';
  }
  dq_status st = ck_add_symbol(a->c, a->src + off + lo, len - lo, kind,
                               off + lo, scope ? scope : base);
  free(scope);
  if (st == DQ_OK) /* the name's identifier: not a reference */
    st = sym_add_def(a, off + lo + (a->src[off + lo] == '~'));
  return st;
}

static const char *def_kind(const sym_state *a, int def) {
  return def >= 0 ? a->sc->v[def].kind : "";
}

/* Scopes whose bodies declare members: fields, or (after a C/C++ body's
 * '}') objects. */
static const char *const type_kinds[] = {"class", "struct",    "union",
                                         "enum",  "interface", "record",
                                         NULL};

static int kind_in(const char *k, const char *const *set) {
  for (; *set; set++)
    if (!strcmp(k, *set))
      return 1;
  return 0;
}

/* Runs d->re[r] on view[s..e); absolute ovector. */
static int dmatch(dstate *d, int r, size_t s, size_t e, PCRE2_SIZE **ov) {
  sym_state *a = d->a;
  int rc = pcre2_match(d->re[r], (PCRE2_SPTR)(a->view + s), e - s, 0, 0,
                       a->md, NULL);
  if (rc < 0)
    return 0;
  PCRE2_SIZE *v = pcre2_get_ovector_pointer(a->md);
  uint32_t np = pcre2_get_ovector_count(a->md);
  for (uint32_t i = 0; i < 2 * np; i++)
    if (v[i] != PCRE2_UNSET)
      v[i] += s;
  *ov = v;
  return 1;
}

/* C/C++/Java: the declared name of statement view[s..e) read backwards
 * (linear; a regex anchored at the end retries every start position):
 * trailers are dropped - const, override, final, noexcept, volatile, "& ",
 * "= 0", "= default", "= delete", ALL_CAPS macros with or without arguments,
 * __attribute__((...)), throw(...), Java "throws A, B" - then the statement
 * must end in "name(params)" (name possibly "A::B::~C"). Fills the name and
 * the offset of its '('. In C and C++ a word that starts with "__" (the
 * implementation's: glibc's "__THROW __nonnull ((1, 2))", "__wur") is a
 * trailer too, unless nothing but a type is left before it: then it was
 * the name ("extern int __sigsetjmp (...);"). */
static int is_trailer(const sym_state *a, const char *w, size_t n) {
  static const char *const tw[] = {"const", "override", "final", "noexcept",
                                   "volatile", "throw", "__attribute__",
                                   "__attribute", "default", "delete", NULL};
  for (int i = 0; tw[i]; i++)
    if (strlen(tw[i]) == n && memcmp(tw[i], w, n) == 0)
      return a->lang != CK_LANG_JAVA && a->lang != CK_LANG_CSHARP;
  if (a->lang == CK_LANG_JAVA || a->lang == CK_LANG_CSHARP)
    return 0;
  int letters = 0;
  for (size_t i = 0; i < n; i++) {
    if (w[i] >= 'a' && w[i] <= 'z')
      return 0;
    letters += w[i] >= 'A' && w[i] <= 'Z';
  }
  return letters > 1;
}

/* Where the word w (after a blank, at parenthesis depth 0) starts in
 * view[s..e), or e: Java's "throws", C#'s "where". */
static size_t clause_at(const sym_state *a, size_t s, size_t e, const char *w) {
  const char *v = a->view;
  size_t n = strlen(w);
  int depth = 0;
  for (size_t i = s; i + n <= e; i++) {
    depth += v[i] == '(' ? 1 : v[i] == ')' ? -1 : 0;
    if (depth == 0 && v[i] == w[0] && memcmp(v + i, w, n) == 0 && i > s &&
        sym_blank(v[i - 1]) &&
        (i + n == e || !sym_id((unsigned char)v[i + n], a->lang)))
      return i;
  }
  return e;
}

static int reserved_word(const sym_state *a, const char *w, size_t n) {
  return (a->lang == CK_LANG_C || a->lang == CK_LANG_CPP) && n > 2 &&
         w[0] == '_' && w[1] == '_';
}

static int decl_name(const sym_state *a, size_t s, size_t e, size_t *name,
                     size_t *len, size_t *open) {
  const char *v = a->view;
  size_t fb_name = 0, fb_len = 0, fb_open = 0; /* a "__x(...)" passed over */
  if (a->lang == CK_LANG_JAVA)
    e = clause_at(a, s, e, "throws");
  for (int guard = 0; guard < 16; guard++) {
    while (e > s && sym_blank(v[e - 1]))
      e--;
    if (e <= s)
      goto fail;
    char ch = v[e - 1];
    if (ch == '&') {
      e--;
      continue;
    }
    if (ch == '0' || sym_id((unsigned char)ch, a->lang)) {
      size_t w = e;
      while (w > s && sym_id((unsigned char)v[w - 1], a->lang))
        w--;
      size_t q = w;
      while (q > s && sym_blank(v[q - 1]))
        q--;
      if (q > s && v[q - 1] == '=' &&
          ((e - w == 1 && v[w] == '0') ||
           (e - w == 7 && !memcmp(v + w, "default", 7)) ||
           (e - w == 6 && !memcmp(v + w, "delete", 6)))) {
        e = q - 1; /* "= 0" */
        continue;
      }
      if (!is_trailer(a, v + w, e - w) && !reserved_word(a, v + w, e - w))
        goto fail;
      e = w;
      continue;
    }
    if (ch != ')')
      goto fail;
    /* the matching '(' */
    size_t i = e - 1;
    int depth = 0;
    for (;;) {
      if (v[i] == ')')
        depth++;
      else if (v[i] == '(' && --depth == 0)
        break;
      if (i == s)
        goto fail;
      i--;
    }
    size_t p = i;
    while (p > s && sym_blank(v[p - 1]))
      p--;
    size_t w = p;
    while (w > s && sym_id((unsigned char)v[w - 1], a->lang))
      w--;
    if (w == p || (v[w] >= '0' && v[w] <= '9'))
      goto fail;
    if (is_trailer(a, v + w, p - w)) {
      e = w;
      continue;
    }
    if (reserved_word(a, v + w, p - w)) { /* the leftmost one is kept */
      fb_name = w;
      fb_len = p - w;
      fb_open = i;
      e = w;
      continue;
    }
    /* qualified C++ name: A :: B :: ~f */
    size_t b = w;
    if (b > s && v[b - 1] == '~')
      b--;
    while (a->lang == CK_LANG_CPP) {
      size_t k = b;
      while (k > s && sym_blank(v[k - 1]))
        k--;
      if (!(k >= s + 2 && v[k - 1] == ':' && v[k - 2] == ':'))
        break;
      k -= 2;
      while (k > s && sym_blank(v[k - 1]))
        k--;
      size_t q = k;
      while (q > s && sym_id((unsigned char)v[q - 1], a->lang))
        q--;
      if (q == k)
        break;
      b = q;
    }
    *name = b;
    *len = p - b;
    *open = i;
    return 1;
  }
fail:
  if (!fb_len)
    return 0;
  *name = fb_name;
  *len = fb_len;
  *open = fb_open;
  return 1;
}

/* C#: "=>" at parenthesis depth 0 in view[s..e), or e. */
static size_t arrow_at(const sym_state *a, size_t s, size_t e) {
  int depth = 0;
  for (size_t i = s; i + 1 < e; i++) {
    char ch = a->view[i];
    depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
    if (depth == 0 && ch == '=' && a->view[i + 1] == '>')
      return i;
  }
  return e;
}

/* C#: the name of "... Name<T, U>(params) where T : X" ending view[s..e):
 * a "where" clause at depth 0 is dropped, generic arguments skipped. Fills
 * the name and the offset of its '('. */
static int cs_decl_name(const sym_state *a, size_t s, size_t e, size_t *name,
                        size_t *len, size_t *open) {
  const char *v = a->view;
  e = clause_at(a, s, e, "where");
  while (e > s && sym_blank(v[e - 1]))
    e--;
  if (e <= s || v[e - 1] != ')')
    return 0;
  size_t i = e - 1;
  int depth = 0;
  for (;; i--) { /* back to the matching '(' */
    depth += v[i] == ')' ? 1 : v[i] == '(' ? -1 : 0;
    if (depth == 0)
      break;
    if (i == s)
      return 0;
  }
  *open = i;
  size_t k = i;
  while (k > s && sym_blank(v[k - 1]))
    k--;
  if (k > s && v[k - 1] == '>') { /* Name<T, U> */
    int ang = 0;
    do {
      k--;
      ang += v[k] == '>' ? 1 : v[k] == '<' ? -1 : 0;
    } while (ang > 0 && k > s);
    if (ang != 0)
      return 0;
    while (k > s && sym_blank(v[k - 1]))
      k--;
  }
  size_t b = k;
  while (b > s && sym_id((unsigned char)v[b - 1], a->lang))
    b--;
  if (b == k || !sym_id0((unsigned char)v[b], a->lang))
    return 0;
  *name = b;
  *len = k - b;
  return 1;
}

/* C# statements at a type's level: expression-bodied methods and
 * properties ("int Area() => w * h;", "int Count => n;"), interface and
 * abstract methods ("void Changed(int v);") and delegates (at any level:
 * "delegate void Handler(object s);"). */
static dq_status cs_statement(dstate *d, size_t s, size_t e, const dframe *f) {
  sym_state *a = d->a;
  static const char *const cs_cls[] = {"class", "struct", "interface",
                                       "record", NULL};
  /* leading attributes: [DllImport("x", EntryPoint = "y")] */
  while (s < e && a->view[s] == '[') {
    int depth = 0;
    size_t i = s;
    for (; i < e; i++) {
      depth += a->view[i] == '[' ? 1 : a->view[i] == ']' ? -1 : 0;
      if (depth == 0)
        break;
    }
    if (i >= e)
      return DQ_OK;
    s = i + 1;
    while (s < e && sym_blank(a->view[s]))
      s++;
  }
  int in_type = f->def >= 0 && f->direct && kind_in(def_kind(a, f->def), cs_cls);
  size_t arrow = arrow_at(a, s, e);
  size_t off, len, open;
  if (arrow < e) {
    if (!in_type)
      return DQ_OK;
    size_t he = arrow;
    while (he > s && sym_blank(a->view[he - 1]))
      he--;
    if (cs_decl_name(a, s, he, &off, &len, &open)) {
      if (type_prefix(a, s, off) < 0 || value_args(a, open))
        return DQ_OK;
      dq_status st = add_decl(d, off, len, "method", f->def);
      return st ? st : sym_add_body(a, arrow + 2, e, off, len);
    }
    size_t b = he;
    while (b > s && sym_id((unsigned char)a->view[b - 1], a->lang))
      b--;
    if (b == he || !sym_id0((unsigned char)a->view[b], a->lang) ||
        type_prefix(a, s, b) <= 0)
      return DQ_OK;
    dq_status st = add_decl(d, b, he - b, "property", f->def);
    return st ? st : sym_add_body(a, arrow + 2, e, b, he - b);
  }
  if (e - s > DECL_MAX_BYTES || e - s < 3 || !memchr(a->view + s, '(', e - s) ||
      !cs_decl_name(a, s, e, &off, &len, &open) ||
      type_prefix(a, s, off) <= 0 || value_args(a, open))
    return DQ_OK;
  if (has_word(a, s, off, "delegate"))
    return add_decl(d, off, len, "delegate", f->def);
  if (has_word(a, s, off, "record")) /* record Point(int X, int Y); */
    return add_decl(d, off, len, "record", f->def);
  if (!in_type)
    return DQ_OK;
  return add_decl(d, off, len, "method", f->def);
}

/* ---- variables, fields and enumerators (C, C++, Java, C#, Rust, TS) ---- */

static int is_word(const char *s, size_t n, const char *w) {
  return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* The word ending at view[e) (blanks before e skipped): its start, or e
 * when none. */
static size_t word_before(const sym_state *a, size_t s, size_t *e) {
  size_t k = *e;
  while (k > s && sym_blank(a->view[k - 1]))
    k--;
  size_t b = k;
  while (b > s && sym_id((unsigned char)a->view[b - 1], a->lang))
    b--;
  *e = k;
  return b;
}

/* Past blanks and attributes at view[k..e): Java/Kotlin annotations
 * ("@Inject", "@Named(\"x\")"), C# attributes ("[NonSerialized]") and Rust
 * ones ("#[serde(skip)]"). */
static size_t past_attrs(const sym_state *a, size_t k, size_t e) {
  const char *v = a->view;
  for (;;) {
    while (k < e && sym_blank(v[k]))
      k++;
    if (k + 1 < e && v[k] == '#' && v[k + 1] == '[')
      k++;
    if (k < e && v[k] == '@') {
      k++;
      while (k < e && (sym_id((unsigned char)v[k], a->lang) || v[k] == '.'))
        k++;
      while (k < e && sym_blank(v[k]))
        k++;
      if (k >= e || v[k] != '(')
        continue;
    } else if (k >= e || v[k] != '[') {
      return k;
    }
    int depth = 0; /* the arguments, or the [...] */
    for (; k < e; k++) {
      depth += v[k] == '(' || v[k] == '['   ? 1
               : v[k] == ')' || v[k] == ']' ? -1
                                            : 0;
      if (depth == 0)
        break;
    }
    if (k >= e)
      return e;
    k++;
  }
}

/* Past leading attributes and C++ access labels ("public:", "signals:") of
 * view[s..e). */
static size_t skip_labels(const sym_state *a, size_t s, size_t e) {
  const char *v = a->view;
  for (;;) {
    s = past_attrs(a, s, e);
    if (a->lang != CK_LANG_CPP)
      return s;
    size_t k = s;
    while (k < e && sym_id((unsigned char)v[k], a->lang))
      k++;
    size_t w = k;
    while (k < e && sym_blank(v[k]))
      k++;
    if (!(w > s && k < e && v[k] == ':' && (k + 1 >= e || v[k + 1] != ':')))
      return s;
    s = k + 1;
  }
}

/* One declarator view[s..e) ("*names[4]", "x : 3", "Foo::count", "(*cb)(int)");
 * first: the first of its statement, which must have a type before the
 * name; a later one may have only '*', '&' before it. Adds the name. */
static dq_status declarator(dstate *d, size_t s, size_t e, int first,
                            const char *kind, int def) {
  sym_state *a = d->a;
  const char *v = a->view;
  size_t paren = s;
  while (paren < e && v[paren] != '(')
    paren++;
  size_t b, ne;
  if (paren < e) { /* a function pointer: "void (*cb)(int)" */
    size_t k = paren + 1;
    while (k < e && sym_blank(v[k]))
      k++;
    if (!first || k >= e || (v[k] != '*' && v[k] != '^'))
      return DQ_OK;
    k++;
    for (;;) { /* "(*const name)" */
      while (k < e && sym_blank(v[k]))
        k++;
      if (k + 5 <= e && !memcmp(v + k, "const", 5) &&
          (k + 5 == e || !sym_id((unsigned char)v[k + 5], a->lang)))
        k += 5;
      else
        break;
    }
    b = k;
    while (k < e && sym_id((unsigned char)v[k], a->lang))
      k++;
    ne = k;
    while (k < e && sym_blank(v[k]))
      k++;
    if (ne == b || k >= e || (v[k] != ')' && v[k] != '['))
      return DQ_OK;
    if (type_prefix(a, s, paren) <= 0)
      return DQ_OK;
    return add_decl(d, b, ne - b, kind, def);
  }
  /* a bit-field's width, array dimensions */
  if (a->lang == CK_LANG_C || a->lang == CK_LANG_CPP)
    for (size_t k = e; k > s + 1; k--)
      if (v[k - 1] == ':' && v[k - 2] != ':' && (k >= e || v[k] != ':')) {
        e = k - 1;
        break;
      }
  for (;;) {
    while (e > s && sym_blank(v[e - 1]))
      e--;
    if (e == s || v[e - 1] != ']')
      break;
    int depth = 0;
    do {
      e--;
      depth += v[e] == ']' ? 1 : v[e] == '[' ? -1 : 0;
    } while (depth > 0 && e > s);
    if (depth != 0)
      return DQ_OK;
  }
  ne = e;
  b = word_before(a, s, &ne);
  if (b == ne || !sym_id0((unsigned char)v[b], a->lang) ||
      (ne - b == 1 && v[b] == '_'))
    return DQ_OK;
  size_t q = b; /* C++ "int Foo::count": a static member's definition */
  while (a->lang == CK_LANG_CPP && q >= s + 2 && v[q - 1] == ':' &&
         v[q - 2] == ':') {
    size_t k = q - 2, w = word_before(a, s, &k);
    if (w == k)
      break;
    q = w;
  }
  if (!first) {
    for (size_t k = s; k < q; k++)
      if (!sym_blank(v[k]) && v[k] != '*' && v[k] != '&')
        return DQ_OK;
    return add_decl(d, q, ne - q, kind, def);
  }
  size_t we = q, w = word_before(a, s, &we);
  int tp = type_prefix(a, s, q);
  int java_cs = a->lang == CK_LANG_JAVA || a->lang == CK_LANG_CSHARP;
  if (tp < 0 && java_cs && w < we && w > s && v[w - 1] == '.')
    tp = 1; /* a qualified type: "System.Windows.Forms.Button m_btn;" */
  if (tp == -1 && a->lang == CK_LANG_CSHARP && we > s && v[we - 1] == '?')
    tp = 1; /* nullable: "bool? m_b" */
  if (tp <= 0)
    return DQ_OK;
  static const char *const tag[] = {
      "struct", "union",     "enum", "class",  "typename", "interface",
      "new",    "namespace", "goto", "sizeof", NULL};
  for (int i = 0; tag[i]; i++)
    if (is_word(v + w, we - w, tag[i])) /* "struct foo;" declares no object */
      return DQ_OK;
  if (has_word(a, s, q, "operator"))
    return DQ_OK;
  if (a->lang == CK_LANG_CSHARP && has_word(a, s, q, "event"))
    kind = "event";
  return add_decl(d, q, ne - q, kind, def);
}

/* A statement view[s..e) that may declare variables or fields:
 * "static int a = 1, *b[4];", "std::map<int, int> m;", "private final
 * List<String> names = new ArrayList<>();". Returns 1 when it had the form
 * (no '(' before the first declarator's '='), 0 when the caller should look
 * for a prototype instead. */
static int var_statement(dstate *d, size_t s, size_t e, const char *kind,
                         int def, int tail, dq_status *st) {
  sym_state *a = d->a;
  const char *v = a->view;
  *st = DQ_OK;
  s = skip_labels(a, s, e);
  while (e > s && sym_blank(v[e - 1]))
    e--;
  if (e - s < (tail ? 1u : 3u) || e - s > DECL_MAX_BYTES)
    return 1;
  static const char *const deny[] = {
      "typedef",       "using",  "friend", "extern",  "template",
      "static_assert", "return", "throw",  "delete",  "import",
      "package",       "goto",   "case",   "default", NULL};
  for (int i = 0; deny[i]; i++)
    if (has_word(a, s, e, deny[i]))
      return 0; /* "extern int f(void);" may still be a prototype */
  int depth = 0, ang = 0, first = !tail, paren = 0;
  size_t piece = s, eq = 0;
  for (size_t i = s; i <= e && *st == DQ_OK; i++) {
    char ch = i < e ? v[i] : ',';
    if (ch == '(' && depth == 0 && !eq && first && !paren++) {
      /* "(" before any '=': a function pointer, else a prototype */
      size_t k = i + 1;
      while (k < e && sym_blank(v[k]))
        k++;
      if (k >= e || (v[k] != '*' && v[k] != '^'))
        return 0;
    }
    if (sym_bracket(ch))
      depth += sym_bracket(ch);
    else if (depth == 0 && !eq && ch == '<')
      ang++;
    else if (depth == 0 && !eq && ch == '>' && ang > 0)
      ang--;
    else if (depth == 0 && ang == 0 && ch == '=' && !eq &&
             (i + 1 >= e || (v[i + 1] != '=' && v[i + 1] != '>')) &&
             (i == s || !strchr("=!<>+-*/%&|^", v[i - 1])))
      eq = i;
    if (i == e || (depth == 0 && ang == 0 && ch == ',')) {
      *st = declarator(d, piece, eq ? eq : i, first, kind, def);
      first = 0;
      piece = i + 1;
      eq = 0;
    }
  }
  return 1;
}

/* The names of view[open+1..close) split at ','s outside brackets: C, C++,
 * C#, TS enumerators and Java enum constants (up to the ';' that ends them),
 * Rust variants, and with fields set Rust struct fields ("pub x: u32"). */
static dq_status comma_members(dstate *d, size_t open, size_t close, int fields,
                               int def) {
  sym_state *a = d->a;
  const char *v = a->view;
  dq_status st = DQ_OK;
  size_t k = open + 1;
  while (k < close && st == DQ_OK) {
    k = past_attrs(a, k, close);
    size_t b = k;
    while (k < close && sym_id((unsigned char)v[k], a->lang))
      k++;
    size_t ne = k;
    if (fields && ne > b && is_word(v + b, ne - b, "pub")) {
      while (k < close && sym_blank(v[k]))
        k++;
      if (k < close && v[k] == '(') { /* pub(crate) */
        while (k < close && v[k] != ')')
          k++;
        k++;
      }
      while (k < close && sym_blank(v[k]))
        k++;
      b = k;
      while (k < close && sym_id((unsigned char)v[k], a->lang))
        k++;
      ne = k;
    }
    size_t n = k;
    while (n < close && sym_blank(v[n]))
      n++;
    int ok = ne > b && sym_id0((unsigned char)v[b], a->lang);
    if (fields)
      ok =
          ok && n < close && v[n] == ':' && (n + 1 >= close || v[n + 1] != ':');
    if (ok)
      st = add_decl(d, b, ne - b, fields ? "field" : "enumerator", def);
    /* to the next ',' outside brackets */
    int depth = 0;
    for (; k < close; k++) {
      char ch = v[k];
      if (ch == '(' || ch == '[' || ch == '{' || (fields && ch == '<'))
        depth++;
      else if (ch == ')' || ch == ']' || ch == '}' ||
               (fields && ch == '>' && v[k - 1] != '-'))
        depth--;
      else if (depth <= 0 && ch == ';' && a->lang == CK_LANG_JAVA)
        return st;
      else if (depth <= 0 && ch == ',')
        break;
    }
    k++;
  }
  return st;
}

/* The '}' closing the '{' at open, or a->n. */
static size_t close_of(const sym_state *a, size_t open) {
  int depth = 0;
  for (size_t i = open; i < a->n; i++) {
    char ch = a->view[i];
    if (ch == '{')
      depth++;
    else if (ch == '}' && --depth == 0)
      return i;
  }
  return a->n;
}

/* The kind of a variable declared in frame f: "variable" at file or
 * namespace level, "field" in a class, struct or union body (C#, Java: only
 * directly in it, not in an initializer block), NULL where none is looked
 * for. */
static const char *var_kind(const sym_state *a, const dframe *f) {
  if (f->in_func)
    return NULL;
  const char *dk = def_kind(a, f->def);
  switch (a->lang) {
  case CK_LANG_C:
  case CK_LANG_CPP:
    if (f->agg || (f->def >= 0 && kind_in(dk, type_kinds)))
      return "field";
    return f->def < 0 || !strcmp(dk, "namespace") ? "variable" : NULL;
  case CK_LANG_JAVA:
  case CK_LANG_CSHARP:
    return f->direct && f->def >= 0 && kind_in(dk, type_kinds) ? "field"
                                                               : NULL;
  default:
    return NULL;
  }
}

static dq_status statement(dstate *d, size_t s, size_t e, const dframe *f,
                           int tail) {
  sym_state *a = d->a;
  static const char *const cpp_cls[] = {"class", "struct", "union", NULL};
  static const char *const java_cls[] = {"class", "interface", "enum",
                                         "record", NULL};
  static const char *const ts_cls[] = {"class", "interface", NULL};
  if (f->in_func)
    return DQ_OK;
  while (s < e && sym_blank(a->view[s]))
    s++;
  const char *vk = var_kind(a, f);
  dq_status vst;
  if (vk && (a->lang != CK_LANG_CSHARP || arrow_at(a, s, e) == e) &&
      var_statement(d, s, e, vk, f->def, tail, &vst))
    return vst;
  if (a->lang == CK_LANG_CSHARP)
    return e - s > DECL_MAX_BYTES ? DQ_OK : cs_statement(d, s, e, f);
  if (e - s > DECL_MAX_BYTES || e - s < 3 || !memchr(a->view + s, '(', e - s))
    return DQ_OK;
  PCRE2_SIZE *ov;
  const char *dk = def_kind(a, f->def);
  switch (a->lang) {
  case CK_LANG_C:
  case CK_LANG_CPP: {
    size_t off, len, open;
    if (!decl_name(a, s, e, &off, &len, &open))
      return DQ_OK;
    int tp = type_prefix(a, s, off);
    if (tp < 0 || value_args(a, open))
      return DQ_OK;
    if (tp == 0) { /* constructor/destructor declared in its class */
      if (a->lang != CK_LANG_CPP || f->def < 0 || !kind_in(dk, cpp_cls))
        return DQ_OK;
      const ck_scope *cs = &a->sc->v[f->def];
      size_t b = off + (a->view[off] == '~');
      if (off + len - b != cs->name_len ||
          memcmp(a->src + b, a->src + cs->name_off, cs->name_len) != 0)
        return DQ_OK;
    }
    return add_decl(d, off, len, "prototype", f->def);
  }
  case CK_LANG_JAVA: {
    size_t off, len, open;
    if (f->def < 0 || !kind_in(dk, java_cls) ||
        !decl_name(a, s, e, &off, &len, &open))
      return DQ_OK;
    if (type_prefix(a, s, off) <= 0 || value_args(a, open))
      return DQ_OK;
    return add_decl(d, off, len, "method", f->def);
  }
  case CK_LANG_RUST:
    if (!dmatch(d, D_RUST, s, e, &ov))
      return DQ_OK;
    return add_decl(d, ov[2], ov[3] - ov[2],
                    !strcmp(dk, "trait") || !strcmp(dk, "impl") ? "method"
                                                                : "function",
                    f->def);
  case CK_LANG_JS:
  case CK_LANG_TS:
    if (dmatch(d, D_TSFN, s, e, &ov))
      return add_decl(d, ov[2], ov[3] - ov[2], "function", f->def);
    if (f->direct && f->def >= 0 && kind_in(dk, ts_cls) &&
        dmatch(d, D_TSMETH, s, e, &ov) && !value_args(a, ov[4]))
      return add_decl(d, ov[2], ov[3] - ov[2], "method", f->def);
    return DQ_OK;
  case CK_LANG_GO:
    if (f->direct && !strcmp(dk, "interface") && dmatch(d, D_GO, s, e, &ov))
      return add_decl(d, ov[2], ov[3] - ov[2], "method", f->def);
    return DQ_OK;
  default:
    return DQ_OK;
  }
}

/* At the '{' at open (scope index s, or -1) in frame f, with view[seg..open)
 * the statement before it: a named enum's enumerators, a Rust struct's
 * fields, a C/C++ unnamed enum's enumerators or unnamed struct/union (*agg),
 * and variables whose initializer the brace opens ("int v[] = {1, 2};"). */
static dq_status brace_decls(dstate *d, size_t seg, size_t open, int s,
                             const dframe *f, int tail, int *agg) {
  sym_state *a = d->a;
  const char *v = a->view;
  ck_lang l = a->lang;
  int c_like = l == CK_LANG_C || l == CK_LANG_CPP || l == CK_LANG_JAVA ||
               l == CK_LANG_CSHARP;
  if (s >= 0) {
    const ck_scope *sc = &a->sc->v[s];
    if (!strcmp(sc->kind, "enum") &&
        (c_like || l == CK_LANG_TS || l == CK_LANG_JS || l == CK_LANG_RUST))
      return comma_members(d, open, sc->close, 0, s);
    if (l == CK_LANG_RUST &&
        (!strcmp(sc->kind, "struct") || !strcmp(sc->kind, "union")))
      return comma_members(d, open, sc->close, 1, s);
    if (sc->is_func || !c_like)
      return DQ_OK;
  } else if (l == CK_LANG_C || l == CK_LANG_CPP) {
    size_t we = open, w = word_before(a, seg, &we);
    if (is_word(v + w, we - w, "enum"))
      return comma_members(d, open, close_of(a, open), 0, f->def);
    if (is_word(v + w, we - w, "struct") || is_word(v + w, we - w, "union")) {
      *agg = 1;
      return DQ_OK;
    }
  }
  if (!c_like)
    return DQ_OK;
  const char *vk = var_kind(a, f);
  if (!vk)
    return DQ_OK;
  int depth = 0; /* an initializer: '=' outside brackets */
  for (size_t i = seg; i < open; i++) {
    char ch = v[i];
    depth += ch == '(' || ch == '[' ? 1 : ch == ')' || ch == ']' ? -1 : 0;
    if (depth == 0 && ch == '=' && v[i + 1] != '=' && v[i + 1] != '>' &&
        (i == seg || !strchr("=!<>+-*/%&|^", v[i - 1]))) {
      dq_status st;
      var_statement(d, seg, open, vk, f->def, tail, &st);
      return st;
    }
  }
  return DQ_OK;
}

static dq_status compile(dstate *d) {
  const char *pat[D_N] = {0};
  switch (d->a->lang) {
  case CK_LANG_RUST:
    pat[D_RUST] = "(?:^|[^\\w])fn\\s+([A-Za-z_]\\w*)";
    break;
  case CK_LANG_JS:
  case CK_LANG_TS:
    pat[D_TSFN] = "\\A(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?"
                  "(?:async\\s+)?function\\s*\\*?\\s*([A-Za-z_$][\\w$]*)";
    pat[D_TSMETH] =
        "\\A(?:@[\\w$.]+(?:\\([^()]*\\))?\\s*)*(?:(?:public|private|protected|"
        "static|abstract|async|readonly|declare|override|get|set)\\s+)*"
        "(#?[A-Za-z_$][\\w$]*)\\s*\\??\\s*(?:<[^()]*>)?\\s*" PARENS(
            2) "\\s*(?::\\s*[^;{}=]+?)?\\s*\\z";
    break;
  case CK_LANG_GO:
    pat[D_GO] = "\\A([A-Za-z_]\\w*)\\s*" PARENS(2) "[^()]*(?:\\([^()]*\\))?"
                                                   "[^()]*\\z";
    break;
  default:
    break;
  }
  for (int i = 0; i < D_N; i++)
    if (pat[i] && !(d->re[i] = ck_re(d->a->c, pat[i], PCRE2_DOTALL)))
      return DQ_ERR_INTERNAL;
  return DQ_OK;
}

dq_status sym_decls(sym_state *a, const paths *p) {
  if (a->lang == CK_LANG_PYTHON || a->lang == CK_LANG_NONE)
    return DQ_OK;
  dstate d;
  memset(&d, 0, sizeof d);
  d.a = a;
  d.p = p;
  dframe *stack = NULL;
  size_t n_stack = 0, cap_stack = 0;
  dq_status st = compile(&d);
  if (st != DQ_OK)
    goto out;
  if (a->n_defs)
    sym_sort_offsets(a->defs, a->n_defs);
  d.n_sorted = a->n_defs;
  if (sym_grow((void **)&stack, &cap_stack, 0, sizeof *stack)) {
    st = sym_oom(a);
    goto out;
  }
  stack[n_stack++] = (dframe){-1, 0, 1, 0, 0};
  const char *v = a->view;
  const ck_scopes *sc = a->sc;
  size_t si = 0, seg = 0;
  int pdepth = 0;
  int nl_ends = 0; /* TS/Go interface body: newline and ',' end members */
  int tail = 0;    /* the statement began at the '}' of a typed frame */
  int c_like = a->lang == CK_LANG_C || a->lang == CK_LANG_CPP ||
               a->lang == CK_LANG_JAVA || a->lang == CK_LANG_CSHARP;
  /* Bytes the walk looks at; the others are skipped in a tight loop. */
  unsigned char stop[256] = {0};
  stop['{'] = stop['}'] = stop['('] = stop[')'] = stop[';'] = 1;
  stop[','] = stop['\n'] = 2; /* only in interface bodies (nl_ends) */
  for (size_t i = 0; i < a->n && st == DQ_OK; i++) {
    while (i < a->n && (stop[(unsigned char)v[i]] == 0 ||
                        (stop[(unsigned char)v[i]] == 2 && !nl_ends)))
      i++;
    if (i >= a->n)
      break;
    char ch = v[i];
    if (ch == '{') {
      while (si < sc->n && sc->v[si].open < i)
        si++;
      int s = -1;
      if (si < sc->n && sc->v[si].open == i)
        s = (int)si++;
      const dframe *top = &stack[n_stack - 1];
      int agg = 0;
      st = brace_decls(&d, seg, i, s, top, tail, &agg);
      tail = 0;
      /* a type's body is no function body, even inside one: its fields and
       * method declarations are looked for (C, C++, Java, C#) */
      int type = s >= 0 && c_like && kind_in(sc->v[s].kind, type_kinds);
      dframe nf = {s >= 0 ? s : top->def,
                   !type && (top->in_func || (s >= 0 && sc->v[s].is_func)),
                   s >= 0, agg,
                   (a->lang == CK_LANG_C || a->lang == CK_LANG_CPP) &&
                       (agg || (type && !sc->v[s].typedef_body))};
      if (sym_grow((void **)&stack, &cap_stack, n_stack, sizeof *stack)) {
        st = sym_oom(a);
        break;
      }
      stack[n_stack++] = nf;
    } else if (ch == '}') {
      if (n_stack > 1)
        tail = stack[--n_stack].typed;
    } else if (ch == '(') {
      pdepth++;
      continue;
    } else if (ch == ')') {
      pdepth--;
      continue;
    } else if (ch == ';' ||
               (nl_ends && pdepth <= 0 && (ch == '\n' || ch == ','))) {
      st = statement(&d, seg, i, &stack[n_stack - 1], tail);
      tail = 0;
    } else {
      continue;
    }
    seg = i + 1;
    pdepth = 0;
    const dframe *top = &stack[n_stack - 1];
    nl_ends = (a->lang == CK_LANG_TS || a->lang == CK_LANG_GO) &&
              top->direct && !top->in_func && top->def >= 0 &&
              !strcmp(sc->v[top->def].kind, "interface");
  }
out:
  free(stack);
  for (int i = 0; i < D_N; i++)
    pcre2_code_free(d.re[i]);
  return st;
}
