/*
 * backend.h - private to engine/: the compute backend interface the forward
 * pass is written against, in the style of ggml's ggml_backend_i: a table of
 * function pointers plus a context pointer, with thin wrappers (be_*) that
 * check optional entries.
 *
 * Memory model (chosen so a GPU backend fits without changing forward.c):
 * every pointer passed to an op is a *device* pointer obtained from
 * buf_alloc (activations, KV cache) or weight_map (weights). On the CPU
 * backend device memory is host memory and weight_map is zero-copy into the
 * GGUF's tensor data (the file's mapping, or the memory dq_gguf_read_data
 * read it into: engine.c, DOCQA_WEIGHTS); a CUDA backend uploads weights
 * once at load. Ops are queued
 * on the backend's stream in call order; results become visible on the host
 * only through download() after sync(). forward.c performs no host
 * round-trips inside a layer: the only download per eval is the logits (and
 * the attention statistics when enabled, which live in device memory too).
 *
 * Not here: model structure (forward.c), the KV layout policy (kv.c).
 */
#ifndef DQ_ENGINE_BACKEND_H
#define DQ_ENGINE_BACKEND_H

#include "common.h"
#include "engine.h"
#include "kernels.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A weight matrix on the device: n_rows rows of n_cols elements, each row
 * stored contiguously in ggml type `type` (row_bytes bytes). For a GGUF
 * tensor with ne = {n_cols, n_rows}. */
typedef struct dq_wmat {
  const char *name;
  uint32_t type;
  int64_t n_cols;   /* ne[0], the reduction dimension */
  int64_t n_rows;   /* ne[1], outputs */
  size_t row_bytes;
  const void *data; /* device pointer */
} dq_wmat;

/* dq_rope_params, the DQ_STORE_* cache types, dq_attn and dq_moe_cfg
 * (with DQ_MOE_*) live in kernels.h: the CUDA kernels read the same
 * descriptors. */

/* The routing rule of dq_moe_cfg (kernels.h) for one token, on the host: ids/w receive n_used
 * expert ids (best selection score first) and weights; flat (may be NULL)
 * receives the n_used ids flat top-k would choose on the same selection
 * scores (for the load-balance report). scratch holds 2 * n_expert +
 * n_group floats. Shared by every backend's reference path (moe.c). */
void dq_moe_route_one(const dq_moe_cfg *c, const float *logits,
                      const float *bias, int32_t *ids, float *w,
                      int32_t *flat, float *scratch);
/* Checks a routing configuration; NULL when valid, else what is wrong. */
const char *dq_moe_cfg_check(const dq_moe_cfg *c);

/* One routing call: n_tok rows of n_expert router logits -> n_tok rows of
 * n_used ids and weights (device). load, when not NULL, is 2 * n_expert
 * device counters: [e] counts tokens routed to expert e, [n_expert + e]
 * those flat top-k would have routed there. */
typedef struct dq_moe_route {
  dq_moe_cfg cfg;
  const float *logits;
  const float *bias; /* n_expert, or NULL */
  int n_tok;
  int32_t *ids;
  float *w;
  uint32_t *load;
} dq_moe_route;

/* The routed experts of one layer: out[t] = sum_j w[t][j] *
 * down_e(act(gate_e x[t]) * up_e x[t]) with e = ids[t][j], summed in j
 * order. Expert e's matrices are the views gate/up/down with data advanced
 * by e * stride bytes (stride 0: n_rows * row_bytes; a merged gate_up
 * tensor has gate and up interleaved per expert, so twice that). Prefill groups the tokens by expert (one
 * matrix-matrix product per active expert); a single token reads only its
 * chosen experts. */
typedef struct dq_moe_ffn {
  const float *x;    /* n_tok rows of gate->n_cols */
  int n_tok;
  const int32_t *ids;
  const float *w;
  int n_used, n_expert;
  const dq_wmat *gate, *up, *down;
  size_t gate_stride, up_stride; /* bytes between experts; 0 = packed */
  int act;           /* as glu's */
  float *out;        /* n_tok rows of down->n_rows */
} dq_moe_ffn;

/* GSM's similarity merges (gsm.c compress_layer) of one or more layers,
 * on the rows where they are (backend.h kv_merge). A job is one layer's
 * memory: rows[off..off + m) its entries' rows in order, count[off..] their
 * token counts. n_merge times, of the pairs of neighbours (list position
 * i and the next position not yet merged away) the one whose keys are
 * most alike is merged: similarity is the mean over KV heads of the
 * cosine of the two keys (dq_attn_dot sums; 0 for a zero key), ties to
 * the lowest i; row i takes the count-weighted mean (weight count_i /
 * (count_i + count_j), in float) of both keys and of both values, stored
 * in the cache's types, and the counts add. pairs[2 * (off + t)] and the
 * word after: merge t's list positions (i, j), or -1, -1 once no pair is
 * left. rows, count, pairs and scratch (16 bytes per row of every job, at
 * 16 * off) are device memory; jobs and their k/v pointers describe the
 * device buffers but are host memory. */
typedef struct dq_kv_merge_job {
  void *k, *v;     /* the layer's key and value rows */
  int off, m;      /* its memory rows at rows[off..off + m) */
  int n_merge;     /* merges to make, < m */
} dq_kv_merge_job;

typedef struct dq_kv_merge {
  const dq_kv_merge_job *jobs;
  int n_jobs;
  int store_k, store_v;    /* DQ_STORE_F16P, F16, F32 or Q8_0 */
  int n_head_kv, head_dim; /* a row: n_head_kv x head_dim */
  const int32_t *rows, *count;
  int32_t *pairs;
  void *scratch;
} dq_kv_merge;

/* GSM's time_decay folds (gsm.c fold_oldest) of one or more layers, on
 * the rows where they are (backend.h kv_fold). A job folds its f rows
 * rows[off..off + f) (the oldest memory entries, oldest first) into the
 * first, keys and values alike, element by element as dq_gsm_scan
 * computes the gated update: b_t = x_t * coef[c + t] (x_t: the element in
 * row t as f32, c = coef_off), then for each step s of offsets d = 1, 2,
 * 4, ... < f, b_t = coef[c + f * (1 + s) + t] * b_{t-d} + b_t for t >= d
 * (the scan's gate of t before that step), each product and sum rounded
 * apart; b_{f-1} is stored as the element of row rows[off], in the
 * cache's type. rows and coef are device memory, jobs host memory;
 * scratch (device) holds 2 x f x 2 x row_elems floats of the largest job
 * (a step reads one half and writes the other). */
typedef struct dq_kv_fold_job {
  void *k, *v;     /* the layer's key and value rows */
  int off, f;      /* its rows at rows[off..off + f), f >= 2 */
  int coef_off;    /* its coefficients at coef[coef_off..] */
} dq_kv_fold_job;

typedef struct dq_kv_fold {
  const dq_kv_fold_job *jobs;
  int n_jobs;
  int store_k, store_v, row_elems; /* as dq_kv_merge's */
  const int32_t *rows;
  const float *coef;
  float *scratch;
} dq_kv_fold;

/* Steps of dq_kv_fold's scan over f rows: offsets 1, 2, 4, ... below f. */
static inline int dq_kv_fold_steps(int f) {
  int s = 0;
  for (int d = 1; d < f; d *= 2)
    s++;
  return s;
}

/* A layer's new key and value rows for rope_store (dq_backend_i). */
typedef struct dq_rope_store {
  float *q, *k;      /* rotated in place; q may be NULL */
  const float *v;
  int n_tok, n_head, n_head_kv, head_dim;
  const int32_t *pos;           /* n_tok positions (device) */
  const dq_rope_params *rope;   /* NULL: not rotated */
  void *k_cache, *v_cache;
  int store_k, store_v;         /* DQ_STORE_*, as kv_store's */
  int row0;                     /* the rows' first cache row */
} dq_rope_store;

typedef struct dq_backend_i {
  const char *(*name)(void *ctx);
  void (*free)(void *ctx);

  /* memory */
  dq_status (*buf_alloc)(void *ctx, size_t n_bytes, void **dev);
  void (*buf_free)(void *ctx, void *dev);
  /* device pointer for weight bytes at `host` (zero copy on CPU) */
  dq_status (*weight_map)(void *ctx, const void *host, size_t n_bytes,
                          const void **dev);
  void (*weight_unmap)(void *ctx, const void *dev); /* optional */
  dq_status (*upload)(void *ctx, void *dev, const void *host, size_t n_bytes);
  dq_status (*download)(void *ctx, void *host, const void *dev,
                        size_t n_bytes);
  /* optional: page-locked host memory, which downloads and upload_async
   * copy directly (host_free accepts NULL) */
  dq_status (*host_alloc)(void *ctx, size_t n_bytes, void **host);
  void (*host_free)(void *ctx, void *host);
  /* optional: a queued upload that does not wait; the host bytes must stay
   * as they are until the next sync, and where the backend has host_alloc
   * they must come from it. Allowed while recording a graph (backend.h
   * graph_begin): the copy becomes part of the graph, which reads the
   * same host bytes again at each launch. */
  dq_status (*upload_async)(void *ctx, void *dev, const void *host,
                            size_t n_bytes);
  dq_status (*sync)(void *ctx); /* optional: wait for queued work */
  /* optional: text of the first failure (naming the kernel or call), NULL
   * when none; a backend whose queued ops fail reports DQ_ERR_DEVICE from
   * then on */
  const char *(*error)(void *ctx);
  /* optional: what the backend decided at start that the user should
   * hear (a fallback it took), NULL when nothing */
  const char *(*notice)(void *ctx);

  /* ops; x/y are n_tok rows */
  dq_status (*matmul)(void *ctx, const dq_wmat *w, const float *x, float *y,
                      int n_tok); /* y[t] = W x[t] */
  /* optional fused products, the same values as the ops they replace
   * (NULL: forward.c calls those): y[i][t] = W[i] x[t] for n (2..3)
   * matrices on one x (a layer's q, k, v); */
  dq_status (*matmul_n)(void *ctx, const dq_wmat *const *w, int n,
                        const float *x, float *const *y, int n_tok);
  /* y[t] += W x[t] (matmul, then add: the residual stream); */
  dq_status (*matmul_add)(void *ctx, const dq_wmat *w, const float *x,
                          float *y, int n_tok);
  /* h[t] = act(G x[t]) * (U x[t]) (matmul twice, then glu); tmp: n_tok
   * rows of G's n_rows floats the backend may overwrite */
  dq_status (*matmul_glu)(void *ctx, const dq_wmat *gate, const dq_wmat *up,
                          const float *x, float *h, float *tmp, int n_tok,
                          int act);
  dq_status (*get_rows)(void *ctx, const dq_wmat *w, const int32_t *ids,
                        int n, float *y); /* ids on the device */
  void (*rmsnorm)(void *ctx, const float *x, const float *w, float *y,
                  int n_tok, int dim, float eps); /* w may be NULL */
  void (*layernorm)(void *ctx, const float *x, const float *w, const float *b,
                    float *y, int n_tok, int dim, float eps);
  void (*rope)(void *ctx, float *x, int n_tok, int n_head, int head_dim,
               const int32_t *pos, const dq_rope_params *r); /* in place */
  /* optional: rope on q (n_head heads) and on k (n_head_kv), the same
   * values as the two calls (NULL: forward.c makes them) */
  void (*rope_qk)(void *ctx, float *q, float *k, int n_tok, int n_head,
                  int n_head_kv, int head_dim, const int32_t *pos,
                  const dq_rope_params *r);
  void (*add)(void *ctx, float *y, const float *x, size_t n); /* y += x */
  void (*add_row)(void *ctx, float *y, const float *b, int n_tok, int dim);
  void (*scale)(void *ctx, float *y, float s, size_t n);
  void (*gelu)(void *ctx, float *y, size_t n, int tanh_approx);
  /* gate[i] = act(gate[i]) * up[i]; act: 0 = SiLU, 1 = GELU-tanh */
  void (*glu)(void *ctx, float *gate, const float *up, size_t n, int act);
  void (*kv_store)(void *ctx, void *cache, int store, int row0,
                   const float *x, int n_rows, int row_elems);
  /* optional: a layer's new rows in one call: rope_qk on q (may be NULL)
   * and k when a->rope is not NULL, then kv_store of k's rows into
   * a->k_cache and of v's into a->v_cache; the same values and bytes as
   * those calls (NULL: forward.c makes them) */
  void (*rope_store)(void *ctx, const dq_rope_store *a);
  dq_status (*attention)(void *ctx, const dq_attn *a);
  /* mixture of experts (see dq_moe_route / dq_moe_ffn) */
  dq_status (*moe_route)(void *ctx, const dq_moe_route *a);
  dq_status (*moe_ffn)(void *ctx, const dq_moe_ffn *a);
  /* n_rows rows of row_len floats from src (rows src_stride floats apart)
   * to dst (dst_stride apart) */
  void (*copy2d)(void *ctx, float *dst, size_t dst_stride, const float *src,
                 size_t src_stride, int n_rows, int row_len);
  /* y[t][i] *= sigmoid(g[t]) for n_tok rows of dim (gated shared expert) */
  void (*gate_rows)(void *ctx, float *y, const float *g, int n_tok, int dim);
  /* out[d] = mean over rows of x, then L2-normalised (encoders) */
  void (*mean_pool_l2)(void *ctx, const float *x, int n_tok, int dim,
                       float *out);
  /* GSM with its rows on the device (gsm.c); optional, both or neither.
   * kv_gather: dst row i = src row map[i] for i < n, rows of row_elems of
   * a cache of `store` type (DQ_STORE_F16P: key panels); map on the
   * device; dst and src do not overlap. sum_rows: y[j] = the sum over
   * r < n_rows, in r order, of x[r * stride + j], for j < n; those x
   * elements are zeroed (attention statistics summed over heads, ready
   * for the next call). */
  void (*kv_gather)(void *ctx, void *dst, const void *src, int store,
                    const int32_t *map, int n, int row_elems);
  void (*sum_rows)(void *ctx, float *x, int n_rows, size_t stride, int n,
                   float *y);
  /* optional (GSM cache positions on the device): turns rows r < n_rows
   * of a key cache of `store` (DQ_STORE_F16P panels, F16 or F32 rows; the
   * CUDA backend takes no Q8_0) back by delta[r] positions (device array;
   * 0 = row left as it is): the inverse of RoPE r's rotation at position
   * delta[r] with its magnitude (YaRN's attn_factor) divided out, so a key
   * rotated at p comes out rotated at p - delta[r]. Rows hold n_head heads
   * of head_dim. */
  void (*kv_rotate)(void *ctx, void *cache, int store, int n_rows,
                    int n_head, int head_dim, const int32_t *delta,
                    const dq_rope_params *r);
  /* optional (GSM's similarity strategy with its rows on the device):
   * dq_kv_merge's greedy merges of neighbouring memory rows, done where
   * the rows are; queued, not waited for. */
  dq_status (*kv_merge)(void *ctx, const dq_kv_merge *a);
  /* optional, with kv_merge (GSM's time_decay strategy on the device):
   * dq_kv_fold's folds; queued, not waited for. */
  dq_status (*kv_fold)(void *ctx, const dq_kv_fold *a);
  /* optional: kernels.h dq_top_k over the n floats at x (a logits row),
   * the penalty on pen[0..n_pen) (device; ascending, distinct); queued, not
   * waited for. out (device, 1 + 2k int32 words) gets k, then the k ids,
   * then the k penalised values (float bits), best first; 0 in place of k
   * when this row could not be selected here (the caller selects it on the
   * host). DQ_ERR_UNSUPPORTED, queuing nothing, for a k the backend does
   * not take. */
  dq_status (*top_k)(void *ctx, const float *x, int n, const int32_t *pen,
                     int n_pen, float penalty, int k, int32_t *out);
  /* optional, all three or none (CUDA graphs of decode steps):
   * graph_begin records the ops queued after it instead of running them;
   * DQ_ERR_UNSUPPORTED when it cannot record now (queue the ops directly).
   * Between it and graph_end the ops must not upload, download, sync,
   * allocate or free buffers. graph_end stops recording; with discard 0 it
   * launches what was recorded as one graph (*ran = 1). *ran = 0 when
   * discard was 1 or recording failed: nothing recorded has run, device
   * memory is as it was at graph_begin, and the caller queues the ops
   * again directly; after a few failed recordings in a row graph_begin
   * refuses from then on (graph_stats says why). A non-OK status is a
   * device failure. */
  dq_status (*graph_begin)(void *ctx);
  dq_status (*graph_end)(void *ctx, int discard, int *ran);
  void (*graph_stats)(void *ctx, dq_graph_stats *st);
} dq_backend_i;

typedef struct dq_backend {
  dq_backend_i i;
  void *ctx;
} dq_backend;

/* Only the constructors are public to engine.c; each returns a malloc'd
 * backend freed with dq_backend_free. n_threads 0 = all cores. */
dq_status dq_backend_cpu_init(int n_threads, dq_backend **out, dq_error *err);
/* The CUDA backend on device `device` (backend_cuda.c): DQ_ERR_DEVICE
 * when no usable device is present, DQ_ERR_UNSUPPORTED in a build without
 * nvcc; err says which. */
dq_status dq_backend_cuda_init(int device, dq_backend **out, dq_error *err);
void dq_backend_free(dq_backend *be); /* accepts NULL */
/* The CPU backend's probed kernel paths; NULL for other backends. */
const dq_cpu_caps *dq_backend_cpu_caps(const dq_backend *be);

/* Thin wrappers: optional entries checked here. */
static inline const char *be_name(dq_backend *be) { return be->i.name(be->ctx); }
static inline dq_status be_sync(dq_backend *be) {
  return be->i.sync ? be->i.sync(be->ctx) : DQ_OK;
}
/* Why the last op failed: the backend's recorded failure when it has one,
 * else the status's text. */
static inline const char *be_why(dq_backend *be, dq_status st) {
  const char *e = be->i.error ? be->i.error(be->ctx) : NULL;
  return e ? e : dq_status_str(st);
}

/* Bytes of one weight row of n elements of ggml type `type`; 0 when the
 * kernels cannot multiply that type or n is not a multiple of its block. */
size_t dq_row_bytes(uint32_t type, int64_t n);

/* Dot product of two f32 rows in one fixed summation order (four 4-lane
 * partial sums, then the tail): GSM's key similarity for merges. Attention
 * itself is the kernels' dq_attn_run, shared by full attention and GSM. */
static inline float dq_attn_dot(const float *a, const float *b, int64_t n) {
  typedef float v4 __attribute__((vector_size(16)));
  v4 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v4 a0, a1, a2, a3, b0, b1, b2, b3;
    memcpy(&a0, a + i, 16);
    memcpy(&a1, a + i + 4, 16);
    memcpy(&a2, a + i + 8, 16);
    memcpy(&a3, a + i + 12, 16);
    memcpy(&b0, b + i, 16);
    memcpy(&b1, b + i + 4, 16);
    memcpy(&b2, b + i + 8, 16);
    memcpy(&b3, b + i + 12, 16);
    s0 += a0 * b0;
    s1 += a1 * b1;
    s2 += a2 * b2;
    s3 += a3 * b3;
  }
  v4 s = (s0 + s1) + (s2 + s3);
  float r = (s[0] + s[1]) + (s[2] + s[3]);
  for (; i < n; i++)
    r += a[i] * b[i];
  return r;
}

/* GSM's key similarity of two rows of n_kv heads of hd: the mean over the
 * heads of the cosine (0 for a head whose key is zero). gsm.c's merges and
 * the CPU backend's kv_merge; the CUDA kernel follows it. */
static inline float dq_kv_sim(const float *a, const float *b, int n_kv,
                              int hd) {
  float s = 0;
  for (int h = 0; h < n_kv; h++) {
    const float *x = a + (size_t)h * hd, *y = b + (size_t)h * hd;
    float ab = dq_attn_dot(x, y, hd), aa = dq_attn_dot(x, x, hd),
          bb = dq_attn_dot(y, y, hd);
    s += aa > 0 && bb > 0 ? ab / sqrtf(aa * bb) : 0;
  }
  return s / (float)n_kv;
}

/* A merged slot's row: a = wa * a + (1 - wa) * b over n elements. */
static inline void dq_kv_mix(float *a, const float *b, float wa, size_t n) {
  float wb = 1 - wa;
  for (size_t d = 0; d < n; d++)
    a[d] = wa * a[d] + wb * b[d];
}

#endif /* DQ_ENGINE_BACKEND_H */
