/*
 * vecdot_x86.h - the 256-bit x86 dot-product kernels, written once and
 * compiled twice: by vecdot_avx2.c (AVX2 + FMA + F16C; u8 x s8 products via
 * vpmaddubsw + vpmaddwd) and by vecdot_avx512.c with DQ_X86_VNNI defined
 * (vpdpbusd, which sums four u8 x s8 products straight into int32). Include
 * only from those files; it defines static functions and a table named by
 * DQ_X86_TABLE.
 *
 * Integer math per block is exact and identical to vecdot_ref.c; only the
 * order of the float additions differs. Activation int8 values are within
 * [-127, 127] (our quantizers), so vpmaddubsw pair sums never saturate:
 * at most 2 * 128 * 127 < 32767 (a stored -128 weight has |q| = 128).
 */
#include "cpu_int.h"
#include "x86_util.h"

/* Eight int32 sums of four u8 x s8 products each (lane k: bytes 4k..4k+3). */
static inline __m256i dot_u8s8(__m256i u, __m256i s) {
#ifdef DQ_X86_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/* As dot_u8s8, each lane multiplied by the int32 lane of `scale` (small
 * values, |scale| <= 127). */
static inline __m256i dot_u8s8_scaled(__m256i u, __m256i s, __m256i scale) {
#ifdef DQ_X86_VNNI
  return _mm256_mullo_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s),
                            scale);
#else
  /* vpmaddwd multiplies 16-bit pairs: put the scale in both halves. */
  __m256i s16 = _mm256_or_si256(_mm256_and_si256(scale, _mm256_set1_epi32(0xffff)),
                                _mm256_slli_epi32(scale, 16));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), s16);
#endif
}

/* Signed x signed via the sign trick: |x| * (y with x's sign). */
static inline __m256i dot_s8s8(__m256i x, __m256i y) {
  return dot_u8s8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}

static void x86_dot_f32(int64_t n, const void *w, const void *a, float *out) {
  const float *x = w, *y = a;
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
  float s = hsum_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; i++)
    s += x[i] * y[i];
  *out = s;
}

static inline __m256 load_f16x8(const dq_f16 *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static void x86_dot_f16(int64_t n, const void *w, const void *a, float *out) {
  const dq_f16 *x = w;
  const float *y = a;
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(load_f16x8(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(load_f16x8(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(load_f16x8(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(load_f16x8(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_fmadd_ps(load_f16x8(x + i), _mm256_loadu_ps(y + i), s0);
  float s = hsum_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; i++)
    s += h2f(x[i]) * y[i];
  *out = s;
}

static inline __m256 load_bf16x8(const dq_bf16 *p) {
  __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

static void x86_dot_bf16(int64_t n, const void *w, const void *a, float *out) {
  const dq_bf16 *x = w;
  const float *y = a;
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(load_bf16x8(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(load_bf16x8(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(load_bf16x8(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(load_bf16x8(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_fmadd_ps(load_bf16x8(x + i), _mm256_loadu_ps(y + i), s0);
  float s = hsum_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; i++)
    s += dq_bf16_to_f32(x[i]) * y[i];
  *out = s;
}

/* 4-token float kernels: each 8 weights are loaded (and converted) once and
 * multiplied into 4 activation rows; ragged tails are scalar. */
#define DEF_FLOAT4(NAME, WT, LOAD8, CVT1)                                      \
  static void x86_dot4_##NAME(int64_t n, const void *w, const void *a,        \
                              size_t a_row_bytes, float *out,                 \
                              int64_t out_stride) {                           \
    const WT *x = w;                                                          \
    const float *y[4];                                                        \
    __m256 acc[4];                                                            \
    for (int t = 0; t < 4; t++) {                                             \
      y[t] = (const float *)((const uint8_t *)a + t * a_row_bytes);           \
      acc[t] = _mm256_setzero_ps();                                           \
    }                                                                         \
    int64_t i = 0;                                                            \
    for (; i + 8 <= n; i += 8) {                                              \
      __m256 wv = LOAD8(x + i);                                               \
      _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++)                     \
        acc[t] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(y[t] + i), acc[t]);      \
    }                                                                         \
    for (int t = 0; t < 4; t++) {                                             \
      float s = hsum_ps(acc[t]);                                              \
      for (int64_t k = i; k < n; k++)                                         \
        s += CVT1(x[k]) * y[t][k];                                            \
      out[t * out_stride] = s;                                                \
    }                                                                         \
  }

static inline float f32_id(float v) { return v; }
DEF_FLOAT4(f32, float, _mm256_loadu_ps, f32_id)
DEF_FLOAT4(f16, dq_f16, load_f16x8, h2f)
DEF_FLOAT4(bf16, dq_bf16, load_bf16x8, dq_bf16_to_f32)

/* ---- 32-element block types --------------------------------------------
 * Each weight block decodes once into 32 int8 lanes (wq); the kernels then
 * dot it with one activation block (x86_dot_*: two blocks per iteration into
 * two accumulators, so the FMA latency chain is not the limit). dq_matmul
 * runs these types through the unit-layout kernels (gemm_vn.h) or, for
 * AVX2's Q8_0, gemm_x86.h; the 4-token kernels are the float types' only.
 * Signed types (Q4_0, Q5_0, Q8_0) use |wq| and the sign trick; Q4_1/Q5_1 are
 * unsigned codes plus a per-block min m, which adds m * s per block. */

static inline __m256i dec_q4_0(const dq_block_q4_0 *b) {
  return _mm256_sub_epi8(nibbles32(b->qs), _mm256_set1_epi8(8));
}
static inline __m256i dec_q5_0(const dq_block_q5_0 *b) {
  /* q - 16 in int8: a clear fifth bit leaves 0xf0 | nibble = nibble - 16. */
  __m256i hi = _mm256_andnot_si256(bits32(b->qh), _mm256_set1_epi8((char)0xf0));
  return _mm256_or_si256(nibbles32(b->qs), hi);
}
static inline __m256i dec_q8_0(const dq_block_q8_0 *b) {
  return _mm256_loadu_si256((const __m256i *)b->qs);
}
static inline __m256i dec_q4_1(const dq_block_q4_1 *b) { return nibbles32(b->qs); }
static inline __m256i dec_q5_1(const dq_block_q5_1 *b) {
  __m256i hi = _mm256_and_si256(bits32(b->qh), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(nibbles32(b->qs), hi);
}

static inline __m256i ld_y(const int8_t *qs) {
  return _mm256_loadu_si256((const __m256i *)qs);
}

#define DEF_SIGNED(NAME, WT)                                                   \
  static inline __m256 blk_##NAME(const WT *x, const dq_block_q8_0 *y,        \
                                  __m256 acc) {                               \
    __m256i wq = dec_##NAME(x);                                               \
    __m256i p = dot_u8s8(_mm256_sign_epi8(wq, wq),                            \
                         _mm256_sign_epi8(ld_y(y->qs), wq));                  \
    return _mm256_fmadd_ps(_mm256_set1_ps(h2f(x->d) * h2f(y->d)),            \
                           _mm256_cvtepi32_ps(p), acc);                       \
  }                                                                           \
  static void x86_dot_##NAME(int64_t n, const void *w, const void *a,         \
                             float *out) {                                    \
    const WT *x = w;                                                          \
    const dq_block_q8_0 *y = a;                                               \
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;                           \
    int64_t nb = n / DQ_QK, i = 0;                                            \
    for (; i + 1 < nb; i += 2) {                                              \
      acc0 = blk_##NAME(x + i, y + i, acc0);                                  \
      acc1 = blk_##NAME(x + i + 1, y + i + 1, acc1);                          \
    }                                                                         \
    if (i < nb)                                                               \
      acc0 = blk_##NAME(x + i, y + i, acc0);                                  \
    *out = hsum_ps(_mm256_add_ps(acc0, acc1));                                \
  }

#define DEF_UNSIGNED(NAME, WT)                                                 \
  static inline __m256 blk_##NAME(const WT *x, const dq_block_q8_1 *y,        \
                                  __m256 acc, float *summ) {                  \
    __m256i p = dot_u8s8(dec_##NAME(x), ld_y(y->qs));                         \
    *summ += h2f(x->m) * h2f(y->s);                                           \
    return _mm256_fmadd_ps(_mm256_set1_ps(h2f(x->d) * h2f(y->d)),            \
                           _mm256_cvtepi32_ps(p), acc);                       \
  }                                                                           \
  static void x86_dot_##NAME(int64_t n, const void *w, const void *a,         \
                             float *out) {                                    \
    const WT *x = w;                                                          \
    const dq_block_q8_1 *y = a;                                               \
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;                           \
    float s0 = 0.0f, s1 = 0.0f;                                               \
    int64_t nb = n / DQ_QK, i = 0;                                            \
    for (; i + 1 < nb; i += 2) {                                              \
      acc0 = blk_##NAME(x + i, y + i, acc0, &s0);                             \
      acc1 = blk_##NAME(x + i + 1, y + i + 1, acc1, &s1);                     \
    }                                                                         \
    if (i < nb)                                                               \
      acc0 = blk_##NAME(x + i, y + i, acc0, &s0);                             \
    *out = hsum_ps(_mm256_add_ps(acc0, acc1)) + (s0 + s1);                    \
  }

DEF_SIGNED(q4_0, dq_block_q4_0)
DEF_SIGNED(q5_0, dq_block_q5_0)
DEF_SIGNED(q8_0, dq_block_q8_0)
DEF_UNSIGNED(q4_1, dq_block_q4_1)
DEF_UNSIGNED(q5_1, dq_block_q5_1)

static void x86_dot_q4_k(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q4_k *x = w;
  const dq_block_q8_k *y = a;
  __m256 acc = _mm256_setzero_ps();
  float summ = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK_K; i++) {
    uint8_t sc[8], mn[8];
    for (int s = 0; s < 8; s++)
      dq_q4k_scale_min(x[i].scales, s, &sc[s], &mn[s]);
    int im = 0;
    for (int s = 0; s < 8; s++)
      im += mn[s] * (y[i].bsums[2 * s] + y[i].bsums[2 * s + 1]);
    summ += y[i].d * h2f(x[i].dmin) * (float)im;
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
      __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * c));
      __m256i lo = _mm256_and_si256(q, _mm256_set1_epi8(15));
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), _mm256_set1_epi8(15));
      const __m256i *yy = (const __m256i *)(y[i].qs + 64 * c);
      sumi = _mm256_add_epi32(sumi, dot_u8s8_scaled(lo, _mm256_loadu_si256(yy),
                                                    _mm256_set1_epi32(sc[2 * c])));
      sumi = _mm256_add_epi32(sumi, dot_u8s8_scaled(hi, _mm256_loadu_si256(yy + 1),
                                                    _mm256_set1_epi32(sc[2 * c + 1])));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * h2f(x[i].d)),
                          _mm256_cvtepi32_ps(sumi), acc);
  }
  *out = hsum_ps(acc) - summ;
}

static void x86_dot_q6_k(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q6_k *x = w;
  const dq_block_q8_k *y = a;
  const __m256i m4 = _mm256_set1_epi8(15);
  __m256 acc = _mm256_setzero_ps();
  float bias = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK_K; i++) {
    const int8_t *sc = x[i].scales;
    float d = y[i].d * h2f(x[i].d);
    /* sum (q - 32) y = sum q y - 32 sum y; the group sums of y are bsums. */
    int ib = 0;
    for (int g = 0; g < 16; g++)
      ib += sc[g] * y[i].bsums[g];
    bias += d * 32.0f * (float)ib;
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; h++) {
      const uint8_t *ql = x[i].ql + 64 * h;
      __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
      __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
      __m256i qh = _mm256_loadu_si256((const __m256i *)(x[i].qh + 32 * h));
      __m256i q[4];
      q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4),
                             _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x03)), 4));
      q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
                             _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x0c)), 2));
      q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                             _mm256_and_si256(qh, _mm256_set1_epi8(0x30)));
      q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                             _mm256_srli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8((char)0xc0)), 2));
      const int8_t *s8 = sc + 8 * h;
      for (int k = 0; k < 4; k++) {
        __m256i scale = _mm256_setr_epi32(s8[2 * k], s8[2 * k], s8[2 * k], s8[2 * k],
                                          s8[2 * k + 1], s8[2 * k + 1], s8[2 * k + 1],
                                          s8[2 * k + 1]);
        __m256i yv = _mm256_loadu_si256((const __m256i *)(y[i].qs + 128 * h + 32 * k));
        sumi = _mm256_add_epi32(sumi, dot_u8s8_scaled(q[k], yv, scale));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  *out = hsum_ps(acc) - bias;
}

/* ---- activation quantizers ------------------------------------------------
 * Bit-exact with quant_ref.c: the same absmax, d = amax / 127, id = 1 / d,
 * q = round-half-even(x * id) (vroundps and lrintf agree in the default
 * rounding mode), so tests compare bytes. */

static inline float hmax_ps(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

static inline int hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

/* 32 floats -> 32 int8 at q (q = round(x * id)); returns the 4 int32
 * vectors' sum when `sum` is set. */
static inline void quant32(const float *x, __m256 id, int8_t *q, __m256i *parts) {
  __m256i v[4];
  for (int k = 0; k < 4; k++)
    v[k] = _mm256_cvtps_epi32(_mm256_round_ps(
        _mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), id),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  if (parts)
    for (int k = 0; k < 4; k++)
      parts[k] = v[k];
  __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]),
                                 _mm256_packs_epi32(v[2], v[3]));
  /* packs interleave 128-bit lanes: dwords come out as 0 2 4 6 1 3 5 7 */
  p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256((__m256i *)q, p);
}

static inline float absmax32(const float *x, int n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (int k = 0; k < n; k += 8)
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + k)));
  return hmax_ps(m);
}

static void x86_quant_q8_0(const float *x, void *out, int64_t n) {
  dq_block_q8_0 *b = out;
  for (int64_t i = 0; i < n / DQ_QK; i++, x += DQ_QK) {
    float d = absmax32(x, DQ_QK) / 127.0f, id = d > 0.0f ? 1.0f / d : 0.0f;
    b[i].d = dq_f32_to_f16(d);
    quant32(x, _mm256_set1_ps(id), b[i].qs, NULL);
  }
}

static void x86_quant_q8_1(const float *x, void *out, int64_t n) {
  dq_block_q8_1 *b = out;
  for (int64_t i = 0; i < n / DQ_QK; i++, x += DQ_QK) {
    float d = absmax32(x, DQ_QK) / 127.0f, id = d > 0.0f ? 1.0f / d : 0.0f;
    __m256i v[4];
    b[i].d = dq_f32_to_f16(d);
    quant32(x, _mm256_set1_ps(id), b[i].qs, v);
    int sum = hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(v[0], v[1]),
                                          _mm256_add_epi32(v[2], v[3])));
    b[i].s = dq_f32_to_f16(h2f(b[i].d) * (float)sum);
  }
}

static void x86_quant_q8_k(const float *x, void *out, int64_t n) {
  dq_block_q8_k *b = out;
  for (int64_t i = 0; i < n / DQ_QK_K; i++, x += DQ_QK_K) {
    float d = absmax32(x, DQ_QK_K) / 127.0f, id = d > 0.0f ? 1.0f / d : 0.0f;
    b[i].d = d;
    for (int g = 0; g < DQ_QK_K / 32; g++) {
      __m256i v[4];
      quant32(x + 32 * g, _mm256_set1_ps(id), b[i].qs + 32 * g, v);
      b[i].bsums[2 * g] = (int16_t)hsum_epi32(_mm256_add_epi32(v[0], v[1]));
      b[i].bsums[2 * g + 1] = (int16_t)hsum_epi32(_mm256_add_epi32(v[2], v[3]));
    }
  }
}

const dq_vec_dot_table DQ_X86_TABLE = {{
    [DQ_TYPE_F32] = x86_dot_f32,
    [DQ_TYPE_F16] = x86_dot_f16,
    [DQ_TYPE_BF16] = x86_dot_bf16,
    [DQ_TYPE_Q4_0] = x86_dot_q4_0,
    [DQ_TYPE_Q4_1] = x86_dot_q4_1,
    [DQ_TYPE_Q5_0] = x86_dot_q5_0,
    [DQ_TYPE_Q5_1] = x86_dot_q5_1,
    [DQ_TYPE_Q8_0] = x86_dot_q8_0,
    [DQ_TYPE_Q4_K] = x86_dot_q4_k,
    [DQ_TYPE_Q6_K] = x86_dot_q6_k,
}, {
    [DQ_TYPE_F32] = x86_dot4_f32,
    [DQ_TYPE_F16] = x86_dot4_f16,
    [DQ_TYPE_BF16] = x86_dot4_bf16,
}, {
    [DQ_TYPE_Q8_0] = x86_quant_q8_0,
    [DQ_TYPE_Q8_1] = x86_quant_q8_1,
    [DQ_TYPE_Q8_K] = x86_quant_q8_k,
}};
