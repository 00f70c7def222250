"""The serve loop of online_adapt.py, the same for every serving mode: read requests (a JSONL file / stdin, or the HTTP
front end's jobs), check each against the target, serve it, append its answer and the trainer's events as they come,
and stop cleanly on the end of the requests or a stop signal (online/serve/signals.py): the trainer hands over, trains
and exports, the served indexes are saved, the summary says what happened. Every request is counted once after its
decode (online/serve/metrics.py: the HTTP front end's GET /metrics; `metrics.prom` in the out_dir at the end). What a
mode serves with (decoder, selection, trainer) is wired in online/modes/."""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from draftpool.io import run_lock
from online.config import ServeConfig
from online.http.api import HttpFrontend, error_body
from online.http.jobs import chat_prompt_ids, http_rows
from online.serve.answers import answer_record, log_events
from online.serve.members import IndexSaver
from online.serve.metrics import ServerMetrics
from online.serve.requests import answered_ids, read_requests
from online.serve.server import Request
from online.serve.signals import Stop, on_signal
from online.trainer.process import TrainerHandle
from specsel.decoding.loop import SpecError
from specsel.selection.selector import Selector


def serve(s: ServeConfig, server, handle: TrainerHandle | None, front: HttpFrontend | None, tok, out_dir: Path,
          stops: list[int], wrap: Callable[[str], str] | None = None, saver: IndexSaver | None = None,
          new_selector: Callable[[], Selector] | None = None, metrics: ServerMetrics | None = None
          ) -> dict[str, Any]:
    """Serve the requests (`s.requests`, or the HTTP front end's) with `server` (an AdaptiveServer or a
    LookaheadServer) until they end or a stop signal, appending answers as they finish; start `handle`'s trainer
    first and stop it last (its final export), save `saver`'s indexes. wrap: a request file's prompt -> the text
    that is chat-templated; new_selector: a fresh selector for each request (serve.selection_state reset);
    metrics: what counts every request (default: `ServerMetrics.of` the server, its trainer and front end), served
    at the front end's /metrics and written to out_dir/metrics.prom at the end. -> the run's summary."""
    if metrics is None:
        metrics = ServerMetrics.of(server, handle, front)
    if front is not None:
        front.metrics = metrics
    source = None
    answers = Path(s.answers) if s.answers else out_dir / "answers.jsonl"
    answers.parent.mkdir(parents=True, exist_ok=True)
    done = answered_ids(answers)
    if front is not None:
        rows = http_rows(front, tok, stops, s.chat_special_tokens)
    else:
        source = sys.stdin.buffer if s.requests == "-" else open(s.requests, "rb")  # noqa: SIM115 - closed below
        rows = read_requests(source, s.max_new_tokens, done.ids, done.lines)  # answered ids; bad lines by number
    Stop.under_way = None
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    served = errors = 0
    stopped_by = "end of requests"
    t0 = time.time()
    try:  # rule: a stop signal during the starts below is a stop like any other (the finally stops what started)
        if handle is not None:
            handle.start()
        if front is not None:
            front.start()
            print(f"[online] serving {front.address}/v1/completions and /v1/chat/completions", file=sys.stderr,
                  flush=True)
        with open(answers, "a") as out, open(out_dir / "metrics.jsonl", "a") as log:
            for row in rows:
                if "error" not in row:
                    run = row.get("run")  # an HTTP job's sampling, stops, stream
                    ids = row.get("prompt_ids") or chat_prompt_ids(tok, [{"role": "user", "content": wrap(
                        row["prompt"]) if wrap else row["prompt"]}], s.chat_special_tokens)
                    try:  # a request the target cannot take (too long for its context) is the caller's error
                        server.check_request(ids, row["max_new_tokens"], run.params if run else None)
                    except SpecError as e:
                        row = {**row, "error": f"request line {row['line']}: {e}" if "line" in row else str(e)}
                        if run is not None:
                            metrics.observe_request(row)
                            front.finish(run.job, 400, error_body(str(e)))
                            continue
                if "error" in row:
                    print(f"[online] {row['error']}", file=sys.stderr)
                    rec = row
                    metrics.observe_request(rec)
                else:
                    if new_selector is not None:
                        server.dec.set_selector(new_selector())
                    queued_s = None if run is None else time.monotonic() - run.job.queued
                    rec = server.serve(Request(row["id"], ids, row["max_new_tokens"]) if run is None else Request(
                        row["id"], ids, row["max_new_tokens"], run.job.cancelled.is_set,
                        run.watch if run.watches else None, run.params, run.seed))
                    metrics.observe_request(rec, len(ids), queued_s)
                    served += 1
                    if saver is not None:
                        saver.answered(rec)
                errors += int("error" in rec)
                answer = answer_record(rec, tok)
                if row.get("run") is not None and "tokens" in rec:
                    answer.update(row["run"].record_fields(rec))  # the answer as the client gets it (stop strings)
                out.write(json.dumps(answer) + "\n")
                out.flush()
                log.write(json.dumps({"time": time.time(), "event": "request", **{
                    k: v for k, v in answer.items() if k != "text"}}) + "\n")
                log_events(server.events, log)
                server.events.clear()
                if row.get("run") is not None:
                    row["run"].finish(rec, answer)
    except Stop as e:
        stopped_by = str(e)
    finally:
        # rule: from here on a stop signal is ignored (on_signal), first statement, no call before it; the original
        # handlers come back only once everything is saved
        Stop.under_way = Stop.under_way or stopped_by
        try:
            if source is not None and source is not sys.stdin.buffer:
                source.close()
            if front is not None:
                front.close()
            # 4. stop: the trainer finishes its round and exports the adapted pool; the served indexes are saved
            events = handle.stop() if handle is not None else []
            if saver is not None:
                saver.save()
            with open(out_dir / "metrics.jsonl", "a") as log:
                log_events(server.events + events, log)
            metrics.write(out_dir / "metrics.prom")  # the run's last scrape (a JSONL run has no /metrics)
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
    summary = {"served": served, "errors": errors, "failed": server.failed, "skipped_answered": len(done),
               "indexed_answers": server.learned,
               "stopped_by": stopped_by, "seconds": time.time() - t0, "answers": str(answers)}
    if handle is not None:
        summary.update(trainer_faults=handle.faults, trainer_restarts=handle.restarts, feedback_dropped=handle.dropped,
                       rounds=handle.rounds_seen, exports=[e["path"] for e in handle.exports],
                       swaps=server.swap.swaps, versions=server.swap.versions(),
                       last_event=events[-1] if events else None, trainer_skipped=handle.skipped,
                       adaptation_lost=handle.lost)
    return summary


def serve_on(s: ServeConfig, server, handle: TrainerHandle | None, tok, out_dir: Path, stops: list[int], model: str,
             names: list[str], sampling: bool, **kw) -> dict[str, Any]:
    """`serve` with the HTTP front end when `s.http` is set (bound first: a port in use fails before anything is
    written; `model` and `names` are what /v1/models lists, `sampling` whether requests may sample), under the
    out_dir's run lock (one run per out_dir: two would interleave answers and race on versions). kw: `serve`'s."""
    front = None
    if s.http:
        front = HttpFrontend(s.http, model, names, s.temperature, s.max_new_tokens, s.http_timeout, s.api_key,
                             s.max_queue, sampling=sampling)
    try:
        with run_lock(out_dir):
            return serve(s, server, handle, front, tok, out_dir, stops, **kw)
    finally:
        if front is not None:
            front.close()
