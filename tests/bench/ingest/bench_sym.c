/*
 * bench_sym.c - drives dq_chunk_document without the readers, for the
 * symbol benchmark (run.sh) and for looking at what the chunker makes of one
 * file. Each file is read as-is into a dq_text with one mark per line.
 *
 *   dq_bench_sym defs DIR [EXT,EXT...]
 *                            every definition as "name<TAB>line<TAB>path<TAB>
 *                            kind" (path relative to DIR) on stdout; totals
 *                            (files, MiB, symbols, refs, chunks, ms) on
 *                            stderr. EXTs (e.g. "c,h") limit the files.
 *   dq_bench_sym dump FILE [max_tokens]   chunks, symbols and refs of FILE
 */
#include "ingest.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct totals {
  size_t files, bytes, symbols, refs, chunks;
} totals;

static dq_text *make_text(char *buf, size_t n, const char *path) {
  dq_text *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->text = buf;
  t->n_bytes = n;
  t->kind = dq_chunk_lang_for_path(path) ? DQ_DOC_CODE : DQ_DOC_TEXT;
  const char *lang = dq_chunk_lang_for_path(path);
  snprintf(t->lang, sizeof t->lang, "%s", lang ? lang : "");
  size_t cap = 1;
  for (const char *q = buf; (q = memchr(q, '\n', (size_t)(buf + n - q)));
       q++)
    cap++;
  t->marks = malloc(cap * sizeof *t->marks);
  if (!t->marks) {
    free(t);
    return NULL;
  }
  uint32_t line = 1;
  t->marks[t->n_marks++] = (dq_srcmark){0, 1, 0};
  for (const char *q = buf; n && (q = memchr(q, '\n', (size_t)(buf + n - 1 - q)));
       q++)
    t->marks[t->n_marks++] = (dq_srcmark){(size_t)(q - buf) + 1, ++line, 0};
  return t;
}

static int run_file(const char *path, const char *rel, int dump,
                    uint32_t max_tokens, totals *tot) {
  char *buf;
  size_t n;
  dq_error err = {0};
  if (dq_read_file(path, (size_t)1 << 30, &buf, &n, &err) != DQ_OK) {
    fprintf(stderr, "%s\n", dq_error_msg(&err));
    return 1;
  }
  dq_text *t = make_text(buf, n, path);
  if (!t) {
    free(buf);
    return 1;
  }
  dq_chunk_opts o = {.max_tokens = max_tokens};
  dq_doc_parts *p;
  if (dq_chunk_document(t, path, &o, &p, &err) != DQ_OK) {
    fprintf(stderr, "%s: %s\n", path, dq_error_msg(&err));
    dq_text_free(t);
    return 1;
  }
  if (dump) {
    printf("kind %s\n", dq_chunk_kind_name(dq_chunk_detect(t, path)));
    for (size_t i = 0; i < p->n_chunks; i++)
      printf("chunk %zu bytes %zu-%zu lines %u-%u tokens %u section \"%s\"\n",
             i, p->chunks[i].byte_start, p->chunks[i].byte_end,
             p->chunks[i].line_start, p->chunks[i].line_end,
             p->chunks[i].n_tokens, p->chunks[i].section);
    for (size_t i = 0; i < p->n_symbols; i++)
      printf("sym %s %s %u:%u scope \"%s\"\n", p->symbols[i].kind,
             p->symbols[i].name, p->symbols[i].line, p->symbols[i].col,
             p->symbols[i].scope);
    for (size_t i = 0; i < p->n_refs; i++)
      printf("ref %s %s %u:%u caller \"%s\"\n", p->refs[i].kind,
             p->refs[i].name, p->refs[i].line, p->refs[i].col,
             p->refs[i].caller);
  } else {
    for (size_t i = 0; i < p->n_symbols; i++)
      printf("%s\t%u\t%s\t%s\n", p->symbols[i].name, p->symbols[i].line, rel,
             p->symbols[i].kind);
  }
  tot->files++;
  tot->bytes += n;
  tot->symbols += p->n_symbols;
  tot->refs += p->n_refs;
  tot->chunks += p->n_chunks;
  dq_doc_parts_free(p);
  dq_text_free(t);
  return 0;
}

static int ext_ok(const char *name, const char *exts) {
  const char *dot = strrchr(name, '.');
  if (!dq_chunk_lang_for_path(name) || !dot)
    return 0;
  if (!exts)
    return 1;
  size_t n = strlen(dot + 1);
  for (const char *e = exts; *e;) {
    const char *comma = strchr(e, ',');
    size_t len = comma ? (size_t)(comma - e) : strlen(e);
    if (len == n && strncmp(e, dot + 1, n) == 0)
      return 1;
    e += len + (comma != NULL);
  }
  return 0;
}

static int walk(const char *root, const char *rel, const char *exts,
                totals *tot) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
  DIR *d = opendir(dir);
  if (!d)
    return 1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char sub[4096], full[8192];
    snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
    snprintf(full, sizeof full, "%s/%s", root, sub);
    struct stat st;
    if (lstat(full, &st) != 0)
      continue;
    if (S_ISDIR(st.st_mode))
      rc |= walk(root, sub, exts, tot);
    else if (S_ISREG(st.st_mode) && ext_ok(e->d_name, exts))
      rc |= run_file(full, sub, 0, 0, tot);
  }
  closedir(d);
  return rc;
}

int main(int argc, char **argv) {
  totals tot = {0};
  if (argc >= 3 && strcmp(argv[1], "dump") == 0)
    return run_file(argv[2], argv[2], 1,
                    argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 0, &tot);
  if ((argc == 3 || argc == 4) && strcmp(argv[1], "defs") == 0) {
    double t0 = dq_now_ms();
    int rc = walk(argv[2], "", argc == 4 ? argv[3] : NULL, &tot);
    double ms = dq_now_ms() - t0;
    fprintf(stderr,
            "dq_bench_sym: %zu files, %.1f MiB, %zu symbols, %zu refs, %zu "
            "chunks, %.0f ms\n",
            tot.files, tot.bytes / 1048576.0, tot.symbols, tot.refs, tot.chunks,
            ms);
    return rc;
  }
  fprintf(stderr,
          "usage: dq_bench_sym defs DIR [EXT,...] | dump FILE [max_tokens]\n");
  return 2;
}
