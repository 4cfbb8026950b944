#!/usr/bin/env python3
"""Convert a Hugging Face BERT sentence-embedding model to GGUF.

Reads a sentence-transformers model folder (config.json, model.safetensors,
vocab.txt, tokenizer_config.json, optional 1_Pooling/config.json) and writes
one GGUF file in the layout llama.cpp uses for architecture "bert", which is
what docqa's engine loads for embeddings:

  metadata  general.architecture = "bert"
            bert.context_length, bert.embedding_length, bert.feed_forward_length,
            bert.block_count, bert.attention.head_count,
            bert.attention.layer_norm_epsilon, bert.attention.causal = false,
            bert.pooling_type (1 = mean, 2 = cls)
            tokenizer.ggml.model = "bert" (WordPiece), tokenizer.ggml.pre,
            tokenizer.ggml.tokens / token_type / token_type_count,
            bos = [CLS], eos = [SEP], unknown, seperator (sic, the GGUF key
            name), padding, mask token ids; add_bos_token / add_eos_token
  tensors   token_embd.weight        (n_vocab, n_embd)
            token_types.weight       (n_token_types, n_embd)
            position_embd.weight     (n_ctx, n_embd)
            token_embd_norm.weight/bias
            blk.N.attn_q / attn_k / attn_v / attn_output .weight/.bias
            blk.N.attn_output_norm.weight/bias
            blk.N.ffn_up / ffn_down .weight/.bias
            blk.N.layer_output_norm.weight/bias
  (shapes above are the PyTorch (rows, cols) order; GGUF stores ne[] reversed.)

Vocabulary: WordPiece tokens are stored in llama.cpp's "phantom space" form:
a word-initial piece "foo" becomes "\u2581foo", a continuation "##bar" becomes
"bar", and special tokens ([CLS], [SEP], ...) stay as they are.

What it is not: a general converter. It accepts only plain BERT
(absolute positions, GELU, post-layer-norm) and refuses anything else. It
does not apply the final L2 normalisation of sentence-transformers; the
engine does that after pooling. Weights are read with our own small
safetensors reader (numpy memmap), so torch is not needed. The output is
deterministic for a given input and gguf/numpy version.

Usage: convert-bert-gguf.py MODEL_DIR OUT.gguf [--outtype f32|f16] [--name NAME]
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

try:
    import gguf
except ImportError:  # pragma: no cover - message for humans
    sys.exit("convert-bert-gguf: the 'gguf' package is missing; "
             "run scripts/fetch-models.sh, which installs it in .deps/venv")

# Limits on what we accept from untrusted files.
MAX_HEADER_BYTES = 100 * 1024 * 1024
MAX_VOCAB = 1 << 20

ST_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}


def die(msg):
    sys.exit(f"convert-bert-gguf: {msg}")


def read_safetensors(path):
    """Return {name: np.ndarray view} for a .safetensors file, every offset checked."""
    file_bytes = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            die(f"{path}: too short for a safetensors header")
        (header_bytes,) = struct.unpack("<Q", head)
        if header_bytes > MAX_HEADER_BYTES or 8 + header_bytes > file_bytes:
            die(f"{path}: header length {header_bytes} exceeds file size {file_bytes}")
        header = json.loads(f.read(header_bytes))
    data_start = 8 + header_bytes
    data_bytes = file_bytes - data_start
    mm = np.memmap(path, dtype=np.uint8, mode="r", offset=data_start, shape=(data_bytes,))
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = ST_DTYPES.get(info.get("dtype"))
        if dtype is None:
            die(f"{path}: tensor {name}: unsupported dtype {info.get('dtype')}")
        shape = [int(d) for d in info["shape"]]
        begin, end = (int(x) for x in info["data_offsets"])
        n_elems = int(np.prod(shape)) if shape else 1
        if not (0 <= begin <= end <= data_bytes) or end - begin != n_elems * np.dtype(dtype).itemsize:
            die(f"{path}: tensor {name}: data_offsets [{begin}, {end}) do not match "
                f"shape {shape} or exceed the {data_bytes} data bytes")
        out[name] = mm[begin:end].view(dtype).reshape(shape)
    return out


def load_json(path, required=True):
    if not os.path.exists(path):
        if required:
            die(f"{path}: missing")
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def pooling_type(model_dir):
    """Mean or CLS pooling, from sentence-transformers' 1_Pooling/config.json."""
    cfg = load_json(os.path.join(model_dir, "1_Pooling", "config.json"), required=False)
    if cfg is None:
        return gguf.PoolingType.MEAN
    if cfg.get("pooling_mode_mean_tokens"):
        return gguf.PoolingType.MEAN
    if cfg.get("pooling_mode_cls_token"):
        return gguf.PoolingType.CLS
    die(f"{model_dir}/1_Pooling/config.json: only mean or cls pooling is supported")


def read_vocab(model_dir, tok_cfg):
    path = os.path.join(model_dir, "vocab.txt")
    with open(path, encoding="utf-8") as f:
        tokens = [line.rstrip("\n") for line in f]
    if not tokens or len(tokens) > MAX_VOCAB:
        die(f"{path}: {len(tokens)} tokens is out of range")
    index = {t: i for i, t in enumerate(tokens)}
    special = {}
    for key in ("cls", "sep", "unk", "pad", "mask"):
        tok = tok_cfg.get(f"{key}_token")
        if isinstance(tok, dict):
            tok = tok.get("content")
        if tok not in index:
            die(f"{path}: special token {key}={tok!r} from tokenizer_config.json is not in the vocabulary")
        special[key] = index[tok]
    special_ids = set(special.values())
    types = []
    pieces = []
    for i, tok in enumerate(tokens):
        if i in special_ids:
            types.append(gguf.TokenType.CONTROL)
            pieces.append(tok)
        else:
            types.append(gguf.TokenType.NORMAL)
            pieces.append(tok[2:] if tok.startswith("##") else "\u2581" + tok)
    return pieces, types, special


def tensor_plan(n_layer):
    """(gguf name, hf name) pairs in the order they are written."""
    plan = [
        ("token_embd.weight", "embeddings.word_embeddings.weight"),
        ("token_types.weight", "embeddings.token_type_embeddings.weight"),
        ("position_embd.weight", "embeddings.position_embeddings.weight"),
        ("token_embd_norm.weight", "embeddings.LayerNorm.weight"),
        ("token_embd_norm.bias", "embeddings.LayerNorm.bias"),
    ]
    per_layer = [
        ("attn_q", "attention.self.query"),
        ("attn_k", "attention.self.key"),
        ("attn_v", "attention.self.value"),
        ("attn_output", "attention.output.dense"),
        ("attn_output_norm", "attention.output.LayerNorm"),
        ("ffn_up", "intermediate.dense"),
        ("ffn_down", "output.dense"),
        ("layer_output_norm", "output.LayerNorm"),
    ]
    for i in range(n_layer):
        for g, h in per_layer:
            for suffix in ("weight", "bias"):
                plan.append((f"blk.{i}.{g}.{suffix}", f"encoder.layer.{i}.{h}.{suffix}"))
    return plan


# Tensors that may be present and are deliberately not converted.
IGNORED = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}


def main():
    ap = argparse.ArgumentParser(description="Convert a HF BERT embedding model to GGUF")
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--outtype", choices=("f32", "f16"), default="f32")
    ap.add_argument("--name", default=None, help="general.name (default: folder name)")
    ap.add_argument("--pre", default="bert-bge",
                    help="tokenizer.ggml.pre (default bert-bge: uncased BERT WordPiece)")
    args = ap.parse_args()

    d = args.model_dir
    cfg = load_json(os.path.join(d, "config.json"))
    tok_cfg = load_json(os.path.join(d, "tokenizer_config.json"))
    if cfg.get("model_type") != "bert":
        die(f"{d}/config.json: model_type {cfg.get('model_type')!r} is not 'bert'")
    if cfg.get("hidden_act") != "gelu":
        die(f"{d}/config.json: hidden_act {cfg.get('hidden_act')!r} is not 'gelu'")
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        die(f"{d}/config.json: position_embedding_type must be 'absolute'")

    n_embd = int(cfg["hidden_size"])
    n_layer = int(cfg["num_hidden_layers"])
    n_head = int(cfg["num_attention_heads"])
    n_ff = int(cfg["intermediate_size"])
    n_ctx = int(cfg["max_position_embeddings"])
    n_types = int(cfg.get("type_vocab_size", 1))
    eps = float(cfg.get("layer_norm_eps", 1e-12))
    if n_embd % n_head:
        die(f"{d}/config.json: hidden_size {n_embd} is not a multiple of num_attention_heads {n_head}")

    pieces, types, special = read_vocab(d, tok_cfg)
    if len(pieces) != int(cfg["vocab_size"]):
        die(f"{d}/vocab.txt: {len(pieces)} tokens but config.json vocab_size is {cfg['vocab_size']}")

    weights = read_safetensors(os.path.join(d, "model.safetensors"))
    plan = tensor_plan(n_layer)
    used = {h for _, h in plan}
    extra = sorted(set(weights) - used - IGNORED)
    if extra:
        die(f"{d}/model.safetensors: unexpected tensors {extra[:5]}")

    expect = {
        "embeddings.word_embeddings.weight": (len(pieces), n_embd),
        "embeddings.token_type_embeddings.weight": (n_types, n_embd),
        "embeddings.position_embeddings.weight": (n_ctx, n_embd),
    }
    for i in range(n_layer):
        p = f"encoder.layer.{i}."
        for h in ("attention.self.query", "attention.self.key", "attention.self.value",
                  "attention.output.dense"):
            expect[p + h + ".weight"] = (n_embd, n_embd)
        expect[p + "intermediate.dense.weight"] = (n_ff, n_embd)
        expect[p + "output.dense.weight"] = (n_embd, n_ff)

    name = args.name or os.path.basename(os.path.normpath(d))
    ftype = gguf.LlamaFileType.ALL_F32 if args.outtype == "f32" else gguf.LlamaFileType.MOSTLY_F16

    w = gguf.GGUFWriter(args.out, "bert")
    w.add_type(gguf.GGUFType.MODEL)
    w.add_name(name)
    w.add_file_type(ftype)
    w.add_context_length(n_ctx)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_block_count(n_layer)
    w.add_head_count(n_head)
    w.add_layer_norm_eps(eps)
    w.add_causal_attention(False)
    w.add_pooling_type(pooling_type(d))

    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre(args.pre)
    w.add_token_list(pieces)
    w.add_token_types(types)
    w.add_token_type_count(n_types)
    w.add_bos_token_id(special["cls"])
    w.add_eos_token_id(special["sep"])
    w.add_unk_token_id(special["unk"])
    w.add_sep_token_id(special["sep"])
    w.add_pad_token_id(special["pad"])
    w.add_mask_token_id(special["mask"])
    w.add_add_bos_token(True)
    w.add_add_eos_token(True)

    for gname, hname in plan:
        if hname not in weights:
            die(f"{d}/model.safetensors: tensor {hname} is missing")
        t = np.asarray(weights[hname], dtype=np.float32)
        want = expect.get(hname)
        if want is None:
            want = (n_ff,) if hname.endswith("intermediate.dense.bias") else (n_embd,)
        if tuple(t.shape) != want:
            die(f"{d}/model.safetensors: tensor {hname} has shape {list(t.shape)}, expected {list(want)}")
        if not np.isfinite(t).all():
            die(f"{d}/model.safetensors: tensor {hname} holds NaN or Inf")
        # Norms and biases stay F32 (as llama.cpp does); matrices follow --outtype.
        if args.outtype == "f16" and t.ndim == 2:
            t = t.astype(np.float16)
        w.add_tensor(gname, np.ascontiguousarray(t))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
