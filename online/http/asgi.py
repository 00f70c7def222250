"""The HTTP edge shared by draftpool's two front ends (online/http/api.py, online/vllm/adapt.py).

uvicorn serves an ASGI app (FastAPI) from a thread of the calling process, with its h11 protocol: a strict HTTP/1.1
parser that refuses a negative, non-numeric or conflicting Content-Length, a Transfer-Encoding other than one
`chunked` (a second Transfer-Encoding line included), and reads chunked bodies to their end. What h11 lets through
and a proxy in front may frame otherwise is refused here (RFC 9112 sections 5.2, 6.1): a request carrying
Content-Length and Transfer-Encoding together (h11 lets Transfer-Encoding win) or Transfer-Encoding on HTTP/1.0
(`Edge`), and a header line folded onto the one before (obs-fold, which h11 joins to it; `head_deadline_protocol`,
in online/http/uvicorn_shim.py with the uvicorn and h11 versions it was checked on).
So every request served has one framing, Content-Length alone or `Transfer-Encoding: chunked` alone, and anything
else gets a 400 before its body is read, with the connection closed: no byte after a refused head is parsed as a
request of its own. `Edge`, a middleware in front of the app, adds what a public endpoint needs before any route sees
a request:

0. the framing rule above, first: a 400 with `Connection: close`
1. the API key (`serve.api_key`): every /v1/ path, the schema (/openapi.json) and the metrics (/metrics) need
   `Authorization: Bearer <key>` (401 otherwise); /health stays open, as in vLLM's server
2. the body: at most `limit` bytes (413 for a larger Content-Length at once, or when a chunked body grows past it),
   all of it within `timeout` seconds from the first byte asked for (408): a total deadline, so a client dripping one
   byte at a time cannot hold a connection
3. an answer sent before the request body was read to its end carries `Connection: close` and the connection is
   closed: bytes left unread are never parsed as a next request

What it leaves to a reverse proxy: TLS, rate limits per client, many concurrent slow connections (uvicorn's
`limit_concurrency` answers 503 past a bound, it does not tell clients apart).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from online.http.uvicorn_shim import folded_head, head_deadline_protocol

__all__ = ["MAX_BODY", "ClientGone", "Edge", "ThreadedServer", "error_body", "exposure_warning", "folded_head",
           "head_deadline_protocol", "is_loopback", "parse_address", "send_json", "unless_gone"]

MAX_BODY = 1 << 20


def error_body(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """The OpenAI error shape."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def parse_address(addr: str) -> tuple[str, int]:
    """'host:port' (IPv6 as '[::1]:8000') -> (host, port); ValueError naming the expected form."""
    host, sep, port = addr.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"serve.http must be host:port (e.g. 127.0.0.1:8000), got {addr!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def exposure_warning(host: str, api_key: str) -> str | None:
    """A line for the operator when the server is reachable from other machines; None on loopback."""
    if is_loopback(host):
        return None
    key = "requests need the API key" if api_key else \
        "no API key is set (serve.api_key / --api-key / DRAFTPOOL_API_KEY): anyone who reaches the port can use it"
    return (f"[online] binding {host}: reachable from other machines; {key}. Plain HTTP: TLS and per-client rate "
            f"limits belong to a reverse proxy in front")


async def send_json(send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": data})


class ClientGone(Exception):
    """The client hung up before its answer."""


async def unless_gone(request, awaitable, poll_s: float = 0.25):
    """Await `awaitable` unless the client hangs up first: then cancel it (a forwarded request's upstream connection
    closes, and vLLM aborts it) and raise ClientGone."""
    task = asyncio.ensure_future(awaitable)
    while True:
        done, _ = await asyncio.wait({task}, timeout=poll_s)
        if done:
            return task.result()
        if await request.is_disconnected():
            task.cancel()
            raise ClientGone


class _TooLarge(Exception):
    pass


class _Gone(Exception):
    pass


class Edge:
    """ASGI middleware: framing, API key, body size and total body deadline, and no reuse of a connection whose
    request body was not read to its end (module docstring)."""

    def __init__(self, app, api_key: str = "", limit: int = MAX_BODY, timeout: float = 30.0,
                 observe: Callable[[str, int], None] | None = None):
        """observe(path, status): told of every response this middleware sees start (the Edge's own refusals
        included), e.g. the /metrics counter of HTTP responses."""
        self.app, self.api_key, self.limit, self.timeout, self.observe = app, api_key, limit, timeout, observe

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        # rule: constant-time comparison, so the key cannot be guessed byte by byte from answer times
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.api_key.encode())

    @staticmethod
    def _keyed(path: str) -> bool:
        return path.startswith("/v1") or path in ("/openapi.json", "/metrics")

    @staticmethod
    def _framing_fault(scope) -> str | None:
        """Why the request's framing is refused (module docstring), or None. Every occurrence of a header counts
        (scope["headers"] is a list; a name may repeat); h11 gives the names in lower case, lowered again here."""
        names = [name.lower() for name, _ in scope["headers"]]
        codings = [value for name, value in scope["headers"] if name.lower() == b"transfer-encoding"]
        if not codings:
            return None
        if b"content-length" in names:
            return ("a request may not carry both Content-Length and Transfer-Encoding (RFC 9112 section 6.1); the "
                    "connection is closed")
        if len(codings) > 1 or codings[0].strip().lower() != b"chunked":  # h11 refuses these itself, before us
            return "the only Transfer-Encoding supported is one `chunked`; the connection is closed"
        if scope.get("http_version") == "1.0":
            return "Transfer-Encoding is not allowed on HTTP/1.0 (RFC 9112 section 6.1); the connection is closed"
        return None

    async def _read(self, receive, state: dict) -> bytes:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Gone
            size += len(message.get("body", b""))
            if size > self.limit:
                raise _TooLarge
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                state["complete"] = True
                return b"".join(chunks)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        state = {"complete": False}

        async def guarded_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                if not state["complete"]:
                    message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
                if self.observe is not None:
                    try:
                        self.observe(scope["path"], int(message["status"]))
                    except Exception:  # noqa: BLE001 - counting a response never fails it
                        pass
            await send(message)

        if (fault := self._framing_fault(scope)) is not None:  # before anything reads the body
            return await send_json(guarded_send, 400, error_body(fault))
        headers = dict(scope["headers"])
        if self.api_key and self._keyed(scope["path"]) and not self._authorized(headers):
            return await send_json(guarded_send, 401, error_body("a valid API key is required (Authorization: "
                                                                 "Bearer <key>)", "authentication_error"),
                                   [(b"www-authenticate", b"Bearer")])
        declared = headers.get(b"content-length")
        if declared is not None and int(declared) > self.limit:  # h11 has checked that it is a plain number
            return await send_json(guarded_send, 413, error_body(f"the body is over {self.limit} bytes"))
        try:
            body = await asyncio.wait_for(self._read(receive, state), self.timeout)
        except _TooLarge:
            return await send_json(guarded_send, 413, error_body(f"the body is over {self.limit} bytes"))
        except TimeoutError:
            return await send_json(guarded_send, 408, error_body(f"the request body did not arrive within "
                                                                 f"{self.timeout:g} s"))
        except _Gone:
            return None
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:  # the app reads the body we hold; after it, the client's own events (disconnect)
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, guarded_send)


class ThreadedServer:
    """uvicorn serving `app` in a daemon thread. Binds at construction (a port in use fails at once, before anything
    is written); `stop()` lets the answers in progress go out first."""

    def __init__(self, app, host: str, port: int, name: str = "http", limit_concurrency: int = 256,
                 keep_alive_s: float = 5.0, head_timeout: float = 30.0):
        import uvicorn

        protocol = head_deadline_protocol(head_timeout)  # first: an unchecked uvicorn fails before the port is bound
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # rule: no Nagle delay: an answer's head and body are written apart, and a client's delayed ACK would
        # otherwise hold the body back ~40 ms on every keep-alive request (accepted sockets inherit the option)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock.bind((host, port))
            self.sock.listen(128)
        except OSError:
            self.sock.close()
            raise
        # h11: the strict parser (module docstring), with a deadline on request heads; no lifespan, no access log
        # (answers.jsonl is the log)
        config = uvicorn.Config(app, http=protocol, lifespan="off", log_level="warning",
                                access_log=False, log_config=None, server_header=False,
                                timeout_keep_alive=keep_alive_s, timeout_graceful_shutdown=10,
                                limit_concurrency=limit_concurrency)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, name=name,
                                       daemon=True)

    @property
    def address(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def start(self, timeout: float = 30.0) -> None:
        self.thread.start()
        deadline = time.time() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.time() > deadline:
                raise RuntimeError("the HTTP server did not start")
            time.sleep(0.01)

    def stop(self, timeout: float = 15.0) -> None:
        """Safe to call twice, or before start()."""
        if self.thread.is_alive():
            self.server.should_exit = True
            self.thread.join(timeout)
        self.sock.close()
