/*
 * test_chunk_code.c - symbols, references and chunks of source code, one
 * small hand-written file per language (C, C++, CUDA, C#, Kotlin, Python,
 * TypeScript, Go, Rust, Java). Expected names, kinds, lines, byte columns, scopes and callers were
 * worked out by hand from the fixtures (column = 1-based byte offset in the
 * line). Names that appear only inside comments or string literals
 * (call_me, notcalled, phantom, ghost, fake_call ...) must give no reference,
 * keywords are never references, and a definition's own name is not a use.
 */
#include "chunk_test.h"

static const char *c_src =
    "#include <stdio.h>\n"
    "#include \"util.h\"\n"
    "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    "\n"
    "/* helper(): not a call */\n"
    "typedef struct point {\n"
    "  int x, y;\n"
    "} point_t;\n"
    "\n"
    "typedef int (*cmp_fn)(const void *, const void *);\n"
    "typedef unsigned long u64;\n"
    "\n"
    "static int helper(int v) {\n"
    "  const char *s = \"call_me(now)\";\n"
    "  return MAX(v, 0); // use(v)\n"
    "}\n"
    "\n"
    "int main(int argc, char **argv) {\n"
    "  point_t p = {1, 2};\n"
    "  printf(\"%d\\n\", helper(p.x));\n"
    "  return 0;\n"
    "}\n";

static const char *py_src =
    "import os, sys as system\n"
    "from collections import OrderedDict\n"
    "from . import sibling\n"
    "\n"
    "# helper() in a comment\n"
    "class Store(Base):\n"
    "    \"\"\"Docstring mentions fetch(x).\"\"\"\n"
    "\n"
    "    def __init__(self, path):\n"
    "        self.path = path\n"
    "\n"
    "    @property\n"
    "    def size(self):\n"
    "        return len(self.items)\n"
    "\n"
    "def fetch(key, default=None):\n"
    "    s = 'not_a_ref(1)'\n"
    "    def inner():\n"
    "        return key\n"
    "    return inner()\n"
    "\n"
    "x = fetch(\"a\")\n";

static const char *go_src =
    "package main\n"
    "\n"
    "import (\n"
    "\t\"fmt\"\n"
    "\tstr \"strings\"\n"
    ")\n"
    "\n"
    "import \"os\"\n"
    "\n"
    "type Server struct {\n"
    "\tName string\n"
    "}\n"
    "\n"
    "type Handler func(int) error\n"
    "\n"
    "// Start starts: notcalled()\n"
    "func (s *Server) Start(port int) error {\n"
    "\tfmt.Println(\"listen(1)\", port)\n"
    "\treturn nil\n"
    "}\n"
    "\n"
    "func main() {\n"
    "\ts := &Server{Name: str.ToUpper(\"x\")}\n"
    "\ts.Start(8080)\n"
    "\tos.Exit(0)\n"
    "}\n";

static const char *ts_src =
    "import { readFile } from \"fs\";\n"
    "import * as path from 'path';\n"
    "const lodash = require(\"lodash\");\n"
    "\n"
    "// function ghost() {}\n"
    "export interface Shape { area(): number; }\n"
    "export type Id = string | number;\n"
    "\n"
    "export class Circle implements Shape {\n"
    "  constructor(private r: number) {}\n"
    "  area(): number {\n"
    "    return Math.PI * this.r * this.r;\n"
    "  }\n"
    "  static unit(): Circle { return new Circle(1); }\n"
    "}\n"
    "\n"
    "export function total(shapes: Shape[]): number {\n"
    "  const s = `sum ${shapes.length} fake(1)`;\n"
    "  return shapes.reduce((acc, x) => acc + x.area(), 0);\n"
    "}\n"
    "\n"
    "const double = (n: number) => n * 2;\n"
    "const handler = async (req) => {\n"
    "  return total([]);\n"
    "};\n";

static const char *rs_src =
    "use std::collections::HashMap;\n"
    "use std::io::{self, Read};\n"
    "\n"
    "mod util;\n"
    "\n"
    "/// Doc comment: fake_call()\n"
    "pub struct Point { x: i32, y: i32 }\n"
    "struct Meters(f64);\n"
    "\n"
    "pub trait Area {\n"
    "    fn area(&self) -> f64;\n"
    "}\n"
    "\n"
    "impl Area for Point {\n"
    "    fn area(&self) -> f64 {\n"
    "        let s = \"not_called()\";\n"
    "        helper(self.x) as f64\n"
    "    }\n"
    "}\n"
    "\n"
    "impl<'a> Point {\n"
    "    pub fn new(x: i32) -> Self { Point { x, y: 0 } }\n"
    "}\n"
    "\n"
    "fn helper<'a>(v: i32) -> i32 {\n"
    "    let c = 'x';\n"
    "    println!(\"{}\", v);\n"
    "    v\n"
    "}\n"
    "\n"
    "macro_rules! square { ($x:expr) => { $x * $x }; }\n";

static const char *java_src =
    "package com.example;\n"
    "\n"
    "import java.util.List;\n"
    "import static java.lang.Math.max;\n"
    "\n"
    "/** Javadoc: phantom() */\n"
    "public class Account extends Base implements Comparable<Account> {\n"
    "    private int balance;\n"
    "\n"
    "    public Account(int start) {\n"
    "        this.balance = start;\n"
    "    }\n"
    "\n"
    "    @Override\n"
    "    public int compareTo(Account other) {\n"
    "        return Integer.compare(balance, other.balance);\n"
    "    }\n"
    "\n"
    "    interface Listener { void changed(int v); }\n"
    "\n"
    "    static class Inner {\n"
    "        void run() throws Exception { helper(\"x(1)\"); }\n"
    "    }\n"
    "}\n";

static const char *cpp_src =
    "#include <vector>\n"
    "namespace geo {\n"
    "class Shape {\n"
    " public:\n"
    "  virtual ~Shape() {}\n"
    "  double area() const { return 0; }\n"
    "};\n"
    "\n"
    "struct Box : public Shape {\n"
    "  Box(int w) : w_(w) {}\n"
    "  int w_;\n"
    "};\n"
    "\n"
    "double Shape_total(const std::vector<Shape*>& v) {\n"
    "  double t = 0;\n"
    "  for (auto *s : v) { t += s->area(); }\n"
    "  return t;\n"
    "}\n"
    "}  // namespace geo\n"
    "\n"
    "int geo::Shape::count() { return 1; }\n";

/* CUDA (.cu): C++ with kernel qualifiers, launch bounds and triple-chevron
 * launches. */
static const char *cu_src =
    "#include <cuda_fp16.h>\n"
    "template <int NT>\n"
    "__global__ void __launch_bounds__(NT) k_scale(float *x, int n) {\n"
    "  int i = blockIdx.x * NT + threadIdx.x;\n"
    "  if (i < n) x[i] *= 2.0f;\n"
    "}\n"
    "\n"
    "__device__ __forceinline__ float twice(float v) { return v + v; }\n"
    "\n"
    "void scale_all(float *x, int n, cudaStream_t s) {\n"
    "  k_scale<256><<<(n + 255) / 256, 256, 0, s>>>(x, n);\n"
    "  if ((n < 4) > (n > 2)) cudaMemsetAsync(x, 0, pick<float>(n), s);\n"
    "}\n";

/* C#: records, delegates, interfaces, attributes, a P/Invoke declaration
 * under #region, expression-bodied members, verbatim, interpolated and raw
 * strings, a call with type arguments. */
static const char *cs_src =
    "using System;\n"
    "using static System.Math;\n"
    "using IO = System.IO;\n"
    "\n"
    "namespace Acme.Billing\n"
    "{\n"
    "    public readonly record struct Money(long Cents);\n"
    "    public delegate void Posted(object sender, Money amount);\n"
    "\n"
    "    public interface ILedger\n"
    "    {\n"
    "        void Post(Money amount);\n"
    "        int Count { get; }\n"
    "    }\n"
    "\n"
    "    [Serializable]\n"
    "    public sealed class Ledger : ILedger\n"
    "    {\n"
    "        #region Native helpers\n"
    "        [DllImport(\"ledger.so\", EntryPoint = \"ledger_sum\")]\n"
    "        private static extern long Sum(long[] cents, int n);\n"
    "        #endregion\n"
    "\n"
    "        public Ledger() : this(16) { }\n"
    "\n"
    "        public int Count => n;\n"
    "\n"
    "        public string Name { get; set; } = \"main\";\n"
    "\n"
    "        public void Post(Money amount)\n"
    "        {\n"
    "            var note = @\"C:\\dir \"\"q\"\" fake(1)\";\n"
    "            var msg = $\"via ghost({amount.Cents})\";\n"
    "            var raw = \"\"\"\n"
    "                phantom(2) \"x\"\n"
    "                \"\"\";\n"
    "            Log(Convert<string>(msg + note + raw));\n"
    "        }\n"
    "\n"
    "        public T First<T>(Func<Money, T> f) where T : new() => f(default);\n"
    "\n"
    "        private static void Log(string s) => Console.WriteLine(s);\n"
    "    }\n"
    "}\n";

/* Kotlin: no semicolons, nested comments, raw strings with templates,
 * expression and abstract functions, extension functions, objects. */
/* PHP: inline HTML and tags, # comments and #[ attributes, a braced
 * class with a bodiless abstract method across lines, a closure (not a
 * definition), strings with {$x} and a heredoc, an interface method */
static const char *php_src =
    "<html><?php if ($x): ?> fake_html() <?php endif; ?>\n"
    "<?php\n"
    "namespace Acme\\Billing;\n"
    "\n"
    "use Acme\\Models\\Invoice;\n"
    "use function Acme\\Support\\fmt;\n"
    "require_once 'boot.php';\n"
    "\n"
    "# ghost() in a hash comment\n"
    "#[Attr(1)]\n"
    "final class Ledger extends Base implements Countable\n"
    "{\n"
    "    use Logs;\n"
    "\n"
    "    public function __construct(private array $rows = []) {\n"
    "        parent::__construct();\n"
    "    }\n"
    "\n"
    "    public static function total(Invoice $inv): float {\n"
    "        $f = function ($x) use ($inv) { return helper($x); };\n"
    "        $t = \"sum {$inv->id} phantom()\";\n"
    "        $h = <<<TXT\n"
    "        heredoc_text() }\n"
    "        TXT;\n"
    "        return fmt(array_sum($this->rows)) + $f(1);\n"
    "    }\n"
    "\n"
    "    abstract protected function render(\n"
    "        Invoice $inv\n"
    "    ): string;\n"
    "\n"
    "    public function count(): int { return count($this->rows); }\n"
    "}\n"
    "\n"
    "interface Renderer {\n"
    "    public function draw(): string;\n"
    "}\n"
    "\n"
    "function helper(int $x): int { return $x * 2; }\n"
    "?>\n"
    "tail { text\n";

/* Swift: nested comments, interpolated, raw and multi-line strings, a
 * protocol's requirements without a body, computed properties, init,
 * deinit, subscript, operators, extensions, #if lines; no ';' anywhere */
static const char *swift_src =
    "import Foundation\n"
    "@testable import LedgerKit\n"
    "\n"
    "/* outer /* nested */ still comment ghost() */\n"
    "typealias Cents = Int64\n"
    "\n"
    "protocol Ledger {\n"
    "    func post(_ amount: Cents) throws\n"
    "    var balance: Cents { get }\n"
    "}\n"
    "\n"
    "@MainActor\n"
    "final class MemLedger: Ledger {\n"
    "    private var rows: [Cents] = []\n"
    "    var balance: Cents {\n"
    "        rows.reduce(0, +)\n"
    "    }\n"
    "\n"
    "    init(capacity: Int) {\n"
    "        rows.reserveCapacity(capacity)\n"
    "    }\n"
    "\n"
    "    func post(_ amount: Cents) throws {\n"
    "        let msg = \"posted \\(amount) phantom()\"\n"
    "        let raw = #\"raw \"quoted\" fake()\"#\n"
    "        log(msg + raw)\n"
    "        rows.append(amount)\n"
    "    }\n"
    "\n"
    "    static func make<T: Ledger>(_ t: T.Type) -> MemLedger { MemLedger(capacity: 4) }\n"
    "\n"
    "    subscript(i: Int) -> Cents { rows[i] }\n"
    "\n"
    "    deinit { log(\"bye\") }\n"
    "}\n"
    "\n"
    "extension MemLedger: CustomStringConvertible {\n"
    "    var description: String { \"MemLedger(\\(rows.count))\" }\n"
    "}\n"
    "\n"
    "struct Point { var x = 0, y = 0 }\n"
    "enum Kind: String { case a, b }\n"
    "\n"
    "#if os(iOS)\n"
    "func log(_ s: String) { print(s) }\n"
    "#endif\n"
    "\n"
    "let text = \"\"\"\n"
    "    multi ghost_two() line\n"
    "    \"\"\"\n"
    "\n"
    "extension Array where Element == Int {\n"
    "    static func == (lhs: Self, rhs: Self) -> Bool { true }\n"
    "    init?(raw: String) { return nil }\n"
    "    @objc func tapped(_ sender: Any, completion: @escaping () -> Void) {\n"
    "        DispatchQueue.main.async { completion() }\n"
    "    }\n"
    "}\n";

/* Ruby: =begin/=end, interpolated strings, a squiggly heredoc, %r{} and
 * %w[] literals, nested modules, self. and endless and one-line methods,
 * names ending in ? and !, class << self, attr_accessor, @ivars */
static const char *rb_src =
    "# frozen_string_literal: true\n"
    "require \"json\"\n"
    "require_relative 'money'\n"
    "\n"
    "=begin\n"
    "ghost_block() in a block comment\n"
    "=end\n"
    "\n"
    "module Acme\n"
    "  module Billing\n"
    "    class Ledger < Base\n"
    "      include Enumerable\n"
    "      attr_accessor :rows, :cap\n"
    "\n"
    "      MAX = 10\n"
    "\n"
    "      def initialize(cap = MAX)\n"
    "        @rows = []\n"
    "        @cap = cap\n"
    "        super()\n"
    "      end\n"
    "\n"
    "      def self.build(opts = {})\n"
    "        new(opts.fetch(:cap, 4))\n"
    "      end\n"
    "\n"
    "      def post(amount)\n"
    "        raise ArgumentError, \"bad #{amount} phantom()\" unless valid?(amount)\n"
    "        rows << amount\n"
    "        log_post amount\n"
    "        text = <<~EOS\n"
    "          heredoc_ghost() text\n"
    "        EOS\n"
    "        rows.each do |r|\n"
    "          notify(r)\n"
    "        end\n"
    "      end\n"
    "\n"
    "      def valid?(x) = x.positive?\n"
    "\n"
    "      def save!; persist(rows); end\n"
    "\n"
    "      private\n"
    "\n"
    "      def log_post(x)\n"
    "        puts format('%d', x) if x > 0\n"
    "        pattern = %r{fake_regex()}\n"
    "        words = %w[alpha beta]\n"
    "      end\n"
    "\n"
    "      class << self\n"
    "        def registry\n"
    "          @registry ||= {}\n"
    "        end\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "\n"
    "def helper(x)\n"
    "  x * 2\n"
    "end\n";

static const char *kt_src =
    "package acme.billing\n"
    "\n"
    "import kotlin.math.max\n"
    "import acme.util.*\n"
    "\n"
    "typealias Cents = Long\n"
    "\n"
    "/* outer /* nested fake(1) */ still comment ghost(2) */\n"
    "data class Money(val cents: Cents) {\n"
    "    operator fun plus(o: Money) = Money(cents + o.cents)\n"
    "}\n"
    "\n"
    "interface Ledger {\n"
    "    fun post(amount: Money)\n"
    "    val count: Int\n"
    "}\n"
    "\n"
    "class MemLedger(private val cap: Int) : Ledger {\n"
    "    private val items = mutableListOf<Money>()\n"
    "    override val count: Int get() = items.size\n"
    "\n"
    "    override fun post(amount: Money) {\n"
    "        val note = \"\"\"raw phantom(3) \"q\" ${amount.cents}\"\"\"\n"
    "        items.add(amount)\n"
    "        log(\"posted $amount $note\")\n"
    "    }\n"
    "\n"
    "    companion object {\n"
    "        fun create(): MemLedger = MemLedger(max(16, 1))\n"
    "    }\n"
    "}\n"
    "\n"
    "fun <T> List<T>.second(): T {\n"
    "    return this[1]\n"
    "}\n"
    "\n"
    "private fun log(s: String) = println(s)\n"
    "\n"
    "object Registry {\n"
    "    fun find(name: String): Ledger? = emptyMap<String, Ledger>()[name]\n"
    "}\n"
    "data class Point(val x: Int)\n"
    "class Q {\n"
    "    override fun toString() = \"q\"\n"
    "    val y: Int\n"
    "        get() { return helper() }\n"
    "    private fun helper(): Int = 2\n"
    "}\n";

static dq_doc_parts *run(const char *src, const char *path, uint32_t max_tokens,
                         dq_text **tp) {
  dq_text *t = text_of(src, DQ_DOC_CODE, NULL); /* language from the path */
  CHECK_EQ_INT(dq_chunk_detect(t, path), DQ_CHUNK_CODE);
  dq_doc_parts *p = chunk_of(t, path, max_tokens, 0);
  if (tp)
    *tp = t;
  else
    dq_text_free(t);
  return p;
}

static void test_c(void) {
  dq_doc_parts *p = run(c_src, "src/a.c", 0, NULL);
  CHECK_SYM(p, "MAX", "macro", 3, 9, "");
  CHECK_SYM(p, "point", "struct", 6, 16, "");
  CHECK_SYM(p, "point_t", "typedef", 8, 3, "");
  CHECK_SYM(p, "cmp_fn", "typedef", 10, 15, "");
  CHECK_SYM(p, "u64", "typedef", 11, 23, "");
  CHECK_SYM(p, "helper", "function", 13, 12, "");
  CHECK_SYM(p, "main", "function", 18, 5, "");
  CHECK_SYM(p, "x", "field", 7, 7, "point");
  CHECK_SYM(p, "y", "field", 7, 10, "point");
  CHECK_EQ_INT(p->n_symbols, 9);
  CHECK_REF(p, "stdio.h", "include", 1, 11, "");
  CHECK_REF(p, "util.h", "include", 2, 11, "");
  CHECK_REF(p, "MAX", "call", 15, 10, "helper");
  CHECK_REF(p, "printf", "call", 20, 3, "main");
  CHECK_REF(p, "helper", "call", 20, 18, "main");
  CHECK_REF(p, "point_t", "use", 19, 3, "main");
  CHECK_REF(p, "v", "use", 15, 14, "helper");
  CHECK_EQ_INT(count_refs(p, "helper"), 1); /* not the comment, not the def */
  CHECK_EQ_INT(count_refs(p, "call_me"), 0);
  CHECK_EQ_INT(count_refs(p, "now"), 0);
  CHECK_EQ_INT(count_refs(p, "call"), 0);
  CHECK_EQ_INT(count_refs(p, "use"), 0);
  CHECK_EQ_INT(count_refs(p, "define"), 0);
  CHECK_EQ_INT(count_refs(p, "include"), 0);
  CHECK_EQ_INT(count_refs(p, "stdio"), 0);
  CHECK_EQ_INT(count_refs(p, "return"), 0);
  CHECK_EQ_INT(count_refs(p, "int"), 0);
  CHECK_EQ_INT(count_refs(p, "static"), 0);
  /* Chunks: includes+macro; the commented typedef struct; typedefs; one
   * chunk per function with its signature as section. */
  CHECK_EQ_INT(p->n_chunks, 5);
  CHECK_CHUNK(p, 0, 1, 3, "");
  CHECK_CHUNK(p, 1, 5, 8, "typedef struct point");
  CHECK_CHUNK(p, 2, 10, 11, "");
  CHECK_CHUNK(p, 3, 13, 16, "static int helper(int v)");
  CHECK_CHUNK(p, 4, 18, 22, "int main(int argc, char **argv)");
  dq_doc_parts_free(p);
}

static void test_cpp(void) {
  dq_doc_parts *p = run(cpp_src, "b.cpp", 0, NULL);
  CHECK_SYM(p, "geo", "namespace", 2, 11, "");
  CHECK_SYM(p, "Shape", "class", 3, 7, "geo");
  CHECK_SYM(p, "area", "method", 6, 10, "geo::Shape");
  CHECK_SYM(p, "Box", "struct", 9, 8, "geo");
  CHECK_SYM(p, "w_", "field", 11, 7, "geo::Box");
  CHECK_SYM(p, "Shape_total", "function", 14, 8, "geo");
  CHECK_SYM(p, "count", "function", 21, 17, "geo::Shape");
  CHECK_REF(p, "area", "call", 16, 31, "Shape_total");
  CHECK_REF(p, "vector", "include", 1, 11, "");
  /* The namespace is transparent: class, struct and function each start a
   * chunk. */
  CHECK_CHUNK(p, 1, 3, 7, "class Shape");
  CHECK_CHUNK(p, 2, 9, 12, "struct Box : public Shape");
  CHECK_CHUNK(p, 3, 14, 18, "double Shape_total(const std::vector<Shape*>& v)");
  dq_doc_parts_free(p);
}

static void test_cuda(void) {
  dq_doc_parts *p = run(cu_src, "kernels/k.cu", 0, NULL);
  CHECK_SYM(p, "k_scale", "function", 3, 39, "");
  CHECK_SYM(p, "twice", "function", 8, 34, "");
  CHECK_SYM(p, "scale_all", "function", 10, 6, "");
  CHECK_EQ_INT(p->n_symbols, 3);
  CHECK_REF(p, "cuda_fp16.h", "include", 1, 11, "");
  /* the launch is a call of the kernel, as is a call with template
   * arguments; a comparison is not a template's brackets */
  CHECK_REF(p, "k_scale", "call", 11, 3, "scale_all");
  CHECK_REF(p, "pick", "call", 12, 48, "scale_all");
  CHECK_REF(p, "cudaMemsetAsync", "call", 12, 26, "scale_all");
  CHECK_REF(p, "n", "use", 12, 8, "scale_all");
  /* qualifiers and built-in index variables are keywords */
  CHECK_EQ_INT(count_refs(p, "__global__"), 0);
  CHECK_EQ_INT(count_refs(p, "__launch_bounds__"), 0);
  CHECK_EQ_INT(count_refs(p, "__device__"), 0);
  CHECK_EQ_INT(count_refs(p, "__forceinline__"), 0);
  CHECK_EQ_INT(count_refs(p, "threadIdx"), 0);
  CHECK_EQ_INT(count_refs(p, "blockIdx"), 0);
  CHECK_CHUNK(p, 1, 2, 6,
              "template <int NT> __global__ void __launch_bounds__(NT) "
              "k_scale(float *x, int n)");
  CHECK_CHUNK(p, 3, 10, 13, "void scale_all(float *x, int n, cudaStream_t s)");
  dq_doc_parts_free(p);
}

static void test_csharp(void) {
  dq_doc_parts *p = run(cs_src, "src/Ledger.cs", 0, NULL);
  CHECK_SYM(p, "Acme.Billing", "namespace", 5, 11, "");
  CHECK_SYM(p, "Money", "record", 7, 35, "Acme.Billing");
  CHECK_SYM(p, "Posted", "delegate", 8, 26, "Acme.Billing");
  CHECK_SYM(p, "ILedger", "interface", 10, 22, "Acme.Billing");
  CHECK_SYM_IN(p, "Post", "method", "Acme.Billing.ILedger", 12, 14);
  CHECK_SYM_IN(p, "Count", "property", "Acme.Billing.ILedger", 13, 13);
  CHECK_SYM(p, "Ledger", "class", 17, 25, "Acme.Billing");
  CHECK_SYM(p, "Sum", "method", 21, 36, "Acme.Billing.Ledger");
  CHECK_SYM(p, "Ledger", "method", 24, 16, "Acme.Billing.Ledger");
  CHECK_SYM_IN(p, "Count", "property", "Acme.Billing.Ledger", 26, 20);
  CHECK_SYM(p, "Name", "property", 28, 23, "Acme.Billing.Ledger");
  CHECK_SYM_IN(p, "Post", "method", "Acme.Billing.Ledger", 30, 21);
  CHECK_SYM(p, "First", "method", 40, 18, "Acme.Billing.Ledger");
  CHECK_SYM(p, "Log", "method", 42, 29, "Acme.Billing.Ledger");
  CHECK_EQ_INT(p->n_symbols, 14);
  CHECK_REF(p, "System", "include", 1, 7, "");
  CHECK_REF(p, "System.Math", "include", 2, 14, "");
  CHECK_REF(p, "System.IO", "include", 3, 12, "");
  CHECK_REF(p, "Log", "call", 37, 13, "Post");
  CHECK_REF(p, "Convert", "call", 37, 17, "Post"); /* Convert<string>(...) */
  CHECK_REF(p, "note", "use", 37, 39, "Post");
  /* in an expression body the member is the caller */
  CHECK_REF(p, "WriteLine", "call", 42, 54, "Log");
  CHECK_REF(p, "f", "call", 40, 64, "First");
  CHECK_REF(p, "n", "use", 26, 29, "Count");
  /* inside strings (verbatim, interpolated, raw) and #region lines */
  CHECK_EQ_INT(count_refs(p, "fake"), 0);
  CHECK_EQ_INT(count_refs(p, "ghost"), 0);
  CHECK_EQ_INT(count_refs(p, "phantom"), 0);
  CHECK_EQ_INT(count_refs(p, "helpers"), 0);
  CHECK_EQ_INT(count_refs(p, "region"), 0);
  CHECK_EQ_INT(count_refs(p, "Post"), 0); /* both are definitions */
  CHECK_EQ_INT(count_refs(p, "get"), 0);
  /* the attribute line belongs to the class's chunk */
  CHECK_CHUNK(p, 1, 10, 14, "public interface ILedger");
  CHECK_CHUNK(p, 2, 16, 43,
              "[Serializable] public sealed class Ledger : ILedger");
  dq_doc_parts_free(p);
}

static void test_kotlin(void) {
  dq_doc_parts *p = run(kt_src, "src/Ledger.kt", 0, NULL);
  CHECK_SYM(p, "Cents", "type", 6, 11, "");
  CHECK_SYM(p, "Money", "class", 9, 12, "");
  CHECK_SYM(p, "plus", "function", 10, 18, "Money");
  CHECK_SYM(p, "Ledger", "interface", 13, 11, "");
  CHECK_SYM_IN(p, "post", "function", "Ledger", 14, 9);
  CHECK_SYM(p, "MemLedger", "class", 18, 7, "");
  CHECK_SYM_IN(p, "post", "function", "MemLedger", 22, 18);
  CHECK_SYM(p, "create", "function", 29, 13, "MemLedger");
  CHECK_SYM(p, "second", "function", 33, 17, "");
  CHECK_SYM(p, "log", "function", 37, 13, "");
  CHECK_SYM(p, "Registry", "object", 39, 8, "");
  CHECK_SYM(p, "find", "function", 40, 9, "Registry");
  CHECK_SYM(p, "Point", "class", 42, 12, ""); /* no body */
  CHECK_SYM(p, "Q", "class", 43, 7, "");
  CHECK_SYM(p, "toString", "function", 44, 18, "Q");
  CHECK_SYM(p, "helper", "function", 47, 17, "Q");
  /* properties: constructor ones (with or without a class body), in
   * interfaces, with initializers or getters */
  CHECK_SYM(p, "cents", "property", 9, 22, "Money");
  CHECK_SYM_IN(p, "count", "property", "Ledger", 15, 9);
  CHECK_SYM(p, "cap", "property", 18, 29, "MemLedger");
  CHECK_SYM(p, "items", "property", 19, 17, "MemLedger");
  CHECK_SYM_IN(p, "count", "property", "MemLedger", 20, 18);
  CHECK_SYM(p, "x", "property", 42, 22, "Point");
  CHECK_SYM(p, "y", "property", 45, 9, "Q");
  CHECK_EQ_INT(p->n_symbols, 23);
  /* the getter's '{' is not toString's body, though no ';' ends it */
  CHECK_REF(p, "helper", "call", 46, 24, "");
  CHECK_REF(p, "kotlin.math.max", "include", 3, 8, "");
  CHECK_REF(p, "acme.util.*", "include", 4, 8, "");
  CHECK_REF(p, "log", "call", 25, 9, "post");
  CHECK_REF(p, "add", "call", 24, 15, "post");
  CHECK_REF(p, "mutableListOf", "call", 19, 25, ""); /* with <Money> */
  CHECK_REF(p, "emptyMap", "call", 40, 39, "");
  /* nested comments and raw strings with templates are not code */
  CHECK_EQ_INT(count_refs(p, "fake"), 0);
  CHECK_EQ_INT(count_refs(p, "ghost"), 0);
  CHECK_EQ_INT(count_refs(p, "phantom"), 0);
  CHECK_EQ_INT(count_refs(p, "amount"), 3); /* lines 14, 22, 24: not 23, 25 */
  /* no ';' before a class: its chunk starts at its own line */
  CHECK_CHUNK(p, 1, 8, 11, "class Money(val cents: Cents)");
  CHECK_CHUNK(p, 3, 18, 31, "class MemLedger(private val cap: Int) : Ledger");
  dq_doc_parts_free(p);
  /* a raw string left open runs to the end of the text */
  p = run("val s = \"\"\"open ended xyz", "b.kt", 0, NULL);
  CHECK_EQ_INT(count_refs(p, "xyz"), 0);
  CHECK_EQ_INT(count_refs(p, "ended"), 0);
  dq_doc_parts_free(p);
}

static void test_php(void) {
  dq_doc_parts *p = run(php_src, "src/Ledger.php", 0, NULL);
  CHECK_SYM(p, "Acme\\Billing", "namespace", 3, 11, "");
  CHECK_SYM(p, "Ledger", "class", 11, 13, "");
  CHECK_SYM(p, "__construct", "method", 15, 21, "Ledger");
  CHECK_SYM(p, "total", "method", 19, 28, "Ledger");
  CHECK_SYM(p, "render", "method", 28, 33, "Ledger"); /* no body */
  CHECK_SYM(p, "count", "method", 32, 21, "Ledger");
  CHECK_SYM(p, "Renderer", "interface", 35, 11, "");
  CHECK_SYM(p, "draw", "method", 36, 21, "Renderer");
  CHECK_SYM(p, "helper", "function", 39, 10, "");
  CHECK_SYM(p, "rows", "property", 15, 48, "Ledger"); /* promoted */
  CHECK_EQ_INT(p->n_symbols, 10);
  CHECK_REF(p, "Acme\\Models\\Invoice", "include", 5, 5, "");
  CHECK_REF(p, "Acme\\Support\\fmt", "include", 6, 14, "");
  CHECK_REF(p, "boot.php", "include", 7, 15, "");
  CHECK_REF(p, "Logs", "include", 13, 9, ""); /* a trait's use */
  CHECK_REF(p, "Base", "use", 11, 28, "");
  CHECK_REF(p, "helper", "call", 20, 48, "total"); /* in a closure */
  CHECK_REF(p, "fmt", "call", 25, 16, "total");
  CHECK_REF(p, "rows", "use", 25, 37, "total");
  /* inline HTML, comments, strings, heredocs and variables are not code */
  CHECK_EQ_INT(count_refs(p, "fake_html"), 0);
  CHECK_EQ_INT(count_refs(p, "ghost"), 0);
  CHECK_EQ_INT(count_refs(p, "phantom"), 0);
  CHECK_EQ_INT(count_refs(p, "heredoc_text"), 0);
  CHECK_EQ_INT(count_refs(p, "TXT"), 0);
  CHECK_EQ_INT(count_refs(p, "inv"), 0);
  CHECK_EQ_INT(count_refs(p, "this"), 0);
  CHECK_EQ_INT(count_refs(p, "Billing"), 0);
  CHECK_EQ_INT(count_refs(p, "php"), 0);
  CHECK_EQ_INT(count_refs(p, "tail"), 0);
  /* the comment and attribute lines belong to the class's chunk */
  CHECK_CHUNK(p, 1, 9, 33,
              "#[Attr(1)] final class Ledger extends Base implements "
              "Countable");
  CHECK_CHUNK(p, 3, 39, 39, "function helper(int $x): int");
  dq_doc_parts_free(p);
  /* a heredoc left open runs to the end of the text */
  p = run("<?php $s = <<<EOT\nopen ended xyz", "b.php", 0, NULL);
  CHECK_EQ_INT(count_refs(p, "xyz"), 0);
  CHECK_EQ_INT(count_refs(p, "EOT"), 0);
  dq_doc_parts_free(p);
}

static void test_swift(void) {
  dq_doc_parts *p = run(swift_src, "Sources/Ledger.swift", 0, NULL);
  CHECK_SYM(p, "Cents", "type", 5, 11, "");
  CHECK_SYM(p, "Ledger", "protocol", 7, 10, "");
  CHECK_SYM_IN(p, "post", "method", "Ledger", 8, 10); /* no body */
  CHECK_SYM_IN(p, "balance", "property", "Ledger", 9, 9);
  CHECK_SYM(p, "MemLedger", "class", 13, 13, "");
  CHECK_SYM_IN(p, "balance", "property", "MemLedger", 15, 9);
  CHECK_SYM_IN(p, "init", "method", "MemLedger", 19, 5);
  CHECK_SYM_IN(p, "post", "method", "MemLedger", 23, 10);
  CHECK_SYM(p, "make", "method", 30, 17, "MemLedger");
  CHECK_SYM(p, "subscript", "method", 32, 5, "MemLedger");
  CHECK_SYM(p, "deinit", "method", 34, 5, "MemLedger");
  CHECK_SYM(p, "description", "property", 38, 9, "MemLedger");
  CHECK_SYM(p, "Point", "struct", 41, 8, "");
  CHECK_SYM(p, "Kind", "enum", 42, 6, "");
  CHECK_SYM(p, "log", "function", 45, 6, "");
  CHECK_SYM(p, "==", "method", 53, 17, "Array");
  CHECK_SYM(p, "tapped", "method", 55, 16, "Array");
  CHECK_SYM(p, "rows", "property", 14, 17, "MemLedger"); /* stored */
  CHECK_SYM(p, "text", "property", 48, 5, "");
  /* after the '{' of a one-line body */
  CHECK_SYM(p, "y", "property", 41, 27, "Point");
  CHECK_SYM(p, "b", "enumerator", 42, 29, "Kind");
  CHECK_EQ_INT(p->n_symbols, 26);
  CHECK_REF(p, "Foundation", "include", 1, 8, "");
  CHECK_REF(p, "LedgerKit", "include", 2, 18, ""); /* @testable */
  CHECK_REF(p, "reduce", "call", 16, 14, "balance"); /* in a getter */
  CHECK_REF(p, "log", "call", 26, 9, "post");
  CHECK_REF(p, "MemLedger", "call", 30, 61, "make");
  CHECK_REF(p, "log", "call", 34, 14, "deinit");
  CHECK_REF(p, "completion", "call", 56, 36, "tapped"); /* in a closure */
  /* comments (nested), strings (interpolated, raw, multi-line) and #if
   * lines are not code; "_" is not a name */
  CHECK_EQ_INT(count_refs(p, "ghost"), 0);
  CHECK_EQ_INT(count_refs(p, "phantom"), 0);
  CHECK_EQ_INT(count_refs(p, "fake"), 0);
  CHECK_EQ_INT(count_refs(p, "ghost_two"), 0);
  CHECK_EQ_INT(count_refs(p, "os"), 0);
  CHECK_EQ_INT(count_refs(p, "_"), 0);
  /* the attribute line belongs to the class's chunk */
  CHECK_CHUNK(p, 2, 12, 35, "class MemLedger: Ledger");
  CHECK_CHUNK(p, 9, 52, 58, "extension Array where Element == Int");
  dq_doc_parts_free(p);
  /* a raw string left open runs to the end of the text */
  p = run("let s = #\"open \" ended xyz", "b.swift", 0, NULL);
  CHECK_EQ_INT(count_refs(p, "xyz"), 0);
  CHECK_EQ_INT(count_refs(p, "ended"), 0);
  dq_doc_parts_free(p);
}

static void test_ruby(void) {
  dq_doc_parts *p = run(rb_src, "lib/acme/ledger.rb", 0, NULL);
  CHECK_SYM(p, "Acme", "module", 9, 8, "");
  CHECK_SYM(p, "Billing", "module", 10, 10, "Acme");
  CHECK_SYM(p, "Ledger", "class", 11, 11, "Acme::Billing");
  CHECK_SYM(p, "rows", "attribute", 13, 22, "Acme::Billing::Ledger");
  CHECK_SYM(p, "initialize", "method", 17, 11, "Acme::Billing::Ledger");
  CHECK_SYM(p, "build", "method", 23, 16, "Acme::Billing::Ledger");
  CHECK_SYM(p, "post", "method", 27, 11, "Acme::Billing::Ledger");
  CHECK_SYM(p, "valid?", "method", 39, 11, "Acme::Billing::Ledger");
  CHECK_SYM(p, "save!", "method", 41, 11, "Acme::Billing::Ledger");
  CHECK_SYM(p, "log_post", "method", 45, 11, "Acme::Billing::Ledger");
  CHECK_SYM(p, "registry", "method", 52, 13, "Acme::Billing::Ledger");
  CHECK_SYM(p, "helper", "function", 60, 5, "");
  CHECK_SYM(p, "MAX", "constant", 15, 7, "Acme::Billing::Ledger");
  CHECK_SYM(p, "cap", "attribute", 13, 29, "Acme::Billing::Ledger");
  CHECK_EQ_INT(p->n_symbols, 14);
  CHECK_REF(p, "json", "include", 2, 10, "");
  CHECK_REF(p, "money", "include", 3, 19, "");
  CHECK_REF(p, "fetch", "call", 24, 18, "build");
  CHECK_REF(p, "valid?", "call", 28, 63, "post");
  CHECK_REF(p, "notify", "call", 35, 11, "post"); /* in a do block */
  CHECK_REF(p, "persist", "call", 41, 18, "save!"); /* one line */
  CHECK_REF(p, "format", "call", 46, 14, "log_post");
  /* calls without parentheses; not before an operator or a keyword */
  CHECK_REF(p, "log_post", "call", 30, 9, "post");
  CHECK_REF(p, "puts", "call", 46, 9, "log_post");
  CHECK_REF(p, "rows", "use", 29, 9, "post");  /* rows << amount */
  CHECK_REF(p, "each", "use", 34, 14, "post"); /* each do */
  /* comments, strings, heredocs, %-literals, @ivars are not code */
  CHECK_EQ_INT(count_refs(p, "ghost_block"), 0);
  CHECK_EQ_INT(count_refs(p, "phantom"), 0);
  CHECK_EQ_INT(count_refs(p, "heredoc_ghost"), 0);
  CHECK_EQ_INT(count_refs(p, "EOS"), 0);
  CHECK_EQ_INT(count_refs(p, "fake_regex"), 0);
  CHECK_EQ_INT(count_refs(p, "alpha"), 0);
  CHECK_EQ_INT(count_refs(p, "registry"), 0); /* @registry */
  /* modules are transparent: the class is the unit */
  CHECK_CHUNK(p, 1, 11, 56, "class Ledger < Base");
  CHECK_CHUNK(p, 3, 60, 62, "def helper(x)");
  dq_doc_parts_free(p);
  /* fuzz_code's findings: "module ::" qualifies nothing (it gave an
   * empty name), and control bytes (a NUL did) are no operator name */
  p = run("module ::::::rsist\nend\ndef \x01\x02(x)\nend\n", "e.rb", 0, NULL);
  for (size_t i = 0; i < p->n_symbols; i++)
    CHECK_MSG(p->symbols[i].name[0] != '\0', "symbol %zu has no name", i);
  CHECK_EQ_INT(count_syms(p, "\x01\x02", NULL), 0);
  dq_doc_parts_free(p);
  /* $` is a global, not a string: the method after it is found */
  p = run("def a\n  x =~ /y/; $`\nend\n\ndef b\n  1\nend\n", "g.rb", 0,
          NULL);
  CHECK_SYM(p, "b", "function", 5, 5, "");
  dq_doc_parts_free(p);
}

/* A triple-quoted string's lines at column 0 end no scope: "after" stays a
 * method of Doc, "local" its local (before, the string's last line ended
 * the class: "after" was a top-level function) */
static void test_python_strings(void) {
  const char *src = "class Doc:\n"             /* 1 */
                    "    def render(self):\n"  /* 2 */
                    "        text = \"\"\"\n"  /* 3 */
                    "Header at column 0\n"     /* 4 */
                    "def fake():\n"            /* 5 */
                    "\"\"\"\n"                 /* 6 */
                    "        more = '''x'''\n" /* 7 */
                    "        return text\n"    /* 8 */
                    "    def after(self):\n"   /* 9 */
                    "        local = 1\n"      /* 10 */
                    "s = \"a\\\"b\"\n";        /* 11 */
  dq_doc_parts *p = run(src, "pkg/doc.py", 0, NULL);
  CHECK_SYM(p, "render", "method", 2, 9, "Doc");
  CHECK_SYM(p, "after", "method", 9, 9, "Doc");
  CHECK_SYM(p, "s", "variable", 11, 1, "");
  CHECK_EQ_INT(count_syms(p, "fake", NULL), 0);
  CHECK_EQ_INT(count_syms(p, "local", NULL), 0);
  CHECK_EQ_INT(p->n_symbols, 4);
  dq_doc_parts_free(p);

  /* f-strings: the fields' expressions are code, their text and the
   * strings inside them are not; "{{" is text; {x=} assigns nothing */
  const char *fsrc =
      "class Lock:\n"                                              /* 1 */
      "    def __init__(self):\n"                                  /* 2 */
      "        self._state = 0\n"                                  /* 3 */
      "    def __repr__(self):\n"                                  /* 4 */
      "        a = f'<{self._state.value!r} n={len(self._w)}>'\n"  /* 5 */
      "        b = F\"{{hidden}} {d['key']:>{width}} {fmt(x)=}\"\n" /* 6 */
      "        c = rf'''\n"                                        /* 7 */
      "  {total} {'quoted'}'''\n"                                  /* 8 */
      "        e = 'plain {notref}' + b'{notref}'\n";              /* 9 */
  p = run(fsrc, "pkg/lock.py", 0, NULL);
  CHECK_REF(p, "_state", "use", 5, 22, "__repr__");
  CHECK_REF(p, "value", "use", 5, 29, "__repr__");
  CHECK_REF(p, "len", "call", 5, 41, "__repr__");
  CHECK_REF(p, "_w", "use", 5, 50, "__repr__");
  CHECK_REF(p, "d", "use", 6, 27, "__repr__");
  CHECK_REF(p, "width", "use", 6, 38, "__repr__");
  CHECK_REF(p, "fmt", "call", 6, 47, "__repr__");
  CHECK_REF(p, "x", "use", 6, 51, "__repr__");
  CHECK_REF(p, "total", "use", 8, 4, "__repr__");
  CHECK_EQ_INT(count_refs(p, "hidden"), 0);
  CHECK_EQ_INT(count_refs(p, "key"), 0);
  CHECK_EQ_INT(count_refs(p, "quoted"), 0);
  CHECK_EQ_INT(count_refs(p, "notref"), 0);
  CHECK_EQ_INT(count_refs(p, "r"), 0);
  CHECK_EQ_INT(count_syms(p, "x", NULL), 0);
  CHECK_EQ_INT(count_syms(p, "_state", NULL), 1);
  dq_doc_parts_free(p);
}

static void test_python(void) {
  dq_doc_parts *p = run(py_src, "pkg/a.py", 0, NULL);
  CHECK_SYM(p, "Store", "class", 6, 7, "");
  CHECK_SYM(p, "__init__", "method", 9, 9, "Store");
  CHECK_SYM(p, "size", "method", 13, 9, "Store");
  CHECK_SYM(p, "fetch", "function", 16, 5, "");
  CHECK_SYM(p, "inner", "function", 18, 9, "fetch");
  CHECK_SYM(p, "x", "variable", 22, 1, ""); /* module level; not fetch's */
  CHECK_SYM(p, "path", "field", 10, 14, "Store"); /* self.path in __init__ */
  CHECK_EQ_INT(p->n_symbols, 7);
  CHECK_REF(p, "os", "include", 1, 8, "");
  CHECK_REF(p, "sys", "include", 1, 12, "");
  CHECK_REF(p, "collections", "include", 2, 6, "");
  CHECK_REF(p, "len", "call", 14, 16, "size");
  CHECK_REF(p, "key", "use", 19, 16, "inner");
  CHECK_REF(p, "inner", "call", 20, 12, "fetch");
  CHECK_REF(p, "fetch", "call", 22, 5, "");
  CHECK_EQ_INT(count_refs(p, "fetch"), 1); /* not in the docstring */
  CHECK_EQ_INT(count_refs(p, "helper"), 0);
  CHECK_EQ_INT(count_refs(p, "not_a_ref"), 0);
  CHECK_EQ_INT(count_refs(p, "self"), 0);
  CHECK_EQ_INT(count_refs(p, "OrderedDict"), 0); /* part of the import */
  /* The comment line 5 above the class belongs to its chunk. */
  CHECK_CHUNK(p, 1, 5, 14, "class Store(Base)");
  CHECK_CHUNK(p, 2, 16, 20, "def fetch(key, default=None)");
  dq_doc_parts_free(p);

  /* 40 tokens = 160 bytes: lines 5-10 (139 bytes with the blank line 11)
   * fit, the size() method (decorator included) becomes its own chunk with
   * the class in its section path. */
  p = run(py_src, "pkg/a.py", 40, NULL);
  CHECK_CHUNK(p, 1, 5, 10, "class Store(Base)");
  CHECK_CHUNK(p, 2, 12, 14, "class Store(Base) > def size(self)");
  dq_doc_parts_free(p);
}

static void test_go(void) {
  dq_doc_parts *p = run(go_src, "main.go", 0, NULL);
  CHECK_SYM(p, "Server", "struct", 10, 6, "");
  CHECK_SYM(p, "Handler", "type", 14, 6, "");
  CHECK_SYM(p, "Start", "method", 17, 18, "Server");
  CHECK_SYM(p, "main", "function", 22, 6, "");
  CHECK_SYM(p, "Name", "field", 11, 2, "Server");
  CHECK_REF(p, "fmt", "include", 4, 3, "");
  CHECK_REF(p, "strings", "include", 5, 7, "");
  CHECK_REF(p, "os", "include", 8, 9, "");
  CHECK_REF(p, "Println", "call", 18, 6, "Start");
  CHECK_REF(p, "Start", "call", 24, 4, "main");
  CHECK_EQ_INT(count_refs(p, "listen"), 0);
  CHECK_EQ_INT(count_refs(p, "notcalled"), 0);
  CHECK_EQ_INT(count_refs(p, "main"), 0); /* package clause, definition */
  CHECK_EQ_INT(count_refs(p, "func"), 0);
  CHECK_CHUNK(p, 3, 16, 20, "func (s *Server) Start(port int) error");
  dq_doc_parts_free(p);
}

static void test_ts(void) {
  dq_doc_parts *p = run(ts_src, "web/a.ts", 0, NULL);
  CHECK_SYM(p, "Shape", "interface", 6, 18, "");
  CHECK_SYM(p, "Id", "type", 7, 13, "");
  CHECK_SYM(p, "Circle", "class", 9, 14, "");
  CHECK_SYM_IN(p, "area", "method", "Circle", 11, 3);
  CHECK_SYM_IN(p, "area", "method", "Shape", 6, 26); /* declaration */
  CHECK_REF(p, "lodash", "include", 3, 25, "");
  CHECK_EQ_INT(count_refs(p, "require"), 0);
  CHECK_SYM(p, "unit", "method", 14, 10, "Circle");
  CHECK_SYM(p, "total", "function", 17, 17, "");
  CHECK_SYM(p, "double", "function", 22, 7, "");
  CHECK_SYM(p, "handler", "function", 23, 7, "");
  CHECK_SYM(p, "lodash", "variable", 3, 7, "");
  CHECK_REF(p, "fs", "include", 1, 27, "");
  CHECK_REF(p, "path", "include", 2, 24, "");
  CHECK_REF(p, "reduce", "call", 19, 17, "total");
  CHECK_REF(p, "total", "call", 24, 10, "handler");
  CHECK_EQ_INT(count_refs(p, "ghost"), 0);
  CHECK_EQ_INT(count_refs(p, "fake"), 0);
  CHECK_EQ_INT(count_refs(p, "readFile"), 0); /* part of the import */
  CHECK_EQ_INT(count_refs(p, "this"), 0);
  CHECK_CHUNK(p, 3, 9, 15, "class Circle implements Shape");
  CHECK_CHUNK(p, 4, 17, 20, "function total(shapes: Shape[]): number");
  dq_doc_parts_free(p);

  /* template literals: ${expressions} are code, nested templates too;
   * their text, "${" and strings inside them are not */
  const char *tsrc =
      "class Store {\n"                                          /* 1 */
      "  show(): string {\n"                                     /* 2 */
      "    return `v${this.version.svc} ${fmt(`in ${inner}`)}`\n" /* 3 */
      "      + `ghost ${'quoted'} $notref {alsonot}`;\n"         /* 4 */
      "  }\n"                                                    /* 5 */
      "  after(): void { later(); }\n"                           /* 6 */
      "}\n";                                                     /* 7 */
  p = run(tsrc, "web/t.ts", 0, NULL);
  CHECK_REF(p, "version", "use", 3, 21, "show");
  CHECK_REF(p, "svc", "use", 3, 29, "show");
  CHECK_REF(p, "fmt", "call", 3, 36, "show");
  CHECK_REF(p, "inner", "use", 3, 46, "show");
  CHECK_REF(p, "later", "call", 6, 19, "after");
  CHECK_SYM(p, "after", "method", 6, 3, "Store");
  CHECK_EQ_INT(count_refs(p, "ghost"), 0);
  CHECK_EQ_INT(count_refs(p, "quoted"), 0);
  CHECK_EQ_INT(count_refs(p, "notref"), 0);
  CHECK_EQ_INT(count_refs(p, "alsonot"), 0);
  CHECK_EQ_INT(count_refs(p, "v"), 0);
  dq_doc_parts_free(p);

  /* a destructured parameter's braces are no body: the function's body
   * follows them (React components, TS methods taking an options object) */
  const char *dsrc =
      "export function Button({ label, onClick }: Props) {\n" /* 1 */
      "  return go(label);\n"                                 /* 2 */
      "}\n"                                                   /* 3 */
      "class P {\n"                                           /* 4 */
      "  end({ a, b }: R, [c, d]: T) {\n"                     /* 5 */
      "    x(a);\n"                                           /* 6 */
      "  }\n"                                                 /* 7 */
      "}\n"                                                   /* 8 */
      "const f = ({ a }) => {\n"                              /* 9 */
      "  return use(a);\n"                                    /* 10 */
      "};\n"                                                  /* 11 */
      "register({ name: 'n', run() { inner(); } });\n";       /* 12 */
  p = run(dsrc, "web/d.ts", 0, NULL);
  CHECK_SYM(p, "Button", "function", 1, 17, "");
  CHECK_SYM(p, "end", "method", 5, 3, "P");
  CHECK_SYM(p, "f", "function", 9, 7, "");
  CHECK_REF(p, "go", "call", 2, 10, "Button");
  CHECK_REF(p, "x", "call", 6, 5, "end");
  CHECK_REF(p, "use", "call", 10, 10, "f");
  CHECK_REF(p, "register", "call", 12, 1, "");
  CHECK_REF(p, "inner", "call", 12, 31, ""); /* (run is no symbol) */
  dq_doc_parts_free(p);
}

static void test_rust(void) {
  dq_doc_parts *p = run(rs_src, "src/lib.rs", 0, NULL);
  CHECK_SYM(p, "util", "mod", 4, 5, "");
  CHECK_SYM(p, "Point", "struct", 7, 12, "");
  CHECK_SYM(p, "x", "field", 7, 20, "Point");
  CHECK_SYM(p, "y", "field", 7, 28, "Point");
  CHECK_SYM(p, "Meters", "struct", 8, 8, "");
  CHECK_SYM(p, "Area", "trait", 10, 11, "");
  CHECK_SYM_IN(p, "area", "method", "Point", 15, 8);
  CHECK_SYM_IN(p, "area", "method", "Area", 11, 8); /* trait declaration */
  CHECK_SYM(p, "new", "method", 22, 12, "Point");
  CHECK_SYM(p, "helper", "function", 25, 4, "");
  CHECK_SYM(p, "square", "macro", 31, 14, "");
  CHECK_REF(p, "std::collections::HashMap", "include", 1, 5, "");
  CHECK_REF(p, "helper", "call", 17, 9, "area");
  CHECK_REF(p, "println", "call", 27, 5, "helper");
  CHECK_EQ_INT(count_refs(p, "fake_call"), 0);
  CHECK_EQ_INT(count_refs(p, "not_called"), 0);
  CHECK_EQ_INT(count_refs(p, "a"), 0); /* lifetimes */
  CHECK_EQ_INT(count_refs(p, "self"), 0);
  CHECK_CHUNK(p, 4, 14, 19, "impl Area for Point");
  dq_doc_parts_free(p);
}

static void test_java(void) {
  dq_doc_parts *p = run(java_src, "A.java", 0, NULL);
  CHECK_SYM(p, "Account", "class", 7, 14, "");
  CHECK_SYM(p, "balance", "field", 8, 17, "Account");
  CHECK_SYM(p, "Account", "method", 10, 12, "Account");
  CHECK_SYM(p, "compareTo", "method", 15, 16, "Account");
  CHECK_SYM(p, "Listener", "interface", 19, 15, "Account");
  CHECK_SYM(p, "Inner", "class", 21, 18, "Account");
  CHECK_SYM(p, "run", "method", 22, 14, "Account.Inner");
  CHECK_REF(p, "java.util.List", "include", 3, 8, "");
  CHECK_REF(p, "compare", "call", 16, 24, "compareTo");
  CHECK_REF(p, "helper", "call", 22, 39, "run");
  CHECK_EQ_INT(count_refs(p, "phantom"), 0);
  CHECK_EQ_INT(count_refs(p, "x"), 0);
  CHECK_EQ_INT(count_refs(p, "com"), 0);
  CHECK_EQ_INT(count_refs(p, "List"), 0);
  CHECK_CHUNK(p, 1, 6, 24, "public class Account extends Base implements Comparable<Account>");
  dq_doc_parts_free(p);
}

/* Preprocessor branches that open a brace each (only the first counts), a
 * function returning a function pointer, and balanced #if 0 code. */
static void test_c_preproc(void) {
  const char *src = "static void (*get_fn(int k))(void) {\n"  /* 1 */
                    "  return 0;\n"                           /* 2 */
                    "}\n"                                     /* 3 */
                    "int loop(int a) {\n"                     /* 4 */
                    "#ifdef WIN\n"                            /* 5 */
                    "  while (a > 0) {\n"                     /* 6 */
                    "#else\n"                                 /* 7 */
                    "  while (a > 1) {\n"                     /* 8 */
                    "#endif\n"                                /* 9 */
                    "    a--;\n"                              /* 10 */
                    "  }\n"                                   /* 11 */
                    "  return a;\n"                           /* 12 */
                    "}\n"                                     /* 13 */
                    "int after(void) { return loop(2); }\n"   /* 14 */
                    "#if 0\n"                                 /* 15 */
                    "int dead(void) { return 0; }\n"          /* 16 */
                    "#endif\n";                               /* 17 */
  dq_doc_parts *p = run(src, "pp.c", 0, NULL);
  CHECK_SYM(p, "get_fn", "function", 1, 15, "");
  CHECK_SYM(p, "loop", "function", 4, 5, "");
  CHECK_SYM(p, "after", "function", 14, 5, "");
  CHECK_SYM(p, "dead", "function", 16, 5, "");
  CHECK_REF(p, "loop", "call", 14, 26, "after");
  CHECK_REF(p, "a", "use", 8, 10, "loop"); /* refs come from both branches */
  CHECK_CHUNK(p, 1, 4, 13, "int loop(int a)");
  dq_doc_parts_free(p);
}

/* A function larger than the budget is split at line starts, keeping its
 * signature as section; every piece respects the budget. */
static void test_big_function(void) {
  char src[8192];
  size_t m = (size_t)snprintf(src, sizeof src, "int big(void) {\n");
  for (int i = 0; i < 60; i++)
    m += (size_t)snprintf(src + m, sizeof src - m, "  total += compute_%02d(i);\n", i);
  snprintf(src + m, sizeof src - m, "}\n");
  dq_doc_parts *p = run(src, "big.c", 50, NULL);
  CHECK(p->n_chunks >= 4);
  for (size_t i = 0; i < p->n_chunks; i++) {
    CHECK(p->chunks[i].n_tokens <= 50);
    CHECK_EQ_STR(p->chunks[i].section, "int big(void)");
  }
  CHECK_REF(p, "compute_59", "call", 61, 12, "big");
  dq_doc_parts_free(p);
}

int main(void) {
  test_c();
  test_c_preproc();
  test_cpp();
  test_cuda();
  test_csharp();
  test_kotlin();
  test_php();
  test_swift();
  test_ruby();
  test_python();
  test_python_strings();
  test_go();
  test_ts();
  test_rust();
  test_java();
  test_big_function();
  return TEST_EXIT();
}
