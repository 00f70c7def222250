"""Calibrate the embedding judge and measure the judges on the shipped labelled step pairs.

    python -m benchmarks.judge_calibration [--pairs FILE] [--min-precision 0.9] [--llm-judge PATH|target|none]
                                           [--out runs/bench/judges]

Embedding judge: cosine similarity of every pair, then the lowest threshold whose precision is at least
--min-precision (the most recall there), with the precision / recall curve; once on the similarity alone and once
with the judge's numbers rule (a pair whose last numbers differ is unaligned whatever its similarity); then out of
sample: the threshold fit on the even-numbered pairs, precision / recall measured on the odd-numbered ones. Exact judge
and the LLM judge (a causal LM folder, or `target` for the embedded default target) on the same pairs. Writes
<out>/calibration.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from draftpool.io import atomic_write_json
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(PAIRS))
    ap.add_argument("--min-precision", type=float, default=0.9)
    ap.add_argument("--llm-judge", default="target", help="a causal LM folder, 'target' or 'none'")
    ap.add_argument("--out", default="runs/bench/judges")
    args = ap.parse_args(argv)
    try:
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
                from draftpool.target import load_target, resolve_target

                target = load_target(resolve_target())
            judge = make_judge("llm", model_path=None if target else args.llm_judge, target=target)
            verdicts = [judge(p["drafted"], p["target"]) for p in pairs]
            res["llm"] = {"judge": args.llm_judge,
                          **dict(zip(("precision", "recall"), precision_recall(verdicts, labels))),
                          "called_aligned": sum(verdicts)}
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    atomic_write_json(Path(args.out) / "calibration.json", res)
    print(f"{len(pairs)} labelled pairs ({sum(labels)} aligned)")
    print(f"embedding: threshold {cal['threshold']:.3f} -> precision {cal['precision']:.3f}, recall "
          f"{cal['recall']:.3f} (lowest threshold with precision >= {args.min_precision})")
    print(f"embedding + same last number: threshold {cal_num['threshold']:.3f} -> precision "
          f"{cal_num['precision']:.3f}, recall {cal_num['recall']:.3f}")
    h = res["held_out"]
    print(f"  out of sample: threshold {h['threshold']:.3f} fit on {h['calibration_pairs']} pairs -> precision "
          f"{h['precision']:.3f}, recall {h['recall']:.3f} on the other {h['held_out_pairs']}")
    print(f"exact: precision {res['exact']['precision']:.3f}, recall {res['exact']['recall']:.3f}")
    if "llm" in res:
        print(f"llm ({args.llm_judge}): precision {res['llm']['precision']:.3f}, recall {res['llm']['recall']:.3f}")
    print(f"wrote {Path(args.out) / 'calibration.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
