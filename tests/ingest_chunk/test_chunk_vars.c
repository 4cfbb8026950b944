/*
 * test_chunk_vars.c - variables, constants, fields, properties and
 * enumerators as symbols in every language (kinds "variable", "constant",
 * "field", "property", "event", "enumerator"), outside function bodies
 * only, each with its type or enum as scope; their declaration is no
 * reference. Expected lines and byte columns were read off by hand from the
 * fixtures (and agree with universal-ctags where it has the kind, see
 * tests/bench/ingest/run.sh); the names that must not be symbols are listed
 * in each test.
 */
#include "chunk_test.h"

static dq_doc_parts *run(const char *src, const char *path) {
  dq_text *t = text_of(src, DQ_DOC_CODE, NULL);
  dq_doc_parts *p = chunk_of(t, path, 0, 0);
  dq_text_free(t);
  return p;
}

static int var_kind(const char *kind) {
  static const char *const k[] = {"variable", "constant", "field", "property",
                                  "event",    "enumerator", NULL};
  for (int j = 0; k[j]; j++)
    if (!strcmp(kind, k[j]))
      return 1;
  return 0;
}

/* Symbols of those kinds, all or named name. */
static size_t count_vars(const dq_doc_parts *p, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < p->n_symbols; i++)
    n += var_kind(p->symbols[i].kind) &&
         (!name || !strcmp(p->symbols[i].name, name));
  return n;
}

/* The symbol name (kind, scope) at line:col, where one name has several. */
static int sym_at(const dq_doc_parts *p, const char *name, const char *kind,
                  const char *scope, uint32_t line, uint32_t col) {
  for (size_t i = 0; i < p->n_symbols; i++)
    if (!strcmp(p->symbols[i].name, name) &&
        !strcmp(p->symbols[i].kind, kind) &&
        !strcmp(p->symbols[i].scope, scope) && p->symbols[i].line == line &&
        p->symbols[i].col == col)
      return 1;
  return 0;
}

/* A declared name is no reference: refs starting where a symbol does. */
static size_t refs_at_syms(const dq_doc_parts *p) {
  size_t n = 0;
  for (size_t i = 0; i < p->n_symbols; i++)
    for (size_t j = 0; var_kind(p->symbols[i].kind) && j < p->n_refs; j++)
      n += p->refs[j].line == p->symbols[i].line &&
           p->refs[j].col == p->symbols[i].col;
  return n;
}

/* Lists: the names after ','s on a declaration's line (Go fields, not a
 * func type's parameters) */
static void test_go_list(void) {
  const char *src =
      "package p\n"                                                /* 1 */
      "type S struct {\n"                                          /* 2 */
      "\tX, Y int\n"                                               /* 3 */
      "\tF    func(a, b int) error\n"                              /* 4 */
      "}\n"; /* 5 */
  dq_doc_parts *p = run(src, "list.go");
  CHECK_SYM_IN(p, "X", "field", "S", 3, 2);
  CHECK_SYM_IN(p, "Y", "field", "S", 3, 5);
  CHECK_SYM_IN(p, "F", "field", "S", 4, 2);
  CHECK_EQ_INT(count_vars(p, "a"), 0);
  CHECK_EQ_INT(count_vars(p, "b"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 3);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Lists: Ruby attr_* names, with or without parentheses */
static void test_rb_list(void) {
  const char *src =
      "class A\n"                                                  /* 1 */
      "  attr_accessor :a, :b, :c\n"                               /* 2 */
      "  attr_reader(:d, :e)\n"                                    /* 3 */
      "end\n"; /* 4 */
  dq_doc_parts *p = run(src, "list.rb");
  CHECK_EQ_INT(count_vars(p, NULL), 0);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Lists: JS/TS declarators (not a call's arguments or array elements) */
static void test_ts_list(void) {
  const char *src =
      "let a = 1, b = [1, 2], c;\n"                                /* 1 */
      "export const d = f(x, y), e = 2;\n"; /* 2 */
  dq_doc_parts *p = run(src, "list.ts");
  CHECK_SYM_IN(p, "a", "variable", "", 1, 5);
  CHECK_SYM_IN(p, "b", "variable", "", 1, 12);
  CHECK_SYM_IN(p, "c", "variable", "", 1, 24);
  CHECK_SYM_IN(p, "d", "variable", "", 2, 14);
  CHECK_SYM_IN(p, "e", "variable", "", 2, 27);
  CHECK_EQ_INT(count_vars(p, "x"), 0);
  CHECK_EQ_INT(count_vars(p, "y"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 5);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Lists: Swift cases (also after the enum's '{') with associated values or
 * raw values, and var lists */
static void test_swift_list(void) {
  const char *src =
      "enum Dir { case up, down\n"                                 /* 1 */
      "  case left(Int, String), right = 3\n"                      /* 2 */
      "}\n"                                                        /* 3 */
      "struct P { \n"                                              /* 4 */
      "  var x = 0, y = f(1, 2)\n"                                 /* 5 */
      "}\n"; /* 6 */
  dq_doc_parts *p = run(src, "List.swift");
  CHECK_SYM_IN(p, "up", "enumerator", "Dir", 1, 17);
  CHECK_SYM_IN(p, "down", "enumerator", "Dir", 1, 21);
  CHECK_SYM_IN(p, "left", "enumerator", "Dir", 2, 8);
  CHECK_SYM_IN(p, "right", "enumerator", "Dir", 2, 27);
  CHECK_SYM_IN(p, "x", "property", "P", 5, 7);
  CHECK_SYM_IN(p, "y", "property", "P", 5, 14);
  CHECK_EQ_INT(count_vars(p, "Int"), 0);
  CHECK_EQ_INT(count_vars(p, "String"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 6);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Lists: PHP properties */
static void test_php_list(void) {
  const char *src =
      "<?php\n"                                                    /* 1 */
      "class K {\n"                                                /* 2 */
      "  public $a, $b = [1, 2], $c;\n"                            /* 3 */
      "}\n"; /* 4 */
  dq_doc_parts *p = run(src, "List.php");
  CHECK_SYM_IN(p, "a", "property", "K", 3, 11);
  CHECK_SYM_IN(p, "b", "property", "K", 3, 15);
  CHECK_SYM_IN(p, "c", "property", "K", 3, 28);
  CHECK_EQ_INT(count_vars(p, NULL), 3);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* C++: variables (several per statement, arrays, function pointers, a class's
 * static member defined outside it, a lambda), fields (bit-fields, an unnamed
 * union's), enumerators (enum class, typedef'd and unnamed enums) and the
 * object after an unnamed struct's body; not locals, forward declarations,
 * friends, aliases, templates, externs or a comparison */
static void test_cpp(void) {
  const char *src =
      "namespace geo {\n"                                          /* 1 */
      "int count_a, *count_b[3], count_c = 4;\n"                   /* 2 */
      "static const std::map<int, int> table = {{1, 2}};\n"        /* 3 */
      "void (*handler)(int) = nullptr;\n"                          /* 4 */
      "int Shape::instances = 0;\n"                                /* 5 */
      "struct foo;\n"                                              /* 6 */
      "struct foo *fp;\n"                                          /* 7 */
      "class Shape {\n"                                            /* 8 */
      " public:\n"                                                 /* 9 */
      "  int x : 3;\n"                                             /* 10 */
      "  static constexpr int kMax = 7;\n"                         /* 11 */
      "  std::vector<int> items_;\n"                               /* 12 */
      "  void draw() const;\n"                                     /* 13 */
      "  Shape(int);\n"                                            /* 14 */
      "  union { int i; float f; };\n"                             /* 15 */
      "  friend class Other;\n"                                    /* 16 */
      "  using T = int;\n"                                         /* 17 */
      "  Q_OBJECT\n"                                               /* 18 */
      "};\n"                                                       /* 19 */
      "enum class Color : uint8_t { Red = 1, Green, Blue = Red | Green };\n" /* 20 */
      "typedef enum { E_ONE, E_TWO } e_t;\n"                       /* 21 */
      "enum { ANON_A, ANON_B };\n"                                 /* 22 */
      "auto fn = [](int v) { return v * 2; };\n"                   /* 23 */
      "int run(int x) { int local = 3; static int s2; return local + x; }\n" /* 24 */
      "extern int ext_var;\n"                                      /* 25 */
      "template <typename T> T zero = T();\n"                      /* 26 */
      "}\n"                                                        /* 27 */
      "int a == b;\n"                                              /* 28 */
      "void f(void) { int local = 1; static int s2; }\n"           /* 29 */
      "struct { int inner_a; } anon_var;\n"; /* 30 */
  dq_doc_parts *p = run(src, "src/geo.cpp");
  CHECK_SYM_IN(p, "count_a", "variable", "geo", 2, 5);
  CHECK_SYM_IN(p, "count_b", "variable", "geo", 2, 15);
  CHECK_SYM_IN(p, "count_c", "variable", "geo", 2, 27);
  CHECK_SYM_IN(p, "table", "variable", "geo", 3, 33);
  CHECK_SYM_IN(p, "handler", "variable", "geo", 4, 8);
  CHECK_SYM_IN(p, "instances", "variable", "geo::Shape", 5, 12);
  CHECK_SYM_IN(p, "fp", "variable", "geo", 7, 13);
  CHECK_SYM_IN(p, "x", "field", "geo::Shape", 10, 7);
  CHECK_SYM_IN(p, "kMax", "field", "geo::Shape", 11, 24);
  CHECK_SYM_IN(p, "items_", "field", "geo::Shape", 12, 20);
  CHECK_SYM_IN(p, "i", "field", "geo::Shape", 15, 15);
  CHECK_SYM_IN(p, "f", "field", "geo::Shape", 15, 24);
  CHECK_SYM_IN(p, "Red", "enumerator", "geo::Color", 20, 30);
  CHECK_SYM_IN(p, "Green", "enumerator", "geo::Color", 20, 39);
  CHECK_SYM_IN(p, "Blue", "enumerator", "geo::Color", 20, 46);
  CHECK_SYM_IN(p, "E_ONE", "enumerator", "geo::e_t", 21, 16);
  CHECK_SYM_IN(p, "E_TWO", "enumerator", "geo::e_t", 21, 23);
  CHECK_SYM_IN(p, "ANON_A", "enumerator", "geo", 22, 8);
  CHECK_SYM_IN(p, "ANON_B", "enumerator", "geo", 22, 16);
  CHECK_SYM_IN(p, "fn", "variable", "geo", 23, 6);
  CHECK_SYM_IN(p, "inner_a", "field", "", 30, 14);
  CHECK_SYM_IN(p, "anon_var", "variable", "", 30, 25);
  CHECK_EQ_INT(count_vars(p, "local"), 0);
  CHECK_EQ_INT(count_vars(p, "s2"), 0);
  CHECK_EQ_INT(count_vars(p, "Other"), 0);
  CHECK_EQ_INT(count_vars(p, "T"), 0);
  CHECK_EQ_INT(count_vars(p, "zero"), 0);
  CHECK_EQ_INT(count_vars(p, "ext_var"), 0);
  CHECK_EQ_INT(count_vars(p, "foo"), 0);
  CHECK_EQ_INT(count_vars(p, "a"), 0);
  CHECK_EQ_INT(count_vars(p, "b"), 0);
  CHECK_EQ_INT(count_vars(p, "Q_OBJECT"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 22);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* C: the members of a typedef'd unnamed struct or union (also one behind a
 * pointer typedef, and those of an unnamed struct inside) have the
 * typedef's name as scope */
static void test_c(void) {
  const char *src =
      "typedef struct {\n"                                         /* 1 */
      "  int a;\n"                                                 /* 2 */
      "  struct { int b; } in;\n"                                  /* 3 */
      "} pt_t;\n"                                                  /* 4 */
      "typedef union { int u; } *up_t;\n"; /* 5 */
  dq_doc_parts *p = run(src, "src/pt.h");
  CHECK_SYM_IN(p, "a", "field", "pt_t", 2, 7);
  CHECK_SYM_IN(p, "b", "field", "pt_t", 3, 16);
  CHECK_SYM_IN(p, "in", "field", "pt_t", 3, 21);
  CHECK_SYM_IN(p, "u", "field", "up_t", 5, 21);
  CHECK_EQ_INT(count_vars(p, "pt_t"), 0);
  CHECK_EQ_INT(count_vars(p, "up_t"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 4);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Java: annotated and qualified-type fields, enum constants (with arguments
 * or a body) and an enum's field; not the locals of a method or of a static
 * initializer */
static void test_java(void) {
  const char *src =
      "public class V {\n"                                         /* 1 */
      "    @Inject private Service svc;\n"                         /* 2 */
      "    private java.util.List<String> names = new java.util.ArrayList<>();\n" /* 3 */
      "    static { int initLocal = 1; }\n"                        /* 4 */
      "    int get() { int local = 2; return local; }\n"           /* 5 */
      "    enum Color { RED(\"r\"), GREEN { void f() {} }; private final String code = \"\"; }\n" /* 6 */
      "}\n"; /* 7 */
  dq_doc_parts *p = run(src, "src/V.java");
  CHECK_SYM_IN(p, "svc", "field", "V", 2, 29);
  CHECK_SYM_IN(p, "names", "field", "V", 3, 36);
  CHECK_SYM_IN(p, "RED", "enumerator", "V.Color", 6, 18);
  CHECK_SYM_IN(p, "GREEN", "enumerator", "V.Color", 6, 28);
  CHECK_SYM_IN(p, "code", "field", "V.Color", 6, 72);
  CHECK_EQ_INT(count_vars(p, "initLocal"), 0);
  CHECK_EQ_INT(count_vars(p, "local"), 0);
  CHECK_EQ_INT(count_vars(p, "Service"), 0);
  CHECK_EQ_INT(count_vars(p, "String"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 5);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* C#: nullable and qualified-type fields, an event, a constant, a field whose
 * initializer opens a brace, enumerators after an attribute */
static void test_cs(void) {
  const char *src =
      "class V {\n"                                                /* 1 */
      "    private static bool? m_force = null;\n"                 /* 2 */
      "    private System.Windows.Forms.Button m_btn;\n"           /* 3 */
      "    public static event EventHandler<EventArgs> Changed;\n" /* 4 */
      "    public const int Max = 3;\n"                            /* 5 */
      "    public static readonly Uuid Id = new Uuid(new byte[] {\n" /* 6 */
      "        1, 2 });\n"                                         /* 7 */
      "    int Get() { int local = 1; return local; }\n"           /* 8 */
      "}\n"                                                        /* 9 */
      "enum Mode { [Description(\"a\")] Fast = 1, Slow }\n"; /* 10 */
  dq_doc_parts *p = run(src, "src/V.cs");
  CHECK_SYM_IN(p, "m_force", "field", "V", 2, 26);
  CHECK_SYM_IN(p, "m_btn", "field", "V", 3, 41);
  CHECK_SYM_IN(p, "Changed", "event", "V", 4, 49);
  CHECK_SYM_IN(p, "Max", "field", "V", 5, 22);
  CHECK_SYM_IN(p, "Id", "field", "V", 6, 33);
  CHECK_SYM_IN(p, "Fast", "enumerator", "Mode", 10, 32);
  CHECK_SYM_IN(p, "Slow", "enumerator", "Mode", 10, 42);
  CHECK_EQ_INT(count_vars(p, "local"), 0);
  CHECK_EQ_INT(count_vars(p, "EventHandler"), 0);
  CHECK_EQ_INT(count_vars(p, "Description"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 7);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Go: var and const blocks (names of one line, iota), struct fields (of an
 * inner struct too); not embedded fields, the blank identifier, a type, or
 * locals */
static void test_go(void) {
  const char *src =
      "package main\n"                                             /* 1 */
      "\n"                                                         /* 2 */
      "import \"fmt\"\n"                                           /* 3 */
      "\n"                                                         /* 4 */
      "var (\n"                                                    /* 5 */
      "\tErrBad = fmt.Errorf(\"bad\")\n"                           /* 6 */
      "\ta, b   = 1, 2\n"                                          /* 7 */
      "\tcfg    struct {\n"                                        /* 8 */
      "\t\tn int\n"                                                /* 9 */
      "\t}\n"                                                      /* 10 */
      ")\n"                                                        /* 11 */
      "\n"                                                         /* 12 */
      "const (\n"                                                  /* 13 */
      "\tKindA Kind = iota\n"                                      /* 14 */
      "\tKindB\n"                                                  /* 15 */
      ")\n"                                                        /* 16 */
      "\n"                                                         /* 17 */
      "type Server struct {\n"                                     /* 18 */
      "\tAddr    string\n"                                         /* 19 */
      "\tHandler http.Handler `json:\"h\"`\n"                      /* 20 */
      "\tsync.Mutex\n"                                             /* 21 */
      "\t*log.Logger\n"                                            /* 22 */
      "\tName, Alias string\n"                                     /* 23 */
      "\tinner   struct {\n"                                       /* 24 */
      "\t\tdepth int\n"                                            /* 25 */
      "\t}\n"                                                      /* 26 */
      "}\n"                                                        /* 27 */
      "\n"                                                         /* 28 */
      "type Reader interface {\n"                                  /* 29 */
      "\tRead(p []byte) (n int, err error)\n"                      /* 30 */
      "\tio.Closer\n"                                              /* 31 */
      "}\n"                                                        /* 32 */
      "\n"                                                         /* 33 */
      "func main() {\n"                                            /* 34 */
      "\tvar local = 1\n"                                          /* 35 */
      "\tx := 2\n"                                                 /* 36 */
      "\tfmt.Println(local, x)\n"                                  /* 37 */
      "}\n"; /* 38 */
  dq_doc_parts *p = run(src, "main.go");
  CHECK_SYM_IN(p, "ErrBad", "variable", "", 6, 2);
  CHECK_SYM_IN(p, "a", "variable", "", 7, 2);
  CHECK_SYM_IN(p, "b", "variable", "", 7, 5);
  CHECK_SYM_IN(p, "n", "field", "cfg", 9, 3);
  CHECK_SYM_IN(p, "KindA", "constant", "", 14, 2);
  CHECK_SYM_IN(p, "KindB", "constant", "", 15, 2);
  CHECK_SYM_IN(p, "Addr", "field", "Server", 19, 2);
  CHECK_SYM_IN(p, "Handler", "field", "Server", 20, 2);
  CHECK_SYM_IN(p, "Name", "field", "Server", 23, 2);
  CHECK_SYM_IN(p, "Alias", "field", "Server", 23, 8);
  CHECK_SYM_IN(p, "depth", "field", "Server.inner", 25, 3);
  CHECK_EQ_INT(count_vars(p, "local"), 0);
  CHECK_EQ_INT(count_vars(p, "x"), 0);
  CHECK_EQ_INT(count_vars(p, "_"), 0);
  CHECK_EQ_INT(count_vars(p, "struct"), 0);
  CHECK_EQ_INT(count_vars(p, "Kind"), 0);
  CHECK_EQ_INT(count_vars(p, "Mutex"), 0);
  CHECK_EQ_INT(count_vars(p, "Logger"), 0);
  CHECK_EQ_INT(count_vars(p, "Closer"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 11);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Rust: const and static, struct fields (attributes, pub(crate), generic and
 * fn types), enum variants (with fields or a tuple), an associated constant;
 * not a function's constant or a variant's fields */
static void test_rs(void) {
  const char *src =
      "pub const LIMIT: usize = 10;\n"                             /* 1 */
      "static mut COUNTER: u32 = 0;\n"                             /* 2 */
      "pub(crate) struct Conf<'a> {\n"                             /* 3 */
      "    pub name: &'a str,\n"                                   /* 4 */
      "    #[serde(default)]\n"                                    /* 5 */
      "    pub(crate) map: HashMap<String, Vec<u8>>,\n"            /* 6 */
      "    f: fn(i32) -> i32,\n"                                   /* 7 */
      "}\n"                                                        /* 8 */
      "pub enum Shape { Circle { r: f64 }, Square(f64), #[default] Empty }\n" /* 9 */
      "impl Conf<'_> {\n"                                          /* 10 */
      "    const DEFAULT: u8 = 1;\n"                               /* 11 */
      "    fn run(&self) { const INNER: u8 = 2; let x = 1; }\n"    /* 12 */
      "}\n"; /* 13 */
  dq_doc_parts *p = run(src, "src/conf.rs");
  CHECK_SYM_IN(p, "LIMIT", "constant", "", 1, 11);
  CHECK_SYM_IN(p, "COUNTER", "variable", "", 2, 12);
  CHECK_SYM_IN(p, "name", "field", "Conf", 4, 9);
  CHECK_SYM_IN(p, "map", "field", "Conf", 6, 16);
  CHECK_SYM_IN(p, "f", "field", "Conf", 7, 5);
  CHECK_SYM_IN(p, "Circle", "enumerator", "Shape", 9, 18);
  CHECK_SYM_IN(p, "Square", "enumerator", "Shape", 9, 37);
  CHECK_SYM_IN(p, "Empty", "enumerator", "Shape", 9, 61);
  CHECK_SYM_IN(p, "DEFAULT", "constant", "Conf", 11, 11);
  CHECK_EQ_INT(count_vars(p, "INNER"), 0);
  CHECK_EQ_INT(count_vars(p, "x"), 0);
  CHECK_EQ_INT(count_vars(p, "r"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 9);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* TypeScript: top-level const/let (also after a comma), class fields
 * (modifiers, #private, optional, arrow-function values), interface members,
 * enum members; not locals, object literal keys or an IIFE's variables;
 * a constructor's parameter property is a field */
static void test_ts(void) {
  const char *src =
      "import { x } from \"./x\";\n"                               /* 1 */
      "export const API = \"v1\", OTHER = 2;\n"                    /* 2 */
      "let counter = 0;\n"                                         /* 3 */
      "const handler = (e: Event) => { const inner = 1; return inner; };\n" /* 4 */
      "function run() {\n"                                         /* 5 */
      "  const local = 1;\n"                                       /* 6 */
      "  let other = compute(\n"                                   /* 7 */
      "    local,\n"                                               /* 8 */
      "  );\n"                                                     /* 9 */
      "  return other;\n"                                          /* 10 */
      "}\n"                                                        /* 11 */
      "const config = {\n"                                         /* 12 */
      "  port: 8080,\n"                                            /* 13 */
      "  host: \"x\"\n"                                            /* 14 */
      "};\n"                                                       /* 15 */
      "export class Store<T> {\n"                                  /* 16 */
      "  private items: T[] = [];\n"                               /* 17 */
      "  static readonly MAX = 10;\n"                              /* 18 */
      "  #secret = 1;\n"                                           /* 19 */
      "  name?: string;\n"                                         /* 20 */
      "  onChange = () => {\n"                                     /* 21 */
      "    this.items = [];\n"                                     /* 22 */
      "  };\n"                                                     /* 23 */
      "  constructor(private readonly svc: Svc) {}\n"              /* 24 */
      "  get size(): number { return this.items.length; }\n"       /* 25 */
      "  add(item: T): void {\n"                                   /* 26 */
      "    const tmp = item;\n"                                    /* 27 */
      "    this.items.push(tmp);\n"                                /* 28 */
      "  }\n"                                                      /* 29 */
      "}\n"                                                        /* 30 */
      "interface Opts {\n"                                         /* 31 */
      "  verbose: boolean,\n"                                      /* 32 */
      "  level?: number;\n"                                        /* 33 */
      "  run(x: number): void;\n"                                  /* 34 */
      "}\n"                                                        /* 35 */
      "enum Dir { Up = 1, Down, Left = \"L\" }\n"                  /* 36 */
      "(function () { var hidden = 1; })();\n"; /* 37 */
  dq_doc_parts *p = run(src, "web/store.ts");
  CHECK_SYM_IN(p, "API", "variable", "", 2, 14);
  CHECK_SYM_IN(p, "OTHER", "variable", "", 2, 26);
  CHECK_SYM_IN(p, "counter", "variable", "", 3, 5);
  CHECK_SYM_IN(p, "config", "variable", "", 12, 7);
  CHECK_SYM_IN(p, "items", "field", "Store", 17, 11);
  CHECK_SYM_IN(p, "MAX", "field", "Store", 18, 19);
  CHECK_SYM_IN(p, "#secret", "field", "Store", 19, 3);
  CHECK_SYM_IN(p, "name", "field", "Store", 20, 3);
  CHECK_SYM_IN(p, "onChange", "field", "Store", 21, 3);
  CHECK_SYM_IN(p, "svc", "field", "Store", 24, 32);
  CHECK_SYM_IN(p, "verbose", "field", "Opts", 32, 3);
  CHECK_SYM_IN(p, "level", "field", "Opts", 33, 3);
  CHECK_SYM_IN(p, "Up", "enumerator", "Dir", 36, 12);
  CHECK_SYM_IN(p, "Down", "enumerator", "Dir", 36, 20);
  CHECK_SYM_IN(p, "Left", "enumerator", "Dir", 36, 26);
  CHECK_EQ_INT(count_vars(p, "inner"), 0);
  CHECK_EQ_INT(count_vars(p, "local"), 0);
  CHECK_EQ_INT(count_vars(p, "other"), 0);
  CHECK_EQ_INT(count_vars(p, "port"), 0);
  CHECK_EQ_INT(count_vars(p, "host"), 0);
  CHECK_EQ_INT(count_vars(p, "tmp"), 0);
  CHECK_EQ_INT(count_vars(p, "hidden"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 15);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Python: module-level assignments (also under an if), class attributes
 * (annotated, with or without a value, of a nested class); not keyword
 * arguments on a continuation line, locals, a docstring's text or a
 * comparison */
static void test_py(void) {
  const char *src =
      "import os\n"                                                /* 1 */
      "VERSION = \"1.0\"\n"                                        /* 2 */
      "DEBUG: bool = False\n"                                      /* 3 */
      "if os.name == \"nt\":\n"                                    /* 4 */
      "    SEP = \"\\\\\"\n"                                       /* 5 */
      "x = call(a=1,\n"                                            /* 6 */
      "         b=2)\n"                                            /* 7 */
      "def f(y=3):\n"                                              /* 8 */
      "    z = y\n"                                                /* 9 */
      "    return z\n"                                             /* 10 */
      "class Point:\n"                                             /* 11 */
      "    \"\"\"Doc.\n"                                           /* 12 */
      "    fake = 1\n"                                             /* 13 */
      "    \"\"\"\n"                                               /* 14 */
      "    dims = 2\n"                                             /* 15 */
      "    x: int\n"                                               /* 16 */
      "    y: float = 0.0\n"                                       /* 17 */
      "    def __init__(self):\n"                                  /* 18 */
      "        self.x = 1\n"                                       /* 19 */
      "    class Meta:\n"                                          /* 20 */
      "        ordering = [\"x\"]\n"                               /* 21 */
      "a == b\n"; /* 22 */
  dq_doc_parts *p = run(src, "pkg/point.py");
  CHECK_SYM_IN(p, "VERSION", "variable", "", 2, 1);
  CHECK_SYM_IN(p, "DEBUG", "variable", "", 3, 1);
  CHECK_SYM_IN(p, "SEP", "variable", "", 5, 5);
  CHECK_SYM_IN(p, "x", "variable", "", 6, 1);
  CHECK_SYM_IN(p, "dims", "field", "Point", 15, 5);
  CHECK_SYM_IN(p, "x", "field", "Point", 16, 5);
  CHECK_SYM_IN(p, "y", "field", "Point", 17, 5);
  CHECK(sym_at(p, "x", "field", "Point", 19, 14));
  CHECK_SYM_IN(p, "ordering", "field", "Point.Meta", 21, 9);
  CHECK_EQ_INT(count_vars(p, "z"), 0);
  CHECK_EQ_INT(count_vars(p, "a"), 0);
  CHECK_EQ_INT(count_vars(p, "b"), 0);
  CHECK_EQ_INT(count_vars(p, "fake"), 0);
  CHECK_EQ_INT(count_vars(p, "os"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 9);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Python: attributes assigned in __init__ (once per name, annotated too)
 * are fields of its class; not those of other methods, of a closure, of a
 * function named __init__ outside a class, augmented assignments or
 * comparisons */
static void test_py_self(void) {
  const char *src =
      "class Point:\n"                                             /* 1 */
      "    def __init__(self, x, y=0):\n"                          /* 2 */
      "        self.x = x\n"                                       /* 3 */
      "        if y:\n"                                            /* 4 */
      "            self.y = y\n"                                   /* 5 */
      "        else:\n"                                            /* 6 */
      "            self.y = 0\n"                                   /* 7 */
      "        self.items: list = []\n"                            /* 8 */
      "        self.total += 1\n"                                  /* 9 */
      "        call(self.z == 1)\n"                                /* 10 */
      "        def inner():\n"                                     /* 11 */
      "            self.hidden = 1\n"                              /* 12 */
      "    def move(self):\n"                                      /* 13 */
      "        self.moved = True\n"                                /* 14 */
      "def __init__(self):\n"                                      /* 15 */
      "    self.free = 1\n"; /* 16 */
  dq_doc_parts *p = run(src, "pkg/point2.py");
  CHECK_SYM_IN(p, "x", "field", "Point", 3, 14);
  CHECK_SYM_IN(p, "y", "field", "Point", 5, 18);
  CHECK_SYM_IN(p, "items", "field", "Point", 8, 14);
  CHECK_EQ_INT(count_vars(p, "z"), 0);
  CHECK_EQ_INT(count_vars(p, "hidden"), 0);
  CHECK_EQ_INT(count_vars(p, "moved"), 0);
  CHECK_EQ_INT(count_vars(p, "free"), 0);
  CHECK_EQ_INT(count_vars(p, "total"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 3);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* JS: "this.x = ..." in a class's constructor (once per name, in nested
 * blocks too) is a field of the class; not in other methods, a comparison,
 * or a function named constructor outside a class */
static void test_js_this(void) {
  const char *src =
      "class Store {\n"                                            /* 1 */
      "  constructor(svc) {\n"                                     /* 2 */
      "    this.svc = svc;\n"                                      /* 3 */
      "    this.items = [];\n"                                     /* 4 */
      "    if (svc) {\n"                                           /* 5 */
      "      this.items = svc.load();\n"                           /* 6 */
      "      this.ready = true;\n"                                 /* 7 */
      "    }\n"                                                    /* 8 */
      "    this.count == 0;\n"                                     /* 9 */
      "    setTimeout(() => { this.late = 1; });\n"                /* 10 */
      "  }\n"                                                      /* 11 */
      "  add(x) {\n"                                               /* 12 */
      "    this.added = x;\n"                                      /* 13 */
      "  }\n"                                                      /* 14 */
      "}\n"                                                        /* 15 */
      "function constructor() {\n"                                 /* 16 */
      "  this.free = 1;\n"                                         /* 17 */
      "}\n"; /* 18 */
  dq_doc_parts *p = run(src, "web/store.js");
  CHECK_SYM_IN(p, "svc", "field", "Store", 3, 10);
  CHECK_SYM_IN(p, "items", "field", "Store", 4, 10);
  CHECK_SYM_IN(p, "ready", "field", "Store", 7, 12);
  CHECK_EQ_INT(count_vars(p, "count"), 0);
  CHECK_EQ_INT(count_vars(p, "late"), 0);
  CHECK_EQ_INT(count_vars(p, "added"), 0);
  CHECK_EQ_INT(count_vars(p, "free"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 3);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Ruby: constants in modules and classes, not in methods */
static void test_rb(void) {
  const char *src =
      "module Rack\n"                                              /* 1 */
      "  VERSION = \"3.0\"\n"                                      /* 2 */
      "  class Request\n"                                          /* 3 */
      "    DEFAULT_PORTS = { \"http\" => 80 }\n"                   /* 4 */
      "    def host\n"                                             /* 5 */
      "      Port = 1\n"                                           /* 6 */
      "      x = 2\n"                                              /* 7 */
      "    end\n"                                                  /* 8 */
      "  end\n"                                                    /* 9 */
      "end\n"; /* 10 */
  dq_doc_parts *p = run(src, "lib/rack.rb");
  CHECK_SYM_IN(p, "VERSION", "constant", "Rack", 2, 3);
  CHECK_SYM_IN(p, "DEFAULT_PORTS", "constant", "Rack::Request", 4, 5);
  CHECK_EQ_INT(count_vars(p, "Port"), 0);
  CHECK_EQ_INT(count_vars(p, "x"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 2);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* PHP: define() (not in a comment), class constants, typed properties, a
 * promoted constructor parameter; not locals or static locals */
static void test_php(void) {
  const char *src =
      "<?php\n"                                                    /* 1 */
      "namespace App;\n"                                           /* 2 */
      "define(\"ROOT\", __DIR__);\n"                               /* 3 */
      "// define('COMMENTED', 1);\n"                               /* 4 */
      "class User {\n"                                             /* 5 */
      "    public const TABLE = 'users';\n"                        /* 6 */
      "    private ?string $name = null;\n"                        /* 7 */
      "    protected static array $cache = [];\n"                  /* 8 */
      "    public function __construct(private int $id) {}\n"      /* 9 */
      "    public function f() { $local = 1; static $count = 0; }\n" /* 10 */
      "}\n"; /* 11 */
  dq_doc_parts *p = run(src, "src/User.php");
  CHECK_SYM_IN(p, "ROOT", "constant", "", 3, 9);
  CHECK_SYM_IN(p, "TABLE", "constant", "User", 6, 18);
  CHECK_SYM_IN(p, "name", "property", "User", 7, 22);
  CHECK_SYM_IN(p, "cache", "property", "User", 8, 29);
  CHECK_SYM_IN(p, "id", "property", "User", 9, 46);
  CHECK_EQ_INT(count_vars(p, "COMMENTED"), 0);
  CHECK_EQ_INT(count_vars(p, "local"), 0);
  CHECK_EQ_INT(count_vars(p, "count"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 5);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Kotlin: properties: constructor ones (also of a class without a body),
 * delegated, extension properties, in a one-line object body; not plain
 * constructor parameters or locals */
static void test_kt(void) {
  const char *src =
      "package p\n"                                                /* 1 */
      "class Outer(private val svc: Service, count: Int) {\n"      /* 2 */
      "    val lazyValue: String by lazy { \"x\" }\n"              /* 3 */
      "    init { val tmp = 1 }\n"                                 /* 4 */
      "    fun f(x: Int): Int { val y = x; return y }\n"           /* 5 */
      "    companion object { const val TAG = \"t\" }\n"           /* 6 */
      "}\n"                                                        /* 7 */
      "data class P(val x: Int, var y: Int)\n"                     /* 8 */
      "val String.lastChar: Char get() = this[length - 1]\n"       /* 9 */
      "object Reg { val items = listOf(1) }\n"                     /* 10 */
      "val t = run { val inner = 1; inner }\n"                     /* 11 */
      "class Size(val w: Int)\n"; /* 12: "class" at the line's start */
  dq_doc_parts *p = run(src, "src/Outer.kt");
  CHECK_SYM_IN(p, "svc", "property", "Outer", 2, 25);
  CHECK_SYM_IN(p, "lazyValue", "property", "Outer", 3, 9);
  CHECK_SYM_IN(p, "x", "property", "P", 8, 18);
  CHECK_SYM_IN(p, "y", "property", "P", 8, 30);
  CHECK_SYM_IN(p, "lastChar", "property", "", 9, 12);
  CHECK_SYM_IN(p, "items", "property", "Reg", 10, 18);
  CHECK_SYM_IN(p, "t", "property", "", 11, 5);
  CHECK_SYM_IN(p, "w", "property", "Size", 12, 16);
  CHECK_EQ_INT(count_vars(p, "count"), 0);
  CHECK_EQ_INT(count_vars(p, "tmp"), 0);
  CHECK_EQ_INT(count_vars(p, "TAG"), 0);
  CHECK_EQ_INT(count_vars(p, "inner"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 8);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

/* Swift: enum cases, stored properties with modifiers and attributes; not
 * locals of a function or of a computed property */
static void test_swift(void) {
  const char *src =
      "enum Dir { case up, down\n"                                 /* 1 */
      "  case left(Int)\n"                                         /* 2 */
      "  indirect case node(Dir)\n"                                /* 3 */
      "}\n"                                                        /* 4 */
      "struct Cfg {\n"                                             /* 5 */
      "    private(set) var count = 0\n"                           /* 6 */
      "    @Published var title: String = \"\"\n"                  /* 7 */
      "    lazy var cache = [String: Int]()\n"                     /* 8 */
      "    func f() { let local = 1; var other = 2 }\n"            /* 9 */
      "    var computed: Int { let t = 3; return t }\n"            /* 10 */
      "}\n"; /* 11 */
  dq_doc_parts *p = run(src, "Sources/Cfg.swift");
  CHECK_SYM_IN(p, "up", "enumerator", "Dir", 1, 17);
  CHECK_SYM_IN(p, "down", "enumerator", "Dir", 1, 21);
  CHECK_SYM_IN(p, "left", "enumerator", "Dir", 2, 8);
  CHECK_SYM_IN(p, "node", "enumerator", "Dir", 3, 17);
  CHECK_SYM_IN(p, "count", "property", "Cfg", 6, 22);
  CHECK_SYM_IN(p, "title", "property", "Cfg", 7, 20);
  CHECK_SYM_IN(p, "cache", "property", "Cfg", 8, 14);
  CHECK_SYM_IN(p, "computed", "property", "Cfg", 10, 9);
  CHECK_EQ_INT(count_vars(p, "local"), 0);
  CHECK_EQ_INT(count_vars(p, "other"), 0);
  CHECK_EQ_INT(count_vars(p, "t"), 0);
  CHECK_EQ_INT(count_vars(p, NULL), 8);
  CHECK_EQ_INT(refs_at_syms(p), 0);
  dq_doc_parts_free(p);
}

int main(void) {
  test_go_list();
  test_rb_list();
  test_ts_list();
  test_swift_list();
  test_php_list();
  test_cpp();
  test_c();
  test_java();
  test_cs();
  test_go();
  test_rs();
  test_ts();
  test_py();
  test_py_self();
  test_js_this();
  test_rb();
  test_php();
  test_kt();
  test_swift();
  return TEST_EXIT();
}
