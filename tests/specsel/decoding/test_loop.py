"""The decode loop on fixed-logit stub models: acceptance patterns, cache rollback, losslessness."""

import pytest
import torch

from draftpool.forward.sampling import SamplingParams
from specsel.decoding.auto import AutoSpec, Costs
from specsel.decoding.hooks import Hooks
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.request import RequestMetrics
from specsel.decoding.timing import PHASES, PhaseTimer
from specsel.decoding.tree import TreeSpec
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
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
    state = dec.decode(prompt, 17).state
    tokens = state.tokens
    # the target holds every committed token but the last (the next cycle's root)
    assert cached_tokens(dec.target.cache) == tokens[:-1]
    # after a sync the drafter holds exactly the committed tokens, whatever it drafted before
    dec.drafters[0].sync(state)
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
    res = dec.decode([4], 20)
    assert res.tokens == ref
    assert all(a == correct for a in res.metrics.accepted[:-1])
    assert cached_tokens(dec.target.cache) == res.state.tokens[:-1]


@pytest.mark.parametrize("mode", ["plain", "chain"])
def test_a_cancelled_request_stops_at_the_next_cycle_with_the_tokens_so_far(mode):
    """A request's `watch` sees the committed tokens after the prefill and every cycle (growing, each a prefix of the
    next) and stops decoding when it says so (the HTTP front end: a client that hung up, a stop string): at the next
    cycle boundary, and what was committed so far is still the target's own continuation."""
    dec = decoder(TARGET_NEXT, k=2) if mode == "chain" else SpecDecoder(BigramLM(successor_table(V, TARGET_NEXT)),
                                                                         mode="plain")
    seen = []
    out, m = dec.generate([3], 40, watch=lambda new: seen.append(list(new)) or len(seen) > 3)
    assert 0 < len(out) < 40 and out == plain_output([3], 40)[:len(out)]
    assert m.target_forwards <= 4
    assert seen[-1] == out and all(seen[i] == seen[i + 1][:len(seen[i])] for i in range(len(seen) - 1))
    assert dec.generate([3], 40)[0] == plain_output([3], 40)  # the watch is the request's: gone after it


def test_hooks_are_passed_in_and_belong_to_their_request():
    """Hooks given to the decoder apply to every request; hooks given to one request replace them for it: the
    collector gets every committed token's row, the poll runs at every cycle boundary, `cancelled` stops decoding."""

    class Rows:
        def __init__(self):
            self.rows = 0

        def add(self, out, rows):
            self.rows += len(rows)

    default, polls = Rows(), []
    dec = SpecDecoder(BigramLM(successor_table(V, TARGET_NEXT)),
                      LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 2) % V))), k=3,
                      hooks=Hooks(collector=default, poll=lambda: polls.append(1) or []))
    out, m = dec.generate([3], 12)
    assert out == plain_output([3], 12) and default.rows == 12 and len(polls) == len(m.accepted) == 11
    own, asked = Rows(), []
    cancelled = lambda: asked.append(1) or len(asked) > 3  # noqa: E731 - after the prefill and two cycles: no
    res = dec.decode([3], 40, hooks=Hooks(collector=own, cancelled=cancelled))
    out, m = res.tokens, res.metrics
    assert out == plain_output([3], 40)[:4] and m.target_forwards == 4  # stopped at the fourth boundary
    assert own.rows == len(res.state.tokens) - 1 and default.rows == 12 and len(polls) == 11  # the defaults untouched


def test_phase_timer_laps_add_to_every_phase_named():
    clock = PhaseTimer(torch.device("cpu"))
    start = clock.start
    t1 = clock.lap("target_s", "verify_s")
    t2 = clock.lap()  # untimed: left to other_s
    t3 = clock.lap("verify_s")
    first, second = t1 - start, t3 - t2
    assert start <= t1 <= t2 <= t3  # a lap returns the time at it
    assert clock.seconds["target_s"] == first and clock.seconds["verify_s"] == pytest.approx(first + second)
    assert clock.seconds["eval_s"] == 0.0 and set(clock.seconds) == set(PHASES) <= set(vars(RequestMetrics()))
    assert clock.total() >= first + second >= 0


def pool_decoder(mode):
    """Every phase exercised: chain, tree, auto with plain steps and k = 1 probes, a pool that switches."""
    target = BigramLM(successor_table(V, TARGET_NEXT))
    if mode == "tree":
        return SpecDecoder(target, OracleTreeDrafter(plain_output([4], 24), V, depth=4, correct=2), mode="tree",
                           tree=TreeSpec(4, 3, 12))
    if mode == "auto":
        return SpecDecoder(target, {"d": LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 2) % V)))},
                           mode="auto", k=3, auto=AutoSpec(costs=Costs({1: 0.05, 4: 0.2}, 0.01), probe_every=4,
                                                           time_weight=0.0))
    drafters = {n: LlamaDrafter(BigramLM(successor_table(V, f))) for n, f in
                {"right": TARGET_NEXT, "wrong": lambda t: (t + 2) % V}.items()}
    uniform = Selector(make_learner("uniform", 2, seed=3), 2, 3)
    return SpecDecoder(target, drafters, mode="chain", k=3, selector=uniform)


@pytest.mark.parametrize("mode", ["tree", "auto", "pool"])
def test_phase_times_sum_within_the_total(mode):
    dec = pool_decoder(mode)
    out, m = dec.generate([4], 24)
    assert out == plain_output([4], 24)
    times = {f: getattr(m, f) for f in ("select_s", "draft_s", "verify_s", "target_s", "eval_s", "switch_s")}
    assert all(t >= 0 for t in times.values()) and m.total_s > 0
    assert m.select_s + m.draft_s + m.verify_s + m.eval_s <= m.total_s
    assert m.target_s <= m.verify_s and m.switch_s <= m.draft_s and m.verify_s > 0 and m.select_s > 0
    assert m.target_forwards == 1 + len(m.drafted) and len(m.accepted) == len(m.choices)
    if mode == "auto":  # plain steps (k = 0) count as drafted 0, no accepted / choices entries
        assert 0 in m.drafted and len(m.accepted) == m.drafted.count(1) and m.plans.count("plain") > 0
    if mode == "pool":
        assert m.switches > 0 and m.switch_s > 0 and m.draft_s > 0


@pytest.mark.parametrize("mode", ["tree", "auto", "pool"])
def test_timing_off_never_syncs_the_device_and_decodes_the_same(mode, monkeypatch):
    """Timing is an observer: off, the loop calls no device synchronisation at all and keeps no phase times; the
    tokens and every count are those of a timed run."""
    import draftpool.forward.timing as forward_timing
    import specsel.decoding.timing as timing

    syncs = []
    count = lambda device: syncs.append(device)  # noqa: E731
    monkeypatch.setattr(forward_timing, "sync_device", count)
    monkeypatch.setattr(timing, "sync_device", count)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **kw: syncs.append("cuda"))
    runs = {}
    for on in (True, False):
        dec = pool_decoder(mode)
        dec.timing = on
        before = len(syncs)
        runs[on] = dec.generate([4], 24), len(syncs) - before
    (out_on, m_on), synced_on = runs[True]
    (out_off, m_off), synced_off = runs[False]
    assert synced_on > 0 and synced_off == 0
    assert out_off == out_on == plain_output([4], 24)
    assert (m_off.accepted, m_off.choices, m_off.drafted, m_off.plans) == (m_on.accepted, m_on.choices,
                                                                           m_on.drafted, m_on.plans)
    times = ("select_s", "draft_s", "verify_s", "target_s", "eval_s", "switch_s")
    assert all(getattr(m_off, f) == 0.0 for f in times) and m_off.total_s > 0 and m_off.other_s == m_off.total_s


def test_plain_mode_times_only_the_total():
    _, m = SpecDecoder(BigramLM(successor_table(V, TARGET_NEXT)), mode="plain").generate([4], 8)
    assert m.total_s > 0 and m.select_s == m.draft_s == m.verify_s == m.eval_s == 0.0 and m.target_forwards == 8


@pytest.mark.parametrize("drafter_seed", [0, 1])
def test_keyed_sampling_is_plain_keyed_sampling_whatever_drafts(drafter_seed):
    """A seeded request keyed by position: speculative output == plain keyed output with the same seed, token for
    token, for a drafter equal to the target and an unrelated one; another seed gives another answer."""
    table = torch.randn(V, V, generator=torch.Generator().manual_seed(3))
    other = table if drafter_seed == 0 else torch.randn(V, V, generator=torch.Generator().manual_seed(drafter_seed))
    params = SamplingParams(0.9, top_k=8)
    plain = SpecDecoder(BigramLM(table), mode="plain")
    spec = SpecDecoder(BigramLM(table), LlamaDrafter(BigramLM(other.clone())), mode="chain", k=3)
    outs = {}
    for seed in (11, 12):
        want = plain.generate([0], 40, params, seed=seed, keyed=True)[0]
        got, m = spec.generate([0], 40, params, seed=seed, keyed=True)
        assert got == want and len(got) == 40
        outs[seed] = got
        if drafter_seed == 0:  # the drafter draws with the target's noise: every draft accepted
            assert all(a == 3 for a in m.accepted[:-1])
    assert outs[11] != outs[12]


def test_without_the_key_a_seeded_sample_depends_on_the_drafts():
    """Why seeded requests are keyed: rejection sampling's realised answer for one seed changes with the drafter
    (the drafts consume the generator), the keyed answer does not."""
    table = torch.randn(V, V, generator=torch.Generator().manual_seed(3))
    other = torch.randn(V, V, generator=torch.Generator().manual_seed(1))
    params = SamplingParams(0.9, top_k=8)
    decs = [SpecDecoder(BigramLM(table), LlamaDrafter(BigramLM(t.clone())), mode="chain", k=3) for t in (table, other)]
    assert decs[0].generate([0], 40, params, seed=11)[0] != decs[1].generate([0], 40, params, seed=11)[0]
    assert decs[0].generate([0], 40, params, seed=11, keyed=True)[0] == \
        decs[1].generate([0], 40, params, seed=11, keyed=True)[0]
