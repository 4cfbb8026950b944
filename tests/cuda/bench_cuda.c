/*
 * bench_cuda.c - dq_bench_cuda: the engine's speed on a CUDA device, as
 * issue 8's benchmarks ask, for tests/cuda/device-check.sh.
 *
 *   dq_bench_cuda --model F [--pp 2048,32768] [--tg 64] [--reps 3]
 *                 [--gsm-pp 2048,32768,131072] [--recall 8192,32768]
 *                 [--gsm-tg 64] [--gsm-ctx 8192]
 *                 [--gsm-strategy score|time_decay|similarity]
 *                 [--device-rows] [--attn-both] [--backend cuda|cpu] [--json]
 *
 * Per model: the device's copy bandwidth (cudaMemcpy device to device of
 * 1 GiB, bytes read + written per second, median of 5 after a warm-up),
 * the weight bytes one decode step reads (every matrix once; the token
 * embedding only when the output projection is tied to it), hence the
 * bandwidth floor (tokens/s = bandwidth / bytes per token); decode tg:
 * --tg single-token steps after a 16-token prompt, tokens/s and its
 * fraction of the floor, with CUDA graphs (the default), op by op
 * (dq_model_set_graphs), and with graphs but the separate ops instead of
 * the fused products (dq_model_set_fused), the three in turn rep by rep;
 * sampled decode
 * (temperature 0.8, top-k 40): the candidates selected on the device
 * (dq_sampler_sample_seq) vs the logits row copied back and selected on
 * the host, alternating; prefill ppN: one dq_seq_eval of N tokens into a
 * fresh sequence (chunked by the engine), tokens/s; GSM prefill gsmN: the
 * same through a GSM sequence (default options: hybrid layout, 4096 memory
 * slots, chunks of 2048; its rows on the device, original positions) from
 * the first token, with its ms/token as a multiple of the first length's
 * (issue 8's goal: 128k within 1.5x of 2k) and the host's share: ms per
 * token spent choosing what to keep while the device waits. GSM decode
 * gsm-tgN: one GSM sequence (the same options, window and memory full)
 * reads --gsm-ctx tokens, then decodes blocks of N tokens (N a multiple of
 * 16, the eviction batch, puts as many compressions in every block), CUDA
 * graphs on and off alternating block by block (the first pair a warm-up),
 * tokens/s of each and how many steps ran as graphs. --gsm-strategy: the
 * GSM runs' memory strategy (default score). Medians of
 * --reps after one warm-up. --device-rows: GSM's device-rows path on the
 * CPU backend too (what a GPU runs, for its host-side cost). --attn-both:
 * each prefill again with the CUDA-core attention kernel instead of the
 * tensor cores (dq_cu_attn_set_mma), the ratio beside it. Coarse recall
 * recallN: one dq_model_recall of N tokens (question pinned at [1, 33),
 * spans of 512 tokens, the last 32 tokens the probe, a content-free probe
 * of 8 for calibration; default options: GSM from the first token with
 * its statistics, on device rows where the backend has them), tokens/s,
 * ms/token against the first length's, and how many spans got a question
 * mass (all of them, unless the statistics are lost). --attn HDs (no
 * model): the prefill attention kernels alone per head size (attn_bench
 * below); --moe-ids N: the expert products alone (moe_bench). Tokens are
 * pseudo-random vocabulary ids (fixed seed): speed does not depend on the
 * text.
 */
#include "cuda/cuda_ops.h"
#include "engine.h"
#include "gguf.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Device copy bandwidth in bytes/s (read + written), or 0 on failure. */
static double copy_bandwidth(void) {
  size_t n = (size_t)1 << 30;
  void *a = NULL, *b = NULL;
  if (cudaMalloc(&a, n) || cudaMalloc(&b, n)) {
    fprintf(stderr, "bandwidth: cudaMalloc failed\n");
    cudaFree(a);
    return 0;
  }
  cudaMemset(a, 1, n);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  double t[5];
  cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice); /* warm-up */
  for (int i = 0; i < 5; i++) {
    cudaEventRecord(e0, 0);
    cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t[i] = 2.0 * (double)n / (ms * 1e-3);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  return median(t, 5);
}

/* Bytes of weights one decode step reads. */
static double step_bytes(const char *path) {
  dq_gguf *g = NULL;
  dq_error err = {0};
  if (dq_gguf_open(path, &g, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 0;
  }
  double total = 0;
  int tied = dq_gguf_tensor_get(g, "output.weight") == NULL;
  for (uint64_t i = 0; i < dq_gguf_n_tensors(g); i++) {
    const dq_gguf_tensor *t = dq_gguf_tensor_at(g, i);
    if (!strcmp(t->name, "token_embd.weight") && !tied)
      continue; /* one row per token */
    total += (double)t->n_bytes;
  }
  dq_gguf_close(g);
  return total;
}

static int32_t *rand_tokens(int n, int n_vocab) {
  int32_t *t = malloc((size_t)n * sizeof *t);
  uint64_t r = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; i++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    t[i] = (int32_t)((r >> 33) % (uint64_t)n_vocab);
  }
  return t;
}

/* Prefill of n tokens into a fresh sequence (GSM when g), tokens/s and
 * the host's GSM compression ms per token: medians of reps after a
 * warm-up; inputs of 16k tokens and more run once, unwarmed. */
static int prefill(dq_model *m, const int32_t *tok, int n,
                   const dq_gsm_opts *g, int reps, double *tps, double *hc) {
  double v[50], cms[50];
  int runs = n >= 16384 ? 1 : reps, warm = n >= 16384 ? 0 : 1;
  const char *name = g ? "gsm" : "pp";
  for (int r = 0; r < runs + warm; r++) {
    dq_seq *s = NULL;
    if (g ? dq_seq_new_gsm(m, n + 1, g, &s) : dq_seq_new(m, n + 1, &s)) {
      fprintf(stderr, "%s%d: %s\n", name, n, dq_model_errmsg(m));
      return 1;
    }
    double a = now();
    if (dq_seq_eval(s, tok, n, DQ_LOGITS_LAST)) {
      fprintf(stderr, "%s%d: %s\n", name, n, dq_seq_errmsg(s));
      dq_seq_free(s);
      return 1;
    }
    if (r >= warm) {
      v[r - warm] = n / (now() - a);
      dq_gsm_stats gs;
      dq_seq_gsm_stats(s, &gs);
      cms[r - warm] = gs.compress_ms / n; /* host ms per token */
    }
    dq_seq_free(s);
  }
  *tps = median(v, runs);
  *hc = median(cms, runs);
  return 0;
}

/* One coarse-recall pass over n tokens (see the header), median seconds
 * of reps after a warm-up (16k tokens and more: once, unwarmed); *with_q:
 * spans whose question mass came out above 0. */
static int recall(dq_model *m, const int32_t *tok, int n, int dev_rows,
                  int reps, double *tps, int *n_spans, int *with_q) {
  int ns = (n - 64) / 512, runs = n >= 16384 ? 1 : reps, warm = !!(n < 16384);
  if (ns < 1) {
    fprintf(stderr, "recall%d: too short for one span of 512\n", n);
    return 1;
  }
  dq_span *sp = malloc((size_t)ns * sizeof *sp);
  float *ps = malloc((size_t)ns * sizeof *ps), *tq = malloc((size_t)ns * 4);
  double v[50];
  int rc = !sp || !ps || !tq;
  for (int i = 0; !rc && i < ns; i++)
    sp[i] = (dq_span){33 + 512 * i, 33 + 512 * (i + 1)};
  dq_recall_opts o;
  dq_recall_opts_init(&o);
  o.gsm.device_rows = dev_rows;
  o.calib_probe = tok + 40; /* any 8 tokens */
  o.n_calib = 8;
  dq_span q = {1, 33}, probe = {n - 32, n};
  for (int r = 0; !rc && r < runs + warm; r++) {
    double a = now();
    if (dq_model_recall(m, tok, n, sp, ns, q, probe, &o, ps, tq)) {
      fprintf(stderr, "recall%d: %s\n", n, dq_model_errmsg(m));
      rc = 1;
      break;
    }
    if (r >= warm)
      v[r - warm] = n / (now() - a);
  }
  if (!rc) {
    *tps = median(v, runs);
    *n_spans = ns;
    *with_q = 0;
    for (int i = 0; i < ns; i++)
      *with_q += tq[i] > 0;
  }
  free(sp);
  free(ps);
  free(tq);
  return rc;
}

/* GSM decode (see the header): ctx tokens read, then 2 * (reps + 1)
 * blocks of tg steps, graphs on (even blocks) and off; prints its result. */
static int gsm_decode(dq_model *m, const dq_gsm_opts *go, int ctx, int tg,
                      int reps, int n_vocab, int json, int first) {
  int n = ctx + 2 * (reps + 1) * tg;
  int32_t *tok = rand_tokens(n, n_vocab);
  dq_seq *s = NULL;
  double v[2][50];
  dq_graph_stats gs0, gs1;
  dq_model_graph_stats(m, &gs0);
  int rc = !tok || dq_seq_new_gsm(m, n + 1, go, &s) != DQ_OK;
  if (!rc && dq_seq_eval(s, tok, ctx, DQ_LOGITS_LAST)) {
    fprintf(stderr, "gsm-tg%d: %s\n", tg, dq_seq_errmsg(s));
    rc = 1;
  } else if (rc) {
    fprintf(stderr, "gsm-tg%d: %s\n", tg, dq_model_errmsg(m));
  }
  for (int b = 0, p = ctx; !rc && b < 2 * (reps + 1); b++) {
    int off = b % 2;
    dq_model_set_graphs(m, off ? DQ_GRAPHS_OFF : DQ_GRAPHS_ON);
    double a = now();
    for (int i = 0; i < tg && !rc; i++, p++)
      if (dq_seq_eval(s, tok + p, 1, DQ_LOGITS_LAST)) {
        fprintf(stderr, "gsm-tg%d: %s\n", tg, dq_seq_errmsg(s));
        rc = 1;
      }
    if (b >= 2)
      v[off][b / 2 - 1] = tg / (now() - a);
  }
  dq_gsm_stats st;
  memset(&st, 0, sizeof st);
  dq_seq_gsm_stats(s, &st);
  dq_seq_free(s);
  free(tok);
  dq_model_set_graphs(m, DQ_GRAPHS_AUTO);
  dq_model_graph_stats(m, &gs1);
  if (rc)
    return rc;
  double on = median(v[0], reps), off = median(v[1], reps);
  unsigned long long n_gr = gs1.n_launched - gs0.n_launched;
  unsigned long long n_in = gs1.n_instantiated - gs0.n_instantiated;
  unsigned long long n_on = (unsigned long long)tg * (reps + 1);
  if (json)
    printf("%s{\"test\": \"gsm-tg%d\", \"ctx\": %d, \"tok_s\": %.2f, "
           "\"tok_s_no_graphs\": %.2f, \"graph_steps\": %llu, "
           "\"steps_graphs_on\": %llu, \"graph_instantiations\": %llu, "
           "\"entries\": %d}",
           first ? "" : ", ", tg, ctx, on, off, n_gr, n_on, n_in,
           st.max_entries);
  else
    printf("gsm-tg%-3d %10.2f tok/s  after %d tokens on GSM (%d entries per "
           "layer); op by op %.2f tok/s (graphs x%.2f; %llu of %llu steps "
           "as graphs, %llu instantiations%s%s)\n",
           tg, on, ctx, st.max_entries, off, off > 0 ? on / off : 0, n_gr,
           n_on, n_in, gs1.off_reason ? "; off: " : "",
           gs1.off_reason ? gs1.off_reason : "");
  return 0;
}

/* Random F16 bits of magnitude 2^-3 .. 2 (any layout will do for speed). */
static void rand_halves(uint16_t *h, size_t n, uint64_t *r) {
  for (size_t i = 0; i < n; i++) {
    *r = *r * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t b = (uint32_t)(*r >> 33);
    h[i] = (uint16_t)((b & 0x8000u) | ((12u + (b >> 16) % 4u) << 10) |
                      (b & 0x3ffu));
  }
}

/* Medians of reps calls (after a warm-up) of run(ctx, path) for paths 0
 * and 1, timed by events on the default stream, into ms[]; nonzero when
 * a call or the timing failed. */
typedef int (*timed_fn)(void *ctx, int path);
static int time_paths(timed_fn run, void *ctx, int reps, double ms[2]) {
  cudaEvent_t e0 = NULL, e1 = NULL;
  if (cudaEventCreate(&e0) || cudaEventCreate(&e1)) {
    if (e0)
      cudaEventDestroy(e0);
    return 1;
  }
  int rc = 0;
  for (int path = 0; path < 2 && !rc; path++) {
    double t[50];
    for (int i = 0; i <= reps && !rc; i++) {
      cudaEventRecord(e0, 0);
      rc = run(ctx, path);
      cudaEventRecord(e1, 0);
      rc = rc || cudaEventSynchronize(e1);
      float f = 0;
      cudaEventElapsedTime(&f, e0, e1);
      if (i > 0)
        t[i - 1] = f;
    }
    ms[path] = rc ? 0 : median(t, reps);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return rc;
}

/* attn_bench's call: the tensor cores (path 0) or the CUDA-core kernel */
static int attn_run(void *ctx, int path) {
  dq_cu_attn_set_mma(path == 0);
  return dq_cu_attention(NULL, (const dq_attn *)ctx);
}

/* The prefill attention alone (--attn): per head size, one causal prefill
 * of n tokens from position 0 over F16 caches, 16 query heads over 4 KV
 * heads, on the tensor cores (attn_mma) and on the CUDA-core kernel;
 * medians of reps after a warm-up; TFLOPS of the causal half's products
 * (4 hd flops per head and visible key). */
static int attn_bench(const char *hds, int n, int reps, int json,
                      int *first) {
  const int nh = 16, nkv = 4;
  char why[256] = "";
  int sc = dq_cu_attn_selfcheck(NULL, why, sizeof why);
  if (sc)
    fprintf(stderr, "attention self-check: %s\n", why);
  for (const char *p = hds; *p;) {
    int hd = atoi(p);
    const char *c = strchr(p, ',');
    p = c ? c + 1 : p + strlen(p);
    if (hd <= 0)
      continue;
    size_t re = (size_t)nkv * hd, rows = ((size_t)n + 15) / 16 * 16;
    size_t nq = (size_t)n * nh * hd, nc = rows * re;
    float *hq = malloc(nq * 4);
    uint16_t *hc = malloc(nc * 2);
    void *dq = NULL, *dk = NULL, *dv = NULL, *dout = NULL;
    uint64_t r = 42;
    int rc = !hq || !hc || cudaMalloc(&dq, nq * 4) ||
             cudaMalloc(&dk, nc * 2) || cudaMalloc(&dv, nc * 2) ||
             cudaMalloc(&dout, nq * 4);
    if (!rc) {
      for (size_t i = 0; i < nq; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        hq[i] = (float)(r >> 40) / 8388608.0f - 1.0f;
      }
      rand_halves(hc, nc, &r);
      rc = cudaMemcpy(dq, hq, nq * 4, cudaMemcpyHostToDevice) ||
           cudaMemcpy(dk, hc, nc * 2, cudaMemcpyHostToDevice);
      rand_halves(hc, nc, &r);
      rc = rc || cudaMemcpy(dv, hc, nc * 2, cudaMemcpyHostToDevice);
    }
    dq_attn a = {.q = dq, .k = dk, .v = dv, .store = DQ_STORE_F16,
                 .n_tok = n, .pos0 = 0, .n_kv = n, .n_head = nh,
                 .n_head_kv = nkv, .head_dim = hd, .causal = 1,
                 .scale = 0.125f, .out = dout};
    double ms[2] = {0, 0};
    rc = rc || time_paths(attn_run, &a, reps, ms);
    dq_cu_attn_set_mma(1);
    if (rc)
      fprintf(stderr, "attention hd %d: %s\n", hd,
              cudaGetErrorString(cudaGetLastError()));
    double fl = 4.0 * hd * nh * ((double)n * (n + 1) / 2);
    if (!rc && json)
      printf("%s{\"test\": \"attn_hd%d_pp%d\", \"ms_tensor_cores\": %.4f, "
             "\"ms_cuda_cores\": %.4f, \"tflops_tensor_cores\": %.1f, "
             "\"tflops_cuda_cores\": %.1f, \"self_check\": %d}",
             *first ? "" : ", ", hd, n, ms[0], ms[1], fl / ms[0] * 1e-9,
             fl / ms[1] * 1e-9, sc);
    else if (!rc)
      printf("attn-hd%-3d pp%d: tensor cores %.3f ms (%.1f TFLOPS), "
             "cuda-core %.3f ms (%.1f TFLOPS): x%.2f%s\n",
             hd, n, ms[0], fl / ms[0] * 1e-9, ms[1], fl / ms[1] * 1e-9,
             ms[1] / ms[0], sc ? " (self-check failed: both cuda-core)" : "");
    *first = *first && rc;
    free(hq);
    free(hc);
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
    if (rc)
      return 1;
  }
  return 0;
}

/* moe_bench's call: grouped by expert (path 0) or one pair a CTA */
typedef struct moe_call {
  dq_cu_mm *mm;
  const void *w;
  size_t rb;
  int rows, cols, n_pairs, n_exp, x_div;
  const int32_t *ids;
  const float *x;
  float *y;
} moe_call;
static int moe_run(void *ctx, int path) {
  const moe_call *c = (const moe_call *)ctx;
  return dq_cu_matvec_ids(c->mm, DQ_TYPE_Q4_K, c->w, c->rb, c->rows, c->cols,
                          0, c->ids, c->n_pairs, path == 0 ? c->n_exp : 0,
                          c->x, c->x_div, c->y);
}

/* The expert products alone (--moe-ids N): N (token, expert) pairs of
 * random experts among n_exp (--moe-experts, 64), x rows shared by 6
 * pairs (top-6, gate/up's
 * form), Q4_K experts of 1408 x 2048 (DeepSeek-V2-Lite's gate and up):
 * dq_cu_matvec_ids grouped by expert (n_expert given) and one pair a CTA
 * (n_expert 0), medians of reps after a warm-up; the bytes of the experts
 * the pairs use per ms as if each were read once per pair. */
static int moe_bench(int n_pairs, int n_exp, int reps, int json,
                     int *first) {
  const int rows = 1408, cols = 2048, x_div = 6;
  const size_t rb = (size_t)cols / 256 * 144, mat = rb * rows;
  const int n_x = (n_pairs + x_div - 1) / x_div;
  uint16_t *hw = malloc(mat * n_exp);
  int32_t *ids = malloc((size_t)n_pairs * 4);
  float *hx = malloc((size_t)n_x * cols * 4);
  void *dw = NULL, *dx = NULL, *dy = NULL, *dids = NULL;
  dq_cu_mm *mm = NULL;
  uint64_t r = 7;
  int rc = !hw || !ids || !hx || cudaMalloc(&dw, mat * n_exp) ||
           cudaMalloc(&dx, (size_t)n_x * cols * 4) ||
           cudaMalloc(&dy, (size_t)n_pairs * rows * 4) ||
           cudaMalloc(&dids, (size_t)n_pairs * 4) || dq_cu_mm_new(NULL, &mm);
  if (!rc) {
    rand_halves(hw, mat * n_exp / 2, &r); /* scales included: finite */
    for (int p = 0; p < n_pairs; p++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      ids[p] = (int32_t)((r >> 33) % (uint64_t)n_exp);
    }
    for (size_t i = 0; i < (size_t)n_x * cols; i++)
      hx[i] = (float)(i % 7) * 0.25f - 0.75f;
    rc = cudaMemcpy(dw, hw, mat * n_exp, cudaMemcpyHostToDevice) ||
         cudaMemcpy(dids, ids, (size_t)n_pairs * 4, cudaMemcpyHostToDevice) ||
         cudaMemcpy(dx, hx, (size_t)n_x * cols * 4, cudaMemcpyHostToDevice);
  }
  double ms[2] = {0, 0};
  moe_call mc = {mm, dw, rb, rows, cols, n_pairs, n_exp, x_div, dids, dx, dy};
  rc = rc || time_paths(moe_run, &mc, reps, ms);
  if (rc)
    fprintf(stderr, "moe ids: %s\n",
            mm ? dq_cu_mm_last_step(mm) : cudaGetErrorString(cudaGetLastError()));
  double gb = (double)mat * n_pairs * 1e-9; /* once per pair */
  if (!rc && json)
    printf("%s{\"test\": \"moe_ids%d\", \"experts\": %d, "
           "\"ms_grouped\": %.4f, \"ms_per_pair\": %.4f}",
           *first ? "" : ", ", n_pairs, n_exp, ms[0], ms[1]);
  else if (!rc)
    printf("moe-ids%d Q4_K %d x 1408x2048: grouped by expert %.3f ms, one "
           "pair a CTA %.3f ms: x%.2f (%.0f / %.0f GB/s of per-pair "
           "weights)\n",
           n_pairs, n_exp, ms[0], ms[1], ms[1] / ms[0], gb / ms[0] * 1e3,
           gb / ms[1] * 1e3);
  *first = *first && rc;
  dq_cu_mm_free(mm);
  free(hw);
  free(ids);
  free(hx);
  cudaFree(dw);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dids);
  return rc != 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: dq_bench_cuda --model F [--pp 2048,32768] [--tg 64] "
          "[--reps 3] [--gsm-pp 2048,32768,131072] [--recall 8192,32768] "
          "[--gsm-tg 64] [--gsm-ctx 8192] "
          "[--gsm-strategy score|time_decay|similarity] [--device-rows] [--attn-both] [--backend cuda|cpu] [--json]\n"
          "       dq_bench_cuda [--attn 64,128,256] [--attn-tok 4096] "
          "[--moe-ids 12288] [--moe-experts 64] [--reps 3] [--json]\n");
}

int main(int argc, char **argv) {
  const char *model = NULL, *pp = "512,2048", *backend = "cuda", *gpp = "";
  const char *rpp = "", *attn = NULL;
  int tg = 64, reps = 3, json = 0, dev_rows = 0, attn_both = 0;
  int attn_tok = 4096, moe_ids = 0, moe_experts = 64;
  int gsm_tg = 0, gsm_ctx = 8192;
  const char *strategy = "score";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--json")) {
      json = 1;
      continue;
    }
    if (!strcmp(a, "--device-rows")) {
      dev_rows = 1;
      continue;
    }
    if (!strcmp(a, "--attn-both")) {
      attn_both = 1;
      continue;
    }
    if (!v) {
      usage();
      return 2;
    }
    if (!strcmp(a, "--model"))
      model = v;
    else if (!strcmp(a, "--pp"))
      pp = v;
    else if (!strcmp(a, "--tg"))
      tg = atoi(v);
    else if (!strcmp(a, "--reps"))
      reps = atoi(v);
    else if (!strcmp(a, "--backend"))
      backend = v;
    else if (!strcmp(a, "--gsm-pp"))
      gpp = v;
    else if (!strcmp(a, "--recall"))
      rpp = v;
    else if (!strcmp(a, "--gsm-tg"))
      gsm_tg = atoi(v);
    else if (!strcmp(a, "--gsm-ctx"))
      gsm_ctx = atoi(v);
    else if (!strcmp(a, "--gsm-strategy"))
      strategy = v;
    else if (!strcmp(a, "--attn"))
      attn = v;
    else if (!strcmp(a, "--attn-tok"))
      attn_tok = atoi(v);
    else if (!strcmp(a, "--moe-ids"))
      moe_ids = atoi(v);
    else if (!strcmp(a, "--moe-experts"))
      moe_experts = atoi(v);
    else {
      usage();
      return 2;
    }
    i++;
  }
  int strat = !strcmp(strategy, "score")        ? DQ_GSM_MERGE_SCORE
              : !strcmp(strategy, "time_decay") ? DQ_GSM_MERGE_TIME_DECAY
              : !strcmp(strategy, "similarity") ? DQ_GSM_MERGE_SIMILARITY
                                                : -1;
  if ((!model && !attn && moe_ids <= 0) || reps < 1 || reps > 50 ||
      tg < 0 || gsm_tg < 0 || gsm_ctx < 1 || strat < 0 || attn_tok < 1 ||
      moe_ids < 0 || moe_experts < 1 || moe_experts > 1024) {
    usage();
    return 2;
  }
  /* line-buffered: a run stopped by a time limit keeps its finished lines */
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (attn || moe_ids > 0) { /* kernels alone, no model */
    int first = 1;
    if (json)
      printf("{\"results\": [");
    int rc = attn ? attn_bench(attn, attn_tok, reps, json, &first) : 0;
    if (!rc && moe_ids > 0)
      rc = moe_bench(moe_ids, moe_experts, reps, json, &first);
    if (json)
      printf("]}\n");
    return rc;
  }
  int cuda = !strcmp(backend, "cuda");
  double bw = cuda ? copy_bandwidth() : 0, wb = step_bytes(model);
  dq_model_opts o;
  dq_model_opts_init(&o);
  o.backend = cuda ? DQ_BACKEND_CUDA : DQ_BACKEND_CPU;
  dq_model *m = NULL;
  dq_error err = {0};
  double t0 = now();
  if (dq_model_open(model, &o, &m, &err)) {
    fprintf(stderr, "dq_bench_cuda: %s\n", err.msg);
    return 1;
  }
  double t_load = now() - t0;
  dq_model_info info;
  dq_model_get_info(m, &info);
  if (!json)
    printf("model %s (%s, %d layers, n_embd %d), backend %s, load %.1f s\n"
           "copy bandwidth %.0f GB/s, weights per token %.3f GB, floor %.1f "
           "tok/s\n",
           model, info.arch, info.n_layer, info.n_embd, info.backend, t_load,
           bw * 1e-9, wb * 1e-9, bw > 0 && wb > 0 ? bw / wb : 0);
  else
    printf("{\"model\": \"%s\", \"backend\": \"%s\", \"bandwidth_gbs\": %.1f, "
           "\"bytes_per_token\": %.0f, \"results\": [",
           model, info.backend, bw * 1e-9, wb);
  int first = 1, rc = 0;
  /* decode: graphs on (g = 0), off (g = 1), and on with the separate ops
   * instead of the fused products (g = 2), in turn */
  if (tg > 0) {
    int32_t *tok = rand_tokens(16 + tg, info.n_vocab);
    double v[3][50];
    dq_graph_stats gs0, gs1;
    dq_model_graph_stats(m, &gs0);
    for (int rg = 0; rg < 3 * (reps + 1) && !rc; rg++) {
      int r = rg / 3, g = rg % 3;
      dq_model_set_graphs(m, g == 1 ? DQ_GRAPHS_OFF : DQ_GRAPHS_ON);
      dq_model_set_fused(m, g != 2);
      dq_seq *s = NULL;
      if (dq_seq_new(m, 16 + tg + 1, &s) ||
          dq_seq_eval(s, tok, 16, DQ_LOGITS_LAST)) {
        fprintf(stderr, "decode: %s\n",
                s ? dq_seq_errmsg(s) : dq_model_errmsg(m));
        rc = 1;
        dq_seq_free(s);
        break;
      }
      double a = now();
      for (int i = 0; i < tg && !rc; i++)
        if (dq_seq_eval(s, tok + 16 + i, 1, DQ_LOGITS_LAST)) {
          fprintf(stderr, "decode: %s\n", dq_seq_errmsg(s));
          rc = 1;
        }
      if (r > 0)
        v[g][r - 1] = tg / (now() - a);
      dq_seq_free(s);
    }
    dq_model_set_graphs(m, DQ_GRAPHS_AUTO);
    dq_model_set_fused(m, 1);
    dq_model_graph_stats(m, &gs1);
    if (!rc) {
      double tps = median(v[0], reps), tps1 = median(v[1], reps);
      double tps2 = median(v[2], reps);
      double floor = bw > 0 ? bw / wb : 0;
      unsigned long long n_gr = gs1.n_launched - gs0.n_launched;
      unsigned long long n_in = gs1.n_instantiated - gs0.n_instantiated;
      unsigned long long n_steps = 2ull * tg * (reps + 1); /* g = 0, 2 */
      if (json)
        printf("%s{\"test\": \"tg%d\", \"tok_s\": %.2f, \"floor_frac\": "
               "%.3f, \"tok_s_no_graphs\": %.2f, \"tok_s_unfused\": %.2f, "
               "\"graph_steps\": %llu, \"steps\": %llu, "
               "\"graph_instantiations\": %llu}",
               first ? "" : ", ", tg, tps, floor > 0 ? tps / floor : 0, tps1,
               tps2, n_gr, n_steps, n_in);
      else
        printf("tg%-6d %10.2f tok/s  %5.1f%% of the bandwidth floor; op by "
               "op %.2f tok/s (graphs x%.2f); separate ops %.2f tok/s (fused "
               "x%.2f; %llu of %llu graph steps as graphs, %llu "
               "instantiations%s%s)\n",
               tg, tps, floor > 0 ? 100 * tps / floor : 0, tps1,
               tps1 > 0 ? tps / tps1 : 0, tps2, tps2 > 0 ? tps / tps2 : 0,
               n_gr, n_steps, n_in, gs1.off_reason ? "; off: " : "",
               gs1.off_reason ? gs1.off_reason : "");
      first = 0;
    }
    free(tok);
  }
  /* sampled decode (temperature 0.8, top-k 40): the candidates selected on
   * the device (DQ_LOGITS_SAMPLE + dq_sampler_sample_seq) vs the row copied
   * back and selected on the host, alternating */
  if (tg > 0 && !rc) {
    int32_t *tok = rand_tokens(16, info.n_vocab);
    double v[2][50];
    dq_sampler_opts so;
    dq_sampler_opts_init(&so);
    so.temp = 0.8f;
    for (int rh = 0; rh < 2 * (reps + 1) && !rc; rh++) {
      int r = rh / 2, host = rh % 2;
      dq_seq *s = NULL;
      dq_sampler *sm = NULL;
      dq_logits_mode lm = host ? DQ_LOGITS_LAST : DQ_LOGITS_SAMPLE;
      int32_t t = 0;
      if (dq_sampler_new(&so, info.n_vocab, &sm) ||
          dq_seq_new(m, 16 + tg + 1, &s) || dq_seq_eval(s, tok, 16, lm)) {
        fprintf(stderr, "sampled decode: %s\n",
                s ? dq_seq_errmsg(s) : dq_model_errmsg(m));
        rc = 1;
      }
      double a = now();
      for (int i = 0; i <= tg && !rc; i++) {
        dq_status st =
            host ? dq_sampler_sample(sm, dq_seq_logits(s, NULL), &t)
                 : dq_sampler_sample_seq(sm, s, &t);
        if (st || (i < tg && dq_seq_eval(s, &t, 1, lm))) {
          fprintf(stderr, "sampled decode: %s\n", dq_seq_errmsg(s));
          rc = 1;
        }
      }
      if (r > 0)
        v[host][r - 1] = tg / (now() - a);
      dq_sampler_free(sm);
      dq_seq_free(s);
    }
    if (!rc) {
      double dev = median(v[0], reps), hst = median(v[1], reps);
      if (json)
        printf("%s{\"test\": \"tg%d_top40\", \"tok_s\": %.2f, "
               "\"tok_s_host_select\": %.2f}",
               first ? "" : ", ", tg, dev, hst);
      else
        printf("tg%d-sampled %7.2f tok/s  top-k 40 selected on the device; "
               "row copied back and selected on the host %.2f tok/s (x%.2f)"
               "\n",
               tg, dev, hst, hst > 0 ? dev / hst : 0);
      first = 0;
    }
    free(tok);
  }
  /* prefill at each length: full attention, then GSM */
  dq_gsm_opts go;
  dq_gsm_opts_init(&go);
  go.min_tokens = 0;
  go.device_rows = dev_rows;
  go.strategy = (dq_gsm_merge)strat;
  if (gsm_tg > 0 && !rc) {
    rc = gsm_decode(m, &go, gsm_ctx, gsm_tg, reps, info.n_vocab, json, first);
    first = first && rc;
  }
  for (int gsm = 0; gsm < 2 && !rc; gsm++) {
    double ms0 = 0; /* GSM: ms/token at the first length */
    for (const char *p = gsm ? gpp : pp; *p && !rc;) {
      int n = atoi(p);
      const char *c = strchr(p, ',');
      p = c ? c + 1 : p + strlen(p);
      if (n <= 0)
        continue;
      const char *name = gsm ? "gsm" : "pp";
      int32_t *tok = rand_tokens(n, info.n_vocab);
      double tps = 0, hc = 0, tps_fma = 0, hc_fma = 0;
      rc = prefill(m, tok, n, gsm ? &go : NULL, reps, &tps, &hc);
      if (!rc && attn_both) { /* the CUDA-core attention beside it */
        dq_cu_attn_set_mma(0);
        rc = prefill(m, tok, n, gsm ? &go : NULL, reps, &tps_fma, &hc_fma);
        dq_cu_attn_set_mma(1);
      }
      if (!rc) {
        double ms = 1e3 / tps;
        if (gsm && ms0 == 0)
          ms0 = ms;
        if (json) {
          printf("%s{\"test\": \"%s%d\", \"tok_s\": %.2f", first ? "" : ", ",
                 name, n, tps);
          if (attn_both)
            printf(", \"tok_s_cuda_core_attention\": %.2f", tps_fma);
          if (gsm)
            printf(", \"ms_ratio_first\": %.3f, "
                   "\"host_compress_ms_per_token\": %.4f",
                   ms / ms0, hc);
          printf("}");
        } else {
          printf("%s%-*d %10.2f tok/s  (%.3f ms/token", name, gsm ? 5 : 6, n,
                 tps, ms);
          if (gsm)
            printf(", %.2fx the first length's; host compression %.4f "
                   "ms/token",
                   ms / ms0, hc);
          if (attn_both)
            printf("; cuda-core attention %.2f tok/s: tensor cores x%.2f",
                   tps_fma, tps_fma > 0 ? tps / tps_fma : 0);
          printf(")\n");
        }
        first = 0;
      }
      free(tok);
    }
  }
  /* coarse recall at each length */
  double rms0 = 0;
  for (const char *p = rpp; *p && !rc;) {
    int n = atoi(p), ns = 0, wq = 0;
    const char *c = strchr(p, ',');
    p = c ? c + 1 : p + strlen(p);
    if (n <= 0)
      continue;
    int32_t *tok = rand_tokens(n, info.n_vocab);
    double tps = 0;
    rc = recall(m, tok, n, dev_rows, reps, &tps, &ns, &wq);
    free(tok);
    if (rc)
      break;
    double ms = 1e3 / tps;
    if (rms0 == 0)
      rms0 = ms;
    if (json)
      printf("%s{\"test\": \"recall%d\", \"tok_s\": %.2f, "
             "\"ms_ratio_first\": %.3f, \"spans\": %d, "
             "\"spans_with_question_mass\": %d}",
             first ? "" : ", ", n, tps, ms / rms0, ns, wq);
    else
      printf("recall%-3d %10.2f tok/s  (%.3f ms/token, %.2fx the first "
             "length's; question mass in %d of %d spans)\n",
             n, tps, ms, ms / rms0, wq, ns);
    first = 0;
  }
  if (json)
    printf("]}\n");
  dq_model_free(m);
  return rc;
}
