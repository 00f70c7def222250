"""Shared fixtures: the real embedded target (converted once into the draftpool cache) and a scratch folder."""

from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# rule: OpenMP threads sleep while they wait, never spin: the suite runs 3 workers, their subprocesses and trainers on
# 2 cores, and a thread spinning at a barrier for a descheduled sibling burns the core that sibling needs (under two
# busy loops: the official-client test 191 s -> 92 s, the stdin rerun 63 s -> 38 s). Inherited by the workers and
# every process they start; the library itself leaves OMP_WAIT_POLICY alone (a dedicated server wants the spin).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
if os.environ.get("PYTEST_XDIST_WORKER"):  # one process per core (pytest -n 2): one torch thread each, not 2 x 2
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # train_drafter.py sets every core on a single-process CPU run (despite OMP_NUM_THREADS=1): its subprocess runs
    # and its in-process runs (train_drafter.main) in a worker take one core too
    os.environ.setdefault("DRAFTPOOL_CPU_THREADS", "1")


FIRST = ("tests/training/", "tests/specsel/decoding/test_lean.py", "tests/online/lookahead/test_lookahead_adapt.py")


def pytest_collection_modifyitems(config, items):
    """The longest files (multi-process training runs, bf16 on the real target) go first, so that with workers
    (-n 2 --dist worksteal) no long test starts last and leaves one core idle."""
    items.sort(key=lambda it: not it.nodeid.startswith(FIRST))  # stable: the order within each group is kept


def pytest_configure(config):
    """With workers (-n N), the controller converts the embedded target into the cache first: workers racing on
    the conversion would replace the folder under each other's feet."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from draftpool.target import resolve_target

        resolve_target()


@pytest.fixture(scope="session")
def target_info():
    from draftpool.target import resolve_target

    return resolve_target()


@pytest.fixture(scope="session")
def target(target_info):
    """(model, tokenizer) of the embedded SmolLM2-135M-Instruct target, frozen, fp32 on CPU."""
    from draftpool.target import load_target

    return load_target(target_info, "cpu")


VOLATILE_ENV = {"PYTEST_CURRENT_TEST"}  # pytest's own, rewritten at every phase of a test


@pytest.fixture(autouse=True)
def _keep_process_state():
    """No test leaves process-global state behind for the tests after it in the same process (a worker runs many):
    torch's thread count (with workers one core each, not 2 x 2 threads), the environment, and accelerate's shared
    state (an Accelerator built in a test, e.g. an fp32 `Accelerator(cpu=True)`, would fix the precision of every
    later one in the process). The library restores what a run changes itself (train_drafter.accelerated, tested in
    tests/training/test_train_drafter.py); this is the net for what a test changes."""
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    environ = dict(os.environ)
    yield
    torch = sys.modules.get("torch")
    if torch is not None and threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    changed = {k for k in set(os.environ) | set(environ) if os.environ.get(k) != environ.get(k)} - VOLATILE_ENV
    for key in changed:
        if key in environ:
            os.environ[key] = environ[key]
        else:
            del os.environ[key]
    if "accelerate.state" in sys.modules:
        from training.accelerate_shim import forget_accelerate_state

        forget_accelerate_state()
