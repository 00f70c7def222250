"""Online adaptation under domain shift: does learning from verified tokens while serving raise acceptance, and what
does the trainer cost the server?

    python online_adapt.py --bench [--pool runs/shift/pools/{target_slug}] [--shift sql] [--shift-requests 300]
                                   [--then python] [--then-requests 60] [--lr 3e-4] [--jobs 2] [--live 16]
                                   [--soak 10000] [--out runs/bench/online]
    (the same as `python -m benchmarks.online ...`)

The pool is one trained WITHOUT the shift domain (e.g. `build_pool.py --domains python,math,chemistry`). The stream is
`--shift-requests` prompts of the shift domain (its train split first, then held-out), then `--then-requests` held-out
prompts of a domain the pool knows.

1. Replay (exact at temperature 0, the same math as benchmarks/replay.py): the target's greedy answer to each prompt
   (batched, cached) and one target pass per request give the feedback the server would collect (verified tokens, top-k
   target distributions, aux features) and, for the drafters' weights *at that moment*, every drafter's greedy-chain
   acceptance from every position. Methods: static pool, OGD, optimistic OGD, Hedge ensemble, and full-information OGD
   (every drafter learns from every request), each with HedgeSpec selection (NormalHedge, a fresh learner per request)
   and with one fixed drafter (the static pool's best single drafter on the shift segment). The trainer
   (online/trainer/token_trainer.py, guard included) runs a round every `--batch` requests and the served weights
   change from the next request on: the replay assumes the trainer keeps up (no lag), the live part measures whether it
   does. MAT per window of `--window` requests, MAT gain over the static pool after the shift segment, PNG.
2. Live (`--live N`, benchmarks/online_live.py: the real AdaptiveServer + trainer process, 1 torch thread each):
   N shift-domain requests served (a) without a trainer, (b) with a saturated trainer (fed cached feedback without
   pause) whose versions are not swapped in, so decoding is identical to (a) and only the trainer's interference
   differs: the decode slowdown; (c) with the trainer adapting and swapping at cycle boundaries, the trainer
   SIGKILLed after N/2 requests: failed requests, restarts, output == (a)'s.
3. Soak (`--soak R`): R requests through the real server + trainer process on a tiny random target and two tiny
   heads (a 135M target would take hours): RSS of both processes every 500 requests, feedback dropped.
Outputs: <out>/results.json, <out>/table.md, <out>/online_mat.png (`python -m benchmarks.publish <out>` copies it to
docs/); progress lines on stderr as it runs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mproc
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from benchmarks.common.online_replay import cached_feedback, greedy_stream, mat, replay_job, stream_prompts
from benchmarks.online_live import live_part, soak
from data_gen.domains import GENERAL, domain_prompts
from draftpool.chat import render_prompt
from draftpool.config import ConfigError
from online.trainer.config import TrainerConfig

# name -> (updater, full information, draft-vocabulary adaptation)
UPDATER_RUNS = {"static": None, "ogd": ("ogd", False, False), "optimistic": ("optimistic", False, False),
                "ensemble": ("ensemble", False, False), "full-info-ogd": ("ogd", True, False),
                "full-info-ogd-vocab": ("ogd", True, True), "optimistic-vocab": ("optimistic", False, True)}


def method_row(updater: str, sel: str, r: dict[str, Any], s: int, n_all: int, w: int, names: list[str]
               ) -> dict[str, Any]:
    """One method's figures from its per-request replay (s = shift requests, w = window)."""
    return {"updater": updater, "selection": sel, "rounds": r["rounds"], "rejected": r["rejected"],
            "train_s": r["train_s"], "table_s": r["table_s"],
            "mat_windows": [mat(r, i, i + w) for i in range(0, n_all, w)],
            "mat_shift": mat(r, 0, s), "mat_shift_last100": mat(r, s - 100, s), "mat_then": mat(r, s, n_all),
            "arm_share_shift": {n: r["arm"][:s].count(i) / s for i, n in enumerate(names)},
            "ensemble_p": r.get("ensemble_p", []), "coverage": r.get("coverage", []),
            "vocab_swaps": r.get("vocab_swaps", {})}


def add_gains(row: dict[str, Any], static: dict[str, Any]) -> None:
    for part in ("shift", "shift_last100", "then"):
        row[f"gain_{part}"] = row[f"mat_{part}"] / max(1e-9, static[f"mat_{part}"]) - 1


# ---------------------------------------------------------------------------------------------------- report
def plot(report: dict[str, Any], path: Path) -> None:
    """MAT per window for each selection run; then, when present, each head's vocabulary coverage of the stream's
    answer tokens (static vs vocabulary-adapting runs) and the ensemble's meta weights over its rounds."""
    plt = harness.pyplot()
    sels = [sel for sel in ("nh", "fixed") if any(r["selection"] == sel for r in report["methods"].values())]
    cov = [r for r in report["methods"].values() if r["selection"] == "nh" and r.get("coverage")
           and (r["updater"] == "static" or r.get("vocab_swaps"))]
    ens = [r for r in report["methods"].values() if r.get("ensemble_p")]
    extra = bool(cov) + bool(ens)
    fig, axes = plt.subplots(1, len(sels) + extra, figsize=(6.5 * (len(sels) + extra), 4.5), squeeze=False)
    axes = list(axes[0])
    w = report["window"]
    for ax, sel in zip(axes, sels):
        for row in report["methods"].values():
            if row["selection"] != sel:
                continue
            xs = [(i + 1) * w for i in range(len(row["mat_windows"]))]
            ax.plot(xs, row["mat_windows"], marker=".", label=row["updater"])
        ax.axvline(report["shift_requests"], color="grey", ls="--", lw=1)
        ax.set_title(f"{'HedgeSpec (NormalHedge) selection' if sel == 'nh' else 'fixed drafter: ' + report['fixed']}")
        ax.set_xlabel(f"requests (MAT per window of {w}); {report['shift']} | {report['then']}")
        ax.set_ylabel("mean accepted tokens per target forward")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    rest = axes[len(sels):]
    if cov:
        ax = rest.pop(0)
        for row in cov:
            for head in row["coverage"][0]:
                ys = [c[head] for c in row["coverage"]]
                ax.plot([25 * (i + 1) for i in range(len(ys))], ys, label=f"{row['updater']}: {head}",
                        ls="-" if row.get("vocab_swaps") else ":")
        ax.set_title("draft vocabulary coverage of the stream's answer tokens")
        ax.set_xlabel("requests")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    if ens:
        ax = rest.pop(0)
        for row in ens:
            head = max(row["arm_share_shift"], key=row["arm_share_shift"].get)
            ps = [p[head] for p in row["ensemble_p"] if head in p]
            for i in range(len(ps[0]) if ps else 0):
                ax.plot(range(1, len(ps) + 1), [p[i] for p in ps], label=f"{row['selection']} {head}: rate {i}")
        ax.set_title("Hedge ensemble meta weights (rates lr * 2^i)")
        ax.set_xlabel("trainer rounds")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Online adaptation, pool without {report['shift']} ({report['target']})")
    harness.save_figure(fig, path)


def format_table(report: dict[str, Any]) -> str:
    s = report["shift_requests"]
    lines = [f"| method | selection | MAT first {report['window']} | MAT {report['shift']} (1-{s}) | "
             f"MAT last 100 {report['shift']} | gain vs static (1-{s} / last 100) | MAT {report['then']} | rounds | "
             "rejected | train s | vocabulary coverage at the end (swapped in) |", "|---" * 11 + "|"]
    for r in report["methods"].values():
        cov, swaps = (r.get("coverage") or [{}])[-1], r.get("vocab_swaps") or {}
        cells = ", ".join(f"{n.split('-')[0]} {c:.2f}" + (f" (+{swaps[n]})" if swaps.get(n) else "")
                          for n, c in cov.items())
        lines.append(f"| {r['updater']} | {r['selection']} | {r['mat_windows'][0]:.3f} | {r['mat_shift']:.3f} | "
                     f"{r['mat_shift_last100']:.3f} | {r['gain_shift']:+.1%} / {r['gain_shift_last100']:+.1%} | "
                     f"{r['mat_then']:.3f} | {r['rounds']} | {r['rejected']} | {r['train_s']:.0f} | {cells} |")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> dict[str, Any]:
    t_start = time.time()
    parts = set(args.parts.split(","))
    if not parts <= {"replay", "live", "soak"}:
        raise ConfigError(f"--parts takes replay, live, soak; got {args.parts!r}")
    selections = set(args.selections.split(","))
    if not selections <= {"nh", "fixed"} or "nh" not in selections:
        raise ConfigError(f"--selections takes nh or nh,fixed; got {args.selections!r}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prev = json.loads((out / "results.json").read_text()) if (out / "results.json").is_file() else {}
    report: dict[str, Any] = {k: v for k, v in prev.items() if k in ("target", "pool", "drafters", "replay", "live",
                                                                      "soak")}
    if parts == {"soak"}:  # no target needed
        report["soak"] = soak(args.soak)
        harness.write_results(out, report)
        return report
    # 1. target, pool, stream, feedback
    info = harness.resolve(args)
    pool_dir = harness.pool_dir(args, info)
    if not (pool_dir / "pool.json").is_file():
        raise ConfigError(f"no pool at {pool_dir} (pool.json missing): run build_pool.py --domains ... first")
    manifest = json.loads((pool_dir / "pool.json").read_text())
    chosen = args.drafters.split(",") if args.drafters else list(manifest["drafters"])
    unknown = sorted(set(chosen) - set(manifest["drafters"]))
    if unknown:
        raise ConfigError(f"--drafters {', '.join(unknown)} not in the pool at {pool_dir}")
    if any(manifest["drafters"][n].get("domain") in (args.shift, GENERAL) for n in chosen):
        raise ConfigError(f"a domain-shift run needs drafters trained without {args.shift}: leave out its drafter "
                          "and the general one (its mix holds a share of every domain), e.g. --drafters python-eagle3")
    target = harness.load_target(args, info)
    model, tok = target.model, target.tok
    members = [m for m in harness.load_members(pool_dir, info, model, ["eagle3"], at_least=2) if m.name in chosen]
    names = [m.name for m in members]
    if len(names) < 2:
        raise ConfigError(f"a domain-shift run selects among >= 2 EAGLE-3 heads, got {names}")
    aux_layers = list(members[0].module.config.eagle_aux_hidden_state_layer_ids)
    report.update(target=info.name, pool=str(pool_dir), drafters=names)
    s = args.shift_requests
    rows = stream_prompts(args.shift, s, args.then, args.then_requests)
    answers = out / f"stream-{info.slug}-{args.max_new_tokens}.jsonl"
    stream = greedy_stream(model, tok, rows, args.max_new_tokens, answers)
    feedback, paths = cached_feedback(model, stream, aux_layers, args.top_k, out / f"feedback-{info.slug}")

    def tcfg(updater: str, full: bool, vocab: bool = False) -> TrainerConfig:
        return TrainerConfig(updater=updater, lr=args.lr, batch=args.batch, epochs=args.epochs,
                             full_information=full, positions=args.positions,
                             vocab_every=args.vocab_every if vocab else 0, vocab_swaps=args.vocab_swaps)

    out_embed = model.get_output_embeddings().weight.detach().float().clone()

    # 2. replay: the static pool first (it names the fixed drafter), then every updater x selection; with --methods
    # a subset is re-run and merged into the previous run's rows (same settings required)
    adapted = None
    if "replay" in parts:
        settings = {"pool": str(pool_dir), "drafters": names, "shift": args.shift, "then": args.then,
                    "shift_requests": s, "then_requests": len(stream) - s, "window": args.window, "k": args.k,
                    "lr": args.lr, "batch": args.batch, "epochs": args.epochs, "positions": args.positions,
                    "max_new_tokens": args.max_new_tokens, "top_k": args.top_k, "vocab_every": args.vocab_every,
                    "vocab_swaps": args.vocab_swaps}
        wanted = list(UPDATER_RUNS) if args.methods == "all" else args.methods.split(",")
        if not set(wanted) <= set(UPDATER_RUNS):
            raise ConfigError(f"--methods takes all or some of {', '.join(UPDATER_RUNS)}; got {args.methods!r}")
        prev_rep = None
        if args.methods != "all":
            prev_rep = prev.get("replay")
            old = {**(prev_rep or {}), "pool": prev.get("pool"), "drafters": prev.get("drafters")}
            old.setdefault("epochs", 1)
            diff = [key for key in settings if old.get(key) != settings[key]]
            if (prev_rep is None or diff) and "static" not in wanted:
                raise ConfigError(f"--methods {args.methods} without static re-runs part of a previous replay with "
                                  f"the same settings; {out / 'results.json'} " + (f"differs in {', '.join(diff)}"
                                                                               if prev_rep else "has no replay"))
            if prev_rep is None or diff:
                prev_rep = None  # a fresh run of the subset (static included: the gains' reference)
        jobs = {}
        per_arm = None
        with ProcessPoolExecutor(args.jobs, mp_context=mproc.get_context("spawn")) as ex:

            def submit(up: str, sel: str, arm: int | None) -> None:
                spec = UPDATER_RUNS[up]
                keep = s - 1 if (up, sel) == (args.live_weights, "nh") else -1
                emb = out_embed if spec and spec[2] else None
                jobs[f"{up}-{sel}"] = (up, sel, ex.submit(replay_job, f"{up}-{sel}", members, paths,
                                                          tcfg(*spec) if spec else None, arm, args.k, keep, emb))

            # the static pool and each drafter alone first (the best one on the shift segment is the fixed drafter),
            # the selection runs meanwhile, the fixed-drafter runs once the fixed drafter is known
            single = not prev_rep and "fixed" in selections
            per_arm_f = [ex.submit(replay_job, f"static-{n}", members, paths[:s], None, i, args.k, -1)
                         for i, n in enumerate(names)] if single else []
            for up in wanted:
                submit(up, "nh", None)
            if prev_rep:
                fixed = names.index(prev_rep["fixed"]) if prev_rep.get("fixed") else None
            elif not single:
                fixed = None
            else:
                per_arm = [f.result() for f in per_arm_f]
                fixed = max(range(len(names)), key=lambda i: mat(per_arm[i], 0, s))
            for up in wanted if "fixed" in selections else []:
                submit(up, "fixed", fixed)
            results = {n: (u, sel, f.result()) for n, (u, sel, f) in jobs.items()}
        rep = dict(prev_rep) if prev_rep else {
            **{k: v for k, v in settings.items() if k not in ("pool", "drafters")},
            "fixed": names[fixed] if fixed is not None else None,
            "static_single_mat_shift": {n: mat(per_arm[i], 0, s) for i, n in enumerate(names)} if per_arm else {}}
        rep.setdefault("epochs", 1)  # runs before --epochs existed took one update per round
        rep["methods"] = dict(rep.get("methods", {}))
        for name, (up, sel, r) in results.items():
            rep["methods"][name] = method_row(up, sel, r, s, len(stream), args.window, names)
            if prev_rep:
                rep.setdefault("rerun", {})[name] = time.strftime("%Y-%m-%d")
        for row in rep["methods"].values():  # gains over the static pool with the same selection
            add_gains(row, rep["methods"][f"static-{row['selection']}"])
        report["replay"] = rep
        if f"{args.live_weights}-nh" in results:
            adapted = results[f"{args.live_weights}-nh"][2].get("weights")
            torch.save(adapted, out / "adapted_weights.pt")
    if adapted is None and (out / "adapted_weights.pt").is_file():
        adapted = torch.load(out / "adapted_weights.pt")

    # 3. live (shift-domain prompts the replay did not serve) and soak
    if "live" in parts and args.live:
        sp = domain_prompts(args.shift)
        more = [r["prompt"] for r in sp["train"] + sp["held_out"]]
        prompts = [render_prompt(tok, p) for p in more[s:s + args.live]]
        if len(prompts) < args.live:
            raise ConfigError(f"{args.shift} has {len(more)} prompts: {args.live} live requests after {s} replayed "
                              "ones do not fit")
        report["live"] = live_part(model, tok, info, pool_dir, members, prompts, args.max_new_tokens, feedback,
                                   adapted, args.k, tcfg("ogd", True), out)
    if "soak" in parts and args.soak:
        report["soak"] = soak(args.soak)
    report["seconds"] = time.time() - t_start
    harness.write_results(out, report, format_table(report["replay"]) if "replay" in report else None)
    if "replay" in report:
        plot({**report["replay"], "target": report["target"]}, out / "online_mat.png")
    return report


def make_parser() -> argparse.ArgumentParser:
    ap = harness.parser("benchmarks.online", __doc__)
    ap.prog = "online_adapt.py --bench"
    harness.add_common(ap, pool="runs/shift/pools/{target_slug}", device="cpu", dtype="float32",
                       out="runs/bench/online", help={"pool": "a pool trained without --shift"})
    ap.add_argument("--drafters", default="", help="comma list of the pool's drafters to serve (default: all)")
    ap.add_argument("--shift", default="sql", help="the domain the pool has not seen")
    ap.add_argument("--shift-requests", type=int, default=300)
    ap.add_argument("--then", default="python", help="a domain the pool knows, served after the shift segment")
    ap.add_argument("--then-requests", type=int, default=60)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--top-k", type=int, default=64, help="target logits kept per position (feedback)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=4, help="feedback records per trainer round")
    ap.add_argument("--epochs", type=int, default=1, help="updates per round on its records")
    ap.add_argument("--positions", default="all", choices=["all", "mismatch"])
    ap.add_argument("--window", type=int, default=25)
    ap.add_argument("--methods", default="all",
                    help="updaters to replay (comma list of " + ", ".join(UPDATER_RUNS) + "); a subset re-runs "
                         "those and keeps the other rows of <out>/results.json (same settings required), or, "
                         "with static in it, is a fresh run of those alone")
    ap.add_argument("--jobs", type=int, default=2, help="methods replayed in parallel (1 thread each)")
    ap.add_argument("--vocab-every", type=int, default=5, help="rounds between vocabulary swaps (-vocab methods)")
    ap.add_argument("--vocab-swaps", type=int, default=256, help="most draft slots replaced per swap")
    ap.add_argument("--selections", default="nh,fixed", help="nh (HedgeSpec), fixed (the best single drafter), both")
    ap.add_argument("--live", type=int, default=16, help="live requests (0: skip the live part)")
    ap.add_argument("--live-weights", default="full-info-ogd", choices=[u for u in UPDATER_RUNS if u != "static"],
                    help="whose adapted weights (after the shift segment) the live part also serves")
    ap.add_argument("--parts", default="replay,live,soak", help="which parts to run (results.json keeps the others)")
    ap.add_argument("--soak", type=int, default=10000, help="requests of the memory soak (0: skip)")
    return ap


def _main(argv: list[str] | None) -> int:
    args = make_parser().parse_args(argv)
    if args.shift_requests < 100 or args.window < 1 or args.jobs < 1:
        raise ConfigError("--shift-requests must be >= 100 (the last-100 figure), --window and --jobs >= 1")
    report = run(args)
    if "replay" in report:
        print(format_table(report["replay"]))
    print(json.dumps({k: report[k] for k in ("live", "soak") if k in report}, indent=2, default=str)[:6000])
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
