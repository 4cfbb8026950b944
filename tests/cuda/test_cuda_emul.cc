/*
 * test_cuda_emul.cc - kernels/cuda/attn.cu's own kernels and host code,
 * run on the CPU by the emulator (cuemu.h: every thread a fiber, the
 * barriers and shuffles honoured, the threads' order shuffled each round),
 * against the CPU backend's attention: outputs, GSM statistics and query
 * mass, on every cache store, decode and prefill shapes, splits (few SMs
 * make many), sliding windows, per-key weights, head sizes up to 576; the
 * F16 prefill cases of head sizes 64, 128 and 256 on both paths (attn_main and
 * the tensor cores' attn_mma, whose mma.sync and ldmatrix cuemu emulates),
 * and the backend's start-up self-check of the latter.
 * What test_cuda_logic checks row by row, this checks as the kernels run:
 * their thread indexing, shared-memory staging and barriers, the launch
 * shapes and limits (threads, grid, shared memory opt-in), the split
 * combine. Each case runs under two scheduling seeds and, where splits
 * are the point, a device of few SMs (which cuda_ops_emul, through the
 * backend, cannot set). merge.cu runs in cuda_ops_emul (its kv_merge and
 * kv_fold cases).
 *
 * Tolerance: 1e-5 + 1e-4 |ref| on outputs, 1e-4 absolute on statistics
 * and query mass (f32 both sides; the sums run in other orders and the
 * exp functions differ, as in test_cuda_logic). On the tensor cores, whose
 * inputs Q and P are rounded to F16: outputs 4e-3 x max |v| (measured
 * 4e-5 to 3.9e-4 of N(0, 1) values), statistics 4e-4, query mass 2e-3, as
 * test_cuda_ops on a device.
 */
extern "C" {
#include "backend.h"
}
#include "cuda_ops.h"
#include "cuemu.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" int emu_dq_cu_attention(void *stream, const dq_attn *a);
extern "C" void emu_dq_cu_attn_set_mma(int on);
extern "C" int emu_dq_cu_attn_selfcheck(void *stream, char *why,
                                        size_t why_len);

namespace {

struct rng {
  uint64_t s;
  uint64_t next() { /* splitmix64 */
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float normal() {
    double u = ((next() >> 11) + 0.5) / 9007199254740992.0;
    double v = ((next() >> 11) + 0.5) / 9007199254740992.0;
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
  }
  int below(int n) { return (int)(next() % (uint64_t)n); }
};

struct attn_case {
  int store, n_tok, pos0, n_head, n_head_kv, hd, causal, window;
  int stats, qmass, bias, n_sm;
  const char *what;
};

int n_cases_run = 0;

void run_case(dq_backend *be, const attn_case &c, rng &r) {
  const int n_kv = c.pos0 + c.n_tok, re = c.n_head_kv * c.hd;
  const int rows_alloc = (n_kv + 15) / 16 * 16;
  const size_t nq = (size_t)c.n_tok * c.n_head * c.hd;
  float *q = (float *)malloc(nq * sizeof(float));
  float *kx = (float *)malloc((size_t)n_kv * re * sizeof(float));
  float *vx = (float *)malloc((size_t)n_kv * re * sizeof(float));
  for (size_t i = 0; i < nq; i++)
    q[i] = r.normal();
  for (size_t i = 0; i < (size_t)n_kv * re; i++) {
    kx[i] = r.normal();
    vx[i] = r.normal();
  }
  const size_t cache_bytes = (size_t)rows_alloc * re * 4;
  void *kc = calloc(cache_bytes, 1), *vc = calloc(cache_bytes, 1);
  const int kstore = c.store == DQ_STORE_F16 ? DQ_STORE_F16P : c.store;
  be->i.kv_store(be->ctx, kc, kstore, 0, kx, n_kv, re);
  be->i.kv_store(be->ctx, vc, c.store, 0, vx, n_kv, re);
  const int stride = n_kv + 3;
  const size_t nst = (size_t)c.n_head * stride;
  const size_t nqm = (size_t)c.n_head * (c.n_tok + 2);
  float *bias = NULL;
  if (c.bias) {
    bias = (float *)malloc((size_t)n_kv * sizeof(float));
    for (int k = 0; k < n_kv; k++)
      bias[k] = logf((float)(1 + r.below(4)));
  }
  dq_attn a;
  memset(&a, 0, sizeof a);
  a.q = q, a.k = kc, a.v = vc, a.store = c.store;
  a.n_tok = c.n_tok, a.pos0 = c.pos0, a.n_kv = n_kv;
  a.n_head = c.n_head, a.n_head_kv = c.n_head_kv, a.head_dim = c.hd;
  a.causal = c.causal, a.window = c.window;
  a.scale = 1.0f / sqrtf((float)c.hd);
  a.bias = bias;
  a.stats_stride = stride;
  a.stats_q0 = c.pos0 + c.n_tok / 3, a.stats_q1 = n_kv;
  a.qmass_stride = c.n_tok + 2;
  a.qmass_lo = n_kv / 4, a.qmass_hi = n_kv / 4 + 1 + n_kv / 8;

  float *ref = (float *)calloc(nq, sizeof(float));
  float *st_ref = c.stats ? (float *)calloc(nst, sizeof(float)) : NULL;
  float *qm_ref = c.qmass ? (float *)calloc(nqm, sizeof(float)) : NULL;
  dq_attn ra = a;
  ra.out = ref, ra.stats = st_ref, ra.qmass = qm_ref;
  CHECK_EQ_INT(be->i.attention(be->ctx, &ra), DQ_OK);

  /* attn.cu takes the tensor cores for F16 prefill of head sizes 64, 128
   * and 256 (more than 32 query rows per KV head): those run both ways */
  const bool mma_applies = c.store == DQ_STORE_F16 &&
                           (c.hd == 64 || c.hd == 128 || c.hd == 256) &&
                           c.n_tok * (c.n_head / c.n_head_kv) > 32;
  double vmax = 0;
  for (size_t i = 0; i < (size_t)n_kv * re; i++)
    vmax = fmax(vmax, fabs(vx[i]));
  cuemu_set_device(c.n_sm, 232448);
  for (int run = 0; run < (mma_applies ? 4 : 2); run++) {
    const uint64_t seed = 1 + run % 2;
    const bool mma = run >= 2;
    emu_dq_cu_attn_set_mma(mma);
    cuemu_set_seed(seed * 0x2545f4914f6cdd1dull);
    float *got = (float *)malloc(nq * sizeof(float));
    for (size_t i = 0; i < nq; i++)
      got[i] = NAN; /* every output must be written */
    float *st = c.stats ? (float *)calloc(nst, sizeof(float)) : NULL;
    float *qm = c.qmass ? (float *)calloc(nqm, sizeof(float)) : NULL;
    dq_attn ea = a;
    ea.out = got, ea.stats = st, ea.qmass = qm;
    const long l0 = cuemu_launches(), m0 = cuemu_mma_count();
    const int rc = emu_dq_cu_attention(NULL, &ea);
    CHECK_MSG(rc == 0, "%s: dq_cu_attention returned %d (%s)", c.what, rc,
              cudaGetErrorString((cudaError_t)rc));
    CHECK(cuemu_launches() > l0);
    /* the tensor cores ran exactly when they were asked for */
    CHECK_MSG((cuemu_mma_count() > m0) == mma, "%s: %ld mma instructions",
              c.what, cuemu_mma_count() - m0);
    const char *path = mma ? " (tensor cores)" : "";
    double worst = 0, worst_abs = 0;
    for (size_t i = 0; i < nq; i++) {
      double d = fabs((double)got[i] - ref[i]);
      if (!(d <= worst_abs))
        worst_abs = isnan(d) ? INFINITY : d;
      /* the tensor cores take Q and P as F16 (attn_mma.cuh): 4e-3 x max
       * |v|, as attn.cu's self-check */
      d /= mma ? 4e-3 * vmax : 1e-5 + 1e-4 * fabs(ref[i]);
      if (!(d <= worst))
        worst = isnan(d) ? INFINITY : d;
    }
    CHECK_MSG(worst <= 1.0,
              "%s%s (seed %d): outputs off by %g (%.2f of the tolerance)",
              c.what, path, (int)seed, worst_abs, worst);
    if (c.stats) {
      double sw = 0;
      for (size_t i = 0; i < nst; i++) {
        double d = fabs((double)st[i] - st_ref[i]);
        if (!(d <= sw))
          sw = isnan(d) ? INFINITY : d;
      }
      /* after the tensor cores, scores of F16-rounded queries: 4e-4 */
      CHECK_MSG(sw <= (mma ? 4e-4 : 1e-4),
                "%s%s (seed %d): statistics off by %g", c.what, path,
                (int)seed, sw);
      for (int h = 0; h < c.n_head; h++)
        for (int k = n_kv; k < stride; k++)
          CHECK(st[(size_t)h * stride + k] == 0.0f); /* padding untouched */
    }
    if (c.qmass) {
      double qw = 0;
      for (size_t i = 0; i < nqm; i++) {
        double d = fabs((double)qm[i] - qm_ref[i]);
        if (!(d <= qw))
          qw = isnan(d) ? INFINITY : d;
      }
      /* its (max, sum) then come from F16-rounded queries: 2e-3 */
      CHECK_MSG(qw <= (mma ? 2e-3 : 1e-4),
                "%s%s (seed %d): query mass off by %g", c.what, path,
                (int)seed, qw);
    }
    if (getenv("DQ_TEST_VERBOSE"))
      fprintf(stderr, "%-44s%s seed %d: outputs %.2e (%.2f of tol)\n",
              c.what, path, (int)seed, worst_abs, worst);
    free(got);
    free(st);
    free(qm);
  }
  n_cases_run++;
  free(q);
  free(kx);
  free(vx);
  free(kc);
  free(vc);
  free(ref);
  free(st_ref);
  free(qm_ref);
  free(bias);
}

void test_attention(dq_backend *be) {
  rng r = {4321};
  /* store tok pos0 heads kv hd causal window stats qmass bias n_sm */
  static const attn_case cases[] = {
      {1, 1, 700, 8, 2, 64, 1, 0, 1, 1, 0, 132, "decode F16 GQA"},
      {1, 1, 700, 8, 2, 64, 1, 0, 1, 0, 0, 2, "decode F16, 2 SMs: splits"},
      {0, 3, 500, 4, 1, 64, 1, 0, 1, 1, 0, 4, "F32 MQA, splits"},
      {8, 1, 1000, 4, 2, 128, 1, 200, 1, 1, 0, 8, "Q8_0 decode, window"},
      {1, 37, 300, 4, 4, 128, 1, 0, 1, 1, 0, 132, "prefill over a cache"},
      {1, 70, 0, 6, 2, 80, 1, 50, 1, 0, 0, 132, "prefill, window, hd 80"},
      {8, 40, 100, 2, 1, 64, 1, 0, 1, 1, 1, 3, "Q8_0 prefill, weights"},
      {0, 20, 0, 2, 2, 32, 0, 0, 0, 0, 0, 132, "non-causal (encoder)"},
      {1, 2, 300, 16, 1, 576, 1, 0, 1, 0, 0, 132, "latent attention hd 576"},
      {1, 9, 120, 4, 2, 256, 1, 0, 1, 1, 1, 132, "hd 256 (Gemma 3)"},
      {1, 1, 5, 2, 1, 2, 1, 0, 1, 0, 0, 132, "tiny head"},
      /* more of the tensor-core path (attn_mma, attn_stats_mma) */
      {1, 70, 0, 4, 4, 64, 1, 0, 1, 1, 1, 132, "hd 64 from 0, weights"},
      {1, 90, 41, 4, 1, 128, 1, 40, 1, 1, 0, 132, "MQA, window 40"},
      {1, 33, 3000, 2, 2, 128, 1, 0, 1, 0, 0, 4, "long cache, 4 SMs: splits"},
      {1, 50, 203, 8, 2, 64, 1, 0, 1, 1, 1, 132, "GQA, 4 row tiles"},
      {1, 45, 150, 4, 1, 256, 1, 0, 1, 1, 1, 132, "hd 256 (Gemma 3) prefill"},
      {1, 40, 500, 2, 1, 256, 1, 64, 1, 0, 0, 3, "hd 256, window, splits"},
  };
  for (const attn_case &c : cases)
    run_case(be, c, r);
  CHECK_EQ_INT(n_cases_run, (int)(sizeof cases / sizeof cases[0]));
}

/* The backend's start-up self-check (attn.cu dq_cu_attn_selfcheck: the
 * tensor cores against the CUDA-core kernel) passes, and ran them. */
void test_selfcheck() {
  emu_dq_cu_attn_set_mma(1);
  cuemu_set_device(132, 232448);
  char why[256] = "";
  const long m0 = cuemu_mma_count();
  const int v = emu_dq_cu_attn_selfcheck(NULL, why, sizeof why);
  CHECK_MSG(v == 0, "self-check: %d (%s)", v, why);
  CHECK(cuemu_mma_count() > m0);
}

} // namespace

int main(void) {
  dq_backend *be = NULL;
  dq_error err;
  memset(&err, 0, sizeof err);
  CHECK_OK(dq_backend_cpu_init(2, &be, &err), err.msg);
  if (be) {
    test_attention(be);
    test_selfcheck();
    dq_backend_free(be);
  }
  return TEST_EXIT();
}
