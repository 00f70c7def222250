"""Test data made once per session and shared by pytest-xdist workers."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def shared_dir(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder made once per test session, also across workers (-n N: they share the parent of their base temp
    folders): the first to get the file lock makes it with `make(folder)`, the others wait and reuse it."""
    from filelock import FileLock  # huggingface_hub's dependency

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / name
    with FileLock(str(base / f"{name}.lock")):
        if not (root / ".done").exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            make(root)
            (root / ".done").touch()
    return root


def tiny_sql_data(data_dir: Path, target_info, target, *overrides: str) -> Path:
    """Self-distilled SQL data of `target` (the real one, or the tiny real-vocabulary one) at tiny settings (the
    shipped recipe, then `overrides`) in `data_dir`."""
    from data_gen.generate import run
    from data_gen.plan import DataGenConfig
    from draftpool.config import load_config

    recipe = Path(__file__).resolve().parents[1] / "recipes" / "sql" / "data_gen.yaml"
    cfg = load_config(DataGenConfig, recipe, [f"data_dir={data_dir}", "samples_per_prompt=0", "device=cpu",
                                              f"target={target_info.name}", "domain=sql", *overrides])
    model, tok = target
    return run(cfg, target_info, model, tok)
