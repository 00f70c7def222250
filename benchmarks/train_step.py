"""Where an EAGLE-3 training step's time goes, and what each step-cost lever saves, on the same batches.

    python -m benchmarks.train_step [--domain sql] [--steps 8] [--variants before,compact,rows,new,...] [key=value ...]

Builds the domain's head as `train_drafter.py` would (recipe `recipes/<domain>/eagle3.yaml` + overrides, the same
data and target-feature cache: built first if missing) and, for every variant from the same initial weights, runs
--steps optimizer steps on the same batches (the epoch-0 order; one warm-up step first, not timed). Reported per
variant: seconds per step (mean, and its split: features + teacher, head forward, loss, backward + optimizer) and
the loss at every step, whose largest difference from the first variant's shows whether a lever changes what a
step learns (equal quality per step) or only what it costs. Variants:

    before   the step as of 2026-11-26: teacher through the target's full lm_head, every row at every TTT step
    compact  the compact teacher only (draft-vocabulary rows of lm_head, cached log-sum-exp and top-1)
    rows     TTT steps >= 1 only at the rows a later step takes a loss at
    new      both (today's default)
    ttt3     new, 3 TTT steps instead of the recipe's
    bf16     new under bf16 autocast (native only with avx512_bf16 / AMX; emulated, and slower, elsewhere)

Writes <out>/results.json and <out>/table.md (also printed); a progress line per variant on stderr.
Timings depend on the machine: compare variants within one run only.
"""

from __future__ import annotations

import copy
import json
import time
from contextlib import nullcontext
from pathlib import Path

import torch

from benchmarks import harness
from draftpool.config import ConfigError, load_config
from draftpool.models.eagle3 import EAGLE3
from draftpool.models.kind import Steps
from draftpool.precision import cpu_has_bf16
from training.config import TrainConfig
from training.data import ResponseDataset, collate
from training.kinds.eagle3 import make_eagle3, setup_eagle3
from training.loop import epoch_order
from training.target_cache import cache_dir, cached_features
from training.train_drafter import make_accelerator, prepare_rows, setup_context
from training.ttt import Teacher, ttt_loss

VARIANTS = {  # name -> (compact teacher, live rows only, TTT steps (0: the recipe's), bf16 autocast)
    "before": (False, False, 0, False),
    "compact": (True, False, 0, False),
    "rows": (False, True, 0, False),
    "new": (True, True, 0, False),
    "ttt3": (True, True, 3, False),
    "bf16": (True, True, 0, True),
}


def time_variant(name: str, head0, target, cache_dir: Path, batches: list[dict], ttt_steps: int,
                 weight: float, lr: float) -> dict:
    """Run the batches (the first one untimed) from a copy of head0 -> seconds per step, its split, losses."""
    compact, rows, steps, bf16 = VARIANTS[name]
    steps = steps or ttt_steps
    head = copy.deepcopy(head0).train()
    draft_ids = head.draft_ids
    opt = torch.optim.AdamW([p for p in head.parameters() if p.requires_grad], lr=lr, betas=(0.9, 0.95))
    split = dict.fromkeys(("features", "forward", "loss", "backward"), 0.0)
    losses = []
    for i, batch in enumerate(batches):
        marks = [time.perf_counter()]
        aux, teacher = cached_features(target, cache_dir, batch["index"], batch["input_ids"].shape[1],
                                       draft_ids if compact else None)
        if not compact:  # the full [B,T,V] logits, then the teacher read from them (the 2026-11-26 step)
            teacher = Teacher.from_logits(teacher.on_columns, Steps([], EAGLE3.offset, draft_ids))
        marks.append(time.perf_counter())
        with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else nullcontext():
            _, logits = head(aux, batch["input_ids"], batch["attention_mask"], steps, loss_mask=batch["loss_mask"],
                             all_rows=not rows)
            marks.append(time.perf_counter())
            loss, _ = ttt_loss(Steps(logits, EAGLE3.offset, draft_ids), teacher, batch["loss_mask"], weight)
        marks.append(time.perf_counter())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        marks.append(time.perf_counter())
        losses.append(loss.item())
        if i == 0:  # warm-up
            continue
        for k, a, b in zip(split, marks, marks[1:]):
            split[k] += b - a
    n = max(1, len(batches) - 1)
    per = {k: round(v / n, 3) for k, v in split.items()}
    return {"variant": name, "seconds_per_step": round(sum(per.values()), 3), **per, "ttt_steps": steps,
            "losses": [round(x, 5) for x in losses]}


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.train_step", __doc__)
    harness.add_common(ap, target=False, out="runs/bench/train_step")
    ap.add_argument("--domain", default="sql")
    ap.add_argument("--steps", type=int, default=8, help="timed steps per variant (plus one warm-up)")
    ap.add_argument("--variants", default="before,compact,rows,new,ttt3,bf16")
    args, overrides = ap.parse_known_args(argv)
    names = harness.csv(args.variants)
    if unknown := [v for v in names if v not in VARIANTS]:
        raise ConfigError(f"unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
    cfg = load_config(TrainConfig, f"recipes/{args.domain}/eagle3.yaml",
                      overrides + [f"domain={args.domain}", "drafter=eagle3", "eagle3.target_cache=true"])
    # 1. data, target and the head's initial weights, as train_drafter.py builds them (the recipe names the target)
    accelerator = make_accelerator(cfg)
    loaded = harness.load_target(cfg, device=str(accelerator.device), dtype="float32")
    info, target, tok = loaded.info, loaded.model, loaded.tok
    rows, _, _ = prepare_rows(cfg, info, tok, accelerator)
    dataset = ResponseDataset(rows, cfg.train.max_len)
    run_dir = Path(cfg.run_dir.format(target_slug=info.slug, domain=cfg.domain, drafter=cfg.drafter))
    # builds the feature cache if missing
    setup_eagle3(cfg.eagle3, setup_context(cfg, accelerator, target, info, rows, dataset, run_dir))
    head0 = make_eagle3(cfg.eagle3, target, info, rows, cfg.train.seed)
    order = epoch_order(len(dataset), cfg.train.seed, 0)
    bs = cfg.train.batch_size
    batches = [collate([dataset[i] for i in order[k * bs:(k + 1) * bs]], tok.pad_token_id)
               for k in range(min(args.steps + 1, len(dataset) // bs))]

    # 2. every variant on the same batches
    results = []
    for name in names:
        if VARIANTS[name][3] and not cpu_has_bf16() and accelerator.device.type == "cpu":
            harness.log.warning("%s: this CPU has no native bf16 (avx512_bf16 / AMX): bf16 is emulated", name)
        r = time_variant(name, head0, target, cache_dir(run_dir, target.dtype), batches, cfg.eagle3.ttt_steps,
                         cfg.eagle3.step_weight, cfg.train.lr)
        results.append(r)
        harness.log.info(json.dumps({k: v for k, v in r.items() if k != "losses"}))

    # 3. table
    base, rows = results[0], []
    for r in results:
        same_steps = r["ttt_steps"] == base["ttt_steps"]
        diff = max(abs(a - b) for a, b in zip(r["losses"], base["losses"])) if same_steps else float("nan")
        gain = base["seconds_per_step"] / r["seconds_per_step"]
        rows.append([r["variant"], f"{r['seconds_per_step']:.2f}", f"{gain:.2f}x", f"{r['features']:.2f}",
                     f"{r['forward']:.2f}", f"{r['loss']:.2f}", f"{r['backward']:.2f}", f"{diff:.1e}"])
    table = (f"{cfg.domain}, batch {bs}, {len(batches) - 1} timed steps, {torch.get_num_threads()} threads, "
             f"{accelerator.device}\n\n" + harness.markdown_table(
                 ["variant", "s/step", "x first", "features+teacher", "head forward", "loss", "backward+opt",
                  "max abs loss diff vs first"], rows))
    harness.write_results(args.out, {"domain": cfg.domain, "batch_size": bs, "threads": torch.get_num_threads(),
                                     "results": results}, table)
    print("\n" + table)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
