"""Copy a benchmark run's figures (and, asked for, its table) from its --out folder into docs/.

    python -m benchmarks.publish <out> [--docs docs] [--only NAME[=DOCS_NAME],...] [--table DOCS_NAME.md]

Benchmarks write only into their --out folder; this is the one command that puts their figures where the docs show
them. Without --only every PNG of <out> is copied under its own name (e.g. runs/bench/select -> docs/select_heatmap.png
...); --only names the files to copy, each optionally under another name in docs (select_heatmap.png=
select31_heatmap.png). --table copies <out>/table.md to docs/DOCS_NAME.md. Each copy goes through a temporary file
and a rename (a reader of docs never sees half a PNG); every name is checked before anything is copied. Prints one
line per copied file.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from benchmarks import harness


def plan(out: Path, docs: Path, only: str = "", table: str = "") -> list[tuple[Path, Path]]:
    """(source, destination) of every copy, checked: the run folder and each named file exist, names are plain."""
    if not out.is_dir():
        raise harness.BenchError(f"run folder {out} does not exist")
    pairs: list[tuple[str, str]] = []
    if only:
        for spec in harness.csv(only):
            src, _, dst = spec.partition("=")
            pairs.append((src, dst or src))
    else:
        pairs = [(p.name, p.name) for p in sorted(out.glob("*.png")) if not p.name.startswith(".")]
        if not pairs and not table:
            raise harness.BenchError(f"{out} holds no PNG to publish")
    if table:
        pairs.append(("table.md", table if table.endswith(".md") else f"{table}.md"))
    copies = []
    for src, dst in pairs:
        if Path(src).name != src or Path(dst).name != dst or dst.startswith("."):
            raise harness.BenchError(f"--only/--table {src}={dst}: plain file names only")
        if not (out / src).is_file():
            raise harness.BenchError(f"{out / src} does not exist")
        copies.append((out / src, docs / dst))
    return copies


def publish(copies: list[tuple[Path, Path]]) -> None:
    """Each source to its destination through a temporary file beside it, then a rename."""
    for src, dst in copies:
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{dst.name}.tmp-{uuid.uuid4().hex[:8]}")
        try:
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
        finally:
            tmp.unlink(missing_ok=True)
        print(f"copied {src} -> {dst}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser("benchmarks.publish", __doc__)
    ap.add_argument("out", help="a benchmark's --out folder")
    ap.add_argument("--docs", default="docs", help="where the docs' figures live (default: %(default)s)")
    ap.add_argument("--only", default="", help="comma list of NAME or NAME=DOCS_NAME to copy (default: every PNG)")
    ap.add_argument("--table", default="", help="also copy table.md to this name in --docs")
    args = ap.parse_args(argv)
    publish(plan(Path(args.out), Path(args.docs), args.only, args.table))
    return 0


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
