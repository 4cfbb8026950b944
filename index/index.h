/*
 * index.h - the public interface of the index layer: one index directory
 * holding a SQLite database (documents, chunks, FTS5, symbols, refs, chat
 * sessions, meta) and a FAISS vector file, with hybrid (BM25 + dense) search.
 *
 * The index layer stores and searches; it never reads source files, runs
 * models or includes ingest/engine headers. pipeline/ feeds it.
 *
 * On disk: DIR/docqa.db (SQLite, WAL mode) and DIR/vectors.faiss (FAISS,
 * written to a temporary file and renamed). The database is the source of
 * truth: every embedding is also stored in it as IEEE half floats, so the
 * vector file can always be rebuilt; a vector file that does not match the
 * database (dimension, count, set of ids) is rebuilt at open, never used.
 *
 * Threads: a dq_index handle is single-threaded. Concurrent readers (search,
 * ask) open their own handle; WAL lets them read while one writer ingests.
 * Strings returned inside result structs are owned by those structs and
 * freed by the matching *_free function.
 */
#ifndef DQ_INDEX_H
#define DQ_INDEX_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Versions of the storage libraries, for `docqa version`. Static strings. */
const char *dq_index_sqlite_version(void);
const char *dq_index_faiss_version(void);

/* Schema version this build writes; older indexes are migrated at open,
 * newer ones are refused with DQ_ERR_VERSION. */
#define DQ_INDEX_SCHEMA_VERSION 5
/* Below this many vectors the FAISS index is exact (Flat); at or above it an
 * IVF index is trained on the stored embeddings (see tests/bench/index). */
#define DQ_INDEX_IVF_THRESHOLD 20000

typedef struct dq_index dq_index;

typedef struct dq_index_opts {
  int create;    /* create DIR and an empty index when missing */
  int read_only; /* never write (readers; read-only media) */
  const dq_logger *logger; /* NULL = silent; must outlive the handle */
  /* The embedding model in use. When the index already records one, a
   * different id or dimension fails with DQ_ERR_MISMATCH; when it records
   * none (and the handle is writable) these are recorded. NULL/0 = don't
   * care (BM25-only use). */
  const char *embed_model;
  int embed_dim;
  size_t ivf_threshold; /* 0 = DQ_INDEX_IVF_THRESHOLD */
  int nprobe;           /* IVF lists probed per query; 0 = chosen from nlist */
  int nlist;            /* IVF lists when (re)training; 0 = chosen from n */
} dq_index_opts;

/* Opens (or with o->create, creates) the index in `dir`. On failure *out is
 * NULL and `err` names the file at fault: DQ_ERR_NOTFOUND (not an index),
 * DQ_ERR_CORRUPT (damaged/truncated database), DQ_ERR_VERSION (made by a
 * newer docqa), DQ_ERR_MISMATCH (embedding model), DQ_ERR_READONLY, DQ_ERR_IO.
 * A damaged vector file is not an error: it is rebuilt (logged at WARN). */
dq_status dq_index_open(const char *dir, const dq_index_opts *o,
                        dq_index **out, dq_error *err);
/* Saves the vector file when it changed (failures are logged), then frees.
 * Accepts NULL. */
void dq_index_close(dq_index *idx);
/* Message of the last failed call on this handle. Valid until the next call. */
const char *dq_index_errmsg(const dq_index *idx);
/* The recorded embedding model (NULL, 0 when none). Valid while idx is open
 * and until the next dq_index_set_embed_model. */
dq_status dq_index_embed_model(dq_index *idx, const char **model, int *dim);
/* Records the embedding model when none is recorded; DQ_ERR_MISMATCH when a
 * different one is. */
dq_status dq_index_set_embed_model(dq_index *idx, const char *model, int dim);

/* ---- documents -------------------------------------------------------- */

/* A document as stored. Paths are relative to `root`, the folder that was
 * ingested. In dq_index_doc_begin, id and n_chunks are ignored. */
typedef struct dq_doc_info {
  int64_t id;
  const char *path;
  const char *root;
  const char *kind;   /* "text", "markdown", "pdf", "c", ... */
  const char *sha256; /* hex, may be NULL */
  int64_t mtime;      /* modification time in the caller's unit (docqa's
                         ingest stores nanoseconds since the epoch) */
  int64_t bytes;
  int64_t n_chunks;
  int32_t parts; /* the version of the chunker that made its chunks, symbols
                    and refs (ingest.h DQ_CHUNK_VERSION); 0: before versions */
} dq_doc_info;

typedef struct dq_chunk_in {
  int64_t byte_start, byte_end; /* [start, end) in the source file */
  int32_t line_start, line_end; /* 1-based, inclusive; for paged sources
                                   lines count within a page, so only
                                   (page, line) pairs are ordered */
  int32_t page_start, page_end; /* 0 when the source has no pages */
  const char *section;          /* "3 > 3.2 Termination" or NULL */
  const char *text;             /* UTF-8 */
  size_t text_bytes;            /* 0 = strlen(text) */
  int32_t tokens;               /* model tokens, 0 when unknown */
} dq_chunk_in;

typedef struct dq_symbol_in {
  const char *name, *kind, *scope; /* scope may be NULL */
  int32_t line, col;
  int32_t page; /* a PDF's: line's page (lines count within it); else 0 */
} dq_symbol_in;

typedef struct dq_ref_in {
  const char *name, *kind, *caller; /* kind: call/use/include; caller NULL */
  int32_t line, col;
  int32_t page; /* as dq_symbol_in's */
} dq_ref_in;

/* One document's (re)ingest: begin starts a transaction that replaces any
 * stored version of (root, path); chunks, symbols and refs are added; commit
 * makes the new version visible atomically (a crash before it leaves the old
 * version). Exactly one writer per handle at a time. commit and abort free
 * the writer (abort accepts NULL); on a failed commit nothing changed. */
typedef struct dq_index_doc dq_index_doc;
dq_status dq_index_doc_begin(dq_index *idx, const dq_doc_info *info,
                             dq_index_doc **out);
/* chunk_id (may be NULL) receives the chunk's row id = its vector id. */
dq_status dq_index_doc_add_chunk(dq_index_doc *w, const dq_chunk_in *c,
                                 int64_t *chunk_id);
dq_status dq_index_doc_add_symbol(dq_index_doc *w, const dq_symbol_in *s);
dq_status dq_index_doc_add_ref(dq_index_doc *w, const dq_ref_in *r);
dq_status dq_index_doc_commit(dq_index_doc *w);
void dq_index_doc_abort(dq_index_doc *w);

/* What incremental ingest compares. DQ_ERR_NOTFOUND when not stored. */
typedef struct dq_doc_stat {
  int64_t id, mtime, bytes, n_chunks;
  char sha256[65]; /* "" when not recorded */
  int32_t parts;   /* as dq_doc_info's */
} dq_doc_stat;
dq_status dq_index_doc_lookup(dq_index *idx, const char *root,
                              const char *path, dq_doc_stat *out);
/* Removes a document with its chunks, vectors, symbols and refs in one
 * transaction. DQ_ERR_NOTFOUND when not stored. */
dq_status dq_index_doc_remove(dq_index *idx, const char *root,
                              const char *path);
/* Calls fn for each document (of `root`, or all when NULL), ordered by root
 * then path; the strings are valid during the call only. fn returning
 * non-zero stops the walk (DQ_ERR_INTERRUPTED). */
typedef int (*dq_doc_fn)(void *user, const dq_doc_info *doc);
dq_status dq_index_docs_list(dq_index *idx, const char *root, dq_doc_fn fn,
                             void *user);

/* How a document's path is shown to people and to the model. In an index
 * of one root: the path as stored. In one of several: behind the fewest
 * trailing folder names of its root that no other root ends in, which
 * tell documents of one name apart ("cli/CMakeLists.txt" for the root
 * /work/main/cli beside /work/main/common; "/src" for the root /src
 * beside /a/src). dq_index_root_label gives that label ("" for one root,
 * an unknown root, or when the roots cannot be read; valid until the
 * index is next written or closed); dq_index_shown_path label/path
 * (malloc'd; NULL when out of memory). The search and xref results carry
 * it as `shown`; a search's path filter takes it too. */
const char *dq_index_root_label(dq_index *idx, const char *root);
/* The roots the index holds documents of, sorted (malloc'd copies; free
 * with dq_strings_free). */
dq_status dq_index_roots(dq_index *idx, char ***out, size_t *n);
char *dq_index_shown_path(dq_index *idx, const char *root, const char *path);
/* For name written as shown ("beta/lib/x.c", "beta/lib/", "beta"): what
 * follows root's label and its '/' ("lib/x.c", "lib/", ""; a pointer into
 * name), or NULL when name does not open with that label (or the index
 * has one root). */
const char *dq_index_shown_rest(dq_index *idx, const char *root,
                                const char *name);

/* ---- embeddings and vectors ------------------------------------------ */

typedef struct dq_chunk_text {
  int64_t id;
  char *text;
  size_t text_bytes;
} dq_chunk_text;
/* Up to `max` chunks with id > after_id that have no embedding yet, in id
 * order. Free with dq_chunk_texts_free. */
dq_status dq_index_missing_embeddings(dq_index *idx, int64_t after_id,
                                      size_t max, dq_chunk_text **out,
                                      size_t *n);
void dq_chunk_texts_free(dq_chunk_text *t, size_t n);
/* Stores n embeddings (row-major n x dim floats; normalised here, kept as
 * f16) for the given chunk ids in one transaction and adds them to the
 * vector index. A model must be recorded (dq_index_opts.embed_model/dim or
 * dq_index_set_embed_model; else DQ_ERR_ARG) and dim must equal its
 * dimension (else DQ_ERR_MISMATCH). Unknown ids fail with DQ_ERR_NOTFOUND
 * and store nothing. */
dq_status dq_index_set_embeddings(dq_index *idx, const int64_t *ids,
                                  const float *vecs, size_t n, int dim);
/* Writes DIR/vectors.faiss (temp file + rename) and records its count and id
 * checksum in meta; switches Flat -> IVF when the threshold is crossed. */
dq_status dq_index_vectors_save(dq_index *idx);
/* Drops the vector index and rebuilds it from the stored embeddings. */
dq_status dq_index_vectors_rebuild(dq_index *idx);

typedef struct dq_index_stats {
  int64_t n_docs, n_chunks, n_embedded, n_symbols, n_refs;
  int64_t n_sessions, n_turns; /* chat's */
  int64_t n_vectors;  /* in the in-memory vector index */
  int vectors_ivf;    /* 1 when approximate (IVF), 0 when Flat */
  int64_t nlist, nprobe;
  int64_t db_bytes, vectors_bytes; /* on disk (db includes -wal) */
  int rebuilt_at_open; /* 1 when the vector file was rebuilt at open */
} dq_index_stats;
dq_status dq_index_stats_get(dq_index *idx, dq_index_stats *out);

/* ---- search ------------------------------------------------------------ */

/* s[0..n) as BM25 reads a word: lowercase, Latin letters folded to ASCII
 * (é -> e, ß -> ss, Ł -> l, U+00C0..U+017F) and combining marks dropped
 * (a word of marks alone stays as it is). Into out, at most cap - 1 bytes
 * and a NUL, cut at a character; returns the length. */
size_t dq_index_fold(const char *s, size_t n, char *out, size_t cap);
/* 1 for a prose document kind (text, markdown, html, xml, docx, pdf),
 * 0 for code and anything else. */
int dq_index_prose_kind(const char *kind);

/* The default weight of BM25 against dense in their convex combination:
 * chosen on the 39-question prose evaluation and the Lua and Python code
 * benchmarks together (docs/benchmarks.md), where 0.7 beat equal-weight
 * reciprocal rank fusion on all three. */
#define DQ_LEXICAL_WEIGHT 0.7

typedef struct dq_search_opts {
  size_t k;        /* results; 0 = 10 */
  size_t n_bm25;   /* BM25 candidates; 0 = 50 */
  size_t n_dense;  /* dense candidates; 0 = 50 */
  size_t n_symbol; /* symbol-signal candidates; 0 = 50 */
  int no_symbols;  /* 1: BM25 and dense only */
  double rrf_k;    /* reciprocal rank fusion constant; 0 = 60 */
  /* Weight of BM25 in the convex combination with dense (search.c);
   * 0 = DQ_LEXICAL_WEIGHT, within (0, 1]. */
  double lexical_weight;
  /* Filters. paths: each entry matches that exact path, or, when it ends
   * with '/', every path under it. kind: exact document kind. */
  const char *const *paths;
  size_t n_paths;
  const char *kind;
  /* 1: no ranking: every chunk of the documents passing the filters (which
   * must name paths), in document order (root, path, chunk ordinal), at
   * most k; the query and vector are ignored and scores are 0. For reading
   * whole documents (ask --doc). */
  int all_chunks;
} dq_search_opts;

typedef struct dq_search_result {
  int64_t chunk_id, doc_id;
  char *path, *root, *kind, *section, *text; /* section may be NULL */
  char *shown; /* the path as shown (dq_index_shown_path) */
  int64_t byte_start, byte_end;
  int32_t line_start, line_end, page_start, page_end;
  double score;       /* fused: legs / (rrf_k + retrieval rank) + the
                         symbol signal's term (search.c) */
  int32_t bm25_rank;  /* 1-based; 0 when not among the BM25 candidates */
  double bm25_score;  /* -bm25(): larger is better */
  int32_t dense_rank; /* 1-based; 0 when not among the dense candidates */
  double dense_score; /* inner product with the normalised query */
  int32_t symbol_rank; /* 1-based; 0 when no symbol the query names is
                          defined or used in the chunk */
  int symbol_strong;   /* 1: weighed as a strong symbol, 2: a chunk of a
                          file the query names (search_sym.c) */
  char *symbol;        /* the name that ranked it, or NULL */
  char *symbol_kind;   /* what the chunk holds of it: its definition's kind
                          ("function", "term", ...) or its use's ("call",
                          "use", ...); NULL with symbol */
  char *symbol_where;  /* the definition's scope or the use's caller, or
                          NULL */
  int32_t symbol_line; /* the definition's or use's line; 0 for a named
                          file's chunk */
} dq_search_result;

/* Hybrid search: BM25 over the query's identifiers/words (any may match;
 * common English words are dropped unless nothing else is left; an
 * identifier also matches as the phrase of its parts), when qvec is not
 * NULL dense search with qvec (dim floats, must match the recorded
 * dimension), and the chunks defining or using the symbols, terms and
 * sections the query names (index/search_sym.c). BM25 and dense fuse by a
 * convex combination of their normalised scores into one ranking, which
 * fuses with the symbols by reciprocal rank.
 * Results best first, ties broken by chunk id. A chunk that no signal
 * ranked is never returned. Free with dq_search_results_free; strings live
 * until then. */
dq_status dq_index_search(dq_index *idx, const dq_search_opts *o,
                          const char *query, const float *qvec, int dim,
                          dq_search_result **out, size_t *n);
void dq_search_results_free(dq_search_result *r, size_t n);

/* ---- symbols and references (xref) ----------------------------------- */

typedef struct dq_xref_hit {
  char *name, *kind, *scope, *caller; /* scope: symbols; caller: refs */
  char *path, *root;
  char *shown; /* the path as shown (dq_index_shown_path) */
  int32_t line, col;
  int32_t page; /* a PDF's: line's page (lines count within it); else 0 */
  int64_t doc_id;
  int stale; /* 0 here; docqa xref (pipeline) sets 1 when the file has
                changed or gone since it was ingested */
} dq_xref_hit;
/* Definitions (symbols) or uses (refs) of exactly `name`, filtered by kind
 * when not NULL, ordered by path, line, col. Free with dq_xref_hits_free. */
dq_status dq_index_symbols_find(dq_index *idx, const char *name,
                                const char *kind, dq_xref_hit **out, size_t *n);
dq_status dq_index_refs_find(dq_index *idx, const char *name,
                             const char *kind, dq_xref_hit **out, size_t *n);
/* Every definition in one document, by line and column (for the scope of
 * the function around a reference). */
dq_status dq_index_symbols_in_doc(dq_index *idx, int64_t doc_id,
                                  dq_xref_hit **out, size_t *n);
void dq_xref_hits_free(dq_xref_hit *s, size_t n);
/* Up to max defined names close to `name` (case-insensitive edit distance,
 * then containment), for "did you mean". Free with dq_strings_free. */
dq_status dq_index_symbols_similar(dq_index *idx, const char *name,
                                   size_t max, char ***out, size_t *n);
void dq_strings_free(char **s, size_t n);

/* ---- chat sessions ----------------------------------------------------- */

/* Session id by name; with create, made when missing (else NOTFOUND). */
dq_status dq_index_session_open(dq_index *idx, const char *name, int create,
                                int64_t *session_id);
dq_status dq_index_session_delete(dq_index *idx, const char *name);
dq_status dq_index_turn_add(dq_index *idx, int64_t session, const char *role,
                            const char *text, int32_t tokens,
                            int64_t *turn_id);
typedef struct dq_turn {
  int64_t id;
  char *role, *text;
  int32_t tokens;
  int64_t created; /* seconds since the epoch */
} dq_turn;
/* Turns with id > after_id, oldest first. Free with dq_turns_free. */
dq_status dq_index_turns_list(dq_index *idx, int64_t session,
                              int64_t after_id, dq_turn **out, size_t *n);
void dq_turns_free(dq_turn *t, size_t n);
/* Records a rolling summary covering the session's turns up to and
 * including upto_turn; summary_get returns the latest one (NOTFOUND when
 * none). *text is malloc'd, the caller frees it. */
dq_status dq_index_summary_set(dq_index *idx, int64_t session,
                               int64_t upto_turn, const char *text,
                               int32_t tokens);
dq_status dq_index_summary_get(dq_index *idx, int64_t session, char **text,
                               int64_t *upto_turn);

#ifdef __cplusplus
}
#endif
#endif /* DQ_INDEX_H */
