"""The run-wide sections of train_drafter.py's configuration (`data.*`, `eval.*`, `export.*`), apart from
`TrainConfig` (training/config.py) so that a kind's training module may read one (the export section's options of
its folder format) without importing the config, which reads the kinds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from data_gen.user_data import UserData
from draftpool.config import field


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
