/*
 * act_avx512.c - the AVX-512F build of act_impl.h's activations (dq_silu_avx512,
 * dq_gelu_tanh_avx512); entered only through ops.c's dq_*_isa after the
 * probe found AVX-512F working.
 */
#include "cpu_int.h"

#define ACT_NAME(f) dq_##f##_avx512
#include "act_impl.h"
