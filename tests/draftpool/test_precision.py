"""draftpool/precision.py: `dtype: auto` on a CPU, every branch forced on any machine (bf16 units or not, the
probe's figures injected), the probe measured and cached per machine, an explicit dtype always winning."""

import json
import logging
from types import SimpleNamespace

import pytest
import torch

from draftpool import precision
from draftpool.config import ConfigError
from draftpool.target import default_dtype

TINY = SimpleNamespace(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128)
# the AMX Xeon: bf16 faster at verification and batch rows, a one-row step slower
AMX_LIKE = {"float32": {1: 1.0, 8: 2.0, 64: 8.0}, "bfloat16": {1: 1.3, 8: 0.9, 64: 3.0}}
AMX_FAST = {"float32": {1: 1.0, 8: 2.0, 64: 8.0}, "bfloat16": {1: 0.5, 8: 0.8, 64: 3.0}}


def test_choose_needs_bf16_faster_at_every_row_count_of_the_use():
    assert precision.choose(AMX_FAST, "decode") == torch.bfloat16
    assert precision.choose(AMX_LIKE, "decode") == torch.float32  # one row slower: decoding stays fp32
    assert precision.choose(AMX_LIKE, "batch") == torch.bfloat16  # batched generation pays
    near = {"float32": {64: 1.0}, "bfloat16": {64: 0.95}}
    assert precision.choose(near, "batch") == torch.float32  # inside the margin: not worth a precision change


def test_without_bf16_units_auto_is_fp32_and_nothing_is_probed(monkeypatch, caplog):
    monkeypatch.setenv(precision.CPU_BF16_ENV, "0")
    monkeypatch.setenv(precision.FIGURES_ENV, json.dumps(AMX_FAST))  # would pick bf16 if it were read
    monkeypatch.setattr(precision, "probe", lambda *a, **k: pytest.fail("probed on a CPU without bf16 units"))
    with caplog.at_level(logging.INFO, logger="draftpool.precision"):
        assert default_dtype("cpu", TINY) == torch.float32
    assert "without bf16 units" in caplog.text


def test_with_bf16_units_the_injected_figures_decide_per_use(monkeypatch, caplog):
    monkeypatch.setenv(precision.CPU_BF16_ENV, "1")
    monkeypatch.setenv(precision.FIGURES_ENV, json.dumps(AMX_LIKE))
    with caplog.at_level(logging.INFO, logger="draftpool.precision"):
        assert default_dtype("cpu", TINY, "decode") == torch.float32
        assert default_dtype("cpu", TINY, "batch") == torch.bfloat16
    assert "1 rows 1.00 / 1.30 ms" in caplog.text and "64 rows 8.00 / 3.00 ms" in caplog.text
    assert default_dtype("cpu") == torch.float32  # no target config given: nothing to measure, fp32


def test_an_explicit_dtype_wins(monkeypatch):
    from draftpool.target import target_dtype

    monkeypatch.setenv(precision.CPU_BF16_ENV, "1")
    monkeypatch.setenv(precision.FIGURES_ENV, json.dumps(AMX_FAST))
    assert target_dtype("float32", torch.device("cpu")) == torch.float32
    assert target_dtype("bfloat16", torch.device("cpu")) == torch.bfloat16


def test_the_probe_measures_both_precisions_and_is_cached_per_machine(monkeypatch, tmp_path):
    monkeypatch.setenv("DRAFTPOOL_CACHE", str(tmp_path))
    monkeypatch.delenv(precision.FIGURES_ENV, raising=False)
    figs = precision.machine_figures(TINY)
    assert set(figs) == {"float32", "bfloat16"} and all(set(f) == {1, 8, 64} for f in figs.values())
    assert all(ms > 0 for f in figs.values() for ms in f.values())
    cached = json.loads((tmp_path / "precision.json").read_text())
    assert len(cached) == 1
    monkeypatch.setattr(precision, "probe", lambda *a, **k: pytest.fail("probed again"))
    assert precision.machine_figures(TINY) == figs  # the second start reads the cache
    other = SimpleNamespace(**{**vars(TINY), "hidden_size": 32})
    monkeypatch.setattr(precision, "probe", lambda *a, **k: AMX_LIKE)
    precision.machine_figures(other)  # another shape is another entry
    assert len(json.loads((tmp_path / "precision.json").read_text())) == 2


def test_layer_shapes_follow_the_config():
    assert precision.layer_shapes(TINY) == [(64, 64), (64, 32), (64, 32), (64, 64), (64, 128), (64, 128), (128, 64)]


@pytest.mark.parametrize("env,value", [(precision.CPU_BF16_ENV, "yes"), (precision.FIGURES_ENV, "{nope"),
                                       (precision.FIGURES_ENV, '{"float32": {}}')])
def test_bad_settings_are_one_clear_error(monkeypatch, env, value):
    monkeypatch.setenv(precision.CPU_BF16_ENV, "1")
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError, match=env):
        precision.cpu_dtype(TINY)
    with pytest.raises(ConfigError, match="unknown use"):
        precision.cpu_dtype(TINY, "serve")


def test_the_run_summary_records_the_choice_and_the_figures_it_was_made_on(monkeypatch):
    """precision.summary: an explicit setting records itself; auto on a CPU records whether it has bf16 units and,
    with them, the probe's figures; off a CPU (or without the target's config) nothing is measured."""
    monkeypatch.setenv(precision.FIGURES_ENV, json.dumps(AMX_FAST))
    monkeypatch.setenv(precision.CPU_BF16_ENV, "1")
    got = precision.summary(torch.bfloat16, "auto", "batch", TINY)
    assert got == {"dtype": "bfloat16", "setting": "auto", "use": "batch", "bf16_units": True,
                   "probe_ms": {d: {int(n): ms for n, ms in f.items()} for d, f in AMX_FAST.items()}}
    monkeypatch.setenv(precision.CPU_BF16_ENV, "0")
    assert precision.summary(torch.float32, "auto", "decode", TINY) == {"dtype": "float32", "setting": "auto",
                                                                        "use": "decode", "bf16_units": False}
    assert precision.summary(torch.float32, "float32", "batch", TINY) == {"dtype": "float32", "setting": "float32",
                                                                          "use": "batch"}
    assert "bf16_units" not in precision.summary(torch.bfloat16, "auto", "batch", TINY, cpu=False)
