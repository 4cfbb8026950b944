/*
 * emu_moe.cc - kernels/cuda/moe.cu compiled for the CPU emulator (cuemu.h),
 * for cuda_ops_emul: its entry points keep their names (the real objects
 * are then not linked), its kernels go in a namespace.
 */
#include "cuemu.h"

#include "attn_moe.cuh"
#include "cuda_ops.h"
#include "launch.cuh"

namespace emu_moe {
#include "moe.cu"
}
