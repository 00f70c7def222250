"""vLLM worker of self-distillation (`data_gen.backend=vllm`): answers a job list of shards, one result file each.

    .venv-vllm/bin/python data_gen/vllm_worker.py JOB.json

Runs in vLLM's own environment: it imports vllm, the standard library and draftpool/lifeline.py (standard library
only; nothing else of draftpool, whose transformers pin differs).
JOB.json = {"target": HF folder, "engine": {LLM keyword arguments}, "env": {environment defaults},
"stop_ids": [int], "out": folder, "shards": [{"name", "temperature", "top_p",
"max_new_tokens", "seed", "prompts": [[token ids]]}]}.

Shards go to the engine in groups of at least twice its batch (`max_num_seqs`), so small shards still fill it. Per
shard it writes `<out>/<name>.json` = {"name", "responses": [[ids, up to and including the stop token]],
"finished": [bool], "seconds"} atomically (temp file, then rename): the parent turns each into a parquet shard as it
appears, so a killed worker loses at most the shards still in flight. Request i of a shard samples with seed
`seed + i`, so a re-run draws the same answers. `<out>/engine.json` records the vLLM version and start-up time.
The vLLM version is checked by the parent before it starts the worker.
"""

from __future__ import annotations

import json
import os
import sys
import time

from draftpool.lifeline import die_with_parent


def _atomic_json(path: str, obj: dict) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def respond(token_ids: list[int], finish_reason: str | None, stop_reason,
            stop_ids: list[int]) -> tuple[list[int], bool]:
    """vLLM's output -> (ids up to and including the stop token, finished), the HF backend's convention: a stop
    token vLLM left out of token_ids (stop_reason holds it; None means the tokenizer's EOS) is put back."""
    ids = list(token_ids)
    for j, t in enumerate(ids):  # rule: cut after the first stop token, as the HF backend does
        if t in stop_ids:
            return ids[: j + 1], True
    if finish_reason == "stop":
        stop = stop_reason if isinstance(stop_reason, int) else stop_ids[0]
        return ids + [stop], True
    return ids, False


def groups(shards: list[dict], width: int) -> list[list[dict]]:
    """Consecutive shards in groups of at least `width` prompts (the last group may hold fewer)."""
    out: list[list[dict]] = []
    held = width  # prompts in the last group (a full one to start: the first shard opens a group)
    for shard in shards:
        if held >= width:
            out.append([])
            held = 0
        out[-1].append(shard)
        held += len(shard["prompts"])
    return out


def main(job_path: str) -> int:
    die_with_parent()
    job = json.load(open(job_path))
    for k, v in job.get("env", {}).items():
        os.environ.setdefault(k, str(v))
    import vllm
    from vllm import LLM, SamplingParams

    out = job["out"]
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    llm = LLM(model=job["target"], **job["engine"])
    _atomic_json(os.path.join(out, "engine.json"), {"vllm_version": vllm.__version__,
                                                     "startup_s": time.perf_counter() - t0})
    stops = list(job["stop_ids"])
    width = 2 * job["engine"].get("max_num_seqs", 64)
    for group in groups(job["shards"], width):
        # shards go to the engine together until it has twice its batch to schedule; each is written when done
        params, prompts = [], []
        for shard in group:
            greedy = shard["temperature"] == 0
            params += [SamplingParams(temperature=shard["temperature"], top_p=1.0 if greedy else shard["top_p"],
                                      max_tokens=shard["max_new_tokens"], stop_token_ids=stops,
                                      seed=None if greedy else shard["seed"] + i)
                       for i in range(len(shard["prompts"]))]
            prompts += [{"prompt_token_ids": p} for p in shard["prompts"]]
        start = time.perf_counter()
        res = llm.generate(prompts, params, use_tqdm=False)
        seconds = time.perf_counter() - start
        rows = [respond(r.outputs[0].token_ids, r.outputs[0].finish_reason, r.outputs[0].stop_reason, stops)
                for r in res]
        at = 0
        for shard in group:
            mine, at = rows[at: at + len(shard["prompts"])], at + len(shard["prompts"])
            _atomic_json(os.path.join(out, f"{shard['name']}.json"), {
                "name": shard["name"], "responses": [r[0] for r in mine], "finished": [r[1] for r in mine],
                "seconds": seconds * len(mine) / len(rows)})  # the group's time, shared by answer count
        print(f"SHARDS {len(group)} {sum(len(r[0]) for r in rows)} tokens {seconds:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
