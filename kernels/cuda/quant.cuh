/*
 * quant.cuh - ggml weight blocks as the CUDA matrix kernels (matmul.cu) read
 * them, in __host__ __device__ inline functions that use no device-only
 * intrinsics, so the host test (tests/cuda/test_cuda_quant.cu) checks every
 * layout against the CPU reference (kernels/cpu/quant_ref.c) without a GPU.
 * The byte layouts themselves are documented in kernels.h.
 *
 * Three layers, used by matmul.cu (elem.cu's get_rows uses the first):
 *
 *  1. Exact decoders. dqc_traits<T>::dequant16(block, g, y) writes elements
 *     [16g, 16g + 16) of one block with the same float operations, in the
 *     same order, as dq_dequantize_row: bit for bit, on the host and on the
 *     device (dqc_mul_rn keeps nvcc from fusing a * b + c). The float
 *     formats use a 16-element "block" here, so every type decodes in
 *     groups of 16.
 *
 *  2. The mat-vec view. A warp walks a weight row in steps of 32 "units",
 *     one per lane; a unit is P "pieces" of 16 consecutive elements of one
 *     block (piece_elem gives where). load() pulls the words a unit needs
 *     out of the block through a reader (device: shared memory with the
 *     alignment each field has; host: bytes), and for piece p:
 *       element 4k + i of the piece = A * q + B,
 *     with q byte i of qword(p, k) and (A, B) from coef(p). For the 4/5/6-bit
 *     formats q is unsigned and below 64 (KIND_U), which lets the kernel turn
 *     a byte into a float with one byte permute (dqc_ftrick_*); Q8_0 bytes
 *     are signed (KIND_S8); the float formats hand back their elements.
 *
 *  3. Planning arithmetic shared by the launchers and the test: shared
 *     memory layout of a step, bank-conflict-free padding of staged
 *     activations, launch shape, GEMM row tiles.
 *
 * Not here: kernels, launches, cuBLAS (matmul.cu).
 */
#ifndef DQ_CUDA_QUANT_CUH
#define DQ_CUDA_QUANT_CUH

#include "kernels.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <vector_types.h>

#ifdef __CUDACC__
#define DQC_HD __host__ __device__ __forceinline__
#else
#define DQC_HD inline
#endif

/* ---- bits and halves ---------------------------------------------------- */

DQC_HD float dqc_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

DQC_HD uint16_t dqc_le16(const uint8_t *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

DQC_HD uint32_t dqc_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* IEEE binary16 -> f32, exactly as kernels/cpu/types.c's dq_f16_to_f32. */
DQC_HD float dqc_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    const float v = (float)mant * 0x1p-24f; /* zero or subnormal: exact */
    return sign ? -v : v;
  }
  if (exp == 31)
    return dqc_bits_f32(sign | 0x7f800000u | (mant << 13));
  return dqc_bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

DQC_HD float dqc_bf16_to_f32(uint16_t h) {
  return dqc_bits_f32((uint32_t)h << 16);
}

/* a * b rounded on its own. The decoders' a * b + c must not become one
 * fused multiply-add on the device (nvcc contracts by default): the CPU's
 * dq_dequantize_row rounds the product first, and get_rows promises its
 * bits. On the host (plain C++, no contraction) it is a * b. */
DQC_HD float dqc_mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/* Q4_K: the 6-bit scale and min of sub-block j (0..7), from the 12 scale
 * bytes held as three little-endian words s0 = scales[0..3], s1 =
 * scales[4..7], s2 = scales[8..11] (kernels.h's rule). */
DQC_HD void dqc_q4k_scale_min(uint32_t s0, uint32_t s1, uint32_t s2, int j,
                              uint32_t *sc, uint32_t *mn) {
  if (j < 4) {
    *sc = (s0 >> (8 * j)) & 63;
    *mn = (s1 >> (8 * j)) & 63;
  } else {
    const int sh = 8 * (j - 4);
    *sc = ((s2 >> sh) & 15) | ((s0 >> (sh + 6)) & 3) << 4;
    *mn = ((s2 >> (sh + 4)) & 15) | ((s1 >> (sh + 6)) & 3) << 4;
  }
}

/* ---- byte -> float in one permute (KIND_U and KIND_S8) -------------------
 * KIND_U: a byte q < 128 placed as bits 16..22 under exponent byte 0x3F is
 * the float 0.5 + q / 256, exactly. So sum_i q_i x_i = 256 F - 128 X with
 * F = sum_i f_i x_i and X = sum_i x_i, and a piece's A * sum q x + B * X
 * becomes A' F + B' X (dqc_ftrick_coef). The subtraction loses about 4 bits
 * against a plain f32 dot of the same 16 terms (relative 2^-20 of sum |x|),
 * far below the weights' own quantisation and the CPU's Q8 activations.
 * KIND_S8: the byte q ^ 0x80 under 0x4B000000 is 2^23 + 128 + q; subtracting
 * DQC_S8_BIAS gives q exactly.
 * The kernel builds both with __byte_perm(word, BASE, sel(i)); the host test
 * emulates that permute against dqc_ftrick_value / dqc_s8_value. */
#define DQC_FTRICK_BASE 0x3F000000u
#define DQC_S8_BASE 0x4B000000u
#define DQC_S8_BIAS 8388736.0f /* 2^23 + 128 */

/* __byte_perm selectors: result bytes (0, 0, word byte i, 0x3F) and
 * (word byte i, 0, 0, 0x4B). */
DQC_HD unsigned dqc_ftrick_sel(int i) { return 0x7044u | (unsigned)i << 8; }
DQC_HD unsigned dqc_s8_sel(int i) { return 0x7440u | (unsigned)i; }

DQC_HD float dqc_ftrick_value(uint32_t q) {
  return dqc_bits_f32(DQC_FTRICK_BASE | (q & 0x7f) << 16);
}
DQC_HD float dqc_s8_value(uint32_t b) {
  return dqc_bits_f32(DQC_S8_BASE | ((b ^ 0x80) & 0xff)) - DQC_S8_BIAS;
}

/* (A, B) of a KIND_U piece -> the factors of F and X above. */
DQC_HD void dqc_ftrick_coef(float a, float b, float *fa, float *fb) {
  *fa = 256.0f * a;
  *fb = b - 128.0f * a;
}

/* ---- readers --------------------------------------------------------------
 * load() reads through a reader: u16(p), h2f(half bits), and N 32-bit words
 * from p with the alignment the field has relative to a 16-byte aligned
 * base holding the blocks back to back (a2: 2 bytes, a4: 4, a16: 16). This
 * one reads bytes (host test, any alignment); matmul.cu's reads shared
 * memory with the widest load the alignment allows. */
struct dqc_byte_rd {
  DQC_HD uint16_t u16(const uint8_t *p) const { return dqc_le16(p); }
  DQC_HD float h2f(uint16_t h) const { return dqc_f16_to_f32(h); }
  template <int N> DQC_HD void a2(const uint8_t *p, uint32_t *w) const {
    for (int i = 0; i < N; i++)
      w[i] = dqc_le32(p + 4 * i);
  }
  template <int N> DQC_HD void a4(const uint8_t *p, uint32_t *w) const {
    a2<N>(p, w);
  }
  template <int N> DQC_HD void a16(const uint8_t *p, uint32_t *w) const {
    a2<N>(p, w);
  }
};

/* ---- per-type traits -------------------------------------------------------
 * BE, BB: elements and bytes of a block (16 elements for the float formats).
 * UPB: units per block; P: pieces per unit (unit = 16 * P elements).
 * PERIOD: staged activations get 4 floats of padding every PERIOD floats so
 * that the 8 lanes of each quarter-warp read different banks (checked by the
 * host test). R_MAX: most rows a warp may hold at once (registers). */
enum { DQC_KIND_F32, DQC_KIND_F16, DQC_KIND_BF16, DQC_KIND_U, DQC_KIND_S8 };

template <int T> struct dqc_traits;

template <> struct dqc_traits<DQ_TYPE_F32> {
  static constexpr int BE = 16, BB = 64, UPB = 1, P = 1, PERIOD = 32, R_MAX = 2,
                       KIND = DQC_KIND_F32;
  struct raw {
    uint32_t w[16];
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    rd.template a16<16>(b, r.w);
  }
  DQC_HD static int piece_elem(int j, int p) { return 0; }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    for (int i = 0; i < 16; i++)
      y[i] = dqc_bits_f32(dqc_le32(b + 4 * i));
  }
};

template <> struct dqc_traits<DQ_TYPE_F16> {
  static constexpr int BE = 16, BB = 32, UPB = 1, P = 1, PERIOD = 32, R_MAX = 4,
                       KIND = DQC_KIND_F16;
  struct raw {
    uint32_t w[8];
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    rd.template a16<8>(b, r.w);
  }
  DQC_HD static int piece_elem(int j, int p) { return 0; }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    for (int i = 0; i < 16; i++)
      y[i] = dqc_f16_to_f32(dqc_le16(b + 2 * i));
  }
};

template <> struct dqc_traits<DQ_TYPE_BF16> {
  static constexpr int BE = 16, BB = 32, UPB = 1, P = 1, PERIOD = 32, R_MAX = 4,
                       KIND = DQC_KIND_BF16;
  struct raw {
    uint32_t w[8];
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    rd.template a16<8>(b, r.w);
  }
  DQC_HD static int piece_elem(int j, int p) { return 0; }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    for (int i = 0; i < 16; i++)
      y[i] = dqc_bf16_to_f32(dqc_le16(b + 2 * i));
  }
};

/* The float formats' units sit 32 or 64 bytes apart in the tile, so their
 * 16-byte loads are 2-way (F16, BF16) or 4-way (F32) bank-conflicted; at
 * 2-4 bytes a weight those types are far from the shared-memory limit, so
 * the tile is not swizzled for them. */

/* Q4_0: f16 d @0; qs[16] @2. Piece p: the low (p = 0) or high nibbles. */
template <> struct dqc_traits<DQ_TYPE_Q4_0> {
  static constexpr int BE = 32, BB = 18, UPB = 1, P = 2, PERIOD = 32, R_MAX = 4,
                       KIND = DQC_KIND_U;
  struct raw {
    uint32_t qs[4];
    float d;
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    rd.template a2<4>(b + 2, r.qs);
    r.d = rd.h2f(rd.u16(b));
  }
  DQC_HD static int piece_elem(int j, int p) { return 16 * p; }
  DQC_HD static uint32_t qword(const raw &r, int p, int k) {
    return (r.qs[k] >> (4 * p)) & 0x0F0F0F0Fu;
  }
  DQC_HD static void coef(const raw &r, int p, float *a, float *b) {
    *a = r.d;
    *b = -8.0f * r.d;
  }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    const float d = dqc_f16_to_f32(dqc_le16(b));
    for (int j = 0; j < 16; j++)
      y[j] = (float)(((b[2 + j] >> (4 * g)) & 15) - 8) * d;
  }
};

/* Q4_1: f16 d @0, m @2; qs[16] @4. */
template <> struct dqc_traits<DQ_TYPE_Q4_1> {
  static constexpr int BE = 32, BB = 20, UPB = 1, P = 2, PERIOD = 32, R_MAX = 4,
                       KIND = DQC_KIND_U;
  struct raw {
    uint32_t qs[4];
    float d, m;
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    uint32_t dm[1];
    rd.template a4<1>(b, dm);
    rd.template a4<4>(b + 4, r.qs);
    r.d = rd.h2f((uint16_t)(dm[0] & 0xffff));
    r.m = rd.h2f((uint16_t)(dm[0] >> 16));
  }
  DQC_HD static int piece_elem(int j, int p) { return 16 * p; }
  DQC_HD static uint32_t qword(const raw &r, int p, int k) {
    return (r.qs[k] >> (4 * p)) & 0x0F0F0F0Fu;
  }
  DQC_HD static void coef(const raw &r, int p, float *a, float *b) {
    *a = r.d;
    *b = r.m;
  }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    const float d = dqc_f16_to_f32(dqc_le16(b)),
                m = dqc_f16_to_f32(dqc_le16(b + 2));
    for (int j = 0; j < 16; j++)
      y[j] = dqc_mul_rn((float)((b[4 + j] >> (4 * g)) & 15), d) + m;
  }
};

/* Bit i (0..3) of `bits` to bit 4 of byte i: the fifth bit of four Q5
 * values at once. The multiply places bit i at 8i + 7m (m < 4); those
 * positions never overlap, so nothing carries. */
DQC_HD uint32_t dqc_q5_spread(uint32_t bits) {
  return (((bits & 15u) * 0x00204081u) & 0x01010101u) << 4;
}

/* Q5_0: f16 d @0; qh[4] @2; qs[16] @6. */
template <> struct dqc_traits<DQ_TYPE_Q5_0> {
  static constexpr int BE = 32, BB = 22, UPB = 1, P = 2, PERIOD = 32, R_MAX = 4,
                       KIND = DQC_KIND_U;
  struct raw {
    uint32_t w[5];
    float d;
  }; /* w[0] = qh, w[1..4] = qs */
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    rd.template a2<5>(b + 2, r.w);
    r.d = rd.h2f(rd.u16(b));
  }
  DQC_HD static int piece_elem(int j, int p) { return 16 * p; }
  DQC_HD static uint32_t qword(const raw &r, int p, int k) {
    return ((r.w[1 + k] >> (4 * p)) & 0x0F0F0F0Fu) |
           dqc_q5_spread(r.w[0] >> (16 * p + 4 * k));
  }
  DQC_HD static void coef(const raw &r, int p, float *a, float *b) {
    *a = r.d;
    *b = -16.0f * r.d;
  }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    const float d = dqc_f16_to_f32(dqc_le16(b));
    const uint32_t h = dqc_le32(b + 2);
    for (int j = 0; j < 16; j++) {
      const int q =
          ((b[6 + j] >> (4 * g)) & 15) | (int)((h >> (j + 16 * g)) & 1) << 4;
      y[j] = (float)(q - 16) * d;
    }
  }
};

/* Q5_1: f16 d @0, m @2; qh[4] @4; qs[16] @8. */
template <> struct dqc_traits<DQ_TYPE_Q5_1> {
  static constexpr int BE = 32, BB = 24, UPB = 1, P = 2, PERIOD = 32, R_MAX = 4,
                       KIND = DQC_KIND_U;
  struct raw {
    uint32_t w[5];
    float d, m;
  }; /* w[0] = qh, w[1..4] = qs */
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    uint32_t dm[1];
    rd.template a4<1>(b, dm);
    rd.template a4<5>(b + 4, r.w);
    r.d = rd.h2f((uint16_t)(dm[0] & 0xffff));
    r.m = rd.h2f((uint16_t)(dm[0] >> 16));
  }
  DQC_HD static int piece_elem(int j, int p) { return 16 * p; }
  DQC_HD static uint32_t qword(const raw &r, int p, int k) {
    return ((r.w[1 + k] >> (4 * p)) & 0x0F0F0F0Fu) |
           dqc_q5_spread(r.w[0] >> (16 * p + 4 * k));
  }
  DQC_HD static void coef(const raw &r, int p, float *a, float *b) {
    *a = r.d;
    *b = r.m;
  }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    const float d = dqc_f16_to_f32(dqc_le16(b)),
                m = dqc_f16_to_f32(dqc_le16(b + 2));
    const uint32_t h = dqc_le32(b + 4);
    for (int j = 0; j < 16; j++) {
      const int q =
          ((b[8 + j] >> (4 * g)) & 15) | (int)((h >> (j + 16 * g)) & 1) << 4;
      y[j] = dqc_mul_rn((float)q, d) + m;
    }
  }
};

/* Q8_0: f16 d @0; i8 qs[32] @2. Piece p: qs[16p .. 16p + 15]. */
template <> struct dqc_traits<DQ_TYPE_Q8_0> {
  static constexpr int BE = 32, BB = 34, UPB = 1, P = 2, PERIOD = 32, R_MAX = 4,
                       KIND = DQC_KIND_S8;
  struct raw {
    uint32_t qs[8];
    float d;
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    rd.template a2<8>(b + 2, r.qs);
    r.d = rd.h2f(rd.u16(b));
  }
  DQC_HD static int piece_elem(int j, int p) { return 16 * p; }
  DQC_HD static uint32_t qword(const raw &r, int p, int k) {
    return r.qs[4 * p + k];
  }
  DQC_HD static void coef(const raw &r, int p, float *a, float *b) {
    *a = r.d;
    *b = 0.0f;
  }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    const float d = dqc_f16_to_f32(dqc_le16(b));
    for (int j = 0; j < 16; j++)
      y[j] = (float)(int8_t)b[2 + 16 * g + j] * d;
  }
};

/* Q4_K: f16 d @0, dmin @2; scales[12] @4; qs[128] @16. Unit c (0..3) is
 * elements 64c .. 64c + 63: qs[32c .. 32c + 31], low nibbles (sub-block 2c)
 * for pieces 0 and 1, high nibbles (sub-block 2c + 1) for pieces 2 and 3.
 * Blocks are 144 bytes, so the header and qs are 16-byte aligned. */
template <> struct dqc_traits<DQ_TYPE_Q4_K> {
  static constexpr int BE = 256, BB = 144, UPB = 4, P = 4, PERIOD = 64,
                       R_MAX = 4, KIND = DQC_KIND_U;
  struct raw {
    uint32_t qs[8];
    float a[2], b[2];
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int c, raw &r) {
    uint32_t h[4];
    rd.template a16<4>(b, h);
    rd.template a16<8>(b + 16 + 32 * c, r.qs);
    const float d = rd.h2f((uint16_t)(h[0] & 0xffff));
    const float dmin = rd.h2f((uint16_t)(h[0] >> 16));
    for (int i = 0; i < 2; i++) {
      uint32_t sc, mn;
      dqc_q4k_scale_min(h[1], h[2], h[3], 2 * c + i, &sc, &mn);
      r.a[i] = d * (float)sc;
      r.b[i] = -(dmin * (float)mn);
    }
  }
  DQC_HD static int piece_elem(int c, int p) { return 64 * c + 16 * p; }
  DQC_HD static uint32_t qword(const raw &r, int p, int k) {
    return (r.qs[4 * (p & 1) + k] >> (4 * (p >> 1))) & 0x0F0F0F0Fu;
  }
  DQC_HD static void coef(const raw &r, int p, float *a, float *b) {
    *a = r.a[p >> 1];
    *b = r.b[p >> 1];
  }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    const int c = g >> 2, half = (g >> 1) & 1, l0 = 16 * (g & 1);
    const float d = dqc_f16_to_f32(dqc_le16(b)),
                dmin = dqc_f16_to_f32(dqc_le16(b + 2));
    uint32_t sc, mn;
    dqc_q4k_scale_min(dqc_le32(b + 4), dqc_le32(b + 8), dqc_le32(b + 12),
                      2 * c + half, &sc, &mn);
    const float d0 = d * (float)sc, m0 = dqc_mul_rn(dmin, (float)mn);
    const uint8_t *q = b + 16 + 32 * c + l0;
    for (int l = 0; l < 16; l++)
      y[l] = dqc_mul_rn(d0, (float)((q[l] >> (4 * half)) & 15)) - m0;
  }
};

/* Q6_K: ql[128] @0; qh[64] @128; i8 scales[16] @192; f16 d @208. Half h
 * (128 elements) uses ql[64h ..], qh[32h ..], scales[8h ..]. Unit j = 2h + a
 * takes l in [16a, 16a + 16) of every quadrant p: elements 128h + 32p + 16a
 * + [0, 16), scale scales[8h + a + 2p]. Blocks are 210 bytes: fields are only
 * 2-byte aligned. */
template <> struct dqc_traits<DQ_TYPE_Q6_K> {
  static constexpr int BE = 256, BB = 210, UPB = 4, P = 4, PERIOD = 128,
                       R_MAX = 4, KIND = DQC_KIND_U;
  struct raw {
    uint32_t lo[4], hi[4], qh[4];
    float a[4];
  };
  template <class Rd>
  DQC_HD static void load(const Rd &rd, const uint8_t *b, int j, raw &r) {
    const int h = j >> 1, a = j & 1;
    uint32_t s[2];
    rd.template a2<4>(b + 64 * h + 16 * a, r.lo);
    rd.template a2<4>(b + 64 * h + 32 + 16 * a, r.hi);
    rd.template a2<4>(b + 128 + 32 * h + 16 * a, r.qh);
    rd.template a2<2>(b + 192 + 8 * h, s);
    const float d = rd.h2f(rd.u16(b + 208));
    for (int p = 0; p < 4; p++)
      r.a[p] = d * (float)(int8_t)(s[p >> 1] >> (8 * (a + 2 * (p & 1))));
  }
  DQC_HD static int piece_elem(int j, int p) {
    return 128 * (j >> 1) + 32 * p + 16 * (j & 1);
  }
  DQC_HD static uint32_t qword(const raw &r, int p, int k) {
    const uint32_t l = (p & 1) ? r.hi[k] : r.lo[k];
    return ((l >> (4 * (p >> 1))) & 0x0F0F0F0Fu) |
           ((r.qh[k] >> (2 * p)) & 0x03030303u) << 4;
  }
  DQC_HD static void coef(const raw &r, int p, float *a, float *b) {
    *a = r.a[p];
    *b = -32.0f * r.a[p];
  }
  DQC_HD static void dequant16(const uint8_t *b, int g, float *y) {
    const int h = g >> 3, p = (g >> 1) & 3, l0 = 16 * (g & 1);
    const uint8_t *ql = b + 64 * h + 32 * (p & 1), *qh = b + 128 + 32 * h;
    const float d = dqc_f16_to_f32(dqc_le16(b + 208));
    const float sc = (float)(int8_t)b[192 + 8 * h + l0 / 16 + 2 * p];
    for (int l = l0; l < l0 + 16; l++) {
      const int lo = (ql[l] >> (4 * (p >> 1))) & 15;
      const int q = lo | ((qh[l] >> (2 * p)) & 3) << 4;
      y[l - l0] = d * sc * (float)(q - 32);
    }
  }
};

/* ---- weight staging ---------------------------------------------------------
 * A warp copies weight rows from global to shared memory in words of AL
 * bytes (2, 4, 8 or 16): the largest power of two dividing the weights'
 * address and row size, so rows of 576 Q4_1 columns (360 bytes: 8-byte
 * aligned) move in 8-byte words, not 2-byte ones. In a full step every
 * lane issues all its loads (IT per row, for R rows) before its first
 * store, so a warp has them in flight together instead of one latency per
 * word; a partial step goes in rounds of R words per lane. A step starts on a
 * 16-byte multiple (STEP_BYTES % 16 == 0) and a row piece ends on an AL
 * multiple, so words never straddle the piece; the partial staging still
 * copies a tail of bytes % AL in 2-byte words (bytes is even). */
template <int AL> struct dqc_word;
template <> struct dqc_word<16> { typedef uint4 t; };
template <> struct dqc_word<8> { typedef uint2 t; };
template <> struct dqc_word<4> { typedef unsigned int t; };
template <> struct dqc_word<2> { typedef unsigned short t; };

/* Full unrolling keeps v[][] in registers (the host compiler has no such
 * pragma and needs none). */
#ifdef __CUDA_ARCH__
#define DQC_UNROLL _Pragma("unroll")
#else
#define DQC_UNROLL
#endif

template <class W> DQC_HD W dqc_ldg(const W *p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

/* The alignment word size for weights at w with rows row_bytes apart (and
 * matrices stride apart: 0 for one matrix). */
DQC_HD int dqc_w_align(uintptr_t w, size_t row_bytes, size_t stride) {
  const uintptr_t m = w | (uintptr_t)row_bytes | (uintptr_t)stride | 16u;
  const uintptr_t low = m & (~m + 1u); /* the lowest set bit */
  return low >= 16 ? 16 : (int)low;
}

/* Lane `lane`'s share of copying a full step (STEP bytes, a multiple of
 * 16) of each of R rows src[r] to tile + r * PITCH (16-byte aligned): all
 * R * IT words loaded before the first is stored. */
template <int AL, int R, int STEP, int PITCH>
DQC_HD void dqc_stage_rows(uint8_t *tile, const uint8_t *const (&src)[R],
                           int lane) {
  typedef typename dqc_word<AL>::t W;
  constexpr int N = STEP / AL, IT = (N + 31) / 32;
  static_assert(STEP % 16 == 0, "whole words, no tail");
  static_assert(R * IT * (AL >= 4 ? AL / 4 : 1) <= 64,
                "at most 64 registers of words in flight");
  W v[R][IT];
DQC_UNROLL
  for (int r = 0; r < R; r++)
DQC_UNROLL
    for (int i = 0; i < IT; i++)
      if (lane + 32 * i < N)
        v[r][i] = dqc_ldg((const W *)src[r] + lane + 32 * i);
DQC_UNROLL
  for (int r = 0; r < R; r++)
DQC_UNROLL
    for (int i = 0; i < IT; i++)
      if (lane + 32 * i < N)
        ((W *)(tile + r * PITCH))[lane + 32 * i] = v[r][i];
}

/* The same for a partial step, its length known only at run time: one
 * word of each row per lane and round (R loads in flight), rounds in a
 * loop. Unrolled chunks of words here raised most mat-vec kernels'
 * registers to 168-255 and spilled some (ptxas -v, sm_90); this keeps
 * them where the full-step staging leaves them. */
template <int AL, int R, int PITCH>
DQC_HD void dqc_stage_part(uint8_t *tile, const uint8_t *const (&src)[R],
                           int bytes, int lane) {
  typedef typename dqc_word<AL>::t W;
  const int n = bytes / AL;
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
  for (int c = lane; c < n; c += 32) {
    W v[R];
DQC_UNROLL
    for (int r = 0; r < R; r++)
      v[r] = dqc_ldg((const W *)src[r] + c);
DQC_UNROLL
    for (int r = 0; r < R; r++)
      ((W *)(tile + r * PITCH))[c] = v[r];
  }
  /* bytes % AL in 2-byte words (none in the kernel: a row ends on an AL
   * multiple) */
  const int done = n * AL, n2 = (bytes - done) >> 1; /* < AL / 2 < 32 */
  if (lane < n2)
DQC_UNROLL
    for (int r = 0; r < R; r++)
      ((unsigned short *)(tile + r * PITCH + done))[lane] =
          dqc_ldg((const unsigned short *)(src[r] + done) + lane);
}

/* The mat-vec kernel's staging: a warp's R rows of a step into its tile in the
 * weights' word size: full steps of 16- and 8-byte words with the size
 * known at compile time, the rest (a row's partial last step; 4- and
 * 2-byte words, rare in full steps) in rounds. More unrolled variants
 * cost registers in every kernel (ptxas -v). */
template <int R, int STEP, int PITCH>
DQC_HD void dqc_stage_w(uint8_t *tile, const uint8_t *const (&src)[R],
                        int bytes, int al, int lane) {
  const bool full = bytes == STEP;
  switch (al) {
  case 16:
    if (full)
      dqc_stage_rows<16, R, STEP, PITCH>(tile, src, lane);
    else
      dqc_stage_part<16, R, PITCH>(tile, src, bytes, lane);
    break;
  case 8:
    if (full)
      dqc_stage_rows<8, R, STEP, PITCH>(tile, src, lane);
    else
      dqc_stage_part<8, R, PITCH>(tile, src, bytes, lane);
    break;
  case 4: dqc_stage_part<4, R, PITCH>(tile, src, bytes, lane); break;
  default: dqc_stage_part<2, R, PITCH>(tile, src, bytes, lane); break;
  }
}

/* ---- planning --------------------------------------------------------------
 * A mat-vec step covers G = 32 / UPB blocks: one unit per lane. Per step a
 * CTA stages NT activation rows of STEP_ELEMS floats (padded: XT floats per
 * row) plus their 16-element sums, and each warp stages R weight rows of
 * STEP_BYTES (PITCH apart: 16 bytes of slack for the over-reading a2). */
template <int T> struct dqc_mv_shape {
  typedef dqc_traits<T> Tr;
  static constexpr int G = 32 / Tr::UPB;
  static constexpr int STEP_ELEMS = G * Tr::BE;
  static constexpr int STEP_BYTES = G * Tr::BB;
  static constexpr int PITCH = (STEP_BYTES + 16 + 15) / 16 * 16;
  static constexpr int XT = STEP_ELEMS + 4 * (STEP_ELEMS / Tr::PERIOD);
  static constexpr int N_SUMS = STEP_ELEMS / 16;
};

/* Float index of staged activation element e (of a step) in its padded row:
 * 4 floats of padding after every `period` floats, so float4 stays float4. */
DQC_HD int dqc_mv_xidx(int e, int period) { return e + 4 * (e / period); }

#define DQC_MV_MAX_TOK 8 /* larger n_tok goes to cuBLAS */
#define DQC_MV_MAX_WARPS 4

/* Tokens a mat-vec kernel is compiled for: 1, 2, 4 or 8 (x rows past n_tok
 * are staged as zeros). */
DQC_HD int dqc_mv_tier(int n_tok) {
  return n_tok <= 1 ? 1 : n_tok <= 2 ? 2 : n_tok <= 4 ? 4 : 8;
}

/* Weight rows per warp: each staged activation float4 serves R rows from
 * registers, which is what keeps shared-memory traffic under the DRAM rate;
 * fewer for 8 tokens (registers). */
DQC_HD constexpr int dqc_mv_rows(int nt, int r_max) {
  const int r = nt <= 4 ? 4 : 2;
  return r < r_max ? r : r_max;
}

/* Warps per CTA (each its own R rows, all sharing the staged activations):
 * 4 unless that leaves fewer than two CTAs per SM, then 2, then 1. */
DQC_HD int dqc_mv_warps(int64_t n_rows, int rows, int n_sm) {
  for (int w = DQC_MV_MAX_WARPS; w > 1; w /= 2)
    if ((n_rows + (int64_t)w * rows - 1) / ((int64_t)w * rows) >=
        2 * (int64_t)n_sm)
      return w;
  return 1;
}

/* Dynamic shared memory of a mat-vec CTA, in bytes. */
DQC_HD size_t dqc_mv_smem(int nt, int rows, int warps, int xt, int n_sums,
                          int pitch) {
  return (size_t)nt * (size_t)(xt + n_sums) * sizeof(float) +
         (size_t)warps * (size_t)rows * (size_t)pitch;
}

/* Rows per GEMM tile so a dequantized F16 tile of n_cols columns fits in
 * budget_bytes: all rows when they fit, else a multiple of 128 (tensor-core
 * friendly) when at least 128 fit, else as many as fit, at least 1. */
DQC_HD int64_t dqc_gemm_tile_rows(int64_t n_rows, int64_t n_cols,
                                  size_t budget_bytes) {
  const int64_t fit = (int64_t)(budget_bytes / ((size_t)n_cols * 2));
  if (fit >= n_rows)
    return n_rows;
  if (fit >= 128)
    return fit / 128 * 128;
  return fit > 0 ? fit : 1;
}

#endif /* DQ_CUDA_QUANT_CUH */
