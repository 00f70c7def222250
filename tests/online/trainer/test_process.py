"""The trainer process on a tiny random target: it learns from served feedback, publishes versions the server swaps in,
exports pool versions; a killed, crashing or hung trainer is restarted (up to a limit) and no request fails.

Every test that starts a trainer process is in the second tier (multi-process: the trainer lowers its own priority,
so beside busy test workers it waits for the cores); the fast tier keeps the checks of what a trainer writes and
reads (versions, latest.json, the trainer state)."""

import json
import os
import time

import pytest
import torch

from draftpool.models.eagle3 import load_eagle3, write_eagle3
from draftpool.pool import Member, update_pool_manifest
from draftpool.target import TargetInfo
from online.serve.request import Request
from online.serve.server import AdaptiveServer
from online.trainer.config import ProcessConfig, TrainerConfig
from online.trainer.process import TrainerHandle
from online.trainer.token_trainer import OnlineTrainer, trainable
from online.trainer.versions import ExportSpec, latest_version
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.hooks import Hooks
from specsel.decoding.loop import GREEDY, SpecDecoder
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.online.faults import CrashAtStart, CrashInRound, HangInRound
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


def start(tmp_path, target, tcfg=None, factory=None, **pcfg):
    """factory: a faulty trainer factory (tests/online/faults.py), or None for the real trainer."""
    pool, info, heads = tiny_pool(tmp_path, target)
    tcfg = tcfg or TrainerConfig(lr=1e-2, batch=1, holdout_every=0, full_information=True)
    handle = TrainerHandle([Member(n, "eagle3", h) for n, h in heads.items()], tcfg, ProcessConfig(**pcfg),
                           ExportSpec(str(tmp_path / "online"), str(pool), info),
                           **({"trainer_factory": factory} if factory is not None else {}))
    dec = SpecDecoder(target, {n: Eagle3Drafter(h) for n, h in heads.items()},
                      selector=Selector(make_learner("normal_hedge", 2), 2, 3), k=3)
    server = AdaptiveServer(dec, heads, handle, GREEDY, feedback_top_k=16)
    handle.start()
    return server, handle, heads, info


def serve_until(server, plain_out, cond, timeout=180.0, at_least=1, gap=0.05):
    """Serve the prompts round-robin until cond() holds (and at least `at_least` requests); check every output.
    gap: seconds idle between requests once every prompt was served once."""
    t0, n = time.time(), 0
    while n < at_least or not cond():
        assert time.time() - t0 < timeout, "timed out waiting for the trainer"
        rec = server.serve(Request(f"r{n}", PROMPTS[n % len(PROMPTS)], 16))
        assert rec.ok, rec.traceback
        assert rec.tokens == plain_out[n % len(PROMPTS)]
        n += 1
        if n > len(PROMPTS) and gap:
            time.sleep(gap)  # the tiny target serves faster than a trainer round: let rounds finish
    return n


@pytest.mark.tier2
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
    fresh = OnlineTrainer([Member(n, "eagle3", h) for n, h in heads.items()], TrainerConfig(full_information=True))
    fresh.load_state(state)  # a restarted online_adapt.py resumes the optimizer moments
    assert fresh.rounds == state["rounds"] >= 3


@pytest.mark.tier2
def test_a_seeded_sampled_request_gives_the_same_text_with_adaptation_on(tmp_path, target, plain_out):
    """A request whose client chose the seed is sampled keyed by (seed, position): the same text before and after the
    trainer swapped new weights into every head, and equal to plain keyed sampling (issue 53, 6a)."""
    from draftpool.forward.sampling import SamplingParams

    params = SamplingParams(0.9, top_p=0.95)
    want = SpecDecoder(target, None, mode="plain").generate(PROMPTS[0], 16, params, seed=5, keyed=True)[0]
    server, handle, heads, _ = start(tmp_path, target)
    try:
        first = server.serve(Request("s0", PROMPTS[0], 16, params=params, seed=5, keyed=True))
        at = dict(server.swap.versions())
        serve_until(server, plain_out, lambda: all(v > at[n] for n, v in server.swap.versions().items()))
        again = server.serve(Request("s1", PROMPTS[0], 16, params=params, seed=5, keyed=True))
    finally:
        handle.stop()
    assert first.ok and again.ok and first.tokens == again.tokens == want
    assert first.versions_at_start != again.versions_at_start  # the heads that drafted it differ


@pytest.mark.tier2
def test_a_round_waits_for_batch_records_and_the_stop_trains_the_rest(tmp_path, target, plain_out):
    """trainer.batch is the records per round: a trainer idle between requests does not train on fewer (rounds of
    one record each made many small noisy updates and let the guard judge them on a single request); at the stop the
    records left over get one short round."""
    tcfg = TrainerConfig(lr=1e-2, batch=3, holdout_every=0, full_information=True)
    server, handle, _, _ = start(tmp_path, target, tcfg=tcfg)
    try:
        serve_until(server, plain_out, lambda: True, at_least=2)
        t0 = time.time()
        while time.time() - t0 < 4:  # the trainer has started and holds 2 records
            handle.poll()
            time.sleep(0.1)
        assert handle.starts and handle.rounds_seen == 0
        serve_until(server, plain_out, lambda: handle.poll() is not None and handle.rounds_seen >= 1, at_least=2)
        assert handle.last_round["records"] == 3  # the first round took 3 records, not the 1 or 2 it had earlier
    finally:
        handle.stop()
    assert handle.rounds_seen >= 2 and handle.last_round["records"] > 3 and handle.faults == []


@pytest.mark.tier2
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


@pytest.mark.tier2
def test_crash_limit_and_hang(tmp_path, target, plain_out):
    # a real trainer process that exits in its second round, every time (tests/online/faults.py)
    server, handle, _, _ = start(tmp_path / "crash", target, factory=CrashInRound(2), max_restarts=1)
    try:
        serve_until(server, plain_out, lambda: not handle.enabled)  # crash, restart, crash again: limit reached
        n = serve_until(server, plain_out, lambda: True, at_least=3)  # serving goes on with the last good weights
    finally:
        handle.stop()
    assert server.failed == 0 and n == 3 and [f["kind"] for f in handle.faults] == ["crash", "crash"]

    server, handle, _, _ = start(tmp_path / "hang", target, factory=HangInRound(2), heartbeat_timeout=2.0,
                                 max_restarts=1)
    try:
        serve_until(server, plain_out, lambda: len(handle.faults) >= 1)
    finally:
        handle.stop()
    assert server.failed == 0 and handle.faults[0]["kind"] == "hang" and handle.restarts == 1


ORPHAN = """
import sys, time
import torch
from draftpool.pool import Member
from online.trainer.config import ProcessConfig, TrainerConfig
from online.trainer.process import TrainerHandle
from tests.stubs import make_head, tiny_target

if __name__ == "__main__":
    target = tiny_target()
    handle = TrainerHandle([Member("h", "eagle3", make_head(target, 1))], TrainerConfig(), ProcessConfig())
    handle.start()
    while not any(e["event"] == "started" for e in handle.poll()):
        time.sleep(0.1)
    print(handle.proc.pid, flush=True)
    time.sleep(600)
"""


@pytest.mark.tier2
def test_trainer_does_not_outlive_a_killed_server(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import psutil

    script = tmp_path / "server.py"
    script.write_text(ORPHAN)
    root = Path(__file__).resolve().parents[3]
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


@pytest.mark.tier2
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


@pytest.mark.tier2
def test_a_trainer_that_died_since_the_last_poll_is_a_fault_at_stop(tmp_path, target, plain_out):
    # e.g. a trainer that dies on the last request's round: no poll comes after it, only the stop
    server, handle, _, _ = start(tmp_path, target, factory=CrashInRound(1), max_restarts=3)
    serve_until(server, plain_out, lambda: True, at_least=1)
    handle.feedback.flush()
    handle.proc.join(120)
    assert not handle.proc.is_alive()
    handle.stop()
    assert [f["kind"] for f in handle.faults] == ["crash"] and "exited with code" in handle.faults[0]["why"]
    assert latest_version(tmp_path / "online") is None  # nothing exported by a dead trainer


def test_a_version_of_one_head_of_the_pool_is_a_loadable_pool_of_that_head(tmp_path, target):
    from draftpool.pool import load_members
    from online.trainer.versions import export_pool

    pool, info, heads = tiny_pool(tmp_path, target)  # two heads; vLLM mode adapts one of them
    params = {"h1": {k: v + 0.5 for k, v in trainable(heads["h1"]).items()}}
    folder = export_pool(ExportSpec(str(tmp_path / "online"), str(pool), info), 3,
                         [Member("h1", "eagle3", heads["h1"])], params, {"rounds": 1}, {})
    [member] = load_members(folder, info, target)
    assert member.name == "h1" and latest_version(tmp_path / "online") == (3, folder)
    assert torch.equal(member.module.fc.weight, params["h1"]["fc.weight"])


# --- hostile-client probe: a resumed out_dir, poison records, stop signals, the stop's hand-over ---------------------
def _version_folder(root, name="v000001"):
    folder = root / "versions" / name
    folder.mkdir(parents=True)
    (folder / "pool.json").write_text("{}")
    return folder


@pytest.mark.parametrize("latest", [
    '{"version": 1, "path": "../elsewhere"}', '{"version": 1, "path": "ABS"}', '{"version": 1, "path": "v000001"}',
    '{"version": 1, "path": "versions/v000001/../../../elsewhere"}', '{"version": "1", "path": "versions/v000001"}',
    '{"version": 2, "path": "versions/v000001"}', '["versions/v000001"]', '{"version": 1', '{"version": 1}',
    'SYMLINK'])
def test_latest_json_must_name_a_version_inside_out_dir(tmp_path, latest):
    out = tmp_path / "online"
    _version_folder(out)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "pool.json").write_text("{}")
    if latest == "SYMLINK":  # versions/v000002 -> a folder outside out_dir
        (out / "versions" / "v000002").symlink_to(tmp_path / "elsewhere")
        latest = '{"version": 2, "path": "versions/v000002"}'
    (out / "latest.json").write_text(latest.replace("ABS", str(tmp_path / "elsewhere")))
    with pytest.raises(ValueError, match="latest.json") as e:
        latest_version(out)
    assert "\n" not in str(e.value)
    (out / "latest.json").write_text('{"version": 1, "path": "versions/v000001"}')
    assert latest_version(out) == (1, out / "versions" / "v000001")


class _Marker:
    """Unpickling it creates a file: what a crafted trainer_state.pt could run instead."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_crafted_trainer_state_is_refused_and_runs_nothing(tmp_path, target):
    out = tmp_path / "online"
    folder = _version_folder(out)
    (out / "latest.json").write_text('{"version": 1, "path": "versions/v000001"}')
    marker = tmp_path / "marker"
    torch.save({"published": {}, "rounds": 1, "updaters": _Marker(marker)}, folder / "trainer_state.pt")
    # a restart after a crash takes the served weights instead (and says why)
    _, info, heads = tiny_pool(tmp_path, target)
    handle = TrainerHandle([Member(n, "eagle3", h) for n, h in heads.items()], TrainerConfig(), ProcessConfig(),
                           ExportSpec(str(out), str(tmp_path / "pool"), info))
    state, source = handle.restart_state()
    assert not marker.exists() and state is None and "unusable" in source
    from online.trainer.versions import load_trainer_state

    with pytest.raises(ValueError, match="not a safe trainer state") as e:
        load_trainer_state(folder / "trainer_state.pt")
    assert "\n" not in str(e.value) and not marker.exists()
    (folder / "trainer_state.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a safe trainer state"):
        load_trainer_state(folder / "trainer_state.pt")


def _poison(prompt_len=4):
    """A record whose round raises for real: aux features of the wrong width (the head's fc cannot read them)."""
    from online.trainer.feedback import Feedback, TopK

    tokens = torch.tensor([5, 17, 33, 2, 9, 9, 40])
    n = len(tokens) - prompt_len
    top = TopK(torch.full((n, 16), -3.0), torch.zeros(n, 16, dtype=torch.long))
    return Feedback("poison", tokens, prompt_len, top, feats=torch.zeros(len(tokens) - 1, 7))


@pytest.mark.parametrize("holdout_every", [0, 2])
@pytest.mark.tier2
def test_a_poison_record_is_skipped_not_a_crash(tmp_path, target, plain_out, holdout_every):
    tcfg = TrainerConfig(lr=1e-2, batch=4, holdout_every=holdout_every, full_information=True)
    server, handle, _, _ = start(tmp_path, target, tcfg, max_restarts=3)
    try:
        serve_until(server, plain_out, lambda: handle.rounds_seen >= 1)
        for _ in range(2):  # twice: the second may land on a held-out slot (holdout_every=2)
            handle.submit(_poison())
        seen = handle.rounds_seen
        serve_until(server, plain_out, lambda: handle.faults or handle.rounds_seen >= seen + 3)
        assert handle.restarts == 0 and handle.faults == []  # the poison did not take the trainer down
        serve_until(server, plain_out, lambda: handle.skipped >= 2)
        seen = handle.rounds_seen
        serve_until(server, plain_out, lambda: handle.rounds_seen >= seen + 2)  # good records still train
    finally:
        handle.stop()
    assert handle.restarts == 0 and handle.faults == [] and server.failed == 0
    assert handle.skipped == 2  # the poison records only: nothing of them stayed to fail later rounds
    assert handle.lost is None and handle.exports  # the stop exported the adapted pool


@pytest.mark.tier2
def test_serving_begins_once_the_trainer_has_started(tmp_path, target):
    server, handle, _, _ = start(tmp_path, target)
    try:
        assert float(handle.heartbeat[0]) == 0.0  # its imports and heads take seconds: not beating yet
        waited = handle.wait_ready(timeout=120)
        assert float(handle.heartbeat[0]) > 0.0 and handle.proc.is_alive() and 0.0 < waited < 120
    finally:
        handle.stop()
    assert handle.faults == [] and handle.lost is None


@pytest.mark.tier2
def test_waiting_for_a_trainer_that_dies_at_its_start_ends_with_it(tmp_path, target):
    server, handle, _, _ = start(tmp_path, target, factory=CrashAtStart(), max_restarts=0)
    try:
        assert handle.wait_ready(timeout=120) < 100
        assert not handle.proc.is_alive() and float(handle.heartbeat[0]) == 0.0
        handle.poll()
        assert [f["kind"] for f in handle.faults] == ["crash"]
        assert server.serve(Request("r", PROMPTS[0], 16)).ok  # serving goes on without adaptation
    finally:
        handle.stop()


@pytest.mark.tier2
def test_the_trainer_ignores_stop_signals_from_its_start(tmp_path, target):
    import signal

    server, handle, _, _ = start(tmp_path, target)
    try:
        os.kill(handle.proc.pid, signal.SIGINT)  # during its spawn start-up (imports): a Ctrl-C to the group
        time.sleep(1.0)
        os.kill(handle.proc.pid, signal.SIGTERM)
        t0 = time.time()
        while not handle.starts and time.time() - t0 < 120:
            handle.poll()
            time.sleep(0.1)
        os.kill(handle.proc.pid, signal.SIGINT)
        os.kill(handle.proc.pid, signal.SIGTERM)
        server.serve(Request("r", PROMPTS[0], 16))
        time.sleep(0.5)
        assert handle.proc.is_alive()
    finally:
        handle.stop()
    assert handle.faults == [] and handle.restarts == 0 and handle.lost is None and handle.exports


@pytest.mark.tier2
def test_the_stop_hands_every_buffered_record_to_the_trainer(tmp_path, target):
    from online.trainer.feedback import FeedbackCollector

    tcfg = TrainerConfig(lr=1e-2, batch=1, holdout_every=0, full_information=True)
    server, handle, heads, _ = start(tmp_path, target, tcfg, queue_size=64)
    collector = FeedbackCollector(k=16)
    dec = SpecDecoder(target, {n: Eagle3Drafter(h) for n, h in heads.items()}, mode="chain", k=3,
                      hooks=Hooks(collector=collector))
    records = []
    for i in range(10):  # real served records
        collector.start()
        records.append(collector.finish(f"r{i}", dec.decode(PROMPTS[i % len(PROMPTS)], 8).state, drafter=i % 2))
    try:
        for fb in records:  # the end of the input comes while they wait in the server's buffer (2 fit the channel)
            handle.submit(fb)
    finally:
        events = handle.stop()
    assert handle.last_round.get("records", 0) + handle.dropped == len(records) and handle.dropped == 0
    stopped = [e for e in events if e["event"] == "stopped"]
    assert stopped and stopped[0]["records"] == len(records) and handle.lost is None
    _, folder = latest_version(tmp_path / "online")
    assert json.loads((folder / "pool.json").read_text())["online"]["records"] == len(records)  # exported: all


@pytest.mark.tier2
def test_stale_export_folders_are_removed_at_trainer_start(tmp_path, target):
    versions = tmp_path / "online" / "versions"
    stale = [".v000002.tmp-1a2b3c4d", ".v000001.old-deadbeef"]
    kept = [".notours.tmp-1a2b3c4d", "v000001", ".v000003.tmp-1a2b3c4d.txt"]
    for name in stale + kept[:2]:
        (versions / name).mkdir(parents=True)
        (versions / name / "model.safetensors").write_bytes(b"x")
    (versions / kept[2]).write_text("a file")
    server, handle, _, _ = start(tmp_path, target)
    try:
        t0 = time.time()
        while not handle.starts and time.time() - t0 < 120:
            handle.poll()
            time.sleep(0.1)
    finally:
        handle.stop()
    assert sorted(p.name for p in versions.iterdir() if p.name in stale + kept) == sorted(kept)
    assert handle.starts[0]["cleaned"] == sorted(stale)


@pytest.mark.tier2
def test_trainers_are_new_processes_forked_from_the_fork_server_without_its_alive_pipe(tmp_path, target):
    """Each trainer, first start and restart, is a new process forked from the fork server (which preloads the
    trainer's imports; never this process: no state of the server is shared), and none keeps a copy of the fork
    server's alive pipe, so the fork server ends when the server dies and the trainer with it (the orphan test)."""
    import psutil

    from online.trainer import forkserver_shim

    def wait_started(n):
        t0 = time.time()
        while len(handle.starts) < n:
            assert time.time() - t0 < 120, "the trainer did not start"
            handle.poll()
            time.sleep(0.05)

    _, handle, _, _ = start(tmp_path, target, max_restarts=1)
    pids = []
    try:
        for n in (1, 2):
            wait_started(n)
            server_pid = forkserver_shim.server_pid()
            assert handle.ctx.get_start_method() == "forkserver" and server_pid not in (None, os.getpid())
            alive = os.readlink(f"/proc/self/fd/{forkserver_shim.alive_fd()}")
            pid = handle.proc.pid
            assert psutil.Process(pid).ppid() == server_pid and pid not in pids
            held = set()
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    held.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except FileNotFoundError:  # closed meanwhile
                    pass
            assert alive.startswith("pipe:") and alive not in held
            pids.append(pid)
            if n == 1:
                handle.proc.kill()  # a restart: a fresh process again
                handle.proc.join(10)
    finally:
        handle.stop()
    assert [f["kind"] for f in handle.faults] == ["crash"] and handle.restarts == 1


@pytest.mark.tier2
def test_the_trainer_lowers_its_own_priority_after_its_start(tmp_path, target):
    """process.nice: the trainer process lowers its priority itself once started (the server's threads then get the
    cores first). Nothing is served: a trainer at nice 19 makes little progress while anything else computes (a
    loaded CI machine), so the rest is tested at nice 0 below."""
    import psutil

    mine = os.nice(0)  # the test process's own (a CI run may itself be niced)
    server, handle, _, _ = start(tmp_path, target, nice=19)
    try:
        deadline = time.time() + 60
        while psutil.Process(handle.proc.pid).nice() != 19 and time.time() < deadline:
            time.sleep(0.1)
        assert psutil.Process(handle.proc.pid).nice() == 19 and os.nice(0) == mine  # the trainer's only
    finally:
        handle.stop()
    assert handle.faults == [] and server.failed == 0


@pytest.mark.tier2
def test_the_trainer_rests_after_rounds_that_overlap_serving(tmp_path, target, plain_out):
    """process.duty: after a round that ran while a request decoded the trainer rests, and the round events report
    the rest. A rest ends as soon as serving goes idle, so a round that ends between two requests rests 0 s: the
    requests go back to back (the tiny target's take milliseconds: idle gaps between them would hold most round
    ends) until a round has ended during one (the reported rest then grows); with duty 1 it never rests (timeout).
    The server's busy flag is set exactly while a request decodes."""
    server, handle, _, _ = start(tmp_path, target, duty=0.2)
    try:
        def rested() -> bool:
            return handle.rounds_seen >= 3 and handle.last_round.get("rested_s", 0) > 0

        assert not handle.serving.busy()
        n = serve_until(server, plain_out, rested, at_least=4, timeout=300.0, gap=0)
        assert not handle.serving.busy() and int(handle.serving.flag[1]) == n  # set during each request only
    finally:
        handle.stop()
    assert handle.faults == [] and server.failed == 0


class _Record:
    def to(self, device):
        return self


class _FlagReader:
    """A trainer whose one round reads the shared flag the server fits its threads to, then stops the loop."""

    rounds = seen = rejected = 0
    min_records = 1
    published: dict = {}

    def __init__(self, serving, stop):
        self.serving, self.stop, self.during = serving, stop, []

    def round(self, batch):
        self.during.append(self.serving.training())
        self.stop.set()
        self.rounds += 1
        return {}

    def round_event(self):
        return {}


def test_the_server_takes_every_core_while_the_trainer_waits_and_leaves_it_its_threads_in_a_round(target):
    """process.nice 0 on the server's device: the trainer's loop raises the shared flag for the length of each round
    only, and the server's decode thread (`fit_threads`, at request starts and cycle boundaries) takes every core
    while it is down."""
    import queue
    import threading

    from online.trainer.child import TrainerProcess
    from online.trainer.throttle import Serving

    serving, stop = Serving(torch.zeros(3, dtype=torch.int64)), threading.Event()
    trainer = _FlagReader(serving, stop)
    transport, status = queue.Queue(), queue.Queue()
    transport.put(_Record())
    loop = TrainerProcess(trainer, [], TrainerConfig(batch=1), ProcessConfig(), {}, status,
                          torch.zeros(1, dtype=torch.float64), None, 0, torch.device("cpu"))
    loop.run(transport, stop, serving)
    assert trainer.during == [True] and not serving.training()  # up in the round, down after it
    handle = TrainerHandle([Member("h", "eagle3", make_head(target, 1))], TrainerConfig(), ProcessConfig())
    handle.threads = (2, 1)
    handle.serving.computing(True)
    handle.fit_threads()
    assert torch.get_num_threads() == 1
    handle.serving.computing(False)
    handle.fit_threads()
    assert torch.get_num_threads() == 2
    handle.threads = None  # serve.threads given, a niced trainer or one on another device: the threads stay
    torch.set_num_threads(1)
    handle.serving.computing(False)
    handle.fit_threads()
    assert torch.get_num_threads() == 1


def test_the_trainer_precision_auto_is_the_measured_batch_choice(monkeypatch, tiny_target_info, capsys):
    """trainer.precision auto, resolved at the trainer's start on its device: fp32 on a CPU without bf16 units; with
    them (forced) the probe's choice for batched forwards (figures injected: bf16 faster at 64 rows, then slower),
    with one line saying so; an explicit precision, and the lookahead step trainer's, are left as they are."""
    from online.trainer.process import trainer_precision

    auto = TrainerConfig()
    monkeypatch.setenv("DRAFTPOOL_CPU_BF16", "0")
    assert trainer_precision(auto, "cpu", tiny_target_info).precision == "float32"
    monkeypatch.setenv("DRAFTPOOL_CPU_BF16", "1")
    for b64, want in ((3.0, "bfloat16"), (9.0, "float32")):
        monkeypatch.setenv("DRAFTPOOL_PRECISION_FIGURES", json.dumps(
            {"float32": {"1": 1.0, "8": 2.0, "64": 8.0}, "bfloat16": {"1": 2.0, "8": 4.0, "64": b64}}))
        assert trainer_precision(auto, "cpu", tiny_target_info).precision == want
        assert f"trainer precision {want}" in capsys.readouterr().err
    assert auto.precision == "auto"  # the config itself is not changed
    assert trainer_precision(TrainerConfig(precision="float32"), "cpu", tiny_target_info).precision == "float32"
    assert trainer_precision(TrainerConfig(updater="dpo"), "cpu", tiny_target_info).precision == "auto"
