"""data_gen.diversity: distinct n-gram ratios, the exact near-duplicate pair search, the near-duplicate rate and one
set's report, on small hand-made lists with known answers and against a brute-force search."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from data_gen.diversity import (
    distinct_ngram_ratio,
    near_duplicate_pairs,
    near_duplicate_rate,
    sampled_distinct_ngram_ratio,
    set_report,
    word_ngrams,
)
from data_gen.domains import NEAR_DUPLICATE_JACCARD, PROMPT_SETS, PROMPTS_DIR, prompt_tokens, token_jaccard


def brute_force_pairs(prompts, threshold=NEAR_DUPLICATE_JACCARD):
    tokens = [prompt_tokens(p) for p in prompts]
    return [(i, j) for i, j in itertools.combinations(range(len(prompts)), 2)
            if token_jaccard(tokens[i], tokens[j]) >= threshold]


def test_word_ngrams():
    assert word_ngrams("The cat, the HAT!", 2) == [("the", "cat"), ("cat", "the"), ("the", "hat")]
    assert word_ngrams("one", 2) == []
    with pytest.raises(ValueError):
        word_ngrams("a b", 0)


def test_distinct_ratio_of_a_repeated_list():
    # "a b c" twice: 2-grams ab, bc, ab, bc -> 2 distinct of 4; 3-grams abc, abc -> 1 of 2
    assert distinct_ngram_ratio(["a b c", "a b c"], 2) == 0.5
    assert distinct_ngram_ratio(["a b c", "a b c"], 3) == 0.5
    # the same prompt k times: 1/k of its n-grams are distinct
    assert distinct_ngram_ratio(["write a short poem about rain"] * 4, 2) == 0.25
    # "the cat sat" + "the cat ran": the-cat, cat-sat, the-cat, cat-ran -> 3 of 4
    assert distinct_ngram_ratio(["the cat sat", "the cat ran"], 2) == 0.75
    assert distinct_ngram_ratio(["the cat sat", "the cat ran"], 3) == 1.0
    assert distinct_ngram_ratio(["one", "two"], 2) == 0.0  # no 2-grams at all
    assert distinct_ngram_ratio([], 3) == 0.0
    assert distinct_ngram_ratio(["No Repeats Here at all"], 2) == 1.0


def test_sampled_distinct_ratio():
    prompts = [f"prompt number {i} about topic {i % 7}" for i in range(40)]
    assert sampled_distinct_ngram_ratio(prompts, 2, 40) == distinct_ngram_ratio(prompts, 2)  # no sampling
    a = sampled_distinct_ngram_ratio(prompts, 2, 10, seed=3)
    assert a == sampled_distinct_ngram_ratio(prompts, 2, 10, seed=3)  # seeded
    assert distinct_ngram_ratio(prompts, 2) < a <= 1.0  # fewer prompts, fewer repeats


def test_near_duplicate_rate_with_a_reworded_pair():
    prompts = [
        "Write a short poem about the sea at night.",  # 9 tokens
        "Write a short poem about the sea at dawn.",  # shares 8 of 10: Jaccard 0.8
        "How do I unclog a bathroom sink?",
        "Explain what inflation is in simple words.",
        "Plan a three-day trip to Vienna for a family.",
    ]
    assert near_duplicate_pairs(prompts) == [(0, 1)]
    assert near_duplicate_rate(prompts) == 2 / 5
    assert near_duplicate_rate(prompts[2:]) == 0.0
    assert near_duplicate_rate([]) == 0.0
    assert near_duplicate_rate(["same words here", "same words here", "other"]) == 2 / 3  # verbatim copies count


def test_threshold_is_inclusive():
    ten, seven, six = "a b c d e f g h i j", "a b c d e f g", "a b c d e f"
    assert near_duplicate_pairs([ten, seven]) == [(0, 1)]  # Jaccard exactly 0.7
    assert near_duplicate_pairs([ten, six]) == []  # 0.6
    assert near_duplicate_pairs([ten, six], threshold=0.6) == [(0, 1)]
    assert near_duplicate_pairs(["!!!", "a", "..."]) == [(0, 2)]  # two empty token sets: Jaccard 1.0
    with pytest.raises(ValueError):
        near_duplicate_pairs([ten], threshold=0.0)


@pytest.mark.parametrize("threshold", [0.5, NEAR_DUPLICATE_JACCARD, 0.9, 1.0])
def test_pairs_match_brute_force_on_random_lists(threshold):
    """Many near-duplicates of varied sizes: prompts drawn from a few base token lists with some tokens swapped."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)]
    bases = [rng.sample(vocab, rng.randint(2, 25)) for _ in range(15)]
    prompts = []
    for _ in range(400):
        words = list(rng.choice(bases))
        for _ in range(rng.randint(0, 3)):
            words[rng.randrange(len(words))] = rng.choice(vocab)
        prompts.append(" ".join(words[: rng.randint(1, len(words))]))
    expected = brute_force_pairs(prompts, threshold)
    assert len(expected) > 100
    assert near_duplicate_pairs(prompts, threshold) == expected


def test_pairs_match_brute_force_on_shipped_prompts():
    """A sample of the shipped prompts of every set, plus whole template groups (where near-duplicates are)."""
    rows = [json.loads(line) for name in PROMPT_SETS
            for line in (PROMPTS_DIR / f"{name}.jsonl").read_text("utf-8").splitlines()]
    rng = random.Random(0)
    groups = sorted({r["group"] for r in rows})
    picked = set(rng.sample(groups, 40))
    prompts = [r["prompt"] for r in rows if r["group"] in picked][:900] + [r["prompt"] for r in rng.sample(rows, 600)]
    expected = brute_force_pairs(prompts)
    assert expected
    assert near_duplicate_pairs(prompts) == expected


def test_set_report():
    rows = [
        {"prompt": "a b c", "group": "g1", "split": "train"},
        {"prompt": "a b c", "group": "g1", "split": "train"},
        {"prompt": "x y z w", "group": "g2", "split": "held_out"},
    ]
    rep = set_report(rows)
    assert rep == {"prompts": 3, "groups": 2, "train": 2, "held_out": 1,
                   "distinct_2gram": 5 / 7, "distinct_3gram": 3 / 4,
                   "near_duplicate_rate": 2 / 3, "mean_words": 10 / 3}
