"""What one cycle of the decode loop did (`Cycle`, `SpecDecoder.spec_cycle`'s outcome) and the one observer of a
request (`Observer`), the only writer of its `RequestMetrics`.

The loop reports to the observer and nothing else: the prefill (`prefilled`), every cycle's outcome (`record`: a
speculative cycle, auto's plain step, or mode plain's step, `PLAIN_STEP`) and the end (`finish`); it marks its phase
boundaries with `lap` (the optional phase timing, timing.py: device syncs only when on). The cycle's own timings
(selection + feedback, draft + verify, the whole cycle) are read from those marks and `now` on the host clock, timing
on or off.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from specsel.decoding.request import RequestMetrics
from specsel.decoding.timing import now, timer


class Cycle(NamedTuple):
    """One cycle's outcome, recorded by the request's `Observer` and learned from by auto (`AutoPolicy.learn`).
    A NamedTuple: made once per cycle on the hot path (a frozen dataclass's __init__ costs five times as much)."""

    member: int | None  # the drafter chosen; None: mode plain's step (no drafters)
    drafted: int = 0  # draft tokens verified (a tree: its node count); 0 for a plain step
    accepted: int = 0  # of those, accepted
    plain: bool = False  # a plain step: one target pass over the last token, nothing drafted or verified
    plan: str | None = None  # auto's plan ('plain', 'k=2', 'tree 3/2/8'); None where auto does not plan the drafter
    tree: tuple[int, int, int] | None = None  # auto's tree (depth, top_k, tokens) of a tree cycle
    swaps: int = 0  # drafter weight versions taken in before it
    switched: bool = False  # its drafter differs from the last speculative cycle's
    catchup: int = 0  # on a switch: tokens the drafter read beyond the last speculative cycle's chunk
    # host clock, timing on or off (no sync of its own: selection and feedback read their results back to the host,
    # and a cycle ends with its accepted tokens read back)
    selection_s: float = 0.0  # selection + feedback
    work_s: float = 0.0  # draft + verify, or the plain step (auto learns its cycle times from it)
    cycle_s: float = 0.0  # the whole cycle, from its selection on


PLAIN_STEP = Cycle(None, plain=True)  # mode plain's step: one target pass, nothing else to record


class Observer:
    """One request's bookkeeping: its `RequestMetrics` (`m`, written here only, from what the loop reports) and its
    optional phase timing (`lap`: timing on waits for the device at every phase boundary, off never does)."""

    def __init__(self, timing: bool, device: torch.device):
        self.m = RequestMetrics()
        self.clock = timer(timing, device)
        self.lap = self.clock.lap  # a phase boundary -> the host clock's time there (timing.py)
        self.now = now  # the host clock's time, never a sync

    def prefilled(self) -> None:
        """The prompt's target pass (it emitted the first token)."""
        self.m.target_forwards += 1

    def record(self, c: Cycle) -> None:
        """A cycle's outcome into the metrics; every per-cycle list stays aligned as RequestMetrics documents."""
        m = self.m
        m.target_forwards += 1  # every cycle is one target pass
        if c.member is None:  # mode plain: nothing selected, drafted or timed per step
            return
        m.weight_swaps += c.swaps
        m.drafted.append(c.drafted)
        if c.plan is not None:
            m.plans.append(c.plan)
        if not c.plain:  # a verification cycle: accepted / choices / draft_len, one entry each
            m.accepted.append(c.accepted)
            m.choices.append(c.member)
            m.draft_len.append(c.drafted)
            m.switches += c.switched
            m.catchup_tokens += c.catchup
        m.selection_s.append(c.selection_s)
        m.cycle_s.append(c.cycle_s)

    def finish(self, new_tokens: int) -> RequestMetrics:
        """The request's end: its new tokens, total seconds and (timing on) phase seconds -> its metrics."""
        m = self.m
        m.total_s = self.clock.total()
        m.new_tokens = new_tokens
        for phase, seconds in self.clock.seconds.items():
            setattr(m, phase, seconds)
        return m
