"""What the decode loop asks of a drafter (an EAGLE-3 head, an independent causal LM, ...).

A drafter keeps its own cache of what it has read. `sync(state)` catches it up with the committed tokens (dropping
its draft positions), `draft_chain(k, params, gen)` drafts k tokens (and their distributions when sampling),
`draft_tree(spec)` an EAGLE-2 style tree (heads only). With `track` on, it also keeps the logits it predicted for
every committed position (`take_predictions`), which the selection layer's counterfactual evaluation reads.
"""

from __future__ import annotations

from typing import Protocol

import torch

from specsel.decoding.sampling import SamplingParams


class Drafter(Protocol):
    kind: str  # "eagle3" | "llama"
    vocab_size: int  # the target vocabulary it drafts in
    aux_layers: list[int] | None  # target features it reads (HF hidden_states ids), None for none
    track: bool

    def reset(self) -> None: ...

    def sync(self, state) -> None: ...

    def draft_chain(self, k: int, params: SamplingParams, generator: torch.Generator | None
                    ) -> tuple[torch.Tensor, torch.Tensor | None]: ...

    def take_predictions(self, start: int, end: int) -> torch.Tensor: ...

    def to_target_ids(self, ids: torch.Tensor) -> torch.Tensor: ...

    def full_logits(self, logits: torch.Tensor) -> torch.Tensor: ...


def take_rows(rows: dict[int, torch.Tensor], start: int, end: int) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
    """rows {position: [V] logits} -> ([end-start, V] for positions start..end-1, the rows after `end`)."""
    missing = [p for p in range(start, end) if p not in rows]
    if missing:
        raise RuntimeError(f"no drafter prediction kept for positions {missing[:5]} (tracking was off or not synced)")
    return torch.stack([rows[p] for p in range(start, end)]), {p: r for p, r in rows.items() if p >= end}
