/*
 * gguf_writer.h - a tiny GGUF writer for tests: builds a v3 file in memory
 * from key/values and tensors so the reader and the tokenizers can be tested
 * without model files. It writes exactly the layout documented in
 * engine/gguf.h, independently of the reader's code. Test-only: aborts on
 * out-of-memory, no input checks.
 */
#ifndef DQ_TEST_GGUF_WRITER_H
#define DQ_TEST_GGUF_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint8_t *p;
  size_t len, cap;
} gw_buf;

typedef struct {
  gw_buf kv, ti, data;
  uint64_t n_kv, n_tensors;
  uint32_t alignment;
} gw;

static inline void gw_put(gw_buf *b, const void *src, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
      cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
      abort();
    b->cap = cap;
  }
  if (n)
    memcpy(b->p + b->len, src, n);
  b->len += n;
}
static inline void gw_u32le(gw_buf *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                  (uint8_t)(v >> 24)};
  gw_put(b, x, 4);
}
static inline void gw_u64le(gw_buf *b, uint64_t v) {
  uint8_t x[8];
  for (int i = 0; i < 8; i++)
    x[i] = (uint8_t)(v >> (8 * i));
  gw_put(b, x, 8);
}
static inline void gw_strb(gw_buf *b, const char *s, size_t n) {
  gw_u64le(b, n);
  gw_put(b, s, n);
}
static inline void gw_key(gw *w, const char *key, uint32_t type) {
  gw_strb(&w->kv, key, strlen(key));
  gw_u32le(&w->kv, type);
  w->n_kv++;
}

static inline void gw_init(gw *w) {
  memset(w, 0, sizeof *w);
  w->alignment = 32;
}
static inline void gw_free(gw *w) {
  free(w->kv.p);
  free(w->ti.p);
  free(w->data.p);
}

/* value types as on disk */
enum { GW_U8 = 0, GW_I8, GW_U16, GW_I16, GW_U32, GW_I32, GW_F32, GW_BOOL,
       GW_STRING, GW_ARRAY, GW_U64, GW_I64, GW_F64 };

static inline void gw_add_u32(gw *w, const char *key, uint32_t v) {
  gw_key(w, key, GW_U32);
  gw_u32le(&w->kv, v);
}
static inline void gw_add_i32(gw *w, const char *key, int32_t v) {
  gw_key(w, key, GW_I32);
  gw_u32le(&w->kv, (uint32_t)v);
}
static inline void gw_add_f32(gw *w, const char *key, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  gw_key(w, key, GW_F32);
  gw_u32le(&w->kv, u);
}
static inline void gw_add_bool(gw *w, const char *key, int v) {
  uint8_t b = (uint8_t)(v != 0);
  gw_key(w, key, GW_BOOL);
  gw_put(&w->kv, &b, 1);
}
static inline void gw_add_str(gw *w, const char *key, const char *v) {
  gw_key(w, key, GW_STRING);
  gw_strb(&w->kv, v, strlen(v));
}
static inline void gw_add_arr_str(gw *w, const char *key, const char *const *v,
                           size_t n) {
  gw_key(w, key, GW_ARRAY);
  gw_u32le(&w->kv, GW_STRING);
  gw_u64le(&w->kv, n);
  for (size_t i = 0; i < n; i++)
    gw_strb(&w->kv, v[i], strlen(v[i]));
}
static inline void gw_add_arr_f32(gw *w, const char *key, const float *v, size_t n) {
  gw_key(w, key, GW_ARRAY);
  gw_u32le(&w->kv, GW_F32);
  gw_u64le(&w->kv, n);
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    gw_u32le(&w->kv, u);
  }
}
static inline void gw_add_arr_i32(gw *w, const char *key, const int32_t *v,
                           size_t n) {
  gw_key(w, key, GW_ARRAY);
  gw_u32le(&w->kv, GW_I32);
  gw_u64le(&w->kv, n);
  for (size_t i = 0; i < n; i++)
    gw_u32le(&w->kv, (uint32_t)v[i]);
}

/* Adds a tensor; its data goes at the next aligned offset of the data
 * section. ne has n_dims entries. */
static inline void gw_add_tensor(gw *w, const char *name, uint32_t type,
                          uint32_t n_dims, const uint64_t *ne,
                          const void *data, size_t n_bytes) {
  static const uint8_t zeros[64];
  while (w->data.len % w->alignment)
    gw_put(&w->data, zeros, 1);
  gw_strb(&w->ti, name, strlen(name));
  gw_u32le(&w->ti, n_dims);
  for (uint32_t d = 0; d < n_dims; d++)
    gw_u64le(&w->ti, ne[d]);
  gw_u32le(&w->ti, type);
  gw_u64le(&w->ti, w->data.len);
  gw_put(&w->data, data, n_bytes);
  w->n_tensors++;
}

/* Returns the whole file (malloc'd, caller frees) and its size. */
static inline uint8_t *gw_finish(gw *w, size_t *len) {
  gw_buf out = {0};
  gw_put(&out, "GGUF", 4);
  gw_u32le(&out, 3);
  gw_u64le(&out, w->n_tensors);
  gw_u64le(&out, w->n_kv);
  gw_put(&out, w->kv.p, w->kv.len);
  gw_put(&out, w->ti.p, w->ti.len);
  static const uint8_t zeros[64];
  if (w->n_tensors)
    while (out.len % w->alignment)
      gw_put(&out, zeros, 1);
  gw_put(&out, w->data.p, w->data.len);
  *len = out.len;
  return out.p;
}

#endif /* DQ_TEST_GGUF_WRITER_H */
