"""Live selection over a pool on request streams a user would send: tok/s of every selector against every member
alone, plain decoding interleaved, greedy, outputs checked against plain.

    python -m benchmarks.select_live --pool pools --stream mixed [--domains sql,python,general] [--per-domain 6]
        [--block 20] [--max-new-tokens 64] [--k 8] [--methods singles,hedgespec-nh,hybrid,per-cycle]

Streams (`--stream`): `sql` (held-out SQL: the first --per-domain prompts of the first domain), `mixed` (--per-domain
prompts of every domain, shuffled with --seed) and `shift` (--block prompts of each domain in turn: the domain changes
every --block requests). Prompts: a domain's independently written stream file where there is one
(benchmarks/streams/: sql_three_schemas, python_six_domains, math_six_topics), else the domain's held-out prompts
(never trained on); chat-rendered. The pool's heads and suffix members (`--kinds`) are the members.

Methods, one decoder each, kept across the stream as a server keeps one, mode auto (a head's chain length chosen per
cycle, a model-free member's up to --k): `singles` (every member alone; the best in hindsight is the one with the most
tok/s over the stream), `hedgespec-nh` (NormalHedge, full information, a fresh learner per request),
`hedgespec-nh-settled` (the same, evaluated every 8 rounds once the weights settle), `hybrid` (Arctic's rule over the
request's own domain's suffix member and head, domain from the stream's label: an oracle router, the rule's best case)
`per-cycle` (`specsel/selection/per_cycle.py`: every cycle the member with the most expected tokens per second;
heads valued by their moving averages) and `per-cycle-confidence` (the same, the leading head synced every cycle and
valued by its calibrated confidence).
Request by request, plain and then every method in turn, so machine drift hits them alike. Per method: tok/s, x
plain, x the best single member, MAT, exact outputs, selection + feedback per cycle (median and 95th percentile of its
share of the cycle's time), switches and the share of cycles per member. Writes <out>/results.json and
<out>/table.md.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.decode import read_prompt_file
from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import ConfigError
from draftpool.io import cache_root
from specsel.decoding.auto import auto_spec
from specsel.decoding.costs import cache_path
from specsel.decoding.drafter import make_drafter
from specsel.decoding.loop import SpecDecoder
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.hybrid import HybridSelector
from specsel.selection.learners import make_learner
from specsel.selection.per_cycle import PerCycleSelector
from specsel.selection.selector import Selector

STREAM_FILES = {"sql": "sql_three_schemas.jsonl", "python": "python_six_domains.jsonl",
                "math": "math_six_topics.jsonl"}
SELECTORS = ("hedgespec-nh", "hedgespec-nh-settled", "hybrid", "per-cycle", "per-cycle-confidence")
SETTLED = GameConfig(warmup_rounds=4, feedback_every=8, settle=0.9)


def domain_stream(domain: str, n: int) -> list[dict[str, str]]:
    """The first n prompts of a domain: its stream file where there is one, else its held-out prompts."""
    name = STREAM_FILES.get(domain)
    rows = read_prompt_file(str(Path(__file__).parent / "streams" / name)) if name else \
        [{"id": f"{domain}-{i}", "prompt": r["prompt"]} for i, r in enumerate(domain_prompts(domain)["held_out"])]
    if len(rows) < n:
        raise ConfigError(f"{domain}: {len(rows)} prompts, {n} asked")
    return [{**r, "domain": domain} for r in rows[:n]]


def make_stream(kind: str, domains: list[str], per_domain: int, block: int, seed: int) -> list[dict[str, str]]:
    if kind == "sql":
        return domain_stream(domains[0], per_domain)
    if kind == "mixed":
        rows = [r for d in domains for r in domain_stream(d, per_domain)]
        random.Random(seed).shuffle(rows)
        return rows
    if kind == "shift":
        return [r for d in domains for r in domain_stream(d, block)]
    raise ConfigError(f"unknown stream {kind!r}; choose sql, mixed or shift")


def methods_of(spec: list[str], names: list[str]) -> list[str]:
    out = []
    for m in spec:
        if m == "singles":
            out += [f"single:{n}" for n in names]
        elif m in SELECTORS or (m.startswith("single:") and m[7:] in names):
            out.append(m)
        else:
            raise ConfigError(f"unknown method {m!r}; choose singles, single:<member>, {', '.join(SELECTORS)}")
    return out


def hybrid_pair(names: list[str], kinds: dict[str, str], domain: str) -> tuple[int, int]:
    """(suffix member, head) of the request's domain (else the general ones) for Arctic's rule."""
    for d in (domain, "general"):
        s, h = f"{d}-suffix", next((n for n in names if n.startswith(f"{d}-") and kinds[n] != "suffix"), None)
        if s in names and h is not None:
            return names.index(s), names.index(h)
    raise ConfigError(f"hybrid needs a suffix member and a head of {domain!r} or general in the pool")


def share_quantiles(shares: list[float]) -> tuple[float, float]:
    s = sorted(shares)
    return (s[len(s) // 2], s[min(len(s) - 1, int(0.95 * len(s)))]) if s else (0.0, 0.0)


def live(model, members: list, stream: list[dict[str, str]], prompts: list[list[int]], methods: list[str], k: int,
         max_new_tokens: int, stops: list[int], evals: dict[str, dict | None] | None = None,
         costs: str | None = None) -> dict[str, Any]:
    """Decode the stream with plain decoding and every method (one decoder each, kept across the stream, auto mode:
    its priors each member's exported evaluation, `evals`, its measured costs cached in the file `costs`, None for
    none), request by request -> per method: tok/s, x plain, x the best single member, MAT, exact, selection shares,
    switches, share of cycles per member; and the best single member in hindsight."""
    names = [m.name for m in members]
    kinds = {m.name: m.kind for m in members}

    def selector(m: str, idx: int, row: dict[str, str]):
        if m.startswith("single:"):
            return None
        if m == "hybrid":
            return HybridSelector(*hybrid_pair(names, kinds, row["domain"]), threshold=k)
        if m in ("per-cycle", "per-cycle-confidence"):
            return PerCycleSelector(k, confidence=m == "per-cycle-confidence")
        game = SETTLED if m == "hedgespec-nh-settled" else GameConfig()
        return Selector(make_learner("normal_hedge", len(names), seed=idx), len(names), k, game)

    evals = evals or {}

    def decoder(m: str) -> SpecDecoder:
        if m.startswith("single:"):  # alone, auto may weigh trees (its default)
            member = members[names.index(m[7:])]
            auto = auto_spec({"drafter": evals.get(member.name)}, costs_cache=costs)
            return SpecDecoder(model, make_drafter(member.kind, member.module), k=k, stop_ids=stops, mode="auto",
                               auto=auto)
        drafters = {mb.name: make_drafter(mb.kind, mb.module) for mb in members}
        auto = auto_spec({n: evals.get(n) for n in names}, costs_cache=costs, with_trees=False)
        return SpecDecoder(model, drafters, selector=selector(m, 0, stream[0]), k=k, stop_ids=stops, mode="auto",
                           auto=auto)

    plain = SpecDecoder(model, mode="plain", stop_ids=stops)
    decoders = {m: decoder(m) for m in methods}
    plain.generate(prompts[0], 8)
    for dec in decoders.values():  # untimed warm-up: auto measures its costs here, as a server does at start
        dec.generate(prompts[0], 8)
    runs: dict[str, dict[str, Any]] = {m: {"tokens": 0, "seconds": 0.0, "forwards": 0, "exact": 0, "switches": 0,
                                           "shares": [], "picks": [0] * len(names)} for m in ["plain", *methods]}
    # rule: request by request, plain and then every method in turn, so machine drift hits them alike
    for idx, (row, prompt) in enumerate(harness.progress(list(zip(stream, prompts)), "live", unit="request")):
        ref, pm = plain.generate(prompt, max_new_tokens)
        for m in ["plain", *methods]:
            out = ref
            if m != "plain":
                dec, sel = decoders[m], selector(m, idx, row)
                if sel is not None:
                    dec.set_selector(sel)
                out, pm = dec.generate(prompt, max_new_tokens)
            r = runs[m]
            r["tokens"] += pm.new_tokens
            r["seconds"] += pm.total_s
            r["forwards"] += pm.target_forwards
            r["exact"] += int(out == ref)
            if m != "plain":
                r["switches"] += pm.switches
                r["shares"] += [s / c for s, c in zip(pm.selection_s, pm.cycle_s) if c > 0]
                for c in pm.choices:
                    r["picks"][c if not m.startswith("single:") else names.index(m[7:])] += 1
    plain_tok_s = runs["plain"]["tokens"] / runs["plain"]["seconds"]
    for r in runs.values():
        r["tok_s"] = r["tokens"] / r["seconds"]
        r["speedup"] = r["tok_s"] / plain_tok_s
        r["mat"] = r["tokens"] / r["forwards"]
        r["selection_p50"], r["selection_p95"] = share_quantiles(r.pop("shares"))
        total = sum(r["picks"]) or 1
        r["pick_share"] = {n: p / total for n, p in zip(names, r.pop("picks")) if p}
    singles = [m for m in methods if m.startswith("single:")]
    best = max(singles, key=lambda m: runs[m]["tok_s"]) if singles else None
    for r in runs.values():
        r["x_best_single"] = r["tok_s"] / runs[best]["tok_s"] if best else None
    return {"runs": runs, "best_single": best}


def run(args: argparse.Namespace) -> dict[str, Any]:
    t_start = time.time()
    # 1. target, pool, stream
    info = harness.resolve(args)
    target = harness.load_target(args, info)
    model, tok = target.model, target.tok
    folder = harness.pool_dir(args, info)
    members = harness.load_members(folder, info, model, harness.csv(args.kinds), at_least=2)
    entries = json.loads((folder / "pool.json").read_text())["drafters"]
    stream = make_stream(args.stream, harness.csv(args.domains), args.per_domain, args.block, args.seed)
    prompts = [render_prompt(tok, r["prompt"]) for r in stream]
    methods = methods_of(harness.csv(args.methods), [m.name for m in members])
    # 2. plain and every method over the stream
    res = live(model, members, stream, prompts, methods, args.k, args.max_new_tokens, stop_token_ids(tok, model),
               {m.name: entries.get(m.name, {}).get("eval") for m in members},
               cache_path("", cache_root() / "auto_costs.json"))  # the engine's costs cache, per machine
    # 3. report
    report = {"target": info.name, "members": [m.name for m in members], "stream": args.stream,
              "domains": harness.csv(args.domains), "requests": [r["id"] for r in stream], **res,
              "config": {"per_domain": args.per_domain, "block": args.block, "max_new_tokens": args.max_new_tokens,
                         "k": args.k, "seed": args.seed},
              "machine": harness.machine(target.device, target.dtype), "seconds": time.time() - t_start}
    text = format_table(report)
    harness.write_results(args.out, report, text)
    print(text)
    return report


def format_table(report: dict[str, Any]) -> str:
    rows = []
    for m, r in report["runs"].items():
        picks = ", ".join(f"{n} {s:.0%}" for n, s in sorted(r["pick_share"].items(), key=lambda x: -x[1])[:3])
        best = "" if r["x_best_single"] is None else f"{r['x_best_single']:.2f}"
        rows.append([m, f"{r['mat']:.2f}", f"{r['tok_s']:.1f}", f"{r['speedup']:.2f}", best,
                     f"{r['exact']}/{len(report['requests'])}",
                     "-" if m == "plain" else f"{r['selection_p50']:.1%} / {r['selection_p95']:.1%}",
                     r["switches"] if m != "plain" else "-", picks or "-"])
    head = ["method", "MAT", "tok/s", "x plain", "x best single", "exact", "selection p50 / p95", "switches",
            "cycles per member"]
    return (f"stream {report['stream']} ({len(report['requests'])} requests, {', '.join(report['domains'])}); "
            f"best single in hindsight: {report['best_single']}\n\n" + harness.markdown_table(head, rows))


def make_parser() -> argparse.ArgumentParser:
    ap = harness.parser("benchmarks.select_live", __doc__)
    harness.add_common(ap, pool="", device="cpu", dtype="float32", out="runs/bench/select_live", seed=0)
    ap.add_argument("--kinds", default="eagle3,suffix", help="member kinds of the pool to select among")
    ap.add_argument("--stream", default="mixed", choices=["sql", "mixed", "shift"])
    ap.add_argument("--domains", default="sql,python,general", help="the stream's domains, in order")
    ap.add_argument("--per-domain", type=int, default=6, help="requests per domain (sql, mixed)")
    ap.add_argument("--block", type=int, default=20, help="shift: requests per domain before the domain changes")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--k", type=int, default=8, help="the most drafts per cycle (auto mode)")
    ap.add_argument("--methods", default="singles,hedgespec-nh,hybrid,per-cycle")
    return ap


def _main(argv: list[str] | None) -> int:
    args = make_parser().parse_args(argv)
    if args.per_domain < 1 or args.block < 1 or args.k < 1 or args.max_new_tokens < 2:
        raise ConfigError("--per-domain, --block and --k must be >= 1, --max-new-tokens >= 2")
    run(args)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
