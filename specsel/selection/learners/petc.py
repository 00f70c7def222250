"""PETC, pure exploration then commit (MetaSD App. H.1 Alg. 4).

Sequential halving (sequential_halving.py) with budget = explore_rounds, then the survivor is played for every
later round (MetaSD Thm 8 picks explore_rounds = c ln B to balance switching cost and mis-identification).

Default explore_rounds = 32. `committed` tells whether exploration is over.
"""

from __future__ import annotations

import numbers

from specsel.selection.learners.sequential_halving import SequentialHalving


class PETC(SequentialHalving):
    full_information = False

    def __init__(self, n_arms: int, seed: int = 0, explore_rounds: int = 32):
        if not isinstance(explore_rounds, numbers.Integral) or explore_rounds < 1:
            raise ValueError(f"explore_rounds must be an integer >= 1, got {explore_rounds!r}")
        super().__init__(n_arms, seed=seed, budget=explore_rounds)
        self.explore_rounds = explore_rounds

    @property
    def committed(self) -> bool:
        return self.best is not None
