/*
 * pipeline.h - the public interface of the pipeline layer: configuration
 * (docqa.yaml), and the jobs that wire ingest, index and engine together
 * (ingest a folder, search, ask, xref, chat).
 *
 * The pipeline owns no storage format and no model math; it decides what
 * flows where. Only cli/ sits above it.
 */
#ifndef DQ_PIPELINE_H
#define DQ_PIPELINE_H

#include "common.h"
#include "engine.h"
#include "index.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Streaming callback for generated text (same contract as the engine's
 * dq_text_fn: return non-zero to stop). */
typedef int (*dq_text_fn_pl)(void *user, const char *piece, size_t len);

/* ---- Configuration (config.c) ------------------------------------------ */

typedef enum {
  DQ_GSM_FIXED = 0,   /* sinks + window only */
  DQ_GSM_DYNAMIC = 1, /* anchors and memory chosen by attention */
  DQ_GSM_HYBRID = 2   /* fixed in lower layers, dynamic in upper layers */
} dq_gsm_mode;

typedef enum {
  DQ_KV_SCORE = 0,      /* evict lowest accumulated attention */
  DQ_KV_TIME_DECAY = 1, /* merge oldest neighbours (gated state update) */
  DQ_KV_SIMILARITY = 2  /* merge most similar neighbouring keys */
} dq_kv_strategy;

/* Every key of docqa.yaml (DESIGN.md "Config"), with its default. Sections
 * and keys mirror the file one to one so messages can name them. */
typedef struct dq_config {
  struct {
    uint32_t window_size;        /* 384 */
    uint32_t num_global_anchors; /* 6 */
    uint32_t n_sink;             /* 4 */
    dq_gsm_mode mode;            /* hybrid */
    int anchor_selection_dynamic; /* 1 = dynamic, 0 = static */
    uint32_t min_tokens;         /* 1024 */
    int cache_positions;         /* positions: original (0), cache (1:
                                    RoPE at cache index, as StreamingLLM)
                                    or auto (2, default: cache past the
                                    model's trained context), engine.h
                                    DQ_GSM_POS_* */
  } sparse_attention;
  struct {
    double keep_ratio;            /* 0.75, in (0, 1] */
    dq_kv_strategy strategy;      /* score */
    uint32_t memory_slots;        /* 4096 */
    double recompute_threshold;   /* 0.3, in [0, 1] */
    int cache_type;               /* q8_0 (default), f16 or f32: the GSM
                                     cache's element type (engine.h
                                     dq_kv_type) */
  } kv_compress;
  struct {
    uint32_t encoder_batch_size;  /* 8 */
    uint32_t decoder_batch_size;  /* 1 */
    double encoder_window_scale;  /* 1.5 */
    double decoder_window_scale;  /* 0.8 */
  } encoder_decoder;
  struct {
    uint32_t chunk_size; /* 2048 */
  } prefill;
  struct {
    uint32_t top_k;      /* 0 = from the model */
    uint32_t n_group;    /* 0 = from the model */
    uint32_t topk_group; /* 0 = from the model */
  } moe;
  struct {
    int enabled;           /* false */
    double layer_fraction; /* 0.67, in (0, 1) */
    double threshold;      /* 0.9, in (0, 1] */
  } early_exit;
  struct {
    double lexical_weight; /* DQ_LEXICAL_WEIGHT (0.7), in (0, 1]: BM25's
                              weight against dense (index.h) */
  } search;
  struct {
    int ocr; /* true: PDF pages without a text layer are read by OCR */
    uint32_t max_file_mb; /* 0: by kind (ingest.h dq_max_file_bytes): 64
                             for text, code and markup, 512 for PDF,
                             office, e-book, mail and images; else one
                             limit for all, in MiB (<= 1 << 20) */
  } ingest;
} dq_config;

/* Fills `c` with the defaults above. */
void dq_config_defaults(dq_config *c);

/* Reads a docqa.yaml file over the values already in `c` (call
 * dq_config_defaults first). Unknown sections or keys, wrong types and
 * out-of-range values are errors naming the file, line and key, e.g.
 * "docqa.yaml:3: sparse_attention.window_size: must be >= 1". On error `c`
 * is unchanged. */
dq_status dq_config_load(dq_config *c, const char *path, dq_error *err);

/* Sets one key from text, as a command-line override would:
 * dq_config_set(c, "kv_compress.strategy", "similarity", err). Same checks
 * and messages as the file. */
dq_status dq_config_set(dq_config *c, const char *key, const char *value,
                        dq_error *err);

/* The engine's GSM options from the config's sparse_attention,
 * kv_compress, encoder_decoder and prefill sections (rerank.c); c may be
 * NULL (defaults). */
void dq_config_gsm_opts(const dq_config *c, dq_gsm_opts *o);
/* The engine's early-exit options from the config's early_exit section
 * (rerank.c, beside the GSM options: config.c itself needs no engine);
 * c may be NULL (defaults: off). */
void dq_config_early_exit(const dq_config *c, dq_early_exit_opts *o);

/* Names for enums, as written in the file. Static strings. */
const char *dq_gsm_mode_name(dq_gsm_mode m);
const char *dq_kv_strategy_name(dq_kv_strategy s);
const char *dq_kv_cache_type_name(dq_kv_type t); /* kv_compress.cache_type */

/* ---- Ingest (ingest_job.c) ---------------------------------------------- */

/* Called for each file the walk or a reader skipped, with the reason. */
typedef void (*dq_skip_fn)(void *user, const char *path, const char *reason);

typedef struct dq_ingest_opts {
  const char *index_dir;   /* created when missing */
  const char *embed_model; /* GGUF path of the embedding model */
  int no_embed;            /* store text/symbols/BM25 only */
  int embed_only;          /* skip the walk; embed chunks still missing */
  int hidden;              /* walk hidden files and folders too (a name
                              starting with "."); else they are skipped,
                              and removed from the index on a later run */
  const char *backend;     /* "cpu", "cuda", "auto" (NULL = auto) */
  int n_threads;           /* 0 = all cores */
  uint32_t max_chunk_tokens; /* 0 = the chunker's default */
  int no_ocr;                /* leave PDF pages without a text layer unread
                                (else OCR reads them, when Tesseract is here) */
  const char *ocr_lang;      /* Tesseract languages ("eng", "deu+eng");
                                NULL = "eng" */
  uint64_t max_file_bytes;   /* files larger are skipped with a warning;
                                0 = by kind (ingest.h dq_max_file_bytes) */
  const dq_logger *log;    /* NULL = silent */
  dq_progress_fn progress; /* may be NULL; stages "ingest", "embed" */
  void *progress_user;
  dq_skip_fn on_skip;      /* may be NULL */
  void *skip_user;
  volatile int *stop;      /* may be NULL; set non-zero (e.g. from SIGINT)
                              to stop between files: the index keeps every
                              file finished so far */
} dq_ingest_opts;

/* Counts of one ingest run. by_kind is indexed by dq_doc_kind (ingest.h). */
typedef struct dq_ingest_summary {
  uint64_t files_seen;      /* files the walk offered */
  uint64_t files_added;     /* new documents */
  uint64_t files_updated;   /* changed documents re-ingested */
  uint64_t files_reread;    /* of those, unchanged but stored by an older
                               chunker (DQ_CHUNK_VERSION) */
  uint64_t files_unchanged; /* size+mtime (or sha256) unchanged: no work */
  uint64_t files_removed;   /* deleted from disk, removed from the index */
  uint64_t files_skipped;   /* binary, ignored by policy, too large, ... */
  uint64_t files_too_large; /* of those, over the size limit (warned) */
  uint64_t largest_skipped; /* the largest of those, bytes */
  uint64_t files_failed;    /* unreadable or malformed: see the log */
  uint64_t by_kind[24];     /* by dq_doc_kind (ingest.h: DQ_DOC_KINDS <= 24) */
  uint64_t bytes_read;
  uint64_t n_chunks, n_symbols, n_refs; /* written in this run */
  uint64_t n_embedded;                  /* chunks embedded in this run */
  uint64_t ocr_pages;                   /* PDF pages read by OCR in this run */
  uint64_t pages_no_text; /* PDF pages without a text layer left unread
                             (OCR off or Tesseract missing); their files
                             are read again by the next ingest */
  uint64_t images_unread; /* image files skipped: Tesseract is missing */
  double ms_total, ms_walk_read, ms_embed;
} dq_ingest_summary;

/* Ingests each path (a folder: walked, honouring ignore files; a file: its
 * folder is the root) into the index: unchanged files are skipped, changed
 * ones re-ingested, each in one transaction, files deleted under a walked
 * folder removed. Then, unless no_embed, embeds every chunk that has no
 * embedding yet and saves the vector file. Problems with single files are
 * counted in files_failed (and logged), not returned; errors are for the
 * index, the embedding model or a missing path (named in err). */
dq_status dq_ingest_run(const dq_ingest_opts *o, const char *const *paths,
                        size_t n_paths, dq_ingest_summary *sum,
                        dq_error *err);

/* ---- What an index holds (report.c): `docqa status` ------------------- */

typedef struct dq_report_root {
  char *root;
  char *label; /* what its documents' paths are shown behind ("" in an
                  index of one root; index.h dq_index_root_label) */
  int64_t n_docs, n_chunks, bytes;
  int64_t newest_mtime; /* the newest document's, ns since the epoch */
} dq_report_root;
typedef struct dq_report_kind {
  char *kind;
  int64_t n_docs, n_chunks;
} dq_report_kind;
typedef struct dq_report {
  dq_index_stats stats;
  char *embed_model; /* NULL when none is recorded */
  int embed_dim;
  dq_report_root *roots; /* by root */
  size_t n_roots;
  dq_report_kind *kinds; /* most documents first, then by name */
  size_t n_kinds;
} dq_report;
/* Reads what the index in index_dir holds, without writing it; calls
 * each_doc (may be NULL) for every document, by root then path (the
 * strings valid during the call only). DQ_ERR_NOTFOUND (with a message
 * that says how to make one) when there is no index. Free with
 * dq_report_clear. */
dq_status dq_report_run(const char *index_dir, const dq_logger *log,
                        dq_doc_fn each_doc, void *user, dq_report *out,
                        dq_error *err);
void dq_report_clear(dq_report *r);

/* ---- Forget (forget.c): `docqa forget` ------------------------------- */

typedef struct dq_forget_opts {
  const char *index_dir;
  const dq_logger *log;
  int dry_run;      /* 1: only list what would go */
  dq_doc_fn on_doc; /* may be NULL: each document removed (or, dry run,
                       that would be), by root then path */
  void *user;
} dq_forget_opts;
typedef struct dq_forget_summary {
  int64_t n_docs, n_chunks; /* removed (dry run: that would be) */
} dq_forget_summary;
/* Removes from the index every document at or under each path, with its
 * chunks, vectors, symbols and references, one transaction per document
 * (as ingest), holding ingest's writer lock. A path is a file or folder on
 * disk (it may be gone: one that no longer exists is read as written,
 * made absolute), or a document's path as stored, relative to its root
 * (as ask --doc). Every path is resolved first: one that matches no
 * document fails (DQ_ERR_NOTFOUND, naming it) before anything is
 * removed. */
dq_status dq_forget_run(const dq_forget_opts *o, const char *const *paths,
                        size_t n_paths, dq_forget_summary *sum, dq_error *err);

/* ---- Search (search.c) --------------------------------------------------- */

/* What the GSM recall step did (ask, search --recall). */
typedef struct dq_recall_info {
  int ran;                 /* 1 when at least one pass ran */
  int n_passes, n_tokens;  /* passes and tokens read */
  int n_candidates;        /* passages scored */
  int layer_begin, layer_end; /* layers whose attention was read */
  int calibrated;          /* 1: minus a content-free probe's scores */
  double weight;           /* recall's weight in the rank fusion */
  double ms;
} dq_recall_info;

/* Defaults of the recall step, chosen by tests/eval/run.py
 * (docs/benchmarks.md): with the default 135M model, recall's own
 * ranking is weak (hit@1 15% of a pool
 * of 10 where hybrid retrieval has 67%; 3% reading layers 0.5:1); fused at
 * weight <= 1 it leaves hybrid's hit@1/3/5 about unchanged (layers 0.5:1,
 * the pass reading exactly the 10: 67/85/92% hybrid, 72/82/90% at weight
 * 0.5, 67/82/85% at 1), above 1 it lowers them. So ask runs it only where retrieval has no ranking (whole
 * documents), at weight 1. */
#define DQ_RECALL_WEIGHT 1.0
#define DQ_RECALL_LAYER_FROM 0.5
#define DQ_RECALL_LAYER_TO 1.0

typedef struct dq_search_job {
  const char *index_dir;
  const char *embed_model; /* used when the index has vectors */
  const char *backend;
  int n_threads;
  size_t k;                /* 0 = 10 */
  const char *const *paths; /* optional path filters (see index.h); a
                               filter that names no document is an error
                               (DQ_ERR_NOTFOUND) naming it after
                               paths_option ("--path"; may be NULL) */
  size_t n_paths;
  const char *paths_option;
  const dq_logger *log;
  int no_symbols; /* 1: BM25 and dense only (index.h) */
  /* GSM recall re-rank (search --recall): retrieve `pool` candidates, score
   * them with a recall pass of `model`, fuse, keep the best k. */
  int recall;
  const char *model;       /* decoder GGUF for the pass */
  const dq_config *config; /* search section, and GSM options for the
                              recall pass; NULL = defaults */
  size_t pool;             /* 0 = 3 k; below k reads k */
  double recall_weight;    /* fusion weight (DQ_RECALL_WEIGHT) */
  double layer_from, layer_to; /* layers read, fractions of the depth */
  int recall_calib;        /* 1: minus a content-free probe's scores (off
                              by default: rerank.c says why) */
  dq_recall_info *recall_info; /* out, may be NULL */
  int all_chunks;          /* every chunk of the `paths` documents, in
                              document order, at most k (index.h) */
} dq_search_job;

/* One hit, self-contained (strings owned by the array). */
typedef struct dq_hit {
  char *path, *root, *section, *text, *kind;
  char *shown; /* the path as shown to people and the model: in an index of
                  several roots behind its root's label (index.h
                  dq_index_shown_path) */
  int stale;   /* 1: the file changed or went since it was ingested, so
                  its lines may have moved (pl_doc_changed) */
  int32_t line_start, line_end, page_start, page_end;
  int64_t chunk_id;
  double score;
  int32_t bm25_rank, dense_rank;
  double bm25_score, dense_score;
  /* the symbol signal: rank (0: none), whether weighed as strong, the
   * defined or used name that ranked the chunk, what the chunk holds of it
   * (a definition's or use's kind), where (scope or caller) and its line;
   * the strings NULL when none (index.h) */
  int32_t symbol_rank, symbol_line;
  int symbol_strong;
  char *symbol, *symbol_kind, *symbol_where;
  /* set by the GSM recall step (0 when it did not run): rank in retrieval
   * order, rank and score (probe attention mass) of the recall pass, and
   * (search only) the passage's attention to the pinned question
   * (dq_model_recall's to_question) */
  int32_t retrieval_rank, recall_rank;
  double recall_score, recall_toq;
} dq_hit;

/* Hybrid retrieval: BM25 always, dense when the index holds vectors and the
 * embedding model is available (otherwise BM25 only, logged at WARN).
 * *mode_out (may be NULL) gets "hybrid" or "bm25" (static). Free hits with
 * dq_hits_free. */
dq_status dq_search_run(const dq_search_job *job, const char *query,
                        dq_hit **hits, size_t *n_hits, const char **mode_out,
                        dq_error *err);
void dq_hits_free(dq_hit *h, size_t n);
/* Frees one hit's strings (for arrays that drop some hits). */
void dq_hit_clear(dq_hit *h);

/* ---- Ask (ask.c) --------------------------------------------------------- */

/* Tokens of passages in ask's prompt (--passage-tokens), filled best first,
 * each passage trimmed to the run of lines holding the question's terms.
 * Prefilling the prompt was most of an answer's time on a CPU (k = 6 whole
 * chunks: ~1,400 tokens). Chosen with tests/eval/run.py (39 questions,
 * gold passage read / prompt tokens p50): 384 with at most a third per
 * passage 34/39 / 515; a quarter per passage 32/39 / 517; 480 with a fifth
 * 33/39 / 613; the 6 whole chunks 36/39 / 1,391 (the two lost have their
 * gold at retrieval rank 5; --effort max reads more). */
#define DQ_ASK_PASSAGE_TOKENS 384
#define DQ_ASK_PASSAGE_TOKENS_MAX 768
/* Longest answer in tokens (--max-tokens). With the default model half the
 * answers ran to the old 256 (loops, echoed passages); the answers that
 * held the gold answer were 9-33 tokens but one. */
#define DQ_ASK_MAX_TOKENS 128

typedef struct dq_ask_opts {
  const char *index_dir;
  const char *model;       /* decoder GGUF */
  const char *embed_model; /* for the query vector */
  const char *backend;
  int n_threads;
  size_t k;                /* passages retrieved, at most this many read;
                              0 = 6 (high) / 10 (max) */
  int passage_tokens;      /* prompt budget for passages; 0 =
                              DQ_ASK_PASSAGE_TOKENS (high) / _MAX (max) */
  int effort_max;          /* more passages and a support check */
  const char *const *docs; /* --doc: restrict to these paths (relative to
                              their root, as stored) */
  size_t n_docs;
  int max_tokens;          /* answer length; 0 = DQ_ASK_MAX_TOKENS */
  int recall;              /* GSM recall step: 0 = auto (only with docs,
                              whose chunks have no ranking of their own),
                              1 = on, -1 = off */
  size_t pool;             /* candidates the recall pass reads; 0 = 3 k
                              (docs: every chunk of the documents) */
  const char *recall_model; /* decoder GGUF for the recall pass; NULL =
                               `model` (e.g. a long-context model locates,
                               the answer model answers) */
  const dq_config *config; /* may be NULL (defaults) */
  const dq_logger *log;
  dq_text_fn_pl on_text;   /* streams the answer; may be NULL */
  void *user;
} dq_ask_opts;

/* Where lines of a document are, as its reader counts them, written after
 * its path: ":12-20" for text and code (no page), " p.4" for a PDF's or a
 * scan's page, " slide 3" for a deck's slide and " sheet 2 rows 14-20"
 * (" row 15") for a workbook's sheet, whose lines are its rows as the
 * spreadsheet numbers them. unit: dq_page_unit's. Returns buf, which
 * DQ_WHERE_MAX bytes always hold. */
#define DQ_WHERE_MAX 64
const char *dq_where(char *buf, const char *unit, int32_t page,
                     int32_t line_start, int32_t line_end);
/* What a page of a document of `kind` (dq_hit.kind: "pdf", "pptx", ...)
 * is: "slide" (pptx, odp), "sheet" (xlsx, ods, xls) or "page" (every other
 * kind, NULL too). Static. */
const char *dq_page_unit(const char *kind);

/* A passage given to the model; citations point at these only. */
typedef struct dq_citation {
  char *path, *section;
  char *root, *shown; /* as in dq_hit */
  const char *unit;   /* dq_page_unit of its document's kind (static) */
  int stale;          /* as in dq_hit */
  char *text; /* the lines the model read (the chunk, or its trimmed run) */
  int32_t line_start, line_end, page; /* of `text` */
  int trimmed; /* 1: text is a run of the chunk's lines */
  double score;
  int cited; /* 1: the answer cites it as [n]; 2: the answer cites nothing
                and this passage holds most of its key terms (inferred) */
} dq_citation;

/* The sentence of the retrieved passages that holds the most of the
 * question's terms, quoted as it stands (blanks collapsed): extractive
 * evidence beside the model's answer (cite.c pl_quote_find). */
typedef struct dq_quote {
  char *text; /* NULL when no sentence holds enough of the terms */
  char *path, *section;
  char *root, *shown;                 /* as in dq_hit */
  char *lines; /* from code: its source lines as they stand, at most
                  PL_QUOTE_CODE_LINES (then "..."), for display; NULL from
                  prose, or where the chunk's lines are not the file's */
  int32_t line_start, line_end, page; /* the sentence's lines (its chunk's
                                         where they cannot be told) */
  const char *unit; /* dq_page_unit of its document's kind (static) */
  int passage; /* its passage's [n] when the model read those lines, else 0 */
  char *columns; /* a table's row: its table's header row ("Name | Year"),
                    NULL otherwise or where the chunk does not tell */
} dq_quote;

typedef struct dq_ask_result {
  char *answer;
  /* Whether the model's words come from what it read (ground.c):
   * "grounded", "restates" (it adds nothing to the question), "unsupported"
   * (it names what no passage holds, or most of its words are nowhere) or
   * "declines" (it says the passages do not answer). When restating or
   * unsupported and a quote was found, the answer is the quote, cited, and
   * model_answer holds the model's text (set aside); else NULL. */
  const char *grounding;
  char *model_answer;
  char *unsupported; /* the names it found nowhere, ", " between; NULL: none */
  int kept;    /* 1: a set-aside answer opens with the model's sentences before
                  the first of those names (grounded on their own) */
  char *facts; /* what the symbol index states of the names the question
                  asks about, cited (ask.c); it opens the answer; NULL when
                  none */
  dq_quote quote;        /* the best sentence of the passages retrieved */
  dq_citation *passages; /* every passage the model read, best first */
  size_t n_passages;
  const char *attention; /* "gsm" when the recall pass ran (the chosen
                            passages are then re-read with full attention),
                            "full" when only retrieval chose them */
  dq_recall_info recall; /* what the recall step did */
  const char *backend;   /* "cpu" / "cuda" */
  const char *retrieval; /* "hybrid" or "bm25" */
  const char *support;   /* effort max: "supported", "unsupported", or NULL */
  int n_prompt_tokens, n_answer_tokens;
  int n_passage_tokens; /* of the passages in the prompt, labels included */
  int passage_budget;   /* their budget (0: only the context bounded them) */
  double ms_retrieve, ms_load, ms_prefill, ms_generate, ms_check, ms_total;
} dq_ask_result;

/* Retrieves candidate passages for `question` (with docs: every chunk of
 * those documents, the ones hybrid retrieval ranks first, then the rest in
 * document order), scores them with GSM recall passes of the model and
 * fuses that with the retrieval rank (see `recall`; skipped when the
 * candidates already fit), has the model answer from the best ones only
 * (re-read with full attention), and marks which passages the answer
 * cites. Free with dq_ask_result_clear. */
dq_status dq_ask_run(const dq_ask_opts *o, const char *question,
                     dq_ask_result *res, dq_error *err);
void dq_ask_result_clear(dq_ask_result *r);

/* ---- Chat (chat.c) ------------------------------------------------------- */

typedef struct dq_chat dq_chat;

typedef struct dq_chat_opts {
  const char *index_dir, *model, *embed_model, *backend;
  int n_threads;
  size_t k;              /* passages per turn; 0 = 4 */
  int keep_turns;        /* recent turns kept verbatim; 0 = 4 */
  int history_budget;    /* tokens of turns after the summary before the
                            oldest are folded into it; 0 = n_ctx / 4 */
  int max_tokens;        /* answer length; 0 = 256 */
  const dq_config *config; /* early_exit section; NULL = defaults */
  const dq_logger *log;
} dq_chat_opts;

/* Opens (or creates) session `name` in the index, loading the models. The
 * session's turns and summary live in the index, so a restart resumes it.
 * Free with dq_chat_close. */
dq_status dq_chat_open(const dq_chat_opts *o, const char *name,
                       dq_chat **out, dq_error *err);
void dq_chat_close(dq_chat *c); /* accepts NULL */

/* One turn: resolves the question against the session for retrieval (the
 * previous question is added to the query), retrieves, answers with the
 * rolling summary, the recent turns' questions and ask's passage budget
 * in the prompt, stores both turns, and
 * folds the oldest turns into the summary when over budget. The result's
 * passages are the sources of this answer. */
dq_status dq_chat_turn(dq_chat *c, const char *question, dq_text_fn_pl on_text,
                       void *user, dq_ask_result *res, dq_error *err);

/* The current summary ("" when none); malloc'd, caller frees. */
dq_status dq_chat_summary(dq_chat *c, char **text, dq_error *err);
/* The session's turns, oldest first (index.h). Free with dq_turns_free. */
dq_status dq_chat_history(dq_chat *c, dq_turn **turns, size_t *n,
                          dq_error *err);
/* Deletes the session's turns and summary and starts it afresh. */
dq_status dq_chat_reset(dq_chat *c, dq_error *err);
/* Context tokens used by the last turn's prompt and the model's context. */
void dq_chat_usage(const dq_chat *c, int *prompt_tokens, int *n_ctx);

/* ---- Xref (xref.c) ------------------------------------------------------- */

typedef struct dq_xref_result {
  dq_xref_hit *defs; /* definitions, by path/line (index.h) */
  size_t n_defs;
  dq_xref_hit *refs; /* references (calls, uses, includes, cross-refs):
                        refs[0..n_refs_known) first, by path/line, then
                        those whose owner a qualified lookup could not tell */
  size_t n_refs;
  size_t n_refs_known; /* n_refs for a plain lookup */
  /* A qualified lookup ("Box.count", "ns::Box::count", "Inv#total"), run
   * when the symbol as typed is neither defined nor used: owner "Box" (as
   * typed) and member "count"; else both NULL. via[i] says how refs[i]'s
   * owner was told ("self", "member", "qualified", "declared type", "only
   * definition"; static strings; NULL past n_refs_known); n_refs_other
   * uses of the member that belong to another owner were left out. */
  char *owner, *member;
  const char **via;
  size_t n_refs_other;
  char **suggest;    /* close names when nothing matched */
  size_t n_suggest;
  /* The files of the hits that changed or went since they were ingested
   * (their lines may have moved; each such hit has stale = 1), as shown,
   * in path order. */
  char **stale;
  size_t n_stale;
} dq_xref_result;

/* Looks SYMBOL up. kind: NULL (all), "def", "ref" (every use) or "call".
 * When SYMBOL is neither defined nor used and reads as Owner.member (also
 * ::, #, -> or \\ between parts), looks up the member of that owner: its
 * definitions whose scope ends with the owner's parts, its uses whose site
 * shows that owner (xref_owner.c), then those whose owner it cannot tell.
 * An unknown symbol is not an error: the result is empty with suggestions
 * (for a qualified one: "Scope.member" for each scope that defines the
 * member). Free with dq_xref_result_clear. */
dq_status dq_xref_run(const char *index_dir, const char *symbol,
                      const char *kind, const dq_logger *log,
                      dq_xref_result *res, dq_error *err);
void dq_xref_result_clear(dq_xref_result *r);

/* --explain: the model's summary of how a symbol is used, from numbered
 * snippets (definitions first, then reference/call sites) that it cites as
 * [n]; only snippets in the prompt can be cited. */
typedef struct dq_xref_explain_opts {
  const char *model;       /* decoder GGUF */
  const char *backend;
  int n_threads;
  size_t max_sites;        /* reference/call sites besides the definitions;
                              0 = 8 (spread over files, first ones first) */
  int max_tokens;          /* explanation length; 0 = 192 */
  const dq_logger *log;
  dq_text_fn_pl on_text;   /* streams the explanation; may be NULL */
  void *user;
} dq_xref_explain_opts;

/* One snippet given to the model as [n], n = its index + 1. */
typedef struct dq_xref_snippet {
  const dq_xref_hit *hit;       /* points into the dq_xref_result explained:
                                   valid as long as that result is */
  int is_def;                   /* hit is one of its defs (else a ref) */
  int32_t line_start, line_end; /* the lines shown: hit->line's paragraph */
  int32_t page;                 /* PDFs: the page they are on (hit->line
                                   counts within it); 0 otherwise */
  int cited; /* 1: the explanation cites it as [n]; 2: it cites nothing and
                this snippet holds most of its key terms (inferred) */
} dq_xref_snippet;

typedef struct dq_xref_explanation {
  char *text;                /* never NULL on success; may be "" */
  dq_xref_snippet *snippets; /* every snippet the model read, prompt order */
  size_t n_snippets;
  const char *backend;       /* "cpu" / "cuda" (static) */
  int n_prompt_tokens, n_answer_tokens;
  double ms_context; /* reading the snippets' lines */
  double ms_load, ms_prefill, ms_generate, ms_total;
} dq_xref_explanation;

/* Explains the hits of `xr` (the result of dq_xref_run for `symbol`):
 * reads a few lines of context for the first 4 definitions and up to
 * max_sites references from the files (PDF and DOCX through their readers;
 * a hit whose line an earlier snippet shows is not repeated), keeps the
 * snippets that fit the model's context, and has the model summarise. A
 * result with no hits is DQ_ERR_NOTFOUND before any model is loaded; so is
 * one whose source files can no longer be read; DQ_ERR_LIMIT when no
 * snippet fits the context. Free with dq_xref_explanation_clear; `ex` must
 * not outlive `xr`. */
dq_status dq_xref_explain(const dq_xref_explain_opts *o, const char *symbol,
                          const dq_xref_result *xr, dq_xref_explanation *ex,
                          dq_error *err);
void dq_xref_explanation_clear(dq_xref_explanation *ex);

/* Longest source line xref shows (its output, --explain's snippets);
 * longer ones (minified code, generated tables) are cut around the site. */
#define DQ_XREF_LINE_BYTES 240
/* The part [*start, *end) of line s[0..n) to show: all of it when n <= max,
 * else max bytes from a third of max before byte pos (within the line), on
 * UTF-8 boundaries. */
void dq_line_window(const char *s, size_t n, size_t pos, size_t max,
                    size_t *start, size_t *end);

/* ---- Show (show.c) ------------------------------------------------------ */

/* A citation as docqa writes it (dq_where), parsed: "path:12-20",
 * "path:12", "path p.4", "path p.4:3-9", "path page 4", "path slide 3",
 * "path sheet 2 rows 14-20", "path sheet 2 row 15", after an answer's
 * "[n] " and before " (section)"; else a path alone. */
typedef struct dq_cite_ref {
  char path[4096];
  const char *unit;             /* "page", "slide", "sheet"; NULL: none */
  int32_t page;                 /* 0: none given */
  int32_t line_start, line_end; /* 0: none given */
} dq_cite_ref;
/* 0, or -1 for an empty or overlong text. */
int dq_cite_parse(const char *s, dq_cite_ref *c);

typedef struct dq_show_opts {
  const char *index_dir;
  int context; /* lines shown before and after lines cited (not around a
                  whole page or document) */
  int no_ocr;  /* as ingest's: leave scanned pages unread */
  const char *ocr_lang;
  int n_threads; /* pages read by OCR at once */
  const dq_logger *log;
} dq_show_opts;

typedef struct dq_show_line {
  int32_t page, line; /* as citations count them */
  int cited;          /* 1: a line the citation names; 0: around them */
  char *text;
} dq_show_line;

typedef struct dq_show_result {
  char *root, *path, *shown, *kind;   /* the document (shown: as in dq_hit) */
  const char *unit;                   /* dq_page_unit of kind (static) */
  int32_t page, line_start, line_end; /* as cited; 0: not given */
  char *section; /* the headings' path at the first line cited; "" none */
  int stale;     /* 1: the file changed since ingest (lines may have moved) */
  dq_show_line *lines;
  size_t n_lines;
} dq_show_result;

/* The lines `citation` names in a document of the index, read again from
 * the file by its ingest reader, with o->context lines around them.
 * DQ_ERR_NOTFOUND naming what is there when the document or the lines are
 * not; DQ_ERR_ARG for a folder of several documents, a page of an unpaged
 * document or lines of a paged one without their page. Free with
 * dq_show_result_free. */
dq_status dq_show_run(const dq_show_opts *o, const char *citation,
                      dq_show_result *r, dq_error *err);
void dq_show_result_free(dq_show_result *r);

/* Reads source lines for xref output, keeping the last file open so hits
 * sorted by path and line cost one pass per file; a PDF or DOCX is read
 * once through its ingest reader, its text kept while hits stay in it. */
typedef struct dq_line_reader dq_line_reader;
dq_line_reader *dq_line_reader_new(void);
/* The text of `line` (1-based) of root/path without its newline, or "" when
 * unavailable (file gone, unreadable, no such line). For a PDF, line
 * `line` of page `page` (its lines count within a page; page 0: the first
 * page that has the line), as its reader extracts it; for a DOCX, its
 * reader's line. Valid until the next call. */
const char *dq_line_reader_get(dq_line_reader *lr, const char *root,
                               const char *path, int page, int line);
void dq_line_reader_free(dq_line_reader *lr);

#ifdef __cplusplus
}
#endif
#endif /* DQ_PIPELINE_H */
