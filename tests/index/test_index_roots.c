/*
 * test_index_roots.c - how paths are shown (roots.c): as stored in an
 * index of one root; in one of several behind the fewest trailing folder
 * names of the root that tell it from every other root, so that two
 * documents of one name can be told apart. Labels are checked on fixed
 * cases (siblings, same last folder, a root that is a suffix of another,
 * trailing slashes, "/") and on random sets of roots (each label unique,
 * a suffix of its root on a folder boundary, and no shorter suffix would
 * do). Then on an index: search and xref results carry the shown path, a
 * path filter takes it as well as the stored path, and the labels follow
 * the roots as documents come and go.
 */
#include "index_testutil.h"

static void check_label(const char *const *roots, size_t n, size_t which,
                        const char *want) {
  char *got = dq__root_label_make(roots, n, which);
  CHECK_MSG(got && !strcmp(got, want), "label of %s: '%s', want '%s'",
            roots[which], got ? got : "(null)", want);
  free(got);
}

static void check_fixed(void) {
  const char *one[] = {"/work/main"};
  check_label(one, 1, 0, "");
  const char *sib[] = {"/work/main/cli", "/work/main/common"};
  check_label(sib, 2, 0, "cli");
  check_label(sib, 2, 1, "common");
  const char *deep[] = {"/a/x/src", "/b/y/src", "/c/lib"};
  check_label(deep, 3, 0, "x/src");
  check_label(deep, 3, 1, "y/src");
  check_label(deep, 3, 2, "lib");
  /* "/src" has no longer suffix than "src", which "/a/src" ends in too */
  const char *suffix[] = {"/src", "/a/src"};
  check_label(suffix, 2, 0, "/src");
  check_label(suffix, 2, 1, "a/src");
  const char *slash[] = {"/m/docs/", "/n/notes//"};
  check_label(slash, 2, 0, "docs");
  check_label(slash, 2, 1, "notes");
  const char *top[] = {"/", "/home"};
  check_label(top, 2, 0, "/");
  check_label(top, 2, 1, "home");
  char *p = dq__shown_path("acme", "contract.md");
  CHECK(p && !strcmp(p, "acme/contract.md"));
  free(p);
  p = dq__shown_path("/", "etc/hosts");
  CHECK(p && !strcmp(p, "/etc/hosts"));
  free(p);
  p = dq__shown_path("", "a.c");
  CHECK(p && !strcmp(p, "a.c"));
  free(p);
}

/* Random roots of 1-4 folders named from a small set, so that suffixes
 * collide often. */
static void check_random(void) {
  static const char *const names[] = {"a", "b", "src", "docs"};
  srand(11);
  for (int t = 0; t < 2000; t++) {
    char buf[8][64];
    const char *roots[8];
    size_t n = 2 + (size_t)(rand() % 6), k = 0;
    while (k < n) {
      int depth = 1 + rand() % 4, o = 0;
      for (int d = 0; d < depth; d++)
        o += snprintf(buf[k] + o, sizeof buf[k] - (size_t)o, "/%s",
                      names[rand() % 4]);
      int dup = 0;
      for (size_t j = 0; j < k; j++)
        dup |= !strcmp(buf[j], buf[k]);
      if (!dup) {
        roots[k] = buf[k];
        k++;
      }
    }
    char *lab[8];
    for (size_t i = 0; i < n; i++) {
      lab[i] = dq__root_label_make(roots, n, i);
      CHECK(lab[i] != NULL);
      if (!lab[i])
        return;
      size_t lr = strlen(roots[i]), ll = strlen(lab[i]);
      /* a suffix of its root, on a folder boundary */
      CHECK(ll > 0 && ll <= lr && !strcmp(roots[i] + lr - ll, lab[i]));
      CHECK(ll == lr || roots[i][lr - ll - 1] == '/');
      /* one folder fewer would meet another root's suffix */
      const char *shorter = strchr(lab[i] + 1, '/');
      if (shorter && lab[i][0] != '/') {
        int met = 0;
        for (size_t j = 0; j < n && !met; j++) {
          size_t lj = strlen(roots[j]), ls = strlen(shorter + 1);
          met = j != i && lj > ls && roots[j][lj - ls - 1] == '/' &&
                !strcmp(roots[j] + lj - ls, shorter + 1);
        }
        CHECK_MSG(met, "%s: label %s is longer than needed", roots[i], lab[i]);
      }
    }
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n; j++)
        CHECK_MSG(strcmp(lab[i], lab[j]) != 0, "%s and %s both '%s'", roots[i],
                  roots[j], lab[i]);
    for (size_t i = 0; i < n; i++)
      free(lab[i]);
  }
}

static void put(dq_index *idx, const char *root, const char *path,
                const char *text) {
  dq_doc_info d = doc_info(path, "c");
  d.root = root;
  dq_index_doc *w = NULL;
  CHECK_OK(dq_index_doc_begin(idx, &d, &w), dq_index_errmsg(idx));
  if (!w)
    return;
  dq_chunk_in c = chunk_in(text, 1);
  dq_symbol_in s = {
      .name = "settle_invoice", .kind = "function", .line = 1, .col = 5};
  CHECK_OK(dq_index_doc_add_chunk(w, &c, NULL), dq_index_errmsg(idx));
  CHECK_OK(dq_index_doc_add_symbol(w, &s), dq_index_errmsg(idx));
  CHECK_OK(dq_index_doc_commit(w), dq_index_errmsg(idx));
}

/* The shown paths of a search for "settle", sorted, joined by ' '. */
static void search_shown(dq_index *idx, const char *filter, char *out,
                         size_t cap) {
  dq_search_opts o = {.k = 10};
  if (filter) {
    o.paths = &filter;
    o.n_paths = 1;
  }
  dq_search_result *r = NULL;
  size_t n = 0;
  out[0] = '\0';
  CHECK_OK(dq_index_search(idx, &o, "settle", NULL, 0, &r, &n),
           dq_index_errmsg(idx));
  const char *v[16];
  for (size_t i = 0; i < n && i < 16; i++) {
    CHECK(r[i].shown != NULL);
    v[i] = r[i].shown ? r[i].shown : "?";
  }
  for (size_t i = 0; i < n && i < 16; i++) /* sort: ranks may tie */
    for (size_t j = i + 1; j < n && j < 16; j++)
      if (strcmp(v[j], v[i]) < 0) {
        const char *t = v[i];
        v[i] = v[j];
        v[j] = t;
      }
  size_t o2 = 0;
  for (size_t i = 0; i < n && i < 16; i++)
    o2 += (size_t)snprintf(out + o2, cap - o2, "%s%s", i ? " " : "", v[i]);
  dq_search_results_free(r, n);
}

static void check_index(void) {
  char *dir = NULL, got[512];
  dq_index *idx = scratch_index("roots", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  CHECK_EQ_STR(dq_index_root_label(idx, "/m/acme"), "");
  put(idx, "/m/acme", "contract.c", "int settle_invoice(void) { return 1; }");
  search_shown(idx, NULL, got, sizeof got);
  CHECK_EQ_STR(got, "contract.c");
  CHECK_EQ_STR(dq_index_root_label(idx, "/m/acme"), "");

  /* a second root with a document of the same name */
  put(idx, "/n/beta", "contract.c", "int settle_invoice(void) { return 2; }");
  put(idx, "/n/beta", "lib/util.c", "void settle_all(void) {}");
  CHECK_EQ_STR(dq_index_root_label(idx, "/m/acme"), "acme");
  CHECK_EQ_STR(dq_index_root_label(idx, "/n/beta"), "beta");
  CHECK_EQ_STR(dq_index_root_label(idx, "/elsewhere"), "");
  const char *rest = dq_index_shown_rest(idx, "/m/acme", "acme/contract.c");
  CHECK(rest && !strcmp(rest, "contract.c"));
  rest = dq_index_shown_rest(idx, "/m/acme", "acme");
  CHECK(rest && !strcmp(rest, ""));
  CHECK(!dq_index_shown_rest(idx, "/m/acme", "acmex/contract.c"));
  CHECK(!dq_index_shown_rest(idx, "/m/acme", "beta/contract.c"));
  CHECK(!dq_index_shown_rest(idx, "/m/acme", "contract.c"));
  search_shown(idx, NULL, got, sizeof got);
  CHECK_EQ_STR(got, "acme/contract.c beta/contract.c beta/lib/util.c");
  /* the filter takes the stored path (both roots) and the shown one */
  search_shown(idx, "contract.c", got, sizeof got);
  CHECK_EQ_STR(got, "acme/contract.c beta/contract.c");
  search_shown(idx, "beta/contract.c", got, sizeof got);
  CHECK_EQ_STR(got, "beta/contract.c");
  search_shown(idx, "beta/", got, sizeof got);
  CHECK_EQ_STR(got, "beta/contract.c beta/lib/util.c");
  search_shown(idx, "beta", got, sizeof got);
  CHECK_EQ_STR(got, "beta/contract.c beta/lib/util.c");
  search_shown(idx, "beta/lib/", got, sizeof got);
  CHECK_EQ_STR(got, "beta/lib/util.c");
  search_shown(idx, "lib/", got, sizeof got);
  CHECK_EQ_STR(got, "beta/lib/util.c");
  search_shown(idx, "acme/lib/", got, sizeof got);
  CHECK_EQ_STR(got, "");
  search_shown(idx, "acm/contract.c", got, sizeof got);
  CHECK_EQ_STR(got, "");

  dq_xref_hit *x = NULL;
  size_t n = 0;
  CHECK_OK(dq_index_symbols_find(idx, "settle_invoice", NULL, &x, &n),
           dq_index_errmsg(idx));
  CHECK_EQ_INT((int)n, 3);
  if (n == 3) {
    CHECK_EQ_STR(x[0].shown, "acme/contract.c");
    CHECK_EQ_STR(x[1].shown, "beta/contract.c");
    CHECK_EQ_STR(x[2].shown, "beta/lib/util.c");
    CHECK_EQ_STR(x[0].path, "contract.c"); /* stored paths stay */
    CHECK_EQ_STR(x[0].root, "/m/acme");
  }
  dq_xref_hits_free(x, n);

  /* one root again: paths as stored */
  CHECK_OK(dq_index_doc_remove(idx, "/n/beta", "contract.c"),
           dq_index_errmsg(idx));
  CHECK_OK(dq_index_doc_remove(idx, "/n/beta", "lib/util.c"),
           dq_index_errmsg(idx));
  CHECK_EQ_STR(dq_index_root_label(idx, "/m/acme"), "");
  CHECK(!dq_index_shown_rest(idx, "/m/acme", "acme/contract.c"));
  search_shown(idx, NULL, got, sizeof got);
  CHECK_EQ_STR(got, "contract.c");
  dq_index_close(idx);
  rm_rf(dir);
  free(dir);

  /* a reader sees the labels of what was written before it opened */
  idx = scratch_index("roots2", (dq_index_opts){.create = 1}, &dir);
  if (!idx)
    return;
  put(idx, "/srv/a/docs", "x.c", "int settle_invoice(void) { return 3; }");
  put(idx, "/srv/b/docs", "x.c", "int settle_invoice(void) { return 4; }");
  dq_index_close(idx);
  idx = NULL;
  dq_error err = {0};
  CHECK_OK(dq_index_open(dir, &(dq_index_opts){.read_only = 1}, &idx, &err),
           err.msg);
  if (idx) {
    search_shown(idx, NULL, got, sizeof got);
    CHECK_EQ_STR(got, "a/docs/x.c b/docs/x.c");
    dq_index_close(idx);
  }
  rm_rf(dir);
  free(dir);
}

int main(void) {
  check_fixed();
  check_random();
  check_index();
  return TEST_EXIT();
}
