/*
 * synth_gguf.c - dq_synth_gguf: writes a llama-architecture GGUF v3 file with
 * random weights in the shape of a known model, so the engine can be
 * benchmarked on a machine that has no model files and no network (the GPU
 * machines). It is a benchmark fixture, not a model: its outputs are noise.
 *
 *   dq_synth_gguf --shape NAME --type TYPE [--layers N] [--seed S] OUT.gguf
 *
 * What goes in the file:
 *   - the hyperparameters the loader (engine/model.c) reads for "llama";
 *   - a synthetic SentencePiece vocabulary (<unk>, <s>, </s>, the 256 <0xXX>
 *     byte tokens, then filler words "▁w<N>") so that `docqa generate` can
 *     tokenize any prompt (as byte tokens); `docqa bench engine` alone
 *     would run on token ids without one;
 *   - token_embd, output_norm, output (absent with tied embeddings) and per
 *     layer attn_norm, attn_q/k/v/output, ffn_norm, ffn_gate/up/down.
 * Matrices are in --type; for q4_k, output.weight is q6_k (as llama.cpp's
 * Q4_K_M). A matrix whose row length is not a multiple of the type's block
 * (smollm2's 576 columns in a K-quant) falls back to q8_0, as llama.cpp falls
 * back to another type; the tool says so on stderr. Norms are f32.
 *
 * Values: matrices ~ N(0, 0.02), norms 1 + N(0, 0.02). Quantizing every block
 * of an 8B model would take minutes, so each type has a pool of POOL_UNITS
 * random units (one block; 32 elements for f16/f32) quantized once with
 * kernels' own dq_quantize_row and checked to decode to finite values; each
 * tensor is a pseudo-random sequence of pool units (xorshift64*, seeded per
 * tensor from --seed). Same arguments, same bytes.
 *
 * Streaming: metadata and tensor infos (a few MB with the vocabulary) are
 * built in memory; tensor data goes through one OUT_BUF_BYTES buffer, so the
 * 8.5 GB q8_0 8B file needs a few MB of memory. Offsets are multiples of
 * ALIGNMENT from the data section, which starts at a multiple of ALIGNMENT.
 * A failed write removes the partial file (when OUT is a regular file).
 */
#include "kernels.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ALIGNMENT 32u
#define POOL_BITS 12 /* pool indices are the top bits of a xorshift draw */
#define POOL_UNITS (1u << POOL_BITS)
#define OUT_BUF_BYTES (8u << 20)
#define MAX_LAYERS 512 /* the loader's DQ_MAX_LAYERS */
#define N_SPECIAL 3    /* <unk>, <s>, </s> */
#define WEIGHT_STD 0.02f

typedef struct shape {
  const char *name;
  int n_layer, n_embd, n_ff, n_head, n_head_kv, head_dim, n_vocab, n_ctx;
  float rope_base, rms_eps;
  int tied; /* no output.weight: the output reuses token_embd */
} shape;

static const shape shapes[] = {
    {"llama3-8b", 32, 4096, 14336, 32, 8, 128, 128256, 131072, 500000.0f,
     1e-5f, 0},
    {"smollm2-135m", 30, 576, 1536, 9, 3, 64, 49152, 8192, 100000.0f, 1e-5f,
     1},
    {"tiny", 2, 256, 768, 4, 2, 64, 1024, 2048, 10000.0f, 1e-5f, 0},
};

/* --type names; `output` is output.weight's type, `ftype` llama.cpp's
 * general.file_type (LLAMA_FTYPE_MOSTLY_*), informational only. */
static const struct {
  const char *name;
  int type, output;
  uint32_t ftype;
} types[] = {
    {"q4_k", DQ_TYPE_Q4_K, DQ_TYPE_Q6_K, 15}, /* Q4_K_M */
    {"q6_k", DQ_TYPE_Q6_K, DQ_TYPE_Q6_K, 18},
    {"q8_0", DQ_TYPE_Q8_0, DQ_TYPE_Q8_0, 7},
    {"q4_0", DQ_TYPE_Q4_0, DQ_TYPE_Q4_0, 2},
    {"q4_1", DQ_TYPE_Q4_1, DQ_TYPE_Q4_1, 3},
    {"f16", DQ_TYPE_F16, DQ_TYPE_F16, 1},
};

/* GGUF metadata value types, as on disk */
enum { V_U32 = 4, V_I32 = 5, V_F32 = 6, V_BOOL = 7, V_STRING = 8, V_ARRAY = 9 };

/* ---- random numbers ------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* xorshift64*: the per-unit index stream (state never 0). */
static uint64_t xorshift(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545f4914f6cdd1du;
}

/* A standard normal (Box-Muller; u1 in (0, 1]). */
static float gauss(uint64_t *s) {
  double u1 = ((splitmix64(s) >> 11) + 1) * 0x1.0p-53;
  double u2 = (splitmix64(s) >> 11) * 0x1.0p-53;
  return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* ---- growable buffer (metadata) and streaming output (everything) -------- */

typedef struct buf {
  uint8_t *p;
  size_t len, cap;
} buf;

static int buf_put(buf *b, const void *src, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
      cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
      return -1;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, src, n);
  b->len += n;
  return 0;
}

/* Little-endian integers; the host is x86-64 or another little-endian
 * machine (the reader assumes the same). */
static int put_u32(buf *b, uint32_t v) { return buf_put(b, &v, 4); }
static int put_u64(buf *b, uint64_t v) { return buf_put(b, &v, 8); }
static int put_str(buf *b, const char *s) {
  size_t n = strlen(s);
  return put_u64(b, n) || buf_put(b, s, n);
}

/* The metadata section and its pair count. */
typedef struct kvs {
  buf b;
  uint64_t n;
  int oom;
} kvs;

static void kv_key(kvs *k, const char *key, uint32_t vtype) {
  k->oom |= put_str(&k->b, key) || put_u32(&k->b, vtype);
  k->n++;
}
static void kv_u32(kvs *k, const char *key, uint32_t v) {
  kv_key(k, key, V_U32);
  k->oom |= put_u32(&k->b, v);
}
static void kv_f32(kvs *k, const char *key, float v) {
  kv_key(k, key, V_F32);
  k->oom |= buf_put(&k->b, &v, 4);
}
static void kv_bool(kvs *k, const char *key, int v) {
  uint8_t x = (uint8_t)(v != 0);
  kv_key(k, key, V_BOOL);
  k->oom |= buf_put(&k->b, &x, 1);
}
static void kv_str(kvs *k, const char *key, const char *v) {
  kv_key(k, key, V_STRING);
  k->oom |= put_str(&k->b, v);
}
static void kv_arr(kvs *k, const char *key, uint32_t elem_type, uint64_t n) {
  kv_key(k, key, V_ARRAY);
  k->oom |= put_u32(&k->b, elem_type) || put_u64(&k->b, n);
}

/* The output file: every byte goes through buf; `err` is the first write's
 * errno (later writes are skipped). */
typedef struct out {
  int fd, err;
  uint8_t *buf;
  size_t len;
  uint64_t n_written;
} out;

static void out_flush(out *o) {
  size_t off = 0;
  while (!o->err && off < o->len) {
    ssize_t n = write(o->fd, o->buf + off, o->len - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      o->err = n < 0 ? errno : EIO;
    else
      off += (size_t)n;
  }
  o->n_written += o->len;
  o->len = 0;
}

static void out_put(out *o, const void *src, size_t n) {
  const uint8_t *p = src;
  while (n) {
    size_t k = OUT_BUF_BYTES - o->len < n ? OUT_BUF_BYTES - o->len : n;
    memcpy(o->buf + o->len, p, k);
    o->len += k;
    p += k;
    n -= k;
    if (o->len == OUT_BUF_BYTES)
      out_flush(o);
  }
}

static void out_pad(out *o) {
  static const uint8_t zeros[ALIGNMENT];
  uint64_t pos = o->n_written + o->len;
  out_put(o, zeros, (size_t)((ALIGNMENT - pos % ALIGNMENT) % ALIGNMENT));
}

/* ---- tensors ------------------------------------------------------------- */

typedef struct tensor {
  char name[64];
  int type;     /* DQ_TYPE_* */
  int norm;     /* f32 vector 1 + N(0, 0.02), else a pooled matrix */
  uint64_t ne[2]; /* ne[0]: row length; ne[1]: rows (1 for vectors) */
  uint64_t offset, n_bytes;
} tensor;

/* A type's pool: POOL_UNITS units of unit_elems elements, unit_bytes each. */
typedef struct pool {
  uint8_t *data; /* NULL until first use */
  size_t unit_elems, unit_bytes;
} pool;

static int unit_elems(int type) {
  int be = dq_type_get(type)->block_elems;
  return be < DQ_QK ? DQ_QK : be;
}

/* Fills p with quantized N(0, 0.02) units of `type` and checks that they
 * decode to finite values. 0 on success; -1 with a message on failure. */
static int pool_build(pool *p, int type, uint64_t seed) {
  size_t n = POOL_UNITS * (size_t)unit_elems(type), bytes = 0;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  dq_status s = dq_type_row_bytes(type, (int64_t)n, &bytes);
  p->data = s ? NULL : malloc(bytes);
  if (!x || !y || !p->data) {
    fprintf(stderr, "dq_synth_gguf: out of memory\n");
    goto fail;
  }
  for (size_t i = 0; i < n; i++)
    x[i] = WEIGHT_STD * gauss(&seed);
  if ((s = dq_quantize_row(type, x, p->data, (int64_t)n)) ||
      (s = dq_dequantize_row(type, p->data, y, (int64_t)n))) {
    fprintf(stderr, "dq_synth_gguf: cannot quantize to %s: %s\n",
            dq_type_name(type), dq_status_str(s));
    goto fail;
  }
  for (size_t i = 0; i < n; i++)
    if (!isfinite(y[i]) || fabsf(y[i]) > 1.0f) {
      fprintf(stderr, "dq_synth_gguf: %s pool element %zu decodes to %g\n",
              dq_type_name(type), i, (double)y[i]);
      goto fail;
    }
  p->unit_elems = (size_t)unit_elems(type);
  p->unit_bytes = bytes / POOL_UNITS;
  free(x);
  free(y);
  return 0;
fail:
  free(x);
  free(y);
  free(p->data);
  p->data = NULL;
  return -1;
}

/* Writes t's bytes: norms drawn fresh, matrices as pool units. */
static void write_tensor(out *o, const tensor *t, pool *p, uint64_t seed) {
  uint64_t n_elems = t->ne[0] * t->ne[1];
  if (t->norm) {
    for (uint64_t i = 0; i < n_elems; i++) {
      float v = 1.0f + WEIGHT_STD * gauss(&seed);
      out_put(o, &v, 4);
    }
    return;
  }
  uint64_t rng = splitmix64(&seed) | 1, n_units = n_elems / p->unit_elems;
  size_t ub = p->unit_bytes;
  for (uint64_t i = 0; i < n_units; i++) {
    const uint8_t *src = p->data + (xorshift(&rng) >> (64 - POOL_BITS)) * ub;
    if (o->len + ub > OUT_BUF_BYTES)
      out_flush(o);
    memcpy(o->buf + o->len, src, ub);
    o->len += ub;
  }
}

/* ---- the file plan ------------------------------------------------------- */

/* Adds a tensor to the plan: a vector (ne1 1) is an f32 norm; a matrix
 * whose rows do not split into the type's blocks falls back to q8_0, and
 * *n_fallback counts it. */
static void plan_add(tensor *ts, int *n, const char *name, int type,
                     uint64_t ne0, uint64_t ne1, int *n_fallback) {
  tensor *t = &ts[(*n)++];
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->norm = ne1 == 1;
  t->type = t->norm ? DQ_TYPE_F32 : type;
  if (ne0 % (uint64_t)dq_type_get(t->type)->block_elems) {
    t->type = DQ_TYPE_Q8_0;
    ++*n_fallback;
  }
  t->ne[0] = ne0;
  t->ne[1] = ne1;
  size_t row_bytes = 0;
  dq_type_row_bytes(t->type, (int64_t)ne0, &row_bytes);
  t->n_bytes = (uint64_t)row_bytes * ne1;
}

/* The tensors in llama.cpp's order: token_embd, output_norm, output, then
 * each layer's. Returns the count. */
static int plan(const shape *sh, int n_layer, int type, int out_type,
                tensor *ts) {
  int n = 0, n_fallback = 0;
  uint64_t E = (uint64_t)sh->n_embd, F = (uint64_t)sh->n_ff;
  uint64_t nq = (uint64_t)sh->n_head * sh->head_dim;
  uint64_t nkv = (uint64_t)sh->n_head_kv * sh->head_dim;
  plan_add(ts, &n, "token_embd.weight", type, E, (uint64_t)sh->n_vocab,
           &n_fallback);
  plan_add(ts, &n, "output_norm.weight", type, E, 1, &n_fallback);
  if (!sh->tied)
    plan_add(ts, &n, "output.weight", out_type, E, (uint64_t)sh->n_vocab,
             &n_fallback);
  for (int il = 0; il < n_layer; il++) {
    static const char *const names[] = {
        "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
        "ffn_norm",  "ffn_gate", "ffn_up", "ffn_down"};
    const uint64_t ne[][2] = {{E, 1},  {E, nq}, {E, nkv}, {E, nkv}, {nq, E},
                              {E, 1},  {E, F},  {E, F},   {F, E}};
    for (int k = 0; k < 9; k++) {
      char name[64];
      snprintf(name, sizeof name, "blk.%d.%s.weight", il, names[k]);
      plan_add(ts, &n, name, type, ne[k][0], ne[k][1], &n_fallback);
    }
  }
  if (n_fallback)
    fprintf(stderr,
            "dq_synth_gguf: note: %d matrices have rows that are not a "
            "multiple of %s's %d elements; they are q8_0\n",
            n_fallback, dq_type_name(type), dq_type_get(type)->block_elems);
  uint64_t off = 0;
  for (int i = 0; i < n; i++) {
    off = (off + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    ts[i].offset = off;
    off += ts[i].n_bytes;
  }
  return n;
}

/* Hyperparameters and the synthetic vocabulary. */
static void metadata(kvs *k, const shape *sh, int n_layer, const char *tname,
                     uint32_t ftype) {
  char name[96];
  snprintf(name, sizeof name, "synthetic %s %s", sh->name, tname);
  kv_str(k, "general.architecture", "llama");
  kv_str(k, "general.name", name);
  kv_u32(k, "general.alignment", ALIGNMENT);
  kv_u32(k, "general.file_type", ftype);
  kv_u32(k, "llama.block_count", (uint32_t)n_layer);
  kv_u32(k, "llama.context_length", (uint32_t)sh->n_ctx);
  kv_u32(k, "llama.embedding_length", (uint32_t)sh->n_embd);
  kv_u32(k, "llama.feed_forward_length", (uint32_t)sh->n_ff);
  kv_u32(k, "llama.attention.head_count", (uint32_t)sh->n_head);
  kv_u32(k, "llama.attention.head_count_kv", (uint32_t)sh->n_head_kv);
  kv_u32(k, "llama.attention.key_length", (uint32_t)sh->head_dim);
  kv_u32(k, "llama.attention.value_length", (uint32_t)sh->head_dim);
  kv_u32(k, "llama.rope.dimension_count", (uint32_t)sh->head_dim);
  kv_f32(k, "llama.rope.freq_base", sh->rope_base);
  kv_f32(k, "llama.attention.layer_norm_rms_epsilon", sh->rms_eps);
  kv_u32(k, "llama.vocab_size", (uint32_t)sh->n_vocab);

  kv_str(k, "tokenizer.ggml.model", "llama");
  kv_arr(k, "tokenizer.ggml.tokens", V_STRING, (uint64_t)sh->n_vocab);
  for (int i = 0; i < sh->n_vocab; i++) {
    char tok[32];
    static const char *const special[N_SPECIAL] = {"<unk>", "<s>", "</s>"};
    if (i < N_SPECIAL)
      snprintf(tok, sizeof tok, "%s", special[i]);
    else if (i < N_SPECIAL + 256)
      snprintf(tok, sizeof tok, "<0x%02X>", i - N_SPECIAL);
    else
      snprintf(tok, sizeof tok, "\xe2\x96\x81w%d", i); /* "▁w<i>" */
    k->oom |= put_str(&k->b, tok);
  }
  kv_arr(k, "tokenizer.ggml.token_type", V_I32, (uint64_t)sh->n_vocab);
  for (int i = 0; i < sh->n_vocab; i++) /* unknown, control, byte, normal */
    k->oom |= put_u32(&k->b, i == 0 ? 2 : i < N_SPECIAL ? 3
                             : i < N_SPECIAL + 256 ? 6 : 1);
  kv_u32(k, "tokenizer.ggml.unknown_token_id", 0);
  kv_u32(k, "tokenizer.ggml.bos_token_id", 1);
  kv_u32(k, "tokenizer.ggml.eos_token_id", 2);
  kv_bool(k, "tokenizer.ggml.add_bos_token", 1);
}

/* ---- command line -------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: dq_synth_gguf --shape NAME --type TYPE [--layers N] "
          "[--seed S] OUT.gguf\n"
          "\n"
          "Writes a llama-architecture GGUF v3 file with random weights\n"
          "(N(0, 0.02); norms ~1) for benchmarks on machines without models.\n"
          "\n"
          "  --shape NAME  llama3-8b | smollm2-135m | tiny\n"
          "  --type TYPE   q4_k | q6_k | q8_0 | q4_0 | q4_1 | f16: the\n"
          "                matrices (token_embd too; output.weight is q6_k\n"
          "                for q4_k); norms are f32\n"
          "  --layers N    layer count instead of the shape's (1..%d)\n"
          "  --seed S      random seed (default 1); same seed, same bytes\n"
          "  -h, --help    this text\n",
          MAX_LAYERS);
}

/* The value of option `name` at argv[*i] ("--name V" or "--name=V"), or
 * NULL when argv[*i] is another option. Exits on a missing value. */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0)
    return NULL;
  if (a[n] == '=')
    return a + n + 1;
  if (a[n] != '\0')
    return NULL;
  if (*i + 1 >= argc) {
    fprintf(stderr, "dq_synth_gguf: %s needs a value\n", name);
    exit(2);
  }
  return argv[++*i];
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *shape_name = NULL, *type_name = NULL, *path = NULL, *v;
  long n_layer = 0;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; i++) {
    char *end;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = opt_value(argc, argv, &i, "--shape"))) {
      shape_name = v;
    } else if ((v = opt_value(argc, argv, &i, "--type"))) {
      type_name = v;
    } else if ((v = opt_value(argc, argv, &i, "--layers"))) {
      errno = 0;
      n_layer = strtol(v, &end, 10);
      if (errno || *end || n_layer < 1 || n_layer > MAX_LAYERS) {
        fprintf(stderr, "dq_synth_gguf: --layers '%s' is not a count in "
                "1..%d\n", v, MAX_LAYERS);
        return 2;
      }
    } else if ((v = opt_value(argc, argv, &i, "--seed"))) {
      errno = 0;
      seed = strtoull(v, &end, 0);
      if (errno || *end || !*v) {
        fprintf(stderr, "dq_synth_gguf: --seed '%s' is not a number\n", v);
        return 2;
      }
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "dq_synth_gguf: unknown option '%s' (see --help)\n",
              argv[i]);
      return 2;
    } else if (path) {
      fprintf(stderr, "dq_synth_gguf: more than one output file ('%s', "
              "'%s')\n", path, argv[i]);
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (!shape_name || !type_name || !path) {
    fprintf(stderr, "dq_synth_gguf: %s is required\n",
            !shape_name ? "--shape" : !type_name ? "--type" : "OUT.gguf");
    usage(stderr);
    return 2;
  }
  const shape *sh = NULL;
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
    if (!strcmp(shape_name, shapes[i].name))
      sh = &shapes[i];
  if (!sh) {
    fprintf(stderr, "dq_synth_gguf: unknown shape '%s' (llama3-8b, "
            "smollm2-135m, tiny)\n", shape_name);
    return 2;
  }
  int ti = -1;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (!strcasecmp(type_name, types[i].name))
      ti = (int)i;
  if (ti < 0) {
    fprintf(stderr, "dq_synth_gguf: unknown type '%s' (q4_k, q6_k, q8_0, "
            "q4_0, q4_1, f16)\n", type_name);
    return 2;
  }
  if (!n_layer)
    n_layer = sh->n_layer;

  double t0 = now_s();
  int rc = 1, created = 0, n_tensors = 0;
  tensor *ts = calloc(3 + 9 * (size_t)n_layer, sizeof *ts);
  pool pools[DQ_TYPE_ID_MAX] = {{0}};
  kvs k = {0};
  buf infos = {0}; /* the tensor infos section */
  out o = {.fd = -1, .buf = malloc(OUT_BUF_BYTES)};
  if (!ts || !o.buf) {
    fprintf(stderr, "dq_synth_gguf: out of memory\n");
    goto done;
  }
  n_tensors = plan(sh, (int)n_layer, types[ti].type, types[ti].output, ts);
  metadata(&k, sh, (int)n_layer, types[ti].name, types[ti].ftype);
  for (int i = 0; i < n_tensors; i++) {
    k.oom |= put_str(&infos, ts[i].name) || put_u32(&infos, ts[i].norm ? 1 : 2);
    for (int d = 0; d < (ts[i].norm ? 1 : 2); d++)
      k.oom |= put_u64(&infos, ts[i].ne[d]);
    k.oom |= put_u32(&infos, (uint32_t)ts[i].type) ||
             put_u64(&infos, ts[i].offset);
  }
  for (int i = 0; i < n_tensors && !k.oom; i++) {
    pool *p = &pools[ts[i].type];
    if (!ts[i].norm && !p->data &&
        pool_build(p, ts[i].type, seed ^ (0x51ed270b27u * (uint64_t)ts[i].type)))
      goto done;
  }
  if (k.oom) {
    fprintf(stderr, "dq_synth_gguf: out of memory\n");
    goto done;
  }

  o.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (o.fd < 0) {
    fprintf(stderr, "dq_synth_gguf: cannot create %s: %s\n", path,
            strerror(errno));
    goto done;
  }
  struct stat st;
  created = fstat(o.fd, &st) == 0 && S_ISREG(st.st_mode); /* not /dev/... */
  uint32_t hdr32[2] = {0x46554747u, 3}; /* "GGUF", version */
  uint64_t hdr64[2] = {(uint64_t)n_tensors, k.n};
  out_put(&o, hdr32, sizeof hdr32);
  out_put(&o, hdr64, sizeof hdr64);
  out_put(&o, k.b.p, k.b.len);
  out_put(&o, infos.p, infos.len);
  out_pad(&o);
  uint64_t data_start = o.n_written + o.len;
  for (int i = 0; i < n_tensors && !o.err; i++) {
    out_pad(&o);
    if (o.n_written + o.len - data_start != ts[i].offset) {
      fprintf(stderr, "dq_synth_gguf: internal error: %s at %llu, planned "
              "%llu\n", ts[i].name,
              (unsigned long long)(o.n_written + o.len - data_start),
              (unsigned long long)ts[i].offset);
      goto done;
    }
    write_tensor(&o, &ts[i], &pools[ts[i].type],
                 seed * 0x9e3779b97f4a7c15u + (uint64_t)i);
  }
  out_flush(&o);
  if (!o.err && close(o.fd) < 0)
    o.err = errno;
  o.fd = -1;
  if (o.err) {
    fprintf(stderr, "dq_synth_gguf: cannot write %s: %s\n", path,
            strerror(o.err));
    goto done;
  }
  printf("%s: %s %s, %ld layers, %d tensors, %.1f MiB in %.1f s\n", path,
         sh->name, types[ti].name, n_layer, n_tensors,
         (double)o.n_written / (1 << 20), now_s() - t0);
  rc = 0;
done:
  if (o.fd >= 0)
    close(o.fd);
  if (rc && created)
    unlink(path); /* a partial file would only fail later, at load */
  free(infos.p);
  for (int i = 0; i < DQ_TYPE_ID_MAX; i++)
    free(pools[i].data);
  free(k.b.p);
  free(o.buf);
  free(ts);
  return rc;
}
