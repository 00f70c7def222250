"""Does online adaptation ever make a good drafter worse? The guard and the update size on an in-domain stream and
on a domain shift, replayed exactly and served live.

    python -m benchmarks.online_guard --pool pools/{target_slug} --drafter sql-eagle3 \
        --stream benchmarks/streams/sql_three_schemas.jsonl --shift python --shift-requests 60 \
        --variants static,off:lr1e-3,off,lr1e-3,lr3e-4,lr1e-4 --live off,on[,old --old-tree DIR] --out runs/bench/guard

1. Replay (exact at temperature 0, benchmarks/common/online_replay.py, as in benchmarks.online): the target's greedy
   answers to each stream (cached), the feedback the server would collect, and, with the drafter's weights at that
   moment, its greedy chain acceptance (k drafts) at every position; the trainer (online/trainer/token_trainer.py,
   guard included) runs a round every `--batch` requests and what the guard lets out is served from the next request
   on. Two streams: `--stream` (in domain for the drafter) and `--shift-requests` prompts of `--shift`, a domain the
   drafter never trained on. Variants: `static` (no adaptation), `off` (no guard: every update published, as the guard
   did before its first held-out record; `off:lr1e-3` at the rate the server used before the guard's fixes), and the
   guard on with TrainerConfig's defaults (what recipes/online/adapt.yaml serves with) but for the settings a variant
   names: `lr3e-4`, `lr1e-4:m0.02` (guard margin 0.02), `lr1e-4:h5` (holdout_every 5). MAT per window of `--window`
   requests.
2. Live (`--live off,on`): `online_adapt.py serve.requests=<stream> serve.kinds=[<kind>]` with adaptation off and on
   (the recipe's settings, `--serve key=value` overrides), MAT and tok/s per window from its answers; `old` runs the
   same adaptation-on command from `--old-tree`, another checkout (e.g. a `git worktree` of the commit before the
   guard), for a side by side in one run.
Outputs: <out>/results.json, <out>/table.md; progress lines on stderr as it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.common.online_replay import cached_feedback, greedy_stream, mat, run_method
from draftpool.config import ConfigError
from draftpool.models import get_kind
from online.trainer.config import TrainerConfig

ROOT = Path(__file__).resolve().parents[1]


def read_stream(path: Path) -> list[tuple[str, str, str]]:
    """A requests JSONL ({"id", "prompt"} per line) -> [(id, "stream", prompt)]."""
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            r = json.loads(line)
            rows.append((str(r.get("id", f"line-{n}")), "stream", r["prompt"]))
    if not rows:
        raise ConfigError(f"{path} holds no requests")
    return rows


KEYS = {"lr": "lr", "m": "guard_margin", "h": "holdout_every", "e": "epochs", "b": "batch", "v": "vocab_every",
        "p": "pay_patience", "g": "pay_min_gain", "w": "pay_wake_drop"}
INTS = ("h", "e", "b", "v", "p")


def variant_config(name: str) -> TrainerConfig | None:
    """static -> None; otherwise TrainerConfig's defaults but for the settings named, ':'-separated: lr<rate>,
    m<guard margin>, h<holdout_every>, e<epochs>, b<batch>, v<vocab_every>, p<pay_patience>, g<pay_min_gain>,
    w<pay_wake_drop> (e.g. lr1e-4:m0);
    `off`
    first turns the guard off (off:lr1e-3)."""
    if name == "static":
        return None
    parts = name.split(":")
    settings = {"holdout_every": 0} if parts[0] == "off" else {}
    for part in parts[1:] if parts[0] == "off" else parts:
        key = next((k for k in KEYS if part.startswith(k)), None)
        try:
            settings[KEYS[key]] = (int if key in INTS else float)(part[len(key):])
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"--variants takes static, off[:settings] or settings like lr3e-4:m0:h5; got {name!r}"
                              ) from None
    return TrainerConfig(**settings)


def windows(tokens: list[int], forwards: list[int], w: int) -> list[float]:
    res = {"tokens": tokens, "forwards": forwards}
    return [round(mat(res, i, i + w), 4) for i in range(0, len(tokens), w)]


def replay_part(args, model, tok, info, out: Path) -> dict[str, Any]:
    pool_dir = Path(args.pool.format(target_slug=info.slug))
    members = harness.load_members(pool_dir, info, model, [args.kind])
    drafter = next((m for m in members if m.name == args.drafter), None)
    if drafter is None:
        raise ConfigError(f"--drafter {args.drafter!r} is not a {args.kind} drafter of {pool_dir} "
                          f"({', '.join(m.name for m in members)})")
    aux = get_kind(drafter.kind).aux_layers(drafter.module) or []
    from data_gen.domains import domain_prompts

    streams = {"in-domain": read_stream(Path(args.stream))}
    if args.shift_requests:
        sp = domain_prompts(args.shift)
        streams[f"shift-{args.shift}"] = [(r["id"], args.shift, r["prompt"])
                                          for r in sp["train"] + sp["held_out"]][:args.shift_requests]
    report: dict[str, Any] = {}
    for sname, rows in streams.items():
        items = greedy_stream(model, tok, rows, args.max_new_tokens, out / f"answers-{sname}-{args.max_new_tokens}"
                              ".jsonl")
        feedback, _ = cached_feedback(model, items, list(aux), 64, out / f"feedback-{sname}")
        rows_out = {}
        for v in args.variants.split(","):
            t0 = time.time()
            tcfg = variant_config(v)
            emb = model.get_output_embeddings().weight.detach().float() if tcfg and tcfg.vocab_every else None
            r = run_method(v, [drafter], feedback, tcfg, 0, args.k, out_embed=emb)
            rows_out[v] = {"mat": round(mat(r, 0, len(items)), 4), "mat_windows": windows(r["tokens"], r["forwards"],
                                                                                         args.window),
                           "rounds": r["rounds"], "trained": r["trained"], "rejected": r["rejected"],
                           "seconds": round(time.time() - t0, 1)}
            harness.log.info(f"[guard] {sname} {v}: MAT {rows_out[v]['mat']:.3f} windows {rows_out[v]['mat_windows']} "
                             f"(trained {r['trained']}, rejected {r['rejected']} of {r['rounds']} rounds)")
        report[sname] = {"requests": len(items), "variants": rows_out}
    return report


def live_run(args, tree: Path, adapt: bool, out: Path, tag: str) -> dict[str, Any]:
    """online_adapt.py over the stream from checkout `tree` -> MAT and tok/s per window, the trainer's summary."""
    run_dir = (out / f"live-{tag}").resolve()  # absolute: the run's working folder is `tree`
    if run_dir.exists():
        import shutil

        shutil.rmtree(run_dir)
    cmd = [sys.executable, "online_adapt.py", f"serve.pool={Path(args.pool).resolve()}", f"serve.out_dir={run_dir}",
           f"serve.requests={Path(args.stream).resolve()}", f"serve.kinds=[{args.kind}]",
           f"serve.max_new_tokens={args.max_new_tokens}", f"serve.adapt={'true' if adapt else 'false'}",
           f"serve.auto_costs={(out / 'auto_costs.json').resolve()}", *args.serve]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"live {tag} exited {proc.returncode}: {proc.stderr[-2000:]}")
    answers = [json.loads(line) for line in (run_dir / "answers.jsonl").read_text().splitlines()]
    tokens = [a["new_tokens"] for a in answers]
    forwards = [round(a["new_tokens"] / a["mat"]) for a in answers]
    summary = json.loads(proc.stdout)
    w = args.window
    return {"tree": str(tree), "adapt": adapt, "mat": round(sum(tokens) / sum(forwards), 4),
            "mat_windows": windows(tokens, forwards, w),
            "tok_s_windows": [round(sum(tokens[i:i + w]) / sum(a["seconds"] for a in answers[i:i + w]), 2)
                              for i in range(0, len(answers), w)],
            "rounds": summary.get("rounds"), "swaps": summary.get("swaps"), "seconds": round(time.time() - t0, 1),
            "guard_log": [line for line in proc.stderr.splitlines() if "round" in line and "guard" in line][-3:]}


def format_table(report: dict[str, Any]) -> str:
    """The replay's variants per stream, then the live runs, as markdown tables."""
    lines = []
    for sname, part in report.get("replay", {}).items():
        lines += [f"\nReplay, {sname} ({part['requests']} requests; MAT per window of {report['window']}):\n",
                  harness.markdown_table(["variant", "MAT", "per window", "rounds", "rejected"], [
                      [v, f"{r['mat']:.3f}", " / ".join(f"{x:.2f}" for x in r["mat_windows"]), r["rounds"],
                       r["rejected"]] for v, r in part["variants"].items()])]
    if report.get("live"):
        lines += [f"\nLive, in-domain stream (MAT and tok/s per window of {report['window']}):\n",
                  harness.markdown_table(["run", "MAT", "MAT per window", "tok/s per window", "rounds", "swaps"], [
                      [tag, f"{r['mat']:.3f}", " / ".join(f"{x:.2f}" for x in r["mat_windows"]),
                       " / ".join(f"{x:.1f}" for x in r["tok_s_windows"]), r["rounds"], r["swaps"]]
                      for tag, r in report["live"].items()])]
    return "\n".join(lines) + "\n"


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.online_guard", __doc__)
    harness.add_common(ap, pool="pools/{target_slug}", device="cpu", dtype="float32", out="runs/bench/guard")
    ap.add_argument("--drafter", default="sql-eagle3", help="the pool's drafter to adapt")
    ap.add_argument("--kind", default="eagle3")
    ap.add_argument("--stream", default=str(ROOT / "benchmarks/streams/sql_three_schemas.jsonl"))
    ap.add_argument("--shift", default="python", help="a domain the drafter never trained on")
    ap.add_argument("--shift-requests", type=int, default=60, help="0: no shift stream")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--k", type=int, default=4, help="replay: greedy chain length")
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--variants", default="static,off:lr1e-3,off,lr1e-3,lr3e-4,lr1e-4")
    ap.add_argument("--live", default="", help="live runs, of off, on, old (empty: none)")
    ap.add_argument("--old-tree", default="", help="old: another checkout, adaptation on, beside this one's runs")
    ap.add_argument("--serve", nargs="*", default=[], help="key=value overrides for the live runs")
    ap.add_argument("--parts", default="replay,live")
    args = ap.parse_args(argv)
    live = harness.csv(args.live)
    for mode in live:  # off, on: this checkout; old: adaptation on in --old-tree
        if mode not in ("off", "on", "old") or (mode == "old" and not args.old_tree):
            raise ConfigError(f"--live takes off, on and old (with --old-tree); got {mode!r}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    info = harness.resolve(args)
    args.pool = args.pool.format(target_slug=info.slug)
    report: dict[str, Any] = {"target": info.name, "pool": args.pool, "drafter": args.drafter,
                              "window": args.window, "max_new_tokens": args.max_new_tokens, "argv": argv or
                              sys.argv[1:]}
    if "replay" in args.parts:
        target = harness.load_target(args, info)
        report["replay"] = replay_part(args, target.model, target.tok, info, out)
    if "live" in args.parts and live:
        report["live"] = {}
        for mode in live:
            tree = Path(args.old_tree).resolve() if mode == "old" else ROOT
            report["live"]["adapt on (old tree)" if mode == "old" else f"adapt {mode}"] = live_run(
                args, tree, mode != "off", out, mode)
    harness.write_results(out, report, format_table(report))
    print(format_table(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
