"""Draft trees (EAGLE-2 style dynamic expansion) and their attention masks.

A tree holds N draft nodes in an order where every parent comes before its children; parent -1 means a child of
the root (the last committed token, which the target verifies at index 0 of the tree pass).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class TreeSpec:
    depth: int = 7
    top_k: int = 8
    tokens: int = 60  # draft nodes verified per cycle (the root token is extra)

    def max_nodes(self) -> int:
        """Candidates the expansion produces: k at depth 1, k*k at each deeper level."""
        return self.top_k + (self.depth - 1) * self.top_k * self.top_k

    def validate(self, draft_vocab: int) -> None:
        if self.depth < 1 or self.top_k < 1 or self.tokens < 1:
            raise ValueError(f"tree depth, top_k and tokens must be >= 1 (got depth={self.depth}, "
                             f"top_k={self.top_k}, tokens={self.tokens})")
        if self.top_k > draft_vocab:
            raise ValueError(f"tree top_k={self.top_k} exceeds the drafter's vocabulary of {draft_vocab}")
        if self.tokens > self.max_nodes():
            raise ValueError(f"tree budget of {self.tokens} tokens does not fit depth={self.depth}, "
                             f"top_k={self.top_k}: the expansion yields at most {self.max_nodes()} candidates")


@dataclass
class DraftTree:
    tokens: list[int]  # [N] target token ids
    parents: list[int]  # [N] parent node index, -1 = root
    depths: list[int]  # [N] 1 for children of the root

    def __len__(self) -> int:
        return len(self.tokens)


def ancestor_mask(parents: list[int]) -> torch.Tensor:
    """[N+1, N+1] bool, row i (0 = root, node j at j+1) True at i's ancestors and itself."""
    n = len(parents)
    mask = torch.zeros(n + 1, n + 1, dtype=torch.bool)
    mask[:, 0] = True
    for j, par in enumerate(parents):
        # rule: a node sees what its parent sees, plus itself
        mask[j + 1] = mask[par + 1]
        mask[j + 1, j + 1] = True
    return mask


def select_nodes(scores: list[float], parents: list[int], budget: int) -> list[int]:
    """Indices of the `budget` best candidates by cumulative log-probability, closed under parents, in tree order.

    Candidates are listed parents-first, so sorting by (score desc, index asc) puts a parent (score >= child's) ahead
    of its children and the top of the list is a tree.
    """
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:budget]
    keep = set(order)
    assert all(parents[i] == -1 or parents[i] in keep for i in keep), "selection is not closed under parents"
    return sorted(keep)


def reindex(chosen: list[int], tokens: list[int], parents: list[int], depths: list[int]) -> DraftTree:
    """Restrict candidate lists to `chosen` (ascending) and renumber parents."""
    new = {old: i for i, old in enumerate(chosen)}
    return DraftTree(tokens=[tokens[i] for i in chosen],
                     parents=[-1 if parents[i] == -1 else new[parents[i]] for i in chosen],
                     depths=[depths[i] for i in chosen])
