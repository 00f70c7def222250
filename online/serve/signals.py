"""How the serving process treats stop signals: the first SIGINT / SIGTERM stops the serve loop (`Stop`, raised by
`on_signal`); one that comes while the stop is under way is ignored with one stderr line. The trainer process's side
is online/trainer/signals.py."""

from __future__ import annotations

import os
import signal


class Stop(BaseException):
    """A stop signal: a BaseException, so no per-request `except Exception` on the way can swallow it. `under_way`:
    set by the first stop signal (or by the end of the requests); the stop must then run to its end."""

    under_way: str | None = None


def on_signal(signum: int, frame) -> None:
    """The first SIGINT / SIGTERM stops the run; one during the stop (trainer hand-over, final export, index save) is
    ignored with one stderr line: killing the stop half-way would lose what the trainer learnt, silently."""
    name = signal.Signals(signum).name
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
