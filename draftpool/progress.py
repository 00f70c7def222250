"""Progress of a long loop that reads well on a terminal and in a log.

On a terminal (stderr a TTY): a tqdm bar. Anywhere else (nohup, a pipe, CI, a cluster job's log file): one plain line
at a steady interval and at the end, e.g.

    self-distill sql (hf): 192/1024 samples (18.8%), 3.1 samples/s, ETA 4m28s, tok_s=412

tqdm's own non-TTY choice is either nothing at all (`disable=None`) or a bar redrawn with carriage returns in a log.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

DEFAULT_INTERVAL = 30.0  # seconds between two log lines


def progress(iterable: Iterable | int | None = None, desc: str = "", *, total: int | None = None, unit: str = "it",
             initial: int = 0, disable: bool = False, stream: TextIO | None = None,
             interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic):
    """A tqdm bar on a terminal, a `LineProgress` otherwise; both iterate over `iterable` and have update(n),
    set_postfix(**kw) and close(), and work as context managers. `iterable` may be a count (the total, nothing to
    iterate). disable: no output at all (e.g. on all but the main process). stream: default sys.stderr.
    interval, clock: the logger's seconds between lines and its time source (injectable for tests)."""
    if isinstance(iterable, int):
        iterable, total = None, iterable
    if total is None and iterable is not None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    stream = stream if stream is not None else sys.stderr
    if not disable and _isatty(stream):
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, unit=unit, initial=initial, file=stream)
    return LineProgress(iterable, desc, total=total, unit=unit, initial=initial, disable=disable, stream=stream,
                        interval=interval, clock=clock)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class LineProgress:
    """tqdm's small interface (iterate, update, set_postfix, close), logged as one line per `interval` seconds: done /
    total, percent, rate since the start, ETA, postfix. A first line when it starts, a last one at close."""

    def __init__(self, iterable: Iterable | None = None, desc: str = "", *, total: int | None = None,
                 unit: str = "it", initial: int = 0, disable: bool = False, stream: TextIO | None = None,
                 interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic):
        self.iterable, self.desc, self.total, self.unit = iterable, desc, total, unit
        self.n = self._start_n = initial
        self.disable, self.interval, self.clock = disable, interval, clock
        self.stream = stream if stream is not None else sys.stderr
        self.postfix: dict[str, Any] = {}
        self._t0 = self._last = clock()
        self._closed = False
        self._emit(start=True)

    def __iter__(self):
        if self.iterable is None:
            raise TypeError("this progress has no iterable (it was given a count)")
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __len__(self) -> int:
        return self.total or 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.clock() - self._last >= self.interval:
            self._emit()

    def set_postfix(self, ordered_dict: dict | None = None, refresh: bool = True, **kwargs) -> None:
        self.postfix = {**(ordered_dict or {}), **kwargs}

    def set_description(self, desc: str, refresh: bool = True) -> None:
        self.desc = desc

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._emit(final=True)

    def line(self, final: bool = False, start: bool = False) -> str:
        """The current progress line."""
        elapsed = self.clock() - self._t0
        done = self.n - self._start_n
        rate = done / elapsed if elapsed > 0 and done > 0 else None
        parts = [f"{self.n}/{self.total} {self.unit}" if self.total is not None else f"{self.n} {self.unit}"]
        if self.total:
            parts[0] += f" ({100 * self.n / self.total:.1f}%)"
        if start:
            parts.append("started")
        if rate is not None:
            parts.append(f"{_rate(rate)} {self.unit}/s")
        if final:
            parts.append(f"done in {_duration(elapsed)}" if self.total is None or self.n >= self.total
                         else f"stopped after {_duration(elapsed)}")
        elif rate is not None and self.total is not None:
            parts.append(f"ETA {_duration(max(self.total - self.n, 0) / rate)}")
        parts += [f"{k}={v}" for k, v in self.postfix.items()]
        return (f"{self.desc}: " if self.desc else "") + ", ".join(parts)

    def _emit(self, final: bool = False, start: bool = False) -> None:
        self._last = self.clock()
        if self.disable:
            return
        try:
            self.stream.write(self.line(final, start) + "\n")
            self.stream.flush()
        except ValueError:  # the stream was closed under us: progress is not worth a crash
            pass


def _rate(r: float) -> str:
    return f"{r:.2f}" if r < 10 else f"{r:.1f}" if r < 100 else f"{r:.0f}"


def _duration(s: float) -> str:
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s" if m else f"{sec}s"


def quiet_datasets() -> None:
    """Silence the per-shard / per-map progress bars of HF `datasets` ("Creating parquet from Arrow format",
    "Generating train split", "Filter", ...): draftpool reports its own progress, and a log must not get hundreds
    of those bars."""
    import datasets

    if hasattr(datasets, "disable_progress_bars"):
        datasets.disable_progress_bars()
    else:  # older datasets
        datasets.utils.logging.disable_progress_bar()
