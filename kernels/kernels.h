/*
 * kernels.h - the public interface of the compute-kernel layer: CPU kernels
 * (kernels/cpu, C with run-time SIMD dispatch and threads) and CUDA kernels
 * (kernels/cuda, compiled whenever nvcc is present).
 *
 * Kernels know tensors only as typed pointers and sizes; model structure
 * lives in engine/. Every kernel has a plain C reference that is its
 * specification (see kernels/cpu).
 */
#ifndef DQ_KERNELS_H
#define DQ_KERNELS_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CUDA presence ----------------------------------------------------- */

/* What the CUDA side of this build can do, filled by dq_cuda_probe().
 * `built` is 0 when docqa was compiled without nvcc; then every other field
 * is zero/empty. With CUDA built in, n_devices may still be 0 (no GPU or no
 * driver); `error` then says why. */
typedef struct dq_cuda_info {
  int built;
  int runtime_version; /* e.g. 13000 for CUDA 13.0 */
  int driver_version;  /* 0 when no driver is installed */
  int cublas_version;  /* cublasGetVersion at build time's library */
  int n_devices;
  char device_name[256]; /* device 0 */
  int cc_major, cc_minor;
  size_t total_mem_bytes;
  char error[256];
} dq_cuda_info;

/* Probes CUDA at run time; never fails (problems are reported in info->error).
 * Safe to call on machines without a GPU or driver. */
void dq_cuda_probe(dq_cuda_info *info);


/* ==== operation descriptors ============================================= */

/* What one backend op is asked to do, shared by the engine's backend
 * interface (engine/backend.h) and the CUDA kernels (cuda/cuda_ops.h), so
 * both read one definition. */

/* RoPE parameters for one layer. */
typedef struct dq_rope_params {
  int n_rot;          /* rotated dims per head (<= head_dim, even) */
  int neox;           /* 1: pairs (i, i + n_rot/2); 0: pairs (2i, 2i+1) */
  float base;         /* frequency base */
  float freq_scale;   /* 1 / linear scale factor */
  float ext_factor;   /* YaRN: 0 = off */
  float attn_factor;  /* YaRN magnitude scale (1 = none) */
  float corr_low, corr_high; /* YaRN correction dims */
} dq_rope_params;

/* KV / activation storage types understood by kv_store and attention.
 * An F16 cache keeps its keys in panels of 16 positions (DQ_STORE_F16P:
 * element i of row r at halves ((r / 16) * row_elems + i) * 16 + r % 16,
 * the buffer holding a multiple of 16 rows), the layout the attention
 * kernel reads directly, and its values in rows; kv_store writes keys with
 * DQ_STORE_F16P, attention is told DQ_STORE_F16 for the pair. */
enum { DQ_STORE_F32 = 0, DQ_STORE_F16 = 1, DQ_STORE_F16P = 2, DQ_STORE_Q8_0 = 8 };

/* One attention call over a layer's cache. Queries q are n_tok rows of
 * n_head*head_dim floats at positions pos0..pos0+n_tok-1. Keys/values are
 * rows 0..n_kv-1 of the caches (n_head_kv*head_dim elements of `store` type
 * per row). causal: query at position p sees keys j <= p; window > 0 also
 * hides keys with p - j >= window. Grouped-query: query head h reads KV head
 * h / (n_head / n_head_kv). */
typedef struct dq_attn {
  const float *q;
  const void *k, *v;
  int store;
  int n_tok, pos0, n_kv;
  int n_head, n_head_kv, head_dim;
  int causal, window;
  float scale;
  float *out;          /* n_tok rows of n_head*head_dim */
  float *stats;        /* optional: n_head rows of stats_stride floats */
  int stats_stride;
  int stats_q0, stats_q1; /* query positions counted in stats */
  /* optional: qmass[h * qmass_stride + t] += the mass query t (of this
   * call, 0..n_tok-1) of head h gives the keys it sees among rows
   * [qmass_lo, qmass_hi) (coarse recall: each token's attention to the
   * pinned question) */
  float *qmass;
  int qmass_stride;
  int qmass_lo, qmass_hi;
  /* optional: n_kv per-key log weights added to the scaled scores
   * (logit = q.k scale + bias[k]; GSM's merged slots weigh in by the log
   * of the tokens they stand for), in the backend's memory */
  const float *bias;
  /* optional device scratch lent by the backend: the CUDA kernel's
   * split-key workspace when ws_bytes is at least dq_cu_attn_ws_bytes
   * (cuda_ops.h), else it takes one from the memory pool; the CPU
   * ignores it */
  void *ws;
  size_t ws_bytes;
} dq_attn;

/* Mixture-of-experts routing of one layer (DESIGN: MoE and early exit).
 * Per token: scores p = softmax(router logits) or sigmoid(each logit);
 * selection scores sel = p + bias (bias: DeepSeek-V3's exp_probs_b, or
 * none); with n_group > 1 the experts form n_group equal groups, each
 * scored by the sum of its two best sel, and only the n_group_used best
 * groups stay eligible (two-level routing); the n_used best eligible sel
 * are chosen (ties: lower expert id), their weights are p (not sel),
 * renormalised to sum 1 when norm, then multiplied by scale. */
enum { DQ_MOE_SOFTMAX = 1, DQ_MOE_SIGMOID = 2 };
typedef struct dq_moe_cfg {
  int n_expert, n_used;
  int gating;                /* DQ_MOE_SOFTMAX / DQ_MOE_SIGMOID */
  int norm;                  /* renormalise the chosen weights */
  float scale;               /* routed scaling factor (1 = none) */
  int n_group, n_group_used; /* two-level routing when n_group > 1 */
} dq_moe_cfg;

/* ==== CPU kernels (kernels/cpu) ========================================== */
/*
 * Element types. The numeric values are GGML's (ggml_type), so a GGUF tensor
 * info's type id maps directly; ids not listed here are unsupported
 * (dq_type_info() returns NULL for them).
 *
 * Quantized types store blocks of `block_elems` consecutive elements of one
 * row; a row of n elements is n / block_elems blocks (n must be a multiple).
 * Byte layouts (little-endian, packed, identical to GGML's):
 *
 *   Q4_0  (32 elems, 18 B) f16 d; u8 qs[16]
 *         x[j] = ((qs[j] & 15) - 8) * d, x[j+16] = ((qs[j] >> 4) - 8) * d
 *   Q4_1  (32, 20 B) f16 d, m; u8 qs[16]; x = nibble * d + m (same order)
 *   Q5_0  (32, 22 B) f16 d; u8 qh[4]; u8 qs[16]; h = le32(qh)
 *         x[j]    = ((qs[j] & 15 | bit(h, j)    << 4) - 16) * d
 *         x[j+16] = ((qs[j] >> 4 | bit(h, j+16) << 4) - 16) * d
 *   Q5_1  (32, 24 B) f16 d, m; u8 qh[4]; u8 qs[16]; x = q5 * d + m
 *   Q8_0  (32, 34 B) f16 d; i8 qs[32]; x = qs * d
 *   Q8_1  (32, 36 B) f16 d, s; i8 qs[32]; x = qs * d, s = d * sum(qs)
 *         (activation format for Q4_1 / Q5_1 weights)
 *   Q4_K  (256, 144 B) f16 d, dmin; u8 scales[12]; u8 qs[128]
 *         8 sub-blocks of 32 with 6-bit scale sc[i] and min mn[i]:
 *         i < 4: sc = scales[i] & 63, mn = scales[i+4] & 63
 *         i >= 4: sc = scales[i+4] & 15 | (scales[i-4] >> 6) << 4,
 *                 mn = scales[i+4] >> 4 | (scales[i] >> 6) << 4
 *         elements 64c+l (l < 32) use low nibbles of qs[32c+l], sub-block 2c;
 *         elements 64c+32+l use the high nibbles, sub-block 2c+1;
 *         x = d * sc * q - dmin * mn
 *   Q6_K  (256, 210 B) u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d
 *         per half h (128 elems; ql += 64h, qh += 32h, scales += 8h), l < 32:
 *         q(l)    = ql[l] & 15    | (qh[l] >> 0 & 3) << 4, scale[l/16]
 *         q(l+32) = ql[l+32] & 15 | (qh[l] >> 2 & 3) << 4, scale[l/16 + 2]
 *         q(l+64) = ql[l] >> 4    | (qh[l] >> 4 & 3) << 4, scale[l/16 + 4]
 *         q(l+96) = ql[l+32] >> 4 | (qh[l] >> 6 & 3) << 4, scale[l/16 + 6]
 *         x = d * scale * (q - 32)
 *   Q8_K  (256, 292 B) f32 d; i8 qs[256]; i16 bsums[16] (sum of each 16 qs)
 *         activation format for K-quants; never stored in files.
 */
typedef enum dq_type {
  DQ_TYPE_F32 = 0,
  DQ_TYPE_F16 = 1,
  DQ_TYPE_Q4_0 = 2,
  DQ_TYPE_Q4_1 = 3,
  DQ_TYPE_Q5_0 = 6,
  DQ_TYPE_Q5_1 = 7,
  DQ_TYPE_Q8_0 = 8,
  DQ_TYPE_Q8_1 = 9,
  DQ_TYPE_Q4_K = 12,
  DQ_TYPE_Q6_K = 14,
  DQ_TYPE_Q8_K = 15,
  DQ_TYPE_BF16 = 30,
} dq_type;
#define DQ_TYPE_ID_MAX 31 /* every type id is < this */

#define DQ_QK 32    /* elements per block of the 32-element formats */
#define DQ_QK_K 256 /* elements per K-quant super-block */

typedef uint16_t dq_f16;  /* IEEE binary16 bits */
typedef uint16_t dq_bf16; /* bfloat16 bits (top half of an f32) */

typedef struct { dq_f16 d; uint8_t qs[DQ_QK / 2]; } dq_block_q4_0;
typedef struct { dq_f16 d, m; uint8_t qs[DQ_QK / 2]; } dq_block_q4_1;
typedef struct { dq_f16 d; uint8_t qh[4]; uint8_t qs[DQ_QK / 2]; } dq_block_q5_0;
typedef struct { dq_f16 d, m; uint8_t qh[4]; uint8_t qs[DQ_QK / 2]; } dq_block_q5_1;
typedef struct { dq_f16 d; int8_t qs[DQ_QK]; } dq_block_q8_0;
typedef struct { dq_f16 d, s; int8_t qs[DQ_QK]; } dq_block_q8_1;
typedef struct {
  dq_f16 d, dmin;
  uint8_t scales[12];
  uint8_t qs[DQ_QK_K / 2];
} dq_block_q4_k;
typedef struct {
  uint8_t ql[DQ_QK_K / 2];
  uint8_t qh[DQ_QK_K / 4];
  int8_t scales[DQ_QK_K / 16];
  dq_f16 d;
} dq_block_q6_k;
typedef struct {
  float d;
  int8_t qs[DQ_QK_K];
  int16_t bsums[DQ_QK_K / 16];
} dq_block_q8_k;

/* Static description of a type. `vec_dot_type` is the format activations
 * must be in for dq_vec_dot() against weights of this type (F32 for
 * F32/F16/BF16 weights, Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for
 * Q4_K/Q6_K); `is_weight` is 1 when the type may be a matmul weight. */
typedef struct dq_type_info {
  const char *name; /* "Q4_K" */
  int block_elems;
  int block_bytes;
  dq_type vec_dot_type;
  int is_weight;
} dq_type_info;

/* Description of type id `type`, or NULL when docqa does not support it.
 * Points to static storage. */
const dq_type_info *dq_type_get(int type);
/* "Q4_K"; "unknown" for unsupported ids. Static string. */
const char *dq_type_name(int type);
/* Bytes of a row of n elements of `type`: DQ_ERR_UNSUPPORTED for unknown
 * types, DQ_ERR_ARG when n < 0 or n is not a multiple of the block size,
 * DQ_ERR_LIMIT when the size overflows. */
dq_status dq_type_row_bytes(int type, int64_t n, size_t *out_bytes);

/* ---- half-precision conversion (exact IEEE; round to nearest even) ---- */
float dq_f16_to_f32(dq_f16 h);
dq_f16 dq_f32_to_f16(float f);
float dq_bf16_to_f32(dq_bf16 h);
dq_bf16 dq_f32_to_bf16(float f); /* NaN stays NaN (quiet) */
struct dq_cpu_caps;
/* y[i] = x[i] as f32 for a row of n halves: F16C when caps (may be NULL:
 * scalar) allow, else the scalar conversion; the same values either way
 * (the conversion is exact). */
void dq_f16_to_f32_row(const struct dq_cpu_caps *caps, const dq_f16 *x,
                       float *y, int64_t n);

/* ---- ISA probe --------------------------------------------------------- */
/* Code paths, lowest to highest. AVX2 means AVX2 + FMA + F16C; AVX512 means
 * AVX-512 F/BW/VL/DQ (plus VNNI/BF16 when their flags are set). */
typedef enum dq_isa {
  DQ_ISA_SCALAR = 0,
  DQ_ISA_AVX2 = 1,
  DQ_ISA_AVX512 = 2,
} dq_isa;

/* Feature bits: set only when CPUID+XGETBV report the feature AND a test
 * instruction of it ran without SIGILL. */
#define DQ_CPU_AVX2 (1u << 0)        /* avx2 + fma + f16c */
#define DQ_CPU_AVX512 (1u << 1)      /* avx512 f, bw, vl, dq */
#define DQ_CPU_AVX512_VNNI (1u << 2) /* vpdpbusd */
#define DQ_CPU_AVX512_BF16 (1u << 3) /* vdpbf16ps */
#define DQ_CPU_AVX_VNNI (1u << 4)    /* vex-encoded vpdpbusd */
#define DQ_CPU_AMX (1u << 5)         /* amx tile + int8 (executed, not only CPUID) */

/* The result of probing: a value, stored by the caller in its own handle and
 * passed to every kernel call (no global state). */
typedef struct dq_cpu_caps {
  dq_isa isa;          /* path the kernels take: best working, capped by env */
  unsigned flags;      /* DQ_CPU_* that work on this machine */
  unsigned cpuid_flags;/* DQ_CPU_* that CPUID claims (may include broken ones) */
  char desc[96];       /* e.g. "avx512 (avx512 vnni bf16; cpuid also: amx)" */
} dq_cpu_caps;

/* Probes the CPU: CPUID, XGETBV (OS enabled the register state), then runs
 * one instruction of each candidate ISA under a temporary SIGILL handler
 * (sigsetjmp/siglongjmp; the previous handler is restored). Call once at
 * start-up, before starting threads. DOCQA_CPU_ISA=scalar|avx2|avx512 caps
 * the chosen path (a higher value than the machine has is ignored). */
dq_cpu_caps dq_cpu_probe(void);
/* `caps` with its path set to the lower of `max` and the best path that
 * works (ignores DOCQA_CPU_ISA; for tests and benchmarks). */
dq_cpu_caps dq_cpu_caps_limit(dq_cpu_caps caps, dq_isa max);
const char *dq_isa_name(dq_isa isa); /* "scalar", "avx2", "avx512" */

/* ---- rows: quantize, dequantize, dot ----------------------------------- */
/* Quantizes n floats into `type` rows (n a multiple of the block size):
 * activation formats Q8_0/Q8_1/Q8_K, and for tests and tools the weight
 * formats F32/F16/BF16/Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K/Q6_K (simple
 * round-to-nearest with per-block absmax or min/max; not llama.cpp's
 * error-minimising search). `y` holds dq_type_row_bytes(type, n) bytes.
 * DQ_ERR_ARG on a bad n, DQ_ERR_UNSUPPORTED for other types. */
dq_status dq_quantize_row(int type, const float *x, void *y, int64_t n);
/* Dequantizes one row of n elements (any supported type) to f32. The scalar
 * reference: it is the specification of the layouts above. */
dq_status dq_dequantize_row(int type, const void *x, float *y, int64_t n);

/* out = sum_i w[i] * a[i] over one row of n elements, with `w` in `type` and
 * `a` in dq_type_get(type)->vec_dot_type. Fast path chosen by caps->isa.
 * Results of fast paths equal the scalar reference up to float summation
 * order (integer block products are exact). */
dq_status dq_vec_dot(const dq_cpu_caps *caps, int type, int64_t n,
                     const void *w, const void *a, float *out);
/* The scalar reference (specification) of dq_vec_dot. */
dq_status dq_vec_dot_ref(int type, int64_t n, const void *w, const void *a,
                         float *out);

/* The kernel dq_vec_dot would call, for hot loops: no argument checks, n must
 * be a positive multiple of the block size. NULL for non-weight types. */
typedef void (*dq_vec_dot_fn)(int64_t n, const void *w, const void *a,
                              float *out);
dq_vec_dot_fn dq_vec_dot_get(const dq_cpu_caps *caps, int type);

/* ---- thread pool ------------------------------------------------------- */
/* A fixed set of persistent worker threads (n_threads - 1 workers plus the
 * calling thread). Jobs run on all threads at once and the call returns when
 * every thread has finished; workers spin briefly, then sleep on a condition
 * variable between jobs. One job at a time: a pool must not be used from two
 * threads concurrently. Also owns the scratch memory dq_matmul uses. */
typedef struct dq_threadpool dq_threadpool;
typedef void (*dq_task_fn)(void *ctx, int ith, int nth);

/* n_threads >= 1 (1: no workers are started). *out is freed with
 * dq_threadpool_free. */
dq_status dq_threadpool_new(int n_threads, dq_threadpool **out);
void dq_threadpool_free(dq_threadpool *pool); /* joins workers; NULL ok */
int dq_threadpool_size(const dq_threadpool *pool);
/* Runs fn(ctx, ith, nth) for ith = 0..nth-1, ith 0 on the calling thread. */
void dq_threadpool_run(dq_threadpool *pool, dq_task_fn fn, void *ctx);

/* ---- matrix multiply --------------------------------------------------- */
/* Y = X W^T: for every token t < n_tok and output o < n_out,
 *   y[t * n_out + o] = sum_i W[o][i] * x[t * n_in + i]
 * with W row-major, n_out rows of n_in elements of type `wtype` (row o at
 * w + o * dq_type_row_bytes(wtype, n_in)), x and y f32 row-major.
 * X is converted once per call to the weights' vec_dot_type (in the pool's
 * scratch), then output rows are split across the pool's threads; tokens
 * are processed in tiles so each weight row is read from memory once per
 * tile. pool may be NULL (single thread; scratch is malloc'd per call).
 * Results do not depend on the thread count (bit for bit); a token's row
 * may differ from a one-token call in float summation order only (prefill
 * uses 4-token kernels), within the dq_vec_dot tolerance.
 * DQ_ERR_ARG for bad sizes (n_in must be a multiple of the block size),
 * DQ_ERR_UNSUPPORTED for non-weight types, DQ_ERR_NOMEM. */
dq_status dq_matmul(dq_threadpool *pool, const dq_cpu_caps *caps, int wtype,
                    const void *w, int64_t n_out, int64_t n_in,
                    const float *x, int64_t n_tok, float *y);

/* One product of dq_matmul_n: W (n_out rows of `wtype`) into y. */
typedef struct dq_mm_out {
  int wtype;
  const void *w;
  int64_t n_out;
  float *y;
} dq_mm_out;
#define DQ_MM_N_MAX 4
/* n <= DQ_MM_N_MAX products on one x (a layer's q, k and v; gate and up):
 * the same bits as n dq_matmul calls, x converted once per activation
 * layout. Up to 64 tokens the rows of all n run as one job of the pool
 * (one wake-up of the workers instead of n); with more, one job per
 * product. All n are checked before any runs. */
dq_status dq_matmul_n(dq_threadpool *pool, const dq_cpu_caps *caps, int n,
                      const dq_mm_out *o, int64_t n_in, const float *x,
                      int64_t n_tok);

/* ---- element-wise and row ops (f32; y may equal x) ---------------------- */
/* y = x / sqrt(mean(x^2) + eps) * (w ? w : 1) */
void dq_rmsnorm(float *y, const float *x, const float *w, int64_t n, float eps);
/* y = (x - mean) / sqrt(var + eps) * (w ? w : 1) + (b ? b : 0) */
void dq_layernorm(float *y, const float *x, const float *w, const float *b,
                  int64_t n, float eps);
/* In place, stable (subtracts the max); n >= 1. -INFINITY entries become 0. */
void dq_softmax(float *x, int64_t n);
void dq_silu(float *y, const float *x, int64_t n); /* x * sigmoid(x) */
/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as ggml's gelu */
void dq_gelu_tanh(float *y, const float *x, int64_t n);
/* 0.5 x (1 + erf(x/sqrt2)), erf to 3e-7 absolute (act_impl.h) */
void dq_gelu_erf(float *y, const float *x, int64_t n);
/* dq_silu and both GELUs on caps' widest working path (same bits) */
void dq_silu_isa(const dq_cpu_caps *caps, float *y, const float *x, int64_t n);
void dq_gelu_tanh_isa(const dq_cpu_caps *caps, float *y, const float *x,
                      int64_t n);
void dq_gelu_erf_isa(const dq_cpu_caps *caps, float *y, const float *x,
                     int64_t n);
/* y[i] = a[i] * b[i] (SwiGLU's product after dq_silu) */
void dq_mul(float *y, const float *a, const float *b, int64_t n);
/* y[i] = a[i] + b[i] (residual connections) */
void dq_add(float *y, const float *a, const float *b, int64_t n);
/* y[i] += alpha * x[i] (attention's weighted sum of values) */
void dq_axpy(float *y, float alpha, const float *x, int64_t n);
/* y[i] = alpha * x[i] */
void dq_scale(float *y, float alpha, const float *x, int64_t n);

/* ---- top-k selection (topk.c) ------------------------------------------ */

/* Host and device (kernels/cuda/topk.cuh selects by the same keys). */
#ifdef __CUDACC__
#define DQ_HD __host__ __device__
#else
#define DQ_HD
#endif

/* The order of candidates for sampling as one 64-bit key per (value, index):
 * larger keys are better; higher values first, equal values (-0 = +0) by
 * the lower index; NaN below every number. Keys are distinct for distinct
 * indices (index < 2^31), and 0 is no key (a NaN's key is above it). */
DQ_HD static inline uint64_t dq_top_k_key(float v, int32_t i) {
  union {
    float f;
    uint32_t u;
  } b = {v};
  uint32_t o;
  if (v != v)
    o = 0;
  else if (v == 0)
    o = 0x80000000u;
  else
    o = (b.u & 0x80000000u) ? ~b.u : b.u | 0x80000000u;
  return (uint64_t)o << 32 | (uint32_t)~(uint32_t)i;
}
DQ_HD static inline int32_t dq_top_k_key_id(uint64_t key) {
  return (int32_t)~(uint32_t)key;
}
DQ_HD static inline float dq_top_k_key_value(uint64_t key) {
  uint32_t o = (uint32_t)(key >> 32);
  union {
    uint32_t u;
    float f;
  } b;
  if (o == 0)
    b.u = 0x7fc00000u; /* NaN */
  else
    b.u = (o & 0x80000000u) ? o & 0x7fffffffu : ~o;
  return b.f;
}

/* The repetition penalty on one logit (llama.cpp's rule). */
DQ_HD static inline float dq_top_k_penalise(float v, float penalty) {
  return v > 0 ? v / penalty : v * penalty;
}

/* The k best of x[0..n) in dq_top_k_key order, best first: ids[i] and
 * vals[i] (the penalised value). Repetition penalty first: for each token in
 * pen[0..n_pen) (ascending, distinct, < n), positive x divided by `penalty`,
 * negative multiplied (penalty 1 = none). O(n log k) for k < n / 8, a sort
 * of n keys otherwise. keys: scratch for n keys, or NULL (then allocated).
 * DQ_ERR_ARG for n outside 1..2^30, k outside 1..n, n_pen < 0, penalty
 * <= 0; DQ_ERR_NOMEM. */
dq_status dq_top_k(const float *x, int n, const int32_t *pen, int n_pen,
                   float penalty, int k, uint64_t *keys, int32_t *ids,
                   float *vals);
/* Makes a list of penalised tokens fit dq_top_k: sorted in place, repeats
 * and ids outside 0..n_vocab-1 dropped; returns the count left. */
int dq_top_k_pen(int32_t *pen, int n, int n_vocab);

/* Rotary position embedding, in place, on one token's n_heads heads of
 * head_dim floats each (head h at x + h * head_dim). The first n_rot (even,
 * <= head_dim) dimensions of each head rotate by pos * theta_k with
 * theta_k = freq_scale * freq_base^(-2k / n_rot), k < n_rot / 2:
 *   normal (llama): pairs (x[2k], x[2k+1])
 *   neox (qwen2, gemma3, ...): pairs (x[k], x[k + n_rot/2])
 * (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos). Attention itself is left
 * to the engine. */
void dq_rope(float *x, int n_heads, int head_dim, int n_rot, int64_t pos,
             float freq_base, float freq_scale, int neox);
/* dq_rope on n_tok tokens at pos[t]: token t's nq heads at
 * q + t * nq * head_dim and, when k is not NULL, its nk heads at
 * k + t * nk * head_dim, each angle computed once for both (and each
 * freq_base power once per call); the same bits as dq_rope per token and
 * array. */
void dq_rope_qk(float *q, int nq, float *k, int nk, int head_dim, int n_rot,
                const int32_t *pos, int64_t n_tok, float freq_base,
                float freq_scale, int neox);

/* ---- attention ----------------------------------------------------------
 * Softmax attention of a block of up to DQ_ATTN_QB query rows against one
 * run of n key/value rows (one KV head): the engine's full attention and GSM
 * both call it, so with the same keys they give the same bits.
 *
 * Keys are first packed into panels of DQ_ATTN_PANEL keys (dq_attn_pack_k):
 * panel b holds, for d = 0..hd-1, the d-th element of keys 16b..16b+15 side
 * by side, so a score kernel multiplies one query element into 16 keys per
 * vector and sums over d. Padding keys are zero.
 *
 * Query i attends keys [lo[i], hi[i]) (0 <= lo < hi <= n):
 *   s_k = (q . k_k) * scale + bias[k]   (bias may be NULL)
 *   p_k = exp(s_k - max s) / sum exp(...)
 *   o   = sum_k p_k v_k                  (keys in index order)
 * The probabilities come back in p[i * p_stride + k] for k in [lo[i],
 * hi[i]) (callers accumulate attention statistics from them); other
 * entries of the rows may be overwritten. p_stride >= dq_attn_padded(n).
 *
 * Determinism: a key's score is two fixed chains over d (even and odd d),
 * the exponent sum runs in lanes counted from lo[i], and the value sum is
 * one chain per output element in key order; so a query's results depend
 * only on its own keys and range - not on the other queries in its block,
 * or the thread - on a given ISA path. Paths differ
 * in the last bits (FMA vs mul + add, lane count). */
#define DQ_ATTN_PANEL 16
/* Queries per block: the kernel holds 8 (4 without AVX-512) in registers
 * and runs larger blocks as passes interleaved over tiles of keys, so the
 * block shares each key and value read from memory (32 queries: a
 * SmolLM2-135M GSM layer's ~6,700 entries run 1.3x faster per key and
 * query than in blocks of 8, whose every pass streamed the run's ~1.7 MiB
 * of one head's keys and values through the 2 MiB L2 again). */
#define DQ_ATTN_QB 32
static inline int64_t dq_attn_padded(int64_t n) {
  return (n + DQ_ATTN_PANEL - 1) / DQ_ATTN_PANEL * DQ_ATTN_PANEL;
}
/* Packs keys [k0, k1) (k0 a multiple of DQ_ATTN_PANEL; key j at
 * k + j * stride, hd floats) into their panels of kt (dq_attn_padded(n) *
 * hd floats for n keys); padding keys past n are written as zeros when
 * k1 == n. Threads may pack disjoint panel-aligned ranges. */
void dq_attn_pack_k(const float *k, size_t stride, int64_t k0, int64_t k1,
                    int64_t n, int hd, float *kt);
/* Half-precision operands (f16 = 1): kt and v point to dq_f16 with the same
 * layouts, converted as they are read (exactly, so the results are the
 * bits the f32 kernel gives on the converted values); panels may then sit
 * kt_stride elements apart (a KV cache interleaving its heads' panels:
 * element i of cache row r at ((r / 16) * row_elems + i) * 16 + r % 16). */
/*
 * 8-bit operands (q8 = 1; hd a multiple of 32, at most DQ_ATTN_Q8_HD_MAX):
 * a GSM cache of type Q8_0 read in place. Key panels of 16 keys sit
 * kt_stride bytes apart, each dq_attn_q8k_bytes(hd) bytes:
 *   bytes [0, 16 hd): elements d..d+3 (d a multiple of 4) of key j at
 *     (d / 4 * 16 + j) * 4 + d % 4, as k8 + 128 (k8 in [-127, 127]);
 *   then hd / 32 x 16 floats ks[blk * 16 + j]: key j's elements
 *     [32 blk, 32 blk + 32) are ks * k8.
 * Value panels of 16 values sit v_stride bytes apart (value j in panel
 * j / 16), each dq_attn_q8v_bytes(hd) bytes:
 *   bytes [0, 16 hd): element d of value j at ((j / 4) * hd + d) * 4 +
 *     j % 4, as v8 (s8 in [-127, 127]);
 *   then 16 floats vs[j]: value j is vs * v8 (one scale per head).
 * dq_attn_q8_put_key / _put_value write one key or value into its lane,
 * rounding as the kernel rounds queries (below).
 * The kernel quantizes each query per block of 32 elements the same way
 * (qd = max |q| / 127, q8 = q / qd rounded half away from zero), so a
 * score is the exact integer sum of q8 k8 per block times ks, times qd x
 * scale, the blocks added in order (a fused multiply-add where the path
 * has one). The softmax's exponentials use a degree-5 polynomial (relative
 * error ~3e-6). Each query's p_j vs_j are then quantized per group of
 * DQ_ATTN_Q8_GROUP keys (absolute key index / group): u_j = (int)(p_j vs_j
 * x (255 / m) + 0.5), m the group's maximum, and the output is the sum over
 * groups in order of (m / 255) x the exact integer sum of u_j v8_j. The
 * integer sums are exact on every path (VNNI or float arithmetic on small
 * integers), so paths differ only where the softmax's probabilities do.
 */
#define DQ_ATTN_Q8_HD_MAX 256
#define DQ_ATTN_Q8_GROUP 64
static inline size_t dq_attn_q8k_bytes(int hd) {
  return (size_t)hd * DQ_ATTN_PANEL + (size_t)(hd / 32) * DQ_ATTN_PANEL * 4;
}
static inline size_t dq_attn_q8v_bytes(int hd) {
  return (size_t)hd * DQ_ATTN_PANEL + DQ_ATTN_PANEL * 4;
}
/* Key k (hd floats) into lane j of a key panel / back to floats (the
 * panel's exact values); hd as for q8 blocks. */
void dq_attn_q8_put_key(void *panel, int j, int hd, const float *k);
void dq_attn_q8_get_key(const void *panel, int j, int hd, float *k);
/* The same for values and value panels. */
void dq_attn_q8_put_value(void *panel, int j, int hd, const float *v);
void dq_attn_q8_get_value(const void *panel, int j, int hd, float *v);
/* Lane js of panel src to lane jd of panel dst (same layout), exactly. */
void dq_attn_q8_move_key(void *dst, int jd, const void *src, int js, int hd);
void dq_attn_q8_move_value(void *dst, int jd, const void *src, int js,
                           int hd);
typedef struct dq_attn_block {
  const void *kt;   /* packed keys: panel b at kt + b * kt_stride elements
                       (bytes for q8) */
  size_t kt_stride; /* 0: hd * DQ_ATTN_PANEL (panels back to back; q8:
                       dq_attn_q8k_bytes(hd)) */
  const void *v;    /* value j at v + j * v_stride elements, hd of them;
                       q8: value panel j / 16 at v + (j / 16) * v_stride
                       bytes (0: dq_attn_q8v_bytes(hd)) */
  size_t v_stride;
  int f16;          /* kt and v hold dq_f16 */
  int q8;           /* kt and v hold 8-bit panels (above) */
  const float *bias; /* n floats or NULL */
  int64_t n;
  int hd;
  float scale;
  int nq;            /* 1..DQ_ATTN_QB */
  const float *q[DQ_ATTN_QB];
  float *o[DQ_ATTN_QB];
  int64_t lo[DQ_ATTN_QB], hi[DQ_ATTN_QB];
  float *p;
  size_t p_stride;
  float *psum; /* NULL, or n floats: psum[k] += the block's probabilities
                  of key k, all its queries (attention statistics without
                  a second pass over the rows) */
} dq_attn_block;
/* Runs one block with caps' fastest path (NULL caps: baseline). */
void dq_attn_run(const dq_cpu_caps *caps, const dq_attn_block *b);
/* The same on an explicit path, which the caller knows works (tests compare
 * the paths); a path not built for this target runs the next lower one. */
void dq_attn_run_isa(dq_isa isa, const dq_attn_block *b);

#ifdef __cplusplus
}
#endif
#endif /* DQ_KERNELS_H */
