"""benchmarks.harness: the common arguments, results written whole, one error line with exit code 2, progress lines
in a log while the run goes on; benchmarks.publish copies a run's figures into docs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import harness, publish

ROOT = Path(__file__).resolve().parents[2]


def _parser(**common):
    ap = harness.parser("benchmarks.demo", "demo")
    harness.add_common(ap, **common)
    ap.add_argument("--steps", type=int, default=3)
    return ap


def test_common_arguments_parse_with_the_script_s_defaults():
    ap = _parser(out="runs/bench/demo", pool="pools/{target_slug}", device="cpu", dtype="float32", seed=0)
    args = ap.parse_args([])
    assert (args.target, args.pool, args.device, args.dtype, args.out, args.seed, args.steps) == (
        "smollm2-135m-instruct", "pools/{target_slug}", "cpu", "float32", "runs/bench/demo", 0, 3)
    from draftpool.target import DEFAULT_TARGET

    assert harness.DEFAULT_TARGET == DEFAULT_TARGET  # the harness names it without importing torch
    args = ap.parse_args(["--target", "t", "--pool", "p/{target_slug}", "--device", "cuda:1", "--dtype", "bfloat16",
                          "--out", "o", "--seed", "7", "--steps", "5"])
    assert (args.target, args.pool, args.device, args.dtype, args.out, args.seed, args.steps) == (
        "t", "p/{target_slug}", "cuda:1", "bfloat16", "o", 7, 5)

    class Info:
        slug = "s"

    assert harness.pool_dir(args, Info()) == Path("p/s")
    assert harness.pool_dir(ap.parse_args(["--pool", ""]), Info()) == Path("pools/s")
    # an option a script does not take is not there
    bare = _parser(out="o").parse_args([])
    assert not any(hasattr(bare, k) for k in ("pool", "device", "dtype", "seed")) and bare.target
    with pytest.raises(harness.BenchError, match="--seed"):
        _parser(out="o").parse_args(["--seed", "1"])


def test_results_and_table_are_written_whole(tmp_path):
    out = tmp_path / "run"
    table = harness.markdown_table(["method", "MAT"], [["plain", "1.00"], ["chain", f"{2.5:.2f}"]])
    assert table.splitlines() == ["| method | MAT |", "|---|---|", "| plain | 1.00 |", "| chain | 2.50 |"]
    assert harness.write_results(out, {"rows": [1, 2]}, table) == out
    assert json.loads((out / "results.json").read_text()) == {"rows": [1, 2]}
    assert (out / "table.md").read_text() == table + "\n"
    # a result that cannot be written leaves the previous files as they were, and no temporary file
    with pytest.raises(TypeError):
        harness.write_results(out, {"rows": object()}, "| x |")
    assert json.loads((out / "results.json").read_text()) == {"rows": [1, 2]}
    assert (out / "table.md").read_text() == table + "\n"
    assert sorted(os.listdir(out)) == ["results.json", "table.md"]


def test_a_bad_argument_is_one_line_and_exit_2(tmp_path, capsys):
    def main(argv):
        args = _parser(out=str(tmp_path / "out")).parse_args(argv)
        if args.steps < 1:
            raise harness.BenchError(f"--steps must be >= 1, got {args.steps}\n(second line folded)")
        harness.write_results(args.out, {"steps": args.steps})
        return 0

    for argv, word in [(["--nope"], "--nope"), (["--steps", "x"], "--steps"), (["--steps", "0"], "--steps")]:
        assert harness.cli(main, argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and word in err[0], err
        assert not (tmp_path / "out").exists()  # nothing half-written
    assert harness.cli(main, ["--steps", "2"]) == 0
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == {"steps": 2}


@pytest.mark.tier2
def test_a_missing_input_from_the_command_line_is_one_line_and_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "benchmarks.publish", str(tmp_path / "no-run"), "--docs",
                           str(tmp_path / "docs")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: run folder {tmp_path / 'no-run'} does not exist"]
    assert not (tmp_path / "docs").exists()


def test_median_ms_is_draftpool_s_timer_over_the_calls():
    calls, after = [], []
    ms = harness.median_ms(lambda: calls.append(1), 5, after=lambda: after.append(1))
    assert len(calls) == len(after) == 5 and ms >= 0


CHILD = """
import sys
import time
from pathlib import Path

import torch

from benchmarks import harness

go = Path(sys.argv[1])
harness.setup_logging()
x = torch.arange(64.0)
with harness.progress(3, "demo", unit="step") as bar:
    for i in range(3):
        x = (x @ torch.ones(64, 64)) / 64  # a small real workload
        bar.set_postfix(step=i + 1, total=f"{float(x.sum()):.0f}")
        bar.update(1)
        if i == 0:
            while not go.exists():  # held here until the test has read the log
                time.sleep(0.02)
harness.log.info("finished")
"""


@pytest.mark.tier2
def test_progress_lines_reach_a_log_file_while_the_run_goes_on(tmp_path):
    """The run's stderr goes to a file; the line of its first step is in the file while the run is held after that
    step (not only at exit)."""
    go, log_path = tmp_path / "go", tmp_path / "run.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(go)], cwd=ROOT, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 120  # a bound on waiting, not a pass/fail figure
        while "demo: 1/3 step" not in log_path.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        text = log_path.read_text()
        assert proc.poll() is None, text  # still running: held after its first step
        assert "demo: 0/3 step (0.0%), started" in text and "demo: 1/3 step (33.3%)" in text and "step=1" in text
        assert "finished" not in text and "2/3" not in text
    finally:
        go.touch()
        proc.wait(timeout=120)
    text = log_path.read_text()
    assert proc.returncode == 0, text
    assert "demo: 3/3 step (100.0%)" in text and "done in" in text and text.rstrip().endswith("finished")


def _png(path: Path) -> None:
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + path.name.encode())


def test_publish_copies_the_run_s_figures_into_docs(tmp_path, capsys):
    run, docs = tmp_path / "run", tmp_path / "docs"
    run.mkdir()
    for name in ("a.png", "b.png"):
        _png(run / name)
    (run / "table.md").write_text("| x |\n")
    (run / "results.json").write_text("{}")
    assert publish.main([str(run), "--docs", str(docs)]) == 0
    assert sorted(os.listdir(docs)) == ["a.png", "b.png"]
    assert (docs / "a.png").read_bytes() == (run / "a.png").read_bytes()
    assert capsys.readouterr().out.splitlines() == [f"copied {run / n} -> {docs / n}" for n in ("a.png", "b.png")]
    assert publish.main([str(run), "--docs", str(docs), "--only", "b.png=select31_b.png", "--table", "run"]) == 0
    assert (docs / "select31_b.png").read_bytes() == (run / "b.png").read_bytes()
    assert (docs / "run.md").read_text() == "| x |\n"
    # a missing name: nothing copied at all (every name is checked first)
    with pytest.raises(harness.BenchError, match="nope.png"):
        publish.main([str(run), "--docs", str(tmp_path / "docs2"), "--only", "a.png,nope.png"])
    assert not (tmp_path / "docs2").exists()
    with pytest.raises(harness.BenchError, match="plain file names"):
        publish.main([str(run), "--docs", str(docs), "--only", "a.png=../x.png"])


def test_loading_the_target_logs_one_line_not_a_bar(capsys):
    """A log (stderr not a terminal) gets the harness's line, not transformers' carriage-return weight bar."""
    import argparse

    harness.setup_logging()
    target = harness.load_target(argparse.Namespace(target=harness.DEFAULT_TARGET))
    assert target.info.slug == "smollm2-135m-instruct" and str(target.device) == "cpu"
    err = capsys.readouterr().err
    assert "loading target smollm2-135m-instruct (cpu, float32)" in err
    assert "Loading weights" not in err and "\r" not in err


def test_dtype_auto_on_a_cpu_is_the_measured_choice_for_decoding(tiny_target_info, monkeypatch):
    """--dtype auto: the precision module's choice for decoding (forced here: bf16 units and injected figures where
    bf16 is faster at 1 and 8 rows, then where it is slower at 8); an explicit dtype is loaded as named."""
    import argparse

    import torch

    from draftpool import target as target_mod

    loaded = []
    monkeypatch.setattr(target_mod, "load_target", lambda info, dev, dt: loaded.append(dt) or (None, None))
    monkeypatch.setenv("DRAFTPOOL_CPU_BF16", "1")
    args = argparse.Namespace(target=tiny_target_info.name, device="cpu", dtype="auto")
    for b8, want in ((0.5, torch.bfloat16), (3.0, torch.float32)):
        monkeypatch.setenv("DRAFTPOOL_PRECISION_FIGURES", json.dumps(
            {"float32": {"1": 1.0, "8": 2.0, "64": 8.0}, "bfloat16": {"1": 0.5, "8": b8, "64": 3.0}}))
        assert harness.load_target(args, tiny_target_info).dtype == want
    assert harness.load_target(args, tiny_target_info, dtype="float32").dtype == torch.float32
    assert loaded == [torch.bfloat16, torch.float32, torch.float32]
