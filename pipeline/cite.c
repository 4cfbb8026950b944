/*
 * cite.c - numbered sources in prompts, shared by ask, chat and
 * xref --explain: counting a source's tokens against the context budget,
 * and finding which sources a generated text cites ("[2]", or inferred from
 * its terms when it cites none). Building the prompts is each caller's.
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int pl_count_tokens(dq_model *m, const char *s) {
  int32_t *t = NULL;
  int n = 0;
  if (dq_model_tokenize(m, s, strlen(s), 0, &t, &n) != DQ_OK)
    return (int)(strlen(s) / 3 + 1); /* conservative if tokenizing fails */
  free(t);
  return n;
}

void pl_cite_mark(const char *answer, dq_citation *c, size_t n) {
  for (const char *p = answer; (p = strchr(p, '[')) != NULL;) {
    p++;
    for (;;) {
      while (*p == ' ')
        p++;
      if (!isdigit((unsigned char)*p))
        break;
      long v = strtol(p, (char **)&p, 10);
      if (v >= 1 && (size_t)v <= n)
        c[v - 1].cited = 1;
      while (*p == ' ')
        p++;
      if (*p != ',')
        break;
      p++;
    }
  }
}

/* Lowercased copy of the word at s[0..n) into buf (cap bytes). */
static void lower_word(char *buf, size_t cap, const char *s, size_t n) {
  if (n >= cap)
    n = cap - 1;
  for (size_t i = 0; i < n; i++)
    buf[i] = (char)tolower((unsigned char)s[i]);
  buf[n] = '\0';
}

/* Case-insensitive whole-word search. */
static int has_word(const char *text, const char *w) {
  size_t n = strlen(w);
  for (const char *p = text; (p = strcasestr(p, w)) != NULL; p++) {
    int left = p == text || !isalnum((unsigned char)p[-1]);
    int right = !isalnum((unsigned char)p[n]);
    if (left && right)
      return 1;
  }
  return 0;
}

/* The key terms are numbers of 3+ characters and words of 5+ letters that
 * are not in the question: words every passage shares with the question
 * would pick a passage by length, not by what the answer says. */
void pl_cite_infer(const char *answer, const char *question,
                   const dq_hit *hits, dq_citation *c, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (c[i].cited)
      return;
  int score[64] = {0};
  size_t m = n < 64 ? n : 64;
  char seen[64][32];
  size_t n_seen = 0;
  for (const char *p = answer; *p;) {
    while (*p && !isalnum((unsigned char)*p))
      p++;
    const char *s = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_'))
      p++;
    size_t len = (size_t)(p - s);
    if (len == 0)
      continue;
    char w[32];
    lower_word(w, sizeof w, s, len);
    int numeric = isdigit((unsigned char)w[0]);
    if (len < (numeric ? 3u : 5u) || has_word(question, w))
      continue;
    int dup = 0;
    for (size_t i = 0; i < n_seen && !dup; i++)
      dup = !strcmp(seen[i], w);
    if (dup || n_seen == 64)
      continue;
    memcpy(seen[n_seen++], w, sizeof w);
    for (size_t i = 0; i < m; i++)
      if (has_word(hits[i].text, w))
        score[i]++;
  }
  size_t best = 0;
  for (size_t i = 1; i < m; i++)
    if (score[i] > score[best])
      best = i;
  if (m && score[best] >= 2)
    c[best].cited = 2;
}
