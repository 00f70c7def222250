"""The training side of the drafter-kind registry: what `train_drafter.py --drafter NAME` makes for each kind.

A kind declares its training setup by path (`DrafterKind.trainer`, e.g. "training.kinds.eagle3:TRAINING"); each
points at a `KindTraining` in that kind's own module here (training/kinds/<kind>.py). `trainings()` reads the
registry, so the `--drafter` choices, the options sections and the setups all come from the kinds' declarations.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from draftpool.models import KINDS, get_kind, part

log = logging.getLogger("training")


@dataclass(frozen=True)
class KindTraining:
    """One kind's training setup.

    setup(cfg, accelerator, target, info, train_rows, dataset, run_dir) -> (model, loss_fn or None (nothing to
    train: built from the data), what its manifest entry records). Its options are `TrainConfig.<section>` (an
    instance of `options`). `folder` is the kind's folder stem (`DrafterKind.folder`): its recipes are
    recipes/<domain>/<folder>.yaml and its pool folders <domain>-<folder>."""

    kind: str  # the registry kind it trains (and the --drafter name)
    section: str  # the TrainConfig field that holds its options
    options: type  # that field's dataclass (with a validate() raising ConfigError)
    setup: Callable[..., tuple[Any, Callable | None, dict[str, Any]]]
    warm_start: str = ""  # the config key that starts it from another folder of its kind ("" = none)
    aliases: tuple[str, ...] = ()  # older --drafter names, still accepted (one deprecation line)
    write_options: Callable[[Any], dict[str, Any]] = field(default=lambda cfg: {})  # cfg -> the kind's `write` options

    @property
    def folder(self) -> str:
        """The kind's recipe and pool-folder stem."""
        return get_kind(self.kind).folder


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
