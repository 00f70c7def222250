"""Swap EAGLE-3 head versions into a running vLLM engine and check what it computes with; print JSON results.

    PYTHONPATH=. .venv-vllm/bin/python scripts/vllm_reload_check.py --target DIR --heads A,B,A --prompts FILE.json

Runs in vLLM's own environment (vllm, torch, safetensors; `online.vllm.reload` is loaded by vLLM's workers as the
worker extension; counters read by benchmarks/vllm_peer.py's reader). The engine starts with the first head as its
drafter; before the first batch and after each swap it records the drafter's differences to the head folder it should
hold (`draftpool_check_drafter`), the target's digest, the greedy outputs of the prompts and vLLM's
speculative-decoding counters; then a plain engine (no drafter) gives the reference greedy outputs.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from benchmarks.vllm_peer import SPEC_COUNTERS, spec_counters


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--heads", required=True, help="comma list of head folders: the first starts the engine")
    ap.add_argument("--prompts", required=True, help="JSON list of token id lists")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=48)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from vllm import LLM, SamplingParams

    heads = args.heads.split(",")
    prompts = [{"prompt_token_ids": p} for p in json.load(open(args.prompts))]
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens)
    llm = LLM(model=args.target, dtype="float32", max_model_len=1024, enforce_eager=True, disable_log_stats=False,
              worker_extension_cls="online.vllm.reload.DrafterReload", max_num_seqs=8,
              speculative_config={"method": "eagle3", "model": heads[0], "num_speculative_tokens": args.k})
    steps = []
    for i, head in enumerate(heads):
        swap = None
        if i:
            t0 = time.perf_counter()
            swap = llm.collective_rpc("draftpool_load_drafter", args=(head,))[0]
            swap["wall_s"] = time.perf_counter() - t0
        check = llm.collective_rpc("draftpool_check_drafter", args=(head,))[0]
        others = {h: llm.collective_rpc("draftpool_check_drafter", args=(h,))[0]["diffs"] for h in set(heads) - {head}}
        before = spec_counters(llm)
        res = llm.generate(prompts, params, use_tqdm=False)
        after = spec_counters(llm)
        steps.append({"head": head, "swap": swap, "diffs": check["diffs"], "target_digest": check["target_digest"],
                      "diffs_to_other_heads": others, "outputs": [list(r.outputs[0].token_ids) for r in res],
                      "counters": {k: after[k] - before[k] for k in SPEC_COUNTERS}})
    try:  # a head of another shape is refused with the reason, and the engine keeps its drafter
        llm.collective_rpc("draftpool_load_drafter", args=(os.path.join(args.target, "no-such-head"),))
        bad = None
    except Exception as e:  # noqa: BLE001 - whatever vLLM wraps the worker's error in
        bad = f"{type(e).__name__}: {e}"[:500]
    del llm
    plain = LLM(model=args.target, dtype="float32", max_model_len=1024, enforce_eager=True)
    ref = [list(r.outputs[0].token_ids) for r in plain.generate(prompts, params, use_tqdm=False)]
    print("RELOAD_RESULT " + json.dumps({"steps": steps, "plain": ref, "bad_head_error": bad}))


if __name__ == "__main__":
    main()
