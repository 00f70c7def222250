"""The one shape a request has from arrival to answer (`Request`), what serving it gives (`Served`), and the HTTP
side's answer channel (`Reply`).

A JSON line (online/serve/requests.py) or an HTTP job (online/http/jobs.py) becomes a `Request`; the serve loop
(online/serve/loop.py) hands it to a `Server` (online/serve/server.py), which returns a `Served`; the loop writes its
answers-file record (online/serve/answers.py), counts it (online/serve/metrics.py) and, for an HTTP job, hands it back
to the job's `Reply`. Nothing on the way is a string-keyed row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from draftpool.forward.sampling import SamplingParams


class Reply(Protocol):
    """Where an HTTP job's answer goes (online/http/jobs.py's `HttpRun`); a request file's line has none."""

    queued: float  # time.monotonic() when the job was queued (its queue time)

    def cancelled(self) -> bool:
        """True once the client hung up: decoding stops at the next cycle."""

    def watcher(self) -> Callable[[list[int]], bool] | None:
        """What sees the new tokens every cycle (streaming, stop strings), or None when nothing needs to."""

    def refuse(self, message: str) -> None:
        """The request cannot be served as asked (a prompt too long for the target): its 400."""

    def answer_fields(self, served: Served) -> dict[str, Any]:
        """What the answers file keeps beyond the usual record: the answer as the client got it."""

    def finish(self, served: Served, answer: dict[str, Any]) -> None:
        """The job's answer (or its error), whole or as the stream's end."""


@dataclass
class Request:
    """One request. A request file's line has `prompt` (the text the serve loop chat-templates into `prompt_ids`) and
    its `line`; an HTTP job comes with `prompt_ids` built and its `reply`. `error`: refused before it reaches a
    server (a bad line, a prompt that cannot be built): it is answered with that error, never decoded."""

    id: str | None
    prompt_ids: list[int] | None
    max_new_tokens: int
    prompt: str | None = None
    line: int | None = None
    error: str | None = None
    params: SamplingParams | None = None  # this request's sampling (None: the server's)
    seed: int = 0
    keyed: bool = False  # the client chose the seed: sampling keyed by (seed, position), the same answer every time
    reply: Reply | None = None

    @property
    def cancelled(self) -> Callable[[], bool] | None:
        return self.reply.cancelled if self.reply is not None else None

    @property
    def watch(self) -> Callable[[list[int]], bool] | None:
        return self.reply.watcher() if self.reply is not None else None

    def refused(self, why: str) -> Served:
        """This request answered with an error before any decoding (named by its line when it has one)."""
        where = f"request line {self.line}: " if self.line is not None and not why.startswith("request line") else ""
        return Served(self.id, error=where + why, refused=True, line=self.line)


@dataclass
class Served:
    """What serving one request gave: its new tokens and the decoder's metrics (`RequestMetrics.to_dict()`, or
    {"lookahead": ...}), or its error; the drafter versions that served it. `refused`: the request was not decoded
    (a bad line, a request the target cannot take: the caller's error, HTTP 400); an error with `refused` False is
    the server's (HTTP 500)."""

    id: str | None
    tokens: list[int] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    versions_at_start: dict[str, int] = field(default_factory=dict)
    versions_at_end: dict[str, int] | None = None
    cancelled: bool = False  # stopped early (the client hung up): the target's tokens, not a whole answer
    learned: list[str] = field(default_factory=list)  # the members that indexed this answer (model-free)
    pairs: int | None = None  # lookahead: preference pairs handed to the trainer
    error: str | None = None
    traceback: str | None = None
    refused: bool = False
    line: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None
