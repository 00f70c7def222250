"""Online draft-vocabulary adaptation of EAGLE-3 heads: swap rarely used draft slots for frequent uncovered tokens.

A head drafts only from its draft vocabulary (`d2t`: target id = draft id + d2t[draft id]; `t2d`: which target ids
it holds), chosen offline from its training answers. On a new domain the target writes tokens the head can never
propose. The trainer counts every target token it sees in served responses; every N rounds the most frequent
uncovered tokens replace the least-used draft slots (one for one, only while the newcomer was seen more often than
the slot it replaces). Draft ids keep the target order after a swap (the vocabulary is re-sorted and every row that
stays moves with its token), so a swapped head is still a valid EAGLE-3 export. Rows of new tokens start from the
target's output embedding of the token; the optimizer state of those rows starts at zero.
"""

from __future__ import annotations

import torch


def swap_plan(seen: torch.Tensor, t2d: torch.Tensor, max_swaps: int, min_count: int = 2
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """seen [V] token counts, t2d [V] bool -> (dropped target ids [m], added target ids [m]), m <= max_swaps.
    Pair i: the i-th most frequent uncovered token against the i-th least used draft token; kept while the
    newcomer's count is >= min_count and above the count of the token it replaces (ties: lower id first)."""
    ids = torch.arange(seen.numel())
    out_ids, in_ids = ids[~t2d], ids[t2d]
    out_seen, in_seen = seen[~t2d], seen[t2d]
    add = out_ids[torch.sort(out_seen, descending=True, stable=True).indices]  # [V-Vd] most frequent first
    drop = in_ids[torch.sort(in_seen, stable=True).indices]  # [Vd] least used first
    m = min(max_swaps, add.numel(), drop.numel())
    add, drop = add[:m], drop[:m]
    keep = (seen[add] >= min_count) & (seen[add] > seen[drop])  # rule: swap only for a token seen more often
    n = int(keep.long().cumprod(0).sum())  # both lists are sorted: the first failing pair ends the plan
    return drop[:n], add[:n]


def remap_vocab(d2t: torch.Tensor, t2d: torch.Tensor, drop: torch.Tensor, add: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """-> (new d2t [Vd], new t2d [V], index [Vd]): new draft slot s holds target id arange(Vd)[s] + d2t[s]
    (ascending); index[s] = the old slot of that token, -1 for an added token."""
    vd = d2t.numel()
    old_ids = torch.arange(vd, device=d2t.device) + d2t  # [Vd] ascending
    new_t2d = t2d.clone()
    new_t2d[drop] = False
    new_t2d[add] = True
    new_ids = new_t2d.nonzero()[:, 0]  # [Vd] ascending
    if new_ids.numel() != vd:
        raise ValueError(f"a swap must keep {vd} draft tokens, got {new_ids.numel()} (drop and add sizes differ "
                         f"or overlap the vocabulary)")
    pos = torch.searchsorted(old_ids, new_ids).clamp(max=vd - 1)
    index = torch.where(old_ids[pos] == new_ids, pos, torch.full_like(pos, -1))
    return new_ids - torch.arange(vd, device=d2t.device), new_t2d, index


def remap_rows(rows: torch.Tensor, index: torch.Tensor, fill: torch.Tensor) -> torch.Tensor:
    """rows [Vd,...] in the old slot order -> the new order: kept slots carry their row, new slots (index -1) take
    the matching row of fill [Vd,...] (only those rows of fill are read)."""
    out = fill.to(rows.dtype).clone()
    kept = index >= 0
    out[kept] = rows[index[kept]]
    return out


class VocabCounter:
    """Counts of the target tokens seen in served responses (compared with each head's own vocabulary)."""

    def __init__(self, vocab_size: int):
        self.seen = torch.zeros(vocab_size, dtype=torch.long)

    def add(self, tokens: torch.Tensor) -> None:
        self.seen += torch.bincount(tokens.reshape(-1).cpu().long(), minlength=self.seen.numel())

    def coverage(self, t2d: torch.Tensor) -> float:
        """Share of the seen tokens the draft vocabulary holds."""
        total = int(self.seen.sum())
        return float(self.seen[t2d.cpu()].sum()) / total if total else 1.0
