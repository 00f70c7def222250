"""Token-sequence indexes that propose drafts without weights (torch-free).

`SuffixIndex` (SuffixDecoding's global tree, kept as sorted suffix arrays): a corpus of token sequences (seeded from
self-distilled answers, then every served answer) in segments, each a suffix array sorted by the first `depth` tokens
of every suffix. The context's longest suffix that occurs in the corpus (at most depth - 1 tokens) selects a range of
suffixes; the tokens that follow it there, counted, are the continuation's distribution; a chain walks the most
frequent one, narrowing the range, while the path's probability stays above `min_prob`. New answers go into a small
"recent" segment rebuilt on insert (so an answer is matched from the next request on), frozen once it reaches
`segment_tokens`; past `max_tokens` the oldest segments are dropped (FIFO, whole segments).

`RequestIndex` (prompt lookup over one request): every n-gram (n_min..n_max) of the prompt and the answer so far ->
the positions that follow it, kept incrementally as tokens are committed.

A proposal is (tokens, probabilities): probability j is the estimated chance that draft j is the target's token given
drafts < j were (count of the walked continuation / count of the range), and the score, their running product's sum,
is the expected number of accepted drafts (SuffixDecoding's score).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import numpy as np

SEP = -1  # between sequences in a segment: never matched, so no match crosses two sequences


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


def suffix_array(tokens: np.ndarray, depth: int) -> np.ndarray:
    """tokens [N] int (SEP between sequences) -> [M] start positions of every non-SEP suffix, sorted by its first
    `depth` tokens (prefix doubling on ranks; a SEP or the end sorts before every token and matches nothing)."""
    n = len(tokens)
    # rule: tokens rank above every SEP and the end; each SEP gets its own rank, so nothing matches across it
    rank = np.where(tokens >= 0, tokens.astype(np.int64) + n + 1, np.arange(1, n + 1))
    h = 1
    while h < depth:
        nxt = np.zeros(n, dtype=np.int64)  # 0: past the end
        if h < n:
            nxt[:n - h] = rank[h:]
        order = np.lexsort((nxt, rank))
        key_r, key_n = rank[order], nxt[order]
        new = np.empty(n, dtype=np.int64)
        new[order] = np.concatenate([[0], np.cumsum((np.diff(key_r) != 0) | (np.diff(key_n) != 0))]) + 1
        rank, h = new, 2 * h
    order = np.argsort(rank, kind="stable")
    return order[tokens[order] >= 0]


class Segment:
    """One immutable sorted corpus segment."""

    def __init__(self, seqs: list[list[int]], depth: int):
        flat: list[int] = []
        for s in seqs:
            flat.extend(s)
            flat.append(SEP)
        self._set(np.asarray(flat, dtype=np.int64), depth)

    @classmethod
    def from_flat(cls, tokens: np.ndarray, depth: int) -> Segment:
        """From SEP-separated tokens [N] (each sequence followed by a SEP)."""
        seg = cls.__new__(cls)
        seg._set(tokens, depth)
        return seg

    def _set(self, tokens: np.ndarray, depth: int) -> None:
        self.tokens = tokens  # [N]
        self.sa = suffix_array(self.tokens, depth)  # [M]
        self.n_seqs = int((tokens == SEP).sum())
        self.depth = depth

    def __len__(self) -> int:
        return len(self.sa)

    def _key(self, i: int, m: int) -> list[int]:
        """The first m tokens of the i-th sorted suffix (shorter at the end; SEP compares below every token)."""
        s = int(self.sa[i])
        return self.tokens[s:s + m].tolist()

    def range_of(self, pattern: list[int]) -> tuple[int, int]:
        """[lo, hi) of the sorted suffixes that start with `pattern` (len(pattern) < depth)."""
        m = len(pattern)
        a, b = 0, len(self.sa)
        while a < b:  # first suffix >= pattern
            mid = (a + b) // 2
            if self._key(mid, m) < pattern:
                a = mid + 1
            else:
                b = mid
        start, b = a, len(self.sa)
        while a < b:  # first suffix > pattern
            mid = (a + b) // 2
            if self._key(mid, m) <= pattern:
                a = mid + 1
            else:
                b = mid
        return start, a

    def following(self, lo: int, hi: int, m: int) -> np.ndarray:
        """The token after the first m tokens of suffixes lo..hi-1 ([hi-lo], SEP where a sequence ends), in sorted
        order: equal tokens are contiguous."""
        pos = self.sa[lo:hi] + m
        out = np.full(hi - lo, SEP, dtype=np.int64)
        inside = pos < len(self.tokens)
        out[inside] = self.tokens[pos[inside]]
        return out


class SuffixIndex:
    def __init__(self, depth: int = 32, max_tokens: int = 4_000_000, segment_tokens: int = 32_768,
                 min_prob: float = 0.1, max_spec_factor: float = 2.0, min_match: int = 1):
        if depth < 2 or max_tokens < 1 or segment_tokens < 1 or not 0 <= min_prob < 1 or max_spec_factor <= 0:
            raise ValueError("suffix index: depth >= 2, max_tokens and segment_tokens >= 1, 0 <= min_prob < 1, "
                             "max_spec_factor > 0")
        self.depth, self.max_tokens, self.segment_tokens = depth, max_tokens, segment_tokens
        self.min_prob, self.max_spec_factor, self.min_match = min_prob, max_spec_factor, min_match
        self.segments: list[Segment] = []  # frozen, oldest first
        self.recent: list[list[int]] = []  # sequences of the segment still growing
        self.recent_segment: Segment | None = None
        self.evicted = 0  # tokens dropped past the cap

    # --- contents ----------------------------------------------------------------------------------------------
    def add(self, seqs: list[list[int]]) -> None:
        """Index sequences (matched from the next proposal on)."""
        seqs = [list(map(int, s)) for s in seqs if len(s)]
        for s in seqs:
            self.recent.append(s)
            if sum(map(len, self.recent)) >= self.segment_tokens:  # rule: a full recent segment is frozen
                self.segments.append(Segment(self.recent, self.depth))
                self.recent = []
        self.recent_segment = Segment(self.recent, self.depth) if self.recent else None
        self._evict()

    def _evict(self) -> None:
        # rule: past the cap, the oldest frozen segments go, whole
        while self.segments and self.n_tokens > self.max_tokens:
            self.evicted += len(self.segments.pop(0))

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.segments) + sum(map(len, self.recent))

    def all_segments(self) -> list[Segment]:
        return self.segments + ([self.recent_segment] if self.recent_segment is not None else [])

    # --- proposals ---------------------------------------------------------------------------------------------
    def longest_match(self, context: list[int]) -> int:
        """Length of the longest suffix of `context` (< depth tokens) that occurs in the corpus."""
        best = 0
        for seg in self.all_segments():
            lo, hi = best + 1, min(len(context), self.depth - 1)
            while lo <= hi:  # rule: a suffix occurs only if every shorter one does: bisect on its length
                m = (lo + hi) // 2
                a, b = seg.range_of(context[len(context) - m:])
                if a < b:
                    best, lo = m, m + 1
                else:
                    hi = m - 1
        return best

    def _start(self, context: list[int], k: int) -> tuple[int, list[int], dict]:
        """-> (match length, the pattern a walk of up to k tokens continues, {segment id: (segment, lo, hi)})."""
        m = self.longest_match(context)
        if m < self.min_match or k < 1:
            return m, [], {}
        # rule: the walk needs room for k more tokens within the sorted depth: it continues the match's last
        # depth - 1 - k tokens (a suffix of a match occurs wherever the match does)
        walk = min(m, max(1, self.depth - 1 - k))
        pattern = list(context[len(context) - walk:])
        ranges = {id(s): (s, *s.range_of(pattern)) for s in self.all_segments()}
        return m, pattern, {key: r for key, r in ranges.items() if r[1] < r[2]}

    @staticmethod
    def _children(ranges: dict, m: int) -> tuple[dict[int, int], int, dict]:
        """The tokens after the first m tokens of the ranges' suffixes -> ({token: count} without SEP, the total
        count with SEP, {segment id: those tokens in sorted order})."""
        counts: dict[int, int] = {}
        nexts = {}
        for key, (seg, lo, hi) in ranges.items():
            nx = nexts[key] = seg.following(lo, hi, m)
            vals, cnt = np.unique(nx, return_counts=True)
            for v, c in zip(vals.tolist(), cnt.tolist()):
                counts[v] = counts.get(v, 0) + c
        total = sum(counts.values())
        counts.pop(SEP, None)  # a sequence ending here proposes nothing
        return counts, total, nexts

    @staticmethod
    def _narrow(ranges: dict, nexts: dict, tok: int) -> dict:
        """The ranges' suffixes whose next token is `tok`."""
        out = {}
        for key, (seg, lo, _) in ranges.items():
            a, b = np.searchsorted(nexts[key], tok, "left"), np.searchsorted(nexts[key], tok, "right")
            if a < b:
                out[key] = (seg, lo + int(a), lo + int(b))
        return out

    def propose(self, context: list[int], k: int) -> Proposal:
        """A chain of at most k drafts continuing `context` (and at most max_spec_factor x the match length)."""
        m, pattern, ranges = self._start(context, k)
        if not ranges:
            return NO_PROPOSAL
        tokens, probs = [], []
        run = 1.0
        limit = min(k, max(1, int(self.max_spec_factor * m)))
        while len(tokens) < limit and len(pattern) < self.depth:
            counts, total, nexts = self._children(ranges, len(pattern))
            if not counts:
                break
            tok = max(counts, key=lambda t: (counts[t], -t))  # the most frequent; ties to the lower id
            p = counts[tok] / total
            if run * p < self.min_prob:  # rule: stop where the path's probability falls below min_prob
                break
            run *= p
            tokens.append(tok)
            probs.append(p)
            ranges = self._narrow(ranges, nexts, tok)
            pattern.append(tok)
        return Proposal(tokens, probs, m)

    def propose_tree(self, context: list[int], budget: int, depth: int, top_k: int) -> TreeProposal:
        """SuffixDecoding's speculation tree: best-first over the continuations by path probability (counts / range
        size, multiplied down the path), at most `budget` nodes, `depth` levels (and max_spec_factor x the match
        length), `top_k` children per node, every node's path probability >= min_prob. Nodes come parents first
        (a child's path probability never exceeds its parent's, so best-first order is a tree order)."""
        m, pattern, ranges = self._start(context, depth)
        tree = TreeProposal([], [], [], [], m)
        limit = min(depth, max(1, int(self.max_spec_factor * m)))
        heap: list = []  # candidates: (-path prob, push order, parent node, depth, token, pattern, ranges, nexts)
        order = itertools.count()  # equal probabilities: the earlier pushed (higher count, lower id) first

        def expand(node: int, d: int, pat: list[int], rng: dict, run: float) -> None:
            if d >= limit or len(pat) >= self.depth:
                return
            counts, total, nexts = self._children(rng, len(pat))
            for tok in sorted(counts, key=lambda t: (-counts[t], t))[:top_k]:
                p = run * (counts[tok] / total)  # the chain's rounding: a top_k=1 tree is its chain
                if p < self.min_prob:  # rule: a node whose path probability falls below min_prob is not drafted
                    break
                heapq.heappush(heap, (-p, next(order), node, d + 1, tok, pat + [tok], rng, nexts))

        if ranges:
            expand(-1, 0, pattern, ranges, 1.0)
        while heap and len(tree.tokens) < budget:
            neg, _, parent, d, tok, pat, rng, nexts = heapq.heappop(heap)
            tree.tokens.append(tok)
            tree.parents.append(parent)
            tree.depths.append(d)
            tree.probs.append(-neg)
            expand(len(tree.tokens) - 1, d, pat, self._narrow(rng, nexts, tok), -neg)
        return tree


class RequestIndex:
    """Prompt lookup over one request: n-gram -> positions after its occurrences, updated token by token."""

    def __init__(self, n_min: int = 2, n_max: int = 8):
        if not 1 <= n_min <= n_max:
            raise ValueError(f"n-gram sizes need 1 <= n_min <= n_max, got {n_min}, {n_max}")
        self.n_min, self.n_max = n_min, n_max
        self.reset()

    def reset(self) -> None:
        self.tokens: list[int] = []
        self.after: dict[tuple[int, ...], list[int]] = {}  # n-gram -> positions of the token after each occurrence

    def extend(self, tokens: list[int]) -> None:
        for t in tokens:
            self.tokens.append(int(t))
            end = len(self.tokens) - 1  # the n-grams ending just before this token are followed by it
            for n in range(self.n_min, min(self.n_max, end) + 1):
                self.after.setdefault(tuple(self.tokens[end - n:end]), []).append(end)

    def sync(self, tokens: list[int]) -> None:
        """Catch up with the committed tokens (a prefix of `tokens` is already indexed; anything else restarts)."""
        n = len(self.tokens)
        if tokens[:n] != self.tokens:
            self.reset()
            n = 0
        self.extend(tokens[n:])

    def propose(self, k: int, most_frequent: bool = False) -> Proposal:
        """Continue the longest n-gram ending the request that occurred before: copy what followed its latest
        occurrence (prompt lookup), or walk the most frequent continuation (`most_frequent`)."""
        toks = self.tokens
        for n in range(min(self.n_max, len(toks) - 1), self.n_min - 1, -1):
            pos = [p for p in self.after.get(tuple(toks[len(toks) - n:]), []) if p < len(toks)]
            if not pos:
                continue
            if not most_frequent:
                start = pos[-1]
                draft = toks[start:start + k]
                return Proposal(draft, [1.0] * len(draft), n)
            return self._walk(n, k)
        return NO_PROPOSAL

    def _walk(self, n: int, k: int) -> Proposal:
        ctx = list(self.tokens)
        tokens, probs = [], []
        while len(tokens) < k:
            pos = [p for p in self.after.get(tuple(ctx[len(ctx) - n:]), []) if p < len(self.tokens)]
            if not pos:
                break
            counts: dict[int, int] = {}
            for p in pos:
                counts[self.tokens[p]] = counts.get(self.tokens[p], 0) + 1
            tok = max(counts, key=lambda t: (counts[t], -t))
            tokens.append(tok)
            # rule: within one request, evidence is thin: one more "other" outcome is counted (a continuation seen
            # once is a coin flip, not a certainty), so a short repeat does not outscore the corpus
            probs.append(counts[tok] / (len(pos) + 1))
            ctx.append(tok)
        return Proposal(tokens, probs, n)
