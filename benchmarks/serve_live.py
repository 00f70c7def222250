"""Serving live over HTTP, as an operator runs it: adaptation on against off on the same stream, the trainer's share of
the machine, and the server's `/metrics` scraped while it serves.

    python -m benchmarks.serve_live --pool pools/{target_slug} --stream benchmarks/streams/sql_three_schemas.jsonl \
        [--variants "off:serve.adapt=false,on"] [--kinds eagle3,suffix] [--max-new-tokens 64] [--window 20] \
        [--plain 10] [--scrape-every 2] [--serve key=value ...] [--out runs/bench/serve_live]

Each variant starts `online_adapt.py serve.http=127.0.0.1:<free port> serve.api_key=<random>` on the pool (a copy of
the pool's model-free members' indexes is what they learn into: every variant starts from the same pool), with the
variant's `key=value` overrides (`:`-separated after its name; `--serve` overrides apply to all), sends the stream's
requests one after another to /v1/chat/completions (greedy, `spec_metrics: true`), scrapes `GET /metrics` every
`--scrape-every` seconds, then stops the server (SIGTERM: the trainer's final round and export run as in production).
Reported per variant: tok/s and MAT per window of `--window` requests (the server's decode seconds from its answers
file, and the client's wall time), trainer rounds and published versions per minute, the seconds the trainer rested
(process.duty), and whether the last scrape's speculative counters equal the sums of the replies' per-request counts
(exactly). `--plain N`: plain decoding of the stream's first N prompts in this process (same threads as the server's
default), the reference for "x plain".
Outputs: <out>/results.json, <out>/table.md, <out>/<variant>/scrapes.jsonl (every scrape, timed), <out>/metrics.png
(rates over a sliding --rate-window, from the scrapes of the first adapting variant); progress lines on stderr.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from benchmarks.online_guard import read_stream
from draftpool.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SPEC = "draftpool:spec_decode_"
log = harness.log


def parse_variants(text: str) -> dict[str, list[str]]:
    """"off:serve.adapt=false,on" -> {"off": ["serve.adapt=false"], "on": []}."""
    out: dict[str, list[str]] = {}
    for item in harness.csv(text):
        name, *overrides = item.split(":")
        if not name or name in out or any("=" not in o for o in overrides):
            raise ConfigError(f"--variants: {item!r} is not name[:key=value[:key=value...]] (names unique)")
        out[name] = overrides
    if not out:
        raise ConfigError("--variants names no variant")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """A Prometheus text exposition -> {(sample name, sorted labels): value}."""
    from prometheus_client.parser import text_string_to_metric_families

    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def total(scrape: dict[tuple[str, tuple], float], name: str) -> float:
    """The sum of a sample over all its label sets."""
    return sum(v for (n, _), v in scrape.items() if n == name)


class Scraper(threading.Thread):
    """GET /metrics every `every` seconds until stopped; each scrape kept with its time."""

    def __init__(self, url: str, key: str, every: float):
        super().__init__(daemon=True)
        self.url, self.key, self.every = url, key, every
        self.scrapes: list[tuple[float, str]] = []
        self.halt = threading.Event()

    def scrape(self) -> str:
        import httpx

        r = httpx.get(self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=30)
        r.raise_for_status()
        self.scrapes.append((time.time(), r.text))
        return r.text

    def run(self) -> None:
        while not self.halt.wait(self.every):
            try:
                self.scrape()
            except Exception as e:  # noqa: BLE001 - a missed scrape is logged, the run goes on
                log.info("scrape failed: %s", e)


def run_variant(args, name: str, overrides: list[str], rows: list[tuple[str, str, str]], out: Path) -> dict[str, Any]:
    """One live run of the stream -> its windows, trainer activity and the scrape check."""
    import httpx

    run_dir = (out / name).resolve()
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    pool = run_dir / "pool"  # rule: every variant starts from the same pool (suffix members learn into their copy)
    shutil.copytree(Path(args.pool).resolve(), pool)
    port, key = free_port(), secrets.token_hex(16)
    cmd = [sys.executable, "online_adapt.py", f"serve.pool={pool}", f"serve.out_dir={run_dir / 'online'}",
           f"serve.http=127.0.0.1:{port}", f"serve.api_key={key}", f"serve.kinds=[{','.join(args.kinds)}]",
           f"serve.max_new_tokens={args.max_new_tokens}", f"serve.auto_costs={(out / 'auto_costs.json').resolve()}",
           *args.serve, *overrides]
    log.info("[%s] %s", name, " ".join(cmd[2:]))
    err = open(run_dir / "stderr.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
    base = f"http://127.0.0.1:{port}"
    scraper = Scraper(f"{base}/metrics", key, args.scrape_every)
    replies, walls = [], []
    try:
        t0 = time.time()
        while True:  # the target loads, auto's costs are read, then the port answers
            if proc.poll() is not None:
                raise RuntimeError(f"{name}: online_adapt.py exited {proc.returncode}: "
                                   f"{(run_dir / 'stderr.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() - t0 > 600:
                raise RuntimeError(f"{name}: the server did not come up in 600 s")
            time.sleep(0.5)
        refused = httpx.get(f"{base}/metrics", timeout=30).status_code  # no key: must be refused
        scraper.scrape()
        scraper.start()
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(timeout=600) as client:
            for n, (rid, _, prompt) in enumerate(harness.progress(rows, f"{name} requests", unit="req")):
                body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": args.max_new_tokens,
                        "temperature": 0, "spec_metrics": True, "user": rid}
                t = time.perf_counter()
                r = client.post(f"{base}/v1/chat/completions", json=body, headers=headers)
                walls.append(time.perf_counter() - t)
                if r.status_code != 200:
                    raise RuntimeError(f"{name}: request {n} got {r.status_code}: {r.text[:500]}")
                replies.append(r.json())
        scraper.halt.set()
        scraper.join()
        final = scraper.scrape()
    finally:
        scraper.halt.set()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            stdout, _ = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, _ = proc.communicate()
        err.close()
    with open(run_dir / "scrapes.jsonl", "w") as f:
        for t, text in scraper.scrapes:
            f.write(json.dumps({"time": t, "text": text}) + "\n")
    return summarise(args, name, overrides, replies, walls, final, refused, run_dir, stdout)


def summarise(args, name: str, overrides: list[str], replies: list[dict], walls: list[float], final: str,
              refused: int, run_dir: Path, stdout: str) -> dict[str, Any]:
    answers = [json.loads(line) for line in (run_dir / "online" / "answers.jsonl").read_text().splitlines()]
    tokens = [a["new_tokens"] for a in answers]
    forwards = [a["new_tokens"] / a["mat"] if a.get("mat") else 0 for a in answers]
    seconds = [a["seconds"] for a in answers]
    w = args.window
    spans = [(i, min(i + w, len(answers))) for i in range(0, len(answers), w)]
    spec = [r["draftpool"]["spec"] for r in replies]
    scrape = samples(final)
    own = {"num_drafts": sum(s["num_drafts"] for s in spec),
           "num_draft_tokens": sum(s["num_draft_tokens"] for s in spec),
           "num_accepted_tokens": sum(s["num_accepted_tokens"] for s in spec)}
    scraped = {k: total(scrape, f"{SPEC}{k}_total") for k in own}
    events = [json.loads(line) for line in (run_dir / "online" / "metrics.jsonl").read_text().splitlines()]
    rounds = [e for e in events if e.get("event") == "round"]
    served_s = sum(seconds)
    summary = json.loads(stdout) if stdout.strip() else {}
    return {
        "overrides": overrides, "requests": len(answers),
        "tok_s": round(sum(tokens) / served_s, 2),
        "tok_s_windows": [round(sum(tokens[a:b]) / sum(seconds[a:b]), 2) for a, b in spans],
        "client_tok_s_windows": [round(sum(tokens[a:b]) / sum(walls[a:b]), 2) for a, b in spans],
        "mat_windows": [round(sum(tokens[a:b]) / max(sum(forwards[a:b]), 1e-9), 3) for a, b in spans],
        "rounds": len(rounds), "published": sum(len(e.get("published", [])) for e in rounds),
        "rounds_per_min": round(60 * len(rounds) / served_s, 2),
        "rested_s": rounds[-1].get("rested_s", 0.0) if rounds else 0.0,
        "trainer_restarts": summary.get("trainer_restarts"),
        "own_counts": own, "scraped_counts": scraped, "scrape_agrees": own == {k: int(v) for k, v in scraped.items()},
        "unauthenticated_scrape": refused, "scrapes": len((run_dir / "scrapes.jsonl").read_text().splitlines()),
    }


def plain_tok_s(args, rows: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Plain decoding of the first --plain prompts, in this process, chat-templated as the server does."""
    from draftpool.chat import chat_prompt_ids, stop_token_ids
    from specsel.decoding.loop import SpecDecoder

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    torch.set_num_threads(cores)
    target = harness.load_target(args)
    dec = SpecDecoder(target.model, None, mode="plain", stop_ids=stop_token_ids(target.tok, target.model),
                      timing=False)
    toks = secs = 0.0
    for _, _, prompt in harness.progress(rows[:args.plain], "plain", unit="req"):
        ids = chat_prompt_ids(target.tok, [{"role": "user", "content": prompt}])
        new, m = dec.generate(ids, args.max_new_tokens)
        toks, secs = toks + len(new), secs + m.total_s
    return {"requests": args.plain, "threads": cores, "tok_s": round(toks / secs, 2)}


def format_table(report: dict[str, Any]) -> str:
    v = report["variants"]
    n = max(len(r["tok_s_windows"]) for r in v.values())
    head = ["variant", "overrides", *[f"tok/s w{i + 1}" for i in range(n)], *[f"MAT w{i + 1}" for i in range(n)],
            "tok/s all", "rounds/min", "published", "rested s", "/metrics = replies"]
    rows = [[name, " ".join(r["overrides"]) or "-", *r["tok_s_windows"], *r["mat_windows"], r["tok_s"],
             r["rounds_per_min"], r["published"], r["rested_s"],
             "yes" if r["scrape_agrees"] and r["unauthenticated_scrape"] == 401 else "NO"] for name, r in v.items()]
    text = harness.markdown_table(head, rows)
    if "plain" in report:
        p = report["plain"]
        text += f"\n\nplain decoding (same machine, this run, {p['requests']} prompts, {p['threads']} threads): " \
                f"{p['tok_s']} tok/s"
    return text


def windowed(parsed: list[tuple[float, dict]], window: float) -> list[tuple[float, dict, float, dict]]:
    """Pairs of scrapes (earlier, later) `window` seconds apart or more, as Prometheus's rate()/increase() over
    [window] reads them (the counters move once per request, so a shorter span is mostly zeros and spikes)."""
    out, j = [], 0
    for t, s in parsed:
        while j + 1 < len(parsed) and t - parsed[j + 1][0] >= window:
            j += 1
        if t - parsed[j][0] >= window:
            out.append((parsed[j][0], parsed[j][1], t, s))
    return out


def plot(report: dict[str, Any], out: Path, window: float) -> None:
    """From the scrapes of the first variant that adapts (else the first), over a sliding `window` of seconds: the
    mean acceptance length per drafter (1 + accepted / drafts) and the tokens generated per second."""
    plt = harness.pyplot()
    names = list(report["variants"])
    name = next((n for n in names if report["variants"][n]["rounds"]), names[0])
    scrapes = [json.loads(line) for line in (out / name / "scrapes.jsonl").read_text().splitlines()]
    parsed = [(s["time"], samples(s["text"])) for s in scrapes]
    spans = windowed(parsed, window)
    t0 = parsed[0][0]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    drafters = sorted({dict(lab).get("drafter") for (n, lab) in parsed[-1][1] if n == f"{SPEC}num_drafts_total"})
    for d in drafters:
        key = (("drafter", d),)
        xs, ys = [], []
        for _, s1, t2, s2 in spans:
            drafts = s2.get((f"{SPEC}num_drafts_total", key), 0) - s1.get((f"{SPEC}num_drafts_total", key), 0)
            acc = s2.get((f"{SPEC}num_accepted_tokens_total", key), 0) - \
                s1.get((f"{SPEC}num_accepted_tokens_total", key), 0)
            if drafts:
                xs.append(t2 - t0)
                ys.append(1 + acc / drafts)
        a.plot(xs, ys, marker=".", label=d)
    a.set_xlabel("seconds since the first scrape")
    a.set_ylabel("1 + accepted / drafts")
    a.set_title(f"mean acceptance length per drafter, {window:.0f} s window ({name})", fontsize=9)
    a.legend(fontsize=8)
    gen = "draftpool:generation_tokens_total"
    b.plot([t2 - t0 for _, _, t2, _ in spans], [(total(s2, gen) - total(s1, gen)) / (t2 - t1)
                                               for t1, s1, t2, s2 in spans], marker=".")
    b.set_xlabel("seconds since the first scrape")
    b.set_ylabel("generated tokens / s")
    b.set_title(f"rate({gen}[{window:.0f}s])", fontsize=9)
    harness.save_figure(fig, out / "metrics.png")


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.serve_live", __doc__)
    harness.add_common(ap, pool="pools/{target_slug}", device="cpu", dtype="float32", out="runs/bench/serve_live")
    ap.add_argument("--stream", default=str(ROOT / "benchmarks/streams/sql_three_schemas.jsonl"))
    ap.add_argument("--variants", default="off:serve.adapt=false,on")
    ap.add_argument("--kinds", type=harness.csv, default=["eagle3", "suffix"])
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--requests", type=int, default=0, help="the stream's first N requests (0: all)")
    ap.add_argument("--plain", type=int, default=10, help="plain decoding of the first N prompts (0: none)")
    ap.add_argument("--scrape-every", type=float, default=2.0)
    ap.add_argument("--rate-window", type=float, default=30.0, help="the plot's rate window, seconds")
    ap.add_argument("--serve", nargs="*", default=[], help="key=value overrides for every variant")
    args = ap.parse_args(argv)
    variants = parse_variants(args.variants)
    rows = read_stream(Path(args.stream))
    rows = rows[:args.requests] if args.requests else rows
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    info = harness.resolve(args)
    args.pool = args.pool.format(target_slug=info.slug)
    if not (Path(args.pool) / "pool.json").is_file():
        raise ConfigError(f"no pool at {args.pool}")
    report: dict[str, Any] = {"target": info.name, "pool": args.pool, "stream": args.stream, "kinds": args.kinds,
                              "max_new_tokens": args.max_new_tokens, "window": args.window,
                              "machine": harness.machine(torch.device(args.device), getattr(torch, args.dtype)),
                              "argv": argv if argv is not None else sys.argv[1:], "variants": {}}
    for name, overrides in variants.items():
        report["variants"][name] = run_variant(args, name, overrides, rows, out)
        harness.write_results(out, report, format_table(report))
    if args.plain:
        report["plain"] = plain_tok_s(args, rows)
    harness.write_results(out, report, format_table(report))
    plot(report, out, args.rate_window)
    print(format_table(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
