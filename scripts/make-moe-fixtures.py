#!/usr/bin/env python3
"""make-moe-fixtures.py - tiny random mixture-of-experts models and their
reference logits, for tests of the engine's MoE architectures. No small real
MoE GGUF is at hand, so this writes one model per architecture with random
weights, runs an independent float64 numpy forward pass over them, and checks
that pass against llama.cpp (llama-cpp-python) as a second implementation.
Nothing here runs our code.

Models (tests/fixtures/moe/<name>.gguf, each under 1 MB, with a 512-token
byte-level BPE tokenizer so llama.cpp loads them; the engine needs none):
  mixtral         llama + 8 experts top-2, softmax, renormalised; NORM rope;
                  tied output; Q8_0 experts
  qwen2moe        q/k/v biases; softmax, not renormalised; shared expert
                  behind a sigmoid gate; NEOX rope; F16 weights
  qwen3moe        per-head q/k RMSNorm, head_dim != n_embd/n_head; 16 experts
                  top-4, renormalised; NEOX rope; tied output; Q4_0 experts
  olmoe           RMSNorm over the whole q and k vectors; softmax, not
                  renormalised; NEOX rope; Q4_1 attention, Q5_0 experts
  deepseek2       DeepSeek-V3 style: MLA with q_lora, split attn_k_b/attn_v_b;
                  layer 0 dense; sigmoid gating + selection bias, 4 groups
                  (2 used), renormalised, scale 2.5; 1 shared expert;
                  F16 attention, Q8_0 experts
  deepseek2-lite  DeepSeek-V2-Lite style: no q_lora, legacy fused attn_kv_b;
                  layer 0 dense; softmax, flat, not renormalised; 2 shared;
                  experts' gate and up merged in one ffn_gate_up_exps
For each: two sequences (12 and 40 token ids) with the logits at every
position, the chosen experts and their weights per MoE layer, written to
tests/fixtures/moe/<name>.json with the hyperparameters, the metadata and
tensor table of the file, the smallest routing margin and the agreement
measured below. README.md there describes the fields.

The reference uses the values the file holds (quantized tensors dequantized
with gguf.quants), in float64, twice:
  logits        activations exact;
  logits_q8act  activations into Q4_0/Q5_0/Q8_0 (Q4_1) weights rounded
                through Q8_0 (Q8_1) blocks first, as docqa's and ggml's CPU
                kernels do. Not much tighter than it looks: one activation
                that rounds to the other neighbour (float32 vs float64) moves
                the logits by a few hundredths in these tiny models;
                q8act_flip_max_abs_diff measures that (jittered runs).
MLA is computed the plain way (decompress k_nope and v per head, then
ordinary attention); the engine uses the absorbed form, so the two stay
independent. Conventions (metadata keys, tensor shapes, rope type, routing)
were read from llama.cpp's source (llama-cpp-python 0.3.36) and are checked
against it: each model is also written with every tensor F32 (same draws),
where llama.cpp and this reference agree to ~1e-5
(llama_cpp_max_abs_diff_all_f32); llama_cpp_max_abs_diff is the committed
file's (quantized; ggml also rounds activations into F16 weights to F16).

Routing margins: a top-k choice whose k-th and (k+1)-th scores nearly tie can
flip between a float32 engine and this float64 reference. The sequences are
random ids, except that each position's id is redrawn (seeded) until every
MoE layer there routes with a margin >= MIN_GAP between the k-th and
(k+1)-th selection score (and, with group routing, between the last chosen
and the first dropped group score), with exact and with Q8 activations. The
smallest margin is in the JSON; the jittered runs must not change a choice.

Usage (numpy + gguf in one venv, llama-cpp-python in another):
  .deps/gguf-venv/bin/python scripts/make-moe-fixtures.py [NAME...]
      writes tests/fixtures/moe/*.gguf and *.json; if .deps/rt-venv exists
      (scripts/make-engine-fixtures.py says how it was built) it runs
      llama.cpp on each file and records the agreement; --no-llama-cpp skips.
  .deps/gguf-venv/bin/python scripts/make-moe-fixtures.py --bench mixtral-s|deepseek-s OUT.gguf
      a bigger random model for speed benchmarks (no reference, not committed).
The output is deterministic for a given numpy and gguf version.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "moe")
RT_PYTHON = os.path.join(ROOT, ".deps", "rt-venv", "bin", "python")

MIN_GAP = 0.02      # wanted routing margin (selection-score units)
MAX_DRAWS = 400     # ids tried per position before taking the best seen
FLIP_TRIALS = 4     # jittered Q8 runs that measure rounding-flip spread
SEQ_LENS = (12, 40)
N_VOCAB = 512
BOS_ID = N_VOCAB - 2   # <s>, then </s>: the last two ids; sequences avoid them
NORM_CLAMP = 6.103515625e-5  # llama.cpp's floor for the renormalising sum

# --------------------------------------------------------------------------
# tokenizer: GPT-2 style byte-level BPE trained on a few sentences

CORPUS = (
    "The quick brown fox jumps over the lazy dog. A mixture of experts routes "
    "each token to a few of its feed forward networks; the router scores every "
    "expert, keeps the best ones and weights their outputs. Shared experts see "
    "every token. Multi-head latent attention stores one small compressed "
    "vector per position instead of full keys and values, and decompresses it "
    "per head. These models are tiny and random: their text means nothing, "
    "but the numbers they produce must match to the last few digits. "
    "Either party may terminate this agreement with thirty days written "
    "notice; the invoice is payable within forty five days of receipt. "
    "Photosynthesis converts light energy into chemical energy in plants. "
    "def forward(self, x): return self.down(silu(self.gate(x)) * self.up(x)) "
    "for i in range(n): total += weights[i] * experts[i](hidden_state) "
    "SQLite is a small, fast, self-contained SQL database engine written in C. "
    "Paris is the capital and most populous city of France; Berlin, Madrid, "
    "Rome, Vienna and Lisbon are capitals too. 0123456789 + - * / = < > ( ) "
)


def byte_to_unicode():
    """GPT-2's reversible byte -> printable character map."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD))
          + list(range(0xAE, 0x100)))
    cs = list(bs)
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def make_tokenizer(n_vocab):
    """256 byte tokens, BPE merges up to n_vocab - 2 (then unused fillers),
    and <s> / </s> as the last two ids."""
    b2u = byte_to_unicode()
    tokens = [b2u[b] for b in range(256)]
    words = []
    for i, w in enumerate(CORPUS.split(" ")):
        if w:
            words.append([b2u[b] for b in ((" " if i else "") + w).encode()])
    merges = []
    n_merge = n_vocab - 2 - 256
    while len(merges) < n_merge:
        counts = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        # most frequent pair; ties by first appearance order (dicts keep it)
        best = max(counts.items(), key=lambda kv: kv[1])[0]
        merges.append(best[0] + " " + best[1])
        tokens.append(best[0] + best[1])
        for j, w in enumerate(words):
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[j] = out
    types = [1] * len(tokens)                 # NORMAL
    while len(tokens) < n_vocab - 2:
        tokens.append("<unused%d>" % len(tokens))
        types.append(5)                       # UNUSED
    tokens += ["<s>", "</s>"]
    types += [3, 3]                           # CONTROL
    return tokens, types, merges


# --------------------------------------------------------------------------
# weights: random values, stored as F32/F16/quantized, kept dequantized

class Weights:
    """Random tensors by GGUF name. `ne` is GGUF order (ne[0] = row length,
    the contracted dimension of a matmul); numpy arrays are reversed(ne).
    self.ref[name] is what the file holds, as float64 (left empty with
    keep=False, for the benchmark models)."""

    def __init__(self, seed, keep=True):
        self.rng = np.random.default_rng(seed)
        self.keep = keep
        self.stored = {}    # name -> (array to write, quant type or None)
        self.ref = {}
        self.types = {}     # name -> (type name, ne)

    def add(self, name, ne, qtype, scale):
        import gguf
        from gguf import quants
        shape = tuple(reversed(ne))
        qt = gguf.GGMLQuantizationType[qtype]
        # generate slice by slice along the outermost axis: bounded memory
        # for the benchmark models, identical values for the fixtures
        parts, refs = [], []
        for _ in range(shape[0] if len(shape) == 3 else 1):
            sub_shape = shape[1:] if len(shape) == 3 else shape
            x = self.rng.standard_normal(sub_shape, dtype=np.float32) * np.float32(scale)
            if qtype == "F32":
                s = x
            elif qtype == "F16":
                s = x.astype(np.float16)
            else:
                s = quants.quantize(x, qt)
            parts.append(s)
            if self.keep:
                r = s if qtype in ("F32", "F16") else quants.dequantize(s, qt)
                refs.append(np.asarray(r, dtype=np.float64))
        stored = np.stack(parts) if len(shape) == 3 else parts[0]
        self.stored[name] = (stored, None if qtype in ("F32", "F16") else qt)
        self.types[name] = (qtype, list(ne))
        if self.keep:
            self.ref[name] = np.stack(refs) if len(shape) == 3 else refs[0]

    def add_norm(self, name, n):
        """RMSNorm weight near 1 (not exactly 1, so a skipped multiply shows)."""
        x = 1.0 + 0.1 * self.rng.standard_normal(n).astype(np.float32)
        self.stored[name] = (x.astype(np.float32), None)
        self.types[name] = ("F32", [n])
        if self.keep:
            self.ref[name] = x.astype(np.float64)

    def add_vec(self, name, n, scale):
        x = (scale * self.rng.standard_normal(n)).astype(np.float32)
        self.stored[name] = (x, None)
        self.types[name] = ("F32", [n])
        if self.keep:
            self.ref[name] = x.astype(np.float64)

    def mat(self, name, n_out, n_in, qtype, gain=1.0):
        """Weight of a matmul y = W x, ne = {n_in, n_out}, entries
        N(0, gain^2 / n_in) so outputs stay O(1)."""
        self.add(name, [n_in, n_out], qtype, gain / np.sqrt(n_in))

    def exps(self, name, n_out, n_in, n_expert, qtype, gain=1.0):
        self.add(name, [n_in, n_out, n_expert], qtype, gain / np.sqrt(n_in))


# --------------------------------------------------------------------------
# model definitions: hyperparameters, GGUF metadata and tensors

def base_cfg(**kw):
    c = dict(n_vocab=N_VOCAB, n_embd=64, n_layer=3, n_head=4, n_head_kv=2,
             head_dim=16, n_ctx_train=256, rope_base=10000.0, eps=1e-6,
             rope="norm", qkv_bias=False, qk_norm=None, attn="std",
             gating="softmax", norm_w=False, w_scale=0.0, n_group=0,
             n_group_used=0, shexp=None, n_ff_shexp=0, n_dense_lead=0,
             tied=False, router_gain=3.0)
    c.update(kw)
    return c


def build_std_layer(w, c, i, attn_type, exp_type, ffn_type):
    """Weights of one layer with ordinary (non-MLA) attention."""
    E, H, Hkv, D = c["n_embd"], c["n_head"], c["n_head_kv"], c["head_dim"]
    p = "blk.%d." % i
    w.add_norm(p + "attn_norm.weight", E)
    w.mat(p + "attn_q.weight", H * D, E, attn_type)
    w.mat(p + "attn_k.weight", Hkv * D, E, attn_type)
    w.mat(p + "attn_v.weight", Hkv * D, E, attn_type)
    if c["qkv_bias"]:
        w.add_vec(p + "attn_q.bias", H * D, 0.2)
        w.add_vec(p + "attn_k.bias", Hkv * D, 0.2)
        w.add_vec(p + "attn_v.bias", Hkv * D, 0.2)
    if c["qk_norm"] == "head":
        w.add_norm(p + "attn_q_norm.weight", D)
        w.add_norm(p + "attn_k_norm.weight", D)
    elif c["qk_norm"] == "full":
        w.add_norm(p + "attn_q_norm.weight", H * D)
        w.add_norm(p + "attn_k_norm.weight", Hkv * D)
    w.mat(p + "attn_output.weight", E, H * D, attn_type)
    w.add_norm(p + "ffn_norm.weight", E)
    build_ffn(w, c, i, exp_type, ffn_type)


def build_mla_layer(w, c, i, attn_type, exp_type, ffn_type):
    E, H = c["n_embd"], c["n_head"]
    nope, rope, vd = c["qk_nope"], c["qk_rope"], c["v_head_dim"]
    kvr, qr = c["kv_lora_rank"], c["q_lora_rank"]
    p = "blk.%d." % i
    w.add_norm(p + "attn_norm.weight", E)
    if qr > 0:
        w.mat(p + "attn_q_a.weight", qr, E, attn_type)
        w.add_norm(p + "attn_q_a_norm.weight", qr)
        w.mat(p + "attn_q_b.weight", H * (nope + rope), qr, attn_type)
    else:
        w.mat(p + "attn_q.weight", H * (nope + rope), E, attn_type)
    w.mat(p + "attn_kv_a_mqa.weight", kvr + rope, E, attn_type)
    w.add_norm(p + "attn_kv_a_norm.weight", kvr)
    if c["mla_form"] == "split":
        # k_b: ne {nope, kv_lora_rank, n_head} (contracted over kv_lora_rank
        # when decompressing, over nope when absorbing q)
        w.add(p + "attn_k_b.weight", [nope, kvr, H], attn_type, 1 / np.sqrt(kvr))
        w.add(p + "attn_v_b.weight", [kvr, vd, H], attn_type, 1 / np.sqrt(kvr))
    else:
        w.mat(p + "attn_kv_b.weight", H * (nope + vd), kvr, attn_type)
    w.mat(p + "attn_output.weight", E, H * vd, attn_type)
    w.add_norm(p + "ffn_norm.weight", E)
    build_ffn(w, c, i, exp_type, ffn_type)


def build_ffn(w, c, i, exp_type, ffn_type):
    E = c["n_embd"]
    p = "blk.%d." % i
    if i < c["n_dense_lead"]:
        w.mat(p + "ffn_gate.weight", c["n_ff"], E, ffn_type)
        w.mat(p + "ffn_up.weight", c["n_ff"], E, ffn_type)
        w.mat(p + "ffn_down.weight", E, c["n_ff"], ffn_type)
        return
    X, F = c["n_expert"], c["n_ff_exp"]
    w.mat(p + "ffn_gate_inp.weight", X, E, "F32", gain=c["router_gain"])
    if c["gating"] == "sigmoid":
        w.add_vec(p + "exp_probs_b.bias", X, 0.1)
    w.exps(p + "ffn_gate_exps.weight", F, E, X, exp_type)
    w.exps(p + "ffn_up_exps.weight", F, E, X, exp_type)
    if c.get("fused_gate_up"):
        # one ffn_gate_up_exps tensor, ne {E, 2F, X}: per expert its F gate
        # rows, then its F up rows (llama.cpp's split of the merged product);
        # the reference keeps reading the two halves by their own names
        g = w.stored.pop(p + "ffn_gate_exps.weight")
        u = w.stored.pop(p + "ffn_up_exps.weight")
        w.stored[p + "ffn_gate_up_exps.weight"] = (np.concatenate([g[0], u[0]], axis=1), g[1])
        w.types[p + "ffn_gate_up_exps.weight"] = (exp_type, [E, 2 * F, X])
    w.exps(p + "ffn_down_exps.weight", E, F, X, exp_type)
    if c["shexp"]:
        S = c["n_ff_shexp"]
        if c["shexp"] == "gated":
            w.add_vec(p + "ffn_gate_inp_shexp.weight", E, 1 / np.sqrt(E))
        w.mat(p + "ffn_gate_shexp.weight", S, E, ffn_type)
        w.mat(p + "ffn_up_shexp.weight", S, E, ffn_type)
        w.mat(p + "ffn_down_shexp.weight", E, S, ffn_type)


def build_model(c, seed, types, keep=True):
    """-> (Weights, metadata list of (key, gguf value type, value))."""
    w = Weights(seed, keep)
    E, V = c["n_embd"], c["n_vocab"]
    # tied heads reuse token_embd, whose rows then need the head's scale
    w.add("token_embd.weight", [E, V], types["embd"], 0.35 if c["tied"] else 1.0)
    for i in range(c["n_layer"]):
        f = build_mla_layer if c["attn"] == "mla" else build_std_layer
        f(w, c, i, types["attn"], types["exps"], types["ffn"])
    w.add_norm("output_norm.weight", E)
    if not c["tied"]:
        w.mat("output.weight", V, E, types["output"], gain=2.5)
    return w, metadata(c)


def metadata(c):
    a = c["arch"]
    u, f, b = "u32", "f32", "bool"
    kv = [
        (a + ".context_length", u, c["n_ctx_train"]),
        (a + ".embedding_length", u, c["n_embd"]),
        (a + ".block_count", u, c["n_layer"]),
        (a + ".attention.head_count", u, c["n_head"]),
        (a + ".attention.head_count_kv", u, c["n_head_kv"]),
        (a + ".rope.freq_base", f, c["rope_base"]),
        (a + ".attention.layer_norm_rms_epsilon", f, c["eps"]),
        (a + ".expert_count", u, c["n_expert"]),
        (a + ".expert_used_count", u, c["n_expert_used"]),
    ]
    if c.get("n_ff"):
        kv.append((a + ".feed_forward_length", u, c["n_ff"]))
    if c.get("write_n_ff_exp"):
        kv.append((a + ".expert_feed_forward_length", u, c["n_ff_exp"]))
    if c["shexp"] == "gated":
        kv.append((a + ".expert_shared_feed_forward_length", u, c["n_ff_shexp"]))
    if a == "llama":
        kv += [(a + ".vocab_size", u, c["n_vocab"]),
               (a + ".rope.dimension_count", u, c["head_dim"])]
    if a == "qwen3moe":
        kv += [(a + ".attention.key_length", u, c["head_dim"]),
               (a + ".attention.value_length", u, c["head_dim"])]
    if a == "deepseek2":
        nope, rope, vd = c["qk_nope"], c["qk_rope"], c["v_head_dim"]
        kvr = c["kv_lora_rank"]
        kv += [(a + ".vocab_size", u, c["n_vocab"]),
               (a + ".leading_dense_block_count", u, c["n_dense_lead"]),
               (a + ".attention.q_lora_rank", u, c["q_lora_rank"]),
               (a + ".attention.kv_lora_rank", u, kvr),
               (a + ".rope.dimension_count", u, rope),
               (a + ".expert_shared_count", u, c["n_shared"]),
               (a + ".expert_weights_scale", f, c["w_scale"]),
               (a + ".expert_gating_func", u, 2 if c["gating"] == "sigmoid" else 1)]
        if c["mla_form"] == "split":
            # what convert_hf_to_gguf writes: the cache holds one latent
            # "head" (kv_lora_rank + rope wide); *_mla are the per-head sizes
            kv += [(a + ".attention.key_length", u, kvr + rope),
                   (a + ".attention.value_length", u, kvr),
                   (a + ".attention.key_length_mla", u, nope + rope),
                   (a + ".attention.value_length_mla", u, vd)]
        else:
            kv += [(a + ".attention.key_length", u, nope + rope),
                   (a + ".attention.value_length", u, vd)]
        if c["norm_w"]:
            kv.append((a + ".expert_weights_norm", b, True))
        if c["n_group"] > 1:
            kv += [(a + ".expert_group_count", u, c["n_group"]),
                   (a + ".expert_group_used_count", u, c["n_group_used"])]
    return kv


# Expert width: llama (Mixtral) and olmoe read it from feed_forward_length
# and write no expert_feed_forward_length; qwen2moe, qwen3moe and deepseek2
# read expert_feed_forward_length, and their feed_forward_length is another
# width (unused by qwen*, the leading dense layers' for deepseek2) - written
# different here so that reading the wrong key shows.
FIXTURES = {
    "mixtral": dict(
        seed=101,
        cfg=base_cfg(arch="llama", n_expert=8, n_expert_used=2, n_ff=64,
                     n_ff_exp=64, norm_w=True, tied=True, rope="norm",
                     router_gain=2.0),
        types=dict(embd="F16", attn="F32", exps="Q8_0", ffn="F32", output=None)),
    "qwen2moe": dict(
        seed=202,
        cfg=base_cfg(arch="qwen2moe", n_expert=8, n_expert_used=2, n_ff=160,
                     n_ff_exp=32, write_n_ff_exp=True, qkv_bias=True,
                     shexp="gated", n_ff_shexp=64, rope="neox", router_gain=2.0),
        types=dict(embd="F32", attn="F16", exps="F16", ffn="F16", output="F16")),
    "qwen3moe": dict(
        seed=303,
        cfg=base_cfg(arch="qwen3moe", n_head=8, n_head_kv=2, n_expert=16,
                     n_expert_used=4, n_ff=96, n_ff_exp=32, write_n_ff_exp=True,
                     qk_norm="head", norm_w=True, tied=True, rope="neox",
                     router_gain=2.0),
        types=dict(embd="F32", attn="F32", exps="Q4_0", ffn="F32", output=None)),
    "olmoe": dict(
        seed=404,
        cfg=base_cfg(arch="olmoe", n_head_kv=4, n_expert=8, n_expert_used=2,
                     n_ff=64, n_ff_exp=64, qk_norm="full", rope="neox",
                     router_gain=2.0),
        types=dict(embd="F32", attn="Q4_1", exps="Q5_0", ffn="F32", output="F32")),
    "deepseek2": dict(
        seed=505,
        cfg=base_cfg(arch="deepseek2", attn="mla", mla_form="split", n_head_kv=1,
                     q_lora_rank=48, kv_lora_rank=32, qk_nope=16, qk_rope=8,
                     v_head_dim=16, n_dense_lead=1, n_ff=128, n_ff_exp=32,
                     write_n_ff_exp=True, n_expert=16, n_expert_used=4,
                     n_group=4, n_group_used=2, gating="sigmoid", norm_w=True,
                     w_scale=2.5, shexp="plain", n_shared=1, n_ff_shexp=32,
                     rope="norm", router_gain=3.0),
        types=dict(embd="F32", attn="F16", exps="Q8_0", ffn="F16", output="F32")),
    "deepseek2-lite": dict(
        seed=606,
        cfg=base_cfg(arch="deepseek2", attn="mla", mla_form="fused", n_head_kv=4,
                     q_lora_rank=0, kv_lora_rank=32, qk_nope=16, qk_rope=8,
                     v_head_dim=16, n_dense_lead=1, n_ff=128, n_ff_exp=32,
                     write_n_ff_exp=True, n_expert=8, n_expert_used=3,
                     n_group=1, n_group_used=1, gating="softmax", norm_w=False,
                     w_scale=1.0, shexp="plain", n_shared=2, n_ff_shexp=64,
                     rope="norm", tied=True, router_gain=1.5,
                     fused_gate_up=True),
        types=dict(embd="F32", attn="F16", exps="F16", ffn="F32", output=None)),
}


# --------------------------------------------------------------------------
# reference forward pass (float64)

def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def rope(x, n_rot, base, kind):
    """x: (T, H, n_rot) at positions 0..T-1. "norm" rotates adjacent pairs
    (x[2i], x[2i+1]); "neox" rotates (x[i], x[i + n_rot/2]); pair i turns
    by pos * base^(-2i/n_rot)."""
    T = x.shape[0]
    half = n_rot // 2
    theta = np.arange(T)[:, None] * base ** (-2.0 * np.arange(half) / n_rot)
    cos, sin = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    if kind == "norm":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., :half], x[..., half:]
    ra, rb = a * cos - b * sin, a * sin + b * cos
    out = np.empty_like(x)
    if kind == "norm":
        out[..., 0::2], out[..., 1::2] = ra, rb
    else:
        out[..., :half], out[..., half:] = ra, rb
    return out


def attention(q, k, v, scale):
    """q (T, H, Dk), k (T, Hkv, Dk), v (T, Hkv, Dv); causal; query head h
    reads kv head h // (H / Hkv)."""
    T, H, _ = q.shape
    g = H // k.shape[1]
    mask = np.triu(np.full((T, T), -np.inf), 1)
    out = np.empty((T, H, v.shape[2]))
    for h in range(H):
        s = q[:, h] @ k[:, h // g].T * scale + mask
        s = np.exp(s - s.max(axis=1, keepdims=True))
        out[:, h] = (s / s.sum(axis=1, keepdims=True)) @ v[:, h // g]
    return out.reshape(T, -1)


QUANT_TYPES = ("Q4_0", "Q4_1", "Q5_0", "Q8_0")


def round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def q8_blocks(x):
    """x (..., n), n % 32 == 0, as float32 -> (q, d, d_f16): the Q8_0/Q8_1
    activation blocks a CPU kernel makes (d = amax/127, q = round(x/d))."""
    x32 = np.asarray(x, dtype=np.float32).reshape(*np.shape(x)[:-1], -1, 32)
    d = np.abs(x32).max(axis=-1, keepdims=True) / np.float32(127)
    inv = np.where(d > 0, np.float32(1) / np.where(d > 0, d, 1), np.float32(0))
    q = round_half_away(x32 * inv)
    return q, d, d.astype(np.float16).astype(np.float64)


class Model:
    """Reference weights plus how activations meet them. act:
      "exact": float64 throughout (the fixture's `logits`);
      "q8":    activations into Q4_0/Q4_1/Q5_0/Q8_0 weights pass through
               Q8_0 (Q8_1 for Q4_1) blocks first, as docqa's CPU kernels and
               ggml do (`logits_q8act`);
      "ggml":  also activations into F16 weights rounded to F16, as ggml's
               CPU matmul does (only to explain the llama.cpp difference)."""

    def __init__(self, w, c, act="exact", noise=None):
        self.W, self.c, self.act = w.ref, c, act
        # (rng, relative size): jitter activations before Q8 rounding, to
        # measure how far rounding flips alone move the logits
        self.noise = noise
        self.types = {k: t for k, (t, _) in w.types.items()}
        self.q41_m = {}
        for name, t in self.types.items():
            if t == "Q4_1":     # per-block minimum m, for the Q8_1 sum term
                raw = w.stored[name][0]
                blk = raw.reshape(*raw.shape[:-1], -1, 20)
                self.q41_m[name] = blk[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float64)

    def lin(self, name, x, e=None):
        """x @ W.T for weight `name` (expert `e` of a 3-D tensor)."""
        w = self.W[name] if e is None else self.W[name][e]
        t = self.types[name]
        if self.act == "exact" or t not in QUANT_TYPES:
            if self.act == "ggml" and t == "F16":
                x = np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float64)
            return x @ w.T
        if self.noise is not None:
            rng, rel = self.noise
            x = x * (1 + rel * rng.standard_normal(np.shape(x)))
        q, d, d16 = q8_blocks(x)
        y = (q * d16).reshape(np.shape(x)) @ w.T
        if t == "Q4_1":
            # Q8_1 keeps s = f16(d * sum(q)); the m * s term uses that s
            m = self.q41_m[name] if e is None else self.q41_m[name][e]
            qsum = q.sum(axis=-1)
            s16 = (d[..., 0] * qsum).astype(np.float16).astype(np.float64)
            y = y + (s16 - d16[..., 0] * qsum) @ m.T
        return y


def std_attention(M, p, x):
    c, W = M.c, M.W
    T = x.shape[0]
    H, Hkv, D = c["n_head"], c["n_head_kv"], c["head_dim"]
    q, k, v = (M.lin(p + "attn_%s.weight" % n, x) for n in "qkv")
    if c["qkv_bias"]:
        q, k, v = q + W[p + "attn_q.bias"], k + W[p + "attn_k.bias"], v + W[p + "attn_v.bias"]
    if c["qk_norm"] == "full":     # olmoe: over the whole projection
        q = rms_norm(q, W[p + "attn_q_norm.weight"], c["eps"])
        k = rms_norm(k, W[p + "attn_k_norm.weight"], c["eps"])
    q, k, v = q.reshape(T, H, D), k.reshape(T, Hkv, D), v.reshape(T, Hkv, D)
    if c["qk_norm"] == "head":     # qwen3: per head, before rope
        q = rms_norm(q, W[p + "attn_q_norm.weight"], c["eps"])
        k = rms_norm(k, W[p + "attn_k_norm.weight"], c["eps"])
    q = rope(q, D, c["rope_base"], c["rope"])
    k = rope(k, D, c["rope_base"], c["rope"])
    return M.lin(p + "attn_output.weight", attention(q, k, v, 1 / np.sqrt(D)))


def mla_attention(M, p, x):
    """Plain (non-absorbed) MLA: decompress k_nope and v for every head."""
    c, W = M.c, M.W
    T = x.shape[0]
    H, nope, rp, vd = c["n_head"], c["qk_nope"], c["qk_rope"], c["v_head_dim"]
    kvr, eps = c["kv_lora_rank"], c["eps"]
    if c["q_lora_rank"] > 0:
        q = rms_norm(M.lin(p + "attn_q_a.weight", x), W[p + "attn_q_a_norm.weight"], eps)
        q = M.lin(p + "attn_q_b.weight", q)
    else:
        q = M.lin(p + "attn_q.weight", x)
    q = q.reshape(T, H, nope + rp)                        # per head [nope | rope]
    kva = M.lin(p + "attn_kv_a_mqa.weight", x)            # (T, kvr + rope)
    ckv = rms_norm(kva[:, :kvr], W[p + "attn_kv_a_norm.weight"], eps)
    k_pe = rope(kva[:, None, kvr:], rp, c["rope_base"], c["rope"])  # (T, 1, rope)
    q_pe = rope(q[..., nope:], rp, c["rope_base"], c["rope"])
    if c["mla_form"] == "split":
        # attn_k_b numpy (H, kvr, nope); attn_v_b numpy (H, vd, kvr)
        # k_b is contracted over its ne[1] here (over ne[0] when the engine
        # absorbs it into q), so it must not be a quantized type
        assert M.types[p + "attn_k_b.weight"] not in QUANT_TYPES
        k_nope = np.einsum("tr,hrd->thd", ckv, W[p + "attn_k_b.weight"])
        v = np.stack([M.lin(p + "attn_v_b.weight", ckv, h) for h in range(H)], axis=1)
    else:
        kv = M.lin(p + "attn_kv_b.weight", ckv).reshape(T, H, nope + vd)
        k_nope, v = kv[..., :nope], kv[..., nope:]
    qf = np.concatenate([q[..., :nope], q_pe], axis=-1)
    kf = np.concatenate([k_nope, np.broadcast_to(k_pe, (T, H, rp))], axis=-1)
    return M.lin(p + "attn_output.weight", attention(qf, kf, v, 1 / np.sqrt(nope + rp)))


def swiglu(M, x, gate, up, down, e=None):
    """down(silu(gate x) * up x), SiLU-gated FFN (expert e of 3-D tensors)."""
    return M.lin(down, silu(M.lin(gate, x, e)) * M.lin(up, x, e), e)


def moe_ffn(M, p, x):
    """-> (output, record) where record has per-token experts (sorted by
    weight, descending), weights (as applied), selection margin and (group
    routing) group margin."""
    c, W = M.c, M.W
    T = x.shape[0]
    K = c["n_expert_used"]
    logits = M.lin(p + "ffn_gate_inp.weight", x)                  # (T, X)
    if c["gating"] == "softmax":
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
    else:
        probs = 1 / (1 + np.exp(-logits))
    # the selection bias only chooses; weights come from the unbiased probs
    sel = probs + W[p + "exp_probs_b.bias"] if c["gating"] == "sigmoid" else probs.copy()
    group_gap = np.full(T, np.inf)
    if c["n_group"] > 1:
        G, GU = c["n_group"], c["n_group_used"]
        grp = sel.reshape(T, G, -1)
        top2 = -np.sort(-grp, axis=2)[:, :, :2].sum(axis=2)       # (T, G)
        order = np.argsort(-top2, axis=1, kind="stable")
        srt = np.take_along_axis(top2, order, axis=1)
        group_gap = srt[:, GU - 1] - srt[:, GU]
        keep = np.zeros((T, G), bool)
        np.put_along_axis(keep, order[:, :GU], True, axis=1)
        sel = np.where(np.repeat(keep, grp.shape[2], axis=1), sel, -np.inf)
    order = np.argsort(-sel, axis=1, kind="stable")
    srt = np.take_along_axis(sel, order, axis=1)
    gap = srt[:, K - 1] - srt[:, K]
    chosen = order[:, :K]
    wts = np.take_along_axis(probs, chosen, axis=1)
    if c["norm_w"]:
        wts = wts / np.maximum(wts.sum(axis=1, keepdims=True), NORM_CLAMP)
    if c["w_scale"] not in (0.0, 1.0):
        wts = wts * c["w_scale"]
    out = np.zeros_like(x)
    for e in np.unique(chosen):
        t, j = np.nonzero(chosen == e)
        out[t] += wts[t, j][:, None] * swiglu(M, x[t], p + "ffn_gate_exps.weight",
                                              p + "ffn_up_exps.weight",
                                              p + "ffn_down_exps.weight", e)
    if c["shexp"]:
        sh = swiglu(M, x, p + "ffn_gate_shexp.weight", p + "ffn_up_shexp.weight",
                    p + "ffn_down_shexp.weight")
        if c["shexp"] == "gated":   # qwen2moe: sigmoid(w . x) per token
            sh = sh * (1 / (1 + np.exp(-(x @ W[p + "ffn_gate_inp_shexp.weight"]))))[:, None]
        out = out + sh
    by_w = np.argsort(-wts, axis=1, kind="stable")
    unbiased = np.sort(np.argsort(-probs, axis=1, kind="stable")[:, :K], axis=1)
    rec = dict(experts=np.take_along_axis(chosen, by_w, axis=1),
               weights=np.take_along_axis(wts, by_w, axis=1),
               gap=gap, group_gap=group_gap,
               # the bias (or the group mask) changed the choice
               biased=(np.sort(chosen, axis=1) != unbiased).any(axis=1))
    return out, rec


def forward(M, tokens):
    """-> (logits (T, n_vocab), [routing record per MoE layer])."""
    c, W = M.c, M.W
    x = W["token_embd.weight"][np.asarray(tokens)]
    recs = []
    for i in range(c["n_layer"]):
        p = "blk.%d." % i
        h = rms_norm(x, W[p + "attn_norm.weight"], c["eps"])
        x = x + (mla_attention if c["attn"] == "mla" else std_attention)(M, p, h)
        h = rms_norm(x, W[p + "ffn_norm.weight"], c["eps"])
        if i < c["n_dense_lead"]:
            x = x + swiglu(M, h, p + "ffn_gate.weight", p + "ffn_up.weight", p + "ffn_down.weight")
        else:
            o, r = moe_ffn(M, p, h)
            x = x + o
            recs.append(r)
    x = rms_norm(x, W["output_norm.weight"], c["eps"])
    return M.lin("token_embd.weight" if c["tied"] else "output.weight", x), recs


def margin_at(recs, t):
    return min(min(r["gap"][t], r["group_gap"][t]) for r in recs)


def make_sequence(models, n, rng):
    """n random ids (never BOS/EOS); each redrawn until its position routes
    with margin >= MIN_GAP in every MoE layer under every model in `models`
    (exact and Q8 activations; best of MAX_DRAWS otherwise)."""
    toks = []
    for t in range(n):
        best, best_m = None, -1.0
        for _ in range(MAX_DRAWS):
            cand = int(rng.integers(0, BOS_ID))
            m = min(margin_at(forward(M, toks + [cand])[1], t) for M in models)
            if m > best_m:
                best, best_m = cand, m
            if m >= MIN_GAP:
                break
        toks.append(best)
    return toks


# --------------------------------------------------------------------------
# writing

def write_gguf(path, c, w, kv, n_vocab, name):
    import gguf
    tokens, types, merges = make_tokenizer(n_vocab)
    wr = gguf.GGUFWriter(path, c["arch"])
    wr.add_string("general.name", "docqa-moe-" + name)
    for key, t, val in kv:
        {"u32": wr.add_uint32, "f32": wr.add_float32, "bool": wr.add_bool}[t](key, val)
    wr.add_tokenizer_model("gpt2")
    wr.add_tokenizer_pre("default")
    wr.add_token_list(tokens)
    wr.add_token_types(types)
    wr.add_token_merges(merges)
    wr.add_bos_token_id(len(tokens) - 2)
    wr.add_eos_token_id(len(tokens) - 1)
    wr.add_add_bos_token(False)
    for tname, (arr, qt) in w.stored.items():
        if qt is None:
            wr.add_tensor(tname, arr)
        else:
            wr.add_tensor(tname, arr, raw_dtype=qt)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


def llama_cpp_logits(path, seqs):
    """Run llama.cpp (the rt venv) on each sequence; -> list of (T, V) arrays,
    or None when that venv is missing."""
    if not os.path.exists(RT_PYTHON):
        return None
    with tempfile.TemporaryDirectory() as d:
        req = os.path.join(d, "req.json")
        with open(req, "w") as f:
            json.dump({"gguf": path, "seqs": seqs}, f)
        subprocess.run([RT_PYTHON, os.path.abspath(__file__), "--llama-cpp-worker", req],
                       check=True)
        z = np.load(os.path.join(d, "req.json.npz"))
        return [z["s%d" % i] for i in range(len(seqs))]


def llama_cpp_worker(req):
    """Runs inside the rt venv: llama.cpp, 1 thread, F32 KV cache, logits at
    every position, token ids fed directly."""
    from llama_cpp import Llama
    with open(req) as f:
        r = json.load(f)
    out = {}
    for i, toks in enumerate(r["seqs"]):
        llm = Llama(model_path=r["gguf"], n_ctx=64, n_batch=64, n_ubatch=64,
                    n_threads=1, n_threads_batch=1, logits_all=True,
                    type_k=0, type_v=0, verbose=False, seed=0)
        llm.eval(toks)
        out["s%d" % i] = np.array(llm.scores[: len(toks)], dtype=np.float64)
        del llm
    np.savez(req + ".npz", **out)


def rounded(a, nd):
    return [[round(float(v), nd) for v in row] for row in a]


def make_fixture(name, spec, run_llama_cpp):
    c, types = spec["cfg"], spec["types"]
    w, kv = build_model(c, spec["seed"], types)
    path = os.path.join(OUT, name + ".gguf")
    write_gguf(path, c, w, kv, c["n_vocab"], name)
    exact, q8, ggml = Model(w, c), Model(w, c, "q8"), Model(w, c, "ggml")
    rng = np.random.default_rng(spec["seed"] + 1)
    seqs, gaps, ggaps, n_biased, flip = [], [], [], 0, 0.0
    ref = {"exact": [], "q8": [], "ggml": []}
    for n in SEQ_LENS:
        toks = make_sequence((exact, q8), n, rng)
        logits, recs = forward(exact, toks)
        logits_q8, recs_q8 = forward(q8, toks)
        for r, rq in zip(recs, recs_q8):
            if not np.array_equal(np.sort(r["experts"]), np.sort(rq["experts"])):
                sys.exit("%s: Q8 activations change the routing" % name)
        ref["exact"].append(logits)
        ref["q8"].append(logits_q8)
        ref["ggml"].append(forward(ggml, toks)[0])
        # rounding flips: Q8 activations of values 1e-6 apart (float32 vs
        # float64 noise) may round one step apart; how far that moves things
        for trial in range(FLIP_TRIALS):
            jit = Model(w, c, "q8", (np.random.default_rng(trial), 1e-6))
            lj, rj = forward(jit, toks)
            flip = max(flip, float(np.abs(lj - logits_q8).max()))
            for r, rq in zip(recs, rj):
                if not np.array_equal(np.sort(r["experts"]), np.sort(rq["experts"])):
                    sys.exit("%s: a rounding flip changes the routing" % name)
        gaps += [float(r["gap"].min()) for r in recs + recs_q8]
        ggaps += [float(r["group_gap"].min()) for r in recs + recs_q8]
        n_biased += int(sum(r["biased"].sum() for r in recs))
        seqs.append({
            "tokens": toks,
            "logits": rounded(logits, 5),
            "logits_q8act": rounded(logits_q8, 5),
            "experts": [r["experts"].tolist() for r in recs],
            "expert_weights": [rounded(r["weights"], 6) for r in recs],
        })

    def maxdiff(a, b):
        return round(max(float(np.abs(x - y).max()) for x, y in zip(a, b)), 6)

    lc = llama_cpp_logits(path, [s["tokens"] for s in seqs]) if run_llama_cpp else None
    f32_diff = None
    if lc is not None:
        # the same draws stored as F32 throughout: nothing rounds activations,
        # so any difference left is a convention difference
        w32, _ = build_model(c, spec["seed"], {k: v and "F32" for k, v in types.items()})
        with tempfile.TemporaryDirectory() as tmp:
            p32 = os.path.join(tmp, name + "-f32.gguf")
            write_gguf(p32, c, w32, kv, c["n_vocab"], name)
            lc32 = llama_cpp_logits(p32, [s["tokens"] for s in seqs])
        f32_diff = maxdiff(lc32, [forward(Model(w32, c), s["tokens"])[0] for s in seqs])
    hp = {k: v for k, v in c.items() if k not in ("router_gain", "write_n_ff_exp")}
    if c["attn"] == "mla":
        del hp["head_dim"]
    hp["weight_types"] = {k: v for k, v in types.items() if v}
    min_gap, min_ggap = min(gaps), min(ggaps)
    d = {
        "arch": c["arch"], "gguf": name + ".gguf",
        "hparams": hp,
        "gguf_kv": {k: v for k, _, v in kv},
        "tensors": {k: {"type": t, "ne": ne} for k, (t, ne) in w.types.items()
                    if k in w.stored},
        "min_route_gap": round(min(min_gap, min_ggap), 6),
        "min_expert_gap": round(min_gap, 6),
        "min_group_gap": round(min_ggap, 6) if np.isfinite(min_ggap) else None,
        "bias_changed_choice": n_biased if c["gating"] == "sigmoid" else None,
        "q8act_max_abs_diff": maxdiff(ref["q8"], ref["exact"]),
        "q8act_flip_max_abs_diff": round(flip, 6),
        "llama_cpp_max_abs_diff": None if lc is None else maxdiff(lc, ref["exact"]),
        "llama_cpp_max_abs_diff_q8act": None if lc is None else maxdiff(lc, ref["q8"]),
        "llama_cpp_max_abs_diff_ggml_sim": None if lc is None else maxdiff(lc, ref["ggml"]),
        "llama_cpp_max_abs_diff_all_f32": f32_diff,
        "llama_cpp_top1_agree": None if lc is None else "%d/%d" % (
            sum(int((x.argmax(1) == y.argmax(1)).sum()) for x, y in zip(lc, ref["exact"])),
            sum(SEQ_LENS)),
        "logit_range": [round(float(min(x.min() for x in ref["exact"])), 3),
                        round(float(max(x.max() for x in ref["exact"])), 3)],
        "sequences": seqs,
    }
    jpath = os.path.join(OUT, name + ".json")
    with open(jpath, "w") as f:
        json.dump(d, f, separators=(",", ":"))
        f.write("\n")
    print("%-15s gguf %6d B json %6d B gap %.4f q8-exact %.4f flip %.4f | llama.cpp: "
          "exact %s q8 %s ggml-sim %s all-f32 %s top1 %s" % (
        name, os.path.getsize(path), os.path.getsize(jpath), d["min_route_gap"],
        d["q8act_max_abs_diff"], d["q8act_flip_max_abs_diff"],
        d["llama_cpp_max_abs_diff"], d["llama_cpp_max_abs_diff_q8act"],
        d["llama_cpp_max_abs_diff_ggml_sim"], f32_diff, d["llama_cpp_top1_agree"]), file=sys.stderr)


# --------------------------------------------------------------------------
# benchmark models (no reference)

BENCH = {
    "mixtral-s": dict(
        cfg=base_cfg(arch="llama", n_vocab=8192, n_embd=1024, n_layer=8, n_head=16,
                     n_head_kv=4, head_dim=64, n_ctx_train=4096, n_expert=8,
                     n_expert_used=2, n_ff=2816, n_ff_exp=2816, norm_w=True),
        types=dict(embd="F16", attn="Q8_0", exps="Q4_0", ffn="Q4_0", output="Q8_0")),
    "deepseek-s": dict(
        cfg=base_cfg(arch="deepseek2", n_vocab=8192, n_embd=1024, n_layer=8, n_head=8,
                     n_head_kv=1, n_ctx_train=4096, attn="mla", mla_form="split",
                     q_lora_rank=384, kv_lora_rank=256, qk_nope=64, qk_rope=32,
                     v_head_dim=64, n_dense_lead=1, n_ff=2816, n_ff_exp=512,
                     write_n_ff_exp=True, n_expert=64, n_expert_used=6, n_group=8,
                     n_group_used=4, gating="sigmoid", norm_w=True, w_scale=2.5,
                     shexp="plain", n_shared=2, n_ff_shexp=1024),
        types=dict(embd="F16", attn="Q8_0", exps="Q4_0", ffn="Q4_0", output="Q8_0")),
}


def make_bench(shape, path):
    spec = BENCH[shape]
    c = spec["cfg"]
    w, kv = build_model(c, 7, spec["types"], keep=False)
    write_gguf(path, c, w, kv, c["n_vocab"], shape)
    print("wrote %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="fixtures to make (default: all)")
    ap.add_argument("--bench", nargs=2, metavar=("SHAPE", "OUT"))
    ap.add_argument("--no-llama-cpp", action="store_true")
    ap.add_argument("--llama-cpp-worker", metavar="REQ", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.llama_cpp_worker:
        llama_cpp_worker(a.llama_cpp_worker)
        return
    if a.bench:
        if a.bench[0] not in BENCH:
            sys.exit("unknown shape %s (have: %s)" % (a.bench[0], ", ".join(BENCH)))
        make_bench(*a.bench)
        return
    os.makedirs(OUT, exist_ok=True)
    for name in a.names or FIXTURES:
        if name not in FIXTURES:
            sys.exit("unknown fixture %s (have: %s)" % (name, ", ".join(FIXTURES)))
        make_fixture(name, FIXTURES[name], not a.no_llama_cpp)


if __name__ == "__main__":
    main()
