"""The three entry points are installed commands (pyproject [project.scripts]) that run from any directory, the root
.py files are thin wrappers of the same main functions, and recipes resolve outside the checkout's directory."""

import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from draftpool.config import load_config

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_scripts_declared_and_point_at_mains():
    assert set(SCRIPTS) == {"train_drafter", "build_pool", "online_adapt"}
    for name, target in SCRIPTS.items():
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func))
        assert f"from {module} import {func}" in (ROOT / f"{name}.py").read_text()  # the wrapper calls the same


def test_an_installed_command_runs_from_another_directory(tmp_path):
    for name in SCRIPTS:
        assert shutil.which(name, path=str(Path(sys.executable).parent)), f"{name} is not installed"
    exe = shutil.which("train_drafter", path=str(Path(sys.executable).parent))
    out = subprocess.run([exe, "--help-config"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "train.lr" in out.stdout


def test_recipes_resolve_from_another_directory(tmp_path, monkeypatch):
    from training.train_drafter import TrainConfig

    monkeypatch.chdir(tmp_path)
    cfg = load_config(TrainConfig, "recipes/sql/eagle3.yaml", ["domain=sql"])
    assert cfg.domain == "sql" and cfg.data.recipe == "recipes/{domain}/data_gen.yaml"
