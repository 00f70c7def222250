"""data_gen/backends.py: the table of self-distillation backends is the config's choices, each answering the same
shards (the answers themselves: tests/data_gen/test_continuous.py, test_generate.py, test_vllm_backend.py)."""

from __future__ import annotations

import typing

from data_gen.backends import BACKENDS, resolve_backend
from data_gen.plan import DataGenConfig


def test_the_table_holds_every_backend_the_config_names():
    choices = typing.get_args(typing.get_type_hints(DataGenConfig)["backend"])
    assert set(BACKENDS) == set(choices) - {"auto"}
    assert [name for name, b in BACKENDS.items() if not b.in_process] == ["vllm"]  # its worker loads the target
    assert BACKENDS["engine"].check(DataGenConfig(domain="sql")) == {}


def test_auto_is_the_engine_where_the_lean_forward_reproduces_the_target(target):
    model, _ = target
    assert resolve_backend("auto", model) == "engine"
    assert resolve_backend("hf", model) == "hf" and resolve_backend("vllm", None) == "vllm"
