/*
 * sym_kw.c - the keywords of each code language, which are never
 * references, in a small open-addressing set built per document (no mutable
 * global state). Builtin type names (int, string, usize ...) count as
 * keywords so they do not flood the reference table.
 */
#include "sym_int.h"

#include <string.h>

static const char *const kw_c[] = {
    "auto",           "break",     "case",          "char",
    "const",          "continue",  "default",       "do",
    "double",         "else",      "enum",          "extern",
    "float",          "for",       "goto",          "if",
    "inline",         "int",       "long",          "register",
    "restrict",       "return",    "short",         "signed",
    "sizeof",         "static",    "struct",        "switch",
    "typedef",        "union",     "unsigned",      "void",
    "volatile",       "while",     "_Bool",         "_Complex",
    "_Static_assert", "_Alignas",  "_Alignof",      "_Atomic",
    "_Generic",       "_Noreturn", "_Thread_local", "defined",
    "__attribute__",  "__inline",  "__inline__",    "__restrict",
    "__extension__",  "__asm__",   "asm",           NULL};
static const char *const kw_cpp[] = {
    "class",        "namespace",    "template",
    "typename",     "public",       "private",
    "protected",    "virtual",      "override",
    "final",        "new",          "delete",
    "this",         "operator",     "using",
    "try",          "catch",        "throw",
    "nullptr",      "constexpr",    "noexcept",
    "explicit",     "friend",       "mutable",
    "static_cast",  "dynamic_cast", "reinterpret_cast",
    "const_cast",   "decltype",     "bool",
    "true",         "false",        "static_assert",
    "alignas",      "alignof",      "consteval",
    "constinit",    "co_await",     "co_return",
    "co_yield",     "concept",      "requires",
    "thread_local", "wchar_t",      "char16_t",
    "char32_t",     "char8_t",
    /* CUDA C++ (.cu, .cuh): qualifiers and the built-in index variables */
    "__global__",   "__device__",   "__host__",
    "__shared__",   "__constant__", "__managed__",
    "__forceinline__", "__noinline__", "__launch_bounds__",
    "__restrict__", "__grid_constant__", "threadIdx",
    "blockIdx",     "blockDim",     "gridDim",
    "warpSize",     NULL};
static const char *const kw_py[] = {
    "False",  "None",   "True",    "and",      "as",       "assert", "async",
    "await",  "break",  "class",   "continue", "def",      "del",    "elif",
    "else",   "except", "finally", "for",      "from",     "global", "if",
    "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
    "pass",   "raise",  "return",  "try",      "while",    "with",   "yield",
    "self",   "cls",    NULL};
static const char *const kw_js[] = {
    "break",    "case",       "catch",  "class",    "const",  "continue",
    "debugger", "default",    "delete", "do",       "else",   "export",
    "extends",  "finally",    "for",    "function", "if",     "import",
    "in",       "instanceof", "let",    "new",      "return", "super",
    "switch",   "this",       "throw",  "try",      "typeof", "var",
    "void",     "while",      "with",   "yield",    "async",  "await",
    "static",   "get",        "set",    "of",       "true",   "false",
    "null",     "undefined",  "from",   NULL};
static const char *const kw_ts[] = {
    "interface", "type",     "enum",     "implements", "public",    "private",
    "protected", "readonly", "abstract", "declare",    "namespace", "module",
    "keyof",     "as",       "any",      "number",     "string",    "boolean",
    "unknown",   "never",    "is",       "infer",      "override",  "satisfies",
    "bigint",    "symbol",   "object",   NULL};
static const char *const kw_go[] = {
    "break",   "case",    "chan",        "const",      "continue", "default",
    "defer",   "else",    "fallthrough", "for",        "func",     "go",
    "goto",    "if",      "import",      "interface",  "map",      "package",
    "range",   "return",  "select",      "struct",     "switch",   "type",
    "var",     "true",    "false",       "nil",        "iota",     "bool",
    "byte",    "int",     "int8",        "int16",      "int32",    "int64",
    "uint",    "uint8",   "uint16",      "uint32",     "uint64",   "uintptr",
    "float32", "float64", "complex64",   "complex128", "string",   "error",
    "rune",    "any",     NULL};
static const char *const kw_rust[] = {
    "as",     "async",  "await", "break",       "const",  "continue", "crate",
    "dyn",    "else",   "enum",  "extern",      "false",  "fn",       "for",
    "if",     "impl",   "in",    "let",         "loop",   "match",    "mod",
    "move",   "mut",    "pub",   "ref",         "return", "self",     "Self",
    "static", "struct", "super", "trait",       "true",   "type",     "unsafe",
    "use",    "where",  "while", "macro_rules", "i8",     "i16",      "i32",
    "i64",    "i128",   "isize", "u8",          "u16",    "u32",      "u64",
    "u128",   "usize",  "f32",   "f64",         "bool",   "char",     "str",
    NULL};
static const char *const kw_java[] = {
    "abstract",   "assert",       "boolean",   "break",      "byte",
    "case",       "catch",        "char",      "class",      "const",
    "continue",   "default",      "do",        "double",     "else",
    "enum",       "extends",      "final",     "finally",    "float",
    "for",        "goto",         "if",        "implements", "import",
    "instanceof", "int",          "interface", "long",       "native",
    "new",        "package",      "private",   "protected",  "public",
    "return",     "short",        "static",    "strictfp",   "super",
    "switch",     "synchronized", "this",      "throw",      "throws",
    "transient",  "try",          "void",      "volatile",   "while",
    "true",       "false",        "null",      "var",        "record",
    "yield",      "sealed",       "permits",   NULL};
static const char *const kw_kt[] = {
    "as",        "break",     "class",     "continue",  "do",
    "else",      "false",     "for",       "fun",       "if",
    "in",        "interface", "is",        "null",      "object",
    "package",   "return",    "super",     "this",      "throw",
    "true",      "try",       "typealias", "val",       "var",
    "when",      "while",     "by",        "catch",     "constructor",
    "finally",   "get",       "import",    "init",      "set",
    "where",     "abstract",  "annotation", "companion", "const",
    "crossinline", "data",    "enum",      "external",  "final",
    "infix",     "inline",    "inner",     "internal",  "lateinit",
    "noinline",  "open",      "operator",  "out",       "override",
    "private",   "protected", "public",    "reified",   "sealed",
    "suspend",   "tailrec",   "vararg",    "it",        "field",
    "Int",       "Long",      "Short",     "Byte",      "Boolean",
    "Char",      "Float",     "Double",    "String",    "Unit",
    "Any",       "Nothing",   NULL};
static const char *const kw_cs[] = {
    "abstract",  "as",        "base",      "bool",      "break",
    "byte",      "case",      "catch",     "char",      "checked",
    "class",     "const",     "continue",  "decimal",   "default",
    "delegate",  "do",        "double",    "else",      "enum",
    "event",     "explicit",  "extern",    "false",     "finally",
    "fixed",     "float",     "for",       "foreach",   "goto",
    "if",        "implicit",  "in",        "int",       "interface",
    "internal",  "is",        "lock",      "long",      "namespace",
    "new",       "null",      "object",    "operator",  "out",
    "override",  "params",    "private",   "protected", "public",
    "readonly",  "ref",       "return",    "sbyte",     "sealed",
    "short",     "sizeof",    "stackalloc", "static",   "string",
    "struct",    "switch",    "this",      "throw",     "true",
    "try",       "typeof",    "uint",      "ulong",     "unchecked",
    "unsafe",    "ushort",    "using",     "virtual",   "void",
    "volatile",  "while",     "var",       "async",     "await",
    "dynamic",   "get",       "set",       "init",      "value",
    "where",     "yield",     "partial",   "record",    "required",
    "nameof",    "when",      "global",    "nint",      "nuint",
    NULL}; /* contextual keywords that are common names (file, add, with,
            * and, or, not ...) are left as identifiers */

static uint32_t hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void kw_add(kwset *k, const char *const *words) {
  for (; *words; words++) {
    uint32_t h = hash_bytes(*words, strlen(*words)) % KW_SLOTS;
    while (k->slot[h] && strcmp(k->slot[h], *words) != 0)
      h = (h + 1) % KW_SLOTS;
    k->slot[h] = *words;
  }
}

int sym_kw_has(const kwset *k, const char *s, size_t n) {
  uint32_t h = hash_bytes(s, n) % KW_SLOTS;
  while (k->slot[h]) {
    if (strncmp(k->slot[h], s, n) == 0 && k->slot[h][n] == '\0')
      return 1;
    h = (h + 1) % KW_SLOTS;
  }
  return 0;
}

/* PHP's keywords are case-insensitive: the spellings code uses. */
static const char *const kw_php[] = {
    "abstract", "and", "array", "as", "break", "callable", "case", "catch",
    "class", "clone", "const", "continue", "declare", "default", "do",
    "echo", "else", "elseif", "empty", "enddeclare", "endfor", "endforeach",
    "endif", "endswitch", "endwhile", "enum", "eval", "exit", "die",
    "extends", "final", "finally", "fn", "for", "foreach", "function",
    "global", "goto", "if", "implements", "include", "include_once",
    "instanceof", "insteadof", "interface", "isset", "list", "match",
    "namespace", "new", "or", "print", "private", "protected", "public",
    "readonly", "require", "require_once", "return", "static", "switch",
    "throw", "trait", "try", "unset", "use", "var", "while", "xor", "yield",
    "from", "true", "false", "null", "TRUE", "FALSE", "NULL", "self",
    "parent", "int", "float", "bool", "string", "void", "mixed", "never",
    "iterable", "object", "__CLASS__", "__DIR__", "__FILE__",
    "__FUNCTION__", "__LINE__", "__METHOD__", "__NAMESPACE__", "__TRAIT__",
    "__halt_compiler", NULL};

static const char *const kw_swift[] = {
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate",
    "func", "import", "init", "inout", "internal", "let", "open",
    "operator", "private", "precedencegroup", "protocol", "public",
    "rethrows", "static", "struct", "subscript", "typealias", "var",
    "break", "case", "catch", "continue", "default", "defer", "do", "else",
    "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw",
    "switch", "where", "while", "as", "false", "is", "nil", "self", "Self",
    "super", "throws", "true", "try", "async", "await", "actor", "some",
    "any", "convenience", "dynamic", "didSet", "final", "get", "lazy",
    "mutating", "nonmutating", "optional", "override", "required", "set",
    "unowned", "weak", "willSet", "indirect", "nonisolated", "Int",
    "Double", "Float", "Bool", "String", "Character", "Void", "Any",
    "AnyObject", "UInt", "Int64", "Int32", "UInt8", "Never", "_", NULL};

static const char *const kw_ruby[] = {
    "BEGIN", "END", "alias", "and", "begin", "break", "case", "class",
    "def", "defined", "do", "else", "elsif", "end", "ensure", "false",
    "for", "if", "in", "module", "next", "nil", "not", "or", "redo",
    "rescue", "retry", "return", "self", "super", "then", "true", "undef",
    "unless", "until", "when", "while", "yield", "__method__", "__FILE__",
    "__LINE__", "__dir__", "require", "require_relative", "private",
    "protected", "public", "module_function", "attr_reader", "attr_writer",
    "attr_accessor", "lambda", "proc", "include", "extend", "prepend",
    "raise", NULL};

void sym_kw_init(kwset *k, ck_lang lang) {
  memset(k, 0, sizeof *k);
  switch (lang) {
  case CK_LANG_CPP:
    kw_add(k, kw_cpp); /* fall through */
  case CK_LANG_C:
    kw_add(k, kw_c);
    break;
  case CK_LANG_PYTHON:
    kw_add(k, kw_py);
    break;
  case CK_LANG_TS:
    kw_add(k, kw_ts); /* fall through */
  case CK_LANG_JS:
    kw_add(k, kw_js);
    break;
  case CK_LANG_GO:
    kw_add(k, kw_go);
    break;
  case CK_LANG_RUST:
    kw_add(k, kw_rust);
    break;
  case CK_LANG_JAVA:
    kw_add(k, kw_java);
    break;
  case CK_LANG_CSHARP:
    kw_add(k, kw_cs);
    break;
  case CK_LANG_KOTLIN:
    kw_add(k, kw_kt);
    break;
  case CK_LANG_PHP:
    kw_add(k, kw_php);
    break;
  case CK_LANG_SWIFT:
    kw_add(k, kw_swift);
    break;
  case CK_LANG_RUBY:
    kw_add(k, kw_ruby);
    break;
  default:
    break;
  }
}
