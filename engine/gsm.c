/*
 * gsm.c - the GSM attention cache (layout and invariants in gsm.h): the
 * per-layer entry lists, the chunk attention that reads them (CPU, f32,
 * grouped-query, split over a thread pool), and compression after each
 * chunk: window bookkeeping, dynamic anchors, and the memory budget kept by
 * one of three strategies:
 *   score       drop the memory entries with the lowest accumulated
 *               attention (H2O-style accumulation over all queries so far,
 *               divided by the number of queries since the entry's first
 *               token, so age alone does not decide);
 *   time_decay  fold the oldest memory entries into one state slot by the
 *               gated update h_t = a_t h_{t-1} + (1 - a_t) x_t, where
 *               a_t = w / (w + c_t), w = gamma^gap * C_{t-1} (C: tokens
 *               already folded, c_t: tokens in x_t, gap: positions between
 *               them, gamma = exp(-1 / window)): with gamma = 1 this is the
 *               count-weighted mean, older content fades with age. The
 *               whole fold is one parallel scan (dq_gsm_scan);
 *   similarity  repeatedly merge the two neighbouring memory entries whose
 *               keys are most similar (cosine, mean over KV heads) into
 *               their count-weighted mean; a merged slot adds log(count)
 *               to its logit so it weighs like the tokens it stands for.
 * Not here: when GSM runs and the RoPE/QKV of the layer (forward.c).
 */
#include "gsm.h"
#include "backend.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dq_gsm_opts_init(dq_gsm_opts *o) {
  memset(o, 0, sizeof *o);
  o->enabled = 1;
  o->window_size = 384;
  o->num_global_anchors = 6;
  o->n_sink = 4;
  o->mode = DQ_GSM_LAYOUT_HYBRID;
  o->hybrid_split = -1;
  o->min_tokens = 1024;
  o->keep_ratio = 0.75f;
  o->strategy = DQ_GSM_MERGE_SCORE;
  o->memory_slots = 4096;
  o->chunk_size = 2048;
  o->encoder_window_scale = 1.5f;
  o->decoder_window_scale = 0.8f;
  o->cache_positions = DQ_GSM_POS_AUTO;
  o->cache_type = DQ_KV_Q8_0;
}


static int pinned_at(const dq_gsm *g, int p) {
  for (int i = 0; i < g->c.o.n_pinned; i++)
    if (p >= g->pin_b[i] && p < g->pin_e[i])
      return 1;
  return 0;
}

int dq_gsm_budget(const dq_gsm *g, int n_seen) {
  double b = (double)g->c.o.keep_ratio * n_seen;
  int m = g->c.o.memory_slots;
  return b < m ? (int)b : m;
}

/* Entries an eviction goes past what it must: evictions come in batches,
 * so that decoding, which adds one token a step, compacts a layer (every
 * later entry moved down) once per batch instead of every step. At most
 * 1/128 of the bound (16 of the default 4,096 memory slots, 2 of a 307-token
 * decode window), so small caches evict exactly. */
#define DQ_GSM_EVICT_BATCH 16
static int evict_slack(int bound) {
  int s = bound / 128;
  return s < DQ_GSM_EVICT_BATCH ? s : DQ_GSM_EVICT_BATCH;
}

static int scaled_window(const dq_gsm_opts *o) {
  float s = o->encoder_window_scale > o->decoder_window_scale
                ? o->encoder_window_scale
                : o->decoder_window_scale;
  if (s < 1)
    s = 1;
  return (int)ceilf((float)o->window_size * s);
}

/* cos/sin of every (position < n_tab, pair) with the backend's own RoPE:
 * rotating a unit vector (1, 0) per pair yields (cos, sin) times YaRN's
 * magnitude, exactly what the forward pass would apply. */
static int rope_table(dq_gsm *g, int n_tab) {
  const dq_rope_params *r = g->c.rope;
  int hd = g->c.head_dim, half = r->n_rot / 2;
  float *x = calloc((size_t)n_tab * hd, sizeof *x);
  int32_t *pos = malloc((size_t)n_tab * sizeof *pos);
  g->rope_tab = malloc((size_t)n_tab * half * 2 * sizeof(float));
  if (!x || !pos || !g->rope_tab) {
    free(x);
    free(pos);
    return -1;
  }
  for (int p = 0; p < n_tab; p++) {
    pos[p] = p;
    for (int i = 0; i < half; i++)
      x[(size_t)p * hd + (r->neox ? i : 2 * i)] = 1;
  }
  g->c.rope_fn(g->c.rope_ctx, x, n_tab, 1, hd, pos, r);
  for (int p = 0; p < n_tab; p++)
    for (int i = 0; i < half; i++) {
      const float *v = x + (size_t)p * hd;
      float *t = g->rope_tab + ((size_t)p * half + i) * 2;
      t[0] = v[r->neox ? i : 2 * i];
      t[1] = v[r->neox ? i + half : 2 * i + 1];
    }
  g->n_tab = n_tab;
  g->n_rot = r->n_rot;
  g->neox = r->neox;
  free(x);
  free(pos);
  return 0;
}

/* Rotates n_head heads of one token by position p (sign -1: inverse). */
static void rotate(const dq_gsm *g, float *x, int n_head, int p, int sign) {
  int hd = g->c.head_dim, half = g->n_rot / 2;
  const float *t = g->rope_tab + (size_t)p * half * 2;
  for (int h = 0; h < n_head; h++) {
    float *v = x + (size_t)h * hd;
    for (int i = 0; i < half; i++) {
      int a = g->neox ? i : 2 * i, b = g->neox ? i + half : 2 * i + 1;
      float c = t[2 * i], sn = sign * t[2 * i + 1], x0 = v[a], x1 = v[b];
      v[a] = x0 * c - x1 * sn;
      v[b] = x0 * sn + x1 * c;
    }
  }
}

/* Rotates n_head heads of one token back by d positions with the pure
 * rotation (YaRN's magnitude, which the table carries, divided out): a key
 * stored rotated at p comes out rotated at p - d. */
static void rotate_back(const dq_gsm *g, float *x, int n_head, int d) {
  int hd = g->c.head_dim, half = g->n_rot / 2;
  const float *t = g->rope_tab + (size_t)d * half * 2;
  for (int i = 0; i < half; i++) {
    double m = hypot(t[2 * i], t[2 * i + 1]);
    float c = (float)(t[2 * i] / m), sn = (float)(-t[2 * i + 1] / m);
    int a = g->neox ? i : 2 * i, b = g->neox ? i + half : 2 * i + 1;
    for (int h = 0; h < n_head; h++) {
      float *v = x + (size_t)h * hd, x0 = v[a], x1 = v[b];
      v[a] = x0 * c - x1 * sn;
      v[b] = x0 * sn + x1 * c;
    }
  }
}

/* Cache positions in layer L: keys rotated at their entry's rpos. */
static int layer_cachepos(const dq_gsm *g, const dq_gsm_layer *L) {
  return g->cachepos && L->exact_window <= 0;
}

void dq_gsm_unrotate(const dq_gsm *g, float *k, int n, int pos0) {
  if (!g->rope_tab)
    return;
  for (int t = 0; t < n && pos0 + t < g->n_tab; t++)
    rotate(g, k + (size_t)t * g->row_elems, g->c.n_head_kv, pos0 + t, -1);
}

/* ---- device rows ---------------------------------------------------------- */

static size_t key_bytes(const dq_gsm *g, int rows);
static size_t val_bytes(const dq_gsm *g, int rows);

static void dev_free(dq_gsm *g, void *p) {
  if (p)
    g->c.dev->i.buf_free(g->c.dev->ctx, p);
}

static int dev_buf(dq_gsm *g, size_t n_bytes, void **p) {
  return g->c.dev->i.buf_alloc(g->c.dev->ctx, n_bytes, p) != DQ_OK;
}

/* The store kv_store and kv_gather are told for keys (F16: panels). */
static int key_store(const dq_gsm *g) {
  return g->c.store == DQ_STORE_F16 ? DQ_STORE_F16P : g->c.store;
}

/* Device rows: every layer at its bound (no regrowth on the device), the
 * shared statistics, scores, maps and scratch; the backend zeroes them. */
static int dev_alloc(dq_gsm *g) {
  int n_l = g->c.n_layer, stride = 0;
  for (int l = 0; l < n_l; l++)
    if (g->layers[l].cap > stride)
      stride = g->layers[l].cap;
  g->stride = stride;
  size_t S = (size_t)stride;
  for (int l = 0; l < n_l; l++) {
    dq_gsm_layer *L = &g->layers[l];
    if (!(L->e = malloc((size_t)L->cap * sizeof *L->e)) ||
        dev_buf(g, key_bytes(g, L->cap), (void **)&L->k) ||
        dev_buf(g, val_bytes(g, L->cap), (void **)&L->v))
      return -1;
    L->alloc = L->cap;
  }
  if (dev_buf(g, (size_t)g->c.n_head * S * 4, (void **)&g->stats_dev) ||
      dev_buf(g, (size_t)n_l * S * 4, (void **)&g->score_dev) ||
      dev_buf(g, (size_t)n_l * S * 4, (void **)&g->map_dev) ||
      dev_buf(g, S * 4, (void **)&g->iota_dev) ||
      dev_buf(g, key_bytes(g, stride), &g->kscr) ||
      dev_buf(g, val_bytes(g, stride), &g->vscr))
    return -1;
  g->score_host = malloc((size_t)n_l * S * sizeof(float));
  g->map_host = malloc((size_t)n_l * S * sizeof(int32_t));
  g->attended = calloc((size_t)n_l, 1);
  g->pend_seen = malloc((size_t)n_l * sizeof(int));
  g->pend_window = malloc((size_t)n_l * sizeof(int));
  g->gather_n = malloc((size_t)n_l * sizeof(int));
  g->pend_list = malloc((size_t)n_l * sizeof(int));
  g->mark_n = malloc((size_t)n_l * sizeof(int));
  g->mark_pos = malloc((size_t)n_l * sizeof(int));
  if (!g->score_host || !g->map_host || !g->attended || !g->pend_seen ||
      !g->pend_window || !g->gather_n || !g->pend_list || !g->mark_n ||
      !g->mark_pos)
    return -1;
  for (int l = 0; l < n_l; l++)
    g->pend_seen[l] = g->gather_n[l] = -1;
  for (int i = 0; i < stride; i++)
    g->map_host[i] = i;
  if (g->c.dev->i.upload(g->c.dev->ctx, g->iota_dev, g->map_host, S * 4))
    return -1;
  if (!g->cachepos)
    return 0;
  /* cache positions: the positions table, and room for a renumbering */
  size_t nt = (size_t)g->n_tab;
  int32_t *pos = malloc(nt * sizeof *pos);
  g->delta_host = malloc(S * sizeof *g->delta_host);
  int bad = !pos || !g->delta_host || dev_buf(g, nt * 4, (void **)&g->pos_dev) ||
            dev_buf(g, S * 4, (void **)&g->delta_dev);
  for (size_t i = 0; !bad && i < nt; i++)
    pos[i] = (int32_t)i;
  bad = bad || g->c.dev->i.upload(g->c.dev->ctx, g->pos_dev, pos, nt * 4);
  free(pos);
  return bad ? -1 : 0;
}

int dq_gsm_dev_cachepos(const dq_backend *be, int q8_rows) {
  return be->i.kv_rotate && !q8_rows;
}

const char *dq_gsm_dev_refusal(const dq_backend *be, const dq_gsm_opts *o,
                               int q8_rows) {
  if (!be->i.kv_gather || !be->i.sum_rows)
    return "GSM attention needs row gathers this backend does not have "
           "(--backend cpu)";
  if (o->cache_positions == DQ_GSM_POS_CACHE &&
      !dq_gsm_dev_cachepos(be, q8_rows))
    return "GSM cache positions here need a kv_type f16 or f32 cache (q8_0 "
           "rows are renumbered on the host only): use "
           "sparse_attention.positions original, or --backend cpu";
  return NULL;
}

dq_status dq_gsm_new(const dq_gsm_cfg *cfg, dq_gsm **out, dq_error *err) {
  *out = NULL;
  const dq_gsm_opts *o = &cfg->o;
  if (cfg->n_layer <= 0 || cfg->n_head <= 0 || cfg->n_head_kv <= 0 ||
      cfg->n_head % cfg->n_head_kv || cfg->head_dim <= 0 ||
      cfg->max_chunk <= 0)
    return dq_error_set(err, DQ_ERR_ARG, "gsm: bad model dimensions");
  if (o->window_size < 1 || o->n_sink < 0 || o->num_global_anchors < 0 ||
      o->memory_slots < 0 || o->n_pinned < 0 || !(o->keep_ratio >= 0) ||
      o->keep_ratio > 1 || o->chunk_size < 1 || o->encoder_window_scale <= 0 ||
      o->decoder_window_scale <= 0 || (o->n_pinned && !o->pinned) ||
      (int)o->strategy < 0 || o->strategy > DQ_GSM_MERGE_SIMILARITY ||
      (int)o->mode < 0 || o->mode > DQ_GSM_LAYOUT_HYBRID)
    return dq_error_set(err, DQ_ERR_ARG,
                        "gsm: option out of range (window_size %d, n_sink %d, "
                        "memory_slots %d, keep_ratio %g, chunk_size %d)",
                        o->window_size, o->n_sink, o->memory_slots,
                        (double)o->keep_ratio, o->chunk_size);
  const char *why =
      cfg->dev ? dq_gsm_dev_refusal(cfg->dev, o, cfg->store == DQ_STORE_Q8_0)
               : NULL;
  if (why)
    return dq_error_set(err, DQ_ERR_UNSUPPORTED, "gsm on %s: %s",
                        be_name(cfg->dev), why);
  dq_gsm *g = calloc(1, sizeof *g);
  if (!g)
    return dq_error_set(err, DQ_ERR_NOMEM, "gsm: out of memory");
  g->c = *cfg;
  g->c.layer_dynamic = g->c.layer_window = NULL;
  g->c.rope = NULL; /* copied below */
  if (cfg->rope)
    g->rope_copy = *cfg->rope;
  if (cfg->rope)
    g->c.rope = &g->rope_copy;
  g->row_elems = cfg->n_head_kv * cfg->head_dim;
  if (cfg->store != DQ_STORE_F32 && cfg->store != DQ_STORE_F16 &&
      cfg->store != DQ_STORE_Q8_0) {
    free(g);
    return dq_error_set(err, DQ_ERR_ARG, "gsm: unknown cache type %d",
                        cfg->store);
  }
  if (dq_type_row_bytes(cfg->store, g->row_elems, &g->row_bytes) != DQ_OK) {
    int re = g->row_elems;
    free(g);
    return dq_error_set(err, DQ_ERR_UNSUPPORTED,
                        "gsm: a %s cache cannot hold rows of %d elements",
                        dq_type_name(cfg->store), re);
  }
  /* Q8_0 rows in the kernel's 8-bit panels when its path takes the head
   * size; else rows converted to f32 per attend */
  g->q8 = !cfg->dev && cfg->store == DQ_STORE_Q8_0 &&
          cfg->head_dim % 32 == 0 && cfg->head_dim <= DQ_ATTN_Q8_HD_MAX;
  g->kgrp_bytes = (size_t)cfg->n_head_kv * dq_attn_q8k_bytes(cfg->head_dim);
  g->vgrp_bytes = (size_t)cfg->n_head_kv * dq_attn_q8v_bytes(cfg->head_dim);
  int np = o->n_pinned;
  g->pin_b = calloc((size_t)np + 1, sizeof *g->pin_b);
  g->pin_e = calloc((size_t)np + 1, sizeof *g->pin_e);
  g->layers = calloc((size_t)cfg->n_layer, sizeof *g->layers);
  g->tmp = malloc((size_t)g->row_elems * 4 * sizeof(float));
  if (!g->pin_b || !g->pin_e || !g->layers || !g->tmp)
    goto nomem;
  if (cfg->store == DQ_STORE_F16 &&
      (!cfg->dev || o->strategy != DQ_GSM_MERGE_SCORE)) {
    if (!(g->f16_tab = malloc(65536 * sizeof(float))))
      goto nomem;
    for (uint32_t h = 0; h < 65536; h++)
      g->f16_tab[h] = dq_f16_to_f32((dq_f16)h);
  }
  for (int i = 0; i < np; i++) {
    g->pin_b[i] = o->pinned[2 * i];
    g->pin_e[i] = o->pinned[2 * i + 1];
    if (g->pin_b[i] < 0 || g->pin_e[i] < g->pin_b[i]) {
      dq_gsm_free(g);
      return dq_error_set(err, DQ_ERR_ARG, "gsm: pinned span %d is [%d, %d)",
                          i, (int)o->pinned[2 * i], (int)o->pinned[2 * i + 1]);
    }
    g->n_pinned_tokens += g->pin_e[i] - g->pin_b[i];
  }
  g->c.o.pinned = NULL;
  int add = cfg->max_chunk > cfg->extra_rows ? cfg->max_chunk : cfg->extra_rows;
  int wmax = scaled_window(o);
  for (int l = 0; l < cfg->n_layer; l++) {
    dq_gsm_layer *L = &g->layers[l];
    L->exact_window = cfg->layer_window ? cfg->layer_window[l] : 0;
    if (cfg->layer_dynamic)
      L->dynamic = cfg->layer_dynamic[l] != 0;
    else if (o->mode == DQ_GSM_LAYOUT_FIXED)
      L->dynamic = 0;
    else if (o->mode == DQ_GSM_LAYOUT_DYNAMIC)
      L->dynamic = 1;
    else
      L->dynamic = l >= (o->hybrid_split >= 0 ? o->hybrid_split
                                               : cfg->n_layer / 2);
    int64_t cap;
    if (L->exact_window > 0) {
      L->dynamic = 0;
      /* + the stale keys compress leaves until a batch of them is there */
      cap = (int64_t)L->exact_window + add + DQ_GSM_EVICT_BATCH;
    } else {
      cap = (int64_t)o->n_sink + g->n_pinned_tokens + wmax + add + 1;
      if (L->dynamic)
        cap += (int64_t)o->num_global_anchors + o->memory_slots;
    }
    if (cap > (1 << 26))
      goto nomem;
    L->cap = (int)cap; /* rows are allocated as the layer fills */
  }
  /* DQ_GSM_POS_AUTO is resolved by the sequence (forward.c); unresolved
   * here it means original positions */
  if (o->cache_positions == DQ_GSM_POS_CACHE && cfg->rope && cfg->rope_fn) {
    /* positions stay below pos_limit (the trained context), renumbered
     * when a layer reaches it; no more often than every max-cap tokens */
    int64_t maxcap = 0;
    for (int l = 0; l < cfg->n_layer; l++)
      if (g->layers[l].cap > maxcap)
        maxcap = g->layers[l].cap;
    int64_t lim = cfg->pos_limit > 0 ? cfg->pos_limit : 2 * maxcap;
    if (lim > 2 * maxcap)
      lim = 2 * maxcap;
    if (lim < maxcap) /* the cache alone outgrows the trained context */
      lim = maxcap;
    g->pos_limit = (int)lim;
    g->n_tab = (int)lim + add + 1;
    g->cachepos = 1;
    if (!cfg->dev && rope_table(g, g->n_tab)) /* device: the backend's RoPE */
      goto nomem;
  }
  /* device rows: the pool compresses layers in parallel (dq_gsm_flush) */
  if ((cfg->dev && dev_alloc(g)) ||
      (cfg->n_threads > 1 && dq_threadpool_new(cfg->n_threads, &g->pool)))
    goto nomem;
  *out = g;
  return DQ_OK;
nomem:
  dq_gsm_free(g);
  return dq_error_set(err, DQ_ERR_NOMEM,
                      "gsm: cannot allocate the cache (%d layers)",
                      cfg->n_layer);
}

static void mg_free(dq_gsm *g);
static void fd_free(dq_gsm *g);

void dq_gsm_free(dq_gsm *g) {
  if (!g)
    return;
  mg_free(g);
  fd_free(g);
  for (int l = 0; g->layers && l < g->c.n_layer; l++) {
    free(g->layers[l].e);
    if (g->c.dev) {
      dev_free(g, g->layers[l].k);
      dev_free(g, g->layers[l].v);
    } else {
      free(g->layers[l].k);
      free(g->layers[l].v);
    }
  }
  if (g->c.dev) {
    dev_free(g, g->stats_dev);
    dev_free(g, g->score_dev);
    dev_free(g, g->map_dev);
    dev_free(g, g->iota_dev);
    dev_free(g, g->kscr);
    dev_free(g, g->vscr);
    dev_free(g, g->pos_dev);
    dev_free(g, g->delta_dev);
    dev_free(g, g->trk_out);
    dev_free(g, g->bias_dev);
    if (g->bias_pinned)
      g->c.dev->i.host_free(g->c.dev->ctx, g->bias_host);
    else
      free(g->bias_host);
  }
  free(g->trk_em);
  free(g->trk_rows);
  free(g->stage_k);
  free(g->stage_v);
  free(g->delta_host);
  free(g->score_host);
  free(g->map_host);
  free(g->attended);
  free(g->pend_seen);
  free(g->pend_window);
  free(g->gather_n);
  free(g->pend_list);
  free(g->mark_n);
  free(g->mark_pos);
  free(g->layers);
  free(g->f16_tab);
  free(g->kf);
  free(g->vf);
  free(g->kt);
  free(g->bias);
  free(g->tmp);
  free(g->rope_tab);
  free(g->qrot);
  free(g->pin_b);
  free(g->pin_e);
  dq_threadpool_free(g->pool);
  free(g);
}

size_t dq_gsm_bytes(const dq_gsm *g) {
  size_t n = 0;
  for (int l = 0; g && l < g->c.n_layer; l++)
    n += key_bytes(g, g->layers[l].alloc) + val_bytes(g, g->layers[l].alloc);
  return n;
}

size_t dq_gsm_used_bytes(const dq_gsm *g) {
  size_t n = 0;
  for (int l = 0; g && l < g->c.n_layer; l++)
    n += key_bytes(g, g->layers[l].n) + val_bytes(g, g->layers[l].n);
  return n;
}

/* ---- rows ---------------------------------------------------------------- */

static uint8_t *row_at(const dq_gsm *g, uint8_t *base, int r) {
  return base + (size_t)r * g->row_bytes;
}

/* Stored row -> f32 (row_elems). */
static void row_get(const dq_gsm *g, const uint8_t *src, float *dst) {
  int n = g->row_elems;
  if (g->c.store == DQ_STORE_F32) {
    memcpy(dst, src, (size_t)n * sizeof(float));
  } else if (g->c.store == DQ_STORE_F16) {
    for (int i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, src + 2 * i, 2);
      dst[i] = g->f16_tab[h];
    }
  } else {
    dq_dequantize_row(g->c.store, src, dst, n);
  }
}

/* f32 (row_elems) -> stored row. */
static void row_put(const dq_gsm *g, uint8_t *dst, const float *src) {
  if (g->c.store == DQ_STORE_F32)
    memcpy(dst, src, (size_t)g->row_elems * sizeof(float));
  else
    dq_quantize_row(g->c.store, src, dst, g->row_elems);
}

/* Keys of an F16 store sit in panels of 16 entries (backend.h's
 * DQ_STORE_F16P layout: element i of entry r at ((r / 16) * row_elems + i)
 * * 16 + r % 16), which the attention kernel reads in place; a Q8_0 store
 * whose head size the kernel's 8-bit path takes (g->q8) keeps keys and
 * values in its 8-bit panels (kernels.h), per 16 entries the n_head_kv
 * key panels one after another, and as many value panels; other stores
 * keep keys in rows. */
static int key_panels(const dq_gsm *g) {
  return g->c.store == DQ_STORE_F16 || g->q8;
}

/* Bytes of `rows` entries' keys / values (whole panels where panelled). */
static size_t key_bytes(const dq_gsm *g, int rows) {
  if (g->q8)
    return (size_t)dq_attn_padded(rows) / DQ_ATTN_PANEL * g->kgrp_bytes;
  return (size_t)(key_panels(g) ? dq_attn_padded(rows) : rows) * g->row_bytes;
}
static size_t val_bytes(const dq_gsm *g, int rows) {
  if (g->q8)
    return (size_t)dq_attn_padded(rows) / DQ_ATTN_PANEL * g->vgrp_bytes;
  return (size_t)rows * g->row_bytes;
}

/* Head h's 8-bit key / value panel holding entry r. */
static uint8_t *q8_kpanel(const dq_gsm *g, uint8_t *k, int r, int h) {
  return k + (size_t)(r / DQ_ATTN_PANEL) * g->kgrp_bytes +
         (size_t)h * dq_attn_q8k_bytes(g->c.head_dim);
}
static uint8_t *q8_vpanel(const dq_gsm *g, uint8_t *v, int r, int h) {
  return v + (size_t)(r / DQ_ATTN_PANEL) * g->vgrp_bytes +
         (size_t)h * dq_attn_q8v_bytes(g->c.head_dim);
}

static void key_get(const dq_gsm *g, const dq_gsm_layer *L, int r,
                    float *dst) {
  if (g->q8) {
    for (int h = 0; h < g->c.n_head_kv; h++)
      dq_attn_q8_get_key(q8_kpanel(g, L->k, r, h), r % DQ_ATTN_PANEL,
                         g->c.head_dim, dst + (size_t)h * g->c.head_dim);
    return;
  }
  if (!key_panels(g)) {
    row_get(g, row_at(g, L->k, r), dst);
    return;
  }
  const dq_f16 *p = (const dq_f16 *)(const void *)L->k +
                    (size_t)(r / 16) * (size_t)g->row_elems * 16 + r % 16;
  for (int i = 0; i < g->row_elems; i++)
    dst[i] = g->f16_tab[p[(size_t)i * 16]];
}

static void key_put(const dq_gsm *g, dq_gsm_layer *L, int r,
                    const float *src) {
  if (g->q8) {
    for (int h = 0; h < g->c.n_head_kv; h++)
      dq_attn_q8_put_key(q8_kpanel(g, L->k, r, h), r % DQ_ATTN_PANEL,
                         g->c.head_dim, src + (size_t)h * g->c.head_dim);
    return;
  }
  if (!key_panels(g)) {
    row_put(g, row_at(g, L->k, r), src);
    return;
  }
  dq_f16 *p = (dq_f16 *)(void *)L->k +
              (size_t)(r / 16) * (size_t)g->row_elems * 16 + r % 16;
  for (int i = 0; i < g->row_elems; i++)
    p[(size_t)i * 16] = dq_f32_to_f16(src[i]);
}

/* Entry r's key to entry w's place (compaction). */
static void key_move(const dq_gsm *g, dq_gsm_layer *L, int w, int r) {
  if (g->q8) {
    for (int h = 0; h < g->c.n_head_kv; h++)
      dq_attn_q8_move_key(q8_kpanel(g, L->k, w, h), w % DQ_ATTN_PANEL,
                          q8_kpanel(g, L->k, r, h), r % DQ_ATTN_PANEL,
                          g->c.head_dim);
    return;
  }
  if (!key_panels(g)) {
    memcpy(row_at(g, L->k, w), row_at(g, L->k, r), g->row_bytes);
    return;
  }
  dq_f16 *k = (dq_f16 *)(void *)L->k;
  size_t pw = (size_t)(w / 16) * (size_t)g->row_elems * 16 + w % 16;
  size_t pr = (size_t)(r / 16) * (size_t)g->row_elems * 16 + r % 16;
  for (int i = 0; i < g->row_elems; i++)
    k[pw + (size_t)i * 16] = k[pr + (size_t)i * 16];
}

/* Entry r's value, as keys above: rows, or 8-bit panels. */
static void val_get(const dq_gsm *g, const dq_gsm_layer *L, int r,
                    float *dst) {
  if (!g->q8) {
    row_get(g, row_at(g, L->v, r), dst);
    return;
  }
  for (int h = 0; h < g->c.n_head_kv; h++)
    dq_attn_q8_get_value(q8_vpanel(g, L->v, r, h), r % DQ_ATTN_PANEL,
                         g->c.head_dim, dst + (size_t)h * g->c.head_dim);
}

static void val_put(const dq_gsm *g, dq_gsm_layer *L, int r,
                    const float *src) {
  if (!g->q8) {
    row_put(g, row_at(g, L->v, r), src);
    return;
  }
  for (int h = 0; h < g->c.n_head_kv; h++)
    dq_attn_q8_put_value(q8_vpanel(g, L->v, r, h), r % DQ_ATTN_PANEL,
                         g->c.head_dim, src + (size_t)h * g->c.head_dim);
}

static void val_move(const dq_gsm *g, dq_gsm_layer *L, int w, int r) {
  if (!g->q8) {
    memcpy(row_at(g, L->v, w), row_at(g, L->v, r), g->row_bytes);
    return;
  }
  for (int h = 0; h < g->c.n_head_kv; h++)
    dq_attn_q8_move_value(q8_vpanel(g, L->v, w, h), w % DQ_ATTN_PANEL,
                          q8_vpanel(g, L->v, r, h), r % DQ_ATTN_PANEL,
                          g->c.head_dim);
}

/* Makes room for `need` rows in layer L (geometric growth, at most cap). */
static dq_status layer_reserve(const dq_gsm *g, dq_gsm_layer *L, int need) {
  if (need <= L->alloc)
    return DQ_OK;
  if (need > L->cap)
    return DQ_ERR_LIMIT;
  int64_t want = (int64_t)L->alloc + L->alloc / 2;
  if (want < need)
    want = need;
  if (want < 256)
    want = 256;
  if (want > L->cap)
    want = L->cap;
  dq_gsm_entry *e = realloc(L->e, (size_t)want * sizeof *e);
  if (!e)
    return DQ_ERR_NOMEM;
  L->e = e;
  /* key panels: whole panels of 16 entries */
  uint8_t *k = realloc(L->k, key_bytes(g, (int)want));
  if (!k)
    return DQ_ERR_NOMEM;
  L->k = k;
  uint8_t *v = realloc(L->v, val_bytes(g, (int)want));
  if (!v)
    return DQ_ERR_NOMEM;
  L->v = v;
  L->alloc = (int)want;
  return DQ_OK;
}

/* Cache positions: gives layer L's entries the positions 0..n-1 again
 * (each key turned back by its old position minus its index), so that the
 * next tokens' positions start at n. */
static void renumber(dq_gsm *g, dq_gsm_layer *L) {
  float *x = g->tmp + 3 * (size_t)g->row_elems; /* append uses tmp[0] */
  for (int r = 0; r < L->n; r++) {
    int d = L->e[r].rpos - r;
    if (d > 0) {
      key_get(g, L, r, x);
      rotate_back(g, x, g->c.n_head_kv, d);
      key_put(g, L, r, x);
    }
    L->e[r].rpos = r;
  }
  L->next_pos = L->n;
  L->n_renumbered++;
}

static void add_entries(dq_gsm *g, dq_gsm_layer *L, int n, int pos0);

/* renumber() with the rows on the device: every key turned back by its
 * shift in one kv_rotate (the shifts uploaded; rare: once per about
 * pos_limit - cap tokens). */
static dq_status renumber_dev(dq_gsm *g, dq_gsm_layer *L) {
  dq_backend *be = g->c.dev;
  for (int r = 0; r < L->n; r++)
    g->delta_host[r] = L->e[r].rpos - r;
  dq_status st = L->n ? be->i.upload(be->ctx, g->delta_dev, g->delta_host,
                                     (size_t)L->n * sizeof(int32_t))
                      : DQ_OK;
  if (st)
    return st;
  be->i.kv_rotate(be->ctx, L->k, key_store(g), L->n, g->c.n_head_kv,
                  g->c.head_dim, g->delta_dev, g->c.rope);
  for (int r = 0; r < L->n; r++)
    L->e[r].rpos = r;
  L->next_pos = L->n;
  L->n_renumbered++;
  return DQ_OK;
}

dq_status dq_gsm_append(dq_gsm *g, int il, const float *k, const float *v,
                        int n, int pos0) {
  if (il < 0 || il >= g->c.n_layer || n < 0)
    return DQ_ERR_ARG;
  dq_gsm_layer *L = &g->layers[il];
  dq_status st = layer_reserve(g, L, L->n + n);
  if (st)
    return st;
  size_t re = (size_t)g->row_elems;
  int cp = layer_cachepos(g, L);
  if (cp && L->next_pos + n > g->pos_limit) {
    if (!g->c.dev)
      renumber(g, L);
    else if ((st = renumber_dev(g, L)))
      return st;
  }
  if (g->c.dev) { /* device rows: k and v are device pointers (with cache
                     positions, keys already rotated: attend_dev) */
    dq_backend *be = g->c.dev;
    be->i.kv_store(be->ctx, L->k, key_store(g), L->n, k, n, g->row_elems);
    be->i.kv_store(be->ctx, L->v, g->c.store, L->n, v, n, g->row_elems);
  } else {
    for (int t = 0; t < n; t++) {
      const float *kr = k + (size_t)t * re;
      if (cp) { /* un-rotated keys arrive: rotate at the next position */
        memcpy(g->tmp, kr, re * sizeof(float));
        rotate(g, g->tmp, g->c.n_head_kv, L->next_pos + t, 1);
        kr = g->tmp;
      }
      key_put(g, L, L->n + t, kr);
      val_put(g, L, L->n + t, v + (size_t)t * re);
    }
  }
  add_entries(g, L, n, pos0);
  return DQ_OK;
}

dq_status dq_gsm_adopt(dq_gsm *g, int il, const void *k, const void *v,
                       int n) {
  if (!g->c.dev || il < 0 || il >= g->c.n_layer || n < 0)
    return DQ_ERR_ARG;
  dq_gsm_layer *L = &g->layers[il];
  if (L->n) /* rows 0..n-1 land at rows 0..n-1 */
    return DQ_ERR_ARG;
  if (n > L->cap)
    return DQ_ERR_LIMIT;
  dq_backend *be = g->c.dev;
  be->i.kv_gather(be->ctx, L->k, k, key_store(g), g->iota_dev, n,
                  g->row_elems);
  be->i.kv_gather(be->ctx, L->v, v, g->c.store, g->iota_dev, n,
                  g->row_elems);
  add_entries(g, L, n, 0);
  return DQ_OK;
}

/* Entries for n raw tokens at positions pos0.. whose rows are in place. */
static void add_entries(dq_gsm *g, dq_gsm_layer *L, int n, int pos0) {
  int cp = layer_cachepos(g, L);
  for (int t = 0; t < n; t++) {
    int p = pos0 + t;
    dq_gsm_entry *e = &L->e[L->n + t];
    memset(e, 0, sizeof *e);
    e->first = e->last = p;
    e->rpos = cp ? L->next_pos + t : p;
    e->count = 1;
    e->n_ranges = 1;
    e->rb[0] = p;
    e->re[0] = p + 1;
    e->kind = DQ_GSM_WINDOW;
    if (L->exact_window <= 0) {
      if (p < g->c.o.n_sink)
        e->kind = DQ_GSM_SINK;
      else if (pinned_at(g, p))
        e->kind = DQ_GSM_PINNED;
    }
  }
  L->n += n;
  if (cp)
    L->next_pos += n;
}

/* ---- attention ----------------------------------------------------------- */

typedef struct attend_job {
  dq_gsm *g;
  int il, n, pos0, n_old, n_ent, tb, slices, n_items;
  const float *q;
  float *out;
  float *acc;         /* per thread: n_ent each */
  float *prob;        /* per thread: DQ_ATTN_QB rows of ps */
  size_t ps;
  float *emass;       /* n_head x n_ent, or NULL */
  const float *kf, *vf; /* the layer's rows in f32, n_ent x row_elems */
  const float *bias;  /* per-entry log weights, or NULL when all 0 */
  int f16;            /* read the layer's F16 key panels and value rows in
                         place (kf, vf unused) */
  int q8;             /* read the layer's 8-bit panels in place */
  int *pinned;        /* indices of the pinned entries, ascending */
  int n_pinned;
  int failed;
} attend_job;

/* Bookkeeping of one query's probabilities beyond the accumulated scores
 * (the kernel adds those into the thread's acc, dq_attn_block.psum):
 * tracked masses, the mass on pinned entries. */
static void account(const attend_job *j, int h, int p, const float *pr,
                    int lo, int hi) {
  const dq_gsm *g = j->g;
  const dq_gsm_track *tr = &g->track;
  if (j->emass && p >= tr->q0 && p < tr->q1) {
    float *em = j->emass + (size_t)h * j->n_ent;
    dq_add(em + lo, em + lo, pr + lo, hi - lo);
  }
  if (tr->qstats && p < tr->stride) {
    float qm = 0;
    for (int i = 0; i < j->n_pinned; i++)
      if (j->pinned[i] >= lo && j->pinned[i] < hi)
        qm += pr[j->pinned[i]];
    tr->qstats[((size_t)j->il * g->c.n_head + h) * tr->stride + p] += qm;
  }
}

static void attend_worker(void *arg, int ith, int nth) {
  attend_job *j = arg;
  dq_gsm *g = j->g;
  const dq_gsm_layer *L = &g->layers[j->il];
  int H = g->c.n_head, hd = g->c.head_dim, re = g->row_elems;
  int group = H / g->c.n_head_kv, W = L->exact_window;
  int per = (group + j->slices - 1) / j->slices;
  float *acc = j->acc + (size_t)ith * j->n_ent;
  size_t kt_elems = g->kt_rows * (size_t)hd;
  dq_attn_block b = {.v_stride = (size_t)re, .bias = j->bias, .n = j->n_ent,
                     .hd = hd, .scale = g->c.scale,
                     .p = j->prob + (size_t)ith * DQ_ATTN_QB * j->ps,
                     .p_stride = j->ps, .psum = acc};
  for (int it = ith; it < j->n_items; it += nth) {
    /* item: (KV head, slice of its query heads, token subset); the
     * heads sharing a KV head share the block's key and value loads */
    int kvh = it / (j->slices * j->tb), sl = it / j->tb % j->slices;
    int hh0 = sl * per, hh1 = hh0 + per < group ? hh0 + per : group;
    int lo = 0, nq = 0, qp[DQ_ATTN_QB], qh[DQ_ATTN_QB];
    if (j->q8) {
      b.kt = q8_kpanel(g, L->k, 0, kvh);
      b.kt_stride = g->kgrp_bytes;
      b.v = q8_vpanel(g, L->v, 0, kvh);
      b.v_stride = g->vgrp_bytes;
      b.q8 = 1;
    } else if (j->f16) {
      b.kt = (const dq_f16 *)(const void *)L->k +
             (size_t)kvh * hd * DQ_ATTN_PANEL;
      b.kt_stride = (size_t)re * DQ_ATTN_PANEL;
      b.v = (const dq_f16 *)(const void *)L->v + (size_t)kvh * hd;
      b.f16 = 1;
    } else {
      b.kt = g->kt + (size_t)kvh * kt_elems;
      b.v = j->vf + (size_t)kvh * hd;
    }
    for (int t = it % j->tb; t < j->n; t += j->tb) {
      int p = j->pos0 + t, hi = j->n_old + t + 1;
      if (W > 0)
        while (lo < hi && p - L->e[lo].last >= W)
          lo++;
      for (int hh = hh0; hh < hh1; hh++) {
        int h = kvh * group + hh;
        b.q[nq] = j->q + ((size_t)t * H + h) * hd;
        b.o[nq] = j->out + ((size_t)t * H + h) * hd;
        b.lo[nq] = lo;
        b.hi[nq] = hi;
        qp[nq] = p;
        qh[nq] = h;
        if (++nq == DQ_ATTN_QB || (t + j->tb >= j->n && hh == hh1 - 1)) {
          b.nq = nq;
          dq_attn_run(g->c.caps, &b);
          if (j->emass || g->track.qstats)
            for (int i = 0; i < nq; i++)
              account(j, qh[i], qp[i], b.p + (size_t)i * j->ps,
                      (int)b.lo[i], (int)b.hi[i]);
          nq = 0;
        }
      }
    }
  }
}

/* Converts rows [0, n) of one layer to the f32 scratch (unless `convert`
 * is 0: the rows are f32 already) and packs the keys per KV head; items
 * are panel-aligned row ranges. */
typedef struct conv_job {
  dq_gsm *g;
  const dq_gsm_layer *L;
  int n, convert;
  const float *kf;
} conv_job;

static void conv_rows(conv_job *c, int r0, int r1) {
  size_t re = (size_t)c->g->row_elems;
  if (c->convert && c->g->c.store == DQ_STORE_F16) {
    /* values are contiguous halves: one vector conversion per range; keys
     * come out of their panels */
    size_t ne = (size_t)(r1 - r0) * re;
    for (int r = r0; r < r1; r++)
      key_get(c->g, c->L, r, c->g->kf + (size_t)r * re);
    dq_f16_to_f32_row(c->g->c.caps, (const dq_f16 *)(const void *)row_at(
                          c->g, c->L->v, r0),
                      c->g->vf + (size_t)r0 * re, (int64_t)ne);
  } else if (c->convert) {
    for (int r = r0; r < r1; r++) {
      key_get(c->g, c->L, r, c->g->kf + (size_t)r * re);
      row_get(c->g, row_at(c->g, c->L->v, r), c->g->vf + (size_t)r * re);
    }
  }
  int hd = c->g->c.head_dim;
  for (int kvh = 0; kvh < c->g->c.n_head_kv; kvh++)
    dq_attn_pack_k(c->kf + (size_t)kvh * hd, re, r0, r1, c->n, hd,
                   c->g->kt + (size_t)kvh * c->g->kt_rows * hd);
}

static void conv_worker(void *arg, int ith, int nth) {
  conv_job *c = arg;
  int per = (c->n + nth - 1) / nth;
  per = (per + DQ_ATTN_PANEL - 1) / DQ_ATTN_PANEL * DQ_ATTN_PANEL;
  int r0 = per * ith < c->n ? per * ith : c->n, r1 = r0 + per;
  if (r1 > c->n)
    r1 = c->n;
  if (r0 < r1)
    conv_rows(c, r0, r1);
}

static dq_status grow(float **buf, size_t *have, size_t want, size_t cap,
                      size_t elems_per_row) {
  if (want <= *have)
    return DQ_OK;
  size_t rows = want + want / 2 > cap ? (want > cap ? want : cap) : want + want / 2;
  float *p = realloc(*buf, rows * elems_per_row * sizeof(float));
  if (!p)
    return DQ_ERR_NOMEM;
  *buf = p;
  *have = rows;
  return DQ_OK;
}

/* Points j->kf / j->vf at the layer's rows in f32 (the rows themselves for
 * an F32 cache, else the converted scratch) and packs the keys into g->kt. */
static dq_status layer_f32(dq_gsm *g, const dq_gsm_layer *L, attend_job *j) {
  if (key_panels(g)) { /* the kernel reads the layer's own rows and panels */
    j->q8 = g->q8;
    j->f16 = !g->q8;
    return DQ_OK;
  }
  int convert = g->c.store != DQ_STORE_F32;
  size_t cap = (size_t)dq_attn_padded(L->cap);
  if (convert) {
    size_t have = g->scratch_rows;
    dq_status st = grow(&g->kf, &have, (size_t)L->n, (size_t)L->cap,
                        (size_t)g->row_elems);
    if (!st) {
      have = g->scratch_rows;
      st = grow(&g->vf, &have, (size_t)L->n, (size_t)L->cap,
                (size_t)g->row_elems);
    }
    if (st)
      return st;
    g->scratch_rows = have;
  }
  size_t padded = (size_t)dq_attn_padded(L->n);
  if (padded > g->kt_rows) {
    /* per-KV-head blocks of kt_rows rows: regrow means repack anyway */
    size_t rows = padded + padded / 2 < cap ? padded + padded / 2 : cap;
    rows = rows < padded ? padded : (size_t)dq_attn_padded((int64_t)rows);
    float *p = realloc(g->kt, rows * (size_t)g->c.n_head_kv * g->c.head_dim *
                                  sizeof(float));
    if (!p)
      return DQ_ERR_NOMEM;
    g->kt = p;
    g->kt_rows = rows;
  }
  j->kf = convert ? g->kf : (const float *)(const void *)L->k;
  j->vf = convert ? g->vf : (const float *)(const void *)L->v;
  conv_job c = {.g = g, .L = L, .n = L->n, .convert = convert, .kf = j->kf};
  if (g->pool && L->n >= 256)
    dq_threadpool_run(g->pool, conv_worker, &c);
  else
    conv_worker(&c, 0, 1);
  return DQ_OK;
}

/* Merged slots weigh in by the log of the tokens they stand for (entry
 * logw, added to its logits): whether any of the layer's entries does, and
 * the weights of its entries 0..n-1 into dst (attention's per-key bias). */
static int weighted(const dq_gsm_layer *L) {
  for (int e = 0; e < L->n; e++)
    if (L->e[e].logw != 0)
      return 1;
  return 0;
}
static void put_weights(const dq_gsm_layer *L, float *dst) {
  for (int e = 0; e < L->n; e++)
    dst[e] = L->e[e].logw;
}

/* Spreads mass m of entry e over its source tokens in a stats row. */
static void spread(const dq_gsm_entry *e, float m, float *row, int stride) {
  int64_t len = 0;
  for (int r = 0; r < e->n_ranges; r++)
    len += e->re[r] - e->rb[r];
  if (len <= 0)
    return;
  float per = m / (float)len;
  for (int r = 0; r < e->n_ranges; r++)
    for (int p = e->rb[r]; p < e->re[r] && p < stride; p++)
      row[p] += per;
}

/* After an attend of layer il: the last layer's closes a chunk. */
static void chunk_done(dq_gsm *g, int il) {
  if (il == g->c.n_layer - 1) {
    g->n_chunks++;
    size_t b = dq_gsm_used_bytes(g);
    if (b > g->peak_bytes)
      g->peak_bytes = b;
  }
}

/* Device rows, statistics of queries [q0, q1) (gsm.h track.stats): their
 * attention once more, before the chunk's (the call a, its queries narrowed
 * to those, output to a scratch), its per-head entry masses downloaded and spread
 * over the source tokens on the host, into the layer's rows of the
 * statistics (a backend buffer: downloaded, added to, uploaded; only the
 * chunks of the tracked queries, the probe's in recall, pay for this). */
static dq_status track_dev(dq_gsm *g, int il, const dq_attn *a, int n_old,
                           int pos0) {
  dq_backend *be = g->c.dev;
  const dq_gsm_track *tr = &g->track;
  const dq_gsm_layer *L = &g->layers[il];
  int H = g->c.n_head, hd = g->c.head_dim;
  size_t S = (size_t)g->stride, TS = (size_t)tr->stride;
  int t0 = tr->q0 - pos0 > 0 ? tr->q0 - pos0 : 0;
  int t1 = tr->q1 - pos0 < a->n_tok ? tr->q1 - pos0 : a->n_tok;
  if (!g->trk_out &&
      dev_buf(g, (size_t)g->c.max_chunk * H * hd * sizeof(float),
              (void **)&g->trk_out))
    return DQ_ERR_NOMEM;
  if (!g->trk_em && !(g->trk_em = malloc((size_t)H * S * sizeof(float))))
    return DQ_ERR_NOMEM;
  if (!g->trk_rows && !(g->trk_rows = malloc((size_t)H * TS * sizeof(float))))
    return DQ_ERR_NOMEM;
  /* before the chunk's attention: stats_dev is zero (sum_rows) */
  dq_attn b = *a;
  b.q = a->q + (size_t)t0 * H * hd;
  b.n_tok = t1 - t0;
  b.pos0 = n_old + t0;
  b.out = g->trk_out;
  b.qmass = NULL;
  dq_status st = be->i.attention(be->ctx, &b);
  if (!st)
    st = be->i.download(be->ctx, g->trk_em, g->stats_dev,
                        (size_t)H * S * sizeof(float));
  /* zeroes stats_dev for the chunk's attention (the sums go to the
   * layer's score row, which that attention's sums then overwrite) */
  be->i.sum_rows(be->ctx, g->stats_dev, H, S, L->n,
                 g->score_dev + (size_t)il * S);
  float *rows = tr->stats + (size_t)il * H * TS;
  if (!st)
    st = be->i.download(be->ctx, g->trk_rows, rows, (size_t)H * TS * 4);
  if (st)
    return st;
  for (int h = 0; h < H; h++)
    for (int e = 0; e < L->n; e++) {
      float m = g->trk_em[(size_t)h * S + e];
      if (m > 0)
        spread(&L->e[e], m, g->trk_rows + (size_t)h * TS, tr->stride);
    }
  return be->i.upload(be->ctx, rows, g->trk_rows, (size_t)H * TS * 4);
}

/* Device rows: the buffers of the merged slots' log weights, one slot of
 * `stride` per layer, allocated on first use; the host side page-locked
 * where the backend has that (bias_pinned: uploads queued without a
 * wait). */
static dq_status bias_bufs(dq_gsm *g) {
  dq_backend *be = g->c.dev;
  size_t n_bytes = (size_t)g->c.n_layer * g->stride * sizeof(float);
  if (!g->bias_dev && dev_buf(g, n_bytes, (void **)&g->bias_dev))
    return DQ_ERR_NOMEM;
  if (g->bias_host)
    return DQ_OK;
  g->bias_pinned = be->i.host_alloc && be->i.upload_async &&
                   !be->i.host_alloc(be->ctx, n_bytes, (void **)&g->bias_host);
  if (!g->bias_pinned && !(g->bias_host = malloc(n_bytes)))
    return DQ_ERR_NOMEM;
  return DQ_OK;
}

/* Device rows: the layer read as a causal cache by the backend's
 * attention (entry i = row i; the chunk's queries at rows n_old.., so each
 * sees every retained entry and the chunk's earlier keys; a sliding-window
 * layer's rows are consecutive positions, so row distances are position
 * distances), its per-head masses summed into the layer's score row. */
static dq_status attend_dev(dq_gsm *g, int il, const float *q, const float *k,
                            const float *v, int n, int pos0, float *out) {
  dq_gsm_layer *L = &g->layers[il];
  dq_status st;
  if ((g->attended[il] || g->pend_seen[il] >= 0) && (st = dq_gsm_flush(g)))
    return st;
  dq_backend *be = g->c.dev;
  if (layer_cachepos(g, L)) {
    /* queries and keys at the layer's next positions, in place */
    if (L->next_pos + n > g->pos_limit && (st = renumber_dev(g, L)))
      return st;
    const int32_t *pos = g->pos_dev + L->next_pos;
    be->i.rope(be->ctx, (float *)(uintptr_t)q, n, g->c.n_head,
               g->c.head_dim, pos, g->c.rope);
    be->i.rope(be->ctx, (float *)(uintptr_t)k, n, g->c.n_head_kv,
               g->c.head_dim, pos, g->c.rope);
  }
  int n_old = L->n;
  if ((st = dq_gsm_append(g, il, k, v, n, pos0)))
    return st;
  dq_attn a = {.q = q, .k = L->k, .v = L->v, .store = g->c.store,
               .n_tok = n, .pos0 = n_old, .n_kv = L->n,
               .n_head = g->c.n_head, .n_head_kv = g->c.n_head_kv,
               .head_dim = g->c.head_dim, .causal = 1,
               .window = L->exact_window, .scale = g->c.scale, .out = out,
               .stats = g->stats_dev, .stats_stride = g->stride,
               .stats_q0 = 0, .stats_q1 = INT_MAX};
  if (weighted(L)) {
    /* a slot per layer, queued without a wait where the host side is
     * page-locked: each slot is rewritten only after a flush has waited */
    size_t S = (size_t)g->stride;
    if ((st = bias_bufs(g)))
      return st;
    float *bh = g->bias_host + (size_t)il * S, *bd = g->bias_dev + il * S;
    put_weights(L, bh);
    if ((st = (g->bias_pinned ? be->i.upload_async : be->i.upload)(
             be->ctx, bd, bh, (size_t)L->n * sizeof(float))))
      return st;
    a.bias = bd;
  }
  if (g->track.qstats && L->exact_window <= 0) {
    /* each query's mass on the pinned entries: one run of rows (gsm.h) */
    int i0 = 0, i1 = 0;
    while (i0 < L->n && L->e[i0].kind != DQ_GSM_PINNED)
      i0++;
    for (i1 = i0; i1 < L->n && L->e[i1].kind == DQ_GSM_PINNED;)
      i1++;
    for (int e = i1; e < L->n; e++)
      if (L->e[e].kind == DQ_GSM_PINNED)
        return DQ_ERR_UNSUPPORTED;
    a.qmass = g->track.qstats +
              ((size_t)il * g->c.n_head * g->track.stride + pos0);
    a.qmass_stride = g->track.stride;
    a.qmass_lo = i0;
    a.qmass_hi = i1;
  }
  const dq_gsm_track *tr = &g->track;
  if (tr->stats && pos0 < tr->q1 && pos0 + n > tr->q0 &&
      (st = track_dev(g, il, &a, n_old, pos0)))
    return st;
  if ((st = be->i.attention(be->ctx, &a)))
    return st;
  be->i.sum_rows(be->ctx, g->stats_dev, g->c.n_head, (size_t)g->stride, L->n,
                 g->score_dev + (size_t)il * g->stride);
  g->attended[il] = 1;
  chunk_done(g, il);
  return DQ_OK;
}

dq_status dq_gsm_attend(dq_gsm *g, int il, const float *q, const float *k,
                        const float *v, int n, int pos0, float *out) {
  if (il < 0 || il >= g->c.n_layer || n <= 0)
    return DQ_ERR_ARG;
  dq_gsm_layer *L = &g->layers[il];
  int n_old = L->n;
  if (n_old && L->e[n_old - 1].last >= pos0)
    return DQ_ERR_ARG;
  if (g->c.dev)
    return attend_dev(g, il, q, k, v, n, pos0, out);
  dq_status st = dq_gsm_append(g, il, k, v, n, pos0);
  if (st)
    return st;
  int nth = g->pool ? dq_threadpool_size(g->pool) : 1;
  attend_job j = {.g = g, .il = il, .n = n, .pos0 = pos0, .n_old = n_old,
                  .n_ent = L->n, .q = q, .out = out};
  if ((st = layer_f32(g, L, &j)))
    return st;
  if (layer_cachepos(g, L)) {
    /* queries at the positions their keys were given */
    size_t qe = (size_t)n * g->c.n_head * g->c.head_dim;
    if (qe > g->qrot_elems) {
      float *p = realloc(g->qrot, qe * sizeof *p);
      if (!p)
        return DQ_ERR_NOMEM;
      g->qrot = p;
      g->qrot_elems = qe;
    }
    memcpy(g->qrot, q, qe * sizeof *q);
    for (int t = 0; t < n; t++)
      rotate(g, g->qrot + (size_t)t * g->c.n_head * g->c.head_dim,
             g->c.n_head, L->e[n_old + t].rpos, 1);
    j.q = g->qrot;
  }
  int tracking = g->track.stats && pos0 < g->track.q1 && pos0 + n > g->track.q0;
  /* items: (KV head, slice of its query heads, interleaved token subset),
   * about two per thread; with statistics one head's entry masses are
   * written by one thread only (one token subset) */
  int n_kv = g->c.n_head_kv, group = g->c.n_head / n_kv;
  j.tb = tracking ? 1 : (2 * nth + n_kv - 1) / n_kv;
  if (j.tb > n)
    j.tb = n;
  j.slices = (2 * nth + n_kv * j.tb - 1) / (n_kv * j.tb);
  if (j.slices > group)
    j.slices = group;
  j.n_items = n_kv * j.slices * j.tb;
  if ((int64_t)n * j.n_ent < 4096)
    nth = 1;
  if (weighted(L)) {
    if ((st = grow(&g->bias, &g->bias_rows, (size_t)j.n_ent, (size_t)L->cap, 1)))
      return st;
    put_weights(L, g->bias);
    j.bias = g->bias;
  }
  j.ps = (size_t)dq_attn_padded(j.n_ent);
  j.acc = malloc(((size_t)nth * j.n_ent + (size_t)nth * DQ_ATTN_QB * j.ps) *
                 sizeof(float));
  if (!j.acc)
    return DQ_ERR_NOMEM;
  if (g->track.qstats) {
    if (!(j.pinned = malloc((size_t)j.n_ent * sizeof(int)))) {
      free(j.acc);
      return DQ_ERR_NOMEM;
    }
    for (int e = 0; e < j.n_ent; e++)
      if (L->e[e].kind == DQ_GSM_PINNED)
        j.pinned[j.n_pinned++] = e;
  }
  j.prob = j.acc + (size_t)nth * j.n_ent;
  memset(j.acc, 0, (size_t)nth * j.n_ent * sizeof(float));
  if (tracking &&
      !(j.emass = calloc((size_t)g->c.n_head * j.n_ent, sizeof(float)))) {
    free(j.acc);
    free(j.pinned);
    return DQ_ERR_NOMEM;
  }
  if (nth > 1)
    dq_threadpool_run(g->pool, attend_worker, &j);
  else
    attend_worker(&j, 0, 1);
  /* pool threads beyond nth exit at once: attend_worker strides by nth,
   * so with the pool every thread index < pool size takes part */
  for (int t = 0; t < nth; t++)
    for (int e = 0; e < j.n_ent; e++)
      L->e[e].score += j.acc[(size_t)t * j.n_ent + e];
  if (j.emass) {
    for (int h = 0; h < g->c.n_head; h++) {
      float *row = g->track.stats +
                   ((size_t)il * g->c.n_head + h) * g->track.stride;
      for (int e = 0; e < j.n_ent; e++) {
        float m = j.emass[(size_t)h * j.n_ent + e];
        if (m > 0)
          spread(&L->e[e], m, row, g->track.stride);
      }
    }
  }
  free(j.emass);
  free(j.pinned);
  free(j.acc);
  chunk_done(g, il);
  return DQ_OK;
}

/* ---- compression ------------------------------------------------------- */

/* a gets the union of a's and b's ranges (sorted, touching ranges joined,
 * at most DQ_GSM_MAX_RANGES: the closest pair is joined beyond that). */
static void ranges_union(dq_gsm_entry *a, const dq_gsm_entry *b) {
  int32_t rb[2 * DQ_GSM_MAX_RANGES], rr[2 * DQ_GSM_MAX_RANGES];
  int n = 0, i = 0, k = 0;
  while (i < a->n_ranges || k < b->n_ranges) {
    int take_a = k >= b->n_ranges ||
                 (i < a->n_ranges && a->rb[i] <= b->rb[k]);
    int32_t s = take_a ? a->rb[i] : b->rb[k];
    int32_t e = take_a ? a->re[i] : b->re[k];
    if (take_a)
      i++;
    else
      k++;
    if (n && s <= rr[n - 1]) {
      if (e > rr[n - 1])
        rr[n - 1] = e;
    } else {
      rb[n] = s;
      rr[n] = e;
      n++;
    }
  }
  while (n > DQ_GSM_MAX_RANGES) {
    int best = 0;
    for (int r = 1; r + 1 < n; r++)
      if (rb[r + 1] - rr[r] < rb[best + 1] - rr[best])
        best = r;
    rr[best] = rr[best + 1];
    for (int r = best + 1; r + 1 < n; r++) {
      rb[r] = rb[r + 1];
      rr[r] = rr[r + 1];
    }
    n--;
  }
  a->n_ranges = (uint8_t)n;
  memcpy(a->rb, rb, (size_t)n * sizeof *rb);
  memcpy(a->re, rr, (size_t)n * sizeof *rr);
}

/* The entry side of a merge of b into a (its rows merged already). */
static void merge_entries(dq_gsm_layer *L, dq_gsm_entry *a,
                          const dq_gsm_entry *b) {
  a->count += b->count;
  a->score += b->score;
  if (b->first < a->first)
    a->first = b->first;
  if (b->last > a->last)
    a->last = b->last;
  ranges_union(a, b);
  a->logw = logf((float)a->count);
  L->n_merged++;
}

/* Merges entry j into entry i: count-weighted mean of keys and values. */
static void merge_into(dq_gsm *g, dq_gsm_layer *L, int i, int j) {
  dq_gsm_entry *a = &L->e[i], *b = &L->e[j];
  size_t re = (size_t)g->row_elems;
  float wa = (float)a->count / (float)(a->count + b->count);
  float *ka = g->tmp, *va = ka + re, *kb = va + re, *vb = kb + re;
  key_get(g, L, i, ka);
  val_get(g, L, i, va);
  key_get(g, L, j, kb);
  val_get(g, L, j, vb);
  dq_kv_mix(ka, kb, wa, re);
  dq_kv_mix(va, vb, wa, re);
  key_put(g, L, i, ka);
  val_put(g, L, i, va);
  merge_entries(L, a, b);
}

static float key_sim(dq_gsm *g, const dq_gsm_layer *L, int i, int j) {
  float *ki = g->tmp, *kj = g->tmp + g->row_elems;
  key_get(g, L, i, ki);
  key_get(g, L, j, kj);
  return dq_kv_sim(ki, kj, g->c.n_head_kv, g->c.head_dim);
}

void dq_gsm_scan(float *a, float *b, int n, int dim, float *tmp) {
  /* Hillis-Steele: after the step with offset d, element t holds the
   * composition of maps t-2d+1..t. Composing (a1, b1) then (a2, b2) gives
   * (a1 a2, a2 b1 + b2). Each step reads the previous step's copy. */
  float *pa = tmp, *pb = tmp + n;
  for (int d = 1; d < n; d *= 2) {
    memcpy(pa, a, (size_t)n * sizeof *a);
    memcpy(pb, b, (size_t)n * dim * sizeof *b);
    for (int t = d; t < n; t++) { /* independent across t: parallel */
      float at = pa[t];
      for (int x = 0; x < dim; x++)
        b[(size_t)t * dim + x] =
            at * pb[(size_t)(t - d) * dim + x] + pb[(size_t)t * dim + x];
      a[t] = pa[t - d] * at;
    }
  }
}

/* Device rows, merges: the rows a merge reads are copied to host memory
 * and the layer's row pointers turned to that copy, so the host's merges
 * run unchanged; afterwards the rows they wrote go back and the pointers
 * return (compaction stays a gather on the device). A time_decay fold
 * touches the slack + 1 oldest memory entries (a few rows, whole F16 key
 * panels) and writes one (on a backend without kv_fold: fold_queue);
 * similarity, on a backend without kv_merge (merge_queue), compares and
 * merges neighbours across the memory, so its
 * range is the memory's (about memory_slots rows, down and up once per
 * merge batch). The copy sits at the rows' own
 * offsets in a host buffer of one layer (rows outside the range are not
 * valid there). Layers stage one at a time (dq_gsm_flush compresses them
 * in turn). */
static void key_span(const dq_gsm *g, int r0, int r1, size_t *off,
                     size_t *len) {
  if (key_panels(g)) { /* device rows: F16 panels of 16 rows */
    r0 = r0 / DQ_ATTN_PANEL * DQ_ATTN_PANEL;
    r1 = (r1 + DQ_ATTN_PANEL - 1) / DQ_ATTN_PANEL * DQ_ATTN_PANEL;
  }
  *off = (size_t)r0 * g->row_bytes;
  *len = (size_t)(r1 - r0) * g->row_bytes;
}

static int stage_rows(dq_gsm *g, dq_gsm_layer *L, int r0, int r1) {
  dq_backend *be = g->c.dev;
  if (!g->stage_k) {
    g->stage_k = malloc(key_bytes(g, g->stride));
    g->stage_v = malloc(val_bytes(g, g->stride));
    if (!g->stage_k || !g->stage_v)
      return -1;
  }
  size_t ko, kl;
  key_span(g, r0, r1, &ko, &kl);
  size_t vo = (size_t)r0 * g->row_bytes, vl = (size_t)(r1 - r0) * g->row_bytes;
  if (be->i.download(be->ctx, g->stage_k + ko, L->k + ko, kl) ||
      be->i.download(be->ctx, g->stage_v + vo, L->v + vo, vl)) {
    g->stage_failed = 1;
    return -1;
  }
  g->stage_dk = L->k;
  g->stage_dv = L->v;
  L->k = g->stage_k;
  L->v = g->stage_v;
  return 0;
}

/* Rows [r0, r1) back to the device (keys: their whole panels, which were
 * staged); the layer's pointers to the device again. */
static int unstage_rows(dq_gsm *g, dq_gsm_layer *L, int r0, int r1) {
  dq_backend *be = g->c.dev;
  L->k = g->stage_dk;
  L->v = g->stage_dv;
  size_t ko, kl, vo = (size_t)r0 * g->row_bytes;
  key_span(g, r0, r1, &ko, &kl);
  if (be->i.upload(be->ctx, L->k + ko, g->stage_k + ko, kl) ||
      be->i.upload(be->ctx, L->v + vo, g->stage_v + vo,
                   (size_t)(r1 - r0) * g->row_bytes)) {
    g->stage_failed = 1;
    return -1;
  }
  return 0;
}

static void compact(dq_gsm *g, dq_gsm_layer *L, const uint8_t *drop,
                    int count_evicted);

/* The similarity merges' buffers (merge_queue), host and device. */
static void mg_free(dq_gsm *g) {
  free(g->mg_jobs);
  free(g->mg_layer);
  free(g->mg_host);
  free(g->mg_pairs);
  free(g->mg_drop);
  if (g->c.dev) {
    dev_free(g, g->mg_dev);
    dev_free(g, g->mg_pairs_dev);
    dev_free(g, g->mg_scratch);
  }
  g->mg_jobs = NULL;
  g->mg_layer = NULL;
  g->mg_host = g->mg_pairs = g->mg_dev = g->mg_pairs_dev = NULL;
  g->mg_drop = NULL;
  g->mg_scratch = NULL;
}

/* Device rows with the backend's kv_merge: layer L's similarity merges
 * (memory rows mi[0..m), n_merge merges) queued for dq_gsm_flush's one
 * call (merges_run); -1 when the buffers cannot be had (the caller stages
 * the rows instead). */
static int merge_queue(dq_gsm *g, dq_gsm_layer *L, const int *mi, int m,
                       int n_merge) {
  size_t NS = (size_t)g->c.n_layer * g->stride, nl = (size_t)g->c.n_layer;
  if (!g->mg_jobs) {
    g->mg_jobs = malloc(nl * sizeof *g->mg_jobs);
    g->mg_layer = malloc(nl * sizeof *g->mg_layer);
    g->mg_host = malloc(2 * NS * sizeof *g->mg_host);
    g->mg_pairs = malloc(2 * NS * sizeof *g->mg_pairs);
    g->mg_drop = malloc((size_t)g->stride + 1);
    if (!g->mg_jobs || !g->mg_layer || !g->mg_host || !g->mg_pairs ||
        !g->mg_drop || dev_buf(g, 2 * NS * 4, (void **)&g->mg_dev) ||
        dev_buf(g, 2 * NS * 4, (void **)&g->mg_pairs_dev) ||
        dev_buf(g, 16 * NS, &g->mg_scratch)) {
      mg_free(g); /* all or nothing: the next try starts over */
      return -1;
    }
  }
  int off = g->mg_rows;
  for (int i = 0; i < m; i++) {
    g->mg_host[off + i] = mi[i];
    g->mg_host[NS + (size_t)off + i] = L->e[mi[i]].count;
  }
  g->mg_jobs[g->mg_n] = (dq_kv_merge_job){L->k, L->v, off, m, n_merge};
  g->mg_layer[g->mg_n++] = (int)(L - g->layers);
  g->mg_rows += m;
  return 0;
}

/* The queued merges in one kv_merge (rows and counts up, the merges made
 * down: one wait), then each layer's entries merged in the same order and
 * compacted. After a failed copy or call the entries stay as they were
 * and flush reports the device's failure (the rows are then unknown: the
 * sequence cannot go on). */
static void merges_run(dq_gsm *g) {
  if (!g->mg_n)
    return;
  dq_backend *be = g->c.dev;
  size_t NS = (size_t)g->c.n_layer * g->stride, R = (size_t)g->mg_rows;
  dq_kv_merge a = {.jobs = g->mg_jobs, .n_jobs = g->mg_n,
                   .store_k = key_store(g), .store_v = g->c.store,
                   .n_head_kv = g->c.n_head_kv, .head_dim = g->c.head_dim,
                   .rows = g->mg_dev, .count = g->mg_dev + NS,
                   .pairs = g->mg_pairs_dev, .scratch = g->mg_scratch};
  int n = g->mg_n;
  g->mg_n = g->mg_rows = 0;
  if (be->i.upload(be->ctx, g->mg_dev, g->mg_host, R * 4) ||
      be->i.upload(be->ctx, g->mg_dev + NS, g->mg_host + NS, R * 4) ||
      be->i.kv_merge(be->ctx, &a) ||
      be->i.download(be->ctx, g->mg_pairs, g->mg_pairs_dev, 2 * R * 4)) {
    g->stage_failed = 1;
    return;
  }
  for (int q = 0; q < n; q++) {
    const dq_kv_merge_job *J = &g->mg_jobs[q];
    dq_gsm_layer *L = &g->layers[g->mg_layer[q]];
    const int32_t *mi = g->mg_host + J->off, *pr = g->mg_pairs + 2 * J->off;
    memset(g->mg_drop, 0, (size_t)L->n);
    for (int t = 0; t < J->n_merge && pr[2 * t] >= 0; t++) {
      merge_entries(L, &L->e[mi[pr[2 * t]]], &L->e[mi[pr[2 * t + 1]]]);
      g->mg_drop[mi[pr[2 * t + 1]]] = 1;
    }
    compact(g, L, g->mg_drop, 0);
  }
}

/* time_decay's gates a[0..m) of the memory entries mi[0..m) (oldest
 * first): a_t = w / (w + c_t), w = gamma^gap * (tokens folded before t). */
static void fold_gates(const dq_gsm_layer *L, const int *mi, int m,
                       int window, float *a) {
  float gamma = expf(-1.0f / (float)(window > 0 ? window : 1));
  double folded = 0;
  for (int t = 0; t < m; t++) {
    const dq_gsm_entry *e = &L->e[mi[t]];
    float at = 0;
    if (t > 0) {
      int gap = e->first - L->e[mi[t - 1]].last;
      double w = pow(gamma, gap > 0 ? gap : 0) * folded;
      at = (float)(w / (w + e->count));
    }
    folded += e->count;
    a[t] = at;
  }
}

/* The entry side of a fold of mi[1..m) into mi[0] (its rows folded). */
static void fold_entries(dq_gsm_layer *L, const int *mi, int m) {
  dq_gsm_entry *s = &L->e[mi[0]];
  for (int t = 1; t < m; t++) {
    dq_gsm_entry *e = &L->e[mi[t]];
    s->count += e->count;
    s->score += e->score;
    if (e->last > s->last)
      s->last = e->last;
    ranges_union(s, e);
    L->n_merged++;
  }
  s->logw = 0;
}

/* time_decay: folds memory entries mi[0..m) (oldest first) into mi[0]. */
static int fold_oldest(dq_gsm *g, dq_gsm_layer *L, const int *mi, int m,
                       int window) {
  size_t re = (size_t)g->row_elems, dim = 2 * re;
  float *a = malloc((size_t)m * sizeof *a);
  float *b = malloc((size_t)m * dim * sizeof *b);
  float *tmp = malloc((size_t)m * (dim + 1) * sizeof *tmp);
  if (!a || !b || !tmp) {
    free(a);
    free(b);
    free(tmp);
    return -1;
  }
  fold_gates(L, mi, m, window, a);
  for (int t = 0; t < m; t++) {
    float *bt = b + (size_t)t * dim;
    key_get(g, L, mi[t], bt);
    val_get(g, L, mi[t], bt + re);
    for (size_t x = 0; x < dim; x++)
      bt[x] *= 1 - a[t];
  }
  dq_gsm_scan(a, b, m, (int)dim, tmp);
  key_put(g, L, mi[0], b + (size_t)(m - 1) * dim);
  val_put(g, L, mi[0], b + (size_t)(m - 1) * dim + re);
  fold_entries(L, mi, m);
  free(a);
  free(b);
  free(tmp);
  return 0;
}

/* The time_decay folds' buffers (fold_queue), host and device. */
static void fd_free(dq_gsm *g) {
  free(g->fd_jobs);
  free(g->fd_host);
  free(g->fd_coef);
  if (g->c.dev) {
    dev_free(g, g->fd_dev);
    dev_free(g, g->fd_coef_dev);
    dev_free(g, g->fd_scratch);
  }
  g->fd_jobs = NULL;
  g->fd_host = g->fd_dev = NULL;
  g->fd_coef = g->fd_coef_dev = g->fd_scratch = NULL;
}

/* Device rows with the backend's kv_fold: layer L's fold of its memory
 * rows mi[0..f) into mi[0] queued for dq_gsm_flush's one call (folds_run,
 * before the gathers): the rows and coefficients (the initial scales 1 -
 * a_t, then each scan step's gates, as dq_gsm_scan computes them). -1 when
 * the buffers cannot be had (the caller stages the rows instead). */
static int fold_queue(dq_gsm *g, dq_gsm_layer *L, const int *mi, int f,
                      int window) {
  size_t S = (size_t)g->stride, nl = (size_t)g->c.n_layer;
  /* per layer: its coefficients and the gates' working row */
  size_t per = S * (2 + (size_t)dq_kv_fold_steps(g->stride));
  if (!g->fd_jobs) {
    g->fd_jobs = malloc(nl * sizeof *g->fd_jobs);
    g->fd_host = malloc(nl * S * sizeof *g->fd_host);
    g->fd_coef = malloc(nl * per * sizeof *g->fd_coef);
    if (!g->fd_jobs || !g->fd_host || !g->fd_coef ||
        dev_buf(g, nl * S * 4, (void **)&g->fd_dev) ||
        dev_buf(g, nl * per * 4, (void **)&g->fd_coef_dev) ||
        dev_buf(g, 2 * S * 2 * (size_t)g->row_elems * 4,
                (void **)&g->fd_scratch)) {
      fd_free(g); /* all or nothing: the next try starts over */
      return -1;
    }
  }
  int off = g->fd_rows, n_steps = dq_kv_fold_steps(f);
  float *cf = g->fd_coef + g->fd_ncoef;
  /* the gates' working row after them: a job per layer and flush, f <=
   * stride, so it stays within the layer's `per` */
  float *a = cf + (size_t)f * (1 + n_steps);
  fold_gates(L, mi, f, window, a);
  for (int t = 0; t < f; t++) {
    g->fd_host[off + t] = mi[t];
    cf[t] = 1 - a[t];
  }
  /* dq_gsm_scan's gates: step s reads those before it, then a_t becomes
   * a_{t-d} a_t for t >= d (from the step's copy: t descending) */
  for (int st = 0, d = 1; st < n_steps; st++, d *= 2) {
    float *A = cf + (size_t)f * (1 + st);
    memcpy(A, a, (size_t)f * sizeof *a);
    for (int t = f - 1; t >= d; t--)
      a[t] = A[t - d] * A[t];
  }
  g->fd_jobs[g->fd_n++] = (dq_kv_fold_job){L->k, L->v, off, f,
                                           (int)g->fd_ncoef};
  g->fd_rows += f;
  g->fd_ncoef += (size_t)f * (1 + n_steps);
  return 0;
}

/* The queued folds in one kv_fold (rows and coefficients up; nothing
 * comes back). A failed copy or call: flush reports the device's
 * failure. */
static void folds_run(dq_gsm *g) {
  if (!g->fd_n)
    return;
  dq_backend *be = g->c.dev;
  dq_kv_fold a = {.jobs = g->fd_jobs, .n_jobs = g->fd_n,
                  .store_k = key_store(g), .store_v = g->c.store,
                  .row_elems = g->row_elems, .rows = g->fd_dev,
                  .coef = g->fd_coef_dev, .scratch = g->fd_scratch};
  size_t R = (size_t)g->fd_rows, C = g->fd_ncoef;
  g->fd_n = g->fd_rows = 0;
  g->fd_ncoef = 0;
  if (be->i.upload(be->ctx, g->fd_dev, g->fd_host, R * 4) ||
      be->i.upload(be->ctx, g->fd_coef_dev, g->fd_coef, C * 4) ||
      be->i.kv_fold(be->ctx, &a))
    g->stage_failed = 1;
}

/* Accumulated attention per query that could see the entry: a plain sum
 * favours old tokens only because more queries have passed them. */
static float mean_score(const dq_gsm_entry *e, int n_seen) {
  int seen = n_seen - e->first;
  return e->score / (float)(seen > 0 ? seen : 1);
}

typedef struct rank {
  float score;
  int32_t first;
  int idx;
} rank;

static int rank_asc(const void *x, const void *y) {
  const rank *a = x, *b = y;
  if (a->score != b->score)
    return a->score < b->score ? -1 : 1;
  return a->first < b->first ? -1 : a->first > b->first;
}

/* Puts the k lowest ranks (rank_asc order) first in rk[0..k): a full sort
 * when k is large, else k selection passes, O(k n) - a decode step evicts
 * one token and picks a handful of anchors, where sorting thousands of
 * entries per layer per token would dominate. */
static void lowest_first(rank *rk, int n, int k) {
  if (k <= 0 || n <= 0)
    return;
  if (k > 16 || k >= n) {
    qsort(rk, (size_t)n, sizeof *rk, rank_asc);
    return;
  }
  for (int i = 0; i < k; i++) {
    int best = i;
    for (int j = i + 1; j < n; j++)
      if (rank_asc(&rk[j], &rk[best]) < 0)
        best = j;
    rank t = rk[i];
    rk[i] = rk[best];
    rk[best] = t;
  }
}

/* Removes entries flagged in `drop` keeping order; counts evictions. */
static void compact(dq_gsm *g, dq_gsm_layer *L, const uint8_t *drop,
                    int count_evicted) {
  /* device rows: the moves become a gather map, queued by dq_gsm_flush */
  int il = (int)(L - g->layers);
  int32_t *map = g->c.dev ? g->map_host + (size_t)il * g->stride : NULL;
  int w = 0;
  for (int r = 0; r < L->n; r++) {
    if (drop[r]) {
      if (count_evicted)
        L->n_evicted += L->e[r].count;
      continue;
    }
    if (map)
      map[w] = r;
    if (w != r) {
      L->e[w] = L->e[r];
      if (!map) {
        key_move(g, L, w, r);
        val_move(g, L, w, r);
      }
    }
    w++;
  }
  if (map && w < L->n)
    g->gather_n[il] = w;
  L->n = w;
}

static void compress_layer(dq_gsm *g, int il, int n_seen, int window);

/* Dynamic layers apply the memory budget (reported by the stats). */
static void note_budget(dq_gsm *g, const dq_gsm_layer *L, int n_seen) {
  if (L->dynamic && L->exact_window <= 0)
    g->memory_budget = dq_gsm_budget(g, n_seen);
}

void dq_gsm_compress(dq_gsm *g, int il, int n_seen, int window) {
  if (g->c.dev) { /* run by dq_gsm_flush, once the scores are here */
    g->pend_seen[il] = n_seen;
    g->pend_window[il] = window;
    return;
  }
  double t0 = dq_now_ms();
  compress_layer(g, il, n_seen, window);
  note_budget(g, &g->layers[il], n_seen);
  g->compress_ms += dq_now_ms() - t0;
}

/* dq_gsm_flush's pending compressions, a layer per item (each touches
 * only its own layer: entries, maps, counters). */
typedef struct flush_job {
  dq_gsm *g;
  const int *layers;
  int n;
} flush_job;

static void flush_worker(void *arg, int ith, int nth) {
  flush_job *j = arg;
  for (int i = ith; i < j->n; i += nth) {
    int l = j->layers[i];
    compress_layer(j->g, l, j->g->pend_seen[l], j->g->pend_window[l]);
  }
}

dq_status dq_gsm_flush(dq_gsm *g) {
  if (!g->c.dev)
    return DQ_OK;
  dq_backend *be = g->c.dev;
  int n_l = g->c.n_layer, lo = n_l, hi = -1;
  size_t S = (size_t)g->stride;
  for (int l = 0; l < n_l; l++)
    if (g->attended[l]) {
      lo = l < lo ? l : lo;
      hi = l;
    }
  if (hi >= 0) { /* one download (and wait) for every attended layer */
    dq_status st = be->i.download(be->ctx, g->score_host + lo * S,
                                  g->score_dev + lo * S,
                                  (size_t)(hi - lo + 1) * S * sizeof(float));
    if (st)
      return st;
    for (int l = lo; l <= hi; l++) {
      if (!g->attended[l])
        continue;
      dq_gsm_layer *L = &g->layers[l];
      const float *sc = g->score_host + l * S;
      for (int e = 0; e < L->n; e++)
        L->e[e].score += sc[e];
      g->attended[l] = 0;
    }
  }
  /* the layers' compressions, in parallel: on a GPU the device idles
   * meanwhile */
  double t0 = dq_now_ms();
  int n_pend = 0;
  for (int l = 0; l < n_l; l++)
    if (g->pend_seen[l] >= 0)
      g->pend_list[n_pend++] = l;
  flush_job fj = {g, g->pend_list, n_pend};
  /* merges stage rows through one host buffer: a layer at a time */
  if (g->pool && n_pend > 1 && g->c.o.strategy == DQ_GSM_MERGE_SCORE)
    dq_threadpool_run(g->pool, flush_worker, &fj);
  else
    flush_worker(&fj, 0, 1);
  merges_run(g);
  folds_run(g);
  lo = n_l;
  hi = -1;
  for (int i = 0; i < n_pend; i++) {
    int l = g->pend_list[i];
    note_budget(g, &g->layers[l], g->pend_seen[l]);
    g->pend_seen[l] = -1;
    if (g->gather_n[l] >= 0) {
      lo = l < lo ? l : lo;
      hi = l;
    }
  }
  g->compress_ms += dq_now_ms() - t0;
  if (g->stage_failed) {
    g->stage_failed = 0;
    return DQ_ERR_DEVICE;
  }
  if (hi < 0)
    return DQ_OK;
  dq_status st = be->i.upload(be->ctx, g->map_dev + lo * S,
                              g->map_host + lo * S,
                              (size_t)(hi - lo + 1) * S * sizeof(int32_t));
  if (st)
    return st;
  for (int l = lo; l <= hi; l++) {
    int n = g->gather_n[l];
    if (n < 0)
      continue;
    g->gather_n[l] = -1;
    dq_gsm_layer *L = &g->layers[l];
    const int32_t *map = g->map_dev + l * S;
    int re = g->row_elems;
    /* kept rows to the scratch, then back in place (a gather cannot run
     * in place on the device: rows would be read after being written) */
    be->i.kv_gather(be->ctx, g->kscr, L->k, key_store(g), map, n, re);
    be->i.kv_gather(be->ctx, L->k, g->kscr, key_store(g), g->iota_dev, n, re);
    be->i.kv_gather(be->ctx, g->vscr, L->v, g->c.store, map, n, re);
    be->i.kv_gather(be->ctx, L->v, g->vscr, g->c.store, g->iota_dev, n, re);
  }
  return be->i.error && be->i.error(be->ctx) ? DQ_ERR_DEVICE : DQ_OK;
}

static void compress_layer(dq_gsm *g, int il, int n_seen, int window) {
  dq_gsm_layer *L = &g->layers[il];
  const dq_gsm_opts *o = &g->c.o;
  int n = L->n;
  uint8_t *drop = calloc((size_t)n + 1, 1);
  int *mi = malloc(((size_t)n + 1) * sizeof *mi);
  rank *rk = malloc(((size_t)n + 1) * sizeof *rk);
  if (!drop || !mi || !rk)
    goto done; /* no memory: the layer stays as it is (within its cap
                  only until the next append, which then fails) */
  if (L->exact_window > 0) {
    /* keys past the window are hidden from attention anyway (attend's lo),
     * so they are dropped only once a batch of them is there */
    int stale = 0;
    for (int r = 0; r < n; r++)
      stale += drop[r] = n_seen - L->e[r].last >= L->exact_window;
    if (stale >= DQ_GSM_EVICT_BATCH)
      compact(g, L, drop, 1);
    goto done;
  }
  /* tokens ending before `cut` have left the window; a fixed layer that
   * must drop one drops the next few window tokens with it (its window
   * then holds window - slack .. window tokens) */
  int cut = n_seen - window;
  if (!L->dynamic) {
    int any = 0;
    for (int r = 0; r < n && !any; r++)
      any = L->e[r].kind != DQ_GSM_SINK && L->e[r].kind != DQ_GSM_PINNED &&
            L->e[r].last < cut;
    if (any)
      cut += evict_slack(window);
  }
  int n_cand = 0, n_anchor_kept = 0;
  for (int r = 0; r < n; r++) {
    dq_gsm_entry *e = &L->e[r];
    if (e->kind == DQ_GSM_SINK || e->kind == DQ_GSM_PINNED)
      continue;
    if (e->last >= cut && e->count == 1) {
      e->kind = DQ_GSM_WINDOW;
      continue;
    }
    if (!L->dynamic) {
      drop[r] = 1;
      continue;
    }
    if (e->kind == DQ_GSM_ANCHOR && o->static_anchors) {
      n_anchor_kept++;
      continue;
    }
    e->kind = DQ_GSM_MEMORY;
    if (e->count == 1) {
      rk[n_cand].score = -mean_score(e, n_seen); /* highest first */
      rk[n_cand].first = e->first;
      rk[n_cand].idx = r;
      n_cand++;
    }
  }
  if (!L->dynamic) {
    compact(g, L, drop, 1);
    goto done;
  }
  /* dynamic anchors: the highest-score raw tokens outside the window */
  int want = o->num_global_anchors - n_anchor_kept;
  if (want > 0 && n_cand) {
    lowest_first(rk, n_cand, want);
    for (int i = 0; i < want && i < n_cand; i++)
      L->e[rk[i].idx].kind = DQ_GSM_ANCHOR;
  }
  int m = 0;
  for (int r = 0; r < n; r++)
    if (L->e[r].kind == DQ_GSM_MEMORY)
      mi[m++] = r;
  int budget = dq_gsm_budget(g, n_seen); /* the caller records it */
  /* over the budget: down to `target`, a batch below it */
  int target = budget - evict_slack(budget);
  if (m > budget) {
    if (budget == 0) {
      for (int i = 0; i < m; i++)
        drop[mi[i]] = 1;
      compact(g, L, drop, 1);
    } else if (o->strategy == DQ_GSM_MERGE_SCORE) {
      for (int i = 0; i < m; i++)
        rk[i] = (rank){mean_score(&L->e[mi[i]], n_seen), L->e[mi[i]].first,
                       mi[i]};
      lowest_first(rk, m, m - target);
      for (int i = 0; i < m - target; i++)
        drop[rk[i].idx] = 1;
      compact(g, L, drop, 1);
    } else if (o->strategy == DQ_GSM_MERGE_TIME_DECAY) {
      int f = m - target + 1, dev = g->c.dev != NULL;
      if (dev && g->c.dev->i.kv_fold && fold_queue(g, L, mi, f, window) == 0) {
        fold_entries(L, mi, f); /* the rows: by dq_gsm_flush */
        for (int i = 1; i < f; i++)
          drop[mi[i]] = 1;
        compact(g, L, drop, 0);
        goto done;
      }
      if (dev && stage_rows(g, L, mi[0], mi[f - 1] + 1))
        goto done; /* the layer stays as it is (flush reports a device
                      failure) */
      int folded = fold_oldest(g, L, mi, f, window) == 0;
      if ((!dev || unstage_rows(g, L, mi[0], mi[0] + 1) == 0) && folded) {
        for (int i = 1; i < f; i++)
          drop[mi[i]] = 1;
        compact(g, L, drop, 0);
      }
    } else { /* similarity: neighbours in the memory list */
      if (g->c.dev && g->c.dev->i.kv_merge &&
          merge_queue(g, L, mi, m, m - target) == 0)
        goto done; /* merged where the rows are (dq_gsm_flush) */
      float *sim = malloc((size_t)m * sizeof *sim);
      int *nx = malloc((size_t)m * sizeof *nx);
      int dev = g->c.dev != NULL, r0 = mi[0], r1 = mi[m - 1] + 1;
      if (sim && nx && dev && stage_rows(g, L, r0, r1)) {
        free(sim); /* the layer stays as it is (flush reports a failure) */
        free(nx);
        goto done;
      }
      if (sim && nx) {
        for (int i = 0; i < m; i++) {
          nx[i] = i + 1 < m ? i + 1 : -1;
          sim[i] = nx[i] >= 0 ? key_sim(g, L, mi[i], mi[i + 1]) : -INFINITY;
        }
        for (int left = m; left > target; left--) {
          int best = -1;
          for (int i = 0; i < m; i++)
            if (!drop[mi[i]] && nx[i] >= 0 &&
                (best < 0 || sim[i] > sim[best]))
              best = i;
          if (best < 0)
            break;
          int j = nx[best];
          merge_into(g, L, mi[best], mi[j]);
          drop[mi[j]] = 1;
          nx[best] = nx[j];
          sim[best] = nx[best] >= 0 ? key_sim(g, L, mi[best], mi[nx[best]])
                                    : -INFINITY;
          for (int i = best - 1; i >= 0; i--)
            if (!drop[mi[i]]) {
              sim[i] = key_sim(g, L, mi[i], mi[best]);
              break;
            }
        }
        /* device rows: the merged rows back (the range's, in one copy) */
        if (!dev || unstage_rows(g, L, r0, r1) == 0)
          compact(g, L, drop, 0);
      }
      free(sim);
      free(nx);
    }
  }
done:
  free(drop);
  free(mi);
  free(rk);
}

/* ---- decode steps as graphs ------------------------------------------- */

dq_status dq_gsm_graph_step(dq_gsm *g, int n) {
  if (!g->c.dev || g->track.stats || g->track.qstats)
    return DQ_ERR_UNSUPPORTED;
  dq_status st = dq_gsm_flush(g);
  if (st)
    return st;
  /* attend_dev's renumbering (its shifts uploaded), at the same state:
   * nothing between here and the layer's attend touches its rows */
  int merged = 0;
  for (int l = 0; l < g->c.n_layer; l++) {
    dq_gsm_layer *L = &g->layers[l];
    if (layer_cachepos(g, L) && L->next_pos + n > g->pos_limit &&
        (st = renumber_dev(g, L)))
      return st;
    merged |= weighted(L); /* merges happen in flushes only */
  }
  if (merged && (st = bias_bufs(g)))
    return st;
  if (merged && !g->bias_pinned) /* a plain upload would wait */
    return DQ_ERR_UNSUPPORTED;
  for (int l = 0; l < g->c.n_layer; l++) {
    g->mark_n[l] = g->layers[l].n;
    g->mark_pos[l] = g->layers[l].next_pos;
  }
  g->mark_chunks = g->n_chunks;
  g->mark_peak = g->peak_bytes;
  return DQ_OK;
}

/* The step appended entries (their rows were never written: the ops did
 * not run) and marked its layers attended and pending; the flush before it
 * had left none marked. */
void dq_gsm_graph_undo(dq_gsm *g) {
  for (int l = 0; l < g->c.n_layer; l++) {
    g->layers[l].n = g->mark_n[l];
    g->layers[l].next_pos = g->mark_pos[l];
    g->attended[l] = 0;
    g->pend_seen[l] = -1;
  }
  g->n_chunks = g->mark_chunks;
  g->peak_bytes = g->mark_peak;
}

/* ---- snapshots (coarse recall's second probe) ---------------------------- */

struct dq_gsm_snap {
  int n_seen, window_cur, memory_budget, n_chunks;
  size_t peak_bytes;
  int n_layer;
  struct snap_layer {
    int n, next_pos, n_renumbered;
    int64_t n_evicted, n_merged;
    dq_gsm_entry *e;
    uint8_t *k, *v;
    size_t k_bytes, v_bytes;
  } *l;
};

void dq_gsm_snap_free(dq_gsm_snap *s) {
  if (!s)
    return;
  for (int i = 0; s->l && i < s->n_layer; i++) {
    free(s->l[i].e);
    free(s->l[i].k);
    free(s->l[i].v);
  }
  free(s->l);
  free(s);
}

/* A layer's key and value bytes into a snapshot (to_host) or back: plain
 * copies with rows on the host, else the backend's download / upload. */
static dq_status snap_copy(dq_backend *be, int to_host, void *dk,
                           const void *sk, size_t kb, void *dv,
                           const void *sv, size_t vb) {
  if (!be) {
    memcpy(dk, sk, kb);
    memcpy(dv, sv, vb);
    return DQ_OK;
  }
  dq_status st = to_host ? be->i.download(be->ctx, dk, sk, kb)
                         : be->i.upload(be->ctx, dk, sk, kb);
  if (!st)
    st = to_host ? be->i.download(be->ctx, dv, sv, vb)
                 : be->i.upload(be->ctx, dv, sv, vb);
  return st;
}

dq_status dq_gsm_snapshot(const dq_gsm *g, dq_gsm_snap **out) {
  *out = NULL;
  dq_backend *be = g->c.dev;
  for (int i = 0; be && i < g->c.n_layer; i++)
    if (g->attended[i] || g->pend_seen[i] >= 0)
      return DQ_ERR_ARG; /* not flushed */
  dq_gsm_snap *s = calloc(1, sizeof *s);
  if (!s || !(s->l = calloc((size_t)g->c.n_layer, sizeof *s->l))) {
    free(s);
    return DQ_ERR_NOMEM;
  }
  s->n_layer = g->c.n_layer;
  s->n_seen = g->n_seen;
  s->window_cur = g->window_cur;
  s->memory_budget = g->memory_budget;
  s->n_chunks = g->n_chunks;
  s->peak_bytes = g->peak_bytes;
  for (int i = 0; i < g->c.n_layer; i++) {
    const dq_gsm_layer *L = &g->layers[i];
    struct snap_layer *d = &s->l[i];
    d->n = L->n;
    d->next_pos = L->next_pos;
    d->n_renumbered = L->n_renumbered;
    d->n_evicted = L->n_evicted;
    d->n_merged = L->n_merged;
    /* key panels hold whole groups of 16 entries */
    d->k_bytes = key_bytes(g, L->n);
    d->v_bytes = val_bytes(g, L->n);
    if (!L->n)
      continue;
    d->e = malloc((size_t)L->n * sizeof *d->e);
    d->k = malloc(d->k_bytes);
    d->v = malloc(d->v_bytes);
    if (!d->e || !d->k || !d->v) {
      dq_gsm_snap_free(s);
      return DQ_ERR_NOMEM;
    }
    memcpy(d->e, L->e, (size_t)L->n * sizeof *d->e);
    /* device rows: the queued gathers run before the copies (one stream) */
    dq_status st = snap_copy(be, 1, d->k, L->k, d->k_bytes, d->v, L->v,
                             d->v_bytes);
    if (st) {
      dq_gsm_snap_free(s);
      return st;
    }
  }
  *out = s;
  return DQ_OK;
}

dq_status dq_gsm_restore(dq_gsm *g, const dq_gsm_snap *s) {
  dq_backend *be = g->c.dev;
  g->n_seen = s->n_seen;
  g->window_cur = s->window_cur;
  g->memory_budget = s->memory_budget;
  g->n_chunks = s->n_chunks;
  g->peak_bytes = s->peak_bytes;
  for (int i = 0; i < g->c.n_layer && i < s->n_layer; i++) {
    dq_gsm_layer *L = &g->layers[i];
    const struct snap_layer *d = &s->l[i];
    L->n = d->n; /* alloc only grows: the rows fit */
    L->next_pos = d->next_pos;
    L->n_renumbered = d->n_renumbered;
    L->n_evicted = d->n_evicted;
    L->n_merged = d->n_merged;
    if (be) { /* nothing pending: what came after the snapshot is gone */
      g->attended[i] = 0;
      g->pend_seen[i] = -1;
      g->gather_n[i] = -1;
    }
    if (!d->n)
      continue;
    memcpy(L->e, d->e, (size_t)d->n * sizeof *d->e);
    dq_status st = snap_copy(be, 0, L->k, d->k, d->k_bytes, L->v, d->v,
                             d->v_bytes);
    if (st)
      return st;
  }
  return DQ_OK;
}
