"""Version guards for the private APIs draftpool uses (online/http/uvicorn_shim.py, online/vllm/shim.py,
online/trainer/forkserver_shim.py): one error type, `UncheckedVersionError`, and `check_version`, which refuses a
version outside the range a shim was checked on. Pure Python: it also runs inside vLLM's worker processes."""

from __future__ import annotations

import re


class UncheckedVersionError(RuntimeError):
    """A library (or Python) version a shim of draftpool was not checked against: its private API may differ."""


def minor(version: str) -> tuple[int, int]:
    """'0.54.0' / '0.32.0+cpu' / '1.2rc1' -> (major, minor); ValueError when it does not start with two numbers."""
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None:
        raise ValueError(f"not a version: {version!r}")
    return int(m.group(1)), int(m.group(2))


def check_version(name: str, version: str, low: tuple[int, int], high: tuple[int, int], shim: str,
                  checked: str) -> None:
    """Raise UncheckedVersionError unless low <= (major, minor) of `version` < high. shim: the module that holds the
    private use; checked: the exact versions it was read against (for the message)."""
    try:
        got = minor(version)
    except ValueError:
        got = None
    if got is None or not low <= got < high:
        raise UncheckedVersionError(
            f"{name} {version} is outside the versions {shim} was checked on ({name} >= {low[0]}.{low[1]}, < "
            f"{high[0]}.{high[1]}; read against {checked}): it uses {name}'s private API; install a checked "
            f"version, or check {shim} against {name} {version} and widen its range")
