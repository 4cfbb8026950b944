/*
 * index_int.h - internals shared by the index layer's files (store.c,
 * docs.c, vectors.c, search.c, symbols.c, chat.c, tokenizer.c). Not part of
 * the public interface: nothing outside index/ includes it.
 */
#ifndef DQ_INDEX_INT_H
#define DQ_INDEX_INT_H

#include "index.h"

#include <sqlite3.h>

struct FaissIndex_H;

#define DQ_INDEX_DB_NAME "docqa.db"
#define DQ_INDEX_VEC_NAME "vectors.faiss"
/* PRAGMA application_id of a docqa database: "dqa1". */
#define DQ_INDEX_APP_ID 0x64716131
#define DQ_INDEX_MAX_DIM 8192

struct dq_index {
  sqlite3 *db;
  char *dir, *db_path, *vec_path;
  int read_only;
  const dq_logger *log;
  dq_error err;
  char *embed_model; /* recorded in meta, NULL when none */
  int embed_dim;     /* 0 when none */
  /* Vector index: ids are chunk row ids; it mirrors the embeddings stored in
   * the database (after open, and after each committed change). NULL until
   * an embedding exists or the file is loaded. */
  struct FaissIndex_H *vec;
  int vec_ivf;      /* 1 when vec is an IndexIVF (approximate) */
  int vec_dirty;    /* changed since the file was written */
  int64_t ivf_trained_now; /* vectors the IVF was trained at, this session */
  int rebuilt_at_open;
  size_t ivf_threshold;
  int nprobe_opt, nlist_opt;
  dq_index_doc *writer; /* the open document writer, if any */
  /* Filter of the search in progress (read by the SQL function). */
  const dq_search_opts *filter;
  /* The roots and how their documents' paths are shown (roots.c), as of
   * sqlite3_total_changes64() == roots_changes (-1: not read). */
  char **roots, **root_labels;
  size_t n_roots;
  sqlite3_int64 roots_changes;
};

/* roots.c: the label shown before the paths of roots[which] among the n
 * roots ("" for one root), and label + "/" + path (malloc'd; NULL when
 * out of memory). */
char *dq__root_label_make(const char *const *roots, size_t n, size_t which);
char *dq__shown_path(const char *label, const char *path);
void dq__roots_free(dq_index *idx);

/* store.c */
dq_status dq__db_err(dq_index *idx, int rc, const char *what);
dq_status dq__exec(dq_index *idx, const char *sql);
dq_status dq__prepare(dq_index *idx, const char *sql, sqlite3_stmt **st);
dq_status dq__meta_get(dq_index *idx, const char *key, char **val);
dq_status dq__meta_set(dq_index *idx, const char *key, const char *val);
dq_status dq__begin(dq_index *idx);
dq_status dq__commit(dq_index *idx);
void dq__rollback(dq_index *idx);
dq_status dq__check_writable(dq_index *idx);
char *dq__strdup0(const char *s); /* NULL -> NULL */

/* tokenizer.c: registers on db the FTS5 tokenizer "dq_ident" and the
 * ranking function dq_bm25 (rank.c). */
int dq__fts5_register(sqlite3 *db);
/* Splits a query into FTS5 query text ("a" OR "b c" ...) using the same
 * identifier rules as the tokenizer. Malloc'd; NULL when no tokens. */
char *dq__fts_query(const char *text);
/* The same, and in *groups (malloc'd) the term of each phrase of it for
 * dq_bm25 ("0 0 1": a word and its stem key are one term). */
char *dq__fts_query_groups(const char *text, char **groups);
/* rank.c: creates the FTS5 ranking function dq_bm25(fts, groups) in api. */
int dq__rank_create(fts5_api *api);
/* The tokenizer's identifier rules, for the symbol signal (search_sym.c). */
#define DQ__TOK_MAX_BYTES 256 /* a longer identifier is cut to this */
#define DQ__TOK_MAX_PARTS 64  /* parts beyond this are not indexed */
/* One identifier found in text: byte span and its parts' spans. */
typedef struct dq__ident {
  int start, end;
  int n_parts;
  int part_start[DQ__TOK_MAX_PARTS], part_end[DQ__TOK_MAX_PARTS];
} dq__ident;
/* The next identifier at or after *pos (word characters, '.' between two
 * joining; parts split at '_', '.' and camelCase); 0 when none. */
int dq__ident_next(const unsigned char *s, int n, int *pos, dq__ident *id);
/* Lowercases s[a..b) into out (DQ__TOK_MAX_BYTES + 4 bytes), cutting at a
 * code point boundary; returns the length (out is not terminated). */
int dq__lower_copy(const unsigned char *s, int a, int b, char *out);
/* 1 for the common English words queries drop (lowercase w). */
int dq__is_stopword(const char *w);
/* Folds an English word's plural and -ed/-ing forms and a final 'e' in
 * place ("computes", "computed", "computing", "compute" -> "comput"; "laws"
 * -> "law"). Returns the new length. */
size_t dq__stem(char *w);
/* Is [a, b) a file name extension ("c", "py", "md", ...; lower case)?
 * (search_sym.c) */
int dq__file_ext(const char *a, const char *b);
/* Marks text (a column of a prose chunk) for the tokenizer's stem keys. */
#define DQ__PROSE_MARK '\x01'
/* The stem key of lowercase word w[0..n) into out (DQ__TOK_MAX_BYTES + 4
 * bytes): DQ__PROSE_MARK then dq__stem(w). The tokenizer indexes a word of
 * prose as it, the query builder asks for it. Returns its length,
 * or 0 when w is shorter than 3, not all ASCII letters, or a stopword. */
int dq__stem_key(const char *w, int n, char *out);

/* docs.c: a document's context, indexed with every one of its chunks
 * (documents.context, chunks_fts's third column): its path, a newline, and for
 * prose (dq__prose_kind) first[0..n), its first chunk's text, up to the end
 * of the DQ__CONTEXT_WORDS-th word. In a
 * contract or manual these words name the document and its parties ("This
 * Mutual Non-Disclosure Agreement ... between Orchard Peak ..."), so a
 * question naming the document and a clause ("which law governs the mutual
 * NDA") finds that clause of that document rather than its title passage
 * or the same clause elsewhere. A code file's first words are mostly its
 * licence header, the same in every file: as context they would only make
 * common words look common, so code gets its path alone. NULL when out of
 * memory. */
#define DQ__CONTEXT_WORDS 80
char *dq__doc_context(const char *path, const char *kind, const char *first,
                      size_t n);
/* 1 when documents of this kind are prose (text, markdown, html, xml,
 * docx, pdf), whose words are also indexed by their English stems; code is
 * not: "defined" in a C question would meet every #define. */
int dq__prose_kind(const char *kind);
/* Registers the SQL functions dq_doc_context(path, kind, first_chunk_text)
 * and dq_prose_kind(kind) that the schema migration fills old rows with. */
int dq__docs_register(sqlite3 *db);

/* search_sym.c: the symbol signal, the chunks defining or using the symbols
 * a query names and those of the files it names, best first (see there).
 * A strong name's chunk weighs 1 / (DQ__SYM_STRONG_K + rank) in the fusion,
 * a named file's 1 / (2 DQ__SYM_STRONG_K), the others' 1 / (rrf_k + rank).
 * Honours idx->filter. */
#define DQ__SYM_STRONG_K 10.0
typedef struct dq__sym_hit {
  int64_t chunk;
  int strong;       /* 1: a strong name's leading chunk; 2: a named file's */
  const char *name; /* the name that brought it (one of the list's names) */
  char *kind;       /* of the definition or use: "function", "call", ... */
  char *where;      /* the definition's scope, the use's caller, or NULL */
  int32_t line;     /* of the definition or use; 0 for a file's chunk */
} dq__sym_hit;
typedef struct dq__sym_list {
  size_t n;
  dq__sym_hit *hit; /* best first, one per chunk */
  char **names;
  size_t n_names;
} dq__sym_list;
dq_status dq__symbol_top(dq_index *idx, const char *query, size_t max,
                         dq__sym_list *out);
void dq__sym_list_free(dq__sym_list *l);

/* vectors.c */
dq_status dq__vectors_open(dq_index *idx);
void dq__vectors_free(dq_index *idx);
dq_status dq__vectors_remove(dq_index *idx, const int64_t *ids, size_t n);
/* Dense top-k: ids and scores (inner products), *n <= k. */
dq_status dq__vectors_search(dq_index *idx, const float *q, size_t k,
                             int64_t *ids, float *scores, size_t *n);
int64_t dq__vectors_count(const dq_index *idx);
/* Inside a transaction deleting chunks: drops their ids from meta's
 * embedding count/checksum. */
dq_status dq__emb_forget(dq_index *idx, const int64_t *ids, size_t n);
/* The reverse, for chunks given a stored embedding (docs.c's reuse), inside
 * the same transaction. */
dq_status dq__emb_adopt(dq_index *idx, const int64_t *ids, size_t n);
/* After that transaction commits: adds n vectors, F16 as stored (embed_dim
 * each), under ids to the vector index. */
dq_status dq__vectors_add_f16(dq_index *idx, const int64_t *ids,
                              const uint16_t *const *h, size_t n);
void dq__f32_to_f16(const float *x, uint16_t *h, size_t n);
void dq__f16_to_f32(const uint16_t *h, float *x, size_t n);

/* search.c: SQL functions dq_filter_ok(root, path, kind) for the
 * search's filters (a path filter matches the path as stored or as
 * shown) and dq_shown_is(root, path, name) for a file a query names as
 * shown. */
int dq__search_register(dq_index *idx);
int dq__filter_ok(dq_index *idx, const dq_search_opts *o, const char *root,
                  const char *path, const char *kind);

#endif /* DQ_INDEX_INT_H */
