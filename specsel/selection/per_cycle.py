"""Per-cycle selection: every cycle, the member expected to commit the most tokens per second now.

The per-chunk oracle shows where a pool's gain is: within a request the best member changes from chunk to chunk (a
long suffix match here, novel text for a head there). This selector re-chooses every cycle from what it can afford:

- model-free members (self-limiting, deterministic) score their proposal every cycle before anything is drafted
  (`Drafter.propose`: the expected accepted drafts from the index's counts); every proposal is scored later against
  the committed tokens, played or not (its leading drafts the answer confirms), which calibrates the scores per
  member and score bin;
- model drafters (heads) have no score before they draft: each is valued by the moving average of its own cycles;
  with `confidence=True` the leading one (the most tokens per second by those averages) is also synced and read for
  its confidence, its own probability of its first draft (`Drafter.confidence`), calibrated per confidence bin from
  that head's cycles, in every cycle where some confidence could change the choice;
- a head's cost is the moving average of its cycles' seconds (draft, with any catch-up after a switch, and
  verification), measured here on the host clock; a model-free proposal's, that of the model-free cycles that
  drafted as many tokens (a lookup drafts: the time is the target's verification of those rows).

The rule (`learners/calibrated_rate.py`) plays the largest (expected accepted + 1) / seconds. No head is evaluated
counterfactually (no stacked pass); Arctic's hybrid rule (`hybrid.py`) is the fixed-threshold special case of one
suffix member and one head. Its statistics carry from request to request when a new selector replaces one over the
same pool (as `Selector`'s head bank does). Output is the target's own whatever is picked."""

from __future__ import annotations

import time
from collections.abc import Callable

from draftpool.forward.sampling import SamplingParams
from specsel.decoding.errors import SpecError
from specsel.decoding.request import DecodeState
from specsel.decoding.target import TargetPass
from specsel.decoding.view import PoolView
from specsel.selection.learners.calibrated_rate import CalibratedRate


def confirmed(chain: list[int], tokens: list[int], start: int) -> int:
    """How many leading drafts of a chain proposed after tokens[:start] the committed tokens confirm."""
    n = 0
    for j, t in enumerate(chain):
        if start + j >= len(tokens) or tokens[start + j] != t:
            break
        n += 1
    return n


class PerCycleSelector:
    full_information = False  # no counterfactual pass over the drafters' predictions: proposals are scored instead
    fixed = False
    bandit = False  # learns from tokens per second of any cycle length: auto may vary k

    def __init__(self, k: int, confidence: bool = False, clock: Callable[[], float] = time.perf_counter, **rule):
        """k: the longest proposal asked of a model-free member (the decoder's k); confidence: read the leading
        head's confidence every cycle; clock: seconds (tests fix it); rule: CalibratedRate's settings (alpha,
        prior_weight, bins_per_token, explore, prior_accepted, conf_bins)."""
        if k < 1:
            raise SpecError(f"per-cycle selection needs k >= 1, got {k}")
        self.k, self.confidence, self.settings, self.clock = k, confidence, rule, clock
        self.rule: CalibratedRate | None = None
        self.names: list[str] = []
        self.state: DecodeState | None = None

    def bind(self, view: PoolView) -> None:
        scored = [bool(d.self_limiting and d.deterministic) for d in view.drafters]
        if not any(scored):
            raise SpecError("per-cycle selection needs a model-free member (suffix, ngram): it scores proposals")
        prev = view.previous
        if isinstance(prev, PerCycleSelector) and prev.names == view.names and prev.rule is not None and \
                prev.k == self.k and prev.settings == self.settings:
            self.rule = prev.rule  # rule: a new selector over the same pool keeps what the last one learned
        else:
            self.rule = CalibratedRate(scored, self.k, **self.settings)
        self.names, self.drafters = list(view.names), view.drafters
        self.free = [i for i, s in enumerate(scored) if s]
        for d in view.drafters:
            d.track = False  # nothing reads kept predictions: proposals are scored where they were made

    def start_request(self, state: DecodeState) -> None:
        self.state = state
        self.pending: list[tuple[int, int, float, list[int]]] = []  # (member, position, score, chain) to score
        self.t0 = 0.0

    def select(self) -> int:
        state = self.state
        scores: list[float | None] = [None] * len(self.drafters)
        self.lengths: list[int | None] = [None] * len(self.drafters)
        for m in self.free:  # rule: every model-free member proposes now (memoised: the chosen one drafts it)
            d = self.drafters[m]
            d.sync(state)
            prop = d.propose(self.k)
            scores[m], self.lengths[m] = prop.score, len(prop.tokens)
            self.pending.append((m, len(state.tokens), prop.score, list(prop.tokens)))
        lead = self.rule.leading_model_arm() if self.confidence else None
        if lead is not None and self.rule.worth_reading(lead, scores, self.lengths):
            # rule: the leading head reads the verified tokens now and says how sure it is, unless no confidence
            # it could state would beat this cycle's best model-free proposal
            d = self.drafters[lead]
            d.sync(state)
            scores[lead] = d.confidence()
        i = self.rule.select(scores, self.lengths)
        self.t0 = self.clock()
        return i

    def after_cycle(self, state: DecodeState, i: int, n_acc: int, out: TargetPass, params: SamplingParams) -> None:
        # rule: the cycle's draft + verify seconds
        self.rule.update(i, n_acc, self.clock() - self.t0, self.lengths[i])
        self._score(state, final=False)

    def finish_request(self, state: DecodeState, params: SamplingParams) -> None:
        self._score(state, final=True)

    def _score(self, state: DecodeState, final: bool) -> None:
        """Score every proposal whose outcome is known: a draft the committed tokens contradict, or every draft
        confirmed. Those still confirmed up to the last committed token wait; at the request's end they are dropped
        (censored: the answer ended, not the chain)."""
        tokens, keep = state.tokens, []
        for m, p, score, chain in self.pending:
            c = confirmed(chain, tokens, p)
            # rule: outcome = leading drafts the committed tokens confirm (exact greedy; under sampling the
            # indicator along the realised tokens, whose expectation is the chain's acceptance)
            if c == len(chain) or p + c < len(tokens):
                self.rule.observe_score(m, score, c)
            elif not final:
                keep.append((m, p, score, chain))
        self.pending = keep

    def weights_changed(self, changed: list[int]) -> None:
        pass  # a head's new weights show in its next cycles' moving average

    def probabilities(self) -> list[float] | None:
        return None  # a rule, not a distribution
