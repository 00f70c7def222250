"""Self-distillation: the target answers a domain's prompts with its own chat template, at several temperatures.

    python -m data_gen.generate --domain sql [--target smollm2-135m-instruct] [key=value ...]

Output: `<data_dir>/shards/*.parquet` (one HF `datasets` parquet shard per chunk of jobs) and `provenance.json`.
Resumable: shards are fixed chunks of a fixed job list and are written atomically, so a killed run re-run with the same
config regenerates only the missing shards (no sample lost or duplicated). Each shard's sampling seed depends only on
(seed, shard name), so a resumed shard is drawn exactly as the first attempt would have been.

This module runs a run: the plan (config, prompt table, shards, seeds, provenance) is data_gen/plan.py, the backends
that answer the shards data_gen/backends.py, the chat template and stop tokens draftpool/chat.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from data_gen.backends import BACKENDS, Results, Work, resolve_backend
from data_gen.domains import check_domain
from data_gen.plan import (
    SOURCE_KEYS,
    DataGenConfig,
    check_same,
    data_dir_for,
    drop_long_prompts,
    plan_shards,
    prompt_table,
    provenance,
    shard_seed,
)
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import ConfigError, load_config
from draftpool.io import atomic_write_json
from draftpool.progress import progress, quiet_datasets
from draftpool.target import (
    TargetError,
    TargetInfo,
    dtype_name,
    load_target,
    precision_summary,
    resolve_device,
    resolve_target,
    target_dtype,
)


def run(cfg: DataGenConfig, info: TargetInfo | None = None, model=None, tok=None) -> Path:
    """Generate (or finish generating) the self-distilled dataset; returns its folder."""
    # 1. target and plan
    info = info or resolve_target(cfg.target)
    out = data_dir_for(cfg.data_dir, info.slug, cfg.domain)
    skipped: list[str] = []
    table = prompt_table(cfg, skipped)
    setting = cfg.dtype if model is None else "given"  # a caller's model comes in its own precision
    if model is None and (cfg.backend == "auto" or BACKENDS[cfg.backend].in_process):
        device = resolve_device(cfg.device)
        model, tok = load_target(info, device, target_dtype(cfg.dtype, device, info, "batch"))
    cfg = dataclasses.replace(cfg, backend=resolve_backend(cfg.backend, model))
    backend = BACKENDS[cfg.backend]
    checked = backend.check(cfg)  # rule: before any file is written (a missing or old vLLM is one clear error)
    if tok is None:  # the backend holds the model: this side only renders prompts and decodes answers
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
    dtype = next(model.parameters()).dtype if model is not None else target_dtype(cfg.dtype,
                                                                                    resolve_device(cfg.device))
    prov["dtype"] = dtype_name(dtype)
    prov["precision"] = precision_summary(dtype, setting, resolve_device(cfg.device), info, "batch")
    prov.update(checked)
    prov_path = out / "provenance.json"
    if prov_path.exists():
        check_same(out, prov)
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

    def done_shard(shard: dict[str, Any], results: Results) -> None:
        nonlocal new_tokens
        write_shard(shard_dir, cfg, shard, rendered[shard["name"]], results, tok)
        new_tokens += sum(len(r[0]) for r in results)
        bar.update(len(results))
        bar.set_postfix(tok_s=f"{new_tokens / (time.perf_counter() - t0):.0f}")

    engine = backend.generate(Work(cfg, info, model, tok, todo, rendered, stop_ids, out, done_shard))
    bar.close()
    log_run(out, {"backend": cfg.backend, "samples": n_jobs, "new_tokens": new_tokens,
                  "seconds": time.perf_counter() - t0, **engine})
    return out


def write_shard(shard_dir: Path, cfg: DataGenConfig, shard: dict[str, Any], ids: list[list[int]],
                results: Results, tok) -> None:
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
    diff = [k for k in SOURCE_KEYS if old.get(k) != new.get(k)]
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
