"""`training.evaluate.write_eval`: a fresh evaluation becomes the drafter's exported one, in its draftpool.json and
its pool.json entry, other fields and entries untouched."""

import json

from training.evaluate import EXPORTED, write_eval


def test_write_eval_updates_the_drafter_and_its_pool_entry(tmp_path):
    pool = tmp_path / "pool"
    (pool / "sql-eagle3").mkdir(parents=True)
    old = {"kind": "eagle3", "eval": {"top1_per_step": [0.1]}}
    (pool / "sql-eagle3" / "draftpool.json").write_text(json.dumps(old))
    manifest = {"format": "draftpool-pool/1", "drafters": {"sql-eagle3": {"path": "sql-eagle3", "kind": "eagle3"},
                                                           "math-eagle3": {"path": "math-eagle3", "kind": "eagle3"}}}
    (pool / "pool.json").write_text(json.dumps(manifest))
    res = {k: [0.5] for k in EXPORTED} | {"positions": 10}
    write_eval(pool / "sql-eagle3", res)
    meta = json.loads((pool / "sql-eagle3" / "draftpool.json").read_text())
    assert meta["kind"] == "eagle3" and meta["eval"] == {k: [0.5] for k in EXPORTED}
    after = json.loads((pool / "pool.json").read_text())
    assert after["drafters"]["sql-eagle3"]["eval"] == meta["eval"]
    assert after["drafters"]["math-eagle3"] == manifest["drafters"]["math-eagle3"]
