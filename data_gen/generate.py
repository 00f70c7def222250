"""Self-distillation: the target answers a domain's prompts with its own chat template, at several temperatures.

    python -m data_gen.generate --domain sql [--target smollm2-135m-instruct] [key=value ...]

Output: `<data_dir>/shards/*.parquet` (one HF `datasets` parquet shard per chunk of jobs) and `provenance.json`.
Resumable: shards are fixed chunks of a fixed job list and are written atomically, so a killed run re-run with the same
config regenerates only the missing shards (no sample lost or duplicated). Each shard's sampling seed depends only on
(seed, shard name), so a resumed shard is drawn exactly as the first attempt would have been.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

import draftpool
from data_gen.domains import ALL_DOMAINS, check_domain, domain_prompts
from data_gen.user_data import UserData, load_user_rows, user_prompt_id, user_split
from data_gen.vllm_backend import VllmOptions
from draftpool.config import ConfigError, field, load_config, to_dict
from draftpool.io import atomic_write_json
from draftpool.progress import progress, quiet_datasets
from draftpool.target import (
    DEFAULT_TARGET,
    TargetError,
    TargetInfo,
    load_target,
    resolve_device,
    resolve_target,
)


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


def chat_messages(prompt: str, system_prompt: str = "") -> list[dict[str, str]]:
    """One user turn, after a system turn when system_prompt is set ('' = the template's default)."""
    return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [
        {"role": "user", "content": prompt}]


def render_prompt(tok, prompt: str, system_prompt: str = "") -> list[int]:
    ids = tok.apply_chat_template(chat_messages(prompt, system_prompt), add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return list(ids)


def stop_token_ids(tok, model=None, path: str | None = None) -> list[int]:
    """The ids that end an answer: the generation config's EOS ids (the model's, or read from the HF folder `path`
    without loading the model) plus the tokenizer's."""
    if model is not None:
        ids = model.generation_config.eos_token_id
    else:
        from transformers import GenerationConfig

        try:
            ids = GenerationConfig.from_pretrained(path).eos_token_id
        except OSError:  # no generation_config.json
            ids = None
    ids = [ids] if isinstance(ids, int) else list(ids or [])
    if tok.eos_token_id is not None and tok.eos_token_id not in ids:
        ids.append(tok.eos_token_id)
    return ids


@torch.no_grad()
def generate_batch(model, tok, prompts: list[list[int]], temperature: float, top_p: float, max_new_tokens: int,
                   seed: int, stop_ids: list[int]) -> list[tuple[list[int], bool]]:
    """Left-padded batched generation; returns (response ids up to and including the stop token, finished) per row."""
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    pad = tok.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=device)
    attn = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    torch.manual_seed(seed)
    kw: dict[str, Any] = {"do_sample": False} if temperature == 0 else {
        "do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": 0}
    out = model.generate(input_ids=input_ids, attention_mask=attn, max_new_tokens=max_new_tokens,
                         pad_token_id=pad, eos_token_id=stop_ids, **kw)
    results = []
    for row in out[:, width:].tolist():
        resp, finished = [], False
        for t in row:
            resp.append(t)
            if t in stop_ids:
                finished = True
                break
        results.append((resp, finished))
    return results


def shard_seed(seed: int, name: str) -> int:
    return int(hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:8], 16)


def table_sha256(table: dict[str, list[dict[str, str]]]) -> str:
    """sha256 of the prompt table's (split, id) pairs: data made from another prompt set or split is not reused."""
    pairs = [[split, r["id"]] for split in sorted(table) for r in table[split]]
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()


def provenance(cfg: DataGenConfig, info: TargetInfo, tok, n_shards: int,
               table: dict[str, list[dict[str, str]]]) -> dict[str, Any]:
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


_IDENTITY_KEYS = ("target_weights_sha256", "domain", "prompt_source", "prompt_table_sha256", "chat_template",
                  "system_prompt",
                  "train_temperatures", "held_out_temperatures", "top_p", "max_new_tokens", "seed", "shard_size",
                  "max_prompts_per_split", "samples_per_prompt", "n_shards", "backend", "dtype")


def run(cfg: DataGenConfig, info: TargetInfo | None = None, model=None, tok=None) -> Path:
    """Generate (or finish generating) the self-distilled dataset; returns its folder."""
    # 1. target and plan
    info = info or resolve_target(cfg.target)
    out = data_dir_for(cfg.data_dir, info.slug, cfg.domain)
    skipped: list[str] = []
    table = prompt_table(cfg, skipped)
    from data_gen.backends import generate_engine, generate_vllm, resolve_backend, target_dtype

    engine_version = ""
    if cfg.backend != "vllm" and model is None:
        device = resolve_device(cfg.device)
        model, tok = load_target(info, device, target_dtype(cfg.dtype, device))
    backend = resolve_backend(cfg.backend, model)
    cfg = dataclasses.replace(cfg, backend=backend)
    if cfg.backend == "vllm":
        from draftpool.vllm_env import vllm_python, vllm_version

        # rule: checked before any file is written: a missing or old vLLM is one clear error
        engine_version = vllm_version(vllm_python(cfg.vllm.python))
        if tok is None:  # the engine holds the model: this side only renders prompts and decodes answers
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(info.path)
    table = drop_long_prompts(cfg, table, tok, skipped)
    for line in skipped:
        print(f"skipped: {line}", file=sys.stderr)
    if skipped:
        print(f"skipped {len(skipped)} prompts in all", file=sys.stderr)
    if not table["train"]:
        raise ConfigError(f"domain {cfg.domain!r} has no train prompts")
    shards = plan_shards(cfg, table)
    shard_dir = out / "shards"
    done = {p.stem for p in shard_dir.glob("*.parquet")} if shard_dir.exists() else set()
    todo = [s for s in shards if s["name"] not in done]
    prov = provenance(cfg, info, tok, len(shards), table)
    if model is not None:
        prov["dtype"] = str(next(model.parameters()).dtype).removeprefix("torch.")
    elif cfg.backend == "vllm":
        prov["dtype"] = str(target_dtype(cfg.dtype, resolve_device(cfg.device))).removeprefix("torch.")
    if engine_version:
        prov["vllm_version"] = engine_version
    prov_path = out / "provenance.json"
    if prov_path.exists():
        _check_same(out, prov)
    else:
        atomic_write_json(prov_path, prov)
    if not todo:
        return out
    # 2. generate missing shards
    shard_dir.mkdir(parents=True, exist_ok=True)
    stop_ids = stop_token_ids(tok, model, info.path)
    n_jobs = sum(len(s["rows"]) for s in todo)
    bar = progress(n_jobs, f"self-distill {cfg.domain} ({cfg.backend})", unit="sample")
    rendered = {s["name"]: [render_prompt(tok, r["prompt"], cfg.system_prompt) for r in s["rows"]] for s in todo}
    t0, new_tokens = time.perf_counter(), 0

    def done_shard(shard: dict[str, Any], results: list[tuple[list[int], bool]]) -> None:
        nonlocal new_tokens
        write_shard(shard_dir, cfg, shard, rendered[shard["name"]], results, tok)
        new_tokens += sum(len(r[0]) for r in results)
        bar.update(len(results))
        bar.set_postfix(tok_s=f"{new_tokens / (time.perf_counter() - t0):.0f}")

    engine: dict[str, Any] = {}
    if cfg.backend == "vllm":
        engine = generate_vllm(cfg, info, todo, rendered, stop_ids, out, done_shard)
    elif cfg.backend == "engine":
        engine = generate_engine(cfg, model, todo, rendered, stop_ids, done_shard)
    else:
        for shard in todo:
            ids = rendered[shard["name"]]
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths together: less padding
            results: dict[int, tuple[list[int], bool]] = {}
            base_seed = shard_seed(cfg.seed, shard["name"])
            for b in range(0, len(order), cfg.batch_size):
                idx = order[b: b + cfg.batch_size]
                outs = generate_batch(model, tok, [ids[i] for i in idx], shard["temperature"], cfg.top_p,
                                      cfg.max_new_tokens, base_seed + b, stop_ids)
                results.update(zip(idx, outs))
            done_shard(shard, [results[i] for i in range(len(ids))])
    bar.close()
    log_run(out, {"backend": cfg.backend, "samples": n_jobs, "new_tokens": new_tokens,
                  "seconds": time.perf_counter() - t0, **engine})
    return out


def write_shard(shard_dir: Path, cfg: DataGenConfig, shard: dict[str, Any], ids: list[list[int]],
                results: list[tuple[list[int], bool]], tok) -> None:
    """One parquet shard (the same records from either backend), written to a temp file and renamed."""
    import datasets

    quiet_datasets()

    base_seed = shard_seed(cfg.seed, shard["name"])
    records = [{
        "id": f"{r['id']}-t{shard['temperature']:.2f}", "prompt_id": r["id"], "source": r["source"],
        "domain": cfg.domain, "split": shard["split"], "temperature": shard["temperature"],
        "seed": base_seed, "prompt": r["prompt"], "prompt_ids": ids[i],
        "response_ids": results[i][0], "response": tok.decode(results[i][0], skip_special_tokens=True),
        "finished": results[i][1],
    } for i, r in enumerate(shard["rows"])]
    tmp = shard_dir / f".{shard['name']}.{uuid.uuid4().hex[:8]}.tmp"
    datasets.Dataset.from_list(records).to_parquet(str(tmp))
    os.replace(tmp, shard_dir / f"{shard['name']}.parquet")


def log_run(out: Path, record: dict[str, Any]) -> None:
    """One line per generation run in <data_dir>/runs.jsonl (backend, samples, tokens, seconds): throughput kept."""
    with open(out / "runs.jsonl", "a") as f:
        f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}) + "\n")


def _check_same(out: Path, prov: dict[str, Any]) -> None:
    old = json.loads((out / "provenance.json").read_text())
    old.setdefault("backend", "hf")  # data from before the backend switch was made by transformers
    old.setdefault("dtype", prov.get("dtype"))  # nor was the precision recorded then
    diff = [k for k in _IDENTITY_KEYS if old.get(k) != prov.get(k)]
    if diff:
        raise ConfigError(f"{out} holds data made with other settings ({', '.join(diff)} differ); "
                          f"choose another data_dir or delete it")


_SOURCE_KEYS = ("target_weights_sha256", "domain", "prompt_source", "chat_template", "system_prompt")


def ensure_data(cfg: DataGenConfig, info: TargetInfo, tok, model=None) -> Path:
    """The self-distilled data folder for `cfg`, generated (or finished) when incomplete. Complete data made with other
    sampling settings (a quick profile's subset, other temperatures) is used as it is; data of another target,
    template or prompt source, or whose prompts sit in another split than today's (an older prompt set or split), is
    refused: training on it could train on held-out prompts. `tok`: the target's tokenizer."""
    out = data_dir_for(cfg.data_dir, info.slug, cfg.domain)
    if not is_complete(out):
        return run(cfg, info, model, tok if model is not None else None)
    table = prompt_table(cfg)
    old = json.loads((out / "provenance.json").read_text())
    new = provenance(cfg, info, tok, len(plan_shards(cfg, table)), table)
    diff = [k for k in _SOURCE_KEYS if old.get(k) != new.get(k)]
    if diff:
        raise ConfigError(f"{out} holds data of another source ({', '.join(diff)} differ); "
                          f"choose another data_dir or delete it")
    # the split of every prompt of the set
    full = prompt_table(dataclasses.replace(cfg, max_prompts_per_split=0, max_held_out_prompts=0))
    split_of = {r["id"]: split for split, rows in full.items() for r in rows}
    rows = load_distilled(out).select_columns(["prompt_id", "split"])
    moved = sorted({r["prompt_id"] for r in rows if split_of.get(r["prompt_id"]) != r["split"]})
    if moved:
        raise ConfigError(f"{out} was made from another prompt set or split ({len(moved)} prompts are not in today's "
                          f"{cfg.domain} split as recorded there, e.g. {moved[0]}): delete it to regenerate")
    return out


def is_complete(data_dir: Path) -> bool:
    prov = data_dir / "provenance.json"
    if not prov.exists():
        return False
    n = json.loads(prov.read_text())["n_shards"]
    return len(list((data_dir / "shards").glob("*.parquet"))) == n


def load_distilled(data_dir: str | Path, split: str | None = None):
    """The self-distilled rows as a `datasets.Dataset` (optionally one split)."""
    import datasets

    quiet_datasets()

    data_dir = Path(data_dir)
    files = sorted(str(p) for p in (data_dir / "shards").glob("*.parquet"))
    if not files:
        raise ConfigError(f"no self-distilled data in {data_dir} (run data generation first)")
    ds = datasets.Dataset.from_parquet(files)
    if split is not None:
        ds = ds.filter(lambda r: r["split"] == split)
        if len(ds) == 0:
            raise ConfigError(f"self-distilled data in {data_dir} has no {split!r} rows")
    return ds


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", required=True)
    ap.add_argument("--target", default=None)
    ap.add_argument("--recipe", default=None, help="default: recipes/<domain>/data_gen.yaml")
    args, overrides = ap.parse_known_args(argv)
    try:
        if args.recipe is None:  # a custom domain name is fine with your own recipe and user_prompts
            check_domain(args.domain)
        recipe = args.recipe or f"recipes/{args.domain}/data_gen.yaml"
        extra = [f"domain={args.domain}"] + ([f"target={args.target}"] if args.target else [])
        cfg = load_config(DataGenConfig, recipe, overrides + extra)
        out = run(cfg)
    except (ConfigError, ValueError, TargetError) as e:
        sys.exit(f"error: {e}")
    print(f"self-distilled data in {out}")


if __name__ == "__main__":
    main()
