"""Every registered drafter kind round-trips folder -> decode -> evaluation: a tiny model of the kind, written by the
kind's `write`, read back by its `load`, made into its decode-time drafter through the registry (`make_drafter`),
decodes greedily exactly as plain decoding does, and evaluates (`training.evaluate`) the same as the model it was
written from. A kind added to the registry without a builder here fails the test.

The target is a tiny random Llama over the embedded target's vocabulary and tokenizer (what the kinds' folders check),
so the test costs seconds, not minutes."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from draftpool.models import KINDS, get_kind
from draftpool.models.llama import from_target_layers
from draftpool.models.suffix import NgramModel, build_suffix
from specsel.decoding.drafter import make_drafter
from specsel.decoding.loop import SpecDecoder
from tests.stubs import random_head
from training.evaluate import evaluate

NEW = 16  # greedy tokens decoded


@pytest.fixture(scope="module")
def tiny(target_info):
    """(a 4-layer random Llama over the real vocabulary, its TargetInfo naming the real tokenizer, its tokenizer, a
    prompt, the tiny target's own greedy continuation of it)."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=target_info.vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    model = LlamaForCausalLM(cfg).eval()
    info = dataclasses.replace(target_info, name="tiny", slug="tiny", weights_sha256="ab" * 32, num_layers=4,
                               hidden_size=64, max_position_embeddings=256)
    prompt = torch.randint(1, target_info.vocab_size, (12,), generator=torch.Generator().manual_seed(1)).tolist()
    prompt = prompt + prompt[:6]  # a repeat: the model-free kinds find something to draft
    out = SpecDecoder(model, mode="plain").generate(prompt, NEW)[0]
    return model, info, AutoTokenizer.from_pretrained(target_info.path), prompt, out


def build(kind: str, tiny):
    """A tiny model of each kind for the tiny target."""
    model, info, _, prompt, out = tiny
    return {"eagle3": lambda: random_head(model, info, 0, 1024),
            "llama": lambda: from_target_layers(model, 1).eval(),
            "ngram": lambda: NgramModel(info.vocab_size, 2, 4),
            "suffix": lambda: build_suffix([prompt + out], info.vocab_size, depth=8)}[kind]()


def test_every_kind_has_a_builder(tiny):
    for kind in KINDS:
        assert build(kind, tiny) is not None


@pytest.mark.parametrize("kind", list(KINDS))
def test_folder_decode_evaluation(kind, tiny, tmp_path):
    model, info, tok, prompt, plain = tiny
    original = build(kind, tiny)
    meta = {"kind": kind, "target": info.name, "target_weights_sha256": info.weights_sha256}
    get_kind(kind).write(original, tmp_path / kind, info, meta, tokenizer=tok)
    loaded = get_kind(kind).load(tmp_path / kind, info, model)

    drafter = make_drafter(kind, loaded)
    assert drafter.kind == kind
    out, _ = SpecDecoder(model, drafter, mode="chain", k=3).generate(prompt, NEW)
    assert out == plain  # greedy speculative decoding is plain decoding

    rows = [{"prompt_ids": prompt, "response_ids": plain}]
    ev, ev0 = (evaluate(kind, m, model, rows, 3, 96, 0) for m in (loaded, original))
    assert ev["kind"] == kind and ev["held_out_sequences"] == 1 and ev["positions"] > 0
    for key in ("top1_per_step", "accept_per_step"):
        assert torch.allclose(torch.tensor(ev[key]), torch.tensor(ev0[key]), atol=1e-4), (key, ev[key], ev0[key])
    if kind == "suffix":  # seeded with this very answer: it drafts it
        assert ev["top1_per_step"][0] > 0.5
    if kind == "llama":  # the target's own first layer and head: not a zero comparison
        assert ev["accept_per_step"][0] > 0
