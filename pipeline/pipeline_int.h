/*
 * pipeline_int.h - internals shared by the pipeline's files: model opening
 * and small helpers. Not part of the public interface (pipeline.h).
 */
#ifndef DQ_PIPELINE_INT_H
#define DQ_PIPELINE_INT_H

#include "engine.h"
#include "index.h"
#include "ingest.h"
#include "pipeline.h"

/* Maps "cpu"/"cuda"/"auto" (NULL = auto) to the engine's enum. */
dq_status pl_backend_kind(const char *name, dq_backend_kind *out,
                          dq_error *err);
/* Opens a model file; a missing file is DQ_ERR_NOTFOUND with a message that
 * says how to fetch the defaults. `what` is "embedding" or "language". */
dq_status pl_model_open(const char *path, const char *what,
                        const char *backend, int n_threads,
                        const dq_logger *log, dq_model **out, dq_error *err);
/* pl_model_open of an embedding model for many texts (ingest): its F32
 * matrices quantized to Q8_0 at load (dq_model_opts.q8_at_load), 2.4x
 * faster per chunk for 60 ms more load. Queries open with pl_model_open,
 * exact; the two sets of vectors agree within cosine 0.9994. */
dq_status pl_embedder_open_bulk(const char *path, const char *backend,
                                int n_threads, const dq_logger *log,
                                dq_model **out, dq_error *err);
/* pl_model_open for a decoder: an embedding model is refused, naming the
 * file and `needed_by` (e.g. "ask"). */
dq_status pl_decoder_open(const char *path, const char *what,
                          const char *needed_by, const char *backend,
                          int n_threads, const dq_logger *log, dq_model **out,
                          dq_error *err);
/* The last path component (points into `path`). */
const char *pl_basename(const char *path);

/* 0 for a path whose format has no meaningful source lines (PDF, DOCX,
 * XLSX, e-mail, images: containers whose lines are extracted ones), 1
 * otherwise (xref.c). */
int pl_has_text_lines(const char *path);
/* Whether the file of document (root, path) differs from what was
 * ingested: gone, another size, or another mtime and other content (a
 * touched file is not changed, as for ingest); 0 when it cannot tell. */
int pl_doc_changed(dq_index *idx, const char *root, const char *path);

/* A stored document a user names (forget.c). */
typedef struct pl_doc_ref {
  int64_t id, n_chunks, bytes, mtime;
  char *root, *path, *kind;
} pl_doc_ref;
/* Adds to v[0..*n) (*cap allocated) the stored documents at or under
 * `path` that v does not hold yet: a file or folder on disk (it may be
 * gone since), else a path as stored, relative to its root, or as shown
 * (index.h dq_index_shown_path). *hits: the documents it names, those v
 * held already too. DQ_ERR_ARG for a path that cannot be made absolute. */
dq_status pl_docs_at(dq_index *idx, const char *path, pl_doc_ref **v, size_t *n,
                     size_t *cap, size_t *hits, dq_error *err);
void pl_doc_refs_free(pl_doc_ref *v, size_t n);

/* Qualified xref lookups (xref_owner.c). */
/* 1 when symbol splits into two or more identifiers at ".", "::", "#",
 * "->" or "\\". */
int pl_xref_is_qualified(const char *symbol);
/* Fills res (empty on entry) for a qualified symbol: owner, member, the
 * owner's definitions and the member's uses, known owners first, others
 * left out; suggestions when no scope of the owner defines the member.
 * DQ_ERR_ARG when symbol is not qualified, DQ_ERR_NOMEM, or an index
 * error (message on idx). */
dq_status pl_xref_qualified(dq_index *idx, const char *symbol, const char *kind,
                            dq_xref_result *res);

/* Numbered sources in prompts (cite.c). */
/* Tokens of s as the model counts them (an over-estimate from its length
 * when tokenizing fails), for context budgets. */
int pl_count_tokens(dq_model *m, const char *s);
/* Sets c[n-1].cited = 1 for each [n] in `answer` ("[3]", "[1, 2]",
 * "[1][2]"); numbers outside 1..n are ignored, so only sources that were in
 * the prompt can be cited. */
void pl_cite_mark(const char *answer, dq_citation *c, size_t n);
/* When `answer` cites nothing, marks cited = 2 (inferred) on the one source
 * (hits[i] is c[i]; its text) holding most of the answer's key terms: at
 * least two of them, or one that no other source holds (cite.c). */
void pl_cite_infer(const char *answer, const char *question,
                   const dq_hit *hits, dq_citation *c, size_t n);

/* The question's terms, weighted by how rarely they occur among the lines
 * of the candidate passages (BM25 idf, lines as documents). Terms past
 * PL_MAX_TERMS are ignored (a mask bit per term). */
#define PL_MAX_TERMS 32
#define PL_TERM_BYTES 32
typedef struct pl_terms {
  char key[PL_MAX_TERMS][PL_TERM_BYTES]; /* lower case; words stemmed */
  double idf[PL_MAX_TERMS];
  int n;
} pl_terms;
void pl_terms_init(pl_terms *t, const char *question, const dq_hit *hits,
                   size_t n_hits);
/* Calls fn(key, word, len, user) for each term of s[0..n): key as
 * pl_terms' (lower case, folded as BM25 folds, "naive" for "naïve";
 * identifiers whole, other words cut to their first 5 letters, words under
 * 3 letters and stop words skipped), word[0..len) as it stands in s. */
typedef void (*pl_term_fn)(const char *key, const char *word, size_t len,
                           void *user);
void pl_each_term(const char *s, size_t n, pl_term_fn fn, void *user);

/* Whether an answer's words come from what the model read (ground.c). */
typedef enum pl_ground_verdict {
  PL_GROUNDED,    /* it adds words the sources hold */
  PL_RESTATES,    /* it adds none: the question's words, labels, clause
                     numbers ("7.2"), nothing */
  PL_UNSUPPORTED, /* it names what no source holds (a name, number or
                     identifier), or all it adds, or most of 3+ terms, is
                     nowhere */
  PL_DECLINES     /* it says the passages do not hold the answer */
} pl_ground_verdict;
typedef struct pl_grounding {
  pl_ground_verdict verdict;
  int n_new;         /* distinct terms the question does not hold */
  int n_unsupported; /* of those, the ones no source holds */
  char names[160];   /* the unsupported names as written, ", " between
                        them (cut at a whole name); "" when none */
  size_t name_at;    /* the first one's offset in the answer (SIZE_MAX:
                        none) */
} pl_grounding;
/* Checks `answer` against `question` and the texts the model read,
 * sources[0..n) (NULL entries skipped). Passage labels the answer repeats
 * ("[2]", "src/tax.c:12-20", "(4)") count for nothing. Terms are matched by
 * pl_each_term's keys, so "contracts" is held by "contract". Returns 0, or
 * -1 when out of memory (g then says PL_GROUNDED). */
int pl_ground_check(const char *answer, const char *question,
                    const char *const *sources, size_t n, pl_grounding *g);
const char *pl_ground_name(pl_ground_verdict v); /* "grounded", ... */
/* Cuts h->text to the run of whole lines, at most max_tokens tokens, that
 * holds the most of t's terms, of the runs that hold lines keep_start to
 * keep_end (source lines; 0 0 for none) and, for a passage a strong
 * symbol ranked, its definition's or use's line, where those fit, and narrows
 * h->line_start/line_end to the lines kept, so a citation names exactly the
 * lines the model read. Only where the text's lines are its source lines one to
 * one (not HTML/XML, not a PDF chunk across pages); a chunk that already fits,
 * or whose every line alone is over max_tokens, is left as it is. Returns 1
 * when trimmed, 0 when left as it is, 2 when no run that fits holds a term the
 * chunk has (h unchanged; not worth reading), -1 when out of memory (h
 * unchanged). */
int pl_passage_trim(dq_model *m, const pl_terms *t, dq_hit *h, int max_tokens,
                    int32_t keep_start, int32_t keep_end);
/* 1 when a hit's symbol_kind is a use of the name (call, use, xref,
 * include), 0 when it is a definition's kind. */
int pl_symbol_use_kind(const char *kind);
/* The length of the clause number s[0..n) opens with, before a blank:
 * "11.1 ", "9. ", "2.3.4 " (digits and at least one dot, no two dots
 * together, at most 12 bytes); 0 when it opens with none (cite.c). */
size_t pl_clause_number(const char *s, size_t n);
/* Tokens of hit h's lines a..b with their newlines, where its lines are its
 * source lines one to one; else of its whole text (a chunk read whole or not
 * at all). */
int pl_lines_tokens(dq_model *m, const dq_hit *h, int32_t a, int32_t b);

/* Hit h's line `line` (unit 0), the unit (sentence, clause) holding its
 * first word (unit 1; units as the quote's, below), or its lines through
 * the one that closes the first brace opened from it (unit 2: an enum's
 * or struct's body; the chunk's end if it stays open), blanks collapsed (in
 * prose Markdown's "**" dropped), cut at a blank past max_bytes (then
 * "...").
 * NULL where h's lines are not its source lines one to one, the line is
 * outside h or blank, or out of memory. */
char *pl_line_unit(const dq_hit *h, int32_t line, int unit, size_t max_bytes);

/* 1 when text holds w as a whole word (case-insensitive; w may hold
 * blanks and punctuation: "Derived Materials", "2.1(d)"). */
int pl_has_word(const char *text, const char *w);

/* The quote (dq_quote): of the units of hits[0..n)'s texts, the one that
 * holds the most of t's terms by idf (each once; its section's title counts
 * as its own words; in a document's first chunk the terms that name the
 * document, by its file name or first line, count half), at least two of them
 * in its own text (the question's only one when it has one), the best-ranked
 * hit's and then the first on a tie. Units: sentences (ending in . ; : ! or ?
 * before a blank and a capital, digit (not after a colon), quote or bracket;
 * not at the colon of a label of up to 3 words, "Deposit:\nGBP 15,450"), cut
 * also at blank lines and before a Markdown heading, list item, table row or a
 * line that opens with an enumeration such as "(d) " or "(iv) " or a clause
 * number such as "11.1 " or "9. "; a table's row (a line with " | " between
 * cells, each line of a .csv or .tsv file) is a unit of its own; units under
 * PL_QUOTE_MIN_WORDS words (headings, labels), rows under
 * PL_QUOTE_MIN_ROW_WORDS, are not quoted; a row's columns are its
 * table's header row (dq_quote.columns). Fills q's
 * text (blanks collapsed, at most PL_QUOTE_MAX_BYTES, then "...") and
 * lines; *hit is the hit it came from. Returns 1 when found, 0 when none,
 * -1 when out of memory. */
#define PL_QUOTE_MIN_WORDS 6
#define PL_QUOTE_MIN_ROW_WORDS 3 /* a table's row (cite.c row_line) */
#define PL_COLUMNS_MAX_BYTES 240 /* of a row's header (dq_quote.columns) */
#define PL_QUOTE_MAX_BYTES 1200
#define PL_QUOTE_CODE_LINES 12
int pl_quote_find(const pl_terms *t, const dq_hit *hits, size_t n, dq_quote *q,
                  size_t *hit);

/* Opens an existing index in dir (read_only: never writes it); a missing
 * one is DQ_ERR_NOTFOUND with a message that says how to make one
 * (report.c; search, xref, chat, status and forget open through it). */
dq_status pl_index_open(const char *dir, int read_only, const dq_logger *log,
                        dq_index **idx, dq_error *err);

/* One writer at a time (ingest_job.c): takes DIR/ingest.lock, held until
 * *fd is closed; DQ_ERR_BUSY naming it when another writer holds it. Two
 * writers would each keep their own copy of the vector index, and the
 * later save would drop the other's vectors. */
dq_status pl_index_lock(const char *dir, int *fd, dq_error *err);

/* Where the loop at the end of generated text s[0..n) starts repeating
 * (after its first copy), or n when s does not end in one (loop.c): one
 * unit repeated exactly, or in shape (its numbers changing) many times. */
size_t pl_loop_start(const char *s, size_t n);

/* Where generated text s[0..n) starts to write a passage out in the
 * prompt's layout (loop.c): a line after the first that opens like a
 * passage's label ("[2] path:12-20", "[2] path p.4") or with the
 * instruction's "[n] " (after text that ends in a colon: the end of that
 * line, the label kept); n when none does. *hold: the start of a last
 * line that may still become one (not yet to be shown), or n. */
size_t pl_echo_start(const char *s, size_t n, size_t *hold);

/* How the index's facts open an answer (ask.c index_facts); chat reads a
 * stored answer's first name after it. */
#define PL_FACTS_LEAD "From the index: "

/* The read-and-answer step shared by ask and chat. */
typedef struct pl_answer_in {
  const char *question;
  const char *summary; /* rolling summary of older turns, or NULL */
  const char *recent;  /* recent turns as "User: ...\n" lines, or NULL */
  int facts_named;     /* 1: the index's facts only for names the question
                          itself holds (chat, whose query for a follow-up
                          adds the previous question) */
  int max_tokens;      /* 0 = 256 */
  int passage_tokens;  /* budget for the passages (labels included), filled
                          best first, each trimmed to at most a third of it;
                          0 = whatever fits the context, untrimmed */
  const dq_early_exit_opts *early_exit; /* NULL = plain decoding */
  dq_text_fn_pl on_text;
  void *user;
  const dq_logger *log; /* the prompt at DEBUG (-v -v); NULL = silent */
} pl_answer_in;

/* Builds the position-aware prompt from `hits` (best first; those that do
 * not fit the context are dropped, and hits[] is reordered so that hits[i]
 * is res->passages[i]), generates the answer and marks cited passages.
 * Fills res->answer, passages, token counts and prefill/generate times. */
dq_status pl_answer(dq_model *m, const pl_answer_in *in, dq_hit *hits,
                    size_t n_hits, dq_ask_result *res, dq_error *err);

/* The GSM coarse-recall step (rerank.c). */
typedef struct pl_recall_in {
  const char *question;
  const dq_config *config; /* GSM options; NULL = defaults */
  double layer_from, layer_to; /* layers read, as fractions of the depth */
  double weight;           /* recall's weight in the rank fusion */
  int calib;               /* 1: minus the scores of the content-free probe
                              "N/A" (default 0: raw probe mass) */
  int max_pass_tokens;     /* 0 = the model's trained context */
  int unranked;            /* the input order is not a ranking (whole
                              documents): order by recall alone */
  int toq;                 /* 1: also each passage's attention to the
                              question (hits' recall_toq; reported, not
                              ranked by) */
} pl_recall_in;

/* Scores hits[0..n) (in retrieval order) by GSM recall passes and reorders
 * them by the fused rank; sets each hit's retrieval_rank, recall_rank,
 * recall_score and, with in->toq, recall_toq. n < 2: nothing to do
 * (info->ran 0). */
dq_status pl_recall_rerank(dq_model *m, const pl_recall_in *in, dq_hit *hits,
                           size_t n, dq_recall_info *info, dq_error *err);

#endif /* DQ_PIPELINE_INT_H */
