"""benchmarks.prompt_diversity on the shipped sets: one table row per set, every set large (>= 1850 prompts) with
few near-duplicates and about a fifth held out; --out writes the figures; --before reads a git revision's sets.

The figures of the shipped sets take a while (near-duplicate pairs over ~2,000 prompts a set): they are computed once
per session for every worker (the second tier's tests); the table and files are checked on a slice of every set."""

from __future__ import annotations

import json
import subprocess

import pytest

import benchmarks.prompt_diversity as prompt_diversity
from benchmarks.prompt_diversity import ROOT, current_sets, main, reports
from data_gen.domains import PROMPT_SETS
from tests.shared import shared_dir

MIN_PROMPTS = 1850
MAX_NEAR_DUPLICATE_RATE = 0.15  # measured 0.035 (medical) to 0.105 (math) on 2026-11-28; 0.46 for math before


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """reports() of the shipped sets at the default sample (350), computed once for the session's workers."""
    def make(root):
        (root / "figures.json").write_text(json.dumps(reports(current_sets(), 350)))

    return json.loads((shared_dir(tmp_path_factory, "prompt-diversity", make) / "figures.json").read_text())


@pytest.fixture
def shipped_figures_once(figures, monkeypatch):
    """reports() as the benchmark calls it, but the shipped sets' figures (a pure function of the rows and the
    sample) read from the shared computation instead of recomputed."""
    shipped = current_sets()

    def once(sets, sample):
        return figures if sets == shipped and sample == 350 else reports(sets, sample)

    monkeypatch.setattr(prompt_diversity, "reports", once)


def test_table_and_json(tmp_path, capsys, monkeypatch):
    sliced = {name: rows[:80] for name, rows in current_sets().items()}  # every set, a slice of each: seconds
    monkeypatch.setattr(prompt_diversity, "current_sets", lambda: sliced)
    out = tmp_path / "diversity"
    assert main(["--out", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("| set | prompts | groups |") and set(lines[1]) <= set("|-")
    rows = [line.split("|")[1].strip() for line in lines[2:]]
    assert rows == list(PROMPT_SETS)
    saved = json.loads((out / "results.json").read_text())
    assert (out / "table.md").read_text().splitlines() == lines
    assert set(saved["sets"]) == set(PROMPT_SETS) and saved["before"] is None


@pytest.mark.tier2
@pytest.mark.parametrize("name", PROMPT_SETS)
def test_shipped_set_figures(figures, name):
    rep = figures[name]
    assert rep["prompts"] >= MIN_PROMPTS, f"{name}: only {rep['prompts']} prompts"
    assert rep["near_duplicate_rate"] <= MAX_NEAR_DUPLICATE_RATE, f"{name}: {rep['near_duplicate_rate']:.3f}"
    assert 0.1 <= rep["held_out"] / rep["prompts"] <= 0.25
    assert rep["train"] + rep["held_out"] == rep["prompts"]
    assert 0 < rep["distinct_3gram"] <= 1 and 0 < rep["distinct_2gram"] <= rep["distinct_2gram_at"] <= 1


@pytest.mark.tier2
def test_before_a_revision(capsys, shipped_figures_once):
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    assert main(["--before", "HEAD"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()[2:]
    assert len(lines) == len(PROMPT_SETS) and all(" -> " in line for line in lines)
    assert main(["--before", "0000000000000000000000000000000000000000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no prompt sets" in err[0]
