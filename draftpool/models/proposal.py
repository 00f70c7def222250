"""What a model-free drafter proposes, and which of two proposals it drafts (torch-free).

A proposal is (tokens, probabilities): probability j is the estimated chance that draft j is the target's token given
drafts < j were, and the score, their running product's sum, is the expected number of accepted drafts
(SuffixDecoding's score). The suffix index (suffix_index.py) and prompt lookup (request_index.py) make them; `choose`
picks between the corpus's and the request's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Proposal:
    tokens: list[int]
    probs: list[float]  # per draft: P(draft j right | drafts < j right)
    match: int  # length of the context suffix it continues (0: no match, no draft)

    @property
    def score(self) -> float:
        """Expected accepted drafts: sum over j of the product of probs[:j+1]."""
        total, run = 0.0, 1.0
        for p in self.probs:
            run *= p
            total += run
        return total


NO_PROPOSAL = Proposal([], [], 0)


@dataclass
class TreeProposal:
    tokens: list[int]  # [N] parents before children
    parents: list[int]  # [N] -1: a child of the root (the last context token)
    depths: list[int]  # [N] 1 for the root's children
    probs: list[float]  # [N] path probability: P(every draft from the root to this node is right)
    match: int

    @property
    def score(self) -> float:
        """Expected accepted drafts: the sum of the path probabilities."""
        return sum(self.probs)


def choose(corpus: Proposal | TreeProposal, mine: Proposal) -> Proposal | TreeProposal:
    """The corpus's or the request's proposal: the request's own continuation wherever its match is at least as long
    as the corpus's (a repeat inside the request is stronger evidence than the request's thin counts say: held-out
    chains +8-41% over the higher score alone, docs/benchmarks.md), else the higher-scored one."""
    # rule: a request match at least as long wins; else SuffixDecoding's rule, the higher expected accepted length
    if mine.tokens and mine.match >= corpus.match:
        return mine
    return corpus if corpus.score >= mine.score else mine
