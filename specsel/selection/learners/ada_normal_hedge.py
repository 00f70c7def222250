"""AdaNormalHedge (Luo & Schapire, "Achieving All with No Parameters: AdaNormalHedge", COLT 2015).

"HedgeSpec w/ AdaNormalHedge" in the HedgeSpec paper (App. D.6). No hyperparameters; uniform prior over arms.

    r_i = p.l - l_i            (instantaneous regret to arm i)
    R_i += r_i,  C_i += |r_i|
    Phi(R, C) = exp([R]_+^2 / (3C))
    w(R, C)   = (Phi(R + 1, C + 1) - Phi(R - 1, C + 1)) / 2
    p_i  ∝  prior_i * w(R_i, C_i)          (uniform when every weight is 0)

Computed in log space: log w = a + log(1 - exp(b - a)) - log 2 with a = [R+1]_+^2 / (3(C+1)) >= b = [R-1]_+^2 /
(3(C+1)), then shifted by the largest log weight, so long runs (C ~ T) never overflow. At round 1 (R = C = 0) every
weight is (e^(1/3) - 1)/2, i.e. uniform.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from specsel.selection.learners.checks import check_n_arms, checked_losses


def log_weight(r: float, c: float) -> float:
    """log w(R, C), -inf when w = 0 (R <= -1)."""
    a = max(0.0, r + 1.0) ** 2 / (3.0 * (c + 1.0))
    b = max(0.0, r - 1.0) ** 2 / (3.0 * (c + 1.0))
    if a <= b:
        return -math.inf
    return a + math.log(-math.expm1(b - a)) - math.log(2.0)


class AdaNormalHedge:
    full_information = True

    def __init__(self, n_arms: int, seed: int = 0):
        self.n_arms = check_n_arms(n_arms)
        self.rng = random.Random(seed)
        self.regrets = [0.0] * self.n_arms  # R_i
        self.abs_regrets = [0.0] * self.n_arms  # C_i
        self._p = [1.0 / self.n_arms] * self.n_arms

    def probs(self) -> list[float]:
        return list(self._p)

    def select(self) -> int:
        return self.rng.choices(range(self.n_arms), weights=self._p)[0]

    def update(self, losses: Sequence[float]) -> None:
        losses = checked_losses(losses, self.n_arms)
        # rule: r_i = p.l - l_i
        mixed = sum(p * x for p, x in zip(self._p, losses))
        inst = [mixed - x for x in losses]
        # rule: R_i += r_i, C_i += |r_i|
        self.regrets = [r + d for r, d in zip(self.regrets, inst)]
        self.abs_regrets = [c + abs(d) for c, d in zip(self.abs_regrets, inst)]
        # rule: p_i ∝ w(R_i, C_i) (uniform prior), uniform if all weights are 0
        logw = [log_weight(r, c) for r, c in zip(self.regrets, self.abs_regrets)]
        top = max(logw)
        if top == -math.inf:
            self._p = [1.0 / self.n_arms] * self.n_arms
            return
        w = [math.exp(v - top) for v in logw]
        s = sum(w)
        self._p = [x / s for x in w]
