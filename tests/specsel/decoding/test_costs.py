"""The `auto` costs cache: entries keyed by machine, target, drafter and k; a missing or corrupt file measures again
and is replaced whole."""

from specsel.decoding import costs as cost_model
from specsel.decoding.auto import Costs
from specsel.decoding.llama import LlamaDrafter
from tests.stubs import BigramLM, successor_table


def test_store_and_load_by_key(tmp_path):
    path = tmp_path / "sub" / "costs.json"
    c1, c2 = Costs({1: 0.04, 5: 0.05}, 0.01), Costs({1: 0.03}, 0.02, 0.001)
    assert cost_model.load_cached(path, "a") is None
    cost_model.store(path, "a", c1)
    cost_model.store(path, "b", c2)
    assert cost_model.load_cached(path, "a") == c1 and cost_model.load_cached(path, "b") == c2
    assert cost_model.load_cached(path, "c") is None and cost_model.load_cached(None, "a") is None
    path.write_text("{not json")
    assert cost_model.load_cached(path, "a") is None
    cost_model.store(path, "a", c1)
    assert cost_model.load_cached(path, "a") == c1 and cost_model.load_cached(path, "b") is None


def test_key_names_target_backend_drafter_and_k():
    small, big = BigramLM(successor_table(8, lambda t: t)), BigramLM(successor_table(16, lambda t: t))
    d = LlamaDrafter(BigramLM(successor_table(8, lambda t: t)))
    keys = {cost_model.cost_key(small, d, 4), cost_model.cost_key(big, d, 4), cost_model.cost_key(small, d, 3)}
    keys.add(cost_model.cost_key(small, d, 4, backend="lean"))
    assert len(keys) == 4 and cost_model.cost_key(small, d, 4) == cost_model.cost_key(small, d, 4)


def test_cache_setting():
    assert cost_model.cache_path("", "/c/auto.json") == "/c/auto.json"
    assert cost_model.cache_path("none", "/c/auto.json") is None
    assert cost_model.cache_path("/x.json", "/c/auto.json") == "/x.json"
