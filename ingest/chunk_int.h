/*
 * chunk_int.h - internals shared by the chunkers (chunk_*.c), the code symbol
 * extractor (sym_code.c) and the comment/string blanking lexer (lex_code.c).
 * Not part of the public interface: ingest.h holds dq_chunk_document.
 *
 * Every chunker works the same way: it walks the text, records symbols and
 * references directly into the result, and adds "cuts" - offsets at line
 * starts where a chunk may begin, each with the section path that holds from
 * there on. ck_pack then cuts chunks greedily within the byte budget: it
 * always starts a new chunk at a hard cut (a new function, an Article, a
 * heading), packs soft cuts (clauses, paragraphs, methods) while they fit, and
 * splits a block that alone exceeds the budget at line starts, then at
 * whitespace, then at a UTF-8 boundary.
 */
#ifndef DQ_CHUNK_INT_H
#define DQ_CHUNK_INT_H

#include "ingest.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* A place where a chunk may start. section == NULL inherits the section of
 * the previous cut. Owned by the context. */
typedef struct ck_cut {
  size_t offset; /* at a line start (or 0) */
  size_t seq;    /* insertion order: the later cut at one offset wins */
  int hard;      /* a chunk always starts here */
  char *section;
} ck_cut;

typedef struct ck_ctx {
  const dq_text *t;
  const char *path;    /* for messages, never NULL ("<text>") */
  size_t budget_bytes; /* whole chunk, overlap included */
  size_t overlap_bytes;
  const dq_logger *log;
  dq_doc_parts *p;
  size_t cap_chunks, cap_symbols, cap_refs;
  size_t *line_starts; /* offsets of each line start of t->text */
  size_t n_lines;
  ck_cut *cuts;
  size_t n_cuts, cap_cuts;
  dq_error *err;
  /* Last mark / line index found by position(): symbols and references come
   * mostly in increasing offset order, so the next lookup starts there. */
  size_t hint_mark, hint_line;
  /* ck_md_heading_ok: 0 not yet known, 1 a plain text whose '#' lines are
   * mostly set apart (headings), -1 mostly not (comments) */
  int text_heads;
  int prose; /* not the code chunker: ck_pack may join a title to what
                follows */
} ck_ctx;

/* Languages the code chunker understands. */
typedef enum {
  CK_LANG_NONE = 0,
  CK_LANG_C,
  CK_LANG_CPP,
  CK_LANG_PYTHON,
  CK_LANG_JS,
  CK_LANG_TS,
  CK_LANG_GO,
  CK_LANG_RUST,
  CK_LANG_JAVA,
  CK_LANG_CSHARP,
  CK_LANG_KOTLIN,
  CK_LANG_PHP,
  CK_LANG_SWIFT,
  CK_LANG_RUBY
} ck_lang;

ck_lang ck_lang_from_name(const char *name);

/* Records a symbol / reference at byte `offset` of the text. name is copied
 * (name_len bytes); scope/caller NULL means "". */
dq_status ck_add_symbol(ck_ctx *c, const char *name, size_t name_len,
                        const char *kind, size_t offset, const char *scope);
dq_status ck_add_ref(ck_ctx *c, const char *name, size_t name_len,
                     const char *kind, size_t offset, const char *caller);
/* Adds a cut; section (may be NULL = inherit) is copied. */
dq_status ck_add_cut(ck_ctx *c, size_t offset, int hard, const char *section);
/* Line start at or before offset / the start of the line after offset. */
size_t ck_line_start(const ck_ctx *c, size_t offset);
/* Index in c->line_starts of the line holding offset. */
size_t ck_line_index(const ck_ctx *c, size_t offset);
size_t ck_next_line(const ck_ctx *c, size_t offset);
/* Whether s[a..e) (a line, its indent skipped) opens or closes a Markdown
 * code fence (``` or ~~~). */
int ck_fence_line(const char *s, size_t a, size_t e);
/* Whether the '#' line at ls of c->t may be a Markdown heading: any in
 * Markdown, none in kinds other than plain text (a PDF's, a DOCX's); in
 * plain text (a README, a script, a config file) only one with blank
 * lines or the text's ends on both sides, in a text where at least half
 * the '#' lines are so, and none in a script ("#!" first).
 * There '#' opens comments ("# set the PATH" above the line it explains)
 * and comments are no sections. */
int ck_md_heading_ok(ck_ctx *c, size_t ls);
/* Cuts chunks from the cuts recorded so far. */
dq_status ck_pack(ck_ctx *c);

/* Regex helpers: compile with JIT where available, for texts of at least
 * CK_JIT_MIN_BYTES (measured on the SQLite tree: JIT-compiling a dozen
 * patterns per small file costs more than it saves). */
#define CK_JIT_MIN_BYTES 16384
pcre2_code *ck_re(ck_ctx *c, const char *pattern, uint32_t flags);
/* Next match at or after `from` in subj[0..n); returns 1 and fills ov (2 per
 * group, PCRE2_UNSET for unset groups), 0 when none or when PCRE2 hits a
 * resource limit on pathological input (that scan just ends: extraction is
 * best effort, never a reason to reject a document). */
int ck_re_next(pcre2_code *re, pcre2_match_data *md, const char *subj, size_t n,
               size_t from, PCRE2_SIZE **ov);

/* The chunkers: each adds symbols, refs and cuts; the caller then packs. */
dq_status ck_chunk_generic(ck_ctx *c);
dq_status ck_chunk_code(ck_ctx *c, ck_lang lang);
/* Contract analysis; *score_out (may be NULL) receives the contract score
 * (>= CK_CONTRACT_MIN_SCORE means "this is a contract"). When emit is 0 only
 * the score is computed. */
#define CK_CONTRACT_MIN_SCORE 1
dq_status ck_chunk_contract(ck_ctx *c, int emit, int *score_out);

/* A definition with a body, found by sym_code.c: a function, class, struct,
 * impl ... Brace languages: body is open ('{') .. close ('}'); Python: open is
 * the end of the header line, close the last byte of the indented body. */
typedef struct ck_scope {
  size_t head;    /* first byte of the definition (modifiers included) */
  size_t sig_end; /* end of the signature (the '{' or the ':') */
  size_t open, close;
  size_t name_off, name_len;
  size_t recv_off, recv_len; /* Go method receiver type: the symbol's scope */
  int parent;       /* index of the enclosing ck_scope, -1 at top level */
  int is_func;      /* function or method: callers are these */
  int typedef_body; /* C: "typedef struct {...} Name;" */
  const char *kind;
} ck_scope;

typedef struct ck_scopes {
  ck_scope *v; /* sorted by open */
  size_t n, cap;
} ck_scopes;

/* sym_code.c: finds definitions, references and scopes of a code text. Adds
 * symbols and refs to c->p; fills *out (caller frees out->v). */
dq_status ck_code_symbols(ck_ctx *c, ck_lang lang, ck_scopes *out);

/* lex_code.c: a copy of src[0..n) in which comments and the contents of
 * string/char literals are spaces (newlines and quote characters kept), so
 * offsets, lines and columns are unchanged. For C/C++, *directives (when not
 * NULL) receives a second copy in which preprocessor directives (with their
 * continuation lines) are blanked as well. Both NUL-terminated, caller frees.
 * NULL on allocation failure. */
char *ck_lex_blank(const char *src, size_t n, ck_lang lang, char **directives);

#endif /* DQ_CHUNK_INT_H */
