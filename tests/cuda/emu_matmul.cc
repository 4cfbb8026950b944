/*
 * emu_matmul.cc - kernels/cuda/matmul.cu compiled for the CPU emulator
 * (cuemu.h), with a stand-in for the cuBLAS calls it makes: a plain
 * column-major GEMM in float (F16/BF16/F32 inputs, F32 compute and output,
 * as the calls ask for, alpha and beta from the host or, in device pointer
 * mode, from device memory when the product runs), so the prefill path's
 * own kernels (dequantize to F16, x's scale and conversion to F16/BF16)
 * and tiling run too.
 */
#ifndef DQ_EMU_REAL_NAMES
#include "emu_matmul_names.h"
#endif
#include "cuemu.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <math.h>

#include <vector>

#undef cublasCreate
#undef cublasDestroy
#undef cublasSetStream
#undef cublasSetWorkspace
#undef cublasSgemm
#undef cublasGemmEx
#undef cublasSetPointerMode
#define cublasCreate emu_blasCreate
#define cublasDestroy emu_blasDestroy
#define cublasSetStream emu_blasSetStream
#define cublasSetWorkspace emu_blasSetWorkspace
#define cublasSgemm emu_blasSgemm
#define cublasGemmEx emu_blasGemmEx
#define cublasSetPointerMode emu_blasSetPointerMode

namespace {

cublasStatus_t emu_blasCreate(cublasHandle_t *h) {
  static int token;
  *h = (cublasHandle_t)(void *)&token;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t emu_blasDestroy(cublasHandle_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t emu_blasSetStream(cublasHandle_t, cudaStream_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t emu_blasSetWorkspace(cublasHandle_t, void *, size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
/* where alpha and beta are: host values, read at the call, or device
 * words, read when the product runs (after the kernels before it) */
cublasPointerMode_t g_ptr_mode = CUBLAS_POINTER_MODE_HOST;
cublasStatus_t emu_blasSetPointerMode(cublasHandle_t, cublasPointerMode_t m) {
  g_ptr_mode = m;
  return CUBLAS_STATUS_SUCCESS;
}

float elem(const void *p, cudaDataType t, size_t i) {
  switch (t) {
  case CUDA_R_16F: return __half2float(((const __half *)p)[i]);
  case CUDA_R_16BF: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
  default: return ((const float *)p)[i];
  }
}

/* out[c] = the sum over l < k of a[l] b_c[l] for four columns b_c (b +
 * c * k), each added in order, fused: the order the plain loop had, four
 * chains at once. The FMA clone (chosen at load by the CPU) makes the fused
 * step an instruction; the default one calls libm's fmaf. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("fma", "default")))
#endif
void dot4(const float *a, const float *b, int k, float out[4]) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  for (int l = 0; l < k; l++) {
    s0 = fmaf(a[l], b[l], s0);
    s1 = fmaf(a[l], b[k + l], s1);
    s2 = fmaf(a[l], b[2 * k + l], s2);
    s3 = fmaf(a[l], b[3 * k + l], s3);
  }
  out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
}

/* C = alpha op(A) op(B) + beta C, column-major, op T or N. Each output is
 * the fused sum over l in order (the bits the first, element by element,
 * version gave): op(B)'s columns are converted to float once, op(A)'s
 * rows one at a time. */
cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const float *alpha_p, const void *A,
                    cudaDataType at, int lda, const void *B, cudaDataType bt,
                    int ldb, const float *beta_p, float *C, int ldc) {
  if (m < 0 || n < 0 || k < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool dev = g_ptr_mode == CUBLAS_POINTER_MODE_DEVICE;
  const float alpha_h = dev ? 0.0f : *alpha_p, beta_h = dev ? 0.0f : *beta_p;
  /* a stream operation: recorded while capturing, like the launches */
  cuemu_host_op([=] {
  const float alpha = dev ? *alpha_p : alpha_h;
  const float beta = dev ? *beta_p : beta_h;
  const int n4 = (n + 3) / 4 * 4; /* columns past n are zeros */
  std::vector<float> bf((size_t)n4 * k, 0.0f), af((size_t)k);
  for (int j = 0; j < n; j++)
    for (int l = 0; l < k; l++)
      bf[(size_t)j * k + l] =
          elem(B, bt, tb == CUBLAS_OP_T ? (size_t)j + (size_t)l * ldb
                                        : (size_t)l + (size_t)j * ldb);
  for (int i = 0; i < m; i++) {
    for (int l = 0; l < k; l++)
      af[l] = elem(A, at, ta == CUBLAS_OP_T ? (size_t)l + (size_t)i * lda
                                            : (size_t)i + (size_t)l * lda);
    for (int j = 0; j < n; j += 4) {
      float s[4];
      dot4(af.data(), bf.data() + (size_t)j * k, k, s);
      for (int c = 0; c < 4 && j + c < n; c++) {
        float *o = C + (size_t)i + (size_t)(j + c) * ldc;
        *o = alpha * s[c] + (beta != 0.0f ? beta * *o : 0.0f);
      }
    }
  }
  });
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t emu_blasSgemm(cublasHandle_t, cublasOperation_t ta,
                             cublasOperation_t tb, int m, int n, int k,
                             const float *alpha, const float *A, int lda,
                             const float *B, int ldb, const float *beta,
                             float *C, int ldc) {
  return gemm(ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb,
              beta, C, ldc);
}

cublasStatus_t emu_blasGemmEx(cublasHandle_t, cublasOperation_t ta,
                              cublasOperation_t tb, int m, int n, int k,
                              const void *alpha, const void *A,
                              cudaDataType at, int lda, const void *B,
                              cudaDataType bt, int ldb, const void *beta,
                              void *C, cudaDataType ct, int ldc,
                              cublasComputeType_t comp, cublasGemmAlgo_t) {
  if (ct != CUDA_R_32F || comp != CUBLAS_COMPUTE_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return gemm(ta, tb, m, n, k, (const float *)alpha, A, at, lda, B, bt, ldb,
              (const float *)beta, (float *)C, ldc);
}

} // namespace

#define DQ_CU_BLAS_LINKED 1 /* the stand-ins above, not a loaded cuBLAS */
#include "matmul.cu"
