"""benchmarks.online_generalize: the variant grammar, the split of a stream as a server meets it, one clear error for
bad input, and a run on the tiny real-vocabulary target (the static row is the head's own acceptance, measured)."""

import json

import pytest

from benchmarks import online_generalize as gen
from benchmarks.harness import cli
from draftpool.config import ConfigError
from tests.stubs import head_and_suffix_pool


def test_variants_turn_the_guard_off_and_name_the_weights_that_train():
    assert gen.parse_variant("static") == (None, None)
    cfg, only = gen.parse_variant("lr1e-3:only=lm_head:e4")
    assert (cfg.lr, cfg.epochs, cfg.holdout_every, only) == (1e-3, 4, 0, "lm_head")
    cfg, only = gen.parse_variant("lr1e-4:v1")
    assert cfg.vocab_every == 1 and only is None
    for bad in ("static:only=x", "lr1e-3:only=a:only=b", "lr1e-3:only=(", "lrx"):
        with pytest.raises(ConfigError):
            gen.parse_variant(bad)


def test_the_split_is_the_past_s_even_and_odd_records_and_the_last_group():
    parts = gen.split(list(range(10)), 4)
    assert parts == {"trained": [0, 2, 4], "same": [1, 3, 5], "new": [6, 7, 8, 9]}
    with pytest.raises(ConfigError, match="at least"):
        gen.split(list(range(9)), 4)


def test_bad_input_is_one_error(tmp_path, capsys):
    assert cli(gen._main, ["--variants", "static:only=x", "--out", str(tmp_path / "o")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_a_run_on_the_tiny_target(tmp_path, tiny_real_target, tiny_target_info, capsys):
    from draftpool.models import get_kind
    from online.trainer.token_trainer import held_out_acceptance, versioned

    pool = head_and_suffix_pool(tmp_path / "pool", tiny_real_target, tiny_target_info)
    stream = tmp_path / "python_six.jsonl"
    stream.write_text("".join(json.dumps({"id": f"r{i}", "prompt": f"Write a Python function number {i}."}) + "\n"
                              for i in range(6)))
    out = tmp_path / "out"
    assert gen.main(["--target", tiny_target_info.path, "--pool", str(pool), "--stream", str(stream), "--group", "2",
                     "--max-new-tokens", "6", "--variants", "static,lr1e-2:b1:only=lm_head", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["records"] == {"trained": 2, "same": 2, "new": 2} and list(res["variants"]) == [
        "static", "lr1e-2:b1:only=lm_head"]
    # the static row is the pool head's acceptance on the new group, measured here again from the cached feedback
    import torch

    from draftpool.models.eagle3 import load_eagle3

    model, _ = tiny_real_target
    head = load_eagle3(pool / "sql-eagle3", tiny_target_info, model.get_input_embeddings().weight)
    fbs = [torch.load(out / "feedback-python_six" / f"r{i}.pt", weights_only=False) for i in (4, 5)]
    assert res["variants"]["static"]["new"] == round(held_out_acceptance("eagle3", head, versioned(
        "eagle3", head, False), fbs), 4)
    assert get_kind("eagle3").aux_layers(head) is not None and "new subject" in capsys.readouterr().out
