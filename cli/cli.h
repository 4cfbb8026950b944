/*
 * cli.h - private to cli/: the parsed command line shared by all
 * subcommands, and the output helpers (logging to stderr, one JSON object on
 * stdout, progress bars on terminals). Only cli/ prints or exits.
 */
#ifndef DQ_CLI_H
#define DQ_CLI_H

#include "common.h"

#include <jansson.h>
#include <stdio.h>

/* Exit codes of the docqa executable. */
enum {
  DQ_EXIT_OK = 0,
  DQ_EXIT_ERROR = 1,   /* the command failed; a message is on stderr */
  DQ_EXIT_USAGE = 2,   /* bad command line, or command not yet implemented */
  DQ_EXIT_PARTIAL = 3  /* done, but some inputs failed (e.g. unreadable files) */
};

/* Options every command accepts (see DESIGN.md "Interfaces"). Strings point
 * into argv, the environment or static buffers (a model name found in the
 * models directory); nothing here is freed. */
typedef struct dq_cli {
  const char *cmd;         /* subcommand name */
  const char *index_dir;   /* --index, DOCQA_INDEX, or "./.docqa" */
  const char *model;       /* --model or NULL (default model) */
  const char *embed_model; /* --embed-model or NULL (default embedder) */
  const char *backend;     /* --backend cpu|cuda|auto (default auto) */
  const char *config;      /* --config FILE or NULL */
  const char *sets[32];    /* --set KEY=VALUE overrides, in order */
  int n_sets;
  int threads;             /* --threads N; 0 = all cores */
  int json;                /* --json */
  int verbosity;           /* -q = -1, default 0, -v = 1, -vv = 2 */
  int n_args;              /* positional arguments */
  char **args;
  dq_logger log;           /* stderr sink at the chosen level */
} dq_cli;

/* A command-specific option, parsed by cli_parse() beside the common ones.
 * `has_arg` is 0 for flags (value becomes "1") and 1 for options taking a
 * value. Repeatable options keep the last value unless `repeat` collects. */
typedef struct cli_option {
  const char *name;   /* long name without "--" */
  int has_arg;
  const char *metavar;
  const char *help;
  const char *value;  /* filled by the parser; NULL when absent */
  const char **repeat; /* optional: array collecting every value */
  int n_repeat, max_repeat;
} cli_option;

/* One subcommand: `run` returns a DQ_EXIT_* code. */
typedef struct cli_command {
  const char *name;
  const char *usage;   /* "docqa search QUERY [--k N]" */
  const char *summary; /* one line for `docqa --help` */
  const char *help;    /* paragraphs for `docqa CMD --help` */
  cli_option *opts;    /* NULL-name-terminated, may be NULL */
  int min_args, max_args; /* positional count; max -1 = unbounded */
  int (*run)(dq_cli *cli, cli_option *opts);
} cli_command;

/* Looks up a command option's value by long name (NULL when absent). */
const char *cli_opt(const cli_option *opts, const char *name);

/* The configuration: defaults, then --config FILE, then each --set
 * KEY=VALUE (config.c in pipeline/ checks keys and ranges). Prints the error
 * and returns an exit code (non-zero) when something is wrong. */
struct dq_config;
int cli_config(const dq_cli *cli, struct dq_config *out);

/* Output helpers (output.c). */
void cli_log_sink(void *user, dq_log_level level, const char *msg);
/* Prints "docqa CMD: message" on stderr (and nothing on stdout). */
void cli_error(const dq_cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints an error from a dq_error and returns the exit code for it. */
int cli_fail(const dq_cli *cli, const dq_error *err);
/* Writes `obj` as one JSON object line on stdout and releases it. */
void cli_json_print(json_t *obj);
/* ask's and chat's quote (pipeline.h dq_quote): its JSON (null when none),
 * and its lines for people ("Best matching sentence: ...", nothing when
 * none). */
struct dq_quote;
json_t *cli_quote_json(const struct dq_quote *q);
void cli_quote_print(const struct dq_quote *q);
/* ask's and chat's grounding (pipeline.h dq_ask_result): {"verdict",
 * "unsupported": [names], "model_answer": text set aside or null}. */
struct dq_ask_result;
json_t *cli_grounding_json(const struct dq_ask_result *r);
/* The answer for people, then a blank line: whole, or after `streamed`
 * text (the facts and the model's words, already shown) only what
 * replaced the model's words; with a line saying why they were set aside,
 * or, kept, which names no passage holds. */
void cli_answer_print(const struct dq_ask_result *r, int streamed);
/* Where a passage is, for people: "path:12-20 (section)", "path p.3
 * (section)" for a PDF page, "path slide 3", "path sheet 2 rows 14-20"
 * (pipeline.h dq_where; unit: dq_page_unit's); no parentheses when section
 * is empty. */
void cli_print_where(const char *path, const char *unit, int page,
                     int line_start, int line_end, const char *section);
/* A stored document (index.h dq_doc_info) for --json: root, path, kind,
 * chunks, bytes, mtime_ns (status --docs, forget). */
struct dq_doc_info;
json_t *cli_doc_json(const struct dq_doc_info *d);
/* "12 kB", "3.4 MB", "1.2 GB" (decimal units) into buf. */
void cli_format_bytes(char *buf, size_t n, double bytes);
/* Parses a non-negative integer option; prints an error and returns -1 when
 * the text is not one. */
long cli_parse_count(const dq_cli *cli, const char *opt_name, const char *text,
                     long min, long max);
/* --backend (checked by the parser: cpu, cuda or auto) as a
 * dq_backend_kind (engine.h). */
int cli_backend_kind(const dq_cli *cli);
/* Parses --kv-type (f16, q8_0 or f32) into *type (a dq_kv_type, engine.h)
 * and, when elem_bytes is not NULL, the bytes one cached element takes.
 * Returns 0, or -1 after printing an error. */
int cli_parse_kv_type(const dq_cli *cli, const char *text, int *type,
                      double *elem_bytes);

/* Progress bar (progress.c): drawn on stderr only when both stdout and stderr
 * are terminals and not -q; otherwise silent. */
typedef struct cli_progress cli_progress;
cli_progress *cli_progress_new(const dq_cli *cli);
/* A dq_progress_fn that draws into the cli_progress passed as `user`. */
int cli_progress_cb(void *user, const char *stage, uint64_t done,
                    uint64_t total, const char *unit);
/* Clears the bar line; accepts NULL. */
void cli_progress_free(cli_progress *p);

/* Default model paths (models.c): under $DOCQA_MODELS or the XDG cache dir.
 * Writes into buf and returns it. */
const char *cli_default_model(char *buf, size_t buf_bytes);
const char *cli_default_embed_model(char *buf, size_t buf_bytes);
const char *cli_models_dir(char *buf, size_t buf_bytes);
/* A --model-like argument: as given when it names a path (has a '/') or a
 * file here; else the file of that name in the models directory when there
 * is one (buf holds it); else as given. */
const char *cli_model_arg(const char *arg, char *buf, size_t buf_bytes);

/* Commands (cmd_*.c). */
extern cli_command cli_cmd_version;
extern cli_command cli_cmd_status;
extern cli_command cli_cmd_forget;
extern cli_command cli_cmd_show;
extern cli_command cli_cmd_ingest;
extern cli_command cli_cmd_search;
extern cli_command cli_cmd_ask;
extern cli_command cli_cmd_xref;
extern cli_command cli_cmd_chat;
extern cli_command cli_cmd_generate;
extern cli_command cli_cmd_embed;
extern cli_command cli_cmd_bench;

/* `docqa bench gsm` (cmd_bench_gsm.c) and `docqa bench needle`
 * (cmd_bench_needle.c), dispatched by cmd_bench.c with bench's options. */
int cli_bench_gsm(dq_cli *cli, cli_option *opts);
int cli_bench_needle(dq_cli *cli, cli_option *opts);

/* Helpers the two share (cmd_bench_gsm.c). The benchmark text: the files of
 * --text (every value, in order), else every regular file of
 * /usr/share/common-licenses in name order (symbolic links skipped),
 * concatenated as `cat` would. Returns a malloc'd NUL-terminated buffer
 * (caller frees) or NULL after printing an error; *files gets a new JSON
 * array of the paths read (caller releases). */
char *cli_bench_text(const dq_cli *cli, const cli_option *opts, size_t *len,
                     json_t **files);
/* Opens the decoder model of --model (or the default) with --threads,
 * --kv-type and --backend (cpu, cuda or auto, as dq_model_open); cpu_only:
 * --backend cuda is refused with exit 2 (bench needle reads attention
 * statistics, which GSM gathers on the host). path_buf receives the path.
 * Returns DQ_EXIT_OK and *out, or an exit code after printing an error. */
typedef struct dq_model dq_model; /* engine.h */
int cli_bench_open(dq_cli *cli, const cli_option *opts, int cpu_only,
                   char *path_buf, size_t path_buf_bytes, dq_model **out);
/* The GSM options of the configuration (cli_config: defaults, --config,
 * --set). Returns DQ_EXIT_OK, or an exit code after printing an error. */
typedef struct dq_gsm_opts dq_gsm_opts; /* engine.h */
int cli_bench_gsm_opts(const dq_cli *cli, dq_gsm_opts *o);
/* o as a JSON object (docqa.yaml names), and a one-line summary into buf. */
json_t *cli_bench_gsm_json(const dq_gsm_opts *o);
const char *cli_bench_gsm_line(const dq_gsm_opts *o, char *buf,
                               size_t buf_bytes);
/* Parses --lengths ("2048,4096"): ascending or not, each in [min, max], at
 * most max_n. Returns the count, or -1 after printing an error. */
int cli_bench_lengths(const dq_cli *cli, const char *text, int *out, int max_n,
                      int min, int max);

/* The shared body of commands that do not exist yet: a clear message, exit 2. */
int cli_not_implemented(dq_cli *cli, cli_option *opts);

#endif /* DQ_CLI_H */
