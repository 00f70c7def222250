"""online_adapt's HTTP front end (online/http_api.py on online/asgi.py) as a hostile client meets it: raw sockets for
the framing (no request hidden in a body is ever answered, a dripping body gets a 408 on a total deadline, sizes are
bounded), the API key, the bounded queue, a client that hangs up, and the request validation the README promises.
The decode loop is a stub thread that answers from the job (the real loop is tested end to end in test_adapt.py)."""

import io
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from online.asgi import exposure_warning, parse_address
from online.http_api import HttpFrontend

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
    bad = json.dumps({"prompt": "x", "temperature": 0.5}).encode()
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
    ({"prompt": "x", "stream": True}, 400, "stream"),
    ({"prompt": "x", "top_p": 0.5}, 400, "top_p"),
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


def test_close_answers_waiting_requests_with_503():
    f = Front(gate_open=False)
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("r", f.call("/v1/completions", {"prompt": "x"})))
    t.start()
    deadline = time.time() + 5
    while f.front.queue.qsize() < 1 and time.time() < deadline:
        time.sleep(0.02)
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
    from online.server import AdaptiveServer, Request
    from specsel.decoding.loop import SpecDecoder
    from specsel.decoding.sampling import SamplingParams
    from tests.stubs import BigramLM, successor_table

    dec = SpecDecoder(BigramLM(successor_table(16, lambda t: (t + 1) % 16)), mode="plain")
    server = AdaptiveServer(dec, {}, None, SamplingParams())
    gone = threading.Event()
    whole = server.serve(Request("a", [3], 30, gone.is_set))
    assert len(whole["tokens"]) == 30 and "cancelled" not in whole
    gone.set()
    cut = server.serve(Request("b", [3], 30, gone.is_set))
    assert cut["cancelled"] and len(cut["tokens"]) < 30 and dec.cancelled is None
