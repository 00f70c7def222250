"""The training side of the kind registry: --drafter choices, option sections and setups come from the kinds'
declarations; the `llama68m` name is an alias of the `llama` kind (one deprecation line) whose recipes and pool
folders keep the name llama68m."""

from __future__ import annotations

import dataclasses
import logging
import typing
from pathlib import Path

import pytest

from data_gen.domains import ALL_DOMAINS
from draftpool.config import ConfigError, load_config
from draftpool.models import KINDS
from training import kinds
from training.config import TrainConfig
from training.kinds import KindTraining, drafter_names, training_for, trainings

ROOT = Path(__file__).resolve().parents[2]


def test_drafter_choices_are_the_registry_kinds_then_their_aliases():
    assert list(trainings()) == [k for k, v in KINDS.items() if v.trainer] == ["eagle3", "llama", "suffix"]
    assert drafter_names() == ("eagle3", "llama", "suffix", "llama68m")
    assert typing.get_args(typing.get_type_hints(TrainConfig)["drafter"]) == drafter_names()


def test_the_config_sections_are_exactly_the_registry_options():
    hints = typing.get_type_hints(TrainConfig)
    sections = {f.name for f in dataclasses.fields(TrainConfig) if hasattr(hints[f.name], "validate")
                and f.name not in ("data", "train", "eval", "export")}
    assert sections == {t.section for t in trainings().values()}
    for t in trainings().values():
        assert hints[t.section] is t.options and isinstance(t, KindTraining)


def test_each_kind_validates_its_own_options():
    for override, match in (("eagle3.ttt_steps=0", "eagle3.ttt_steps must be >= 1"),
                            ("llama.lora_r=0", "llama.lora_r must be >= 1"),
                            ("suffix.n_min=9", "1 <= n_min <= n_max")):
        with pytest.raises(ConfigError, match=match):
            load_config(TrainConfig, None, ["domain=sql", override])


def test_llama68m_is_an_alias_with_one_deprecation_line(caplog, monkeypatch):
    monkeypatch.setattr(kinds, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="training"):
        assert training_for("llama68m") is training_for("llama") is trainings()["llama"]
        training_for("llama68m")
        cfg = load_config(TrainConfig, None, ["domain=sql", "drafter=llama68m"])
    lines = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert lines == ["--drafter llama68m is deprecated: it is the 'llama' kind, use --drafter llama (recipes and "
                     "pool folders keep the name llama68m)"]
    assert cfg.drafter == "llama68m" and cfg.folder() == "llama68m"
    assert load_config(TrainConfig, None, ["domain=sql", "drafter=llama"]).run_dir_for("s") == \
        "runs/train/s/sql-llama68m"  # both names train into the same folders
    with pytest.raises(ValueError, match="unknown drafter 'medusa'; choose one of eagle3, llama, suffix, llama68m"):
        training_for("medusa")


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_every_kind_has_its_recipe_per_domain(domain):
    for t in trainings().values():
        assert (ROOT / "recipes" / domain / f"{t.folder}.yaml").is_file(), (domain, t.folder)


def test_export_options_go_to_the_kind_that_takes_them():
    cfg = load_config(TrainConfig, None, ["domain=sql", "export.speculators=true", "export.speculative_tokens=3"])
    assert trainings()["eagle3"].write_options(cfg) == {"speculators": True, "speculative_tokens": 3}
    assert trainings()["llama"].write_options(cfg) == {} and trainings()["suffix"].write_options(cfg) == {}
    assert trainings()["eagle3"].warm_start == "eagle3.init_from"
    assert not trainings()["llama"].warm_start and not trainings()["suffix"].warm_start
