"""Model-free pool members: folders round-trip through their kind, foreign and corrupt files are refused with one
message, and their held-out evaluation is their proposed chains checked against the data."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from draftpool.models import get_kind, kind_of_folder
from draftpool.models.folder import DrafterLoadError
from draftpool.models.suffix import NGRAM, SUFFIX, NgramModel, build_suffix
from draftpool.pool import Member, load_members, update_pool_manifest
from training.evaluate import evaluate_many


def meta(info, kind):
    return {"kind": kind, "target": info.name, "target_weights_sha256": info.weights_sha256}


def test_suffix_folder_round_trip_and_pool_member(target_info, tmp_path):
    seqs = [[1, 2, 3, 4, 5, 6], [1, 2, 3, 9], [7, 8]]
    model = build_suffix(seqs, target_info.vocab_size, depth=8, segment_tokens=8)
    model.index.add([[5, 6, 7]])  # a recent segment too
    SUFFIX.write(model, tmp_path / "pool" / "sql-suffix", target_info, meta(target_info, "suffix"))
    NGRAM.write(NgramModel(target_info.vocab_size, 3, 5), tmp_path / "pool" / "any-ngram", target_info,
                meta(target_info, "ngram"))
    assert kind_of_folder(tmp_path / "pool" / "sql-suffix") == "suffix"
    back = SUFFIX.load(tmp_path / "pool" / "sql-suffix", target_info, None)
    assert back.index.n_tokens == model.index.n_tokens and len(back.index.segments) == len(model.index.segments)
    for ctx in ([1, 2], [1, 2, 3], [5], [9, 9]):
        assert back.index.propose(ctx, 4) == model.index.propose(ctx, 4)
    for name, kind in (("sql-suffix", "suffix"), ("any-ngram", "ngram")):
        update_pool_manifest(tmp_path / "pool", target_info, name, {"path": name, "kind": kind})
    members = load_members(tmp_path / "pool", target_info, None)
    names = [m.name for m in members]
    assert names == ["any-ngram", "sql-suffix"] and members[0].module == NgramModel(target_info.vocab_size, 3, 5)
    # each folder says how vLLM serves its nearest equivalent, with the member's own settings, and what is lost there
    served = {n: json.loads((tmp_path / "pool" / n / "config.json").read_text())["vllm"] for n in names}
    assert served["any-ngram"]["speculative_config"] == {"method": "ngram", "prompt_lookup_min": 3,
                                                         "prompt_lookup_max": 5, "num_speculative_tokens": 8}
    sc = served["sql-suffix"]["speculative_config"]
    assert sc["method"] == "suffix" and sc["suffix_decoding_max_tree_depth"] == 8
    assert sc["suffix_decoding_min_token_prob"] == model.index.min_prob and "seed" in served["sql-suffix"]["lost"]


def test_foreign_and_corrupt_index_files_are_refused(target_info, tmp_path):
    model = build_suffix([[1, 2, 3]], target_info.vocab_size)
    folder = tmp_path / "s"
    SUFFIX.write(model, folder, target_info, meta(target_info, "suffix"))
    cfg = json.loads((folder / "config.json").read_text())

    def refused(match, **changes):
        (folder / "config.json").write_text(json.dumps({**cfg, **changes}))
        with pytest.raises(DrafterLoadError, match=match):
            SUFFIX.load(folder, target_info, None)
        (folder / "config.json").write_text(json.dumps(cfg))

    refused("another tokenizer", tokenizer_sha256="0" * 64)
    refused("vocabulary of 100 tokens", vocab_size=100)
    refused("n_min 5 > n_max 2", n_min=5, n_max=2)
    refused("bad index settings", depth=1)
    with pytest.raises(DrafterLoadError, match="vocabulary of"):
        SUFFIX.load(folder, dataclasses.replace(target_info, vocab_size=7), None)
    np.savez(folder / "index.npz", recent=np.array([1, 2, target_info.vocab_size, -1]))
    with pytest.raises(DrafterLoadError, match="not SEP-separated token ids"):
        SUFFIX.load(folder, target_info, None)
    (folder / "index.npz").write_bytes(b"not a zip")
    with pytest.raises(DrafterLoadError, match="missing or corrupt"):
        SUFFIX.load(folder, target_info, None)
    np.savez(folder / "index.npz", recent=np.array([1, -1], dtype=object))  # a pickle is never loaded
    with pytest.raises(DrafterLoadError, match="missing or corrupt"):
        SUFFIX.load(folder, target_info, None)


def test_evaluation_of_a_model_free_drafter_reads_its_chains(target_info, target):
    model, tok = target
    prompt = tok("SELECT name FROM users WHERE", return_tensors="pt").input_ids
    with torch.no_grad():
        answer = model.generate(prompt, max_new_tokens=24, do_sample=False)[0, prompt.shape[1]:].tolist()
    rows = [{"prompt_ids": prompt[0].tolist(), "response_ids": answer}]
    seeded = build_suffix([prompt[0].tolist() + answer], target_info.vocab_size)
    cold = NgramModel(target_info.vocab_size)
    res = evaluate_many([Member("seeded", "suffix", seeded), Member("cold", "ngram", cold)], model, rows, 3, 64,
                        pad_id=0)
    # seeded with the target's own greedy answer, its chain after every prefix is that answer: every draft right
    assert res["seeded"]["top1_per_step"] == [1.0, 1.0, 1.0]
    assert res["seeded"]["empirical_greedy_chain_length"] > 3.0
    steps = get_kind("suffix").steps(seeded, None, torch.tensor([rows[0]["prompt_ids"] + answer]),
                                     torch.ones(1, prompt.shape[1] + len(answer)), 3)
    assert steps.logits[0][0, prompt.shape[1] - 1:-1].tolist() == answer  # step 0 after each prefix: the next token
    # a cold n-gram drafter proposes only what the request repeats: far less
    assert res["cold"]["top1_per_step"][0] < 0.5


def test_teacher_forced_steps_follow_the_index_with_a_matcher_and_equal_a_search_per_position():
    """The suffix kind's steps (every position's chain, used by evaluation and the selection replay) follow each row
    with one SuffixIndex matcher; they equal the chains of a fresh index search after every prefix."""
    from draftpool.models.proposal import choose
    from draftpool.models.request_index import RequestIndex
    from draftpool.models.suffix import SuffixModel
    from draftpool.models.suffix_index import SuffixIndex

    rng = np.random.default_rng(3)
    index = SuffixIndex(depth=12, segment_tokens=40)
    index.add([rng.integers(0, 6, size=int(rng.integers(5, 30))).tolist() for _ in range(30)])
    model = SuffixModel(6, index=index)
    ids = torch.tensor(rng.integers(0, 6, size=(3, 50)))
    mask = torch.ones_like(ids)
    mask[2, 35:] = 0
    depth = 4
    steps = SUFFIX.steps(model, None, ids, mask, depth)
    drafts = steps.logits  # per step j: [B,T] drafted ids, -1 where none
    for r in range(3):
        req = RequestIndex(model.n_min, model.n_max)
        for t in range(int(mask[r].sum())):
            req.extend([int(ids[r, t])])
            want = choose(index.propose(req.tokens, depth), req.propose(depth, most_frequent=True)).tokens
            got = [int(drafts[j][r, t]) for j in range(depth) if int(drafts[j][r, t]) >= 0]
            assert got == want, (r, t)
