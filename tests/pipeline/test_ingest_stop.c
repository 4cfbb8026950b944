/*
 * test_ingest_stop.c - dq_ingest_run on a large document: its chunks are
 * stored with progress ("store FILE", chunks done and in all), and a stop
 * (Ctrl-C's flag) while they are written rolls the document back: a new
 * one is not stored, an updated one keeps its stored version, files
 * finished before stay, and the next run stores it whole.
 */
#include "pipeline.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct watch {
  volatile int stop;
  int stop_at_store;     /* set stop at the first "store" call */
  uint64_t store_total;  /* the last "store" call's total */
  uint64_t store_done;   /* its done */
  int n_store;           /* "store" calls */
  char store_label[128]; /* the first one's stage */
} watch;

static int on_progress(void *user, const char *stage, uint64_t done,
                       uint64_t total, const char *unit) {
  watch *w = user;
  if (strncmp(stage, "store ", 6) != 0)
    return 0;
  CHECK_EQ_STR(unit, "chunks");
  if (!w->n_store++)
    snprintf(w->store_label, sizeof w->store_label, "%s", stage);
  w->store_total = total;
  w->store_done = done;
  if (w->stop_at_store)
    w->stop = 1;
  return 0;
}

static dq_status run(const char *tree, const char *index, watch *w,
                     dq_ingest_summary *sum, dq_error *err) {
  dq_ingest_opts o = {0};
  o.index_dir = index;
  o.no_embed = 1;
  o.progress = on_progress;
  o.progress_user = w;
  o.stop = &w->stop;
  const char *paths[] = {tree};
  dq_error_clear(err);
  return dq_ingest_run(&o, paths, 1, sum, err);
}

/* A text of n paragraphs, each its own words, so each chunk differs. */
static void write_big(const char *path, int n, const char *extra) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f)
    return;
  for (int i = 0; i < n; i++)
    fprintf(f,
            "Paragraph %d of the ledger records payment %d from account "
            "%d to the escrow account, as agreed in clause %d.\n\n",
            i, i * 7, i * 13, i % 97);
  fputs(extra, f);
  fclose(f);
}

int main(void) {
  char tree[] = "/tmp/dq_stop_tree_XXXXXX";
  char index[] = "/tmp/dq_stop_idx_XXXXXX";
  CHECK(mkdtemp(tree) != NULL);
  CHECK(mkdtemp(index) != NULL);
  char p[512];
  snprintf(p, sizeof p, "%s/a_small.txt", tree);
  FILE *f = fopen(p, "w");
  CHECK(f && fputs("a small note\n", f) >= 0);
  if (f)
    fclose(f);
  char big[512];
  snprintf(big, sizeof big, "%s/b_big.txt", tree);
  write_big(big, 25000, "");

  /* 1: stopped while the big file's chunks are written */
  watch w = {0};
  w.stop_at_store = 1;
  dq_ingest_summary sum;
  dq_error err;
  dq_status s = run(tree, index, &w, &sum, &err);
  CHECK_EQ_INT(s, DQ_ERR_INTERRUPTED);
  CHECK_MSG(strstr(err.msg, "b_big.txt: stopped while storing"), "%s",
            err.msg);
  CHECK_EQ_STR(w.store_label, "store b_big.txt");
  CHECK_EQ_INT(w.n_store, 1);
  CHECK_EQ_INT(sum.files_added, 1); /* the small one, finished before */

  /* 2: the next run stores it whole, with progress to its last step */
  memset(&w, 0, sizeof w);
  s = run(tree, index, &w, &sum, &err);
  CHECK_MSG(s == DQ_OK, "%s", err.msg);
  CHECK_EQ_INT(sum.files_added, 1);
  CHECK_EQ_INT(sum.files_unchanged, 1);
  CHECK_MSG(sum.n_chunks > 2048, "%llu chunks",
            (unsigned long long)sum.n_chunks);
  CHECK_EQ_INT(w.store_total, sum.n_chunks);
  CHECK(w.n_store >= 2 && w.store_done < w.store_total);

  /* 3: an update stopped while written keeps the stored version: the
   * next run still finds a document to update, not one to add */
  write_big(big, 25000, "A closing paragraph added later.\n");
  memset(&w, 0, sizeof w);
  w.stop_at_store = 1;
  s = run(tree, index, &w, &sum, &err);
  CHECK_EQ_INT(s, DQ_ERR_INTERRUPTED);
  CHECK_EQ_INT(sum.files_updated, 0);
  memset(&w, 0, sizeof w);
  s = run(tree, index, &w, &sum, &err);
  CHECK_MSG(s == DQ_OK, "%s", err.msg);
  CHECK_EQ_INT(sum.files_updated, 1);
  CHECK_EQ_INT(sum.files_added, 0);

  unlink(big);
  unlink(p);
  rmdir(tree);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", index);
  CHECK(system(cmd) == 0);
  return TEST_EXIT();
}
