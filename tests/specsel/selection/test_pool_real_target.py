"""Drafter selection on the real embedded target: output == plain greedy whatever the selector picks, and
full-information selection finds the drafter that knows the answer among EAGLE-3 heads and an independent drafter."""

import pytest

from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.models.llama import build_drafter
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import OracleChainDrafter, SteeredHead, fresh_cache_matches, random_head

pytestmark = pytest.mark.tier2  # selection over pools on the real target

NEW, K = 32, 4


@pytest.fixture(scope="module")
def setup(target, target_info):
    model, tok = target
    heads = [random_head(model, target_info, seed, 2048) for seed in (0, 1)]
    llama = build_drafter("llama-tiny", model.config).eval()
    prompt = render_prompt(tok, domain_prompts("sql")["held_out"][1]["prompt"])
    stops = stop_token_ids(tok, model)
    ref = SpecDecoder(model, mode="plain", stop_ids=stops).generate(prompt, NEW)[0]
    return model, heads, llama, prompt, ref, stops


def pool(setup, correct=3):
    """A head steered to the answer for 1 token, the oracle for `correct`, a random llama, a random head: every
    drafter's counterfactual predictions come from its own state after multi-token accepted chunks."""
    model, heads, llama, prompt, ref, stops = setup
    return {"head-a": SteeredHead(heads[0], ref, 1),
            "oracle": OracleChainDrafter(ref, model.config.vocab_size, correct),
            "llama": LlamaDrafter(llama), "head-b": Eagle3Drafter(heads[1])}


@pytest.mark.parametrize("name,game", [("hedge", GameConfig(level="chunk")),
                                       ("normal_hedge", GameConfig(hybrid=3, token_stride=6, warmup_rounds=2,
                                                                   feedback_every=3)),
                                       ("exp3", None)])
def test_lossless_on_the_real_target(setup, name, game):
    model, _, _, prompt, ref, stops = setup
    dec = SpecDecoder(model, pool(setup), selector=Selector(make_learner(name, 4, seed=0), 4, K, game), k=K,
                      stop_ids=stops)
    res = dec.decode(prompt, NEW)
    out, m = res.tokens, res.metrics
    assert out == ref
    assert m.target_forwards == 1 + len(m.choices)
    assert sum(m.accepted) > 0
    for d in dec.drafters:
        if isinstance(d, Eagle3Drafter) and d.n_real:
            d.sync(res.state)
            assert fresh_cache_matches(d, res.state)


def test_hedgespec_finds_the_drafter_that_knows_the_answer(setup):
    model, _, _, prompt, ref, stops = setup
    sel = Selector(make_learner("normal_hedge", 4, seed=0), 4, K)
    out, m = SpecDecoder(model, pool(setup), selector=sel, k=K, stop_ids=stops).generate(prompt, NEW)
    assert out == ref
    late = m.choices[len(m.choices) // 2:]
    assert late.count(1) / len(late) >= 0.75
    assert m.mat > 2.5 and m.eval_s > 0


def test_tree_mode_pool_of_heads_is_lossless(setup):
    model, heads, _, prompt, ref, stops = setup
    from specsel.decoding.tree import TreeSpec

    drafters = {"a": Eagle3Drafter(heads[0]), "b": Eagle3Drafter(heads[1])}
    sel = Selector(make_learner("normal_hedge", 2, seed=0), 2, 4)
    out, m = SpecDecoder(model, drafters, selector=sel, mode="tree", tree=TreeSpec(4, 4, 16), stop_ids=stops).generate(
        prompt, NEW)
    assert out == ref
