"""online/serve/signals.py: the first stop signal raises Stop, or starts the run's drain where it has one; a second
one during the drain stops at once; one during the stop is ignored with a line; the caller's handlers come back."""

import os
import signal

import pytest

from online.serve.signals import Stop, stop_signals, stopping


def test_the_first_signal_stops_and_a_later_one_during_the_stop_is_ignored(capfd):
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stop, match="SIGTERM"):
        with stop_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            pytest.fail("the signal did not stop the run")
    assert signal.getsignal(signal.SIGTERM) is before
    with stop_signals():
        assert stopping("end of requests") == "end of requests"
        os.kill(os.getpid(), signal.SIGINT)  # during the stop: ignored, said once
    assert "SIGINT ignored: the stop is already under way" in capfd.readouterr().err


def test_a_drain_takes_the_first_signal_and_a_second_stops_at_once():
    drains = []
    with pytest.raises(Stop, match="SIGINT"):
        with stop_signals(lambda name: drains.append(name) or True):
            os.kill(os.getpid(), signal.SIGTERM)  # drains: no Stop
            assert drains == ["SIGTERM"] and Stop.draining == "SIGTERM" and Stop.under_way is None
            os.kill(os.getpid(), signal.SIGINT)  # a second signal: the stop, at once
            pytest.fail("the second signal did not stop the run")
    assert drains == ["SIGTERM"]


def test_a_drained_run_ends_as_its_signal_and_a_refused_drain_stops():
    with stop_signals(lambda name: True):
        os.kill(os.getpid(), signal.SIGTERM)
        assert stopping("end of requests") == "SIGTERM"  # the requests ended because the signal drained them
    with pytest.raises(Stop, match="SIGTERM"):
        with stop_signals(lambda name: False):  # e.g. serve.drain_s=0: no drain, the stop at once
            os.kill(os.getpid(), signal.SIGTERM)
            pytest.fail("the signal did not stop the run")
