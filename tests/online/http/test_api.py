"""online_adapt's HTTP front end (online/http/api.py on online/http/asgi.py) as a hostile client meets it: raw sockets
for the framing (no request hidden in a body is ever answered, a dripping body gets a 408 on a total deadline, sizes
are bounded), the API key, the bounded queue, a client that hangs up, and the request validation the README promises.
The decode loop is a stub thread that answers from the job (the real loop is tested end to end in test_adapt.py)."""

import io
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from online.http.api import HttpFrontend
from online.http.asgi import exposure_warning, parse_address

MODEL = "test/target"
HIDDEN = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"  # a request smuggled inside another's body


class Front:
    """A started front end whose decode loop (a thread) answers jobs with their prompt, while `gate` is set."""

    def __init__(self, gate_open: bool = True, **kw):
        self.front = HttpFrontend("127.0.0.1:0", MODEL, ["d"], 0.0, 8, **kw)
        self.front.start()
        self.port = int(self.front.address.rsplit(":", 1)[1])
        self.gate = threading.Event()  # the loop takes the next job only while this is set
        if gate_open:
            self.gate.set()
        self.taken: list[str] = []
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        jobs = self.front.jobs(poll_s=0.05)
        while self.gate.wait() and (job := next(jobs, None)) is not None:
            self.taken.append(job.id)
            self.front.finish(job, 200, {"id": job.id, "echo": job.body, "max_new": job.max_new})

    def call(self, path, body=None, headers=None, timeout=30):
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, json.loads(raw) if raw else None

    def raw(self, data: bytes, wait: float = 1.5) -> bytes:
        """Send raw bytes; -> all the server sends back until it closes or `wait` s of silence."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=wait) as sock:
            sock.sendall(data)
            out = b""
            try:
                while chunk := sock.recv(65536):
                    out += chunk
            except TimeoutError:
                pass
            except ConnectionResetError:  # closed with our bytes unread: its answer may be lost on the way
                out += b"<reset>"
            return out


@pytest.fixture
def front():
    f = Front(timeout=1.0)
    yield f
    f.front.close()


def _answers(raw: bytes) -> int:
    return raw.count(b"HTTP/1.1 ")


def test_no_request_hidden_in_a_body_is_answered(front):
    """Each of these once made the old http.server front end answer the hidden request too."""
    cases = {
        "unknown path with a body": b"POST /v1/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                                    % (len(HIDDEN), HIDDEN),
        "GET with a body": b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(HIDDEN), HIDDEN),
        "negative length": b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n" + HIDDEN,
        "non-numeric length": b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n" + HIDDEN,
        "huge length": b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n" + HIDDEN,
        "chunked, not JSON": b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"%x\r\n%s\r\n0\r\n\r\n" % (len(HIDDEN), HIDDEN),
        "bad JSON": b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{%s"
                    % (len(HIDDEN) + 1, HIDDEN),
    }
    for name, data in cases.items():
        raw = front.raw(data)
        assert _answers(raw) == 1, (name, raw)
        status = int(raw.split(b" ", 2)[1])
        assert status in ((200,) if name == "GET with a body" else (400, 404, 405, 413)), (name, raw)
    assert front.call("/health") == (200, {"status": "ok"})  # still serving


def test_keep_alive_after_an_answered_error_reads_the_next_request(front):
    """A refused request whose body was read in full leaves the connection usable: the next request on it is
    answered as itself."""
    bad = json.dumps({"prompt": "x", "n": 2}).encode()
    data = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            b"%s" % (len(bad), bad)) + HIDDEN
    raw = front.raw(data)
    assert _answers(raw) == 2 and raw.startswith(b"HTTP/1.1 400") and b'"status":"ok"' in raw


def test_a_dripping_body_gets_a_408_on_a_total_deadline(front):
    """One byte every 0.2 s: each read is quick, the whole body never comes. The connection ends at the 1 s deadline
    (not after 40 drips), with a 408 when the client reads it before the close's reset (the server closes with the
    late drips unread, and a reset can overtake the answer: either ending is the deadline at work)."""
    t0 = time.time()
    reply, ended = b"", None
    with socket.create_connection(("127.0.0.1", front.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        sock.settimeout(0.2)
        for _ in range(40):
            try:
                sock.sendall(b" ")
                chunk = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:  # reset: closed with our late bytes unread
                ended = time.time() - t0
                break
            reply += chunk
            if not chunk:
                ended = time.time() - t0
                break
    assert ended is not None and ended < 4, (ended, reply)
    assert reply == b"" or reply.startswith(b"HTTP/1.1 408") and b"connection: close" in reply.lower(), reply


def test_a_connection_that_sends_no_whole_request_head_is_closed(front):
    """Idle after connecting, or headers that trickle in: closed after the deadline (1 s here), not held for ever."""
    for first in (b"", b"GET /health HTTP/1.1\r\n"):
        with socket.create_connection(("127.0.0.1", front.port), timeout=10) as sock:
            t0 = time.time()
            sock.sendall(first)
            assert sock.recv(100) == b"" and time.time() - t0 < 5
    with socket.create_connection(("127.0.0.1", front.port), timeout=10) as sock:  # and after an answer
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while b'"ok"' not in reply:
            reply += sock.recv(4096)
        assert reply.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        assert sock.recv(100) == b""


def test_body_over_the_limit_in_chunks_gets_413(front):
    chunk = b"x" * 65536
    data = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    data += b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(20)) + b"0\r\n\r\n"
    raw = front.raw(data)
    # the 413 goes out as the limit is passed; the client, still sending, may see the close as a reset first
    assert raw.startswith(b"HTTP/1.1 413") and _answers(raw) == 1 or raw == b"<reset>", raw
    assert front.taken == [] and front.call("/health")[0] == 200


def test_api_key():
    f = Front(api_key="s3cret")
    try:
        assert f.call("/health")[0] == 200  # open, as in vLLM
        assert f.call("/v1/models")[0] == 401
        assert f.call("/v1/completions", {"prompt": "x"}, {"Authorization": "Bearer wrong"})[0] == 401
        status, body = f.call("/v1/completions", {"prompt": "x"})
        assert status == 401 and body["error"]["type"] == "authentication_error"
        status, body = f.call("/v1/completions", {"prompt": "x"}, {"Authorization": "Bearer s3cret"})
        assert status == 200 and body["echo"]["prompt"] == "x"
        assert f.call("/v1/models", headers={"Authorization": "Bearer s3cret"})[0] == 200
    finally:
        f.front.close()


@pytest.mark.parametrize("body, status, word", [
    (b'{"prompt": "x", "temperature": NaN}', 400, "temperature"),
    ({"prompt": "x", "temperature": "0"}, 400, "temperature"),
    ({"prompt": "x", "n": True}, 400, "n"),
    ({"prompt": "x", "max_tokens": True}, 400, "max_tokens"),
    ({"prompt": "x", "max_tokens": 0}, 400, "max_tokens"),
    ({"prompt": ""}, 400, "prompt"),
    ({"prompt": ["a", "b"]}, 400, "prompt"),
    ({"prompt": "x", "model": "other"}, 404, "other"),
    ({"prompt": "x", "logit_bias": {"5": 1}}, 400, "logit_bias"),
    ({"prompt": "x", "temperature": 2.5}, 400, "temperature"),
    ({"prompt": "x", "top_p": 0}, 400, "top_p"),
    ({"prompt": "x", "n": 2}, 400, "n and best_of"),
    ({"prompt": "x", "stream_options": {"include_usage": True}}, 400, "stream_options"),
    ({"prompt": "x", "stream": True, "stream_options": {"include_usage": True, "x": 1}}, 400, "stream_options"),
    ({"prompt": "x", "stop": [""]}, 400, "stop"),
    ({"prompt": "x", "stop": [str(i) for i in range(17)]}, 400, "stop"),
    ({"prompt": "x", "stop_token_ids": [-1]}, 400, "stop_token_ids"),
    ({"prompt": "x", "seed": "1"}, 400, "seed"),
    ({"prompt": "x", "logprobs": 2}, 400, "logprobs"),
    ({"prompt": "x", "presence_penalty": 0.5}, 400, "presence_penalty"),
    ({"prompt": "x", "max_completion_tokens": 4}, 400, "max_completion_tokens"),
    (b"[1, 2]", 400, "body"),
])
def test_completion_refusals(front, body, status, word):
    got, reply = front.call("/v1/completions", body)
    assert got == status and word in reply["error"]["message"], reply


@pytest.mark.parametrize("body, word", [
    ({"messages": [{"role": "user", "content": "hi"}], "prompt": "x"}, "prompt"),
    ({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "max_completion_tokens": 4}, "not both"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "user", "content": 5}]}, "content"),
    ({"messages": [{"role": "tool", "content": "x"}]}, "role"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}, "content"),
])
def test_chat_refusals(front, body, word):
    got, reply = front.call("/v1/chat/completions", body)
    assert got == 400 and word in reply["error"]["message"], reply


def test_accepted_bodies_reach_the_decode_loop(front):
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 3,
            "temperature": 0}
    status, reply = front.call("/v1/chat/completions", body)
    assert status == 200 and reply["max_new"] == 3 and reply["echo"]["messages"][0]["content"] == "hi"
    status, reply = front.call("/v1/completions", {"prompt": "x"})
    assert status == 200 and reply["max_new"] == 8  # the server's default
    parts = {"messages": [{"role": "developer", "content": "be brief"},
                          {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}
    status, reply = front.call("/v1/chat/completions", parts)  # what newer OpenAI clients send
    assert status == 200 and reply["echo"]["messages"] == [{"role": "system", "content": "be brief"},
                                                           {"role": "user", "content": "a\nb"}]
    status, schema = front.call("/openapi.json")
    assert status == 200 and "/v1/chat/completions" in schema["paths"]


def test_queue_is_bounded_and_a_client_that_hangs_up_costs_no_decode():
    f = Front(gate_open=False, max_queue=2)  # the decode loop takes nothing for now
    try:
        socks = []
        for i in range(2):  # two wait in the queue; their clients then hang up
            s = socket.create_connection(("127.0.0.1", f.port), timeout=5)
            body = json.dumps({"prompt": f"p{i}"}).encode()
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            socks.append(s)
        deadline = time.time() + 5
        while f.front.queue.qsize() < 2 and time.time() < deadline:
            time.sleep(0.02)
        status, reply = f.call("/v1/completions", {"prompt": "third"})
        assert status == 503 and "busy" in reply["error"]["message"]
        for s in socks:
            s.close()
        deadline = time.time() + 5
        while f.front.abandoned < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert f.front.abandoned == 2
        f.gate.set()
        deadline = time.time() + 10  # the loop drops the two abandoned jobs (on a loaded machine: not at once)
        while f.front.queue.qsize() and time.time() < deadline:
            time.sleep(0.02)
        status, reply = f.call("/v1/completions", {"prompt": "after"})
        assert status == 200 and reply["echo"]["prompt"] == "after"
        assert f.taken == [reply["id"]]  # the two abandoned jobs were never handed to the decode loop
    finally:
        f.gate.set()
        f.front.close()


def _one_queued(f: Front) -> tuple[threading.Thread, dict]:
    """One request waiting in the queue of a front end whose loop is gated: (its client thread, got["r"] once
    answered)."""
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("r", f.call("/v1/completions", {"prompt": "x"})))
    t.start()
    deadline = time.time() + 5
    while f.front.queue.qsize() < 1 and time.time() < deadline:
        time.sleep(0.02)
    return t, got


def test_close_answers_waiting_requests_with_503():
    f = Front(gate_open=False)
    t, got = _one_queued(f)
    f.front.close()
    t.join(10)
    assert got["r"][0] == 503
    with pytest.raises(OSError):
        f.call("/health", timeout=2)


def test_binding_beyond_loopback_is_said():
    assert exposure_warning("127.0.0.1", "") is None and exposure_warning("::1", "") is None
    log = io.StringIO()
    f = HttpFrontend("0.0.0.0:0", MODEL, ["d"], 0.0, 8, log=log)
    f.close()
    assert "reachable from other machines" in log.getvalue() and "no API key" in log.getvalue()
    assert "requests need the API key" in exposure_warning("0.0.0.0", "k")


def test_parse_address():
    assert parse_address("127.0.0.1:8000") == ("127.0.0.1", 8000)
    assert parse_address("[::1]:80") == ("::1", 80)
    for bad in ("localhost", ":80", "h:99999", "h:x"):
        with pytest.raises(ValueError, match="host:port"):
            parse_address(bad)


def test_the_served_request_is_cut_when_its_client_is_gone():
    """The glue: a Request's `cancelled` reaches the decoder, and the record says the answer was cut."""
    from draftpool.forward.sampling import SamplingParams
    from online.serve.request import Request
    from online.serve.server import AdaptiveServer
    from specsel.decoding.loop import SpecDecoder
    from tests.stubs import BigramLM, successor_table

    dec = SpecDecoder(BigramLM(successor_table(16, lambda t: (t + 1) % 16)), mode="plain")
    server = AdaptiveServer(dec, {}, None, SamplingParams())
    gone = threading.Event()

    class Reply:  # the HTTP side's answer channel, as far as the decoder sees it
        def cancelled(self):
            return gone.is_set()

        def watcher(self):
            return None

    whole = server.serve(Request("a", [3], 30, reply=Reply()))
    assert len(whole.tokens) == 30 and not whole.cancelled
    gone.set()
    cut = server.serve(Request("b", [3], 30, reply=Reply()))
    assert cut.cancelled and len(cut.tokens) < 30 and dec.hooks.watch is None


def _one_answer_then_closed(port: int, data: bytes, within: float = 4.0) -> tuple[bytes, float]:
    """Send `data` on a fresh connection; -> (all the server sent, seconds until it closed). Fails when the server
    keeps the connection open past `within` s (its keep-alive and head deadlines are longer in the tests below)."""
    t0 = time.time()
    with socket.create_connection(("127.0.0.1", port), timeout=within) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except TimeoutError:
            pytest.fail(f"the connection stayed open past {within} s after {out!r}")
        except ConnectionResetError:  # closed with bytes of ours unread: counts as closed (the answer is checked)
            pass
    return out, time.time() - t0


def _framing_cases() -> dict[str, bytes]:
    """Requests that carry Content-Length and Transfer-Encoding together: every order and casing of the two header
    names, the coding's value in odd casing, on a known, an open and an unknown path. The chunked body ends at once;
    the Content-Length also covers a second request, which must never be answered."""
    chunked = b"0\r\n\r\n"
    smuggled = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    cases = {}
    for path, method in ((b"/v1/completions", b"POST"), (b"/health", b"GET"), (b"/v1/nothing", b"POST")):
        for i, cl in enumerate((b"Content-Length", b"content-length", b"CONTENT-LENGTH")):
            for j, te in enumerate((b"Transfer-Encoding", b"transfer-encoding", b"TRANSFER-ENCODING")):
                value = (b"chunked", b"Chunked", b"CHUNKED")[(i + j) % 3]
                lines = [b"%s: %d" % (cl, len(chunked + smuggled)), b"%s: %s" % (te, value)]
                for order in ("CL first", "TE first"):
                    head = b"\r\n".join([b"%s %s HTTP/1.1" % (method, path), b"Host: x", *lines, b"", b""])
                    cases[f"{method.decode()} {path.decode()} {cl.decode()} + {te.decode()}: {value.decode()}, "
                          f"{order}"] = head + chunked + smuggled
                    lines.reverse()
    return cases


def test_content_length_with_transfer_encoding_is_refused_and_the_connection_closed():
    """RFC 9112 section 6.1: a request with both is a smuggling attempt (a proxy in front may frame it by one, the
    server by the other): one 400, before any body is read, and the connection closed at once, so the bytes after
    the head are never parsed as a request of their own."""
    f = Front(timeout=10.0)  # the head deadline (and uvicorn's 5 s keep-alive) far beyond the 4 s asked for
    try:
        for name, data in _framing_cases().items():
            raw, _ = _one_answer_then_closed(f.port, data)
            assert _answers(raw) == 1 and raw.startswith(b"HTTP/1.1 400"), (name, raw)
            assert b"connection: close" in raw.lower() and b"Transfer-Encoding" in raw, (name, raw)
        assert f.taken == [] and f.call("/health") == (200, {"status": "ok"})
    finally:
        f.front.close()


def test_other_transfer_codings_and_folded_headers_are_refused_and_the_connection_closed():
    """A coding other than exactly `chunked` once, a doubled Transfer-Encoding (one line or two), Transfer-Encoding
    on HTTP/1.0, and obs-fold continuation lines (RFC 9112 section 5.2: a proxy may read a folded line as a header
    of its own, this server would not): each gets one 400 and the connection closes (h11 refuses the codings
    itself, the server the rest)."""
    hidden = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b"0\r\n\r\n" + hidden
    cases = {
        **{f"Transfer-Encoding: {v.decode()}": b"Transfer-Encoding: %s\r\n\r\n%s" % (v, body)
           for v in (b"chunked, identity", b"identity", b"gzip, chunked", b"chunked, chunked", b"chunked,")},
        "two Transfer-Encoding lines": b"Transfer-Encoding: chunked\r\ntransfer-encoding: chunked\r\n\r\n" + body,
        "folded into another header": b"X-Note: a\r\n Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + body,
        "folded value of Transfer-Encoding": b"Transfer-Encoding:\r\n chunked\r\n\r\n" + body,
        "a harmless fold": b"X-Note: a\r\n\tb\r\nContent-Length: 0\r\n\r\n" + hidden,
    }
    f = Front(timeout=10.0)
    try:
        for path in (b"/v1/completions", b"/health", b"/v1/nothing"):
            for name, rest in cases.items():
                raw, _ = _one_answer_then_closed(f.port, b"POST %s HTTP/1.1\r\nHost: x\r\n%s" % (path, rest))
                assert _answers(raw) == 1 and raw.startswith(b"HTTP/1.1 400"), (path, name, raw)
                assert b"connection: close" in raw.lower(), (path, name, raw)
            raw, _ = _one_answer_then_closed(f.port, b"POST %s HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked"
                                                     b"\r\n\r\n%s" % (path, body))
            assert _answers(raw) == 1 and raw.startswith(b"HTTP/1.1 400"), (path, "HTTP/1.0", raw)
        # a folded head behind a sound one on the same connection (pipelined): the first answered, then the 400
        raw, _ = _one_answer_then_closed(f.port, hidden + b"GET /health HTTP/1.1\r\nHost: x\r\nX-Note: a\r\n b\r\n"
                                                          b"\r\n" + hidden)
        assert _answers(raw) == 2 and raw.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 400" in raw, raw
        assert f.taken == [] and f.call("/health") == (200, {"status": "ok"})
    finally:
        f.front.close()


def test_a_trailing_slash_is_a_404_not_a_redirect_to_the_host_header(front):
    """FastAPI's slash redirect once answered /v1/models/ with a 307 to http://<Host header>/v1/models."""
    for path in (b"/v1/models/", b"/health/", b"/v1/completions/"):
        raw = front.raw(b"GET %s HTTP/1.1\r\nHost: evil.example\r\n\r\n" % path)
        assert raw.startswith(b"HTTP/1.1 404") and b"location" not in raw.lower(), (path, raw)
        assert b"evil.example" not in raw and b'"not_found_error"' in raw, (path, raw)


def test_no_docs_pages_and_the_schema_needs_the_key():
    """/docs and /redoc (pages that load their scripts from a CDN) are off; /openapi.json stays, behind the API key
    when one is set."""
    for key in ("", "s3cret"):
        f = Front(api_key=key)
        try:
            auth = {"Authorization": f"Bearer {key}"}
            for page in ("/docs", "/redoc", "/docs/oauth2-redirect"):
                assert f.call(page, headers=auth)[0] == 404, (key, page)
            status, schema = f.call("/openapi.json", headers=auth)
            assert status == 200 and "/v1/completions" in schema["paths"], key
            status, body = f.call("/openapi.json")
            assert status == (401 if key else 200), (key, body)
            if key:
                assert f.call("/openapi.json", headers={"Authorization": "Bearer wrong"})[0] == 401
        finally:
            f.front.close()


def test_a_body_not_sent_as_json_is_refused_with_the_content_type_to_use(front):
    """curl -d sends application/x-www-form-urlencoded: the 400 says what to send instead."""
    body = json.dumps({"prompt": "x"}).encode()
    for kind in ("application/x-www-form-urlencoded", "text/plain"):
        status, reply = front.call("/v1/completions", body, {"Content-Type": kind})
        message = reply["error"]["message"]
        assert status == 400 and "Content-Type: application/json" in message and kind in message, reply
    status, reply = front.call("/v1/completions", body, {"Content-Type": "application/json; charset=utf-8"})
    assert status == 200 and reply["echo"]["prompt"] == "x"
    status, reply = front.call("/v1/completions", {"prompt": "x", "n": 2})  # JSON: the usual message
    assert status == 400 and "Content-Type" not in reply["error"]["message"], reply


class StreamingFront(Front):
    """A decode loop that answers every job as a stream: one chunk every 0.05 s for `chunks` chunks (stopping early
    once its client is gone, as the real loop does at a cycle boundary), then the end."""

    def __init__(self, chunks: int = 5, **kw):
        self.chunks, self.stopped_early = chunks, []
        super().__init__(**kw)

    def _loop(self):
        from online.http.api import openai_chunk

        for job in self.front.jobs(poll_s=0.05):
            self.taken.append(job.id)
            for i in range(self.chunks):
                if job.cancelled.is_set():
                    self.stopped_early.append(i)
                    break
                self.front.send(job, openai_chunk(job, MODEL, f"t{i} "))
                time.sleep(0.05)
            else:
                self.front.finish(job, 200, None)
                continue
            self.front.finish(job, 499, None)


def _events(raw: bytes) -> list[str]:
    head, _, body = raw.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():  # undo the HTTP chunking
        out, rest = b"", body
        while rest:
            size, _, rest = rest.partition(b"\r\n")
            n = int(size, 16)
            if n == 0:
                break
            out, rest = out + rest[:n], rest[n + 2:]
        body = out
    return [e.removeprefix("data: ") for e in body.decode().split("\n\n") if e]


def test_a_stream_is_server_sent_events_ending_in_done():
    f = StreamingFront(chunks=3)
    try:
        body = json.dumps({"prompt": "x", "stream": True}).encode()
        raw = f.raw(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body), wait=3)
        assert raw.startswith(b"HTTP/1.1 200") and b"content-type: text/event-stream" in raw.lower()
        events = _events(raw)
        assert events[-1] == "[DONE]" and [json.loads(e)["choices"][0]["text"] for e in events[:-1]] == \
            ["t0 ", "t1 ", "t2 "]
    finally:
        f.front.close()


def test_a_client_that_hangs_up_mid_stream_stops_the_decode():
    f = StreamingFront(chunks=200)  # 10 s of chunks unless stopped
    try:
        body = json.dumps({"prompt": "x", "stream": True}).encode()
        with socket.create_connection(("127.0.0.1", f.port), timeout=5) as sock:
            sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        t0 = time.time()
        while not f.stopped_early and time.time() - t0 < 5:
            time.sleep(0.05)
        assert f.stopped_early and f.stopped_early[0] < 100 and f.front.abandoned == 1
    finally:
        f.front.close()


def test_a_server_stop_mid_stream_sends_an_error_event_then_done():
    f = StreamingFront(chunks=200)
    try:
        got = {}

        def client():
            body = json.dumps({"prompt": "x", "stream": True}).encode()
            got["raw"] = f.raw(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                               b"Content-Length: %d\r\n\r\n%s" % (len(body), body), wait=5)

        th = threading.Thread(target=client)
        th.start()
        time.sleep(0.5)
        f.front.close()
        th.join(10)
        events = _events(got["raw"])
        assert events[-1] == "[DONE]" and json.loads(events[-2])["error"]["type"] == "server_error"
        assert json.loads(events[0])["choices"][0]["text"] == "t0 "
    finally:
        f.front.close()


def test_sampling_is_refused_where_the_mode_verifies_greedily():
    """serve.mode tree and lookahead verify at temperature 0 only: a request's temperature > 0 is a 400 naming it;
    elsewhere a request's own temperature, top_p and seed are taken, and the server's temperature is the default."""
    from online.http.bodies import CompletionBody, check_body

    with pytest.raises(ValueError, match="greedily"):
        check_body(CompletionBody(prompt="x", temperature=0.5), "m", 0.0, 8, sampling=False)
    assert check_body(CompletionBody(prompt="x", temperature=0.0), "m", 0.0, 8, sampling=False).temperature == 0
    got = check_body(CompletionBody(prompt="x", temperature=0.7, top_p=0.5, seed=3, stop="x"), "m", 0.0, 8)
    assert (got.temperature, got.top_p, got.seed, got.stop) == (0.7, 0.5, 3, ("x",))
    assert check_body(CompletionBody(prompt="x"), "m", 0.3, 8).temperature == 0.3


def test_a_drain_serves_what_was_accepted_and_refuses_new_work(capfd):
    """A stop's drain: the queued requests are still answered, a new one gets a 503 at once, and the decode loop's
    jobs end once the accepted ones are served; one drain per front end, none for 0 s."""
    f = Front(gate_open=False)
    got = {}
    threads = [threading.Thread(target=lambda i=i: got.setdefault(i, f.call("/v1/completions", {"prompt": f"p{i}"})))
               for i in range(2)]
    for i, t in enumerate(threads):
        t.start()
        deadline = time.time() + 5  # queued in this order
        while f.front.queue.qsize() < i + 1 and time.time() < deadline:
            time.sleep(0.02)
    try:
        assert not f.front.drain(0)  # no time to drain: the stop is immediate
        assert f.front.drain(30, "SIGTERM")
        status, reply = f.call("/v1/completions", {"prompt": "late"})
        assert status == 503 and "shutting down" in reply["error"]["message"]
        f.gate.set()
        for t in threads:
            t.join(10)
        assert [got[i][0] for i in range(2)] == [200, 200] and [got[i][1]["echo"]["prompt"] for i in range(2)] == \
            ["p0", "p1"]
        f.thread.join(5)
        assert not f.thread.is_alive()  # the jobs ended: nothing accepted is left
        assert not f.front.drain(30)  # one drain
    finally:
        f.gate.set()
        f.front.close()
    assert "SIGTERM: no new requests; serving the 2 queued" in capfd.readouterr().err


def test_what_a_drain_leaves_when_its_time_is_up_gets_a_503():
    f = Front(gate_open=False)
    t, got = _one_queued(f)
    try:
        assert f.front.drain(0.05) and not f.front.drain_over()
        time.sleep(0.1)
        assert f.front.drain_over()
        f.gate.set()
        f.thread.join(5)
        assert not f.thread.is_alive() and f.taken == []  # the loop took nothing after the drain's time
    finally:
        f.gate.set()
        f.front.close()
    t.join(10)
    assert got["r"][0] == 503
