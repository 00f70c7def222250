"""Measured costs for `auto` (specsel/decoding/auto.py): target passes per verified-token count and a drafter's
step, timed on the running request and cached per machine, target, drafter shape and dtype.

The cache is a JSON file {key: Costs.to_json()}; the key names what the costs depend on (CPU / GPU model, torch
threads and version, the target's and drafter's classes, parameter counts and dtypes, k), so another machine or
another target measures again. A cached entry measured while the machine was busy is too slow, never too fast for
long: the chooser's measured cycle times correct overheads upward as it decodes.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import torch

from draftpool.io import atomic_write_json
from specsel.decoding.auto import Costs
from specsel.decoding.sampling import SamplingParams


def sync_device(device: torch.device) -> None:
    """Wait for queued GPU work so wall-clock timings are real (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _module_sig(module) -> str:
    params = list(module.parameters()) if isinstance(module, torch.nn.Module) else []
    dtype = str(params[0].dtype).removeprefix("torch.") if params else "-"
    return f"{type(module).__name__}:{sum(p.numel() for p in params)}:{dtype}"


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            return next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), platform.machine())
    except OSError:
        return platform.machine()


def cost_key(target_model, drafter, k: int) -> str:
    """What the measured costs depend on: device model and threads, torch version, target and drafter, k."""
    device = next(target_model.parameters()).device
    inner = getattr(drafter, "head", None) or getattr(drafter, "model", None) or drafter
    return (f"{device.type}:{_device_name(device)}|threads={torch.get_num_threads()}|torch={torch.__version__}"
            f"|target={_module_sig(target_model)}|drafter={type(drafter).__name__}/{_module_sig(inner)}|k={k}")


def load_cached(path: str | Path | None, key: str) -> Costs | None:
    """The cached costs under `key`, or None (no file, no entry, or an entry that does not parse)."""
    if path is None or not Path(path).is_file():
        return None
    try:
        return Costs.from_json(json.loads(Path(path).read_text())[key])
    except (ValueError, KeyError, TypeError):
        return None


def store(path: str | Path | None, key: str, costs: Costs) -> None:
    """Add / replace one entry (atomic write; a corrupt file is replaced)."""
    if path is None:
        return
    path = Path(path)
    try:
        table = json.loads(path.read_text()) if path.is_file() else {}
    except ValueError:
        table = {}
    if not isinstance(table, dict):
        table = {}
    table[key] = costs.to_json()
    atomic_write_json(path, table)


def measure(target, drafter, state, k: int, repeats: int = 3) -> Costs:
    """Time target passes over 1, 2, k+1 and 2k+2 tokens after the committed prefix (rolled back after each) and
    the drafter's chain step (a k-token draft that is then discarded, as a rejected one); median of `repeats`.
    target: a TargetRunner holding the request's cache; drafter: synced to `state` here."""
    dev, base, last = target.device, len(target), state.tokens[-1]

    def median(fn) -> float:
        times = []
        for _ in range(repeats):
            sync_device(dev)
            t0 = time.perf_counter()
            fn()
            sync_device(dev)
            times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2]

    def target_pass(n: int) -> None:
        target.forward([last] * n).choice(0)  # rule: the row a plain step / greedy verification always projects
        target.truncate(base)

    passes = {n: median(lambda n=n: target_pass(n)) for n in sorted({1, 2, k + 1, 2 * k + 2})}
    drafter.sync(state)
    draft = median(lambda: drafter.draft_chain(k, SamplingParams(), None)) / k
    return Costs(passes, draft)
