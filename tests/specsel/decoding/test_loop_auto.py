"""mode 'auto' in the decode loop, on fixed-logit stubs with given costs: it speculates with the k the cost model
picks when the drafter pays, decodes plainly (with k = 1 probes) when it does not, switches when the drafter turns
out better than its prior, and stays lossless; bad settings are refused."""

import json

import pytest

import specsel.decoding.costs as cost_model
import specsel.decoding.timing as phase_timing
from draftpool.forward.sampling import SamplingParams
from specsel.decoding.auto import AutoSpec, Costs
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder, SpecError
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import BigramLM, successor_table

V = 16
TARGET_NEXT = lambda t: (t + 1) % V  # noqa: E731
CHEAP_VERIFY = Costs({1: 0.05, 9: 0.052}, 0.002)  # verification almost free: a right drafter should draft k
FIXED = Costs({1: 0.05, 2: 0.07, 4: 0.09, 8: 0.13}, 0.01)  # what a fake measurement returns


def decoder(drafter_next, k=4, **auto):
    """An auto decoder over one drafter "d"; measured cycle times are ignored (time_weight 0) unless a test sets it,
    so no outcome depends on how fast this machine is now."""
    target = BigramLM(successor_table(V, TARGET_NEXT))
    drafter = LlamaDrafter(BigramLM(successor_table(V, drafter_next)))
    return SpecDecoder(target, {"d": drafter}, mode="auto", k=k, auto=AutoSpec(**{"time_weight": 0.0, **auto}))


def fake_measure(monkeypatch):
    """cost_model.measure runs for real (its calls and their states recorded) but returns FIXED."""
    calls = []
    real = cost_model.measure

    def measure(target, drafter, state, *a, **kw):
        calls.append((list(state.tokens), state.prompt_len, real(target, drafter, state, *a, **kw)))
        return FIXED

    monkeypatch.setattr(cost_model, "measure", measure)
    return calls


def plain(prompt, n, params=None, seed=0):
    params = params or SamplingParams()
    return SpecDecoder(BigramLM(successor_table(V, TARGET_NEXT)), mode="plain").generate(prompt, n, params, seed)[0]


def test_a_drafter_that_pays_drafts_the_chosen_k():
    dec = decoder(TARGET_NEXT, k=4, priors={"d": [0.9]}, costs=CHEAP_VERIFY)
    out, m = dec.generate([3, 5], 21)
    assert out == plain([3, 5], 21)
    assert m.drafted == [4] * 4 and m.accepted == [4] * 4 and m.target_forwards == 5


def test_a_drafter_that_does_not_pay_gives_plain_steps_with_probes():
    costs = Costs({1: 0.05, 2: 0.08, 5: 0.12, 10: 0.2}, 0.01)
    dec = decoder(lambda t: (t + 2) % V, k=4, priors={"d": [0.1]}, costs=costs, probe_every=5)
    out, m = dec.generate([3], 30)
    assert out == plain([3], 30)
    assert set(m.drafted) == {0, 1} and m.drafted.count(1) == len(m.drafted) // 5  # a k = 1 probe every 5th
    assert m.target_forwards == 30  # one token per pass, as plain decoding


def test_the_online_estimate_overrides_a_pessimistic_prior():
    dec = decoder(TARGET_NEXT, k=4, priors={"d": [0.05]}, costs=CHEAP_VERIFY, probe_every=2, prior_weight=2)
    out, m = dec.generate([1], 60)
    assert out == plain([1], 60)
    assert m.drafted[0] == 0 and m.drafted[-1] == 4  # starts plain, learns the drafter is always right


def test_no_prior_starts_plain_and_costs_are_measured_once_then_cached(tmp_path, monkeypatch):
    calls = fake_measure(monkeypatch)
    stores = []
    real_store = cost_model.store
    monkeypatch.setattr(cost_model, "store", lambda *a: stores.append(1) or real_store(*a))
    cache = tmp_path / "costs.json"
    dec = decoder(TARGET_NEXT, k=3, costs_cache=str(cache))
    dec.prepare()  # start-up: measured now, on a synthetic prefix (no request's tokens), and cached
    assert len(calls) == len(stores) == 1 and cache.is_file()
    tokens, prompt_len, measured = calls[0]
    assert prompt_len > 1 and len(tokens) == prompt_len + 1
    assert set(measured.target) == {1, 2, 4, 8} and all(t > 0 for t in measured.target.values())
    out, m = dec.generate([2], 12)
    assert out == plain([2], 12) and len(calls) == len(stores) == 1  # nothing measured or written mid-request
    costs = dec.policy.choosers[0, True].base
    assert costs == FIXED
    assert m.plans[0] == "plain"  # no acceptance figures: plain first, probes tell the rest
    dec.generate([4], 12)
    assert dec.policy.choosers[0, True].base is costs and len(calls) == 1
    # a new decoder on the same machine, target and drafter reads the cached costs instead of measuring
    again = decoder(TARGET_NEXT, k=3, costs_cache=str(cache))
    assert again.generate([2], 12)[0] == out and again.policy.choosers[0, True].base == costs and len(calls) == 1
    # another k is another entry, measured before its first request's first token
    decoder(TARGET_NEXT, k=2, costs_cache=str(cache)).generate([2], 6)
    assert len(calls) == 2 and len(json.loads(cache.read_text())) == 2


def test_costs_are_measured_on_a_synthetic_prefix_before_the_first_token(monkeypatch):
    # no prepare() call: generate measures before its prefill, never on the request's own prefix
    calls = fake_measure(monkeypatch)
    dec = decoder(TARGET_NEXT, k=3)
    prompt = [5, 6, 7]
    res = dec.decode(prompt, 10)
    assert res.tokens == plain(prompt, 10) and len(calls) == 1 and calls[0][0][:len(prompt)] != prompt
    assert res.state.tokens[:len(prompt)] == prompt  # the request's state never held the synthetic prefix


def test_drafters_of_one_shape_are_measured_once_without_a_cache_file(monkeypatch):
    # a pool of same-shape drafters under full-information selection: the first drafter used is timed, every other
    # one of that shape (same cost key) reuses its costs, in this decoder and in a second one sharing the AutoSpec
    calls = fake_measure(monkeypatch)
    target = BigramLM(successor_table(V, TARGET_NEXT))
    pool = {n: LlamaDrafter(BigramLM(successor_table(V, lambda t, s=s: (t + s) % V))) for n, s in
            (("a", 3), ("b", 1), ("c", 2))}
    auto = AutoSpec(priors={n: [0.5] for n in pool}, time_weight=0.0)
    for _ in range(2):
        dec = SpecDecoder(target, pool, mode="auto", k=3, auto=auto,
                          selector=Selector(make_learner("normal_hedge", 3), 3, 3))
        assert dec.generate([2], 40)[0] == plain([2], 40)
    assert len(calls) == 1 and len(auto.measured) == 1 and len(dec.policy.choosers) >= 2
    assert set(dec.policy.costs) == {0, 1, 2}  # every member's costs fixed before the first request
    assert all(c.base == FIXED == next(iter(auto.measured.values())) for c in dec.policy.choosers.values())


@pytest.mark.parametrize("timing", [True, False])
def test_measured_cycle_times_turn_a_losing_setting_off(monkeypatch, timing):
    # the model says drafting is free, but each speculative cycle really costs far more than a plain step; the
    # loop's clock (the request observer's, timing.py) is a fake one (each reading 1e-4 s later, a draft 10 ms more),
    # so the outcome depends on no real timing; with timing off auto still learns its cycle times (from the same
    # readings per cycle)
    now = [0.0]

    def clock():
        now[0] += 1e-4
        return now[0]

    monkeypatch.setattr(phase_timing, "perf_counter", clock)
    target = BigramLM(successor_table(V, TARGET_NEXT))
    drafter = LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 2) % V)))
    dec = SpecDecoder(target, {"d": drafter}, mode="auto", k=4, timing=timing,
                      auto=AutoSpec(priors={"d": [0.6]}, costs=Costs({1: 1e-4, 5: 1.1e-4}, 0.0), time_weight=0.5))
    slow = dec.drafters[0].draft_chain

    def draft_chain(k, params, gen):
        now[0] += 0.01
        return slow(k, params, gen)

    dec.drafters[0].draft_chain = draft_chain
    out, m = dec.generate([3], 40)
    assert out == plain([3], 40)
    assert m.drafted[0] == 4 and m.drafted[-8:].count(0) >= 7  # speculation stopped once its time was seen
    assert (m.draft_s > 0) == timing


def test_auto_history_stays_bounded():
    # a chooser lives as long as its decoder (a server's life): what it keeps must not grow with requests or cycles
    dec = decoder(lambda t: (t + 1) % V if t % 3 else (t + 2) % V, k=3, priors={"d": [0.6]}, costs=CHEAP_VERIFY,
                  time_weight=0.1)
    for r in range(6):
        dec.generate([r + 1], 30, SamplingParams(temperature=1.0) if r % 2 else SamplingParams(), seed=r)
    assert set(dec.policy.choosers) == {(0, True), (0, False)} and set(dec.policy.costs) == {0}
    for ch in dec.policy.choosers.values():
        assert len(ch.estimate.drafted) <= 3 and len(ch.estimate.accepted) <= 3 and len(ch.plans) <= 1
        assert all(not isinstance(v, (list, dict)) or len(v) <= 3 for v in vars(ch).values())


@pytest.mark.parametrize("seed", [0, 1])
def test_sampling_is_distribution_exact_per_seed_path(seed):
    # with a drafter equal to the target, every draft is accepted: the output equals plain sampling's
    dec = decoder(TARGET_NEXT, k=3, sampled_priors={"d": [0.9]}, costs=CHEAP_VERIFY)
    params = SamplingParams(temperature=1.0)
    out, m = dec.generate([5], 12, params, seed)
    assert out == plain([5], 12, params, seed) and set(m.drafted) == {3}


def test_greedy_and_sampled_requests_keep_apart_estimates():
    # one decoder serving both (per-request sampling over HTTP): a sampled request starts from the sampled prior
    # and its acceptance never moves the greedy requests' estimate
    dec = decoder(lambda t: (t + 2) % V, k=3, priors={"d": [0.9]}, sampled_priors={"d": [0.0]}, costs=CHEAP_VERIFY)
    out, m = dec.generate([5], 12, SamplingParams(temperature=1.0), 3)
    assert out == plain([5], 12, SamplingParams(temperature=1.0), 3)
    choosers = dec.policy.choosers
    assert set(choosers) == {(0, False)} and m.drafted.count(0) >= 8  # prior 0: plain steps (k = 1 probes)
    before = choosers[0, False].estimate.rates(3)
    dec.generate([5], 12)
    assert set(choosers) == {(0, False), (0, True)} and choosers[0, False].estimate.rates(3) == before
    assert choosers[0, True].estimate.rates(1)[0] < 0.9  # the greedy estimate saw the wrong drafts


def test_auto_under_full_information_selection():
    # two drafters, one always right and one always wrong: NormalHedge (fed plain steps as one-token chunks) settles
    # on the right one, auto drafts k with it, and the output stays plain greedy's
    target = BigramLM(successor_table(V, TARGET_NEXT))
    good = LlamaDrafter(BigramLM(successor_table(V, TARGET_NEXT)))
    bad = LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 3) % V)))
    sel = Selector(make_learner("normal_hedge", 2), 2, 4)
    dec = SpecDecoder(target, {"bad": bad, "good": good}, mode="auto", k=4, selector=sel,
                      auto=AutoSpec(priors={"bad": [0.5], "good": [0.5]}, costs=CHEAP_VERIFY, time_weight=0.0))
    out, m = dec.generate([2], 60)
    assert out == plain([2], 60)
    assert m.choices[-3:] == [1, 1, 1] and m.drafted[-1] == 4 and m.accepted[-2] == 4


def test_bad_auto_settings_refused():
    target = BigramLM(successor_table(V, TARGET_NEXT))
    drafter = LlamaDrafter(BigramLM(successor_table(V, TARGET_NEXT)))
    with pytest.raises(SpecError, match="not in the pool"):
        SpecDecoder(target, {"d": drafter}, mode="auto", auto=AutoSpec(priors={"x": [0.5]}))
    with pytest.raises(SpecError, match="bandit rewards"):
        SpecDecoder(target, {"d": drafter, "e": drafter}, mode="auto",
                    selector=Selector(make_learner("ucb", 2), 2, 4, reward="bd"))
    with pytest.raises(SpecError, match="at most"):
        SpecDecoder(target, {"d": drafter}, mode="auto", k=0)
