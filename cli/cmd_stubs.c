/*
 * cmd_stubs.c - commands whose help and options are fixed (DESIGN.md
 * "Interfaces") but whose implementation has not landed yet. Each exits with
 * a clear "not yet implemented" message and code 2. A command moves to its
 * own cmd_<name>.c when it is implemented.
 */
#include "cli.h"

