#!/usr/bin/env python3
"""llama_gsm.py - the llama.cpp side of scripts/bench-gsm.sh: on the same
text file and model as `docqa bench gsm --text FILE`, llama.cpp's prefill
and decode speed at each length L, and its perplexity over the same L
tokens, through llama-cpp-python's low-level ctypes API (no Llama class, no
sampler).

The text is tokenized by llama.cpp (add_special: BOS as the model wants),
repeated as `cat FILE FILE ...` until it has max(L) + --decode tokens, the
same rule as docqa's, so both sides read the same tokens when the two
tokenizers agree (the report gives both token counts).

Per length L (a fresh context with n_ctx = L + --decode, KV cache F16
unless --kv-type q8_0 (llama.cpp's -ctk/-ctv q8_0, which needs
--flash-attn), flash attention off unless --flash-attn, as llama-bench
-fa 0):
  prefill  the first L tokens in llama_decode calls of n_batch = min(L, 2048)
           tokens (n_ubatch 512, llama.cpp's defaults: a single graph of L
           tokens would need an L x L attention matrix per head); ms/token =
           time / L.
  decode   --decode llama_decode calls of one token each right after, on the
           text's next tokens: decode speed at depth L.
  ppl      (unless --no-ppl) a second context of n_ctx = L; the L tokens in
           batches of --ppl-chunk with every row of logits; exp of the mean
           of -log p(token i+1 | tokens <= i) over the L - 1 predictions.
One untimed decode of 64 tokens first pages the weights in. Prints one JSON
object on stdout.

Usage: llama_gsm.py MODEL --text FILE [--lengths 2048,4096] [--threads N]
         [--decode 32] [--ppl-chunk 512] [--no-ppl] [--flash-attn]
         [--kv-type f16|q8_0]
Needs llama-cpp-python and numpy (scripts/bench-engine.sh has the install
line; on CPUs whose AMX faults, libggml-cpu must be rebuilt without AMX).
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np
import llama_cpp as L


def ints(text):
    v = [int(x) for x in text.split(",")]
    if any(x < 16 for x in v):
        raise argparse.ArgumentTypeError("lengths must be >= 16 tokens")
    return v


def tokenize(vocab, data):
    n = L.llama_tokenize(vocab, data, len(data), None, 0, True, False)
    cap = -n if n < 0 else n
    buf = (L.llama_token * max(cap, 1))()
    n = L.llama_tokenize(vocab, data, len(data), buf, cap, True, False)
    if n < 0:
        sys.exit("llama_gsm.py: tokenizing the text failed")
    return buf, n


def tokens_at_least(vocab, text, need):
    """The text repeated until it has `need` tokens (docqa's rule)."""
    copies = 1
    while True:
        toks, n = tokenize(vocab, text * copies)
        if n >= need:
            return toks, n, copies
        per = max(n // copies, 1)
        copies += max((need - n + per - 1) // per, 1)


GGML_TYPES = {"f16": 1, "q8_0": 8}


def context(model, n_ctx, n_batch, n_ubatch, threads, fa, kv="f16"):
    cp = L.llama_context_default_params()
    cp.n_ctx = n_ctx
    cp.n_batch = n_batch
    cp.n_ubatch = n_ubatch
    cp.n_threads = threads
    cp.n_threads_batch = threads
    cp.flash_attn_type = 1 if fa else 0  # ENABLED / DISABLED
    cp.type_k = GGML_TYPES[kv]
    cp.type_v = GGML_TYPES[kv]
    cp.no_perf = True
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        sys.exit("llama_gsm.py: cannot create a context of %d tokens" % n_ctx)
    return ctx


def at(toks, i):
    """Pointer to toks[i] (ctypes arrays do not slice without copying)."""
    return ctypes.cast(ctypes.byref(toks, i * ctypes.sizeof(L.llama_token)),
                       ctypes.POINTER(L.llama_token))


def decode(ctx, toks, i, n):
    rc = L.llama_decode(ctx, L.llama_batch_get_one(at(toks, i), n))
    if rc:
        sys.exit("llama_gsm.py: llama_decode failed (%d) at token %d" % (rc, i))


def timed(ctx, toks, n_len, n_decode, n_batch):
    L.llama_synchronize(ctx)
    t0, c0 = time.perf_counter(), time.process_time()
    for a in range(0, n_len, n_batch):
        decode(ctx, toks, a, min(n_batch, n_len - a))
    L.llama_synchronize(ctx)
    pre, pre_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    for i in range(n_decode):
        decode(ctx, toks, n_len + i, 1)
    L.llama_synchronize(ctx)
    return pre, pre_cpu, time.perf_counter() - t0


def perplexity(ctx, toks, n_len, chunk, n_vocab):
    batch = L.llama_batch_init(chunk, 0, 1)
    nll, n_pred = 0.0, 0
    try:
        for a in range(0, n_len, chunk):
            n = min(chunk, n_len - a)
            batch.n_tokens = n
            for i in range(n):
                batch.token[i] = toks[a + i]
                batch.pos[i] = a + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = 1
            rc = L.llama_decode(ctx, batch)
            if rc:
                sys.exit("llama_gsm.py: llama_decode failed (%d) in the "
                         "perplexity pass at %d" % (rc, a))
            lg = np.ctypeslib.as_array(L.llama_get_logits(ctx),
                                       shape=(n, n_vocab)).astype(np.float64)
            m = lg.max(axis=1)
            lse = np.log(np.exp(lg - m[:, None]).sum(axis=1)) + m
            k = n if a + n < n_len else n - 1  # rows that predict a token
            nxt = np.array([toks[a + i + 1] for i in range(k)], dtype=np.int64)
            nll += float((lse[:k] - lg[np.arange(k), nxt]).sum())
            n_pred += k
    finally:
        L.llama_batch_free(batch)
    return float(np.exp(nll / n_pred)) if n_pred else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--text", required=True)
    ap.add_argument("--lengths", type=ints, default=[2048, 4096, 8192, 16384])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--ppl-chunk", type=int, default=512)
    ap.add_argument("--no-ppl", action="store_true")
    ap.add_argument("--flash-attn", action="store_true")
    ap.add_argument("--kv-type", choices=sorted(GGML_TYPES), default="f16")
    a = ap.parse_args()
    if a.kv_type != "f16" and not a.flash_attn:
        ap.error("--kv-type %s needs --flash-attn (llama.cpp quantizes the V "
                 "cache only with flash attention)" % a.kv_type)
    text = open(a.text, "rb").read()
    if not text:
        sys.exit("llama_gsm.py: %s is empty" % a.text)

    @L.llama_log_callback
    def quiet(level, msg, user):
        if level == 4:  # GGML_LOG_LEVEL_ERROR (5, CONT, is the load dots)
            sys.stderr.write(msg.decode("utf-8", "replace"))
    L.llama_log_set(quiet, None)
    L.llama_backend_init()
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    mp.use_mmap = True
    model = L.llama_model_load_from_file(a.model.encode(), mp)
    if not model:
        sys.exit("llama_gsm.py: cannot load %s" % a.model)
    vocab = L.llama_model_get_vocab(model)
    n_vocab = L.llama_vocab_n_tokens(vocab)
    need = max(a.lengths) + a.decode
    toks, n_tok, copies = tokens_at_least(vocab, text, need)

    ctx = context(model, 128, 64, 64, a.threads, a.flash_attn, a.kv_type)  # warm-up
    decode(ctx, toks, 0, min(64, n_tok))
    L.llama_free(ctx)

    out = []
    for n_len in a.lengths:
        n_batch = min(n_len, 2048)
        ctx = context(model, n_len + a.decode, n_batch, min(n_batch, 512),
                      a.threads, a.flash_attn, a.kv_type)
        pre, pre_cpu, dec = timed(ctx, toks, n_len, a.decode, n_batch)
        L.llama_free(ctx)
        r = {"length": n_len, "prefill_ms": pre * 1e3,
             "prefill_cpu_ms": pre_cpu * 1e3,
             "prefill_ms_per_token": pre * 1e3 / n_len,
             "prefill_tok_s": n_len / pre}
        if a.decode:
            r["decode_tokens"] = a.decode
            r["decode_ms_per_token"] = dec * 1e3 / a.decode
            r["decode_tok_s"] = a.decode / dec
        r["ppl"] = None
        if not a.no_ppl:
            chunk = min(a.ppl_chunk, n_len)
            ctx = context(model, n_len, chunk, chunk, a.threads, a.flash_attn,
                          a.kv_type)
            r["ppl"] = perplexity(ctx, toks, n_len, chunk, n_vocab)
            L.llama_free(ctx)
        sys.stderr.write("llama_gsm.py: %d tokens: prefill %.0f ms, decode "
                         "%.2f ms/token, ppl %s\n" % (
                             n_len, pre * 1e3,
                             r.get("decode_ms_per_token", 0), r["ppl"]))
        out.append(r)
    print(json.dumps({
        "impl": "llama.cpp", "version": L.__version__, "model": a.model,
        "threads": a.threads, "flash_attn": a.flash_attn,
        "kv_type": a.kv_type, "n_ctx_train": L.llama_model_n_ctx_train(model),
        "text": {"file": a.text, "bytes": len(text), "copies": copies,
                 "tokens": n_tok},
        "ppl_chunk": None if a.no_ppl else a.ppl_chunk,
        "loadavg": list(os.getloadavg()),
        "lengths": out}))
    L.llama_model_free(model)
    L.llama_backend_free()


if __name__ == "__main__":
    main()
