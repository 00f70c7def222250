"""What the data buys: a suffix member's held-out quality against the number of self-distilled answers seeding it.

    python -m benchmarks.data_curve --domain sql --data runs/data/smollm2-135m-instruct/sql \
        --sizes 292,584,1168,2336 [--recipe recipes/sql/suffix.yaml] [--held-out 0] [--out runs/bench/data_curve]
        [--heads name=runs/...,name=...] [--also name=DATA_DIR[:N],...]

For each size n, a suffix member is built (`draftpool.models.suffix.build_suffix`, the recipe's settings) from the
first n answers of a seeded shuffle of the data's train split (`training.train_drafter.answer_sample`: each smaller
sample inside every larger one), and all are evaluated in one pass over the held-out greedy answers
(`training.evaluate.evaluate_many`, the evaluation every exported drafter gets: step-0 top-1 and the empirical greedy
chain, accepted drafts + 1, at the recipe's eval.depth). --heads adds trained heads' own held-out evaluations
(<run>/eval.json of train_drafter runs, e.g. one per data.max_train_answers) to the table and the plot. --also adds
suffix members seeded from other data folders' train answers (N of them, the same seeded sample; all without N), e.g.
answers to target-written prompts (`data_gen.magpie`), judged on this data's held-out answers like the rest.
Writes <out>/results.json, <out>/table.md (also printed) and <out>/data_curve.png (`python -m benchmarks.publish <out>`
copies it to docs/).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from benchmarks import harness
from data_gen.generate import load_distilled
from draftpool.config import ConfigError, read_yaml
from draftpool.models.suffix import SUFFIX, build_suffix
from draftpool.pool import Member
from training.evaluate import evaluate_many
from training.train_drafter import answer_sample

SUFFIX_KEYS = ("depth", "max_tokens", "segment_tokens", "min_prob", "max_spec_factor", "n_min", "n_max")


def main(argv: list[str] | None = None) -> dict:
    ap = harness.parser("benchmarks.data_curve", __doc__)
    harness.add_common(ap, device="cpu", dtype="float32", out="runs/bench/data_curve")
    ap.add_argument("--domain", default="sql")
    ap.add_argument("--data", required=True, help="a self-distilled data folder (data_gen.generate's output)")
    ap.add_argument("--sizes", required=True, help="comma list of train answer counts (0 = all)")
    ap.add_argument("--recipe", default=None, help="suffix recipe (default recipes/<domain>/suffix.yaml)")
    ap.add_argument("--held-out", type=int, default=0, help="held-out greedy answers to evaluate on (0 = all)")
    ap.add_argument("--per-prompt", default="0", help="comma list: answers taken per prompt (0 = the plain sample; "
                                                       "1 = distinct prompts only; 2 = two answers of half the "
                                                       "prompts ...), one curve each")
    ap.add_argument("--heads", default="", help="name=run_dir,... trained runs whose eval.json joins the table")
    ap.add_argument("--also", default="", help="name=data_dir[:n],... suffix members from other data's train answers")
    args = ap.parse_args(argv)
    try:
        sizes = [int(x) for x in args.sizes.split(",") if x]
    except ValueError:
        sizes = []
    if not sizes or any(n < 0 for n in sizes):
        raise ConfigError("--sizes: a comma list of counts >= 0")
    also = []
    for spec in filter(None, args.also.split(",")):
        name, _, where = spec.partition("=")
        folder, _, n = where.partition(":")
        if not name or not folder or (n and not n.isdigit()):
            raise ConfigError(f"--also {spec!r}: expected name=data_dir[:n]")
        also.append((name, folder, n))
    recipe = read_yaml(args.recipe or f"recipes/{args.domain}/suffix.yaml")
    opts = {k: v for k, v in recipe.get("suffix", {}).items() if k in SUFFIX_KEYS}
    depth, max_len = recipe.get("eval", {}).get("depth", 7), recipe.get("train", {}).get("max_len", 320)
    target = harness.load_target(args)
    info, model, tok = target.info, target.model, target.tok
    train = list(load_distilled(args.data, "train"))
    held = [r for r in load_distilled(args.data, "held_out") if r["temperature"] == 0.0]
    held = held[:args.held_out] if args.held_out else held
    drafters, meta = {}, {}
    for per in [int(x) for x in args.per_prompt.split(",") if x]:
        for n in sizes:
            rows = answer_sample(train, n) if per == 0 else per_prompt_sample(train, n, per)
            if per and len(rows) < n:
                continue  # the data has too few prompts for n answers at `per` each
            name = f"suffix-{len(rows)}" + (f"-x{per}" if per else "")
            drafters[name], meta[name] = member(name, rows, info.vocab_size, opts)
            harness.log.info("%s: %s", name, meta[name])
    for name, folder, n in also:
        rows = answer_sample(list(load_distilled(folder, "train")), int(n or 0))
        drafters[name], meta[name] = member(name, rows, info.vocab_size, opts)
        meta[name]["data"] = folder
        harness.log.info("%s: %s", name, meta[name])
    res = evaluate_many(list(drafters.values()), model, held, depth, max_len, tok.pad_token_id, desc="held-out")
    points = [{"drafter": name, **meta[name], "top1": r["top1_per_step"][0],
               "chain": r["empirical_greedy_chain_length"], "positions": r["positions"]} for name, r in res.items()]
    for spec in filter(None, args.heads.split(",")):
        name, run = spec.split("=", 1)
        ev = json.loads((Path(run) / "eval.json").read_text())
        cfg = json.loads((Path(run) / "config.json").read_text())
        points.append({"drafter": name, "answers": cfg.get("data", {}).get("max_train_answers") or len(train),
                       "top1": ev["top1_per_step"][0], "chain": ev["empirical_greedy_chain_length"],
                       "positions": ev["positions"]})
    report = {"target": info.name, "domain": args.domain, "data": args.data, "train_answers": len(train),
              "held_out_answers": len(held), "depth": depth, "suffix": opts, "points": points}
    table = harness.markdown_table(
        ["drafter", "answers", "distinct prompts", "held-out top-1", "held-out chain"],
        [[p["drafter"], p["answers"], p.get("distinct_prompts", "-"), f"{p['top1']:.3f}", f"{p['chain']:.2f}"]
         for p in points])
    harness.write_results(args.out, report, table)
    print(table)
    plot(points, Path(args.out) / "data_curve.png",
         f"{args.domain}: held-out chain vs self-distilled answers ({len(held)} held-out)")
    return report


def member(name: str, rows: list[dict], vocab_size: int, opts: dict) -> tuple[Member, dict]:
    """A suffix member seeded from rows' prompts and answers -> (the member, its figures)."""
    seqs = [list(r["prompt_ids"]) + list(r["response_ids"]) for r in rows]
    drafter = build_suffix(seqs, vocab_size, **opts)
    return Member(name, SUFFIX.name, drafter), {"answers": len(rows),
                                                "distinct_prompts": len({r["prompt_id"] for r in rows}),
                                                "indexed_tokens": drafter.index.n_tokens}


def per_prompt_sample(rows: list[dict], n: int, per: int, seed: int = 0) -> list[dict]:
    """n answers taking `per` answers of each prompt in a seeded prompt order (fewer when the data runs out)."""
    by_prompt: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["id"]):
        by_prompt.setdefault(r["prompt_id"], []).append(r)
    prompts = sorted(p for p, rs in by_prompt.items() if len(rs) >= per)
    random.Random(seed).shuffle(prompts)
    return [r for p in prompts for r in by_prompt[p][:per]][:n]


def plot(points: list[dict], path: Path, title: str) -> None:
    """Held-out chain against train answers, one curve per member kind (and per-prompt setting)."""
    plt = harness.pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    def curve(p: dict) -> str:  # suffix-292 -> suffix; suffix-292-x2 -> suffix x2; eagle3-292 -> eagle3
        parts = p["drafter"].split("-")
        return " ".join([parts[0], *parts[2:]])

    for kind in sorted({curve(p) for p in points}):
        pts = sorted((p["answers"], p["chain"]) for p in points if curve(p) == kind)
        ax.plot(*zip(*pts), marker="o", label=kind)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("train answers")
    ax.set_ylabel("held-out empirical greedy chain")
    ax.set_title(title, fontsize=9)
    ax.legend()
    harness.save_figure(fig, path)


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
