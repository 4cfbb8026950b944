/*
 * test_chunk_table.c - a table's columns in the sections of its chunks
 * that do not hold its header row: a workbook's sheets (headings "Sheet:
 * NAME", rows as " | " lines, a title row above the header), a sheet of
 * numbers only (no header), a header too long for a section (cut after a
 * cell), .csv and .tsv files (the first line) and a .txt file with the
 * same lines (no columns); and which stored chunker versions are current
 * (10 reads DOCX and ODT again, 9 the tables)
 * for which files. Sections worked out by hand from the rows.
 */
#include "chunk_test.h"

#include <stdio.h>

/* A text of `rows` lines "Acme N | 20NN | NNNN" after `head`. */
static char *rows_after(const char *head, int rows, const char *sep) {
  size_t cap = strlen(head) + (size_t)rows * 64 + 1;
  char *s = malloc(cap);
  size_t n = (size_t)snprintf(s, cap, "%s", head);
  for (int i = 0; i < rows; i++)
    n += (size_t)snprintf(s + n, cap - n, "Acme %d%s%d%s%d\n", i, sep,
                          2020 + i % 5, sep, 1000 + i);
  return s;
}

/* The section of the chunk holding line `line`. */
static const char *section_at(const dq_doc_parts *p, uint32_t line) {
  for (size_t i = 0; i < p->n_chunks; i++)
    if (p->chunks[i].line_start <= line && line <= p->chunks[i].line_end)
      return p->chunks[i].section;
  return "(no chunk)";
}

static void add_heading(dq_text *t, const char *title) {
  const char *at = strstr(t->text, title);
  t->headings = realloc(t->headings, (t->n_headings + 1) * sizeof *t->headings);
  t->headings[t->n_headings++] =
      (dq_heading){(size_t)(at - t->text), 1, strdup(title)};
}

static void test_sheets(void) {
  /* sheet 1: a title row, the header on line 3, then 200 rows; sheet 2:
   * numbers only */
  char *a = rows_after("Sheet: Revenue\n"
                       "Quarterly revenue report\n"
                       "Customer | Year | Revenue\n",
                       200, " | ");
  size_t n = strlen(a);
  char *s = malloc(n + 4096);
  memcpy(s, a, n + 1);
  strcat(s, "Sheet: Numbers\n");
  for (int i = 0; i < 200; i++)
    snprintf(s + strlen(s), 64, "%d | %d | %d\n", i, i * 2, i * 3);
  dq_text *t = text_of(s, DQ_DOC_XLSX, NULL);
  add_heading(t, "Sheet: Revenue");
  add_heading(t, "Sheet: Numbers");
  dq_doc_parts *p = chunk_of(t, "book.xlsx", 128, 0);
  CHECK(p->n_chunks >= 6);
  /* the first chunk holds the header: no columns */
  CHECK_EQ_STR(section_at(p, 1), "Sheet: Revenue");
  CHECK_EQ_STR(section_at(p, 3), "Sheet: Revenue");
  /* a chunk far below it names them */
  CHECK_EQ_STR(section_at(p, 150),
               "Sheet: Revenue > columns: Customer | Year | Revenue");
  CHECK_EQ_STR(section_at(p, 203),
               "Sheet: Revenue > columns: Customer | Year | Revenue");
  /* numbers only: no header to name */
  CHECK_EQ_STR(section_at(p, 204), "Sheet: Numbers");
  CHECK_EQ_STR(section_at(p, 400), "Sheet: Numbers");
  check_invariants(t, p, 128);
  dq_doc_parts_free(p);
  dq_text_free(t);
  free(a);
  free(s);

  /* a header of 40 cells of 11 bytes: cut after a cell, "..." after */
  char head[1024] = "Sheet: Wide\n";
  for (int i = 0; i < 40; i++)
    snprintf(head + strlen(head), 32, "%sColumn %03d", i ? " | " : "", i);
  strcat(head, "\n");
  s = rows_after(head, 300, " | ");
  t = text_of(s, DQ_DOC_XLSX, NULL);
  add_heading(t, "Sheet: Wide");
  p = chunk_of(t, "wide.xlsx", 128, 0);
  const char *sec = section_at(p, 250);
  const char *want = "Sheet: Wide > columns: Column 000 | Column 001 | ";
  CHECK_MSG(!strncmp(sec, want, strlen(want)), "section \"%s\"", sec);
  size_t sl = strlen(sec);
  CHECK_MSG(sl > 5 && !strcmp(sec + sl - 4, " ..."), "section \"%s\"", sec);
  /* the cut falls after a whole cell within the limit (240 bytes) */
  const char *cols = strstr(sec, "columns: ") + 9;
  size_t cl = (size_t)(sec + sl - 4 - cols);
  CHECK_MSG(cl <= 240 && cl > 200 && !strncmp(cols + cl - 10, "Column ", 7),
            "columns \"%.*s\" (%zu bytes)", (int)cl, cols, cl);
  dq_doc_parts_free(p);
  dq_text_free(t);
  free(s);
}

static void test_csv(void) {
  char *s = rows_after("Customer,Year,Revenue\n", 300, ",");
  dq_text *t = text_of(s, DQ_DOC_TEXT, NULL);
  dq_doc_parts *p = chunk_of(t, "data/Sales.CSV", 128, 0);
  CHECK(p->n_chunks >= 3);
  CHECK_EQ_STR(section_at(p, 1), "");
  CHECK_EQ_STR(section_at(p, 250), "columns: Customer,Year,Revenue");
  check_invariants(t, p, 128);
  dq_doc_parts_free(p);
  /* the same lines in a .txt file are not a table */
  p = chunk_of(t, "notes.txt", 128, 0);
  CHECK_EQ_STR(section_at(p, 250), "");
  dq_doc_parts_free(p);
  dq_text_free(t);
  free(s);

  s = rows_after("Customer\tYear\tRevenue\r\n", 300, "\t");
  t = text_of(s, DQ_DOC_TEXT, NULL);
  p = chunk_of(t, "sales.tsv", 128, 0);
  CHECK_EQ_STR(section_at(p, 250), "columns: Customer\tYear\tRevenue");
  dq_doc_parts_free(p);
  dq_text_free(t);
  free(s);

  /* a CSV whose first line is data (numbers only) has no header */
  s = rows_after("1,2,3\n", 300, ",");
  t = text_of(s, DQ_DOC_TEXT, NULL);
  p = chunk_of(t, "n.csv", 128, 0);
  CHECK_EQ_STR(section_at(p, 250), "");
  dq_doc_parts_free(p);
  dq_text_free(t);
  free(s);
}

static void test_versions(void) {
  CHECK(dq_chunk_version_current(DQ_DOC_XLSX, "b.xlsx", DQ_CHUNK_VERSION));
  CHECK(!dq_chunk_version_current(DQ_DOC_XLSX, "b.xlsx", 8));
  CHECK(!dq_chunk_version_current(DQ_DOC_TEXT, "a.csv", 8));
  CHECK(!dq_chunk_version_current(DQ_DOC_TEXT, "a.TSV", 7));
  CHECK(dq_chunk_version_current(DQ_DOC_TEXT, "a.txt", 8));
  CHECK(dq_chunk_version_current(DQ_DOC_TEXT, NULL, 8));
  CHECK(dq_chunk_version_current(DQ_DOC_PDF, "a.pdf", 7));
  CHECK(!dq_chunk_version_current(DQ_DOC_EMAIL, "m.mbox", 7));
  CHECK(dq_chunk_version_current(DQ_DOC_EMAIL, "m.mbox", 8));
  CHECK(!dq_chunk_version_current(DQ_DOC_PDF, "a.pdf", 6));
  /* 10: DOCX and ODT read again (their headers and footers), XLSX and
   * ODS (their comments), the rest stored at 9 current */
  CHECK(!dq_chunk_version_current(DQ_DOC_DOCX, "a.docx", 9));
  CHECK(!dq_chunk_version_current(DQ_DOC_ODT, "a.odt", 9));
  CHECK(!dq_chunk_version_current(DQ_DOC_DOCX, "a.docx", 8));
  CHECK(dq_chunk_version_current(DQ_DOC_DOCX, "a.docx", 10));
  CHECK(!dq_chunk_version_current(DQ_DOC_XLSX, "b.xlsx", 9));
  CHECK(!dq_chunk_version_current(DQ_DOC_ODS, "b.ods", 9));
  CHECK(dq_chunk_version_current(DQ_DOC_XLS, "b.xls", 9));
  CHECK(dq_chunk_version_current(DQ_DOC_TEXT, "a.csv", 9));
  CHECK(dq_chunk_version_current(DQ_DOC_PDF, "a.pdf", 9));
  CHECK(dq_chunk_version_current(DQ_DOC_EMAIL, "m.mbox", 9));
  CHECK(!dq_chunk_version_current(DQ_DOC_XLSX, "b.xlsx", 8));
}

int main(void) {
  test_sheets();
  test_csv();
  test_versions();
  return TEST_EXIT();
}
