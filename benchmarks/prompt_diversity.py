"""Diversity figures of the shipped prompt sets, one markdown table row per set.

    python -m benchmarks.prompt_diversity [--out runs/bench/prompt_diversity] [--before <git-rev>] [--sample 350]

Per set (data_gen/prompts/<set>.jsonl): prompts, groups, train / held-out prompts, the distinct word 2- and 3-gram
ratios over the whole set and the distinct 2-gram ratio at a fixed size (the mean over 5 seeded samples of --sample
prompts: the whole-set ratio falls as a set grows), the near-duplicate rate (the share of prompts with another
prompt of the same set at token Jaccard >= 0.7) and the mean words a prompt (data_gen/diversity.py). --before REV
also reads the sets as they were at git revision REV (git show REV:data_gen/prompts/<set>.jsonl) and prints every
figure as "before -> now". Prints the table; with --out, writes <out>/results.json and <out>/table.md.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from benchmarks import harness
from data_gen.diversity import sampled_distinct_ngram_ratio, set_report
from data_gen.domains import PROMPT_SETS, PROMPTS_DIR

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("prompts", "groups", "train", "held_out", "distinct_2gram", "distinct_3gram", "distinct_2gram_at",
           "near_duplicate_rate", "mean_words")


def _parse(text: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def current_sets() -> dict[str, list[dict[str, str]]]:
    """The shipped sets' rows, read from data_gen/prompts/."""
    return {name: _parse((PROMPTS_DIR / f"{name}.jsonl").read_text(encoding="utf-8")) for name in PROMPT_SETS}


def sets_at(rev: str) -> dict[str, list[dict[str, str]]]:
    """The sets' rows as they were at git revision `rev` (a set missing there is left out)."""
    out = {}
    for name in PROMPT_SETS:
        shown = subprocess.run(["git", "show", f"{rev}:data_gen/prompts/{name}.jsonl"], cwd=ROOT,
                               capture_output=True, text=True, encoding="utf-8")
        if shown.returncode == 0:
            out[name] = _parse(shown.stdout)
    if not out:
        raise harness.BenchError(f"no prompt sets at git revision {rev!r}")
    return out


def reports(sets: dict[str, list[dict[str, str]]], sample: int) -> dict[str, dict]:
    """`set_report` of every set, plus distinct_2gram_at: the distinct 2-gram ratio at `sample` prompts."""
    return {name: {**set_report(rows),
                   "distinct_2gram_at": sampled_distinct_ngram_ratio([r["prompt"] for r in rows], 2, sample)}
            for name, rows in sets.items()}


def _cell(key: str, value) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.1f}" if key == "mean_words" else f"{value:.3f}"


def table(now: dict[str, dict], before: dict[str, dict] | None, sample: int) -> list[str]:
    """Markdown lines: a header, a rule, then one row per set; with `before`, cells read "before -> now"."""
    head = [c if c != "distinct_2gram_at" else f"distinct_2gram@{sample}" for c in COLUMNS]
    rows = []
    for name, rep in now.items():
        cells = []
        for key in COLUMNS:
            cell = _cell(key, rep[key])
            if before is not None:
                cell = f"{_cell(key, before.get(name, {}).get(key))} -> {cell}"
            cells.append(cell)
        rows.append([name, *cells])
    return harness.markdown_table(["set", *head], rows).splitlines()


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.prompt_diversity", __doc__)
    harness.add_common(ap, target=False, out="", help={"out": "output folder for results.json and table.md "
                                                              "('' = print only)"})
    ap.add_argument("--before", metavar="REV", help="also the sets at this git revision, shown as before -> now")
    ap.add_argument("--sample", type=int, default=350, help="set size for the size-matched distinct 2-gram ratio")
    args = ap.parse_args(argv)
    now = reports(current_sets(), args.sample)
    before = reports(sets_at(args.before), args.sample) if args.before else None
    text = "\n".join(table(now, before, args.sample))
    print(text)
    if args.out:
        harness.write_results(args.out, {"sets": now, "before": before, "before_rev": args.before,
                                         "sample": args.sample}, text)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
