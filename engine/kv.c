/*
 * kv.c - a sequence's KV cache: per layer, one device buffer of keys and
 * one of values, n_ctx rows each, a row being one position's n_head_kv
 * heads. F16 by default; Q8_0 (blocks of 32 with one f16 scale, about half
 * the memory again) or F32 on request. The forward pass writes rows with the
 * backend's kv_store and attention reads them back; this file only sizes and
 * owns the memory. A GSM sequence (forward.c, gsm.c) sizes this cache to
 * min_tokens rows and, once it grows past them, moves the rows into its own
 * bounded GSM cache and frees this one.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

dq_status dq_kv_init(dq_kv *kv, dq_backend *be, int n_layer, int n_ctx,
                     int row_elems, dq_kv_type type, dq_error *err) {
  memset(kv, 0, sizeof *kv);
  switch (type) {
  case DQ_KV_F16:
    kv->store = DQ_STORE_F16;
    kv->row_bytes = (size_t)row_elems * 2;
    break;
  case DQ_KV_F32:
    kv->store = DQ_STORE_F32;
    kv->row_bytes = (size_t)row_elems * 4;
    break;
  case DQ_KV_Q8_0:
    if (row_elems % 32)
      return dq_error_set(err, DQ_ERR_UNSUPPORTED,
                          "q8_0 KV cache needs head sizes that are multiples "
                          "of 32 (row of %d elements)",
                          row_elems);
    kv->store = DQ_STORE_Q8_0;
    kv->row_bytes = (size_t)row_elems / 32 * 34;
    break;
  default:
    return dq_error_set(err, DQ_ERR_ARG, "unknown KV cache type %d",
                        (int)type);
  }
  kv->n_layer = n_layer;
  kv->n_ctx = n_ctx;
  kv->row_elems = row_elems;
  kv->k = calloc((size_t)n_layer, sizeof *kv->k);
  kv->v = calloc((size_t)n_layer, sizeof *kv->v);
  if (!kv->k || !kv->v)
    goto fail;
  /* F16 keys sit in panels of 16 positions: whole panels */
  size_t k_rows = type == DQ_KV_F16 ? ((size_t)n_ctx + 15) / 16 * 16
                                    : (size_t)n_ctx;
  for (int l = 0; l < n_layer; l++) {
    if (be->i.buf_alloc(be->ctx, kv->row_bytes * k_rows, &kv->k[l]) ||
        be->i.buf_alloc(be->ctx, kv->row_bytes * (size_t)n_ctx, &kv->v[l]))
      goto fail;
  }
  return DQ_OK;
fail:
  dq_kv_free(kv, be);
  return dq_error_set(err, DQ_ERR_NOMEM,
                      "KV cache: cannot allocate %d layers x %d positions x "
                      "%zu bytes",
                      n_layer, n_ctx, kv->row_bytes * 2);
}

void dq_kv_free(dq_kv *kv, dq_backend *be) {
  if (!kv)
    return;
  for (int l = 0; l < kv->n_layer; l++) {
    if (kv->k && kv->k[l])
      be->i.buf_free(be->ctx, kv->k[l]);
    if (kv->v && kv->v[l])
      be->i.buf_free(be->ctx, kv->v[l]);
  }
  free(kv->k);
  free(kv->v);
  kv->k = kv->v = NULL;
  kv->n_layer = 0;
}

size_t dq_kv_bytes(const dq_kv *kv) {
  return kv->row_bytes * (size_t)kv->n_ctx * 2 * (size_t)kv->n_layer;
}
