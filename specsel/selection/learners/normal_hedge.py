"""NormalHedge: parameter-free Hedge (Chaudhuri, Freund & Hsu, NeurIPS 2009).

The HedgeSpec default learner, exactly as in the HedgeSpec paper's Figure 7 (App. D.6):

    R_i += p.l - l_i                                        (cumulative regret to arm i)
    find c > 0 with (1/N) sum_i exp([R_i]_+^2 / (2c)) = e
    p_i  ∝  ([R_i]_+ / c) exp([R_i]_+^2 / (2c))

No hyperparameters. c is found by bisection on log c inside a bracket that is checked before use: with
x_i = [R_i]_+^2 / 2 and m = max x_i, c = m gives a mean <= e and c = m / (1 + ln N) a mean >= e (the bracket is
widened by doubling/halving if rounding ever breaks that), then 200 halvings or a relative width of 1e-13. All sums
are log-sum-exp, and x_i / c <= 1 + ln N at the root, so nothing overflows. When exactly one regret is positive the
root has the closed form c = x / ln(N(e - 1) + 1), used directly.

Where the equation has no root -- round 1, and whenever every regret is <= 0 -- all weights are 0; we then play
uniform weights over all arms (our choice; the paper leaves it undefined).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from specsel.selection.learners.checks import check_n_arms, checked_losses


class NormalHedge:
    full_information = True

    def __init__(self, n_arms: int, seed: int = 0):
        self.n_arms = check_n_arms(n_arms)
        self.rng = random.Random(seed)
        self.regrets = [0.0] * self.n_arms
        self.c: float | None = None  # c_t of the last update; None while no regret is positive
        self._p = [1.0 / self.n_arms] * self.n_arms

    def probs(self) -> list[float]:
        return list(self._p)

    def select(self) -> int:
        return self.rng.choices(range(self.n_arms), weights=self._p)[0]

    def update(self, losses: Sequence[float]) -> None:
        losses = checked_losses(losses, self.n_arms)
        # rule: learner's loss p.l, then R_i += p.l - l_i
        mixed = sum(p * x for p, x in zip(self._p, losses))
        self.regrets = [r + mixed - x for r, x in zip(self.regrets, losses)]
        pos = [max(0.0, r) for r in self.regrets]
        xs = [0.5 * r * r for r in pos]
        if max(xs) == 0.0:
            # rule: no positive regret -> no root, all weights 0 -> uniform
            self.c = None
            self._p = [1.0 / self.n_arms] * self.n_arms
            return
        # rule: c_t solves (1/N) sum exp([R]_+^2 / 2c) = e
        self.c = solve_c(xs)
        # rule: p_i ∝ ([R_i]_+ / c) exp([R_i]_+^2 / 2c), computed as logs shifted by their max
        logw = [math.log(r / self.c) + 0.5 * r * r / self.c if r > 0 else -math.inf for r in pos]
        top = max(logw)
        w = [math.exp(v - top) for v in logw]
        s = sum(w)
        self._p = [x / s for x in w]


def _excess(xs: Sequence[float], c: float) -> float:
    """log((1/N) sum exp(x_i / c)) - 1: > 0 when c is too small, < 0 when too large."""
    top = max(xs) / c
    return top + math.log(sum(math.exp(x / c - top) for x in xs)) - math.log(len(xs)) - 1.0


def solve_c(xs: Sequence[float]) -> float:
    """The c > 0 with (1/N) sum_i exp(x_i / c) = e, for x_i >= 0 with max x_i > 0 (x_i = [R_i]_+^2 / 2)."""
    n = len(xs)
    m = max(xs)
    if sum(1 for x in xs if x > 0) == 1:
        # one term: exp(m / c) + (N - 1) = N e
        return m / math.log(n * (math.e - 1.0) + 1.0)
    lo, hi = m / (1.0 + math.log(n)), m
    while _excess(xs, hi) > 0:  # mean <= e at hi (holds analytically; guards rounding)
        hi *= 2.0
    while _excess(xs, lo) < 0:  # mean >= e at lo
        lo *= 0.5
    for _ in range(200):
        if hi - lo <= 1e-13 * hi:
            break
        mid = math.sqrt(lo * hi)  # bisection on log c
        if _excess(xs, mid) > 0:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)
