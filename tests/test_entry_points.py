"""The three entry points are installed commands (pyproject [project.scripts]) that run from any directory, the root
.py files are thin wrappers of the same main functions, and recipes resolve outside the checkout's directory."""

import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from draftpool.config import load_config

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_scripts_declared_and_point_at_mains():
    assert set(SCRIPTS) == {"train_drafter", "build_pool", "online_adapt"}
    for name, target in SCRIPTS.items():
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func))
        assert f"from {module} import {func}" in (ROOT / f"{name}.py").read_text()  # the wrapper calls the same


@pytest.mark.tier2
def test_an_installed_command_runs_from_another_directory(tmp_path):
    for name in SCRIPTS:
        assert shutil.which(name, path=str(Path(sys.executable).parent)), f"{name} is not installed"
    exe = shutil.which("train_drafter", path=str(Path(sys.executable).parent))
    out = subprocess.run([exe, "--help-config"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "train.lr" in out.stdout


def test_recipes_resolve_from_another_directory(tmp_path, monkeypatch):
    from training.config import TrainConfig

    monkeypatch.chdir(tmp_path)
    cfg = load_config(TrainConfig, "recipes/sql/eagle3.yaml", ["domain=sql"])
    assert cfg.domain == "sql" and cfg.data.recipe == "recipes/{domain}/data_gen.yaml"


@pytest.mark.tier2
def test_a_non_finite_option_is_one_error_line_naming_it(tmp_path, capsys, monkeypatch):
    """`train.lr=.nan` through the real command (and the other entry points in-process): exit 2, one line naming the
    key, nothing written."""
    out = subprocess.run([sys.executable, str(ROOT / "train_drafter.py"), "--domain", "sql", "train.lr=.nan"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.strip() == "error: train.lr: expected a finite number, got nan"
    from data_gen.generate import main as data_gen
    from online.adapt import main as online_adapt
    from training.build_pool import main as build_pool

    monkeypatch.chdir(tmp_path)
    for main, args, key in ((online_adapt, ["trainer.lr=.inf"], "trainer.lr"),
                            (online_adapt, ["serve.temperature=.nan"], "serve.temperature"),
                            (build_pool, ["--domains", "sql", "train.max_grad_norm=.nan"], "train.max_grad_norm")):
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: {key}: expected a finite number") and len(err.splitlines()) == 1
    with pytest.raises(SystemExit, match="^error: top_p: expected a finite number, got -inf$"):
        data_gen(["--domain", "sql", "top_p=-.inf"])
    assert list(tmp_path.iterdir()) == []
