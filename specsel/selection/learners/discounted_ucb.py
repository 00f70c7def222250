"""Discounted UCB (Kocsis & Szepesvari 2006; MetaSD App. H.2 Alg. 6) for drifting drafter quality.

    every round:  S_i *= discount, n_i *= discount  for all arms;  then S_a += r, n_a += 1 for the played arm
    a_t = argmax_i  S_i / n_i + beta * sqrt(2 ln(sum_j n_j) / n_i)      (ties -> lowest index)
    arms never played (or whose discounted count underflowed to 0) are played first, lowest index first

Defaults: beta = 0.01 (MetaSD's UCB setting), discount = 0.99 (effective memory 1 / (1 - discount) = 100 rounds).
A small beta still re-explores: an unplayed arm's n_i decays geometrically, so its bonus grows until it is tried.
"""

from __future__ import annotations

import math
import random

from specsel.selection.learners.checks import check_n_arms, checked_reward


class DiscountedUCB:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, beta: float = 0.01, discount: float = 0.99):
        if not (beta >= 0 and math.isfinite(beta)):
            raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
        if not 0 < discount <= 1:
            raise ValueError(f"discount must be in (0, 1], got {discount!r}")
        self.n_arms = check_n_arms(n_arms)
        self.beta = beta
        self.discount = discount
        self.rng = random.Random(seed)  # unused: D-UCB is deterministic
        self.sums = [0.0] * self.n_arms
        self.counts = [0.0] * self.n_arms

    def select(self) -> int:
        for i, n in enumerate(self.counts):
            if n <= 0.0:
                return i  # rule: unplayed arms first
        log_total = math.log(max(1.0, sum(self.counts)))
        # rule: argmax of discounted mean + beta sqrt(2 ln(sum n) / n_i); ties -> lowest index
        index = [s / n + self.beta * math.sqrt(2.0 * log_total / n) for s, n in zip(self.sums, self.counts)]
        return max(range(self.n_arms), key=index.__getitem__)

    def update(self, arm: int, reward: float) -> None:
        reward = checked_reward(arm, reward, self.n_arms)
        # rule: discount every arm's reward sum and count
        self.sums = [s * self.discount for s in self.sums]
        self.counts = [n * self.discount for n in self.counts]
        # rule: add this round's observation to the played arm
        self.sums[arm] += reward
        self.counts[arm] += 1.0
