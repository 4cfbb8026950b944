/*
 * test_chunk_samples.c - the chunker on the real sample contracts
 * (samples/contracts/, one per reader: text, Markdown, HTML, DOCX, PDF), read
 * with the real readers (dq_read). Expectations were checked by hand against
 * the source files and samples/questions.txt (gold line/page/paragraph
 * ranges): each is detected as a contract; the chunk holding a gold answer
 * covers its gold range and carries the right section path; defined terms
 * and section numbers are symbols at their source line; PDF chunks stay on
 * one page; every chunk keeps the default budget.
 */
#include "chunk_test.h"

#include <stdio.h>

#define SAMPLES DQ_SOURCE_DIR "/samples/contracts/"

static dq_text *read_sample(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s", SAMPLES, name);
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read(path, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
           dq_error_msg(&err));
  return t;
}

static dq_doc_parts *chunk_sample(const dq_text *t, const char *name,
                                  uint32_t max_tokens) {
  if (!t)
    return NULL;
  CHECK_EQ_INT(dq_chunk_detect(t, name), DQ_CHUNK_CONTRACT);
  dq_doc_parts *p = chunk_of(t, name, max_tokens, 0);
  uint32_t budget = max_tokens ? max_tokens : DQ_CHUNK_MAX_TOKENS_DEFAULT;
  for (size_t i = 0; p && i < p->n_chunks; i++) {
    const dq_chunk *k = &p->chunks[i];
    CHECK(k->n_tokens <= budget);
    CHECK(k->byte_start < k->byte_end);
    CHECK(k->page_start == k->page_end); /* 0-0 unpaged; PDF: one page */
    CHECK(k->line_start <= k->line_end);
    if (i)
      CHECK(k->byte_start >= p->chunks[i - 1].byte_end);
  }
  return p;
}

/* The first chunk whose text contains s. */
static const dq_chunk *chunk_with(const dq_doc_parts *p, const char *s) {
  for (size_t i = 0; p && i < p->n_chunks; i++)
    if (strstr(p->chunks[i].text, s))
      return &p->chunks[i];
  CHECK_MSG(0, "no chunk contains \"%s\"", s);
  return NULL;
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define CHECK_COVERS(k, l0, l1, sec_prefix)                                    \
  do {                                                                         \
    if (k) {                                                                   \
      CHECK((k)->line_start <= (l0) && (k)->line_end >= (l1));                 \
      CHECK_MSG(starts_with((k)->section, sec_prefix),                         \
                "section \"%s\" should start with \"%s\"", (k)->section,       \
                sec_prefix);                                                   \
    }                                                                          \
  } while (0)

static void test_txt(void) {
  const char *name = "master_services_agreement.txt";
  dq_text *t = read_sample(name);
  dq_doc_parts *p = chunk_sample(t, name, 0);
  /* gold: lines 208-210 and 183-188 */
  CHECK_COVERS(chunk_with(p, "ninety (90) days' written notice"), 208, 210,
               "Article 11 TERM AND TERMINATION");
  CHECK_COVERS(chunk_with(p, "125% of the Charges"), 183, 188,
               "Article 10 LIMITATION OF LIABILITY");
  /* the parties (1) (2) and recitals (A) (B) stay with the preamble */
  const dq_chunk *k = chunk_with(p, "BELLHAVEN LOGISTICS PLC, a company");
  if (k && p) {
    CHECK(k == &p->chunks[0]);
    CHECK_EQ_STR(k->section, "");
  }
  CHECK_SYM(p, "Confidential Information", "term", 37, 6, "1.1");
  CHECK_SYM(p, "Article 11", "section", 193, 1, "");
  CHECK_SYM(p, "Schedule 4", "section", 276, 1, "");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_md(void) {
  const char *name = "mutual_nda.md";
  dq_text *t = read_sample(name);
  dq_doc_parts *p = chunk_sample(t, name, 0);
  CHECK_COVERS(chunk_with(p, "notes, analyses, compilations"), 41, 43,
               "Article 2 Definitions");
  CHECK_COVERS(chunk_with(p, "State of Delaware"), 152, 155,
               "Article 9 General");
  /* "## Signatures" is at the level of the "## Article N" headings */
  const dq_chunk *k = chunk_with(p, "## Signatures");
  if (k) {
    CHECK_EQ_STR(k->section, "Signatures");
    CHECK_EQ_INT(k->line_start, 193);
  }
  CHECK_SYM(p, "Confidential Information", "term", 28, 8, "2.1");
  CHECK_SYM(p, "Derived Materials", "term", 41, 8, "2.2");
  CHECK_SYM(p, "9.1", "section", 152, 5, "Article 9 General");
  dq_doc_parts_free(p);
  /* A small budget: the Delaware clause gets its own chunk under 9.1. */
  p = chunk_sample(t, name, 40);
  CHECK_COVERS(chunk_with(p, "State of Delaware"), 155, 155,
               "Article 9 General > 9.1 Governing Law");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_html(void) {
  const char *name = "data_processing_addendum.html";
  dq_text *t = read_sample(name);
  dq_doc_parts *p = chunk_sample(t, name, 0);
  CHECK_COVERS(chunk_with(p, "forty-eight (48) hours"), 128, 130,
               "Article 7 Personal Data Breach");
  CHECK_COVERS(chunk_with(p, "Cobalt Cloud"), 201, 201,
               "Annex 3 Approved Sub-processors");
  CHECK_SYM(p, "Personal Data Breach", "term", 43, 2, "1.1");
  CHECK_SYM(p, "7.1", "section", 128, 1, "Article 7 Personal Data Breach");
  CHECK_SYM(p, "Article 7", "section", 126, 1, "");
  /* <a href="#s7-1">Section 7.1</a> inside 7.2 */
  CHECK_REF(p, "7.1", "xref", 132, 30, "7.2");
  dq_doc_parts_free(p);
  p = chunk_sample(t, name, 30);
  const dq_chunk *k = chunk_with(p, "forty-eight (48) hours");
  CHECK_COVERS(k, 129, 129, "Article 7 Personal Data Breach > 7.1");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_docx(void) {
  const char *name = "software_licence_agreement.docx";
  dq_text *t = read_sample(name);
  dq_doc_parts *p = chunk_sample(t, name, 0);
  /* lines are w:p paragraph numbers; gold: paragraph 41 */
  CHECK_COVERS(chunk_with(p, "one hundred and eighty (180) days"), 41, 41,
               "9 Term and Termination");
  /* the Title is the first chunk's section, not a prefix of every path */
  if (p && p->n_chunks) {
    CHECK_EQ_STR(p->chunks[0].section, "SOFTWARE LICENCE AGREEMENT");
    CHECK_EQ_INT(p->chunks[0].line_start, 1);
  }
  CHECK_COVERS(chunk_with(p, "1.1 \"Software\" means"), 4, 4, "1 Definitions");
  CHECK_COVERS(chunk_with(p, "Schedule B - Support Service Levels"), 68, 68,
               "Schedule B Support Service Levels");
  const dq_symbol *s = find_sym(p, "Term", "term");
  CHECK(s && s->line == 41);
  CHECK(find_sym(p, "Licensee", "term") != NULL);
  CHECK_SYM(p, "9.1", "section", 41, 1, "9 Term and Termination");
  dq_doc_parts_free(p);
  dq_text_free(t);
}

static void test_pdf(void) {
  const char *name = "commercial_lease.pdf";
  dq_text *t = read_sample(name);
  dq_doc_parts *p = chunk_sample(t, name, 0);
  /* gold: page 4 */
  const dq_chunk *k = chunk_with(p, "six (6) months' written notice");
  if (k) {
    CHECK_EQ_INT(k->page_start, 4);
    CHECK_EQ_INT(k->page_end, 4);
    CHECK_EQ_STR(k->section, "7 BREAK CLAUSE");
  }
  /* "5. TENANT'S COVENANTS" opens page 3 right after the "Page 2 of 5"
   * footer of page 2: still a heading, and the start of a chunk. */
  k = chunk_with(p, "5. TENANT'S COVENANTS");
  if (k) {
    CHECK(starts_with(k->text, "5. TENANT'S COVENANTS"));
    CHECK_EQ_STR(k->section, "5 TENANT'S COVENANTS");
    CHECK_EQ_INT(k->page_start, 3);
    CHECK_EQ_INT(k->line_start, 1);
  }
  k = chunk_with(p, "5.2 Decoration");
  if (k)
    CHECK(starts_with(k->section, "5 TENANT'S COVENANTS"));
  CHECK(find_sym(p, "Break Notice", "term") != NULL);
  CHECK(find_sym(p, "Schedule 4", "section") != NULL);
  if (p && p->n_chunks)
    CHECK_EQ_INT(p->chunks[p->n_chunks - 1].page_end, 5);
  dq_doc_parts_free(p);
  dq_text_free(t);
}

/* The DOCX sample and LibreOffice's PDF of it (fixtures/README.md): the
 * same clause and term symbols, and the DOCX's chunk sections in the PDF's
 * in order (the PDF has more chunks: they also end at its pages). */
static void test_docx_pdf_alike(void) {
  dq_text *td = read_sample("software_licence_agreement.docx");
  dq_text *tp = NULL;
  dq_error err = {0};
  CHECK_OK(dq_read(DQ_SOURCE_DIR "/tests/ingest_chunk/fixtures/"
                                 "software_licence_agreement.pdf",
                   DQ_DOC_UNKNOWN, NULL, &tp, NULL, &err),
           dq_error_msg(&err));
  dq_doc_parts *pd = chunk_sample(td, "sla.docx", 0);
  dq_doc_parts *pp = chunk_sample(tp, "sla.pdf", 0);
  if (pd && pp) {
    CHECK_EQ_INT(pp->n_symbols, pd->n_symbols);
    for (size_t i = 0; i < pd->n_symbols; i++)
      CHECK_MSG(find_sym(pp, pd->symbols[i].name, pd->symbols[i].kind),
                "the PDF lacks %s %s", pd->symbols[i].kind,
                pd->symbols[i].name);
    size_t j = 0;
    for (size_t i = 0; i < pd->n_chunks; i++) {
      while (j < pp->n_chunks &&
             strcmp(pp->chunks[j].section, pd->chunks[i].section) != 0)
        j++;
      CHECK_MSG(j < pp->n_chunks, "the PDF has no chunk of section \"%s\"",
                pd->chunks[i].section);
    }
    CHECK(pd->n_symbols > 40); /* clauses and terms were found at all */
  }
  dq_doc_parts_free(pd);
  dq_doc_parts_free(pp);
  dq_text_free(td);
  dq_text_free(tp);
}

int main(void) {
  test_docx_pdf_alike();
  test_txt();
  test_md();
  test_html();
  test_docx();
  test_pdf();
  return TEST_EXIT();
}
