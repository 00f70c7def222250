"""The per-cycle rule (`CalibratedRate`) on seeded streams: scores calibrated per bin, model arms by their own cycles,
costs in the value, switching within a stream, exploration of idle model arms, bad input."""

import random

import pytest

from specsel.selection.learners.calibrated_rate import CalibratedRate

K = 4


def test_an_overconfident_score_is_calibrated_down():
    """Arm 0 scores 4 and is confirmed for 1 draft; arm 1 scores 2 and gets 2: after a few outcomes arm 1 wins."""
    rule = CalibratedRate([True, True], K, prior_weight=2.0)
    assert rule.select([4.0, 2.0]) == 0  # the prior is the score itself
    for _ in range(20):
        rule.observe_score(0, 4.0, 1)
        rule.observe_score(1, 2.0, 2)
        rule.update(rule.select([4.0, 2.0]), 0, 0.1)
    assert rule.expected(0, 4.0) == pytest.approx((20 * 1 + 2 * 4) / 22)
    assert rule.select([4.0, 2.0]) == 1


def test_switches_per_cycle_between_a_scored_and_a_model_arm():
    """A seeded stream where the model-free member is confirmed for exactly its score, and a head that accepts 2 per
    cycle: with equal costs the rule drafts with the member when its score is above 2 and with the head otherwise."""
    rng = random.Random(0)
    rule = CalibratedRate([True, False], K)
    picks = []
    for t in range(400):
        s = rng.choice([0.0, 0.5, 1.0, 3.0, 4.0])
        arm = rule.select([s, None])
        rule.observe_score(0, s, int(s))
        rule.update(arm, 2 if arm == 1 else int(s), 0.05)
        if t >= 100:
            picks.append((s, arm))
    by_score = {s: {a for ss, a in picks if ss == s} for s in (0.0, 0.5, 1.0, 3.0, 4.0)}
    assert by_score[3.0] == by_score[4.0] == {0}
    assert by_score[0.0] == by_score[0.5] == by_score[1.0] == {1}

def test_cost_is_in_the_value():
    """Two model arms accepting 2 per cycle: the one whose cycles take half the time is played."""
    rule = CalibratedRate([True, False, False], K, explore=1000)
    for _ in range(50):
        arm = rule.select([0.0, None, None])
        rule.update(arm, {0: 0, 1: 2, 2: 2}[arm], {0: 0.05, 1: 0.2, 2: 0.1}[arm])
    assert rule.select([0.0, None, None]) == 2
    assert rule.last_values[2] == pytest.approx(3 / 0.1, rel=0.05)


def test_an_idle_model_arm_is_explored_again():
    rule = CalibratedRate([True, False], K, explore=8)
    assert rule.select([4.0, None]) == 1  # never drafted: drafts first
    rule.update(1, 0, 0.1)
    picks = []
    for _ in range(30):
        arm = rule.select([4.0, None])
        rule.observe_score(0, 4.0, 4)
        rule.update(arm, 0 if arm == 1 else 4, 0.1)
        picks.append(arm)
    assert picks.count(1) == 3 and picks[8] == 1  # once every 8 idle cycles, else the confident member


def test_bad_input():
    with pytest.raises(ValueError):
        CalibratedRate([], K)
    with pytest.raises(ValueError):
        CalibratedRate([True], 0)
    with pytest.raises(ValueError):
        CalibratedRate([True], K, alpha=0.0)
    rule = CalibratedRate([True, False], K)
    with pytest.raises(ValueError):
        rule.select([1.0])
    with pytest.raises(ValueError):
        rule.observe_score(1, 1.0, 1)
    with pytest.raises(ValueError):
        rule.update(0, 1, float("nan"))


def test_a_scored_proposal_costs_what_cycles_of_its_length_cost():
    """Scored arms share a cost per drafted length (their drafting is a lookup): of two proposals expecting about one
    accepted draft, the one of 1 token (0.1 s cycles) wins over the one of 4 tokens (0.3 s cycles)."""
    rule = CalibratedRate([True, True], K)
    rule.update(0, 0, 0.1, length=1)
    rule.update(1, 0, 0.3, length=4)
    assert rule.select([1.0, 1.1], [4, 1]) == 1
    assert rule.select([1.0, 1.1], [1, 4]) == 0
    assert rule._cost(0, 3) == pytest.approx(0.3)  # unmeasured length: the nearest measured one


def test_a_model_arm_s_confidence_is_calibrated_per_bin():
    """A head that accepts 4 drafts when it is sure (0.9) and none when it is not (0.2), a member scoring 1 that is
    confirmed for 1: after a seeded stream the head drafts at 0.9 and the member at 0.2."""
    rng = random.Random(1)
    rule = CalibratedRate([True, False], K, explore=4)
    for _ in range(300):
        c = rng.choice([0.2, 0.9])
        arm = rule.select([1.0, c])
        rule.observe_score(0, 1.0, 1)
        rule.update(arm, (4 if c > 0.5 else 0) if arm == 1 else 1, 0.1)
    assert rule.select([1.0, 0.9]) == 1 and rule.select([1.0, 0.2]) == 0
    assert rule.expected(1, 0.95) > 3 and rule.expected(1, 0.25) < rule.expected(0, 1.0)
    assert rule.leading_model_arm() == 1


def test_a_head_is_read_only_where_its_confidence_could_win():
    rule = CalibratedRate([True, False], K)
    rule.update(1, 1, 0.1)  # the head: about 1 accepted draft per 0.1 s cycle
    rule.update(0, 0, 0.1, length=4)
    assert rule.worth_reading(1, [0.2, None], [4, None])  # a weak proposal: the head may beat it
    assert not rule.worth_reading(1, [4.0, None], [4, None])  # a sure chain of 4: no confidence of the head beats it


def test_forgetting_follows_a_member_whose_proposals_stop_holding():
    """100 proposals of score 4 confirmed in full, then 30 confirmed for none (the stream changed domain): with
    `forget` the calibration follows the change, without it the old outcomes still dominate."""
    keep, fade = CalibratedRate([True], K), CalibratedRate([True], K, forget=0.05)
    for rule in (keep, fade):
        for accepted in [4] * 100 + [0] * 30:
            rule.observe_score(0, 4.0, accepted)
    assert keep.expected(0, 4.0) > 2.5 and fade.expected(0, 4.0) < 1.5
    with pytest.raises(ValueError):
        CalibratedRate([True], K, forget=1.0)
