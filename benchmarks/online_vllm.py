"""Online adaptation attached to vLLM, on the domain-shift stream: vLLM's own counters, static head vs adapted head.

    python -m benchmarks.online_vllm --pool 'pools/{target_slug}' --drafter python-eagle3 --shift sql \
        --requests 300 --window 25 --in-flight 4 --out runs/bench/online_vllm
    python -m benchmarks.online_vllm --drafter sql-eagle3 --stream benchmarks/streams/sql_three_schemas.jsonl \
        --requests 60 --window 20 --goal-last 60 --in-flight 1 --max-new-tokens 64 --kill-at 1000 --no-plain
        (an in-domain stream: does adaptation keep a good head's acceptance? benchmarks/online_guard.py, native)

Three runs over the same stream of unseen-domain prompts (the shift domain's train prompts, then its held-out ones),
each on a fresh vLLM server behind draftpool's front end with `--in-flight` requests at a time: `plain` (no drafter:
the reference outputs and tok/s; `--no-plain` skips it), `static` (the head, no trainer) and `adapted` (the trainer
learns from every finished request, its versions are swapped into vLLM's drafter; the trainer is SIGKILLed at request
`--kill-at`, default half-way). The trainer uses the online recipe's settings (TrainerConfig's defaults: OGD, Adam,
rounds of 4 records, 2 updates per round, the guard on) unless told otherwise. `--stream FILE` serves a requests
file ({"id", "prompt"} lines) instead of the shift domain's prompts. Per window of requests: vLLM's accepted tokens per
draft (`spec_decode_num_accepted_tokens / spec_decode_num_drafts`, differences of its counters), tok/s, requests in
flight (vLLM's `num_requests_running` gauge, sampled every 0.5 s), versions swapped in. The goal figure is accepted
per draft over the last `--goal-last` requests, adapted vs static. Greedy outputs of the speculative runs are
compared token for token with plain decoding's. Writes results.json, outputs.json and table.md to --out.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks import harness
from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt
from draftpool.config import ConfigError
from draftpool.io import atomic_write_json
from draftpool.models import kinds_with
from draftpool.pool import Member, read_manifest
from online.trainer.config import ProcessConfig, TrainerConfig
from online.trainer.process import TrainerHandle
from online.trainer.versions import ExportSpec
from online.vllm.adapt import VllmAdapter, VllmProxy, shut_down
from online.vllm.engine import VllmEngine, VllmServeOptions


def ask(url: str, ids: list[int], n: int) -> tuple[int, list[int]]:
    body = json.dumps({"model": "target", "prompt": ids, "max_tokens": n, "temperature": 0.0,
                       "return_token_ids": True}).encode()
    req = urllib.request.Request(f"{url}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=900) as r:
            return r.status, json.loads(r.read())["choices"][0]["token_ids"]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, []


class InFlight:
    """Samples vLLM's running-requests gauge in the background; take() -> the samples since the last take."""

    def __init__(self, engine: VllmEngine, every: float = 0.5):
        self.engine, self.every, self.samples, self.stop = engine, every, [], threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.wait(self.every):
            try:
                self.samples.append(self.engine.running())
            except (OSError, ValueError):
                pass

    def take(self) -> list[float]:
        out, self.samples = self.samples, []
        return out

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def one_run(args, info, model, member: Member, head_dir: Path | None, prompts: list[list[int]], adapt: bool,
            out: Path) -> dict[str, Any]:
    """One fresh vLLM server over the stream: plain (head_dir None), static head, or adapted head (`member`:
    draftpool's copy of the head vLLM drafts with, which the trainer adapts)."""
    opts = VllmServeOptions(k=args.k, max_num_seqs=args.in_flight)
    label = "adapted" if adapt else "static" if head_dir else "plain"
    engine = VllmEngine(info.path, str(head_dir or ""), opts, out / f"vllm-{label}.log",
                        served_name=info.name, target_sha256=info.weights_sha256).start()
    adapter = proxy = None
    windows, outputs, failed = [], [], 0
    try:
        if adapt:
            for stale in ("export", "heads"):  # another run's versions must not seed this one's trainer
                shutil.rmtree(out / stale, ignore_errors=True)
            tcfg = TrainerConfig(updater=args.updater, lr=args.lr, batch=args.batch, epochs=args.epochs)
            handle = TrainerHandle([member], tcfg, ProcessConfig(threads=1, export_every=0),
                                   ExportSpec(str(out / "export"), args.pool_dir, info))
            adapter = VllmAdapter(engine, model, member, handle, 64, out / "heads").start()
        proxy = VllmProxy(engine, adapter).start()
        kill_at = args.kill_at if args.kill_at >= 0 else len(prompts) // 2
        sampler = InFlight(engine)
        with ThreadPoolExecutor(args.in_flight) as ex:
            for w in range(0, len(prompts), args.window):
                chunk = prompts[w:w + args.window]
                if adapt and w <= kill_at < w + len(chunk) and adapter.handle.proc is not None:
                    os.kill(adapter.handle.proc.pid, signal.SIGKILL)  # mid-run: requests keep flowing
                before, t0, _ = engine.counters(), time.perf_counter(), sampler.take()
                res = list(ex.map(lambda p: ask(proxy.url, p, args.max_new_tokens), chunk))
                wall, after, busy = time.perf_counter() - t0, engine.counters(), sampler.take()
                drafts = after["vllm:spec_decode_num_drafts"] - before["vllm:spec_decode_num_drafts"]
                acc = after["vllm:spec_decode_num_accepted_tokens"] - before["vllm:spec_decode_num_accepted_tokens"]
                failed += sum(s != 200 for s, _ in res)
                outputs += [ids for _, ids in res]
                toks = sum(len(ids) for _, ids in res)
                windows.append({"requests": [w + 1, w + len(chunk)], "accepted_per_draft": acc / max(drafts, 1),
                                "drafts": drafts, "accepted": acc,
                                "tok_s": toks / wall, "tokens": toks, "wall_s": wall,
                                "in_flight_mean": sum(busy) / max(len(busy), 1), "in_flight_max": max(busy, default=0),
                                "versions": len(adapter.versions) if adapter else 0})
                harness.log.info(f"[{label}] requests {w + 1}-{w + len(chunk)}: "
                                 f"{acc / max(drafts, 1):.3f} accepted/draft, {toks / wall:.1f} tok/s, "
                                 f"{windows[-1]['in_flight_mean']:.1f} in flight")
        sampler.close()
    finally:
        shut_down(proxy, adapter, engine)
    swap_ms = [v["wall_s"] * 1e3 for v in adapter.versions] if adapter else []
    return {"windows": windows, "failed": failed, "outputs": outputs, "vllm_version": engine.version,
            "versions_swapped": len(swap_ms), "swap_ms": sorted(swap_ms),
            "trainer_faults": [f["why"] for f in adapter.handle.faults] if adapter else [],
            "trainer_restarts": adapter.handle.restarts if adapter else 0,
            "feedback_dropped": adapter.dropped if adapter else 0}


def over(windows: list[dict], first: int) -> float:
    """Accepted tokens per draft over the windows whose requests start at or after request `first` (1-based)."""
    ws = [w for w in windows if w["requests"][0] >= first]
    return sum(w["accepted"] for w in ws) / max(1, sum(w["drafts"] for w in ws))


def summarize(runs: dict[str, dict], requests: int, goal_last: int) -> tuple[dict[str, Any], list[str]]:
    """The runs (static, adapted and, when run, plain) -> (figures, table lines): accepted per draft over the stream
    and over its last `goal_last` requests, outputs identical token for token to plain decoding's (to the static
    run's without a plain run), tok/s against plain, swaps, requests in flight."""
    s, a, p = runs["static"], runs["adapted"], runs.get("plain")
    first = requests - goal_last + 1
    if not any(w["requests"][0] == first for w in s["windows"]):
        raise ConfigError(f"--goal-last {goal_last} must be a multiple of --window (no window starts at {first})")
    ref = "plain" if p else "static"
    same = {k: sum(x == y for x, y in zip(runs[ref]["outputs"], r["outputs"])) for k, r in runs.items() if k != ref}
    spec = {k: r for k, r in runs.items() if k != "plain"}
    whole = {k: over(r["windows"], 1) for k, r in spec.items()}
    last = {k: over(r["windows"], first) for k, r in spec.items()}
    tok_s = {k: sum(w["tokens"] for w in r["windows"]) / sum(w["wall_s"] for w in r["windows"])
             for k, r in runs.items()}
    fig = {f"identical_to_{ref}": same, "accepted_per_draft": whole, "gain": whole["adapted"] / whole["static"] - 1,
           f"accepted_per_draft_last_{goal_last}": last, "gain_last": last["adapted"] / last["static"] - 1,
           "goal_last": goal_last, "tok_s": tok_s,
           "in_flight_mean": {k: sum(w["in_flight_mean"] * w["wall_s"] for w in r["windows"])
                              / max(1e-9, sum(w["wall_s"] for w in r["windows"])) for k, r in runs.items()}}
    cols = (["plain"] if p else []) + ["static", "adapted"]
    rows = []
    for i, (x, y) in enumerate(zip(s["windows"], a["windows"])):
        ws = [runs[c]["windows"][i] for c in cols]
        rows.append([f"{x['requests'][0]}-{x['requests'][1]}", f"{x['accepted_per_draft']:.3f}",
                     f"{y['accepted_per_draft']:.3f}", *(f"{w['tok_s']:.1f}" for w in ws),
                     " / ".join(f"{w['in_flight_mean']:.1f}" for w in ws), y["versions"]])
    lines = harness.markdown_table(["requests", "static accepted/draft", "adapted accepted/draft",
                                    *(f"{c} tok/s" for c in cols), f"in flight (mean {' / '.join(cols)})",
                                    "versions swapped in"], rows).splitlines()
    swaps = (f"versions swapped {a['versions_swapped']} (median {a['swap_ms'][len(a['swap_ms']) // 2]:.0f} ms, "
             f"{a['swap_ms'][0]:.0f}-{a['swap_ms'][-1]:.0f} ms)" if a["swap_ms"] else "no version swapped in")
    lines += ["", f"accepted/draft over requests {first}-{requests}: static {last['static']:.3f}, adapted "
              f"{last['adapted']:.3f} ({fig['gain_last']:+.1%}); over the stream {whole['static']:.3f} -> "
              f"{whole['adapted']:.3f} ({fig['gain']:+.1%}); tok/s "
              + ", ".join(f"{k} {v:.1f}" for k, v in tok_s.items()),
              "greedy outputs identical to the " + ref + " run: "
              + ", ".join(f"{k} {v}/{requests}" for k, v in same.items())
              + "; failed " + ", ".join(f"{k} {r['failed']}" for k, r in runs.items())
              + f"; {swaps}; trainer faults {a['trainer_faults']}, restarts {a['trainer_restarts']}; feedback "
              f"records dropped {a['feedback_dropped']}"]
    return fig, lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = harness.parser("benchmarks.online_vllm", __doc__)
    harness.add_common(ap, pool="pools/{target_slug}", device="cpu", dtype="float32", out="runs/bench/online_vllm")
    ap.add_argument("--drafter", default="python-eagle3", help="the head vLLM drafts with (trained without --shift)")
    ap.add_argument("--shift", default="sql")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--window", type=int, default=25)
    ap.add_argument("--goal-last", type=int, default=100, help="the goal figure: the stream's last N requests")
    ap.add_argument("--in-flight", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--updater", default="ogd", choices=("ogd", "optimistic"))
    ap.add_argument("--lr", type=float, default=TrainerConfig.lr, help="(default: the online recipe's)")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2, help="updates per round (the online recipe's 2)")
    ap.add_argument("--kill-at", type=int, default=-1, help="request at which the trainer is killed (-1: half-way)")
    ap.add_argument("--no-plain", action="store_true", help="skip the plain-decoding run (the output reference)")
    ap.add_argument("--stream", default="", help="a requests JSONL to serve instead of --shift's prompts")
    args = ap.parse_args(argv)
    if not 0 < args.goal_last <= args.requests or args.goal_last % args.window:
        raise ConfigError("--goal-last must be in (0, --requests] and a multiple of --window")
    info = harness.resolve(args)
    pool_dir = harness.pool_dir(args, info)
    args.pool_dir = str(pool_dir)
    entries = read_manifest(pool_dir).get("drafters", {})
    if args.drafter not in entries:
        raise ConfigError(f"--drafter {args.drafter} is not in {pool_dir}")
    if entries[args.drafter].get("kind") not in kinds_with("vllm"):
        raise ConfigError(f"--drafter {args.drafter} is a {entries[args.drafter].get('kind')} drafter; vLLM drafts "
                          f"with {', '.join(kinds_with('vllm'))}")
    if not args.stream and entries[args.drafter].get("domain") in (args.shift, "general"):
        raise ConfigError(f"{args.drafter} was trained on {args.shift} data: pick a head of another domain")
    target = harness.load_target(args, info)
    model, tok = target.model, target.tok
    member = next(m for m in harness.load_members(pool_dir, info, model, kinds_with("vllm"))
                  if m.name == args.drafter)
    if args.stream:
        texts = [json.loads(line)["prompt"] for line in Path(args.stream).read_text().splitlines() if line.strip()]
    else:
        rows = domain_prompts(args.shift)
        texts = [r["prompt"] for r in rows["train"] + rows["held_out"]]
    prompts = [render_prompt(tok, t) for t in texts][:args.requests]
    if len(prompts) < args.requests:
        raise ConfigError(f"{args.stream or args.shift} has {len(prompts)} prompts, fewer than --requests "
                          f"{args.requests}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    head_dir = pool_dir / entries[args.drafter]["path"]
    runs = {} if args.no_plain else {"plain": one_run(args, info, model, member, None, prompts, False, out)}
    runs["static"] = one_run(args, info, model, member, head_dir, prompts, False, out)
    runs["adapted"] = one_run(args, info, model, member, head_dir, prompts, True, out)
    fig, lines = summarize(runs, len(prompts), args.goal_last)
    report = {"target": info.name, "drafter": args.drafter, "shift": args.stream or args.shift,
              "requests": len(prompts),
              "config": {k: v for k, v in vars(args).items() if k != "pool_dir"}, **fig,
              "runs": {k: {kk: vv for kk, vv in r.items() if kk != "outputs"} for k, r in runs.items()}}
    atomic_write_json(out / "outputs.json", {k: r["outputs"] for k, r in runs.items()})
    harness.write_results(out, report, "\n".join(lines))
    print("\n".join(lines))
    return report


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
