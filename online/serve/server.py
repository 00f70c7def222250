"""Serving with online adaptation: a pool decoder whose verified tokens feed the trainer process and whose drafters
take the trainer's published versions between decode cycles.

Per request: poll the trainer (status, crash / hang detection) -> swap in new versions -> decode (with
`swap="cycle"` newer versions are also taken at every cycle boundary) -> pack the feedback the verification passes
left behind -> hand it to the trainer without waiting. The answer record names the versions that served it.
"""

from __future__ import annotations

import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from draftpool.forward.sampling import SamplingParams
from online.trainer.feedback import FeedbackCollector
from online.trainer.hotswap import HotSwap
from online.trainer.process import TrainerHandle, decoding
from specsel.decoding.hooks import Hooks
from specsel.decoding.loop import SpecDecoder

SWAPS = ("cycle", "request")


@dataclass
class Request:
    id: str
    prompt_ids: list[int]
    max_new_tokens: int
    cancelled: Callable[[], bool] | None = None  # true once nobody waits for the answer: decoding stops early
    watch: Callable[[list[int]], bool] | None = None  # sees the new tokens every cycle; true stops (Hooks.watch)
    params: SamplingParams | None = None  # this request's sampling (None: the server's)
    seed: int = 0


class AdaptiveServer:
    def __init__(self, decoder: SpecDecoder, modules: dict[str, torch.nn.Module], handle: TrainerHandle | None,
                 params: SamplingParams, feedback_top_k: int = 64, swap: str = "cycle"):
        """modules: the served drafter modules by name, in the decoder's order (the swap writes into them)."""
        if swap not in SWAPS:
            raise ValueError(f"swap must be one of {', '.join(SWAPS)}, got {swap!r}")
        if list(modules) != decoder.names:
            raise ValueError("modules must follow the decoder's drafter order")
        self.dec, self.handle, self.params = decoder, handle, params
        self.collector = FeedbackCollector(feedback_top_k,
                                           keep_feats=any(d.aux_layers for d in decoder.drafters))
        self.swap = HotSwap(handle.boards, modules, handle.start_version) if handle is not None else None
        # what every request hands the decoder (with its own cancelled / watch): the feedback collector while a
        # trainer learns from it, the weight poll at cycle boundaries with swap="cycle"
        self.hooks = Hooks(collector=self.collector if handle is not None else None,
                           poll=self.swap.poll if self.swap is not None and swap == "cycle" else None)
        self.served = self.failed = 0
        self.learned = 0  # answers indexed by model-free drafters
        self.events: list[dict] = []  # trainer events drained since the caller last took them

    def check_request(self, ids: list[int], max_new_tokens: int, params: SamplingParams | None = None) -> None:
        """SpecError when the target cannot take the request (e.g. too long for its context)."""
        self.dec.check_request(ids, max_new_tokens, params or self.params)

    def between_requests(self) -> list[dict]:
        """Trainer status + any newer weights (a free swap: every drafter cache starts empty anyway)."""
        if self.handle is None:
            return []
        events = self.handle.poll()
        self.events += events
        changed = self.swap.poll()
        if changed:
            self.dec.weights_changed(changed)
        return events

    def serve(self, req: Request) -> dict:
        """Decode one request; -> its record (tokens, metrics, versions). A failure is recorded, not raised.
        Its sampling never reaches the feedback: the trainer learns the target's own distributions (raw logits)
        whatever a request samples with."""
        self.between_requests()
        before = self.swap.versions() if self.swap is not None else {}
        t0 = time.perf_counter()
        hooks = replace(self.hooks, cancelled=req.cancelled, watch=req.watch)
        try:
            self.collector.start()
            with decoding(self.handle):
                out = self.dec.decode(req.prompt_ids, req.max_new_tokens, req.params or self.params, req.seed,
                                      hooks=hooks)
            tokens, m = out.tokens, out.metrics
        except Exception as e:  # noqa: BLE001 - a request's failure is reported with its record
            self.failed += 1
            return {"id": req.id, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        record = {"id": req.id, "tokens": tokens, "metrics": m.to_dict(), "versions_at_start": before,
                  "seconds": time.perf_counter() - t0}
        if req.cancelled is not None and req.cancelled():
            record["cancelled"] = True  # stopped early: its tokens are the target's, but not a whole answer
        else:  # rule: a whole answer is indexed at once by the drafters that learn by indexing (model-free)
            learned = [n for n, d in zip(self.dec.names, self.dec.drafters) if d.learn(list(req.prompt_ids) + tokens)]
            if learned:
                record["learned"] = learned
                self.learned += 1
        if self.handle is not None:
            record["versions_at_end"] = self.swap.versions()
            drafter = Counter(m.choices).most_common(1)[0][0] if m.choices else -1
            fb = self.collector.finish(req.id, out.state, version=max(before.values(), default=0),
                                       drafter=drafter, accepted=m.accepted)
            self.handle.submit(fb)
        self.served += 1
        return record
