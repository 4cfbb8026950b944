/*
 * types.c - the element-type table (block sizes, bytes, activation formats),
 * checked row sizes, and exact scalar conversions between f32 and the two
 * 16-bit float formats (IEEE binary16 and bfloat16). The conversions are the
 * reference for the F16C / AVX-512 paths; they handle subnormals, infinities
 * and NaN, and round to nearest even.
 */
#include "cpu_int.h"

#include <math.h>

static const dq_type_info type_table[DQ_TYPE_ID_MAX] = {
    [DQ_TYPE_F32] = {"F32", 1, 4, DQ_TYPE_F32, 1},
    [DQ_TYPE_F16] = {"F16", 1, 2, DQ_TYPE_F32, 1},
    [DQ_TYPE_BF16] = {"BF16", 1, 2, DQ_TYPE_F32, 1},
    [DQ_TYPE_Q4_0] = {"Q4_0", DQ_QK, sizeof(dq_block_q4_0), DQ_TYPE_Q8_0, 1},
    [DQ_TYPE_Q4_1] = {"Q4_1", DQ_QK, sizeof(dq_block_q4_1), DQ_TYPE_Q8_1, 1},
    [DQ_TYPE_Q5_0] = {"Q5_0", DQ_QK, sizeof(dq_block_q5_0), DQ_TYPE_Q8_0, 1},
    [DQ_TYPE_Q5_1] = {"Q5_1", DQ_QK, sizeof(dq_block_q5_1), DQ_TYPE_Q8_1, 1},
    [DQ_TYPE_Q8_0] = {"Q8_0", DQ_QK, sizeof(dq_block_q8_0), DQ_TYPE_Q8_0, 1},
    [DQ_TYPE_Q8_1] = {"Q8_1", DQ_QK, sizeof(dq_block_q8_1), DQ_TYPE_Q8_1, 0},
    [DQ_TYPE_Q4_K] = {"Q4_K", DQ_QK_K, sizeof(dq_block_q4_k), DQ_TYPE_Q8_K, 1},
    [DQ_TYPE_Q6_K] = {"Q6_K", DQ_QK_K, sizeof(dq_block_q6_k), DQ_TYPE_Q8_K, 1},
    [DQ_TYPE_Q8_K] = {"Q8_K", DQ_QK_K, sizeof(dq_block_q8_k), DQ_TYPE_Q8_K, 0},
};

/* The layouts are GGML's byte for byte; the compiler must not pad them. */
_Static_assert(sizeof(dq_block_q4_0) == 18, "Q4_0 block size");
_Static_assert(sizeof(dq_block_q4_1) == 20, "Q4_1 block size");
_Static_assert(sizeof(dq_block_q5_0) == 22, "Q5_0 block size");
_Static_assert(sizeof(dq_block_q5_1) == 24, "Q5_1 block size");
_Static_assert(sizeof(dq_block_q8_0) == 34, "Q8_0 block size");
_Static_assert(sizeof(dq_block_q8_1) == 36, "Q8_1 block size");
_Static_assert(sizeof(dq_block_q4_k) == 144, "Q4_K block size");
_Static_assert(sizeof(dq_block_q6_k) == 210, "Q6_K block size");
_Static_assert(sizeof(dq_block_q8_k) == 292, "Q8_K block size");

const dq_type_info *dq_type_get(int type) {
  if (type < 0 || type >= DQ_TYPE_ID_MAX || !type_table[type].name)
    return NULL;
  return &type_table[type];
}

const char *dq_type_name(int type) {
  const dq_type_info *ti = dq_type_get(type);
  return ti ? ti->name : "unknown";
}

dq_status dq_type_row_bytes(int type, int64_t n, size_t *out_bytes) {
  const dq_type_info *ti = dq_type_get(type);
  uint64_t bytes;
  if (!ti)
    return DQ_ERR_UNSUPPORTED;
  if (n < 0 || n % ti->block_elems != 0)
    return DQ_ERR_ARG;
  if (dq_mul_overflow((uint64_t)(n / ti->block_elems), (uint64_t)ti->block_bytes,
                      &bytes) ||
      bytes > (uint64_t)SIZE_MAX / 2)
    return DQ_ERR_LIMIT;
  if (out_bytes)
    *out_bytes = (size_t)bytes;
  return DQ_OK;
}

const char *dq_isa_name(dq_isa isa) {
  switch (isa) {
  case DQ_ISA_SCALAR: return "scalar";
  case DQ_ISA_AVX2: return "avx2";
  case DQ_ISA_AVX512: return "avx512";
  }
  return "unknown";
}

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float dq_f16_to_f32(dq_f16 h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    float v = (float)mant * 0x1p-24f; /* zero or subnormal: exact */
    return sign ? -v : v;
  }
  if (exp == 31)
    return bits_f32(sign | 0x7f800000u | (mant << 13));
  return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

dq_f16 dq_f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) /* inf, or NaN kept quiet with its top payload bits */
    return (dq_f16)(sign | 0x7c00 |
                    (x > 0x7f800000u ? 0x200 | ((x >> 13) & 0x3ff) : 0));
  if (x >= 0x477ff000u) /* >= 65520 rounds to infinity */
    return (dq_f16)(sign | 0x7c00);
  if (x < 0x38800000u) { /* below 2^-14: subnormal half, scale is exact */
    float v = nearbyintf(bits_f32(x) * 0x1p24f); /* ties to even */
    return (dq_f16)(sign | (uint16_t)v); /* 1024 is the smallest normal */
  }
  /* Rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest
   * even; a mantissa carry correctly bumps the exponent. */
  x = (x + 0xfffu + ((x >> 13) & 1u)) - (112u << 23);
  return (dq_f16)(sign | (x >> 13));
}

float dq_bf16_to_f32(dq_bf16 h) { return bits_f32((uint32_t)h << 16); }

dq_bf16 dq_f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (dq_bf16)((x >> 16) | 0x40);
  return (dq_bf16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
