/*
 * matmul.c - Y = X W^T on the CPU: the one entry point the engine uses for
 * every linear layer, from single-token decode (a matrix-vector product,
 * bound by the bandwidth of reading W) to prefill (many tokens, bound by
 * arithmetic).
 *
 * X is first converted to the weights' activation format (Q8_0/Q8_1/Q8_K, or
 * used as is for f32 activations), split by token across threads. Output
 * rows are then handed to threads in chunks; within a chunk, tokens go in
 * tiles of TOK_TILE and each weight row is dotted with every token of the
 * tile while it is hot in L1 (4 tokens per kernel call where the path has a
 * 4-token kernel), so W streams from memory once per chunk, and from L2
 * once per tile, instead of once per token.
 *
 * The quantized types other than F16/BF16 take the unit-layout kernels
 * (gemm_vn.h), prefill and decode, whose activation layout is prepared here
 * once per token: gemm_vnni_avx512.h on AVX-512 VNNI (one thread on the
 * Zen 5 VM: Gemma 3 270M pp512 ~560 -> ~900-990 tok/s, SmolLM2-135M decode
 * ~168 -> ~190-224 tok/s), gemm_vn_avx2.h on the AVX2 path (with AVX-VNNI
 * where it works; without it Q8_0 keeps gemm_x86.h's register-blocked
 * kernels, for which the activation block scales are converted to float
 * once here). Either way a tile is GEMM_TILE tokens.
 *
 * dq_matmul_n runs several products on one x (q, k and v; gate and up) as
 * one job: x converted once per activation layout, one wake-up of the
 * workers instead of one per product (2-thread decode on the Zen 5 VM:
 * SmolLM2-135M 262.0 -> 282.7 tok/s, Gemma 3 270M 146.3 -> 153.3, medians
 * of 3).
 */
#include "cpu_int.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#define TOK_TILE 8
#define ROW_ALIGN 4 /* row chunks are multiples of this */
#define GEMM_TILE 64 /* tokens per gemm call: their activations stay in L2 */

typedef struct mm_job {
  dq_vec_dot_fn dot;
  dq_vec_dot4_fn dot4; /* may be NULL */
  const dq_cpu_caps *caps;
  const uint8_t *w; /* (n_out, w_row_bytes) */
  size_t w_row_bytes;
  int64_t n_out, n_in, n_tok;
  const float *x;    /* (n_tok, n_in) */
  float *y;          /* (n_tok, n_out) */
  int act_type;
  const uint8_t *xq; /* (n_tok, xq_row_bytes) in act_type */
  size_t xq_row_bytes;
  dq_gemm_fn gemm;   /* may be NULL */
  float *a_d, *a_s;  /* (n_tok, nb) activation block scales/sums for gemm */
  dq_gemm_u8_fn gemm_u8; /* may be NULL; when set, gemm is NULL */
  const dq_gemm_u8_table *u8;
  int u8_off;        /* the weight type's code offset */
  uint8_t *act;      /* (n_tok, act_stride) activations in u8's layout */
  size_t act_stride;
  atomic_llong next_row; /* next unclaimed output row */
  size_t q_bytes, s_bytes; /* the activation buffer's parts */
  int64_t chunk_rows;    /* rows claimed at a time */
} mm_job;

static void range(int64_t n, int ith, int nth, int64_t align, int64_t *lo,
                  int64_t *hi) {
  int64_t per = (n + nth - 1) / nth;
  per = (per + align - 1) / align * align;
  *lo = per * ith < n ? per * ith : n;
  *hi = *lo + per < n ? *lo + per : n;
}

static void quantize_task(void *ctx, int ith, int nth) {
  mm_job *j = ctx;
  int64_t t0, t1;
  range(j->n_tok, ith, nth, 1, &t0, &t1);
  int64_t nb = j->n_in / DQ_QK;
  for (int64_t t = t0; t < t1; t++) {
    uint8_t *row = (uint8_t *)j->xq + t * j->xq_row_bytes;
    dq_quantize_act(j->caps, j->act_type, j->x + t * j->n_in, row, j->n_in);
    if (j->gemm_u8)
      j->u8->prep(j->n_in, j->act_type, row, j->u8_off,
                  j->act + (size_t)t * j->act_stride);
    if (!j->gemm)
      continue;
    if (j->act_type == DQ_TYPE_Q8_1) {
      const dq_block_q8_1 *b = (const dq_block_q8_1 *)row;
      for (int64_t k = 0; k < nb; k++) {
        j->a_d[t * nb + k] = dq_f16_to_f32(b[k].d);
        j->a_s[t * nb + k] = dq_f16_to_f32(b[k].s);
      }
    } else {
      const dq_block_q8_0 *b = (const dq_block_q8_0 *)row;
      for (int64_t k = 0; k < nb; k++)
        j->a_d[t * nb + k] = dq_f16_to_f32(b[k].d);
    }
  }
}

/* Rows [r0, r1) against every token, tile by tile: the chunk's weights stay
 * in L2 across tiles, each row stays in L1 across a tile's tokens. */
static void dot_rows(const mm_job *j, int64_t r0, int64_t r1) {
  if (j->gemm_u8) {
    for (int64_t t0 = 0; t0 < j->n_tok; t0 += GEMM_TILE) {
      int64_t nt = j->n_tok - t0 < GEMM_TILE ? j->n_tok - t0 : GEMM_TILE;
      j->gemm_u8(j->n_in, j->w + (size_t)r0 * j->w_row_bytes, j->w_row_bytes,
                 r1 - r0, j->act + (size_t)t0 * j->act_stride, j->act_stride,
                 nt, j->y + t0 * j->n_out + r0, j->n_out);
    }
    return;
  }
  if (j->gemm) {
    int64_t nb = j->n_in / DQ_QK;
    for (int64_t t0 = 0; t0 < j->n_tok; t0 += GEMM_TILE) {
      int64_t nt = j->n_tok - t0 < GEMM_TILE ? j->n_tok - t0 : GEMM_TILE;
      j->gemm(j->n_in, j->w + (size_t)r0 * j->w_row_bytes, j->w_row_bytes,
              r1 - r0, j->xq + (size_t)t0 * j->xq_row_bytes, j->xq_row_bytes,
              j->a_d + t0 * nb, j->a_s ? j->a_s + t0 * nb : NULL, nt,
              j->y + t0 * j->n_out + r0, j->n_out);
    }
    return;
  }
  for (int64_t t0 = 0; t0 < j->n_tok; t0 += TOK_TILE) {
    int64_t t1 = t0 + TOK_TILE < j->n_tok ? t0 + TOK_TILE : j->n_tok;
    for (int64_t o = r0; o < r1; o++) {
      const uint8_t *wr = j->w + (size_t)o * j->w_row_bytes;
      int64_t t = t0;
      if (j->dot4)
        for (; t + 4 <= t1; t += 4)
          j->dot4(j->n_in, wr, j->xq + (size_t)t * j->xq_row_bytes,
                  j->xq_row_bytes, &j->y[t * j->n_out + o], j->n_out);
      for (; t < t1; t++)
        j->dot(j->n_in, wr, j->xq + (size_t)t * j->xq_row_bytes,
               &j->y[t * j->n_out + o]);
    }
  }
}

/* Threads take chunks of rows from a shared counter, so a thread that the
 * OS preempts (a busy machine) delays only its current chunk. Which thread
 * computes a row never changes its value: results are identical for any
 * thread count.
 *
 * Up to one tile of tokens (decode, short prefills) the chunks are guided:
 * each claim takes a 1/nth share of the rows left, so each thread first
 * streams one long run of rows, and the shrinking tail still balances a
 * preempted thread. With 8 equal chunks a thread instead, SmolLM2-135M
 * decoded at 2 threads no faster than at 1 on the 2-core Zen 5 VM
 * (172-190 vs 174-178 tok/s; guided 257-275), and a 576 x 1536 Q4_1
 * mat-vec streaming from DRAM took 30.6-33.9 us against 19.0-20.4 (1
 * thread: 37.3). Past one tile a chunk's weights are reread once per tile
 * and must stay in L2, so the chunks stay small. */
/* A guided claim of rows [*r0, *r1) of n_rows from the counter next: a
 * 1/nth share of the rows left, at least min_rows, so the first claims
 * are long runs of rows and there are few claims in all; 0 when none are
 * left. */
static int guided_claim(atomic_llong *next, int64_t n_rows, int64_t min_rows,
                        int nth, int64_t *r0, int64_t *r1) {
  int64_t r = atomic_load(next);
  while (r < n_rows) {
    int64_t n = (n_rows - r + nth - 1) / nth;
    n = (n + ROW_ALIGN - 1) / ROW_ALIGN * ROW_ALIGN;
    if (n < min_rows)
      n = min_rows;
    if (atomic_compare_exchange_weak(next, &r, r + n)) {
      *r0 = r;
      *r1 = r + n < n_rows ? r + n : n_rows;
      return 1;
    } /* else r holds the counter's value */
  }
  return 0;
}

static void dot_task(void *ctx, int ith, int nth) {
  mm_job *j = ctx;
  (void)ith;
  (void)nth;
  for (;;) {
    int64_t r0 = atomic_fetch_add(&j->next_row, j->chunk_rows);
    if (r0 >= j->n_out)
      break;
    dot_rows(j, r0, r0 + j->chunk_rows < j->n_out ? r0 + j->chunk_rows : j->n_out);
  }
}

/* The unit-layout kernels (gemm_vn.h) of caps' path when they serve
 * wtype, or NULL: AVX-512 VNNI, else on the AVX2 path AVX-VNNI where it
 * works, else AVX2's (which leaves Q8_0 to gemm_x86.h). */
static const dq_gemm_u8_table *gemm_u8_get(const dq_cpu_caps *caps,
                                           int wtype) {
  if (!caps || wtype < 0 || wtype >= DQ_TYPE_ID_MAX)
    return NULL;
  const dq_gemm_u8_table *t[2] = {NULL, NULL};
  if (caps->isa == DQ_ISA_AVX512)
    t[0] = &dq_gemm_u8_avx512_table;
  else if (caps->isa == DQ_ISA_AVX2) {
    t[0] = (caps->flags & DQ_CPU_AVX_VNNI) ? &dq_gemm_u8_avxvnni_table : NULL;
    t[1] = &dq_gemm_u8_avx2_table;
  }
  for (int i = 0; i < 2; i++)
    if (t[i] && t[i]->fn[wtype])
      return t[i];
  return NULL;
}

/* The register-blocked kernel of caps' path for wtype, or NULL. */
static dq_gemm_fn gemm_get(const dq_cpu_caps *caps, int wtype) {
  if (!caps || wtype < 0 || wtype >= DQ_TYPE_ID_MAX)
    return NULL;
  switch (caps->isa) {
  case DQ_ISA_AVX2: return dq_gemm_avx2_table.fn[wtype];
  default: return NULL;
  }
}

/* Checks one product and fills j but for its activation buffers; *bytes:
 * the buffer those need (0: x is used as is, or nothing to do). */
static dq_status mm_prepare(mm_job *j, const dq_cpu_caps *caps, int wtype,
                            const void *w, int64_t n_out, int64_t n_in,
                            const float *x, int64_t n_tok, float *y,
                            size_t *bytes) {
  const dq_type_info *ti = dq_type_get(wtype);
  dq_status st;
  uint64_t total;
  *bytes = 0;
  if (!ti || !ti->is_weight)
    return DQ_ERR_UNSUPPORTED;
  if (n_out < 0 || n_tok < 0 || n_in <= 0 || (n_out && n_tok && (!w || !x || !y)))
    return DQ_ERR_ARG;
  memset(j, 0, sizeof *j);
  if ((st = dq_type_row_bytes(wtype, n_in, &j->w_row_bytes)) != DQ_OK)
    return st;
  j->act_type = ti->vec_dot_type;
  if ((st = dq_type_row_bytes(j->act_type, n_in, &j->xq_row_bytes)) != DQ_OK)
    return st;
  if (n_out == 0 || n_tok == 0)
    return DQ_OK;
  j->u8 = gemm_u8_get(caps, wtype);
  if (j->u8) {
    j->gemm_u8 = j->u8->fn[wtype];
    j->u8_off = j->u8->off[wtype];
  } else {
    j->gemm = gemm_get(caps, wtype);
  }
  /* gemm: activation scales (and Q8_1 sums) as floats after the rows */
  uint64_t n_scales = j->gemm ? (uint64_t)n_tok * (uint64_t)(n_in / DQ_QK) *
                                    (j->act_type == DQ_TYPE_Q8_1 ? 2 : 1)
                              : 0;
  /* unit-layout kernels: their layout of each token's activations */
  j->act_stride = j->u8 ? (j->u8->act_bytes(n_in) + 63) / 64 * 64
                        : 0; /* rows on cache lines */
  uint64_t u8_bytes = (uint64_t)n_tok * j->act_stride;
  if (dq_mul_overflow((uint64_t)n_tok, j->xq_row_bytes, &total) ||
      n_scales > (uint64_t)SIZE_MAX / 16 || u8_bytes > (uint64_t)SIZE_MAX / 4 ||
      dq_mul_overflow((uint64_t)n_out, j->w_row_bytes, &(uint64_t){0}) ||
      total > (uint64_t)SIZE_MAX / 2)
    return DQ_ERR_LIMIT;
  j->dot = dq_vec_dot_get(caps, wtype);
  j->dot4 = dq_vec_dot4_get(caps, wtype);
  j->caps = caps;
  j->w = w;
  j->n_out = n_out;
  j->n_in = n_in;
  j->n_tok = n_tok;
  j->x = x;
  j->y = y;
  if (j->act_type == DQ_TYPE_F32) {
    j->xq = (const uint8_t *)x;
    return DQ_OK;
  }
  j->q_bytes = ((size_t)total + 63) / 64 * 64;
  j->s_bytes = ((size_t)n_scales * sizeof(float) + 63) / 64 * 64;
  *bytes = j->q_bytes + j->s_bytes + (size_t)u8_bytes;
  return DQ_OK;
}

/* Points j's activation buffers into buf (mm_prepare's bytes, on a cache
 * line). */
static void mm_bind(mm_job *j, uint8_t *buf) {
  j->xq = buf;
  if (j->gemm) {
    j->a_d = (float *)(buf + j->q_bytes);
    if (j->act_type == DQ_TYPE_Q8_1)
      j->a_s = j->a_d + (size_t)j->n_tok * (size_t)(j->n_in / DQ_QK);
  }
  if (j->gemm_u8)
    j->act = buf + j->q_bytes + j->s_bytes;
}

static void mm_quantize(dq_threadpool *pool, mm_job *j) {
  if (j->n_tok == 1)
    quantize_task(j, 0, 1); /* not worth waking the workers */
  else
    dq_threadpool_run(pool, quantize_task, j);
}

/* About 8 chunks per thread, at least ROW_ALIGN rows each. */
static int64_t mm_chunk(int64_t n_out, int nth) {
  int64_t c = (n_out + 8 * nth - 1) / (8 * nth);
  return (c + ROW_ALIGN - 1) / ROW_ALIGN * ROW_ALIGN;
}

/* dq_matmul_n's products as one row space, claimed by guided_claim and
 * cut at the products' boundaries. */
typedef struct mm_multi {
  mm_job *j;
  int n;
  int64_t n_rows, chunk_rows;
  atomic_llong next_row;
} mm_multi;

static void multi_rows(const mm_multi *m, int64_t r0, int64_t r1) {
  int64_t off = 0;
  for (int k = 0; k < m->n && off < r1; off += m->j[k].n_out, k++) {
    int64_t lo = r0 > off ? r0 : off;
    int64_t hi = r1 < off + m->j[k].n_out ? r1 : off + m->j[k].n_out;
    if (lo < hi)
      dot_rows(&m->j[k], lo - off, hi - off);
  }
}

static void multi_task(void *ctx, int ith, int nth) {
  mm_multi *m = ctx;
  int64_t r0, r1;
  (void)ith;
  while (guided_claim(&m->next_row, m->n_rows, m->chunk_rows, nth, &r0, &r1))
    multi_rows(m, r0, r1);
}

/* Two products whose activations are the same bytes: the same conversion
 * of x. */
static int mm_same_act(const mm_job *a, const mm_job *b) {
  return a->act_type == b->act_type && !a->gemm == !b->gemm &&
         a->u8 == b->u8 && a->u8_off == b->u8_off;
}

/* Prepares the n products o on one x into j, x converted once per
 * activation layout into one buffer (*own: to free); *n_rows: their rows
 * (0: nothing to do). */
static dq_status mm_setup(dq_threadpool *pool, const dq_cpu_caps *caps,
                          int n, const dq_mm_out *o, int64_t n_in,
                          const float *x, int64_t n_tok, mm_job *j,
                          void **own, int64_t *n_rows) {
  size_t bytes[DQ_MM_N_MAX], all = 0;
  int share[DQ_MM_N_MAX];
  *own = NULL;
  *n_rows = 0;
  for (int k = 0; k < n; k++) {
    dq_status st = mm_prepare(&j[k], caps, o[k].wtype, o[k].w, o[k].n_out,
                              n_in, x, n_tok, o[k].y, &bytes[k]);
    if (st)
      return st;
    share[k] = -1;
    for (int e = 0; e < k && bytes[k]; e++)
      if (share[e] < 0 && bytes[e] && mm_same_act(&j[e], &j[k])) {
        share[k] = e;
        break;
      }
    if (share[k] < 0)
      all += bytes[k];
    *n_rows += j[k].n_out;
  }
  if (*n_rows == 0 || n_tok == 0) {
    *n_rows = 0;
    return DQ_OK;
  }
  uint8_t *buf = NULL;
  if (all) {
    if (!pool && posix_memalign(own, 64, all) != 0) /* rows on lines */
      *own = NULL;
    if (!(buf = pool ? dq_threadpool_scratch(pool, all) : *own))
      return DQ_ERR_NOMEM;
  }
  for (int k = 0; k < n; k++) {
    if (!bytes[k])
      continue;
    if (share[k] >= 0) {
      const mm_job *e = &j[share[k]];
      j[k].xq = e->xq, j[k].a_d = e->a_d, j[k].a_s = e->a_s,
      j[k].act = e->act;
      continue;
    }
    mm_bind(&j[k], buf); /* every part a multiple of 64 bytes */
    mm_quantize(pool, &j[k]);
    buf += bytes[k];
  }
  return DQ_OK;
}

/* Up to one tile of tokens, all rows of all products as one job of guided
 * claims (multi_task); past it each product in turn, in equal chunks
 * (dot_task), so its chunks' weights stay in L2. Either way x is converted
 * once per activation layout (mm_setup). */
dq_status dq_matmul_n(dq_threadpool *pool, const dq_cpu_caps *caps, int n,
                      const dq_mm_out *o, int64_t n_in, const float *x,
                      int64_t n_tok) {
  if (n < 1 || n > DQ_MM_N_MAX || !o)
    return DQ_ERR_ARG;
  mm_job j[DQ_MM_N_MAX];
  void *own;
  int64_t n_rows;
  dq_status st = mm_setup(pool, caps, n, o, n_in, x, n_tok, j, &own, &n_rows);
  if (st || n_rows == 0)
    return st;
  int nth = dq_threadpool_size(pool);
  if (n_tok <= GEMM_TILE) {
    mm_multi m = {.j = j, .n = n, .n_rows = n_rows,
                  .chunk_rows = mm_chunk(n_rows, nth)};
    atomic_init(&m.next_row, 0);
    dq_threadpool_run(pool, multi_task, &m);
  } else {
    for (int k = 0; k < n; k++) {
      if (j[k].n_out == 0)
        continue;
      j[k].chunk_rows = mm_chunk(j[k].n_out, nth);
      atomic_init(&j[k].next_row, 0);
      dq_threadpool_run(pool, dot_task, &j[k]);
    }
  }
  free(own);
  return DQ_OK;
}

dq_status dq_matmul(dq_threadpool *pool, const dq_cpu_caps *caps, int wtype,
                    const void *w, int64_t n_out, int64_t n_in,
                    const float *x, int64_t n_tok, float *y) {
  dq_mm_out o = {wtype, w, n_out, y};
  return dq_matmul_n(pool, caps, 1, &o, n_in, x, n_tok);
}
