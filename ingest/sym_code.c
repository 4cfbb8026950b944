/*
 * sym_code.c - definitions and references in source code (C, C++, Python,
 * JavaScript, TypeScript, Go, Rust, Java, C#, Kotlin, PHP, Swift, Ruby)
 * with PCRE2 (JIT). In PHP a $name is a variable, never a reference; in
 * Ruby neither is an @name or $name, and valid? or save! is one name. Ruby
 * scopes come from def/class/module lines and indentation, as Python's.
 *
 * Method: ck_lex_blank first blanks comments and string contents (offsets
 * kept). For brace languages every '{' is then classified by its header, the
 * text since the previous ';', '{' or '}', with per-language regexes anchored
 * at the header's end ("int f(int a)" -> function f; "class A : B" -> class
 * A; "impl<T> X for Y" -> impl Y); a function is only recognised where the
 * enclosing definition is not itself a function, so calls followed by a block
 * inside bodies are not definitions. Python scopes come from def/class lines
 * and indentation. Line-level regexes add the definitions without a body
 * (#define, typedef, Go/TS type, Rust tuple structs, "const f = () =>") and
 * the imports/includes. Finally every identifier of the blanked text that is
 * not a keyword, a definition's own name or part of an import becomes a ref:
 * "call" when the next non-blank byte is '(' (or '!' in Rust), else "use";
 * its caller is the innermost enclosing function.
 *
 * This file holds the blanking call, the '{' header and Python scope finders
 * and the entry point; sym_lines.c the line rules, scope paths and the
 * reference scan; sym_kw.c the keywords.
 *
 * Heuristic by design (no preprocessing, no type analysis): K&R definitions,
 * definitions produced by macros and code hidden by #if 0 are not handled.
 */
#include "sym_int.h"

#include <stdlib.h>
#include <string.h>

#define HEADER_MAX_BYTES 4096 /* look-back for a '{' header */

/* ---- header regexes ---------------------------------------------------- */

/* Balanced parentheses as group n (PCRE2 recursion into the group). */
#define PARENS(n) "(\\((?:[^()]++|(?" #n "))*+\\))"

enum { R_FUNC, R_TYPE, R_NS, R_FN2, R_METHOD, R_IMPL, R_MOD, R_MACRO };

static dq_status compile_lang(sym_state *a) {
  const char *pat[8] = {0};
  switch (a->lang) {
  case CK_LANG_C:
  case CK_LANG_CPP:
    pat[R_FUNC] =
        "(~?[A-Za-z_]\\w*+(?:\\s*::\\s*~?[A-Za-z_]\\w*+)*"
        "|(?:\\w++\\s*::\\s*)*operator\\s*(?:\\(\\)|[^\\s(]+))\\s*" PARENS(
            2) "\\s*(?:(?:const|noexcept|override|final|volatile|&&|&|"
               "throw\\s*\\([^()]*\\)|noexcept\\s*\\([^()]*\\)|"
               "__attribute__\\s*\\(\\((?:[^()]++|\\([^()]*\\))*\\)\\))\\s*)*"
               "(?:->\\s*[^{;]+?)?(?::\\s*[^;{]*)?\\s*\\z";
    pat[R_TYPE] =
        "(?:^|[^\\w.])(typedef\\s+)?(?:\\w+\\s+)*?(struct|union|enum|class)"
        "\\s+(?:(?:class|struct)\\s+)?(?:[A-Z_][A-Z0-9_]*\\s+)*"
        "([A-Za-z_]\\w*)?\\s*(?:final\\s*)?(?::(?!:)[^{;]*)?\\z";
    pat[R_NS] = "\\bnamespace\\s+([A-Za-z_][\\w:]*)?\\s*\\z";
    /* static void (*name(args))(void) */
    pat[R_FN2] = "\\(\\s*\\*\\s*([A-Za-z_]\\w*+)\\s*" PARENS(
        2) "\\s*\\)\\s*\\((?:[^()]++|\\([^()]*\\))*\\)\\s*\\z";
    break;
  case CK_LANG_JAVA:
    pat[R_TYPE] =
        "(?:^|[^\\w.@])(class|interface|enum|record)\\s+([A-Za-z_]\\w*)";
    pat[R_METHOD] = "([A-Za-z_]\\w*+)\\s*(?:<[^<>]*>\\s*)?" PARENS(
        2) "\\s*(?:throws\\s+[\\w.,\\s<>]+?)?\\s*\\z";
    break;
  case CK_LANG_CSHARP:
    /* "record struct P", "record class Q": the name after the second word */
    pat[R_TYPE] = "(?:^|[^\\w.@])(class|struct|interface|enum|record)\\s+"
                  "(?:(?:class|struct)\\s+)?([A-Za-z_]\\w*)";
    pat[R_NS] = "\\bnamespace\\s+([A-Za-z_][\\w.]*)\\s*\\z";
    /* generic arguments one level nested; constraints "where T : new()";
     * a constructor's ": base(...)" or ": this(...)" */
    pat[R_METHOD] =
        "([A-Za-z_]\\w*+)\\s*(?:<(?:[^<>]|<[^<>]*>)*>\\s*)?" PARENS(
            2) "\\s*(?::\\s*(?:base|this)\\s*\\((?:[^()]++|\\([^()]*\\))*\\)"
               "\\s*)?(?:where\\s[^{]*)?\\z";
    /* a property or an event with accessors: "Type Name" and no '(' */
    pat[R_FN2] = "(?:^|[\\s\\]])[\\w.]+(?:<(?:[^<>]|<[^<>]*>)*>)?[?\\[\\]\\s]*?"
                 "\\s([A-Za-z_]\\w*)\\s*\\z";
    break;
  case CK_LANG_KOTLIN:
    /* run from the header's last declaration keyword (decl_at): data/
     * enum/sealed class, (fun) interface, object, not "companion object"
     * (no name); fun <T> List<T>.second(): T with its return type and
     * constraints only, not "fun f() = x" (then the '{' is another's) */
    pat[R_TYPE] = "\\A(class|interface|object)\\s+([A-Za-z_]\\w*)";
    pat[R_FUNC] = "\\Afun\\s+(?:<[^>]*>\\s*)?(?:[\\w.<>?]+\\.)?"
                  "([A-Za-z_]\\w*)\\s*" PARENS(2) "\\s*(?::\\s*[^={}]+?)?\\s*"
                  "(?:where\\s[^{]*)?\\z";
    break;
  case CK_LANG_SWIFT:
    /* run from the header's last declaration keyword (decl_at): types,
     * extensions (named by the type they extend), functions and operators,
     * init/deinit/subscript, computed or observed properties with a type */
    pat[R_TYPE] = "\\A(class|struct|enum|protocol|extension|actor)\\s+"
                  "([A-Za-z_]\\w*)";
    pat[R_FUNC] = "\\Afunc\\s+([A-Za-z_]\\w*|[!-'*-/:=>?@^|~\\[\\]%&]+)\\s*"
                  "(?:<[^{]*?>\\s*)?" PARENS(2);
    pat[R_METHOD] = "\\A(init|deinit|subscript)\\b\\s*[?!]?\\s*"
                    "(?:<[^{]*?>\\s*)?(?:\\(|\\z)";
    pat[R_FN2] = "\\Avar\\s+([A-Za-z_]\\w*)\\s*:[^={}]*\\z";
    break;
  case CK_LANG_PHP:
    /* named functions and methods (closures and fn have no name); types
     * but not "new class extends X {"; a braced namespace */
    pat[R_FUNC] = "(?<![\\w$>:])function\\s+&?\\s*([A-Za-z_]\\w*)\\s*\\(";
    pat[R_TYPE] = "(?:^|[^\\w$>:\\\\])(class|interface|trait|enum)\\s+"
                  "(?!extends\\b|implements\\b)([A-Za-z_]\\w*)";
    pat[R_NS] = "\\bnamespace\\s+([A-Za-z_][\\w\\\\]*)?\\s*\\z";
    break;
  case CK_LANG_JS:
  case CK_LANG_TS:
    pat[R_FUNC] =
        "\\bfunction\\b\\s*\\*?\\s*([A-Za-z_$][\\w$]*)\\s*(?:<[^(]*>)?\\s*\\(";
    pat[R_TYPE] = "(?:^|[^\\w$.])(class|interface|enum)\\s+([A-Za-z_$][\\w$]*)";
    pat[R_NS] =
        "(?:^|[^\\w$.])(?:namespace|module)\\s+([A-Za-z_$][\\w$.]*)\\s*\\z";
    pat[R_FN2] =
        "\\b(?:const|let|var)\\s+([A-Za-z_$][\\w$]*)\\s*(?::[^=]+)?=\\s*"
        "(?:async\\s+)?(?:function\\b[^(]*" PARENS(2) "|(?:" PARENS(
            3) "|[A-Za-z_$][\\w$]*)\\s*(?::\\s*[^=]+?)?\\s*=>)\\s*\\z";
    pat[R_METHOD] =
        "(?:^|[\\n;])\\s*(?:(?:public|private|protected|static|async|"
        "get|set|readonly|abstract|override)\\s+)*\\*?\\s*"
        "(#?[A-Za-z_$][\\w$]*+)\\s*(?:<[^()]*>)?\\s*" PARENS(
            2) "\\s*(?::\\s*[^{;]+?)?\\s*\\z";
    break;
  case CK_LANG_GO:
    pat[R_FUNC] =
        "(?:^|\\n)[ \\t]*func[ \\t]*(?:\\([ \\t]*(?:[A-Za-z_]\\w*[ \\t]+)?"
        "\\*?[ \\t]*([A-Za-z_]\\w*)[^)]*\\)[ \\t]*)?([A-Za-z_]\\w*)";
    pat[R_TYPE] =
        "(?:^|\\n)[ \\t]*(?:type[ \\t]+)?([A-Za-z_]\\w*)(?:\\[[^\\]]*\\])?"
        "[ \\t]+(struct|interface)[ \\t]*\\z";
    break;
  case CK_LANG_RUST:
    pat[R_FUNC] = "\\bfn\\s+([A-Za-z_]\\w*)";
    pat[R_TYPE] = "\\b(struct|enum|union|trait)\\s+([A-Za-z_]\\w*)";
    pat[R_IMPL] =
        "\\bimpl\\b(?:\\s*<(?:[^<>]++|<(?:[^<>]++|<[^<>]*>)*>)*>)?\\s+"
        "(?:.*?\\bfor\\s+)?(?:&\\s*(?:mut\\s+)?)?(?:\\w+::)*([A-Za-z_]\\w*)";
    pat[R_MOD] = "\\bmod\\s+([A-Za-z_]\\w*)\\s*\\z";
    pat[R_MACRO] = "\\bmacro_rules!\\s*([A-Za-z_]\\w*)";
    break;
  default:
    break;
  }
  /* Compiled on first use (hmatch): a C file never needs the namespace
   * regex, and most need R_FN2 rarely; compiling (JIT) costs more than
   * matching on small files. */
  for (int i = 0; i < 8; i++)
    a->pat[i] = pat[i];
  return DQ_OK;
}

/* Runs regex r on view[hs..he); ov offsets are made absolute. */
static int hmatch(sym_state *a, int r, size_t hs, size_t he, PCRE2_SIZE **ov) {
  if (!a->re[r]) {
    if (!a->pat[r] || a->re_failed)
      return 0;
    if (!(a->re[r] = ck_re(a->c, a->pat[r], PCRE2_DOTALL))) {
      a->re_failed = 1;
      return 0;
    }
  }
  int rc = pcre2_match(a->re[r], (PCRE2_SPTR)(a->view + hs), he - hs, 0, 0,
                       a->md, NULL);
  if (rc < 0)
    return 0;
  PCRE2_SIZE *v = pcre2_get_ovector_pointer(a->md);
  uint32_t npairs = pcre2_get_ovector_count(a->md);
  for (uint32_t i = 0; i < 2 * npairs; i++)
    if (v[i] != PCRE2_UNSET)
      v[i] += hs;
  *ov = v;
  return 1;
}

static int grp(PCRE2_SIZE *ov, int g, size_t *off, size_t *len) {
  if (ov[2 * g] == PCRE2_UNSET)
    return 0;
  *off = ov[2 * g];
  *len = ov[2 * g + 1] - ov[2 * g];
  return *len > 0;
}

/* Previous non-blank byte of the view before i (>= lo), or 0. */
static char prev_char(const sym_state *a, size_t i, size_t lo) {
  while (i > lo) {
    char ch = a->view[--i];
    if (!sym_blank(ch))
      return ch;
  }
  return 0;
}

static int word_before(const sym_state *a, size_t i, size_t lo, const char *w) {
  while (i > lo && sym_blank(a->view[i - 1]))
    i--;
  size_t n = strlen(w);
  return i >= lo + n && memcmp(a->view + i - n, w, n) == 0 &&
         (i == lo + n || !sym_id((unsigned char)a->view[i - n - 1], a->lang));
}

/* Nearest enclosing definition of the stack (indices into sc or -1). */
typedef struct cls {
  const char *kind;
  size_t name_off, name_len;
  int is_func, is_typedef, head_at_match;
  size_t match_off;
  size_t recv_off, recv_len;
} cls;

/* The kind a type header's keyword (group g of ov) gives: the keyword
 * itself, as a static string. */
static const char *keyword_kind(const sym_state *a, PCRE2_SIZE *ov, int g) {
  static const char *const kinds[] = {"class",  "struct", "union",
                                      "enum",   "interface", "record",
                                      "trait",  "object", "protocol",
                                      "extension", "actor"};
  size_t off = 0, len = 0;
  grp(ov, g, &off, &len);
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (strlen(kinds[i]) == len && memcmp(a->view + off, kinds[i], len) == 0)
      return kinds[i];
  return "class"; /* every R_TYPE keyword is listed above */
}

/* Java and C# members: not a keyword of bad[] and not an expression (after
 * '=', '.', '(' or ',', "new" or "return"). */
static int member_name_ok(const sym_state *a, size_t hs, size_t off,
                          size_t len, const char *const *bad) {
  for (int i = 0; bad[i]; i++)
    if (strlen(bad[i]) == len && memcmp(a->view + off, bad[i], len) == 0)
      return 0;
  char pc = prev_char(a, off, hs);
  return !(pc == '=' || pc == '.' || pc == '(' || pc == ',' ||
           word_before(a, off, hs, "new") ||
           word_before(a, off, hs, "return"));
}

/* Whether view[hs..he) contains "struct", "union", "enum" or "class"
 * (R_TYPE needs one). */
static int tag_word(const sym_state *a, size_t hs, size_t he) {
  static const char *const w[] = {"struct", "union", "enum", "class"};
  for (int i = 0; i < 4; i++)
    if (memmem(a->view + hs, he - hs, w[i], strlen(w[i])))
      return 1;
  return 0;
}

/* Kotlin and Swift, whose statements need no ';': the offset of the last
 * declaration keyword of w[] (NULL-terminated; a whole word, not after
 * '.', ':' or '@': Foo::class) in view[hs..he), or he. Kotlin's are
 * "class", "interface", "object" and "fun". */
static size_t decl_at(const sym_state *a, size_t hs, size_t he,
                      const char *const *w) {
  const char *v = a->view;
  for (size_t i = he; i-- > hs;) {
    if (!sym_id0((unsigned char)v[i], a->lang) ||
        (i > hs && sym_id((unsigned char)v[i - 1], a->lang)))
      continue;
    char pc = i > hs ? v[i - 1] : ' ';
    if (pc == '.' || pc == ':' || pc == '@')
      continue;
    for (int k = 0; w[k]; k++) {
      size_t n = strlen(w[k]);
      if (i + n <= he && memcmp(v + i, w[k], n) == 0 &&
          (i + n == he || !sym_id((unsigned char)v[i + n], a->lang)))
        return i;
    }
  }
  return he;
}

/* Classifies the header view[hs..he) of a '{'; parent is the enclosing
 * definition (NULL at top level). Returns 1 when it defines something. */
static int classify(sym_state *a, const ck_scope *parent, size_t hs, size_t he,
                    cls *out) {
  PCRE2_SIZE *ov;
  size_t off, len;
  int in_func = parent && parent->is_func;
  const char *pk = parent ? parent->kind : "";
  memset(out, 0, sizeof *out);
  switch (a->lang) {
  case CK_LANG_C:
  case CK_LANG_CPP:
    /* Most headers are "if (x)", "for (...)": no keyword, no regex run. */
    if (tag_word(a, hs, he) && hmatch(a, R_TYPE, hs, he, &ov)) {
      out->kind = keyword_kind(a, ov, 2);
      out->is_typedef = ov[2] != PCRE2_UNSET;
      /* "MACRO_WITHOUT_SEMICOLON\ntypedef struct X {": the match may start
       * at the macro, the lazy words then passing over "typedef" */
      for (size_t i = hs; !out->is_typedef && i + 7 <= ov[4]; i++)
        out->is_typedef =
            memcmp(a->view + i, "typedef", 7) == 0 &&
            (i == hs || !sym_id((unsigned char)a->view[i - 1], a->lang)) &&
            !sym_id((unsigned char)a->view[i + 7], a->lang);
      if (grp(ov, 3, &off, &len)) {
        out->name_off = off;
        out->name_len = len;
      }
      return 1;
    }
    if (a->lang == CK_LANG_CPP && hmatch(a, R_NS, hs, he, &ov)) {
      out->kind = "namespace";
      if (grp(ov, 1, &off, &len)) {
        out->name_off = off;
        out->name_len = len;
      }
      return 1;
    }
    if (!in_func &&
        ((hmatch(a, R_FUNC, hs, he, &ov) && grp(ov, 1, &off, &len)) ||
         (hmatch(a, R_FN2, hs, he, &ov) && grp(ov, 1, &off, &len)))) {
      static const char *const bad[] = {
          "if",         "while",    "for",           "switch",
          "return",     "sizeof",   "catch",         "do",
          "else",       "case",     "defined",       "__attribute__",
          "alignas",    "decltype", "static_assert", "_Static_assert",
          "__declspec", NULL};
      for (int i = 0; bad[i]; i++)
        if (strlen(bad[i]) == len && memcmp(a->view + off, bad[i], len) == 0)
          return 0;
      char pc = prev_char(a, off, hs);
      if (pc == '=' || pc == '.' || pc == ',' || pc == '(' || pc == '!' ||
          pc == '?' || pc == '>' || pc == '+' || pc == '-' || pc == '|' ||
          word_before(a, off, hs, "return") || word_before(a, off, hs, "new") ||
          word_before(a, off, hs, "else") || word_before(a, off, hs, "case"))
        return 0;
      /* An "=" at the top of the header: an initializer, not a function. */
      int depth = 0;
      for (size_t i = hs; i < off; i++) {
        char ch = a->view[i];
        depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
        if (ch == '=' && depth == 0)
          return 0;
      }
      out->kind = parent && (!strcmp(pk, "class") || !strcmp(pk, "struct"))
                      ? "method"
                      : "function";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    return 0;
  case CK_LANG_JAVA:
    if (hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      out->kind = keyword_kind(a, ov, 1);
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (parent && !in_func && hmatch(a, R_METHOD, hs, he, &ov) &&
        grp(ov, 1, &off, &len)) {
      static const char *const bad[] = {
          "if",           "while",  "for", "switch", "catch",
          "synchronized", "return", "new", "try",    NULL};
      if (!member_name_ok(a, hs, off, len, bad))
        return 0;
      out->kind = "method";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    return 0;
  case CK_LANG_CSHARP: {
    if (in_func)
      return 0; /* local functions and lambdas stay inside their method */
    if (hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      out->kind = keyword_kind(a, ov, 1);
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (hmatch(a, R_NS, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "namespace";
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    static const char *const types[] = {"class", "struct", "interface",
                                        "record", NULL};
    int in_type = 0;
    for (int i = 0; parent && types[i]; i++)
      in_type |= !strcmp(pk, types[i]);
    if (!in_type)
      return 0;
    /* attributes ([Route("x")]) before the member do not count */
    size_t ms = hs;
    int depth = 0;
    for (size_t i = hs; i < he; i++) {
      char ch = a->view[i];
      depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
      if (ch == ']' && depth == 0)
        ms = i + 1;
    }
    int has_paren = memchr(a->view + ms, '(', he - ms) != NULL;
    if (has_paren && hmatch(a, R_METHOD, hs, he, &ov) &&
        grp(ov, 1, &off, &len)) {
      static const char *const bad[] = {
          "if",     "while",  "for",      "foreach", "switch", "catch",
          "using",  "lock",   "fixed",    "return",  "new",    "try",
          "checked", "unchecked", "when", "nameof",  "typeof", "sizeof",
          "default", NULL};
      if (!member_name_ok(a, hs, off, len, bad))
        return 0;
      out->kind = "method";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    /* A member header without parentheses or '=': a property (its
     * accessors' code has it as caller) or an event with add/remove. */
    if (!has_paren && !memchr(a->view + ms, '=', he - ms) &&
        hmatch(a, R_FN2, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      if (sym_kw_has(&a->kw, a->view + off, len))
        return 0;
      out->kind = word_before(a, off, hs, "event") ||
                          memmem(a->view + hs, off - hs, "event ", 6)
                      ? "event"
                      : "property";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    return 0;
  }
  case CK_LANG_KOTLIN:
    if (in_func)
      return 0; /* local functions and lambdas stay inside their function */
    /* No ';' ends Kotlin statements: the header since the last brace can
     * hold several ("data class P(val x: Int)  fun main()"); the '{'
     * belongs to the last declaration keyword's. */
    static const char *const kt_words[] = {"class", "interface", "object",
                                           "fun", NULL};
    hs = decl_at(a, hs, he, kt_words);
    if (hs == he)
      return 0;
    if (hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      out->kind = keyword_kind(a, ov, 1);
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1; /* no ';' ends the statement before it */
      out->match_off = ov[0];
      return 1;
    }
    if (hmatch(a, R_FUNC, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "function"; /* Kotlin's word for methods too */
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    return 0;
  case CK_LANG_SWIFT: {
    if (in_func)
      return 0; /* closures and local functions stay in their function */
    static const char *const sw_words[] = {
        "class", "struct", "enum", "protocol", "extension", "actor",
        "func", "init", "deinit", "subscript", "var", NULL};
    hs = decl_at(a, hs, he, sw_words);
    if (hs == he)
      return 0;
    int member = parent && strcmp(pk, "namespace");
    out->head_at_match = 1; /* no ';' ends the statement before it */
    if (hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      out->kind = keyword_kind(a, ov, 1);
    } else if (hmatch(a, R_FUNC, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = member ? "method" : "function";
      out->is_func = 1;
    } else if (member && hmatch(a, R_METHOD, hs, he, &ov) &&
               grp(ov, 1, &off, &len)) {
      out->kind = "method";
      out->is_func = 1;
    } else if (hmatch(a, R_FN2, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "property"; /* its accessors' code has it as caller */
      out->is_func = 1;
    } else {
      return 0;
    }
    out->name_off = off;
    out->name_len = len;
    out->match_off = ov[0];
    return 1;
  }
  case CK_LANG_PHP:
    if (in_func)
      return 0; /* closures and conditional functions stay in their body */
    if (hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      out->kind = keyword_kind(a, ov, 1);
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (hmatch(a, R_FUNC, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = parent && strcmp(pk, "namespace") ? "method" : "function";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (hmatch(a, R_NS, hs, he, &ov)) {
      out->kind = "namespace"; /* "namespace {": the global one, unnamed */
      if (grp(ov, 1, &off, &len)) {
        out->name_off = off;
        out->name_len = len;
      }
      return 1;
    }
    return 0;
  case CK_LANG_JS:
  case CK_LANG_TS:
    if (hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      out->kind = keyword_kind(a, ov, 1);
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    if (hmatch(a, R_FUNC, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "function";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    if (hmatch(a, R_FN2, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "function";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    if (hmatch(a, R_NS, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "namespace";
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    if (parent && !strcmp(pk, "class") && hmatch(a, R_METHOD, hs, he, &ov) &&
        grp(ov, 1, &off, &len)) {
      static const char *const bad[] = {"if",    "while",  "for",      "switch",
                                        "catch", "return", "function", NULL};
      for (int i = 0; bad[i]; i++)
        if (strlen(bad[i]) == len && memcmp(a->view + off, bad[i], len) == 0)
          return 0;
      out->kind = "method";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    return 0;
  case CK_LANG_GO:
    if (!in_func && hmatch(a, R_FUNC, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      size_t roff, rlen;
      out->kind = grp(ov, 1, &roff, &rlen) ? "method" : "function";
      if (out->kind[0] == 'm') {
        out->recv_off = roff;
        out->recv_len = rlen;
      }
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    if (!in_func && hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = keyword_kind(a, ov, 2);
      out->name_off = off;
      out->name_len = len;
      out->head_at_match = 1;
      out->match_off = ov[0];
      return 1;
    }
    return 0;
  case CK_LANG_RUST:
    if (hmatch(a, R_FUNC, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = parent && (!strcmp(pk, "impl") || !strcmp(pk, "trait"))
                      ? "method"
                      : "function";
      out->is_func = 1;
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (hmatch(a, R_MACRO, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "macro";
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (hmatch(a, R_IMPL, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "impl";
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (hmatch(a, R_TYPE, hs, he, &ov) && grp(ov, 2, &off, &len)) {
      out->kind = keyword_kind(a, ov, 1);
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    if (hmatch(a, R_MOD, hs, he, &ov) && grp(ov, 1, &off, &len)) {
      out->kind = "mod";
      out->name_off = off;
      out->name_len = len;
      return 1;
    }
    return 0;
  default:
    return 0;
  }
}

static dq_status push_scope(sym_state *a, const ck_scope *s) {
  ck_scopes *v = a->sc;
  if (sym_grow((void **)&v->v, &v->cap, v->n, sizeof *v->v))
    return sym_oom(a);
  v->v[v->n++] = *s;
  return DQ_OK;
}

/* C/C++ conditional compilation: when a branch of one #if group leaves the
 * brace depth changed ("#ifdef X\n while (a) {\n#else\n while (b) {\n
 * #endif"), only the first branch is kept in the view (the others are
 * blanked) so brace matching stays right; "#if 0" blanks its first branch
 * instead. Groups whose branches are all balanced (whole functions on each
 * side, #if 0 included) are kept entire. References come from every
 * branch. */
#define COND_MAX_BRANCHES 16
#define COND_MAX_DEPTH 64

typedef struct cond_group {
  size_t start[COND_MAX_BRANCHES]; /* line after each #if/#elif/#else */
  size_t end[COND_MAX_BRANCHES];   /* start of the next directive line */
  int n, if0;
} cond_group;

static long pair_delta(const char *v, size_t a, size_t b, char open,
                       char close) {
  long d = 0;
  for (size_t i = a; i < b; i++)
    d += v[i] == open ? 1 : v[i] == close ? -1 : 0;
  return d;
}

static long brace_delta(const char *v, size_t a, size_t b) {
  return pair_delta(v, a, b, '{', '}');
}

static void blank_range(char *v, size_t a, size_t b) {
  for (size_t i = a; i < b; i++)
    if (v[i] != '\n')
      v[i] = ' ';
}

static void cond_blank(sym_state *a) {
  cond_group *g = calloc(COND_MAX_DEPTH, sizeof *g);
  if (!g)
    return; /* best effort: without it only brace matching suffers */
  int depth = 0;
  const char *b = a->blank;
  for (size_t ls = 0; ls < a->n;) {
    size_t le = ck_next_line(a->c, ls);
    size_t i = ls;
    while (i < le && (b[i] == ' ' || b[i] == '\t'))
      i++;
    if (i < le && b[i] == '#') {
      i++;
      while (i < le && (b[i] == ' ' || b[i] == '\t'))
        i++;
      size_t w = i;
      while (i < le && b[i] >= 'a' && b[i] <= 'z')
        i++;
      size_t wl = i - w;
      if (wl >= 2 && !strncmp(b + w, "if", 2)) {
        if (depth < COND_MAX_DEPTH) {
          cond_group *c = &g[depth];
          memset(c, 0, sizeof *c);
          while (i < le && (b[i] == ' ' || b[i] == '\t'))
            i++;
          c->if0 = wl == 2 && i < le && b[i] == '0' &&
                   (i + 1 >= le || !sym_id((unsigned char)b[i + 1], a->lang));
          c->start[0] = le;
          c->n = 1;
        }
        depth++;
      } else if ((wl == 4 &&
                  (!strncmp(b + w, "elif", 4) || !strncmp(b + w, "else", 4))) ||
                 (wl == 7 && !strncmp(b + w, "elifdef", 7)) ||
                 (wl == 8 && !strncmp(b + w, "elifndef", 8))) {
        if (depth > 0 && depth <= COND_MAX_DEPTH) {
          cond_group *c = &g[depth - 1];
          if (c->n < COND_MAX_BRANCHES) {
            c->end[c->n - 1] = ls;
            c->start[c->n++] = le;
          }
        }
      } else if (wl == 5 && !strncmp(b + w, "endif", 5) && depth > 0) {
        depth--;
        if (depth < COND_MAX_DEPTH) {
          cond_group *c = &g[depth];
          c->end[c->n - 1] = ls;
          int balanced = 1;
          for (int k = 0; k < c->n; k++)
            balanced &= brace_delta(a->view, c->start[k], c->end[k]) == 0;
          if (balanced)
            ; /* keep every branch: definitions on each side are found */
          else if (c->if0)
            blank_range(a->view, c->start[0], c->end[0]);
          else
            for (int k = 1; k < c->n; k++)
              blank_range(a->view, c->start[k], c->end[k]);
        }
      }
    }
    ls = le;
  }
  free(g);
}

/* Brace languages: walk '{' '}' of the view, classify each header. */
static dq_status brace_scopes(sym_state *a) {
  typedef struct frame {
    int scope;        /* index into sc, or -1 for a plain block */
    int def;          /* nearest enclosing definition, -1 at top */
    size_t resume_at; /* an object literal or destructuring inside
                         parentheses (JS/TS `f({ a, b }: P) {`): the
                         statement start its '}' gives back; else 0 */
  } frame;
  int js = a->lang == CK_LANG_JS || a->lang == CK_LANG_TS;
  frame *stack = NULL;
  size_t n_stack = 0, cap_stack = 0;
  dq_status st = DQ_OK;
  size_t last_stmt = 0; /* offset just after the last ';', '{' or '}' */
  const char *v = a->view;
  for (size_t i = 0; i < a->n; i++) {
    char ch = v[i];
    if (ch == ';') {
      last_stmt = i + 1;
    } else if (ch == '{') {
      size_t hs = last_stmt;
      if (i - hs > HEADER_MAX_BYTES)
        hs = i - HEADER_MAX_BYTES;
      while (hs < i && sym_blank(v[hs]))
        hs++;
      int def = n_stack ? stack[n_stack - 1].def : -1;
      cls k;
      int scope = -1;
      size_t resume_at = 0;
      char pc = prev_char(a, i, hs);
      /* JS/TS `f({ a }: P) {`: a '{' after '(' ',' '[' in open parentheses
       * is an object or a destructuring, not a body (+1: 0 means none) */
      if (js && pc && strchr("(,[", pc) && pair_delta(v, hs, i, '(', ')') > 0)
        resume_at = last_stmt + 1;
      else if (hs < i &&
               classify(a, def >= 0 ? &a->sc->v[def] : NULL, hs, i, &k)) {
        ck_scope s = {0};
        s.head = hs;
        if (k.head_at_match) {
          size_t m = k.match_off;
          while (m < i && sym_blank(v[m]))
            m++;
          s.head = m;
        }
        s.sig_end = i;
        s.open = i;
        s.close = a->n ? a->n - 1 : 0;
        s.name_off = k.name_off;
        s.name_len = k.name_len;
        s.recv_off = k.recv_off;
        s.recv_len = k.recv_len;
        s.parent = def;
        s.is_func = k.is_func;
        s.typedef_body = k.is_typedef;
        s.kind = k.kind;
        if ((st = push_scope(a, &s)) != DQ_OK)
          goto out;
        scope = (int)(a->sc->n - 1);
        if (k.name_len && (st = sym_add_def(a, k.name_off)) != DQ_OK)
          goto out;
      }
      if (sym_grow((void **)&stack, &cap_stack, n_stack, sizeof *stack)) {
        st = sym_oom(a);
        goto out;
      }
      stack[n_stack].scope = scope;
      stack[n_stack].def = scope >= 0 ? scope : def;
      stack[n_stack].resume_at = resume_at;
      n_stack++;
      last_stmt = i + 1;
    } else if (ch == '}') {
      last_stmt = i + 1;
      if (n_stack) {
        frame f = stack[--n_stack];
        if (f.scope >= 0)
          a->sc->v[f.scope].close = i;
        if (f.resume_at) /* the header goes on: `f({ a }: P) {` */
          last_stmt = f.resume_at - 1;
      }
    }
  }
out:
  free(stack);
  return st;
}

/* The scopes of an indentation language whose body may still hold the
 * current line, innermost last. */
typedef struct open_scopes {
  int *v;
  size_t n, cap;
} open_scopes;

/* The innermost open scope holding offset `at` (those closed before it
 * dropped), or -1. */
static int indent_parent(const sym_state *a, open_scopes *o, size_t at) {
  while (o->n && a->sc->v[o->v[o->n - 1]].close < at)
    o->n--;
  return o->n ? o->v[o->n - 1] : -1;
}

/* Adds scope s (its name a definition) and opens it. */
static dq_status indent_push(sym_state *a, open_scopes *o, const ck_scope *s) {
  dq_status st;
  if ((st = push_scope(a, s)) != DQ_OK ||
      (st = sym_add_def(a, s->name_off)) != DQ_OK)
    return st;
  if (sym_grow((void **)&o->v, &o->cap, o->n, sizeof *o->v))
    return sym_oom(a);
  o->v[o->n++] = (int)(a->sc->n - 1);
  return DQ_OK;
}

/* The end of an indented body that starts at line `body`: the last byte of
 * its last non-blank line before the first later non-blank line indented no
 * deeper than `ind` (that line's start in *next, a->n when none), or
 * `dflt` when no line is deeper. */
static size_t indent_body_end(const sym_state *a, size_t body, size_t ind,
                              size_t dflt, size_t *next) {
  size_t end = dflt, ls = body;
  size_t li = a->str_lines && ls < a->n ? ck_line_index(a->c, ls) : 0;
  *next = a->n;
  for (; ls < a->n; li++) {
    size_t le = ck_next_line(a->c, ls);
    size_t k = ls;
    while (k < le && (a->blank[k] == ' ' || a->blank[k] == '\t'))
      k++;
    if (k < le && !sym_blank(a->blank[k])) {
      if (k - ls <= ind && !(a->str_lines && a->str_lines[li])) {
        *next = ls;
        break;
      }
      end = le;
      while (end > k && sym_blank(a->src[end - 1]))
        end--;
      end--;
    }
    ls = le;
  }
  return end;
}

/* Python: the header of the def/class whose name ends at `from` ends at
 * the ':' at bracket depth 0 (*hdr); the body ends before the first later
 * non-blank line indented no deeper than the definition (*end). Returns 0
 * when no ':' follows. */
static int py_extent(const sym_state *a, size_t from, size_t ind, size_t *hdr,
                     size_t *end) {
  size_t j = from;
  int depth = 0;
  for (; j < a->n; j++) {
    char ch = a->blank[j];
    if (sym_bracket(ch))
      depth += sym_bracket(ch);
    else if (ch == ':' && depth <= 0)
      break;
  }
  if (j >= a->n)
    return 0;
  size_t next;
  *hdr = j;
  *end = indent_body_end(a, ck_next_line(a->c, j), ind, j, &next);
  return 1;
}

/* Ruby: the header ends at the line's end, or past the parameters' ')'
 * (*hdr); the body runs like Python's, by indentation, and takes the "end"
 * line that closes it at the definition's own indentation (*end).
 * One-line and endless definitions ("def f; 1; end", "def f = 1") run to
 * the end of their line. */
static void rb_extent(const sym_state *a, size_t from, size_t ind, size_t *hdr,
                      size_t *end) {
  size_t j = from;
  int depth = 0;
  for (; j < a->n; j++) {
    char ch = a->blank[j];
    if (ch == '(')
      depth++;
    else if (ch == ')')
      depth--;
    else if ((ch == '\n' || ch == ';') && depth <= 0)
      break;
  }
  if (j >= a->n)
    j = a->n - 1;
  size_t eol = ck_next_line(a->c, j);
  size_t one = eol > j ? eol - 1 : j;
  while (one > j && sym_blank(a->src[one]))
    one--;
  size_t next;
  *hdr = j;
  *end = indent_body_end(a, eol, ind, one, &next);
  if (next < a->n) { /* the closing "end" at the same indentation */
    size_t k = next + ind;
    if (k + 3 <= a->n && !memcmp(a->blank + k, "end", 3) &&
        (k + 3 == a->n || !sym_id((unsigned char)a->blank[k + 3], a->lang)))
      *end = k + 2;
  }
}

/* Python: which lines start inside a triple-quoted string, from the blank
 * copy, where only the quotes of a literal are left ("\"\"\"   \"\"\"",
 * "'  '"), so they pair up without escapes. */
static dq_status py_string_lines(sym_state *a) {
  const ck_ctx *c = a->c;
  const char *b = a->blank;
  if (!(a->str_lines = calloc(c->n_lines, 1)))
    return sym_oom(a);
  char tri = 0; /* the quote of the open triple-quoted string */
  size_t l = 0;
  for (size_t i = 0; i < a->n; i++) {
    while (l + 1 < c->n_lines && c->line_starts[l + 1] <= i)
      a->str_lines[++l] = tri != 0;
    char ch = b[i];
    if (ch != '"' && ch != '\'')
      continue;
    int three = i + 2 < a->n && b[i + 1] == ch && b[i + 2] == ch;
    if (tri) {
      if (ch == tri && three) {
        tri = 0;
        i += 2;
      }
    } else if (three) {
      tri = ch;
      i += 2;
    } else { /* one line's string: to its closing quote */
      i++;
      while (i < a->n && b[i] != ch && b[i] != '\n')
        i++;
      if (i < a->n && b[i] == '\n')
        i--;
    }
  }
  while (l + 1 < c->n_lines)
    a->str_lines[++l] = tri != 0;
  return DQ_OK;
}

/* Python and Ruby: scopes from definition lines (Python's def/class,
 * Ruby's def/class/module, not "class << self", whose methods belong to
 * the class), their bodies by indentation (py_extent, rb_extent). */
static dq_status indent_scopes(sym_state *a) {
  const int rb = a->lang == CK_LANG_RUBY;
  dq_status st = DQ_OK;
  pcre2_code *re = ck_re(
      a->c,
      rb ? "^([ \\t]*)(?:(?:private|protected|public|module_function)[ \\t]+)?"
           "(def|class|module)[ \\t]+(?:self[ \\t]*\\.[ \\t]*)?"
           "([A-Za-z_][\\w]*(?:::[A-Za-z_]\\w*)*[?!=]?"
           "|[!-'*-/<-@^`|~\\[\\]%&]+)"
         : "^([ \\t]*)(?:async[ \\t]+)?(def|class)[ \\t]+([A-Za-z_]\\w*)",
      PCRE2_MULTILINE);
  if (!re)
    return DQ_ERR_INTERNAL;
  open_scopes op = {0};
  if (!rb && (st = py_string_lines(a)) != DQ_OK)
    goto out;
  PCRE2_SIZE *ov;
  size_t from = 0;
  int rc;
  while ((rc = ck_re_next(re, a->md, a->blank, a->n, from, &ov)) == 1) {
    size_t ind = ov[3] - ov[2];
    size_t koff = ov[4], noff = ov[6], nlen = ov[7] - ov[6];
    from = ov[1];
    if (rb && nlen == 2 && !memcmp(a->blank + noff, "<<", 2))
      continue;
    size_t hdr, end;
    if (rb)
      rb_extent(a, ov[7], ind, &hdr, &end);
    else if (!py_extent(a, ov[7], ind, &hdr, &end))
      break;
    ck_scope s = {0};
    s.head = ov[0] + ind;
    s.sig_end = hdr;
    s.open = hdr;
    s.close = end;
    s.name_off = noff;
    s.name_len = nlen;
    s.parent = indent_parent(a, &op, ov[0]);
    s.is_func = a->blank[koff] == 'd';
    const char *pk = s.parent >= 0 ? a->sc->v[s.parent].kind : "";
    s.kind = a->blank[koff] == 'c'   ? "class"
             : a->blank[koff] == 'm' ? "module"
             : (!strcmp(pk, "class") || !strcmp(pk, "module")) ? "method"
                                                               : "function";
    if ((st = indent_push(a, &op, &s)) != DQ_OK)
      goto out;
  }
  if (rc < 0)
    st = dq_error_set(a->c->err, DQ_ERR_INTERNAL, "%s: regex match failed",
                      a->c->path);
out:
  free(op.v);
  free(a->str_lines);
  a->str_lines = NULL;
  pcre2_code_free(re);
  return st;
}

static int sym_cmp(const void *x, const void *y) {
  const dq_symbol *a = x, *b = y;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  return a->col < b->col ? -1 : a->col > b->col;
}
static int ref_cmp(const void *x, const void *y) {
  const dq_ref *a = x, *b = y;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  return a->col < b->col ? -1 : a->col > b->col;
}

/* Most files come out in order already (includes first): skip the sort. */
static int sorted_syms(const dq_symbol *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (sym_cmp(&v[i - 1], &v[i]) > 0)
      return 0;
  return 1;
}
static int sorted_refs(const dq_ref *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (ref_cmp(&v[i - 1], &v[i]) > 0)
      return 0;
  return 1;
}

/* Orders refs[r0..n) by position: the few include refs [r0, mid) (in rule
 * order) are sorted, then merged with the scan's refs [mid, n), which come
 * in text order. */
static dq_status merge_refs(ck_ctx *c, size_t r0, size_t mid) {
  dq_ref *v = c->p->refs;
  size_t n = c->p->n_refs;
  if (n == r0)
    return DQ_OK; /* no refs (v may be NULL: no NULL + 0 below) */
  if (!sorted_refs(v + r0, mid - r0))
    qsort(v + r0, mid - r0, sizeof *v, ref_cmp);
  if (!sorted_refs(v + mid, n - mid))
    qsort(v + mid, n - mid, sizeof *v, ref_cmp);
  if (mid == r0 || mid == n || ref_cmp(&v[mid - 1], &v[mid]) <= 0)
    return DQ_OK;
  size_t n1 = mid - r0;
  dq_ref *tmp = malloc(n1 * sizeof *tmp);
  if (!tmp)
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->path);
  memcpy(tmp, v + r0, n1 * sizeof *tmp);
  size_t i = 0, j = mid, k = r0;
  while (i < n1 && j < n)
    v[k++] = ref_cmp(&v[j], &tmp[i]) < 0 ? v[j++] : tmp[i++];
  while (i < n1)
    v[k++] = tmp[i++];
  free(tmp);
  return DQ_OK;
}

dq_status ck_code_symbols(ck_ctx *c, ck_lang lang, ck_scopes *out) {
  sym_state a;
  memset(&a, 0, sizeof a);
  paths p = {0};
  dq_status st = DQ_ERR_NOMEM;
  a.c = c;
  a.lang = lang;
  a.src = c->t->text;
  a.n = c->t->n_bytes;
  a.sc = out;
  a.sep = (lang == CK_LANG_C || lang == CK_LANG_CPP || lang == CK_LANG_RUST ||
           lang == CK_LANG_RUBY)
              ? "::"
              : ".";
  size_t sym0 = c->p->n_symbols, ref0 = c->p->n_refs;
  char *dirs = NULL;
  a.blank = ck_lex_blank(a.src, a.n, lang, &dirs);
  if (!a.blank) {
    sym_oom(&a);
    goto fail;
  }
  a.view = dirs ? dirs : a.blank;
  sym_kw_init(&a.kw, lang);
  a.md = pcre2_match_data_create(32, NULL);
  if (!a.md) {
    sym_oom(&a);
    goto fail;
  }
  if ((st = compile_lang(&a)) != DQ_OK)
    goto fail;
  if (dirs)
    cond_blank(&a);
  st = lang == CK_LANG_PYTHON || lang == CK_LANG_RUBY ? indent_scopes(&a)
                                                      : brace_scopes(&a);
  if (st == DQ_OK && a.re_failed)
    st = DQ_ERR_INTERNAL; /* ck_re set the message */
  if (st != DQ_OK || (st = sym_build_paths(&a, &p)) != DQ_OK)
    goto fail;
  for (size_t i = 0; i < out->n; i++) {
    const ck_scope *s = &out->v[i];
    if (!s->name_len)
      continue;
    size_t ql, lo;
    sym_split_qual(a.src + s->name_off, s->name_len, &ql, &lo);
    if (lo >= s->name_len)
      continue; /* "A::" and nothing after it */
    if ((st = ck_add_symbol(c, a.src + s->name_off + lo, s->name_len - lo,
                            s->kind, s->name_off + lo, p.scope[i])) != DQ_OK)
      goto fail;
    /* The last part of "A::f" and the name of "~A" are not references. */
    size_t last = s->name_off + lo + (a.src[s->name_off + lo] == '~');
    if (last != s->name_off && (st = sym_add_def(&a, last)) != DQ_OK)
      goto fail;
  }
  if ((st = sym_line_rules(&a, &p)) != DQ_OK ||
      (st = sym_decls(&a, &p)) != DQ_OK)
    goto fail;
  size_t ref_mid = c->p->n_refs; /* includes before, the scan's refs after */
  if ((st = sym_scan_refs(&a)) != DQ_OK)
    goto fail;
  if (c->p->n_symbols > sym0 && /* symbols may be NULL: no NULL + 0 */
      !sorted_syms(c->p->symbols + sym0, c->p->n_symbols - sym0))
    qsort(c->p->symbols + sym0, c->p->n_symbols - sym0, sizeof *c->p->symbols,
          sym_cmp);
  if ((st = merge_refs(c, ref0, ref_mid)) != DQ_OK)
    goto fail;
  st = DQ_OK;
fail:
  sym_free_paths(&p, out->n);
  for (int i = 0; i < 8; i++)
    pcre2_code_free(a.re[i]);
  pcre2_match_data_free(a.md);
  free(a.defs);
  free(a.skip);
  for (size_t i = 0; i < a.n_bodies; i++)
    free(a.body_name[i]);
  free(a.bodies);
  free(a.body_name);
  free(dirs);
  free(a.blank);
  return st;
}
