"""benchmarks.prefill_memory: every variant runs in its own process on the real target and reports RSS per pass;
bad arguments get one clear error."""

import json

import pytest

from benchmarks.prefill_memory import main, parse_lengths
from draftpool.config import ConfigError


@pytest.mark.tier2
def test_two_variants_report_both_passes(tmp_path, capsys):
    out = tmp_path / "pm"
    assert main(["--lengths", "33:36", "--again-every", "2", "--new-tokens", "1",
                 "--variants", "padded+bound,unpadded", "--out", str(out)]) == 0
    report = json.loads((out / "results.json").read_text())
    assert list(report["results"]) == ["padded+bound", "unpadded"]
    for r in report["results"].values():
        assert [n for n, _ in r["first"]] == [35] and [n for n, _ in r["again"]] == [35]  # 33, 34, 35; 33, 35
        assert r["first"][-1][1] > r["load_mb"] > 100  # MB of a process holding the target
    assert "| padded+bound |" in (out / "table.md").read_text()


@pytest.mark.parametrize("argv,match", [(["--lengths", "40"], "START:STOP"), (["--lengths", "50:40"], "START"),
                                        (["--variants", "fast"], "--variants"), (["--again-every", "0"], ">= 1")])
def test_bad_arguments_are_refused(tmp_path, capsys, argv, match):
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert match in capsys.readouterr().err and not (tmp_path / "o" / "results.json").exists()


def test_lengths_parse():
    assert parse_lengths("40:300") == range(40, 300)
    with pytest.raises(ConfigError):
        parse_lengths("0:3")


@pytest.mark.tier2
def test_a_drafter_not_in_the_pool_is_refused(tmp_path, capsys):
    assert main(["--lengths", "33:34", "--variants", "padded", "--drafter", "nope", "--pool", str(tmp_path / "none"),
                 "--out", str(tmp_path / "o")]) == 2
    assert "no pool at" in capsys.readouterr().err and not (tmp_path / "o" / "results.json").exists()
