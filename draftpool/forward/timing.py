"""Wall-clock timing of device work: `sync_device` waits for queued GPU work, `median_time` times a call."""

from __future__ import annotations

import statistics
import time

import torch


def sync_device(device: torch.device) -> None:
    """Wait for queued GPU work so wall-clock timings are real (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_time(fn, device: torch.device, repeats: int, after=None) -> float:
    """Median wall seconds of `repeats` calls of fn() (device work waited for); after(), untimed, follows each."""
    times = []
    for _ in range(repeats):
        sync_device(device)
        t0 = time.perf_counter()
        fn()
        sync_device(device)
        times.append(time.perf_counter() - t0)
        if after is not None:
            after()
    return statistics.median(times)
