/*
 * cuda_stub.c - dq_cuda_probe() for builds without nvcc: reports "not built".
 * Compiled only when DOCQA_HAVE_CUDA is OFF; the real one is cuda/probe.cu.
 */
#include "kernels.h"

#include <string.h>

void dq_cuda_probe(dq_cuda_info *info) {
  memset(info, 0, sizeof *info);
  strcpy(info->error, "docqa was built without CUDA (nvcc not found)");
}
