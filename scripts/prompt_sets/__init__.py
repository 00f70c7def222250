"""Prompt-set generators, one module per set, each with `prompts() -> list[tuple[str, str]]`: (group, prompt) pairs
in a fixed order. `scripts/freeze_prompts.py` freezes them to `data_gen/prompts/<set>.jsonl`."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable


def from_families(families: dict[str, Callable[[], Iterable[str]] | Iterable[str]], seed: int,
                  minimum: int = 340) -> list[tuple[str, str]]:
    """(group, prompt) pairs of named families in a fixed, deterministic order: a templated family's (a callable's)
    prompts share its name as group; every prompt of a standalone list is its own group ("what-if-3"). Whitespace is
    normalised, duplicates dropped, the order shuffled with `seed`."""
    seen = set()
    out = []
    for name, family in families.items():
        if callable(family):
            items = [(name, p) for p in family()]
        else:
            items = [(f"{name}-{i}", p) for i, p in enumerate(family, start=1)]
        for group, p in items:
            p = " ".join(p.split())
            if p and p not in seen:
                seen.add(p)
                out.append((group, p))
    random.Random(seed).shuffle(out)
    assert len(out) >= minimum, len(out)
    assert all(p and p == p.strip() for _, p in out)
    return out
