/*
 * cpu_int.h - internals shared by the files of kernels/cpu: the per-ISA
 * tables of vec_dot kernels and small inline helpers (half-precision loads,
 * the Q4_K scale unpacking). Not part of the public interface (kernels.h).
 *
 * Each ISA file (vecdot_avx2.c, vecdot_avx512.c) is compiled with its own -m
 * flags (isa.cmake) and exports one const table; nothing in it may be called
 * before dq_cpu_probe() has shown the ISA works.
 */
#ifndef DQ_CPU_INT_H
#define DQ_CPU_INT_H

#include "kernels.h"

#include <string.h>

/* One weight row against 4 activation rows (a + k * a_row_bytes), results
 * to out[k * out_stride]: prefill decodes each weight block once for 4
 * tokens. Same integer math as dq_vec_dot_fn; float order may differ. */
typedef void (*dq_vec_dot4_fn)(int64_t n, const void *w, const void *a,
                               size_t a_row_bytes, float *out,
                               int64_t out_stride);

/* Quantizes a row to an activation format; must produce exactly the bytes
 * dq_quantize_row produces. */
typedef void (*dq_quantize_fn)(const float *x, void *y, int64_t n);

/* Kernels per type id (NULL: none on this path; fn falls back to the scalar
 * reference, fn4 to four calls of fn, quant to dq_quantize_row). */
typedef struct dq_vec_dot_table {
  dq_vec_dot_fn fn[DQ_TYPE_ID_MAX];
  dq_vec_dot4_fn fn4[DQ_TYPE_ID_MAX];
  dq_quantize_fn quant[DQ_TYPE_ID_MAX]; /* Q8_0, Q8_1, Q8_K */
} dq_vec_dot_table;

/* Quantizes one activation row with caps' fastest path (same bytes as
 * dq_quantize_row). Arguments are not checked. */
void dq_quantize_act(const dq_cpu_caps *caps, int type, const float *x,
                     void *y, int64_t n);

/* The 4-token kernel for caps' path, or NULL. */
dq_vec_dot4_fn dq_vec_dot4_get(const dq_cpu_caps *caps, int type);

/* Prefill kernel for 32-element block weights: rows r < n_rows of w (row r
 * at w + r * w_row_bytes) against tokens t < n_tok of the activation rows
 * (a + t * a_row_bytes, Q8_0 or Q8_1), whose block scales d (and, for Q8_1,
 * sums s) come as floats: a_d[t * nb + b], a_s[t * nb + b] (nb = n / 32;
 * a_s NULL for Q8_0). Results to y[t * y_stride + r]. A row's result for a
 * token is the same whatever n_rows and n_tok (see gemm_x86.h). Only
 * AVX2's Q8_0 has one now (the other types take the unit-layout kernels
 * below). */
typedef void (*dq_gemm_fn)(int64_t n, const void *w, size_t w_row_bytes,
                           int64_t n_rows, const void *a, size_t a_row_bytes,
                           const float *a_d, const float *a_s, int64_t n_tok,
                           float *y, int64_t y_stride);
typedef struct dq_gemm_table {
  dq_gemm_fn fn[DQ_TYPE_ID_MAX]; /* NULL: use the vec_dot kernels */
} dq_gemm_table;
extern const dq_gemm_table dq_gemm_avx2_table;

/* AVX-512 VNNI kernels, prefill and decode, for the same types and for
 * Q4_K/Q6_K (gemm_vnni_avx512.h; layout in gemm_vn.h). Activations are
 * first laid out per token by `prep` (a Q8_0, Q8_1 or Q8_K row of n
 * elements -> act_bytes(n) bytes, off = off[wtype]), then fn multiplies
 * rows r < n_rows of w by tokens t < n_tok (prepared row t at act + t *
 * act_stride bytes), results as dq_gemm_fn. */
typedef void (*dq_gemm_u8_fn)(int64_t n, const void *w, size_t w_row_bytes,
                              int64_t n_rows, const void *act,
                              size_t act_stride, int64_t n_tok, float *y,
                              int64_t y_stride);
typedef struct dq_gemm_u8_table {
  dq_gemm_u8_fn fn[DQ_TYPE_ID_MAX];
  int off[DQ_TYPE_ID_MAX];
  void (*prep)(int64_t n, int act_type, const void *row, int off, void *out);
  size_t (*act_bytes)(int64_t n);
} dq_gemm_u8_table;
extern const dq_gemm_u8_table dq_gemm_u8_avx512_table;
/* The same kernels on 256-bit registers (gemm_vn_avx2.h), the same bits:
 * AVX2 (vpmaddubsw; no Q8_0), AVX-VNNI, and the AVX-VNNI code built with
 * AVX-512 VL's encoding for tests (all types). Empty (prep NULL) where
 * not built. */
extern const dq_gemm_u8_table dq_gemm_u8_avx2_table;
extern const dq_gemm_u8_table dq_gemm_u8_avxvnni_table;
extern const dq_gemm_u8_table dq_gemm_u8_vnni256_table;

extern const dq_vec_dot_table dq_vec_dot_scalar_table;
extern const dq_vec_dot_table dq_vec_dot_avx2_table;
extern const dq_vec_dot_table dq_vec_dot_avx512_table;

/* Test instructions for the probe: each executes one instruction of its ISA
 * and returns a value depending on it (so it is not optimised away). */
int dq_cpu_try_avx2(void);
/* F16C row conversion (vecdot_avx2.c); 0 when not built for x86. */
int dq_f16_row_avx2(const dq_f16 *x, float *y, int64_t n);
int dq_cpu_try_avx512(void);
int dq_cpu_try_avx512_vnni(void);
int dq_cpu_try_avx512_bf16(void);
int dq_cpu_try_avx_vnni(void);
int dq_cpu_try_amx(void);

/* The attention block kernel per build (attn*.c); the ISA ones return 0
 * when not built for this target. */
void dq_attn_run_base(const dq_attn_block *b);
int dq_attn_run_avx2(const dq_attn_block *b);
int dq_attn_run_avx512(const dq_attn_block *b);
/* The AVX-512 build with the 8-bit sums in float arithmetic instead of
 * vpdpbusd (attn_avx512f.c): for tests, which compare the two bit for bit. */
int dq_attn_run_avx512_float(const dq_attn_block *b);
/* The AVX2 build with AVX-VNNI sums for 8-bit blocks (attn_avxvnni.c). */
int dq_attn_run_avxvnni(const dq_attn_block *b);

/* The 8-bit attention operands' quantization (kernels.h, q8): n elements
 * (a multiple of 4) by one scale, codes c[i] = x[i] x (127 / max |x|)
 * rounded half away from zero into [-127, 127] (NaN: 0; all zeros: 0);
 * returns the scale max |x| / 127 (NaNs ignored). The kernel's queries and
 * dq_attn_q8_put_key/_value use this one rule; four lanes at a time at the
 * baseline ISA, so every build gives the same codes. */
static inline float dq_q8_quant(const float *x, int n, int8_t *c) {
  typedef float v4f __attribute__((vector_size(16)));
  typedef int32_t v4i __attribute__((vector_size(16)));
  v4f am = {0, 0, 0, 0};
  for (int i = 0; i < n; i += 4) {
    v4f v;
    memcpy(&v, x + i, sizeof v);
    v4f a = (v4f)((v4i)v & 0x7fffffff);
    v4i gt = a > am; /* NaN: never larger, so never the maximum */
    am = (v4f)((gt & (v4i)a) | (~gt & (v4i)am));
  }
  float amax = 0;
  for (int l = 0; l < 4; l++)
    amax = am[l] > amax ? am[l] : amax;
  float inv = amax > 0 ? 127.0f / amax : 0.0f;
  v4f vi = {inv, inv, inv, inv};
  const v4f hi = {127.0f, 127.0f, 127.0f, 127.0f}, lo = -hi;
  const v4f half = {0.5f, 0.5f, 0.5f, 0.5f}, zero = {0, 0, 0, 0};
  for (int i = 0; i < n; i += 4) {
    v4f v;
    memcpy(&v, x + i, sizeof v);
    v4f r = v * vi;
    v4i m = r == r;
    r = (v4f)(m & (v4i)r);
    m = r > hi;
    r = (v4f)((m & (v4i)hi) | (~m & (v4i)r));
    m = r < lo;
    r = (v4f)((m & (v4i)lo) | (~m & (v4i)r));
    m = r >= zero;
    r = r + (v4f)((m & (v4i)half) | (~m & (v4i)-half));
    v4i q = __builtin_convertvector(r, v4i);
    for (int l = 0; l < 4; l++)
      c[i + l] = (int8_t)q[l];
  }
  return amax / 127.0f;
}

/* Scratch memory owned by the pool (grown on demand, kept until the pool is
 * freed); NULL when out of memory. Not for use while a job runs. */
void *dq_threadpool_scratch(dq_threadpool *pool, size_t bytes);

/* act_impl.h's ISA builds (ops.c's dq_*_isa choose among them). */
void dq_silu_avx2(float *y, const float *x, int64_t n);
void dq_gelu_tanh_avx2(float *y, const float *x, int64_t n);
void dq_gelu_erf_avx2(float *y, const float *x, int64_t n);
void dq_silu_avx512(float *y, const float *x, int64_t n);
void dq_gelu_tanh_avx512(float *y, const float *x, int64_t n);
void dq_gelu_erf_avx512(float *y, const float *x, int64_t n);

/* Q4_K: the 6-bit scale and min of sub-block j (0..7) from scales[12]. */
static inline void dq_q4k_scale_min(const uint8_t *q, int j, uint8_t *sc,
                                    uint8_t *mn) {
  if (j < 4) {
    *sc = q[j] & 63;
    *mn = q[j + 4] & 63;
  } else {
    *sc = (uint8_t)((q[j + 4] & 15) | ((q[j - 4] >> 6) << 4));
    *mn = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

static inline uint32_t dq_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

#endif /* DQ_CPU_INT_H */
