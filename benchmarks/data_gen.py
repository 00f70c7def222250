"""Self-distillation throughput of the target, one prompt at a time against batched.

    python -m benchmarks.data_gen [--n 32] [--max-new-tokens 64] [--batch-size 16] [--domain sql]
        [--out runs/bench/data_gen]

Self-distillation throughput of the target: generated tokens/s greedy one prompt at a time (on the first min(n, 8)
prompts) versus batched and left-padded as data_gen.generate.run does (prompts sorted by length, generate_batch).
Warm-up is excluded; each figure is given with its spread over --repeats. Writes <out>/results.json and
<out>/table.md (also printed).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from typing import Any

import torch

from benchmarks import harness
from data_gen.domains import check_domain, domain_prompts
from data_gen.hf_backend import generate_batch
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.forward.timing import sync_device
from draftpool.target import DEFAULT_TARGET

SINGLE_MAX = 8  # one-at-a-time is slow; it is measured on the first min(n, SINGLE_MAX) prompts


def _time(fn, device: torch.device) -> tuple[float, Any]:
    """Wall seconds of one call (device work waited for) and its result."""
    sync_device(device)
    t0 = time.perf_counter()
    out = fn()
    sync_device(device)
    return time.perf_counter() - t0, out


def _summary(values: list[float]) -> dict[str, float]:
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}


def bench(n: int = 32, max_new_tokens: int = 64, batch_size: int = 16, domain: str = "sql", repeats: int = 2,
          target: str = DEFAULT_TARGET, device: str = "auto", dtype: str = "auto") -> dict[str, Any]:
    """Both modes timed over `repeats`, with the greedy parity of batched against one-at-a-time answers."""
    check_domain(domain)
    if min(n, max_new_tokens, batch_size, repeats) < 1:
        raise ValueError("--n, --max-new-tokens, --batch-size and --repeats must be >= 1")
    loaded = harness.load_target(argparse.Namespace(target=target, device=device, dtype=dtype))
    info, model, tok, dev, dtype = loaded.info, loaded.model, loaded.tok, loaded.device, loaded.dtype
    stop = stop_token_ids(tok, model)
    prompts = [r["prompt"] for r in domain_prompts(domain)["train"][:n]]
    ids = [render_prompt(tok, p) for p in prompts]
    subset = ids[: min(len(ids), SINGLE_MAX)]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # as run(): similar lengths together
    batches = [[ids[i] for i in order[b: b + batch_size]] for b in range(0, len(order), batch_size)]

    def gen(batch: list[list[int]]) -> list[tuple[list[int], bool]]:
        return generate_batch(model, tok, batch, 0.0, 1.0, max_new_tokens, 0, stop)

    def single() -> list[list[int]]:
        return [gen([p])[0][0] for p in subset]

    def batched() -> list[list[int]]:
        return [resp for batch in batches for resp, _ in gen(batch)]

    # warm-up (not timed): one call of each shape family
    gen([subset[0]])
    gen(batches[0])

    runs: dict[str, list[dict[str, float]]] = {"single": [], "batched": []}
    outputs: dict[str, list[list[int]]] = {}
    for rep in range(repeats):
        for mode, fn in (("single", single), ("batched", batched)):
            harness.log.info("repeat %d/%d: %s", rep + 1, repeats, mode)
            secs, out = _time(fn, dev)
            tokens = sum(len(r) for r in out)
            runs[mode].append({"seconds": secs, "tokens": tokens, "tok_s": tokens / secs})
            outputs[mode] = out

    # greedy parity on the subset: batched (left-padded) answers versus one-at-a-time answers
    batched_by_prompt = {tuple(ids[i]): outputs["batched"][k] for k, i in enumerate(order)}
    same = sum(batched_by_prompt[tuple(p)] == r for p, r in zip(subset, outputs["single"]))

    results = {}
    for mode in ("single", "batched"):
        results[mode] = {
            "prompts": len(subset) if mode == "single" else len(ids),
            "batch_size": 1 if mode == "single" else batch_size,
            "tokens_per_repeat": runs[mode][-1]["tokens"],
            "tok_s": _summary([r["tok_s"] for r in runs[mode]]),
            "seconds": _summary([r["seconds"] for r in runs[mode]]),
            "repeats": runs[mode],
        }
    import transformers

    return {
        "command": " ".join(["python -m benchmarks.data_gen", *sys.argv[1:]]),
        "target": info.name, "target_weights_sha256": info.weights_sha256, "domain": domain,
        "n": len(ids), "max_new_tokens": max_new_tokens, "batch_size": batch_size, "repeats": repeats,
        "device": str(dev),
        "device_name": (torch.cuda.get_device_name(dev) if dev.type == "cuda"
                        else platform.processor() or platform.machine()),
        "dtype": str(dtype).removeprefix("torch."), "torch_threads": torch.get_num_threads(),
        "torch_version": torch.__version__, "transformers_version": transformers.__version__,
        "results": results,
        "speedup": results["batched"]["tok_s"]["mean"] / results["single"]["tok_s"]["mean"],
        "greedy_parity": {"prompts": len(subset), "identical": same},
    }


def _table(report: dict[str, Any]) -> str:
    rows = [[mode, r["prompts"], r["batch_size"], r["tokens_per_repeat"], f"{r['tok_s']['mean']:.1f}",
             f"{r['tok_s']['min']:.1f}", f"{r['tok_s']['max']:.1f}", f"{r['tok_s']['stdev']:.1f}"]
            for mode, r in report["results"].items()]
    p = report["greedy_parity"]
    return harness.markdown_table(["mode", "prompts", "batch", "tokens", "tok/s mean", "min", "max", "stdev"],
                                  rows) + "\n\n" + (f"speedup (batched / single tok/s): {report['speedup']:.2f}x   "
                f"greedy parity: {p['identical']}/{p['prompts']} answers identical   "
                f"[{report['device']} {report['dtype']}, {report['repeats']} repeats, warm-up excluded]")


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.data_gen", __doc__)
    harness.add_common(ap, device="auto", dtype="auto", out="runs/bench/data_gen")
    ap.add_argument("--n", type=int, default=32, help="train prompts of the domain (batched mode)")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--domain", default="sql")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    report = bench(args.n, args.max_new_tokens, args.batch_size, args.domain, args.repeats, args.target,
                   args.device, args.dtype)
    table = _table(report)
    out = harness.write_results(args.out, report, table)
    print(table)
    print(f"wrote {out / 'results.json'} and {out / 'table.md'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
