"""Token-sequence indexes that propose drafts without weights (torch-free).

`SuffixIndex` (SuffixDecoding's global tree, kept as sorted suffix arrays): a corpus of token sequences (seeded from
self-distilled answers, then every served answer) in segments, each a suffix array sorted by the first `depth` tokens
of every suffix. The context's longest suffix that occurs in the corpus (at most depth - 1 tokens) selects a range of
suffixes; the tokens that follow it there, counted, are the continuation's distribution; a chain walks the most
frequent one, narrowing the range, while the path's probability stays above `min_prob`. New answers go into a small
"recent" segment rebuilt on insert (so an answer is matched from the next request on), frozen once it reaches
`segment_tokens`; past `max_tokens` the oldest segments are dropped (FIFO, whole segments).

`RequestIndex` (prompt lookup over one request) is draftpool/models/request_index.py; the segments' suffix arrays are
draftpool/models/suffix_array.py.

A proposal (draftpool/models/proposal.py) is (tokens, probabilities): probability j here is the count of the walked
continuation over the count of the range.

`Matcher` (`SuffixIndex.matcher()`) follows one growing context token by token and proposes exactly what
`SuffixIndex.propose(context, k)` / `propose_tree` would: per segment it keeps the suffix-array range of the context's
longest suffix occurring there, grows it by narrowing that range with the next token (a binary search on the tokens
that follow it), and shortens it from the left only when that fails, through the segment's inverse suffix array and
LCP array: O(1) range lookups per token amortised, not a bisection over match lengths per proposal. A segment builds
what it needs on first use and keeps it (13 bytes per token: the first two tokens of every sorted suffix packed in one
int64, the inverse suffix array, the LCP array). A walk step over many occurrences (a short match: a common token or
two) is counted in numpy and remembered per pattern until the index changes. numpy and the standard library only: a
compiled suffix-automaton package would match too, but it would hold a second copy of a corpus of millions of tokens,
and the per-token work left here is a few binary searches in C (`bisect`, with a key, over memoryviews).
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from draftpool.models.proposal import NO_PROPOSAL, Proposal, TreeProposal
from draftpool.models.suffix_array import SEP, Segment, _expand, _narrow

SMALL_WALK = 48  # a chain walk over at most this many occurrences reads their continuations once, in Python
WALK_STEPS = 4096  # per index: the walk steps over more occurrences remembered (pattern -> next token, counts, range)


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
        self.version = 0  # +1 whenever the segments change (add, freeze, evict): matchers recompute then
        self._steps: dict[tuple[int, ...], tuple] = {}  # the walk steps over many occurrences, at `_steps_version`
        self._steps_version = 0

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
        self.changed()

    def changed(self) -> None:
        """The segments changed (add calls it; so must whoever replaces them directly once matchers exist)."""
        self.version += 1

    def _evict(self) -> None:
        # rule: past the cap, the oldest frozen segments go, whole
        while self.segments and self.n_tokens > self.max_tokens:
            self.evicted += len(self.segments.pop(0))

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.segments) + sum(map(len, self.recent))

    def all_segments(self) -> list[Segment]:
        return self.segments + ([self.recent_segment] if self.recent_segment is not None else [])

    def matcher(self) -> Matcher:
        """An incremental matcher for one growing context (a request): push its tokens as they come, propose after
        any of them; its proposals are `propose(context, k)`'s."""
        return Matcher(self)

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
            # sorted: each run of equal tokens is one token's count
            cut = np.flatnonzero(nx[1:] != nx[:-1]) + 1
            starts = np.concatenate([[0], cut])
            for v, c in zip(nx[starts].tolist(), np.diff(np.append(starts, len(nx))).tolist()):
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
        return self._chain(m, pattern, ranges, k)

    def _chain(self, m: int, pattern: list[int], ranges: dict, k: int) -> Proposal:
        """The chain walked from the ranges of `pattern`, the last tokens of a match of m tokens."""
        if not ranges:
            return NO_PROPOSAL
        tokens: list[int] = []
        probs: list[float] = []
        run, n = 1.0, len(pattern)
        # rule: at most k drafts, max_spec_factor x the match, and the walk stays within the sorted depth
        steps = min(k, max(1, int(self.max_spec_factor * m)), self.depth - n)
        while len(tokens) < steps:
            if sum(hi - lo for _, lo, hi in ranges.values()) <= SMALL_WALK:
                rows = [r for seg, lo, hi in ranges.values() for r in seg.windows(lo, hi, n, steps - len(tokens))]
                self._walk_rows(rows, run, tokens, probs)
                break
            tok, c, total, ranges = self._big_step(tuple(pattern) + tuple(tokens), ranges)
            if not c:
                break
            p = c / total
            if run * p < self.min_prob:  # rule: stop where the path's probability falls below min_prob
                break
            run *= p
            tokens.append(tok)
            probs.append(p)
            n += 1
        return Proposal(tokens, probs, m)

    def _big_step(self, pattern: tuple[int, ...], ranges: dict) -> tuple[int, int, int, dict]:
        """A walk step over many occurrences of `pattern` (`ranges`): -> (the most frequent next token, ties to the
        lower id, its count (0: none), the count with sequence ends, the ranges continued by it). Remembered per
        pattern until the index changes: the short patterns that have many occurrences come back often."""
        if self._steps_version != self.version:
            self._steps, self._steps_version = {}, self.version
        step = self._steps.get(pattern)
        if step is None:
            n, items = len(pattern), list(ranges.values())
            # the next tokens, per segment in sorted order (past the end: the last token, a SEP)
            nexts = [np.take(seg.tokens, seg.sa[lo:hi] + n, mode="clip") for seg, lo, hi in items]
            every = np.concatenate(nexts) if len(nexts) > 1 else nexts[0]
            counts = np.bincount(every + 1)[1:]  # per token id (SEP dropped)
            tok = int(counts.argmax()) if len(counts) else 0
            c = int(counts[tok]) if len(counts) else 0
            narrowed = {}
            # rule: a step below min_prob ends every walk that reaches it (the path's probability is at most 1)
            if c and c / len(every) >= self.min_prob:  # the ranges continued by tok: [lo + below, + equal)
                starts = np.cumsum([0] + [len(x) for x in nexts[:-1]])
                below = np.add.reduceat(every < tok, starts).tolist()
                equal = np.add.reduceat(every == tok, starts).tolist()
                narrowed = {id(seg): (seg, lo + b, lo + b + e)
                            for (seg, lo, _), b, e in zip(items, below, equal) if e}
            step = (tok, c, len(every), narrowed)
            if len(self._steps) >= WALK_STEPS:
                self._steps.clear()
            self._steps[pattern] = step
        return step

    def _walk_rows(self, rows: list[list[int]], run: float, tokens: list[int], probs: list[float]) -> None:
        """The chain's walk (as `_chain`'s) over the continuations of the occurrences left, one list each."""
        for j in range(len(rows[0]) if rows else 0):
            if len(rows) == 1:  # one occurrence: every count is 1 of 1, the path's probability stays where it is
                for t in rows[0][j:]:
                    if t == SEP:
                        return
                    tokens.append(t)
                    probs.append(1.0)
                return
            counts: dict[int, int] = {}
            for r in rows:
                counts[r[j]] = counts.get(r[j], 0) + 1
            total = len(rows)
            counts.pop(SEP, None)
            if not counts:
                return
            tok = max(counts, key=lambda t: (counts[t], -t))
            p = counts[tok] / total
            if run * p < self.min_prob:
                return
            run *= p
            tokens.append(tok)
            probs.append(p)
            rows = [r for r in rows if r[j] == tok]

    def propose_tree(self, context: list[int], budget: int, depth: int, top_k: int) -> TreeProposal:
        """SuffixDecoding's speculation tree: best-first over the continuations by path probability (counts / range
        size, multiplied down the path), at most `budget` nodes, `depth` levels (and max_spec_factor x the match
        length), `top_k` children per node, every node's path probability >= min_prob. Nodes come parents first
        (a child's path probability never exceeds its parent's, so best-first order is a tree order)."""
        return self._tree(self._start(context, depth), budget, depth, top_k)

    def _tree(self, start: tuple[int, list[int], dict], budget: int, depth: int, top_k: int) -> TreeProposal:
        m, pattern, ranges = start
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


def _step(seg: Segment, st: list[int], t: int, cap: int) -> None:
    """One segment's match state [m, lo, hi] (the context's longest suffix occurring in it, at most `cap` tokens, and
    its suffix-array range) after the context grows by token t."""
    tok, sa, _ = seg.views()
    m = st[0]
    if m:
        lo = st[1]
        s = sa[lo]  # where one occurrence of the match starts
        if m < cap:  # rule: the match grows by narrowing its range to the suffixes that continue with t
            a, b = seg.pair(tok[s], t) if m == 1 else _narrow(tok, sa, lo, st[2], m, t)
            if a < b:
                st[0], st[1], st[2] = m + 1, a, b
                return
        # else it loses tokens on the left: the match's last n tokens start one suffix (m - n tokens) later, and
        # their range is the suffixes around that one's rank sharing n tokens with it (the LCP array; for 2 tokens,
        # the range of the pair)
        for n in range(m - 1, 0, -1):
            if n == 1:
                a, b = seg.pair(tok[s + m - 1], t)
            else:
                if n == 2:
                    a, b = seg.pair(tok[s + m - 2], tok[s + m - 1])
                else:
                    isa, lcp_np, lcp = seg.links()
                    a, b = _expand(lcp, lcp_np, len(sa), isa[s + m - n], n)
                a, b = _narrow(tok, sa, a, b, n, t)
            if a < b:
                st[0], st[1], st[2] = n + 1, a, b
                return
    a, b = seg.first(t)
    st[0], st[1], st[2] = (1, a, b) if a < b else (0, 0, 0)


class Matcher:
    """The longest suffix of a growing context that occurs in a SuffixIndex, followed token by token: per segment
    [m, lo, hi], the longest suffix of the context occurring in that segment (at most depth - 1 tokens) and its
    sorted-suffix range. The corpus's match is the longest of them; the walk's pattern (the match's last
    depth - 1 - k tokens) is each long-enough segment's range widened through the LCP array. Every state is a function
    of the context's last depth - 1 tokens, so a matcher that jumps (a new context, a long gap, a changed index)
    recomputes from those alone."""

    def __init__(self, index: SuffixIndex):
        self.index = index
        self.tail: list[int] = []  # the context's last tokens, at least depth - 1 of them
        self.n = 0  # the context's length
        self._stream: list[int] | None = None  # the list `follow` reads from
        self._segs: list[Segment] = []
        self._states: list[list[int]] = []
        self._bind()

    def _bind(self) -> None:
        """Match against the index's segments as they are now: a segment already followed keeps its state, a new one
        (the recent segment rebuilt, a frozen one) reads the tail."""
        ix, cap = self.index, self.index.depth - 1
        kept = {id(seg): st for seg, st in zip(self._segs, self._states)}
        segs = ix.all_segments()
        states = []
        for seg in segs:
            st = kept.get(id(seg))
            if st is None:
                st = [0, 0, 0]
                for t in self.tail[-cap:]:
                    _step(seg, st, t, cap)
            states.append(st)
        self._segs, self._states = segs, states
        self._version, self._recent = ix.version, ix.recent_segment

    def _check(self) -> None:
        if self.index.version != self._version or self.index.recent_segment is not self._recent:
            self._bind()

    def reset(self) -> None:
        """An empty context."""
        self.tail, self.n, self._stream = [], 0, None
        for st in self._states:
            st[0] = st[1] = st[2] = 0
        self._check()

    def push(self, token: int) -> None:
        self.extend([token])

    def extend(self, tokens: list[int]) -> None:
        """The context grows by `tokens`."""
        self._check()
        cap = self.index.depth - 1
        followed = list(zip(self._segs, self._states))
        tail = self.tail
        for t in tokens:
            t = int(t)
            for seg, st in followed:
                _step(seg, st, t, cap)
            tail.append(t)
        if len(tail) > 2 * cap + 64:
            del tail[:len(tail) - cap]
        self.n += len(tokens)

    def follow(self, tokens: list[int], n: int | None = None) -> None:
        """The context becomes tokens[:n] (default: all of it): read on from where it was when `tokens` is the list
        it followed last and n is not behind; anything else (and a gap longer than depth - 1) starts from the last
        depth - 1 tokens."""
        n = len(tokens) if n is None else n
        if tokens is self._stream and self.n <= n:
            if n - self.n < self.index.depth:
                self.extend(tokens[self.n:n])
                return
        cap = self.index.depth - 1
        self.reset()
        self._stream = tokens
        self.n = max(0, n - cap)
        self.extend(tokens[self.n:n])

    @property
    def match(self) -> int:
        """The corpus's longest suffix of the context (at most depth - 1 tokens): `SuffixIndex.longest_match`."""
        self._check()
        return max((st[0] for st in self._states), default=0)

    def start(self, k: int) -> tuple[int, list[int], dict]:
        """`SuffixIndex._start(context, k)`: (match length, the walk's pattern, {segment id: (segment, lo, hi)})."""
        ix = self.index
        m = self.match
        if m < ix.min_match or k < 1:
            return m, [], {}
        w = min(m, max(1, ix.depth - 1 - k))
        ranges = {}
        for seg, st in zip(self._segs, self._states):
            if not w:  # (min_match 0, no match) the empty pattern: every suffix
                if len(seg):
                    ranges[id(seg)] = (seg, 0, len(seg))
                continue
            if st[0] < w:
                continue
            lo, hi = st[1], st[2]
            if st[0] > w:  # the match's last w tokens: the range around the suffix (m - w) tokens later
                if w <= 2:
                    lo, hi = seg.first(self.tail[-1]) if w == 1 else seg.pair(self.tail[-2], self.tail[-1])
                else:
                    tok, sa, _ = seg.views()
                    isa, lcp_np, lcp = seg.links()
                    lo, hi = _expand(lcp, lcp_np, len(sa), isa[sa[lo] + st[0] - w], w)
            ranges[id(seg)] = (seg, lo, hi)
        return m, self.tail[len(self.tail) - w:], ranges

    def propose(self, k: int) -> Proposal:
        """`SuffixIndex.propose(context, k)`."""
        m, pattern, ranges = self.start(k)
        return self.index._chain(m, pattern, ranges, k)

    def propose_tree(self, budget: int, depth: int, top_k: int) -> TreeProposal:
        """`SuffixIndex.propose_tree(context, budget, depth, top_k)`."""
        return self.index._tree(self.start(depth), budget, depth, top_k)
