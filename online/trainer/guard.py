"""The acceptance guard: which version of a drafter the server may take, judged on feedback no version trained on.

A trained drafter starts good; online updates can make it worse (an update size that suits a fresh head overshoots a
trained one, a stream narrower than the training data pulls it away). The guard keeps three versions of each drafter
and measures them and each candidate on the same rows (paired: the rows' noise is shared; which rows is the trainer's
business, online/trainer/token_trainer.py):

    offline    the weights serving began with (the pool's; after a restart, still the pool's)
    best       the best version known so far (the offline one until a candidate beats it)
    published  what the server serves now

Rules, one per line of `check`:
1. no rows, no publish: a candidate is never published blind (rounds go on training)
2. a candidate is published when its acceptance is at least the best known one's minus `margin`; one above the best
   becomes the best
3. a candidate below that is rejected; if the published version has itself fallen below best - margin on the rows as
   they are now, the best version is published again (a rollback) and training restarts from it
4. the guard is off when asked (`enabled` False: holdout_every 0): then every candidate is published

Acceptance values are cached per version and set of rows (`rows`, bumped whenever the rows change), so a check on
rows already seen measures only its candidate. Pure bookkeeping: the measurement is the caller's (`measure`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

Weights = dict[str, torch.Tensor]


@dataclass
class Verdict:
    action: str  # "publish" (the candidate), "rollback" (the best version again), "hold" (nothing new)
    weights: Weights | None  # what to publish (None: hold)
    candidate: float | None = None  # held-out acceptance of the candidate
    best: float | None = None  # of the best version known (offline included)
    published: float | None = None  # of the version served before this check
    reason: str = ""
    offline: float | None = None  # of the offline version (what adaptation is measured against)

    @property
    def ok(self) -> bool:
        """The candidate was published."""
        return self.action == "publish"


def _clone(w: Weights) -> Weights:
    return {k: v.detach().clone() for k, v in w.items()}


class Guard:
    """One drafter's guard (module docstring). `enabled` False: every candidate is published (no held-out rows)."""

    def __init__(self, start: Weights, margin: float, enabled: bool = True):
        self.margin, self.enabled = margin, enabled
        self.offline = _clone(start)
        self.best = self.offline
        self.published = self.offline
        self._acc: dict[int, tuple[Weights, int, float]] = {}  # id(version) -> (version, rows, acceptance)
        self.rejected = self.rollbacks = 0

    def _measure(self, weights: Weights, measure: Callable[[Weights], float], rows: int) -> float:
        cached = self._acc.get(id(weights))
        if cached is None or cached[0] is not weights or cached[1] != rows:
            cached = self._acc[id(weights)] = (weights, rows, measure(weights))
        return cached[2]

    def check(self, candidate: Weights, measure: Callable[[Weights], float], rows: int, have_rows: bool
              ) -> Verdict:
        """candidate: the trainer's weights now; measure(weights) -> held-out acceptance on the current rows, whose
        version is `rows` (bumped whenever they change)."""
        if not self.enabled:  # rule 4
            self.published = _clone(candidate)
            return Verdict("publish", self.published, reason="guard off (no held-out rows asked for)")
        if not have_rows:  # rule 1
            return Verdict("hold", None, reason="no held-out rows yet")
        offline, best = self._measure(self.offline, measure, rows), self._measure(self.best, measure, rows)
        if offline > best:  # on the rows as they are now the offline version is ahead: it is the best known
            self.best, best = self.offline, offline
        published = self._measure(self.published, measure, rows)
        acc = measure(candidate)
        try:
            if acc >= best - self.margin:  # rule 2
                self.published = _clone(candidate)
                self._acc[id(self.published)] = (self.published, rows, acc)
                if acc > best:
                    self.best = self.published
                return Verdict("publish", self.published, acc, best, published, offline=offline)
            self.rejected += 1
            if published < best - self.margin:  # rule 3
                self.rollbacks += 1
                self.published = self.best
                return Verdict("rollback", self.published, acc, best, published,
                               f"the served version fell to {published:.3f}; the best known is {best:.3f}")
            return Verdict("hold", None, acc, best, published, "the candidate is below the best known version")
        finally:  # keep the measurements of the three versions only
            keep = {id(self.offline), id(self.best), id(self.published)}
            self._acc = {k: v for k, v in self._acc.items() if k in keep}

    @property
    def offline_device(self) -> torch.device:
        return next(iter(self.offline.values())).device

    def state(self) -> dict:
        return {"offline": self.offline, "best": self.best, "published": self.published, "rejected": self.rejected,
                "rollbacks": self.rollbacks}

    def load_state(self, state: dict) -> None:
        self.offline, self.best, self.published = (_clone(state[k]) for k in ("offline", "best", "published"))
        self.rejected, self.rollbacks = state["rejected"], state.get("rollbacks", 0)
        self._acc = {}
