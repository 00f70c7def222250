"""Where a decode step's time goes: plain steps and chain cycles of the engine, timed part by part and by op.

    python -m benchmarks.profile_cycle [--domain sql] [--eagle3 DIR] [--k 4] [--tokens 96] [--prompts 3]
                                       [--dtype float32|bfloat16] [--backends lean,hf] [--out runs/bench/profile]

1. Parts (wall clock, median over the steps of --prompts held-out prompts): a plain step = the target body over 1
   token + the lm_head row + argmax + the loop; a chain cycle = drafting k tokens + the target body over k + 1 tokens
   + the lm_head rows greedy verification projects + acceptance + cache rollback + the loop. The target body is
   also timed alone per layer count (embedding / decoder layers / final norm) to show the per-layer cost.
2. Ops: torch.profiler over whole requests of both methods; the top ops (aten and oneDNN) by self CPU time, and the
   part of the wall time no op accounts for (Python: module calls, cache bookkeeping, host syncs).
Each target forward in --backends (the lean forward, transformers') is profiled in the same run.
Writes <out>/results.json and <out>/table.md (also printed).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from data_gen.domains import check_domain, domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import ConfigError
from specsel.decoding.loop import SpecDecoder


def _median_ms(times: list[float]) -> float:
    return 1000 * statistics.median(times) if times else float("nan")


def part_times(dec: SpecDecoder, prompts: list[list[int]], tokens: int) -> dict[str, float]:
    """Median ms per plain step / chain cycle and of their parts, from instrumented runs of the real loop."""
    runner = dec.target
    body_t: list[float] = []
    head_t: list[float] = []
    fwd, proj = runner.forward, runner.lm_head

    def timed_forward(*a, **kw):
        t0 = time.perf_counter()
        out = fwd(*a, **kw)
        body_t.append(time.perf_counter() - t0)
        return out

    def timed_head(x):
        t0 = time.perf_counter()
        out = proj(x)
        head_t.append(time.perf_counter() - t0)
        return out

    runner.forward = timed_forward
    if proj is not None:
        runner.lm_head = timed_head
    steps: list[float] = []
    drafts: list[float] = []
    try:
        for p in prompts:
            _, m = dec.generate(p, tokens)
            cycles = max(1, m.target_forwards - 1)
            steps.append(m.total_s / max(1, m.target_forwards))
            if dec.mode != "plain":
                drafts.append(m.draft_s / cycles)
    finally:
        runner.forward, runner.lm_head = fwd, proj
    out = {"per_step_or_cycle_ms": _median_ms(steps), "target_body_ms": _median_ms(body_t[1:]),
           "lm_head_row_ms": _median_ms(head_t)}
    if drafts:
        out["draft_ms"] = _median_ms(drafts)
    return out


def op_table(dec: SpecDecoder, prompt: list[int], tokens: int, top: int = 15) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile

    dec.generate(prompt, 8)  # warm
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _, m = dec.generate(prompt, tokens)
    wall = time.perf_counter() - t0
    events = [e for e in prof.key_averages() if e.key.startswith(("aten::", "mkldnn::"))]
    self_total = sum(e.self_cpu_time_total for e in events) / 1e6
    rows = sorted(events, key=lambda e: -e.self_cpu_time_total)[:top]
    return {"wall_s": wall, "forwards": m.target_forwards, "new_tokens": m.new_tokens,
            "aten_self_s": self_total, "outside_ops_share": max(0.0, 1 - self_total / wall),
            "ops": [{"op": e.key, "calls": e.count, "self_ms": e.self_cpu_time_total / 1e3,
                     "share": e.self_cpu_time_total / 1e6 / wall} for e in rows]}


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.profile_cycle", __doc__)
    harness.add_common(ap, dtype="float32", out="runs/bench/profile", help={"dtype": "float32 or bfloat16"})
    ap.add_argument("--domain", default="sql")
    ap.add_argument("--eagle3", default="", help="head folder ('' = pools/<target slug>/<domain>-eagle3)")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--prompts", type=int, default=3)
    ap.add_argument("--backends", default="lean,hf", help="target forwards to profile side by side (lean, hf)")
    args = ap.parse_args(argv)
    if args.dtype not in ("float32", "bfloat16"):
        raise ConfigError(f"--dtype {args.dtype!r}: choose from float32, bfloat16")
    check_domain(args.domain)
    info = harness.resolve(args)
    head_dir = Path(args.eagle3 or f"pools/{info.slug}/{args.domain}-eagle3")
    if not head_dir.is_dir():
        raise ConfigError(f"EAGLE-3 head folder {head_dir} does not exist: pass --eagle3 DIR")
    from draftpool.models.eagle3 import EAGLE3
    from specsel.decoding.eagle3 import Eagle3Drafter

    target = harness.load_target(args, info, device="cpu")
    model, tok, dtype = target.model, target.tok, target.dtype
    head = EAGLE3.load(head_dir, info, model).to(dtype).eval()
    stop = stop_token_ids(tok, model)
    rows = domain_prompts(args.domain)["held_out"][: args.prompts]
    prompts = [render_prompt(tok, r["prompt"]) for r in rows]
    decs = {}
    for backend in args.backends.split(","):
        decs[f"plain ({backend})"] = SpecDecoder(model, mode="plain", stop_ids=stop, backend=backend)
        decs[f"chain k={args.k} ({backend})"] = SpecDecoder(model, Eagle3Drafter(head), "chain", k=args.k,
                                                           stop_ids=stop, backend=backend)
    report: dict[str, Any] = {"target": info.name, "dtype": args.dtype, "threads": torch.get_num_threads(),
                              "tokens": args.tokens, "prompts": len(prompts), "parts": {}, "ops": {}}
    for name, dec in harness.progress(list(decs.items()), "profile", unit="decoder"):
        dec.generate(prompts[0], 8)  # warm-up
        report["parts"][name] = part_times(dec, prompts, args.tokens)
        report["ops"][name] = op_table(dec, prompts[0], args.tokens)
    table = format_table(report)
    out = harness.write_results(args.out, report, table)
    print(table)
    print(f"wrote {out / 'results.json'} and {out / 'table.md'}")
    return 0


def format_table(report: dict[str, Any]) -> str:
    """Per decoder: its parts (ms) and share outside aten ops, then its top ops by self CPU time."""
    parts = []
    for name, p in report["parts"].items():
        o = report["ops"][name]
        parts.append(f"{name}: " + ", ".join(f"{k} {v:.1f}" for k, v in p.items())
                     + f"; outside aten ops {100 * o['outside_ops_share']:.0f}% of wall\n\n" + harness.markdown_table(
                         ["op", "calls", "self ms", "share"],
                         [[r["op"], r["calls"], f"{r['self_ms']:.1f}", f"{100 * r['share']:.1f}%"] for r in o["ops"]]))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
