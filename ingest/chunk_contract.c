/*
 * chunk_contract.c - the contract chunker: clause structure, defined terms
 * and cross-references of agreements, in plain text from any reader.
 *
 * Structure comes from headings found at the start of a paragraph (first
 * line, after an empty line, or after a line ending in . : ; or a heading):
 *   rank 0  SCHEDULE 2 / Exhibit A / Annex / Appendix   (symbol "Schedule 2")
 *   rank 1  ARTICLE IV / Article 4                      (symbol "Article IV")
 *   rank 1+d  d-level numbers "8." "8.2" "8.2.1", also "Section 8.2", "§ 8"
 *             (symbol "8.2"; "8. Termination" keeps its title in the path)
 *   rank 10-13  (a) (iv) (A) (1)                       (symbol "8.2(a)")
 *   reader headings (dq_text.headings; Markdown '#' lines in Markdown or
 *   plain text, outside code fences) rank = their level unless
 *   their title matches one of the forms above; a heading of a level whose
 *   first recognised heading ranked r ("## Article 1" -> 1) ranks r too
 *   ("## Signatures"); the document title (the only level-1 reader heading,
 *   first of several, no recognised form) starts a chunk named after it but
 *   is no level of the path, so "1. Definitions" below it is outermost.
 *   A PDF's reader headings (from its fonts) start paragraphs where a
 *   numbered heading may stand, and "1 Introduction" in a heading's font
 *   is numbered (elsewhere "8" alone needs a title in capitals). One
 *   without a recognised form ranks as the least-ranked recognised
 *   heading in its font ("Concept Index" with "Appendix A" and "1
 *   Introduction"), else one below the innermost open section in a
 *   larger font (a manual's "asn1 create element" under "4.2 ASN.1 field
 *   functions"), else is none (a title page's lines before the first
 *   clause); the first, when no other has its font or a larger one, is
 *   the document's title, as a reader's title is.
 * Paragraph starts also include the line after a short all-capitals line
 * ("LEASE") and, in paged text, the first line of a page; running footers
 * ("Page 2 of 5", "- 3 -") count as blank lines there.
 * The section path is the stack of labels: "8 Termination > 8.2 > (a)".
 * A heading that becomes the outermost level (a schedule, an article, or a
 * top-level "8." when the text has no articles) starts a new chunk; nested
 * clauses, paragraphs and (1)/(A) items outside any clause (parties,
 * recitals) are soft cuts packed within the budget.
 *
 * Defined terms (symbols of kind "term"): "X" means / shall mean / has the
 * meaning / includes ..., quoted capitalised terms in a parenthetical,
 * (the "Agreement"), (each a "Party" and together the "Parties"), and after
 * "is the" / "each a" / "together the" / "hereinafter"; straight
 * or curly quotes, Markdown emphasis inside the quotes ("**Term**") allowed,
 * and a line break inside a paragraph (the name has one space there, and
 * a use may wrap too); a licence's lower-case terms after To / A / The
 * (To "convey" a work means, A "covered work" means) and "X" for or of a
 * few words then means ("Corresponding Source" for a work ... means).
 * Every later whole-word, case-sensitive occurrence of a term
 * is a ref of kind "use". Cross-references (kind "xref"): Section 5.2,
 * Sections 5.2 and 5.3, Clause 7, § 4, Section 8.2(a) -> "8.2(a)"; Article IV
 * -> "Article IV"; Schedule 2 -> "Schedule 2". A ref's caller is the
 * innermost enclosing section symbol ("8.2(a)"), "" before the first.
 *
 * Detection (dq_chunk_detect): a text is a contract when it has numbered
 * clause headings together with defined terms or cross-references.
 */
#include "chunk_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_MAX 96 /* bytes of a heading label in the section path */
#define MAX_DEPTH 16 /* heading stack */
#define TERM_MAX_BYTES 80
/* A term inside its quotes: a capital, then up to 79 more characters, none
 * a quote or '*', with line breaks inside a paragraph (not before a blank
 * line): a term may wrap ("Disclosure\nPeriod"). */
#define TERM_RX                                                                \
  "(\\p{Lu}(?:[^\"\\x{201C}\\x{201D}\\n*]|\\n(?![ \\t]*\\n)){0,79}?)"

typedef struct entry {
  int rank;
  char label[LABEL_MAX + 1];
  char sym[LABEL_MAX + 1]; /* section symbol, "" when none */
  int letter;              /* (a)-style: the letter, for (h)->(i) */
  int flevel;              /* a PDF's font heading level of its line, 0 */
} entry;

/* Where a section starts: refs after `offset` have `caller`. */
typedef struct secmark {
  size_t offset;
  char *caller;
  size_t skip_a, skip_b; /* the heading's own label: no xref there */
} secmark;

typedef struct cx {
  ck_ctx *c;
  int emit;
  const char *s;
  size_t n;
  pcre2_match_data *md;
  entry stack[MAX_DEPTH];
  int depth;
  secmark *marks;
  size_t n_marks, cap_marks;
  char **terms; /* distinct defined terms */
  size_t n_terms, cap_terms;
  size_t *term_sites; /* offsets of definition occurrences (not uses) */
  size_t n_sites, cap_sites;
  int n_struct, n_major, n_xref;
  /* Reader/Markdown heading levels: lvl_rank[L] = 1 + the rank the first
   * heading of level L that had a recognised form ("## Article 1") got, so
   * "## Signatures" ranks with the articles; 0 = none seen. */
  int lvl_rank[8];
  int line_level; /* level of the heading on the current line, 0 if none */
  /* A PDF's font heading levels: font_rank[L] = 1 + the least rank of the
   * headings with a recognised form on lines of level L (a manual's
   * "Appendix A" and "1 Introduction" in one font: its "Concept Index"
   * closes the appendix); 0 = none seen. line_flevel: the current line's. */
  int font_rank[8];
  int line_flevel;
  /* Undotted clause numbers: the last one taken as a clause ("3."), and
   * the next number of a list that restarted at 1 inside that clause
   * ("1. "Adaptation" means ...", "2. ..."), 0 when none; such a list's
   * numbers are paragraphs of the clause, not clauses. top_indent: the
   * last clause's indent; a number indented more is a list's too. */
  int last_top, list_next;
  size_t top_indent;
  int fallback;   /* the current line's heading had no recognised form */
  /* inside a ``` or ~~~ fence, where a '#' line is code; which kinds of
   * text have '#' headings at all is ck_md_heading_ok's */
  int fence;
} cx;

static int grow_arr(void **arr, size_t *cap, size_t n, size_t elem) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 32;
  void *p = realloc(*arr, ncap * elem);
  if (!p)
    return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

static dq_status oom(cx *x) {
  return dq_error_set(x->c->err, DQ_ERR_NOMEM, "%s: out of memory", x->c->path);
}

static void copy_label(char *dst, const char *src, size_t n) {
  if (n > LABEL_MAX) {
    n = LABEL_MAX;
    while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
      n--;
  }
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* "SCHEDULE" -> "Schedule" */
static void word_case(char *w) {
  for (size_t i = 1; w[i] && w[i] != ' '; i++)
    w[i] = (char)tolower((unsigned char)w[i]);
}

static const char *innermost_sym(const cx *x) {
  for (int i = x->depth - 1; i >= 0; i--)
    if (x->stack[i].sym[0])
      return x->stack[i].sym;
  return "";
}

static char *path_of(const cx *x, int upto) {
  size_t n = 1;
  for (int i = 0; i < upto; i++)
    n += strlen(x->stack[i].label) + 3;
  char *p = malloc(n);
  if (!p)
    return NULL;
  p[0] = '\0';
  for (int i = 0; i < upto; i++) {
    if (i)
      strcat(p, " > ");
    strcat(p, x->stack[i].label);
  }
  return p;
}

/* Pushes a heading at line start ls; label/sym already in e. */
static dq_status push(cx *x, entry *e, size_t ls, size_t sym_off, size_t skip_a,
                      size_t skip_b) {
  while (x->depth > 0 && x->stack[x->depth - 1].rank >= e->rank)
    x->depth--;
  e->flevel = x->line_flevel;
  if (e->rank <= 1) /* a schedule or an article numbers its clauses anew */
    x->last_top = x->list_next = 0;
  if (x->depth == MAX_DEPTH)
    x->depth--;
  x->stack[x->depth++] = *e;
  /* Detection counts clause numbering only: Markdown/reader headings and
   * (a)-lists occur in any prose. */
  if (e->rank < 10 && e->sym[0]) {
    x->n_struct++;
    x->n_major += e->rank <= 2;
  }
  if (grow_arr((void **)&x->marks, &x->cap_marks, x->n_marks, sizeof *x->marks))
    return oom(x);
  secmark *m = &x->marks[x->n_marks];
  m->offset = ls;
  m->skip_a = skip_a;
  m->skip_b = skip_b;
  if (!(m->caller = strdup(innermost_sym(x))))
    return oom(x);
  x->n_marks++;
  if (!x->emit)
    return DQ_OK;
  dq_status st = DQ_OK;
  char *path = path_of(x, x->depth);
  char *parent = path_of(x, x->depth - 1);
  if (!path || !parent) {
    st = oom(x);
    goto out;
  }
  /* A new outermost section starts a chunk; nested ones pack. (a)/(1)
   * items outside any numbered clause (parties, recitals) pack too. */
  if ((st = ck_add_cut(x->c, ls, x->depth == 1 && e->rank < 10, path)) !=
      DQ_OK)
    goto out;
  if (e->sym[0] && (st = ck_add_symbol(x->c, e->sym, strlen(e->sym), "section",
                                       sym_off, parent)) != DQ_OK)
    goto out;
out:
  free(path);
  free(parent);
  return st;
}

static const char *caller_at(const cx *x, size_t off) {
  size_t lo = 0, hi = x->n_marks;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (x->marks[mid].offset <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? x->marks[lo - 1].caller : "";
}

static int in_heading_label(const cx *x, size_t off) {
  for (size_t i = x->n_marks; i-- > 0;) {
    if (x->marks[i].offset > off)
      continue;
    return off >= x->marks[i].skip_a && off < x->marks[i].skip_b;
  }
  return 0;
}

/* Anchored match of re on s[a..e). */
static int amatch(cx *x, pcre2_code *re, size_t a, size_t e, PCRE2_SIZE **ov) {
  int rc = pcre2_match(re, (PCRE2_SPTR)x->s, e, a,
                       PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, x->md, NULL);
  if (rc < 0)
    return 0;
  *ov = pcre2_get_ovector_pointer(x->md);
  return 1;
}

/* A heading "rest" that is a title, not the start of a sentence. */
static int title_rest(const char *s, size_t a, size_t b) {
  if (a >= b)
    return 1;
  unsigned char ch = (unsigned char)s[a];
  if (ch >= 'a' && ch <= 'z')
    return 0;
  char last = s[b - 1];
  return b - a <= 80 && last != '.' && last != ';' && last != ',';
}

/* Label "Article IV Termination": the symbol, then the title as written. */
static void word_label(entry *en, const char *title, size_t n) {
  char buf[2 * LABEL_MAX + 2];
  snprintf(buf, sizeof buf, "%s%s%.*s", en->sym, n ? " " : "", (int)n, title);
  copy_label(en->label, buf, strlen(buf));
}

static int is_roman(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr("ivxlcdm", s[i]))
      return 0;
  return 1;
}

/* A table of contents' entry: s[a..b) ends in a page number (digits or a
 * roman numeral) after a dot leader ("....", ". . .", "\u2026") or a tab:
 * "1. DEFINITIONS ........ 2" names a clause, it does not open one. */
static int toc_entry(const char *s, size_t a, size_t b) {
  size_t e = b;
  while (e > a && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
    e--;
  size_t num = e;
  while (num > a && e - num < 6 &&
         ((s[num - 1] >= '0' && s[num - 1] <= '9') ||
          (s[num - 1] && strchr("ivxlcdmIVXLCDM", s[num - 1]))))
    num--;
  if (num == e || num == a)
    return 0;
  int dots = 0, tab = 0;
  size_t i = num;
  while (i > a) {
    char ch = s[i - 1];
    if (ch == '.') {
      dots++;
    } else if (ch == '\t') {
      tab = 1;
    } else if (i - a >= 3 && !memcmp(s + i - 3, "\xE2\x80\xA6", 3)) {
      dots += 3;
      i -= 2;
    } else if (ch != ' ') {
      break;
    }
    i--;
  }
  return i < num && (dots >= 3 || tab) && i > a;
}

enum { P_SCHED, P_ART, P_SEC, P_NUM, P_PAREN, P_MD, N_PAT };

static const char *const pats[N_PAT] = {
    "(SCHEDULE|Schedule|EXHIBIT|Exhibit|ANNEX|Annex|ANNEXURE|Annexure|"
    "APPENDIX|Appendix)[ \\t]+([A-Z]{1,2}|[0-9]{1,3}|[IVXLC]{1,6})\\b[ \\t]*"
    "(?:[-\\x{2013}\\x{2014}:.][ \\t]*)?([^\\r\\n]*?)[ \\t\\r]*$",
    "(ARTICLE|Article)[ \\t]+([IVXLC]{1,7}|[0-9]{1,3})\\b\\.?[ \\t]*"
    "(?:[-\\x{2013}\\x{2014}:.][ \\t]*)?([^\\r\\n]*?)[ \\t\\r]*$",
    "(?:SECTION|Section|Clause|CLAUSE|\\x{00A7})[ "
    "\\t]*([0-9]{1,3}(?:\\.[0-9]{1,3})*)"
    "(\\.?)(?=[ \\t\\r]|$)[ \\t]*(?:[-\\x{2013}\\x{2014}:][ "
    "\\t]*)?([^\\r\\n]*?)[ \\t\\r]*$",
    "([0-9]{1,3}(?:\\.[0-9]{1,3})*)(\\.?)(?:[ \\t]+|$)([^\\r\\n]*?)[ \\t\\r]*$",
    "\\(([a-z]{1,2}|[ivxlc]{1,6}|[A-Z]{1,2}|[0-9]{1,2})\\)[ \\t]+\\S",
    "#{1,6}[ \\t]+",
};

/* The document's title (its only top-level reader heading, first of
 * several, in no recognised form): a chunk starts there with the title as
 * section, but it is not a level of the path - "1. Definitions" below it is
 * outermost. */
static dq_status doc_title(cx *x, size_t ls, const char *title, size_t n) {
  x->depth = 0;
  if (grow_arr((void **)&x->marks, &x->cap_marks, x->n_marks, sizeof *x->marks))
    return oom(x);
  secmark *m = &x->marks[x->n_marks];
  m->offset = ls;
  m->skip_a = m->skip_b = ls;
  if (!(m->caller = strdup("")))
    return oom(x);
  x->n_marks++;
  if (!x->emit)
    return DQ_OK;
  char label[LABEL_MAX + 1];
  copy_label(label, title, n);
  return ck_add_cut(x->c, ls, 1, label);
}

/* Words a run-in title may hold in lower case ("Grant of Copyright
 * License"). */
static const char *const title_words[] = {
    "a", "an", "and", "by", "for", "in", "of", "on", "or", "the", "to", "with"};

/* The length of the run-in title opening s[a..b), the capitalised words
 * before a clause's first full stop ("Grant of Copyright License" of
 * "Grant of Copyright License. Subject to ..."), or 0 when it has none. */
static size_t run_in_title(const char *s, size_t a, size_t b) {
  if (a >= b || !(s[a] >= 'A' && s[a] <= 'Z'))
    return 0;
  int words = 0;
  for (size_t i = a; i < b && i - a <= 60;) {
    if (s[i] == '.' || s[i] == ':')
      return words <= 8 && (i + 1 == b || s[i + 1] == ' ') ? i - a : 0;
    size_t w = i;
    while (i < b && ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z'))
      i++;
    if (i == w) { /* not a letter: a comma, a hyphen, a space */
      if (s[i] != ' ' && s[i] != ',' && s[i] != '-' && s[i] != '\'')
        return 0;
      i++;
      continue;
    }
    words++;
    if (s[w] >= 'a' && s[w] <= 'z') {
      size_t k = 0, n = sizeof title_words / sizeof *title_words;
      while (k < n && !(strlen(title_words[k]) == i - w &&
                        !strncmp(title_words[k], s + w, i - w)))
        k++;
      if (k == n)
        return 0;
    }
  }
  return 0;
}

static dq_status heading_line(cx *x, pcre2_code **re, size_t ls, size_t a,
                              size_t e, int *is_heading, int is_title) {
  const char *s = x->s;
  PCRE2_SIZE *ov;
  entry en;
  memset(&en, 0, sizeof en);
  *is_heading = 0;
  if (toc_entry(s, a, e))
    return DQ_OK;
  size_t indent = a - ls;
  int md_level = 0;
  if (!x->fence && amatch(x, re[P_MD], a, e, &ov) &&
      ck_md_heading_ok(x->c, ls)) {
    md_level = (int)(ov[1] - ov[0]);
    while (md_level > 0 &&
           (s[a + md_level - 1] == ' ' || s[a + md_level - 1] == '\t'))
      md_level--;
    x->line_level = md_level;
    a = ov[1]; /* "## 8. Termination": classify the title */
    size_t k = e; /* without a closing sequence: "### Copyrights ###" */
    while (k > a && s[k - 1] == '#')
      k--;
    if (k < e && (k == a || s[k - 1] == ' ' || s[k - 1] == '\t')) {
      while (k > a && (s[k - 1] == ' ' || s[k - 1] == '\t'))
        k--;
      e = k;
    }
  }
  if (amatch(x, re[P_SCHED], a, e, &ov) && title_rest(s, ov[6], ov[7])) {
    en.rank = 0;
    copy_label(en.sym, s + ov[2], ov[5] - ov[2]);
    word_case(en.sym);
    word_label(&en, s + ov[6], ov[7] - ov[6]);
    *is_heading = 1;
    return push(x, &en, ls, ov[2], a, ov[5]);
  }
  if (amatch(x, re[P_ART], a, e, &ov) && title_rest(s, ov[6], ov[7])) {
    en.rank = 1;
    copy_label(en.sym, s + ov[2], ov[5] - ov[2]);
    word_case(en.sym);
    word_label(&en, s + ov[6], ov[7] - ov[6]);
    *is_heading = 1;
    return push(x, &en, ls, ov[2], a, ov[5]);
  }
  int sec = amatch(x, re[P_SEC], a, e, &ov);
  if (sec || amatch(x, re[P_NUM], a, e, &ov)) {
    size_t no = ov[2], nn = ov[3] - ov[2];
    size_t ro = ov[6], rn = ov[7] - ov[6];
    int dots = 0;
    for (size_t i = 0; i < nn; i++)
      dots += s[no + i] == '.';
    int period = ov[5] > ov[4];
    int upper_title = rn > 0 && rn <= 80;
    for (size_t i = 0; i < rn && upper_title; i++)
      if (s[ro + i] >= 'a' && s[ro + i] <= 'z')
        upper_title = 0;
    /* "8" alone is a heading in capitals ("8 TERMINATION") or in a
     * heading's font ("1 Introduction") */
    if (!sec && !dots && !period && !upper_title && !x->line_flevel)
      return DQ_OK;
    int lower = rn > 0 && s[ro] >= 'a' && s[ro] <= 'z'; /* "3.5 million" */
    en.rank = 2 + dots;
    copy_label(en.sym, s + no, nn);
    int title = rn > 0 && rn <= 60 && s[ro + rn - 1] != '.' &&
                s[ro + rn - 1] != ';' && s[ro + rn - 1] != ':' &&
                s[ro + rn - 1] != ',';
    /* "2. Grant of Copyright License. Subject to ...": the run-in title */
    size_t run_in = run_in_title(s, ro, ro + rn);
    if (!sec && !dots) {
      int num = atoi(en.sym);
      if (x->last_top >= 1 && indent > x->top_indent + 1)
        return DQ_OK; /* a list indented inside the clause */
      /* a list's next number, unless it is the next clause's and titled
       * ("4. Restrictions. The licence ..." after a list's "3.") */
      if ((x->list_next && num == x->list_next &&
           !((title || run_in) && num == x->last_top + 1)) ||
          (num == 1 && x->last_top >= 1 && !title)) {
        x->list_next = num + 1; /* a list inside the clause */
        return DQ_OK;
      }
      if (lower)
        return DQ_OK;
      x->last_top = num;
      x->top_indent = indent;
    } else if (lower) {
      return DQ_OK;
    }
    x->list_next = 0;
    if (run_in || !title)
      rn = run_in;
    if (rn) {
      char buf[2 * LABEL_MAX + 2];
      snprintf(buf, sizeof buf, "%s %.*s", en.sym, (int)rn, s + ro);
      copy_label(en.label, buf, strlen(buf));
    } else {
      copy_label(en.label, en.sym, strlen(en.sym));
    }
    *is_heading = 1;
    return push(x, &en, ls, no, a, ov[5]);
  }
  if (amatch(x, re[P_PAREN], a, e, &ov)) {
    size_t lo = ov[2], ln = ov[3] - ov[2];
    char ch = s[lo];
    const entry *top = x->depth ? &x->stack[x->depth - 1] : NULL;
    if (ch >= '0' && ch <= '9') {
      en.rank = 13;
    } else if (ch >= 'A' && ch <= 'Z') {
      en.rank = 12;
    } else if (is_roman(s + lo, ln)) {
      /* (i) after (h), (v) after (u), (x) after (w) are letters. */
      en.rank = 11;
      const entry *lt = NULL;
      for (int i = x->depth - 1; i >= 0; i--)
        if (x->stack[i].rank == 10) {
          lt = &x->stack[i];
          break;
        }
      if (ln == 1 && lt && lt->letter == ch - 1 && !(top && top->rank == 11))
        en.rank = 10;
      if (ln == 1 && !lt && ch != 'i')
        en.rank = 10;
    } else {
      en.rank = 10;
    }
    if (en.rank == 10 && ln == 1)
      en.letter = ch;
    snprintf(en.label, sizeof en.label, "(%.*s)", (int)ln, s + lo);
    /* Symbol: the nearest numbered ancestor + the parenthetical chain. */
    int k = x->depth - 1;
    while (k >= 0 && x->stack[k].rank >= en.rank)
      k--;
    size_t pl = k >= 0 ? strlen(x->stack[k].sym) : 0;
    if (pl && pl + ln + 2 <= LABEL_MAX) {
      memcpy(en.sym, x->stack[k].sym, pl);
      en.sym[pl] = '(';
      memcpy(en.sym + pl + 1, s + lo, ln);
      en.sym[pl + 1 + ln] = ')';
      en.sym[pl + 2 + ln] = '\0';
    }
    *is_heading = 1;
    return push(x, &en, ls, lo - 1, a, lo + ln + 1);
  }
  if (md_level) { /* a Markdown heading of another kind: rank = level */
    x->line_level = md_level;
    x->fallback = 1;
    en.rank = md_level < 8 && x->lvl_rank[md_level] ? x->lvl_rank[md_level] - 1
                                                     : md_level;
    *is_heading = 1;
    if (is_title)
      return doc_title(x, ls, s + a, e - a);
    copy_label(en.label, s + a, e - a);
    *is_heading = 1;
    return push(x, &en, ls, a, a, a);
  }
  return DQ_OK;
}

/* s[0..len) (len <= TERM_MAX_BYTES) as a term's name in out: a term or
 * use wrapped at a line break ("Disclosure\n  Period") is named with one
 * space there. Returns the name's length. */
static size_t term_name(const char *s, size_t len, char *out) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = s[i];
    if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
      if (n && out[n - 1] != ' ')
        out[n++] = ' ';
      continue;
    }
    out[n++] = ch;
  }
  while (n && out[n - 1] == ' ')
    n--;
  out[n] = '\0';
  return n;
}

static dq_status add_term(cx *x, size_t off, size_t len) {
  /* trim blanks and trailing punctuation inside the quotes */
  while (len && (x->s[off] == ' '))
    off++, len--;
  while (len && strchr(" ,.;:", x->s[off + len - 1]))
    len--;
  if (len == 0 || len > TERM_MAX_BYTES)
    return DQ_OK;
  char name[TERM_MAX_BYTES + 1];
  size_t n = term_name(x->s + off, len, name);
  if (n == 0)
    return DQ_OK;
  if (grow_arr((void **)&x->term_sites, &x->cap_sites, x->n_sites,
               sizeof *x->term_sites))
    return oom(x);
  x->term_sites[x->n_sites++] = off;
  for (size_t i = 0; i < x->n_terms; i++)
    if (!strcmp(x->terms[i], name))
      return DQ_OK;
  if (grow_arr((void **)&x->terms, &x->cap_terms, x->n_terms, sizeof *x->terms))
    return oom(x);
  if (!(x->terms[x->n_terms] = strdup(name)))
    return oom(x);
  x->n_terms++;
  if (!x->emit)
    return DQ_OK;
  /* scope: the innermost section where the term is defined */
  return ck_add_symbol(x->c, name, n, "term", off, caller_at(x, off));
}

static int size_cmp(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}
static int len_desc(const void *a, const void *b) {
  size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
  return x > y ? -1 : x < y;
}
static int sym_cmp(const void *x, const void *y) {
  const dq_symbol *a = x, *b = y;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  return a->col < b->col ? -1 : a->col > b->col;
}
static int ref_cmp(const void *x, const void *y) {
  const dq_ref *a = x, *b = y;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  return a->col < b->col ? -1 : a->col > b->col;
}

/* words == 0: "5.2 (a)" -> "5.2(a)"; words == 1: "ARTICLE  IV" ->
 * "Article IV". */
static dq_status xref(cx *x, size_t off, size_t len, int words) {
  x->n_xref++;
  if (!x->emit)
    return DQ_OK;
  char buf[LABEL_MAX + 1];
  size_t m = 0;
  int pend = 0;
  for (size_t i = 0; i < len && m + 1 < LABEL_MAX; i++) {
    char ch = x->s[off + i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      pend = words && m > 0;
      continue;
    }
    if (pend)
      buf[m++] = ' ';
    pend = 0;
    buf[m++] = ch;
  }
  buf[m] = '\0';
  if (words)
    word_case(buf);
  return ck_add_ref(x->c, buf, m, "xref", off, caller_at(x, off));
}

/* Counts s[a..b) as the next item of the list inside a clause when it
 * opens with that item's number ("4. "). */
static void list_item(cx *x, size_t a, size_t b) {
  int num = 0;
  size_t i = a;
  while (i < b && i - a < 4 && x->s[i] >= '0' && x->s[i] <= '9')
    num = num * 10 + (x->s[i++] - '0');
  if (i > a && i < b && x->s[i] == '.' &&
      (i + 1 == b || x->s[i + 1] == ' ' || x->s[i + 1] == '\t') &&
      num == x->list_next)
    x->list_next++;
}

/* The rank of a PDF's font heading of level L without a recognised form:
 * that of its level's recognised headings; else, when it is deeper than the
 * font heading of an open section, one below that section ("asn1 create
 * element" under "4.2 ASN.1 field functions"); else -1, no heading (a
 * title page's lines before the first clause). */
static int font_head_rank(const cx *x, int L) {
  if (x->font_rank[L])
    return x->font_rank[L] - 1;
  for (int d = x->depth - 1; d >= 0; d--)
    if (x->stack[d].flevel && x->stack[d].flevel < L && x->stack[d].rank < 9)
      return x->stack[d].rank + 1;
  return -1;
}

dq_status ck_chunk_contract(ck_ctx *c, int emit, int *score_out) {
  cx x;
  memset(&x, 0, sizeof x);
  x.c = c;
  x.emit = emit;
  x.s = c->t->text;
  x.n = c->t->n_bytes;
  pcre2_code *re[N_PAT] = {0};
  pcre2_code *rx_footer = NULL;
  pcre2_code *rx_means = NULL, *rx_role = NULL, *rx_paren = NULL,
             *rx_quote = NULL, *rx_sec = NULL, *rx_more = NULL, *rx_art = NULL,
             *rx_sch = NULL, *rx_use = NULL, *rx_lower = NULL, *rx_for = NULL;
  char *alt = NULL;
  dq_status st = DQ_ERR_INTERNAL;
  size_t ref0 = c->p->n_refs, sym0 = c->p->n_symbols;
  const uint32_t U = PCRE2_UTF | PCRE2_UCP;
  for (int i = 0; i < N_PAT; i++)
    if (!(re[i] = ck_re(c, pats[i], U | PCRE2_MULTILINE)))
      goto out;
  if (!(rx_footer = ck_re(c,
                          "(?:(?:Page|PAGE|page)[ \\t]+[0-9]{1,4}(?:[ \\t]*"
                          "(?:of|OF|/)[ \\t]*[0-9]{1,4})?|[-\\x{2013}][ \\t]*"
                          "[0-9]{1,4}[ \\t]*[-\\x{2013}])[ \\t]*$",
                          U | PCRE2_MULTILINE)))
    goto out;
  if (!(rx_role =
            ck_re(c,
                  "\\b(?:each|together|collectively|jointly|individually|"
                  "hereinafter(?:\\s+referred\\s+to\\s+as)?|referred\\s+to"
                  "(?:\\s+herein)?\\s+as|is|are)\\s+(?:(?:the|a|an|as)\\s+)?"
                  "[\"\\x{201C}](?:\\*\\*|__|\\*|_)?"
                  TERM_RX
                  "(?:\\*\\*|__|\\*|_)?[\"\\x{201D}]",
                  U)))
    goto out;
  if (!(rx_means =
            ck_re(c,
                  "[\"\\x{201C}](?:\\*\\*|__|\\*|_)?"
                  TERM_RX
                  "(?:\\*\\*|__|\\*|_)?[\"\\x{201D}]"
                  "\\s*,?\\s*(?:shall\\s+|will\\s+)?(?:means?|has\\s+the\\s+"
                  "meanings?|"
                  "have\\s+the\\s+meanings?|shall\\s+have\\s+the\\s+meanings?|"
                  "includes?|refers?\\s+to|is\\s+defined)\\b",
                  U)) ||
      /* a licence's: To "convey" a work means, A "covered work" means,
       * The "source code" for a work means */
      !(rx_lower = ck_re(c,
                         "\\b(?:[Tt]o|[Aa]n?|[Tt]he)\\s+[\"\\x{201C}]"
                         "([a-z][a-z -]{0,40}?)[\"\\x{201D}]\\s+"
                         "(?:(?:for|of|a|an)\\s+(?:[a-z]+\\s+){0,7}?)?"
                         "means\\b",
                         U)) ||
      /* The "Corresponding Source" for a work in object code form means */
      !(rx_for = ck_re(c,
                       "[\"\\x{201C}]" TERM_RX "[\"\\x{201D}]\\s+(?:for|of)\\s+"
                       "(?:[a-z]+\\s+){1,7}?means\\b",
                       U)) ||
      !(rx_paren =
            ck_re(c, "\\((?=[^()]{0,200}[\"\\x{201C}])([^()]{1,200})\\)", U)) ||
      !(rx_quote = ck_re(c,
                         "[\"\\x{201C}](?:\\*\\*|__|\\*|_)?"
                         TERM_RX
                         "(?:\\*\\*|__|\\*|_)?[\"\\x{201D}]",
                         U)) ||
      !(rx_sec = ck_re(c,
                       "\\b(?:[Ss]ections?|SECTIONS?|[Cc]lauses?|CLAUSES?)\\s+"
                       "|\\x{00A7}\\x{00A7}?\\s*",
                       U)) ||
      !(rx_more = ck_re(
            c,
            "([0-9]{1,3}(?:\\.[0-9]{1,3})*(?:\\s?\\((?:[a-z]{1,2}|[ivxlc]{1,6}|"
            "[A-Z]|[0-9]{1,2})\\))*)(?:\\s*(?:,|and|or|to|through|-|\\x{2013})"
            "\\s*"
            "(?=[0-9]))?",
            U)) ||
      !(rx_art = ck_re(
            c, "\\b(?:Article|ARTICLE)\\s+([IVXLC]{1,7}|[0-9]{1,3})\\b", U)) ||
      !(rx_sch = ck_re(c,
                       "\\b(Schedule|SCHEDULE|Exhibit|EXHIBIT|Annex|ANNEX|"
                       "Appendix|APPENDIX)"
                       "\\s+([A-Z]{1,2}|[0-9]{1,3}|[IVXLC]{1,6})\\b",
                       U)))
    goto out;
  if (!(x.md = pcre2_match_data_create(16, NULL))) {
    st = oom(&x);
    goto out;
  }
  st = DQ_OK;

  /* 1. Structure, line by line. */
  /* A PDF's reader headings come from its fonts (read_pdf.c); a
   * contract's structure is its clause numbers, so a font heading's line
   * starts a paragraph where a numbered heading may stand, and one without
   * a recognised form is a heading only as font_head_rank says. */
  int pdf = c->t->kind == DQ_DOC_PDF;
  size_t n_heads = pdf ? 0 : c->t->n_headings;
  size_t font_heads = pdf ? c->t->n_headings : 0;
  size_t fi = 0; /* font headings before the current line */
  int prev_blank = 1, prev_end = 0, prev_head = 0;
  int paged = c->t->n_pages > 0;
  for (size_t i = 0; i < c->t->n_marks && !paged; i++)
    paged = c->t->marks[i].page > 0;
  uint32_t prev_page = 0;
  size_t hi = 0; /* reader headings before the current line */
  /* The title: the first of several reader headings, the only one of level
   * 1 (whether it is one is decided when its line has no recognised form). */
  size_t title_h = (size_t)-1;
  if (n_heads >= 2 && c->t->headings[0].level == 1) {
    title_h = 0;
    for (size_t h = 1; h < n_heads; h++)
      if (c->t->headings[h].level <= 1)
        title_h = (size_t)-1;
  }
  /* A PDF's title: its first font heading, the only one of the largest
   * font, as a reader's title above */
  const dq_heading *pdf_title = NULL;
  if (font_heads >= 2 && c->t->headings[0].level == 1) {
    pdf_title = &c->t->headings[0];
    for (size_t h = 1; h < font_heads; h++)
      if (c->t->headings[h].level <= 1)
        pdf_title = NULL;
  }
  PCRE2_SIZE *ov;
  for (size_t ls = 0; ls < x.n && st == DQ_OK;) {
    const char *nl = memchr(x.s + ls, '\n', x.n - ls);
    size_t le = nl ? (size_t)(nl - x.s) : x.n;
    size_t next = nl ? le + 1 : x.n;
    size_t a = ls;
    while (a < le && (x.s[a] == ' ' || x.s[a] == '\t' || x.s[a] == '\r' ||
                      x.s[a] == '\f'))
      a++;
    size_t b = le;
    while (b > a &&
           (x.s[b - 1] == ' ' || x.s[b - 1] == '\t' || x.s[b - 1] == '\r'))
      b--;
    if (a >= b) {
      prev_blank = 1;
      ls = next;
      continue;
    }
    if (ck_fence_line(x.s, a, b))
      x.fence = !x.fence;
    /* Paged text (PDF): a new page starts a paragraph, and running
     * footers ("Page 2 of 5") count as blank lines. */
    if (paged) {
      uint32_t line, page;
      dq_text_locate(c->t, ls, &line, &page);
      if (page != prev_page)
        prev_blank = 1;
      prev_page = page;
      if (amatch(&x, rx_footer, a, b, &ov)) {
        prev_blank = 1;
        ls = next;
        continue;
      }
    }
    int para = prev_blank || prev_end || prev_head;
    /* a PDF's font heading starts a paragraph: "2.4. The glob files"
     * after an example's last line */
    while (fi < font_heads && c->t->headings[fi].offset < ls)
      fi++;
    const dq_heading *fh = fi < font_heads && c->t->headings[fi].offset <= le
                               ? &c->t->headings[fi]
                               : NULL;
    para |= fh != NULL;
    x.line_flevel = !fh ? 0 : fh->level < 1 ? 1 : fh->level > 7 ? 7 : fh->level;
    int is_head = 0;
    int reader_head = 0;
    while (hi < n_heads && c->t->headings[hi].offset < ls)
      hi++;
    for (size_t h = hi; h < n_heads && c->t->headings[h].offset <= le; h++)
      reader_head = (int)h + 1;
    int is_title = reader_head && (size_t)reader_head - 1 == title_h;
    x.line_level = reader_head ? c->t->headings[reader_head - 1].level : 0;
    x.fallback = 0;
    if (para || reader_head)
      st = heading_line(&x, re, ls, a, b, &is_head, is_title);
    else if (x.list_next) /* a list's next item after a line ending "and," */
      list_item(&x, a, b);
    if (st == DQ_OK && !is_head && reader_head) {
      const dq_heading *hd = &c->t->headings[reader_head - 1];
      entry en;
      memset(&en, 0, sizeof en);
      en.rank = hd->level < 1 ? 1 : hd->level;
      if (hd->level >= 1 && hd->level < 8 && x.lvl_rank[hd->level])
        en.rank = x.lvl_rank[hd->level] - 1;
      copy_label(en.label, hd->title ? hd->title : "",
                 hd->title ? strlen(hd->title) : 0);
      is_head = 1;
      x.fallback = 1;
      st = is_title ? doc_title(&x, ls, en.label, strlen(en.label))
                    : push(&x, &en, ls, a, a, a);
    }
    if (st == DQ_OK && fh && is_head && x.depth > 0 &&
        x.stack[x.depth - 1].rank < 10) {
      int *fr = &x.font_rank[x.line_flevel];
      if (!*fr || x.stack[x.depth - 1].rank + 1 < *fr)
        *fr = x.stack[x.depth - 1].rank + 1;
    } else if (st == DQ_OK && fh && !is_head) {
      entry en;
      memset(&en, 0, sizeof en);
      en.rank = fh == pdf_title ? 0 : font_head_rank(&x, x.line_flevel);
      copy_label(en.label, fh->title ? fh->title : "",
                 fh->title ? strlen(fh->title) : 0);
      if (en.rank >= 0 && en.label[0]) {
        is_head = 1;
        st = fh == pdf_title ? doc_title(&x, ls, en.label, strlen(en.label))
                             : push(&x, &en, ls, a, a, a);
      }
    }
    if (st == DQ_OK && is_head && !x.fallback && x.line_level >= 1 &&
        x.line_level < 8 && !x.lvl_rank[x.line_level] && x.depth > 0)
      x.lvl_rank[x.line_level] = x.stack[x.depth - 1].rank + 1;
    if (st == DQ_OK && !is_head && prev_blank && emit)
      st = ck_add_cut(c, ls, 0, NULL);
    char last = x.s[b - 1];
    prev_end = last == '.' || last == ':' || last == ';';
    /* A short line without lower-case letters ("LEASE", "PARTICULARS") is
     * a title: what follows starts a paragraph (PDF text has no blank
     * lines). */
    if (!prev_end && b - a <= 80) {
      int upper = 0, lower = 0;
      for (size_t i = a; i < b; i++) {
        upper += x.s[i] >= 'A' && x.s[i] <= 'Z';
        lower += x.s[i] >= 'a' && x.s[i] <= 'z';
      }
      prev_end = upper > 0 && lower == 0;
    }
    prev_head = is_head;
    prev_blank = 0;
    ls = next;
  }
  if (st != DQ_OK)
    goto out;

  /* 2. Defined terms. */
  /* "X" means ...; a licence's To "x" a work means ..., "X" for ...
   * means; ... is the "Disclosing Party", each a "Party", together the
   * "Parties": group 1 is the term */
  int rc;
  pcre2_code *const defs[] = {rx_means, rx_lower, rx_for, rx_role};
  for (size_t r = 0; r < sizeof defs / sizeof *defs; r++)
    for (size_t from = 0;
         (rc = ck_re_next(defs[r], x.md, x.s, x.n, from, &ov)) == 1;) {
      size_t g0 = ov[2], g1 = ov[3];
      from = ov[1];
      if ((st = add_term(&x, g0, g1 - g0)) != DQ_OK)
        goto out;
    }
  for (size_t from = 0;
       (rc = ck_re_next(rx_paren, x.md, x.s, x.n, from, &ov)) == 1;) {
    size_t p0 = ov[2], p1 = ov[3];
    from = ov[1];
    /* Quoted pieces, and how much other text the parenthetical holds. */
    size_t quoted = 0, n_q = 0;
    size_t qs[8][2];
    PCRE2_SIZE *qv;
    for (size_t f = p0; n_q < 8 &&
                        ck_re_next(rx_quote, x.md, x.s, p1 + 1, f, &qv) == 1 &&
                        qv[1] <= p1 + 1;) {
      qs[n_q][0] = qv[2];
      qs[n_q][1] = qv[3];
      quoted += qv[1] - qv[0];
      n_q++;
      f = qv[1];
    }
    if (n_q && (p1 - p0) - quoted <= 60)
      for (size_t q = 0; q < n_q; q++)
        if ((st = add_term(&x, qs[q][0], qs[q][1] - qs[q][0])) != DQ_OK)
          goto out;
  }

  /* 3. Cross-references. */
  for (size_t from = 0;
       (rc = ck_re_next(rx_sec, x.md, x.s, x.n, from, &ov)) == 1;) {
    size_t kw = ov[0];
    from = ov[1];
    int first = 1;
    while (amatch(&x, rx_more, from, x.n, &ov)) {
      size_t g0 = ov[2], g1 = ov[3];
      size_t end = ov[1];
      if (!(first && in_heading_label(&x, kw)) &&
          (st = xref(&x, g0, g1 - g0, 0)) != DQ_OK)
        goto out;
      first = 0;
      if (end == g1)
        break;
      from = end;
    }
    if (from <= kw)
      from = kw + 1;
  }
  for (size_t from = 0;
       (rc = ck_re_next(rx_art, x.md, x.s, x.n, from, &ov)) == 1;) {
    size_t m0 = ov[0], m1 = ov[1];
    from = m1;
    if (!in_heading_label(&x, m0) && (st = xref(&x, m0, m1 - m0, 1)) != DQ_OK)
      goto out;
  }
  for (size_t from = 0;
       (rc = ck_re_next(rx_sch, x.md, x.s, x.n, from, &ov)) == 1;) {
    size_t m0 = ov[0], m1 = ov[1];
    from = m1;
    if (!in_heading_label(&x, m0) && (st = xref(&x, m0, m1 - m0, 1)) != DQ_OK)
      goto out;
  }

  /* 4. Uses of defined terms: one alternation, longest first. */
  if (emit && x.n_terms) {
    if (x.n_terms)
      qsort(x.terms, x.n_terms, sizeof *x.terms, len_desc);
    if (x.n_sites)
      qsort(x.term_sites, x.n_sites, sizeof *x.term_sites, size_cmp);
    size_t n_alt = 64;
    for (size_t i = 0; i < x.n_terms; i++)
      n_alt += 3 * strlen(x.terms[i]) + 1; /* "\\s+" for a space */
    if (!(alt = malloc(n_alt))) {
      st = oom(&x);
      goto out;
    }
    size_t m = 0;
    m += (size_t)sprintf(alt, "(?<![\\p{L}\\p{N}_])(?:");
    for (size_t i = 0; i < x.n_terms; i++) {
      if (i)
        alt[m++] = '|';
      for (const char *q = x.terms[i]; *q; q++) {
        if (*q == ' ') { /* a use may wrap at a line break too */
          m += (size_t)sprintf(alt + m, "\\s+");
          continue;
        }
        if (strchr("\\^$.|?*+()[]{}", *q))
          alt[m++] = '\\';
        alt[m++] = *q;
      }
    }
    m += (size_t)sprintf(alt + m, ")(?![\\p{L}\\p{N}_])");
    if (!(rx_use = ck_re(c, alt, U))) {
      st = DQ_ERR_INTERNAL;
      goto out;
    }
    size_t si = 0;
    for (size_t from = 0;
         (rc = ck_re_next(rx_use, x.md, x.s, x.n, from, &ov)) == 1;) {
      size_t m0 = ov[0], m1 = ov[1];
      from = m1;
      while (si < x.n_sites && x.term_sites[si] < m0)
        si++;
      if (si < x.n_sites && x.term_sites[si] == m0)
        continue;
      char name[TERM_MAX_BYTES + 1];
      size_t n = m1 - m0 <= TERM_MAX_BYTES ? term_name(x.s + m0, m1 - m0, name)
                                           : 0;
      if (n && (st = ck_add_ref(c, name, n, "use", m0, caller_at(&x, m0))) !=
                   DQ_OK)
        goto out;
    }
  }
  if (emit) {
    if (c->p->n_refs - ref0)
      qsort(c->p->refs + ref0, c->p->n_refs - ref0, sizeof *c->p->refs,
            ref_cmp);
    if (c->p->n_symbols - sym0)
      qsort(c->p->symbols + sym0, c->p->n_symbols - sym0, sizeof *c->p->symbols,
            sym_cmp);
  }
  if (score_out) {
    int contract = (x.n_terms >= 1 && x.n_struct >= 2) ||
                   (x.n_xref >= 1 && x.n_struct >= 3) || x.n_major >= 4;
    *score_out = contract ? CK_CONTRACT_MIN_SCORE : 0;
  }
  st = DQ_OK;
out:
  for (int i = 0; i < N_PAT; i++)
    pcre2_code_free(re[i]);
  pcre2_code_free(rx_footer);
  pcre2_code_free(rx_means);
  pcre2_code_free(rx_lower);
  pcre2_code_free(rx_for);
  pcre2_code_free(rx_role);
  pcre2_code_free(rx_paren);
  pcre2_code_free(rx_quote);
  pcre2_code_free(rx_sec);
  pcre2_code_free(rx_more);
  pcre2_code_free(rx_art);
  pcre2_code_free(rx_sch);
  pcre2_code_free(rx_use);
  pcre2_match_data_free(x.md);
  free(alt);
  for (size_t i = 0; i < x.n_marks; i++)
    free(x.marks[i].caller);
  free(x.marks);
  for (size_t i = 0; i < x.n_terms; i++)
    free(x.terms[i]);
  free(x.terms);
  free(x.term_sites);
  return st;
}
