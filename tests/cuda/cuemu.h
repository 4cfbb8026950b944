/*
 * cuemu.h - runs our CUDA kernels' source on the CPU, for tests on machines
 * without a GPU. A test TU defines the names it renames, includes this
 * header, then includes a kernels/cuda .cu file; that TU is compiled as
 * C++ (-ffp-contract=off: the device's separately rounded __fmul_rn and the
 * kernels' explicit fmaf stay what they are).
 *
 * What it emulates:
 *  - a launch (DQ_CU_LAUNCH in kernels/cuda/launch.cuh) runs every block
 *    of the grid in turn; the block's threads are fibers (ucontext) that
 *    run until a synchronisation point, in a fresh random order each round,
 *    and about half the warps wait out each round (a warp whose lanes are
 *    all at a warp sync goes on at once), so warps drift apart as on a
 *    device and a missing __syncthreads shows up as a wrong result on some
 *    seed;
 *  - __syncthreads, __syncthreads_or, __syncwarp and the shuffles (xor,
 *    down, indexed) with their masks; threads that returned take no part
 *    (as on sm_70 and later); a barrier that can never complete (some
 *    threads at __syncthreads, others at a warp sync) aborts with a
 *    message instead of hanging;
 *  - dynamic shared memory (filled with 0xA5 before each block, so reads
 *    of unwritten shared memory give garbage, not zeros) and static
 *    __shared__ variables (function statics: one per kernel, blocks run
 *    one at a time);
 *  - launch limits: at most 1024 threads, grid y and z at most 65535,
 *    dynamic shared memory above 48 KiB only after cudaFuncSetAttribute
 *    and never above the device's opt-in limit (then the launch fails and
 *    cudaGetLastError says so, as on a device);
 *  - the runtime calls the kernels' host code makes (renamed cuemu_*:
 *    memory is host memory, streams run in order at once), with an
 *    H200's attributes (132 SMs, 227 KiB opt-in) unless a test sets
 *    others.
 *  - the two tensor-core instructions attn.cu uses, as warp-wide
 *    exchanges (cuemu_mma_m16n8k16, cuemu_ldmatrix_x4_trans below): the
 *    whole warp must take part, at the same instruction; ldmatrix's rows
 *    must lie in the launch's dynamic shared memory, 16-byte aligned.
 *    cudaFuncGetAttributes reports a build for sm_90 (PTX and binary
 *    version 90), so the code that asks picks those kernels;
 * Not emulated: timing, memory-model subtleties between threads (a fiber
 * runs alone), the tensor cores' own order of additions (the emulated
 * mma rounds once).
 */
#ifndef DQ_TESTS_CUEMU_H
#define DQ_TESTS_CUEMU_H

#define DQ_CU_EMULATE 1

/* Before the CUDA headers: kernel qualifiers, and no cuda_runtime.h (its
 * C++ wrappers); cuda_runtime_api.h's declarations are renamed. */
#define __global__
#define __shared__ static
#define __launch_bounds__(...)
#define __CUDA_RUNTIME_H__
#include "cuemu_names.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <functional>

/* ---- the scheduler (cuemu.cc) ------------------------------------------- */

struct cuemu_fiber; /* one emulated thread */

/* The running thread's indices and the block's geometry. */
struct cuemu_block_state {
  dim3 grid, block, idx;
};
extern cuemu_block_state cuemu_blk;
const uint3 &cuemu_thread_idx();

#define threadIdx (cuemu_thread_idx())
#define blockIdx (cuemu_blk.idx)
#define blockDim (cuemu_blk.block)
#define gridDim (cuemu_blk.grid)

/* Runs body on every thread of every block; returns the launch's error
 * (cudaSuccess, or a configuration error, also left for GetLastError). */
cudaError_t cuemu_run(const void *kernel, dim3 grid, dim3 block,
                      size_t smem_bytes, const std::function<void()> &body);
/* The current block's dynamic shared memory (16-byte aligned). */
void *cuemu_dyn_smem();

/* Synchronisation points. */
void cuemu_barrier(void);             /* __syncthreads */
int cuemu_barrier_or(int pred);       /* __syncthreads_or */
void cuemu_warp_sync(unsigned mask);  /* __syncwarp and the shuffles */
int cuemu_lane(void);
/* The warp's exchange slots: each lane's value (8 bytes at most). */
uint64_t *cuemu_warp_slots(void);

/* Tensor-core instructions, from the PTX ISA's definitions (written apart
 * from kernels/cuda/attn_mma.cuh's fragment helpers, so the two check
 * each other). Lane l = 4 g + t (g = l >> 2, t = l & 3); a register of two
 * halves holds the lower-indexed element in its low 16 bits.
 *  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 d, a, b, d:
 *    D (16 x 8, f32) += A (16 x 16) B (16 x 8); lane l holds
 *    a[r]: A[g + 8 (r & 1)][2t + 8 (r >> 1) + 0..1],
 *    b0, b1: B[2t + 8 r + 0..1][g] for r = 0, 1,
 *    d[i]: D[g + 8 (i >> 1)][2t + (i & 1)].
 *    Emulated: the 16 products (exact) and d summed in double, rounded
 *    once to f32.
 *  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 r, [p]:
 *    four 8 x 8 matrices of halves; lane 8 m + i gives the address of row
 *    i of matrix m; .trans: r[m] of lane l holds M_m[2t][g] and
 *    M_m[2t + 1][g].
 * cuemu_mma_count: mma instructions run so far (per warp). */
void cuemu_mma_m16n8k16(float d[4], const uint32_t a[4], uint32_t b0,
                        uint32_t b1);
void cuemu_ldmatrix_x4_trans(uint32_t r[4], const void *p);
long cuemu_mma_count(void);

/* A host-side stand-in for a device operation (emu_matmul.cc's GEMM): run
 * now, or recorded while a stream is capturing. */
void cuemu_host_op(const std::function<void()> &f);

/* Test controls: device attributes, the scheduling seed, counters. */
void cuemu_set_device(int n_sm, int smem_optin);
void cuemu_set_seed(uint64_t seed);
long cuemu_launches(void); /* launches run so far */

/* ---- device functions --------------------------------------------------- */

inline void __syncthreads() { cuemu_barrier(); }
inline int __syncthreads_or(int p) { return cuemu_barrier_or(p); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { cuemu_warp_sync(mask); }

template <class T> inline T cuemu_shfl_from(unsigned mask, T v, int src) {
  static_assert(sizeof(T) <= 8, "shuffles move 8 bytes at most");
  uint64_t *slot = cuemu_warp_slots();
  const int lane = cuemu_lane();
  uint64_t w = 0;
  memcpy(&w, &v, sizeof v);
  slot[lane] = w;
  cuemu_warp_sync(mask);
  T r = v;
  if (src >= 0 && src < 32 && (mask >> src & 1u))
    memcpy(&r, &slot[src], sizeof r);
  cuemu_warp_sync(mask); /* nobody overwrites a slot before all have read */
  return r;
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
  const int lane = cuemu_lane(), src = lane ^ m;
  return cuemu_shfl_from(mask, v,
                         (src & ~(width - 1)) == (lane & ~(width - 1)) ? src
                                                                       : lane);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
  const int lane = cuemu_lane();
  const int src = (lane % width) + (int)d < width ? lane + (int)d : lane;
  return cuemu_shfl_from(mask, v, src);
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  const int lane = cuemu_lane();
  return cuemu_shfl_from(mask, v,
                         (lane & ~(width - 1)) | (src_lane & (width - 1)));
}

template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T atomicAdd(T *p, T v) {
  T old = *p; /* fibers run one at a time: plain arithmetic is atomic */
  *p = old + v;
  return old;
}
template <class T> inline T atomicMax(T *p, T v) {
  T old = *p;
  *p = old < v ? v : old;
  return old;
}

inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
inline float __int_as_float(int u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline int __float_as_int(float f) {
  int u;
  memcpy(&u, &f, 4);
  return u;
}
/* PTX prmt (default mode): byte i of the result is byte s_i of {y, x}. */
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t v = (uint64_t)y << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; i++)
    r |= (unsigned)(v >> (8 * ((s >> (4 * i)) & 7)) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh) {
  const uint64_t v = (uint64_t)hi << 32 | lo;
  return (unsigned)(v >> (sh & 31));
}
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }

/* ---- launches ------------------------------------------------------------ */

template <class... P> struct cuemu_launcher {
  void (*k)(P...);
  dim3 grid, block;
  size_t smem;
  template <class... A> void operator()(A &&...a) const {
    /* the arguments as the kernel's parameters, copied once per launch */
    std::function<void()> body = std::bind(k, P(a)...);
    (void)cuemu_run((const void *)k, grid, block, smem, body);
  }
};
template <class... P>
cuemu_launcher<P...> cuemu_launch(void (*k)(P...), dim3 grid, dim3 block,
                                  size_t smem) {
  return cuemu_launcher<P...>{k, grid, block, smem};
}

/* ---- runtime calls the kernels' host code makes ------------------------- */

cudaError_t cuemu_set_func_smem(const void *k, int bytes);
template <class T>
cudaError_t cuemu_FuncSetAttribute(T *k, cudaFuncAttribute attr, int v) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return cudaSuccess;
  return cuemu_set_func_smem((const void *)k, v);
}
template <class T>
cudaError_t cuemu_FuncGetAttributes(cudaFuncAttributes *fa, T *k) {
  (void)k;
  memset(fa, 0, sizeof *fa);
  fa->ptxVersion = fa->binaryVersion = 90; /* as built for sm_90 */
  fa->maxThreadsPerBlock = 1024;
  return cudaSuccess;
}

#endif /* DQ_TESTS_CUEMU_H */
