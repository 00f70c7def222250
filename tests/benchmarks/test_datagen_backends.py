"""The data-generation throughput benchmark on the HF backend (vLLM is opt-in): each setting generates its own data
through the users' code path, tok/s is computed from what was generated, and answers are compared with batch 1's."""

import json

from benchmarks.datagen_backends import main, prefix_share


def test_prefix_share():
    assert prefix_share([1, 2, 3, 4], [1, 2, 9, 4]) == 0.5
    assert prefix_share([1, 2], [1, 2]) == 1.0 and prefix_share([], []) == 1.0
    assert prefix_share([1, 2], [1, 2, 3, 4]) == 0.5


def test_hf_settings_side_by_side(tmp_path, target_info):
    out = tmp_path / "bench"
    report = main(["--prompts", "3", "--max-new-tokens", "6", "--hf-batch", "1,3", "--vllm-seqs", "",
                   "--out", str(out)])
    rows = {r["setting"]: r for r in report["rows"]}
    assert set(rows) == {"hf-b1", "hf-b3"} and report["best_ratio"] is None
    assert rows["hf-b1"]["identical"] == 1.0 and rows["hf-b1"]["prefix_share"] == 1.0
    for name, r in rows.items():
        log = json.loads((out / name / "runs.jsonl").read_text().splitlines()[-1])
        assert r["tokens"] == log["new_tokens"] and 3 <= r["tokens"] <= 18 and log["samples"] == 3
        assert r["tok_s"] == r["tokens"] / r["generate_s"]
    assert json.loads((out / "results.json").read_text())["rows"] == report["rows"]
    assert "hf-b3" in (out / "table.md").read_text()
