"""Train a domain drafter for a target: self-distill (if needed) -> train -> evaluate -> export to the pool.

    accelerate launch --config_file recipes/accelerate_configs/single.yaml train_drafter.py --domain sql \
        [--drafter eagle3|llama68m|suffix] [--target ID_OR_PATH] [--budget-minutes N] [key=value ...]

Multi-GPU / DeepSpeed: `accelerate launch --config_file recipes/accelerate_configs/zero2.yaml train_drafter.py ...`.
The recipe is `recipes/<domain>/<drafter>.yaml`; `python train_drafter.py --help-config` lists every key.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import torch

import draftpool
from data_gen.domains import ALL_DOMAINS, GENERAL, check_domain
from data_gen.generate import DataGenConfig, data_dir_for, ensure_data, load_distilled, render_prompt
from data_gen.user_data import UserData, load_user_rows, user_split
from draftpool.config import ConfigError, build, deep_merge, field, help_text, load_config, read_yaml, to_dict
from draftpool.io import atomic_write_json, check_writable, run_lock
from draftpool.models import get_kind
from draftpool.models.eagle3 import (
    EAGLE3,
    Eagle3Head,
    check_aux_layers,
    default_aux_layers,
    head_config,
    select_draft_vocab,
)
from draftpool.models.kind import Steps
from draftpool.models.llama import build_drafter, from_target_layers, pick_preset
from draftpool.models.suffix import build_suffix
from draftpool.pool import check_manifest, load_eagle3, load_llama, update_pool_manifest
from draftpool.target import DEFAULT_TARGET, TargetInfo, load_target, resolve_target
from training.data import ResponseDataset, response_token_counts
from training.evaluate import EXPORTED, curve_hook, evaluate, format_table, target_forward
from training.loop import NaNLossError, OptimConfig, resolve_mixed_precision, train
from training.losses import drafter_loss
from training.target_cache import build_cache, cached_features
from training.ttt import ttt_loss

# --drafter (a recipe's drafter) -> the pool kind it exports
DRAFTERS = {"eagle3": "eagle3", "llama68m": "llama", "suffix": "suffix"}


@dataclass
class DataConfig:
    recipe: str = field("recipes/{domain}/data_gen.yaml", help="data-generation recipe used when data is missing")
    gen: dict[str, Any] = field(default_factory=dict, help="keys overriding that recipe, e.g. data.gen.batch_size=8")
    user_dataset: UserData | None = field(None, help="train on your own prompt/response table instead")
    max_train_answers: int = field(0, help="train on this many answers of the data only (0 = all): a seeded "
                                           "sample, each smaller one inside every larger one (data-size curves)")


@dataclass
class Eagle3Options:
    aux_layers: list[int] = field(default_factory=list, help="HF hidden_states indices ([] = 2, N//2, N-3)")
    draft_vocab_size: int = field(0, help="reduced draft vocabulary (0 = min(32000, target vocab // 4))")
    ttt_steps: int = field(7, help="unrolled training-time-test steps")
    step_weight: float = field(0.8, help="loss weight of TTT step j is step_weight**j")
    accept_weight: float = field(0.0, help="add this weight times -log(1 - TV(target, head)) to each TTT step's "
                                           "cross-entropy: a loss on the acceptance probability itself (0 = off)")
    target_cache: bool = field(False, help="compute the target's features once into run_dir/target_cache instead "
                                           "of a target forward per batch (final hidden state -> lm_head)")
    init_from_target: bool = field(False, help="start the head's lm_head from the target's output-embedding rows of "
                                               "the draft vocabulary and its final norm from the target's")
    freeze_lm_head: bool = field(False, help="keep the lm_head fixed (with init_from_target: the target's rows)")
    init_from: str = field("", help="an exported EAGLE-3 head of the same target to start from (e.g. the pool's "
                                    "general head): its layers and norms, and its lm_head rows for the tokens both "
                                    "draft vocabularies hold; the draft vocabulary is still chosen from this data")


@dataclass
class LlamaOptions:
    preset: str = field("auto", help="auto, llama-68m or llama-tiny (auto: llama-tiny for targets < 1B params)")
    loss: Literal["ce", "fkl", "rkl", "jsd", "tvd"] = field("fkl", help="hard CE on the data or a distillation loss")
    init: str = field("pretrained", help="scratch | pretrained (the pool's general drafter, trained first if "
                                         "missing) | target:N (the target's first N layers, embeddings, norm and "
                                         "head; Llama targets) | a drafter folder")
    finetune: Literal["full", "lora"] = field("full", help="domain fine-tune of all weights or LoRA adapters")
    lora_r: int = field(16, help="LoRA rank")
    lora_alpha: int = field(32, help="LoRA alpha")


@dataclass
class SuffixOptions:
    depth: int = field(32, help="suffix index: tokens of every suffix it sorts on (longest match < depth)")
    max_tokens: int = field(4_000_000, help="indexed tokens kept; past it the oldest segments go (served answers)")
    segment_tokens: int = field(32768, help="tokens of a segment before it is frozen (served answers)")
    min_prob: float = field(0.1, help="a chain stops where its estimated path probability falls below this")
    max_spec_factor: float = field(2.0, help="a chain drafts at most this many tokens per matched token")
    n_min: int = field(2, help="smallest n-gram matched in the request itself")
    n_max: int = field(8, help="largest n-gram matched in the request itself")


@dataclass
class EvalConfig:
    depth: int = field(7, help="chain depth for the expected accepted length")
    max_sequences: int = field(0, help="held-out sequences to evaluate (0 = all)")
    batch_size: int = field(8, help="evaluation batch size")
    skip: bool = field(False, help="export without the held-out evaluation (build_pool writes each drafter's "
                                   "evaluation from the matrix, which measures the same rows)")


@dataclass
class ExportConfig:
    pools_dir: str = field("pools", help="pools root; a drafter goes to <pools_dir>/<target-slug>/<domain>-<drafter>")
    speculators: bool = field(False, help="also write the speculators layout (EAGLE-3 heads)")
    speculative_tokens: int = field(5, help="speculative token count recorded in the speculators config")


@dataclass
class TrainConfig:
    domain: str = field(help=f"one of {', '.join(ALL_DOMAINS)}")
    drafter: Literal["eagle3", "llama68m", "suffix"] = field("eagle3", help="EAGLE-3 head, independent Llama "
                                                                           "drafter, or suffix index (no training)")
    target: str = field(DEFAULT_TARGET, help="hub id, local folder, or the embedded default")
    run_dir: str = field("runs/train/{target_slug}/{domain}-{drafter}", help="checkpoints, logs, eval")
    data: DataConfig = field(default_factory=DataConfig, help="training data")
    eagle3: Eagle3Options = field(default_factory=Eagle3Options, help="EAGLE-3 head options")
    llama: LlamaOptions = field(default_factory=LlamaOptions, help="independent drafter options")
    suffix: SuffixOptions = field(default_factory=SuffixOptions, help="suffix index options (seeded from the data)")
    train: OptimConfig = field(default_factory=OptimConfig, help="optimisation")
    eval: EvalConfig = field(default_factory=EvalConfig, help="held-out evaluation")
    export: ExportConfig = field(default_factory=ExportConfig, help="pool export")

    def validate(self) -> None:
        if self.data.user_dataset is None:
            check_domain(self.domain)
        for key, value, low in (("eagle3.ttt_steps", self.eagle3.ttt_steps, 1), ("eval.depth", self.eval.depth, 1),
                                ("eval.batch_size", self.eval.batch_size, 1),
                                ("eval.max_sequences", self.eval.max_sequences, 0),
                                ("data.max_train_answers", self.data.max_train_answers, 0),
                                ("eagle3.draft_vocab_size", self.eagle3.draft_vocab_size, 0),
                                ("llama.lora_r", self.llama.lora_r, 1), ("llama.lora_alpha", self.llama.lora_alpha, 1),
                                ("export.speculative_tokens", self.export.speculative_tokens, 1)):
            if value < low:
                raise ConfigError(f"{key} must be >= {low}, got {value}")
        if not self.eagle3.step_weight > 0 or self.eagle3.accept_weight < 0:
            raise ConfigError(f"eagle3.step_weight must be > 0 and eagle3.accept_weight >= 0, got "
                              f"{self.eagle3.step_weight}, {self.eagle3.accept_weight}")
        sx = self.suffix
        if sx.depth < 2 or sx.max_tokens < 1 or sx.segment_tokens < 1 or not 1 <= sx.n_min <= sx.n_max:
            raise ConfigError("suffix: depth >= 2, max_tokens and segment_tokens >= 1, 1 <= n_min <= n_max")
        if not (0 <= sx.min_prob < 1 and sx.max_spec_factor > 0):
            raise ConfigError(f"suffix: min_prob in [0, 1) and max_spec_factor > 0, got {sx.min_prob}, "
                              f"{sx.max_spec_factor}")


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


def make_eagle3(cfg: TrainConfig, target, info: TargetInfo, train_rows: list[dict]) -> Eagle3Head:
    layers = cfg.eagle3.aux_layers or default_aux_layers(info.num_layers)
    check_aux_layers(layers, info.num_layers)
    vd = cfg.eagle3.draft_vocab_size or min(32000, info.vocab_size // 4)
    d2t, t2d = select_draft_vocab(response_token_counts(train_rows, info.vocab_size), vd)
    torch.manual_seed(cfg.train.seed)
    head = Eagle3Head(head_config(target.config, vd, layers))
    head.embed_tokens.weight.data.copy_(target.get_input_embeddings().weight.data.float())
    head.d2t.copy_(d2t)
    head.t2d.copy_(t2d)
    if cfg.eagle3.init_from_target:
        init_head_from_target(head, target)
    if cfg.eagle3.init_from:
        source = load_eagle3(cfg.eagle3.init_from, info, target.get_input_embeddings().weight)
        if source.config.eagle_aux_hidden_state_layer_ids != layers:
            raise ConfigError(f"eagle3.init_from {cfg.eagle3.init_from} reads target layers "
                              f"{source.config.eagle_aux_hidden_state_layer_ids}, this head {layers}")
        init_head_from_head(head, source)
    head.lm_head.weight.requires_grad_(not cfg.eagle3.freeze_lm_head)
    return head


def init_head_from_target(head: Eagle3Head, target) -> None:
    """lm_head row d = the target's output-embedding row of target id d + d2t[d]; the final norm's weight = the
    target's final norm (the head's hidden size is the target's). A target without a final RMSNorm of that size
    keeps the head's own norm."""
    out = target.get_output_embeddings().weight.data  # [V,H]
    ids = torch.arange(head.d2t.numel()) + head.d2t.cpu()  # [Vd] target ids of the draft vocabulary
    head.lm_head.weight.data.copy_(out[ids.to(out.device)].float())
    norm = getattr(target.get_decoder(), "norm", None)
    if norm is not None and getattr(norm, "weight", None) is not None and norm.weight.shape == head.norm.weight.shape:
        head.norm.weight.data.copy_(norm.weight.data.float())


@torch.no_grad()
def init_head_from_head(head: Eagle3Head, source: Eagle3Head) -> None:
    """Copy a trained head into a new one: every weight but the draft vocabulary's; lm_head rows of the tokens both
    draft vocabularies hold come from the source, the others keep their initialisation."""
    state = {k: v for k, v in source.state_dict().items() if k.split(".")[0] not in ("lm_head", "d2t", "t2d")}
    head.load_state_dict(state, strict=False)
    src_ids = source.draft_ids.cpu()  # [Vs] target ids, ascending
    ids = head.draft_ids.cpu()  # [Vd]
    pos = torch.searchsorted(src_ids, ids).clamp(max=src_ids.numel() - 1)  # [Vd] candidate source slot
    shared = src_ids[pos] == ids  # [Vd] the token is in both vocabularies
    head.lm_head.weight.data[shared] = source.lm_head.weight.data[pos[shared]].to(head.lm_head.weight.dtype)


def eagle3_loss(model, batch, target, layers, steps, weight, draft_ids, cache_dir=None, accept_weight=0.0):
    if cache_dir is not None:  # the compact teacher: draft-vocabulary rows only (training/target_cache.py)
        aux, teacher = cached_features(target, cache_dir, batch["index"], batch["input_ids"].shape[1], draft_ids)
    else:
        aux, teacher = target_forward(target, batch["input_ids"], batch["attention_mask"], layers)
    _, step_logits = model(aux, batch["input_ids"], batch["attention_mask"], steps, loss_mask=batch["loss_mask"])
    return ttt_loss(Steps(step_logits, EAGLE3.offset, draft_ids), teacher, batch["loss_mask"], weight,
                    accept_weight=accept_weight)


def llama_loss(model, batch, target, kind):
    # hard CE needs no target pass (its training metrics are then skipped; the held-out eval has them all)
    tlogits = None if kind == "ce" else target_forward(target, batch["input_ids"], batch["attention_mask"], None)[1]
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return drafter_loss(logits, tlogits, batch["input_ids"], batch["loss_mask"], kind)


def setup_eagle3(cfg: TrainConfig, accelerator, target, info: TargetInfo, train_rows: list[dict],
                 dataset: ResponseDataset, run_dir: Path):
    """-> (the head to train, its TTT loss, what its manifest entry records)."""
    model = make_eagle3(cfg, target, info, train_rows)
    layers = EAGLE3.aux_layers(model)
    cache_dir = None
    if cfg.eagle3.target_cache:
        cache_dir = run_dir / "target_cache"
        if accelerator.is_main_process:
            data_hash = hashlib.sha256(b"".join(it[0].numpy().tobytes() for it in dataset.items)).hexdigest()
            build_cache(target, dataset, layers, cache_dir, f"{info.weights_sha256} {layers} {data_hash}")
        accelerator.wait_for_everyone()
    loss_fn = partial(eagle3_loss, target=target, layers=layers, steps=cfg.eagle3.ttt_steps,
                      weight=cfg.eagle3.step_weight, draft_ids=model.draft_ids.to(accelerator.device),
                      cache_dir=cache_dir, accept_weight=cfg.eagle3.accept_weight)
    return model, loss_fn, {"aux_layers": layers, "draft_vocab_size": model.config.draft_vocab_size}


def setup_llama(cfg: TrainConfig, accelerator, target, info: TargetInfo, train_rows: list[dict],
                dataset: ResponseDataset, run_dir: Path):
    """-> (the independent drafter to train, its next-token loss, what its manifest entry records)."""
    model, preset, init = make_llama(cfg, target, info, accelerator)
    loss_fn = partial(llama_loss, target=target, kind=cfg.llama.loss)
    return model, loss_fn, {"preset": preset, "init": init, "finetune": cfg.llama.finetune, "loss": cfg.llama.loss}


def make_llama(cfg: TrainConfig, target, info: TargetInfo, accelerator):
    """The drafter to train: from scratch, from a folder, or from the pool's general drafter (trained if missing)."""
    preset = pick_preset(cfg.llama.preset, sum(p.numel() for p in target.parameters()))
    init = cfg.llama.init
    if init.startswith("target:"):
        n = init.split(":", 1)[1]
        if not n.isdigit():
            raise ValueError(f"llama.init target:N needs a layer count, got {init!r}")
        return from_target_layers(target, int(n)).float(), init, init
    if init == "pretrained" and cfg.domain != GENERAL:
        init = str(Path(cfg.export.pools_dir) / info.slug / f"{GENERAL}-llama68m")
        if not (Path(init) / "config.json").is_file():
            accelerator.print(f"no general drafter at {init}: pretraining it first (recipes/general/llama68m.yaml)")
            general = load_config(TrainConfig, "recipes/general/llama68m.yaml",
                                  [f"domain={GENERAL}", "drafter=llama68m", f"target={cfg.target}",
                                   f"export.pools_dir={cfg.export.pools_dir}",
                                   f"llama.preset={preset}"])
            general.data.gen = dict(cfg.data.gen)
            run(general, accelerator, info)
    if init in ("scratch", "pretrained"):
        model = build_drafter(preset, target.config, cfg.train.seed)
    else:
        model = load_llama(init, info)
    if cfg.llama.finetune == "lora":
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(
            r=cfg.llama.lora_r, lora_alpha=cfg.llama.lora_alpha, lora_dropout=0.0,
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
    return model, preset, init


def run(cfg: TrainConfig, accelerator, info: TargetInfo | None = None) -> dict:
    """Data -> models -> train -> evaluate -> export; returns the eval figures. What would fail at the end (an
    output path under a file, a corrupt or foreign pool manifest) fails first; the run holds its run_dir's lock."""
    info = info or resolve_target(cfg.target)
    run_dir = Path(cfg.run_dir.format(target_slug=info.slug, domain=cfg.domain, drafter=cfg.drafter))
    pool_dir = Path(cfg.export.pools_dir) / info.slug
    check_writable(run_dir, "run_dir")
    check_writable(pool_dir, "export.pools_dir")
    check_manifest(pool_dir, info)
    if not accelerator.is_main_process:
        return _run(cfg, accelerator, info, run_dir, pool_dir)
    with run_lock(run_dir):
        return _run(cfg, accelerator, info, run_dir, pool_dir)


def _run(cfg: TrainConfig, accelerator, info: TargetInfo, run_dir: Path, pool_dir: Path) -> dict:
    # 1. target and data
    kind = DRAFTERS[cfg.drafter]
    with _no_zero3_init(accelerator):
        target, tok = load_target(info, accelerator.device)
    train_rows, held_rows, provenance = prepare_rows(cfg, info, tok, accelerator)
    if cfg.eval.max_sequences:
        held_rows = held_rows[: cfg.eval.max_sequences]
    dataset = ResponseDataset(train_rows, cfg.train.max_len)

    # 2. drafter and loss (the target-feature cache is built here: its time is part of training's cost)
    t0 = time.perf_counter()
    model, loss_fn, extra = SETUPS[cfg.drafter](cfg, accelerator, target, info, train_rows, dataset, run_dir)
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
                      desc=f"train {cfg.domain}-{cfg.drafter}", on_step=hook)
        state = accelerator.get_state_dict(model)  # gathered on every rank (ZeRO-3 partitions it)
        model = accelerator.unwrap_model(model)
    if not accelerator.is_main_process:
        accelerator.wait_for_everyone()
        return {}
    if loss_fn is not None:
        model.load_state_dict(state, strict=False)
        if hasattr(model, "merge_and_unload"):  # a LoRA fine-tune (peft): its adapters merged into the weights
            model = model.merge_and_unload()
        model = model.float().to(accelerator.device).eval()

    # 4. evaluate on the held-out split
    res = {} if cfg.eval.skip else evaluate(kind, model, target, held_rows, cfg.eval.depth, cfg.train.max_len,
                                            tok.pad_token_id, cfg.eval.batch_size)
    if res:
        res.update(domain=cfg.domain, drafter=cfg.drafter, target=info.name)
        atomic_write_json(run_dir / "eval.json", res)
        print(format_table(res, f"{cfg.domain}-{cfg.drafter} on {info.name}, held-out {cfg.domain} prompts"))

    # 5. export to the pool (the manifest is checked again before the head is written: nothing half-updated)
    name = f"{cfg.domain}-{cfg.drafter}"
    check_manifest(pool_dir, info)
    meta = {"format": "draftpool-drafter/1", "kind": kind, "domain": cfg.domain, "drafter": cfg.drafter,
            "target": info.name, "target_weights_sha256": info.weights_sha256,
            "draftpool_version": draftpool.__version__, "data_provenance": _strip(provenance),
            "train_config": to_dict(cfg), **({"eval": res} if res else {}), **extra}
    model = model.cpu() if isinstance(model, torch.nn.Module) else model
    get_kind(kind).write(model, pool_dir / name, info, meta, tokenizer=tok, speculators=cfg.export.speculators,
                         speculative_tokens=cfg.export.speculative_tokens)
    update_pool_manifest(pool_dir, info, name, {
        "path": name, "kind": kind, "domain": cfg.domain, "drafter": cfg.drafter, **extra,
        **({"eval": {k: res[k] for k in EXPORTED}} if res else {})})
    print(f"exported {pool_dir / name} (manifest {pool_dir / 'pool.json'})")
    accelerator.wait_for_everyone()
    return res


def setup_suffix(cfg: TrainConfig, accelerator, target, info: TargetInfo, train_rows: list[dict],
                 dataset: ResponseDataset, run_dir: Path):
    """-> (the suffix index seeded with the training sequences, no loss: nothing to train, its settings)."""
    opts = to_dict(cfg.suffix)
    seqs = [list(r["prompt_ids"]) + list(r["response_ids"]) for r in train_rows]
    model = build_suffix(seqs, info.vocab_size, **opts)
    accelerator.print(f"suffix index: {model.index.n_tokens} tokens from {len(seqs)} sequences")
    return model, None, {"suffix": opts, "indexed_tokens": model.index.n_tokens}


SETUPS = {"eagle3": setup_eagle3, "llama68m": setup_llama, "suffix": setup_suffix}  # --drafter -> model and loss
WARM_START = {"eagle3": "eagle3.init_from"}  # --drafter -> the config key that starts it from another folder


def _strip(prov: dict) -> dict:
    return {k: v for k, v in prov.items() if k != "chat_template"}


class _no_zero3_init:
    """Load the frozen target whole even under DeepSpeed ZeRO-3 (only the drafter is partitioned)."""

    def __init__(self, accelerator):
        plugin = accelerator.state.deepspeed_plugin
        self.cm = plugin.zero3_init_context_manager(enable=False) if plugin is not None else None

    def __enter__(self):
        return self.cm.__enter__() if self.cm is not None else None

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc) if self.cm is not None else False


def make_accelerator(cfg: TrainConfig, run_dir_hint: str = "runs"):
    from accelerate import Accelerator

    # accumulation is the recipe's train.grad_accum; DeepSpeed's "auto" takes it from here
    os.environ.pop("ACCELERATE_GRADIENT_ACCUMULATION_STEPS", None)
    accelerator = Accelerator(gradient_accumulation_steps=cfg.train.grad_accum,
                       mixed_precision=resolve_mixed_precision(cfg.train.mixed_precision),
                       log_with="tensorboard", project_dir=run_dir_hint)
    _fix_deepspeed_cpu_ranks(accelerator)
    _use_the_cores(accelerator)
    return accelerator


def _use_the_cores(accelerator) -> None:
    """`accelerate launch` without a config file exports OMP_NUM_THREADS=1, which leaves all but one CPU core idle in
    a single-process CPU run (data generation included): share the cores among the local processes instead.
    DRAFTPOOL_CPU_THREADS overrides the count."""
    if accelerator.device.type != "cpu":
        return
    local = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", accelerator.num_processes)))
    threads = int(os.environ.get("DRAFTPOOL_CPU_THREADS", 0)) or max(1, (os.cpu_count() or 1) // local)
    torch.set_num_threads(threads)


def _fix_deepspeed_cpu_ranks(accelerator) -> None:
    """accelerate (1.15) under DeepSpeed on CPU counts one process per rank although torchrun started several:
    start the gloo group and record the real ranks, so data is sharded and only rank 0 writes."""
    if accelerator.distributed_type != "DEEPSPEED" or int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return
    if accelerator.num_processes > 1:
        return
    import deepspeed

    deepspeed.comm.init_distributed(dist_backend="gloo", auto_mpi_discovery=False)
    from accelerate.state import PartialState

    for state in (PartialState(), accelerator.state):
        state.num_processes = torch.distributed.get_world_size()
        state.process_index = torch.distributed.get_rank()
        state.local_process_index = int(os.environ.get("LOCAL_RANK", state.process_index))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", help=f"one of {', '.join(ALL_DOMAINS)}")
    ap.add_argument("--drafter", default="eagle3", choices=sorted(DRAFTERS))
    ap.add_argument("--target", default=None, help=f"hub id or local folder (default {DEFAULT_TARGET})")
    ap.add_argument("--recipe", default=None, help="default: recipes/<domain>/<drafter>.yaml")
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
        recipe = args.recipe or f"recipes/{args.domain}/{args.drafter}.yaml"
        extra = [f"domain={args.domain}", f"drafter={args.drafter}"]
        extra += [f"target={args.target}"] if args.target else []
        extra += [f"train.budget_minutes={args.budget_minutes}"] if args.budget_minutes is not None else []
        cfg = load_config(TrainConfig, recipe, overrides + extra)
        info = resolve_target(cfg.target)
        run_dir = Path(cfg.run_dir.format(target_slug=info.slug, domain=cfg.domain, drafter=cfg.drafter))
        check_writable(run_dir, "run_dir")  # before accelerate makes its logging folder there
        accelerator = make_accelerator(cfg, str(run_dir))
        accelerator.init_trackers("tb")
        run(cfg, accelerator, info)
        accelerator.end_training()
    except (ConfigError, ValueError, NaNLossError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
