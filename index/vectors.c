/*
 * vectors.c - dense vectors: embeddings stored in SQLite as IEEE half floats
 * (chunks.embedding, dim * 2 bytes, little-endian), mirrored in a FAISS index
 * (inner product on L2-normalised vectors; ids are chunk row ids) that is
 * persisted as DIR/vectors.faiss.
 *
 * Kinds: below ivf_threshold vectors, "IDMap,Flat" (exact). At or above it,
 * "IVF<nlist>,Flat" trained on a sample of the stored embeddings (64 per
 * list), nlist the largest power of two <= 4 sqrt(n) (1024 at 100k), nprobe
 * = max(8, nlist / 16) (64 at 100k); it is retrained at save once the
 * collection has grown 4x past its training size (meta.ivf_trained_n).
 * tests/bench/index measures latency and recall@10 against exact search for
 * these choices (recall@10 0.98 on its harder data set). IVF rather than
 * HNSW because documents change: IVF supports remove_ids and add_with_ids
 * natively, HNSW removes nothing.
 *
 * Consistency: meta.emb_count and meta.emb_idsum (sum of mix64(id) over
 * chunks that have an embedding, mod 2^64, order-free) change in the same
 * transaction as the embeddings, so they always describe the database. At
 * save, meta.vec_bytes and meta.vec_hash record the file's size and a hash
 * of its bytes. At open the file is used only when its size and hash match,
 * its header (kind, dimension, count, metric) is right, it parses, and its
 * ids' checksum equals emb_idsum; otherwise it is rebuilt from the stored
 * embeddings (and, when writable, saved).
 * The file is written to a temporary name, fsynced and renamed.
 */
#include "index_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <faiss/c_api/IndexIVF_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/MetaIndexes_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss/c_api/index_io_c.h>

#define TRAIN_PER_LIST 64 /* training sample: this many vectors per list */

/* ---- half floats ------------------------------------------------------- */

void dq__f32_to_f16(const float *x, uint16_t *h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], 4);
    uint32_t sign = (u >> 16) & 0x8000, e = (u >> 23) & 0xff,
             m = u & 0x7fffff;
    uint16_t r;
    if (e == 0xff) {
      r = (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    } else {
      int ee = (int)e - 127 + 15;
      if (ee >= 31) {
        r = (uint16_t)(sign | 0x7c00);
      } else if (ee <= 0) {
        if (ee < -10) {
          r = (uint16_t)sign;
        } else {
          m |= 0x800000;
          int shift = 14 - ee;
          uint32_t half = m >> shift, rem = m & ((1u << shift) - 1),
                   mid = 1u << (shift - 1);
          if (rem > mid || (rem == mid && (half & 1)))
            half++;
          r = (uint16_t)(sign | half);
        }
      } else {
        uint32_t half = (uint32_t)ee << 10 | m >> 13, rem = m & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
          half++; /* may carry into the exponent: correct rounding */
        r = (uint16_t)(sign | half);
      }
    }
    h[i] = r;
  }
}

void dq__f16_to_f32(const uint16_t *h, float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t sign = (uint32_t)(h[i] & 0x8000) << 16, e = (h[i] >> 10) & 0x1f,
             m = h[i] & 0x3ff, u;
    if (e == 0) {
      if (m == 0) {
        u = sign;
      } else {
        int k = -1;
        do {
          k++;
          m <<= 1;
        } while (!(m & 0x400));
        u = sign | (uint32_t)(127 - 15 - k) << 23 | (m & 0x3ff) << 13;
      }
    } else if (e == 31) {
      u = sign | 0x7f800000 | m << 13;
    } else {
      u = sign | (e - 15 + 127) << 23 | m << 13;
    }
    memcpy(&x[i], &u, 4);
  }
}

/* ---- helpers ----------------------------------------------------------- */

static uint64_t mix64(uint64_t x) { /* splitmix64 finaliser */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* 64-bit hash of a whole file (word at a time), streamed in 1 MiB reads.
 * Detects damage anywhere in the vector file before FAISS parses it (its C
 * API writes parse errors to stderr, and some damage would parse). */
static int hash_file(const char *path, uint64_t *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  enum { BUF = 1 << 20 };
  unsigned char *buf = malloc(BUF);
  uint64_t h = 0x243f6a8885a308d3ull, total = 0;
  ssize_t got = 0;
  while (buf && (got = read(fd, buf, BUF)) > 0) {
    size_t i = 0, n = (size_t)got;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      memcpy(&w, buf + i, 8);
      h = (h ^ w) * 0x100000001b3ull;
      h ^= h >> 29;
    }
    for (; i < n; i++)
      h = (h ^ buf[i]) * 0x100000001b3ull;
    total += n;
  }
  close(fd);
  free(buf);
  if (!buf || got < 0)
    return -1;
  *out = mix64(h ^ total);
  return 0;
}

/* The FAISS index header as written by write_index: fourcc, d (i32),
 * ntotal (i64), two dummies (i64), is_trained (u8), metric (i32). Only the
 * two kinds this file writes are accepted. */
static const char *check_vec_header(const char *path, int dim,
                                    int64_t count) {
  unsigned char h[37];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "unreadable";
  ssize_t got = read(fd, h, sizeof h);
  close(fd);
  if (got != (ssize_t)sizeof h)
    return "too short for a FAISS header";
  if (memcmp(h, "IxMp", 4) != 0 && memcmp(h, "IwFl", 4) != 0)
    return "not an IDMap/IVFFlat FAISS index";
  int32_t d, metric;
  int64_t ntotal;
  memcpy(&d, h + 4, 4);
  memcpy(&ntotal, h + 8, 8);
  memcpy(&metric, h + 33, 4);
  if (d != dim)
    return "dimension differs from the embedding model's";
  if (ntotal != count)
    return "vector count differs from the database";
  if (metric != METRIC_INNER_PRODUCT)
    return "metric is not inner product";
  return NULL;
}

static dq_status faiss_err(dq_index *idx, const char *what) {
  const char *m = faiss_get_last_error();
  return dq_error_set(&idx->err, DQ_ERR_INTERNAL, "%s: %s: %s", idx->vec_path,
                      what, m ? m : "FAISS error");
}

int64_t dq__vectors_count(const dq_index *idx) {
  return idx->vec ? (int64_t)faiss_Index_ntotal(idx->vec) : 0;
}

void dq__vectors_free(dq_index *idx) {
  if (idx->vec)
    faiss_Index_free(idx->vec);
  idx->vec = NULL;
  idx->vec_ivf = 0;
}

static dq_status meta_i64(dq_index *idx, const char *key, int64_t *v) {
  char *s = NULL;
  dq_status st = dq__meta_get(idx, key, &s);
  *v = s ? strtoll(s, NULL, 10) : 0;
  free(s);
  return st;
}

static dq_status meta_set_i64(dq_index *idx, const char *key, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  return dq__meta_set(idx, key, buf);
}

/* Adds (sign +1) or removes (-1) ids from meta emb_count/emb_idsum. Must run
 * inside the transaction that changes the embeddings. */
static dq_status emb_meta_update(dq_index *idx, const int64_t *ids, size_t n,
                                 int sign) {
  int64_t count, sum;
  dq_status s = meta_i64(idx, "emb_count", &count);
  if (!s)
    s = meta_i64(idx, "emb_idsum", &sum);
  if (s)
    return s;
  uint64_t u = (uint64_t)sum;
  for (size_t i = 0; i < n; i++)
    u += sign > 0 ? mix64((uint64_t)ids[i]) : -mix64((uint64_t)ids[i]);
  count += sign > 0 ? (int64_t)n : -(int64_t)n;
  if ((s = meta_set_i64(idx, "emb_count", count)))
    return s;
  return meta_set_i64(idx, "emb_idsum", (int64_t)u);
}

/* The largest power of two <= 4 sqrt(n) (FAISS's guideline: 4..16 sqrt(n);
 * 100k -> 1024), small enough that k-means sees at least 39 points per
 * centroid (FAISS warns below that). */
static int nlist_for(int64_t n) {
  int nl = 16;
  while ((int64_t)(2 * nl) * (2 * nl) <= 16 * n)
    nl *= 2;
  while (nl > 1 && (int64_t)nl * 39 > n)
    nl /= 2;
  return nl;
}

static void set_nprobe(dq_index *idx) {
  if (!idx->vec_ivf)
    return;
  FaissIndexIVF *ivf = faiss_IndexIVF_cast(idx->vec);
  size_t nl = faiss_IndexIVF_nlist(ivf);
  size_t np = idx->nprobe_opt > 0 ? (size_t)idx->nprobe_opt : nl / 16;
  if (np < 8)
    np = 8;
  if (np > nl)
    np = nl;
  faiss_IndexIVF_set_nprobe(ivf, np);
}

/* Creates an empty index of the right kind for n vectors; IVF is trained on
 * a sample of x (n x dim). */
static dq_status make_index(dq_index *idx, const float *x, int64_t n,
                            int allow_ivf, FaissIndex **out) {
  char desc[64];
  int ivf = allow_ivf && n >= (int64_t)idx->ivf_threshold;
  int nl = !ivf ? 0 : idx->nlist_opt > 0 ? idx->nlist_opt : nlist_for(n);
  if (ivf)
    snprintf(desc, sizeof desc, "IVF%d,Flat", nl);
  else
    snprintf(desc, sizeof desc, "IDMap,Flat");
  FaissIndex *ix = NULL;
  if (faiss_index_factory(&ix, idx->embed_dim, desc, METRIC_INNER_PRODUCT))
    return faiss_err(idx, desc);
  if (ivf) {
    int64_t n_train = (int64_t)nl * TRAIN_PER_LIST;
    if (n_train > n)
      n_train = n;
    float *t = malloc((size_t)n_train * idx->embed_dim * sizeof *t);
    if (!t) {
      faiss_Index_free(ix);
      return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    }
    /* An even spread over the stored order (ingest order): every part of
     * the collection is represented. */
    for (int64_t i = 0; i < n_train; i++)
      memcpy(t + (size_t)i * idx->embed_dim,
             x + (size_t)(i * n / n_train) * idx->embed_dim,
             (size_t)idx->embed_dim * sizeof *t);
    int rc = faiss_Index_train(ix, n_train, t);
    free(t);
    if (rc) {
      faiss_Index_free(ix);
      return faiss_err(idx, "training the IVF index");
    }
  }
  *out = ix;
  return DQ_OK;
}

/* Loads all stored embeddings (id order). *x is n x dim floats. */
static dq_status load_all(dq_index *idx, int64_t **ids_out, float **x_out,
                          int64_t *n_out) {
  int64_t n = 0, cap = 0;
  int64_t *ids = NULL;
  float *x = NULL;
  size_t d = (size_t)idx->embed_dim;
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(
      idx, "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL"
           " ORDER BY id",
      &st);
  if (s)
    return s;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    const void *b = sqlite3_column_blob(st, 1);
    if ((size_t)sqlite3_column_bytes(st, 1) != d * 2 || !b) {
      s = dq_error_set(&idx->err, DQ_ERR_CORRUPT,
                       "%s: chunk %lld: embedding has %d bytes, expected %zu "
                       "(dim %zu as f16)",
                       idx->db_path, (long long)id,
                       sqlite3_column_bytes(st, 1), d * 2, d);
      goto fail;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 1024;
      int64_t *ni = realloc(ids, (size_t)cap * sizeof *ni);
      if (ni)
        ids = ni;
      float *nx = ni ? realloc(x, (size_t)cap * d * sizeof *nx) : NULL;
      if (!nx) {
        s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
        goto fail;
      }
      x = nx;
    }
    uint16_t h[DQ_INDEX_MAX_DIM];
    memcpy(h, b, d * 2);
    dq__f16_to_f32(h, x + (size_t)n * d, d);
    ids[n++] = id;
  }
  if (rc != SQLITE_DONE) {
    s = dq__db_err(idx, rc, "reading embeddings");
    goto fail;
  }
  sqlite3_finalize(st);
  *ids_out = ids;
  *x_out = x;
  *n_out = n;
  return DQ_OK;
fail:
  sqlite3_finalize(st);
  free(ids);
  free(x);
  return s;
}

/* Replaces idx->vec by an index built from the stored embeddings. */
static dq_status rebuild(dq_index *idx, int allow_ivf) {
  int64_t *ids = NULL, n = 0;
  float *x = NULL;
  FaissIndex *ix = NULL;
  dq_status s = load_all(idx, &ids, &x, &n);
  if (s)
    return s;
  if ((s = make_index(idx, x, n, allow_ivf, &ix)))
    goto done;
  if (n && faiss_Index_add_with_ids(ix, n, x, ids)) {
    s = faiss_err(idx, "adding vectors");
    faiss_Index_free(ix);
    goto done;
  }
  dq__vectors_free(idx);
  idx->vec = ix;
  idx->vec_ivf = faiss_IndexIVF_cast(ix) != NULL;
  idx->ivf_trained_now = idx->vec_ivf ? n : 0;
  set_nprobe(idx);
  idx->vec_dirty = 1;
done:
  free(ids);
  free(x);
  return s;
}

dq_status dq_index_vectors_rebuild(dq_index *idx) {
  if (!idx->embed_dim)
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "%s: no embedding model recorded", idx->db_path);
  return rebuild(idx, 1);
}

/* Checksum and count of the ids held by ix; -1 when its kind is unknown. */
static int file_ids(FaissIndex *ix, uint64_t *sum, int64_t *count) {
  *sum = 0;
  *count = 0;
  FaissIndexIDMap *m = faiss_IndexIDMap_cast(ix);
  if (m) {
    idx_t *p = NULL;
    size_t n = 0;
    faiss_IndexIDMap_id_map(m, &p, &n);
    for (size_t i = 0; i < n; i++)
      *sum += mix64((uint64_t)p[i]);
    *count = (int64_t)n;
    return 0;
  }
  FaissIndexIVF *ivf = faiss_IndexIVF_cast(ix);
  if (!ivf)
    return -1;
  size_t nl = faiss_IndexIVF_nlist(ivf);
  idx_t *buf = NULL;
  size_t cap = 0;
  for (size_t l = 0; l < nl; l++) {
    size_t ls = faiss_IndexIVF_get_list_size(ivf, l);
    if (!ls)
      continue;
    if (ls > cap) {
      idx_t *nb = realloc(buf, ls * sizeof *nb);
      if (!nb) {
        free(buf);
        return -1;
      }
      buf = nb;
      cap = ls;
    }
    faiss_IndexIVF_invlists_get_ids(ivf, l, buf);
    for (size_t i = 0; i < ls; i++)
      *sum += mix64((uint64_t)buf[i]);
    *count += (int64_t)ls;
  }
  free(buf);
  return 0;
}

/* Loads the vector file when it matches the database; returns a reason in
 * why (static string) when it does not. */
static dq_status try_load(dq_index *idx, const char **why) {
  int64_t vec_bytes, emb_count, emb_sum;
  struct stat sb;
  dq_status s;
  if ((s = meta_i64(idx, "vec_bytes", &vec_bytes)) ||
      (s = meta_i64(idx, "emb_count", &emb_count)) ||
      (s = meta_i64(idx, "emb_idsum", &emb_sum)))
    return s;
  *why = NULL;
  if (stat(idx->vec_path, &sb) != 0) {
    *why = "missing";
    return DQ_OK;
  }
  if (sb.st_size != vec_bytes) {
    *why = "size differs from the one recorded at save (truncated, "
           "replaced or not saved)";
    return DQ_OK;
  }
  if ((*why = check_vec_header(idx->vec_path, idx->embed_dim, emb_count)))
    return DQ_OK;
  int64_t vec_hash;
  uint64_t h;
  if ((s = meta_i64(idx, "vec_hash", &vec_hash)))
    return s;
  if (hash_file(idx->vec_path, &h) != 0 || h != (uint64_t)vec_hash) {
    *why = "content differs from the file saved (damaged or replaced)";
    return DQ_OK;
  }
  FaissIndex *ix = NULL;
  if (faiss_read_index_fname(idx->vec_path, 0, &ix)) {
    *why = "unreadable";
    return DQ_OK;
  }
  uint64_t sum;
  int64_t count;
  if (faiss_Index_d(ix) != idx->embed_dim) {
    *why = "dimension differs from the embedding model's";
  } else if (faiss_Index_metric_type(ix) != METRIC_INNER_PRODUCT) {
    *why = "metric is not inner product";
  } else if (file_ids(ix, &sum, &count) != 0) {
    *why = "unknown index kind";
  } else if (count != emb_count || count != faiss_Index_ntotal(ix)) {
    *why = "vector count differs from the database";
  } else if (sum != (uint64_t)emb_sum) {
    *why = "vector ids differ from the database";
  }
  if (*why) {
    faiss_Index_free(ix);
    return DQ_OK;
  }
  idx->vec = ix;
  idx->vec_ivf = faiss_IndexIVF_cast(ix) != NULL;
  set_nprobe(idx);
  return DQ_OK;
}

dq_status dq__vectors_open(dq_index *idx) {
  if (!idx->embed_dim)
    return DQ_OK;
  const char *why = NULL;
  int64_t emb_count = 0;
  dq_status s = try_load(idx, &why);
  if (s || !why)
    return s;
  if ((s = meta_i64(idx, "emb_count", &emb_count)))
    return s;
  if (emb_count > 0 || strcmp(why, "missing") != 0) {
    dq_log(idx->log, DQ_LOG_WARN,
           "%s: %s; rebuilding it from %lld stored embeddings", idx->vec_path,
           why, (long long)emb_count);
    idx->rebuilt_at_open = 1;
  }
  /* A reader rebuilds an exact index in memory: no training, no file. */
  if ((s = rebuild(idx, !idx->read_only)))
    return s;
  if (idx->read_only || !idx->rebuilt_at_open) {
    idx->vec_dirty = !idx->read_only && emb_count > 0;
    return DQ_OK;
  }
  return dq_index_vectors_save(idx);
}

static dq_status ensure_index(dq_index *idx) {
  if (idx->vec)
    return DQ_OK;
  FaissIndex *ix = NULL;
  dq_status s = make_index(idx, NULL, 0, 0, &ix);
  if (!s)
    idx->vec = ix;
  return s;
}

dq_status dq__vectors_remove(dq_index *idx, const int64_t *ids, size_t n) {
  if (!idx->vec || !n)
    return DQ_OK;
  FaissIDSelectorBatch *sel = NULL;
  size_t removed = 0;
  if (faiss_IDSelectorBatch_new(&sel, n, ids))
    return faiss_err(idx, "removing vectors");
  int rc = faiss_Index_remove_ids(idx->vec, (FaissIDSelector *)sel, &removed);
  faiss_IDSelector_free((FaissIDSelector *)sel);
  idx->vec_dirty = 1;
  return rc ? faiss_err(idx, "removing vectors") : DQ_OK;
}

dq_status dq_index_set_embeddings(dq_index *idx, const int64_t *ids,
                                  const float *vecs, size_t n, int dim) {
  dq_status s = dq__check_writable(idx);
  if (s)
    return s;
  if (!idx->embed_dim)
    return dq_error_set(&idx->err, DQ_ERR_ARG,
                        "%s: no embedding model recorded (open with "
                        "embed_model/embed_dim first)",
                        idx->db_path);
  if (dim != idx->embed_dim)
    return dq_error_set(&idx->err, DQ_ERR_MISMATCH,
                        "%s: embedding dimension %d, but the index holds "
                        "model '%s' with dimension %d",
                        idx->db_path, dim, idx->embed_model, idx->embed_dim);
  size_t d = (size_t)dim;
  float *x = malloc(n * d * sizeof *x);
  uint16_t *h = malloc(d * sizeof *h);
  int64_t *had = malloc(n * sizeof *had), *fresh = malloc(n * sizeof *fresh);
  size_t n_had = 0, n_fresh = 0;
  sqlite3_stmt *q = NULL, *u = NULL;
  if (!x || !h || !had || !fresh) {
    s = dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((s = dq__begin(idx)))
    goto done;
  if ((s = dq__prepare(idx, "SELECT embedding IS NOT NULL FROM chunks"
                            " WHERE id = ?1",
                       &q)) ||
      (s = dq__prepare(idx, "UPDATE chunks SET embedding = ?2 WHERE id = ?1",
                       &u)))
    goto fail;
  for (size_t i = 0; i < n; i++) {
    const float *v = vecs + i * d;
    double norm = 0;
    for (size_t j = 0; j < d; j++)
      norm += (double)v[j] * v[j];
    if (!(norm > 0) || !isfinite(norm)) {
      s = dq_error_set(&idx->err, DQ_ERR_ARG,
                       "embedding for chunk %lld is zero or not finite",
                       (long long)ids[i]);
      goto fail;
    }
    float inv = (float)(1.0 / sqrt(norm));
    for (size_t j = 0; j < d; j++)
      x[i * d + j] = v[j] * inv;
    dq__f32_to_f16(x + i * d, h, d);
    /* FAISS gets exactly what a rebuild would read back. */
    dq__f16_to_f32(h, x + i * d, d);
    sqlite3_bind_int64(q, 1, ids[i]);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
      s = dq_error_set(&idx->err, DQ_ERR_NOTFOUND, "%s: no chunk with id %lld",
                       idx->db_path, (long long)ids[i]);
      goto fail;
    }
    if (rc != SQLITE_ROW) {
      s = dq__db_err(idx, rc, "reading a chunk");
      goto fail;
    }
    if (sqlite3_column_int(q, 0))
      had[n_had++] = ids[i];
    else
      fresh[n_fresh++] = ids[i];
    sqlite3_reset(q);
    sqlite3_bind_int64(u, 1, ids[i]);
    sqlite3_bind_blob(u, 2, h, (int)(d * 2), SQLITE_STATIC);
    rc = sqlite3_step(u);
    sqlite3_reset(u);
    if (rc != SQLITE_DONE) {
      s = dq__db_err(idx, rc, "storing an embedding");
      goto fail;
    }
  }
  if ((s = emb_meta_update(idx, fresh, n_fresh, +1)))
    goto fail;
  sqlite3_finalize(q);
  sqlite3_finalize(u);
  q = u = NULL;
  if ((s = dq__commit(idx)))
    goto done;
  if ((s = ensure_index(idx)) || (s = dq__vectors_remove(idx, had, n_had)))
    goto done;
  if (faiss_Index_add_with_ids(idx->vec, (idx_t)n, x, ids))
    s = faiss_err(idx, "adding vectors");
  idx->vec_dirty = 1;
  goto done;
fail:
  sqlite3_finalize(q);
  sqlite3_finalize(u);
  q = u = NULL;
  dq__rollback(idx);
done:
  sqlite3_finalize(q);
  sqlite3_finalize(u);
  free(x);
  free(h);
  free(had);
  free(fresh);
  return s;
}

/* Called by docs.c inside a document transaction. */
dq_status dq__emb_forget(dq_index *idx, const int64_t *ids, size_t n) {
  return n ? emb_meta_update(idx, ids, n, -1) : DQ_OK;
}

dq_status dq__emb_adopt(dq_index *idx, const int64_t *ids, size_t n) {
  return n ? emb_meta_update(idx, ids, n, +1) : DQ_OK;
}

dq_status dq__vectors_add_f16(dq_index *idx, const int64_t *ids,
                              const uint16_t *const *h, size_t n) {
  if (!n)
    return DQ_OK;
  size_t d = (size_t)idx->embed_dim;
  float *x = malloc(n * d * sizeof *x);
  if (!x)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    dq__f16_to_f32(h[i], x + i * d, d);
  dq_status s = ensure_index(idx);
  if (!s && faiss_Index_add_with_ids(idx->vec, (idx_t)n, x, ids))
    s = faiss_err(idx, "adding vectors");
  idx->vec_dirty = 1;
  free(x);
  return s;
}

dq_status dq__vectors_search(dq_index *idx, const float *q, size_t k,
                             int64_t *ids, float *scores, size_t *n) {
  *n = 0;
  int64_t total = dq__vectors_count(idx);
  if (!total || !k)
    return DQ_OK;
  if ((int64_t)k > total)
    k = (size_t)total;
  idx_t *lab = malloc(k * sizeof *lab);
  if (!lab)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  if (faiss_Index_search(idx->vec, 1, q, (idx_t)k, scores, lab)) {
    free(lab);
    return faiss_err(idx, "searching");
  }
  size_t m = 0;
  for (size_t i = 0; i < k; i++) {
    if (lab[i] < 0)
      continue;
    ids[m] = lab[i];
    scores[m++] = scores[i];
  }
  *n = m;
  free(lab);
  return DQ_OK;
}

static dq_status fsync_path(dq_index *idx, const char *path, int dir) {
  int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    int e = errno;
    if (fd >= 0)
      close(fd);
    return dq_error_set(&idx->err, e == ENOSPC ? DQ_ERR_FULL : DQ_ERR_IO,
                        "%s: %s", path, strerror(e));
  }
  close(fd);
  return DQ_OK;
}

dq_status dq_index_vectors_save(dq_index *idx) {
  if (idx->read_only)
    return dq_error_set(&idx->err, DQ_ERR_READONLY,
                        "%s: index opened read-only", idx->vec_path);
  if (!idx->embed_dim)
    return DQ_OK;
  dq_status s = ensure_index(idx);
  if (s)
    return s;
  /* Flat -> IVF at the threshold; IVF is retrained (more lists) once the
   * collection has grown 4x past the size it was trained at. */
  int64_t count = dq__vectors_count(idx), trained_n = 0;
  if ((s = meta_i64(idx, "ivf_trained_n", &trained_n)))
    return s;
  if (idx->ivf_trained_now)
    trained_n = idx->ivf_trained_now;
  int retrain = count >= (int64_t)idx->ivf_threshold &&
                (!idx->vec_ivf || count > 4 * trained_n);
  if (retrain) {
    if ((s = rebuild(idx, 1)))
      return s;
    trained_n = count;
  }
  size_t n = strlen(idx->vec_path) + 32;
  char *tmp = malloc(n);
  if (!tmp)
    return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
  snprintf(tmp, n, "%s.tmp.%ld", idx->vec_path, (long)getpid());
  struct stat sb;
  if (faiss_write_index_fname(idx->vec, tmp)) {
    int e = errno;
    s = dq_error_set(&idx->err, e == ENOSPC ? DQ_ERR_FULL : DQ_ERR_IO,
                     "%s: cannot write the vector file (%s): %s", tmp,
                     strerror(e), faiss_get_last_error());
    goto fail;
  }
  if ((s = fsync_path(idx, tmp, 0)))
    goto fail;
  uint64_t h;
  if (stat(tmp, &sb) != 0 || hash_file(tmp, &h) != 0) {
    s = dq_error_set(&idx->err, DQ_ERR_IO, "%s: %s", tmp, strerror(errno));
    goto fail;
  }
  /* Record size and hash first: a crash before the rename leaves values
   * that match neither file, so the next open rebuilds (safe). */
  if ((s = dq__begin(idx)))
    goto fail;
  if ((s = meta_set_i64(idx, "vec_bytes", (int64_t)sb.st_size)) ||
      (s = meta_set_i64(idx, "vec_hash", (int64_t)h)) ||
      (s = meta_set_i64(idx, "ivf_trained_n", idx->vec_ivf ? trained_n : 0))) {
    dq__rollback(idx);
    goto fail;
  }
  if ((s = dq__commit(idx)))
    goto fail;
  if (rename(tmp, idx->vec_path) != 0) {
    s = dq_error_set(&idx->err, DQ_ERR_IO, "%s: rename to %s failed: %s", tmp,
                     idx->vec_path, strerror(errno));
    goto fail;
  }
  free(tmp);
  idx->vec_dirty = 0;
  return fsync_path(idx, idx->dir, 1);
fail:
  unlink(tmp);
  free(tmp);
  return s;
}

dq_status dq_index_missing_embeddings(dq_index *idx, int64_t after_id,
                                      size_t max, dq_chunk_text **out,
                                      size_t *n) {
  *out = NULL;
  *n = 0;
  if (!max)
    return DQ_OK;
  sqlite3_stmt *st = NULL;
  dq_status s = dq__prepare(idx,
                            "SELECT id, text FROM chunks WHERE embedding IS"
                            " NULL AND id > ?1 ORDER BY id LIMIT ?2",
                            &st);
  if (s)
    return s;
  sqlite3_bind_int64(st, 1, after_id);
  sqlite3_bind_int64(st, 2, (int64_t)(max > INT64_MAX ? INT64_MAX : max));
  dq_chunk_text *t = calloc(max < 4096 ? max : 4096, sizeof *t);
  size_t cap = max < 4096 ? max : 4096, m = 0;
  int rc = SQLITE_ERROR;
  if (!t)
    goto nomem;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (m == cap) {
      dq_chunk_text *nt = realloc(t, cap * 2 * sizeof *nt);
      if (!nt)
        goto nomem;
      t = nt;
      cap *= 2;
    }
    int nb = sqlite3_column_bytes(st, 1);
    const void *p = sqlite3_column_text(st, 1);
    t[m].id = sqlite3_column_int64(st, 0);
    t[m].text = malloc((size_t)nb + 1);
    if (!t[m].text)
      goto nomem;
    memcpy(t[m].text, p ? p : "", (size_t)nb);
    t[m].text[nb] = '\0';
    t[m++].text_bytes = (size_t)nb;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    dq_chunk_texts_free(t, m);
    return dq__db_err(idx, rc, "listing chunks without embeddings");
  }
  if (m == 0) { /* none: nothing for the caller to free */
    free(t);
    t = NULL;
  }
  *out = t;
  *n = m;
  return DQ_OK;
nomem:
  sqlite3_finalize(st);
  dq_chunk_texts_free(t, m);
  return dq_error_set(&idx->err, DQ_ERR_NOMEM, "out of memory");
}

void dq_chunk_texts_free(dq_chunk_text *t, size_t n) {
  if (!t)
    return;
  for (size_t i = 0; i < n; i++)
    free(t[i].text);
  free(t);
}

static int64_t file_bytes(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

dq_status dq_index_stats_get(dq_index *idx, dq_index_stats *o) {
  memset(o, 0, sizeof *o);
  static const char *const q[] = {
      "SELECT count(*) FROM documents",
      "SELECT count(*) FROM chunks",
      "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL",
      "SELECT count(*) FROM symbols",
      "SELECT count(*) FROM refs",
      "SELECT count(*) FROM sessions",
      "SELECT count(*) FROM turns"};
  int64_t *dst[] = {&o->n_docs, &o->n_chunks,   &o->n_embedded, &o->n_symbols,
                    &o->n_refs, &o->n_sessions, &o->n_turns};
  for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++) {
    sqlite3_stmt *st = NULL;
    dq_status s = dq__prepare(idx, q[i], &st);
    if (s)
      return s;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
      *dst[i] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
      return dq__db_err(idx, rc, q[i]);
  }
  o->n_vectors = dq__vectors_count(idx);
  o->vectors_ivf = idx->vec_ivf;
  if (idx->vec_ivf) {
    FaissIndexIVF *ivf = faiss_IndexIVF_cast(idx->vec);
    o->nlist = (int64_t)faiss_IndexIVF_nlist(ivf);
    o->nprobe = (int64_t)faiss_IndexIVF_nprobe(ivf);
  }
  size_t n = strlen(idx->db_path) + 8;
  char *wal = malloc(n);
  if (wal) {
    snprintf(wal, n, "%s-wal", idx->db_path);
    o->db_bytes = file_bytes(idx->db_path) + file_bytes(wal);
    free(wal);
  }
  o->vectors_bytes = file_bytes(idx->vec_path);
  o->rebuilt_at_open = idx->rebuilt_at_open;
  return DQ_OK;
}
