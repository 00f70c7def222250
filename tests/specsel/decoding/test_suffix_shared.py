"""Model-free members that read one request: one shared prompt-lookup index per request and n-gram sizes, syncs that
read only the new tokens, and tracked chains equal, position by position, to what the members proposed before issue
43 (each with its own index, the corpus searched again after every token: the reference in
tests/draftpool/test_suffix_matcher.py)."""

from __future__ import annotations

import gc
import random

import pytest

from draftpool.models.proposal import choose
from draftpool.models.suffix import NgramModel, build_suffix
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.request import DecodeState
from specsel.decoding.suffix import NgramDrafter, SuffixDrafter, request_index
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.draftpool.test_suffix_matcher import RefRequestIndex, ref_propose
from tests.stubs import BigramLM, successor_table

V = 8


def reference_chain(drafter, tokens, k):
    """The chain the member proposed after `tokens` before: its own request index, the corpus searched afresh."""
    req = RefRequestIndex(drafter.model.n_min, drafter.model.n_max)
    req.extend(tokens)
    if isinstance(drafter, SuffixDrafter):
        return choose(ref_propose(drafter.index, tokens, k), req.propose(k, most_frequent=True))
    return req.propose(k)


def members(rng):
    corpus = [[rng.randrange(V) for _ in range(rng.randrange(5, 40))] for _ in range(30)]
    return [SuffixDrafter(build_suffix(corpus[:15], V, depth=8, segment_tokens=60, min_prob=0.05)),
            SuffixDrafter(build_suffix(corpus[10:], V, depth=6, segment_tokens=40, n_min=1, n_max=4)),
            SuffixDrafter(build_suffix(corpus[5:25], V, depth=8, segment_tokens=60)),
            NgramDrafter(NgramModel(V)), NgramDrafter(NgramModel(V, n_min=1, n_max=4))], corpus


@pytest.mark.parametrize("seed", range(4))
def test_tracked_chains_are_the_old_members_chains_whatever_the_sync_order(seed):
    rng = random.Random(seed)
    pool, corpus = members(rng)
    k = rng.choice([2, 4, 6])
    for d in pool:
        d.track, d.track_k = True, k
    tokens = []
    while len(tokens) < 140:  # a request that repeats itself and the corpus
        src = rng.choice(corpus + [tokens] if tokens else corpus)
        a = rng.randrange(len(src))
        tokens += src[a:a + rng.randrange(1, 12)] + [rng.randrange(V)]
    prompt_len = 40
    state = DecodeState(tokens=tokens[:prompt_len], prompt_len=prompt_len)
    for d in pool:
        d.reset()
    n = prompt_len
    checked = [prompt_len] * len(pool)  # per member: chains compared up to here

    def sync(i):
        pool[i].sync(state)
        for p in range(checked[i] + 1, len(state.tokens) + 1):  # against the index as it is now
            assert pool[i].chains[p] == reference_chain(pool[i], state.tokens[:p], k).tokens, (i, p)
        checked[i] = len(state.tokens)

    while n < len(tokens):
        step = rng.randrange(1, 6)
        state.tokens.extend(tokens[n:n + step])
        n = len(state.tokens)
        order = list(range(len(pool)))
        rng.shuffle(order)
        for i in order[:rng.randrange(1, len(pool) + 1)]:  # some members sync now, the others later
            sync(i)
        if rng.random() < 0.1:  # a served answer mid-request: the first member's index grows
            sync(0)
            pool[0].learn(tokens[rng.randrange(n):n])
    for i, d in enumerate(pool):
        sync(i)
        want = reference_chain(d, tokens, k)
        got = d.propose(k)
        assert (got.tokens, got.probs, got.match) == (want.tokens, want.probs, want.match)
    assert pool[0].request is pool[2].request is pool[3].request  # n-grams 2..8: one index
    assert pool[1].request is pool[4].request is not pool[0].request  # n-grams 1..4: another


def test_a_request_has_one_index_per_ngram_sizes_and_lets_it_go_with_the_state():
    a, b = NgramDrafter(NgramModel(V)), NgramDrafter(NgramModel(V))
    state = DecodeState(tokens=[1, 2, 3, 1, 2], prompt_len=3)
    a.sync(state)
    b.sync(state)
    assert a.request is b.request is request_index(state, 2, 8) and a.request.tokens == [1, 2, 3, 1, 2]
    other = DecodeState(tokens=[1, 2, 3, 1, 2], prompt_len=3)
    b.sync(other)  # another request (same tokens): its own index
    assert b.request is not a.request and b.request is request_index(other, 2, 8)
    assert b.propose(2).tokens == [3, 1]
    index = a.request
    del state, other
    gc.collect()
    from specsel.decoding import suffix

    assert all(index not in entry[1].values() for entry in suffix._SHARED.values())


class Watched(list):
    """A token list that records the length of every slice taken from it."""

    sliced: list[int]

    def __getitem__(self, i):
        if isinstance(i, slice):
            self.sliced.append(len(range(*i.indices(len(self)))))
        return super().__getitem__(i)


def test_a_sync_reads_only_the_new_tokens():
    d = SuffixDrafter(build_suffix([[1, 2, 3, 4, 5, 6]] * 3, V, depth=8))
    d.track, d.track_k = True, 4
    tokens = Watched([(3 * i) % V for i in range(500)])
    tokens.sliced = []
    state = DecodeState(tokens=tokens, prompt_len=500)
    d.sync(state)
    tokens.sliced.clear()
    for t in (1, 2, 3):
        tokens.append(t)
    d.sync(state)
    assert sum(tokens.sliced) <= 3 + 8  # the 3 new tokens (and the matcher's last tokens), not the 500 before
    assert d.chains[503] == reference_chain(d, list(tokens), 4).tokens
    kept = dict(d.chains)
    state.tokens = list(tokens[:498]) + [7, 7]  # another list: checked in full, read again, no chains for it
    d.sync(state)
    assert d.request.tokens == state.tokens and d.chains == kept


def test_tracking_after_a_rewrite_keeps_what_a_member_with_its_own_index_kept():
    for make in (lambda: NgramDrafter(NgramModel(V, n_min=1)),
                 lambda: SuffixDrafter(build_suffix([[1, 2, 3, 4]] * 2, V, depth=6))):
        d = make()
        d.track, d.track_k = True, 3
        state = DecodeState(tokens=[1, 2, 3, 1, 2], prompt_len=2)
        d.sync(state)
        kept = dict(d.chains)
        state.tokens = [1, 2, 4, 4, 4, 4]  # not a continuation: the index restarts, no chains are added
        d.sync(state)
        assert d.chains == kept and d.request.tokens == [1, 2, 4, 4, 4, 4]
        state.tokens.append(4)  # and reads on from there
        d.sync(state)
        assert d.chains[7] == reference_chain(d, state.tokens, 3).tokens


def test_full_information_selection_over_many_model_free_members_stays_exact():
    rng = random.Random(7)
    table = successor_table(V, lambda t: (3 * t + 1) % V)
    corpus = [[(3 * t + 1) % V for t in range(s, s + 20)] for s in range(V)]
    pool = {f"s{i}": SuffixDrafter(build_suffix(rng.sample(corpus, 4), V, depth=8)) for i in range(4)}
    pool["ngram"] = NgramDrafter(NgramModel(V))
    sel = Selector(make_learner("hedge", len(pool)), len(pool), 4)
    dec = SpecDecoder(BigramLM(table), pool, mode="chain", k=4, selector=sel)
    plain = SpecDecoder(BigramLM(table), mode="plain")
    for prompt in ([0, 1], [5, 2, 7, 5], list(range(V)) * 3):
        out, m = dec.generate(prompt, 30)
        assert out == plain.generate(prompt, 30)[0]
        reqs = {id(d.request) for d in dec.drafters}
        assert len(reqs) == 1  # every member read one index of the request
    assert sum(m.accepted) > 0
