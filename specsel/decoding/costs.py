"""Measured costs for `auto` (specsel/decoding/auto.py): target passes per verified-token count and a drafter's
step, timed after a synthetic prefix before the first request (specsel/decoding/policy.py) and cached per machine,
target, drafter shape and dtype.

The cache is a JSON file {key: Costs.to_json()}; the key names what the costs depend on (CPU / GPU model, torch
threads and version, the target's and drafter's classes, parameter counts and dtypes, k), so another machine or
another target measures again. A cached entry measured while the machine was busy is too slow, never too fast for
long: the chooser's measured cycle times correct overheads upward as it decodes.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import torch

from draftpool.forward.sampling import SamplingParams
from draftpool.forward.timing import median_time, sync_device  # noqa: F401 - re-exported
from draftpool.io import atomic_write_json
from specsel.decoding.auto import Costs
from specsel.decoding.tree import TreeSpec


def _module_sig(module) -> str:
    params = list(module.parameters()) if isinstance(module, torch.nn.Module) else []
    dtype = str(params[0].dtype).removeprefix("torch.") if params else "-"
    return f"{type(module).__name__}:{sum(p.numel() for p in params)}:{dtype}"


def cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (None where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), None)
    except OSError:
        return None


def device_name(device: torch.device) -> str:
    """The GPU's name, or the CPU's model (the machine type where /proc/cpuinfo has none)."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return cpu_model() or platform.machine()


ENGINE = 2  # bumped when the engine's cost structure changes (2: lean forward, prepacked drafting), so old entries
# are not reused


def cost_key(target_model, drafter, k: int, backend: str = "hf") -> str:
    """What the measured costs depend on: device model and threads, torch version, target, its forward (backend),
    drafter, k."""
    device = next(target_model.parameters()).device
    return (f"engine={ENGINE}|{device.type}:{device_name(device)}|threads={torch.get_num_threads()}"
            f"|torch={torch.__version__}"
            f"|target={_module_sig(target_model)}|backend={backend}"
            f"|drafter={type(drafter).__name__}/{_module_sig(drafter.module)}|k={k}")


def cache_path(setting: str, default: str | Path) -> str | None:
    """A costs-cache setting: '' -> the default file, 'none' -> no cache, anything else -> that file."""
    return {"": str(default), "none": None}.get(setting, setting)


def time_passes(target, last: int, sizes: list[int], repeats: int) -> dict[int, float]:
    """Median seconds of one target pass over n copies of `last` after the cached prefix, for each n, projecting
    the row a plain step / greedy verification always projects; the cache is rolled back after each pass.
    target: a TargetRunner holding a prefix."""
    base = len(target)
    return {n: median_time(lambda n=n: target.forward([last] * n).choice(0), target.device, repeats,
                           after=lambda: target.truncate(base)) for n in sizes}


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


def measure(target, drafter, state, k: int, repeats: int = 3, trees: tuple = ()) -> Costs:
    """Time target passes over 1, 2, k+1 and 2k+2 tokens after the committed prefix and the drafter's chain step (a
    k-token draft that is then discarded, as a rejected one); with `trees` ((depth, top_k, tokens) each), also the
    masked target pass over each tree's tokens + 1 rows and the drafter's tree step per top_k; medians of `repeats`.
    target: a TargetRunner holding the prefix of `state`; drafter: synced to `state` here."""
    last, base, dev = state.tokens[-1], len(target), target.device
    passes = time_passes(target, last, sorted({1, 2, k + 1, 2 * k + 2}), repeats)
    drafter.sync(state)
    step = median_time(lambda: drafter.draft_chain(k, SamplingParams(), None), dev, repeats) / k
    masked, tree_step = {}, {}
    for n in sorted({t[2] + 1 for t in trees}):
        allowed = torch.ones(n, base + n, dtype=torch.bool).tril(base)  # a masked pass (as a tree's) of n rows
        masked[n] = median_time(lambda n=n, a=allowed: target.forward([last] * n, None, a).choice(0), dev, repeats,
                                after=lambda: target.truncate(base))
    for top_k in sorted({t[1] for t in trees}):
        depth = max(t[0] for t in trees if t[1] == top_k)
        spec = TreeSpec(depth, top_k, top_k)

        def one_tree(spec=spec):
            drafter.sync(state)  # drops the previous tree's keys
            drafter.draft_tree(spec)

        tree_step[top_k] = median_time(one_tree, dev, repeats) / depth
    return Costs(passes, step, tree_target=masked, tree_step=tree_step)
