/*
 * test_gguf.c - the GGUF reader against files built by tests/engine_tok/
 * gguf_writer.h: every value type and typed getter, tensor lookup, each
 * refusal a hostile file should meet (with the message naming the field),
 * and a deterministic mutation run (truncation at every offset of a small
 * file, byte flips, random multi-byte damage) that must never crash and
 * must fail cleanly on every truncation. Also dq_gguf_read_data (the
 * tensor data read into memory) on files.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "gguf_writer.h"
#include "test.h"

/* A small valid file: every scalar type, arrays, three tensors. */
static uint8_t *build_sample(size_t *len) {
  gw w;
  gw_init(&w);
  gw_add_str(&w, "general.architecture", "llama");
  gw_add_u32(&w, "llama.block_count", 2);
  gw_add_i32(&w, "test.neg", -5);
  gw_add_f32(&w, "test.eps", 1e-5f);
  gw_add_bool(&w, "test.flag", 1);
  /* u8, i16, u64, i64, f64 scalars by hand */
  gw_key(&w, "test.u8", GW_U8);
  uint8_t u8 = 200;
  gw_put(&w.kv, &u8, 1);
  gw_key(&w, "test.i16", GW_I16);
  uint8_t i16[2] = {0xfe, 0xff}; /* -2 */
  gw_put(&w.kv, i16, 2);
  gw_key(&w, "test.u64", GW_U64);
  gw_u64le(&w.kv, 5000000000ull);
  gw_key(&w, "test.i64", GW_I64);
  gw_u64le(&w.kv, (uint64_t)-7);
  gw_key(&w, "test.f64", GW_F64);
  double f64 = 0.25;
  uint64_t f64u;
  memcpy(&f64u, &f64, 8);
  gw_u64le(&w.kv, f64u);
  const char *toks[] = {"a", "bc", "", "d\xc3\xa9"};
  gw_add_arr_str(&w, "test.strs", toks, 4);
  float fs[3] = {0.5f, -1.0f, 2.0f};
  gw_add_arr_f32(&w, "test.floats", fs, 3);
  int32_t is[3] = {1, -2, 3};
  gw_add_arr_i32(&w, "test.ints", is, 3);

  float t0[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint64_t ne0[2] = {4, 2};
  gw_add_tensor(&w, "tok_embd.weight", 0, 2, ne0, t0, sizeof t0);
  uint8_t q[18 * 2];
  for (size_t i = 0; i < sizeof q; i++)
    q[i] = (uint8_t)i;
  uint64_t ne1[1] = {64};
  gw_add_tensor(&w, "blk.0.attn_q.weight", 2, 1, ne1, q, sizeof q);
  uint16_t h[3] = {0x3c00, 0x4000, 0xc000};
  uint64_t ne2[3] = {3, 1, 1};
  gw_add_tensor(&w, "output_norm.weight", 1, 3, ne2, h, sizeof h);
  uint8_t *buf = gw_finish(&w, len);
  gw_free(&w);
  return buf;
}

static void test_valid(void) {
  size_t len;
  uint8_t *buf = build_sample(&len);
  dq_gguf *g = NULL;
  dq_error err = {0};
  CHECK_OK(dq_gguf_open_mem(buf, len, "sample.gguf", &g, &err),
           dq_error_msg(&err));
  if (!g) {
    free(buf);
    return;
  }
  CHECK_EQ_INT(dq_gguf_version(g), 3);
  CHECK_EQ_INT(dq_gguf_alignment(g), 32);
  CHECK_EQ_INT(dq_gguf_n_kv(g), 13);
  CHECK_EQ_INT(dq_gguf_n_tensors(g), 3);
  CHECK_EQ_INT(dq_gguf_data_offset(g) % 32, 0);
  CHECK_EQ_STR(dq_gguf_kv_key(g, 0), "general.architecture");
  CHECK_EQ_INT(dq_gguf_kv_type(g, 0), DQ_GGUF_STRING);

  const char *s = NULL;
  size_t sl = 0;
  CHECK_OK(dq_gguf_get_str(g, "general.architecture", &s, &sl),
           dq_gguf_errmsg(g));
  CHECK_EQ_STR(s, "llama");
  CHECK_EQ_INT(sl, 5);
  uint32_t u32 = 0;
  CHECK_OK(dq_gguf_get_u32(g, "llama.block_count", &u32), dq_gguf_errmsg(g));
  CHECK_EQ_INT(u32, 2);
  CHECK_OK(dq_gguf_get_u32(g, "test.u8", &u32), dq_gguf_errmsg(g));
  CHECK_EQ_INT(u32, 200);
  int32_t i32 = 0;
  CHECK_OK(dq_gguf_get_i32(g, "test.neg", &i32), dq_gguf_errmsg(g));
  CHECK_EQ_INT(i32, -5);
  CHECK_OK(dq_gguf_get_i32(g, "test.i16", &i32), dq_gguf_errmsg(g));
  CHECK_EQ_INT(i32, -2);
  uint64_t u64 = 0;
  CHECK_OK(dq_gguf_get_u64(g, "test.u64", &u64), dq_gguf_errmsg(g));
  CHECK(u64 == 5000000000ull);
  int64_t i64 = 0;
  CHECK_OK(dq_gguf_get_i64(g, "test.i64", &i64), dq_gguf_errmsg(g));
  CHECK_EQ_INT(i64, -7);
  float f = 0;
  CHECK_OK(dq_gguf_get_f32(g, "test.eps", &f), dq_gguf_errmsg(g));
  CHECK(f == 1e-5f);
  CHECK_OK(dq_gguf_get_f32(g, "test.f64", &f), dq_gguf_errmsg(g));
  CHECK(f == 0.25f);
  bool b = false;
  CHECK_OK(dq_gguf_get_bool(g, "test.flag", &b), dq_gguf_errmsg(g));
  CHECK(b);

  /* errors: missing, mistyped, out of range */
  CHECK_EQ_INT(dq_gguf_get_u32(g, "nope", &u32), DQ_ERR_NOTFOUND);
  CHECK(strstr(dq_gguf_errmsg(g), "sample.gguf") &&
        strstr(dq_gguf_errmsg(g), "'nope'"));
  CHECK_EQ_INT(dq_gguf_get_u32(g, "general.architecture", &u32),
               DQ_ERR_FORMAT);
  CHECK(strstr(dq_gguf_errmsg(g), "has type string, expected u32"));
  CHECK_EQ_INT(dq_gguf_get_u32(g, "test.neg", &u32), DQ_ERR_FORMAT);
  CHECK_EQ_INT(dq_gguf_get_u32(g, "test.u64", &u32), DQ_ERR_FORMAT);
  CHECK_EQ_INT(dq_gguf_get_str(g, "llama.block_count", &s, NULL),
               DQ_ERR_FORMAT);
  CHECK_EQ_INT(dq_gguf_get_bool(g, "llama.block_count", &b), DQ_ERR_FORMAT);
  CHECK(!dq_gguf_has_key(g, "nope"));
  CHECK(dq_gguf_has_key(g, "test.strs"));

  const char *const *strs = NULL;
  const uint32_t *lens = NULL;
  uint64_t n = 0;
  CHECK_OK(dq_gguf_get_arr_str(g, "test.strs", &strs, &lens, &n),
           dq_gguf_errmsg(g));
  CHECK_EQ_INT(n, 4);
  if (n == 4) {
    CHECK_EQ_STR(strs[1], "bc");
    CHECK_EQ_STR(strs[2], "");
    CHECK_EQ_STR(strs[3], "d\xc3\xa9");
    CHECK_EQ_INT(lens[3], 3);
  }
  dq_gguf_vtype et;
  CHECK_OK(dq_gguf_get_arr_info(g, "test.floats", &et, &n), dq_gguf_errmsg(g));
  CHECK_EQ_INT(et, DQ_GGUF_F32);
  CHECK_EQ_INT(n, 3);
  float fo[3] = {0};
  CHECK_OK(dq_gguf_get_arr_f32(g, "test.floats", fo, 3), dq_gguf_errmsg(g));
  CHECK(fo[0] == 0.5f && fo[1] == -1.0f && fo[2] == 2.0f);
  int32_t io[3] = {0};
  CHECK_OK(dq_gguf_get_arr_i32(g, "test.ints", io, 3), dq_gguf_errmsg(g));
  CHECK(io[0] == 1 && io[1] == -2 && io[2] == 3);
  CHECK_OK(dq_gguf_get_arr_f32(g, "test.ints", fo, 3), dq_gguf_errmsg(g));
  CHECK(fo[1] == -2.0f);
  CHECK_EQ_INT(dq_gguf_get_arr_i32(g, "test.ints", io, 2), DQ_ERR_MISMATCH);
  CHECK_EQ_INT(dq_gguf_get_arr_i32(g, "test.strs", io, 4), DQ_ERR_FORMAT);
  CHECK_EQ_INT(dq_gguf_get_arr_str(g, "test.ints", &strs, NULL, &n),
               DQ_ERR_FORMAT);
  CHECK(strstr(dq_gguf_errmsg(g), "array of i32, expected string"));

  const dq_gguf_tensor *t = dq_gguf_tensor_get(g, "tok_embd.weight");
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ_INT(t->type, DQ_GGUF_TYPE_F32);
    CHECK_EQ_INT(t->n_dims, 2);
    CHECK_EQ_INT(t->ne[0], 4);
    CHECK_EQ_INT(t->ne[1], 2);
    CHECK_EQ_INT(t->ne[2], 1);
    CHECK_EQ_INT(t->n_elems, 8);
    CHECK_EQ_INT(t->n_bytes, 32);
    float v[8];
    memcpy(v, t->data, sizeof v);
    CHECK(v[0] == 1 && v[7] == 8);
    CHECK_EQ_INT((const uint8_t *)t->data - buf, dq_gguf_data_offset(g));
  }
  t = dq_gguf_tensor_get(g, "blk.0.attn_q.weight");
  CHECK(t && t->type == DQ_GGUF_TYPE_Q4_0 && t->n_bytes == 36 &&
        t->offset == 32 && ((const uint8_t *)t->data)[35] == 35);
  t = dq_gguf_tensor_get(g, "output_norm.weight");
  CHECK(t && t->type == DQ_GGUF_TYPE_F16 && t->n_bytes == 6 &&
        t->n_dims == 3 && t->offset == 96);
  CHECK(dq_gguf_tensor_get(g, "missing") == NULL);
  CHECK_EQ_INT(dq_gguf_find_tensor(g, "missing", &t), DQ_ERR_NOTFOUND);
  CHECK(strstr(dq_gguf_errmsg(g), "tensor 'missing' not found"));
  CHECK(dq_gguf_tensor_at(g, 3) == NULL);
  CHECK_EQ_STR(dq_gguf_tensor_at(g, 1)->name, "blk.0.attn_q.weight");
  dq_gguf_close(g);

  /* the same bytes through a real file and mmap */
  char path[] = "/tmp/dq_test_gguf_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) {
    CHECK(write(fd, buf, len) == (ssize_t)len);
    close(fd);
    g = NULL;
    CHECK_OK(dq_gguf_open(path, &g, &err), dq_error_msg(&err));
    if (g) {
      t = dq_gguf_tensor_get(g, "output_norm.weight");
      CHECK(t && ((const uint16_t *)t->data)[1] == 0x4000);
      CHECK_EQ_STR(dq_gguf_path(g), path);
    }
    dq_gguf_close(g);
    unlink(path);
  }
  CHECK_EQ_INT(dq_gguf_open("/nonexistent/x.gguf", &g, &err),
               DQ_ERR_NOTFOUND);
  CHECK(g == NULL && strstr(dq_error_msg(&err), "/nonexistent/x.gguf"));
  dq_gguf_close(NULL);
  free(buf);
}

static void test_types(void) {
  uint32_t be = 0, bb = 0;
  CHECK_EQ_STR(dq_gguf_type_name(12), "q4_K");
  CHECK_OK(dq_gguf_type_size(12, &be, &bb), "");
  CHECK(be == 256 && bb == 144);
  CHECK_OK(dq_gguf_type_size(14, &be, &bb), "");
  CHECK(be == 256 && bb == 210);
  CHECK_OK(dq_gguf_type_size(8, &be, &bb), "");
  CHECK(be == 32 && bb == 34);
  CHECK_OK(dq_gguf_type_size(3, &be, &bb), "");
  CHECK(be == 32 && bb == 20);
  CHECK_OK(dq_gguf_type_size(30, &be, &bb), "");
  CHECK(be == 1 && bb == 2);
  CHECK(dq_gguf_type_name(4) == NULL);
  CHECK(dq_gguf_type_name(1000) == NULL);
  CHECK_EQ_INT(dq_gguf_type_size(36, &be, &bb), DQ_ERR_UNSUPPORTED);
  CHECK_EQ_STR(dq_gguf_vtype_name(DQ_GGUF_ARRAY), "array");
  CHECK_EQ_STR(dq_gguf_vtype_name(99), "unknown");
}

/* Expects open to fail with `code` and a message containing `needle`. */
static void expect_fail(const uint8_t *buf, size_t len, dq_status code,
                        const char *needle, int line) {
  uint8_t *copy = malloc(len ? len : 1);
  memcpy(copy, buf, len);
  dq_gguf *g = NULL;
  dq_error err = {0};
  dq_status s = dq_gguf_open_mem(copy, len, "bad.gguf", &g, &err);
  CHECK_MSG(s == code && g == NULL, "line %d: status %d (%s), expected %d",
            line, (int)s, dq_error_msg(&err), (int)code);
  CHECK_MSG(strstr(dq_error_msg(&err), needle) &&
                strstr(dq_error_msg(&err), "bad.gguf"),
            "line %d: message \"%s\" lacks \"%s\"", line, dq_error_msg(&err),
            needle);
  dq_gguf_close(g);
  free(copy);
}
#define EXPECT_FAIL(buf, len, code, needle)                                    \
  expect_fail(buf, len, code, needle, __LINE__)

static void finish_expect(gw *w, dq_status code, const char *needle,
                          int line) {
  size_t len;
  uint8_t *buf = gw_finish(w, &len);
  expect_fail(buf, len, code, needle, line);
  free(buf);
  gw_free(w);
}

static void test_refusals(void) {
  size_t len;
  uint8_t *buf = build_sample(&len);
  uint8_t *b = malloc(len);

  memcpy(b, buf, len);
  b[0] = 'X';
  EXPECT_FAIL(b, len, DQ_ERR_FORMAT, "not a GGUF file");
  memcpy(b, buf, len);
  b[4] = 1;
  EXPECT_FAIL(b, len, DQ_ERR_VERSION, "version 1");
  b[4] = 4;
  EXPECT_FAIL(b, len, DQ_ERR_VERSION, "version 4");
  memcpy(b, buf, len);
  b[8 + 7] = 0x40; /* tensor count huge */
  EXPECT_FAIL(b, len, DQ_ERR_LIMIT, "tensor count");
  memcpy(b, buf, len);
  b[8] = 0xff;
  b[9] = 0xff; /* 65535 tensors: under the limit, more than the file holds */
  EXPECT_FAIL(b, len, DQ_ERR_CORRUPT, "exceeds remaining file size");
  memcpy(b, buf, len);
  b[16 + 3] = 0x01; /* kv count 2^24 */
  EXPECT_FAIL(b, len, DQ_ERR_LIMIT, "metadata count");
  memcpy(b, buf, len);
  b[24 + 6] = 0x01; /* first key length 2^48 */
  EXPECT_FAIL(b, len, DQ_ERR_LIMIT, "string length");
  memcpy(b, buf, len);
  b[24] = 0xf0; /* first key length 240: runs into other bytes, still fits */
  {
    dq_gguf *g = NULL;
    dq_error err = {0};
    CHECK(dq_gguf_open_mem(b, len, "bad.gguf", &g, &err) != DQ_OK);
    dq_gguf_close(g);
  }
  free(b);
  /* truncated right after the magic+version */
  EXPECT_FAIL(buf, 10, DQ_ERR_CORRUPT, "tensor count at offset 8");
  EXPECT_FAIL(buf, 0, DQ_ERR_CORRUPT, "magic at offset 0");
  free(buf);

  gw w;
  float data[64] = {0};
  uint64_t ne[5] = {4, 1, 1, 1, 1};
  const char *one[] = {"x"};

  gw_init(&w); /* nested array */
  gw_key(&w, "nested", GW_ARRAY);
  gw_u32le(&w.kv, GW_ARRAY);
  gw_u64le(&w.kv, 1);
  finish_expect(&w, DQ_ERR_UNSUPPORTED, "nested arrays", __LINE__);

  gw_init(&w); /* array of 2^40 u32 */
  gw_key(&w, "big", GW_ARRAY);
  gw_u32le(&w.kv, GW_U32);
  gw_u64le(&w.kv, 1ull << 40);
  finish_expect(&w, DQ_ERR_LIMIT, "array length", __LINE__);

  gw_init(&w); /* array of 1000 u32 with 4 bytes present */
  gw_key(&w, "short", GW_ARRAY);
  gw_u32le(&w.kv, GW_U32);
  gw_u64le(&w.kv, 1000);
  gw_u32le(&w.kv, 0);
  finish_expect(&w, DQ_ERR_CORRUPT, "'short'", __LINE__);

  gw_init(&w); /* 100000 strings, none present */
  gw_key(&w, "strs", GW_ARRAY);
  gw_u32le(&w.kv, GW_STRING);
  gw_u64le(&w.kv, 100000);
  finish_expect(&w, DQ_ERR_CORRUPT, "exceeds remaining file size", __LINE__);

  gw_init(&w); /* unknown value type */
  gw_key(&w, "weird", 13);
  finish_expect(&w, DQ_ERR_FORMAT, "unknown value type 13", __LINE__);

  gw_init(&w); /* duplicate key */
  gw_add_u32(&w, "k", 1);
  gw_add_u32(&w, "k", 2);
  finish_expect(&w, DQ_ERR_CORRUPT, "duplicate metadata key 'k'", __LINE__);

  gw_init(&w); /* duplicate tensor */
  gw_add_tensor(&w, "t", 0, 1, ne, data, 16);
  gw_add_tensor(&w, "t", 0, 1, ne, data, 16);
  finish_expect(&w, DQ_ERR_CORRUPT, "duplicate tensor name 't'", __LINE__);

  gw_init(&w); /* unknown tensor type */
  gw_add_tensor(&w, "t", 36, 1, ne, data, 16);
  finish_expect(&w, DQ_ERR_UNSUPPORTED, "tensor 't'", __LINE__);

  gw_init(&w); /* too many dims */
  gw_add_tensor(&w, "t5", 0, 5, ne, data, 16);
  finish_expect(&w, DQ_ERR_LIMIT, "5 dimensions", __LINE__);

  gw_init(&w); /* row not a multiple of the q4_0 block */
  gw_add_tensor(&w, "q", 2, 1, ne, data, 16);
  finish_expect(&w, DQ_ERR_CORRUPT, "block size 32", __LINE__);

  gw_init(&w); /* element count overflow */
  {
    uint64_t big[2] = {1ull << 40, 1ull << 40};
    gw_add_tensor(&w, "huge", 0, 2, big, data, 16);
  }
  finish_expect(&w, DQ_ERR_CORRUPT, "overflows", __LINE__);

  gw_init(&w); /* data past the end */
  {
    uint64_t ne1[1] = {1024};
    gw_add_tensor(&w, "long", 0, 1, ne1, data, 16);
  }
  finish_expect(&w, DQ_ERR_CORRUPT, "exceeds file size", __LINE__);

  gw_init(&w); /* misaligned tensor offset (patched after writing) */
  gw_add_tensor(&w, "a", 0, 1, ne, data, 16);
  w.ti.p[w.ti.len - 8] = 4; /* offset 4 */
  finish_expect(&w, DQ_ERR_CORRUPT, "not a multiple of the alignment",
                __LINE__);

  gw_init(&w); /* bad alignment value */
  gw_add_u32(&w, "general.alignment", 48);
  finish_expect(&w, DQ_ERR_FORMAT, "general.alignment 48", __LINE__);
  gw_init(&w);
  gw_add_str(&w, "general.alignment", "x");
  finish_expect(&w, DQ_ERR_FORMAT, "general.alignment has type string",
                __LINE__);

  /* a custom alignment is honoured */
  gw_init(&w);
  w.alignment = 64;
  gw_add_u32(&w, "general.alignment", 64);
  gw_add_arr_str(&w, "x", one, 1);
  gw_add_tensor(&w, "a", 0, 1, ne, data, 16);
  gw_add_tensor(&w, "b", 0, 1, ne, data, 16);
  {
    uint8_t *fb = gw_finish(&w, &len);
    dq_gguf *g = NULL;
    dq_error err = {0};
    CHECK_OK(dq_gguf_open_mem(fb, len, "al.gguf", &g, &err),
             dq_error_msg(&err));
    if (g) {
      CHECK_EQ_INT(dq_gguf_alignment(g), 64);
      CHECK_EQ_INT(dq_gguf_data_offset(g) % 64, 0);
      CHECK_EQ_INT(dq_gguf_tensor_get(g, "b")->offset, 64);
    }
    dq_gguf_close(g);
    free(fb);
    gw_free(&w);
  }
}

/* xorshift64*: a fixed-seed generator so the mutation run is reproducible */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static int try_open(const uint8_t *src, size_t len) {
  uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees overreads */
  memcpy(copy, src, len);
  dq_gguf *g = NULL;
  dq_error err = {0};
  dq_status s = dq_gguf_open_mem(copy, len, "mut.gguf", &g, &err);
  if (s == DQ_OK) {
    /* walk everything the reader exposes */
    for (uint64_t i = 0; i < dq_gguf_n_kv(g); i++) {
      const char *k = dq_gguf_kv_key(g, i);
      uint32_t u;
      const char *str;
      const char *const *strs;
      uint64_t n;
      dq_gguf_get_u32(g, k, &u);
      dq_gguf_get_str(g, k, &str, NULL);
      dq_gguf_get_arr_str(g, k, &strs, NULL, &n);
    }
    for (uint64_t i = 0; i < dq_gguf_n_tensors(g); i++) {
      const dq_gguf_tensor *t = dq_gguf_tensor_at(g, i);
      volatile uint8_t sink = 0;
      if (t->n_bytes)
        sink ^= ((const uint8_t *)t->data)[t->n_bytes - 1];
      (void)sink;
    }
  } else {
    CHECK(g == NULL && dq_error_msg(&err)[0] != '\0');
  }
  dq_gguf_close(g);
  free(copy);
  return s == DQ_OK;
}

static void test_mutations(void) {
  size_t len;
  uint8_t *buf = build_sample(&len);
  uint64_t tensor_end = 0;
  {
    dq_gguf *g = NULL;
    dq_error err = {0};
    dq_gguf_open_mem(buf, len, "m", &g, &err);
    if (g) {
      const dq_gguf_tensor *t = dq_gguf_tensor_get(g, "output_norm.weight");
      tensor_end = dq_gguf_data_offset(g) + t->offset + t->n_bytes;
    }
    dq_gguf_close(g);
  }
  CHECK(tensor_end == len);
  /* Every truncation must fail: the last tensor ends at the last byte. */
  int n_ok = 0;
  for (size_t cut = 0; cut < len; cut++)
    n_ok += try_open(buf, cut);
  CHECK_EQ_INT(n_ok, 0);

  /* Single-byte flips over the header: no crash, either outcome. */
  uint8_t *m = malloc(len);
  size_t hdr = len < 4096 ? len : 4096;
  static const uint8_t vals[] = {0x00, 0xff, 0x80, 0x7f, 0x01, 0x20};
  for (size_t i = 0; i < hdr; i++)
    for (size_t v = 0; v < sizeof vals; v++) {
      memcpy(m, buf, len);
      m[i] = vals[v];
      try_open(m, len);
      m[i] = (uint8_t)(buf[i] ^ 0x55);
      try_open(m, len);
    }
  /* Random multi-byte damage plus random truncation. */
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int iter = 0; iter < 20000; iter++) {
    memcpy(m, buf, len);
    int n_flip = 1 + (int)(rng_next(&seed) % 6);
    for (int k = 0; k < n_flip; k++)
      m[rng_next(&seed) % len] = (uint8_t)rng_next(&seed);
    size_t cut = (rng_next(&seed) % 4) ? len : rng_next(&seed) % len;
    try_open(m, cut);
  }
  free(m);
  free(buf);
}

/* The sample written to a file of its own (caller frees and unlinks). */
static char *write_sample(void) {
  size_t len;
  uint8_t *buf = build_sample(&len);
  static int seq;
  char *path = malloc(256);
  snprintf(path, 256, "/tmp/dq_test_gguf_%d_%d.gguf", (int)getpid(), seq++);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(buf, 1, len, f) == len);
    fclose(f);
  }
  free(buf);
  return path;
}

/* dq_gguf_read_data: every tensor's bytes the mapping's, at their
 * alignment, outside the mapping; the file it reads is the one opened
 * (unlinked and replaced by then here); a file cut short meanwhile is an
 * I/O error naming it, the handle as before; memory handles refuse. */
static void test_read_data(void) {
  char *path = write_sample();
  dq_gguf *g = NULL, *ref = NULL;
  dq_error err = {0};
  CHECK_OK(dq_gguf_open(path, &g, &err), dq_error_msg(&err));
  CHECK_OK(dq_gguf_open(path, &ref, &err), dq_error_msg(&err));
  /* replace the path with another file: g reads the one it opened */
  unlink(path);
  FILE *f = fopen(path, "wb");
  if (f) {
    fputs("not the model", f);
    fclose(f);
  }
  uint64_t n = 0;
  if (g && ref) {
    CHECK_OK(dq_gguf_read_data(g, &n, &err), dq_error_msg(&err));
    uint64_t want = 0;
    for (uint64_t i = 0; i < dq_gguf_n_tensors(ref); i++) {
      const dq_gguf_tensor *a = dq_gguf_tensor_at(g, i);
      const dq_gguf_tensor *b = dq_gguf_tensor_at(ref, i);
      CHECK(a->data != b->data);
      CHECK(memcmp(a->data, b->data, b->n_bytes) == 0);
      CHECK_EQ_INT((uintptr_t)a->data % dq_gguf_alignment(g), 0);
      want = b->offset + b->n_bytes > want ? b->offset + b->n_bytes : want;
    }
    CHECK_EQ_INT(n, want);
    /* a second call reads nothing new */
    const void *d0 = dq_gguf_tensor_at(g, 0)->data;
    CHECK_OK(dq_gguf_read_data(g, &n, &err), dq_error_msg(&err));
    CHECK(dq_gguf_tensor_at(g, 0)->data == d0);
  }
  dq_gguf_close(g);
  dq_gguf_close(ref);
  unlink(path);
  free(path);

  /* cut short after opening */
  path = write_sample();
  g = NULL;
  CHECK_OK(dq_gguf_open(path, &g, &err), dq_error_msg(&err));
  if (g) {
    const void *d0 = dq_gguf_tensor_at(g, 2)->data;
    CHECK(truncate(path, (off_t)(dq_gguf_data_offset(g) + 8)) == 0);
    dq_status s = dq_gguf_read_data(g, &n, &err);
    CHECK_EQ_INT(s, DQ_ERR_IO);
    CHECK_MSG(strstr(err.msg, path) && strstr(err.msg, "ended early"),
              "message: %s", err.msg);
    CHECK(dq_gguf_tensor_at(g, 2)->data == d0);
  }
  dq_gguf_close(g);
  unlink(path);
  free(path);

  size_t len;
  uint8_t *buf = build_sample(&len);
  g = NULL;
  CHECK_OK(dq_gguf_open_mem(buf, len, "sample.gguf", &g, &err),
           dq_error_msg(&err));
  if (g)
    CHECK_EQ_INT(dq_gguf_read_data(g, &n, &err), DQ_ERR_UNSUPPORTED);
  dq_gguf_close(g);
  free(buf);
}

int main(void) {
  test_read_data();
  test_types();
  test_valid();
  test_refusals();
  test_mutations();
  return TEST_EXIT();
}
