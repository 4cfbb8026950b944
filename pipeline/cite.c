/*
 * cite.c - numbered sources in prompts, shared by ask, chat and
 * xref --explain: counting a source's tokens against the context budget,
 * finding which sources a generated text cites ("[2]", or inferred from
 * its terms when it cites none), and trimming a source to the run of its
 * lines that holds the question's terms, so a prompt budget buys more
 * passages (prefill dominates an answer's latency on a CPU). Building the
 * prompts is each caller's.
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int pl_count_tokens(dq_model *m, const char *s) {
  int32_t *t = NULL;
  int n = 0;
  if (dq_model_tokenize(m, s, strlen(s), 0, &t, &n) != DQ_OK)
    return (int)(strlen(s) / 3 + 1); /* conservative if tokenizing fails */
  free(t);
  return n;
}

const char *dq_page_unit(const char *kind) {
  if (!kind)
    return "page";
  if (!strcmp(kind, "pptx") || !strcmp(kind, "odp"))
    return "slide";
  if (!strcmp(kind, "xlsx") || !strcmp(kind, "ods") || !strcmp(kind, "xls"))
    return "sheet";
  return "page";
}

const char *dq_where(char *buf, const char *unit, int32_t page,
                     int32_t line_start, int32_t line_end) {
  if (!page)
    snprintf(buf, DQ_WHERE_MAX, ":%d-%d", line_start, line_end);
  else if (!unit || !strcmp(unit, "page"))
    snprintf(buf, DQ_WHERE_MAX, " p.%d", page);
  else if (strcmp(unit, "sheet") || line_start <= 0)
    snprintf(buf, DQ_WHERE_MAX, " %s %d", unit, page);
  else if (line_end <= line_start)
    snprintf(buf, DQ_WHERE_MAX, " sheet %d row %d", page, line_start);
  else
    snprintf(buf, DQ_WHERE_MAX, " sheet %d rows %d-%d", page, line_start,
             line_end);
  return buf;
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

int pl_has_word(const char *text, const char *w) {
  size_t n = strlen(w);
  for (const char *p = text; (p = strcasestr(p, w)) != NULL; p++) {
    int left = p == text || !isalnum((unsigned char)p[-1]);
    int right = !isalnum((unsigned char)p[n]);
    if (left && right)
      return 1;
  }
  return 0;
}

/* The key terms are what the answer adds to the question: numbers of 2+
 * digits, identifiers (with '_') and words of 5+ letters that are not in
 * the question; words every passage shares with the question would pick a
 * passage by length, not by what the answer says. A passage scores 1 per
 * key term it holds, 2 when no other passage holds it (a distinctive
 * number or name such as "72" or "div_round" says where the answer came
 * from on its own); the best-ranked passage with the highest score, at
 * least 2, is inferred. */
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
    while (*p && !isalnum((unsigned char)*p) && *p != '_')
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
    int ident = memchr(w, '_', strlen(w)) != NULL;
    size_t min_len = numeric ? 2u : ident ? 3u : 5u;
    if (len < min_len || pl_has_word(question, w))
      continue;
    int dup = 0;
    for (size_t i = 0; i < n_seen && !dup; i++)
      dup = !strcmp(seen[i], w);
    if (dup || n_seen == 64)
      continue;
    memcpy(seen[n_seen++], w, sizeof w);
    size_t n_hold = 0, holder = 0;
    for (size_t i = 0; i < m; i++)
      if (pl_has_word(hits[i].text, w)) {
        n_hold++;
        holder = i;
        score[i]++;
      }
    if (n_hold == 1)
      score[holder]++;
  }
  size_t best = 0;
  for (size_t i = 1; i < m; i++)
    if (score[i] > score[best])
      best = i;
  if (m && score[best] >= 2)
    c[best].cited = 2;
}

/* ---- Trimming passages to the lines the question is about ---------------- */

/* Words too common in questions to say which lines matter; anything else
 * that is common in the passages gets a low idf anyway. */
static const char *const stop_words[] = {
    "about", "also", "and", "any", "are", "can", "did", "does", "for", "from",
    "had", "has", "have", "how", "into", "its", "many", "much", "not", "that",
    "the", "their", "there", "these", "they", "this", "those", "under",
    "was", "were", "what", "when", "where", "which", "who", "why", "with"};

/* The key a word is matched by: lower case; identifiers (with '_' or
 * digits) whole, so tax_compute_line does not match tax_category; other
 * words without a plural s, -ing or -ed and a final e, then cut to
 * TERM_STEM letters, so give/gives/giving, terminate/termination and
 * notify/notification meet. Returns 0 for words that are no term (under 3
 * letters but for two capitals, stop words). */
#define TERM_STEM 5
static int term_key(const char *s, size_t n, char out[PL_TERM_BYTES]) {
  /* two capitals are a code or an abbreviation ("the NL tax table", "UK
   * GDPR"), not a short word */
  int caps2 = n == 2 && isupper((unsigned char)s[0]) &&
              isupper((unsigned char)s[1]);
  if ((n < 3 && !caps2) || n >= PL_TERM_BYTES)
    return 0;
  int ident = 0;
  for (size_t i = 0; i < n; i++) {
    out[i] = (char)tolower((unsigned char)s[i]);
    ident |= out[i] == '_' || isdigit((unsigned char)out[i]);
  }
  out[n] = '\0';
  for (size_t i = 0; i < sizeof stop_words / sizeof *stop_words; i++)
    if (!strcmp(out, stop_words[i]))
      return 0;
  if (!ident) {
    if (n > 3 && out[n - 1] == 's' && out[n - 2] != 's')
      n--;
    if (n >= 6 && !memcmp(out + n - 3, "ing", 3))
      n -= 3;
    else if (n >= 6 && !memcmp(out + n - 2, "ed", 2))
      n -= 2;
    if (n >= 4 && out[n - 1] == 'e')
      n--;
    out[n < TERM_STEM ? n : TERM_STEM] = '\0';
  }
  return 1;
}

/* The bytes of the word character at p (< end): an ASCII letter, digit
 * or '_', or in UTF-8 a Latin letter (U+00C0..U+024F but for the signs
 * U+00D7, U+00F7) or a combining mark (U+0300..U+036F); 0 for any other
 * (punctuation such as U+2019 or U+2014 separates words). */
static size_t word_char(const unsigned char *p, const unsigned char *end) {
  if (isalnum(*p) || *p == '_')
    return 1;
  if (*p < 0xc3 || *p > 0xcd || p + 1 >= end || (p[1] & 0xc0) != 0x80)
    return 0;
  unsigned c = (unsigned)(*p & 0x1f) << 6 | (p[1] & 0x3f);
  return ((c >= 0xc0 && c <= 0x24f && c != 0xd7 && c != 0xf7) ||
          (c >= 0x300 && c <= 0x36f))
             ? 2
             : 0;
}

void pl_each_term(const char *s, size_t n, pl_term_fn fn, void *user) {
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  while (p < end) {
    size_t k;
    while (p < end && !word_char(p, end))
      p++;
    const unsigned char *w = p;
    int ascii = 1;
    while (p < end && (k = word_char(p, end))) {
      ascii &= k == 1;
      p += k;
    }
    char key[PL_TERM_BYTES], folded[PL_TERM_BYTES];
    size_t len = (size_t)(p - w);
    const char *word = (const char *)w;
    if (!ascii && len < sizeof folded) {
      len = dq_index_fold(word, len, folded, sizeof folded);
      word = folded;
    }
    if (len && term_key(word, len, key))
      fn(key, (const char *)w, (size_t)(p - w), user);
  }
}

static int term_index(const pl_terms *t, const char *key) {
  for (int i = 0; i < t->n; i++)
    if (!strcmp(t->key[i], key))
      return i;
  return -1;
}

static void add_question_term(const char *key, const char *word, size_t len,
                              void *user) {
  (void)word;
  (void)len;
  pl_terms *t = user;
  if (t->n < PL_MAX_TERMS && term_index(t, key) < 0)
    strcpy(t->key[t->n++], key);
}

struct line_mask {
  const pl_terms *t;
  uint32_t mask;
};

static void mark_term(const char *key, const char *word, size_t len,
                      void *user) {
  (void)word;
  (void)len;
  struct line_mask *lm = user;
  int i = term_index(lm->t, key);
  if (i >= 0)
    lm->mask |= (uint32_t)1 << i;
}

static uint32_t line_terms(const pl_terms *t, const char *s, size_t n) {
  struct line_mask lm = {t, 0};
  pl_each_term(s, n, mark_term, &lm);
  return lm.mask;
}

/* The next line of text at *p (without its '\n'); advances *p past it. */
static size_t next_line(const char **p, const char **line) {
  *line = *p;
  const char *nl = strchr(*p, '\n');
  size_t n = nl ? (size_t)(nl - *p) : strlen(*p);
  *p += n + (nl != NULL);
  return n;
}

/* Words that after "how" ask for an amount, not a topic: "how long is
 * the Disclosure Period" is not about lines that say "long" ("for as long
 * as it remains a trade secret"). */
static const char *const how_words[] = {"long", "soon",    "often",     "far",
                                        "old",  "big",     "large",     "early",
                                        "late", "quickly", "frequently"};

/* Blanks in q (NUL-terminated, changed in place) each word of how_words
 * that follows "how". */
static void blank_how_words(char *q) {
  int after_how = 0;
  for (char *p = q; *p;) {
    if (!isalpha((unsigned char)*p)) {
      p++;
      continue;
    }
    char *w = p;
    while (isalpha((unsigned char)*p))
      p++;
    size_t n = (size_t)(p - w);
    int blank = 0;
    for (size_t i = 0; after_how && i < sizeof how_words / sizeof *how_words;
         i++)
      blank |= strlen(how_words[i]) == n && !strncasecmp(w, how_words[i], n);
    if (blank)
      memset(w, ' ', n);
    after_how = n == 3 && !strncasecmp(w, "how", 3);
  }
}

void pl_terms_init(pl_terms *t, const char *question, const dq_hit *hits,
                   size_t n_hits) {
  memset(t, 0, sizeof *t);
  char *q = strdup(question);
  if (q)
    blank_how_words(q);
  const char *qs = q ? q : question;
  pl_each_term(qs, strlen(qs), add_question_term, t);
  free(q);
  /* BM25's idf with the candidates' lines as the documents: a term on
   * every line ("agreement" in a contract) says little about which
   * lines to keep. */
  int df[PL_MAX_TERMS] = {0};
  long n_lines = 0;
  for (size_t i = 0; i < n_hits; i++)
    for (const char *p = hits[i].text, *l; p && *p;) {
      size_t n = next_line(&p, &l);
      uint32_t m = line_terms(t, l, n);
      for (int j = 0; j < t->n; j++)
        df[j] += (m >> j) & 1;
      n_lines++;
    }
  for (int j = 0; j < t->n; j++)
    t->idf[j] = log(1.0 + (n_lines - df[j] + 0.5) / (df[j] + 0.5));
}

/* Newlines in s[0..n). */
static size_t count_nl(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += s[i] == '\n';
  return k;
}

/* Whether hit h's text lines are its source lines one to one, so that a
 * run of them can be cited by line numbers. Readers of HTML/XML reflow
 * text (their line range spans the markup), and a PDF chunk across pages
 * counts lines per page. */
static int lines_map(const dq_hit *h, int n_lines) {
  if (h->kind && (!strcmp(h->kind, "html") || !strcmp(h->kind, "xml")))
    return 0;
  if (h->page_start != h->page_end)
    return 0;
  return h->line_start > 0 && h->line_end - h->line_start + 1 == n_lines;
}

/* Tokens of s[0..n) plus a newline. */
static int count_line_tokens(dq_model *m, const char *s, size_t n) {
  int32_t *t = NULL;
  int nt = 0;
  if (dq_model_tokenize(m, s, n, 0, &t, &nt) != DQ_OK)
    return (int)(n / 3 + 2);
  free(t);
  return nt + 1;
}

static double mask_score(const pl_terms *t, uint32_t m) {
  double s = 0;
  for (int j = 0; j < t->n; j++)
    if ((m >> j) & 1)
      s += t->idf[j];
  return s;
}

int pl_lines_tokens(dq_model *m, const dq_hit *h, int32_t a, int32_t b) {
  if (!h->text)
    return 0;
  int n = (int)count_nl(h->text, strlen(h->text)) + 1;
  if (!lines_map(h, n) || a < h->line_start || b < a || b > h->line_end)
    return pl_count_tokens(m, h->text);
  const char *p = h->text, *line;
  int sum = 0;
  for (int32_t i = h->line_start; i <= b; i++) {
    size_t len = next_line(&p, &line);
    if (i >= a)
      sum += count_line_tokens(m, line, len);
  }
  return sum;
}

/* Lines kept before the first matching line of a trimmed passage: the
 * sentence or heading that leads into it. */
#define LEAD_LINES 1

/* Sum of tok[a..b]. */
static long tok_sum(const int *tok, int a, int b) {
  long s = 0;
  for (int i = a; i <= b; i++)
    s += tok[i];
  return s;
}

/* 1 when the symbol signal ranked h for a definition it holds, however
 * weakly: "Which C function computes the tax on a single invoice line?"
 * matches tax_compute_line by its name's parts, and the run the model
 * reads should show that name's signature line, not only the body's
 * last lines. */
int pl_symbol_use_kind(const char *kind) {
  static const char *const uses[] = {"call", "use", "xref", "include"};
  for (size_t i = 0; i < sizeof uses / sizeof *uses; i++)
    if (!strcmp(kind, uses[i]))
      return 1;
  return 0;
}

static int ranked_definition(const dq_hit *h) {
  return h->symbol && h->symbol_kind && h->symbol_line > 0 &&
         !pl_symbol_use_kind(h->symbol_kind);
}

/* Whether s[a..b) is a table's row as the readers write one, cells
 * joined by " | " (a spreadsheet's, a DOCX's or an HTML table's). */
static int row_line(const char *s, size_t a, size_t b) {
  return b > a + 3 && memmem(s + a, b - a, " | ", 3) != NULL;
}

/* Whether a hit's lines are a table's rows however they read (.csv and
 * .tsv files: "North,Customer 1500,2020,15000"). */
static int rows_hit(const dq_hit *h) { return dq_csv_path(h->path); }

static size_t unit_at(const char *s, size_t len, size_t f, size_t *b, int rows);

int pl_passage_trim(dq_model *m, const pl_terms *t, dq_hit *h, int max_tokens,
                    int32_t keep_start, int32_t keep_end) {
  if (!h->text || !h->text[0])
    return 0;
  int n = (int)count_nl(h->text, strlen(h->text)) + 1;
  if (n < 2 || !lines_map(h, n))
    return 0;
  const char **line = malloc((size_t)n * sizeof *line);
  size_t *len = malloc((size_t)n * sizeof *len);
  int *tok = malloc((size_t)n * sizeof *tok);
  uint32_t *mask = malloc((size_t)n * sizeof *mask);
  int ret = -1;
  if (!line || !len || !tok || !mask)
    goto done;
  long total = 0;
  const char *p = h->text;
  for (int i = 0; i < n; i++) {
    len[i] = next_line(&p, &line[i]);
    tok[i] = count_line_tokens(m, line[i], len[i]);
    mask[i] = line_terms(t, line[i], len[i]);
    total += tok[i];
  }
  ret = 0;
  if (total <= max_tokens)
    goto done;
  /* The longest run from each start that fits; best = most question
   * terms by idf (each once: covering the question beats repeating one
   * word), then the matching lines nearest the top with LEAD_LINES
   * before them (answers follow the words that introduce them), then the
   * earliest. */
  int best_s = -1, best_e = -1, best_pen = 0;
  double best = -1;
  /* Lines every run must hold, when they fit: the caller's (the quote's
   * sentence), and in a passage a strong symbol ranked the line of its
   * definition or use (the answer's "From the index" cites it); both
   * where both fit, else the caller's. */
  int must = -1, must_e = -1;
  if (keep_start >= h->line_start && keep_end >= keep_start &&
      keep_end <= h->line_end &&
      tok_sum(tok, keep_start - h->line_start, keep_end - h->line_start) <=
          max_tokens) {
    must = keep_start - h->line_start;
    must_e = keep_end - h->line_start;
  }
  if ((h->symbol_strong == 1 || ranked_definition(h)) &&
      h->symbol_line >= h->line_start && h->symbol_line <= h->line_end) {
    int sl = h->symbol_line - h->line_start, sl_e = sl;
    /* a defined term's whole clause, which the facts quote (To "convey"
     * a work means ... other\nparties to make or receive copies.) */
    if (h->symbol_kind && !strcmp(h->symbol_kind, "term")) {
      size_t off = (size_t)(line[sl] - h->text), ue;
      unit_at(h->text, strlen(h->text), off, &ue, rows_hit(h));
      sl_e = (int)count_nl(h->text, ue);
      sl_e = sl_e < n ? sl_e : n - 1;
    }
    /* the clause where it fits, else its first line */
    for (int e = sl_e; e >= sl; e = e > sl ? sl : sl - 1) {
      int a = must < 0 || sl < must ? sl : must;
      int b = must < 0 || e > must_e ? e : must_e;
      if (tok_sum(tok, a, b) <= max_tokens) {
        must = a;
        must_e = b;
        break;
      }
    }
  }
  for (int s = 0; s < n; s++) {
    long sum = 0;
    uint32_t mk = 0;
    int e = s - 1, first = -1;
    while (e + 1 < n && sum + tok[e + 1] <= max_tokens) {
      e++;
      sum += tok[e];
      mk |= mask[e];
      if (first < 0 && mask[e])
        first = e;
    }
    if (e < s || (must >= 0 && (must < s || must_e > e)))
      continue;
    double sc = mask_score(t, mk);
    int lead = first < 0 ? 0 : first - s;
    int pen = abs(lead - LEAD_LINES);
    if (sc > best + 1e-9 || (sc > best - 1e-9 && pen < best_pen)) {
      best = sc;
      best_s = s;
      best_e = e;
      best_pen = pen;
    }
  }
  if (best_s < 0)
    goto done; /* every line alone is over the limit: keep the chunk */
  uint32_t any = 0;
  for (int i = 0; i < n; i++)
    any |= mask[i];
  while (best_e > best_s && len[best_e] == 0)
    best_e--;
  while (best_s < best_e && len[best_s] == 0)
    best_s++;
  /* A chunk with the question's terms whose runs that fit miss them all
   * (a long line holds them) would give the model a stray line or a
   * blank one: not worth its label. */
  if ((any && best <= 0 && must < 0) || len[best_s] == 0) {
    ret = 2;
    goto done;
  }
  dq_strbuf b = {0};
  for (int i = best_s; i <= best_e; i++) {
    dq_strbuf_add(&b, line[i], len[i]);
    if (i < best_e)
      dq_strbuf_adds(&b, "\n");
  }
  if (b.oom || !b.p) {
    free(b.p);
    ret = -1;
    goto done;
  }
  free(h->text);
  h->text = b.p;
  h->line_end = h->line_start + best_e;
  h->line_start += best_s;
  ret = 1;
done:
  free(line);
  free(len);
  free(tok);
  free(mask);
  return ret;
}

/* A line that opens with a clause number starts a unit: a DOCX heading
 * "11. General" is otherwise read as the first words of the clause under
 * it. */
size_t pl_clause_number(const char *s, size_t n) {
  size_t i = 0;
  int dots = 0;
  while (i < n && i <= 12 &&
         (isdigit((unsigned char)s[i]) ||
          (s[i] == '.' && i > 0 && s[i - 1] != '.'))) {
    dots += s[i] == '.';
    i++;
  }
  return dots && i < n && i <= 12 && (s[i] == ' ' || s[i] == '\t') ? i : 0;
}

/* Words of s[a..b). */
static int count_words(const char *s, size_t a, size_t b) {
  int w = 0;
  for (size_t i = a; i < b; i++)
    w += isalnum((unsigned char)s[i]) &&
         (i == a || !isalnum((unsigned char)s[i - 1]));
  return w;
}

/* A unit opening with at most this many words and a colon is a label whose
 * value follows ("Deposit:\nGBP 15,450 (three months' Initial Rent).", a
 * PDF's particulars): the colon does not end it. */
#define LABEL_WORDS 3

/* A line of at most this many words, without a sentence's end, before a
 * line that opens with a capital is a heading of its own ("Animals\nFrogs
 * lay eggs in spring.": a PDF's text has no blank line after a heading). */
#define HEADING_WORDS 4

/* Words a sentence wrapped after a short first line may break on ("Payment
 * to the\nCustomer is due."); a heading does not end with one. */
static const char *const joining_words[] = {
    "a",     "an",   "and", "are", "as",   "at",  "be", "by",
    "for",   "from", "in",  "is",  "may",  "of",  "on", "or",
    "shall", "that", "the", "to",  "will", "with"};

/* Whether s[ls..i) (a whole line) reads as a heading before s[j]. */
static int heading_line(const char *s, size_t ls, size_t i, size_t j,
                        size_t n) {
  size_t e = i;
  while (e > ls && isspace((unsigned char)s[e - 1]))
    e--;
  if (e == ls || j >= n || !isupper((unsigned char)s[j]) ||
      !isalnum((unsigned char)s[e - 1]))
    return 0;
  int words = count_words(s, ls, e);
  if (words < 1 || words > HEADING_WORDS ||
      !isupper((unsigned char)s[ls + strspn(s + ls, " \t")]))
    return 0;
  size_t w = e; /* the last word */
  while (w > ls && isalpha((unsigned char)s[w - 1]))
    w--;
  for (size_t k = 0; k < sizeof joining_words / sizeof *joining_words; k++)
    if (strlen(joining_words[k]) == e - w &&
        !strncasecmp(s + w, joining_words[k], e - w))
      return 0;
  return 1;
}

/* The end of the unit (sentence) that starts at or after s[a] within
 * s[0..n): the byte after it; *next is where the next one starts. A
 * table's row is a unit of its own: each line when `rows`, else a line
 * with " | " between cells. */
static size_t unit_end(const char *s, size_t a, size_t n, size_t *next,
                       int rows) {
  size_t ls = a; /* the current line's start */
  int first = 1; /* no line with text has ended yet */
  for (size_t i = a; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == ':' && count_words(s, a, i) <= LABEL_WORDS)
      continue;
    if (c == '\n') {
      size_t j = i + 1;
      while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r'))
        j++;
      size_t k = j + 1; /* "(d) ", "(iv) ": an enumerated item */
      while (k < n && k - j <= 5 && isalnum((unsigned char)s[k]))
        k++;
      int head = 0; /* the unit's first line with text may be a heading */
      if (first && count_words(s, ls, i)) {
        head = heading_line(s, ls, i, j, n);
        first = 0;
      }
      size_t je = j; /* the next line's end */
      while (je < n && s[je] != '\n')
        je++;
      int row = rows || row_line(s, ls, i) || row_line(s, j, je);
      ls = i + 1;
      if (j >= n || s[j] == '\n' || s[j] == '#' || s[j] == '|' || head || row ||
          pl_clause_number(s + j, n - j) ||
          ((s[j] == '-' || s[j] == '*' || s[j] == '+') && j + 1 < n &&
           s[j + 1] == ' ') ||
          (s[j] == '(' && k > j + 1 && k + 1 < n && s[k] == ')' &&
           s[k + 1] == ' ')) {
        *next = i + 1;
        return i;
      }
    } else if (c == '.' || c == ';' || c == ':' || c == '!' || c == '?') {
      size_t j = i + 1;
      while (j < n && (s[j] == '"' || s[j] == '\'' || s[j] == ')' ||
                       s[j] == ']' || s[j] == '*'))
        j++;
      size_t k = j;
      while (k < n && isspace((unsigned char)s[k]))
        k++;
      /* not a colon before a number: "Deposit: 15,450", "anywhere: 10^13
       * minor units" name their answer before it */
      if (k > j && k < n &&
          (isupper((unsigned char)s[k]) ||
           (isdigit((unsigned char)s[k]) && c != ':') || s[k] == '"' ||
           s[k] == '(' || s[k] == '[' || (unsigned char)s[k] >= 0x80)) {
        *next = j;
        return j;
      }
    }
  }
  *next = n;
  return n;
}

/* s[0..n) with runs of blanks as one space, at most PL_QUOTE_MAX_BYTES
 * (cut at a space, then "..."). */
static char *collapse_max(const char *s, size_t n, size_t max) {
  dq_strbuf b = {0};
  int space = 0;
  for (size_t i = 0; i < n; i++) {
    if (isspace((unsigned char)s[i])) {
      space = 1;
      continue;
    }
    if ((space && b.n) || b.n >= 2 * max) {
      if (b.n >= max) {
        dq_strbuf_adds(&b, "...");
        break;
      }
      dq_strbuf_add(&b, " ", 1);
    }
    space = 0;
    dq_strbuf_add(&b, s + i, 1);
  }
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p ? b.p : strdup("");
}

static char *collapse(const char *s, size_t n) {
  return collapse_max(s, n, PL_QUOTE_MAX_BYTES);
}

/* The unit (sentence) of s[0..len) that holds s[f]: returns its start,
 * its end in *b. */
static size_t unit_at(const char *s, size_t len, size_t f, size_t *b,
                      int rows) {
  size_t a = f, next;
  *b = f;
  for (size_t u = 0; u < len; u = next) {
    size_t e = unit_end(s, u, len, &next, rows);
    if (f < next || next >= len) {
      a = u;
      *b = e;
      break;
    }
  }
  while (a < *b && isspace((unsigned char)s[a]))
    a++;
  return a;
}

char *pl_line_unit(const dq_hit *h, int32_t line, int unit, size_t max_bytes) {
  if (!h->text || line < h->line_start || line > h->line_end)
    return NULL;
  size_t len = strlen(h->text);
  if (!lines_map(h, (int)count_nl(h->text, len) + 1))
    return NULL;
  const char *p = h->text, *l = p;
  size_t ln = 0;
  for (int32_t i = h->line_start; i <= line; i++)
    ln = next_line(&p, &l);
  size_t a = (size_t)(l - h->text), b = a + ln;
  while (a < b && isspace((unsigned char)h->text[a]))
    a++;
  if (a == b)
    return NULL;
  if (unit == 2) { /* through the line that closes the first brace */
    int depth = 0, opened = 0;
    size_t e = a;
    for (; e < len && (!opened || depth > 0); e++) {
      depth += h->text[e] == '{';
      opened |= h->text[e] == '{';
      depth -= h->text[e] == '}';
      if (!opened && h->text[e] == ';')
        break; /* a declaration, no body */
    }
    while (e < len && h->text[e] != '\n')
      e++;
    b = e;
  } else if (unit) { /* the unit that holds the line's first word */
    a = unit_at(h->text, len, a, &b, rows_hit(h));
  }
  char *t = collapse_max(h->text + a, b - a, max_bytes);
  if (!t)
    return NULL;
  if (h->kind && dq_index_prose_kind(h->kind)) {
    size_t k = 0; /* Markdown's strong marks: "**Derived Materials**" */
    for (size_t i = 0; t[i]; i++) {
      if (t[i] == '*' && t[i + 1] == '*') {
        i++;
        continue;
      }
      t[k++] = t[i];
    }
    t[k] = '\0';
  }
  return t;
}

/* The whole lines of s that hold s[a..b), as they stand but for their
 * common indentation, at most PL_QUOTE_CODE_LINES (then "..."). */
static char *code_lines(const char *s, size_t a, size_t b) {
  while (a > 0 && s[a - 1] != '\n')
    a--;
  const char *end = strchr(s + b, '\n');
  b = end ? (size_t)(end - s) : strlen(s);
  size_t indent = (size_t)-1;
  for (size_t i = a; i < b;) { /* the least indentation of a line with text */
    size_t k = i;
    while (k < b && (s[k] == ' ' || s[k] == '\t'))
      k++;
    if (k < b && s[k] != '\n' && k - i < indent)
      indent = k - i;
    const char *nl = memchr(s + i, '\n', b - i);
    i = nl ? (size_t)(nl - s) + 1 : b;
  }
  dq_strbuf o = {0};
  int lines = 0;
  for (size_t i = a; i < b; lines++) {
    const char *nl = memchr(s + i, '\n', b - i);
    size_t e = nl ? (size_t)(nl - s) : b;
    if (lines == PL_QUOTE_CODE_LINES) {
      dq_strbuf_adds(&o, "...\n");
      break;
    }
    size_t skip = 0;
    while (skip < indent && i + skip < e &&
           (s[i + skip] == ' ' || s[i + skip] == '\t'))
      skip++;
    dq_strbuf_add(&o, s + i + skip, e - i - skip);
    dq_strbuf_adds(&o, "\n");
    i = e + 1;
  }
  if (o.oom) {
    free(o.p);
    return NULL;
  }
  return o.p ? o.p : strdup("");
}

/* Whether hit h is its document's first chunk (a PDF's lines count from
 * 1 on every page). */
static int doc_opening(const dq_hit *h) {
  return h->line_start == 1 && h->page_start <= 1;
}

/* Lines of a title block after the first: at most this many, each of at
 * most TITLE_WORDS words, not ending as a sentence or label does and not
 * a heading ("### 9.1 Governing Law" names a section, not the
 * document). */
#define TITLE_LINES 2
#define TITLE_WORDS 12

/* The question's terms that name the document whose first chunk is h
 * rather than what is asked of it: the words of its file name and of its
 * title block: the first line ("Mutual Non-Disclosure Agreement") and up
 * to TITLE_LINES short lines after it that are not sentences (a lease's
 * "Unit 4, Wharfside Business Park, Canal Street, Leeds"). */
static uint32_t naming_terms(const pl_terms *t, const dq_hit *h) {
  const char *path = h->path ? h->path : "";
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  uint32_t m = line_terms(t, base, strlen(base));
  const char *p = h->text ? h->text : "";
  for (int i = 0; i <= TITLE_LINES; i++) {
    p += strspn(p, " \t\r\n");
    size_t n = strcspn(p, "\n");
    while (n && isspace((unsigned char)p[n - 1]))
      n--;
    if (!n ||
        (i && (count_words(p, 0, n) > TITLE_WORDS || strchr(".;:", p[n - 1]) ||
               *p == '#' || pl_clause_number(p, n))))
      break;
    m |= line_terms(t, p, n);
    p += n;
  }
  return m;
}

/* naming_terms of h's document when its first chunk is among hits[0..n),
 * else 0. */
static uint32_t doc_naming_terms(const pl_terms *t, const dq_hit *hits,
                                 size_t n, const dq_hit *h) {
  for (size_t g = 0; g < n; g++)
    if (doc_opening(&hits[g]) &&
        !strcmp(hits[g].path ? hits[g].path : "", h->path ? h->path : "") &&
        !strcmp(hits[g].root ? hits[g].root : "", h->root ? h->root : ""))
      return naming_terms(t, &hits[g]);
  return 0;
}

/* The terms of the label that opens unit s[0..n) (at most LABEL_WORDS
 * words before a colon), or 0. */
static uint32_t label_terms(const pl_terms *t, const char *s, size_t n) {
  const char *c = memchr(s, ':', n);
  if (!c || count_words(s, 0, (size_t)(c - s)) > LABEL_WORDS)
    return 0;
  return line_terms(t, s, (size_t)(c - s));
}

/* The columns the chunker names in a section ("Sheet: Revenue >
 * columns: Region | Year", "columns: a,b"; chunk_core.c), or NULL. */
static const char *section_columns(const char *sec) {
  if (!sec)
    return NULL;
  if (!strncmp(sec, "columns: ", 9))
    return sec + 9;
  const char *p = strstr(sec, " > columns: ");
  return p ? p + 12 : NULL;
}

/* The header of the table row at h->text[a]: the section's "columns:
 * ..." (a sheet's or a CSV's chunk that does not hold the header), else
 * the first row of the rows around it (each line when `rows`), unless
 * that is the row itself. NULL when none (errno ENOMEM when out of
 * memory). */
static char *row_columns(const dq_hit *h, size_t a, int rows) {
  errno = 0;
  const char *sec = section_columns(h->section);
  if (sec)
    return strdup(sec);
  const char *s = h->text;
  size_t ls = a, first;
  while (ls > 0 && s[ls - 1] != '\n')
    ls--;
  for (first = ls; first > 0;) {
    size_t pe = first - 1, ps = pe; /* the line before: [ps, pe) */
    while (ps > 0 && s[ps - 1] != '\n')
      ps--;
    if (rows ? ps == pe : !row_line(s, ps, pe))
      break;
    first = ps;
  }
  if (first == ls)
    return NULL;
  size_t e = first + strcspn(s + first, "\n");
  char *c = collapse_max(s + first, e - first, PL_COLUMNS_MAX_BYTES);
  if (!c)
    errno = ENOMEM;
  return c;
}

int pl_quote_find(const pl_terms *t, const dq_hit *hits, size_t n, dq_quote *q,
                  size_t *hit) {
  memset(q, 0, sizeof *q);
  int need = t->n < 2 ? t->n : 2;
  if (!need)
    return 0;
  double best = 0;
  int best_own = 0;
  size_t best_h = 0, best_a = 0, best_b = 0;
  for (size_t h = 0; h < n; h++) {
    const char *s = hits[h].text;
    size_t len = s ? strlen(s) : 0, next;
    /* the section's title speaks for each of its units ("7 Break
     * Clause" for "7.1 The Tenant may terminate ..."), though only the
     * unit's own terms meet `need` */
    const char *sec = hits[h].section;
    uint32_t sec_m = sec ? line_terms(t, sec, strlen(sec)) : 0;
    /* the terms that name the document (when its first chunk is at
     * hand) chose the document, not its sentence: they count half in
     * each of its units ("which law governs the mutual non-disclosure
     * agreement" is not answered by "This Mutual Non-Disclosure Agreement
     * is entered into ..."), and a unit of such terms only ("'Building'
     * means ... Unit 4, Wharfside Business Park") yields to any unit with
     * a term of its own */
    uint32_t name_m = doc_naming_terms(t, hits, n, &hits[h]);
    int rows = rows_hit(&hits[h]);
    /* in a run of table rows (block), the header's terms */
    int block = 0, named = section_columns(sec) != NULL;
    uint32_t head_m = 0;
    for (size_t a = 0; a < len; a = next) {
      size_t b = unit_end(s, a, len, &next, rows);
      while (a < b && isspace((unsigned char)s[a]))
        a++;
      while (b > a && isspace((unsigned char)s[b - 1]))
        b--;
      /* a table's row is a record, whole in fewer words ("North |
       * Customer 1500 | 2020 | 15000"); its table's header speaks for
       * it as a section's title does ("Revenue" for "15000"): the first
       * row of a run of rows, unless the section names the columns */
      int row = rows || row_line(s, a, b);
      uint32_t unit_sec = sec_m;
      if (!row)
        block = 0;
      else if (!block) {
        block = 1;
        head_m = named ? 0 : line_terms(t, s + a, b - a);
      } else
        unit_sec |= head_m;
      int min = row ? PL_QUOTE_MIN_ROW_WORDS : PL_QUOTE_MIN_WORDS;
      int words = 0;
      for (size_t i = a; i < b && words < min; i++)
        words += isalnum((unsigned char)s[i]) &&
                 (i == a || !isalnum((unsigned char)s[i - 1]));
      if (words < min)
        continue;
      uint32_t m = line_terms(t, s + a, b - a);
      /* the terms that name the document are said of each of its
       * units ("the Deposit under the Unit 4 Wharfside lease":
       * "Deposit: GBP 15,450 ...") */
      /* a row's header (or named columns) completes its terms: "the
       * Location of Ferrule" meets "Ferrule ... | Ireland" */
      if (!m || __builtin_popcount(m | name_m | (row ? unit_sec : 0)) < need)
        continue;
      /* a label's terms count twice: "Deposit: GBP 15,450" is what the
       * Deposit is, where "... pay the Deposit to the Landlord" only
       * mentions it */
      double sc = mask_score(t, (m | unit_sec) & ~name_m) +
                  0.5 * mask_score(t, (m | unit_sec) & name_m) +
                  mask_score(t, label_terms(t, s + a, b - a) & ~name_m);
      int own = (m & ~name_m) != 0;
      if (own > best_own || (own == best_own && sc > best + 1e-9)) {
        best_own = own;
        best = sc;
        best_h = h;
        best_a = a;
        best_b = b;
      }
    }
  }
  if (best <= 0)
    return 0;
  const dq_hit *h = &hits[best_h];
  int row = rows_hit(h) || row_line(h->text, best_a, best_b);
  if (row && !(q->columns = row_columns(h, best_a, rows_hit(h))) &&
      errno == ENOMEM)
    return -1;
  q->text = collapse(h->text + best_a, best_b - best_a);
  q->path = strdup(h->path ? h->path : "");
  q->root = strdup(h->root ? h->root : "");
  q->shown = strdup(h->shown ? h->shown : q->path ? q->path : "");
  q->section = strdup(h->section ? h->section : "");
  int n_lines = (int)count_nl(h->text, strlen(h->text)) + 1;
  int mapped = lines_map(h, n_lines);
  int oom = 0;
  if (mapped && h->kind && !dq_index_prose_kind(h->kind))
    oom = !(q->lines = code_lines(h->text, best_a, best_b));
  if (oom || !q->text || !q->path || !q->root || !q->shown || !q->section) {
    free(q->text);
    free(q->path);
    free(q->root);
    free(q->shown);
    free(q->section);
    free(q->lines);
    free(q->columns);
    memset(q, 0, sizeof *q);
    return -1;
  }
  if (mapped) {
    q->line_start = h->line_start + (int32_t)count_nl(h->text, best_a);
    q->line_end = h->line_start + (int32_t)count_nl(h->text, best_b);
  } else {
    q->line_start = h->line_start;
    q->line_end = h->line_end;
  }
  q->page = h->page_start;
  q->unit = dq_page_unit(h->kind);
  *hit = best_h;
  return 1;
}
