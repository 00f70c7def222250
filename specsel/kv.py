"""KV cache surgery on transformers caches: truncate to an accepted prefix, keep an accepted tree path."""

from __future__ import annotations

import torch


def cache_length(cache) -> int:
    return cache.get_seq_length() if cache is not None else 0


def cache_truncate(cache, length: int) -> None:
    """Drop every cached position >= length (all layers)."""
    for layer in cache.layers:
        if layer.keys is not None and layer.keys.numel():
            layer.keys = layer.keys[..., :length, :]
            layer.values = layer.values[..., :length, :]


def cache_keep(cache, start: int, keep: torch.Tensor) -> None:
    """Keep positions [0, start) plus `start + keep` ([M] int64, ascending) packed right after them."""
    for layer in cache.layers:
        if layer.keys is not None and layer.keys.numel():
            idx = keep.to(layer.keys.device) + start
            layer.keys = torch.cat([layer.keys[..., :start, :], layer.keys.index_select(-2, idx)], dim=-2)
            layer.values = torch.cat([layer.values[..., :start, :], layer.values.index_select(-2, idx)], dim=-2)


def take_rows(rows: dict[int, torch.Tensor], start: int, end: int) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
    """rows {position: [V] logits} -> ([end-start, V] for positions start..end-1, the rows after `end`)."""
    missing = [p for p in range(start, end) if p not in rows]
    if missing:
        raise RuntimeError(f"no drafter prediction kept for positions {missing[:5]} (tracking was off or not synced)")
    return torch.stack([rows[p] for p in range(start, end)]), {p: r for p, r in rows.items() if p >= end}
