"""benchmarks.learning_curve on tiny data (of the tiny real-vocabulary target): every variant trains for the same
(tiny) budget through train_drafter.py, each writes held-out curve rows against training time and tokens, the table
and the plot are written, one feature cache serves every variant, and a finished variant is read back, not
retrained, unless its recipe changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.learning_curve import main
from tests.training.test_train_drafter import on_tiny, tiny_data, tiny_data_root  # noqa: F401 - a shared fixture


@pytest.mark.tier2
def test_two_variants_then_read_back(tiny_data_root, tiny_target_info, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "curves"
    png = out / "learning_curves.png"
    extra = [*tiny_data(tiny_data_root), on_tiny(tiny_target_info),
             "train.batch_size=2", "train.max_len=96", "eval.max_sequences=3", "eval.depth=3",
             "eagle3.draft_vocab_size=1024"]
    args = ["--minutes", "0.04", "--every", "0.01", "--variants", "ttt3,accept-loss", "--out", str(out), *extra]
    assert main(args) == 0
    table = capsys.readouterr().out
    res = json.loads((out / "results.json").read_text())
    assert [r["variant"] for r in res["summary"]] == ["ttt3", "accept-loss"]
    for name in ("ttt3", "accept-loss"):
        rows = res["curves"][name]
        assert rows and rows[-1]["step"] == json.loads((out / name / "budget.json").read_text())["steps"]
        assert all(a["train_seconds"] < b["train_seconds"] and a["tokens"] < b["tokens"]
                   for a, b in zip(rows, rows[1:]))
        assert 0 <= rows[-1]["top1_per_step"][0] <= 1 and rows[-1]["empirical_greedy_chain_length"] >= 1
        cached = out / name / "target_cache-float32"  # one shared cache (the tiny target's auto here: fp32)
        assert cached.resolve() == (out / "target_cache-float32").resolve() and list(cached.glob("*.safetensors"))
    assert "| ttt3 |" in table and "| accept-loss |" in table and png.stat().st_size > 0
    assert "| ttt3 |" in (out / "table.md").read_text()

    stamp = (out / "ttt3" / "curve.jsonl").stat().st_mtime_ns
    assert main(args) == 0  # the same settings: read back
    assert (out / "ttt3" / "curve.jsonl").stat().st_mtime_ns == stamp
    assert "[learning_curve] ttt3" not in capsys.readouterr().err  # the progress log names a variant it trains


@pytest.mark.tier2
def test_an_edited_recipe_retrains(tiny_data_root, tiny_target_info, tmp_path, capsys):  # noqa: F811
    recipe = tmp_path / "eagle3.yaml"
    shutil.copy(Path(__file__).parents[2] / "recipes/sql/eagle3.yaml", recipe)
    out = tmp_path / "curves"
    args = ["--minutes", "0.02", "--every", "0.02", "--variants", "ttt3", "--recipe", str(recipe), "--out", str(out),
            *tiny_data(tiny_data_root), on_tiny(tiny_target_info), "train.batch_size=2", "train.max_len=96",
            "eval.max_sequences=2", "eval.depth=2", "eagle3.draft_vocab_size=1024"]
    assert main(args) == 0 and "[learning_curve] ttt3" in capsys.readouterr().err  # trained
    assert json.loads((out / "ttt3" / "config.json").read_text())["eagle3"]["step_weight"] == 0.8
    assert main(args) == 0 and "[learning_curve] ttt3" not in capsys.readouterr().err  # unchanged: read back
    recipe.write_text(recipe.read_text().replace("step_weight: 0.8", "step_weight: 0.5"))
    assert main(args) == 0 and "[learning_curve] ttt3" in capsys.readouterr().err  # same overrides, new recipe
    assert json.loads((out / "ttt3" / "config.json").read_text())["eagle3"]["step_weight"] == 0.5


def test_bad_arguments_one_error(capsys):
    assert main(["--variants", "ttt3,nope"]) == 2
    assert "unknown variant" in capsys.readouterr().err
    assert main(["--minutes", "0"]) == 2
    assert "must be > 0" in capsys.readouterr().err
