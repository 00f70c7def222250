"""An OpenAI-compatible HTTP front end for online_adapt.py (`serve.http=127.0.0.1:8000`), on FastAPI + uvicorn.

    POST /v1/completions       {"prompt": str, "max_tokens": int, ...}      the prompt is tokenized as it is
    POST /v1/chat/completions  {"messages": [{"role", "content"}], ...}     the target's chat template is applied
    GET  /v1/models            the served model (the target) and its pool
    GET  /health               200 while serving (open without the API key)
    GET  /docs, /openapi.json  the API's schema, from the request models below

The HTTP thread (uvicorn, online/asgi.py) only validates and queues; the one decode loop (the main thread, which also
owns signals and the trainer handle) takes jobs in arrival order, so requests are served one at a time exactly as
from a JSONL file, and each reply carries the usual answer record under "draftpool" (MAT, tok/s, the drafter versions
that served it). What the server cannot honour is refused with a 400 and one message, never silently ignored: a
temperature other than the server's (`serve.temperature`), n > 1, streaming, stop strings, logprobs, top_p < 1,
non-zero presence / frequency penalties, any field this server does not know (`prompt` on chat, too), a non-finite
number, both max_tokens and max_completion_tokens, and a prompt plus max_tokens beyond the target's context; a model
other than the served one gets a 404. At most `max_queue` requests wait (503 past it); a request whose client hangs
up waiting is dropped before its decode, or stopped at the next decode cycle.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException

from online.asgi import (
    MAX_BODY,
    ClientGone,
    Edge,
    ThreadedServer,
    error_body,
    exposure_warning,
    parse_address,
    unless_gone,
)

__all__ = ["BadRequest", "HttpFrontend", "Job", "error_body", "openai_reply", "parse_address"]

Finite = Annotated[float, Field(allow_inf_nan=False)]
Positive = Annotated[int, Field(ge=1)]


class BadRequest(ValueError):
    pass


class UnknownModel(ValueError):
    pass


# ---------------------------------------------------------------------------------------------------------------------
# the request bodies: OpenAI's fields this server reads or refuses; strict types (no "1" for 1, no true for 1) and
# extra="forbid" (any other field is refused rather than silently ignored)
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    model: str | None = None
    max_tokens: Positive | None = None
    temperature: Finite | None = None
    top_p: Finite | None = None
    n: int = 1
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    stop: str | list[str] | None = None
    presence_penalty: Finite | None = None
    frequency_penalty: Finite | None = None
    seed: int | None = None
    user: str | None = None


class CompletionBody(_Body):
    prompt: Annotated[str, Field(min_length=1)]
    best_of: int = 1
    echo: bool = False
    suffix: str | None = None
    logprobs: int | None = None


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    role: Literal["system", "user", "assistant"]
    content: str
    name: str | None = None


class ChatBody(_Body):
    messages: Annotated[list[Message], Field(min_length=1)]
    max_completion_tokens: Positive | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None

    @model_validator(mode="after")
    def _one_length(self) -> ChatBody:
        if self.max_tokens is not None and self.max_completion_tokens is not None:
            raise ValueError("give max_tokens or max_completion_tokens, not both")
        return self


def check_body(body: CompletionBody | ChatBody, served: str, temperature: float, default_max: int) -> int:
    """What the typed body cannot say: the settings this server decodes with. -> max new tokens."""
    if body.model is not None and body.model != served:
        raise UnknownModel(f"the model {body.model!r} is not served here (this server serves {served!r})")
    if body.temperature is not None and abs(body.temperature - temperature) > 1e-9:
        raise BadRequest(f"this server decodes at temperature {temperature} (serve.temperature); got "
                         f"{body.temperature}")
    if body.n != 1 or getattr(body, "best_of", 1) != 1:
        raise BadRequest("n and best_of must be 1")
    if body.stream or body.stream_options is not None:
        raise BadRequest("streaming is not supported (stream, stream_options)")
    if body.stop:
        raise BadRequest("stop strings are not supported (generation ends at the target's end-of-sequence tokens)")
    if body.logprobs or getattr(body, "top_logprobs", None) or getattr(body, "echo", False) or \
            getattr(body, "suffix", None):
        raise BadRequest("logprobs, top_logprobs, echo and suffix are not supported")
    for key in ("presence_penalty", "frequency_penalty"):
        if getattr(body, key) not in (None, 0):
            raise BadRequest(f"{key} is not supported (only 0): the target's distribution is served unchanged")
    if body.top_p not in (None, 1):
        raise BadRequest(f"top_p is not supported (only 1), got {body.top_p!r}")
    given = getattr(body, "max_completion_tokens", None) or body.max_tokens
    return given if given is not None else default_max


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
    max_new: int
    id: str = field(default_factory=lambda: f"cmpl-{uuid.uuid4().hex[:24]}")
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)  # the client hung up
    reply: tuple[int, dict[str, Any]] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    future: asyncio.Future | None = None


def openai_reply(job: Job, model: str, text: str, prompt_tokens: int, new_tokens: int, finish: str,
                 extra: dict[str, Any]) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish, "logprobs": None}
    if job.kind == "completions":
        choice["text"] = text
    else:
        choice["message"] = {"role": "assistant", "content": text}
    return {"id": job.id, "object": "text_completion" if job.kind == "completions" else "chat.completion",
            "created": int(time.time()), "model": model, "choices": [choice],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": new_tokens,
                      "total_tokens": prompt_tokens + new_tokens},
            "draftpool": extra}


class HttpFrontend:
    """Binds at construction (a port in use fails at once); `jobs()` yields queued jobs to the decode loop, which
    answers each with `finish(job, status, body)`."""

    def __init__(self, addr: str, model: str, drafters: list[str], temperature: float, default_max: int,
                 timeout: float = 30.0, api_key: str = "", max_queue: int = 64, log=sys.stderr):
        host, port = parse_address(addr)
        self.model, self.drafters, self.timeout = model, drafters, timeout
        self.temperature, self.default_max = temperature, default_max
        self.queue: queue.Queue[Job] = queue.Queue(maxsize=max_queue)
        self.closing = threading.Event()
        self.closed = threading.Event()
        self.lock = threading.Lock()
        self.jobs_by_id: dict[str, Job] = {}  # queued or decoding, not yet answered
        self.abandoned = 0  # requests whose client hung up before their answer
        app = Edge(self._app(), api_key, MAX_BODY, timeout)
        self.http = ThreadedServer(app, host, port, limit_concurrency=max(64, 4 * max_queue), head_timeout=timeout)
        if (warning := exposure_warning(host, api_key)) is not None:
            print(warning, file=log, flush=True)

    @property
    def address(self) -> str:
        return self.http.address

    def start(self) -> None:
        self.http.start()

    def jobs(self, poll_s: float = 0.2) -> Iterator[Job]:
        """Until close(): short waits, so the main thread sees a stop signal promptly. A job whose client hung up
        while it waited is answered (to nobody) and skipped: it costs no decode time."""
        while not self.closing.is_set():
            try:
                job = self.queue.get(timeout=poll_s)
            except queue.Empty:
                continue
            if job.cancelled.is_set():
                self.finish(job, 499, error_body("the client closed the connection", "client_closed"))
                continue
            yield job

    def finish(self, job: Job, status: int, body: dict[str, Any]) -> None:
        """From any thread: the job's answer goes out (once; a second finish is ignored)."""
        with self.lock:
            if job.done.is_set():
                return
            job.reply = (status, body)
            job.done.set()
            self.jobs_by_id.pop(job.id, None)
        if job.loop is not None and job.future is not None:
            try:
                job.loop.call_soon_threadsafe(lambda: job.future.done() or job.future.set_result(None))
            except RuntimeError:  # the event loop has stopped: nobody waits for this answer any more
                pass

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
            max_new = check_body(body, self.model, self.temperature, self.default_max)
        except UnknownModel as e:
            return JSONResponse(error_body(str(e), "not_found_error", "model_not_found"), 404)
        except BadRequest as e:
            return JSONResponse(error_body(str(e)), 400)
        loop = asyncio.get_running_loop()
        job = Job(kind, body.model_dump(exclude_none=True), max_new, loop=loop, future=loop.create_future())
        with self.lock:
            if self.closing.is_set():
                return JSONResponse(error_body("the server is shutting down", "server_error"), 503)
            try:
                self.queue.put_nowait(job)
            except queue.Full:
                return JSONResponse(error_body(f"the server is busy ({self.queue.maxsize} requests waiting); "
                                               f"retry later", "server_error"), 503, headers={"Retry-After": "1"})
            self.jobs_by_id[job.id] = job
        try:
            await unless_gone(request, job.future)
        except ClientGone:
            job.cancelled.set()  # the decode loop skips it, or stops it at the next cycle
            self.abandoned += 1
            return Response(status_code=499)
        status, reply = job.reply
        return JSONResponse(reply, status)

    def _app(self) -> FastAPI:
        app = FastAPI(title="draftpool", summary="speculative decoding with an adapting drafter pool",
                      description=__doc__)

        @app.exception_handler(RequestValidationError)
        async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
            return JSONResponse(error_body(_validation_message(exc)), 400)

        @app.exception_handler(HTTPException)
        async def _http(request: Request, exc: HTTPException) -> JSONResponse:
            kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
            message = f"no route {request.method} {request.url.path}" if exc.status_code in (404, 405) else exc.detail
            return JSONResponse(error_body(str(message), kind), exc.status_code)

        @app.get("/health")
        async def health() -> dict[str, str]:
            return {"status": "ok"}

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

