/*
 * quant_ref.c - scalar dequantization and quantization of rows. The
 * dequantizers are the executable specification of the block layouts
 * documented in kernels.h (GGML's, byte for byte); the SIMD vec_dot paths
 * must agree with them.
 *
 * The quantizers serve two purposes: activation formats (Q8_0, Q8_1, Q8_K:
 * symmetric absmax, |q| <= 127 so the x86 u8*s8 pair products never
 * saturate), and weight formats for tests and tools, using plain
 * round-to-nearest (no error-minimising search like llama.cpp's).
 */
#include "cpu_int.h"

#include <math.h>

#define F16(x) dq_f16_to_f32(x)

static void dequant_q4_0(const dq_block_q4_0 *b, float *y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, y += DQ_QK) {
    float d = F16(b[i].d);
    for (int j = 0; j < DQ_QK / 2; j++) {
      y[j] = (float)((b[i].qs[j] & 15) - 8) * d;
      y[j + 16] = (float)((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

static void dequant_q4_1(const dq_block_q4_1 *b, float *y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, y += DQ_QK) {
    float d = F16(b[i].d), m = F16(b[i].m);
    for (int j = 0; j < DQ_QK / 2; j++) {
      y[j] = (float)(b[i].qs[j] & 15) * d + m;
      y[j + 16] = (float)(b[i].qs[j] >> 4) * d + m;
    }
  }
}

/* The 5-bit values of a Q5 block, 0..31. */
static void q5_values(const uint8_t *qh4, const uint8_t *qs, int *q) {
  uint32_t h = dq_le32(qh4);
  for (int j = 0; j < DQ_QK / 2; j++) {
    q[j] = (qs[j] & 15) | (int)((h >> j) & 1) << 4;
    q[j + 16] = (qs[j] >> 4) | (int)((h >> (j + 16)) & 1) << 4;
  }
}

static void dequant_q5_0(const dq_block_q5_0 *b, float *y, int64_t nb) {
  int q[DQ_QK];
  for (int64_t i = 0; i < nb; i++, y += DQ_QK) {
    float d = F16(b[i].d);
    q5_values(b[i].qh, b[i].qs, q);
    for (int j = 0; j < DQ_QK; j++)
      y[j] = (float)(q[j] - 16) * d;
  }
}

static void dequant_q5_1(const dq_block_q5_1 *b, float *y, int64_t nb) {
  int q[DQ_QK];
  for (int64_t i = 0; i < nb; i++, y += DQ_QK) {
    float d = F16(b[i].d), m = F16(b[i].m);
    q5_values(b[i].qh, b[i].qs, q);
    for (int j = 0; j < DQ_QK; j++)
      y[j] = (float)q[j] * d + m;
  }
}

static void dequant_q8_0(const dq_block_q8_0 *b, float *y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, y += DQ_QK) {
    float d = F16(b[i].d);
    for (int j = 0; j < DQ_QK; j++)
      y[j] = (float)b[i].qs[j] * d;
  }
}

static void dequant_q8_1(const dq_block_q8_1 *b, float *y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, y += DQ_QK) {
    float d = F16(b[i].d);
    for (int j = 0; j < DQ_QK; j++)
      y[j] = (float)b[i].qs[j] * d;
  }
}

static void dequant_q4_k(const dq_block_q4_k *b, float *y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++) {
    float d = F16(b[i].d), dmin = F16(b[i].dmin);
    const uint8_t *q = b[i].qs;
    for (int c = 0; c < 4; c++, q += 32, y += 64) {
      uint8_t sc0, mn0, sc1, mn1;
      dq_q4k_scale_min(b[i].scales, 2 * c, &sc0, &mn0);
      dq_q4k_scale_min(b[i].scales, 2 * c + 1, &sc1, &mn1);
      float d0 = d * sc0, m0 = dmin * mn0, d1 = d * sc1, m1 = dmin * mn1;
      for (int l = 0; l < 32; l++) {
        y[l] = d0 * (float)(q[l] & 15) - m0;
        y[l + 32] = d1 * (float)(q[l] >> 4) - m1;
      }
    }
  }
}

static void dequant_q6_k(const dq_block_q6_k *b, float *y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++) {
    float d = F16(b[i].d);
    const uint8_t *ql = b[i].ql, *qh = b[i].qh;
    const int8_t *sc = b[i].scales;
    for (int h = 0; h < 2; h++, ql += 64, qh += 32, sc += 8, y += 128) {
      for (int l = 0; l < 32; l++) {
        int is = l / 16;
        int q1 = ((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32;
        int q2 = ((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32;
        int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
        int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
        y[l] = d * (float)sc[is] * (float)q1;
        y[l + 32] = d * (float)sc[is + 2] * (float)q2;
        y[l + 64] = d * (float)sc[is + 4] * (float)q3;
        y[l + 96] = d * (float)sc[is + 6] * (float)q4;
      }
    }
  }
}

static void dequant_q8_k(const dq_block_q8_k *b, float *y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, y += DQ_QK_K)
    for (int j = 0; j < DQ_QK_K; j++)
      y[j] = b[i].d * (float)b[i].qs[j];
}

dq_status dq_dequantize_row(int type, const void *x, float *y, int64_t n) {
  const dq_type_info *ti = dq_type_get(type);
  if (!ti)
    return DQ_ERR_UNSUPPORTED;
  if (n < 0 || n % ti->block_elems != 0 || (n && (!x || !y)))
    return DQ_ERR_ARG;
  int64_t nb = n / ti->block_elems;
  switch ((dq_type)type) {
  case DQ_TYPE_F32: memmove(y, x, (size_t)n * sizeof(float)); break;
  case DQ_TYPE_F16:
    for (int64_t i = 0; i < n; i++)
      y[i] = dq_f16_to_f32(((const dq_f16 *)x)[i]);
    break;
  case DQ_TYPE_BF16:
    for (int64_t i = 0; i < n; i++)
      y[i] = dq_bf16_to_f32(((const dq_bf16 *)x)[i]);
    break;
  case DQ_TYPE_Q4_0: dequant_q4_0(x, y, nb); break;
  case DQ_TYPE_Q4_1: dequant_q4_1(x, y, nb); break;
  case DQ_TYPE_Q5_0: dequant_q5_0(x, y, nb); break;
  case DQ_TYPE_Q5_1: dequant_q5_1(x, y, nb); break;
  case DQ_TYPE_Q8_0: dequant_q8_0(x, y, nb); break;
  case DQ_TYPE_Q8_1: dequant_q8_1(x, y, nb); break;
  case DQ_TYPE_Q4_K: dequant_q4_k(x, y, nb); break;
  case DQ_TYPE_Q6_K: dequant_q6_k(x, y, nb); break;
  case DQ_TYPE_Q8_K: dequant_q8_k(x, y, nb); break;
  }
  return DQ_OK;
}

/* ---- quantizers ---------------------------------------------------------- */

static float absmax(const float *x, int n) {
  float m = 0.0f;
  for (int j = 0; j < n; j++)
    m = fmaxf(m, fabsf(x[j]));
  return m;
}

/* The element of largest magnitude, with its sign (GGML's Q4_0/Q5_0 map it
 * to the most negative level, which has one more step than the positive). */
static float signed_max(const float *x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; j++)
    if (fabsf(x[j]) > amax) {
      amax = fabsf(x[j]);
      max = x[j];
    }
  return max;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Symmetric 8-bit: q = round(x * 127 / amax). Returns the scale (f32). */
static float quant8(const float *x, int8_t *q, int n, int *sum) {
  float amax = absmax(x, n);
  float d = amax / 127.0f, id = d > 0.0f ? 1.0f / d : 0.0f;
  int s = 0;
  for (int j = 0; j < n; j++) {
    q[j] = (int8_t)clampi((int)lrintf(x[j] * id), -127, 127);
    s += q[j];
  }
  if (sum)
    *sum = s;
  return d;
}

static void quant_q8_0(const float *x, dq_block_q8_0 *b, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += DQ_QK)
    b[i].d = dq_f32_to_f16(quant8(x, b[i].qs, DQ_QK, NULL));
}

static void quant_q8_1(const float *x, dq_block_q8_1 *b, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += DQ_QK) {
    int sum;
    float d = quant8(x, b[i].qs, DQ_QK, &sum);
    b[i].d = dq_f32_to_f16(d);
    /* s from the stored (rounded) d, so it matches the dequantized values
     * up to its own f16 rounding only. */
    b[i].s = dq_f32_to_f16(F16(b[i].d) * (float)sum);
  }
}

static void quant_q8_k(const float *x, dq_block_q8_k *b, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += DQ_QK_K) {
    b[i].d = quant8(x, b[i].qs, DQ_QK_K, NULL);
    for (int g = 0; g < DQ_QK_K / 16; g++) {
      int s = 0;
      for (int j = 0; j < 16; j++)
        s += b[i].qs[16 * g + j];
      b[i].bsums[g] = (int16_t)s;
    }
  }
}

static void quant_q4_0(const float *x, dq_block_q4_0 *b, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += DQ_QK) {
    float d = signed_max(x, DQ_QK) / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = dq_f32_to_f16(d);
    for (int j = 0; j < 16; j++) {
      int q0 = clampi((int)lrintf(x[j] * id) + 8, 0, 15);
      int q1 = clampi((int)lrintf(x[j + 16] * id) + 8, 0, 15);
      b[i].qs[j] = (uint8_t)(q0 | q1 << 4);
    }
  }
}

/* Asymmetric min/max quantization of one 32-block to `levels` steps. */
static void minmax(const float *x, int n, float *mn, float *mx) {
  *mn = *mx = x[0];
  for (int j = 1; j < n; j++) {
    *mn = fminf(*mn, x[j]);
    *mx = fmaxf(*mx, x[j]);
  }
}

static void quant_q4_1(const float *x, dq_block_q4_1 *b, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += DQ_QK) {
    float mn, mx;
    minmax(x, DQ_QK, &mn, &mx);
    float d = (mx - mn) / 15.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = dq_f32_to_f16(d);
    b[i].m = dq_f32_to_f16(mn);
    for (int j = 0; j < 16; j++) {
      int q0 = clampi((int)lrintf((x[j] - mn) * id), 0, 15);
      int q1 = clampi((int)lrintf((x[j + 16] - mn) * id), 0, 15);
      b[i].qs[j] = (uint8_t)(q0 | q1 << 4);
    }
  }
}

static void pack_q5(const int *q, uint8_t *qh4, uint8_t *qs) {
  uint32_t h = 0;
  for (int j = 0; j < 16; j++) {
    qs[j] = (uint8_t)((q[j] & 15) | (q[j + 16] & 15) << 4);
    h |= (uint32_t)(q[j] >> 4) << j;
    h |= (uint32_t)(q[j + 16] >> 4) << (j + 16);
  }
  for (int k = 0; k < 4; k++)
    qh4[k] = (uint8_t)(h >> (8 * k));
}

static void quant_q5_0(const float *x, dq_block_q5_0 *b, int64_t nb) {
  int q[DQ_QK];
  for (int64_t i = 0; i < nb; i++, x += DQ_QK) {
    float d = signed_max(x, DQ_QK) / -16.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = dq_f32_to_f16(d);
    for (int j = 0; j < DQ_QK; j++)
      q[j] = clampi((int)lrintf(x[j] * id) + 16, 0, 31);
    pack_q5(q, b[i].qh, b[i].qs);
  }
}

static void quant_q5_1(const float *x, dq_block_q5_1 *b, int64_t nb) {
  int q[DQ_QK];
  for (int64_t i = 0; i < nb; i++, x += DQ_QK) {
    float mn, mx;
    minmax(x, DQ_QK, &mn, &mx);
    float d = (mx - mn) / 31.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = dq_f32_to_f16(d);
    b[i].m = dq_f32_to_f16(mn);
    for (int j = 0; j < DQ_QK; j++)
      q[j] = clampi((int)lrintf((x[j] - mn) * id), 0, 31);
    pack_q5(q, b[i].qh, b[i].qs);
  }
}

/* Q4_K: per sub-block of 32, offset min(0, min x) and step (max-min)/15;
 * both quantized to 6 bits against the super-block's d and dmin. */
static void quant_q4_k(const float *x, dq_block_q4_k *b, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += DQ_QK_K) {
    float step[8], off[8], max_step = 0.0f, max_off = 0.0f;
    for (int s = 0; s < 8; s++) {
      float mn, mx;
      minmax(x + 32 * s, 32, &mn, &mx);
      mn = fminf(mn, 0.0f);
      step[s] = (mx - mn) / 15.0f;
      off[s] = -mn;
      max_step = fmaxf(max_step, step[s]);
      max_off = fmaxf(max_off, off[s]);
    }
    float d = max_step / 63.0f, dmin = max_off / 63.0f;
    b[i].d = dq_f32_to_f16(d);
    b[i].dmin = dq_f32_to_f16(dmin);
    d = F16(b[i].d);
    dmin = F16(b[i].dmin);
    uint8_t sc[8], mn[8];
    for (int s = 0; s < 8; s++) {
      sc[s] = (uint8_t)(d > 0.0f ? clampi((int)lrintf(step[s] / d), 0, 63) : 0);
      mn[s] = (uint8_t)(dmin > 0.0f ? clampi((int)lrintf(off[s] / dmin), 0, 63) : 0);
    }
    memset(b[i].scales, 0, sizeof b[i].scales);
    for (int s = 0; s < 4; s++) {
      b[i].scales[s] = (uint8_t)(sc[s] | (sc[s + 4] >> 4) << 6);
      b[i].scales[s + 4] = (uint8_t)(mn[s] | (mn[s + 4] >> 4) << 6);
      b[i].scales[s + 8] = (uint8_t)((sc[s + 4] & 15) | (mn[s + 4] & 15) << 4);
    }
    for (int c = 0; c < 4; c++) {
      int q[64];
      for (int h = 0; h < 2; h++) {
        int s = 2 * c + h;
        float ds = d * sc[s], ms = dmin * mn[s];
        for (int l = 0; l < 32; l++) {
          float v = x[64 * c + 32 * h + l];
          q[32 * h + l] = ds > 0.0f ? clampi((int)lrintf((v + ms) / ds), 0, 15) : 0;
        }
      }
      for (int l = 0; l < 32; l++)
        b[i].qs[32 * c + l] = (uint8_t)(q[l] | q[l + 32] << 4);
    }
  }
}

/* Q6_K: per group of 16 a signed step (largest magnitude -> -32), steps
 * quantized to int8 against the super-block's d. */
static void quant_q6_k(const float *x, dq_block_q6_k *b, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += DQ_QK_K) {
    float step[16], amax = 0.0f;
    for (int g = 0; g < 16; g++) {
      step[g] = signed_max(x + 16 * g, 16) / -32.0f;
      amax = fmaxf(amax, fabsf(step[g]));
    }
    float d = amax / 127.0f;
    b[i].d = dq_f32_to_f16(d);
    d = F16(b[i].d);
    int q[DQ_QK_K];
    for (int g = 0; g < 16; g++) {
      int sc = d > 0.0f ? clampi((int)lrintf(step[g] / d), -127, 127) : 0;
      b[i].scales[g] = (int8_t)sc;
      float ds = d * (float)sc;
      for (int j = 0; j < 16; j++)
        q[16 * g + j] =
            ds != 0.0f ? clampi((int)lrintf(x[16 * g + j] / ds), -32, 31) + 32 : 32;
    }
    for (int h = 0; h < 2; h++) {
      const int *qq = q + 128 * h;
      uint8_t *ql = b[i].ql + 64 * h, *qh = b[i].qh + 32 * h;
      for (int l = 0; l < 32; l++) {
        ql[l] = (uint8_t)((qq[l] & 15) | (qq[l + 64] & 15) << 4);
        ql[l + 32] = (uint8_t)((qq[l + 32] & 15) | (qq[l + 96] & 15) << 4);
        qh[l] = (uint8_t)((qq[l] >> 4) | (qq[l + 32] >> 4) << 2 |
                          (qq[l + 64] >> 4) << 4 | (qq[l + 96] >> 4) << 6);
      }
    }
  }
}

dq_status dq_quantize_row(int type, const float *x, void *y, int64_t n) {
  const dq_type_info *ti = dq_type_get(type);
  if (!ti)
    return DQ_ERR_UNSUPPORTED;
  if (n < 0 || n % ti->block_elems != 0 || (n && (!x || !y)))
    return DQ_ERR_ARG;
  int64_t nb = n / ti->block_elems;
  switch ((dq_type)type) {
  case DQ_TYPE_F32: memmove(y, x, (size_t)n * sizeof(float)); break;
  case DQ_TYPE_F16:
    for (int64_t i = 0; i < n; i++)
      ((dq_f16 *)y)[i] = dq_f32_to_f16(x[i]);
    break;
  case DQ_TYPE_BF16:
    for (int64_t i = 0; i < n; i++)
      ((dq_bf16 *)y)[i] = dq_f32_to_bf16(x[i]);
    break;
  case DQ_TYPE_Q4_0: quant_q4_0(x, y, nb); break;
  case DQ_TYPE_Q4_1: quant_q4_1(x, y, nb); break;
  case DQ_TYPE_Q5_0: quant_q5_0(x, y, nb); break;
  case DQ_TYPE_Q5_1: quant_q5_1(x, y, nb); break;
  case DQ_TYPE_Q8_0: quant_q8_0(x, y, nb); break;
  case DQ_TYPE_Q8_1: quant_q8_1(x, y, nb); break;
  case DQ_TYPE_Q4_K: quant_q4_k(x, y, nb); break;
  case DQ_TYPE_Q6_K: quant_q6_k(x, y, nb); break;
  case DQ_TYPE_Q8_K: quant_q8_k(x, y, nb); break;
  }
  return DQ_OK;
}
