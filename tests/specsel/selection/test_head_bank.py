"""The stacked head bank against one-head-at-a-time prefills, on a tiny random Llama target."""

import copy
import gc
import weakref

import pytest
import torch

from draftpool.forward.sampling import SamplingParams
from draftpool.models.low_rank import LowRank, delta, fingerprint, linear_layers
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.request import DecodeState
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.head_bank import HeadBank, same_shape, shared_base
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import VOCAB, make_head, tiny_target


@pytest.fixture(scope="module")
def tiny():
    target = tiny_target()
    return target, [make_head(target, s) for s in (1, 2, 3)]


def features(target, tokens):
    with torch.no_grad():
        out = target(torch.tensor([tokens]), output_hidden_states=True)
    return torch.cat([out.hidden_states[i] for i in (1, 2, 3)], -1)[0]  # [T,3H]


def assert_same_head_state(a: Eagle3Drafter, b: Eagle3Drafter, loose: float = 1.0) -> None:
    """loose: a factor on the tolerances (a low-rank bank computes W_base x + s B A x where the head computes
    W_merged x: equal up to float32 rounding of the sum)."""
    assert a.n_real == b.n_real
    torch.testing.assert_close(a.k, b.k, atol=1e-5 * loose, rtol=1e-5 * loose)
    torch.testing.assert_close(a.v, b.v, atol=1e-5 * loose, rtol=1e-5 * loose)
    torch.testing.assert_close(a.last_hidden, b.last_hidden, atol=1e-4 * loose, rtol=1e-4 * loose)
    torch.testing.assert_close(a.last_logits, b.last_logits, atol=1e-3 * loose, rtol=1e-4 * loose)
    assert sorted(a.pred_rows) == sorted(b.pred_rows)
    for pos in a.pred_rows:
        torch.testing.assert_close(a.pred_rows[pos], b.pred_rows[pos], atol=1e-3 * loose, rtol=1e-4 * loose)


def tracked_pair(heads):
    """The same heads twice, tracking predictions: one set synced alone, one through a bank."""
    alone = [Eagle3Drafter(h) for h in heads]
    banked = [Eagle3Drafter(h) for h in heads]
    for d in alone + banked:
        d.track = True
    return alone, banked, HeadBank(banked)


def test_bank_prefill_equals_each_head_alone(tiny):
    target, heads = tiny
    tokens = torch.randint(0, VOCAB, (40,), generator=torch.Generator().manual_seed(5)).tolist()
    feats = features(target, tokens)
    alone, banked, bank = tracked_pair(heads)
    # uneven chunks as decoding makes them; a head drafts in between (its draft keys must be dropped)
    for step, end in enumerate((9, 10, 14, 15, 21, 30)):
        state = DecodeState(tokens=tokens[:end + 1], prompt_len=9, feats=feats[:end])
        for d in alone:
            d.sync(state)
        bank.sync(state)
        for a, b in zip(alone, banked):
            assert_same_head_state(a, b)
        i = step % 3
        draft_a, _ = alone[i].draft_chain(3, SamplingParams(), None)
        draft_b, _ = banked[i].draft_chain(3, SamplingParams(), None)
        assert draft_a.tolist() == draft_b.tolist()


def low_rank_heads(target, n: int, rank: int = 2, scale: float = 2.0, with_base: bool = False,
                   own_lm_head: bool = False):
    """n specialists of one base head: random adapters on every linear layer, merged into each head's weights (and
    the base head itself first, with_base); own_lm_head: each its own lm_head instead of an adapted one."""
    base = make_head(target, 7)
    fp, g = fingerprint(base), torch.Generator().manual_seed(11)
    heads = [copy.deepcopy(base)] if with_base else []
    for _ in range(n):
        head, factors = copy.deepcopy(base), {}
        if own_lm_head:
            head.lm_head.weight.data = torch.randn(head.lm_head.weight.shape, generator=g) * 0.05
        for name in [n for n in linear_layers(head) if not (own_lm_head and n == "lm_head")]:
            layer = head.get_submodule(name)
            a = torch.randn(rank, layer.in_features, generator=g) * 0.1
            b = torch.randn(layer.out_features, rank, generator=g) * 0.1
            factors[name] = (a, b)
            layer.weight.data += delta(a, b, scale)
        head.low_rank = LowRank(factors, scale, fp)
        heads.append(head)
    return heads


@pytest.mark.parametrize("with_base,own_lm_head", [(False, False), (True, False), (True, True)])
def test_low_rank_specialists_of_one_base_are_banked_by_their_factors(tiny, with_base, own_lm_head):
    target, _ = tiny
    # the base head joins with zero adapters; with their own lm_heads, those are stacked whole
    heads = low_rank_heads(target, 3 - with_base, with_base=with_base, own_lm_head=own_lm_head)
    tokens = torch.randint(0, VOCAB, (30,), generator=torch.Generator().manual_seed(6)).tolist()
    feats = features(target, tokens)
    alone, banked, bank = tracked_pair(heads)
    assert bank.low_rank  # the base read once: only the factors (and each member's own weights) are stacked
    stacked = sum(t.numel() for group in bank.params.values() for t in group.values())
    own = heads[-1].lm_head.weight.numel() if own_lm_head else 0
    assert stacked == 3 * (own + sum(a.numel() + b.numel() for a, b in heads[-1].low_rank.factors.values()))
    for end in (9, 12, 13, 20, 29):
        state = DecodeState(tokens=tokens[:end + 1], prompt_len=9, feats=feats[:end])
        for d in alone:
            d.sync(state)
        bank.sync(state)
        for a, b in zip(alone, banked):
            assert_same_head_state(a, b, loose=10.0)
        assert [d.last_logits.argmax().item() for d in alone] == [d.last_logits.argmax().item() for d in banked]


def test_specialists_of_other_bases_or_moved_off_their_adapters_are_stacked_whole(tiny):
    target, full = tiny
    heads = low_rank_heads(target, 2)
    assert shared_base(heads_drafters := [Eagle3Drafter(h) for h in heads])
    other = copy.deepcopy(heads[1])
    other.norm.weight.data += 0.01  # a weight the adapters do not cover differs: still one base, that one stacked
    assert shared_base([heads_drafters[0], Eagle3Drafter(other)])
    assert "weight" in HeadBank([heads_drafters[0], Eagle3Drafter(other)]).params["norm"]
    assert not shared_base([heads_drafters[0], Eagle3Drafter(full[0])])  # a head that is not their base
    moved = copy.deepcopy(heads[1])
    moved.midlayer.mlp.up_proj.weight.data += 0.01  # an update its adapters do not describe
    assert not shared_base([heads_drafters[0], Eagle3Drafter(moved)])
    assert not HeadBank([heads_drafters[0], Eagle3Drafter(moved)]).low_rank


def test_a_head_ahead_is_rewound_and_ends_as_if_synced_alone(tiny):
    """With batched feedback the drafting head syncs ahead of the others; the bank still leaves all as per-head."""
    target, heads = tiny
    tokens = list(range(3, 40))
    feats = features(target, tokens)
    alone, banked, bank = tracked_pair(heads)
    early = DecodeState(tokens=tokens[:11], prompt_len=6, feats=feats[:10])
    bank.sync(early)
    banked[1].sync(DecodeState(tokens=tokens[:17], prompt_len=6, feats=feats[:16]))  # head 1 drafts further on
    banked[1].draft_chain(3, SamplingParams(), None)
    late = DecodeState(tokens=tokens[:25], prompt_len=6, feats=feats[:24])
    bank.sync(late)
    for d in alone:
        d.sync(early)
        d.sync(late)
    for a, b in zip(alone, banked):
        assert_same_head_state(a, b)


def test_heads_of_another_shape_are_refused(tiny):
    target, heads = tiny
    other = Eagle3Drafter(make_head(target, 4, draft_vocab=32))
    assert same_shape([Eagle3Drafter(h) for h in heads])
    assert not same_shape([Eagle3Drafter(heads[0]), other])
    with pytest.raises(ValueError, match="one shape"):
        HeadBank([Eagle3Drafter(heads[0]), other])


def test_a_replaced_bank_and_its_stacked_weights_are_freed_at_once(tiny):
    # a selector replaces its bank after every weight swap: one held in a reference cycle would keep its stacked
    # weights until a full collection of the cyclic garbage collector (a serving process grew by hundreds of MB)
    target, heads = tiny
    tokens = list(range(1, 12))
    state = DecodeState(tokens=tokens, prompt_len=4, feats=features(target, tokens)[:10])
    bank = HeadBank([Eagle3Drafter(h) for h in heads])
    bank.sync(state)
    gone = weakref.ref(bank)
    stacked = weakref.ref(bank.params["fc"]["weight"])
    gc.disable()
    try:
        del bank
        assert gone() is None and stacked() is None  # by reference counting alone
    finally:
        gc.enable()


class Recorder:
    full_information = True

    def __init__(self):
        self.t, self.seen = 0, []

    def select(self):
        self.t += 1
        return self.t % 3

    def update(self, losses):
        self.seen.append(losses)


@pytest.mark.parametrize("game", [GameConfig(), GameConfig(warmup_rounds=1, feedback_every=3)])
def test_pool_decoder_batched_evaluation_feeds_the_same_losses(tiny, game):
    target, heads = tiny
    prompt = [5, 17, 33, 2]
    runs = []
    for batched in (True, False):
        rec = Recorder()
        dec = SpecDecoder(target, {f"h{i}": Eagle3Drafter(h) for i, h in enumerate(heads)},
                          selector=Selector(rec, 3, 3, game, batched_eval=batched), k=3)
        assert (dec.selector.bank is not None) == batched
        out, m = dec.generate(prompt, 24)
        runs.append((out, m.choices, rec.seen))
    (out_a, ch_a, seen_a), (out_b, ch_b, seen_b) = runs
    assert out_a == out_b and ch_a == ch_b and len(seen_a) == len(seen_b) > 0
    for a, b in zip(seen_a, seen_b):
        torch.testing.assert_close(torch.as_tensor(a), torch.as_tensor(b))


def test_bandit_pools_do_not_build_a_bank(tiny):
    target, heads = tiny
    dec = SpecDecoder(target, {f"h{i}": Eagle3Drafter(h) for i, h in enumerate(heads)},
                      selector=Selector(make_learner("ucb", 3), 3, 3), k=3)
    assert dec.selector.bank is None
