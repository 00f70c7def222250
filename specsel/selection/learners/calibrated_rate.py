"""Per-cycle choice by expected tokens per second (this project's rule for pools with model-free members).

Every cycle each arm gets a value, and the largest is played (ties -> lowest index):

    value_i = (a_i + 1) / c_i                      tokens committed per second of the cycle
    a_i (scored arm: a model-free member that scores its proposal, s = its expected accepted drafts)
        = (sum of accepted in s's bin + w0 * s) / (count of s's bin + w0)   the score, calibrated on its outcomes
    a_i (model arm: a network drafter, no score before it drafts)
        = m_i, the exponential moving average of its accepted drafts per cycle it drafted (rate alpha), starting
          from `prior_accepted` (one unlucky first cycle does not bury a head); with a confidence c (its own
          probability of its first draft, read after a sync) the bin of c calibrates it:
          (sum of accepted in c's bin + w0 * m_i) / (count of c's bin + w0), bins of width 1/conf_bins
    c_i (model arm) = exponential moving average of the seconds of a cycle it drafted (rate alpha)
    c_i (scored arm) = moving average of the seconds of a scored arm's cycle that drafted as many tokens as this
          proposal holds, shared by the scored arms (their drafting is a lookup: the cycle's time is the target's
          verification of that many rows); the nearest measured length where this one is not measured yet
    an arm with no measured cost: the mean of the measured ones (else 1)

Scored arms learn every cycle, played or not: a proposal's outcome is the number of its leading drafts that the
committed tokens confirm (`observe_score`: counterfactual, free for a model-free member). Model arms learn only from
their own cycles, so a model arm is played when it has never drafted, and again after `explore` cycles without
drafting (its estimate may be stale after the stream changed). Deterministic: the seed is unused.
"""

from __future__ import annotations

import math
import random

from specsel.selection.learners.checks import check_n_arms


class CalibratedRate:
    full_information = False

    def __init__(self, scored: list[bool], k: int, seed: int = 0, alpha: float = 0.1, prior_weight: float = 2.0,
                 bins_per_token: int = 2, explore: int = 64, prior_accepted: float = 1.0, conf_bins: int = 10,
                 forget: float = 0.0):
        self.n_arms = check_n_arms(len(scored))
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k!r}")
        if not (0 < alpha <= 1) or not (prior_weight > 0 and math.isfinite(prior_weight)):
            raise ValueError(f"alpha must be in (0, 1] and prior_weight > 0, got {alpha!r}, {prior_weight!r}")
        if bins_per_token < 1 or explore < 1 or conf_bins < 1 or not (0 <= prior_accepted <= k):
            raise ValueError("bins_per_token, explore and conf_bins must be >= 1, prior_accepted in [0, k]")
        self.scored, self.k, self.alpha, self.w0 = list(scored), k, alpha, prior_weight
        self.bins_per_token, self.explore = bins_per_token, explore
        if not 0 <= forget < 1:
            raise ValueError(f"forget must be in [0, 1), got {forget!r}")
        self.forget = forget
        self.rng = random.Random(seed)  # unused: the rule is deterministic
        n_bins = k * bins_per_token + 1
        self.bin_sum = [[0.0] * n_bins for _ in scored]  # scored arms: accepted drafts summed per score bin
        self.bin_count = [[0.0] * n_bins for _ in scored]
        self.accepted = [prior_accepted] * self.n_arms  # model arms: moving average of accepted drafts per cycle
        self.conf_bins = conf_bins
        self.conf_sum = [[0.0] * conf_bins for _ in scored]  # model arms: accepted drafts summed per confidence bin
        self.conf_count = [[0] * conf_bins for _ in scored]
        self.last_scores: list[float | None] = [None] * self.n_arms  # the scores of the last select
        self.cost: list[float | None] = [None] * self.n_arms  # model arms: moving average of seconds per cycle
        self.free_cost: list[float | None] = [None] * (k + 1)  # scored arms: the same by drafted tokens 0..k
        self.played = [0] * self.n_arms
        self.idle = [0] * self.n_arms  # cycles since the arm last drafted
        self.last_values: list[float] = [0.0] * self.n_arms

    def _bin(self, score: float) -> int:
        return min(max(int(score * self.bins_per_token), 0), self.k * self.bins_per_token)

    def expected(self, arm: int, score: float | None) -> float:
        """Expected accepted drafts of `arm` this cycle (its calibrated score, or its model estimate)."""
        if not self.scored[arm]:
            if score is None:
                return self.accepted[arm]
            b = self._conf_bin(score)
            # rule: the confidence bin's mean outcome, the arm's moving average as a prior of weight w0
            return (self.conf_sum[arm][b] + self.w0 * self.accepted[arm]) / (self.conf_count[arm][b] + self.w0)
        s = min(max(float(score or 0.0), 0.0), float(self.k))
        b = self._bin(s)
        # rule: the bin's mean outcome, the score itself as a prior of weight w0
        return (self.bin_sum[arm][b] + self.w0 * s) / (self.bin_count[arm][b] + self.w0)

    def _cost(self, arm: int, length: int) -> float:
        if not self.scored[arm] and self.cost[arm] is not None:
            return self.cost[arm]
        if self.scored[arm]:
            known = [(abs(n - length), c) for n, c in enumerate(self.free_cost) if c is not None]
            if known:
                return min(known)[1]  # rule: this length's cost, else the nearest measured length's
        measured = [c for c in self.cost + self.free_cost if c is not None]
        return sum(measured) / len(measured) if measured else 1.0

    def _conf_bin(self, c: float) -> int:
        return min(max(int(float(c) * self.conf_bins), 0), self.conf_bins - 1)

    def _length(self, n: int | None) -> int:
        return self.k if n is None else min(max(int(n), 0), self.k)

    def select(self, scores: list[float | None], lengths: list[int | None] | None = None) -> int:
        """scores: this cycle's score of each scored arm and confidence of each model arm (None: none read);
        lengths: each scored arm's proposal length (default k) -> the arm to play."""
        if len(scores) != self.n_arms or (lengths is not None and len(lengths) != self.n_arms):
            raise ValueError(f"{len(scores)} scores for {self.n_arms} arms")
        self.last_scores = list(scores)
        for i in range(self.n_arms):  # rule: a model arm that never drafted, or not for `explore` cycles, drafts
            if not self.scored[i] and (self.played[i] == 0 or self.idle[i] >= self.explore):
                return i
        lens = [self._length(n) for n in (lengths or [None] * self.n_arms)]
        # rule: the most tokens per second, (expected accepted + 1) / seconds per cycle
        self.last_values = [(self.expected(i, scores[i]) + 1.0) / self._cost(i, lens[i]) for i in range(self.n_arms)]
        return max(range(self.n_arms), key=self.last_values.__getitem__)

    def leading_model_arm(self) -> int | None:
        """The model arm with the most tokens per second by its moving averages (None without model arms): the one
        whose confidence is worth reading this cycle."""
        arms = [i for i in range(self.n_arms) if not self.scored[i]]
        return max(arms, key=lambda i: (self.accepted[i] + 1.0) / self._cost(i, self.k)) if arms else None

    def worth_reading(self, arm: int, scores: list[float | None], lengths: list[int | None] | None = None) -> bool:
        """Whether model arm `arm`'s confidence could change this cycle's choice: its best calibrated value over every
        confidence bin beats the best value of the other arms as they stand (a head synced only to lose costs a
        forward for nothing)."""
        lens = [self._length(n) for n in (lengths or [None] * self.n_arms)]
        others = [(self.expected(i, scores[i]) + 1.0) / self._cost(i, lens[i]) for i in range(self.n_arms) if i != arm]
        best = max(self.expected(arm, (b + 0.5) / self.conf_bins) for b in range(self.conf_bins))
        return not others or (best + 1.0) / self._cost(arm, self.k) > max(others)

    def observe_score(self, arm: int, score: float, accepted: int) -> None:
        """A scored arm's proposal of this score had its first `accepted` drafts confirmed (played or not)."""
        if not self.scored[arm]:
            raise ValueError(f"arm {arm} is not scored")
        b = self._bin(min(max(float(score), 0.0), float(self.k)))
        if self.forget:  # rule: older outcomes fade (the stream moves on to other text), each bin alike
            keep = 1.0 - self.forget
            self.bin_sum[arm] = [x * keep for x in self.bin_sum[arm]]
            self.bin_count[arm] = [x * keep for x in self.bin_count[arm]]
        self.bin_sum[arm][b] += min(max(accepted, 0), self.k)
        self.bin_count[arm][b] += 1

    def update(self, arm: int, accepted: int, seconds: float, length: int | None = None) -> None:
        """The played arm's cycle: its accepted drafts (model arms learn them; scored arms through observe_score),
        the cycle's seconds and (scored arms) how many tokens it drafted (default k)."""
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"arm {arm} out of range for {self.n_arms} arms")
        if not (seconds >= 0 and math.isfinite(seconds)):
            raise ValueError(f"seconds must be finite and >= 0, got {seconds!r}")
        a = self.alpha
        if not self.scored[arm]:  # rule: moving average of accepted drafts per cycle it drafted, from the prior
            self.accepted[arm] = (1 - a) * self.accepted[arm] + a * accepted
            if self.last_scores[arm] is not None:  # rule: and the bin of the confidence it drafted with
                b = self._conf_bin(self.last_scores[arm])
                self.conf_sum[arm][b] += min(max(accepted, 0), self.k)
                self.conf_count[arm][b] += 1
        table, key = (self.free_cost, self._length(length)) if self.scored[arm] else (self.cost, arm)
        c = table[key]  # rule: moving average of its cycles' seconds (scored arms: by drafted length)
        table[key] = seconds if c is None else (1 - a) * c + a * seconds
        self.played[arm] += 1
        for i in range(self.n_arms):
            self.idle[i] = 0 if i == arm else self.idle[i] + 1
