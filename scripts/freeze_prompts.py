"""python scripts/freeze_prompts.py [--check]

Runs the generators in scripts/prompt_sets/ and writes data_gen/prompts/<set>.jsonl: one {"id", "prompt", "group",
"split"} object a line, in generator order, id = "<set>-" + sha1(prompt)[:12]. The split is by group and leak-free:
groups are joined into components wherever a prompt of one is a near-duplicate (token Jaccard >= 0.7) of a prompt of
another, in any set; whole components, in the order of the sha1 of their smallest group name, are held out while
every set they touch stays within 20% held out. A component that does not fit stays train: near-duplicates are what
connect it, so no split along its groups keeps them apart. --check: exit 1 if the files differ from this output.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from collections import Counter
from pathlib import Path

from data_gen.diversity import near_duplicate_pairs
from data_gen.domains import PROMPT_SETS, PROMPTS_DIR

HELD_OUT_SHARE = 0.20


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def generated_rows() -> dict[str, list[dict[str, str]]]:
    """Every set's {"id", "prompt", "group"} rows in generator order; no prompt may appear twice in all sets."""
    sets = {name: [{"id": f"{name}-{_sha1(prompt)[:12]}", "prompt": prompt, "group": f"{name}/{group}"}
                   for group, prompt in importlib.import_module(f"prompt_sets.{name}").prompts()]
            for name in PROMPT_SETS}
    counts = Counter(r["prompt"] for rows in sets.values() for r in rows)
    repeated = [p for p, n in counts.items() if n > 1]
    if repeated:
        raise SystemExit(f"{len(repeated)} prompts appear more than once, e.g. {repeated[0]!r}")
    return sets


def components(rows: list[dict[str, str]]) -> list[list[str]]:
    """The groups of `rows` joined by near-duplicate prompts (union-find), each component's names sorted."""
    parent = {r["group"]: r["group"] for r in rows}

    def root(g: str) -> str:
        while parent[g] != g:
            g = parent[g]
        return g

    for i, j in near_duplicate_pairs([r["prompt"] for r in rows]):
        parent[root(rows[i]["group"])] = root(rows[j]["group"])
    comps: dict[str, list[str]] = {}
    for g in parent:
        comps.setdefault(root(g), []).append(g)
    return [sorted(c) for c in comps.values()]


def assign_splits(sets: dict[str, list[dict[str, str]]]) -> None:
    """Give every row its "split": whole components are held out while each set stays within HELD_OUT_SHARE."""
    rows = [r for name in sets for r in sets[name]]
    set_of = {r["group"]: name for name in sets for r in sets[name]}
    size = Counter(r["group"] for r in rows)
    held: Counter[str] = Counter()
    held_groups: set[str] = set()
    for comp in sorted(components(rows), key=lambda c: _sha1(c[0])):
        need: Counter[str] = Counter()
        for g in comp:
            need[set_of[g]] += size[g]
        if all(held[name] + n <= HELD_OUT_SHARE * len(sets[name]) for name, n in need.items()):
            held.update(need)
            held_groups.update(comp)
    for r in rows:
        r["split"] = "held_out" if r["group"] in held_groups else "train"


def frozen_files() -> dict[Path, str]:
    """The content of every data_gen/prompts/<set>.jsonl, as the generators produce it."""
    sets = generated_rows()
    assign_splits(sets)
    return {PROMPTS_DIR / f"{name}.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            for name, rows in sets.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Freeze the prompt sets to data_gen/prompts/<set>.jsonl.")
    ap.add_argument("--check", action="store_true", help="exit 1 if the files differ from what the generators produce")
    args = ap.parse_args(argv)
    files = frozen_files()
    if args.check:
        stale = [p.name for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        stale += sorted(p.name for p in PROMPTS_DIR.glob("*.jsonl") if p not in files)
        if stale:
            print(f"out of date: {', '.join(stale)}; run python scripts/freeze_prompts.py", file=sys.stderr)
            return 1
        print(f"{PROMPTS_DIR} is up to date")
        return 0
    PROMPTS_DIR.mkdir(exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8", newline="\n")
        rows = [json.loads(line) for line in text.splitlines()]
        n_held = sum(r["split"] == "held_out" for r in rows)
        print(f"{path.stem:14s} {len(rows):4d} prompts  {len({r['group'] for r in rows}):4d} groups  "
              f"train {len(rows) - n_held:4d}  held_out {n_held:4d} ({n_held / len(rows):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
