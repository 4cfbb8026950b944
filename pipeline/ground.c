/*
 * ground.c - whether an answer's words come from what the model read.
 *
 * The 135M answer model can write a name no passage holds ("Article 3 of
 * the Contracts and Mutual Non-Disclosure Agreement Act (CNMDA)" for
 * "which law governs the NDA?", where the passage says Delaware), or give
 * the question back with a label ("[1] Apache-2.0:107-113 (4)"). The check
 * is lexical: the terms the answer adds to the question, each looked up in
 * the texts the model read (passages, their labels, the index's facts, the
 * conversation). A name, number or identifier that none holds, or mostly
 * words from nowhere, is unsupported; nothing added, or only the number of
 * a clause, is a restatement.
 * pl_answer (ask.c) then answers with the quote instead.
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Words an answer may add without saying anything: how the model frames
 * an answer, and the instruction's own words (an answer that repeats the
 * instruction restates it). They count as the question's. */
static const char scaffold[] =
    "answer answers question passage passages sentence relevant according "
    "based yes the following given above using only citing cite numbered "
    "documents user says said information";

/* Phrases of an answer that says the passages do not hold the answer, as
 * the instruction asks it to: kept as it is. */
static const char *const declines[] = {
    "not contain",      "does not say",  "do not say",     "not mention",
    "no information",   "cannot answer", "can't answer",   "not specified",
    "not provided",     "not stated",    "do not specify", "does not specify",
    "unable to answer", "not clear from"};

/* A set of term keys, as sorted 64-bit hashes (dq_fnv1a). */
typedef struct key_set {
  uint64_t *h;
  size_t n, cap;
  int oom;
} key_set;

static uint64_t key_hash(const char *k) { return dq_fnv1a(k, strlen(k)); }

static void set_add(const char *key, const char *word, size_t len, void *user) {
  (void)word;
  (void)len;
  key_set *s = user;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 256;
    uint64_t *h = realloc(s->h, cap * sizeof *h);
    if (!h) {
      s->oom = 1;
      return;
    }
    s->h = h;
    s->cap = cap;
  }
  s->h[s->n++] = key_hash(key);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void set_seal(key_set *s) {
  if (s->n)
    qsort(s->h, s->n, sizeof *s->h, cmp_u64);
}

static int set_has(const key_set *s, uint64_t h) {
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->h[mid] < h)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < s->n && s->h[lo] == h;
}

/* Calls fn(key, word, len, user) for each number of s: a run of digits
 * with single ',' or '.' between them, keyed "#" and its digits and points
 * ("15,450" and "15450" meet; "1.0" and "10" do not). pl_each_term skips
 * words under 3 letters, and "72" or "30" is often all an answer adds. */
static void each_number(const char *s, pl_term_fn fn, void *user) {
  for (const char *p = s; *p;) {
    if (!isdigit((unsigned char)*p) ||
        (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
      p++;
      continue;
    }
    const char *w = p;
    char key[PL_TERM_BYTES] = "#";
    size_t k = 1;
    while (
        isdigit((unsigned char)*p) ||
        ((*p == ',' || *p == '.') && isdigit((unsigned char)p[1]) && p > w)) {
      if (*p != ',' && k + 1 < sizeof key)
        key[k++] = *p;
      p++;
    }
    key[k] = '\0';
    if (isalpha((unsigned char)*p) || *p == '_') { /* "3rd", "sha256x" */
      while (isalnum((unsigned char)*p) || *p == '_')
        p++;
      continue;
    }
    fn(key, w, (size_t)(p - w), user);
  }
}

/* Adds to s the clause numbers that open lines of text ("7.2 A Break
 * Notice ...", "1. DEFINITIONS": pl_clause_number's), keyed as each_number
 * keys them. */
static void set_clauses(key_set *s, const char *text) {
  for (const char *p = text; p && *p;) {
    p += strspn(p, " \t");
    size_t k = pl_clause_number(p, strcspn(p, "\n"));
    if (k) {
      char num[16]; /* k <= 12 */
      memcpy(num, p, k);
      num[k] = '\0';
      each_number(num, set_add, s);
    }
    p = strchr(p, '\n');
    p = p ? p + 1 : NULL;
  }
}

static void set_text(key_set *s, const char *text) {
  if (!text)
    return;
  pl_each_term(text, strlen(text), set_add, s);
  each_number(text, set_add, s);
}

/* Blanks in a (changed in place) what only points at passages: "[2]",
 * "[1, 3]", "(4)", and any word holding ':' before a digit
 * ("src/tax.c:12-20", "Apache-2.0:107-113"). */
static void blank_labels(char *a) {
  for (char *p = a; *p; p++) {
    char close = *p == '[' ? ']' : *p == '(' ? ')' : 0;
    if (!close)
      continue;
    size_t n = 1 + strspn(p + 1, "0123456789, -");
    if (n > 1 && p[n] == close)
      memset(p, ' ', n + 1);
  }
  for (char *p = a; *p;) {
    if (isspace((unsigned char)*p)) {
      p++;
      continue;
    }
    char *w = p;
    int label = 0;
    while (*p && !isspace((unsigned char)*p)) {
      label |= *p == ':' && isdigit((unsigned char)p[1]);
      p++;
    }
    if (label)
      memset(w, ' ', (size_t)(p - w));
  }
}

/* 1 when word[0..len) of text reads as a name: a digit, '_' or a capital
 * inside it (CNMDA, div_round, 2026), or a capital first where no
 * sentence starts. */
static int name_like(const char *text, const char *word, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)word[i];
    if (isdigit(c) || c == '_' || (i > 0 && isupper(c)))
      return 1;
  }
  if (!isupper((unsigned char)word[0]))
    return 0;
  const char *p = word;
  while (p > text && strchr(" \t\"'`*([-#>", p[-1]))
    p--;
  return !(p == text || strchr(".!?:;\n", p[-1]));
}

typedef struct answer_walk {
  const char *text; /* the answer, labels blanked */
  const key_set *question, *sources, *clauses;
  uint64_t seen[256];
  size_t n_seen;
  pl_grounding *g;
  size_t names_len;
  int n_clauses; /* new terms that are the sources' clause numbers */
} answer_walk;

static void add_name(answer_walk *w, const char *word, size_t len) {
  pl_grounding *g = w->g;
  for (const char *p = g->names; *p;) {
    size_t n = strcspn(p, ",");
    if (n == len && !strncmp(p, word, len))
      return;
    p += n;
    p += strspn(p, ", ");
  }
  size_t need = (w->names_len ? 2 : 0) + len;
  if (w->names_len + need >= sizeof g->names)
    return;
  if (w->names_len) {
    memcpy(g->names + w->names_len, ", ", 2);
    w->names_len += 2;
  }
  memcpy(g->names + w->names_len, word, len);
  w->names_len += len;
  g->names[w->names_len] = '\0';
}

static void answer_term(const char *key, const char *word, size_t len,
                        void *user) {
  answer_walk *w = user;
  if (key[0] != '#' && key[strspn(key, "0123456789")] == '\0')
    return; /* a number: each_number's */
  uint64_t h = key_hash(key);
  if (set_has(w->question, h))
    return;
  for (size_t i = 0; i < w->n_seen; i++)
    if (w->seen[i] == h)
      return;
  if (w->n_seen == sizeof w->seen / sizeof *w->seen)
    return;
  w->seen[w->n_seen++] = h;
  w->g->n_new++;
  w->n_clauses += set_has(w->clauses, h);
  if (set_has(w->sources, h))
    return;
  w->g->n_unsupported++;
  /* the text's last word may be cut by the token limit ("Prem") */
  int last = word[len + strspn(word + len, " \t\n")] == '\0';
  if (name_like(w->text, word, len) && !last) {
    add_name(w, word, len);
    size_t at = (size_t)(word - w->text);
    if (at < w->g->name_at)
      w->g->name_at = at;
  }
}

int pl_ground_check(const char *answer, const char *question,
                    const char *const *sources, size_t n, pl_grounding *g) {
  memset(g, 0, sizeof *g);
  g->name_at = SIZE_MAX;
  for (size_t i = 0; i < sizeof declines / sizeof *declines; i++)
    if (strcasestr(answer, declines[i])) {
      g->verdict = PL_DECLINES;
      return 0;
    }
  key_set q = {0}, src = {0}, cl = {0};
  char *a = strdup(answer);
  set_text(&q, question);
  set_text(&q, scaffold);
  for (size_t i = 0; i < n; i++) {
    set_text(&src, sources[i]);
    set_clauses(&cl, sources[i]);
  }
  if (!a || q.oom || src.oom || cl.oom) {
    free(a);
    free(q.h);
    free(src.h);
    free(cl.h);
    return -1;
  }
  set_seal(&q);
  set_seal(&src);
  set_seal(&cl);
  blank_labels(a);
  answer_walk w = {
      .text = a, .question = &q, .sources = &src, .clauses = &cl, .g = g};
  pl_each_term(a, strlen(a), answer_term, &w);
  each_number(a, answer_term, &w);
  free(a);
  free(q.h);
  free(src.h);
  free(cl.h);
  /* nothing added, or only clause numbers ("The answer is: 7.2"): the
   * answer points at a clause without saying what it says */
  if (g->n_new == w.n_clauses)
    g->verdict = PL_RESTATES;
  else if (g->names[0] || g->n_unsupported == g->n_new ||
           (g->n_unsupported >= 3 && 2 * g->n_unsupported >= g->n_new))
    g->verdict = PL_UNSUPPORTED;
  else
    g->verdict = PL_GROUNDED;
  return 0;
}

const char *pl_ground_name(pl_ground_verdict v) {
  switch (v) {
  case PL_GROUNDED:
    return "grounded";
  case PL_RESTATES:
    return "restates";
  case PL_UNSUPPORTED:
    return "unsupported";
  case PL_DECLINES:
    return "declines";
  }
  return "grounded";
}
