"""The acceptance guard's rules (online/trainer/guard.py) on versions whose held-out acceptance is known: never blind,
the best version known (the offline one included) is the bar, a served version that falls below it is rolled back, and
measurements are reused while the rows stay the same."""

import torch

from online.trainer.guard import Guard


def version(acc: float) -> dict[str, torch.Tensor]:
    return {"w": torch.tensor([acc], dtype=torch.float64)}


class Rows:
    """Held-out rows whose acceptance of a version is its weight, plus a per-rows shift; counts measurements."""

    def __init__(self):
        self.rows, self.calls, self.shift = 1, 0, {}

    def measure(self, w) -> float:
        self.calls += 1
        return float(w["w"]) + self.shift.get(float(w["w"]), 0.0)


def test_no_rows_no_publish_and_no_guard_publishes_all():
    g, r = Guard(version(0.5), margin=0.02), Rows()
    v = g.check(version(0.9), r.measure, r.rows, have_rows=False)
    assert v.action == "hold" and v.weights is None and r.calls == 0
    off = Guard(version(0.5), margin=0.02, enabled=False)
    assert off.check(version(0.1), r.measure, r.rows, have_rows=False).ok  # asked for no guard


def test_the_bar_is_the_best_version_known_not_the_last_published():
    g, r = Guard(version(0.60), margin=0.02), Rows()
    assert g.check(version(0.59), r.measure, r.rows, True).ok  # within the margin of the offline 0.60
    # 0.58 is within the margin of the published 0.59 (the old rule let such steps drift down) but not of 0.60
    v = g.check(version(0.575), r.measure, r.rows, True)
    assert v.action == "hold" and v.best == 0.60 and v.published == 0.59
    v = g.check(version(0.70), r.measure, r.rows, True)  # a better one becomes the bar
    assert v.ok and float(g.best["w"]) == 0.70 and v.offline == 0.60  # what the pay schedule measures gains from
    assert g.check(version(0.66), r.measure, r.rows, True).action == "hold"  # 0.66 < 0.70 - 0.02


def test_a_served_version_below_the_best_is_rolled_back():
    g, r = Guard(version(0.60), margin=0.02), Rows()
    assert g.check(version(0.65), r.measure, r.rows, True).ok  # best and published: 0.65
    r.rows += 1
    r.shift = {0.65: -0.10}  # on new rows the published version is worse than the offline one
    v = g.check(version(0.40), r.measure, r.rows, True)
    assert v.action == "rollback" and v.published == 0.55 and v.best == 0.60
    assert float(v.weights["w"]) == 0.60 and g.published is g.offline and g.rollbacks == 1 and g.rejected == 1


def test_measurements_are_reused_while_the_rows_stay():
    g, r = Guard(version(0.60), margin=0.02), Rows()
    g.check(version(0.61), r.measure, r.rows, True)
    calls = r.calls
    g.check(version(0.62), r.measure, r.rows, True)
    assert r.calls == calls + 1  # the candidate only
    r.rows += 1
    g.check(version(0.63), r.measure, r.rows, True)
    assert r.calls == calls + 1 + 3  # new rows: offline, best (= published: one version, one measure), candidate


def test_state_round_trip():
    g, r = Guard(version(0.60), margin=0.02), Rows()
    g.check(version(0.70), r.measure, r.rows, True)
    h = Guard(version(0.10), margin=0.02)
    h.load_state(g.state())
    assert [float(h.offline["w"]), float(h.best["w"]), float(h.published["w"])] == [0.60, 0.70, 0.70]
