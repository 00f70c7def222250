"""benchmarks.soak on a few requests: the real server (a subprocess) with a random head and a suffix member, serving
the tiny random Llama over the real vocabulary (the report's bookkeeping: no figure of the target's is asserted); the
report's fields are there and agree with each other (no timing or memory threshold is asserted)."""

import json

import pytest

from benchmarks.soak import fit_slope, index_cap_cost, main
from tests.stubs import head_and_suffix_pool


@pytest.fixture(scope="module")
def pool(tmp_path_factory, tiny_real_target, tiny_target_info):
    return head_and_suffix_pool(tmp_path_factory.mktemp("soak") / "pool", tiny_real_target, tiny_target_info)


@pytest.mark.tier2
def test_a_short_soak_reports_consistent_fields(tmp_path, pool, tiny_target_info, capsys):
    out = tmp_path / "soak"
    rep = main(["--requests", "4", "--warmup", "2", "--every", "1", "--max-tokens", "4", "--pool", str(pool),
                "--out", str(out), "--out-dir", str(tmp_path / "run"), f"serve.target={tiny_target_info.name}",
                "serve.kinds=[eagle3,suffix]",
                "trainer.batch=1", "trainer.holdout_every=0", "process.export_every=0",
                f"serve.auto_costs={tmp_path}/auto_costs.json"])
    assert json.loads((out / "results.json").read_text())["statuses"] == rep["statuses"] == {"200": 4}
    assert rep["error"] is None and rep["exit_code"] == 0 and not rep["killed"] and rep["sent"] == 4
    assert rep["partial"] is False  # the file was rewritten at every sample, then whole
    assert [s["requests"] for s in rep["samples"]] == [0, 1, 2, 3, 4]
    assert all(s["server_rss"] > 0 for s in rep["samples"]) and rep["samples"][-1]["trainer_rss"] > 0
    for who in ("server", "trainer"):
        r = rep[who]
        assert len(r["windows"]) == 2 and [w["from"] for w in r["windows"]] == [2, 3]
        assert r["end_mb"] == rep["samples"][-1][f"{who}_rss"] / 2**20
        assert r["warmup_end_mb"] == rep["samples"][2][f"{who}_rss"] / 2**20
        assert r["growth_after_warmup_mb"] == pytest.approx(r["end_mb"] - r["warmup_end_mb"])
        assert r["slope_kb_per_request"] is not None
    summary = rep["server_summary"]
    assert summary["served"] == 4 and summary["failed"] == 0 and summary["stopped_by"] == "SIGTERM"
    assert summary["indexed_answers"] == 4  # the suffix member indexed every answer
    assert rep["usage"]["completion_tokens"] <= 4 * 4 and rep["indexed_tokens"] == sum(rep["usage"].values())
    table = capsys.readouterr().out
    assert "slope after warm-up, KB/request" in table and "| 2-3 |" in table
    assert "| 2-3 |" in (out / "table.md").read_text()


def test_slope_and_the_index_at_its_cap():
    assert fit_slope([0, 1, 2, 3], [5, 7, 9, 11]) == pytest.approx(2.0)
    assert fit_slope([1], [1]) is None
    cap = index_cap_cost(5_000, 1_024, 8)  # past its cap: evictions happen at any size
    assert cap["evicted_tokens"] > 0 and cap["held_tokens"] <= cap["max_tokens"] < cap["added_tokens"]
    assert 16.0 < cap["bytes_per_held_token"] < 16.2  # int64 tokens (+ SEPs) and suffix array per token
