/*
 * sym_lines.c - the second half of code symbol extraction (see sym_code.c):
 * scope paths for symbols ("geo::Shape"), definitions that have no body
 * (#define, typedef, Go/TS/Kotlin/Swift type aliases, Rust tuple structs and
 * mod, arrow functions, Kotlin/Swift/PHP functions without a body, Ruby
 * attr_*; variables, constants, fields, properties and enumerators outside
 * function bodies in the languages sym_decl.c does not walk for them),
 * includes/imports from line regexes, and the identifier scan
 * that turns every remaining non-keyword identifier into a "call" or "use"
 * reference with its enclosing function as caller.
 */
#include "sym_int.h"

#include <string.h>

/* ---- names and scopes -------------------------------------------------- */

/* Index of the innermost scope holding offset, or -1 (scopes sorted by open,
 * properly nested: the holder is an ancestor of the last scope opened). */
/* The number of scopes opening at or before offset: the index of the
 * first one opening after it. */
static size_t scopes_opened(const sym_state *a, size_t off) {
  const ck_scopes *v = a->sc;
  size_t lo = 0, hi = v->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v->v[mid].open <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int scope_at(const sym_state *a, size_t off) {
  const ck_scopes *v = a->sc;
  int i = (int)scopes_opened(a, off) - 1;
  while (i >= 0 && v->v[i].close < off)
    i = v->v[i].parent;
  return i;
}

static char *join(const char *a, const char *sep, const char *b, size_t b_len) {
  size_t la = strlen(a), ls = la ? strlen(sep) : 0;
  char *s = malloc(la + ls + b_len + 1);
  if (!s)
    return NULL;
  memcpy(s, a, la);
  memcpy(s + la, sep, ls);
  memcpy(s + la + ls, b, b_len);
  s[la + ls + b_len] = '\0';
  return s;
}

/* Splits a possibly qualified name "A::B::f" into qualifier and last part. */
void sym_split_qual(const char *s, size_t len, size_t *qual_len,
                    size_t *last_off) {
  *qual_len = 0;
  *last_off = 0;
  for (size_t i = 0; i + 1 < len; i++)
    if (s[i] == ':' && s[i + 1] == ':') {
      size_t q = i;
      while (q > 0 && sym_blank(s[q - 1]))
        q--;
      *qual_len = q;
      size_t k = i + 2;
      while (k < len && sym_blank(s[k]))
        k++;
      *last_off = k;
      i++;
    }
}

dq_status sym_build_paths(sym_state *a, paths *p) {
  size_t n = a->sc->n;
  p->path = calloc(n ? n : 1, sizeof *p->path);
  p->scope = calloc(n ? n : 1, sizeof *p->scope);
  if (!p->path || !p->scope)
    return sym_oom(a);
  for (size_t i = 0; i < n; i++) {
    const ck_scope *s = &a->sc->v[i];
    const char *pp = s->parent >= 0 ? p->path[s->parent] : "";
    const char *nm = a->src + s->name_off;
    size_t ql, lo;
    sym_split_qual(nm, s->name_len, &ql, &lo);
    p->scope[i] = ql ? join(pp, a->sep, nm, ql)
                  : s->recv_len
                      ? join(pp, a->sep, a->src + s->recv_off, s->recv_len)
                      : strdup(pp);
    if (!p->scope[i])
      return sym_oom(a);
    size_t k = s->close + 1, e; /* "typedef struct {...} name_t;": name_t */
    while (!s->name_len && s->typedef_body && k < a->n &&
           (sym_blank(a->view[k]) || a->view[k] == '*'))
      k++;
    for (e = k; !s->name_len && s->typedef_body && e < a->n &&
                sym_id((unsigned char)a->view[e], a->lang);)
      e++;
    p->path[i] = s->name_len ? join(p->scope[i], a->sep, nm + lo,
                                     s->name_len - lo)
                 : e > k     ? join(pp, a->sep, a->view + k, e - k)
                             : strdup(pp);
    if (!p->path[i])
      return sym_oom(a);
  }
  return DQ_OK;
}

void sym_free_paths(paths *p, size_t n) {
  for (size_t i = 0; p->path && i < n; i++)
    free(p->path[i]);
  for (size_t i = 0; p->scope && i < n; i++)
    free(p->scope[i]);
  free(p->path);
  free(p->scope);
}

/* A definition without a body at name offset off. Skipped when a definition
 * already starts there. */

/* Whether a definition starts at off: binary search over the scope
 * definitions (sorted by sym_line_rules), then the few added since. */
static int has_def(const sym_state *a, size_t n_sorted, size_t off) {
  size_t lo = 0, hi = n_sorted;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a->defs[mid] < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < n_sorted && a->defs[lo] == off)
    return 1;
  for (size_t i = n_sorted; i < a->n_defs; i++)
    if (a->defs[i] == off)
      return 1;
  return 0;
}

static dq_status line_def(sym_state *a, size_t n_sorted, const paths *p,
                          size_t off, size_t len, const char *kind) {
  if (has_def(a, n_sorted, off))
    return DQ_OK;
  int s = scope_at(a, off);
  dq_status st = ck_add_symbol(a->c, a->src + off, len, kind, off,
                               s >= 0 ? p->path[s] : "");
  if (st == DQ_OK)
    st = sym_add_def(a, off);
  return st;
}

/* An include/import naming src[off..off+len) (blanks removed). */
static dq_status include_ref(sym_state *a, size_t off, size_t len) {
  char buf[512];
  size_t m = 0;
  for (size_t i = 0; i < len && m + 1 < sizeof buf; i++)
    if (!sym_blank(a->src[off + i]))
      buf[m++] = a->src[off + i];
  if (m == 0)
    return DQ_OK;
  return ck_add_ref(a->c, buf, m, "include", off, "");
}

/* The literal opened by the quote at off: its contents in src. */
static dq_status quoted_include(sym_state *a, size_t q) {
  char close = a->src[q] == '<' ? '>' : a->src[q];
  size_t e = q + 1;
  while (e < a->n && a->src[e] != close && a->src[e] != '\n')
    e++;
  return include_ref(a, q + 1, e - q - 1);
}

typedef struct rule {
  ck_lang lang; /* CK_LANG_C rules also apply to C++, JS to TS */
  int on_blank; /* match on the blank copy (else the view; 2: the source,
                   the match's first byte outside comments and strings) */
  const char *pat;
  int action; /* A_DEF (group 1 is the name), or a special */
  const char *kind;
} rule;

enum {
  A_DEF,
  A_CINC,
  A_TYPEDEF,
  A_PYIMPORT,
  A_PYFROM,
  A_QINC,
  A_GOIMPORT,
  A_PATHINC,
  A_VAR,     /* a variable, constant or property outside function bodies */
  A_FIELD,   /* the same, only directly in a type's body */
  A_GOBLOCK, /* Go "var (" / "const (" at the top: one name per line */
  A_CTOR,    /* a constructor parameter that declares a property: Kotlin
                "class P(val x: Int)", PHP "__construct(private int $x)",
                TS "constructor(private svc: Svc)" */
  A_SELF     /* Python "self.x = ..." in __init__, JS/TS "this.x = ..." in
                a constructor: a field of the class */
};

static const rule rules[] = {
    {CK_LANG_C, 1, "^[ \\t]*#[ \\t]*define[ \\t]+([A-Za-z_]\\w*)", A_DEF,
     "macro"},
    {CK_LANG_C, 1, "^[ \\t]*#[ \\t]*(?:include|import)[ \\t]*([<\"])[^\\n]*",
     A_CINC, NULL},
    {CK_LANG_C, 0, "\\btypedef\\b([^;{}]*);", A_TYPEDEF, "typedef"},
    {CK_LANG_PYTHON, 1, "^[ \\t]*import[ \\t]+([^\\n]+)", A_PYIMPORT, NULL},
    {CK_LANG_PYTHON, 1,
     "^[ \\t]*from[ \\t]+([.\\w]+)[ \\t]+import\\b(?:[ "
     "\\t]*\\([^)]*\\)|[^\\n]*)",
     A_PYFROM, NULL},
    {CK_LANG_JS, 1,
     "(?:^|[^\\w$.])(?:import|export)\\b[^;'\"(]*?(['\"])[^'\"\\n]*['\"]",
     A_QINC, NULL},
    /* const x = require("mod"): an include of "mod", not a call */
    {CK_LANG_JS, 1,
     "(?<![\\w$.])require[ \\t]*\\([ \\t]*(['\"`])[^'\"`\\n]*['\"`][ "
     "\\t]*\\)",
     A_QINC, NULL},
    {CK_LANG_JS, 1,
     "^[ \\t]*(?:export[ \\t]+)?(?:const|let|var)[ \\t]+([A-Za-z_$][\\w$]*)[ "
     "\\t]*(?::[^=\\n]+)?=[ \\t]*(?:async[ "
     "\\t]+)?(?:\\([^()\\n]*\\)|[A-Za-z_$][\\w$]*)[ \\t]*(?::[^=\\n]+?)?=>",
     A_DEF, "function"},
    {CK_LANG_TS, 1,
     "^[ \\t]*(?:export[ \\t]+)?(?:declare[ \\t]+)?type[ "
     "\\t]+([A-Za-z_$][\\w$]*)[^=\\n]*=",
     A_DEF, "type"},
    {CK_LANG_GO, 1,
     "^[ \\t]*type[ \\t]+([A-Za-z_]\\w*)(?:\\[[^\\]\\n]*\\])?[ "
     "\\t]+(?!struct\\b|interface\\b)\\S",
     A_DEF, "type"},
    {CK_LANG_GO, 1, "^package[ \\t]+\\w+", -1, NULL},
    {CK_LANG_GO, 1, "^import[ \\t]*(?:\\([^)]*\\)|[^\\n]*)", A_GOIMPORT, NULL},
    {CK_LANG_RUST, 0,
     "^[ \\t]*(?:pub(?:\\([^)]*\\))?[ \\t]+)?use[ \\t]+([^;]+);", A_PATHINC,
     NULL},
    {CK_LANG_RUST, 0, "^[ \\t]*extern[ \\t]+crate[ \\t]+([A-Za-z_]\\w*)[^;]*;",
     A_PATHINC, NULL},
    {CK_LANG_RUST, 0,
     "^[ \\t]*(?:pub(?:\\([^)]*\\))?[ \\t]+)?struct[ "
     "\\t]+([A-Za-z_]\\w*)[^{;]*;",
     A_DEF, "struct"},
    {CK_LANG_RUST, 0,
     "^[ \\t]*(?:pub(?:\\([^)]*\\))?[ \\t]+)?mod[ \\t]+([A-Za-z_]\\w*)[ \\t]*;",
     A_DEF, "mod"},
    {CK_LANG_RUST, 0,
     "^[ \\t]*(?:pub(?:\\([^)]*\\))?[ \\t]+)?type[ \\t]+([A-Za-z_]\\w*)", A_DEF,
     "type"},
    {CK_LANG_JAVA, 0,
     "^[ \\t]*import[ \\t]+(?:static[ \\t]+)?([\\w.]+(?:\\.\\*)?)[ \\t]*;",
     A_PATHINC, NULL},
    {CK_LANG_JAVA, 0, "^[ \\t]*package[ \\t]+([\\w.]+)[ \\t]*;", -1, NULL},
    /* using X.Y; using static X.Y; global using X; using A = X.Y; (not
     * "using (var r = ...)" or "using var r = ...;") */
    {CK_LANG_CSHARP, 0,
     "^[ \\t]*(?:global[ \\t]+)?using[ \\t]+(?:static[ \\t]+)?"
     "(?:[A-Za-z_]\\w*[ \\t]*=[ \\t]*)?([A-Za-z_][\\w.]*)[ \\t]*;",
     A_PATHINC, NULL},
    /* Kotlin: imports, the package line; functions without a block body
     * (= expression, or abstract in an interface; those with one are found
     * by sym_code.c, at the same name offset); type aliases */
    {CK_LANG_KOTLIN, 0,
     "^[ \\t]*import[ \\t]+([A-Za-z_]\\w*(?:\\.\\w+)*(?:\\.\\*)?)", A_PATHINC,
     NULL},
    {CK_LANG_KOTLIN, 0, "^[ \\t]*package[ \\t]+[\\w.]+", -1, NULL},
    {CK_LANG_KOTLIN, 0,
     "^[ \\t]*(?:@[\\w.]+(?:\\([^)\\n]*\\))?[ \\t]+)*(?:[a-z]+[ \\t]+)*fun[ \\t]+"
     "(?:<[^>\\n]*>[ \\t]*)?(?:[\\w.<>?]+\\.)?([A-Za-z_]\\w*)[ \\t]*\\(",
     A_DEF, "function"},
    {CK_LANG_KOTLIN, 0, "^[ \\t]*(?:[a-z]+[ \\t]+)*typealias[ \\t]+([A-Za-z_]\\w*)",
     A_DEF, "type"},
    /* types without a body ("data class P(val x: Int)") */
    {CK_LANG_KOTLIN, 0,
     "^[ \\t]*(?:@[\\w.]+(?:\\([^)\\n]*\\))?[ \\t]+)*(?:[a-z]+[ \\t]+)*class[ \\t]+"
     "([A-Za-z_]\\w*)",
     A_DEF, "class"},
    {CK_LANG_KOTLIN, 0,
     "^[ \\t]*(?:@[\\w.]+(?:\\([^)\\n]*\\))?[ \\t]+)*(?:[a-z]+[ \\t]+)*object[ \\t]+"
     "([A-Za-z_]\\w*)",
     A_DEF, "object"},
    /* file-scoped namespace */
    {CK_LANG_CSHARP, 0, "^[ \\t]*namespace[ \\t]+([A-Za-z_][\\w.]*)[ \\t]*;",
     A_DEF, "namespace"},
    /* Swift: imports (of a module or one of its declarations), type
     * aliases, functions without a body (protocol requirements; those with
     * one are found by sym_code.c at the same name offset) */
    {CK_LANG_SWIFT, 0,
     "^[ \\t]*(?:@\\w+[ \\t]+)*import[ \\t]+(?:(?:typealias|struct|class|enum|"
     "protocol|let|var|func)[ \\t]+)?([A-Za-z_][\\w.]*)",
     A_PATHINC, NULL},
    {CK_LANG_SWIFT, 0,
     "^[ \\t]*(?:[a-z]+[ \\t]+)*typealias[ \\t]+([A-Za-z_]\\w*)", A_DEF,
     "type"},
    {CK_LANG_SWIFT, 0,
     "^[ \\t]*(?:@\\w+(?:\\([^)\\n]*\\))?[ \\t]+)*(?:[a-z]+[ \\t]+)*func[ \\t]+"
     "([A-Za-z_]\\w*)",
     A_DEF, "method"},
    /* Ruby: require/require_relative of a quoted path; attributes
     * ("attr_accessor :a, :b") */
    {CK_LANG_RUBY, 1,
     "(?<![\\w.])(?:require|require_relative|load)[ \\t(]+(['\"])[^'\"\\n]*['\"]",
     A_QINC, NULL},
    {CK_LANG_RUBY, 0,
     "^[ \\t]*attr_(?:reader|writer|accessor)[ \\t(]+:([A-Za-z_]\\w*)", A_DEF,
     "attribute"},
    /* PHP: "namespace A\\B;", use imports (of classes, functions and
     * constants; a trait's "use T;" in a class too), require/include of a
     * quoted path, and methods without a body (abstract, in interfaces) */
    {CK_LANG_PHP, 0, "^[ \\t]*namespace[ \\t]+([A-Za-z_][\\w\\\\]*)[ \\t]*;",
     A_DEF, "namespace"},
    {CK_LANG_PHP, 0, "^[ \\t]*namespace[ \\t]+[\\w\\\\]+", -1, NULL},
    {CK_LANG_PHP, 0,
     "^[ \\t]*use[ \\t]+(?:function[ \\t]+|const[ \\t]+)?\\\\?"
     "([A-Za-z_][\\w\\\\]*)[^;\\n]*;",
     A_PATHINC, NULL},
    {CK_LANG_PHP, 1,
     "(?<![\\w$>:])(?:require|include)(?:_once)?[ \\t]*\\(?[ \\t]*(['\"])"
     "[^'\"\\n]*['\"]",
     A_QINC, NULL},
    {CK_LANG_PHP, 0,
     "^[ \\t]*(?:(?:abstract|public|protected|private|static|final)[ \\t]+)*"
     "function[ \\t]+&?[ \\t]*([A-Za-z_]\\w*)[ \\t]*\\([^;{]*;",
     A_DEF, "method"},
    /* Variables, constants and properties (C, C++, Java and C# ones are
     * found by sym_decl.c's statement walk). A_VAR/A_FIELD keep only those
     * outside function bodies at their scope's own bracket depth; "variable"
     * becomes "field" in a type's body. Listed after the rules above, whose
     * definitions (arrow functions) take the same name offsets first. A
     * declaration may start a line or follow a '{' ("struct P { var x = 0
     * }", "enum Dir { case up, down"). */
    {CK_LANG_JS, 1,
     "(?:^|\\{)[ \\t]*(?:export[ \\t]+)?(?:declare[ \\t]+)?(?:const|let|var)[ \\t]+"
     "([A-Za-z_$][\\w$]*)",
     A_VAR, "variable"},
    {CK_LANG_JS, 1,
     "(?:^|\\{)[ \\t]*(?:(?:public|private|protected|static|readonly|declare|override|"
     "abstract|accessor)[ \\t]+)*(#?[A-Za-z_$][\\w$]*)[ \\t]*[?!]?[ \\t]*"
     "(?::[^\\n;=(){},]*)?(?:=(?![=>])|[;,]|$)",
     A_FIELD, "field"},
    {CK_LANG_JS, 1, "^[ \\t]+this\\.(#?[A-Za-z_$][\\w$]*)[ \\t]*=(?![=>])",
     A_SELF, "field"},
    {CK_LANG_GO, 1, "^(?:var|const)[ \\t]*\\(", A_GOBLOCK, NULL},
    {CK_LANG_GO, 1, "^var[ \\t]+([A-Za-z_]\\w*)", A_VAR, "variable"},
    {CK_LANG_GO, 1, "^const[ \\t]+([A-Za-z_]\\w*)", A_VAR, "constant"},
    {CK_LANG_GO, 1,
     "(?:^|\\{)[ \\t]*([A-Za-z_]\\w*)(?:[ \\t]*,[ \\t]*\\w+)*[ \\t]+[\\w*\\[<]",
     A_FIELD, "field"},
    {CK_LANG_RUST, 0,
     "(?:^|\\{)[ \\t]*(?:pub(?:\\([^)\\n]*\\))?[ \\t]+)?const[ \\t]+"
     "([A-Za-z_]\\w*)[ \\t]*:",
     A_VAR, "constant"},
    {CK_LANG_RUST, 0,
     "(?:^|\\{)[ \\t]*(?:pub(?:\\([^)\\n]*\\))?[ \\t]+)?static[ \\t]+(?:mut[ \\t]+)?"
     "([A-Za-z_]\\w*)[ \\t]*:",
     A_VAR, "variable"},
    {CK_LANG_KOTLIN, 0,
     "(?:^|\\{)[ \\t]*(?:@[\\w.]+(?:\\([^)\\n]*\\))?[ \\t]+)*(?:[a-z]+[ \\t]+)*"
     "(?:val|var)[ \\t]+(?:<[^>\\n]*>[ \\t]*)?(?:[\\w.<>?]+\\.)?"
     "([A-Za-z_]\\w*)",
     A_VAR, "property"},
    {CK_LANG_KOTLIN, 0,
     "[(,][ \\t\\n]*(?:@[\\w.]+(?:\\([^)\\n]*\\))?[ \\t\\n]+)*"
     "(?:(?:private|public|protected|internal|override|open|final)[ \\t]+)*"
     "(?:val|var)[ \\t]+([A-Za-z_]\\w*)[ \\t]*:",
     A_CTOR, "property"},
    {CK_LANG_SWIFT, 0,
     "(?:^|\\{)[ \\t]*(?:@\\w+(?:\\([^)\\n]*\\))?[ \\t]+)*(?:[a-z]+(?:\\([a-z]+\\))?"
     "[ \\t]+)*(?:let|var)[ \\t]+([A-Za-z_]\\w*)",
     A_VAR, "property"},
    {CK_LANG_SWIFT, 0, "(?:^|\\{)[ \\t]*(?:indirect[ \\t]+)?case[ \\t]+([A-Za-z_]\\w*)",
     A_FIELD, "enumerator"},
    {CK_LANG_PHP, 0,
     "(?:^|\\{)[ \\t]*(?:(?:public|protected|private|final)[ \\t]+)*const[ \\t]+"
     "(?:\\??[A-Za-z_\\\\][\\w\\\\|?]*[ \\t]+)?([A-Za-z_]\\w*)[ \\t]*=",
     A_VAR, "constant"},
    {CK_LANG_PHP, 2,
     "(?<![\\w$>:\\\\])define[ \\t]*\\([ \\t]*['\"]([A-Za-z_]\\w*)['\"]",
     A_DEF, "constant"},
    {CK_LANG_PHP, 0,
     "(?:^|\\{)[ \\t]*(?:(?:public|protected|private|static|readonly|var)[ \\t]+)+"
     "(?:\\??[A-Za-z_\\\\][\\w\\\\|?]*[ \\t]+)?\\$([A-Za-z_]\\w*)",
     A_FIELD, "property"},
    {CK_LANG_PHP, 0,
     "[(,][ \\t\\n]*(?:#\\[[^\\]\\n]*\\][ \\t\\n]*)*(?:(?:public|protected|"
     "private|readonly)[ \\t]+)+(?:\\??[A-Za-z_\\\\][\\w\\\\|?]*[ \\t]+)?&?"
     "\\$([A-Za-z_]\\w*)",
     A_CTOR, "property"},
    {CK_LANG_TS, 0,
     "[(,][ \\t\\n]*(?:@[\\w.]+(?:\\([^)\\n]*\\))?[ \\t\\n]+)*"
     "(?:(?:public|private|protected|readonly|override)[ \\t]+)+"
     "([A-Za-z_$][\\w$]*)",
     A_CTOR, "field"},
    {CK_LANG_RUBY, 0, "^[ \\t]*([A-Z]\\w*)[ \\t]*=(?![=~>])", A_VAR,
     "constant"},
    {CK_LANG_PYTHON, 1, "^[ \\t]*([A-Za-z_]\\w*)[ \\t]*(?::[^=\\n]+)?=(?!=)",
     A_VAR, "variable"},
    {CK_LANG_PYTHON, 1,
     "^[ \\t]+self\\.([A-Za-z_]\\w*)[ \\t]*(?::[^=\\n]+)?=(?!=)",
     A_SELF, "field"},
    /* dataclass-style "name: int" in a class body */
    {CK_LANG_PYTHON, 1,
     "^[ \\t]*([A-Za-z_]\\w*)[ \\t]*:[ \\t]*[A-Za-z_][\\w.\\[\\], |]*[ \\t]*$",
     A_FIELD, "field"},
};

static int rule_applies(ck_lang rl, ck_lang lang) {
  return rl == lang || (rl == CK_LANG_C && lang == CK_LANG_CPP) ||
         (rl == CK_LANG_JS && lang == CK_LANG_TS);
}

/* typedef ... NAME; / typedef ... (*NAME)(...); : the declared name. */
static int typedef_name(const sym_state *a, size_t s, size_t e, size_t *off,
                        size_t *len) {
  const char *v = a->view;
  for (size_t i = s; i + 1 < e; i++)
    if (v[i] == '(') {
      size_t k = i + 1;
      while (k < e && sym_blank(v[k]))
        k++;
      if (k < e && (v[k] == '*' || v[k] == '^')) {
        k++;
        while (k < e && sym_blank(v[k]))
          k++;
        size_t b = k;
        while (k < e && sym_id((unsigned char)v[k], a->lang))
          k++;
        if (k > b) {
          *off = b;
          *len = k - b;
          return 1;
        }
      }
    }
  size_t k = e;
  while (k > s) {
    while (k > s && sym_blank(v[k - 1]))
      k--;
    if (k > s && v[k - 1] == ']') {
      while (k > s && v[k - 1] != '[')
        k--;
      if (k > s)
        k--;
      continue;
    }
    break;
  }
  size_t b = k;
  while (b > s && sym_id((unsigned char)v[b - 1], a->lang))
    b--;
  if (b == k || (v[b] >= '0' && v[b] <= '9'))
    return 0;
  *off = b;
  *len = k - b;
  return 1;
}

/* Bracket depth ('(' '[' '{' open, ')' ']' '}' close) of the blank copy,
 * at each line start, built on first use. */
typedef struct depths {
  int *line; /* depth at line i's start; NULL until built */
} depths;

static long depth_at(sym_state *a, depths *dp, size_t off, int *oom) {
  const ck_ctx *c = a->c;
  const char *b = a->blank;
  if (!dp->line) { /* n_lines >= 1: line_starts[0] is 0 */
    if (!(dp->line = malloc(c->n_lines * sizeof *dp->line))) {
      *oom = 1;
      return -1;
    }
    int d = 0;
    size_t l = 0;
    dp->line[0] = 0;
    for (size_t i = 0; i < a->n; i++) {
      while (l + 1 < c->n_lines && c->line_starts[l + 1] == i)
        dp->line[++l] = d;
      d += sym_bracket(b[i]);
    }
    while (l + 1 < c->n_lines) /* a last line starting at the end */
      dp->line[++l] = d;
  }
  size_t lo = ck_line_index(c, off);
  long d = dp->line[lo];
  for (size_t i = c->line_starts[lo]; i < off; i++)
    d += sym_bracket(b[i]);
  return d;
}

static int type_scope(const char *k) {
  static const char *const t[] = {
      "class",    "struct",    "union", "interface", "object", "enum", "record",
      "protocol", "extension", "actor", "trait",     "impl",   NULL};
  for (int i = 0; t[i]; i++)
    if (!strcmp(k, t[i]))
      return 1;
  return 0;
}

/* A variable, constant, property, field or enumerator at src[off..+len)
 * matched by a line rule: kept outside function bodies, at its scope's own
 * bracket depth (0 at the top and in Python/Ruby scopes), only_type: only
 * directly in a type's body (a Go struct, a Swift enum for its "case"). */
static dq_status var_def(sym_state *a, size_t n_sorted, const paths *p,
                         depths *dp, size_t off, size_t len, const char *kind,
                         int only_type, size_t m0) {
  if (len == 0 || (len == 1 && a->src[off] == '_') ||
      sym_kw_has(&a->kw, a->src + off, len))
    return DQ_OK; /* "_": the blank identifier (Go), a throwaway name */
  int s = scope_at(a, off);
  const ck_scope *sc = s >= 0 ? &a->sc->v[s] : NULL;
  if (sc && sc->is_func)
    return DQ_OK;
  int in_type = sc && type_scope(sc->kind);
  int js = a->lang == CK_LANG_JS || a->lang == CK_LANG_TS;
  if (only_type &&
      (!in_type || (a->lang == CK_LANG_GO && strcmp(sc->kind, "struct")) ||
       (js && strcmp(sc->kind, "class") && strcmp(sc->kind, "interface")) ||
       (!strcmp(kind, "enumerator") && strcmp(sc->kind, "enum"))))
    return DQ_OK;
  int oom = 0;
  long want = 0;
  if (sc && a->lang != CK_LANG_PYTHON && a->lang != CK_LANG_RUBY)
    want = depth_at(a, dp, sc->open, &oom) + 1;
  long have = depth_at(a, dp, off, &oom);
  if (oom)
    return sym_oom(a);
  if (have != want)
    return DQ_OK;
  /* a continued expression ("x =\n  y;") is no declaration; a ','
   * separates TS members and declarators */
  size_t ls = ck_line_start(a->c, off);
  char pc = a->blank[m0] == '{' ? 0 : sym_prev(a->blank, ls, 0);
  if (pc && strchr("=+-*/%&|^?:.<>!", pc) && a->lang != CK_LANG_PYTHON &&
      a->lang != CK_LANG_RUBY)
    return DQ_OK;
  if (in_type && !strcmp(kind, "variable"))
    kind = "field";
  return line_def(a, n_sorted, p, off, len, kind);
}

/* Rules whose match may start a list: the names after ','s on the same
 * line ("case a, b(Int), c", "X, Y int", "let a = 1, b") are definitions
 * too, each after this prefix (':' "attr_reader :a, :b", '$' "public $a,
 * $b") or none (' '); 0: no list. */
static char rule_list(const rule *r) {
  switch (r->lang) {
  case CK_LANG_RUBY:
    return r->action == A_DEF && !strcmp(r->kind, "attribute") ? ':' : 0;
  case CK_LANG_PHP:
    return r->action == A_FIELD ? '$' : 0;
  case CK_LANG_JS:
  case CK_LANG_SWIFT:
    return r->action == A_VAR || r->action == A_FIELD ? ' ' : 0;
  case CK_LANG_GO:
    return r->action == A_FIELD ? ' ' : 0;
  default:
    return 0;
  }
}

/* The names after ','s outside brackets on the line of a list rule's
 * first name, which ends at from: each one's definition as the rule's. */
static dq_status list_defs(sym_state *a, size_t n_sorted, const paths *p,
                           depths *dp, const rule *r, const char *subj,
                           size_t from) {
  dq_status st = DQ_OK;
  char prefix = rule_list(r);
  int depth = 0;
  for (size_t k = from; k < a->n && subj[k] != '\n' && st == DQ_OK; k++) {
    char ch = subj[k];
    if (sym_bracket(ch)) {
      if ((depth += sym_bracket(ch)) < 0)
        break;
      continue;
    }
    if (depth > 0 || (ch != ',' && ch != ';'))
      continue;
    if (ch == ';')
      break;
    size_t j = k + 1;
    while (j < a->n && (subj[j] == ' ' || subj[j] == '\t'))
      j++;
    if (prefix != ' ') {
      if (j >= a->n || subj[j] != prefix)
        break;
      j++;
    }
    size_t b = j;
    while (j < a->n && sym_id((unsigned char)subj[j], a->lang))
      j++;
    if (j == b || !sym_id0((unsigned char)subj[b], a->lang))
      break;
    st = r->action == A_DEF
             ? line_def(a, n_sorted, p, b, j - b, r->kind)
             : var_def(a, n_sorted, p, dp, b, j - b, r->kind,
                       r->action == A_FIELD, b);
    k = j - 1;
  }
  return st;
}

/* Go: "var (" / "const (" at column 0 ending at m1: the first name of each
 * line at depth 1 ("A, B = 1, 2" gives A and B). */
static dq_status go_block(sym_state *a, size_t n_sorted, const paths *p,
                          size_t m0, size_t m1) {
  const char *b = a->blank;
  const char *kind = b[m0] == 'v' ? "variable" : "constant";
  int depth = 1, line_start = 0;
  dq_status st = DQ_OK;
  for (size_t i = m1; i < a->n && depth > 0 && st == DQ_OK; i++) {
    char ch = b[i];
    if (ch == '\n') {
      line_start = 1;
      continue;
    }
    if (line_start && depth == 1 && sym_id0((unsigned char)ch, a->lang)) {
      for (;;) { /* names up to the type or '=' */
        size_t s = i;
        while (i < a->n && sym_id((unsigned char)b[i], a->lang))
          i++;
        if (!(i - s == 1 && b[s] == '_') &&
            (st = line_def(a, n_sorted, p, s, i - s, kind)) != DQ_OK)
          break;
        size_t k = i;
        while (k < a->n && (b[k] == ' ' || b[k] == '\t'))
          k++;
        if (k >= a->n || b[k] != ',')
          break;
        k++;
        while (k < a->n && (b[k] == ' ' || b[k] == '\t'))
          k++;
        if (k >= a->n || !sym_id0((unsigned char)b[k], a->lang))
          break;
        i = k;
      }
      line_start = 0;
      if (i >= a->n)
        break;
      ch = b[i];
    }
    if (!sym_blank(ch))
      line_start = 0;
    depth += sym_bracket(ch);
  }
  return st;
}

/* A constructor parameter property at off, of the class whose header
 * holds it (Kotlin; the enclosing scope when the class has no body) or
 * whose constructor's header does (PHP __construct, TS constructor). */
static dq_status ctor_prop(sym_state *a, size_t n_sorted, const paths *p,
                           size_t off, size_t len, const char *kind) {
  if (has_def(a, n_sorted, off))
    return DQ_OK;
  const ck_scopes *v = a->sc;
  size_t lo = scopes_opened(a, off); /* whose header may hold off */
  int s = lo < v->n && v->v[lo].head <= off ? (int)lo : -1;
  if (s >= 0 && a->lang != CK_LANG_KOTLIN) {
    const ck_scope *f = &v->v[s];
    size_t n = f->name_len;
    const char *nm = a->src + f->name_off;
    if (!f->is_func || f->parent < 0 ||
        strcmp(v->v[f->parent].kind, "class") ||
        !((n == 11 && !memcmp(nm, "__construct", 11)) ||
          (n == 11 && !memcmp(nm, "constructor", 11))))
      return DQ_OK;
    s = f->parent;
  } else if (s >= 0 && strcmp(v->v[s].kind, "class")) {
    return DQ_OK; /* a function's parameters: no properties */
  }
  char *own = NULL; /* "data class P(val x: Int)": P, on the same line */
  if (s < 0) {
    if (a->lang != CK_LANG_KOTLIN)
      return DQ_OK;
    s = scope_at(a, off);
    if (s >= 0 && v->v[s].is_func)
      return DQ_OK;
    const char *b = a->view;
    size_t ls = ck_line_start(a->c, off), k = off;
    while (k >= ls + 6 &&
           !(memcmp(b + k - 6, "class", 5) == 0 && sym_blank(b[k - 1]) &&
             (k - 6 == ls || !sym_id((unsigned char)b[k - 7], a->lang))))
      k--;
    if (k >= ls + 6) {
      while (k < off && sym_blank(b[k]))
        k++;
      size_t e = k;
      while (e < off && sym_id((unsigned char)b[e], a->lang))
        e++;
      if (e > k &&
          !(own = join(s >= 0 ? p->path[s] : "", a->sep, b + k, e - k)))
        return sym_oom(a);
    }
    if (!own)
      return line_def(a, n_sorted, p, off, len, kind);
  }
  dq_status st =
      ck_add_symbol(a->c, a->src + off, len, kind, off, own ? own : p->path[s]);
  free(own);
  return st == DQ_OK ? sym_add_def(a, off) : st;
}

/* Python "self.x = ..." at off, directly in a class's __init__ (or
 * __post_init__), JS/TS "this.x = ..." in its constructor: a field of the
 * class, once per name (*seen: the scope and the first symbol of the
 * method last seen). */
static dq_status self_attr(sym_state *a, size_t n_sorted, depths *dp,
                           const paths *p, size_t off, size_t len,
                           size_t seen[2]) {
  int s = scope_at(a, off), oom = 0;
  if (s < 0)
    return DQ_OK;
  const ck_scope *f = &a->sc->v[s];
  int cls = f->parent;
  const char *nm = a->src + f->name_off;
  size_t n = f->name_len;
  int py = a->lang == CK_LANG_PYTHON;
  if (!f->is_func || cls < 0 || strcmp(a->sc->v[cls].kind, "class") ||
      !(py ? (n == 8 && !memcmp(nm, "__init__", 8)) ||
                 (n == 13 && !memcmp(nm, "__post_init__", 13))
           : n == 11 && !memcmp(nm, "constructor", 11)))
    return DQ_OK;
  long depth = py ? depth_at(a, dp, off, &oom) : 0; /* not in a call */
  if (oom)
    return sym_oom(a);
  if (depth != 0 || has_def(a, n_sorted, off))
    return DQ_OK;
  const dq_doc_parts *dp_ = a->c->p;
  if (seen[0] != (size_t)s + 1) {
    seen[0] = (size_t)s + 1;
    seen[1] = dp_->n_symbols;
  }
  /* "if x: self.a = 1 / else: self.a = 2": the first; a scan bounded so a
   * huge __init__ stays linear (then repeats are kept) */
  if (dp_->n_symbols - seen[1] <= 256)
    for (size_t i = seen[1]; i < dp_->n_symbols; i++)
      if (strlen(dp_->symbols[i].name) == len &&
          !memcmp(dp_->symbols[i].name, a->src + off, len))
        return DQ_OK;
  dq_status st =
      ck_add_symbol(a->c, a->src + off, len, "field", off, p->path[cls]);
  return st == DQ_OK ? sym_add_def(a, off) : st;
}

/* The next match of the anchored directive rule re at a line start >= from
 * whose first non-blank byte is '#'. */
static int hash_next(sym_state *a, pcre2_code *re, const char *subj,
                     size_t from, PCRE2_SIZE **ov) {
  const ck_ctx *c = a->c;
  size_t ls = ck_line_start(c, from);
  if (ls < from)
    ls = ck_next_line(c, from);
  while (ls < a->n) {
    size_t i = ls;
    while (i < a->n && (subj[i] == ' ' || subj[i] == '\t'))
      i++;
    if (i < a->n && subj[i] == '#' &&
        pcre2_match(re, (PCRE2_SPTR)subj, a->n, ls,
                    PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, a->md, NULL) > 0) {
      *ov = pcre2_get_ovector_pointer(a->md);
      return 1;
    }
    const char *nl = memchr(subj + i, '\n', a->n - i);
    ls = nl ? (size_t)(nl - subj) + 1 : a->n;
  }
  return 0;
}

static dq_status line_rules(sym_state *a, const paths *p, depths *dpp) {
  dq_status st = DQ_OK;
  size_t self_seen[2] = {0, 0};
  if (a->n_defs)
    sym_sort_offsets(a->defs, a->n_defs);
  size_t n_sorted = a->n_defs;
  for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
    if (!rule_applies(rules[r].lang, a->lang))
      continue;
    pcre2_code *re = ck_re(a->c, rules[r].pat, PCRE2_MULTILINE);
    if (!re)
      return DQ_ERR_INTERNAL;
    const char *subj = rules[r].on_blank == 2 ? a->src
                       : rules[r].on_blank    ? a->blank
                                              : a->view;
    size_t from = 0;
    PCRE2_SIZE *ov;
    int rc;
    /* Directive rules ("^[ \t]*#..."): tried only on lines whose first
     * non-blank byte is '#', instead of a regex scan of every line. */
    int hash = strncmp(rules[r].pat, "^[ \\t]*#", 8) == 0;
    while ((rc = hash ? hash_next(a, re, subj, from, &ov)
                      : ck_re_next(re, a->md, subj, a->n, from, &ov)) == 1) {
      size_t m0 = ov[0], m1 = ov[1], g0 = ov[2], g1 = ov[3];
      from = m1 > m0 ? m1 : m0 + 1;
      switch (rules[r].action) {
      case A_DEF:
        if (rules[r].on_blank == 2 && a->blank[m0] != a->src[m0])
          break; /* in a comment or string */
        st = line_def(a, n_sorted, p, g0, g1 - g0, rules[r].kind);
        break;
      case A_VAR:
      case A_FIELD:
        st = var_def(a, n_sorted, p, dpp, g0, g1 - g0, rules[r].kind,
                     rules[r].action == A_FIELD, m0);
        break;
      case A_GOBLOCK:
        st = go_block(a, n_sorted, p, m0, m1);
        break;
      case A_CTOR:
        st = ctor_prop(a, n_sorted, p, g0, g1 - g0, rules[r].kind);
        break;
      case A_SELF:
        st = self_attr(a, n_sorted, dpp, p, g0, g1 - g0, self_seen);
        break;
      case A_CINC:
        if ((st = sym_add_skip(a, m0, m1)) == DQ_OK)
          st = quoted_include(a, g0);
        break;
      case A_TYPEDEF: {
        size_t off, len;
        if (typedef_name(a, g0, g1, &off, &len))
          st = line_def(a, n_sorted, p, off, len, "typedef");
        break;
      }
      case A_PYIMPORT:
        if ((st = sym_add_skip(a, m0, m1)) != DQ_OK)
          break;
        /* a.b as c, d */
        for (size_t i = g0; i < g1 && st == DQ_OK;) {
          while (i < g1 && (sym_blank(subj[i]) || subj[i] == ','))
            i++;
          size_t b = i;
          while (i < g1 &&
                 (sym_id((unsigned char)subj[i], a->lang) || subj[i] == '.'))
            i++;
          if (i > b)
            st = include_ref(a, b, i - b);
          while (i < g1 && subj[i] != ',')
            i++;
        }
        break;
      case A_PYFROM:
        if ((st = sym_add_skip(a, m0, m1)) == DQ_OK)
          st = include_ref(a, g0, g1 - g0);
        break;
      case A_QINC:
        if ((st = sym_add_skip(a, m0, m1)) == DQ_OK)
          st = quoted_include(a, g0);
        break;
      case A_GOIMPORT:
        if ((st = sym_add_skip(a, m0, m1)) != DQ_OK)
          break;
        for (size_t i = m0; i < m1 && st == DQ_OK; i++)
          if (subj[i] == '"' || subj[i] == '`') {
            char q = subj[i];
            st = quoted_include(a, i);
            i++;
            while (i < m1 && subj[i] != q)
              i++;
          }
        break;
      case A_PATHINC:
        if ((st = sym_add_skip(a, m0, m1)) == DQ_OK)
          st = include_ref(a, g0, g1 - g0);
        break;
      default: /* skip only */
        st = sym_add_skip(a, m0, m1);
        break;
      }
      if (st == DQ_OK && rule_list(&rules[r]))
        st = list_defs(a, n_sorted, p, dpp, &rules[r], subj, g1);
      if (st != DQ_OK)
        break;
    }
    pcre2_code_free(re);
    if (st != DQ_OK)
      return st;
    if (rc < 0)
      return dq_error_set(a->c->err, DQ_ERR_INTERNAL, "%s: regex match failed",
                          a->c->path);
  }
  /* C: typedef struct {...} Name, *PName; */
  for (size_t i = 0; i < a->sc->n && st == DQ_OK; i++) {
    const ck_scope *s = &a->sc->v[i];
    if (!s->typedef_body || s->close >= a->n)
      continue;
    size_t k = s->close + 1;
    while (k < a->n && a->view[k] != ';' && a->view[k] != '{' &&
           a->view[k] != '}' && st == DQ_OK) {
      if (sym_id0((unsigned char)a->view[k], a->lang)) {
        size_t b = k;
        while (k < a->n && sym_id((unsigned char)a->view[k], a->lang))
          k++;
        if (!sym_kw_has(&a->kw, a->view + b, k - b))
          st = line_def(a, n_sorted, p, b, k - b, "typedef");
      } else {
        k++;
      }
    }
  }
  return st;
}

dq_status sym_line_rules(sym_state *a, const paths *p) {
  depths dp = {NULL};
  dq_status st = line_rules(a, p, &dp);
  free(dp.line);
  return st;
}

/* ---- references -------------------------------------------------------- */

static int span_cmp(const void *x, const void *y) {
  const span *a = x, *b = y;
  return a->a < b->a ? -1 : a->a > b->a;
}

/* A CUDA kernel launch at b[k]: "<<<" (no other C++ token starts so). */
static int is_launch(const char *b, size_t k, size_t n) {
  return k + 2 < n && b[k] == '<' && b[k + 1] == '<' && b[k + 2] == '<';
}

/* The offset just past the template argument list "<...>" opening at
 * b[k], or 0 when what follows is not one: a shift or launch ("<<"), a
 * statement or block boundary, a logical or assignment operator, an
 * unbalanced ")" (as in "(a < b) > c"), or more than 256 bytes. */
static size_t template_args_end(const char *b, size_t k, size_t n) {
  if (k + 1 >= n || b[k + 1] == '<')
    return 0;
  int angle = 0, paren = 0;
  for (size_t i = k; i < n && i < k + 256; i++) {
    switch (b[i]) {
    case '<':
      angle++;
      break;
    case '>':
      if (--angle == 0)
        return paren ? 0 : i + 1;
      break;
    case '(':
      paren++;
      break;
    case ')':
      if (--paren < 0)
        return 0;
      break;
    case '&':
      if (i + 1 < n && b[i + 1] == '&')
        return 0;
      break;
    case ';': case '{': case '}': case '|': case '=': case '!': case '?':
      return 0;
    default:
      break;
    }
  }
  return 0;
}

/* Ruby: whether the name ending at b[j] is a call without parentheses
 * ("log_post amount", "puts format(x)", "obj.send :x"): blanks, then on
 * the same line an argument's start - a name that is not a keyword, a
 * number, a string, an :symbol or an @ivar. A name followed directly by
 * ':' (a hash key) or by an operator is not one. */
static int rb_paren_less_call(const sym_state *a, size_t j) {
  const char *b = a->blank;
  size_t k = j;
  while (k < a->n && (b[k] == ' ' || b[k] == '\t'))
    k++;
  if (k == j || k >= a->n)
    return 0;
  unsigned char c = (unsigned char)b[k];
  if (c == '"' || c == '\'' || c == '@' || (c >= '0' && c <= '9'))
    return 1;
  if (c == ':')
    return k + 1 < a->n && sym_id0((unsigned char)b[k + 1], a->lang);
  if (!sym_id0(c, a->lang))
    return 0;
  size_t e = k;
  while (e < a->n && sym_id((unsigned char)b[e], a->lang))
    e++;
  return !sym_kw_has(&a->kw, b + k, e - k);
}

dq_status sym_scan_refs(sym_state *a) {
  dq_status st = DQ_OK;
  if (a->n_defs)
    sym_sort_offsets(a->defs, a->n_defs);
  if (a->n_skip)
    qsort(a->skip, a->n_skip, sizeof *a->skip, span_cmp);
  size_t n_sc = a->sc->n;
  char **fname = calloc(n_sc ? n_sc : 1, sizeof *fname);
  int *stack = malloc((n_sc ? n_sc : 1) * sizeof *stack);
  if (!fname || !stack) {
    st = sym_oom(a);
    goto out;
  }
  for (size_t i = 0; i < n_sc; i++) {
    const ck_scope *s = &a->sc->v[i];
    if (!s->is_func)
      continue;
    size_t ql, lo;
    sym_split_qual(a->src + s->name_off, s->name_len, &ql, &lo);
    fname[i] = strndup(a->src + s->name_off + lo, s->name_len - lo);
    if (!fname[i]) {
      st = sym_oom(a);
      goto out;
    }
  }
  size_t n_stack = 0, si = 0, di = 0, ki = 0, bi = 0;
  const char *b = a->blank;
  /* Byte classes: 1 starts an identifier, 2 continues one (digits). */
  unsigned char idc[256];
  for (int ch = 0; ch < 256; ch++)
    idc[ch] = sym_id0((unsigned char)ch, a->lang)  ? 1
              : sym_id((unsigned char)ch, a->lang) ? 2
                                                   : 0;
  size_t i = 0;
  while (i < a->n) {
    unsigned char k0 = idc[(unsigned char)b[i]];
    if (k0 == 0) {
      i++;
      continue;
    }
    if (k0 == 2) { /* a number, with its suffix and fraction */
      while (i < a->n && (idc[(unsigned char)b[i]] || b[i] == '.'))
        i++;
      continue;
    }
    size_t j = i;
    while (j < a->n && idc[(unsigned char)b[j]])
      j++;
    size_t tok = i, len = j - i;
    i = j;
    if (sym_kw_has(&a->kw, b + tok, len))
      continue;
    while (di < a->n_defs && a->defs[di] < tok)
      di++;
    if (di < a->n_defs && a->defs[di] == tok)
      continue;
    while (ki < a->n_skip && a->skip[ki].b <= tok)
      ki++;
    if (ki < a->n_skip && a->skip[ki].a <= tok)
      continue;
    if ((a->lang == CK_LANG_C || a->lang == CK_LANG_CPP) &&
        sym_prev(b, tok, tok > 64 ? tok - 64 : 0) == '#')
      continue;
    if (a->lang == CK_LANG_RUST && tok > 0 && b[tok - 1] == '\'')
      continue; /* lifetime or label */
    if ((a->lang == CK_LANG_PHP || a->lang == CK_LANG_RUBY) && tok > 0 &&
        (b[tok - 1] == '$' || (a->lang == CK_LANG_RUBY && b[tok - 1] == '@')))
      continue; /* a variable ($this, Ruby's @ivar, @@cvar, $global) */
    if (a->lang == CK_LANG_RUBY && j < a->n && (b[j] == '?' || b[j] == '!') &&
        (j + 1 >= a->n || b[j + 1] != '=')) {
      j++; /* valid?, save! are names */
      len++;
      i = j;
    }
    if (a->lang == CK_LANG_CSHARP || a->lang == CK_LANG_SWIFT) {
      /* #region Title, #if SYMBOL, #if os(iOS) */
      size_t ls = ck_line_start(a->c, tok);
      while (ls < tok && (b[ls] == ' ' || b[ls] == '\t'))
        ls++;
      if (b[ls] == '#')
        continue;
    }
    /* Scopes holding tok. */
    while (si < n_sc && a->sc->v[si].open <= tok) {
      if (a->sc->v[si].is_func)
        stack[n_stack++] = (int)si;
      si++;
    }
    while (n_stack && a->sc->v[stack[n_stack - 1]].close < tok)
      n_stack--;
    size_t k = j;
    while (k < a->n && sym_blank(b[k]))
      k++;
    if ((a->lang == CK_LANG_CPP || a->lang == CK_LANG_CSHARP ||
         a->lang == CK_LANG_KOTLIN || a->lang == CK_LANG_SWIFT) &&
        k < a->n && b[k] == '<') {
      size_t e = template_args_end(b, k, a->n); /* f<T>(x), k<N><<<g, b>>> */
      while (e && e < a->n && sym_blank(b[e]))
        e++;
      if (e && e < a->n && (b[e] == '(' || is_launch(b, e, a->n)))
        k = e;
    }
    int call =
        k < a->n && (b[k] == '(' || (a->lang == CK_LANG_RUST && b[k] == '!' &&
                                     k + 1 < a->n && b[k + 1] != '=') ||
                     (a->lang == CK_LANG_CPP && is_launch(b, k, a->n)));
    if (!call && a->lang == CK_LANG_RUBY)
      call = rb_paren_less_call(a, j);
    const char *caller = n_stack ? fname[stack[n_stack - 1]] : "";
    if (!n_stack && a->n_bodies) {
      while (bi < a->n_bodies && a->bodies[bi].b <= tok)
        bi++;
      if (bi < a->n_bodies && a->bodies[bi].a <= tok)
        caller = a->body_name[bi];
    }
    st = ck_add_ref(a->c, a->src + tok, len, call ? "call" : "use", tok,
                    caller);
    if (st != DQ_OK)
      goto out;
  }
out:
  for (size_t q = 0; fname && q < n_sc; q++)
    free(fname[q]);
  free(fname);
  free(stack);
  return st;
}
