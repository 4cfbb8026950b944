/*
 * emu_elem.cc - kernels/cuda/elem.cu compiled for the CPU emulator (cuemu.h),
 * for cuda_ops_emul: its entry points keep their names (the real objects
 * are then not linked), its kernels go in a namespace.
 */
#include "cuemu.h"

#include "cuda_ops.h"
#include "gather.cuh"
#include "launch.cuh"
#include "quant.cuh"

namespace emu_elem {
#include "elem.cu"
}
