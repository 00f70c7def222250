"""Self-distillation's plan: the config (`DataGenConfig`, recipes/<domain>/data_gen.yaml), the prompt table, the fixed
job list cut into named shards, each shard's seed, and the provenance that says which data a folder holds.

Everything here is decided before the target answers anything: `data_gen.generate` runs the plan through one of the
backends (data_gen/backends.py) and writes the shards.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

import draftpool
from data_gen.domains import ALL_DOMAINS, check_domain, domain_prompts
from data_gen.user_data import UserData, load_user_rows, user_prompt_id, user_split
from data_gen.vllm_backend import VllmOptions
from draftpool.chat import render_prompt
from draftpool.config import ConfigError, field, to_dict
from draftpool.target import DEFAULT_TARGET, TargetInfo


@dataclass
class DataGenConfig:
    domain: str = field(help=f"one of {', '.join(ALL_DOMAINS)} (or any name when user_prompts is set)")
    target: str = field(DEFAULT_TARGET, help="hub id, local folder, or the embedded default")
    data_dir: str = field("runs/data/{target_slug}/{domain}", help="output folder ({target_slug}, {domain} filled in)")
    train_temperatures: list[float] = field(default_factory=lambda: [0.0, 0.3, 0.7, 1.0],
                                            help="sampling temperatures for the train split (0 = greedy)")
    held_out_temperatures: list[float] = field(default_factory=lambda: [0.0],
                                               help="held-out split temperatures (greedy by default, for eval)")
    top_p: float = field(1.0, help="nucleus sampling threshold for temperatures > 0")
    max_new_tokens: int = field(128, help="answer length cap in tokens")
    max_prompt_tokens: int = field(2048, help="prompts longer than this (chat template included) are skipped, "
                                              "one line each")
    batch_size: int = field(64, help="answers generated together: engine, KV-cache slots under continuous batching; "
                                     "hf, one left-padded batch")
    shard_size: int = field(64, help="samples per parquet shard (the unit of resume)")
    max_prompts_per_split: int = field(0, help="use only the first N prompts of each split (0 = all)")
    max_held_out_prompts: int = field(0, help="use only the first N held-out prompts (0 = as the train split)")
    samples_per_prompt: int = field(0, help="train split: answers per prompt, at temperatures taken in turn "
                                            "(prompt i gets temperatures i, i+1, ...); 0 = one per temperature")
    seed: int = field(0, help="base seed; each shard's seed derives from it and the shard name")
    device: str = field("auto", help="auto, cpu, cuda, cuda:1 ...")
    dtype: Literal["auto", "float32", "bfloat16"] = field("auto", help="target precision (auto: bf16 on a GPU that "
                                                                       "has it, else fp32; docs/data.md, precision)")
    system_prompt: str = field("", help="system message prepended to every prompt ('' = the template's default)")
    user_prompts: UserData | None = field(None, help="generate from your own prompts instead of a shipped domain")
    backend: Literal["auto", "engine", "hf", "vllm"] = field(
        "auto", help="engine: the engine's own target forward with continuous batching (data_gen/continuous.py); hf: "
                     "transformers generate; vllm: a vLLM worker in the vLLM environment (scripts/setup_vllm.sh); "
                     "auto: engine where its forward reproduces the target, else hf. Same shards from each")
    vllm: VllmOptions = field(default_factory=VllmOptions, help="vLLM engine settings (backend vllm)")

    def validate(self) -> None:
        if self.user_prompts is None:
            check_domain(self.domain)
        temps = self.train_temperatures + self.held_out_temperatures
        if not self.train_temperatures or any(t < 0 for t in temps):
            raise ConfigError("temperatures must be a non-empty list of numbers >= 0")
        for temps in (self.train_temperatures, self.held_out_temperatures):
            if len({f"{t:.2f}" for t in temps}) != len(temps):
                raise ConfigError(f"temperatures {temps} must differ at two decimals (they name the shards)")
        if not 0 <= self.samples_per_prompt <= len(self.train_temperatures):
            raise ConfigError("samples_per_prompt must be in [0, len(train_temperatures)]")
        for k in ("max_new_tokens", "batch_size", "shard_size", "max_prompt_tokens"):
            if getattr(self, k) < 1:
                raise ConfigError(f"{k} must be >= 1")
        if not 0 < self.top_p <= 1:
            raise ConfigError("top_p must be in (0, 1]")
        self.vllm.validate()


def data_dir_for(cfg_data_dir: str, target_slug: str, domain: str) -> Path:
    return Path(cfg_data_dir.format(target_slug=target_slug, domain=domain))


def prompt_table(cfg: DataGenConfig, skipped: list[str] | None = None) -> dict[str, list[dict[str, str]]]:
    """{"train": [...], "held_out": [...]} rows with id, prompt, source. Prompts of a user file that are empty or
    repeat an earlier row are left out, one line each in `skipped`."""
    if cfg.user_prompts is None:
        table = domain_prompts(cfg.domain)
    else:
        table = {"train": [], "held_out": []}
        seen: dict[str, int] = {}
        for r in load_user_rows(cfg.user_prompts, skipped):
            pid = user_prompt_id(r["prompt"])
            if pid in seen:  # a repeated prompt is answered once
                if skipped is not None:
                    skipped.append(f"row {r['row']}: repeats row {seen[pid]}")
                continue
            seen[pid] = r["row"]
            split = user_split(r["prompt"], cfg.user_prompts.held_out_fraction)
            table[split].append({"id": pid, "prompt": r["prompt"], "source": "user", "row": r["row"]})
    if cfg.max_prompts_per_split:
        table = {k: v[: cfg.max_prompts_per_split] for k, v in table.items()}
    if cfg.max_held_out_prompts:
        table["held_out"] = table["held_out"][: cfg.max_held_out_prompts]
    return table


def drop_long_prompts(cfg: DataGenConfig, table: dict[str, list[dict[str, str]]], tok,
                      skipped: list[str]) -> dict[str, list[dict[str, str]]]:
    """The table without prompts whose rendered form is over max_prompt_tokens (one line each in `skipped`)."""
    out = {}
    for split, rows in table.items():
        out[split] = []
        for r in rows:
            n = len(render_prompt(tok, r["prompt"], cfg.system_prompt))
            if n > cfg.max_prompt_tokens:
                where = f"row {r['row']}" if "row" in r else r["id"]
                skipped.append(f"{where}: {n} tokens with the chat template "
                               f"(max_prompt_tokens {cfg.max_prompt_tokens})")
            else:
                out[split].append(r)
    return out


def plan_shards(cfg: DataGenConfig, table: dict[str, list[dict[str, str]]]) -> list[dict[str, Any]]:
    """The fixed job list, chunked into named shards of one (split, temperature) each."""
    shards = []
    for split, temps in (("train", cfg.train_temperatures), ("held_out", cfg.held_out_temperatures)):
        for ti, temp in enumerate(temps):
            rows = table[split]
            if split == "train" and cfg.samples_per_prompt:
                # prompt i is answered at temperatures i, i+1, ..., i+k-1 (mod the number of temperatures)
                n = len(temps)
                rows = [r for i, r in enumerate(rows) if (ti - i) % n < cfg.samples_per_prompt]
            for i in range(0, len(rows), cfg.shard_size):
                name = f"{split}-t{temp:.2f}-{i // cfg.shard_size:05d}"
                shards.append({"name": name, "split": split, "temperature": float(temp),
                               "rows": rows[i: i + cfg.shard_size]})
    return shards


def shard_seed(seed: int, name: str) -> int:
    """The sampling seed of a shard (or of one of its jobs, `name` "<shard>:<row>"): a function of (seed, name) only,
    so a resumed shard is drawn as its first attempt was."""
    return int(hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:8], 16)


def table_sha256(table: dict[str, list[dict[str, str]]]) -> str:
    """sha256 of the prompt table's (split, id) pairs: data made from another prompt set or split is not reused."""
    pairs = [[split, r["id"]] for split in sorted(table) for r in table[split]]
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()


def provenance(cfg: DataGenConfig, info: TargetInfo, tok, n_shards: int,
               table: dict[str, list[dict[str, str]]]) -> dict[str, Any]:
    """What the data folder's provenance.json records: the target, the prompts, the template and every sampling
    setting the shards depend on, and the library versions."""
    import transformers

    return {
        "target": info.name, "target_weights_sha256": info.weights_sha256, "domain": cfg.domain,
        "prompt_source": "shipped" if cfg.user_prompts is None else to_dict(cfg.user_prompts),
        "prompt_table_sha256": table_sha256(table),
        "chat_template": tok.chat_template, "system_prompt": cfg.system_prompt,
        "train_temperatures": cfg.train_temperatures, "held_out_temperatures": cfg.held_out_temperatures,
        "top_p": cfg.top_p, "max_new_tokens": cfg.max_new_tokens, "seed": cfg.seed, "shard_size": cfg.shard_size,
        "max_prompts_per_split": cfg.max_prompts_per_split, "max_held_out_prompts": cfg.max_held_out_prompts,
        "samples_per_prompt": cfg.samples_per_prompt, "n_shards": n_shards,
        "draftpool_version": draftpool.__version__, "transformers_version": transformers.__version__,
        "torch_version": torch.__version__, "backend": cfg.backend,
    }


# the provenance keys a resumed run must match (its shards are the same jobs), and those data made with other
# sampling settings must match to be reused as it is (the same prompts and template, from the same target)
IDENTITY_KEYS = ("target_weights_sha256", "domain", "prompt_source", "prompt_table_sha256", "chat_template",
                 "system_prompt", "train_temperatures", "held_out_temperatures", "top_p", "max_new_tokens", "seed",
                 "shard_size", "max_prompts_per_split", "samples_per_prompt", "n_shards", "backend", "dtype")
SOURCE_KEYS = ("target_weights_sha256", "domain", "prompt_source", "chat_template", "system_prompt")


def check_same(out: Path, prov: dict[str, Any]) -> None:
    """ConfigError unless the folder's provenance.json records the settings of `prov` (IDENTITY_KEYS): a resumed
    run finishes the same jobs."""
    old = json.loads((out / "provenance.json").read_text())
    old.setdefault("backend", "hf")  # data from before the backend switch was made by transformers
    old.setdefault("dtype", prov.get("dtype"))  # nor was the precision recorded then
    diff = [k for k in IDENTITY_KEYS if old.get(k) != prov.get(k)]
    if diff:
        raise ConfigError(f"{out} holds data made with other settings ({', '.join(diff)} differ); "
                          f"choose another data_dir or delete it")
