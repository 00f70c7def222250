"""Sequential Halving (Karnin, Koren & Somekh, ICML 2013; MetaSD App. H.1 Alg. 5), run as an online policy.

Over the first `budget` rounds, in ceil(log2 N) phases:

    n_r = max(1, floor(budget / (|S_r| * ceil(log2 N))))     (pulls per surviving arm in phase r)
    pull every arm of S_r n_r times, round robin in index order
    S_{r+1} = the ceil(|S_r| / 2) arms of S_r with the best mean reward in phase r (ties -> lower index)

After the last phase the single survivor is played forever. If the budget runs out mid-phase (small budgets, where
the max(1, .) rounds up), the survivor is the surviving arm with the best mean over all its exploration pulls so far.

Default budget = 64. MetaSD (App. F) sets SH's period to 1, "ensuring frequent elimination"; we read the period as
rounds per pull, so here every round is one pull. During exploration update() must report the scheduled arm.
"""

from __future__ import annotations

import math
import numbers
import random

from specsel.selection.learners.checks import check_n_arms, checked_reward


class SequentialHalving:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, budget: int = 64):
        if not isinstance(budget, numbers.Integral) or budget < 1:
            raise ValueError(f"budget must be an integer >= 1, got {budget!r}")
        self.n_arms = check_n_arms(n_arms)
        self.budget = int(budget)
        self.rng = random.Random(seed)  # unused: SH is deterministic
        self.n_phases = math.ceil(math.log2(self.n_arms)) if self.n_arms > 1 else 0
        self.survivors = list(range(self.n_arms))
        self.pulls = 0  # exploration pulls so far
        self.total_sum = [0.0] * self.n_arms  # all exploration rewards per arm
        self.total_n = [0] * self.n_arms
        self.best: int | None = 0 if self.n_arms == 1 else None  # the committed arm once exploration ends
        self._phase = 0
        self._schedule: list[int] = []
        self._phase_sum = [0.0] * self.n_arms
        if self.best is None:
            self._start_phase()

    def _start_phase(self) -> None:
        n_r = max(1, self.budget // (len(self.survivors) * self.n_phases))
        # rule: every survivor n_r times, round robin
        self._schedule = [a for _ in range(n_r) for a in self.survivors]
        self._schedule.reverse()  # pop() from the end
        self._phase_sum = [0.0] * self.n_arms

    def select(self) -> int:
        return self.best if self.best is not None else self._schedule[-1]

    def update(self, arm: int, reward: float) -> None:
        reward = checked_reward(arm, reward, self.n_arms)
        if self.best is not None:
            return  # committed: nothing left to learn
        if arm != self._schedule[-1]:
            raise ValueError(f"sequential halving scheduled arm {self._schedule[-1]}, got feedback for arm {arm}")
        self._schedule.pop()
        self._phase_sum[arm] += reward
        self.total_sum[arm] += reward
        self.total_n[arm] += 1
        self.pulls += 1
        if not self._schedule:
            # rule: keep the better half by phase mean (equal pulls per arm, so by phase sum); ties -> lower index
            ranked = sorted(self.survivors, key=lambda a: (-self._phase_sum[a], a))
            self.survivors = sorted(ranked[: math.ceil(len(ranked) / 2)])
            self._phase += 1
            if len(self.survivors) == 1:
                self.best = self.survivors[0]
            elif self.pulls < self.budget:
                self._start_phase()
        if self.best is None and self.pulls >= self.budget:
            # rule: budget spent mid-way -> best mean so far among the survivors
            seen = [a for a in self.survivors if self.total_n[a] > 0]
            self.best = max(seen, key=lambda a: (self.total_sum[a] / self.total_n[a], -a))
