"""Drafter kinds: the registry, folder round trips through the kind, and the one alignment rule every consumer reads
(row t of step j predicts x_{t+offset+j}) checked against explicit per-position references."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from draftpool.models import KINDS, get_kind, kind_of_folder, kinds_with, part
from draftpool.models.eagle3 import EAGLE3
from draftpool.models.folder import DrafterLoadError
from draftpool.models.kind import Steps, aux_features, shift_left
from draftpool.models.llama import LLAMA
from draftpool.pool import Member
from draftpool.target import TargetInfo
from tests.stubs import VOCAB, make_head, tiny_target
from training.data import ResponseDataset, collate
from training.evaluate import evaluate_many

DEPTH = 3


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    target = tiny_target().eval()
    small = LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2,
                                         max_position_embeddings=256)).eval()
    return target, make_head(target, 1).eval(), small


def test_registry_names_every_kind_once():
    assert list(KINDS) == ["eagle3", "llama", "ngram", "suffix"]
    assert get_kind("eagle3") is EAGLE3 and get_kind("llama") is LLAMA
    with pytest.raises(ValueError, match="unknown drafter kind 'medusa'; known: eagle3, llama, ngram, suffix"):
        get_kind("medusa")


def test_every_declared_part_resolves_to_an_object_of_its_layer():
    """A kind names its decode drafter (under specsel.decoding) and its training setup (under training) by path;
    each resolves, to the right kind of object, defined in its layer."""
    from training.kinds import KindTraining

    for name, kind in KINDS.items():
        decoder = part(name, "decoder")
        assert isinstance(decoder, type) and decoder.__module__.startswith("specsel.decoding."), (name, decoder)
        assert decoder.kind == name
        assert (decoder.can_tree, decoder.self_limiting) == (kind.capabilities.tree, kind.capabilities.self_limiting)
        if kind.trainer:
            trainer = part(kind, "trainer")
            assert isinstance(trainer, KindTraining) and trainer.kind == name, name
            assert trainer.setup.__module__.startswith("training.") and kind.trainer.startswith("training.")
    assert [k for k, v in KINDS.items() if v.trainer] == ["eagle3", "llama", "suffix"]  # ngram: nothing to train


def test_capabilities_are_what_the_callers_ask():
    caps = {name: kind.capabilities for name, kind in KINDS.items()}
    assert [n for n, c in caps.items() if c.trained] == ["eagle3", "llama"]
    assert [n for n, c in caps.items() if c.stackable] == ["eagle3"]  # the head bank stacks EAGLE-3 heads only
    assert [n for n, c in caps.items() if c.step_drafter] == ["llama"]
    assert [n for n, c in caps.items() if c.vllm] == ["eagle3"]
    assert all(bool(kind.vllm_method) == kind.capabilities.vllm for kind in KINDS.values())  # vLLM's method name
    assert [n for n, c in caps.items() if c.self_limiting] == ["ngram", "suffix"]
    assert [n for n, c in caps.items() if not c.tree] == ["llama"]
    assert all(kind.trained == kind.capabilities.trained for kind in KINDS.values())
    assert kinds_with("stackable") == ["eagle3"] and kinds_with("step_drafter") == ["llama"]
    with pytest.raises(ValueError, match="no capability 'fast'"):
        kinds_with("fast")
    # the pool folder stems (<domain>-<folder>): the llama kind's keeps its older name
    assert {n: k.folder for n, k in KINDS.items()} == {"eagle3": "eagle3", "llama": "llama68m", "ngram": "ngram",
                                                        "suffix": "suffix"}


def test_a_part_outside_its_layer_or_missing_is_refused():
    class Stray(type(LLAMA)):
        name = "stray"
        decoder = "online.serve.server:Server"  # an upper layer the decoding layer must not reach
        trainer = "training.kinds.llama:NOPE"

    with pytest.raises(ValueError, match="must be 'module:attribute' under specsel.decoding."):
        part(Stray(), "decoder")
    with pytest.raises(AttributeError, match="does not resolve"):
        part(Stray(), "trainer")
    with pytest.raises(ValueError, match="declares no trainer"):
        part("ngram", "trainer")


def test_only_the_eagle3_kind_takes_export_options(tiny, tmp_path, target_info):
    _, head, small = tiny
    with pytest.raises(TypeError, match="speculators"):
        LLAMA.write(small, tmp_path / "l", target_info, {"kind": "llama"}, source=tmp_path, speculators=True)


def test_aux_features_concatenate_in_the_head_layer_order():
    hs = [torch.full((1, 2, 3), float(i)) for i in range(6)]
    assert aux_features(hs, [4, 1, 2])[0, 0].tolist() == [4.0] * 3 + [1.0] * 3 + [2.0] * 3


def test_shared_steps_read_one_forward_j_rows_later():
    logits = torch.randn(2, 7, 5)
    steps = Steps([logits], 1, shared=True)
    per = steps.per_step(lambda lg, j: lg.argmax(-1), 3)
    for j in range(3):
        assert torch.equal(per[j][:, :7 - j], logits.argmax(-1)[:, j:])
        assert (per[j][:, 7 - j:] == 0).all()
    # row t of step j predicts x_{t+1+j}; its teacher is the target row that chose it, t+j
    x = torch.arange(7)[None]
    assert steps.teacher(x, 2)[0, :3].tolist() == [2, 3, 4] and shift_left(x, steps.predicts(2))[0, 0] == 3


def reference_stats(kind: str, drafter, target, ids, lmask, depth):
    """Per step (top-1 agreement, 1 - TV, counted positions) by explicit loops: the rule each kind was written with
    before it became one object (EAGLE-3: TTT step j at t -> x_{t+2+j}, teacher on its draft vocabulary; an
    independent drafter: its next-token prediction at t+j -> x_{t+1+j})."""
    with torch.no_grad():
        out = target(input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True)
        if kind == "eagle3":
            aux = torch.cat([out.hidden_states[i] for i in drafter.config.eagle_aux_hidden_state_layer_ids], -1)
            _, full = drafter(aux, ids, torch.ones_like(ids), depth)
        else:
            nxt = drafter(input_ids=ids).logits
    b, t_len = ids.shape
    top1, accept, n = [0.0] * depth, [0.0] * depth, [0] * depth
    for bb in range(b):
        for t in range(t_len):
            for j in range(depth):
                u = t + (2 if kind == "eagle3" else 1) + j  # the predicted token
                if u >= t_len or not lmask[bb, u]:
                    continue
                p = out.logits[bb, u - 1].float().softmax(-1)  # the target's distribution that chose x_u
                if kind == "eagle3":
                    q, ids_q = full[j][bb, t].float().softmax(-1), drafter.draft_ids
                else:
                    q, ids_q = nxt[bb, t + j].float().softmax(-1), torch.arange(p.numel())
                top1[j] += float(ids_q[q.argmax()] == p.argmax())
                accept[j] += float(torch.minimum(p[ids_q], q).sum())
                n[j] += 1
    return top1, accept, n


def test_evaluate_matches_the_per_position_reference_for_both_kinds(tiny):
    target, head, small = tiny
    near = copy.deepcopy(target)  # the target with a noisy output layer: agrees often, not always
    with torch.no_grad():
        near.lm_head.weight.add_(0.01 * torch.randn_like(near.lm_head.weight))
    torch.manual_seed(5)
    rows = [{"prompt_ids": torch.randint(0, VOCAB, (5,)).tolist(),
             "response_ids": torch.randint(0, VOCAB, (n,)).tolist()} for n in (9, 14)]
    members = [Member("head", "eagle3", head), Member("small", "llama", small), Member("near", "llama", near),
               Member("self", "llama", target)]
    res = evaluate_many(members, target, rows, DEPTH, 64, pad_id=0)
    by_name = {m.name: m for m in members}
    ds = ResponseDataset(rows, 64)
    b = collate([ds[i] for i in range(len(ds))], 0)
    for name in ("head", "small", "near"):
        kind, model = by_name[name].kind, by_name[name].module
        sums = [reference_stats(kind, model, target, b["input_ids"][i:i + 1], b["loss_mask"][i:i + 1], DEPTH)
                for i in range(len(ds))]
        n = [sum(s[2][j] for s in sums) for j in range(DEPTH)]
        assert res[name]["positions"] == n[0]
        assert res[name]["top1_per_step"] == pytest.approx([sum(s[0][j] for s in sums) / n[j] for j in range(DEPTH)])
        assert res[name]["accept_per_step"] == pytest.approx([sum(s[1][j] for s in sums) / n[j]
                                                              for j in range(DEPTH)], abs=1e-5)
    assert 0.3 < min(res["near"]["top1_per_step"]) < 1.0  # the comparison is not between zeros
    # the target as its own next-token drafter agrees everywhere and loses nothing to TV
    assert res["self"]["top1_per_step"] == [1.0] * DEPTH
    assert res["self"]["accept_per_step"] == pytest.approx([1.0] * DEPTH, abs=1e-5)


def test_folders_round_trip_through_their_kind(tiny, tmp_path):
    target, head, small = tiny
    info = TargetInfo(name="tiny", slug="tiny", path=str(tmp_path / "t"), weights_sha256="ab" * 32,
                      num_layers=target.config.num_hidden_layers, hidden_size=64, vocab_size=VOCAB,
                      max_position_embeddings=256)
    meta = {"kind": "eagle3", "target": "tiny", "target_weights_sha256": info.weights_sha256}
    EAGLE3.write(head, tmp_path / "h", info, meta)
    assert kind_of_folder(tmp_path / "h") == "eagle3"
    back = EAGLE3.load(tmp_path / "h", info, target)
    assert all(torch.equal(v, back.state_dict()[k]) for k, v in head.state_dict().items())
    with pytest.raises(ValueError, match="tokenizer"):
        LLAMA.write(small, tmp_path / "s", info, {"kind": "llama"})
    # a folder from elsewhere (no draftpool.json): the kind is read from config.json's architectures
    small.save_pretrained(tmp_path / "plain")
    assert kind_of_folder(tmp_path / "plain") == "llama"
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "config.json").write_text(json.dumps({"architectures": ["MistralForCausalLM"]}))
    with pytest.raises(DrafterLoadError, match="cannot tell its drafter kind"):
        kind_of_folder(tmp_path / "odd")
