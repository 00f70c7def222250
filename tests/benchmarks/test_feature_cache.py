"""The feature-cache benchmark: both paths cache the same sequences through training's code, and the slot forward's
features and teacher agree with the transformers forward's."""

from __future__ import annotations

import pytest

from benchmarks.feature_cache import main
from tests.shared import tiny_sql_data

pytestmark = pytest.mark.tier2  # real-target data generation and feature caches


def test_slot_and_transformers_caches_agree(tmp_path, target_info, target):
    data = tiny_sql_data(tmp_path / "data", target_info, target,
                         "max_prompts_per_split=5", "max_held_out_prompts=1",
                         "max_new_tokens=16", "train_temperatures=[0.0]", "held_out_temperatures=[0.0]")
    report = main(["--data", str(data), "--sequences", "5", "--rows-per-pass", "200", "--out", str(tmp_path / "o")])
    assert report["sequences"] == 5 and set(report["seconds"]) == {"slot", "transformers"}
    for name in ("slot", "transformers"):
        assert len(list((tmp_path / "o" / name).glob("*.safetensors"))) == 5
    assert report["max_abs_difference"]["lse"] < 1e-3 and report["max_abs_difference"]["last"] < 1e-3
    assert report["top1_differ_share"] == 0.0
