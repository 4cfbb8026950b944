/*
 * probe.cu - reports whether CUDA can run here: runtime, driver and cuBLAS
 * versions and device 0's name and compute capability. It is also the smallest
 * kernel launch we can check end to end (a device-side write read back), so a
 * broken driver/toolkit pairing is caught by `docqa version`, not by a model.
 */
#include "kernels.h"
#include "launch.cuh"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

__global__ void probe_write(int *out) { out[threadIdx.x] = (int)threadIdx.x * 3; }

/* Launches probe_write and checks the result; returns NULL on success or a
 * static message naming the failing call. */
static const char *probe_launch(void) {
  int *dev = NULL;
  int host[32];
  cudaError_t e = cudaMalloc((void **)&dev, sizeof host);
  if (e != cudaSuccess) return "cudaMalloc failed";
  DQ_CU_LAUNCH(probe_write, 1, 32, 0, 0)(dev);
  e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(dev);
  if (e != cudaSuccess) return "kernel probe_write failed";
  for (int i = 0; i < 32; i++)
    if (host[i] != i * 3) return "kernel probe_write returned wrong values";
  return NULL;
}

extern "C" void dq_cuda_probe(dq_cuda_info *info) {
  memset(info, 0, sizeof *info);
  info->built = 1;
  cudaRuntimeGetVersion(&info->runtime_version);
  cudaDriverGetVersion(&info->driver_version);
  info->cublas_version = CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (info->driver_version == 0)
      snprintf(info->error, sizeof info->error, "no NVIDIA driver installed: %s",
               cudaGetErrorString(e));
    else if (e == cudaErrorNoDevice)
      snprintf(info->error, sizeof info->error, "no CUDA device found");
    else
      snprintf(info->error, sizeof info->error, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    return;
  }
  info->n_devices = n;
  if (n == 0) return;
  cudaDeviceProp prop;
  e = cudaGetDeviceProperties(&prop, 0);
  if (e != cudaSuccess) {
    snprintf(info->error, sizeof info->error, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
    return;
  }
  snprintf(info->device_name, sizeof info->device_name, "%s", prop.name);
  info->cc_major = prop.major;
  info->cc_minor = prop.minor;
  info->total_mem_bytes = prop.totalGlobalMem;
  const char *msg = probe_launch();
  if (msg) snprintf(info->error, sizeof info->error, "%s", msg);
}
