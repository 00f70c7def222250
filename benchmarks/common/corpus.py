"""A synthetic, seeded token corpus for the suffix index benchmarks (benchmarks.suffix_index, benchmarks.soak):
sequences of 200 tokens stitched from 3,000 Zipf-distributed phrases over 8,000 ids, repetitive like served answers."""

from __future__ import annotations

import numpy as np


def corpus(n_tokens: int, seed: int) -> list[list[int]]:
    """Sequences of 200 token ids until they hold at least n_tokens."""
    rng = np.random.default_rng(seed)
    phrases = [rng.zipf(1.3, 12) % 8000 for _ in range(3000)]
    seqs = []
    while sum(map(len, seqs)) < n_tokens:
        seqs.append(np.concatenate([phrases[i] for i in rng.integers(0, 3000, 17)])[:200].tolist())
    return seqs
