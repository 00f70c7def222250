"""EXP3Spec (Hou et al., "BanditSpec: Adaptive Speculative Decoding via Bandit Algorithms", ICML 2025, Alg. 5 / 9).

A HedgeSpec baseline: anytime EXP3 on losses, no forced exploration. Source read: the arXiv v2 HTML text of the
paper (arXiv:2505.15141), Alg. 5, eq. (13)-(14) and Alg. 9; the public code (github.com/sail-sg/BanditSpec) has no
EXP3Spec.

    eta_t = sqrt(ln N / (t N))                      (t = this round's index, plays so far + 1)
    p_i   ∝ exp(-eta_t * Zsum_i)                     (Zsum_i = sum of past loss estimates of arm i)
    Zhat_a = (1 - r) / p_a for the played arm a, 0 for the others   (importance-weighted loss)

The paper's loss is (L + 1 - Y) / (L p_a) for an accepted length Y in [1, L + 1], i.e. 1 - r with the normalised
reward r = (Y - 1) / L. The caller passes r in [0, 1] (with r = Y / (L + 1) the loss is (L + 1 - Y) / (L + 1), the
paper's loss times L / (L + 1), which only rescales eta). No hyperparameters beyond N.
p is the distribution of the select() before the update (recomputed if update() comes without a select()).
"""

from __future__ import annotations

import math
import random

from specsel.selection.learners.checks import check_n_arms, checked_reward


class EXP3Spec:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0):
        self.n_arms = check_n_arms(n_arms)
        self.rng = random.Random(seed)
        self.loss_sums = [0.0] * self.n_arms  # Zsum_i
        self.t = 0  # plays so far
        self._played: list[float] | None = None  # probs of the last select()

    def probs(self) -> list[float]:
        # rule: anytime rate eta_t = sqrt(ln N / (t N))
        eta = math.sqrt(math.log(self.n_arms) / ((self.t + 1) * self.n_arms))
        low = min(self.loss_sums)
        # rule: p ∝ exp(-eta Zsum), shifted by the smallest Zsum so the largest weight is 1
        w = [math.exp(-eta * (z - low)) for z in self.loss_sums]
        s = sum(w)
        return [x / s for x in w]

    def select(self) -> int:
        self._played = self.probs()
        return self.rng.choices(range(self.n_arms), weights=self._played)[0]

    def update(self, arm: int, reward: float) -> None:
        reward = checked_reward(arm, reward, self.n_arms)
        p = self._played if self._played is not None else self.probs()
        self._played = None
        if p[arm] <= 0.0:
            raise ValueError(f"arm {arm} had probability 0 and cannot have been sampled")
        # rule: Zhat_a = (1 - r) / p_a for the played arm only
        self.loss_sums[arm] += (1.0 - reward) / p[arm]
        self.t += 1
