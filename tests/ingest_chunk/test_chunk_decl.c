/*
 * test_chunk_decl.c - declarations without a body are definitions, not
 * calls: C/C++ prototypes at file, namespace and class scope (kind
 * "prototype"), Rust trait method declarations, Java and TypeScript
 * interface/abstract method declarations and Go interface method specs (kind
 * "method", scope = the trait/interface), TS overload signatures; while the
 * same shapes inside a function body ("foo(x);", "return f(x);") stay calls.
 * Also JS/TS `require("mod")` is an include of "mod", not a call. Lines and
 * byte columns were counted by hand from the fixtures (line numbers in the
 * comments).
 */
#include "chunk_test.h"

static dq_doc_parts *run(const char *src, const char *path) {
  dq_text *t = text_of(src, DQ_DOC_CODE, NULL);
  dq_doc_parts *p = chunk_of(t, path, 0, 0);
  dq_text_free(t);
  return p;
}

static void test_c_header(void) {
  const char *src =
      "#ifndef TAX_H\n"                                           /* 1 */
      "#define TAX_H\n"                                           /* 2 */
      "ll_status tax_compute_line(const tax_table *t, int c);\n"  /* 3 */
      "extern int f(void);\n"                                     /* 4 */
      "static void g(int);\n"                                     /* 5 */
      "const char *\n"                                            /* 6 */
      "tax_name(enum tax_category c) __attribute__((pure));\n"    /* 7 */
      "int counter = next_id(3);\n"                               /* 8 */
      "REGISTER(tax_plugin);\n"                                   /* 9 */
      "#endif\n";                                                 /* 10 */
  dq_doc_parts *p = run(src, "include/tax.h");
  CHECK_SYM(p, "tax_compute_line", "prototype", 3, 11, "");
  CHECK_SYM(p, "f", "prototype", 4, 12, "");
  CHECK_SYM(p, "g", "prototype", 5, 13, "");
  CHECK_SYM(p, "tax_name", "prototype", 7, 1, "");
  CHECK_EQ_INT(count_refs(p, "tax_compute_line"), 0);
  CHECK_EQ_INT(count_refs(p, "f"), 0);
  CHECK_EQ_INT(count_refs(p, "g"), 0);
  CHECK_EQ_INT(count_refs(p, "tax_name"), 0);
  CHECK_REF(p, "tax_table", "use", 3, 34, "");
  /* an initializer and a macro invocation are not declarations */
  CHECK_REF(p, "next_id", "call", 8, 15, "");
  CHECK_REF(p, "REGISTER", "call", 9, 1, "");
  CHECK_EQ_INT(count_syms(p, "next_id", NULL), 0);
  CHECK_EQ_INT(count_syms(p, "REGISTER", NULL), 0);
  dq_doc_parts_free(p);
}

/* glibc's attribute macros after the parameters: lower-case "__" names
 * with arguments are trailers, unless the name itself is one */
static void test_c_reserved_trailers(void) {
  const char *src =
      "extern void *memcpy (void *__restrict __dest, const void *__src,\n"  /* 1 */
      "\t\t     size_t __n) __THROW __nonnull ((1, 2));\n"                 /* 2 */
      "extern int ptsname_r (int __fd, char *__buf, size_t __buflen)\n"    /* 3 */
      "     __THROW __nonnull ((2)) __attr_access ((__write_only__, 2));\n" /* 4 */
      "extern int __sigsetjmp (struct __jmp_buf_tag __env[1], int __m);\n" /* 5 */
      "extern int __uflow (FILE *) __wur;\n"                               /* 6 */
      "extern size_t strlen (const char *__s) __attribute_pure__;\n";      /* 7 */
  dq_doc_parts *p = run(src, "include/string.h");
  CHECK_SYM(p, "memcpy", "prototype", 1, 14, "");
  CHECK_SYM(p, "ptsname_r", "prototype", 3, 12, "");
  CHECK_SYM(p, "__sigsetjmp", "prototype", 5, 12, "");
  CHECK_SYM(p, "__uflow", "prototype", 6, 12, "");
  CHECK_SYM(p, "strlen", "prototype", 7, 15, "");
  CHECK_EQ_INT(count_syms(p, "__nonnull", NULL), 0);
  CHECK_EQ_INT(count_syms(p, "__attr_access", NULL), 0);
  CHECK_EQ_INT(p->n_symbols, 5);
  dq_doc_parts_free(p);
}

static void test_c_body(void) {
  const char *src =
      "static void g(int);\n"                  /* 1 */
      "int run(int x) {\n"                     /* 2 */
      "  foo(x);\n"                            /* 3 */
      "  int y = bar(x);\n"                    /* 4 */
      "  if (y) { baz(y); }\n"                 /* 5 */
      "  g(y);\n"                              /* 6 */
      "  return qux(y);\n"                     /* 7 */
      "}\n"                                    /* 8 */
      "static void g(int v) { (void)v; }\n";   /* 9 */
  dq_doc_parts *p = run(src, "src/run.c");
  CHECK_SYM(p, "g", "prototype", 1, 13, "");
  CHECK_SYM(p, "g", "function", 9, 13, "");
  CHECK_SYM(p, "run", "function", 2, 5, "");
  CHECK_REF(p, "foo", "call", 3, 3, "run");
  CHECK_REF(p, "bar", "call", 4, 11, "run");
  CHECK_REF(p, "baz", "call", 5, 12, "run");
  CHECK_REF(p, "g", "call", 6, 3, "run");
  CHECK_REF(p, "qux", "call", 7, 10, "run");
  CHECK_EQ_INT(count_syms(p, "foo", NULL), 0);
  CHECK_EQ_INT(count_syms(p, "qux", NULL), 0);
  CHECK_EQ_INT(count_refs(p, "g"), 1);
  dq_doc_parts_free(p);
}

static void test_cpp_class(void) {
  const char *src =
      "namespace geo {\n"                            /* 1 */
      "int area_of(const Shape &s);\n"               /* 2 */
      "class Shape {\n"                              /* 3 */
      " public:\n"                                   /* 4 */
      "  Shape(int sides);\n"                        /* 5 */
      "  virtual ~Shape();\n"                        /* 6 */
      "  virtual double area() const = 0;\n"         /* 7 */
      "  void changed(int v);\n"                     /* 8 */
      "  int inline_one() { return helper(1); }\n"   /* 9 */
      "};\n"                                         /* 10 */
      "}\n";                                         /* 11 */
  dq_doc_parts *p = run(src, "geo.hpp");
  CHECK_SYM(p, "area_of", "prototype", 2, 5, "geo");
  CHECK_SYM_IN(p, "Shape", "prototype", "geo::Shape", 5, 3);
  CHECK_SYM_IN(p, "~Shape", "prototype", "geo::Shape", 6, 11);
  CHECK_SYM(p, "area", "prototype", 7, 18, "geo::Shape");
  CHECK_SYM(p, "changed", "prototype", 8, 8, "geo::Shape");
  CHECK_SYM(p, "inline_one", "method", 9, 7, "geo::Shape");
  CHECK_REF(p, "helper", "call", 9, 29, "inline_one");
  CHECK_EQ_INT(count_refs(p, "changed"), 0);
  CHECK_EQ_INT(count_refs(p, "area"), 0);
  CHECK_EQ_INT(count_refs(p, "area_of"), 0);
  dq_doc_parts_free(p);
}

static void test_rust_trait(void) {
  const char *src =
      "pub trait Shape {\n"                               /* 1 */
      "    fn area(&self) -> f64;\n"                      /* 2 */
      "    fn name(&self) -> String { label(1) }\n"       /* 3 */
      "}\n"                                               /* 4 */
      "extern \"C\" {\n"                                  /* 5 */
      "    fn abs(x: i32) -> i32;\n"                      /* 6 */
      "}\n"                                               /* 7 */
      "fn main() {\n"                                     /* 8 */
      "    let a = abs(-1);\n"                            /* 9 */
      "}\n";                                              /* 10 */
  dq_doc_parts *p = run(src, "src/shape.rs");
  CHECK_SYM_IN(p, "area", "method", "Shape", 2, 8);
  CHECK_SYM_IN(p, "name", "method", "Shape", 3, 8);
  CHECK_SYM(p, "abs", "function", 6, 8, "");
  CHECK_EQ_INT(count_refs(p, "area"), 0);
  CHECK_REF(p, "label", "call", 3, 32, "name");
  CHECK_REF(p, "abs", "call", 9, 13, "main");
  CHECK_EQ_INT(count_refs(p, "abs"), 1);
  dq_doc_parts_free(p);
}

static void test_java_interface(void) {
  const char *src =
      "public interface Listener {\n"                       /* 1 */
      "    void changed(int v);\n"                          /* 2 */
      "    List<String> names() throws IOException;\n"      /* 3 */
      "}\n"                                                 /* 4 */
      "abstract class Base {\n"                             /* 5 */
      "    abstract int size();\n"                          /* 6 */
      "    int twice() { notify(2); return size() * 2; }\n" /* 7 */
      "}\n";                                                /* 8 */
  dq_doc_parts *p = run(src, "Listener.java");
  CHECK_SYM(p, "changed", "method", 2, 10, "Listener");
  CHECK_SYM(p, "names", "method", 3, 18, "Listener");
  CHECK_SYM(p, "size", "method", 6, 18, "Base");
  CHECK_SYM(p, "twice", "method", 7, 9, "Base");
  CHECK_EQ_INT(count_refs(p, "changed"), 0);
  CHECK_EQ_INT(count_refs(p, "names"), 0);
  CHECK_REF(p, "notify", "call", 7, 19, "twice");
  CHECK_REF(p, "size", "call", 7, 37, "twice");
  CHECK_EQ_INT(count_refs(p, "size"), 1);
  dq_doc_parts_free(p);
}

static void test_ts_interface(void) {
  const char *src =
      "const fs = require(\"fs\");\n"                       /* 1 */
      "let { join } = require('node:path');\n"              /* 2 */
      "interface Listener {\n"                              /* 3 */
      "  changed(v: number): void;\n"                       /* 4 */
      "  reset(): void\n"                                   /* 5 */
      "  name: string\n"                                    /* 6 */
      "}\n"                                                 /* 7 */
      "function pick(a: string): string;\n"                 /* 8 */
      "function pick(a: any): any { return fmt(a); }\n"     /* 9 */
      "abstract class Base {\n"                             /* 10 */
      "  abstract size(): number;\n"                        /* 11 */
      "  run() { this.size(); }\n"                          /* 12 */
      "}\n";                                                /* 13 */
  dq_doc_parts *p = run(src, "web/l.ts");
  CHECK_REF(p, "fs", "include", 1, 21, "");
  CHECK_REF(p, "node:path", "include", 2, 25, "");
  CHECK_EQ_INT(count_refs(p, "require"), 0);
  CHECK_SYM(p, "changed", "method", 4, 3, "Listener");
  CHECK_SYM(p, "reset", "method", 5, 3, "Listener");
  CHECK_SYM(p, "name", "field", 6, 3, "Listener"); /* a property */
  CHECK_SYM(p, "fs", "variable", 1, 7, "");
  CHECK_SYM_IN(p, "pick", "function", "", 8, 10);
  CHECK_EQ_INT(count_syms(p, "pick", "function"), 2);
  CHECK_SYM(p, "size", "method", 11, 12, "Base");
  CHECK_REF(p, "fmt", "call", 9, 37, "pick");
  CHECK_REF(p, "size", "call", 12, 16, "run");
  CHECK_EQ_INT(count_refs(p, "changed"), 0);
  CHECK_EQ_INT(count_refs(p, "reset"), 0);
  CHECK_EQ_INT(count_refs(p, "pick"), 0);
  CHECK_EQ_INT(count_refs(p, "size"), 1);
  dq_doc_parts_free(p);
}

static void test_js_require(void) {
  const char *src =
      "'use strict';\n"                                     /* 1 */
      "const util = require(\"./util\");\n"                 /* 2 */
      "function load(m) { return require(m); }\n";          /* 3 */
  dq_doc_parts *p = run(src, "web/x.js");
  CHECK_REF(p, "./util", "include", 2, 23, "");
  /* require of a variable is a call: nothing to include */
  CHECK_REF(p, "require", "call", 3, 27, "load");
  CHECK_EQ_INT(count_refs(p, "require"), 1);
  dq_doc_parts_free(p);
}

static void test_go_interface(void) {
  const char *src =
      "package geo\n"                                       /* 1 */
      "type Shape interface {\n"                            /* 2 */
      "\tArea() float64\n"                                  /* 3 */
      "\tScale(f float64) (Shape, error)\n"                 /* 4 */
      "}\n"                                                 /* 5 */
      "func Total(s Shape) float64 { return s.Area() }\n";  /* 6 */
  dq_doc_parts *p = run(src, "geo.go");
  CHECK_SYM(p, "Area", "method", 3, 2, "Shape");
  CHECK_SYM(p, "Scale", "method", 4, 2, "Shape");
  CHECK_REF(p, "Area", "call", 6, 40, "Total");
  CHECK_EQ_INT(count_refs(p, "Area"), 1);
  CHECK_EQ_INT(count_refs(p, "Scale"), 0);
  dq_doc_parts_free(p);
}

int main(void) {
  test_c_header();
  test_c_reserved_trailers();
  test_c_body();
  test_cpp_class();
  test_rust_trait();
  test_java_interface();
  test_ts_interface();
  test_js_require();
  test_go_interface();
  return TEST_EXIT();
}
