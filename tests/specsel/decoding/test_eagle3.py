"""The EAGLE-3 head at decode time against the training-time forward, on a tiny random Llama target."""

import pytest
import torch
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

from draftpool.forward.sampling import SamplingParams
from draftpool.models.eagle3 import Eagle3Head, head_config, select_draft_vocab
from draftpool.target import cache_kw
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.request import DecodeState
from specsel.decoding.tree import TreeSpec

VOCAB, DRAFT_VOCAB = 128, 48


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    target = LlamaForCausalLM(cfg).eval()
    head = Eagle3Head(head_config(cfg, DRAFT_VOCAB, [1, 2, 3]))
    for p in head.parameters():
        if p.requires_grad:
            torch.nn.init.normal_(p, std=0.3 if p.dim() > 1 else 1.0)
    d2t, t2d = select_draft_vocab(torch.rand(VOCAB), DRAFT_VOCAB)
    head.d2t.copy_(d2t)
    head.t2d.copy_(t2d)
    head.embed_tokens.weight.data.copy_(target.get_input_embeddings().weight)
    return target, head.eval()


def features(target, head, tokens):
    with torch.no_grad():
        out = target(torch.tensor([tokens]), output_hidden_states=True)
    return torch.cat([out.hidden_states[i] for i in head.config.eagle_aux_hidden_state_layer_ids], -1)  # [1,T,3H]


def test_sync_matches_training_forward_step0(tiny):
    target, head = tiny
    tokens = torch.randint(0, VOCAB, (40,)).tolist()
    aux = features(target, head, tokens)
    with torch.no_grad():
        _, logits = head(aux, torch.tensor([tokens]), torch.ones(1, 40), 1)
    d = Eagle3Drafter(head)
    # sync in uneven chunks, as decoding does
    for end in (12, 13, 20, 39):
        d.sync(DecodeState(tokens=tokens[:end + 1], prompt_len=12, feats=aux[0, :end]))
        torch.testing.assert_close(d.last_logits, logits[0][0, end - 1], atol=1e-4, rtol=1e-4)


def test_chain_follows_training_time_test_steps(tiny):
    target, head = tiny
    tokens = torch.randint(0, VOCAB, (30,)).tolist()
    d = Eagle3Drafter(head)
    t = 20
    aux = features(target, head, tokens)
    d.sync(DecodeState(tokens=tokens[:t + 1], prompt_len=5, feats=aux[0, :t]))
    draft, _ = d.draft_chain(4, SamplingParams(), None)
    assert all(head.t2d[x] for x in draft.tolist())  # only draft-vocabulary tokens
    # training-time test: step j at position t-1 reads x_{t+j}; feed the drafts as the sequence
    seq = tokens[:t + 1] + draft[:3].tolist()
    with torch.no_grad():
        _, logits = head(features(target, head, seq), torch.tensor([seq]), torch.ones(1, len(seq)), 4)
    assert [int(head.draft_ids[logits[j][0, t - 1].argmax()]) for j in range(4)] == draft.tolist()


def forced_logits(d: Eagle3Drafter, path: list[int]) -> torch.Tensor:
    """Head logits after drafting `path` as a chain (then the drafts are dropped again)."""
    hidden, logits = d.last_hidden, d.last_logits
    for i, tok in enumerate(path):
        hidden = d._step(hidden, torch.tensor([[tok]]), torch.tensor([[d.n_real + i]]), None)
        logits = d.head.logits(hidden)[0, 0]
    d._truncate(d.n_real)
    return logits


def test_tree_children_are_each_paths_top_k(tiny):
    target, head = tiny
    tokens = torch.randint(0, VOCAB, (25,)).tolist()
    d = Eagle3Drafter(head)
    d.sync(DecodeState(tokens=tokens, prompt_len=5, feats=features(target, head, tokens)[0, :-1]))
    spec = TreeSpec(depth=4, top_k=3, tokens=20)
    tree = d.draft_tree(spec)
    assert len(tree) == 20 and all(head.t2d[x] for x in tree.tokens)
    assert all(p < i for i, p in enumerate(tree.parents))
    with torch.no_grad():
        for node in range(-1, len(tree)):
            children = [i for i, p in enumerate(tree.parents) if p == node]
            if not children:
                continue
            path, cur = [], node
            while cur != -1:
                path.insert(0, tree.tokens[cur])
                cur = tree.parents[cur]
            top = set(head.draft_ids[forced_logits(d, path).topk(spec.top_k).indices].tolist())
            assert {tree.tokens[c] for c in children} <= top
            assert all(tree.depths[c] == len(path) + 1 for c in children)


def test_tree_with_top_k_one_is_the_greedy_chain(tiny):
    target, head = tiny
    tokens = torch.randint(0, VOCAB, (25,)).tolist()
    state = DecodeState(tokens=tokens, prompt_len=5, feats=features(target, head, tokens)[0, :-1])
    d = Eagle3Drafter(head)
    d.sync(state)
    chain, _ = d.draft_chain(5, SamplingParams(), None)
    d.sync(state)
    tree = d.draft_tree(TreeSpec(depth=5, top_k=1, tokens=5))
    assert tree.tokens == chain.tolist() and tree.parents == [-1, 0, 1, 2, 3]


@pytest.mark.parametrize("mode", ["chain", "tree"])
def test_greedy_exact_and_caches_equal_fresh_prefill(tiny, mode):
    target, head = tiny
    prompt = torch.randint(0, VOCAB, (9,)).tolist()
    ref, _ = SpecDecoder(target, mode="plain").generate(prompt, 40)
    dec = SpecDecoder(target, Eagle3Drafter(head), mode=mode, k=3, tree=TreeSpec(4, 3, 12))
    res = dec.decode(prompt, 40)
    assert res.tokens == ref and res.metrics.new_tokens == 40
    state = res.state
    tokens = state.tokens
    fresh = DynamicCache(config=target.config)
    with torch.no_grad():
        target(torch.tensor([tokens[:-1]]), **cache_kw(target, fresh), use_cache=True)
    for i, want in enumerate(fresh.layers):
        keys, values = dec.target.kv(i)
        torch.testing.assert_close(keys, want.keys, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(values, want.values, atol=1e-5, rtol=1e-4)
    # the head's real pairs after a sync equal a fresh head's over the same committed state
    dec.drafters[0].sync(state)
    fresh_head = Eagle3Drafter(head)
    fresh_head.sync(DecodeState(tokens=tokens, prompt_len=len(prompt), feats=state.feats))
    torch.testing.assert_close(dec.drafters[0].k[:, :, :dec.drafters[0].n_real], fresh_head.k, atol=1e-4, rtol=1e-4)
