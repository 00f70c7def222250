"""What the decode loop asks of a drafter (an EAGLE-3 head, an independent causal LM, ...), and `make_drafter`.

A drafter keeps its own cache of what it has read. `sync(state)` catches it up with the committed tokens (dropping
its draft positions), `draft_chain(k, params, gen)` drafts k tokens (and their distributions when sampling),
`draft_tree(spec)` an EAGLE-2 style tree (where `can_tree`). With `track` on, it also keeps the logits it predicted
for every committed position (`take_predictions`), which the selection layer's counterfactual evaluation reads.
Drafts may live in a smaller draft vocabulary (`draft_vocab_size`): `to_target_ids` / `full_logits` map them back.
The loop, the cost model and the selector use only these members; `kind` names the drafter's registry entry
(`draftpool.models.get_kind`), where its capabilities are declared. `make_drafter` reads the registry: the concrete
drafters are the kinds' `decoder` parts (this module imports none of them).
"""

from __future__ import annotations

from typing import Protocol

import torch

from draftpool.forward.sampling import SamplingParams
from draftpool.models import part
from draftpool.models.proposal import Proposal
from specsel.decoding.tree import DraftTree, TreeSpec


class Drafter(Protocol):
    kind: str  # its registry entry: "eagle3" | "llama" | ...
    vocab_size: int  # the target vocabulary it drafts in
    draft_vocab_size: int  # the vocabulary its logits cover (= vocab_size without a reduced draft vocabulary)
    aux_layers: list[int] | None  # target features it reads (HF hidden_states ids), None for none
    can_tree: bool  # draft_tree works (mode 'tree', auto's trees)
    # drafts its own length (<= k) from its confidence: auto gives it the whole k, and it scores the chain it would
    # draft (`propose`)
    self_limiting: bool
    track: bool
    # its chain is a function of the committed tokens (model-free drafters): with `track` on it keeps the chain it
    # would propose after every committed position (`track_k` long) and the selector scores the chains themselves
    # (`take_chain_hits`); otherwise the selector scores its next-token predictions (`take_predictions`)
    deterministic: bool
    # [draft_vocab_size] logits per step of the last draft_chain: the distributions behind its drafts (MetaSD's
    # block-divergence reward reads them); [] before the first chain
    chain_logits: list[torch.Tensor]

    @property
    def module(self) -> torch.nn.Module | None:
        """The network it runs (cost keys name its class, size and dtype)."""
        ...

    def check_target(self, config) -> None:
        """Raise ValueError, with what does not match, when it cannot serve a target of this HF config."""
        ...

    def reset(self) -> None: ...

    def sync(self, state) -> None: ...

    def draft_chain(self, k: int, params: SamplingParams, generator: torch.Generator | None
                    ) -> tuple[torch.Tensor, torch.Tensor | None]: ...

    def draft_tree(self, spec: TreeSpec) -> DraftTree: ...

    def propose(self, k: int) -> Proposal:
        """Self-limiting drafters only: the chain it would draft now (at most k tokens) with its score (expected
        accepted drafts), as Arctic's hybrid rule compares it."""
        ...

    def confidence(self) -> float | None:
        """After a sync: its own probability of the token it would draft first (a network drafter's top-1 next-token
        probability, read by per-cycle selection); None for a drafter that scores proposals instead."""
        ...

    def take_predictions(self, start: int, end: int) -> torch.Tensor: ...

    def take_chain_hits(self, start: int, end: int, tokens: list[int]) -> torch.Tensor:
        """Deterministic drafters only: [track_k, end-start], 1 where the chain kept at p - j drafts tokens[p] at
        depth j."""
        ...

    def to_target_ids(self, ids: torch.Tensor) -> torch.Tensor: ...

    def full_logits(self, logits: torch.Tensor) -> torch.Tensor: ...

    def learn(self, tokens: list[int]) -> bool:
        """A finished answer (prompt + generated tokens): a drafter that learns by indexing answers adds it (used from
        the next request on) and returns True; a model drafter learns in the trainer process instead: False."""
        ...


def drafter_class(kind: str) -> type:
    """The decode-time drafter class a kind declares (its `decoder`, resolved through the registry)."""
    return part(kind, "decoder")


def make_drafter(kind: str, model) -> Drafter:
    """The decode-time drafter of a pool model of this kind (draftpool.pool.load_members' kinds); ValueError naming
    the known kinds for an unknown one."""
    return drafter_class(kind)(model)
