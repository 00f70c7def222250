"""benchmarks.suffix_index on a small corpus: its figures are the index's own, and the soak stays under the cap."""

from benchmarks.suffix_index import main


def test_small_run(capsys):
    import json

    assert main(["--tokens", "20000", "--proposals", "20", "--soak", "30"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["tokens"] >= 20000 and 16.0 < res["bytes_per_token"] < 16.1  # int64 tokens (+ SEPs) and suffix array
    assert 0 < res["proposal_ms_median"] <= res["proposal_ms_p99"] and res["mean_proposal_tokens"] > 0
    assert 0 < res["tree_ms_median"] <= res["tree_ms_p99"] and res["mean_tree_nodes"] >= res["mean_proposal_tokens"]
    assert res["soak_peak_tokens"] == 30 * 200  # far below the 1M cap: nothing evicted
