"""The pay schedule: the trainer trains while the guard measures gains, rests when it does not, and wakes when the
traffic moves (online/trainer/payoff.py). Torch-free, on seeded streams."""

import random

import pytest

from online.trainer.payoff import PaySchedule


def run(s: PaySchedule, gains, fresh=lambda i: 0.5) -> list[int]:
    """Rounds 0..n-1; gains(i) the guard's outcome of a round trained at i -> the rounds that trained."""
    trained = []
    for i in range(len(gains)):
        if s.train_now():
            trained.append(i)
            s.result(gains[i])
        else:
            s.fresh(fresh(i))
    return trained


def test_patience_zero_trains_every_round():
    assert run(PaySchedule(0), [False] * 30) == list(range(30))


def test_rounds_without_gains_rest_longer_and_longer_up_to_the_cap():
    s = PaySchedule(patience=3, max_rest=8)
    trained = run(s, [False] * 40)
    # 3 dry rounds train, then one in 2, one in 4, one in 8, one in 8 ...
    assert trained == [0, 1, 2, 4, 8, 16, 24, 32]
    assert s.rest == 8 and s.skipped == 40 - len(trained)


def test_a_gain_ends_the_rest_at_once():
    s = PaySchedule(patience=2, max_rest=16)
    assert run(s, [False] * 20) == [0, 1, 3, 7, 15]
    s = PaySchedule(patience=2, max_rest=16)
    gains = [False] * 7 + [True] + [False] * 12  # round 7 trains (rest 4) and gains
    trained = run(s, gains)
    assert trained[:5] == [0, 1, 3, 7, 8]  # after the gain: every round until `patience` dry rounds again
    assert 9 in trained


def test_a_drop_in_fresh_acceptance_wakes_a_resting_trainer_and_noise_does_not():
    rng = random.Random(0)
    noise = [0.40 + rng.gauss(0, 0.02) for _ in range(200)]
    s = PaySchedule(patience=2, max_rest=16, wake_drop=0.08)
    trained = run(s, [False] * 200, fresh=lambda i: noise[i])
    assert s.wakes == 0 and len(trained) < 20  # 0.02 noise around a steady level never wakes it
    s = PaySchedule(patience=2, max_rest=16, wake_drop=0.08)
    shifted = lambda i: noise[i] if i < 100 else noise[i] - 0.2  # noqa: E731 - the traffic moves at round 100
    trained = run(s, [False] * 200, fresh=shifted)
    first = min(t for t in trained if t >= 100)
    assert s.wakes == 1 and first <= 102  # the first resting round after the move wakes it
    assert first + 1 in trained  # woken: it trains every round again until `patience` dry rounds (2 here)


def test_state_round_trips_and_bad_settings_are_refused():
    s = PaySchedule(patience=2)
    run(s, [False] * 12)
    t = PaySchedule(patience=2)
    t.load_state(s.state())
    assert t.state() == s.state() and t.train_now() == s.train_now()
    for bad in ({"patience": -1}, {"patience": 1, "max_rest": 0}, {"patience": 1, "wake_drop": 0}):
        with pytest.raises(ValueError, match="pay schedule"):
            PaySchedule(**bad)
