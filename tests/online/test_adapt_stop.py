"""online_adapt.py against a hostile client and a hostile out_dir, on the tiny random Llama over the real vocabulary
(what happens around the decode loop and in the trainer, not the target's numerics): a crafted trainer state is
refused (nothing of it runs), tiny requests do not turn adaptation off, Ctrl-C / SIGTERM to the process group still
export the adapted pool (also when more of them come during the stop: ignored, said so), an export that fails is a
loss the summary names (exit 3), an out_dir that cannot be written fails at once."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

import online.adapt as online_adapt
from online.trainer.versions import latest_version
from tests.online.test_adapt import args, requests, tiny, tiny_args  # noqa: F401 - tiny is a fixture

ROOT = Path(__file__).resolve().parents[2]


class _Marker:
    """Unpickling it creates a file: what a crafted trainer_state.pt could run instead."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_crafted_trainer_state_stops_the_resume(tmp_path, tiny, capsys):  # noqa: F811
    out = tmp_path / "online"
    shutil.copytree(tiny[0], out / "versions" / "v000001")
    (out / "latest.json").write_text('{"version": 1, "path": "versions/v000001"}')
    marker = tmp_path / "marker"
    torch.save({"published": {}, "rounds": 1, "updaters": _Marker(marker)},
               out / "versions" / "v000001" / "trainer_state.pt")
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    assert online_adapt.main(tiny_args(tmp_path, tiny, reqs)) == 2
    err = capsys.readouterr().err
    assert "not a safe trainer state" in err and err.count("error:") == 1 and "Traceback" not in err
    assert not marker.exists()


@pytest.mark.tier2
def test_tiny_requests_do_not_turn_adaptation_off(tmp_path, tiny, capsys, monkeypatch):  # noqa: F811
    """Four requests of one new token after a 31-token chat prompt, shorter than the heads' 40 training-time-test
    steps, fed one at a time (stdin) while the trainer runs: each used to crash it, four used up its restarts."""
    from online.trainer.process import TrainerHandle

    handles = []
    start = TrainerHandle.start

    def recording_start(self):
        handles.append(self)
        start(self)

    monkeypatch.setattr(TrainerHandle, "start", recording_start)
    read, write = os.pipe()
    monkeypatch.setattr("sys.stdin", os.fdopen(read, "r"))
    answers = tmp_path / "online" / "answers.jsonl"

    def wait(cond, timeout=180.0):
        t0 = time.time()
        while not cond() and time.time() - t0 < timeout:
            time.sleep(0.05)

    def feed():
        with os.fdopen(write, "wb") as w:
            for i, prompt in enumerate("abcd"):
                wait(lambda: handles and handles[0].proc is not None and float(handles[0].heartbeat[0]) > 0)
                w.write(json.dumps({"id": f"t{i}", "prompt": prompt}).encode() + b"\n")
                w.flush()
                wait(lambda n=i: answers.is_file() and len(answers.read_text().splitlines()) > n)
                time.sleep(1.0)  # the trainer takes the record (and, before the fix, crashed on it)

    th = threading.Thread(target=feed)
    th.start()
    try:
        code = online_adapt.main(tiny_args(tmp_path, tiny, "-", "serve.max_new_tokens=1", "trainer.steps=40",
                                      "process.max_restarts=3"))
    finally:
        th.join()
    summary = json.loads(capsys.readouterr().out)
    assert summary["trainer_restarts"] == 0 and summary["trainer_faults"] == []  # adaptation stayed on
    assert code == 0 and summary["served"] == 4 and summary["failed"] == 0 and summary["trainer_skipped"] == 0
    assert summary["rounds"] == 4 and len(summary["exports"]) == 1 and summary["adaptation_lost"] is None


@pytest.mark.tier2
def test_a_failed_export_is_a_loss_the_summary_names(tmp_path, tiny, capsys):  # noqa: F811
    (tmp_path / "online").mkdir()
    (tmp_path / "online" / "versions").write_text("a file where the versions folder goes")  # as root: chmod would not
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}, {"id": "b", "prompt": "ho"}])
    assert online_adapt.main(tiny_args(tmp_path, tiny, reqs)) == 3
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["served"] == 2 and summary["exports"] == [] and summary["rounds"] >= 1
    assert "not saved" in summary["adaptation_lost"] and "export failed" in summary["adaptation_lost"]
    assert [line for line in out.err.splitlines() if line.startswith("error:")] == [
        f"error: adapted weights were not saved: {summary['adaptation_lost']}"]


@pytest.mark.parametrize("where", ["under_a_file", "is_a_file"])
def test_an_out_dir_that_cannot_be_written_fails_before_the_target_loads(tmp_path, tiny, capsys, monkeypatch,  # noqa: F811
                                                                          where):
    def load_target(*a, **k):
        raise AssertionError("the target was loaded before the out_dir was checked")

    monkeypatch.setattr(online_adapt, "load_target", load_target)
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "online" if where == "under_a_file" else tmp_path / "file"
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    run = [a for a in tiny_args(tmp_path, tiny, reqs) if not a.startswith("serve.out_dir=")] + [f"serve.out_dir={out}"]
    assert online_adapt.main(run) == 2
    err = capsys.readouterr().err
    assert "cannot be written" in err and err.count("error:") == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.tier2
def test_a_stop_signal_to_the_process_group_still_exports(tmp_path, tiny, sig):  # noqa: F811
    """Ctrl-C in a terminal (SIGINT to the whole group) or a service manager's SIGTERM: the trainer is in the group
    too; it must not die with the server's stop but finish, export, and the run exit 0."""
    reqs = requests(tmp_path / "r.jsonl", [{"id": f"q{i}", "prompt": f"Count to {i}."} for i in range(40)])
    answers = tmp_path / "online" / "answers.jsonl"
    proc = subprocess.Popen([sys.executable, "online_adapt.py", *tiny_args(tmp_path, tiny, reqs)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        t0 = time.time()
        while not answers.is_file() or len(answers.read_text().splitlines()) < 3:
            assert proc.poll() is None and time.time() - t0 < 300, proc.stderr.read() if proc.poll() else "timeout"
            time.sleep(0.1)
        os.killpg(proc.pid, sig)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    summary = json.loads(out)
    assert summary["stopped_by"] == sig.name and summary["trainer_faults"] == [] and summary["exports"]
    assert summary["adaptation_lost"] is None and summary["feedback_dropped"] == 0
    version, folder = latest_version(tmp_path / "online")
    assert (folder / "trainer_state.pt").is_file() and str(folder) in summary["exports"][-1]
    assert summary["last_event"]["event"] == "stopped" and summary["last_event"]["unsaved_rounds"] == 0


def _stderr_lines(proc, lines: list[str]) -> threading.Thread:
    """Read the child's stderr into `lines` as it comes (the test waits on trainer rounds)."""
    th = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    th.start()
    return th


@pytest.mark.parametrize("sigs,gap", [
    ((signal.SIGTERM,) * 3, 0.15),  # the report: three SIGTERMs to the group, 0.15 s apart
    ((signal.SIGINT, signal.SIGINT), 0.05),  # a double Ctrl-C
    ((signal.SIGINT, signal.SIGTERM), 0.5),  # Ctrl-C, then a service manager's SIGTERM half a second later
], ids=["3xSIGTERM-0.15s", "2xSIGINT-0.05s", "SIGINT+SIGTERM-0.5s"])
@pytest.mark.tier2
def test_more_stop_signals_during_the_stop_still_export(tmp_path, tiny, sigs, gap):  # noqa: F811
    """After a few trainer rounds, 2 or 3 stop signals to the process group: 3 SIGTERMs 0.15 s apart, 2 SIGINTs
    0.05 s apart, a SIGINT then a SIGTERM 0.5 s apart. The first stops the run; the later ones, during the stop
    (trainer hand-over, final export), are ignored with one stderr line each: the run exits 0 with its summary and
    the adapted pool exported (they once killed it mid-stop: status -15, no summary, nothing exported)."""
    reqs = requests(tmp_path / "r.jsonl", [{"id": f"q{i}", "prompt": f"Count to {i}."} for i in range(200)])
    proc = subprocess.Popen([sys.executable, "online_adapt.py", *tiny_args(tmp_path, tiny, reqs)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    err: list[str] = []
    reader = _stderr_lines(proc, err)
    sent = 0
    try:
        t0 = time.time()
        while sum("[online] round " in line for line in err) < 3:
            assert proc.poll() is None and time.time() - t0 < 300, "".join(err)[-3000:] if proc.poll() else "timeout"
            time.sleep(0.05)
        for i, sig in enumerate(sigs):
            if i:
                time.sleep(gap)
            if proc.poll() is not None:
                break
            os.killpg(proc.pid, sig)
            sent += 1
        out = proc.stdout.read()
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(30)
    err_text = "".join(err)
    assert proc.returncode == 0, err_text[-3000:]
    assert sent == len(sigs)  # every signal reached the run during its stop
    # one line per later signal; a signal sent again before the run took the first (in a long torch call) is one
    ignored = err_text.count("the stop is already under way")
    assert len(set(sigs)) - 1 <= ignored <= sent - 1 and "error:" not in err_text
    summary = json.loads(out)
    assert summary["stopped_by"] == sigs[0].name and summary["trainer_faults"] == [] and summary["exports"]
    assert summary["adaptation_lost"] is None and summary["rounds"] >= 3
    version, folder = latest_version(tmp_path / "online")
    assert (folder / "trainer_state.pt").is_file() and str(folder) in summary["exports"][-1]
    assert summary["last_event"]["event"] == "stopped" and summary["last_event"]["unsaved_rounds"] == 0


class _Recorder:
    """Stands for the handlers a caller had before the run (SIG_DFL would kill the test process): records calls."""

    def __init__(self):
        self.calls: list[str] = []

    def __call__(self, signum, frame):
        self.calls.append(signal.Signals(signum).name)


def _send(*sigs):
    for sig in sigs:
        os.kill(os.getpid(), sig)
        time.sleep(0.05)  # the handler runs in the main thread, at its next bytecode


@pytest.fixture
def recorders():
    rec = _Recorder()
    old = {sig: signal.signal(sig, rec) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield rec
    for sig, h in old.items():
        signal.signal(sig, h)


@pytest.mark.parametrize("first", [signal.SIGTERM, None], ids=["signal", "end-of-requests"])
def test_signals_during_the_stop_are_ignored_and_said_so(tmp_path, capfd, recorders, first):
    """The serve loop in-process with a stub server and trainer (no target): a SIGTERM at the trainer's start stops
    the run (or the requests end); SIGINT and SIGTERM during the trainer's stop are ignored with one stderr line each,
    the stop runs to its end, and the caller's handlers are back only after it."""
    from types import SimpleNamespace

    from online.config import ServeConfig
    from online.serve.loop import serve
    from online.serve.server import ServingBase
    from online.serve.signals import on_signal

    stopped = []

    class Handle(SimpleNamespace):
        def start(self):
            if first is not None:
                _send(first)

        def wait_ready(self):
            return 0.0

        def stop(self):
            _send(signal.SIGINT, signal.SIGTERM)
            assert signal.getsignal(signal.SIGTERM) is on_signal  # not the caller's yet
            stopped.append(True)
            return [{"event": "stopped", "unsaved_rounds": 0}]

    handle = Handle(faults=[], restarts=0, dropped=0, rounds_seen=0, exports=[], skipped=0, lost=None, threads=None)
    server = ServingBase(None, {})  # the skeleton: a bad line is answered without a decoder
    reqs = requests(tmp_path / "r.jsonl", ["{not json"])  # a bad line: its record needs no tokenizer
    summary = serve(ServeConfig(requests=str(reqs)), server, handle, None, None, tmp_path / "online", [])
    assert stopped and summary["stopped_by"] == (first.name if first is not None else "end of requests")
    assert recorders.calls == [] and signal.getsignal(signal.SIGINT) is recorders  # restored after the stop
    err = capfd.readouterr().err
    assert err.count("the stop is already under way") == 2 and "SIGKILL" in err
    assert "[online] SIGINT ignored" in err and "[online] SIGTERM ignored" in err
    _send(signal.SIGTERM)
    assert recorders.calls == ["SIGTERM"]  # the caller's handler again


def test_vllm_signals_during_the_stop_are_ignored_and_said_so(tmp_path, capfd, recorders, monkeypatch):
    """`serve_vllm` in-process with a stub engine and front end (no vLLM): SIGTERM stops it; SIGINT and SIGTERM
    during the shut-down (trainer's final export, vLLM's stop) are ignored with one stderr line each, and the
    caller's handlers are back only after it."""
    from types import SimpleNamespace

    import online.vllm.adapt as vllm_adapt
    from draftpool.pool import Member
    from online.config import AdaptConfig

    stopped = []

    class Engine:
        version, url = "stub", "http://127.0.0.1:1"

        def __init__(self, *a, **k):
            pass

        def start(self):
            return self

        def counters(self):
            return {}

        def stop(self):
            _send(signal.SIGINT, signal.SIGTERM)
            assert recorders.calls == []
            stopped.append(True)

    class Proxy:
        url, failed, finished = "http://127.0.0.1:1", 0, 0

        def __init__(self, *a, **k):
            pass

        def start(self):
            _send(signal.SIGTERM)
            return self

        def close(self):
            pass

    monkeypatch.setattr(vllm_adapt, "VllmEngine", Engine)
    monkeypatch.setattr(vllm_adapt, "VllmProxy", Proxy)
    monkeypatch.setattr(vllm_adapt, "load_members", lambda *a: [Member("h", "eagle3", None)])
    monkeypatch.setattr(vllm_adapt, "read_manifest", lambda d: {"drafters": {"h": {"path": "h"}}})
    cfg = AdaptConfig()
    cfg.serve.adapt, cfg.serve.http = False, "127.0.0.1:1"
    info = SimpleNamespace(path=tmp_path, name="t", weights_sha256="0")
    summary = vllm_adapt.serve_vllm(cfg, info, None, tmp_path / "pool", tmp_path / "online")
    assert stopped and summary["failed"] == 0
    assert recorders.calls == [] and signal.getsignal(signal.SIGTERM) is recorders
    err = capfd.readouterr().err
    assert err.count("the stop is already under way") == 2 and "SIGKILL" in err
