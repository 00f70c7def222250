"""Calibrate the embedding judge and measure the judges on the shipped labelled step pairs.

    python -m benchmarks.judge_calibration [--pairs FILE] [--min-precision 0.9] [--llm-judge PATH|target|none]
                                           [--out runs/bench/judges]

Embedding judge: cosine similarity of every pair, then the lowest threshold whose precision is at least
--min-precision (the most recall there), with the precision / recall curve; once on the similarity alone and once
with the judge's numbers rule (a pair whose last numbers differ is unaligned whatever its similarity); then out of
sample: the threshold fit on the even-numbered pairs, precision / recall measured on the odd-numbered ones. Exact judge
and the LLM judge (a causal LM folder, or `target` for --target) on the same pairs. Writes <out>/results.json and
<out>/table.md (also printed).
"""

from __future__ import annotations

from benchmarks import harness
from specsel.lookahead.judges import (
    PAIRS,
    EmbeddingJudge,
    ExactJudge,
    calibrate,
    last_number,
    load_pairs,
    make_judge,
    precision_recall,
)


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.judge_calibration", __doc__)
    harness.add_common(ap, out="runs/bench/judges")
    ap.add_argument("--pairs", default=str(PAIRS))
    ap.add_argument("--min-precision", type=float, default=0.9)
    ap.add_argument("--llm-judge", default="target", help="a causal LM folder, 'target' or 'none'")
    args = ap.parse_args(argv)
    pairs = load_pairs(args.pairs)
    labels = [p["aligned"] for p in pairs]
    sims = [EmbeddingJudge(0.0).similarity(p["drafted"], p["target"]) for p in pairs]
    exact = [ExactJudge()(p["drafted"], p["target"]) for p in pairs]
    cal = calibrate([1.0 if e else s for s, e in zip(sims, exact)], labels, args.min_precision)
    same = [last_number(p["drafted"]) == last_number(p["target"]) for p in pairs]
    # rule: the judge's order: exact match, then the numbers rule, then the similarity threshold
    cal_num = calibrate([1.0 if e else (s if n else -1.0) for s, e, n in zip(sims, exact, same)], labels,
                        args.min_precision)
    res = {"pairs": args.pairs, "n": len(pairs), "aligned": sum(labels), "embedding": cal,
           "embedding_numbers": cal_num, "similarities": sims}
    # out of sample: the threshold from the even-numbered pairs, precision / recall on the odd-numbered ones
    scores = [1.0 if e else (s if n else -1.0) for s, e, n in zip(sims, exact, same)]
    fit = calibrate(scores[0::2], labels[0::2], args.min_precision)
    held = precision_recall([x >= fit["threshold"] for x in scores[1::2]], labels[1::2])
    res["held_out"] = {"threshold": fit["threshold"], "calibration_pairs": len(scores[0::2]),
                       "held_out_pairs": len(scores[1::2]), "precision": held[0], "recall": held[1]}
    res["exact"] = dict(zip(("precision", "recall"), precision_recall(exact, labels)))
    if args.llm_judge != "none":
        target = None
        if args.llm_judge == "target":
            loaded = harness.load_target(args)
            target = (loaded.model, loaded.tok)
        judge = make_judge("llm", model_path=None if target else args.llm_judge, target=target)
        verdicts = [judge(p["drafted"], p["target"]) for p in pairs]
        res["llm"] = {"judge": args.llm_judge,
                      **dict(zip(("precision", "recall"), precision_recall(verdicts, labels))),
                      "called_aligned": sum(verdicts)}
    table = format_table(res, args.min_precision)
    out = harness.write_results(args.out, res, table)
    print(table)
    print(f"wrote {out / 'results.json'} and {out / 'table.md'}")
    return 0


def format_table(res: dict, min_precision: float) -> str:
    """One row per judge: threshold, precision, recall."""
    cal, cal_num, h = res["embedding"], res["embedding_numbers"], res["held_out"]
    rows = [["embedding", f"{cal['threshold']:.3f}", f"{cal['precision']:.3f}", f"{cal['recall']:.3f}"],
            ["embedding + same last number", f"{cal_num['threshold']:.3f}", f"{cal_num['precision']:.3f}",
             f"{cal_num['recall']:.3f}"],
            [f"  out of sample (fit on {h['calibration_pairs']}, measured on {h['held_out_pairs']})",
             f"{h['threshold']:.3f}", f"{h['precision']:.3f}", f"{h['recall']:.3f}"],
            ["exact", "-", f"{res['exact']['precision']:.3f}", f"{res['exact']['recall']:.3f}"]]
    if "llm" in res:
        rows.append([f"llm ({res['llm']['judge']})", "-", f"{res['llm']['precision']:.3f}",
                     f"{res['llm']['recall']:.3f}"])
    return (f"{res['n']} labelled pairs ({res['aligned']} aligned); embedding thresholds: the lowest with precision "
            f">= {min_precision}\n\n" + harness.markdown_table(["judge", "threshold", "precision", "recall"], rows))


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
