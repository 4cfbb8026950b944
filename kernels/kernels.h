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

#ifdef __cplusplus
}
#endif
#endif /* DQ_KERNELS_H */
