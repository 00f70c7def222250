"""Phase timing of one request, the optional part of its observer (`observer.py`). The loop marks every phase
boundary with `lap(*phases)`, which returns the host clock's time there (the cycle's own timings are read from those
marks and from `now`, the host clock alone). `PhaseTimer` (timing on) waits for queued device work at every lap and
adds the seconds since the previous lap to each phase named; `NoTiming` (timing off) keeps no phases and never
synchronises the device. Both give the request's total seconds (`total`)."""

from __future__ import annotations

from time import perf_counter

import torch

from draftpool.forward.timing import sync_device

# RequestMetrics' phase fields: draft_s holds switch_s, verify_s holds target_s
PHASES = ("select_s", "draft_s", "switch_s", "verify_s", "target_s", "eval_s")


def now() -> float:
    """The host clock's time (never a device sync)."""
    return perf_counter()


class PhaseTimer:
    """Wall seconds of a request's phases (`seconds`, per name of PHASES): `lap(*phases)` waits for queued device work
    and adds the seconds since the previous lap to each phase named (none: the time is left to other_s)."""

    def __init__(self, device: torch.device):
        self.device = device
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.start = self.last = perf_counter()

    def lap(self, *phases: str) -> float:
        """-> the time now (after the device's queued work); the seconds since the previous lap go to every phase
        named."""
        sync_device(self.device)
        now = perf_counter()
        seconds, self.last = now - self.last, now
        for p in phases:
            self.seconds[p] += seconds
        return now

    def total(self) -> float:
        """Seconds since the timer started (device work waited for)."""
        sync_device(self.device)
        return perf_counter() - self.start


class NoTiming:
    """Timing off: a lap only reads the host clock, and no phase is kept (other_s holds the total)."""

    seconds: dict[str, float] = {}  # no phase timed (never written)

    def __init__(self) -> None:
        self.start = perf_counter()

    def lap(self, *phases: str) -> float:
        """-> the time now, no sync (where the loop reads a lap's time, the host already waited for the device)."""
        return perf_counter()

    def total(self) -> float:
        """Seconds since the request started, no sync: the request ends after its last tokens were read back to the
        host, so no device work of it is still queued."""
        return perf_counter() - self.start


def timer(on: bool, device: torch.device) -> PhaseTimer | NoTiming:
    """A request's phase timer: laps with device syncs (on) or none (off)."""
    return PhaseTimer(device) if on else NoTiming()
