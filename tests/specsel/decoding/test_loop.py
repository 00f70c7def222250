"""The decode loop on fixed-logit stub models: acceptance patterns, cache rollback, losslessness."""

import pytest
import torch

from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.sampling import SamplingParams
from specsel.decoding.tree import TreeSpec
from tests.stubs import BigramLM, OracleTreeDrafter, cached_tokens, successor_table

V = 16
TARGET_NEXT = lambda t: (t + 1) % V  # noqa: E731


def decoder(drafter_next, k=4):
    target = BigramLM(successor_table(V, TARGET_NEXT))
    drafter = LlamaDrafter(BigramLM(successor_table(V, drafter_next)))
    return SpecDecoder(target, drafter, mode="chain", k=k)


def plain_output(prompt, n):
    out = SpecDecoder(BigramLM(successor_table(V, TARGET_NEXT)), mode="plain").generate(prompt, n)[0]
    assert out == [(prompt[-1] + 1 + i) % V for i in range(n)]
    return out


def test_always_accept_gives_k_plus_one_per_cycle():
    dec = decoder(TARGET_NEXT, k=4)
    out, m = dec.generate([3, 5], 21)
    assert out == plain_output([3, 5], 21)
    # 1 token from the prefill, then 4 cycles of 4 drafts + bonus
    assert m.accepted == [4, 4, 4, 4] and m.target_forwards == 5 and m.mat == 21 / 5


def test_never_accept_gives_one_token_per_cycle():
    dec = decoder(lambda t: (t + 2) % V, k=3)
    out, m = dec.generate([3], 10)
    assert out == plain_output([3], 10)
    assert m.accepted == [0] * 9 and m.target_forwards == 10


def test_partial_accept_pattern():
    # the drafter is right except after tokens divisible by 4
    drafter_next = lambda t: (t + 1) % V if t % 4 else (t + 3) % V  # noqa: E731
    dec = decoder(drafter_next, k=3)
    out, m = dec.generate([1], 30)
    assert out == plain_output([1], 30)
    # reference: from last committed token c, drafts follow drafter_next; count leading agreements
    expected, c, made = [], 2, 1
    while made < 30:
        n, t = 0, c
        while n < 3 and t % 4:
            t, n = t + 1, n + 1
        expected.append(n)
        c = (c + n + 1) % V
        made += n + 1
    assert m.accepted == expected


def test_caches_roll_back_to_the_committed_prefix():
    drafter_next = lambda t: (t + 1) % V if t % 3 else (t + 5) % V  # noqa: E731
    dec = decoder(drafter_next, k=4)
    prompt = [7, 2, 9]
    out, _ = dec.generate(prompt, 17)
    tokens = dec.state.tokens
    # the target holds every committed token but the last (the next cycle's root)
    assert cached_tokens(dec.target.cache) == tokens[:-1]
    # after a sync the drafter holds exactly the committed tokens, whatever it drafted before
    dec.drafters[0].sync(dec.state)
    assert cached_tokens(dec.drafters[0].cache) == tokens


def test_sampling_with_identical_drafter_accepts_everything():
    table = torch.randn(V, V)
    dec = SpecDecoder(BigramLM(table), LlamaDrafter(BigramLM(table.clone())), mode="chain", k=3)
    _, m = dec.generate([0], 24, SamplingParams(0.8, top_k=6), seed=5)
    assert len(m.accepted) == 6 and all(a == 3 for a in m.accepted)  # 1 + 6 * 4 = 25 >= 24


@pytest.mark.parametrize("correct", [0, 2, 5])
def test_tree_with_decoys_keeps_the_true_path(correct):
    target = BigramLM(successor_table(V, TARGET_NEXT))
    ref = plain_output([4], 20)
    drafter = OracleTreeDrafter(ref, V, depth=5, correct=correct)
    dec = SpecDecoder(target, drafter, mode="tree", tree=TreeSpec(5, 3, 15))
    out, m = dec.generate([4], 20)
    assert out == ref
    assert all(a == correct for a in m.accepted[:-1])
    assert cached_tokens(dec.target.cache) == dec.state.tokens[:-1]


@pytest.mark.parametrize("mode", ["plain", "chain"])
def test_a_cancelled_request_stops_at_the_next_cycle_with_the_tokens_so_far(mode):
    """The HTTP front end sets `cancelled` when the client hangs up: decoding stops at the next cycle boundary, and
    what was committed so far is still the target's own continuation."""
    dec = decoder(TARGET_NEXT, k=2) if mode == "chain" else SpecDecoder(BigramLM(successor_table(V, TARGET_NEXT)),
                                                                         mode="plain")
    asked = []
    dec.cancelled = lambda: asked.append(1) or len(asked) > 3
    out, m = dec.generate([3], 40)
    assert 0 < len(out) < 40 and out == plain_output([3], 40)[:len(out)]
    assert m.target_forwards <= 4
    dec.cancelled = None
    assert dec.generate([3], 40)[0] == plain_output([3], 40)
