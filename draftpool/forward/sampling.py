"""Sampling parameters and the one logits -> probabilities rule shared by target and drafter.

Lossless speculative sampling needs p (target) and q (drafter) shaped by the *same* transform: temperature, then top-k,
then top-p, applied by transformers' logits warpers (the ones `generate` uses). Shapes: [..., V].
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from draftpool.forward.keyed import KeyedNoise


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.0  # 0 = greedy
    top_k: int = 0  # 0 = off
    top_p: float = 1.0  # 1 = off

    def __post_init__(self):
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 = off), got {self.top_k}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def filter_logits(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """[..., V] -> [..., V] float logits with temperature applied and filtered tokens at -inf.

    top-k keeps the k largest (ties at the k-th value kept); top-p keeps the smallest prefix of the sorted
    distribution whose mass reaches top_p (the top token always)."""
    warpers = LogitsProcessorList([TemperatureLogitsWarper(params.temperature)])
    if params.top_k:
        warpers.append(TopKLogitsWarper(params.top_k))
    if params.top_p < 1:
        warpers.append(TopPLogitsWarper(params.top_p))
    flat = logits.float().reshape(-1, logits.shape[-1])  # the warpers take [batch, V]
    return warpers(None, flat).reshape(logits.shape)


def probs_from_logits(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """[..., V] logits -> [..., V] sampling distribution (temperature > 0)."""
    return filter_logits(logits, params).softmax(-1)


def sample(probs: torch.Tensor, generator: torch.Generator | KeyedNoise | None) -> torch.Tensor:
    """[..., V] -> [...] int64 token ids drawn from `probs` (on the generator's device); with a seeded request's
    `KeyedNoise`, probs [V] -> its keyed sample at its cursor (draftpool/forward/keyed.py)."""
    if isinstance(generator, KeyedNoise):
        return torch.tensor(generator.draw(probs))
    if generator is not None:
        probs = probs.to(generator.device)
    flat = probs.reshape(-1, probs.shape[-1])
    return torch.multinomial(flat, 1, generator=generator).reshape(probs.shape[:-1])
