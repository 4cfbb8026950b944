"""ctypes binding to libledgerlite.so (built with `make` in the repo root).

Only the pure functions are bound; the binding is used by `ledgerlite-py
check` to confirm that the Python model and the C library agree.
"""

from __future__ import annotations

import ctypes
import os
from typing import Optional

_ROUNDING = {"half_up": 0, "half_even": 1, "down": 2}


class NativeLibrary:
    """Thin wrapper over the C functions money_mul_bp and money_format."""

    def __init__(self, path: str):
        self._lib = ctypes.CDLL(path)
        self._lib.money_mul_bp.argtypes = [ctypes.c_int64, ctypes.c_int32, ctypes.c_int]
        self._lib.money_mul_bp.restype = ctypes.c_int64
        self._lib.money_format.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_size_t]
        self._lib.money_format.restype = ctypes.c_size_t
        self.path = path

    def mul_bp(self, amount: int, rate_bp: int, mode: str) -> int:
        return self._lib.money_mul_bp(amount, rate_bp, _ROUNDING[mode])

    def format_money(self, amount: int) -> str:
        buf = ctypes.create_string_buffer(48)
        self._lib.money_format(amount, buf, len(buf))
        return buf.value.decode("ascii")


def find_library(start: Optional[str] = None) -> Optional[str]:
    """Look for libledgerlite.so next to the repository's Makefile."""
    here = start or os.path.dirname(os.path.abspath(__file__))
    for _ in range(4):
        candidate = os.path.join(here, "libledgerlite.so")
        if os.path.exists(candidate):
            return candidate
        here = os.path.dirname(here)
    return os.environ.get("LEDGERLITE_LIB")


def load() -> Optional[NativeLibrary]:
    path = find_library()
    return NativeLibrary(path) if path else None
