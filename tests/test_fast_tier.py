"""The fast tier's own check (tests/conftest.py): a test of the default selection that takes longer than
--fast-limit is named after the run, from pytest's durations (setup + call + teardown), and fails it with
--fast-limit-fail; the same test in the second tier (-m tier2) is not, nor in a run with the check off or every test
under the limit."""

import pytest

from tests.conftest import FAST_TIER

PLANTED = """
import time

import pytest


@pytest.fixture
def slow_setup():
    time.sleep(0.3)


def test_quick():
    pass


def test_slow_call():
    time.sleep(0.3)


def test_slow_setup(slow_setup):
    pass


@pytest.mark.tier2
def test_slow_in_the_second_tier():
    time.sleep(0.3)
"""


@pytest.fixture
def planted(pytester):
    pytester.makeconftest("from tests.conftest import pytest_addoption, pytest_configure  # noqa: F401\n")
    pytester.makeini("[pytest]\nmarkers =\n    tier2: the second tier\n    vllm: vLLM's environment\n")
    pytester.makepyfile(test_planted=PLANTED)
    return pytester


@pytest.mark.parametrize("strict", [True, False], ids=["fails", "reports"])
def test_a_fast_tier_test_over_the_limit_is_named_and_fails_the_strict_run(planted, strict):
    res = planted.runpytest("-m", FAST_TIER, "--fast-limit", "0.2", "-p", "no:cacheprovider",
                            *(["--fast-limit-fail"] if strict else []))
    res.assert_outcomes(passed=3, deselected=1)  # every test passed: a strict run fails on time alone
    assert res.ret == (pytest.ExitCode.TESTS_FAILED if strict else pytest.ExitCode.OK)
    res.stdout.fnmatch_lines(["*fast tier: tests over the limit*", "*s  test_planted.py::test_slow_*"])
    text = res.stdout.str()
    assert "test_planted.py::test_slow_call" in text and "test_planted.py::test_slow_setup" in text  # setup counts
    assert "test_planted.py::test_quick" not in text and "mark it @pytest.mark.tier2" in text


@pytest.mark.parametrize("args", [["-m", "tier2"], ["-m", FAST_TIER, "--fast-limit", "5"],
                                  ["-m", FAST_TIER, "--fast-limit", "0"]], ids=["second-tier", "under", "off"])
def test_the_second_tier_a_higher_limit_or_no_check_passes(planted, args):
    res = planted.runpytest(*args, "--fast-limit-fail", "-p", "no:cacheprovider")
    assert res.ret == pytest.ExitCode.OK
    assert "fast tier: tests over the limit" not in res.stdout.str()
