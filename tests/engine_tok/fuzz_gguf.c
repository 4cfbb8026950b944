/*
 * fuzz_gguf.c - libFuzzer harness for the GGUF reader and, when the input
 * opens, the tokenizer loader and encoder on whatever metadata it carries.
 * Built only with clang (target fuzz_gguf, not run by ctest):
 *   CC=clang cmake -S . -B build-fuzz && cmake --build build-fuzz --target fuzz_gguf
 *   build-fuzz/tests/engine_tok/fuzz_gguf -max_total_time=60 CORPUS_DIR
 * The deterministic mutation run in test_gguf.c covers the same ground in
 * every ctest run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dq_gguf *g = NULL;
  if (dq_gguf_open_mem(data, size, "fuzz.gguf", &g, NULL) != DQ_OK)
    return 0;
  for (uint64_t i = 0; i < dq_gguf_n_tensors(g); i++) {
    const dq_gguf_tensor *t = dq_gguf_tensor_at(g, i);
    if (t->n_bytes) /* must lie inside the buffer */
      (void)((volatile const uint8_t *)t->data)[t->n_bytes - 1];
  }
  dq_tok *t = NULL;
  if (dq_tok_load(g, &t, NULL) == DQ_OK) {
    static const char text[] = "Hello <|im_start|> w\xc3\xb6rld 123\n\t\xff";
    int32_t *ids = NULL;
    size_t n = 0;
    if (dq_tok_encode(t, text, sizeof text - 1, true, true, &ids, &n) ==
        DQ_OK) {
      char *out = NULL;
      if (dq_tok_decode(t, ids, n, true, &out, NULL) == DQ_OK)
        free(out);
    }
    free(ids);
  }
  dq_tok_free(t);
  dq_gguf_close(g);
  return 0;
}
