"""Diversity figures of a prompt set: distinct word n-gram ratios, the near-duplicate rate, and one set's report.

Word n-grams are over `\\w+` tokens, lowercased, within each prompt (none spans two prompts). Two prompts are
near-duplicates when their token sets (`data_gen.domains.prompt_tokens`) have a Jaccard of at least
`NEAR_DUPLICATE_JACCARD`; `near_duplicate_pairs` finds every such pair exactly, and `scripts/freeze_prompts.py` joins
template groups along them for its leak-free split.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from data_gen.domains import NEAR_DUPLICATE_JACCARD, prompt_tokens, token_jaccard

_WORD = re.compile(r"\w+")


def word_ngrams(text: str, n: int) -> list[tuple[str, ...]]:
    """The word n-grams of one text, in order: lowercase `\\w+` tokens, n at a time."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    words = _WORD.findall(text.lower())
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


def distinct_ngram_ratio(prompts: Iterable[str], n: int) -> float:
    """Distinct word n-grams / all word n-grams over the prompts (1.0: no n-gram repeats; 0.0 when there are none)."""
    total = 0
    distinct: set[tuple[str, ...]] = set()
    for p in prompts:
        grams = word_ngrams(p, n)
        total += len(grams)
        distinct.update(grams)
    return len(distinct) / total if total else 0.0


def sampled_distinct_ngram_ratio(prompts: Sequence[str], n: int, size: int, samples: int = 5, seed: int = 0) -> float:
    """`distinct_ngram_ratio` at a fixed set size: its mean over `samples` seeded random samples of `size` prompts
    (the whole list, once, when it has no more than `size`). The ratio falls as a set grows even when its prompts
    are no less varied (n-grams recur), so sets of different sizes are compared at one size."""
    if len(prompts) <= size:
        return distinct_ngram_ratio(prompts, n)
    rng = random.Random(seed)
    return sum(distinct_ngram_ratio(rng.sample(list(prompts), size), n) for _ in range(samples)) / samples


def _prefix_length(size: int, threshold: float) -> int:
    """How many of a token set's rarest tokens must be indexed so that any set with Jaccard >= threshold shares one
    of them: a pair with Jaccard >= t overlaps in at least ceil(t * max size) tokens, so the prefixes of
    size - overlap + 1 tokens meet. floor (not ceil) keeps the prefix a token longer wherever t * size is an integer,
    to be safe from float rounding: a longer prefix only adds candidates, each one checked exactly."""
    return min(size, size - math.floor(threshold * size) + 1)


def near_duplicate_pairs(prompts: Sequence[str], threshold: float = NEAR_DUPLICATE_JACCARD) -> list[tuple[int, int]]:
    """Every index pair (i, j), i < j, sorted, of prompts whose token Jaccard is >= threshold.

    Exact, by prefix filtering: each token set is ordered rarest token first (ties by the token), and only pairs
    sharing a token of their prefixes (`_prefix_length`) whose sizes allow the threshold (Jaccard <= smaller size /
    larger size) are compared with `token_jaccard`. Two empty token sets count as near-duplicates (Jaccard 1.0)."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    tokens = [prompt_tokens(p) for p in prompts]
    freq = Counter(t for toks in tokens for t in toks)
    pairs: set[tuple[int, int]] = set()
    empty = [i for i, toks in enumerate(tokens) if not toks]
    pairs.update((a, b) for k, a in enumerate(empty) for b in empty[k + 1:])
    index: dict[str, list[int]] = defaultdict(list)  # token -> the (smaller or equal) sets seen so far with it
    for i in sorted((i for i, toks in enumerate(tokens) if toks), key=lambda i: (len(tokens[i]), i)):
        toks = tokens[i]
        prefix = sorted(toks, key=lambda t: (freq[t], t))[:_prefix_length(len(toks), threshold)]
        seen: set[int] = set()
        for t in prefix:
            for j in index[t]:
                if j in seen:
                    continue
                seen.add(j)
                if len(tokens[j]) / len(toks) >= threshold and token_jaccard(tokens[i], tokens[j]) >= threshold:
                    pairs.add((min(i, j), max(i, j)))
            index[t].append(i)
    return sorted(pairs)


def near_duplicate_rate(prompts: Sequence[str], threshold: float = NEAR_DUPLICATE_JACCARD) -> float:
    """The share of prompts with at least one other prompt of the list at token Jaccard >= threshold (0.0 if empty).
    A prompt repeated verbatim counts: its copies are near-duplicates of each other."""
    if not prompts:
        return 0.0
    flagged = {k for pair in near_duplicate_pairs(prompts, threshold) for k in pair}
    return len(flagged) / len(prompts)


def set_report(rows: Sequence[dict[str, str]]) -> dict[str, float | int]:
    """One prompt set's figures from its {"prompt", "group", "split"} rows: prompts, groups, train, held_out,
    distinct_2gram, distinct_3gram, near_duplicate_rate (within the set) and mean_words (`\\w+` words a prompt)."""
    prompts = [r["prompt"] for r in rows]
    held = sum(r["split"] == "held_out" for r in rows)
    return {
        "prompts": len(prompts),
        "groups": len({r["group"] for r in rows}),
        "train": len(prompts) - held,
        "held_out": held,
        "distinct_2gram": distinct_ngram_ratio(prompts, 2),
        "distinct_3gram": distinct_ngram_ratio(prompts, 3),
        "near_duplicate_rate": near_duplicate_rate(prompts),
        "mean_words": sum(len(_WORD.findall(p)) for p in prompts) / len(prompts) if prompts else 0.0,
    }
