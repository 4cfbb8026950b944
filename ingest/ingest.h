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
  DQ_DOC_PDF = 6,    /* marks carry page numbers */
  DQ_DOC_CODE = 7,   /* dq_text.lang says which language */
  DQ_DOC_ODT = 8,    /* OpenDocument text; marks as DOCX's */
  DQ_DOC_EPUB = 9,   /* an e-book: its spine's XHTML; line = extracted line */
  DQ_DOC_EMAIL = 10, /* a message (.eml) or a mailbox (.mbox); as EPUB's */
  DQ_DOC_RTF = 11,   /* Rich Text Format; line = extracted line */
  DQ_DOC_IMAGE = 12, /* PNG, JPEG, TIFF, ... read by OCR; page + line */
  DQ_DOC_PPTX = 13,  /* a PowerPoint deck; page = slide, line within it */
  DQ_DOC_XLSX = 14,  /* an Excel workbook; page = sheet, line = row */
  DQ_DOC_DOC = 15,   /* a Word 97-2003 document; marks as DOCX's */
  DQ_DOC_ODS = 16,   /* an OpenDocument spreadsheet; as XLSX's */
  DQ_DOC_XLS = 17,   /* an Excel 97-2003 workbook; as XLSX's */
  DQ_DOC_ODP = 18    /* an OpenDocument presentation; as PPTX's */
  /* a new kind takes the next number and raises DQ_DOC_KINDS */
} dq_doc_kind;
#define DQ_DOC_KINDS 19 /* kinds 0 .. DQ_DOC_ODP, for tables by kind */

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
  uint32_t page;      /* paged text (PDF): line's page, lines counting
                         within it; 0 otherwise */
  char *scope;        /* enclosing scope ("" at top level) */
} dq_symbol;

/* A reference: kind is "call", "use", "include" (imports too) or "xref"
 * (a contract cross-reference such as "Section 5.2"). */
typedef struct dq_ref {
  char *name;
  char kind[8];
  uint32_t line, col;
  uint32_t page; /* as dq_symbol's */
  char *caller;  /* enclosing function/section ("" at top level) */
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
/* Tesseract's version, or "not found" (ocr.c: opened on first use). */
const char *dq_ocr_version(void);
/* Whether Tesseract can tell a page's orientation (its osd.traineddata
 * loads), so that OCR turns sideways pages upright. */
int dq_ocr_can_orient(void);
/* Whether lang is a Tesseract language list: 1-63 letters, digits, '_'
 * and '+' ("eng", "deu+eng", "chi_sim"), never a path. */
int dq_ocr_lang_ok(const char *lang);

/* ==== Walking and reading (walk.c, read_*.c) ============================= */

/*
 * Limits. Each is the default of an option below (0 in the option means "use
 * the default"); they keep a hostile or huge file from exhausting memory.
 */
#define DQ_READ_MAX_FILE_BYTES ((uint64_t)64 << 20) /* text, code, markup */
#define DQ_READ_MAX_DOC_BYTES ((uint64_t)512 << 20) /* PDF, office, mail... */
#define DQ_DOCX_MAX_PART_BYTES ((uint64_t)64 << 20)  /* one unzipped DOCX part */
#define DQ_DOCX_MAX_RATIO 200u /* unzipped:zipped bytes, parts over 1 MiB */
#define DQ_XML_MAX_DEPTH 256u  /* element nesting in HTML/XML/DOCX/ODT */
#define DQ_EPUB_MAX_ITEMS 20000u /* manifest items of an EPUB */
#define DQ_WALK_MAX_DEPTH 64u  /* directory nesting below the root */
#define DQ_SNIFF_BYTES 8192u   /* bytes inspected to tell text from binary */

/* The size limit of a file of this kind: `set` when non-zero (an option),
 * else DQ_READ_MAX_DOC_BYTES for kinds whose bytes are mostly pictures,
 * fonts and attachments (PDF, DOCX, ODT, EPUB, RTF, e-mail, images: a
 * scanned contract or an exported mailbox runs to hundreds of MB) and
 * DQ_READ_MAX_FILE_BYTES for text, code and markup (a larger one is a log
 * or a data dump more often than a document); DQ_DOC_UNKNOWN gets the
 * larger. A file is read whole into memory, so the limit bounds memory. */
uint64_t dq_max_file_bytes(uint64_t set, dq_doc_kind kind);

/* File kind from its name and first bytes (`head`, may be NULL when n_head is
 * 0). Known extensions decide (.c/.h .cc/.cpp/.hpp ... -> DQ_DOC_CODE with
 * *lang "c", "cpp", "python", "javascript", "typescript", "go", "rust",
 * "java"; .md/.markdown; .html/.htm/.xhtml; .xml; .docx; .odt; .epub; .pdf;
 * .eml/.mbox; .rtf; .txt; .png/.jpg/.jpeg/.tif/.tiff when the bytes are
 * one, else DQ_DOC_UNKNOWN); other names are recognised by content
 * ("%PDF-", "{\\rtf", PNG's, JPEG's and TIFF's signatures, an EPUB's zip with
 * its "mimetype" first, a mailbox's "From " line or a message's first header
 * being one a mail server writes (Return-Path, Received, Delivered-To,
 * Message-ID, MIME-Version: a maildir's files),
 * "<?xml", "<!DOCTYPE html", a "#!" line naming python/node) and otherwise are
 * DQ_DOC_TEXT when the bytes look like text, DQ_DOC_UNKNOWN (binary) when they
 * do not: NUL bytes, or more than 1% control bytes, or more than 30% bytes that
 * are not valid UTF-8 (a UTF-8/UTF-16 BOM always means text). *lang (may be
 * NULL) gets a static string, "" when not code. */
dq_doc_kind dq_detect_kind(const char *name, const void *head, size_t n_head,
                           const char **lang);

/* Reading one file into a dq_text. */
typedef struct dq_read_opts {
  uint64_t max_file_bytes;  /* 0 = by kind (dq_max_file_bytes); a larger
                               file -> DQ_ERR_LIMIT */
  uint64_t max_part_bytes;  /* 0 = DQ_DOCX_MAX_PART_BYTES */
  uint32_t max_zip_ratio;   /* 0 = DQ_DOCX_MAX_RATIO */
  const dq_logger *log;     /* may be NULL (silent) */
  /* PDF pages without a text layer (scans): rendered and read by OCR
   * (Tesseract, when installed) unless no_ocr; ocr_lang its languages
   * ("eng", "deu+eng"; NULL = "eng"); n_threads pages read at once
   * (0 = 1). */
  int no_ocr;
  const char *ocr_lang;
  int n_threads;
  /* may be NULL: called as OCR reads a file's pages (stage "ocr", pages
   * done and in all, 0 when not known: a TIFF's), and as a mailbox over
   * 16 MiB is read (stage "read", MiB done and in all); non-zero stops
   * the read with DQ_ERR_INTERRUPTED */
  dq_progress_fn progress;
  void *progress_user;
} dq_read_opts;

/* What a read found besides the text. */
typedef struct dq_read_info {
  const char *encoding; /* "utf-8", "utf-16le", "utf-16be", "latin-1" (static);
                           for HTML/XML/DOCX/PDF the library's output, "utf-8" */
  size_t n_replaced;    /* invalid sequences (and NULs) replaced by U+FFFD */
  uint64_t n_bytes;     /* file size read */
  uint8_t sha256[32];   /* of exactly the bytes read (dq_read only) */
  uint32_t n_ocr_pages; /* PDF pages whose text OCR read */
  uint32_t n_pages_no_text; /* PDF pages with no text layer left unread:
                               OCR off, Tesseract or its language missing */
  char ocr_why[300];        /* why, for the first such page ("" if none) */
} dq_read_info;

/*
 * Reads `path` and extracts its text as `kind` (DQ_DOC_UNKNOWN: detect with
 * dq_detect_kind). On success *out is a new dq_text the caller frees with
 * dq_text_free; `info` (may be NULL) is filled. On failure *out is NULL and
 * err names the file and what is wrong: not a regular file, over the size
 * limit, a DOCX, ODT or EPUB that is not a zip or exceeds the zip limits,
 * malformed XML (with its line), an encrypted or broken PDF, an EPUB whose
 * container or package names a part the zip lacks.
 *
 * Source positions in the marks: text, Markdown, code, HTML and XML map to
 * the 1-based line in the original file (page 0). DOCX and ODT have no lines:
 * `line` is the 1-based paragraph number in document order (paragraphs in
 * tables count too; page 0). PDF: `page` is the 1-based page and `line` the
 * 1-based line within that page as poppler lays it out. EPUB: the content
 * documents of its spine, in reading order, read as HTML one after the
 * other; `line` is the 1-based line of the extracted text (a paragraph,
 * as in DOCX; page 0), since each part has lines of its own. E-mail: each
 * message's Subject, From, To, Cc and Date lines (the subject a heading),
 * then its body's text, an HTML body read as HTML, attachments named;
 * `line` as EPUB's. PDF pages without a text layer and image files: as
 * Tesseract reads them (no_ocr: a PDF's such pages are empty, counted in
 * info; an image is refused as unsupported); `page` the 1-based page (a
 * TIFF's frame), `line` Tesseract's line within it. Text
 * normalisation: CRLF becomes LF; invalid UTF-8 and NUL become U+FFFD.
 * Headings: Markdown
 * "#".."######" and setext (offset = start of the heading line, markup
 * included); HTML h1..h6, DOCX Title/Heading1..9 and ODT text:h (offset = start
 * of the heading text). HTML/XML block elements, DOCX and ODT paragraphs and
 * table rows (cells joined by " | ") each take a line of their own.
 */
dq_status dq_read(const char *path, dq_doc_kind kind, const dq_read_opts *o,
                  dq_text **out, dq_read_info *info, dq_error *err);

/* The same from memory: `name` is used for messages and kind detection only.
 * info->sha256 is left zero.
 * Threads: reads of different inputs may run concurrently once one read (any
 * kind) has returned, because libxml2 initialises itself on first use. */
dq_status dq_read_buffer(const char *name, const void *data, size_t n_bytes,
                         dq_doc_kind kind, const dq_read_opts *o,
                         dq_text **out, dq_read_info *info, dq_error *err);

/* SHA-256 (FIPS 180-4). dq_sha256_file reads the file in blocks (any size).
 * `hex` in dq_sha256_hex must hold 65 bytes (64 lowercase digits + NUL). */
void dq_sha256(const void *data, size_t n_bytes, uint8_t out[32]);
dq_status dq_sha256_file(const char *path, uint8_t out[32], dq_error *err);
void dq_sha256_hex(const uint8_t digest[32], char hex[65]);

/*
 * Walking a folder. Files come in a deterministic order: the entries of each
 * directory sorted bytewise by name, depth first.
 *
 * Skipped: names in the skip-dir list (default: dq_walk_default_skip_dirs);
 * paths matched by .gitignore or .docqaignore files (gitignore semantics:
 * "#" comments, "!" negation, trailing "/" for directories only, a "/" at the
 * start or middle anchors to the ignore file's folder, "*", "?", "[a-z]",
 * "**"; a file in a subfolder applies to that subtree and its rules win over
 * its parents'; the last matching rule wins; a file inside an ignored
 * directory cannot be re-included). Those are skipped silently (reported at
 * DQ_LOG_DEBUG). Reported as skipped, with a reason: hidden files and
 * folders (a name starting with "."; unless `hidden`; the root itself is
 * always walked, so a path named on purpose is taken), binary files, empty
 * files, files over the size limit (too_large), unreadable files, files
 * that vanish during the walk, symlinks that point outside the root or
 * dangle, symlinked directories that lead back to a directory already
 * walked (loops), fifos, sockets and devices.
 */
typedef struct dq_walk_entry {
  const char *rel_path; /* relative to the root, "/"-separated */
  const char *path;     /* absolute path to open */
  uint64_t size;        /* bytes */
  int64_t mtime_ns;     /* modification time, ns since the epoch */
  dq_doc_kind kind;     /* DQ_DOC_UNKNOWN when skipped */
  const char *lang;     /* "" unless code */
  const char *skip_reason; /* NULL for a file to ingest, else why skipped */
  int too_large;           /* skipped for its size (dq_max_file_bytes) */
} dq_walk_entry;

/* Called once per file (kept or skipped). Strings are valid only during the
 * call. Return 0 to go on, non-zero to stop the walk (DQ_ERR_INTERRUPTED). */
typedef int (*dq_walk_fn)(void *user, const dq_walk_entry *e);

typedef struct dq_walk_opts {
  uint64_t max_file_bytes;        /* 0 = by kind (dq_max_file_bytes) */
  const char *const *skip_dirs;   /* NULL-terminated; NULL = the default list */
  const char *const *extra_skip_dirs; /* NULL-terminated, added; may be NULL */
  int no_symlinks;      /* 1: skip every symlink (reported); 0: follow those
                           whose target stays inside the root */
  int no_ignore_files;  /* 1: do not read .gitignore / .docqaignore */
  int hidden;           /* 1: walk hidden files and folders (names starting
                           with "."; not the skip-dir list) too */
  const char *base;     /* NULL, or a folder that holds the root: rel_path
                           is then relative to base, the ignore files of
                           base and of every folder between it and the root
                           apply (the root itself is taken, as named), and
                           symlinks may lead anywhere inside base */
  const dq_logger *log; /* may be NULL */
} dq_walk_opts;

/* NULL-terminated: .git .hg .svn node_modules vendor build dist target
 * __pycache__ .venv venv .tox .mypy_cache .pytest_cache .docqa */
extern const char *const dq_walk_default_skip_dirs[];

/* Walks `root` (a folder, or a single file reported with its base name as
 * rel_path). o may be NULL. Errors only for the root itself (missing, not
 * readable), out of memory, or a stop requested by on_file; problems with
 * individual files are reported through on_file and the walk goes on. */
dq_status dq_walk(const char *root, const dq_walk_opts *o, dq_walk_fn on_file,
                  void *user, dq_error *err);


/* ==== Chunking, symbols and references (chunk_*.c, sym_*.c) ============== */

/* Which chunker cuts a document. AUTO picks CODE for a supported code
 * language (dq_text.lang, else the path's extension), CONTRACT when the text
 * has contract structure (numbered clauses / Articles together with defined
 * terms or cross-references), GENERIC otherwise, and always for e-mail
 * (its sections are its messages and their attachments). */
typedef enum {
  DQ_CHUNK_AUTO = 0,
  DQ_CHUNK_GENERIC = 1,  /* paragraphs and headings */
  DQ_CHUNK_CONTRACT = 2, /* clauses, defined terms, section cross-refs */
  DQ_CHUNK_CODE = 3      /* functions/classes, symbols and references */
} dq_chunk_kind;

const char *dq_chunk_kind_name(dq_chunk_kind k); /* "generic", ... static */

#define DQ_CHUNK_MAX_TOKENS_DEFAULT 350
/* Token estimate used for every budget: ceil(bytes / 4). The engine's
 * tokenizer is not available to ingest; 4 bytes/token is close for English
 * prose and a slight over-estimate for code, so budgets err on the safe side. */
#define DQ_CHUNK_BYTES_PER_TOKEN 4

typedef struct dq_chunk_opts {
  uint32_t max_tokens;     /* 0 = DQ_CHUNK_MAX_TOKENS_DEFAULT; every chunk's
                              n_tokens <= max_tokens (overlap included) */
  uint32_t overlap_tokens; /* text repeated from the previous chunk (from a
                              line start, else a word start); clamped to
                              max_tokens / 2 */
  dq_chunk_kind force_kind; /* DQ_CHUNK_AUTO = detect */
  const dq_logger *log;     /* NULL = silent */
} dq_chunk_opts;

/* ceil(n_bytes / DQ_CHUNK_BYTES_PER_TOKEN). */
uint32_t dq_chunk_estimate_tokens(size_t n_bytes);

/* Code language for a path's extension ("c", "cpp", "python", "javascript",
 * "typescript", "go", "rust", "java") or NULL. Static string. */
const char *dq_chunk_lang_for_path(const char *path);

/* The chunker DQ_CHUNK_AUTO would use for `t` (path may be NULL). */
dq_chunk_kind dq_chunk_detect(const dq_text *t, const char *path);

/* Cuts `t` into chunks and extracts symbols and references.
 *   chunks: ordered by byte_start; each starts and ends on a UTF-8 boundary,
 *     carries its section path ("8 Termination > 8.2", a code signature such
 *     as "int main(int argc, char **argv)", a heading path) and a copy of its
 *     text; every non-whitespace byte lies in some chunk.
 *   symbols: code definitions (kind function, method, macro, struct, union,
 *     enum, typedef, class, interface, record, trait, impl, mod, type,
 *     namespace; scope "geo::Shape" / "Account.Inner", Go receiver type),
 *     declarations without a body (C/C++ prototypes at file, namespace or
 *     class scope: kind "prototype"; Rust trait, Java/TS interface and
 *     abstract, Go interface methods: kind "method" scoped by the
 *     trait/interface - never "call" refs),
 *     contract defined terms (kind "term") and section numbers ("section",
 *     name "8.2", "8.2(a)", "Article IV", "Schedule 2").
 *   Paged text (PDF): a chunk never spans two pages.
 *   refs: code "call" / "use" / "include" (imports, JS require("mod"));
 *     contract "xref" (Section 5.2 ->
 *     "5.2") and "use" of defined terms. caller = enclosing function (code)
 *     or innermost section name (contracts), "" at top level.
 *   line: source line via dq_text_locate; col: 1-based byte column in the
 *     line of dq_text.text that holds the name.
 * `path` (may be NULL) names the document in messages and gives the language
 * when t->lang is empty; `o` may be NULL (defaults). *out is set on success
 * and freed by the caller with dq_doc_parts_free. An empty text gives zero
 * chunks. Errors: DQ_ERR_ARG, DQ_ERR_NOMEM, DQ_ERR_INTERNAL (regex). */
dq_status dq_chunk_document(const dq_text *t, const char *path,
                            const dq_chunk_opts *o, dq_doc_parts **out,
                            dq_error *err);
/* The version of what dq_chunk_document (and the readers before it) make
 * of a document: raise it with any change that alters some document's
 * chunks, sections, symbols or refs, so that `docqa ingest` reads again
 * the documents an older version stored (the index keeps it per
 * document). 1: terms wrapped at a line break (chunk_contract.c); 2: the
 * page of a PDF's symbols and refs; 3: a licence's lower-case terms (To
 * "convey" a work means) and "X" for ... means; 4: a PDF's running
 * headers and footers emptied (read_pdf.c), a table of contents' entries
 * and '#' lines outside Markdown no headings (chunk_contract.c), nor a
 * plain text's '#' comments (ck_md_heading_ok); a plain text's
 * reStructuredText titles are headings (read_text.c), and so are a PDF's
 * lines in a heading's font; a heading alone joins what follows
 * (ck_pack); 5: a contract PDF's font headings as sections (a manual's
 * "1 Introduction", its unnumbered "Concept Index" and function names),
 * a contents page's title a heading, a chunk's section that of its first
 * text; HTML's permalink marks (<a href="#x">¶</a>) dropped; ODT read; a
 * DOCX's list numbers from its paragraph styles, its footnotes and
 * endnotes, its text boxes once, not twice, its non-breaking hyphens
 * (read_docx.c); a contract's '#' headings without their closing '#'s, a
 * list numbered from 1 inside a clause no clauses, a clause's run-in title
 * its label ("2 Grant of Copyright License"); 6: an HTML table cell's
 * paragraphs and lists on its row's line (unless it lays the page out), HTML
 * notes read "rent[1]" and "[1] Due monthly.", an ol's lettered and roman
 * items "(a)" and "(iv)" (read_xml.c); e-mail read (read_mail.c: an .eml
 * was plain text before), and RTF (read_rtf.c: so was an .rtf); 7:
 * reviewers' comments in DOCX, ODT and RTF, "[comment, Name, date, on
 * "text"] ..." lines after their paragraphs (read_docx.c); a mailbox's
 * quotes of its own earlier messages folded (read_mail.c); scanned pages
 * lying sideways turned upright (ocr.c); 8: a mailbox's messages past
 * its 10,000th, which read_mail.c left out; 9: a table's columns in the
 * sections of its chunks that do not hold its header row (workbooks,
 * .csv and .tsv files); 10: a DOCX's and an ODT's page headers and
 * footers, "[header] ..." lines after the body (read_docx.c, read_odt.c),
 * and an XLSX's and an ODS's cell comments, "[comment, Name, on B3] ..."
 * lines after their rows (read_xlsx.c). A bump reads every document again
 * once, scans by OCR too, unless dq_chunk_version_current says a kind's
 * older stores are current: 8 changed e-mail alone, 9 tables alone, 10
 * DOCX, ODT, XLSX and ODS alone. */
#define DQ_CHUNK_VERSION 10

/* Whether a document of this kind at `path` (its name decides for .csv and
 * .tsv text; may be NULL) stored by chunker version `stored` is current:
 * DQ_CHUNK_VERSION, or an older version whose bump did not change this
 * kind's reading (chunk_core.c). */
int dq_chunk_version_current(dq_doc_kind kind, const char *path, int stored);

/* Whether path names a .csv or .tsv file (any case): a table whose every
 * line is a row (chunk_core.c; the chunker's columns, the quote's rows). */
int dq_csv_path(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* DQ_INGEST_H */
