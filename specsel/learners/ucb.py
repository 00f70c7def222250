"""MetaSD-UCB (Kim et al., MetaSD, Sec. 3 Alg. 2; UCB1 of Auer et al. 2002 with an exploration scale beta).

    play each arm once (lowest index first), then
    a_t = argmax_i  mu_i + beta * sqrt(2 ln t / n_i)      (t = total plays so far; ties -> lowest index)
    mu_a <- (mu_a * n_a + r) / (n_a + 1),  n_a += 1       (running mean of the played arm)

Default beta = 0.01, MetaSD's setting (App. F); beta = 1 is plain UCB1. With rewards in [0, 1], beta = 0.01 is
close to greedy: the bonus only matters between near-equal means.
"""

from __future__ import annotations

import math
import numbers
import random


class UCB:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, beta: float = 0.01):
        if not isinstance(n_arms, numbers.Integral) or n_arms < 1:
            raise ValueError(f"n_arms must be an integer >= 1, got {n_arms!r}")
        if not (beta >= 0 and math.isfinite(beta)):
            raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
        self.n_arms = int(n_arms)
        self.beta = beta
        self.rng = random.Random(seed)  # unused: UCB is deterministic
        self.means = [0.0] * self.n_arms
        self.counts = [0] * self.n_arms
        self.t = 0  # total plays

    def select(self) -> int:
        for i, n in enumerate(self.counts):
            if n == 0:
                return i  # rule: each arm once first
        log_t = math.log(self.t)
        # rule: argmax of mean + beta sqrt(2 ln t / n); max() keeps the first (lowest) index on ties
        index = [m + self.beta * math.sqrt(2.0 * log_t / n) for m, n in zip(self.means, self.counts)]
        return max(range(self.n_arms), key=index.__getitem__)

    def update(self, arm: int, reward: float) -> None:
        if not isinstance(arm, numbers.Integral) or not 0 <= arm < self.n_arms:
            raise ValueError(f"arm must be an integer in [0, {self.n_arms}), got {arm!r}")
        if not -1e-9 <= reward <= 1 + 1e-9:
            raise ValueError(f"reward must be in [0, 1], got {reward!r}")
        reward = min(1.0, max(0.0, reward))
        # rule: running mean of the played arm
        self.means[arm] = (self.means[arm] * self.counts[arm] + reward) / (self.counts[arm] + 1)
        self.counts[arm] += 1
        self.t += 1
