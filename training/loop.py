"""The accelerate training loop shared by every drafter kind.

Same code single-process CPU, DDP and DeepSpeed ZeRO-2/3 (`accelerate launch --config_file ...`). Gradient
accumulation, a cosine schedule with linear warmup and a floor, gradient clipping, tensorboard through
accelerate's trackers. Full resume: every `save_every` optimizer steps the accelerate state (model, optimizer,
scheduler, RNG) is saved with accelerate's automatic checkpoint naming and rotation (`run_dir/checkpoints/
checkpoint_<n>`, `keep_checkpoints` kept), and the data position is written last (`trainer_state.json`): a folder
without it was cut by a kill and is removed at restart. A restarted run continues from the newest complete checkpoint
and ends with the same weights as a run that was never killed (each epoch's data order is a function of (seed, epoch)).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset, Subset

from draftpool.config import ConfigError, field
from draftpool.io import atomic_write_json
from draftpool.precision import cpu_has_bf16
from draftpool.progress import progress
from training.accelerate_shim import quiet_checkpoint_rotation
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
    budget_minutes: float = field(0.0, help="train for about this many minutes of the loop (the feature cache "
                                            "before it excluded): the step count comes from timed probe steps on "
                                            "the first batches and overrides epochs and max_steps (0 = off)")
    curve_minutes: float = field(0.0, help="each time the training clock passes another N minutes, and at the last "
                                           "step, evaluate on held-out rows and append to run_dir/curve.jsonl, "
                                           "against training wall-clock (evaluation excluded) and response tokens "
                                           "seen (0 = off; benchmarks/learning_curve.py)")
    batch_size: int = field(8, help="sequences per device per micro-step")
    grad_accum: int = field(1, help="micro-steps per optimizer step")
    max_len: int = field(512, help="longest prompt+response in tokens (longer ones are cut)")
    max_grad_norm: float = field(1.0, help="gradient clipping norm (0 = off)")
    seed: int = field(0, help="seed for init and data order")
    mixed_precision: str = field("auto", help="auto (bf16 on a GPU or CPU that computes it natively, else no), no, "
                                              "bf16, fp16")
    save_every: int = field(50, help="checkpoint every N optimizer steps (the unit of resume)")
    keep_checkpoints: int = field(2, help="checkpoints kept on disk")
    log_every: int = field(5, help="log metrics every N optimizer steps")

    def validate(self) -> None:
        for k in ("epochs", "batch_size", "grad_accum", "max_len", "save_every", "keep_checkpoints", "log_every"):
            if getattr(self, k) < 1:
                raise ConfigError(f"train.{k} must be >= 1")
        if self.lr <= 0 or self.max_steps < 0 or not 0 <= self.warmup_ratio < 1:
            raise ConfigError("train.lr must be > 0, train.max_steps >= 0, train.warmup_ratio in [0, 1)")
        if self.budget_minutes < 0 or self.curve_minutes < 0:
            raise ConfigError("train.budget_minutes and train.curve_minutes must be >= 0")
        if self.mixed_precision not in ("auto", "no", "bf16", "fp16"):
            raise ConfigError("train.mixed_precision must be auto, no, bf16 or fp16")


def resolve_mixed_precision(mp: str) -> str:
    """auto -> bf16 autocast where the device computes bf16 natively (a 2-core EPYC with avx512_bf16: 2.84 s per
    EAGLE-3 step instead of 3.66, README ablation), else no."""
    if mp != "auto":
        return mp
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "no"
    # rule: DeepSpeed on CPU keeps its config's precision (its engine does not take accelerate's CPU autocast)
    deepspeed = os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() == "true"
    return "bf16" if cpu_has_bf16() and not deepspeed else "no"


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


def resume_point(accelerator, run_dir: Path, keep: int) -> Path | None:
    """Point accelerate's automatic checkpoint naming at run_dir/checkpoints (rotation: `keep` kept), remove the
    folders a kill left incomplete, and return the newest complete checkpoint (None: start fresh). The next save
    gets the number after it."""
    pc = accelerator.project_configuration
    pc.set_directories(str(run_dir))
    pc.automatic_checkpoint_naming, pc.total_limit = True, keep
    quiet_checkpoint_rotation()  # accelerate logs one line per rotated save: dropped (training/accelerate_shim.py)
    ckpt_dir = run_dir / "checkpoints"
    found = sorted((int(m.group(1)), p) for p in ckpt_dir.glob("checkpoint_*")
                   if (m := re.fullmatch(r"checkpoint_(\d+)", p.name)))
    complete = [(n, p) for n, p in found if (p / "trainer_state.json").is_file()]
    if accelerator.is_main_process:
        for _, p in found:
            if (p / "trainer_state.json").is_file():
                continue
            shutil.rmtree(p, ignore_errors=True)  # rule: a checkpoint without its data position is incomplete
    accelerator.wait_for_everyone()
    pc.iteration = complete[-1][0] + 1 if complete else 0
    return complete[-1][1] if complete else None


# (model, step, total steps, training seconds, response tokens so far)
OnStep = Callable[[torch.nn.Module, int, int, float, int], None]


def train(accelerator, cfg: OptimConfig, model: torch.nn.Module, dataset: Dataset, pad_id: int,
          compute_loss: Callable[[torch.nn.Module, dict], tuple[torch.Tensor, dict]], run_dir: Path,
          desc: str = "train", on_step: OnStep | None = None) -> torch.nn.Module:
    """Train `model` (its trainable parameters) on `dataset`; returns the prepared (wrapped) model. `on_step`
    (e.g. the learning-curve evaluation) runs after every optimizer step, its own time kept out of the clock."""
    # 1. plan: micro-batches per epoch (per process) and optimizer steps
    world = accelerator.num_processes
    batches_per_epoch = math.ceil(len(dataset) / (cfg.batch_size * world))
    steps_per_epoch = max(1, batches_per_epoch // cfg.grad_accum)
    total_steps = cfg.max_steps or steps_per_epoch * cfg.epochs

    # 2. optimizer and schedule
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ConfigError("the drafter has no trainable parameter")
    opt = torch.optim.AdamW(params, lr=cfg.lr, betas=tuple(cfg.betas), weight_decay=cfg.weight_decay)
    plugin = accelerator.state.deepspeed_plugin
    if cfg.budget_minutes > 0 and plugin is not None:
        raise ConfigError("train.budget_minutes is not supported under DeepSpeed (its engine counts the probe "
                          "steps): set train.max_steps")
    if plugin is not None:  # DeepSpeed's batch geometry, all three set (accelerate's "auto" fill gets the total wrong)
        plugin.deepspeed_config.update(train_micro_batch_size_per_gpu=cfg.batch_size,
                                       gradient_accumulation_steps=cfg.grad_accum,
                                       train_batch_size=cfg.batch_size * cfg.grad_accum * world,
                                       # rule: DeepSpeed clips inside its engine (clip_grad_norm_ is a no-op there)
                                       gradient_clipping=cfg.max_grad_norm)
    # the scheduler is stepped here once per optimizer step (accelerate's wrapper would step it once per process)
    model, opt = accelerator.prepare(model, opt)
    replan_at = 0  # the optimizer step at which a time budget's probe-made plan is checked against measured steps
    if cfg.budget_minutes > 0:
        total_steps, replanned = budget_steps(accelerator, cfg, model, dataset, pad_id, compute_loss, run_dir)
        replan_at = 0 if replanned else max(2, total_steps // 10)
    schedule = CosineSchedule(max(1, int(cfg.warmup_ratio * total_steps)), total_steps, cfg.min_lr_ratio)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)  # its state (warmup, total) rides in the checkpoints
    accelerator.register_for_checkpointing(sched)

    # 3. resume from the newest complete checkpoint
    step, epoch, skip = 0, 0, 0
    clock = _Clock()
    last = resume_point(accelerator, run_dir, cfg.keep_checkpoints)
    if last is not None:
        accelerator.load_state(str(last))
        state = json.loads((last / "trainer_state.json").read_text())
        step, epoch, skip = state["step"], state["epoch"], state["batch_in_epoch"]
        clock.seconds, clock.tokens = state.get("train_seconds", 0.0), state.get("tokens", 0)
        accelerator.print(f"resuming from {last} (step {step}/{total_steps})")

    # 4. train
    clip = model.gradient_clipping() if plugin is not None else cfg.max_grad_norm  # what the engine applies
    accelerator.print(f"training on {accelerator.num_processes} process(es), {accelerator.distributed_type}, "
                      f"{len(dataset)} sequences, {total_steps} optimizer steps, gradient clipping {clip}")
    bar = progress(total_steps, desc, unit="step", initial=step, disable=not accelerator.is_local_main_process)
    model.train()
    clock.start()
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
            clock.tokens += int(batch["loss_mask"].sum()) * world
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
            if step == replan_at:
                total_steps = schedule.total = bar.total = replan_budget(accelerator, cfg, step, clock.elapsed(),
                                                                         run_dir)
            if step % cfg.log_every == 0 or step == total_steps:
                log = {"loss": loss.item(), "lr": sched.get_last_lr()[0], **metrics}
                accelerator.log({k: v for k, v in log.items() if not k.startswith("n_")}, step=step)
                bar.set_postfix(loss=f"{loss.item():.3f}", top1=f"{metrics.get('top1_0', float('nan')):.2f}")
            if on_step is not None:
                with clock.paused():
                    on_step(model, step, total_steps, clock.elapsed(), clock.tokens)
            if step % cfg.save_every == 0 or step == total_steps:
                next_epoch, next_skip = (epoch + 1, 0) if batch_idx >= n_usable else (epoch, batch_idx)
                with clock.paused():
                    save_checkpoint(accelerator, step, next_epoch, next_skip, clock)
        epoch, skip = epoch + 1, 0
    bar.close()
    return model


def save_checkpoint(accelerator, step: int, epoch: int, batch_in_epoch: int, clock: _Clock | None = None) -> None:
    """accelerate state into the next numbered checkpoint (accelerate rotates the old ones), then the data position
    (and the training clock): a kill before that last write leaves a folder `resume_point` discards."""
    path = Path(accelerator.save_state())
    if accelerator.is_main_process:
        atomic_write_json(path / "trainer_state.json",
                          {"step": step, "epoch": epoch, "batch_in_epoch": batch_in_epoch,
                           **({"train_seconds": clock.elapsed(), "tokens": clock.tokens} if clock else {})})
    accelerator.wait_for_everyone()


class _Clock:
    """Training wall-clock (seconds so far, carried over a resume) with pauses for evaluation and checkpoints, and
    the response tokens trained on."""

    def __init__(self):
        self.seconds, self.tokens, self._since = 0.0, 0, None

    def start(self) -> None:
        self._since = time.perf_counter()

    def elapsed(self) -> float:
        return self.seconds + (time.perf_counter() - self._since if self._since is not None else 0.0)

    @contextmanager
    def paused(self):
        self.seconds, self._since = self.elapsed(), None
        try:
            yield
        finally:
            self.start()


@dataclass
class CosineSchedule:
    """Learning-rate factor of an optimizer step: linear warmup from 0, then one cosine half-wave down to `floor` at
    `total` (transformers' get_cosine_with_min_lr_schedule_with_warmup, equal at every step, tested): our own
    object, not the library's closure, because a time budget's re-plan moves `total` mid-run."""

    warmup: int
    total: int
    floor: float

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return step / max(1, self.warmup)  # rule: linear warmup from 0
        done = (step - self.warmup) / max(1, self.total - self.warmup)  # share of the decay behind us
        return max(0.0, self.floor + (1 - self.floor) * 0.5 * (1 + math.cos(math.pi * done)))  # rule: cosine to floor


def budget_steps(accelerator, cfg: OptimConfig, model, dataset: Dataset, pad_id: int, compute_loss,
                 run_dir: Path) -> tuple[int, bool]:
    """Optimizer steps that fit train.budget_minutes: the forward + backward of the first batches of epoch 0 timed
    (the first one a warm-up; gradients dropped, no optimizer step), times grad_accum; and whether the plan was
    already re-planned from measured steps (`replan_budget`). Kept in run_dir/budget.json so a resumed run keeps its
    plan."""
    plan_path = run_dir / "budget.json"
    if plan_path.is_file():
        plan = json.loads(plan_path.read_text())
        if plan.get("budget_minutes") == cfg.budget_minutes and plan.get("batch_size") == cfg.batch_size:
            return int(plan["steps"]), "replanned_at" in plan
    order = epoch_order(len(dataset), cfg.seed, 0)
    times = []
    for k in range(3):
        idx = order[(k * cfg.batch_size) % len(dataset):][: cfg.batch_size]
        batch = {key: v.to(accelerator.device) for key, v in collate([dataset[i] for i in idx], pad_id).items()}
        t0 = time.perf_counter()
        loss, _ = compute_loss(model, batch)
        accelerator.backward(loss)
        times.append(time.perf_counter() - t0)
        model.zero_grad(set_to_none=True)
    # rule: every process takes the slowest process's step time, so all plan the same number of steps
    per_step = float(accelerator.reduce(torch.tensor([sum(times[1:]) / 2 * cfg.grad_accum],
                                                     device=accelerator.device), reduction="max")[0])
    steps = max(1, int(cfg.budget_minutes * 60 / per_step))
    if accelerator.is_main_process:
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(plan_path, {"budget_minutes": cfg.budget_minutes, "batch_size": cfg.batch_size,
                                      "seconds_per_step": round(per_step, 4), "steps": steps})
    accelerator.print(f"train.budget_minutes={cfg.budget_minutes}: {per_step:.2f} s per step -> {steps} steps")
    return steps, False


def replan_budget(accelerator, cfg: OptimConfig, step: int, elapsed: float, run_dir: Path) -> int:
    """The budget's step count re-planned once, a tenth of the way in, from the measured steps (optimizer, clipping
    and data included, which the probe leaves out; its few batches can also be unrepresentative): the steps left
    are the minutes left over the mean step so far. Written to budget.json (a resumed run keeps it)."""
    # rule: every process takes the slowest process's mean step, so all plan the same number of steps
    per_step = float(accelerator.reduce(torch.tensor([elapsed / step], device=accelerator.device),
                                        reduction="max")[0])
    steps = step + max(1, int((cfg.budget_minutes * 60 - elapsed) / per_step))
    plan_path = run_dir / "budget.json"
    if accelerator.is_main_process:
        plan = json.loads(plan_path.read_text())
        atomic_write_json(plan_path, {**plan, "probe_steps": plan["steps"], "steps": steps, "replanned_at": step,
                                      "measured_seconds_per_step": round(per_step, 4)})
    accelerator.print(f"train.budget_minutes={cfg.budget_minutes}: {per_step:.2f} s per step measured over the first "
                      f"{step} steps -> {steps} steps in all (re-planned once)")
    return steps
