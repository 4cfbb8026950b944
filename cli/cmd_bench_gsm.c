/*
 * cmd_bench_gsm.c - `docqa bench gsm`: GSM sparse attention against our
 * full attention, in the same run, on the first L tokens of a long real
 * text, at several lengths L. Per length and path it measures
 *
 *   prefill   one dq_seq_eval of L tokens into a fresh sequence (last-token
 *             logits); ms/token = time / L. One small untimed eval before
 *             the first length pages the weights in.
 *   decode    --decode single-token evals right after that prefill, on the
 *             text's next tokens (teacher forcing: speed does not depend on
 *             which tokens), i.e. decode speed at depth L.
 *   KV bytes  after the prefill. Full: n_layer x L positions x (K + V) rows
 *             of the cache type, what dq_seq_new allocates for L positions.
 *             GSM: dq_seq_gsm_stats' retained rows (cache_bytes) and
 *             allocated rows (cache_bytes_alloc, what it actually holds).
 *   ppl       a second, untimed pass over the same L tokens in evals of
 *             --ppl-chunk tokens with every row of logits kept; the mean of
 *             -log p(token i+1 | tokens <= i) over the L - 1 predictions,
 *             exponentiated. The GSM sequence starts on full attention and
 *             moves to GSM at min_tokens, as it would in use.
 *
 * GSM runs with the options of docqa.yaml (defaults, --config, --set). Full attention is skipped above --full-max tokens; past
 * the model's trained context it still runs, to show how it degrades.
 *
 * Also here: the helpers `bench needle` shares (the text, the model, the
 * lengths). Not here: llama.cpp (tests/bench/gsm/llama_gsm.py, joined by
 * scripts/bench-gsm.sh), recall quality (cmd_bench_needle.c).
 */
#include "cli.h"
#include "engine.h"
#include "pipeline.h" /* dq_config: the GSM options of docqa.yaml */

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_LENGTHS 16
#define MAX_LENGTH (1 << 20)          /* tokens */
#define MAX_TEXT_BYTES (256u << 20)   /* one --text file */
#define LICENSE_DIR "/usr/share/common-licenses"
#define WARMUP_TOKENS 64

/* ---- helpers shared with cmd_bench_needle.c ------------------------------ */

static const char *const mode_names[] = {"fixed", "dynamic", "hybrid"};
static const char *const strategy_names[] = {"score", "time_decay",
                                             "similarity"};

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of LICENSE_DIR, sorted (symbolic links skipped: they
 * only repeat files already listed). */
static char **license_files(int *n_out) {
  *n_out = 0;
  DIR *d = opendir(LICENSE_DIR);
  if (!d)
    return NULL;
  char **v = NULL;
  int n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.')
      continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", LICENSE_DIR, de->d_name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 32;
      char **nv = realloc(v, (size_t)cap * sizeof *nv);
      if (!nv)
        break;
      v = nv;
    }
    if (!(v[n] = strdup(path)))
      break;
    n++;
  }
  closedir(d);
  if (v)
    qsort(v, (size_t)n, sizeof *v, cmp_str);
  *n_out = n;
  return v;
}

char *cli_bench_text(const dq_cli *cli, const cli_option *opts, size_t *len,
                     json_t **files) {
  const cli_option *t = NULL;
  for (const cli_option *o = opts; o->name; o++)
    if (strcmp(o->name, "text") == 0)
      t = o;
  char **def = NULL;
  int n_def = 0;
  const char *const *paths;
  int n_paths;
  if (t && t->n_repeat > 0) {
    paths = t->repeat;
    n_paths = t->n_repeat;
  } else {
    def = license_files(&n_def);
    if (n_def == 0) {
      cli_error(cli, "%s holds no readable files; pass the text with --text "
                "FILE", LICENSE_DIR);
      free(def);
      return NULL;
    }
    paths = (const char *const *)def;
    n_paths = n_def;
  }
  dq_strbuf b = {0};
  *files = json_array();
  int ok = 1;
  for (int i = 0; i < n_paths && ok; i++) {
    char *buf = NULL;
    size_t n = 0;
    dq_error err = {0};
    if (dq_read_file(paths[i], MAX_TEXT_BYTES, &buf, &n, &err)) {
      cli_error(cli, "--text: %s", dq_error_msg(&err));
      ok = 0;
      break;
    }
    dq_strbuf_add(&b, buf, n);
    json_array_append_new(*files, json_string(paths[i]));
    free(buf);
  }
  for (int i = 0; i < n_def; i++)
    free(def[i]);
  free(def);
  if (ok && b.oom) {
    cli_error(cli, "out of memory reading the text");
    ok = 0;
  }
  if (ok && b.n == 0) {
    cli_error(cli, "the text is empty");
    ok = 0;
  }
  if (!ok) {
    free(b.p);
    json_decref(*files);
    *files = NULL;
    return NULL;
  }
  *len = b.n;
  return b.p;
}

int cli_bench_open(dq_cli *cli, const cli_option *opts, int cpu_only,
                   char *path_buf, size_t path_buf_bytes, dq_model **out) {
  *out = NULL;
  if (cpu_only && strcmp(cli->backend, "cuda") == 0) {
    cli_error(cli, "bench %s runs on the CPU backend only (it reads GSM's "
              "attention statistics, which GSM keeps on the host)",
              cli->args[0]);
    return DQ_EXIT_USAGE;
  }
  if (cli->model)
    snprintf(path_buf, path_buf_bytes, "%s", cli->model);
  else
    cli_default_model(path_buf, path_buf_bytes);
  dq_model_opts mo;
  dq_model_opts_init(&mo);
  mo.backend = cpu_only ? DQ_BACKEND_CPU
                        : (dq_backend_kind)cli_backend_kind(cli);
  mo.n_threads = cli->threads;
  mo.log = &cli->log;
  const char *v = cli_opt(opts, "kv-type");
  if (v) {
    int t;
    if (cli_parse_kv_type(cli, v, &t, NULL))
      return DQ_EXIT_USAGE;
    mo.kv_type = (dq_kv_type)t;
  }
  dq_error err = {0};
  if (dq_model_open(path_buf, &mo, out, &err))
    return cli_fail(cli, &err);
  dq_model_info info;
  dq_model_get_info(*out, &info);
  if (info.is_encoder) {
    cli_error(cli, "%s: bench %s needs a decoder model, this is %s", path_buf,
              cli->args[0], info.arch);
    dq_model_free(*out);
    *out = NULL;
    return DQ_EXIT_USAGE;
  }
  return DQ_EXIT_OK;
}

int cli_bench_gsm_opts(const dq_cli *cli, dq_gsm_opts *o) {
  dq_config cfg;
  int rc = cli_config(cli, &cfg);
  if (rc != DQ_EXIT_OK)
    return rc;
  dq_config_gsm_opts(&cfg, o);
  return DQ_EXIT_OK;
}

/* A float option as the decimal it was written as (0.8, not 0.800000012). */
static double dec(float v) { return round((double)v * 1e6) / 1e6; }

json_t *cli_bench_gsm_json(const dq_gsm_opts *o) {
  return json_pack(
      "{s:s, s:i, s:i, s:i, s:i, s:b, s:i, s:f, s:s, s:i, s:i, s:f, s:f, "
      "s:s}",
      "mode", mode_names[o->mode], "hybrid_split", o->hybrid_split,
      "window_size", o->window_size, "num_global_anchors",
      o->num_global_anchors, "n_sink", o->n_sink, "static_anchors",
      o->static_anchors, "min_tokens", o->min_tokens, "keep_ratio",
      dec(o->keep_ratio), "strategy", strategy_names[o->strategy],
      "memory_slots", o->memory_slots, "chunk_size", o->chunk_size,
      "encoder_window_scale", dec(o->encoder_window_scale),
      "decoder_window_scale", dec(o->decoder_window_scale), "cache_type",
      dq_kv_cache_type_name((dq_kv_type)o->cache_type));
}

const char *cli_bench_gsm_line(const dq_gsm_opts *o, char *buf,
                               size_t buf_bytes) {
  snprintf(buf, buf_bytes,
           "%s, window %d (x%.2g prefill, x%.2g decode), %d sinks, %d "
           "anchors, memory <= %d slots (keep %.2g), %s, chunk %d, "
           "min_tokens %d, %s cache",
           mode_names[o->mode], o->window_size, o->encoder_window_scale,
           o->decoder_window_scale, o->n_sink, o->num_global_anchors,
           o->memory_slots, o->keep_ratio, strategy_names[o->strategy],
           o->chunk_size, o->min_tokens,
           dq_kv_cache_type_name((dq_kv_type)o->cache_type));
  return buf;
}

int cli_bench_lengths(const dq_cli *cli, const char *text, int *out, int max_n,
                      int min, int max) {
  int n = 0;
  const char *p = text;
  for (;;) {
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p || v < min || v > max || (*end && *end != ',') ||
        n >= max_n) {
      cli_error(cli, "--lengths must be a comma-separated list of at most %d "
                "token counts from %d to %d, not '%s'", max_n, min, max, text);
      return -1;
    }
    out[n++] = (int)v;
    if (!*end)
      return n;
    p = end + 1;
  }
}

/* ---- bench gsm ------------------------------------------------------------ */

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One path (full or GSM) at one length. */
typedef struct path_run {
  int ran;                /* 0: skipped (full above --full-max) */
  double prefill_ms, prefill_cpu_ms;
  double decode_ms;       /* all n_decode steps */
  int n_decode;
  size_t kv_bytes;        /* full: the cache; GSM: rows retained */
  size_t kv_bytes_alloc;  /* GSM: rows allocated; full: = kv_bytes */
  double ppl;             /* < 0: not measured */
  dq_gsm_stats st;        /* after the prefill */
  dq_gsm_stats st_decode; /* after the decode steps */
} path_run;

/* Tokens of `text` repeated (as `cat f f ...` would) until there are at
 * least `need`; *n_rep says how many copies it took. */
static dq_status tokens_at_least(dq_model *m, const char *text, size_t len,
                                 int need, int32_t **toks, int *n, int *n_rep,
                                 dq_error *err) {
  *toks = NULL;
  *n = 0;
  dq_strbuf b = {0};
  dq_strbuf_add(&b, text, len);
  int rep = 1, prev = -1;
  dq_status st = DQ_OK;
  for (;;) {
    if (b.oom) {
      st = dq_error_set(err, DQ_ERR_NOMEM, "out of memory repeating the text");
      break;
    }
    free(*toks);
    *toks = NULL;
    if ((st = dq_model_tokenize(m, b.p, b.n, 1, toks, n))) {
      dq_error_set(err, st, "tokenizing the text: %s", dq_model_errmsg(m));
      break;
    }
    if (*n >= need || *n <= prev)
      break;
    prev = *n;
    /* add the copies the token rate so far says are missing */
    int per = *n / rep > 0 ? *n / rep : 1;
    int more = (need - *n + per - 1) / per;
    for (int k = 0; k < (more > 0 ? more : 1); k++, rep++)
      dq_strbuf_add(&b, text, len);
  }
  free(b.p);
  *n_rep = rep;
  if (st == DQ_OK && *n < need)
    st = dq_error_set(err, DQ_ERR_ARG, "the text yields no tokens");
  return st;
}

static dq_status new_seq(dq_model *m, int n_ctx, const dq_gsm_opts *g,
                         dq_seq **s) {
  return g ? dq_seq_new_gsm(m, n_ctx, g, s) : dq_seq_new(m, n_ctx, s);
}

/* The timed prefill of L tokens and n_decode steps after it. */
static dq_status timed_run(dq_model *m, const int32_t *toks, int L,
                           int n_decode, const dq_gsm_opts *g, path_run *r,
                           dq_error *err) {
  dq_seq *s = NULL;
  dq_status st = new_seq(m, L + n_decode, g, &s);
  if (st)
    return dq_error_set(err, st, "%s", dq_model_errmsg(m));
  double t0 = dq_now_ms(), c0 = cpu_ms();
  st = dq_seq_eval(s, toks, L, DQ_LOGITS_LAST);
  r->prefill_ms = dq_now_ms() - t0;
  r->prefill_cpu_ms = cpu_ms() - c0;
  if (st) {
    dq_error_set(err, st, "%s prefill of %d tokens: %s", g ? "gsm" : "full", L,
                 dq_seq_errmsg(s));
    goto done;
  }
  dq_seq_gsm_stats(s, &r->st);
  t0 = dq_now_ms();
  for (int i = 0; i < n_decode && !st; i++)
    st = dq_seq_eval(s, toks + L + i, 1, DQ_LOGITS_LAST);
  r->decode_ms = dq_now_ms() - t0;
  r->n_decode = n_decode;
  if (st) {
    dq_error_set(err, st, "%s decode at depth %d: %s", g ? "gsm" : "full", L,
                 dq_seq_errmsg(s));
    goto done;
  }
  dq_seq_gsm_stats(s, &r->st_decode);
  r->ran = 1;
done:
  dq_seq_free(s);
  return st;
}

/* Perplexity of toks[0..L) under one path, evaluated in pieces of chunk. */
static dq_status ppl_run(dq_model *m, const int32_t *toks, int L, int chunk,
                         const dq_gsm_opts *g, int n_vocab, double *ppl,
                         dq_error *err) {
  dq_seq *s = NULL;
  dq_status st = new_seq(m, L, g, &s);
  if (st)
    return dq_error_set(err, st, "%s", dq_model_errmsg(m));
  double nll = 0;
  long n_pred = 0;
  for (int a = 0; a < L && !st; a += chunk) {
    int n = L - a < chunk ? L - a : chunk;
    if ((st = dq_seq_eval(s, toks + a, n, DQ_LOGITS_ALL))) {
      dq_error_set(err, st, "%s perplexity pass at %d: %s", g ? "gsm" : "full",
                   a, dq_seq_errmsg(s));
      break;
    }
    int rows = 0;
    const float *lg = dq_seq_logits(s, &rows);
    if (!lg || rows != n) {
      st = dq_error_set(err, DQ_ERR_INTERNAL,
                        "%s perplexity pass: %d rows of logits for %d tokens",
                        g ? "gsm" : "full", rows, n);
      break;
    }
    for (int i = 0; i < n && a + i + 1 < L; i++) {
      const float *row = lg + (size_t)i * n_vocab;
      float mx = row[0];
      for (int v = 1; v < n_vocab; v++)
        mx = row[v] > mx ? row[v] : mx;
      double sum = 0;
      for (int v = 0; v < n_vocab; v++)
        sum += exp((double)(row[v] - mx));
      nll += log(sum) + mx - row[toks[a + i + 1]];
      n_pred++;
    }
  }
  dq_seq_free(s);
  *ppl = n_pred ? exp(nll / (double)n_pred) : -1;
  return st;
}

static json_t *stats_json(const dq_gsm_stats *st) {
  json_t *o = json_pack(
      "{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:I, s:I, "
      "s:I, s:I}",
      "path", st->path, "n_layer_fixed", st->n_layer_fixed, "n_layer_dynamic",
      st->n_layer_dynamic, "n_layer_swa", st->n_layer_swa, "window",
      st->window, "n_sink", st->n_sink, "n_anchors", st->n_anchors,
      "n_pinned_tokens", st->n_pinned_tokens, "memory_budget",
      st->memory_budget, "max_entries", st->max_entries, "n_chunks",
      st->n_chunks, "n_evicted", (json_int_t)st->n_evicted, "n_merged",
      (json_int_t)st->n_merged, "n_renumbered", (json_int_t)st->n_renumbered,
      "cache_bytes", (json_int_t)st->cache_bytes,
      "cache_bytes_alloc", (json_int_t)st->cache_bytes_alloc);
  if (o)
    json_object_set_new(o, "compress_ms", json_real(st->compress_ms));
  if (o && st->positions)
    json_object_set_new(o, "positions", json_string(st->positions));
  if (o && st->cache_type)
    json_object_set_new(o, "cache_type", json_string(st->cache_type));
  return o;
}

static json_t *path_json(const path_run *r, int L, int gsm) {
  if (!r->ran)
    return json_null();
  json_t *o = json_object();
  json_object_set_new(o, "prefill_ms", json_real(r->prefill_ms));
  json_object_set_new(o, "prefill_cpu_ms", json_real(r->prefill_cpu_ms));
  json_object_set_new(o, "prefill_ms_per_token", json_real(r->prefill_ms / L));
  json_object_set_new(o, "prefill_tok_s", json_real(L / (r->prefill_ms / 1e3)));
  if (r->n_decode > 0) {
    double per = r->decode_ms / r->n_decode;
    json_object_set_new(o, "decode_tokens", json_integer(r->n_decode));
    json_object_set_new(o, "decode_ms_per_token", json_real(per));
    json_object_set_new(o, "decode_tok_s", json_real(1e3 / per));
  }
  json_object_set_new(o, "kv_bytes", json_integer((json_int_t)r->kv_bytes));
  json_object_set_new(o, "kv_bytes_alloc",
                      json_integer((json_int_t)r->kv_bytes_alloc));
  json_object_set_new(o, "ppl", r->ppl >= 0 ? json_real(r->ppl) : json_null());
  if (gsm) {
    json_object_set_new(o, "stats", stats_json(&r->st));
    if (r->n_decode > 0)
      json_object_set_new(o, "stats_after_decode", stats_json(&r->st_decode));
  }
  return o;
}

/* "   12.345" or "        -" when absent. */
static void cell(char *buf, size_t n, int width, int prec, int present,
                 double v) {
  if (present)
    snprintf(buf, n, "%*.*f", width, prec, v);
  else
    snprintf(buf, n, "%*s", width, "-");
}

typedef struct gsm_args {
  int lengths[MAX_LENGTHS], n_lengths;
  int full_max, n_decode, ppl_chunk, ppl;
} gsm_args;

static int parse_args(const dq_cli *cli, const cli_option *opts, gsm_args *a) {
  static const int def[] = {2048, 4096, 8192, 16384};
  memcpy(a->lengths, def, sizeof def);
  a->n_lengths = 4;
  a->full_max = 16384;
  a->n_decode = 32;
  a->ppl_chunk = 512;
  a->ppl = !cli_opt(opts, "no-ppl");
  const char *v;
  long x;
  if ((v = cli_opt(opts, "lengths")) &&
      (a->n_lengths = cli_bench_lengths(cli, v, a->lengths, MAX_LENGTHS, 16,
                                        MAX_LENGTH)) < 0)
    return -1;
  if ((v = cli_opt(opts, "full-max"))) {
    if ((x = cli_parse_count(cli, "full-max", v, 0, MAX_LENGTH)) < 0)
      return -1;
    a->full_max = (int)x;
  }
  if ((v = cli_opt(opts, "decode"))) {
    if ((x = cli_parse_count(cli, "decode", v, 0, 4096)) < 0)
      return -1;
    a->n_decode = (int)x;
  }
  if ((v = cli_opt(opts, "ppl-chunk"))) {
    if ((x = cli_parse_count(cli, "ppl-chunk", v, 1, 8192)) < 0)
      return -1;
    a->ppl_chunk = (int)x;
  }
  return 0;
}

int cli_bench_gsm(dq_cli *cli, cli_option *opts) {
  gsm_args a;
  if (parse_args(cli, opts, &a))
    return DQ_EXIT_USAGE;
  dq_gsm_opts g;
  int rc = cli_bench_gsm_opts(cli, &g);
  if (rc != DQ_EXIT_OK)
    return rc;
  json_t *files = NULL;
  size_t text_len = 0;
  char *text = cli_bench_text(cli, opts, &text_len, &files);
  if (!text)
    return DQ_EXIT_USAGE;

  char path[4096];
  dq_model *m = NULL;
  int32_t *toks = NULL;
  path_run *runs = NULL;
  cli_progress *prog = NULL;
  json_t *jl = NULL;
  dq_error err = {0};
  int n_tok = 0, n_rep = 0;
  rc = cli_bench_open(cli, opts, 0, path, sizeof path, &m);
  if (rc != DQ_EXIT_OK)
    goto done;
  rc = DQ_EXIT_ERROR;
  dq_model_info info;
  dq_model_get_info(m, &info);
  int need = 0;
  for (int i = 0; i < a.n_lengths; i++)
    need = a.lengths[i] + a.n_decode > need ? a.lengths[i] + a.n_decode : need;
  if (tokens_at_least(m, text, text_len, need, &toks, &n_tok, &n_rep, &err)) {
    rc = cli_fail(cli, &err);
    goto done;
  }
  /* --kv-type was checked when the model opened */
  const char *kvt = cli_opt(opts, "kv-type");
  double elem_bytes = 2.0;
  int kv_type;
  cli_parse_kv_type(cli, kvt ? kvt : "f16", &kv_type, &elem_bytes);
  size_t row_bytes =
      (size_t)((double)info.n_head_kv * info.head_dim * elem_bytes + 0.5);
  runs = calloc((size_t)a.n_lengths * 2, sizeof *runs);
  if (!runs) {
    cli_error(cli, "out of memory");
    goto done;
  }
  prog = cli_progress_new(cli);
  int steps = 0, step = 0;
  for (int i = 0; i < a.n_lengths; i++)
    steps += (a.lengths[i] <= a.full_max ? 1 : 0) * (a.ppl ? 2 : 1) +
             (a.ppl ? 2 : 1);

  if (!cli->json) {
    printf("model: %s (%s, %d layers, trained context %d), backend %s, %d "
           "threads\n",
           path, info.arch, info.n_layer, info.n_ctx_train, info.backend,
           cli->threads);
    printf("text: %zu files, %zu bytes x %d = %d tokens\n",
           json_array_size(files), text_len, n_rep, n_tok);
    char line[256];
    printf("GSM: %s\n", cli_bench_gsm_line(&g, line, sizeof line));
    printf("%7s %10s %10s %7s %10s %10s %9s %9s %6s %9s %9s\n", "tokens",
           "full ms/t", "gsm ms/t", "speedup", "full dec", "gsm dec",
           "full KV", "gsm KV", "ratio", "full ppl", "gsm ppl");
    fflush(stdout);
  }
  {
    /* untimed: pages the weights in and starts the worker threads */
    dq_seq *w = NULL;
    int nw = n_tok < WARMUP_TOKENS ? n_tok : WARMUP_TOKENS;
    if (dq_seq_new(m, nw, &w) || dq_seq_eval(w, toks, nw, DQ_LOGITS_LAST)) {
      cli_error(cli, "warm-up: %s", w ? dq_seq_errmsg(w) : dq_model_errmsg(m));
      dq_seq_free(w);
      goto done;
    }
    dq_seq_free(w);
  }
  jl = json_array();
  for (int i = 0; i < a.n_lengths; i++) {
    int L = a.lengths[i];
    path_run *rf = &runs[2 * i], *rg = &runs[2 * i + 1];
    size_t full_bytes = (size_t)info.n_layer * (size_t)L * 2 * row_bytes;
    rf->ppl = rg->ppl = -1;
    char stage[96];
    if (L > info.n_ctx_train)
      dq_log(&cli->log, DQ_LOG_INFO,
             "%d tokens exceed the model's trained context of %d", L,
             info.n_ctx_train);
    if (L <= a.full_max) {
      snprintf(stage, sizeof stage, "%d tokens: full prefill", L);
      cli_progress_cb(prog, stage, (uint64_t)step, (uint64_t)steps, "steps");
      if (timed_run(m, toks, L, a.n_decode, NULL, rf, &err)) {
        rc = cli_fail(cli, &err);
        goto done;
      }
      step++;
      rf->kv_bytes = rf->kv_bytes_alloc = full_bytes;
      dq_log(&cli->log, DQ_LOG_INFO, "%d tokens: full prefill %.0f ms, "
             "decode %.2f ms/token", L, rf->prefill_ms,
             a.n_decode ? rf->decode_ms / a.n_decode : 0.0);
    }
    snprintf(stage, sizeof stage, "%d tokens: gsm prefill", L);
    cli_progress_cb(prog, stage, (uint64_t)step, (uint64_t)steps, "steps");
    if (timed_run(m, toks, L, a.n_decode, &g, rg, &err)) {
      rc = cli_fail(cli, &err);
      goto done;
    }
    step++;
    if (strcmp(rg->st.path, "gsm") == 0) {
      rg->kv_bytes = rg->st.cache_bytes;
      rg->kv_bytes_alloc = rg->st.cache_bytes_alloc;
    } else { /* below min_tokens: the sequence kept its full cache */
      rg->kv_bytes = rg->kv_bytes_alloc = full_bytes;
    }
    dq_log(&cli->log, DQ_LOG_INFO,
           "%d tokens: gsm (%s path) prefill %.0f ms, decode %.2f ms/token, "
           "%d entries max, %lld evicted, %lld merged", L, rg->st.path,
           rg->prefill_ms, a.n_decode ? rg->decode_ms / a.n_decode : 0.0,
           rg->st.max_entries, (long long)rg->st.n_evicted,
           (long long)rg->st.n_merged);
    if (a.ppl) {
      if (rf->ran) {
        snprintf(stage, sizeof stage, "%d tokens: full perplexity", L);
        cli_progress_cb(prog, stage, (uint64_t)step, (uint64_t)steps, "steps");
        if (ppl_run(m, toks, L, a.ppl_chunk, NULL, info.n_vocab, &rf->ppl,
                    &err)) {
          rc = cli_fail(cli, &err);
          goto done;
        }
        step++;
      }
      snprintf(stage, sizeof stage, "%d tokens: gsm perplexity", L);
      cli_progress_cb(prog, stage, (uint64_t)step, (uint64_t)steps, "steps");
      if (ppl_run(m, toks, L, a.ppl_chunk, &g, info.n_vocab, &rg->ppl, &err)) {
        rc = cli_fail(cli, &err);
        goto done;
      }
      step++;
      dq_log(&cli->log, DQ_LOG_INFO, "%d tokens: perplexity full %.3f, gsm %.3f",
             L, rf->ppl, rg->ppl);
    }
    cli_progress_cb(prog, "done", (uint64_t)step, (uint64_t)steps, "steps");
    /* full attention's cache is computed from the shape (every position's
     * K and V rows), so the ratio is known whether or not it ran */
    double ratio = (double)rg->kv_bytes_alloc / (double)full_bytes;
    json_t *o = json_object();
    json_object_set_new(o, "length", json_integer(L));
    json_object_set_new(o, "full", path_json(rf, L, 0));
    json_object_set_new(o, "gsm", path_json(rg, L, 1));
    json_object_set_new(o, "full_kv_bytes",
                        json_integer((json_int_t)full_bytes));
    json_object_set_new(o, "kv_ratio", json_real(ratio));
    json_object_set_new(
        o, "kv_ratio_retained",
        json_real((double)rg->kv_bytes / (double)full_bytes));
    json_object_set_new(o, "prefill_speedup",
                        rf->ran ? json_real(rf->prefill_ms / rg->prefill_ms)
                                : json_null());
    json_array_append_new(jl, o);
    if (!cli->json) {
      char c[10][32];
      int nd = a.n_decode > 0;
      cell(c[0], 32, 10, 3, rf->ran, rf->prefill_ms / L);
      cell(c[1], 32, 10, 3, 1, rg->prefill_ms / L);
      cell(c[2], 32, 6, 2, rf->ran, rf->prefill_ms / rg->prefill_ms);
      strcat(c[2], rf->ran ? "x" : " ");
      cell(c[3], 32, 10, 2, rf->ran && nd, rf->decode_ms / (nd ? a.n_decode : 1));
      cell(c[4], 32, 10, 2, nd, rg->decode_ms / (nd ? a.n_decode : 1));
      cell(c[5], 32, 9, 1, 1, (double)full_bytes / (1 << 20));
      cell(c[6], 32, 9, 1, 1, (double)rg->kv_bytes_alloc / (1 << 20));
      cell(c[7], 32, 5, 0, 1, ratio * 100);
      cell(c[8], 32, 9, 2, rf->ppl >= 0, rf->ppl);
      cell(c[9], 32, 9, 2, rg->ppl >= 0, rg->ppl);
      printf("%7d %s %s %s %s %s %s %s %s%% %s %s\n", L, c[0], c[1], c[2],
             c[3], c[4], c[5], c[6], c[7], c[8], c[9]);
      fflush(stdout);
    }
  }
  cli_progress_free(prog);
  prog = NULL;

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double rss_mib = (double)ru.ru_maxrss / 1024.0;
  int i0 = 0, i1 = 0; /* shortest and longest length */
  for (int i = 1; i < a.n_lengths; i++) {
    i0 = a.lengths[i] < a.lengths[i0] ? i : i0;
    i1 = a.lengths[i] > a.lengths[i1] ? i : i1;
  }
  double growth = (runs[2 * i1 + 1].prefill_ms / a.lengths[i1]) /
                  (runs[2 * i0 + 1].prefill_ms / a.lengths[i0]);
  if (cli->json) {
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(path));
    json_object_set_new(o, "arch", json_string(info.arch));
    json_object_set_new(o, "backend", json_string(info.backend));
    json_object_set_new(o, "threads", json_integer(cli->threads));
    json_object_set_new(o, "n_layer", json_integer(info.n_layer));
    json_object_set_new(o, "n_ctx_train", json_integer(info.n_ctx_train));
    json_object_set_new(o, "kv_type", json_string(kvt ? kvt : "f16"));
    json_object_set_new(
        o, "text",
        json_pack("{s:o, s:I, s:i, s:i}", "files", files, "bytes",
                  (json_int_t)text_len, "copies", n_rep, "tokens", n_tok));
    files = NULL;
    json_object_set_new(o, "gsm_opts", cli_bench_gsm_json(&g));
    json_object_set_new(o, "full_max", json_integer(a.full_max));
    json_object_set_new(o, "ppl_chunk",
                        a.ppl ? json_integer(a.ppl_chunk) : json_null());
    json_object_set_new(o, "lengths", jl);
    jl = NULL;
    json_object_set_new(o, "gsm_ms_per_token_growth",
                        a.n_lengths > 1 ? json_real(growth) : json_null());
    json_object_set_new(o, "peak_rss_mib", json_real(rss_mib));
    cli_json_print(o);
  } else {
    printf("ms/t: prefill ms per token (one eval of all tokens); dec: ms per "
           "token of %d single-token steps at that depth;\n"
           "KV: MiB after the prefill (full: every position's K and V "
           "rows, from the shape, run or not; gsm: rows allocated); ratio: "
           "gsm / full; ppl over the tokens.\n",
           a.n_decode);
    if (a.n_lengths > 1)
      printf("gsm ms/token at %d / at %d: %.2fx (goal: <= 1.3x at 32k vs 2k)\n",
             a.lengths[i1], a.lengths[i0], growth);
    printf("peak RSS %.0f MiB\n", rss_mib);
  }
  rc = DQ_EXIT_OK;
done:
  cli_progress_free(prog);
  json_decref(jl);
  json_decref(files);
  free(runs);
  free(toks);
  free(text);
  dq_model_free(m);
  return rc;
}
