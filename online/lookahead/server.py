"""Serving lookahead reasoning while the trainer process adapts the step drafter (Online-LR / OSD-LR).

The serving skeleton is online/serve/server.py's (`ServingBase`): poll the trainer -> swap in a newer step-drafter
version -> reason (with `swap="step"` a newer version is also taken before every lookahead round) -> hand the
request's preference pairs to the trainer without waiting. The result names the versions that served it and the
round figures.
"""

from __future__ import annotations

import torch

from online.lookahead.step_trainer import StepFeedback
from online.serve.request import Request, Served
from online.serve.server import ServingBase
from online.trainer.process import TrainerHandle
from specsel.decoding.loop import SpecError
from specsel.lookahead.lookahead import LookaheadMetrics, LookaheadReasoner

LOOKAHEAD_SWAPS = ("step", "request")


class LookaheadServer(ServingBase):
    def __init__(self, reasoner: LookaheadReasoner, name: str, module: torch.nn.Module,
                 handle: TrainerHandle | None, swap: str = "step", max_len: int | None = None):
        """name / module: the served step drafter (the swap writes into it); max_len: the target's context."""
        if swap not in LOOKAHEAD_SWAPS:
            raise ValueError(f"lookahead swap must be one of {', '.join(LOOKAHEAD_SWAPS)}, got {swap!r}")
        super().__init__(handle, {name: module})
        self.reasoner, self.max_len = reasoner, max_len
        if self.swap is not None and swap == "step":
            reasoner.on_round = self.swap.poll

    def swapped(self, changed: list[int]) -> None:
        self.reasoner.drafter.reset()

    def decode(self, req: Request) -> tuple[Served, LookaheadMetrics]:
        """Lookahead reasoning is greedy (the HTTP front end refuses sampling)."""
        if self.max_len is not None and len(req.prompt_ids) + req.max_new_tokens > self.max_len:
            raise SpecError(f"prompt of {len(req.prompt_ids)} tokens + {req.max_new_tokens} new exceeds the target's "
                            f"context of {self.max_len}")
        self.reasoner.pairs.clear()
        tokens, m = self.reasoner.generate(req.prompt_ids, req.max_new_tokens)
        return Served(req.id, tokens, {"lookahead": m.to_dict()}, pairs=len(self.reasoner.pairs)), m

    def learn(self, req: Request, served: Served, m: LookaheadMetrics) -> None:
        if self.handle is not None:
            self.handle.submit(StepFeedback(req.id, list(self.reasoner.pairs),
                                            max(served.versions_at_start.values(), default=0),
                                            sum(m.accepted_steps), sum(m.drafted_steps)))
