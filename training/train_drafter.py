"""Train a domain drafter for a target: self-distill (if needed) -> train -> evaluate -> export to the pool.

    accelerate launch --config_file recipes/accelerate_configs/single.yaml train_drafter.py --domain sql \
        [--drafter eagle3|llama|suffix] [--target ID_OR_PATH] [--budget-minutes N] [key=value ...]

Multi-GPU / DeepSpeed: `accelerate launch --config_file recipes/accelerate_configs/zero2.yaml train_drafter.py ...`.
The recipe is `recipes/<domain>/<folder>.yaml` and the drafter goes to `<pools_dir>/<target-slug>/<domain>-<folder>`,
where <folder> is the kind's folder name (eagle3, llama68m, suffix); `python train_drafter.py --help-config` lists
every key. What each kind makes and how it learns is its own module (training/kinds/<kind>.py, from the kind
registry); this module runs the steps every kind shares.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

import draftpool
from data_gen.domains import ALL_DOMAINS, check_domain
from data_gen.generate import ensure_data, load_distilled
from data_gen.plan import DataGenConfig, data_dir_for
from data_gen.user_data import load_user_rows, user_split
from draftpool.chat import render_prompt
from draftpool.config import ConfigError, build, deep_merge, help_text, load_config, read_yaml, to_dict
from draftpool.io import atomic_write_json, check_writable, run_lock
from draftpool.models import get_kind
from draftpool.pool import check_manifest, update_pool_manifest
from draftpool.target import (
    DEFAULT_TARGET,
    TargetInfo,
    dtype_name,
    load_target,
    precision_summary,
    resolve_target,
    target_dtype,
)
from training.accelerate_shim import (
    check_accelerate,
    fix_deepspeed_cpu_ranks,
    forget_accelerate_state,
    no_zero3_init,
    use_the_cores,
)
from training.config import TrainConfig
from training.data import ResponseDataset
from training.evaluate import EXPORTED, curve_hook, evaluate, format_table
from training.kinds import KindTraining, SetupContext, drafter_names, training_for
from training.loop import NaNLossError, resolve_mixed_precision, train


# ---------------------------------------------------------------------------------------------------------------------
def prepare_rows(cfg: TrainConfig, info: TargetInfo, tok, accelerator) -> tuple[list[dict], list[dict], dict]:
    """(train rows, held-out rows, provenance); runs self-distillation on the main process if data is missing."""
    if cfg.data.user_dataset is not None:
        rows = load_user_rows(cfg.data.user_dataset)
        if not cfg.data.user_dataset.response_column:
            raise ConfigError("data.user_dataset needs response_column (use data_gen user_prompts to distill)")
        out = {"train": [], "held_out": []}
        for r in rows:
            rec = {"prompt_ids": render_prompt(tok, r["prompt"]),
                   "response_ids": tok(r["response"], add_special_tokens=False)["input_ids"] + [tok.eos_token_id]}
            out[user_split(r["prompt"], cfg.data.user_dataset.held_out_fraction)].append(rec)
        return out["train"], out["held_out"], {"user_dataset": to_dict(cfg.data.user_dataset)}
    recipe = read_yaml(cfg.data.recipe.format(domain=cfg.domain))
    dcfg = build(DataGenConfig, deep_merge(recipe, {**cfg.data.gen, "domain": cfg.domain, "target": cfg.target}))
    ddir = data_dir_for(dcfg.data_dir, info.slug, cfg.domain)
    if accelerator.is_main_process:
        ensure_data(dcfg, info, tok)
    accelerator.wait_for_everyone()
    train_rows = answer_sample(list(load_distilled(ddir, "train")), cfg.data.max_train_answers)
    held = [r for r in load_distilled(ddir, "held_out") if r["temperature"] == 0.0] or list(
        load_distilled(ddir, "held_out"))
    return train_rows, held, json.loads((ddir / "provenance.json").read_text())


def answer_sample(rows: list[dict], n: int, seed: int = 0) -> list[dict]:
    """The first `n` rows (0 = all) of a seeded shuffle of `rows` ordered by id: a fixed sample per n, each smaller
    sample inside every larger one."""
    if n <= 0 or n >= len(rows):
        return rows
    order = sorted(rows, key=lambda r: r["id"])
    random.Random(seed).shuffle(order)
    return order[:n]


def run(cfg: TrainConfig, accelerator, info: TargetInfo | None = None) -> dict:
    """Data -> models -> train -> evaluate -> export; returns the eval figures. What would fail at the end (an
    output path under a file, a corrupt or foreign pool manifest) fails first; the run holds its run_dir's lock."""
    info = info or resolve_target(cfg.target)
    run_dir = Path(cfg.run_dir_for(info.slug))
    pool_dir = Path(cfg.export.pools_dir) / info.slug
    check_writable(run_dir, "run_dir")
    check_writable(pool_dir, "export.pools_dir")
    check_manifest(pool_dir, info)
    if not accelerator.is_main_process:
        return _run(cfg, accelerator, info, run_dir, pool_dir)
    with run_lock(run_dir):
        return _run(cfg, accelerator, info, run_dir, pool_dir)


def setup_context(cfg: TrainConfig, accelerator, target, info: TargetInfo, train_rows: list[dict],
                  dataset: ResponseDataset, run_dir: Path) -> SetupContext:
    """What a kind's setup reads of this run besides its own options."""
    return SetupContext(accelerator, target, info, train_rows, dataset, run_dir, cfg.domain, cfg.train.seed,
                        Path(cfg.export.pools_dir))


def run_prerequisite(cfg: TrainConfig, setup: KindTraining, ctx: SetupContext) -> None:
    """Train first the drafter the kind's setup starts from when it is missing (`KindTraining.prerequisite`: e.g. the
    pool's general Llama drafter a domain fine-tune starts from), on this run's target, pools and data settings."""
    pre = setup.prerequisite(cfg.options(), ctx)
    if pre is None:
        return
    recipe = f"recipes/{pre.domain}/{setup.folder}.yaml"
    ctx.accelerator.print(f"no {pre.domain} drafter at {pre.path}: pretraining it first ({recipe})")
    first = load_config(TrainConfig, recipe, [f"domain={pre.domain}", f"drafter={setup.kind}", f"target={cfg.target}",
                                              f"export.pools_dir={cfg.export.pools_dir}", *pre.overrides])
    first.data.gen = dict(cfg.data.gen)
    run(first, ctx.accelerator, ctx.info)


def _run(cfg: TrainConfig, accelerator, info: TargetInfo, run_dir: Path, pool_dir: Path) -> dict:
    # 1. target and data
    setup = training_for(cfg.drafter)
    kind, folder = setup.kind, setup.folder
    dtype = target_dtype(cfg.dtype, accelerator.device, info, "batch")  # rule: one precision per pipeline
    accelerator.print(f"target {info.name} in {dtype_name(dtype)} (dtype {cfg.dtype})")
    with no_zero3_init(accelerator):
        target, tok = load_target(info, accelerator.device, dtype)
    train_rows, held_rows, provenance = prepare_rows(cfg, info, tok, accelerator)
    if cfg.eval.max_sequences:
        held_rows = held_rows[: cfg.eval.max_sequences]
    dataset = ResponseDataset(train_rows, cfg.train.max_len)

    # 2. drafter and loss (the target-feature cache is built here: its time is part of training's cost), after the
    # drafter it starts from where the kind declares one that is missing
    ctx = setup_context(cfg, accelerator, target, info, train_rows, dataset, run_dir)
    run_prerequisite(cfg, setup, ctx)
    t0 = time.perf_counter()
    model, loss_fn, extra = setup.setup(cfg.options(), ctx)
    setup_seconds = time.perf_counter() - t0
    if accelerator.is_main_process:
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(run_dir / "config.json", to_dict(cfg))

    # 3. train (a drafter without weights, e.g. a suffix index, has none: it was built from the data)
    if loss_fn is not None:
        hook = curve_hook(cfg.train.curve_minutes, accelerator, kind, target, held_rows, tok.pad_token_id, run_dir,
                          setup_seconds, depth=cfg.eval.depth, max_len=cfg.train.max_len,
                          batch_size=cfg.eval.batch_size)
        model = train(accelerator, cfg.train, model, dataset, tok.pad_token_id, loss_fn, run_dir,
                      desc=f"train {cfg.domain}-{folder}", on_step=hook)
        state = accelerator.get_state_dict(model)  # gathered on every rank (ZeRO-3 partitions it)
        model = accelerator.unwrap_model(model)
    if not accelerator.is_main_process:
        accelerator.wait_for_everyone()
        return {}
    if loss_fn is not None:
        model.load_state_dict(state, strict=False)
        if hasattr(model, "merge_and_unload"):  # a LoRA fine-tune (peft): its adapters merged into the weights
            setup.keep_adapters(model)  # (a kind that keeps them exports them beside the merged weights)
            model = model.merge_and_unload()
        model = model.float().to(accelerator.device).eval()

    # 4. evaluate on the held-out split
    res = {} if cfg.eval.skip else evaluate(kind, model, target, held_rows, cfg.eval.depth, cfg.train.max_len,
                                            tok.pad_token_id, cfg.eval.batch_size)
    if res:
        res.update(domain=cfg.domain, drafter=folder, target=info.name, target_dtype=dtype_name(dtype))
        atomic_write_json(run_dir / "eval.json", res)
        print(format_table(res, f"{cfg.domain}-{folder} on {info.name}, held-out {cfg.domain} prompts"))

    # 5. export to the pool (the manifest is checked again before the head is written: nothing half-updated)
    name = f"{cfg.domain}-{folder}"
    check_manifest(pool_dir, info)
    meta = {"format": "draftpool-drafter/1", "kind": kind, "domain": cfg.domain, "drafter": folder,
            "target": info.name, "target_weights_sha256": info.weights_sha256, "target_dtype": dtype_name(dtype),
            "precision": precision_summary(dtype, cfg.dtype, accelerator.device, info, "batch"),
            "draftpool_version": draftpool.__version__, "data_provenance": _strip(provenance),
            "train_config": to_dict(cfg), **({"eval": res} if res else {}), **extra}
    model = model.cpu() if isinstance(model, torch.nn.Module) else model
    get_kind(kind).write(model, pool_dir / name, info, meta, tokenizer=tok,
                         **setup.write_options(cfg.options(), cfg.export))
    update_pool_manifest(pool_dir, info, name, {
        "path": name, "kind": kind, "domain": cfg.domain, "drafter": folder, "target_dtype": dtype_name(dtype),
        **extra,
        **({"eval": {k: res[k] for k in EXPORTED}} if res else {})})
    print(f"exported {pool_dir / name} (manifest {pool_dir / 'pool.json'})")
    accelerator.wait_for_everyone()
    return res


def _strip(prov: dict) -> dict:
    return {k: v for k, v in prov.items() if k != "chat_template"}


def make_accelerator(cfg: TrainConfig, run_dir_hint: str = "runs"):
    """The run's Accelerator (accumulation and precision from the config), with the shim's fixes applied (an
    accelerate version the shim was not checked on is refused first). accelerate's process-wide state is forgotten
    first: a run after another in the same process (a notebook, a sweep, build_pool) gets its own precision whatever
    the earlier one's was."""
    from accelerate import Accelerator

    check_accelerate()
    mixed_precision = resolve_mixed_precision(cfg.train.mixed_precision)
    forget_accelerate_state()
    # accumulation is the recipe's train.grad_accum; DeepSpeed's "auto" takes it from here
    os.environ.pop("ACCELERATE_GRADIENT_ACCUMULATION_STEPS", None)
    accelerator = Accelerator(gradient_accumulation_steps=cfg.train.grad_accum, mixed_precision=mixed_precision,
                              log_with="tensorboard", project_dir=run_dir_hint)
    fix_deepspeed_cpu_ranks(accelerator)
    use_the_cores(accelerator)
    return accelerator


@contextmanager
def accelerated(cfg: TrainConfig, run_dir_hint: str = "runs") -> Iterator:
    """`make_accelerator`'s Accelerator for one run; on exit the process is as it was before: accelerate's state
    forgotten, torch's thread count (`use_the_cores`) and the environment variables the run changed restored."""
    threads, environ = torch.get_num_threads(), dict(os.environ)
    try:
        yield make_accelerator(cfg, run_dir_hint)
    finally:
        forget_accelerate_state()
        torch.set_num_threads(threads)
        for key in set(os.environ) - set(environ):
            del os.environ[key]
        os.environ.update({k: v for k, v in environ.items() if os.environ.get(k) != v})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", help=f"one of {', '.join(ALL_DOMAINS)}")
    ap.add_argument("--drafter", default=drafter_names()[0], choices=drafter_names(),
                    help="the drafter kind to train (llama68m: the older name of llama)")
    ap.add_argument("--target", default=None, help=f"hub id or local folder (default {DEFAULT_TARGET})")
    ap.add_argument("--recipe", default=None, help="default: recipes/<domain>/<the kind's folder name>.yaml")
    ap.add_argument("--budget-minutes", type=float, default=None,
                    help="train for about this many minutes (train.budget_minutes: the step count from timed probe "
                         "steps, in place of the recipe's epochs)")
    ap.add_argument("--help-config", action="store_true", help="list every config key and exit")
    args, overrides = ap.parse_known_args(argv)
    if args.help_config:
        print(help_text(TrainConfig))
        return 0
    try:
        if not args.domain:
            raise ConfigError("--domain is required")
        check_domain(args.domain)
        recipe = args.recipe or f"recipes/{args.domain}/{training_for(args.drafter).folder}.yaml"
        extra = [f"domain={args.domain}", f"drafter={args.drafter}"]
        extra += [f"target={args.target}"] if args.target else []
        extra += [f"train.budget_minutes={args.budget_minutes}"] if args.budget_minutes is not None else []
        cfg = load_config(TrainConfig, recipe, overrides + extra)
        info = resolve_target(cfg.target)
        run_dir = Path(cfg.run_dir_for(info.slug))
        check_writable(run_dir, "run_dir")  # before accelerate makes its logging folder there
        with accelerated(cfg, str(run_dir)) as accelerator:
            accelerator.init_trackers("tb")
            run(cfg, accelerator, info)
            accelerator.end_training()
    except (ConfigError, ValueError, NaNLossError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
