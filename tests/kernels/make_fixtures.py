#!/usr/bin/env python3
"""Reference fixtures for tests/kernels: random GGML blocks dequantized by
an independent implementation (the `gguf` Python package's numpy code, from
llama.cpp's gguf-py), so test_fixtures.c can check our block layouts against
it rather than against our own output.

Set up once (the venv is git-ignored):
  python3 -m venv .deps/kern-venv
  .deps/kern-venv/bin/pip install gguf==0.19.0 numpy==2.4.6
  .deps/kern-venv/bin/python tests/kernels/make_fixtures.py

Each fixtures/<TYPE>.bin: u32 ggml type id, u32 n elements, u32 raw bytes,
the raw row bytes, then n little-endian f32 (gguf's dequantization).
"""
import os
import struct

import numpy as np
from gguf.quants import GGML_QUANT_SIZES, GGMLQuantizationType as T, dequantize

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
rng = np.random.default_rng(20261129)


def f16_bytes(values):
    return np.asarray(values, dtype=np.float16).view(np.uint8)


def random_blocks(qt, n_blocks):
    """Random block bytes with scale fields set to sane f16 values (random
    bits there could be NaN/inf, which says nothing about the layout)."""
    block_elems, block_bytes = GGML_QUANT_SIZES[qt]
    raw = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
    scale = lambda: f16_bytes(rng.uniform(-0.1, 0.1, size=n_blocks))
    pos = lambda: f16_bytes(rng.uniform(0.001, 0.1, size=n_blocks))
    if qt in (T.Q4_0, T.Q5_0, T.Q8_0):
        raw[:, 0:2] = scale().reshape(n_blocks, 2)
    elif qt in (T.Q4_1, T.Q5_1):
        raw[:, 0:2] = pos().reshape(n_blocks, 2)
        raw[:, 2:4] = scale().reshape(n_blocks, 2)
    elif qt == T.Q4_K:
        raw[:, 0:2] = pos().reshape(n_blocks, 2)
        raw[:, 2:4] = pos().reshape(n_blocks, 2)
    elif qt == T.Q6_K:
        raw[:, 208:210] = scale().reshape(n_blocks, 2)
    return raw.reshape(-1), n_blocks * block_elems


def write(name, type_id, raw, n, values):
    values = np.asarray(values, dtype="<f4").reshape(-1)
    assert values.size == n
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(struct.pack("<III", type_id, n, raw.size))
        f.write(raw.tobytes())
        f.write(values.tobytes())


def main():
    os.makedirs(OUT, exist_ok=True)
    for qt, n_blocks in ((T.Q4_0, 16), (T.Q4_1, 16), (T.Q5_0, 16), (T.Q5_1, 16),
                         (T.Q8_0, 16), (T.Q4_K, 4), (T.Q6_K, 4)):
        raw, n = random_blocks(qt, n_blocks)
        write(qt.name, int(qt), raw, n, dequantize(raw, qt))
    # F16 and BF16: random finite bit patterns, decoded by numpy / gguf.
    h = rng.integers(0, 0x7c00, size=512, dtype=np.uint16)
    h |= rng.integers(0, 2, size=512, dtype=np.uint16) << 15
    write("F16", int(T.F16), h.view(np.uint8), 512, h.view(np.float16).astype(np.float32))
    b = rng.integers(0, 0x7f80, size=512, dtype=np.uint16)
    b |= rng.integers(0, 2, size=512, dtype=np.uint16) << 15
    bu8 = b.view(np.uint8)
    write("BF16", int(T.BF16), bu8, 512, dequantize(bu8, T.BF16))


if __name__ == "__main__":
    main()
