/*
 * walk.c - walking a folder for ingest: deterministic order, .gitignore and
 * .docqaignore rules, default skip-dirs, symlink safety, and a skip notice
 * with a reason for every file left out that a user might expect in.
 *
 * It does not read files beyond the first DQ_SNIFF_BYTES (to tell text from
 * binary); dq_read does the reading. See ingest.h for the rules.
 *
 * Symlinks: a link is followed only when realpath() of its target lies inside
 * realpath() of the root. Directories are identified by (st_dev, st_ino): a
 * symlinked directory that is one of the directories being walked right now
 * is a loop, one that was already walked is a duplicate; both are skipped
 * with a reason, so every directory is entered through a symlink at most once
 * and the walk always ends. Real (non-link) directories are always entered.
 *
 * Ignore rules are kept as a stack of lists, one per ignore file on the path
 * from the root to the current folder; a path is tested against every list
 * from the root down and the last matching rule decides.
 */
#include "ingest_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IGNORE_FILE_MAX_BYTES ((size_t)1 << 20)
#define GLOB_MAX_STEPS 100000 /* bound on pattern backtracking per test */

const char *const dq_walk_default_skip_dirs[] = {
    ".git", ".hg", ".svn", "node_modules", "vendor", "build", "dist",
    "target", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
    ".pytest_cache", ".docqa", NULL};

/* ---- gitignore patterns ---- */

typedef struct ign_rule {
  char *pat;    /* without leading "/", "!" and trailing "/" */
  int negate;   /* "!pat": re-include */
  int dir_only; /* "pat/" */
  int anchored; /* has a "/" before its end: matched against the whole path
                   below the ignore file's folder, else against base names */
} ign_rule;

typedef struct ign_list {
  char *base; /* folder of the ignore file, relative to the root ("" = root) */
  char *file; /* ".gitignore" or ".docqaignore", for messages */
  ign_rule *rules;
  size_t n_rules;
} ign_list;

/* Matches a bracket expression at *pp against ch. Returns 1/0, or -1 when
 * the bracket is not closed (then '[' is a literal). Advances *pp past ']'. */
static int bracket(const char **pp, char ch) {
  const char *p = *pp + 1;
  int neg = 0, hit = 0;
  if (*p == '!' || *p == '^') {
    neg = 1;
    p++;
  }
  const char *first = p;
  for (; *p && (*p != ']' || p == first); p++) {
    char lo = *p;
    if (lo == '\\' && p[1])
      lo = *++p;
    char hi = lo;
    if (p[1] == '-' && p[2] && p[2] != ']') {
      p += 2;
      hi = *p;
      if (hi == '\\' && p[1])
        hi = *++p;
    }
    if ((unsigned char)ch >= (unsigned char)lo &&
        (unsigned char)ch <= (unsigned char)hi)
      hit = 1;
  }
  if (*p != ']')
    return -1;
  *pp = p + 1;
  return ch != '/' && hit != neg;
}

static int gmatch(const char *p, const char *s, const char *p0, long *steps) {
  while (*p) {
    if (--*steps < 0)
      return 0;
    if (p[0] == '*' && p[1] == '*' && (p == p0 || p[-1] == '/') &&
        (p[2] == '/' || p[2] == '\0')) {
      if (p[2] == '\0')
        return 1; /* trailing "**": everything below */
      for (const char *t = s;;) { /* "**" + "/": zero or more folders */
        if (gmatch(p + 3, t, p0, steps))
          return 1;
        t = strchr(t, '/');
        if (!t)
          return 0;
        t++;
      }
    }
    if (*p == '*') {
      while (*p == '*')
        p++;
      for (const char *t = s;; t++) {
        if (gmatch(p, t, p0, steps))
          return 1;
        if (*t == '\0' || *t == '/' || *steps < 0)
          return 0;
      }
    }
    if (*s == '\0')
      return 0;
    if (*p == '?') {
      if (*s == '/')
        return 0;
      p++;
      s++;
      continue;
    }
    if (*p == '[') {
      const char *q = p;
      int r = bracket(&q, *s);
      if (r >= 0) {
        if (!r)
          return 0;
        p = q;
        s++;
        continue;
      }
    }
    if (*p == '\\' && p[1])
      p++;
    if (*p != *s)
      return 0;
    p++;
    s++;
  }
  return *s == '\0';
}

/* Parses one line of an ignore file into r. Returns 0 when the line holds no
 * rule (blank, comment), 1 when r was filled, -1 out of memory. */
static int parse_rule(const char *line, size_t n, ign_rule *r) {
  memset(r, 0, sizeof *r);
  if (n && line[n - 1] == '\r')
    n--;
  while (n && (line[n - 1] == ' ' || line[n - 1] == '\t') &&
         !(n >= 2 && line[n - 2] == '\\'))
    n--;
  if (n == 0 || line[0] == '#')
    return 0;
  if (line[0] == '!') {
    r->negate = 1;
    line++;
    n--;
  }
  if (n && line[n - 1] == '/') {
    r->dir_only = 1;
    n--;
  }
  if (memchr(line, '/', n))
    r->anchored = 1;
  if (n && line[0] == '/') {
    line++;
    n--;
  }
  if (n == 0)
    return 0;
  r->pat = strndup(line, n);
  return r->pat ? 1 : -1;
}

/* ---- the walker ---- */

typedef struct dir_id {
  dev_t dev;
  ino_t ino;
} dir_id;

typedef struct walker {
  const dq_walk_opts *o;
  dq_walk_fn fn;
  void *user;
  dq_error *err;
  const char *root; /* realpath of the root */
  size_t root_len;
  ign_list *lists;
  size_t n_lists, cap_lists;
  dir_id *stack; /* directories being walked, root first */
  size_t n_stack, cap_stack;
  dir_id *seen; /* every directory walked */
  size_t n_seen, cap_seen;
  int stopped;
} walker;

static int grow_arr(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t n = *cap ? *cap * 2 : 16;
  if (n < need)
    n = need;
  void *q = realloc(*p, n * elem);
  if (!q)
    return -1;
  *p = q;
  *cap = n;
  return 0;
}

static char *join(const char *a, const char *b) {
  if (!a || !a[0])
    return strdup(b);
  size_t na = strlen(a), nb = strlen(b);
  int slash = a[na - 1] != '/';
  char *s = malloc(na + slash + nb + 1);
  if (!s)
    return NULL;
  memcpy(s, a, na);
  if (slash)
    s[na] = '/';
  memcpy(s + na + slash, b, nb + 1);
  return s;
}

static dq_status nomem(walker *w) {
  return dq_error_set(w->err, DQ_ERR_NOMEM, "%s: out of memory while walking",
                      w->root);
}

/* Reads the ignore file `name` in folder abs_dir (rel_dir from the root). */
static dq_status load_ignore(walker *w, const char *abs_dir,
                             const char *rel_dir, const char *name) {
  char *path = join(abs_dir, name);
  if (!path)
    return nomem(w);
  struct stat st;
  char *text = NULL;
  size_t n = 0;
  dq_status ret = DQ_OK;
  /* only a regular file: a link could point outside the root */
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
      (size_t)st.st_size > IGNORE_FILE_MAX_BYTES ||
      dq_read_file(path, IGNORE_FILE_MAX_BYTES, &text, &n, NULL) != DQ_OK) {
    free(path);
    return DQ_OK;
  }
  free(path);
  ign_list l = {strdup(rel_dir), strdup(name), NULL, 0};
  size_t cap = 0;
  if (!l.base || !l.file)
    goto oom;
  for (size_t s = 0; s < n;) {
    const char *nl = memchr(text + s, '\n', n - s);
    size_t e = nl ? (size_t)(nl - text) : n;
    ign_rule r;
    int k = parse_rule(text + s, e - s, &r);
    if (k < 0 || (k > 0 && grow_arr((void **)&l.rules, &cap, l.n_rules + 1,
                                    sizeof r))) {
      if (k > 0)
        free(r.pat);
      goto oom;
    }
    if (k > 0)
      l.rules[l.n_rules++] = r;
    s = e + 1;
  }
  if (grow_arr((void **)&w->lists, &w->cap_lists, w->n_lists + 1, sizeof l))
    goto oom;
  w->lists[w->n_lists++] = l;
  free(text);
  return DQ_OK;
oom:
  ret = nomem(w);
  for (size_t i = 0; i < l.n_rules; i++)
    free(l.rules[i].pat);
  free(l.rules);
  free(l.base);
  free(l.file);
  free(text);
  return ret;
}

static void pop_lists(walker *w, size_t keep) {
  while (w->n_lists > keep) {
    ign_list *l = &w->lists[--w->n_lists];
    for (size_t i = 0; i < l->n_rules; i++)
      free(l->rules[i].pat);
    free(l->rules);
    free(l->base);
    free(l->file);
  }
}

/* Whether rel (relative to the root) is ignored; *why gets the deciding
 * ignore file when it is. */
static int ignored(const walker *w, const char *rel, int is_dir,
                   const ign_list **why) {
  int result = 0;
  const char *slash = strrchr(rel, '/');
  const char *base = slash ? slash + 1 : rel;
  for (size_t i = 0; i < w->n_lists; i++) {
    const ign_list *l = &w->lists[i];
    size_t nb = strlen(l->base);
    if (nb && (strncmp(rel, l->base, nb) != 0 || rel[nb] != '/'))
      continue;
    const char *sub = nb ? rel + nb + 1 : rel;
    for (size_t k = 0; k < l->n_rules; k++) {
      const ign_rule *r = &l->rules[k];
      if (r->dir_only && !is_dir)
        continue;
      long steps = GLOB_MAX_STEPS;
      if (gmatch(r->pat, r->anchored ? sub : base, r->pat, &steps)) {
        result = !r->negate;
        *why = l;
      }
    }
  }
  return result;
}

static int in_names(const char *name, const char *const *list) {
  for (; list && *list; list++)
    if (strcmp(name, *list) == 0)
      return 1;
  return 0;
}

static int has_id(const dir_id *a, size_t n, dir_id id) {
  for (size_t i = 0; i < n; i++)
    if (a[i].dev == id.dev && a[i].ino == id.ino)
      return 1;
  return 0;
}

/* Reports one file; returns non-zero when the caller asked to stop. */
static int report(walker *w, const char *rel, const char *abs,
                  const struct stat *st, dq_doc_kind kind, const char *lang,
                  const char *reason, int too_large) {
  dq_walk_entry e = {
      rel,
      abs,
      st ? (uint64_t)st->st_size : 0,
      st ? (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec : 0,
      reason ? DQ_DOC_UNKNOWN : kind,
      reason ? "" : lang,
      reason,
      too_large};
  if (reason)
    dq_log(w->o->log, DQ_LOG_DEBUG, "skip %s: %s", rel, reason);
  if (w->fn(w->user, &e)) {
    w->stopped = 1;
    return 1;
  }
  return 0;
}

static int skip(walker *w, const char *rel, const char *abs,
                const struct stat *st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int skip(walker *w, const char *rel, const char *abs,
                const struct stat *st, const char *fmt, ...) {
  char reason[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return report(w, rel, abs, st, DQ_DOC_UNKNOWN, "", reason, 0);
}

/* Skips a file over its kind's size limit. */
static int skip_large(walker *w, const char *rel, const char *abs,
                      const struct stat *st, uint64_t max) {
  char lim[48], reason[160];
  if (max % (1u << 20) == 0)
    snprintf(lim, sizeof lim, "%llu MiB", (unsigned long long)(max >> 20));
  else
    snprintf(lim, sizeof lim, "%llu bytes", (unsigned long long)max);
  snprintf(reason, sizeof reason,
           "file is %lld bytes (%.1f MiB), over the limit of %s%s",
           (long long)st->st_size, (double)st->st_size / (1 << 20), lim,
           w->o->max_file_bytes ? "" : " for its kind");
  return report(w, rel, abs, st, DQ_DOC_UNKNOWN, "", reason, 1);
}

/* A regular file (st is of the file itself, after following links). */
static int visit_file(walker *w, const char *rel, const char *abs,
                      const struct stat *st) {
  if (st->st_size == 0)
    return skip(w, rel, abs, st, "empty file (0 bytes)");
  /* over every kind's limit: skipped unopened (a sparse 1 TB file) */
  uint64_t max_any = dq_max_file_bytes(w->o->max_file_bytes, DQ_DOC_UNKNOWN);
  if ((uint64_t)st->st_size > max_any)
    return skip_large(w, rel, abs, st, max_any);
  int fd = open(abs, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT
               ? skip(w, rel, abs, st, "vanished during the walk")
               : skip(w, rel, abs, st, "cannot open: %s", strerror(errno));
  unsigned char head[DQ_SNIFF_BYTES];
  ssize_t n;
  do
    n = pread(fd, head, sizeof head, 0);
  while (n < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  if (n < 0)
    return skip(w, rel, abs, st, "cannot read: %s", strerror(e));
  const char *lang = "";
  dq_doc_kind kind = dq_detect_kind(rel, head, (size_t)n, &lang);
  if (kind == DQ_DOC_UNKNOWN)
    return skip(w, rel, abs, st, "binary file");
  uint64_t max = dq_max_file_bytes(w->o->max_file_bytes, kind);
  if ((uint64_t)st->st_size > max)
    return skip_large(w, rel, abs, st, max);
  return report(w, rel, abs, st, kind, lang, NULL, 0);
}

static dq_status walk_dir(walker *w, const char *abs_dir, const char *rel_dir,
                          const struct stat *dst, unsigned depth);

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One directory entry. Returns DQ_OK to go on. */
static dq_status visit(walker *w, const char *abs, const char *rel,
                       const char *name, unsigned depth) {
  struct stat lst, st;
  if (lstat(abs, &lst) != 0)
    return errno == ENOENT
               ? (skip(w, rel, abs, NULL, "vanished during the walk"), DQ_OK)
               : (skip(w, rel, abs, NULL, "cannot stat: %s", strerror(errno)),
                  DQ_OK);
  int is_link = S_ISLNK(lst.st_mode);
  st = lst;
  if (is_link) {
    if (w->o->no_symlinks) {
      skip(w, rel, abs, NULL, "symlink (symlinks are not followed)");
      return DQ_OK;
    }
    char *real = realpath(abs, NULL);
    if (!real) {
      if (errno == ENOENT)
        skip(w, rel, abs, NULL, "dangling symlink");
      else
        skip(w, rel, abs, NULL, "cannot resolve symlink: %s",
             strerror(errno));
      return DQ_OK;
    }
    int inside = strncmp(real, w->root, w->root_len) == 0 &&
                 (real[w->root_len] == '/' || real[w->root_len] == '\0' ||
                  w->root_len == 1);
    if (!inside) {
      skip(w, rel, abs, NULL, "symlink points outside the root (-> %s)", real);
      free(real);
      return DQ_OK;
    }
    free(real);
    if (stat(abs, &st) != 0) {
      skip(w, rel, abs, NULL, "cannot stat symlink target: %s",
           strerror(errno));
      return DQ_OK;
    }
  }
  int is_dir = S_ISDIR(st.st_mode);
  if (is_dir && (in_names(name, w->o->skip_dirs ? w->o->skip_dirs
                                                : dq_walk_default_skip_dirs) ||
                 in_names(name, w->o->extra_skip_dirs))) {
    dq_log(w->o->log, DQ_LOG_DEBUG, "skip %s/: generated or vendor folder",
           rel);
    return DQ_OK;
  }
  const ign_list *why = NULL;
  if (ignored(w, rel, is_dir, &why)) {
    dq_log(w->o->log, DQ_LOG_DEBUG, "skip %s%s: ignored by %s%s%s", rel,
           is_dir ? "/" : "", why->base, why->base[0] ? "/" : "", why->file);
    return DQ_OK;
  }
  /* Hidden: tool state, editor and patch backups (.pc/, .idea/), secrets
   * (.env): reported, one line per folder, not walked. */
  if (name[0] == '.' && !w->o->hidden) {
    skip(w, rel, abs, is_dir ? NULL : &st, "hidden %s (--hidden takes it)",
         is_dir ? "folder" : "file");
    return DQ_OK;
  }
  if (is_dir) {
    dir_id id = {st.st_dev, st.st_ino};
    if (has_id(w->stack, w->n_stack, id)) {
      skip(w, rel, abs, NULL, "symlink loop (leads back to a folder above)");
      return DQ_OK;
    }
    if (is_link && has_id(w->seen, w->n_seen, id)) {
      skip(w, rel, abs, NULL, "symlink to a folder already walked");
      return DQ_OK;
    }
    if (depth + 1 > DQ_WALK_MAX_DEPTH) {
      skip(w, rel, abs, NULL, "folder nested deeper than %u levels",
           DQ_WALK_MAX_DEPTH);
      return DQ_OK;
    }
    return walk_dir(w, abs, rel, &st, depth + 1);
  }
  if (S_ISREG(st.st_mode)) {
    visit_file(w, rel, abs, &st);
    return DQ_OK;
  }
  skip(w, rel, abs, NULL, "not a regular file (%s)",
       S_ISFIFO(st.st_mode)   ? "fifo"
       : S_ISSOCK(st.st_mode) ? "socket"
                              : "device");
  return DQ_OK;
}

static dq_status walk_dir(walker *w, const char *abs_dir, const char *rel_dir,
                          const struct stat *dst, unsigned depth) {
  dir_id id = {dst->st_dev, dst->st_ino};
  if (grow_arr((void **)&w->stack, &w->cap_stack, w->n_stack + 1,
               sizeof id) ||
      grow_arr((void **)&w->seen, &w->cap_seen, w->n_seen + 1, sizeof id))
    return nomem(w);
  w->stack[w->n_stack++] = id;
  w->seen[w->n_seen++] = id;
  size_t keep = w->n_lists;
  char **names = NULL;
  size_t n_names = 0, cap = 0;
  dq_status st = DQ_OK;
  if (!w->o->no_ignore_files &&
      ((st = load_ignore(w, abs_dir, rel_dir, ".gitignore")) != DQ_OK ||
       (st = load_ignore(w, abs_dir, rel_dir, ".docqaignore")) != DQ_OK))
    goto done;
  DIR *d = opendir(abs_dir);
  if (!d) {
    if (depth == 0)
      st = dq_error_set(w->err, errno == ENOENT ? DQ_ERR_NOTFOUND : DQ_ERR_IO,
                        "%s: cannot read folder: %s", abs_dir,
                        strerror(errno));
    else
      skip(w, rel_dir, abs_dir, NULL, "cannot read folder: %s",
           strerror(errno));
    goto done;
  }
  struct dirent *de;
  while ((de = readdir(d))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    char *copy = strdup(de->d_name);
    if (!copy ||
        grow_arr((void **)&names, &cap, n_names + 1, sizeof *names)) {
      free(copy);
      closedir(d);
      st = nomem(w);
      goto done;
    }
    names[n_names++] = copy;
  }
  closedir(d);
  if (n_names) /* an empty folder's list is NULL */
    qsort(names, n_names, sizeof *names, cmp_names);
  for (size_t i = 0; i < n_names && st == DQ_OK && !w->stopped; i++) {
    char *abs = join(abs_dir, names[i]);
    char *rel = join(rel_dir, names[i]);
    if (!abs || !rel)
      st = nomem(w);
    else
      st = visit(w, abs, rel, names[i], depth);
    free(abs);
    free(rel);
  }
done:
  for (size_t i = 0; i < n_names; i++)
    free(names[i]);
  free(names);
  pop_lists(w, keep);
  w->n_stack--;
  return st;
}

dq_status dq_walk(const char *root, const dq_walk_opts *o, dq_walk_fn on_file,
                  void *user, dq_error *err) {
  static const dq_walk_opts defaults = {0};
  if (!root || !on_file)
    return dq_error_set(err, DQ_ERR_ARG, "dq_walk: NULL root or callback");
  if (!o)
    o = &defaults;
  walker w = {0};
  w.o = o;
  w.fn = on_file;
  w.user = user;
  w.err = err;
  char *real = realpath(root, NULL);
  if (!real)
    return dq_error_set(err, errno == ENOENT ? DQ_ERR_NOTFOUND : DQ_ERR_IO,
                        "%s: %s", root, strerror(errno));
  char *base = o->base ? realpath(o->base, NULL) : NULL;
  size_t nb = base ? strlen(base) : 0;
  if (o->base && (!base || strncmp(real, base, nb) != 0 ||
                  (real[nb] != '/' && real[nb] != '\0' && nb != 1))) {
    dq_status bs =
        dq_error_set(err, DQ_ERR_ARG, "%s: not inside %s", root, o->base);
    free(base);
    free(real);
    return bs;
  }
  w.root = base ? base : real;
  w.root_len = strlen(w.root);
  /* rel_path of the root within base ("" without one) */
  const char *rel0 = !base || !real[nb] ? "" : real + nb + (nb != 1);
  dq_status st = DQ_OK;
  struct stat s;
  if (base && rel0[0] && !o->no_ignore_files) {
    /* the ignore files of base and of each folder down to the root's
     * parent, as a walk from base would have read them */
    char *dir = strdup(base);
    for (const char *p = rel0; dir && st == DQ_OK;) {
      size_t at = (size_t)(p - rel0);
      char *rel_dir = strndup(rel0, at ? at - 1 : 0);
      if (!rel_dir) {
        st = nomem(&w);
        break;
      }
      if ((st = load_ignore(&w, dir, rel_dir, ".gitignore")) == DQ_OK)
        st = load_ignore(&w, dir, rel_dir, ".docqaignore");
      free(rel_dir);
      const char *slash = strchr(p, '/');
      if (!slash)
        break; /* the root's own are read by walk_dir */
      char *next = malloc(strlen(base) + (size_t)(slash - rel0) + 2);
      if (next)
        sprintf(next, "%s%s%.*s", base, nb == 1 ? "" : "/", (int)(slash - rel0),
                rel0);
      free(dir);
      dir = next;
      p = slash + 1;
    }
    if (!dir && st == DQ_OK)
      st = nomem(&w);
    free(dir);
  }
  if (st == DQ_OK && stat(real, &s) != 0) {
    st = dq_error_set(err, DQ_ERR_IO, "%s: cannot stat: %s", root,
                      strerror(errno));
  } else if (st != DQ_OK) {
    /* an ignore file above the root could not be read into memory */
  } else if (S_ISDIR(s.st_mode)) {
    st = walk_dir(&w, real, rel0, &s, 0);
  } else if (S_ISREG(s.st_mode)) {
    const char *name = strrchr(real, '/');
    visit_file(&w, base ? rel0 : name ? name + 1 : real, real, &s);
  } else {
    st = dq_error_set(err, DQ_ERR_ARG, "%s: not a folder or regular file",
                      root);
  }
  if (st == DQ_OK && w.stopped)
    st = dq_error_set(err, DQ_ERR_INTERRUPTED, "%s: walk stopped by caller",
                      root);
  pop_lists(&w, 0);
  free(w.lists);
  free(w.stack);
  free(w.seen);
  free(real);
  free(base);
  return st;
}
