"""Prompt-set generators, one module per set, each with `prompts() -> list[tuple[str, str]]`: (group, prompt) pairs
in a fixed order. `scripts/freeze_prompts.py` freezes them to `data_gen/prompts/<set>.jsonl`. Shared here: the
family collector (`from_families`), topics asked several kinds of question (`topic_grid`) and slot-filled families
(`slot_families`); the last two drop a prompt that is a near-duplicate of one already kept in its group."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable


def from_families(families: dict[str, Callable[[], Iterable[str]] | Iterable[str]], seed: int,
                  minimum: int = 340) -> list[tuple[str, str]]:
    """(group, prompt) pairs of named families in a fixed, deterministic order: a templated family's (a callable's)
    prompts share its name as group; every prompt of a standalone list is its own group ("what-if-3"). Whitespace is
    normalised, duplicates dropped, the order shuffled with `seed`."""
    seen = set()
    out = []
    for name, family in families.items():
        if callable(family):
            items = [(name, p) for p in family()]
        else:
            items = [(f"{name}-{i}", p) for i, p in enumerate(family, start=1)]
        for group, p in items:
            p = " ".join(p.split())
            if p and p not in seen:
                seen.add(p)
                out.append((group, p))
    random.Random(seed).shuffle(out)
    assert len(out) >= minimum, len(out)
    assert all(p and p == p.strip() for _, p in out)
    return out


def topic_grid(topics: list[tuple[str, str]], forms: dict[str, str], per_topic: int, seed: int,
               taken: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(group, prompt) pairs asking about every topic `per_topic` different kinds of question. `topics` are
    (topic, context) pairs, filled in as {t} and {c}; `forms` maps a question kind's name (its prompts' group) to
    its template. Each topic gets the kinds used least so far (ties broken by a `seed`ed RNG), so every kind is
    asked about as many topics as the others. A prompt that repeats one in `taken`, or that is a near-duplicate
    (token Jaccard >= NEAR_DUPLICATE_JACCARD) of one already kept in its group, is dropped: a kind gives as many
    prompts as its topics really differ. The order is shuffled with `seed`."""
    from data_gen.domains import NEAR_DUPLICATE_JACCARD, prompt_tokens, token_jaccard

    rng = random.Random(seed)
    used = dict.fromkeys(forms, 0)
    kept: dict[str, list[frozenset[str]]] = {name: [] for name in forms}
    seen = set(taken)
    out = []
    for topic, context in topics:
        names = sorted(forms, key=lambda name: (used[name], rng.random()))[:per_topic]
        for name in names:
            used[name] += 1
            text = " ".join(forms[name].format(t=topic, c=context).split())
            text = text[0].upper() + text[1:]
            tokens = prompt_tokens(text)
            if text in seen or any(token_jaccard(tokens, u) >= NEAR_DUPLICATE_JACCARD for u in kept[name]):
                continue
            seen.add(text)
            kept[name].append(tokens)
            out.append((name, text))
    rng.shuffle(out)
    return out


def slot_families(families: list[tuple[str, list[str], dict[str, list[str]], int]], seed: int,
                  taken: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(group, prompt) pairs from slot-filled families: (name, templates, slots, cap). A family's templates are
    filled from every combination of its slot values ({a}, {b} ... name slots), in an order shuffled with `seed`
    that spreads the first slot's values, with the templates taken in turn; the family keeps up to `cap` prompts,
    dropping any that repeats one in `taken` or is a near-duplicate (token Jaccard >= NEAR_DUPLICATE_JACCARD) of
    one it kept. A family's prompts share its name as group. The order is shuffled with `seed`."""
    import itertools

    from data_gen.domains import NEAR_DUPLICATE_JACCARD, prompt_tokens, token_jaccard

    rng = random.Random(seed)
    seen = set(taken)
    out = []
    for name, templates, slots, cap in families:
        keys = list(slots)
        combos = list(itertools.product(*(slots[k] for k in keys)))
        rng.shuffle(combos)
        first_seen: dict[str, int] = {}
        order = []
        for combo in combos:  # the k-th combination of each first-slot value comes in round k
            k = first_seen.get(combo[0], 0)
            first_seen[combo[0]] = k + 1
            order.append((k, len(order), combo))
        order.sort()
        kept: list[frozenset[str]] = []
        for n, (_, _, combo) in enumerate(order):
            if len(kept) == cap:
                break
            text = templates[n % len(templates)].format(**dict(zip(keys, combo)))
            text = " ".join(text.split())
            text = text[0].upper() + text[1:]
            tokens = prompt_tokens(text)
            if text in seen or any(token_jaccard(tokens, u) >= NEAR_DUPLICATE_JACCARD for u in kept):
                continue
            seen.add(text)
            kept.append(tokens)
            out.append((name, text))
    rng.shuffle(out)
    return out
