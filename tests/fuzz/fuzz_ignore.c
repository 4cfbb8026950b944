/*
 * fuzz_ignore.c - libFuzzer harness for the gitignore rules of walk.c: the
 * first line of the input is a path, the rest an ignore file; every rule is
 * parsed and matched against the path (anchored and by base name). walk.c's
 * parser and matcher are file-local, so this harness includes the file.
 * Findings: crashes, sanitizer reports, and runs slower than -timeout
 * (pattern backtracking is meant to be bounded by GLOB_MAX_STEPS).
 */
#include "../../ingest/walk.c"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n) {
  const char *s = (const char *)data;
  const char *nl = memchr(s, '\n', n);
  size_t path_len = nl ? (size_t)(nl - s) : n;
  char *path = strndup(s, path_len);
  if (!path)
    return 0;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t at = nl ? path_len + 1 : n; at < n;) {
    const char *e = memchr(s + at, '\n', n - at);
    size_t end = e ? (size_t)(e - s) : n;
    ign_rule r;
    if (parse_rule(s + at, end - at, &r) > 0) {
      long steps = GLOB_MAX_STEPS;
      (void)gmatch(r.pat, r.anchored ? path : base, r.pat, &steps);
      free(r.pat);
    }
    at = end + 1;
  }
  free(path);
  return 0;
}
