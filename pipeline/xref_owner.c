/*
 * xref_owner.c - qualified lookups for `docqa xref`: "Box.count" (or
 * "ns::Box::count", "Inv#total") asks for the member `count` of Box, not
 * every name `count` in the index. Definitions are those of `count` whose
 * scope ends with the owner's parts ("Box" matches scope "ns::Box").
 * References carry no owner in the index (ingest sees names, not types),
 * so each site's owner is read from its source text, without a compiler:
 *   - self/this/@/$this/Self/static before the name, or in C++, Java, C#,
 *     Kotlin, Swift and Ruby the bare name, inside a function whose scope
 *     is a class: that class ("self"; "member" for the bare name, unless
 *     the site or the function above it declares a local or parameter of
 *     that name). Elsewhere a bare name is no field, property or method;
 *   - a receiver that names a type (Box.count, ns::Box::kMax): that type
 *     ("qualified");
 *   - a receiver chain a.b[i]->c: the type of a's nearest declaration
 *     above the site in the same function (`Box *b`, `b: Box`, `b Box` in
 *     Go, `b = Box(...)`, `b := &Box{}`, `new Box`; in C a typed
 *     assignment counts only without a declaration), else of the field a
 *     in the function's class, else of a variable of the file; then each
 *     next name's declared type as a field of the one before; C typedef
 *     names stand for their struct's tag ("declared type");
 *   - otherwise, when no other scope defines the name, the owner ("only
 *     definition").
 * Sites that show another owner (another class's self, a receiver declared
 * as another type that defines the name, a local, a file in a language
 * that cannot name the owner's members) are left out and counted; the rest
 * are kept after the known ones, marked as not known. Inheritance,
 * generics, macros and expressions as receivers (`f().count`) are not
 * followed: those sites are not known. Declarations in comments are
 * skipped by line (after a line comment's or a block comment's opening,
 * or on a line that starts with "*").
 * Not the plain lookup (xref.c), which runs first: this runs only when the
 * symbol as typed has no definition and no use.
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QN_MAX_PARTS 16
#define QN_PART_BYTES 128
#define SRC_MAX_BYTES (64u << 20) /* source files read for their sites */
#define SRC_CACHE 4               /* files kept open at once */
#define SCAN_MAX_LINES 20000      /* declaration search above a site */
#define TOP_LEVEL_LINES 100       /* ... when the site is in no function */
#define MAX_CANDS 8
#define CHAIN_MAX 8          /* names in a receiver a.b.c */
#define TAG_CACHE 16         /* typedef names resolved to tags */
#define TAG_SCAN_BYTES 65536 /* braces of a typedef'd struct */

/* ---- names ---------------------------------------------------------------*/

typedef struct qname {
  char part[QN_MAX_PARTS][QN_PART_BYTES];
  int n;
} qname;

static int ident_char(int c) {
  return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* Length of the separator at s ("::", "->", ".", "#", "\\"), else 0. */
static size_t sep_len(const char *s) {
  if ((s[0] == ':' && s[1] == ':') || (s[0] == '-' && s[1] == '>'))
    return 2;
  return s[0] == '.' || s[0] == '#' || s[0] == '\\' ? 1 : 0;
}

/* Splits s at its separators. strict: every part a non-empty identifier
 * (the query); else any text between separators (stored scopes). Returns 0
 * when s does not split so. */
static int qn_split(const char *s, qname *q, int strict) {
  q->n = 0;
  const char *p = s;
  for (;;) {
    const char *e = p;
    while (*e && !sep_len(e))
      e++;
    size_t n = (size_t)(e - p);
    if (q->n == QN_MAX_PARTS || n >= QN_PART_BYTES || (strict && n == 0))
      return 0;
    for (size_t i = 0; strict && i < n; i++)
      if (!ident_char((unsigned char)p[i]))
        return 0;
    memcpy(q->part[q->n], p, n);
    q->part[q->n++][n] = '\0';
    if (!*e)
      return 1;
    p = e + sep_len(e);
  }
}

/* 1 when scope's parts end with the owner's (all of owner's parts but its
 * last, the member's name). */
static int scope_is(const char *scope, const qname *owner, int n_owner) {
  qname s;
  if (!scope || !scope[0] || !qn_split(scope, &s, 0) || s.n < n_owner)
    return 0;
  for (int i = 0; i < n_owner; i++)
    if (strcmp(s.part[s.n - n_owner + i], owner->part[i]))
      return 0;
  return 1;
}

/* The last part of a scope ("ns::Box" -> "Box"), pointing into scope. */
static const char *scope_last(const char *scope) {
  const char *last = scope;
  for (const char *p = scope; *p;) {
    size_t k = sep_len(p);
    if (k) {
      p += k;
      last = p;
    } else
      p++;
  }
  return last;
}

static int one_of(int ch, const char *set) {
  return ch && strchr(set, ch) != NULL;
}

static int word_is(const char *s, size_t n, const char *w) {
  return strlen(w) == n && !memcmp(s, w, n);
}

static int word_in(const char *s, size_t n, const char *const *list) {
  for (; *list; list++)
    if (word_is(s, n, *list))
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

/* Languages whose code can name each other's members: C and C++; Java
 * and Kotlin; JavaScript and TypeScript; each other language alone. A bit
 * per family, 0 for no code language. */
static unsigned lang_family(const char *lang) {
  static const char *const fam[][3] = {{"c", "cpp", NULL},
                                       {"java", "kotlin", NULL},
                                       {"javascript", "typescript", NULL},
                                       {"python", NULL, NULL},
                                       {"ruby", NULL, NULL},
                                       {"go", NULL, NULL},
                                       {"rust", NULL, NULL},
                                       {"swift", NULL, NULL},
                                       {"csharp", NULL, NULL},
                                       {"php", NULL, NULL}};
  for (unsigned i = 0; lang && i < sizeof fam / sizeof fam[0]; i++)
    for (int k = 0; k < 3 && fam[i][k]; k++)
      if (!strcmp(lang, fam[i][k]))
        return 1u << i;
  return 0;
}

/* Languages where a bare member name inside a method is the member. */
static int implicit_self(const char *lang) {
  static const char *const l[] = {"cpp",   "java", "csharp", "kotlin",
                                  "swift", "ruby", NULL};
  return lang && word_in(lang, strlen(lang), l);
}

/* ---- source files
 * ----------------------------------------------------------*/

typedef struct src_file {
  char *key; /* root/path */
  char *buf;
  size_t len;
  size_t *line; /* byte offset of each line's start; line[i] is line i+1 */
  size_t n_lines;
} src_file;

static void src_free(src_file *f) {
  free(f->key);
  free(f->buf);
  free(f->line);
  memset(f, 0, sizeof *f);
}

/* Reads root/path whole; an unreadable, binary or oversized file is empty
 * (its sites are then not known). */
static void src_load(src_file *f, const char *key) {
  f->key = strdup(key);
  const char *dot = strrchr(key, '.');
  if (!f->key || (dot && (!strcmp(dot, ".pdf") || !strcmp(dot, ".docx"))))
    return;
  FILE *fp = fopen(key, "rb");
  if (!fp)
    return;
  long n = -1;
  if (!fseek(fp, 0, SEEK_END))
    n = ftell(fp);
  if (n >= 0 && (unsigned long)n <= SRC_MAX_BYTES && !fseek(fp, 0, SEEK_SET))
    f->buf = malloc((size_t)n + 1);
  if (f->buf && fread(f->buf, 1, (size_t)n, fp) == (size_t)n) {
    f->len = (size_t)n;
    f->buf[n] = '\0';
    size_t lines = 1;
    for (size_t i = 0; i < f->len; i++)
      lines += f->buf[i] == '\n';
    f->line = malloc(lines * sizeof *f->line);
    if (f->line) {
      f->line[f->n_lines++] = 0;
      for (size_t i = 0; i < f->len; i++)
        if (f->buf[i] == '\n')
          f->line[f->n_lines++] = i + 1;
    }
  }
  if (!f->line) {
    free(f->buf);
    f->buf = NULL;
    f->len = 0;
  }
  fclose(fp);
}

/* Start offset of line (1-based), or SIZE_MAX past the file. */
static size_t src_line(const src_file *f, int line) {
  if (line < 1 || (size_t)line > f->n_lines)
    return SIZE_MAX;
  return f->line[line - 1];
}

static size_t src_line_end(const src_file *f, size_t start) {
  const char *nl = memchr(f->buf + start, '\n', f->len - start);
  size_t e = nl ? (size_t)(nl - f->buf) : f->len;
  return e > start && f->buf[e - 1] == '\r' ? e - 1 : e;
}

/* ---- the lookup's state
 * ----------------------------------------------------*/

typedef struct name_defs { /* definitions of a receiver's name, cached */
  char *name;
  dq_xref_hit *h;
  size_t n;
} name_defs;

typedef enum { RCV_NONE, RCV_SELF, RCV_NAME, RCV_EXPR } rcv_kind;

/* The receiver before a member's name: RCV_NAME `a.b[i]->c.member` is the
 * chain a, b, c (copied: the site's file may leave the cache). */
typedef struct rcv {
  rcv_kind k;
  int n;
  char id[CHAIN_MAX][QN_PART_BYTES];
  int of_self;  /* id[0] is self/this */
  size_t start; /* offset of id[0] in its line */
} rcv;

typedef struct tag_cache { /* typedef name -> struct tag, "" for none */
  char type[QN_PART_BYTES], tag[QN_PART_BYTES];
} tag_cache;

typedef struct owner_ctx {
  dq_index *idx;
  qname q;         /* owner parts then the member's name */
  int n_owner;     /* q.n - 1 */
  const char *own; /* the owner's last part */
  const char *member;
  dq_xref_hit *defs; /* every definition of the member's name */
  size_t n_defs;
  int unique;        /* every one of them is the owner's */
  unsigned families; /* lang_family bits of the owner's definitions */
  int only_members;  /* each is a field, property, attribute or method:
                        named bare only where the language implies self */
  src_file files[SRC_CACHE];
  int next_file;
  int64_t doc; /* the document whose symbols doc_syms holds */
  dq_xref_hit *doc_syms;
  size_t n_doc_syms;
  name_defs names[16];
  int next_name;
  tag_cache tags[TAG_CACHE];
  int next_tag;
  rcv rv; /* the site's receiver (too large for the stack frame) */
} owner_ctx;

static src_file *src_get(owner_ctx *c, const char *root, const char *path) {
  char key[PATH_MAX];
  if (snprintf(key, sizeof key, "%s/%s", root, path) >= (int)sizeof key)
    return NULL;
  for (int i = 0; i < SRC_CACHE; i++)
    if (c->files[i].key && !strcmp(c->files[i].key, key))
      return &c->files[i];
  src_file *f = &c->files[c->next_file];
  c->next_file = (c->next_file + 1) % SRC_CACHE;
  src_free(f);
  src_load(f, key);
  return f->key ? f : NULL;
}

static dq_status doc_syms(owner_ctx *c, int64_t doc) {
  if (c->doc_syms && c->doc == doc)
    return DQ_OK;
  dq_xref_hits_free(c->doc_syms, c->n_doc_syms);
  c->doc_syms = NULL;
  c->n_doc_syms = 0;
  c->doc = doc;
  return dq_index_symbols_in_doc(c->idx, doc, &c->doc_syms, &c->n_doc_syms);
}

static const name_defs *defs_of(owner_ctx *c, const char *name, size_t n) {
  for (int i = 0; i < 16; i++)
    if (c->names[i].name && word_is(name, n, c->names[i].name))
      return &c->names[i];
  name_defs *d = &c->names[c->next_name];
  c->next_name = (c->next_name + 1) % 16;
  free(d->name);
  dq_xref_hits_free(d->h, d->n);
  memset(d, 0, sizeof *d);
  d->name = strndup(name, n);
  if (!d->name ||
      dq_index_symbols_find(c->idx, d->name, NULL, &d->h, &d->n) != DQ_OK) {
    free(d->name);
    memset(d, 0, sizeof *d);
    return NULL;
  }
  return d;
}

/* 1: a (type) name that is the owner; -1: a scope that defines the member
 * and is not the owner; 0: neither. */
static int owner_of_type(const owner_ctx *c, const char *t, size_t n) {
  if (word_is(t, n, c->own))
    return 1;
  for (size_t i = 0; i < c->n_defs; i++) {
    const char *s = c->defs[i].scope;
    if (s && s[0] && word_is(t, n, scope_last(s)))
      return -1;
  }
  return 0;
}

/* The same for a function's scope (self, this, a bare member). */
static int owner_of_scope(const owner_ctx *c, const char *scope) {
  if (!scope || !scope[0])
    return 0;
  if (scope_is(scope, &c->q, c->n_owner))
    return 1;
  for (size_t i = 0; i < c->n_defs; i++)
    if (c->defs[i].scope && !strcmp(c->defs[i].scope, scope))
      return -1;
  return 0;
}

/* ---- reading a site
 * ----------------------------------------------------------*/

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

static size_t skip_space_back(const char *s, size_t i) {
  while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
    i--;
  return i;
}

/* What stands before the name at line[pos]. */
static void receiver(const char *line, size_t pos, rcv *r) {
  r->n = 0;
  r->of_self = 0;
  r->k = RCV_NONE;
  if (pos > 0 && line[pos - 1] == '@') {
    r->k = RCV_SELF; /* Ruby @x, @@x */
    return;
  }
  size_t i = skip_space_back(line, pos), k = op_before(line, i);
  if (!k)
    return;
  const char *id[CHAIN_MAX];
  size_t len[CHAIN_MAX];
  int m = 0;
  r->k = RCV_EXPR; /* f().x, (*p).x, ::x, 1.5, a chain too long */
  for (;;) {
    i = skip_space_back(line, i - k);
    while (i > 0 && line[i - 1] == ']') { /* a[i].x: a's element */
      int depth = 0;
      do {
        i--;
        depth += line[i] == ']' ? 1 : line[i] == '[' ? -1 : 0;
      } while (i > 0 && depth > 0);
      if (depth)
        return;
      i = skip_space_back(line, i);
    }
    size_t e = i;
    while (i > 0 && ident_char((unsigned char)line[i - 1]))
      i--;
    if (i == e || isdigit((unsigned char)line[i]) || m == CHAIN_MAX ||
        e - i >= QN_PART_BYTES)
      return;
    id[m] = line + i;
    len[m++] = e - i;
    if (!(k = op_before(line, i)))
      break;
  }
  if (word_is(id[m - 1], len[m - 1], "super") ||
      word_is(id[m - 1], len[m - 1], "base"))
    return; /* inherited: not followed */
  for (int j = 0; j < m; j++) {
    memcpy(r->id[j], id[m - 1 - j], len[m - 1 - j]);
    r->id[j][len[m - 1 - j]] = '\0';
  }
  r->n = m;
  r->k = RCV_NAME;
  r->start = (size_t)(id[m - 1] - line);
  if (word_in(r->id[0], strlen(r->id[0]), self_words)) {
    r->of_self = 1;
    if (m == 1)
      r->k = RCV_SELF;
  }
}

/* ---- declarations
 * ------------------------------------------------------------*/

typedef struct cands { /* type names a declaration gives, best first */
  char name[MAX_CANDS][QN_PART_BYTES];
  int k;
} cands;

static void cand_add(cands *c, const char *p, size_t n) {
  if (n && n < QN_PART_BYTES && c->k < MAX_CANDS &&
      !isdigit((unsigned char)p[0])) {
    memcpy(c->name[c->k], p, n);
    c->name[c->k++][n] = '\0';
  }
}

static size_t skip_space(const char *s, size_t i, size_t end) {
  while (i < end && (s[i] == ' ' || s[i] == '\t'))
    i++;
  return i;
}

/* Reads `a.b::C` from s[i]: each part into c when all, else only the last;
 * returns the end. */
static size_t type_chain(const char *s, size_t i, size_t end, cands *c,
                         int all) {
  const char *last = NULL;
  size_t last_n = 0;
  for (;;) {
    size_t a = i;
    while (i < end && ident_char((unsigned char)s[i]))
      i++;
    if (i == a)
      break;
    last = s + a;
    last_n = i - a;
    if (all)
      cand_add(c, last, last_n);
    if (i + 1 < end && s[i] == ':' && s[i + 1] == ':')
      i += 2;
    else if (i < end && (s[i] == '.' || s[i] == '\\'))
      i++;
    else
      break;
  }
  if (!all && last)
    cand_add(c, last, last_n);
  return i;
}

/* Skips words of `list` and the characters of `chars` from s[i]. */
static size_t skip_words(const char *s, size_t i, size_t end,
                         const char *const *list, const char *chars) {
  for (;;) {
    i = skip_space(s, i, end);
    if (i < end && one_of(s[i], chars)) {
      i++;
      continue;
    }
    size_t a = i;
    while (i < end && ident_char((unsigned char)s[i]))
      i++;
    if (i > a && i < end && !ident_char((unsigned char)s[i]) &&
        word_in(s + a, i - a, list))
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

/* What the text around the name at s[a..b) says of it (s[0..end)):
 * DECL_NONE nothing, DECL_YES a declaration (a parameter, a local, a
 * field), DECL_ASSIGN an assignment that is no declaration in its
 * language but shows a type (`b = Box(1)` in C++). Types go to c, best
 * first (a declaration may give none: `var b = f()`). */
enum { DECL_NONE, DECL_YES, DECL_ASSIGN };
static int decl_at(const char *s, size_t a, size_t b, size_t end,
                   const char *lang, cands *c) {
  static const char *const pre[] = {"new", "await", "mut", NULL};
  static const char *const ref_quals[] = {"mut", "const", "dyn", "impl", NULL};
  int go = lang && !strcmp(lang, "go");
  int assign_declares =
      lang && (!strcmp(lang, "python") || !strcmp(lang, "ruby"));
  size_t j = skip_space(s, b, end);
  int declared = 0;
  /* Box *b, const Box &b, Box b = ..., Inv $o (C, C++, Java, C#, PHP);
   * var b, let mut b, JS const b (declarations of no stated type) */
  for (size_t i = a, gap_end = a, after_const = 0; !go;) {
    while (i > 0 && one_of(s[i - 1], " \t*&"))
      i--;
    size_t e = i;
    while (i > 0 && ident_char((unsigned char)s[i - 1]))
      i--;
    if (i == e) {
      declared = (int)after_const;
      break;
    }
    if (word_in(s + i, e - i, decl_quals)) {
      after_const = word_is(s + i, e - i, "const");
      gap_end = i;
      continue;
    }
    if (word_in(s + i, e - i, decl_words)) {
      declared = 1;
      break;
    }
    int ends = j >= end || one_of(s[j], ";,)=[:{/\r\n");
    if (!word_in(s + i, e - i, not_types) && ends && decl_gap(s, e, gap_end) &&
        (j >= end || s[j] != '=' || j + 1 >= end || s[j + 1] != '=')) {
      cand_add(c, s + i, e - i);
      return DECL_YES;
    }
    break;
  }
  /* b: Box (Python, TypeScript, Kotlin, Swift, Rust) */
  if (j < end && s[j] == ':' &&
      (j + 1 >= end || (s[j + 1] != ':' && s[j + 1] != '='))) {
    size_t t = skip_words(s, j + 1, end, ref_quals, "&*?\"'");
    type_chain(s, t, end, c, 0);
    return c->k > 0 || declared ? DECL_YES : DECL_NONE;
  }
  /* b *Box, b []Box: parameters, receivers, var, struct fields (Go, where
   * a name followed by a type is always a declaration) */
  if (go && j > b && j < end &&
      (ident_char((unsigned char)s[j]) || one_of(s[j], "*["))) {
    size_t t = j;
    while (t < end && one_of(s[t], "*[]"))
      t++;
    type_chain(s, t, end, c, 0);
    if (c->k && !word_in(c->name[0], strlen(c->name[0]), not_types))
      return DECL_YES;
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
    return declared ? DECL_YES : DECL_NONE;
  t = skip_words(s, t, end, pre, "&*");
  size_t e = skip_space(s, type_chain(s, t, end, c, 1), end);
  if (!(e < end && one_of(s[e], "({<")) &&
      !(c->k && !strcmp(c->name[c->k - 1], "new")))
    c->k = 0; /* b = other_variable: no type */
  if (declared || colon_eq || assign_declares)
    return DECL_YES;
  return c->k ? DECL_ASSIGN : DECL_NONE;
}

/* 1 when s[a] looks commented out: its line has "//" or "/" "*" before
 * it, starts with "*" (a block comment's inner line) or, in Python and Ruby,
 * has a '#' before it. Strings are not told apart (a "//" in one hides a
 * declaration after it on that line). */
static int in_comment(const char *s, size_t a, const char *lang) {
  size_t ls = a;
  while (ls > 0 && s[ls - 1] != '\n')
    ls--;
  size_t t = skip_space(s, ls, a);
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
static int decl_find(const char *s, size_t end, const char *v, size_t vn,
                     const char *lang, int decl_only, cands *c) {
  int found = 0;
  cands assign = {0};
  for (size_t i = 0; i + vn <= end;) {
    const char *p = memmem(s + i, end - i, v, vn);
    if (!p)
      break;
    size_t a = (size_t)(p - s), b = a + vn;
    i = a + 1;
    if ((a > 0 && ident_char((unsigned char)s[a - 1])) ||
        (b < end && ident_char((unsigned char)s[b])))
      continue;
    if (in_comment(s, a, lang))
      continue;
    size_t k = op_before(s, a);
    if (k) { /* x.v: only self.v (an assignment in a constructor) */
      size_t e = a - k, st = e;
      while (st > 0 && ident_char((unsigned char)s[st - 1]))
        st--;
      if (!word_in(s + st, e - st, self_words))
        continue;
    }
    cands here = {0};
    int d = decl_at(s, a, b, end, lang, &here);
    if (d == DECL_YES) {
      *c = here;
      found = 1;
    } else if (d == DECL_ASSIGN)
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
static int brace_open(const char *b, size_t stop, size_t *k) {
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

/* The record whose braces or keyword stand before the definition d (a C
 * typedef or field): `typedef struct tag name;`, `struct tag *name;` or
 * `} name;` after `struct tag {`. Its tag into tag ("" when the braces have
 * none); returns 2 for braces, 1 for a keyword only, 0 for neither. */
static int record_tag(owner_ctx *c, const dq_xref_hit *d, char *tag) {
  tag[0] = '\0';
  src_file *f = src_get(c, d->root, d->path);
  size_t ls = f && f->buf ? src_line(f, d->line) : SIZE_MAX;
  if (ls == SIZE_MAX || d->col < 1 || (size_t)d->col - 1 > f->len - ls)
    return 0;
  const char *b = f->buf;
  size_t at = ls + (size_t)d->col - 1, k = skip_space_back(b, at);
  while (k > ls && b[k - 1] == '*')
    k = skip_space_back(b, k - 1);
  int braces = k > 0 && b[k - 1] == '}';
  if (braces) { /* back over the braces */
    size_t stop = k > TAG_SCAN_BYTES ? k - TAG_SCAN_BYTES : 0;
    if (!brace_open(b, stop, &k))
      return 0;
    ls = k; /* the tag stands before the '{' */
    while (ls > 0 && b[ls - 1] != '\n' && b[ls - 1] != ';' && b[ls - 1] != '{')
      ls--;
    at = k;
  }
  /* the word after the last struct/union/enum in b[ls..at) */
  int kw_seen = 0;
  for (size_t p = ls; p + 4 < at; p++) {
    size_t kw = p + 6 < at && !memcmp(b + p, "struct", 6)  ? 6
                : p + 5 < at && !memcmp(b + p, "union", 5) ? 5
                : !memcmp(b + p, "enum", 4)                ? 4
                                                           : 0;
    if (!kw || (p > 0 && ident_char((unsigned char)b[p - 1])) ||
        ident_char((unsigned char)b[p + kw]))
      continue;
    kw_seen = 1;
    size_t q = skip_space(b, p + kw, at), e = q;
    while (e < at && ident_char((unsigned char)b[e]))
      e++;
    tag[0] = '\0';
    if (e > q && e - q < QN_PART_BYTES) {
      memcpy(tag, b + q, e - q);
      tag[e - q] = '\0';
    }
  }
  return braces ? 2 : kw_seen;
}

/* The struct/union tag behind a C typedef name ("yaml_parser_t" ->
 * "yaml_parser_s"), where the definitions' scopes name the tag. Empty when
 * t is no typedef or its record has no tag (then the scopes name t). */
static void typedef_tag(owner_ctx *c, const char *t, char *tag) {
  tag[0] = '\0';
  for (int i = 0; i < TAG_CACHE; i++)
    if (!strcmp(c->tags[i].type, t)) {
      strcpy(tag, c->tags[i].tag);
      return;
    }
  const name_defs *nd = defs_of(c, t, strlen(t));
  for (size_t i = 0; nd && i < nd->n && !tag[0]; i++)
    if (!strcmp(nd->h[i].kind, "typedef"))
      record_tag(c, &nd->h[i], tag);
  tag_cache *tc = &c->tags[c->next_tag];
  c->next_tag = (c->next_tag + 1) % TAG_CACHE;
  snprintf(tc->type, sizeof tc->type, "%s", t);
  snprintf(tc->tag, sizeof tc->tag, "%s", tag);
}

/* The type of the definition d's line (a field or variable): 1 when found. */
static int def_type(owner_ctx *c, const dq_xref_hit *d, const char *lang,
                    cands *out) {
  src_file *f = src_get(c, d->root, d->path);
  size_t st = f && f->buf ? src_line(f, d->line) : SIZE_MAX;
  if (st == SIZE_MAX)
    return 0;
  size_t e = src_line_end(f, st);
  if (decl_find(f->buf + st, e - st, d->name, strlen(d->name), lang, 0, out) &&
      out->k > 0)
    return 1;
  /* C: `} x;` after `struct Tag {` is a Tag, after `union {` a member of
   * the scope the union's fields are flattened into (d's own) */
  char tag[QN_PART_BYTES];
  out->k = 0;
  if (record_tag(c, d, tag) == 2) {
    if (tag[0])
      cand_add(out, tag, strlen(tag));
    else if (d->scope && d->scope[0])
      cand_add(out, scope_last(d->scope), strlen(scope_last(d->scope)));
  }
  return out->k > 0;
}

/* Adds each name's typedef tag to t (C's `yaml_parser_t` is scope
 * `yaml_parser_s`). */
static void add_tags(owner_ctx *c, cands *t) {
  char tag[QN_PART_BYTES];
  for (int i = 0, n = t->k; i < n; i++) {
    typedef_tag(c, t->name[i], tag);
    if (tag[0] && strcmp(tag, t->name[i]))
      cand_add(t, tag, strlen(tag));
  }
}

/* The owner a list of type names gives: 1 ours, -1 another's, 0 none. */
static int owner_of_cands(owner_ctx *c, cands *t) {
  add_tags(c, t);
  int other = 0;
  for (int i = 0; i < t->k; i++) {
    int o = owner_of_type(c, t->name[i], strlen(t->name[i]));
    if (o > 0)
      return 1;
    other |= o < 0;
  }
  return other ? -1 : 0;
}

/* The type of the member `name` of a record among t's names (a field's
 * declared type), into out: 1 when found. */
static int field_type(owner_ctx *c, cands *t, const char *name, cands *out) {
  add_tags(c, t); /* before defs_of: a later defs_of may drop its entry */
  const name_defs *nd = defs_of(c, name, strlen(name));
  for (size_t i = 0; nd && i < nd->n; i++) {
    const dq_xref_hit *d = &nd->h[i];
    if (!d->scope || !d->scope[0])
      continue;
    const char *last = scope_last(d->scope);
    for (int k = 0; k < t->k; k++)
      if (!strcmp(last, t->name[k])) {
        out->k = 0;
        if (def_type(c, d, dq_chunk_lang_for_path(d->path), out))
          return 1;
      }
  }
  return 0;
}

/* The type of the variable v at a site: its nearest declaration in
 * text[0..end) (the function up to the site), else a field of the
 * function's class (scope), else a variable of the site's file. */
static int var_type(owner_ctx *c, const char *text, size_t end, const char *v,
                    const char *lang, const char *scope, int64_t doc,
                    cands *out) {
  if (decl_find(text, end, v, strlen(v), lang, 0, out) && out->k)
    return 1;
  const name_defs *nd = defs_of(c, v, strlen(v));
  for (int pass = 0; nd && pass < 2; pass++)
    for (size_t i = 0; i < nd->n; i++) {
      const dq_xref_hit *d = &nd->h[i];
      int in_class = scope && d->scope && !strcmp(d->scope, scope);
      int in_file = d->doc_id == doc && (!d->scope || !d->scope[0]);
      out->k = 0;
      if ((pass == 0 ? in_class : in_file) &&
          def_type(c, d, dq_chunk_lang_for_path(d->path), out))
        return 1;
    }
  return 0;
}

/* 1: the site's owner is the query's (*via says how); -1: another's; 0:
 * not known. */
static int site_owner(owner_ctx *c, const dq_xref_hit *r, const char **via) {
  src_file *f = src_get(c, r->root, r->path);
  size_t ls = f && f->buf ? src_line(f, r->line) : SIZE_MAX;
  if (ls == SIZE_MAX || r->col < 1)
    return 0;
  size_t le = src_line_end(f, ls), pos = (size_t)r->col - 1;
  if (pos >= le - ls)
    return 0;
  const char *lang = dq_chunk_lang_for_path(r->path);
  unsigned fam = lang_family(lang);
  if (fam && c->families && !(fam & c->families))
    return -1; /* a language that cannot name the owner's members */
  /* the function around the site: its scope and first line */
  const dq_xref_hit *fn = NULL;
  if (r->caller && r->caller[0] && doc_syms(c, r->doc_id) == DQ_OK)
    for (size_t i = 0; i < c->n_doc_syms && c->doc_syms[i].line <= r->line; i++)
      if (!strcmp(c->doc_syms[i].name, r->caller))
        fn = &c->doc_syms[i];
  int first = fn ? fn->line : r->line - TOP_LEVEL_LINES;
  if (first < r->line - SCAN_MAX_LINES)
    first = r->line - SCAN_MAX_LINES;
  /* declarations from the function's line on (Go's receiver stands
   * before the name); shadowing locals from its name on (a one-line class
   * declares the member before it) */
  size_t from = src_line(f, first < 1 ? 1 : first), site = ls + pos;
  size_t from_name = from;
  if (fn && fn->line == first && fn->col > 1 &&
      from + (size_t)fn->col - 1 <= site)
    from_name += (size_t)fn->col - 1;
  const char *scope = fn ? fn->scope : NULL;
  rcv *rv = &c->rv;
  receiver(f->buf + ls, pos, rv);
  cands t = {0}, u;
  int o = 0;
  switch (rv->k) {
  case RCV_SELF:
    o = owner_of_scope(c, scope);
    *via = "self";
    break;
  case RCV_NONE:
    /* the site declares a parameter or local of the name, or one above it
     * in the function does: it shadows any member */
    if (decl_at(f->buf, site, site + strlen(c->member), le, lang, &t) ==
        DECL_YES)
      return -1;
    if (fn && decl_find(f->buf + from_name, site - from_name, c->member,
                        strlen(c->member), lang, 1, &t))
      return -1;
    if (implicit_self(lang)) {
      o = owner_of_scope(c, scope);
      *via = "member";
    } else if (c->only_members)
      return -1; /* a local or global of the name (C, Python, Go, ...) */
    break;
  case RCV_NAME: {
    const char *last = rv->id[rv->n - 1];
    o = owner_of_type(c, last, strlen(last));
    *via = "qualified";
    if (o)
      break;
    *via = "declared type";
    /* the first name's type (self: the function's class), then each
     * member's declared type along the chain */
    int ok;
    if (rv->of_self) {
      ok = scope && scope[0];
      if (ok)
        cand_add(&t, scope_last(scope), strlen(scope_last(scope)));
    } else {
      ok = var_type(c, f->buf + from, ls + rv->start - from, rv->id[0], lang,
                    scope, r->doc_id, &t);
    }
    for (int j = 1; ok && j < rv->n; j++) {
      ok = field_type(c, &t, rv->id[j], &u);
      t = u;
    }
    if (ok)
      o = owner_of_cands(c, &t);
    break;
  }
  case RCV_EXPR:
    break;
  }
  if (o == 0 && c->unique) {
    *via = "only definition";
    return 1;
  }
  return o;
}

/* ---- the lookup
 * ----------------------------------------------------------------*/

static void ctx_free(owner_ctx *c) {
  dq_xref_hits_free(c->defs, c->n_defs);
  dq_xref_hits_free(c->doc_syms, c->n_doc_syms);
  for (int i = 0; i < SRC_CACHE; i++)
    src_free(&c->files[i]);
  for (int i = 0; i < 16; i++) {
    free(c->names[i].name);
    dq_xref_hits_free(c->names[i].h, c->names[i].n);
  }
}

/* "Scope.member" for each scope that defines the member (at most 8), as
 * suggestions; none when no definition has a scope. */
static dq_status suggest_owners(owner_ctx *c, dq_xref_result *res) {
  res->suggest = calloc(c->n_defs ? c->n_defs : 1, sizeof *res->suggest);
  if (!res->suggest)
    return DQ_ERR_NOMEM;
  for (size_t i = 0; i < c->n_defs && res->n_suggest < 8; i++) {
    const char *s = c->defs[i].scope;
    if (!s || !s[0])
      continue;
    size_t n = strlen(s) + strlen(c->member) + 3;
    char *x = malloc(n);
    if (!x)
      return DQ_ERR_NOMEM;
    snprintf(x, n, "%s%s%s", s, strstr(s, "::") ? "::" : ".", c->member);
    int dup = 0;
    for (size_t k = 0; k < res->n_suggest; k++)
      dup |= !strcmp(res->suggest[k], x);
    if (dup)
      free(x);
    else
      res->suggest[res->n_suggest++] = x;
  }
  if (res->n_suggest == 0) { /* no scoped definition: close names instead */
    free(res->suggest);
    res->suggest = NULL;
  }
  return DQ_OK;
}

/* Offset of the last separator in s and its length in *n (0 when none). */
static size_t last_sep(const char *s, size_t *n) {
  size_t at = 0;
  *n = 0;
  for (size_t i = 0; s[i];) {
    size_t k = sep_len(s + i);
    if (k) {
      at = i;
      *n = k;
      i += k;
    } else
      i++;
  }
  return at;
}

int pl_xref_is_qualified(const char *symbol) {
  qname q;
  return qn_split(symbol, &q, 1) && q.n >= 2;
}

dq_status pl_xref_qualified(dq_index *idx, const char *symbol, const char *kind,
                            dq_xref_result *res) {
  owner_ctx *c = calloc(1, sizeof *c);
  dq_xref_hit *refs = NULL;
  size_t n_refs = 0, sep_n;
  int *own = NULL;
  const char **via = NULL;
  dq_status s = DQ_ERR_NOMEM;
  if (!c)
    return s;
  c->idx = idx;
  if (!qn_split(symbol, &c->q, 1) || c->q.n < 2) {
    free(c);
    return DQ_ERR_ARG;
  }
  c->n_owner = c->q.n - 1;
  c->own = c->q.part[c->n_owner - 1];
  c->member = c->q.part[c->n_owner];
  res->owner = strndup(symbol, last_sep(symbol, &sep_n));
  res->member = strdup(c->member);
  if (!res->member || !res->owner)
    goto done;
  if ((s = dq_index_symbols_find(idx, c->member, NULL, &c->defs, &c->n_defs)) !=
      DQ_OK)
    goto done;
  static const char *const member_kinds[] = {"field", "property", "attribute",
                                             "method", NULL};
  size_t n_own = 0;
  c->only_members = 1;
  for (size_t i = 0; i < c->n_defs; i++)
    if (scope_is(c->defs[i].scope, &c->q, c->n_owner)) {
      const char *k = c->defs[i].kind;
      n_own++;
      c->families |= lang_family(dq_chunk_lang_for_path(c->defs[i].path));
      c->only_members &= k && word_in(k, strlen(k), member_kinds);
    }
  c->unique = n_own == c->n_defs;
  if (n_own == 0) {
    s = suggest_owners(c, res);
    goto done;
  }
  if (!kind || strcmp(kind, "def")) {
    const char *rk = kind && !strcmp(kind, "call") ? "call" : NULL;
    if ((s = dq_index_refs_find(idx, c->member, rk, &refs, &n_refs)) != DQ_OK)
      goto done;
    s = DQ_ERR_NOMEM;
    res->refs = calloc(n_refs ? n_refs : 1, sizeof *res->refs);
    res->via = calloc(n_refs ? n_refs : 1, sizeof *res->via);
    own = calloc(n_refs ? n_refs : 1, sizeof *own);
    via = calloc(n_refs ? n_refs : 1, sizeof *via);
    if (!res->refs || !res->via || !own || !via)
      goto done;
    for (size_t i = 0; i < n_refs; i++)
      own[i] = site_owner(c, &refs[i], &via[i]);
    /* known first, then not known; another owner's are left out */
    for (int pass = 1; pass >= 0; pass--)
      for (size_t i = 0; i < n_refs; i++)
        if (own[i] == pass) {
          res->via[res->n_refs] = pass ? via[i] : NULL;
          res->refs[res->n_refs++] = refs[i];
          memset(&refs[i], 0, sizeof refs[i]);
          res->n_refs_known += (size_t)pass;
        }
    res->n_refs_other = n_refs - res->n_refs;
  }
  if (!kind || !strcmp(kind, "def")) {
    /* moved last: owner_of_* read every definition's scope */
    s = DQ_ERR_NOMEM;
    res->defs = calloc(n_own, sizeof *res->defs);
    if (!res->defs)
      goto done;
    for (size_t i = 0; i < c->n_defs; i++)
      if (scope_is(c->defs[i].scope, &c->q, c->n_owner)) {
        res->defs[res->n_defs++] = c->defs[i];
        memset(&c->defs[i], 0, sizeof c->defs[i]);
      }
  }
  s = DQ_OK;
done:
  free(own);
  free(via);
  dq_xref_hits_free(refs, n_refs);
  ctx_free(c);
  free(c);
  return s;
}
