"""Reference policies: Uniform (random drafter each round) and Fixed (always one drafter).

Fixed serves both as "single drafter" and as the oracle best-in-hindsight, whose arm the caller computes after the
fact. Both use the bandit interface and ignore feedback (after validating it). Defaults: Fixed arm = 0.
"""

from __future__ import annotations

import random

from specsel.selection.learners.checks import check_arm, check_n_arms, checked_reward


class Uniform:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0):
        self.n_arms = check_n_arms(n_arms)
        self.rng = random.Random(seed)

    def probs(self) -> list[float]:
        return [1.0 / self.n_arms] * self.n_arms

    def select(self) -> int:
        return self.rng.randrange(self.n_arms)

    def update(self, arm: int, reward: float) -> None:
        checked_reward(arm, reward, self.n_arms)  # rule: feedback is ignored


class Fixed:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, arm: int = 0):
        self.n_arms = check_n_arms(n_arms)
        self.arm = check_arm(arm, self.n_arms)
        self.rng = random.Random(seed)  # unused

    def probs(self) -> list[float]:
        return [1.0 if i == self.arm else 0.0 for i in range(self.n_arms)]

    def select(self) -> int:
        return self.arm

    def update(self, arm: int, reward: float) -> None:
        checked_reward(arm, reward, self.n_arms)  # rule: feedback is ignored
