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
 *  - stats say which path ran; truncation is refused on GSM.
 */
#include "engine.h"
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

int main(void) {
  dq_model *m = open_model();
  if (!m)
    return TEST_EXIT();
  test_equal(m);
  test_bounded(m);
  dq_model_free(m);
  return TEST_EXIT();
}
