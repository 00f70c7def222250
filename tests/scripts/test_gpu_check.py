"""scripts/gpu_check.py (run through scripts/gpu_check.sh on a GPU machine): argument handling, which CI can check
without a GPU. Every bad argument exits 2 with one line on stderr naming the problem, before anything heavy loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "scripts" / "gpu_check.py"


def run_driver(*args: str, launcher: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    cmd = (launcher or [sys.executable, str(DRIVER)]) + list(args)
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def one_error_line(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert out.stdout == ""  # nothing ran: no environment line, no table
    return lines[0]


@pytest.mark.parametrize(("args", "expected"), [
    (["--modes", "plain,beam"], "unknown mode 'beam'"),
    (["--modes", ","], "no mode given"),
    (["--dtypes", "fp16"], "unknown dtype 'fp16'"),
    (["--dtypes", "bf16,float8"], "unknown dtype 'float8'"),
    (["--steps", "0"], "--steps must be >= 1, got 0"),
    (["--steps", "x"], "--steps: invalid int value: 'x'"),
    (["--prompts", "0"], "--prompts must be >= 1, got 0"),
    (["--prompts", "100000"], "--prompts 100000: the sql domain has only"),
    (["--new-tokens", "0"], "--new-tokens must be >= 1"),
    (["--train-prompts", "100000"], "--train-prompts 100000: the sql domain has only"),
    (["--gguf", "/nonexistent/model.gguf"], "--gguf /nonexistent/model.gguf: no such file"),
    (["--device", "tpu"], "--device 'tpu': choose cuda, cuda:N or cpu"),
    (["--device", "cuda:1"], "CUDA_VISIBLE_DEVICES=1"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
])
def test_bad_argument_exits_2_with_one_line(args, expected):
    line = one_error_line(run_driver("--device", "cpu", *args) if "--device" not in args else run_driver(*args))
    assert line.startswith("gpu_check: error: ") and expected in line, line


def test_out_under_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    line = one_error_line(run_driver("--device", "cpu", "--out", str(tmp_path / "f" / "sub")))
    assert "--out" in line and "a file is in the way" in line


@pytest.mark.tier2
def test_cuda_without_a_gpu_says_no_cuda_device():
    """CI has no GPU (CUDA_VISIBLE_DEVICES is emptied for the child in case a runner has one)."""
    for args in ([], ["--device", "cuda"], ["--device", "cuda:0"]):  # the default device is cuda
        line = one_error_line(run_driver(*args))
        assert "no CUDA device available" in line and "--device cpu" in line, line


def test_nothing_heavy_is_imported_before_the_arguments_pass():
    """The argument checks run on the prompt table alone (torch only for a cuda device)."""
    code = ("import sys; sys.argv = ['gpu_check', '--device', 'cpu', '--steps', '0']; sys.path.insert(0, 'scripts');"
            "import gpu_check; rc = gpu_check.main();"
            "heavy = [m for m in ('torch', 'transformers', 'datasets', 'gguf', 'accelerate') if m in sys.modules];"
            "print(rc, heavy)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "2 []", out.stdout + out.stderr


def test_shell_wrapper_passes_arguments_and_exit_code(tmp_path):
    """gpu_check.sh: python from $PYTHON, no wheels folder (GPU_WHEELS empty), "$@" and the exit code passed."""
    env = {**os.environ, "PYTHON": sys.executable, "GPU_WHEELS": str(tmp_path / "none"),
           "GPU_GGUF_DIR": str(tmp_path / "none")}
    out = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--device", "cpu", "--dtypes", "fp8"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines()[-1] == \
        "gpu_check: error: argument --dtypes: unknown dtype 'fp8'; choose from bf16, fp32"


def test_help_lists_every_flag():
    out = run_driver("--help")
    assert out.returncode == 0
    for flag in ("--device", "--steps", "--prompts", "--new-tokens", "--dtypes", "--modes", "--out", "--gguf"):
        assert flag in out.stdout
