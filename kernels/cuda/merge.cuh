/*
 * merge.cuh - the per-thread steps of GSM's similarity merges on the device
 * (merge.cu; engine/backend.h dq_kv_merge). __host__ __device__, so that
 * tests/cuda/test_cuda_logic.cu runs the kernels' steps for every emulated
 * thread against the CPU backend's kv_merge.
 *
 * The arithmetic is the CPU backend's (engine/backend.h dq_kv_sim,
 * dq_kv_mix; backend_cpu.c kv_store), products and sums rounded apart:
 *   - a row element in the KV cache's layouts (0 F32 rows, 1 F16 rows,
 *     2 F16 key panels of 16 rows, 8 Q8_0 rows of 34-byte blocks);
 *   - a dot product of head_dim elements as dq_attn_dot sums it: 16
 *     partial sums (element e into partial e % 16, for e below head_dim
 *     rounded down to 16), combined as its four 4-lane vectors are
 *     ((p[j] + p[4+j]) + (p[8+j] + p[12+j]) per slot j, then (s0 + s1) +
 *     (s2 + s3)), then the tail in order;
 *   - the merged element wa * a + (1 - wa) * b;
 *   - a Q8_0 block: scale amax / 127 (stored as f16), quants
 *     roundf(x * (1 / scale)).
 */
#ifndef DQ_CUDA_MERGE_CUH
#define DQ_CUDA_MERGE_CUH

#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define DQM_HD __host__ __device__ __forceinline__

DQM_HD float dqm_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
DQM_HD float dqm_add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

/* Byte offset of the Q8_0 block holding element e of row r. */
DQM_HD size_t dqm_q8_block(int r, int e, int re) {
  return ((size_t)r * (re / 32) + e / 32) * 34;
}

/* Element e of row r of a cache of `store` (re elements per row). */
DQM_HD float dqm_get(const void *buf, int store, int r, int e, int re) {
  if (store == 0)
    return ((const float *)buf)[(size_t)r * re + e];
  if (store == 1)
    return __half2float(((const __half *)buf)[(size_t)r * re + e]);
  if (store == 2)
    return __half2float(
        ((const __half *)buf)[(((size_t)r / 16) * re + e) * 16 + r % 16]);
  const uint8_t *b = (const uint8_t *)buf + dqm_q8_block(r, e, re);
  __half d;
  memcpy(&d, b, 2);
  return dqm_mul((float)(int8_t)b[2 + e % 32], __half2float(d));
}

/* Writes x as element e of row r of an F32 / F16 / F16-panel cache. */
DQM_HD void dqm_put(void *buf, int store, int r, int e, int re, float x) {
  if (store == 0)
    ((float *)buf)[(size_t)r * re + e] = x;
  else if (store == 1)
    ((__half *)buf)[(size_t)r * re + e] = __float2half_rn(x);
  else
    ((__half *)buf)[(((size_t)r / 16) * re + e) * 16 + r % 16] =
        __float2half_rn(x);
}

/* Q8_0: a block's element x written, the block's amax known (scale
 * written by whoever holds element 0 of the block). */
DQM_HD void dqm_put_q8(void *buf, int r, int e, int re, float x, float amax) {
  float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  uint8_t *b = (uint8_t *)buf + dqm_q8_block(r, e, re);
  if (e % 32 == 0) {
    __half h = __float2half_rn(d);
    memcpy(b, &h, 2);
  }
  b[2 + e % 32] = (uint8_t)(int8_t)roundf(dqm_mul(x, id));
}

/* The merged element: wa * a + (1 - wa) * b. */
DQM_HD float dqm_mix(float wa, float a, float b) {
  return dqm_add(dqm_mul(wa, a), dqm_mul(1.0f - wa, b));
}

/* Partial sums of lane l < 16 for head h of rows ra, rb: ab, aa, bb over
 * elements h * hd + e, e = l, l + 16, ... below hd rounded down to 16. */
DQM_HD void dqm_partial(const void *k, int store, int ra, int rb, int h,
                        int hd, int re, int l, float *ab, float *aa,
                        float *bb) {
  float s_ab = 0.0f, s_aa = 0.0f, s_bb = 0.0f;
  for (int e = l; e < (hd & ~15); e += 16) {
    float x = dqm_get(k, store, ra, h * hd + e, re);
    float y = dqm_get(k, store, rb, h * hd + e, re);
    s_ab = dqm_add(s_ab, dqm_mul(x, y));
    s_aa = dqm_add(s_aa, dqm_mul(x, x));
    s_bb = dqm_add(s_bb, dqm_mul(y, y));
  }
  *ab = s_ab, *aa = s_aa, *bb = s_bb;
}

/* Slot j < 4 of the combination: (p[j] + p[4+j]) + (p[8+j] + p[12+j]). */
DQM_HD float dqm_slot(float p0, float p4, float p8, float p12) {
  return dqm_add(dqm_add(p0, p4), dqm_add(p8, p12));
}
/* The four slots into the sum: (s0 + s1) + (s2 + s3). */
DQM_HD float dqm_slots(float s0, float s1, float s2, float s3) {
  return dqm_add(dqm_add(s0, s1), dqm_add(s2, s3));
}

/* The tail of head h (elements from hd rounded down to 16), in order,
 * onto the combined sums v[0..3) = ab, aa, bb. */
DQM_HD void dqm_tail(const void *k, int store, int ra, int rb, int h, int hd,
                     int re, float *v) {
  for (int e = hd & ~15; e < hd; e++) {
    float x = dqm_get(k, store, ra, h * hd + e, re);
    float y = dqm_get(k, store, rb, h * hd + e, re);
    v[0] = dqm_add(v[0], dqm_mul(x, y));
    v[1] = dqm_add(v[1], dqm_mul(x, x));
    v[2] = dqm_add(v[2], dqm_mul(y, y));
  }
}

/* A head's cosine onto the running sum s (nothing for a zero key). */
DQM_HD float dqm_cos_add(float s, const float *v) {
  return v[1] > 0.0f && v[2] > 0.0f ? dqm_add(s, v[0] / sqrtf(dqm_mul(v[1], v[2])))
                                    : s;
}

/* Argmax order: (v, i) ranks before (w, j) when larger, or equal at a
 * lower position; i < 0 is no candidate. */
DQM_HD int dqm_before(float v, int i, float w, int j) {
  return i >= 0 && (j < 0 || v > w || (v == w && i < j));
}

#endif /* DQ_CUDA_MERGE_CUH */
