"""A vLLM OpenAI-compatible server serving the target with a pool head as its EAGLE-3 drafter, driven from draftpool.

vLLM runs in its own environment (`scripts/setup_vllm.sh`), started as `vllm serve` with draftpool's worker
extension (`online/vllm/reload.py`) and the dev-mode RPC route, so a new head version is loaded into the running
engine's drafter in place, between two engine steps, never into the target (`swap`). The same arguments take GPUs and
`tensor_parallel_size` unchanged. `counters` reads vLLM's own speculative-decoding counters from /metrics.

At start the engine reloads the head it started with: a vLLM whose drafter cannot be reloaded fails then, with its
version in the message, not at the first swap.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftpool.config import ConfigError, field
from draftpool.models import get_kind, kind_of_folder
from draftpool.vllm_env import SETUP, vllm_python, vllm_version, with_root_on_path

COUNTERS = ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_accepted_tokens")
RUNNING = "vllm:num_requests_running"


class VllmEngineError(RuntimeError):
    """The vLLM server could not be started, or refused a drafter version."""


@dataclass
class VllmServeOptions:
    python: str = field("", help="the vLLM environment's python ('' = $DRAFTPOOL_VLLM_PYTHON, else .venv-vllm)")
    drafter: str = field("", help="the pool head vLLM drafts with ('' = the first EAGLE-3 head of the pool)")
    port: int = field(0, help="vLLM server's port (0 = a free one); clients talk to serve.http")
    k: int = field(4, help="draft tokens per step (vLLM chains)")
    max_num_seqs: int = field(8, help="requests in flight (vLLM's continuous batch)")
    tensor_parallel_size: int = field(1, help="GPUs the engine spans")
    gpu_memory_utilization: float = field(0.9, help="share of each GPU's memory vLLM may take (GPUs only)")
    dtype: str = field("float32", help="vLLM dtype (bfloat16 on GPUs)")
    max_model_len: int = field(1024, help="context length")
    enforce_eager: bool = field(True, help="no CUDA graphs / compilation (false on GPUs for speed)")
    cpu_kv_cache_gb: int = field(2, help="VLLM_CPU_KVCACHE_SPACE on CPU builds")
    start_timeout: float = field(600.0, help="seconds vLLM may take to answer /health")

    def validate(self) -> None:
        if self.k < 1 or self.max_num_seqs < 1 or self.tensor_parallel_size < 1 or self.max_model_len < 1:
            raise ConfigError("vllm.k, max_num_seqs, tensor_parallel_size and max_model_len must be >= 1")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ConfigError("vllm.gpu_memory_utilization must be in (0, 1]")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_counters(text: str, names: tuple[str, ...] = COUNTERS, suffix: str = "_total") -> dict[str, float]:
    """Prometheus text -> {metric: sum over its label sets} for `names`; counters are served as <name>_total,
    gauges (suffix "") under their own name."""
    out = dict.fromkeys(names, 0.0)
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        base = name.removesuffix(suffix) if suffix else name
        if base in out and name.endswith(suffix):
            out[base] += float(line.rsplit(" ", 1)[1])
    return out


class VllmEngine:
    """`vllm serve <target>` with `head_dir` as its drafter ("" = plain decoding); start(), swap(head_dir),
    counters(), stop()."""

    def __init__(self, target_dir: str, head_dir: str, opts: VllmServeOptions, log_path: str | Path,
                 served_name: str = "", target_sha256: str = ""):
        """served_name: the model name clients see (default: the target folder). target_sha256: the target's
        weights hash; a head folder whose draftpool.json names another target is refused (at start and swap)."""
        self.target_sha256 = target_sha256
        if head_dir:
            self.check_head(head_dir)
        self.target_dir, self.head_dir, self.opts = target_dir, str(head_dir), opts
        self.served_name = served_name or target_dir
        self.log_path = Path(log_path)
        self.python = vllm_python(opts.python)
        self.version = vllm_version(self.python)
        self.port = opts.port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.swaps: list[dict[str, Any]] = []

    def command(self) -> list[str]:
        o = self.opts
        cmd = [str(self.python), "-m", "online.vllm.serve", "--model", self.target_dir,  # vLLM's server, dies with us
               "--served-model-name", self.served_name,
               "--port", str(self.port), "--host", "127.0.0.1", "--dtype", o.dtype,
               "--max-model-len", str(o.max_model_len), "--max-num-seqs", str(o.max_num_seqs),
               "--tensor-parallel-size", str(o.tensor_parallel_size),
               "--worker-extension-cls", "online.vllm.reload.DrafterReload", "--disable-uvicorn-access-log"]
        if self.head_dir:  # no head: plain decoding (the reference outputs); the method is the folder's kind's
            spec = {"method": get_kind(kind_of_folder(self.head_dir)).vllm_method, "model": self.head_dir,
                    "num_speculative_tokens": o.k}
            cmd += ["--speculative-config", json.dumps(spec)]
        if o.enforce_eager:
            cmd.append("--enforce-eager")
        if o.dtype != "float32":  # GPUs (the CPU build reads VLLM_CPU_KVCACHE_SPACE instead)
            cmd += ["--gpu-memory-utilization", str(o.gpu_memory_utilization)]
        return cmd

    def start(self) -> VllmEngine:
        env = {**with_root_on_path(dict(os.environ)), "VLLM_SERVER_DEV_MODE": "1", "HF_HUB_OFFLINE": "1",
               "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", str(self.opts.cpu_kv_cache_gb))}
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.opts.start_timeout
        while True:
            if self.proc.poll() is not None:
                raise VllmEngineError(f"vLLM {self.version} exited at start (code {self.proc.returncode}); its log "
                                      f"{self.log_path} ends:\n{self.log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise VllmEngineError(f"vLLM {self.version} did not answer /health within {self.opts.start_timeout} s")
            time.sleep(1.0)
        try:  # rule: a drafter that cannot be reloaded fails now, naming the version, not at the first swap
            if self.head_dir:
                self.swap(self.head_dir, record=False)
        except VllmEngineError as e:
            self.stop()
            raise VllmEngineError(f"vLLM {self.version} cannot reload its drafter in place ({e}); this needs the "
                                  f"vLLM of `{SETUP}` (0.32) or a newer one with layerwise reload") from None
        return self

    def rpc(self, method: str, *args: Any, timeout: float = 120.0) -> list[Any]:
        body = json.dumps({"method": method, "args": list(args), "timeout": timeout}).encode()
        req = urllib.request.Request(f"{self.url}/collective_rpc", data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout + 10) as r:
                return json.loads(r.read())["results"]
        except urllib.error.HTTPError as e:
            raise VllmEngineError(f"{method}: HTTP {e.code}: {e.read().decode(errors='replace')[-1000:]}") from None
        except urllib.error.URLError as e:
            raise VllmEngineError(f"{method}: {e.reason}") from None

    def check_head(self, head_dir: str | Path) -> None:
        """A head trained for other target weights is refused before vLLM sees it (same shapes would load)."""
        meta_path = Path(head_dir) / "draftpool.json"
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        theirs = meta.get("target_weights_sha256")
        if self.target_sha256 and theirs and theirs != self.target_sha256:
            raise VllmEngineError(f"{head_dir} was trained for target weights {theirs[:12]}, this engine serves "
                                  f"{self.target_sha256[:12]}: it is a head of another target")

    def swap(self, head_dir: str | Path, record: bool = True) -> dict[str, Any]:
        """Load the head folder into every worker's drafter (between engine steps); -> the swap's record."""
        self.check_head(head_dir)
        t0 = time.perf_counter()
        res = self.rpc("draftpool_load_drafter", str(head_dir))
        info = {"head": str(head_dir), "wall_s": time.perf_counter() - t0,
                "worker_s": max(r.get("seconds", 0.0) if isinstance(r, dict) else 0.0 for r in res)}
        if not all(isinstance(r, dict) and r.get("loaded") for r in res):
            raise VllmEngineError(f"drafter reload of {head_dir} failed: {res}")
        if record:
            self.swaps.append(info)
        return info

    def counters(self) -> dict[str, float]:
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=30) as r:
            return parse_counters(r.read().decode())

    def running(self) -> float:
        """vLLM's gauge of requests being decoded now (its continuous batch)."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=30) as r:
            return parse_counters(r.read().decode(), (RUNNING,), "")[RUNNING]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None
