"""train_drafter.py --drafter suffix: the index is seeded from the self-distilled training split (no gradient step),
evaluated on the held-out split like a head, and exported as a pool member that loads back."""

from __future__ import annotations

import json

import pytest

import training.train_drafter as train_drafter
from data_gen.generate import load_distilled
from draftpool.pool import load_members
from tests.training.test_train_drafter import on_tiny, tiny_args, tiny_data_root  # noqa: F401 - a shared fixture

pytestmark = pytest.mark.tier2  # a train_drafter run on self-distilled data (the tiny real-vocabulary target's)


def test_suffix_member_is_built_evaluated_and_exported(tiny_data_root, tmp_path, tiny_real_target,  # noqa: F811
                                                      tiny_target_info):
    data_root, target, target_info = tiny_data_root, tiny_real_target, tiny_target_info
    assert train_drafter.main(tiny_args(data_root, tmp_path, on_tiny(target_info), drafter="suffix")) == 0
    pool = tmp_path / "pools" / target_info.slug
    manifest = json.loads((pool / "pool.json").read_text())
    entry = manifest["drafters"]["sql-suffix"]
    assert entry["kind"] == "suffix" and entry["eval"]["empirical_greedy_chain_length"] >= 1.0
    train = list(load_distilled(data_root / "sql", "train"))
    want = sum(len(r["prompt_ids"]) + len(r["response_ids"]) for r in train)
    assert entry["indexed_tokens"] == want
    assert not (tmp_path / "run-sql-suffix" / "checkpoints").exists()  # nothing was trained
    member = {m.name: m for m in load_members(pool, target_info, target[0])}["sql-suffix"]
    kind, model = member.kind, member.module
    assert kind == "suffix" and model.index.n_tokens == want
    # every training sequence is in it: its whole tail matches, up to the index's depth
    for r in train:
        seq = list(r["prompt_ids"]) + list(r["response_ids"])
        assert model.index.longest_match(seq) == min(len(seq), model.index.depth - 1)
