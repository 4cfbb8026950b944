/*
 * test_cuda_blas_load.c - cuBLAS is opened when the CUDA backend starts,
 * not linked (kernels/cuda/matmul.cu): a process that links the kernels
 * has no libcublas mapped until dq_cu_blas_load(), which then loads it
 * (the toolkit that built this test has it), and a second call gives the
 * same answer without loading again. Needs no GPU: loading the library
 * does not touch a device. That the docqa binary links no CUDA library
 * is tests/cli/basics.sh's check.
 */
#include "cuda_ops.h"
#include "kernels.h"
#include "test.h"

int main(void) {
  /* the kernels are linked (this call is theirs), cuBLAS is not mapped */
  CHECK(dq_cu_type_supported(DQ_TYPE_Q8_0));
  CHECK_EQ_INT(test_mapped("libcublas"), 0);
  const char *why = dq_cu_blas_load();
  CHECK_MSG(why == NULL, "dq_cu_blas_load: %s", why ? why : "");
  CHECK(test_mapped("libcublas.so") > 0);
  CHECK(dq_cu_blas_load() == why);
  return TEST_EXIT();
}
