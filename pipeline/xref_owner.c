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
 *     Go, `b = Box(...)`, `b := &Box{}`, `new Box`, Go's `new(Box)`; in C
 *     a typed assignment counts only without a declaration), or of the
 *     value it is set from: another chain (`p = q->next`, `v := a.items[i]`,
 *     Go's `range a.items`, `<-a.ch`, `v, ok := a.byName[k]`: elements of
 *     slices, maps and channels), a call (the function's declared result:
 *     `Box *get(`, `-> Box`, `): Box`, Go's `) (*Box, error)`; a C macro
 *     whose body casts, `((Box *)x)`; every definition of the name in the
 *     site's language must agree), a Go type assertion `x.(*Box)` or, in
 *     a type switch `switch v := x.(type)`, the case's one type; else the
 *     field a in the function's class, else a variable of the file; then
 *     each next name's declared type as a field of the one before; C
 *     typedef names stand for their struct's tag or the type they name
 *     ("declared type"). A call or cast may head the chain too
 *     (`get(p)->a.b`, `x.(*Box).n`);
 *   - a class or type that does not define the name itself: its bases'
 *     (`class S(Base):`, `extends`, `: public Base`, `< Base`, the types a
 *     Go struct embeds), a few levels up. In Python, Ruby, JavaScript and
 *     PHP a subclass that sets its base's attribute again shares it (the
 *     base's: its definition there, which ingest made the subclass's, is
 *     listed as a use), and self.x of a class none of whose bases defines
 *     x is that class's own;
 *   - otherwise, when no other scope defines the name, the owner ("only
 *     definition").
 * Sites that show another owner (another class's self, a receiver declared
 * as another type that defines the name, a local, a file in a language
 * that cannot name the owner's members) are left out and counted; the rest
 * are kept after the known ones, marked as not known. Generics, most
 * macros and other expressions as receivers (`(*p).count`, `(a ?: b).n`)
 * are not followed: those sites are not known. The text patterns (receivers,
 * declarations) are xref_text.c's; this file has the index lookups, the source
 * files, C typedef tags, base classes and the decision per site. Not the plain
 * lookup (xref.c), which runs first: this runs only when the symbol as
 * typed has no definition and no use.
 */
#include "pipeline_int.h"
#include "xref_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QN_MAX_PARTS 16
#define SRC_MAX_BYTES (64u << 20) /* source files read for their sites */
#define SRC_CACHE 16              /* files kept open at once */
#define SCAN_MAX_LINES 20000      /* declaration search above a site */
#define TOP_LEVEL_LINES 100       /* ... when the site is in no function */
#define NAME_CACHE 16             /* names' definitions kept */
#define TAG_CACHE 16              /* typedef names resolved to tags */
#define BASES_DEPTH 4             /* base classes followed */
#define VALUE_DEPTH 4             /* `a := b.c` declarations followed */
#define TAG_SCAN_BYTES 65536      /* braces of a typedef'd struct */
#define HEADER_BYTES 2048         /* a class header up to its body's '{' */

/* ---- names ---------------------------------------------------------------*/

typedef struct qname {
  char part[QN_MAX_PARTS][XR_NAME_BYTES];
  int n;
} qname;

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
    if (q->n == QN_MAX_PARTS || n >= XR_NAME_BYTES || (strict && n == 0))
      return 0;
    for (size_t i = 0; strict && i < n; i++)
      if (!xr_ident_char((unsigned char)p[i]))
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

/* The last part of s ("ns::Box" -> "Box"), pointing into s; *sep_at (may
 * be NULL) gets the offset of the separator before it (0 when none). */
static const char *split_last(const char *s, size_t *sep_at) {
  const char *last = s;
  size_t at = 0;
  for (const char *p = s; *p;) {
    size_t k = sep_len(p);
    if (k) {
      at = (size_t)(p - s);
      p += k;
      last = p;
    } else
      p++;
  }
  if (sep_at)
    *sep_at = at;
  return last;
}

/* The last part of a scope ("ns::Box" -> "Box"), pointing into scope. */
static const char *scope_last(const char *scope) {
  return split_last(scope, NULL);
}

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

/* Languages whose objects get attributes where they are assigned. */
static int dynamic_attrs(const char *lang) {
  static const char *const l[] = {"python", "ruby", "javascript", "php", NULL};
  return lang && xr_word_in(lang, strlen(lang), l);
}

/* Languages where a bare member name inside a method is the member. */
static int implicit_self(const char *lang) {
  static const char *const l[] = {"cpp",   "java", "csharp", "kotlin",
                                  "swift", "ruby", NULL};
  return lang && xr_word_in(lang, strlen(lang), l);
}

/* ---- source files --------------------------------------------------------*/

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
  if (!f->key || !pl_has_text_lines(key))
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

/* ---- the lookup's state --------------------------------------------------*/

typedef struct name_defs { /* definitions of a receiver's name, cached */
  char *name;
  dq_xref_hit *h;
  size_t n;
} name_defs;

typedef struct tag_cache { /* typedef name -> struct tag, "" for none */
  char type[XR_NAME_BYTES], tag[XR_NAME_BYTES];
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
  unsigned long used[SRC_CACHE]; /* when each was last asked for */
  unsigned long tick;
  const src_file *pinned; /* the site's file: its text is in use */
  int64_t doc;            /* the document whose symbols doc_syms holds */
  dq_xref_hit *doc_syms;
  size_t n_doc_syms;
  name_defs names[NAME_CACHE];
  int next_name;
  tag_cache tags[TAG_CACHE];
  int next_tag;
  xr_rcv rv; /* the site's receiver (too large for the stack frame) */
} owner_ctx;

static src_file *src_get(owner_ctx *c, const char *root, const char *path) {
  char key[PATH_MAX];
  if (snprintf(key, sizeof key, "%s/%s", root, path) >= (int)sizeof key)
    return NULL;
  int lru = -1;
  for (int i = 0; i < SRC_CACHE; i++) {
    if (c->files[i].key && !strcmp(c->files[i].key, key)) {
      c->used[i] = ++c->tick;
      return &c->files[i];
    }
    if (&c->files[i] != c->pinned && (lru < 0 || c->used[i] < c->used[lru]))
      lru = i;
  }
  src_file *f = &c->files[lru]; /* the least recently used, not pinned */
  c->used[lru] = ++c->tick;
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
  for (int i = 0; i < NAME_CACHE; i++)
    if (c->names[i].name && xr_word_is(name, n, c->names[i].name))
      return &c->names[i];
  name_defs *d = &c->names[c->next_name];
  c->next_name = (c->next_name + 1) % NAME_CACHE;
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
  if (xr_word_is(t, n, c->own))
    return 1;
  for (size_t i = 0; i < c->n_defs; i++) {
    const char *s = c->defs[i].scope;
    if (s && s[0] && xr_word_is(t, n, scope_last(s)))
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

/* The start of the line of definition d in its source file (*fp): SIZE_MAX
 * when the file or line is not there, or d's column is not in the file. */
static size_t hit_line(owner_ctx *c, const dq_xref_hit *d, src_file **fp) {
  src_file *f = *fp = src_get(c, d->root, d->path);
  size_t ls = f && f->buf ? src_line(f, d->line) : SIZE_MAX;
  if (ls == SIZE_MAX || d->col < 1 || (size_t)d->col - 1 > f->len - ls)
    return SIZE_MAX;
  return ls;
}

/* The record whose braces or keyword stand before the definition d (a C
 * typedef or field): `typedef struct tag name;`, `struct tag *name;` or
 * `} name;` after `struct tag {`. Its tag into tag ("" when the braces have
 * none); returns 2 for braces, 1 for a keyword only, 0 for neither. */
static int record_tag(owner_ctx *c, const dq_xref_hit *d, char *tag) {
  tag[0] = '\0';
  src_file *f;
  size_t ls = hit_line(c, d, &f);
  if (ls == SIZE_MAX)
    return 0;
  const char *b = f->buf;
  size_t at = ls + (size_t)d->col - 1, k = xr_skip_space_back(b, at);
  while (k > ls && b[k - 1] == '*')
    k = xr_skip_space_back(b, k - 1);
  int braces = k > 0 && b[k - 1] == '}';
  if (braces) { /* back over the braces */
    size_t stop = k > TAG_SCAN_BYTES ? k - TAG_SCAN_BYTES : 0;
    if (!xr_brace_open(b, stop, &k))
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
    if (!kw || (p > 0 && xr_ident_char((unsigned char)b[p - 1])) ||
        xr_ident_char((unsigned char)b[p + kw]))
      continue;
    kw_seen = 1;
    size_t q = xr_skip_space(b, p + kw, at), e = q;
    while (e < at && xr_ident_char((unsigned char)b[e]))
      e++;
    tag[0] = '\0';
    if (e > q && e - q < XR_NAME_BYTES) {
      memcpy(tag, b + q, e - q);
      tag[e - q] = '\0';
    }
  }
  return braces ? 2 : kw_seen;
}

/* A typedef of a type name (`typedef StackValue *StkId;`): that name into
 * tag, else tag stays "". */
static void typedef_word(owner_ctx *c, const dq_xref_hit *d, char *tag) {
  src_file *f;
  size_t ls = hit_line(c, d, &f);
  if (ls == SIZE_MAX)
    return;
  const char *b = f->buf;
  size_t k = ls + (size_t)d->col - 1;
  while (k > ls && xr_one_of(b[k - 1], " \t*"))
    k--;
  size_t e = k;
  while (k > ls && xr_ident_char((unsigned char)b[k - 1]))
    k--;
  size_t t = xr_skip_space_back(b, k);
  if (e > k && e - k < XR_NAME_BYTES && t >= ls + 7 &&
      !memcmp(b + t - 7, "typedef", 7)) {
    memcpy(tag, b + k, e - k);
    tag[e - k] = '\0';
  }
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
    if (!strcmp(nd->h[i].kind, "typedef") && !record_tag(c, &nd->h[i], tag))
      typedef_word(c, &nd->h[i], tag);
  tag_cache *tc = &c->tags[c->next_tag];
  c->next_tag = (c->next_tag + 1) % TAG_CACHE;
  snprintf(tc->type, sizeof tc->type, "%s", t);
  snprintf(tc->tag, sizeof tc->tag, "%s", tag);
}

/* The type of the definition d's line (a field or variable): 1 when found. */
static int def_type(owner_ctx *c, const dq_xref_hit *d, const char *lang,
                    xr_cands *out) {
  src_file *f = src_get(c, d->root, d->path);
  size_t st = f && f->buf ? src_line(f, d->line) : SIZE_MAX;
  if (st == SIZE_MAX)
    return 0;
  size_t e = src_line_end(f, st);
  if (xr_decl_find(f->buf + st, e - st, d->name, strlen(d->name), lang, 0,
                   out) &&
      out->k > 0)
    return 1;
  /* C: `} x;` after `struct Tag {` is a Tag, after `union {` a member of
   * the scope the union's fields are flattened into (d's own) */
  char tag[XR_NAME_BYTES];
  out->k = 0;
  if (record_tag(c, d, tag) == 2) {
    if (tag[0])
      xr_cand_add(out, tag, strlen(tag));
    else if (d->scope && d->scope[0])
      xr_cand_add(out, scope_last(d->scope), strlen(scope_last(d->scope)));
  }
  return out->k > 0;
}

/* Adds each name's typedef tag to t (C's `yaml_parser_t` is scope
 * `yaml_parser_s`). */
static void add_tags(owner_ctx *c, xr_cands *t) {
  char tag[XR_NAME_BYTES];
  for (int i = 0; i < t->k; i++) { /* the added too: typedefs of typedefs */
    typedef_tag(c, t->name[i], tag);
    if (tag[0] && strcmp(tag, t->name[i]))
      xr_cand_add(t, tag, strlen(tag));
  }
}

/* Go: the types a struct whose '{' is at f->buf[open] embeds: its lines
 * that hold a type name alone (`T`, `*T`, `pkg.T`, a tag or comment
 * after it), up to its '}', into out. */
static void go_embedded(const src_file *f, size_t open, xr_cands *out) {
  const char *b = f->buf;
  size_t i = open + 1;
  while (i < f->len && b[i] != '\n')
    i++;
  while (i < f->len && out->k < XR_MAX_CANDS) {
    size_t ls = ++i, le = src_line_end(f, ls);
    size_t t = xr_skip_space(b, ls, le);
    if (t < le && b[t] == '}')
      break;
    while (t < le && b[t] == '*')
      t++;
    size_t a = t, last = t;
    while (t < le && (xr_ident_char((unsigned char)b[t]) || b[t] == '.'))
      if (b[t++] == '.')
        last = t;
    size_t e = xr_skip_space(b, t, le);
    if (t > last && (e >= le || b[e] == '`' || b[e] == '/' || b[e] == '\r') &&
        !isdigit((unsigned char)b[a]))
      xr_cand_add(out, b + last, t - last);
    i = le;
  }
}

/* The names after class `name`'s own on its definition's line, up to a
 * '{' or a comment: its bases and interfaces (`class S(Base):`, `class S
 * extends Base implements I`, `class S : public Base`, `class S < Base`),
 * with a few extra words (generic arguments, metaclass=...) that name no
 * scope. Returns 1 when a definition of the class was found. */
static int class_bases(owner_ctx *c, const char *name, xr_cands *out) {
  static const char *const class_kinds[] = {
      "class", "struct", "interface", "record", "object", "trait", NULL};
  static const char *const braced[] = {
      "java", "csharp", "cpp", "c", "php", "typescript", "javascript", NULL};
  static const char *const skip[] = {
      "extends",   "implements", "public", "private",  "protected", "virtual",
      "internal",  "open",       "final",  "abstract", "sealed",    "where",
      "metaclass", "class",      "struct", "new",      NULL};
  const name_defs *nd = defs_of(c, name, strlen(name));
  int found = 0;
  out->k = 0;
  for (size_t i = 0; nd && i < nd->n && !found; i++) {
    const dq_xref_hit *d = &nd->h[i];
    if (!d->kind || !xr_word_in(d->kind, strlen(d->kind), class_kinds))
      continue;
    src_file *f;
    size_t ls = hit_line(c, d, &f);
    if (ls == SIZE_MAX)
      continue;
    size_t le = src_line_end(f, ls), p = ls + (size_t)d->col - 1 + strlen(name);
    if (p > le)
      continue;
    found = 1;
    const char *b = f->buf;
    const char *lang = dq_chunk_lang_for_path(d->path);
    /* where a body's '{' is due, the header may go on over lines (`class
     * S\n    extends Base\n{`), with comments between */
    int multi_line = lang && xr_word_in(lang, strlen(lang), braced);
    if (multi_line)
      le = f->len - p > HEADER_BYTES ? p + HEADER_BYTES : f->len;
    while (p < le && b[p] != '{' && b[p] != ';' &&
           (b[p] != '#' || multi_line)) {
      if ((b[p] == '/' && p + 1 < le && b[p + 1] == '/') || b[p] == '#') {
        while (p < le && b[p] != '\n')
          p++;
        continue;
      }
      if (b[p] == '/' && p + 1 < le && b[p + 1] == '*') {
        const char *e = memmem(b + p + 2, le - p - 2, "*/", 2);
        p = e ? (size_t)(e - b) + 2 : le;
        continue;
      }
      size_t a = p;
      while (p < le && xr_ident_char((unsigned char)b[p]))
        p++;
      if (p == a) {
        p++;
        continue;
      }
      if (!xr_word_in(b + a, p - a, skip))
        xr_cand_add(out, b + a, p - a);
    }
    if (p < le && b[p] == '{' && lang && !strcmp(lang, "go"))
      go_embedded(f, p, out);
  }
  return found;
}

/* The owner of type t's member through its bases, depth first up to a few
 * levels: 1 the owner (inherited), -1 another scope that defines it, 0
 * none. dynamic: a base that defines it shares it with its own bases (an
 * attribute set again in a subclass is the one its base introduced).
 * *known: t's own definition was found. */
static int owner_via_bases(owner_ctx *c, const char *t, int depth, int dynamic,
                           int *known) {
  xr_cands b;
  int k = class_bases(c, t, &b);
  if (known)
    *known = k;
  if (depth >= BASES_DEPTH)
    return 0;
  for (int i = 0; i < b.k; i++) {
    int o = owner_of_type(c, b.name[i], strlen(b.name[i]));
    if (o < 0 && dynamic &&
        owner_via_bases(c, b.name[i], depth + 1, dynamic, NULL) > 0)
      return 1;
    if (o)
      return o;
  }
  for (int i = 0; i < b.k; i++) {
    int o = owner_via_bases(c, b.name[i], depth + 1, dynamic, NULL);
    if (o)
      return o;
  }
  return 0;
}

/* owner_of_scope, then through the scope's bases. *known: the scope is a
 * class whose definition was found. In dynamic languages (dynamic_attrs)
 * a subclass that sets an attribute its base has set shares it: the
 * base's owner wins over the subclass's own definition. */
static int scope_owner(owner_ctx *c, const char *scope, int dynamic,
                       int *known) {
  *known = 0;
  int o = owner_of_scope(c, scope);
  if (o > 0 || !scope || !scope[0])
    return o;
  int b = owner_via_bases(c, scope_last(scope), 0, dynamic, known);
  return o < 0 && !(dynamic && b > 0) ? o : b;
}

/* The owner a list of type names gives: 1 ours, -1 another's, 0 none. */
static int owner_of_cands(owner_ctx *c, xr_cands *t, int dynamic) {
  add_tags(c, t);
  int other = 0, own[XR_MAX_CANDS], inherited = 0, ours = 0;
  for (int i = 0; i < t->k; i++) {
    int o = own[i] = owner_of_type(c, t->name[i], strlen(t->name[i]));
    ours |= o > 0;
    other |= o < 0;
  }
  if (ours) { /* `A | B` where B has its own or inherits another's: either */
    for (int i = 0; i < t->k && !other; i++)
      other =
          own[i] == 0 && owner_via_bases(c, t->name[i], 0, dynamic, NULL) < 0;
    return other ? 0 : 1;
  }
  for (int i = 0; i < t->k; i++) { /* a derived type's inherited member */
    int o = owner_via_bases(c, t->name[i], 0, dynamic, NULL);
    if (o > 0 && (dynamic || !other))
      return 1; /* (dynamic: shared with the base, as in scope_owner) */
    inherited |= o > 0 && own[i] == 0; /* `A | B`: one inherits ours */
    if (o < 0)
      other = 1;
  }
  return inherited ? 0 : other ? -1 : 0;
}

/* The type of the member `name` of a record among t's names (a field's
 * declared type), into out: 1 when found. */
static int own_field_type(owner_ctx *c, xr_cands *t, const char *name,
                          xr_cands *out) {
  out->k = 0;
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

/* own_field_type, else the same of t's bases, a few levels up (a field a
 * subclass inherits). */
static int field_type(owner_ctx *c, const xr_cands *t, const char *name,
                      xr_cands *out) {
  xr_cands types = *t, bases, b;
  for (int depth = 0; types.k > 0; depth++) {
    if (own_field_type(c, &types, name, out))
      return 1;
    if (depth == BASES_DEPTH)
      break;
    bases.k = 0;
    for (int i = 0; i < types.k; i++) {
      class_bases(c, types.name[i], &b);
      for (int k = 0; k < b.k; k++)
        xr_cand_add(&bases, b.name[k], strlen(b.name[k]));
    }
    types = bases;
  }
  return 0;
}

/* Where a site stands: the text of its function from the function's line
 * on, the language, the function's scope and the file's document. */
typedef struct site_ctx {
  const char *text;
  const char *lang;
  const char *scope;
  int64_t doc;
} site_ctx;

static int var_type(owner_ctx *c, const site_ctx *sc, size_t end, const char *v,
                    int depth, xr_cands *out);

/* The name an object-like C macro d stands for (`#define
 * sqlite3GlobalConfig sqlite3Config`, also in parentheses) into alias; ""
 * when its body is anything else. */
static void macro_alias(owner_ctx *c, const dq_xref_hit *d, char *alias) {
  alias[0] = '\0';
  src_file *f;
  size_t ls = hit_line(c, d, &f);
  if (ls == SIZE_MAX)
    return;
  size_t le = src_line_end(f, ls),
         p = ls + (size_t)d->col - 1 + strlen(d->name);
  const char *b = f->buf;
  if (p >= le || (b[p] != ' ' && b[p] != '\t'))
    return; /* NAME( is a function-like macro */
  p = xr_skip_space(b, p, le);
  int paren = p < le && b[p] == '(';
  size_t a = xr_skip_space(b, p + (size_t)paren, le), e = a;
  while (e < le && xr_ident_char((unsigned char)b[e]))
    e++;
  size_t t = xr_skip_space(b, e, le);
  if (paren)
    t = t < le && b[t] == ')' ? xr_skip_space(b, t + 1, le) : SIZE_MAX;
  if (e == a || e - a >= XR_NAME_BYTES || isdigit((unsigned char)b[a]) ||
      !(t == le || (t < le && b[t] == '/')))
    return;
  memcpy(alias, b + a, e - a);
  alias[e - a] = '\0';
}

/* A name no declaration in its function, class or file types: a C macro
 * that stands for a variable, else a file-level variable of another file
 * in the site's language family, when every such definition gives the
 * same type. */
static int global_type(owner_ctx *c, const site_ctx *sc, size_t end,
                       const char *v, int depth, xr_cands *out) {
  static const char *const var_kinds[] = {"variable", "constant", NULL};
  const name_defs *nd = defs_of(c, v, strlen(v));
  char alias[XR_NAME_BYTES] = "";
  for (size_t i = 0; nd && i < nd->n && !alias[0]; i++)
    if (nd->h[i].kind && !strcmp(nd->h[i].kind, "macro"))
      macro_alias(c, &nd->h[i], alias);
  if (alias[0])
    return strcmp(alias, v) && depth < VALUE_DEPTH &&
           var_type(c, sc, end, alias, depth + 1, out);
  unsigned fam = lang_family(sc->lang);
  xr_cands t;
  out->k = 0;
  for (size_t i = 0; nd && i < nd->n; i++) {
    const dq_xref_hit *d = &nd->h[i];
    const char *lang = dq_chunk_lang_for_path(d->path);
    if (!d->kind || !xr_word_in(d->kind, strlen(d->kind), var_kinds) ||
        (d->scope && d->scope[0]) || lang_family(lang) != fam)
      continue;
    t.k = 0;
    if (!def_type(c, d, lang, &t) ||
        (out->k && strcmp(out->name[0], t.name[0])))
      return out->k = 0;
    *out = t;
  }
  return out->k > 0;
}

static int value_type(owner_ctx *c, const site_ctx *sc, size_t end,
                      const char *from, int depth, xr_cands *out);
static int call_result(owner_ctx *c, const site_ctx *sc, size_t end,
                       const char *fn_in, int bare, const char *on_in, int nth,
                       int depth, xr_cands *out);

/* 1 when name is defined as a type, namespace or module somewhere. */
static int names_type(owner_ctx *c, const char *name) {
  static const char *const type_kinds[] = {
      "class",     "struct", "union", "enum", "interface",
      "record",    "object", "trait", "type", "typedef",
      "namespace", "module", "impl",  NULL};
  const name_defs *nd = defs_of(c, name, strlen(name));
  for (size_t i = 0; nd && i < nd->n; i++)
    if (nd->h[i].kind &&
        xr_word_in(nd->h[i].kind, strlen(nd->h[i].kind), type_kinds))
      return 1;
  return 0;
}

/* 1 when scope's last part is one of t's names. */
static int scope_in(const char *scope, const xr_cands *t) {
  if (!scope || !scope[0])
    return 0;
  for (int k = 0; k < t->k; k++)
    if (!strcmp(scope_last(scope), t->name[k]))
      return 1;
  return 0;
}

/* The type the function fn returns (Go: its nth result), into out: 1 when
 * every definition of fn as a function or method names one and they
 * agree (a name that two types' methods share with different results is
 * not known). on: the receiver's types when known, whose own methods are
 * taken when there are some; else bare (a call without a receiver) takes
 * the functions outside any type when there are some, a call with one
 * the methods. Only definitions in the caller's language family (fam)
 * count. */
static int call_type(owner_ctx *c, const char *fn, int bare, unsigned fam,
                     int nth, xr_cands *on, xr_cands *out) {
  static const char *const fn_kinds[] = {"function", "method", "prototype",
                                         "macro", NULL};
  if (on)
    add_tags(c, on); /* before defs_of: a later defs_of may drop its entry */
  const name_defs *nd = defs_of(c, fn, strlen(fn));
  int kinds = 0; /* 1: some outside a type, 2: some in one, 4: on's */
  for (size_t i = 0; nd && i < nd->n; i++)
    if (lang_family(dq_chunk_lang_for_path(nd->h[i].path)) == fam)
      kinds |= on && scope_in(nd->h[i].scope, on)    ? 4
               : nd->h[i].scope && nd->h[i].scope[0] ? 2
                                                     : 1;
  int want = kinds & 4 ? 4 : bare ? 1 : 2;
  out->k = 0;
  for (size_t i = 0; nd && i < nd->n; i++) {
    const dq_xref_hit *d = &nd->h[i];
    int is = want == 4                 ? scope_in(d->scope, on) ? 4 : 0
             : d->scope && d->scope[0] ? 2
                                       : 1;
    if (!d->kind || !xr_word_in(d->kind, strlen(d->kind), fn_kinds) ||
        lang_family(dq_chunk_lang_for_path(d->path)) != fam ||
        ((kinds & want) && is != want))
      continue;
    src_file *f;
    size_t ls = hit_line(c, d, &f);
    size_t a = ls + (size_t)d->col - 1, b = a + strlen(fn);
    xr_cands r = {0};
    if (ls == SIZE_MAX || b > f->len || !xr_word_is(f->buf + a, b - a, fn) ||
        !(strcmp(d->kind, "macro")
              ? xr_return_type(f->buf, a, b, f->len,
                               dq_chunk_lang_for_path(d->path), nth, &r)
              : xr_macro_type(f->buf, b, f->len, &r)) ||
        (out->k && strcmp(out->name[0], r.name[0])))
      return out->k = 0;
    *out = r;
  }
  return out->k > 0;
}

/* The type of the variable v at text[end]: its nearest declaration in
 * text[0..end) (the function up to the site): the type it names, the
 * case's type of a Go type switch's variable, the type of the chain or
 * call it is set from (a few levels); else a field of the function's
 * class (scope), else a variable of the site's file; when the function
 * declares no v, also global_type's. */
static int var_type(owner_ctx *c, const site_ctx *sc, size_t end, const char *v,
                    int depth, xr_cands *out) {
  out->from[0] = '\0';
  out->tswitch = 0;
  out->call[0] = '\0';
  out->call_bare = 0;
  int local = xr_decl_find(sc->text, end, v, strlen(v), sc->lang, 0, out);
  if (local) {
    /* Box(1) names a type, make_box(1) a function */
    if (out->k && (!out->call[0] || names_type(c, out->name[out->k - 1])))
      return 1;
    if (out->call[0])
      return call_result(c, sc, out->at, out->call, out->call_bare, out->from,
                         out->nth, depth, out);
    if (out->tswitch)
      return xr_case_type(sc->text, out->at, end, out);
    if (out->from[0]) {
      char from[XR_FROM_BYTES];
      memcpy(from, out->from, sizeof from);
      return depth < VALUE_DEPTH &&
             value_type(c, sc, out->at, from, depth + 1, out);
    }
  }
  const name_defs *nd = defs_of(c, v, strlen(v));
  for (int pass = 0; nd && pass < 2; pass++)
    for (size_t i = 0; i < nd->n; i++) {
      const dq_xref_hit *d = &nd->h[i];
      int in_class = sc->scope && d->scope && !strcmp(d->scope, sc->scope);
      int in_file = d->doc_id == sc->doc && (!d->scope || !d->scope[0]);
      out->k = 0;
      if ((pass == 0 ? in_class : in_file) &&
          def_type(c, d, dq_chunk_lang_for_path(d->path), out))
        return 1;
    }
  return !local && global_type(c, sc, end, v, depth, out);
}

/* The type a call's result has at text[end] (call_type), the receiver's
 * chain on ("a.b" for a.b.get(); "" none) typed first when it can be. */
static int call_result(owner_ctx *c, const site_ctx *sc, size_t end,
                       const char *fn_in, int bare, const char *on_in, int nth,
                       int depth, xr_cands *out) {
  char fn[XR_NAME_BYTES], on_chain[XR_FROM_BYTES];
  snprintf(fn, sizeof fn, "%s", fn_in); /* may be out's own */
  snprintf(on_chain, sizeof on_chain, "%s", on_in);
  xr_cands on = {0};
  int typed = !bare && on_chain[0] && depth < VALUE_DEPTH &&
              value_type(c, sc, end, on_chain, depth + 1, &on) && on.k;
  return call_type(c, fn, bare, lang_family(sc->lang), nth, typed ? &on : NULL,
                   out);
}

/* The type of names[j0..n) after t's (the type of names[j0 - 1]): each
 * name's declared type as a field of the one before. */
static int chain_rest(owner_ctx *c, const char (*names)[XR_NAME_BYTES], int j0,
                      int n, xr_cands *t) {
  xr_cands u;
  for (int j = j0; j < n; j++) {
    if (!field_type(c, t, names[j], &u))
      return 0;
    *t = u;
  }
  return 1;
}

/* The type of the first name of a chain at text[end]: self's (the
 * function's class), else the variable's. */
static int head_type(owner_ctx *c, const site_ctx *sc, size_t end,
                     const char *head, int depth, xr_cands *t) {
  t->k = 0;
  if (xr_is_self(head, strlen(head))) {
    if (!sc->scope || !sc->scope[0])
      return 0;
    xr_cand_add(t, scope_last(sc->scope), strlen(scope_last(sc->scope)));
    return 1;
  }
  return var_type(c, sc, end, head, depth, t);
}

/* The type of a declaration's value "a.b.c" (xr_cands.from) at
 * text[end]. */
static int value_type(owner_ctx *c, const site_ctx *sc, size_t end,
                      const char *from, int depth, xr_cands *out) {
  char names[XR_CHAIN_MAX][XR_NAME_BYTES];
  int n = 0;
  for (const char *p = from; *p && n < XR_CHAIN_MAX;) {
    size_t k = strcspn(p, ".");
    if (k >= XR_NAME_BYTES)
      return 0;
    memcpy(names[n], p, k);
    names[n++][k] = '\0';
    p += k + (p[k] == '.');
  }
  if (n == 0 || n == XR_CHAIN_MAX)
    return 0;
  return head_type(c, sc, end, names[0], depth, out) &&
         chain_rest(c, (const char(*)[XR_NAME_BYTES])names, 1, n, out);
}

/* 1: the site's owner is the query's (*via says how); -1: another's; 0:
 * not known. */
static int site_owner(owner_ctx *c, const dq_xref_hit *r, const char **via) {
  src_file *f = src_get(c, r->root, r->path);
  c->pinned = f; /* its text is read while other files are loaded */
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
  xr_rcv *rv = &c->rv;
  xr_receiver(f->buf + ls, pos, rv);
  xr_cands t = {0};
  int o = 0;
  switch (rv->k) {
  case XR_RCV_SELF: {
    int known;
    o = scope_owner(c, scope, dynamic_attrs(lang), &known);
    *via = "self";
    /* Python, Ruby, JS, PHP: self.x of a class none of whose bases
     * defines x is that class's own attribute, made where it is set */
    if (!o && known && dynamic_attrs(lang))
      return -1;
    break;
  }
  case XR_RCV_NONE:
    /* the site declares a parameter or local of the name, or one above it
     * in the function does: it shadows any member */
    if (xr_decl_at(f->buf, site, site + strlen(c->member), le, lang, &t) ==
        XR_DECL_YES)
      return -1;
    if (fn && xr_decl_find(f->buf + from_name, site - from_name, c->member,
                           strlen(c->member), lang, 1, &t))
      return -1;
    if (implicit_self(lang)) {
      int known;
      o = scope_owner(c, scope, dynamic_attrs(lang), &known);
      *via = "member";
    } else if (c->only_members)
      return -1; /* a local or global of the name (C, Python, Go, ...) */
    break;
  case XR_RCV_NAME: {
    /* Type.m, ns::Type::m, Outer.Inner.m: a chain of type names (not
     * gz.body.m, where body is a field that a type happens to share) */
    const char *last = rv->n ? rv->id[rv->n - 1] : "";
    if (rv->n && !rv->cast[0] && !rv->call[0] &&
        (rv->n == 1 || names_type(c, rv->id[0])))
      o = owner_of_type(c, last, strlen(last));
    *via = "qualified";
    if (o)
      break;
    *via = "declared type";
    /* the first name's type (self: the function's class; a cast's type),
     * then each member's declared type along the chain */
    int ok, j = 1;
    site_ctx sc = {f->buf + from, lang, scope, r->doc_id};
    if (rv->cast[0]) {
      xr_cand_add(&t, rv->cast, strlen(rv->cast));
      ok = 1;
      j = 0;
    } else if (rv->call[0]) {
      ok = call_result(c, &sc, ls + rv->start - from, rv->call, rv->call_bare,
                       rv->call_on, 0, 0, &t);
      j = 0;
    } else {
      ok = head_type(c, &sc, ls + rv->start - from, rv->id[0], 0, &t);
    }
    ok =
        ok && chain_rest(c, (const char(*)[XR_NAME_BYTES])rv->id, j, rv->n, &t);
    if (ok)
      o = owner_of_cands(c, &t, dynamic_attrs(lang));
    break;
  }
  case XR_RCV_EXPR:
    break;
  }
  if (o == 0 && c->unique) {
    *via = "only definition";
    return 1;
  }
  return o;
}

/* ---- the lookup ----------------------------------------------------------*/

static void ctx_free(owner_ctx *c) {
  dq_xref_hits_free(c->defs, c->n_defs);
  dq_xref_hits_free(c->doc_syms, c->n_doc_syms);
  for (int i = 0; i < SRC_CACHE; i++)
    src_free(&c->files[i]);
  for (int i = 0; i < NAME_CACHE; i++) {
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

/* 1 when hit a stands before hit b (path, line, column). */
static int hit_before(const dq_xref_hit *a, const dq_xref_hit *b) {
  int k = strcmp(a->path ? a->path : "", b->path ? b->path : "");
  return k ? k < 0 : a->line != b->line ? a->line < b->line : a->col < b->col;
}

/* Python, Ruby, JavaScript, PHP: an attribute a subclass sets again (ingest
 * made it the subclass's own definition, `self.mode = mode` in its
 * __init__) is the base's: moved from c->defs into the references, in
 * path/line order, as known ("self"). */
static dq_status add_subclass_sets(owner_ctx *c, dq_xref_hit **refs,
                                   size_t *n_refs, int **own,
                                   const char ***via) {
  static const char *const attr_kinds[] = {"field", "attribute", "property",
                                           NULL};
  size_t n_add = 0;
  int *take = calloc(c->n_defs ? c->n_defs : 1, sizeof *take);
  if (!take)
    return DQ_ERR_NOMEM;
  for (size_t i = 0; i < c->n_defs; i++) {
    const dq_xref_hit *d = &c->defs[i];
    int known;
    take[i] = d->kind && xr_word_in(d->kind, strlen(d->kind), attr_kinds) &&
              dynamic_attrs(dq_chunk_lang_for_path(d->path)) &&
              !scope_is(d->scope, &c->q, c->n_owner) &&
              scope_owner(c, d->scope, 1, &known) > 0;
    n_add += (size_t)take[i];
  }
  if (n_add == 0) {
    free(take);
    return DQ_OK;
  }
  size_t n = *n_refs + n_add;
  dq_xref_hit *r = calloc(n, sizeof *r);
  int *o = calloc(n, sizeof *o);
  const char **v = calloc(n, sizeof *v);
  if (!r || !o || !v) {
    free(take);
    free(r);
    free(o);
    free(v);
    return DQ_ERR_NOMEM;
  }
  /* merge: both lists are in path/line order */
  size_t a = 0, b = 0, k = 0;
  while (a < *n_refs || b < c->n_defs) {
    while (b < c->n_defs && !take[b])
      b++;
    int from_defs =
        b < c->n_defs && (a >= *n_refs || hit_before(&c->defs[b], &(*refs)[a]));
    if (!from_defs && a >= *n_refs)
      break;
    if (from_defs) {
      r[k] = c->defs[b];
      memset(&c->defs[b++], 0, sizeof c->defs[0]);
      o[k] = 1;
      v[k++] = "self";
    } else {
      r[k] = (*refs)[a];
      o[k] = (*own)[a];
      v[k++] = (*via)[a++];
    }
  }
  free(take);
  free(*refs);
  free(*own);
  free(*via);
  *refs = r;
  *own = o;
  *via = v;
  *n_refs = k;
  return DQ_OK;
}

int pl_xref_is_qualified(const char *symbol) {
  qname q;
  return qn_split(symbol, &q, 1) && q.n >= 2;
}

dq_status pl_xref_qualified(dq_index *idx, const char *symbol, const char *kind,
                            dq_xref_result *res) {
  owner_ctx *c = calloc(1, sizeof *c);
  dq_xref_hit *refs = NULL;
  size_t n_refs = 0, owner_len;
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
  split_last(symbol, &owner_len);
  res->owner = strndup(symbol, owner_len);
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
      c->only_members &= k && xr_word_in(k, strlen(k), member_kinds);
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
    own = calloc(n_refs ? n_refs : 1, sizeof *own);
    via = calloc(n_refs ? n_refs : 1, sizeof *via);
    if (!own || !via)
      goto done;
    for (size_t i = 0; i < n_refs; i++)
      own[i] = site_owner(c, &refs[i], &via[i]);
    if (add_subclass_sets(c, &refs, &n_refs, &own, &via) != DQ_OK)
      goto done;
    res->refs = calloc(n_refs ? n_refs : 1, sizeof *res->refs);
    res->via = calloc(n_refs ? n_refs : 1, sizeof *res->via);
    if (!res->refs || !res->via)
      goto done;
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
