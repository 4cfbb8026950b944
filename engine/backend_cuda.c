/*
 * backend_cuda.c - the CUDA implementation of the backend interface
 * (backend.h) on one device: weights uploaded once at load (plain
 * cudaMalloc, deduplicated by host address so tied embeddings are stored
 * once), activations and the KV cache in device memory, every op queued on
 * one stream in call order through the launchers of kernels/cuda
 * (cuda_ops.h). Nothing here waits for the device except sync(), download()
 * and weight uploads.
 *
 * Errors: ops that return a status return it; the void ops (norms, adds,
 * RoPE, ...) record the first failure, and every later call and sync()
 * returns DQ_ERR_DEVICE until the backend is freed. The recorded text names
 * the kernel ("kernel rmsnorm: an illegal memory access was encountered")
 * and is what be_error() hands to the engine's messages.
 *
 * CUDA graphs (graph_begin / graph_end): forward.c brackets a decode step
 * with them; the ops in between are recorded by stream capture (relaxed
 * mode: the attention workspace may grow with cudaMalloc meanwhile), then
 * launched as one graph; the step's positions and token ids are copies
 * from page-locked host memory (host_alloc, upload_async) inside it, so a
 * step is one launch and one wait. Each step is recorded anew, since the ops'
 * arguments (cache rows, positions, key counts) change every step; the
 * recording then updates the instantiation kept from the last step
 * (cudaGraphExecUpdate), which only fails when the kernels themselves
 * changed (attention starting to split its keys adds a combine kernel),
 * and then the graph is instantiated again. While recording, attention
 * takes its workspace from the backend (dq_attn.ws: graphs get no
 * allocation nodes) and an op that would allocate, wait or copy fails the
 * recording instead of the backend: graph_end discards it and the caller
 * runs the step op by op (where a scratch can grow); after three failed
 * recordings in a row graphs stay off and graph_stats says why.
 *
 * Mixture of experts: routing on the device (moe.cu), then expert-indexed
 * matrix-vector products over every (token, expert) pair and an in-order
 * weighted sum, so a token's output does not depend on its batch. The
 * grouped matrix-matrix form the CPU uses for long prefills is future work.
 *
 * Built only with nvcc present (DQ_HAVE_CUDA); otherwise
 * dq_backend_cuda_init reports that this build has no CUDA.
 */
#include "backend.h"

#ifdef DQ_HAVE_CUDA

#include "cuda/cuda_ops.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct wmap {
  const void *host;
  size_t n_bytes;
  void *dev;
} wmap;

typedef struct cuda_ctx {
  int device;
  cudaStream_t stream;
  dq_cu_mm *mm;
  int failed;        /* a kernel or call failed: the device state is unknown */
  char errmsg[512];  /* the first failure */
  char note[320];    /* a fallback taken at start (notice), or "" */
  wmap *maps;        /* uploaded weights */
  size_t n_maps, cap_maps;
  float *moe_buf;    /* expert pair scratch, grown on demand */
  size_t moe_cap;    /* floats */
  /* graphs */
  int capturing;     /* between graph_begin and graph_end */
  int cap_failed;    /* an op failed while recording: cap_msg */
  char cap_msg[256];
  cudaGraphExec_t exec; /* the last instantiation, or NULL */
  int n_bad;         /* recordings that failed in a row */
  int graphs_off;    /* set after GRAPH_MAX_BAD of them: off_msg */
  char off_msg[400];
  uint64_t n_launched, n_instantiated;
  void *attn_ws;     /* attention workspace lent to every call */
  size_t attn_ws_bytes;
  void *ws_retired[8]; /* outgrown workspaces recorded graphs may read, */
  int n_ws_retired;    /* freed at the next sync outside a recording */
} cuda_ctx;

#define GRAPH_MAX_BAD 3

/* Whether e is a fault of a running kernel, which the runtime reports at
 * the next call or launch, whichever kernel caused it. */
static int async_fault(int e) {
  switch (e) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorMisalignedAddress:
  case cudaErrorIllegalInstruction:
  case cudaErrorInvalidPc:
  case cudaErrorHardwareStackError:
  case cudaErrorAssert:
  case cudaErrorLaunchTimeout:
  case cudaErrorInvalidAddressSpace:
    return 1;
  default:
    return 0;
  }
}

/* Records the first failure; returns DQ_ERR_DEVICE (or DQ_OK for e == 0). */
static dq_status fail(cuda_ctx *c, const char *what, int e) {
  if (!e)
    return DQ_OK;
  if (c->capturing) {
    /* a recording problem, not a device fault: graph_end discards the
     * recording and the ops run again directly */
    if (!c->cap_failed) {
      c->cap_failed = 1;
      snprintf(c->cap_msg, sizeof c->cap_msg, "%s: %s", what,
               e == -1 ? "cuBLAS call failed" : dq_cu_err_str(e));
    }
    cudaGetLastError();
    return DQ_ERR_DEVICE;
  }
  if (!c->failed) {
    c->failed = 1;
    snprintf(c->errmsg, sizeof c->errmsg, "%s: %s%s", what,
             e == -1 ? "cuBLAS call failed" : dq_cu_err_str(e),
             async_fault(e) ? " (a fault while a kernel ran: this one or any "
                              "queued before it; CUDA_LAUNCH_BLOCKING=1 names "
                              "the kernel)"
                            : "");
  }
  return DQ_ERR_DEVICE;
}

/* Wraps a launcher call: skipped once the backend has failed. */
#define LAUNCH(c, name, call)                                                  \
  ((c)->failed ? DQ_ERR_DEVICE : fail((c), "kernel " name, (call)))

static const char *cuda_name(void *ctx) { return "cuda"; }
static const char *cuda_error(void *ctx) {
  cuda_ctx *c = ctx;
  return c->failed ? c->errmsg : NULL;
}
static const char *cuda_notice(void *ctx) {
  cuda_ctx *c = ctx;
  return c->note[0] ? c->note : NULL;
}

/* Frees the workspaces outgrown while recording (the stream is idle). */
static void free_retired(cuda_ctx *c) {
  for (int i = 0; i < c->n_ws_retired; i++)
    cudaFree(c->ws_retired[i]);
  c->n_ws_retired = 0;
}

static void cuda_free_ctx(void *ctx) {
  cuda_ctx *c = ctx;
  if (!c)
    return;
  cudaSetDevice(c->device);
  if (c->capturing) {
    cudaGraph_t g = NULL;
    if (cudaStreamEndCapture(c->stream, &g) == cudaSuccess && g)
      cudaGraphDestroy(g);
    cudaGetLastError();
  }
  if (c->stream)
    cudaStreamSynchronize(c->stream);
  if (c->exec)
    cudaGraphExecDestroy(c->exec);
  free_retired(c);
  cudaFree(c->attn_ws);
  for (size_t i = 0; i < c->n_maps; i++)
    cudaFree(c->maps[i].dev);
  free(c->maps);
  cudaFree(c->moe_buf);
  dq_cu_mm_free(c->mm);
  if (c->stream)
    cudaStreamDestroy(c->stream);
  free(c);
}

/* ---- memory ------------------------------------------------------------- */

/* A copy on the backend's stream, waited for: the host side may be reused
 * (or read) as soon as it returns. */
static cudaError_t copy_wait(cuda_ctx *c, void *dst, const void *src,
                             size_t n_bytes, enum cudaMemcpyKind kind) {
  cudaError_t e = cudaMemcpyAsync(dst, src, n_bytes, kind, c->stream);
  return e ? e : cudaStreamSynchronize(c->stream);
}

/* Allocations, copies and waits may not be recorded (graph_begin's
 * contract): while recording they fail the recording. */
#define NOT_WHILE_RECORDING(c, what)                                           \
  do {                                                                         \
    if ((c)->capturing)                                                        \
      return fail((c), what " while recording a graph",                      \
                  (int)cudaErrorStreamCaptureUnsupported);                     \
  } while (0)

static dq_status cuda_buf_alloc(void *ctx, size_t n_bytes, void **dev) {
  cuda_ctx *c = ctx;
  *dev = NULL;
  if (c->failed)
    return DQ_ERR_DEVICE;
  NOT_WHILE_RECORDING(c, "buffer allocation");
  if (!n_bytes)
    n_bytes = 64;
  cudaError_t e = cudaMalloc(dev, n_bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError(); /* not sticky: clear it */
    *dev = NULL;
    return DQ_ERR_NOMEM;
  }
  if (e)
    return fail(c, "cudaMalloc", (int)e);
  /* zeroed like the CPU backend's buffers (caches start empty) */
  return fail(c, "cudaMemsetAsync", (int)cudaMemsetAsync(*dev, 0, n_bytes,
                                                         c->stream));
}

static void cuda_buf_free(void *ctx, void *dev) {
  cuda_ctx *c = ctx;
  if (!dev)
    return;
  /* the stream may still use it */
  cudaStreamSynchronize(c->stream);
  cudaFree(dev);
}

static dq_status cuda_weight_map(void *ctx, const void *host, size_t n_bytes,
                                 const void **dev) {
  cuda_ctx *c = ctx;
  *dev = NULL;
  for (size_t i = 0; i < c->n_maps; i++)
    if (c->maps[i].host == host && c->maps[i].n_bytes >= n_bytes) {
      *dev = c->maps[i].dev;
      return DQ_OK;
    }
  if (c->n_maps == c->cap_maps) {
    size_t cap = c->cap_maps ? c->cap_maps * 2 : 256;
    wmap *m = realloc(c->maps, cap * sizeof *m);
    if (!m)
      return DQ_ERR_NOMEM;
    c->maps = m;
    c->cap_maps = cap;
  }
  void *d = NULL;
  cudaError_t e = cudaMalloc(&d, n_bytes ? n_bytes : 64);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return DQ_ERR_NOMEM;
  }
  if (e)
    return fail(c, "cudaMalloc (weights)", (int)e);
  /* On our stream, then waited for: a plain cudaMemcpy runs on the legacy
   * stream, which our non-blocking stream does not wait for (from pageable
   * memory it may return before the bytes reach the device). Uploads are
   * keyed by host address, so the host bytes must live as long as the
   * model (the GGUF mapping, or model.c's transposed copies, freed with
   * the model). */
  if ((e = copy_wait(c, d, host, n_bytes, cudaMemcpyHostToDevice))) {
    cudaFree(d);
    return fail(c, "cudaMemcpy (weights)", (int)e);
  }
  c->maps[c->n_maps++] = (wmap){host, n_bytes, d};
  *dev = d;
  return DQ_OK;
}

static dq_status cuda_upload(void *ctx, void *dev, const void *host,
                             size_t n_bytes) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  NOT_WHILE_RECORDING(c, "upload");
  return fail(c, "upload",
              (int)copy_wait(c, dev, host, n_bytes, cudaMemcpyHostToDevice));
}

static dq_status cuda_host_alloc(void *ctx, size_t n_bytes, void **host) {
  cuda_ctx *c = ctx;
  *host = NULL;
  if (c->failed)
    return DQ_ERR_DEVICE;
  NOT_WHILE_RECORDING(c, "host allocation");
  if (cudaMallocHost(host, n_bytes ? n_bytes : 64) != cudaSuccess) {
    cudaGetLastError(); /* not sticky: the caller takes plain memory */
    *host = NULL;
    return DQ_ERR_NOMEM;
  }
  return DQ_OK;
}

static void cuda_host_free(void *ctx, void *host) {
  cuda_ctx *c = ctx;
  if (!host)
    return;
  cudaStreamSynchronize(c->stream); /* a queued copy may still read it */
  cudaFreeHost(host);
}

/* From page-locked memory (host_alloc) a copy that returns at once; while
 * recording, a copy node of the graph. */
static dq_status cuda_upload_async(void *ctx, void *dev, const void *host,
                                   size_t n_bytes) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  return fail(c, "upload",
              (int)cudaMemcpyAsync(dev, host, n_bytes, cudaMemcpyHostToDevice,
                                   c->stream));
}

static dq_status cuda_download(void *ctx, void *host, const void *dev,
                               size_t n_bytes) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  NOT_WHILE_RECORDING(c, "download");
  return fail(c, "download (a kernel before it failed)",
              (int)copy_wait(c, host, dev, n_bytes, cudaMemcpyDeviceToHost));
}

static dq_status cuda_sync(void *ctx) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  NOT_WHILE_RECORDING(c, "sync");
  dq_status st = fail(c, "cudaStreamSynchronize (a kernel before it failed)",
                      (int)cudaStreamSynchronize(c->stream));
  if (!st)
    free_retired(c);
  return st;
}

/* ---- graphs ------------------------------------------------------------- */

/* A recording failed: counted, and after GRAPH_MAX_BAD in a row graphs
 * stay off. */
static void graph_bad(cuda_ctx *c, const char *why) {
  cudaGetLastError(); /* recording errors are not sticky: clear them */
  if (++c->n_bad >= GRAPH_MAX_BAD && !c->graphs_off) {
    c->graphs_off = 1;
    snprintf(c->off_msg, sizeof c->off_msg,
             "%d recordings in a row failed, the last: %s", c->n_bad, why);
  }
}

static dq_status cuda_graph_begin(void *ctx) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  if (c->graphs_off || c->capturing)
    return DQ_ERR_UNSUPPORTED;
  cudaError_t e = cudaStreamBeginCapture(c->stream,
                                         cudaStreamCaptureModeRelaxed);
  if (e) {
    char why[160];
    snprintf(why, sizeof why, "cudaStreamBeginCapture: %s",
             cudaGetErrorString(e));
    graph_bad(c, why);
    return DQ_ERR_UNSUPPORTED;
  }
  c->capturing = 1;
  c->cap_failed = 0;
  return DQ_OK;
}

static dq_status cuda_graph_end(void *ctx, int discard, int *ran) {
  cuda_ctx *c = ctx;
  *ran = 0;
  if (!c->capturing)
    return c->failed ? DQ_ERR_DEVICE : DQ_OK;
  cudaGraph_t g = NULL;
  cudaError_t e = cudaStreamEndCapture(c->stream, &g);
  c->capturing = 0;
  if (e || !g || c->cap_failed) {
    char why[320];
    if (c->cap_failed)
      snprintf(why, sizeof why, "%s", c->cap_msg);
    else
      snprintf(why, sizeof why, "cudaStreamEndCapture: %s",
               e ? cudaGetErrorString(e) : "no graph");
    if (g)
      cudaGraphDestroy(g);
    graph_bad(c, why);
    return c->failed ? DQ_ERR_DEVICE : DQ_OK;
  }
  if (discard || c->failed) {
    cudaGraphDestroy(g);
    return c->failed ? DQ_ERR_DEVICE : DQ_OK;
  }
  /* same kernels as the last step: update its instantiation in place */
  if (c->exec) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(c->exec, g, &info) != cudaSuccess) {
      cudaGetLastError();
      cudaGraphExecDestroy(c->exec); /* freed once a launch in flight ends */
      c->exec = NULL;
    }
  }
  if (!c->exec) {
    e = cudaGraphInstantiate(&c->exec, g, 0);
    if (e) {
      char why[160];
      snprintf(why, sizeof why, "cudaGraphInstantiate: %s",
               cudaGetErrorString(e));
      c->exec = NULL;
      cudaGraphDestroy(g);
      graph_bad(c, why);
      return DQ_OK;
    }
    c->n_instantiated++;
  }
  cudaGraphDestroy(g);
  /* from here a failure is the device's: the graph may have started */
  if ((e = cudaGraphLaunch(c->exec, c->stream)))
    return fail(c, "cudaGraphLaunch", (int)e);
  c->n_launched++;
  c->n_bad = 0;
  *ran = 1;
  return DQ_OK;
}

static void cuda_graph_stats(void *ctx, dq_graph_stats *st) {
  cuda_ctx *c = ctx;
  st->n_launched = c->n_launched;
  st->n_instantiated = c->n_instantiated;
  st->off_reason = c->graphs_off ? c->off_msg : NULL;
}

/* ---- ops ---------------------------------------------------------------- */

/* A weight the kernels take, or an error naming it. */
static dq_status cuda_wdesc(cuda_ctx *c, const dq_wmat *w, float *y,
                            dq_cu_wdesc *d) {
  if (!dq_cu_type_supported((int)w->type)) {
    snprintf(c->errmsg, sizeof c->errmsg,
             "matmul: weight type %u of '%s' has no CUDA kernel", w->type,
             w->name ? w->name : "?");
    c->failed = 1;
    return DQ_ERR_UNSUPPORTED;
  }
  *d = (dq_cu_wdesc){(int)w->type, w->data, w->row_bytes, w->n_rows, y};
  return DQ_OK;
}

/* A product's failure, naming its first matrix and the failing step. */
static dq_status mm_fail(cuda_ctx *c, const char *op, const dq_wmat *w, int e) {
  char what[160];
  snprintf(what, sizeof what, "%s '%s' (%s)", op, w->name ? w->name : "?",
           dq_cu_mm_last_step(c->mm));
  return fail(c, what, e);
}

/* y[i] (+)= W[i] x for n matrices (1..DQ_CU_MM_MAX) of one n_cols. */
static dq_status cuda_products(cuda_ctx *c, const char *op,
                               const dq_wmat *const *w, int n, const float *x,
                               float *const *y, int n_tok, int add) {
  if (c->failed)
    return DQ_ERR_DEVICE;
  dq_cu_wdesc d[DQ_CU_MM_MAX];
  dq_status st;
  if (n < 1 || n > DQ_CU_MM_MAX)
    return DQ_ERR_ARG;
  for (int i = 0; i < n; i++) {
    if (w[i]->n_cols != w[0]->n_cols)
      return DQ_ERR_ARG;
    if ((st = cuda_wdesc(c, w[i], y[i], &d[i])))
      return st;
  }
  int e = dq_cu_matmul_n(c->mm, d, n, w[0]->n_cols, x, n_tok, add);
  return e ? mm_fail(c, op, w[0], e) : DQ_OK;
}

static dq_status cuda_matmul(void *ctx, const dq_wmat *w, const float *x,
                             float *y, int n_tok) {
  return cuda_products(ctx, "matmul", &w, 1, x, &y, n_tok, 0);
}
static dq_status cuda_matmul_add(void *ctx, const dq_wmat *w, const float *x,
                                 float *y, int n_tok) {
  return cuda_products(ctx, "matmul_add", &w, 1, x, &y, n_tok, 1);
}
static dq_status cuda_matmul_n(void *ctx, const dq_wmat *const *w, int n,
                               const float *x, float *const *y, int n_tok) {
  return cuda_products(ctx, "matmul_n", w, n, x, y, n_tok, 0);
}
static dq_status cuda_matmul_glu(void *ctx, const dq_wmat *gate,
                                 const dq_wmat *up, const float *x, float *h,
                                 float *tmp, int n_tok, int act) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  dq_cu_wdesc g, u;
  dq_status st;
  if (up->n_cols != gate->n_cols || up->n_rows != gate->n_rows)
    return DQ_ERR_ARG;
  if ((st = cuda_wdesc(c, gate, h, &g)) || (st = cuda_wdesc(c, up, tmp, &u)))
    return st;
  int e = dq_cu_matmul_glu(c->mm, &g, &u, gate->n_cols, x, n_tok, act, h, tmp);
  return e ? mm_fail(c, "matmul_glu", gate, e) : DQ_OK;
}

static dq_status cuda_get_rows(void *ctx, const dq_wmat *w, const int32_t *ids,
                               int n, float *y) {
  cuda_ctx *c = ctx;
  return LAUNCH(c, "get_rows",
                dq_cu_get_rows(c->stream, (int)w->type, w->data, w->row_bytes,
                               w->n_cols, ids, n, y));
}

static void cuda_rmsnorm(void *ctx, const float *x, const float *w, float *y,
                         int n_tok, int dim, float eps) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "rmsnorm", dq_cu_rmsnorm(c->stream, x, w, y, n_tok, dim, eps));
}
static void cuda_layernorm(void *ctx, const float *x, const float *w,
                           const float *b, float *y, int n_tok, int dim,
                           float eps) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "layernorm",
         dq_cu_layernorm(c->stream, x, w, b, y, n_tok, dim, eps));
}
static void cuda_rope(void *ctx, float *x, int n_tok, int n_head, int head_dim,
                      const int32_t *pos, const dq_rope_params *r) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "rope",
         dq_cu_rope_apply(c->stream, x, n_tok, n_head, head_dim, pos, r));
}
static void cuda_rope_qk(void *ctx, float *q, float *k, int n_tok, int n_head,
                         int n_head_kv, int head_dim, const int32_t *pos,
                         const dq_rope_params *r) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "rope_qk", dq_cu_rope_qk(c->stream, q, k, n_tok, n_head,
                                     n_head_kv, head_dim, pos, r));
}
static void cuda_add(void *ctx, float *y, const float *x, size_t n) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "add", dq_cu_add(c->stream, y, x, n));
}
static void cuda_add_row(void *ctx, float *y, const float *b, int n_tok,
                         int dim) {
  cuda_ctx *c = ctx;
  if (b) /* optional biases arrive as NULL */
    LAUNCH(c, "add_row", dq_cu_add_row(c->stream, y, b, n_tok, dim));
}
static void cuda_scale(void *ctx, float *y, float s, size_t n) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "scale", dq_cu_scale(c->stream, y, s, n));
}
static void cuda_gelu(void *ctx, float *y, size_t n, int tanh_approx) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "gelu", dq_cu_gelu(c->stream, y, n, tanh_approx));
}
static void cuda_glu(void *ctx, float *g, const float *u, size_t n, int act) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "glu", dq_cu_glu(c->stream, g, u, n, act));
}
static void cuda_kv_store(void *ctx, void *cache, int store, int row0,
                          const float *x, int n_rows, int row_elems) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "kv_store", dq_cu_kv_store(c->stream, cache, store, row0, x,
                                       n_rows, row_elems));
}

static void cuda_rope_store(void *ctx, const dq_rope_store *a) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "rope_store",
         dq_cu_rope_store(c->stream, a->q, a->k, a->v, a->n_tok, a->n_head,
                          a->n_head_kv, a->head_dim, a->pos, a->rope,
                          a->k_cache, a->store_k, a->v_cache, a->store_v,
                          a->row0));
}

static void cuda_kv_gather(void *ctx, void *dst, const void *src, int store,
                           const int32_t *map, int n, int row_elems) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "kv_gather", dq_cu_kv_gather(c->stream, dst, src, store, map, n,
                                         row_elems));
}
static void cuda_sum_rows(void *ctx, float *x, int n_rows, size_t stride,
                          int n, float *y) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "sum_rows", dq_cu_sum_rows(c->stream, x, n_rows, stride, n, y));
}

static dq_status cuda_top_k(void *ctx, const float *x, int n,
                            const int32_t *pen, int n_pen, float penalty,
                            int k, int32_t *out) {
  cuda_ctx *c = ctx;
  if (!dq_cu_top_k_supported(n, n_pen, k))
    return DQ_ERR_UNSUPPORTED;
  return LAUNCH(c, "top_k", dq_cu_top_k(c->stream, x, n, pen, n_pen, penalty,
                                        k, out));
}

static dq_status cuda_kv_merge(void *ctx, const dq_kv_merge *a) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  /* the launcher copies the jobs into kernel parameters, at most
   * DQ_CU_MERGE_MAX_JOBS a launch: they are read here, not on the device */
  dq_cu_merge_job js[DQ_CU_MERGE_MAX_JOBS];
  for (int j0 = 0; j0 < a->n_jobs; j0 += DQ_CU_MERGE_MAX_JOBS) {
    int n = a->n_jobs - j0 < DQ_CU_MERGE_MAX_JOBS ? a->n_jobs - j0
                                                  : DQ_CU_MERGE_MAX_JOBS;
    for (int i = 0; i < n; i++) {
      const dq_kv_merge_job *J = &a->jobs[j0 + i];
      js[i] = (dq_cu_merge_job){J->k, J->v, J->off, J->m, J->n_merge};
    }
    dq_status st = LAUNCH(c, "kv_merge",
                          dq_cu_kv_merge(c->stream, js, n, a->store_k,
                                         a->store_v, a->n_head_kv,
                                         a->head_dim, a->rows, a->count,
                                         a->pairs, a->scratch));
    if (st)
      return st;
  }
  return DQ_OK;
}

static dq_status cuda_kv_fold(void *ctx, const dq_kv_fold *a) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  for (int i = 0; i < a->n_jobs; i++) { /* the launcher runs them in turn */
    const dq_kv_fold_job *J = &a->jobs[i];
    dq_cu_fold_job j = {J->k, J->v, J->off, J->f, J->coef_off};
    dq_status st = LAUNCH(c, "kv_fold",
                          dq_cu_kv_fold(c->stream, &j, 1, a->store_k,
                                        a->store_v, a->row_elems, a->rows,
                                        a->coef, a->scratch));
    if (st)
      return st;
  }
  return DQ_OK;
}

static void cuda_kv_rotate(void *ctx, void *cache, int store, int n_rows,
                           int n_head, int head_dim, const int32_t *delta,
                           const dq_rope_params *r) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "kv_rotate", dq_cu_kv_rotate(c->stream, cache, store, n_rows,
                                         n_head, head_dim, delta, r));
}

static dq_status cuda_attention(void *ctx, const dq_attn *a) {
  cuda_ctx *c = ctx;
  if (a->n_head_kv <= 0 || a->n_head % a->n_head_kv || a->n_kv <= 0)
    return DQ_ERR_ARG;
  if (c->failed)
    return DQ_ERR_DEVICE;
  /* while recording, the workspace is ours (the pool's would be allocation
   * nodes); it grows to twice the need, the old one retired until the
   * recorded graph has run */
  size_t need = c->capturing ? dq_cu_attn_ws_bytes(a) : 0;
  if (need > c->attn_ws_bytes) {
    if (c->attn_ws && c->n_ws_retired == (int)(sizeof c->ws_retired /
                                               sizeof c->ws_retired[0]))
      return fail(c, "attention workspace (too many outgrown)",
                  (int)cudaErrorStreamCaptureUnsupported);
    size_t want = (2 * need + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, want);
    if (e)
      return fail(c, "cudaMalloc (attention workspace)", (int)e);
    if (c->attn_ws)
      c->ws_retired[c->n_ws_retired++] = c->attn_ws;
    c->attn_ws = p;
    c->attn_ws_bytes = want;
  }
  dq_attn b = *a;
  b.ws = c->attn_ws;
  b.ws_bytes = c->attn_ws_bytes;
  return LAUNCH(c, "attention", dq_cu_attention(c->stream, &b));
}

static dq_status cuda_moe_route(void *ctx, const dq_moe_route *a) {
  cuda_ctx *c = ctx;
  if (dq_moe_cfg_check(&a->cfg)) /* the kernel assumes a valid rule */
    return DQ_ERR_ARG;
  return LAUNCH(c, "moe_route",
                dq_cu_moe_route(c->stream, &a->cfg, a->logits, a->bias,
                                a->n_tok, a->ids, a->w, a->load));
}

/* Device scratch of at least n floats for the expert pairs. */
static dq_status moe_reserve(cuda_ctx *c, size_t n) {
  if (n <= c->moe_cap)
    return DQ_OK;
  NOT_WHILE_RECORDING(c, "moe scratch growth");
  cudaStreamSynchronize(c->stream);
  cudaFree(c->moe_buf);
  c->moe_buf = NULL;
  c->moe_cap = 0;
  cudaError_t e = cudaMalloc((void **)&c->moe_buf, n * sizeof(float));
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return DQ_ERR_NOMEM;
  }
  if (e)
    return fail(c, "cudaMalloc (moe scratch)", (int)e);
  c->moe_cap = n;
  return DQ_OK;
}

/* Every (token, slot) pair p = t * n_used + j runs expert ids[p] on x[t]:
 * gate and up products, the gated unit, the down product, then each
 * token's pairs summed in slot order. */
static dq_status cuda_moe_ffn(void *ctx, const dq_moe_ffn *a) {
  cuda_ctx *c = ctx;
  if (c->failed)
    return DQ_ERR_DEVICE;
  const dq_wmat *G = a->gate, *U = a->up, *D = a->down;
  int np = a->n_tok * a->n_used;
  size_t F = (size_t)G->n_rows, O = (size_t)D->n_rows;
  /* the scratch below holds np rows of F (gate, up) and of O (down) */
  if (U->n_rows != G->n_rows || U->n_cols != G->n_cols ||
      D->n_cols != G->n_rows)
    return DQ_ERR_ARG;
  dq_status st = moe_reserve(c, (size_t)np * (2 * F + O));
  if (st)
    return st;
  float *g = c->moe_buf, *u = g + (size_t)np * F, *d = u + (size_t)np * F;
  size_t gs = a->gate_stride ? a->gate_stride : F * G->row_bytes;
  size_t us = a->up_stride ? a->up_stride : F * U->row_bytes;
  size_t ds = O * D->row_bytes;
  int e;
  if ((e = dq_cu_matvec_ids(c->mm, (int)G->type, G->data, G->row_bytes,
                            G->n_rows, G->n_cols, gs, a->ids, np,
                            a->n_expert, a->x, a->n_used, g)))
    return fail(c, "moe_ffn gate", e);
  if ((e = dq_cu_matvec_ids(c->mm, (int)U->type, U->data, U->row_bytes,
                            U->n_rows, U->n_cols, us, a->ids, np,
                            a->n_expert, a->x, a->n_used, u)))
    return fail(c, "moe_ffn up", e);
  if ((st = LAUNCH(c, "glu (moe)",
                   dq_cu_glu(c->stream, g, u, (size_t)np * F, a->act))))
    return st;
  if ((e = dq_cu_matvec_ids(c->mm, (int)D->type, D->data, D->row_bytes,
                            D->n_rows, D->n_cols, ds, a->ids, np,
                            a->n_expert, g, 1, d)))
    return fail(c, "moe_ffn down", e);
  return LAUNCH(c, "moe_combine",
                dq_cu_moe_combine(c->stream, d, a->w, a->n_tok, a->n_used,
                                  (int)O, a->out));
}

static void cuda_copy2d(void *ctx, float *dst, size_t dst_stride,
                        const float *src, size_t src_stride, int n_rows,
                        int row_len) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "copy2d", dq_cu_copy2d(c->stream, dst, dst_stride, src,
                                   src_stride, n_rows, row_len));
}
static void cuda_gate_rows(void *ctx, float *y, const float *g, int n_tok,
                           int dim) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "gate_rows", dq_cu_gate_rows(c->stream, y, g, n_tok, dim));
}
static void cuda_mean_pool_l2(void *ctx, const float *x, int n_tok, int dim,
                              float *out) {
  cuda_ctx *c = ctx;
  LAUNCH(c, "mean_pool_l2",
         dq_cu_mean_pool_l2(c->stream, x, n_tok, dim, out));
}

/* ---- construction ------------------------------------------------------- */

dq_status dq_backend_cuda_init(int device, dq_backend **out, dq_error *err) {
  *out = NULL;
  dq_cuda_info info;
  dq_cuda_probe(&info);
  if (info.n_devices <= 0)
    return dq_error_set(err, DQ_ERR_DEVICE, "cuda backend: %s",
                        info.error[0] ? info.error : "no CUDA device found");
  if (device < 0 || device >= info.n_devices)
    return dq_error_set(err, DQ_ERR_ARG,
                        "cuda backend: device %d does not exist (%d found)",
                        device, info.n_devices);
  dq_backend *be = calloc(1, sizeof *be);
  cuda_ctx *c = calloc(1, sizeof *c);
  if (!be || !c) {
    free(be);
    free(c);
    return dq_error_set(err, DQ_ERR_NOMEM, "cuda backend: out of memory");
  }
  c->device = device;
  cudaError_t e = cudaSetDevice(device);
  if (!e)
    e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  if (!e) {
    /* attention takes its split-key scratch with cudaMallocAsync: keep the
     * pool's memory between steps instead of returning it at each sync */
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    cudaGetLastError(); /* pools are optional: a failure here is not fatal */
  }
  int me = e ? 0 : dq_cu_mm_new(c->stream, &c->mm);
  /* the tensor-core attention against the CUDA-core kernel on this device
   * (off, with a notice, where they disagree) */
  char why[320] = "";
  if (!e && !me && dq_cu_attn_selfcheck(c->stream, why, sizeof why) < 0) {
    cuda_free_ctx(c);
    free(be);
    return dq_error_set(err, DQ_ERR_DEVICE, "cuda backend (device %d): %s",
                        device, why);
  }
  snprintf(c->note, sizeof c->note, "%s", why);
  if (e || me) {
    cuda_free_ctx(c);
    free(be);
    return dq_error_set(
        err, DQ_ERR_DEVICE, "cuda backend (device %d): %s", device,
        e                     ? cudaGetErrorString(e)
        : me == DQ_CU_NO_BLAS ? dq_cu_blas_load()
                              : "cannot create the cuBLAS handle / scratch");
  }
  be->ctx = c;
  be->i = (dq_backend_i){
      .name = cuda_name,
      .free = cuda_free_ctx,
      .error = cuda_error,
      .notice = cuda_notice,
      .buf_alloc = cuda_buf_alloc,
      .buf_free = cuda_buf_free,
      .weight_map = cuda_weight_map,
      .upload = cuda_upload,
      .upload_async = cuda_upload_async,
      .host_alloc = cuda_host_alloc,
      .host_free = cuda_host_free,
      .download = cuda_download,
      .sync = cuda_sync,
      .matmul = cuda_matmul,
      .matmul_n = cuda_matmul_n,
      .matmul_add = cuda_matmul_add,
      .matmul_glu = cuda_matmul_glu,
      .get_rows = cuda_get_rows,
      .rmsnorm = cuda_rmsnorm,
      .layernorm = cuda_layernorm,
      .rope = cuda_rope,
      .rope_qk = cuda_rope_qk,
      .add = cuda_add,
      .add_row = cuda_add_row,
      .scale = cuda_scale,
      .gelu = cuda_gelu,
      .glu = cuda_glu,
      .kv_store = cuda_kv_store,
      .rope_store = cuda_rope_store,
      .attention = cuda_attention,
      .moe_route = cuda_moe_route,
      .moe_ffn = cuda_moe_ffn,
      .copy2d = cuda_copy2d,
      .gate_rows = cuda_gate_rows,
      .mean_pool_l2 = cuda_mean_pool_l2,
      .kv_gather = cuda_kv_gather,
      .sum_rows = cuda_sum_rows,
      .top_k = cuda_top_k,
      .kv_rotate = cuda_kv_rotate,
      .kv_merge = cuda_kv_merge,
      .kv_fold = cuda_kv_fold,
      .graph_begin = cuda_graph_begin,
      .graph_end = cuda_graph_end,
      .graph_stats = cuda_graph_stats,
  };
  *out = be;
  return DQ_OK;
}

#else /* !DQ_HAVE_CUDA */

dq_status dq_backend_cuda_init(int device, dq_backend **out, dq_error *err) {
  *out = NULL;
  return dq_error_set(err, DQ_ERR_UNSUPPORTED,
                      "cuda backend (device %d): this docqa was built "
                      "without CUDA (nvcc not found at build time); use "
                      "--backend cpu",
                      device);
}

#endif /* DQ_HAVE_CUDA */
