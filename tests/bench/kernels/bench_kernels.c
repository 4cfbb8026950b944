/*
 * bench_kernels.c - speed of dq_matmul per weight type at model shapes:
 * decode (one token: matrix-vector, reported as GB/s of weight bytes read)
 * and prefill (64 tokens: reported as GFLOP/s, 2 n_out n_in n_tok flops),
 * and of the attention block kernel dq_attn_run (--mode attn: one KV head of
 * head size 64 against 1,024 or 4,096 keys, F16 panels or F32, blocks of 1,
 * 3 - a GQA group in decode - and DQ_ATTN_QB queries; ns per key and
 * query and GFLOP/s at 4 x 64 flops per key and query; and a GSM layer's
 * cache of 3 interleaved heads, 6,656 entries, in blocks of 8 and of
 * DQ_ATTN_QB queries, F16 and 8-bit panels: bench_attn_gsm), and of
 * sampling's top-k selection (--mode topk: bench_topk, against a qsort),
 * with 1 and 2 threads, on every ISA path the CPU runs. The named reference
 * in the same run is the scalar path: each line prints its ratio to it.
 * Times are medians of repeated calls (at least 3, about 0.2 s each).
 *
 *   bench_kernels [--type T] [--isa scalar|avx2|avx512]
 *                 [--mode mv|mm|attn|topk]
 *                 [--threads 1|2] [--shape N_INxN_OUT] [--quick]
 * (each filter defaults to all; --quick shortens every measurement)
 */
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median seconds per call. */
static double time_matmul(dq_threadpool *pool, const dq_cpu_caps *caps, int type,
                          const void *w, int64_t n_out, int64_t n_in,
                          const float *x, int64_t n_tok, float *y, double budget) {
  double t[64];
  int n = 0;
  double start = dq_now_ms();
  dq_matmul(pool, caps, type, w, n_out, n_in, x, n_tok, y); /* warm up */
  while (n < 64 && (n < 3 || dq_now_ms() - start < budget * 1e3)) {
    double t0 = dq_now_ms();
    dq_matmul(pool, caps, type, w, n_out, n_in, x, n_tok, y);
    t[n++] = (dq_now_ms() - t0) * 1e-3;
  }
  qsort(t, (size_t)n, sizeof t[0], cmp_double);
  return t[n / 2];
}

/* Median seconds per dq_attn_run call of block b on path c. */
static double time_attn(const dq_cpu_caps *c, const dq_attn_block *b,
                        double budget) {
  double t[64];
  int n = 0;
  double start = dq_now_ms();
  dq_attn_run(c, b);
  while (n < 64 && (n < 3 || dq_now_ms() - start < budget * 1e3)) {
    double t0 = dq_now_ms();
    for (int r = 0; r < 20; r++)
      dq_attn_run(c, b);
    t[n++] = (dq_now_ms() - t0) * 1e-3 / 20;
  }
  qsort(t, (size_t)n, sizeof t[0], cmp_double);
  return t[n / 2];
}

static void bench_attn(const dq_cpu_caps *caps, const char *want_isa,
                       double budget) {
  enum { HD = 64, NMAX = 4096 };
  float *k = malloc(sizeof(float) * NMAX * HD), *v = malloc(sizeof(float) * NMAX * HD);
  float *kt = malloc(sizeof(float) * NMAX * HD);
  dq_f16 *kth = malloc(sizeof(dq_f16) * NMAX * HD), *vh = malloc(sizeof(dq_f16) * NMAX * HD);
  float *q = malloc(sizeof(float) * DQ_ATTN_QB * HD), *o = malloc(sizeof(float) * DQ_ATTN_QB * HD);
  float *p = malloc(sizeof(float) * DQ_ATTN_QB * NMAX);
  for (int i = 0; i < NMAX * HD; i++) {
    k[i] = sinf((float)i * 0.37f);
    v[i] = cosf((float)i * 0.11f);
    vh[i] = dq_f32_to_f16(v[i]);
  }
  for (int i = 0; i < DQ_ATTN_QB * HD; i++)
    q[i] = sinf((float)i * 0.7f) * 0.3f;
  printf("%-5s %-10s %-4s %-7s %3s %10s %9s %9s %7s\n", "attn", "keys", "nq",
         "isa", "thr", "ns/(k.q)", "", "GFLOP/s", "x_scalar");
  static const int ns[] = {1024, NMAX}, nqs[] = {1, 3, DQ_ATTN_QB};
  for (int ni = 0; ni < 2; ni++) {
    int n = ns[ni];
    dq_attn_pack_k(k, HD, 0, n, n, HD, kt);
    for (int i = 0; i < n * HD; i++)
      kth[i] = dq_f32_to_f16(kt[i]);
    for (int f16 = 1; f16 >= 0; f16--)
      for (int qi = 0; qi < 3; qi++) {
        dq_attn_block b = {.kt = f16 ? (const void *)kth : (const void *)kt,
                           .v = f16 ? (const void *)vh : (const void *)v,
                           .v_stride = HD, .f16 = f16, .n = n, .hd = HD,
                           .scale = 0.125f, .nq = nqs[qi], .p = p,
                           .p_stride = (size_t)n};
        for (int i = 0; i < b.nq; i++) {
          b.q[i] = q + i * HD;
          b.o[i] = o + i * HD;
          b.lo[i] = 0;
          b.hi[i] = n - b.nq + 1 + i; /* causal tail, as in prefill */
        }
        double t_scalar = 0;
        for (int l = DQ_ISA_SCALAR; l <= (int)caps->isa; l++) {
          dq_cpu_caps c = dq_cpu_caps_limit(*caps, (dq_isa)l);
          if (c.isa != (dq_isa)l)
            continue;
          int selected = !strcmp(want_isa, "all") || !strcmp(want_isa, dq_isa_name(c.isa));
          if (!selected && l != DQ_ISA_SCALAR)
            continue;
          double t = time_attn(&c, &b, l == DQ_ISA_SCALAR ? budget / 4 : budget);
          if (l == DQ_ISA_SCALAR)
            t_scalar = t;
          if (!selected)
            continue;
          double kq = (double)n * b.nq;
          char keys[32];
          snprintf(keys, sizeof keys, "%d%s", n, f16 ? "xf16" : "xf32");
          printf("%-5s %-10s %-4d %-7s %3d %10.2f %9s %9.2f %7.2f\n", "attn",
                 keys, b.nq, dq_isa_name(c.isa), 1, t / kq * 1e9, "",
                 kq * 4 * HD / t * 1e-9, t_scalar / t);
          fflush(stdout);
        }
      }
  }
  free(k); free(v); free(kt); free(kth); free(vh); free(q); free(o); free(p);
}

/* As a GSM layer of SmolLM2-135M reads its cache in prefill: F16 key
 * panels and value rows of 3 KV heads interleaved (row 192 halves), 6,656
 * entries (4,096 memory slots, window, the chunk), 96 queries per head
 * (32 tokens x a group of 3) in blocks of 8 or of DQ_ATTN_QB, head after
 * head, each block's probabilities added up as gsm.c does. The working set
 * of one head (1.7 MiB of keys and values) is about L2's size. */
static void bench_attn_gsm(const dq_cpu_caps *caps, const char *want_isa,
                           double budget) {
  enum { HD = 64, NKV = 3, RE = NKV * HD, N = 6656, NQ = 96 };
  dq_f16 *kt = malloc(sizeof(dq_f16) * N * RE), *vh = malloc(sizeof(dq_f16) * N * RE);
  float *q = malloc(sizeof(float) * NQ * HD), *o = malloc(sizeof(float) * NQ * HD);
  float *p = malloc(sizeof(float) * DQ_ATTN_QB * N), *acc = calloc(N, sizeof(float));
  /* the same rows as 8-bit panels (a Q8_0 GSM cache): per 16 entries the
   * key panels of the 3 heads, then their value panels */
  size_t kpb = dq_attn_q8k_bytes(HD), vpb = dq_attn_q8v_bytes(HD);
  uint8_t *k8 = calloc((size_t)N / 16 * NKV, kpb), *v8 = calloc((size_t)N / 16 * NKV, vpb);
  for (int i = 0; i < N * RE; i++) {
    kt[i] = dq_f32_to_f16(sinf((float)i * 0.37f));
    vh[i] = dq_f32_to_f16(cosf((float)i * 0.11f));
  }
  for (int r = 0; r < N; r++)
    for (int g = 0; g < NKV; g++) {
      float kr[HD], vr[HD];
      for (int d = 0; d < HD; d++) {
        kr[d] = sinf((float)(r * RE + g * HD + d) * 0.37f);
        vr[d] = cosf((float)(r * RE + g * HD + d) * 0.11f);
      }
      dq_attn_q8_put_key(k8 + ((size_t)(r / 16) * NKV + g) * kpb, r % 16, HD, kr);
      dq_attn_q8_put_value(v8 + ((size_t)(r / 16) * NKV + g) * vpb, r % 16, HD, vr);
    }
  for (int i = 0; i < NQ * HD; i++)
    q[i] = sinf((float)i * 0.7f) * 0.3f;
  static const int qbs[] = {8, DQ_ATTN_QB};
  for (int l = DQ_ISA_SCALAR; l <= (int)caps->isa; l++) {
    dq_cpu_caps c = dq_cpu_caps_limit(*caps, (dq_isa)l);
    if (c.isa != (dq_isa)l || l == DQ_ISA_SCALAR ||
        (strcmp(want_isa, "all") && strcmp(want_isa, dq_isa_name(c.isa))))
      continue;
    for (int bi = 0; bi < 4; bi++) {
      int qb = qbs[bi % 2], q8 = bi >= 2;
      double t[16];
      int nt = 0;
      double start = dq_now_ms();
      while (nt < 16 && (nt < 3 || dq_now_ms() - start < budget * 1e3)) {
        double t0 = dq_now_ms();
        for (int g = 0; g < NKV; g++)
          for (int i0 = 0; i0 < NQ; i0 += qb) {
            dq_attn_block b = {.kt = kt + (size_t)g * HD * DQ_ATTN_PANEL,
                               .kt_stride = (size_t)RE * DQ_ATTN_PANEL,
                               .v = vh + (size_t)g * HD, .v_stride = RE,
                               .f16 = 1, .n = N, .hd = HD, .scale = 0.125f,
                               .nq = qb, .p = p, .p_stride = N};
            if (q8) {
              b.kt = k8 + (size_t)g * kpb, b.kt_stride = NKV * kpb;
              b.v = v8 + (size_t)g * vpb, b.v_stride = NKV * vpb;
              b.f16 = 0, b.q8 = 1;
            }
            for (int i = 0; i < qb; i++) {
              b.q[i] = q + (size_t)(i0 + i) * HD;
              b.o[i] = o + (size_t)(i0 + i) * HD;
              b.lo[i] = 0;
              b.hi[i] = N - NQ / 3 + (i0 + i) / 3 + 1; /* causal tail */
            }
            dq_attn_run(&c, &b);
            for (int i = 0; i < qb; i++)
              dq_add(acc, acc, p + (size_t)i * N, b.hi[i]);
          }
        t[nt++] = (dq_now_ms() - t0) * 1e-3;
      }
      qsort(t, (size_t)nt, sizeof t[0], cmp_double);
      double kq = (double)N * NQ * NKV;
      printf("%-5s %-10s %-4d %-7s %3d %10.2f\n", "attn",
             q8 ? "gsm6656x3hq8" : "gsm6656x3h", qb, dq_isa_name(c.isa), 1,
             t[nt / 2] / kq * 1e9);
      fflush(stdout);
    }
  }
  free(kt); free(vh); free(q); free(o); free(p); free(acc); free(k8); free(v8);
}

/* --mode topk: dq_top_k (sampling's candidates) over a row of logits of a
 * SmolLM2 (49,152) and a Llama 3 (128,256) vocabulary, k = 1 (greedy),
 * 40 (the default top-k) and the whole row, with a repetition penalty on
 * 64 tokens; the reference in the same run is what the sampler did before:
 * a qsort of every id by logit. */
static const float *topk_row;
static int topk_cmp(const void *a, const void *b) {
  int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
  float u = topk_row[i], v = topk_row[j];
  return u > v ? -1 : u < v ? 1 : (i > j) - (i < j);
}

static double median_of(double (*fn)(void *), void *arg, double budget) {
  double t[16];
  int nt = 0;
  double start = dq_now_ms();
  while (nt < 16 && (nt < 3 || dq_now_ms() - start < budget * 1e3))
    t[nt++] = fn(arg);
  qsort(t, (size_t)nt, sizeof t[0], cmp_double);
  return t[nt / 2];
}

typedef struct {
  const float *x;
  int n, k, ref;
  const int32_t *pen;
  int32_t *ids;
  float *vals;
} topk_arg;

static double topk_once(void *p) {
  topk_arg *a = p;
  double t0 = dq_now_ms();
  if (a->ref) {
    for (int i = 0; i < a->n; i++)
      a->ids[i] = i;
    topk_row = a->x;
    qsort(a->ids, (size_t)a->n, sizeof *a->ids, topk_cmp);
  } else {
    dq_top_k(a->x, a->n, a->pen, 64, 1.1f, a->k, NULL, a->ids, a->vals);
  }
  return dq_now_ms() - t0;
}

static void bench_topk(double budget) {
  static const int vocabs[] = {49152, 128256};
  int32_t pen[64];
  for (int i = 0; i < 64; i++)
    pen[i] = i * 97 + 5;
  printf("%-5s %-8s %-7s %10s %10s %8s\n", "mode", "vocab", "k", "us/call",
         "qsort_us", "x_qsort");
  for (int vi = 0; vi < 2; vi++) {
    int n = vocabs[vi];
    float *x = malloc((size_t)n * sizeof *x), *vals = malloc((size_t)n * 4);
    int32_t *ids = malloc((size_t)n * 4);
    for (int i = 0; i < n; i++) /* a logit-like spread with ties */
      x[i] = roundf(sinf((float)i * 12.9898f) * 43758.5453f) / 4096.0f;
    topk_arg ref = {x, n, n, 1, pen, ids, vals};
    double tr = median_of(topk_once, &ref, budget);
    const int ks[] = {1, 40, n};
    for (int ki = 0; ki < 3; ki++) {
      topk_arg a = {x, n, ks[ki], 0, pen, ids, vals};
      double t = median_of(topk_once, &a, budget);
      printf("%-5s %-8d %-7d %10.1f %10.1f %8.1f\n", "topk", n, ks[ki],
             t * 1e3, tr * 1e3, tr / t);
    }
    free(x);
    free(vals);
    free(ids);
  }
}

int main(int argc, char **argv) {
  const char *want_type = "all", *want_isa = "all", *want_shape = "all";
  int want_mode = -1, want_threads = 0, quick = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(argv[i], "--type")) want_type = v, i++;
    else if (!strcmp(argv[i], "--isa")) want_isa = v, i++;
    else if (!strcmp(argv[i], "--shape")) want_shape = v, i++;
    else if (!strcmp(argv[i], "--mode"))
      want_mode = !strcmp(v, "topk")   ? 3
                  : !strcmp(v, "attn") ? 2
                                       : !strcmp(v, "mm"),
      i++;
    else if (!strcmp(argv[i], "--threads")) want_threads = atoi(v), i++;
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else {
      fprintf(stderr, "usage: %s [--type T] [--isa I] [--mode mv|mm|attn|topk] [--threads N] "
                      "[--shape N_INxN_OUT] [--quick]\n", argv[0]);
      return 2;
    }
  }
  double budget = quick ? 0.05 : 0.2;
  dq_cpu_caps caps = dq_cpu_probe();
  printf("cpu: %s\n", caps.desc);
  static const int types[] = {DQ_TYPE_Q4_0, DQ_TYPE_Q4_1, DQ_TYPE_Q5_0, DQ_TYPE_Q8_0,
                              DQ_TYPE_Q4_K, DQ_TYPE_Q6_K, DQ_TYPE_F16,  DQ_TYPE_BF16,
                              DQ_TYPE_F32};
  /* n_in, n_out: SmolLM2 ffn up/down, Gemma 3 270M ffn up/down, 4096^2 */
  static const int64_t shapes[][2] = {{576, 1536}, {1536, 576}, {640, 2048},
                                      {2048, 640}, {4096, 4096}};
  dq_threadpool *pools[2];
  dq_threadpool_new(1, &pools[0]);
  dq_threadpool_new(2, &pools[1]);
  if (want_mode == -1 || want_mode == 3)
    bench_topk(budget);
  if (want_mode == -1 || want_mode == 2) {
    bench_attn(&caps, want_isa, budget);
    bench_attn_gsm(&caps, want_isa, budget);
  }
  if (want_mode != 2 && want_mode != 3)
    printf("%-5s %-10s %-4s %-7s %3s %10s %9s %9s %7s\n", "type", "n_inxn_out",
           "mode", "isa", "thr", "us/call", "GB/s", "GFLOP/s", "x_scalar");
  for (size_t ti = 0;
       ti < sizeof types / sizeof types[0] && want_mode != 2 && want_mode != 3;
       ti++) {
    int type = types[ti];
    if (strcmp(want_type, "all") && strcmp(want_type, dq_type_name(type)))
      continue;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
      int64_t n_in = shapes[si][0], n_out = shapes[si][1];
      size_t rb;
      char shape[32];
      snprintf(shape, sizeof shape, "%lldx%lld", (long long)n_in, (long long)n_out);
      if (strcmp(want_shape, "all") && strcmp(want_shape, shape))
        continue;
      if (dq_type_row_bytes(type, n_in, &rb) != DQ_OK)
        continue; /* e.g. K-quants with n_in = 576 or 640 */
      float *wf = malloc(sizeof(float) * (size_t)n_in);
      uint8_t *w = malloc(rb * (size_t)n_out);
      for (int64_t o = 0; o < n_out; o++) {
        for (int64_t i = 0; i < n_in; i++)
          wf[i] = sinf((float)(o * 131 + i * 7)) * 0.1f;
        dq_quantize_row(type, wf, w + (size_t)o * rb, n_in);
      }
      const int64_t toks[2] = {1, 64};
      float *x = malloc(sizeof(float) * (size_t)(n_in * toks[1]));
      float *y = malloc(sizeof(float) * (size_t)(n_out * toks[1]));
      for (int64_t i = 0; i < n_in * toks[1]; i++)
        x[i] = cosf((float)i * 0.37f);
      for (int m = 0; m < 2; m++) {
        if (want_mode >= 0 && m != want_mode)
          continue;
        for (int th = 0; th < 2; th++) {
          if (want_threads && th + 1 != want_threads)
            continue;
          double t_scalar = 0;
          for (int l = DQ_ISA_SCALAR; l <= (int)caps.isa; l++) {
            dq_cpu_caps c = dq_cpu_caps_limit(caps, (dq_isa)l);
            if (c.isa != (dq_isa)l)
              continue;
            int selected = !strcmp(want_isa, "all") || !strcmp(want_isa, dq_isa_name(c.isa));
            if (!selected && l != DQ_ISA_SCALAR)
              continue;
            double t = time_matmul(pools[th], &c, type, w, n_out, n_in, x, toks[m], y,
                                   l == DQ_ISA_SCALAR && m == 1 ? budget / 4 : budget);
            if (l == DQ_ISA_SCALAR)
              t_scalar = t;
            if (!selected)
              continue;
            double bytes = (double)rb * (double)n_out;
            double flops = 2.0 * (double)n_in * (double)n_out * (double)toks[m];
            printf("%-5s %-10s %-4s %-7s %3d %10.1f %9.2f %9.2f %7.2f\n",
                   dq_type_name(type), shape, m ? "mm64" : "mv", dq_isa_name(c.isa),
                   th + 1, t * 1e6, bytes / t * 1e-9, flops / t * 1e-9,
                   t_scalar / t);
            fflush(stdout);
          }
        }
      }
      free(wf);
      free(w);
      free(x);
      free(y);
    }
  }
  dq_threadpool_free(pools[0]);
  dq_threadpool_free(pools[1]);
  return 0;
}
