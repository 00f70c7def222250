"""Exactness on the real embedded target: speculative greedy output == plain greedy output, token for token."""

import copy

import pytest
import torch

from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.forward.sampling import SamplingParams
from draftpool.models.eagle3 import Eagle3Head, default_aux_layers, head_config, select_draft_vocab
from draftpool.models.llama import build_drafter
from specsel.decoding import costs as cost_model
from specsel.decoding.auto import TREE_GRID, AutoSpec, Costs
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import ReducedPrecisionWarning, SpecDecoder
from specsel.decoding.tree import TreeSpec
from tests.stubs import OracleTreeDrafter, SteeredHead, fresh_cache_matches

pytestmark = pytest.mark.tier2  # exactness on the real target

NEW = 16  # tokens per decode: the steered heads still accept their full chains and tree paths over several cycles


@pytest.fixture(scope="module")
def setup(target, target_info):
    model, tok = target
    torch.manual_seed(0)
    head = Eagle3Head(head_config(model.config, 2048, default_aux_layers(target_info.num_layers)))
    d2t, t2d = select_draft_vocab(torch.arange(target_info.vocab_size, 0, -1).float(), 2048)  # low ids = common
    head.d2t.copy_(d2t)
    head.t2d.copy_(t2d)
    head.embed_tokens.weight.data.copy_(model.get_input_embeddings().weight)
    llama = build_drafter("llama-tiny", model.config).eval()
    prompts = {d: render_prompt(tok, domain_prompts(d)["held_out"][0]["prompt"]) for d in ("sql", "python", "math")}
    stops = stop_token_ids(tok, model)
    refs = {d: SpecDecoder(model, mode="plain", stop_ids=stops).generate(p, NEW)[0] for d, p in prompts.items()}
    return model, head.eval(), llama, prompts, refs, stops


@pytest.mark.parametrize("domain", ["sql", "python", "math"])
def test_chain_and_tree_equal_plain_greedy(setup, domain):
    """A random head and a random independent drafter (every draft rejected), and the same head steered to the answer
    (long chains and tree paths accepted through the head's real feature and cache bookkeeping)."""
    model, head, llama, prompts, refs, stops = setup
    steered = [SteeredHead(head, refs[domain], correct=c) for c in (3, 2)]
    for dec in (SpecDecoder(model, Eagle3Drafter(head), mode="chain", k=4, stop_ids=stops),
                SpecDecoder(model, Eagle3Drafter(head), mode="tree", tree=TreeSpec(4, 4, 16), stop_ids=stops),
                SpecDecoder(model, LlamaDrafter(llama), mode="chain", k=3, stop_ids=stops),
                SpecDecoder(model, steered[0], mode="chain", k=4, stop_ids=stops),
                SpecDecoder(model, steered[1], mode="tree", tree=TreeSpec(4, 4, 16), stop_ids=stops)):
        res = dec.decode(prompts[domain], NEW)
        out, m = res.tokens, res.metrics
        assert out == refs[domain], (dec.mode, dec.drafters[0].kind)
        assert m.target_forwards == 1 + len(m.accepted)
        if isinstance(dec.drafters[0], SteeredHead):
            assert max(m.accepted) == dec.drafters[0].correct and m.mat > 2
            dec.drafters[0].sync(res.state)
            assert fresh_cache_matches(dec.drafters[0], res.state)  # chunk by chunk == one prefill


@pytest.mark.parametrize("correct", [3, 6])
def test_long_accepted_tree_paths_stay_exact(setup, correct):
    """An oracle tree (true path hidden among decoys) makes the real target accept long paths: the compacted
    cache must keep decoding exact."""
    model, _, _, prompts, refs, stops = setup
    drafter = OracleTreeDrafter(refs["sql"], model.config.vocab_size, depth=6, correct=correct)
    dec = SpecDecoder(model, drafter, mode="tree", tree=TreeSpec(6, 3, 18), stop_ids=stops)
    out, m = dec.generate(prompts["sql"], NEW)
    assert out == refs["sql"]
    assert max(m.accepted) == correct


def test_sampling_with_self_drafting_is_the_targets_own_sampler(setup):
    """With the target drafting for itself, p == q: every draft is accepted, and the output is a valid sample."""
    model, _, _, prompts, _, stops = setup
    dec = SpecDecoder(model, LlamaDrafter(model), mode="chain", k=3, stop_ids=stops)
    out, m = dec.generate(prompts["python"], 12, SamplingParams(0.8, top_p=0.95), seed=3)
    assert len(out) == 12 or out[-1] in stops
    assert all(a == 3 for a in m.accepted[:-1])


def test_keyed_sampling_equals_plain_keyed_sampling_whoever_drafts(setup):
    """A seeded request keyed by position on the real target: the EAGLE-3 head's and the target's own drafts give
    plain keyed sampling's answer, token for token (the self-drafting one with every draft accepted)."""
    model, head, _, prompts, _, stops = setup
    params = SamplingParams(0.8, top_p=0.95)
    want = SpecDecoder(model, mode="plain", stop_ids=stops).generate(prompts["sql"], NEW, params, seed=9,
                                                                      keyed=True)[0]
    for drafter in (Eagle3Drafter(head), LlamaDrafter(model)):
        dec = SpecDecoder(model, drafter, mode="chain", k=3, stop_ids=stops)
        out, m = dec.generate(prompts["sql"], NEW, params, seed=9, keyed=True)
        assert out == want, type(drafter).__name__
    assert all(a == 3 for a in m.accepted[:-1])  # the target drafting for itself with the same noise


def test_bfloat16_transformers_forward_warns_and_follows_the_bf16_targets_argmax_up_to_near_ties(setup, target16):
    """Through the transformers forward bf16 is not batch-invariant: a 5-token verification pass rounds differently
    from one-token steps, so speculative output can leave plain bf16 output at a near-tie (measured: most 128-token SQL
    answers do). What holds: the decoder says so (ReducedPrecisionWarning; none in fp32 or for plain decoding), and
    every emitted token is the bf16 target's argmax at its position up to a near-tie (one full-sequence pass as the
    judge: within 0.5 of the top). The lean forward's exact bf16 chains: tests/specsel/decoding/test_lean.py."""
    import copy
    import warnings

    from specsel.decoding.auto import AutoSpec, Costs

    model, head, _, prompts, refs, stops = setup
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReducedPrecisionWarning)
        SpecDecoder(model, Eagle3Drafter(head), mode="chain", k=4, stop_ids=stops, backend="hf")  # fp32: silent
    model16, head16 = target16[0], copy.deepcopy(head).to(torch.bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReducedPrecisionWarning)
        ref, _ = SpecDecoder(model16, mode="plain", stop_ids=stops, backend="hf").generate(prompts["sql"], NEW)
    cheap = AutoSpec(priors={"drafter": [0.9]}, costs=Costs({1: 0.05, 9: 0.051}, 0.001), time_weight=0.0)
    for mode, kw in (("chain", {}), ("auto", {"auto": cheap}), ("tree", {"tree": TreeSpec(4, 4, 16)})):
        with pytest.warns(ReducedPrecisionWarning, match="not token-exact"):
            dec = SpecDecoder(model16, SteeredHead(head16, ref, correct=3), mode=mode, k=4, stop_ids=stops,
                              backend="hf", **kw)
        out, m = dec.generate(prompts["sql"], NEW)
        assert max(m.accepted) >= 2 and not dec.token_exact
        ids = torch.tensor([prompts["sql"] + out])
        with torch.inference_mode():
            logits = model16(ids).logits[0, len(prompts["sql"]) - 1:-1].float()  # [len(out), V]
        gap = logits.max(-1).values - logits[torch.arange(len(out)), torch.tensor(out)]
        assert float(gap.max()) <= 0.5, (mode, gap.max())  # two bf16 ulps at logits of 32-64


def test_auto_weighs_trees_and_stays_exact(setup, target16):
    """`auto` with rank rates that make a tree pay (cheap given costs): it runs tree cycles through the real head's
    tree expansion and the target's masked pass, accepts long paths and equals plain greedy; in bf16 it weighs trees
    through the lean forward (exact there) and none through the transformers forward (not token-exact); measured
    costs include the masked passes and tree steps."""
    model, head, _, prompts, refs, stops = setup
    trees = ((3, 2, 6), (4, 4, 16))
    costs = Costs({1: 0.05, 5: 0.056}, 0.01, tree_target={7: 0.052, 17: 0.06}, tree_step={2: 0.001, 4: 0.002})
    auto = AutoSpec(priors={"drafter": [0.3]}, rank_priors={"drafter": [[0.3, 0.3, 0.2, 0.1]]}, costs=costs,
                    trees=trees, time_weight=0.0)
    dec = SpecDecoder(model, SteeredHead(head, refs["sql"], correct=3), mode="auto", k=4, stop_ids=stops, auto=auto)
    assert dec.auto_trees == trees and dec.lookahead == 4
    out, m = dec.generate(prompts["sql"], NEW)
    assert out == refs["sql"] and set(m.plans) == {"tree 4/4/16"} and max(m.accepted) == 3
    model16, head16 = target16[0], copy.deepcopy(head).to(torch.bfloat16)
    assert SpecDecoder(model16, Eagle3Drafter(head16), mode="auto", auto=auto).auto_trees == trees
    with pytest.warns(ReducedPrecisionWarning):
        assert SpecDecoder(model16, Eagle3Drafter(head16), mode="auto", auto=auto, backend="hf").auto_trees == ()
    dec = SpecDecoder(model, Eagle3Drafter(head), mode="auto", k=4, stop_ids=stops,
                      auto=AutoSpec(trees=TREE_GRID, costs=costs))
    state = dec.decode(prompts["sql"], 4).state  # a request's state to time after
    measured = cost_model.measure(dec.target, dec.drafters[0], state, 4, 1, trees)
    assert set(measured.tree_target) == {7, 17} and set(measured.tree_step) == {2, 4}
    assert all(t > 0 for t in [*measured.tree_target.values(), *measured.tree_step.values()])
