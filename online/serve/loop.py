"""The serve loop of online_adapt.py, the same for every serving mode: read requests (a JSONL file / stdin, or the HTTP
front end's jobs) as `Request` values, serve each with the mode's `Server`, append its answer and the trainer's
events as they come, and stop cleanly on the end of the requests or a stop signal (online/serve/signals.py): the
trainer hands over, trains and exports, the served indexes are saved, the summary says what happened
(online/serve/summary.py). Every request is counted once after its decode (online/serve/metrics.py: the HTTP front
end's GET /metrics; `metrics.prom` in the out_dir at the end). What a mode serves with (decoder, selection, trainer)
is wired in online/serve/spec.py and online/lookahead/mode.py.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from draftpool.chat import chat_prompt_ids
from online.config import ServeConfig
from online.http.api import HttpFrontend
from online.http.jobs import http_requests
from online.serve.answers import answer_record, log_events
from online.serve.members import IndexSaver
from online.serve.metrics import ServerMetrics
from online.serve.request import Request
from online.serve.requests import Answered, answered_ids, read_requests
from online.serve.server import Server
from online.serve.signals import Stop, stop_signals, stopping
from online.serve.summary import run_summary
from online.trainer.process import TrainerHandle


class _Answers:
    """Where served requests go: the answers file, the metrics log, the counters, the index saver."""

    def __init__(self, server: Server, tok, metrics: ServerMetrics, saver: IndexSaver | None):
        self.server, self.tok, self.metrics, self.saver = server, tok, metrics, saver
        self.out: IO[str] | None = None  # the answers file and the metrics log, once open
        self.log: IO[str] | None = None
        self.served = self.errors = 0

    def take(self, req: Request) -> None:
        """Serve one request and record it: its answer (or error) line, its metrics, its reply."""
        queued_s = time.monotonic() - req.reply.queued if req.reply is not None else None  # before its decode
        served = self.server.serve(req)
        self.metrics.observe_request(served, len(req.prompt_ids) if served.ok else None, queued_s)
        if served.refused and req.reply is not None:  # rule: over HTTP the caller's error is its 400, not a record
            req.reply.refuse(served.error)
            return
        if served.refused:
            print(f"[online] {served.error}", file=sys.stderr)
        self.served += int(not served.refused)
        self.errors += int(not served.ok)
        if self.saver is not None:
            self.saver.answered(served)
        answer = answer_record(served, self.tok)
        if req.reply is not None:
            answer.update(req.reply.answer_fields(served))  # the answer as the client gets it (stop strings)
        self.out.write(json.dumps(answer) + "\n")
        self.out.flush()
        self.log.write(json.dumps({"time": time.time(), "event": "request",
                                   **{k: v for k, v in answer.items() if k != "text"}}) + "\n")
        log_events(self.server.take_events(), self.log)
        if req.reply is not None:
            req.reply.finish(served, answer)


def file_requests(source: IO[bytes], s: ServeConfig, tok, done: Answered, wrap: Callable[[str], str] | None
                  ) -> Iterator[Request]:
    """The request file's requests not answered yet, each prompt chat-templated (after `wrap`)."""
    for req in read_requests(source, s.max_new_tokens, done.ids, done.lines):  # answered ids; bad lines by number
        if req.error is None:
            text = wrap(req.prompt) if wrap else req.prompt
            req.prompt_ids = chat_prompt_ids(tok, [{"role": "user", "content": text}], s.chat_special_tokens)
        yield req


def serve(s: ServeConfig, server: Server, handle: TrainerHandle | None, front: HttpFrontend | None, tok,
          out_dir: Path, stops: list[int], wrap: Callable[[str], str] | None = None, saver: IndexSaver | None = None,
          metrics: ServerMetrics | None = None) -> dict[str, Any]:
    """Serve the requests (`s.requests`, or the HTTP front end's) with `server` until they end or a stop signal,
    appending answers as they finish; start `handle`'s trainer first and stop it last (its final export), save
    `saver`'s indexes. wrap: a request file's prompt -> the text that is chat-templated; metrics: what counts every
    request (default: `ServerMetrics.of` the server, its trainer and front end), served at the front end's /metrics
    and written to out_dir/metrics.prom at the end. -> the run's summary."""
    metrics = metrics or ServerMetrics.of(server, handle, front)
    if front is not None:
        front.metrics = metrics
    answers = Path(s.answers) if s.answers else out_dir / "answers.jsonl"
    answers.parent.mkdir(parents=True, exist_ok=True)
    done = answered_ids(answers)
    stopped_by, events, t0 = "end of requests", [], time.time()
    record = _Answers(server, tok, metrics, saver)
    drain = (lambda name: front.drain(s.drain_s, name)) if front is not None else None  # HTTP: accepted is served
    with stop_signals(drain), ExitStack() as files:
        try:  # rule: a stop signal during the starts below is a stop like any other (the finally stops what started)
            if front is not None:
                requests = http_requests(front, tok, stops, s.chat_special_tokens)
            else:
                source = sys.stdin.buffer if s.requests == "-" else files.enter_context(open(s.requests, "rb"))
                requests = file_requests(source, s, tok, done, wrap)
            if handle is not None:
                handle.start()
                waited = handle.wait_ready()
                shares = (" (its rounds compute on the server's cores and slow serving while they run: "
                          "process.nice=19 or serve.adapt=false to avoid that, docs/online.md)"
                          if handle.threads is not None else "")
                print(f"[online] trainer ready in {waited:.1f} s{shares}", file=sys.stderr, flush=True)
            if front is not None:
                front.start()
                print(f"[online] serving {front.address}/v1/completions and /v1/chat/completions", file=sys.stderr,
                      flush=True)
            record.out = files.enter_context(open(answers, "a"))
            record.log = files.enter_context(open(out_dir / "metrics.jsonl", "a"))
            for req in requests:
                record.take(req)
        except Stop as e:
            stopped_by = str(e)
        finally:
            stopped_by = stopping(stopped_by)  # first statement: from here on a stop signal is ignored
            events = _stop(server, handle, front, saver, metrics, out_dir)
    return run_summary("draftpool", record.served, server.failed, record.errors, stopped_by, t0, handle, events,
                       server.swap,
                       answers=str(answers), skipped_answered=len(done), indexed_answers=server.learned)


def _stop(server: Server, handle: TrainerHandle | None, front: HttpFrontend | None, saver: IndexSaver | None,
          metrics: ServerMetrics, out_dir: Path) -> list[dict]:
    """The run's stop: the front end closes (jobs still waiting, when the stop did not drain them, get a 503), the
    trainer finishes its round and exports the adapted pool, the served indexes are saved, the last events and the
    last scrape are written. -> the trainer's stop events."""
    if front is not None:
        front.close()
    events = handle.stop() if handle is not None else []
    if saver is not None:
        saver.save()
    with open(out_dir / "metrics.jsonl", "a") as log:
        log_events(server.take_events() + events, log)
    metrics.write(out_dir / "metrics.prom")  # the run's last scrape (a JSONL run has no /metrics)
    return events


def serve_on(s: ServeConfig, server: Server, handle: TrainerHandle | None, tok, out_dir: Path, stops: list[int],
             model: str, names: list[str], sampling: bool, **kw) -> dict[str, Any]:
    """`serve` with the HTTP front end when `s.http` is set (bound first: a port in use fails before anything is
    served; `model` and `names` are what /v1/models lists, `sampling` whether requests may sample). kw: `serve`'s."""
    front = None
    if s.http:
        front = HttpFrontend(s.http, model, names, s.temperature, s.max_new_tokens, s.http_timeout, s.api_key,
                             s.max_queue, sampling=sampling)
    try:
        return serve(s, server, handle, front, tok, out_dir, stops, **kw)
    finally:
        if front is not None:
            front.close()
