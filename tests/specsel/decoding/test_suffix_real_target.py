"""Model-free drafters on the real embedded target: greedy output == plain greedy token for token (chain, auto,
tree, selection), and speculative sampling with a one-hot (deterministic) draft keeps the target's own distribution."""

import pytest
import torch

from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.forward.sampling import SamplingParams, probs_from_logits
from draftpool.models.suffix import NgramModel, build_suffix
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.suffix import NgramDrafter, SuffixDrafter
from specsel.decoding.tree import TreeSpec
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector

pytestmark = pytest.mark.tier2  # model-free drafters on the real target (exactness, sampling)

NEW = 24


@pytest.fixture(scope="module")
def sql(target):
    model, tok = target
    prompt = render_prompt(tok, domain_prompts("sql")["held_out"][0]["prompt"])
    stops = stop_token_ids(tok, model)
    ref = SpecDecoder(model, mode="plain", stop_ids=stops).generate(prompt, NEW)[0]
    return model, prompt, stops, ref


def test_model_free_drafters_equal_plain_greedy_on_the_real_target(sql):
    model, prompt, stops, ref = sql
    vocab = model.config.vocab_size
    assert len(ref) == NEW  # long enough for several cycles
    wrong = list(ref)
    wrong[5::6] = [(t + 1) % vocab for t in ref[5::6]]  # a seed that goes wrong every 6th token
    exact = lambda: SuffixDrafter(build_suffix([prompt + ref], vocab, depth=8))  # noqa: E731
    runs = {
        "exact seed": SpecDecoder(model, exact(), mode="chain", k=4, stop_ids=stops),
        "wrong seed": SpecDecoder(model, SuffixDrafter(build_suffix([prompt + wrong], vocab, depth=8)), mode="chain",
                                  k=4, stop_ids=stops),
        "exact seed, auto": SpecDecoder(model, exact(), mode="auto", k=6, stop_ids=stops),
        "wrong and exact seeds, tree": SpecDecoder(
            model, SuffixDrafter(build_suffix([prompt + wrong, prompt + ref], vocab, depth=8)), mode="tree",
            tree=TreeSpec(depth=5, top_k=2, tokens=10), stop_ids=stops),
        "ngram": SpecDecoder(model, NgramDrafter(NgramModel(vocab)), mode="chain", k=4, stop_ids=stops),
        "hedge over both": SpecDecoder(model, {"ngram": NgramDrafter(NgramModel(vocab)), "suffix": exact()},
                                       mode="chain", k=4, stop_ids=stops,
                                       selector=Selector(make_learner("hedge", 2), 2, 4)),
    }
    accepted = {}
    for name, dec in runs.items():
        out, m = dec.generate(prompt, NEW)
        assert out == ref, name
        assert m.target_forwards == 1 + len(m.accepted), name
        accepted[name] = m.accepted
    assert max(accepted["exact seed"]) == 4 and max(accepted["exact seed, auto"]) >= 5  # long chains were verified
    assert max(accepted["wrong and exact seeds, tree"]) == 5  # a 5-deep path of a branching tree
    assert 0 < min(a for a in accepted["wrong seed"] if a < 4) < 4 or 0 in accepted["wrong seed"]  # and rejected


def test_sampling_with_a_suffix_drafter_keeps_the_real_targets_distribution(sql):
    """Joint distribution of the first two sampled tokens (the first from the prefill, the second from a verified
    one-hot draft or its correction) against the target's exact probabilities."""
    model, _, stops, _ = sql
    prompt = [23428, 1462, 18451]  # "SELECT name FROM", short: each run below is a prefill and one cycle
    params = SamplingParams(temperature=1.0, top_k=2)
    with torch.inference_mode():
        p1 = probs_from_logits(model(torch.tensor([prompt])).logits[0, -1], params)  # [V]
        firsts = p1.nonzero()[:, 0].tolist()
        p2 = {t: probs_from_logits(model(torch.tensor([prompt + [t]])).logits[0, -1], params) for t in firsts}
    top1 = int(p1.argmax())
    second = int(p2[top1].topk(2).indices[1])  # the seed drafts the target's 2nd choice after its 1st: often rejected
    drafter = SuffixDrafter(build_suffix([prompt + [top1, second, second]], model.config.vocab_size, depth=8))
    dec = SpecDecoder(model, drafter, mode="chain", k=2, stop_ids=stops)
    runs, counts, verdicts = 120, {}, set()
    for seed in range(runs):
        out, m = dec.generate(prompt, 2, params, seed)
        counts[tuple(out)] = counts.get(tuple(out), 0) + 1
        if m.drafted and m.drafted[0]:
            verdicts.add(m.accepted[0] > 0)
    assert verdicts == {True, False}  # the draft was both accepted and rejected: both rules ran
    for a, b in counts:
        assert p1[a] > 0 and p2[a][b] > 0, (a, b)  # never a token outside the target's support
    for a in firsts:
        for b in p2[a].nonzero()[:, 0].tolist():
            expect = float(p1[a] * p2[a][b])
            sd = (expect * (1 - expect) / runs) ** 0.5
            assert abs(counts.get((a, b), 0) / runs - expect) <= 4 * sd + 0.01, (a, b, counts.get((a, b)), expect)
