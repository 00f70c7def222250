"""Serve prompts through vLLM (CPU build) with and without an exported EAGLE-3 head; print JSON results.

    .venv-vllm/bin/python scripts/vllm_check.py --target DIR --head DIR --prompts FILE.json --k 3 --max-tokens 64

Runs in vLLM's own environment (it does not import draftpool). Prompts are already chat-rendered token id lists.
"""

from __future__ import annotations

import argparse
import json
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--head", required=True)
    ap.add_argument("--prompts", required=True, help="JSON list of token id lists")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    prompts = [TokensPrompt(prompt_token_ids=p) for p in json.load(open(args.prompts))]
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens)
    out: dict = {}
    for mode in ("plain", "eagle3"):
        kw = {} if mode == "plain" else {"speculative_config": {
            "method": "eagle3", "model": args.head, "num_speculative_tokens": args.k}}
        llm = LLM(model=args.target, dtype="float32", max_model_len=1024, enforce_eager=True,
                  disable_log_stats=False, **kw)
        t0 = time.perf_counter()
        res = llm.generate(prompts, params, use_tqdm=False)
        dt = time.perf_counter() - t0
        out[mode] = {"token_ids": [list(r.outputs[0].token_ids) for r in res], "seconds": dt,
                     "tokens": sum(len(r.outputs[0].token_ids) for r in res)}
        if mode == "eagle3":
            m = {}
            for metric in llm.get_metrics():
                if metric.name.startswith("vllm:spec_decode"):
                    m[metric.name] = getattr(metric, "values", None) or getattr(metric, "value", None)
            out[mode]["metrics"] = m
        del llm
    print("VLLM_RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
