"""The documented single-process launch (recipes/accelerate_configs/single.yaml) starts without accelerate's
"values were not passed ... had defaults used instead" warning, and without reading the user's accelerate config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.tier2  # an `accelerate launch` of train_drafter.py in a subprocess

ROOT = Path(__file__).resolve().parents[2]
SINGLE = ROOT / "recipes" / "accelerate_configs" / "single.yaml"


def test_single_config_launch_is_quiet(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ACCELERATE_CONFIG_FILE", "HF_HOME")}
    env["HOME"] = str(tmp_path)  # no ~/.cache/huggingface/accelerate/default_config.yaml
    env["HF_HOME"] = str(tmp_path / "hf")
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(SINGLE),
           "train_drafter.py", "--help-config"]
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout + p.stderr
    assert "defaults used instead" not in out and "--num_processes" not in out, out
    assert "domain = '<required>'" in out
