/*
 * xref_text.c - reading a member's site and a name's declarations from
 * source text for qualified xref lookups (xref_owner.c): the receiver
 * before a name (`a.b[i]->c.`, self/this, a bare name), whether an
 * occurrence of a name declares it and the types it names there, and
 * braces back to their opening. Patterns of the 14 code languages, not a
 * parser: it never fails, it only finds less. No index and no files here.
 */
#include "xref_int.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int xr_ident_char(int c) {
  return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

int xr_one_of(int ch, const char *set) { return ch && strchr(set, ch) != NULL; }

int xr_word_is(const char *s, size_t n, const char *w) {
  return strlen(w) == n && !memcmp(s, w, n);
}

int xr_word_in(const char *s, size_t n, const char *const *list) {
  for (; *list; list++)
    if (xr_word_is(s, n, *list))
      return 1;
  return 0;
}

static const char *const self_words[] = {"self",   "this", "$this", "Self",
                                         "static", "me",   NULL};

int xr_is_self(const char *s, size_t n) { return xr_word_in(s, n, self_words); }

/* Words that end a declaration's type on its left: `return b`, `case X`,
 * `var b` (a declaration, but of no stated type) ... */
static const char *const not_types[] = {
    "return",   "case",      "goto",      "new",      "delete",     "throw",
    "else",     "do",        "sizeof",    "typeof",   "instanceof", "in",
    "of",       "is",        "as",        "await",    "yield",      "not",
    "and",      "or",        "if",        "elif",     "while",      "for",
    "echo",     "print",     "var",       "let",      "val",        "auto",
    "def",      "func",      "fn",        "function", "import",     "from",
    "package",  "using",     "namespace", "extends",  "implements", "public",
    "private",  "protected", "internal",  "static",   "class",      "struct",
    "enum",     "union",     "interface", "assert",   "del",        "global",
    "nonlocal", "lambda",    "raise",     "except",   "with",       "when",
    "then",     "unless",    "until",     "end",      "break",      "continue",
    "default",  "export",    "typedef",   "extern",   "inline",     "go",
    "defer",    "select",    "switch",    "try",      "catch",      "finally",
    "out",      "ref",       "params",    "inout",    NULL};

/* Qualifiers between a declaration's type and its name. */
static const char *const decl_quals[] = {
    "const", "final",    "readonly", "volatile", "restrict",
    "mut",   "unsigned", "signed",   "register", NULL};

/* Words that declare a local without a type on the left (`var b = ...`). */
static const char *const decl_words[] = {"var", "let", "val", "auto", NULL};

/* ---- reading a site ------------------------------------------------------*/

/* Length of the member operator ending just before s[i] ("." "->" "::"
 * "?." "!!." "\\"), else 0. */
static size_t op_before(const char *s, size_t i) {
  if (i >= 2 && ((s[i - 2] == '-' && s[i - 1] == '>') ||
                 (s[i - 2] == ':' && s[i - 1] == ':') ||
                 (s[i - 2] == '?' && s[i - 1] == '.')))
    return 2;
  if (i >= 3 && s[i - 3] == '!' && s[i - 2] == '!' && s[i - 1] == '.')
    return 3;
  if (i >= 1 &&
      (s[i - 1] == '\\' || (s[i - 1] == '.' && (i < 2 || s[i - 2] != '.'))))
    return 1;
  return 0;
}

size_t xr_skip_space_back(const char *s, size_t i) {
  while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
    i--;
  return i;
}

/* The '(' or '[' that the ')' or ']' at line[close - 1] closes, walking
 * back: its offset, SIZE_MAX when there is none. (past_group walks the
 * other way.) */
static size_t group_open(const char *line, size_t close) {
  char cl = line[close - 1], op = cl == ')' ? '(' : '[';
  int depth = 0;
  for (size_t i = close - 1;; i--) {
    depth += line[i] == cl ? 1 : line[i] == op ? -1 : 0;
    if (depth == 0)
      return i;
    if (i == 0)
      return SIZE_MAX;
  }
}

/* The type a parenthesized cast ending at line[close] (just past its ')')
 * names, into type: `((Box *)p)`, `((Box) p)` (C, C++, Java, C#),
 * `static_cast<Box *>(p)` (C++), `(p as Box)` (TypeScript, C#). 0 when
 * the parentheses hold something else (a call, a dereference). */
static int cast_type(const char *line, size_t close, char *type) {
  size_t open = group_open(line, close), a = 0, e = 0;
  if (open == SIZE_MAX)
    return 0;
  /* f((T *)x)->m: the call's result, not x's */
  if (open > 0 && (xr_ident_char((unsigned char)line[open - 1]) ||
                   line[open - 1] == ')' || line[open - 1] == ']'))
    return 0;
  if (open > 0 && line[open - 1] == '.') { /* Go's x.(*T), x.(pkg.T) */
    a = open + 1;
    while (a < close && xr_one_of(line[a], " \t*"))
      a++;
    e = a;
    while (e < close &&
           (xr_ident_char((unsigned char)line[e]) || line[e] == '.'))
      e++;
    if (e != close - 1)
      return 0;
  } else if (line[open + 1] == '(') { /* (T *)p, (T)p */
    a = xr_skip_space(line, open + 2, close);
    e = a;
    while (e < close && (xr_ident_char((unsigned char)line[e]) ||
                         line[e] == ':' || line[e] == '.'))
      e++;
    size_t t = e;
    while (t < close && xr_one_of(line[t], " \t*&"))
      t++;
    if (t >= close || line[t] != ')')
      return 0;
  } else if (open > 0 && line[open - 1] == '>') { /* static_cast<T *>(p) */
    size_t g = open - 1, lt = g;
    while (lt > 0 && line[lt] != '<')
      lt--;
    if (line[lt] != '<' || lt < 4 || memcmp(line + lt - 4, "cast", 4))
      return 0;
    a = xr_skip_space(line, lt + 1, g);
    e = a;
    while (e < g && (xr_ident_char((unsigned char)line[e]) || line[e] == ':'))
      e++;
  } else { /* (p as T) */
    const char *as = NULL;
    for (size_t k = open + 1; k + 4 <= close; k++)
      if (!memcmp(line + k, " as ", 4))
        as = line + k;
    if (!as)
      return 0;
    a = xr_skip_space(line, (size_t)(as - line) + 4, close);
    e = a;
    while (e < close && xr_ident_char((unsigned char)line[e]))
      e++;
  }
  /* the last part of a qualified name */
  for (size_t k = e; k > a; k--)
    if (line[k - 1] == ':' || line[k - 1] == '.') {
      a = k;
      break;
    }
  if (e <= a || e - a >= XR_NAME_BYTES ||
      !xr_ident_char((unsigned char)line[a]) || isdigit((unsigned char)line[a]))
    return 0;
  memcpy(type, line + a, e - a);
  type[e - a] = '\0';
  return 1;
}

/* The function a call ending at line[close] (just past its ')') calls,
 * into name: `get(p)`, `a.get(i)`, `get<T>(x)` is not read. 0 when the
 * parentheses follow no name (a parenthesized expression). */
static int call_name(const char *line, size_t close, char *name, int *bare,
                     size_t *at) {
  size_t i = group_open(line, close);
  if (i == SIZE_MAX)
    return 0;
  size_t e = xr_skip_space_back(line, i), a = e;
  while (a > 0 && xr_ident_char((unsigned char)line[a - 1]))
    a--;
  if (a == e || e - a >= XR_NAME_BYTES || isdigit((unsigned char)line[a]) ||
      xr_word_in(line + a, e - a, not_types))
    return 0;
  memcpy(name, line + a, e - a);
  name[e - a] = '\0';
  *bare = !op_before(line, a);
  *at = a;
  return 1;
}

static void receiver(const char *line, size_t pos, xr_rcv *r, int depth);

/* A parenthesized name ending at line[close] (just past its ')'): `(*pp)`,
 * `(p)`, not a call's parentheses: the name's bytes line[*a..*e) and the
 * '(' at *open. 1 when found. */
static int paren_name(const char *line, size_t close, size_t *a, size_t *e,
                      size_t *open) {
  size_t i = xr_skip_space_back(line, close - 1), k;
  k = i;
  while (k > 0 && xr_ident_char((unsigned char)line[k - 1]))
    k--;
  if (k == i || isdigit((unsigned char)line[k]))
    return 0;
  *a = k;
  *e = i;
  k = xr_skip_space_back(line, k);
  while (k > 0 && line[k - 1] == '*')
    k = xr_skip_space_back(line, k - 1);
  if (k == 0 || line[k - 1] != '(')
    return 0;
  *open = k - 1;
  return !(*open > 0 && (xr_ident_char((unsigned char)line[*open - 1]) ||
                         line[*open - 1] == ')' || line[*open - 1] == ']'));
}

/* The chain a call's name at line[at] is called on ("a.b" for a.b.get(),
 * "self" for self.get()) into out; "" when it is no chain. */
static void call_on(const char *line, size_t at, char *out) {
  xr_rcv on;
  receiver(line, at, &on, 1);
  out[0] = '\0';
  if ((on.k != XR_RCV_NAME && on.k != XR_RCV_SELF) || on.cast[0] || on.call[0])
    return;
  for (int k = 0, o = 0; k < on.n && o < XR_FROM_BYTES; k++)
    o += snprintf(out + o, XR_FROM_BYTES - (size_t)o, "%s%s", k ? "." : "",
                  on.id[k]);
}

void xr_receiver(const char *line, size_t pos, xr_rcv *r) {
  receiver(line, pos, r, 0);
}

/* What stands before the name at line[pos]; depth 1: the receiver of a
 * call's name (not followed further). */
static void receiver(const char *line, size_t pos, xr_rcv *r, int depth) {
  r->n = 0;
  r->of_self = 0;
  r->cast[0] = '\0';
  r->call[0] = '\0';
  r->call_bare = 0;
  r->call_on[0] = '\0';
  r->k = XR_RCV_NONE;
  if (pos > 0 && line[pos - 1] == '@') {
    r->k = XR_RCV_SELF; /* Ruby @x, @@x */
    return;
  }
  size_t i = xr_skip_space_back(line, pos), k = op_before(line, i);
  if (!k)
    return;
  const char *id[XR_CHAIN_MAX];
  size_t len[XR_CHAIN_MAX];
  int m = 0;
  r->k = XR_RCV_EXPR; /* f().x, (*p).x, ::x, 1.5, a chain too long */
  for (;;) {
    i = xr_skip_space_back(line, i - k);
    while (i > 0 && line[i - 1] == ']') { /* a[i].x: a's element */
      if ((i = group_open(line, i)) == SIZE_MAX)
        return;
      i = xr_skip_space_back(line, i);
    }
    if (i > 0 && line[i - 1] == ')') { /* ((Box *)p)->x, get(p)->x */
      size_t at, na, ne, open;
      if (cast_type(line, i, r->cast))
        break;
      if (paren_name(line, i, &na, &ne, &open)) { /* (*pp)->x: pp's */
        if (m == XR_CHAIN_MAX || ne - na >= XR_NAME_BYTES)
          return;
        id[m] = line + na;
        len[m++] = ne - na;
        if (!(k = op_before(line, open)))
          break;
        i = open;
        continue;
      }
      if (depth > 0 || !call_name(line, i, r->call, &r->call_bare, &at))
        return;
      if (!r->call_bare)
        call_on(line, at, r->call_on);
      r->start = at;
      break;
    }
    size_t e = i;
    while (i > 0 && xr_ident_char((unsigned char)line[i - 1]))
      i--;
    if (i == e || isdigit((unsigned char)line[i]) || m == XR_CHAIN_MAX ||
        e - i >= XR_NAME_BYTES)
      return;
    id[m] = line + i;
    len[m++] = e - i;
    if (!(k = op_before(line, i)))
      break;
  }
  if (r->cast[0] || r->call[0]) { /* the names after are its members */
    for (int j = 0; j < m; j++) {
      memcpy(r->id[j], id[m - 1 - j], len[m - 1 - j]);
      r->id[j][len[m - 1 - j]] = '\0';
    }
    r->n = m;
    r->k = XR_RCV_NAME;
    return;
  }
  if (xr_word_is(id[m - 1], len[m - 1], "super") ||
      xr_word_is(id[m - 1], len[m - 1], "base"))
    return; /* inherited: not followed */
  for (int j = 0; j < m; j++) {
    memcpy(r->id[j], id[m - 1 - j], len[m - 1 - j]);
    r->id[j][len[m - 1 - j]] = '\0';
  }
  r->n = m;
  r->k = XR_RCV_NAME;
  r->start = (size_t)(id[m - 1] - line);
  if (xr_word_in(r->id[0], strlen(r->id[0]), self_words)) {
    r->of_self = 1;
    if (m == 1)
      r->k = XR_RCV_SELF;
  }
}

/* ---- declarations --------------------------------------------------------*/

void xr_cand_add(xr_cands *c, const char *p, size_t n) {
  if (n && n < XR_NAME_BYTES && c->k < XR_MAX_CANDS &&
      !isdigit((unsigned char)p[0])) {
    memcpy(c->name[c->k], p, n);
    c->name[c->k++][n] = '\0';
  }
}

size_t xr_skip_space(const char *s, size_t i, size_t end) {
  while (i < end && (s[i] == ' ' || s[i] == '\t'))
    i++;
  return i;
}

/* Reads `a.b::C` from s[i]: each part into c when all, else only the last;
 * returns the end. */
static size_t type_chain(const char *s, size_t i, size_t end, xr_cands *c,
                         int all) {
  const char *last = NULL;
  size_t last_n = 0;
  for (;;) {
    size_t a = i;
    while (i < end && xr_ident_char((unsigned char)s[i]))
      i++;
    if (i == a)
      break;
    last = s + a;
    last_n = i - a;
    if (all)
      xr_cand_add(c, last, last_n);
    if (i + 1 < end && s[i] == ':' && s[i + 1] == ':')
      i += 2;
    else if (i < end && (s[i] == '.' || s[i] == '\\'))
      i++;
    else
      break;
  }
  if (!all && last)
    xr_cand_add(c, last, last_n);
  return i;
}

/* Skips words of `list` and the characters of `chars` from s[i]. */
static size_t skip_words(const char *s, size_t i, size_t end,
                         const char *const *list, const char *chars) {
  for (;;) {
    i = xr_skip_space(s, i, end);
    if (i < end && xr_one_of(s[i], chars)) {
      i++;
      continue;
    }
    size_t a = i;
    while (i < end && xr_ident_char((unsigned char)s[i]))
      i++;
    if (i > a && i < end && !xr_ident_char((unsigned char)s[i]) &&
        xr_word_in(s + a, i - a, list))
      continue;
    return a;
  }
}

/* The run between a type and its name ("Box *b", "const Box &b"): a
 * pointer or reference sign with space on one side only ("a * b" and
 * "a*b" are products). */
static int decl_gap(const char *s, size_t e, size_t a) {
  size_t i = e, k = a;
  while (i < a && (s[i] == ' ' || s[i] == '\t'))
    i++;
  while (k > i && (s[k - 1] == ' ' || s[k - 1] == '\t'))
    k--;
  if (i == k) /* spaces only */
    return i > e;
  return (i > e) != (k < a);
}

/* Past the group that opens at s[i] (its first byte, '(' '[' or '<') and
 * closes at its matching byte, reading no further than lim and, when
 * one_line, not past the line: SIZE_MAX when it does not close. */
static size_t past_group(const char *s, size_t i, size_t lim, int one_line) {
  char open = s[i], close = open == '(' ? ')' : open == '[' ? ']' : '>';
  int depth = 0;
  do {
    depth += s[i] == open ? 1 : s[i] == close ? -1 : 0;
    i++;
  } while (i < lim && depth > 0 && !(one_line && s[i] == '\n'));
  return depth ? SIZE_MAX : i;
}

/* 1 when s[i] ends a statement's value: the text's or line's end, ';', a
 * comment, or in Go the '{' of `for ... range x {` and the ':' of `case v
 * := <-ch:`. */
static int value_end(const char *s, size_t i, size_t end, int go) {
  i = xr_skip_space(s, i, end);
  return i >= end || xr_one_of(s[i], ";\r\n#") ||
         (s[i] == '/' && i + 1 < end && s[i + 1] == '/') ||
         (go && (s[i] == '{' || s[i] == ':'));
}

/* A value that is a chain of names from s[i] to its statement's end (`a.b`,
 * `q->next`, `a.items[i].box`) into out, its names joined by '.'; else
 * out is "". */
static void value_chain(const char *s, size_t i, size_t end, int go,
                        char *out) {
  size_t o = 0;
  out[0] = '\0';
  for (;;) {
    size_t a = i;
    while (i < end && xr_ident_char((unsigned char)s[i]))
      i++;
    if (i == a || isdigit((unsigned char)s[a]) ||
        o + (i - a) + 2 > XR_FROM_BYTES)
      goto none;
    if (o)
      out[o++] = '.';
    memcpy(out + o, s + a, i - a);
    out[o += i - a] = '\0';
    while (i < end && s[i] == '[') /* an element: its container's type */
      if ((i = past_group(s, i, end, 1)) == SIZE_MAX)
        goto none;
    if (i + 1 < end &&
        ((s[i] == '-' && s[i + 1] == '>') || (s[i] == '?' && s[i + 1] == '.')))
      i += 2;
    else if (i + 1 < end && s[i] == '.' &&
             xr_ident_char((unsigned char)s[i + 1]))
      i++;
    else
      break;
  }
  if (value_end(s, i, end, go))
    return;
none:
  out[0] = '\0';
}

/* A value that is a call from s[i] to its statement's end (`get(x)`,
 * `a.b.make(1, 2)`, `new(Box)` is not one): the function's name into
 * c->call. 1 when found. */
static int call_value(const char *s, size_t i, size_t end, int go,
                      xr_cands *c) {
  xr_cands names = {0};
  size_t t = xr_skip_space(s, type_chain(s, i, end, &names, 1), end);
  if (!names.k || t >= end || s[t] != '(' ||
      xr_word_in(names.name[names.k - 1], strlen(names.name[names.k - 1]),
                 not_types))
    return 0;
  t = past_group(s, t, end - t > 4096 ? t + 4096 : end, 0);
  if (t == SIZE_MAX || !value_end(s, t, end, go))
    return 0;
  memcpy(c->call, names.name[names.k - 1], sizeof c->call);
  c->call_bare = names.k == 1;
  c->from[0] = '\0'; /* the call's receiver: a.b.get() is on "a.b" */
  for (int k = 0, o = 0; k + 1 < names.k; k++)
    o += snprintf(c->from + o, sizeof c->from - (size_t)o, "%s%s", k ? "." : "",
                  names.name[k]);
  return 1;
}

/* Go: a value ending in a type assertion `x.(*T)` from s[i] to its
 * statement's end: T into c; `x.(type)` (a type switch) sets c->tswitch
 * when single (one name declared). 1 when one was found. */
static int go_assert(const char *s, size_t i, size_t end, int single,
                     xr_cands *c) {
  size_t le = i;
  while (le < end && s[le] != '\n')
    le++;
  const char *p = memmem(s + i, le - i, ".(", 2);
  if (!p)
    return 0;
  size_t t = (size_t)(p - s) + 2;
  while (t < le && xr_one_of(s[t], " \t*[]"))
    t++;
  xr_cands here = {0};
  size_t e = type_chain(s, t, le, &here, 0);
  if (!here.k || e >= le || s[e] != ')' || !value_end(s, e + 1, le, 1))
    return 0;
  if (strcmp(here.name[0], "type")) {
    xr_cand_add(c, here.name[0], strlen(here.name[0]));
    return 1;
  }
  c->tswitch = single;
  return single;
}

/* Go: past what stands before a type's element type from s[t]: `*`, `[]`,
 * `[N]`, `map[K]` (its values), `chan`, `<-chan`, `chan<-`. */
static size_t go_elem(const char *s, size_t t, size_t end) {
  for (;;) {
    size_t w = t;
    while (w < end && xr_ident_char((unsigned char)s[w]))
      w++;
    if (xr_word_is(s + t, w - t, "map") && w < end && s[w] == '[') {
      if ((t = past_group(s, w, end, 1)) == SIZE_MAX)
        return end;
    } else if (xr_word_is(s + t, w - t, "chan")) {
      t = xr_skip_space(
          s, w + (w + 1 < end && s[w] == '<' && s[w + 1] == '-') * 2, end);
    } else if (t + 5 < end && !memcmp(s + t, "<-chan", 6)) {
      t += 2;
    } else if (t < end && xr_one_of(s[t], "*[]0123456789")) {
      t++;
    } else {
      return t;
    }
  }
}

/* xr_decl_at (xref_int.h): the patterns, first to match wins: `Box *b`
 * (a type word on the left: C, C++, Java, C#, PHP), `b: Box`, `b Box` in
 * Go, `b = Box(...)` / `b := &Box{}` / `b = new Box()` / `Box::new()`. */
int xr_decl_at(const char *s, size_t a, size_t b, size_t end, const char *lang,
               xr_cands *c) {
  static const char *const pre[] = {"new", "await", "mut", NULL};
  static const char *const ref_quals[] = {"mut", "const", "dyn", "impl", NULL};
  static const char *const colon_langs[] = {
      "python", "typescript", "javascript", "kotlin", "swift", "rust", NULL};
  int go = lang && !strcmp(lang, "go");
  int typed_colon = lang && xr_word_in(lang, strlen(lang), colon_langs);
  int assign_declares =
      lang && (!strcmp(lang, "python") || !strcmp(lang, "ruby"));
  size_t j = xr_skip_space(s, b, end);
  int declared = 0;
  /* Box *b, const Box &b, Box b = ..., Inv $o (C, C++, Java, C#, PHP);
   * var b, let mut b, JS const b (declarations of no stated type) */
  for (size_t i = a, gap_end = a, after_const = 0; !go;) {
    while (i > 0 && xr_one_of(s[i - 1], " \t*&"))
      i--;
    size_t e = i;
    while (i > 0 && xr_ident_char((unsigned char)s[i - 1]))
      i--;
    if (i == e) {
      declared = (int)after_const;
      break;
    }
    if (xr_word_in(s + i, e - i, decl_quals)) {
      after_const = xr_word_is(s + i, e - i, "const");
      gap_end = i;
      continue;
    }
    if (xr_word_in(s + i, e - i, decl_words)) {
      declared = 1;
      break;
    }
    int ends = j >= end || xr_one_of(s[j], ";,)=[:{/\r\n");
    if (!xr_word_in(s + i, e - i, not_types) && ends &&
        decl_gap(s, e, gap_end) &&
        (j >= end || s[j] != '=' || j + 1 >= end || s[j + 1] != '=')) {
      xr_cand_add(c, s + i, e - i);
      return XR_DECL_YES;
    }
    break;
  }
  /* b: Box (Python, TypeScript, Kotlin, Swift, Rust; in Go a composite
   * literal's key, in C a label or a bit field) */
  if (typed_colon && j < end && s[j] == ':' &&
      (j + 1 >= end || (s[j + 1] != ':' && s[j + 1] != '='))) {
    size_t t = skip_words(s, j + 1, end, ref_quals, "&*?\"'");
    t = xr_skip_space(s, type_chain(s, t, end, c, 0), end);
    while (t + 1 < end && s[t] == '|' && s[t + 1] != '|') /* A | B: each */
      t = xr_skip_space(
          s, type_chain(s, xr_skip_space(s, t + 1, end), end, c, 0), end);
    return c->k > 0 || declared ? XR_DECL_YES : XR_DECL_NONE;
  }
  /* b *Box, b []Box: parameters, receivers, var, struct fields (Go, where
   * a name followed by a type is always a declaration) */
  if (go && j > b && j < end &&
      (xr_ident_char((unsigned char)s[j]) || xr_one_of(s[j], "*[") ||
       (j + 5 < end && !memcmp(s + j, "<-chan", 6)))) {
    type_chain(s, go_elem(s, j, end), end, c, 0);
    if (c->k && !xr_word_in(c->name[0], strlen(c->name[0]), not_types))
      return XR_DECL_YES;
    c->k = 0;
  }
  /* b = Box(...), b := &Box{}, b = new Box(), b = Box::new(), Box.new;
   * b = a.items[i] (a chain: c->from); in Go also `v, ok := x.(*Box)`,
   * `switch v := x.(type)` and `for _, v := range a.items` */
  size_t t = j;
  int later = 0, multi = 0; /* Go: a name after a ',' / before one */
  if (go) {
    size_t p = xr_skip_space_back(s, a);
    later = p > 0 && s[p - 1] == ',';
    for (size_t q = p; q > 0 && s[q - 1] == ',' && c->nth < 16;) {
      c->nth++; /* its place among the names: a call's result */
      q = xr_skip_space_back(s, q - 1);
      while (q > 0 && xr_ident_char((unsigned char)s[q - 1]))
        q--;
      q = xr_skip_space_back(s, q);
    }
    while (t < end && s[t] == ',') {
      multi = 1;
      t = xr_skip_space(s, t + 1, end);
      while (t < end && xr_ident_char((unsigned char)s[t]))
        t++;
      t = xr_skip_space(s, t, end);
    }
  }
  int colon_eq = t + 1 < end && s[t] == ':' && s[t + 1] == '=';
  if (colon_eq)
    t += 2;
  else if (t < end && s[t] == '=' && (t + 1 >= end || s[t + 1] != '='))
    t++;
  else
    return declared ? XR_DECL_YES : XR_DECL_NONE;
  if (go) {
    size_t r = xr_skip_space(s, t, end), w;
    if (r + 1 < end && s[r] == '<' && s[r + 1] == '-') /* <-ch: its element */
      r = t = xr_skip_space(s, r + 2, end);
    w = r;
    while (w < end && xr_ident_char((unsigned char)s[w]))
      w++;
    if (xr_word_is(s + r, w - r, "range")) { /* the element: the value's */
      c->nth = 0;
      if (later || !multi) {
        size_t v = xr_skip_space(s, w, end);
        value_chain(s, v, end, 1, c->from);
        if (!c->from[0])
          call_value(s, v, end, 1, c);
      }
      return colon_eq ? XR_DECL_YES : XR_DECL_NONE;
    }
    if (!later && go_assert(s, r, end, !multi, c))
      return colon_eq ? XR_DECL_YES : c->k ? XR_DECL_ASSIGN : XR_DECL_NONE;
    if (later || multi) { /* v, err := f(): f's nth result */
      if (!call_value(s, r, end, 1, c) && !later) /* v, ok := m[k], <-ch */
        value_chain(s, r, end, 1, c->from);
      return colon_eq ? XR_DECL_YES : XR_DECL_NONE;
    }
    if ((xr_word_is(s + r, w - r, "new") || xr_word_is(s + r, w - r, "make")) &&
        w < end && s[w] == '(') { /* new(Box), make(chan *Box, n) */
      type_chain(s, go_elem(s, xr_skip_space(s, w + 1, end), end), end, c, 0);
      return colon_eq ? XR_DECL_YES : c->k ? XR_DECL_ASSIGN : XR_DECL_NONE;
    }
  }
  t = skip_words(s, t, end, pre, "&*");
  call_value(s, t, end, go, c);
  size_t e = xr_skip_space(s, type_chain(s, t, end, c, 1), end);
  if (!(e < end && xr_one_of(s[e], "({<")) &&
      !(c->k && !strcmp(c->name[c->k - 1], "new"))) {
    c->k = 0; /* b = other_variable: no type, but maybe a chain */
    value_chain(s, t, end, go, c->from);
  }
  if (declared || colon_eq || assign_declares)
    return XR_DECL_YES;
  return c->k ? XR_DECL_ASSIGN : XR_DECL_NONE;
}

/* 1 when s[a] looks commented out: its line has "//" or "/" "*" before
 * it, starts with "*" (a block comment's inner line) or, in Python and Ruby,
 * has a '#' before it; or it stands inside a "..." string that starts on
 * its line. */
static int in_comment(const char *s, size_t a, const char *lang) {
  size_t ls = a;
  while (ls > 0 && s[ls - 1] != '\n')
    ls--;
  size_t t = xr_skip_space(s, ls, a);
  if (t < a && s[t] == '*')
    return 1;
  int hash = lang && (!strcmp(lang, "python") || !strcmp(lang, "ruby"));
  int quoted = 0; /* inside "..." on its line (a format's "%p:") */
  for (size_t i = t; i < a; i++) {
    if (!quoted &&
        ((s[i] == '/' && i + 1 < a && (s[i + 1] == '/' || s[i + 1] == '*')) ||
         (hash && s[i] == '#')))
      return 1;
    if (s[i] == '\\')
      i++;
    else if (s[i] == '"')
      quoted = !quoted;
    else if (!quoted && s[i] == '\'' && i + 2 < a && s[i + 2] == '\'')
      i += 2; /* '"' */
    else if (!quoted && s[i] == '\'' && i + 3 < a && s[i + 1] == '\\' &&
             s[i + 3] == '\'')
      i += 3; /* '\"' */
  }
  return quoted;
}

/* The nearest declaration of the name v in s[0..end), else (unless
 * decl_only) its nearest typed assignment: its types in c. Returns 1 when
 * one was found. (In C `yaml_token_t *token;` gives the type, a later
 * `token = PEEK_TOKEN(parser);` none.) */
int xr_decl_find(const char *s, size_t end, const char *v, size_t vn,
                 const char *lang, int decl_only, xr_cands *c) {
  int found = 0;
  xr_cands assign = {0};
  for (size_t i = 0; i + vn <= end;) {
    const char *p = memmem(s + i, end - i, v, vn);
    if (!p)
      break;
    size_t a = (size_t)(p - s), b = a + vn;
    i = a + 1;
    if ((a > 0 && xr_ident_char((unsigned char)s[a - 1])) ||
        (b < end && xr_ident_char((unsigned char)s[b])))
      continue;
    if (in_comment(s, a, lang))
      continue;
    size_t k = op_before(s, a);
    if (k) { /* x.v: only self.v (an assignment in a constructor) */
      size_t e = a - k, st = e;
      while (st > 0 && xr_ident_char((unsigned char)s[st - 1]))
        st--;
      if (!xr_word_in(s + st, e - st, self_words))
        continue;
    }
    xr_cands here = {0};
    int d = xr_decl_at(s, a, b, end, lang, &here);
    here.at = a;
    if (d == XR_DECL_YES) {
      *c = here;
      found = 1;
    } else if (d == XR_DECL_ASSIGN)
      assign = here;
  }
  if (!found && !decl_only && assign.k) {
    *c = assign;
    found = 1;
  }
  return found;
}

/* Moves *k from just past a '}' to its '{', not counting braces in block
 * comments, after a // on their line or in character literals (Doxygen's
 * "@{" ... "@}" groups span struct members). 0 when none within b[stop..]. */
int xr_brace_open(const char *b, size_t stop, size_t *k) {
  int depth = 0;
  size_t i = *k;
  while (i > stop) {
    i--;
    if (b[i] == '/' && i > stop && b[i - 1] == '*') { /* a comment's end */
      i--;
      while (i > stop + 1 && !(b[i - 2] == '/' && b[i - 1] == '*'))
        i--;
      i = i >= stop + 2 ? i - 2 : stop;
      continue;
    }
    if (b[i] != '{' && b[i] != '}')
      continue;
    if (i > 0 && b[i - 1] == '\'' && b[i + 1] == '\'')
      continue;
    size_t ls = i;
    while (ls > 0 && b[ls - 1] != '\n')
      ls--;
    if (memmem(b + ls, i - ls, "//", 2))
      continue;
    depth += b[i] == '}' ? 1 : -1;
    if (depth == 0) {
      *k = i;
      return 1;
    }
  }
  return 0;
}

int xr_return_type(const char *s, size_t a, size_t b, size_t end,
                   const char *lang, int nth, xr_cands *c) {
  static const char *const ref_quals[] = {"mut", "const", "dyn", "impl", NULL};
  static const char *const after_params[] = {
      "python", "typescript", "javascript", "kotlin",
      "swift",  "rust",       "php",        NULL};
  int go = lang && !strcmp(lang, "go");
  size_t i = xr_skip_space(s, b, end), lim = end - i > 4096 ? i + 4096 : end;
  if (i < end && s[i] == '<') /* get<T>(...) */
    i = past_group(s, i, lim, 1);
  if (i >= end || s[i] != '(' ||
      (i = past_group(s, i, lim, 0)) == SIZE_MAX) /* past the parameters */
    return 0;
  i = xr_skip_space(s, i, end);
  if (nth && !(go && i < end && s[i] == '('))
    return 0; /* one result only */
  if (go) {   /* ) *Box {, ) (b *Box, err error) {, ) (*Box, error) { */
    if (i < end && s[i] == '(') {
      i = xr_skip_space(s, i + 1, end);
      for (int k = 0; k < nth; k++) { /* the nth result */
        while (i < lim && s[i] != ',' && s[i] != ')')
          i = xr_one_of(s[i], "([") ? past_group(s, i, lim, 0) : i + 1;
        if (i >= lim || s[i] != ',')
          return 0;
        i = xr_skip_space(s, i + 1, end);
      }
      size_t w = i;
      while (w < end && xr_ident_char((unsigned char)s[w]))
        w++;
      size_t x = xr_skip_space(s, w, end);
      if (w > i && x > w && x < end && !xr_one_of(s[x], ",)"))
        i = x; /* a result's name, then its type */
    }
    if (i >= end || s[i] == '{')
      return 0;
    type_chain(s, go_elem(s, i, end), end, c, 0);
    return c->k > 0;
  }
  if (lang && xr_word_in(lang, strlen(lang), after_params)) {
    if (i + 1 < end && s[i] == '-' && s[i + 1] == '>')
      i += 2;
    else if (i + 1 < end && s[i] == ':' && s[i + 1] != ':')
      i++;
    else
      return 0;
    i = skip_words(s, i, end, ref_quals, "&*?\"'");
    size_t w = type_chain(s, i, end, c, 0);
    if (c->k && !strcmp(c->name[0], "Optional") && w < end && s[w] == '[') {
      c->k = 0; /* Optional[Box] */
      type_chain(s, skip_words(s, w + 1, end, ref_quals, "\"'"), end, c, 0);
    }
    return c->k > 0;
  }
  /* the type before the name: Box *get(, Box *Owner::get( (C, C++, Java,
   * C#), also on the line above (GNU style) */
  size_t k = a;
  while (k >= 2 && s[k - 1] == ':' && s[k - 2] == ':') {
    k -= 2;
    while (k > 0 && xr_ident_char((unsigned char)s[k - 1]))
      k--;
  }
  while (k > 0 && xr_one_of(s[k - 1], " \t\r\n*&"))
    k--;
  size_t e = k;
  while (k > 0 && xr_ident_char((unsigned char)s[k - 1]))
    k--;
  if (k == e || xr_word_in(s + k, e - k, not_types) ||
      xr_word_in(s + k, e - k, decl_quals))
    return 0;
  xr_cand_add(c, s + k, e - k);
  return c->k > 0;
}

int xr_macro_type(const char *s, size_t b, size_t end, xr_cands *c) {
  size_t le = b;
  while (le < end && s[le] != '\n')
    le++;
  size_t i = b;
  if (i >= le || s[i] != '(' || (i = past_group(s, i, le, 1)) == SIZE_MAX)
    return 0; /* past the parameters */
  /* ((Box *)get(x)): the first '(' that holds a type and a ')' */
  for (i = xr_skip_space(s, i, le); i < le && s[i] == '(';
       i = xr_skip_space(s, i + 1, le)) {
    size_t t = xr_skip_space(s, i + 1, le), w = t;
    while (w < le && xr_ident_char((unsigned char)s[w]))
      w++;
    if (xr_word_is(s + t, w - t, "struct") ||
        xr_word_is(s + t, w - t, "union")) {
      t = xr_skip_space(s, w, le);
      for (w = t; w < le && xr_ident_char((unsigned char)s[w]);)
        w++;
    }
    size_t x = w;
    while (x < le && xr_one_of(s[x], " \t*"))
      x++;
    if (w > t && x < le && s[x] == ')' && x > w) {
      xr_cand_add(c, s + t, w - t);
      return c->k > 0;
    }
  }
  return 0;
}

int xr_case_type(const char *s, size_t at, size_t end, xr_cands *c) {
  size_t i = at, kase = SIZE_MAX;
  while (i < end && s[i] != '{' && s[i] != '\n')
    i++;
  int depth = 0;
  for (; i < end; i++) {
    char ch = s[i];
    if (ch == '"' || ch == '\'' || ch == '`') { /* a string or rune */
      for (i++; i < end && s[i] != ch && (ch == '`' || s[i] != '\n'); i++)
        if (s[i] == '\\' && ch != '`')
          i++;
    } else if (ch == '/' && i + 1 < end && s[i + 1] == '/') {
      while (i + 1 < end && s[i + 1] != '\n')
        i++;
    } else if (ch == '{') {
      depth++;
    } else if (ch == '}') {
      if (--depth <= 0)
        return 0; /* past the switch */
    } else if (depth == 1 && xr_ident_char((unsigned char)ch) &&
               (xr_skip_space_back(s, i) == 0 ||
                s[xr_skip_space_back(s, i) - 1] ==
                    '\n')) { /* a line's first word */
      size_t w = i;
      while (w < end && xr_ident_char((unsigned char)s[w]))
        w++;
      if (xr_word_is(s + i, w - i, "case"))
        kase = w;
      else if (xr_word_is(s + i, w - i, "default"))
        kase = SIZE_MAX;
      i = w - 1;
    }
  }
  if (kase == SIZE_MAX || depth < 1)
    return 0;
  size_t t = xr_skip_space(s, kase, end);
  while (t < end && xr_one_of(s[t], "*[]"))
    t++;
  xr_cands here = {0};
  t = xr_skip_space(s, type_chain(s, t, end, &here, 0), end);
  if (!here.k || t >= end || s[t] != ':') /* `case *A, *B:`: an interface */
    return 0;
  xr_cand_add(c, here.name[0], strlen(here.name[0]));
  return 1;
}
