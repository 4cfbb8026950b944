/*
 * gsm.h - private to engine/: the GSM attention cache of one sequence
 * (training-free sparse attention for long inputs) and the attention that
 * reads it. forward.c routes a layer's attention here instead of the
 * backend's full attention once a sequence runs on the GSM path.
 *
 * Per layer the cache is one list of entries kept in source order. An entry
 * is either one token (its key after RoPE at its original position, and its
 * value) or a memory slot standing for several evicted tokens (a merged
 * key/value and the source ranges it represents). Kinds:
 *   SINK    one of the first n_sink tokens        never evicted
 *   PINNED  inside a pinned span (the question)   never evicted
 *   ANCHOR  dynamic anchor: among the num_global_anchors highest
 *           accumulated-attention tokens that left the window
 *   MEMORY  left the window; bounded by the memory budget, compressed by
 *           the strategy (score / time_decay / similarity)
 *   WINDOW  one of the last `window` tokens
 * Attention of a chunk of queries reads every retained entry plus the
 * chunk's own keys causally (inside a chunk every earlier chunk token is
 * visible); after the chunk the layer is compressed back to its budget.
 * gemma3's sliding-window layers keep their own exact window instead
 * (every key with p - pos >= window is hidden, nothing else is kept).
 *
 * Positions (opts.cache_positions): 0 = keys are stored after RoPE at
 * their original positions and queries are rotated at theirs, so relative
 * distances are the true ones and merged slots carry a convex combination
 * of rotated keys; distances grow with the input, so reading past the
 * model's trained context is out of distribution. 1 = cache positions,
 * as StreamingLLM's but renumbered lazily: keys arrive un-rotated and each
 * layer gives each new token the next of its own positions (rpos), so
 * between renumberings distances are the true ones, gaps left by evicted
 * tokens included; when the next chunk would pass pos_limit (the trained
 * context), the layer's entries are renumbered 0..n-1 (each stored key
 * turned back by its old position minus its index: a pure rotation, in
 * place) and new positions continue from n. Keys stay stored rotated, so
 * attention reads them in place as with original positions (StreamingLLM's
 * re-rotation of every key on every step cost a conversion of the whole
 * cache per decoded token). Distances stay below pos_limit however long the
 * input; with nothing evicted and no renumbering both modes give the
 * original positions. A merged slot keeps the position of its first part.
 *
 * Storage: rows are kept in the sequence's KV type (F16 by default, F32 or
 * Q8_0), allocated as the layer grows (never more than its bound). F16
 * keys sit in 16-entry panels and the attention kernel reads keys and
 * values in place, as the full attention path reads its F16 cache; Q8_0
 * keys and values sit in the kernel's 8-bit panels (kernels.h: blocks of
 * 32 per key, one scale per value head) and are read in place by its
 * 8-bit path, whose queries and probabilities are quantized too (head
 * sizes that are multiples of 32, up to 256; other Q8_0 and F32 rows are
 * converted to an f32 scratch per attend call). Merges compute in f32 and
 * store the result back.
 *
 * Rows on the host or on the device. With cfg.dev unset (the CPU
 * backend) rows live in host memory and everything above runs here. With
 * cfg.dev (a GPU backend; tests use it on the CPU backend) the entries
 * stay on the host but the rows live in the backend's buffers, in the
 * sequence's KV cache layout (F16 keys in 16-row panels, values in rows;
 * or F32 / Q8_0 rows), allocated at each layer's bound, and only the
 * backend's ops touch them: kv_store appends, attention reads the layer as
 * a causal cache (row i = entry i; the chunk's queries at rows n_old..),
 * its statistics summed over heads (sum_rows) give the entries' scores,
 * kv_gather compacts. dq_gsm_compress then only records its arguments:
 * dq_gsm_flush, called once per batch, downloads every layer's scores in
 * one copy, compresses on the host and queues the gathers, so a prefill
 * chunk or a decoded token costs one wait. With cache positions the
 * queries and keys (un-rotated, as the forward pass leaves them) are
 * rotated in place on the device at the layer's next positions (the
 * caller's q and k buffers are overwritten), and a renumbering turns the
 * stored keys back with the backend's kv_rotate. Attention statistics:
 * the question mass through the attention's qmass (the pinned entries are
 * one run of rows, so one pinned span), the tracked queries' masses by a
 * second attention over those queries alone, spread on the host (track_dev
 * in gsm.c); snapshots copy the rows to host memory. Merges run where the
 * rows are: similarity's by the backend's kv_merge (every layer pending in
 * a flush in one call; the entries then merged on the host in the order it
 * reports), time_decay's folds by kv_fold (the gates and the scan's
 * coefficients computed on the host, the entries folded there at once);
 * on a backend without those ops they run on the host over the rows they
 * read, copied there and back (stage_rows in gsm.c). Similarity's
 * log-count weights reach the
 * backend's attention as its per-key bias. Device mode takes no cache
 * positions with Q8_0 rows.
 */
#ifndef DQ_ENGINE_GSM_H
#define DQ_ENGINE_GSM_H

#include "backend.h"
#include "engine.h"
#include "kernels.h"

#include <stddef.h>
#include <stdint.h>

enum {
  DQ_GSM_SINK = 0,
  DQ_GSM_PINNED = 1,
  DQ_GSM_ANCHOR = 2,
  DQ_GSM_MEMORY = 3,
  DQ_GSM_WINDOW = 4,
};

/* Source ranges a slot keeps; past this many the two closest ranges are
 * joined (the union then covers the gap too, and `count` stays exact). */
#define DQ_GSM_MAX_RANGES 4

typedef struct dq_gsm_entry {
  int32_t first, last; /* first and last source position represented */
  int32_t rpos;        /* cache positions: the position its key is rotated
                          at (else its original position) */
  int32_t count;       /* tokens represented (1 for a raw token) */
  float score;         /* accumulated attention mass (all heads, queries) */
  float logw;          /* added to the logit: log(count) for similarity
                          merges, 0 otherwise */
  uint8_t kind;        /* DQ_GSM_SINK .. DQ_GSM_WINDOW */
  uint8_t n_ranges;    /* 1..DQ_GSM_MAX_RANGES */
  int32_t rb[DQ_GSM_MAX_RANGES], re[DQ_GSM_MAX_RANGES]; /* [rb, re) sorted */
} dq_gsm_entry;

/* One layer's cache. Invariant: entries sorted by `first`, ranges of
 * different entries disjoint, n <= cap; k/v rows follow the entries. */
typedef struct dq_gsm_layer {
  int dynamic;      /* 1: anchors + memory; 0: fixed (sinks, pins, window) */
  int exact_window; /* > 0: a sliding-window layer (gemma3 local) */
  int n, cap;       /* entries held; most the layer can ever hold */
  int alloc;        /* rows allocated (grows geometrically up to cap) */
  dq_gsm_entry *e;  /* alloc */
  uint8_t *k, *v;   /* alloc rows of row_bytes, in the cache's store type */
  int64_t n_evicted, n_merged;
  int next_pos;     /* cache positions: the next token's position */
  int n_renumbered; /* cache positions: times renumbered */
} dq_gsm_layer;

/* Shape of the cache: model dimensions and the options. */
typedef struct dq_gsm_cfg {
  int n_layer, n_head, n_head_kv, head_dim;
  float scale;         /* attention logit scale */
  int n_threads;
  const dq_cpu_caps *caps; /* kernel paths (F16 rows -> f32); may be NULL */
  int store;           /* row type: DQ_STORE_F32 / F16 / Q8_0 (backend.h),
                          the sequence's KV cache type */
  int max_chunk;       /* most tokens one attend call appends */
  int extra_rows;      /* rows a migration may append at once */
  const int *layer_dynamic; /* n_layer flags; NULL = all by opts.mode */
  const int *layer_window;  /* n_layer exact windows (0 = none); may be NULL */
  /* o.cache_positions: the RoPE of the dynamic/fixed layers (keys arrive
   * un-rotated and are rotated at their cache index on every attend), and
   * the backend function that applies it (its formula, YaRN included, fills
   * a cos/sin table once). */
  const dq_rope_params *rope;
  int pos_limit;       /* cache positions stay below this (the trained
                          context; 0 = twice the largest layer) */
  void (*rope_fn)(void *ctx, float *x, int n_tok, int n_head, int head_dim,
                  const int32_t *pos, const dq_rope_params *r);
  void *rope_ctx;
  dq_backend *dev; /* rows on this backend's device (see above), or NULL */
  dq_gsm_opts o;
} dq_gsm_cfg;

typedef struct dq_gsm dq_gsm;

/* Attention statistics wiring (as dq_seq_stats_*): optional. */
typedef struct dq_gsm_track {
  float *stats;     /* n_layer x n_head x stride: mass per source position
                       from queries in [q0, q1) */
  int stride, q0, q1;
  float *qstats;    /* n_layer x n_head x stride: mass query p gives to
                       pinned tokens */
} dq_gsm_track;

struct dq_gsm {
  dq_gsm_cfg c;
  int row_elems;
  size_t row_bytes;    /* one stored row of row_elems */
  int q8;              /* Q8_0 store in the kernel's 8-bit panels */
  size_t kgrp_bytes, vgrp_bytes; /* q8: 16 entries' key / value panels */
  float *f16_tab;      /* 65536 f16 -> f32 (store F16), else NULL */
  float *kf, *vf;      /* f32 scratch: one layer's rows during attend */
  size_t scratch_rows;
  float *kt;           /* the layer's keys packed per KV head (kernels.h) */
  size_t kt_rows;      /* padded rows kt holds per KV head */
  float *bias;         /* per-entry log weights of one attend */
  size_t bias_rows;
  float *tmp;          /* 4 x row_elems f32 scratch for merges */
  dq_rope_params rope_copy;
  float *rope_tab;     /* cache_positions: n_tab x n_rot/2 (cos, sin) */
  int n_tab, n_rot, neox;
  float *qrot;         /* cache_positions: rotated queries of one attend */
  int pos_limit;       /* cache_positions: positions stay below it */
  size_t qrot_elems;
  int n_seen;          /* tokens appended so far (next position) */
  int window_cur;      /* window of the last attend call */
  int memory_budget;   /* last budget applied */
  int n_chunks;
  int n_pinned_tokens;
  int32_t *pin_b, *pin_e; /* pinned ranges (copied) */
  dq_gsm_layer *layers;
  dq_threadpool *pool;
  size_t peak_bytes;
  dq_gsm_track track;
  /* device rows (c.dev): buffers of `stride` rows (the largest layer) */
  int stride;
  float *stats_dev;    /* n_head x stride: one attend's masses per head */
  float *score_dev;    /* n_layer x stride: per-entry mass of the last
                          attend of each layer */
  float *score_host;   /* the same, downloaded by dq_gsm_flush */
  int32_t *map_host, *map_dev; /* n_layer x stride: compaction gathers */
  int32_t *iota_dev;   /* 0 .. stride-1: copies back from the scratch */
  void *kscr, *vscr;   /* one layer's rows: compaction's scratch */
  uint8_t *attended;   /* n_layer: score_dev holds an attend not yet added */
  int *pend_seen, *pend_window; /* n_layer: compress pending (seen -1: no) */
  int *gather_n;       /* n_layer: rows the pending gather keeps (-1: none) */
  int *pend_list;      /* n_layer: the layers one flush compresses */
  double compress_ms;  /* host time spent compressing, all layers */
  int cachepos;        /* cache positions in effect (dynamic/fixed layers) */
  int32_t *pos_dev;    /* cache positions on the device: 0 .. n_tab-1 */
  int32_t *delta_host, *delta_dev; /* stride: a renumbering's shifts */
  /* statistics with device rows (track.stats), allocated on first use */
  float *trk_out;      /* device, max_chunk x n_head x head_dim: scratch */
  float *trk_em;       /* n_head x stride: entry masses of the tracked */
  float *trk_rows;     /* n_head x track.stride: one layer's statistics */
  /* merges with device rows: their rows on the host (stage_rows), and
   * similarity's weights */
  float *bias_dev;     /* device, n_layer x stride: each layer's per-entry
                          log weights (similarity's merged slots) */
  float *bias_host;    /* the same on the host (page-locked: bias_pinned) */
  int bias_pinned;
  uint8_t *stage_k, *stage_v; /* one layer's rows, host */
  uint8_t *stage_dk, *stage_dv; /* the staged layer's device rows */
  int stage_failed;    /* a staging copy, or a merge's or fold's copy or
                          call, failed (flush: DQ_ERR_DEVICE) */
  /* similarity merges on the device (the backend's kv_merge): queued by
   * the layers' compressions, run by dq_gsm_flush in one call, a job per
   * layer; buffers of n_layer x stride rows, allocated on first use */
  dq_kv_merge_job *mg_jobs; /* n_layer */
  int *mg_layer;       /* n_layer: each job's layer */
  int mg_n, mg_rows;   /* jobs queued, rows they hold */
  int32_t *mg_host;    /* the jobs' rows, then (at n_layer x stride) their
                          counts */
  int32_t *mg_pairs;   /* 2 words per row: the merges made */
  uint8_t *mg_drop;    /* stride: one layer's merged-away entries */
  int32_t *mg_dev, *mg_pairs_dev; /* device copies of mg_host, mg_pairs */
  void *mg_scratch;    /* device: 16 bytes per row */
  /* time_decay folds on the device (the backend's kv_fold), the same way:
   * rows n_layer x stride, coefficients per layer stride x (1 + the scan's
   * steps), scratch twice one layer's stride x 2 x row_elems floats */
  dq_kv_fold_job *fd_jobs;
  int fd_n, fd_rows;
  size_t fd_ncoef;
  int32_t *fd_host, *fd_dev; /* the jobs' rows */
  float *fd_coef, *fd_coef_dev;
  float *fd_scratch;   /* device */
  /* a decode step recorded as a graph (dq_gsm_graph_step): what it
   * changes on the host, to undo a recording that failed */
  int *mark_n, *mark_pos; /* n_layer: entries and next position before */
  int mark_chunks;
  size_t mark_peak;
};

/* Device rows on backend `be`: whether they take cache positions (rows
 * that are not Q8_0, and the backend's kv_rotate), and why they cannot run
 * options o at all (a sentence naming the fix), or NULL when they can.
 * q8_rows: the rows are Q8_0. Shared by dq_gsm_new and the sequence's
 * checks at creation (forward.c). */
int dq_gsm_dev_cachepos(const dq_backend *be, int q8_rows);
const char *dq_gsm_dev_refusal(const dq_backend *be, const dq_gsm_opts *o,
                               int q8_rows);

dq_status dq_gsm_new(const dq_gsm_cfg *cfg, dq_gsm **out, dq_error *err);
void dq_gsm_free(dq_gsm *g); /* accepts NULL */

/* Attends n query rows q (n x n_head x head_dim, rotated at positions
 * pos0..pos0+n-1) over layer `il`: appends the chunk's keys/values
 * (n x n_head_kv x head_dim) as WINDOW entries, computes out
 * (n x n_head x head_dim), accumulates entry scores. Does not compress.
 * pos0 must equal the layer's next position. */
dq_status dq_gsm_attend(dq_gsm *g, int il, const float *q, const float *k,
                        const float *v, int n, int pos0, float *out);
/* Appends raw tokens without attending (migration from the full cache,
 * tests). */
dq_status dq_gsm_append(dq_gsm *g, int il, const float *k, const float *v,
                        int n, int pos0);
/* cache_positions: turns n rows of keys (n x n_head_kv x head_dim) rotated
 * at original positions pos0.. back into un-rotated keys (migration from
 * the full cache). Exact up to float rounding when the RoPE has no YaRN
 * magnitude scale. No-op otherwise. */
void dq_gsm_unrotate(const dq_gsm *g, float *k, int n, int pos0);
/* Compresses layer il after tokens up to n_seen - 1: classifies entries,
 * picks anchors, bounds memory by the strategy. Device rows: recorded, run
 * by the next dq_gsm_flush. */
void dq_gsm_compress(dq_gsm *g, int il, int n_seen, int window);
/* Device rows: adds the scores of the attends since the last flush, runs
 * the recorded compressions and queues their gathers (one download, one
 * upload). Before the next attend of a compressed layer; a no-op with rows
 * on the host. DQ_ERR_DEVICE (and the backend's message) when the device
 * failed. */
dq_status dq_gsm_flush(dq_gsm *g);
/* Device rows, before a decode step of n tokens that the caller records
 * as one graph (backend.h graph_begin: no copies, waits or allocations
 * until graph_end): runs now what the step's attends would otherwise run
 * with copies or waits (the last step's flush where dq_seq_eval has not
 * run it, the renumberings due, the weights' buffers), and notes the host
 * state the step changes.
 * DQ_ERR_UNSUPPORTED (nothing changed that the step would not have
 * changed) when this step cannot be recorded: rows on the host,
 * statistics tracked, or merged slots whose weights have no page-locked
 * host copy; other errors are the flush's. */
dq_status dq_gsm_graph_step(dq_gsm *g, int n);
/* The recording of the step that dq_gsm_graph_step prepared failed (its
 * ops never ran): the host state back to what the step found, so that the
 * step can run op by op. */
void dq_gsm_graph_undo(dq_gsm *g);
/* Device rows: appends rows 0..n-1 of a full KV cache on the same backend
 * (keys k, values v; the layout of cfg.store) as raw tokens at positions
 * 0..n-1, copied on the device (migration to GSM). */
dq_status dq_gsm_adopt(dq_gsm *g, int il, const void *k, const void *v,
                       int n);
/* Memory budget after n_seen tokens: min(memory_slots, keep_ratio*n_seen). */
int dq_gsm_budget(const dq_gsm *g, int n_seen);
/* Bytes of K/V rows allocated, all layers (excluding the one-layer f32
 * scratch of attend). */
size_t dq_gsm_bytes(const dq_gsm *g);
/* Bytes of the retained rows only. */
size_t dq_gsm_used_bytes(const dq_gsm *g);

/* A copy of the cache's state (entries, rows, counters) to go back to:
 * coarse recall reads the same prefix with two probes (the question and a
 * content-free one) without running the prefix twice. Restoring needs the
 * same cache (rows only grow, so everything fits). Device rows are copied
 * to host memory and back (after dq_gsm_flush: DQ_ERR_ARG while a
 * compression is pending; DQ_ERR_DEVICE when a copy fails). */
typedef struct dq_gsm_snap dq_gsm_snap;
dq_status dq_gsm_snapshot(const dq_gsm *g, dq_gsm_snap **out);
dq_status dq_gsm_restore(dq_gsm *g, const dq_gsm_snap *s);
void dq_gsm_snap_free(dq_gsm_snap *s); /* accepts NULL */

/* The gated state update of time_decay as an inclusive parallel scan:
 * h_t = a_t * h_{t-1} + b_t (vectors of `dim`, h_{-1} = 0) for t < n, in
 * ceil(log2 n) Hillis-Steele steps over the affine maps (a, b). a is n
 * scalars, b is n x dim; on return b holds h_0..h_{n-1}. tmp: n*(dim+1)
 * floats scratch. */
void dq_gsm_scan(float *a, float *b, int n, int dim, float *tmp);

#endif /* DQ_ENGINE_GSM_H */
