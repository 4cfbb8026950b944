/*
 * cuda_ops.h - the C interface of our CUDA kernels (the .cu files in kernels/cuda), used
 * by the CUDA backend (engine/backend_cuda.c). Compiled only when nvcc is
 * present (DQ_HAVE_CUDA). Plain C types only (the op descriptors dq_attn,
 * dq_rope_params and dq_moe_cfg are kernels.h's, shared with the engine's
 * backend interface), so C code includes it without the CUDA headers: a
 * stream is a cudaStream_t passed as void *, and every
 * launcher returns 0 or the cudaError_t of its launch check
 * (cudaGetLastError after the launch); dq_cu_err_str() turns it into text.
 * The backend names the launcher in its message, so an error always carries
 * the kernel's name.
 *
 * Semantics are the CPU backend's (engine/backend.h, engine/backend_cpu.c):
 * same argument meaning, same storage layouts (ggml weight blocks, KV cache
 * rows, F16 key panels), results equal within floating-point tolerance.
 * All pointers are device pointers unless said otherwise. Launchers never
 * synchronise and never copy to or from the host.
 */
#ifndef DQ_CUDA_OPS_H
#define DQ_CUDA_OPS_H

#include "kernels.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Text of a cudaError_t value (cudaGetErrorString). */
const char *dq_cu_err_str(int err);

/* ---- element-wise, norms, RoPE, cache stores (elem.cu) ------------------ */

int dq_cu_rmsnorm(void *stream, const float *x, const float *w, float *y,
                  int n_tok, int dim, float eps); /* w may be NULL */
int dq_cu_layernorm(void *stream, const float *x, const float *w,
                    const float *b, float *y, int n_tok, int dim, float eps);

/* In place on n_tok rows of n_head x head_dim; pos: n_tok int32 (device). */
int dq_cu_rope_apply(void *stream, float *x, int n_tok, int n_head,
                     int head_dim, const int32_t *pos, const dq_rope_params *r);
/* dq_cu_rope_apply on q (n_head heads) and k (n_head_kv) in one launch,
 * each angle computed once: the same bits as two calls. */
int dq_cu_rope_qk(void *stream, float *q, float *k, int n_tok, int n_head,
                  int n_head_kv, int head_dim, const int32_t *pos,
                  const dq_rope_params *r);

int dq_cu_add(void *stream, float *y, const float *x, size_t n);
int dq_cu_add_row(void *stream, float *y, const float *b, int n_tok, int dim);
int dq_cu_scale(void *stream, float *y, float s, size_t n);
int dq_cu_gelu(void *stream, float *y, size_t n, int tanh_approx);
/* gate[i] = act(gate[i]) * up[i]; act 0 = SiLU, 1 = GELU-tanh */
int dq_cu_glu(void *stream, float *gate, const float *up, size_t n, int act);
int dq_cu_copy2d(void *stream, float *dst, size_t dst_stride,
                 const float *src, size_t src_stride, int n_rows,
                 int row_len);
/* y[t][i] *= sigmoid(g[t]) */
int dq_cu_gate_rows(void *stream, float *y, const float *g, int n_tok,
                    int dim);
/* out = L2-normalised mean of n_tok rows of dim */
int dq_cu_mean_pool_l2(void *stream, const float *x, int n_tok, int dim,
                       float *out);
/* Rows row0.. of a KV cache of `store` type (0 F32, 1 F16 rows, 2 F16 key
 * panels of 16 positions, 8 Q8_0), from n_rows f32 rows of row_elems. */
int dq_cu_kv_store(void *stream, void *cache, int store, int row0,
                   const float *x, int n_rows, int row_elems);
/* A layer's new rows in one launch: dq_cu_rope_qk on q (may be NULL) and
 * k when r is not NULL, then dq_cu_kv_store of k's n_tok rows of n_head_kv
 * x head_dim into k_cache and of v's into v_cache at row0; the same bits
 * as those calls (k holds the rotated keys after it too). */
int dq_cu_rope_store(void *stream, float *q, float *k, const float *v,
                     int n_tok, int n_head, int n_head_kv, int head_dim,
                     const int32_t *pos, const dq_rope_params *r,
                     void *k_cache, int store_k, void *v_cache, int store_v,
                     int row0);
/* GSM rows on the device (backend.h kv_gather / sum_rows): dst row i =
 * src row map[i] for i < n_rows (store as dq_cu_kv_store's; dst, src
 * distinct); y[j] = sum over r < n_rows in order of x[r * stride + j],
 * those x elements zeroed. */
int dq_cu_kv_gather(void *stream, void *dst, const void *src, int store,
                    const int32_t *map, int n_rows, int row_elems);
int dq_cu_sum_rows(void *stream, float *x, int n_rows, size_t stride, int n,
                   float *y);
/* backend.h kv_rotate: key rows turned back by delta[r] positions; store
 * 0 F32 rows, 1 F16 rows, 2 F16 panels (no Q8_0). */
int dq_cu_kv_rotate(void *stream, void *cache, int store, int n_rows,
                    int n_head, int head_dim, const int32_t *delta,
                    const dq_rope_params *r);
/* GSM's similarity merges (engine/backend.h dq_kv_merge; jobs in host
 * memory, at most DQ_CU_MERGE_MAX_JOBS, the rest on the device); store_k
 * 0 F32, 1 F16, 2 F16 panels, 8 Q8_0 rows, store_v the same without
 * panels. */
typedef struct dq_cu_merge_job {
  void *k, *v;
  int off, m, n_merge;
} dq_cu_merge_job;
enum { DQ_CU_MERGE_MAX_JOBS = 64 }; /* per launch (kernel parameters) */
int dq_cu_kv_merge(void *stream, const dq_cu_merge_job *jobs, int n_jobs,
                   int store_k, int store_v, int n_head_kv, int head_dim,
                   const int32_t *rows, const int32_t *count, int32_t *pairs,
                   void *scratch);
/* GSM's time_decay folds (engine/backend.h dq_kv_fold; jobs in host
 * memory); scratch: 2 x f x 2 x row_elems floats of the largest job. */
typedef struct dq_cu_fold_job {
  void *k, *v;
  int off, f, coef_off;
} dq_cu_fold_job;
int dq_cu_kv_fold(void *stream, const dq_cu_fold_job *jobs, int n_jobs,
                  int store_k, int store_v, int row_elems,
                  const int32_t *rows, const float *coef, float *scratch);
/* y[i] = dequantized row ids[i] of a weight matrix of ggml `type`; ids on
 * the device, assumed in range (the host checks before uploading). */
int dq_cu_get_rows(void *stream, int type, const void *data,
                   size_t row_bytes, int64_t n_cols, const int32_t *ids,
                   int n, float *y);

/* ---- top-k selection (topk.cu) ----------------------------------------- */

/* 1 when dq_cu_top_k takes a row of n with n_pen penalised tokens and k
 * (k <= 256, n_pen <= 1024). */
int dq_cu_top_k_supported(int n, int n_pen, int k);
/* backend.h top_k: kernels.h dq_top_k of the row x (n floats) after the
 * penalty on pen[0..n_pen) (ascending, distinct); out gets 1 + 2k int32
 * words: k, the ids, the values' bits, best first (0 in place of k when
 * more than 4096 elements tie near the top: select on the host). */
int dq_cu_top_k(void *stream, const float *x, int n, const int32_t *pen,
                int n_pen, float penalty, int k, int32_t *out);

/* ---- matrix products (matmul.cu) ---------------------------------------- */

/* 1 when the kernels multiply weights of ggml type `type`. */
int dq_cu_type_supported(int type);

/* A matmul context: cuBLAS handle bound to the stream plus device scratch
 * (dequantized weight tiles, converted activations), grown on demand. */
typedef struct dq_cu_mm dq_cu_mm;
/* dq_cu_mm_new's result when cuBLAS could not be loaded. */
#define DQ_CU_NO_BLAS (-3)
int dq_cu_mm_new(void *stream, dq_cu_mm **out);
/* Loads cuBLAS, once (dlopen; matmul.cu says why it is not linked): NULL
 * when it is ready, else why not (a message naming the library). */
const char *dq_cu_blas_load(void);
void dq_cu_mm_free(dq_cu_mm *mm);
/* Name of the step that failed last in dq_cu_matmul (a kernel or cuBLAS
 * call), for messages. */
const char *dq_cu_mm_last_step(const dq_cu_mm *mm);

/* y[t] = W x[t] for n_tok rows; W is n_rows rows of n_cols elements of
 * `type`, row_bytes apart. Small n_tok: quantized matrix-vector kernels
 * that read each weight byte once per call; large n_tok: weights
 * dequantized to F16 tiles and multiplied by cuBLAS (F32 accumulate).
 * Returns 0, a cudaError_t, or -1 for a cuBLAS failure (see last_step). */
int dq_cu_matmul(dq_cu_mm *mm, int type, const void *w, size_t row_bytes,
                 int64_t n_rows, int64_t n_cols, const float *x, int n_tok,
                 float *y);

/* One matrix of a fused product: n_rows rows of `type` (the call's n_cols
 * each), row_bytes apart; y its output, n_tok rows of n_rows. */
typedef struct dq_cu_wdesc {
  int type;
  const void *w;
  size_t row_bytes;
  int64_t n_rows;
  float *y;
} dq_cu_wdesc;
#define DQ_CU_MM_MAX 3 /* matrices of one dq_cu_matmul_n call */

/* y_i = W_i x[t] for the n (1..DQ_CU_MM_MAX) matrices w[i] on one x (a
 * layer's q, k and v); add: y_i += W_i x[t] instead (the residual add
 * fused into the product). At 1 or 2 tokens the matrices of one type
 * share one mat-vec launch (3..8: a launch each); above 8, they share
 * x's F16 conversion. The same
 * values as dq_cu_matmul and, for add, dq_cu_add after it. */
int dq_cu_matmul_n(dq_cu_mm *mm, const dq_cu_wdesc *w, int n, int64_t n_cols,
                   const float *x, int n_tok, int add);

/* h[t] = act(G x[t]) * (U x[t]), act as dq_cu_glu's: at 1 or 2 tokens, when
 * G and U share type and row count, one mat-vec launch whose warps hold
 * gate rows and the same rows of up; otherwise the two products (U's into
 * tmp, n_tok rows of n_rows) and the gated unit. The y of g and u are
 * ignored. The same values as those three calls. */
int dq_cu_matmul_glu(dq_cu_mm *mm, const dq_cu_wdesc *g, const dq_cu_wdesc *u,
                     int64_t n_cols, const float *x, int n_tok, int act,
                     float *h, float *tmp);

/* Expert-indexed matrix-vector products (mixture of experts): for pair
 * p < n_pairs, y[p] = W_e x[p / x_div] with e = ids[p] and W_e the matrix
 * at w + e * stride bytes (n_rows rows of n_cols, row_bytes apart). y rows
 * are n_rows apart, x rows n_cols apart. n_expert (ids in [0, n_expert);
 * 0 if unknown) lets many pairs be grouped by expert on the device, each
 * expert's weights then read once per 8 of its pairs. */
int dq_cu_matvec_ids(dq_cu_mm *mm, int type, const void *w, size_t row_bytes,
                     int64_t n_rows, int64_t n_cols, size_t stride,
                     const int32_t *ids, int n_pairs, int n_expert,
                     const float *x, int x_div, float *y);

/* ---- attention (attn.cu) ------------------------------------------------ */

/* kernels.h's dq_attn. store 0: F32 rows; 1: F16 (keys in
 * 16-position panels, values in rows); 8: Q8_0 rows. stats, when not NULL:
 * n_head rows of stats_stride floats; stats[h][j] += the softmax weight
 * query i pays key j, summed over the queries at positions in
 * [stats_q0, stats_q1) (as the CPU backend accumulates it). */
int dq_cu_attention(void *stream, const dq_attn *a);
/* Bytes of device workspace the call would take (split partials and the
 * statistics' row sums; 0 for none, or for a call it would refuse): a
 * dq_attn.ws of at least this size is used instead of the memory pool,
 * which keeps stream capture (CUDA graphs) free of allocation nodes. */
size_t dq_cu_attn_ws_bytes(const dq_attn *a);
/* Prefill of F16 caches with head size 64 or 128 runs on the tensor cores
 * (sm_80 and up; attn.cu attn_mma; statistics, when asked for, from the
 * f32 pass after it) unless turned off here (on = 0): for tests comparing
 * the two paths. Process-wide. */
void dq_cu_attn_set_mma(int on);
/* Runs a small prefill (with statistics) through the tensor-core path and
 * the CUDA-core kernel on the current device and compares them: 0 agreed
 * (or the path is not used here), 1 they disagreed and the tensor-core
 * path is now off (why says so), -1 a CUDA error (why names it). */
int dq_cu_attn_selfcheck(void *stream, char *why, size_t why_len);

/* ---- mixture of experts (moe.cu) ---------------------------------------- */

/* kernels.h's dq_moe_cfg, as engine/backend.h's dq_moe_route (the rule of
 * engine/moe.c's dq_moe_route_one, ties to the lower id). */
int dq_cu_moe_route(void *stream, const dq_moe_cfg *cfg,
                    const float *logits, const float *bias, int n_tok,
                    int32_t *ids, float *w, uint32_t *load);
/* out[t] = sum over j < n_used, in j order, of w[t][j] * h[t * n_used + j]
 * (h: n_tok * n_used rows of dim). */
int dq_cu_moe_combine(void *stream, const float *h, const float *w,
                      int n_tok, int n_used, int dim, float *out);

#ifdef __cplusplus
}
#endif

#endif /* DQ_CUDA_OPS_H */
