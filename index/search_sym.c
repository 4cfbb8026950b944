/*
 * search_sym.c - the symbol signal of hybrid search: the chunks where the
 * symbols a query names are defined or used, best first.
 *
 * A query names a symbol (a row of symbols or refs: code, a document's
 * defined term or numbered section) in one of these ways, each of which
 * makes it a strong name:
 *   - an identifier: a word shaped like one (tax_compute_line, getUser,
 *     LTfloatint, utf8, `parse`, parse(), Pool::take, os.path.join and its
 *     last part, not a file name's extension), looked up as written,
 *     lowercased and uppercased;
 *   - a plain word where questions put a code name ("which functions call
 *     resizebox", "where is sweeplist defined") that names a function,
 *     macro or type: C's names are often plain words, while "line" or
 *     "count" in a question is seldom the field of that name;
 *   - a section: "Article 4", "section 5", "clause 2.1(d)", "2.1(d)";
 *   - a defined term whose meaning is asked: "how does the NDA define
 *     Derived Materials", "what does derived materials mean", "what does it
 *     mean to convey a work" (a licence's verb), or that a
 *     question asks about after "is the": "how long is the Disclosure
 *     Period of the NDA", "what is the Effective Date?" (one to six
 *     words as written, lowercased or capitalised); a capitalised word
 *     next to the kind it names ("the Parser class"). A contract question
 *     uses its terms in passing ("when must the Customer pay"), so terms
 *     are taken only so;
 * or, as a weak name, by its words: a code name of two or more parts
 * (tax_compute_line: tax, compute, line) each of which is a word of the
 * query, plurals and -ed/-ing forms folded ("which function computes the
 * tax on a line"), names of three or more parts only. When the query
 * names kinds ("which function") only symbols of those kinds count; only
 * the names with the most parts, none when more than WORD_MAX tie; and
 * only when no name is strong.
 *
 * A query may also name a file ("what does parse.c do", "the NL rate in
 * tax.c", "summarise mutual_nda.md": a word with a file extension that is
 * a document's path or its end after a '/'): that file's chunks are
 * listed too, in document order, after the strong names' leading chunks.
 *
 * A strong name's leading chunks weigh 1 / (DQ__SYM_STRONG_K + rank) in the
 * fusion (those of one kind alike, search.c), which puts them ahead of
 * chunks the text signals merely prefer;
 * a named file's chunks weigh 1 / (2 DQ__SYM_STRONG_K) each, whatever their
 * place, so that BM25 and vectors order them; every other chunk listed
 * weighs 1 / (rrf_k + rank), as BM25's and dense's ranks do. Strong names come
 * in order of fewer uses (a party's name, used everywhere, says less than a
 * rare term), then of their place in the query.
 *
 * A name's chunks: its definitions (prototypes only when it has no other
 * definition or the query asks where it is declared) lead; of a qualified
 * name's (StreamWriter.close, Pool::take, Type#member: the owner is the
 * identifier before the last '.', "::", '#' or "->") those whose scope is
 * the owner or ends with it lead, and when there is one the others follow
 * as weak names; an owner that the query also names as a symbol comes after
 * its member. Its call sites, then its other uses, at most REFS_MAX,
 * follow. When the query asks for callers or uses ("who calls X", "where is
 * X used", "callers of X") a strong name's call sites lead instead, then
 * its other uses, and its definitions are not listed (a qualified name's
 * uses are not narrowed to its owner: `docqa xref Owner.member` does that).
 * Definitions and uses map to the chunk that holds their line (PDF lines count
 * within a page: of the chunks holding the line, the first whose text has the
 * name).
 */
#include "index_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define QTOK_MAX 64   /* query tokens read */
#define NGRAM_MAX 6   /* words in a term looked up whole */
#define NAMES_MAX 32  /* names matched exactly */
#define WORD_MAX 8    /* names matched by their words */
#define STEMS_MAX 256 /* distinct query words */
#define STEM_BYTES 48 /* longer words are not matched by their words */
#define ROWS_MAX 64   /* definitions or uses read per name */
#define REFS_MAX 8    /* uses listed after a name's definitions */
#define FILES_MAX 4   /* file names read from a query */

typedef struct qtok {
  int start, end; /* bytes of the query */
  int ident;      /* shaped like an identifier (2: only by its capitals) */
  int cap;        /* capitalised (not opening the query) or in capitals */
  int section;    /* follows "section", "clause", "article", ... */
  int slot;       /* a plain word where questions put a code name */
} qtok;

typedef struct mname {
  char *name;
  char *owner;      /* "StreamWriter" of StreamWriter.close, or NULL */
  int owns;         /* 1: the owner of another name (goes after it) */
  int strong, word; /* word: matched by its words */
  int qpos, qend;   /* query tokens of the match; parts for word */
  int64_t uses;
} mname;

typedef struct symq {
  dq_index *idx;
  const char *q;
  int n;
  qtok tok[QTOK_MAX];
  int n_tok;
  char stem[STEMS_MAX][STEM_BYTES];
  int n_stem;
  int decl_intent, ref_noun;
  /* bit t: token t is such a word (QTOK_MAX = 64) */
  uint64_t def_fwd, def_back, ref_passive, ref_active, kind_type, kind_func;
  mname names[NAMES_MAX + WORD_MAX];
  int n_names;
  int file_tok[FILES_MAX]; /* tokens naming a file: tax.c, mutual_nda.md */
  int n_files;
  sqlite3_stmt *st_sym, *st_ref, *st_defs, *st_uses, *st_count, *st_range,
      *st_file;
} symq;

static int lc(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
static int is_up(int c) { return c >= 'A' && c <= 'Z'; }
static int is_lo(int c) { return c >= 'a' && c <= 'z'; }
static int is_dig(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return is_up(c) || is_lo(c); }

static int word_is(const symq *q, int t, const char *const *list) {
  int n = q->tok[t].end - q->tok[t].start;
  for (size_t i = 0; list[i]; i++) {
    if ((int)strlen(list[i]) != n)
      continue;
    int k = 0;
    while (k < n && lc((unsigned char)q->q[q->tok[t].start + k]) == list[i][k])
      k++;
    if (k == n)
      return 1;
  }
  return 0;
}

/* A term's meaning is asked by one of these before it ("define X", "the
 * meaning of X") or after it ("what does X mean", "how is X defined"). */
static const char *const k_define_fwd[] = {
    "define", "defines", "definition", "definitions", "meaning", NULL};
static const char *const k_define_back[] = {"defined", "mean", "means", "meant",
                                            NULL};
#define DEFINE_REACH 4 /* tokens between such a word and the term */
static const char *const k_to[] = {"to", NULL};
static const char *const k_declare[] = {
    "declare",      "declares",  "declared",   "declaration",
    "declarations", "prototype", "prototypes", NULL};
/* The uses of a name are asked for by a noun anywhere ("callers of X",
 * "X's usages"), a passive verb after the name ("where is X called") or an
 * active one before it ("who calls X"); after it the name is the active
 * verb's subject ("what does X call"), whose body is wanted. */
static const char *const k_ref_noun[] = {
    "caller",     "callers",    "usage",       "usages",
    "references", "invocation", "invocations", NULL};
static const char *const k_ref_passive[] = {
    "called", "used", "invoked", "referenced", "mentioned", NULL};
static const char *const k_ref_active[] = {
    "call", "calls", "calling",   "invoke",  "invokes",  "invoking", "use",
    "uses", "using", "reference", "mention", "mentions", NULL};
/* Words naming a kind of symbol: "the Parser class", "which function". */
static const char *const k_kind_type[] = {
    "class",  "classes", "struct",   "structs", "structure", "interface",
    "enum",   "enums",   "type",     "types",   "typedef",   "union",
    "record", "trait",   "protocol", NULL};
static const char *const k_kind_func[] = {
    "function",  "functions", "method", "methods", "routine",     "routines",
    "procedure", "func",      "macro",  "macros",  "constructor", NULL};
/* Words before and after a plain word that make it a code name when the
 * index defines a function, macro or type of that name. Not "function"
 * before it ("which function save line info" is the first line of a
 * comment asked as a question), nor "of" or "using" ("a list of
 * addresses", where addresses is a method too). */
static const char *const k_slot_before[] = {"call",     "calls",  "calling",
                                            "called",   "invoke", "invokes",
                                            "invoking", "does",   NULL};
static const char *const k_slot_after[] = {
    "defined", "declared", "called",  "used",        "invoked",  "do",
    "does",    "return",   "returns", "implemented", "function", "method",
    "macro",   "struct",   "class",   "type",        NULL};
/* Section names that documents also write bare ("section 5" for "5."). */
static const char *const k_section_bare[] = {
    "section", "sections", "clause", "clauses", "paragraph", "sec", NULL};
static const char *const k_section[] = {
    "section",  "sections",  "clause",   "clauses", "article",
    "articles", "paragraph", "schedule", "annex",   "exhibit",
    "appendix", "sec",       "art",      NULL};

/* A section number's "(a)(ii)" tails, which the identifier rule leaves. */
static int section_tail(const char *s, int n, int i) {
  while (i < n && s[i] == '(') {
    int j = i + 1;
    while (j < n && j - i <= 5 && (is_alpha(s[j]) || is_dig(s[j])))
      j++;
    if (j == i + 1 || j >= n || s[j] != ')')
      break;
    i = j + 1;
  }
  return i;
}

static void read_tokens(symq *q) {
  const unsigned char *s = (const unsigned char *)q->q;
  int pos = 0;
  dq__ident id;
  while (q->n_tok < QTOK_MAX && dq__ident_next(s, q->n, &pos, &id)) {
    qtok *t = &q->tok[q->n_tok];
    t->start = id.start;
    t->end = id.end;
    if (is_dig(s[id.start]))
      pos = t->end = section_tail(q->q, q->n, id.end);
    int a = t->start, b = t->end, upper = 0, lower = 0;
    for (int i = a; i < b; i++) {
      int c = s[i], p = i > a ? s[i - 1] : 0;
      upper += is_up(c);
      lower += is_lo(c);
      if (c == '_' || c == '.' || (is_lo(p) && is_up(c)) ||
          (is_alpha(p) && is_dig(c)))
        t->ident = 1;
    }
    /* LTfloatint, but also SQLite and iPhone: capitals past the first make
     * a name only when the index defines it */
    if (!t->ident && upper && lower && !(upper == 1 && is_up(s[a])))
      t->ident = 2;
    if ((a > 0 && s[a - 1] == '`') || (b < q->n && s[b] == '`') ||
        (b < q->n && s[b] == '(' && !is_dig(s[a])) ||
        (a >= 2 && ((s[a - 2] == ':' && s[a - 1] == ':') ||
                    (s[a - 2] == '-' && s[a - 1] == '>'))) ||
        (a >= 1 && s[a - 1] == '#') ||
        (b + 1 < q->n && s[b] == ':' && s[b + 1] == ':'))
      t->ident = 1;
    t->cap = (upper && !lower && b - a >= 2) || (is_up(s[a]) && q->n_tok > 0);
    int k = q->n_tok;
    t->section = k > 0 && word_is(q, k - 1, k_section);
    q->n_tok++;
    if (word_is(q, k, k_define_fwd))
      q->def_fwd |= 1ull << k;
    if (word_is(q, k, k_define_back))
      q->def_back |= 1ull << k;
    /* "what does it mean to convey a work": the verb after "mean to" */
    if (k > 0 && (q->def_back >> (k - 1) & 1) && word_is(q, k, k_to))
      q->def_fwd |= 1ull << k;
    if (word_is(q, k, k_declare))
      q->decl_intent = 1;
    q->ref_noun |= word_is(q, k, k_ref_noun);
    q->ref_passive |= (uint64_t)word_is(q, k, k_ref_passive) << k;
    q->ref_active |= (uint64_t)word_is(q, k, k_ref_active) << k;
    q->kind_type |= (uint64_t)word_is(q, k, k_kind_type) << k;
    q->kind_func |= (uint64_t)word_is(q, k, k_kind_func) << k;
  }
  /* "which functions call resizebox", "where is sweeplist defined": a
   * lowercase word there may be a code name (C's are often plain words) */
  char w[DQ__TOK_MAX_BYTES + 4];
  for (int k = 0; k < q->n_tok; k++) {
    qtok *t = &q->tok[k];
    int n = dq__lower_copy(s, t->start, t->end, w);
    w[n] = '\0';
    if (t->ident || t->cap || n < 3 || dq__is_stopword(w) ||
        is_dig(s[t->start]))
      continue;
    t->slot = (k > 0 && word_is(q, k - 1, k_slot_before)) ||
              (k + 1 < q->n_tok && word_is(q, k + 1, k_slot_after));
  }
}

/* A question about what a term stands for puts it after "is the" and
 * ends there or goes on with where it is defined: "how long is the
 * Disclosure Period of the NDA", "what is the Effective Date?", "when is
 * the Break Date under the lease". A clause term's definition states its
 * value ("... for two (2) years (the "Disclosure Period")"). Not "what is
 * the Customer required to pay", where it is only mentioned. */
static const char *const k_wh[] = {"what", "how", "when", "which", "who",
                                   NULL};
static const char *const k_is[] = {"is", "are", "was", "were", NULL};
static const char *const k_the[] = {"the", NULL};
static const char *const k_where_after[] = {"of",   "under", "in",
                                            "for",  "per",   "according",
                                            "from", "within", NULL};
static int asks_subject(const symq *q, int t, int e) {
  return t >= 3 && word_is(q, 0, k_wh) && word_is(q, t - 1, k_the) &&
         word_is(q, t - 2, k_is) &&
         (e + 1 >= q->n_tok || word_is(q, e + 1, k_where_after));
}

/* Does the query ask the meaning of the term at tokens [t, e]? */
static int asks_meaning(const symq *q, int t, int e) {
  for (int d = 1; d <= DEFINE_REACH; d++)
    if ((t - d >= 0 && (q->def_fwd >> (t - d) & 1)) ||
        (e + d < QTOK_MAX && (q->def_back >> (e + d) & 1)))
      return 1;
  return asks_subject(q, t, e);
}

/* Does the query ask for the uses of the name at tokens [t, e]? */
static int wants_uses(const symq *q, int t, int e) {
  uint64_t before = t ? (1ull << t) - 1 : 0;
  uint64_t after = e + 1 < QTOK_MAX ? ~((2ull << e) - 1) : 0;
  return q->ref_noun || (q->ref_active & before) || (q->ref_passive & after);
}

/* Kind families of known_as() named by the words next to tokens [t, e]. */
static int kind_named(const symq *q, int t, int e) {
  uint64_t near =
      (t ? 1ull << (t - 1) : 0) | (e + 1 < QTOK_MAX ? 1ull << (e + 1) : 0);
  return (q->kind_type & near ? 16 : 0) | (q->kind_func & near ? 32 : 0);
}

static int has_stem(const symq *q, const char *w) {
  for (int i = 0; i < q->n_stem; i++)
    if (strcmp(q->stem[i], w) == 0)
      return 1;
  return 0;
}

/* Lowercased, stemmed part k of id into out; 0 when too long to match. */
static int part_stem(const unsigned char *s, const dq__ident *id, int k,
                     char out[STEM_BYTES]) {
  char buf[DQ__TOK_MAX_BYTES + 4];
  int n = dq__lower_copy(s, id->part_start[k], id->part_end[k], buf);
  if (n <= 0 || n >= STEM_BYTES)
    return 0;
  memcpy(out, buf, (size_t)n);
  out[n] = '\0';
  dq__stem(out);
  return 1;
}

static void read_stems(symq *q) {
  const unsigned char *s = (const unsigned char *)q->q;
  int pos = 0;
  dq__ident id;
  char w[STEM_BYTES];
  while (q->n_stem < STEMS_MAX && dq__ident_next(s, q->n, &pos, &id))
    for (int k = 0; k < id.n_parts && q->n_stem < STEMS_MAX; k++)
      if (part_stem(s, &id, k, w) && !has_stem(q, w))
        strcpy(q->stem[q->n_stem++], w);
}

static mname *find_name(symq *q, const char *name) {
  for (int i = 0; i < q->n_names; i++)
    if (strcmp(q->names[i].name, name) == 0)
      return &q->names[i];
  return NULL;
}

static int64_t count_uses(symq *q, const char *name) {
  sqlite3_bind_text(q->st_count, 1, name, -1, SQLITE_STATIC);
  int64_t n = sqlite3_step(q->st_count) == SQLITE_ROW
                  ? sqlite3_column_int64(q->st_count, 0)
                  : 0;
  sqlite3_reset(q->st_count);
  return n;
}

static const char *const k_types[] = {"class", "struct",  "interface", "enum",
                                      "type",  "typedef", "union",     "record",
                                      "trait", "object",  "protocol",  NULL};
static const char *const k_funcs[] = {"function", "method", "prototype",
                                      "macro", NULL};

static int in_list(const char *w, const char *const *list) {
  for (size_t i = 0; w && list[i]; i++)
    if (strcmp(w, list[i]) == 0)
      return 1;
  return 0;
}

/* Bits of a symbol kind: 1 code, 2 term, 4 section, 16 a type, 32 a
 * function or macro. */
static int kind_bits(const char *k) {
  if (!k)
    return 0;
  if (strcmp(k, "term") == 0)
    return 2;
  if (strcmp(k, "section") == 0)
    return 4;
  return 1 | (in_list(k, k_types) ? 16 : 0) | (in_list(k, k_funcs) ? 32 : 0);
}

/* How the index knows name: kind_bits of its definitions, and 8 when it is
 * used. */
static int known_as(symq *q, const char *name) {
  int how = 0, rc;
  sqlite3_bind_text(q->st_sym, 1, name, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step(q->st_sym)) == SQLITE_ROW)
    how |= kind_bits((const char *)sqlite3_column_text(q->st_sym, 0));
  sqlite3_reset(q->st_sym);
  sqlite3_bind_text(q->st_ref, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step(q->st_ref) == SQLITE_ROW)
    how |= 8;
  sqlite3_reset(q->st_ref);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? how : -1;
}

/* Records name, found at query tokens [t, e], when the index knows it in
 * a way the query's wording makes sure of: an identifier naming code
 * (as_ident 1), a plain word in a code name's place naming a function,
 * macro or type (as_ident 2), a word whose capitals alone make it look like
 * a name that the index defines (as_ident 3), a section named as one, a term
 * whose meaning is asked, a word next to the kind of symbol it names ("the
 * Parser class"). *found (may be NULL): 1 when recorded. Names the query may
 * only mention in passing (a contract's "Customer") are left to BM25 and
 * vectors. */
static dq_status try_name(symq *q, const char *name, int t, int e, int as_ident,
                          int as_section, int *found) {
  if (q->n_names >= NAMES_MAX || find_name(q, name))
    return DQ_OK;
  int how = known_as(q, name);
  if (how < 0)
    return dq__db_err(q->idx, SQLITE_ERROR, "looking up a symbol");
  if (!((as_ident == 1 && (how & 9)) || (as_ident == 2 && (how & 48)) ||
        (as_ident == 3 && (how & 1)) || (as_section && (how & 4)) ||
        ((how & 2) && asks_meaning(q, t, e)) || (how & kind_named(q, t, e))))
    return DQ_OK;
  mname *m = &q->names[q->n_names];
  if (!(m->name = strdup(name)))
    return dq_error_set(&q->idx->err, DQ_ERR_NOMEM, "out of memory");
  q->n_names++;
  m->qpos = t;
  m->qend = e;
  m->strong = 1;
  m->uses = count_uses(q, name);
  if (found)
    *found = 1;
  return DQ_OK;
}

/* The query's bytes [a, b) with runs of spaces as one space, cased: 0 as
 * written, 1 lowercase, 2 each word capitalised, 3 uppercase. */
static char *span_text(const symq *q, int a, int b, int cased) {
  char *out = malloc((size_t)(b - a) + 1);
  if (!out)
    return NULL;
  int o = 0, word_start = 1;
  for (int i = a; i < b; i++) {
    int c = (unsigned char)q->q[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (o && out[o - 1] != ' ')
        out[o++] = ' ';
      word_start = 1;
      continue;
    }
    if (cased == 1 || (cased == 2 && !word_start))
      c = lc(c);
    else if (cased == 3 || (cased == 2 && word_start))
      c = is_lo(c) ? c - 32 : c;
    word_start = c == '-';
    out[o++] = (char)c;
  }
  out[o] = '\0';
  return out;
}

/* The owner that qualifies the name starting at byte b: the identifier
 * before a '.', "::", "->" or '#' that ends at b (StreamWriter.close,
 * Pool::take, Type#member, conn->close), malloc'd; NULL with errno 0 when
 * there is none. */
static char *owner_before(const symq *q, int b) {
  const unsigned char *s = (const unsigned char *)q->q;
  int e = b >= 1 && (s[b - 1] == '.' || s[b - 1] == '#') ? b - 1
          : b >= 2 && ((s[b - 2] == ':' && s[b - 1] == ':') ||
                       (s[b - 2] == '-' && s[b - 1] == '>'))
              ? b - 2
              : -1;
  int a = e;
  while (a > 0 && (is_alpha(s[a - 1]) || is_dig(s[a - 1]) || s[a - 1] == '_' ||
                   s[a - 1] >= 0x80))
    a--;
  errno = 0;
  if (e <= 0 || a == e || is_dig(s[a]))
    return NULL;
  return strndup(q->q + a, (size_t)(e - a));
}

/* try_name on the query's tokens [t, e], from byte a (the token before t
 * for "section 5") to the end of e. */
static dq_status try_span(symq *q, int a, int t, int e, int as_ident,
                          int as_section, int cased, int *found) {
  char *name = span_text(q, a, q->tok[e].end, cased);
  if (!name)
    return dq_error_set(&q->idx->err, DQ_ERR_NOMEM, "out of memory");
  int before = q->n_names;
  dq_status s = try_name(q, name, t, e, as_ident, as_section, found);
  free(name);
  if (!s && q->n_names > before && as_ident &&
      !(q->names[before].owner = owner_before(q, a)) && errno == ENOMEM)
    s = dq_error_set(&q->idx->err, DQ_ERR_NOMEM, "out of memory");
  return s;
}

/* Only spaces or one hyphen between two tokens: they may be one term. */
static int joined(const symq *q, int t) {
  int hyphen = 0;
  for (int i = q->tok[t].end; i < q->tok[t + 1].start; i++) {
    int c = q->q[i];
    if (c == '-' && !hyphen)
      hyphen = 1;
    else if (c != ' ' && c != '\t')
      return 0;
  }
  return 1;
}

static const char *const k_exts[] = {
    "c",     "h",    "cc",   "cpp",  "cxx",   "hpp",  "hh",  "cu",   "cuh",
    "cs",    "java", "kt",   "kts",  "go",    "rs",   "py",  "pyi",  "rb",
    "php",   "js",   "mjs",  "cjs",  "jsx",   "ts",   "tsx", "mts",  "cts",
    "swift", "md",   "txt",  "rst",  "html",  "htm",  "xml", "json", "yaml",
    "yml",   "toml", "ini",  "cfg",  "pdf",   "docx", "odt", "epub", "eml",
    "mbox",  "rtf",  "sh",   "mk",   "cmake", "png",  "jpg", "jpeg", "tif",
    "tiff",  "msg",  "pptx", "xlsx", "doc",   "ods",  "xls", "odp",  NULL};

int dq__file_ext(const char *a, const char *b) {
  for (size_t i = 0; k_exts[i]; i++) {
    size_t n = strlen(k_exts[i]);
    if ((size_t)(b - a) == n && memcmp(a, k_exts[i], n) == 0)
      return 1;
  }
  return 0;
}

static dq_status exact_names(symq *q) {
  dq_status s = DQ_OK;
  int covered = -1; /* the last token of a term or section found */
  for (int t = 0; t < q->n_tok && !s; t++) {
    const qtok *k = &q->tok[t];
    /* "Article 4", "Derived Materials", "Section 5": the longest first */
    int last = t, found = 0;
    while (last + 1 < q->n_tok && last - t + 1 < NGRAM_MAX && joined(q, last))
      last++;
    for (int e = last; e > t && !s && !found; e--)
      for (int c = 0; c < 3 && !s && !found; c++)
        if (!(s = try_span(q, k->start, t, e, 0, 1, c, &found)) && found)
          covered = e > covered ? e : covered;
    /* "section 5" of a document that numbers its sections "5." */
    if (k->section && covered < t && word_is(q, t - 1, k_section_bare) && !s)
      s = try_span(q, k->start, t, t, 0, 1, 0, NULL);
    int numbered = is_dig((unsigned char)q->q[k->start]);
    if (numbered && !k->section && !s && q->q[k->end - 1] == ')')
      s = try_span(q, k->start, t, t, 0, 1, 0, NULL); /* "2.1(d)" */
    if (k->ident && !numbered && !s) {
      /* as written; snake_case and CAPS also in the other case (a
       * camelCase name lowercased is another name) */
      int mixed = 0;
      for (int i = k->start + 1; i < k->end; i++)
        mixed |=
            is_up((unsigned char)q->q[i]) && is_lo((unsigned char)q->q[i - 1]);
      mixed |= k->ident == 2;
      for (int c = 0; c < 4 && !s; c++)
        if (c != 2 && (c == 0 || !mixed))
          s = try_span(q, k->start, t, t, k->ident == 2 ? 3 : 1, 0, c, NULL);
      /* os.path.join, Session.flush: the last part is the name (not in
       * a file's name: tax.c, setup.py) */
      const char *dot = NULL;
      for (int i = k->start; i < k->end; i++)
        if (q->q[i] == '.')
          dot = q->q + i;
      if (dot && !s && !dq__file_ext(dot + 1, q->q + k->end))
        s = try_span(q, (int)(dot + 1 - q->q), t, t, 1, 0, 0, NULL);
      else if (dot && q->n_files < FILES_MAX)
        q->file_tok[q->n_files++] = t;
    }
    /* a one-word term whose meaning is asked ("what does it mean to
     * convey a work": GPL's "convey"), however written */
    if (!s && (k->cap || asks_meaning(q, t, t)) && !k->ident)
      s = try_span(q, k->start, t, t, 0, 0, 0, NULL);
    if (k->slot && !s)
      s = try_span(q, k->start, t, t, 2, 0, 0, NULL);
  }
  return s;
}

/* The word match. Its candidates are the names starting with a query word
 * (as written, capitalised or in capitals), which every name whose parts
 * are all query words does. Only names of three or more parts count: two
 * words say too little (money_rounding for "rounds money", copy_file for
 * "return a copy of the ... file-system object", openTransaction for
 * "called when a write-transaction is first opened" all missed). When the
 * query names kinds ("which function") only symbols of those kinds count.
 * Terms and sections are not matched by their words: a question about a
 * contract uses its terms in passing. */
static dq_status word_names(symq *q) {
  mname *best = &q->names[q->n_names];
  int want = (q->kind_type ? 16 : 0) | (q->kind_func ? 32 : 0);
  int n_best = 0, best_parts = 3, overflow = 0;
  char prefix[STEM_BYTES + 1], upto[STEM_BYTES + 1];
  dq_status st = DQ_OK;
  for (int i = 0; i < q->n_stem && !st; i++) {
    size_t len = strlen(q->stem[i]);
    if (len < 2)
      continue;
    for (int c = 0; c < 3 && !st; c++) {
      memcpy(prefix, q->stem[i], len + 1);
      for (size_t j = 0; j < len; j++)
        if ((c == 1 && j == 0) || c == 2)
          prefix[j] = (char)(is_lo((unsigned char)prefix[j]) ? prefix[j] - 32
                                                             : prefix[j]);
      if (c && strcmp(prefix, q->stem[i]) == 0)
        continue;
      memcpy(upto, prefix, len + 1);
      if ((unsigned char)upto[len - 1] == 0xff)
        continue;
      upto[len - 1]++;
      sqlite3_bind_text(q->st_range, 1, prefix, -1, SQLITE_STATIC);
      sqlite3_bind_text(q->st_range, 2, upto, -1, SQLITE_STATIC);
      int rc;
      while ((rc = sqlite3_step(q->st_range)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q->st_range, 0);
        int nn = sqlite3_column_bytes(q->st_range, 0);
        const char *kind = (const char *)sqlite3_column_text(q->st_range, 1);
        int bits = kind_bits(kind);
        if (!name || find_name(q, name) || !(bits & 1) ||
            (want && !(bits & want)))
          continue;
        /* every part a query word, two of them neither stop words nor
         * the kind the query names (hashFunction for "which function
         * allocates a hash table") */
        int pos = 0, parts = 0, content = 0, ok = 1;
        dq__ident id;
        char w[STEM_BYTES];
        while (ok && dq__ident_next((const unsigned char *)name, nn, &pos, &id))
          for (int k = 0; ok && k < id.n_parts; k++) {
            ok = part_stem((const unsigned char *)name, &id, k, w) &&
                 has_stem(q, w);
            parts++;
            content += ok && strlen(w) >= 3 && !dq__is_stopword(w) &&
                       !in_list(w, k_kind_type) && !in_list(w, k_kind_func);
          }
        if (!ok || content < 2 || parts < best_parts)
          continue;
        int dup = 0;
        for (int b = 0; b < n_best; b++)
          dup |= strcmp(best[b].name, name) == 0;
        if (dup)
          continue;
        if (parts > best_parts) {
          for (int b = 0; b < n_best; b++)
            free(best[b].name);
          n_best = 0;
          overflow = 0;
          best_parts = parts;
        }
        if (n_best == WORD_MAX) {
          overflow = 1;
          continue;
        }
        mname *m = &best[n_best];
        memset(m, 0, sizeof *m);
        if (!(m->name = strdup(name))) {
          st = dq_error_set(&q->idx->err, DQ_ERR_NOMEM, "out of memory");
          break;
        }
        m->word = 1;
        m->qpos = parts;
        n_best++;
      }
      if (!st && rc != SQLITE_DONE && rc != SQLITE_ROW)
        st = dq__db_err(q->idx, rc, "reading symbol names");
      sqlite3_reset(q->st_range);
    }
  }
  if (overflow && !st) {
    for (int b = 0; b < n_best; b++)
      free(best[b].name);
    n_best = 0;
  }
  for (int b = 0; b < n_best; b++)
    best[b].uses = count_uses(q, best[b].name);
  q->n_names += n_best;
  return st;
}

static int name_cmp(const void *a, const void *b) {
  const mname *x = a, *y = b;
  if (x->strong != y->strong)
    return y->strong - x->strong;
  if (x->word != y->word)
    return x->word - y->word;
  if (x->owns != y->owns)
    return x->owns - y->owns;
  if (x->uses != y->uses)
    return x->uses < y->uses ? -1 : 1;
  if (x->qpos != y->qpos)
    return x->word ? y->qpos - x->qpos : x->qpos - y->qpos;
  return strcmp(x->name, y->name);
}

/* Adds the chunk of statement st's row unless listed; 1 when added, 0 when
 * not, -1 out of memory. */
static int list_add(dq__sym_list *l, size_t max, sqlite3_stmt *st, int strong,
                    const char *name) {
  int64_t chunk = sqlite3_column_int64(st, 1);
  for (size_t i = 0; i < l->n; i++)
    if (l->hit[i].chunk == chunk)
      return 0;
  if (l->n >= max)
    return 0;
  const char *kind = (const char *)sqlite3_column_text(st, 0);
  const char *where = (const char *)sqlite3_column_text(st, 2);
  dq__sym_hit *h = &l->hit[l->n];
  h->chunk = chunk;
  h->strong = strong;
  h->name = name;
  h->kind = kind ? strdup(kind) : NULL;
  h->where = where && where[0] ? strdup(where) : NULL;
  h->line = sqlite3_column_int(st, 3);
  l->n++; /* freed with the list either way */
  return (kind && !h->kind) || (where && where[0] && !h->where) ? -1 : 1;
}

/* Is owner the scope `where` or its last part (".owner", ":owner")? The
 * rule of SQL_ROWS. */
static int owner_of(const char *owner, const char *where) {
  size_t n = strlen(owner), w = where ? strlen(where) : 0;
  return w >= n && strcmp(where + w - n, owner) == 0 &&
         (w == n || where[w - n - 1] == '.' || where[w - n - 1] == ':');
}

/* Adds a name's definitions (what = 0: not prototypes; 1: prototypes) or
 * uses (2: call sites; 3: other uses), at most cap of them; strong: as a
 * strong name's leading chunks. *seen (may be NULL): rows of that sort
 * read, with a chunk or not (0: the name has none, when the list had
 * room). */
static dq_status add_rows(symq *q, const mname *m, int what, size_t cap,
                          int strong, dq__sym_list *l, size_t max,
                          size_t *seen) {
  sqlite3_stmt *st = what < 2 ? q->st_defs : q->st_uses;
  sqlite3_bind_text(st, 1, m->name, -1, SQLITE_STATIC);
  /* Definitions of StreamWriter.close: StreamWriter's lead, and when it
   * has one the others follow as weak names. */
  const char *owner = what < 2 ? m->owner : NULL;
  sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
  int rc = SQLITE_DONE, owned = 0;
  size_t added = 0, n_seen = 0;
  while (added < cap && l->n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *kind = (const char *)sqlite3_column_text(st, 0);
    int proto = kind && strcmp(kind, "prototype") == 0;
    int call = kind && strcmp(kind, "call") == 0;
    if ((what == 0 && proto) || (what == 1 && !proto) ||
        (what == 2 && !call) || (what == 3 && call))
      continue;
    n_seen++;
    if (sqlite3_column_type(st, 1) == SQLITE_NULL)
      continue;
    int mine =
        owner && owner_of(owner, (const char *)sqlite3_column_text(st, 2));
    owned |= mine;
    int a = list_add(l, max, st, owned && !mine ? 0 : strong, m->name);
    if (a < 0) {
      sqlite3_reset(st);
      return dq_error_set(&q->idx->err, DQ_ERR_NOMEM, "out of memory");
    }
    added += (size_t)a;
  }
  sqlite3_reset(st);
  if (seen)
    *seen = n_seen;
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return dq__db_err(q->idx, rc, "reading a symbol's definitions or uses");
  return DQ_OK;
}

static int path_char(unsigned char c) {
  return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/';
}

/* Adds the chunks of the documents named like query token t, in document
 * order; the name joins l's. The name is first the token with the
 * folders the query writes before it ("src/tax.c", or "beta/claim.c" as
 * an index of several roots shows it), matching a stored path, its end
 * after a '/', or a path as shown; where none matches, the token alone
 * ("tax.c" of "/home/me/src/tax.c"). */
static dq_status add_file(symq *q, int t, dq__sym_list *l, size_t max) {
  const qtok *k = &q->tok[t];
  int a = k->start;
  while (a > 0 && path_char((unsigned char)q->q[a - 1]))
    a--;
  while (a < k->start && (q->q[a] == '/' || q->q[a] == '.'))
    a++; /* "./x.c", and the last folder of "/abs/x.c" at most */
  for (int try = a < k->start ? 0 : 1; try < 2; try++) {
    int from = try ? k->start : a;
    char *name = strndup(q->q + from, (size_t)(k->end - from));
    if (!name)
      return dq_error_set(&q->idx->err, DQ_ERR_NOMEM, "out of memory");
    l->names[l->n_names++] = name;
    sqlite3_bind_text(q->st_file, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q->st_file, 2, (int64_t)(max - l->n));
    size_t before = l->n;
    int rc;
    while ((rc = sqlite3_step(q->st_file)) == SQLITE_ROW)
      if (list_add(l, max, q->st_file, 2, name) < 0) {
        sqlite3_reset(q->st_file);
        return dq_error_set(&q->idx->err, DQ_ERR_NOMEM, "out of memory");
      }
    sqlite3_reset(q->st_file);
    if (rc != SQLITE_DONE)
      return dq__db_err(q->idx, rc, "reading a named file's chunks");
    if (l->n > before)
      break;
  }
  return DQ_OK;
}

/* Pass 0 lists each name's leading chunks (a strong name's weigh strong),
 * then the chunks of the files the query names; pass 1 what follows the
 * names' leading chunks, weak. */
static dq_status build_list(symq *q, size_t max, dq__sym_list *l) {
  dq_status s = DQ_OK;
  for (int pass = 0; pass < 2 && !s; pass++) {
    if (pass == 1)
      for (int f = 0; f < q->n_files && !s && l->n < max; f++)
        s = add_file(q, q->file_tok[f], l, max);
    for (int i = 0; i < q->n_names && !s; i++) {
      const mname *m = &q->names[i];
      int lead = m->strong && pass == 0;
      if (m->strong && wants_uses(q, m->qpos, m->qend)) {
        s = add_rows(q, m, 2 + pass, pass ? REFS_MAX : ROWS_MAX, lead, l, max,
                     NULL);
      } else if (pass == 0) {
        size_t defs = 0;
        s = add_rows(q, m, 0, ROWS_MAX, lead, l, max, &defs);
        if (!s && (q->decl_intent || !defs))
          s = add_rows(q, m, 1, ROWS_MAX, lead, l, max, NULL);
      } else if (!m->word) {
        size_t before = l->n;
        s = add_rows(q, m, 2, REFS_MAX, 0, l, max, NULL);
        size_t left = REFS_MAX - (l->n - before);
        if (!s && left)
          s = add_rows(q, m, 3, left, 0, l, max, NULL);
      }
    }
  }
  return s;
}

void dq__sym_list_free(dq__sym_list *l) {
  if (!l)
    return;
  for (size_t i = 0; i < l->n_names; i++)
    free(l->names[i]);
  free(l->names);
  for (size_t i = 0; i < l->n; i++) {
    free(l->hit[i].kind);
    free(l->hit[i].where);
  }
  free(l->hit);
  memset(l, 0, sizeof *l);
}

static void symq_finish(symq *q) {
  sqlite3_finalize(q->st_sym);
  sqlite3_finalize(q->st_ref);
  sqlite3_finalize(q->st_defs);
  sqlite3_finalize(q->st_uses);
  sqlite3_finalize(q->st_count);
  sqlite3_finalize(q->st_range);
  sqlite3_finalize(q->st_file);
  for (int i = 0; i < q->n_names; i++) {
    free(q->names[i].name);
    free(q->names[i].owner);
  }
  free(q);
}

/* A name's definitions or uses (table t) passing the filter, those whose
 * `where` is the owner ?2 (or ends with ".owner", ":owner") first, call
 * sites first, functions and types before other definitions (sqlite3ext.h's
 * macro alias of a function is not its definition), then by path and line, at
 * most 256: kind, the chunk that holds its line (the first of its document that
 * does, one whose text has the name first; a PDF's lines count within its
 * page, which a symbol stored before pages were recorded lacks),
 * column `where` (the definition's scope, the use's caller) and the line. The
 * chunk is looked up only for the rows kept, after the sort. */
#define SQL_ROWS(t, where)                                                     \
  "SELECT x.kind, (SELECT c.id FROM chunks c WHERE c.doc = x.doc AND"          \
  " c.line_start <= x.line AND c.line_end >= x.line AND (x.page = 0 OR"        \
  " (c.page_start <= x.page AND c.page_end >= x.page)) ORDER BY"               \
  " instr(c.text, ?1) = 0, c.ordinal LIMIT 1), x.w, x.line FROM (SELECT"       \
  " s.kind, s.doc, s.line, s.page, s." where " AS w FROM " t " s JOIN"         \
  " documents d"                                                               \
  " ON d.id = s.doc WHERE s.name = ?1 AND dq_filter_ok(d.root, d.path, "       \
  "d.kind) ORDER"                                                              \
  " BY NOT coalesce(s." where " = ?2 OR substr(s." where ", -length(?2) - 1)"  \
  " IN ('.' || ?2, ':' || ?2), 0), s.kind <> 'call', s.kind NOT IN"            \
  " ('function', 'method', 'class',"                                           \
  " 'struct', 'interface', 'enum', 'type', 'union', 'record', 'trait',"        \
  " 'protocol'), d.root, d.path, s.page, s.line, s.col LIMIT 256) x"

dq_status dq__symbol_top(dq_index *idx, const char *query, size_t max,
                         dq__sym_list *out) {
  memset(out, 0, sizeof *out);
  if (!query || !max)
    return DQ_OK;
  symq *q = calloc(1, sizeof *q);
  if (!q)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  q->idx = idx;
  q->q = query;
  q->n = (int)strnlen(query, 1 << 16);
  dq_status s;
  if ((s = dq__prepare(idx,
                       "SELECT kind FROM symbols WHERE name = ?1"
                       " LIMIT 64",
                       &q->st_sym)) ||
      (s = dq__prepare(idx, "SELECT 1 FROM refs WHERE name = ?1 LIMIT 1",
                       &q->st_ref)) ||
      (s = dq__prepare(idx,
                       "SELECT count(*) FROM (SELECT 1 FROM refs WHERE"
                       " name = ?1 LIMIT 100000)",
                       &q->st_count)) ||
      (s = dq__prepare(idx, SQL_ROWS("symbols", "scope"), &q->st_defs)) ||
      (s = dq__prepare(idx, SQL_ROWS("refs", "caller"), &q->st_uses)) ||
      (s = dq__prepare(idx,
                       "SELECT name, kind FROM symbols WHERE"
                       " name >= ?1 AND name < ?2 LIMIT 4000",
                       &q->st_range)) ||
      (s = dq__prepare(idx,
                       "SELECT 'file', c.id, NULL, 0 FROM chunks c JOIN"
                       " documents d ON d.id = c.doc WHERE (d.path = ?1 OR"
                       " substr(d.path, -length(?1) - 1) = '/' || ?1 OR"
                       " dq_shown_is(d.root, d.path, ?1)) AND"
                       " dq_filter_ok(d.root, d.path, d.kind) ORDER BY d.root,"
                       " d.path, c.ordinal LIMIT ?2",
                       &q->st_file)))
    goto done;
  read_tokens(q);
  read_stems(q);
  /* names matched by their words only when the query names none */
  if ((s = exact_names(q)) || (!q->n_names && (s = word_names(q))))
    goto done;
  if (!q->n_names && !q->n_files)
    goto done;
  for (int i = 0; i < q->n_names; i++)
    for (int j = 0; j < q->n_names; j++)
      q->names[j].owns |=
          q->names[i].owner && strcmp(q->names[i].owner, q->names[j].name) == 0;
  qsort(q->names, (size_t)q->n_names, sizeof q->names[0], name_cmp);
  out->hit = calloc(max, sizeof *out->hit);
  out->names = /* a file may add two names (add_file) */
      calloc((size_t)(q->n_names + 2 * q->n_files), sizeof *out->names);
  if (!out->hit || !out->names) {
    s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  /* the list points into names, which it now owns */
  for (int i = 0; i < q->n_names; i++)
    out->names[out->n_names++] = q->names[i].name;
  s = build_list(q, max, out);
  for (int i = 0; i < q->n_names; i++)
    q->names[i].name = NULL;
done:
  symq_finish(q);
  if (s)
    dq__sym_list_free(out);
  return s;
}
