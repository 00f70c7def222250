"""How the trainer process treats stop signals: the server owns its life.

A Ctrl-C in a terminal (SIGINT) or a service manager's SIGTERM reaches the whole process group, the trainer too; the
trainer ignores both from the first instruction of its spawn, and the server stops it through its stop event (finish
the round, export, exit). Since it ignores SIGTERM, the server kills one still running at interpreter exit.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def ignore_stop_signals() -> None:
    """The trainer process ignores SIGINT / SIGTERM: a Ctrl-C (or a service manager's SIGTERM) reaches the whole
    process group, and the server, which owns the trainer's life, stops it through the stop event (finish the round,
    export, exit). Unblocks them too (the server blocks them around the spawn, see `spawn_signals`)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextmanager
def spawn_signals():
    """Around the spawn: SIGINT / SIGTERM set to SIG_IGN (that survives exec), so the new trainer ignores them from
    its first instruction, through its imports; blocked meanwhile, so one meant for the server waits instead of being
    lost. Main thread only (elsewhere the trainer ignores them once trainer_main starts)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in old.items():
            if handler is not None:  # None: a handler not installed from Python, left as it is
                signal.signal(sig, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def kill_at_exit(ref) -> None:
    """At interpreter exit, a trainer still running is killed: it ignores the SIGTERM multiprocessing would send
    (and then wait for forever)."""
    handle = ref()
    proc = handle.proc if handle is not None else None
    if proc is not None and proc.is_alive():
        proc.kill()
        proc.join(10)
