"""What the serve loop writes: one answers-file record per served request (`answer_record`; its schema is
online/serve/requests.py's) and the trainer's events as metrics JSONL lines plus a log line per update round
(`log_events`)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from online.serve.request import Served


def answer_record(served: Served, tok) -> dict[str, Any]:
    """A served (or refused) request -> its answers-file record (online/serve/requests.py reads them back)."""
    if served.error is not None:  # a bad request line has id None (no user-space id): a restart skips it by its line
        return {"id": served.id, **({"line": served.line} if served.line is not None else {}), "error": served.error}
    m, new = served.metrics, served.tokens
    out = {"id": served.id, "text": tok.decode(new, skip_special_tokens=True), "new_tokens": len(new),
           "mat": m.get("mat"), "tok_s": len(new) / served.seconds if served.seconds else None,
           "seconds": served.seconds, "versions_at_start": served.versions_at_start}
    if served.versions_at_end is not None:
        out["versions_at_end"] = served.versions_at_end
    if served.cancelled:
        out["cancelled"] = "the client closed the connection: decoding stopped early"
    if "lookahead" in m:
        out["lookahead"] = m["lookahead"]
        out["pairs"] = served.pairs or 0
    return out


def log_events(events: list[dict], metrics, log=None) -> None:
    """Trainer events: one metrics JSONL line each, and a log line per update round (to stderr by default)."""
    log = log or sys.stderr
    for ev in events:
        metrics.write(json.dumps({"time": time.time(), **ev}, default=str) + "\n")
        if ev.get("event") == "round":
            losses = ", ".join(f"{n} {v:.4f}" for n, v in ev.get("losses", {}).items() if v is not None)
            pairs = f"{ev['pairs']} pairs, " if "pairs" in ev else ""
            back = f", rolled back {', '.join(r['drafter'] for r in ev['rolled_back'])}" if ev.get("rolled_back") \
                else ""
            if ev.get("trained") is False:  # the pay schedule's resting round (online/trainer/payoff.py)
                print(f"[online] round {ev['round']} ({ev['records']} requests so far): rested (training 1 round in "
                      f"{ev.get('rest')}: no gain lately)", file=log, flush=True)
                continue
            print(f"[online] round {ev['round']} ({pairs}{ev['records']} requests so far): loss {losses or '-'}; "
                  f"published {ev['published'] or 'nothing'}; guard rejected {len(ev['rejected'])}{back} "
                  f"(v{ev['version']})", file=log, flush=True)
    metrics.flush()
