/*
 * gather.cuh - the addressing of GSM's row gathers (elem.cu k_gather_rows,
 * k_gather_f16p; backend.h kv_gather), host and device alike, so that
 * tests/cuda/test_cuda_logic.cu checks it against the CPU backend's
 * kv_gather without a GPU. Rows are moved as 16-bit words: F32, F16 and
 * Q8_0 rows (34-byte blocks) are whole words.
 */
#ifndef DQ_CUDA_GATHER_CUH
#define DQ_CUDA_GATHER_CUH

#include <stddef.h>
#include <stdint.h>

/* 16-bit words in one row of `store` (0 F32, 1 F16, 8 Q8_0; 2 = F16
 * panels: one word per element), 0 for a store or size the gather does
 * not take. */
__host__ __device__ inline size_t dqc_gather_units(int store,
                                                    int row_elems) {
  if (row_elems <= 0)
    return 0;
  switch (store) {
  case 0:
    return (size_t)row_elems * 2;
  case 1:
  case 2:
    return (size_t)row_elems;
  case 8:
    return row_elems % 32 ? 0 : (size_t)row_elems / 32 * 17;
  default:
    return 0;
  }
}

/* Words of dst the gather of n_rows rows writes: rows x units, or for F16
 * panels every slot of the panels those rows touch (whole panels). */
__host__ __device__ inline size_t dqc_gather_span(int store, int row_elems,
                                                   int n_rows) {
  size_t u = dqc_gather_units(store, row_elems);
  if (store == 2)
    return ((size_t)n_rows + 15) / 16 * 16 * u;
  return u * (size_t)n_rows;
}

/* Source word of dst word i, or (size_t)-1 when dst word i is a panel slot
 * past n_rows (left as it is). */
__host__ __device__ inline size_t dqc_gather_src(int store, int row_elems,
                                                 int n_rows,
                                                 const int32_t *map,
                                                 size_t i) {
  if (store == 2) { /* element e of row r at ((r / 16) * re + e) * 16 + r % 16 */
    size_t per = (size_t)row_elems * 16;
    size_t r = i / per * 16 + i % 16, e = i / 16 % (size_t)row_elems;
    if (r >= (size_t)n_rows)
      return (size_t)-1;
    size_t m = (size_t)map[r];
    return ((m / 16) * row_elems + e) * 16 + m % 16;
  }
  size_t u = dqc_gather_units(store, row_elems);
  return (size_t)map[i / u] * u + i % u;
}

#endif /* DQ_CUDA_GATHER_CUH */
