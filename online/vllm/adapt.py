"""Online adaptation attached to a running vLLM server (issue: vLLM where users outgrow one machine).

    client ──> draftpool front end (VllmProxy: POST /v1/completions, /v1/chat/completions, GET /health, /metrics)
                 │  forwards each body to vLLM's own OpenAI server with `return_token_ids`, returns vLLM's answer
                 │  (streamed answers pass through event by event; their ids are gathered from the chunks)
                 ▼
               vLLM server (VllmEngine): continuous batching, several requests in flight, the pool head as drafter
                 │  every finished (prompt ids, completion ids)
                 ▼
               feedback thread: one target forward over prompt + completion (online.trainer.feedback.feedback_from_ids)
                 ▼
               trainer process (online.trainer.process.TrainerHandle: OGD / optimistic / ensemble, guard, exports)
                 │  accepted versions on its weight board
                 ▼
               control thread: the version is written as a head folder and loaded into vLLM's drafter in place,
               between two engine steps (VllmEngine.swap); never the target, never a torn version

Why a proxy in front of vLLM's server rather than draftpool serving: vLLM keeps its scheduler, batching and kernels
untouched, the client sees vLLM's own answers (plus nothing), and draftpool only needs the finished token ids, which
vLLM returns on request. The trainer and its target copy live in draftpool's environment (on GPUs: its own device,
`process.device`); a dead trainer is restarted by its handle and never fails a request: the proxy only forwards.
"""

from __future__ import annotations

import json
import queue
import shutil
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from draftpool.config import ConfigError
from draftpool.models import get_kind, kinds_with
from draftpool.pool import Member, load_members, read_manifest
from draftpool.target import TargetInfo
from online.config import AdaptConfig
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
from online.serve.signals import Stop, stop_signals, stopping
from online.serve.summary import run_summary
from online.trainer.feedback import feedback_from_ids
from online.trainer.hotswap import HotSwap
from online.trainer.process import TrainerHandle, start_trainer
from online.vllm.engine import VllmEngine

REPORT_S = 60.0  # seconds between log lines of vLLM's acceptance


class VllmAdapter:
    """Adapts the drafter vLLM drafts with, from the requests vLLM serves. `member`: draftpool's copy of the served
    drafter (its weights = the engine's at start); `model`: the target in draftpool's environment, for the feedback;
    `handle`: the trainer (`start_trainer` over that member; started here)."""

    def __init__(self, engine: VllmEngine, model, member: Member, handle: TrainerHandle, feedback_top_k: int,
                 work_dir: str | Path, keep: int = 3, poll_s: float = 0.2):
        self.engine, self.model, self.member, self.handle = engine, model, member, handle
        self.kind = get_kind(member.kind)
        self.aux_layers = self.kind.aux_layers(member.module)  # the target layers the drafter reads
        self.feedback_top_k, self.keep, self.poll_s = feedback_top_k, keep, poll_s
        self.work = Path(work_dir)
        self.hot = HotSwap(handle.boards, {member.name: member.module}, handle.start_version)
        meta = Path(engine.head_dir) / "draftpool.json"
        self.meta = json.loads(meta.read_text()) if meta.is_file() else {"kind": member.kind}
        self.done: queue.Queue = queue.Queue(maxsize=256)
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.served = self.dropped = self.feedback_errors = 0
        self.versions: list[dict[str, Any]] = []  # {version, wall_s, worker_s, at}
        self.swap_errors: list[str] = []

    def start(self) -> VllmAdapter:
        self.handle.start()
        self.handle.wait_ready()  # rule: the trainer's start-up is over before the first request
        for fn in (self._feedback_loop, self._control_loop):
            t = threading.Thread(target=fn, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def finished(self, request_id: str, prompt_ids: list[int], completion_ids: list[int]) -> None:
        """A request vLLM finished: queue it for feedback (drop it, counted, when the feedback thread is behind)."""
        self.served += 1
        try:
            self.done.put_nowait((request_id, list(prompt_ids), list(completion_ids)))
        except queue.Full:
            self.dropped += 1

    def _feedback_loop(self) -> None:
        while not self.stop_event.is_set():
            try:
                rid, prompt, completion = self.done.get(timeout=0.2)
            except queue.Empty:
                continue
            if not completion:
                continue
            try:
                fb = feedback_from_ids(self.model, rid, prompt, completion, self.aux_layers, self.feedback_top_k)
            except Exception as e:  # noqa: BLE001 - a bad record must not stop adaptation
                self.feedback_errors += 1
                print(f"[vllm-adapt] feedback of {rid} failed: {type(e).__name__}: {e}", flush=True)
                continue
            if len(fb.tokens) > fb.prompt_len + 1:  # at least one verified token past the first
                self.handle.submit(fb)

    def _control_loop(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.handle.poll()  # moves feedback on, restarts a crashed or hung trainer
                if self.hot.poll():  # a newer complete version is now in the member's module
                    self._swap(self.hot.version[self.member.name])
            except Exception as e:  # noqa: BLE001 - serving goes on with the engine's current drafter
                self.swap_errors.append(f"{type(e).__name__}: {e}")
                print(f"[vllm-adapt] {self.swap_errors[-1]}", flush=True)
            time.sleep(self.poll_s)

    def _swap(self, version: int) -> None:
        folder = self.work / "heads" / f"v{version:06d}"
        meta = {**self.meta, "online": {"version": version, "engine": "vllm"}}
        # atomic: complete before vLLM reads it
        self.kind.write(self.member.module, folder, self.handle.export.target, meta)
        info = self.engine.swap(folder)
        self.versions.append({"version": version, "wall_s": info["wall_s"], "worker_s": info["worker_s"],
                              "at": time.time()})
        for old in sorted((self.work / "heads").glob("v*"))[:-self.keep]:
            shutil.rmtree(old, ignore_errors=True)

    def stop(self) -> list[dict]:
        """-> the trainer's last events."""
        self.stop_event.set()
        for t in self.threads:
            t.join(30)
        return self.handle.stop()


class VllmProxy:
    """draftpool's OpenAI-compatible front end (FastAPI on uvicorn, online/http/asgi.py): forwards to the vLLM server
    over httpx, reports finished requests. The edge (API key, body size and deadline, strict framing) is
    online/http/asgi.py's; vLLM validates the OpenAI fields itself. A client that hangs up cancels its upstream request
    (vLLM aborts it)."""

    def __init__(self, engine: VllmEngine, adapter: VllmAdapter | None, host: str = "127.0.0.1", port: int = 0,
                 timeout: float = 600.0, api_key: str = "", body_timeout: float = 30.0):
        self.engine, self.adapter, self.timeout = engine, adapter, timeout
        self.http = ThreadedServer(Edge(self._app(), api_key, MAX_BODY, body_timeout), host, port, name="vllm-proxy",
                                   head_timeout=body_timeout)
        self.failed = 0
        self.finished = 0  # answers vLLM finished (each choice)
        self._client = None  # httpx.AsyncClient, made on the server's event loop at the first request

    @property
    def url(self) -> str:
        return self.http.address

    def start(self) -> VllmProxy:
        self.http.start()
        return self

    def close(self) -> None:
        self.http.stop()

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, connect=10.0))
        return self._client

    def _sent(self, body: dict[str, Any]) -> dict[str, Any]:
        # one model is served: any model name reaches it (vLLM refuses names it does not serve)
        return {**body, "model": self.engine.served_name, "return_token_ids": True}

    def _report(self, rid: str, index: int, prompt: list[int] | None, tokens: list[int] | None, done) -> None:
        if done:
            self.finished += 1
        if self.adapter is not None and prompt and tokens is not None and done:
            self.adapter.finished(f"{rid}-{index}", prompt, tokens)

    @staticmethod
    def _strip(answer: dict[str, Any]) -> dict[str, Any]:
        """The token ids the client did not ask for leave vLLM's answer (or stream chunk)."""
        answer.pop("prompt_token_ids", None)
        for c in answer.get("choices", []):
            c.pop("prompt_token_ids", None)
            c.pop("token_ids", None)
        return answer

    async def forward(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST the body to vLLM with token ids requested; report each finished choice to the adapter; the client
        gets vLLM's answer without the token ids it did not ask for."""
        r = await self.client().post(f"{self.engine.url}{path}", json=self._sent(body))
        answer = _json_or_error(r.content, r.status_code)
        if r.status_code == 200:
            top_prompt = answer.get("prompt_token_ids")  # chat completions: at the top level
            for c in answer.get("choices", []):
                self._report(answer.get("id", ""), c.get("index", 0), c.get("prompt_token_ids") or top_prompt,
                             c.get("token_ids"), c.get("finish_reason"))
        return r.status_code, answer if body.get("return_token_ids") else self._strip(answer)

    async def events(self, response, body: dict[str, Any]) -> AsyncIterator[bytes]:
        """`stream: true`: vLLM's server-sent events pass one at a time as they come (token ids stripped unless
        asked); the choices' ids are gathered from the chunks (prompt ids on the first, token-id deltas on each) and
        reported when the stream ends."""
        prompts: dict[int, list[int]] = {}
        tokens: dict[int, list[int]] = {}
        done: dict[int, str] = {}
        rid = ""
        try:
            async for raw in response.aiter_lines():  # SSE: "data: {json}" lines, blank lines between events
                line = raw.strip()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data != "[DONE]":
                    chunk = json.loads(data)
                    rid = chunk.get("id", rid)
                    for c in chunk.get("choices", []):
                        i = c.get("index", 0)
                        prompt = c.get("prompt_token_ids") or chunk.get("prompt_token_ids")
                        if prompt:
                            prompts[i] = list(prompt)
                        tokens.setdefault(i, []).extend(c.get("token_ids") or [])
                        if c.get("finish_reason"):
                            done[i] = c["finish_reason"]
                    if not body.get("return_token_ids"):
                        data = json.dumps(self._strip(chunk))
                yield f"data: {data}\n\n".encode()
        except (httpx.HTTPError, ValueError):
            self.failed += 1  # headers are out: the client sees the stream cut (no [DONE])
            return
        finally:
            await response.aclose()  # also when the client hung up: vLLM aborts the request
        for i, reason in done.items():
            self._report(rid, i, prompts.get(i), tokens.get(i), reason)

    def _app(self) -> FastAPI:
        # no slash redirects (their Location reflected the Host header), no /docs or /redoc pages (scripts from a
        # CDN); /openapi.json stays, behind the API key (Edge)
        app = FastAPI(title="draftpool (vLLM)", summary="vLLM's OpenAI server with an adapting drafter",
                      docs_url=None, redoc_url=None, redirect_slashes=False)

        @app.get("/health")
        @app.get("/metrics")
        @app.get("/v1/models")
        async def passthrough(request: Request) -> Response:
            try:
                r = await self.client().get(f"{self.engine.url}{request.url.path}", timeout=30)
            except httpx.HTTPError as e:
                return JSONResponse(error_body(f"vLLM server: {e}", "server_error"), 503)
            kind = "text/plain" if request.url.path == "/metrics" else "application/json"
            return PlainTextResponse(r.text, r.status_code, media_type=kind)

        @app.post("/v1/completions")
        @app.post("/v1/chat/completions")
        async def post(request: Request) -> Response:
            try:
                body = json.loads(await request.body())
                if not isinstance(body, dict):
                    raise ValueError("the body must be a JSON object")
            except ValueError as e:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
                return JSONResponse(error_body(f"bad JSON: {e}"), 400)
            path = request.url.path
            try:
                if not body.get("stream"):
                    status, answer = await unless_gone(request, self.forward(path, body))
                    return JSONResponse(answer, status)
                req = self.client().build_request("POST", f"{self.engine.url}{path}", json=self._sent(body))
                r = await unless_gone(request, self.client().send(req, stream=True))
                if r.status_code != 200:
                    raw = await r.aread()
                    await r.aclose()
                    return JSONResponse(_json_or_error(raw, r.status_code), r.status_code)
                return StreamingResponse(self.events(r, body), media_type="text/event-stream")
            except ClientGone:
                return Response(status_code=499)
            except httpx.HTTPError as e:
                self.failed += 1
                return JSONResponse(error_body(f"vLLM server: {type(e).__name__}: {e}", "server_error"), 502)

        return app


def _json_or_error(raw: bytes, status: int) -> dict[str, Any]:
    try:
        answer = json.loads(raw or b"{}")
    except ValueError:
        answer = None
    return answer if isinstance(answer, dict) else error_body(f"vLLM answered {status} with no JSON object",
                                                                "server_error")


def shut_down(proxy: VllmProxy | None, adapter: VllmAdapter | None, engine: VllmEngine) -> list[dict]:
    """Front end first (no new request reaches vLLM), then the adapter (its threads and trainer), then vLLM. -> the
    trainer's last events."""
    if proxy is not None:
        proxy.close()
    events = adapter.stop() if adapter is not None else []
    engine.stop()
    return events


def report_acceptance(engine: VllmEngine, before: dict[str, float], k: int) -> dict[str, float]:
    """One log line: vLLM's acceptance since `before` (its own counters). vLLM has no fallback to plain decoding, so
    this is how a user sees a head that does not pay: a step verifies k + 1 tokens and runs k drafter steps, and
    yields 1 + accepted/draft tokens; where that step costs more than that many plain steps (CPUs; large batches on
    GPUs) speculation is slower than plain decoding (`python -m benchmarks.online_vllm` measures both). -> the
    counters now."""
    now = engine.counters()
    drafts = now["vllm:spec_decode_num_drafts"] - before["vllm:spec_decode_num_drafts"]
    if drafts > 0:
        acc = (now["vllm:spec_decode_num_accepted_tokens"] - before["vllm:spec_decode_num_accepted_tokens"]) / drafts
        print(f"[online] vLLM accepted {acc:.2f} of {k} draft tokens per step over the last {drafts:.0f} steps "
              f"({1 + acc:.2f} tokens per target step)", flush=True)
    return now


def serve_vllm(cfg: AdaptConfig, info: TargetInfo, target, pool_dir: Path, out_dir: Path,
               serve_dir: Path | None = None, start_version: int = 0, state: dict | None = None) -> dict[str, Any]:
    """`online_adapt.py serve.engine=vllm serve.http=HOST:PORT`: vLLM serves with one pool drafter of a kind vLLM
    serves, draftpool's front end forwards and adapts that drafter, until SIGINT / SIGTERM (online/serve/signals.py,
    as native serving). `serve_dir`: the pool version to serve (a restart: the last exported one, with its trainer
    `state`; default the pool). -> the run summary (online/serve/summary.py; vLLM's own figures under "vllm")."""
    s, v = cfg.serve, cfg.vllm
    serve_dir = serve_dir or pool_dir
    members = {m.name: m for m in load_members(serve_dir, info, target, kinds_with("vllm"))}
    name = v.drafter or next(iter(members))
    if name not in members:
        where = f"{serve_dir} (the version {out_dir} resumes from)" if serve_dir != pool_dir else str(pool_dir)
        raise ConfigError(f"vllm.drafter {name!r} is not a drafter vLLM serves in {where} ({', '.join(members)})")
    head_dir = serve_dir / read_manifest(serve_dir)["drafters"][name]["path"]
    out_dir.mkdir(parents=True, exist_ok=True)
    engine = VllmEngine(info.path, str(head_dir), v, out_dir / "vllm.log", served_name=info.name,
                        target_sha256=info.weights_sha256).start()
    adapter = proxy = handle = None
    stopped_by, events, counters, t0 = "end of requests", [], {}, time.time()
    with stop_signals():
        try:
            if s.adapt:
                handle = start_trainer(cfg, info, target, pool_dir, out_dir, [members[name]], state, start_version)
                adapter = VllmAdapter(engine, target, members[name], handle, s.feedback_top_k,
                                      out_dir / "vllm_heads").start()
            host, port = parse_address(s.http)
            if (warning := exposure_warning(host, s.api_key)) is not None:
                print(warning, flush=True)
            proxy = VllmProxy(engine, adapter, host, port, api_key=s.api_key, body_timeout=s.http_timeout).start()
            print(f"[online] {info.name} served by vLLM {engine.version} (drafter {name}, k={v.k}) behind "
                  f"{proxy.url}; vLLM never falls back to plain decoding: its acceptance is logged every "
                  f"{REPORT_S:.0f} s", flush=True)
            last = engine.counters()
            while True:
                time.sleep(REPORT_S)
                last = report_acceptance(engine, last, v.k)
        except Stop as e:
            stopped_by = str(e)
        finally:
            stopped_by = stopping(stopped_by)  # first statement: from here on a stop signal is ignored
            counters = _counters(engine)
            events = shut_down(proxy, adapter, engine)
    swap_ms = [x["wall_s"] * 1e3 for x in adapter.versions] if adapter else []
    failed = proxy.failed if proxy is not None else 0
    return run_summary(f"vllm {engine.version}", proxy.finished if proxy is not None else 0, failed, failed,
                       stopped_by, t0, handle, events, adapter.hot if adapter else None,
                       vllm={"drafter": name, "served_version": start_version, "versions_swapped": len(swap_ms),
                             "swap_ms": [min(swap_ms), max(swap_ms)] if swap_ms else None, "counters": counters,
                             "feedback_errors": adapter.feedback_errors if adapter else 0,
                             "swap_errors": adapter.swap_errors if adapter else []})


def _counters(engine: VllmEngine) -> dict[str, float]:
    """vLLM's spec-decode counters now ({} when the engine no longer answers)."""
    try:
        return engine.counters()
    except Exception:  # noqa: BLE001 - a stop must go on whatever state the engine is in
        return {}
