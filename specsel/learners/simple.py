"""Reference policies: Uniform (random drafter each round) and Fixed (always one drafter).

Fixed serves both as "single drafter" and as the oracle best-in-hindsight, whose arm the caller computes after the
fact. Both use the bandit interface and ignore feedback (after validating it). Defaults: Fixed arm = 0.
"""

from __future__ import annotations

import numbers
import random


def _check(n_arms: int, arm: int, reward: float) -> None:
    if not isinstance(arm, numbers.Integral) or not 0 <= arm < n_arms:
        raise ValueError(f"arm must be an integer in [0, {n_arms}), got {arm!r}")
    if not -1e-9 <= reward <= 1 + 1e-9:
        raise ValueError(f"reward must be in [0, 1], got {reward!r}")


class Uniform:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0):
        if not isinstance(n_arms, numbers.Integral) or n_arms < 1:
            raise ValueError(f"n_arms must be an integer >= 1, got {n_arms!r}")
        self.n_arms = int(n_arms)
        self.rng = random.Random(seed)

    def probs(self) -> list[float]:
        return [1.0 / self.n_arms] * self.n_arms

    def select(self) -> int:
        return self.rng.randrange(self.n_arms)

    def update(self, arm: int, reward: float) -> None:
        _check(self.n_arms, arm, reward)  # rule: feedback is ignored


class Fixed:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, arm: int = 0):
        if not isinstance(n_arms, numbers.Integral) or n_arms < 1:
            raise ValueError(f"n_arms must be an integer >= 1, got {n_arms!r}")
        if not isinstance(arm, numbers.Integral) or not 0 <= arm < n_arms:
            raise ValueError(f"arm must be an integer in [0, {n_arms}), got {arm!r}")
        self.n_arms = int(n_arms)
        self.arm = int(arm)
        self.rng = random.Random(seed)  # unused

    def select(self) -> int:
        return self.arm

    def update(self, arm: int, reward: float) -> None:
        _check(self.n_arms, arm, reward)  # rule: feedback is ignored
