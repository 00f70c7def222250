"""Input checks shared by the learners: one clear ValueError each; losses and rewards come back clipped to [0, 1]."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

TOL = 1e-9  # float noise tolerated outside [0, 1]


def check_n_arms(n_arms: int) -> int:
    if not isinstance(n_arms, numbers.Integral) or n_arms < 1:
        raise ValueError(f"n_arms must be an integer >= 1, got {n_arms!r}")
    return int(n_arms)


def check_arm(arm: int, n_arms: int) -> int:
    if not isinstance(arm, numbers.Integral) or not 0 <= arm < n_arms:
        raise ValueError(f"arm must be an integer in [0, {n_arms}), got {arm!r}")
    return int(arm)


def checked_losses(losses: Sequence[float], n_arms: int) -> list[float]:
    if len(losses) != n_arms:
        raise ValueError(f"expected {n_arms} losses, got {len(losses)}")
    if not all(-TOL <= x <= 1 + TOL for x in losses):
        raise ValueError(f"each loss must be in [0, 1], got {list(losses)}")
    return [min(1.0, max(0.0, x)) for x in losses]


def checked_reward(arm: int, reward: float, n_arms: int) -> float:
    check_arm(arm, n_arms)
    if not -TOL <= reward <= 1 + TOL:
        raise ValueError(f"reward must be in [0, 1], got {reward!r}")
    return min(1.0, max(0.0, reward))
