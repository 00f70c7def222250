"""An OpenAI-compatible HTTP front end for online_adapt.py (`serve.http=127.0.0.1:8000`).

    POST /v1/completions       {"prompt": str, "max_tokens": int, ...}      the prompt is tokenized as it is
    POST /v1/chat/completions  {"messages": [{"role", "content"}], ...}     the target's chat template is applied
    GET  /v1/models            the served model (the target) and its pool
    GET  /health               200 while serving

HTTP threads only parse and queue; the one decode loop (the main thread, which also owns signals and the trainer
handle) takes jobs in arrival order, so requests are served one at a time exactly as from a JSONL file, and each reply
carries the usual answer record under "draftpool" (MAT, tok/s, the drafter versions that served it). What the server
cannot honour is refused with a 400 and one message, never silently ignored: a temperature other than the server's
(`serve.temperature`), n > 1, streaming, stop strings, logprobs, top_p < 1, non-zero presence / frequency penalties,
any field this server does not know, and a prompt plus max_tokens beyond the target's context. A client that stalls
while sending its body gets a 408 after `serve.http_timeout` seconds and its connection closed.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 1 << 20
# the OpenAI fields this server reads or checks; any other field is refused rather than silently ignored
KNOWN_FIELDS = {"model", "prompt", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n",
                "best_of", "stream", "stream_options", "stop", "logprobs", "top_logprobs", "echo", "suffix",
                "presence_penalty", "frequency_penalty", "user"}


class BadRequest(ValueError):
    pass


@dataclass
class Job:
    kind: str  # "completions" | "chat"
    body: dict[str, Any]
    max_new: int
    id: str = field(default_factory=lambda: f"cmpl-{uuid.uuid4().hex[:24]}")
    done: threading.Event = field(default_factory=threading.Event)
    reply: tuple[int, dict[str, Any]] | None = None


def parse_address(addr: str) -> tuple[str, int]:
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise BadRequest(f"serve.http must be host:port (e.g. 127.0.0.1:8000), got {addr!r}")
    return host, int(port)


def check_body(kind: str, body: Any, temperature: float, default_max: int) -> int:
    """Validate a request body against what this server can do; -> max new tokens."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(body) - KNOWN_FIELDS)
    if unknown:
        raise BadRequest(f"unsupported field(s) {', '.join(unknown)}")
    if kind == "completions":
        if not isinstance(body.get("prompt"), str) or not body["prompt"]:
            raise BadRequest('"prompt" must be a non-empty string (one prompt per request)')
    else:
        msgs = body.get("messages")
        if (not isinstance(msgs, list) or not msgs
                or not all(isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                           for m in msgs)):
            raise BadRequest('"messages" must be a non-empty list of {"role": str, "content": str}')
    t = body.get("temperature")
    if t is not None and (not isinstance(t, int | float) or abs(float(t) - temperature) > 1e-9):
        raise BadRequest(f"this server decodes at temperature {temperature} (serve.temperature); got {t}")
    if body.get("n", 1) != 1 or body.get("best_of", 1) != 1:
        raise BadRequest("n and best_of must be 1")
    if body.get("stream"):
        raise BadRequest("streaming is not supported")
    if body.get("stop"):
        raise BadRequest("stop strings are not supported (generation ends at the target's end-of-sequence tokens)")
    if body.get("logprobs") or body.get("top_logprobs") or body.get("echo") or body.get("suffix"):
        raise BadRequest("logprobs, top_logprobs, echo and suffix are not supported")
    if body.get("stream_options") is not None:
        raise BadRequest("stream_options is not supported (no streaming)")
    for key in ("presence_penalty", "frequency_penalty"):
        v = body.get(key)
        if v is not None and (not isinstance(v, int | float) or isinstance(v, bool) or v != 0):
            raise BadRequest(f"{key} is not supported (only 0): the target's distribution is served unchanged")
    p = body.get("top_p")
    if p is not None and (not isinstance(p, int | float) or isinstance(p, bool) or p != 1):
        raise BadRequest(f"top_p is not supported (only 1), got {p!r}")
    key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    n = body.get(key, default_max)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise BadRequest(f"{key} must be an integer >= 1, got {n!r}")
    return n


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


def error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class HttpFrontend:
    """Binds at construction (a port in use fails at once); `jobs()` yields queued jobs to the decode loop, which
    answers each with `finish(job, status, body)`."""

    def __init__(self, addr: str, model: str, drafters: list[str], temperature: float, default_max: int,
                 timeout: float = 30.0):
        host, port = parse_address(addr)
        self.model, self.drafters, self.timeout = model, drafters, timeout
        self.temperature, self.default_max = temperature, default_max
        self.queue: queue.Queue[Job] = queue.Queue()
        self.closing = threading.Event()
        self.closed = threading.Event()
        self.httpd = ThreadingHTTPServer((host, port), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="http", daemon=True)

    @property
    def address(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> None:
        self.thread.start()

    def jobs(self, poll_s: float = 0.2) -> Iterator[Job]:
        """Until close(): short waits, so the main thread sees a stop signal promptly."""
        while not self.closing.is_set():
            try:
                yield self.queue.get(timeout=poll_s)
            except queue.Empty:
                continue

    def finish(self, job: Job, status: int, body: dict[str, Any]) -> None:
        job.reply = (status, body)
        job.done.set()

    def close(self) -> None:
        """Stop taking requests; jobs still queued get a 503. Safe to call twice, or before start()."""
        if self.closed.is_set():
            return
        self.closing.set()
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()
        while True:
            try:
                job = self.queue.get_nowait()
            except queue.Empty:
                break
            self.finish(job, 503, error_body("the server is shutting down", "server_error"))
        self.closed.set()  # a job taken but never finished (a stop signal mid-request) is answered 503 too

    def _handler(self):
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = front.timeout  # socket timeout: a stalled request line or body does not hold its thread

            def log_message(self, fmt, *args):  # quiet: answers.jsonl is the log
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 - http.server's naming
                if self.path == "/health":
                    return self._send(200, {"status": "ok"})
                if self.path == "/v1/models":
                    return self._send(200, {"object": "list", "data": [
                        {"id": front.model, "object": "model", "owned_by": "draftpool",
                         "draftpool": {"drafters": front.drafters}}]})
                return self._send(404, error_body(f"no route {self.path}", "not_found_error"))

            def do_POST(self):  # noqa: N802
                kind = {"/v1/completions": "completions", "/v1/chat/completions": "chat"}.get(self.path)
                if kind is None:
                    return self._send(404, error_body(f"no route {self.path}", "not_found_error"))
                try:
                    size = int(self.headers.get("Content-Length", "0"))
                    if not 0 < size <= MAX_BODY:
                        raise BadRequest(f"a JSON body of 1 to {MAX_BODY} bytes is required")
                    data = self.rfile.read(size)
                    if len(data) < size:
                        raise TimeoutError
                    body = json.loads(data)
                    max_new = check_body(kind, body, front.temperature, front.default_max)
                except TimeoutError:
                    self.close_connection = True
                    try:
                        return self._send(408, error_body(f"the request body did not arrive within "
                                                          f"{front.timeout:g} s"))
                    except OSError:  # the client is gone
                        return None
                except (BadRequest, ValueError) as e:
                    return self._send(400, error_body(str(e) if isinstance(e, BadRequest) else f"bad JSON: {e}"))
                if front.closing.is_set():
                    return self._send(503, error_body("the server is shutting down", "server_error"))
                job = Job(kind, body, max_new)
                front.queue.put(job)
                while not job.done.wait(0.5):
                    if front.closed.is_set():
                        return self._send(503, error_body("the server stopped before answering", "server_error"))
                return self._send(*job.reply)

        return Handler
