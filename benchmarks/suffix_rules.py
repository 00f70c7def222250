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

from benchmarks import harness
from data_gen.generate import load_distilled
from data_gen.plan import data_dir_for
from draftpool.config import ConfigError
from draftpool.models.proposal import Proposal, choose
from draftpool.models.request_index import RequestIndex

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


def make_parser() -> argparse.ArgumentParser:
    ap = harness.parser("benchmarks.suffix_rules", __doc__)
    harness.add_common(ap, pool="", out=None)
    ap.add_argument("--domains", default="", help="comma list (default: every domain with a suffix member)")
    ap.add_argument("--answers", type=int, default=24, help="held-out greedy answers per domain")
    ap.add_argument("--k", type=int, default=8)
    return ap


def _main(argv: list[str] | None) -> int:
    args = make_parser().parse_args(argv)
    if args.answers < 1 or args.k < 1:
        raise ConfigError("--answers and --k must be >= 1")
    info = harness.resolve(args)
    members = {m.name: m for m in harness.load_members(harness.pool_dir(args, info), info, None, ["suffix"])}
    doms = harness.csv(args.domains) or [n.removesuffix("-suffix") for n in members]
    for dom in doms:
        if f"{dom}-suffix" not in members:
            raise ConfigError(f"no {dom}-suffix member in the pool (it has {list(members)})")
        rows = [r for r in load_distilled(data_dir_for("runs/data/{target_slug}/{domain}", info.slug, dom),
                                          "held_out") if r["temperature"] == 0.0][:args.answers]
        print(dom, json.dumps(domain_rules(members[f"{dom}-suffix"].module, rows, args.k)), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
