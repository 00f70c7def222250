"""online_adapt.py against a hostile client and a hostile out_dir, on the real embedded target: a crafted trainer
state is refused (nothing of it runs), tiny requests do not turn adaptation off, Ctrl-C / SIGTERM to the process group
still export the adapted pool, an export that fails is a loss the summary names (exit 3), an out_dir that cannot be
written fails at once."""

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
from online.versions import latest_version
from tests.online.test_adapt import args, pool, requests  # noqa: F401 - pool is a fixture

ROOT = Path(__file__).resolve().parents[2]


class _Marker:
    """Unpickling it creates a file: what a crafted trainer_state.pt could run instead."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_crafted_trainer_state_stops_the_resume(tmp_path, pool, capsys):  # noqa: F811
    out = tmp_path / "online"
    shutil.copytree(pool, out / "versions" / "v000001")
    (out / "latest.json").write_text('{"version": 1, "path": "versions/v000001"}')
    marker = tmp_path / "marker"
    torch.save({"published": {}, "rounds": 1, "updaters": _Marker(marker)},
               out / "versions" / "v000001" / "trainer_state.pt")
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    assert online_adapt.main(args(tmp_path, pool, reqs)) == 2
    err = capsys.readouterr().err
    assert "not a safe trainer state" in err and err.count("error:") == 1 and "Traceback" not in err
    assert not marker.exists()


def test_tiny_requests_do_not_turn_adaptation_off(tmp_path, pool, capsys, monkeypatch):  # noqa: F811
    """Four requests of one new token after a 31-token chat prompt, shorter than the heads' 40 training-time-test
    steps, fed one at a time (stdin) while the trainer runs: each used to crash it, four used up its restarts."""
    from online.process import TrainerHandle

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
        code = online_adapt.main(args(tmp_path, pool, "-", "serve.max_new_tokens=1", "trainer.steps=40",
                                      "process.max_restarts=3"))
    finally:
        th.join()
    summary = json.loads(capsys.readouterr().out)
    assert summary["trainer_restarts"] == 0 and summary["trainer_faults"] == []  # adaptation stayed on
    assert code == 0 and summary["served"] == 4 and summary["failed"] == 0 and summary["trainer_skipped"] == 0
    assert summary["rounds"] == 4 and len(summary["exports"]) == 1 and summary["adaptation_lost"] is None


def test_a_failed_export_is_a_loss_the_summary_names(tmp_path, pool, capsys):  # noqa: F811
    (tmp_path / "online").mkdir()
    (tmp_path / "online" / "versions").write_text("a file where the versions folder goes")  # as root: chmod would not
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}, {"id": "b", "prompt": "ho"}])
    assert online_adapt.main(args(tmp_path, pool, reqs)) == 3
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["served"] == 2 and summary["exports"] == [] and summary["rounds"] >= 1
    assert "not saved" in summary["adaptation_lost"] and "export failed" in summary["adaptation_lost"]
    assert [line for line in out.err.splitlines() if line.startswith("error:")] == [
        f"error: adapted weights were not saved: {summary['adaptation_lost']}"]


@pytest.mark.parametrize("where", ["under_a_file", "is_a_file"])
def test_an_out_dir_that_cannot_be_written_fails_before_the_target_loads(tmp_path, pool, capsys, monkeypatch,  # noqa: F811
                                                                          where):
    def load_target(*a, **k):
        raise AssertionError("the target was loaded before the out_dir was checked")

    monkeypatch.setattr(online_adapt, "load_target", load_target)
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "online" if where == "under_a_file" else tmp_path / "file"
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    run = [a for a in args(tmp_path, pool, reqs) if not a.startswith("serve.out_dir=")] + [f"serve.out_dir={out}"]
    assert online_adapt.main(run) == 2
    err = capsys.readouterr().err
    assert "cannot be written" in err and err.count("error:") == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_to_the_process_group_still_exports(tmp_path, pool, sig):  # noqa: F811
    """Ctrl-C in a terminal (SIGINT to the whole group) or a service manager's SIGTERM: the trainer is in the group
    too; it must not die with the server's stop but finish, export, and the run exit 0."""
    reqs = requests(tmp_path / "r.jsonl", [{"id": f"q{i}", "prompt": f"Count to {i}."} for i in range(40)])
    answers = tmp_path / "online" / "answers.jsonl"
    proc = subprocess.Popen([sys.executable, "online_adapt.py", *args(tmp_path, pool, reqs)], cwd=ROOT,
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
