/*
 * test_cuda_blas_load.c - cuBLAS is opened when the CUDA backend starts,
 * not linked (kernels/cuda/matmul.cu): a process that links the kernels
 * has no libcublas mapped until dq_cu_blas_load(), which then loads it
 * (the toolkit that built this test has it), and a second call gives the
 * same answer without loading again. Needs no GPU: loading the library
 * does not touch a device. Given the docqa binary, also checks that it
 * needs no CUDA library to start (its dynamic section's NEEDED entries,
 * read by readelf).
 */
#include "cuda_ops.h"
#include "kernels.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
  /* the kernels are linked (this call is theirs), cuBLAS is not mapped */
  CHECK(dq_cu_type_supported(DQ_TYPE_Q8_0));
  CHECK_EQ_INT(test_mapped("libcublas"), 0);
  const char *why = dq_cu_blas_load();
  CHECK_MSG(why == NULL, "dq_cu_blas_load: %s", why ? why : "");
  CHECK(test_mapped("libcublas.so") > 0);
  CHECK(dq_cu_blas_load() == why);
  /* the docqa binary needs no CUDA library to start */
  if (argc > 1) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "command -v readelf >/dev/null || exit 77; readelf -d '%s' | "
             "grep NEEDED | grep -ciE 'cublas|cudart|libcuda'",
             argv[1]);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    if (p) {
      int n = -1;
      if (fscanf(p, "%d", &n) != 1)
        n = -1;
      int rc = pclose(p);
      if (rc >= 0 && WEXITSTATUS(rc) != 77)
        CHECK_MSG(n == 0, "%s needs %d CUDA libraries", argv[1], n);
    }
  }
  return TEST_EXIT();
}
