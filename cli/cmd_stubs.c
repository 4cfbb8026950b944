/*
 * cmd_stubs.c - commands whose help and options are fixed (DESIGN.md
 * "Interfaces") but whose implementation has not landed yet. Each exits with
 * a clear "not yet implemented" message and code 2. A command moves to its
 * own cmd_<name>.c when it is implemented.
 */
#include "cli.h"

static cli_option ask_opts[] = {
    {.name = "doc", .has_arg = 1, .metavar = "PATH",
     .help = "read this whole document (repeatable)"},
    {.name = "effort", .has_arg = 1, .metavar = "high|max",
     .help = "high: fast path; max: more spans and a check pass"},
    {.name = "k", .has_arg = 1, .metavar = "N", .help = "passages to recall"},
    {0}};
cli_command cli_cmd_ask = {
    .name = "ask",
    .usage = "docqa ask QUESTION [--doc PATH]... [--effort high|max] [--k N]",
    .summary = "answer a question from the index, with citations",
    .help = "Retrieves passages, reads them with the local model and answers,\n"
            "citing path:line_start-line_end (section) for every claim.\n",
    .opts = ask_opts, .min_args = 1, .max_args = 1,
    .run = cli_not_implemented};

static cli_option xref_opts[] = {
    {.name = "kind", .has_arg = 1, .metavar = "def|ref|call",
     .help = "only definitions, references or calls"},
    {.name = "explain", .has_arg = 0, .help = "summarise usage with the model"},
    {0}};
cli_command cli_cmd_xref = {
    .name = "xref",
    .usage = "docqa xref SYMBOL [--kind def|ref|call] [--explain]",
    .summary = "definitions, references and callers of a symbol or defined term",
    .help = "Looks SYMBOL up in the symbols and references extracted at ingest:\n"
            "functions, types and macros in code; defined terms and section\n"
            "numbers in contracts. Output is file:line:col: context.\n",
    .opts = xref_opts, .min_args = 1, .max_args = 1,
    .run = cli_not_implemented};

static cli_option chat_opts[] = {
    {.name = "session", .has_arg = 1, .metavar = "NAME",
     .help = "session to create or resume"},
    {0}};
cli_command cli_cmd_chat = {
    .name = "chat",
    .usage = "docqa chat --session NAME",
    .summary = "multi-turn questions with a rolling summary, saved in the index",
    .help = "On a terminal: an interactive prompt. Otherwise one question per\n"
            "line of standard input.\n",
    .opts = chat_opts, .min_args = 0, .max_args = 0,
    .run = cli_not_implemented};

static cli_option generate_opts[] = {
    {.name = "raw", .has_arg = 0, .help = "plain completion, no chat template"},
    {.name = "max-tokens", .has_arg = 1, .metavar = "N",
     .help = "stop after N tokens"},
    {.name = "temp", .has_arg = 1, .metavar = "T",
     .help = "sampling temperature (0 = greedy)"},
    {.name = "seed", .has_arg = 1, .metavar = "S", .help = "sampling seed"},
    {0}};
cli_command cli_cmd_generate = {
    .name = "generate",
    .usage = "docqa generate PROMPT [--raw] [--max-tokens N] [--temp T] [--seed S]",
    .summary = "run the model on a prompt (chat template unless --raw)",
    .help = "", .opts = generate_opts, .min_args = 1, .max_args = 1,
    .run = cli_not_implemented};

cli_command cli_cmd_embed = {
    .name = "embed",
    .usage = "docqa embed TEXT...",
    .summary = "print embeddings of texts from the embedding model",
    .help = "", .opts = NULL, .min_args = 1, .max_args = -1,
    .run = cli_not_implemented};

cli_command cli_cmd_bench = {
    .name = "bench",
    .usage = "docqa bench engine|gsm|index|ingest [...]",
    .summary = "benchmarks, side by side with a named reference",
    .help = "", .opts = NULL, .min_args = 1, .max_args = -1,
    .run = cli_not_implemented};
