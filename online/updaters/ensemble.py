"""Hedge ensemble over learning rates (OnlineSpec Sec. 3.3, App. B.6): N base learners (OGD with geometrically spaced
rates) all updated every round; meta weights p_i proportional to exp(-eps * cumulative loss of base i); the served
weights are the p-weighted combination sum_i p_i w_i.

Paper defaults for EAGLE-3 heads: rates 1e-4, 2e-4, 4e-4 (three learners, ratio 2), Adam (0.9, 0.95), gradient
clipping 0.5. Hedge's rate only means something for losses of a known range: a raw round loss (an EAGLE-3 TTT loss
is ~15) with eps = 10 puts all weight on one learner within a few rounds. Here each round's losses are divided by
the largest base loss seen so far (so every meta loss is in [0, 1]) and the meta rate is the anytime
eps_t = sqrt(8 ln N / t) of Hedge's regret bound for [0, 1] losses, unless a fixed eps is given.
"""

from __future__ import annotations

import math

import torch

from online.updaters.ogd import OGD, LossFn, Params


def geometric_rates(base: float, n: int, ratio: float = 2.0) -> list[float]:
    return [base * ratio**i for i in range(n)]


def anytime_eps(n: int, t: int) -> float:
    """Hedge's rate for N experts and [0, 1] losses after t rounds: sqrt(8 ln N / t)."""
    return math.sqrt(8.0 * math.log(n) / max(1, t))


def hedge_weights(cum_losses: list[float], eps: float) -> list[float]:
    """p_i proportional to exp(-eps * L_i), computed shifted by the minimum for stability."""
    low = min(cum_losses)
    w = [math.exp(-eps * (x - low)) for x in cum_losses]
    total = sum(w)
    return [x / total for x in w]


def combine(bases: list[Params], p: list[float]) -> Params:
    """sum_i p_i w_i, tensor by tensor."""
    return {k: sum(pi * b[k] for pi, b in zip(p, bases)) for k in bases[0]}


class HedgeEnsemble:
    def __init__(self, params: Params, rates: list[float] | None = None, eps: float | None = None,
                 optimizer: str = "adam", clip: float = 0.5):
        """eps: fixed meta rate on the scaled losses; None (or 0): the anytime rate sqrt(8 ln N / t)."""
        rates = rates or geometric_rates(1e-4, 3)
        if len(rates) < 2 or (eps is not None and eps < 0):
            raise ValueError(f"an ensemble needs >= 2 rates and eps >= 0, got {rates} and {eps}")
        self.bases = [OGD(params, lr, optimizer, clip=clip) for lr in rates]
        self.rates, self.eps = list(rates), eps or None
        self.cum = [0.0] * len(rates)  # cumulative scaled losses
        self.scale = 0.0  # largest base round loss seen
        self.rounds = 0

    @property
    def meta_rate(self) -> float:
        return self.eps if self.eps is not None else anytime_eps(len(self.bases), self.rounds)

    @property
    def p(self) -> list[float]:
        return hedge_weights(self.cum, self.meta_rate)

    def step(self, loss_fn: LossFn, epochs: int = 1) -> float:
        """Every base learner takes f_t at its own weights (that first loss, scaled, feeds the meta weights) and
        `epochs` OGD updates on it. Returns f_t at the served (combined) weights before the update."""
        with torch.no_grad():
            served = float(loss_fn(self.served()))
        losses = [b.step(loss_fn, epochs) for b in self.bases]
        self.scale = max(self.scale, *(abs(x) for x in losses))
        for i, x in enumerate(losses):
            self.cum[i] += x / self.scale if self.scale > 0 else 0.0  # rule: meta losses in [0, 1]
        self.rounds += 1
        return served

    def served(self) -> Params:
        return combine([b.served() for b in self.bases], self.p)

    def remap(self, key: str, index: torch.Tensor, fill: torch.Tensor) -> None:
        for b in self.bases:
            b.remap(key, index, fill)

    def state(self) -> dict:
        return {"bases": [b.state() for b in self.bases], "cum": list(self.cum), "scale": self.scale,
                "rounds": self.rounds}

    def load_state(self, state: dict) -> None:
        for b, s in zip(self.bases, state["bases"]):
            b.load_state(s)
        self.cum, self.rounds = list(state["cum"]), state["rounds"]
        self.scale = state.get("scale", 0.0)
