"""The vLLM server handle of online adaptation (`online/vllm/engine.py`).

Fast tier: vLLM's Prometheus counters are parsed, the server command carries the drafter, draftpool's worker
extension and the engine settings, and a missing vLLM environment is one clear error naming the setup command.
Second tier (marker `vllm`, after `bash scripts/setup_vllm.sh`; the random pool of tests/vllm_pool.py): a real
`vllm serve` with a pool head, requests in flight while the other head is swapped in over HTTP, its counters, a
refused head, and the server's process group dying with the process that started it.
"""

from __future__ import annotations

import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from draftpool.config import ConfigError
from online.vllm.engine import COUNTERS, RUNNING, VllmEngine, VllmEngineError, VllmServeOptions, parse_counters
from tests.vllm_pool import random_pool, vllm_python  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[3]

METRICS = """# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 12.0
vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 3.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 48.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 20.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 9.0
vllm:spec_decode_num_drafts_created 1.7e9
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 1.0
vllm:num_requests_running_total{engine="0",model_name="m"} 99.0
"""


def test_counters_are_summed_over_engines_and_other_series_ignored():
    c = parse_counters(METRICS)
    assert c == {"vllm:spec_decode_num_drafts": 15.0, "vllm:spec_decode_num_draft_tokens": 48.0,
                 "vllm:spec_decode_num_accepted_tokens": 20.0}
    assert parse_counters("") == dict.fromkeys(COUNTERS, 0.0)


def test_a_gauge_is_read_under_its_own_name():
    assert parse_counters(METRICS, (RUNNING,), "") == {RUNNING: 4.0}


def test_the_server_command_carries_drafter_extension_and_settings(tmp_path):
    head = tmp_path / "sql-eagle3"  # the method is the folder's kind's (its draftpool.json)
    head.mkdir()
    (head / "draftpool.json").write_text('{"kind": "eagle3"}')
    eng = VllmEngine.__new__(VllmEngine)  # the command only; no environment needed
    eng.target_dir, eng.head_dir, eng.port, eng.served_name = "/t", str(head), 8123, "smol"
    eng.python = Path("/venv/bin/python")
    eng.opts = VllmServeOptions(k=3, max_num_seqs=6, tensor_parallel_size=2)
    cmd = eng.command()
    spec = json.loads(cmd[cmd.index("--speculative-config") + 1])
    assert spec == {"method": "eagle3", "model": str(head), "num_speculative_tokens": 3}
    assert cmd[cmd.index("--worker-extension-cls") + 1] == "online.vllm.reload.DrafterReload"
    assert cmd[cmd.index("--max-num-seqs") + 1] == "6" and cmd[cmd.index("--tensor-parallel-size") + 1] == "2"
    assert cmd[cmd.index("--model") + 1] == "/t" and "--enforce-eager" in cmd
    assert cmd[cmd.index("--served-model-name") + 1] == "smol"
    eng.head_dir = ""  # no head: plain decoding, the reference of the benchmarks
    assert "--speculative-config" not in eng.command()


def test_a_missing_vllm_environment_is_one_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no vLLM environment.*scripts/setup_vllm.sh"):
        VllmEngine("/t", "/h", VllmServeOptions(python=str(tmp_path / "python")), tmp_path / "log")


def test_a_head_of_another_target_is_refused_at_start_and_at_swap(tmp_path):
    head = tmp_path / "head"
    head.mkdir()
    (head / "draftpool.json").write_text(json.dumps({"kind": "eagle3", "target_weights_sha256": "b" * 64}))
    with pytest.raises(VllmEngineError, match="trained for target weights bbbbbbbbbbbb.*head of another target"):
        VllmEngine("/t", str(head), VllmServeOptions(), tmp_path / "log", target_sha256="a" * 64)
    eng = VllmEngine.__new__(VllmEngine)  # a running engine's swap: refused before any RPC
    eng.target_sha256 = "a" * 64
    with pytest.raises(VllmEngineError, match="head of another target"):
        eng.swap(head)
    eng.target_sha256 = "b" * 64
    eng.check_head(head)  # its own target's head passes


@pytest.mark.vllm
def test_a_running_server_swaps_its_drafter_with_requests_in_flight(target_info, target, vllm_python, random_pool,  # noqa: F811
                                                                      tmp_path):
    from data_gen.domains import domain_prompts
    from draftpool.chat import render_prompt

    a, b = random_pool.python, random_pool.sql  # two random heads: the check is of the swap, not of acceptance
    _, tok = target
    prompts = [render_prompt(tok, r["prompt"]) for r in domain_prompts("sql")["held_out"][:8]]
    eng = VllmEngine(target_info.path, str(a), VllmServeOptions(k=3, max_num_seqs=4), tmp_path / "vllm.log")
    try:
        eng.start()
        url = eng.url
        with ThreadPoolExecutor(4) as pool_:
            first = list(pool_.map(lambda p: complete(url, target_info.path, p, 32), prompts))
            c1 = eng.counters()
            running = [pool_.submit(complete, url, target_info.path, p, 32) for p in prompts]
            swap = eng.swap(b)  # requests in flight: the swap lands between two engine steps
            second = [f.result() for f in running]
        c2 = eng.counters()
        assert [c["token_ids"] for c in first] == [c["token_ids"] for c in second], "greedy output changed"
        assert all(c["prompt_token_ids"] == p for c, p in zip(first, prompts))
        assert c1["vllm:spec_decode_num_drafts"] > 0
        assert c2["vllm:spec_decode_num_drafts"] > c1["vllm:spec_decode_num_drafts"]
        assert eng.swaps == [swap] and swap["wall_s"] < 30
        with pytest.raises(VllmEngineError):
            eng.swap(tmp_path / "no-such-head")
        assert complete(url, target_info.path, prompts[0], 32)["token_ids"] == first[0]["token_ids"]
        print(f"swap {swap['wall_s'] * 1e3:.0f} ms (worker {swap['worker_s'] * 1e3:.0f} ms); counters {c2}")
    finally:
        eng.stop()
    assert eng.proc is None


def complete(url: str, model: str, ids: list[int], n: int) -> dict:
    """One greedy /v1/completions request on token ids, with vLLM's token ids returned."""
    body = json.dumps({"model": model, "prompt": ids, "max_tokens": n, "temperature": 0.0,
                       "return_token_ids": True}).encode()
    req = urllib.request.Request(f"{url}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())["choices"][0]


def test_serve_engine_vllm_settings_are_validated():
    from draftpool.config import load_config
    from online.config import RECIPE, AdaptConfig

    cfg = load_config(AdaptConfig, ROOT / RECIPE, ["serve.engine=vllm", "serve.http=127.0.0.1:0", "vllm.k=3",
                                                   "vllm.drafter=sql-eagle3"])
    assert (cfg.serve.engine, cfg.vllm.k, cfg.vllm.drafter) == ("vllm", 3, "sql-eagle3")
    assert load_config(AdaptConfig, ROOT / RECIPE, []).serve.engine == "draftpool"
    for bad in (["serve.engine=vllm"],  # no front-end address
                ["serve.engine=sglang", "serve.http=127.0.0.1:0"],
                ["serve.engine=vllm", "serve.http=127.0.0.1:0", "vllm.max_num_seqs=0"],
                ["serve.engine=vllm", "serve.http=127.0.0.1:0", "serve.temperature=0.7"]):
        with pytest.raises(ConfigError):
            load_config(AdaptConfig, ROOT / RECIPE, bad)


@pytest.mark.vllm
def test_the_server_dies_with_the_draftpool_process_that_started_it(target_info, vllm_python, tmp_path):  # noqa: F811
    """SIGKILL the process that owns a VllmEngine: its vLLM server (own process group: the front end and its engine
    process) must not outlive it. A plain server (no drafter): the check is the processes' lifetime, so it needs no
    pool."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    code = ("import sys, time\nfrom online.vllm.engine import VllmEngine, VllmServeOptions\n"
            f"e = VllmEngine({str(target_info.path)!r}, '', VllmServeOptions(), {str(tmp_path / 'l')!r})"
            ".start()\nprint(e.url, e.proc.pid, flush=True)\ntime.sleep(600)\n")
    owner = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    url, pid = owner.stdout.readline().split()
    with urllib.request.urlopen(f"{url}/health", timeout=10) as r:
        assert r.status == 200
    os.kill(owner.pid, signal.SIGKILL)  # no finally, no signal handler runs in the owner
    owner.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.killpg(int(pid), 0)  # the server's group: the server and vLLM's engine processes
        except ProcessLookupError:
            return
        time.sleep(1)
    os.killpg(int(pid), signal.SIGKILL)
    raise AssertionError("the vLLM server outlived the process that started it")
