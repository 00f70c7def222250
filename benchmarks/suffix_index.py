"""Suffix index cost at scale: build time, memory per indexed token, proposal time, and the cap under a long stream.

    python -m benchmarks.suffix_index [--tokens 1000000] [--proposals 500] [--k 8] [--tree-tokens 24]
        [--tree-top-k 4] [--soak 10000] [--seed 0]

The corpus is synthetic and seeded (sequences of 200 tokens stitched from 3,000 Zipf-distributed phrases over 8,000
ids: repetitive like served answers, not a language). Reports the build seconds and bytes per indexed token of one
segment of `--tokens` tokens, the median and 99th-percentile time of a `--k`-token proposal after a random prefix of a
corpus sequence and of a tree proposal there (SuffixDecoding's tree: `--k` deep, `--tree-tokens` nodes), and, for
`--soak` inserted answers of 200 tokens into an index capped at 1M tokens, the largest token count it held (the cap
must hold: segments are dropped whole, oldest first).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from benchmarks import harness
from benchmarks.common.corpus import corpus
from draftpool.models.suffix_index import SuffixIndex


def run(args: argparse.Namespace) -> dict:
    seqs = corpus(args.tokens, args.seed)
    t0 = time.perf_counter()
    index = SuffixIndex(segment_tokens=args.tokens + 1)
    index.add(seqs)
    build = time.perf_counter() - t0
    seg = index.all_segments()[0]
    rng = np.random.default_rng(args.seed + 1)
    times, lengths, tree_times, tree_nodes = [], [], [], []
    for i in rng.integers(0, len(seqs), args.proposals):
        ctx = seqs[i][: int(rng.integers(20, 150))]
        t0 = time.perf_counter()
        lengths.append(len(index.propose(ctx, args.k).tokens))
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        tree_nodes.append(len(index.propose_tree(ctx, args.tree_tokens, args.k, args.tree_top_k).tokens))
        tree_times.append(time.perf_counter() - t0)
    capped = SuffixIndex(max_tokens=1_000_000)
    peak = 0
    for i in range(args.soak):
        capped.add([seqs[i % len(seqs)]])
        peak = max(peak, capped.n_tokens)
    times.sort()
    tree_times.sort()
    return {"tokens": index.n_tokens, "build_s": build,
            "bytes_per_token": (seg.tokens.nbytes + seg.sa.nbytes) / index.n_tokens,
            "proposal_ms_median": 1000 * statistics.median(times),
            "proposal_ms_p99": 1000 * times[int(0.99 * (len(times) - 1))],
            "mean_proposal_tokens": statistics.fmean(lengths),
            "tree_ms_median": 1000 * statistics.median(tree_times),
            "tree_ms_p99": 1000 * tree_times[int(0.99 * (len(tree_times) - 1))],
            "mean_tree_nodes": statistics.fmean(tree_nodes), "soak_answers": args.soak,
            "soak_peak_tokens": peak, "soak_cap": 1_000_000, "soak_evicted_tokens": capped.evicted}


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.suffix_index", __doc__)
    harness.add_common(ap, target=False, out=None, seed=0)
    ap.add_argument("--tokens", type=int, default=1_000_000)
    ap.add_argument("--proposals", type=int, default=500)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--tree-tokens", type=int, default=24, help="tree proposals: the most nodes")
    ap.add_argument("--tree-top-k", type=int, default=4, help="tree proposals: children per node")
    ap.add_argument("--soak", type=int, default=10_000)
    args = ap.parse_args(argv)
    for flag in ("tokens", "proposals", "k", "tree_tokens", "tree_top_k"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be >= 1")
    print(json.dumps(run(args), indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
