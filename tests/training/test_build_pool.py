"""build_pool.py: a tiny two-domain pool end to end (data, heads and suffix indexes, manifest, matrix), resume per
drafter, bad input."""

import json

import pytest

import training.build_pool as build_pool


def tiny(tmp_path, domains="sql,python"):
    return ["--domains", domains, f"data.gen.data_dir={tmp_path}/data/{{domain}}", "data.gen.max_prompts_per_split=3",
            "data.gen.max_new_tokens=8", "data.gen.train_temperatures=[0.0]", "data.gen.batch_size=3",
            "train.max_steps=1", "train.batch_size=2", "eval.max_sequences=2", "eagle3.target_cache=false",
            f"export.pools_dir={tmp_path}/pools", f"run_dir={tmp_path}/runs/{{domain}}-{{drafter}}"]


@pytest.mark.tier2
def test_tiny_pool_end_to_end_and_resume(tmp_path, capsys):
    assert build_pool.main(tiny(tmp_path, "sql,general")) == 0
    out = capsys.readouterr().out
    assert out.index("general-eagle3: training") < out.index("sql-eagle3: training")  # general first
    pool = next((tmp_path / "pools").glob("*/pool.json")).parent
    manifest = json.loads((pool / "pool.json").read_text())
    names = {"sql-eagle3", "general-eagle3", "sql-suffix", "general-suffix"}  # default: heads and suffix indexes
    assert set(manifest["drafters"]) == names
    assert manifest["drafters"]["sql-suffix"]["kind"] == "suffix" and (pool / "sql-suffix" / "index.npz").is_file()
    assert all(e["build"]["profile"] == "quick" for e in manifest["drafters"].values())
    # the quick profile's specialist starts from the general head, trained 3 TTT steps, no separate eval
    assert manifest["drafters"]["sql-eagle3"]["build"]["init_from"] == str(pool / "general-eagle3")
    assert "init_from" not in manifest["drafters"]["general-eagle3"]["build"]
    sql_cfg = json.loads((pool / "sql-eagle3" / "draftpool.json").read_text())["train_config"]
    assert sql_cfg["eagle3"]["init_from"] == str(pool / "general-eagle3") and sql_cfg["eagle3"]["ttt_steps"] == 3
    assert sql_cfg["eval"]["skip"] is True
    m = manifest["matrix"]
    assert set(m) == {"sql", "general"} and all(set(row) == names for row in m.values())
    spec = manifest["specialisation"]["eagle3"]
    assert spec["domains"] == ["sql"] and spec["specialists"] == pytest.approx(
        m["sql"]["sql-eagle3"]["empirical_greedy_chain_length"], abs=1e-4)
    assert spec["ratio"] == pytest.approx(spec["specialists"] / spec["general"], abs=1e-3)
    for row in m.values():
        for cell in row.values():
            assert 1.0 <= cell["empirical_greedy_chain_length"] <= 8.0 and len(cell["top1_per_step"]) == 7
    for name, entry in manifest["drafters"].items():  # the exported eval is the own-domain matrix cell, with the
        ev = entry["eval"]  # rank rates `auto` weighs trees with, in pool.json and in the drafter's own folder
        assert [row[0] for row in ev["topk_per_step"]] == pytest.approx(ev["top1_per_step"])
        assert ev["top1_per_step"] == m[entry["domain"]][name]["top1_per_step"]
        assert json.loads((pool / name / "draftpool.json").read_text())["eval"] == ev
    assert build_pool.main(tiny(tmp_path, "sql,general")) == 0  # all built with this signature: nothing retrained
    out = capsys.readouterr().out
    assert out.count("already built with this signature, skipped") == 4 and "training (" not in out


@pytest.mark.tier2
def test_low_rank_specialists_are_adapters_over_the_pools_general_head(tmp_path, capsys):
    args = tiny(tmp_path, "sql,general") + ["--drafters", "eagle3", "--specialists", "low_rank"]
    assert build_pool.main(args) == 0
    pool = next((tmp_path / "pools").glob("*/pool.json")).parent
    manifest = json.loads((pool / "pool.json").read_text())
    sql = json.loads((pool / "sql-eagle3" / "draftpool.json").read_text())
    assert "eagle3.finetune=lora" in manifest["drafters"]["sql-eagle3"]["build"]["overrides"]
    assert manifest["drafters"]["sql-eagle3"]["finetune"] == "lora" and (pool / "sql-eagle3" / "low_rank" /
                                                                         "adapter.safetensors").is_file()
    assert "adapter" in sql and "adapter" not in json.loads((pool / "general-eagle3" / "draftpool.json").read_text())
    assert set(manifest["matrix"]["sql"]) == {"sql-eagle3", "general-eagle3"}
    # without the general head there is nothing to adapt: one clear error
    assert build_pool.main(tiny(tmp_path / "x", "sql") + ["--drafters", "eagle3", "--specialists", "low_rank"]) == 2
    assert "needs the general head" in capsys.readouterr().err


@pytest.mark.parametrize("args,msg", [(["--drafters", "medusa"], "--drafters"), (["--domains", "cooking"], "cooking"),
                                      (["--oops"], "key=value"), (["--matrix-only", "export.pools_dir=/nonexistent"],
                                                                  "no pool")])
def test_bad_input(args, msg, capsys):
    assert build_pool.main(args) == 2
    assert msg in capsys.readouterr().err


def test_a_changed_profile_changes_the_build_signature(monkeypatch):
    """A pool entry built under other profile settings is rebuilt, not skipped as already built."""
    before = build_pool.build_signature("quick", ["x=1"])
    changed = {**build_pool.PROFILES["quick"], "specialist": ["train.max_steps=7"]}
    monkeypatch.setitem(build_pool.PROFILES, "quick", changed)
    assert build_pool.build_signature("quick", ["x=1"]) != before
