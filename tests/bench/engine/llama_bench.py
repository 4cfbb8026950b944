#!/usr/bin/env python3
"""llama_bench.py - the reference side of scripts/bench-engine.sh: times
llama.cpp (through llama-cpp-python's low-level ctypes API, no Llama class,
no sampler) the way llama-bench does, so its numbers sit beside
`docqa bench engine` on the same model file and thread count.

  ppN  clear the KV cache, one llama_decode of N tokens (llama_batch_get_one:
       logits of the last token only; n_batch = n_ubatch = N so it is one
       graph, as our engine evaluates one batch); tokens/s = N / time.
  tgN  clear the KV cache, N llama_decode calls of one token each.

Process CPU time (all threads) of each run is reported beside wall time:
llama.cpp's OpenMP threads spin while waiting, so on a busy machine its CPU
time includes spinning, which wall time per run does not show.

One untimed warm-up run per test, then --reps timed runs; the median, min and
max are printed as one JSON object on stdout (same shape as
`docqa bench engine --json`'s "tests"). Tokens are pseudo-random vocabulary
ids with a fixed seed. KV cache F16, flash attention off (llama-bench -fa 0),
no mmap-lock, CPU only.

Usage: llama_bench.py MODEL [--threads N] [--pp 512,2048] [--tg 128] [--reps N]
Needs llama-cpp-python (see scripts/bench-engine.sh for the install line; on
CPUs whose AMX faults, libggml-cpu must be rebuilt without AMX).
"""
import argparse
import json
import os
import random
import statistics
import sys
import time

import llama_cpp as L


def ints(text):
    return [int(v) for v in text.split(",") if int(v) > 0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--pp", type=ints, default=[512])
    ap.add_argument("--tg", type=ints, default=[128])
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()

    # Silence llama.cpp's own logging (stderr) except errors.
    @L.llama_log_callback
    def quiet(level, text, user):
        if level >= 4:  # GGML_LOG_LEVEL_ERROR
            sys.stderr.write(text.decode("utf-8", "replace"))
    L.llama_log_set(quiet, None)
    L.llama_backend_init()

    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    mp.use_mmap = True
    model = L.llama_model_load_from_file(a.model.encode(), mp)
    if not model:
        sys.exit("llama_bench.py: cannot load %s" % a.model)
    vocab = L.llama_model_get_vocab(model)
    n_vocab = L.llama_vocab_n_tokens(vocab)
    n_max = max(a.pp + a.tg + [1])

    cp = L.llama_context_default_params()
    cp.n_ctx = max(n_max, 256)
    cp.n_batch = max(a.pp + [1])
    cp.n_ubatch = max(a.pp + [1])
    cp.n_threads = a.threads
    cp.n_threads_batch = a.threads
    cp.flash_attn_type = 0  # LLAMA_FLASH_ATTN_TYPE_DISABLED
    cp.type_k = 1  # GGML_TYPE_F16
    cp.type_v = 1
    cp.no_perf = True
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        sys.exit("llama_bench.py: cannot create a context")
    mem = L.llama_get_memory(ctx)

    rnd = random.Random(1234)
    toks = (L.llama_token * n_max)(*[rnd.randrange(n_vocab) for _ in range(n_max)])

    def run(kind, n):
        L.llama_memory_clear(mem, True)
        L.llama_synchronize(ctx)
        t0, c0 = time.perf_counter(), time.process_time()
        if kind == "pp":
            rc = L.llama_decode(ctx, L.llama_batch_get_one(toks, n))
            if rc:
                sys.exit("llama_bench.py: llama_decode failed (%d)" % rc)
        else:
            for i in range(n):
                one = (L.llama_token * 1)(toks[i])
                rc = L.llama_decode(ctx, L.llama_batch_get_one(one, 1))
                if rc:
                    sys.exit("llama_bench.py: llama_decode failed (%d)" % rc)
        L.llama_synchronize(ctx)
        return time.perf_counter() - t0, time.process_time() - c0

    tests = []
    for kind, ns in (("pp", a.pp), ("tg", a.tg)):
        for n in ns:
            run(kind, n)  # warm-up
            both = [run(kind, n) for _ in range(a.reps)]
            secs = [w for w, _ in both]
            cpus = [c for _, c in both]
            med = statistics.median(secs)
            tests.append({"test": "%s%d" % (kind, n), "kind": kind,
                          "n_tokens": n, "tok_s": n / med,
                          "tok_s_min": n / max(secs), "tok_s_max": n / min(secs),
                          "runs_ms": [s * 1e3 for s in secs],
                          "cpu_ms": [c * 1e3 for c in cpus],
                          "tok_per_cpu_s": n / statistics.median(cpus)})
    print(json.dumps({"model": a.model, "impl": "llama.cpp",
                      "version": L.__version__, "threads": a.threads,
                      "reps": a.reps, "loadavg": list(os.getloadavg()),
                      "system_info": L.llama_print_system_info().decode(),
                      "tests": tests}))
    L.llama_free(ctx)
    L.llama_model_free(model)
    L.llama_backend_free()


if __name__ == "__main__":
    main()
