"""Model-free drafters in the decode loop on fixed-logit stub models: exact output, what they draft, the no-draft
column, sampling stays distribution-exact, full-information selection over heads and model-free members."""

from collections import Counter

import pytest
import torch

from draftpool.forward.sampling import SamplingParams
from draftpool.models.suffix import NgramModel, build_suffix
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.suffix import NgramDrafter, SuffixDrafter
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import BigramLM, successor_table

V = 16
NEXT = lambda t: (t + 1) % V  # noqa: E731


def target():
    return BigramLM(successor_table(V, NEXT))


def plain(prompt, n):
    return SpecDecoder(target(), mode="plain").generate(prompt, n)[0]


def test_ngram_drafts_what_followed_the_last_occurrence():
    dec = SpecDecoder(target(), NgramDrafter(NgramModel(V)), mode="chain", k=4)
    prompt = list(range(V)) + [0, 1]  # one full cycle, then its start again
    out, m = dec.generate(prompt, 20)
    assert out == plain(prompt, 20)
    assert m.accepted[:4] == [4, 4, 4, 4]  # every draft is the cycle's continuation


def test_no_match_is_a_zero_length_draft_and_still_exact():
    dec = SpecDecoder(target(), NgramDrafter(NgramModel(V, n_min=2)), mode="chain", k=4)
    out, m = dec.generate([3], 6)  # nothing repeats within 7 tokens of a 16-cycle
    assert out == plain([3], 6)
    assert m.accepted == [0] * 5 and m.drafted == [0] * 5  # one token per target pass, nothing drafted


def test_a_seeded_suffix_index_drafts_from_the_first_cycle():
    d = SuffixDrafter(build_suffix([[(s + i) % V for i in range(40)] for s in range(V)], V, depth=8))  # its answers
    out, m = SpecDecoder(target(), d, mode="chain", k=4).generate([5, 6], 13)
    assert out == plain([5, 6], 13)
    assert m.accepted == [4, 4, 4]  # from the first cycle: the index knows the continuation
    cold = SpecDecoder(target(), NgramDrafter(NgramModel(V)), mode="chain", k=4).generate([5, 6], 13)[1]
    assert sum(cold.accepted) == 0  # the request alone has seen nothing to copy


def test_the_no_draft_column_maps_to_no_token():
    d = NgramDrafter(NgramModel(V))
    assert d.to_target_ids(torch.tensor([3, V])).tolist() == [3, -1]
    row = d._row(None)
    assert torch.isinf(d.full_logits(row)).all()  # the zero distribution: accepted nowhere


def test_sampling_with_an_ngram_drafter_keeps_the_target_distribution():
    table = torch.full((V, V), -30.0)
    for t in range(V):  # two equally likely successors: the draft is right half of the time
        table[t, (t + 1) % V] = table[t, (t + 2) % V] = 0.0
    params = SamplingParams(temperature=1.0)
    prompt = list(range(V)) + [0]
    runs = 600
    spec = Counter(tuple(SpecDecoder(BigramLM(table), NgramDrafter(NgramModel(V, n_min=1)), mode="chain", k=3)
                         .generate(prompt, 2, params, seed)[0]) for seed in range(runs))
    # exact distribution of the first two tokens: 4 sequences, 1/4 each
    assert set(spec) == {(1, 2), (1, 3), (2, 3), (2, 4)}
    for count in spec.values():
        assert abs(count / runs - 0.25) < 0.07


def test_full_information_selection_over_a_model_and_model_free_members():
    wrong = LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 3) % V)))
    drafters = {"ngram": NgramDrafter(NgramModel(V)), "wrong": wrong}
    sel = Selector(make_learner("hedge", 2), 2, 4)
    dec = SpecDecoder(target(), drafters, mode="chain", k=4, selector=sel)
    prompt = list(range(V)) + [0, 1]
    for _ in range(3):
        out, m = dec.generate(prompt, 24)
        assert out == plain(prompt, 24)
    # the counterfactual rows of the n-gram member say it would have been right: the learner moves to it
    assert m.choices[-1] == 0


@pytest.mark.parametrize("k", [1, 6])
def test_a_proposal_never_exceeds_k(k):
    d = NgramDrafter(NgramModel(V))
    from specsel.decoding.request import DecodeState
    d.sync(DecodeState(tokens=list(range(V)) * 3, prompt_len=V))
    draft, q = d.draft_chain(k, SamplingParams(temperature=1.0), None)
    assert len(draft) == k and q.shape == (k, V) and len(d.chain_logits) == k


def test_the_hybrid_rule_takes_the_suffix_draft_only_when_its_score_reaches_k():
    from specsel.selection.hybrid import HybridSelector

    seeded = SuffixDrafter(build_suffix([[(s + i) % V for i in range(40)] for s in range(V)], V, depth=8))
    wrong = LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 3) % V)))
    sel = HybridSelector(suffix=0, model=1, threshold=3)
    out, m = SpecDecoder(target(), {"suffix": seeded, "model": wrong}, mode="chain", k=4, selector=sel).generate(
        [5, 6], 13)
    assert out == plain([5, 6], 13) and set(m.choices) == {0}  # a near-certain chain of 4 scores > 3: suffix
    cold = SuffixDrafter(build_suffix([[0, 9]], V, depth=8))  # knows nothing of this target
    sel = HybridSelector(suffix=0, model=1, threshold=3)
    out, m = SpecDecoder(target(), {"suffix": cold, "model": wrong}, mode="chain", k=4, selector=sel).generate(
        [5, 6], 8)
    assert out == plain([5, 6], 8) and set(m.choices) == {1} and sel.picks[0] == 0


def test_auto_gives_a_self_limiting_drafter_the_whole_k():
    d = SuffixDrafter(build_suffix([[(s + i) % V for i in range(40)] for s in range(V)], V, depth=12))
    out, m = SpecDecoder(target(), d, mode="auto", k=6).generate([5, 6, 7], 15)
    assert out == plain([5, 6, 7], 15)
    assert max(m.drafted) == 6 and m.plans == []  # no chooser: the proposal's own length, up to k


def _tracked(drafter, tokens, prompt_len, k):
    from specsel.decoding.request import DecodeState
    drafter.track, drafter.track_k = True, k
    drafter.sync(DecodeState(tokens=tokens, prompt_len=prompt_len))
    return drafter


def test_chain_hits_are_the_chains_it_would_draft_checked_position_by_position():
    k, prompt_len = 4, 10
    tokens = [1, 2, 3, 4, 1, 2, 5, 6, 1, 2, 3, 4, 1, 2, 5, 9, 1, 2, 3, 7, 1, 2, 3, 4, 5]
    d = _tracked(NgramDrafter(NgramModel(V, n_min=1)), tokens, prompt_len, k)
    hits = d.take_chain_hits(prompt_len + 1, len(tokens), tokens)  # [k, m]
    for p in range(prompt_len + 1, len(tokens)):
        for j in range(k):
            s = p - j
            if s < prompt_len + 1:
                assert hits[j, p - prompt_len - 1] == 0  # no chain kept before the first evaluated position
                continue
            fresh = NgramDrafter(NgramModel(V, n_min=1))  # brute force: a new drafter on tokens[:s] proposes
            fresh.request.sync(tokens[:s])
            chain = fresh.propose(k).tokens
            assert hits[j, p - prompt_len - 1] == float(j < len(chain) and chain[j] == tokens[p]), (p, j)
    assert hits.sum() > 0 and (hits == 0).any()  # the stream has both hits and misses


def test_the_selectors_estimate_of_a_model_free_chain_is_its_accepted_length():
    # greedy: the per-depth estimate of the chosen model-free member is exactly what each cycle accepted
    seen = []
    sel = Selector(make_learner("hedge", 1), 1, 4)
    dec = SpecDecoder(target(), {"ngram": NgramDrafter(NgramModel(V, n_min=1))}, mode="chain", k=4, selector=sel)
    prompt = [0, 1, 2, 9, 4, 5, 6, 7, 0, 1, 2, 3]  # a broken cycle: the early chains go wrong, later ones right
    dec.generate(prompt, 1)  # bind, so the game exists
    observe = sel.game.observe
    sel.game.observe = lambda g, acc, b=None: (seen.append((g.clone(), list(acc))), observe(g, acc, b))[1]
    out, m = dec.generate(prompt, 30)
    assert out == plain(prompt, 30)
    gammas = torch.cat([g for g, _ in seen], dim=2)[0]  # [K, m]
    assert gammas.shape[0] == 4
    pos = 0
    for a in m.accepted[:-1]:  # the last cycle may be cut by max_new_tokens
        chain = torch.stack([gammas[j, pos + j] for j in range(min(4, gammas.shape[1] - pos))])
        assert int(torch.cumprod(chain, 0).sum()) == a
        pos += a + 1
    assert 0 in m.accepted and 4 in m.accepted


def test_full_information_selection_prefers_the_longer_chains_not_the_better_next_token():
    # both members know the target's continuation, so their next-token guesses are equally right, but one stops every
    # chain after 1 token (max_spec_factor): scored by the chains they would draft, the learner settles on the other
    corpus = [[(s + i) % V for i in range(40)] for s in range(V)]
    one = SuffixDrafter(build_suffix(corpus, V, depth=8, max_spec_factor=0.01))
    full = SuffixDrafter(build_suffix(corpus, V, depth=8))
    sel = Selector(make_learner("hedge", 2), 2, 4)
    dec = SpecDecoder(target(), {"one": one, "full": full}, mode="chain", k=4, selector=sel)
    later = []
    for start in range(6):
        out, m = dec.generate([start, start + 1], 13)  # too short to repeat itself: the corpus drafts
        assert out == plain([start, start + 1], 13)
        later += m.choices if start else []
    assert set(later) == {1} and set(m.accepted) == {4}  # next-token scores tie; the chains do not


def test_sampling_selection_scores_model_free_chains_with_per_depth_betas():
    seen = []
    wrong = LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 3) % V)))
    sel = Selector(make_learner("hedge", 2), 2, 4)
    dec = SpecDecoder(target(), {"ngram": NgramDrafter(NgramModel(V)), "wrong": wrong}, mode="chain", k=4,
                      selector=sel)
    prompt = list(range(V)) + [0, 1]
    dec.generate(prompt, 1)
    observe = sel.game.observe
    sel.game.observe = lambda g, acc, b=None: (seen.append((g, b)), observe(g, acc, b))[1]
    params = SamplingParams(temperature=0.7)
    out, m = dec.generate(prompt, 20, params, 3)
    assert out == plain(prompt, 20)  # a near-deterministic target: sampling follows its cycle
    g, b = seen[0]
    assert g.shape[:2] == (2, 4) and b.shape == g.shape
    assert torch.equal(b[0], g[0])  # a one-hot chain's realised-token beta is its hit
    assert torch.equal(g[1, 0], g[1, 3])  # the model member's depth-0 rows repeated at every depth


def test_a_suffix_tree_keeps_the_less_frequent_branch_the_chain_drops():
    # after 5, 6 the corpus says 1, 2, 3, 4 twice and the target's 7, 8, 9, 10 once: the chain drafts the wrong
    # majority, the tree drafts both and the target's branch is accepted through the tree pass
    corpus = [[5, 6, 1, 2, 3, 4], [5, 6, 1, 2, 3, 4], [5, 6, 7, 8, 9, 10]]
    from specsel.decoding.tree import TreeSpec

    chain = SpecDecoder(target(), SuffixDrafter(build_suffix(corpus, V, depth=8)), mode="chain", k=4)
    tree = SpecDecoder(target(), SuffixDrafter(build_suffix(corpus, V, depth=8)), mode="tree",
                       tree=TreeSpec(depth=4, top_k=2, tokens=8))
    out_c, m_c = chain.generate([3, 4, 5], 5)  # the prefill emits 6: the fork is the first cycle
    out_t, m_t = tree.generate([3, 4, 5], 5)
    assert out_c == out_t == plain([3, 4, 5], 5)
    assert m_c.accepted[0] == 0 and m_t.accepted[0] == 4 and m_t.drafted[0] == 8  # both branches, 4 deep


def test_prompt_lookup_drafts_its_chain_as_a_one_path_tree():
    from specsel.decoding.tree import TreeSpec

    dec = SpecDecoder(target(), NgramDrafter(NgramModel(V)), mode="tree", tree=TreeSpec(depth=4, top_k=2, tokens=8))
    prompt = list(range(V)) + [0, 1]
    out, m = dec.generate(prompt, 12)
    assert out == plain(prompt, 12) and m.accepted[:2] == [4, 4] and m.drafted[:2] == [4, 4]


def test_a_request_repeat_at_least_as_long_as_the_corpus_match_is_drafted_over_corpus_frequencies():
    """The corpus has seen 3 -> 9 ... many times (a confident, high-scoring chain); the request itself holds the
    target's own cycle, a longer match seen once. The request's chain is drafted (the old rule, the higher score
    alone, drafted the corpus's and accepted nothing), in chains and in trees."""
    from draftpool.models.proposal import NO_PROPOSAL, Proposal, choose

    seed = [[3, 4, 9, 9, 9, 9, 9]] * 20
    prompt = list(range(V)) + [0, 1, 2, 3]  # the cycle once, then its start; the prefill's token is 4
    for mode in ("chain", "tree"):
        d = SuffixDrafter(build_suffix(seed, V, depth=8, min_prob=0.0))
        d.request.sync(prompt + [4])  # what the first cycle proposes from: the corpus matches 2 tokens, the request 5
        corpus, mine = d.index.propose(prompt + [4], 4), d.request.propose(4, most_frequent=True)
        assert corpus.tokens == [9] * 4 and corpus.score > mine.score and mine.match > corpus.match
        out, m = SpecDecoder(target(), d, mode=mode, k=4).generate(prompt, 9)
        assert out == plain(prompt, 9)
        assert m.accepted[0] == 4 if mode == "chain" else m.accepted[0] >= 4
    corpus, mine = Proposal([7, 8, 9], [0.9, 0.9, 0.9], 2), Proposal([5, 6], [0.5, 0.5], 2)
    assert choose(corpus, mine) is mine  # as long: the request's
    assert choose(corpus, Proposal([5], [0.5], 1)) is corpus  # shorter: the higher score
    assert choose(Proposal([7], [0.2], 3), Proposal([5], [0.5], 1)).tokens == [5]
    assert choose(corpus, NO_PROPOSAL) is corpus and choose(NO_PROPOSAL, NO_PROPOSAL) is NO_PROPOSAL
