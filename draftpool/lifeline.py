"""A child process that must not outlive the draftpool process that started it (the vLLM workers of data generation
and the vLLM server of attached serving): `die_with_parent`. Standard library only: it runs inside vLLM's own
environment."""

from __future__ import annotations

import os
import signal
import threading
import time


def die_with_parent(poll_s: float = 1.0) -> None:
    """A thread that kills this process's group (the process and the engine processes it started) once the draftpool
    process that started it is gone (killed or crashed): no orphan engine keeps a port, memory, a GPU or writing
    results."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()
