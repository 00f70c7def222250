"""What the serve loop drives (`Server`), the skeleton every server shares (`ServingBase`), and token-drafting serving
with online adaptation (`AdaptiveServer`): a pool decoder whose verified tokens feed the trainer process and whose
drafters take the trainer's published versions between decode cycles.

Per request (`ServingBase.serve`): poll the trainer (status, crash / hang detection) -> swap in new versions ->
decode (with `swap="cycle"` newer versions are also taken at every cycle boundary) -> learn from the whole answer
(model-free members index it; the feedback the verification passes left behind goes to the trainer without waiting)
-> the `Served` result names the versions that served it. Lookahead serving (online/lookahead/server.py) is the same
skeleton around its reasoner.
"""

from __future__ import annotations

import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

import torch

from draftpool.forward.sampling import SamplingParams
from online.serve.request import Request, Served
from online.trainer.feedback import FeedbackCollector
from online.trainer.hotswap import HotSwap
from online.trainer.process import TrainerHandle, decoding
from specsel.decoding.hooks import Hooks
from specsel.decoding.loop import Decoded, SpecDecoder, SpecError
from specsel.decoding.view import SelectorProtocol

SWAPS = ("cycle", "request")


class Server(Protocol):
    """What the serve loop (online/serve/loop.py) and the metrics (online/serve/metrics.py) read of a server."""

    names: list[str]  # the drafters whose drafts a request's metrics count ([]: none drafts tokens)
    swap: HotSwap | None  # the served versions (None: no trainer)
    served: int  # requests decoded
    failed: int  # requests whose decode raised
    learned: int  # answers indexed by model-free members

    def serve(self, req: Request) -> Served: ...

    def take_events(self) -> list[dict]:
        """The trainer's events since the last call."""

    def selection_weights(self) -> list[float] | None:
        """The selector's current probability of each of `names` (None: no distribution)."""


class ServingBase:
    """The skeleton of `Server.serve`: a request refused before decoding is answered with its error; otherwise the
    trainer is polled and newer versions swapped in, the subclass decodes (`decode`: a `SpecError` there is the
    request's fault, answered as refused; any other exception is the server's, recorded as failed), and the subclass
    learns from the whole answer (`learn`)."""

    names: list[str] = []

    def __init__(self, handle: TrainerHandle | None, modules: dict[str, torch.nn.Module]):
        """modules: the served drafter modules by name (the swap writes the trainer's versions into them)."""
        self.handle = handle
        self.swap = HotSwap(handle.boards, modules, handle.start_version) if handle is not None else None
        self.served = self.failed = 0
        self.learned = 0  # answers indexed by model-free drafters
        self.events: list[dict] = []  # trainer events drained since the caller last took them

    def take_events(self) -> list[dict]:
        out, self.events = self.events, []
        return out

    def selection_weights(self) -> list[float] | None:
        return None

    def between_requests(self) -> None:
        """Trainer status + any newer weights (a free swap: every drafter cache starts empty anyway)."""
        if self.handle is None:
            return
        self.events += self.handle.poll()
        changed = self.swap.poll()
        if changed:
            self.swapped(changed)

    def swapped(self, changed: list[int]) -> None:
        """Drafters `changed` (indices into the swap's modules) took new weights between requests."""

    def at_cycle(self) -> list[int]:
        """A cycle boundary (swap="cycle"): the server's threads fit the trainer's rounds, then any newer weights
        come in -> the drafters that changed."""
        self.handle.fit_threads()
        return self.swap.poll()

    def decode(self, req: Request) -> tuple[Served, Any]:
        """-> (the request's result, what `learn` needs of the decode)."""
        raise NotImplementedError

    def learn(self, req: Request, served: Served, decoded: Any) -> None:
        """What a whole answer teaches (called once its seconds are taken)."""

    def serve(self, req: Request) -> Served:
        """One request -> its result; a failure is recorded in it, never raised."""
        if req.error is not None:
            return req.refused(req.error)
        self.between_requests()
        before = self.swap.versions() if self.swap is not None else {}
        t0 = time.perf_counter()
        try:
            with decoding(self.handle):
                served, decoded = self.decode(req)
        except SpecError as e:  # rule: checked before any decoding (e.g. too long for the target's context)
            return req.refused(str(e))
        except Exception as e:  # noqa: BLE001 - a request's failure is reported with its result
            self.failed += 1
            return Served(req.id, error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
        served.seconds, served.versions_at_start = time.perf_counter() - t0, before
        self.learn(req, served, decoded)
        if self.swap is not None:
            served.versions_at_end = self.swap.versions()
        self.served += 1
        return served


class AdaptiveServer(ServingBase):
    def __init__(self, decoder: SpecDecoder, modules: dict[str, torch.nn.Module], handle: TrainerHandle | None,
                 params: SamplingParams, feedback_top_k: int = 64, swap: str = "cycle",
                 new_selector: Callable[[], SelectorProtocol] | None = None):
        """modules: the served drafter modules by name, in the decoder's order (the swap writes into them);
        new_selector: a fresh selector for every request (None: one selector for the run)."""
        if swap not in SWAPS:
            raise ValueError(f"swap must be one of {', '.join(SWAPS)}, got {swap!r}")
        if list(modules) != decoder.names:
            raise ValueError("modules must follow the decoder's drafter order")
        super().__init__(handle, modules)
        self.dec, self.params, self.new_selector = decoder, params, new_selector
        self.names = list(decoder.names)
        self.collector = FeedbackCollector(feedback_top_k,
                                           keep_feats=any(d.aux_layers for d in decoder.drafters))
        # what every request hands the decoder (with its own cancelled / watch): the feedback collector while a
        # trainer learns from it, the weight poll at cycle boundaries with swap="cycle"
        self.hooks = Hooks(collector=self.collector if handle is not None else None,
                           poll=self.at_cycle if self.swap is not None and swap == "cycle" else None)

    def selection_weights(self) -> list[float] | None:
        return self.dec.selector.probabilities()

    def swapped(self, changed: list[int]) -> None:
        self.dec.weights_changed(changed)

    def decode(self, req: Request) -> tuple[Served, Decoded]:
        """Its sampling never reaches the feedback: the trainer learns the target's own distributions (raw logits)
        whatever a request samples with."""
        if self.new_selector is not None:
            self.dec.set_selector(self.new_selector())
        self.collector.start()
        out = self.dec.decode(req.prompt_ids, req.max_new_tokens, req.params or self.params, req.seed,
                              hooks=replace(self.hooks, cancelled=req.cancelled, watch=req.watch), keyed=req.keyed)
        cancelled = req.cancelled is not None and req.cancelled()
        return Served(req.id, out.tokens, out.metrics.to_dict(), cancelled=cancelled), out

    def learn(self, req: Request, served: Served, out: Decoded) -> None:
        if not served.cancelled:  # rule: a whole answer is indexed at once by the members that learn by indexing
            served.learned = [n for n, d in zip(self.names, self.dec.drafters)
                              if d.learn(list(req.prompt_ids) + served.tokens)]
            self.learned += int(bool(served.learned))
        if self.handle is not None:
            m = out.metrics
            drafter = Counter(m.choices).most_common(1)[0][0] if m.choices else -1
            fb = self.collector.finish(req.id, out.state, version=max(served.versions_at_start.values(), default=0),
                                       drafter=drafter, accepted=m.accepted)
            self.handle.submit(fb)
