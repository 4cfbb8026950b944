/*
 * versions.c - versions of SQLite (run time) and FAISS (the headers the C API
 * was built against, which scripts/build-faiss-c.sh checks equal the library).
 */
#include "index.h"

#include <sqlite3.h>

#ifndef DQ_FAISS_VERSION
#define DQ_FAISS_VERSION "unknown"
#endif

const char *dq_index_sqlite_version(void) { return sqlite3_libversion(); }
const char *dq_index_faiss_version(void) { return DQ_FAISS_VERSION; }
