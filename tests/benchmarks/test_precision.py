"""benchmarks.precision: the probe measured now, both precisions at every row count a use runs, and auto's choice."""

import json

from benchmarks import harness
from benchmarks.precision import main


def test_the_probe_figures_and_auto_s_choice_per_use(tmp_path, tiny_target_info, monkeypatch):
    monkeypatch.setenv("DRAFTPOOL_CPU_BF16", "1")  # as on a CPU with bf16 units; auto reads these figures
    monkeypatch.setenv("DRAFTPOOL_PRECISION_FIGURES", json.dumps(
        {"float32": {"1": 1.0, "8": 2.0, "64": 8.0}, "bfloat16": {"1": 2.0, "8": 4.0, "64": 3.0}}))
    out = tmp_path / "out"
    report = main(["--target", tiny_target_info.name, "--repeats", "1", "--out", str(out)])
    assert json.loads((out / "results.json").read_text())["auto"] == report["auto"] == {"decode": "float32",
                                                                                         "batch": "bfloat16"}
    figs = report["probe_ms"]
    assert set(figs) == {"float32", "bfloat16"} and all(set(f) == {1, 8, 64} for f in figs.values())
    assert all(ms > 0 for f in figs.values() for ms in f.values())  # measured now, not the injected figures
    assert figs["float32"][1] != 1.0 and report["bf16_units"] is True
    assert "| 64 |" in (out / "table.md").read_text()


def test_bad_repeats_is_one_error(tmp_path, tiny_target_info, capsys):
    assert harness.cli(main, ["--target", tiny_target_info.name, "--repeats", "0", "--out", str(tmp_path)]) == 2
    assert "--repeats must be >= 1" in capsys.readouterr().err
