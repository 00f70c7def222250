"""Phase timing of one request, an optional observer of the decode loop. `PhaseTimer` (timing on) waits for queued
device work at every lap and adds the seconds since the previous lap to RequestMetrics fields; `NoTiming` (timing off)
keeps no laps and never synchronises the device. Both give the request's total seconds (`total`)."""

from __future__ import annotations

import time

import torch

from draftpool.forward.timing import sync_device
from specsel.decoding.request import RequestMetrics


class PhaseTimer:
    """Wall seconds of a request's phases into its RequestMetrics: `lap(*fields)` waits for queued device work and
    adds the seconds since the previous lap to each field named (none: the time is left to other_s)."""

    def __init__(self, metrics: RequestMetrics, device: torch.device):
        self.m, self.device = metrics, device
        self.start = self.last = time.perf_counter()

    def lap(self, *fields: str) -> float:
        """-> the seconds since the previous lap, added to every field named."""
        sync_device(self.device)
        now = time.perf_counter()
        seconds, self.last = now - self.last, now
        for f in fields:
            setattr(self.m, f, getattr(self.m, f) + seconds)
        return seconds

    def total(self) -> float:
        """Seconds since the timer started (device work waited for)."""
        sync_device(self.device)
        return time.perf_counter() - self.start


class NoTiming:
    """Timing off: laps cost a call that does nothing, and the phase fields stay 0 (other_s holds the total)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def lap(self, *fields: str) -> float:
        return 0.0

    def total(self) -> float:
        """Seconds since the request started, no sync: the request ends after its last tokens were read back to the
        host, so no device work of it is still queued."""
        return time.perf_counter() - self.start


def timer(on: bool, metrics: RequestMetrics, device: torch.device) -> PhaseTimer | NoTiming:
    """The request's timing observer: phase laps with device syncs (on) or none (off)."""
    return PhaseTimer(metrics, device) if on else NoTiming()
