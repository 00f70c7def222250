"""The online benchmark's replay on a tiny random target: its per-request tables (from the served feedback alone) equal
specsel's acceptance tables (from the target), the feedback is what the live collector packs, and replayed OGD
raises the acceptance of a drafter that keeps seeing the same request."""

import pytest
import torch

from benchmarks.common.online_replay import Item, mat, request_tables, run_method, served_feedback
from benchmarks.replay import acceptance_tables
from draftpool.pool import Member
from online.trainer.config import TrainerConfig
from online.trainer.feedback import FeedbackCollector
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.hooks import Hooks
from specsel.decoding.loop import SpecDecoder
from tests.stubs import make_head, tiny_target

K = 3
PROMPTS = [[5, 17, 33, 2], [9, 9, 40, 41, 7, 100], [60, 61, 62]]


@pytest.fixture(scope="module")
def setup():
    target = tiny_target()
    heads = [make_head(target, s) for s in (1, 2)]
    plain = SpecDecoder(target, None, mode="plain")
    items = [Item(f"r{i}", "x", p, plain.generate(p, 24)[0]) for i, p in enumerate(PROMPTS)]
    return target, heads, items


def test_tables_from_feedback_equal_replay_tables(setup):
    target, heads, items = setup
    members = [Member(f"h{i}", "eagle3", h) for i, h in enumerate(heads)]
    for it in items:
        fb = served_feedback(target, it, [1, 2, 3], top_k=16)
        acc, gamma, _, t_len, *_ = acceptance_tables(target, members, it.prompt_ids, it.answer_ids, K)
        req = request_tables(members, fb, K)
        assert req.length == t_len == len(it.prompt_ids) + len(it.answer_ids)  # plain greedy: nothing cut
        assert torch.equal(req.acc, acc) and torch.equal(req.gamma, gamma)
        only = request_tables(members, fb, K, arms=[1])
        assert torch.equal(only.acc[1], acc[1]) and not only.acc[0].any()


def test_feedback_is_what_the_server_collects(setup):
    target, heads, items = setup
    it = items[1]
    collector = FeedbackCollector(k=16)
    dec = SpecDecoder(target, Eagle3Drafter(heads[0]), mode="chain", k=K, hooks=Hooks(collector=collector))
    collector.start()
    live = collector.finish(it.id, dec.decode(it.prompt_ids, len(it.answer_ids)).state)
    fb = served_feedback(target, it, [1, 2, 3], top_k=16)
    assert torch.equal(live.tokens, fb.tokens) and live.prompt_len == fb.prompt_len
    assert torch.equal(live.target.ids, fb.target.ids)
    torch.testing.assert_close(live.target.logp, fb.target.logp, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(live.feats, fb.feats, atol=1e-4, rtol=1e-4)


def test_replayed_ogd_learns_a_repeated_request(setup):
    target, heads, items = setup
    members = [Member(f"h{i}", "eagle3", h) for i, h in enumerate(heads)]
    fb = served_feedback(target, items[0], [1, 2, 3], top_k=16)
    stream = [fb] * 24
    cfg = TrainerConfig(lr=3e-3, batch=2, holdout_every=0, full_information=True)
    before = {n: p.clone() for n, p in heads[0].named_parameters()}
    static = run_method("static", members, stream, None, 0, K)
    ogd = run_method("ogd", members, stream, cfg, 0, K, keep_at=23)
    assert ogd["rounds"] == 12 and static["rounds"] == 0
    assert mat(static, 0, 24) == mat(static, 20, 24)  # nothing changes without a trainer
    assert mat(ogd, 20, 24) > mat(ogd, 0, 4)  # the served drafter got better at this request
    changed = ogd["weights"]["h1"]  # full information: the unserved drafter learned too
    assert any(not torch.equal(v, heads[1].get_parameter(k)) for k, v in changed.items())
    assert all(torch.equal(p, before[n]) for n, p in heads[0].named_parameters())  # the replay trained copies


def test_replay_records_vocabulary_swaps_coverage_and_ensemble_weights(setup):
    target, heads, items = setup
    members = [Member(f"h{i}", "eagle3", h) for i, h in enumerate(heads)]
    fb = served_feedback(target, items[1], [1, 2, 3], top_k=16)
    stream = [fb] * 26
    emb = target.get_output_embeddings().weight.detach()
    cfg = TrainerConfig(lr=3e-3, batch=2, holdout_every=0, full_information=True, vocab_every=2, vocab_min_count=1)
    out = run_method("ogd-vocab", members, stream, cfg, 0, K, keep_at=25, out_embed=emb)
    answer = fb.tokens[fb.prompt_len:]
    before = {f"h{i}": float(h.t2d[answer].float().mean()) for i, h in enumerate(heads)}  # token-weighted
    assert min(before.values()) < 1  # the random heads miss some of this answer's tokens
    static = run_method("static", members, stream[:25], None, 0, K)
    assert static["coverage"] == [pytest.approx(before)]  # after 25 requests, vocabularies unchanged
    assert all(out["vocab_swaps"][m.name] > 0 for m in members)
    assert out["coverage"][0]["h0"] > before["h0"] and out["coverage"][0]["h1"] > before["h1"]
    w = out["weights"]["h0"]  # the kept version carries its own vocabulary, covering the answer now
    assert bool(w["t2d"][answer].all()) and not torch.equal(w["d2t"], heads[0].d2t)
    ens = run_method("ensemble", members, stream[:8], TrainerConfig(updater="ensemble", batch=2, holdout_every=0),
                     0, K)
    assert len(ens["ensemble_p"]) == 4 and all(sum(p["h0"]) == pytest.approx(1) for p in ens["ensemble_p"])
