/*
 * kt.h - helpers shared by the kernel tests: a seeded random generator
 * (splitmix64, so failures reproduce), random rows with per-block varying
 * magnitudes, and the list of weight types.
 */
#ifndef DQ_KT_H
#define DQ_KT_H

#include "kernels.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct { uint64_t s; } kt_rng;

static inline uint64_t kt_next(kt_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* uniform in [-1, 1) */
static inline float kt_uniform(kt_rng *r) {
  return (float)((double)(kt_next(r) >> 11) * 0x1p-53 * 2.0 - 1.0);
}

/* Random values whose magnitude changes every 32 elements (0.01 .. 10), like
 * real weights and activations, with an offset in some blocks. */
static inline void kt_fill(kt_rng *r, float *x, int64_t n) {
  float scale = 1.0f, off = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    if (i % 32 == 0) {
      scale = powf(10.0f, 2.0f * kt_uniform(r) - 0.5f);
      off = (kt_next(r) % 4 == 0) ? scale * kt_uniform(r) : 0.0f;
    }
    x[i] = scale * kt_uniform(r) + off;
  }
}

static const int kt_weight_types[] = {
    DQ_TYPE_F32,  DQ_TYPE_F16,  DQ_TYPE_BF16, DQ_TYPE_Q4_0, DQ_TYPE_Q4_1,
    DQ_TYPE_Q5_0, DQ_TYPE_Q5_1, DQ_TYPE_Q8_0, DQ_TYPE_Q4_K, DQ_TYPE_Q6_K};
#define KT_N_WEIGHT_TYPES ((int)(sizeof kt_weight_types / sizeof kt_weight_types[0]))

static inline void *kt_row_alloc(int type, int64_t n) {
  size_t bytes = 0;
  if (dq_type_row_bytes(type, n, &bytes) != DQ_OK)
    return NULL;
  return malloc(bytes ? bytes : 1);
}

#endif
