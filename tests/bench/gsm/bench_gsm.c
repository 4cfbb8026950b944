/*
 * bench_gsm.c - prefill time per token of GSM attention against the full
 * attention reference path, in the same run, at several input lengths
 * (default 2048 4096 8192 16384), plus the KV bytes each path holds.
 * Not a test (timings): bench_gsm MODEL.gguf [N_THREADS] [LEN...].
 * Full attention keeps an F16 cache of every position; GSM uses the
 * docqa.yaml defaults (hybrid, window 384 x 1.5, 6 anchors, 4 sinks,
 * score, memory 4096 slots, chunk 2048) with an F32 cache, bounded.
 * The input is generated prose (a numbered sentence repeated), so the
 * timings measure compute, not answer quality.
 */
#include "engine.h"
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t *make_tokens(dq_model *m, int n) {
  size_t cap = (size_t)n * 8 + 64, len = 0;
  char *text = malloc(cap);
  int32_t *t = NULL;
  int nt = 0;
  text[0] = 0;
  for (int i = 0; nt < n; i++) {
    /* ~12 tokens per sentence; re-tokenize only when the text may suffice */
    len += (size_t)snprintf(text + len, cap - len,
                            "Item %d of the report notes a change in the "
                            "schedule. ",
                            i);
    if (len + 128 >= cap || (i % 64 == 63)) {
      free(t);
      t = NULL;
      if (dq_model_tokenize(m, text, len, 1, &t, &nt) != DQ_OK)
        break;
      if (len + 128 >= cap && nt < n)
        break;
    }
  }
  free(text);
  if (nt < n) {
    free(t);
    return NULL;
  }
  return t;
}

static double run(dq_model *m, const int32_t *t, int n, const dq_gsm_opts *o,
                  size_t *kv_bytes, dq_gsm_stats *st) {
  dq_seq *s = NULL;
  dq_status rc = o ? dq_seq_new_gsm(m, n, o, &s) : dq_seq_new(m, n, &s);
  if (rc) {
    fprintf(stderr, "seq: %s\n", dq_model_errmsg(m));
    return -1;
  }
  double t0 = dq_now_ms();
  rc = dq_seq_eval(s, t, n, DQ_LOGITS_LAST);
  double ms = dq_now_ms() - t0;
  if (rc) {
    fprintf(stderr, "eval: %s\n", dq_seq_errmsg(s));
    ms = -1;
  }
  dq_seq_gsm_stats(s, st);
  *kv_bytes = o ? st->cache_bytes_alloc : dq_kv_bytes(&s->kv);
  dq_seq_free(s);
  return ms;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_gsm MODEL.gguf [N_THREADS] [LEN...]\n");
    return 2;
  }
  dq_model_opts mo;
  dq_model_opts_init(&mo);
  mo.backend = DQ_BACKEND_CPU;
  mo.n_threads = argc > 2 ? atoi(argv[2]) : 0;
  dq_model *m = NULL;
  dq_error err = {0};
  if (dq_model_open(argv[1], &mo, &m, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  int def[] = {2048, 4096, 8192, 16384}, *lens = def, n_lens = 4;
  int *user = NULL;
  if (argc > 3) {
    n_lens = argc - 3;
    user = malloc((size_t)n_lens * sizeof *user);
    for (int i = 0; i < n_lens; i++)
      user[i] = atoi(argv[3 + i]);
    lens = user;
  }
  printf("%8s %12s %12s %7s %14s %14s %10s %10s\n", "tokens", "full ms/tok",
         "gsm ms/tok", "speedup", "full KV bytes", "gsm KV bytes", "evicted",
         "entries");
  for (int i = 0; i < n_lens; i++) {
    int n = lens[i];
    int32_t *t = make_tokens(m, n);
    if (!t) {
      fprintf(stderr, "cannot make %d tokens\n", n);
      continue;
    }
    dq_gsm_opts o;
    dq_gsm_opts_init(&o);
    size_t kf = 0, kg = 0;
    dq_gsm_stats sf, sg;
    double mf = run(m, t, n, NULL, &kf, &sf);
    double mg = run(m, t, n, &o, &kg, &sg);
    printf("%8d %12.3f %12.3f %7.2f %14zu %14zu %10lld %10d\n", n, mf / n,
           mg / n, mg > 0 ? mf / mg : 0.0, kf, kg, (long long)sg.n_evicted,
           sg.max_entries);
    fflush(stdout);
    free(t);
  }
  free(user);
  dq_model_free(m);
  return 0;
}
