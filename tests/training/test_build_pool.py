"""build_pool.py: a tiny two-domain pool end to end (data, heads, manifest, matrix), resume per drafter, bad input."""

import json

import pytest

import training.build_pool as build_pool


def tiny(tmp_path, domains="sql,python"):
    return ["--domains", domains, f"data.gen.data_dir={tmp_path}/data/{{domain}}", "data.gen.max_prompts_per_split=3",
            "data.gen.max_new_tokens=8", "data.gen.train_temperatures=[0.0]", "data.gen.batch_size=3",
            "train.max_steps=1", "train.batch_size=2", "eval.max_sequences=2", "eagle3.target_cache=false",
            f"export.pools_dir={tmp_path}/pools", f"run_dir={tmp_path}/runs/{{domain}}-{{drafter}}"]


def test_tiny_pool_end_to_end_and_resume(tmp_path, capsys):
    assert build_pool.main(tiny(tmp_path)) == 0
    manifest = json.loads(next((tmp_path / "pools").glob("*/pool.json")).read_text())
    assert set(manifest["drafters"]) == {"sql-eagle3", "python-eagle3"}
    assert all(e["build"]["profile"] == "quick" for e in manifest["drafters"].values())
    m = manifest["matrix"]
    assert set(m) == {"sql", "python"} and all(set(row) == {"sql-eagle3", "python-eagle3"} for row in m.values())
    for row in m.values():
        for cell in row.values():
            assert 1.0 <= cell["empirical_greedy_chain_length"] <= 8.0 and len(cell["top1_per_step"]) == 7
    for entry in manifest["drafters"].values():  # the exported eval carries the rank rates `auto` weighs trees with
        ev = entry["eval"]
        assert [row[0] for row in ev["topk_per_step"]] == pytest.approx(ev["top1_per_step"])
    capsys.readouterr()
    assert build_pool.main(tiny(tmp_path)) == 0  # everything built with this signature: nothing retrained
    out = capsys.readouterr().out
    assert out.count("already built with this signature, skipped") == 2 and "training (" not in out


@pytest.mark.parametrize("args,msg", [(["--drafters", "medusa"], "--drafters"), (["--domains", "cooking"], "cooking"),
                                      (["--oops"], "key=value"), (["--matrix-only", "export.pools_dir=/nonexistent"],
                                                                  "no pool")])
def test_bad_input(args, msg, capsys):
    assert build_pool.main(args) == 2
    assert msg in capsys.readouterr().err
