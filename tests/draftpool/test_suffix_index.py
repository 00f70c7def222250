"""Suffix and request indexes against brute-force searches over the raw sequences."""

from __future__ import annotations

import random

import numpy as np
import pytest

from draftpool.models.request_index import RequestIndex
from draftpool.models.suffix_array import SEP, suffix_array
from draftpool.models.suffix_index import SuffixIndex


def occurrences(seqs, pattern):
    """(sequence, start) of every occurrence of pattern inside one sequence."""
    m = len(pattern)
    return [(i, s) for i, seq in enumerate(seqs) for s in range(len(seq) - m + 1) if seq[s:s + m] == pattern]


def brute_longest(seqs, context, depth):
    best = 0
    for m in range(1, min(len(context), depth - 1) + 1):
        if occurrences(seqs, context[len(context) - m:]):
            best = m
    return best


def brute_propose(seqs, context, k, depth, min_prob, factor):
    m = brute_longest(seqs, context, depth)
    if m == 0:
        return [], []
    pattern = context[len(context) - min(m, max(1, depth - 1 - k)):]
    tokens, probs, run = [], [], 1.0
    while len(tokens) < min(k, max(1, int(factor * m))) and len(pattern) < depth:
        follow = [seqs[i][s + len(pattern)] if s + len(pattern) < len(seqs[i]) else SEP
                  for i, s in occurrences(seqs, pattern)]
        counts = {t: follow.count(t) for t in set(follow) if t != SEP}
        if not counts:
            break
        tok = max(counts, key=lambda t: (counts[t], -t))
        p = counts[tok] / len(follow)
        if run * p < min_prob:
            break
        run *= p
        tokens.append(tok)
        probs.append(p)
        pattern = pattern + [tok]
    return tokens, probs


def brute_tree(seqs, context, budget, depth, top_k, idx_depth, min_prob, factor):
    """Every path of at most depth tokens (top_k children per node, path probability >= min_prob) continuing the
    walk pattern, with its path probability -> the `budget` most probable ones ({path: probability})."""
    m = brute_longest(seqs, context, idx_depth)
    if m == 0:
        return {}
    limit = min(depth, max(1, int(factor * m)))
    start = context[len(context) - min(m, max(1, idx_depth - 1 - depth)):]
    paths, frontier = {}, [((), 1.0)]
    while frontier:
        path, run = frontier.pop()
        pattern = start + list(path)
        if len(path) >= limit or len(pattern) >= idx_depth:
            continue
        follow = [seqs[i][s + len(pattern)] if s + len(pattern) < len(seqs[i]) else SEP
                  for i, s in occurrences(seqs, pattern)]
        counts = {t: follow.count(t) for t in set(follow) if t != SEP}
        for tok in sorted(counts, key=lambda t: (-counts[t], t))[:top_k]:
            p = run * (counts[tok] / len(follow))
            if p >= min_prob:
                paths[path + (tok,)] = p
                frontier.append((path + (tok,), p))
    best = sorted(paths.items(), key=lambda kv: -kv[1])[:budget]
    return dict(best)


def test_suffix_array_sorts_by_the_first_depth_tokens():
    rng = np.random.default_rng(0)
    toks = rng.integers(0, 4, 300)
    toks[rng.integers(0, 300, 20)] = SEP
    depth = 6
    sa = suffix_array(toks, depth)
    assert sorted(sa.tolist()) == [i for i in range(300) if toks[i] != SEP]

    def key(i):  # the first depth tokens, cut at a SEP (below every token, and each SEP its own)
        out = []
        for t in toks[i:i + depth].tolist():
            if t == SEP:
                out.append(-1)
                break
            out.append(t)
        return out

    keys = [key(i) for i in sa.tolist()]
    assert keys == sorted(keys)


def random_index(rng, vocab, depth):
    """30 random sequences and an index over them in several frozen segments."""
    seqs = [[rng.randrange(vocab) for _ in range(rng.randrange(1, 40))] for _ in range(30)]
    index = SuffixIndex(depth=depth, segment_tokens=150, min_prob=0.05, max_spec_factor=2.0)
    for i in range(0, 30, 7):
        index.add(seqs[i:i + 7])
    return seqs, index


@pytest.mark.parametrize("seed", range(6))
def test_proposals_match_a_brute_force_search(seed):
    rng, vocab, depth = random.Random(seed), 5 + seed, 8
    seqs, index = random_index(rng, vocab, depth)
    index.add([[0, 1]])  # and a recent one
    seqs = seqs + [[0, 1]]
    assert len(index.segments) >= 2 and index.recent_segment is not None
    for _ in range(40):
        context = [rng.randrange(vocab) for _ in range(rng.randrange(1, 12))]
        assert index.longest_match(context) == brute_longest(seqs, context, depth)
        got = index.propose(context, 6)
        want = brute_propose(seqs, context, 6, depth, 0.05, 2.0)
        assert (got.tokens, got.probs) == (want[0], pytest.approx(want[1]))


@pytest.mark.parametrize("seed", range(4))
def test_trees_match_a_brute_force_search(seed):
    rng, vocab, depth = random.Random(seed), 3 + seed, 8
    seqs, index = random_index(rng, vocab, depth)
    checked = 0
    for _ in range(30):
        context = [rng.randrange(vocab) for _ in range(rng.randrange(1, 12))]
        tree = index.propose_tree(context, 1000, 4, 3)  # a budget past every candidate: the whole tree
        paths = {}
        for j, (tok, par, d) in enumerate(zip(tree.tokens, tree.parents, tree.depths)):
            assert par < j and d == (1 if par == -1 else tree.depths[par] + 1)  # parents first, depths consistent
            paths[j] = (paths[par] if par >= 0 else ()) + (tok,)
        want = brute_tree(seqs, context, 1000, 4, 3, depth, 0.05, 2.0)
        assert {paths[j]: p for j, p in enumerate(tree.probs)} == pytest.approx(want)
        assert tree.probs == sorted(tree.probs, reverse=True)  # best first
        cut = index.propose_tree(context, 5, 4, 3)  # a budget: the most probable nodes, still a tree
        assert cut.probs == pytest.approx(sorted(want.values(), reverse=True)[:5])
        assert cut.tokens == tree.tokens[:5] and cut.parents == tree.parents[:5]
        chain = index.propose(context, 4)  # top_k=1 is the chain
        line = index.propose_tree(context, 4, 4, 1)
        assert line.tokens == chain.tokens and line.parents == list(range(-1, len(chain.tokens) - 1))
        checked += len(want) > 1
    assert checked >= 5  # branching trees were compared, not only empty ones


def test_the_cap_evicts_oldest_segments_whole():
    index = SuffixIndex(depth=4, max_tokens=100, segment_tokens=30)
    for i in range(20):
        index.add([[i % 7] * 10 + [100 + i]])
    assert index.n_tokens <= 100 + 30 and index.evicted > 0
    assert index.longest_match([100 + 19]) == 1 and index.longest_match([100]) == 0  # the first answer is gone


def test_request_index_is_prompt_lookup():
    idx = RequestIndex(n_min=2, n_max=4)
    idx.sync([5, 6, 7, 8, 9, 1, 2, 5, 6, 7])
    assert idx.propose(3).tokens == [8, 9, 1]  # continue after the latest earlier [5, 6, 7]
    idx.sync([5, 6, 7, 8, 9, 1, 2, 5, 6, 7, 3])  # no earlier n-gram ends with 7, 3
    assert idx.propose(3).tokens == []
    idx.sync([1, 2, 3])  # not an extension: starts over
    assert idx.tokens == [1, 2, 3] and idx.propose(2).tokens == []
