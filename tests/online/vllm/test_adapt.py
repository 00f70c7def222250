"""Outside check (CI's second tier, marker `vllm`, after `bash scripts/setup_vllm.sh`): online adaptation attached to
a running vLLM server.

vLLM serves the target with the random test pool's python head as drafter (tests/vllm_pool.py: the checks are of the
swaps, the trainer's life and the answers, not of acceptance); draftpool's front end forwards SQL requests, 4 in
flight, the trainer learns from the finished ones and its versions are loaded into vLLM's drafter while requests run.
The trainer is SIGKILLed half-way. Checks: every request answered (0 failed), versions swapped in, the engine's drafter
computes with the last version's tensors, the target's digest unchanged, and the greedy answers through every swap
equal the answers of the same prompts before any swap; a streamed request gets the same ids and reaches the trainer.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.vllm_pool import random_pool, vllm_python  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[3]


def ask(url: str, ids: list[int], n: int = 32) -> tuple[int, dict]:
    body = json.dumps({"model": "x", "prompt": ids, "max_tokens": n, "temperature": 0.0,
                       "return_token_ids": True}).encode()
    req = urllib.request.Request(f"{url}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, {}


def ask_stream(url: str, ids: list[int], n: int = 32) -> list[int]:
    """A streamed request through the proxy: the token ids gathered from its events."""
    body = json.dumps({"model": "x", "prompt": ids, "max_tokens": n, "temperature": 0.0, "stream": True,
                       "return_token_ids": True}).encode()
    req = urllib.request.Request(f"{url}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        raw = r.read().decode()
    chunks = [json.loads(x[5:]) for x in raw.split("\n\n") if x.startswith("data:") and "[DONE]" not in x]
    return [t for c in chunks for ch in c["choices"] for t in (ch.get("token_ids") or [])]


@pytest.mark.vllm
def test_vllm_attached_adaptation_swaps_versions_and_keeps_greedy_output(target_info, target, vllm_python,  # noqa: F811
                                                                         random_pool, tmp_path):  # noqa: F811
    from data_gen.domains import domain_prompts
    from draftpool.chat import render_prompt
    from draftpool.pool import load_members
    from online.trainer.config import ProcessConfig, TrainerConfig
    from online.trainer.process import TrainerHandle
    from online.trainer.versions import ExportSpec
    from online.vllm.adapt import VllmAdapter, VllmProxy, shut_down
    from online.vllm.engine import VllmEngine, VllmServeOptions

    model, tok = target
    pool = random_pool.pool
    name = "python-eagle3"
    member = {m.name: m for m in load_members(pool, target_info, model, ["eagle3"])}[name]
    head_dir = random_pool.python
    prompts = [render_prompt(tok, r["prompt"]) for r in domain_prompts("sql")["train"][:16]]
    engine = VllmEngine(target_info.path, str(head_dir), VllmServeOptions(k=3, max_num_seqs=4), tmp_path / "vllm.log",
                        served_name=target_info.name)
    engine.start()
    adapter = proxy = None
    try:
        digest = engine.rpc("draftpool_target_digest")[0]
        tcfg = TrainerConfig(updater="ogd", lr=1e-3, batch=2, holdout_every=0)
        handle = TrainerHandle([member], tcfg, ProcessConfig(threads=1, export_every=0),
                               ExportSpec(str(tmp_path / "export"), str(pool), target_info))
        adapter = VllmAdapter(engine, model, member, handle, 32, tmp_path / "work").start()
        proxy = VllmProxy(engine, adapter).start()
        with ThreadPoolExecutor(4) as ex:
            first = list(ex.map(lambda p: ask(proxy.url, p), prompts[:8]))
            os.kill(adapter.handle.proc.pid, signal.SIGKILL)  # the trainer dies with requests about to run
            rest = list(ex.map(lambda p: ask(proxy.url, p), prompts[8:]))
            deadline = time.monotonic() + 300
            while not adapter.versions and time.monotonic() < deadline:
                time.sleep(1)
            again = list(ex.map(lambda p: ask(proxy.url, p), prompts[:8]))  # after the swaps
        streamed = ask_stream(proxy.url, prompts[0])  # a streamed answer: the same ids, reported to the trainer
        bad = [(s, a) for s, a in first + rest + again if s != 200]
        assert not bad, f"{len(bad)} requests failed, e.g. {bad[0]}"
        assert streamed == first[0][1]["choices"][0]["token_ids"]
        assert adapter.served == proxy.finished == 25 and proxy.failed == 0
        assert adapter.versions, "no version reached the engine"
        assert any("exited" in f["why"] for f in adapter.handle.faults) and adapter.handle.restarts >= 1
        assert [a["choices"][0]["token_ids"] for _, a in again] == [a["choices"][0]["token_ids"] for _, a in first]
        adapter.stop()  # no swap may land between reading the last version and checking the engine against it
        versions, adapter = adapter.versions, None
        last = tmp_path / "work" / "heads" / f"v{versions[-1]['version']:06d}"
        check = engine.rpc("draftpool_check_drafter", str(last))[0]
        assert max(check["diffs"].values()) < 1e-3, check["diffs"]
        assert check["target_digest"] == digest, "the target's weights changed"
        swap_ms = [v["wall_s"] * 1e3 for v in versions]
        print(f"{len(versions)} versions swapped in, {min(swap_ms):.0f}-{max(swap_ms):.0f} ms each")
    finally:
        shut_down(proxy, adapter, engine)


@pytest.mark.vllm
def test_online_adapt_with_vllm_exports_at_stop_and_a_restart_serves_that_version(target_info, target,
                                                                                  vllm_python, random_pool,  # noqa: F811
                                                                                  tmp_path):
    """`online_adapt.py serve.engine=vllm` end to end: requests through its front end, SIGTERM (the version is
    exported), a restart on the same out_dir serves the exported head and numbers its versions after it."""
    import socket
    import subprocess
    import sys

    from data_gen.domains import domain_prompts
    from draftpool.chat import render_prompt

    _, tok = target
    prompts = [render_prompt(tok, r["prompt"]) for r in domain_prompts("sql")["train"][:8]]
    out = tmp_path / "online"

    def serve() -> tuple[subprocess.Popen, str]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cmd = [sys.executable, str(ROOT / "online_adapt.py"), "serve.engine=vllm", f"serve.http=127.0.0.1:{port}",
               f"serve.pool={random_pool.pool}", "vllm.drafter=python-eagle3", "vllm.k=3", "vllm.max_num_seqs=4",
               f"serve.out_dir={out}", "trainer.batch=2", "trainer.holdout_every=0", "process.export_every=0"]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 600
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5):
                    return proc, url
            except OSError:
                time.sleep(2)
        proc.kill()
        raise AssertionError("online_adapt did not serve within 600 s")

    def stop(proc: subprocess.Popen) -> tuple[dict, str]:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr[-3000:]
        return json.loads(stdout[stdout.index("{"):]), stderr

    proc, url = serve()
    with ThreadPoolExecutor(4) as ex:
        first = list(ex.map(lambda p: ask(url, p), prompts))
    time.sleep(20)  # the trainer's rounds on the last records
    summary, _ = stop(proc)
    assert all(s == 200 for s, _ in first) and summary["failed"] == 0 and summary["served"] == 8
    assert summary["vllm"]["served_version"] == 0 and summary["exports"], summary
    latest = json.loads((out / "latest.json").read_text())
    assert json.loads((out / latest["path"] / "pool.json").read_text())["drafters"].keys() == {"python-eagle3"}

    proc, url = serve()  # the restart serves the exported head
    again = [ask(url, p) for p in prompts[:2]]
    summary, stderr = stop(proc)
    assert f"resuming from exported pool version {latest['version']}" in stderr
    assert summary["vllm"]["served_version"] == latest["version"] and summary["failed"] == 0
    assert [a["choices"][0]["token_ids"] for _, a in again] == [a["choices"][0]["token_ids"] for _, a in first[:2]]
