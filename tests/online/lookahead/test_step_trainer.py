"""The step drafter's trainer (Online-LR / OSD-LR) on a tiny Llama with the target's tokenizer: pairs wait until
`round_every` requests came in, then one DPO (or SFT) round trains on all of them and changes the weights; every
n-th pair is held out; the guard publishes a candidate whose held-out step acceptance holds and refuses one that
lowers it (training goes on from the published weights); state round-trips; a token trainer refuses dpo."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from draftpool.pool import Member
from online.lookahead.step_trainer import StepEnv, StepFeedback, StepTrainer, step_acceptance
from online.trainer.config import TrainerConfig
from online.trainer.token_trainer import OnlineTrainer
from specsel.lookahead.accept import PreferencePair
from specsel.lookahead.judges import ExactJudge
from specsel.lookahead.steps import StepCutter, StepSpec

EOS = 0  # tiny models below whose final norm is zeroed emit token 0 only: a complete one-token step


def tiny(seed=0):
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=49152, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                      tie_word_embeddings=False)
    return LlamaForCausalLM(cfg).eval()


def pairs(n, start=0):
    return [PreferencePair([5, 6, 7 + i], [EOS], [100 + i, 200]) for i in range(start, start + n)]


@pytest.fixture
def env(target_info):
    return StepEnv(str(target_info.path), (EOS,), pad_id=2, spec=StepSpec(max_tokens=4), judge="exact")


def cfg(**kw):
    base = dict(updater="dpo", lr=1e-2, epochs=2, round_every=2, pair_batch=4, holdout_every=0, guard_margin=0.0)
    return TrainerConfig(**{**base, **kw})


def test_a_round_waits_for_round_every_requests_then_trains_on_every_buffered_pair(env):
    model = tiny()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tr = StepTrainer([Member("step", "llama", model)], cfg(), env)
    assert tr.round([StepFeedback("a", pairs(3))]) is None and tr.pending == 3
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # nothing trained yet
    losses = tr.round([StepFeedback("b", pairs(2, 3))])
    assert set(losses) == {"step"} and tr.last_pairs == 5 and tr.pending == 0 and tr.rounds == 1
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert tr.round([StepFeedback("c", [])]) is None  # the next round needs two more requests


def test_every_nth_pair_is_held_out(env):
    tr = StepTrainer([Member("step", "llama", tiny())], cfg(holdout_every=3, round_every=10), env)
    tr.round([StepFeedback("a", pairs(7))])
    assert len(tr.holdout) == 2 and tr.pending == 5
    assert [p.prompt[-1] for p in tr.holdout] == [7 + 2, 7 + 5]


def test_the_guard_refuses_a_version_that_lowers_step_acceptance(env, target):
    _, tok = target
    model = tiny()
    with torch.no_grad():
        model.model.norm.weight.zero_()  # logits all 0: the greedy step is [EOS], the held-out target steps
    tr = StepTrainer([Member("step", "llama", model)], cfg(holdout_every=1), env)
    tr.round([StepFeedback("a", pairs(3))])
    cutter = StepCutter(tok, env.spec)
    assert step_acceptance(model, list(tr.holdout), cutter, {EOS}, ExactJudge()) == 1.0
    v = tr.guard("step")
    assert v.ok and v.candidate == v.published == 1.0
    published = {k: v.clone() for k, v in tr.published["step"].items()}
    with torch.no_grad():  # a worse candidate: the norm back, greedy steps no longer [EOS]
        model.model.norm.weight.fill_(1.0)
        model.lm_head.weight[EOS].fill_(-1.0)
    v = tr.guard("step")
    assert not v.ok and v.weights is None and v.candidate < v.published == 1.0 and tr.rejected == 1
    assert all(torch.equal(published[k], v) for k, v in tr.published["step"].items())
    assert torch.equal(model.model.norm.weight, published["model.norm.weight"])  # back to the published weights


def test_state_round_trip_and_token_trainers_refuse_step_updaters(env):
    a = StepTrainer([Member("step", "llama", tiny())], cfg(round_every=1), env)
    a.round([StepFeedback("a", pairs(4))])
    a.guard("step")
    b = StepTrainer([Member("step", "llama", tiny(1))], cfg(round_every=1), env)
    b.load_state(a.state())
    assert b.rounds == 1 and b.updater.rounds == 1
    assert all(torch.equal(v, b.model.get_parameter(k)) for k, v in a.published["step"].items())
    with pytest.raises(ValueError, match="lookahead step drafters"):
        OnlineTrainer([Member("step", "llama", tiny())], cfg())
    with pytest.raises(ValueError, match="one Llama step drafter"):
        StepTrainer([Member("a", "llama", tiny()), Member("b", "llama", tiny())], cfg(), env)
