"""Per-position rows a drafter keeps while tracking (the selection layer's counterfactual evaluation reads them), and
the confidence of its next draft (per-cycle selection reads it).

Its own module, below every concrete drafter: the drafters import it, and `specsel.decoding.drafter` (the protocol
and `make_drafter`) reaches them through the kind registry, so no import runs in a circle.
"""

from __future__ import annotations

import torch


def take_rows(rows: dict[int, torch.Tensor], start: int, end: int) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
    """rows {position: [V] logits} -> ([end-start, V] for positions start..end-1, the rows after `end`)."""
    missing = [p for p in range(start, end) if p not in rows]
    if missing:
        raise RuntimeError(f"no drafter prediction kept for positions {missing[:5]} (tracking was off or not synced)")
    return torch.stack([rows[p] for p in range(start, end)]), {p: r for p, r in rows.items() if p >= end}


def top1_probability(logits: torch.Tensor | None) -> float | None:
    """[V] next-token logits -> the drafter's own probability of its greedy draft (None before it read anything)."""
    return None if logits is None else float(logits.float().softmax(-1).max())
