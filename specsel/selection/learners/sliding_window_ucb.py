"""Sliding-window UCB (Garivier & Moulines 2011; MetaSD App. H.2 Alg. 8) for drifting drafter quality.

    keep the last `window` rounds (arm, reward) in a deque; n_i, S_i = count and reward sum of arm i in it
    arms with no play inside the window are played first, lowest index first
    a_t = argmax_i  S_i / n_i + beta * sqrt(2 ln t / n_i)     (t = total plays so far, as in MetaSD Alg. 8;
                                                              ties -> lowest index)

Defaults: beta = 0.01 (MetaSD's UCB setting), window = 32. Forced plays of arms that fell out of the window cost
about (N - 1) rounds per `window` rounds.
"""

from __future__ import annotations

import math
import numbers
import random
from collections import deque

from specsel.selection.learners.checks import check_n_arms, checked_reward


class SlidingWindowUCB:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, beta: float = 0.01, window: int = 32):
        if not (beta >= 0 and math.isfinite(beta)):
            raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
        if not isinstance(window, numbers.Integral) or window < 1:
            raise ValueError(f"window must be an integer >= 1, got {window!r}")
        self.n_arms = check_n_arms(n_arms)
        self.beta = beta
        self.window = int(window)
        self.rng = random.Random(seed)  # unused: SW-UCB is deterministic
        self.history: deque[tuple[int, float]] = deque()
        self.sums = [0.0] * self.n_arms
        self.counts = [0] * self.n_arms
        self.t = 0  # total plays

    def select(self) -> int:
        for i, n in enumerate(self.counts):
            if n == 0:
                return i  # rule: arms absent from the window first
        log_t = math.log(self.t)
        # rule: argmax of window mean + beta sqrt(2 ln t / n_i); ties -> lowest index
        index = [s / n + self.beta * math.sqrt(2.0 * log_t / n) for s, n in zip(self.sums, self.counts)]
        return max(range(self.n_arms), key=index.__getitem__)

    def update(self, arm: int, reward: float) -> None:
        reward = checked_reward(arm, reward, self.n_arms)
        # rule: push the new round into the window
        self.history.append((int(arm), reward))
        self.sums[arm] += reward
        self.counts[arm] += 1
        self.t += 1
        # rule: drop the round that fell out of the window
        if len(self.history) > self.window:
            old_arm, old_reward = self.history.popleft()
            self.sums[old_arm] -= old_reward
            self.counts[old_arm] -= 1
            if self.counts[old_arm] == 0:
                self.sums[old_arm] = 0.0  # no float drift carried into the next visit
