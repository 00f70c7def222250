"""What the serve loop writes: one answers-file record per request (`answer_record`; its schema is
online/serve/requests.py's) and the trainer's events as metrics JSONL lines plus a log line per update round
(`log_events`)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def answer_record(rec: dict[str, Any], tok) -> dict[str, Any]:
    """A served (or refused) request -> its answers-file record (online/serve/requests.py reads them back)."""
    if "error" in rec:  # a bad request line has id None (no user-space id): a restart skips it by its line
        return {"id": rec.get("id"), **{k: rec[k] for k in ("line", "error") if k in rec}}
    m = rec["metrics"]
    new = rec["tokens"]
    out = {"id": rec["id"], "text": tok.decode(new, skip_special_tokens=True), "new_tokens": len(new),
           "mat": m.get("mat"), "tok_s": len(new) / rec["seconds"] if rec["seconds"] else None,
           "seconds": rec["seconds"], "versions_at_start": rec["versions_at_start"]}
    if "versions_at_end" in rec:
        out["versions_at_end"] = rec["versions_at_end"]
    if rec.get("cancelled"):
        out["cancelled"] = "the client closed the connection: decoding stopped early"
    if "lookahead" in m:
        out["lookahead"] = m["lookahead"]
        out["pairs"] = rec.get("pairs", 0)
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
            print(f"[online] round {ev['round']} ({pairs}{ev['records']} requests so far): loss {losses or '-'}; "
                  f"published {ev['published'] or 'nothing'}; guard rejected {len(ev['rejected'])}{back} "
                  f"(v{ev['version']})", file=log, flush=True)
    metrics.flush()
