"""Corpus or request: how a suffix member's chain length depends on the rule that picks between its two proposals.

    python -m benchmarks.suffix_rules [--pool pools/<target-slug>] [--domains sql,python,...] [--answers 24] [--k 8]

For each domain's suffix member of the pool and the first --answers greedy answers of that domain's held-out split
(the target's own output, so a draft is accepted exactly where it equals the answer's next token), at every start
position of every answer: the request index over the prompt and the answer so far and the member's corpus both
propose a chain of at most --k tokens, and each rule picks one; reported per rule, the mean accepted drafts + 1 (the
tokens a target forward would commit, no verification cost counted). Rules: `score` (the higher expected accepted
length: SuffixDecoding's), `choose` (draftpool's: the request's wherever its match is at least as long, else the
score), `corpus` and `request` alone. No model is run: pure index lookups.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from data_gen.generate import data_dir_for, load_distilled
from draftpool.config import ConfigError
from draftpool.models.suffix_index import Proposal, RequestIndex, choose
from draftpool.pool import DrafterLoadError, load_pool
from draftpool.target import DEFAULT_TARGET, resolve_target

RULES = {
    "score": lambda corpus, mine: corpus if corpus.score >= mine.score else mine,
    "choose": choose,
    "corpus": lambda corpus, mine: corpus,
    "request": lambda corpus, mine: mine,
}


def accepted(draft: list[int], seq: list[int], s: int) -> int:
    """Leading drafts equal to seq[s], seq[s+1], ..."""
    n = 0
    while n < len(draft) and s + n < len(seq) and draft[n] == seq[s + n]:
        n += 1
    return n


def domain_rules(model, rows: list[dict], k: int) -> dict[str, float]:
    """Mean accepted + 1 per rule over every start position of the answers."""
    total, starts = dict.fromkeys(RULES, 0), 0
    for row in rows:
        prompt, seq = list(row["prompt_ids"]), list(row["prompt_ids"]) + list(row["response_ids"])
        req = RequestIndex(model.n_min, model.n_max)
        req.extend(seq[:len(prompt) + 1])
        for s in range(len(prompt) + 1, len(seq)):  # a chain starts after the prefill's token
            mine: Proposal = req.propose(k, most_frequent=True)
            corpus = model.index.propose(seq[:s], k)
            for name, rule in RULES.items():
                total[name] += accepted(rule(corpus, mine).tokens, seq, s) + 1
            starts += 1
            req.extend([seq[s]])
    return {name: round(v / max(1, starts), 4) for name, v in total.items()} | {"starts": starts}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--pool", default=None, help="pool folder (default pools/<target-slug>)")
    ap.add_argument("--domains", default="", help="comma list (default: every domain with a suffix member)")
    ap.add_argument("--answers", type=int, default=24, help="held-out greedy answers per domain")
    ap.add_argument("--k", type=int, default=8)
    args = ap.parse_args(argv)
    try:
        if args.answers < 1 or args.k < 1:
            raise ConfigError("--answers and --k must be >= 1")
        info = resolve_target(args.target)
        names, models = load_pool(Path(args.pool or f"pools/{info.slug}"), info, None, ["suffix"])
        doms = [d for d in args.domains.split(",") if d] or [n.removesuffix("-suffix") for n in names]
        out = {}
        for dom in doms:
            if f"{dom}-suffix" not in models:
                raise ConfigError(f"no {dom}-suffix member in the pool (it has {names})")
            rows = [r for r in load_distilled(data_dir_for("runs/data/{target_slug}/{domain}", info.slug, dom),
                                              "held_out") if r["temperature"] == 0.0][:args.answers]
            out[dom] = domain_rules(models[f"{dom}-suffix"][1], rows, args.k)
            print(dom, json.dumps(out[dom]), flush=True)
    except (ConfigError, DrafterLoadError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
