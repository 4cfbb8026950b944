/*
 * test_index_vectors.c - the dense side: half-float storage of embeddings
 * (values checked against IEEE 754 binary16 encodings worked out by hand:
 * 1.0 = 0x3C00, -2 = 0xC000, 65504 = 0x7BFF (largest finite), 65520 rounds
 * to +inf 0x7C00, 2^-24 = 0x0001 (smallest subnormal), 0.1 = 0x2E66,
 * 1/3 = 0x3555, 1e-8 underflows to 0); and the switch from the exact Flat
 * index to IVF when the collection crosses the threshold: every stored
 * vector finds itself, removals work in IVF, and a reopened IVF file is
 * used as is.
 */
#include "index_testutil.h"

#define DIM 16
#define N 3000

static void check_f16(void) {
  static const struct {
    float f;
    uint16_t h;
  } k[] = {{1.0f, 0x3C00},       {-2.0f, 0xC000},  {65504.0f, 0x7BFF},
           {65520.0f, 0x7C00},   {0.0f, 0x0000},   {5.9604645e-8f, 0x0001},
           {0.1f, 0x2E66},       {1.0f / 3, 0x3555}, {1e-8f, 0x0000},
           {-0.0f, 0x8000},      {0.5f, 0x3800},   {6.1035156e-5f, 0x0400}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    uint16_t h;
    dq__f32_to_f16(&k[i].f, &h, 1);
    CHECK_MSG(h == k[i].h, "%g -> 0x%04X, want 0x%04X", k[i].f, h, k[i].h);
  }
  /* Round trip: finite halves decode and re-encode to themselves. */
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7C00) == 0x7C00)
      continue;
    uint16_t in = (uint16_t)h, out;
    float f;
    dq__f16_to_f32(&in, &f, 1);
    dq__f32_to_f16(&f, &out, 1);
    bad += out != in;
  }
  CHECK_EQ_INT(bad, 0);
  uint16_t h = 0x3555;
  float f;
  dq__f16_to_f32(&h, &f, 1);
  CHECK_NEAR(f, 0.333251953125, 0);
}

/* Clustered unit vectors: 30 centres, small noise (like real embeddings). */
static void gen(float *x, size_t n, unsigned seed) {
  float c[30][DIM];
  for (int i = 0; i < 30; i++)
    for (int j = 0; j < DIM; j++) {
      seed = seed * 1103515245u + 12345u;
      c[i][j] = (float)((seed >> 8) % 2000) / 1000.0f - 1.0f;
    }
  for (size_t i = 0; i < n; i++)
    for (int j = 0; j < DIM; j++) {
      seed = seed * 1103515245u + 12345u;
      x[i * DIM + j] = c[i % 30][j] + ((float)((seed >> 8) % 1000) / 2500.0f);
    }
}

static void check_ivf(void) {
  char *dir = scratch_dir("vectors");
  dq_index *idx = NULL;
  dq_error err = {0};
  dq_index_opts o = {.create = 1, .embed_model = "v", .embed_dim = DIM,
                     .ivf_threshold = 2000};
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  if (!idx)
    return;
  float *x = malloc(sizeof(float) * N * DIM);
  int64_t *ids = malloc(sizeof(int64_t) * N);
  gen(x, N, 7);
  /* 30 documents of 100 chunks. */
  for (int d = 0; d < 30; d++) {
    char path[32], text[64];
    snprintf(path, sizeof path, "d%02d.txt", d);
    dq_doc_info info = doc_info(path, "text");
    dq_index_doc *w = NULL;
    CHECK_OK(dq_index_doc_begin(idx, &info, &w), dq_index_errmsg(idx));
    for (int i = 0; i < 100; i++) {
      snprintf(text, sizeof text, "doc %d chunk %d", d, i);
      dq_chunk_in c = chunk_in(text, i + 1);
      CHECK_OK(dq_index_doc_add_chunk(w, &c, &ids[d * 100 + i]),
               dq_index_errmsg(idx));
    }
    CHECK_OK(dq_index_doc_commit(w), dq_index_errmsg(idx));
    CHECK_OK(dq_index_set_embeddings(idx, ids + d * 100, x + d * 100 * DIM,
                                     100, DIM),
             dq_index_errmsg(idx));
  }
  dq_index_stats st;
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.vectors_ivf, 0); /* switches at save */
  CHECK_OK(dq_index_vectors_save(idx), dq_index_errmsg(idx));
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.vectors_ivf, 1);
  CHECK_EQ_INT(st.n_vectors, N);
  CHECK(st.nlist >= 16 && st.nprobe >= 1);
  /* Every 10th vector finds its own chunk first. */
  int self = 0, tried = 0;
  for (int i = 0; i < N; i += 10) {
    dq_search_result *r = NULL;
    size_t n = 0;
    dq_search_opts so = {.k = 1, .n_dense = 5};
    CHECK_OK(dq_index_search(idx, &so, NULL, x + (size_t)i * DIM, DIM, &r, &n),
             dq_index_errmsg(idx));
    tried++;
    self += n == 1 && r[0].chunk_id == ids[i];
    dq_search_results_free(r, n);
  }
  CHECK_MSG(self >= tried * 95 / 100, "%d of %d found themselves", self,
            tried);
  /* Re-ingest one document without embeddings: its vectors leave IVF. */
  const char *t[] = {"replaced", NULL};
  CHECK_OK(put_doc(idx, "d05.txt", "text", t, NULL), dq_index_errmsg(idx));
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.n_vectors, N - 100);
  CHECK_EQ_INT(st.n_embedded, N - 100);
  dq_index_close(idx);
  o.create = 0;
  CHECK_OK(dq_index_open(dir, &o, &idx, &err), err.msg);
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.rebuilt_at_open, 0);
  CHECK_EQ_INT(st.vectors_ivf, 1);
  CHECK_EQ_INT(st.n_vectors, N - 100);
  /* A reader rebuilding in memory uses Flat (no training). */
  dq_index_close(idx);
  char *vf = join2(dir, "vectors.faiss");
  unlink(vf);
  free(vf);
  dq_index_opts ro = {.read_only = 1};
  CHECK_OK(dq_index_open(dir, &ro, &idx, &err), err.msg);
  CHECK_OK(dq_index_stats_get(idx, &st), dq_index_errmsg(idx));
  CHECK_EQ_INT(st.rebuilt_at_open, 1);
  CHECK_EQ_INT(st.vectors_ivf, 0);
  CHECK_EQ_INT(st.n_vectors, N - 100);
  dq_index_close(idx);
  free(x);
  free(ids);
  rm_rf(dir);
  free(dir);
}

int main(void) {
  check_f16();
  check_ivf();
  return TEST_EXIT();
}
