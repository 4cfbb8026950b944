/*
 * emu_topk.cc - kernels/cuda/topk.cu compiled for the CPU emulator (cuemu.h),
 * for cuda_ops_emul: its entry points keep their names (the real objects
 * are then not linked), its kernels go in a namespace.
 */
#include "cuemu.h"

#include "cuda_ops.h"
#include "launch.cuh"
#include "topk.cuh"

namespace emu_topk {
#include "topk.cu"
}
