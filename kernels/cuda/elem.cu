/*
 * elem.cu - the CUDA backend's small ops (cuda_ops.h, "element-wise, norms,
 * RoPE, cache stores"): RMSNorm/LayerNorm, RoPE (plain, linear and YaRN),
 * residual adds, scaling, GELU/SiLU and gated units, 2-D copies, the gated
 * shared-expert rows, mean pooling, the KV cache stores (also in one
 * launch with RoPE, rope_store: a decode step's keys and values) and GSM's
 * row gathers and statistics sums. Each mirrors
 * the CPU backend's formula (engine/backend_cpu.c, kernels/cpu/ops.c):
 * norms reduce in double as the CPU does, RoPE angles are computed in
 * double (positions reach 1e5+), Q8_0 cache blocks round like roundf, and
 * where the CPU rounds a product before adding it, so do these (__fmul_rn:
 * nvcc would fuse the two, which the tests see near zero).
 * get_rows decodes embedding rows with quant.cuh's exact decoders (the
 * same floats as the CPU's dq_dequantize_row).
 * These ops are bandwidth-bound and small next to the matrix products:
 * one thread per element, or one block per row for the reductions.
 */
#include "act.cuh"
#include "cuda_ops.h"
#include "gather.cuh"
#include "launch.cuh"
#include "quant.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#define NT 256 /* threads per block */

static unsigned blocks_for(size_t n) {
  size_t b = (n + NT - 1) / NT;
  return (unsigned)(b > 0x7fffffffu ? 0x7fffffffu : (b ? b : 1));
}

/* Launch check shared by every launcher. */
static int launched(void) { return (int)cudaGetLastError(); }

#define STREAM(s) ((cudaStream_t)(s))

/* Block-wide sum of one double per thread (blockDim.x == NT). */
__device__ static double block_sum(double v) {
  __shared__ double part[NT / 32];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); /* part[] may still be read by a previous call */
  if (lane == 0)
    part[warp] = v;
  __syncthreads();
  double s = 0;
  if (threadIdx.x < 32) {
    s = threadIdx.x < NT / 32 ? part[threadIdx.x] : 0.0;
    for (int o = 16; o > 0; o >>= 1)
      s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0)
      part[0] = s;
  }
  __syncthreads();
  return part[0];
}

/* ---- norms -------------------------------------------------------------- */

__global__ void k_rmsnorm(const float *x, const float *w, float *y, int dim,
                          float eps) {
  const float *xr = x + (size_t)blockIdx.x * dim;
  float *yr = y + (size_t)blockIdx.x * dim;
  double ss = 0;
  for (int i = threadIdx.x; i < dim; i += NT)
    ss += (double)xr[i] * xr[i];
  ss = block_sum(ss);
  float scale = (float)(1.0 / sqrt(ss / (double)dim + (double)eps));
  for (int i = threadIdx.x; i < dim; i += NT)
    yr[i] = xr[i] * scale * (w ? w[i] : 1.0f);
}

extern "C" int dq_cu_rmsnorm(void *s, const float *x, const float *w,
                             float *y, int n_tok, int dim, float eps) {
  if (n_tok <= 0)
    return 0;
  DQ_CU_LAUNCH(k_rmsnorm, n_tok, NT, 0, STREAM(s))(x, w, y, dim, eps);
  return launched();
}

__global__ void k_layernorm(const float *x, const float *w, const float *b,
                            float *y, int dim, float eps) {
  const float *xr = x + (size_t)blockIdx.x * dim;
  float *yr = y + (size_t)blockIdx.x * dim;
  double m = 0;
  for (int i = threadIdx.x; i < dim; i += NT)
    m += xr[i];
  m = block_sum(m) / (double)dim;
  double var = 0;
  for (int i = threadIdx.x; i < dim; i += NT)
    var += ((double)xr[i] - m) * ((double)xr[i] - m);
  var = block_sum(var) / (double)dim;
  float scale = (float)(1.0 / sqrt(var + (double)eps));
  /* products and the bias add rounded apart, as the CPU does: a fused
   * multiply-add would move outputs near zero far past the tolerance */
  for (int i = threadIdx.x; i < dim; i += NT)
    yr[i] = __fadd_rn(__fmul_rn((float)((double)xr[i] - m) * scale,
                                w ? w[i] : 1.0f),
                      b ? b[i] : 0.0f);
}

extern "C" int dq_cu_layernorm(void *s, const float *x, const float *w,
                               const float *b, float *y, int n_tok, int dim,
                               float eps) {
  if (n_tok <= 0)
    return 0;
  DQ_CU_LAUNCH(k_layernorm, n_tok, NT, 0, STREAM(s))(x, w, b, y, dim, eps);
  return launched();
}

/* ---- RoPE --------------------------------------------------------------- */

/* cos and sin (times YaRN's magnitude) of pair i's angle at position pos.
 * The plain/linear form computes its angle in double like kernels/cpu dq_rope;
 * YaRN follows backend_cpu.c's float formula operation by operation: at
 * positions ~1e5 one ulp of a float angle (5e-4 rad at 4096, 8e-3 at 1e5)
 * is far outside the tolerance, so nothing may be fused (__f*_rn), and the power, cosine and
 * sine are the correctly rounded ones (double functions rounded to float),
 * which the host libm's powf/cosf/sinf return nearly always; the device's
 * float versions may be ulps off. */
__device__ static void rope_cs(const dq_rope_params &r, int32_t pos, int i,
                               float *cs_out, float *sn_out) {
  float cs, sn;
  if (r.ext_factor == 0.0f && r.attn_factor == 1.0f) {
    double theta = (double)r.freq_scale * (double)pos *
                   pow((double)r.base, -2.0 * i / (double)r.n_rot);
    cs = (float)cos(theta);
    sn = (float)sin(theta);
  } else {
    const float ex = -2.0f * (float)i / (float)r.n_rot;
    float theta_extrap =
        __fmul_rn((float)pos, (float)pow((double)r.base, (double)ex));
    float theta = __fmul_rn(r.freq_scale, theta_extrap), mscale = r.attn_factor;
    if (r.ext_factor != 0.0f) {
      float yv = ((float)i - r.corr_low) /
                 fmaxf(0.001f, r.corr_high - r.corr_low);
      float ramp = __fmul_rn(1.0f - fminf(1.0f, fmaxf(0.0f, yv)), r.ext_factor);
      theta = __fadd_rn(__fmul_rn(theta, 1.0f - ramp),
                        __fmul_rn(theta_extrap, ramp));
      mscale = __fmul_rn(
          mscale, __fadd_rn(1.0f, __fmul_rn(0.1f, logf(1.0f / r.freq_scale))));
    }
    /* correctly rounded like the host's cosf/sinf nearly always (checked:
     * 98.7% against glibc's; the device's cosf is 2 ulp) */
    cs = __fmul_rn((float)cos((double)theta), mscale);
    sn = __fmul_rn((float)sin((double)theta), mscale);
  }
  *cs_out = cs;
  *sn_out = sn;
}

/* Pair (a, b) of every head of token t's row x, rotated by (cs, sn). */
__device__ static void rope_heads(float *x, int t, int n_head, int head_dim,
                                  int a, int b, float cs, float sn) {
  /* rounded apart like the CPU's rotation (an FMA differs near zero) */
  for (int h = 0; h < n_head; h++) {
    float *v = x + ((size_t)t * n_head + h) * head_dim;
    float x0 = v[a], x1 = v[b];
    v[a] = __fsub_rn(__fmul_rn(x0, cs), __fmul_rn(x1, sn));
    v[b] = __fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, cs));
  }
}

/* Pair i of token t: the angle once, then every head of x (when not
 * NULL) and of k (when not NULL). */
__device__ static void rope_pair(const dq_rope_params &r, const int32_t *pos,
                                 int t, int i, float *x, int n_head, float *k,
                                 int n_head_k, int head_dim) {
  int half = r.n_rot / 2;
  float cs, sn;
  rope_cs(r, pos[t], i, &cs, &sn);
  int a = r.neox ? i : 2 * i, b = r.neox ? i + half : 2 * i + 1;
  if (x)
    rope_heads(x, t, n_head, head_dim, a, b, cs, sn);
  if (k)
    rope_heads(k, t, n_head_k, head_dim, a, b, cs, sn);
}

/* One thread per (token, pair i): rope_pair on x and, when k is not NULL,
 * k (rope_qk: one launch and one angle for a layer's queries and keys, the
 * same bits as two). */
__global__ void k_rope(float *x, float *k, int n_tok, int n_head,
                       int n_head_k, int head_dim, const int32_t *pos,
                       dq_rope_params r) {
  int half = r.n_rot / 2;
  size_t id = (size_t)blockIdx.x * NT + threadIdx.x;
  if (id >= (size_t)n_tok * half)
    return;
  rope_pair(r, pos, (int)(id / half), (int)(id % half), x, n_head, k,
            n_head_k, head_dim);
}

extern "C" int dq_cu_rope_apply(void *s, float *x, int n_tok, int n_head,
                                int head_dim, const int32_t *pos,
                                const dq_rope_params *r) {
  size_t n = (size_t)n_tok * (r->n_rot / 2);
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_rope, blocks_for(n), NT, 0, STREAM(s))(
      x, NULL, n_tok, n_head, 0, head_dim, pos, *r);
  return launched();
}

extern "C" int dq_cu_rope_qk(void *s, float *q, float *k, int n_tok,
                             int n_head, int n_head_kv, int head_dim,
                             const int32_t *pos, const dq_rope_params *r) {
  size_t n = (size_t)n_tok * (r->n_rot / 2);
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_rope, blocks_for(n), NT, 0, STREAM(s))(
      q, k, n_tok, n_head, n_head_kv, head_dim, pos, *r);
  return launched();
}

/* ---- element-wise ------------------------------------------------------- */

#define GRID_LOOP(i, n)                                                        \
  for (size_t i = (size_t)blockIdx.x * NT + threadIdx.x; i < (n);              \
       i += (size_t)gridDim.x * NT)

__global__ void k_add(float *y, const float *x, size_t n) {
  GRID_LOOP(i, n) y[i] += x[i];
}
__global__ void k_add_row(float *y, const float *b, size_t n, int dim) {
  GRID_LOOP(i, n) y[i] += b[i % dim];
}
__global__ void k_scale(float *y, float s, size_t n) {
  GRID_LOOP(i, n) y[i] *= s;
}
/* erf in double, rounded: 1 + erf(v / sqrt 2) cancels for v near -3, where
 * one ulp of erf is ~1e-5 of the result; the host libm's erff is (nearly
 * always) the correctly rounded value, the device's erff is 2 ulp. */
__global__ void k_gelu(float *y, size_t n, int tanh_approx) {
  GRID_LOOP(i, n) {
    float v = y[i];
    y[i] = tanh_approx
               ? dqa_gelu_tanh(v)
               : 0.5f * v *
                     (1.0f + (float)erf((double)(v * 0.70710678118654752440f)));
  }
}
__global__ void k_glu(float *g, const float *u, size_t n, int act) {
  GRID_LOOP(i, n) g[i] = dqa_glu(g[i], u[i], act);
}
__global__ void k_copy2d(float *dst, size_t ds, const float *src, size_t ss,
                         int row_len, size_t n) {
  GRID_LOOP(i, n) {
    size_t r = i / row_len, c = i % row_len;
    dst[r * ds + c] = src[r * ss + c];
  }
}
__global__ void k_gate_rows(float *y, const float *g, int dim, size_t n) {
  GRID_LOOP(i, n) y[i] *= 1.0f / (1.0f + expf(-g[i / dim]));
}

/* Grid size for the grid-stride loops: enough blocks to fill the device,
 * no more than the work. */
static unsigned grid_for(size_t n) {
  unsigned b = blocks_for(n);
  return b > 65535u * 4 ? 65535u * 4 : b;
}

extern "C" int dq_cu_add(void *s, float *y, const float *x, size_t n) {
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_add, grid_for(n), NT, 0, STREAM(s))(y, x, n);
  return launched();
}
extern "C" int dq_cu_add_row(void *s, float *y, const float *b, int n_tok,
                             int dim) {
  size_t n = (size_t)n_tok * dim;
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_add_row, grid_for(n), NT, 0, STREAM(s))(y, b, n, dim);
  return launched();
}
extern "C" int dq_cu_scale(void *s, float *y, float f, size_t n) {
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_scale, grid_for(n), NT, 0, STREAM(s))(y, f, n);
  return launched();
}
extern "C" int dq_cu_gelu(void *s, float *y, size_t n, int tanh_approx) {
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_gelu, grid_for(n), NT, 0, STREAM(s))(y, n, tanh_approx);
  return launched();
}
extern "C" int dq_cu_glu(void *s, float *g, const float *u, size_t n,
                         int act) {
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_glu, grid_for(n), NT, 0, STREAM(s))(g, u, n, act);
  return launched();
}
extern "C" int dq_cu_copy2d(void *s, float *dst, size_t dst_stride,
                            const float *src, size_t src_stride, int n_rows,
                            int row_len) {
  size_t n = (size_t)n_rows * row_len;
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_copy2d, grid_for(n), NT, 0, STREAM(s))(
      dst, dst_stride, src, src_stride, row_len, n);
  return launched();
}
extern "C" int dq_cu_gate_rows(void *s, float *y, const float *g, int n_tok,
                               int dim) {
  size_t n = (size_t)n_tok * dim;
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_gate_rows, grid_for(n), NT, 0, STREAM(s))(y, g, dim, n);
  return launched();
}

/* One block: column means (double sums), then the L2 norm. */
__global__ void k_mean_pool_l2(const float *x, int n_tok, int dim,
                               float *out) {
  double nn = 0;
  for (int i = threadIdx.x; i < dim; i += NT) {
    double sum = 0;
    for (int t = 0; t < n_tok; t++)
      sum += x[(size_t)t * dim + i];
    float m = (float)(sum / n_tok);
    out[i] = m;
    nn += (double)m * m;
  }
  nn = block_sum(nn);
  float inv = nn > 0 ? (float)(1.0 / sqrt(nn)) : 0.0f;
  for (int i = threadIdx.x; i < dim; i += NT)
    out[i] *= inv;
}

extern "C" int dq_cu_mean_pool_l2(void *s, const float *x, int n_tok,
                                  int dim, float *out) {
  if (n_tok <= 0 || dim <= 0)
    return 0;
  DQ_CU_LAUNCH(k_mean_pool_l2, 1, NT, 0, STREAM(s))(x, n_tok, dim, out);
  return launched();
}

/* ---- KV cache stores ---------------------------------------------------- */

/* Element e of cache row r of `store` (0 F32 rows, 1 F16 rows, 2 F16 key
 * panels: element e of row r at ((r / 16) * row_elems + e) * 16 + r % 16). */
__device__ static void store_elem(void *c, int store, size_t r, int row_elems,
                                  size_t e, float v) {
  if (store == 0)
    ((float *)c)[r * row_elems + e] = v;
  else if (store == 1)
    ((__half *)c)[r * row_elems + e] = __float2half_rn(v);
  else
    ((__half *)c)[((r / 16) * row_elems + e) * 16 + r % 16] =
        __float2half_rn(v);
}

/* Q8_0 block b of cache row r (bpr blocks a row) from the 32 lanes' values
 * v (a whole warp): f16 scale amax / 127, then 32 int8 rounded as roundf. */
__device__ static void store_q8_block(uint8_t *c, size_t r, int bpr, size_t b,
                                      int lane, float v) {
  float amax = fabsf(v);
  for (int o = 16; o > 0; o >>= 1)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  uint8_t *blk = c + (r * bpr + b) * 34;
  if (lane == 0) {
    __half h = __float2half_rn(d);
    memcpy(blk, &h, 2);
  }
  blk[2 + lane] = (uint8_t)(int8_t)roundf(v * id);
}

__global__ void k_store_elems(void *c, int store, const float *x, size_t row0,
                              int row_elems, size_t n) {
  GRID_LOOP(i, n)
  store_elem(c, store, row0 + i / row_elems, row_elems, i % row_elems, x[i]);
}
/* Q8_0: one warp per block of 32. */
__global__ void k_store_q8_0(uint8_t *c, const float *x, size_t row0,
                             int row_elems, size_t n_blocks) {
  size_t wid = ((size_t)blockIdx.x * NT + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (wid >= n_blocks)
    return;
  int bpr = row_elems / 32;
  size_t r = wid / bpr, b = wid % bpr;
  store_q8_block(c, row0 + r, bpr, b, lane, x[r * row_elems + b * 32 + lane]);
}

static int store_ok(int store) {
  return store == 0 || store == 1 || store == 2 || store == 8;
}

extern "C" int dq_cu_kv_store(void *s, void *cache, int store, int row0,
                              const float *x, int n_rows, int row_elems) {
  size_t n = (size_t)n_rows * row_elems;
  if (!store_ok(store))
    return (int)cudaErrorInvalidValue;
  if (!n)
    return 0;
  if (store == 8) {
    size_t nb = n / 32;
    DQ_CU_LAUNCH(k_store_q8_0, blocks_for(nb * 32), NT, 0, STREAM(s))(
        (uint8_t *)cache, x, row0, row_elems, nb);
  } else
    DQ_CU_LAUNCH(k_store_elems, grid_for(n), NT, 0, STREAM(s))(
        cache, store, x, row0, row_elems, n);
  return launched();
}

/* One row x of row_elems into cache row r of `store`, by the whole block. */
__device__ static void store_row(void *c, int store, const float *x, size_t r,
                                 int row_elems) {
  if (store == 8) {
    int bpr = row_elems / 32;
    for (int b = threadIdx.x >> 5; b < bpr; b += NT / 32)
      store_q8_block((uint8_t *)c, r, bpr, (size_t)b, threadIdx.x & 31,
                     x[b * 32 + (threadIdx.x & 31)]);
  } else
    for (int e = threadIdx.x; e < row_elems; e += NT)
      store_elem(c, store, r, row_elems, (size_t)e, x[e]);
}

/* One block per token t: when rot, k_rope's rotation of its q heads (q
 * not NULL) and k heads, in place; then its k and v rows into the caches
 * at row row0 + t, as dq_cu_kv_store writes them. */
__global__ void k_rope_store(float *q, float *k, const float *v, int n_head,
                             int n_head_kv, int head_dim, const int32_t *pos,
                             dq_rope_params r, int rot, void *kc, int store_k,
                             void *vc, int store_v, size_t row0) {
  int t = blockIdx.x, re = n_head_kv * head_dim;
  if (rot) {
    int half = r.n_rot / 2;
    for (int i = threadIdx.x; i < half; i += NT)
      rope_pair(r, pos, t, i, q, n_head, k, n_head_kv, head_dim);
    __syncthreads(); /* the rotated keys, stored below by other threads */
  }
  store_row(kc, store_k, k + (size_t)t * re, row0 + t, re);
  store_row(vc, store_v, v + (size_t)t * re, row0 + t, re);
}

extern "C" int dq_cu_rope_store(void *s, float *q, float *k, const float *v,
                                int n_tok, int n_head, int n_head_kv,
                                int head_dim, const int32_t *pos,
                                const dq_rope_params *r, void *k_cache,
                                int store_k, void *v_cache, int store_v,
                                int row0) {
  if (!store_ok(store_k) || !store_ok(store_v) ||
      ((store_k == 8 || store_v == 8) && (n_head_kv * head_dim) % 32))
    return (int)cudaErrorInvalidValue;
  if (n_tok <= 0)
    return 0;
  dq_rope_params none;
  memset(&none, 0, sizeof none);
  DQ_CU_LAUNCH(k_rope_store, (unsigned)n_tok, NT, 0, STREAM(s))(
      q, k, v, n_head, n_head_kv, head_dim, pos, r ? *r : none, r != NULL,
      k_cache, store_k, v_cache, store_v, (size_t)row0);
  return launched();
}

/* ---- GSM rows: renumbering, gathers and statistics sums ------------------- */

/* Key row k turned back by delta[k] positions (backend.h kv_rotate): one
 * thread per (row, pair i), every head; the rotation at delta[k] as k_rope
 * computes it, its magnitude divided out in double and inverted, the
 * products rounded apart as the CPU backend's. store 2: F16 panels, 1: F16
 * rows, 0: F32 rows. */
__global__ void k_kv_rotate(void *cache, int store, int n_rows, int n_head,
                            int head_dim, const int32_t *delta,
                            dq_rope_params r) {
  int half = r.n_rot / 2;
  size_t id = (size_t)blockIdx.x * NT + threadIdx.x;
  if (id >= (size_t)n_rows * half)
    return;
  int k = (int)(id / half), i = (int)(id % half);
  int32_t d = delta[k];
  if (!d)
    return;
  float c0, s0;
  rope_cs(r, d, i, &c0, &s0);
  double m = hypot((double)c0, (double)s0);
  float cs = (float)(c0 / m), sn = (float)(-s0 / m);
  size_t re = (size_t)n_head * head_dim;
  int a = r.neox ? i : 2 * i, b = r.neox ? i + half : 2 * i + 1;
  for (int h = 0; h < n_head; h++) {
    size_t ea = (size_t)h * head_dim + a, eb = (size_t)h * head_dim + b;
    float x0, x1;
    if (store == 0) {
      float *row = (float *)cache + (size_t)k * re;
      x0 = row[ea], x1 = row[eb];
    } else if (store == 1) {
      const __half *row = (const __half *)cache + (size_t)k * re;
      x0 = __half2float(row[ea]), x1 = __half2float(row[eb]);
    } else {
      const __half *p = (const __half *)cache + ((size_t)k / 16) * re * 16 +
                        k % 16;
      x0 = __half2float(p[ea * 16]), x1 = __half2float(p[eb * 16]);
    }
    float y0 = __fsub_rn(__fmul_rn(x0, cs), __fmul_rn(x1, sn));
    float y1 = __fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, cs));
    if (store == 0) {
      float *row = (float *)cache + (size_t)k * re;
      row[ea] = y0, row[eb] = y1;
    } else if (store == 1) {
      __half *row = (__half *)cache + (size_t)k * re;
      row[ea] = __float2half_rn(y0), row[eb] = __float2half_rn(y1);
    } else {
      __half *p = (__half *)cache + ((size_t)k / 16) * re * 16 + k % 16;
      p[ea * 16] = __float2half_rn(y0), p[eb * 16] = __float2half_rn(y1);
    }
  }
}

extern "C" int dq_cu_kv_rotate(void *s, void *cache, int store, int n_rows,
                               int n_head, int head_dim,
                               const int32_t *delta, const dq_rope_params *r) {
  if (store != 0 && store != 1 && store != 2)
    return (int)cudaErrorInvalidValue;
  size_t n = (size_t)n_rows * (r->n_rot / 2);
  if (!n)
    return 0;
  DQ_CU_LAUNCH(k_kv_rotate, blocks_for(n), NT, 0, STREAM(s))(
      cache, store, n_rows, n_head, head_dim, delta, *r);
  return launched();
}

/* ---- GSM rows: gathers and statistics sums ------------------------------ */

/* One thread per word of dst (coalesced writes; gather.cuh's addressing,
 * checked on the host by test_cuda_logic). */
__global__ void k_gather(uint16_t *dst, const uint16_t *src,
                         const int32_t *map, int store, int row_elems,
                         int n_rows, size_t n) {
  GRID_LOOP(i, n) {
    size_t from = dqc_gather_src(store, row_elems, n_rows, map, i);
    if (from != (size_t)-1)
      dst[i] = src[from];
  }
}

extern "C" int dq_cu_kv_gather(void *s, void *dst, const void *src,
                               int store, const int32_t *map, int n_rows,
                               int row_elems) {
  if (n_rows <= 0)
    return 0;
  if (!dqc_gather_units(store, row_elems))
    return (int)cudaErrorInvalidValue;
  size_t n = dqc_gather_span(store, row_elems, n_rows);
  DQ_CU_LAUNCH(k_gather, grid_for(n), NT, 0, STREAM(s))(
      (uint16_t *)dst, (const uint16_t *)src, map, store, row_elems, n_rows, n);
  return launched();
}

/* y[j] = sum of x[r][j] over rows in order, x zeroed: one thread per j
 * (consecutive j, consecutive addresses in every row). */
__global__ void k_sum_rows(float *x, int n_rows, size_t stride, int n,
                           float *y) {
  GRID_LOOP(j, (size_t)n) {
    float acc = 0.0f;
    for (int r = 0; r < n_rows; r++) {
      acc += x[(size_t)r * stride + j];
      x[(size_t)r * stride + j] = 0.0f;
    }
    y[j] = acc;
  }
}

extern "C" int dq_cu_sum_rows(void *s, float *x, int n_rows, size_t stride,
                              int n, float *y) {
  if (n <= 0)
    return 0;
  DQ_CU_LAUNCH(k_sum_rows, grid_for((size_t)n), NT, 0, STREAM(s))(
      x, n_rows, stride, n, y);
  return launched();
}

/* ---- embedding rows ----------------------------------------------------- */

/* One thread per 16-element group of an output row: block gi / per, group
 * gi % per of row ids[blockIdx.y]. */
template <int T>
__global__ void k_get_rows(const uint8_t *w, size_t row_bytes, int64_t n_cols,
                           const int32_t *ids, float *y) {
  typedef dqc_traits<T> tr;
  const int per = tr::BE / 16;
  int64_t gi = (int64_t)blockIdx.x * NT + threadIdx.x;
  if (gi >= n_cols / 16)
    return;
  const uint8_t *row = w + (size_t)ids[blockIdx.y] * row_bytes;
  float v[16];
  tr::dequant16(row + (size_t)(gi / per) * tr::BB, (int)(gi % per), v);
  float *o = y + (size_t)blockIdx.y * n_cols + gi * 16;
  for (int i = 0; i < 16; i++)
    o[i] = v[i];
}

/* Rows in launches of at most 65535 (grid y's limit): a long prefill
 * embeds more tokens than that in one call. */
template <int T>
static void get_rows_run(cudaStream_t st, const uint8_t *w, size_t row_bytes,
                         int64_t n_cols, const int32_t *ids, int n, float *y) {
  const unsigned gx = (unsigned)((n_cols / 16 + NT - 1) / NT);
  void (*kern)(const uint8_t *, size_t, int64_t, const int32_t *, float *) =
      k_get_rows<T>;
  for (int r0 = 0; r0 < n; r0 += 65535) {
    const int m = n - r0 < 65535 ? n - r0 : 65535;
    DQ_CU_LAUNCH(kern, dim3(gx, (unsigned)m), NT, 0, st)(
        w, row_bytes, n_cols, ids + r0, y + (size_t)r0 * (size_t)n_cols);
  }
}

extern "C" int dq_cu_get_rows(void *s, int type, const void *data,
                              size_t row_bytes, int64_t n_cols,
                              const int32_t *ids, int n, float *y) {
  if (n <= 0 || n_cols <= 0)
    return 0;
  if (n_cols % 16)
    return (int)cudaErrorInvalidValue;
  const uint8_t *w = (const uint8_t *)data;
  cudaStream_t st = STREAM(s);
  switch (type) {
#define CASE(T)                                                                \
  case T:                                                                      \
    get_rows_run<T>(st, w, row_bytes, n_cols, ids, n, y);                      \
    break;
    CASE(DQ_TYPE_F32)
    CASE(DQ_TYPE_F16)
    CASE(DQ_TYPE_BF16)
    CASE(DQ_TYPE_Q4_0)
    CASE(DQ_TYPE_Q4_1)
    CASE(DQ_TYPE_Q5_0)
    CASE(DQ_TYPE_Q5_1)
    CASE(DQ_TYPE_Q8_0)
    CASE(DQ_TYPE_Q4_K)
    CASE(DQ_TYPE_Q6_K)
#undef CASE
  default:
    return (int)cudaErrorInvalidValue;
  }
  return launched();
}
