"""The incremental matcher and the incremental request index against the implementations they replaced (kept below,
verbatim apart from names, as the reference): every proposal equal token for token, probabilities and match length
included, over seeded random corpora with small vocabularies (long matches), tiny segments (several of them) and
the index growing, freezing and evicting mid-request."""

from __future__ import annotations

import heapq
import itertools
import random

import numpy as np
import pytest

from draftpool.models import suffix_index
from draftpool.models.proposal import NO_PROPOSAL, Proposal, TreeProposal
from draftpool.models.request_index import RequestIndex
from draftpool.models.suffix_array import SEP, common_prefixes
from draftpool.models.suffix_index import SuffixIndex


# --- the reference: the index's proposal path and the request index before issue 43 --------------------------------
def ref_key(seg, i, m):
    s = int(seg.sa[i])
    return seg.tokens[s:s + m].tolist()


def ref_range_of(seg, pattern):
    m = len(pattern)
    a, b = 0, len(seg.sa)
    while a < b:
        mid = (a + b) // 2
        if ref_key(seg, mid, m) < pattern:
            a = mid + 1
        else:
            b = mid
    start, b = a, len(seg.sa)
    while a < b:
        mid = (a + b) // 2
        if ref_key(seg, mid, m) <= pattern:
            a = mid + 1
        else:
            b = mid
    return start, a


def ref_longest_match(ix, context):
    best = 0
    for seg in ix.all_segments():
        lo, hi = best + 1, min(len(context), ix.depth - 1)
        while lo <= hi:
            m = (lo + hi) // 2
            a, b = ref_range_of(seg, context[len(context) - m:])
            if a < b:
                best, lo = m, m + 1
            else:
                hi = m - 1
    return best


def ref_start(ix, context, k):
    m = ref_longest_match(ix, context)
    if m < ix.min_match or k < 1:
        return m, [], {}
    walk = min(m, max(1, ix.depth - 1 - k))
    pattern = list(context[len(context) - walk:])
    ranges = {id(s): (s, *ref_range_of(s, pattern)) for s in ix.all_segments()}
    return m, pattern, {key: r for key, r in ranges.items() if r[1] < r[2]}


def ref_children(ranges, m):
    counts, nexts = {}, {}
    for key, (seg, lo, hi) in ranges.items():
        pos = seg.sa[lo:hi] + m
        nx = np.full(hi - lo, SEP, dtype=np.int64)
        inside = pos < len(seg.tokens)
        nx[inside] = seg.tokens[pos[inside]]
        nexts[key] = nx
        vals, cnt = np.unique(nx, return_counts=True)
        for v, c in zip(vals.tolist(), cnt.tolist()):
            counts[v] = counts.get(v, 0) + c
    total = sum(counts.values())
    counts.pop(SEP, None)
    return counts, total, nexts


def ref_narrow(ranges, nexts, tok):
    out = {}
    for key, (seg, lo, _) in ranges.items():
        a, b = np.searchsorted(nexts[key], tok, "left"), np.searchsorted(nexts[key], tok, "right")
        if a < b:
            out[key] = (seg, lo + int(a), lo + int(b))
    return out


def ref_propose(ix, context, k):
    m, pattern, ranges = ref_start(ix, context, k)
    if not ranges:
        return NO_PROPOSAL
    tokens, probs = [], []
    run = 1.0
    limit = min(k, max(1, int(ix.max_spec_factor * m)))
    while len(tokens) < limit and len(pattern) < ix.depth:
        counts, total, nexts = ref_children(ranges, len(pattern))
        if not counts:
            break
        tok = max(counts, key=lambda t: (counts[t], -t))
        p = counts[tok] / total
        if run * p < ix.min_prob:
            break
        run *= p
        tokens.append(tok)
        probs.append(p)
        ranges = ref_narrow(ranges, nexts, tok)
        pattern.append(tok)
    return Proposal(tokens, probs, m)


def ref_propose_tree(ix, context, budget, depth, top_k):
    m, pattern, ranges = ref_start(ix, context, depth)
    tree = TreeProposal([], [], [], [], m)
    limit = min(depth, max(1, int(ix.max_spec_factor * m)))
    heap = []
    order = itertools.count()

    def expand(node, d, pat, rng, run):
        if d >= limit or len(pat) >= ix.depth:
            return
        counts, total, nexts = ref_children(rng, len(pat))
        for tok in sorted(counts, key=lambda t: (-counts[t], t))[:top_k]:
            p = run * (counts[tok] / total)
            if p < ix.min_prob:
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
        expand(len(tree.tokens) - 1, d, pat, ref_narrow(rng, nexts, tok), -neg)
    return tree


class RefRequestIndex:
    def __init__(self, n_min=2, n_max=8):
        self.n_min, self.n_max = n_min, n_max
        self.reset()

    def reset(self):
        self.tokens = []
        self.after = {}

    def extend(self, tokens):
        for t in tokens:
            self.tokens.append(int(t))
            end = len(self.tokens) - 1
            for n in range(self.n_min, min(self.n_max, end) + 1):
                self.after.setdefault(tuple(self.tokens[end - n:end]), []).append(end)

    def sync(self, tokens):
        n = len(self.tokens)
        if tokens[:n] != self.tokens:
            self.reset()
            n = 0
        self.extend(tokens[n:])

    def propose(self, k, most_frequent=False):
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

    def _walk(self, n, k):
        ctx = list(self.tokens)
        tokens, probs = [], []
        while len(tokens) < k:
            pos = [p for p in self.after.get(tuple(ctx[len(ctx) - n:]), []) if p < len(self.tokens)]
            if not pos:
                break
            counts = {}
            for p in pos:
                counts[self.tokens[p]] = counts.get(self.tokens[p], 0) + 1
            tok = max(counts, key=lambda t: (counts[t], -t))
            tokens.append(tok)
            probs.append(counts[tok] / (len(pos) + 1))
            ctx.append(tok)
        return Proposal(tokens, probs, n)


# --- helpers ---------------------------------------------------------------------------------------------------
def same(got, want):
    """Token for token, probabilities exactly (the same counts divided in the same order), match length."""
    return (got.tokens, got.probs, got.match) == (want.tokens, want.probs, want.match)


def same_tree(got, want):
    return (got.tokens, got.parents, got.depths, got.probs, got.match) == \
        (want.tokens, want.parents, want.depths, want.probs, want.match)


def stream(rng, seqs, vocab, n):
    """A request: stretches copied from corpus sequences (long matches), random tokens in between."""
    out = []
    while len(out) < n:
        if seqs and rng.random() < 0.7:
            s = rng.choice(seqs)
            a = rng.randrange(len(s))
            out.extend(s[a:a + rng.randrange(1, 40)])
        else:
            out.extend(rng.randrange(vocab) for _ in range(rng.randrange(1, 6)))
    return out[:n]


def corpus(rng, vocab, n):
    return [[rng.randrange(vocab) for _ in range(rng.randrange(1, 30))] for _ in range(n)]


# --- the matcher -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_the_matcher_proposes_what_the_old_index_proposed_after_every_token(seed, monkeypatch):
    rng = random.Random(seed)
    # walks over few occurrences read them in Python, over many in numpy (remembered per pattern): both, and either
    monkeypatch.setattr(suffix_index, "SMALL_WALK", [0, 6, 48, 10**9][seed % 4])
    vocab = rng.choice([2, 3, 4, 6])
    depth = rng.choice([3, 4, 6, 9, 12])
    segment = rng.choice([15, 40, 90])
    ix = SuffixIndex(depth=depth, max_tokens=segment * rng.choice([3, 5, 1000]), segment_tokens=segment,
                     min_prob=rng.choice([0.0, 0.05, 0.3]), max_spec_factor=rng.choice([0.5, 1.0, 2.0, 4.0]),
                     min_match=rng.choice([0, 1, 1, 2]))
    seqs = corpus(rng, vocab, 25)
    for i in range(0, len(seqs), 5):
        ix.add(seqs[i:i + 5])
    assert len(ix.all_segments()) >= 2
    context = stream(rng, seqs, vocab, 160)
    matcher = ix.matcher()
    versions = set()
    for i, t in enumerate(context):
        matcher.push(t)
        ctx = context[:i + 1]
        if rng.random() < 0.06:  # the index grows mid-request: new recent segment, frozen ones, evictions
            ix.add(corpus(rng, vocab, rng.randrange(1, 4)) + [stream(rng, seqs, vocab, rng.randrange(5, 30))])
        versions.add(ix.version)
        assert matcher.match == ref_longest_match(ix, ctx), i
        for k in {1, 2, rng.randrange(1, depth + 3)}:
            want = ref_propose(ix, ctx, k)
            got = matcher.propose(k)
            assert same(got, want), (i, k, got, want)
            assert same(ix.propose(ctx, k), want)
        if i % 7 == 0:
            budget, tdepth, top_k = rng.randrange(1, 12), rng.randrange(1, depth + 2), rng.randrange(1, 4)
            want = ref_propose_tree(ix, ctx, budget, tdepth, top_k)
            assert same_tree(matcher.propose_tree(budget, tdepth, top_k), want), i
            assert same_tree(ix.propose_tree(ctx, budget, tdepth, top_k), want), i
    assert len(versions) > 1 or seed % 3  # most seeds change the index mid-request


@pytest.mark.parametrize("seed", range(6))
def test_a_matcher_that_jumps_or_restarts_recomputes_from_the_last_tokens(seed):
    rng = random.Random(100 + seed)
    vocab, depth = 3, rng.choice([4, 8])
    ix = SuffixIndex(depth=depth, segment_tokens=30, min_prob=0.05)
    seqs = corpus(rng, vocab, 20)
    ix.add(seqs)
    matcher = ix.matcher()
    tokens = stream(rng, seqs, vocab, 120)
    n = 0
    while n < len(tokens):
        n = min(len(tokens), n + rng.choice([0, 1, 2, 5, depth, 3 * depth]))
        matcher.follow(tokens, n)
        assert matcher.n == n and same(matcher.propose(4), ref_propose(ix, tokens[:n], 4))
    other = list(tokens)  # another list: a new context, read from its last depth - 1 tokens
    other[-1] = (other[-1] + 1) % vocab
    matcher.follow(other, len(other) - 3)
    assert same(matcher.propose(3), ref_propose(ix, other[:-3], 3))
    matcher.follow(other, 10)  # behind: starts over
    assert same(matcher.propose(3), ref_propose(ix, other[:10], 3))


@pytest.mark.parametrize("depth", [6, 12])
def test_patterns_with_many_occurrences_are_widened_and_shortened_through_the_lcp_array(depth, monkeypatch):
    """A boilerplate opening repeated in hundreds of answers: its ranges span far more suffixes than the few steps
    taken in Python before numpy scans the LCP array."""
    monkeypatch.setattr(suffix_index, "SMALL_WALK", 0)
    rng = random.Random(depth)
    head = [1, 2, 3, 4, 5, 6, 7, 8]
    seqs = [[rng.randrange(9, 13) for _ in range(rng.randrange(1, 3))] + head[:rng.randrange(3, 9)] +
            [rng.randrange(9, 13) for _ in range(rng.randrange(1, 6))] for _ in range(400)]
    ix = SuffixIndex(depth=depth, segment_tokens=1500, min_prob=0.0)
    ix.add(seqs)
    assert len(ix.all_segments()) >= 2
    context = [0] + head + [9, 1, 2, 3, 4, 5, 13, 11, 1, 2, 3, 4, 5, 6, 7, 13, 10, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9,
                            3, 4, 5, 6, 1, 2, 3, 7, 12, 1, 2, 3, 4, 10, 11]
    matcher = ix.matcher()
    for i, t in enumerate(context):
        matcher.push(t)
        for k in (1, 2, 4, depth):
            assert same(matcher.propose(k), ref_propose(ix, context[:i + 1], k)), (i, k)


def test_the_matcher_follows_an_empty_index_and_its_first_answers():
    ix = SuffixIndex(depth=6, segment_tokens=8)
    matcher = ix.matcher()
    matcher.extend([1, 2, 3])
    assert matcher.match == 0 and matcher.propose(4) is NO_PROPOSAL
    ix.add([[2, 3, 4, 5]])
    assert matcher.match == 2 and same(matcher.propose(4), ref_propose(ix, [1, 2, 3], 4))
    matcher.push(4)
    assert matcher.propose(4).tokens == [5] and matcher.match == 3
    anything = SuffixIndex(depth=6, segment_tokens=8, min_match=0)  # no match: the walk starts from every suffix
    anything.add([[2, 3, 4, 5], [2, 3, 4, 6], [2, 7, 1, 1, 3]])
    matcher = anything.matcher()
    matcher.extend([9, 9])
    assert matcher.match == 0 and same(matcher.propose(3), ref_propose(anything, [9, 9], 3))
    assert matcher.propose(3).tokens == [2]


def test_the_lcp_array_is_the_common_prefix_of_neighbours():
    rng = np.random.default_rng(0)
    ix = SuffixIndex(depth=7, segment_tokens=10_000)
    ix.add([rng.integers(0, 3, rng.integers(1, 30)).tolist() for _ in range(40)])
    seg = ix.all_segments()[0]
    lcp = common_prefixes(seg.tokens, seg.sa, 6)
    toks = seg.tokens.tolist()
    for i in range(1, len(seg.sa)):
        a, b, n = int(seg.sa[i - 1]), int(seg.sa[i]), 0
        while n < 6 and toks[a + n] != SEP and toks[a + n] == toks[b + n]:
            n += 1
        assert lcp[i] == n
    assert lcp[0] == 0


# --- the request index -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_the_request_index_proposes_what_the_old_one_did(seed):
    rng = random.Random(seed)
    n_min = rng.choice([1, 2, 3])
    n_max = n_min + rng.choice([0, 1, 3, 6])
    vocab = rng.choice([2, 3, 5, 9])
    toks = [rng.randrange(vocab) for _ in range(150)]
    new, old = RequestIndex(n_min, n_max), RefRequestIndex(n_min, n_max)
    for i, t in enumerate(toks):
        new.extend([t])
        old.extend([t])
        for k in (1, 3, 8):
            for mf in (False, True):
                assert same(new.propose(k, most_frequent=mf), old.propose(k, most_frequent=mf)), (i, k, mf)
    for n in range(len(toks) + 1):  # as of any earlier length: the old index stopped there
        old = RefRequestIndex(n_min, n_max)
        old.extend(toks[:n])
        for k in (2, 5):
            for mf in (False, True):
                assert same(new.propose(k, mf, upto=n), old.propose(k, mf)), (n, k, mf)


def test_the_request_index_restarts_on_a_rewrite_and_remembers_nothing_of_before():
    idx = RequestIndex(1, 3)
    idx.sync([1, 2, 1, 2])
    first = idx.tokens
    assert idx.propose(2).tokens == [1, 2]
    idx.sync([1, 2, 1, 3])  # not an extension
    assert idx.tokens is not first and idx.tokens == [1, 2, 1, 3] and idx.propose(2).tokens == []
    idx.advance([1, 2, 1, 3, 1], 5)
    assert idx.propose(2, most_frequent=True) == Proposal([2, 1], [pytest.approx(1 / 3), 0.5], 1)
