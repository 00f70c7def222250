"""One request's overhead in online_adapt's HTTP front end, without any decoding.

    python -m benchmarks.http_overhead [--requests 2000] [--label NAME]

A stub decode loop answers every job at once, so what is timed is the front end alone: parse, validate, queue, hand
the job to the decode thread, answer. Timed from the client (stdlib http.client), one request at a time, over one
keep-alive connection and over a new connection per request; median and 90th percentile in milliseconds. To compare
two front ends, run the same command in both trees (e.g. a `git worktree` of an older commit first on PYTHONPATH) in
one shell command, on one machine.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time

from benchmarks import harness
from online.http.api import HttpFrontend

BODY = json.dumps({"prompt": "SELECT name FROM users WHERE", "max_tokens": 8, "temperature": 0}).encode()


def _stub_loop(front: HttpFrontend) -> None:
    for job in front.jobs():
        front.finish(job, 200, {"id": job.id, "choices": [{"index": 0, "text": " id = 1", "finish_reason": "stop"}]})


def _time(host: str, port: int, n: int, keep_alive: bool) -> list[float]:
    out = []
    conn = http.client.HTTPConnection(host, port, timeout=30)
    for _ in range(n):
        if not keep_alive:
            conn = http.client.HTTPConnection(host, port, timeout=30)
        t0 = time.perf_counter()
        conn.request("POST", "/v1/completions", BODY, {"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        out.append((time.perf_counter() - t0) * 1e3)
        if r.status != 200:
            raise RuntimeError(f"status {r.status}")
        if not keep_alive:
            conn.close()
    conn.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = harness.parser("benchmarks.http_overhead", __doc__)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--label", default="this tree")
    args = ap.parse_args(argv)
    if args.requests < 10:
        raise harness.BenchError("--requests must be >= 10 (a 90th percentile)")
    front = HttpFrontend("127.0.0.1:0", "m", ["d"], 0.0, 16)
    front.start()
    host, port = front.address.removeprefix("http://").rsplit(":", 1)
    loop = threading.Thread(target=_stub_loop, args=(front,), daemon=True)
    loop.start()
    try:
        _time(host, int(port), 50, True)  # warm-up
        rows = {}
        for keep in (True, False):
            harness.log.info("%d requests, %s", args.requests, "keep-alive" if keep else "a new connection each")
            ms = _time(host, int(port), args.requests, keep)
            q = statistics.quantiles(ms, n=10)
            rows["keep-alive" if keep else "new connection"] = {"median_ms": statistics.median(ms), "p90_ms": q[-1]}
    finally:
        front.close()
    print(harness.markdown_table(["front end", "connection", "median ms", "p90 ms"],
                                 [[args.label, name, f"{r['median_ms']:.3f}", f"{r['p90_ms']:.3f}"]
                                  for name, r in rows.items()]))
    return rows


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
