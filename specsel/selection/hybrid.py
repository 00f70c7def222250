"""Arctic's hybrid rule as a fixed selector (Snowflake's SuffixDecoding + model drafter serving): every cycle the
suffix drafter's proposal (at most the decoder's k tokens) is scored first, and it drafts when its score (expected
accepted tokens) is at least the model drafter's token count (`threshold`); the model drafter drafts otherwise. With
mode auto and a k above the threshold, the model drafter's own chain length is auto's choice, and a long confident
match speculates past it, as in Arctic's serving. No learning, no counterfactual evaluation: the
field's simple baseline that HedgeSpec over heads + model-free drafters is measured against."""

from __future__ import annotations

from specsel.decoding.errors import SpecError
from specsel.decoding.request import DecodeState
from specsel.decoding.view import NoFeedback, PoolView


class HybridSelector(NoFeedback):

    def __init__(self, suffix: int, model: int, threshold: float):
        """suffix / model: indices of the model-free and the model drafter in the pool; threshold: the model
        drafter's token count."""
        self.suffix, self.model, self.threshold = suffix, model, threshold
        self.state = None
        self.picks = [0, 0]  # cycles drafted by the suffix drafter, by the model drafter

    def bind(self, view: PoolView) -> None:
        n = len(view.drafters)
        if not (0 <= self.suffix < n and 0 <= self.model < n) or self.suffix == self.model:
            raise SpecError(f"hybrid: drafters {self.suffix} and {self.model} must be two members of a pool of {n}")
        if not view.drafters[self.suffix].self_limiting:  # rule: only a self-limiting drafter scores its proposal
            raise SpecError(f"hybrid: drafter {view.names[self.suffix]!r} does not score proposals (not model-free)")
        self.drafter, self.k = view.drafters[self.suffix], view.k

    def start_request(self, state: DecodeState) -> None:
        self.state = state

    def select(self) -> int:
        # rule: the suffix draft when its score >= the model drafter's k (Arctic's rule), else the model's
        self.drafter.sync(self.state)
        use = self.drafter.propose(self.k).score >= self.threshold
        self.picks[0 if use else 1] += 1
        return self.suffix if use else self.model

