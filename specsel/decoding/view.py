"""What the decode loop and a selector exchange: `PoolView`, the narrow view of the decoder a selector is bound to
(its drafters and their names, k, the mode and tree shape, the target forward's id, the selector it replaces);
`SelectorProtocol`, the hooks the loop calls every request and cycle; and `FixedSelector`, always one drafter (what a
single drafter is). Selectors never see the decoder itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from draftpool.forward.sampling import SamplingParams
from specsel.decoding.errors import SpecError
from specsel.decoding.request import DecodeState
from specsel.decoding.target import TargetPass
from specsel.decoding.tree import TreeSpec


@dataclass(frozen=True)
class PoolView:
    """The decoder as a selector sees it when bound."""

    names: list[str]  # drafter names, in pool order
    drafters: list  # the pool's drafters (specsel/decoding/drafter.Drafter), in the same order
    k: int  # draft tokens per chain cycle (auto: at most)
    mode: str  # "chain", "auto" or "tree"
    tree: TreeSpec  # the tree shape of mode "tree"
    forward_id: str  # the target forward (TargetRunner.forward_id)
    previous: object | None = None  # the selector this one replaces (a new one may keep what that one built)


class SelectorProtocol(Protocol):
    """Picks the drafter of every cycle and takes the cycle's feedback (the selection layer implements it)."""

    full_information: bool  # drafters keep their predictions at every committed position (counterfactual feedback)
    # always the same drafter, learning nothing: the one selector under which auto weighs trees (a learning selector
    # reads every cycle's verified rows as a chain's)
    fixed: bool
    bandit: bool  # learns from the chosen drafter's reward on a fixed-k draft (refused by mode auto, which varies k)

    def bind(self, view: PoolView) -> None: ...

    def start_request(self, state: DecodeState) -> None: ...

    def select(self) -> int: ...

    def after_cycle(self, state: DecodeState, i: int, n_acc: int, out: TargetPass, params: SamplingParams
                    ) -> None: ...

    def finish_request(self, state: DecodeState, params: SamplingParams) -> None: ...

    def weights_changed(self, changed: list[int]) -> None: ...

    def probabilities(self) -> list[float] | None:
        """Its current probability of choosing each drafter, in pool order (None: it keeps no distribution)."""


class NoFeedback:
    """A selector that learns nothing from a cycle (a fixed rule): every feedback method does nothing."""

    full_information = False
    fixed = False
    bandit = False

    def after_cycle(self, state: DecodeState, i: int, n_acc: int, out: TargetPass, params: SamplingParams) -> None:
        pass

    def finish_request(self, state: DecodeState, params: SamplingParams) -> None:
        pass

    def weights_changed(self, changed: list[int]) -> None:
        pass

    def probabilities(self) -> list[float] | None:
        return None  # a rule, not a distribution


class FixedSelector(NoFeedback):
    """Always the same drafter, no feedback: what a single drafter is."""

    fixed = True

    def __init__(self, arm: int = 0):
        self.arm = arm
        self.n = 0  # the pool's size, once bound

    def bind(self, view: PoolView) -> None:
        if not 0 <= self.arm < len(view.drafters):
            raise SpecError(f"fixed drafter {self.arm} is not in a pool of {len(view.drafters)}")
        self.n = len(view.drafters)

    def probabilities(self) -> list[float] | None:
        """1 for its drafter, 0 for the others (None until bound to a pool)."""
        return [float(i == self.arm) for i in range(self.n)] if self.n else None

    def select(self) -> int:
        return self.arm

    def start_request(self, state: DecodeState) -> None:
        pass
