/*
 * fuzz_answer.c - libFuzzer harness for what ask and chat do with the
 * model's text, which can be any bytes: the grounding check
 * (pipeline/ground.c), the loop and echo cuts (pipeline/loop.c), and
 * citation marking and inference (pipeline/cite.c). The input is the
 * answer, then after a NUL the question, then after another NUL a source
 * text (the passages'; missing parts are empty). Checks: the verdict
 * agrees with the counts, the unsupported names are words of the answer,
 * the cuts lie within the text, citations are marked only as 0, 1 or 2.
 * Crashes, sanitizer reports, leaks and broken invariants are findings.
 * cite.c's token counting needs a model and is not fuzzed here.
 */
#include "pipeline_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cite.c counts tokens with the model, for passage budgets; nothing
 * fuzzed here counts tokens, and the engine is not linked (its kernels
 * build with GCC only). */
dq_status dq_model_tokenize(dq_model *m, const char *text, size_t len,
                            int add_special, int32_t **tokens,
                            int *n_tokens) {
  (void)m, (void)text, (void)len, (void)add_special, (void)tokens,
      (void)n_tokens;
  fprintf(stderr, "fuzz_answer: dq_model_tokenize is not reached\n");
  abort();
}

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "invariant broken: %s\n", what);
    abort();
  }
}

/* The part of data[0..size) after `skip` NULs, as a new string. */
static char *part(const uint8_t *data, size_t size, int skip) {
  size_t a = 0;
  for (int k = 0; k < skip; k++) {
    const uint8_t *z = memchr(data + a, 0, size - a);
    a = z ? (size_t)(z - data) + 1 : size;
  }
  const uint8_t *z = memchr(data + a, 0, size - a);
  size_t b = z ? (size_t)(z - data) : size;
  char *s = malloc(b - a + 1);
  if (s) {
    memcpy(s, data + a, b - a);
    s[b - a] = '\0';
  }
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *answer = part(data, size, 0), *question = part(data, size, 1),
       *source = part(data, size, 2);
  if (!answer || !question || !source)
    goto done;

  const char *src[3] = {source, NULL, question};
  pl_grounding g;
  check(pl_ground_check(answer, question, src, 3, &g) == 0, "check runs");
  check(g.n_unsupported >= 0 && g.n_unsupported <= g.n_new,
        "unsupported <= new");
  check(memchr(g.names, 0, sizeof g.names) != NULL, "names terminated");
  if (g.verdict == PL_RESTATES)
    check(g.n_new == 0, "restates adds nothing");
  if (g.verdict == PL_GROUNDED)
    check(g.n_new > g.n_unsupported && !g.names[0],
          "grounded adds held words, names none");
  if (g.names[0]) {
    check(g.name_at < strlen(answer), "the first name is in the answer");
    /* each name is a run of the answer's bytes */
    for (const char *p = g.names; *p;) {
      size_t n = strcspn(p, ",");
      char w[160];
      memcpy(w, p, n);
      w[n] = '\0';
      check(strstr(answer, w) != NULL, "a name is the answer's");
      p += n;
      p += strspn(p, ", ");
    }
  } else {
    check(g.name_at == SIZE_MAX, "no name, no offset");
  }
  pl_ground_name(g.verdict);

  size_t n = strlen(answer), hold = 0;
  check(pl_loop_start(answer, n) <= n, "loop cut within the text");
  check(pl_echo_start(answer, n, &hold) <= n && hold <= n,
        "echo cut within the text");

  dq_citation c[4];
  dq_hit h[4];
  memset(c, 0, sizeof c);
  memset(h, 0, sizeof h);
  for (int i = 0; i < 4; i++)
    h[i].text = i % 2 ? source : question;
  pl_cite_mark(answer, c, 4);
  pl_cite_infer(answer, question, h, c, 4);
  for (int i = 0; i < 4; i++)
    check(c[i].cited >= 0 && c[i].cited <= 2, "cited is 0, 1 or 2");
done:
  free(answer);
  free(question);
  free(source);
  return 0;
}
