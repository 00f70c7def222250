"""The step acceptance rule on scripted steps with known accepted prefixes, and the pair a rejection gives."""

import pytest

from specsel.lookahead.accept import PreferencePair, accept_steps

DELIM = 0  # token 0 ends a step in these scripts


def done(step):
    return bool(step) and step[-1] == DELIM


def same(d, t):  # a judge that compares the steps' first tokens
    return d[0] == t[0]


CTX = [7, 7]
TARGET = [[1, 11, DELIM], [2, 12, DELIM], [3, 13, DELIM], [4, 14, DELIM]]


@pytest.mark.parametrize("drafted, accepted", [
    ([[1, 5, DELIM], [2, 5, DELIM], [3, 5, DELIM]], 3),  # all agree: the target's bonus step t_3 follows
    ([[1, 5, DELIM], [9, 5, DELIM], [3, 5, DELIM]], 1),  # the second disagrees: the third is not looked at
    ([[9, 5, DELIM], [2, 5, DELIM], [3, 5, DELIM]], 0),
    ([[1, 5, DELIM], [2, 5], [3, 5, DELIM]], 1),  # unfinished second step: rejected unjudged
])
def test_longest_agreeing_prefix_then_the_targets_step(drafted, accepted):
    res = accept_steps(CTX, drafted, TARGET, same, done)
    assert res.accepted == accepted
    assert res.committed == [t for d in drafted[:accepted] for t in d] + TARGET[accepted]
    if accepted == len(drafted):
        assert res.pair is None and res.judged == 3
    else:
        prompt = CTX + [t for d in drafted[:accepted] for t in d]
        assert res.pair == PreferencePair(prompt, TARGET[accepted], drafted[accepted])
        assert res.judged == accepted + (1 if done(drafted[accepted]) else 0)


def test_a_round_needs_gamma_plus_one_target_steps():
    with pytest.raises(ValueError, match="one more target step"):
        accept_steps(CTX, [[1, DELIM]], [[1, DELIM]], same, done)
