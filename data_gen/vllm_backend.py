"""The vLLM backend of self-distillation (`data_gen.backend=vllm`): the draftpool side.

vLLM pins its own torch and transformers, so it runs in its own environment (`scripts/setup_vllm.sh` makes
`.venv-vllm`) as a worker process (`data_gen/vllm_worker.py`) fed a job list of the shards still missing. The worker
writes one JSON result per shard; this side turns each into the same parquet shard the HF backend writes (same
records, same atomic rename) as soon as it appears, so a killed run resumes from the shards already written.
Engine settings (`tensor_parallel_size`, `gpu_memory_utilization`, `max_num_seqs`, dtype) are recipe keys under
`data.gen.vllm` and pass to vLLM's `LLM(...)` unchanged, on CPU or GPUs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftpool.config import ConfigError, field
from draftpool.vllm_env import vllm_python, with_root_on_path

WORKER = Path(__file__).with_name("vllm_worker.py")


@dataclass
class VllmOptions:
    python: str = field("", help="the vLLM environment's python ('' = $DRAFTPOOL_VLLM_PYTHON, else .venv-vllm)")
    tensor_parallel_size: int = field(1, help="GPUs one engine spans")
    gpu_memory_utilization: float = field(0.9, help="share of each GPU's memory vLLM may take")
    max_num_seqs: int = field(64, help="requests decoded together (vLLM's continuous batch)")
    dtype: str = field("", help="vLLM dtype ('' = the HF backend's: bfloat16 on GPUs that have it, else float32)")
    max_model_len: int = field(0, help="context length (0 = longest prompt + max_new_tokens)")
    enforce_eager: str = field("auto", help="auto (eager on CPU, CUDA graphs on GPUs), true, false")
    cpu_kv_cache_gb: int = field(4, help="VLLM_CPU_KVCACHE_SPACE on CPU builds (GiB of KV cache)")

    def validate(self) -> None:
        if self.tensor_parallel_size < 1 or self.max_num_seqs < 1 or self.max_model_len < 0:
            raise ConfigError("data.gen.vllm: tensor_parallel_size and max_num_seqs must be >= 1, max_model_len >= 0")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ConfigError("data.gen.vllm.gpu_memory_utilization must be in (0, 1]")
        if self.enforce_eager not in ("auto", "true", "false"):
            raise ConfigError("data.gen.vllm.enforce_eager takes auto, true or false")


def engine_args(opts: VllmOptions, device: str, dtype: str, max_len: int, seed: int) -> dict[str, Any]:
    """Keyword arguments of vLLM's LLM(...) for this job."""
    eager = opts.enforce_eager == "true" or (opts.enforce_eager == "auto" and device == "cpu")
    args: dict[str, Any] = {"dtype": opts.dtype or dtype, "max_model_len": opts.max_model_len or max_len,
                            "max_num_seqs": opts.max_num_seqs, "enforce_eager": eager, "seed": seed,
                            "tensor_parallel_size": opts.tensor_parallel_size}
    if device != "cpu":
        args["gpu_memory_utilization"] = opts.gpu_memory_utilization
    return args


def run_worker(opts: VllmOptions, target_dir: str, jobs: list[dict[str, Any]], stop_ids: list[int],
               engine: dict[str, Any], work: Path, on_shard: Callable[[dict[str, Any], dict[str, Any]], None],
               poll_s: float = 0.5) -> dict[str, Any]:
    """Run the worker over `jobs` (shards with rendered prompt ids); call on_shard(job, result) for each finished
    shard, in the order they finish, while the worker goes on. -> the engine record (vLLM version, start-up s)."""
    python = vllm_python(opts.python)
    work = work.resolve()  # rule: the worker runs in `work`: every path it is given is absolute
    work.mkdir(parents=True, exist_ok=True)
    job_file = work / "job.json"
    target = str(Path(target_dir).resolve()) if Path(target_dir).exists() else target_dir  # a folder, or a hub id
    job = {"target": target, "engine": engine, "stop_ids": stop_ids,
           "out": str(work / "out"), "shards": jobs,
           "env": {"HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": opts.cpu_kv_cache_gb,
                   "TOKENIZERS_PARALLELISM": "false"}}
    job_file.write_text(json.dumps(job))
    out_dir = Path(job["out"])
    for stale in out_dir.glob("*.json") if out_dir.exists() else []:  # an earlier, killed worker's: regenerated
        stale.unlink()
    log = open(work / "worker.log", "w")
    # its own process group: vLLM's engine processes are stopped with it (and stop themselves if this one dies)
    proc = subprocess.Popen([str(python), str(WORKER), str(job_file)], stdout=log, stderr=subprocess.STDOUT,
                            cwd=str(work), start_new_session=True, env=with_root_on_path(dict(os.environ)))
    (work / "worker.pid").write_text(str(proc.pid))  # = its process group id
    pending = {j["name"]: j for j in jobs}
    try:
        while pending:
            for name in [n for n in pending if (out_dir / f"{n}.json").is_file()]:
                result = json.loads((out_dir / f"{name}.json").read_text())
                on_shard(pending.pop(name), result)
                (out_dir / f"{name}.json").unlink()
            if pending and proc.poll() is not None and not any((out_dir / f"{n}.json").is_file() for n in pending):
                break
            time.sleep(poll_s)
        code = proc.wait()
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        log.close()
    if code or pending:
        tail = (work / "worker.log").read_text()[-3000:]
        raise ConfigError(f"the vLLM worker stopped (exit {code}) with {len(pending)} shards unanswered; its log "
                          f"({work / 'worker.log'}) ends:\n{tail}")
    engine_file = out_dir / "engine.json"
    return json.loads(engine_file.read_text()) if engine_file.is_file() else {}
