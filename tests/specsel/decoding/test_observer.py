"""The request's observer: the one writer of its metrics, from every cycle's outcome (`Cycle`), plain steps included;
its phase timing is optional and never synchronises the device when off."""

import pytest
import torch

import specsel.decoding.observer as observer
from specsel.decoding.auto import AutoSpec, Costs
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.observer import PLAIN_STEP, Cycle, Observer
from specsel.decoding.request import spec_counts
from specsel.decoding.timing import PHASES
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import BigramLM, successor_table

V = 16
TARGET_NEXT = lambda t: (t + 1) % V  # noqa: E731
TIMES = {"select_s", "draft_s", "verify_s", "target_s", "eval_s", "switch_s", "total_s", "other_s", "tokens_per_s"}


def test_a_recorded_cycle_fills_the_metrics_and_keeps_the_lists_aligned():
    obs = Observer(timing=False, device=torch.device("cpu"))
    obs.prefilled()
    obs.record(Cycle(0, drafted=4, accepted=3, plan="k=4", swaps=1, selection_s=0.1, work_s=0.5, cycle_s=0.7))
    obs.record(Cycle(0, plain=True, plan="plain", selection_s=0.2, cycle_s=0.3))  # auto's plain step
    obs.record(Cycle(1, drafted=2, accepted=0, plan="k=2", switched=True, catchup=3, selection_s=0.1, cycle_s=0.4))
    obs.record(Cycle(1, drafted=0, accepted=0, selection_s=0.1, cycle_s=0.2))  # drafted nothing: still verified
    m = obs.finish(new_tokens=8)
    assert m.target_forwards == 5 and m.new_tokens == 8 and m.weight_swaps == 1
    assert m.accepted == [3, 0, 0] and m.choices == [0, 1, 1] and m.draft_len == [4, 2, 0]  # verification cycles
    assert m.drafted == [4, 0, 2, 0] and m.plans == ["k=4", "plain", "k=2"]  # plain steps too; planned cycles
    assert m.selection_s == [0.1, 0.2, 0.1, 0.1] and m.cycle_s == [0.7, 0.3, 0.4, 0.2]
    assert m.switches == 1 and type(m.switches) is int and m.catchup_tokens == 3
    counts = spec_counts(m.to_dict(), ["a", "b"])
    assert (counts["a"].num_drafts, counts["a"].num_accepted_tokens, counts["b"].num_drafts) == (1, 3, 1)
    assert all(getattr(m, p) == 0.0 for p in PHASES) and m.total_s > 0 and m.other_s == m.total_s


def test_mode_plains_step_counts_a_target_pass_only():
    obs = Observer(timing=True, device=torch.device("cpu"))
    obs.prefilled()
    for _ in range(3):
        obs.record(PLAIN_STEP)
    m = obs.finish(new_tokens=4)
    assert m.target_forwards == 4 and m.drafted == m.accepted == m.plans == m.selection_s == m.cycle_s == []


@pytest.mark.parametrize("on", [True, False])
def test_phase_timing_is_optional_and_off_never_syncs(on, monkeypatch):
    import specsel.decoding.timing as timing

    syncs = []
    monkeypatch.setattr(timing, "sync_device", syncs.append)
    obs = Observer(timing=on, device=torch.device("cpu"))
    t1 = obs.lap("draft_s")
    t2 = obs.lap("target_s", "verify_s")
    m = obs.finish(new_tokens=1)
    assert t1 <= t2 and len(syncs) == (3 if on else 0)  # two laps and the total
    assert (m.verify_s == m.target_s > 0 and m.draft_s > 0) if on else all(getattr(m, p) == 0.0 for p in PHASES)


def decoder(mode: str) -> SpecDecoder:
    """chain: a pool that switches; auto: plain steps and k = 1 probes; plain: the target alone."""
    target = BigramLM(successor_table(V, TARGET_NEXT))
    if mode == "plain":
        return SpecDecoder(target, mode="plain")
    if mode == "auto":
        return SpecDecoder(target, {"d": LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 2) % V)))},
                           mode="auto", k=3, auto=AutoSpec(costs=Costs({1: 0.05, 4: 0.2}, 0.01), probe_every=4,
                                                           time_weight=0.0))
    drafters = {n: LlamaDrafter(BigramLM(successor_table(V, f))) for n, f in
                {"right": TARGET_NEXT, "wrong": lambda t: (t + 2) % V}.items()}
    return SpecDecoder(target, drafters, mode="chain", k=3,
                       selector=Selector(make_learner("uniform", 2, seed=3), 2, 3))


def spy(monkeypatch, cls, name: str) -> list:
    """The first argument after self of every call of cls.name (still called), in order."""
    calls, real = [], getattr(cls, name)
    monkeypatch.setattr(cls, name, lambda self, c, *a: calls.append(c) or real(self, c, *a))
    return calls


@pytest.mark.parametrize("timing", [True, False])
@pytest.mark.parametrize("mode", ["chain", "auto", "plain"])
def test_every_metric_of_a_request_comes_from_the_outcomes_recorded(mode, timing, monkeypatch):
    """A request's metrics are what its observer made of the outcomes it was given: replayed into a fresh observer,
    the same outcomes give the same metrics (times of the phases and the total aside)."""
    dec = decoder(mode)
    dec.timing = timing
    seen = spy(monkeypatch, Observer, "record")
    out, m = dec.generate([4], 24)
    monkeypatch.undo()
    replay = Observer(timing=False, device=torch.device("cpu"))
    replay.prefilled()
    for c in seen:
        replay.record(c)
    again = replay.finish(len(out))
    assert {k: v for k, v in m.to_dict().items() if k not in TIMES} == \
        {k: v for k, v in again.to_dict().items() if k not in TIMES}
    assert len(seen) == m.target_forwards - 1 and all(type(c) is Cycle for c in seen)
    if mode == "plain":
        assert seen == [PLAIN_STEP] * 23
    if mode == "auto":  # plain steps and probes, each planned
        assert {c.plain for c in seen} == {True, False} and all(c.plan is not None for c in seen)
    if mode == "chain":
        assert any(c.switched for c in seen) and sum(c.catchup for c in seen) == m.catchup_tokens > 0
        assert all(c.cycle_s >= c.selection_s > 0 and c.work_s > 0 for c in seen)


def test_auto_learns_once_per_planned_cycle_from_its_outcome(monkeypatch):
    from specsel.decoding.policy import AutoPolicy

    learned = spy(monkeypatch, AutoPolicy, "learn")
    seen = spy(monkeypatch, Observer, "record")
    decoder("auto").generate([4], 24)
    assert learned == seen and len(seen) > 1


def test_the_outcome_is_light():
    # made every cycle on the hot path: a tuple with named fields, no per-instance dict
    c = Cycle(0)
    assert not hasattr(c, "__dict__") and observer.PLAIN_STEP.plain and PLAIN_STEP.member is None
