"""Model-free drafters in the decode loop on fixed-logit stub models: exact output, what they draft, the no-draft
column, sampling stays distribution-exact, full-information selection over heads and model-free members."""

from collections import Counter

import pytest
import torch

from draftpool.models.suffix import NgramModel, build_suffix
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.sampling import SamplingParams
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
