"""Shared fixtures: the real embedded target (converted once into the draftpool cache) and a scratch folder."""

from __future__ import annotations

import os
import sys

import pytest

pytest_plugins = ["pytester"]  # tests/test_fast_tier.py runs the fast tier's check in an inner pytest run

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


FAST_TIER = "not tier2 and not vllm"  # pyproject.toml's default selection
FAST_LIMIT_S = 10.0  # the most one fast-tier test may take (setup + call + teardown), on a 2-core AVX2 machine


def pytest_addoption(parser):
    parser.addoption("--fast-limit", type=float, default=FAST_LIMIT_S,
                     help="name the fast tier's tests that take longer than this many seconds (0: no check)")
    parser.addoption("--fast-limit-fail", action="store_true",
                     help="and fail the run when there is one (a developer's check on an idle machine: timings "
                          "depend on the machine and its load, so CI only reports them)")


class FastTierCheck:
    """A fast-tier test over --fast-limit is named after the run, from pytest's own durations (no timing assertion
    inside a test), and fails the run with --fast-limit-fail (the standards: timings never decide pass or fail on a
    machine whose speed and load are not known, such as CI's). One per pytest run (tests/test_fast_tier.py runs
    pytest inside pytest); with workers, the controller's check sees every worker's reports."""

    def __init__(self, config):
        self.config = config
        self.durations: dict[str, float] = {}

    def pytest_runtest_logreport(self, report):
        """Every test's time, summed over its phases."""
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration

    def too_slow(self) -> dict[str, float]:
        """The fast tier's tests over the limit (nothing in another selection, or with the check off)."""
        limit = self.config.getoption("--fast-limit")
        if hasattr(self.config, "workerinput") or not limit or self.config.option.markexpr != FAST_TIER:
            return {}
        return {k: v for k, v in self.durations.items() if v > limit}

    def pytest_terminal_summary(self, terminalreporter):
        slow = self.too_slow()
        if slow:
            terminalreporter.section("fast tier: tests over the limit")
            for nodeid, seconds in sorted(slow.items(), key=lambda kv: -kv[1]):
                terminalreporter.line(f"{seconds:6.1f} s  {nodeid}")
            terminalreporter.line(f"each fast-tier test must take <= {self.config.getoption('--fast-limit'):g} s: "
                                  f"speed it up, or mark it @pytest.mark.tier2 (the second tier)")

    def pytest_sessionfinish(self, session, exitstatus):
        if self.config.getoption("--fast-limit-fail") and self.too_slow() and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config):
    """The fast tier's time check; with workers (-n N), the controller converts the embedded target into the cache
    first: workers racing on the conversion would replace the folder under each other's feet."""
    config.pluginmanager.register(FastTierCheck(config), "fast-tier-check")
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


@pytest.fixture(scope="session")
def target16(target_info):
    """(model, tokenizer) of the embedded target loaded in bf16, as `dtype: bfloat16` loads it (a cast copy of the fp32
    model differs: it casts the rotary inverse frequencies too)."""
    import torch

    from draftpool.target import load_target

    return load_target(target_info, "cpu", torch.bfloat16)


@pytest.fixture(scope="session")
def tiny_target_info(tmp_path_factory, target_info):
    """The TargetInfo of a 4-layer random Llama over the embedded target's vocabulary (tests/stubs.py), saved as a
    Hugging Face folder with the real tokenizer (made once for the session's workers): the target of tests of
    plumbing that need real prompts, the chat template and stop tokens, not the real target's numerics; entry points
    and subprocesses load it by its folder (`target=<tiny_target_info.name>`)."""
    from transformers import AutoTokenizer

    from draftpool.target import resolve_target
    from tests.shared import shared_dir
    from tests.stubs import tiny_real_vocab_target

    def make(root):
        tiny_real_vocab_target(target_info)[0].save_pretrained(root)
        AutoTokenizer.from_pretrained(target_info.path).save_pretrained(root)

    return resolve_target(str(shared_dir(tmp_path_factory, "tiny-real-vocab-target", make)))


@pytest.fixture(scope="session")
def tiny_real_target(tiny_target_info):
    """(model, tokenizer) of the tiny real-vocabulary target, as `target` gives the embedded one's."""
    from draftpool.target import load_target

    return load_target(tiny_target_info, "cpu")


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
