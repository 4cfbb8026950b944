/*
 * test_chunk_basic.c - properties every chunker keeps, and the generic
 * chunker: the empty document, Markdown and reader headings as section
 * paths, '#' lines of plain text (headings only when set apart, in a text
 * where most are, never in a script), a heading alone joining what follows, the
 * token budget (estimate = ceil(bytes / 4)), chunks that never split a UTF-8
 * sequence, every non-blank byte covered, overlap, the chunk's text/line/page
 * fields, and argument errors.
 */
#include "chunk_test.h"

static void test_empty(void) {
  dq_text *t = text_of("", DQ_DOC_TEXT, NULL);
  dq_doc_parts *p = chunk_of(t, "empty.txt", 0, 0);
  CHECK(p != NULL);
  if (p) {
    CHECK_EQ_INT(p->n_chunks, 0);
    CHECK_EQ_INT(p->n_symbols, 0);
    CHECK_EQ_INT(p->n_refs, 0);
  }
  dq_doc_parts_free(p);
  dq_text_free(t);
  /* Whitespace only: nothing to chunk either. Empty code file too. */
  t = text_of("  \n\n\t\n", DQ_DOC_TEXT, NULL);
  p = chunk_of(t, "blank.txt", 0, 0);
  CHECK(p && p->n_chunks == 0);
  dq_doc_parts_free(p);
  dq_text_free(t);
  t = text_of("", DQ_DOC_CODE, "c");
  p = chunk_of(t, "e.c", 0, 0);
  CHECK(p && p->n_chunks == 0 && p->n_symbols == 0);
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_markdown(void) {
  const char *md = "# Guide\n"               /* 1 */
                   "\n"                      /* 2 */
                   "Intro text.\n"           /* 3 */
                   "\n"                      /* 4 */
                   "## Install\n"            /* 5 */
                   "\n"                      /* 6 */
                   "```sh\n"                 /* 7 */
                   "# not a heading\n"       /* 8 */
                   "```\n"                   /* 9 */
                   "\n"                      /* 10 */
                   "### Linux ##\n"          /* 11 */
                   "apt-get install docqa\n" /* 12 */
                   "## Use\n"                /* 13 */
                   "Run it.\n";              /* 14 */
  dq_text *t = text_of(md, DQ_DOC_MARKDOWN, NULL);
  CHECK_EQ_INT(dq_chunk_detect(t, "guide.md"), DQ_CHUNK_GENERIC);
  dq_doc_parts *p = chunk_of(t, "guide.md", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 4);
  CHECK_CHUNK(p, 0, 1, 3, "Guide");
  CHECK_CHUNK(p, 1, 5, 9, "Guide > Install");
  CHECK_CHUNK(p, 2, 11, 12, "Guide > Install > Linux");
  CHECK_CHUNK(p, 3, 13, 14, "Guide > Use");
  check_invariants(t, p, DQ_CHUNK_MAX_TOKENS_DEFAULT);
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* Plain text: a README's '#' headings stand apart, a config file's or a
 * script's comments sit on the line they explain. */
static void test_text_hashes(void) {
  const char *s = "# Install\n"            /* 1 */
                  "\n"                     /* 2 */
                  "Run make.\n"            /* 3 */
                  "\n"                     /* 4 */
                  "# set the PATH first\n" /* 5 */
                  "export PATH=/opt/bin\n" /* 6 */
                  "\n"                     /* 7 */
                  "## Usage\n"             /* 8 */
                  "\n"                     /* 9 */
                  "Call it.\n"             /* 10 */
                  "# trailing comment\n";  /* 11 */
  dq_text *t = text_of(s, DQ_DOC_TEXT, NULL);
  dq_doc_parts *p = chunk_of(t, "README", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 6, "Install");
  CHECK_CHUNK(p, 1, 8, 11, "Install > Usage");
  check_invariants(t, p, DQ_CHUNK_MAX_TOKENS_DEFAULT);
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* the same after "#!": a script, whose '#' lines are all comments */
  const char *sh = "#!/bin/sh\n" /* 1 */
                   "\n"          /* 2 */
                   "# Install\n" /* 3 */
                   "\n"          /* 4 */
                   "make\n";     /* 5 */
  t = text_of(sh, DQ_DOC_TEXT, NULL);
  p = chunk_of(t, "install", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 1);
  CHECK_CHUNK(p, 0, 1, 5, "");
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* a config file: its one '#' line set apart is a comment too, as most of
   * its '#' lines are comments */
  const char *conf = "# Example configuration\n" /* 1 */
                     "\n"                        /* 2 */
                     "# the user's shell\n"      /* 3 */
                     "SHELL=/bin/bash\n"         /* 4 */
                     "# the home directory\n"    /* 5 */
                     "HOME=/home\n";             /* 6 */
  t = text_of(conf, DQ_DOC_TEXT, NULL);
  p = chunk_of(t, "adduser.conf", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 1);
  CHECK_CHUNK(p, 0, 1, 6, "");
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* Markdown keeps every '#' line outside fences a heading */
  t = text_of(s, DQ_DOC_MARKDOWN, NULL);
  p = chunk_of(t, "README.md", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 4);
  CHECK_CHUNK(p, 1, 5, 6, "set the PATH first");
  CHECK_CHUNK(p, 2, 8, 10, "set the PATH first > Usage");
  CHECK_CHUNK(p, 3, 11, 11, "trailing comment");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* A heading alone is no chunk: before its first sub-heading it joins it
 * (under the sub-heading's path), before a paragraph too long to follow
 * it within the budget it takes the paragraph's first lines. */
static void test_heading_alone(void) {
  const char *md = "# Guide\n"    /* 1 */
                   "\n"           /* 2 */
                   "## Install\n" /* 3 */
                   "\n"           /* 4 */
                   "Run make.\n"  /* 5 */
                   "\n"           /* 6 */
                   "## Use\n"     /* 7 */
                   "\n"           /* 8 */
                   "Run it.\n";   /* 9 */
  dq_text *t = text_of(md, DQ_DOC_TEXT, NULL);
  dq_doc_parts *p = chunk_of(t, "guide.txt", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 5, "Guide > Install");
  CHECK_CHUNK(p, 1, 7, 9, "Guide > Use");
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* a reader's title over two lines is still the heading alone */
  const char *two = "Field Guide\n"       /* 1 */
                    "to Ponds\n"          /* 2 */
                    "Introduction\n"      /* 3 */
                    "Ponds are small.\n"; /* 4 */
  t = text_of(two, DQ_DOC_DOCX, NULL);
  t->headings = calloc(2, sizeof *t->headings);
  t->n_headings = 2;
  t->headings[0] = (dq_heading){0, 1, strdup("Field Guide to Ponds")};
  t->headings[1] = (dq_heading){(size_t)(strstr(two, "Intro") - two), 2,
                                strdup("Introduction")};
  p = chunk_of(t, "guide.docx", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 1);
  CHECK_CHUNK(p, 0, 1, 4, "Field Guide to Ponds > Introduction");
  dq_doc_parts_free(p);
  dq_text_free(t);

  /* a 32-token budget (128 bytes): the paragraph (9 lines of 36 bytes)
   * does not fit after "# T" */
  char buf[512] = "# T\n\n";
  for (int i = 0; i < 9; i++)
    strcat(buf, "word word word word word word word.\n");
  t = text_of(buf, DQ_DOC_TEXT, NULL);
  p = chunk_of(t, "t.txt", 32, 0);
  CHECK(p->n_chunks >= 3);
  CHECK_EQ_INT(p->chunks[0].line_start, 1);
  CHECK_MSG(p->chunks[0].line_end >= 4, "chunk 0 ends on line %u",
            p->chunks[0].line_end);
  CHECK_EQ_STR(p->chunks[0].section, "T");
  check_invariants(t, p, 32);
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* Headings given by a reader (DOCX/HTML) with page numbers in the marks. */
static void test_reader_headings(void) {
  const char *s = "Overview\nFirst page text.\nDetails\nSecond page text.\n";
  dq_text *t = text_of(s, DQ_DOC_DOCX, NULL);
  t->marks[2].page = t->marks[3].page = 2;
  t->marks[0].page = t->marks[1].page = 1;
  t->n_headings = 2;
  t->headings = calloc(2, sizeof *t->headings);
  t->headings[0] = (dq_heading){0, 1, strdup("Overview")};
  t->headings[1] = (dq_heading){26, 2, strdup("Details")};
  dq_doc_parts *p = chunk_of(t, "doc.docx", 0, 0);
  CHECK_EQ_INT(p->n_chunks, 2);
  CHECK_CHUNK(p, 0, 1, 2, "Overview");
  CHECK_CHUNK(p, 1, 3, 4, "Overview > Details");
  if (p->n_chunks == 2) {
    CHECK_EQ_INT(p->chunks[0].page_start, 1);
    CHECK_EQ_INT(p->chunks[1].page_end, 2);
  }
  check_invariants(t, p, DQ_CHUNK_MAX_TOKENS_DEFAULT);
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* Multi-byte text with long paragraphs, one very long line without blanks
 * and one without any ASCII at all: budget and UTF-8 boundaries hold for
 * several budgets, with and without overlap. */
static void test_budget_utf8(void) {
  size_t cap = 64 * 1024, m = 0;
  char *s = malloc(cap);
  for (int para = 0; para < 12; para++) {
    for (int w = 0; w < 90; w++)
      m += (size_t)snprintf(s + m, cap - m, "%s ",
                            (w % 3 == 0)   ? "caf\xC3\xA9"
                            : (w % 3 == 1) ? "\xE4\xB8\xAD\xE6\x96\x87"
                                           : "word");
    s[m++] = '\n';
    if (para % 3 == 0)
      s[m++] = '\n';
  }
  for (int i = 0; i < 700; i++) /* one 2800-byte line: 4-byte emoji */
    m += (size_t)snprintf(s + m, cap - m, "\xF0\x9F\x98\x80");
  s[m++] = '\n';
  for (int i = 0; i < 500; i++)
    m += (size_t)snprintf(s + m, cap - m, "x\xC3\xA9");
  s[m++] = '\n';
  s[m] = '\0';
  dq_text *t = text_of(s, DQ_DOC_TEXT, NULL);
  const uint32_t budgets[] = {8, 50, 350, 1000};
  for (size_t b = 0; b < 4; b++)
    for (uint32_t ov = 0; ov <= 20; ov += 20) {
      dq_doc_parts *p = chunk_of(t, "u.txt", budgets[b], ov);
      CHECK(p->n_chunks > 0);
      check_invariants(t, p, budgets[b]);
      if (ov && budgets[b] >= 350) {
        int overlapped = 0;
        for (size_t i = 1; i < p->n_chunks; i++)
          overlapped |= p->chunks[i].byte_start < p->chunks[i - 1].byte_end;
        CHECK(overlapped);
      }
      dq_doc_parts_free(p);
    }
  dq_text_free(t);
  free(s);
}

/* Overlap starts at a line start (a word start when lines are long) inside
 * the previous chunk and never takes
 * more than overlap_tokens * 4 bytes. */
static void test_overlap(void) {
  char s[4096];
  size_t m = 0;
  for (int i = 0; i < 60; i++)
    m += (size_t)snprintf(s + m, sizeof s - m, "line %02d of plain text.\n", i);
  dq_text *t = text_of(s, DQ_DOC_TEXT, NULL);     /* 24 bytes per line */
  dq_doc_parts *p = chunk_of(t, "o.txt", 60, 12); /* 240 B, overlap 48 B */
  CHECK(p->n_chunks >= 6);
  for (size_t i = 1; i < p->n_chunks; i++) {
    const dq_chunk *a = &p->chunks[i - 1], *b = &p->chunks[i];
    CHECK(b->byte_start < a->byte_end);
    CHECK(a->byte_end - b->byte_start <= 48);
    CHECK(t->text[b->byte_start - 1] == '\n');
    CHECK_EQ_INT(b->line_start + 1, a->line_end); /* 2 lines = 48 bytes */
  }
  check_invariants(t, p, 60);
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_args(void) {
  dq_error err = {0};
  dq_doc_parts *p = (dq_doc_parts *)1;
  CHECK_EQ_INT(dq_chunk_document(NULL, "x", NULL, &p, &err), DQ_ERR_ARG);
  CHECK(strlen(dq_error_msg(&err)) > 0);
  dq_doc_parts_free(NULL);
  CHECK_EQ_INT(dq_chunk_estimate_tokens(0), 0);
  CHECK_EQ_INT(dq_chunk_estimate_tokens(1), 1);
  CHECK_EQ_INT(dq_chunk_estimate_tokens(8), 2);
  CHECK_EQ_INT(dq_chunk_estimate_tokens(9), 3);
  CHECK_EQ_STR(dq_chunk_lang_for_path("a/b/x.PY"), "python");
  CHECK_EQ_STR(dq_chunk_lang_for_path("x.tsx"), "typescript");
  CHECK_EQ_STR(dq_chunk_lang_for_path("src/Ledger.cs"), "csharp");
  CHECK_EQ_STR(dq_chunk_lang_for_path("k.cuh"), "cpp");
  CHECK(dq_chunk_lang_for_path("Makefile") == NULL);
  CHECK(dq_chunk_lang_for_path(".c") == NULL);
  /* force_kind overrides detection: a .py path chunked as prose. */
  dq_text *t = text_of("def f():\n    return 1\n", DQ_DOC_CODE, "python");
  dq_chunk_opts o = {.force_kind = DQ_CHUNK_GENERIC};
  CHECK_OK(dq_chunk_document(t, "f.py", &o, &p, &err), dq_error_msg(&err));
  CHECK_EQ_INT(p->n_symbols, 0);
  CHECK_EQ_INT(p->n_chunks, 1);
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* Random token soup in every language (fixed seed): unbalanced braces,
 * unterminated strings and comments, raw strings, lifetimes, regex
 * literals, multi-byte text. No crash (ASan/UBSan builds), invariants hold,
 * every symbol/ref position lies inside the text. */
static void test_soup(void) {
  static const char *const toks[] = {"{",
                                     "}",
                                     "(",
                                     ")",
                                     "[",
                                     "]",
                                     ";",
                                     ":",
                                     ",",
                                     "\n",
                                     "\n\n",
                                     " ",
                                     "\t",
                                     "\"",
                                     "'",
                                     "`",
                                     "/*",
                                     "*/",
                                     "//",
                                     "#",
                                     "\\",
                                     "/",
                                     "=>",
                                     "->",
                                     "::",
                                     "r#\"",
                                     "\"#",
                                     "'a",
                                     "'''",
                                     "\"\"\"",
                                     "${",
                                     "R\"(",
                                     ")\"",
                                     "@",
                                     "$",
                                     "int f",
                                     "def g",
                                     "class C",
                                     "fn h",
                                     "func (r *T) M",
                                     "struct S",
                                     "impl X for Y",
                                     "typedef",
                                     "#define M",
                                     "#include <x.h>",
                                     "import os",
                                     "from a import b",
                                     "use a::b;",
                                     "package p",
                                     "const f = () =>",
                                     "interface I",
                                     "type T =",
                                     "Section 5.2",
                                     "1.1 ",
                                     "(a) ",
                                     "ARTICLE IV",
                                     "\"Term\" means",
                                     "(the \"Agreement\")",
                                     "caf\xC3\xA9",
                                     "\xE4\xB8\xAD",
                                     "\xF0\x9F\x98\x80",
                                     "x",
                                     "y1",
                                     "_z",
                                     "0x1F",
                                     "42"};
  static const char *const paths[] = {"s.c",   "s.cpp", "s.py", "s.js",
                                      "s.ts",  "s.go",  "s.rs", "S.java",
                                      "s.txt", "s.md"};
  uint32_t rnd = 12345;
  char buf[4096];
  for (int iter = 0; iter < 400; iter++) {
    size_t m = 0;
    rnd = rnd * 1103515245u + 12345u;
    int n_tok = 1 + (int)((rnd >> 16) % 300);
    for (int k = 0; k < n_tok; k++) {
      rnd = rnd * 1103515245u + 12345u;
      const char *tk = toks[(rnd >> 16) % (sizeof toks / sizeof toks[0])];
      size_t len = strlen(tk);
      if (m + len >= sizeof buf)
        break;
      memcpy(buf + m, tk, len);
      m += len;
    }
    buf[m] = '\0';
    const char *path = paths[iter % 10];
    dq_text *t = text_of(buf, iter % 10 < 8 ? DQ_DOC_CODE : DQ_DOC_TEXT, NULL);
    uint32_t max_tokens = 8 + (uint32_t)(iter % 7) * 20;
    dq_doc_parts *p = chunk_of(t, path, max_tokens, (uint32_t)(iter % 3));
    if (!p) {
      dq_text_free(t);
      continue;
    }
    check_invariants(t, p, max_tokens);
    uint32_t last_line = 1, pg;
    if (t->n_bytes)
      dq_text_locate(t, t->n_bytes - 1, &last_line, &pg);
    for (size_t i = 0; i < p->n_symbols; i++)
      CHECK(p->symbols[i].line >= 1 && p->symbols[i].line <= last_line &&
            p->symbols[i].col >= 1 && p->symbols[i].name[0]);
    for (size_t i = 0; i < p->n_refs; i++)
      CHECK(p->refs[i].line >= 1 && p->refs[i].line <= last_line &&
            p->refs[i].col >= 1 && p->refs[i].name[0]);
    dq_doc_parts_free(p);
    dq_text_free(t);
  }
}

int main(void) {
  test_empty();
  test_markdown();
  test_text_hashes();
  test_heading_alone();
  test_reader_headings();
  test_budget_utf8();
  test_overlap();
  test_args();
  test_soup();
  return TEST_EXIT();
}
