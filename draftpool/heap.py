"""Heap settings for a process that lives for days (a server): glibc's malloc, told to keep large buffers apart.

A decode step allocates and frees buffers whose sizes follow the request (a prompt's prefill: rows x hidden, rows x
vocabulary for its logits). glibc serves a freed large buffer's successor from its heap once the dynamic mmap
threshold has risen past that size (up to 32 MB), and a heap interleaved with small long-lived allocations cannot give
the holes back: measured here, plain decoding of prompts of 40-239 tokens twice over grew RSS by another ~300 MB on
the second pass with glibc's defaults and by ~2 MB with a fixed threshold (docs/benchmarks.md, serving soak). With
`bound_heap`, buffers of 64 KB and more get their own mappings, returned to the system on free, and the heap's top is
trimmed past twice that. Nothing happens where the C library is not glibc (mallopt absent).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)


def bound_heap(mmap_threshold: int = 1 << 16) -> bool:
    """Fix glibc's mmap threshold at `mmap_threshold` bytes (and the trim threshold at twice it); -> whether it
    applied (False off Linux or without glibc's mallopt)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 and mallopt(M_TRIM_THRESHOLD, 2 * mmap_threshold) == 1
