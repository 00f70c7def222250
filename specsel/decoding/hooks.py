"""What a caller hands the decode loop besides the request (`Hooks`): the collector of the target rows behind
committed tokens, the weight poll at cycle boundaries, and a request's `cancelled` / `watch`. Passed in explicitly, to
the decoder (`SpecDecoder(hooks=...)`, its default) or to one request (`SpecDecoder.generate(hooks=...)`); the loop
reads nothing else of its caller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from specsel.decoding.target import TargetPass


class Collector(Protocol):
    """Keeps the target's rows behind newly committed tokens (online/feedback.FeedbackCollector)."""

    def add(self, out: TargetPass, rows: list[int]) -> None: ...


@dataclass(frozen=True)
class Hooks:
    # every committed token's target row goes here as it is committed (the feedback the trainer learns from)
    collector: Collector | None = None
    # called at every cycle boundary (online/hotswap.HotSwap.poll): -> indices of drafters whose weights changed
    poll: Callable[[], list[int]] | None = None
    # true once nobody waits for the answer: decoding stops at the next cycle boundary
    cancelled: Callable[[], bool] | None = None
    # sees the new tokens committed so far after the prefill and every cycle (not yet cut at a stop token or
    # max_new_tokens); true stops decoding there (a stop string, a stream that sends each cycle's text)
    watch: Callable[[list[int]], bool] | None = None
