"""The target's precision on a CPU, measured rather than assumed (`dtype: auto`).

bf16 pays on a CPU only where it has bf16 matrix units (AMX, avx512_bf16) and only at some shapes: on an AVX2-only
EPYC bf16 ran 3.8x slower than fp32, on an AMX Xeon the target's forward ran 1.9-2.7x faster, and a one-row bf16
matmul was slower than fp32 there too. So `auto` on a CPU:

- without bf16 units (`cpu_has_bf16`): fp32, no probe (bf16 is emulated there);
- with them: a probe times the target's own linear shapes (its attention projections and MLP, one layer's worth) in
  fp32 and bf16 at the row counts a use runs (`USES`: one row and a verification's rows for decoding, many rows for
  batched self-distillation and training), cached per machine, torch version, thread count and shape in
  `<cache>/precision.json`; bf16 where it is at least `MARGIN` faster at every row count of the use, else fp32.

`DRAFTPOOL_PRECISION_FIGURES` (JSON, {"float32": {rows: ms}, "bfloat16": {rows: ms}}) injects the probe's figures:
the choice then runs on them, on any machine (tests force each branch so). `DRAFTPOOL_CPU_BF16=1|0` answers
`cpu_has_bf16` whatever the CPU. An explicit dtype always wins: this module only answers `auto`.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from draftpool.config import ConfigError
from draftpool.io import atomic_write_text, cache_root

log = logging.getLogger(__name__)

CPU_BF16_ENV = "DRAFTPOOL_CPU_BF16"  # 1 or 0: what cpu_has_bf16 answers, whatever the CPU (docs/training.md)
FIGURES_ENV = "DRAFTPOOL_PRECISION_FIGURES"  # injected probe figures (JSON)
USES = {"decode": (1, 8), "batch": (64,)}  # the row counts a use's target forwards run at
MARGIN = 0.9  # bf16 must take at most this share of fp32's time at every row count of the use


class PrecisionError(ConfigError):
    """A bad setting of this module's environment variables."""


def cpu_has_bf16() -> bool:
    """Whether the CPU computes bf16 natively (avx512_bf16 or AMX); elsewhere bf16 is emulated and slower than fp32.
    DRAFTPOOL_CPU_BF16=1 (or 0) answers yes (no) whatever the CPU: the bf16 branches run, and are tested, on a CPU
    without bf16 units too."""
    forced = os.environ.get(CPU_BF16_ENV, "")
    if forced:
        if forced not in ("0", "1"):
            raise PrecisionError(f"{CPU_BF16_ENV} must be 1 or 0 (or unset: the CPU's flags decide), got {forced!r}")
        return forced == "1"
    return bool({"avx512_bf16", "amx_bf16"} & cpu_flags())


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((ln for ln in f if ln.startswith("flags")), "").split()[2:])
    except OSError:
        return set()


def layer_shapes(config) -> list[tuple[int, int]]:
    """(in, out) of one decoder layer's linear maps: q, k, v, o, gate, up, down (a Llama-shaped config)."""
    h = config.hidden_size
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or h // heads
    kv = getattr(config, "num_key_value_heads", None) or heads
    i = config.intermediate_size
    return [(h, heads * head_dim), (h, kv * head_dim), (h, kv * head_dim), (heads * head_dim, h), (h, i), (h, i),
            (i, h)]


def probe(config, rows: tuple[int, ...] = (1, 8, 64), repeats: int = 7) -> dict[str, dict[int, float]]:
    """-> {dtype name: {rows: median ms of one layer's linear maps over `rows` rows}}, fp32 and bf16."""
    out: dict[str, dict[int, float]] = {}
    g = torch.Generator().manual_seed(0)
    shapes = layer_shapes(config)
    for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
        weights = [torch.randn(o, i, generator=g).to(dtype) for i, o in shapes]  # [out, in], as nn.Linear keeps them
        out[name] = {}
        for n in rows:
            xs = [torch.randn(n, i, generator=g).to(dtype) for i, _ in shapes]
            with torch.inference_mode():
                for x, w in zip(xs, weights):  # warm-up
                    torch.nn.functional.linear(x, w)
                times = []
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    for x, w in zip(xs, weights):
                        torch.nn.functional.linear(x, w)
                    times.append(time.perf_counter() - t0)
            out[name][n] = 1000 * statistics.median(times)
    return out


def choose(figures: dict[str, dict[int, float]], use: str) -> torch.dtype:
    """bf16 where it takes at most MARGIN of fp32's time at every row count of `use`, else fp32."""
    rows = USES[use]
    f32, b16 = figures["float32"], figures["bfloat16"]
    # rule: bf16 only where it is faster at every shape the use runs (one slower shape can eat the gain)
    return torch.bfloat16 if all(b16[n] <= MARGIN * f32[n] for n in rows) else torch.float32


def _injected() -> dict[str, dict[int, float]] | None:
    text = os.environ.get(FIGURES_ENV, "")
    if not text:
        return None
    try:
        raw = json.loads(text)
        return {d: {int(n): float(ms) for n, ms in raw[d].items()} for d in ("float32", "bfloat16")}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise PrecisionError(f"{FIGURES_ENV} must be JSON {{\"float32\": {{rows: ms}}, \"bfloat16\": {{rows: ms}}}} "
                             f"({e})") from None


def machine_figures(config) -> dict[str, dict[int, float]]:
    """The probe's figures for this machine and this layer shape: injected, else cached, else measured now (and
    cached)."""
    injected = _injected()
    if injected is not None:
        return injected
    key = "|".join(str(x) for x in (platform.processor() or platform.machine(), sorted(cpu_flags() & {
        "avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}), torch.__version__, torch.get_num_threads(),
        layer_shapes(config)))
    path = Path(cache_root()) / "precision.json"
    try:
        cache = json.loads(path.read_text()) if path.is_file() else {}
    except ValueError:
        cache = {}
    if key not in cache:
        cache[key] = probe(config)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(cache, indent=1))
    return {d: {int(n): ms for n, ms in cache[key][d].items()} for d in ("float32", "bfloat16")}


def cpu_dtype(config, use: str = "decode") -> torch.dtype:
    """`auto` on a CPU for a target of this config: fp32 without bf16 units; with them, the probe's choice for the
    use. One log line says which and why."""
    if use not in USES:
        raise PrecisionError(f"unknown use {use!r}; choose {', '.join(USES)}")
    if not cpu_has_bf16():
        log.info("precision: float32 (auto on a CPU without bf16 units: bf16 is emulated there)")
        return torch.float32
    figs = machine_figures(config)
    dtype = choose(figs, use)
    shown = ", ".join(f"{n} rows {figs['float32'][n]:.2f} / {figs['bfloat16'][n]:.2f} ms" for n in USES[use])
    log.info("precision: %s for %s (auto: one layer's linear maps, fp32 / bf16: %s; bf16 needs <= %.0f%%)",
             str(dtype).removeprefix("torch."), use, shown, 100 * MARGIN)
    return dtype


def summary(dtype: torch.dtype, setting: str, use: str, config=None, cpu: bool = True) -> dict:
    """What a run's summary records of its precision: the dtype, the setting that chose it and the use; where `auto`
    chose on a CPU (given the target's config), whether it has bf16 units and, with them, the probe's figures."""
    out: dict = {"dtype": str(dtype).removeprefix("torch."), "setting": setting, "use": use}
    if setting == "auto" and cpu and config is not None:
        out["bf16_units"] = cpu_has_bf16()
        if out["bf16_units"]:
            out["probe_ms"] = machine_figures(config)
    return out
