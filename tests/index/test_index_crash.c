/*
 * test_index_crash.c - kill -9 during ingest never loses or mixes data.
 *
 * The index starts with version 0 of N_DOCS documents. Each round starts a
 * child (this program re-executed with --child, so no OpenMP or SQLite
 * state crosses a fork) that rewrites every document in a loop, each time
 * with a new version number carried in every chunk's text, sets the
 * chunks' embeddings and saves the vector file every few documents. The
 * parent SIGKILLs it after a random delay, then checks: PRAGMA
 * integrity_check and the FTS5 integrity check pass; the index opens; each
 * document holds all N_CHUNKS chunks of exactly one version, never older
 * than the last one seen; the vector index matches the stored embeddings.
 */
#include "index_testutil.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define N_DOCS 6
#define N_CHUNKS 40
#define DIM 16
#define N_ROUNDS 12

static dq_status write_doc(dq_index *idx, int d, long version, int embed) {
  char path[32], text[256];
  snprintf(path, sizeof path, "doc%d.txt", d);
  dq_doc_info info = doc_info(path, "text");
  dq_index_doc *w = NULL;
  int64_t ids[N_CHUNKS];
  dq_status s = dq_index_doc_begin(idx, &info, &w);
  if (s)
    return s;
  for (int i = 0; i < N_CHUNKS; i++) {
    snprintf(text, sizeof text,
             "document %d version v%ld chunk %d: the quick brown fox jumps "
             "over the lazy dog while ledger_post balances accounts",
             d, version, i);
    dq_chunk_in c = chunk_in(text, i + 1);
    if ((s = dq_index_doc_add_chunk(w, &c, &ids[i]))) {
      dq_index_doc_abort(w);
      return s;
    }
  }
  if ((s = dq_index_doc_commit(w)) || !embed)
    return s;
  float v[N_CHUNKS * DIM];
  for (int i = 0; i < N_CHUNKS * DIM; i++)
    v[i] = (float)((version * 31 + i * 17 + d) % 23) - 11.0f + 0.25f;
  return dq_index_set_embeddings(idx, ids, v, N_CHUNKS, DIM);
}

static int child(const char *dir, long base) {
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.embed_model = "crash", .embed_dim = DIM};
  if (dq_index_open(dir, &o, &idx, &err)) {
    fprintf(stderr, "child: %s\n", err.msg);
    return 1;
  }
  for (long v = base;; v++) {
    for (int d = 0; d < N_DOCS; d++) {
      if (write_doc(idx, d, v, 1)) {
        fprintf(stderr, "child: %s\n", dq_index_errmsg(idx));
        return 1;
      }
      if (d % 3 == 2 && dq_index_vectors_save(idx)) {
        fprintf(stderr, "child: %s\n", dq_index_errmsg(idx));
        return 1;
      }
    }
  }
}

/* Version of every chunk of doc d; -1 when mixed or incomplete. */
static long doc_version(sqlite3 *db, int d) {
  sqlite3_stmt *st = NULL;
  char path[32];
  snprintf(path, sizeof path, "doc%d.txt", d);
  sqlite3_prepare_v2(db,
                     "SELECT c.text FROM chunks c JOIN documents d ON"
                     " d.id = c.doc WHERE d.path = ?1 ORDER BY c.ordinal",
                     -1, &st, NULL);
  sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
  long version = -2;
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    const char *p = strstr(t, "version v");
    long v = p ? strtol(p + 9, NULL, 10) : -1;
    if (version == -2)
      version = v;
    else if (v != version)
      version = -1;
    n++;
  }
  sqlite3_finalize(st);
  return n == N_CHUNKS ? version : -1;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0)
    return child(argv[2], strtol(argv[3], NULL, 10));
  char *dir = NULL;
  dq_error err = {0};
  dq_index *idx = scratch_index(
      "crash",
      (dq_index_opts){.create = 1, .embed_model = "crash", .embed_dim = DIM},
      &dir);
  if (!idx)
    return TEST_EXIT();
  for (int d = 0; d < N_DOCS; d++)
    CHECK_OK(write_doc(idx, d, 0, 1), dq_index_errmsg(idx));
  dq_index_close(idx);
  long last[N_DOCS] = {0};
  int progressed = 0, rebuilt = 0;
  unsigned seed = (unsigned)time(NULL);
  fprintf(stderr, "crash test seed %u\n", seed);
  srand(seed);
  for (int round = 0; round < N_ROUNDS; round++) {
    char base[32];
    long b = (round + 1) * 100000L;
    snprintf(base, sizeof base, "%ld", b);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], "--child", dir, base, (char *)NULL);
      _exit(127);
    }
    CHECK(pid > 0);
    struct timespec ts = {0, (30 + rand() % 250) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "child ended by itself (status %d): see its message above",
              status);
    CHECK_MSG(raw_integrity_ok(dir), "round %d", round);
    sqlite3 *db = raw_open(dir);
    for (int d = 0; d < N_DOCS; d++) {
      long v = doc_version(db, d);
      CHECK_MSG(v >= 0, "round %d doc %d: mixed or incomplete", round, d);
      CHECK_MSG(v >= last[d] && (v == last[d] || v >= b),
                "round %d doc %d: version %ld after %ld", round, d, v,
                last[d]);
      if (v > last[d])
        progressed++;
      if (v >= 0)
        last[d] = v;
    }
    sqlite3_close(db);
    dq_index_opts ro = {.embed_model = "crash", .embed_dim = DIM};
    CHECK_OK(dq_index_open(dir, &ro, &idx, &err), err.msg);
    if (idx) {
      dq_index_stats st;
      CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
      CHECK_EQ_INT(st.n_chunks, N_DOCS * N_CHUNKS);
      CHECK_EQ_INT(st.n_vectors, st.n_embedded);
      rebuilt += st.rebuilt_at_open;
      /* FTS agrees with the table: each document's version is findable. */
      char q[32];
      snprintf(q, sizeof q, "v%ld", last[0]);
      dq_search_result *r = NULL;
      size_t n = 0;
      dq_search_opts so = {.k = 100};
      CHECK_OK(dq_index_search(idx, &so, q, NULL, 0, &r, &n),
               dq_index_errmsg(idx));
      int of_doc0 = 0;
      for (size_t i = 0; i < n; i++)
        of_doc0 += strcmp(r[i].path, "doc0.txt") == 0;
      CHECK_EQ_INT(of_doc0, N_CHUNKS);
      dq_search_results_free(r, n);
      dq_index_close(idx);
    }
  }
  fprintf(stderr, "%d document versions advanced over %d kills; %d vector "
                  "rebuilds at open\n",
          progressed, N_ROUNDS, rebuilt);
  CHECK(progressed > 0);
  rm_rf(dir);
  free(dir);
  return TEST_EXIT();
}
