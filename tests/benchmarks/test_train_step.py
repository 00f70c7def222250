"""benchmarks.train_step on tiny data of the tiny real-vocabulary target: the step-cost levers change what a step
costs, not what it learns (the compact teacher and the loss-rows path give the first variant's losses), and a
TTT-depth variant trains fewer steps."""

from __future__ import annotations

import json

import pytest

from benchmarks.train_step import main
from tests.training.test_train_drafter import on_tiny, tiny_data, tiny_data_root  # noqa: F401 - a shared fixture


@pytest.mark.tier2
def test_levers_keep_the_losses(tiny_data_root, tiny_target_info, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "step"
    args = ["--steps", "2", "--variants", "before,new,ttt3", "--out", str(out),
            *tiny_data(tiny_data_root), on_tiny(tiny_target_info),
            f"run_dir={tmp_path}/run", "train.batch_size=2", "train.max_len=96", "eagle3.ttt_steps=4",
            "eagle3.draft_vocab_size=1024"]
    assert main(args) == 0
    table = capsys.readouterr().out
    res = {r["variant"]: r for r in json.loads((out / "results.json").read_text())["results"]}
    assert list(res) == ["before", "new", "ttt3"]
    before = res["before"]["losses"]
    assert len(before) == 3 and before[0] != before[-1]  # one warm-up + 2 timed steps, and the head learns
    assert res["new"]["ttt_steps"] == 4  # compact teacher + loss rows only, same TTT depth: the same losses
    assert max(abs(a - b) for a, b in zip(res["new"]["losses"], before)) < 1e-4
    assert res["ttt3"]["ttt_steps"] == 3 and res["ttt3"]["losses"] != before  # a shallower loss is another loss
    assert all(r["seconds_per_step"] > 0 for r in res.values())
    assert "| before |" in table and "| ttt3 |" in table and "| ttt3 |" in (out / "table.md").read_text()


def test_unknown_variant_one_error(capsys):
    assert main(["--variants", "new,nope"]) == 2
    assert "unknown variant" in capsys.readouterr().err
