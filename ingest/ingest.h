/*
 * ingest.h - the public interface of the ingest layer: walk a folder, read
 * each file into UTF-8 text with a map back to source lines/pages, cut it into
 * chunks with section paths, and extract symbols and references.
 *
 * The ingest layer knows nothing about storage or models: it produces plain
 * records (dq_text, dq_chunk, dq_symbol, dq_ref) that pipeline/ hands to the
 * index layer and the engine. It never includes index or engine headers.
 *
 * Ownership: every struct returned through an out-parameter is owned by the
 * caller and released with the matching *_free function, which accepts NULL.
 */
#ifndef DQ_INGEST_H
#define DQ_INGEST_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a file was read as. Stored in documents.kind by name (dq_doc_kind_name).
 * Append only. */
typedef enum {
  DQ_DOC_UNKNOWN = 0,
  DQ_DOC_TEXT = 1,     /* plain text (UTF-8, Latin-1 or UTF-16 converted) */
  DQ_DOC_MARKDOWN = 2, /* headings become sections */
  DQ_DOC_HTML = 3,
  DQ_DOC_XML = 4,
  DQ_DOC_DOCX = 5,
  DQ_DOC_PDF = 6, /* marks carry page numbers */
  DQ_DOC_CODE = 7 /* dq_text.lang says which language */
} dq_doc_kind;

const char *dq_doc_kind_name(dq_doc_kind k); /* "text", "markdown", ... */

/* A position in the source file at which extracted text resumes. Marks are
 * sorted by `offset` (strictly increasing); the text from marks[i].offset up to
 * marks[i+1].offset comes from source line `line` (1-based) and page `page`
 * (1-based; 0 for unpaged formats). */
typedef struct dq_srcmark {
  size_t offset;
  uint32_t line;
  uint32_t page;
} dq_srcmark;

/* A structural heading found by a reader (Markdown #, DOCX Heading N, HTML hN).
 * Chunkers turn these into section paths. */
typedef struct dq_heading {
  size_t offset; /* byte offset of the heading text in dq_text.text */
  int level;     /* 1 = top */
  char *title;   /* UTF-8, NUL-terminated, owned by the dq_text */
} dq_heading;

/* The extracted text of one file. Invariant: text is valid UTF-8, NUL
 * terminated at text[n_bytes]; n_marks >= 1 whenever n_bytes > 0 and
 * marks[0].offset == 0. */
typedef struct dq_text {
  char *text;
  size_t n_bytes;
  dq_doc_kind kind;
  char lang[16]; /* code language ("c", "python", "go", ...) or "" */
  dq_srcmark *marks;
  size_t n_marks;
  dq_heading *headings;
  size_t n_headings;
  uint32_t n_pages; /* PDFs: number of pages; 0 otherwise */
} dq_text;

void dq_text_free(dq_text *t);

/* Source line and page of byte `offset` in t->text (binary search over marks).
 * For unpaged text *page is 0. */
void dq_text_locate(const dq_text *t, size_t offset, uint32_t *line,
                    uint32_t *page);

/* One chunk of a document, cut by a chunker. Invariant: byte_start <
 * byte_end <= text->n_bytes; line_start <= line_end. */
typedef struct dq_chunk {
  size_t byte_start, byte_end;   /* range in dq_text.text */
  uint32_t line_start, line_end; /* source lines, 1-based, inclusive */
  uint32_t page_start, page_end; /* 0 when the format has no pages */
  char *section;                 /* "8 Termination > 8.2", "" when none */
  char *text;                    /* copy of the chunk's text, NUL-terminated */
  uint32_t n_tokens;             /* estimate used for the token budget */
} dq_chunk;

/* A definition: function, macro, struct, class, method, defined term,
 * contract section number ... `kind` is a short lowercase word. */
typedef struct dq_symbol {
  char *name;
  char kind[16];
  uint32_t line, col; /* 1-based */
  char *scope;        /* enclosing scope ("" at top level) */
} dq_symbol;

/* A reference: kind is "call", "use", "include" (imports too) or "xref"
 * (a contract cross-reference such as "Section 5.2"). */
typedef struct dq_ref {
  char *name;
  char kind[8];
  uint32_t line, col;
  char *caller; /* enclosing function/section ("" at top level) */
} dq_ref;

/* The result of chunking one document. */
typedef struct dq_doc_parts {
  dq_chunk *chunks;
  size_t n_chunks;
  dq_symbol *symbols;
  size_t n_symbols;
  dq_ref *refs;
  size_t n_refs;
} dq_doc_parts;

void dq_doc_parts_free(dq_doc_parts *p);

/* Versions of the libraries the readers use, for `docqa version`. Static
 * strings (the PCRE2 one is filled on first call into a caller-free buffer
 * owned by the library, valid for the process lifetime). */
const char *dq_ingest_libxml2_version(void);
void dq_ingest_pcre2_version(char *buf, size_t buf_bytes);
const char *dq_ingest_poppler_version(void);
const char *dq_ingest_libzip_version(void);

/* ==== Walking and reading (walk.c, read_*.c) ============================= */

/* ==== Chunking, symbols and references (chunk_*.c, sym_*.c) ============== */

#ifdef __cplusplus
}
#endif
#endif /* DQ_INGEST_H */
