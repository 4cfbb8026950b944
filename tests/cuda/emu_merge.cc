/*
 * emu_merge.cc - kernels/cuda/merge.cu compiled for the CPU emulator
 * (cuemu.h), its entry points renamed and its kernels in a namespace so
 * they link beside the real ones.
 */
#ifndef DQ_EMU_REAL_NAMES /* cuda_ops_emul links them as themselves */
#define dq_cu_kv_merge emu_dq_cu_kv_merge
#define dq_cu_kv_fold emu_dq_cu_kv_fold
#endif
#include "cuemu.h"

#include "cuda_ops.h"
#include "launch.cuh"
#include "merge.cuh"

namespace emu {
#include "merge.cu"
}
