"""Step segmentation on the target's real tokenizer: cut after the token that completes the delimiter, at the token
cap, never inside a token; steps concatenate back to the ids; bad specs refused."""

import pytest
from transformers import AutoTokenizer

from specsel.lookahead.steps import StepCutter, StepSpec


@pytest.fixture(scope="module")
def tok(target_info):
    return AutoTokenizer.from_pretrained(target_info.path)


def test_steps_end_with_the_delimiter_and_join_back(tok):
    text = "First, 3 apples cost $6.\n\nSo one apple costs $2.\n\nThe answer is 2"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    cut = StepCutter(tok)
    steps = cut.split(ids)
    assert [t for s in steps for t in s] == ids
    assert [cut.text(s) for s in steps] == ["First, 3 apples cost $6.\n\n", "So one apple costs $2.\n\n",
                                            "The answer is 2"]
    assert [cut.delimited(s) for s in steps] == [True, True, False]  # a half sentence is unfinished
    assert all(not cut.ends(s[:-1]) for s in steps[:2])  # no earlier cut inside a step


def test_the_token_cap_and_another_delimiter(tok):
    ids = tok(" word" * 250, add_special_tokens=False)["input_ids"]
    cut = StepCutter(tok, StepSpec(max_tokens=100))
    assert [len(s) for s in cut.split(ids)] == [100, 100, len(ids) - 200]
    lines = StepCutter(tok, StepSpec(delimiter="\n", max_tokens=100))
    ids = tok("a = 1\nb = 2\nc", add_special_tokens=False)["input_ids"]
    assert [lines.text(s) for s in lines.split(ids)] == ["a = 1\n", "b = 2\n", "c"]


def test_a_token_that_carries_the_delimiter_and_more_stays_whole(tok):
    cut = StepCutter(tok)
    ids = tok("Done.\n\n\nNext", add_special_tokens=False)["input_ids"]
    steps = cut.split(ids)
    assert [t for s in steps for t in s] == ids and cut.delimited(steps[0])
    assert "".join(cut.text(s) for s in steps) == "Done.\n\n\nNext"


@pytest.mark.parametrize("kw, match", [({"delimiter": ""}, "non-empty"), ({"max_tokens": 0}, "max_tokens")])
def test_bad_specs(kw, match):
    with pytest.raises(ValueError, match=match):
        StepSpec(**kw)
