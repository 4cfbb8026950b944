/*
 * index.h - the public interface of the index layer: one index directory
 * holding a SQLite database (documents, chunks, FTS5, symbols, refs, chat
 * sessions, meta) and a FAISS vector file, with hybrid (BM25 + dense) search.
 *
 * The index layer stores and searches; it never reads source files, runs
 * models or includes ingest/engine headers. pipeline/ feeds it.
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

#ifdef __cplusplus
}
#endif
#endif /* DQ_INDEX_H */
