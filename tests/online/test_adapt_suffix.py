"""online_adapt.py with model-free members beside a head: answers stay plain greedy decoding, every finished answer
is indexed by the suffix member in the serving process, the served index is saved under out_dir/indexes and a
restart resumes from it (the trainer process never sees model-free members)."""

import json

import pytest

import online.adapt as online_adapt
from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.models.suffix import SUFFIX
from specsel.decoding.loop import SpecDecoder
from tests.stubs import head_and_suffix_pool

pytestmark = pytest.mark.tier2  # online_adapt.py end to end on the real target

NEW = 12


@pytest.fixture(scope="module")
def pool(tmp_path_factory, target, target_info):
    return head_and_suffix_pool(tmp_path_factory.mktemp("adapt-suffix") / "pool", target, target_info, ngram=True)


def test_suffix_member_indexes_served_answers_and_resumes(tmp_path, pool, target, target_info, capsys):
    model, tok = target
    prompts = [p["prompt"] for p in domain_prompts("sql")["held_out"][:2]]
    plain = SpecDecoder(model, mode="plain", stop_ids=stop_token_ids(tok, model))
    want = [plain.generate(render_prompt(tok, p), NEW)[0] for p in prompts]
    reqs = tmp_path / "r.jsonl"
    base = [f"serve.pool={pool}", f"serve.out_dir={tmp_path}/online", f"serve.requests={reqs}",
            f"serve.max_new_tokens={NEW}", "serve.adapt=false", "serve.index_save_every=1", "serve.mode=chain",
            f"serve.auto_costs={tmp_path}/auto_costs.json"]
    reqs.write_text(json.dumps({"id": "a", "prompt": prompts[0]}) + "\n")
    assert online_adapt.main(base) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["served"] == 1 and summary["indexed_answers"] == 1 and "resuming" not in err
    answers = [json.loads(x) for x in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert answers[0]["text"] == tok.decode(want[0], skip_special_tokens=True)  # lossless with three members
    saved = SUFFIX.load(tmp_path / "online" / "indexes" / "sql-suffix", target_info, None)
    seq = render_prompt(tok, prompts[0]) + want[0]
    assert saved.index.n_tokens == 4 + len(seq)  # the seed and the served answer
    assert saved.index.longest_match(seq) == min(len(seq), saved.index.depth - 1)
    assert not (tmp_path / "online" / "indexes" / "any-ngram" / "index.npz").exists()  # keeps nothing across
    # a restart serves from the saved index, and indexes the next answer on top of it
    reqs.write_text(json.dumps({"id": "b", "prompt": prompts[1]}) + "\n")
    assert online_adapt.main(base) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["served"] == 1 and summary["skipped_answered"] == 1
    indexes = tmp_path / "online" / "indexes"  # the restart says what it resumed: the seed and one answer
    assert (f"[online] resuming suffix member sql-suffix from {indexes / 'sql-suffix'} (2 sequences, "
            f"{saved.index.n_tokens} tokens indexed)\n") in err, err
    assert f"[online] resuming ngram member any-ngram from {indexes / 'any-ngram'}\n" in err, err
    again = SUFFIX.load(tmp_path / "online" / "indexes" / "sql-suffix", target_info, None)
    assert again.index.n_tokens == saved.index.n_tokens + len(render_prompt(tok, prompts[1]) + want[1])
    answers = [json.loads(x) for x in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert answers[-1]["text"] == tok.decode(want[1], skip_special_tokens=True)


def served_equals_plain(tmp_path, pool, tok, model, prompts, setting, capsys) -> None:
    """Serve `prompts` with adaptation on and `setting`; every answer equals plain greedy decoding with `model`."""
    plain = SpecDecoder(model, mode="plain", stop_ids=stop_token_ids(tok, model))
    want = [tok.decode(plain.generate(render_prompt(tok, p), NEW)[0], skip_special_tokens=True) for p in prompts]
    reqs = tmp_path / "r.jsonl"
    reqs.write_text("".join(json.dumps({"id": str(i), "prompt": p}) + "\n" for i, p in enumerate(prompts)))
    assert online_adapt.main([f"serve.pool={pool}", f"serve.out_dir={tmp_path}/online", f"serve.requests={reqs}",
                              f"serve.max_new_tokens={NEW}", setting, "trainer.batch=1", "trainer.holdout_every=0",
                              "process.export_every=0", f"serve.auto_costs={tmp_path}/auto_costs.json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["served"] == 2 and summary["failed"] == 0
    answers = [json.loads(x) for x in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert [a["text"] for a in answers] == want


def test_per_cycle_selection_serves_plain_greedy_answers(tmp_path, pool, target, capsys):
    """serve.selection=per_cycle over the head and the model-free members: the answers are plain greedy decoding's,
    with adaptation on (the trainer adapts the head while the selector picks per cycle)."""
    model, tok = target
    prompts = [p["prompt"] for p in domain_prompts("sql")["held_out"][2:4]]
    served_equals_plain(tmp_path, pool, tok, model, prompts, "serve.selection=per_cycle", capsys)


def test_bfloat16_serving_with_adaptation_equals_bfloat16_plain_decoding(tmp_path, pool, target, target_info,
                                                                           capsys):
    """serve.dtype=bfloat16: the target and its heads in bf16 (the trainer in fp32, its weights cast at each swap),
    every answer equal to bf16 plain greedy decoding of the same target loaded in bf16, adaptation on."""
    import torch

    from draftpool.target import load_target

    _, tok = target
    model16, _ = load_target(target_info, "cpu", torch.bfloat16)  # as the server loads it (not a cast copy)
    prompts = [p["prompt"] for p in domain_prompts("sql")["held_out"][4:6]]
    served_equals_plain(tmp_path, pool, tok, model16, prompts, "serve.dtype=bfloat16", capsys)
