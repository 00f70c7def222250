"""train_drafter.py's configuration: the recipe keys (`python train_drafter.py --help-config` lists them).

The per-kind sections (`eagle3.*`, `llama.*`, `suffix.*`) are the options dataclasses the kinds' training modules
declare (training/kinds/<kind>.py); the `drafter` choices come from the kind registry. tests/training/test_kinds.py
checks that the sections here are exactly the registry's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from data_gen.domains import ALL_DOMAINS, check_domain
from data_gen.user_data import UserData
from draftpool.config import ConfigError, field
from draftpool.target import DEFAULT_TARGET
from training.kinds import drafter_names, training_for, trainings
from training.kinds.eagle3 import Eagle3Options
from training.kinds.llama import LlamaOptions
from training.kinds.suffix import SuffixOptions
from training.loop import OptimConfig

DrafterName = Literal[drafter_names()]  # the registry's kinds with a training setup, then their older aliases


@dataclass
class DataConfig:
    recipe: str = field("recipes/{domain}/data_gen.yaml", help="data-generation recipe used when data is missing")
    gen: dict[str, Any] = field(default_factory=dict, help="keys overriding that recipe, e.g. data.gen.batch_size=8")
    user_dataset: UserData | None = field(None, help="train on your own prompt/response table instead")
    max_train_answers: int = field(0, help="train on this many answers of the data only (0 = all): a seeded "
                                           "sample, each smaller one inside every larger one (data-size curves)")


@dataclass
class EvalConfig:
    depth: int = field(7, help="chain depth for the expected accepted length")
    max_sequences: int = field(0, help="held-out sequences to evaluate (0 = all)")
    batch_size: int = field(8, help="evaluation batch size")
    skip: bool = field(False, help="export without the held-out evaluation (build_pool writes each drafter's "
                                   "evaluation from the matrix, which measures the same rows)")


@dataclass
class ExportConfig:
    pools_dir: str = field("pools", help="pools root; a drafter goes to <pools_dir>/<target-slug>/<domain>-<drafter>")
    speculators: bool = field(False, help="also write the speculators layout (EAGLE-3 heads)")
    speculative_tokens: int = field(5, help="speculative token count recorded in the speculators config")


@dataclass
class TrainConfig:
    domain: str = field(help=f"one of {', '.join(ALL_DOMAINS)}")
    drafter: DrafterName = field("eagle3", help="EAGLE-3 head, independent Llama drafter (llama; llama68m is its "
                                                "older name), or suffix index (no training)")
    target: str = field(DEFAULT_TARGET, help="hub id, local folder, or the embedded default")
    run_dir: str = field("runs/train/{target_slug}/{domain}-{drafter}", help="checkpoints, logs, eval ({drafter}: "
                                                                             "the kind's folder name)")
    data: DataConfig = field(default_factory=DataConfig, help="training data")
    eagle3: Eagle3Options = field(default_factory=Eagle3Options, help="EAGLE-3 head options")
    llama: LlamaOptions = field(default_factory=LlamaOptions, help="independent drafter options")
    suffix: SuffixOptions = field(default_factory=SuffixOptions, help="suffix index options (seeded from the data)")
    train: OptimConfig = field(default_factory=OptimConfig, help="optimisation")
    eval: EvalConfig = field(default_factory=EvalConfig, help="held-out evaluation")
    export: ExportConfig = field(default_factory=ExportConfig, help="pool export")

    def validate(self) -> None:
        if self.data.user_dataset is None:
            check_domain(self.domain)
        for key, value, low in (("eval.depth", self.eval.depth, 1), ("eval.batch_size", self.eval.batch_size, 1),
                                ("eval.max_sequences", self.eval.max_sequences, 0),
                                ("data.max_train_answers", self.data.max_train_answers, 0),
                                ("export.speculative_tokens", self.export.speculative_tokens, 1)):
            if value < low:
                raise ConfigError(f"{key} must be >= {low}, got {value}")
        training_for(self.drafter)  # an older alias logs its deprecation line here
        for t in trainings().values():
            getattr(self, t.section).validate()

    def folder(self) -> str:
        """The drafter's folder name stem: the pool folder is <domain>-<stem>, the recipe <domain>/<stem>.yaml."""
        return training_for(self.drafter).folder

    def run_dir_for(self, target_slug: str) -> str:
        return self.run_dir.format(target_slug=target_slug, domain=self.domain, drafter=self.folder())
