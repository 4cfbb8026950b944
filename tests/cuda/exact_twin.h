/*
 * exact_twin.h - a model file's exact twin, for tests and tools that need
 * the reference a quantized model's kernels should reproduce: the same
 * metadata bytes, every tensor dequantized to F32 (dq_dequantize_row), so
 * that running the twin in F32 on the CPU isolates what the activations'
 * and kernels' rounding costs from what the weights' quantization costs.
 * test_cuda_ops.c checks the CUDA backend against it; dq_twin_cmp
 * measures any backend against it on real text.
 */
#ifndef DQ_TEST_EXACT_TWIN_H
#define DQ_TEST_EXACT_TWIN_H

#include "engine_tok/gguf_writer.h"
#include "gguf.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes the exact twin of model file src to dst: its metadata bytes as
 * they are, every tensor dequantized to F32 (dq_dequantize_row). The
 * metadata ends where the tensor infos begin: found as the first info
 * (name length, name) just before the data section, less its padding.
 * Returns 0 on success. */
static inline int dq_write_exact_twin(const char *src, const char *dst) {
  dq_gguf *g = NULL;
  dq_error err = {0};
  if (dq_gguf_open(src, &g, &err)) {
    fprintf(stderr, "twin of %s: %s\n", src, err.msg);
    return -1;
  }
  const uint64_t nt = dq_gguf_n_tensors(g), d0 = dq_gguf_data_offset(g);
  const uint32_t al = dq_gguf_alignment(g);
  uint64_t info = 0;
  for (uint64_t i = 0; i < nt; i++) {
    const dq_gguf_tensor *t = dq_gguf_tensor_at(g, i);
    info += 8 + strlen(t->name) + 4 + 8 * (uint64_t)t->n_dims + 4 + 8;
  }
  uint8_t *head = malloc(d0);
  FILE *f = fopen(src, "rb");
  int rc = !head || !f || nt == 0 || fread(head, 1, d0, f) != d0;
  if (f)
    fclose(f);
  uint64_t kv_end = 0;
  const dq_gguf_tensor *t0 = nt ? dq_gguf_tensor_at(g, 0) : NULL;
  const uint64_t n0 = t0 ? strlen(t0->name) : 0;
  for (uint64_t pad = 0; !rc && pad < al && !kv_end; pad++) {
    uint64_t c = d0 - pad - info, len = 0;
    if (d0 < pad + info || c < 24 || c + 8 + n0 > d0)
      continue;
    memcpy(&len, head + c, 8);
    if (len == n0 && !memcmp(head + c + 8, t0->name, n0))
      kv_end = c;
  }
  rc = rc || !kv_end;
  gw w;
  gw_init(&w);
  w.alignment = al;
  if (!rc) {
    gw_put(&w.kv, head + 24, kv_end - 24);
    w.n_kv = dq_gguf_n_kv(g);
  }
  for (uint64_t i = 0; i < nt && !rc; i++) {
    const dq_gguf_tensor *t = dq_gguf_tensor_at(g, i);
    const int64_t cols = (int64_t)t->ne[0];
    const uint64_t rows = t->n_elems / t->ne[0];
    size_t rb = 0;
    float *x = malloc(t->n_elems * sizeof(float));
    rc = !x || dq_type_row_bytes((int)t->type, cols, &rb) != DQ_OK;
    for (uint64_t r = 0; r < rows && !rc; r++)
      rc = dq_dequantize_row((int)t->type, (const uint8_t *)t->data + r * rb,
                             x + r * (uint64_t)cols, cols) != DQ_OK;
    if (!rc)
      gw_add_tensor(&w, t->name, 0, t->n_dims, t->ne, x,
                    t->n_elems * sizeof(float));
    free(x);
  }
  free(head);
  dq_gguf_close(g);
  if (rc) {
    fprintf(stderr, "twin of %s: could not be written\n", src);
    gw_free(&w);
    return -1;
  }
  size_t len;
  uint8_t *buf = gw_finish(&w, &len);
  gw_free(&w);
  FILE *o = fopen(dst, "wb");
  rc = !o || fwrite(buf, 1, len, o) != len;
  if (o && fclose(o))
    rc = 1;
  free(buf);
  if (rc)
    fprintf(stderr, "twin of %s: could not write %s\n", src, dst);
  return rc ? -1 : 0;
}

#endif /* DQ_TEST_EXACT_TWIN_H */
