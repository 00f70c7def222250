"""Lookahead reasoning rounds on the real target: a drafter that is the target itself has every step accepted and
reproduces plain greedy output; a random drafter has every step rejected, each round commits the target's own step
(plain greedy output again) and leaves a pair whose prompt is exactly the context of that round."""

import pytest

from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.models.llama import build_drafter
from specsel.decoding.loop import SpecDecoder
from specsel.lookahead.generate import StepLM
from specsel.lookahead.judges import ExactJudge
from specsel.lookahead.lookahead import TRANSITION, Budget, LookaheadReasoner, decode_alone
from specsel.lookahead.steps import StepCutter, StepSpec

pytestmark = pytest.mark.tier2  # lookahead decoding on the real target

NEW = 48


@pytest.fixture(scope="module")
def setup(target):
    model, tok = target
    eos = set(stop_token_ids(tok, model))
    prompt = render_prompt(tok, domain_prompts("math")["held_out"][0]["prompt"])
    ref, _ = SpecDecoder(model, mode="plain", stop_ids=sorted(eos)).generate(prompt, NEW)
    return model, tok, eos, prompt, ref


def test_self_drafting_accepts_every_step_and_equals_plain(setup):
    model, tok, eos, prompt, ref = setup
    cutter = StepCutter(tok, StepSpec(max_tokens=40))
    la = LookaheadReasoner(StepLM(model, eos, cutter), StepLM(model, eos, cutter), ExactJudge(), cutter, gamma=3)
    out, m = la.generate(prompt, NEW)
    assert out == ref and m.new_tokens == len(out)
    # every judged step agreed; only a step cut at the cap (unfinished) is rejected, unjudged
    assert sum(m.accepted_steps) >= 2 and m.judge_calls == sum(m.accepted_steps)
    assert all(not cutter.delimited(p.rejected) for p in la.pairs)


def test_a_random_drafter_is_rejected_and_its_pairs_hold_the_exact_context(setup):
    model, tok, eos, prompt, ref = setup
    drafter = build_drafter("llama-tiny", model.config).eval()
    cutter = StepCutter(tok, StepSpec(max_tokens=40))
    la = LookaheadReasoner(StepLM(model, eos, cutter), StepLM(drafter, eos, cutter), ExactJudge(), cutter, gamma=2)
    out, m = la.generate(prompt, NEW)
    assert out == ref and sum(m.accepted_steps) == 0 and len(la.pairs) == m.rounds
    done = list(prompt)
    for pair in la.pairs:  # each round's context is the prompt plus every step committed before it
        assert pair.prompt == done and pair.rejected != pair.chosen
        done += pair.chosen
    assert done[len(prompt):][:NEW] == ref
    with pytest.raises(ValueError, match="gamma"):
        LookaheadReasoner(la.target, la.drafter, ExactJudge(), cutter, gamma=0)


def test_target_alone_equals_plain_and_the_budget_injects_the_transition_once(setup):
    model, tok, eos, prompt, ref = setup
    cutter = StepCutter(tok, StepSpec(max_tokens=40))
    lm = StepLM(model, eos, cutter)
    out, seconds = decode_alone(lm, prompt, NEW)
    assert out == ref and seconds > 0
    transition = tok(TRANSITION, add_special_tokens=False)["input_ids"]
    budget = Budget(16, transition)
    out, _ = decode_alone(lm, prompt, NEW + len(transition), budget)
    at = next(i for i in range(len(out)) if out[i:i + len(transition)] == transition)
    assert at >= 16 and out[:at] == ref[:at]  # injected at the first step boundary past the budget
    assert sum(out[i:i + len(transition)] == transition for i in range(len(out))) == 1
    la = LookaheadReasoner(lm, StepLM(model, eos, cutter), ExactJudge(), cutter, gamma=2, budget=budget)
    long = 2 * NEW + len(transition)
    got, m = la.generate(prompt, long)
    # the reasoner injects at the first round boundary past the budget (a round may commit several steps)
    at = next(i for i in range(len(got)) if got[i:i + len(transition)] == transition)
    assert m.transitions == 1 and at >= 16 and got[:at] == decode_alone(lm, prompt, at)[0]
    with pytest.raises(ValueError, match="transition"):
        Budget(8)
