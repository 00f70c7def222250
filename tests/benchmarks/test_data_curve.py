"""The data-size curve: suffix members seeded from nested answer samples of self-distilled data, evaluated on the
held-out greedy answers with the exported drafters' evaluation (the tiny real-vocabulary target's data: the curve's
bookkeeping, not the figures)."""

from __future__ import annotations

import json

import pytest

from benchmarks.data_curve import main
from tests.shared import tiny_sql_data


@pytest.mark.tier2
def test_suffix_members_from_growing_samples(tmp_path, tiny_target_info, tiny_real_target):
    data = tiny_sql_data(tmp_path / "data", tiny_target_info, tiny_real_target,
                         "max_prompts_per_split=6", "max_held_out_prompts=3",
                         "max_new_tokens=24", "train_temperatures=[0.0,1.0]", "held_out_temperatures=[0.0]")
    report = main(["--data", str(data), "--sizes", "3,6,0", "--out", str(tmp_path / "out"),
                   "--also", f"other={data}:5", "--target", tiny_target_info.name])
    points = {p["drafter"]: p for p in report["points"]}
    other = points.pop("other")  # a member from another data folder's train answers (here the same folder)
    assert other["answers"] == 5 and other["data"] == str(data)
    assert other["positions"] == points["suffix-3"]["positions"]
    assert points["suffix-3"]["indexed_tokens"] < other["indexed_tokens"] < points["suffix-6"]["indexed_tokens"]
    assert list(points) == ["suffix-3", "suffix-6", "suffix-12"]
    assert [p["answers"] for p in points.values()] == [3, 6, 12] and report["train_answers"] == 12
    tokens = [p["indexed_tokens"] for p in points.values()]
    assert tokens[0] < tokens[1] < tokens[2]
    assert all(1.0 <= p["chain"] <= 8 and 0 <= p["top1"] <= 1 for p in points.values())
    assert all(p["positions"] == points["suffix-3"]["positions"] > 0 for p in points.values())  # one held-out set
    assert json.loads((tmp_path / "out" / "results.json").read_text())["points"] == report["points"]


def test_a_bad_also_spec_is_one_clear_error(tmp_path, tiny_target_info, tiny_real_target):
    from draftpool.config import ConfigError

    data = tiny_sql_data(tmp_path / "data", tiny_target_info, tiny_real_target, "max_prompts_per_split=2",
                         "max_held_out_prompts=1", "max_new_tokens=8", "train_temperatures=[0.0]",
                         "held_out_temperatures=[0.0]")
    with pytest.raises(ConfigError, match="--also"):
        main(["--data", str(data), "--sizes", "1", "--out", str(tmp_path / "out"), "--also", f"{data}:x",
              "--target", tiny_target_info.name])


def test_per_prompt_samples_take_whole_prompts():
    from benchmarks.data_curve import per_prompt_sample

    rows = [{"id": f"p{i}-t{t}", "prompt_id": f"p{i}"} for i in range(6) for t in range(2)]
    one, two = per_prompt_sample(rows, 4, 1), per_prompt_sample(rows, 4, 2)
    assert len({r["prompt_id"] for r in one}) == 4 and len({r["prompt_id"] for r in two}) == 2
    assert len(per_prompt_sample(rows, 99, 1)) == 6  # the data runs out of prompts
