"""benchmarks.shift: a pool of one member, the issue's ratios, one clear error for bad input (no model), and a live
run on the tiny real-vocabulary target's pool (second tier: two servers and a trainer process): frozen and adapted
rows per window, the own-domain row left out and said so, the plot."""

import json

import pytest

from benchmarks import shift
from benchmarks.harness import cli
from tests.stubs import head_and_suffix_pool


def _pool(tmp_path):
    pool = tmp_path / "pool"
    (pool / "sql-eagle3").mkdir(parents=True)
    (pool / "sql-eagle3" / "w.bin").write_bytes(b"x")
    (pool / "sql-suffix").mkdir()
    drafters = {"sql-eagle3": {"kind": "eagle3", "path": "sql-eagle3"},
                "sql-suffix": {"kind": "suffix", "path": "sql-suffix"}}
    manifest = {"format": "draftpool-pool/1", "target": "t", "drafters": drafters}
    (pool / "pool.json").write_text(json.dumps(manifest))
    return pool


def test_a_pool_of_one_holds_only_that_member(tmp_path):
    one = shift.pool_of_one(_pool(tmp_path), "sql-eagle3", tmp_path / "one")
    assert json.loads((one / "pool.json").read_text())["drafters"] == {"sql-eagle3": {"kind": "eagle3",
                                                                                       "path": "sql-eagle3"}}
    assert (one / "sql-eagle3" / "w.bin").read_bytes() == b"x" and not (one / "sql-suffix").exists()


def test_the_ratios_are_the_issues_measures():
    frozen = {"mat_windows": [1.5, 1.5, 1.6], "tok_s_windows": [20.0, 20.0, 22.0], "tok_s": 20.5}
    adapted = {"mat_windows": [1.5, 1.7, 2.0], "tok_s_windows": [15.0, 21.0, 24.2], "tok_s": 20.0}
    own = {"mat_windows": [1.6, 1.6, 1.6], "tok_s_windows": [20.0, 20.0, 20.0], "tok_s": 20.0}
    r = shift.ratios({"frozen": frozen, "adapted": adapted, "own": own})
    assert r == {"mat_last_vs_frozen": 1.25, "mat_last_vs_own": 1.25, "tok_s_last_two_vs_frozen": 1.076,
                 "tok_s_all_vs_frozen": 0.976}
    assert shift.ratios({"frozen": frozen, "adapted": adapted})["mat_last_vs_own"] is None


@pytest.mark.parametrize("extra,msg", [(["--head", "nope"], "no member 'nope'"), (["--window", "0"], "--window"),
                                       (["--adapt", "trainer.lr"], "key=value"),
                                       (["--extra", "own:trainer.lr=1"], "--extra"),
                                       (["--extra", "b:trainer.lr"], "--extra")])
def test_bad_input_is_one_error(tmp_path, capsys, extra, msg):
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"id": "a", "prompt": "hi"}\n')
    args = ["--pool", str(_pool(tmp_path)), "--stream", str(stream), "--head", "sql-eagle3", "--out",
            str(tmp_path / "out"), *extra]
    assert cli(shift._main, args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]
    assert cli(shift._main, ["--pool", str(tmp_path / "none"), "--stream", str(stream), "--head", "x"]) == 2


@pytest.mark.tier2
def test_a_live_run_on_the_tiny_target(tmp_path, tiny_real_target, tiny_target_info, capsys):
    pool = head_and_suffix_pool(tmp_path / "pool", tiny_real_target, tiny_target_info)
    stream = tmp_path / "python_four.jsonl"
    stream.write_text("".join(json.dumps({"id": f"r{i}", "prompt": f"Write a Python function number {i}."}) + "\n"
                              for i in range(4)))
    out = tmp_path / "out"
    assert shift.main(["--target", tiny_target_info.path, "--pool", str(pool), "--head", "sql-eagle3", "--stream",
                       str(stream), "--window", "2", "--max-new-tokens", "4", "--out", str(out),
                       "--adapt", "trainer.batch=1", "trainer.holdout_every=0", "process.export_every=0",
                       "--extra", "slow:trainer.batch=2,process.export_every=0"]) == 0
    res = json.loads((out / "results.json").read_text())
    assert list(res["variants"]) == ["frozen", "adapted", "slow"] and "python-eagle3" in res["own_missing"]
    for name, r in res["variants"].items():
        assert r["member"] == "sql-eagle3" and r["requests"] == 4 and len(r["mat_windows"]) == 2, name
        assert all(m >= 1.0 for m in r["mat_windows"]) and r["scrape_agrees"], name
    assert res["variants"]["frozen"]["rounds"] == 0 and res["variants"]["adapted"]["rounds"] >= 1
    assert 1 <= res["variants"]["slow"]["rounds"] <= 2  # its own overrides: rounds of 2 records
    assert res["ratios"]["mat_last_vs_own"] is None and res["ratios"]["mat_last_vs_frozen"] > 0
    assert (out / "mat.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "frozen" in capsys.readouterr().out
