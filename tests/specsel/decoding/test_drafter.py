"""The Drafter protocol on both drafters, make_drafter, and the loop's checks through protocol members only."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from draftpool.forward.sampling import SamplingParams
from draftpool.models import KINDS
from specsel.decoding.drafter import drafter_class, make_drafter
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder, SpecError
from specsel.decoding.request import DecodeState
from specsel.decoding.tree import TreeSpec
from specsel.selection.head_bank import HeadBank
from tests.stubs import DRAFT_VOCAB, VOCAB, BigramLM, make_head, successor_table, tiny_target

V = 16


def bigram_drafter() -> LlamaDrafter:
    return LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 1) % V)))


def test_llama_drafter_members():
    d = bigram_drafter()
    assert (d.kind, d.vocab_size, d.draft_vocab_size, d.can_tree, d.aux_layers) == ("llama", V, V, False, None)
    assert d.module is d.model and d.chain_logits == []
    d.check_target(BigramLM(successor_table(V, lambda t: t)).config)  # reads tokens only: nothing to refuse
    d.sync(DecodeState(tokens=[3, 4], prompt_len=2))
    draft, q = d.draft_chain(3, SamplingParams(), None)
    assert draft.tolist() == [5, 6, 7] and q is None
    assert len(d.chain_logits) == 3 and all(row.shape == (d.draft_vocab_size,) for row in d.chain_logits)
    with pytest.raises(NotImplementedError, match="chains only"):
        d.draft_tree(TreeSpec())


def test_eagle3_drafter_members():
    target = tiny_target()
    head = make_head(target, 0)
    d = Eagle3Drafter(head)
    assert (d.kind, d.vocab_size, d.draft_vocab_size, d.can_tree) == ("eagle3", VOCAB, DRAFT_VOCAB, True)
    assert d.module is head and d.chain_logits == []
    d.check_target(target.config)
    out = target(torch.tensor([[1, 2, 3]]), output_hidden_states=True)
    feats = torch.cat([out.hidden_states[i][0] for i in d.aux_layers], dim=-1)  # [3,3H]
    d.sync(DecodeState(tokens=[1, 2, 3, 4], prompt_len=3, feats=feats))
    d.draft_chain(2, SamplingParams(), None)
    assert len(d.chain_logits) == 2 and all(row.shape == (DRAFT_VOCAB,) for row in d.chain_logits)
    assert HeadBank.accepts(d) and not HeadBank.accepts(bigram_drafter())


def test_check_target_refuses_a_head_of_another_hidden_size():
    target = tiny_target()  # hidden 64
    other = LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                                         num_attention_heads=2, num_key_value_heads=2,
                                         max_position_embeddings=256)).eval()
    d = Eagle3Drafter(make_head(target, 0))
    with pytest.raises(ValueError, match="hidden 64.*this target has hidden 32"):
        d.check_target(other.config)
    with pytest.raises(SpecError, match="EAGLE-3 head made for a target with hidden 64") as err:
        SpecDecoder(other, d, mode="chain", k=2)
    assert err.value.__cause__ is None  # one error, not a chain


def test_mode_tree_needs_a_drafter_that_can_tree():
    with pytest.raises(SpecError, match="'drafter' \\(llama\\) drafts chains only"):
        SpecDecoder(BigramLM(successor_table(V, lambda t: t)), bigram_drafter(), mode="tree")


def test_make_drafter_kinds():
    target = tiny_target()
    head = make_head(target, 1)
    lm = BigramLM(successor_table(V, lambda t: t))
    assert isinstance(make_drafter("eagle3", head), Eagle3Drafter) and make_drafter("eagle3", head).head is head
    assert isinstance(make_drafter("llama", lm), LlamaDrafter) and make_drafter("llama", lm).model is lm
    with pytest.raises(ValueError, match="unknown drafter kind 'medusa'; known: eagle3, llama, ngram, suffix"):
        make_drafter("medusa", lm)
    for kind in KINDS:  # every pool kind has its decode-time drafter, which names its kind and its capabilities
        cls, caps = drafter_class(kind), KINDS[kind].capabilities
        assert (cls.kind, cls.can_tree, cls.self_limiting) == (kind, caps.tree, caps.self_limiting)
        assert callable(getattr(cls, "propose", None)) == caps.self_limiting  # self-limiting: it scores its chain
