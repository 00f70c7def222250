"""The in-process online trainer: who learns from a request, held-out records, and the acceptance guard."""

import copy

import pytest
import torch

from draftpool.pool import Member
from online.trainer.config import TrainerConfig
from online.trainer.feedback import FeedbackCollector
from online.trainer.token_trainer import OnlineTrainer, held_out_acceptance, trainable
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.hooks import Hooks
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from tests.stubs import make_head, tiny_target


@pytest.fixture(scope="module")
def tiny():
    target = tiny_target()
    return target, [make_head(target, 1), make_head(target, 2)]


def serve(target, drafter, prompts, served_by, k=16):
    collector = FeedbackCollector(k=k)
    dec = SpecDecoder(target, drafter, mode="chain", k=3, hooks=Hooks(collector=collector))
    out = []
    for i, p in enumerate(prompts):
        collector.start()
        out.append(collector.finish(f"r{i}", dec.decode(p, 16).state, drafter=served_by))
    return out


def changed(before, after):
    return any(not torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("full_information", [False, True])
def test_served_drafter_or_whole_pool_learns(tiny, full_information):
    target, heads = tiny
    models = [Member("a", "eagle3", heads[0]), Member("b", "eagle3", heads[1])]
    tr = OnlineTrainer(models, TrainerConfig(lr=1e-2, full_information=full_information, holdout_every=0))
    batch = serve(target, Eagle3Drafter(heads[0]), [[1, 2, 3], [4, 5, 6, 7]], served_by=0)
    losses = tr.round(batch)
    assert set(losses) == ({"a", "b"} if full_information else {"a"})
    assert changed(trainable(heads[0]), tr.candidate("a"))
    assert changed(trainable(heads[1]), tr.candidate("b")) == full_information
    assert not changed(trainable(heads[0]), trainable(heads[0]))  # the modules themselves are never written


def test_held_out_records_are_not_trained_on(tiny):
    target, heads = tiny
    tr = OnlineTrainer([Member("a", "eagle3", heads[0])], TrainerConfig(holdout_every=2))
    batch = serve(target, Eagle3Drafter(heads[0]), [[1, 2], [3, 4], [5, 6]], served_by=0)
    tr.round(batch)  # the first record and every second after it are held out: the guard has rows at once
    assert [fb.request_id for fb in tr.holdout] == ["r0", "r2"]


def twin_trainer(target, **cfg):
    """A Llama drafter equal to the target (acceptance 1 on any held-out record), its trainer and feedback."""
    twin = copy.deepcopy(target)
    tr = OnlineTrainer([Member("twin", "llama", twin)], TrainerConfig(**cfg))
    return twin, tr, lambda prompts: serve(target, LlamaDrafter(twin), prompts, served_by=0)


def break_candidate(tr, scale):
    with torch.no_grad():
        for v in tr.updaters["twin"].params.values():
            v.add_(torch.randn_like(v, generator=torch.Generator().manual_seed(0)) * scale)


def test_the_guard_never_publishes_blind(tiny):
    """Before any round there is nothing to judge a version on: nothing is published (the server keeps the offline
    drafter); the guard once published every round until its first held-out record."""
    target, _ = tiny
    _, tr, fb = twin_trainer(target, holdout_every=10, lr=1e-2)
    v = tr.guard("twin")
    assert v.action == "hold" and v.weights is None and "no held-out" in v.reason
    _, off, _ = twin_trainer(target, holdout_every=0)  # asked for no guard: every candidate goes out
    assert off.guard("twin").ok


def test_the_guard_judges_a_round_s_starting_weights_on_its_new_records(tiny):
    """Prequential: the weights a round starts from are judged on that round's records (never trained on by any
    version compared) before the update; they are published a round later."""
    target, _ = tiny
    _, tr, fb = twin_trainer(target, holdout_every=10, guard_margin=0.05, lr=1e-2)
    tr.round(fb([[1, 2, 3], [9, 8], [4, 4, 5]]))  # the first record held out, two trained on
    assert [f.request_id for f in tr.rows] == ["r1", "r2", "r0"]  # the round's new records, then the held-out one
    before = {k: v.clone() for k, v in tr.guards["twin"].offline.items()}
    assert all(torch.equal(tr.judged["twin"][k], before[k]) for k in before)  # the weights before the update
    assert changed(tr.judged["twin"], tr.candidate("twin"))
    assert tr.guard("twin").ok


def test_a_rollback_restarts_training_from_the_best_version(tiny):
    """The guard's rules on real feedback (their arithmetic: tests/online/trainer/test_guard.py): a broken version is
    held back; a served version that fell behind the offline one is replaced by it, and the updater restarts there."""
    target, _ = tiny
    _, tr, fb = twin_trainer(target, holdout_every=1, guard_margin=0.05)  # every record held out: nothing trains
    tr.round(fb([[1, 2, 3], [9, 8]]))
    v = tr.guard("twin")
    assert v.ok and v.candidate == v.best == 1.0  # the offline weights
    offline = {k: p.clone() for k, p in tr.guards["twin"].offline.items()}
    break_candidate(tr, 5.0)
    tr.round(fb([[4, 4, 5]]))
    v = tr.guard("twin")
    assert v.action == "hold" and v.candidate < 0.95 and v.published == v.best == 1.0 and tr.rejected == 1
    tr.guards["twin"].published = {k: p + 5 * torch.randn_like(p) for k, p in offline.items()}  # served: broken
    tr.round(fb([[6, 7]]))
    v = tr.guard("twin")
    assert v.action == "rollback" and v.published < 0.95 and v.best == 1.0 and tr.guards["twin"].rollbacks == 1
    assert all(torch.equal(v.weights[k], offline[k]) for k in offline)
    assert all(torch.equal(tr.candidate("twin")[k], offline[k]) for k in offline)  # the updater starts from it
    tr.round(fb([[2, 3]]))
    assert tr.guard("twin").ok  # and the weights it starts from are published again


def test_a_restarted_trainer_guards_with_its_rows_and_versions(tiny):
    """The held-out records and the guard's offline / best / published versions are in the trainer state: a
    restarted trainer judges against the offline drafter and its old rows (it once started with no rows and
    published blind)."""
    target, _ = tiny
    _, tr, fb = twin_trainer(target, holdout_every=1, guard_margin=0.05)
    tr.round(fb([[1, 2, 3], [9, 8]]))
    assert tr.guard("twin").ok
    twin2, fresh, _ = twin_trainer(target, holdout_every=1, guard_margin=0.05)
    fresh.load_state(tr.state())
    assert [f.request_id for f in fresh.holdout] == [f.request_id for f in tr.holdout]
    assert all(torch.equal(a.tokens, b.tokens) and torch.equal(a.target.logp, b.target.logp)
               for a, b in zip(fresh.holdout, tr.holdout))
    for role in ("offline", "best", "published"):
        assert all(torch.equal(getattr(fresh.guards["twin"], role)[k], v)
                   for k, v in getattr(tr.guards["twin"], role).items())
    break_candidate(fresh, 5.0)
    fresh.round([])  # a round with no new record: judged on the resumed held-out rows alone
    v = fresh.guard("twin")
    assert not v.ok and v.weights is None and v.best == 1.0
    assert held_out_acceptance("llama", twin2, fresh.guards["twin"].published, list(fresh.holdout)) == 1.0


def test_bfloat16_precision_autocasts_the_loss_and_keeps_fp32_weights(tiny):
    """trainer.precision=bfloat16: the same weights on the same records give another loss (the forward ran in bf16,
    within a few percent of fp32's), the round still trains, and what it publishes stays fp32."""
    target, heads = tiny
    batch = serve(target, Eagle3Drafter(heads[0]), [[1, 2, 3], [4, 5, 6, 7]], served_by=0)
    losses = {}
    for precision in ("float32", "bfloat16", "float32"):
        tr = OnlineTrainer([Member("a", "eagle3", heads[0])],
                           TrainerConfig(lr=1e-2, holdout_every=0, precision=precision))
        loss = float(tr.loss("a", tr.updaters["a"].params, batch).detach())
        assert losses.setdefault(precision, loss) == loss  # fp32 twice: the same loss
        tr.round(batch)
        cand = tr.candidate("a")
        assert changed(trainable(heads[0]), cand) and all(v.dtype == torch.float32 for v in cand.values())
    assert losses["bfloat16"] != losses["float32"]
    assert abs(losses["bfloat16"] - losses["float32"]) < 0.05 * losses["float32"]


def test_bad_config():
    with pytest.raises(ValueError, match="precision"):
        TrainerConfig(precision="float16").validate()
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
    collector = FeedbackCollector(k=16)
    dec = SpecDecoder(target, Eagle3Drafter(head), mode="chain", k=3, hooks=Hooks(collector=collector))
    collector.start()
    fb = collector.finish("short", dec.decode(prompt, new).state, drafter=0)
    assert len(fb.tokens) == len(prompt) + new <= 3
    tr = OnlineTrainer([Member("a", "eagle3", head)], TrainerConfig(lr=1e-2, steps=3, holdout_every=2))
    losses = tr.round([fb, fb])  # the second is held out: the guard measures it
    assert set(losses) == {"a"} and torch.isfinite(torch.tensor(losses["a"]))
    v = tr.guard("a")
    assert v.ok and v.candidate == v.best == 0.0  # 0.0 when the record has no position to measure, never NaN
    assert all(torch.isfinite(v).all() for v in tr.candidate("a").values())


@pytest.mark.parametrize("updater", ["ogd", "optimistic", "ensemble"])
def test_trainer_state_loads_with_weights_only(tiny, tmp_path, updater):
    # a resumed trainer_state.pt is loaded with weights_only=True: the state must hold nothing else
    from online.trainer.versions import load_trainer_state

    target, heads = tiny
    head = copy.deepcopy(heads[0])
    fb = serve(target, Eagle3Drafter(head), [[1, 2, 3]], served_by=0)[0]
    tr = OnlineTrainer([Member("a", "eagle3", head)], TrainerConfig(updater=updater, holdout_every=0, vocab_every=1),
                       target.get_output_embeddings().weight.detach())
    tr.round([fb])
    tr.guard("a")
    torch.save(tr.state(), tmp_path / "trainer_state.pt")
    state = load_trainer_state(tmp_path / "trainer_state.pt")
    fresh = OnlineTrainer([Member("a", "eagle3", copy.deepcopy(heads[0]))],
                          TrainerConfig(updater=updater, holdout_every=0, vocab_every=1),
                          target.get_output_embeddings().weight.detach())
    fresh.load_state(state)
    assert fresh.rounds == 1 and all(torch.equal(v, tr.candidate("a")[k]) for k, v in fresh.candidate("a").items())


def test_a_resting_round_measures_the_served_version_and_trains_nothing(tiny):
    """trainer.pay_patience: after that many trained rounds whose weights never beat the best known version, a round
    only measures what is served on its fresh records (no update, nothing for the guard); patience 0 trains every
    round."""
    target, _ = tiny
    _, tr, fb = twin_trainer(target, holdout_every=10, lr=1e-3, pay_patience=2, pay_max_rest=4)
    records = fb([[1, 2, 3], [9, 8], [4, 4, 5], [6, 7], [2, 2], [5, 1]])
    events = []
    for i in range(6):
        before = {k: v.clone() for k, v in tr.candidate("twin").items()}
        losses = tr.round(records[i:i + 1])
        for name in losses:
            tr.guard(name)
        events.append(tr.round_event()["trained"])
        assert changed(before, tr.candidate("twin")) == (bool(losses) and i > 0)  # round 0: its record held out
    # the twin is already perfect: no round can beat it; 2 dry rounds, then one in 2, then one in 4
    assert events == [True, True, False, True, False, False]
    assert tr.schedule.level == 1.0 and tr.rounds == 6 and tr.schedule.trained == 3
    _, always, fb = twin_trainer(target, holdout_every=10, pay_patience=0)
    for i in range(6):
        assert always.round(records[i:i + 1]) or i == 0
        always.guard("twin")


def test_a_round_that_gains_keeps_the_trainer_training(tiny):
    target, _ = tiny
    _, tr, fb = twin_trainer(target, holdout_every=10, pay_patience=1)
    records = fb([[1, 2, 3], [9, 8], [4, 4, 5]])
    tr.round(records[:1])
    tr.guard("twin")
    tr.gained = True  # as the guard sets it when a round's weights beat the best known version
    assert tr.round(records[1:2]) and tr.round_event()["trained"]
    tr.guard("twin")  # a perfect twin gains nothing: with patience 1 the next round rests
    assert tr.round(records[2:]) == {} and not tr.round_event()["trained"]


@pytest.mark.parametrize("candidate,best,offline,gained", [(0.70, 0.65, 0.60, True), (0.61, 0.605, 0.60, False),
                                                           (0.70, 0.72, 0.60, False)])
def test_a_gain_is_a_new_best_version_clear_of_the_offline_one(tiny, monkeypatch, candidate, best, offline, gained):
    """trainer.pay_min_gain (0.02 here): a round's weights gain when they beat the best known version and the offline
    one by the margin; a new best within the margin of the offline version is noise on the guard's rows."""
    from online.trainer.guard import Verdict

    target, _ = tiny
    _, tr, fb = twin_trainer(target, holdout_every=10, pay_min_gain=0.02)
    tr.round(fb([[1, 2, 3], [9, 8]]))
    verdict = Verdict("publish", tr.candidate("twin"), candidate, best, best, offline=offline)
    monkeypatch.setattr(tr.guards["twin"], "check", lambda *a, **k: verdict)
    tr.guard("twin")
    assert tr.gained is gained
