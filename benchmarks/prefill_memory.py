"""Native memory per prompt length: the RSS of a process that plain-decodes prompts of ever new lengths, with and
without the lean forward's padded long passes and the bounded glibc heap.

    python -m benchmarks.prefill_memory [--lengths 40:300] [--again-every 3] [--new-tokens 2]
        [--variants padded+bound,padded,unpadded+bound,unpadded] [--threads 1] [--out runs/bench/prefill_memory]
        [--drafter sql-eagle3 --pool pools/{target_slug}]

Each variant runs in its own fresh interpreter (RSS is per process): the target loads, `SpecDecoder(mode="plain")`
decodes `--new-tokens` tokens after a prompt of every length in `--lengths` once (synthetic token ids), then every
`--again-every`-th length a second time; the RSS is sampled every 20 prompts. With `--drafter` the decoder is a
greedy chain (k = 4) with that pool drafter instead (its prefill over the prompt runs through prepacked linears too).
`unpadded` runs every pass at its own row count (what the lean forward and the drafters' prepacked linears did before
`padded_rows`), `bound` calls `draftpool.heap.bound_heap` first (what a server does).
Outputs: <out>/results.json and <out>/table.md; a progress line per variant on stderr.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from benchmarks import harness
from draftpool.config import ConfigError

MB = 2**20
VARIANTS = ("padded+bound", "padded", "unpadded+bound", "unpadded")


def child(variant: str, lengths: range, again_every: int, new_tokens: int, threads: int, target: str,
          drafter: str = "", pool: str = "") -> dict[str, Any]:
    """One variant in this process -> {"first": [(length, MB)], "again": [(length, MB)], "load_mb", "seconds"}."""
    parts = set(variant.split("+"))
    if "bound" in parts:
        from draftpool.heap import bound_heap

        bound_heap()
    import psutil
    import torch

    from draftpool.forward import lean, packed
    from specsel.decoding.loop import SpecDecoder

    if "unpadded" in parts:  # every pass at its own row count, as before the padding
        lean.padded_rows = packed.padded_rows = lambda rows: rows
    torch.set_num_threads(threads)
    loaded = harness.load_target(argparse.Namespace(target=target))
    info, model = loaded.info, loaded.model
    if drafter:
        from draftpool.pool import load_members
        from specsel.decoding.drafter import make_drafter

        members = {m.name: m for m in load_members(pool.format(target_slug=info.slug), info, model)}
        if drafter not in members:
            raise ConfigError(f"--drafter {drafter!r} is not in {pool} ({', '.join(members)})")
        dec = SpecDecoder(model, make_drafter(members[drafter].kind, members[drafter].module), mode="chain", k=4)
    else:
        dec = SpecDecoder(model, mode="plain")
    proc = psutil.Process()
    rss = lambda: round(proc.memory_info().rss / MB, 1)  # noqa: E731
    report: dict[str, Any] = {"load_mb": rss(), "first": [], "again": []}
    t0 = time.perf_counter()
    for name, pass_lengths in (("first", list(lengths)), ("again", list(lengths)[::again_every])):
        for i, n in enumerate(pass_lengths, 1):
            dec.generate([5 + j % 7 for j in range(n)], new_tokens)
            if i % 20 == 0 or i == len(pass_lengths):
                report[name].append((n, rss()))
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return report


def table(results: dict[str, dict[str, Any]], lengths: range, again_every: int) -> str:
    """RSS per variant after load, after the first 20 prompts, after each pass, and the growth."""
    rows = [[v, f"{r['load_mb']:.0f}", f"{r['first'][0][1]:.0f}", f"{r['first'][-1][1]:.0f}",
             f"{r['first'][-1][1] - r['first'][0][1]:+.0f}", f"{r['again'][-1][1]:.0f}",
             f"{r['again'][-1][1] - r['first'][-1][1]:+.0f}"] for v, r in results.items()]
    return (f"Plain decoding of prompts of every length {lengths.start}..{lengths.stop - 1}, then every "
            f"{again_every}th again; RSS in MB.\n\n" + harness.markdown_table(
                ["variant", "after load", "after the first 20", "after the first pass", "growth, first pass from 20",
                 "after the second pass", "growth, second pass"], rows) + "\n")


def parse_lengths(text: str) -> range:
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise ConfigError(f"--lengths takes START:STOP, got {text!r}") from None
    if not 1 <= a < b:
        raise ConfigError(f"--lengths: 1 <= START < STOP, got {text!r}")
    return range(a, b)


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.prefill_memory", __doc__)
    harness.add_common(ap, pool="pools/{target_slug}", out="runs/bench/prefill_memory")
    ap.add_argument("--lengths", default="40:300", help="START:STOP prompt lengths, in tokens")
    ap.add_argument("--again-every", type=int, default=3, help="the second pass takes every n-th length")
    ap.add_argument("--new-tokens", type=int, default=2)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--drafter", default="", help="a pool drafter: decode greedy chains (k = 4) with it")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    lengths = parse_lengths(args.lengths)
    if args.again_every < 1 or args.new_tokens < 1:
        raise ConfigError("--again-every and --new-tokens must be >= 1")
    if args.child:
        print(json.dumps(child(args.child, lengths, args.again_every, args.new_tokens, args.threads,
                               args.target, args.drafter, args.pool)))
        return 0
    variants = harness.csv(args.variants)
    bad = [v for v in variants if v not in VARIANTS]
    if bad or not variants:
        raise ConfigError(f"--variants takes {', '.join(VARIANTS)}; got {args.variants!r}")
    results = {}
    for v in variants:
        cmd = [sys.executable, "-m", "benchmarks.prefill_memory", "--child", v, "--lengths", args.lengths,
               "--again-every", str(args.again_every), "--new-tokens", str(args.new_tokens),
               "--threads", str(args.threads), "--target", args.target, "--drafter", args.drafter,
               "--pool", args.pool]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(f"variant {v} failed: {done.stderr.strip()[-2000:]}")
        results[v] = json.loads(done.stdout.strip().splitlines()[-1])
        harness.log.info(f"[prefill_memory] {v}: {results[v]['first'][-1][1]:.0f} MB after the first pass, "
                         f"{results[v]['again'][-1][1]:.0f} after the second ({results[v]['seconds']} s)")
    text = table(results, lengths, args.again_every)
    harness.write_results(args.out, {"lengths": args.lengths, "again_every": args.again_every,
                                     "drafter": args.drafter, "new_tokens": args.new_tokens,
                                     "threads": args.threads, "results": results}, text)
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
