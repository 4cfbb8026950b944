/*
 * cuemu.cc - the scheduler and runtime of cuemu.h: a block's threads as
 * fibers, run round by round in a random order until each reaches a
 * synchronisation point, which the scheduler then releases. A fiber loops
 * on its own stack, running the current kernel for each block. On x86-64
 * it is entered and switched by cuemu_ctx_swap: the callee-saved registers
 * pushed, the stack pointer exchanged (the _setjmp/_longjmp it replaced
 * went through glibc's unwinding checks: 12% of cuda_ops_emul's time);
 * elsewhere it enters its stack once by makecontext/swapcontext and
 * switches by _setjmp/_longjmp (swapcontext's signal-mask system call on
 * every switch took a third of the run time).
 *
 * Under AddressSanitizer every switch is announced to it
 * (__sanitizer_start/finish_switch_fiber), device and pinned allocations
 * are their exact size, and the dynamic shared memory past the launch's
 * size is poisoned: a kernel that reads or writes past a buffer or past its
 * shared memory is reported where it does so (on a device it reads garbage
 * or writes into a neighbour, silently).
 */
#include "cuemu.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define CUEMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUEMU_ASAN 1
#endif
#endif
#ifndef CUEMU_ASAN
#define CUEMU_ASAN 0
#endif
#if CUEMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(CUEMU_NO_ASM_SWITCH)
#define CUEMU_ASM_SWITCH 1
/* cuemu_ctx_swap(save, to): pushes rbx, rbp, r12-r15 (what the SysV ABI
 * has a callee keep; the emulator never changes MXCSR or the x87 control
 * word), stores the stack pointer in *save, takes `to` as the stack
 * pointer, pops the same registers and returns: into the other side's
 * cuemu_ctx_swap call, or, on a fresh stack, into its entry function. */
extern "C" void cuemu_ctx_swap(void **save, void *to);
asm(".text\n"
    ".globl cuemu_ctx_swap\n"
    ".hidden cuemu_ctx_swap\n"
    ".type cuemu_ctx_swap, @function\n"
    "cuemu_ctx_swap:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n"
    "  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n"
    "  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size cuemu_ctx_swap, .-cuemu_ctx_swap\n");
#else
#define CUEMU_ASM_SWITCH 0
#endif

#include <deque>
#include <map>
#include <vector>

cuemu_block_state cuemu_blk;

/* A recorded operation: a launch (kernel set) or a copy, set or host-side
 * stand-in (kernel NULL). */
struct cuemu_op {
  const void *kernel;
  std::function<void()> run;
};

namespace {

enum { RUNNABLE, AT_BARRIER, AT_WARP, DONE };

struct fiber {
#if CUEMU_ASM_SWITCH
  void *sp; /* its saved stack pointer (cuemu_ctx_swap's pushes on top) */
#else
  ucontext_t ctx; /* the first entry only */
  jmp_buf jb;     /* where it continues */
  bool started;
#endif
  uint3 idx;
  int lane, warp, state;
  unsigned mask; /* AT_WARP: the lanes that sync */
  int pred;      /* AT_BARRIER: __syncthreads_or's predicate */
  int or_gen;    /* the barrier generation it waits on */
  unsigned coll; /* warp-wide instructions (mma, ldmatrix) it has run */
#if CUEMU_ASAN
  void *fake;       /* ASan's fake stack while switched out */
  const char *base; /* its stack */
#endif
};

constexpr size_t STACK = 256 * 1024;

/* A lane's operands of a warp-wide tensor-core instruction. */
struct lane_rec {
  uint32_t op, seq;       /* the instruction, the lane's count of them */
  unsigned char data[24]; /* its operands */
};
constexpr size_t SMEM_MAX = 256 * 1024;

struct sched {
  std::deque<fiber> f; /* the pool (never moves): the first nt run a launch */
  std::vector<fiber *> fp; /* &f[i]: indexing a deque costs a division */
  int nt = 0;
  std::vector<char *> stacks;
#if CUEMU_ASM_SWITCH
  void *main_sp; /* the scheduler's, while a fiber runs */
#else
  ucontext_t main_ctx;
  jmp_buf main_jb;
#endif
  fiber *cur = nullptr;
#if CUEMU_ASAN
  void *main_fake = nullptr;          /* the scheduler's, while a fiber runs */
  const void *main_base = nullptr;    /* the scheduler's stack, as ASan */
  size_t main_size = 0;               /* told the first fiber */
#endif
  const std::function<void()> *body = nullptr;
  std::vector<uint64_t> slots; /* 32 per warp */
  std::vector<lane_rec> recs; /* 32 per warp */
  size_t smem_bytes = 0; /* the running launch's dynamic shared memory */
  long mma_count = 0;
  int or_result[2] = {0, 0};
  int gen = 0;
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  alignas(16) unsigned char smem[SMEM_MAX];
  int n_sm = 132, smem_optin = 232448;
  std::map<const void *, int> func_smem;
  cudaError_t last = cudaSuccess;
  long launches = 0;
  /* stream capture: what would have run, in order */
  bool capturing = false, cap_invalid = false;
  std::vector<cuemu_op> rec;
  /* allocations, to tell device and pinned memory from pageable */
  std::map<uintptr_t, size_t> dev_mem, pinned;
  ~sched() { /* at exit (LeakSanitizer looks after the destructors) */
    for (char *p : stacks)
      free(p);
  }
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

/* ASan's side of a switch: before it, the stack being entered; after
 * it, on the stack entered, that the switch is done (the first time on a
 * fiber's stack, also where the scheduler's stack is). */
#if CUEMU_ASAN
void asan_enter_fiber(fiber *f) {
  __sanitizer_start_switch_fiber(&S.main_fake, f->base, STACK);
}
void asan_back_in_sched() { __sanitizer_finish_switch_fiber(S.main_fake, 0, 0); }
void asan_leave_fiber(fiber *f) {
  __sanitizer_start_switch_fiber(&f->fake, S.main_base, S.main_size);
}
void asan_in_fiber(fiber *f) {
  const void *base;
  size_t size;
  __sanitizer_finish_switch_fiber(f->fake, &base, &size);
  S.main_base = base;
  S.main_size = size;
}
#else
void asan_enter_fiber(fiber *) {}
void asan_back_in_sched() {}
void asan_leave_fiber(fiber *) {}
void asan_in_fiber(fiber *) {}
#endif

/* Hands control back to the scheduler until resumed. */
void yield_to_sched() {
  fiber *me = S.cur;
  asan_leave_fiber(me);
#if CUEMU_ASM_SWITCH
  cuemu_ctx_swap(&me->sp, S.main_sp);
#else
  if (!_setjmp(me->jb))
    _longjmp(S.main_jb, 1);
#endif
  asan_in_fiber(me);
}

/* A fiber's whole life: the current kernel once per block it is given. */
void trampoline() {
  asan_in_fiber(S.cur);
  for (;;) {
    (*S.body)();
    S.cur->state = DONE;
    yield_to_sched();
  }
}

/* Runs fiber i until it yields. */
void resume(int i) {
  S.cur = S.fp[i];
  asan_enter_fiber(S.cur);
#if CUEMU_ASM_SWITCH
  cuemu_ctx_swap(&S.main_sp, S.cur->sp);
#else
  if (!_setjmp(S.main_jb)) {
    if (!S.cur->started) {
      S.cur->started = true;
      swapcontext(&S.main_ctx, &S.cur->ctx);
    } else {
      _longjmp(S.cur->jb, 1);
    }
  }
#endif
  asan_back_in_sched();
}

/* Releases what can be released; returns whether anything was. */
bool release() {
  const int n = S.nt;
  bool any = false;
  /* warp syncs: a waiting lane's mask, every live lane in it waiting */
  for (int w = 0; w * 32 < n; w++) {
    for (int l = 0; l < 32 && w * 32 + l < n; l++) {
      fiber &a = *S.fp[w * 32 + l];
      if (a.state != AT_WARP)
        continue;
      bool all = true;
      for (int m = 0; m < 32 && w * 32 + m < n; m++) {
        const fiber &b = *S.fp[w * 32 + m];
        if (!(a.mask >> m & 1u) || b.state == DONE)
          continue;
        if (b.state != AT_WARP || b.mask != a.mask)
          all = false;
      }
      if (!all)
        continue;
      for (int m = 0; m < 32 && w * 32 + m < n; m++) {
        fiber &b = *S.fp[w * 32 + m];
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
    if (const fiber &a = *S.fp[i]; a.state != DONE) {
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
      if (S.fp[i]->state == AT_BARRIER)
        S.fp[i]->state = RUNNABLE;
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
      if (S.fp[i]->state == RUNNABLE)
        order.push_back(i);
    if (order.empty()) {
      bool done = true;
      for (int i = 0; i < n; i++)
        done = done && S.fp[i]->state == DONE;
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
    /* warps drift apart: each round about half of them wait (all of a
     * warp alike), so a warp that runs ahead into the next tile meets a
     * slower one still reading the last (warps with the same sequence of
     * syncs would otherwise move in step, hiding such races) */
    const uint64_t hold = n > 32 ? next_rand() : 0;
    bool ran = false;
    for (int i : order)
      if (!(hold >> (S.fp[i]->warp & 63) & 1u)) {
        resume(i);
        ran = true;
      }
    if (!ran)
      for (int i : order)
        resume(i);
    S.cur = nullptr;
    if (hold)
      release(); /* the warps that are all at a sync go on */
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

/* ---- tensor-core instructions ------------------------------------------- */

namespace {

enum { OP_MMA = 1, OP_LDSM = 2 };

/* A warp-wide instruction's exchange: this lane posts its record (the
 * instruction, how many such it has run, its operands), the whole warp
 * syncs, and the warp's 32 records are returned. All 32 lanes must be
 * there at the same instruction: a lane that returned, or one that is at
 * another warp-wide instruction (divergence), is reported. The caller
 * reads the records, then calls coll_done. */
const lane_rec *coll_post(uint32_t op, const void *data, size_t n) {
  fiber &me = *S.cur;
  const size_t w = (size_t)me.warp;
  const char *name = op == OP_MMA ? "mma.sync" : "ldmatrix";
  char why[160];
  if ((w + 1) * 32 > (size_t)S.nt) {
    snprintf(why, sizeof why, "%s in a warp of fewer than 32 threads", name);
    die(why);
  }
  lane_rec &r = S.recs[w * 32 + (size_t)me.lane];
  r.op = op;
  r.seq = ++me.coll;
  memcpy(r.data, data, n);
  cuemu_warp_sync(0xffffffffu);
  const lane_rec *all = &S.recs[w * 32];
  for (int l = 0; l < 32; l++) {
    if (S.fp[w * 32 + (size_t)l]->state == DONE) {
      snprintf(why, sizeof why, "%s: lane %d of warp %zu has returned", name,
               l, w);
      die(why);
    }
    if (all[l].op != op || all[l].seq != me.coll) {
      snprintf(why, sizeof why,
               "%s: lane %d of warp %zu is at another warp-wide instruction "
               "(divergence)",
               name, l, w);
      die(why);
    }
  }
  return all;
}

void coll_done() {
  cuemu_warp_sync(0xffffffffu); /* no record is reposted before all read */
}

float half_bits(uint32_t h) {
  __half_raw r;
  r.x = (unsigned short)(h & 0xffffu);
  return __half2float(__half(r));
}

} // namespace

void cuemu_mma_m16n8k16(float d[4], const uint32_t a[4], uint32_t b0,
                        uint32_t b1) {
  const uint32_t mine[6] = {a[0], a[1], a[2], a[3], b0, b1};
  const lane_rec *all = coll_post(OP_MMA, mine, sizeof mine);
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; l++) {
    const int g = l >> 2, t = l & 3;
    uint32_t o[6];
    memcpy(o, all[l].data, sizeof o);
    for (int r = 0; r < 4; r++) /* A: a(2r), a(2r+1) */
      for (int e = 0; e < 2; e++)
        A[g + 8 * (r & 1)][2 * t + e + 8 * (r >> 1)] = half_bits(o[r] >> 16 * e);
    for (int r = 0; r < 2; r++) /* B: b(2r), b(2r+1) */
      for (int e = 0; e < 2; e++)
        B[2 * t + e + 8 * r][g] = half_bits(o[4 + r] >> 16 * e);
  }
  coll_done();
  const int g = S.cur->lane >> 2, t = S.cur->lane & 3;
  for (int i = 0; i < 4; i++) {
    const int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
    double s = d[i]; /* products of halves are exact; one rounding */
    for (int k = 0; k < 16; k++)
      s += (double)A[row][k] * B[k][col];
    d[i] = (float)s;
  }
  if (S.cur->lane == 0)
    S.mma_count++;
}

void cuemu_ldmatrix_x4_trans(uint32_t r[4], const void *p) {
  const unsigned char *q = (const unsigned char *)p;
  if (q < S.smem || q + 16 > S.smem + S.smem_bytes ||
      (uintptr_t)q % 16 != 0)
    die("ldmatrix: a row address outside the launch's dynamic shared "
        "memory, or not 16-byte aligned");
  const lane_rec *all = coll_post(OP_LDSM, &p, sizeof p);
  const int g = S.cur->lane >> 2, t = S.cur->lane & 3;
  for (int m = 0; m < 4; m++) {
    /* .trans: element g of rows 2t and 2t + 1 of matrix m, whose rows'
     * addresses lanes 8m..8m+7 gave */
    const uint16_t *r0, *r1;
    memcpy(&r0, all[8 * m + 2 * t].data, sizeof r0);
    memcpy(&r1, all[8 * m + 2 * t + 1].data, sizeof r1);
    r[m] = (uint32_t)r0[g] | (uint32_t)r1[g] << 16;
  }
  coll_done();
}

long cuemu_mma_count() { return S.mma_count; }

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

static cudaError_t run_grid(dim3 grid, dim3 block, size_t smem_bytes,
                            const std::function<void()> &body);

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
  if (S.capturing) { /* parameters as they are now, run at replay */
    std::function<void()> b = body;
    S.rec.push_back(cuemu_op{kernel, [grid, block, smem_bytes, b] {
                               run_grid(grid, block, smem_bytes, b);
                             }});
    return cudaSuccess;
  }
  return run_grid(grid, block, smem_bytes, body);
}

static cudaError_t run_grid(dim3 grid, dim3 block, size_t smem_bytes,
                            const std::function<void()> &body) {
  const size_t nt = (size_t)block.x * block.y * block.z;
  S.launches++;
  while (S.f.size() < nt) { /* fibers never move (S.fp, ucontexts) */
    const size_t i = S.f.size();
    S.f.emplace_back();
    S.fp.push_back(&S.f.back());
    fiber &a = *S.fp[i];
    S.stacks.push_back((char *)malloc(STACK));
    if (!S.stacks[i])
      die("out of memory for a thread's stack");
#if CUEMU_ASAN
    a.fake = nullptr;
    a.base = S.stacks[i];
#endif
#if CUEMU_ASM_SWITCH
    /* what cuemu_ctx_swap pops on the first switch: six zero registers,
     * then trampoline as the return address; above it a zero word where a
     * caller's return address would be, so trampoline starts with the
     * stack aligned as after a call (rsp = 8 mod 16) */
    void **top = (void **)(S.stacks[i] + STACK);
    void **sp = top - 8;
    for (int r = 0; r < 6; r++)
      sp[r] = nullptr;
    sp[6] = (void *)trampoline;
    sp[7] = nullptr;
    a.sp = sp;
#else
    getcontext(&a.ctx);
    a.ctx.uc_stack.ss_sp = S.stacks[i];
    a.ctx.uc_stack.ss_size = STACK;
    a.ctx.uc_link = nullptr;
    makecontext(&a.ctx, trampoline, 0);
    a.started = false;
#endif
  }
  S.nt = (int)nt;
  S.slots.assign((nt + 31) / 32 * 32, 0);
  S.recs.assign((nt + 31) / 32 * 32, lane_rec{});
  S.smem_bytes = smem_bytes;
#if CUEMU_ASAN /* beyond the launch's size, for all its blocks */
  ASAN_POISON_MEMORY_REGION(S.smem + smem_bytes, SMEM_MAX - smem_bytes);
#endif
  S.body = &body;
  cuemu_blk.grid = grid;
  cuemu_blk.block = block;
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++) {
        cuemu_blk.idx = dim3(x, y, z);
        memset(S.smem, 0xA5, smem_bytes);
        for (size_t i = 0; i < nt; i++) {
          fiber &a = *S.fp[i];
          a.idx.x = (unsigned)(i % block.x);
          a.idx.y = (unsigned)(i / block.x % block.y);
          a.idx.z = (unsigned)(i / ((size_t)block.x * block.y));
          a.lane = (int)(i % 32);
          a.warp = (int)(i / 32);
          a.state = RUNNABLE;
          a.mask = 0;
          a.pred = 0;
          a.coll = 0;
        }
        run_block();
      }
  S.body = nullptr;
#if CUEMU_ASAN
  ASAN_UNPOISON_MEMORY_REGION(S.smem, SMEM_MAX);
#endif
  return cudaSuccess;
}

void cuemu_host_op(const std::function<void()> &f) {
  if (S.capturing)
    S.rec.push_back(cuemu_op{nullptr, f});
  else
    f();
}

namespace {

bool in_map(const std::map<uintptr_t, size_t> &m, const void *p, size_t n) {
  auto it = m.upper_bound((uintptr_t)p);
  if (it == m.begin())
    return false;
  --it;
  return (uintptr_t)p + n <= it->first + it->second;
}

/* A call capture does not allow: the capture is invalidated, as the
 * runtime does. */
cudaError_t refuse_in_capture() {
  S.cap_invalid = true;
  return fail(cudaErrorStreamCaptureUnsupported);
}

/* A stream operation while capturing: recorded, or (a synchronous call, a
 * pageable host buffer) refused. */
cudaError_t stream_op(bool allowed, const std::function<void()> &f) {
  if (!S.capturing) {
    f();
    return cudaSuccess;
  }
  if (!allowed)
    return refuse_in_capture();
  S.rec.push_back(cuemu_op{nullptr, f});
  return cudaSuccess;
}

bool not_pageable(const void *p, size_t n) {
  return in_map(S.dev_mem, p, n) || in_map(S.pinned, p, n);
}

} // namespace

/* ---- the runtime -------------------------------------------------------- */

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
  case cudaErrorStreamCaptureUnsupported:
    return "operation not permitted when stream is capturing";
  case cudaErrorStreamCaptureInvalidated:
    return "operation failed due to a previous error during capture";
  case cudaErrorGraphExecUpdateFailure:
    return "the graph update was not performed";
  default: return "cuemu: some error";
  }
}

/* Device and pinned memory: 256-byte aligned as cudaMalloc's; padded
 * to whole 256-byte units and one more, except under ASan, which then
 * reports any access past the n bytes asked for. */
static void *dev_alloc(size_t n) {
#if CUEMU_ASAN
  void *p = nullptr;
  return posix_memalign(&p, 256, n ? n : 1) == 0 ? p : nullptr;
#else
  return aligned_alloc(256, (n + 255) / 256 * 256 + 256);
#endif
}

cudaError_t cuemu_Malloc(void **p, size_t n) {
  *p = dev_alloc(n);
  if (!*p)
    return fail(cudaErrorMemoryAllocation);
  S.dev_mem[(uintptr_t)*p] = n;
  return cudaSuccess;
}
cudaError_t cuemu_Free(void *p) {
  if (S.capturing) /* not a stream operation, but it waits for the device */
    return refuse_in_capture();
  S.dev_mem.erase((uintptr_t)p);
  free(p);
  return cudaSuccess;
}
cudaError_t cuemu_MallocHost(void **p, size_t n) {
  *p = dev_alloc(n);
  if (!*p)
    return fail(cudaErrorMemoryAllocation);
  S.pinned[(uintptr_t)*p] = n;
  return cudaSuccess;
}
cudaError_t cuemu_FreeHost(void *p) {
  S.pinned.erase((uintptr_t)p);
  free(p);
  return cudaSuccess;
}
/* graphs get no allocation nodes from us: the backend lends attention a
 * workspace while recording; one of these while capturing is a mistake */
cudaError_t cuemu_MallocAsync(void **p, size_t n, cudaStream_t s) {
  (void)s;
  if (S.capturing)
    return refuse_in_capture();
  return cuemu_Malloc(p, n);
}
cudaError_t cuemu_FreeAsync(void *p, cudaStream_t s) {
  (void)s;
  if (S.capturing)
    return refuse_in_capture();
  return cuemu_Free(p);
}
cudaError_t cuemu_Memcpy(void *d, const void *s, size_t n,
                         enum cudaMemcpyKind k) {
  (void)k;
  return stream_op(false, [=] { memmove(d, s, n); });
}
cudaError_t cuemu_MemcpyAsync(void *d, const void *s, size_t n,
                              enum cudaMemcpyKind k, cudaStream_t st) {
  (void)k, (void)st;
  return stream_op(not_pageable(d, n) && not_pageable(s, n),
                   [=] { memmove(d, s, n); });
}
cudaError_t cuemu_Memset(void *d, int v, size_t n) {
  return stream_op(false, [=] { memset(d, v, n); });
}
cudaError_t cuemu_MemsetAsync(void *d, int v, size_t n, cudaStream_t st) {
  (void)st;
  return stream_op(true, [=] { memset(d, v, n); });
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
  if (S.capturing)
    return refuse_in_capture();
  return cudaSuccess;
}
/* Events: streams run at once, so an event is the host's clock when it is
 * recorded (benchmarks only: their numbers mean nothing here). */
cudaError_t cuemu_EventCreate(cudaEvent_t *e) {
  *e = (cudaEvent_t)calloc(1, sizeof(struct timespec));
  return *e ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cuemu_EventDestroy(cudaEvent_t e) {
  free((void *)e);
  return cudaSuccess;
}
cudaError_t cuemu_EventRecord(cudaEvent_t e, cudaStream_t st) {
  (void)st;
  if (S.capturing)
    return refuse_in_capture();
  clock_gettime(CLOCK_MONOTONIC, (struct timespec *)(void *)e);
  return cudaSuccess;
}
cudaError_t cuemu_EventSynchronize(cudaEvent_t e) {
  (void)e;
  return cudaSuccess;
}
cudaError_t cuemu_EventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  const struct timespec *x = (const struct timespec *)(void *)a,
                        *y = (const struct timespec *)(void *)b;
  *ms = (float)((double)(y->tv_sec - x->tv_sec) * 1e3 +
                (double)(y->tv_nsec - x->tv_nsec) * 1e-6);
  return cudaSuccess;
}
cudaError_t cuemu_SetDevice(int d) {
  return d == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}
cudaError_t cuemu_StreamCreateWithFlags(cudaStream_t *st, unsigned flags) {
  (void)flags;
  return cuemu_StreamCreate(st);
}
cudaError_t cuemu_DeviceGetDefaultMemPool(cudaMemPool_t *pool, int dev) {
  static int token;
  (void)dev;
  *pool = (cudaMemPool_t)(void *)&token;
  return cudaSuccess;
}
cudaError_t cuemu_MemPoolSetAttribute(cudaMemPool_t pool,
                                      enum cudaMemPoolAttr attr, void *v) {
  (void)pool, (void)attr, (void)v;
  return cudaSuccess;
}
cudaError_t cuemu_RuntimeGetVersion(int *v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cuemu_DriverGetVersion(int *v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cuemu_GetDeviceProperties(struct cudaDeviceProp *p, int dev) {
  (void)dev;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "cuemu (CPU emulation of an H200)");
  p->major = 9;
  p->minor = 0;
  p->totalGlobalMem = (size_t)140 << 30;
  p->multiProcessorCount = S.n_sm;
  p->sharedMemPerBlockOptin = (size_t)S.smem_optin;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  return cudaSuccess;
}

/* ---- stream capture and graphs: a graph is the recorded list ----------- */

cudaError_t cuemu_StreamBeginCapture(cudaStream_t st,
                                     enum cudaStreamCaptureMode mode) {
  (void)st, (void)mode;
  if (S.capturing)
    return fail(cudaErrorIllegalState);
  S.capturing = true;
  S.cap_invalid = false;
  S.rec.clear();
  return cudaSuccess;
}
cudaError_t cuemu_StreamEndCapture(cudaStream_t st, cudaGraph_t *g) {
  (void)st;
  *g = NULL;
  if (!S.capturing)
    return fail(cudaErrorIllegalState);
  S.capturing = false;
  if (S.cap_invalid) {
    S.rec.clear();
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  *g = (cudaGraph_t)(void *)new std::vector<cuemu_op>(S.rec);
  S.rec.clear();
  return cudaSuccess;
}
cudaError_t cuemu_GraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g,
                                   unsigned long long flags) {
  (void)flags;
  *x = (cudaGraphExec_t)(void *)new std::vector<cuemu_op>(
      *(std::vector<cuemu_op> *)(void *)g);
  return cudaSuccess;
}
/* In place when the kernels are the same, in the same order (parameters
 * may differ), as the runtime allows; else a failure. */
cudaError_t cuemu_GraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g,
                                  cudaGraphExecUpdateResultInfo *info) {
  auto &dst = *(std::vector<cuemu_op> *)(void *)x;
  const auto &src = *(const std::vector<cuemu_op> *)(void *)g;
  if (info)
    memset(info, 0, sizeof *info);
  bool same = dst.size() == src.size();
  for (size_t i = 0; same && i < src.size(); i++)
    same = dst[i].kernel == src[i].kernel;
  if (!same) {
    if (info)
      info->result = cudaGraphExecUpdateErrorTopologyChanged;
    return fail(cudaErrorGraphExecUpdateFailure);
  }
  dst = src;
  return cudaSuccess;
}
cudaError_t cuemu_GraphLaunch(cudaGraphExec_t x, cudaStream_t st) {
  (void)st;
  if (S.capturing)
    return fail(cudaErrorStreamCaptureUnsupported);
  for (const cuemu_op &op : *(std::vector<cuemu_op> *)(void *)x)
    op.run();
  return cudaSuccess;
}
cudaError_t cuemu_GraphDestroy(cudaGraph_t g) {
  delete (std::vector<cuemu_op> *)(void *)g;
  return cudaSuccess;
}
cudaError_t cuemu_GraphExecDestroy(cudaGraphExec_t x) {
  delete (std::vector<cuemu_op> *)(void *)x;
  return cudaSuccess;
}

} /* extern "C" */
