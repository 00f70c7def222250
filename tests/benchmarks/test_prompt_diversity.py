"""benchmarks.prompt_diversity on the shipped sets: one table row per set, every set large (>= 1850 prompts) with
few near-duplicates and about a fifth held out; --out writes the figures; --before reads a git revision's sets."""

from __future__ import annotations

import json
import subprocess

import pytest

from benchmarks.prompt_diversity import ROOT, current_sets, main, reports
from data_gen.domains import PROMPT_SETS

MIN_PROMPTS = 1850
MAX_NEAR_DUPLICATE_RATE = 0.15  # measured 0.035 (medical) to 0.105 (math) on 2026-11-28; 0.46 for math before


@pytest.fixture(scope="module")
def figures():
    return reports(current_sets(), 350)


def test_table_and_json(tmp_path, capsys):
    out = tmp_path / "diversity"
    assert main(["--out", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("| set | prompts | groups |") and set(lines[1]) <= set("|-")
    rows = [line.split("|")[1].strip() for line in lines[2:]]
    assert rows == list(PROMPT_SETS)
    saved = json.loads((out / "results.json").read_text())
    assert (out / "table.md").read_text().splitlines() == lines
    assert set(saved["sets"]) == set(PROMPT_SETS) and saved["before"] is None


@pytest.mark.parametrize("name", PROMPT_SETS)
def test_shipped_set_figures(figures, name):
    rep = figures[name]
    assert rep["prompts"] >= MIN_PROMPTS, f"{name}: only {rep['prompts']} prompts"
    assert rep["near_duplicate_rate"] <= MAX_NEAR_DUPLICATE_RATE, f"{name}: {rep['near_duplicate_rate']:.3f}"
    assert 0.1 <= rep["held_out"] / rep["prompts"] <= 0.25
    assert rep["train"] + rep["held_out"] == rep["prompts"]
    assert 0 < rep["distinct_3gram"] <= 1 and 0 < rep["distinct_2gram"] <= rep["distinct_2gram_at"] <= 1


def test_before_a_revision(capsys):
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    assert main(["--before", "HEAD"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()[2:]
    assert len(lines) == len(PROMPT_SETS) and all(" -> " in line for line in lines)
    assert main(["--before", "0000000000000000000000000000000000000000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no prompt sets" in err[0]
