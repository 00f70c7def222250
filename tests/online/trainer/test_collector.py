"""Feedback collection during decoding: one target row per committed token, the row whose argmax chose it."""


import pytest
import torch

from online.trainer.feedback import FeedbackCollector
from specsel.decoding.hooks import Hooks
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import BigramLM, successor_table

V = 16


def target():
    return BigramLM(successor_table(V, lambda t: (t + 1) % V))


def drafter(nxt):
    return LlamaDrafter(BigramLM(successor_table(V, nxt)))


@pytest.mark.parametrize("mode", ["plain", "chain"])
def test_every_committed_token_has_the_row_that_chose_it(mode):
    dec = SpecDecoder(target(), None if mode == "plain" else drafter(lambda t: (t + 1) % V if t % 3 else 0),
                      mode=mode, k=3)
    collector = FeedbackCollector(k=4)
    collector.start()
    res = dec.decode([2, 5], 20, hooks=Hooks(collector=collector))
    fb = collector.finish("r0", res.state, version=3, accepted=res.metrics.accepted)
    committed = fb.tokens[fb.prompt_len:]
    assert fb.target.ids.shape == (len(committed), 4)
    assert fb.target.ids[:, 0].tolist() == committed.tolist()  # greedy: the top row token is the committed one
    assert torch.all(fb.target.mass <= 1 + 1e-5) and fb.version == 3 and fb.feats is None


def test_pool_decoder_feeds_the_collector_through_its_engine():
    pool = {"a": drafter(lambda t: (t + 1) % V), "b": drafter(lambda t: (t + 2) % V)}
    collector = FeedbackCollector(k=2)
    dec = SpecDecoder(target(), pool, selector=Selector(make_learner("normal_hedge", 2), 2, 3), k=3,
                      hooks=Hooks(collector=collector))  # the decoder's default hooks: every request's
    collector.start()
    fb = collector.finish("r1", dec.decode([7], 25).state)
    assert fb.target.ids[:, 0].tolist() == fb.tokens[fb.prompt_len:].tolist()


@pytest.mark.parametrize("temperature", [0.0, 0.7, 1.5])
def test_a_sampled_request_feeds_the_target_s_own_distribution(temperature):
    """Per-request sampling over HTTP: whatever a request samples with, the feedback rows are the target's raw
    log-probabilities at the committed positions (what the trainer distills), never the temperature's."""
    from draftpool.forward.sampling import SamplingParams

    logits = torch.randn(V, V, generator=torch.Generator().manual_seed(0)) * 3  # a target that really samples
    model = BigramLM(logits)
    collector = FeedbackCollector(k=V)
    dec = SpecDecoder(model, drafter(lambda t: (t + 1) % V), mode="chain", k=3)
    collector.start()  # the request's own sampling, the server's hooks (online/serve/server.py serves it so)
    res = dec.decode([3], 24, SamplingParams(temperature=temperature), seed=11, hooks=Hooks(collector=collector))
    fb = collector.finish("s", res.state)
    tokens = fb.tokens.tolist()
    want = torch.log_softmax(logits[tokens[fb.prompt_len - 1:-1]].float(), -1)  # row r: p(token prompt_len + r)
    got = torch.full_like(want, float("-inf")).scatter(1, fb.target.ids, fb.target.logp)
    assert res.tokens and torch.allclose(got, want, atol=1e-5)
