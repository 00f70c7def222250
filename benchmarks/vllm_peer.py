"""vLLM-CPU peer of benchmarks.decode: plain, EAGLE-3 and n-gram (prompt lookup) speculative greedy decoding, one
prompt at a time.

    .venv-vllm/bin/python benchmarks/vllm_peer.py JOB.json RESULT.json

Runs in vLLM's own environment, so it imports only vllm and the standard library (never draftpool). JOB.json holds
{"target": dir, "modes": [...], "prompts": [[token ids]], "max_new_tokens": int, "stop_ids": [int]}, plus
"head": dir and "k": int for mode "eagle3", and "ngram_min", "ngram_max", "ngram_k": int for mode "ngram" (vLLM's
prompt_lookup_min / prompt_lookup_max / num_speculative_tokens). "modes" defaults to ["plain", "eagle3"].
Engine start-up and one warm-up prompt per engine are not timed; each prompt is timed on its own (batch size 1).
RESULT.json gets, per mode: token ids and seconds per prompt, and the speculative decoding counters accumulated over
the timed prompts (0 for plain).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time

SPEC_COUNTERS = ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens",
                 "vllm:spec_decode_num_accepted_tokens")
MODES = ("plain", "eagle3", "ngram")


def spec_counters(llm) -> dict[str, float]:
    """Sum of each speculative-decoding counter over its label sets (0 where vLLM has not created it yet)."""
    totals = dict.fromkeys(SPEC_COUNTERS, 0.0)
    for metric in llm.get_metrics():
        if metric.name in totals:
            totals[metric.name] += float(getattr(metric, "value", 0) or 0)
    return totals


def _one(llm, ids: list[int], params) -> tuple[list[int], float]:
    """One prompt alone (batch size 1) -> (output token ids, wall seconds)."""
    start = time.perf_counter()
    res = llm.generate([{"prompt_token_ids": ids}], params, use_tqdm=False)
    return list(res[0].outputs[0].token_ids), time.perf_counter() - start


def run_mode(job: dict, mode: str) -> dict:
    from vllm import LLM, SamplingParams

    kw = {}
    if mode == "eagle3":
        kw["speculative_config"] = {"method": "eagle3", "model": job["head"], "num_speculative_tokens": job["k"]}
    elif mode == "ngram":
        kw["speculative_config"] = {"method": "ngram", "prompt_lookup_min": job["ngram_min"],
                                    "prompt_lookup_max": job["ngram_max"], "num_speculative_tokens": job["ngram_k"]}
    t0 = time.perf_counter()
    llm = LLM(model=job["target"], dtype=job.get("dtype", "float32"), max_model_len=1024, enforce_eager=True,
              disable_log_stats=False, **kw)
    startup = time.perf_counter() - t0
    params = SamplingParams(temperature=0.0, max_tokens=job["max_new_tokens"], stop_token_ids=job["stop_ids"])

    _one(llm, job["prompts"][0], params)  # warm-up, not timed
    before = spec_counters(llm)
    tokens, seconds = [], []
    for ids in job["prompts"]:
        out, dt = _one(llm, ids, params)
        tokens.append(out)
        seconds.append(dt)
    after = spec_counters(llm)
    del llm
    gc.collect()
    return {"token_ids": tokens, "seconds": seconds, "startup_s": startup,
            "spec_decode": {k: after[k] - before[k] for k in SPEC_COUNTERS}}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: vllm_peer.py JOB.json RESULT.json", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    with open(argv[0]) as f:
        job = json.load(f)
    modes = job.get("modes", ["plain", "eagle3"])
    if any(m not in MODES for m in modes):
        print(f"vllm_peer.py: modes {modes} not all in {', '.join(MODES)}", file=sys.stderr)
        return 2
    import vllm

    result = {"vllm_version": vllm.__version__, "k": job.get("k"), "modes": modes}
    for mode in modes:
        result[mode] = run_mode(job, mode)
    tmp = argv[1] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, argv[1])
    return 0


if __name__ == "__main__":
    # this folder holds modules named like other top-level packages (tree, sampling, engine ...): keep it off the path
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.exit(main(sys.argv[1:]))
