"""Step generation on the real target: a batch of prefixes gives each prefix the step greedy plain decoding gives it
(cut after the delimiter token, or at the cap); bad input refused."""

import pytest

from data_gen.domains import domain_prompts
from data_gen.generate import render_prompt, stop_token_ids
from specsel.decoding.loop import SpecDecoder
from specsel.lookahead.generate import generate_steps
from specsel.lookahead.steps import StepCutter, StepSpec


def test_batched_steps_equal_plain_greedy_steps(target):
    model, tok = target
    eos = set(stop_token_ids(tok, model))
    cutter = StepCutter(tok, StepSpec(max_tokens=40))
    base = render_prompt(tok, domain_prompts("math")["held_out"][0]["prompt"])
    plain = SpecDecoder(model, mode="plain", stop_ids=sorted(eos))
    first = cutter.split(plain.generate(base, 40)[0])[0]
    prefixes = [base, base + first, base[:-3]]  # different lengths: left padding at work
    got = generate_steps(model, tok, prefixes, cutter, eos)
    for prefix, step in zip(prefixes, got):
        want = cutter.split(plain.generate(prefix, 40)[0])[0]
        assert step == want
        assert cutter.delimited(step) or len(step) == 40 or step[-1] in eos
    with pytest.raises(ValueError, match="non-empty prefix"):
        generate_steps(model, tok, [base, []], cutter, eos)
