"""MetaSD-UCB (Kim et al., MetaSD, Sec. 3 Alg. 2; UCB1 of Auer et al. 2002 with an exploration scale beta).

    play each arm once (lowest index first), then
    a_t = argmax_i  mu_i + beta * sqrt(2 ln t / n_i)      (t = total plays so far; ties -> lowest index)
    mu_a <- (mu_a * n_a + r) / (n_a + 1),  n_a += 1       (running mean of the played arm)

Default beta = 0.01, MetaSD's setting (App. F); beta = 1 is plain UCB1. With rewards in [0, 1], beta = 0.01 is
close to greedy: the bonus only matters between near-equal means.
"""

from __future__ import annotations

import math
import random

from specsel.selection.learners.checks import check_n_arms, checked_reward


class UCB:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, beta: float = 0.01):
        if not (beta >= 0 and math.isfinite(beta)):
            raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
        self.n_arms = check_n_arms(n_arms)
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
        reward = checked_reward(arm, reward, self.n_arms)
        # rule: running mean of the played arm
        self.means[arm] = (self.means[arm] * self.counts[arm] + reward) / (self.counts[arm] + 1)
        self.counts[arm] += 1
        self.t += 1
