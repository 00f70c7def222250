"""The accelerate training loop shared by every drafter kind.

Same code single-process CPU, DDP and DeepSpeed ZeRO-2/3 (`accelerate launch --config_file ...`). Gradient
accumulation, cosine schedule with linear warmup, gradient clipping, tensorboard through accelerate's trackers.
Full resume: every `save_every` optimizer steps the accelerate state (model, optimizer, scheduler, RNG) and the data
position are saved atomically; a restarted run continues from the newest complete checkpoint and ends with the same
weights as a run that was never killed (the data order of each epoch is a pure function of (seed, epoch)).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset, Subset
from tqdm.auto import tqdm

from draftpool.config import ConfigError, field
from draftpool.io import atomic_write_json
from training.data import collate


class NaNLossError(RuntimeError):
    pass


@dataclass
class OptimConfig:
    lr: float = field(3e-4, help="peak learning rate")
    weight_decay: float = field(0.0, help="AdamW weight decay")
    betas: list[float] = field(default_factory=lambda: [0.9, 0.95], help="AdamW betas")
    warmup_ratio: float = field(0.05, help="share of the optimizer steps spent in linear warmup")
    min_lr_ratio: float = field(0.1, help="cosine floor as a share of lr")
    epochs: int = field(1, help="passes over the data (ignored when max_steps > 0)")
    max_steps: int = field(0, help="optimizer steps to run (0 = from epochs)")
    batch_size: int = field(8, help="sequences per device per micro-step")
    grad_accum: int = field(1, help="micro-steps per optimizer step")
    max_len: int = field(512, help="longest prompt+response in tokens (longer ones are cut)")
    max_grad_norm: float = field(1.0, help="gradient clipping norm (0 = off)")
    seed: int = field(0, help="seed for init and data order")
    mixed_precision: str = field("auto", help="auto (bf16 on a GPU that has it, else no), no, bf16, fp16")
    save_every: int = field(50, help="checkpoint every N optimizer steps (the unit of resume)")
    keep_checkpoints: int = field(2, help="checkpoints kept on disk")
    log_every: int = field(5, help="log metrics every N optimizer steps")

    def validate(self) -> None:
        for k in ("epochs", "batch_size", "grad_accum", "max_len", "save_every", "keep_checkpoints", "log_every"):
            if getattr(self, k) < 1:
                raise ConfigError(f"train.{k} must be >= 1")
        if self.lr <= 0 or self.max_steps < 0 or not 0 <= self.warmup_ratio < 1:
            raise ConfigError("train.lr must be > 0, train.max_steps >= 0, train.warmup_ratio in [0, 1)")
        if self.mixed_precision not in ("auto", "no", "bf16", "fp16"):
            raise ConfigError("train.mixed_precision must be auto, no, bf16 or fp16")


def resolve_mixed_precision(mp: str) -> str:
    if mp != "auto":
        return mp
    return "bf16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "no"


def cosine_with_warmup(step: int, total: int, warmup: int, min_ratio: float) -> float:
    """Multiplier of the peak lr at optimizer step `step` (0-based)."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


def latest_checkpoint(ckpt_dir: Path) -> Path | None:
    done = sorted(p for p in ckpt_dir.glob("step-*") if (p / "trainer_state.json").exists())
    return done[-1] if done else None


def train(accelerator, cfg: OptimConfig, model: torch.nn.Module, dataset: Dataset, pad_id: int,
          compute_loss: Callable[[torch.nn.Module, dict], tuple[torch.Tensor, dict]], run_dir: Path,
          desc: str = "train") -> torch.nn.Module:
    """Train `model` (its trainable parameters) on `dataset`; returns the prepared (wrapped) model."""
    # 1. plan: micro-batches per epoch (per process) and optimizer steps
    world = accelerator.num_processes
    batches_per_epoch = math.ceil(len(dataset) / (cfg.batch_size * world))
    steps_per_epoch = max(1, batches_per_epoch // cfg.grad_accum)
    total_steps = cfg.max_steps or steps_per_epoch * cfg.epochs
    warmup = max(1, int(cfg.warmup_ratio * total_steps))

    # 2. optimizer and schedule
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ConfigError("the drafter has no trainable parameter")
    opt = torch.optim.AdamW(params, lr=cfg.lr, betas=tuple(cfg.betas), weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, partial(cosine_with_warmup, total=total_steps, warmup=warmup, min_ratio=cfg.min_lr_ratio))
    plugin = accelerator.state.deepspeed_plugin
    if plugin is not None:  # DeepSpeed's batch geometry, all three set (accelerate's "auto" fill gets the total wrong)
        plugin.deepspeed_config.update(train_micro_batch_size_per_gpu=cfg.batch_size,
                                       gradient_accumulation_steps=cfg.grad_accum,
                                       train_batch_size=cfg.batch_size * cfg.grad_accum * world)
    # the scheduler is stepped here once per optimizer step (accelerate's wrapper would step it once per process)
    model, opt = accelerator.prepare(model, opt)
    accelerator.register_for_checkpointing(sched)

    # 3. resume from the newest complete checkpoint
    ckpt_dir = run_dir / "checkpoints"
    step, epoch, skip = 0, 0, 0
    last = latest_checkpoint(ckpt_dir)
    if last is not None:
        accelerator.load_state(str(last))
        state = json.loads((last / "trainer_state.json").read_text())
        step, epoch, skip = state["step"], state["epoch"], state["batch_in_epoch"]
        accelerator.print(f"resuming from {last} (step {step}/{total_steps})")

    # 4. train
    accelerator.print(f"training on {accelerator.num_processes} process(es), {accelerator.distributed_type}, "
                      f"{len(dataset)} sequences, {total_steps} optimizer steps")
    bar = tqdm(total=total_steps, initial=step, desc=desc, disable=not accelerator.is_local_main_process)
    model.train()
    while step < total_steps:
        order = epoch_order(len(dataset), cfg.seed, epoch)
        loader = DataLoader(Subset(dataset, order), batch_size=cfg.batch_size, shuffle=False,
                            collate_fn=partial(collate, pad_id=pad_id))
        loader = accelerator.prepare_data_loader(loader)
        loader = accelerator.skip_first_batches(loader, skip) if skip else loader
        batch_idx = skip
        n_usable = steps_per_epoch * cfg.grad_accum  # drop a trailing partial accumulation group
        for batch in loader:
            if batch_idx >= n_usable or step >= total_steps:
                break
            with accelerator.accumulate(model):
                loss, metrics = compute_loss(model, batch)
                if not torch.isfinite(loss):
                    raise NaNLossError(f"loss is {loss.item()} at step {step} (epoch {epoch}, batch {batch_idx}): "
                                       f"lower train.lr or check the data; no checkpoint was written for it")
                accelerator.backward(loss)
                if accelerator.sync_gradients and cfg.max_grad_norm > 0:
                    accelerator.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                opt.step()
                if accelerator.sync_gradients:
                    sched.step()
                opt.zero_grad()
            batch_idx += 1
            if batch_idx % cfg.grad_accum:
                continue
            step += 1
            bar.update(1)
            if step % cfg.log_every == 0 or step == total_steps:
                log = {"loss": loss.item(), "lr": sched.get_last_lr()[0], **metrics}
                accelerator.log({k: v for k, v in log.items() if not k.startswith("n_")}, step=step)
                bar.set_postfix(loss=f"{loss.item():.3f}", top1=f"{metrics.get('top1_0', float('nan')):.2f}")
            if step % cfg.save_every == 0 or step == total_steps:
                next_epoch, next_skip = (epoch + 1, 0) if batch_idx >= n_usable else (epoch, batch_idx)
                save_checkpoint(accelerator, ckpt_dir, step, next_epoch, next_skip, cfg.keep_checkpoints)
        epoch, skip = epoch + 1, 0
    bar.close()
    return model


def save_checkpoint(accelerator, ckpt_dir: Path, step: int, epoch: int, batch_in_epoch: int, keep: int) -> None:
    """accelerate state into a temp folder, then renamed: a kill mid-save leaves the previous checkpoint usable."""
    final = ckpt_dir / f"step-{step:07d}"
    tmp = ckpt_dir / f".tmp-step-{step:07d}"
    if accelerator.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        atomic_write_json(tmp / "trainer_state.json", {"step": step, "epoch": epoch, "batch_in_epoch": batch_in_epoch})
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        for old in sorted(p for p in ckpt_dir.glob("step-*"))[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()
