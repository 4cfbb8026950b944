/*
 * backend_cpu.c - the CPU implementation of the backend interface
 * (backend.h): device memory is host memory, weights are used in place in
 * the GGUF mapping, parallel ops run on the kernels' persistent thread
 * pool (n_threads, the caller included).
 *
 * Matrix products go through the kernels layer's dq_matmul (activations
 * quantized once per call to the weights' vec_dot type, SIMD dot products,
 * the kernels' persistent thread pool): a prefill batch is one
 * matrix-matrix call per weight, decode a matrix-vector call. Norms,
 * activations and plain RoPE are the kernels' row ops. Attention over the
 * KV cache (F32/F16/Q8_0 rows, causal, sliding window, grouped-query,
 * optional statistics) converts the cache to f32 rows and packed key
 * panels here and runs the kernels' dq_attn_run on blocks of queries;
 * YaRN RoPE and the KV stores are written here too, split across the same
 * pool. Mixture-of-experts routing follows moe.c's rule token by token;
 * expert dispatch groups a batch's tokens by expert and runs each active
 * expert's three matrices as ordinary matmuls on gathered rows. Block
 * layouts and dequantization live in kernels/.
 */
#include "backend.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct cpu_ctx {
  int n_threads;
  dq_threadpool *pool;
  dq_cpu_caps caps;
  float *f16_tab; /* 65536 entries: f16 bits -> f32 */
  /* mixture-of-experts scratch, grown on demand (cpu_moe_*) */
  float *moe_buf;
  size_t moe_cap; /* floats */
  int32_t *moe_idx;
  size_t moe_idx_cap;
} cpu_ctx;

size_t dq_row_bytes(uint32_t type, int64_t n) {
  const dq_type_info *ti = dq_type_get((int)type);
  size_t nb = 0;
  if (!ti || !ti->is_weight || n <= 0 || dq_type_row_bytes((int)type, n, &nb))
    return 0;
  return nb;
}

/* ---- threads ------------------------------------------------------------ */

/* Runs fn(arg, i, nth) for i in [0, nth) on the pool (nth <= pool size;
 * threads beyond nth return at once). */
typedef void (*work_fn)(void *arg, int ith, int nth);
typedef struct par_job {
  work_fn fn;
  void *arg;
  int nth;
} par_job;

static void par_task(void *p, int ith, int nth) {
  par_job *j = p;
  if (ith < j->nth)
    j->fn(j->arg, ith, j->nth);
}

static void par_run(cpu_ctx *c, int nth, work_fn fn, void *arg) {
  if (nth <= 1 || !c->pool) {
    fn(arg, 0, 1);
    return;
  }
  par_job j = {fn, arg, nth};
  dq_threadpool_run(c->pool, par_task, &j);
}


/* ---- memory ------------------------------------------------------------- */

static const char *cpu_name(void *ctx) { return "cpu"; }

static void cpu_free(void *vctx) {
  cpu_ctx *c = vctx;
  if (!c)
    return;
  dq_threadpool_free(c->pool);
  free(c->f16_tab);
  free(c->moe_buf);
  free(c->moe_idx);
  free(c);
}

static dq_status cpu_buf_alloc(void *ctx, size_t n_bytes, void **dev) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n_bytes ? n_bytes : 64) != 0)
    return DQ_ERR_NOMEM;
  memset(p, 0, n_bytes);
  *dev = p;
  return DQ_OK;
}
static void cpu_buf_free(void *ctx, void *dev) { free(dev); }
static dq_status cpu_weight_map(void *ctx, const void *host, size_t n_bytes,
                                const void **dev) {
  *dev = host;
  return DQ_OK;
}
static dq_status cpu_copy(void *ctx, void *dst, const void *src,
                          size_t n_bytes) {
  memmove(dst, src, n_bytes);
  return DQ_OK;
}
static dq_status cpu_copy_c(void *ctx, void *dst, const void *src,
                            size_t n_bytes) {
  memmove(dst, src, n_bytes);
  return DQ_OK;
}

/* ---- matmul ------------------------------------------------------------- */

static dq_status cpu_matmul(void *vctx, const dq_wmat *w, const float *x,
                            float *y, int n_tok) {
  cpu_ctx *c = vctx;
  return dq_matmul(c->pool, &c->caps, (int)w->type, w->data, w->n_rows,
                   w->n_cols, x, n_tok, y);
}

/* q, k and v (or gate and up) on one x: one conversion of x and one run
 * of the pool (dq_matmul_n), the same bits as separate products. */
static dq_status cpu_matmul_n(void *vctx, const dq_wmat *const *w, int n,
                              const float *x, float *const *y, int n_tok) {
  cpu_ctx *c = vctx;
  dq_mm_out o[DQ_MM_N_MAX];
  if (n < 1 || n > DQ_MM_N_MAX)
    return DQ_ERR_ARG;
  for (int k = 0; k < n; k++) {
    if (w[k]->n_cols != w[0]->n_cols)
      return DQ_ERR_ARG;
    o[k] = (dq_mm_out){(int)w[k]->type, w[k]->data, w[k]->n_rows, y[k]};
  }
  return dq_matmul_n(c->pool, &c->caps, n, o, w[0]->n_cols, x, n_tok);
}

static void cpu_glu(void *ctx, float *g, const float *u, size_t n, int act);

static dq_status cpu_matmul_glu(void *ctx, const dq_wmat *gate,
                                const dq_wmat *up, const float *x, float *h,
                                float *tmp, int n_tok, int act) {
  const dq_wmat *w[2] = {gate, up};
  float *y[2] = {h, tmp};
  dq_status st = cpu_matmul_n(ctx, w, 2, x, y, n_tok);
  if (!st)
    cpu_glu(ctx, h, tmp, (size_t)n_tok * gate->n_rows, act);
  return st;
}

static dq_status cpu_get_rows(void *ctx, const dq_wmat *w, const int32_t *ids,
                              int n, float *y) {
  for (int i = 0; i < n; i++) {
    if (ids[i] < 0 || ids[i] >= w->n_rows)
      return DQ_ERR_ARG;
    dq_status s = dq_dequantize_row(
        (int)w->type, (const uint8_t *)w->data + (size_t)ids[i] * w->row_bytes,
        y + (size_t)i * w->n_cols, w->n_cols);
    if (s)
      return s;
  }
  return DQ_OK;
}

/* ---- element-wise ops --------------------------------------------------- */

/* Element-wise and per-row ops of a prefill (n_tok rows, or n elements)
 * split over the pool: every row or element is computed alone, so results
 * are the same bits for any split. Below EW_MIN floats (decode) they run
 * on the calling thread without waking the workers. */
#define EW_MIN 16384
#define EW_ALIGN 64 /* element ranges start at multiples of this */

typedef struct ew_job ew_job;
struct ew_job {
  void (*fn)(const ew_job *j, int64_t lo, int64_t hi);
  int64_t n, align; /* rows (align 1) or elements */
  const float *x, *w, *b, *u;
  float *y, *k;
  const int32_t *pos;
  const dq_rope_params *r;
  const dq_cpu_caps *caps; /* gelu, glu */
  int dim, n_head, n_head_k, head_dim, act;
  float eps;
};

static void ew_task(void *ctx, int ith, int nth) {
  const ew_job *j = ctx;
  int64_t per = (j->n + nth - 1) / nth;
  per = (per + j->align - 1) / j->align * j->align;
  int64_t lo = per * ith < j->n ? per * ith : j->n;
  int64_t hi = lo + per < j->n ? lo + per : j->n;
  if (lo < hi)
    j->fn(j, lo, hi);
}

/* Runs j over its n items; floats: the work's size. */
static void ew_run(cpu_ctx *c, ew_job *j, size_t floats) {
  par_run(c, floats < EW_MIN ? 1 : c->n_threads, ew_task, j);
}

static void ew_rmsnorm(const ew_job *j, int64_t lo, int64_t hi) {
  for (int64_t t = lo; t < hi; t++)
    dq_rmsnorm(j->y + t * j->dim, j->x + t * j->dim, j->w, j->dim, j->eps);
}
static void cpu_rmsnorm(void *ctx, const float *x, const float *w, float *y,
                        int n_tok, int dim, float eps) {
  ew_job j = {.fn = ew_rmsnorm, .n = n_tok, .align = 1, .x = x, .w = w,
              .y = y, .dim = dim, .eps = eps};
  ew_run(ctx, &j, (size_t)n_tok * dim);
}

static void ew_layernorm(const ew_job *j, int64_t lo, int64_t hi) {
  for (int64_t t = lo; t < hi; t++)
    dq_layernorm(j->y + t * j->dim, j->x + t * j->dim, j->w, j->b, j->dim,
                 j->eps);
}
static void cpu_layernorm(void *ctx, const float *x, const float *w,
                          const float *b, float *y, int n_tok, int dim,
                          float eps) {
  ew_job j = {.fn = ew_layernorm, .n = n_tok, .align = 1, .x = x, .w = w,
              .b = b, .y = y, .dim = dim, .eps = eps};
  ew_run(ctx, &j, (size_t)n_tok * dim);
}

static void cpu_rope_yarn(float *x, int n_tok, int n_head, int head_dim,
                          const int32_t *pos, const dq_rope_params *r);

static void ew_rope(const ew_job *j, int64_t lo, int64_t hi) {
  size_t q = (size_t)j->n_head * j->head_dim,
         k = (size_t)j->n_head_k * j->head_dim;
  dq_rope_qk(j->y + lo * q, j->n_head, j->k ? j->k + lo * k : NULL,
             j->n_head_k, j->head_dim, j->r->n_rot, j->pos + lo, hi - lo,
             j->r->base, j->r->freq_scale, j->r->neox);
}

/* RoPE on q (n_head heads) and, when k is not NULL, k (n_head_k): plain
 * and linearly scaled by the kernels' dq_rope_qk (each angle once for
 * both), YaRN here. */
static void rope_qk(cpu_ctx *c, float *q, float *k, int n_tok, int n_head,
                    int n_head_k, int head_dim, const int32_t *pos,
                    const dq_rope_params *r) {
  if (r->ext_factor != 0.0f || r->attn_factor != 1.0f) {
    cpu_rope_yarn(q, n_tok, n_head, head_dim, pos, r);
    if (k)
      cpu_rope_yarn(k, n_tok, n_head_k, head_dim, pos, r);
    return;
  }
  ew_job j = {.fn = ew_rope, .n = n_tok, .align = 1, .y = q, .k = k,
              .pos = pos, .r = r, .n_head = n_head, .n_head_k = n_head_k,
              .head_dim = head_dim};
  ew_run(c, &j, (size_t)n_tok * (n_head + (k ? n_head_k : 0)) * head_dim);
}
static void cpu_rope(void *ctx, float *x, int n_tok, int n_head, int head_dim,
                     const int32_t *pos, const dq_rope_params *r) {
  rope_qk(ctx, x, NULL, n_tok, n_head, 0, head_dim, pos, r);
}
static void cpu_rope_qk(void *ctx, float *q, float *k, int n_tok, int n_head,
                        int n_head_kv, int head_dim, const int32_t *pos,
                        const dq_rope_params *r) {
  rope_qk(ctx, q, k, n_tok, n_head, n_head_kv, head_dim, pos, r);
}

/* YaRN (not in kernels/): ggml's ramp between interpolated and
 * extrapolated angles. */
static void cpu_rope_yarn(float *x, int n_tok, int n_head, int head_dim,
                          const int32_t *pos, const dq_rope_params *r) {
  int half = r->n_rot / 2;
  for (int t = 0; t < n_tok; t++) {
    for (int i = 0; i < half; i++) {
      float theta_extrap =
          (float)pos[t] * powf(r->base, -2.0f * (float)i / (float)r->n_rot);
      float theta = r->freq_scale * theta_extrap, mscale = r->attn_factor;
      if (r->ext_factor != 0.0f) {
        float yv = ((float)i - r->corr_low) /
                   fmaxf(0.001f, r->corr_high - r->corr_low);
        float ramp = (1.0f - fminf(1.0f, fmaxf(0.0f, yv))) * r->ext_factor;
        theta = theta * (1 - ramp) + theta_extrap * ramp;
        mscale *= 1.0f + 0.1f * logf(1.0f / r->freq_scale);
      }
      float cs = cosf(theta) * mscale, sn = sinf(theta) * mscale;
      for (int h = 0; h < n_head; h++) {
        float *v = x + ((size_t)t * n_head + h) * head_dim;
        int a = r->neox ? i : 2 * i, b = r->neox ? i + half : 2 * i + 1;
        float x0 = v[a], x1 = v[b];
        v[a] = x0 * cs - x1 * sn;
        v[b] = x0 * sn + x1 * cs;
      }
    }
  }
}

static void cpu_add(void *ctx, float *y, const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    y[i] += x[i];
}
static void cpu_add_row(void *ctx, float *y, const float *b, int n_tok,
                        int dim) {
  for (int t = 0; t < n_tok; t++)
    for (int i = 0; i < dim; i++)
      y[(size_t)t * dim + i] += b[i];
}
static void cpu_scale(void *ctx, float *y, float s, size_t n) {
  for (size_t i = 0; i < n; i++)
    y[i] *= s;
}
static void ew_gelu(const ew_job *j, int64_t lo, int64_t hi) {
  if (j->act)
    dq_gelu_tanh_isa(j->caps, j->y + lo, j->y + lo, hi - lo);
  else
    dq_gelu_erf_isa(j->caps, j->y + lo, j->y + lo, hi - lo);
}
static void cpu_gelu(void *ctx, float *y, size_t n, int tanh_approx) {
  ew_job j = {.fn = ew_gelu, .n = (int64_t)n, .align = EW_ALIGN, .y = y,
              .act = tanh_approx, .caps = &((cpu_ctx *)ctx)->caps};
  ew_run(ctx, &j, n);
}
static void ew_glu(const ew_job *j, int64_t lo, int64_t hi) {
  if (j->act)
    dq_gelu_tanh_isa(j->caps, j->y + lo, j->y + lo, hi - lo);
  else
    dq_silu_isa(j->caps, j->y + lo, j->y + lo, hi - lo);
  dq_mul(j->y + lo, j->y + lo, j->u + lo, hi - lo);
}
static void cpu_glu(void *ctx, float *g, const float *u, size_t n, int act) {
  ew_job j = {.fn = ew_glu, .n = (int64_t)n, .align = EW_ALIGN, .y = g,
              .u = u, .act = act, .caps = &((cpu_ctx *)ctx)->caps};
  ew_run(ctx, &j, n);
}

static void cpu_kv_store(void *ctx, void *cache, int store, int row0,
                         const float *x, int n_rows, int row_elems) {
  for (int r = 0; r < n_rows; r++) {
    const float *xr = x + (size_t)r * row_elems;
    size_t row = (size_t)(row0 + r);
    if (store == DQ_STORE_F16P) { /* keys: panels of 16 positions */
      uint16_t *d = (uint16_t *)cache + (row / 16) * (size_t)row_elems * 16 +
                    row % 16;
      for (int i = 0; i < row_elems; i++)
        d[(size_t)i * 16] = dq_f32_to_f16(xr[i]);
    } else if (store == DQ_STORE_F32) {
      memcpy((float *)cache + row * row_elems, xr, (size_t)row_elems * 4);
    } else if (store == DQ_STORE_F16) {
      uint16_t *d = (uint16_t *)cache + row * row_elems;
      for (int i = 0; i < row_elems; i++)
        d[i] = dq_f32_to_f16(xr[i]);
    } else { /* Q8_0, row_elems % 32 == 0 */
      uint8_t *d = (uint8_t *)cache + row * (size_t)(row_elems / 32) * 34;
      for (int b = 0; b < row_elems / 32; b++, d += 34) {
        float amax = 0;
        for (int i = 0; i < 32; i++)
          amax = fmaxf(amax, fabsf(xr[b * 32 + i]));
        float dd = amax / 127.0f, id = dd ? 1.0f / dd : 0.0f;
        uint16_t h = dq_f32_to_f16(dd);
        memcpy(d, &h, 2);
        for (int i = 0; i < 32; i++)
          d[2 + i] = (uint8_t)(int8_t)roundf(xr[b * 32 + i] * id);
      }
    }
  }
}

/* ---- attention ---------------------------------------------------------- */

typedef struct attn_job {
  const dq_attn *a;
  cpu_ctx *c;
  /* per KV head g: packed keys at kt + g * kt_elems, values (n_kv rows of
   * head_dim) at vf + g * v_elems; or (f16) the cache itself: keys in its
   * interleaved panels, values in its rows */
  const float *kt, *vf;
  size_t kt_elems, v_elems;
  int f16;
  /* items per KV head: by_token - (token, slice of the group's heads), the
   * heads of a slice sharing each key panel and value row; otherwise (head
   * in group, token chunk), queries = consecutive tokens of one head */
  int by_token, slices;
  int items_per_g, n_items, per_head_items;
  size_t ps; /* probability row stride */
  int failed;
} attn_job;

/* Converts rows [r0, r1) of KV head g of an F32 or Q8_0 cache to f32. */
static void cache_rows_f32(const cpu_ctx *c, const void *cache, int store,
                           int row_elems, int g, int hd, int r0, int r1,
                           float *dst) {
  for (int r = r0; r < r1; r++) {
    float *d = dst + (size_t)r * hd;
    if (store == DQ_STORE_F32) {
      memcpy(d, (const float *)cache + (size_t)r * row_elems + (size_t)g * hd,
             (size_t)hd * 4);
    } else { /* Q8_0 (F16 caches are read in place, not converted) */
      const uint8_t *s = (const uint8_t *)cache +
                         (size_t)r * (row_elems / 32) * 34 +
                         (size_t)g * (hd / 32) * 34;
      for (int b = 0; b < hd / 32; b++, s += 34) {
        uint16_t h;
        memcpy(&h, s, 2);
        float dd = c->f16_tab[h];
        for (int i = 0; i < 32; i++)
          d[b * 32 + i] = (float)(int8_t)s[2 + i] * dd;
      }
    }
  }
}

typedef struct conv_job {
  attn_job *aj;
  float *kf, *kt, *vf;
} conv_job;

/* Keys and values of every KV head to f32, keys then packed into panels;
 * items are (KV head, panel-aligned row range). */
static void conv_worker(void *arg, int ith, int nth) {
  conv_job *cj = arg;
  const attn_job *j = cj->aj;
  const dq_attn *a = j->a;
  int hd = a->head_dim, row_elems = a->n_head_kv * hd;
  int n_pan = (a->n_kv + DQ_ATTN_PANEL - 1) / DQ_ATTN_PANEL;
  int per = (n_pan + 7) / 8; /* panels per item: 8 items per head */
  int items = (n_pan + per - 1) / per * a->n_head_kv;
  for (int it = ith; it < items; it += nth) {
    int g = it % a->n_head_kv, r0 = (it / a->n_head_kv) * per * DQ_ATTN_PANEL;
    int r1 = r0 + per * DQ_ATTN_PANEL < a->n_kv ? r0 + per * DQ_ATTN_PANEL
                                                : a->n_kv;
    float *kf = cj->kf + (size_t)g * j->v_elems;
    cache_rows_f32(j->c, a->k, a->store, row_elems, g, hd, r0, r1, kf);
    dq_attn_pack_k(kf, (size_t)hd, r0, r1, a->n_kv, hd,
                   cj->kt + (size_t)g * j->kt_elems);
    cache_rows_f32(j->c, a->v, a->store, row_elems, g, hd, r0, r1,
                   cj->vf + (size_t)g * j->v_elems);
  }
}

/* Adds one query's probabilities (keys [lo, hi) visible) to its head's
 * statistics row, and their sum over rows [qmass_lo, qmass_hi) to its
 * query mass. */
static void add_stats(const dq_attn *a, int h, int p, const float *pr,
                      int lo, int hi) {
  if (a->stats && p >= a->stats_q0 && p < a->stats_q1) {
    float *st = a->stats + (size_t)h * a->stats_stride;
    for (int k = lo; k < hi; k++)
      st[k] += pr[k];
  }
  if (a->qmass) {
    int k0 = lo > a->qmass_lo ? lo : a->qmass_lo;
    int k1 = hi < a->qmass_hi ? hi : a->qmass_hi;
    float m = 0;
    for (int k = k0; k < k1; k++)
      m += pr[k];
    a->qmass[(size_t)h * a->qmass_stride + (p - a->pos0)] += m;
  }
}

static void attn_worker(void *arg, int ith, int nth) {
  attn_job *j = arg;
  const dq_attn *a = j->a;
  int hd = a->head_dim, group = a->n_head / a->n_head_kv;
  float *pbuf = malloc(DQ_ATTN_QB * j->ps * sizeof(float));
  if (!pbuf) {
    j->failed = 1;
    return;
  }
  dq_attn_block b = {.v_stride = (size_t)hd, .bias = a->bias, .n = a->n_kv,
                     .hd = hd, .scale = a->scale, .p = pbuf,
                     .p_stride = j->ps};
  int qh[DQ_ATTN_QB], qp[DQ_ATTN_QB];
  for (int item = ith; item < j->n_items; item += nth) {
    int g = item / j->items_per_g, it = item % j->items_per_g;
    int t0, t1, hh0, hh1;
    if (j->f16) {
      size_t re = (size_t)a->n_head_kv * hd;
      b.kt = (const dq_f16 *)a->k + (size_t)g * hd * DQ_ATTN_PANEL;
      b.kt_stride = re * DQ_ATTN_PANEL;
      b.v = (const dq_f16 *)a->v + (size_t)g * hd;
      b.v_stride = re;
      b.f16 = 1;
    } else {
      b.kt = j->kt + (size_t)g * j->kt_elems;
      b.v = j->vf + (size_t)g * j->v_elems;
    }
    if (j->by_token) {
      int per = (group + j->slices - 1) / j->slices, s = it % j->slices;
      t0 = it / j->slices, t1 = t0 + 1;
      hh0 = s * per, hh1 = hh0 + per < group ? hh0 + per : group;
    } else {
      int tper = (a->n_tok + j->per_head_items - 1) / j->per_head_items;
      hh0 = it / j->per_head_items, hh1 = hh0 + 1;
      t0 = (it % j->per_head_items) * tper;
      t1 = t0 + tper < a->n_tok ? t0 + tper : a->n_tok;
    }
    /* queries in (token, head) order, DQ_ATTN_QB at a time */
    int nq = 0;
    for (int t = t0; t < t1; t++) {
      for (int hh = hh0; hh < hh1; hh++) {
        int h = g * group + hh, p = a->pos0 + t;
        int hi = a->causal ? (p + 1 < a->n_kv ? p + 1 : a->n_kv) : a->n_kv;
        int lo = 0;
        if (a->window > 0 && a->causal && p - a->window + 1 > 0)
          lo = p - a->window + 1;
        b.q[nq] = a->q + ((size_t)t * a->n_head + h) * hd;
        b.o[nq] = a->out + ((size_t)t * a->n_head + h) * hd;
        b.lo[nq] = lo;
        b.hi[nq] = hi;
        qh[nq] = h;
        qp[nq] = p;
        if (++nq == DQ_ATTN_QB || (t == t1 - 1 && hh == hh1 - 1)) {
          b.nq = nq;
          dq_attn_run(&j->c->caps, &b);
          for (int i = 0; i < nq; i++)
            add_stats(a, qh[i], qp[i], pbuf + (size_t)i * j->ps, (int)b.lo[i],
                      (int)b.hi[i]);
          nq = 0;
        }
      }
    }
  }
  free(pbuf);
}

static dq_status cpu_attention(void *vctx, const dq_attn *a) {
  cpu_ctx *c = vctx;
  if (a->n_head % a->n_head_kv || a->n_kv <= 0)
    return DQ_ERR_ARG;
  int hd = a->head_dim, group = a->n_head / a->n_head_kv;
  size_t padded = (size_t)dq_attn_padded(a->n_kv);
  attn_job j = {.a = a, .c = c, .ps = padded,
                .v_elems = (size_t)a->n_kv * hd, .kt_elems = padded * hd,
                .f16 = a->store == DQ_STORE_F16};
  /* other stores: f32 keys (scratch for packing), values, packed keys of
   * every KV head, converted per call */
  float *kf = j.f16 ? NULL
                    : malloc((j.v_elems * 2 + j.kt_elems) * a->n_head_kv *
                             sizeof(float));
  if (!j.f16 && !kf)
    return DQ_ERR_NOMEM;
  float *vf = kf ? kf + j.v_elems * a->n_head_kv : NULL;
  float *kt = vf ? vf + j.v_elems * a->n_head_kv : NULL;
  j.kt = kt;
  j.vf = vf;
  /* Decode (few tokens): items per token, each a slice of its group's
   * heads (enough slices to give every thread work). Prefill: items per
   * head, so that with statistics one head's row is written by one thread
   * only. */
  j.by_token = a->n_tok < 8; /* fewer tokens than the kernel's register
                                block of 8 queries */
  if (j.by_token) {
    int want = (c->n_threads + a->n_tok * a->n_head_kv - 1) /
               (a->n_tok * a->n_head_kv);
    j.slices = a->stats ? 1 : want < group ? want : group;
    j.items_per_g = a->n_tok * j.slices;
  } else {
    j.per_head_items = a->stats ? 1 : (a->n_tok < c->n_threads ? a->n_tok
                                                                : c->n_threads);
    j.items_per_g = group * j.per_head_items;
  }
  j.n_items = j.items_per_g * a->n_head_kv;
  conv_job cj = {&j, kf, kt, vf};
  if (!j.f16)
    par_run(c, a->n_kv >= 256 ? c->n_threads : 1, conv_worker, &cj);
  int nth = j.n_items < c->n_threads ? j.n_items : c->n_threads;
  /* with statistics and per-token items, two items may share a head row */
  if ((size_t)a->n_tok * a->n_kv < 4096 || (j.by_token && a->stats))
    nth = 1;
  par_run(c, nth, attn_worker, &j);
  free(kf);
  return j.failed ? DQ_ERR_NOMEM : DQ_OK;
}

/* ---- mixture of experts ------------------------------------------------ */

static dq_status moe_reserve(cpu_ctx *c, size_t n_floats, size_t n_idx) {
  if (n_floats > c->moe_cap) {
    float *p = realloc(c->moe_buf, n_floats * sizeof *p);
    if (!p)
      return DQ_ERR_NOMEM;
    c->moe_buf = p;
    c->moe_cap = n_floats;
  }
  if (n_idx > c->moe_idx_cap) {
    int32_t *p = realloc(c->moe_idx, n_idx * sizeof *p);
    if (!p)
      return DQ_ERR_NOMEM;
    c->moe_idx = p;
    c->moe_idx_cap = n_idx;
  }
  return DQ_OK;
}

static dq_status cpu_moe_route(void *vctx, const dq_moe_route *a) {
  cpu_ctx *c = vctx;
  const dq_moe_cfg *cf = &a->cfg;
  int n = cf->n_expert, k = cf->n_used;
  dq_status st = moe_reserve(c, 2 * (size_t)n + (size_t)cf->n_group + 1,
                             (size_t)k);
  if (st)
    return st;
  for (int t = 0; t < a->n_tok; t++) {
    int32_t *ids = a->ids + (size_t)t * k;
    dq_moe_route_one(cf, a->logits + (size_t)t * n, a->bias, ids,
                     a->w + (size_t)t * k, a->load ? c->moe_idx : NULL,
                     c->moe_buf);
    if (a->load)
      for (int j = 0; j < k; j++) {
        a->load[ids[j]]++;
        a->load[n + c->moe_idx[j]]++;
      }
  }
  return DQ_OK;
}

/* Expert e's view of a stacked expert tensor (stride 0: packed). */
static dq_wmat expert_view(const dq_wmat *w, size_t stride, int e) {
  dq_wmat v = *w;
  if (!stride)
    stride = (size_t)w->n_rows * w->row_bytes;
  v.data = (const uint8_t *)w->data + (size_t)e * stride;
  return v;
}

/* Tokens grouped by expert (counting sort of the n_tok * n_used routing
 * pairs); per active expert its tokens' rows are gathered, run through
 * gate/up/down as matrix-matrix products, and each result row kept at its
 * pair; then every token sums its pairs in routing order, so a token's
 * output does not depend on which other tokens share its batch (the
 * matmul kernels of the 32-element block types are batch-invariant). */
static dq_status cpu_moe_ffn(void *vctx, const dq_moe_ffn *a) {
  cpu_ctx *c = vctx;
  int k = a->n_used, ne = a->n_expert, nt = a->n_tok;
  int64_t E = a->gate->n_cols, F = a->gate->n_rows, O = a->down->n_rows;
  size_t np = (size_t)nt * k;
  /* floats: pair results np*O, gathered x nt*E, gate nt*F, up nt*F, down
   * nt*O; ints: pairs by expert np, expert starts ne+1 */
  size_t nf = np * (size_t)O + (size_t)nt * (size_t)(E + 2 * F + O);
  dq_status st = moe_reserve(c, nf, np + (size_t)ne + 1);
  if (st)
    return st;
  float *res = c->moe_buf, *xg = res + np * O, *g = xg + (size_t)nt * E,
        *u = g + (size_t)nt * F, *d = u + (size_t)nt * F;
  int32_t *order = c->moe_idx, *start = c->moe_idx + np;
  memset(start, 0, ((size_t)ne + 1) * sizeof *start);
  for (size_t p = 0; p < np; p++) {
    int e = a->ids[p];
    if (e < 0 || e >= ne)
      return DQ_ERR_ARG;
    start[e + 1]++;
  }
  for (int e = 0; e < ne; e++)
    start[e + 1] += start[e];
  /* fill: order[start[e] ..] = pairs routed to e, in token order */
  for (size_t p = 0; p < np; p++)
    order[start[a->ids[p]]++] = (int32_t)p;
  for (int e = ne; e > 0; e--)
    start[e] = start[e - 1];
  start[0] = 0;
  for (int e = 0; e < ne; e++) {
    int cnt = start[e + 1] - start[e];
    if (!cnt)
      continue;
    const int32_t *pe = order + start[e];
    for (int i = 0; i < cnt; i++)
      memcpy(xg + (size_t)i * E, a->x + (size_t)(pe[i] / k) * E,
             (size_t)E * 4);
    dq_wmat wg = expert_view(a->gate, a->gate_stride, e),
            wu = expert_view(a->up, a->up_stride, e),
            wd = expert_view(a->down, 0, e);
    if ((st = cpu_matmul(c, &wg, xg, g, cnt)) ||
        (st = cpu_matmul(c, &wu, xg, u, cnt)))
      return st;
    cpu_glu(c, g, u, (size_t)cnt * F, a->act);
    if ((st = cpu_matmul(c, &wd, g, d, cnt)))
      return st;
    for (int i = 0; i < cnt; i++)
      memcpy(res + (size_t)pe[i] * O, d + (size_t)i * O, (size_t)O * 4);
  }
  for (int t = 0; t < nt; t++) {
    float *o = a->out + (size_t)t * O;
    for (int j = 0; j < k; j++) {
      const float *r = res + ((size_t)t * k + j) * O;
      float wj = a->w[(size_t)t * k + j];
      if (j == 0)
        for (int64_t i = 0; i < O; i++)
          o[i] = wj * r[i];
      else
        for (int64_t i = 0; i < O; i++)
          o[i] += wj * r[i];
    }
  }
  return DQ_OK;
}

static void cpu_copy2d(void *ctx, float *dst, size_t dst_stride,
                       const float *src, size_t src_stride, int n_rows,
                       int row_len) {
  for (int r = 0; r < n_rows; r++)
    memmove(dst + (size_t)r * dst_stride, src + (size_t)r * src_stride,
            (size_t)row_len * 4);
}

static void cpu_gate_rows(void *ctx, float *y, const float *g, int n_tok,
                          int dim) {
  for (int t = 0; t < n_tok; t++) {
    float s = 1.0f / (1.0f + expf(-g[t]));
    for (int i = 0; i < dim; i++)
      y[(size_t)t * dim + i] *= s;
  }
}

static void cpu_mean_pool_l2(void *ctx, const float *x, int n_tok, int dim,
                             float *out) {
  for (int i = 0; i < dim; i++) {
    double s = 0;
    for (int t = 0; t < n_tok; t++)
      s += x[(size_t)t * dim + i];
    out[i] = (float)(s / n_tok);
  }
  double nn = 0;
  for (int i = 0; i < dim; i++)
    nn += (double)out[i] * out[i];
  float inv = nn > 0 ? (float)(1.0 / sqrt(nn)) : 0.0f;
  for (int i = 0; i < dim; i++)
    out[i] *= inv;
}

/* ---- GSM rows on the device (gsm.c) -------------------------------------- */

static void cpu_kv_gather(void *ctx, void *dst, const void *src, int store,
                          const int32_t *map, int n, int row_elems) {
  if (store == DQ_STORE_F16P) {
    uint16_t *d = dst;
    const uint16_t *s = src;
    for (int r = 0; r < n; r++) {
      size_t m = (size_t)map[r];
      uint16_t *dr = d + ((size_t)r / 16) * row_elems * 16 + r % 16;
      const uint16_t *sr = s + (m / 16) * row_elems * 16 + m % 16;
      for (int i = 0; i < row_elems; i++)
        dr[(size_t)i * 16] = sr[(size_t)i * 16];
    }
    return;
  }
  size_t rb = 0; /* F32, F16, Q8_0 rows: store ids are their ggml types */
  dq_type_row_bytes(store, row_elems, &rb);
  for (int r = 0; r < n; r++)
    memcpy((uint8_t *)dst + (size_t)r * rb,
           (const uint8_t *)src + (size_t)map[r] * rb, rb);
}

static void cpu_sum_rows(void *ctx, float *x, int n_rows, size_t stride,
                         int n, float *y) {
  for (int j = 0; j < n; j++)
    y[j] = 0;
  for (int r = 0; r < n_rows; r++) {
    float *xr = x + (size_t)r * stride;
    for (int j = 0; j < n; j++)
      y[j] += xr[j];
    memset(xr, 0, (size_t)n * sizeof *xr);
  }
}

static dq_status cpu_top_k(void *ctx, const float *x, int n,
                           const int32_t *pen, int n_pen, float penalty,
                           int k, int32_t *out) {
  (void)ctx;
  dq_status st = dq_top_k(x, n, pen, n_pen, penalty, k, NULL, out + 1,
                          (float *)(out + 1 + k));
  out[0] = st ? 0 : k;
  return st;
}

/* Row r of a key cache as f32 (F16P panels; F16/F32/Q8_0 rows, whose
 * store ids are their ggml types, by the kernels' row decoder). */
static void key_row_f32(const cpu_ctx *c, const void *cache, int store,
                        int r, int re, float *out) {
  if (store == DQ_STORE_F16P) {
    const uint16_t *p = (const uint16_t *)cache +
                        ((size_t)r / 16) * re * 16 + r % 16;
    for (int i = 0; i < re; i++)
      out[i] = c->f16_tab[p[(size_t)i * 16]];
    return;
  }
  size_t rb = 0;
  dq_type_row_bytes(store, re, &rb);
  dq_dequantize_row(store, (const uint8_t *)cache + (size_t)r * rb, out, re);
}

/* Similarity of rows ra and rb of a job's keys (ka, kb: row scratch). */
static float merge_sim(const cpu_ctx *c, const dq_kv_merge *a, const void *k,
                       int ra, int rb, float *ka, float *kb) {
  int re = a->n_head_kv * a->head_dim;
  key_row_f32(c, k, a->store_k, ra, re, ka);
  key_row_f32(c, k, a->store_k, rb, re, kb);
  return dq_kv_sim(ka, kb, a->n_head_kv, a->head_dim);
}

/* backend.h dq_kv_merge, job by job, in the order gsm.c's host merges run
 * (the same choices and the same floats as rows on the host). Scratch per
 * row: similarity, next and previous live position (a dead one's next is
 * -2), count. */
static dq_status cpu_kv_merge(void *ctx, const dq_kv_merge *a) {
  cpu_ctx *c = ctx;
  int re = a->n_head_kv * a->head_dim;
  float *buf = malloc((size_t)4 * re * sizeof *buf);
  if (!buf)
    return DQ_ERR_NOMEM;
  float *ka = buf, *kb = ka + re, *va = kb + re, *vb = va + re;
  for (int jb = 0; jb < a->n_jobs; jb++) {
    const dq_kv_merge_job *J = &a->jobs[jb];
    int m = J->m;
    const int32_t *rows = a->rows + J->off;
    int32_t *pairs = a->pairs + 2 * (size_t)J->off;
    uint8_t *sc = (uint8_t *)a->scratch + 16 * (size_t)J->off;
    float *sim = (float *)(void *)sc;
    int32_t *nx = (int32_t *)(void *)(sc + 4 * (size_t)m), *pv = nx + m,
            *cnt = pv + m;
    for (int i = 0; i < m; i++) {
      nx[i] = i + 1 < m ? i + 1 : -1;
      pv[i] = i - 1;
      cnt[i] = a->count[J->off + i];
      sim[i] = nx[i] >= 0 ? merge_sim(c, a, J->k, rows[i], rows[i + 1], ka, kb)
                          : -INFINITY;
    }
    for (int t = 0; t < J->n_merge; t++) {
      int best = -1;
      for (int i = 0; i < m; i++)
        if (nx[i] >= 0 && (best < 0 || sim[i] > sim[best]))
          best = i;
      if (best < 0) {
        for (; t < J->n_merge; t++)
          pairs[2 * t] = pairs[2 * t + 1] = -1;
        break;
      }
      int j = nx[best], ri = rows[best], rj = rows[j];
      float wa = (float)cnt[best] / (float)(cnt[best] + cnt[j]);
      key_row_f32(c, J->k, a->store_k, ri, re, ka);
      key_row_f32(c, J->k, a->store_k, rj, re, kb);
      key_row_f32(c, J->v, a->store_v, ri, re, va);
      key_row_f32(c, J->v, a->store_v, rj, re, vb);
      dq_kv_mix(ka, kb, wa, (size_t)re);
      dq_kv_mix(va, vb, wa, (size_t)re);
      cpu_kv_store(ctx, J->k, a->store_k, ri, ka, 1, re);
      cpu_kv_store(ctx, J->v, a->store_v, ri, va, 1, re);
      cnt[best] += cnt[j];
      nx[best] = nx[j];
      if (nx[j] >= 0)
        pv[nx[j]] = best;
      nx[j] = -2;
      pairs[2 * t] = best;
      pairs[2 * t + 1] = j;
      sim[best] = nx[best] >= 0 ? merge_sim(c, a, J->k, ri, rows[nx[best]],
                                            ka, kb)
                                : -INFINITY;
      if (pv[best] >= 0)
        sim[pv[best]] = merge_sim(c, a, J->k, rows[pv[best]], ri, ka, kb);
    }
  }
  free(buf);
  return DQ_OK;
}

/* backend.h dq_kv_fold: a job's rows as f32 in the scratch (f rows of
 * keys then values), then dq_gsm_scan's operations on them in its order
 * (each step in place from the last row down: row t - d still holds the
 * step's input when row t reads it). */
static dq_status cpu_kv_fold(void *ctx, const dq_kv_fold *a) {
  cpu_ctx *c = ctx;
  size_t re = (size_t)a->row_elems, dim = 2 * re;
  for (int jb = 0; jb < a->n_jobs; jb++) {
    const dq_kv_fold_job *J = &a->jobs[jb];
    const int32_t *rows = a->rows + J->off;
    const float *cf = a->coef + J->coef_off;
    float *b = a->scratch;
    int f = J->f, n_steps = dq_kv_fold_steps(f);
    for (int t = 0; t < f; t++) {
      float *bt = b + (size_t)t * dim;
      key_row_f32(c, J->k, a->store_k, rows[t], (int)re, bt);
      key_row_f32(c, J->v, a->store_v, rows[t], (int)re, bt + re);
      for (size_t x = 0; x < dim; x++)
        bt[x] *= cf[t];
    }
    for (int s = 0, d = 1; s < n_steps; s++, d *= 2) {
      const float *A = cf + (size_t)f * (1 + s);
      for (int t = f - 1; t >= d; t--) {
        float at = A[t], *bt = b + (size_t)t * dim;
        const float *bp = b + (size_t)(t - d) * dim;
        for (size_t x = 0; x < dim; x++)
          bt[x] = at * bp[x] + bt[x];
      }
    }
    const float *last = b + (size_t)(f - 1) * dim;
    cpu_kv_store(ctx, J->k, a->store_k, rows[0], last, 1, (int)re);
    cpu_kv_store(ctx, J->v, a->store_v, rows[0], last + re, 1, (int)re);
  }
  return DQ_OK;
}

static void cpu_kv_rotate(void *ctx, void *cache, int store, int n_rows,
                          int n_head, int head_dim, const int32_t *delta,
                          const dq_rope_params *r) {
  cpu_ctx *c = ctx;
  int re = n_head * head_dim, half = r->n_rot / 2;
  /* a row and a unit vector: on the stack for rows up to 8k elements (no
   * failure to report from this void op), else from the heap */
  float stack[8192], *row = stack;
  if ((size_t)re + head_dim > sizeof stack / sizeof *stack &&
      !(row = malloc((size_t)(re + head_dim) * sizeof *row)))
    return; /* out of memory: rows stay as they are */
  float *unit = row + re;
  for (int k = 0; k < n_rows; k++) {
    int32_t d = delta[k];
    if (!d)
      continue;
    key_row_f32(c, cache, store, k, re, row);
    /* the rotation at d as the RoPE op gives it (a unit vector per pair),
     * its magnitude divided out, inverted (sine negated) */
    for (int i = 0; i < half; i++) {
      int a = r->neox ? i : 2 * i, b = r->neox ? i + half : 2 * i + 1;
      memset(unit, 0, (size_t)head_dim * sizeof *unit);
      unit[a] = 1;
      cpu_rope(ctx, unit, 1, 1, head_dim, &d, r);
      double m = hypot(unit[a], unit[b]);
      float cs = (float)(unit[a] / m), sn = (float)(-unit[b] / m);
      for (int h = 0; h < n_head; h++) {
        float *v = row + (size_t)h * head_dim, x0 = v[a], x1 = v[b];
        v[a] = x0 * cs - x1 * sn;
        v[b] = x0 * sn + x1 * cs;
      }
    }
    cpu_kv_store(ctx, cache, store, k, row, 1, re);
  }
  if (row != stack)
    free(row);
}

/* ---- construction ------------------------------------------------------- */

dq_status dq_backend_cpu_init(int n_threads, dq_backend **out,
                              dq_error *err) {
  *out = NULL;
  dq_backend *be = calloc(1, sizeof *be);
  cpu_ctx *c = calloc(1, sizeof *c);
  if (!be || !c)
    goto fail;
  if (n_threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    n_threads = n > 0 ? (int)n : 1;
  }
  c->n_threads = n_threads > 256 ? 256 : n_threads;
  c->f16_tab = malloc(65536 * sizeof(float));
  if (!c->f16_tab || dq_threadpool_new(c->n_threads, &c->pool))
    goto fail;
  c->caps = dq_cpu_probe();
  for (uint32_t h = 0; h < 65536; h++)
    c->f16_tab[h] = dq_f16_to_f32((dq_f16)h);
  be->ctx = c;
  be->i = (dq_backend_i){
      .name = cpu_name,
      .free = cpu_free,
      .buf_alloc = cpu_buf_alloc,
      .buf_free = cpu_buf_free,
      .weight_map = cpu_weight_map,
      .upload = cpu_copy,
      .upload_async = cpu_copy, /* ops run as they are queued */
      .download = cpu_copy_c,
      .matmul = cpu_matmul,
      .matmul_n = cpu_matmul_n,
      .matmul_glu = cpu_matmul_glu,
      .get_rows = cpu_get_rows,
      .rmsnorm = cpu_rmsnorm,
      .layernorm = cpu_layernorm,
      .rope = cpu_rope,
      .rope_qk = cpu_rope_qk,
      .add = cpu_add,
      .add_row = cpu_add_row,
      .scale = cpu_scale,
      .gelu = cpu_gelu,
      .glu = cpu_glu,
      .kv_store = cpu_kv_store,
      .attention = cpu_attention,
      .moe_route = cpu_moe_route,
      .moe_ffn = cpu_moe_ffn,
      .copy2d = cpu_copy2d,
      .gate_rows = cpu_gate_rows,
      .mean_pool_l2 = cpu_mean_pool_l2,
      .kv_gather = cpu_kv_gather,
      .sum_rows = cpu_sum_rows,
      .top_k = cpu_top_k,
      .kv_rotate = cpu_kv_rotate,
      .kv_merge = cpu_kv_merge,
      .kv_fold = cpu_kv_fold,
  };
  *out = be;
  return DQ_OK;
fail:
  if (c) {
    dq_threadpool_free(c->pool);
    free(c->f16_tab);
  }
  free(c);
  free(be);
  return dq_error_set(err, DQ_ERR_NOMEM, "cpu backend: out of memory");
}

const dq_cpu_caps *dq_backend_cpu_caps(const dq_backend *be) {
  if (!be || strcmp(be->i.name(be->ctx), "cpu") != 0)
    return NULL;
  return &((const cpu_ctx *)be->ctx)->caps;
}

void dq_backend_free(dq_backend *be) {
  if (!be)
    return;
  if (be->i.free)
    be->i.free(be->ctx);
  free(be);
}
