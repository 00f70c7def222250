"""The guards around the private APIs online adaptation uses: the fork server (online/trainer/forkserver_shim.py),
uvicorn's H11Protocol and h11 (online/http/uvicorn_shim.py, with pyproject.toml's upper bound), vLLM's model_executor
internals (online/vllm/shim.py). Each refuses what it was not checked on with one clear error; the versions here pass.
And no test-only switch is left in the trainer process's settings."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from multiprocessing import forkserver
from pathlib import Path

import pytest

from draftpool.version_guard import UncheckedVersionError
from online.http import uvicorn_shim
from online.trainer import forkserver_shim
from online.vllm import shim as vllm_shim

ROOT = Path(__file__).resolve().parents[2]


def test_the_fork_server_of_this_python_has_what_the_shim_uses():
    forkserver_shim.check()


def test_a_fork_server_without_the_alive_fd_is_refused_with_one_clear_error(monkeypatch):
    class Older:  # a fork server object of some other Python: a pid, no alive fd
        _forkserver_pid = None

    monkeypatch.setattr(forkserver, "_forkserver", Older())
    with pytest.raises(forkserver_shim.ForkServerError, match="_forkserver_alive_fd") as e:
        forkserver_shim.context(["online.trainer.child"])
    assert "checked on Python 3.11" in str(e.value) and "\n" not in str(e.value)
    assert isinstance(e.value, UncheckedVersionError)  # online_adapt.py reports it as one error line (exit 2)


def test_the_trainer_process_settings_hold_no_fault_switch():
    from online.trainer.config import ProcessConfig

    assert not {f.name for f in dataclasses.fields(ProcessConfig)} & {"fault", "crash_after", "hang_after"}


def test_the_installed_uvicorn_and_h11_are_checked_ones():
    uvicorn_shim.check()
    assert isinstance(uvicorn_shim.head_deadline_protocol(1.0), type)


@pytest.mark.parametrize("uvicorn,h11,name", [("0.55.0", "0.16.0", "uvicorn 0.55.0"), ("1.0.0", "0.16.0", "uvicorn"),
                                              ("0.29.1", "0.16.0", "uvicorn"), ("0.54.0", "0.17.0", "h11 0.17.0"),
                                              ("garbage", "0.16.0", "uvicorn garbage")])
def test_an_unchecked_uvicorn_or_h11_is_refused_with_one_clear_error(uvicorn, h11, name):
    with pytest.raises(UncheckedVersionError, match=re.escape(name)) as e:
        uvicorn_shim.check(uvicorn, h11)
    assert "online/http/uvicorn_shim.py" in str(e.value) and "\n" not in str(e.value)


def test_an_unchecked_uvicorn_fails_before_the_http_front_end_binds(monkeypatch):
    from online.http.asgi import ThreadedServer

    monkeypatch.setattr(uvicorn_shim, "version", lambda name: "0.99.0" if name == "uvicorn" else "0.16.0")
    with pytest.raises(UncheckedVersionError, match="uvicorn 0.99.0"):
        ThreadedServer(lambda *a: None, "127.0.0.1", 0)


def test_pyproject_bounds_uvicorn_below_the_first_unchecked_minor():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if d.startswith("uvicorn"))
    low, high = uvicorn_shim.UVICORN
    assert spec == f"uvicorn>={low[0]}.{low[1]},<{high[0]}.{high[1]}", spec


@pytest.mark.parametrize("version,ok", [("0.32.0", True), ("0.32.3+cpu", True), ("0.33.0", False),
                                        ("0.31.9", False), ("1.0.0", False)])
def test_vllm_internals_are_used_only_on_a_checked_vllm(version, ok):
    if ok:
        vllm_shim.check(version)
        return
    with pytest.raises(UncheckedVersionError, match=re.escape(f"vLLM {version}")) as e:
        vllm_shim.check(version)
    assert "online/vllm/shim.py" in str(e.value) and "\n" not in str(e.value)
