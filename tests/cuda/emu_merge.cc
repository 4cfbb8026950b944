/*
 * emu_merge.cc - kernels/cuda/merge.cu compiled for the CPU emulator
 * (cuemu.h), for cuda_ops_emul: its entry points keep their names (the
 * real objects are then not linked), its kernels go in a namespace.
 */
#include "cuemu.h"

#include "cuda_ops.h"
#include "launch.cuh"
#include "merge.cuh"

namespace emu {
#include "merge.cu"
}
