/*
 * progress.c - a one-line progress bar for long work (ingest, embedding,
 * model loading) drawn on stderr. It draws only when both stdout and stderr
 * are terminals and the user did not ask for -q, so pipes, --json and CI
 * logs stay clean. Redraws are throttled to 10 per second. A stage other
 * than the first (a file's OCR between ingest's files, embedding after
 * them) counts its ETA from when it began.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cli_progress {
  int enabled;
  double t_start_ms; /* of the first stage */
  char first[64];    /* its name */
  char sub[96];      /* another stage's (OCR of a file, embedding) */
  double t_sub_ms;   /* and when it began: its ETA counts from then */
  double t_last_ms;
  int drawn; /* a bar is on screen and must be cleared */
};

cli_progress *cli_progress_new(const dq_cli *cli) {
  cli_progress *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->enabled = cli->verbosity >= 0 && isatty(STDOUT_FILENO) &&
               isatty(STDERR_FILENO);
  p->t_start_ms = dq_now_ms();
  return p;
}

static void human(char *buf, size_t n, double v, const char *unit) {
  if (strcmp(unit, "bytes") == 0) {
    cli_format_bytes(buf, n, v);
  } else {
    snprintf(buf, n, "%.0f %s", v, unit);
  }
}

int cli_progress_cb(void *user, const char *stage, uint64_t done,
                    uint64_t total, const char *unit) {
  cli_progress *p = user;
  if (!p || !p->enabled)
    return 0;
  double now = dq_now_ms();
  if (!p->first[0])
    snprintf(p->first, sizeof p->first, "%s", stage);
  double t0 = p->t_start_ms;
  if (strcmp(stage, p->first) != 0) {
    if (strcmp(stage, p->sub) != 0) {
      snprintf(p->sub, sizeof p->sub, "%s", stage);
      p->t_sub_ms = now;
    }
    t0 = p->t_sub_ms;
  }
  int final = total && done >= total;
  if (!final && p->drawn && now - p->t_last_ms < 100)
    return 0;
  p->t_last_ms = now;
  char d[32], t[32], eta[32] = "";
  human(d, sizeof d, (double)done, unit);
  double elapsed_s = (now - t0) / 1e3;
  if (total) {
    human(t, sizeof t, (double)total, unit);
    double frac = (double)done / (double)total;
    if (frac > 0.02 && !final)
      snprintf(eta, sizeof eta, " ETA %.0fs", elapsed_s * (1 - frac) / frac);
    int width = 30, fill = (int)(frac * width + 0.5);
    if (fill > width)
      fill = width;
    char bar[64];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(width - fill));
    bar[width] = '\0';
    fprintf(stderr, "\r\033[K%s [%s] %s / %s%s", stage, bar, d, t, eta);
  } else {
    fprintf(stderr, "\r\033[K%s %s (%.0fs)", stage, d, elapsed_s);
  }
  fflush(stderr);
  p->drawn = 1;
  return 0;
}

void cli_progress_free(cli_progress *p) {
  if (!p)
    return;
  if (p->drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  free(p);
}
