"""The trainer's bounded share (online/trainer/throttle.py) on a fake clock: it rests after rounds that overlapped
serving so that it computes at most `duty` of the wall time, stops resting as soon as serving goes idle or the trainer
must stop, and never rests after a round taken while the server was idle."""

import pytest
import torch

from online.trainer.throttle import Serving, Throttle


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def throttle(duty, busy=lambda: True, stop=lambda: False):
    clock = Clock()
    beats = []
    t = Throttle(duty, busy, stop, lambda: beats.append(clock.now), clock=clock, sleep=clock.sleep, poll_s=0.01)
    return t, clock, beats


@pytest.mark.parametrize("duty", [0.1, 0.25, 0.5])
def test_rest_after_a_busy_round_bounds_the_share_to_duty(duty):
    t, clock, beats = throttle(duty)
    work = 0.0
    for seconds in (0.3, 1.2, 0.05, 2.0):  # rounds of varied length, all while a request decodes
        clock.now += seconds
        work += seconds
        t.after(seconds, overlapped=True)
    assert work / clock.now == pytest.approx(duty, rel=1e-6)
    assert t.rested_s == pytest.approx(clock.now - work) and t.busy_work_s == pytest.approx(work)
    assert beats  # the heartbeat goes on while resting (a resting trainer is not hung)


def test_no_rest_when_the_round_did_not_touch_serving_or_duty_is_one():
    t, clock, _ = throttle(0.2)
    assert t.after(1.0, overlapped=False) == 0 and clock.now == 0
    t1, clock1, _ = throttle(1.0)
    assert t1.after(1.0, overlapped=True) == 0 and clock1.now == 0


def test_rest_ends_when_serving_goes_idle_or_the_trainer_stops():
    calls = []

    def busy():  # busy for the first 5 polls, then idle
        calls.append(1)
        return len(calls) <= 5

    t, clock, _ = throttle(0.1, busy=busy)
    rested = t.after(1.0, overlapped=True)  # would owe 9 s
    assert rested == pytest.approx(0.05) and clock.now == pytest.approx(0.05)
    t2, clock2, _ = throttle(0.1, stop=lambda: True)
    assert t2.after(1.0, overlapped=True) == 0


def test_bad_duty_is_refused():
    for duty in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="duty"):
            Throttle(duty, lambda: False)


def test_serving_flag_tells_whether_a_round_overlapped_a_request():
    s = Serving(torch.zeros(3, dtype=torch.int64))
    mark = s.mark()
    assert not s.overlapped(mark)  # idle throughout
    s.begin()
    s.end()
    assert s.overlapped(mark)  # a whole request began and ended during the round
    mark = s.mark()
    s.begin()
    assert s.busy() and s.overlapped(mark)  # busy at the round's end
    mark = s.mark()
    s.end()
    assert s.overlapped(mark)  # busy at the round's start
    assert not s.overlapped(s.mark())


def test_process_config_refuses_a_nice_or_duty_out_of_range():
    from online.trainer.config import ProcessConfig

    for bad in ({"nice": 20}, {"nice": -1}, {"duty": 0.0}, {"duty": 1.01}):
        with pytest.raises(ValueError, match="process.nice"):
            ProcessConfig(**bad).validate()
    ProcessConfig(nice=19, duty=0.05).validate()
