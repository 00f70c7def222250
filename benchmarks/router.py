"""Train the offline prompt router on the shipped domains and measure it on clean and perturbed held-out prompts.

    python -m benchmarks.router --eval [--seed 0] [--out runs/router] [--cache-dir DIR]   (DRAFTPOOL_CPU_THREADS=n)

trains the router (`specsel/selection/router.py`) on the train split of the shipped domains, prints its accuracy on
each domain's held-out prompts, clean and perturbed (`data_gen.perturb`), and writes <out>/results.json, <out>/table.md
(also printed) and the fitted router <out>/router.json.
"""

from __future__ import annotations

import collections
import math
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from benchmarks.common.router import train_domain_router
from data_gen.domains import DOMAINS, GENERAL, domain_prompts
from data_gen.perturb import PAPER_INSTRUCTION, TEMPLATE_NAMES, TEMPLATES, perturbed_prompts
from specsel.selection.router import (
    ENCODER_NAME,
    ENCODER_SHA256,
    PromptRouter,
    RouterError,
    embed,
)

NEUTRAL_TEMPLATES = frozenset(t.name for t in TEMPLATES if t.topic is None)
OTHER_TOPIC_TEMPLATES = frozenset(t.name for t in TEMPLATES if t.topic is not None)


# ----------------------------------------------------------------------------------------------------------- eval


def _accuracy(pred: Sequence[str], gold: Sequence[str]) -> float:
    return sum(p == g for p, g in zip(pred, gold)) / len(gold) if gold else math.nan


def evaluate(router: PromptRouter, domains: Sequence[str] = DOMAINS, seed: int = 0) -> dict[str, Any]:
    """Accuracy of `router` on each domain's held-out prompts, clean and perturbed (`data_gen.perturb`, seed)."""
    clean, pert = [], []
    for d in domains:
        rows = domain_prompts(d)["held_out"]
        if d == GENERAL:
            rows = [r for r in rows if r["source"] == "chat"]
        ids = {r["id"] for r in rows}
        clean += [(d, r) for r in rows]
        pert += [(d, r) for r in perturbed_prompts(d, "held_out", seed) if r["id"] in ids]
    pred_clean = router.predict_embeddings(embed([r["prompt"] for _, r in clean]))
    pred_pert = router.predict_embeddings(embed([r["prompt"] for _, r in pert]))
    per_domain: dict[str, Any] = {}
    for d in domains:
        c = [(p, g) for p, (g, _) in zip(pred_clean, clean) if g == d]
        q = [(p, g, r) for p, (g, r) in zip(pred_pert, pert) if g == d]
        per_domain[d] = {
            "n": len(c),
            "clean_accuracy": _accuracy([p for p, _ in c], [g for _, g in c]),
            "perturbed_accuracy": _accuracy([p for p, _, _ in q], [g for _, g, _ in q]),
            "clean_predicted": dict(collections.Counter(p for p, _ in c).most_common()),
            "perturbed_predicted": dict(collections.Counter(p for p, _, _ in q).most_common()),
        }
    by_template: dict[str, Any] = {}
    for name in TEMPLATE_NAMES:
        q = [(p, g) for p, (g, r) in zip(pred_pert, pert) if r["template"] == name]
        if q:
            by_template[name] = {"n": len(q), "accuracy": _accuracy([p for p, _ in q], [g for _, g in q]),
                                 "misrouted_to": dict(collections.Counter(p for p, g in q if p != g).most_common())}
    by_kind = {}
    for kind, names in (("topic_neutral", NEUTRAL_TEMPLATES), ("other_topic", OTHER_TOPIC_TEMPLATES)):
        q = [(p, g) for p, (g, r) in zip(pred_pert, pert) if r["template"] in names]
        by_kind[kind] = {"n": len(q), "accuracy": _accuracy([p for p, _ in q], [g for _, g in q])}
    examples = [{"domain": g, "predicted": p, "template": r["template"], "prompt": r["prompt"][:300]}
                for p, (g, r) in zip(pred_pert, pert) if p != g][:20]
    return {
        "overall": {"n": len(clean),
                    "clean_accuracy": _accuracy(pred_clean, [g for g, _ in clean]),
                    "perturbed_accuracy": _accuracy(pred_pert, [g for g, _ in pert]),
                    "clean_macro_accuracy": sum(v["clean_accuracy"] for v in per_domain.values()) / len(domains),
                    "perturbed_macro_accuracy": sum(v["perturbed_accuracy"] for v in per_domain.values())
                    / len(domains)},
        "per_domain": per_domain,
        "per_template_kind": by_kind,
        "per_template": by_template,
        "misrouted_examples": examples,
    }


def run_eval(out: Path, seed: int = 0, cache_dir: str | Path | None = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    router = train_domain_router(DOMAINS, seed=seed, cache_dir=cache_dir)
    t_fit = time.perf_counter() - t0
    result = evaluate(router, DOMAINS, seed=seed)
    drafters = [f"{d}-eagle3" for d in (*DOMAINS, GENERAL)]  # the pool of heads the router routes to
    report = {
        "router": {"encoder": ENCODER_NAME, "encoder_sha256": ENCODER_SHA256, "classifier": "multinomial logistic "
                   "regression on mean-pooled, L2-normalised embeddings", "classes": list(router.classes),
                   **router.info},
        "perturbation": {"module": "data_gen.perturb", "seed": seed, "templates": len(TEMPLATE_NAMES),
                         "paper_instruction": PAPER_INSTRUCTION,
                         "note": "a prompt never gets a wrapper borrowing its own domain's vocabulary"},
        "routing": {"drafters": drafters, "note": "a predicted domain d routes to d-eagle3: drafter accuracy equals "
                    "domain accuracy for this pool"},
        **result,
        "timing_s": {"train": round(t_fit, 1), "total": round(time.perf_counter() - t0, 1)},
        "env": {"python": platform.python_version(), "torch": torch.__version__, "threads": torch.get_num_threads()},
    }
    out.mkdir(parents=True, exist_ok=True)
    router.save(out / "router.json")
    harness.write_results(out, report, format_report(report))
    return report


def format_report(report: dict[str, Any]) -> str:
    """Accuracy per domain and overall (markdown), then the wrappers' figures."""
    rows = [[d, v["n"], f"{v['clean_accuracy']:.3f}", f"{v['perturbed_accuracy']:.3f}",
             ", ".join(f"{k} {n}" for k, n in list(v["perturbed_predicted"].items())[:3])]
            for d, v in report["per_domain"].items()]
    o = report["overall"]
    rows.append(["overall", o["n"], f"{o['clean_accuracy']:.3f}", f"{o['perturbed_accuracy']:.3f}",
                 f"(macro {o['clean_macro_accuracy']:.3f} / {o['perturbed_macro_accuracy']:.3f})"])
    lines = [harness.markdown_table(["domain", "n", "clean", "perturbed", "perturbed prompts routed to"], rows), ""]
    kinds = report["per_template_kind"]
    paper = report["per_template"].get("two_answers", {"accuracy": math.nan, "n": 0})
    lines.append(f"perturbed by wrapper: topic-neutral {kinds['topic_neutral']['accuracy']:.3f} "
                 f"(n={kinds['topic_neutral']['n']}), other-topic {kinds['other_topic']['accuracy']:.3f} "
                 f"(n={kinds['other_topic']['n']}), the paper's instruction {paper['accuracy']:.3f} (n={paper['n']})")
    worst = sorted(report["per_template"].items(), key=lambda kv: kv[1]["accuracy"])[:5]
    lines.append("hardest wrappers: " + ", ".join(f"{k} {v['accuracy']:.2f} (n={v['n']})" for k, v in worst))
    return "\n".join(lines)


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.router", __doc__)
    harness.add_common(ap, target=False, out="runs/router", seed=0, help={"seed": "fit and perturbation seed"})
    ap.add_argument("--eval", action="store_true", help="train the router and evaluate it on clean and perturbed "
                    "held-out prompts")
    ap.add_argument("--cache-dir", type=Path, default=None, help="reuse / keep the fitted router here")
    args = ap.parse_args(argv)
    if not args.eval:
        ap.print_help()
        return 2
    if os.environ.get("DRAFTPOOL_CPU_THREADS"):  # as in train_drafter: e.g. 1 on a CPU another job keeps busy
        torch.set_num_threads(int(os.environ["DRAFTPOOL_CPU_THREADS"]))
    out = Path(args.out)
    try:
        report = run_eval(out, seed=args.seed, cache_dir=args.cache_dir)
    except RouterError as e:
        raise harness.BenchError(str(e)) from None
    print(format_report(report))
    print(f"wrote {out / 'results.json'}, {out / 'table.md'} and {out / 'router.json'} "
          f"({report['timing_s']['total']} s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
