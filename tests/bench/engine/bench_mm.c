/*
 * bench_mm.c - prefill matmul speed of one thread, in GFLOP per CPU second
 * (CLOCK_THREAD_CPUTIME_ID, so other processes on a shared machine slow the
 * wall clock but not the figure), for the weight types and shapes of the
 * models scripts/bench-engine.sh compares: SmolLM2-135M (Q4_1, 576 x 1536)
 * and Gemma 3 270M (Q5_0/Q8_0/Q4_K/Q6_K, 640 x 2048). Flops = 2 n_out n_in
 * n_tok. Used to measure kernels/cpu changes before and after; not a test.
 * --stream: decode-sized products whose weights (over 128 MiB, far past the
 * caches) stream from memory, as Gemma 3's 262,144-row output head does:
 * reports GB/s of weights read (one token by default).
 * --layers: one token through SmolLM2-135M's 30 layers of Q4_1 products
 * (q k v o gate up down, each its own allocation, 66 MB in all, past the
 * caches), as its decode reads them: GB/s of weights.
 *
 *   bench_mm [--tok N] [--isa scalar|avx2|avx512] [--type NAME]
 *            [--stream | --layers]
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* --layers: SmolLM2-135M's products, layer by layer, one token. */
static int bench_layers(const dq_cpu_caps *caps, int64_t n_tok) {
  enum { N_LAYER = 30, N_MAT = 7 };
  static const int64_t shape[N_MAT][2] = {
      {576, 576}, {576, 192}, {576, 192}, {576, 576},
      {576, 1536}, {576, 1536}, {1536, 576}}; /* n_in, n_out */
  uint8_t *w[N_LAYER][N_MAT];
  size_t total = 0;
  float *x = malloc(sizeof(float) * 1536 * (size_t)n_tok);
  float *y = malloc(sizeof(float) * 1536 * (size_t)n_tok);
  float *wf = malloc(sizeof(float) * 1536);
  for (int64_t i = 0; i < 1536 * n_tok; i++)
    x[i] = (float)(i % 17) / 17.0f - 0.5f;
  for (int l = 0; l < N_LAYER; l++)
    for (int m = 0; m < N_MAT; m++) {
      size_t rb;
      dq_type_row_bytes(DQ_TYPE_Q4_1, shape[m][0], &rb);
      w[l][m] = malloc(rb * (size_t)shape[m][1]);
      for (int64_t o = 0; o < shape[m][1]; o++) {
        for (int64_t i = 0; i < shape[m][0]; i++)
          wf[i] = (float)((o * 31 + i * 7 + l) % 23) / 23.0f - 0.5f;
        dq_quantize_row(DQ_TYPE_Q4_1, wf, w[l][m] + (size_t)o * rb,
                        shape[m][0]);
      }
      total += rb * (size_t)shape[m][1];
    }
  double t[15];
  for (int r = -1; r < 15; r++) {
    double t0 = cpu_s();
    for (int l = 0; l < N_LAYER; l++)
      for (int m = 0; m < N_MAT; m++)
        dq_matmul(NULL, caps, DQ_TYPE_Q4_1, w[l][m], shape[m][1], shape[m][0],
                  x, n_tok, y);
    if (r >= 0)
      t[r] = cpu_s() - t0;
  }
  qsort(t, 15, sizeof t[0], cmp_double);
  printf("Q4_1  layers %6.1f GB/s of weights  (%.3f ms, %.1f MB)\n",
         (double)total / t[7] * 1e-9, t[7] * 1e3, (double)total * 1e-6);
  for (int l = 0; l < N_LAYER; l++)
    for (int m = 0; m < N_MAT; m++)
      free(w[l][m]);
  free(x), free(y), free(wf);
  return 0;
}

int main(int argc, char **argv) {
  int64_t n_tok = 64;
  const char *want_type = NULL;
  dq_isa isa = DQ_ISA_AVX512;
  int stream = 0, layers = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--stream") || !strcmp(argv[i], "--layers")) {
      *(argv[i][2] == 's' ? &stream : &layers) = 1;
      n_tok = 1;
      memmove(argv + i, argv + i + 1, sizeof *argv * (size_t)(argc - i));
      argc--;
      i--;
    }
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--tok"))
      n_tok = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--type"))
      want_type = argv[i + 1];
    else if (!strcmp(argv[i], "--isa"))
      isa = !strcmp(argv[i + 1], "scalar") ? DQ_ISA_SCALAR
            : !strcmp(argv[i + 1], "avx2") ? DQ_ISA_AVX2 : DQ_ISA_AVX512;
  }
  dq_cpu_caps caps = dq_cpu_caps_limit(dq_cpu_probe(), isa);
  if (layers) {
    printf("isa %s, %lld tokens, 1 thread, SmolLM2-135M's layers\n",
           caps.desc, (long long)n_tok);
    return bench_layers(&caps, n_tok);
  }
  typedef struct { int type; int64_t n_in, n_out; } mm_case;
  static const mm_case cache_cases[] = {
      {DQ_TYPE_Q4_1, 576, 1536}, {DQ_TYPE_Q4_1, 1536, 576},
      {DQ_TYPE_Q5_0, 640, 2048}, {DQ_TYPE_Q8_0, 640, 2048},
      {DQ_TYPE_Q4_K, 2048, 640}, {DQ_TYPE_Q6_K, 2048, 640},
      {DQ_TYPE_F32, 576, 1536},
      /* full units only, as in Llama-shaped models */
      {DQ_TYPE_Q4_0, 2048, 2048}, {DQ_TYPE_Q5_1, 2048, 2048},
  };
  static const mm_case stream_cases[] = {
      {DQ_TYPE_Q8_0, 640, 262144}, {DQ_TYPE_Q4_1, 576, 262144},
      {DQ_TYPE_Q5_0, 640, 262144}, {DQ_TYPE_Q4_K, 2048, 131072},
      {DQ_TYPE_Q6_K, 2048, 65536},
  };
  const mm_case *cases = stream ? stream_cases : cache_cases;
  size_t n_cases = stream ? sizeof stream_cases / sizeof *stream_cases
                          : sizeof cache_cases / sizeof *cache_cases;
  printf("isa %s, %lld tokens, 1 thread%s\n", caps.desc, (long long)n_tok,
         stream ? ", weights streamed from memory" : "");
  for (size_t c = 0; c < n_cases; c++) {
    int type = cases[c].type;
    int64_t n_in = cases[c].n_in, n_out = cases[c].n_out;
    if (want_type && strcmp(want_type, dq_type_name(type)))
      continue;
    size_t rb;
    dq_type_row_bytes(type, n_in, &rb);
    /* at most 64 distinct rows, repeated (timing does not depend on the
     * values) */
    int64_t n_uniq = n_out < 64 ? n_out : 64;
    float *wf = malloc((size_t)(n_in * n_uniq) * sizeof *wf);
    float *x = malloc((size_t)(n_in * n_tok) * sizeof *x);
    float *y = malloc((size_t)(n_out * n_tok) * sizeof *y);
    uint8_t *w = malloc(rb * (size_t)n_out);
    uint64_t s = 42;
    for (int64_t i = 0; i < n_in * n_uniq; i++) {
      s = s * 6364136223846793005u + 1;
      wf[i] = (float)((int)(s >> 40) % 2001 - 1000) / 1000.0f;
    }
    for (int64_t i = 0; i < n_in * n_tok; i++) {
      s = s * 6364136223846793005u + 1;
      x[i] = (float)((int)(s >> 40) % 2001 - 1000) / 1000.0f;
    }
    for (int64_t o = 0; o < n_out; o++)
      if (o < n_uniq)
        dq_quantize_row(type, wf + o * n_in, w + (size_t)o * rb, n_in);
      else
        memcpy(w + (size_t)o * rb, w + (size_t)(o % n_uniq) * rb, rb);
    double t[15];
    dq_matmul(NULL, &caps, type, w, n_out, n_in, x, n_tok, y);
    for (int r = 0; r < 15; r++) {
      double t0 = cpu_s();
      dq_matmul(NULL, &caps, type, w, n_out, n_in, x, n_tok, y);
      t[r] = cpu_s() - t0;
    }
    qsort(t, 15, sizeof t[0], cmp_double);
    double gf = 2.0 * (double)(n_out * n_in * n_tok) / t[7] * 1e-9;
    if (stream)
      printf("%-5s %5lldx%-6lld %6.1f GB/s of weights  (%.3f ms)\n",
             dq_type_name(type), (long long)n_in, (long long)n_out,
             (double)rb * (double)n_out / t[7] * 1e-9, t[7] * 1e3);
    else
      printf("%-5s %5lldx%-5lld %8.1f GFLOP/cpu-s  (%.3f ms)\n",
             dq_type_name(type), (long long)n_in, (long long)n_out, gf,
             t[7] * 1e3);
    free(wf), free(x), free(y), free(w);
  }
  return 0;
}
