"""Serving lookahead reasoning while the trainer process adapts the step drafter (Online-LR / OSD-LR).

Per request: poll the trainer (status, crash / hang detection) -> swap in a newer step-drafter version -> reason
(with `swap="step"` a newer version is also taken before every lookahead round) -> hand the request's preference
pairs to the trainer without waiting. The answer record names the versions that served it and the round figures.
"""

from __future__ import annotations

import time
import traceback

import torch

from online.lookahead.step_trainer import StepFeedback
from online.trainer.hotswap import HotSwap
from online.trainer.process import TrainerHandle, decoding
from specsel.decoding.loop import SpecError
from specsel.lookahead.lookahead import LookaheadReasoner

LOOKAHEAD_SWAPS = ("step", "request")


class LookaheadServer:
    def __init__(self, reasoner: LookaheadReasoner, name: str, module: torch.nn.Module,
                 handle: TrainerHandle | None, swap: str = "step", max_len: int | None = None):
        """name / module: the served step drafter (the swap writes into it); max_len: the target's context."""
        if swap not in LOOKAHEAD_SWAPS:
            raise ValueError(f"lookahead swap must be one of {', '.join(LOOKAHEAD_SWAPS)}, got {swap!r}")
        self.reasoner, self.handle, self.max_len = reasoner, handle, max_len
        self.swap = HotSwap(handle.boards, {name: module}, handle.start_version) if handle is not None else None
        if self.swap is not None and swap == "step":
            reasoner.on_round = self.swap.poll
        self.served = self.failed = 0
        self.learned = 0  # answers indexed by model-free drafters: none here (one step drafter)
        self.events: list[dict] = []  # trainer events drained since the caller last took them

    def check_request(self, ids: list[int], max_new_tokens: int, params=None) -> None:
        """params: unused (lookahead reasoning is greedy; the front end refuses sampling)."""
        if self.max_len is not None and len(ids) + max_new_tokens > self.max_len:
            raise SpecError(f"prompt of {len(ids)} tokens + {max_new_tokens} new exceeds the target's context of "
                            f"{self.max_len}")

    def between_requests(self) -> None:
        if self.handle is None:
            return
        self.events += self.handle.poll()
        if self.swap.poll():
            self.reasoner.drafter.reset()

    def serve(self, req) -> dict:
        """Reason over one request; -> its record (tokens, metrics, versions). A failure is recorded, not raised."""
        self.between_requests()
        before = self.swap.versions() if self.swap is not None else {}
        t0 = time.perf_counter()
        self.reasoner.pairs.clear()
        try:
            with decoding(self.handle):
                tokens, m = self.reasoner.generate(req.prompt_ids, req.max_new_tokens)
        except Exception as e:  # noqa: BLE001 - a request's failure is reported with its record
            self.failed += 1
            return {"id": req.id, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        record = {"id": req.id, "tokens": tokens, "metrics": {"lookahead": m.to_dict()},
                  "versions_at_start": before, "seconds": time.perf_counter() - t0,
                  "pairs": len(self.reasoner.pairs)}
        if self.handle is not None:
            record["versions_at_end"] = self.swap.versions()
            self.handle.submit(StepFeedback(req.id, list(self.reasoner.pairs), max(before.values(), default=0),
                                            sum(m.accepted_steps), sum(m.drafted_steps)))
        self.served += 1
        return record
