/*
 * test_attn_q8.c - the attention block kernel's 8-bit operands (kernels.h,
 * q8 = 1) on every ISA path this machine runs:
 *   - the panel layouts: dq_attn_q8_put_key/_value write the bytes and
 *     scales the header describes (checked against this file's own
 *     quantization of the same rows), get/move give them back exactly;
 *   - scores and probabilities against a reference written here from the
 *     header's rule in double precision (queries quantized per block of 32,
 *     exact integer sums): probabilities within 2e-6;
 *   - outputs against the header's value rule applied, in exact integer
 *     sums, to the kernel's own probabilities: within 1e-6 of the sum of
 *     |p v| (only the float products and group sums round);
 *   - against f32 attention on the unquantized rows: the error is the
 *     quantization's, RMS below 2% of the sum of |p v| over random rows
 *     whose magnitudes vary 300x from block to block (kt_fill);
 *   - the VNNI forms give the bits of the float forms of their lane width
 *     (AVX-512 VNNI: 16 lanes; AVX-VNNI, where the CPU has it: 8); a query's results do not depend on the other queries of its
 *     block.
 * Random keys, values, queries; head sizes 64, 96 (a 32-element tail) and
 * 256; key counts inside one panel, ragged, and over 3 value tiles; blocks
 * of 1 to 32 queries, with and without a bias.
 */
#include "kt.h"

#include "../../kernels/cpu/cpu_int.h"

#include <stdio.h>
#include <string.h>

typedef struct { int64_t lo, hi; } range;

static int round_away(double x) {
  double r = x >= 0 ? floor(x + 0.5) : -floor(-x + 0.5);
  return (int)(r > 127 ? 127 : r < -127 ? -127 : r);
}

/* this file's quantization of n elements: codes and the scale (header) */
static float quant(const float *x, int n, int *code) {
  float amax = 0;
  for (int i = 0; i < n; i++)
    amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
  float inv = amax > 0 ? 127.0f / amax : 0.0f;
  for (int i = 0; i < n; i++)
    code[i] = round_away((double)(x[i] * inv));
  return amax / 127.0f;
}

typedef struct {
  int n, hd, heads; /* panels hold `heads` interleaved heads; we use head 1 */
  uint8_t *kp, *vp; /* panel groups */
  size_t kpb, vpb;  /* one head's panel bytes */
  int *k8, *v8;     /* codes, n x hd */
  float *ks, *vs;   /* scales: n x hd/32, n */
} q8rows;

static void q8rows_make(q8rows *r, const float *k, const float *v, int n,
                        int hd) {
  int np = (int)dq_attn_padded(n) / DQ_ATTN_PANEL;
  r->n = n, r->hd = hd, r->heads = 2;
  r->kpb = dq_attn_q8k_bytes(hd), r->vpb = dq_attn_q8v_bytes(hd);
  r->kp = calloc((size_t)np * 2, r->kpb);
  r->vp = calloc((size_t)np * 2, r->vpb);
  r->k8 = malloc(sizeof(int) * n * hd);
  r->v8 = malloc(sizeof(int) * n * hd);
  r->ks = malloc(sizeof(float) * n * (hd / 32));
  r->vs = malloc(sizeof(float) * n);
  for (int j = 0; j < n; j++) {
    uint8_t *kpan = r->kp + ((size_t)(j / 16) * 2 + 1) * r->kpb;
    uint8_t *vpan = r->vp + ((size_t)(j / 16) * 2 + 1) * r->vpb;
    dq_attn_q8_put_key(kpan, j % 16, hd, k + (size_t)j * hd);
    dq_attn_q8_put_value(vpan, j % 16, hd, v + (size_t)j * hd);
    for (int blk = 0; blk < hd / 32; blk++)
      r->ks[j * (hd / 32) + blk] =
          quant(k + (size_t)j * hd + 32 * blk, 32, r->k8 + (size_t)j * hd + 32 * blk);
    r->vs[j] = quant(v + (size_t)j * hd, hd, r->v8 + (size_t)j * hd);
    /* the layout the header promises */
    int ok = 1;
    for (int d = 0; d < hd; d++) {
      ok &= kpan[(d / 4 * 16 + j % 16) * 4 + d % 4] ==
            (uint8_t)(r->k8[j * hd + d] + 128);
      ok &= (int8_t)vpan[((j % 16 / 4) * hd + d) * 4 + j % 4] ==
            r->v8[j * hd + d];
    }
    for (int blk = 0; blk < hd / 32; blk++) {
      float s;
      memcpy(&s, kpan + (size_t)hd * 16 + (blk * 16 + j % 16) * 4, 4);
      ok &= s == r->ks[j * (hd / 32) + blk];
    }
    float s;
    memcpy(&s, vpan + (size_t)hd * 16 + (j % 16) * 4, 4);
    ok &= s == r->vs[j];
    CHECK(ok);
  }
}

static void q8rows_free(q8rows *r) {
  free(r->kp); free(r->vp); free(r->k8); free(r->v8); free(r->ks); free(r->vs);
}

static dq_attn_block q8block(const q8rows *r, const float *bias, float scale,
                             int nq, float *const *q, const range *rg,
                             float *o, float *p, size_t ps) {
  dq_attn_block b = {.kt = r->kp + r->kpb, .kt_stride = 2 * r->kpb,
                     .v = r->vp + r->vpb, .v_stride = 2 * r->vpb, .q8 = 1,
                     .bias = bias, .n = r->n, .hd = r->hd, .scale = scale,
                     .nq = nq, .p = p, .p_stride = ps};
  for (int i = 0; i < nq; i++) {
    b.q[i] = q[i];
    b.o[i] = o + (size_t)i * r->hd;
    b.lo[i] = rg[i].lo;
    b.hi[i] = rg[i].hi;
  }
  return b;
}

static int n_bad;

/* The header's rule for one query: probabilities (double, from exact
 * integer scores), then the output from the kernel's probabilities pk. */
static void reference(const q8rows *r, const float *bias, float scale,
                      const float *q, range rg, double *p, const float *pk,
                      double *o, double *mag) {
  int hd = r->hd, nb = hd / 32, q8[DQ_ATTN_Q8_HD_MAX];
  float qd[DQ_ATTN_Q8_HD_MAX / 32];
  for (int blk = 0; blk < nb; blk++)
    qd[blk] = quant(q + 32 * blk, 32, q8 + 32 * blk);
  double mx = -INFINITY;
  for (int64_t j = rg.lo; j < rg.hi; j++) {
    double s = 0;
    for (int blk = 0; blk < nb; blk++) {
      int64_t acc = 0;
      for (int d = 32 * blk; d < 32 * blk + 32; d++)
        acc += (int64_t)q8[d] * r->k8[j * hd + d];
      s += (double)acc * r->ks[j * nb + blk] * qd[blk];
    }
    p[j] = s * scale + (bias ? bias[j] : 0);
    mx = p[j] > mx ? p[j] : mx;
  }
  double sum = 0;
  for (int64_t j = rg.lo; j < rg.hi; j++)
    sum += (p[j] = exp(p[j] - mx));
  for (int64_t j = rg.lo; j < rg.hi; j++)
    p[j] /= sum;
  /* values from the kernel's probabilities, quantized per group as the
   * header says (the same float steps, so the same integers) */
  for (int d = 0; d < hd; d++)
    o[d] = mag[d] = 0;
  int64_t g0 = rg.lo / DQ_ATTN_Q8_GROUP * DQ_ATTN_Q8_GROUP;
  for (; g0 < rg.hi; g0 += DQ_ATTN_Q8_GROUP) {
    int64_t a = g0 > rg.lo ? g0 : rg.lo;
    int64_t e = g0 + DQ_ATTN_Q8_GROUP < rg.hi ? g0 + DQ_ATTN_Q8_GROUP : rg.hi;
    float m = 0;
    for (int64_t j = a; j < e; j++)
      m = pk[j] * r->vs[j] > m ? pk[j] * r->vs[j] : m;
    if (!(m > 0))
      continue;
    float inv = 255.0f / m;
    for (int d = 0; d < hd; d++) {
      int64_t acc = 0;
      for (int64_t j = a; j < e; j++) {
        int u = (int)(pk[j] * r->vs[j] * inv + 0.5f);
        acc += (int64_t)(u > 255 ? 255 : u) * r->v8[j * hd + d];
      }
      o[d] += (double)(m / 255.0f) * (double)acc;
    }
  }
  for (int64_t j = rg.lo; j < rg.hi; j++)
    for (int d = 0; d < hd; d++)
      mag[d] += pk[j] * r->vs[j] * fabs((double)r->v8[j * hd + d]);
}

static range rand_range(kt_rng *g, int64_t n) {
  range r;
  switch (kt_next(g) % 4) {
  case 0: r.lo = 0; r.hi = n; break;
  case 1: r.lo = 0; r.hi = 1 + kt_next(g) % n; break;
  case 2: r.lo = kt_next(g) % n; r.hi = r.lo + 1; break;
  default:
    r.lo = kt_next(g) % n;
    r.hi = r.lo + 1 + kt_next(g) % (n - r.lo);
  }
  return r;
}

/* f32 attention of one query on the unquantized rows (double). */
static void exact(const float *k, const float *v, const float *bias, int hd,
                  float scale, const float *q, range rg, double *o) {
  double mx = -INFINITY, *s = malloc(sizeof(double) * rg.hi), sum = 0;
  for (int64_t j = rg.lo; j < rg.hi; j++) {
    double t = 0;
    for (int d = 0; d < hd; d++)
      t += (double)q[d] * k[j * hd + d];
    s[j] = t * scale + (bias ? bias[j] : 0);
    mx = s[j] > mx ? s[j] : mx;
  }
  for (int64_t j = rg.lo; j < rg.hi; j++)
    sum += (s[j] = exp(s[j] - mx));
  for (int d = 0; d < hd; d++) {
    o[d] = 0;
    for (int64_t j = rg.lo; j < rg.hi; j++)
      o[d] += s[j] / sum * v[j * hd + d];
  }
  free(s);
}

static int have_avxvnni; /* the AVX-VNNI build runs here */
static double q_err2, q_mag2; /* quantization error vs f32, squared sums */

static void check_case(kt_rng *g, const dq_isa *isas, int n_isa, int n,
                       int hd, int nq, int with_bias) {
  float *k = malloc(sizeof(float) * n * hd), *v = malloc(sizeof(float) * n * hd);
  float *bias = with_bias ? malloc(sizeof(float) * n) : NULL;
  kt_fill(g, k, (int64_t)n * hd);
  kt_fill(g, v, (int64_t)n * hd);
  for (int j = 0; with_bias && j < n; j++)
    bias[j] = (float)(kt_next(g) % 4) * 0.7f;
  q8rows r;
  q8rows_make(&r, k, v, n, hd);
  float *qs = malloc(sizeof(float) * nq * hd), *q[DQ_ATTN_QB];
  range rg[DQ_ATTN_QB];
  for (int i = 0; i < nq; i++) {
    q[i] = qs + (size_t)i * hd;
    for (int d = 0; d < hd; d++)
      q[i][d] = kt_uniform(g) * 0.5f;
    rg[i] = rand_range(g, n);
  }
  float scale = 1.0f / sqrtf((float)hd);
  size_t ps = (size_t)dq_attn_padded(n);
  float *o = malloc(sizeof(float) * DQ_ATTN_QB * hd);
  float *p = malloc(sizeof(float) * DQ_ATTN_QB * ps);
  float *o2 = malloc(sizeof(float) * DQ_ATTN_QB * hd);
  float *p2 = malloc(sizeof(float) * DQ_ATTN_QB * ps);
  double *rp = malloc(sizeof(double) * n), *ro = malloc(sizeof(double) * hd);
  double *mag = malloc(sizeof(double) * hd), *eo = malloc(sizeof(double) * hd);
  for (int t = 0; t < n_isa; t++) {
    dq_attn_block b = q8block(&r, bias, scale, nq, q, rg, o, p, ps);
    float *psum = calloc((size_t)n, sizeof(float));
    b.psum = psum;
    dq_attn_run_isa(isas[t], &b);
    /* psum: the block's probabilities added in query order */
    float *want = calloc((size_t)n, sizeof(float));
    for (int i = 0; i < nq; i++)
      for (int64_t j = rg[i].lo; j < rg[i].hi; j++)
        want[j] += p[(size_t)i * ps + j];
    CHECK(memcmp(want, psum, sizeof(float) * (size_t)n) == 0);
    free(want);
    free(psum);
    for (int i = 0; i < nq; i++) {
      const float *pk = p + (size_t)i * ps;
      reference(&r, bias, scale, q[i], rg[i], rp, pk, ro, mag);
      for (int64_t j = rg[i].lo; j < rg[i].hi; j++)
        if (fabs(pk[j] - rp[j]) > 2e-6 && n_bad++ < 10)
          fprintf(stderr, "isa %d n %d hd %d q %d key %lld: p %g vs %g\n",
                  (int)isas[t], n, hd, i, (long long)j, pk[j], rp[j]);
      double tot = 0;
      for (int d = 0; d < hd; d++)
        tot += mag[d];
      for (int d = 0; d < hd; d++)
        if (fabs(o[i * hd + d] - ro[d]) > 1e-6 * (mag[d] + tot / hd) + 1e-30 &&
            n_bad++ < 10)
          fprintf(stderr, "isa %d n %d hd %d q %d [%lld,%lld) d %d: o %g vs %g\n",
                  (int)isas[t], n, hd, i, (long long)rg[i].lo,
                  (long long)rg[i].hi, d, o[i * hd + d], ro[d]);
      if (t == 0) { /* the quantization's error against f32 */
        exact(k, v, bias, hd, scale, q[i], rg[i], eo);
        for (int d = 0; d < hd; d++) {
          double m = 0;
          for (int64_t j = rg[i].lo; j < rg[i].hi; j++)
            m += rp[j] * fabs(v[j * hd + d]);
          q_err2 += (o[i * hd + d] - eo[d]) * (o[i * hd + d] - eo[d]);
          q_mag2 += m * m;
        }
      }
    }
    /* each query alone: the same bits */
    for (int i = 0; i < nq; i += 1 + nq / 4) {
      dq_attn_block one = q8block(&r, bias, scale, 1, &q[i], &rg[i], o2, p2, ps);
      dq_attn_run_isa(isas[t], &one);
      CHECK(memcmp(o2, o + (size_t)i * hd, sizeof(float) * hd) == 0);
      CHECK(memcmp(p2 + rg[i].lo, p + (size_t)i * ps + rg[i].lo,
                   sizeof(float) * (size_t)(rg[i].hi - rg[i].lo)) == 0);
    }
    /* VNNI and float forms of one lane width: the same bits (AVX-512
     * VNNI against its float form; AVX-VNNI against the AVX2 build) */
    int vnni_pair = isas[t] == DQ_ISA_AVX512 ||
                    (isas[t] == DQ_ISA_AVX2 && have_avxvnni);
    if (vnni_pair) {
      dq_attn_block bf = q8block(&r, bias, scale, nq, q, rg, o2, p2, ps);
      CHECK(isas[t] == DQ_ISA_AVX512 ? dq_attn_run_avx512_float(&bf)
                                     : dq_attn_run_avxvnni(&bf));
      CHECK(memcmp(o2, o, sizeof(float) * (size_t)nq * hd) == 0);
      for (int i = 0; i < nq; i++)
        CHECK(memcmp(p2 + (size_t)i * ps + rg[i].lo, p + (size_t)i * ps + rg[i].lo,
                     sizeof(float) * (size_t)(rg[i].hi - rg[i].lo)) == 0);
    }
  }
  q8rows_free(&r);
  free(k); free(v); free(bias); free(qs); free(o); free(p); free(o2);
  free(p2); free(rp); free(ro); free(mag); free(eo);
}

/* get gives the quantized values back exactly; move copies a lane. */
static void check_lanes(kt_rng *g, int hd) {
  size_t kb = dq_attn_q8k_bytes(hd), vb = dq_attn_q8v_bytes(hd);
  uint8_t *kp = calloc(2, kb), *vp = calloc(2, vb);
  float x[DQ_ATTN_Q8_HD_MAX], y[DQ_ATTN_Q8_HD_MAX], z[DQ_ATTN_Q8_HD_MAX];
  int code[DQ_ATTN_Q8_HD_MAX];
  kt_fill(g, x, hd);
  dq_attn_q8_put_key(kp, 5, hd, x);
  dq_attn_q8_get_key(kp, 5, hd, y);
  for (int blk = 0; blk < hd / 32; blk++) {
    float d = quant(x + 32 * blk, 32, code + 32 * blk);
    for (int i = 32 * blk; i < 32 * blk + 32; i++) {
      CHECK(y[i] == d * (float)code[i]);
      CHECK(fabsf(y[i] - x[i]) <= 0.5f * d * 1.0001f);
    }
  }
  dq_attn_q8_move_key(kp + kb, 11, kp, 5, hd);
  dq_attn_q8_get_key(kp + kb, 11, hd, z);
  CHECK(memcmp(y, z, sizeof(float) * hd) == 0);
  kt_fill(g, x, hd);
  dq_attn_q8_put_value(vp, 6, hd, x);
  dq_attn_q8_get_value(vp, 6, hd, y);
  float d = quant(x, hd, code);
  for (int i = 0; i < hd; i++)
    CHECK(y[i] == d * (float)code[i]);
  dq_attn_q8_move_value(vp + vb, 13, vp, 6, hd);
  dq_attn_q8_get_value(vp + vb, 13, hd, z);
  CHECK(memcmp(y, z, sizeof(float) * hd) == 0);
  /* a NaN element: code 0, the scale from the others */
  for (int i = 0; i < hd; i++)
    x[i] = (float)(i % 7) - 3.0f;
  x[3] = NAN;
  dq_attn_q8_put_key(kp, 2, hd, x);
  dq_attn_q8_get_key(kp, 2, hd, y);
  CHECK(y[3] == 0);
  for (int i = 0; i < hd; i++)
    if (i != 3)
      CHECK(fabsf(y[i] - x[i]) <= 0.5f * 3.0f / 127.0f * 1.0001f);
  /* all zeros: scale 0, codes 0 */
  memset(x, 0, sizeof x);
  dq_attn_q8_put_key(kp, 0, hd, x);
  dq_attn_q8_get_key(kp, 0, hd, y);
  for (int i = 0; i < hd; i++)
    CHECK(y[i] == 0);
  free(kp);
  free(vp);
}

int main(void) {
  dq_cpu_caps caps = dq_cpu_probe();
  have_avxvnni = (caps.flags & DQ_CPU_AVX_VNNI) != 0;
  dq_isa isas[3];
  int n_isa = 0;
  for (int i = DQ_ISA_SCALAR; i <= (int)caps.isa; i++)
    isas[n_isa++] = (dq_isa)i;
  kt_rng g = {7};
  static const int hds[] = {64, 96, 256};
  static const int ns[] = {1, 15, 16, 100, 700, 1300};
  static const int nqs[] = {1, 3, 8, 13, 32};
  for (size_t a = 0; a < sizeof hds / sizeof *hds; a++) {
    check_lanes(&g, hds[a]);
    for (size_t c = 0; c < sizeof ns / sizeof *ns; c++)
      for (size_t e = 0; e < sizeof nqs / sizeof *nqs; e++)
        check_case(&g, isas, n_isa, ns[c], hds[a], nqs[e], (int)((a + c + e) % 2));
  }
  double rms = sqrt(q_err2 / q_mag2);
  printf("q8 attention vs f32: RMS error %.4f of the sum of |p v| (%s)\n", rms,
         caps.desc);
  CHECK(rms < 0.02);
  CHECK(n_bad == 0);
  return TEST_EXIT();
}
