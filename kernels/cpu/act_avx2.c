/*
 * act_avx2.c - the AVX2 + FMA build of act_impl.h's activations (dq_silu_avx2,
 * dq_gelu_tanh_avx2); entered only through ops.c's dq_*_isa after the
 * probe found AVX2 + FMA working.
 */
#include "cpu_int.h"

#define ACT_NAME(f) dq_##f##_avx2
#include "act_impl.h"
