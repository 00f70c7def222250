"""The one benchmark harness: common arguments, target and pool loading, one timer, results, progress, one error exit.

A benchmark script builds its parser with `parser()` + `add_common()` (--target, --pool, --device, --dtype, --out,
--seed: each only where the script uses it, with the script's own default), loads the target with `load_target()`
and a pool's members with `load_members()`, times with `median_ms()` (draftpool.forward.timing.median_time), logs
progress with `log` / `progress()` (lines on stderr as they happen, flushed: a run whose output goes to a file shows
them while it runs), and writes `<out>/results.json` + `<out>/table.md` (`markdown_table()`) with `write_results()`
and its figures inside <out> with `save_figure()`. `cli()` runs a main: a bad argument or a missing input is one line
on stderr (`error: ...`) and exit code 2, with nothing half-written. Figures for docs/ are copied from a run folder by
`python -m benchmarks.publish <out>`, never written there by a benchmark. Importing the harness loads no torch (a
benchmark may set the process up first, e.g. benchmarks.prefill_memory's bounded heap).
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from draftpool.config import ConfigError
from draftpool.io import atomic_write_json, atomic_write_text
from draftpool.progress import LineProgress

if TYPE_CHECKING:
    import torch

    from draftpool.pool import Member
    from draftpool.target import TargetInfo

log = logging.getLogger("benchmarks")
DEFAULT_TARGET = "smollm2-135m-instruct"  # draftpool.target.DEFAULT_TARGET (checked in tests/benchmarks/test_harness)


class BenchError(ValueError):
    """A bad argument or a missing input: `cli` prints it as one line and exits 2."""


def errors() -> tuple[type[BaseException], ...]:
    """What `cli` turns into one line and exit code 2 (DrafterLoadError and SpecError are ValueErrors)."""
    from draftpool.target import TargetError

    return (BenchError, ConfigError, TargetError, ValueError, OSError)


# --------------------------------------------------------------------------------------------------- arguments
class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors raise BenchError (one line, exit 2 under `cli`) instead of printing the usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BenchError(f"{self.prog}: {message}")


def parser(prog: str, doc: str | None) -> ArgumentParser:
    """A parser for `python -m <prog>` with the module docstring as its description."""
    return ArgumentParser(prog=f"python -m {prog}", description=doc,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_common(ap: argparse.ArgumentParser, *, out: str | None, target: bool = True, pool: str | None = None,
               device: str | None = None, dtype: str | None = None, seed: int | None = None,
               help: dict[str, str] | None = None) -> argparse.ArgumentParser:
    """The arguments every benchmark spells the same way; each given a default is added (None = the script has no
    such option). --pool may hold {target_slug}; '' means pools/<target slug>. help: a script's own help texts."""
    text = {"target": "hub id, local folder, or the embedded default",
            "pool": "pool folder ({target_slug} filled in; '' = pools/<target slug>)",
            "device": "auto, cpu, cuda, cuda:1 ...", "dtype": "auto, float32, bfloat16, float16",
            "out": "output folder: results.json, table.md and the figures", "seed": "random seed",
            **(help or {})}
    if target:
        ap.add_argument("--target", default=DEFAULT_TARGET, help=f"{text['target']} (default: %(default)s)")
    if pool is not None:
        ap.add_argument("--pool", default=pool, help=f"{text['pool']} (default: %(default)s)")
    if device is not None:
        ap.add_argument("--device", default=device, help=f"{text['device']} (default: %(default)s)")
    if dtype is not None:
        ap.add_argument("--dtype", default=dtype, help=f"{text['dtype']} (default: %(default)s)")
    if out is not None:
        ap.add_argument("--out", default=out, help=f"{text['out']} (default: %(default)s)")
    if seed is not None:
        ap.add_argument("--seed", type=int, default=seed, help=f"{text['seed']} (default: %(default)s)")
    return ap


def csv(text: str) -> list[str]:
    """A comma-separated argument as a list, blanks dropped."""
    return [x.strip() for x in text.split(",") if x.strip()]


# --------------------------------------------------------------------------------------------- target and pool
@dataclass
class Target:
    """A loaded target: what it is, the model, its tokenizer, where it runs and in which dtype."""

    info: TargetInfo
    model: Any
    tok: Any
    device: torch.device
    dtype: torch.dtype


def resolve(args: argparse.Namespace) -> TargetInfo:
    """--target resolved (TargetError for an unknown one), nothing loaded."""
    from draftpool.target import resolve_target

    return resolve_target(args.target)


def load_target(args: Any, info: TargetInfo | None = None, *, device: str | None = None,
                dtype: str | None = None) -> Target:
    """The target of args.target on args.device in args.dtype (parsed arguments or a config with those fields; a
    script without --device / --dtype: cpu, float32), device / dtype given here winning. `auto` on a CPU is the
    measured choice for decoding (draftpool/precision.py)."""
    from draftpool.target import load_target as load
    from draftpool.target import resolve_device, target_dtype

    info = info or resolve(args)
    dev = resolve_device(device or getattr(args, "device", None) or "cpu")
    name = dtype or getattr(args, "dtype", None) or "float32"
    dt = target_dtype(name, dev, info, "decode")
    log.info("loading target %s (%s, %s)", info.name, dev, str(dt).removeprefix("torch."))
    if not _isatty(sys.stderr):  # a log gets our line above, not transformers' carriage-return bar
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    model, tok = load(info, dev, dt)
    return Target(info, model, tok, dev, dt)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def pool_dir(args: argparse.Namespace, info: TargetInfo) -> Path:
    """--pool with {target_slug} filled in; '' or None -> pools/<target slug>."""
    pool = getattr(args, "pool", None)
    return Path(pool.format(target_slug=info.slug)) if pool else Path("pools") / info.slug


def load_members(folder: Path, info: TargetInfo, model: Any, kinds: Sequence[str], at_least: int = 1
                 ) -> list[Member]:
    """Every member of the given kinds in a pool folder, loaded and checked, in name order
    (draftpool.pool.load_members), with one log line."""
    from draftpool.pool import load_members as load

    members = load(folder, info, model, list(kinds), at_least=at_least)
    log.info("pool %s: %s", folder, ", ".join(m.name for m in members))
    return members


def machine(device: torch.device, dtype: torch.dtype) -> dict[str, Any]:
    """Where a benchmark ran: device, dtype, versions, threads, CPU."""
    import torch
    import transformers

    from specsel.decoding.costs import cpu_model, device_name

    return {"device": str(device), "device_name": device_name(device),
            "dtype": str(dtype).removeprefix("torch."), "torch_version": torch.__version__,
            "transformers_version": transformers.__version__, "torch_threads": torch.get_num_threads(),
            "cpu_model": cpu_model(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python_version": platform.python_version()}


# ------------------------------------------------------------------------------------------------------ timing
def median_ms(fn: Callable[[], Any], repeats: int, device: torch.device | str = "cpu",
              after: Callable[[], Any] | None = None) -> float:
    """Median milliseconds of `repeats` calls of fn() (device work waited for): draftpool's median_time."""
    import torch

    from draftpool.forward.timing import median_time

    return 1000 * median_time(fn, torch.device(device), repeats, after)


# ----------------------------------------------------------------------------------------------------- outputs
def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A markdown table; cells are str()-ed (format numbers before)."""
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    return "\n".join(lines)


def write_results(out: str | Path, results: dict[str, Any], table: str | None = None) -> Path:
    """<out>/results.json and, given a table, <out>/table.md, each through a temporary file (a kill never leaves
    half a file); returns the folder."""
    out = Path(out)
    atomic_write_json(out / "results.json", results)
    if table is not None:
        atomic_write_text(out / "table.md", table.rstrip("\n") + "\n")
    return out


def save_figure(fig: Any, path: Path, dpi: int = 110) -> None:
    """A matplotlib figure, laid out tight, to `path` through a temporary file (a kill never leaves half a PNG), its
    folder made; the figure is closed."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp-{uuid.uuid4().hex[:8]}.png")
    try:
        fig.tight_layout()
        fig.savefig(tmp, dpi=dpi)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ---------------------------------------------------------------------------------------------------- progress
class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (a test's capture, a redirected file), flushed per line."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup_logging(level: int = logging.INFO) -> None:
    """Progress lines of the `benchmarks` logger to stderr, timestamped, one flush per line (idempotent)."""
    if not any(isinstance(h, _StderrHandler) for h in log.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        log.addHandler(handler)
    log.setLevel(level)


class _LogLines:
    """A text stream that logs each complete line (LineProgress writes its lines here)."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger, self.buf = logger, ""

    def write(self, text: str) -> int:
        self.buf += text
        *lines, self.buf = self.buf.split("\n")
        for line in lines:
            if line.strip():
                self.logger.info(line)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def progress(iterable: Iterable | int | None = None, desc: str = "", *, total: int | None = None, unit: str = "it",
             interval: float = 0.0) -> LineProgress:
    """draftpool's LineProgress logged through `log`: one line per step (interval 0) or per `interval` seconds,
    with done/total, rate, ETA and the postfix; iterate it or call update() / set_postfix() / close()."""
    setup_logging()
    if isinstance(iterable, int):
        iterable, total = None, iterable
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    return LineProgress(iterable, desc, total=total, unit=unit, stream=_LogLines(log), interval=interval)


# ------------------------------------------------------------------------------------------------------- exits
def fail(message: str) -> None:
    """Print one error line to stderr (newlines folded)."""
    print("error: " + " ".join(str(message).split("\n")), file=sys.stderr, flush=True)


def cli(main: Callable[[list[str] | None], Any], argv: list[str] | None = None) -> int:
    """Run a benchmark's main with progress logging on: a bad argument or a missing input (errors()) -> one line on
    stderr and 2; otherwise main's int, or 0."""
    setup_logging()
    try:
        rc = main(argv)
    except errors() as e:
        fail(str(e))
        return 2
    return rc if isinstance(rc, int) else 0
