/*
 * emu_attn.cc - kernels/cuda/attn.cu compiled for the CPU emulator
 * (cuemu.h), its entry points renamed so they link beside the real ones.
 */
#ifndef DQ_EMU_REAL_NAMES /* cuda_ops_emul links them as themselves */
#define dq_cu_attention emu_dq_cu_attention
#define dq_cu_attn_set_mma emu_dq_cu_attn_set_mma
#define dq_cu_attn_ws_bytes emu_dq_cu_attn_ws_bytes
#define dq_cu_attn_selfcheck emu_dq_cu_attn_selfcheck
#endif
#include "cuemu.h"

#include "attn.cu"
