"""A repetitive request stream with the suffix drafter learning online, against the same drafter frozen at its
offline seed, one with no seed, and plain decoding.

    python -m benchmarks.suffix_stream [--suffix pools/<target>/sql-suffix] [--requests 100] [--window 25]
        [--max-new-tokens 48] [--k 8] [--seed 0] [--out runs/bench/suffix-stream]

The stream is what an analytics assistant over a few fixed schemas gets: `--requests` SQL questions, each one of a
few question templates over one of a few tables (seeded; the templates and schemas are written here, not drawn from
the shipped prompt sets, so a seeded index has not seen them). Every request goes through every variant in turn
(drift hits them equally), greedy, chain mode with at most k drafts:
- plain: no drafter (the reference for exact match and speedup);
- online: the suffix drafter seeded offline (`--suffix`, else empty) that indexes every finished answer;
- frozen: the same seed, never indexing;
- noseed: an empty index that indexes every finished answer.
Per window of `--window` requests: MAT (new tokens / target forwards), accepted drafts per cycle, tok/s, speedup over
plain, and the draft time per cycle; writes <out>/results.json, <out>/table.md and <out>/stream.png; a progress line
per request on stderr.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks import harness
from draftpool.chat import render_prompt, stop_token_ids

TABLES = {
    "orders": "orders(id, customer_id, status, total_amount, created_at, shipped_at)",
    "customers": "customers(id, name, email, country, signup_date, tier)",
    "tickets": "tickets(id, customer_id, priority, category, opened_at, closed_at, agent_id)",
    "payments": "payments(id, order_id, method, amount, paid_at, refunded)",
}
TASKS = [
    "count the rows per {a}",
    "return the 5 rows with the highest {n}",
    "return the average {n} per {a}",
    "list the rows created in the last 30 days, newest first",
    "find the {a} values that appear more than 10 times",
    "return the total {n} per month",
]
COLUMNS = {  # per table: (a grouping column, a numeric column)
    "orders": ("status", "total_amount"), "customers": ("country", "id"), "tickets": ("priority", "agent_id"),
    "payments": ("method", "amount"),
}
VARIANTS = ("plain", "online", "frozen", "noseed")


def stream(n: int, seed: int) -> list[str]:
    """n requests: a question template over one of the tables, drawn at random (seeded)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        table = rng.choice(list(TABLES))
        a, num = COLUMNS[table]
        task = rng.choice(TASKS).format(a=a, n=num)
        out.append(f"Using the table {TABLES[table]}, write a SQL query to {task}. Answer with the query only.")
    return out


def windows(rows: list[dict[str, Any]], size: int, plain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per window of `size` requests: MAT, accepted per cycle, tok/s, speedup over plain, draft ms per cycle."""
    out = []
    for w in range(0, len(rows), size):
        part, ref = rows[w:w + size], plain[w:w + size]
        new, fwd = sum(r["new_tokens"] for r in part), sum(r["target_forwards"] for r in part)
        secs, ref_secs = sum(r["total_s"] for r in part), sum(r["total_s"] for r in ref)
        cycles = [a for r in part for a in r["accepted"]]
        out.append({"window": w // size, "requests": len(part), "mat": new / max(fwd, 1),
                    "accepted_per_cycle": statistics.fmean(cycles) if cycles else 0.0,
                    "tok_s": new / max(secs, 1e-12),
                    "speedup": (new / max(secs, 1e-12)) / (sum(r["new_tokens"] for r in ref) / max(ref_secs, 1e-12)),
                    "draft_ms_per_cycle": 1000 * sum(r["draft_s"] for r in part) / max(len(cycles), 1)})
    return out


def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    from draftpool.models.suffix import SUFFIX, SuffixModel
    from draftpool.models.suffix_index import SuffixIndex
    from specsel.decoding.loop import SpecDecoder
    from specsel.decoding.suffix import SuffixDrafter

    target = harness.load_target(args, device="cpu")
    info, model, tok = target.info, target.model, target.tok
    stops = stop_token_ids(tok, model)
    seed_model = SUFFIX.load(args.suffix, info, model) if args.suffix else SuffixModel(info.vocab_size)
    drafters = {"online": SuffixDrafter(copy.deepcopy(seed_model)), "frozen": SuffixDrafter(seed_model),
                "noseed": SuffixDrafter(SuffixModel(info.vocab_size, index=SuffixIndex(**_settings(seed_model))))}
    decoders = {"plain": SpecDecoder(model, mode="plain", stop_ids=stops)}
    decoders.update({v: SpecDecoder(model, d, mode="chain", k=args.k, stop_ids=stops) for v, d in drafters.items()})
    prompts = stream(args.requests, args.seed)
    rows: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    decoders["plain"].generate(render_prompt(tok, "SELECT 1;"), 4)  # warm-up, untimed
    bar = harness.progress(len(prompts), "stream", unit="request")
    for i, p in enumerate(prompts):
        ids = render_prompt(tok, p)
        outs = {}
        for v in VARIANTS:
            tokens, m = decoders[v].generate(ids, args.max_new_tokens)
            outs[v] = tokens
            rows[v].append({"request": i, "same_as_plain": tokens == outs["plain"], **m.to_dict(),
                            "draft_s": m.draft_s, "total_s": m.total_s, "accepted": m.accepted})
            if v in ("online", "noseed"):  # rule: a finished answer is indexed before the next request
                drafters[v].learn(ids + tokens)
        if (i + 1) % args.window == 0:
            w = windows(rows["online"][-args.window:], args.window, rows["plain"][-args.window:])[0]
            bar.set_postfix(online_mat=f"{w['mat']:.2f}", speedup=f"{w['speedup']:.2f}x")
        bar.update(1)
    bar.close()
    report = {
        "command": command, "config": vars(args), "target": info.name, "requests": len(prompts),
        "prompts_sample": prompts[:3],
        "windows": {v: windows(rows[v], args.window, rows["plain"]) for v in VARIANTS if v != "plain"},
        "plain_windows": windows(rows["plain"], args.window, rows["plain"]),
        "exact_match": {v: sum(r["same_as_plain"] for r in rows[v]) / len(prompts) for v in VARIANTS},
        "indexed_tokens": {v: d.index.n_tokens for v, d in drafters.items()},
        "runs": rows,
    }
    tail = {v: rows[v][-100:] for v in drafters}  # the last 100 requests (all, in a shorter stream)
    report["accepted_per_cycle_last_100"] = {v: sum(sum(r["accepted"]) for r in t) /
                                             max(1, sum(len(r["accepted"]) for r in t)) for v, t in tail.items()}
    out = harness.write_results(args.out, report, format_table(report))
    plot(report, out / "stream.png")
    return report


def format_table(report: dict[str, Any]) -> str:
    """Per variant: MAT and speedup per window, exact match; then accepted drafts per cycle over the last 100."""
    return harness.markdown_table(
        ["variant", "MAT per window", "speedup per window", "exact"],
        [[v, " ".join(f"{w['mat']:.2f}" for w in ws), " ".join(f"{w['speedup']:.2f}" for w in ws),
          f"{report['exact_match'][v]:.0%}"] for v, ws in report["windows"].items()]) + "\n\naccepted per cycle, " \
        "last 100 requests: " + ", ".join(f"{v} {a:.2f}" for v, a in report["accepted_per_cycle_last_100"].items())


def _settings(model) -> dict[str, Any]:
    ix = model.index
    return {k: getattr(ix, k) for k in ("depth", "max_tokens", "segment_tokens", "min_prob", "max_spec_factor")}


def plot(report: dict[str, Any], path: Path) -> None:
    plt = harness.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for v, ws in report["windows"].items():
        x = [w["window"] for w in ws]
        axes[0].plot(x, [w["mat"] for w in ws], marker="o", label=v)
        axes[1].plot(x, [w["speedup"] for w in ws], marker="o", label=v)
    axes[0].set_ylabel("tokens per target forward (MAT)")
    axes[1].set_ylabel("speedup over plain")
    for ax in axes:
        ax.set_xlabel(f"window of {report['config']['window']} requests")
        ax.legend(fontsize=8)
    fig.suptitle(f"{report['target']}: repetitive SQL stream, {report['requests']} requests", fontsize=9)
    harness.save_figure(fig, path)


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.suffix_stream", __doc__)
    harness.add_common(ap, out="runs/bench/suffix-stream", seed=0)
    ap.add_argument("--suffix", default="", help="the offline seed: a suffix member's folder ('' = no seed)")
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--window", type=int, default=25)
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--k", type=int, default=8, help="the most drafts per cycle")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    for flag in ("requests", "window", "max_new_tokens", "k"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be >= 1")
    report = run(args, " ".join(["python -m benchmarks.suffix_stream", *argv]))
    print(format_table(report))
    print(f"wrote {args.out}/results.json, table.md and stream.png")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
