/*
 * attn_q8_impl.h - the 8-bit operands of the attention block kernel
 * (kernels.h: q8 = 1, the layouts and the arithmetic they promise),
 * included by attn_impl.h once its vector helpers and at_passinfo exist:
 * scores per pass of at most AT_QMAX queries; a softmax that leaves the
 * exponentials unnormalised; per value tile the probabilities normalised
 * and quantized, then the values. The driver (passes, tiles) is
 * attn_impl.h's.
 *
 * Two forms of one arithmetic: with AT_DPBUSD (the includer's vpdpbusd:
 * acc + four u8 x s8 products per 32-bit lane) the integer sums are
 * computed as integers; without it they are computed in float on the
 * small integers themselves (key or value bytes converted to float,
 * multiplied by the query's or probability's integer value), which is
 * exact because every partial sum stays below 2^24 (a block of 32
 * products of at most 127 x 127; a group of 64 of at most 255 x 127). The
 * float steps after the sums are the same in both, so on one lane width
 * both give the same bits.
 */
#ifndef AT_VW
#error "include attn_q8_impl.h from attn_impl.h"
#endif

typedef uint32_t at_vu __attribute__((vector_size(AT_VW * 4)));

/* One query, quantized per block of 32 (kernels.h). */
typedef struct at_q8q {
  int8_t q8[DQ_ATTN_Q8_HD_MAX];
#ifndef AT_DPBUSD
  float qf[DQ_ATTN_Q8_HD_MAX]; /* q8 as floats: the float form's operand */
#endif
  float d[DQ_ATTN_Q8_HD_MAX / 32]; /* block scale x the attention scale */
  int32_t c[DQ_ATTN_Q8_HD_MAX / 32]; /* -128 x the block's sum of q8: the
                                        keys' +128 taken back */
} at_q8q;

static void at_q8_query(const float *q, int hd, float scale, at_q8q *o) {
  for (int blk = 0; blk < hd / 32; blk++) {
    float d = dq_q8_quant(q + 32 * blk, 32, o->q8 + 32 * blk);
    int32_t sum = 0;
    for (int i = 0; i < 32; i++) {
      int v = o->q8[32 * blk + i];
#ifndef AT_DPBUSD
      o->qf[32 * blk + i] = (float)v;
#endif
      sum += v;
    }
    o->d[blk] = d * scale;
    o->c[blk] = -128 * sum;
  }
}

AT_INLINE at_vi at_loadi(const void *p) {
  at_vi v;
  memcpy(&v, p, sizeof v);
  return v;
}
AT_INLINE at_vi at_splati(int32_t x) { return (at_vi){0} + x; }
AT_INLINE at_vf at_i2f(at_vi v) { return __builtin_convertvector(v, at_vf); }
/* max(a, b) lane by lane as a > b ? a : b (the includer's AT_MAX: the
 * same rule in one instruction) */
AT_INLINE at_vf at_max(at_vf a, at_vf b) {
#ifdef AT_MAX
  return AT_MAX(a, b);
#else
  return at_select(a > b, a, b);
#endif
}
/* The largest lane, halves compared until one is left (exact in any
 * order). */
AT_INLINE float at_hmax(at_vf v) {
#if AT_VW == 16
  v = at_max(v, __builtin_shuffle(v, (at_vi){8, 9, 10, 11, 12, 13, 14, 15, 0,
                                             1, 2, 3, 4, 5, 6, 7}));
#endif
#if AT_VW >= 8
  v = at_max(v, __builtin_shuffle(v, (at_vi){4, 5, 6, 7, 0, 1, 2, 3
#if AT_VW == 16
                                             , 12, 13, 14, 15, 8, 9, 10, 11
#endif
                                  }));
#endif
  float m = v[0];
  for (int l = 1; l < 4; l++)
    m = v[l] > m ? v[l] : m;
  return m;
}
/* byte t (0..3) of every lane, sign-extended */
AT_INLINE at_vi at_sbyte(at_vi v, int t) {
  return (at_vi)((at_vu)v << (24 - 8 * t)) >> 24;
}

/* Scores of the pass's queries for key panel pb into their p rows (raw,
 * scaled, before the softmax). */
#define AT_Q8SCORES(NQ)                                                        \
  AT_INLINE void at_q8scores_##NQ(const at_passinfo *pi, int64_t pb) {         \
    const dq_attn_block *b = &pi->bb;                                          \
    const uint8_t *kp = (const uint8_t *)b->kt + (size_t)pb * b->kt_stride;    \
    const uint8_t *ksp = kp + (size_t)b->hd * DQ_ATTN_PANEL;                   \
    at_vf s[NQ][AT_NV];                                                        \
    _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                      \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                 \
        s[i][j] = at_splat(0.0f);                                              \
    for (int blk = 0; blk < b->hd / 32; blk++) {                               \
      const uint8_t *kb = kp + (size_t)blk * 32 * DQ_ATTN_PANEL;               \
      at_vf a[NQ][AT_NV];                                                      \
      AT_Q8DOT(NQ)                                                             \
      at_vf ks[AT_NV];                                                         \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                 \
        memcpy(&ks[j], ksp + ((size_t)blk * DQ_ATTN_PANEL + j * AT_VW) * 4,    \
               sizeof ks[j]);                                                  \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++) {                  \
        at_vf dd = at_splat(pi->qq[i].d[blk]);                                 \
        _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++) {             \
          s[i][j] = AT_FMA(a[i][j] * ks[j], dd, s[i][j]);                      \
        }                                                                      \
      }                                                                        \
    }                                                                          \
    _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                      \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                 \
        at_store(pi->qrow[i] + pb * DQ_ATTN_PANEL + j * AT_VW, s[i][j]);       \
  }

/* a[i][j] = the exact sum of q8 k8 over block blk (kb: its 8 groups of 4
 * elements x 16 keys), as floats */
#ifdef AT_DPBUSD
#define AT_Q8DOT(NQ)                                                           \
  at_vi acc[NQ][AT_NV];                                                        \
  _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                        \
    _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                   \
      acc[i][j] = at_splati(pi->qq[i].c[blk]);                                 \
  _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) {                        \
    at_vi kv[AT_NV];                                                           \
    _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                   \
      kv[j] = at_loadi(kb + ((size_t)r * DQ_ATTN_PANEL + j * AT_VW) * 4);      \
    _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++) {                    \
      int32_t w;                                                               \
      memcpy(&w, pi->qq[i].q8 + blk * 32 + r * 4, 4);                          \
      at_vi qb = at_splati(w);                                                 \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                 \
        acc[i][j] = AT_DPBUSD(acc[i][j], kv[j], qb);                           \
    }                                                                          \
  }                                                                            \
  _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                        \
    _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                   \
      a[i][j] = at_i2f(acc[i][j]);
#else
#define AT_Q8DOT(NQ)                                                           \
  _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++)                        \
    _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                   \
      a[i][j] = at_splat(0.0f);                                                \
  for (int r = 0; r < 8; r++) {                                                \
    at_vi kv[AT_NV];                                                           \
    _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                   \
      kv[j] = at_loadi(kb + ((size_t)r * DQ_ATTN_PANEL + j * AT_VW) * 4) ^     \
              at_splati((int32_t)0x80808080u); /* k8 + 128 -> k8 */            \
    _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {                      \
      at_vf kf[AT_NV];                                                         \
      _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)                 \
        kf[j] = at_i2f(at_sbyte(kv[j], t));                                    \
      _Pragma("GCC unroll 16") for (int i = 0; i < NQ; i++) {                  \
        at_vf qd = at_splat(pi->qq[i].qf[blk * 32 + r * 4 + t]);               \
        _Pragma("GCC unroll 16") for (int j = 0; j < AT_NV; j++)               \
          a[i][j] = AT_FMA(qd, kf[j], a[i][j]);                                \
      }                                                                        \
    }                                                                          \
  }
#endif

AT_Q8SCORES(1)
AT_Q8SCORES(2)
AT_Q8SCORES(3)
AT_Q8SCORES(4)
#if AT_QMAX > 4
AT_Q8SCORES(5)
AT_Q8SCORES(6)
AT_Q8SCORES(7)
AT_Q8SCORES(8)
#endif

/* e^x for x <= 0 (x < -87 is taken as -87: about 1.6e-38), with fused
 * steps and a degree-5 polynomial: relative error ~3e-6, well inside what
 * the probabilities' 8-bit quantization keeps, in under half the f32
 * path's operations (at_exp keeps that path's bits; this one need not). */
AT_INLINE at_vf at_q8_exp(at_vf x) {
  const at_vf lo = at_splat(-87.0f), magic = at_splat(12582912.0f);
  x = at_max(x, lo);
  at_vf n = AT_FMA(x, at_splat(1.44269504088896341f), magic) - magic;
  /* one fused step with ln 2 rounded to float (off by 1.9e-9): |n| <= 126,
   * so r is off by under 2.4e-7, a relative error of e^x ten times below
   * the polynomial's */
  at_vf r = AT_FMA(n, at_splat(-0.693147182f), x);
  at_vf p = at_splat(1.0f / 120);
  p = AT_FMA(p, r, at_splat(1.0f / 24));
  p = AT_FMA(p, r, at_splat(1.0f / 6));
  p = AT_FMA(p, r, at_splat(0.5f));
  p = AT_FMA(p, r, at_splat(1.0f));
  p = AT_FMA(p, r, at_splat(1.0f));
#ifdef AT_SCALEF /* p 2^n in one step */
  return AT_SCALEF(p, n);
#else
  at_vi e = (__builtin_convertvector(n, at_vi) + 127) << 23;
  return p * (at_vf)e;
#endif
}

/* The softmax's first half for one query's raw scores over [lo, hi):
 * bias, maximum, exponentials in place (their sum in lanes counted from
 * lo); [k0, lo) and [hi, k1) zeroed. Returns 1 / the sum: at_q8_probs
 * normalises the rows as it reads them. */
static float at_q8_softmax(float *s, const float *bias, int64_t k0,
                           int64_t lo, int64_t hi, int64_t k1) {
  if (bias)
    for (int64_t k = lo; k < hi; k++)
      s[k] += bias[k];
  int64_t k = lo;
  float mx = -INFINITY;
  if (hi - lo >= AT_VW) {
    at_vf vm = at_load(s + lo);
    for (k = lo + AT_VW; k + AT_VW <= hi; k += AT_VW) {
      at_vf x = at_load(s + k);
      vm = at_max(x, vm);
    }
    for (int l = 0; l < AT_VW; l++)
      mx = vm[l] > mx ? vm[l] : mx;
  }
  for (; k < hi; k++)
    mx = s[k] > mx ? s[k] : mx;
  at_vf m = at_splat(mx), sum = at_splat(0.0f);
  for (k = lo; k + AT_VW <= hi; k += AT_VW) {
    at_vf e = at_q8_exp(at_load(s + k) - m);
    at_store(s + k, e);
    sum += e;
  }
  if (k < hi) { /* the tail through the same exp, padded with zeros */
    float t[AT_VW];
    int64_t r = hi - k;
    for (int l = 0; l < AT_VW; l++)
      t[l] = l < r ? s[k + l] - mx : -100.0f;
    at_vf e = at_q8_exp(at_load(t));
    at_vi in;
    for (int l = 0; l < AT_VW; l++)
      in[l] = l < r ? -1 : 0;
    e = at_select(in, e, at_splat(0.0f));
    sum += e;
    at_store(t, e);
    memcpy(s + k, t, (size_t)r * sizeof(float));
  }
  float tot = at_hsum(sum);
  for (k = k0; k < lo; k++)
    s[k] = 0.0f;
  for (k = hi; k < k1; k++)
    s[k] = 0.0f;
  return tot > 0 ? 1.0f / tot : 0.0f;
}

/* Keys per value tile (the driver's; tiles start at multiples of it for
 * q8, so groups never straddle two) and per probability group. */
#define AT_Q8TILE (AT_TILE * DQ_ATTN_PANEL)
#if AT_Q8TILE % DQ_ATTN_Q8_GROUP
#error "value tiles must hold whole probability groups"
#endif
#define AT_Q8NG (AT_Q8TILE / DQ_ATTN_Q8_GROUP)
#ifdef AT_DPBUSD
typedef uint8_t at_u8p; /* a quantized probability */
typedef uint8_t at_vp __attribute__((vector_size(AT_VW)));
#else
typedef float at_u8p; /* the same integer, as a float */
typedef float at_vp __attribute__((vector_size(AT_VW * 4)));
#endif

/* Query pr's exponentials in [k0, k1) (inside the tile starting at tb)
 * normalised in place (times inv_sum), then times the values' scales,
 * quantized per group: u[k - tb] for every key
 * of the groups met (0 outside [k0, k1)), tg[(k - tb) / group] = m / 255
 * (0 for an all-zero group). u <= 255: p vs x (255 / m) + 0.5 < 255.5
 * even with both roundings up. */
static void at_q8_probs(const dq_attn_block *b, float *pr, float inv_sum,
                        int64_t tb, int64_t k0, int64_t k1, at_u8p *u,
                        float *tg) {
  const at_vf is = at_splat(inv_sum);
  enum { NV = DQ_ATTN_Q8_GROUP / AT_VW, PV = DQ_ATTN_PANEL / AT_VW };
  at_vi lane;
  for (int l = 0; l < AT_VW; l++)
    lane[l] = l;
  for (int64_t g0 = k0 / DQ_ATTN_Q8_GROUP * DQ_ATTN_Q8_GROUP; g0 < k1;
       g0 += DQ_ATTN_Q8_GROUP) {
    at_vf x[NV], mx = at_splat(0.0f);
    const uint8_t *vs = (const uint8_t *)b->v +
                        (size_t)g0 / DQ_ATTN_PANEL * b->v_stride +
                        (size_t)b->hd * DQ_ATTN_PANEL;
    if (g0 >= k0 && g0 + DQ_ATTN_Q8_GROUP <= k1) { /* the whole group */
      _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++) {
        at_vf sv;
        memcpy(&sv, vs + (size_t)(v / PV) * b->v_stride + (v % PV) * AT_VW * 4,
               sizeof sv);
        at_vf p = at_load(pr + g0 + v * AT_VW) * is;
        at_store(pr + g0 + v * AT_VW, p);
        if (b->psum)
          at_store(b->psum + g0 + v * AT_VW,
                   at_load(b->psum + g0 + v * AT_VW) + p);
        x[v] = p * sv;
        mx = at_max(x[v], mx);
      }
    } else {
      for (int v = 0; v < NV; v++) {
        int64_t k = g0 + v * AT_VW;
        if (k >= k1 || k + AT_VW <= k0) { /* not read: past k1 may lie
                                             past the rows */
          x[v] = at_splat(0.0f);
          continue;
        }
        at_vf sv;
        memcpy(&sv, vs + (size_t)(v / PV) * b->v_stride + (v % PV) * AT_VW * 4,
               sizeof sv);
        at_vi idx = lane + (int32_t)(k - k0);
        at_vi in = (idx >= 0) & (idx < (int32_t)(k1 - k0));
        at_vf p = at_load(pr + k) * is; /* lanes outside [k0, k1) may be
                                           overwritten (kernels.h) */
        at_store(pr + k, p);
        if (b->psum) { /* the lanes in range only: psum is n floats */
          for (int l = 0; l < AT_VW; l++)
            if (in[l])
              b->psum[k + l] += p[l];
        }
        x[v] = at_select(in, p * sv, at_splat(0.0f));
        mx = at_max(x[v], mx);
      }
    }
    float m = at_hmax(mx);
    int gi = (int)((g0 - tb) / DQ_ATTN_Q8_GROUP);
    at_u8p *ug = u + (g0 - tb);
    if (!(m > 0)) { /* zeros: a value sub-pass may still read them */
      tg[gi] = 0.0f;
      memset(ug, 0, DQ_ATTN_Q8_GROUP * sizeof *ug);
      continue;
    }
    float im = 255.0f / m;
    tg[gi] = m / 255.0f;
    at_vf inv = at_splat(im), half = at_splat(0.5f);
    _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++) {
      at_vi q = __builtin_convertvector(AT_FMA(x[v], inv, half), at_vi);
      at_vp qb = __builtin_convertvector(q, at_vp);
      memcpy(ug + v * AT_VW, &qb, sizeof qb);
    }
  }
}

/* Values for SQ queries of the pass from i0, CV vectors of the head from
 * element c, over [k0, k1) in the tile at tb: per group the exact integer
 * sum of u v8 over its quads of keys, then o += t_g x sum. */
#define AT_Q8VALUES(SQ, CV)                                                    \
  AT_INLINE void at_q8values_##SQ##_##CV(                                      \
      const at_passinfo *pi, int i0, int c, int64_t tb, int64_t k0,            \
      int64_t k1, const at_u8p (*u)[AT_Q8TILE], const float (*tg)[AT_Q8NG],    \
      int cont) {                                                              \
    const dq_attn_block *b = &pi->bb;                                          \
    size_t quad_bytes = (size_t)b->hd * 4;                                     \
    at_vf of[SQ][CV];                                                          \
    _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                       \
      _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                     \
        of[i][x] = cont ? at_load(b->o[i0 + i] + c + x * AT_VW)                \
                        : at_splat(0.0f);                                      \
    for (int64_t g0 = k0 / DQ_ATTN_Q8_GROUP * DQ_ATTN_Q8_GROUP; g0 < k1;       \
         g0 += DQ_ATTN_Q8_GROUP) {                                             \
      int gi = (int)((g0 - tb) / DQ_ATTN_Q8_GROUP), any = 0;                   \
      _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                     \
        any |= tg[i0 + i][gi] > 0;                                             \
      if (!any)                                                                \
        continue;                                                              \
      /* quads [q0, q1) of keys: those meeting [k0, k1) */                     \
      size_t q0 = (size_t)(g0 > k0 ? g0 : k0) / 4;                             \
      size_t q1 = ((size_t)(g0 + DQ_ATTN_Q8_GROUP < k1 ? g0 + DQ_ATTN_Q8_GROUP \
                                                         : k1) + 3) / 4;       \
      AT_Q8VSUM(SQ, CV)                                                        \
      _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++) {                   \
        at_vf t = at_splat(tg[i0 + i][gi]);                                    \
        _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                   \
          of[i][x] = of[i][x] + t * a[i][x];                                   \
      }                                                                        \
    }                                                                          \
    _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                       \
      _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                     \
        at_store(b->o[i0 + i] + c + x * AT_VW, of[i][x]);                      \
  }

/* a[i][x] = the exact sum of u v8 over the quads [q0, q1): quad qd's
 * value bytes at element c sit in panel qd / 4, quad_bytes x (qd % 4) in */
#ifdef AT_DPBUSD
/* AT_Q8VSUM's sums over quads [QA, QB) of panel pn (a whole group: the
 * constant 0..4, unrolled) */
#define AT_Q8VQUADS(SQ, CV, QA, QB)                                            \
  {                                                                            \
    const uint8_t *vr = (const uint8_t *)b->v + pn * b->v_stride +             \
                        (size_t)c * 4;                                         \
    _Pragma("GCC unroll 4") for (size_t t = QA; t < QB; t++) {                 \
      const uint8_t *vq = vr + t * quad_bytes;                                 \
      at_vi vv[CV];                                                            \
      _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                     \
        vv[x] = at_loadi(vq + (size_t)x * AT_VW * 4);                          \
      _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++) {                   \
        int32_t w;                                                             \
        memcpy(&w, up[i] + (pn * 4 + t) * 4, 4);                               \
        at_vi pb = at_splati(w);                                               \
        _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                   \
          ai[i][x] = AT_DPBUSD(ai[i][x], pb, vv[x]);                           \
      }                                                                        \
    }                                                                          \
  }
#define AT_Q8VSUM(SQ, CV)                                                      \
  at_vi ai[SQ][CV];                                                            \
  _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                         \
    _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                       \
      ai[i][x] = at_splati(0);                                                 \
  const at_u8p *up[SQ];                                                        \
  _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                         \
    up[i] = u[i0 + i] - tb;                                                    \
  if (q1 - q0 == DQ_ATTN_Q8_GROUP / 4) { /* a whole group: 4 panels */         \
    for (size_t pn = q0 / 4; pn * 4 < q1; pn++)                                \
      AT_Q8VQUADS(SQ, CV, 0, 4)                                                \
  } else                                                                       \
    for (size_t pn = q0 / 4; pn * 4 < q1; pn++) {                              \
      size_t qa = pn * 4 > q0 ? 0 : q0 - pn * 4;                               \
      size_t qb = pn * 4 + 4 < q1 ? 4 : q1 - pn * 4;                           \
      AT_Q8VQUADS(SQ, CV, qa, qb)                                              \
    }                                                                          \
  at_vf a[SQ][CV];                                                             \
  _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                         \
    _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                       \
      a[i][x] = at_i2f(ai[i][x]);
#else
#define AT_Q8VSUM(SQ, CV)                                                      \
  at_vf a[SQ][CV];                                                             \
  _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                         \
    _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                       \
      a[i][x] = at_splat(0.0f);                                                \
  const at_u8p *up[SQ];                                                        \
  _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++)                         \
    up[i] = u[i0 + i] - tb;                                                    \
  for (size_t pn = q0 / 4; pn * 4 < q1; pn++) {                               \
    const uint8_t *vr = (const uint8_t *)b->v + pn * b->v_stride +            \
                        (size_t)c * 4;                                         \
    size_t qa = pn * 4 > q0 ? 0 : q0 - pn * 4;                                 \
    size_t qb = pn * 4 + 4 < q1 ? 4 : q1 - pn * 4;                             \
    for (size_t t = qa; t < qb; t++) {                                         \
      const uint8_t *vq = vr + t * quad_bytes;                                 \
      at_vi vv[CV];                                                            \
      _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                     \
        vv[x] = at_loadi(vq + (size_t)x * AT_VW * 4);                          \
      _Pragma("GCC unroll 4") for (int y = 0; y < 4; y++) {                    \
        at_vf vf[CV];                                                          \
        _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                   \
          vf[x] = at_i2f(at_sbyte(vv[x], y));                                  \
        _Pragma("GCC unroll 8") for (int i = 0; i < SQ; i++) {                 \
          at_vf pu = at_splat(up[i][(pn * 4 + t) * 4 + (size_t)y]);            \
          _Pragma("GCC unroll 8") for (int x = 0; x < CV; x++)                 \
            a[i][x] = AT_FMA(pu, vf[x], a[i][x]);                              \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }
#endif

/* vectors of the head per value chunk, queries per value sub-pass: the
 * accumulators, outputs and one chunk of value rows in registers */
#if AT_VW >= 16
#define AT_Q8CV 4
#else
#define AT_Q8CV 2
#endif
#define AT_Q8SQ (AT_VW >= 16 ? 3 : AT_VW >= 8 ? 2 : 1)
AT_Q8VALUES(1, 2)
AT_Q8VALUES(2, 2)
AT_Q8VALUES(3, 2)
#if AT_Q8CV == 4
AT_Q8VALUES(1, 4)
AT_Q8VALUES(2, 4)
AT_Q8VALUES(3, 4)
#endif
typedef void (*at_q8values_fn)(const at_passinfo *, int, int, int64_t, int64_t,
                               int64_t, const at_u8p (*)[AT_Q8TILE],
                               const float (*)[AT_Q8NG], int);
static const at_q8values_fn at_q8values_tab[2][3] = { /* [cv == 4][sq - 1] */
    {at_q8values_1_2, at_q8values_2_2, at_q8values_3_2},
#if AT_Q8CV == 4
    {at_q8values_1_4, at_q8values_2_4, at_q8values_3_4},
#else
    {at_q8values_1_2, at_q8values_2_2, at_q8values_3_2},
#endif
};

/* Values of the whole pass over [k0, k1) inside the tile at tb: sub-passes
 * of at most AT_Q8SQ queries, as even as possible, each over the head in
 * chunks of AT_Q8CV vectors (then 2). */
static void at_q8values(const at_passinfo *pi, int64_t tb, int64_t k0,
                        int64_t k1, int cont) {
  at_u8p u[AT_QMAX][AT_Q8TILE];
  float tg[AT_QMAX][AT_Q8NG];
  for (int i = 0; i < pi->nq; i++)
    at_q8_probs(&pi->bb, pi->qrow[i], pi->inv[i], tb, k0, k1, u[i], tg[i]);
  const at_u8p(*uc)[AT_Q8TILE] = (const at_u8p(*)[AT_Q8TILE])u;
  const float(*tc)[AT_Q8NG] = (const float(*)[AT_Q8NG])tg;
  int hd = pi->bb.hd, rest = (pi->nq + AT_Q8SQ - 1) / AT_Q8SQ;
  for (int i0 = 0; i0 < pi->nq; rest--) {
    int sq = (pi->nq - i0 + rest - 1) / rest, c = 0;
    for (; AT_Q8CV == 4 && c + 4 * AT_VW <= hd; c += 4 * AT_VW)
      at_q8values_tab[1][sq - 1](pi, i0, c, tb, k0, k1, uc, tc, cont);
    for (; c + 2 * AT_VW <= hd; c += 2 * AT_VW)
      at_q8values_tab[0][sq - 1](pi, i0, c, tb, k0, k1, uc, tc, cont);
    i0 += sq;
  }
}

typedef void (*at_q8scores_fn)(const at_passinfo *, int64_t);
static const at_q8scores_fn at_q8scores_tab[AT_QMAX] = {
    at_q8scores_1, at_q8scores_2, at_q8scores_3, at_q8scores_4,
#if AT_QMAX > 4
    at_q8scores_5, at_q8scores_6, at_q8scores_7, at_q8scores_8,
#endif
};
