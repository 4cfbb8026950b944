/*
 * test_attn.c - the attention block kernel (dq_attn_run) on every ISA path
 * this machine runs, against a slow exact reference in double precision:
 * random keys, values and queries (not zeros), head sizes 64, 256 and the
 * ragged 80 and 36, key counts that are and are not multiples of the
 * 16-key panel, per-query ranges (causal, windowed, single key), with and
 * without a per-key bias, blocks of 1 to 4 queries.
 *
 * Tolerance: outputs within 2e-5 relative to the sum of |p v| (float
 * accumulation over up to ~600 keys, exp with ~2e-7 relative error);
 * probabilities within 2e-6 absolute. Also checked exactly: a query's
 * results do not depend on the other queries of its block (the engine's GSM
 * and full attention rely on it), and keys between the block's ranges but
 * outside a query's own range get probability 0. Half-precision operands
 * (a KV cache's layout: two heads' panels interleaved) give exactly the
 * f32 kernel's bits on the converted values.
 */
#include "kt.h"

#include <stdio.h>

typedef struct { int64_t lo, hi; } range;

static void reference(const float *k, const float *v, const float *bias,
                      int64_t n, int hd, float scale, const float *q, range r,
                      double *o, double *p) {
  (void)n;
  double mx = -INFINITY;
  for (int64_t j = r.lo; j < r.hi; j++) {
    double s = 0;
    for (int d = 0; d < hd; d++)
      s += (double)q[d] * k[j * hd + d];
    s = s * scale + (bias ? bias[j] : 0);
    p[j] = s;
    mx = s > mx ? s : mx;
  }
  double sum = 0;
  for (int64_t j = r.lo; j < r.hi; j++)
    sum += (p[j] = exp(p[j] - mx));
  for (int d = 0; d < hd; d++)
    o[d] = 0;
  for (int64_t j = r.lo; j < r.hi; j++) {
    p[j] /= sum;
    for (int d = 0; d < hd; d++)
      o[d] += p[j] * v[j * hd + d];
  }
}

static int n_bad;

/* One block on path isa; checks against the reference and returns the
 * outputs (nq x hd) and probabilities (nq x ps). */
static void run_block(dq_isa isa, const float *kt, const float *k,
                      const float *v, const float *bias, int64_t n, int hd,
                      float scale, int nq, float *const *q, const range *r,
                      float *o, float *p, size_t ps) {
  float *psum = calloc((size_t)n, sizeof(float));
  dq_attn_block b = {.kt = kt, .v = v, .v_stride = (size_t)hd, .bias = bias,
                     .n = n, .hd = hd, .scale = scale, .nq = nq, .p = p,
                     .p_stride = ps, .psum = psum};
  for (int i = 0; i < nq; i++) {
    b.q[i] = q[i];
    b.o[i] = o + (size_t)i * hd;
    b.lo[i] = r[i].lo;
    b.hi[i] = r[i].hi;
  }
  dq_attn_run_isa(isa, &b);
  /* psum: the probabilities of the block's queries added in query order */
  float *want = calloc((size_t)n, sizeof(float));
  for (int i = 0; i < nq; i++)
    for (int64_t j = r[i].lo; j < r[i].hi; j++)
      want[j] += p[i * ps + j];
  CHECK(memcmp(want, psum, sizeof(float) * (size_t)n) == 0);
  free(want);
  free(psum);
  double *ro = malloc(sizeof(double) * hd), *rp = malloc(sizeof(double) * n);
  for (int i = 0; i < nq; i++) {
    reference(k, v, bias, n, hd, scale, q[i], r[i], ro, rp);
    for (int d = 0; d < hd; d++) {
      double mag = 0;
      for (int64_t j = r[i].lo; j < r[i].hi; j++)
        mag += rp[j] * fabs(v[j * hd + d]);
      double err = fabs(o[i * hd + d] - ro[d]);
      if (err > 2e-5 * mag + 1e-30) {
        if (n_bad++ < 10)
          fprintf(stderr, "isa %d n %lld hd %d q %d [%lld,%lld) d %d: %g vs %g\n",
                  (int)isa, (long long)n, hd, i, (long long)r[i].lo,
                  (long long)r[i].hi, d, o[i * hd + d], ro[d]);
      }
    }
    /* only the query's own range is defined (kernels.h) */
    for (int64_t j = r[i].lo; j < r[i].hi; j++)
      CHECK_NEAR(p[i * ps + j], rp[j], 2e-6);
  }
  free(ro);
  free(rp);
}

static range rand_range(kt_rng *g, int64_t n) {
  range r;
  switch (kt_next(g) % 4) {
  case 0: r.lo = 0; r.hi = n; break;                 /* everything */
  case 1: r.lo = 0; r.hi = 1 + kt_next(g) % n; break; /* causal */
  case 2: r.lo = kt_next(g) % n; r.hi = r.lo + 1; break; /* one key */
  default:                                            /* window */
    r.lo = kt_next(g) % n;
    r.hi = r.lo + 1 + kt_next(g) % (n - r.lo);
  }
  return r;
}

/* The f16 path against the f32 path on the same (rounded) values: keys in
 * a two-head cache layout (head 1 of rows of 2 * hd halves), values rows of
 * the same cache. */
static void check_f16(dq_isa isa, const float *k, const float *v,
                      const float *bias, int64_t n, int hd, float scale,
                      int nq, float *const *q, const range *r, size_t ps) {
  int64_t np = dq_attn_padded(n);
  size_t re = 2 * (size_t)hd;
  dq_f16 *kc = calloc((size_t)np * re, sizeof(dq_f16));
  dq_f16 *vc = calloc((size_t)n * re, sizeof(dq_f16));
  float *kr = malloc(sizeof(float) * n * hd), *vr = malloc(sizeof(float) * n * hd);
  float *kt = malloc(sizeof(float) * np * hd);
  float *o1 = malloc(sizeof(float) * DQ_ATTN_QB * hd), *o2 = malloc(sizeof(float) * DQ_ATTN_QB * hd);
  float *p1 = malloc(sizeof(float) * DQ_ATTN_QB * ps), *p2 = malloc(sizeof(float) * DQ_ATTN_QB * ps);
  for (int64_t j = 0; j < n; j++)
    for (int d = 0; d < hd; d++) {
      dq_f16 hk = dq_f32_to_f16(k[j * hd + d]), hv = dq_f32_to_f16(v[j * hd + d]);
      kr[j * hd + d] = dq_f16_to_f32(hk);
      vr[j * hd + d] = dq_f16_to_f32(hv);
      size_t i = (size_t)hd + (size_t)d; /* head 1 */
      kc[((size_t)(j / 16) * re + i) * 16 + (size_t)(j % 16)] = hk;
      vc[(size_t)j * re + i] = hv;
    }
  dq_attn_pack_k(kr, (size_t)hd, 0, n, n, hd, kt);
  dq_attn_block a = {.kt = kt, .v = vr, .v_stride = (size_t)hd, .bias = bias,
                     .n = n, .hd = hd, .scale = scale, .nq = nq, .p = p1,
                     .p_stride = ps};
  dq_attn_block b = {.kt = kc + (size_t)hd * 16, .kt_stride = re * 16,
                     .v = vc + hd, .v_stride = re, .f16 = 1, .bias = bias,
                     .n = n, .hd = hd, .scale = scale, .nq = nq, .p = p2,
                     .p_stride = ps};
  for (int i = 0; i < nq; i++) {
    a.q[i] = b.q[i] = q[i];
    a.o[i] = o1 + (size_t)i * hd;
    b.o[i] = o2 + (size_t)i * hd;
    a.lo[i] = b.lo[i] = r[i].lo;
    a.hi[i] = b.hi[i] = r[i].hi;
  }
  dq_attn_run_isa(isa, &a);
  dq_attn_run_isa(isa, &b);
  CHECK(memcmp(o1, o2, sizeof(float) * (size_t)nq * hd) == 0);
  for (int i = 0; i < nq; i++)
    CHECK(memcmp(p1 + i * ps + r[i].lo, p2 + i * ps + r[i].lo,
                 sizeof(float) * (size_t)(r[i].hi - r[i].lo)) == 0);
  free(kc); free(vc); free(kr); free(vr); free(kt);
  free(o1); free(o2); free(p1); free(p2);
}

int main(void) {
  dq_cpu_caps caps = dq_cpu_probe();
  dq_isa paths[3];
  int n_paths = 0;
  for (int isa = DQ_ISA_SCALAR; isa <= (int)caps.isa; isa++)
    paths[n_paths++] = (dq_isa)isa;
  printf("paths: scalar..%s\n", dq_isa_name(caps.isa));
  kt_rng g = {42};
  const int hds[] = {64, 256, 80, 36, 2, 7};
  const int64_t ns[] = {1, 7, 16, 17, 48, 130, 600, 1300}; /* 1300: 3 tiles */
  for (size_t hi_ = 0; hi_ < sizeof hds / sizeof hds[0]; hi_++) {
    int hd = hds[hi_];
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
      int64_t n = ns[ni];
      size_t ps = (size_t)dq_attn_padded(n) + 3;
      float *k = malloc(sizeof(float) * n * hd), *v = malloc(sizeof(float) * n * hd);
      float *kt = malloc(sizeof(float) * dq_attn_padded(n) * hd);
      float *kt2 = malloc(sizeof(float) * dq_attn_padded(n) * hd);
      float *bias = malloc(sizeof(float) * n);
      float *qs = malloc(sizeof(float) * DQ_ATTN_QB * hd);
      float *o = malloc(sizeof(float) * DQ_ATTN_QB * hd), *o1 = malloc(sizeof(float) * hd);
      float *p = malloc(sizeof(float) * DQ_ATTN_QB * ps), *p1 = malloc(sizeof(float) * ps);
      for (int64_t j = 0; j < n * hd; j++) {
        k[j] = kt_uniform(&g);
        v[j] = 3.0f * kt_uniform(&g);
      }
      for (int64_t j = 0; j < n; j++)
        bias[j] = kt_next(&g) % 3 ? 0.0f : logf(1.0f + (float)(kt_next(&g) % 7));
      kt_fill(&g, qs, DQ_ATTN_QB * hd);
      /* packing: layout by formula, padding zero, two ranges == one */
      dq_attn_pack_k(k, (size_t)hd, 0, n, n, hd, kt);
      int pack_ok = 1;
      for (int64_t j = 0; j < dq_attn_padded(n); j++)
        for (int d = 0; d < hd; d++) {
          float want = j < n ? k[j * hd + d] : 0.0f;
          if (kt[((j / 16) * hd + d) * 16 + j % 16] != want)
            pack_ok = 0;
        }
      CHECK_MSG(pack_ok, "pack n %lld hd %d", (long long)n, hd);
      int64_t mid = n / 32 * 16;
      dq_attn_pack_k(k, (size_t)hd, 0, mid, n, hd, kt2);
      dq_attn_pack_k(k, (size_t)hd, mid, n, n, hd, kt2);
      CHECK(memcmp(kt, kt2, sizeof(float) * dq_attn_padded(n) * hd) == 0);
      float scale = 1.0f / sqrtf((float)hd);
      /* blocks of every size up to DQ_ATTN_QB (several kernel passes
       * past the register block) */
      for (int trial = 0; trial < 10; trial++) {
        int nq = trial < 2 ? DQ_ATTN_QB - trial
                           : 1 + (int)(kt_next(&g) % DQ_ATTN_QB);
        range r[DQ_ATTN_QB];
        float *q[DQ_ATTN_QB];
        for (int i = 0; i < nq; i++) {
          r[i] = rand_range(&g, n);
          q[i] = qs + (size_t)i * hd;
        }
        const float *b = trial % 2 ? bias : NULL;
        for (int pi = 0; pi < n_paths; pi++) {
          run_block(paths[pi], kt, k, v, b, n, hd, scale, nq, q, r, o, p, ps);
          check_f16(paths[pi], k, v, b, n, hd, scale, nq, q, r, ps);
          /* each query alone gives the same bits */
          for (int i = 0; i < nq; i++) {
            run_block(paths[pi], kt, k, v, b, n, hd, scale, 1, &q[i], &r[i],
                      o1, p1, ps);
            CHECK(memcmp(o1, o + (size_t)i * hd, sizeof(float) * hd) == 0);
            CHECK(memcmp(p1 + r[i].lo, p + i * ps + r[i].lo,
                         sizeof(float) * (r[i].hi - r[i].lo)) == 0);
          }
        }
      }
      free(k); free(v); free(kt); free(kt2); free(bias); free(qs);
      free(o); free(o1); free(p); free(p1);
    }
  }
  CHECK_EQ_INT(n_bad, 0);
  /* large scores: exp never overflows (max subtracted), tiny ones vanish */
  {
    int hd = 64;
    int64_t n = 40;
    float *k = calloc((size_t)n * hd, sizeof(float)), *v = malloc(sizeof(float) * n * hd);
    float kt[48 * 64], q[64], o[64], p[48];
    for (int64_t j = 0; j < n * hd; j++)
      v[j] = (float)(j / hd);
    for (int64_t j = 0; j < n; j++)
      k[j * hd] = (float)j; /* score j * 1000 */
    for (int d = 0; d < hd; d++)
      q[d] = d == 0 ? 1000.0f : 0.0f;
    dq_attn_pack_k(k, (size_t)hd, 0, n, n, hd, kt);
    for (int pi = 0; pi < n_paths; pi++) {
      dq_attn_block b = {.kt = kt, .v = v, .v_stride = 64, .n = n, .hd = hd,
                         .scale = 1.0f, .nq = 1, .q = {q}, .o = {o},
                         .lo = {0}, .hi = {n}, .p = p, .p_stride = 48};
      dq_attn_run_isa(paths[pi], &b);
      CHECK(p[n - 1] == 1.0f && p[0] == 0.0f);
      CHECK(o[0] == (float)(n - 1) && o[63] == (float)(n - 1));
    }
    free(k);
    free(v);
  }
  return TEST_EXIT();
}
