/*
 * matmul.cu - weight-matrix products of the CUDA backend (cuda_ops.h,
 * "matrix products"): y[t] = W x[t] for ggml weight types, and the
 * expert-indexed form of mixture-of-experts layers. Not here: the block
 * layouts (quant.cuh, checked on the host against the CPU reference),
 * attention, element-wise ops.
 *
 * Two paths, picked per call:
 *
 * 1. n_tok <= DQC_MV_MAX_TOK (8): a mat-vec kernel that reads every weight
 *    byte once per call, for all tokens. Its unit of work is a step of a
 *    weight row: 32 "units" (quant.cuh), one per lane, 1024 elements for
 *    the 32-element formats, 2048 for Q4_K/Q6_K, 512 for F32/F16/BF16.
 *    A CTA has W (1..4) warps, each owning R consecutive rows (R = 4; 2 for
 *    8 tokens or F32 weights); per step:
 *      - the CTA stages the step's activations of all NT tokens (1, 2, 4 or
 *        8: the token count rounded up, extra rows zero) in shared memory,
 *        padded every PERIOD floats so the 8 lanes of each quarter-warp hit
 *        different banks, plus the sum of every 16 of them;
 *      - each warp copies its R rows' step bytes to its own shared tile with
 *        coalesced loads of the widest word the rows' alignment allows (16
 *        bytes; 8 for rows of 576 Q4_1 or 640 Q8_0 columns), all of a
 *        lane's loads issued before its stores (quant.cuh's staging);
 *      - __syncthreads; each lane decodes its unit of each of the R rows and
 *        accumulates in registers: one staged float4 of x serves R rows, a
 *        decoded weight serves NT tokens;
 *      - __syncthreads (the shared buffers are reused by the next step).
 *    At the end each warp reduces its R x NT sums with shuffles and writes
 *    them. No atomics, no second pass, no scratch memory, one launch.
 *    4/5/6-bit weights become floats with one byte permute each: the byte q
 *    under exponent byte 0x3F is 0.5 + q/256, so sum q x = 256 F - 128 X
 *    with F the dot of those floats and X the staged 16-sum (quant.cuh);
 *    Q8_0 bytes are converted exactly (permute + subtract).
 *    dq_cu_matvec_ids is the same kernel at NT = 1 with grid.y over the
 *    pairs: each CTA reads ids[p] on the device and stages x[p / x_div].
 *    With many pairs to an expert (prefill: n_pairs >= 2 n_expert) the
 *    pairs are first grouped by expert on the device (ids_group_kernel,
 *    no host round trip), and the kernel runs at NT = 8 with grid.y over
 *    the groups (an upper bound, n_pairs / 8 + n_expert; the CTAs past
 *    the groups in use return at once), each staging its pairs' x rows
 *    and writing their y rows: an expert's weights are read once per 8
 *    pairs instead of once per pair. Prediction (unmeasured): a
 *    DeepSeek-V2-Lite-shaped prefill chunk (2048 tokens, top-6 of 64)
 *    reads 1.6k instead of 12.3k expert matrices per product, 3-5x faster
 *    (NT = 8 costs 2-3x NT = 1 per weight, below).
 *
 *    Fused forms (dq_cu_matmul_n, dq_cu_matmul_glu; the engine's decode
 *    step uses them, backend.h): the output added to y (the residual
 *    stream: the add kernel saved); several matrices of one type on one x
 *    in one launch (a layer's q, k and v: their CTAs back to back on
 *    grid.x); and gate and up in one launch, each warp holding R/2 rows
 *    of each and writing act(g) u (act.cuh, the glu op's formula), so
 *    neither the up product nor the gated unit is a launch of its own.
 *    These save 6 of a Llama layer's 17-18 decode launches (5 when v's
 *    type differs from q's and k's, as in Q4_K_M files), elem.cu's
 *    rope_store 3 more (two RoPEs and two KV stores in one). The last two
 *    are built for 1 and 2 tokens (MV_FUSED_NT) only. Prediction
 *    (unmeasured): at ~2 us a dependent launch in a graph, ~0.4 ms of
 *    the 8B shape's ~2 ms step: 10-20% faster decode.
 *
 * 2. n_tok > 8: x is converted once to F16, scaled by 2^-k, the smallest
 *    power that brings the call's largest finite |x| under 65504 (found on
 *    the device: a max kernel, then the conversion; cuBLAS's alpha is 2^k,
 *    read from device memory, so no host round trip and graph capture
 *    still works); k = 0, the same bits as no scaling, for the default
 *    models (Gemma-3-270m's largest matmul input over a 1.5k-token prefill
 *    is 334, measured on the CPU path), while larger Gemmas are reported
 *    to pass 65504. What remains is saturated (infinities), NaN kept.
 *    Weights
 *    are dequantized to F16 in row tiles of at most DQ_MM_TILE_BYTES
 *    (64 MiB) of scratch, and cublasGemmEx (F16 inputs, F32 compute and
 *    output) multiplies each tile: in cuBLAS's column-major terms the tile
 *    (row-major tile_rows x n_cols) is A^T with lda = n_cols, x (row-major
 *    n_tok x n_cols) is B with ldb = n_cols, and the output is the
 *    column-major tile_rows x n_tok block of y^T at y + row0, ldc = n_rows.
 *    F16 weights go to cublasGemmEx as they are (lda = row_bytes / 2), BF16
 *    weights with x converted to BF16, F32 weights to cublasSgemm with x as
 *    it is. Float weights whose n_cols is not a multiple of 16 take this
 *    path at every n_tok (the mat-vec kernel works in 16s), and so does a
 *    call whose mat-vec shared memory exceeds the GPU's per-CTA limit (8
 *    tokens of Q4_K/Q6_K need ~85 KiB: fine on Hopper, not on Turing).
 *
 * Performance intent (not measured: written without a GPU). Target: decode
 * of Llama-3-8B Q4_K_M on an H200 (4.8 TB/s, 132 SMs at ~1.98 GHz).
 *  - Bytes per token: the matmul weights, ~4.6 GB (the 4.9 GB file less
 *    the 0.29 GB token embedding, which get_rows reads one row of): Q4_K
 *    (0.5625 B/weight) and Q6_K (0.82 B/weight: output, half of attn_v and
 *    ffn_down). Floor 0.96 ms/token; the goal (>= 70 %) is <= 1.37 ms.
 *  - At 4.8 TB/s an SM must retire ~32 Q4_K weights per clock. Issue budget
 *    128 thread-instructions/clock/SM -> ~3.9 per weight. Q4_K costs per
 *    weight at NT = 1: 1 permute + 1 FFMA + ~0.4 nibble masking + ~0.3 for
 *    per-piece scales and the F/X combination + ~0.1 loads ~= 2.8; the
 *    shared-memory path (128 B/clock/SM) carries per weight 0.56 B staged
 *    (store + load) + 1 B of activations (4 B / R) + 0.25 B of activation
 *    staging (1/(W R)) -> ~0.8 of its capacity at full DRAM rate. Both are
 *    under the limits with modest headroom: expect 70-80 % of bandwidth on
 *    the large matrices (ffn 14336 x 4096, output), less on 1024 x 4096
 *    (attn_k/v: ~128 CTAs, latency-bound, ~3 % of the bytes).
 *  - What a measurement should check first: achieved DRAM throughput of
 *    mv_kernel<Q4_K, 1, 4> and <Q6_K, 1, 4> on 14336 x 4096 / 4096 x 14336
 *    (Nsight Compute "dram__throughput"), issue-slot and shared-memory
 *    utilisation, and the register count (spills would show as local
 *    memory traffic). Levers, in order: cp.async staging of weights
 *    (sm_80+, frees registers and overlaps the next step's loads), R = 8 at
 *    NT = 1. (The per-token launch overhead: CUDA graphs, backend_cuda.c.)
 *  - n_tok 2..8: weights are read once, so time grows mostly with the
 *    activations' shared-memory traffic (NT/R bytes per weight); 8 tokens
 *    should cost ~2-3x one token, far less than 8 calls.
 *
 * Errors: every launch is followed by cudaGetLastError and every cuBLAS call
 * by a status check; the failing step's name stays in the context
 * (dq_cu_mm_last_step). Launchers never synchronise; the only waits are in
 * dq_cu_mm_free and when scratch must be reallocated after an allocation
 * failure (see mm_reserve).
 */
#include "act.cuh"
#include "cuda_ops.h"
#include "launch.cuh"
#include "quant.cuh"

#include <atomic>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#if !DQ_CU_BLAS_LINKED
#include <dlfcn.h>
#endif

#define DQ_MM_TILE_BYTES ((size_t)64 << 20) /* F16 weight tile scratch */
#define DQ_MM_RETIRED_MAX 32
/* mv_launch: the call needs more shared memory than the GPU has per CTA */
#define MV_NO_FIT (-2)
#define FULL_MASK 0xffffffffu

/* The context. Scratch only serves the cuBLAS path. Scratch that grew is
 * not freed at once: kernels queued on the stream may still read it and
 * cudaFree would wait for them; it is kept in `retired` until
 * dq_cu_mm_free (growth doubles, so that is at most as much again). */
struct dq_cu_mm {
  cudaStream_t stream;
  cublasHandle_t blas;
  int n_sm;       /* multiprocessors of the current device */
  int smem_optin; /* its largest shared memory per CTA, in bytes */
  int dev;        /* that device */
  void *blas_ws;  /* cuBLAS's workspace, ours (see dq_cu_mm_new) */
  /* device words of the F16 path's activation scale (mm_gemm): [0] the
   * largest finite |x| of the call as bits, then as floats [2] alpha =
   * 2^k, [3] beta = 0 and [4] beta = 1 (products added to y) for cuBLAS */
  unsigned *xscale;
  void *scratch;  /* device memory, scratch_bytes */
  size_t scratch_bytes;
  void *retired[DQ_MM_RETIRED_MAX];
  int n_retired;
  const char *last_step; /* static string */
};

namespace { /* everything up to the public interface is file-local */

/* ---- cuBLAS, loaded when the first context is made ----------------------
 *
 * Not linked: libcublas pulls in libcublasLt (540 MB), whose loading and
 * relocation cost every docqa process 60-90 ms and 215 MB of resident
 * memory at start, CUDA or not (`docqa xref` p50 88 ms, 0.8 ms of it
 * its own query). dq_cu_blas_load() opens libcublas.so.<major of the headers>
 * (the loader's paths, then the toolkit's library folder of the build)
 * and takes the calls below from it, once. The CPU emulator's build
 * (DQ_CU_BLAS_LINKED) takes its stand-ins instead. */
struct blas_api {
  decltype(&cublasCreate) create;
  decltype(&cublasDestroy) destroy;
  decltype(&cublasSetStream) set_stream;
  decltype(&cublasSetWorkspace) set_workspace;
  decltype(&cublasSetPointerMode) set_pointer_mode;
  /* the int forms (C++ also declares 64-bit overloads) */
  cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                          int m, int n, int k, const float *alpha,
                          const float *a, int lda, const float *b, int ldb,
                          const float *beta, float *c, int ldc);
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t,
                            cublasOperation_t, int m, int n, int k,
                            const void *alpha, const void *a, cudaDataType at,
                            int lda, const void *b, cudaDataType bt, int ldb,
                            const void *beta, void *c, cudaDataType ct, int ldc,
                            cublasComputeType_t comp, cublasGemmAlgo_t algo);
};
const blas_api *g_blas; /* set by dq_cu_blas_load before any context */

#define DQ_STR_(x) #x
#define DQ_STR(x) DQ_STR_(x)
#define DQ_CUBLAS_SONAME "libcublas.so." DQ_STR(CUBLAS_VER_MAJOR)

struct blas_loaded {
  blas_api api;
  char why[400]; /* empty when loaded */
};

blas_loaded blas_open(void) {
  blas_loaded l = {};
#if DQ_CU_BLAS_LINKED
  l.api = blas_api{cublasCreate,       cublasDestroy,        cublasSetStream,
                   cublasSetWorkspace, cublasSetPointerMode, cublasSgemm,
                   cublasGemmEx};
#else
  void *h = dlopen(DQ_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  const char *first = h ? NULL : dlerror();
  char first_msg[200] = "";
  if (first)
    snprintf(first_msg, sizeof first_msg, "%s", first);
#ifdef DQ_CUBLAS_DIR
  if (!h)
    h = dlopen(DQ_CUBLAS_DIR "/" DQ_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
#endif
  if (!h) {
    snprintf(l.why, sizeof l.why,
             "cannot load cuBLAS (%s): %s; install the CUDA toolkit's "
             "cuBLAS %d or put its folder in LD_LIBRARY_PATH",
             DQ_CUBLAS_SONAME, first_msg, CUBLAS_VER_MAJOR);
    return l;
  }
  /* the exported names (cublas_v2.h maps the calls to the _v2 ones) */
  static const char *const names[] = {
      "cublasCreate_v2",       "cublasDestroy_v2",        "cublasSetStream_v2",
      "cublasSetWorkspace_v2", "cublasSetPointerMode_v2", "cublasSgemm_v2",
      "cublasGemmEx"};
  void *fn[7];
  for (int i = 0; i < 7; i++)
    if (!(fn[i] = dlsym(h, names[i]))) {
      snprintf(l.why, sizeof l.why, "%s has no %s: not a cuBLAS %d library",
               DQ_CUBLAS_SONAME, names[i], CUBLAS_VER_MAJOR);
      dlclose(h);
      return l;
    }
  l.api.create = (decltype(l.api.create))fn[0];
  l.api.destroy = (decltype(l.api.destroy))fn[1];
  l.api.set_stream = (decltype(l.api.set_stream))fn[2];
  l.api.set_workspace = (decltype(l.api.set_workspace))fn[3];
  l.api.set_pointer_mode = (decltype(l.api.set_pointer_mode))fn[4];
  l.api.sgemm = (decltype(l.api.sgemm))fn[5];
  l.api.gemm_ex = (decltype(l.api.gemm_ex))fn[6];
#endif
  return l;
}

} // namespace

extern "C" const char *dq_cu_blas_load(void) {
  static const blas_loaded l = blas_open(); /* once, thread-safe */
  if (l.why[0])
    return l.why;
  g_blas = &l.api;
  return NULL;
}

namespace {

/* ---- shared-memory reader for quant.cuh's load() ------------------------- */

/* Reads fields of blocks staged back to back from a 16-byte aligned tile.
 * a2: the field is only 2-byte aligned; read the aligned words around it
 * and funnel-shift (reads up to 4 bytes past the field, inside the tile's
 * slack). The host branches are never run; they keep these callable from
 * quant.cuh's __host__ __device__ functions. */
struct smem_rd {
  __host__ __device__ __forceinline__ uint16_t u16(const uint8_t *p) const {
    return *(const uint16_t *)p;
  }
  __host__ __device__ __forceinline__ float h2f(uint16_t h) const {
    return __half2float(__ushort_as_half(h));
  }
  template <int N>
  __host__ __device__ __forceinline__ void a2(const uint8_t *p,
                                              uint32_t *w) const {
    const unsigned mis = (unsigned)((uintptr_t)p & 3u);
    const uint32_t *q = (const uint32_t *)(p - mis);
    uint32_t cur = q[0];
    for (int i = 0; i < N; i++) {
      const uint32_t nxt = q[i + 1];
#ifdef __CUDA_ARCH__
      w[i] = __funnelshift_r(cur, nxt, mis * 8u);
#else
      w[i] = mis ? (cur >> 16 | nxt << 16) : cur;
#endif
      cur = nxt;
    }
  }
  template <int N>
  __host__ __device__ __forceinline__ void a4(const uint8_t *p,
                                              uint32_t *w) const {
    const uint32_t *q = (const uint32_t *)p;
    for (int i = 0; i < N; i++)
      w[i] = q[i];
  }
  template <int N>
  __host__ __device__ __forceinline__ void a16(const uint8_t *p,
                                               uint32_t *w) const {
    static_assert(N % 4 == 0, "a16 reads whole 16-byte vectors");
    const uint4 *q = (const uint4 *)p;
    for (int i = 0; i < N / 4; i++) {
      const uint4 v = q[i];
      w[4 * i] = v.x;
      w[4 * i + 1] = v.y;
      w[4 * i + 2] = v.z;
      w[4 * i + 3] = v.w;
    }
  }
};

/* ---- mat-vec kernel ------------------------------------------------------ */

struct mv_args {
  const uint8_t *w; /* matmul: the matrix; ids: expert 0's */
  size_t row_bytes;
  size_t stride;      /* ids: bytes between experts */
  const int32_t *ids; /* NULL for matmul */
  int64_t n_rows, n_cols, n_blocks;
  const float *x;
  int n_tok;  /* matmul: x rows present = y rows written */
  int x_div;  /* ids: pair p reads x row p / x_div */
  int pair0;  /* ids: pair (or group) of blockIdx.y == 0 */
  /* grouped ids (ids_group_kernel's table), NULL otherwise: instance g is
   * group g, up to DQC_MV_MAX_TOK pairs of one expert */
  const int32_t *groups;
  int max_groups;
  int w_al;   /* every row start is aligned to w_al bytes (dqc_w_align) */
  int x_al16; /* x and its rows are 16-byte aligned */
  float *y;
  /* matmul only (ids NULL): */
  int mode; /* MV_STORE, MV_ADD (y += W x), MV_GLU (y = act(W x) (W2 x)) */
  int act;  /* MV_GLU: 0 SiLU, 1 GELU (tanh), as dq_cu_glu's */
  const uint8_t *w2; /* MV_GLU: the up matrix (the same type and rows) */
  size_t row_bytes2;
  /* n_mat > 1: the launch's matrices (one type, one x): matrix 0 is w,
   * n_rows, row_bytes and y above (mat[0] unused), matrix m >= 1 is
   * mat[m], its CTAs from blockIdx.x = mat[m].cta0 on (set by mv_launch) */
  int n_mat;
  struct {
    const uint8_t *w;
    size_t row_bytes;
    int64_t n_rows;
    float *y;
    int cta0;
  } mat[DQ_CU_MM_MAX];
};

enum { MV_STORE = 0, MV_ADD = 1, MV_GLU = 2 };
/* The kernel's build (template K): one matrix (store or add), several
 * matrices (n_mat > 1; store or add), or MV_GLU. The last two are built
 * for 1 and 2 tokens only (MV_FUSED_NT: decode), which keeps the plain
 * build's registers as they were (a runtime choice costs ~20-35 more per
 * thread, with spills at 4 tokens: sm_90 ptxas) and the builds few. */
enum { MV_K_ONE = 0, MV_K_MULTI = 1, MV_K_GLU = 2 };
#define MV_FUSED_NT 2

/* Four weights of piece p, float4 k, as floats: the 0.5 + q/256 form for
 * KIND_U (see quant.cuh), exact values otherwise. */
template <int T>
__device__ __forceinline__ void decode4(const typename dqc_traits<T>::raw &r,
                                        int p, int k, float *v) {
  typedef dqc_traits<T> Tr;
  if constexpr (Tr::KIND == DQC_KIND_U) {
    const uint32_t q = Tr::qword(r, p, k);
#pragma unroll
    for (int i = 0; i < 4; i++)
      v[i] =
          __uint_as_float(__byte_perm(q, DQC_FTRICK_BASE, dqc_ftrick_sel(i)));
  } else if constexpr (Tr::KIND == DQC_KIND_S8) {
    const uint32_t q = Tr::qword(r, p, k) ^ 0x80808080u;
#pragma unroll
    for (int i = 0; i < 4; i++)
      v[i] = __uint_as_float(__byte_perm(q, DQC_S8_BASE, dqc_s8_sel(i))) -
             DQC_S8_BIAS;
  } else if constexpr (Tr::KIND == DQC_KIND_F32) {
#pragma unroll
    for (int i = 0; i < 4; i++)
      v[i] = __uint_as_float(r.w[4 * k + i]);
  } else if constexpr (Tr::KIND == DQC_KIND_F16) {
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const uint32_t h = r.w[2 * k + i];
      v[2 * i] = __half2float(__ushort_as_half((unsigned short)(h & 0xffffu)));
      v[2 * i + 1] = __half2float(__ushort_as_half((unsigned short)(h >> 16)));
    }
  } else {
    static_assert(Tr::KIND == DQC_KIND_BF16, "unknown kind");
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const uint32_t h = r.w[2 * k + i];
      v[2 * i] = __uint_as_float(h << 16);
      v[2 * i + 1] = __uint_as_float(h & 0xffff0000u);
    }
  }
}

/* Stages elements [e0, e0 + ne) of NT activation rows (zeros for rows >=
 * n_x) into xs (rows XT floats apart, padded, see dqc_mv_xidx) and their
 * 16-element sums into sums. All threads of the CTA take part: the loop
 * count is uniform, so the shuffles (4 consecutive lanes hold one group of
 * 16: n4 is a multiple of 4) see every lane. */
template <int T, int NT>
__device__ __forceinline__ void stage_x(float *xs, float *sums, const float *x,
                                        int64_t n_cols, int n_x, int64_t e0,
                                        int ne, int x_al16,
                                        const int32_t *rows, int x_div) {
  typedef dqc_mv_shape<T> S;
  const int n4 = ne >> 2, total = NT * n4;
  for (int base = 0; base < total; base += blockDim.x) {
    const int c = base + (int)threadIdx.x;
    const int t = c / n4, cc = c - t * n4;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (c < total && t < n_x) {
      const size_t xr = rows ? (size_t)(rows[t] / x_div) : (size_t)t;
      const float *src = x + xr * (size_t)n_cols + (size_t)e0 + 4 * (size_t)cc;
      if (x_al16)
        v = __ldg((const float4 *)src);
      else
        v = make_float4(__ldg(src), __ldg(src + 1), __ldg(src + 2),
                        __ldg(src + 3));
    }
    float part = (v.x + v.y) + (v.z + v.w);
    part += __shfl_xor_sync(FULL_MASK, part, 1);
    part += __shfl_xor_sync(FULL_MASK, part, 2);
    if (c < total) {
      *(float4 *)(xs + t * S::XT + dqc_mv_xidx(4 * cc, dqc_traits<T>::PERIOD)) =
          v;
      if ((cc & 3) == 0)
        sums[t * S::N_SUMS + (cc >> 2)] = part;
    }
  }
}

/* One lane's unit (block bi of the step, unit j of the block) of R rows
 * against the staged activations, into acc[r][t]. */
template <int T, int NT, int R>
__device__ __forceinline__ void mv_unit(const uint8_t *tile, const float *xs,
                                        const float *sums, int bi, int j,
                                        float (&acc)[R][NT]) {
  typedef dqc_traits<T> Tr;
  typedef dqc_mv_shape<T> S;
  const smem_rd rd;
  typename Tr::raw raw[R];
#pragma unroll
  for (int r = 0; r < R; r++)
    Tr::load(rd, tile + r * S::PITCH + bi * Tr::BB, j, raw[r]);
#pragma unroll
  for (int p = 0; p < Tr::P; p++) {
    const int e = bi * Tr::BE + Tr::piece_elem(j, p);
    float fa[R], fb[R];
    if constexpr (Tr::KIND == DQC_KIND_U || Tr::KIND == DQC_KIND_S8) {
#pragma unroll
      for (int r = 0; r < R; r++) {
        float ca, cb;
        Tr::coef(raw[r], p, &ca, &cb);
        if constexpr (Tr::KIND == DQC_KIND_U) {
          dqc_ftrick_coef(ca, cb, &fa[r], &fb[r]);
        } else {
          fa[r] = ca;
          fb[r] = cb;
        }
      }
    }
    float f[R][NT];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
      for (int t = 0; t < NT; t++)
        f[r][t] = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
      float4 xv[NT];
#pragma unroll
      for (int t = 0; t < NT; t++)
        xv[t] = *(const float4 *)(xs + t * S::XT +
                                  dqc_mv_xidx(e + 4 * k, Tr::PERIOD));
#pragma unroll
      for (int r = 0; r < R; r++) {
        float wv[4];
        decode4<T>(raw[r], p, k, wv);
#pragma unroll
        for (int t = 0; t < NT; t++) {
          f[r][t] = fmaf(wv[0], xv[t].x, f[r][t]);
          f[r][t] = fmaf(wv[1], xv[t].y, f[r][t]);
          f[r][t] = fmaf(wv[2], xv[t].z, f[r][t]);
          f[r][t] = fmaf(wv[3], xv[t].w, f[r][t]);
        }
      }
    }
    if constexpr (Tr::KIND == DQC_KIND_U) {
      float xsum[NT];
#pragma unroll
      for (int t = 0; t < NT; t++)
        xsum[t] = sums[t * S::N_SUMS + (e >> 4)];
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int t = 0; t < NT; t++)
          acc[r][t] = fmaf(fa[r], f[r][t], fmaf(fb[r], xsum[t], acc[r][t]));
    } else if constexpr (Tr::KIND == DQC_KIND_S8) {
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int t = 0; t < NT; t++)
          acc[r][t] = fmaf(fa[r], f[r][t], acc[r][t]);
    } else {
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int t = 0; t < NT; t++)
          acc[r][t] += f[r][t];
    }
  }
}

/* The kernel's body; mv_kernel and mv_kernel4 below are its two builds. */
template <int T, int NT, int R, int K>
__device__ __forceinline__ void mv_body(const mv_args &a) {
  typedef dqc_traits<T> Tr;
  typedef dqc_mv_shape<T> S;
  static_assert(R * NT <= 32, "one output per lane at the end");
  DQ_CU_DYN_SMEM(uint4, mv_smem);
  float *xs = (float *)mv_smem;  /* NT x XT */
  float *sums = xs + NT * S::XT; /* NT x N_SUMS */
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint8_t *tile =
      (uint8_t *)(sums + NT * S::N_SUMS) + (size_t)warp * R * S::PITCH;

  const int inst = a.pair0 + (int)blockIdx.y;
  const uint8_t *w = a.w;
  const float *x = a.x;
  float *y = a.y;
  int n_x = a.n_tok;
  size_t row_bytes = a.row_bytes;
  int64_t n_rows = a.n_rows, cta = blockIdx.x;
  /* several matrices: this CTA's (static indices: no local copy of a) */
  if constexpr (K == MV_K_MULTI) {
#pragma unroll
    for (int m = 1; m < DQ_CU_MM_MAX; m++)
      if (m < a.n_mat && blockIdx.x >= (unsigned)a.mat[m].cta0) {
        w = a.mat[m].w;
        row_bytes = a.mat[m].row_bytes;
        n_rows = a.mat[m].n_rows;
        y = a.mat[m].y;
        cta = (int64_t)blockIdx.x - a.mat[m].cta0;
      }
  }
  /* MV_GLU: a warp's first R/2 rows are gate rows, the others the same
   * rows of up; it writes R/2 outputs */
  constexpr bool glu = K == MV_K_GLU;
  constexpr int RH = R / 2;
  static_assert(R % 2 == 0, "gate and up rows in pairs");
  const int32_t *rows = NULL; /* grouped: the pair of each token slot */
  if (a.groups) {
    if (inst >= a.groups[0])
      return; /* past the groups in use: the whole CTA, before any barrier */
    w += (int64_t)a.groups[1 + inst] * (int64_t)a.stride;
    rows = a.groups + 1 + a.max_groups + (size_t)inst * DQC_MV_MAX_TOK;
    n_x = 0;
    while (n_x < NT && rows[n_x] >= 0)
      n_x++;
  } else if (a.ids) {
    w += (int64_t)a.ids[inst] * (int64_t)a.stride;
    x += (size_t)(inst / a.x_div) * (size_t)a.n_cols;
    y += (size_t)inst * (size_t)a.n_rows;
    n_x = 1;
  }
  const int64_t row0 =
      (cta * (blockDim.x >> 5) + warp) * (glu ? (int64_t)RH : (int64_t)R);
  const bool active = row0 < n_rows;
  const int bi = lane / Tr::UPB, j = lane % Tr::UPB;

  float acc[R][NT];
#pragma unroll
  for (int r = 0; r < R; r++)
#pragma unroll
    for (int t = 0; t < NT; t++)
      acc[r][t] = 0.0f;

  const int64_t n_steps = (a.n_blocks + S::G - 1) / S::G;
  for (int64_t s = 0; s < n_steps; s++) {
    const int64_t b0 = s * S::G;
    const int cnt = (int)min((int64_t)S::G, a.n_blocks - b0);
    stage_x<T, NT>(xs, sums, x, a.n_cols, n_x, b0 * Tr::BE, cnt * Tr::BE,
                   a.x_al16, rows, a.x_div);
    if (active) {
      const uint8_t *src[R];
#pragma unroll
      for (int r = 0; r < R; r++) {
        const bool up = glu && r >= RH;
        src[r] = (up ? a.w2 : w) +
                 (size_t)min(row0 + (up ? r - RH : r), n_rows - 1) *
                     (up ? a.row_bytes2 : row_bytes) +
                 (size_t)b0 * Tr::BB;
      }
      dqc_stage_w<R, S::STEP_BYTES, S::PITCH>(tile, src, cnt * Tr::BB, a.w_al,
                                              lane);
    }
    __syncthreads();
    if (active && bi < cnt)
      mv_unit<T, NT, R>(tile, xs, sums, bi, j, acc);
    __syncthreads();
  }
  if (!active)
    return;

#pragma unroll
  for (int r = 0; r < R; r++)
#pragma unroll
    for (int t = 0; t < NT; t++) {
      float v = acc[r][t];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(FULL_MASK, v, o);
      acc[r][t] = v;
    }
  if constexpr (glu) {
#pragma unroll
    for (int i = 0; i < RH * NT; i++) {
      const int r = i / NT, t = i % NT;
      if (lane == i && row0 + r < n_rows && t < n_x)
        y[(size_t)t * (size_t)n_rows + (size_t)(row0 + r)] =
            dqa_glu(acc[r][t], acc[r + RH][t], a.act);
    }
  } else {
#pragma unroll
    for (int i = 0; i < R * NT; i++) {
      const int r = i / NT, t = i % NT;
      if (lane == i && row0 + r < n_rows && t < n_x) {
        float *o = y + (rows ? (size_t)rows[t] : (size_t)t) * (size_t)n_rows +
                   (size_t)(row0 + r);
        *o = a.mode == MV_ADD ? *o + acc[r][t] : acc[r][t];
      }
    }
  }
}

/* Grid: x over groups of (blockDim.x / 32) * R rows (or R / 2 for MV_GLU;
 * several matrices: their groups back to back), y over matrices (1 for
 * matmul, pairs for ids). Dynamic shared memory: dqc_mv_smem(). */
template <int T, int NT, int R, int K>
__global__ void __launch_bounds__(32 * DQC_MV_MAX_WARPS)
    mv_kernel(const mv_args a) {
  mv_body<T, NT, R, K>(a);
}

/* The same, built for 4 CTAs an SM. Left to itself ptxas gives the
 * 1-token K-quant kernels 128 registers (4 CTAs an SM) or ~168 (3) on
 * unrelated changes: adding fields to mv_args moved Q6_K from 128 to 168.
 * They fit 128 without spills (sm_90 ptxas: Q4_K, Q6_K), so those are
 * built this way (MV_CTAS4); Q6_K over several matrices is not (72 bytes
 * spilled at 128). (A second launch-bounds argument of 1 is not the
 * default: ptxas then takes up to 255 registers everywhere.) */
template <int T, int NT, int R, int K>
__global__ void __launch_bounds__(32 * DQC_MV_MAX_WARPS, 4)
    mv_kernel4(const mv_args a) {
  mv_body<T, NT, R, K>(a);
}
#define MV_CTAS4(T, NT, K)                                                     \
  ((NT) == 1 &&                                                                \
   ((T) == DQ_TYPE_Q4_K || ((T) == DQ_TYPE_Q6_K && (K) != MV_K_MULTI)))

/* ---- grouping the pairs of dq_cu_matvec_ids by expert -------------------
 * One block. The table (int32): [0] the number of groups G; [1 + g] the
 * expert of group g (g < max_groups); [1 + max_groups + 8 g + i] its pairs,
 * -1 past its count: expert e's pairs fill ceil(n_e / 8) consecutive
 * groups, 8 to a group but the last. Which pair lands in which slot
 * depends on the atomics' order, but every output is its own pair's sum
 * whatever its slot, so the products do not. Pairs whose id is outside
 * [0, n_expert) take no group (the caller's ids come from the router).
 * Dynamic shared memory: 2 n_expert + 1 ints. */
__global__ void __launch_bounds__(1024)
    ids_group_kernel(const int32_t *ids, int n_pairs, int n_expert,
                     int max_groups, int32_t *tab) {
  DQ_CU_DYN_SMEM(int, sh);
  int *cnt = sh, *off = sh + n_expert, *n_groups = sh + 2 * n_expert;
  const int tid = threadIdx.x, nt = blockDim.x;
  for (int e = tid; e < n_expert; e += nt)
    cnt[e] = 0;
  __syncthreads();
  for (int p = tid; p < n_pairs; p += nt) {
    const int e = ids[p];
    if (e >= 0 && e < n_expert)
      atomicAdd(&cnt[e], 1);
  }
  __syncthreads();
  if (tid == 0) {
    int g = 0;
    for (int e = 0; e < n_expert; e++) {
      off[e] = g;
      g += (cnt[e] + DQC_MV_MAX_TOK - 1) / DQC_MV_MAX_TOK;
    }
    *n_groups = g;
    tab[0] = g;
  }
  __syncthreads();
  for (int e = tid; e < n_expert; e += nt) {
    const int ng = (cnt[e] + DQC_MV_MAX_TOK - 1) / DQC_MV_MAX_TOK;
    for (int g = 0; g < ng; g++)
      tab[1 + off[e] + g] = e;
  }
  int32_t *slots = tab + 1 + max_groups;
  for (int i = tid; i < *n_groups * DQC_MV_MAX_TOK; i += nt)
    slots[i] = -1;
  __syncthreads();
  for (int e = tid; e < n_expert; e += nt)
    cnt[e] = 0; /* now each expert's cursor */
  __syncthreads();
  for (int p = tid; p < n_pairs; p += nt) {
    const int e = ids[p];
    if (e >= 0 && e < n_expert) {
      const int r = atomicAdd(&cnt[e], 1);
      slots[(off[e] + r / DQC_MV_MAX_TOK) * DQC_MV_MAX_TOK +
            r % DQC_MV_MAX_TOK] = p;
    }
  }
}

/* ---- dequantization and conversions for the cuBLAS path ----------------- */

/* Clamps to F16's finite range; a NaN stays NaN (fmaxf would turn it into
 * -65504 and hide the fault upstream). */
__device__ __forceinline__ float sat_f16(float v) {
  return isnan(v) ? v : fminf(fmaxf(v, -65504.0f), 65504.0f);
}

/* n_rows rows of w (row_bytes apart) to F16 rows of n_cols; one thread per
 * 16 elements, consecutive threads on consecutive 32-byte outputs. */
template <int T>
__global__ void dequant_f16_kernel(const uint8_t *w, size_t row_bytes,
                                   int64_t n_rows, int64_t n_cols,
                                   __half *out) {
  typedef dqc_traits<T> Tr;
  constexpr int GPB = Tr::BE / 16;
  const int64_t gpr = n_cols / 16, total = n_rows * gpr;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = i / gpr, g = i - r * gpr;
    const int64_t blk = g / GPB;
    float v[16];
    Tr::dequant16(w + (size_t)r * row_bytes + (size_t)blk * Tr::BB,
                  (int)(g - blk * GPB), v);
    uint32_t h[8];
#pragma unroll
    for (int m = 0; m < 8; m++) {
      const __half2 hh =
          __floats2half2_rn(sat_f16(v[2 * m]), sat_f16(v[2 * m + 1]));
      memcpy(&h[m], &hh, sizeof h[m]);
    }
    uint4 *dst = (uint4 *)(out + (size_t)r * (size_t)n_cols + 16 * (size_t)g);
    dst[0] = make_uint4(h[0], h[1], h[2], h[3]);
    dst[1] = make_uint4(h[4], h[5], h[6], h[7]);
  }
}

/* The largest finite |x[i]| into *mx as bits (non-negative floats order
 * as their bit patterns; *mx starts at 0). */
__global__ void mm_absmax_kernel(const float *x, int64_t n, unsigned *mx) {
  unsigned m = 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float a = fabsf(x[i]);
    if (a <= 3.4028235e38f) /* not NaN or infinity */
      m = max(m, __float_as_uint(a));
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0 && m)
    atomicMax(mx, m);
}

/* The smallest k >= 0 with amax 2^-k <= 65504. */
__device__ __forceinline__ int mm_scale_k(float amax) {
  if (!(amax > 65504.0f))
    return 0;
  int k = ilogbf(amax) - 15; /* amax 2^-k in [2^15, 2^16) */
  return ldexpf(amax, -k) > 65504.0f ? k + 1 : k;
}

/* out = F16(x 2^-k), k = mm_scale_k(the call's max |x|); leaves alpha =
 * 2^k and the betas 0 and 1 for cuBLAS in xs[2], xs[3] and xs[4]. 2^-k
 * is exact (k = 0, the default models: x as it is). */
__global__ void mm_x_to_f16_kernel(const float *x, int64_t n, unsigned *xs,
                                   __half *out) {
  const int k = mm_scale_k(__uint_as_float(xs[0]));
  const float sc = ldexpf(1.0f, -k);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    xs[2] = __float_as_uint(ldexpf(1.0f, k));
    xs[3] = 0u;
    xs[4] = __float_as_uint(1.0f);
  }
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = __float2half_rn(sat_f16(x[i] * sc));
}

/* h = act(h) t, the gated unit after two separate products (elem.cu's
 * glu op, the same bits: act.cuh; here so that matmul.cu links alone). */
__global__ void mm_glu_kernel(float *h, const float *t, int64_t n, int act) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    h[i] = dqa_glu(h[i], t[i], act);
}

__global__ void mm_x_to_bf16_kernel(const float *x, int64_t n,
                                    __nv_bfloat16 *out) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = __float2bfloat16_rn(x[i]);
}

/* Blocks for a grid-stride loop over n items with 256 threads. */
static unsigned grid_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

/* ---- host side ------------------------------------------------------------
 */

/* Records the step and passes the error through. */
static int failed(dq_cu_mm *mm, const char *step, int err) {
  mm->last_step = step;
  return err;
}

static int launch_check(dq_cu_mm *mm, const char *step) {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : failed(mm, step, (int)e);
}

/* Waits for the stream, then frees the current and retired scratch. */
static int release_scratch(dq_cu_mm *mm) {
  const cudaError_t e = cudaStreamSynchronize(mm->stream);
  for (int i = 0; i < mm->n_retired; i++)
    cudaFree(mm->retired[i]);
  mm->n_retired = 0;
  cudaFree(mm->scratch);
  mm->scratch = NULL;
  mm->scratch_bytes = 0;
  return (int)e;
}

/* Makes scratch hold `bytes`: a new buffer (at least twice the old, whole
 * MiB); the old one is retired, not freed (see struct dq_cu_mm). Only when
 * cudaMalloc fails with buffers still held does it wait for the stream,
 * free them all and try once more. */
static int mm_reserve(dq_cu_mm *mm, size_t bytes) {
  if (bytes <= mm->scratch_bytes)
    return 0;
  size_t want = bytes > 2 * mm->scratch_bytes ? bytes : 2 * mm->scratch_bytes;
  want = (want + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, want);
  if (e != cudaSuccess && (mm->scratch || mm->n_retired)) {
    (void)cudaGetLastError(); /* not sticky: clear it before retrying */
    const int rc = release_scratch(mm);
    if (rc)
      return failed(mm, "cudaStreamSynchronize (matmul scratch)", rc);
    want = (bytes + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    e = cudaMalloc(&p, want);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return failed(mm, "cudaMalloc (matmul scratch)", (int)e);
  }
  if (mm->scratch) {
    if (mm->n_retired == DQ_MM_RETIRED_MAX) {
      const cudaError_t se = cudaStreamSynchronize(mm->stream);
      if (se != cudaSuccess) {
        cudaFree(p);
        return failed(mm, "cudaStreamSynchronize (matmul scratch)", (int)se);
      }
      for (int i = 0; i < mm->n_retired; i++)
        cudaFree(mm->retired[i]);
      mm->n_retired = 0;
    }
    mm->retired[mm->n_retired++] = mm->scratch;
  }
  mm->scratch = p;
  mm->scratch_bytes = want;
  return 0;
}

template <int T, int NT, int K>
static int mv_launch(dq_cu_mm *mm, mv_args a, int64_t n_inst) {
  typedef dqc_traits<T> Tr;
  typedef dqc_mv_shape<T> S;
  constexpr int R = dqc_mv_rows(NT, Tr::R_MAX);
  /* a warp's outputs: R rows, R/2 for MV_GLU (which stages gate and up) */
  const int per_warp = K == MV_K_GLU ? R / 2 : R;
  int64_t all_rows = a.n_rows;
  for (int m = 1; m < a.n_mat; m++)
    all_rows += a.mat[m].n_rows;
  const int warps = dqc_mv_warps(all_rows, per_warp, mm->n_sm);
  const size_t smem = dqc_mv_smem(NT, R, warps, S::XT, S::N_SUMS, S::PITCH);
  if (smem > (size_t)mm->smem_optin)
    return MV_NO_FIT; /* 8 tokens of Q4_K/Q6_K on GPUs below ~85 KiB */
  void (*kern)(const mv_args);
  if constexpr (MV_CTAS4(T, NT, K))
    kern = mv_kernel4<T, NT, R, K>;
  else
    kern = mv_kernel<T, NT, R, K>;
  /* the opt-in limit, set once per kernel and device rather than by a host
   * call on every launch (devices past 31: on every launch) */
  static std::atomic<uint32_t> opted{0};
  const uint32_t bit = mm->dev < 32 ? 1u << mm->dev : 0u;
  if (smem > 48 * 1024 && !(opted.load(std::memory_order_relaxed) & bit)) {
    const cudaError_t e = cudaFuncSetAttribute(
        kern, cudaFuncAttributeMaxDynamicSharedMemorySize, mm->smem_optin);
    if (e != cudaSuccess)
      return failed(mm, "cudaFuncSetAttribute (mat-vec kernel shared memory)",
                    (int)e);
    opted.fetch_or(bit, std::memory_order_relaxed);
  }
  const int64_t per_cta = (int64_t)warps * per_warp;
  int64_t n_cta = (a.n_rows + per_cta - 1) / per_cta;
  for (int m = 1; m < a.n_mat; m++) {
    a.mat[m].cta0 = (int)(n_cta < INT_MAX ? n_cta : INT_MAX);
    n_cta += (a.mat[m].n_rows + per_cta - 1) / per_cta;
  }
  if (n_cta > INT_MAX)
    return failed(mm, "mat-vec kernel: too many rows",
                  (int)cudaErrorInvalidValue);
  for (int64_t p0 = 0; p0 < n_inst; p0 += 65535) {
    const int64_t n = n_inst - p0 < 65535 ? n_inst - p0 : 65535;
    a.pair0 = (int)p0;
    DQ_CU_LAUNCH(kern, dim3((unsigned)n_cta, (unsigned)n), warps * 32, smem,
                 mm->stream)(a);
    const int rc = launch_check(mm, "mat-vec kernel");
    if (rc)
      return rc;
  }
  return 0;
}

template <int T>
static int mv_type(dq_cu_mm *mm, const mv_args &a, int nt, int64_t n_inst) {
  const int k = a.mode == MV_GLU ? MV_K_GLU
                : a.n_mat > 1    ? MV_K_MULTI
                                 : MV_K_ONE;
  if (k != MV_K_ONE && nt > MV_FUSED_NT)
    return failed(mm, "mat-vec kernel: fused above MV_FUSED_NT tokens",
                  (int)cudaErrorInvalidValue);
  switch (nt * 4 + k) {
  case 4 + MV_K_ONE: return mv_launch<T, 1, MV_K_ONE>(mm, a, n_inst);
  case 4 + MV_K_MULTI: return mv_launch<T, 1, MV_K_MULTI>(mm, a, n_inst);
  case 4 + MV_K_GLU: return mv_launch<T, 1, MV_K_GLU>(mm, a, n_inst);
  case 8 + MV_K_ONE: return mv_launch<T, 2, MV_K_ONE>(mm, a, n_inst);
  case 8 + MV_K_MULTI: return mv_launch<T, 2, MV_K_MULTI>(mm, a, n_inst);
  case 8 + MV_K_GLU: return mv_launch<T, 2, MV_K_GLU>(mm, a, n_inst);
  case 16 + MV_K_ONE: return mv_launch<T, 4, MV_K_ONE>(mm, a, n_inst);
  default: return mv_launch<T, 8, MV_K_ONE>(mm, a, n_inst);
  }
}

static int mv_run(dq_cu_mm *mm, int type, const mv_args &a, int nt,
                  int64_t n_inst) {
  switch (type) {
  case DQ_TYPE_F32: return mv_type<DQ_TYPE_F32>(mm, a, nt, n_inst);
  case DQ_TYPE_F16: return mv_type<DQ_TYPE_F16>(mm, a, nt, n_inst);
  case DQ_TYPE_BF16: return mv_type<DQ_TYPE_BF16>(mm, a, nt, n_inst);
  case DQ_TYPE_Q4_0: return mv_type<DQ_TYPE_Q4_0>(mm, a, nt, n_inst);
  case DQ_TYPE_Q4_1: return mv_type<DQ_TYPE_Q4_1>(mm, a, nt, n_inst);
  case DQ_TYPE_Q5_0: return mv_type<DQ_TYPE_Q5_0>(mm, a, nt, n_inst);
  case DQ_TYPE_Q5_1: return mv_type<DQ_TYPE_Q5_1>(mm, a, nt, n_inst);
  case DQ_TYPE_Q8_0: return mv_type<DQ_TYPE_Q8_0>(mm, a, nt, n_inst);
  case DQ_TYPE_Q4_K: return mv_type<DQ_TYPE_Q4_K>(mm, a, nt, n_inst);
  case DQ_TYPE_Q6_K: return mv_type<DQ_TYPE_Q6_K>(mm, a, nt, n_inst);
  }
  return failed(mm, "mat-vec kernel: unsupported type",
                (int)cudaErrorInvalidValue);
}

/* Block elements and bytes the kernels use for `type` (16-element blocks
 * for the float formats); 0 when unsupported. */
static void type_block(int type, int *be, int *bb) {
  *be = 0;
  *bb = 0;
  switch (type) {
#define TB(T)                                                                  \
  case T:                                                                      \
    *be = dqc_traits<T>::BE;                                                   \
    *bb = dqc_traits<T>::BB;                                                   \
    break;
    TB(DQ_TYPE_F32)
    TB(DQ_TYPE_F16)
    TB(DQ_TYPE_BF16)
    TB(DQ_TYPE_Q4_0)
    TB(DQ_TYPE_Q4_1)
    TB(DQ_TYPE_Q5_0)
    TB(DQ_TYPE_Q5_1)
    TB(DQ_TYPE_Q8_0)
    TB(DQ_TYPE_Q4_K)
    TB(DQ_TYPE_Q6_K)
#undef TB
  }
}

static int is_float_type(int type) {
  return type == DQ_TYPE_F32 || type == DQ_TYPE_F16 || type == DQ_TYPE_BF16;
}

/* Checks a weight description; *mv = 1 when the mat-vec kernel can take it
 * (float formats need n_cols % 16 == 0, everything an even address). */
static int check_weights(dq_cu_mm *mm, int type, const void *w,
                         size_t row_bytes, int64_t n_cols, int *mv) {
  int be, bb;
  type_block(type, &be, &bb);
  *mv = 0;
  if (!be)
    return failed(mm, "matmul: unsupported weight type",
                  (int)cudaErrorInvalidValue);
  const int64_t ggml_block = is_float_type(type) ? 1 : be;
  const int64_t elem_bytes = type == DQ_TYPE_F32 ? 4 : 2;
  if (n_cols <= 0 || n_cols % ggml_block != 0)
    return failed(mm, "matmul: n_cols not a multiple of the block size",
                  (int)cudaErrorInvalidValue);
  const uint64_t need = is_float_type(type) ? (uint64_t)n_cols * elem_bytes
                                            : (uint64_t)(n_cols / be) * bb;
  if ((uint64_t)row_bytes < need)
    return failed(mm, "matmul: row_bytes smaller than a row",
                  (int)cudaErrorInvalidValue);
  if (!w || ((uintptr_t)w | row_bytes) % (is_float_type(type) ? elem_bytes : 2))
    return failed(mm, "matmul: misaligned weights", (int)cudaErrorInvalidValue);
  *mv = !is_float_type(type) || n_cols % 16 == 0;
  return 0;
}

/* c = alpha a^T b (+ c when add); alpha and beta from device memory when
 * ab is not NULL (ab[0] alpha, ab[1] beta 0, ab[2] beta 1: the F16
 * path's scale words), else 1 and 0 (or 1). */
static int gemm_ex(dq_cu_mm *mm, const void *a, cudaDataType at, int64_t lda,
                   const void *b, cudaDataType bt, int64_t m, int n, int64_t k,
                   float *c, int64_t ldc, const float *ab, int add) {
  if (lda > INT_MAX || m > INT_MAX || k > INT_MAX || ldc > INT_MAX)
    return failed(mm, "cublasGemmEx: size over INT_MAX",
                  (int)cudaErrorInvalidValue);
  const float one = 1.0f, zero = 0.0f;
  if (ab && g_blas->set_pointer_mode(mm->blas, CUBLAS_POINTER_MODE_DEVICE) !=
                CUBLAS_STATUS_SUCCESS)
    return failed(mm, "cublasSetPointerMode", -1);
  const float *beta = ab ? ab + (add ? 2 : 1) : add ? &one : &zero;
  const cublasStatus_t st = g_blas->gemm_ex(
      mm->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)m, n, (int)k, ab ? ab : &one, a,
      at, (int)lda, b, bt, (int)k, beta, c, CUDA_R_32F, (int)ldc,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (ab && g_blas->set_pointer_mode(mm->blas, CUBLAS_POINTER_MODE_HOST) !=
                CUBLAS_STATUS_SUCCESS)
    return failed(mm, "cublasSetPointerMode", -1);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : failed(mm, "cublasGemmEx", -1);
}

template <int T>
static int dequant_tile(dq_cu_mm *mm, const uint8_t *w, size_t row_bytes,
                        int64_t n_rows, int64_t n_cols, __half *out) {
  const int64_t n = n_rows * (n_cols / 16);
  void (*kern)(const uint8_t *, size_t, int64_t, int64_t, __half *) =
      dequant_f16_kernel<T>;
  DQ_CU_LAUNCH(kern, grid_for(n), 256, 0, mm->stream)(
      w, row_bytes, n_rows, n_cols, out);
  return launch_check(mm, "dequantize-to-F16 kernel");
}

static int dequant_run(dq_cu_mm *mm, int type, const uint8_t *w,
                       size_t row_bytes, int64_t n_rows, int64_t n_cols,
                       __half *out) {
  switch (type) {
  case DQ_TYPE_Q4_0:
    return dequant_tile<DQ_TYPE_Q4_0>(mm, w, row_bytes, n_rows, n_cols, out);
  case DQ_TYPE_Q4_1:
    return dequant_tile<DQ_TYPE_Q4_1>(mm, w, row_bytes, n_rows, n_cols, out);
  case DQ_TYPE_Q5_0:
    return dequant_tile<DQ_TYPE_Q5_0>(mm, w, row_bytes, n_rows, n_cols, out);
  case DQ_TYPE_Q5_1:
    return dequant_tile<DQ_TYPE_Q5_1>(mm, w, row_bytes, n_rows, n_cols, out);
  case DQ_TYPE_Q8_0:
    return dequant_tile<DQ_TYPE_Q8_0>(mm, w, row_bytes, n_rows, n_cols, out);
  case DQ_TYPE_Q4_K:
    return dequant_tile<DQ_TYPE_Q4_K>(mm, w, row_bytes, n_rows, n_cols, out);
  case DQ_TYPE_Q6_K:
    return dequant_tile<DQ_TYPE_Q6_K>(mm, w, row_bytes, n_rows, n_cols, out);
  }
  return failed(mm, "dequantize-to-F16: unsupported type",
                (int)cudaErrorInvalidValue);
}

/* The cuBLAS path (see the top of the file). */
static int mm_gemm(dq_cu_mm *mm, const dq_cu_wdesc *w, int n, int64_t n_cols,
                   const float *x, int n_tok, int add) {
  const size_t x_elems = (size_t)n_tok * (size_t)n_cols;
  const size_t x_bytes = (x_elems * 2 + 255) & ~(size_t)255;
  /* scratch: x converted, then the largest weight tile */
  size_t need = x_bytes;
  for (int i = 0; i < n; i++) {
    const int64_t tr =
        is_float_type(w[i].type)
            ? 0
            : dqc_gemm_tile_rows(w[i].n_rows, n_cols, DQ_MM_TILE_BYTES);
    if (x_bytes + (size_t)tr * (size_t)n_cols * 2 > need)
      need = x_bytes + (size_t)tr * (size_t)n_cols * 2;
  }
  int rc = mm_reserve(mm, need);
  if (rc)
    return rc;
  void *xh = mm->scratch;
  __half *wh = (__half *)((uint8_t *)mm->scratch + x_bytes);
  const float *ab = (const float *)(mm->xscale + 2);
  int have = -1; /* the format x is in at xh: DQ_TYPE_F16 or DQ_TYPE_BF16 */
  for (int i = 0; i < n && !rc; i++) {
    const int type = w[i].type;
    const int64_t n_rows = w[i].n_rows;
    const size_t row_bytes = w[i].row_bytes;
    float *y = w[i].y;
    if (n_rows == 0)
      continue;
    if (type == DQ_TYPE_F32) {
      if (n_rows > INT_MAX || n_cols > INT_MAX || row_bytes / 4 > INT_MAX)
        return failed(mm, "cublasSgemm: size over INT_MAX",
                      (int)cudaErrorInvalidValue);
      const float one = 1.0f, zero = 0.0f;
      const cublasStatus_t st = g_blas->sgemm(
          mm->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n_rows, n_tok, (int)n_cols,
          &one, (const float *)w[i].w, (int)(row_bytes / 4), x, (int)n_cols,
          add ? &one : &zero, y, (int)n_rows);
      if (st != CUBLAS_STATUS_SUCCESS)
        return failed(mm, "cublasSgemm", -1);
      continue;
    }
    const int fmt = type == DQ_TYPE_BF16 ? DQ_TYPE_BF16 : DQ_TYPE_F16;
    if (fmt != have && fmt == DQ_TYPE_BF16) {
      DQ_CU_LAUNCH(mm_x_to_bf16_kernel, grid_for((int64_t)x_elems), 256, 0,
                   mm->stream)(x, (int64_t)x_elems, (__nv_bfloat16 *)xh);
      if ((rc = launch_check(mm, "x-to-BF16 kernel")))
        return rc;
    } else if (fmt != have) {
      /* x 2^-k in F16, alpha 2^k (the scale's words: mm->xscale) */
      const cudaError_t e =
          cudaMemsetAsync(mm->xscale, 0, sizeof(unsigned), mm->stream);
      if (e != cudaSuccess)
        return failed(mm, "x scale reset", (int)e);
      DQ_CU_LAUNCH(mm_absmax_kernel, grid_for((int64_t)x_elems), 256, 0,
                   mm->stream)(x, (int64_t)x_elems, mm->xscale);
      if ((rc = launch_check(mm, "x max kernel")))
        return rc;
      DQ_CU_LAUNCH(mm_x_to_f16_kernel, grid_for((int64_t)x_elems), 256, 0,
                   mm->stream)(x, (int64_t)x_elems, mm->xscale, (__half *)xh);
      if ((rc = launch_check(mm, "x-to-F16 kernel")))
        return rc;
    }
    have = fmt;
    if (type == DQ_TYPE_BF16) {
      rc = gemm_ex(mm, w[i].w, CUDA_R_16BF, (int64_t)(row_bytes / 2), xh,
                   CUDA_R_16BF, n_rows, n_tok, n_cols, y, n_rows, NULL, add);
      continue;
    }
    if (type == DQ_TYPE_F16) {
      rc = gemm_ex(mm, w[i].w, CUDA_R_16F, (int64_t)(row_bytes / 2), xh,
                   CUDA_R_16F, n_rows, n_tok, n_cols, y, n_rows, ab, add);
      continue;
    }
    const int64_t tile_rows =
        dqc_gemm_tile_rows(n_rows, n_cols, DQ_MM_TILE_BYTES);
    for (int64_t r0 = 0; r0 < n_rows && !rc; r0 += tile_rows) {
      const int64_t m = n_rows - r0 < tile_rows ? n_rows - r0 : tile_rows;
      if ((rc = dequant_run(mm, type,
                            (const uint8_t *)w[i].w + (size_t)r0 * row_bytes,
                            row_bytes, m, n_cols, wh)))
        return rc;
      rc = gemm_ex(mm, wh, CUDA_R_16F, n_cols, xh, CUDA_R_16F, m, n_tok,
                   n_cols, y + r0, n_rows, ab, add);
    }
  }
  return rc;
}

/* Checks every matrix of a call; mv[i] = 1 where the mat-vec kernel can
 * take matrix i. */
static int check_all(dq_cu_mm *mm, const dq_cu_wdesc *w, int n,
                     int64_t n_cols, int *mv) {
  for (int i = 0; i < n; i++) {
    if (w[i].n_rows < 0)
      return failed(mm, "matmul: negative size", (int)cudaErrorInvalidValue);
    mv[i] = 0;
    if (w[i].n_rows == 0)
      continue; /* nothing to do, nothing read */
    const int rc =
        check_weights(mm, w[i].type, w[i].w, w[i].row_bytes, n_cols, &mv[i]);
    if (rc)
      return rc;
  }
  return 0;
}

/* The mat-vec arguments of matrix d for n_tok <= DQC_MV_MAX_TOK tokens
 * (dq_cu_matvec_ids then sets its pairs' fields). */
static mv_args mv_plain(const dq_cu_wdesc &d, int64_t n_cols, const float *x,
                        int n_tok) {
  int be, bb;
  type_block(d.type, &be, &bb);
  mv_args a = {};
  a.w = (const uint8_t *)d.w;
  a.row_bytes = d.row_bytes;
  a.n_rows = d.n_rows;
  a.n_cols = n_cols;
  a.n_blocks = n_cols / be;
  a.x = x;
  a.n_tok = n_tok;
  a.x_div = 1;
  a.w_al = dqc_w_align((uintptr_t)d.w, d.row_bytes, 0);
  a.x_al16 = (uintptr_t)x % 16 == 0;
  a.y = d.y;
  a.n_mat = 1;
  return a;
}

/* a's weight alignment lowered to what rows of w, row_bytes apart, allow
 * (a launch over several matrices stages them all the same way). */
static void mv_align_with(mv_args &a, const void *w, size_t row_bytes) {
  const int al = dqc_w_align((uintptr_t)w, row_bytes, 0);
  a.w_al = al < a.w_al ? al : a.w_al;
}

/* dq_cu_matmul_n after its checks: mat-vec launches of the matrices of
 * one type together (up to DQ_CU_MM_MAX), or the cuBLAS path. */
static int mm_product(dq_cu_mm *mm, const dq_cu_wdesc *w, int n,
                      int64_t n_cols, const float *x, int n_tok, int add,
                      const int *mv) {
  if (n_tok > DQC_MV_MAX_TOK)
    return mm_gemm(mm, w, n, n_cols, x, n_tok, add);
  int done[DQ_CU_MM_MAX] = {0}, rc = 0;
  const int tier = dqc_mv_tier(n_tok);
  for (int i = 0; i < n && !rc; i++) {
    if (done[i] || w[i].n_rows == 0)
      continue;
    if (!mv[i]) {
      rc = mm_gemm(mm, &w[i], 1, n_cols, x, n_tok, add);
      continue;
    }
    mv_args a = mv_plain(w[i], n_cols, x, n_tok);
    a.mode = add ? MV_ADD : MV_STORE;
    dq_cu_wdesc group[DQ_CU_MM_MAX] = {w[i]};
    for (int j = i + 1; j < n && tier <= MV_FUSED_NT; j++)
      if (!done[j] && mv[j] && w[j].type == w[i].type && w[j].n_rows > 0) {
        a.mat[a.n_mat].w = (const uint8_t *)w[j].w;
        a.mat[a.n_mat].row_bytes = w[j].row_bytes;
        a.mat[a.n_mat].n_rows = w[j].n_rows;
        a.mat[a.n_mat].y = w[j].y;
        mv_align_with(a, w[j].w, w[j].row_bytes);
        group[a.n_mat++] = w[j];
        done[j] = 1;
      }
    rc = mv_run(mm, w[i].type, a, tier, 1);
    if (rc == MV_NO_FIT)
      rc = mm_gemm(mm, group, a.n_mat, n_cols, x, n_tok, add);
  }
  return rc;
}

} // namespace

/* ---- public interface ------------------------------------------------------
 */

extern "C" const char *dq_cu_err_str(int err) {
  if (err == -1)
    return "cuBLAS call failed";
  return cudaGetErrorString((cudaError_t)err);
}

extern "C" int dq_cu_type_supported(int type) {
  int be, bb;
  type_block(type, &be, &bb);
  return be != 0;
}

extern "C" void dq_cu_mm_free(dq_cu_mm *mm) {
  if (!mm)
    return;
  if (mm->scratch || mm->n_retired)
    (void)release_scratch(mm);
  if (mm->blas)
    g_blas->destroy(mm->blas);
  if (mm->blas_ws)
    cudaFree(mm->blas_ws);
  if (mm->xscale)
    cudaFree(mm->xscale);
  free(mm);
}

extern "C" int dq_cu_mm_new(void *stream, dq_cu_mm **out) {
  if (!out)
    return (int)cudaErrorInvalidValue;
  *out = NULL;
  dq_cu_mm *mm = (dq_cu_mm *)calloc(1, sizeof *mm);
  if (!mm)
    return (int)cudaErrorMemoryAllocation;
  mm->stream = (cudaStream_t)stream;
  mm->last_step = "none";
  int dev = 0, rc;
  cudaError_t e = cudaGetDevice(&dev);
  mm->dev = dev;
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&mm->n_sm, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&mm->smem_optin,
                               cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  if (e != cudaSuccess) {
    rc = (int)e;
    goto fail;
  }
  if (dq_cu_blas_load()) {
    rc = DQ_CU_NO_BLAS;
    goto fail;
  }
  if (g_blas->create(&mm->blas) != CUBLAS_STATUS_SUCCESS) {
    mm->blas = NULL;
    rc = -1;
    goto fail;
  }
  if (g_blas->set_stream(mm->blas, mm->stream) != CUBLAS_STATUS_SUCCESS) {
    rc = -1;
    goto fail;
  }
  /* A workspace of our own, the size cuBLAS's documentation recommends
   * (32 MiB on Hopper, 4 MiB before): without one cuBLAS takes memory
   * from its pool inside calls, which a decode step under graph capture
   * (float weights of a width off 16 go through cuBLAS) must not do. Set
   * after cublasSetStream, which resets it to the pool. */
  {
    int major = 0;
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    const size_t ws = (major >= 9 ? 32u : 4u) << 20;
    if (e == cudaSuccess)
      e = cudaMalloc(&mm->blas_ws, ws);
    if (e != cudaSuccess) {
      mm->blas_ws = NULL;
      (void)cudaGetLastError();
      rc = (int)e;
      goto fail;
    }
    if (g_blas->set_workspace(mm->blas, mm->blas_ws, ws) !=
        CUBLAS_STATUS_SUCCESS) {
      rc = -1;
      goto fail;
    }
  }
  e = cudaMalloc((void **)&mm->xscale, 8 * sizeof(unsigned));
  if (e != cudaSuccess) {
    mm->xscale = NULL;
    (void)cudaGetLastError();
    rc = (int)e;
    goto fail;
  }
  *out = mm;
  return 0;
fail:
  dq_cu_mm_free(mm);
  return rc;
}

extern "C" const char *dq_cu_mm_last_step(const dq_cu_mm *mm) {
  return mm ? mm->last_step : "no matmul context";
}

extern "C" int dq_cu_matmul(dq_cu_mm *mm, int type, const void *w,
                            size_t row_bytes, int64_t n_rows, int64_t n_cols,
                            const float *x, int n_tok, float *y) {
  const dq_cu_wdesc d = {type, w, row_bytes, n_rows, y};
  return dq_cu_matmul_n(mm, &d, 1, n_cols, x, n_tok, 0);
}

extern "C" int dq_cu_matmul_n(dq_cu_mm *mm, const dq_cu_wdesc *w, int n,
                              int64_t n_cols, const float *x, int n_tok,
                              int add) {
  if (!mm)
    return (int)cudaErrorInvalidValue;
  if (n < 1 || n > DQ_CU_MM_MAX || !w || n_tok < 0)
    return failed(mm, "matmul: bad arguments", (int)cudaErrorInvalidValue);
  int mv[DQ_CU_MM_MAX], rc;
  if ((rc = check_all(mm, w, n, n_cols, mv)))
    return rc;
  if (n_tok == 0)
    return 0;
  return mm_product(mm, w, n, n_cols, x, n_tok, add, mv);
}

extern "C" int dq_cu_matmul_glu(dq_cu_mm *mm, const dq_cu_wdesc *g,
                                const dq_cu_wdesc *u, int64_t n_cols,
                                const float *x, int n_tok, int act, float *h,
                                float *tmp) {
  if (!mm)
    return (int)cudaErrorInvalidValue;
  if (!g || !u || n_tok < 0 || g->n_rows != u->n_rows || (act != 0 && act != 1))
    return failed(mm, "matmul_glu: bad arguments", (int)cudaErrorInvalidValue);
  dq_cu_wdesc d[2] = {*g, *u};
  d[0].y = h;
  d[1].y = tmp;
  int mv[2], rc;
  if ((rc = check_all(mm, d, 2, n_cols, mv)))
    return rc;
  if (n_tok == 0 || g->n_rows == 0)
    return 0;
  if (dqc_mv_tier(n_tok) <= MV_FUSED_NT && mv[0] && mv[1] &&
      g->type == u->type) {
    mv_args a = mv_plain(d[0], n_cols, x, n_tok);
    a.mode = MV_GLU;
    a.act = act;
    a.w2 = (const uint8_t *)u->w;
    a.row_bytes2 = u->row_bytes;
    mv_align_with(a, u->w, u->row_bytes);
    rc = mv_run(mm, g->type, a, dqc_mv_tier(n_tok), 1);
    if (rc != MV_NO_FIT)
      return rc;
  }
  if ((rc = mm_product(mm, d, 2, n_cols, x, n_tok, 0, mv)))
    return rc;
  const int64_t n = (int64_t)n_tok * g->n_rows;
  DQ_CU_LAUNCH(mm_glu_kernel, grid_for(n), 256, 0, mm->stream)(h, tmp, n, act);
  return launch_check(mm, "gated unit (glu) kernel");
}

extern "C" int dq_cu_matvec_ids(dq_cu_mm *mm, int type, const void *w,
                                size_t row_bytes, int64_t n_rows,
                                int64_t n_cols, size_t stride,
                                const int32_t *ids, int n_pairs, int n_expert,
                                const float *x, int x_div, float *y) {
  if (!mm)
    return (int)cudaErrorInvalidValue;
  if (n_rows < 0 || n_pairs < 0 || x_div < 1 || (n_pairs && !ids))
    return failed(mm, "matvec_ids: bad arguments", (int)cudaErrorInvalidValue);
  if (n_rows == 0 || n_pairs == 0)
    return 0;
  int mv, rc;
  if ((rc = check_weights(mm, type, w, row_bytes, n_cols, &mv)))
    return rc;
  if (!mv)
    return failed(mm, "matvec_ids: float weights need n_cols % 16 == 0",
                  (int)cudaErrorInvalidValue);
  if (!stride)
    stride = (size_t)n_rows * row_bytes; /* packed experts, as the CPU's */
  if (stride % 2)
    return failed(mm, "matvec_ids: misaligned expert stride",
                  (int)cudaErrorInvalidValue);
  const dq_cu_wdesc d = {type, w, row_bytes, n_rows, y};
  mv_args a = mv_plain(d, n_cols, x, 1);
  a.stride = stride;
  a.ids = ids;
  a.x_div = x_div;
  a.w_al = dqc_w_align((uintptr_t)w, row_bytes, stride);
  a.x_al16 = ((uintptr_t)x | ((size_t)n_cols * sizeof(float))) % 16 == 0;
  /* many pairs to an expert (prefill): grouped by expert, 8 pairs to a
   * CTA, so each group reads its expert's weights once (see the top) */
  if (n_expert > 0 && n_pairs > DQC_MV_MAX_TOK && n_pairs >= 2 * n_expert &&
      n_expert <= 8192) {
    const int64_t max_groups =
        (int64_t)n_pairs / DQC_MV_MAX_TOK + n_expert;
    const size_t tab_bytes =
        (size_t)(1 + max_groups * (1 + DQC_MV_MAX_TOK)) * sizeof(int32_t);
    if (max_groups > INT_MAX / (1 + DQC_MV_MAX_TOK))
      return failed(mm, "matvec_ids: too many pairs",
                    (int)cudaErrorInvalidValue);
    if ((rc = mm_reserve(mm, tab_bytes)))
      return rc;
    int32_t *tab = (int32_t *)mm->scratch;
    const size_t sh = (2 * (size_t)n_expert + 1) * sizeof(int);
    if (sh > 48 * 1024) {
      const cudaError_t e = cudaFuncSetAttribute(
          ids_group_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
          (int)sh);
      if (e != cudaSuccess)
        return failed(mm, "cudaFuncSetAttribute (ids grouping)", (int)e);
    }
    DQ_CU_LAUNCH(ids_group_kernel, 1, 1024, sh, mm->stream)(
        ids, n_pairs, n_expert, (int)max_groups, tab);
    if ((rc = launch_check(mm, "ids grouping kernel")))
      return rc;
    mv_args ga = a;
    ga.groups = tab;
    ga.max_groups = (int)max_groups;
    rc = mv_run(mm, type, ga, DQC_MV_MAX_TOK, max_groups);
    if (rc != MV_NO_FIT)
      return rc;
    /* 8 tokens do not fit this GPU's shared memory: one pair a CTA */
  }
  rc = mv_run(mm, type, a, 1, n_pairs);
  /* one token fits everywhere (<= 36 KiB); say so if it ever does not */
  if (rc == MV_NO_FIT)
    return failed(mm, "mat-vec kernel: shared memory",
                  (int)cudaErrorInvalidConfiguration);
  return rc;
}
