"""What one request carries through the decode loop (`DecodeState`: committed tokens, target features, each
drafter's synced length) and what it reports (`RequestMetrics`), the speculative counts read from that report
(`spec_counts`: vLLM's spec-decode counters, per drafter; the server's /metrics and per-request figures and the
benchmarks all count with it), and the stop rule applied to its output."""

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
    # draft tokens per verification cycle, aligned with accepted / choices (drafted also has auto's plain steps);
    # a tree cycle's is its node count
    draft_len: list[int] = field(default_factory=list)
    # per cycle (speculative or auto's plain step), timed always (host clock, no device sync: selection and feedback
    # read their results back to the host): selection + feedback seconds, and the whole cycle's seconds
    selection_s: list[float] = field(default_factory=list)
    cycle_s: list[float] = field(default_factory=list)
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
                "weight_swaps": self.weight_swaps, "drafted": self.drafted, "draft_len": self.draft_len,
                "selection_s": self.selection_s, "cycle_s": self.cycle_s,
                "plans": self.plans, "other_s": self.other_s,
                "total_s": self.total_s}


@dataclass
class DrafterCounts:
    """vLLM's spec-decode counters over some verification cycles: drafts (cycles that verified >= 1 drafted token),
    the tokens drafted in them, those accepted, and per position j the drafts whose position j was accepted."""

    num_drafts: int = 0
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)  # [j]: drafts that accepted more than j tokens

    def add(self, other: DrafterCounts) -> DrafterCounts:
        """-> the sum of both (a new value)."""
        n = max(len(self.accepted_per_pos), len(other.accepted_per_pos))
        pad = lambda xs: xs + [0] * (n - len(xs))  # noqa: E731
        return DrafterCounts(self.num_drafts + other.num_drafts, self.num_draft_tokens + other.num_draft_tokens,
                             self.num_accepted_tokens + other.num_accepted_tokens,
                             [a + b for a, b in zip(pad(self.accepted_per_pos), pad(other.accepted_per_pos))])


def spec_counts(metrics: dict, names: list[str]) -> dict[str, DrafterCounts]:
    """A request's metrics (`RequestMetrics.to_dict()`) -> vLLM's spec-decode counts per drafter (every name, zeros
    included), as vLLM counts them: a cycle that drafted nothing (a model-free drafter with no match) is no draft;
    accepting n tokens accepts positions 0..n-1 (a tree cycle: its accepted path, its node count drafted). Metrics
    without verification cycles (plain or lookahead decoding) count nothing. Metrics written before `draft_len`
    existed are read from `drafted` when no plain step makes it longer than `accepted`; else ValueError."""
    out = {n: DrafterCounts() for n in names}
    accepted, choices = metrics.get("accepted") or [], metrics.get("choices") or []
    lens = metrics.get("draft_len")
    if lens is None:
        lens = metrics.get("drafted") or []
        if accepted and len(lens) != len(accepted):
            raise ValueError("these metrics have no draft_len, and their drafted counts include plain steps: the "
                             "tokens drafted per verification cycle cannot be told")
    if not len(accepted) == len(choices) == len(lens):
        raise ValueError(f"accepted, choices and draft_len must have one entry per verification cycle, got "
                         f"{len(accepted)}, {len(choices)} and {len(lens)}")
    for n_acc, i, n_draft in zip(accepted, choices, lens):
        if n_draft < 1:
            continue
        if not 0 <= n_acc <= n_draft:
            raise ValueError(f"a cycle accepted {n_acc} of {n_draft} drafted tokens")
        c = out[names[i]]
        c.num_drafts += 1
        c.num_draft_tokens += n_draft
        c.num_accepted_tokens += n_acc
        c.accepted_per_pos.extend([0] * (n_acc - len(c.accepted_per_pos)))
        for j in range(n_acc):
            c.accepted_per_pos[j] += 1
    return out


def cut_at_stop(tokens: list[int], stop_ids: Collection[int], max_new_tokens: int) -> list[int]:
    """The first max_new_tokens tokens, ending after the first stop token."""
    tokens = tokens[:max_new_tokens]
    for i, t in enumerate(tokens):
        if t in stop_ids:
            return tokens[:i + 1]
    return tokens
