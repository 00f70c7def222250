"""Per-cycle selection in the decode loop on fixed-logit stubs: exact output, a switch within one request to the
member that knows this stretch (fewer target forwards than either member alone), proposals scored played or not,
statistics kept across requests, and a pool without a model-free member refused."""

import itertools

import pytest

from draftpool.models.suffix import build_suffix
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder, SpecError
from specsel.decoding.suffix import SuffixDrafter
from specsel.selection.per_cycle import PerCycleSelector, confirmed
from tests.stubs import BigramLM, successor_table

V, K = 16, 4
NEXT = lambda t: (t + 1) % V  # noqa: E731


def target():
    return BigramLM(successor_table(V, NEXT))


def plain(prompt, n):
    return SpecDecoder(target(), mode="plain").generate(prompt, n)[0]


def members():
    """suffix: knows the stretch 0..8 (seeded with it); head: right after tokens 8..15, wrong after 0..7."""
    suffix = SuffixDrafter(build_suffix([list(range(9))] * 4, V, depth=8))
    head = LlamaDrafter(BigramLM(successor_table(V, lambda t: NEXT(t) if t >= 8 else (t + 3) % V)))
    return {"head": head, "suffix": suffix}


def ticks():
    """A clock where every cycle takes one second, whoever drafts (the rule then compares accepted drafts only)."""
    count = itertools.count()
    return lambda: float(next(count))


def test_switches_within_a_request_to_the_member_that_knows_the_stretch():
    prompt, n = [9], 14  # 10..15 (the head's stretch), then 0..7 (the suffix member's)
    sel = PerCycleSelector(K, clock=ticks())
    out, m = SpecDecoder(target(), members(), selector=sel, mode="chain", k=K).generate(prompt, n)
    assert out == plain(prompt, n)
    assert set(m.choices) == {0, 1} and m.choices[0] == 0  # the head first (never drafted), the suffix member later
    singles = [SpecDecoder(target(), {name: d}, mode="chain", k=K).generate(prompt, n)[1].target_forwards
               for name, d in members().items()]
    assert m.target_forwards < min(singles)


def test_every_proposal_is_scored_played_or_not_and_statistics_carry_to_the_next_request():
    sel = PerCycleSelector(K, clock=ticks())
    dec = SpecDecoder(target(), members(), selector=sel, mode="chain", k=K)
    out, m = dec.generate([9], 14)
    rule = sel.rule
    scored = sum(rule.bin_count[1])
    assert scored >= len(m.choices) - 1  # every cycle's proposal but at most one censored at the end
    assert rule.bin_count[0] == [0] * len(rule.bin_count[0])  # the head is not scored
    nxt = PerCycleSelector(K, clock=ticks())
    dec.set_selector(nxt)
    assert nxt.rule is rule
    dec.generate([2], 6)
    assert sum(rule.bin_count[1]) > scored


def test_confirmed_counts_leading_drafts_only():
    assert confirmed([5, 6, 7], [1, 5, 6, 9], 1) == 2
    assert confirmed([5, 6, 7], [1, 5], 1) == 1  # as far as the tokens go
    assert confirmed([], [1, 2], 1) == 0


def test_needs_a_model_free_member():
    only_head = {"head": members()["head"]}
    with pytest.raises(SpecError, match="model-free"):
        SpecDecoder(target(), only_head, selector=PerCycleSelector(K), mode="chain", k=K)
    with pytest.raises(SpecError):
        PerCycleSelector(0)


def test_with_confidence_the_leading_head_is_read_where_it_could_change_the_choice():
    seen = []
    sel = PerCycleSelector(K, confidence=True, clock=ticks())
    dec = SpecDecoder(target(), members(), selector=sel, mode="chain", k=K)
    rule_select = sel.rule.select

    def spy(scores, lengths=None):
        worth = sel.rule.worth_reading(0, [None, *scores[1:]], lengths)
        seen.append((scores[0], dec.drafters[0].confidence(), worth))
        return rule_select(scores, lengths)

    sel.rule.select = spy
    out, m = dec.generate([9], 14)
    assert out == plain([9], 14)
    read = [s for s, _, _ in seen if s is not None]
    assert read and all(s == c and w for s, c, w in seen if s is not None)  # read after its sync, only when worth it
    assert all(s is not None for s, _, w in seen if w)
    assert all(0.5 < s <= 1.0 for s in read)  # the stub head's own bigram rows are sure of its draft
    picked = [s for (s, _, _), c in zip(seen, m.choices) if c == 0 and s is not None]
    assert sum(sel.rule.conf_count[0]) == len(picked)  # each head cycle drafted with a confidence lands in a bin
