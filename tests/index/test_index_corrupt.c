/*
 * test_index_corrupt.c - bad input gives a clear error naming the file and
 * never damages the index: truncated, garbage and zeroed database files are
 * refused at open (DQ_ERR_CORRUPT) and left byte-for-byte as they were; a
 * truncated, garbage, bit-flipped or foreign vector file (another index's,
 * same size) is
 * detected at open and rebuilt from the stored embeddings, with a warning;
 * a read-only handle refuses writes; a write that runs out of file space
 * (RLIMIT_FSIZE in a child process) fails cleanly and the index still
 * holds its old content.
 */
#include "index_testutil.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define DIM 4

typedef struct logbuf {
  char text[4096];
} logbuf;

static void log_fn(void *user, dq_log_level lvl, const char *msg) {
  logbuf *b = user;
  size_t n = strlen(b->text);
  snprintf(b->text + n, sizeof b->text - n, "%d:%s\n", (int)lvl, msg);
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc((size_t)sz + 1);
  *n = fread(p, 1, (size_t)sz, f);
  fclose(f);
  return p;
}

static void spit(const char *path, const char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(p, 1, n, f);
  fclose(f);
}

/* An index with three embedded chunks; skip_ids shifts the row ids. */
static void build(const char *dir, int skip_ids) {
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1, .embed_model = "c", .embed_dim = DIM};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  if (!idx)
    return;
  if (skip_ids) {
    const char *t[] = {"scratch", "scratch", NULL};
    CHECK_OK(put_doc(idx, "tmp.txt", "text", t, NULL), dq_index_errmsg(idx));
    CHECK_OK(dq_index_doc_remove(idx, "/root", "tmp.txt"),
             dq_index_errmsg(idx));
  }
  const char *t[] = {"north wind", "south wind", "east wind", NULL};
  int64_t ids[3];
  CHECK_OK(put_doc(idx, "winds.txt", "text", t, ids), dq_index_errmsg(idx));
  const float v[] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  CHECK_OK(dq_index_set_embeddings(idx, ids, v, 3, DIM), dq_index_errmsg(idx));
  dq_index_close(idx);
}

/* Opening fails with `code`, the message names docqa.db and contains
 * `word`, and the file is unchanged. */
static void refused(const char *dir, dq_status code, const char *word) {
  char *db = join2(dir, "docqa.db");
  size_t n0 = 0, n1 = 0;
  char *before = slurp(db, &n0);
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1};
  CHECK_EQ_INT(dq_index_open(dir, &o, &idx, &err), code);
  CHECK(idx == NULL);
  CHECK_MSG(strstr(err.msg, db) && strstr(err.msg, word), "message: %s",
            err.msg);
  dq_index_opts ro = {.read_only = 1};
  CHECK_EQ_INT(dq_index_open(dir, &ro, &idx, &err), code);
  char *after = slurp(db, &n1);
  CHECK(n0 == n1 && memcmp(before, after, n0) == 0);
  free(before);
  free(after);
  free(db);
}

static void check_db(void) {
  char *dir = scratch_dir("corrupt_db");
  build(dir, 0);
  char *db = join2(dir, "docqa.db");
  size_t n = 0;
  char *good = slurp(db, &n);
  CHECK(n >= 4096 && n % 4096 == 0);
  /* Truncated to half. */
  spit(db, good, n / 2);
  refused(dir, DQ_ERR_CORRUPT, "truncated");
  /* Cut inside a page. */
  spit(db, good, n - 100);
  refused(dir, DQ_ERR_CORRUPT, "docqa.db");
  /* Not SQLite at all. */
  char *junk = malloc(n);
  for (size_t i = 0; i < n; i++)
    junk[i] = (char)(i * 131 + 7);
  spit(db, junk, n);
  refused(dir, DQ_ERR_CORRUPT, "not a SQLite database");
  /* Header intact, every other page zeroed. */
  memcpy(junk, good, n);
  memset(junk + 4096, 0, n - 4096);
  spit(db, junk, n);
  refused(dir, DQ_ERR_CORRUPT, "malformed");
  free(junk);
  /* Restored: opens again. */
  spit(db, good, n);
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {0};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  dq_index_close(idx);
  free(good);
  free(db);
  rm_rf(dir);
  free(dir);
}

/* Opens dir, expecting the vector file to be rebuilt (or not), and checks
 * the dense ranking of the query (0, 1, 0, 0): "south wind" first. */
static void open_vectors(const char *dir, int expect_rebuild) {
  logbuf lb = {{0}};
  dq_logger lg = {DQ_LOG_WARN, log_fn, &lb};
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.embed_model = "c", .embed_dim = DIM, .logger = &lg};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  if (!idx)
    return;
  dq_index_stats st;
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.rebuilt_at_open, expect_rebuild);
  CHECK_EQ_INT(st.n_vectors, 3);
  if (expect_rebuild)
    CHECK_MSG(strstr(lb.text, "vectors.faiss") && strstr(lb.text, "rebuild"),
              "log: %s", lb.text);
  const float q[] = {0, 1, 0, 0};
  dq_search_result *r = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_search(idx, NULL, "", q, DIM, &r, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT(n, 3);
  if (n)
    CHECK_EQ_STR(r[0].text, "south wind");
  dq_search_results_free(r, n);
  dq_index_close(idx);
}

static void check_vectors(void) {
  char *a = scratch_dir("corrupt_vec_a"), *b = scratch_dir("corrupt_vec_b");
  build(a, 0);
  build(b, 1); /* same size vector file, different ids */
  char *va = join2(a, "vectors.faiss"), *vb = join2(b, "vectors.faiss");
  size_t na = 0, nb = 0;
  char *good = slurp(va, &na), *other = slurp(vb, &nb);
  CHECK(na > 0 && na == nb && memcmp(good, other, na) != 0);
  open_vectors(a, 0);
  spit(va, good, na / 2); /* truncated */
  open_vectors(a, 1);
  open_vectors(a, 0); /* the rebuilt file was saved */
  char *junk = malloc(na);
  for (size_t i = 0; i < na; i++)
    junk[i] = (char)(i * 37 + 1);
  spit(va, junk, na); /* garbage of the recorded size */
  open_vectors(a, 1);
  memcpy(junk, good, na);
  junk[na - 9] ^= 0x10; /* one flipped bit inside the vector data */
  spit(va, junk, na);
  open_vectors(a, 1);
  spit(va, other, nb); /* another index's file: ids differ */
  open_vectors(a, 1);
  unlink(va); /* missing */
  open_vectors(a, 1);
  free(junk);
  free(good);
  free(other);
  free(va);
  free(vb);
  rm_rf(a);
  rm_rf(b);
  free(a);
  free(b);
}

static void check_read_only(void) {
  char *dir = scratch_dir("corrupt_ro");
  build(dir, 0);
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts ro = {.read_only = 1};
  CHECK_OK(dq_index_open(dir, &ro, &idx, &err), err.msg);
  if (idx) {
    const char *t[] = {"x", NULL};
    CHECK_EQ_INT(put_doc(idx, "new.txt", "text", t, NULL), DQ_ERR_READONLY);
    CHECK(strstr(dq_index_errmsg(idx), "read-only"));
    CHECK_EQ_INT(dq_index_doc_remove(idx, "/root", "winds.txt"),
                 DQ_ERR_READONLY);
    CHECK_EQ_INT(dq_index_vectors_save(idx), DQ_ERR_READONLY);
    dq_index_close(idx);
  }
  if (geteuid() != 0) { /* permissions mean nothing to root */
    char *db = join2(dir, "docqa.db");
    chmod(db, 0444);
    chmod(dir, 0555);
    dq_index_opts rw = {0};
    CHECK_EQ_INT(dq_index_open(dir, &rw, &idx, &err), DQ_ERR_READONLY);
    CHECK(strstr(err.msg, dir) != NULL);
    CHECK_OK(dq_index_open(dir, &ro, &idx, &err), err.msg);
    if (idx) {
      dq_search_result *r = NULL;
      size_t n = 0;
      CHECK_OK(dq_index_search(idx, NULL, "wind", NULL, 0, &r, &n),
               dq_index_errmsg(idx));
      CHECK_EQ_INT(n, 3);
      dq_search_results_free(r, n);
      dq_index_close(idx);
    }
    chmod(dir, 0755);
    chmod(db, 0644);
    free(db);
  } else {
    fprintf(stderr, "note: running as root, read-only permissions not "
                    "tested (the read-only handle was)\n");
  }
  rm_rf(dir);
  free(dir);
}

/* Child: ingest a large document under a small file-size limit. Exit 0 when
 * it failed with a message naming the database, 1 otherwise. */
static int fill_child(const char *dir) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {256 * 1024, 256 * 1024};
  setrlimit(RLIMIT_FSIZE, &rl);
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.embed_model = "c", .embed_dim = DIM};
  if (dq_index_open(dir, &o, &idx, &err)) {
    printf("open: %s\n", err.msg);
    return 1;
  }
  dq_doc_info d = doc_info("big.txt", "text");
  dq_index_doc *w = NULL;
  dq_status s = dq_index_doc_begin(idx, &d, &w);
  char text[1024];
  memset(text, 'z', sizeof text - 1);
  text[sizeof text - 1] = '\0';
  for (int i = 0; !s && i < 4000; i++) {
    text[i % 1000] = 'a' + (char)(i % 26);
    dq_chunk_in c = chunk_in(text, i + 1);
    s = dq_index_doc_add_chunk(w, &c, NULL);
  }
  if (!s)
    s = dq_index_doc_commit(w);
  else
    dq_index_doc_abort(w);
  printf("status %s: %s\n", dq_status_name(s), dq_index_errmsg(idx));
  int ok = s != DQ_OK && strstr(dq_index_errmsg(idx), "docqa.db") != NULL;
  dq_index_close(idx);
  return ok ? 0 : 1;
}

static void check_full(const char *self) {
  char *dir = scratch_dir("corrupt_full");
  build(dir, 0);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", self, "--fill", dir, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "child status %d", status);
  CHECK(raw_integrity_ok(dir));
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.embed_model = "c", .embed_dim = DIM};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  if (idx) {
    dq_doc_stat ds;
    CHECK_EQ_INT(dq_index_doc_lookup(idx, "/root", "big.txt", &ds),
                 DQ_ERR_NOTFOUND);
    CHECK_OK(dq_index_doc_lookup(idx, "/root", "winds.txt", &ds),
             dq_index_errmsg(idx));
    CHECK_EQ_INT(ds.n_chunks, 3);
    dq_index_close(idx);
  }
  rm_rf(dir);
  free(dir);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--fill") == 0)
    return fill_child(argv[2]);
  check_db();
  check_vectors();
  check_read_only();
  check_full(argv[0]);
  return TEST_EXIT();
}
