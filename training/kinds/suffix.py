"""The suffix kind's "training": an index seeded from the self-distilled training answers (no gradient step), with
its options (`suffix.*`)."""

from __future__ import annotations

from dataclasses import dataclass

from draftpool.config import ConfigError, field, to_dict
from draftpool.models.suffix import SUFFIX, build_suffix
from training.kinds import KindTraining, SetupContext


@dataclass
class SuffixOptions:
    depth: int = field(32, help="suffix index: tokens of every suffix it sorts on (longest match < depth)")
    max_tokens: int = field(4_000_000, help="indexed tokens kept; past it the oldest segments go (served answers)")
    segment_tokens: int = field(32768, help="tokens of a segment before it is frozen (served answers)")
    min_prob: float = field(0.1, help="a chain stops where its estimated path probability falls below this")
    max_spec_factor: float = field(2.0, help="a chain drafts at most this many tokens per matched token")
    n_min: int = field(2, help="smallest n-gram matched in the request itself")
    n_max: int = field(8, help="largest n-gram matched in the request itself")

    def validate(self) -> None:
        if self.depth < 2 or self.max_tokens < 1 or self.segment_tokens < 1 or not 1 <= self.n_min <= self.n_max:
            raise ConfigError("suffix: depth >= 2, max_tokens and segment_tokens >= 1, 1 <= n_min <= n_max")
        if not (0 <= self.min_prob < 1 and self.max_spec_factor > 0):
            raise ConfigError(f"suffix: min_prob in [0, 1) and max_spec_factor > 0, got {self.min_prob}, "
                              f"{self.max_spec_factor}")


def setup_suffix(options: SuffixOptions, ctx: SetupContext):
    """-> (the suffix index seeded with the training sequences, no loss: nothing to train, its settings)."""
    opts = to_dict(options)
    seqs = [list(r["prompt_ids"]) + list(r["response_ids"]) for r in ctx.train_rows]
    model = build_suffix(seqs, ctx.info.vocab_size, **opts)
    ctx.accelerator.print(f"suffix index: {model.index.n_tokens} tokens from {len(seqs)} sequences")
    return model, None, {"suffix": opts, "indexed_tokens": model.index.n_tokens}


TRAINING = KindTraining(kind=SUFFIX.name, section="suffix", options=SuffixOptions,
                        help="suffix index options (seeded from the data)", setup=setup_suffix)
