"""Online drafter-selection learners, pure Python (stdlib only), one small file each.

Full-information learners (`full_information = True`: Hedge, NormalHedge, AdaNormalHedge) see every arm's loss in
[0, 1] each round: probs(), select(), update(losses). Bandit learners (`full_information = False`) see only the
played arm's reward in [0, 1]: select(), update(arm, reward). Every learner samples with its own random.Random(seed).
`CalibratedRate` (per-cycle selection) stands apart: it chooses from this cycle's scores, select(scores), and is not
in `LEARNERS`.
"""

from __future__ import annotations

from typing import Any

from specsel.selection.learners.ada_normal_hedge import AdaNormalHedge
from specsel.selection.learners.calibrated_rate import CalibratedRate
from specsel.selection.learners.discounted_ucb import DiscountedUCB
from specsel.selection.learners.exp3 import EXP3
from specsel.selection.learners.exp3_spec import EXP3Spec
from specsel.selection.learners.hedge import Hedge
from specsel.selection.learners.normal_hedge import NormalHedge
from specsel.selection.learners.petc import PETC
from specsel.selection.learners.sequential_halving import SequentialHalving
from specsel.selection.learners.simple import Fixed, Uniform
from specsel.selection.learners.sliding_window_ucb import SlidingWindowUCB
from specsel.selection.learners.ucb import UCB
from specsel.selection.learners.ucb_spec import UCBSpec

LEARNERS: dict[str, type] = {
    "hedge": Hedge,
    "normal_hedge": NormalHedge,
    "ada_normal_hedge": AdaNormalHedge,
    "ucb": UCB,
    "exp3": EXP3,
    "sh": SequentialHalving,
    "petc": PETC,
    "d_ucb": DiscountedUCB,
    "sw_ucb": SlidingWindowUCB,
    "ucb_spec": UCBSpec,
    "exp3_spec": EXP3Spec,
    "uniform": Uniform,
    "fixed": Fixed,
}


def make_learner(name: str, n_arms: int, seed: int = 0, **kw: Any) -> Any:
    """LEARNERS[name](n_arms, seed=seed, **kw); ValueError naming the known learners for an unknown name."""
    if name not in LEARNERS:
        raise ValueError(f"unknown learner {name!r}; known: {', '.join(sorted(LEARNERS))}")
    return LEARNERS[name](n_arms, seed=seed, **kw)


__all__ = [
    "LEARNERS",
    "AdaNormalHedge",
    "CalibratedRate",
    "DiscountedUCB",
    "EXP3",
    "EXP3Spec",
    "Fixed",
    "Hedge",
    "NormalHedge",
    "PETC",
    "SequentialHalving",
    "SlidingWindowUCB",
    "UCB",
    "UCBSpec",
    "Uniform",
    "make_learner",
]
