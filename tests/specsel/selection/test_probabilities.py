"""The read-only view of a selector's current distribution over its drafters (`Selector.probabilities`, the learners'
`probs()`): what the server's selection-weight gauge reports. Reading it changes nothing."""

import pytest

from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector


def test_a_hedge_selector_reports_its_learner_s_distribution_as_it_learns():
    sel = Selector(make_learner("normal_hedge", 3), 3, 4, reward="none")
    assert sel.probabilities() == pytest.approx([1 / 3] * 3)
    for _ in range(5):
        sel.learner.update([0.9, 0.1, 0.5])  # drafter 1 loses least
    p = sel.probabilities()
    assert p == sel.learner.probs() and sum(p) == pytest.approx(1.0) and max(p) == p[1] > 0.5
    before = (list(sel.learner.regrets), sel.learner.rng.getstate())
    sel.probabilities()
    assert (list(sel.learner.regrets), sel.learner.rng.getstate()) == before  # read-only


def test_fixed_reports_one_for_its_drafter_and_index_learners_none():
    fixed = Selector(make_learner("fixed", 3, arm=2), 3, 4, reward="none")
    assert fixed.probabilities() == [0.0, 0.0, 1.0] and fixed.select() == 2
    assert Selector(make_learner("uniform", 4), 4, 4, reward="none").probabilities() == [0.25] * 4
    assert Selector(make_learner("ucb", 2), 2, 4, reward="be").probabilities() is None  # it picks by index
