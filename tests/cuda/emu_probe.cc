/*
 * emu_probe.cc - kernels/cuda/probe.cu compiled for the CPU emulator (cuemu.h),
 * for cuda_ops_emul: its entry points keep their names (the real objects
 * are then not linked), its kernels go in a namespace.
 */
#include "cuemu.h"

#include "kernels.h"
#include "launch.cuh"

#include <cublas_v2.h>

namespace emu_probe {
#include "probe.cu"
}
