/*
 * fuzz_code.c - libFuzzer harness for the code chunker and symbol
 * extraction (chunk_*.c, sym_*.c, lex_code.c), and the contract chunker's
 * clauses, defined terms and cross-references (chunk_contract.c): the
 * input's first byte picks the language (by file extension, every one
 * dq_chunk_lang_for_path knows), or 'K' a contract (text, the contract
 * chunker forced), or 'P' a contract PDF (pages: a line opening with '~'
 * starts one; font headings: a line opening with '^', its level the
 * number of '^'), the rest is the source. Checks the dq_doc_parts invariants:
 * chunks inside the text and in order, lines and columns of symbols and
 * references inside the text's lines, names non-empty. Crashes, sanitizer
 * reports, leaks and broken invariants are findings.
 */
#include "ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "invariant broken: %s\n", what);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  static const char *const paths[] = {
      "a.c", "a.cpp", "k.cu", "A.cs", "a.py", "a.js",
      "a.ts", "a.go", "a.rs", "A.java", "a.kt", "a.php", "a.swift",
      "a.rb"};
  if (n < 1)
    return 0;
  int pdf = data[0] == 'P';
  int contract = data[0] == 'K' || pdf;
  const char *path =
      contract ? "c.txt" : paths[data[0] % (sizeof paths / sizeof *paths)];
  data++;
  n--;
  dq_text *t = calloc(1, sizeof *t);
  check(t != NULL, "alloc");
  t->text = malloc(3 * n + 1);
  t->marks = calloc(n + 1, sizeof *t->marks);
  check(t->text && t->marks, "alloc");
  /* A dq_text holds no NUL; a contract's is valid UTF-8 as every reader's
   * (the code chunkers take any bytes): there bytes from 0x80 stand for
   * the curly quotes, section sign and dash its patterns know, or an
   * accented letter. */
  static const char *const wide[] = {"\xE2\x80\x9C", "\xE2\x80\x9D",
                                     "\xC2\xA7", "\xE2\x80\x93",
                                     "\xC3\xA9"};
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = data[i];
    if (contract && ch >= 0x80) {
      const char *w = wide[ch - 0x80 < 4 ? ch - 0x80 : 4];
      size_t k = strlen(w);
      memcpy(t->text + m, w, k);
      m += k;
      continue;
    }
    t->text[m++] = ch ? (char)ch : ' ';
  }
  n = m;
  t->text[n] = '\0';
  t->n_bytes = n;
  t->kind = pdf ? DQ_DOC_PDF : contract ? DQ_DOC_TEXT : DQ_DOC_CODE;
  uint32_t line = 1;
  if (n)
    t->marks[t->n_marks++] = (dq_srcmark){0, 1, 0};
  for (size_t i = 0; i + 1 < n; i++)
    if (t->text[i] == '\n')
      t->marks[t->n_marks++] = (dq_srcmark){i + 1, ++line, 0};
  if (pdf) {
    t->headings = calloc(t->n_marks + 1, sizeof *t->headings);
    check(t->headings != NULL, "alloc");
    uint32_t page = 1, in_page = 0;
    for (size_t k = 0; k < t->n_marks; k++) {
      size_t a = t->marks[k].offset;
      size_t e = k + 1 < t->n_marks ? t->marks[k + 1].offset - 1 : n;
      if (t->text[a] == '~' && k > 0) {
        page++;
        in_page = 0;
      }
      t->marks[k].page = page;
      t->marks[k].line = ++in_page;
      int level = 0;
      while (a + (size_t)level < e && t->text[a + level] == '^')
        level++;
      if (level) {
        dq_heading *h = &t->headings[t->n_headings++];
        h->offset = a;
        h->level = level > 7 ? 7 : level;
        h->title = malloc(e - a + 1);
        check(h->title != NULL, "alloc");
        memcpy(h->title, t->text + a, e - a);
        h->title[e - a] = '\0';
      }
    }
    t->n_pages = page;
  }
  dq_chunk_opts o = {.max_tokens = 48}; /* small: many cuts */
  if (contract)
    o.force_kind = DQ_CHUNK_CONTRACT;
  dq_doc_parts *p = NULL;
  dq_error err = {0};
  dq_status st = dq_chunk_document(t, path, &o, &p, &err);
  if (st == DQ_OK) {
    size_t prev = 0;
    for (size_t i = 0; i < p->n_chunks; i++) {
      const dq_chunk *c = &p->chunks[i];
      check(c->byte_start <= c->byte_end && c->byte_end <= n, "chunk range");
      check(c->byte_start >= prev, "chunks in order");
      check(c->line_start >= 1 && c->line_start <= c->line_end &&
                c->line_end <= line,
            "chunk lines");
      check(c->text && c->section, "chunk strings");
      check(!pdf || c->page_start == c->page_end, "a chunk on one page");
      prev = c->byte_start;
    }
    for (size_t i = 0; i < p->n_symbols; i++) {
      const dq_symbol *s = &p->symbols[i];
      check(s->name && s->name[0] && s->scope, "symbol strings");
      check(s->line >= 1 && s->line <= line && s->col >= 1, "symbol place");
    }
    for (size_t i = 0; i < p->n_refs; i++) {
      const dq_ref *r = &p->refs[i];
      check(r->name && r->name[0], "reference name");
      check(r->line >= 1 && r->line <= line && r->col >= 1,
            "reference place");
    }
  } else {
    check(p == NULL && err.msg[0] != '\0', "a message on error");
  }
  dq_doc_parts_free(p);
  dq_text_free(t);
  return 0;
}
