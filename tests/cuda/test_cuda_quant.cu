/*
 * test_cuda_quant.cu - host-only checks (no GPU needed) of the layout code
 * the CUDA matrix kernels share with this test (kernels/cuda/quant.cuh),
 * against the CPU reference (kernels/cpu/quant_ref.c, kernels/cpu/types.c):
 *
 *  - the half conversions, exhaustively, bit for bit;
 *  - dequant16 of every weight type, bit for bit against dq_dequantize_row,
 *    on blocks from the CPU quantizer and on random bytes with sane f16
 *    scales (every quant bit pattern, negative Q6_K scales, high Q4_K
 *    scale bits);
 *  - the mat-vec unit view: every element of a block covered exactly once
 *    by (unit, piece, k, i), each A * q + B equal to the reference within
 *    float rounding, q below 64 where the kernel's byte-to-float trick
 *    needs it, and every field read with the alignment the kernel's
 *    shared-memory reader assumes (including its over-read staying in the
 *    tile's slack);
 *  - the byte permutes the kernel uses (emulated __byte_perm with the
 *    selectors from quant.cuh) against the portable values;
 *  - a host emulation of one mat-vec kernel call (staging with padding and
 *    16-sums, per-lane units, the F/X combination, the shuffle reduction)
 *    against a double-precision dot of the reference rows;
 *  - the staged-activation padding: in bounds, injective, and free of
 *    shared-memory bank conflicts for the kernel's loads and stores;
 *  - the weight staging (every word size, every even row length, tails),
 *    lane by lane, under ASan in CI: bytes arrive, nothing else written,
 *    nothing read past the row;
 *  - the planning arithmetic: launch tiers, shared memory per CTA, GEMM
 *    row tiles.
 * On a machine with a GPU it also runs dq_cu_matmul and dq_cu_matvec_ids
 * (kernels/cuda/matmul.cu) on every type against a double-precision dot
 * of the reference rows: both paths, weights 16-, 8-, 4- and 2-byte aligned,
 * partial steps, several GEMM tiles. Without a GPU that part reports
 * itself skipped and the program still exits 0; in CI it runs on the
 * emulated device instead (emu_test_quant.cc: cuda_quant_emul).
 */
#include "cuda_ops.h"
#include "kernels/kt.h"
#include "quant.cuh"

#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static uint8_t *aligned_bytes(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 1) != 0)
    return NULL;
  memset(p, 0, n);
  return (uint8_t *)p;
}

/* ---- half conversions ------------------------------------------------------
 */

static void test_halves(void) {
  int bad16 = 0, badbf = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    if (f32_bits(dqc_f16_to_f32((uint16_t)h)) !=
        f32_bits(dq_f16_to_f32((dq_f16)h)))
      bad16++;
    if (f32_bits(dqc_bf16_to_f32((uint16_t)h)) !=
        f32_bits(dq_bf16_to_f32((dq_bf16)h)))
      badbf++;
  }
  CHECK_EQ_INT(bad16, 0);
  CHECK_EQ_INT(badbf, 0);
}

/* ---- the byte permutes ------------------------------------------------------
 */

/* CUDA's __byte_perm(x, y, s): byte n of the result is byte (s >> 4n) & 7
 * of the 8 bytes {y:x} (x bytes 0..3). */
static uint32_t byte_perm(uint32_t x, uint32_t y, unsigned s) {
  const uint64_t v = (uint64_t)y << 32 | x;
  uint32_t r = 0;
  for (int n = 0; n < 4; n++)
    r |= (uint32_t)((v >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n);
  return r;
}

static void test_permutes(kt_rng *rng) {
  int bad = 0;
  for (uint32_t q = 0; q < 128; q++)
    if (dqc_ftrick_value(q) != 0.5f + (float)q / 256.0f)
      bad++;
  CHECK_EQ_INT(bad, 0);
  for (int it = 0; it < 20000; it++) {
    const uint32_t w = (uint32_t)kt_next(rng);
    const uint32_t q = w & 0x3f3f3f3fu; /* KIND_U bytes are < 64 */
    for (int i = 0; i < 4; i++) {
      const uint32_t byte = (q >> (8 * i)) & 0xff;
      if (byte_perm(q, DQC_FTRICK_BASE, dqc_ftrick_sel(i)) !=
          f32_bits(dqc_ftrick_value(byte)))
        bad++;
      const float s8 =
          dqc_bits_f32(byte_perm(w ^ 0x80808080u, DQC_S8_BASE, dqc_s8_sel(i))) -
          DQC_S8_BIAS;
      if (s8 != (float)(int8_t)(w >> (8 * i)) ||
          dqc_s8_value(w >> (8 * i)) != s8)
        bad++;
    }
  }
  CHECK_EQ_INT(bad, 0);
  /* The Q5 fifth-bit spread against the bit-by-bit rule. */
  for (uint32_t b = 0; b < 16; b++) {
    uint32_t want = 0;
    for (int i = 0; i < 4; i++)
      want |= ((b >> i) & 1u) << (8 * i + 4);
    CHECK_EQ_INT(dqc_q5_spread(b), want);
  }
}

/* ---- a reader that checks and records what load() asks for -------------- */

struct rec_call {
  int align; /* 2, 4 or 16; 1 for u16 */
  long off;  /* byte offset from the tile base */
  int n_words;
};

/* Reads like dqc_byte_rd, and checks each field against the alignment its
 * kind promises relative to a 16-byte aligned base (the shared tile).
 * __host__ __device__ only because load() is; it runs on the host. */
struct check_rd {
  const uint8_t *base;
  int *bad_align;
  long *max_end; /* furthest byte the device reader touches */
  rec_call *calls;
  int *n_calls;
  __host__ __device__ void note(const uint8_t *p, int align, int n_words,
                                long end) const {
    const long off = (long)(p - base);
    if (off % (align == 1 ? 2 : align) != 0)
      (*bad_align)++;
    if (end > *max_end)
      *max_end = end;
    if (calls && *n_calls < 64)
      calls[(*n_calls)++] = rec_call{align, off, n_words};
  }
  __host__ __device__ uint16_t u16(const uint8_t *p) const {
    note(p, 1, 0, (long)(p - base) + 2);
    return dqc_le16(p);
  }
  __host__ __device__ float h2f(uint16_t h) const { return dqc_f16_to_f32(h); }
  template <int N>
  __host__ __device__ void a2(const uint8_t *p, uint32_t *w) const {
    /* The device reader loads N + 1 aligned words from p rounded down. */
    const long off = (long)(p - base);
    note(p, 2, N, (off & ~3L) + 4L * (N + 1));
    for (int i = 0; i < N; i++)
      w[i] = dqc_le32(p + 4 * i);
  }
  template <int N>
  __host__ __device__ void a4(const uint8_t *p, uint32_t *w) const {
    note(p, 4, N, (long)(p - base) + 4L * N);
    for (int i = 0; i < N; i++)
      w[i] = dqc_le32(p + 4 * i);
  }
  template <int N>
  __host__ __device__ void a16(const uint8_t *p, uint32_t *w) const {
    note(p, 16, N, (long)(p - base) + 4L * N);
    for (int i = 0; i < N; i++)
      w[i] = dqc_le32(p + 4 * i);
  }
};

/* Element i of float4 k of piece p as the kernel sees it: q (KIND_U, S8)
 * or the value itself (float kinds, *is_value = 1). */
template <int T>
static float piece_elem_value(const typename dqc_traits<T>::raw &r, int p,
                              int k, int i, int *is_value) {
  typedef dqc_traits<T> Tr;
  *is_value = 0;
  if constexpr (Tr::KIND == DQC_KIND_U) {
    return (float)((Tr::qword(r, p, k) >> (8 * i)) & 0xff);
  } else if constexpr (Tr::KIND == DQC_KIND_S8) {
    return (float)(int8_t)(Tr::qword(r, p, k) >> (8 * i));
  } else if constexpr (Tr::KIND == DQC_KIND_F32) {
    *is_value = 1;
    return dqc_bits_f32(r.w[4 * k + i]);
  } else {
    *is_value = 1;
    const int h = 4 * k + i;
    const uint16_t bits = (uint16_t)(r.w[h / 2] >> (16 * (h % 2)));
    return Tr::KIND == DQC_KIND_F16 ? dqc_f16_to_f32(bits)
                                    : dqc_bf16_to_f32(bits);
  }
}

/* ---- per-type block checks --------------------------------------------------
 */

/* Offsets of the f16 fields of a block (random-byte blocks get sane ones). */
static int f16_fields(int type, int *off) {
  switch (type) {
  case DQ_TYPE_Q4_0:
  case DQ_TYPE_Q5_0:
  case DQ_TYPE_Q8_0: off[0] = 0; return 1;
  case DQ_TYPE_Q4_1:
  case DQ_TYPE_Q5_1:
  case DQ_TYPE_Q4_K:
    off[0] = 0;
    off[1] = 2;
    return 2;
  case DQ_TYPE_Q6_K: off[0] = 208; return 1;
  }
  return 0;
}

/* Fills n_blocks blocks: the CPU quantizer on random rows (variant 0), or
 * random bytes with random finite f16 scales (variant 1). */
template <int T>
static void make_blocks(kt_rng *rng, int variant, uint8_t *bytes, int64_t n) {
  typedef dqc_traits<T> Tr;
  const int64_t n_blocks = n / Tr::BE;
  if (variant == 0) {
    float *src = (float *)malloc((size_t)n * sizeof(float));
    kt_fill(rng, src, n);
    CHECK_OK(dq_quantize_row(T, src, bytes, n), "dq_quantize_row");
    free(src);
    return;
  }
  for (int64_t i = 0; i < n_blocks * Tr::BB; i++)
    bytes[i] = (uint8_t)kt_next(rng);
  int off[2];
  const int n_f = f16_fields(T, off);
  for (int64_t b = 0; b < n_blocks; b++)
    for (int f = 0; f < n_f; f++) {
      const float v = kt_uniform(rng) *
                      powf(10.0f, -3.0f * (kt_uniform(rng) + 1.0f) / 2.0f);
      const dq_f16 h = dq_f32_to_f16(v);
      memcpy(bytes + b * Tr::BB + off[f], &h, 2);
    }
}

template <int T> static void check_type(kt_rng *rng) {
  typedef dqc_traits<T> Tr;
  const char *name = dq_type_name(T);
  const int64_t n =
      2048 + (Tr::BE == 256 ? 256 : 4 * Tr::BE); /* not a step multiple */
  const int64_t n_blocks = n / Tr::BE;
  size_t row_bytes = 0;
  CHECK_OK(dq_type_row_bytes(T, n, &row_bytes), "dq_type_row_bytes");
  CHECK_EQ_INT((int64_t)row_bytes, n_blocks * Tr::BB);
  uint8_t *bytes = aligned_bytes(row_bytes + 16);
  float *ref = (float *)malloc((size_t)n * sizeof(float));
  float *dec = (float *)malloc((size_t)n * sizeof(float));
  int *covered = (int *)malloc((size_t)n * sizeof(int));

  for (int variant = 0; variant < 2; variant++) {
    for (int rep = 0; rep < 4; rep++) {
      make_blocks<T>(rng, variant, bytes, n);
      CHECK_OK(dq_dequantize_row(T, bytes, ref, n), "dq_dequantize_row");

      /* 1. dequant16: bit for bit. */
      for (int64_t b = 0; b < n_blocks; b++)
        for (int g = 0; g < Tr::BE / 16; g++)
          Tr::dequant16(bytes + b * Tr::BB, g, dec + b * Tr::BE + 16 * g);
      int64_t first = -1, n_bad = 0;
      for (int64_t i = 0; i < n; i++)
        if (f32_bits(dec[i]) != f32_bits(ref[i])) {
          if (first < 0)
            first = i;
          n_bad++;
        }
      CHECK_MSG(n_bad == 0,
                "%s variant %d: %lld of %lld differ, first [%lld] %a vs %a",
                name, variant, (long long)n_bad, (long long)n, (long long)first,
                first >= 0 ? (double)dec[first] : 0.0,
                first >= 0 ? (double)ref[first] : 0.0);

      /* 2. the unit view. */
      memset(covered, 0, (size_t)n * sizeof(int));
      int bad_align = 0, bad_q = 0;
      int64_t n_far = 0, first_far = -1;
      for (int64_t b = 0; b < n_blocks; b++) {
        /* Blocks sit at b * BB from the row start, as in the shared tile
         * (whose base is 16-byte aligned; so is `bytes`). The over-read is
         * checked against the tile's slack for the last block of a step. */
        const int bi = (int)(b % dqc_mv_shape<T>::G);
        long end = 0;
        check_rd rd{bytes + (b - bi) * Tr::BB, &bad_align, &end, NULL, NULL};
        for (int j = 0; j < Tr::UPB; j++) {
          typename Tr::raw r;
          Tr::load(rd, bytes + b * Tr::BB, j, r);
          for (int p = 0; p < Tr::P; p++) {
            float a = 1.0f, c = 0.0f;
            if constexpr (Tr::KIND == DQC_KIND_U || Tr::KIND == DQC_KIND_S8)
              Tr::coef(r, p, &a, &c);
            float fa = a, fb = c;
            if constexpr (Tr::KIND == DQC_KIND_U)
              dqc_ftrick_coef(a, c, &fa, &fb);
            for (int k = 0; k < 4; k++)
              for (int i = 0; i < 4; i++) {
                const int64_t e = b * Tr::BE + Tr::piece_elem(j, p) + 4 * k + i;
                if (e < b * Tr::BE || e >= (b + 1) * Tr::BE)
                  continue; /* counted as uncovered below */
                covered[e]++;
                int is_value;
                const float q = piece_elem_value<T>(r, p, k, i, &is_value);
                if (is_value) {
                  if (f32_bits(q) != f32_bits(ref[e]) &&
                      !(q != q && ref[e] != ref[e]))
                    n_far++;
                  continue;
                }
                if (Tr::KIND == DQC_KIND_U && !(q >= 0.0f && q < 64.0f))
                  bad_q++;
                const double v = (double)a * q + c;
                const double tol =
                    1e-6 * (fabs((double)a * q) + fabs((double)c)) + 1e-30;
                /* The kernel's form A' (0.5 + q/256) + B': B' = B - 128 A is
                 * rounded once, so its error scales with 128 |A|. */
                const double vt =
                    Tr::KIND == DQC_KIND_U
                        ? (double)fa * dqc_ftrick_value((uint32_t)q) + fb
                        : v;
                const double tol_t = tol + 1e-6 * 128 * fabs((double)a);
                if (fabs(v - ref[e]) > tol || fabs(vt - ref[e]) > tol_t) {
                  if (first_far < 0)
                    first_far = e;
                  n_far++;
                }
              }
          }
        }
        /* the device reader's over-read stays inside the tile's PITCH */
        CHECK_MSG(end <= dqc_mv_shape<T>::PITCH,
                  "%s: block %d of a step reads to byte %ld > pitch %d", name,
                  bi, end, (int)dqc_mv_shape<T>::PITCH);
      }
      int64_t n_cov_bad = 0;
      for (int64_t i = 0; i < n; i++)
        n_cov_bad += covered[i] != 1;
      CHECK_MSG(n_cov_bad == 0, "%s: %lld elements not covered exactly once",
                name, (long long)n_cov_bad);
      CHECK_MSG(n_far == 0, "%s variant %d: %lld unit values off, first [%lld]",
                name, variant, (long long)n_far, (long long)first_far);
      CHECK_MSG(bad_align == 0, "%s: %d reads break their alignment class",
                name, bad_align);
      CHECK_MSG(bad_q == 0, "%s: %d q values outside [0, 64)", name, bad_q);
    }
  }
  free(covered);
  free(dec);
  free(ref);
  free(bytes);
}

/* ---- a host emulation of mv_kernel
 * ------------------------------------------- */

/* One CTA's arithmetic for rows [0, n_rows) and nt tokens, in the kernel's
 * order: padded staging with the shuffle-order 16-sums, per-lane units, the
 * F/X combination with fmaf, the xor-shuffle reduction. */
template <int T>
static void emulate_mv(const uint8_t *w, size_t row_bytes, int n_rows,
                       int64_t n_cols, const float *x, int nt, float *y) {
  typedef dqc_traits<T> Tr;
  typedef dqc_mv_shape<T> S;
  const int64_t n_blocks = n_cols / Tr::BE;
  const int64_t n_steps = (n_blocks + S::G - 1) / S::G;
  float *xs = (float *)calloc((size_t)nt * S::XT, sizeof(float));
  float *sums = (float *)calloc((size_t)nt * S::N_SUMS, sizeof(float));
  uint8_t *tile = aligned_bytes(S::PITCH);
  float *acc = (float *)calloc((size_t)n_rows * nt * 32, sizeof(float));
  for (int64_t s = 0; s < n_steps; s++) {
    const int64_t b0 = s * S::G;
    const int cnt = (int)(n_blocks - b0 < S::G ? n_blocks - b0 : S::G);
    const int ne = cnt * Tr::BE, n4 = ne / 4;
    for (int t = 0; t < nt; t++)
      for (int g = 0; g < n4 / 4; g++) {
        float part[4];
        for (int c4 = 0; c4 < 4; c4++) {
          const int cc = 4 * g + c4;
          const float *v = x + (size_t)t * n_cols + b0 * Tr::BE + 4 * cc;
          part[c4] = (v[0] + v[1]) + (v[2] + v[3]);
          memcpy(xs + t * S::XT + dqc_mv_xidx(4 * cc, Tr::PERIOD), v, 16);
        }
        sums[t * S::N_SUMS + g] = (part[0] + part[1]) + (part[2] + part[3]);
      }
    for (int row = 0; row < n_rows; row++) {
      /* the kernel's staging, one row at a time */
      const uint8_t *src[1] = {w + row * row_bytes + b0 * Tr::BB};
      const int al = dqc_w_align((uintptr_t)w, row_bytes, 0);
      for (int lane = 0; lane < 32; lane++)
        dqc_stage_w<1, S::STEP_BYTES, S::PITCH>(tile, src, cnt * Tr::BB, al,
                                                lane);
      const dqc_byte_rd rd;
      for (int lane = 0; lane < 32; lane++) {
        const int bi = lane / Tr::UPB, j = lane % Tr::UPB;
        if (bi >= cnt)
          continue;
        typename Tr::raw r;
        Tr::load(rd, tile + bi * Tr::BB, j, r);
        for (int p = 0; p < Tr::P; p++) {
          const int e = bi * Tr::BE + Tr::piece_elem(j, p);
          float fa = 1.0f, fb = 0.0f;
          if constexpr (Tr::KIND == DQC_KIND_U || Tr::KIND == DQC_KIND_S8) {
            float ca, cb;
            Tr::coef(r, p, &ca, &cb);
            fa = ca;
            fb = cb;
            if constexpr (Tr::KIND == DQC_KIND_U)
              dqc_ftrick_coef(ca, cb, &fa, &fb);
          }
          for (int t = 0; t < nt; t++) {
            float f = 0.0f;
            for (int k = 0; k < 4; k++) {
              const float *xv =
                  xs + t * S::XT + dqc_mv_xidx(e + 4 * k, Tr::PERIOD);
              for (int i = 0; i < 4; i++) {
                int is_value;
                float wv = piece_elem_value<T>(r, p, k, i, &is_value);
                if (Tr::KIND == DQC_KIND_U)
                  wv = dqc_ftrick_value((uint32_t)wv);
                f = fmaf(wv, xv[i], f);
              }
            }
            float *a = acc + ((size_t)row * nt + t) * 32 + lane;
            if (Tr::KIND == DQC_KIND_U)
              *a = fmaf(fa, f, fmaf(fb, sums[t * S::N_SUMS + (e >> 4)], *a));
            else if (Tr::KIND == DQC_KIND_S8)
              *a = fmaf(fa, f, *a);
            else
              *a += f;
          }
        }
      }
    }
  }
  for (int row = 0; row < n_rows; row++)
    for (int t = 0; t < nt; t++) {
      float v[32], nv[32];
      memcpy(v, acc + ((size_t)row * nt + t) * 32, sizeof v);
      for (int o = 16; o > 0; o >>= 1) {
        for (int l = 0; l < 32; l++)
          nv[l] = v[l] + v[l ^ o];
        memcpy(v, nv, sizeof v);
      }
      y[(size_t)t * n_rows + row] = v[0];
    }
  free(acc);
  free(tile);
  free(sums);
  free(xs);
}

template <int T> static void check_mv(kt_rng *rng) {
  typedef dqc_traits<T> Tr;
  typedef dqc_mv_shape<T> S;
  const int n_rows = 3, nt = 3;
  /* two full steps and a partial one */
  const int64_t n_cols = (int64_t)(2 * S::G + S::G / 2 + 1) * Tr::BE;
  size_t row_bytes = 0;
  CHECK_OK(dq_type_row_bytes(T, n_cols, &row_bytes), "dq_type_row_bytes");
  uint8_t *w = aligned_bytes(row_bytes * n_rows);
  float *src = (float *)malloc((size_t)n_cols * sizeof(float));
  float *wf = (float *)malloc((size_t)n_cols * n_rows * sizeof(float));
  float *x = (float *)malloc((size_t)n_cols * nt * sizeof(float));
  float y[n_rows * nt];
  for (int r = 0; r < n_rows; r++) {
    kt_fill(rng, src, n_cols);
    CHECK_OK(dq_quantize_row(T, src, w + r * row_bytes, n_cols),
             "dq_quantize_row");
    CHECK_OK(dq_dequantize_row(T, w + r * row_bytes, wf + r * n_cols, n_cols),
             "dq_dequantize_row");
  }
  kt_fill(rng, x, n_cols * nt);
  emulate_mv<T>(w, row_bytes, n_rows, n_cols, x, nt, y);
  for (int t = 0; t < nt; t++)
    for (int r = 0; r < n_rows; r++) {
      double want = 0, mag = 0, grid = 0;
      for (int64_t i = 0; i < n_cols; i++) {
        want += (double)wf[r * n_cols + i] * x[t * n_cols + i];
        mag += fabs((double)wf[r * n_cols + i] * x[t * n_cols + i]);
      }
      /* The byte-to-float trick's error scales with the quant grid step
       * times |x| (quant.cuh): bound it by the row's largest |w| * sum|x|. */
      double wmax = 0, xabs = 0;
      for (int64_t i = 0; i < n_cols; i++) {
        wmax = fmax(wmax, fabs(wf[r * n_cols + i]));
        xabs += fabs(x[t * n_cols + i]);
      }
      grid = wmax * xabs;
      const double tol = 1e-5 * mag + 1e-6 * grid;
      CHECK_MSG(fabs(y[t * n_rows + r] - want) <= tol,
                "%s mat-vec emulation row %d token %d: %.9g vs %.9g (tol %.3g)",
                dq_type_name(T), r, t, (double)y[t * n_rows + r], want, tol);
    }
  free(x);
  free(wf);
  free(src);
  free(w);
}

/* ---- staged-activation layout
 * -------------------------------------------------- */

/* For one type: padded indices in bounds and distinct; LDS.128 of a
 * quarter-warp (8 lanes) hitting 8 different 16-byte bank groups, for the
 * staging stores (consecutive float4) and for every (piece, k) load of a
 * full step; the weight tile's 16-byte loads likewise (same address =
 * broadcast, allowed). */
template <int T> static void check_layout(void) {
  typedef dqc_traits<T> Tr;
  typedef dqc_mv_shape<T> S;
  const char *name = dq_type_name(T);
  CHECK_EQ_INT(S::G * Tr::UPB, 32);
  CHECK_EQ_INT(S::STEP_BYTES % 16, 0);
  CHECK(S::PITCH >= S::STEP_BYTES + 16 && S::PITCH % 16 == 0);
  CHECK_EQ_INT(S::XT % 4, 0);
  CHECK_EQ_INT(S::N_SUMS % 4, 0);
  CHECK_EQ_INT(Tr::BE % 16, 0);

  char *seen = (char *)calloc(S::XT, 1);
  int oob = 0, dup = 0;
  for (int e = 0; e < S::STEP_ELEMS; e++) {
    const int ix = dqc_mv_xidx(e, Tr::PERIOD);
    if (ix < 0 || ix >= S::XT)
      oob++;
    else if (seen[ix]++)
      dup++;
    if (e % 4 == 0 && ix % 4 != 0)
      oob++;
  }
  CHECK_MSG(oob == 0 && dup == 0,
            "%s: padded index out of bounds %d, duplicate %d", name, oob, dup);
  free(seen);

  int conflicts = 0;
  /* stores: chunk c by lane c % 32, quarter-warps of consecutive chunks */
  for (int c0 = 0; c0 < S::STEP_ELEMS / 4; c0 += 8) {
    int used = 0;
    for (int c = c0; c < c0 + 8; c++) {
      const int bank = (dqc_mv_xidx(4 * c, Tr::PERIOD) / 4) % 8;
      conflicts += (used >> bank) & 1;
      used |= 1 << bank;
    }
  }
  CHECK_MSG(conflicts == 0, "%s: %d bank conflicts staging x", name, conflicts);
  conflicts = 0;
  for (int p = 0; p < Tr::P; p++)
    for (int k = 0; k < 4; k++)
      for (int q0 = 0; q0 < 32; q0 += 8) {
        int used = 0;
        for (int lane = q0; lane < q0 + 8; lane++) {
          const int e = lane / Tr::UPB * Tr::BE +
                        Tr::piece_elem(lane % Tr::UPB, p) + 4 * k;
          const int bank = (dqc_mv_xidx(e, Tr::PERIOD) / 4) % 8;
          conflicts += (used >> bank) & 1;
          used |= 1 << bank;
        }
      }
  CHECK_MSG(conflicts == 0, "%s: %d bank conflicts reading staged x", name,
            conflicts);

  /* The weight tile's 16-byte loads, call by call, per quarter-warp. */
  uint8_t *tile = aligned_bytes(S::PITCH);
  rec_call calls[32][64];
  int n_calls[32];
  int bad_align = 0;
  for (int lane = 0; lane < 32; lane++) {
    long end = 0;
    n_calls[lane] = 0;
    check_rd rd{tile, &bad_align, &end, calls[lane], &n_calls[lane]};
    typename Tr::raw r;
    Tr::load(rd, tile + lane / Tr::UPB * Tr::BB, lane % Tr::UPB, r);
  }
  int max_ways = 1, max_ways16 = 1;
  for (int ci = 0; ci < n_calls[0]; ci++) {
    if (calls[0][ci].align == 16) {
      for (int v = 0; v < calls[0][ci].n_words / 4; v++)
        for (int q0 = 0; q0 < 32; q0 += 8) {
          long addrs[8];
          int ways[8] = {0};
          for (int lane = q0; lane < q0 + 8; lane++) {
            const long a = calls[lane][ci].off + 16 * v;
            int dup_addr = 0; /* same address: a broadcast, no conflict */
            for (int l2 = q0; l2 < lane; l2++)
              dup_addr |= addrs[l2 - q0] == a;
            addrs[lane - q0] = a;
            if (!dup_addr)
              ways[(a / 16) % 8]++;
          }
          for (int b = 0; b < 8; b++)
            max_ways16 = ways[b] > max_ways16 ? ways[b] : max_ways16;
        }
    } else if (calls[0][ci].align != 1) {
      /* 32-bit loads (a2 reads the aligned words around the field): the
       * ways of the worst bank, for the record. */
      const int n_w = calls[0][ci].n_words + (calls[0][ci].align == 2);
      for (int v = 0; v < n_w; v++) {
        long words[32];
        int ways[32] = {0};
        for (int lane = 0; lane < 32; lane++) {
          words[lane] = (calls[lane][ci].off & ~3L) / 4 + v;
          int dup_word = 0;
          for (int l2 = 0; l2 < lane; l2++)
            dup_word |= words[l2] == words[lane];
          if (!dup_word)
            ways[words[lane] % 32]++;
        }
        for (int b = 0; b < 32; b++)
          max_ways = ways[b] > max_ways ? ways[b] : max_ways;
      }
    }
  }
  /* Quantized weights must load conflict-free (Q4_K's 16-byte loads; the
   * 32-bit ones of the 2-byte aligned formats are up to 2-way). The float
   * formats' 16-byte loads are 2-way (F16/BF16) and 4-way (F32): accepted,
   * they move 3.5-7x fewer elements per byte than Q4_K (quant.cuh). */
  if (Tr::KIND == DQC_KIND_U || Tr::KIND == DQC_KIND_S8) {
    CHECK_MSG(max_ways16 == 1, "%s: 16-byte weight loads %d-way conflicted",
              name, max_ways16);
    CHECK_MSG(max_ways <= 2, "%s: 32-bit weight loads %d-way conflicted", name,
              max_ways);
  }
  printf(
      "  %-5s step %4d elems %4d bytes, smem/CTA (4 warps) NT=1 %6zu NT=8 "
      "%6zu, "
      "tile loads worst: 16-byte %d-way, 32-bit %d-way\n",
      name, (int)S::STEP_ELEMS, (int)S::STEP_BYTES,
      dqc_mv_smem(1, dqc_mv_rows(1, Tr::R_MAX), 4, S::XT, S::N_SUMS, S::PITCH),
      dqc_mv_smem(8, dqc_mv_rows(8, Tr::R_MAX), 4, S::XT, S::N_SUMS, S::PITCH),
      max_ways16, max_ways);
  /* Shared memory: the decode path (NT = 1) needs no opt-in above 48 KiB;
   * everything fits an H100/H200 CTA (227 KiB). */
  for (int nt = 1; nt <= 8; nt *= 2) {
    const size_t sm = dqc_mv_smem(nt, dqc_mv_rows(nt, Tr::R_MAX), 4, S::XT,
                                  S::N_SUMS, S::PITCH);
    CHECK_MSG(sm <= 227 * 1024, "%s NT=%d: %zu bytes of shared memory", name,
              nt, sm);
    if (nt == 1)
      CHECK_MSG(sm <= 48 * 1024, "%s NT=1: %zu bytes of shared memory", name,
                sm);
  }
  free(tile);
}

/* ---- weight staging
 * ------------------------------------------------------------------ */

/* dqc_stage_w run by the 32 lanes of a warp one after another (a lane
 * touches only its own words, so the order does not matter): rows of
 * every even length up to the step at every word size their alignment
 * allows, each source its own heap block that ends where the row does (so
 * ASan sees any read past it), the tile filled with a sentinel. Checks the
 * row's bytes arrived and nothing past them or between rows was written. */
template <int AL, int STEP> static void check_stage_al(kt_rng *rng) {
  constexpr int R = 4, PITCH = (STEP + 16 + 15) / 16 * 16;
  uint8_t *tile = aligned_bytes((size_t)R * PITCH);
  int n_bad = 0, n_cases = 0;
  for (int bytes = 2; bytes <= STEP; bytes += 2) {
    /* pieces end on an AL multiple in the kernel; other even lengths
     * exercise the 2-byte tail, every 7th to keep the test short */
    if (bytes % AL && bytes % 14)
      continue;
    n_cases++;
    uint8_t *blk[R];
    const uint8_t *src[R];
    for (int r = 0; r < R; r++) {
      /* 16 + AL bytes ahead: the row starts AL mod 16 (exactly AL-aligned) */
      const size_t lead = AL == 16 ? 16 : 16 + AL;
      void *p = NULL;
      if (posix_memalign(&p, 16, lead + bytes) != 0)
        abort();
      blk[r] = (uint8_t *)p;
      for (int i = 0; i < bytes; i++)
        blk[r][lead + i] = (uint8_t)kt_next(rng);
      src[r] = blk[r] + lead;
    }
    memset(tile, 0xA5, (size_t)R * PITCH);
    for (int lane = 0; lane < 32; lane++)
      dqc_stage_w<R, STEP, PITCH>(tile, src, bytes, AL, lane);
    for (int r = 0; r < R; r++) {
      if (memcmp(tile + r * PITCH, src[r], (size_t)bytes) != 0)
        n_bad++;
      for (int i = bytes; i < PITCH; i++)
        n_bad += tile[r * PITCH + i] != 0xA5;
      free(blk[r]);
    }
  }
  CHECK_MSG(n_bad == 0,
            "staging %d-byte words, step %d: %d rows or bytes wrong", AL,
            STEP, n_bad);
  CHECK(n_cases > 0);
  free(tile);
}

static void test_staging(kt_rng *rng) {
  /* the word size from addresses and row sizes */
  CHECK_EQ_INT(dqc_w_align(0x1000, 360, 0), 8);    /* 576 Q4_1 columns */
  CHECK_EQ_INT(dqc_w_align(0x1000, 680, 0), 8);    /* 640 Q8_0 columns */
  CHECK_EQ_INT(dqc_w_align(0x1000, 324, 0), 4);    /* 576 Q4_0 columns */
  CHECK_EQ_INT(dqc_w_align(0x1000, 960, 0), 16);   /* 1536 Q4_1 columns */
  CHECK_EQ_INT(dqc_w_align(0x1002, 960, 0), 2);    /* base offset */
  CHECK_EQ_INT(dqc_w_align(0x1000, 960, 4200), 8); /* expert stride */
  CHECK_EQ_INT(dqc_w_align(0, 0, 0), 16);
  /* every type's step (a multiple of 16: words never straddle steps) */
  CHECK_EQ_INT(dqc_mv_shape<DQ_TYPE_Q4_1>::STEP_BYTES % 16, 0);
  CHECK_EQ_INT(dqc_mv_shape<DQ_TYPE_Q8_0>::STEP_BYTES % 16, 0);
  CHECK_EQ_INT(dqc_mv_shape<DQ_TYPE_Q5_0>::STEP_BYTES % 16, 0);
  CHECK_EQ_INT(dqc_mv_shape<DQ_TYPE_Q6_K>::STEP_BYTES % 16, 0);
  CHECK_EQ_INT(dqc_mv_shape<DQ_TYPE_Q4_K>::STEP_BYTES % 16, 0);
  /* Q4_1's 640-byte step and Q6_K's 1680 (full steps: 2 to 7 words per
   * lane), every length below them (partial steps) */
  check_stage_al<16, 640>(rng);
  check_stage_al<8, 640>(rng);
  check_stage_al<4, 640>(rng);
  check_stage_al<2, 640>(rng);
  check_stage_al<16, 1680>(rng);
  check_stage_al<8, 1680>(rng);
  check_stage_al<4, 1680>(rng);
  check_stage_al<2, 1680>(rng);
}

/* ---- planning
 * ----------------------------------------------------------------------- */

static void test_planning(void) {
  for (int n = 1; n <= DQC_MV_MAX_TOK; n++) {
    const int t = dqc_mv_tier(n);
    CHECK(t >= n && (t == 1 || t == 2 || t == 4 || t == 8) && t < 2 * n);
  }
  CHECK_EQ_INT(dqc_mv_rows(1, 4), 4);
  CHECK_EQ_INT(dqc_mv_rows(8, 4), 2);
  CHECK_EQ_INT(dqc_mv_rows(1, 2), 2);
  /* H200: 132 SMs. ffn (14336 rows) -> 4 warps; attn_k (1024) -> 1. */
  CHECK_EQ_INT(dqc_mv_warps(14336, 4, 132), 4);
  CHECK_EQ_INT(dqc_mv_warps(4096, 4, 132), 2);
  CHECK_EQ_INT(dqc_mv_warps(1024, 4, 132), 1);
  CHECK_EQ_INT(dqc_mv_warps(1, 4, 132), 1);
  for (int64_t rows = 1; rows < 100000; rows = rows * 3 + 1) {
    const int wv = dqc_mv_warps(rows, 4, 132);
    CHECK(wv == 1 || (rows + 4 * wv - 1) / (4 * wv) >= 264);
  }

  const size_t budget = (size_t)64 << 20;
  CHECK_EQ_INT(dqc_gemm_tile_rows(4096, 4096, budget), 4096); /* 32 MiB fits */
  CHECK_EQ_INT(dqc_gemm_tile_rows(128256, 4096, budget),
               8192); /* vocab: 16 tiles */
  CHECK_EQ_INT(dqc_gemm_tile_rows(14336, 4096, budget), 8192);
  CHECK_EQ_INT(dqc_gemm_tile_rows(1000, (int64_t)1 << 26, budget),
               1); /* huge row */
  const int64_t shapes[][2] = {{1, 32},        {4096, 14336}, {128256, 4096},
                               {151936, 3584}, {300, 262144}, {5, 1 << 25},
                               {100000, 6144}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const int64_t n_rows = shapes[i][0], n_cols = shapes[i][1];
    const int64_t tr = dqc_gemm_tile_rows(n_rows, n_cols, budget);
    CHECK(tr >= 1 && tr <= n_rows);
    if (tr < n_rows && (size_t)n_cols * 2 <= budget) {
      CHECK((size_t)tr * (size_t)n_cols * 2 <= budget);
      CHECK(tr < 128 || tr % 128 == 0);
    }
    int64_t covered = 0, n_tiles = 0;
    for (int64_t r0 = 0; r0 < n_rows; r0 += tr) {
      covered += n_rows - r0 < tr ? n_rows - r0 : tr;
      n_tiles++;
    }
    CHECK_EQ_INT(covered, n_rows);
    CHECK(n_tiles == (n_rows + tr - 1) / tr);
  }
}

/* ---- on a GPU: the kernels against the reference --------------------------
 */

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    CHECK_MSG(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));     \
  } while (0)

/* Worst error allowed for y = W x (one output) when the kernel multiplies
 * in f32 (mat-vec path) or with F16/BF16 operands (cuBLAS path). `mag` is
 * sum |w x|, `grid` is max|w| * sum|x| (the byte trick's scale). */
static double gpu_tol(int type, int gemm, double mag, double grid) {
  if (!gemm)
    return 2e-5 * mag + 2e-6 * grid;
  /* x and (dequantized) weights rounded to 11 (F16) or 8 (BF16) bits */
  return (type == DQ_TYPE_BF16 ? 1.6e-2 : 2e-3) * mag + 1e-6 * grid;
}

struct gpu_ctx {
  dq_cu_mm *mm;
  cudaStream_t stream;
};

/* Random weights of `type` (rows row_bytes apart: pad extra bytes) and
 * their dequantized floats, the reference the outputs are checked against
 * (in double, by gpu_compare). */
struct gpu_case {
  int type;
  int64_t n_rows, n_cols;
  size_t row_bytes;
  uint8_t *w;
  float *wf;
};

static int gpu_case_make(kt_rng *rng, gpu_case *c, int type, int64_t n_rows,
                         int64_t n_cols, size_t pad) {
  size_t rb = 0;
  if (dq_type_row_bytes(type, n_cols, &rb) != DQ_OK)
    return 0;
  c->type = type;
  c->n_rows = n_rows;
  c->n_cols = n_cols;
  c->row_bytes = rb + pad;
  c->w = aligned_bytes(c->row_bytes * (size_t)n_rows);
  c->wf = (float *)malloc((size_t)(n_rows * n_cols) * sizeof(float));
  float *src = (float *)malloc((size_t)n_cols * sizeof(float));
  for (int64_t r = 0; r < n_rows; r++) {
    kt_fill(rng, src, n_cols);
    CHECK_OK(dq_quantize_row(type, src, c->w + r * c->row_bytes, n_cols),
             "quantize");
    CHECK_OK(dq_dequantize_row(type, c->w + r * c->row_bytes,
                               c->wf + r * n_cols, n_cols),
             "dequantize");
  }
  free(src);
  return 1;
}

static void gpu_case_free(gpu_case *c) {
  free(c->w);
  free(c->wf);
}

/* Compares y (rows of n_rows) with W_e x_t for each output. */
static int gpu_compare(const char *what, const gpu_case *c, const float *wf,
                       const float *x, int n_out, const int *x_of,
                       const float *y, int gemm) {
  int n_bad = 0;
  for (int t = 0; t < n_out; t++) {
    const float *xt = x + (size_t)x_of[t] * c->n_cols;
    for (int64_t r = 0; r < c->n_rows; r++) {
      const float *wr = wf + r * c->n_cols;
      double want = 0, mag = 0, wmax = 0, xabs = 0;
      for (int64_t i = 0; i < c->n_cols; i++) {
        want += (double)wr[i] * xt[i];
        mag += fabs((double)wr[i] * xt[i]);
        wmax = fmax(wmax, fabs(wr[i]));
        xabs += fabs(xt[i]);
      }
      const double got = y[(size_t)t * c->n_rows + r];
      if (!(fabs(got - want) <= gpu_tol(c->type, gemm, mag, wmax * xabs))) {
        if (n_bad++ == 0)
          fprintf(stderr, "%s %s %lldx%lld: out %d row %lld: %.9g vs %.9g\n",
                  what, dq_type_name(c->type), (long long)c->n_rows,
                  (long long)c->n_cols, t, (long long)r, got, want);
      }
    }
  }
  return n_bad;
}

/* dq_cu_matmul on one case; `offset` shifts the device weights by bytes
 * (with pad, the 2-byte staging path); x random times xscale, and one
 * element `outlier` when that is not 0. */
static void gpu_matmul(kt_rng *rng, gpu_ctx *g, const gpu_case *c, int n_tok,
                       size_t offset, float xscale = 1.0f,
                       float outlier = 0.0f) {
  const size_t w_bytes = c->row_bytes * (size_t)c->n_rows;
  float *x = (float *)malloc((size_t)n_tok * c->n_cols * sizeof(float));
  float *y = (float *)malloc((size_t)n_tok * c->n_rows * sizeof(float));
  int *x_of = (int *)malloc((size_t)n_tok * sizeof(int));
  kt_fill(rng, x, (int64_t)n_tok * c->n_cols);
  for (int64_t i = 0; i < (int64_t)n_tok * c->n_cols; i++)
    x[i] *= xscale;
  if (outlier != 0.0f)
    x[(int64_t)(n_tok / 2) * c->n_cols + c->n_cols / 3] = outlier;
  for (int t = 0; t < n_tok; t++)
    x_of[t] = t;
  uint8_t *dw = NULL;
  float *dx = NULL, *dy = NULL;
  CUDA_OK(cudaMalloc((void **)&dw, w_bytes + offset));
  CUDA_OK(cudaMalloc((void **)&dx, (size_t)n_tok * c->n_cols * sizeof(float)));
  CUDA_OK(cudaMalloc((void **)&dy, (size_t)n_tok * c->n_rows * sizeof(float)));
  CUDA_OK(cudaMemcpy(dw + offset, c->w, w_bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dx, x, (size_t)n_tok * c->n_cols * sizeof(float),
                     cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dy, 0xff,
                     (size_t)n_tok * c->n_rows * sizeof(float))); /* NaN */
  const int rc = dq_cu_matmul(g->mm, c->type, dw + offset, c->row_bytes,
                              c->n_rows, c->n_cols, dx, n_tok, dy);
  CHECK_MSG(rc == 0, "dq_cu_matmul %s: %s at %s", dq_type_name(c->type),
            dq_cu_err_str(rc), dq_cu_mm_last_step(g->mm));
  CUDA_OK(cudaStreamSynchronize(g->stream));
  CUDA_OK(cudaMemcpy(y, dy, (size_t)n_tok * c->n_rows * sizeof(float),
                     cudaMemcpyDeviceToHost));
  const int gemm = n_tok > DQC_MV_MAX_TOK ||
                   ((c->type == DQ_TYPE_F32 || c->type == DQ_TYPE_F16 ||
                     c->type == DQ_TYPE_BF16) &&
                    c->n_cols % 16 != 0);
  const int n_bad = gpu_compare("matmul", c, c->wf, x, n_tok, x_of, y, gemm);
  CHECK_MSG(n_bad == 0,
            "dq_cu_matmul %s %lldx%lld row_bytes %zu n_tok %d offset %zu: %d "
            "outputs off",
            dq_type_name(c->type), (long long)c->n_rows, (long long)c->n_cols,
            c->row_bytes, n_tok, offset, n_bad);
  cudaFree(dw);
  cudaFree(dx);
  cudaFree(dy);
  free(x_of);
  free(y);
  free(x);
}

/* dq_cu_matvec_ids: n_exp experts of one case's shape stored `gap` bytes
 * apart beyond their size (stride 0 when gap < 0: packed); n_expert given
 * when `grouped` (then more than 8 pairs, at least 2 per expert, take the
 * grouped path), else 0 (one pair a CTA). */
static void gpu_ids(kt_rng *rng, gpu_ctx *g, int type, int64_t n_rows,
                    int64_t n_cols, int n_pairs, int x_div, long gap,
                    int grouped = 0) {
  enum { N_EXP = 3 };
  gpu_case e[N_EXP];
  for (int i = 0; i < N_EXP; i++)
    if (!gpu_case_make(rng, &e[i], type, n_rows, n_cols, 0))
      return;
  const size_t mat = e[0].row_bytes * (size_t)n_rows;
  const size_t stride = gap < 0 ? 0 : mat + (size_t)gap;
  const size_t step = stride ? stride : mat;
  const int n_x = (n_pairs - 1) / x_div + 1;
  float *x = (float *)malloc((size_t)n_x * n_cols * sizeof(float));
  float *y = (float *)malloc((size_t)n_pairs * n_rows * sizeof(float));
  int32_t *ids = (int32_t *)malloc((size_t)n_pairs * sizeof(int32_t));
  kt_fill(rng, x, (int64_t)n_x * n_cols);
  for (int p = 0; p < n_pairs; p++)
    ids[p] = (int32_t)(kt_next(rng) % N_EXP);
  uint8_t *dw = NULL;
  float *dx = NULL, *dy = NULL;
  int32_t *dids = NULL;
  CUDA_OK(cudaMalloc((void **)&dw, step * N_EXP));
  CUDA_OK(cudaMalloc((void **)&dx, (size_t)n_x * n_cols * sizeof(float)));
  CUDA_OK(cudaMalloc((void **)&dy, (size_t)n_pairs * n_rows * sizeof(float)));
  CUDA_OK(cudaMalloc((void **)&dids, (size_t)n_pairs * sizeof(int32_t)));
  for (int i = 0; i < N_EXP; i++)
    CUDA_OK(cudaMemcpy(dw + i * step, e[i].w, mat, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dx, x, (size_t)n_x * n_cols * sizeof(float),
                     cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dids, ids, (size_t)n_pairs * sizeof(int32_t),
                     cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dy, 0xff, (size_t)n_pairs * n_rows * sizeof(float)));
  const int rc =
      dq_cu_matvec_ids(g->mm, type, dw, e[0].row_bytes, n_rows, n_cols, stride,
                       dids, n_pairs, grouped ? N_EXP : 0, dx, x_div, dy);
  CHECK_MSG(rc == 0, "dq_cu_matvec_ids %s: %s at %s", dq_type_name(type),
            dq_cu_err_str(rc), dq_cu_mm_last_step(g->mm));
  CUDA_OK(cudaStreamSynchronize(g->stream));
  CUDA_OK(cudaMemcpy(y, dy, (size_t)n_pairs * n_rows * sizeof(float),
                     cudaMemcpyDeviceToHost));
  int n_bad = 0;
  for (int p = 0; p < n_pairs; p++) {
    const int x_of = p / x_div;
    n_bad += gpu_compare("matvec_ids", &e[ids[p]], e[ids[p]].wf, x, 1, &x_of,
                         y + (size_t)p * n_rows, 0);
  }
  CHECK_MSG(n_bad == 0,
            "dq_cu_matvec_ids %s %lldx%lld pairs %d x_div %d%s: %d outputs off",
            dq_type_name(type), (long long)n_rows, (long long)n_cols, n_pairs,
            x_div, grouped ? " grouped" : "", n_bad);
  cudaFree(dw);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dids);
  free(ids);
  free(y);
  free(x);
  for (int i = 0; i < N_EXP; i++)
    gpu_case_free(&e[i]);
}

static void test_gpu(kt_rng *rng) {
  int n_dev = 0;
  const cudaError_t e = cudaGetDeviceCount(&n_dev);
  if (e != cudaSuccess || n_dev == 0) {
    (void)cudaGetLastError();
    printf("GPU checks skipped: %s\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return;
  }
  gpu_ctx g = {NULL, NULL};
  CUDA_OK(cudaStreamCreate(&g.stream));
  const int rc = dq_cu_mm_new(g.stream, &g.mm);
  CHECK_MSG(rc == 0, "dq_cu_mm_new: %s", dq_cu_err_str(rc));
  if (rc)
    return;
  static const int toks[] = {1, 2, 3, 5, 8, 9, 33};
  for (int ti = 0; ti < KT_N_WEIGHT_TYPES; ti++) {
    const int type = kt_weight_types[ti];
    const int be = type == DQ_TYPE_Q4_K || type == DQ_TYPE_Q6_K ? 256 : 32;
    /* two full steps of the widest step (2048) plus a partial one; and a
     * row that is a single block */
    /* ...; and the default models' 576 and 640 (Gemma 3: Q5_0 rows of
     * 440 bytes, Q8_0 of 680: 8-byte aligned) */
    const int64_t shapes[][2] = {
        {37, 2048 * 2 + 3 * be}, {5, be}, {300, 4096}, {33, 640}, {21, 576}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
      for (int ai = 0; ai < 4; ai++) {
        gpu_case c;
        /* rows padded and the base offset by 8, 4 or 2 bytes: the staging's
         * 8-, 4- and 2-byte words (F32 rows stay 4-byte aligned) */
        static const size_t pads[] = {0, 8, 4, 2};
        const size_t pad = pads[ai];
        if (type == DQ_TYPE_F32 && pad == 2)
          continue;
        if (!gpu_case_make(rng, &c, type, shapes[si][0], shapes[si][1], pad))
          continue;
        for (size_t k = 0; k < sizeof toks / sizeof toks[0]; k++)
          if (shapes[si][0] * shapes[si][1] * toks[k] <= 300 * 4096 * 9 ||
              toks[k] <= 8)
            gpu_matmul(rng, &g, &c, toks[k], pad);
        gpu_case_free(&c);
      }
    /* float weights with n_cols % 16 != 0 take cuBLAS at any n_tok */
    if (type == DQ_TYPE_F32 || type == DQ_TYPE_F16 || type == DQ_TYPE_BF16) {
      gpu_case c;
      if (gpu_case_make(rng, &c, type, 9, 72, 0)) {
        gpu_matmul(rng, &g, &c, 1, 0);
        gpu_matmul(rng, &g, &c, 4, 0);
        gpu_case_free(&c);
      }
    }
    gpu_ids(rng, &g, type, 67, 2048 + be, 7, 2, -1);
    gpu_ids(rng, &g, type, 9, 4096, 5, 1, 16);
    /* grouped by expert (prefill): full and partial groups of 8, the
     * gate/up (x_div 2) and down (1) forms */
    gpu_ids(rng, &g, type, 67, 2048 + be, 50, 2, -1, 1);
    gpu_ids(rng, &g, type, 9, 1024, 29, 1, 16, 1);
  }
  /* activations past F16's 65504 (reported for larger Gemmas): the cuBLAS
   * path scales x by a power of two (x up to ~2e7: 2^-9; one outlier of
   * 4e6 among kt_fill's values: 2^-6; one of -7e4: 2^-1) and multiplies
   * it back in alpha; clamped, these were off by up to the whole output */
  static const int big_x_types[] = {DQ_TYPE_F16, DQ_TYPE_Q4_K, DQ_TYPE_Q8_0};
  for (int type : big_x_types) {
    gpu_case c;
    if (gpu_case_make(rng, &c, type, 40, 512, 0)) {
      gpu_matmul(rng, &g, &c, 9, 0, 3e5f);
      gpu_matmul(rng, &g, &c, 33, 0, 1.0f, 4e6f);
      gpu_matmul(rng, &g, &c, 9, 0, 1.0f, -7e4f); /* just past, negative */
      gpu_case_free(&c);
    }
  }
  /* several GEMM tiles: 8300 x 4096 F16 tiles are 68 MB > 64 MiB */
  gpu_case big;
  if (gpu_case_make(rng, &big, DQ_TYPE_Q4_0, 8300, 4096, 0)) {
    gpu_matmul(rng, &g, &big, 9, 0);
    gpu_case_free(&big);
  }
  dq_cu_mm_free(g.mm);
  CUDA_OK(cudaStreamDestroy(g.stream));
  printf("GPU checks ran on %d device(s)\n", n_dev);
}

template <int T> static void check_all(kt_rng *rng) {
  check_type<T>(rng);
  check_mv<T>(rng);
  check_layout<T>();
}

int main(void) {
  kt_rng rng = {0x5eed0cdau};
  test_halves();
  test_permutes(&rng);
  printf("mat-vec steps per type:\n");
  check_all<DQ_TYPE_F32>(&rng);
  check_all<DQ_TYPE_F16>(&rng);
  check_all<DQ_TYPE_BF16>(&rng);
  check_all<DQ_TYPE_Q4_0>(&rng);
  check_all<DQ_TYPE_Q4_1>(&rng);
  check_all<DQ_TYPE_Q5_0>(&rng);
  check_all<DQ_TYPE_Q5_1>(&rng);
  check_all<DQ_TYPE_Q8_0>(&rng);
  check_all<DQ_TYPE_Q4_K>(&rng);
  check_all<DQ_TYPE_Q6_K>(&rng);
  test_staging(&rng);
  test_planning();
  test_gpu(&rng);
  fflush(stdout);
  return TEST_EXIT();
}
