/*
 * cmd_bench_needle.c - `docqa bench needle`: how well coarse recall
 * (dq_model_recall: a GSM pass whose probe's attention scores the spans)
 * finds a needle sentence hidden in a long haystack of real text, against
 * BM25 ranking of the same spans with the same question, on the same trials
 * (needle.h says how a trial is built). Depths run evenly from 0% to 100%
 * of the haystack; each trial's passkey, colour and starting sentence come
 * from (--seed, length, depth, trial).
 *
 * Each method ranks the spans and the needle span's rank is reported (ties
 * count against it): gsm = dq_model_recall's probe score with the chosen
 * layers, heads and calibration; toq = its second output, the span's
 * attention to the pinned question (each token's relative to the tokens at
 * about its distance, --toq-detrend; the mean over the span's --toq-top
 * highest, default 4); both = dq_recall_combine of the two (default
 * weight); bm25 = the
 * question's words over the spans' text. Per length: hit@1, hit@3, mean reciprocal rank, and the
 * median time of one dq_model_recall call (with calibration: both passes).
 *
 * --sweep measures which layers and heads to read, at the cost of one pass
 * per trial (two with calibration) instead of one per choice: it runs the
 * same GSM pass as dq_model_recall through the public statistics API
 * (needle_layer_mass), keeps the mass of every layer and head, and ranks
 * the needle under each selection (all, lower half, middle third, upper
 * half, every single layer; raw and calibrated) and under every single
 * head. The gsm column then comes from those passes (the chosen selection),
 * toq is not available, and times are those of the passes.
 *
 * Not here: choosing the defaults (this measures; pipeline/ and docqa.yaml
 * hold what `docqa ask` uses), answer generation.
 */
#include "cli.h"
#include "engine.h"
#include "needle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LENGTHS 16
#define MAX_LENGTH (1 << 20)
#define MAX_DEPTHS 101
#define MAX_TRIALS 1000
#define MAX_HEADS 256
#define N_NAMED 4    /* all, lower, middle, upper */
#define TOP_HEADS 12 /* single heads listed by --sweep */
/* The content-free probe: the probe's own template with "N/A" for the
 * question, so that it shares the probe's length and position bias (a bare
 * " N/A" over-weights the span next to it: measured with --sweep, it ranked
 * a needle in the last span last). */
#define CALIB_DEFAULT " Question: N/A"

/* ---- arguments ---------------------------------------------------------------- */

typedef struct needle_args {
  int lengths[MAX_LENGTHS], n_lengths;
  int depths, span_tokens, trials, toq_top, toq_detrend;
  uint64_t seed;
  const char *layers; /* as given */
  int l0, l1;         /* resolved [l0, l1) */
  int heads[MAX_HEADS], n_heads;
  const char *calib_text; /* NULL = no calibration */
  int sweep;              /* --sweep */
  int scores;             /* --scores: per-span scores in the JSON runs */
  int token_scores;       /* --token-scores: per-token ones */
} needle_args;

static int parse_args(const dq_cli *cli, const cli_option *opts,
                      needle_args *a) {
  static const int def[] = {2048, 4096, 8192};
  memset(a, 0, sizeof *a);
  memcpy(a->lengths, def, sizeof def);
  a->n_lengths = 3;
  a->depths = 10;
  a->span_tokens = 128;
  a->toq_top = -1; /* dq_recall_opts_init's */
  a->toq_detrend = -1;
  a->trials = 1;
  a->seed = 1;
  a->layers = "all";
  const char *v;
  long x;
  if ((v = cli_opt(opts, "lengths")) &&
      (a->n_lengths = cli_bench_lengths(cli, v, a->lengths, MAX_LENGTHS, 256,
                                        MAX_LENGTH)) < 0)
    return -1;
  if ((v = cli_opt(opts, "depths"))) {
    if ((x = cli_parse_count(cli, "depths", v, 1, MAX_DEPTHS)) < 0)
      return -1;
    a->depths = (int)x;
  }
  if ((v = cli_opt(opts, "toq-top"))) {
    if ((x = cli_parse_count(cli, "toq-top", v, 0, 65536)) < 0)
      return -1;
    a->toq_top = (int)x;
  }
  if ((v = cli_opt(opts, "toq-detrend"))) {
    if ((x = cli_parse_count(cli, "toq-detrend", v, 0, 1)) < 0)
      return -1;
    a->toq_detrend = (int)x;
  }
  if ((v = cli_opt(opts, "span-tokens"))) {
    if ((x = cli_parse_count(cli, "span-tokens", v, 8, 65536)) < 0)
      return -1;
    a->span_tokens = (int)x;
  }
  if ((v = cli_opt(opts, "trials"))) {
    if ((x = cli_parse_count(cli, "trials", v, 1, MAX_TRIALS)) < 0)
      return -1;
    a->trials = (int)x;
  }
  if ((v = cli_opt(opts, "seed"))) {
    if ((x = cli_parse_count(cli, "seed", v, 0, 2147483647L)) < 0)
      return -1;
    a->seed = (uint64_t)x;
  }
  if ((v = cli_opt(opts, "layers")))
    a->layers = v;
  if ((v = cli_opt(opts, "heads"))) {
    const char *p = v;
    for (;;) {
      char *end = NULL;
      long h = strtol(p, &end, 10);
      if (end == p || h < 0 || h >= MAX_HEADS || (*end && *end != ',') ||
          a->n_heads >= MAX_HEADS) {
        cli_error(cli, "--heads must be a comma-separated list of query head "
                  "numbers (from 0), not '%s'", v);
        return -1;
      }
      a->heads[a->n_heads++] = (int)h;
      if (!*end)
        break;
      p = end + 1;
    }
  }
  if (cli_opt(opts, "calib"))
    a->calib_text = CALIB_DEFAULT;
  if ((v = cli_opt(opts, "calib-text"))) {
    if (!*v) {
      cli_error(cli, "--calib-text must not be empty");
      return -1;
    }
    a->calib_text = v;
  }
  a->sweep = cli_opt(opts, "sweep") != NULL;
  a->scores = cli_opt(opts, "scores") != NULL;
  a->token_scores = cli_opt(opts, "token-scores") != NULL;
  if (a->token_scores && a->sweep) {
    cli_error(cli, "--token-scores and --sweep exclude each other");
    return -1;
  }
  return 0;
}

/* Resolves --layers against the model's layer count. */
static int resolve_layers(const dq_cli *cli, needle_args *a, int n_layer) {
  const char *v = a->layers;
  if (strcmp(v, "all") == 0) {
    a->l0 = 0;
    a->l1 = n_layer;
  } else if (strcmp(v, "lower") == 0) {
    a->l0 = 0;
    a->l1 = n_layer / 2;
  } else if (strcmp(v, "middle") == 0) {
    a->l0 = n_layer / 3;
    a->l1 = 2 * n_layer / 3;
  } else if (strcmp(v, "upper") == 0) {
    a->l0 = n_layer / 2;
    a->l1 = n_layer;
  } else {
    char *end = NULL;
    long l0 = strtol(v, &end, 10), l1 = -1;
    if (end != v && *end == ':') {
      const char *p = end + 1;
      l1 = strtol(p, &end, 10);
      if (end == p || *end)
        l1 = -1;
    }
    if (l1 < 0 || l0 < 0 || l1 <= l0 || l1 > n_layer) {
      cli_error(cli, "--layers must be A:B with 0 <= A < B <= %d (this "
                "model's layers), or all, lower, middle, upper; not '%s'",
                n_layer, v);
      return -1;
    }
    a->l0 = (int)l0;
    a->l1 = (int)l1;
  }
  if (a->l1 <= a->l0) {
    cli_error(cli, "--layers %s selects no layer of this %d-layer model", v,
              n_layer);
    return -1;
  }
  return 0;
}

/* --token-scores: dq_model_recall over one-token spans covering the
 * haystack, added up into the span scores as recall.c does (the probe mass
 * is a sum over tokens; toq the mean of the toq_top highest, or of all);
 * *js gets {"first": haystack start, "spans": [[begin, end], ...] from it,
 * "gsm": [...], "toq": [...]} per token (toq detrended or not as ro says). */
static int token_recall(dq_model *m, const needle_trial *t,
                        const dq_recall_opts *ro, float *ps, float *tq,
                        json_t **js) {
  int b0 = t->spans[0].begin, nt = t->spans[t->n_spans - 1].end - b0;
  dq_span *sp = malloc((size_t)nt * sizeof *sp);
  float *tp = malloc((size_t)nt * 3 * sizeof *tp), *tt = NULL, *c = NULL;
  int rc = -2; /* -2: out of memory, -1: the recall call failed */
  if (!sp || !tp)
    goto done;
  tt = tp + nt;
  c = tp + 2 * (size_t)nt;
  rc = -1;
  for (int i = 0; i < nt; i++)
    sp[i] = (dq_span){b0 + i, b0 + i + 1};
  if (dq_model_recall(m, t->tok, t->n, sp, nt, t->q, t->probe, ro, tp, tt))
    goto done;
  for (int i = 0; i < t->n_spans; i++) {
    int lo = t->spans[i].begin - b0, len = t->spans[i].end - t->spans[i].begin;
    int k = ro->toq_top > 0 && ro->toq_top < len ? ro->toq_top : len;
    double a = 0, q = 0;
    for (int j = 0; j < len; j++) {
      a += tp[lo + j];
      c[j] = tt[lo + j];
    }
    for (int r = 0; r < k; r++) { /* the k highest, selection as recall.c */
      int best = r;
      for (int j = r + 1; j < len; j++)
        if (c[j] > c[best])
          best = j;
      float x = c[r];
      c[r] = c[best];
      c[best] = x;
      q += c[r];
    }
    ps[i] = (float)a;
    tq[i] = len ? (float)(q / k) : 0;
  }
  json_t *o = json_object(), *jsp = json_array(), *jg = json_array(),
         *jq = json_array();
  for (int i = 0; i < t->n_spans; i++)
    json_array_append_new(jsp, json_pack("[ii]", t->spans[i].begin - b0,
                                         t->spans[i].end - b0));
  for (int i = 0; i < nt; i++) {
    json_array_append_new(jg, json_real(tp[i]));
    json_array_append_new(jq, json_real(tt[i]));
  }
  json_object_set_new(o, "first", json_integer(b0));
  json_object_set_new(o, "spans", jsp);
  json_object_set_new(o, "gsm", jg);
  json_object_set_new(o, "toq", jq);
  *js = o;
  rc = 0;
done:
  free(sp);
  free(tp);
  return rc;
}

/* ---- the command ----------------------------------------------------------- */

enum { M_GSM, M_TOQ, M_BOTH, M_BM25, N_METHODS };
static const char *const method_names[N_METHODS] = {"gsm", "toq", "both",
                                                    "bm25"};

typedef struct tally {
  int n, hit1, hit3;
  double rr; /* sum of 1 / rank */
} tally;

static void tally_add(tally *y, int rank) {
  y->n++;
  y->hit1 += rank == 1;
  y->hit3 += rank <= 3;
  y->rr += 1.0 / rank;
}

static json_t *tally_json(const tally *y) {
  double n = y->n ? y->n : 1;
  return json_pack("{s:i, s:f, s:f, s:f}", "n", y->n, "hit1", y->hit1 / n,
                   "hit3", y->hit3 / n, "mrr", y->rr / n);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Layer range of sweep selection k: N_NAMED named ones, then layer by
 * layer. */
static void selection(int k, int n_layer, int *l0, int *l1, char *name,
                      size_t name_bytes) {
  static const char *const names[N_NAMED] = {"all", "lower", "middle",
                                             "upper"};
  if (k < N_NAMED) {
    snprintf(name, name_bytes, "%s", names[k]);
    *l0 = k == 0 ? 0 : k == 1 ? 0 : k == 2 ? n_layer / 3 : n_layer / 2;
    *l1 = k == 0 ? n_layer : k == 1 ? n_layer / 2 : k == 2 ? 2 * n_layer / 3
                                                          : n_layer;
  } else {
    *l0 = k - N_NAMED;
    *l1 = *l0 + 1;
    snprintf(name, name_bytes, "%d:%d", *l0, *l1);
  }
}

/* Mean over layers [l0, l1) and `heads` (NULL = all) of the sweep mass,
 * minus the calibration pass's when cal is non-NULL: dq_model_recall's
 * probe score for that selection. */
static void sweep_score(const float *mass, const float *cal, int n_head,
                        int n_spans, int l0, int l1, const int *heads,
                        int n_heads, float *score) {
  int nh = heads ? n_heads : n_head;
  for (int i = 0; i < n_spans; i++) {
    double a = 0;
    for (int l = l0; l < l1; l++)
      for (int hi = 0; hi < nh; hi++) {
        size_t at = ((size_t)l * n_head + (heads ? heads[hi] : hi)) * n_spans;
        a += mass[at + i] - (cal ? cal[at + i] : 0);
      }
    score[i] = (float)(a / ((double)(l1 - l0) * nh));
  }
}

typedef struct head_rank {
  int layer, head, calib;
  const tally *y;
} head_rank;

static int cmp_head(const void *x, const void *y) {
  const head_rank *a = x, *b = y;
  if (a->y->hit1 != b->y->hit1)
    return b->y->hit1 - a->y->hit1;
  return (b->y->rr > a->y->rr) - (b->y->rr < a->y->rr);
}

/* The --sweep report: selections per length, then the best single heads
 * over all lengths. sel: [n_lengths][n_sel][2], head: [n_lh][2] summed. */
static json_t *sweep_report(const dq_cli *cli, const needle_args *a,
                            int n_layer, int n_head, const tally *sel,
                            int n_sel, const tally *head) {
  json_t *js = json_array();
  if (!cli->json) {
    printf("\nsweep: hit@1 hit@3 MRR of the probe score per layer selection "
           "(cal: minus the '%s' probe's)\n%-8s %-3s", a->calib_text, "layers",
           "cal");
    for (int li = 0; li < a->n_lengths; li++)
      printf(" | %7d: hit@1 hit@3   MRR", a->lengths[li]);
    printf("\n");
  }
  for (int k = 0; k < n_sel; k++)
    for (int c = 0; c < 2; c++) {
      char name[32];
      int l0, l1;
      selection(k, n_layer, &l0, &l1, name, sizeof name);
      json_t *per = json_array();
      if (!cli->json)
        printf("%-8s %-3s", name, c ? "yes" : "no");
      for (int li = 0; li < a->n_lengths; li++) {
        const tally *y = &sel[((size_t)li * n_sel + k) * 2 + c];
        json_t *o = tally_json(y);
        json_object_set_new(o, "length", json_integer(a->lengths[li]));
        json_array_append_new(per, o);
        if (!cli->json) {
          double n = y->n ? y->n : 1;
          printf(" | %7s  %5.2f %5.2f %5.2f", "", y->hit1 / n, y->hit3 / n,
                 y->rr / n);
        }
      }
      if (!cli->json)
        printf("\n");
      json_array_append_new(
          js, json_pack("{s:s, s:[ii], s:b, s:o}", "name", name, "layers", l0,
                        l1, "calib", c, "per_length", per));
    }
  /* single heads, pooled over lengths */
  int n_lh = n_layer * n_head;
  head_rank *hr = malloc((size_t)n_lh * 2 * sizeof *hr);
  json_t *jh = json_array();
  if (hr) {
    for (int i = 0; i < n_lh * 2; i++)
      hr[i] = (head_rank){i / 2 / n_head, i / 2 % n_head, i % 2, &head[i]};
    qsort(hr, (size_t)n_lh * 2, sizeof *hr, cmp_head);
    if (!cli->json)
      printf("\nbest single heads (all lengths pooled):\n%-8s %-3s %5s %5s "
             "%5s\n", "layer.h", "cal", "hit@1", "hit@3", "MRR");
    for (int i = 0; i < TOP_HEADS && i < n_lh * 2; i++) {
      const tally *y = hr[i].y;
      double n = y->n ? y->n : 1;
      json_t *o = tally_json(y);
      json_object_set_new(o, "layer", json_integer(hr[i].layer));
      json_object_set_new(o, "head", json_integer(hr[i].head));
      json_object_set_new(o, "calib", json_boolean(hr[i].calib));
      json_array_append_new(jh, o);
      if (!cli->json)
        printf("%3d.%-4d %-3s %5.2f %5.2f %5.2f\n", hr[i].layer, hr[i].head,
               hr[i].calib ? "yes" : "no", y->hit1 / n, y->hit3 / n,
               y->rr / n);
    }
    free(hr);
  }
  return json_pack("{s:s, s:o, s:o}", "calib_text", a->calib_text,
                   "selections", js, "best_heads", jh);
}

int cli_bench_needle(dq_cli *cli, cli_option *opts) {
  needle_args a;
  if (parse_args(cli, opts, &a))
    return DQ_EXIT_USAGE;
  if (a.sweep && !a.calib_text)
    a.calib_text = CALIB_DEFAULT; /* the sweep ranks raw and calibrated */
  dq_recall_opts ro;
  dq_recall_opts_init(&ro);
  int rc = cli_bench_gsm_opts(cli, &ro.gsm);
  if (rc != DQ_EXIT_OK)
    return rc;
  json_t *files = NULL;
  size_t text_len = 0;
  char *text = cli_bench_text(cli, opts, &text_len, &files);
  if (!text)
    return DQ_EXIT_USAGE;
  char path[4096];
  dq_model *m = NULL;
  needle_corpus c = {0};
  needle_trial t = {0};
  int32_t *calib = NULL;
  float *ps = NULL, *tq = NULL, *bs = NULL, *mass = NULL, *cmass = NULL;
  float *xs = NULL; /* spans: dq_recall_combine's */
  json_t *tok_json = NULL; /* --token-scores of the current run */
  char **span_text = NULL;
  int span_cap = 0, n_txt = 0;
  double *times = NULL;
  json_t *jruns = NULL, *jsum = NULL;
  cli_progress *prog = NULL;
  dq_error err = {0};
  tally *tal = NULL, *sel = NULL, *head = NULL;
  rc = cli_bench_open(cli, opts, 1, path, sizeof path, &m);
  if (rc != DQ_EXIT_OK)
    goto done;
  rc = DQ_EXIT_USAGE;
  dq_model_info info;
  dq_model_get_info(m, &info);
  if (resolve_layers(cli, &a, info.n_layer))
    goto done;
  for (int i = 0; i < a.n_heads; i++)
    if (a.heads[i] >= info.n_head) {
      cli_error(cli, "--heads: head %d outside this model's %d query heads",
                a.heads[i], info.n_head);
      goto done;
    }
  rc = DQ_EXIT_ERROR;
  ro.layer_begin = a.l0;
  if (a.toq_top >= 0)
    ro.toq_top = a.toq_top;
  if (a.toq_detrend >= 0)
    ro.toq_detrend = a.toq_detrend;
  ro.layer_end = a.l1;
  if (a.n_heads) {
    ro.heads = a.heads;
    ro.n_heads = a.n_heads;
  }
  int n_calib = 0;
  if (a.calib_text) {
    if (dq_model_tokenize(m, a.calib_text, strlen(a.calib_text), 0, &calib,
                          &n_calib) ||
        n_calib == 0) {
      cli_error(cli, "--calib-text '%s' yields no tokens", a.calib_text);
      rc = DQ_EXIT_USAGE;
      goto done;
    }
    if (!a.sweep || cli_opt(opts, "calib") || cli_opt(opts, "calib-text")) {
      ro.calib_probe = calib;
      ro.n_calib = n_calib;
    }
  }
  if (needle_corpus_build(m, text, text_len, &c, &err)) {
    rc = cli_fail(cli, &err);
    goto done;
  }
  int n_total = a.n_lengths * a.depths * a.trials;
  int n_sel = N_NAMED + info.n_layer, n_lh = info.n_layer * info.n_head;
  times = calloc((size_t)n_total, sizeof *times);
  tal = calloc((size_t)a.n_lengths * N_METHODS, sizeof *tal);
  sel = calloc((size_t)a.n_lengths * n_sel * 2, sizeof *sel);
  head = calloc((size_t)n_lh * 2, sizeof *head);
  jruns = json_array();
  if (!times || !tal || !sel || !head || !jruns) {
    cli_error(cli, "out of memory");
    goto done;
  }
  if (!cli->json) {
    printf("model: %s (%s, %d layers x %d heads), %d threads, CPU\n", path,
           info.arch, info.n_layer, info.n_head, cli->threads);
    printf("text: %zu files, %d sentences (%d tokens); spans of >= %d "
           "tokens\n",
           json_array_size(files), c.n, c.off[c.n], a.span_tokens);
    char line[256];
    printf("recall%s: layers [%d, %d), %s heads, calibration %s%s%s\nGSM "
           "(question pinned, from the first token): %s\n",
           a.sweep ? " (sweep passes)" : "", a.l0, a.l1,
           a.n_heads ? "chosen" : "all", ro.calib_probe ? "'" : "off",
           ro.calib_probe ? a.calib_text : "", ro.calib_probe ? "'" : "",
           cli_bench_gsm_line(&ro.gsm, line, sizeof line));
    printf("%7s %6s %6s |", "tokens", "depth", "spans");
    for (int k = 0; k < N_METHODS; k++)
      printf(" %6s", method_names[k]);
    printf(" | %9s\n", "ms");
    fflush(stdout);
  }
  prog = cli_progress_new(cli);
  int done_n = 0;
  for (int li = 0; li < a.n_lengths; li++) {
    int L = a.lengths[li];
    if (L > info.n_ctx_train)
      dq_log(&cli->log, DQ_LOG_INFO,
             "%d tokens exceed the model's trained context of %d", L,
             info.n_ctx_train);
    for (int d = 0; d < a.depths; d++) {
      double f = a.depths > 1 ? (double)d / (a.depths - 1) : 0.5;
      double rank_sum[N_METHODS] = {0}, ms_sum = 0;
      int n_sp = 0;
      for (int tr = 0; tr < a.trials; tr++) {
        char stage[64];
        snprintf(stage, sizeof stage, "%d tokens, depth %.0f%%", L, f * 100);
        cli_progress_cb(prog, stage, (uint64_t)done_n, (uint64_t)n_total,
                        "trials");
        uint64_t seed = a.seed * 0x100000001b3u ^
                        ((uint64_t)L << 32 | (uint64_t)d << 16 | (uint64_t)tr);
        if (needle_trial_make(m, &c, L, f, a.span_tokens, seed, &t, &err)) {
          rc = cli_fail(cli, &err);
          goto done;
        }
        int ns = t.n_spans;
        if (ns > span_cap) {
          float *p1 = realloc(ps, (size_t)ns * sizeof *ps);
          ps = p1 ? p1 : ps;
          float *p2 = realloc(tq, (size_t)ns * sizeof *tq);
          tq = p2 ? p2 : tq;
          float *p3 = realloc(bs, (size_t)ns * sizeof *bs);
          bs = p3 ? p3 : bs;
          float *p7 = realloc(xs, (size_t)ns * sizeof *xs);
          xs = p7 ? p7 : xs;
          char **p4 = realloc(span_text, (size_t)ns * sizeof *p4);
          span_text = p4 ? p4 : span_text;
          float *p5 = a.sweep ? realloc(mass, (size_t)n_lh * ns * sizeof *p5)
                              : mass;
          mass = p5 ? p5 : mass;
          float *p6 = a.sweep ? realloc(cmass, (size_t)n_lh * ns * sizeof *p6)
                              : cmass;
          cmass = p6 ? p6 : cmass;
          if (!p1 || !p2 || !p3 || !p4 || !p7 || (a.sweep && (!p5 || !p6))) {
            cli_error(cli, "out of memory");
            goto done;
          }
          span_cap = ns;
        }
        int rank[N_METHODS] = {0};
        double t0 = dq_now_ms();
        if (a.sweep) {
          if (needle_layer_mass(m, &t, NULL, 0, &ro.gsm, mass, &err) ||
              needle_layer_mass(m, &t, calib, n_calib, &ro.gsm, cmass, &err)) {
            rc = cli_fail(cli, &err);
            goto done;
          }
          for (int k = 0; k < n_sel; k++) {
            int l0, l1;
            char name[32];
            selection(k, info.n_layer, &l0, &l1, name, sizeof name);
            for (int cc = 0; cc < 2; cc++) {
              sweep_score(mass, cc ? cmass : NULL, info.n_head, ns, l0, l1,
                          NULL, 0, ps);
              tally_add(&sel[((size_t)li * n_sel + k) * 2 + cc],
                        needle_rank(ps, ns, t.needle_span));
            }
          }
          for (int lh = 0; lh < n_lh; lh++)
            for (int cc = 0; cc < 2; cc++) {
              int hh = lh % info.n_head, ll = lh / info.n_head;
              sweep_score(mass, cc ? cmass : NULL, info.n_head, ns, ll, ll + 1,
                          &hh, 1, ps);
              tally_add(&head[(size_t)lh * 2 + cc],
                        needle_rank(ps, ns, t.needle_span));
            }
          /* the chosen selection, for the gsm column */
          sweep_score(mass, ro.calib_probe ? cmass : NULL, info.n_head, ns,
                      a.l0, a.l1, a.n_heads ? a.heads : NULL, a.n_heads, ps);
        } else if (a.token_scores) {
          int r = token_recall(m, &t, &ro, ps, tq, &tok_json);
          if (r) {
            cli_error(cli, "%s", r == -2 ? "out of memory" : dq_model_errmsg(m));
            goto done;
          }
        } else if (dq_model_recall(m, t.tok, t.n, t.spans, ns, t.q, t.probe,
                                   &ro, ps, tq)) {
          cli_error(cli, "%s", dq_model_errmsg(m));
          goto done;
        }
        double ms = dq_now_ms() - t0;
        for (n_txt = 0; n_txt < ns; n_txt++)
          if (dq_model_detokenize(m, t.tok + t.spans[n_txt].begin,
                                  t.spans[n_txt].end - t.spans[n_txt].begin,
                                  &span_text[n_txt])) {
            cli_error(cli, "detokenizing: %s", dq_model_errmsg(m));
            goto done;
          }
        needle_bm25(t.question, span_text, ns, bs);
        for (; n_txt > 0; n_txt--)
          free(span_text[n_txt - 1]);
        rank[M_GSM] = needle_rank(ps, ns, t.needle_span);
        if (!a.sweep) {
          rank[M_TOQ] = needle_rank(tq, ns, t.needle_span);
          if (dq_recall_combine(ps, tq, ns, DQ_RECALL_PROBE_WEIGHT, xs)) {
            cli_error(cli, "out of memory");
            goto done;
          }
          rank[M_BOTH] = needle_rank(xs, ns, t.needle_span);
        }
        rank[M_BM25] = needle_rank(bs, ns, t.needle_span);
        for (int k = 0; k < N_METHODS; k++)
          if (rank[k]) {
            tally_add(&tal[(size_t)li * N_METHODS + k], rank[k]);
            rank_sum[k] += rank[k];
          }
        times[done_n] = ms;
        ms_sum += ms;
        n_sp = ns;
        json_t *jr = json_pack(
            "{s:i, s:f, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f}", "length", L,
            "depth", f, "trial", tr, "passkey", t.key, "n_tokens", t.n,
            "n_spans", ns, "needle_span", t.needle_span, "gsm_rank",
            rank[M_GSM], "bm25_rank", rank[M_BM25], "ms", ms);
        for (int k = M_TOQ; k <= M_BOTH; k++) {
          char key[32];
          snprintf(key, sizeof key, "%s_rank", method_names[k]);
          json_object_set_new(jr, key,
                              rank[k] ? json_integer(rank[k]) : json_null());
        }
        if (a.scores) {
          /* --sweep computes no toq */
          json_t *js = json_object(), *jg = json_array(),
                 *jq = a.sweep ? json_null() : json_array();
          for (int i = 0; i < ns; i++) {
            json_array_append_new(jg, json_real(ps[i]));
            if (!a.sweep)
              json_array_append_new(jq, json_real(tq[i]));
          }
          json_object_set_new(js, "gsm", jg);
          json_object_set_new(js, "toq", jq);
          json_object_set_new(jr, "scores", js);
        }
        if (tok_json) {
          json_object_set_new(jr, "token_scores", tok_json);
          tok_json = NULL;
        }
        json_array_append_new(jruns, jr);
        dq_log(&cli->log, DQ_LOG_INFO,
               "%d tokens, depth %.0f%%, trial %d: needle span %d of %d, "
               "rank gsm %d toq %d both %d bm25 %d, %.0f ms",
               L, f * 100, tr, t.needle_span, ns, rank[M_GSM], rank[M_TOQ],
               rank[M_BOTH], rank[M_BM25], ms);
        needle_trial_free(&t);
        done_n++;
      }
      if (!cli->json) {
        printf("%7d %5.0f%% %6d |", L, f * 100, n_sp);
        for (int k = 0; k < N_METHODS; k++)
          if (a.sweep && k >= M_TOQ && k <= M_BOTH)
            printf(" %6s", "-");
          else
            printf(" %6.1f", rank_sum[k] / a.trials);
        printf(" | %9.0f\n", ms_sum / a.trials);
        fflush(stdout);
      }
    }
  }
  cli_progress_free(prog);
  prog = NULL;
  jsum = json_array();
  if (!cli->json) {
    printf("\n%7s %6s |", "", "");
    for (int k = 0; k < N_METHODS; k++)
      printf(" %-17s |", method_names[k]);
    printf(" %9s\n%7s %6s |", "", "tokens", "trials");
    for (int k = 0; k < N_METHODS; k++)
      printf(" %5s %5s %5s |", "hit@1", "hit@3", "MRR");
    printf(" %9s\n", "ms median");
  }
  int per = a.depths * a.trials;
  for (int li = 0; li < a.n_lengths; li++) {
    double *tt = times + (size_t)li * per;
    qsort(tt, (size_t)per, sizeof *tt, cmp_double);
    double med = per % 2 ? tt[per / 2] : 0.5 * (tt[per / 2 - 1] + tt[per / 2]);
    json_t *o = json_object();
    json_object_set_new(o, "length", json_integer(a.lengths[li]));
    if (!cli->json)
      printf("%7d %6d |", a.lengths[li], per);
    for (int k = 0; k < N_METHODS; k++) {
      const tally *y = &tal[(size_t)li * N_METHODS + k];
      json_object_set_new(o, method_names[k],
                          y->n ? tally_json(y) : json_null());
      if (cli->json)
        continue;
      if (y->n)
        printf(" %5.2f %5.2f %5.2f |", (double)y->hit1 / y->n,
               (double)y->hit3 / y->n, y->rr / y->n);
      else
        printf(" %5s %5s %5s |", "-", "-", "-");
    }
    json_object_set_new(o, "ms_median", json_real(med));
    json_array_append_new(jsum, o);
    if (!cli->json)
      printf(" %9.0f\n", med);
  }
  if (!cli->json)
    printf("rank of the needle's span among the spans (ties count against); "
           "gsm: probe attention,\ntoq: the span's attention to the question "
           "(relative to the text at its distance), both: the two's robust\n"
           "z-scores added, bm25: the question's words; MRR: mean 1/rank; "
           "ms: per %s.\n",
           a.sweep ? "trial (sweep passes)" : "dq_model_recall call");
  json_t *jsweep = a.sweep ? sweep_report(cli, &a, info.n_layer, info.n_head,
                                          sel, n_sel, head)
                           : NULL;
  if (cli->json) {
    json_t *heads = json_array();
    for (int i = 0; i < a.n_heads; i++)
      json_array_append_new(heads, json_integer(a.heads[i]));
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(path));
    json_object_set_new(o, "arch", json_string(info.arch));
    json_object_set_new(o, "threads", json_integer(cli->threads));
    json_object_set_new(o, "n_layer", json_integer(info.n_layer));
    json_object_set_new(o, "n_head", json_integer(info.n_head));
    json_object_set_new(o, "text_files", files);
    files = NULL;
    json_object_set_new(o, "sentences", json_integer(c.n));
    json_object_set_new(o, "span_tokens", json_integer(a.span_tokens));
    json_object_set_new(o, "toq_top", json_integer(ro.toq_top));
    json_object_set_new(o, "toq_detrend", json_integer(ro.toq_detrend));
    json_object_set_new(o, "depths", json_integer(a.depths));
    json_object_set_new(o, "trials", json_integer(a.trials));
    json_object_set_new(o, "seed", json_integer((json_int_t)a.seed));
    json_object_set_new(o, "layers", json_pack("[ii]", a.l0, a.l1));
    json_object_set_new(o, "heads", a.n_heads ? heads : json_null());
    if (!a.n_heads)
      json_decref(heads);
    json_object_set_new(o, "calib", ro.calib_probe ? json_string(a.calib_text)
                                                   : json_null());
    json_object_set_new(o, "gsm_opts", cli_bench_gsm_json(&ro.gsm));
    json_object_set_new(o, "runs", jruns);
    jruns = NULL;
    json_object_set_new(o, "summary", jsum);
    jsum = NULL;
    json_object_set_new(o, "sweep", jsweep ? jsweep : json_null());
    cli_json_print(o);
  } else {
    json_decref(jsweep);
  }
  rc = DQ_EXIT_OK;
done:
  cli_progress_free(prog);
  for (; n_txt > 0; n_txt--)
    free(span_text[n_txt - 1]);
  needle_trial_free(&t);
  json_decref(jruns);
  json_decref(tok_json);
  json_decref(jsum);
  json_decref(files);
  free(tal);
  free(sel);
  free(head);
  free(times);
  free(ps);
  free(tq);
  free(xs);
  free(bs);
  free(mass);
  free(cmass);
  free(span_text);
  free(calib);
  needle_corpus_free(&c);
  free(text);
  dq_model_free(m);
  return rc;
}
