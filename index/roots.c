/*
 * roots.c - how a document's path is shown: relative to its root, as
 * stored, when the index holds one root; in an index of several roots
 * behind the fewest trailing folders of its root that no other root ends
 * in ("cli/CMakeLists.txt" beside "common/CMakeLists.txt" for the roots
 * /work/main/cli and /work/main/common; "acme/contract.pdf" beside
 * "beta/contract.pdf"), so that people and the model can tell two
 * documents of one name apart and find them.
 *
 * The roots are read with one index seek each (documents' UNIQUE(root,
 * path) index), and again whenever this connection has written since.
 */
#include "index_int.h"

#include <stdlib.h>
#include <string.h>

void dq__roots_free(dq_index *idx) {
  for (size_t i = 0; i < idx->n_roots; i++) {
    free(idx->roots[i]);
    if (idx->root_labels)
      free(idx->root_labels[i]);
  }
  free(idx->roots);
  free(idx->root_labels);
  idx->roots = idx->root_labels = NULL;
  idx->n_roots = 0;
  idx->roots_changes = -1;
}

/* Where the last m folder names of r[0..n) start (n when m is 0); 0 when
 * r has fewer than m. Trailing '/' are not part of r (n excludes them). */
static size_t suffix_at(const char *r, size_t n, int m) {
  size_t i = n;
  for (int k = 0; k < m; k++) {
    while (i > 0 && r[i - 1] == '/')
      i--;
    if (i == 0)
      return 0;
    while (i > 0 && r[i - 1] != '/')
      i--;
  }
  return i;
}

static size_t trimmed_len(const char *r) {
  size_t n = strlen(r);
  while (n > 1 && r[n - 1] == '/')
    n--;
  return n;
}

char *dq__root_label_make(const char *const *roots, size_t n, size_t which) {
  if (n < 2)
    return strdup("");
  const char *r = roots[which];
  size_t len = trimmed_len(r);
  for (int m = 1;; m++) {
    size_t a = suffix_at(r, len, m);
    int unique = 1;
    for (size_t j = 0; j < n && unique; j++) {
      if (j == which)
        continue;
      size_t olen = trimmed_len(roots[j]), b = suffix_at(roots[j], olen, m);
      unique = !(olen - b == len - a && !memcmp(roots[j] + b, r + a, len - a));
    }
    if (unique || a == 0) {
      char *out = malloc(len - a + 1);
      if (out) {
        memcpy(out, r + a, len - a);
        out[len - a] = '\0';
      }
      return out;
    }
  }
}

static dq_status roots_load(dq_index *idx) {
  sqlite3_int64 changes = sqlite3_total_changes64(idx->db);
  if (idx->roots_changes == changes)
    return DQ_OK;
  dq__roots_free(idx);
  sqlite3_stmt *st = NULL;
  dq_status s =
      dq__prepare(idx, "SELECT min(root) FROM documents WHERE root > ?1", &st);
  if (s)
    return s;
  size_t cap = 0;
  const char *last = "";
  for (;;) {
    sqlite3_bind_text(st, 1, last, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    const char *root =
        rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      s = dq__db_err(idx, rc, "listing the roots");
      break;
    }
    if (!root)
      break;
    if (idx->n_roots == cap) {
      size_t c = cap ? 2 * cap : 8;
      char **p = realloc(idx->roots, c * sizeof *p);
      if (!p) {
        s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
        break;
      }
      idx->roots = p;
      cap = c;
    }
    if (!(idx->roots[idx->n_roots] = strdup(root))) {
      s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
      break;
    }
    last = idx->roots[idx->n_roots++];
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  if (!s && idx->n_roots) {
    idx->root_labels = calloc(idx->n_roots, sizeof *idx->root_labels);
    if (!idx->root_labels)
      s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !s && i < idx->n_roots; i++)
      if (!(idx->root_labels[i] = dq__root_label_make(
                (const char *const *)idx->roots, idx->n_roots, i)))
        s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  }
  if (s) {
    dq__roots_free(idx);
    return s;
  }
  idx->roots_changes = changes;
  return DQ_OK;
}

dq_status dq_index_roots(dq_index *idx, char ***out, size_t *n) {
  *out = NULL;
  *n = 0;
  dq_status s = roots_load(idx);
  if (s)
    return s;
  char **v = calloc(idx->n_roots ? idx->n_roots : 1, sizeof *v);
  if (!v)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < idx->n_roots; i++)
    if (!(v[i] = strdup(idx->roots[i]))) {
      dq_strings_free(v, i);
      return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    }
  *out = v;
  *n = idx->n_roots;
  return DQ_OK;
}

const char *dq_index_root_label(dq_index *idx, const char *root) {
  if (!root || roots_load(idx) != DQ_OK)
    return "";
  for (size_t i = 0; i < idx->n_roots; i++)
    if (!strcmp(idx->roots[i], root))
      return idx->root_labels[i];
  return "";
}

char *dq__shown_path(const char *label, const char *path) {
  if (!path)
    path = "";
  size_t nl = label ? strlen(label) : 0, np = strlen(path);
  char *out = malloc(nl + np + 2);
  if (!out)
    return NULL;
  size_t o = 0;
  if (nl) {
    memcpy(out, label, nl);
    o = nl;
    if (label[nl - 1] != '/')
      out[o++] = '/';
  }
  memcpy(out + o, path, np + 1);
  return out;
}

const char *dq_index_shown_rest(dq_index *idx, const char *root,
                                const char *name) {
  const char *label = dq_index_root_label(idx, root);
  size_t nl = strlen(label);
  nl -= nl && label[nl - 1] == '/'; /* the root "/" */
  if (!nl || !name || strncmp(name, label, nl) != 0)
    return NULL;
  if (name[nl] == '\0')
    return name + nl;
  return name[nl] == '/' ? name + nl + 1 : NULL;
}

char *dq_index_shown_path(dq_index *idx, const char *root, const char *path) {
  return dq__shown_path(dq_index_root_label(idx, root), path);
}
