"""How a serving process treats stop signals: the first SIGINT / SIGTERM stops the run (`Stop`, raised by
`on_signal`), or, where the run can drain (HTTP: `stop_signals(drain=...)`), starts the drain: no new requests, the
accepted ones served, then the stop; a second signal during the drain stops at once. One that comes while the stop is
under way is ignored with one stderr line (`stop_signals`, `stopping`). The trainer process's side is
online/trainer/signals.py."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator


class Stop(BaseException):
    """A stop signal: a BaseException, so no per-request `except Exception` on the way can swallow it. `under_way`:
    set by the first stop signal (or by the end of the requests); the stop must then run to its end. `draining`: the
    signal that started a drain (the stop comes when the drain ends, or at a second signal)."""

    under_way: str | None = None
    draining: str | None = None
    drain: Callable[[str], bool] | None = None  # stop_signals' drain: -> True when a drain started


def on_signal(signum: int, frame) -> None:
    """The first SIGINT / SIGTERM stops the run, or starts its drain where it has one; a second one during the drain
    stops it; one during the stop (trainer hand-over, final export, index save) is ignored with one stderr line:
    killing the stop half-way would lose what the trainer learnt, silently."""
    name = signal.Signals(signum).name
    if Stop.under_way is None and Stop.draining is None and Stop.drain is not None and Stop.drain(name):
        Stop.draining = name  # rule: the accepted requests are served; the loop's end of requests is the stop
        return
    if Stop.under_way is None:
        Stop.under_way = name  # before the raise: a second signal on its way out is ignored, not a second Stop
        raise Stop(name)
    say_ignored(signum, "the trainer's final export and the saves (SIGKILL abandons them, and what was learnt since "
                        "the last export)")


def say_ignored(signum: int, waiting_for: str) -> None:
    """One stderr line: a stop signal ignored because the stop is already under way, waiting for `waiting_for`."""
    name = signal.Signals(signum).name
    line = f"[online] {name} ignored: the stop is already under way; waiting for {waiting_for}\n"
    try:  # os.write: a print could re-enter a stderr write this signal interrupted
        os.write(2, line.encode())
    except OSError:
        pass


@contextlib.contextmanager
def stop_signals(drain: Callable[[str], bool] | None = None) -> Iterator[None]:
    """A serving run's signals: inside the block the first SIGINT / SIGTERM raises `Stop` (`on_signal`), or calls
    `drain(signal name)` first where given (True: a drain started, the run goes on until its requests end; a second
    signal raises `Stop`); once `stopping` marks the stop under way, later ones are ignored and said so; the caller's
    handlers come back when the block ends (after everything is saved). Native serving (online/serve/loop.py) and vLLM
    serving (online/vllm/adapt.py) both run under it."""
    Stop.under_way, Stop.draining, Stop.drain = None, None, drain
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        Stop.drain = None
        for sig, h in old.items():
            signal.signal(sig, h)


def stopping(reason: str) -> str:
    """The stop is under way from here on (first statement of a run's stop, no call before it): a stop signal is
    ignored from now. -> what stopped the run (the first signal's name, the drain's included, else `reason`)."""
    Stop.under_way = Stop.under_way or Stop.draining or reason
    return Stop.under_way
