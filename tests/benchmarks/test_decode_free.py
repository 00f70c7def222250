"""benchmarks.decode with model-free members on the embedded target: ngram, suffix (chain, tree), the hybrid rule and
HedgeSpec over {head, suffix, ngram} are lossless, and a suffix index seeded with the target's own answers drafts
them."""

from __future__ import annotations

import json

import pytest
import torch

from benchmarks.decode import FREE_METHODS, main
from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.models.suffix import SUFFIX, build_suffix
from specsel.decoding.loop import SpecDecoder
from tests.stubs import random_head

pytestmark = pytest.mark.tier2  # a decode benchmark run on the real target

NEW = 10


@pytest.fixture(scope="module")
def members(target_info, target, tmp_path_factory):
    """(a random head's folder, a suffix index seeded with the target's greedy answers to the benchmark's prompts)."""
    from draftpool.models.eagle3 import write_eagle3

    model, tok = target
    root = tmp_path_factory.mktemp("free-pool")
    meta = {"kind": "eagle3", "target_weights_sha256": target_info.weights_sha256}
    write_eagle3(random_head(model, target_info, 0, 1024), root / "sql-eagle3", target_info, meta)
    plain = SpecDecoder(model, mode="plain", stop_ids=stop_token_ids(tok, model))
    seqs = []
    for p in domain_prompts("sql")["held_out"][:2]:
        ids = render_prompt(tok, p["prompt"])
        seqs.append(ids + plain.generate(ids, NEW)[0])
    SUFFIX.write(build_suffix(seqs, target_info.vocab_size), root / "sql-suffix", target_info,
                 {**meta, "kind": "suffix"})
    return root / "sql-eagle3", root / "sql-suffix"


def test_model_free_methods_are_lossless_and_draft_a_seeded_answer(members, tmp_path, capsys):
    head, suffix = members
    out = tmp_path / "bench"
    methods = ["plain", *FREE_METHODS]
    code = main(["--domain", "sql", "--max-prompts", "2", "--max-new-tokens", str(NEW), "--repeats", "1",
                 "--methods", ",".join(methods), "--k", "3", "--free-k", "6", "--cost-sizes", "",
                 "--eagle3", str(head), "--suffix", str(suffix), "--out", str(out),
                 "--auto-costs", str(tmp_path / "costs.json")])
    capsys.readouterr()
    assert code == 0
    res = json.loads((out / "results.json").read_text())
    assert list(res["summary"]) == methods
    for name, row in res["summary"].items():
        assert row["exact_match"] == 1.0, name  # lossless at temperature 0
    runs = {m: [r for r in res["runs"] if r["method"] == m] for m in methods}
    # the seeded index knows each answer: after the prefill's token, cycles of up to free_k + 1 tokens (shorter at
    # first, where the match is short: a chain drafts at most max_spec_factor = 2 tokens per matched token)
    assert res["summary"]["suffix"]["mat"] > 2.5
    assert all(max(r["drafted"]) <= 6 for r in runs["suffix"])
    assert res["summary"]["suffix-tree"]["mat"] > 2.5  # the same answers through its tree (one path: one answer)
    # the cold n-gram drafter finds little to copy in a short SQL answer; it never drafts past free_k either
    assert res["summary"]["ngram"]["mat"] < res["summary"]["suffix"]["mat"]
    # the hybrid rule: a seeded chain scores above the head's k = 3, so the suffix index drafts first (pool index 1)
    assert all(r["choices"][0] == 1 for r in runs["hybrid"])
    assert res["summary"]["hybrid"]["mat"] > 2.0  # then the end of the answer scores < 3: the head (plain steps)
    assert all(isinstance(row["draft_ms_per_cycle"], float) for n, row in res["summary"].items() if n != "plain")
    assert torch.tensor([r["new_tokens"] for r in runs["hedgespec"]]).sum() > 0
