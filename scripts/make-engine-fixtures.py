#!/usr/bin/env python3
"""make-engine-fixtures.py - reference outputs for tests/engine from an
independent implementation: llama.cpp through llama-cpp-python (built from
its sdist on this machine). Nothing here runs our code.

For each decoder model (SmolLM2 llama, Gemma 3 gemma3):
  * 3 prompts: their token ids (llama.cpp's tokenizer, BOS added), the top-10
    logits (ids + values) at the first POS positions and the last position;
  * greedy continuation of 32 tokens for each prompt (Gemma's last prompt is
    longer than its 512-token sliding window, so local layers must mask); (argmax loop over
    llama.cpp's own logits, KV cache F16, no sampler involved).
For the embedding model (all-MiniLM-L6-v2, bert): the token ids and the full
mean-pooled, L2-normalised 384-float embedding of 10 sentences.

Usage (writes tests/fixtures/engine/*.json):
  python3 -m venv .deps/rt-venv
  CMAKE_BUILD_PARALLEL_LEVEL=1 .deps/rt-venv/bin/pip install llama-cpp-python==0.3.36 numpy==2.4.6
  .deps/rt-venv/bin/python scripts/make-engine-fixtures.py [MODELS_DIR]
On machines whose CPUID claims AMX that faults when used (ours: SIGILL at
`tilezero` in ggml_backend_amx_mul_mat), a GGML_NATIVE build crashes; rebuild
ggml-cpu from the same sdist without AMX and copy it over the wheel's:
  cmake -S vendor/llama.cpp -B b -G Ninja -DBUILD_SHARED_LIBS=ON \
    -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
    -DGGML_AVX512=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF && ninja -C b ggml-cpu
  (then copy b/bin/libggml-cpu.so.0.25.3 over every libggml-cpu.so* in the venv)
The committed fixtures were made that way (llama-cpp-python 0.3.36).
MODELS_DIR defaults to $DOCQA_MODELS or ~/.cache/docqa/models
(scripts/fetch-models.sh fills it).
"""
import hashlib
import json
import os
import sys

import llama_cpp
import numpy as np
from llama_cpp import Llama

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "engine")
MODELS = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "DOCQA_MODELS", os.path.expanduser("~/.cache/docqa/models"))

POS = 8          # positions with stored top-10 logits (plus the last one)
N_GREEDY = 32

DECODERS = {
    "smollm2-135m-instruct-q4_1.gguf": [
        "The capital of France is",
        "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
        "<|im_start|>user\nWhat is the boiling point of water in Celsius?<|im_end|>\n<|im_start|>assistant\n",
    ],
    "gemma3-270m-q4_k_m.gguf": [
        "The capital of France is",
        "Here is a list of three fruits: apple,",
        "The agreement may be terminated by either party with thirty days",
        # longer than the 512-token sliding window of gemma3's local layers
        "".join("Clause %d. The supplier shall deliver item %d within %d "
                "days of the order.\n" % (i, i, i + 3) for i in range(1, 31))
        + "Clause 31. The supplier shall deliver item",
    ],
}

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Either party may terminate this agreement with thirty days written notice.",
    "How do I reset my password?",
    "Photosynthesis converts light energy into chemical energy.",
    "The invoice is payable within 45 days of receipt.",
    "def add(a, b): return a + b",
    "Paris is the capital and most populous city of France.",
    "Attention is all you need.",
    "SQLite is a small, fast, self-contained SQL database engine.",
    "I love eating fresh strawberries in the summer!",
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def top10(row):
    ids = np.argsort(-row, kind="stable")[:10]
    return [int(i) for i in ids], [round(float(row[i]), 4) for i in ids]


def decoder(name, prompts):
    path = os.path.join(MODELS, name)
    llm = Llama(model_path=path, n_ctx=1024, n_batch=512, logits_all=True,
                n_threads=2, verbose=False, seed=0)
    out = {"model": name, "sha256": sha256(path), "prompts": []}
    for text in prompts:
        toks = llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        llm.reset()
        llm.eval(toks)
        scores = np.array(llm.scores[: len(toks)], dtype=np.float32)
        top = []
        for p in list(range(min(POS, len(toks)))) + [len(toks) - 1]:
            ids, vals = top10(scores[p])
            if top and top[-1]["pos"] == p:
                continue
            top.append({"pos": p, "ids": ids, "logits": vals})
        greedy = []
        last = scores[len(toks) - 1]
        for _ in range(N_GREEDY):
            t = int(np.argmax(last))
            greedy.append(t)
            if llm.token_eos() == t:
                break
            llm.eval([t])
            last = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        out["prompts"].append({
            "text": text, "tokens": [int(t) for t in toks], "top": top,
            "greedy": greedy,
            "greedy_text": llm.detokenize(greedy).decode("utf-8", "replace")})
    return out


def embedder(name):
    path = os.path.join(MODELS, name)
    llm = Llama(model_path=path, embedding=True, n_ctx=512, n_threads=2,
                verbose=False, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    out = {"model": name, "sha256": sha256(path), "sentences": []}
    for s in SENTENCES:
        toks = llm.tokenize(s.encode("utf-8"), add_bos=True, special=False)
        e = np.array(llm.embed(s), dtype=np.float64)
        e = e / np.linalg.norm(e)
        out["sentences"].append({"text": s, "tokens": [int(t) for t in toks],
                                 "embedding": [round(float(x), 6) for x in e]})
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {"generator": "llama-cpp-python " + llama_cpp.__version__,
            "numpy": np.__version__, "script": "scripts/make-engine-fixtures.py"}
    for name, prompts in DECODERS.items():
        if not os.path.exists(os.path.join(MODELS, name)):
            print("skip (missing):", name, file=sys.stderr)
            continue
        d = decoder(name, prompts)
        d.update(meta)
        fn = os.path.join(OUT, name.replace(".gguf", ".json"))
        with open(fn, "w") as f:
            json.dump(d, f, indent=1)
        print("wrote", fn, file=sys.stderr)
    name = "all-minilm-l6-v2-f32.gguf"
    if os.path.exists(os.path.join(MODELS, name)):
        d = embedder(name)
        d.update(meta)
        fn = os.path.join(OUT, name.replace(".gguf", ".json"))
        with open(fn, "w") as f:
            json.dump(d, f)
        print("wrote", fn, file=sys.stderr)


if __name__ == "__main__":
    main()
