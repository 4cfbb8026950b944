/*
 * test_gsm_synth.c - the GSM path of dq_seq on a small llama-layout GGUF
 * written by the test (tests/engine_tok/gguf_writer.h), no download:
 *  - with a window (or a memory) large enough to hold everything, GSM
 *    logits equal full attention's (F32 caches; tolerance 1e-4), whatever
 *    the chunk size; a small fixed window does change them (sanity);
 *  - a sequence made with min_tokens 100 runs full attention for 80
 *    tokens, moves its cache to GSM when it grows past 100, and still
 *    equals full attention;
 *  - 16384 tokens in four evals of 4096 keep the cache within
 *    sinks + anchors + memory + window entries per layer, with the same
 *    allocation after every eval (no growth across chunks);
 *  - stats say which path ran; truncation is refused on GSM;
 *  - similarity and time_decay with rows on the host, with device rows
 *    merged by the backend's kv_merge / kv_fold, and with device rows
 *    staged through the host: the same merges and logits, bit for bit (F32
 *    rows);
 *  - GSM decode steps with device rows recorded as graphs (test_graphs):
 *    the CPU backend given a graph recorder with the CUDA backend's rules
 *    (no copy, wait, allocation or free while recording; queued uploads
 *    only from page-locked host memory), every decode step recorded and
 *    launched, logits bit for bit those of the steps run op by op, also
 *    when recordings fail and the steps run again op by op; for each
 *    strategy and both position modes (renumbering inside the decode).
 */
#include "engine.h"
#include "model.h" /* the backend's ops, to give it a graph recorder */
#include "test.h"

#include "engine_tok/gguf_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { E = 64, HD = 32, NH = 2, NKV = 1, FF = 96, NV = 50, NL = 2 };

static uint32_t rng = 777;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return ((rng >> 8) / 16777216.0f - 0.5f);
}

static void add(gw *w, const char *name, uint64_t n0, uint64_t n1, float base,
                float amp) {
  size_t n = (size_t)(n0 * n1);
  float *d = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++)
    d[i] = base + amp * frand();
  uint64_t ne[2] = {n0, n1};
  gw_add_tensor(w, name, 0, n1 > 1 ? 2 : 1, ne, d, n * sizeof(float));
  free(d);
}

static dq_model *open_model(void) {
  gw w;
  gw_init(&w);
  gw_add_str(&w, "general.architecture", "llama");
  gw_add_u32(&w, "llama.block_count", NL);
  gw_add_u32(&w, "llama.context_length", 32768);
  gw_add_u32(&w, "llama.embedding_length", E);
  gw_add_u32(&w, "llama.feed_forward_length", FF);
  gw_add_u32(&w, "llama.attention.head_count", NH);
  gw_add_u32(&w, "llama.attention.head_count_kv", NKV);
  gw_add_u32(&w, "llama.attention.key_length", HD);
  gw_add_u32(&w, "llama.attention.value_length", HD);
  gw_add_f32(&w, "llama.attention.layer_norm_rms_epsilon", 1e-6f);
  gw_add_f32(&w, "llama.rope.freq_base", 10000.0f);
  /* larger q/k weights than test_load's so attention is far from uniform */
  add(&w, "token_embd.weight", E, NV, 0, 1);
  add(&w, "output_norm.weight", E, 1, 1, 0.2f);
  for (int l = 0; l < NL; l++) {
    char n[64];
#define T(s) (snprintf(n, sizeof n, "blk.%d.%s", l, s), n)
    add(&w, T("attn_norm.weight"), E, 1, 1, 0.2f);
    add(&w, T("attn_q.weight"), E, NH * HD, 0, 0.6f);
    add(&w, T("attn_k.weight"), E, NKV * HD, 0, 0.6f);
    add(&w, T("attn_v.weight"), E, NKV * HD, 0, 0.3f);
    add(&w, T("attn_output.weight"), NH * HD, E, 0, 0.2f);
    add(&w, T("ffn_norm.weight"), E, 1, 1, 0.2f);
    add(&w, T("ffn_gate.weight"), E, FF, 0, 0.2f);
    add(&w, T("ffn_up.weight"), E, FF, 0, 0.2f);
    add(&w, T("ffn_down.weight"), FF, E, 0, 0.2f);
#undef T
  }
  size_t len;
  uint8_t *buf = gw_finish(&w, &len);
  gw_free(&w);
  char path[256];
  snprintf(path, sizeof path, "/tmp/dq_gsm_synth_%d.gguf", (int)getpid());
  FILE *f = fopen(path, "wb");
  fwrite(buf, 1, len, f);
  fclose(f);
  free(buf);
  dq_model_opts o;
  dq_model_opts_init(&o);
  o.backend = DQ_BACKEND_CPU;
  o.n_threads = 2;
  o.kv_type = DQ_KV_F32;
  dq_model *m = NULL;
  dq_error err = {0};
  CHECK_OK(dq_model_open(path, &o, &m, &err), err.msg);
  unlink(path);
  return m;
}

static int32_t *tokens_n(int n) {
  int32_t *t = malloc((size_t)n * sizeof *t);
  uint32_t r = 5;
  for (int i = 0; i < n; i++) {
    r = r * 1103515245u + 12345u;
    t[i] = (int32_t)((r >> 10) % NV);
  }
  return t;
}

/* logits of all n tokens: full attention (o == NULL) or GSM */
static float *run(dq_model *m, const dq_gsm_opts *o, const int32_t *t, int n,
                  int split, dq_gsm_stats *st) {
  dq_seq *s = NULL;
  if (o)
    CHECK_OK(dq_seq_new_gsm(m, n, o, &s), dq_model_errmsg(m));
  else
    CHECK_OK(dq_seq_new(m, n, &s), dq_model_errmsg(m));
  if (!s)
    return NULL;
  float *out = malloc((size_t)n * NV * sizeof(float));
  for (int done = 0; done < n;) {
    int k = split > 0 && done == 0 ? split : n - done;
    CHECK_OK(dq_seq_eval(s, t + done, k, DQ_LOGITS_ALL), dq_seq_errmsg(s));
    const float *l = dq_seq_logits(s, NULL);
    if (l)
      memcpy(out + (size_t)done * NV, l, (size_t)k * NV * sizeof(float));
    done += k;
  }
  if (st)
    dq_seq_gsm_stats(s, st);
  dq_seq_free(s);
  return out;
}

static double maxdiff(const float *a, const float *b, size_t n) {
  double md = 0;
  for (size_t i = 0; a && b && i < n; i++)
    md = fmax(md, fabs(a[i] - b[i]));
  return a && b ? md : 1e30;
}

static void test_equal(dq_model *m) {
  enum { N = 300 };
  int32_t *t = tokens_n(N);
  float *ref = run(m, NULL, t, N, 0, NULL);
  dq_gsm_opts o;
  dq_gsm_opts_init(&o);
  o.min_tokens = 0;
  o.chunk_size = 64;
  o.window_size = 4096; /* holds everything */
  o.cache_type = DQ_KV_F32; /* the full cache's type: the same values */
  dq_gsm_stats st;
  float *a = run(m, &o, t, N, 0, &st);
  CHECK_EQ_STR(st.path, "gsm");
  CHECK_EQ_INT(st.n_chunks, (N + 63) / 64);
  CHECK_EQ_INT(st.n_evicted, 0);
  CHECK_MSG(maxdiff(a, ref, (size_t)N * NV) < 1e-4, "big window: %g",
            maxdiff(a, ref, (size_t)N * NV));
  /* small window, memory that keeps every evicted token */
  o.window_size = 16;
  o.mode = DQ_GSM_LAYOUT_DYNAMIC;
  o.keep_ratio = 1;
  o.memory_slots = 4096;
  o.chunk_size = 50;
  float *b = run(m, &o, t, N, 0, &st);
  CHECK_EQ_INT(st.n_evicted, 0);
  CHECK_EQ_INT(st.n_merged, 0);
  CHECK_MSG(maxdiff(b, ref, (size_t)N * NV) < 1e-4, "big memory: %g",
            maxdiff(b, ref, (size_t)N * NV));
  /* fixed: sinks + window only -> different logits late in the input */
  o.mode = DQ_GSM_LAYOUT_FIXED;
  float *c = run(m, &o, t, N, 0, &st);
  CHECK(st.n_evicted > 0);
  CHECK_MSG(maxdiff(c, ref, (size_t)N * NV) > 1e-3, "fixed window: %g",
            maxdiff(c, ref, (size_t)N * NV));
  /* below min_tokens: full attention, reported */
  o.min_tokens = 1024;
  float *d = run(m, &o, t, N, 0, &st);
  CHECK_EQ_STR(st.path, "full");
  CHECK_MSG(maxdiff(d, ref, (size_t)N * NV) < 1e-5, "full path: %g",
            maxdiff(d, ref, (size_t)N * NV));
  /* growing past min_tokens moves the full cache over */
  o.min_tokens = 100;
  o.mode = DQ_GSM_LAYOUT_HYBRID;
  o.window_size = 4096;
  float *e = run(m, &o, t, N, 80, &st);
  CHECK_EQ_STR(st.path, "gsm");
  CHECK_MSG(maxdiff(e, ref, (size_t)N * NV) < 1e-4, "migrated: %g",
            maxdiff(e, ref, (size_t)N * NV));
  free(a);
  free(b);
  free(c);
  free(d);
  free(e);
  free(ref);
  free(t);
}

static void test_bounded(dq_model *m) {
  enum { N = 16384, PART = 4096 };
  int32_t *t = tokens_n(N);
  static const dq_gsm_merge strat[3] = {DQ_GSM_MERGE_SCORE,
                                        DQ_GSM_MERGE_TIME_DECAY,
                                        DQ_GSM_MERGE_SIMILARITY};
  for (int si = 0; si < 3; si++) {
    dq_gsm_opts o;
    dq_gsm_opts_init(&o);
    o.min_tokens = 0;
    o.window_size = 64;
    o.memory_slots = 128;
    o.chunk_size = 512;
    o.mode = DQ_GSM_LAYOUT_DYNAMIC;
    o.strategy = strat[si];
    int32_t pin[2] = {100, 110};
    o.pinned = pin;
    o.n_pinned = 1;
    int n = si == 0 ? N : PART; /* the merging strategies on 4k tokens */
    dq_seq *s = NULL;
    CHECK_OK(dq_seq_new_gsm(m, n, &o, &s), dq_model_errmsg(m));
    if (!s)
      continue;
    size_t alloc0 = 0;
    for (int done = 0; done < n; done += n / 4) {
      CHECK_OK(dq_seq_eval(s, t + done, n / 4, DQ_LOGITS_LAST),
               dq_seq_errmsg(s));
      dq_gsm_stats st;
      dq_seq_gsm_stats(s, &st);
      /* 4 sinks + 10 pinned + 6 anchors + 128 memory + 1.5 x 64 window */
      int bound = 4 + 10 + 6 + 128 + 96;
      CHECK_MSG(st.max_entries <= bound, "strategy %d after %d: %d entries",
                si, done + n / 4, st.max_entries);
      if (!alloc0)
        alloc0 = st.cache_bytes_alloc;
      CHECK_EQ_INT(st.cache_bytes_alloc, alloc0);
      /* rows are allocated as layers fill: never past bound + one chunk */
      CHECK(st.cache_bytes_alloc <= (size_t)(bound + 513) * NL * NKV * HD * 2 * 4);
      CHECK(st.cache_bytes <= (size_t)bound * NL * NKV * HD * 2 * 4);
      if (done + n / 4 == n) {
        CHECK(st.n_chunks == n / 512);
        if (si == 0)
          CHECK(st.n_evicted > (int64_t)(N - 300) * NL);
        else
          CHECK(st.n_merged > 0);
        fprintf(stderr,
                "strategy %d: %d tokens, %d entries/layer, evicted %lld, "
                "merged %lld, cache %zu bytes (allocated %zu)\n",
                si, n, st.max_entries, (long long)st.n_evicted,
                (long long)st.n_merged, st.cache_bytes, st.cache_bytes_alloc);
      }
    }
    CHECK(dq_seq_truncate(s, 10) == DQ_ERR_UNSUPPORTED);
    const float *l = dq_seq_logits(s, NULL);
    int finite = l != NULL;
    for (int i = 0; l && i < NV; i++)
      finite &= isfinite(l[i]) != 0;
    CHECK(finite);
    dq_seq_free(s);
  }
  free(t);
}

/* The small cache the device-rows tests share: GSM from the first token,
 * window 32, 48 memory slots, chunks of 32. */
static void small_opts(dq_gsm_opts *o) {
  dq_gsm_opts_init(o);
  o->min_tokens = 0;
  o->window_size = 32;
  o->memory_slots = 48;
  o->chunk_size = 32;
}

/* A GSM sequence with options o reads t[0..n_pre) in one eval, then
 * decodes one token a step up to n: every position's logits into out
 * (n x NV), the statistics after the prefill (pre, may be NULL) and at the
 * end. -1 when the sequence could not be made. */
static int prefill_decode(dq_model *m, const dq_gsm_opts *o,
                          const int32_t *t, int n, int n_pre, float *out,
                          dq_gsm_stats *pre, dq_gsm_stats *end) {
  dq_seq *s = NULL;
  CHECK_OK(dq_seq_new_gsm(m, n, o, &s), dq_model_errmsg(m));
  if (!s)
    return -1;
  CHECK_OK(dq_seq_eval(s, t, n_pre, DQ_LOGITS_ALL), dq_seq_errmsg(s));
  const float *l = dq_seq_logits(s, NULL);
  if (l)
    memcpy(out, l, (size_t)n_pre * NV * sizeof(float));
  if (pre)
    dq_seq_gsm_stats(s, pre);
  for (int i = n_pre; i < n; i++) {
    CHECK_OK(dq_seq_eval(s, t + i, 1, DQ_LOGITS_LAST), dq_seq_errmsg(s));
    if ((l = dq_seq_logits(s, NULL)))
      memcpy(out + (size_t)i * NV, l, NV * sizeof(float));
  }
  dq_seq_gsm_stats(s, end);
  dq_seq_free(s);
  return 0;
}

/* The merging strategies three ways: rows on the host; device rows
 * merged by the backend's kv_merge / kv_fold (one call per flush); device
 * rows staged through host memory and merged there (the op taken away).
 * F32 rows: the same merges and the same logits, bit for bit, over a
 * prefill in chunks of 32 and 64 decode steps. */
static void test_merge_paths(dq_model *m) {
  enum { N = 448, N_PRE = 384 };
  int32_t *t = tokens_n(N);
  dq_backend_i *B = &m->be->i;
  dq_status (*merge)(void *, const dq_kv_merge *) = B->kv_merge;
  dq_status (*fold)(void *, const dq_kv_fold *) = B->kv_fold;
  static const char *const names[] = {"host rows", "device rows, kv op",
                                      "device rows, staged"};
  for (int td = 0; td < 2; td++) {
    float *lg[3] = {NULL, NULL, NULL};
    dq_gsm_stats st[3];
    memset(st, 0, sizeof st);
    for (int path = 0; path < 3; path++) {
      dq_gsm_opts o;
      small_opts(&o);
      o.strategy = td ? DQ_GSM_MERGE_TIME_DECAY : DQ_GSM_MERGE_SIMILARITY;
      o.cache_type = DQ_KV_F32;
      o.device_rows = path > 0;
      B->kv_merge = path == 2 ? NULL : merge;
      B->kv_fold = path == 2 ? NULL : fold;
      float *out = malloc((size_t)N * NV * sizeof(float));
      if (out && prefill_decode(m, &o, t, N, N_PRE, out, NULL, &st[path])) {
        free(out);
        out = NULL;
      }
      lg[path] = out;
    }
    B->kv_merge = merge;
    B->kv_fold = fold;
    for (int path = 1; path < 3; path++) {
      if (!lg[0] || !lg[path])
        continue;
      int n_diff = 0;
      for (int p = 0; p < N; p++)
        n_diff += memcmp(lg[0] + (size_t)p * NV, lg[path] + (size_t)p * NV,
                         NV * sizeof(float)) != 0;
      fprintf(stderr,
              "%s, %s vs host rows: merged %lld vs %lld, evicted %lld vs "
              "%lld; %d of %d positions' logits differ\n",
              td ? "time_decay" : "similarity", names[path],
              (long long)st[path].n_merged, (long long)st[0].n_merged,
              (long long)st[path].n_evicted, (long long)st[0].n_evicted,
              n_diff, N);
      CHECK(st[path].n_merged == st[0].n_merged);
      CHECK(st[path].n_evicted == st[0].n_evicted);
      CHECK_EQ_INT(n_diff, 0);
    }
    CHECK_MSG(st[0].n_merged > N / 2, "merged only %lld",
              (long long)st[0].n_merged);
    for (int path = 0; path < 3; path++)
      free(lg[path]);
  }
  free(t);
}

/* ---- decode steps recorded as graphs ----------------------------------- */

/* A graph recorder for the CPU backend with the CUDA backend's rules
 * (backend.h graph_begin): between graph_begin and graph_end an upload,
 * download, sync, allocation or free fails the recording (the op returns
 * DQ_ERR_DEVICE, as under stream capture); a queued upload must read
 * page-locked memory (rec_host_alloc's). The ops run as they are queued,
 * so a recording "launches" what already ran; a failed one (forced by
 * fail_every) ran too, and the caller runs the step again op by op, which
 * for a decode step writes the same rows and outputs again. */
static struct rec {
  dq_backend_i cpu; /* the CPU backend's own ops */
  int capturing, bad, fail_every, n_rec;
  char why[160];
  int n_launched, n_failed;
  struct {
    const char *p;
    size_t n;
  } pinned[32];
  int n_pinned;
} rec;

static dq_status rec_refuse(const char *what) {
  if (!rec.bad)
    snprintf(rec.why, sizeof rec.why, "%s while recording", what);
  rec.bad = 1;
  return DQ_ERR_DEVICE;
}

static dq_status rec_buf_alloc(void *c, size_t n, void **d) {
  return rec.capturing ? rec_refuse("allocation") : rec.cpu.buf_alloc(c, n, d);
}
static void rec_buf_free(void *c, void *d) {
  if (rec.capturing)
    rec_refuse("free");
  rec.cpu.buf_free(c, d);
}
static dq_status rec_upload(void *c, void *d, const void *h, size_t n) {
  return rec.capturing ? rec_refuse("upload") : rec.cpu.upload(c, d, h, n);
}
static dq_status rec_download(void *c, void *h, const void *d, size_t n) {
  return rec.capturing ? rec_refuse("download") : rec.cpu.download(c, h, d, n);
}
static dq_status rec_sync(void *c) {
  return rec.capturing ? rec_refuse("sync")
                       : rec.cpu.sync ? rec.cpu.sync(c) : DQ_OK;
}
static dq_status rec_host_alloc(void *c, size_t n, void **h) {
  (void)c;
  if (rec.capturing)
    return rec_refuse("host allocation");
  if (rec.n_pinned == 32 || !(*h = malloc(n ? n : 1)))
    return DQ_ERR_NOMEM;
  rec.pinned[rec.n_pinned].p = *h;
  rec.pinned[rec.n_pinned++].n = n;
  return DQ_OK;
}
static void rec_host_free(void *c, void *h) {
  (void)c;
  if (!h)
    return;
  if (rec.capturing)
    rec_refuse("host free");
  for (int i = 0; i < rec.n_pinned; i++)
    if (rec.pinned[i].p == h)
      rec.pinned[i] = rec.pinned[--rec.n_pinned];
  free(h);
}
static dq_status rec_upload_async(void *c, void *d, const void *h, size_t n) {
  const char *p = h;
  int ok = 0;
  for (int i = 0; i < rec.n_pinned && !ok; i++)
    ok = p >= rec.pinned[i].p && p + n <= rec.pinned[i].p + rec.pinned[i].n;
  if (!ok) {
    if (!rec.bad)
      snprintf(rec.why, sizeof rec.why,
               "queued upload of %zu bytes from memory that is not "
               "page-locked", n);
    rec.bad = 1;
    return DQ_ERR_DEVICE;
  }
  return rec.cpu.upload_async(c, d, h, n);
}
static dq_status rec_graph_begin(void *c) {
  (void)c;
  rec.capturing = 1;
  return DQ_OK;
}
static dq_status rec_graph_end(void *c, int discard, int *ran) {
  (void)c;
  rec.capturing = 0;
  rec.n_rec++;
  *ran = !discard && !rec.bad &&
         !(rec.fail_every && rec.n_rec % rec.fail_every == 0);
  rec.n_launched += *ran;
  rec.n_failed += !*ran;
  if (rec.bad && rec.fail_every == 0)
    fprintf(stderr, "recording failed: %s\n", rec.why);
  rec.bad = 0;
  return DQ_OK;
}
static void rec_graph_stats(void *c, dq_graph_stats *st) {
  (void)c;
  memset(st, 0, sizeof *st);
  st->n_launched = (uint64_t)rec.n_launched;
}

/* For each strategy and position mode: a GSM sequence with device rows
 * (window 32, 48 memory slots, chunks of 32) reads 160 tokens, then decodes
 * 96 one at a time: op by op, recorded as graphs, and recorded with every
 * third recording failing. */
static void test_graphs(dq_model *m) {
  enum { N = 640, N_PRE = 448, N_DEC = N - N_PRE };
  int32_t *t = tokens_n(N);
  dq_backend_i *B = &m->be->i;
  rec.cpu = *B;
  B->buf_alloc = rec_buf_alloc;
  B->buf_free = rec_buf_free;
  B->upload = rec_upload;
  B->download = rec_download;
  B->sync = rec_sync;
  B->host_alloc = rec_host_alloc;
  B->host_free = rec_host_free;
  B->upload_async = rec_upload_async;
  B->graph_begin = rec_graph_begin;
  B->graph_end = rec_graph_end;
  B->graph_stats = rec_graph_stats;
  static const char *const names[] = {"score", "score, cache positions",
                                      "time_decay", "similarity"};
  for (int var = 0; var < 4; var++) {
    dq_gsm_opts o;
    small_opts(&o);
    o.device_rows = 1;
    o.cache_positions = var == 1 ? DQ_GSM_POS_CACHE : DQ_GSM_POS_ORIGINAL;
    o.strategy = var == 2   ? DQ_GSM_MERGE_TIME_DECAY
                 : var == 3 ? DQ_GSM_MERGE_SIMILARITY
                            : DQ_GSM_MERGE_SCORE;
    float *lg[3] = {NULL, NULL, NULL};
    dq_gsm_stats st0[3], st1[3];
    int launched[3], failed[3];
    for (int mode = 0; mode < 3; mode++) {
      dq_model_set_graphs(m, mode ? DQ_GRAPHS_ON : DQ_GRAPHS_OFF);
      rec.fail_every = mode == 2 ? 3 : 0;
      rec.n_rec = rec.n_launched = rec.n_failed = 0;
      if (!(lg[mode] = malloc((size_t)N * NV * sizeof(float))) ||
          prefill_decode(m, &o, t, N, N_PRE, lg[mode], &st0[mode],
                         &st1[mode])) {
        free(lg[mode]);
        lg[mode] = NULL;
        break;
      }
      launched[mode] = rec.n_launched;
      failed[mode] = rec.n_failed;
    }
    if (lg[0] && lg[1] && lg[2]) {
      fprintf(stderr,
              "graphs, %s: %d decode steps, %d launched as graphs (%d with "
              "every third recording failing, %d failed); evicted %lld, "
              "merged %lld, renumbered %d (%d while decoding)\n",
              names[var], N_DEC, launched[1], launched[2], failed[2],
              (long long)st1[1].n_evicted, (long long)st1[1].n_merged,
              st1[1].n_renumbered,
              st1[1].n_renumbered - st0[1].n_renumbered);
      CHECK_EQ_INT(launched[0], 0);
      CHECK_EQ_INT(launched[1], N_DEC);
      CHECK_EQ_INT(failed[1], 0);
      CHECK_EQ_INT(failed[2], N_DEC / 3);
      CHECK_EQ_INT(launched[2], N_DEC - N_DEC / 3);
      size_t dec = (size_t)N_PRE * NV; /* the decode steps' rows */
      CHECK_MSG(!memcmp(lg[0] + dec, lg[1] + dec,
                        (size_t)N_DEC * NV * sizeof(float)),
                "%s: logits of graph steps differ from op by op",
                names[var]);
      CHECK_MSG(!memcmp(lg[0] + dec, lg[2] + dec,
                        (size_t)N_DEC * NV * sizeof(float)),
                "%s: logits after failed recordings differ", names[var]);
      for (int mode = 1; mode < 3; mode++) {
        CHECK(st1[mode].n_evicted == st1[0].n_evicted);
        CHECK(st1[mode].n_merged == st1[0].n_merged);
        CHECK_EQ_INT(st1[mode].n_renumbered, st1[0].n_renumbered);
        CHECK_EQ_INT(st1[mode].n_chunks, st1[0].n_chunks);
        CHECK_EQ_INT(st1[mode].max_entries, st1[0].max_entries);
      }
      /* the decode compresses: evicts (score) or merges */
      CHECK(st1[0].n_evicted + st1[0].n_merged >
            st0[0].n_evicted + st0[0].n_merged);
      if (var == 1)
        CHECK_MSG(st1[0].n_renumbered > st0[0].n_renumbered,
                  "no renumbering while decoding (%d before, %d after)",
                  st0[0].n_renumbered, st1[0].n_renumbered);
    }
    for (int mode = 0; mode < 3; mode++)
      free(lg[mode]);
  }
  *B = rec.cpu;
  dq_model_set_graphs(m, DQ_GRAPHS_OFF);
  CHECK_EQ_INT(rec.n_pinned, 0); /* every page-locked buffer freed */
  free(t);
}

int main(void) {
  dq_model *m = open_model();
  if (!m)
    return TEST_EXIT();
  test_equal(m);
  test_bounded(m);
  test_merge_paths(m);
  test_graphs(m);
  dq_model_free(m);
  return TEST_EXIT();
}
