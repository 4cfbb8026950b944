/*
 * test_matmul.c - dq_matmul against a naive loop of reference dot products
 * (each token quantized with dq_quantize_row, each output with
 * dq_vec_dot_ref), for every weight type, several shapes (odd row counts,
 * token counts around the tile size), with no pool, 1, 2 and 3 threads, at
 * every ISA level. Threaded and single-threaded results must be identical
 * bit for bit (same kernel, same order per output). Also exercises the
 * thread pool on its own: every thread runs every job exactly once.
 */
#include "kt.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  atomic_int calls[8];
  atomic_long sum;
} pool_ctx;

static void count_task(void *p, int ith, int nth) {
  pool_ctx *c = p;
  atomic_fetch_add(&c->calls[ith], 1);
  atomic_fetch_add(&c->sum, (long)nth);
}

static void test_pool(void) {
  for (int n = 1; n <= 4; n++) {
    dq_threadpool *pool = NULL;
    CHECK_EQ_INT(dq_threadpool_new(n, &pool), DQ_OK);
    CHECK_EQ_INT(dq_threadpool_size(pool), n);
    pool_ctx c;
    memset(&c, 0, sizeof c);
    for (int rep = 0; rep < 2000; rep++)
      dq_threadpool_run(pool, count_task, &c);
    for (int i = 0; i < n; i++)
      CHECK_EQ_INT(atomic_load(&c.calls[i]), 2000);
    CHECK_EQ_INT(atomic_load(&c.sum), 2000L * n * n);
    dq_threadpool_free(pool);
  }
  dq_threadpool *p = (dq_threadpool *)1;
  CHECK_EQ_INT(dq_threadpool_new(0, &p), DQ_ERR_ARG);
  dq_threadpool_free(NULL);
}

static void test_shape(dq_threadpool **pools, int n_pools, const dq_cpu_caps *caps,
                       int type, int64_t n_out, int64_t n_in, int64_t n_tok,
                       kt_rng *r) {
  const dq_type_info *ti = dq_type_get(type);
  size_t wrb = 0, arb = 0;
  dq_type_row_bytes(type, n_in, &wrb);
  dq_type_row_bytes(ti->vec_dot_type, n_in, &arb);
  float *wf = malloc(sizeof(float) * (size_t)(n_out * n_in));
  float *x = malloc(sizeof(float) * (size_t)(n_tok * n_in));
  uint8_t *w = malloc(wrb * (size_t)n_out), *a = malloc(arb);
  float *want = malloc(sizeof(float) * (size_t)(n_tok * n_out));
  float *got = malloc(sizeof(float) * (size_t)(n_tok * n_out));
  float *first = malloc(sizeof(float) * (size_t)(n_tok * n_out));
  kt_fill(r, wf, n_out * n_in);
  kt_fill(r, x, n_tok * n_in);
  for (int64_t o = 0; o < n_out; o++)
    dq_quantize_row(type, wf + o * n_in, w + (size_t)o * wrb, n_in);
  /* naive: Y[t][o] = ref_dot(W[o], quant(X[t])) ; S[t][o] = sum |w a| */
  double *S = calloc((size_t)(n_tok * n_out), sizeof(double));
  float *dw = malloc(sizeof(float) * (size_t)n_in), *da = malloc(sizeof(float) * (size_t)n_in);
  for (int64_t t = 0; t < n_tok; t++) {
    dq_quantize_row(ti->vec_dot_type, x + t * n_in, a, n_in);
    dq_dequantize_row(ti->vec_dot_type, a, da, n_in);
    for (int64_t o = 0; o < n_out; o++) {
      dq_vec_dot_ref(type, n_in, w + (size_t)o * wrb, a, &want[t * n_out + o]);
      dq_dequantize_row(type, w + (size_t)o * wrb, dw, n_in);
      for (int64_t i = 0; i < n_in; i++)
        S[t * n_out + o] += fabs((double)dw[i] * da[i]);
    }
  }
  int is_float = type == DQ_TYPE_F32 || type == DQ_TYPE_F16 || type == DQ_TYPE_BF16;
  double rel = is_float ? fmax(1e-5, (double)n_in * 0x1p-24 / 8) : 1e-5;
  for (int p = -1; p < n_pools; p++) {
    dq_threadpool *pool = p < 0 ? NULL : pools[p];
    memset(got, 0xff, sizeof(float) * (size_t)(n_tok * n_out)); /* NaN */
    CHECK_EQ_INT(dq_matmul(pool, caps, type, w, n_out, n_in, x, n_tok, got), DQ_OK);
    int bad = 0, diff = 0;
    for (int64_t k = 0; k < n_tok * n_out; k++) {
      if (!(fabs(got[k] - want[k]) <= rel * S[k] + 1e-30))
        bad++;
      if (p >= 0 && memcmp(&got[k], &first[k], sizeof(float)) != 0)
        diff++;
    }
    CHECK_MSG(bad == 0, "%s %lldx%lld tok=%lld threads=%d isa=%s: %d outputs off",
              ti->name, (long long)n_out, (long long)n_in, (long long)n_tok,
              dq_threadpool_size(pool), dq_isa_name(caps->isa), bad);
    CHECK_MSG(diff == 0, "%s threads=%d: %d outputs differ from single-thread",
              ti->name, dq_threadpool_size(pool), diff);
    if (p < 0)
      memcpy(first, got, sizeof(float) * (size_t)(n_tok * n_out));
  }
  free(wf); free(x); free(w); free(a); free(want); free(got); free(first);
  free(S); free(dw); free(da);
}

/* The 32-element block types' and the K-quants' kernels give a token the
 * same bits alone as in a batch (tile shapes, decode-on-the-fly vs
 * buffered weights): early exit's batched verify pass relies on it to
 * reproduce one-token decoding. */
static void test_batch_invariance(dq_threadpool *pool, const dq_cpu_caps *caps,
                                  int type, int64_t n_in, kt_rng *r) {
  const dq_type_info *ti = dq_type_get(type);
  size_t wrb;
  dq_type_row_bytes(type, n_in, &wrb);
  int64_t n_out = 9, n_tok = 70;
  float *wf = malloc(sizeof(float) * (size_t)(n_out * n_in));
  float *x = malloc(sizeof(float) * (size_t)(n_tok * n_in));
  uint8_t *w = malloc(wrb * (size_t)n_out);
  float *all = malloc(sizeof(float) * (size_t)(n_tok * n_out));
  float one[9];
  kt_fill(r, wf, n_out * n_in);
  kt_fill(r, x, n_tok * n_in);
  for (int64_t o = 0; o < n_out; o++)
    dq_quantize_row(type, wf + o * n_in, w + (size_t)o * wrb, n_in);
  CHECK_EQ_INT(dq_matmul(pool, caps, type, w, n_out, n_in, x, n_tok, all), DQ_OK);
  int same = 1;
  for (int64_t t = 0; t < n_tok; t++) {
    dq_matmul(pool, caps, type, w, n_out, n_in, x + t * n_in, 1, one);
    if (memcmp(one, all + t * n_out, sizeof one))
      same = 0;
  }
  CHECK_MSG(same, "%s on %s: one token differs from the batch", ti->name,
            dq_isa_name(caps->isa));
  free(wf);
  free(x);
  free(w);
  free(all);
}

/* dq_matmul_n against one dq_matmul per product: the same bits, for
 * products of one type (x converted once) and of several (Q4_K beside Q6_K
 * share Q8_K activations; Q4_0, Q4_1 and F16 do not), across the guided
 * path's token counts and the per-product path past 64 tokens. */
static void test_matmul_n(dq_threadpool **pools, int n_pools,
                          const dq_cpu_caps *caps, kt_rng *r) {
  static const int sets[][3] = {
      {DQ_TYPE_Q4_1, DQ_TYPE_Q4_1, DQ_TYPE_Q4_1},
      {DQ_TYPE_Q4_K, DQ_TYPE_Q4_K, DQ_TYPE_Q6_K},
      {DQ_TYPE_Q4_0, DQ_TYPE_Q4_1, DQ_TYPE_F16},
      {DQ_TYPE_Q8_0, DQ_TYPE_Q5_0, DQ_TYPE_Q8_0}};
  static const int64_t n_out[3] = {67, 20, 45}, toks[] = {1, 2, 5, 64, 70};
  const int64_t n_in = 512;
  for (size_t si = 0; si < sizeof sets / sizeof *sets; si++) {
    uint8_t *w[3];
    for (int k = 0; k < 3; k++) {
      size_t rb;
      dq_type_row_bytes(sets[si][k], n_in, &rb);
      float *wf = malloc(sizeof(float) * (size_t)(n_out[k] * n_in));
      kt_fill(r, wf, n_out[k] * n_in);
      w[k] = malloc(rb * (size_t)n_out[k]);
      for (int64_t o = 0; o < n_out[k]; o++)
        dq_quantize_row(sets[si][k], wf + o * n_in, w[k] + (size_t)o * rb,
                        n_in);
      free(wf);
    }
    for (size_t ti = 0; ti < sizeof toks / sizeof *toks; ti++) {
      int64_t nt = toks[ti];
      float *x = malloc(sizeof(float) * (size_t)(nt * n_in));
      kt_fill(r, x, nt * n_in);
      for (int p = -1; p < n_pools; p++) {
        dq_threadpool *pool = p < 0 ? NULL : pools[p];
        float *want[3], *got[3];
        dq_mm_out o[3];
        for (int k = 0; k < 3; k++) {
          size_t nb = sizeof(float) * (size_t)(nt * n_out[k]);
          want[k] = malloc(nb), got[k] = malloc(nb);
          memset(got[k], 0xff, nb);
          CHECK_EQ_INT(dq_matmul(pool, caps, sets[si][k], w[k], n_out[k],
                                 n_in, x, nt, want[k]),
                       DQ_OK);
          o[k] = (dq_mm_out){sets[si][k], w[k], n_out[k], got[k]};
        }
        CHECK_EQ_INT(dq_matmul_n(pool, caps, 3, o, n_in, x, nt), DQ_OK);
        for (int k = 0; k < 3; k++) {
          CHECK_MSG(!memcmp(want[k], got[k],
                            sizeof(float) * (size_t)(nt * n_out[k])),
                    "matmul_n set %zu product %d (%s) tok=%lld threads=%d "
                    "isa=%s: differs from dq_matmul",
                    si, k, dq_type_get(sets[si][k])->name, (long long)nt,
                    dq_threadpool_size(pool), dq_isa_name(caps->isa));
          free(want[k]), free(got[k]);
        }
      }
      free(x);
    }
    for (int k = 0; k < 3; k++)
      free(w[k]);
  }
  dq_mm_out none = {DQ_TYPE_Q4_0, NULL, 0, NULL};
  CHECK_EQ_INT(dq_matmul_n(pools[0], caps, 0, &none, 32, NULL, 1), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_matmul_n(pools[0], caps, DQ_MM_N_MAX + 1, &none, 32, NULL, 1),
               DQ_ERR_ARG);
}

int main(void) {
  test_pool();
  dq_cpu_caps caps = dq_cpu_probe();
  fprintf(stderr, "cpu: %s\n", caps.desc);
  dq_threadpool *pools[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++)
    CHECK_EQ_INT(dq_threadpool_new(i + 1, &pools[i]), DQ_OK);
  kt_rng r = {99};
  static const int64_t shapes[][3] = {/* n_out, n_tok; n_in per type */
                                      {1, 1}, {5, 3}, {67, 17}, {192, 1}, {130, 40}};
  for (int l = DQ_ISA_SCALAR; l <= (int)caps.isa; l++) {
    dq_cpu_caps c = dq_cpu_caps_limit(caps, (dq_isa)l);
    for (int t = 0; t < KT_N_WEIGHT_TYPES; t++) {
      int type = kt_weight_types[t];
      int be = dq_type_get(type)->block_elems;
      int64_t n_in = be == 256 ? 512 : be == 32 ? 160 : 75;
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        test_shape(pools, 3, &c, type, shapes[s][0], n_in, shapes[s][1], &r);
      /* long rows (the AVX-512 kernels' k-chunks of 64 blocks, an odd
       * block count) and more tokens than one 64-token tile */
      int64_t n_long = be == 256 ? 4352 : be == 32 ? 4128 : 1000;
      test_shape(pools, 3, &c, type, 7, n_long, 70, &r);
      if (be == 32 || be == 256)
        test_batch_invariance(pools[1], &c, type, n_long, &r);
    }
    test_matmul_n(pools, 3, &c, &r);
  }
  /* errors */
  float x[640] = {0}, y[8];
  uint8_t w[4096] = {0};
  CHECK_EQ_INT(dq_matmul(pools[1], &caps, DQ_TYPE_Q4_K, w, 1, 640, x, 1, y), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_matmul(pools[1], &caps, DQ_TYPE_Q8_K, w, 1, 256, x, 1, y),
               DQ_ERR_UNSUPPORTED);
  CHECK_EQ_INT(dq_matmul(pools[1], &caps, DQ_TYPE_Q4_0, w, -1, 32, x, 1, y), DQ_ERR_ARG);
  CHECK_EQ_INT(dq_matmul(pools[1], &caps, DQ_TYPE_Q4_0, w, 0, 32, x, 1, y), DQ_OK);
  for (int i = 0; i < 3; i++)
    dq_threadpool_free(pools[i]);
  return TEST_EXIT();
}
