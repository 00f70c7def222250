"""train_drafter.py's configuration: the recipe keys (`python train_drafter.py --help-config` lists them).

`TrainConfig` is assembled from the kind registry: between the data section and the optimisation one sits one
options section per kind that trains (`eagle3.*`, `llama.*`, `suffix.*` ...), the dataclass each kind's training module
declares (`KindTraining.options`, training/kinds/<kind>.py); the `drafter` choices and their default (the registry's
first) come from there too, so this module names no kind. tests/training/test_kinds.py checks that the sections are
exactly the registry's.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from data_gen.domains import ALL_DOMAINS, check_domain
from draftpool.config import ConfigError, field
from draftpool.target import DEFAULT_TARGET, DTYPES
from training.kinds import drafter_names, training_for, trainings
from training.loop import OptimConfig
from training.sections import DataConfig, EvalConfig, ExportConfig

DrafterName = Literal[drafter_names()]  # the registry's kinds with a training setup, then their older aliases


class _Methods:
    """TrainConfig's methods (its fields are assembled below)."""

    domain: str
    drafter: str
    dtype: str
    run_dir: str
    data: DataConfig
    train: OptimConfig
    eval: EvalConfig
    export: ExportConfig

    def validate(self) -> None:
        if self.data.user_dataset is None:
            check_domain(self.domain)
        for key, value, low in (("eval.depth", self.eval.depth, 1), ("eval.batch_size", self.eval.batch_size, 1),
                                ("eval.max_sequences", self.eval.max_sequences, 0),
                                ("data.max_train_answers", self.data.max_train_answers, 0),
                                ("export.speculative_tokens", self.export.speculative_tokens, 1)):
            if value < low:
                raise ConfigError(f"{key} must be >= {low}, got {value}")
        if self.dtype != "auto" and self.dtype not in DTYPES:
            raise ConfigError(f"dtype must be auto or one of {', '.join(DTYPES)}, got {self.dtype!r}")
        training_for(self.drafter)  # an older alias logs its deprecation line here
        for t in trainings().values():
            getattr(self, t.section).validate()

    def options(self) -> Any:
        """The options section of the drafter this config trains."""
        return getattr(self, training_for(self.drafter).section)

    def folder(self) -> str:
        """The drafter's folder name stem: the pool folder is <domain>-<stem>, the recipe <domain>/<stem>.yaml."""
        return training_for(self.drafter).folder

    def run_dir_for(self, target_slug: str) -> str:
        return self.run_dir.format(target_slug=target_slug, domain=self.domain, drafter=self.folder())


def _fields() -> list[tuple[str, Any, Any]]:
    kinds = trainings().values()
    choices = [t.choice for t in kinds]
    drafter_help = ", ".join(choices[:-1]) + (", or " if len(choices) > 1 else "") + choices[-1]
    return [
        ("domain", str, field(help=f"one of {', '.join(ALL_DOMAINS)}")),
        ("drafter", DrafterName, field(drafter_names()[0], help=drafter_help)),
        ("target", str, field(DEFAULT_TARGET, help="hub id, local folder, or the embedded default")),
        ("dtype", str, field("auto", help="the target's precision for its features (on the fly and cached) and the "
                                          "held-out evaluation: auto (bf16 on a GPU that has it; on a CPU the "
                                          "measured choice for batched forwards, draftpool/precision.py), float32, "
                                          "bfloat16, float16")),
        ("run_dir", str, field("runs/train/{target_slug}/{domain}-{drafter}",
                               help="checkpoints, logs, eval ({drafter}: the kind's folder name)")),
        ("data", DataConfig, field(default_factory=DataConfig, help="training data")),
        *((t.section, t.options, field(default_factory=t.options, help=t.help)) for t in kinds),
        ("train", OptimConfig, field(default_factory=OptimConfig, help="optimisation")),
        ("eval", EvalConfig, field(default_factory=EvalConfig, help="held-out evaluation")),
        ("export", ExportConfig, field(default_factory=ExportConfig, help="pool export")),
    ]


TrainConfig = dataclasses.make_dataclass("TrainConfig", _fields(), bases=(_Methods,),
                                         namespace={"__module__": __name__})
TrainConfig.__doc__ = "train_drafter.py's configuration: the run-wide sections and one options section per kind."
