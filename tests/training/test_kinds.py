"""The training side of the kind registry: --drafter choices, option sections and setups come from the kinds'
declarations (training/config.py names no kind); a setup reads its own options and a context, never the config or
the orchestrator, and declares the run it needs first; the `llama68m` name is an alias of the `llama` kind (one
deprecation line) whose recipes and pool folders keep the name llama68m."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import logging
import typing
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from data_gen.domains import ALL_DOMAINS, GENERAL
from draftpool.config import ConfigError, help_text, load_config
from draftpool.models import KINDS
from training import kinds
from training.config import TrainConfig
from training.kinds import KindTraining, Prerequisite, SetupContext, drafter_names, training_for, trainings

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
    ts = trainings()
    assert ts["eagle3"].write_options(cfg.eagle3, cfg.export) == {"speculators": True, "speculative_tokens": 3}
    assert ts["llama"].write_options(cfg.llama, cfg.export) == {} == ts["suffix"].write_options(cfg.suffix, cfg.export)
    assert trainings()["eagle3"].warm_start == "eagle3.init_from"
    assert not trainings()["llama"].warm_start and not trainings()["suffix"].warm_start


def test_the_drafter_key_reads_as_before():
    """The `drafter` key's default and help come from the registry (its first kind; each kind's label, older names,
    and whether it trains): --help-config reads as it did when config.py listed the kinds by hand."""
    line = help_text(TrainConfig).splitlines()[1]
    assert line == ("  drafter = 'eagle3'  # EAGLE-3 head, independent Llama drafter (llama; llama68m is its older "
                    "name), or suffix index (no training)")
    assert [t.help for t in trainings().values()] == ["EAGLE-3 head options", "independent drafter options",
                                                      "suffix index options (seeded from the data)"]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_setups_read_their_options_and_a_context_only():
    """No kind module imports the config or the orchestrator (at any level), and the config imports no kind
    module: the sections come from the registry."""
    for path in (ROOT / "training" / "kinds").glob("*.py"):
        bad = _imports(path) & {"training.config", "training.train_drafter", "training.build_pool"}
        assert not bad, f"{path.name} imports {bad}"
    names = _imports(ROOT / "training" / "config.py")
    assert not [n for n in names if n.startswith(("training.kinds.", "draftpool.models."))], names
    for t in trainings().values():
        assert list(inspect.signature(t.setup).parameters) == ["options", "ctx"], t.kind


def _context(tmp_path: Path, domain: str) -> SetupContext:
    target = torch.nn.Linear(4, 4)  # the preset reads only the target's size (llama-tiny under 1B parameters)
    return SetupContext(None, target, SimpleNamespace(slug="t"), [], None, tmp_path / "run", domain, 0,
                        tmp_path / "pools")


def test_llama_declares_the_general_drafter_it_starts_from(tmp_path):
    """init=pretrained for a domain: the pool's general drafter, to be trained first (same preset) when the pool has
    none; nothing for the general domain itself, another init, or once the general drafter exists."""
    llama = trainings()["llama"]
    options = llama.options()
    general = tmp_path / "pools" / "t" / f"{GENERAL}-llama68m"
    assert llama.prerequisite(options, _context(tmp_path, "sql")) == Prerequisite(
        GENERAL, general, ("llama.preset=llama-tiny",))
    assert llama.prerequisite(options, _context(tmp_path, GENERAL)) is None
    assert llama.prerequisite(llama.options(init="scratch"), _context(tmp_path, "sql")) is None
    general.mkdir(parents=True)
    (general / "config.json").write_text("{}")
    assert llama.prerequisite(options, _context(tmp_path, "sql")) is None
    for name in ("eagle3", "suffix"):
        assert trainings()[name].prerequisite(trainings()[name].options(), _context(tmp_path, "sql")) is None
