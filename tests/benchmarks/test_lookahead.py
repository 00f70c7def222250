"""The lookahead benchmark on a tiny stream with a step drafter cut from the tiny real-vocabulary target (the
benchmark's bookkeeping, not its figures): every method's rows and summary (steps per round, accepted length, speedup
against the target-alone row of the same run, accuracy with its interval, agreement), the Online-LR trainer's
versions reaching the served drafter, the plot; bad methods refused."""

import json

import pytest

from benchmarks.lookahead import main, parse_method, wilson
from tests.stubs import cut_step_pool


@pytest.fixture(scope="module")
def step_pool(tmp_path_factory, tiny_real_target, tiny_target_info):
    return cut_step_pool(tmp_path_factory.mktemp("bench-lookahead") / "pool", tiny_real_target, tiny_target_info)


@pytest.mark.tier2
def test_bench_rows_summary_and_plot(tmp_path, step_pool, tiny_target_info):
    out = tmp_path / "out"
    png = out / "lookahead.png"
    assert main(["--target", tiny_target_info.name, "--drafter", str(step_pool / "math-llama68m"),
                 "--methods", "target,lr,online-lr:1e-4",
                 "--stream", "2", "--other", "", "--max-new-tokens", "24", "--gamma", "2", "--judge", "exact",
                 "--max-step-tokens", "12", "--round-every", "1", "--holdout-every", "0", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())["domains"]["math-problems"]
    assert set(res) == {"target", "lr", "online-lr:1e-4"}
    assert res["target"]["speedup"] == 1.0 and 0 <= res["target"]["accuracy"] <= 1
    for m in ("lr", "online-lr:1e-4"):
        s = res[m]
        assert s["rounds"] >= 2 and 0 <= s["accept_ratio"] <= 1 and s["tok_s"] > 0
        assert s["speedup"] == pytest.approx(s["tok_s"] / res["target"]["tok_s"])
        assert 0 <= s["agreement"] <= 1 and s["agreement_ci95"][0] <= s["agreement"] <= s["agreement_ci95"][1]
    s = res["online-lr:1e-4"]  # the trainer ran DPO rounds on the stream's pairs (at the latest when stopped)
    assert s["pairs"] >= 1 and s["trainer_rounds"] >= 1 and s["trainer_faults"] == 0
    rows = [json.loads(line) for line in (out / "requests.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and {r["method"] for r in rows} == set(res)
    assert png.is_file() and png.stat().st_size > 1000
    assert "| online-lr:1e-4 |" in (out / "table.md").read_text()


def test_bad_methods_and_the_interval():
    assert main(["--methods", "lr,target"]) == 2
    assert main(["--methods", "target,lr:1e-3"]) == 2
    assert parse_method("online-lr:3e-5") == ("online-lr", 3e-5)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35  # 0 of 10: the upper end of the 95% interval is ~0.28
