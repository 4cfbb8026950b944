/*
 * vecdot_ref.c - the scalar reference dot products (weight row in its own
 * type x activation row in the matching 8-bit or f32 format) and the
 * dispatch that picks the ISA-specific kernel from a probed dq_cpu_caps.
 *
 * Every quantized kernel computes, per block, an exact integer dot product
 * of the stored integers and scales it by the f16/f32 block scales; the SIMD
 * kernels do the same integer math, so they differ from these only in the
 * order of the float additions. F32/F16/BF16 references accumulate in double.
 */
#include "cpu_int.h"

#define F16(x) dq_f16_to_f32(x)

static void dot_f32(int64_t n, const void *w, const void *a, float *out) {
  const float *x = w, *y = a;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++)
    s += (double)x[i] * (double)y[i];
  *out = (float)s;
}

static void dot_f16(int64_t n, const void *w, const void *a, float *out) {
  const dq_f16 *x = w;
  const float *y = a;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++)
    s += (double)dq_f16_to_f32(x[i]) * (double)y[i];
  *out = (float)s;
}

static void dot_bf16(int64_t n, const void *w, const void *a, float *out) {
  const dq_bf16 *x = w;
  const float *y = a;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++)
    s += (double)dq_bf16_to_f32(x[i]) * (double)y[i];
  *out = (float)s;
}

static void dot_q4_0(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q4_0 *x = w;
  const dq_block_q8_0 *y = a;
  float s = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK; i++) {
    int isum = 0;
    for (int j = 0; j < 16; j++)
      isum += ((x[i].qs[j] & 15) - 8) * y[i].qs[j] +
              ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
    s += (float)isum * (F16(x[i].d) * F16(y[i].d));
  }
  *out = s;
}

static void dot_q4_1(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q4_1 *x = w;
  const dq_block_q8_1 *y = a;
  float s = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK; i++) {
    int isum = 0;
    for (int j = 0; j < 16; j++)
      isum += (x[i].qs[j] & 15) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + 16];
    s += (float)isum * (F16(x[i].d) * F16(y[i].d)) + F16(x[i].m) * F16(y[i].s);
  }
  *out = s;
}

static int q5_dot(const uint8_t *qh4, const uint8_t *qs, const int8_t *y,
                  int offset) {
  uint32_t h = dq_le32(qh4);
  int isum = 0;
  for (int j = 0; j < 16; j++) {
    int q0 = (qs[j] & 15) | (int)((h >> j) & 1) << 4;
    int q1 = (qs[j] >> 4) | (int)((h >> (j + 16)) & 1) << 4;
    isum += (q0 - offset) * y[j] + (q1 - offset) * y[j + 16];
  }
  return isum;
}

static void dot_q5_0(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q5_0 *x = w;
  const dq_block_q8_0 *y = a;
  float s = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK; i++)
    s += (float)q5_dot(x[i].qh, x[i].qs, y[i].qs, 16) * (F16(x[i].d) * F16(y[i].d));
  *out = s;
}

static void dot_q5_1(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q5_1 *x = w;
  const dq_block_q8_1 *y = a;
  float s = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK; i++)
    s += (float)q5_dot(x[i].qh, x[i].qs, y[i].qs, 0) * (F16(x[i].d) * F16(y[i].d)) +
         F16(x[i].m) * F16(y[i].s);
  *out = s;
}

static void dot_q8_0(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q8_0 *x = w;
  const dq_block_q8_0 *y = a;
  float s = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK; i++) {
    int isum = 0;
    for (int j = 0; j < DQ_QK; j++)
      isum += x[i].qs[j] * y[i].qs[j];
    s += (float)isum * (F16(x[i].d) * F16(y[i].d));
  }
  *out = s;
}

static void dot_q4_k(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q4_k *x = w;
  const dq_block_q8_k *y = a;
  float s = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK_K; i++) {
    int sumi = 0, summ = 0;
    for (int c = 0; c < 4; c++) {
      const uint8_t *q = x[i].qs + 32 * c;
      const int8_t *yy = y[i].qs + 64 * c;
      uint8_t sc0, mn0, sc1, mn1;
      dq_q4k_scale_min(x[i].scales, 2 * c, &sc0, &mn0);
      dq_q4k_scale_min(x[i].scales, 2 * c + 1, &sc1, &mn1);
      int i0 = 0, i1 = 0;
      for (int l = 0; l < 32; l++) {
        i0 += (q[l] & 15) * yy[l];
        i1 += (q[l] >> 4) * yy[l + 32];
      }
      sumi += sc0 * i0 + sc1 * i1;
      summ += mn0 * (y[i].bsums[4 * c] + y[i].bsums[4 * c + 1]) +
              mn1 * (y[i].bsums[4 * c + 2] + y[i].bsums[4 * c + 3]);
    }
    s += y[i].d * (F16(x[i].d) * (float)sumi - F16(x[i].dmin) * (float)summ);
  }
  *out = s;
}

static void dot_q6_k(int64_t n, const void *w, const void *a, float *out) {
  const dq_block_q6_k *x = w;
  const dq_block_q8_k *y = a;
  float s = 0.0f;
  for (int64_t i = 0; i < n / DQ_QK_K; i++) {
    const uint8_t *ql = x[i].ql, *qh = x[i].qh;
    const int8_t *sc = x[i].scales, *yy = y[i].qs;
    int sumi = 0;
    for (int h = 0; h < 2; h++, ql += 64, qh += 32, sc += 8, yy += 128) {
      int g[8] = {0};
      for (int l = 0; l < 32; l++) {
        int is = l / 16;
        g[is] += (((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32) * yy[l];
        g[is + 2] += (((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32) * yy[l + 32];
        g[is + 4] += (((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32) * yy[l + 64];
        g[is + 6] += (((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32) * yy[l + 96];
      }
      for (int k = 0; k < 8; k++)
        sumi += sc[k] * g[k];
    }
    s += F16(x[i].d) * y[i].d * (float)sumi;
  }
  *out = s;
}

const dq_vec_dot_table dq_vec_dot_scalar_table = {.fn = {
    [DQ_TYPE_F32] = dot_f32,
    [DQ_TYPE_F16] = dot_f16,
    [DQ_TYPE_BF16] = dot_bf16,
    [DQ_TYPE_Q4_0] = dot_q4_0,
    [DQ_TYPE_Q4_1] = dot_q4_1,
    [DQ_TYPE_Q5_0] = dot_q5_0,
    [DQ_TYPE_Q5_1] = dot_q5_1,
    [DQ_TYPE_Q8_0] = dot_q8_0,
    [DQ_TYPE_Q4_K] = dot_q4_k,
    [DQ_TYPE_Q6_K] = dot_q6_k,
}, .fn4 = {0}, .quant = {0}};

static const dq_vec_dot_table *table_for(const dq_cpu_caps *caps) {
  switch (caps ? caps->isa : DQ_ISA_SCALAR) {
  case DQ_ISA_AVX512: return &dq_vec_dot_avx512_table;
  case DQ_ISA_AVX2: return &dq_vec_dot_avx2_table;
  default: return &dq_vec_dot_scalar_table;
  }
}

dq_vec_dot_fn dq_vec_dot_get(const dq_cpu_caps *caps, int type) {
  const dq_type_info *ti = dq_type_get(type);
  if (!ti || !ti->is_weight)
    return NULL;
  dq_vec_dot_fn fn = table_for(caps)->fn[type];
  return fn ? fn : dq_vec_dot_scalar_table.fn[type];
}

void dq_f16_to_f32_row(const dq_cpu_caps *caps, const dq_f16 *x, float *y,
                       int64_t n) {
  if (caps && caps->isa >= DQ_ISA_AVX2 && dq_f16_row_avx2(x, y, n))
    return;
  for (int64_t i = 0; i < n; i++)
    y[i] = dq_f16_to_f32(x[i]);
}

dq_vec_dot4_fn dq_vec_dot4_get(const dq_cpu_caps *caps, int type) {
  const dq_type_info *ti = dq_type_get(type);
  if (!ti || !ti->is_weight)
    return NULL;
  return table_for(caps)->fn4[type];
}

void dq_quantize_act(const dq_cpu_caps *caps, int type, const float *x,
                     void *y, int64_t n) {
  dq_quantize_fn q = table_for(caps)->quant[type];
  if (q)
    q(x, y, n);
  else
    dq_quantize_row(type, x, y, n);
}

static dq_status check(int type, int64_t n, const void *w, const void *a,
                       float *out) {
  const dq_type_info *ti = dq_type_get(type);
  if (!ti || !ti->is_weight)
    return DQ_ERR_UNSUPPORTED;
  if (n < 0 || n % ti->block_elems != 0 || !out || (n && (!w || !a)))
    return DQ_ERR_ARG;
  return DQ_OK;
}

dq_status dq_vec_dot_ref(int type, int64_t n, const void *w, const void *a,
                         float *out) {
  dq_status st = check(type, n, w, a, out);
  if (st != DQ_OK)
    return st;
  if (n == 0)
    *out = 0.0f;
  else
    dq_vec_dot_scalar_table.fn[type](n, w, a, out);
  return DQ_OK;
}

dq_status dq_vec_dot(const dq_cpu_caps *caps, int type, int64_t n,
                     const void *w, const void *a, float *out) {
  dq_status st = check(type, n, w, a, out);
  if (st != DQ_OK)
    return st;
  if (n == 0)
    *out = 0.0f;
  else
    dq_vec_dot_get(caps, type)(n, w, a, out);
  return DQ_OK;
}
