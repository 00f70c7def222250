"""The corpus-or-request rule benchmark on a hand-made member and answers: counts are exact, rules differ as built."""

from benchmarks import suffix_rules
from draftpool.models.suffix import build_suffix


def test_accepted_counts_the_leading_matches():
    assert suffix_rules.accepted([4, 5, 9], [1, 2, 3, 4, 5, 6], 3) == 2
    assert suffix_rules.accepted([4, 5], [1, 2, 3, 4], 3) == 1  # the answer ends
    assert suffix_rules.accepted([], [1, 2], 1) == 0


def test_a_misleading_corpus_loses_under_choose_not_under_the_score():
    """The answer repeats the prompt; the corpus has seen its n-grams continue otherwise, often."""
    cycle = list(range(20, 32))
    model = build_suffix([[c, 99, 98, 97, 96] for c in cycle] * 10, 128, depth=8, min_prob=0.0)
    rows = [{"prompt_ids": cycle, "response_ids": cycle * 2}]
    res = suffix_rules.domain_rules(model, rows, 4)
    assert res["starts"] == len(cycle) * 2 - 1
    assert res["choose"] > res["score"] >= res["corpus"]
    assert res["choose"] == res["request"]  # here every request match is the longer one


def test_bad_arguments(capsys):
    assert suffix_rules.main(["--answers", "0"]) == 2
    assert "--answers" in capsys.readouterr().err
