/*
 * probe.c - run-time detection of the SIMD paths this CPU can really run.
 *
 * CPUID says what the core implements, XGETBV whether the OS saves the
 * register state; neither is enough on its own (some virtual machines report
 * AMX and then fault on its instructions), so each candidate ISA must also
 * execute one of its instructions under a temporary SIGILL handler before it
 * is selected. The result is a value (dq_cpu_caps) the caller keeps in its
 * own handle; nothing here is cached globally.
 */
#include "cpu_int.h"

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define DQ_X86 1
#endif

/* The jump target of the SIGILL handler, set only while a try runs on this
 * thread (a handler has no other way to find it). */
static _Thread_local sigjmp_buf *probe_jmp;

static void on_sigill(int sig) {
  (void)sig;
  if (probe_jmp)
    siglongjmp(*probe_jmp, 1);
  abort(); /* a SIGILL outside a probe: a real bug, do not loop */
}

static int try_run(int (*fn)(void)) {
  struct sigaction sa, old;
  sigjmp_buf jb;
  volatile int ok = 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigill;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGILL, &sa, &old) != 0)
    return 0;
  probe_jmp = &jb;
  if (sigsetjmp(jb, 1) == 0) {
    volatile int r = fn();
    (void)r;
    ok = 1;
  }
  probe_jmp = NULL;
  sigaction(SIGILL, &old, NULL);
  return ok;
}

#ifdef DQ_X86
static uint64_t xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t)hi << 32 | lo;
}

/* Loads a tile configuration and zeroes a tile: touching tile data is what
 * faults when the OS has not granted AMX state to this process (Linux asks
 * for arch_prctl(ARCH_REQ_XCOMP_PERM) first) or a hypervisor hides it. */
int dq_cpu_try_amx(void) {
  _Alignas(64) uint8_t cfg[64] = {0};
  cfg[0] = 1;  /* palette 1 */
  cfg[16] = 4; /* tile 0: 4 bytes per row (colsb[0], u16) */
  cfg[48] = 1; /* tile 0: 1 row */
  __asm__ volatile("ldtilecfg %0\n\ttilezero %%tmm0\n\ttilerelease"
                   : : "m"(cfg) : "memory");
  return cfg[0];
}

static unsigned cpuid_flags(void) {
  unsigned a, b, c, d, f = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return 0;
  int fma = c >> 12 & 1, osxsave = c >> 27 & 1, avx = c >> 28 & 1,
      f16c = c >> 29 & 1;
  if (!osxsave || !avx)
    return 0;
  uint64_t xcr0 = xgetbv0();
  int ymm_os = (xcr0 & 0x6) == 0x6, zmm_os = (xcr0 & 0xe6) == 0xe6,
      amx_os = (xcr0 & 0x60000) == 0x60000;
  if (!ymm_os || __get_cpuid_max(0, NULL) < 7)
    return 0;
  unsigned b7, c7, d7, a71 = 0, b71, c71, d71;
  __cpuid_count(7, 0, a, b7, c7, d7);
  unsigned max7 = a;
  if (max7 >= 1)
    __cpuid_count(7, 1, a71, b71, c71, d71);
  int avx2 = b7 >> 5 & 1;
  int a512 = (b7 >> 16 & 1) && (b7 >> 17 & 1) && (b7 >> 30 & 1) && (b7 >> 31 & 1);
  if (avx2 && fma && f16c)
    f |= DQ_CPU_AVX2;
  if (a71 >> 4 & 1)
    f |= DQ_CPU_AVX_VNNI;
  if (a512 && zmm_os) {
    f |= DQ_CPU_AVX512;
    if (c7 >> 11 & 1)
      f |= DQ_CPU_AVX512_VNNI;
    if (a71 >> 5 & 1)
      f |= DQ_CPU_AVX512_BF16;
  }
  if ((d7 >> 24 & 1) && (d7 >> 25 & 1) && amx_os)
    f |= DQ_CPU_AMX;
  return f;
}
#endif

static void describe(dq_cpu_caps *c) {
  static const struct { unsigned bit; const char *name; } names[] = {
      {DQ_CPU_AVX2, "avx2"},         {DQ_CPU_AVX512, "avx512"},
      {DQ_CPU_AVX512_VNNI, "vnni"},  {DQ_CPU_AVX512_BF16, "bf16"},
      {DQ_CPU_AVX_VNNI, "avxvnni"},  {DQ_CPU_AMX, "amx"}};
  size_t len = (size_t)snprintf(c->desc, sizeof c->desc, "%s (",
                                dq_isa_name(c->isa));
  const char *sep = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((c->flags & names[i].bit) && len < sizeof c->desc) {
      len += (size_t)snprintf(c->desc + len, sizeof c->desc - len, "%s%s", sep,
                              names[i].name);
      sep = " ";
    }
  const char *also = "; cpuid also:";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((c->cpuid_flags & ~c->flags & names[i].bit) && len < sizeof c->desc) {
      len += (size_t)snprintf(c->desc + len, sizeof c->desc - len, "%s %s",
                              also, names[i].name);
      also = "";
    }
  if (len < sizeof c->desc)
    snprintf(c->desc + len, sizeof c->desc - len, ")");
}

static dq_isa best_isa(unsigned flags) {
  if ((flags & DQ_CPU_AVX512) && (flags & DQ_CPU_AVX512_VNNI) &&
      (flags & DQ_CPU_AVX2))
    return DQ_ISA_AVX512;
  if (flags & DQ_CPU_AVX2)
    return DQ_ISA_AVX2;
  return DQ_ISA_SCALAR;
}

dq_cpu_caps dq_cpu_probe(void) {
  dq_cpu_caps c;
  memset(&c, 0, sizeof c);
#ifdef DQ_X86
  c.cpuid_flags = cpuid_flags();
  static const struct { unsigned bit; int (*fn)(void); } tries[] = {
      {DQ_CPU_AVX2, dq_cpu_try_avx2},
      {DQ_CPU_AVX512, dq_cpu_try_avx512},
      {DQ_CPU_AVX512_VNNI, dq_cpu_try_avx512_vnni},
      {DQ_CPU_AVX512_BF16, dq_cpu_try_avx512_bf16},
      {DQ_CPU_AVX_VNNI, dq_cpu_try_avx_vnni},
      {DQ_CPU_AMX, dq_cpu_try_amx}};
  for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++)
    if ((c.cpuid_flags & tries[i].bit) && try_run(tries[i].fn))
      c.flags |= tries[i].bit;
#endif
  c.isa = best_isa(c.flags);
  const char *env = getenv("DOCQA_CPU_ISA");
  if (env) {
    if (strcmp(env, "scalar") == 0)
      c.isa = DQ_ISA_SCALAR;
    else if (strcmp(env, "avx2") == 0 && c.isa > DQ_ISA_AVX2)
      c.isa = DQ_ISA_AVX2;
  }
  describe(&c);
  return c;
}

dq_cpu_caps dq_cpu_caps_limit(dq_cpu_caps caps, dq_isa max) {
  dq_isa best = best_isa(caps.flags);
  caps.isa = max < best ? max : best;
  describe(&caps);
  return caps;
}
