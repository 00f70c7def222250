"""The trainer process on a tiny random target: it learns from served feedback, publishes versions the server swaps in,
exports pool versions; a killed, crashing or hung trainer is restarted (up to a limit) and no request fails."""

import time

import pytest
import torch

from draftpool.pool import load_eagle3, update_pool_manifest, write_eagle3
from draftpool.target import TargetInfo
from online.process import ExportSpec, ProcessConfig, TrainerHandle, latest_version
from online.server import AdaptiveServer, Request
from online.trainer import OnlineTrainer, TrainerConfig, trainable
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.loop import GREEDY, SpecDecoder
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import make_head, tiny_target

PROMPTS = [[5, 17, 33, 2], [9, 9, 40, 41, 7, 100], [3, 8], [60, 61, 62]]


@pytest.fixture(scope="module")
def target():
    return tiny_target()


@pytest.fixture(scope="module")
def plain_out(target):
    return [SpecDecoder(target, None, mode="plain").generate(p, 16)[0] for p in PROMPTS]


def tiny_pool(tmp_path, target):
    info = TargetInfo("tiny", "tiny", str(tmp_path), "0" * 64, 4, 64, 128, 256)
    pool = tmp_path / "pool"
    heads = {f"h{i}": make_head(target, s) for i, s in enumerate((1, 2))}
    for name, head in heads.items():
        write_eagle3(head, pool / name, info, {"kind": "eagle3", "target_weights_sha256": info.weights_sha256})
        update_pool_manifest(pool, info, name, {"kind": "eagle3", "path": name, "domain": "x"})
    return pool, info, heads


def start(tmp_path, target, tcfg=None, **pcfg):
    pool, info, heads = tiny_pool(tmp_path, target)
    tcfg = tcfg or TrainerConfig(lr=1e-2, batch=1, holdout_every=0, full_information=True)
    handle = TrainerHandle({n: ("eagle3", h) for n, h in heads.items()}, tcfg, ProcessConfig(**pcfg),
                           ExportSpec(str(tmp_path / "online"), str(pool), info))
    dec = SpecDecoder(target, {n: Eagle3Drafter(h) for n, h in heads.items()},
                      selector=Selector(make_learner("normal_hedge", 2), 2, 3), k=3)
    server = AdaptiveServer(dec, heads, handle, GREEDY, top_k=16)
    handle.start()
    return server, handle, heads, info


def serve_until(server, plain_out, cond, timeout=180.0, at_least=1):
    """Serve the prompts round-robin until cond() holds (and at least `at_least` requests); check every output."""
    t0, n = time.time(), 0
    while n < at_least or not cond():
        assert time.time() - t0 < timeout, "timed out waiting for the trainer"
        rec = server.serve(Request(f"r{n}", PROMPTS[n % len(PROMPTS)], 16))
        assert "error" not in rec, rec.get("traceback")
        assert rec["tokens"] == plain_out[n % len(PROMPTS)]
        n += 1
        if n > len(PROMPTS):
            time.sleep(0.05)  # the tiny target serves faster than a trainer round: let rounds finish
    return n


def test_trainer_learns_publishes_and_exports(tmp_path, target, plain_out):
    server, handle, heads, info = start(tmp_path, target, export_every=2)
    before = {n: {k: v.clone() for k, v in trainable(h).items()} for n, h in heads.items()}
    try:
        serve_until(server, plain_out, lambda: min(server.swap.versions().values()) >= 3)
    finally:
        handle.stop()
    assert server.failed == 0 and handle.faults == []
    for n, h in heads.items():  # the served modules hold trained weights, as published
        assert any(not torch.equal(before[n][k], v) for k, v in trainable(h).items())
    version, folder = latest_version(tmp_path / "online")
    assert version >= 3 and (folder / "pool.json").is_file()
    exported = load_eagle3(folder / "h0", info, heads["h0"].embed_tokens.weight)
    published = handle.boards["h0"].read(0)
    assert published[0] == version  # the stop exported the last published version
    diffs = {k: float((published[1][k] - v).abs().max()) for k, v in trainable(exported).items()}
    assert max(diffs.values()) == 0, diffs
    state = torch.load(folder / "trainer_state.pt", weights_only=False)
    fresh = OnlineTrainer({n: ("eagle3", h) for n, h in heads.items()}, TrainerConfig(full_information=True))
    fresh.load_state(state)  # a restarted online_adapt.py resumes the optimizer moments
    assert fresh.rounds == state["rounds"] >= 3


def test_killed_trainer_is_restarted_and_no_request_fails(tmp_path, target, plain_out):
    server, handle, heads, _ = start(tmp_path, target, max_restarts=2)
    try:
        serve_until(server, plain_out, lambda: handle.rounds_seen >= 2)
        handle.proc.kill()  # SIGKILL mid-run, from outside
        handle.proc.join(10)
        seen = handle.rounds_seen
        serve_until(server, plain_out, lambda: handle.rounds_seen >= seen + 2)  # the restarted trainer works
    finally:
        handle.stop()
    assert server.failed == 0
    assert [f["kind"] for f in handle.faults] == ["crash"] and handle.restarts == 1


def test_crash_limit_and_hang(tmp_path, target, plain_out):
    server, handle, _, _ = start(tmp_path / "crash", target, fault="crash_after:1", max_restarts=1)
    try:
        serve_until(server, plain_out, lambda: not handle.enabled)  # crash, restart, crash again: limit reached
        n = serve_until(server, plain_out, lambda: True, at_least=3)  # serving goes on with the last good weights
    finally:
        handle.stop()
    assert server.failed == 0 and n == 3 and [f["kind"] for f in handle.faults] == ["crash", "crash"]

    server, handle, _, _ = start(tmp_path / "hang", target, fault="hang_after:1", heartbeat_timeout=2.0,
                                 max_restarts=1)
    try:
        serve_until(server, plain_out, lambda: len(handle.faults) >= 1)
    finally:
        handle.stop()
    assert server.failed == 0 and handle.faults[0]["kind"] == "hang" and handle.restarts == 1


ORPHAN = """
import sys, time
import torch
from online.process import ProcessConfig, TrainerHandle
from online.trainer import TrainerConfig
from tests.stubs import make_head, tiny_target

if __name__ == "__main__":
    target = tiny_target()
    handle = TrainerHandle({"h": ("eagle3", make_head(target, 1))}, TrainerConfig(), ProcessConfig())
    handle.start()
    while not any(e["event"] == "started" for e in handle.poll()):
        time.sleep(0.1)
    print(handle.proc.pid, flush=True)
    time.sleep(600)
"""


def test_trainer_does_not_outlive_a_killed_server(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import psutil

    script = tmp_path / "server.py"
    script.write_text(ORPHAN)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)})
    trainer_pid = None
    try:
        trainer_pid = int(proc.stdout.readline())
        assert psutil.pid_exists(trainer_pid)
        os.kill(proc.pid, signal.SIGKILL)  # no cleanup runs in the server
        proc.wait(30)
        t0 = time.time()
        while time.time() - t0 < 30:
            try:
                if psutil.Process(trainer_pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the trainer process outlived the killed server by 30 s")
    finally:
        proc.kill()
        if trainer_pid is not None and psutil.pid_exists(trainer_pid):
            psutil.Process(trainer_pid).kill()


def test_a_restarted_trainer_continues_the_exported_optimizer_state(tmp_path, target, plain_out):
    tcfg = TrainerConfig(lr=1e-2, batch=1, holdout_every=0, full_information=True, optimizer="adam", epochs=2)
    server, handle, heads, _ = start(tmp_path, target, tcfg, export_every=1, max_restarts=1)
    try:
        serve_until(server, plain_out, lambda: len(handle.exports) >= 2)
        handle.proc.kill()
        handle.proc.join(10)
        _, folder = latest_version(tmp_path / "online")
        before = torch.load(folder / "trainer_state.pt", weights_only=False)
        serve_until(server, plain_out, lambda: len(handle.starts) >= 2)
        assert handle.starts[1]["rounds"] == before["rounds"] >= 2  # not a fresh trainer (0 rounds)
        n_exports = len(handle.exports)
        serve_until(server, plain_out, lambda: len(handle.exports) > n_exports)
    finally:
        handle.stop()
    assert handle.restarts == 1 and server.failed == 0
    _, folder = latest_version(tmp_path / "online")
    after = torch.load(folder / "trainer_state.pt", weights_only=False)
    for name in heads:
        # Adam's step count went on from the exported one: 2 epochs per round over every round since the start
        steps = {int(s["step"]) for s in after["updaters"][name]["opt"]["state"].values()}
        assert steps == {2 * after["rounds"]} and after["rounds"] > before["rounds"]


def test_a_trainer_that_died_since_the_last_poll_is_a_fault_at_stop(tmp_path, target, plain_out):
    # e.g. a trainer that dies on the last request's round: no poll comes after it, only the stop
    server, handle, _, _ = start(tmp_path, target, fault="crash_after:1", max_restarts=3)
    serve_until(server, plain_out, lambda: True, at_least=1)
    handle.feedback.flush()
    handle.proc.join(120)
    assert not handle.proc.is_alive()
    handle.stop()
    assert [f["kind"] for f in handle.faults] == ["crash"] and "exited with code" in handle.faults[0]["why"]
    assert latest_version(tmp_path / "online") is None  # nothing exported by a dead trainer


def test_a_version_of_one_head_of_the_pool_is_a_loadable_pool_of_that_head(tmp_path, target):
    from draftpool.pool import load_pool
    from online.process import export_pool

    pool, info, heads = tiny_pool(tmp_path, target)  # two heads; vLLM mode adapts one of them
    params = {"h1": {k: v + 0.5 for k, v in trainable(heads["h1"]).items()}}
    folder = export_pool(ExportSpec(str(tmp_path / "online"), str(pool), info), 3, {"h1": ("eagle3", heads["h1"])},
                         params, {"rounds": 1}, {})
    names, models = load_pool(folder, info, target)
    assert names == ["h1"] and latest_version(tmp_path / "online") == (3, folder)
    assert torch.equal(models["h1"][1].fc.weight, params["h1"]["fc.weight"])
