"""Self-distillation's backends (`DataGenConfig.backend`), a table from name to `Backend`: which one `auto` means for
a target, and how the engine (continuous batching), transformers (`hf`) and vLLM (a worker process) answer the
missing shards of a run. Each hands every finished shard to `Work.done_shard`; `data_gen.generate` writes it and keeps
the provenance, `data_gen.plan` planned the shards."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data_gen.plan import DataGenConfig, shard_seed
from draftpool.target import TargetInfo, dtype_name, resolve_device, target_dtype

Results = list[tuple[list[int], bool]]  # per row of a shard: (answer ids, stop token included; finished)


@dataclass(frozen=True)
class Work:
    """The missing shards of one run and what a backend answers them with."""

    cfg: DataGenConfig
    info: TargetInfo
    model: Any  # the target loaded in this process; None where the backend loads its own (vLLM's worker)
    tok: Any
    todo: list[dict[str, Any]]  # the missing shards, as `plan_shards` made them
    rendered: dict[str, list[list[int]]]  # shard name -> its prompts' ids (chat template applied)
    stop_ids: list[int]
    out: Path  # the data folder
    done_shard: Callable[[dict[str, Any], Results], None]  # a shard's answers, in its rows' order


@dataclass(frozen=True)
class Backend:
    """One backend: `generate(work)` answers the shards (-> what the run log records of it beside the throughput);
    `in_process`: it answers with the target loaded here; `check(cfg)`: run before any file is written, -> the
    provenance fields it adds (e.g. the engine's version)."""

    generate: Callable[[Work], dict[str, Any]]
    in_process: bool = True
    check: Callable[[DataGenConfig], dict[str, Any]] = lambda cfg: {}


def resolve_backend(backend: str, model) -> str:
    """The backend `auto` stands for with this target: engine where the lean forward reproduces it (lean.build's
    probe; the slot forward runs the same weights and blocks), else hf."""
    if backend != "auto":
        return backend
    from draftpool.forward import lean_probe

    why, _, _ = lean_probe.probe(model)
    return "engine" if why is None else "hf"


def generate_engine(work: Work) -> dict[str, Any]:
    """The missing shards by continuous batching over the slot forward (data_gen/continuous.py); a shard is written
    as soon as its last answer ends. Jobs go shard by shard (a killed run loses little), each shard's by prompt
    length; every job samples from its own seed, derived from (seed, shard name, row)."""
    from data_gen.continuous import Job, Stats, generate
    from draftpool.forward.slots import SlotForward

    cfg, rendered = work.cfg, work.rendered
    jobs = []
    for shard in work.todo:
        ids = rendered[shard["name"]]
        for i in sorted(range(len(ids)), key=lambda i: len(ids[i])):
            jobs.append(Job((shard["name"], i), ids[i], shard["temperature"], cfg.top_p,
                            shard_seed(cfg.seed, f"{shard['name']}:{i}"), cfg.max_new_tokens))
    longest = max(len(j.prompt) for j in jobs)
    forward = SlotForward(work.model, cfg.batch_size + 1, longest + cfg.max_new_tokens)  # +1: the shared prefix
    by_name = {s["name"]: s for s in work.todo}
    results: dict[str, dict[int, tuple[list[int], bool]]] = {s["name"]: {} for s in work.todo}

    def on_done(job: Job, answer: list[int], finished: bool) -> None:
        name, i = job.key
        results[name][i] = (list(answer), finished)
        if len(results[name]) == len(rendered[name]):
            work.done_shard(by_name[name], [results[name][k] for k in range(len(rendered[name]))])
            del results[name]

    stats = generate(forward, jobs, work.stop_ids, on_done, Stats())
    return {"slots": cfg.batch_size, "passes": stats.passes, "rows": stats.rows,
            "mean_busy_slots": stats.busy_slot_passes / max(stats.passes, 1)}


def generate_hf(work: Work) -> dict[str, Any]:
    """The missing shards through transformers' `generate` (data_gen/hf_backend.py), shard by shard in left-padded
    batches of similar prompt lengths (less padding); batch b of a shard samples from the shard's seed + b."""
    from data_gen.hf_backend import generate_batch

    cfg = work.cfg
    for shard in work.todo:
        ids = work.rendered[shard["name"]]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        results: dict[int, tuple[list[int], bool]] = {}
        base_seed = shard_seed(cfg.seed, shard["name"])
        for b in range(0, len(order), cfg.batch_size):
            idx = order[b: b + cfg.batch_size]
            outs = generate_batch(work.model, work.tok, [ids[i] for i in idx], shard["temperature"], cfg.top_p,
                                  cfg.max_new_tokens, base_seed + b, work.stop_ids)
            results.update(zip(idx, outs))
        work.done_shard(shard, [results[i] for i in range(len(ids))])
    return {}


def generate_vllm(work: Work) -> dict[str, Any]:
    """The missing shards through the vLLM worker (data_gen/vllm_backend.py); each shard is written as it ends.
    -> {"vllm_version", "startup_s": the engine's start, "generate_s": the shards' generation time}"""
    from data_gen.vllm_backend import engine_args, run_worker

    cfg = work.cfg
    device = resolve_device(cfg.device)
    dtype = dtype_name(target_dtype(cfg.dtype, device))
    longest = max(len(p) for ids in work.rendered.values() for p in ids)
    engine = engine_args(cfg.vllm, device.type, dtype, longest + cfg.max_new_tokens + 8, cfg.seed)
    jobs = [{"name": s["name"], "temperature": s["temperature"], "top_p": cfg.top_p,
             "max_new_tokens": cfg.max_new_tokens, "seed": shard_seed(cfg.seed, s["name"]),
             "prompts": work.rendered[s["name"]]} for s in work.todo]
    by_name = {s["name"]: s for s in work.todo}
    generate_s = 0.0

    def on_shard(job: dict[str, Any], res: dict[str, Any]) -> None:
        nonlocal generate_s
        generate_s += res["seconds"]
        work.done_shard(by_name[job["name"]], list(zip(res["responses"], res["finished"])))

    record = run_worker(cfg.vllm, work.info.path, jobs, work.stop_ids, engine, work.out / "vllm_work", on_shard)
    return {**record, "generate_s": generate_s}


def vllm_check(cfg: DataGenConfig) -> dict[str, Any]:
    """A missing or old vLLM is one clear error before any file is written; -> the version the provenance records."""
    from draftpool.vllm_env import vllm_python, vllm_version

    return {"vllm_version": vllm_version(vllm_python(cfg.vllm.python))}


BACKENDS: dict[str, Backend] = {
    "engine": Backend(generate_engine),
    "hf": Backend(generate_hf),
    "vllm": Backend(generate_vllm, in_process=False, check=vllm_check),
}
