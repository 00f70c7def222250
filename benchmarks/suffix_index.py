"""Suffix index cost at scale: build time, memory per indexed token, proposal time, and the cap under a long stream;
with --track, what full-information selection costs per committed token for a pool of model-free members.

    python -m benchmarks.suffix_index [--tokens 1000000] [--proposals 500] [--k 8] [--tree-tokens 24]
        [--tree-top-k 4] [--soak 10000] [--seed 0]
    python -m benchmarks.suffix_index --track pools-x2/smollm2-135m-instruct/sql-suffix [--members 8]
        [--prompt-tokens 1500] [--new-tokens 200] [--chunk 3] [--k 8] [--generated stream|corpus]
        [--stream benchmarks/streams/summarize_long.jsonl] [--tokenizer PATH]

The corpus is synthetic and seeded (sequences of 200 tokens stitched from 3,000 Zipf-distributed phrases over 8,000
ids: repetitive like served answers, not a language). Reports the build seconds and bytes per indexed token of one
segment of `--tokens` tokens, the median and 99th-percentile time of a `--k`-token proposal after a random prefix of a
corpus sequence and of a tree proposal there (SuffixDecoding's tree: `--k` deep, `--tree-tokens` nodes), and, for
`--soak` inserted answers of 200 tokens into an index capped at 1M tokens, the largest token count it held (the cap
must hold: segments are dropped whole, oldest first).

--track (instead): `--members` suffix members, each with its own copy of the suffix member folder's index (a real
corpus), plus one prompt-lookup member, all tracking as under a full-information selector (`track`, `track_k` = k):
the request is a long prompt (the stream's first prompts, tokenized, cut to `--prompt-tokens`) and `--new-tokens`
committed tokens of real text (`stream`: the next prompt of the stream; `corpus`: answers of the member's own corpus,
an in-domain answer whose matches run to the index depth), committed `--chunk` at a time; after each chunk every
member syncs and its chains are scored (`take_chain_hits`), as `Selector._gammas` does. Reports the prompt's sync, the
cost per committed token (mean, and per chunk median and 95th percentile) for all members and per kind, on the first
request (nothing warm but the loaded indexes; the lookup arrays a segment builds on its first match are timed apart)
and on the same request again, and a digest of every chain kept: two code versions that propose the same agree on
it. It runs on any version with the drafters' public API (copy this file into an older checkout to time it there).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from pathlib import Path

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


def _member(path: Path):
    """The suffix member folder's model, read as the suffix kind reads it (no tokenizer check)."""
    from draftpool.models.suffix import INDEX_SETTINGS, SuffixModel, read_segments
    from draftpool.models.suffix_array import Segment

    cfg = json.loads((path / "config.json").read_text())
    index = SuffixIndex(**{k: cfg[k] for k in INDEX_SETTINGS if k in cfg})
    index.segments, index.recent = read_segments(path / "index.npz", cfg["vocab_size"], index.depth)
    index.recent_segment = Segment(index.recent, index.depth) if index.recent else None
    return SuffixModel(cfg["vocab_size"], cfg["n_min"], cfg["n_max"], index)


def _request(args: argparse.Namespace, index: SuffixIndex) -> tuple[list[int], list[int]]:
    """(prompt, committed tokens) of real text."""
    from transformers import AutoTokenizer

    path = args.tokenizer or json.loads((Path(args.track).parent / "pool.json").read_text())["target_path"]
    tok = AutoTokenizer.from_pretrained(path)
    rows = [json.loads(line) for line in Path(args.stream).read_text().splitlines() if line.strip()]
    prompt, i = [], 0
    while len(prompt) < args.prompt_tokens and i < len(rows) - 1:
        prompt += tok(rows[i]["prompt"])["input_ids"]
        i += 1
    if args.generated == "stream":
        new = tok(rows[i]["prompt"])["input_ids"]
    else:  # the newest answers of the member's own corpus that make up --new-tokens, oldest first
        new = []
        for seq in reversed(index.recent):
            new = list(seq) + new
            if len(new) >= args.new_tokens:
                break
    if len(prompt) < args.prompt_tokens or len(new) < args.new_tokens:
        raise harness.BenchError(f"{args.stream}: too little text for {args.prompt_tokens} + {args.new_tokens} tokens")
    return prompt[:args.prompt_tokens], new[:args.new_tokens]


def track(args: argparse.Namespace) -> dict:
    from draftpool.models.suffix import NgramModel
    from specsel.decoding.request import DecodeState
    from specsel.decoding.suffix import NgramDrafter, SuffixDrafter

    models = [_member(Path(args.track)) for _ in range(args.members)]
    prompt, new = _request(args, models[0].index)
    pool = [SuffixDrafter(m) for m in models] + [NgramDrafter(NgramModel(models[0].vocab_size, models[0].n_min,
                                                                         models[0].n_max))]
    for d in pool:
        d.track, d.track_k = True, args.k
    t0 = time.perf_counter()
    arrays = 0  # bytes
    for m in models:  # what a segment builds on its first match (once per frozen segment; this version's only)
        for seg in m.index.all_segments():
            if hasattr(seg, "links"):  # the packed first two tokens, the inverse suffix array and the LCP array
                arrays += seg.views()[2].nbytes + seg.links()[0].nbytes + seg.links()[1].nbytes
    out = {"members": f"{args.members} suffix + 1 ngram", "segments": len(models[0].index.all_segments()),
           "indexed_tokens": models[0].index.n_tokens, "prompt_tokens": len(prompt), "new_tokens": len(new),
           "chunk": args.chunk, "k": args.k, "generated": args.generated,
           "lookup_arrays_ms": 1000 * (time.perf_counter() - t0),
           "lookup_bytes_per_token": arrays / args.members / models[0].index.n_tokens}
    for run in ("first", "again"):
        digest = hashlib.sha256()
        state = DecodeState(tokens=list(prompt), prompt_len=len(prompt), synced=[0] * len(pool))
        for d in pool:
            d.reset()
        t0 = time.perf_counter()
        for d in pool:
            d.sync(state)
        prompt_s = time.perf_counter() - t0
        cycles, kinds = [], {"suffix": 0.0, "ngram": 0.0}
        for a in range(0, len(new), args.chunk):
            start = len(state.tokens)
            state.tokens.extend(new[a:a + args.chunk])
            t_cycle = time.perf_counter()
            for d in pool:
                t_member = time.perf_counter()
                d.sync(state)
                if a:  # the first evaluated position is the one after the first committed token
                    d.take_chain_hits(start, len(state.tokens), state.tokens)
                kinds[d.kind] += time.perf_counter() - t_member
            cycles.append((time.perf_counter() - t_cycle) / (len(state.tokens) - start))
            for d in pool:
                for p in range(start + 1, len(state.tokens) + 1):
                    digest.update(repr((d.kind, p, d.chains.get(p))).encode())
        cycles.sort()
        out[run] = {"prompt_sync_ms": 1000 * prompt_s, "ms_per_token": 1000 * sum(kinds.values()) / len(new),
                    "ms_per_token_median_chunk": 1000 * statistics.median(cycles),
                    "ms_per_token_p95_chunk": 1000 * cycles[int(0.95 * (len(cycles) - 1))],
                    "suffix_member_ms_per_token": 1000 * kinds["suffix"] / len(new) / args.members,
                    "ngram_member_ms_per_token": 1000 * kinds["ngram"] / len(new),
                    "chains_sha256": digest.hexdigest()[:16]}
    return out


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.suffix_index", __doc__)
    harness.add_common(ap, target=False, out=None, seed=0)
    ap.add_argument("--tokens", type=int, default=1_000_000)
    ap.add_argument("--proposals", type=int, default=500)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--tree-tokens", type=int, default=24, help="tree proposals: the most nodes")
    ap.add_argument("--tree-top-k", type=int, default=4, help="tree proposals: children per node")
    ap.add_argument("--soak", type=int, default=10_000)
    ap.add_argument("--track", help="a suffix member folder: time tracking for a pool of model-free members instead")
    ap.add_argument("--members", type=int, default=8, help="--track: suffix members (plus one prompt-lookup member)")
    ap.add_argument("--prompt-tokens", type=int, default=1500)
    ap.add_argument("--new-tokens", type=int, default=200)
    ap.add_argument("--chunk", type=int, default=3, help="--track: tokens committed per cycle")
    ap.add_argument("--generated", choices=("stream", "corpus"), default="stream",
                    help="--track: the committed tokens: the stream's next prompt, or the member's own answers")
    ap.add_argument("--stream", default=str(Path(__file__).parent / "streams" / "summarize_long.jsonl"))
    ap.add_argument("--tokenizer", help="--track: the target's folder (default: the member's pool.json target_path)")
    args = ap.parse_args(argv)
    for flag in ("tokens", "proposals", "k", "tree_tokens", "tree_top_k", "members", "prompt_tokens", "new_tokens",
                 "chunk"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be >= 1")
    print(json.dumps(track(args) if args.track else run(args), indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
