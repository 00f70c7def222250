"""The domain-shift benchmark in one command on the pool the README builds: a head served live on a stream of
another domain, frozen against adapted while serving, and the stream's own domain head (frozen) where the pool holds
one, as the ceiling.

    python -m benchmarks.shift --pool pools/{target_slug} --head sql-eagle3 \
        --stream benchmarks/streams/python_six_domains.jsonl [--own python-eagle3] [--adapt key=value ...] \
        [--serve key=value ...] [--extra NAME:key=value,key=value ...] [--max-new-tokens 64] [--window 20] \
        [--requests 0] [--out runs/bench/shift]

Each variant serves the stream with `online_adapt.py` over HTTP (benchmarks/serve_live.py's run: the real server and,
when adapting, the real trainer process beside it on the same cores) from a pool of one member: `frozen` (the head,
serve.adapt=false), `adapted` (the head, adaptation on: the recipe's settings and the `--adapt` overrides) and `own`
(--own, frozen; default `<stream domain>-eagle3`, the stream domain the file name's first word: left out, and said so,
when the pool lacks it); each `--extra` adds another adapted variant with its own overrides (an ablation, e.g.
`before:trainer.pay_patience=0,serve.threads=1`: adaptation as it was before issue 53's levers). Reported per variant
and window of --window requests: MAT and tok/s; then the adapted head's last-window MAT against frozen and own, its
tok/s over the last two windows against frozen, and its tok/s over the whole stream against frozen (issue 53's
measures). Outputs: <out>/results.json, <out>/table.md, <out>/mat.png (MAT per window, one line per variant);
progress lines on stderr.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from benchmarks import harness, serve_live
from benchmarks.online_guard import read_stream
from draftpool.config import ConfigError
from draftpool.io import atomic_write_json

ROOT = Path(__file__).resolve().parents[1]


def pool_of_one(pool: Path, name: str, dest: Path) -> Path:
    """A pool folder holding only `name` of `pool` (its folder copied, pool.json reduced to its entry)."""
    manifest = json.loads((pool / "pool.json").read_text())
    entry = manifest["drafters"][name]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(pool / entry["path"], dest / entry["path"])
    atomic_write_json(dest / "pool.json", {**manifest, "drafters": {name: entry}})
    return dest


def ratios(variants: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """The adapted head against frozen (and own): last-window MAT, tok/s over the last two windows, tok/s over all."""
    f, a, o = variants["frozen"], variants["adapted"], variants.get("own")

    def last_two(r: dict[str, Any]) -> float:
        return sum(r["tok_s_windows"][-2:]) / len(r["tok_s_windows"][-2:])

    return {"mat_last_vs_frozen": round(a["mat_windows"][-1] / f["mat_windows"][-1], 3),
            "mat_last_vs_own": round(a["mat_windows"][-1] / o["mat_windows"][-1], 3) if o else None,
            "tok_s_last_two_vs_frozen": round(last_two(a) / last_two(f), 3),
            "tok_s_all_vs_frozen": round(a["tok_s"] / f["tok_s"], 3)}


def format_table(report: dict[str, Any]) -> str:
    v = report["variants"]
    n = max(len(r["mat_windows"]) for r in v.values())
    head = ["variant", "member", *[f"MAT w{i + 1}" for i in range(n)], *[f"tok/s w{i + 1}" for i in range(n)],
            "tok/s all", "rounds", "published"]
    rows = [[name, r["member"], *r["mat_windows"], *r["tok_s_windows"], r["tok_s"], r["rounds"], r["published"]]
            for name, r in v.items()]
    text = harness.markdown_table(head, rows)
    text += "\n\n" + "; ".join(f"{k} {val}" for k, val in report["ratios"].items() if val is not None)
    if report.get("own_missing"):
        text += f"\n\nno own-domain row: {report['own_missing']}"
    return text


def plot(report: dict[str, Any], out: Path) -> None:
    plt = harness.pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for name, r in report["variants"].items():
        ax.plot(range(1, len(r["mat_windows"]) + 1), r["mat_windows"], marker="o", label=f"{name} ({r['member']})")
    ax.set_xlabel(f"window of {report['window']} requests")
    ax.set_ylabel("MAT (tokens per target forward)")
    ax.set_title(f"{Path(report['stream']).name}: {report['head']} frozen / adapted", fontsize=9)
    ax.legend(fontsize=8)
    harness.save_figure(fig, out / "mat.png")


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.shift", __doc__)
    harness.add_common(ap, pool="pools/{target_slug}", device="cpu", dtype="float32", out="runs/bench/shift")
    ap.add_argument("--head", required=True, help="the pool member served on the stream")
    ap.add_argument("--stream", required=True, help="a JSONL request stream (benchmarks/streams/)")
    ap.add_argument("--own", default=None, help="the stream domain's own head ('' = none)")
    ap.add_argument("--adapt", nargs="*", default=[], help="key=value overrides of the adapted variant")
    ap.add_argument("--serve", nargs="*", default=[], help="key=value overrides of every variant")
    ap.add_argument("--extra", nargs="*", default=[], help="NAME:key=value,key=value: another adapted variant")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--requests", type=int, default=0, help="the stream's first N requests (0: all)")
    args = ap.parse_args(argv)
    if args.window < 1 or args.max_new_tokens < 1 or args.requests < 0:
        raise ConfigError("--window and --max-new-tokens must be >= 1, --requests >= 0")
    if any("=" not in o for o in args.adapt + args.serve):
        raise ConfigError(f"--adapt and --serve take key=value overrides, got {args.adapt + args.serve}")
    rows = read_stream(Path(args.stream))
    rows = rows[:args.requests] if args.requests else rows
    info = harness.resolve(args)
    pool = Path(args.pool.format(target_slug=info.slug))
    if not (pool / "pool.json").is_file():
        raise ConfigError(f"no pool at {pool} (pool.json missing): run the README command first")
    members = json.loads((pool / "pool.json").read_text())["drafters"]
    if args.head not in members:
        raise ConfigError(f"no member {args.head!r} in {pool}: {', '.join(sorted(members))}")
    own = args.own if args.own is not None else f"{Path(args.stream).stem.split('_')[0]}-eagle3"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plan = {"frozen": (args.head, ["serve.adapt=false"]), "adapted": (args.head, list(args.adapt))}
    for extra in args.extra:
        name, _, spec = extra.partition(":")
        overrides = [o for o in spec.split(",") if o]
        if not name or name in plan or name == "own" or any("=" not in o for o in overrides):
            raise ConfigError(f"--extra takes NAME:key=value,key=value with a new name, got {extra!r}")
        plan[name] = (args.head, overrides)
    report: dict[str, Any] = {"target": info.name, "pool": str(pool), "stream": args.stream, "head": args.head,
                              "max_new_tokens": args.max_new_tokens, "window": args.window,
                              "argv": argv if argv is not None else sys.argv[1:], "variants": {}}
    if own and own in members:
        plan["own"] = (own, ["serve.adapt=false"])
    elif own:
        report["own_missing"] = f"{own} is not in {pool} (train it: the README command with its --domain)"
    # serve_live's run, per variant on its own pool of one: eagle3 members only, no plain reference, its scrapes
    live = SimpleNamespace(max_new_tokens=args.max_new_tokens, window=args.window, scrape_every=5.0,
                           serve=[f"serve.target={args.target}", *args.serve])
    for name, (member, overrides) in plan.items():
        live.pool = str(pool_of_one(pool, member, out / "pools" / name))
        live.kinds = [members[member]["kind"]]
        report["variants"][name] = {"member": member, **serve_live.run_variant(live, name, overrides, rows, out)}
        harness.write_results(out, report)
    report["ratios"] = ratios(report["variants"])
    harness.write_results(out, report, format_table(report))
    plot(report, out)
    print(format_table(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
