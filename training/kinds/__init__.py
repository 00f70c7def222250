"""The training side of the drafter-kind registry: what `train_drafter.py --drafter NAME` makes for each kind.

A kind declares its training setup by path (`DrafterKind.trainer`, e.g. "training.kinds.eagle3:TRAINING"); each
points at a `KindTraining` in that kind's own module here (training/kinds/<kind>.py). `trainings()` reads the
registry, so the `--drafter` choices, the options sections of `TrainConfig` and the setups all come from the kinds'
declarations. A setup reads its own options and a `SetupContext`, never the whole config nor the orchestrator
(training/train_drafter.py); a run it needs first (the pool's general drafter a domain fine-tune starts from) it
declares (`KindTraining.prerequisite`) and the orchestrator runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draftpool.models import KINDS, get_kind, part
from draftpool.target import TargetInfo
from training.data import ResponseDataset
from training.sections import ExportConfig

log = logging.getLogger("training")


@dataclass(frozen=True)
class SetupContext:
    """What a kind's setup reads of the run besides its own options."""

    accelerator: Any
    target: Any  # the frozen target model
    info: TargetInfo
    train_rows: list[dict]  # the training answers (prompt_ids, response_ids ...)
    dataset: ResponseDataset  # the same rows as training batches them
    run_dir: Path
    domain: str
    seed: int  # train.seed: the drafter's initialisation
    pools_dir: Path  # export.pools_dir: the pools root (<pools_dir>/<target-slug>/<domain>-<folder>)

    @property
    def pool_dir(self) -> Path:
        """This target's pool folder."""
        return self.pools_dir / self.info.slug


@dataclass(frozen=True)
class Prerequisite:
    """A drafter of the same kind that must exist before this run's setup: the orchestrator trains `domain`'s from
    its recipe (recipes/<domain>/<folder>.yaml), on this run's target, pools root and data settings, with the kind's
    own `overrides`; `path` is the folder it will be exported to."""

    domain: str
    path: Path
    overrides: tuple[str, ...] = ()


Setup = Callable[[Any, SetupContext], tuple[Any, Callable | None, dict[str, Any]]]


@dataclass(frozen=True)
class KindTraining:
    """One kind's training setup.

    setup(options, ctx) -> (model, loss_fn or None (nothing to train: built from the data), what its manifest entry
    records); `options` is `TrainConfig.<section>`, an instance of `options`. `prerequisite(options, ctx)`: the run
    to make first, or None. `write_options(options, export)`: the kind's `write` options from the export section.
    `folder` is the kind's folder stem (`DrafterKind.folder`): its recipes are recipes/<domain>/<folder>.yaml and its
    pool folders <domain>-<folder>."""

    kind: str  # the registry kind it trains (and the --drafter name)
    section: str  # the TrainConfig field that holds its options
    options: type  # that field's dataclass (with a validate() raising ConfigError)
    help: str  # that field's help line (--help-config)
    setup: Setup
    warm_start: str = ""  # the config key that starts it from another folder of its kind ("" = none)
    aliases: tuple[str, ...] = ()  # older --drafter names, still accepted (one deprecation line)
    prerequisite: Callable[[Any, SetupContext], Prerequisite | None] = field(default=lambda options, ctx: None)
    write_options: Callable[[Any, ExportConfig], dict[str, Any]] = field(default=lambda options, export: {})
    keep_adapters: Callable[[Any], None] = field(default=lambda model: None)  # a LoRA model, before its merge
    low_rank: tuple[str, ...] = ()  # overrides that make a specialist low rank (build_pool --specialists low_rank)

    @property
    def folder(self) -> str:
        """The kind's recipe and pool-folder stem."""
        return get_kind(self.kind).folder

    @property
    def choice(self) -> str:
        """What `--drafter NAME` makes, in words: the kind's label, its older names, whether it trains."""
        kind = get_kind(self.kind)
        notes = []
        if self.aliases:
            older = "is its older name" if len(self.aliases) == 1 else "are its older names"
            notes.append(f"{self.kind}; {', '.join(self.aliases)} {older}")
        if not kind.capabilities.trained:
            notes.append("no training")
        return kind.label + (f" ({'; '.join(notes)})" if notes else "")


def trainings() -> dict[str, KindTraining]:
    """--drafter name -> its training setup, for every registered kind that declares one (registry order)."""
    out = {}
    for kind in KINDS.values():
        if kind.trainer:
            t = part(kind, "trainer")
            if not isinstance(t, KindTraining) or t.kind != kind.name:
                raise TypeError(f"drafter kind {kind.name!r}: trainer {kind.trainer!r} is not its KindTraining")
            out[t.kind] = t
    return out


def drafter_names() -> tuple[str, ...]:
    """Every accepted --drafter value: the kinds' names, then their older aliases."""
    ts = trainings()
    return (*ts, *(a for t in ts.values() for a in t.aliases))


_warned: set[str] = set()


def training_for(drafter: str) -> KindTraining:
    """The training setup of a --drafter name (an older alias logs one deprecation line per process); ValueError
    naming the choices otherwise."""
    ts = trainings()
    if drafter in ts:
        return ts[drafter]
    for t in ts.values():
        if drafter in t.aliases:
            if drafter not in _warned:
                _warned.add(drafter)
                log.warning("--drafter %s is deprecated: it is the %r kind, use --drafter %s (recipes and pool "
                            "folders keep the name %s)", drafter, t.kind, t.kind, t.folder)
            return t
    raise ValueError(f"unknown drafter {drafter!r}; choose one of {', '.join(drafter_names())}")
