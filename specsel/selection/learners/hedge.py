"""Hedge (exponential weights) over a full loss vector per round.

Source: Freund & Schapire 1997; anytime rate from Cesa-Bianchi & Lugosi, "Prediction, Learning, and Games" (2006),
Thm 2.3. It is "HedgeSpec w/ Standard Hedge" in the HedgeSpec paper (App. D.6).

    p_i  ∝  exp(-eta * L_i),   L_i = cumulative loss of arm i

Defaults: eta=None, horizon=None -> anytime rate eta_t = sqrt(8 ln N / t), t = rounds seen so far + 1, with regret
<= 2 sqrt(T ln N / 2) + sqrt(ln N / 8) (Thm 2.3); horizon=T (eta None) -> fixed eta = sqrt(8 ln N / T), regret
<= sqrt(T ln N / 2) (Thm 2.2); an explicit eta is used as is.
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Sequence

from specsel.selection.learners.checks import check_n_arms, checked_losses


class Hedge:
    full_information = True

    def __init__(self, n_arms: int, seed: int = 0, eta: float | None = None, horizon: int | None = None):
        if eta is not None and not (eta > 0 and math.isfinite(eta)):
            raise ValueError(f"eta must be a finite number > 0, got {eta!r}")
        if horizon is not None and (not isinstance(horizon, numbers.Integral) or horizon < 1):
            raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
        self.n_arms = check_n_arms(n_arms)
        self.eta = eta
        self.horizon = horizon
        self.rng = random.Random(seed)
        self.cum_loss = [0.0] * self.n_arms
        self.t = 0  # rounds seen

    def current_eta(self) -> float:
        if self.eta is not None:
            return self.eta
        rounds = self.horizon if self.horizon is not None else self.t + 1
        return math.sqrt(8.0 * math.log(self.n_arms) / rounds)

    def probs(self) -> list[float]:
        eta = self.current_eta()
        low = min(self.cum_loss)
        # rule: weights exp(-eta L_i), shifted by the smallest L so the largest weight is exactly 1 (no over/underflow)
        w = [math.exp(-eta * (x - low)) for x in self.cum_loss]
        s = sum(w)
        return [x / s for x in w]

    def select(self) -> int:
        return self.rng.choices(range(self.n_arms), weights=self.probs())[0]

    def update(self, losses: Sequence[float]) -> None:
        losses = checked_losses(losses, self.n_arms)
        # rule: L_i += l_i (clipped into [0, 1])
        self.cum_loss = [c + x for c, x in zip(self.cum_loss, losses)]
        self.t += 1
