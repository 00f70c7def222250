"""The trainer's share of a machine it shares with the server (`process.duty`, torch-free).

On a machine without a separate accelerator the trainer and the decode loop compete for the same cores and memory
bandwidth, and every second the trainer computes while a request decodes slows that request. Two bounds, both in the
trainer process (the server is never made to wait):

- priority (`process.nice`, applied by the trainer at its start): the kernel gives the server's threads the cores
  whenever they want them, so the trainer mostly runs on cycles serving leaves idle;
- duty cycle (`Throttle`): after a round that ran while a request was being decoded the trainer rests until it has
  used at most `duty` of the time since that round began, or until the server goes idle, whichever comes first.
  Rounds taken while the server is idle cost serving nothing and are not held back.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Throttle:
    """duty in (0, 1]: the most of the wall time the trainer computes while the server is busy (1: no bound).
    busy(): whether a request is being decoded now; stop(): whether the trainer must stop; beat(): called while
    resting (the process's heartbeat)."""

    def __init__(self, duty: float, busy: Callable[[], bool], stop: Callable[[], bool] = lambda: False,
                 beat: Callable[[], None] = lambda: None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep, poll_s: float = 0.02):
        if not 0 < duty <= 1:
            raise ValueError(f"duty must be in (0, 1], got {duty}")
        self.duty, self.busy, self.stop, self.beat = duty, busy, stop, beat
        self.clock, self.sleep, self.poll_s = clock, sleep, poll_s
        self.rested_s = 0.0  # seconds spent resting so far
        self.busy_work_s = 0.0  # seconds of rounds that overlapped serving

    def after(self, seconds: float, overlapped: bool) -> float:
        """A round of `seconds` just ended; `overlapped`: the server was busy at some point during it. -> the seconds
        rested before the next round."""
        if self.duty >= 1 or not overlapped:
            return 0.0
        self.busy_work_s += seconds
        # rule: work w then rest r with w / (w + r) = duty; the rest ends early when serving does
        owed = seconds * (1 - self.duty) / self.duty
        start = self.clock()
        while (left := owed - (self.clock() - start)) > 1e-6 and self.busy() and not self.stop():
            self.beat()
            self.sleep(min(self.poll_s, left))
        rested = self.clock() - start
        self.rested_s += rested
        return rested



class Serving:
    """The busy flags the server and the trainer share, over an int64 tensor [3]: [0] 1 while a request decodes, [1]
    the requests begun so far, [2] 1 while the trainer computes a round (the server fits its threads to it).
    `overlapped(mark)` tells the trainer whether serving touched a round: busy at its start (`mark()`) or end, or a
    request begun in between."""

    def __init__(self, flag):
        self.flag = flag

    def begin(self) -> None:
        self.flag[1] += 1
        self.flag[0] = 1

    def end(self) -> None:
        self.flag[0] = 0

    def busy(self) -> bool:
        return bool(self.flag[0])

    def computing(self, on: bool) -> None:
        """The trainer's side: a round starts (True) or ends (False)."""
        self.flag[2] = int(on)

    def training(self) -> bool:
        return bool(self.flag[2])

    def mark(self) -> tuple[bool, int]:
        return self.busy(), int(self.flag[1])

    def overlapped(self, mark: tuple[bool, int]) -> bool:
        return mark[0] or self.busy() or int(self.flag[1]) != mark[1]
