"""benchmarks.suffix_index --track on a small suffix member built here over the embedded target's tokenizer: its
figures are there, and both passes keep the same chains."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.suffix_index import main
from draftpool.models.suffix import flatten


@pytest.mark.parametrize("generated", ["stream", "corpus"])
def test_tracking_a_small_pool(tmp_path, capsys, target_info, generated):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(target_info.path)
    rows = tmp_path / "stream.jsonl"
    texts = ["Summarize the following notice: the pool opens at nine and closes at six on weekdays. " * 6,
             "Summarize the following memo: the lab is closed on Friday; the lab reopens on Monday. " * 6,
             "Summarize the following report: sales rose by seven percent in the third quarter. " * 6]
    rows.write_text("".join(json.dumps({"id": f"t-{i}", "prompt": t}) + "\n" for i, t in enumerate(texts)))
    seqs = [tok(t)["input_ids"] for t in texts]
    member = tmp_path / "member"
    member.mkdir()
    (member / "config.json").write_text(json.dumps({"vocab_size": target_info.vocab_size, "n_min": 2, "n_max": 8,
                                                    "depth": 16, "segment_tokens": 100}))
    np.savez(member / "index.npz", segment_00000=flatten(seqs[:2]), recent=flatten(seqs[2:]))
    assert main(["--track", str(member), "--members", "2", "--prompt-tokens", "120", "--new-tokens", "30",
                 "--generated", generated, "--stream", str(rows), "--tokenizer", target_info.path]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["members"] == "2 suffix + 1 ngram" and res["segments"] == 2 and res["new_tokens"] == 30
    for run in ("first", "again"):
        r = res[run]
        assert r["ms_per_token"] > 0 and 0 < r["ms_per_token_median_chunk"] <= r["ms_per_token_p95_chunk"]
        assert r["suffix_member_ms_per_token"] > 0 and r["ngram_member_ms_per_token"] > 0
    assert res["first"]["chains_sha256"] == res["again"]["chains_sha256"]
    assert res["lookup_bytes_per_token"] > 0
