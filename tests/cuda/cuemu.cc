/*
 * cuemu.cc - the scheduler and runtime of cuemu.h: a block's threads as
 * fibers, run round by round in a random order until each reaches a
 * synchronisation point, which the scheduler then releases. A fiber enters
 * its stack once (makecontext/swapcontext) and then loops, running the
 * current kernel for each block; switches after that are _setjmp/_longjmp
 * (swapcontext's signal-mask system call on every switch took a third of
 * the run time).
 */
#include "cuemu.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include <deque>
#include <map>
#include <vector>

cuemu_block_state cuemu_blk;

namespace {

enum { RUNNABLE, AT_BARRIER, AT_WARP, DONE };

struct fiber {
  ucontext_t ctx; /* the first entry only */
  jmp_buf jb;     /* where it continues */
  bool started;
  uint3 idx;
  int lane, warp, state;
  unsigned mask; /* AT_WARP: the lanes that sync */
  int pred;      /* AT_BARRIER: __syncthreads_or's predicate */
  int or_gen;    /* the barrier generation it waits on */
};

constexpr size_t STACK = 256 * 1024;
constexpr size_t SMEM_MAX = 256 * 1024;

struct sched {
  std::deque<fiber> f; /* the pool (never moves): the first nt run a launch */
  int nt = 0;
  std::vector<char *> stacks;
  ucontext_t main_ctx;
  jmp_buf main_jb;
  fiber *cur = nullptr;
  const std::function<void()> *body = nullptr;
  std::vector<uint64_t> slots; /* 32 per warp */
  int or_result[2] = {0, 0};
  int gen = 0;
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  alignas(16) unsigned char smem[SMEM_MAX];
  int n_sm = 132, smem_optin = 232448;
  std::map<const void *, int> func_smem;
  cudaError_t last = cudaSuccess;
  long launches = 0;
};
sched S;

uint64_t next_rand() {
  S.rng ^= S.rng << 13;
  S.rng ^= S.rng >> 7;
  S.rng ^= S.rng << 17;
  return S.rng;
}

[[noreturn]] void die(const char *what) {
  fprintf(stderr, "cuemu: %s (block %u,%u,%u)\n", what, cuemu_blk.idx.x,
          cuemu_blk.idx.y, cuemu_blk.idx.z);
  abort();
}

/* Hands control back to the scheduler until resumed. */
void yield_to_sched() {
  if (!_setjmp(S.cur->jb))
    _longjmp(S.main_jb, 1);
}

/* A fiber's whole life: the current kernel once per block it is given. */
void trampoline() {
  for (;;) {
    (*S.body)();
    S.cur->state = DONE;
    yield_to_sched();
  }
}

/* Runs fiber i until it yields. */
void resume(int i) {
  S.cur = &S.f[i];
  if (!_setjmp(S.main_jb)) {
    if (!S.cur->started) {
      S.cur->started = true;
      swapcontext(&S.main_ctx, &S.cur->ctx);
    } else {
      _longjmp(S.cur->jb, 1);
    }
  }
}

/* Releases what can be released; returns whether anything was. */
bool release() {
  const int n = S.nt;
  bool any = false;
  /* warp syncs: a waiting lane's mask, every live lane in it waiting */
  for (int w = 0; w * 32 < n; w++) {
    for (int l = 0; l < 32 && w * 32 + l < n; l++) {
      fiber &a = S.f[w * 32 + l];
      if (a.state != AT_WARP)
        continue;
      bool all = true;
      for (int m = 0; m < 32 && w * 32 + m < n; m++) {
        const fiber &b = S.f[w * 32 + m];
        if (!(a.mask >> m & 1u) || b.state == DONE)
          continue;
        if (b.state != AT_WARP || b.mask != a.mask)
          all = false;
      }
      if (!all)
        continue;
      for (int m = 0; m < 32 && w * 32 + m < n; m++) {
        fiber &b = S.f[w * 32 + m];
        if ((a.mask >> m & 1u) && b.state == AT_WARP)
          b.state = RUNNABLE;
      }
      any = true;
    }
  }
  if (any)
    return true;
  /* the block barrier: every live thread there */
  int live = 0, at = 0, orv = 0;
  for (int i = 0; i < n; i++)
    if (const fiber &a = S.f[i]; a.state != DONE) {
      live++;
      if (a.state == AT_BARRIER) {
        at++;
        orv |= a.pred != 0;
      }
    }
  if (live && at == live) {
    S.or_result[S.gen & 1] = orv;
    S.gen++;
    for (int i = 0; i < n; i++)
      if (S.f[i].state == AT_BARRIER)
        S.f[i].state = RUNNABLE;
    return true;
  }
  return false;
}

void run_block() {
  const int n = S.nt;
  std::vector<int> order;
  for (;;) {
    order.clear();
    for (int i = 0; i < n; i++)
      if (S.f[i].state == RUNNABLE)
        order.push_back(i);
    if (order.empty()) {
      bool done = true;
      for (int i = 0; i < n; i++)
        done = done && S.f[i].state == DONE;
      if (done)
        return;
      if (!release())
        die("deadlock: threads wait at __syncthreads and at a warp sync "
            "that cannot both complete");
      continue;
    }
    for (int i = (int)order.size() - 1; i > 0; i--) {
      int j = (int)(next_rand() % (uint64_t)(i + 1));
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int i : order)
      resume(i);
    S.cur = nullptr;
  }
}

cudaError_t fail(cudaError_t e) {
  S.last = e;
  return e;
}

} // namespace

const uint3 &cuemu_thread_idx() {
  if (!S.cur)
    die("threadIdx outside a kernel");
  return S.cur->idx;
}

void *cuemu_dyn_smem() { return S.smem; }
int cuemu_lane() { return S.cur->lane; }
uint64_t *cuemu_warp_slots() { return &S.slots[(size_t)S.cur->warp * 32]; }

void cuemu_barrier() {
  S.cur->state = AT_BARRIER;
  S.cur->pred = 0;
  yield_to_sched();
}

int cuemu_barrier_or(int pred) {
  S.cur->state = AT_BARRIER;
  S.cur->pred = pred;
  const int g = S.gen;
  yield_to_sched();
  return S.or_result[g & 1];
}

void cuemu_warp_sync(unsigned mask) {
  S.cur->state = AT_WARP;
  S.cur->mask = mask;
  yield_to_sched();
}

void cuemu_set_device(int n_sm, int smem_optin) {
  S.n_sm = n_sm;
  S.smem_optin = smem_optin;
}
void cuemu_set_seed(uint64_t seed) { S.rng = seed ? seed : 1; }
long cuemu_launches() { return S.launches; }

cudaError_t cuemu_set_func_smem(const void *k, int bytes) {
  if (bytes < 0 || bytes > S.smem_optin)
    return fail(cudaErrorInvalidValue);
  S.func_smem[k] = bytes;
  return cudaSuccess;
}

cudaError_t cuemu_run(const void *kernel, dim3 grid, dim3 block,
                      size_t smem_bytes, const std::function<void()> &body) {
  const size_t nt = (size_t)block.x * block.y * block.z;
  if (nt == 0 || nt > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.y > 65535 || grid.z > 65535 || block.z > 64)
    return fail(cudaErrorInvalidConfiguration);
  auto it = S.func_smem.find(kernel);
  const size_t allowed =
      it != S.func_smem.end() && it->second > 48 * 1024 ? it->second
                                                        : 48 * 1024;
  if (smem_bytes > allowed || smem_bytes > SMEM_MAX)
    return fail(cudaErrorInvalidValue);
  S.launches++;
  while (S.f.size() < nt) { /* a ucontext must not move: a deque */
    const size_t i = S.f.size();
    S.f.emplace_back();
    fiber &a = S.f[i];
    S.stacks.push_back((char *)malloc(STACK));
    getcontext(&a.ctx);
    a.ctx.uc_stack.ss_sp = S.stacks[i];
    a.ctx.uc_stack.ss_size = STACK;
    a.ctx.uc_link = nullptr;
    makecontext(&a.ctx, trampoline, 0);
    a.started = false;
  }
  S.nt = (int)nt;
  S.slots.assign((nt + 31) / 32 * 32, 0);
  S.body = &body;
  cuemu_blk.grid = grid;
  cuemu_blk.block = block;
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++) {
        cuemu_blk.idx = dim3(x, y, z);
        memset(S.smem, 0xA5, smem_bytes);
        for (size_t i = 0; i < nt; i++) {
          fiber &a = S.f[i];
          a.idx.x = (unsigned)(i % block.x);
          a.idx.y = (unsigned)(i / block.x % block.y);
          a.idx.z = (unsigned)(i / ((size_t)block.x * block.y));
          a.lane = (int)(i % 32);
          a.warp = (int)(i / 32);
          a.state = RUNNABLE;
          a.mask = 0;
          a.pred = 0;
        }
        run_block();
      }
  S.body = nullptr;
  return cudaSuccess;
}

/* ---- the runtime ---------------------------------------------------------- */

extern "C" {

cudaError_t cuemu_GetDevice(int *d) {
  *d = 0;
  return cudaSuccess;
}

cudaError_t cuemu_DeviceGetAttribute(int *v, enum cudaDeviceAttr attr,
                                     int dev) {
  (void)dev;
  switch (attr) {
  case cudaDevAttrMultiProcessorCount: *v = S.n_sm; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = S.smem_optin; break;
  case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
  case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
  default: *v = 0; break;
  }
  return cudaSuccess;
}

cudaError_t cuemu_GetLastError(void) {
  cudaError_t e = S.last;
  S.last = cudaSuccess;
  return e;
}
cudaError_t cuemu_PeekAtLastError(void) { return S.last; }

const char *cuemu_GetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  default: return "cuemu: some error";
  }
}

cudaError_t cuemu_Malloc(void **p, size_t n) {
  *p = aligned_alloc(256, (n + 255) / 256 * 256 + 256);
  return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cuemu_Free(void *p) {
  free(p);
  return cudaSuccess;
}
cudaError_t cuemu_MallocAsync(void **p, size_t n, cudaStream_t s) {
  (void)s;
  return cuemu_Malloc(p, n);
}
cudaError_t cuemu_FreeAsync(void *p, cudaStream_t s) {
  (void)s;
  return cuemu_Free(p);
}
cudaError_t cuemu_Memcpy(void *d, const void *s, size_t n,
                         enum cudaMemcpyKind k) {
  (void)k;
  memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cuemu_MemcpyAsync(void *d, const void *s, size_t n,
                              enum cudaMemcpyKind k, cudaStream_t st) {
  (void)st;
  return cuemu_Memcpy(d, s, n, k);
}
cudaError_t cuemu_Memset(void *d, int v, size_t n) {
  memset(d, v, n);
  return cudaSuccess;
}
cudaError_t cuemu_MemsetAsync(void *d, int v, size_t n, cudaStream_t st) {
  (void)st;
  return cuemu_Memset(d, v, n);
}
cudaError_t cuemu_GetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cuemu_StreamCreate(cudaStream_t *st) {
  static int token;
  *st = (cudaStream_t)(void *)&token;
  return cudaSuccess;
}
cudaError_t cuemu_StreamDestroy(cudaStream_t st) {
  (void)st;
  return cudaSuccess;
}
cudaError_t cuemu_DeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cuemu_StreamSynchronize(cudaStream_t st) {
  (void)st;
  return cudaSuccess;
}

} /* extern "C" */
