"""MetaSD-EXP3 (Kim et al., MetaSD, App. H.3 Alg. 7; EXP3 of Auer et al. 2002).

    p_i = (1 - gamma) w_i / sum_j w_j + gamma / N
    rhat_a = r / p_a for the played arm a (0 for the others)      (importance-weighted reward)
    w_a *= exp(gamma * rhat_a / N)

Default gamma = 0.4, MetaSD's setting (App. F). Weights are kept as log w and shifted by their max before
exponentiating, so they never overflow. p is the distribution of the select() before the update (recomputed if
update() comes without a select()).
"""

from __future__ import annotations

import math
import random

from specsel.selection.learners.checks import check_n_arms, checked_reward


class EXP3:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, gamma: float = 0.4):
        if not 0 < gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
        self.n_arms = check_n_arms(n_arms)
        self.gamma = gamma
        self.rng = random.Random(seed)
        self.log_w = [0.0] * self.n_arms
        self._played: list[float] | None = None  # probs of the last select()

    def probs(self) -> list[float]:
        top = max(self.log_w)
        w = [math.exp(v - top) for v in self.log_w]
        s = sum(w)
        # rule: mix the normalised weights with gamma-uniform exploration
        return [(1.0 - self.gamma) * x / s + self.gamma / self.n_arms for x in w]

    def select(self) -> int:
        self._played = self.probs()
        return self.rng.choices(range(self.n_arms), weights=self._played)[0]

    def update(self, arm: int, reward: float) -> None:
        reward = checked_reward(arm, reward, self.n_arms)
        p = self._played if self._played is not None else self.probs()
        self._played = None
        # rule: rhat = r / p_a for the played arm only
        rhat = reward / p[arm]
        # rule: log w_a += gamma * rhat / N
        self.log_w[arm] += self.gamma * rhat / self.n_arms
