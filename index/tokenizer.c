/*
 * tokenizer.c - the FTS5 tokenizer "dq_ident", which makes code identifiers
 * searchable both whole and by their parts, and the builder that turns a
 * user's query into FTS5 query text using the same rules.
 *
 * An identifier is a run of word characters (ASCII letters and digits, '_',
 * and every non-ASCII code point except common punctuation and spaces),
 * where a '.' between two word characters joins (`a.b`, `os.path.join`,
 * `3.14`). Everything is lowercased (ASCII, Latin-1, Latin Extended-A,
 * Greek, Cyrillic), and Latin letters fold to ASCII without their
 * diacritics (cafe finds café, Munchen München, strasse Straße; combining
 * marks U+0300..U+036F are dropped, so decomposed text folds alike), as
 * users type words without them; the embedding model's tokenizer folds
 * them too. Its parts are the pieces between '_' and '.', each
 * further split at camelCase boundaries (getUser -> get|user, HTTPServer ->
 * http|server, utf8Decode -> utf8|decode).
 *
 * Indexing (documents): the parts are emitted at consecutive positions and
 * the whole identifier is emitted colocated (FTS5_TOKEN_COLOCATED) with the
 * first part. So "get_user" matches the query get_user, the word user, and
 * the phrase "get user". In a text that starts with DQ__PROSE_MARK (the
 * columns of prose documents' chunks, see store.c) a part of three or more
 * ASCII letters that is no stopword is indexed as its stem key instead:
 * the mark and its English stem (dq__stem: "governs", "governed",
 * "governing", "govern" -> "\1govern"; "laws", "law" -> "\1law"); other
 * parts and whole identifiers as in code. Code is not stemmed, and the
 * mark keeps the two apart: in C, the stem of a question's "defined" would
 * meet every #define, "called" every call. Queries: only the whole
 * identifier is emitted (or a stem key, whole); the query builder adds the
 * parts as a phrase alternative, so the query getUser also finds get_user,
 * and a word's stem key, so "governs" finds "governed" in prose while code
 * matches only "governs" (a chunk matches one of the two, so neither kind
 * counts a word twice). This file does not rank or search.
 */
#include "index_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOK_MAX_BYTES DQ__TOK_MAX_BYTES
#define TOK_MAX_PARTS DQ__TOK_MAX_PARTS
#define QUERY_MAX_TERMS 64
#define QUERY_MAX_PAIRS 16 /* adjacent words as phrases */

/* Decodes one UTF-8 code point at s[i..n); invalid bytes decode as
 * themselves (Latin-1) with length 1, so tokenizing never fails. */
static uint32_t utf8_next(const unsigned char *s, int n, int i, int *len) {
  uint32_t c = s[i];
  int need = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2
                          : (c >> 3) == 30 ? 3 : -1;
  *len = 1;
  if (need <= 0 || i + need >= n)
    return c;
  uint32_t cp = c & (0x3fu >> need);
  for (int k = 1; k <= need; k++) {
    if ((s[i + k] & 0xc0) != 0x80)
      return c;
    cp = cp << 6 | (s[i + k] & 0x3f);
  }
  *len = need + 1;
  return cp;
}

static int utf8_put(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | cp >> 18);
  out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
  out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

static uint32_t lower(uint32_t c) {
  if (c >= 'A' && c <= 'Z')
    return c + 32;
  if (c < 0xc0)
    return c;
  if (c <= 0xde)
    return c == 0xd7 ? c : c + 32;
  if (c >= 0x100 && c <= 0x17f) {
    if ((c <= 0x137 || (c >= 0x14a && c <= 0x177)) && !(c & 1))
      return c + 1;
    if (((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e)) && (c & 1))
      return c + 1;
    return c;
  }
  if (c >= 0x391 && c <= 0x3a9 && c != 0x3a2)
    return c + 32;
  if (c >= 0x410 && c <= 0x42f)
    return c + 32;
  if (c >= 0x400 && c <= 0x40f)
    return c + 80;
  return c;
}

static int is_upper(uint32_t c) { return lower(c) != c; }
static int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

static int is_word(uint32_t c) {
  if (c < 0x80)
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
           c == '_';
  if (c < 0xc0) /* Latin-1 punctuation, symbols, NBSP */
    return c == 0xaa || c == 0xb5 || c == 0xba;
  if (c == 0xd7 || c == 0xf7)
    return 0;
  if ((c >= 0x2000 && c <= 0x206f) || (c >= 0x3000 && c <= 0x303f) ||
      (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff0f) ||
      c == 0xfeff)
    return 0;
  return 1;
}

int dq__ident_next(const unsigned char *s, int n, int *pos, dq__ident *id) {
  int i = *pos, len;
  while (i < n && !is_word(utf8_next(s, n, i, &len)))
    i += len;
  if (i >= n) {
    *pos = n;
    return 0;
  }
  id->start = i;
  while (i < n) {
    uint32_t c = utf8_next(s, n, i, &len);
    if (is_word(c)) {
      i += len;
      continue;
    }
    if (c == '.' && i + 1 < n) {
      int l2;
      if (is_word(utf8_next(s, n, i + 1, &l2))) {
        i += 1;
        continue;
      }
    }
    break;
  }
  id->end = i;
  *pos = i;
  /* Parts: split at '_' and '.', then at camelCase boundaries. */
  id->n_parts = 0;
  int p = id->start, cur = -1;
  int prev_up = 0; /* the character before is uppercase */
  while (p < id->end) {
    uint32_t c = utf8_next(s, id->end, p, &len);
    if (c == '_' || c == '.') {
      if (cur >= 0 && id->n_parts < TOK_MAX_PARTS) {
        id->part_start[id->n_parts] = cur;
        id->part_end[id->n_parts++] = p;
      }
      cur = -1;
      prev_up = 0;
      p += len;
      continue;
    }
    int boundary = 0;
    if (cur >= 0 && is_upper(c)) {
      if (!prev_up)
        boundary = 1; /* getUser, utf8Decode */
      else if (p + len < id->end) {
        int l2;
        uint32_t nx = utf8_next(s, id->end, p + len, &l2);
        if (!is_upper(nx) && nx != 0xdf && !is_digit(nx) && nx != '_' &&
            nx != '.')
          boundary = 1; /* HTTP|Server */
      }
    }
    if (boundary) {
      if (id->n_parts < TOK_MAX_PARTS) {
        id->part_start[id->n_parts] = cur;
        id->part_end[id->n_parts++] = p;
      }
      cur = p;
    }
    if (cur < 0)
      cur = p;
    /* ß has no capital here: it takes its neighbour's case (GRÖßE) */
    prev_up = is_upper(c) || (c == 0xdf && prev_up);
    p += len;
  }
  if (cur >= 0 && id->n_parts < TOK_MAX_PARTS) {
    id->part_start[id->n_parts] = cur;
    id->part_end[id->n_parts++] = id->end;
  }
  return 1;
}

/* The ASCII letters each Latin-1 and Latin Extended-A letter folds to,
 * lowercase (U+00C0..U+017F; "" for the signs x and /, which are no
 * letters): its base letter without the diacritic, as Unicode's
 * decomposition gives it, and a spelling for the letters that have none
 * (ae, d, o, th, ss, ij, l, n, oe, t). */
/* clang-format off */
static const char k_fold[192][3] = {
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", /* U+00C0 */
    "d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "ss", /* U+00D0 */
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", /* U+00E0 */
    "d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "y", /* U+00F0 */
    "a", "a", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c", "c", "c", "d", "d", /* U+0100 */
    "d", "d", "e", "e", "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g", "g", /* U+0110 */
    "g", "g", "g", "g", "h", "h", "h", "h", "i", "i", "i", "i", "i", "i", "i", "i", /* U+0120 */
    "i", "i", "ij", "ij", "j", "j", "k", "k", "k", "l", "l", "l", "l", "l", "l", "l", /* U+0130 */
    "l", "l", "l", "n", "n", "n", "n", "n", "n", "n", "n", "n", "o", "o", "o", "o", /* U+0140 */
    "o", "o", "oe", "oe", "r", "r", "r", "r", "r", "r", "s", "s", "s", "s", "s", "s", /* U+0150 */
    "s", "s", "t", "t", "t", "t", "t", "t", "u", "u", "u", "u", "u", "u", "u", "u", /* U+0160 */
    "u", "u", "u", "u", "w", "w", "y", "y", "y", "z", "z", "z", "z", "z", "z", "s", /* U+0170 */
};
/* clang-format on */

static int lower_put(uint32_t c, int fold, char *out) {
  if (fold && c >= 0xc0 && c <= 0x17f && k_fold[c - 0xc0][0]) {
    const char *f = k_fold[c - 0xc0];
    out[0] = f[0];
    out[1] = f[1];
    return f[1] ? 2 : 1;
  }
  if (fold && c >= 0x300 && c <= 0x36f)
    return 0; /* a combining mark: decomposed text ("e" U+0301) folds too */
  return utf8_put(lower(c), out);
}

static int lower_copy(const unsigned char *s, int a, int b, int fold,
                      char *out) {
  int o = 0, len;
  for (int i = a; i < b; i += len) {
    char tmp[4];
    int k = lower_put(utf8_next(s, b, i, &len), fold, tmp);
    if (o + k > TOK_MAX_BYTES)
      break;
    memcpy(out + o, tmp, (size_t)k);
    o += k;
  }
  return o;
}

int dq__lower_copy(const unsigned char *s, int a, int b, char *out) {
  int o = lower_copy(s, a, b, 1, out);
  return o || a >= b ? o : lower_copy(s, a, b, 0, out); /* marks alone */
}

size_t dq_index_fold(const char *s, size_t n, char *out, size_t cap) {
  if (!cap)
    return 0;
  char buf[TOK_MAX_BYTES + 4];
  int b = n > (size_t)TOK_MAX_BYTES * 2 ? TOK_MAX_BYTES * 2 : (int)n;
  size_t o = (size_t)dq__lower_copy((const unsigned char *)s, 0, b, buf);
  if (o >= cap) { /* cut at a character */
    o = cap - 1;
    while (o > 0 && ((unsigned char)buf[o] & 0xc0) == 0x80)
      o--;
  }
  memcpy(out, buf, o);
  out[o] = '\0';
  return o;
}

size_t dq__stem(char *w) {
  size_t n = strlen(w);
  if (n >= 5 && memcmp(w + n - 3, "ies", 3) == 0) {
    w[n - 3] = 'y';
    n -= 2;
  } else if (n >= 7 && memcmp(w + n - 3, "ing", 3) == 0) {
    n -= 3;
  } else if (n >= 6 && memcmp(w + n - 2, "ed", 2) == 0) {
    n -= 2;
  } else if (n >= 5 && memcmp(w + n - 2, "es", 2) == 0 &&
             (strchr("sxz", w[n - 3]) ||
              (w[n - 3] == 'h' && strchr("cs", w[n - 4])))) {
    n -= 2;
  } else if (n >= 4 && w[n - 1] == 's' && !strchr("siu", w[n - 2])) {
    n -= 1;
  }
  w[n] = '\0';
  if (n >= 5 && w[n - 1] == 'e')
    w[--n] = '\0';
  return n;
}

int dq__stem_key(const char *w, int n, char *out) {
  if (n < 3 || n > TOK_MAX_BYTES)
    return 0;
  for (int i = 0; i < n; i++)
    if (w[i] < 'a' || w[i] > 'z')
      return 0;
  out[0] = DQ__PROSE_MARK;
  memcpy(out + 1, w, (size_t)n);
  out[n + 1] = '\0';
  if (dq__is_stopword(out + 1))
    return 0;
  return 1 + (int)dq__stem(out + 1);
}

typedef int (*token_cb)(void *ctx, int tflags, const char *tok, int n,
                        int start, int end);

static int tokenize(void *ctx, int flags, const char *text, int n,
                    token_cb cb) {
  const unsigned char *s = (const unsigned char *)text;
  char whole[TOK_MAX_BYTES + 4], part[TOK_MAX_BYTES + 4];
  char stem[TOK_MAX_BYTES + 4];
  int pos = 0, rc = SQLITE_OK;
  dq__ident id;
  int query = (flags & FTS5_TOKENIZE_QUERY) != 0;
  int prose = !query && n > 0 && text[0] == DQ__PROSE_MARK;
  if (query && n > 1 && text[0] == DQ__PROSE_MARK) {
    /* stem keys from the builder: one, or a phrase's, blank between */
    int rc2 = SQLITE_OK;
    for (int a = 0; a < n && rc2 == SQLITE_OK;) {
      int e = a;
      while (e < n && text[e] != ' ')
        e++;
      if (e - a > 1 && e - a <= TOK_MAX_BYTES + 1)
        rc2 = cb(ctx, 0, text + a, e - a, a, e);
      a = e + 1;
    }
    return rc2;
  }
  while (rc == SQLITE_OK && dq__ident_next(s, n, &pos, &id)) {
    int nw = dq__lower_copy(s, id.start, id.end, whole);
    if (query || id.n_parts == 0) {
      rc = cb(ctx, 0, whole, nw, id.start, id.end);
      continue;
    }
    for (int k = 0; k < id.n_parts && rc == SQLITE_OK; k++) {
      int np = dq__lower_copy(s, id.part_start[k], id.part_end[k], part);
      int ns = prose ? dq__stem_key(part, np, stem) : 0;
      rc = ns ? cb(ctx, 0, stem, ns, id.part_start[k], id.part_end[k])
              : cb(ctx, 0, part, np, id.part_start[k], id.part_end[k]);
      if (k == 0 && rc == SQLITE_OK && (np != nw || memcmp(part, whole, np)))
        rc = cb(ctx, FTS5_TOKEN_COLOCATED, whole, nw, id.start, id.end);
    }
  }
  return rc;
}

/* ---- FTS5 glue --------------------------------------------------------- */

typedef struct dq_tok {
  int unused;
} dq_tok;

static int tok_create(void *ctx, const char **args, int n_args,
                      Fts5Tokenizer **out) {
  dq_tok *t = sqlite3_malloc(sizeof *t);
  if (!t)
    return SQLITE_NOMEM;
  *out = (Fts5Tokenizer *)t;
  return SQLITE_OK;
}

static void tok_delete(Fts5Tokenizer *t) { sqlite3_free(t); }

static int tok_tokenize(Fts5Tokenizer *t, void *ctx, int flags,
                        const char *text, int n,
                        int (*cb)(void *, int, const char *, int, int, int)) {
  return tokenize(ctx, flags, text, n, cb);
}

/* db's FTS5 API (version 2 or later), or NULL. */
static fts5_api *fts5_api_of(sqlite3 *db) {
  fts5_api *api = NULL;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
  sqlite3_step(st);
  if (sqlite3_finalize(st) != SQLITE_OK || !api || api->iVersion < 2)
    return NULL;
  return api;
}

int dq__fts5_register(sqlite3 *db) {
  static const fts5_tokenizer k_tok = {tok_create, tok_delete, tok_tokenize};
  fts5_api *api = fts5_api_of(db);
  if (!api)
    return SQLITE_ERROR;
  int rc = api->xCreateTokenizer(api, "dq_ident", NULL,
                                 (fts5_tokenizer *)&k_tok, NULL);
  return rc != SQLITE_OK ? rc : dq__rank_create(api);
}

/* ---- query builder ----------------------------------------------------- */

/* A dotted name's segment that names no owner: a stopword or a
 * receiver ("this.total", "self.rows", "cls.registry"), which as a term
 * of its own would match nearly every chunk of code. */
static int receiver(const char *w, int len) {
  char seg[8];
  if (len >= (int)sizeof seg)
    return 0;
  memcpy(seg, w, (size_t)len);
  seg[len] = '\0';
  return dq__is_stopword(seg) || !strcmp(seg, "self") || !strcmp(seg, "cls");
}

static char *dq__fts_query_all(const char *text, int drop_stop, char **groups);

/* With OR semantics these would pull in nearly every chunk for BM25 to
 * score while adding almost nothing to the ranking. */
int dq__is_stopword(const char *w) {
  static const char *const k_stop[] = {
      "a",    "an",   "and",  "are",   "as",    "at",   "be",   "by",
      "can",  "do",   "does", "for",   "from",  "how",  "i",    "in",
      "is",   "it",   "its",  "me",    "of",    "on",   "or",   "show",
      "that", "the",  "this", "to",    "was",   "what", "when", "where",
      "which", "who", "why",  "with",  "find",  "tell", "about", "there"};
  if (strnlen(w, 6) > 5) /* none is longer; most words are */
    return 0;
  for (size_t i = 0; i < sizeof k_stop / sizeof k_stop[0]; i++)
    if (w[0] == k_stop[i][0] && strcmp(w, k_stop[i]) == 0)
      return 1;
  return 0;
}

char *dq__fts_query_groups(const char *text, char **groups) {
  char *q = dq__fts_query_all(text, 1, groups);
  return q ? q : dq__fts_query_all(text, 0, groups);
}

char *dq__fts_query(const char *text) {
  return dq__fts_query_groups(text, NULL);
}

/* Appends phrase group g to the groups text (see rank.c). */
static void add_group(dq_strbuf *g, int term) {
  char num[16];
  int n = snprintf(num, sizeof num, "%s%d", g->n ? " " : "", term);
  dq_strbuf_add(g, num, (size_t)n);
}

/* Records term w[0..n) in seen[0..*n_seen) unless it is there: 1 when
 * added, 0 when seen before or the list is full, -1 when out of memory. */
static int see_term(char **seen, int *n_seen, const char *w, size_t n) {
  if (*n_seen >= QUERY_MAX_TERMS)
    return 0;
  for (int k = 0; k < *n_seen; k++)
    if (strlen(seen[k]) == n && memcmp(seen[k], w, n) == 0)
      return 0;
  if (!(seen[*n_seen] = strndup(w, n)))
    return -1;
  (*n_seen)++;
  return 1;
}

/* Two capitalised words side by side in a question, a name ("Gorseford
 * Marine", "Ferrule Mail"), are a term of their own too, as a phrase (and
 * as prose indexes it, stem keys), so that a chunk holding them together
 * outranks one holding each apart; rank.c weighs it by what it tells
 * beyond its rarer word (0 for a defined term whose words come together
 * anyway, "Disclosure Period"). The pairs' words go to the groups text
 * after a '|': "P:A,B", term P the pair of terms A and B. */
typedef struct pair_state {
  char word[TOK_MAX_BYTES + 4], stem[TOK_MAX_BYTES + 4]; /* the one before */
  int n, ns, group; /* its length, stem key's, term number (-1: none) */
  int n_pairs;
  dq_strbuf spec; /* "P:A,B" entries */
} pair_state;

static void pair_step(pair_state *ps, dq_strbuf *b, dq_strbuf *g, int *n_groups,
                      int cap, const char *w, int nw, int group) {
  char stem[TOK_MAX_BYTES + 4];
  if (!cap || group < 0) {
    ps->group = -1;
    return;
  }
  int ns = dq__stem_key(w, nw, stem);
  if (ps->group >= 0 && ps->group != group && ps->n_pairs < QUERY_MAX_PAIRS) {
    dq_strbuf_printf(b, "%s%s\"%.*s %.*s\"", b->n ? " OR " : "",
                     ps->ns || ns ? "(" : "", ps->n, ps->word, nw, w);
    add_group(g, *n_groups);
    if (ps->ns || ns) { /* as prose indexes the pair: the same term */
      dq_strbuf_printf(b, " OR \"%.*s %.*s\")", ps->ns ? ps->ns : ps->n,
                       ps->ns ? ps->stem : ps->word, ns ? ns : nw,
                       ns ? stem : w);
      add_group(g, *n_groups);
    }
    dq_strbuf_printf(&ps->spec, "%s%d:%d,%d", ps->spec.n ? " " : "", *n_groups,
                     ps->group, group);
    (*n_groups)++;
    ps->n_pairs++;
  }
  memcpy(ps->word, w, (size_t)nw);
  ps->n = nw;
  memcpy(ps->stem, stem, (size_t)ns);
  ps->ns = ns;
  ps->group = group;
}

static char *dq__fts_query_all(const char *text, int drop_stop, char **groups) {
  if (groups)
    *groups = NULL;
  if (!text)
    return NULL;
  const unsigned char *s = (const unsigned char *)text;
  int n = (int)strnlen(text, 1 << 20);
  dq_strbuf b = {0}, g = {0};
  char whole[TOK_MAX_BYTES + 4], part[TOK_MAX_BYTES + 4];
  char stem[TOK_MAX_BYTES + 4];
  char *seen[QUERY_MAX_TERMS];
  int group_of[QUERY_MAX_TERMS]; /* seen[k]'s term number */
  int n_terms = 0, n_groups = 0, pos = 0;
  pair_state ps = {0};
  ps.group = -1;
  dq__ident id;
  while (n_terms < QUERY_MAX_TERMS && dq__ident_next(s, n, &pos, &id)) {
    int nw = dq__lower_copy(s, id.start, id.end, whole);
    whole[nw] = '\0';
    if (drop_stop && dq__is_stopword(whole)) {
      ps.group = -1;
      continue;
    }
    /* a capitalised word, not the question's first (capitalised as any
     * sentence's is): one of a name's words */
    int cap = drop_stop && id.n_parts <= 1 && !memchr(whole, '.', (size_t)nw) &&
              id.start > 0 && s[id.start] >= 'A' && s[id.start] <= 'Z';
    int fresh = see_term(seen, &n_terms, whole, (size_t)nw);
    if (fresh < 0) {
      b.oom = 1;
      break;
    }
    if (fresh)
      group_of[n_terms - 1] = n_groups;
    int own = -1; /* this word's term number */
    for (int k = 0; k < n_terms && own < 0; k++)
      if (strlen(seen[k]) == (size_t)nw && !memcmp(seen[k], whole, (size_t)nw))
        own = group_of[k];
    if (!fresh) {
      pair_step(&ps, &b, &g, &n_groups, cap, whole, nw, own);
      continue;
    }
    if (b.n)
      dq_strbuf_add(&b, " OR ", 4);
    int single = id.n_parts <= 1;
    if (id.n_parts == 1) {
      int np = dq__lower_copy(s, id.part_start[0], id.part_end[0], part);
      single = np == nw && memcmp(part, whole, (size_t)np) == 0;
    }
    int ns = single ? dq__stem_key(whole, nw, stem) : 0;
    if (!single || ns)
      dq_strbuf_add(&b, "(", 1);
    dq_strbuf_add(&b, "\"", 1);
    dq_strbuf_add(&b, whole, (size_t)nw);
    dq_strbuf_add(&b, "\"", 1);
    add_group(&g, n_groups);
    if (ns) { /* its forms in prose, indexed as its stem key: one term */
      dq_strbuf_add(&b, " OR \"", 5);
      dq_strbuf_add(&b, stem, (size_t)ns);
      dq_strbuf_add(&b, "\")", 2);
      add_group(&g, n_groups);
    }
    n_groups++;
    if (!single) { /* its parts: a term of their own */
      add_group(&g, n_groups++);
      dq_strbuf_add(&b, " OR \"", 5);
      for (int k = 0; k < id.n_parts; k++) {
        int np = dq__lower_copy(s, id.part_start[k], id.part_end[k], part);
        if (k)
          dq_strbuf_add(&b, " ", 1);
        dq_strbuf_add(&b, part, (size_t)np);
      }
      dq_strbuf_add(&b, "\")", 2);
    }
    /* StreamWriter.close, os.path.join: each dotted segment is a term of
     * its own too, since code writes the owner and the member apart
     * ("class StreamWriter" ... "def close"); not numbers ("2.0"), single
     * letters ("e.g"), receivers ("this", "self") or a file's name
     * (tax.c, setup.py: its path is matched whole). */
    const char *dot = memrchr(whole, '.', (size_t)nw);
    int dotted = dot && !dq__file_ext(dot + 1, whole + nw);
    for (int a = 0, k = 0; dotted && k <= nw; k++) {
      if (k < nw && whole[k] != '.')
        continue;
      int len = k - a;
      const char *w = whole + a;
      a = k + 1;
      if (len < 2 || len == nw ||
          !((w[0] >= 'a' && w[0] <= 'z') || w[0] == '_' ||
            (unsigned char)w[0] >= 0x80) ||
          receiver(w, len))
        continue;
      int added = see_term(seen, &n_terms, w, (size_t)len);
      b.oom |= added < 0;
      if (added <= 0)
        continue;
      dq_strbuf_add(&b, " OR \"", 5);
      dq_strbuf_add(&b, w, (size_t)len);
      dq_strbuf_add(&b, "\"", 1);
      add_group(&g, n_groups++);
    }
    pair_step(&ps, &b, &g, &n_groups, cap, whole, nw, own);
  }
  for (int k = 0; k < n_terms; k++)
    free(seen[k]);
  if (ps.spec.n) { /* the pairs' words, after the phrases' terms */
    dq_strbuf_add(&g, "|", 1);
    dq_strbuf_add(&g, ps.spec.p, ps.spec.n);
  }
  free(ps.spec.p);
  g.oom |= ps.spec.oom;
  if (b.oom || g.oom || !b.p || (groups && !g.p)) {
    free(b.p);
    free(g.p);
    return NULL;
  }
  if (groups)
    *groups = g.p;
  else
    free(g.p);
  return b.p;
}
