"""Online adaptation attached to vLLM, on the domain-shift stream: vLLM's own counters, static head vs adapted head.

    python -m benchmarks.online_vllm --pool 'pools/{target_slug}' --drafter python-eagle3 --shift sql \
        --requests 100 --window 25 --in-flight 4 --out runs/bench/online_vllm

Two runs over the same stream of unseen-domain prompts (the shift domain's train prompts, then its held-out ones),
each on a fresh vLLM server behind draftpool's front end with `--in-flight` requests at a time: `static` (no trainer)
and `adapted` (the trainer learns from every finished request, its versions are swapped into vLLM's drafter; the
trainer is SIGKILLed at request `--kill-at`, default half-way). Per window of requests: vLLM's accepted tokens per
draft (`spec_decode_num_accepted_tokens / spec_decode_num_drafts`, differences of its counters), tok/s, versions
swapped in. Greedy outputs of both runs are compared token for token. Writes results.json and table.md to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from data_gen.domains import domain_prompts
from data_gen.generate import render_prompt
from draftpool.config import ConfigError
from draftpool.io import atomic_write_json, atomic_write_text
from draftpool.pool import load_pool, read_manifest
from draftpool.target import DEFAULT_TARGET, load_target, resolve_target
from online.process import ExportSpec, ProcessConfig
from online.trainer import TrainerConfig
from online.vllm_adapt import VllmAdapter, VllmProxy
from online.vllm_engine import VllmEngine, VllmServeOptions


def ask(url: str, ids: list[int], n: int) -> tuple[int, list[int]]:
    body = json.dumps({"model": "target", "prompt": ids, "max_tokens": n, "temperature": 0.0,
                       "return_token_ids": True}).encode()
    req = urllib.request.Request(f"{url}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=900) as r:
            return r.status, json.loads(r.read())["choices"][0]["token_ids"]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, []


def one_run(args, info, model, name: str, head, head_dir: Path, prompts: list[list[int]], adapt: bool,
            out: Path) -> dict[str, Any]:
    opts = VllmServeOptions(k=args.k, max_num_seqs=args.in_flight)
    engine = VllmEngine(info.path, str(head_dir), opts, out / f"vllm-{'adapted' if adapt else 'static'}.log",
                        served_name=info.name).start()
    adapter = proxy = None
    windows, outputs, failed = [], [], 0
    try:
        if adapt:
            tcfg = TrainerConfig(updater="ogd", lr=args.lr, batch=args.batch, epochs=args.epochs)
            adapter = VllmAdapter(engine, model, name, head, tcfg, ProcessConfig(threads=1, export_every=0),
                                  ExportSpec(str(out / "export"), args.pool_dir, info), 64, out / "heads").start()
        proxy = VllmProxy(engine, adapter).start()
        kill_at = args.kill_at if args.kill_at >= 0 else len(prompts) // 2
        with ThreadPoolExecutor(args.in_flight) as ex:
            for w in range(0, len(prompts), args.window):
                chunk = prompts[w:w + args.window]
                if adapt and w <= kill_at < w + len(chunk) and adapter.handle.proc is not None:
                    os.kill(adapter.handle.proc.pid, signal.SIGKILL)  # mid-run: requests keep flowing
                before, t0 = engine.counters(), time.perf_counter()
                res = list(ex.map(lambda p: ask(proxy.url, p, args.max_new_tokens), chunk))
                wall, after = time.perf_counter() - t0, engine.counters()
                drafts = after["vllm:spec_decode_num_drafts"] - before["vllm:spec_decode_num_drafts"]
                acc = after["vllm:spec_decode_num_accepted_tokens"] - before["vllm:spec_decode_num_accepted_tokens"]
                failed += sum(s != 200 for s, _ in res)
                outputs += [ids for _, ids in res]
                toks = sum(len(ids) for _, ids in res)
                windows.append({"requests": [w + 1, w + len(chunk)], "accepted_per_draft": acc / max(drafts, 1),
                                "drafts": drafts, "accepted": acc,
                                "tok_s": toks / wall, "tokens": toks,
                                "versions": len(adapter.versions) if adapter else 0})
                print(f"[{'adapted' if adapt else 'static'}] requests {w + 1}-{w + len(chunk)}: "
                      f"{acc / max(drafts, 1):.3f} accepted/draft, {toks / wall:.1f} tok/s", flush=True)
    finally:
        if proxy is not None:
            proxy.close()
        if adapter is not None:
            adapter.stop()
        engine.stop()
    swap_ms = [v["wall_s"] * 1e3 for v in adapter.versions] if adapter else []
    return {"windows": windows, "failed": failed, "outputs": outputs, "vllm_version": engine.version,
            "versions_swapped": len(swap_ms), "swap_ms": sorted(swap_ms),
            "trainer_faults": [f["why"] for f in adapter.handle.faults] if adapter else [],
            "trainer_restarts": adapter.handle.restarts if adapter else 0,
            "feedback_dropped": adapter.dropped if adapter else 0}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--pool", default="pools/{target_slug}")
    ap.add_argument("--drafter", default="python-eagle3", help="the head vLLM drafts with (trained without --shift)")
    ap.add_argument("--shift", default="sql")
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--window", type=int, default=25)
    ap.add_argument("--in-flight", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--kill-at", type=int, default=-1, help="request at which the trainer is killed (-1: half-way)")
    ap.add_argument("--out", default="runs/bench/online_vllm")
    args = ap.parse_args(argv)
    info = resolve_target(args.target)
    pool_dir = Path(args.pool.format(target_slug=info.slug))
    args.pool_dir = str(pool_dir)
    entries = read_manifest(pool_dir).get("drafters", {})
    if args.drafter not in entries:
        raise ConfigError(f"--drafter {args.drafter} is not in {pool_dir}")
    if entries[args.drafter].get("domain") in (args.shift, "general"):
        raise ConfigError(f"{args.drafter} was trained on {args.shift} data: pick a head of another domain")
    model, tok = load_target(info)
    _, models = load_pool(pool_dir, info, model, ["eagle3"])
    head = models[args.drafter][1]
    rows = domain_prompts(args.shift)
    prompts = [render_prompt(tok, r["prompt"]) for r in rows["train"] + rows["held_out"]][:args.requests]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    head_dir = pool_dir / entries[args.drafter]["path"]
    runs = {"static": one_run(args, info, model, args.drafter, head, head_dir, prompts, False, out)}
    runs["adapted"] = one_run(args, info, model, args.drafter, head, head_dir, prompts, True, out)
    same = sum(a == b for a, b in zip(runs["static"]["outputs"], runs["adapted"]["outputs"]))
    last = {k: r["windows"][-1]["accepted_per_draft"] for k, r in runs.items()}
    overall = {k: sum(w["accepted"] for w in r["windows"]) / max(1, sum(w["drafts"] for w in r["windows"]))
               for k, r in runs.items()}
    report = {"target": info.name, "drafter": args.drafter, "shift": args.shift, "requests": len(prompts),
              "config": {k: v for k, v in vars(args).items() if k != "pool_dir"}, "identical_outputs": same,
              "gain_last_window": last["adapted"] / last["static"] - 1,
              "accepted_per_draft": overall, "gain": overall["adapted"] / overall["static"] - 1,
              "runs": {k: {kk: vv for kk, vv in r.items() if kk != "outputs"} for k, r in runs.items()}}
    atomic_write_json(out / "results.json", report)
    lines = ["| window | static accepted/draft | adapted accepted/draft | static tok/s | adapted tok/s | versions |",
             "|---|---|---|---|---|---|"]
    for s_, a_ in zip(runs["static"]["windows"], runs["adapted"]["windows"]):
        lines.append(f"| {s_['requests'][0]}-{s_['requests'][1]} | {s_['accepted_per_draft']:.3f} | "
                     f"{a_['accepted_per_draft']:.3f} | {s_['tok_s']:.1f} | {a_['tok_s']:.1f} | {a_['versions']} |")
    a = runs["adapted"]
    lines.append(f"\nidentical greedy outputs {same}/{len(prompts)}; failed static {runs['static']['failed']}, "
                 f"adapted {a['failed']}; versions swapped {a['versions_swapped']} "
                 f"({a['swap_ms'][0]:.0f}-{a['swap_ms'][-1]:.0f} ms); trainer faults {a['trainer_faults']}, restarts "
                 f"{a['trainer_restarts']}; accepted/draft over the stream {overall['static']:.3f} -> "
                 f"{overall['adapted']:.3f} "
                 f"({report['gain']:+.1%}), last window {report['gain_last_window']:+.1%}" if a["swap_ms"] else
                 f"\nidentical greedy outputs {same}/{len(prompts)}; no version swapped in")
    atomic_write_text(out / "table.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return report


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:
        sys.exit(f"error: {e}")
