/*
 * gguf.h - reader for GGUF model files (versions 2 and 3), private to engine/.
 *
 * A GGUF file is mapped read-only; metadata is parsed once at open, with every
 * count, length and offset checked against the bytes that remain, so a
 * truncated or hostile file yields an error naming the file, the field or
 * tensor and the byte offset, never a crash. Tensor data is not copied: a
 * tensor's `data` points into the mapping. This module knows the file layout
 * and the ggml type table (for size checks); it does not know architectures
 * (the runtime checks `general.architecture`) and it does not dequantize
 * (kernels/ does).
 *
 * On-disk layout (all integers little-endian):
 *
 *   u32   magic            "GGUF" (0x46554747)
 *   u32   version          2 or 3 (1 used 32-bit counts and is refused)
 *   u64   n_tensors        <= DQ_GGUF_MAX_TENSORS
 *   u64   n_kv             <= DQ_GGUF_MAX_KV
 *   n_kv x key/value:
 *     string key           (u64 length, then bytes, no NUL)
 *     u32    value type    dq_gguf_vtype
 *     value                scalar | string | array:
 *                          u32 element type (not ARRAY), u64 count, elements
 *   n_tensors x tensor info:
 *     string name          unique within the file
 *     u32    n_dims        1..DQ_GGUF_MAX_DIMS
 *     u64    ne[n_dims]    ne[0] is the fastest-varying (row) dimension
 *     u32    type          ggml type id (see dq_gguf_type_name)
 *     u64    offset        relative to the data section, multiple of alignment
 *   padding to `general.alignment` (u32, power of two; default 32)
 *   data section           tensor bytes
 *
 * Thread safety: a dq_gguf is immutable after open except for its error
 * message; concurrent readers are fine if they do not call getters that fail.
 */
#ifndef DQ_ENGINE_GGUF_H
#define DQ_ENGINE_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Named limits: a file beyond any of them is refused with DQ_ERR_LIMIT. */
#define DQ_GGUF_MAX_STRING (16u << 20)    /* bytes in one string */
#define DQ_GGUF_MAX_ARRAY (1ull << 26)    /* elements in one array */
#define DQ_GGUF_MAX_KV 65536u             /* key/value pairs */
#define DQ_GGUF_MAX_TENSORS 65536u        /* tensor infos */
#define DQ_GGUF_MAX_DIMS 4u               /* dimensions of one tensor */
#define DQ_GGUF_MAX_ALIGNMENT (1u << 20)  /* general.alignment */
#define DQ_GGUF_DEFAULT_ALIGNMENT 32u

/* Metadata value types, numbered as on disk. */
typedef enum {
  DQ_GGUF_U8 = 0,
  DQ_GGUF_I8 = 1,
  DQ_GGUF_U16 = 2,
  DQ_GGUF_I16 = 3,
  DQ_GGUF_U32 = 4,
  DQ_GGUF_I32 = 5,
  DQ_GGUF_F32 = 6,
  DQ_GGUF_BOOL = 7,
  DQ_GGUF_STRING = 8,
  DQ_GGUF_ARRAY = 9,
  DQ_GGUF_U64 = 10,
  DQ_GGUF_I64 = 11,
  DQ_GGUF_F64 = 12,
} dq_gguf_vtype;

/* ggml tensor type ids this project's runtime supports (the reader knows the
 * full table for size checks; see dq_gguf_type_size). */
enum {
  DQ_GGUF_TYPE_F32 = 0,
  DQ_GGUF_TYPE_F16 = 1,
  DQ_GGUF_TYPE_Q4_0 = 2,
  DQ_GGUF_TYPE_Q4_1 = 3,
  DQ_GGUF_TYPE_Q8_0 = 8,
  DQ_GGUF_TYPE_Q4_K = 12,
  DQ_GGUF_TYPE_Q6_K = 14,
  DQ_GGUF_TYPE_BF16 = 30,
};

typedef struct dq_gguf dq_gguf;

/* One tensor as described by the file. All pointers stay valid until
 * dq_gguf_close. `data` is inside the read-only mapping and aligned to the
 * file's alignment relative to the file start (the mapping is page aligned). */
typedef struct dq_gguf_tensor {
  const char *name;  /* NUL-terminated copy of the name */
  uint32_t type;     /* ggml type id */
  uint32_t n_dims;   /* 1..4 */
  uint64_t ne[4];    /* dims, ne[0] fastest; entries >= n_dims are 1 */
  uint64_t n_elems;  /* product of ne */
  uint64_t offset;   /* from the start of the data section */
  uint64_t n_bytes;  /* n_elems / block_elems * block_bytes */
  const void *data;  /* into the mapping */
} dq_gguf_tensor;

/* Opens and maps `path` and parses all metadata and tensor infos. On success
 * *out owns the mapping and the open file; free them with dq_gguf_close. On failure *out is NULL
 * and `err` (may be NULL) says what and where. */
dq_status dq_gguf_open(const char *path, dq_gguf **out, dq_error *err);

/* Same as dq_gguf_open on a caller-owned buffer (tests, fuzzing). The buffer
 * must outlive the handle and is not copied; `name` is used in messages. */
dq_status dq_gguf_open_mem(const void *buf, size_t n_bytes, const char *name,
                           dq_gguf **out, dq_error *err);

/* Reads the tensor data of a file-backed handle into anonymous memory
 * (2 MiB aligned, advised for transparent huge pages) and points every
 * tensor's `data` there, so that weights streamed once per token need a
 * TLB entry per 2 MiB and the hardware prefetchers are not stopped at
 * each 4 KiB page. Call before any tensor's `data` is used. *n_bytes:
 * the bytes read. DQ_ERR_UNSUPPORTED for a dq_gguf_open_mem handle,
 * DQ_ERR_NOMEM, DQ_ERR_IO (the file shrank or a read failed; the handle
 * is then as before). */
dq_status dq_gguf_read_data(dq_gguf *g, uint64_t *n_bytes, dq_error *err);

/* Unmaps and frees. Accepts NULL. Invalidates every pointer obtained from g. */
void dq_gguf_close(dq_gguf *g);

/* Message of the last failing getter on g ("file: key 'x' not found").
 * Valid until the next failing call on g. */
const char *dq_gguf_errmsg(const dq_gguf *g);
/* The last failing getter's error as a dq_error (code and message). */
const dq_error *dq_gguf_error(const dq_gguf *g);

const char *dq_gguf_path(const dq_gguf *g);    /* as given to open */
uint32_t dq_gguf_version(const dq_gguf *g);     /* 2 or 3 */
uint32_t dq_gguf_alignment(const dq_gguf *g);   /* general.alignment or 32 */
uint64_t dq_gguf_data_offset(const dq_gguf *g); /* start of the data section */
uint64_t dq_gguf_file_bytes(const dq_gguf *g);

/* ---- metadata ------------------------------------------------------------ */

/* Key/value pairs in file order. Indices are 0..n_kv-1. */
uint64_t dq_gguf_n_kv(const dq_gguf *g);
const char *dq_gguf_kv_key(const dq_gguf *g, uint64_t i);
dq_gguf_vtype dq_gguf_kv_type(const dq_gguf *g, uint64_t i);
/* Index of `key`, or -1 when absent (no error recorded). */
int64_t dq_gguf_find_key(const dq_gguf *g, const char *key);
bool dq_gguf_has_key(const dq_gguf *g, const char *key);

/* Typed getters. Each returns DQ_OK and stores the value, DQ_ERR_NOTFOUND when
 * the key is absent, or DQ_ERR_FORMAT when its type does not fit ("key 'x'
 * has type string, expected u32"); on error nothing is stored and
 * dq_gguf_errmsg(g) names the file and key. Integer getters accept any integer
 * type whose value fits the requested one; f32 accepts f32, f64 and integers;
 * bool accepts bool only. */
dq_status dq_gguf_get_u32(dq_gguf *g, const char *key, uint32_t *out);
dq_status dq_gguf_get_i32(dq_gguf *g, const char *key, int32_t *out);
dq_status dq_gguf_get_u64(dq_gguf *g, const char *key, uint64_t *out);
dq_status dq_gguf_get_i64(dq_gguf *g, const char *key, int64_t *out);
dq_status dq_gguf_get_f32(dq_gguf *g, const char *key, float *out);
dq_status dq_gguf_get_bool(dq_gguf *g, const char *key, bool *out);
/* *out points to a NUL-terminated copy valid until close; *len (may be NULL)
 * is its length in bytes (the string may contain NUL bytes). */
dq_status dq_gguf_get_str(dq_gguf *g, const char *key, const char **out,
                          size_t *len);

/* Arrays. dq_gguf_get_arr_info gives the element type and count. */
dq_status dq_gguf_get_arr_info(dq_gguf *g, const char *key,
                               dq_gguf_vtype *elem_type, uint64_t *n);
/* Copies an integer array into dst[0..n) as int32 (n must equal the array's
 * count; each element must fit). Same for f32 (from f32/f64/integers). */
dq_status dq_gguf_get_arr_i32(dq_gguf *g, const char *key, int32_t *dst,
                              uint64_t n);
dq_status dq_gguf_get_arr_f32(dq_gguf *g, const char *key, float *dst,
                              uint64_t n);
/* A string array: *strs[i] is a NUL-terminated copy and (*lens)[i] its length
 * (lens may be NULL). The arrays belong to g and are valid until close. */
dq_status dq_gguf_get_arr_str(dq_gguf *g, const char *key,
                              const char *const **strs, const uint32_t **lens,
                              uint64_t *n);
/* Raw little-endian element bytes of a numeric array (not necessarily
 * aligned: read with memcpy). Valid until close. */
dq_status dq_gguf_get_arr_raw(dq_gguf *g, const char *key,
                              dq_gguf_vtype *elem_type, const void **data,
                              uint64_t *n);

/* ---- tensors ------------------------------------------------------------- */

uint64_t dq_gguf_n_tensors(const dq_gguf *g);
/* Tensor i in file order, or NULL when i is out of range. */
const dq_gguf_tensor *dq_gguf_tensor_at(const dq_gguf *g, uint64_t i);
/* Tensor by name, or NULL when absent (no error recorded). */
const dq_gguf_tensor *dq_gguf_tensor_get(const dq_gguf *g, const char *name);
/* Tensor by name; DQ_ERR_NOTFOUND with "file: tensor 'x' not found". */
dq_status dq_gguf_find_tensor(dq_gguf *g, const char *name,
                              const dq_gguf_tensor **out);

/* ---- types --------------------------------------------------------------- */

/* "f32", "q4_K", ... for a known ggml type id; NULL for unknown ids. */
const char *dq_gguf_type_name(uint32_t type);
/* Block geometry of a ggml type: elements per block and bytes per block.
 * DQ_ERR_UNSUPPORTED for unknown ids. */
dq_status dq_gguf_type_size(uint32_t type, uint32_t *block_elems,
                            uint32_t *block_bytes);
/* "u32", "string", "array", ... ; "unknown" outside the enum. */
const char *dq_gguf_vtype_name(uint32_t vtype);

#ifdef __cplusplus
}
#endif
#endif /* DQ_ENGINE_GGUF_H */
