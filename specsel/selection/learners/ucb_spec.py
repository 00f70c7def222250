"""UCBSpec (Hou et al., "BanditSpec: Adaptive Speculative Decoding via Bandit Algorithms", ICML 2025, Alg. 4 / 8).

A HedgeSpec baseline. The reward is the round's accepted length; the caller passes it normalised into [0, 1]
(e.g. accepted / (K + 1)). Source read: the arXiv v2 HTML text of the paper (arXiv:2505.15141), Alg. 4, eq. (6),
Lemma F.3 and the proof of Thm 4.3; the code at github.com/sail-sg/BanditSpec only has a UCB over speculation
lengths (sqrt(6 ln t / n), a different experiment), not this selector.

    play each arm once (lowest index first), then
    a = argmax_i  mu_i + cr_i                                    (t = total plays so far; ties -> lowest index)
    cr_i = alpha * (max_reward / 2) * sqrt((1 + n_i) / n_i^2 * (1 + 2 ln(N t^2 sqrt(1 + n_i) / delta)))

cr_i is the paper's eq. (6): a self-normalised (Abbasi-Yadkori et al. 2011) confidence radius for a sub-Gaussian
reward of range L, where L (max speculation length = range of the accepted length in [1, L + 1]) becomes
`max_reward` (the range of the normalised reward). The paper's rendering of eq. (6) does not show the square root or
say whether the leading factor is L/2 or L^2; we read it as (L/2) sqrt(...), which is what Lemma F.3 (1-sub-Gaussian)
gives for a range-L variable and matches the pull count 2 L^2 / Delta^2 (...) in eq. (33). delta: the paper fixes
delta = 1/2 in the proof of Thm 4.3 and gives no experimental value. alpha is our extra scale on the radius
(1 = the paper).

Defaults: max_reward = 1.0, delta = 0.5, alpha = 1.0. This radius explores far more than MetaSD-UCB (beta = 0.01).
"""

from __future__ import annotations

import math
import random

from specsel.selection.learners.checks import check_n_arms, checked_reward


class UCBSpec:
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, max_reward: float = 1.0, delta: float = 0.5, alpha: float = 1.0):
        if not (max_reward > 0 and math.isfinite(max_reward)):
            raise ValueError(f"max_reward must be a finite number > 0, got {max_reward!r}")
        if not 0 < delta < 1:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if not (alpha > 0 and math.isfinite(alpha)):
            raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
        self.n_arms = check_n_arms(n_arms)
        self.max_reward = max_reward
        self.delta = delta
        self.alpha = alpha
        self.rng = random.Random(seed)  # unused: UCBSpec is deterministic
        self.means = [0.0] * self.n_arms
        self.counts = [0] * self.n_arms
        self.t = 0  # total plays

    def radius(self, n: int) -> float:
        """cr for an arm pulled n >= 1 times, at the current t (eq. (6))."""
        log_term = math.log(self.n_arms * self.t**2 * math.sqrt(1.0 + n) / self.delta)
        return self.alpha * 0.5 * self.max_reward * math.sqrt((1.0 + n) / n**2 * (1.0 + 2.0 * log_term))

    def select(self) -> int:
        for i, n in enumerate(self.counts):
            if n == 0:
                return i  # rule: round robin over the arms first
        # rule: argmax of mean + cr; ties -> lowest index
        index = [m + self.radius(n) for m, n in zip(self.means, self.counts)]
        return max(range(self.n_arms), key=index.__getitem__)

    def update(self, arm: int, reward: float) -> None:
        reward = checked_reward(arm, reward, self.n_arms)
        # rule: running mean of the played arm's (normalised) accepted length
        self.means[arm] = (self.means[arm] * self.counts[arm] + reward) / (self.counts[arm] + 1)
        self.counts[arm] += 1
        self.t += 1
