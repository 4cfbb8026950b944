/*
 * test_walk.c - dq_walk on a scratch tree built here: gitignore semantics
 * (a table of paths and whether each is kept, worked out from the gitignore
 * documentation and cross-checked once against `git add -A; git ls-files`
 * on the same tree, git 2.39), nested ignore files, .docqaignore, default
 * skip-dirs, hidden files and folders, binary / empty / oversized files,
 * fifos, symlink loops, links out of the root, dangling links, a file
 * deleted mid-walk, sorted order, stopping, and a single file as root;
 * the size limit by kind (text 64 MiB, PDF and mail 512 MiB) and as set.
 */
#include "read_util.h"
#include "test.h"

#include <sys/stat.h>

#define MAX_SEEN 256

typedef struct seen {
  char *rel[MAX_SEEN];
  char *reason[MAX_SEEN]; /* NULL when kept */
  dq_doc_kind kind[MAX_SEEN];
  char lang[MAX_SEEN][16];
  uint64_t size[MAX_SEEN];
  int too_large[MAX_SEEN];
  size_t n;
  const char *delete_at; /* when this file is reported ... */
  char delete_path[4200]; /* ... delete this one */
  size_t stop_after;      /* stop after this many reports (0 = never) */
} seen;

static int on_file(void *user, const dq_walk_entry *e) {
  seen *s = user;
  if (s->n < MAX_SEEN) {
    s->rel[s->n] = strdup(e->rel_path);
    s->reason[s->n] = e->skip_reason ? strdup(e->skip_reason) : NULL;
    s->kind[s->n] = e->kind;
    snprintf(s->lang[s->n], sizeof s->lang[0], "%s", e->lang);
    s->size[s->n] = e->size;
    s->too_large[s->n] = e->too_large;
    s->n++;
  }
  CHECK(e->path && e->path[0] == '/');
  if (s->delete_at && strcmp(e->rel_path, s->delete_at) == 0)
    unlink(s->delete_path);
  return s->stop_after && s->n >= s->stop_after;
}

static void seen_free(seen *s) {
  for (size_t i = 0; i < s->n; i++) {
    free(s->rel[i]);
    free(s->reason[i]);
  }
  s->n = 0;
}

/* Index of rel in s, or -1. */
static long find_rel(const seen *s, const char *rel) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->rel[i], rel) == 0)
      return (long)i;
  return -1;
}

static void expect_kept(const seen *s, const char *rel) {
  long i = find_rel(s, rel);
  CHECK_MSG(i >= 0 && !s->reason[i], "%s should be kept (%s)", rel,
            i < 0 ? "not reported" : s->reason[i]);
}

static void expect_absent(const seen *s, const char *rel) {
  long i = find_rel(s, rel);
  CHECK_MSG(i < 0, "%s should be silently left out (got %s)", rel,
            i >= 0 && s->reason[i] ? s->reason[i] : "kept");
}

static void expect_skipped(const seen *s, const char *rel, const char *why) {
  long i = find_rel(s, rel);
  CHECK_MSG(i >= 0 && s->reason[i] && strstr(s->reason[i], why),
            "%s should be skipped with \"%s\" (got %s)", rel, why,
            i < 0 ? "not reported" : s->reason[i] ? s->reason[i] : "kept");
}

static void test_gitignore(void) {
  char *root = scratch_dir("walkign");
  write_str(root, ".gitignore",
            "# comment line\n"
            "\n"
            "*.log\n"
            "!keep.log\n"
            "/anchored.txt\n"
            "build_out/\n"
            "**/deep/*.tmp\n"
            "docs/**/secret.md\n"
            "\\#hash.txt\n"
            "trailing.txt   \n"
            "ignored_dir/\n"
            "!ignored_dir/inner.txt\n"
            "a?c.txt\n"
            "[0-9]*.dat\n"
            "logs/**\n"
            "mid/*/x.txt\n");
  write_str(root, ".docqaignore", "private/\n!private_not.txt\n");
  const char *files[] = {
      "a.txt", "anchored.txt", "sub/anchored.txt", "x.log", "keep.log",
      "sub/y.log", "build_out/f.txt", "sub/build_out/g.txt", "sub2/build_out",
      "a/b/deep/x.tmp", "deep/y.tmp", "a/deep/z.txt", "docs/secret.md",
      "docs/x/y/secret.md", "docs/readme.md", "#hash.txt", "trailing.txt",
      "ignored_dir/inner.txt", "abc.txt", "abbc.txt", "1x.dat", "x1.dat",
      "logs/today.txt", "logs/old/y.txt", "logsfile.txt", "mid/q/x.txt",
      "mid/q/r/x.txt", "private/p.txt", "private_not.txt",
      "nested/n.txt", "nested/important.txt", "nested/c.md",
      "nested/inner/m.txt", "node_modules/m.js", "vendor/v.c", ".git/HEAD",
      "src/__pycache__/x.py", "src/ok.py", ".env", ".pc/p/src/ok.py",
      "src/.idea/ws.xml", "docs/.hidden.md"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    CHECK(write_str(root, files[i], "text\n") == 0);
  write_str(root, "nested/.gitignore", "*.txt\n!important.txt\n");

  seen s = {0};
  dq_error err = {0};
  CHECK_OK(dq_walk(root, NULL, on_file, &s, &err), err.msg);
  const char *kept[] = {
      "a.txt", "sub/anchored.txt", "keep.log", "sub2/build_out",
      "a/deep/z.txt", "docs/readme.md", "abbc.txt", "x1.dat",
      "logsfile.txt", "mid/q/r/x.txt", "private_not.txt",
      "nested/important.txt", "nested/c.md", "src/ok.py"};
  /* hidden: reported (a folder once, its files not), read as rules */
  const char *hidden[] = {".docqaignore", ".env", ".gitignore", ".pc",
                          "docs/.hidden.md", "nested/.gitignore",
                          "src/.idea"};
  const char *gone[] = {
      "anchored.txt", "x.log", "sub/y.log", "build_out/f.txt",
      "sub/build_out/g.txt", "a/b/deep/x.tmp", "deep/y.tmp",
      "docs/secret.md", "docs/x/y/secret.md", "#hash.txt", "trailing.txt",
      "ignored_dir/inner.txt", "abc.txt", "1x.dat", "logs/today.txt",
      "logs/old/y.txt", "mid/q/x.txt", "private/p.txt", "nested/n.txt",
      "nested/inner/m.txt", "node_modules/m.js", "vendor/v.c", ".git/HEAD",
      "src/__pycache__/x.py", ".pc/p/src/ok.py", "src/.idea/ws.xml"};
  for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
    expect_kept(&s, kept[i]);
  for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
    expect_skipped(&s, hidden[i], "(--hidden takes it)");
  expect_skipped(&s, ".pc", "hidden folder");
  expect_skipped(&s, "src/.idea", "hidden folder");
  expect_skipped(&s, ".env", "hidden file");
  for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
    expect_absent(&s, gone[i]);
  CHECK_EQ_INT(s.n, sizeof kept / sizeof kept[0] +
                        sizeof hidden / sizeof hidden[0]);
  /* sorted: depth first, names in byte order within each folder */
  for (size_t i = 1; i < s.n; i++) {
    /* compare path components: a parent's files and folders interleave by
     * name, so byte order of the full paths with '/' as the lowest byte */
    const char *a = s.rel[i - 1], *b = s.rel[i];
    while (*a && *a == *b)
      a++, b++;
    int ca = *a == '/' ? 1 : (unsigned char)*a + 1;
    int cb = *b == '/' ? 1 : (unsigned char)*b + 1;
    CHECK_MSG(ca < cb, "order: %s before %s", s.rel[i - 1], s.rel[i]);
  }
  long py = find_rel(&s, "src/ok.py");
  if (py >= 0) {
    CHECK_EQ_INT(s.kind[py], DQ_DOC_CODE);
    CHECK_EQ_STR(s.lang[py], "python");
    CHECK_EQ_INT(s.size[py], 5);
  }
  seen_free(&s);

  /* a folder inside a root walked with that root as base: paths relative
   * to base, and the ignore files above it apply (base's "*.log" and
   * "logs/" rules, nested/.gitignore) as they do in base's own walk;
   * the folder itself is taken although base's rules ignore it (named) */
  char p2[4200];
  snprintf(p2, sizeof p2, "%s/nested", root);
  dq_walk_opts bo = {.base = root};
  write_str(root, "nested/inner/q.log", "text\n");
  write_str(root, "nested/inner/k.md", "text\n");
  CHECK_OK(dq_walk(p2, &bo, on_file, &s, &err), err.msg);
  expect_kept(&s, "nested/important.txt");
  expect_kept(&s, "nested/c.md");
  expect_kept(&s, "nested/inner/k.md");
  expect_absent(&s, "nested/n.txt");       /* nested/.gitignore */
  expect_absent(&s, "nested/inner/m.txt"); /* nested/.gitignore */
  expect_absent(&s, "nested/inner/q.log"); /* base's *.log */
  expect_skipped(&s, "nested/.gitignore", "hidden file");
  CHECK_EQ_INT(s.n, 4);
  seen_free(&s);
  snprintf(p2, sizeof p2, "%s/nested/inner", root);
  CHECK_OK(dq_walk(p2, &bo, on_file, &s, &err), err.msg);
  expect_kept(&s, "nested/inner/k.md");
  expect_absent(&s, "nested/inner/m.txt"); /* from the folder above */
  expect_absent(&s, "nested/inner/q.log"); /* from base */
  CHECK_EQ_INT(s.n, 1);
  seen_free(&s);
  snprintf(p2, sizeof p2, "%s/logs", root); /* ignored by base: named */
  CHECK_OK(dq_walk(p2, &bo, on_file, &s, &err), err.msg);
  CHECK_EQ_INT(s.n, 0); /* but base's "logs/" rule ignores its files */
  seen_free(&s);
  /* a single file with base: its path from base, taken as named */
  snprintf(p2, sizeof p2, "%s/nested/n.txt", root);
  CHECK_OK(dq_walk(p2, &bo, on_file, &s, &err), err.msg);
  CHECK_EQ_INT(s.n, 1);
  if (s.n == 1) {
    CHECK_EQ_STR(s.rel[0], "nested/n.txt");
    CHECK(!s.reason[0]);
  }
  seen_free(&s);
  /* base itself as the root: the plain walk */
  bo.base = root;
  CHECK_OK(dq_walk(root, &bo, on_file, &s, &err), err.msg);
  CHECK_EQ_INT(s.n, sizeof kept / sizeof kept[0] +
                        sizeof hidden / sizeof hidden[0] + 1);
  seen_free(&s);
  /* a root outside base is an error */
  bo.base = p2; /* a file: nothing is inside it */
  CHECK_EQ_INT(dq_walk(root, &bo, on_file, &s, &err), DQ_ERR_ARG);
  CHECK(strstr(err.msg, "not inside") != NULL);
  seen_free(&s);

  /* options: no ignore files, own skip list + extra */
  const char *skip[] = {"sub", NULL};
  const char *extra[] = {"docs", NULL};
  dq_walk_opts o = {.no_ignore_files = 1, .skip_dirs = skip,
                    .extra_skip_dirs = extra, .hidden = 1};
  CHECK_OK(dq_walk(root, &o, on_file, &s, &err), err.msg);
  expect_kept(&s, "x.log");
  expect_kept(&s, "node_modules/m.js");
  expect_kept(&s, ".git/HEAD");
  expect_kept(&s, ".pc/p/src/ok.py");
  expect_kept(&s, ".env");
  expect_absent(&s, "sub/anchored.txt");
  expect_absent(&s, "docs/readme.md");
  seen_free(&s);

  /* hidden taken, ignore rules and the default skip-dirs kept */
  dq_walk_opts oh = {.hidden = 1};
  CHECK_OK(dq_walk(root, &oh, on_file, &s, &err), err.msg);
  expect_kept(&s, ".gitignore");
  expect_kept(&s, "src/.idea/ws.xml");
  expect_kept(&s, "docs/.hidden.md");
  expect_absent(&s, ".git/HEAD");
  expect_absent(&s, "x.log");
  seen_free(&s);

  /* a hidden folder or file named as the root is walked */
  char pc[4200], env[4200];
  snprintf(pc, sizeof pc, "%s/.pc", root);
  snprintf(env, sizeof env, "%s/.env", root);
  CHECK_OK(dq_walk(pc, NULL, on_file, &s, &err), err.msg);
  expect_kept(&s, "p/src/ok.py");
  CHECK_EQ_INT(s.n, 1);
  seen_free(&s);
  CHECK_OK(dq_walk(env, NULL, on_file, &s, &err), err.msg);
  expect_kept(&s, ".env");
  seen_free(&s);
  rm_tree(root);
  free(root);
}

static void test_files_and_links(void) {
  char *root = scratch_dir("walkfs");
  char *outside = scratch_dir("walkout");
  char p[4200], q[4200];
  write_str(outside, "o.txt", "outside\n");
  write_str(root, "a.txt", "hello\n");
  write_at(root, "bin.dat", "ab\0cd", 5);
  write_at(root, "empty.txt", "", 0);
  write_str(root, "big.txt", "0123456789012345678901234567890");
  write_str(root, "doc.pdf", "%PDF-1.4\n\x01\x02\x03\x00 binary body");
  write_at(root, "c.docx", "PK\x03\x04\0\0\0\0", 8);
  write_at(root, "img.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  write_at(root, "icon.png", "\0\0\1\0\3\0\x30\x30\0\0\1\0 \0", 14);
  write_str(root, "tool", "#!/usr/bin/env python3\n");
  write_str(root, "sub/s.md", "# S\n");
  write_str(root, "v1.txt", "one\n");
  snprintf(p, sizeof p, "%s/huge.log", root); /* sparse 2 GiB */
  FILE *f = fopen(p, "wb");
  CHECK(f && ftruncate(fileno(f), (off_t)2 << 30) == 0);
  if (f)
    fclose(f);
  write_str(root, "v2.txt", "two\n");
  snprintf(p, sizeof p, "%s/pipe", root);
  CHECK(mkfifo(p, 0644) == 0);
  snprintf(p, sizeof p, "%s/loop", root);
  CHECK(symlink(".", p) == 0);
  snprintf(p, sizeof p, "%s/sub/up", root);
  CHECK(symlink("..", p) == 0);
  snprintf(p, sizeof p, "%s/out", root);
  CHECK(symlink(outside, p) == 0);
  snprintf(p, sizeof p, "%s/outfile.txt", root);
  snprintf(q, sizeof q, "%s/o.txt", outside);
  CHECK(symlink(q, p) == 0);
  snprintf(p, sizeof p, "%s/dangling.txt", root);
  CHECK(symlink("nowhere.txt", p) == 0);
  snprintf(p, sizeof p, "%s/inlink.txt", root);
  CHECK(symlink("a.txt", p) == 0);
  snprintf(p, sizeof p, "%s/zlink", root);
  CHECK(symlink("sub", p) == 0);

  write_str(root, "locked.txt", "no access\n");
  write_str(root, "lockdir/x.txt", "no access\n");
  snprintf(p, sizeof p, "%s/locked.txt", root);
  chmod(p, 0);
  snprintf(p, sizeof p, "%s/lockdir", root);
  chmod(p, 0);

  seen s = {0};
  s.delete_at = "v1.txt";
  snprintf(s.delete_path, sizeof s.delete_path, "%s/v2.txt", root);
  dq_walk_opts o = {.max_file_bytes = 30};
  dq_error err = {0};
  CHECK_OK(dq_walk(root, &o, on_file, &s, &err), err.msg);
  expect_kept(&s, "a.txt");
  expect_kept(&s, "inlink.txt");
  expect_kept(&s, "sub/s.md");
  expect_kept(&s, "tool");
  expect_kept(&s, "doc.pdf");
  expect_kept(&s, "c.docx");
  expect_skipped(&s, "bin.dat", "binary");
  expect_kept(&s, "img.png"); /* an image: read by OCR */
  expect_skipped(&s, "icon.png", "binary"); /* an .ico by its bytes */
  expect_skipped(&s, "empty.txt", "empty");
  expect_skipped(&s, "big.txt", "over the limit of 30 bytes");
  if (geteuid() == 0) { /* root reads everything: nothing to check */
    fprintf(stderr, "running as root: unreadable-file cases skipped\n");
  } else {
    expect_skipped(&s, "locked.txt", "cannot open");
    expect_skipped(&s, "lockdir", "cannot read folder");
  }
  expect_skipped(&s, "pipe", "fifo");
  expect_skipped(&s, "huge.log",
                 "2147483648 bytes (2048.0 MiB), over the limit");
  expect_skipped(&s, "loop", "loop");
  expect_skipped(&s, "sub/up", "loop");
  expect_skipped(&s, "out", "outside the root");
  expect_skipped(&s, "outfile.txt", "outside the root");
  expect_skipped(&s, "dangling.txt", "dangling");
  expect_skipped(&s, "zlink", "already walked");
  expect_skipped(&s, "v2.txt", "vanished");
  long i = find_rel(&s, "tool");
  if (i >= 0)
    CHECK_EQ_STR(s.lang[i], "python");
  i = find_rel(&s, "doc.pdf");
  if (i >= 0)
    CHECK_EQ_INT(s.kind[i], DQ_DOC_PDF);
  i = find_rel(&s, "c.docx");
  if (i >= 0)
    CHECK_EQ_INT(s.kind[i], DQ_DOC_DOCX);
  CHECK(find_rel(&s, "loop/a.txt") < 0 && find_rel(&s, "out/o.txt") < 0);
  seen_free(&s);

  /* no_symlinks: every link is reported and none followed */
  o = (dq_walk_opts){.no_symlinks = 1};
  CHECK_OK(dq_walk(root, &o, on_file, &s, &err), err.msg);
  expect_skipped(&s, "inlink.txt", "symlink");
  expect_skipped(&s, "zlink", "symlink");
  seen_free(&s);

  /* stop after two reports */
  s.stop_after = 2;
  CHECK_EQ_INT(dq_walk(root, NULL, on_file, &s, &err), DQ_ERR_INTERRUPTED);
  CHECK_EQ_INT(s.n, 2);
  seen_free(&s);
  s.stop_after = 0;

  /* a single file as root */
  snprintf(p, sizeof p, "%s/sub/s.md", root);
  CHECK_OK(dq_walk(p, NULL, on_file, &s, &err), err.msg);
  CHECK_EQ_INT(s.n, 1);
  if (s.n == 1) {
    CHECK_EQ_STR(s.rel[0], "s.md");
    CHECK_EQ_INT(s.kind[0], DQ_DOC_MARKDOWN);
  }
  seen_free(&s);

  /* a missing root is an error naming it */
  CHECK_EQ_INT(dq_walk("/nonexistent/dq_root", NULL, on_file, &s, &err),
               DQ_ERR_NOTFOUND);
  CHECK(strstr(err.msg, "/nonexistent/dq_root") != NULL);
  snprintf(p, sizeof p, "%s/lockdir", root);
  chmod(p, 0755);
  rm_tree(root);
  rm_tree(outside);
  free(root);
  free(outside);
}

/* A sparse file of n bytes: head, then text past the bytes the walk
 * sniffs (DQ_SNIFF_BYTES), then a hole. */
static void write_sparse(const char *root, const char *name, const char *head,
                         off_t n) {
  char p[4200];
  snprintf(p, sizeof p, "%s/%s", root, name);
  FILE *f = fopen(p, "wb");
  CHECK(f && fputs(head, f) >= 0);
  for (unsigned i = 0; f && i < DQ_SNIFF_BYTES / 8; i++)
    fputs("a line.\n", f);
  CHECK(f && fflush(f) == 0 && ftruncate(fileno(f), n) == 0);
  if (f)
    fclose(f);
}

/* The default limit is the kind's: a 100 MiB text file is skipped (a log,
 * more likely than a document), a 100 MiB PDF or mailbox is read; past
 * 512 MiB everything is; max_file_bytes sets one limit for all. */
static void test_size_by_kind(void) {
  char *root = scratch_dir("walksize");
  const off_t mb100 = (off_t)100 << 20;
  write_sparse(root, "notes.txt", "plain text\n", mb100);
  write_sparse(root, "scan.pdf", "%PDF-1.4\n", mb100);
  static const char MBOX[] = "From a@b Mon Jan  1 00:00:00 2024\n"
                             "Subject: s\n\n";
  write_sparse(root, "all.mbox", MBOX, mb100);
  write_sparse(root, "noext", MBOX, mb100);
  write_sparse(root, "huge.pdf", "%PDF-1.4\n", (off_t)600 << 20);
  write_str(root, "small.txt", "small\n");
  seen s = {0};
  dq_error err = {0};
  CHECK_OK(dq_walk(root, NULL, on_file, &s, &err), err.msg);
  expect_skipped(&s, "notes.txt", "(100.0 MiB), over the limit of 64 MiB");
  expect_kept(&s, "scan.pdf");
  expect_kept(&s, "all.mbox");
  expect_kept(&s, "noext"); /* a mailbox by its bytes */
  expect_skipped(&s, "huge.pdf", "over the limit of 512 MiB");
  expect_kept(&s, "small.txt");
  for (size_t i = 0; i < s.n; i++)
    CHECK_MSG(s.too_large[i] == (!strcmp(s.rel[i], "notes.txt") ||
                                 !strcmp(s.rel[i], "huge.pdf")),
              "%s: too_large %d", s.rel[i], s.too_large[i]);
  seen_free(&s);
  dq_walk_opts o = {.max_file_bytes = (uint64_t)200 << 20};
  CHECK_OK(dq_walk(root, &o, on_file, &s, &err), err.msg);
  expect_kept(&s, "notes.txt");
  expect_skipped(&s, "huge.pdf", "over the limit of 200 MiB");
  seen_free(&s);
  CHECK(dq_max_file_bytes(0, DQ_DOC_CODE) == DQ_READ_MAX_FILE_BYTES);
  CHECK(dq_max_file_bytes(0, DQ_DOC_EMAIL) == DQ_READ_MAX_DOC_BYTES);
  CHECK(dq_max_file_bytes(7, DQ_DOC_PDF) == 7);
  free(root);
}

int main(void) {
  test_gitignore();
  test_files_and_links();
  test_size_by_kind();
  return TEST_EXIT();
}
