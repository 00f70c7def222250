"""The in-process online trainer: who learns from a request, held-out records, and the acceptance guard."""

import copy

import pytest
import torch

from online.feedback import FeedbackCollector
from online.trainer import OnlineTrainer, TrainerConfig, held_out_acceptance, trainable
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from tests.stubs import make_head, tiny_target


@pytest.fixture(scope="module")
def tiny():
    target = tiny_target()
    return target, [make_head(target, 1), make_head(target, 2)]


def serve(target, drafter, prompts, served_by, k=16):
    dec = SpecDecoder(target, drafter, mode="chain", k=3)
    dec.collector = FeedbackCollector(k=k)
    out = []
    for i, p in enumerate(prompts):
        dec.collector.start()
        dec.generate(p, 16)
        out.append(dec.collector.finish(f"r{i}", dec.state, drafter=served_by))
    return out


def changed(before, after):
    return any(not torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("full_information", [False, True])
def test_served_drafter_or_whole_pool_learns(tiny, full_information):
    target, heads = tiny
    models = {"a": ("eagle3", heads[0]), "b": ("eagle3", heads[1])}
    tr = OnlineTrainer(models, TrainerConfig(lr=1e-2, full_information=full_information, holdout_every=0))
    batch = serve(target, Eagle3Drafter(heads[0]), [[1, 2, 3], [4, 5, 6, 7]], served_by=0)
    losses = tr.round(batch)
    assert set(losses) == ({"a", "b"} if full_information else {"a"})
    assert changed(trainable(heads[0]), tr.candidate("a"))
    assert changed(trainable(heads[1]), tr.candidate("b")) == full_information
    assert not changed(trainable(heads[0]), trainable(heads[0]))  # the modules themselves are never written


def test_held_out_records_are_not_trained_on(tiny):
    target, heads = tiny
    tr = OnlineTrainer({"a": ("eagle3", heads[0])}, TrainerConfig(holdout_every=2))
    batch = serve(target, Eagle3Drafter(heads[0]), [[1, 2], [3, 4], [5, 6]], served_by=0)
    tr.round(batch[:2])  # the second record is held out
    assert len(tr.holdout) == 1 and tr.holdout[0].request_id == "r1"


def test_guard_rejects_a_version_that_loses_acceptance(tiny):
    target, _ = tiny
    twin = copy.deepcopy(target)  # drafts exactly what the target says: acceptance 1 on held-out records
    tr = OnlineTrainer({"twin": ("llama", twin)}, TrainerConfig(holdout_every=1, guard_margin=0.05))
    tr.round(serve(target, LlamaDrafter(twin), [[1, 2, 3], [9, 8]], served_by=0))
    ok, acc, last = tr.guard("twin")
    assert last == 1.0 and ok  # nothing trained yet (all held out): the candidate equals the published weights
    with torch.no_grad():
        for v in tr.updaters["twin"].params.values():
            v.add_(torch.randn_like(v) * 5)  # a broken update
    ok, acc, last = tr.guard("twin")
    assert not ok and acc < 0.95 and last == 1.0 and tr.rejected == 1
    # the published weights' acceptance is cached per held-out set: it equals a fresh measurement
    assert last == held_out_acceptance("llama", twin, tr.published["twin"], list(tr.holdout))
    tr.round(serve(target, LlamaDrafter(twin), [[4, 4, 5]], served_by=0))  # a new held-out record: re-measured
    assert tr._published_acc["twin"][0] == tr.holdout_changes - 1
    tr.guard("twin")
    assert tr._published_acc["twin"] == (tr.holdout_changes,
                                         held_out_acceptance("llama", twin, tr.published["twin"], list(tr.holdout)))


def test_bad_config():
    with pytest.raises(ValueError, match="updater"):
        TrainerConfig(updater="adamw").validate()
    with pytest.raises(ValueError, match="positions"):
        TrainerConfig(positions="some").validate()
    with pytest.raises(ValueError, match="epochs"):
        TrainerConfig(epochs=0).validate()


@pytest.mark.parametrize("prompt,new", [([1], 1), ([1, 2], 1), ([1], 2)])
def test_feedback_shorter_than_the_ttt_steps_trains(tiny, prompt, new):
    # prompt + output of 2-3 tokens, 3 training-time-test steps: steps past the end give no loss, not an IndexError
    target, heads = tiny
    head = copy.deepcopy(heads[0])
    dec = SpecDecoder(target, Eagle3Drafter(head), mode="chain", k=3)
    dec.collector = FeedbackCollector(k=16)
    dec.collector.start()
    dec.generate(prompt, new)
    fb = dec.collector.finish("short", dec.state, drafter=0)
    assert len(fb.tokens) == len(prompt) + new <= 3
    tr = OnlineTrainer({"a": ("eagle3", head)}, TrainerConfig(lr=1e-2, steps=3, holdout_every=2))
    losses = tr.round([fb, fb])  # the second is held out: the guard measures it
    assert set(losses) == {"a"} and torch.isfinite(torch.tensor(losses["a"]))
    ok, acc, last = tr.guard("a")
    assert ok and acc == last == 0.0  # 0.0 when the record has no position to measure, never NaN
    assert all(torch.isfinite(v).all() for v in tr.candidate("a").values())


@pytest.mark.parametrize("updater", ["ogd", "optimistic", "ensemble"])
def test_trainer_state_loads_with_weights_only(tiny, tmp_path, updater):
    # a resumed trainer_state.pt is loaded with weights_only=True: the state must hold nothing else
    from online.versions import load_trainer_state

    target, heads = tiny
    head = copy.deepcopy(heads[0])
    fb = serve(target, Eagle3Drafter(head), [[1, 2, 3]], served_by=0)[0]
    tr = OnlineTrainer({"a": ("eagle3", head)}, TrainerConfig(updater=updater, holdout_every=0, vocab_every=1),
                       target.get_output_embeddings().weight.detach())
    tr.round([fb])
    tr.guard("a")
    torch.save(tr.state(), tmp_path / "trainer_state.pt")
    state = load_trainer_state(tmp_path / "trainer_state.pt")
    fresh = OnlineTrainer({"a": ("eagle3", copy.deepcopy(heads[0]))},
                          TrainerConfig(updater=updater, holdout_every=0, vocab_every=1),
                          target.get_output_embeddings().weight.detach())
    fresh.load_state(state)
    assert fresh.rounds == 1 and all(torch.equal(v, tr.candidate("a")[k]) for k, v in fresh.candidate("a").items())
