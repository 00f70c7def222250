"""The shipped word problems: at least 200, unique, every answer recomputable from the generator, two disjoint splits;
answers read from \\boxed{} or the last number."""

import json

import pytest

from data_gen.problems import PROBLEMS, extract_answer, is_correct, load_problems
from scripts.make_word_problems import main as make


def test_at_least_200_unique_problems_in_two_disjoint_splits():
    stream, held = load_problems("stream"), load_problems("eval")
    assert len(stream) + len(held) >= 200 and len(held) >= 40
    ids = [r["id"] for r in stream + held]
    assert len(set(ids)) == len(ids) and len({r["question"] for r in stream + held}) == len(ids)
    assert {r["group"] for r in held} <= {r["group"] for r in stream}  # every template seen in both
    with pytest.raises(ValueError, match="unknown split"):
        load_problems("test")


def test_the_file_is_what_the_generator_writes(tmp_path, monkeypatch):
    import scripts.make_word_problems as gen

    monkeypatch.setattr(gen, "OUT", tmp_path / "p.jsonl")
    assert make([]) == 0
    assert (tmp_path / "p.jsonl").read_text() == PROBLEMS.read_text()
    rows = [json.loads(line) for line in PROBLEMS.read_text().splitlines()]
    assert all(isinstance(r["answer"], int | float) for r in rows)


def test_answers_are_read_from_boxed_or_the_last_number():
    assert extract_answer("So 3 + 4 = 7, and the answer is \\boxed{7}. Check: 7 - 4 = 3") == 7
    assert extract_answer("The total is $1,250.50 in all.") == 1250.5
    assert extract_answer("no number here") is None
    assert is_correct("... = 36 eggs.\n\nThe answer is \\boxed{36}", 36) and not is_correct("about 35", 36)
