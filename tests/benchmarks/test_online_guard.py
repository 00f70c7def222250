"""benchmarks.online_guard: what each variant name trains with, and names it refuses."""

import pytest

from benchmarks.online_guard import read_stream, variant_config
from draftpool.config import ConfigError
from online.trainer.config import TrainerConfig


def test_variant_names_set_the_trainer_settings_they_name():
    base = TrainerConfig()
    assert variant_config("static") is None
    off = variant_config("off")
    assert off.holdout_every == 0 and off.lr == base.lr
    old = variant_config("off:lr1e-3")
    assert old.holdout_every == 0 and old.lr == 1e-3
    guarded = variant_config("lr3e-4:m0.02:h5")
    assert (guarded.lr, guarded.guard_margin, guarded.holdout_every) == (3e-4, 0.02, 5)
    assert guarded.holdout_size == base.holdout_size  # the rest are the serving defaults


@pytest.mark.parametrize("name", ["lr", "x1", "lr1e-4:h0.5", "on:lr1e-3"])
def test_bad_variant_names_are_refused(name):
    with pytest.raises(ConfigError, match="--variants"):
        variant_config(name)


def test_the_shipped_in_domain_stream_reads(tmp_path):
    from benchmarks.online_guard import ROOT

    rows = read_stream(ROOT / "benchmarks/streams/sql_three_schemas.jsonl")
    assert len(rows) == 60 and len({r[0] for r in rows}) == 60
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ConfigError, match="no requests"):
        read_stream(tmp_path / "empty.jsonl")
