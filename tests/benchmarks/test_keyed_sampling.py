"""benchmarks.keyed_sampling on the tiny real-vocabulary target with a random head: one clear error for bad input;
a run's keyed answers equal plain keyed sampling's and repeat, and its summary is its runs' own figures (no timing is
asserted)."""

import json

import pytest

from benchmarks.harness import cli
from benchmarks.keyed_sampling import main
from tests.stubs import head_and_suffix_pool


@pytest.mark.parametrize("bad", [["--temperature", "0"], ["--seeds", "0"], ["--k", "0"]])
def test_bad_input_is_one_error_and_nothing_written(bad, tmp_path, capsys):
    assert cli(main, [*bad, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and not (tmp_path / "out").exists()


def test_keyed_answers_equal_plain_keyed_sampling_and_repeat(tmp_path, tiny_real_target, tiny_target_info, capsys):
    pool = head_and_suffix_pool(tmp_path / "pool", tiny_real_target, tiny_target_info)
    out = tmp_path / "out"
    res = main(["--target", tiny_target_info.path, "--pool", str(pool), "--drafter", "sql-eagle3", "--seeds", "1",
                "--max-prompts", "2", "--max-new-tokens", "12", "--out", str(out)])
    assert json.loads((out / "results.json").read_text())["summary"] == res["summary"]
    s = res["summary"]
    assert s["keyed"]["all_equal_plain_keyed"] and s["keyed"]["all_repeatable"]
    for rule in ("plain", "rejection", "keyed"):
        rows = [r for r in res["runs"] if r["rule"] == rule]
        assert len(rows) == 2 and s[rule]["new_tokens"] == sum(r["new_tokens"] for r in rows)
        assert s[rule]["mat"] == pytest.approx(s[rule]["new_tokens"] / sum(r["forwards"] for r in rows))
    assert "keyed" in capsys.readouterr().out and (out / "table.md").is_file()
    assert cli(main, ["--target", tiny_target_info.path, "--pool", str(pool), "--drafter", "nope",
                      "--out", str(tmp_path / "o2")]) == 2
