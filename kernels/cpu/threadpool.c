/*
 * threadpool.c - persistent worker threads for the CPU kernels. A job is one
 * function run on every thread at once (the caller is thread 0); the call
 * returns when all threads have finished it. Workers wait for the next job by
 * spinning briefly on a generation counter (jobs arrive back to back during a
 * forward pass) and then sleeping on a condition variable, so an idle pool
 * costs no CPU. No threads are created per job.
 *
 * The pool also owns a growable scratch buffer for dq_matmul's quantized
 * activations, so the hot path does not allocate.
 */
#include "cpu_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SPIN_ITERS 4000 /* ~0.1 ms of pause before sleeping */
#define MAX_THREADS 512

struct dq_threadpool {
  int n_threads;
  pthread_t *threads; /* n_threads - 1 workers */
  int n_started;
  pthread_mutex_t mu;
  pthread_cond_t cv_job, cv_done;
  atomic_uint gen;     /* bumped (under mu) to publish a job or stop */
  atomic_int pending;  /* workers still running the current job */
  atomic_int stop;
  dq_task_fn fn;       /* written before gen is bumped */
  void *ctx;
  void *scratch;       /* dq_matmul's activation buffer */
  size_t scratch_bytes;
};

struct worker_arg {
  dq_threadpool *pool;
  int ith;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void *worker_main(void *p) {
  dq_threadpool *pool = ((struct worker_arg *)p)->pool;
  int ith = ((struct worker_arg *)p)->ith;
  free(p);
  unsigned seen = 0;
  for (;;) {
    for (int k = 0; k < SPIN_ITERS && atomic_load(&pool->gen) == seen; k++)
      cpu_relax();
    if (atomic_load(&pool->gen) == seen) {
      pthread_mutex_lock(&pool->mu);
      while (atomic_load(&pool->gen) == seen)
        pthread_cond_wait(&pool->cv_job, &pool->mu);
      pthread_mutex_unlock(&pool->mu);
    }
    seen = atomic_load(&pool->gen);
    if (atomic_load(&pool->stop))
      break;
    pool->fn(pool->ctx, ith, pool->n_threads);
    if (atomic_fetch_sub(&pool->pending, 1) == 1) {
      pthread_mutex_lock(&pool->mu);
      pthread_cond_signal(&pool->cv_done);
      pthread_mutex_unlock(&pool->mu);
    }
  }
  return NULL;
}

dq_status dq_threadpool_new(int n_threads, dq_threadpool **out) {
  dq_threadpool *pool = NULL;
  if (!out || n_threads < 1 || n_threads > MAX_THREADS)
    return DQ_ERR_ARG;
  *out = NULL;
  pool = calloc(1, sizeof *pool);
  if (!pool)
    return DQ_ERR_NOMEM;
  pool->n_threads = n_threads;
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->cv_job, NULL);
  pthread_cond_init(&pool->cv_done, NULL);
  if (n_threads > 1) {
    pool->threads = calloc((size_t)n_threads - 1, sizeof *pool->threads);
    if (!pool->threads)
      goto fail;
    for (int i = 1; i < n_threads; i++) {
      struct worker_arg *arg = malloc(sizeof *arg);
      if (!arg)
        goto fail;
      arg->pool = pool;
      arg->ith = i;
      if (pthread_create(&pool->threads[i - 1], NULL, worker_main, arg) != 0) {
        free(arg);
        goto fail;
      }
      pool->n_started++;
    }
  }
  *out = pool;
  return DQ_OK;
fail:
  dq_threadpool_free(pool);
  return DQ_ERR_NOMEM;
}

void dq_threadpool_free(dq_threadpool *pool) {
  if (!pool)
    return;
  pthread_mutex_lock(&pool->mu);
  atomic_store(&pool->stop, 1);
  atomic_fetch_add(&pool->gen, 1);
  pthread_cond_broadcast(&pool->cv_job);
  pthread_mutex_unlock(&pool->mu);
  for (int i = 0; i < pool->n_started; i++)
    pthread_join(pool->threads[i], NULL);
  pthread_cond_destroy(&pool->cv_job);
  pthread_cond_destroy(&pool->cv_done);
  pthread_mutex_destroy(&pool->mu);
  free(pool->threads);
  free(pool->scratch);
  free(pool);
}

int dq_threadpool_size(const dq_threadpool *pool) {
  return pool ? pool->n_threads : 1;
}

void dq_threadpool_run(dq_threadpool *pool, dq_task_fn fn, void *ctx) {
  if (!pool || pool->n_threads == 1) {
    fn(ctx, 0, 1);
    return;
  }
  pool->fn = fn;
  pool->ctx = ctx;
  atomic_store(&pool->pending, pool->n_threads - 1);
  pthread_mutex_lock(&pool->mu);
  atomic_fetch_add(&pool->gen, 1);
  pthread_cond_broadcast(&pool->cv_job);
  pthread_mutex_unlock(&pool->mu);
  fn(ctx, 0, pool->n_threads);
  for (int k = 0; k < SPIN_ITERS && atomic_load(&pool->pending) > 0; k++)
    cpu_relax();
  if (atomic_load(&pool->pending) > 0) {
    pthread_mutex_lock(&pool->mu);
    while (atomic_load(&pool->pending) > 0)
      pthread_cond_wait(&pool->cv_done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
  }
}

/* Internal (cpu_int.h): scratch of at least `bytes`, owned by the pool,
 * on a cache line (dq_matmul lays its activation rows on 64-byte
 * boundaries of it: from realloc's 16-byte alignment, AVX-512 loads
 * straddled lines, which cost the Q4_1 GEMM 9% of a 2k GSM prefill).
 * The contents do not survive growth. */
void *dq_threadpool_scratch(dq_threadpool *pool, size_t bytes) {
  if (pool->scratch_bytes < bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0)
      return NULL;
    free(pool->scratch);
    pool->scratch = p;
    pool->scratch_bytes = bytes;
  }
  return pool->scratch;
}
