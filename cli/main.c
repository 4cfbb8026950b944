/*
 * main.c - the docqa executable: finds the subcommand, parses the options
 * common to every command (DESIGN.md "Interfaces") plus the command's own,
 * and runs it. `docqa --help` lists commands; `docqa CMD --help` teaches one.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static cli_command *commands[] = {
    &cli_cmd_ingest,   &cli_cmd_search, &cli_cmd_ask,    &cli_cmd_xref,
    &cli_cmd_show,     &cli_cmd_chat,   &cli_cmd_status, &cli_cmd_forget,
    &cli_cmd_generate, &cli_cmd_embed,  &cli_cmd_bench,  &cli_cmd_version,
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const char common_help[] =
    "Options for every command:\n"
    "  --index DIR         index directory (default: $DOCQA_INDEX or ./.docqa)\n"
    "  --model PATH        GGUF decoder model: a path, or a file name in the\n"
    "                      models directory (default: the fetched default)\n"
    "  --embed-model PATH  GGUF embedding model, likewise\n"
    "  --backend B         cpu, cuda or auto (default: auto)\n"
    "  --threads N         CPU threads (default: all cores)\n"
    "  --config FILE       docqa.yaml configuration (default: none)\n"
    "  --set KEY=VALUE     override one config key, e.g. --set\n"
    "                      kv_compress.strategy=similarity (repeatable)\n"
    "  --json              print one JSON object on stdout; logs stay on stderr\n"
    "  -v, --verbose       more detail on stderr (repeat for debug)\n"
    "  -q, --quiet         only errors on stderr\n"
    "  -h, --help          this help\n";

static void print_main_help(FILE *f) {
  fprintf(f,
          "docqa %s - ask questions of long documents and code repositories,\n"
          "answered by a local model with citations.\n\n"
          "Usage: docqa COMMAND [options] [arguments]\n\nCommands:\n",
          dq_version());
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(f, "\n%s\nRun 'docqa COMMAND --help' for a command's own options.\n"
             "Typical start:\n"
             "  docqa ingest ~/contracts        # build ./.docqa from a folder\n"
             "  docqa search \"termination notice\"\n"
             "  docqa ask \"What is the notice period for termination?\"\n",
          common_help);
}

static void print_cmd_help(const cli_command *c) {
  printf("Usage: %s\n\n%s\n", c->usage, c->summary);
  if (c->help && c->help[0])
    printf("\n%s", c->help);
  if (c->opts && c->opts[0].name) {
    printf("\nOptions:\n");
    for (cli_option *o = c->opts; o->name; o++) {
      char left[64];
      snprintf(left, sizeof left, "--%s%s%s", o->name, o->has_arg ? " " : "",
               o->has_arg ? o->metavar : "");
      printf("  %-22s %s\n", left, o->help);
    }
  }
  printf("\n%s", common_help);
}

const char *cli_opt(const cli_option *opts, const char *name) {
  if (!opts)
    return NULL;
  for (const cli_option *o = opts; o->name; o++)
    if (strcmp(o->name, name) == 0)
      return o->value;
  return NULL;
}

/* Matches "--name" or "--name=value" against `name`; sets *inline_val. */
static int match_long(const char *arg, const char *name,
                      const char **inline_val) {
  size_t n = strlen(name);
  if (strncmp(arg + 2, name, n) != 0)
    return 0;
  if (arg[2 + n] == '\0') {
    *inline_val = NULL;
    return 1;
  }
  if (arg[2 + n] == '=') {
    *inline_val = arg + 3 + n;
    return 1;
  }
  return 0;
}

/* "--name...": taken as a missing value, not as one ("--path --k 3");
 * such a value can still be given as "--path=--odd" */
static int is_long_option(const char *a) {
  return a[0] == '-' && a[1] == '-' && a[2] != '\0';
}

/* --model and --embed-model when found in the models directory */
static char model_buf[4096], embed_buf[4096];

/* Parses argv (after the command name). Returns -1 on a usage error (message
 * printed), 1 when help was printed, 0 otherwise. */
static int parse(dq_cli *cli, cli_command *c, int argc, char **argv) {
  static const char *common_with_arg[] = {"index",   "model",  "embed-model",
                                          "backend", "config", "threads",
                                          "set"};
  const char *threads = NULL;
  int only_positional = 0;
  cli->args = calloc((size_t)argc + 1, sizeof(char *));
  if (!cli->args) {
    cli_error(cli, "out of memory");
    return -1;
  }
  for (int i = 0; i < argc; i++) {
    char *a = argv[i];
    if (only_positional || a[0] != '-' || a[1] == '\0') {
      cli->args[cli->n_args++] = a;
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_positional = 1;
      continue;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      print_cmd_help(c);
      return 1;
    }
    if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      cli->verbosity++;
      continue;
    }
    if (strcmp(a, "-vv") == 0) {
      cli->verbosity += 2;
      continue;
    }
    if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      cli->verbosity = -1;
      continue;
    }
    if (strcmp(a, "--json") == 0) {
      cli->json = 1;
      continue;
    }
    if (a[1] != '-') {
      cli_error(cli, "unknown option '%s' (see 'docqa %s --help')", a, c->name);
      return -1;
    }
    const char *val = NULL;
    int matched = 0;
    for (size_t k = 0; k < sizeof common_with_arg / sizeof *common_with_arg;
         k++) {
      if (!match_long(a, common_with_arg[k], &val))
        continue;
      if (!val) {
        if (i + 1 >= argc || is_long_option(argv[i + 1])) {
          cli_error(cli, "option --%s needs a value", common_with_arg[k]);
          return -1;
        }
        val = argv[++i];
      }
      switch (k) {
      case 0: cli->index_dir = val; break;
      case 1:
        cli->model = cli_model_arg(val, model_buf, sizeof model_buf);
        break;
      case 2:
        cli->embed_model = cli_model_arg(val, embed_buf, sizeof embed_buf);
        break;
      case 3: cli->backend = val; break;
      case 4: cli->config = val; break;
      case 5: threads = val; break;
      case 6:
        if (cli->n_sets == (int)(sizeof cli->sets / sizeof *cli->sets)) {
          cli_error(cli, "too many --set options");
          return -1;
        }
        cli->sets[cli->n_sets++] = val;
        break;
      }
      matched = 1;
      break;
    }
    for (cli_option *o = c->opts; !matched && o && o->name; o++) {
      if (!match_long(a, o->name, &val))
        continue;
      matched = 1;
      if (o->has_arg && !val) {
        if (i + 1 >= argc || is_long_option(argv[i + 1])) {
          cli_error(cli, "option --%s needs a value (%s)", o->name,
                    o->metavar);
          return -1;
        }
        val = argv[++i];
      } else if (!o->has_arg && val) {
        cli_error(cli, "option --%s takes no value", o->name);
        return -1;
      }
      o->value = o->has_arg ? val : "1";
      if (o->repeat) {
        if (o->n_repeat >= o->max_repeat) {
          cli_error(cli, "option --%s given more than %d times", o->name,
                    o->max_repeat);
          return -1;
        }
        o->repeat[o->n_repeat++] = val;
      }
    }
    if (!matched) {
      cli_error(cli, "unknown option '%s' (see 'docqa %s --help')", a, c->name);
      return -1;
    }
  }
  if (threads) {
    long t = cli_parse_count(cli, "threads", threads, 0, 1024);
    if (t < 0)
      return -1;
    cli->threads = (int)t;
  }
  if (strcmp(cli->backend, "cpu") != 0 && strcmp(cli->backend, "cuda") != 0 &&
      strcmp(cli->backend, "auto") != 0) {
    cli_error(cli, "--backend must be cpu, cuda or auto, not '%s'",
              cli->backend);
    return -1;
  }
  if (c->max_args >= 0 && cli->n_args > c->max_args) {
    /* name the first extra one: often a value meant for an option, or an
     * unquoted question's second word */
    cli_error(cli, "unexpected argument '%s'%s; usage: %s",
              cli->args[c->max_args],
              c->max_args ? " (quote a question of several words)" : "",
              c->usage);
    return -1;
  }
  if (cli->n_args < c->min_args) {
    cli_error(cli, "expected more arguments; usage: %s", c->usage);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  dq_cli cli;
  memset(&cli, 0, sizeof cli);
  cli.cmd = "docqa";
  cli.backend = "auto";
  const char *env_index = getenv("DOCQA_INDEX");
  cli.index_dir = env_index && env_index[0] ? env_index : "./.docqa";

  if (argc < 2) {
    print_main_help(stderr);
    return DQ_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 ||
      strcmp(name, "help") == 0) {
    if (argc > 2) {
      for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, argv[2]) == 0) {
          print_cmd_help(commands[i]);
          return DQ_EXIT_OK;
        }
    }
    print_main_help(stdout);
    return DQ_EXIT_OK;
  }
  if (strcmp(name, "--version") == 0)
    name = "version";
  cli_command *c = NULL;
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(commands[i]->name, name) == 0)
      c = commands[i];
  if (!c) {
    fprintf(stderr, "docqa: unknown command '%s'\n\n", name);
    print_main_help(stderr);
    return DQ_EXIT_USAGE;
  }
  cli.cmd = c->name;
  int r = parse(&cli, c, argc - 2, argv + 2);
  int code;
  if (r < 0)
    code = DQ_EXIT_USAGE;
  else if (r > 0)
    code = DQ_EXIT_OK;
  else {
    cli.log.level = cli.verbosity < 0    ? DQ_LOG_ERROR
                    : cli.verbosity == 0 ? DQ_LOG_WARN
                    : cli.verbosity == 1 ? DQ_LOG_INFO
                    : cli.verbosity == 2 ? DQ_LOG_DEBUG
                                         : DQ_LOG_TRACE;
    cli.log.fn = cli_log_sink;
    cli.log.user = &cli;
    code = c->run(&cli, c->opts);
  }
  free(cli.args);
  return code;
}
