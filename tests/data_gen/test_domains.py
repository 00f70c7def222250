"""Shipped domains: prompt counts, the fixed train / held-out split, the general mix, unknown names, determinism."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from data_gen import domains
from data_gen.domains import (
    ALL_DOMAINS,
    DOMAINS,
    GENERAL,
    UnknownDomainError,
    check_domain,
    domain_prompts,
    split_of,
)

ROOT = Path(__file__).resolve().parents[2]
PROMPT_SETS = ("chat", *DOMAINS)


@pytest.fixture(scope="module")
def tables():
    return {d: domain_prompts(d) for d in ALL_DOMAINS}


def _texts(table, split=None):
    splits = [split] if split else ["train", "held_out"]
    return [r["prompt"] for s in splits for r in table[s]]


def test_domain_lists():
    assert GENERAL not in DOMAINS
    assert set(ALL_DOMAINS) == {*DOMAINS, GENERAL}
    assert len(set(ALL_DOMAINS)) == len(ALL_DOMAINS)


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_counts_and_no_duplicates(tables, domain):
    table = tables[domain]
    assert set(table) == {"train", "held_out"}
    train, held = _texts(table, "train"), _texts(table, "held_out")
    assert train and held, "both splits must be non-empty"
    assert len(set(train) | set(held)) >= 300, f"{domain}: only {len(set(train) | set(held))} distinct prompts"
    assert len(train) == len(set(train)), f"{domain}: duplicate train prompts"
    assert len(held) == len(set(held)), f"{domain}: duplicate held-out prompts"
    assert not set(train) & set(held), f"{domain}: prompts in both splits"
    for r in table["train"] + table["held_out"]:
        assert set(r) == {"id", "prompt", "source"}
        assert isinstance(r["prompt"], str) and r["prompt"].strip() == r["prompt"] and r["prompt"]


@pytest.mark.parametrize("domain", DOMAINS)
def test_held_out_share(tables, domain):
    table = tables[domain]
    n_held, n = len(table["held_out"]), len(table["train"]) + len(table["held_out"])
    assert 0.10 <= n_held / n <= 0.30, f"{domain}: held-out share {n_held / n:.2f}"


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_ids_unique_and_stable(tables, domain):
    table = tables[domain]
    ids = [r["id"] for s in ("train", "held_out") for r in table[s]]
    assert len(ids) == len(set(ids)), f"{domain}: duplicate ids"
    again = domain_prompts(domain)
    assert again == table, "domain_prompts must return the same table twice"
    for r in table["train"] + table["held_out"]:
        assert r["id"].startswith(r["source"] + "-")


@pytest.mark.parametrize("domain", DOMAINS)
def test_split_follows_split_of(tables, domain):
    for split in ("train", "held_out"):
        for r in tables[domain][split]:
            assert split_of(r["prompt"]) == split


def test_split_of_depends_only_on_text():
    texts = ["SELECT 1", "What is a cell?", "x" * 500, "naïve café ☕", ""]
    first = [split_of(t) for t in texts]
    assert [split_of(t) for t in reversed(texts)] == list(reversed(first))
    assert [split_of(str(t)) for t in texts] == first
    assert set(first) <= {"train", "held_out"}
    # the bucket is a sha1 of the text, so it does not depend on the interpreter's hash seed
    code = f"from data_gen.domains import split_of; import json; print(json.dumps([split_of(t) for t in {texts!r}]))"
    for hashseed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": hashseed})
        assert json.loads(out.stdout) == first
    # over many texts the held-out share matches HELD_OUT_PERCENT
    many = [f"prompt number {i}" for i in range(5000)]
    share = sum(split_of(t) == "held_out" for t in many) / len(many)
    assert abs(share - domains.HELD_OUT_PERCENT / 100) < 0.03


def test_general_mix_composition(tables):
    general = tables[GENERAL]
    sources = {r["source"] for s in ("train", "held_out") for r in general[s]}
    assert sources == {"chat", *DOMAINS}
    for split in ("train", "held_out"):
        split_sources = {r["source"] for r in general[split]}
        assert "chat" in split_sources
        assert set(DOMAINS) <= split_sources, f"general {split} lacks {set(DOMAINS) - split_sources}"
    for d in DOMAINS:
        for split in ("train", "held_out"):
            from_d = [r for r in general[split] if r["source"] == d]
            # the mix takes prompts from the same split of the specialist domain, with the same ids
            assert {(r["id"], r["prompt"]) for r in from_d} <= {(r["id"], r["prompt"]) for r in tables[d][split]}
            assert 0 < len(from_d) <= domains.GENERAL_SHARE[split]


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


@pytest.mark.parametrize("name", PROMPT_SETS)
def test_prompt_sets_deterministic(name):
    mod = importlib.import_module(f"data_gen.prompt_sets.{name}")
    a, b = mod.prompts(), mod.prompts()
    assert a == b
    assert len(a) == len(set(a)), f"{name}: duplicate prompts"
    assert all(isinstance(p, str) and p.strip() for p in a)
    # reloading the module (fresh module-level state) gives the same list too
    assert importlib.reload(mod).prompts() == a


def test_prompt_sets_independent_of_hash_seed():
    code = ("import json, importlib; print(json.dumps({n: importlib.import_module('data_gen.prompt_sets.' + n)"
            f".prompts() for n in {PROMPT_SETS!r}}}))")
    outs = []
    for hashseed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": hashseed})
        outs.append(json.loads(out.stdout))
    assert outs[0] == outs[1]
    assert outs[0] == {n: importlib.import_module(f"data_gen.prompt_sets.{n}").prompts() for n in PROMPT_SETS}
