"""What one request carries through the decode loop (`DecodeState`: committed tokens, target features, each
drafter's synced length) and what it reports (`RequestMetrics`), and the stop rule applied to its output."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import torch


@dataclass
class DecodeState:
    tokens: list[int]  # committed tokens, prompt included
    prompt_len: int
    feats: torch.Tensor | None = None  # [n_feat,3H] target aux features of positions 0..n_feat-1 (EAGLE-3 drafters)
    synced: list[int] = field(default_factory=list)  # per drafter: committed length at its last sync


@dataclass
class RequestMetrics:
    new_tokens: int = 0
    target_forwards: int = 0  # the prefill included
    accepted: list[int] = field(default_factory=list)  # draft tokens accepted per verification cycle
    choices: list[int] = field(default_factory=list)  # drafter index per cycle
    select_s: float = 0.0  # selector: choose (and drain its feedback queue)
    draft_s: float = 0.0  # drafter: sync with the committed tokens + drafting
    verify_s: float = 0.0  # target forward + logits rows + acceptance rule + cache rollback
    target_s: float = 0.0  # of verify_s: the target's forward over the verified tokens
    eval_s: float = 0.0  # selector feedback: counterfactual evaluation of every drafter, or a bandit's reward
    switches: int = 0  # cycles whose drafter differs from the previous cycle's
    switch_s: float = 0.0  # catch-up prefill time of a drafter on a switch (part of draft_s)
    catchup_tokens: int = 0  # tokens prefilled into the chosen drafter beyond the last chunk, on switches
    weight_swaps: int = 0  # drafter weight versions swapped in during the request (online adaptation)
    drafted: list[int] = field(default_factory=list)  # draft tokens per cycle (auto: its choice; 0 = a plain step)
    plans: list[str] = field(default_factory=list)  # auto: what each cycle was ('plain', 'k=2', 'tree 3/2/8')
    total_s: float = 0.0

    @property
    def mat(self) -> float:
        """Mean accepted tokens per target forward, bonus token included (prefill counted as one forward)."""
        return self.new_tokens / max(self.target_forwards, 1)

    @property
    def tokens_per_s(self) -> float:
        return self.new_tokens / self.total_s if self.total_s > 0 else 0.0

    @property
    def other_s(self) -> float:
        return max(self.total_s - self.select_s - self.draft_s - self.verify_s - self.eval_s, 0.0)

    def to_dict(self) -> dict:
        return {"new_tokens": self.new_tokens, "target_forwards": self.target_forwards, "cycles": len(self.accepted),
                "accepted": self.accepted, "choices": self.choices, "mat": self.mat,
                "tokens_per_s": self.tokens_per_s, "select_s": self.select_s, "draft_s": self.draft_s,
                "verify_s": self.verify_s, "target_s": self.target_s, "eval_s": self.eval_s,
                "switches": self.switches, "switch_s": self.switch_s, "catchup_tokens": self.catchup_tokens,
                "weight_swaps": self.weight_swaps, "drafted": self.drafted, "plans": self.plans,
                "other_s": self.other_s,
                "total_s": self.total_s}


def cut_at_stop(tokens: list[int], stop_ids: Collection[int], max_new_tokens: int) -> list[int]:
    """The first max_new_tokens tokens, ending after the first stop token."""
    tokens = tokens[:max_new_tokens]
    for i, t in enumerate(tokens):
        if t in stop_ids:
            return tokens[:i + 1]
    return tokens
