"""Opt-in outside check (slow, not in CI): online adaptation attached to a running vLLM server.

    bash scripts/setup_vllm.sh && python build_pool.py
    python -m pytest -m slow tests/online/test_vllm_adapt.py

vLLM serves the target with the pool's python head as drafter; draftpool's front end forwards SQL requests, 4 in
flight, the trainer learns from the finished ones and its versions are loaded into vLLM's drafter while requests run.
The trainer is SIGKILLed half-way. Checks: every request answered (0 failed), versions swapped in, the engine's drafter
computes with the last version's tensors, the target's digest unchanged, and the greedy answers through every swap
equal the answers of the same prompts before any swap.
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

ROOT = Path(__file__).resolve().parents[2]


def ask(url: str, ids: list[int], n: int = 32) -> tuple[int, dict]:
    body = json.dumps({"model": "x", "prompt": ids, "max_tokens": n, "temperature": 0.0,
                       "return_token_ids": True}).encode()
    req = urllib.request.Request(f"{url}/v1/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, {}


@pytest.mark.slow
def test_vllm_attached_adaptation_swaps_versions_and_keeps_greedy_output(target_info, target, tmp_path):
    from data_gen.domains import domain_prompts
    from data_gen.generate import render_prompt
    from draftpool.pool import load_pool
    from online.process import ExportSpec, ProcessConfig
    from online.trainer import TrainerConfig
    from online.vllm_adapt import VllmAdapter, VllmProxy
    from online.vllm_engine import VllmEngine, VllmServeOptions

    model, tok = target
    pool = ROOT / "pools" / target_info.slug
    name = "python-eagle3"
    _, models = load_pool(pool, target_info, model, ["eagle3"])
    head = models[name][1]
    head_dir = pool / json.loads((pool / "pool.json").read_text())["drafters"][name]["path"]
    prompts = [render_prompt(tok, r["prompt"]) for r in domain_prompts("sql")["train"][:16]]
    engine = VllmEngine(target_info.path, str(head_dir), VllmServeOptions(k=3, max_num_seqs=4), tmp_path / "vllm.log",
                        served_name=target_info.name)
    engine.start()
    adapter = proxy = None
    try:
        digest = engine.rpc("draftpool_target_digest")[0]
        tcfg = TrainerConfig(updater="ogd", lr=1e-3, batch=2, holdout_every=0)
        adapter = VllmAdapter(engine, model, name, head, tcfg, ProcessConfig(threads=1, export_every=0),
                              ExportSpec(str(tmp_path / "export"), str(pool), target_info), 32,
                              tmp_path / "work").start()
        proxy = VllmProxy(engine, adapter).start()
        with ThreadPoolExecutor(4) as ex:
            first = list(ex.map(lambda p: ask(proxy.url, p), prompts[:8]))
            os.kill(adapter.handle.proc.pid, signal.SIGKILL)  # the trainer dies with requests about to run
            rest = list(ex.map(lambda p: ask(proxy.url, p), prompts[8:]))
            deadline = time.monotonic() + 300
            while not adapter.versions and time.monotonic() < deadline:
                time.sleep(1)
            again = list(ex.map(lambda p: ask(proxy.url, p), prompts[:8]))  # after the swaps
        bad = [(s, a) for s, a in first + rest + again if s != 200]
        assert not bad, f"{len(bad)} requests failed, e.g. {bad[0]}"
        assert adapter.served == 24 and proxy.failed == 0
        assert adapter.versions, "no version reached the engine"
        assert any("exited" in f["why"] for f in adapter.handle.faults) and adapter.handle.restarts >= 1
        assert [a["choices"][0]["token_ids"] for _, a in again] == [a["choices"][0]["token_ids"] for _, a in first]
        last = tmp_path / "work" / "heads" / f"v{adapter.versions[-1]['version']:06d}"
        check = engine.rpc("draftpool_check_drafter", str(last))[0]
        assert max(check["diffs"].values()) < 1e-3, check["diffs"]
        assert check["target_digest"] == digest, "the target's weights changed"
        swap_ms = [v["wall_s"] * 1e3 for v in adapter.versions]
        print(f"{len(adapter.versions)} versions swapped in, {min(swap_ms):.0f}-{max(swap_ms):.0f} ms each")
    finally:
        if proxy is not None:
            proxy.close()
        if adapter is not None:
            adapter.stop()
        engine.stop()
