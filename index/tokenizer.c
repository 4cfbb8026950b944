/*
 * tokenizer.c - the FTS5 tokenizer "dq_ident", which makes code identifiers
 * searchable both whole and by their parts, and the builder that turns a
 * user's query into FTS5 query text using the same rules.
 *
 * An identifier is a run of word characters (ASCII letters and digits, '_',
 * and every non-ASCII code point except common punctuation and spaces),
 * where a '.' between two word characters joins (`a.b`, `os.path.join`,
 * `3.14`). Everything is lowercased (ASCII, Latin-1, Latin Extended-A,
 * Greek, Cyrillic). Its parts are the pieces between '_' and '.', each
 * further split at camelCase boundaries (getUser -> get|user, HTTPServer ->
 * http|server, utf8Decode -> utf8|decode).
 *
 * Indexing (documents): the parts are emitted at consecutive positions and
 * the whole identifier is emitted colocated (FTS5_TOKEN_COLOCATED) with the
 * first part. So "get_user" matches the query get_user, the word user, and
 * the phrase "get user". Queries: only the whole identifier is emitted; the
 * query builder adds the parts as a phrase alternative, so the query getUser
 * also finds get_user. This file does not rank or search.
 */
#include "index_int.h"

#include <stdlib.h>
#include <string.h>

#define TOK_MAX_BYTES DQ__TOK_MAX_BYTES
#define TOK_MAX_PARTS DQ__TOK_MAX_PARTS
#define QUERY_MAX_TERMS 64

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
  uint32_t prev = 0;
  while (p < id->end) {
    uint32_t c = utf8_next(s, id->end, p, &len);
    if (c == '_' || c == '.') {
      if (cur >= 0 && id->n_parts < TOK_MAX_PARTS) {
        id->part_start[id->n_parts] = cur;
        id->part_end[id->n_parts++] = p;
      }
      cur = -1;
      prev = 0;
      p += len;
      continue;
    }
    int boundary = 0;
    if (cur >= 0 && is_upper(c)) {
      if (!is_upper(prev))
        boundary = 1; /* getUser, utf8Decode */
      else if (p + len < id->end) {
        int l2;
        uint32_t nx = utf8_next(s, id->end, p + len, &l2);
        if (!is_upper(nx) && !is_digit(nx) && nx != '_' && nx != '.')
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
    prev = c;
    p += len;
  }
  if (cur >= 0 && id->n_parts < TOK_MAX_PARTS) {
    id->part_start[id->n_parts] = cur;
    id->part_end[id->n_parts++] = id->end;
  }
  return 1;
}

int dq__lower_copy(const unsigned char *s, int a, int b, char *out) {
  int o = 0, len;
  for (int i = a; i < b; i += len) {
    uint32_t c = lower(utf8_next(s, b, i, &len));
    char tmp[4];
    int k = utf8_put(c, tmp);
    if (o + k > TOK_MAX_BYTES)
      break;
    memcpy(out + o, tmp, (size_t)k);
    o += k;
  }
  return o;
}

typedef int (*token_cb)(void *ctx, int tflags, const char *tok, int n,
                        int start, int end);

static int tokenize(void *ctx, int flags, const char *text, int n,
                    token_cb cb) {
  const unsigned char *s = (const unsigned char *)text;
  char whole[TOK_MAX_BYTES + 4], part[TOK_MAX_BYTES + 4];
  int pos = 0, rc = SQLITE_OK;
  dq__ident id;
  int query = (flags & FTS5_TOKENIZE_QUERY) != 0;
  while (rc == SQLITE_OK && dq__ident_next(s, n, &pos, &id)) {
    int nw = dq__lower_copy(s, id.start, id.end, whole);
    if (query || id.n_parts == 0) {
      rc = cb(ctx, 0, whole, nw, id.start, id.end);
      continue;
    }
    for (int k = 0; k < id.n_parts && rc == SQLITE_OK; k++) {
      int np = dq__lower_copy(s, id.part_start[k], id.part_end[k], part);
      rc = cb(ctx, 0, part, np, id.part_start[k], id.part_end[k]);
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

int dq__tokenizer_register(sqlite3 *db) {
  static const fts5_tokenizer k_tok = {tok_create, tok_delete, tok_tokenize};
  fts5_api *api = NULL;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
  sqlite3_step(st);
  rc = sqlite3_finalize(st);
  if (rc != SQLITE_OK || !api || api->iVersion < 2)
    return rc != SQLITE_OK ? rc : SQLITE_ERROR;
  return api->xCreateTokenizer(api, "dq_ident", NULL,
                               (fts5_tokenizer *)&k_tok, NULL);
}

/* ---- query builder ----------------------------------------------------- */

static char *dq__fts_query_all(const char *text, int drop_stop);

/* With OR semantics these would pull in nearly every chunk for BM25 to
 * score while adding almost nothing to the ranking. */
int dq__is_stopword(const char *w) {
  static const char *const k_stop[] = {
      "a",    "an",   "and",  "are",   "as",    "at",   "be",   "by",
      "can",  "do",   "does", "for",   "from",  "how",  "i",    "in",
      "is",   "it",   "its",  "me",    "of",    "on",   "or",   "show",
      "that", "the",  "this", "to",    "was",   "what", "when", "where",
      "which", "who", "why",  "with",  "find",  "tell", "about", "there"};
  for (size_t i = 0; i < sizeof k_stop / sizeof k_stop[0]; i++)
    if (strcmp(w, k_stop[i]) == 0)
      return 1;
  return 0;
}

char *dq__fts_query(const char *text) {
  char *q = dq__fts_query_all(text, 1);
  return q ? q : dq__fts_query_all(text, 0);
}

static char *dq__fts_query_all(const char *text, int drop_stop) {
  if (!text)
    return NULL;
  const unsigned char *s = (const unsigned char *)text;
  int n = (int)strnlen(text, 1 << 20);
  dq_strbuf b = {0};
  char whole[TOK_MAX_BYTES + 4], part[TOK_MAX_BYTES + 4];
  char *seen[QUERY_MAX_TERMS];
  int n_terms = 0, pos = 0;
  dq__ident id;
  while (n_terms < QUERY_MAX_TERMS && dq__ident_next(s, n, &pos, &id)) {
    int nw = dq__lower_copy(s, id.start, id.end, whole);
    whole[nw] = '\0';
    int dup = drop_stop && dq__is_stopword(whole);
    for (int k = 0; k < n_terms; k++)
      dup |= strcmp(seen[k], whole) == 0;
    if (dup)
      continue;
    if (!(seen[n_terms] = strdup(whole))) {
      b.oom = 1;
      break;
    }
    n_terms++;
    if (b.n)
      dq_strbuf_add(&b, " OR ", 4);
    int single = id.n_parts <= 1;
    if (id.n_parts == 1) {
      int np = dq__lower_copy(s, id.part_start[0], id.part_end[0], part);
      single = np == nw && memcmp(part, whole, (size_t)np) == 0;
    }
    if (!single)
      dq_strbuf_add(&b, "(", 1);
    dq_strbuf_add(&b, "\"", 1);
    dq_strbuf_add(&b, whole, (size_t)nw);
    dq_strbuf_add(&b, "\"", 1);
    if (!single) {
      dq_strbuf_add(&b, " OR \"", 5);
      for (int k = 0; k < id.n_parts; k++) {
        int np = dq__lower_copy(s, id.part_start[k], id.part_end[k], part);
        if (k)
          dq_strbuf_add(&b, " ", 1);
        dq_strbuf_add(&b, part, (size_t)np);
      }
      dq_strbuf_add(&b, "\")", 2);
    }
  }
  for (int k = 0; k < n_terms; k++)
    free(seen[k]);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
