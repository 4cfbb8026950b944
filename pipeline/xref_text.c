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

/* The type a parenthesized cast ending at line[close] (just past its ')')
 * names, into type: `((Box *)p)`, `((Box) p)` (C, C++, Java, C#),
 * `static_cast<Box *>(p)` (C++), `(p as Box)` (TypeScript, C#). 0 when
 * the parentheses hold something else (a call, a dereference). */
static int cast_type(const char *line, size_t close, char *type) {
  size_t i = close - 1; /* the ')' */
  int depth = 0;
  do { /* back to the matching '(' */
    depth += line[i] == ')' ? 1 : line[i] == '(' ? -1 : 0;
  } while (depth > 0 && i-- > 0);
  if (depth)
    return 0;
  size_t open = i, a = 0, e = 0;
  /* f((T *)x)->m: the call's result, not x's */
  if (open > 0 && (xr_ident_char((unsigned char)line[open - 1]) ||
                   line[open - 1] == ')' || line[open - 1] == ']'))
    return 0;
  if (line[open + 1] == '(') { /* (T *)p, (T)p */
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

/* What stands before the name at line[pos]. */
void xr_receiver(const char *line, size_t pos, xr_rcv *r) {
  r->n = 0;
  r->of_self = 0;
  r->cast[0] = '\0';
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
      int depth = 0;
      do {
        i--;
        depth += line[i] == ']' ? 1 : line[i] == '[' ? -1 : 0;
      } while (i > 0 && depth > 0);
      if (depth)
        return;
      i = xr_skip_space_back(line, i);
    }
    if (i > 0 && line[i - 1] == ')') { /* ((Box *)p)->x: a cast */
      if (!cast_type(line, i, r->cast))
        return;
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
  if (r->cast[0]) { /* the names after the cast are its members */
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

/* xr_decl_at (xref_int.h): the patterns, first to match wins: `Box *b`
 * (a type word on the left: C, C++, Java, C#, PHP), `b: Box`, `b Box` in
 * Go, `b = Box(...)` / `b := &Box{}` / `b = new Box()` / `Box::new()`. */
int xr_decl_at(const char *s, size_t a, size_t b, size_t end, const char *lang,
               xr_cands *c) {
  static const char *const pre[] = {"new", "await", "mut", NULL};
  static const char *const ref_quals[] = {"mut", "const", "dyn", "impl", NULL};
  int go = lang && !strcmp(lang, "go");
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
  /* b: Box (Python, TypeScript, Kotlin, Swift, Rust) */
  if (j < end && s[j] == ':' &&
      (j + 1 >= end || (s[j + 1] != ':' && s[j + 1] != '='))) {
    size_t t = skip_words(s, j + 1, end, ref_quals, "&*?\"'");
    type_chain(s, t, end, c, 0);
    return c->k > 0 || declared ? XR_DECL_YES : XR_DECL_NONE;
  }
  /* b *Box, b []Box: parameters, receivers, var, struct fields (Go, where
   * a name followed by a type is always a declaration) */
  if (go && j > b && j < end &&
      (xr_ident_char((unsigned char)s[j]) || xr_one_of(s[j], "*["))) {
    size_t t = j;
    while (t < end && xr_one_of(s[t], "*[]"))
      t++;
    type_chain(s, t, end, c, 0);
    if (c->k && !xr_word_in(c->name[0], strlen(c->name[0]), not_types))
      return XR_DECL_YES;
    c->k = 0;
  }
  /* b = Box(...), b := &Box{}, b = new Box(), b = Box::new(), Box.new */
  size_t t = j;
  int colon_eq = t + 1 < end && s[t] == ':' && s[t + 1] == '=';
  if (colon_eq)
    t += 2;
  else if (t < end && s[t] == '=' && (t + 1 >= end || s[t + 1] != '='))
    t++;
  else
    return declared ? XR_DECL_YES : XR_DECL_NONE;
  t = skip_words(s, t, end, pre, "&*");
  size_t e = xr_skip_space(s, type_chain(s, t, end, c, 1), end);
  if (!(e < end && xr_one_of(s[e], "({<")) &&
      !(c->k && !strcmp(c->name[c->k - 1], "new")))
    c->k = 0; /* b = other_variable: no type */
  if (declared || colon_eq || assign_declares)
    return XR_DECL_YES;
  return c->k ? XR_DECL_ASSIGN : XR_DECL_NONE;
}

/* 1 when s[a] looks commented out: its line has "//" or "/" "*" before
 * it, starts with "*" (a block comment's inner line) or, in Python and Ruby,
 * has a '#' before it. Strings are not told apart (a "//" in one hides a
 * declaration after it on that line). */
static int in_comment(const char *s, size_t a, const char *lang) {
  size_t ls = a;
  while (ls > 0 && s[ls - 1] != '\n')
    ls--;
  size_t t = xr_skip_space(s, ls, a);
  if (t < a && s[t] == '*')
    return 1;
  int hash = lang && (!strcmp(lang, "python") || !strcmp(lang, "ruby"));
  for (size_t i = t; i < a; i++)
    if ((s[i] == '/' && i + 1 < a && (s[i + 1] == '/' || s[i + 1] == '*')) ||
        (hash && s[i] == '#'))
      return 1;
  return 0;
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
