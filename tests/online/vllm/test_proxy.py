"""draftpool's front end for vLLM (VllmProxy) against a stand-in upstream that answers in vLLM's OpenAI format (vLLM
itself is not in CI; the real server is driven by the opt-in tests/online/vllm/test_adapt.py): forwarding, token ids
stripped unless asked, streamed answers passed through event by event and their ids gathered for the trainer."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from online.vllm.adapt import VllmProxy

PROMPT, TOKENS = [1, 2, 3], [5, 6, 7]


class Upstream:
    """Answers /v1/completions like vLLM with return_token_ids: whole, or as server-sent events (prompt ids on the
    first chunk, token-id deltas on each, the finish reason on the last)."""

    def __init__(self):
        self.bodies: list[dict] = []
        up = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                up.bodies.append(body)
                if body.get("max_tokens") == 0:
                    data = json.dumps({"error": {"message": "max_tokens must be at least 1"}}).encode()
                    self.send_response(400)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if not body.get("stream"):
                    data = json.dumps({"id": "cmpl-1", "choices": [
                        {"index": 0, "text": "abc", "finish_reason": "length", "prompt_token_ids": PROMPT,
                         "token_ids": TOKENS}]}).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()  # no length: the body ends when the connection closes
                chunks = [{"index": 0, "text": "a", "prompt_token_ids": PROMPT, "token_ids": TOKENS[:2],
                           "finish_reason": None},
                          {"index": 0, "text": "b", "token_ids": TOKENS[2:], "finish_reason": "length"}]
                for c in chunks:
                    self.wfile.write(f"data: {json.dumps({'id': 'cmpl-2', 'choices': [c]})}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def setup():
    up = Upstream()
    seen: list[tuple] = []
    adapter = SimpleNamespace(finished=lambda rid, p, c: seen.append((rid, p, c)))
    proxy = VllmProxy(SimpleNamespace(url=up.url, served_name="served"), adapter).start()
    yield up, proxy, seen
    proxy.close()
    up.httpd.shutdown()


def post(url: str, body: dict) -> tuple[int, bytes]:
    req = urllib.request.Request(f"{url}/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def events(raw: bytes) -> list[str]:
    return [x[5:].strip() for x in raw.decode().split("\n\n") if x.startswith("data:")]


def test_a_whole_answer_is_forwarded_and_its_ids_reach_the_trainer_only(setup):
    up, proxy, seen = setup
    status, raw = post(proxy.url, {"model": "anything", "prompt": "hi", "max_tokens": 3})
    answer = json.loads(raw)
    assert status == 200 and answer["choices"][0]["text"] == "abc"
    assert "token_ids" not in answer["choices"][0] and "prompt_token_ids" not in answer["choices"][0]
    assert up.bodies[-1]["model"] == "served" and up.bodies[-1]["return_token_ids"] is True
    assert seen == [("cmpl-1-0", PROMPT, TOKENS)]
    status, raw = post(proxy.url, {"prompt": "hi", "max_tokens": 3, "return_token_ids": True})
    assert json.loads(raw)["choices"][0]["token_ids"] == TOKENS  # asked for: kept


def test_a_stream_is_passed_through_event_by_event_and_reported_once_finished(setup):
    up, proxy, seen = setup
    status, raw = post(proxy.url, {"prompt": "hi", "max_tokens": 3, "stream": True})
    ev = events(raw)
    assert status == 200 and ev[-1] == "[DONE]" and len(ev) == 3
    chunks = [json.loads(e) for e in ev[:-1]]
    assert "".join(c["choices"][0]["text"] for c in chunks) == "ab"
    assert all("token_ids" not in c["choices"][0] and "prompt_token_ids" not in c["choices"][0] for c in chunks)
    assert seen == [("cmpl-2-0", PROMPT, TOKENS)]  # the deltas gathered into the whole completion
    status, raw = post(proxy.url, {"prompt": "hi", "max_tokens": 3, "stream": True, "return_token_ids": True})
    got = [json.loads(e) for e in events(raw)[:-1]]
    assert [t for c in got for t in c["choices"][0]["token_ids"]] == TOKENS


def test_an_upstream_refusal_reaches_the_client_and_nothing_reaches_the_trainer(setup):
    up, proxy, seen = setup
    for stream in (False, True):
        status, raw = post(proxy.url, {"prompt": "hi", "max_tokens": 0, "stream": stream})
        assert status == 400 and "max_tokens" in json.loads(raw)["error"]["message"]
    assert seen == [] and proxy.failed == 0


def test_acceptance_is_reported_per_interval_from_the_counter_differences(capsys):
    from online.vllm.adapt import report_acceptance

    c = {"vllm:spec_decode_num_drafts": 10.0, "vllm:spec_decode_num_draft_tokens": 30.0,
         "vllm:spec_decode_num_accepted_tokens": 5.0}
    later = {**c, "vllm:spec_decode_num_drafts": 30.0, "vllm:spec_decode_num_accepted_tokens": 20.0}
    assert report_acceptance(SimpleNamespace(counters=lambda: later), c, 3) == later
    assert "accepted 0.75 of 3 draft tokens per step over the last 20 steps (1.75 tokens" in capsys.readouterr().out
    report_acceptance(SimpleNamespace(counters=lambda: later), later, 3)  # no step since: no line
    assert capsys.readouterr().out == ""


def _raw(url: str, data: bytes, wait: float = 1.5) -> bytes:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return out


def test_hostile_framing_never_reaches_vllm(setup):
    """What the old http.server proxy forwarded or tracebacked on: a negative or non-numeric Content-Length, a body
    past the size limit, a request hidden in a body; and a body that drips in gets a 408 on a total deadline."""
    up, proxy, seen = setup
    hidden = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
    for head in (b"Content-Length: -1", b"Content-Length: 12x", b"Content-Length: 2000000"):
        raw = _raw(proxy.url, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n\r\n" + hidden)
        assert raw.count(b"HTTP/1.1 ") == 1 and raw.split(b" ")[1] in (b"400", b"413"), (head, raw)
    # Content-Length beside Transfer-Encoding (either order), a doubled coding, a folded header line: one 400 and
    # the connection closed at once (not at the 5 s keep-alive), the chunked body and what follows never forwarded
    body = b'{"prompt": "hi", "max_tokens": 3}'
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    te, cl = b"transfer-encoding: Chunked", b"CONTENT-LENGTH: %d" % len(chunked + hidden)
    for head in (te + b"\r\n" + cl, cl + b"\r\n" + te, b"Transfer-Encoding: chunked, chunked",
                 b"X-Note: a\r\n Transfer-Encoding: chunked\r\nContent-Length: %d" % len(chunked + hidden)):
        t0 = time.time()
        raw = _raw(proxy.url, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n%s%s" % (head, chunked, hidden),
                   wait=6)
        assert raw.count(b"HTTP/1.1 ") == 1 and raw.startswith(b"HTTP/1.1 400") and time.time() - t0 < 4, (head, raw)
    assert up.bodies == [] and seen == []
    slow = VllmProxy(SimpleNamespace(url=up.url, served_name="served"), None, body_timeout=0.5).start()
    try:
        host, port = slow.url.removeprefix("http://").rsplit(":", 1)
        t0 = time.time()
        reply = b""
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n")
            sock.settimeout(0.1)
            for _ in range(50):  # a byte every 0.1 s until the connection ends
                try:
                    sock.sendall(b" ")
                    chunk = sock.recv(4096)
                except TimeoutError:
                    continue
                except OSError:  # reset: closed with the late drips unread (it can overtake the 408)
                    break
                reply += chunk
                if not chunk:
                    break
        assert time.time() - t0 < 3 and (reply == b"" or reply.startswith(b"HTTP/1.1 408")), reply
    finally:
        slow.close()
    assert up.bodies == []


def test_no_redirect_no_docs_pages_and_the_schema_needs_the_key(setup):
    """No slash redirect to the Host header (/v1/models/ is a 404), no /docs or /redoc, /openapi.json behind the key
    when one is set."""
    up, proxy, seen = setup
    raw = _raw(proxy.url, b"GET /v1/models/ HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 404") and b"location" not in raw.lower() and b"evil" not in raw, raw
    keyed = VllmProxy(SimpleNamespace(url=up.url, served_name="served"), None, api_key="k").start()
    try:
        for url, key in ((proxy.url, None), (keyed.url, "k")):
            auth = {"Authorization": f"Bearer {key}"} if key else {}
            for page in ("/docs", "/redoc"):
                with pytest.raises(urllib.error.HTTPError) as e:
                    urllib.request.urlopen(urllib.request.Request(url + page, headers=auth), timeout=30)
                assert e.value.code == 404, (url, page)
            with urllib.request.urlopen(urllib.request.Request(url + "/openapi.json", headers=auth), timeout=30) as r:
                assert "/v1/completions" in json.loads(r.read())["paths"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(keyed.url + "/openapi.json", timeout=30)
        assert e.value.code == 401
    finally:
        keyed.close()
    assert up.bodies == []


def test_api_key_and_a_dead_upstream(setup):
    up, proxy, seen = setup
    keyed = VllmProxy(SimpleNamespace(url=up.url, served_name="served"), None, api_key="k").start()
    try:
        assert post(keyed.url, {"prompt": "hi", "max_tokens": 3})[0] == 401
        req = urllib.request.Request(f"{keyed.url}/v1/completions", data=b'{"prompt": "hi", "max_tokens": 3}',
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer k"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200
    finally:
        keyed.close()
    up.httpd.shutdown()
    up.httpd.server_close()
    status, raw = post(proxy.url, {"prompt": "hi", "max_tokens": 3})
    assert status == 502 and "vLLM server" in json.loads(raw)["error"]["message"] and proxy.failed == 1
