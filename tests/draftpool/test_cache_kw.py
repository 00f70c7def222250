"""cache_kw: the KV cache goes by the keyword the model's forward names (`cache` in current transformers, which warns
on `past_key_values`; `past_key_values` for models and stubs that only know it)."""

import warnings

import torch
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

from draftpool.target import cache_kw
from tests.stubs import BigramLM, successor_table


def test_current_transformers_models_get_cache_and_no_warning():
    cfg = LlamaConfig(vocab_size=32, hidden_size=16, num_attention_heads=2, num_key_value_heads=2,
                      intermediate_size=32, num_hidden_layers=1)
    model = LlamaForCausalLM(cfg).eval()
    cache = DynamicCache(config=cfg)
    assert list(cache_kw(model, cache)) == ["cache"] and list(cache_kw(model.model, cache)) == ["cache"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecation warning would fail here
        model(input_ids=torch.tensor([[1, 2, 3]]), use_cache=True, **cache_kw(model, cache))
    assert cache.get_seq_length() == 3


def test_a_model_that_only_knows_past_key_values_gets_it():
    assert list(cache_kw(BigramLM(successor_table(8, lambda t: t)), None)) == ["past_key_values"]
