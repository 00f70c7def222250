"""Memory over a server's life: the RSS of `online_adapt.py serve.http=...` and of its trainer process over many
requests, sent one at a time over HTTP.

    python -m benchmarks.soak [--requests 2000] [--warmup 200] [--every 50] [--max-tokens 16] [--api both]
        [--pool DIR] [--adapt true|false] [--out runs/bench/soak] [--out-dir DIR] [--index-cap] [key=value ...]

Starts `online_adapt.py serve.http=127.0.0.1:<free port> serve.pool=<pool> serve.out_dir=<out-dir>` (a temporary
folder unless `--out-dir`) as a subprocess, with every `key=value` argument passed on (e.g.
`serve.kinds=[eagle3,suffix]`, `trainer.batch=1`), waits for /health and sends `--requests` chat and / or completion
requests, one at a time over one keep-alive connection: the shipped held-out prompts of `--domain` cycled, each
tagged with its request number so that no two prompts (and few answers) are alike, `--max-tokens` new tokens each.
Every `--every` requests (and at the end of the warm-up) it samples the RSS of the server and of its trainer (the
fork server's child). Reports the RSS at the start, at the end of the warm-up and at the end, the least-squares slope
in KB per request over the samples after the warm-up, the growth of every window, and the tokens the served requests
added to model-free members' indexes (a suffix member indexes every prompt + answer by design, ~16 bytes a token
until its cap); then stops the server with SIGTERM and reports its exit status and summary. `--index-cap` also
measures what a suffix index costs filled to its cap (the pool's suffix members' settings, or the defaults): in this
process, after the server stopped. Writes <out>/results.json (rewritten at every sample: a run cut short leaves its
samples) and <out>/table.md (also printed); a progress line per sample on stderr.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks import harness
from data_gen.domains import domain_prompts

ROOT = Path(__file__).resolve().parents[1]
KB, MB = 1024, 2**20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fit_slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ys over xs (None with fewer than two distinct xs)."""
    n = len(xs)
    if n < 2 or len(set(xs)) < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def trainer_of(server: psutil.Process) -> psutil.Process | None:
    """The server's trainer process: a child of its multiprocessing fork server (the newest, after a restart)."""
    try:
        kids = server.children(recursive=True)
    except psutil.Error:
        return None
    forkservers = [p for p in kids if _cmdline_has(p, "forkserver")]
    trainers = [p for fs in forkservers for p in _children(fs)]
    return max(trainers, key=lambda p: p.create_time(), default=None)


def _cmdline_has(p: psutil.Process, word: str) -> bool:
    try:
        return any(word in part for part in p.cmdline())
    except psutil.Error:
        return False


def _children(p: psutil.Process) -> list[psutil.Process]:
    try:
        return [c for c in p.children() if c.is_running()]
    except psutil.Error:
        return []


def rss(p: psutil.Process | None) -> int | None:
    try:
        return p.memory_info().rss if p is not None else None
    except psutil.Error:
        return None


def request_body(i: int, prompts: list[str], api: str, max_tokens: int) -> tuple[str, dict[str, Any]]:
    """Request i: (path, body); the prompt is prompts[i % len] tagged with i, so every prompt differs."""
    text = f"{prompts[i % len(prompts)]}\n(request {i})"
    chat = api == "chat" or (api == "both" and i % 2 == 1)
    if chat:
        return "/v1/chat/completions", {"messages": [{"role": "user", "content": text}], "max_tokens": max_tokens}
    return "/v1/completions", {"prompt": text + "\n", "max_tokens": max_tokens}


class Client:
    """One keep-alive connection (reopened after an error)."""

    def __init__(self, port: int, timeout: float):
        self.port, self.timeout, self.conn = port, timeout, None

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            self.conn.request(method, path, data, {"Content-Type": "application/json"} if data else {})
            r = self.conn.getresponse()
            raw = r.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def wait_healthy(proc: subprocess.Popen, client: Client, timeout: float) -> float:
    """Seconds until GET /health answers 200; RuntimeError if the server exits or the timeout passes first."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode} before /health answered")
        try:
            if client.call("GET", "/health")[0] == 200:
                return time.time() - t0
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"/health did not answer within {timeout:.0f} s")


def stop_server(proc: subprocess.Popen, timeout: float) -> dict[str, Any]:
    """SIGTERM, wait; SIGKILL after `timeout`. -> exit status, seconds, whether it had to be killed."""
    t0 = time.time()
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    killed = False
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        killed = True
    return {"exit_code": proc.returncode, "stop_seconds": time.time() - t0, "killed": killed}


def analyse(samples: list[dict], warmup: int) -> dict[str, Any]:
    """RSS at start / warm-up end / end, the slope after the warm-up (KB per request, least squares) and the
    growth of every window after the warm-up, for the server and the trainer."""
    out: dict[str, Any] = {}
    after = [s for s in samples if s["requests"] >= warmup]
    for who in ("server", "trainer"):
        key = f"{who}_rss"
        have = [s for s in after if s[key] is not None]
        at_warm = next((s[key] for s in have if s["requests"] == warmup), None)
        slope = fit_slope([s["requests"] for s in have], [s[key] for s in have])
        windows = []
        for a, b in zip(have, have[1:]):
            n = b["requests"] - a["requests"]
            windows.append({"from": a["requests"], "to": b["requests"], "growth_kb": (b[key] - a[key]) / KB,
                            "kb_per_request": (b[key] - a[key]) / KB / n if n else None})
        out[who] = {"start_mb": samples[0][key] / MB if samples and samples[0][key] is not None else None,
                    "warmup_end_mb": at_warm / MB if at_warm is not None else None,
                    "end_mb": have[-1][key] / MB if have else None,
                    "growth_after_warmup_mb": (have[-1][key] - have[0][key]) / MB if have else None,
                    "slope_kb_per_request": slope / KB if slope is not None else None,
                    "windows": windows}
    return out


def index_cap_cost(max_tokens: int, segment_tokens: int, depth: int, seed: int = 0) -> dict[str, Any]:
    """A suffix index filled past its cap (synthetic answers of 200 tokens, `benchmarks.suffix_index.corpus`):
    the bytes of its arrays, the Python lists of its recent segment, and this process's RSS growth."""
    from benchmarks.common.corpus import corpus
    from draftpool.models.suffix_index import SuffixIndex

    chunk = corpus(min(max_tokens, 200_000) + segment_tokens, seed)  # reused: the cost depends on the token count
    gc.collect()
    me = psutil.Process()
    before = me.memory_info().rss
    t0 = time.perf_counter()
    index = SuffixIndex(depth=depth, max_tokens=max_tokens, segment_tokens=segment_tokens)
    added = 0
    while index.evicted == 0 or added < max_tokens + 2 * segment_tokens:
        index.add(chunk)
        added += sum(map(len, chunk))
    seconds = time.perf_counter() - t0
    gc.collect()
    grown = me.memory_info().rss - before
    arrays = sum(s.tokens.nbytes + s.sa.nbytes for s in index.all_segments())
    lists = sys.getsizeof(index.recent) + sum(sys.getsizeof(s) + 28 * len(s) for s in index.recent)  # upper bound
    out = {"max_tokens": max_tokens, "segment_tokens": segment_tokens, "depth": depth, "held_tokens": index.n_tokens,
           "segments": len(index.segments), "evicted_tokens": index.evicted, "added_tokens": added,
           "array_mb": arrays / MB, "recent_lists_mb": lists / MB, "bytes_per_held_token": arrays / index.n_tokens,
           "rss_growth_mb": grown / MB, "fill_seconds": seconds}
    del index, chunk
    gc.collect()
    return out


def suffix_settings(pool: Path | None) -> list[dict[str, Any]]:
    """The index settings of the pool's suffix members (name, max_tokens, segment_tokens, depth); the defaults
    when it has none."""
    from draftpool.models.suffix_index import SuffixIndex

    default = SuffixIndex()
    found = []
    manifest = pool / "pool.json" if pool is not None else None
    if manifest is not None and manifest.is_file():
        for name, entry in json.loads(manifest.read_text()).get("drafters", {}).items():
            if entry.get("kind") != "suffix":
                continue
            cfg = json.loads((pool / entry.get("path", name) / "config.json").read_text())
            found.append({"name": name, **{k: cfg.get(k, getattr(default, k))
                                           for k in ("max_tokens", "segment_tokens", "depth")}})
    return found or [{"name": "(defaults)", "max_tokens": default.max_tokens,
                      "segment_tokens": default.segment_tokens, "depth": default.depth}]


def run(args: argparse.Namespace, overrides: list[str]) -> dict[str, Any]:
    prompts = [p["prompt"] for p in domain_prompts(args.domain)["held_out"]]
    out_dir = Path(args.out_dir) if args.out_dir else Path(tempfile.mkdtemp(prefix="draftpool-soak-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cmd = [sys.executable, str(ROOT / "online_adapt.py"), f"serve.http=127.0.0.1:{port}",
           f"serve.out_dir={out_dir / 'online'}", f"serve.max_new_tokens={args.max_tokens}",
           f"serve.adapt={args.adapt}"]
    if args.pool:
        cmd.append(f"serve.pool={Path(args.pool).resolve()}")
    cmd += overrides
    report: dict[str, Any] = {"command": cmd[1:], "requests": args.requests, "warmup": args.warmup,
                              "every": args.every, "max_tokens": args.max_tokens, "api": args.api,
                              "domain": args.domain, "out_dir": str(out_dir)}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(out_dir / "server.out", "wb") as so, open(out_dir / "server.err", "wb") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, env=env)
    server = psutil.Process(proc.pid)
    client = Client(port, args.request_timeout)
    samples: list[dict] = []
    statuses: dict[str, int] = {}
    seconds: list[float] = []
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    t0 = time.time()
    error = None
    try:
        report["start_seconds"] = wait_healthy(proc, client, args.start_timeout)

        def sample(done: int) -> None:
            trainer = trainer_of(server)
            samples.append({"requests": done, "seconds": time.time() - t0, "server_rss": rss(server),
                            "trainer_rss": rss(trainer), "trainer_pid": trainer.pid if trainer else None})
            if args.out:  # rule: a run cut short still leaves its samples
                harness.write_results(args.out, {**report, "partial": True, "samples": samples})
            s = samples[-1]
            harness.log.info(f"[soak] {done} requests, {s['seconds']:.0f} s: server "
                             f"{(s['server_rss'] or 0) / MB:.1f} MB, trainer {(s['trainer_rss'] or 0) / MB:.1f} MB")

        sample(0)
        for i in range(args.requests):
            path, body = request_body(i, prompts, args.api, args.max_tokens)
            t = time.perf_counter()
            status, reply = client.call("POST", path, body)
            seconds.append(time.perf_counter() - t)
            statuses[str(status)] = statuses.get(str(status), 0) + 1
            if status == 200 and reply:
                for k in usage:
                    usage[k] += int(reply.get("usage", {}).get(k, 0))
            done = i + 1
            if done % args.every == 0 or done == args.warmup or done == args.requests:
                sample(done)
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with code {proc.returncode} after {done} requests")
    except (RuntimeError, OSError, http.client.HTTPException) as e:
        error = f"{type(e).__name__}: {e}"
    finally:
        client.close()
        report.update(stop_server(proc, args.stop_timeout))
    report["error"] = error
    report["partial"] = False
    report["seconds"] = time.time() - t0
    report["statuses"] = statuses
    report["sent"] = len(seconds)
    report["request_seconds_median"] = sorted(seconds)[len(seconds) // 2] if seconds else None
    report["usage"] = usage
    # rule: a suffix member indexes prompt + answer of every served request (~16 bytes a token, arrays): growth by
    # design until its cap, which the slope includes
    report["indexed_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    report["indexed_kb_per_request"] = 16 * report["indexed_tokens"] / KB / max(1, len(seconds))
    report["samples"] = samples
    report.update(analyse(samples, args.warmup))
    try:
        report["server_summary"] = json.loads((out_dir / "server.out").read_text())
    except (OSError, ValueError):
        report["server_summary"] = None
    if args.index_cap:
        pool = Path(args.pool) if args.pool else None
        report["index_cap"] = [{"name": s["name"], **index_cap_cost(s["max_tokens"], s["segment_tokens"],
                                                                     s["depth"])} for s in suffix_settings(pool)]
    if not args.out_dir and not args.keep:
        shutil.rmtree(out_dir, ignore_errors=True)
    return report


def _mb(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _kb(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f}"


def format_table(r: dict[str, Any]) -> str:
    """RSS of server and trainer (markdown), growth per window, then the requests' and the index's figures."""
    s, t = r["server"], r["trainer"]
    tw = {(w["from"], w["to"]): w for w in t["windows"]}
    lines = [harness.markdown_table(["RSS", "server", "trainer"], [
        ["start (after /health), MB", _mb(s["start_mb"]), _mb(t["start_mb"])],
        [f"warm-up end ({r['warmup']} requests), MB", _mb(s["warmup_end_mb"]), _mb(t["warmup_end_mb"])],
        [f"end ({r['sent']} requests), MB", _mb(s["end_mb"]), _mb(t["end_mb"])],
        ["growth after warm-up, MB", _kb(s["growth_after_warmup_mb"]), _kb(t["growth_after_warmup_mb"])],
        ["slope after warm-up, KB/request", _kb(s["slope_kb_per_request"]), _kb(t["slope_kb_per_request"])]]), "",
        harness.markdown_table(
            ["window (requests)", "server growth KB", "KB/request", "trainer growth KB", "KB/request"],
            [[f"{w['from']}-{w['to']}", f"{w['growth_kb']:+.0f}", _kb(w["kb_per_request"]),
              _kb(tw.get((w["from"], w["to"]), {}).get("growth_kb")),
              _kb(tw.get((w["from"], w["to"]), {}).get("kb_per_request"))] for w in s["windows"]])]
    lines += ["", f"statuses {r['statuses']}; median request {r['request_seconds_median'] or 0:.2f} s; "
                  f"{r['indexed_tokens']} prompt + answer tokens served (a suffix member indexes them: "
                  f"~{r['indexed_kb_per_request']:.2f} KB/request by design); server exit {r['exit_code']} "
                  f"after SIGTERM ({r['stop_seconds']:.1f} s{', killed' if r['killed'] else ''})"]
    for c in r.get("index_cap", []):
        lines.append(f"suffix index {c['name']} at its cap of {c['max_tokens']:,} tokens: {c['array_mb']:.1f} MB of "
                     f"arrays ({c['bytes_per_held_token']:.1f} B/token, {c['held_tokens']:,} tokens held) + "
                     f"{c['recent_lists_mb']:.1f} MB of recent lists; RSS +{c['rss_growth_mb']:.1f} MB")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the soak; -> its report (bad arguments: BenchError)."""
    ap = harness.parser("benchmarks.soak", __doc__)
    harness.add_common(ap, target=False, pool="", out="", help={
        "pool": "serve.pool (default: online_adapt's)", "out": "output folder for results.json and table.md "
                                                                 "('' = print only)"})
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200, help="requests before the slope is fitted")
    ap.add_argument("--every", type=int, default=50, help="requests between RSS samples")
    ap.add_argument("--max-tokens", type=int, default=16, help="max_tokens of every request")
    ap.add_argument("--api", default="both", choices=["chat", "completions", "both"],
                    help="chat, completions, or both alternating")
    ap.add_argument("--domain", default="sql", help="the shipped domain whose held-out prompts are cycled")
    ap.add_argument("--adapt", default="true", choices=["true", "false"], help="serve.adapt: run the trainer")
    ap.add_argument("--out-dir", default="", help="the server's serve.out_dir and logs (default: a temporary folder, "
                                                  "removed at the end unless --keep)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary out-dir")
    ap.add_argument("--index-cap", action="store_true", help="also measure a suffix index filled to its cap")
    ap.add_argument("--start-timeout", type=float, default=900.0, help="seconds the server may take to start")
    ap.add_argument("--request-timeout", type=float, default=600.0)
    ap.add_argument("--stop-timeout", type=float, default=300.0, help="seconds after SIGTERM before SIGKILL")
    ap.add_argument("--progress", action="store_true", help="(kept for old commands: every sample is logged)")
    args, overrides = ap.parse_known_args(argv)
    bad = [o for o in overrides if "=" not in o or o.startswith("-")]
    if bad:
        ap.error(f"unknown arguments {bad} (online_adapt overrides are key=value)")
    if args.requests < 1 or args.every < 1 or args.warmup < 0 or args.warmup > args.requests:
        ap.error("--requests and --every must be >= 1, 0 <= --warmup <= --requests")
    report = run(args, overrides)
    table = format_table(report)
    print(table)
    if args.out:
        harness.write_results(args.out, json.loads(json.dumps(report, default=str)), table)
    return report


def _exit_code(argv: list[str] | None) -> int:
    rep = main(argv)
    return 0 if rep["error"] is None and rep["exit_code"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(harness.cli(_exit_code))
