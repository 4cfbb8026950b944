/*
 * emu_test_quant.cc - test_cuda_quant.cu with its "GPU checks" run on the
 * emulated device: matmul.cu's kernels and host code (emu_matmul.cc) under
 * cuemu.h, every weight type, both paths, every staging word size.
 */
#include "emu_matmul_names.h"
#include "cuemu.h"

#include "test_cuda_quant.cu"
