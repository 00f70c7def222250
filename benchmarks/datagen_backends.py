"""Self-distillation throughput: the HF backend vs the vLLM backend on the same prompts and lengths.

    python -m benchmarks.datagen_backends --domain sql --prompts 32 --max-new-tokens 96 \
        --hf-batch 1,8,32 --vllm-seqs 8,32 --out runs/bench/datagen

Each setting generates the same greedy answers (train split, temperature 0, one shard holding every prompt, so each
backend batches as wide as its setting allows) into its own data folder through `data_gen.generate.run`, the code
path users run. tok/s = new tokens / generation seconds (the HF model load and vLLM's engine start-up are reported
apart). Greedy answers are compared with the HF batch-1 answers (the unpadded reference): the share identical token
for token and the mean common-prefix share. Writes results.json and table.md to --out.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from data_gen.domains import check_domain
from data_gen.generate import DataGenConfig, load_distilled, run
from draftpool.config import ConfigError, load_config
from draftpool.io import atomic_write_json, atomic_write_text
from draftpool.target import DEFAULT_TARGET, load_target, resolve_target


def _setting(args, name: str, extra: list[str]) -> DataGenConfig:
    over = [f"data_dir={Path(args.out) / name}", f"max_prompts_per_split={args.prompts}", "train_temperatures=[0.0]",
            "held_out_temperatures=[]", f"max_new_tokens={args.max_new_tokens}", f"shard_size={args.prompts}",
            "samples_per_prompt=0", "device=cpu", f"target={args.target}", f"domain={args.domain}", *extra]
    return load_config(DataGenConfig, f"recipes/{args.domain}/data_gen.yaml", over)


def prefix_share(a: list[int], b: list[int]) -> float:
    """Common-prefix length / the longer answer's length (1.0 for two identical answers, empty ones included)."""
    if a == b:
        return 1.0
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return n / max(len(a), len(b))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--domain", default="sql")
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--hf-batch", default="1,8,32", help="HF backend batch sizes (1 first: the reference)")
    ap.add_argument("--vllm-seqs", default="8,32", help="vLLM max_num_seqs settings ('' = skip vLLM)")
    ap.add_argument("--out", default="runs/bench/datagen")
    args = ap.parse_args(argv)
    check_domain(args.domain)
    out = Path(args.out)
    if out.exists():  # every setting generates afresh: old folders would be reused, not timed
        shutil.rmtree(out)
    info = resolve_target(args.target)
    t0 = time.perf_counter()
    model, tok = load_target(info)
    load_s = time.perf_counter() - t0
    settings = [(f"hf-b{b}", "hf", b, [f"batch_size={b}"]) for b in map(int, args.hf_batch.split(","))]
    settings += [(f"vllm-s{s}", "vllm", s, ["backend=vllm", f"vllm.max_num_seqs={s}"])
                 for s in map(int, filter(None, args.vllm_seqs.split(",")))]
    rows, answers = [], {}
    for name, backend, width, extra in settings:
        print(f"[{name}]", flush=True)
        run(_setting(args, name, extra), info, model if backend == "hf" else None, tok)
        log = json.loads((out / name / "runs.jsonl").read_text().splitlines()[-1])
        gen_s = log.get("generate_s", log["seconds"])
        answers[name] = {r["prompt_id"]: r["response_ids"] for r in load_distilled(out / name).to_list()}
        rows.append({"setting": name, "backend": backend, "width": width, "tokens": log["new_tokens"],
                     "generate_s": gen_s, "tok_s": log["new_tokens"] / gen_s,
                     "startup_s": log.get("startup_s", load_s), "wall_s": log["seconds"],
                     **({"vllm_version": log["vllm_version"]} if "vllm_version" in log else {})})
    ref = answers[settings[0][0]]
    for row in rows:
        got = answers[row["setting"]]
        row["identical"] = sum(got[p] == ref[p] for p in ref) / len(ref)
        row["prefix_share"] = sum(prefix_share(got[p], ref[p]) for p in ref) / len(ref)
    best = {b: max((r for r in rows if r["backend"] == b), key=lambda r: r["tok_s"], default=None)
            for b in ("hf", "vllm")}
    report = {"target": info.name, "domain": args.domain, "prompts": args.prompts,
              "max_new_tokens": args.max_new_tokens, "reference": settings[0][0], "rows": rows,
              "best_ratio": (best["vllm"]["tok_s"] / best["hf"]["tok_s"]) if best["vllm"] and best["hf"] else None}
    atomic_write_json(out / "results.json", report)
    lines = ["| setting | tok/s (generation) | tokens | generation s | start-up s | identical to hf-b1 | "
             "common prefix |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['setting']} | {r['tok_s']:.1f} | {r['tokens']} | {r['generate_s']:.1f} | {r['startup_s']:.1f} | "
              f"{r['identical']:.2f} | {r['prefix_share']:.2f} |" for r in rows]
    if report["best_ratio"] is not None:
        lines.append(f"\nbest vLLM / best HF tok/s: {report['best_ratio']:.2f}x "
                     f"({best['vllm']['setting']} vs {best['hf']['setting']})")
    atomic_write_text(out / "table.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return report


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:
        sys.exit(f"error: {e}")
