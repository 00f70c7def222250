"""The drivers of self-distillation's backends (`DataGenConfig.backend`): which one `auto` means for a target, and
how the engine (continuous batching) and vLLM (a worker process) produce the missing shards. `data_gen.generate`
plans the shards, writes them and keeps their provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from data_gen.generate import DataGenConfig, shard_seed
from draftpool.target import TargetInfo, default_dtype, resolve_device


def target_dtype(name: str, device: torch.device) -> torch.dtype:
    """The precision a config names (auto: bf16 on a GPU that has it, else fp32)."""
    return default_dtype(device) if name == "auto" else getattr(torch, name)


def resolve_backend(backend: str, model) -> str:
    """The backend `auto` stands for with this target: engine where the lean forward reproduces it (lean.build's
    probe; the slot forward runs the same weights and blocks), else hf."""
    if backend != "auto":
        return backend
    from draftpool.forward import lean_probe

    why, _, _ = lean_probe.probe(model)
    return "engine" if why is None else "hf"


def generate_engine(cfg: DataGenConfig, model, todo: list[dict[str, Any]], rendered: dict[str, list],
                    stop_ids: list[int], done_shard) -> dict[str, Any]:
    """The missing shards by continuous batching over the slot forward (data_gen/continuous.py); a shard is written
    as soon as its last answer ends. Jobs go shard by shard (a killed run loses little), each shard's by prompt
    length; every job samples from its own seed, derived from (seed, shard name, row)."""
    from data_gen.continuous import Job, Stats, generate
    from draftpool.forward.slots import SlotForward

    jobs = []
    for shard in todo:
        ids = rendered[shard["name"]]
        for i in sorted(range(len(ids)), key=lambda i: len(ids[i])):
            jobs.append(Job((shard["name"], i), ids[i], shard["temperature"], cfg.top_p,
                            shard_seed(cfg.seed, f"{shard['name']}:{i}"), cfg.max_new_tokens))
    longest = max(len(j.prompt) for j in jobs)
    forward = SlotForward(model, cfg.batch_size + 1, longest + cfg.max_new_tokens)  # +1: the shared prefix
    by_name = {s["name"]: s for s in todo}
    results: dict[str, dict[int, tuple[list[int], bool]]] = {s["name"]: {} for s in todo}

    def on_done(job: Job, answer: list[int], finished: bool) -> None:
        name, i = job.key
        results[name][i] = (list(answer), finished)
        if len(results[name]) == len(rendered[name]):
            done_shard(by_name[name], [results[name][k] for k in range(len(rendered[name]))])
            del results[name]

    stats = generate(forward, jobs, stop_ids, on_done, Stats())
    return {"slots": cfg.batch_size, "passes": stats.passes, "rows": stats.rows,
            "mean_busy_slots": stats.busy_slot_passes / max(stats.passes, 1)}


def generate_vllm(cfg: DataGenConfig, info: TargetInfo, todo: list[dict[str, Any]], rendered: dict[str, list],
                  stop_ids: list[int], out: Path, done_shard) -> dict[str, Any]:
    """The missing shards through the vLLM worker (data_gen/vllm_backend.py); each shard is written as it ends.
    -> {"vllm_version", "startup_s": the engine's start, "generate_s": the shards' generation time}"""
    from data_gen.vllm_backend import engine_args, run_worker

    device = resolve_device(cfg.device)
    dtype = str(target_dtype(cfg.dtype, device)).removeprefix("torch.")
    longest = max(len(p) for ids in rendered.values() for p in ids)
    engine = engine_args(cfg.vllm, device.type, dtype, longest + cfg.max_new_tokens + 8, cfg.seed)
    jobs = [{"name": s["name"], "temperature": s["temperature"], "top_p": cfg.top_p,
             "max_new_tokens": cfg.max_new_tokens, "seed": shard_seed(cfg.seed, s["name"]),
             "prompts": rendered[s["name"]]} for s in todo]
    by_name = {s["name"]: s for s in todo}
    generate_s = 0.0

    def on_shard(job: dict[str, Any], res: dict[str, Any]) -> None:
        nonlocal generate_s
        generate_s += res["seconds"]
        done_shard(by_name[job["name"]], list(zip(res["responses"], res["finished"])))

    record = run_worker(cfg.vllm, info.path, jobs, stop_ids, engine, out / "vllm_work", on_shard)
    return {**record, "generate_s": generate_s}
