"""The one place draftpool touches multiprocessing's fork server internals (a private API, guarded here).

The trainer process is forked from multiprocessing's fork server (`context`). Every child the fork server forks gets a
copy of the write end of the server's "alive" pipe (`multiprocessing.forkserver._forkserver._forkserver_alive_fd`,
set in the child by `forkserver._serve_one`), so that it could fork in turn. A trainer never does, and while it holds
that copy the fork server never sees the pipe close when the server dies, so neither it nor the trainer (its child)
would notice a killed server. `release_alive_pipe` closes the trainer's copy: then the fork server exits when the
server dies, however it dies, and the trainer sees its parent gone and stops.

Checked on CPython 3.11.7 (`multiprocessing.forkserver` as shipped with it: `ForkServer.__init__` sets
`_forkserver_alive_fd` and `_forkserver_pid`; `_serve_one` assigns the inherited alive fd to
`_forkserver._forkserver_alive_fd`). `check` refuses, with one error naming what is missing, a Python whose fork
server lacks these attributes: a silent fallback would leave trainers that outlive a killed server.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from multiprocessing import forkserver

from draftpool.version_guard import UncheckedVersionError

CHECKED_ON = ("3.11.7",)  # CPython versions whose multiprocessing.forkserver this module was read against
_ATTRS = ("_forkserver_alive_fd", "_forkserver_pid")


class ForkServerError(UncheckedVersionError):
    """This Python's fork server does not have the private attributes draftpool relies on."""


def check() -> None:
    """Raise ForkServerError when `multiprocessing.forkserver._forkserver` lacks the attributes used here."""
    server = getattr(forkserver, "_forkserver", None)
    missing = [a for a in _ATTRS if not hasattr(server, a)]
    if server is None or missing:
        raise ForkServerError(
            f"Python {sys.version.split()[0]}: multiprocessing's fork server has no "
            f"{', '.join(missing) or '_forkserver object'} (online/trainer/forkserver_shim.py was checked on Python "
            f"{', '.join(CHECKED_ON)}): without it a trainer process could outlive a killed server; adapt "
            f"online/trainer/forkserver_shim.py to this Python or run online adaptation on a checked one")


def context(preload: list[str]) -> multiprocessing.context.BaseContext:
    """The "forkserver" multiprocessing context with `preload` imported once by the fork server (after `check`)."""
    check()
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(preload)
    return ctx


def release_alive_pipe() -> None:
    """In a process forked from the fork server: close its copy of the fork server's alive pipe (module docstring)."""
    server = forkserver._forkserver
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)
        server._forkserver_alive_fd = None


def server_pid() -> int | None:
    """The running fork server's pid (None before the first start), in the process that launched it."""
    return forkserver._forkserver._forkserver_pid


def alive_fd() -> int | None:
    """This process's fd of the fork server's alive pipe (None when it holds none)."""
    return forkserver._forkserver._forkserver_alive_fd
