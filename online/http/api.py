"""An OpenAI-compatible HTTP front end for online_adapt.py (`serve.http=127.0.0.1:8000`), on FastAPI + uvicorn.

    POST /v1/completions       {"prompt": str, "max_tokens": int, ...}      the prompt is tokenized as it is
    POST /v1/chat/completions  {"messages": [{"role", "content"}], ...}     the target's chat template is applied
    GET  /v1/models            the served model (the target) and its pool
    GET  /health               200 while serving (open without the API key)
    GET  /metrics              Prometheus text format: vLLM's spec-decode counters per drafter, selection weights,
                               drafter versions, requests, tokens, latency (online/serve/metrics.py; docs/metrics.md)
    GET  /openapi.json         the API's schema, from the request models below (no /docs or /redoc pages)

The HTTP thread (uvicorn, online/http/asgi.py) only validates and queues; the one decode loop (the main thread, which
also owns signals and the trainer handle) takes jobs in arrival order, so requests are served one at a time exactly as
from a JSONL file, and each reply carries the usual answer record under "draftpool" (MAT, tok/s, the drafter versions
that served it; with draftpool's body field `spec_metrics: true` also the request's speculative counts, "spec", in a
stream's last chunk). A request may stream (server-sent events, one chunk per decode cycle that adds text, `[DONE]` at
the end) and set its own temperature, top_p, seed, stop strings and stop token ids (`JobSettings` and the bodies:
online/http/bodies.py; the decode loop's side: online/http/jobs.py). What the server cannot honour is refused with a
400 and one message, never silently ignored: n > 1, logprobs, echo, suffix, non-zero presence / frequency penalties, a
temperature > 0 where the decode mode verifies greedily, any field this server does not know (`prompt` on chat, too), a
non-finite number, both max_tokens and max_completion_tokens, and a prompt plus max_tokens beyond the target's context;
a model other than the served one gets a 404. At most `max_queue` requests wait (503 past it); a request whose client
hangs up waiting is dropped before its decode, or stopped at the next decode cycle (streamed or not). At a stop signal
the front end drains (`drain`): new requests get a 503, the accepted ones are served for up to `serve.drain_s`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.exceptions import HTTPException

from online.http.asgi import (
    MAX_BODY,
    ClientGone,
    Edge,
    ThreadedServer,
    error_body,
    exposure_warning,
    parse_address,
    unless_gone,
)
from online.http.bodies import BadRequest, ChatBody, CompletionBody, JobSettings, UnknownModel, check_body

__all__ = ["HttpFrontend", "Job", "error_body", "openai_chunk", "openai_reply", "parse_address", "usage"]

def _is_json(content_type: str) -> bool:
    """application/json, or a +json media type, parameters aside (what FastAPI parses as JSON)."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(x) for x in err.get("loc", ())[1:]) or "body"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class Job:
    kind: str  # "completions" | "chat"
    body: dict[str, Any]
    settings: JobSettings
    id: str = field(default_factory=lambda: f"cmpl-{uuid.uuid4().hex[:24]}")
    created: int = field(default_factory=lambda: int(time.time()))
    queued: float = field(default_factory=time.monotonic)  # when it was taken (queue time: online/serve/metrics.py)
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)  # the client hung up
    streaming: bool = False  # a chunk went out: the answer is a stream of server-sent events
    loop: asyncio.AbstractEventLoop | None = None
    events: asyncio.Queue | None = None  # ("chunk", dict) ... then ("end", status, body), from the decode loop

    @property
    def max_new(self) -> int:
        return self.settings.max_new


def openai_reply(job: Job, model: str, text: str, prompt_tokens: int, new_tokens: int, finish: str,
                 extra: dict[str, Any]) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish, "logprobs": None}
    if job.kind == "completions":
        choice["text"] = text
    else:
        choice["message"] = {"role": "assistant", "content": text}
    return {"id": job.id, "object": "text_completion" if job.kind == "completions" else "chat.completion",
            "created": job.created, "model": model, "choices": [choice], "usage": usage(prompt_tokens, new_tokens),
            "draftpool": extra}


def usage(prompt_tokens: int, new_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": new_tokens,
            "total_tokens": prompt_tokens + new_tokens}


def openai_chunk(job: Job, model: str, text: str | None = None, finish: str | None = None, role: bool = False,
                 **extra) -> dict[str, Any]:
    """One server-sent event of a streamed answer, in OpenAI's chunk shape: the assistant role first (chat), then
    text deltas, then the finish reason; with stream_options.include_usage every chunk carries "usage": null and a
    last chunk with no choices carries the usage (`extra`: that usage, or the draftpool object)."""
    if job.kind == "completions":
        choices = [{"index": 0, "text": text or "", "finish_reason": finish, "logprobs": None}]
        obj = "text_completion"
    else:
        delta = ({"role": "assistant"} if role else {}) | ({"content": text} if text is not None else {})
        choices = [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        obj = "chat.completion.chunk"
    out = {"id": job.id, "object": obj, "created": job.created, "model": model, "choices": choices}
    if job.settings.include_usage:
        out["usage"] = None
    return out | extra


class HttpFrontend:
    """Binds at construction (a port in use fails at once); `jobs()` yields queued jobs to the decode loop, which
    answers each with `finish(job, status, body)`."""

    def __init__(self, addr: str, model: str, drafters: list[str], temperature: float, default_max: int,
                 timeout: float = 30.0, api_key: str = "", max_queue: int = 64, log=sys.stderr,
                 sampling: bool = True, metrics=None):
        """temperature: the default of requests that name none; sampling: False where the decode loop verifies
        greedily only (a temperature > 0 is then a 400); metrics: what GET /metrics exposes (an
        online.serve.metrics.ServerMetrics; the serve loop sets its own), a 404 while None."""
        host, port = parse_address(addr)
        self.model, self.drafters, self.timeout = model, drafters, timeout
        self.temperature, self.default_max, self.sampling = temperature, default_max, sampling
        self.queue: queue.Queue[Job] = queue.Queue(maxsize=max_queue)
        self.closing = threading.Event()
        self.closed = threading.Event()
        self.lock = threading.Lock()
        self.jobs_by_id: dict[str, Job] = {}  # queued or decoding, not yet answered
        self.abandoned = 0  # requests whose client hung up before their answer
        self.drain_until: float | None = None  # time.monotonic() when a drain ends (`drain`)
        self.metrics = metrics
        app = Edge(self._app(), api_key, MAX_BODY, timeout, observe=self._observe_http)
        self.http = ThreadedServer(app, host, port, limit_concurrency=max(64, 4 * max_queue), head_timeout=timeout)
        if (warning := exposure_warning(host, api_key)) is not None:
            print(warning, file=log, flush=True)

    @property
    def address(self) -> str:
        return self.http.address

    def start(self) -> None:
        self.http.start()

    def jobs(self, poll_s: float = 0.2) -> Iterator[Job]:
        """Until close(), or a drain's end (no job left, or its time up): short waits, so the main thread sees a stop
        signal promptly. A job whose client hung up while it waited is answered (to nobody) and skipped: it costs no
        decode time."""
        while True:
            if self.closing.is_set() and (self.drain_until is None or self.queue.empty()
                                          or time.monotonic() > self.drain_until):
                return  # rule: what a drain leaves queued gets close()'s 503
            try:
                job = self.queue.get(timeout=poll_s)
            except queue.Empty:
                continue
            if job.cancelled.is_set():
                self.finish(job, 499, error_body("the client closed the connection", "client_closed"))
                continue
            yield job

    def _observe_http(self, path: str, status: int) -> None:
        if self.metrics is not None:
            self.metrics.observe_http(path, status)

    def send(self, job: Job, chunk: dict[str, Any]) -> None:
        """From the decode loop: one chunk of a streamed answer (the answer becomes a stream of server-sent events;
        ignored once the job is finished)."""
        if job.done.is_set():
            return
        job.streaming = True
        self._push(job, ("chunk", chunk))

    def finish(self, job: Job, status: int, body: dict[str, Any] | None) -> None:
        """From any thread: the job's answer goes out (once; a second finish is ignored). A stream ends here: with
        [DONE] (status 200; `body` unused), or with an error event (any other status)."""
        with self.lock:
            if job.done.is_set():
                return
            job.done.set()
            self.jobs_by_id.pop(job.id, None)
        self._push(job, ("end", status, body))

    @staticmethod
    def _push(job: Job, item: tuple) -> None:
        if job.loop is None or job.events is None:
            return
        try:
            job.loop.call_soon_threadsafe(job.events.put_nowait, item)
        except RuntimeError:  # the event loop has stopped: nobody waits for this answer any more
            pass

    def drain(self, seconds: float, why: str = "stop") -> bool:
        """A stop's first step where there is time for it (called by the stop signal's handler): new requests get a
        503 from now, the accepted ones (queued, and the one decoding) are still served for up to `seconds`, then
        `jobs()` ends. -> False (no drain) for 0 s or a front end already closing."""
        if seconds <= 0 or self.closing.is_set():
            return False
        self.drain_until = time.monotonic() + seconds
        self.closing.set()
        line = (f"[online] {why}: no new requests; serving the {self.queue.qsize()} queued and the one decoding (up "
                f"to {seconds:g} s), then stopping; a second signal stops at once\n")
        with contextlib.suppress(OSError):  # os.write: a print could re-enter a stderr write this signal interrupted
            os.write(2, line.encode())
        return True

    def drain_over(self) -> bool:
        """A drain whose time is up: the job decoding stops at its next cycle (answered 503)."""
        return self.drain_until is not None and time.monotonic() > self.drain_until

    def close(self) -> None:
        """Stop taking requests; jobs still queued and the one being decoded get a 503, sent before the HTTP
        server stops. Safe to call twice, or before start()."""
        if self.closed.is_set():
            return
        self.closing.set()
        while True:
            try:
                job = self.queue.get_nowait()
            except queue.Empty:
                break
            self.finish(job, 503, error_body("the server is shutting down", "server_error"))
        with self.lock:
            left = list(self.jobs_by_id.values())
        for job in left:  # taken by the decode loop but never finished (a stop signal mid-request)
            self.finish(job, 503, error_body("the server stopped before answering", "server_error"))
        self.http.stop()
        self.closed.set()

    # -----------------------------------------------------------------------------------------------------------------
    async def _submit(self, kind: str, body: CompletionBody | ChatBody, request: Request) -> Response:
        try:
            settings = check_body(body, self.model, self.temperature, self.default_max, self.sampling)
        except UnknownModel as e:
            return JSONResponse(error_body(str(e), "not_found_error", "model_not_found"), 404)
        except BadRequest as e:
            return JSONResponse(error_body(str(e)), 400)
        loop = asyncio.get_running_loop()
        job = Job(kind, body.model_dump(exclude_none=True), settings, loop=loop, events=asyncio.Queue())
        if kind == "chat":
            job.body["messages"] = [m.plain() for m in body.messages]
        with self.lock:
            if self.closing.is_set():
                return JSONResponse(error_body("the server is shutting down", "server_error"), 503)
            try:
                self.queue.put_nowait(job)
            except queue.Full:
                return JSONResponse(error_body(f"the server is busy ({self.queue.maxsize} requests waiting); "
                                               f"retry later", "server_error"), 503, headers={"Retry-After": "1"})
            self.jobs_by_id[job.id] = job
        try:  # rule: the status goes out with the first event: an error before decoding is a plain JSON answer
            first = await unless_gone(request, job.events.get())
        except ClientGone:
            job.cancelled.set()  # the decode loop skips it, or stops it at the next cycle
            self.abandoned += 1
            return Response(status_code=499)
        if first[0] == "end":
            return JSONResponse(first[2], first[1])
        return StreamingResponse(self._events(job, first), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    async def _events(self, job: Job, item: tuple) -> AsyncIterator[str]:
        """A streamed answer as server-sent events until [DONE]; a client that hangs up (starlette cancels this
        generator) stops the decode at its next cycle."""
        try:
            while item[0] == "chunk":
                yield f"data: {json.dumps(item[1])}\n\n"
                item = await job.events.get()
            if item[1] != 200:  # stopped mid-answer (a server stop): OpenAI's error event, then the end
                yield f"data: {json.dumps(item[2])}\n\n"
            yield "data: [DONE]\n\n"
        finally:
            if not job.done.is_set():
                job.cancelled.set()
                self.abandoned += 1

    def _app(self) -> FastAPI:
        # rule: no slash redirects (FastAPI's 307 reflected the Host header into its Location) and no /docs or
        # /redoc pages (they load their scripts from a CDN); /openapi.json stays, behind the API key (Edge)
        app = FastAPI(title="draftpool", summary="speculative decoding with an adapting drafter pool",
                      description=__doc__, docs_url=None, redoc_url=None, redirect_slashes=False)

        @app.exception_handler(RequestValidationError)
        async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
            kind = request.headers.get("content-type")
            if kind is not None and not _is_json(kind):  # FastAPI then validates the raw bytes: a useless message
                return JSONResponse(error_body(f"the body must be JSON, sent with Content-Type: application/json "
                                               f"(got Content-Type: {kind[:100]})"), 400)
            return JSONResponse(error_body(_validation_message(exc)), 400)

        @app.exception_handler(HTTPException)
        async def _http(request: Request, exc: HTTPException) -> JSONResponse:
            kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
            message = f"no route {request.method} {request.url.path}" if exc.status_code in (404, 405) else exc.detail
            return JSONResponse(error_body(str(message), kind), exc.status_code)

        @app.get("/health")
        async def health() -> dict[str, str]:
            return {"status": "ok"}

        @app.get("/metrics", include_in_schema=False)
        async def metrics() -> Response:
            if self.metrics is None:
                return JSONResponse(error_body("no metrics on this server", "not_found_error"), 404)
            return Response(self.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

        @app.get("/v1/models")
        async def models() -> dict[str, Any]:
            return {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "draftpool",
                                                "draftpool": {"drafters": self.drafters}}]}

        @app.post("/v1/completions")
        async def completions(body: CompletionBody, request: Request) -> Response:
            return await self._submit("completions", body, request)

        @app.post("/v1/chat/completions")
        async def chat(body: ChatBody, request: Request) -> Response:
            return await self._submit("chat", body, request)

        return app

