/*
 * attn_impl.h - the attention block kernel (kernels.h, dq_attn_run), written
 * once over GCC vector types of AT_VW floats and compiled per ISA: attn.c
 * (baseline, 4 lanes), attn_avx2.c (8 lanes, FMA), attn_avx512.c (16
 * lanes, FMA). The includer defines AT_VW, AT_FMA(a, b, c) = a * b + c (one
 * rounding where the ISA has FMA) and AT_NAME, the function to define.
 *
 * Work per pass over nq <= AT_QMAX queries of a block (8 with 16 lanes,
 * else 4; a larger block runs as even passes, interleaved over tiles of
 * keys: see AT_TILE):
 *   scores  - per panel of 16 keys, acc[i][j] += q_i[d] * kt[d][j] over
 *             even d and odd d in two chains, added at the end: each query
 *             element is broadcast once per panel, each panel row loaded
 *             once for all queries;
 *   softmax - max, then exp and its sum in lanes counted from lo[i];
 *   values  - o_i[c] += p_i[k] * v_k[c] for keys in order, in chunks of
 *             AT_VC vectors of the head: each value row is loaded once for
 *             all queries.
 * exp is our own (Cephes-style range reduction + degree-6 polynomial,
 * relative error ~2e-7 for x in [-87, 0]); it uses only mul and add, which
 * the build does not contract (-std=c11), so it gives the same bits on every
 * path.
 */
#include "cpu_int.h"

#include <math.h>
#include <stdint.h>

#ifndef AT_VW
#error "define AT_VW, AT_FMA and AT_NAME before including attn_impl.h"
#endif

typedef float at_vf __attribute__((vector_size(AT_VW * 4)));
typedef int32_t at_vi __attribute__((vector_size(AT_VW * 4)));

#define AT_NV (DQ_ATTN_PANEL / AT_VW) /* vectors per panel */
#define AT_VC (AT_VW >= 16 ? 4 : AT_VW >= 8 ? 4 : 8) /* value chunk, vectors */
/* most queries one pass of the kernel holds in registers; larger blocks
 * (up to DQ_ATTN_QB) run as several passes */
#define AT_QMAX (AT_VW >= 16 ? 8 : 4)
#if AT_QMAX > DQ_ATTN_QB
#error "DQ_ATTN_QB below the kernel's register block"
#endif
#define AT_INLINE static inline __attribute__((always_inline))

AT_INLINE at_vf at_load(const float *p) {
  at_vf v;
  memcpy(&v, p, sizeof v);
  return v;
}
AT_INLINE void at_store(float *p, at_vf v) { memcpy(p, &v, sizeof v); }
AT_INLINE float at_id(float x) { return x; }
/* AT_VW halves to floats (exact): the includer's AT_LOADH (F16C) or one
 * by one. */
AT_INLINE at_vf at_loadh(const dq_f16 *p) {
#ifdef AT_LOADH
  return AT_LOADH(p);
#else
  float t[AT_VW];
  for (int l = 0; l < AT_VW; l++)
    t[l] = dq_f16_to_f32(p[l]);
  return at_load(t);
#endif
}
AT_INLINE at_vf at_splat(float x) { /* an initializer: one broadcast */
#define AT_X4 x, x, x, x
#if AT_VW == 4
  return (at_vf){AT_X4};
#elif AT_VW == 8
  return (at_vf){AT_X4, AT_X4};
#elif AT_VW == 16
  return (at_vf){AT_X4, AT_X4, AT_X4, AT_X4};
#else
#error "AT_VW must be 4, 8 or 16"
#endif
#undef AT_X4
}
AT_INLINE at_vf at_select(at_vi m, at_vf a, at_vf b) { /* m ? a : b */
  return (at_vf)((m & (at_vi)a) | (~m & (at_vi)b));
}
/* Lanes summed in a fixed tree: halves added until one is left. */
AT_INLINE float at_hsum(at_vf v) {
  float t[AT_VW];
  memcpy(t, &v, sizeof t);
  for (int w = AT_VW / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; l++)
      t[l] = t[l] + t[l + w];
  return t[0];
}

/* e^x for x <= 0; x < -87 gives 0. */
AT_INLINE at_vf at_exp(at_vf x) {
  const at_vf lo = at_splat(-87.0f);
  at_vi tiny = x < lo;
  x = at_select(tiny, lo, x);
  /* n = round(x log2 e) by the 1.5 * 2^23 trick (|x log2 e| < 2^22) */
  const at_vf magic = at_splat(12582912.0f);
  at_vf n = (x * at_splat(1.44269504088896341f) + magic) - magic;
  at_vf r = x - n * at_splat(0.693359375f);
  r = r - n * at_splat(-2.12194440e-4f);
  at_vf p = at_splat(1.9875691500e-4f);
  p = p * r + at_splat(1.3981999507e-3f);
  p = p * r + at_splat(8.3334519073e-3f);
  p = p * r + at_splat(4.1665795894e-2f);
  p = p * r + at_splat(1.6666665459e-1f);
  p = p * r + at_splat(5.0000001201e-1f);
  p = p * (r * r) + r + at_splat(1.0f);
  /* 2^n, n in [-126, 0]: the exponent field directly */
  at_vi e = (__builtin_convertvector(n, at_vi) + 127) << 23;
  return at_select(tiny, at_splat(0.0f), p * (at_vf)e);
}

/* Scores of the block's queries for panel pb into p rows (raw, before the
 * softmax), for nq queries; templated on nq so the accumulators stay in
 * registers. */
#define AT_SCORES(NQ, SFX, T, LOAD)                                                          \
  AT_INLINE void at_scores_##NQ##SFX(const dq_attn_block *b, int64_t pb,           \
                                float *const *qrow) {                         \
    at_vf acc[NQ][AT_NV], acc2[NQ][AT_NV];                                    \
    _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                     \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                \
        acc[i][j] = acc2[i][j] = at_splat(0.0f);                              \
    const T *kt = (const T *)b->kt + (size_t)pb * b->kt_stride;             \
    const float *qp[NQ];                                                      \
    _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                     \
      qp[i] = b->q[i];                                                        \
    int d = 0;                                                                \
    /* two chains (even and odd d): twice the independent FMAs in flight,  \
     * and half the chain length for rounding */                              \
    for (; d + 1 < b->hd; d += 2, kt += 2 * DQ_ATTN_PANEL) {                  \
      at_vf kv[AT_NV], kv2[AT_NV];                                            \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++) {              \
        kv[j] = LOAD(kt + j * AT_VW);                                      \
        kv2[j] = LOAD(kt + DQ_ATTN_PANEL + j * AT_VW);                     \
      }                                                                       \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++) {                 \
        at_vf qd = at_splat(qp[i][d]), qd2 = at_splat(qp[i][d + 1]);          \
        _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++) {            \
          acc[i][j] = AT_FMA(qd, kv[j], acc[i][j]);                           \
          acc2[i][j] = AT_FMA(qd2, kv2[j], acc2[i][j]);                       \
        }                                                                     \
      }                                                                       \
    }                                                                         \
    if (d < b->hd) {                                                          \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++) {                 \
        at_vf qd = at_splat(qp[i][d]);                                        \
        _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)              \
          acc[i][j] = AT_FMA(qd, LOAD(kt + j * AT_VW), acc[i][j]);         \
      }                                                                       \
    }                                                                         \
    at_vf sc = at_splat(b->scale);                                            \
    _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                     \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                \
        at_store(qrow[i] + pb * DQ_ATTN_PANEL + j * AT_VW,                    \
                 (acc[i][j] + acc2[i][j]) * sc);                              \
  }
AT_SCORES(1, f, float, at_load)
AT_SCORES(2, f, float, at_load)
AT_SCORES(3, f, float, at_load)
AT_SCORES(4, f, float, at_load)
AT_SCORES(1, h, dq_f16, at_loadh)
AT_SCORES(2, h, dq_f16, at_loadh)
AT_SCORES(3, h, dq_f16, at_loadh)
AT_SCORES(4, h, dq_f16, at_loadh)

/* Values: o_i = sum_k p_i[k] v_k over keys [k0, k1), chunk by chunk of the
 * head (AT_VC vectors, then single vectors, then single floats: every
 * element is the same chain of fused multiply-adds over k either way).
 * Zero probabilities outside a query's range add exact zeros. */
#define AT_VALUES(NQ, SFX, T, LOAD, CVT1, VC)                                                        \
  AT_INLINE void at_values_##NQ##SFX(const dq_attn_block *b, int64_t k0,           \
                                int64_t k1, float *const *qrow, int cont) {   \
    int c = 0;                                                                \
    for (; c + VC * AT_VW <= b->hd; c += VC * AT_VW) {                  \
      at_vf acc[NQ][VC];                                                   \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                                            \
        _Pragma("GCC unroll 16") for (int j = 0; j < VC; j++)                                       \
          acc[i][j] = cont ? at_load(b->o[i] + c + j * AT_VW) : at_splat(0.0f); \
      for (int64_t k = k0; k < k1; k++) {                                     \
        const T *vr = (const T *)b->v + (size_t)k * b->v_stride + c;                 \
        at_vf vv[VC];                                                      \
        _Pragma("GCC unroll 16") for (int j = 0; j < VC; j++)                                       \
          vv[j] = LOAD(vr + j * AT_VW);                                    \
        _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++) {                                        \
          at_vf pk = at_splat(qrow[i][k]);                                    \
          _Pragma("GCC unroll 16") for (int j = 0; j < VC; j++)                                     \
            acc[i][j] = AT_FMA(pk, vv[j], acc[i][j]);                         \
        }                                                                     \
      }                                                                       \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                                            \
        _Pragma("GCC unroll 16") for (int j = 0; j < VC; j++)                                       \
          at_store(b->o[i] + c + j * AT_VW, acc[i][j]);                       \
    }                                                                         \
    for (; c + AT_VW <= b->hd; c += AT_VW) { /* one vector at a time */      \
      at_vf acc[NQ];                                                          \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                   \
        acc[i] = cont ? at_load(b->o[i] + c) : at_splat(0.0f);                \
      for (int64_t k = k0; k < k1; k++) {                                     \
        at_vf vv = LOAD((const T *)b->v + (size_t)k * b->v_stride + c);       \
        _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                 \
          acc[i] = AT_FMA(at_splat(qrow[i][k]), vv, acc[i]);                  \
      }                                                                       \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                   \
        at_store(b->o[i] + c, acc[i]);                                        \
    }                                                                         \
    for (; c < b->hd; c++) /* the head's tail */                          \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++) {                 \
        float a0 = cont ? b->o[i][c] : 0.0f;                                  \
        for (int64_t k = k0; k < k1; k++)                                     \
          a0 = fmaf(qrow[i][k], CVT1(((const T *)b->v)[(size_t)k * b->v_stride + c]), a0);       \
        b->o[i][c] = a0;                                                      \
      }                                                                       \
  }
AT_VALUES(1, f, float, at_load, at_id, AT_VC)
AT_VALUES(2, f, float, at_load, at_id, AT_VC)
AT_VALUES(3, f, float, at_load, at_id, AT_VC)
AT_VALUES(4, f, float, at_load, at_id, AT_VC)
AT_VALUES(1, h, dq_f16, at_loadh, dq_f16_to_f32, AT_VC)
AT_VALUES(2, h, dq_f16, at_loadh, dq_f16_to_f32, AT_VC)
AT_VALUES(3, h, dq_f16, at_loadh, dq_f16_to_f32, AT_VC)
AT_VALUES(4, h, dq_f16, at_loadh, dq_f16_to_f32, AT_VC)
#if AT_QMAX > 4
/* 5..8 queries (16-lane builds: 32 vector registers): value chunks of 2
 * vectors keep the 8 x 2 accumulators in registers; each output element
 * is still one chain over k, so the bits do not change */
AT_SCORES(5, f, float, at_load)
AT_SCORES(6, f, float, at_load)
AT_SCORES(7, f, float, at_load)
AT_SCORES(8, f, float, at_load)
AT_SCORES(5, h, dq_f16, at_loadh)
AT_SCORES(6, h, dq_f16, at_loadh)
AT_SCORES(7, h, dq_f16, at_loadh)
AT_SCORES(8, h, dq_f16, at_loadh)
AT_VALUES(5, f, float, at_load, at_id, 2)
AT_VALUES(6, f, float, at_load, at_id, 2)
AT_VALUES(7, f, float, at_load, at_id, 2)
AT_VALUES(8, f, float, at_load, at_id, 2)
AT_VALUES(5, h, dq_f16, at_loadh, dq_f16_to_f32, 2)
AT_VALUES(6, h, dq_f16, at_loadh, dq_f16_to_f32, 2)
AT_VALUES(7, h, dq_f16, at_loadh, dq_f16_to_f32, 2)
AT_VALUES(8, h, dq_f16, at_loadh, dq_f16_to_f32, 2)
#endif

typedef void (*at_scores_fn)(const dq_attn_block *, int64_t, float *const *);
typedef void (*at_values_fn)(const dq_attn_block *, int64_t, int64_t,
                             float *const *, int);
/* [nq - 1][f16] */
static const at_scores_fn at_scores_tab[AT_QMAX][2] = {
    {at_scores_1f, at_scores_1h}, {at_scores_2f, at_scores_2h},
    {at_scores_3f, at_scores_3h}, {at_scores_4f, at_scores_4h},
#if AT_QMAX > 4
    {at_scores_5f, at_scores_5h}, {at_scores_6f, at_scores_6h},
    {at_scores_7f, at_scores_7h}, {at_scores_8f, at_scores_8h},
#endif
};
static const at_values_fn at_values_tab[AT_QMAX][2] = {
    {at_values_1f, at_values_1h}, {at_values_2f, at_values_2h},
    {at_values_3f, at_values_3h}, {at_values_4f, at_values_4h},
#if AT_QMAX > 4
    {at_values_5f, at_values_5h}, {at_values_6f, at_values_6h},
    {at_values_7f, at_values_7h}, {at_values_8f, at_values_8h},
#endif
};

/* Softmax of one query's raw scores over [lo, hi) in place; [k0, lo) and
 * [hi, k1) are zeroed. */
AT_INLINE void at_softmax(float *s, const float *bias, int64_t k0, int64_t lo,
                          int64_t hi, int64_t k1) {
  if (bias)
    for (int64_t k = lo; k < hi; k++)
      s[k] += bias[k];
  /* the maximum in lanes (exact in any order; a scalar chain of
   * dependent max instructions took a fifth of the kernel's time) */
  int64_t k = lo;
  float mx = -INFINITY;
  if (hi - lo >= AT_VW) {
    at_vf vm = at_load(s + lo);
    for (k = lo + AT_VW; k + AT_VW <= hi; k += AT_VW) {
      at_vf x = at_load(s + k);
      vm = at_select(x > vm, x, vm);
    }
    float t[AT_VW];
    at_store(t, vm);
    for (int l = 0; l < AT_VW; l++)
      mx = t[l] > mx ? t[l] : mx;
  }
  for (; k < hi; k++)
    mx = s[k] > mx ? s[k] : mx;
  at_vf m = at_splat(mx), sum = at_splat(0.0f);
  k = lo;
  for (; k + AT_VW <= hi; k += AT_VW) {
    at_vf e = at_exp(at_load(s + k) - m);
    at_store(s + k, e);
    sum += e;
  }
  if (k < hi) { /* the tail through the same vector exp, padded with -inf */
    float t[AT_VW];
    int64_t r = hi - k;
    _Pragma("GCC unroll 16") for (int l = 0; l < AT_VW; l++)
      t[l] = l < r ? s[k + l] : -INFINITY;
    at_vf e = at_exp(at_load(t) - m);
    sum += e;
    at_store(t, e);
    memcpy(s + k, t, (size_t)r * sizeof(float));
  }
  float tot = at_hsum(sum), inv = tot > 0 ? 1.0f / tot : 0.0f;
  at_vf iv = at_splat(inv);
  for (k = lo; k + AT_VW <= hi; k += AT_VW)
    at_store(s + k, at_load(s + k) * iv);
  for (; k < hi; k++)
    s[k] *= inv;
  for (k = k0; k < lo; k++)
    s[k] = 0.0f;
  for (k = hi; k < k1; k++)
    s[k] = 0.0f;
}

/* A block runs as passes of at most AT_QMAX queries (the register block),
 * interleaved over tiles of AT_TILE panels: each tile's keys are scored for
 * every pass, and later its values summed for every pass, while the tile
 * is in cache (512 keys: 64 KiB of F16 keys and as much of values per
 * head), so a block of DQ_ATTN_QB queries reads the run's keys and values
 * from memory about once instead of once per pass. A pass's value sums
 * continue over the tiles from o (stored and reloaded: the same chain of
 * fused multiply-adds in key order), so the bits are those of one pass
 * over all keys. */
#define AT_TILE 32
#define AT_NPASS ((DQ_ATTN_QB + AT_QMAX - 1) / AT_QMAX)

typedef struct at_passinfo {
  dq_attn_block bb; /* the pass's queries first */
  float *qrow[AT_QMAX];
  const struct at_q8q *qq; /* q8: the pass's queries, quantized */
  float inv[AT_QMAX];      /* q8: 1 / the exponentials' sum per query (the
                              rows are normalised as they are quantized) */
  int64_t k0, k1; /* union of its queries' ranges */
  int nq;
} at_passinfo;

#include "attn_q8_impl.h"

void AT_NAME(const dq_attn_block *b) {
  dq_attn_block b0;
  int h = b->f16 != 0, q8 = b->q8 != 0;
  if (q8 && (b->hd % 32 || b->hd > DQ_ATTN_Q8_HD_MAX))
    return; /* kernels.h: the caller's precondition */
  if (!b->kt_stride || (q8 && !b->v_stride)) { /* panels back to back */
    b0 = *b;
    if (!b0.kt_stride)
      b0.kt_stride = q8 ? dq_attn_q8k_bytes(b->hd)
                        : (size_t)b->hd * DQ_ATTN_PANEL;
    if (q8 && !b0.v_stride)
      b0.v_stride = dq_attn_q8v_bytes(b->hd);
    b = &b0;
  }
  at_q8q qq[DQ_ATTN_QB];
  if (q8)
    for (int i = 0; i < b->nq; i++)
      at_q8_query(b->q[i], b->hd, b->scale, &qq[i]);
  /* as few passes as the register block allows, as even as possible
   * (AVX2: 8 queries = 4 + 4, 5 = 3 + 2 rather than 4 + 1) */
  at_passinfo ps[AT_NPASS];
  int n_pass = (b->nq + AT_QMAX - 1) / AT_QMAX, np = 0;
  int64_t K0 = b->lo[0], K1 = b->hi[0];
  for (int i0 = 0, left = b->nq, rest = n_pass; left > 0; rest--, np++) {
    at_passinfo *pi = &ps[np];
    int nq = (left + rest - 1) / rest;
    pi->bb = *b;
    pi->nq = nq;
    pi->qq = qq + (q8 ? i0 : 0);
    pi->k0 = b->lo[i0];
    pi->k1 = b->hi[i0];
    for (int i = 0; i < nq; i++) {
      pi->bb.q[i] = b->q[i0 + i];
      pi->bb.o[i] = b->o[i0 + i];
      pi->bb.lo[i] = b->lo[i0 + i];
      pi->bb.hi[i] = b->hi[i0 + i];
      pi->qrow[i] = b->p + (size_t)(i0 + i) * b->p_stride;
      pi->k0 = pi->bb.lo[i] < pi->k0 ? pi->bb.lo[i] : pi->k0;
      pi->k1 = pi->bb.hi[i] > pi->k1 ? pi->bb.hi[i] : pi->k1;
    }
    K0 = pi->k0 < K0 ? pi->k0 : K0;
    K1 = pi->k1 > K1 ? pi->k1 : K1;
    i0 += nq;
    left -= nq;
  }
  /* scores, tile by tile */
  for (int64_t t0 = K0 / DQ_ATTN_PANEL; t0 * DQ_ATTN_PANEL < K1; t0 += AT_TILE)
    for (int i = 0; i < np; i++) {
      at_passinfo *pi = &ps[i];
      int64_t pb = pi->k0 / DQ_ATTN_PANEL > t0 ? pi->k0 / DQ_ATTN_PANEL : t0;
      if (q8) {
        at_q8scores_fn qf = at_q8scores_tab[pi->nq - 1];
        for (; pb < t0 + AT_TILE && pb * DQ_ATTN_PANEL < pi->k1; pb++)
          qf(pi, pb);
        continue;
      }
      at_scores_fn sf = at_scores_tab[pi->nq - 1][h];
      for (; pb < t0 + AT_TILE && pb * DQ_ATTN_PANEL < pi->k1; pb++)
        sf(&pi->bb, pb, pi->qrow);
    }
  for (int i = 0; i < np; i++)
    for (int q = 0; q < ps[i].nq; q++) {
      if (q8)
        ps[i].inv[q] = at_q8_softmax(ps[i].qrow[q], b->bias, ps[i].k0,
                                     ps[i].bb.lo[q], ps[i].bb.hi[q], ps[i].k1);
      else {
        at_softmax(ps[i].qrow[q], b->bias, ps[i].k0, ps[i].bb.lo[q],
                   ps[i].bb.hi[q], ps[i].k1);
        if (b->psum) { /* (q8 adds its rows as it normalises them) */
          const float *pr = ps[i].qrow[q];
          int64_t k = ps[i].bb.lo[q], hi = ps[i].bb.hi[q];
          for (; k + AT_VW <= hi; k += AT_VW)
            at_store(b->psum + k, at_load(b->psum + k) + at_load(pr + k));
          for (; k < hi; k++)
            b->psum[k] += pr[k];
        }
      }
    }
  /* values, tile by tile, each pass continuing its sums; q8 tiles start
   * at multiples of their size, so that a key's probability group does not
   * depend on the block's other queries */
  int64_t tile0 = q8 ? K0 / AT_Q8TILE * AT_Q8TILE
                     : K0 / DQ_ATTN_PANEL * DQ_ATTN_PANEL;
  for (int64_t t0 = tile0; t0 < K1; t0 += AT_TILE * DQ_ATTN_PANEL)
    for (int i = 0; i < np; i++) {
      at_passinfo *pi = &ps[i];
      int64_t a = pi->k0 > t0 ? pi->k0 : t0;
      int64_t e = t0 + AT_TILE * DQ_ATTN_PANEL < pi->k1
                      ? t0 + AT_TILE * DQ_ATTN_PANEL
                      : pi->k1;
      if (a < e && q8)
        at_q8values(pi, t0, a, e, a > pi->k0);
      else if (a < e)
        at_values_tab[pi->nq - 1][h](&pi->bb, a, e, pi->qrow, a > pi->k0);
    }
}
