/*
 * ask.c - `docqa ask`: retrieve, read, answer with citations.
 *
 * Coarse recall, then re-read (DESIGN.md): retrieval proposes a pool of
 * candidates (3 x k, or every chunk of the --doc documents: those hybrid
 * retrieval ranks first, then the rest in document order), a GSM pass of
 * the model over question + candidates + question scores each candidate by
 * the attention the final question pays to it (rerank.c), the scores are
 * fused with the retrieval rank, and the best passages are re-read with full
 * attention in a short prompt. By measurement (pipeline.h
 * DQ_RECALL_WEIGHT) the pass runs by default only with --doc; --recall
 * turns it on for any question. Without it the answer reads retrieval's
 * top k (attention "full"). The prompt is position-aware: the question
 * first, passages best first, the instruction, then the question again.
 * Passages are numbered; the answer cites them as [n], and only passages
 * that were in the prompt can be cited (unknown numbers are ignored).
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

static const char system_prompt[] =
    "You answer questions about the user's documents. Use only the numbered "
    "passages you are given. Cite every passage you use as [1], [2], ... . If "
    "the passages do not contain the answer, say that they do not.";

/* Tokens held back for the instructions and chat template around the
 * passages (measured on the shipped templates: under 120). */
#define PROMPT_OVERHEAD_TOKENS 160

/* A passage's share of the budget is at most 1/PASSAGES_PER_BUDGET of it,
 * but not under PASSAGE_FLOOR_TOKENS (a label and two lines); below
 * MIN_PASSAGE_TOKENS left, no label and line are worth adding. */
#define PASSAGES_PER_BUDGET 3
#define PASSAGE_FLOOR_TOKENS 64
#define MIN_PASSAGE_TOKENS 32

/* A passage's label in the prompt: "path:12-20 (section)" or "path p.4
 * (section)". The path as stored, which is shorter (in the eval's index
 * of two roots, more passages fit the budget), or as shown, behind its
 * root's name (`shown`: another candidate has the same path in another
 * root), so that the model can tell the two apart. */
static void cite_label(dq_strbuf *b, const dq_hit *h, int shown) {
  char w[DQ_WHERE_MAX];
  dq_strbuf_printf(b, "%s%s", shown ? h->shown : h->path,
                   dq_where(w, dq_page_unit(h->kind), h->page_start,
                            h->line_start, h->line_end));
  if (h->section && h->section[0])
    dq_strbuf_printf(b, " (%s)", h->section);
}

/* Sits between the engine and the caller's on_text: keeps the text
 * generated so far, stops generation on a loop or where the model starts
 * to write a passage out (pl_echo_start), and passes the caller only what
 * stays: a line that may still turn out to be a passage's label is held
 * until it is told. */
typedef struct answer_watch {
  dq_strbuf text;
  size_t cut;            /* 0, or where the answer is cut (loop or echo) */
  size_t sent;           /* text[0..sent) passed to on_text */
  dq_text_fn_pl on_text; /* the caller's; may be NULL */
  void *user;
} answer_watch;

/* Passes text[sent..upto) on; the caller's stop request. */
static int watch_send(answer_watch *w, size_t upto) {
  int stop = 0;
  if (upto > w->sent && w->on_text)
    stop = w->on_text(w->user, w->text.p + w->sent, upto - w->sent);
  if (upto > w->sent)
    w->sent = upto;
  return stop;
}

static int watch_text(void *user, const char *piece, size_t len) {
  answer_watch *w = user;
  dq_strbuf_add(&w->text, piece, len);
  if (w->text.oom)
    return 1;
  size_t hold = w->text.n;
  if (!w->cut) {
    size_t echo = pl_echo_start(w->text.p, w->text.n, &hold);
    size_t loop = pl_loop_start(w->text.p, w->text.n);
    size_t at = echo < loop ? echo : loop;
    if (at < w->text.n)
      w->cut = at;
  }
  if (w->cut)
    return watch_send(w, w->cut), 1;
  return watch_send(w, hold);
}

/* After generation: what was held back and stays (the answer's text
 * `final`, which the engine may have cut at a stop string). */
static void watch_flush(answer_watch *w, const char *final) {
  size_t n = strlen(final);
  if (w->cut && w->cut < n)
    n = w->cut;
  if (n > w->text.n) /* what the engine never passed on stays its own */
    n = w->text.n;
  if (!w->text.oom && n > w->sent)
    watch_send(w, n);
}

void dq_ask_result_clear(dq_ask_result *r) {
  if (!r)
    return;
  free(r->answer);
  free(r->model_answer);
  free(r->unsupported);
  free(r->facts);
  free(r->quote.text);
  free(r->quote.path);
  free(r->quote.root);
  free(r->quote.shown);
  free(r->quote.lines);
  free(r->quote.columns);
  free(r->quote.section);
  for (size_t i = 0; i < r->n_passages; i++) {
    free(r->passages[i].path);
    free(r->passages[i].root);
    free(r->passages[i].shown);
    free(r->passages[i].section);
    free(r->passages[i].text);
  }
  free(r->passages);
  memset(r, 0, sizeof *r);
}

/* effort max: asks the model whether the cited passages support the answer. */
static dq_status check_support(dq_model *m, const dq_hit *hits,
                               const dq_citation *c, size_t n,
                               const char *question, const char *answer,
                               const char **verdict, dq_error *err) {
  dq_strbuf b = {0};
  dq_strbuf_adds(&b, "Passages:\n");
  for (size_t i = 0; i < n; i++)
    if (c[i].cited) {
      dq_strbuf_printf(&b, "[%zu] ", i + 1);
      dq_strbuf_adds(&b, hits[i].text);
      dq_strbuf_adds(&b, "\n\n");
    }
  dq_strbuf_adds(&b, "Question: ");
  dq_strbuf_adds(&b, question);
  dq_strbuf_adds(&b, "\nProposed answer: ");
  dq_strbuf_adds(&b, answer);
  dq_strbuf_adds(&b, "\nDo the passages support the proposed answer? Reply with "
             "one word: yes or no.");
  if (b.oom) {
    free(b.p);
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  }
  dq_generate_opts go;
  dq_generate_opts_init(&go);
  go.max_tokens = 4;
  dq_generate_result gr = {0};
  dq_status s = dq_generate(m, b.p, &go, &gr);
  free(b.p);
  if (s != DQ_OK)
    return dq_error_set(err, s, "support check: %s", dq_model_errmsg(m));
  const char *t = gr.text ? gr.text : "";
  while (*t && !isalpha((unsigned char)*t))
    t++;
  *verdict = strncasecmp(t, "yes", 3) == 0 ? "supported" : "unsupported";
  dq_generate_result_clear(&gr);
  return DQ_OK;
}

#define FACTS_MAX 6 /* passages stated from the index */
#define SIGNATURE_MAX_BYTES 200
#define DEFINITION_MAX_BYTES 400 /* a defined term's clause, then "..." */

/* A function's or method's signature as its chunk's section gives it (the
 * last part of "class Pool > def take(self, n)"), when it names the
 * symbol with its parameters after it; else NULL. */
static const char *signature(const dq_hit *h) {
  const char *kind = h->symbol_kind, *sec = h->section;
  if (!sec || (strcmp(kind, "function") && strcmp(kind, "method")))
    return NULL;
  for (const char *gt; (gt = strstr(sec, " > "));)
    sec = gt + 3;
  const char *at = strstr(sec, h->symbol);
  size_t n = strlen(h->symbol);
  if (!at || strlen(sec) > SIGNATURE_MAX_BYTES ||
      (at > sec && (isalnum((unsigned char)at[-1]) || at[-1] == '_')))
    return NULL;
  while (at[n] == ' ')
    n++;
  return at[n] == '(' ? sec : NULL;
}

/* What a definition that is no function states: a defined term's clause
 * ("2.2 "Derived Materials" means notes, analyses, ..."), a constant's,
 * macro's or variable's line when it names it ("#define MONEY_MAX
 * ((money_t)10000000000000LL)", "MONEY_MAX = 10**13"), an enum's or
 * struct's whole body when it is short (its members). Malloc'd; NULL when
 * there is none. */
static char *definition(const dq_hit *h) {
  static const char *const valued[] = {"macro", "constant", "const",
                                       "variable", "enumerator"};
  const char *kind = h->symbol_kind;
  if (!strcmp(kind, "term")) {
    /* the clause must name it: a PDF's line numbers count per page, and
     * in an index stored before symbols recorded their page a chunk of
     * another page may hold a line of that number */
    char *u = pl_line_unit(h, h->symbol_line, 1, DEFINITION_MAX_BYTES);
    if (u && !strstr(u, h->symbol)) {
      free(u);
      u = NULL;
    }
    return u;
  }
  if (!strcmp(kind, "enum") || !strcmp(kind, "struct")) {
    /* its members, when the whole body is short */
    char *l = pl_line_unit(h, h->symbol_line, 2, DEFINITION_MAX_BYTES);
    if (l && (strchr(l, '`') || !strstr(l, h->symbol) || !strchr(l, '}') ||
              strlen(l) > DEFINITION_MAX_BYTES)) {
      free(l);
      l = NULL;
    }
    return l;
  }
  for (size_t j = 0; j < sizeof valued / sizeof *valued; j++)
    if (!strcmp(kind, valued[j])) {
      char *l = pl_line_unit(h, h->symbol_line, 0, SIGNATURE_MAX_BYTES);
      if (l && (strlen(l) > SIGNATURE_MAX_BYTES || strchr(l, '`') ||
                !strstr(l, h->symbol))) {
        free(l);
        l = NULL;
      }
      return l;
    }
  return NULL;
}

/* What the symbol index says of the names the question asks about, one
 * clause per passage a strong name ranked (search_sym.c; with named_in,
 * only names that text holds), in prompt order
 * and cited: "From the index: tax_compute_line is called in
 * invoice_compute_totals at repo/src/invoice.c:103 [1]." A function's
 * definition comes with its signature ("... [1] as `size_t f(int n)`"),
 * which answers what it takes and returns, a defined term's with its
 * clause, a constant's with its line (definition()); where no name is
 * strong, the best-ranked definition of a name the question gives by its
 * words, said to be so. Small models garble such exact answers; the index
 * has them. NULL when there is none. */
static char *index_facts(const dq_hit *h, size_t n, const char *named_in) {
  dq_strbuf b = {0};
  int k = 0, weak = 0;
  /* a weak name beside a strong one is another owner's member
   * (search_sym.c), not what the question names */
  for (size_t i = 0; i < n && !weak; i++)
    weak = h[i].symbol_strong == 1;
  for (size_t i = 0; i < n && k < FACTS_MAX; i++) {
    /* A weak name (search_sym.c: every part of a name of three or more is
     * a word of the question, "which C function computes the tax on a
     * single invoice line" for tax_compute_line) only for its best-ranked
     * definition, said to be matched by words; its passage keeps the
     * definition's line (cite.c ranked_definition). */
    int by_words = h[i].symbol_strong == 0 && h[i].symbol &&
                   h[i].symbol_kind && !weak && !k &&
                   !pl_symbol_use_kind(h[i].symbol_kind);
    /* the passage (trimmed or not) must hold the line it is cited for */
    if ((h[i].symbol_strong != 1 && !by_words) || !h[i].symbol ||
        !h[i].symbol_kind ||
        h[i].symbol_line <= 0 ||
        (!h[i].page_start && (h[i].symbol_line < h[i].line_start ||
                              h[i].symbol_line > h[i].line_end)))
      continue;
    if (named_in && !pl_has_word(named_in, h[i].symbol))
      continue;
    const char *kind = h[i].symbol_kind;
    int call = !strcmp(kind, "call");
    int use = pl_symbol_use_kind(kind);
    /* after a definition's own full stop, the next clause is a sentence */
    dq_strbuf_adds(&b, !k++                       ? PL_FACTS_LEAD
                       : b.n && b.p[b.n - 1] == '.' ? " "
                                                    : "; ");
    dq_strbuf_adds(&b, h[i].symbol);
    if (use) {
      dq_strbuf_adds(&b, call ? " is called" : " is used");
      if (h[i].symbol_where)
        dq_strbuf_printf(&b, " in %s", h[i].symbol_where);
      dq_strbuf_adds(&b, " at");
    } else if (by_words) {
      dq_strbuf_printf(&b, " (%s), named by the question's words, is defined at",
                       kind);
      weak = 1;
    } else {
      dq_strbuf_printf(&b, " (%s) is %s", kind,
                       !strcmp(kind, "section") ? "at" : "defined at");
    }
    dq_strbuf_printf(&b, " %s", h[i].shown);
    const char *unit = dq_page_unit(h[i].kind);
    char w[DQ_WHERE_MAX];
    if (h[i].page_start && !strcmp(unit, "sheet")) /* " sheet 2 row 15" */
      dq_strbuf_adds(&b, dq_where(w, unit, h[i].page_start, h[i].symbol_line,
                                  h[i].symbol_line));
    else if (h[i].page_start)
      dq_strbuf_printf(&b, "%s line %d",
                       dq_where(w, unit, h[i].page_start, 0, 0),
                       h[i].symbol_line);
    else
      dq_strbuf_printf(&b, ":%d", h[i].symbol_line);
    dq_strbuf_printf(&b, " [%zu]", i + 1);
    const char *sig = use ? NULL : signature(&h[i]);
    char *def = sig || use ? NULL : definition(&h[i]);
    if (sig)
      dq_strbuf_printf(&b, " as `%s`", sig);
    else if (def && !strcmp(kind, "term"))
      dq_strbuf_printf(&b, ": %s", def);
    else if (def)
      dq_strbuf_printf(&b, " as `%s`", def);
    free(def);
  }
  /* a definition may end the text with its own full stop */
  if (k && (b.n == 0 || b.p[b.n - 1] != '.'))
    dq_strbuf_adds(&b, ".");
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

static int by_path_root(const void *a, const void *b, void *hits) {
  const dq_hit *x = &((const dq_hit *)hits)[*(const size_t *)a];
  const dq_hit *y = &((const dq_hit *)hits)[*(const size_t *)b];
  int c = strcmp(x->path, y->path);
  return c ? c : strcmp(x->root, y->root);
}

/* 1 for each of hits[0..n) whose path another has in another root. */
static unsigned char *shared_paths(const dq_hit *h, size_t n) {
  unsigned char *f = calloc(n ? n : 1, 1);
  size_t *ix = malloc((n ? n : 1) * sizeof *ix);
  if (!f || !ix) {
    free(f);
    free(ix);
    return NULL;
  }
  size_t roots = 1;
  for (size_t i = 0; i < n; i++) {
    ix[i] = i;
    roots += i && roots == 1 && strcmp(h[i].root, h[0].root) != 0;
  }
  if (roots > 1) {
    qsort_r(ix, n, sizeof *ix, by_path_root, (void *)h);
    for (size_t a = 0, b; a < n; a = b) {
      int many = 0;
      for (b = a + 1; b < n && !strcmp(h[ix[b]].path, h[ix[a]].path); b++)
        many |= strcmp(h[ix[b]].root, h[ix[a]].root) != 0;
      for (size_t k = a; many && k < b; k++)
        f[ix[k]] = 1;
    }
  }
  free(ix);
  return f;
}

static size_t count_sep(const char *s, const char *sep) {
  size_t n = 1, k = strlen(sep);
  for (const char *p = s; (p = strstr(p, sep)); p += k)
    n++;
  return n;
}

/* Row "A | B" under columns "X | Y" as "X: A; Y: B", malloc'd; NULL when
 * the two have not as many cells or a header cell has no name (or out of
 * memory). Not a CSV's "A,B": on tests/bench/ingest/table_qa.py's CSV
 * questions the 135M model answered 9 of 10 from the row as it stands,
 * 7 of 10 from its pairs. */
static char *row_pairs(const char *row, const char *columns) {
  const char *sep = " | ";
  size_t cells = count_sep(row, sep), k = strlen(sep);
  if (cells < 2 || cells != count_sep(columns, sep))
    return NULL;
  dq_strbuf b = {0};
  const char *r = row, *c = columns;
  for (size_t i = 0; i < cells; i++) {
    const char *re = strstr(r, sep), *ce = strstr(c, sep);
    size_t rn = re ? (size_t)(re - r) : strlen(r);
    size_t cn = ce ? (size_t)(ce - c) : strlen(c);
    if (!cn) { /* a nameless column: the row as it stands */
      free(b.p);
      return NULL;
    }
    if (rn)
      dq_strbuf_printf(&b, "%s%.*s: %.*s", b.n ? "; " : "", (int)cn, c, (int)rn,
                       r);
    r = re ? re + k : r + rn;
    c = ce ? ce + k : c + cn;
  }
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

/* The quote as an answer, cited as [n] when the model read its lines. */
static char *quote_answer(const dq_quote *q) {
  dq_strbuf a = {0};
  if (q->passage)
    dq_strbuf_printf(&a, "The passages say [%d]", q->passage);
  else {
    char w[DQ_WHERE_MAX];
    dq_strbuf_printf(&a, "The best matching passage, %s", q->shown);
    if (q->page && (!q->unit || strcmp(q->unit, "sheet")))
      dq_strbuf_printf(&a, "%s:%d-%d", dq_where(w, q->unit, q->page, 0, 0),
                       q->line_start, q->line_end);
    else
      dq_strbuf_adds(&a,
                     dq_where(w, q->unit, q->page, q->line_start, q->line_end));
    dq_strbuf_adds(&a, ", says");
  }
  if (q->lines) { /* code: its lines as they stand */
    dq_strbuf_adds(&a, ":\n");
    for (const char *p = q->lines; *p;) {
      size_t n = strcspn(p, "\n");
      dq_strbuf_printf(&a, "    %.*s\n", (int)n, p);
      p += n + (p[n] == '\n');
    }
    while (a.n && a.p[a.n - 1] == '\n')
      a.p[--a.n] = '\0';
  } else
    dq_strbuf_printf(&a, ": \"%s\"", q->text);
  if (q->columns)
    dq_strbuf_printf(&a, " (columns: %s)", q->columns);
  if (a.oom) {
    free(a.p);
    return NULL;
  }
  return a.p;
}

/* s without blanks and Markdown's '*' into out (cap bytes, cut). */
static void squeeze(const char *s, char *out, size_t cap) {
  size_t k = 0;
  for (; *s && k + 1 < cap; s++)
    if (!isspace((unsigned char)*s) && *s != '*')
      out[k++] = *s;
  out[k] = '\0';
}

/* 1 when facts hold the start of quote (up to 120 letters), blanks and
 * '*' aside. */
static int facts_hold(const char *facts, const char *quote) {
  if (!facts)
    return 0;
  char q[121];
  squeeze(quote, q, sizeof q);
  size_t n = strlen(facts) + 1;
  char *f = malloc(n);
  if (!f)
    return 0;
  squeeze(facts, f, n);
  int hold = q[0] && strstr(f, q) != NULL;
  free(f);
  return hold;
}

/* 1 when a sentence or block starts at text[i] (i > 0): after ". ",
 * "! " or "? ", after a blank line, or on a line that opens a heading,
 * list item, quote or table row (a single newline is often a wrap). */
static int block_start(const char *text, size_t i) {
  if (text[i - 1] == '\n')
    return (i > 1 && text[i - 2] == '\n') || strchr("#-*>|", text[i]);
  return i > 1 && isspace((unsigned char)text[i - 1]) &&
         strchr(".!?", text[i - 2]);
}

/* Where the sentence (or block) holding text[at] starts, less the blanks
 * and the ",;:-" that end the text before it: 0 when at is in the first. */
static size_t sentences_before(const char *text, size_t at) {
  size_t i = at;
  while (i > 0 && !block_start(text, i))
    i--;
  while (i > 0 &&
         (isspace((unsigned char)text[i - 1]) || strchr(",;:-", text[i - 1])))
    i--;
  return i;
}

/* The set-aside answer: the model's first `keep` bytes (0: none), then
 * the quote's answer (none where the facts state it already). */
static char *grounded_answer(const dq_ask_result *res, const char *text,
                             size_t keep) {
  dq_strbuf b = {0};
  dq_strbuf_add(&b, text, keep);
  if (keep && isalnum((unsigned char)text[keep - 1]))
    dq_strbuf_adds(&b, "."); /* its sentence was cut before its end */
  /* a definition's clause the facts state already is not said twice */
  if (!facts_hold(res->facts, res->quote.text)) {
    char *q = quote_answer(&res->quote);
    if (!q) {
      free(b.p);
      return NULL;
    }
    dq_strbuf_printf(&b, "%s%s", keep ? "\n\n" : "", q);
    free(q);
  }
  if (b.oom || !b.p) {
    free(b.p);
    return b.oom ? NULL : strdup("");
  }
  return b.p;
}

/* Checks the model's *text against what it read (ground.c) and, when it
 * only restates the question or names what no passage holds, answers with
 * the quote instead: *text becomes the quote's answer (after the model's
 * sentences before the first unsupported name, when those are grounded)
 * and res->model_answer the model's. A small model's invented act or
 * echoed label helps no one; the quote is the passages' own words. */
static dq_status ground(const pl_answer_in *in, dq_ask_result *res, char **text,
                        dq_error *err) {
  size_t n = 3 * res->n_passages + 4, k = 0;
  const char **src = malloc(n * sizeof *src);
  if (!src)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < res->n_passages; i++) {
    src[k++] = res->passages[i].text;
    src[k++] = res->passages[i].section;
    src[k++] = res->passages[i].shown;
  }
  src[k++] = res->facts;
  src[k++] = in->summary;
  src[k++] = in->recent;
  src[k++] = res->quote.passage ? res->quote.text : NULL;
  pl_grounding g;
  char *a = NULL, *head = NULL;
  dq_status s = DQ_OK;
  if (pl_ground_check(*text, in->question, src, k, &g) < 0)
    goto oom;
  res->grounding = pl_ground_name(g.verdict);
  if (g.names[0] && !(res->unsupported = strdup(g.names)))
    goto oom;
  dq_log(in->log, DQ_LOG_DEBUG,
         "grounding: %s (%d terms added to the question, %d found in no "
         "source%s%s)",
         res->grounding, g.n_new, g.n_unsupported, g.names[0] ? ": " : "",
         g.names);
  if ((g.verdict != PL_RESTATES && g.verdict != PL_UNSUPPORTED) ||
      !res->quote.text)
    goto done;
  /* the sentences before the first unsupported name stay when they are
   * grounded themselves ("... the law of the State of Delaware," then a
   * made-up "### 9.3 Dispute Resolution") */
  size_t keep = g.names[0] ? sentences_before(*text, g.name_at) : 0;
  if (keep) {
    pl_grounding gh;
    if (!(head = strndup(*text, keep)) ||
        pl_ground_check(head, in->question, src, k, &gh) < 0)
      goto oom;
    if (gh.verdict != PL_GROUNDED)
      keep = 0;
  }
  if (!(a = grounded_answer(res, *text, keep)))
    goto oom;
  res->kept = keep > 0;
  res->model_answer = *text;
  *text = a;
  dq_log(in->log, DQ_LOG_INFO, "the model's answer, %s (%s%s): %.400s",
         keep ? "cut short" : "set aside",
         g.verdict == PL_RESTATES ? "it restates the question"
         : g.names[0]             ? "it names "
                                  : "its words are in no passage",
         g.verdict == PL_RESTATES ? "" : g.names, res->model_answer);
  goto done;
oom:
  s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
done:
  free(head);
  free(src);
  return s;
}

dq_status pl_answer(dq_model *m, const pl_answer_in *in, dq_hit *hits,
                    size_t n_hits, dq_ask_result *res, dq_error *err) {
  dq_model_info mi;
  dq_model_get_info(m, &mi);
  dq_strbuf b = {0};
  dq_generate_result gr = {0};
  dq_status s = DQ_OK;
  unsigned char *shared = NULL; /* per hit: cite_label's `shown` */
  /* Prompt: question, passages best first within the budget, recent turns,
   * instruction, question again (the probe position). */
  int max_tokens = in->max_tokens > 0 ? in->max_tokens : 256;
  int budget = mi.n_ctx - max_tokens - PROMPT_OVERHEAD_TOKENS -
               2 * pl_count_tokens(m, in->question) -
               (in->summary ? pl_count_tokens(m, in->summary) : 0) -
               (in->recent ? pl_count_tokens(m, in->recent) : 0);
  dq_strbuf_adds(&b, "Question: ");
  dq_strbuf_adds(&b, in->question);
  dq_strbuf_adds(&b, "\n\nPassages:\n\n");
  /* The passage budget: the configured one, within what the context
   * leaves. Each passage is trimmed to at most a third of it, so the best
   * three always fit (retrieval's hit@3 is well above its hit@1,
   * docs/benchmarks.md), and a short passage leaves room for more; a chunk
   * whose lines cannot be cited one by one (HTML/XML) is read whole when
   * it fits. */
  int passage_budget = budget;
  int per_passage = 0;
  if (in->passage_tokens > 0) {
    if (in->passage_tokens < passage_budget)
      passage_budget = in->passage_tokens;
    per_passage = passage_budget / PASSAGES_PER_BUDGET;
    if (per_passage < PASSAGE_FLOOR_TOKENS)
      per_passage = PASSAGE_FLOOR_TOKENS; /* a label and a couple of lines */
    res->passage_budget = passage_budget;
  }
  pl_terms terms;
  pl_terms_init(&terms, in->question, hits, n_hits);
  /* The quote, from the whole chunks before they are trimmed to the
   * budget (a sentence costs no prompt tokens). */
  size_t q_hit = 0;
  int quoted = pl_quote_find(&terms, hits, n_hits, &res->quote, &q_hit);
  if (quoted < 0) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  int64_t q_chunk = quoted ? hits[q_hit].chunk_id : -1;
  int left = passage_budget;
  size_t n_used = 0;
  res->passages = calloc(n_hits ? n_hits : 1, sizeof *res->passages);
  shared = shared_paths(hits, n_hits);
  if (!res->passages || !shared) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  /* The quote's lines are read whatever their passage's rank: the budget
   * holds back what they need (label, lines, blank line) until their
   * passage comes, and that passage's trimmed run keeps them. Without
   * this, three better-ranked passages of a third of the budget each left
   * "laws of" of "the laws of the State of Delaware" to the fourth. */
  int reserve = 0;
  if (quoted && per_passage) {
    dq_strbuf lab = {0};
    dq_strbuf_printf(&lab, "[%zu] ", n_hits);
    cite_label(&lab, &hits[q_hit], shared[q_hit]);
    reserve = (lab.oom ? 0 : pl_count_tokens(m, lab.p)) + 2 +
              pl_lines_tokens(m, &hits[q_hit], res->quote.line_start,
                              res->quote.line_end);
    free(lab.p);
    if (reserve > passage_budget / 2)
      reserve = 0; /* over half the budget: no precedence */
  }
  for (size_t i = 0; i < n_hits; i++) {
    int held = i < q_hit ? reserve : 0;
    int avail = left - held;
    if (avail < MIN_PASSAGE_TOKENS) {
      if (held)
        continue; /* the quote's passage may still come */
      break;
    }
    int trimmed = 0;
    if (per_passage) {
      /* room for the lines under the label (whose line numbers can only
       * shrink when trimmed) and the blank line after them; the quote's
       * passage what its lines need, when that is more */
      int share = i == q_hit && reserve > per_passage ? reserve : per_passage;
      dq_strbuf lab = {0};
      dq_strbuf_printf(&lab, "[%zu] ", n_used + 1);
      cite_label(&lab, &hits[i], shared[i]);
      int room = (share < avail ? share : avail) -
                 (lab.oom ? 0 : pl_count_tokens(m, lab.p)) - 2;
      free(lab.p);
      int32_t ks = quoted && i == q_hit ? res->quote.line_start : 0;
      int32_t ke = quoted && i == q_hit ? res->quote.line_end : 0;
      trimmed =
          room > 0 ? pl_passage_trim(m, &terms, &hits[i], room, ks, ke) : 0;
      if (trimmed < 0) {
        s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
        goto done;
      }
      if (trimmed == 2)
        continue;
    }
    dq_strbuf p = {0};
    dq_strbuf_printf(&p, "[%zu] ", n_used + 1);
    cite_label(&p, &hits[i], shared[i]);
    dq_strbuf_adds(&p, "\n");
    dq_strbuf_adds(&p, hits[i].text);
    dq_strbuf_adds(&p, "\n\n");
    if (p.oom) {
      free(p.p);
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
    int nt = pl_count_tokens(m, p.p);
    if (nt > avail) {
      free(p.p);
      continue; /* a smaller, lower-ranked passage may still fit */
    }
    left -= nt;
    res->n_passage_tokens += nt;
    dq_strbuf_adds(&b, p.p);
    free(p.p);
    dq_citation *c = &res->passages[n_used];
    c->path = strdup(hits[i].path);
    c->root = strdup(hits[i].root);
    c->shown = strdup(hits[i].shown);
    c->stale = hits[i].stale;
    c->section = strdup(hits[i].section ? hits[i].section : "");
    c->text = strdup(hits[i].text);
    c->line_start = hits[i].line_start;
    c->line_end = hits[i].line_end;
    c->page = hits[i].page_start;
    c->unit = dq_page_unit(hits[i].kind);
    c->score = hits[i].score;
    c->trimmed = trimmed;
    if (!c->path || !c->root || !c->shown || !c->section || !c->text) {
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
    /* Keep hits[] aligned with passages[] for the support check. */
    if (n_used != i) {
      dq_hit tmp = hits[n_used];
      hits[n_used] = hits[i];
      hits[i] = tmp;
      unsigned char f = shared[n_used];
      shared[n_used] = shared[i];
      shared[i] = f;
    }
    n_used++;
    res->n_passages = n_used;
  }
  /* hits[i] is passages[i] now: the quote's passage, when the model read
   * the quote's lines */
  for (size_t i = 0; quoted && i < n_used; i++)
    if (hits[i].chunk_id == q_chunk &&
        res->passages[i].line_start <= res->quote.line_start &&
        res->passages[i].line_end >= res->quote.line_end)
      res->quote.passage = (int)i + 1;
  if (n_used == 0 && !in->recent) {
    res->answer = strdup("No passage in the index matches the question.");
    s = res->answer ? DQ_OK : dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  /* what the index knows exactly opens the answer, ahead of the model */
  res->facts = index_facts(hits, n_used, in->facts_named ? in->question : NULL);
  if (res->facts && in->on_text) {
    in->on_text(in->user, res->facts, strlen(res->facts));
    in->on_text(in->user, "\n\n", 2);
  }
  if (in->recent) {
    dq_strbuf_adds(&b, "Recent conversation:\n");
    dq_strbuf_adds(&b, in->recent);
    dq_strbuf_adds(&b, "\n");
  }
  /* The quote again, when the model read its lines, just before the
   * instruction: the 135M model's answers held the gold for 21 of the
   * eval's 39 questions with it, 14 without, citing the gold as often
   * (docs/benchmarks.md); only lines it read, so what the answer says
   * stays citable. Unlabelled: "from [n]" there made the model echo
   * labels (17 of 39). Only where the context has room for it besides the
   * passages. */
  /* a table's row says what its cells are through its header:
   * "Sub-processor: Ferrule Mail Services Ltd; Service: ..." */
  char *pairs = quoted && res->quote.columns
                    ? row_pairs(res->quote.text, res->quote.columns)
                    : NULL;
  const char *said = pairs ? pairs : res->quote.text;
  if (quoted && res->quote.passage &&
      pl_count_tokens(m, said) + 8 <= budget - res->n_passage_tokens) {
    dq_strbuf_adds(&b, "Most relevant sentence: \"");
    dq_strbuf_adds(&b, said);
    dq_strbuf_adds(&b, "\"\n\n");
  }
  free(pairs);
  dq_strbuf_adds(&b, "Answer the question using only the passages above, citing "
             "them as [n]. If they do not contain the answer, say so.\n"
             "Question: ");
  dq_strbuf_adds(&b, in->question);
  if (b.oom) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  dq_strbuf sys = {0};
  dq_strbuf_adds(&sys, system_prompt);
  if (in->summary && in->summary[0]) {
    dq_strbuf_adds(&sys, "\nSummary of the conversation so far: ");
    dq_strbuf_adds(&sys, in->summary);
  }
  if (sys.oom) {
    free(sys.p);
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (dq_log_enabled(in->log, DQ_LOG_DEBUG)) {
    /* whole: dq_log cuts its lines at 2 KB */
    dq_log(in->log, DQ_LOG_DEBUG, "system prompt: %s", sys.p);
    dq_log(in->log, DQ_LOG_DEBUG, "prompt (%d passage tokens) follows",
           res->n_passage_tokens);
    in->log->fn(in->log->user, DQ_LOG_DEBUG, b.p);
  }
  dq_generate_opts go;
  dq_generate_opts_init(&go);
  go.max_tokens = max_tokens;
  go.system = sys.p;
  if (in->early_exit)
    go.early_exit = *in->early_exit;
  /* small models sometimes start repeating the prompt's layout instead of
   * answering; the answer never needs these lines (a passage's label:
   * watch_text) */
  static const char *const echo_stops[] = {"\nQuestion:",
                                           "\nPassages:",
                                           "\nMost relevant sentence:",
                                           "\nAnswer the question using",
                                           "\nUser:",
                                           "\nAssistant:",
                                           "\nRecent conversation:"};
  go.stop = echo_stops;
  go.n_stop = in->recent ? 7 : 4;
  /* nor begins with them: an answer that opened "Question: <the question>"
   * or, in chat, "User: ..." was half of all chat answers on the samples */
  static const char *const echo_starts[] = {"Question:", "Passages:",
                                            "User:", "Assistant:",
                                            "Recent conversation:"};
  go.no_start = echo_starts;
  go.n_no_start = 5;
  answer_watch w = {.on_text = in->on_text, .user = in->user};
  go.on_text = watch_text;
  go.user = &w;
  s = dq_generate(m, b.p, &go, &gr);
  free(sys.p);
  if (s == DQ_OK)
    watch_flush(&w, gr.text);
  free(w.text.p);
  if (s != DQ_OK) {
    dq_error_set(err, s, "%s", dq_model_errmsg(m));
    goto done;
  }
  /* the watched text is a prefix of gr.text */
  if (w.cut && w.cut < strlen(gr.text)) {
    dq_log(in->log, DQ_LOG_DEBUG,
           "the model's text, cut at byte %zu (a loop or a passage written "
           "out): %s",
           w.cut, gr.text);
    size_t n = w.cut;
    while (n > 0 && isspace((unsigned char)gr.text[n - 1]))
      n--;
    gr.text[n] = '\0';
  }
  s = ground(in, res, &gr.text, err);
  if (s != DQ_OK)
    goto done;
  if (res->facts) {
    dq_strbuf a = {0};
    dq_strbuf_printf(&a, "%s%s%s", res->facts, gr.text[0] ? "\n\n" : "",
                     gr.text);
    if (a.oom) {
      free(a.p);
      s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
    res->answer = a.p;
  } else {
    res->answer = gr.text;
    gr.text = NULL;
  }
  res->n_prompt_tokens = gr.n_prompt_tokens;
  res->n_answer_tokens = gr.n_tokens;
  res->ms_prefill = gr.prefill_ms;
  res->ms_generate = gr.decode_ms;
  pl_cite_mark(res->answer, res->passages, res->n_passages);
  pl_cite_infer(res->answer, in->question, hits, res->passages,
                res->n_passages);
done:
  dq_generate_result_clear(&gr);
  free(shared);
  free(b.p);
  return s;
}

/* Appends the chunks of `all` not already in *hits (by chunk id), in their
 * order; takes ownership of `all`'s strings. */
static dq_status append_unranked(dq_hit **hits, size_t *n, dq_hit *all,
                                 size_t n_all, dq_error *err) {
  dq_hit *h = realloc(*hits, (*n + n_all + 1) * sizeof *h);
  if (!h) {
    dq_hits_free(all, n_all);
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  }
  *hits = h;
  size_t n0 = *n;
  for (size_t i = 0; i < n_all; i++) {
    int dup = 0;
    for (size_t j = 0; j < n0 && !dup; j++)
      dup = h[j].chunk_id == all[i].chunk_id;
    if (dup) {
      dq_hit_clear(&all[i]);
      continue;
    }
    h[(*n)++] = all[i];
  }
  free(all);
  return DQ_OK;
}

dq_status dq_ask_run(const dq_ask_opts *o, const char *question,
                     dq_ask_result *res, dq_error *err) {
  memset(res, 0, sizeof *res);
  res->attention = "full";
  double t_start = dq_now_ms();
  if (!question || !question[strspn(question, " \t\r\n")])
    return dq_error_set(err, DQ_ERR_ARG, "the question is empty");
  dq_hit *hits = NULL;
  size_t n_hits = 0;
  dq_model *m = NULL;
  dq_status s;

  /* Load the model first: a missing model fails before any retrieval. */
  double t0 = dq_now_ms();
  s = pl_decoder_open(o->model, "language", "ask", o->backend, o->n_threads,
                      o->log, &m, err);
  if (s != DQ_OK)
    goto done;
  dq_model_info mi;
  dq_model_get_info(m, &mi);
  /* A static string: the model (and its info) is freed before return. */
  res->backend = strcmp(mi.backend, "cuda") == 0 ? "cuda" : "cpu";
  res->ms_load = dq_now_ms() - t0;

  t0 = dq_now_ms();
  size_t k = o->k ? o->k : (o->effort_max ? 10 : 6);
  int recall = o->recall > 0 || (o->recall == 0 && o->n_docs > 0);
  dq_search_job job = {0};
  job.index_dir = o->index_dir;
  job.embed_model = o->embed_model;
  job.backend = o->backend;
  job.n_threads = o->n_threads;
  job.k = recall ? (o->pool ? o->pool : 3 * k) : k;
  job.paths = o->docs;
  job.n_paths = o->n_docs;
  job.paths_option = "--doc";
  job.log = o->log;
  job.config = o->config;
  s = dq_search_run(&job, question, &hits, &n_hits, &res->retrieval, err);
  if (s != DQ_OK)
    goto done;
  if (o->n_docs) {
    /* whole documents: every chunk is a candidate, the ranked ones first */
    dq_hit *all = NULL;
    size_t n_all = 0;
    job.all_chunks = 1;
    job.k = 100000;
    s = dq_search_run(&job, question, &all, &n_all, NULL, err);
    if (s != DQ_OK)
      goto done;
    s = append_unranked(&hits, &n_hits, all, n_all, err);
    if (s != DQ_OK)
      goto done;
    res->retrieval = "documents";
  }
  res->ms_retrieve = dq_now_ms() - t0;
  size_t n_read = o->n_docs ? n_hits : (n_hits < k ? n_hits : k);
  if (recall && n_hits > k) {
    pl_recall_in ri = {.question = question, .config = o->config,
                       .layer_from = DQ_RECALL_LAYER_FROM,
                       .layer_to = DQ_RECALL_LAYER_TO,
                       .weight = DQ_RECALL_WEIGHT};
    dq_model *rm = m;
    if (o->recall_model && strcmp(o->recall_model, o->model) != 0) {
      /* its own model for the pass, freed before the answer is written */
      s = pl_decoder_open(o->recall_model, "recall", "the recall pass",
                          o->backend, o->n_threads, o->log, &rm, err);
      if (s != DQ_OK)
        goto done;
    }
    s = pl_recall_rerank(rm, &ri, hits, n_hits, &res->recall, err);
    if (rm != m)
      dq_model_free(rm);
    if (s != DQ_OK)
      goto done;
    res->attention = "gsm";
    dq_log(o->log, DQ_LOG_INFO,
           "GSM recall: %d candidates, %d tokens in %d pass(es), layers "
           "[%d, %d)%s, %.0f ms; re-reading the best with full attention",
           res->recall.n_candidates, res->recall.n_tokens,
           res->recall.n_passes, res->recall.layer_begin,
           res->recall.layer_end,
           res->recall.calibrated ? ", calibrated" : "", res->recall.ms);
  } else {
    dq_log(o->log, DQ_LOG_INFO,
           "retrieved %zu passages (%s); reading them with full attention%s",
           n_hits, res->retrieval,
           recall ? " (all fit: no recall pass)"
                  : " (no recall pass: pass --recall, or --doc)");
  }

  pl_answer_in in = {0};
  in.question = question;
  in.max_tokens = o->max_tokens > 0 ? o->max_tokens : DQ_ASK_MAX_TOKENS;
  in.passage_tokens = o->passage_tokens > 0 ? o->passage_tokens
                      : o->effort_max       ? DQ_ASK_PASSAGE_TOKENS_MAX
                                            : DQ_ASK_PASSAGE_TOKENS;
  in.on_text = o->on_text;
  in.user = o->user;
  in.log = o->log;
  dq_early_exit_opts ee;
  dq_config_early_exit(o->config, &ee);
  in.early_exit = &ee;
  s = pl_answer(m, &in, hits, n_read, res, err);
  if (s != DQ_OK)
    goto done;
  if (o->effort_max) {
    t0 = dq_now_ms();
    int any = 0;
    for (size_t i = 0; i < res->n_passages; i++)
      any |= res->passages[i].cited;
    if (!any)
      res->support = "unsupported";
    else {
      s = check_support(m, hits, res->passages, res->n_passages, question,
                        res->answer, &res->support, err);
      if (s != DQ_OK)
        goto done;
    }
    res->ms_check = dq_now_ms() - t0;
  }
done:
  dq_hits_free(hits, n_hits);
  dq_model_free(m);
  res->ms_total = dq_now_ms() - t_start;
  if (s != DQ_OK) {
    dq_ask_result_clear(res);
    res->attention = "full";
  }
  return s;
}
