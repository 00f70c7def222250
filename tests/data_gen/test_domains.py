"""Shipped domains: the frozen prompt files, the leak-free split by group, the general mix, unknown names."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from data_gen import domains
from data_gen.diversity import near_duplicate_pairs
from data_gen.domains import (
    ALL_DOMAINS,
    DOMAINS,
    GENERAL,
    NEAR_DUPLICATE_JACCARD,
    PROMPT_SETS,
    PROMPTS_DIR,
    ROW_KEYS,
    SPLITS,
    UnknownDomainError,
    check_domain,
    domain_prompts,
    prompt_tokens,
    token_jaccard,
)

ROOT = Path(__file__).resolve().parents[2]
MIN_PROMPTS = 1850  # every shipped set, and every domain's table


@pytest.fixture(scope="module")
def tables():
    return {d: domain_prompts(d) for d in ALL_DOMAINS}


@pytest.fixture(scope="module")
def files():
    """Every prompt set's rows, parsed straight from its jsonl file."""
    return {name: [json.loads(line) for line in (PROMPTS_DIR / f"{name}.jsonl").read_text("utf-8").splitlines()]
            for name in PROMPT_SETS}


def _texts(table, split=None):
    splits = [split] if split else list(SPLITS)
    return [r["prompt"] for s in splits for r in table[s]]


def near_duplicate_leaks(files: dict[str, list[dict]]) -> dict[str, list[tuple[float, str, str]]]:
    """Per set: (Jaccard, held-out prompt, nearest train prompt) for each of its held-out prompts whose token Jaccard
    with some train prompt of any set is >= NEAR_DUPLICATE_JACCARD. The pairs come from the exact search of
    data_gen.diversity (checked against a brute-force search in tests/data_gen/test_diversity.py)."""
    rows = [(name, r) for name, set_rows in files.items() for r in set_rows]
    tokens = [prompt_tokens(r["prompt"]) for _, r in rows]
    best: dict[int, tuple[float, str]] = {}
    for i, j in near_duplicate_pairs([r["prompt"] for _, r in rows]):
        for held, train in ((i, j), (j, i)):
            if rows[held][1]["split"] == "held_out" and rows[train][1]["split"] == "train":
                jac = token_jaccard(tokens[held], tokens[train])
                if jac > best.get(held, (0.0, ""))[0]:
                    best[held] = (jac, rows[train][1]["prompt"])
    leaks: dict[str, list[tuple[float, str, str]]] = {name: [] for name in files}
    for k, (jac, other) in sorted(best.items()):
        leaks[rows[k][0]].append((jac, rows[k][1]["prompt"], other))
    return leaks


def test_domain_lists():
    assert GENERAL not in DOMAINS
    assert set(ALL_DOMAINS) == {*DOMAINS, GENERAL}
    assert len(set(ALL_DOMAINS)) == len(ALL_DOMAINS)
    assert set(PROMPT_SETS) == {"chat", *DOMAINS}
    assert {p.stem for p in PROMPTS_DIR.glob("*.jsonl")} == set(PROMPT_SETS)


@pytest.mark.parametrize("hashseed", ["0", "1"])
@pytest.mark.tier2
def test_frozen_files_match_generators(hashseed):
    """The committed jsonl files are what scripts/freeze_prompts.py makes, under any interpreter hash seed."""
    out = subprocess.run([sys.executable, "scripts/freeze_prompts.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "PYTHONHASHSEED": hashseed})
    assert out.returncode == 0, out.stdout + out.stderr


def test_rows_well_formed(files):
    ids, prompts = set(), set()
    for name, rows in files.items():
        assert len(rows) >= MIN_PROMPTS, f"{name}: only {len(rows)} prompts"
        for r in rows:
            assert tuple(r) == ROW_KEYS and all(isinstance(v, str) for v in r.values())
            assert r["id"] == f"{name}-{hashlib.sha1(r['prompt'].encode()).hexdigest()[:12]}"
            assert r["split"] in SPLITS
            assert r["group"].startswith(f"{name}/") and r["group"] != f"{name}/"
            assert r["prompt"] and r["prompt"].strip() == r["prompt"]
            assert r["id"] not in ids, f"duplicate id {r['id']}"
            assert r["prompt"] not in prompts, f"prompt repeated: {r['prompt']!r}"
            ids.add(r["id"])
            prompts.add(r["prompt"])


def test_group_never_spans_splits(files):
    split_of_group: dict[str, set[str]] = defaultdict(set)
    for rows in files.values():
        for r in rows:
            split_of_group[r["group"]].add(r["split"])
    spanning = sorted(g for g, s in split_of_group.items() if len(s) > 1)
    assert not spanning, f"groups in both splits: {spanning}"


@pytest.mark.parametrize("name", PROMPT_SETS)
def test_held_out_share(files, name):
    rows = files[name]
    share = sum(r["split"] == "held_out" for r in rows) / len(rows)
    assert 0.15 <= share <= 0.25, f"{name}: held-out share {share:.1%}"


@pytest.mark.tier2
def test_no_held_out_prompt_is_a_near_duplicate_of_a_train_prompt(files):
    """The split does not leak: no held-out prompt of any set has token Jaccard >= 0.7 with a train prompt of any
    set (the general mix trains on every set)."""
    leaks = near_duplicate_leaks(files)
    held = {name: sum(r["split"] == "held_out" for r in rows) for name, rows in files.items()}
    assert not any(leaks.values()), "; ".join(
        f"{name}: {len(found)}/{held[name]} held-out prompts ({len(found) / held[name]:.0%}) leak, e.g. {found[0]}"
        for name, found in leaks.items() if found)


def test_token_jaccard():
    assert prompt_tokens("Hello, hello WORLD_1! x-y") == {"hello", "world_1", "x", "y"}
    a, b = prompt_tokens("a b c d e f g h i j"), prompt_tokens("a b c d e f g")
    assert token_jaccard(a, b) == 0.7 >= NEAR_DUPLICATE_JACCARD  # exactly at the threshold counts
    assert token_jaccard(a, a) == 1.0 and token_jaccard(a, prompt_tokens("k")) == 0.0
    assert token_jaccard(frozenset(), frozenset()) == 1.0


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_counts_and_no_duplicates(tables, domain):
    table = tables[domain]
    assert set(table) == set(SPLITS)
    train, held = _texts(table, "train"), _texts(table, "held_out")
    assert train and held, "both splits must be non-empty"
    assert len(set(train) | set(held)) >= MIN_PROMPTS, f"{domain}: only {len(set(train) | set(held))} distinct prompts"
    assert len(train) == len(set(train)), f"{domain}: duplicate train prompts"
    assert len(held) == len(set(held)), f"{domain}: duplicate held-out prompts"
    assert not set(train) & set(held), f"{domain}: prompts in both splits"
    for r in table["train"] + table["held_out"]:
        assert set(r) == {"id", "prompt", "source", "group"}
        assert r["group"].startswith(r["source"] + "/")


@pytest.mark.parametrize("domain", DOMAINS)
def test_domain_is_its_file(tables, files, domain):
    for split in SPLITS:
        assert [(r["id"], r["prompt"], r["group"]) for r in tables[domain][split]] == [
            (r["id"], r["prompt"], r["group"]) for r in files[domain] if r["split"] == split]


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_ids_unique_and_stable(tables, domain):
    table = tables[domain]
    ids = [r["id"] for s in SPLITS for r in table[s]]
    assert len(ids) == len(set(ids)), f"{domain}: duplicate ids"
    again = domain_prompts(domain)
    assert again == table, "domain_prompts must return the same table twice"
    for r in table["train"] + table["held_out"]:
        assert r["id"].startswith(r["source"] + "-")


def test_rows_read_once_and_returned_fresh():
    assert domains._rows("sql") is domains._rows("sql")
    table = domain_prompts("sql")
    table["train"][0]["prompt"] = "changed"
    table["held_out"].clear()
    assert domain_prompts("sql")["train"][0]["prompt"] != "changed"
    assert domain_prompts("sql")["held_out"]


@pytest.mark.parametrize("line", [
    '{"id": "sql-1", "prompt": "p", "group": "sql/g"',  # not JSON
    '["sql-1", "p", "sql/g", "train"]',  # not an object
    '{"id": "sql-1", "prompt": "p", "group": "sql/g"}',  # a field missing
    '{"id": "sql-1", "prompt": "p", "group": "sql/g", "split": "test"}',  # an unknown split
    '{"id": "sql-1", "prompt": 3, "group": "sql/g", "split": "train"}',  # not a string
])
def test_malformed_line_names_file_and_line(tmp_path, monkeypatch, line):
    good = '{"id": "sql-0", "prompt": "q", "group": "sql/g", "split": "train"}'
    (tmp_path / "sql.jsonl").write_text(f"{good}\n{line}\n", encoding="utf-8")
    monkeypatch.setattr(domains, "PROMPTS_DIR", tmp_path)
    domains._rows.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"sql\.jsonl, line 2"):
            domain_prompts("sql")
    finally:
        domains._rows.cache_clear()


def test_general_mix_composition(tables):
    general = tables[GENERAL]
    sources = {r["source"] for s in SPLITS for r in general[s]}
    assert sources == {"chat", *DOMAINS}
    for split in SPLITS:
        split_sources = {r["source"] for r in general[split]}
        assert "chat" in split_sources
        assert set(DOMAINS) <= split_sources, f"general {split} lacks {set(DOMAINS) - split_sources}"
    for d in DOMAINS:
        for split in SPLITS:
            from_d = [r for r in general[split] if r["source"] == d]
            # the mix takes the first prompts of the same split of the specialist domain, with the same ids
            assert from_d == tables[d][split][: domains.GENERAL_SHARE[split]]


def test_general_never_trains_on_specialist_held_out(tables):
    general_train, general_held = set(_texts(tables[GENERAL], "train")), set(_texts(tables[GENERAL], "held_out"))
    for d in DOMAINS:
        spec_train, spec_held = set(_texts(tables[d], "train")), set(_texts(tables[d], "held_out"))
        assert not general_train & spec_held, f"general train holds {d} held-out prompts"
        assert not general_held & spec_train, f"general held-out holds {d} train prompts"


def test_unknown_domain_error_lists_known():
    with pytest.raises(UnknownDomainError) as e:
        check_domain("nosuch")
    assert isinstance(e.value, ValueError)
    msg = str(e.value)
    assert "nosuch" in msg
    for d in ALL_DOMAINS:
        assert d in msg
    with pytest.raises(UnknownDomainError):
        domain_prompts("chat")  # a prompt set, not a domain
    assert check_domain("sql") == "sql"
