/*
 * cmd_chat.c - `docqa chat --session NAME`: an interactive prompt (libedit,
 * with history) on a terminal, or one question per line of standard input
 * for scripts (one JSON object per answer with --json). Slash commands:
 * /summary /history /sources /reset /help /quit. Ctrl-C stops the answer
 * being written; every finished turn is already saved in the index.
 */
#include "cli.h"
#include "pipeline.h"

#include <editline/readline.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cli_option chat_opts[] = {
    {.name = "session", .has_arg = 1, .metavar = "NAME",
     .help = "session to create or resume (required)"},
    {.name = "k", .has_arg = 1, .metavar = "N",
     .help = "passages per turn (default 4)"},
    {.name = "keep-turns", .has_arg = 1, .metavar = "N",
     .help = "recent turns kept verbatim (default 4)"},
    {.name = "max-tokens", .has_arg = 1, .metavar = "N",
     .help = "longest answer in tokens (default 256)"},
    {.name = "history-budget", .has_arg = 1, .metavar = "N",
     .help = "tokens of recent turns before older ones are folded into the\n"
             "                         summary (default: a quarter of the context)"},
    {0}};

static volatile int interrupted;
static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

static int stream_out(void *user, const char *piece, size_t len) {
  (void)user;
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  return interrupted; /* Ctrl-C stops this answer only */
}

static void print_sources(const dq_ask_result *r) {
  int any = 0;
  for (size_t i = 0; i < r->n_passages; i++)
    any |= r->passages[i].cited;
  for (size_t i = 0; i < r->n_passages; i++) {
    const dq_citation *c = &r->passages[i];
    if (any && !c->cited)
      continue;
    printf("  [%zu] ", i + 1);
    cli_print_where(c->shown, c->unit, c->page, c->line_start, c->line_end,
                    c->section);
    printf("%s\n", c->stale ? "  (file changed since ingest)" : "");
  }
  if (r->model_answer) /* the answer is the quote */
    return;
  if (r->quote.text)
    printf("\n");
  cli_quote_print(&r->quote);
}

static json_t *turn_json(const dq_chat *chat, const char *q,
                         const dq_ask_result *r) {
  json_t *j = json_object(), *cits = json_array();
  json_object_set_new(j, "question", json_string(q));
  json_object_set_new(j, "answer", json_string(r->answer));
  json_object_set_new(j, "grounding", cli_grounding_json(r));
  for (size_t i = 0; i < r->n_passages; i++) {
    const dq_citation *c = &r->passages[i];
    json_t *x = json_object();
    json_object_set_new(x, "path", json_string(c->path));
    json_object_set_new(x, "root", json_string(c->root));
    json_object_set_new(x, "stale", json_boolean(c->stale));
    json_object_set_new(x, "line_start", json_integer(c->line_start));
    json_object_set_new(x, "line_end", json_integer(c->line_end));
    json_object_set_new(x, "page", c->page ? json_integer(c->page) : json_null());
    json_object_set_new(x, "page_unit",
                        c->page ? json_string(c->unit ? c->unit : "page")
                                : json_null());
    json_object_set_new(x, "section", json_string(c->section));
    json_object_set_new(x, "cited", json_boolean(c->cited));
    json_array_append_new(cits, x);
  }
  json_object_set_new(j, "passages", cits);
  json_object_set_new(j, "quote", cli_quote_json(&r->quote));
  json_t *tk = json_object();
  json_object_set_new(tk, "prompt", json_integer(r->n_prompt_tokens));
  json_object_set_new(tk, "answer", json_integer(r->n_answer_tokens));
  int used = 0, n_ctx = 0;
  dq_chat_usage(chat, &used, &n_ctx);
  json_object_set_new(tk, "context", json_integer(n_ctx));
  json_object_set_new(j, "tokens", tk);
  json_object_set_new(j, "attention", json_string(r->attention));
  return j;
}

/* Handles a slash command; returns 1 to quit. */
static int slash(dq_cli *cli, dq_chat *c, const char *line,
                 const dq_ask_result *last) {
  dq_error err;
  dq_error_clear(&err);
  if (!strcmp(line, "/quit") || !strcmp(line, "/exit"))
    return 1;
  if (!strcmp(line, "/summary")) {
    char *s = NULL;
    if (dq_chat_summary(c, &s, &err) != DQ_OK)
      cli_error(cli, "%s", dq_error_msg(&err));
    else
      printf("%s\n", s[0] ? s : "(no summary yet: the session is short)");
    free(s);
  } else if (!strcmp(line, "/history")) {
    dq_turn *t = NULL;
    size_t n = 0;
    if (dq_chat_history(c, &t, &n, &err) != DQ_OK)
      cli_error(cli, "%s", dq_error_msg(&err));
    for (size_t i = 0; i < n; i++)
      printf("%s: %s\n", t[i].role, t[i].text);
    dq_turns_free(t, n);
  } else if (!strcmp(line, "/sources")) {
    if (last && last->answer)
      print_sources(last);
    else
      printf("(no answer yet in this run)\n");
  } else if (!strcmp(line, "/reset")) {
    if (dq_chat_reset(c, &err) != DQ_OK)
      cli_error(cli, "%s", dq_error_msg(&err));
    else
      printf("session reset\n");
  } else {
    printf("commands: /summary /history /sources /reset /quit\n");
  }
  return 0;
}

static int run(dq_cli *cli, cli_option *opts) {
  const char *session = cli_opt(opts, "session");
  if (!session) {
    cli_error(cli, "--session NAME is required (sessions are saved in the index)");
    return DQ_EXIT_USAGE;
  }
  char mb[4096], eb[4096];
  dq_chat_opts o = {0};
  o.index_dir = cli->index_dir;
  o.model = cli->model ? cli->model : cli_default_model(mb, sizeof mb);
  o.embed_model = cli->embed_model ? cli->embed_model
                                   : cli_default_embed_model(eb, sizeof eb);
  o.backend = cli->backend;
  o.n_threads = cli->threads;
  o.log = &cli->log;
  dq_config cfg;
  int crc = cli_config(cli, &cfg);
  if (crc)
    return crc;
  o.config = &cfg; /* early_exit.* */
  const char *k = cli_opt(opts, "k"), *kt = cli_opt(opts, "keep-turns");
  if (k) {
    long v = cli_parse_count(cli, "k", k, 1, 50);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.k = (size_t)v;
  }
  if (kt) {
    long v = cli_parse_count(cli, "keep-turns", kt, 1, 64);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.keep_turns = (int)v;
  }
  const char *mt = cli_opt(opts, "max-tokens"), *hb = cli_opt(opts, "history-budget");
  if (mt) {
    long v = cli_parse_count(cli, "max-tokens", mt, 1, 8192);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.max_tokens = (int)v;
  }
  if (hb) {
    long v = cli_parse_count(cli, "history-budget", hb, 64, 1 << 20);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.history_budget = (int)v;
  }
  dq_chat *c = NULL;
  dq_error err;
  dq_error_clear(&err);
  if (dq_chat_open(&o, session, &c, &err) != DQ_OK)
    return cli_fail(cli, &err);
  int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !cli->json;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, &old);
  if (tty)
    printf("docqa chat, session '%s' (index %s). /help for commands, "
           "Ctrl-D to leave.\n", session, cli->index_dir);
  dq_ask_result last = {0};
  int code = DQ_EXIT_OK;
  char *line = NULL;
  size_t cap = 0;
  for (;;) {
    interrupted = 0;
    char *q;
    if (tty) {
      q = readline("> ");
      if (!q)
        break;
    } else {
      ssize_t n = getline(&line, &cap, stdin);
      if (n < 0)
        break;
      while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
      q = strdup(line);
      if (!q)
        break;
    }
    char *p = q + strspn(q, " \t");
    if (!*p) {
      free(q);
      continue;
    }
    if (tty)
      add_history(p);
    if (p[0] == '/') {
      int quit = slash(cli, c, p, &last);
      free(q);
      if (quit)
        break;
      continue;
    }
    dq_ask_result r;
    if (dq_chat_turn(c, p, tty ? stream_out : NULL, NULL, &r, &err) != DQ_OK) {
      cli_error(cli, "%s", dq_error_msg(&err));
      code = DQ_EXIT_ERROR;
      free(q);
      if (!tty)
        break;
      continue;
    }
    if (cli->json) {
      cli_json_print(turn_json(c, p, &r));
    } else {
      if (!tty)
        printf("Q: %s\n", p);
      cli_answer_print(&r, tty);
      print_sources(&r);
      if (!tty)
        printf("\n");
    }
    dq_ask_result_clear(&last);
    last = r;
    free(q);
    fflush(stdout);
  }
  free(line);
  dq_ask_result_clear(&last);
  sigaction(SIGINT, &old, NULL);
  dq_chat_close(c);
  return code;
}

cli_command cli_cmd_chat = {
    .name = "chat",
    .usage = "docqa chat --session NAME [--k N] [--keep-turns N] [--max-tokens N]",
    .summary = "multi-turn questions with a rolling summary, saved in the index",
    .help =
        "On a terminal: an interactive prompt with history. Otherwise one\n"
        "question per line of standard input (one JSON object per answer\n"
        "with --json). Each answer uses passages retrieved for the question\n"
        "(follow-ups are resolved with the previous question), cut to their\n"
        "lines about it as in ask, the session's summary and its recent\n"
        "questions (not the answers: a small model copies its last answer).\n"
        "A follow-up's \"it\" (\"this function\", ...) after an answer that\n"
        "opens with the index's facts on a code name is that name (\"Which\n"
        "function calls it?\").\n"
        "As in ask, an answer whose words no passage holds is set aside for\n"
        "the best matching sentence (--json: grounding).\n"
        "Older turns are folded into the summary so the context is never\n"
        "exceeded; the session is saved in the index and resumes after a\n"
        "restart.\n"
        "Commands: /summary /history /sources /reset /quit\n",
    .opts = chat_opts, .min_args = 0, .max_args = 0, .run = run};
