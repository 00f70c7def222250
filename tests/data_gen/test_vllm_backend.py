"""The vLLM backend of self-distillation (`data_gen.backend=vllm`).

Fast tier (no vLLM needed): the backend key and engine settings are validated, a missing vLLM environment, an
environment without vLLM and a too-old vLLM are each one clear error that writes nothing, the worker's answer
convention matches the HF backend's, and the stop ids read from the target folder equal the loaded model's.
Second tier (marker `vllm`, after `bash scripts/setup_vllm.sh`): the real vLLM worker writes the same shards as the HF
backend (columns, ids, stop convention, provenance), greedy answers compared with HF's, and a run killed after its
first shard resumes without regenerating it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from data_gen.generate import is_complete, load_distilled, run
from data_gen.plan import DataGenConfig
from data_gen.vllm_worker import groups, respond
from draftpool.chat import stop_token_ids
from draftpool.config import ConfigError, load_config
from draftpool.target import DEFAULT_TARGET
from tests.vllm_pool import VLLM_PROCESSES, vllm_python  # noqa: F401 - the vLLM environment's fixture

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "sql" / "data_gen.yaml"
TINY = ["max_prompts_per_split=5", "max_new_tokens=24", "batch_size=4", "shard_size=3",
        "train_temperatures=[0.0,0.7]", "held_out_temperatures=[0.0]", "samples_per_prompt=0", "top_p=1.0",
        "system_prompt=", "device=cpu", "seed=0", f"target={DEFAULT_TARGET}"]


def make_cfg(data_dir: Path, *extra: str) -> DataGenConfig:
    return load_config(DataGenConfig, RECIPE, [f"data_dir={data_dir}", *TINY, *extra, "domain=sql"])


def test_backend_and_engine_settings_are_validated(tmp_path):
    assert make_cfg(tmp_path).backend == "auto"  # engine where the lean forward reproduces the target, else hf
    cfg = make_cfg(tmp_path, "backend=vllm", "vllm.max_num_seqs=8", "vllm.tensor_parallel_size=2")
    assert (cfg.backend, cfg.vllm.max_num_seqs, cfg.vllm.tensor_parallel_size) == ("vllm", 8, 2)
    for bad in ("backend=sglang", "vllm.max_num_seqs=0", "vllm.gpu_memory_utilization=1.5",
                "vllm.enforce_eager=maybe"):
        with pytest.raises(ConfigError):
            make_cfg(tmp_path, bad)


def test_a_missing_vllm_environment_is_one_clear_error_and_writes_nothing(tmp_path, target_info):
    data_dir = tmp_path / "d"
    with pytest.raises(ConfigError, match="scripts/setup_vllm.sh") as e:
        run(make_cfg(data_dir, "backend=vllm", f"vllm.python={tmp_path / 'no-such-env' / 'python'}"), target_info)
    assert "no vLLM environment" in str(e.value)
    # an environment without vLLM (draftpool's own)
    with pytest.raises(ConfigError, match="has no vllm installed.*scripts/setup_vllm.sh"):
        run(make_cfg(data_dir, "backend=vllm", f"vllm.python={sys.executable}"), target_info)
    assert not data_dir.exists()


def test_a_too_old_vllm_is_refused_by_version(tmp_path, target_info):
    # a real interpreter that sees the package metadata of an old vLLM
    site = tmp_path / "site"
    (site / "vllm-0.10.1.dist-info").mkdir(parents=True)
    (site / "vllm-0.10.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.10.1\n")
    py = tmp_path / "python"
    py.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    py.chmod(0o755)
    data_dir = tmp_path / "d"
    with pytest.raises(ConfigError, match="vLLM 0.10.1 .* older than 0.32"):
        run(make_cfg(data_dir, "backend=vllm", f"vllm.python={py}"), target_info)
    assert not data_dir.exists()


def test_the_worker_answers_with_the_hf_backends_convention():
    stops = [2, 7]
    assert respond([5, 6, 2], "stop", None, stops) == ([5, 6, 2], True)  # stop token kept, last
    assert respond([5, 6, 7, 9], "stop", 7, stops) == ([5, 6, 7], True)  # nothing after the stop token
    assert respond([5, 6], "stop", 7, stops) == ([5, 6, 7], True)  # a stop token vLLM left out is put back
    assert respond([5, 6], "stop", None, stops) == ([5, 6, 2], True)  # its EOS (None): the first stop id
    assert respond([5, 6, 8], "length", None, stops) == ([5, 6, 8], False)  # cut by the length limit


def test_shards_reach_the_engine_in_groups_of_twice_its_batch():
    shards = [{"name": str(i), "prompts": [[1]] * n} for i, n in enumerate([3, 3, 3, 2])]
    names = lambda gs: [[s["name"] for s in g] for g in gs]  # noqa: E731
    assert names(groups(shards, 4)) == [["0", "1"], ["2", "3"]]
    assert names(groups(shards, 100)) == [["0", "1", "2", "3"]] and names(groups(shards, 1)) == [["0"], ["1"],
                                                                                                  ["2"], ["3"]]


def test_stop_ids_from_the_folder_equal_the_models(target_info, target):
    model, tok = target
    assert stop_token_ids(tok, path=target_info.path) == stop_token_ids(tok, model)


# ---------------------------------------------------------------------------------- second tier, real vLLM
@pytest.mark.vllm
def test_vllm_backend_writes_the_hf_backends_shards(tmp_path, target_info, target, vllm_python, monkeypatch):  # noqa: F811
    model, tok = target
    monkeypatch.chdir(tmp_path)  # a relative data_dir, as recipes give it
    hf_dir, vl_dir = Path("hf"), Path("vllm")
    run(make_cfg(hf_dir, "backend=hf"), target_info, model, tok)  # the reference backend (auto: the engine)
    run(make_cfg(vl_dir, "backend=vllm", "vllm.max_num_seqs=4"), target_info)
    hf, vl = ({r["id"]: r for r in load_distilled(d).to_list()} for d in (hf_dir, vl_dir))
    assert set(hf) == set(vl) and len(vl) == 15
    assert set(load_distilled(vl_dir).column_names) == set(load_distilled(hf_dir).column_names)
    stops = stop_token_ids(tok, model)
    for rid, r in vl.items():
        h = hf[rid]
        assert {k: r[k] for k in ("prompt_id", "split", "temperature", "seed", "prompt_ids")} == \
            {k: h[k] for k in ("prompt_id", "split", "temperature", "seed", "prompt_ids")}
        assert 1 <= len(r["response_ids"]) <= 24 and r["finished"] == (r["response_ids"][-1] in stops)
        assert not any(t in stops for t in r["response_ids"][:-1])
        assert r["response"] == tok.decode(r["response_ids"], skip_special_tokens=True)
    prov = json.loads((vl_dir / "provenance.json").read_text())
    assert prov["backend"] == "vllm" and prov["vllm_version"].startswith("0.")
    assert json.loads((hf_dir / "provenance.json").read_text())["backend"] == "hf"
    greedy = [rid for rid in vl if vl[rid]["temperature"] == 0.0]
    same = sum(vl[rid]["response_ids"] == hf[rid]["response_ids"] for rid in greedy)
    print(f"greedy answers identical token for token: {same}/{len(greedy)}")
    # the two backends' data do not mix in one folder
    with pytest.raises(ConfigError, match="backend"):
        run(make_cfg(hf_dir, "backend=vllm", "max_prompts_per_split=6"), target_info)
    log = [json.loads(line) for line in (vl_dir / "runs.jsonl").read_text().splitlines()]
    assert log[-1]["backend"] == "vllm" and log[-1]["samples"] == 15 and log[-1]["new_tokens"] > 0


def alive_in_group(group: int) -> list[int]:
    """The processes of a process group that still run (a killed one waiting to be reaped does not)."""
    left = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == group and p.status() != psutil.STATUS_ZOMBIE:
                left.append(p.pid)
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass
    return left


@pytest.mark.vllm
def test_vllm_backend_resumes_after_a_kill(tmp_path, target_info, vllm_python):  # noqa: F811
    data_dir = tmp_path / "d"
    args = [f"data_dir={data_dir}", *TINY, "backend=vllm", "vllm.max_num_seqs=2"]
    cmd = [sys.executable, "-m", "data_gen.generate", "--domain", "sql", *args]
    # the killed run in vLLM's own process layout (worker, engine core and its worker): none may outlive the kill
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1", **VLLM_PROCESSES},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shard_dir = data_dir / "shards"
    deadline = time.monotonic() + 600
    while not list(shard_dir.glob("*.parquet")):
        assert proc.poll() is None, f"generator exited early (rc {proc.returncode})"
        assert time.monotonic() < deadline, "no shard written within 600 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    group = int((data_dir / "vllm_work" / "worker.pid").read_text())
    # the worker notices its parent is gone (it polls each second) and kills its group: seconds on a loaded machine
    deadline = time.monotonic() + 60
    while (left := alive_in_group(group)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"the killed run's vLLM worker or engine processes are still running: {left}"
    survivors = {p.name: p.stat().st_mtime_ns for p in shard_dir.glob("*.parquet")}
    assert 1 <= len(survivors) < 6 and not is_complete(data_dir)
    run(make_cfg(data_dir, "backend=vllm", "vllm.max_num_seqs=2"), target_info)
    assert is_complete(data_dir)
    for name, mtime in survivors.items():
        assert (shard_dir / name).stat().st_mtime_ns == mtime, f"{name} was regenerated"
    ids = [r["id"] for r in load_distilled(data_dir).to_list()]
    assert len(ids) == len(set(ids)) == 15
