"""The target runner on cache layouts and heads other than plain Llama: sliding-window rollback through the Cache API,
cache layers that cannot be packed refused for tree verification, logit post-processing after the lm_head kept."""

import pytest
import torch
from transformers import (
    GraniteConfig,
    GraniteForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
)

from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder, SpecError
from specsel.decoding.target import TargetRunner, lazy_head_matches

SMALL = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=256)


def seeded(cls, cfg, seed: int):
    torch.manual_seed(seed)
    return cls(cfg).eval()


@pytest.fixture(scope="module")
def sliding():
    """A tiny Mistral whose every layer attends over a window of 8 (DynamicSlidingWindowLayer caches)."""
    cfg = MistralConfig(**SMALL, sliding_window=8)
    return seeded(MistralForCausalLM, cfg, 0), cfg


def hf_greedy(model, prompt: list[int], n: int) -> list[int]:
    out = model.generate(torch.tensor([prompt]), max_new_tokens=n, min_new_tokens=n, do_sample=False)
    return out[0, len(prompt):].tolist()


@pytest.mark.parametrize("drafter_seed", [0, 1])  # 0: the target itself (every draft accepted), 1: a random model
def test_sliding_window_target_rolls_back_exactly(sliding, drafter_seed):
    model, cfg = sliding
    prompt = [3, 14, 15, 9, 26, 5]
    ref = hf_greedy(model, prompt, 40)  # 46 positions: far past the window of 8
    draft = seeded(MistralForCausalLM, cfg, drafter_seed)
    for k in (1, 3, 5):
        out, m = SpecDecoder(model, LlamaDrafter(draft), mode="chain", k=k).generate(prompt, 40)
        assert out == ref, (k, drafter_seed)
        assert sum(m.accepted) > 0 if drafter_seed == 0 else len(m.accepted) > 10  # rollbacks did happen
    assert SpecDecoder(model, mode="plain").generate(prompt, 40)[0] == ref


def test_tree_verification_refuses_a_cache_it_cannot_pack(sliding):
    model, _ = sliding
    from tests.stubs import OracleTreeDrafter

    with pytest.raises(SpecError, match="DynamicSlidingWindowLayer.*use mode chain"):
        SpecDecoder(model, OracleTreeDrafter([], vocab_size=64, depth=3, correct=1), mode="tree")


def test_logit_post_processing_is_not_skipped():
    """Granite divides its logits by `logits_scaling` after the lm_head: the lazy projection must not be used."""
    granite = seeded(GraniteForCausalLM, GraniteConfig(**SMALL, logits_scaling=4.0), 0)
    llama = seeded(LlamaForCausalLM, LlamaConfig(**SMALL), 0)
    assert not lazy_head_matches(granite) and lazy_head_matches(llama)
    ids = [1, 2, 3, 4, 5]
    for model in (granite, llama):
        runner = TargetRunner(model)
        runner.reset()
        got = runner.forward(ids).logits(slice(None))
        torch.testing.assert_close(got, model(torch.tensor([ids])).logits[0].float())


def test_batched_projection_gives_the_rows_one_at_a_time_would():
    llama = seeded(LlamaForCausalLM, LlamaConfig(**SMALL), 0)
    runner = TargetRunner(llama)
    runner.reset()
    ids = [3, 1, 4, 1, 5, 9]
    one = runner.forward(ids)
    singles = torch.stack([one.logits(r) for r in range(len(ids))])
    runner.reset()
    batched = runner.forward(ids)
    batched.project([1, 2, 5, -1])
    assert sorted(batched._rows) == [1, 2, 5]  # projected once each; -1 is row 5
    torch.testing.assert_close(torch.stack([batched.logits(r) for r in range(len(ids))]), singles)
    assert [batched.choice(r) for r in range(len(ids))] == [int(x) for x in singles.argmax(-1)]
