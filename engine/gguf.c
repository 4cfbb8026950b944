/*
 * gguf.c - GGUF v2/v3 reader on a read-only mapping (layout in gguf.h).
 *
 * Parsing is a single forward pass over the header with a cursor that checks
 * every read against the bytes that remain ("exceeds remaining file size"),
 * every count against a named limit and against the bytes left (so a count
 * can never make us allocate more than the file could describe), and every
 * size computation for overflow. Strings (keys, string values, string array
 * elements, tensor names) are copied once into one NUL-terminated arena;
 * numeric arrays and tensor data stay in the mapping. Lookups by key and by
 * tensor name go through small open-addressing hash tables, which also refuse
 * duplicates at parse time.
 *
 * Not here: architecture support (the runtime's), dequantization (kernels/).
 */
#include "gguf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGUF_MAGIC 0x46554747u /* "GGUF" read as a little-endian u32 */

/* ggml type table: id -> name, elements per block, bytes per block.
 * Ids with a NULL name are unknown or retired (4, 5, 31..33, 36..38). */
typedef struct {
  const char *name;
  uint32_t block_elems;
  uint32_t block_bytes;
} type_info;

static const type_info type_table[] = {
    [0] = {"f32", 1, 4},         [1] = {"f16", 1, 2},
    [2] = {"q4_0", 32, 18},      [3] = {"q4_1", 32, 20},
    [6] = {"q5_0", 32, 22},      [7] = {"q5_1", 32, 24},
    [8] = {"q8_0", 32, 34},      [9] = {"q8_1", 32, 36},
    [10] = {"q2_K", 256, 84},    [11] = {"q3_K", 256, 110},
    [12] = {"q4_K", 256, 144},   [13] = {"q5_K", 256, 176},
    [14] = {"q6_K", 256, 210},   [15] = {"q8_K", 256, 292},
    [16] = {"iq2_xxs", 256, 66}, [17] = {"iq2_xs", 256, 74},
    [18] = {"iq3_xxs", 256, 98}, [19] = {"iq1_s", 256, 50},
    [20] = {"iq4_nl", 32, 18},   [21] = {"iq3_s", 256, 110},
    [22] = {"iq2_s", 256, 82},   [23] = {"iq4_xs", 256, 136},
    [24] = {"i8", 1, 1},         [25] = {"i16", 1, 2},
    [26] = {"i32", 1, 4},        [27] = {"i64", 1, 8},
    [28] = {"f64", 1, 8},        [29] = {"iq1_m", 256, 56},
    [30] = {"bf16", 1, 2},       [34] = {"tq1_0", 256, 54},
    [35] = {"tq2_0", 256, 66},   [39] = {"mxfp4", 32, 17},
};
#define N_TYPES (sizeof type_table / sizeof type_table[0])

static const char *const vtype_names[] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32",
    "bool", "string", "array", "u64", "i64", "f64"};
#define N_VTYPES 13u

/* Size on disk of a scalar value type; 0 for string/array/unknown. */
static uint32_t vtype_bytes(uint32_t t) {
  switch (t) {
  case DQ_GGUF_U8: case DQ_GGUF_I8: case DQ_GGUF_BOOL: return 1;
  case DQ_GGUF_U16: case DQ_GGUF_I16: return 2;
  case DQ_GGUF_U32: case DQ_GGUF_I32: case DQ_GGUF_F32: return 4;
  case DQ_GGUF_U64: case DQ_GGUF_I64: case DQ_GGUF_F64: return 8;
  default: return 0;
  }
}

const char *dq_gguf_type_name(uint32_t type) {
  return type < N_TYPES ? type_table[type].name : NULL;
}

dq_status dq_gguf_type_size(uint32_t type, uint32_t *block_elems,
                            uint32_t *block_bytes) {
  if (type >= N_TYPES || !type_table[type].name)
    return DQ_ERR_UNSUPPORTED;
  if (block_elems)
    *block_elems = type_table[type].block_elems;
  if (block_bytes)
    *block_bytes = type_table[type].block_bytes;
  return DQ_OK;
}

const char *dq_gguf_vtype_name(uint32_t vtype) {
  return vtype < N_VTYPES ? vtype_names[vtype] : "unknown";
}

/* One key/value pair. Invariant: for scalars `raw` points at the value bytes
 * in the mapping; for STRING, `str`/`str_len` hold the arena copy; for ARRAY,
 * `elem_type`/`n` describe it, numeric elements start at `raw`, string
 * elements are in `strs`/`lens`. */
typedef struct {
  const char *key;
  uint32_t type;
  uint32_t elem_type;
  uint64_t n;
  const uint8_t *raw;
  const char *str;
  uint32_t str_len;
  const char **strs;
  uint32_t *lens;
} kv_entry;

/* Open-addressing string -> index table; slots hold index + 1 (0 = empty). */
typedef struct {
  uint32_t *slots;
  uint64_t mask;
} name_map;

struct dq_gguf {
  char *path;
  const uint8_t *base; /* mapping or caller buffer */
  uint64_t size;
  bool mapped;
  uint32_t version;
  uint32_t alignment;
  uint64_t data_offset;
  uint64_t n_kv;
  kv_entry *kv;
  name_map kv_map;
  uint64_t n_tensors;
  dq_gguf_tensor *tensors;
  name_map tensor_map;
  struct arena_block *arena; /* all strings, NUL-terminated; never moves */
  uint8_t *data_copy;        /* dq_gguf_read_data's, or NULL */
  int fd;                    /* the file (mapped handles), else -1 */
  dq_error err;
};

/* String storage: a chain of blocks, so pointers handed out stay valid. */
struct arena_block {
  struct arena_block *next;
  uint64_t used, cap;
  char data[];
};
#define ARENA_BLOCK_BYTES (1u << 20)

/* ---- hashing ------------------------------------------------------------- */

static int map_init(name_map *m, uint64_t n) {
  uint64_t cap = 16;
  while (cap < 2 * n + 1)
    cap <<= 1;
  m->slots = calloc(cap, sizeof *m->slots);
  m->mask = cap - 1;
  return m->slots ? 0 : -1;
}

/* Finds `name`; names[i] gives the name of index i. Returns the index or -1;
 * *slot_out receives the slot where it is or would go. */
static int64_t map_find(const name_map *m, const char *name,
                        const char *(*name_of)(const dq_gguf *, uint64_t),
                        const dq_gguf *g, uint64_t *slot_out) {
  if (!m->slots)
    return -1;
  uint64_t i = dq_fnv1a(name, strlen(name)) & m->mask;
  for (;;) {
    uint32_t v = m->slots[i];
    if (v == 0) {
      if (slot_out)
        *slot_out = i;
      return -1;
    }
    if (strcmp(name_of(g, v - 1), name) == 0)
      return (int64_t)(v - 1);
    i = (i + 1) & m->mask;
  }
}

static const char *kv_name(const dq_gguf *g, uint64_t i) {
  return g->kv[i].key;
}
static const char *tensor_name(const dq_gguf *g, uint64_t i) {
  return g->tensors[i].name;
}

/* ---- cursor over the header ---------------------------------------------- */

typedef struct {
  dq_gguf *g;
  uint64_t pos;
  dq_error *err;
} cursor;

static dq_status cur_need(cursor *c, uint64_t n, const char *what) {
  if (n > c->g->size - c->pos)
    return dq_error_set(c->err, DQ_ERR_CORRUPT,
                        "%s: %s at offset %llu: needs %llu bytes, which "
                        "exceeds remaining file size (%llu bytes left)",
                        c->g->path, what, (unsigned long long)c->pos,
                        (unsigned long long)n,
                        (unsigned long long)(c->g->size - c->pos));
  return DQ_OK;
}

static dq_status cur_u32(cursor *c, uint32_t *v, const char *what) {
  dq_status s = cur_need(c, 4, what);
  if (s)
    return s;
  const uint8_t *p = c->g->base + c->pos;
  *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
       (uint32_t)p[3] << 24;
  c->pos += 4;
  return DQ_OK;
}

static dq_status cur_u64(cursor *c, uint64_t *v, const char *what) {
  dq_status s = cur_need(c, 8, what);
  if (s)
    return s;
  const uint8_t *p = c->g->base + c->pos;
  uint64_t x = 0;
  for (int i = 7; i >= 0; i--)
    x = x << 8 | p[i];
  *v = x;
  c->pos += 8;
  return DQ_OK;
}

/* Copies `n` bytes at the cursor (already checked to be in the file) into
 * the arena, NUL-terminated. n <= DQ_GGUF_MAX_STRING. */
static dq_status arena_put(cursor *c, uint64_t n, const char **out) {
  dq_gguf *g = c->g;
  struct arena_block *b = g->arena;
  if (!b || n + 1 > b->cap - b->used) {
    uint64_t cap = n + 1 > ARENA_BLOCK_BYTES ? n + 1 : ARENA_BLOCK_BYTES;
    b = malloc(sizeof *b + cap);
    if (!b)
      return dq_error_set(c->err, DQ_ERR_NOMEM,
                          "%s: string of %llu bytes at offset %llu", g->path,
                          (unsigned long long)n, (unsigned long long)c->pos);
    b->next = g->arena;
    b->used = 0;
    b->cap = cap;
    g->arena = b;
  }
  char *dst = b->data + b->used;
  memcpy(dst, g->base + c->pos, n);
  dst[n] = '\0';
  b->used += n + 1;
  c->pos += n;
  *out = dst;
  return DQ_OK;
}

/* Reads a string: u64 length then bytes. `what` names the field. */
static dq_status cur_str(cursor *c, const char **out, uint32_t *len,
                         const char *what) {
  uint64_t start = c->pos, n;
  dq_status s = cur_u64(c, &n, what);
  if (s)
    return s;
  if (n > DQ_GGUF_MAX_STRING)
    return dq_error_set(c->err, DQ_ERR_LIMIT,
                        "%s: %s at offset %llu: string length %llu exceeds "
                        "limit %u",
                        c->g->path, what, (unsigned long long)start,
                        (unsigned long long)n, DQ_GGUF_MAX_STRING);
  if ((s = cur_need(c, n, what)))
    return s;
  if (len)
    *len = (uint32_t)n;
  return arena_put(c, n, out);
}

/* ---- parsing ------------------------------------------------------------- */

static dq_status parse_kv(cursor *c, kv_entry *e) {
  dq_gguf *g = c->g;
  dq_status s;
  uint64_t at = c->pos;
  if ((s = cur_str(c, &e->key, NULL, "metadata key")))
    return s;
  uint64_t slot = 0;
  if (map_find(&g->kv_map, e->key, kv_name, g, &slot) >= 0)
    return dq_error_set(c->err, DQ_ERR_CORRUPT,
                        "%s: duplicate metadata key '%s' at offset %llu",
                        g->path, e->key, (unsigned long long)at);
  char what[96];
  snprintf(what, sizeof what, "key '%.64s'", e->key);
  if ((s = cur_u32(c, &e->type, what)))
    return s;
  if (e->type >= N_VTYPES)
    return dq_error_set(c->err, DQ_ERR_FORMAT,
                        "%s: key '%s' at offset %llu: unknown value type %u",
                        g->path, e->key, (unsigned long long)at, e->type);
  if (e->type == DQ_GGUF_STRING) {
    s = cur_str(c, &e->str, &e->str_len, what);
  } else if (e->type == DQ_GGUF_ARRAY) {
    uint64_t arr_at = c->pos;
    if ((s = cur_u32(c, &e->elem_type, what)) ||
        (s = cur_u64(c, &e->n, what)))
      return s;
    if (e->elem_type == DQ_GGUF_ARRAY)
      return dq_error_set(c->err, DQ_ERR_UNSUPPORTED,
                          "%s: key '%s' at offset %llu: nested arrays are not "
                          "supported",
                          g->path, e->key, (unsigned long long)arr_at);
    if (e->elem_type >= N_VTYPES)
      return dq_error_set(c->err, DQ_ERR_FORMAT,
                          "%s: key '%s' at offset %llu: unknown array element "
                          "type %u",
                          g->path, e->key, (unsigned long long)arr_at,
                          e->elem_type);
    if (e->n > DQ_GGUF_MAX_ARRAY)
      return dq_error_set(c->err, DQ_ERR_LIMIT,
                          "%s: key '%s' at offset %llu: array length %llu "
                          "exceeds limit %llu",
                          g->path, e->key, (unsigned long long)arr_at,
                          (unsigned long long)e->n,
                          (unsigned long long)DQ_GGUF_MAX_ARRAY);
    if (e->elem_type == DQ_GGUF_STRING) {
      /* Each element takes at least its 8-byte length: bound the allocation
       * by what the file could hold before allocating. */
      if ((s = cur_need(c, e->n * 8, what)))
        return s;
      e->strs = malloc((e->n ? e->n : 1) * sizeof *e->strs);
      e->lens = malloc((e->n ? e->n : 1) * sizeof *e->lens);
      if (!e->strs || !e->lens)
        return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: key '%s': %llu strings",
                            g->path, e->key, (unsigned long long)e->n);
      for (uint64_t i = 0; i < e->n; i++)
        if ((s = cur_str(c, &e->strs[i], &e->lens[i], what)))
          return s;
    } else {
      uint64_t n_bytes = e->n * vtype_bytes(e->elem_type); /* n <= 2^26 */
      if ((s = cur_need(c, n_bytes, what)))
        return s;
      e->raw = g->base + c->pos;
      c->pos += n_bytes;
    }
  } else {
    uint32_t n_bytes = vtype_bytes(e->type);
    if ((s = cur_need(c, n_bytes, what)))
      return s;
    e->raw = g->base + c->pos;
    c->pos += n_bytes;
  }
  if (s)
    return s;
  g->kv_map.slots[slot] = (uint32_t)(e - g->kv) + 1;
  return DQ_OK;
}

static dq_status parse_tensor(cursor *c, dq_gguf_tensor *t) {
  dq_gguf *g = c->g;
  dq_status s;
  uint64_t at = c->pos;
  if ((s = cur_str(c, &t->name, NULL, "tensor name")))
    return s;
  uint64_t slot = 0;
  if (map_find(&g->tensor_map, t->name, tensor_name, g, &slot) >= 0)
    return dq_error_set(c->err, DQ_ERR_CORRUPT,
                        "%s: duplicate tensor name '%s' at offset %llu",
                        g->path, t->name, (unsigned long long)at);
  char what[96];
  snprintf(what, sizeof what, "tensor '%.64s'", t->name);
  if ((s = cur_u32(c, &t->n_dims, what)))
    return s;
  if (t->n_dims == 0 || t->n_dims > DQ_GGUF_MAX_DIMS)
    return dq_error_set(c->err, DQ_ERR_LIMIT,
                        "%s: tensor '%s' at offset %llu: %u dimensions "
                        "(allowed 1..%u)",
                        g->path, t->name, (unsigned long long)at, t->n_dims,
                        DQ_GGUF_MAX_DIMS);
  t->n_elems = 1;
  for (uint32_t d = 0; d < 4; d++) {
    t->ne[d] = 1;
    if (d < t->n_dims && (s = cur_u64(c, &t->ne[d], what)))
      return s;
    if (t->ne[d] > (uint64_t)INT64_MAX ||
        dq_mul_overflow(t->n_elems, t->ne[d], &t->n_elems) ||
        t->n_elems > (uint64_t)INT64_MAX)
      return dq_error_set(c->err, DQ_ERR_CORRUPT,
                          "%s: tensor '%s' at offset %llu: element count "
                          "overflows",
                          g->path, t->name, (unsigned long long)at);
  }
  if ((s = cur_u32(c, &t->type, what)) ||
      (s = cur_u64(c, &t->offset, what)))
    return s;
  uint32_t be, bb;
  if (dq_gguf_type_size(t->type, &be, &bb) != DQ_OK)
    return dq_error_set(c->err, DQ_ERR_UNSUPPORTED,
                        "%s: tensor '%s' at offset %llu: unknown tensor type "
                        "%u",
                        g->path, t->name, (unsigned long long)at, t->type);
  if (t->ne[0] % be != 0)
    return dq_error_set(c->err, DQ_ERR_CORRUPT,
                        "%s: tensor '%s': row length %llu is not a multiple "
                        "of the %s block size %u",
                        g->path, t->name, (unsigned long long)t->ne[0],
                        type_table[t->type].name, be);
  if (dq_mul_overflow(t->n_elems / be, bb, &t->n_bytes))
    return dq_error_set(c->err, DQ_ERR_CORRUPT,
                        "%s: tensor '%s': byte size overflows", g->path,
                        t->name);
  g->tensor_map.slots[slot] = (uint32_t)(t - g->tensors) + 1;
  return DQ_OK;
}

/* Parses the whole header of g->base[0..size). */
static dq_status parse(dq_gguf *g, dq_error *err) {
  cursor c = {g, 0, err};
  dq_status s;
  uint32_t magic;
  if ((s = cur_u32(&c, &magic, "magic")))
    return s;
  if (magic != GGUF_MAGIC)
    return dq_error_set(err, DQ_ERR_FORMAT,
                        "%s: not a GGUF file (magic 0x%08x at offset 0)",
                        g->path, magic);
  if ((s = cur_u32(&c, &g->version, "version")))
    return s;
  if (g->version != 2 && g->version != 3)
    return dq_error_set(err, DQ_ERR_VERSION,
                        "%s: GGUF version %u at offset 4 is not supported "
                        "(2 and 3 are)",
                        g->path, g->version);
  if ((s = cur_u64(&c, &g->n_tensors, "tensor count")) ||
      (s = cur_u64(&c, &g->n_kv, "metadata count")))
    return s;
  if (g->n_tensors > DQ_GGUF_MAX_TENSORS)
    return dq_error_set(err, DQ_ERR_LIMIT,
                        "%s: tensor count %llu at offset 8 exceeds limit %u",
                        g->path, (unsigned long long)g->n_tensors,
                        DQ_GGUF_MAX_TENSORS);
  if (g->n_kv > DQ_GGUF_MAX_KV)
    return dq_error_set(err, DQ_ERR_LIMIT,
                        "%s: metadata count %llu at offset 16 exceeds limit %u",
                        g->path, (unsigned long long)g->n_kv, DQ_GGUF_MAX_KV);
  /* Every kv takes >= 8 + 4 bytes and every tensor info >= 8 + 4 + 8 + 4 + 8:
   * refuse counts the file cannot hold before allocating for them. */
  if ((s = cur_need(&c, g->n_kv * 12 + g->n_tensors * 32, "metadata and "
                                                          "tensor infos")))
    return s;
  g->kv = calloc(g->n_kv ? g->n_kv : 1, sizeof *g->kv);
  g->tensors = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *g->tensors);
  if (!g->kv || !g->tensors || map_init(&g->kv_map, g->n_kv) ||
      map_init(&g->tensor_map, g->n_tensors))
    return dq_error_set(err, DQ_ERR_NOMEM, "%s: header tables", g->path);

  for (uint64_t i = 0; i < g->n_kv; i++)
    if ((s = parse_kv(&c, &g->kv[i])))
      return s;

  g->alignment = DQ_GGUF_DEFAULT_ALIGNMENT;
  int64_t ai = dq_gguf_find_key(g, "general.alignment");
  if (ai >= 0) {
    const kv_entry *e = &g->kv[ai];
    uint32_t a = 0;
    if (e->type != DQ_GGUF_U32)
      return dq_error_set(err, DQ_ERR_FORMAT,
                          "%s: general.alignment has type %s, expected u32",
                          g->path, dq_gguf_vtype_name(e->type));
    memcpy(&a, e->raw, 4);
    if (a == 0 || (a & (a - 1)) != 0 || a > DQ_GGUF_MAX_ALIGNMENT)
      return dq_error_set(err, DQ_ERR_FORMAT,
                          "%s: general.alignment %u is not a power of two "
                          "<= %u",
                          g->path, a, DQ_GGUF_MAX_ALIGNMENT);
    g->alignment = a;
  }

  for (uint64_t i = 0; i < g->n_tensors; i++)
    if ((s = parse_tensor(&c, &g->tensors[i])))
      return s;

  /* Data section: after the header, padded to the alignment. */
  uint64_t pad = (g->alignment - c.pos % g->alignment) % g->alignment;
  g->data_offset = c.pos + pad;
  if (g->n_tensors > 0 && g->data_offset > g->size)
    return dq_error_set(err, DQ_ERR_CORRUPT,
                        "%s: data section at offset %llu exceeds file size "
                        "%llu",
                        g->path, (unsigned long long)g->data_offset,
                        (unsigned long long)g->size);
  for (uint64_t i = 0; i < g->n_tensors; i++) {
    dq_gguf_tensor *t = &g->tensors[i];
    uint64_t start, end;
    if (t->offset % g->alignment != 0)
      return dq_error_set(err, DQ_ERR_CORRUPT,
                          "%s: tensor '%s': data offset %llu is not a "
                          "multiple of the alignment %u",
                          g->path, t->name, (unsigned long long)t->offset,
                          g->alignment);
    if (dq_add_overflow(g->data_offset, t->offset, &start) ||
        dq_add_overflow(start, t->n_bytes, &end) || end > g->size)
      return dq_error_set(err, DQ_ERR_CORRUPT,
                          "%s: tensor '%s': data at offset %llu + %llu bytes "
                          "exceeds file size %llu",
                          g->path, t->name,
                          (unsigned long long)(g->data_offset + t->offset),
                          (unsigned long long)t->n_bytes,
                          (unsigned long long)g->size);
    t->data = g->base + start;
  }
  return DQ_OK;
}

static dq_status open_common(dq_gguf *g, dq_gguf **out, dq_error *err) {
  dq_status s = parse(g, err);
  if (s) {
    dq_gguf_close(g);
    return s;
  }
  *out = g;
  return DQ_OK;
}

dq_status dq_gguf_open_mem(const void *buf, size_t n_bytes, const char *name,
                           dq_gguf **out, dq_error *err) {
  if (!out || (!buf && n_bytes))
    return dq_error_set(err, DQ_ERR_ARG, "dq_gguf_open_mem: NULL argument");
  *out = NULL;
  dq_gguf *g = calloc(1, sizeof *g);
  if (!g || !(g->path = strdup(name ? name : "(memory)"))) {
    free(g);
    return dq_error_set(err, DQ_ERR_NOMEM, "gguf: handle");
  }
  g->fd = -1;
  g->base = buf;
  g->size = n_bytes;
  return open_common(g, out, err);
}

dq_status dq_gguf_open(const char *path, dq_gguf **out, dq_error *err) {
  dq_status s;
  int fd = -1;
  dq_gguf *g = NULL;
  if (!path || !out)
    return dq_error_set(err, DQ_ERR_ARG, "dq_gguf_open: NULL argument");
  *out = NULL;
  g = calloc(1, sizeof *g);
  if (g)
    g->fd = -1;
  if (!g || !(g->path = strdup(path))) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "%s: handle", path);
    goto fail;
  }
  fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    s = dq_error_set(err, errno == ENOENT ? DQ_ERR_NOTFOUND : DQ_ERR_IO,
                     "%s: %s", path, strerror(errno));
    goto fail;
  }
  if (!S_ISREG(st.st_mode) || st.st_size < 24) {
    s = dq_error_set(err, DQ_ERR_FORMAT,
                     "%s: not a GGUF file (%lld bytes, need at least 24)",
                     path, (long long)st.st_size);
    goto fail;
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) {
    s = dq_error_set(err, DQ_ERR_IO, "%s: mmap: %s", path, strerror(errno));
    goto fail;
  }
  g->fd = fd; /* kept for dq_gguf_read_data: the same file, even renamed */
  fd = -1;
  g->base = m;
  g->size = (uint64_t)st.st_size;
  g->mapped = true;
  return open_common(g, out, err);
fail:
  if (fd >= 0)
    close(fd);
  dq_gguf_close(g);
  return s;
}

dq_status dq_gguf_read_data(dq_gguf *g, uint64_t *n_bytes, dq_error *err) {
  *n_bytes = 0;
  if (!g->mapped)
    return dq_error_set(err, DQ_ERR_UNSUPPORTED,
                        "%s: not a file: its tensor data stays where it is",
                        g->path);
  if (g->data_copy || g->n_tensors == 0)
    return DQ_OK;
  uint64_t end = 0; /* past the last tensor, from the data section */
  for (uint64_t i = 0; i < g->n_tensors; i++) {
    uint64_t e = g->tensors[i].offset + g->tensors[i].n_bytes; /* checked */
    end = e > end ? e : end;
  }
  const size_t huge = (size_t)2 << 20;
  if (end > SIZE_MAX - huge)
    return dq_error_set(err, DQ_ERR_NOMEM, "%s: %llu bytes of tensor data",
                        g->path, (unsigned long long)end);
  size_t cap = ((size_t)end + huge - 1) / huge * huge;
  void *buf = NULL;
  if (posix_memalign(&buf, huge, cap) != 0)
    return dq_error_set(err, DQ_ERR_NOMEM,
                        "%s: cannot allocate %llu MB for its weights",
                        g->path, (unsigned long long)(cap >> 20));
#ifdef MADV_HUGEPAGE
  (void)madvise(buf, cap, MADV_HUGEPAGE); /* advice: no huge pages is fine */
#endif
  uint64_t done = 0;
  while (done < end) {
    size_t want = end - done > ((uint64_t)64 << 20) ? (size_t)64 << 20
                                                     : (size_t)(end - done);
    ssize_t r = pread(g->fd, (uint8_t *)buf + done, want,
                      (off_t)(g->data_offset + done));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      dq_status s = dq_error_set(
          err, DQ_ERR_IO, "%s: reading tensor data at byte %llu: %s", g->path,
          (unsigned long long)(g->data_offset + done),
          r < 0 ? strerror(errno) : "the file ended early (changed on disk?)");
      free(buf);
      return s;
    }
    done += (uint64_t)r;
  }
  g->data_copy = buf;
  for (uint64_t i = 0; i < g->n_tensors; i++)
    g->tensors[i].data = g->data_copy + g->tensors[i].offset;
  *n_bytes = end;
  return DQ_OK;
}

void dq_gguf_close(dq_gguf *g) {
  if (!g)
    return;
  free(g->data_copy);
  if (g->fd >= 0)
    close(g->fd);
  if (g->kv)
    for (uint64_t i = 0; i < g->n_kv; i++) {
      free(g->kv[i].strs);
      free(g->kv[i].lens);
    }
  free(g->kv);
  free(g->kv_map.slots);
  free(g->tensors);
  free(g->tensor_map.slots);
  while (g->arena) {
    struct arena_block *next = g->arena->next;
    free(g->arena);
    g->arena = next;
  }
  if (g->mapped)
    munmap((void *)g->base, (size_t)g->size);
  free(g->path);
  free(g);
}

const char *dq_gguf_errmsg(const dq_gguf *g) {
  return g ? dq_error_msg(&g->err) : "no gguf handle";
}
const dq_error *dq_gguf_error(const dq_gguf *g) { return &g->err; }
const char *dq_gguf_path(const dq_gguf *g) { return g->path; }
uint32_t dq_gguf_version(const dq_gguf *g) { return g->version; }
uint32_t dq_gguf_alignment(const dq_gguf *g) { return g->alignment; }
uint64_t dq_gguf_data_offset(const dq_gguf *g) { return g->data_offset; }
uint64_t dq_gguf_file_bytes(const dq_gguf *g) { return g->size; }

/* ---- metadata getters ---------------------------------------------------- */

uint64_t dq_gguf_n_kv(const dq_gguf *g) { return g->n_kv; }
const char *dq_gguf_kv_key(const dq_gguf *g, uint64_t i) {
  return i < g->n_kv ? g->kv[i].key : NULL;
}
dq_gguf_vtype dq_gguf_kv_type(const dq_gguf *g, uint64_t i) {
  return i < g->n_kv ? (dq_gguf_vtype)g->kv[i].type : (dq_gguf_vtype)-1;
}
int64_t dq_gguf_find_key(const dq_gguf *g, const char *key) {
  return key ? map_find(&g->kv_map, key, kv_name, g, NULL) : -1;
}
bool dq_gguf_has_key(const dq_gguf *g, const char *key) {
  return dq_gguf_find_key(g, key) >= 0;
}

/* Finds key with type `want` (or any type when want < 0). */
static dq_status lookup(dq_gguf *g, const char *key, int want,
                        const char *want_name, const kv_entry **out) {
  int64_t i = dq_gguf_find_key(g, key);
  if (i < 0)
    return dq_error_set(&g->err, DQ_ERR_NOTFOUND, "%s: key '%s' not found",
                        g->path, key ? key : "(null)");
  const kv_entry *e = &g->kv[i];
  if (want >= 0 && e->type != (uint32_t)want)
    return dq_error_set(&g->err, DQ_ERR_FORMAT,
                        "%s: key '%s' has type %s, expected %s", g->path, key,
                        dq_gguf_vtype_name(e->type), want_name);
  *out = e;
  return DQ_OK;
}

/* Reads scalar element of type t at p as an integer. Returns 0 if t is an
 * integer type (stored in *neg / *mag: value = neg ? -mag : mag). */
static int read_int(uint32_t t, const uint8_t *p, int64_t *sv, uint64_t *uv,
                    bool *is_signed) {
  uint8_t b[8] = {0};
  memcpy(b, p, vtype_bytes(t) ? vtype_bytes(t) : 1);
  uint64_t u = 0;
  for (int i = 7; i >= 0; i--)
    u = u << 8 | b[i];
  *is_signed = true;
  switch (t) {
  case DQ_GGUF_U8: case DQ_GGUF_U16: case DQ_GGUF_U32: case DQ_GGUF_U64:
    *is_signed = false;
    *uv = u;
    return 0;
  case DQ_GGUF_I8: *sv = (int8_t)u; return 0;
  case DQ_GGUF_I16: *sv = (int16_t)u; return 0;
  case DQ_GGUF_I32: *sv = (int32_t)u; return 0;
  case DQ_GGUF_I64: *sv = (int64_t)u; return 0;
  default: return -1;
  }
}

/* Integer value in [lo, hi] (as signed/unsigned 64-bit bounds). */
static dq_status get_int(dq_gguf *g, const char *key, const char *tname,
                         int64_t lo, uint64_t hi, int64_t *s_out,
                         uint64_t *u_out) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, -1, tname, &e);
  if (s)
    return s;
  int64_t sv = 0;
  uint64_t uv = 0;
  bool sg;
  if (e->type == DQ_GGUF_STRING || e->type == DQ_GGUF_ARRAY ||
      read_int(e->type, e->raw, &sv, &uv, &sg) != 0)
    return dq_error_set(&g->err, DQ_ERR_FORMAT,
                        "%s: key '%s' has type %s, expected %s", g->path, key,
                        dq_gguf_vtype_name(e->type), tname);
  bool ok = sg ? (sv >= lo && (sv < 0 || (uint64_t)sv <= hi))
               : (uv <= hi);
  if (!ok)
    return dq_error_set(&g->err, DQ_ERR_FORMAT,
                        "%s: key '%s' value %s%llu does not fit %s", g->path,
                        key, sg && sv < 0 ? "-" : "",
                        (unsigned long long)(sg ? (sv < 0 ? 0 - (uint64_t)sv
                                                          : (uint64_t)sv)
                                                : uv),
                        tname);
  *s_out = sg ? sv : (int64_t)uv;
  *u_out = sg ? (uint64_t)sv : uv;
  return DQ_OK;
}

dq_status dq_gguf_get_u32(dq_gguf *g, const char *key, uint32_t *out) {
  int64_t sv = 0;
  uint64_t uv = 0;
  dq_status s = get_int(g, key, "u32", 0, UINT32_MAX, &sv, &uv);
  if (!s)
    *out = (uint32_t)uv;
  return s;
}
dq_status dq_gguf_get_i32(dq_gguf *g, const char *key, int32_t *out) {
  int64_t sv = 0;
  uint64_t uv = 0;
  dq_status s = get_int(g, key, "i32", INT32_MIN, INT32_MAX, &sv, &uv);
  if (!s)
    *out = (int32_t)sv;
  return s;
}
dq_status dq_gguf_get_u64(dq_gguf *g, const char *key, uint64_t *out) {
  int64_t sv = 0;
  uint64_t uv = 0;
  dq_status s = get_int(g, key, "u64", 0, UINT64_MAX, &sv, &uv);
  if (!s)
    *out = uv;
  return s;
}
dq_status dq_gguf_get_i64(dq_gguf *g, const char *key, int64_t *out) {
  int64_t sv = 0;
  uint64_t uv = 0;
  dq_status s = get_int(g, key, "i64", INT64_MIN, INT64_MAX, &sv, &uv);
  if (!s)
    *out = sv;
  return s;
}

/* Element of numeric type t at p as a double; -1 when t is not numeric. */
static int read_num(uint32_t t, const uint8_t *p, double *out) {
  int64_t sv = 0;
  uint64_t uv = 0;
  bool sg;
  if (t == DQ_GGUF_F32) {
    float f;
    memcpy(&f, p, 4);
    *out = f;
    return 0;
  }
  if (t == DQ_GGUF_F64) {
    memcpy(out, p, 8);
    return 0;
  }
  if (read_int(t, p, &sv, &uv, &sg) != 0)
    return -1;
  *out = sg ? (double)sv : (double)uv;
  return 0;
}

dq_status dq_gguf_get_f32(dq_gguf *g, const char *key, float *out) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, -1, "f32", &e);
  if (s)
    return s;
  double d;
  if (e->type == DQ_GGUF_STRING || e->type == DQ_GGUF_ARRAY ||
      e->type == DQ_GGUF_BOOL || read_num(e->type, e->raw, &d) != 0)
    return dq_error_set(&g->err, DQ_ERR_FORMAT,
                        "%s: key '%s' has type %s, expected f32", g->path, key,
                        dq_gguf_vtype_name(e->type));
  *out = (float)d;
  return DQ_OK;
}

dq_status dq_gguf_get_bool(dq_gguf *g, const char *key, bool *out) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, DQ_GGUF_BOOL, "bool", &e);
  if (!s)
    *out = e->raw[0] != 0;
  return s;
}

dq_status dq_gguf_get_str(dq_gguf *g, const char *key, const char **out,
                          size_t *len) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, DQ_GGUF_STRING, "string", &e);
  if (s)
    return s;
  *out = e->str;
  if (len)
    *len = e->str_len;
  return DQ_OK;
}

dq_status dq_gguf_get_arr_info(dq_gguf *g, const char *key,
                               dq_gguf_vtype *elem_type, uint64_t *n) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, DQ_GGUF_ARRAY, "array", &e);
  if (s)
    return s;
  if (elem_type)
    *elem_type = (dq_gguf_vtype)e->elem_type;
  if (n)
    *n = e->n;
  return DQ_OK;
}

/* Looks up a numeric array of exactly n elements. */
static dq_status num_array(dq_gguf *g, const char *key, uint64_t n,
                           const char *want, const kv_entry **out) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, DQ_GGUF_ARRAY, "array", &e);
  if (s)
    return s;
  if (e->elem_type == DQ_GGUF_STRING || e->elem_type == DQ_GGUF_BOOL)
    return dq_error_set(&g->err, DQ_ERR_FORMAT,
                        "%s: key '%s' is an array of %s, expected %s",
                        g->path, key, dq_gguf_vtype_name(e->elem_type), want);
  if (e->n != n)
    return dq_error_set(&g->err, DQ_ERR_MISMATCH,
                        "%s: key '%s' has %llu elements, expected %llu",
                        g->path, key, (unsigned long long)e->n,
                        (unsigned long long)n);
  *out = e;
  return DQ_OK;
}

dq_status dq_gguf_get_arr_i32(dq_gguf *g, const char *key, int32_t *dst,
                              uint64_t n) {
  const kv_entry *e = NULL;
  dq_status s = num_array(g, key, n, "integers", &e);
  if (s)
    return s;
  uint32_t eb = vtype_bytes(e->elem_type);
  for (uint64_t i = 0; i < n; i++) {
    int64_t sv = 0;
    uint64_t uv = 0;
    bool sg;
    if (read_int(e->elem_type, e->raw + i * eb, &sv, &uv, &sg) != 0)
      return dq_error_set(&g->err, DQ_ERR_FORMAT,
                          "%s: key '%s' is an array of %s, expected integers",
                          g->path, key, dq_gguf_vtype_name(e->elem_type));
    if (sg ? (sv < INT32_MIN || sv > INT32_MAX) : uv > INT32_MAX)
      return dq_error_set(&g->err, DQ_ERR_FORMAT,
                          "%s: key '%s' element %llu does not fit i32",
                          g->path, key, (unsigned long long)i);
    dst[i] = sg ? (int32_t)sv : (int32_t)uv;
  }
  return DQ_OK;
}

dq_status dq_gguf_get_arr_f32(dq_gguf *g, const char *key, float *dst,
                              uint64_t n) {
  const kv_entry *e = NULL;
  dq_status s = num_array(g, key, n, "numbers", &e);
  if (s)
    return s;
  uint32_t eb = vtype_bytes(e->elem_type);
  if (e->elem_type == DQ_GGUF_F32) {
    memcpy(dst, e->raw, n * 4);
    return DQ_OK;
  }
  for (uint64_t i = 0; i < n; i++) {
    double d = 0;
    read_num(e->elem_type, e->raw + i * eb, &d);
    dst[i] = (float)d;
  }
  return DQ_OK;
}

dq_status dq_gguf_get_arr_str(dq_gguf *g, const char *key,
                              const char *const **strs, const uint32_t **lens,
                              uint64_t *n) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, DQ_GGUF_ARRAY, "array", &e);
  if (s)
    return s;
  if (e->elem_type != DQ_GGUF_STRING)
    return dq_error_set(&g->err, DQ_ERR_FORMAT,
                        "%s: key '%s' is an array of %s, expected string",
                        g->path, key, dq_gguf_vtype_name(e->elem_type));
  *strs = (const char *const *)e->strs;
  if (lens)
    *lens = e->lens;
  *n = e->n;
  return DQ_OK;
}

dq_status dq_gguf_get_arr_raw(dq_gguf *g, const char *key,
                              dq_gguf_vtype *elem_type, const void **data,
                              uint64_t *n) {
  const kv_entry *e = NULL;
  dq_status s = lookup(g, key, DQ_GGUF_ARRAY, "array", &e);
  if (s)
    return s;
  if (e->elem_type == DQ_GGUF_STRING)
    return dq_error_set(&g->err, DQ_ERR_FORMAT,
                        "%s: key '%s' is an array of string, expected numbers",
                        g->path, key);
  *elem_type = (dq_gguf_vtype)e->elem_type;
  *data = e->raw;
  *n = e->n;
  return DQ_OK;
}

/* ---- tensors ------------------------------------------------------------- */

uint64_t dq_gguf_n_tensors(const dq_gguf *g) { return g->n_tensors; }

const dq_gguf_tensor *dq_gguf_tensor_at(const dq_gguf *g, uint64_t i) {
  return i < g->n_tensors ? &g->tensors[i] : NULL;
}

const dq_gguf_tensor *dq_gguf_tensor_get(const dq_gguf *g, const char *name) {
  int64_t i = name ? map_find(&g->tensor_map, name, tensor_name, g, NULL) : -1;
  return i >= 0 ? &g->tensors[i] : NULL;
}

dq_status dq_gguf_find_tensor(dq_gguf *g, const char *name,
                              const dq_gguf_tensor **out) {
  const dq_gguf_tensor *t = dq_gguf_tensor_get(g, name);
  if (!t)
    return dq_error_set(&g->err, DQ_ERR_NOTFOUND, "%s: tensor '%s' not found",
                        g->path, name ? name : "(null)");
  *out = t;
  return DQ_OK;
}
