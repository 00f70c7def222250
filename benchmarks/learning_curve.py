"""Learning curves of EAGLE-3 recipe variants: held-out quality against training wall-clock and tokens.

    python -m benchmarks.learning_curve [--domain sql] [--minutes 7] [--every 1.5] [--variants default,ttt3,...]
                                        [--recipe recipes/<domain>/eagle3.yaml] [--out runs/bench/curves]
                                        [key=value ...]

Every variant trains the domain's head with `train_drafter.py` (the recipe, default `recipes/<domain>/eagle3.yaml`,
the variant's overrides, then the extra key=value ones) for the same training wall-clock
(`train.budget_minutes=--minutes`: the step count comes from timed probe steps, so a cheaper step buys more steps), on
the same self-distilled data and the same cached target features (built once, by the first variant: their time is
reported as setup, not per variant). Each time the training clock passes another --every minutes, and at the end,
the head is evaluated on the domain's held-out prompts (`train.curve_minutes`; evaluation is not counted in the
clock): step-0 top-1, acceptance (1 - TV) per depth and the empirical greedy chain (accepted drafts + 1 where every
draft is the target's greedy token). Writes <out>/<variant>/curve.jsonl, <out>/results.json, <out>/table.md (also
printed) and <out>/learning_curves.png (`python -m benchmarks.publish <out>` copies it to docs/).
A variant already finished in <out> whose resolved training config (recipe + overrides, as the
run recorded it in config.json) equals today's is read back, not retrained; an edited recipe retrains it (delete the
folder to rerun one anyway).
Timings depend on the machine: compare variants within one run only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks import harness

ROOT = Path(__file__).resolve().parents[1]

VARIANTS = {  # name -> overrides on the domain's eagle3 recipe
    "default": [],  # the recipe as it is
    "ttt7": ["eagle3.ttt_steps=7"],
    "ttt3": ["eagle3.ttt_steps=3"],
    "ttt5": ["eagle3.ttt_steps=5"],
    "frozen-lm-head": ["eagle3.freeze_lm_head=true"],
    "vocab2k": ["eagle3.draft_vocab_size=2048"],
    "vocab4k": ["eagle3.draft_vocab_size=4096"],
    "vocab8k": ["eagle3.draft_vocab_size=8192"],
    "lr3e-3": ["train.lr=0.003"],
    "batch4": ["train.batch_size=4"],
    "ttt3-lr3e-3": ["eagle3.ttt_steps=3", "train.lr=0.003"],
    "ttt3-frozen-lm-head": ["eagle3.ttt_steps=3", "eagle3.freeze_lm_head=true"],
    "ttt3-accept-loss": ["eagle3.ttt_steps=3", "eagle3.accept_weight=1.0"],
    "accept-loss": ["eagle3.accept_weight=1.0"],
}


def run_variant(name: str, args, extra: list[str]) -> list[dict]:
    """Train one variant (unless <out>/<name> finished with the same settings) -> its curve rows."""
    from draftpool.target import DTYPES
    from training.target_cache import cache_dir

    run_dir = Path(args.out) / name
    overrides = [*VARIANTS[name], *extra, f"run_dir={run_dir}", f"export.pools_dir={Path(args.out) / 'pools' / name}",
                 f"train.budget_minutes={args.minutes}", f"train.curve_minutes={args.every}",
                 "train.save_every=100000", "eval.skip=true"]  # the curve's last row is the final evaluation
    want = resolved_config(args.domain, args.recipe, overrides)
    done, used = run_dir / "curve.done.json", run_dir / "config.json"
    if done.is_file() and used.is_file() and json.loads(used.read_text()) == want:
        return [json.loads(x) for x in (run_dir / "curve.jsonl").read_text().splitlines()]
    run_dir.mkdir(parents=True, exist_ok=True)
    for dtype in DTYPES:  # one feature cache per precision for every variant (same target, layers, data)
        shared, own = cache_dir(Path(args.out), dtype), cache_dir(run_dir, dtype)
        if not own.exists():
            shared.mkdir(parents=True, exist_ok=True)
            own.symlink_to(shared.resolve(), target_is_directory=True)
    cmd = [sys.executable, str(ROOT / "train_drafter.py"), "--domain", args.domain, "--recipe", args.recipe,
           *overrides]
    harness.log.info("[learning_curve] %s: %s", name, " ".join(cmd[2:]))
    done.unlink(missing_ok=True)
    subprocess.run(cmd, cwd=ROOT, check=True)
    rows = [json.loads(x) for x in (run_dir / "curve.jsonl").read_text().splitlines()]
    done.write_text(json.dumps({"domain": args.domain, "recipe": args.recipe, "overrides": overrides}))
    return rows


def resolved_config(domain: str, recipe: str, overrides: list[str]) -> dict:
    """The training config train_drafter.py will run with (recipe read from the repository root), as JSON."""
    from draftpool.config import load_config, to_dict
    from training.config import TrainConfig

    recipe_path = recipe if Path(recipe).is_absolute() else str(ROOT / recipe)
    cfg = load_config(TrainConfig, recipe_path, [*overrides, f"domain={domain}", "drafter=eagle3"])
    return json.loads(json.dumps(to_dict(cfg)))


def summary(name: str, rows: list[dict], run_dir: Path) -> dict:
    last = rows[-1]
    plan = json.loads((run_dir / "budget.json").read_text())
    return {"variant": name, "steps": last["step"],
            "seconds_per_step": plan.get("measured_seconds_per_step", plan.get("seconds_per_step")),
            "train_minutes": round(last["train_seconds"] / 60, 2), "tokens": last["tokens"],
            "top1_0": round(last["top1_per_step"][0], 4),
            "accept": [round(a, 3) for a in last["accept_per_step"][:4]],
            "chain": round(last["empirical_greedy_chain_length"], 3)}


def plot(curves: dict[str, list[dict]], path: Path, title: str) -> None:
    plt = harness.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for name, rows in curves.items():
        minutes = [r["train_seconds"] / 60 for r in rows]
        tokens = [r["tokens"] / 1e6 for r in rows]
        axes[0].plot(minutes, [r["top1_per_step"][0] for r in rows], marker="o", label=name)
        axes[1].plot(minutes, [r["empirical_greedy_chain_length"] for r in rows], marker="o", label=name)
        axes[2].plot(tokens, [r["empirical_greedy_chain_length"] for r in rows], marker="o", label=name)
    for ax, (x, y) in zip(axes, [("training minutes", "held-out step-0 top-1"),
                                 ("training minutes", "held-out empirical greedy chain"),
                                 ("response tokens trained on (M)", "held-out empirical greedy chain")]):
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    harness.save_figure(fig, path)


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.learning_curve", __doc__)
    harness.add_common(ap, target=False, out="runs/bench/curves")
    ap.add_argument("--domain", default="sql")
    ap.add_argument("--minutes", type=float, default=7.0, help="training wall-clock per variant")
    ap.add_argument("--every", type=float, default=1.5, help="minutes of training between evaluations")
    ap.add_argument("--variants", default="default,ttt3,frozen-lm-head,vocab2k,lr3e-3")
    ap.add_argument("--recipe", default="", help="default recipes/<domain>/eagle3.yaml")
    args, extra = ap.parse_known_args(argv)
    args.recipe = args.recipe or f"recipes/{args.domain}/eagle3.yaml"
    names = [v for v in args.variants.split(",") if v]
    if unknown := [v for v in names if v not in VARIANTS]:
        raise harness.BenchError(f"unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
    if args.minutes <= 0 or args.every <= 0:
        raise harness.BenchError("--minutes and --every must be > 0")
    curves = {}
    for name in names:
        curves[name] = run_variant(name, args, extra)
    summaries = [summary(n, rows, Path(args.out) / n) for n, rows in curves.items()]
    setup = max(r.get("setup_seconds", 0) for rows in curves.values() for r in rows)
    table = (f"{args.domain}: {args.minutes} training minutes per variant; feature cache built once in "
             f"{setup / 60:.1f} min (setup, not counted)\n\n" + harness.markdown_table(
                 ["variant", "steps", "s/step", "train min", "response tokens", "held-out top-1 (step 0)",
                  "acceptance d0-d3", "greedy chain"],
                 [[r["variant"], r["steps"], r["seconds_per_step"], r["train_minutes"], r["tokens"],
                   f"{r['top1_0']:.3f}", " / ".join(f"{a:.2f}" for a in r["accept"]), f"{r['chain']:.3f}"]
                  for r in summaries]))
    out = harness.write_results(args.out, {"domain": args.domain, "minutes": args.minutes, "extra": extra,
                                           "summary": summaries, "curves": curves}, table)
    print("\n" + table)
    plot(curves, out / "learning_curves.png", f"EAGLE-3 head, {args.domain}, {args.minutes} training minutes per "
                                             f"variant (python -m benchmarks.learning_curve)")
    print(f"plot: {out / 'learning_curves.png'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
