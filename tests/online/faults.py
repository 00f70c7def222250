"""Fault injection for the trainer-process tests: trainer factories (TrainerHandle's `trainer_factory`) that make a
real trainer process crash or hang in a given round, or crash at its start.

They cross to the trainer process pickled (by reference to this module, which the process forked from the fork server
imports as it unpickles them), build the real trainer with the factory they wrap (the token drafters' by default), and
wrap its `round`: when the n-th round (counted by the trainer, so a trainer restarted from an exported state counts on
from it) has run its update, the process exits with code 1 (`CrashInRound`), as an uncaught error would end it, or
stops beating and sleeps for ever (`HangInRound`), before the round is published. Production code holds no fault
switch.
"""

from __future__ import annotations

import time

from online.trainer.child import TOKEN_TRAINERS, TrainerFactory


class CrashInRound:
    """The trainer process exits (code 1) in its n-th round, after the update and before publishing it."""

    def __init__(self, n: int, inner: TrainerFactory = TOKEN_TRAINERS):
        self.n, self.inner = n, inner
        self.updaters = inner.updaters

    def fault(self) -> None:
        raise SystemExit(f"injected crash in round {self.n}")  # not an Exception: no retry or skip catches it

    def __call__(self, members, tcfg, out_embed=None):
        trainer = self.inner(members, tcfg, out_embed)
        inner = trainer.round

        def round_(batch):
            before = trainer.rounds
            out = inner(batch)
            if before < self.n <= trainer.rounds:
                self.fault()
            return out

        trainer.round = round_  # this instance only, in the trainer process
        return trainer


class HangInRound(CrashInRound):
    """The trainer process hangs (no heartbeat, no progress) in its n-th round, after the update."""

    def fault(self) -> None:
        while True:
            time.sleep(1)


class CrashAtStart(CrashInRound):
    """The trainer process exits (code 1) while it builds its trainer, before its first heartbeat."""

    def __init__(self, inner: TrainerFactory = TOKEN_TRAINERS):
        super().__init__(0, inner)

    def __call__(self, members, tcfg, out_embed=None):
        self.fault()
