"""The data-generation throughput benchmark on the HF and engine backends (vLLM is opt-in): each setting generates its
own data through the users' code path, tok/s is computed from what was generated, answers are compared with the first
setting's, and the physical frame is computed from the model's shapes and a measured rate."""

import json

import pytest

from benchmarks.datagen_backends import main, prefix_share


def test_prefix_share():
    assert prefix_share([1, 2, 3, 4], [1, 2, 9, 4]) == 0.5
    assert prefix_share([1, 2], [1, 2]) == 1.0 and prefix_share([], []) == 1.0
    assert prefix_share([1, 2], [1, 2, 3, 4]) == 0.5


@pytest.mark.tier2
def test_settings_side_by_side(tmp_path, target_info):
    out = tmp_path / "bench"
    report = main(["--prompts", "3", "--max-new-tokens", "6", "--hf-batch", "1,3", "--engine-slots", "2",
                   "--vllm-seqs", "", "--out", str(out)])
    rows = {r["setting"]: r for r in report["rows"]}
    assert set(rows) == {"hf-b1", "hf-b3", "engine-s2"} and set(report["best_ratio"]) == {"engine/hf"}
    assert rows["hf-b1"]["identical"] == 1.0 and rows["hf-b1"]["prefix_share"] == 1.0
    assert rows["engine-s2"]["identical"] == 1.0 and rows["engine-s2"]["first_differences"] == {}
    engine = rows["engine-s2"]
    # every prompt token runs once (the shared prefix once for all) and every answer token but the last
    assert engine["tokens"] - 3 < engine["rows"] < engine["tokens"] + 3 * 200
    frame = report["physical_frame"]
    assert frame["body_flops_per_row"] == 2 * 30 * (576 * (576 + 2 * 192) + 576 * 576 + 3 * 576 * 1536)
    assert frame["head_flops_per_token"] == 2 * 576 * 49152
    want = engine["tokens"] / (engine["rows"] * frame["body_flops_per_row"] / frame["body_flop_s"]
                               + engine["tokens"] * frame["head_flops_per_token"] / frame["head_flop_s"])
    assert abs(frame["ceiling_tok_s"] - want) < 1e-6 * want
    for name, r in rows.items():
        log = json.loads((out / name / "runs.jsonl").read_text().splitlines()[-1])
        assert r["tokens"] == log["new_tokens"] and 3 <= r["tokens"] <= 18 and log["samples"] == 3
        assert r["tok_s"] == r["tokens"] / r["generate_s"]
    assert json.loads((out / "results.json").read_text())["rows"] == report["rows"]
    assert "hf-b3" in (out / "table.md").read_text()
