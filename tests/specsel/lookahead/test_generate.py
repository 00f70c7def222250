"""Step generation on the real target with a kept cache: a batch of suffixes after a synced context gives each prefix
the step greedy plain decoding gives it (cut after the delimiter token, or at the cap); a single row continues on
the kept cache and a later sync to a diverging context re-uses only the common prefix; bad input refused."""

import pytest

from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from specsel.decoding.loop import SpecDecoder
from specsel.lookahead.generate import StepLM
from specsel.lookahead.steps import StepCutter, StepSpec

pytestmark = pytest.mark.tier2  # lookahead step generation on the real target


@pytest.fixture(scope="module")
def setup(target):
    model, tok = target
    eos = set(stop_token_ids(tok, model))
    cutter = StepCutter(tok, StepSpec(max_tokens=40))
    base = render_prompt(tok, domain_prompts("math")["held_out"][0]["prompt"])
    plain = SpecDecoder(model, mode="plain", stop_ids=sorted(eos))

    memo = {}

    def want(prefix):  # greedy decoding is deterministic: a prefix asked for again (the tests share several) is
        key = tuple(prefix)  # decoded once
        if key not in memo:
            memo[key] = cutter.split(plain.generate(prefix, 40)[0])[0]
        return list(memo[key])

    return model, eos, cutter, base, want


def test_batched_rows_equal_plain_greedy_steps(setup):
    model, eos, cutter, base, want = setup
    first = want(base)
    lm = StepLM(model, eos, cutter)
    lm.sync(base)
    suffixes = [[], first, first[:3]]  # different lengths: pads between the context and each row's tokens
    got = lm.steps(suffixes)
    for suffix, step in zip(suffixes, got):
        assert step == want(base + suffix)
        assert cutter.delimited(step) or len(step) == 40 or step[-1] in eos
    assert lm.ids == base  # a batch works on a copy of the cache
    asked = []
    cut = lm.steps(suffixes, keep=lambda i, step: asked.append(i) or i != 0)  # row 0 judged useless
    assert cut[0] == got[0] and 0 in asked
    for i in (1, 2):  # cancelled when row 0 completed: unfinished prefixes of their steps, never judged
        assert cut[i] == got[i][:len(cut[i])] and (len(cut[i]) < len(got[i]) or i in asked)


def test_single_row_continues_on_the_kept_cache_and_resyncs(setup):
    model, eos, cutter, base, want = setup
    lm = StepLM(model, eos, cutter)
    lm.sync(base)
    s0 = lm.steps([[]])[0]
    assert s0 == want(base) and lm.ids == base + s0
    assert lm.cache.get_seq_length() == len(lm.ids) - 1
    s1 = lm.steps([[]])[0]
    assert s1 == want(base + s0)
    lm.sync(base[:-2] + [base[-1]])  # diverges inside the kept context: only the common prefix is kept
    assert lm.cache.get_seq_length() == len(base) - 2
    assert lm.steps([[]])[0] == want(base[:-2] + [base[-1]])
    with pytest.raises(ValueError, match="non-empty prefix"):
        lm.sync([])
    with pytest.raises(ValueError, match="sync the context"):
        StepLM(model, eos, cutter).steps([[]])
