"""Independent Llama drafters: preset shapes, auto preset choice, and the next-token losses on response positions."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import LlamaConfig

from draftpool.models.llama import PRESETS, build_drafter, drafter_config, pick_preset
from training.losses import drafter_loss


def smollm_like_config():
    """The SmolLM2-135M shape (49k vocab, hidden 576) as a config only."""
    return LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                       num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=2048,
                       rms_norm_eps=1e-5, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)


def test_llama_68m_preset():
    model = build_drafter("llama-68m", smollm_like_config())
    c = model.config
    assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.intermediate_size) == (2, 768, 12, 3072)
    assert c.vocab_size == 49152 and c.tie_word_embeddings and c.architectures == ["LlamaForCausalLM"]
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    n = sum(p.numel() for p in model.parameters())  # tied embeddings counted once
    by_hand = 49152 * 768 + 2 * (4 * 768 * 768 + 3 * 768 * 3072 + 2 * 768) + 768
    assert n == by_hand and 56_000_000 < n < 58_000_000


def test_llama_tiny_preset_config():
    c = drafter_config("llama-tiny", smollm_like_config())
    assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.intermediate_size) == (2, 256, 4, 1024)
    assert (c.vocab_size, c.rms_norm_eps, c.bos_token_id, c.eos_token_id) == (49152, 1e-5, 1, 2)


def test_build_drafter_is_seeded():
    cfg = LlamaConfig(vocab_size=50, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                      num_hidden_layers=2)
    a, b = build_drafter("llama-tiny", cfg, seed=3), build_drafter("llama-tiny", cfg, seed=3)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


@pytest.mark.parametrize("params, preset", [(135_000_000, "llama-tiny"), (999_999_999, "llama-tiny"),
                                            (1_000_000_000, "llama-68m"), (8_000_000_000, "llama-68m")])
def test_pick_preset_auto(params, preset):
    assert pick_preset("auto", params) == preset


def test_pick_preset_explicit_and_unknown():
    for name in PRESETS:
        assert pick_preset(name, 10) == name
    with pytest.raises(ValueError, match="unknown drafter preset 'llama-1b'"):
        pick_preset("llama-1b", 10)


# --- losses ----------------------------------------------------------------------------------------------------------
B, T, V = 2, 6, 11


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(B, T, V, generator=g, dtype=torch.float64) * 2
    target = torch.randn(B, T, V, generator=g, dtype=torch.float64) * 2
    ids = torch.randint(0, V, (B, T), generator=g)
    loss_mask = torch.tensor([[0, 0, 1, 1, 1, 0], [0, 1, 1, 1, 1, 1]])  # response tokens
    return logits, target, ids, loss_mask


def _log_softmax(row):
    m = max(row)
    lse = m + math.log(sum(math.exp(x - m) for x in row))
    return [x - lse for x in row]


def _masked_positions(loss_mask):
    """(b, t) where position t predicts x_{t+1} and x_{t+1} is a response token."""
    return [(b, t) for b in range(B) for t in range(T - 1) if loss_mask[b, t + 1]]


def test_ce_loss_by_hand(batch):
    logits, target, ids, loss_mask = batch
    per = [-_log_softmax(logits[b, t].tolist())[ids[b, t + 1]] for b, t in _masked_positions(loss_mask)]
    loss, metrics = drafter_loss(logits, target, ids, loss_mask, "ce")
    assert loss.item() == pytest.approx(sum(per) / len(per), abs=1e-5)
    assert metrics["n_0"] == len(per) == 8


def test_fkl_loss_by_hand(batch):
    logits, target, ids, loss_mask = batch
    per = []
    for b, t in _masked_positions(loss_mask):
        lq, lp = _log_softmax(logits[b, t].tolist()), _log_softmax(target[b, t].tolist())
        per.append(sum(math.exp(p) * (p - q) for p, q in zip(lp, lq)))
    loss, _ = drafter_loss(logits, target, ids, loss_mask, "fkl")
    assert loss.item() == pytest.approx(sum(per) / len(per), abs=1e-5)


def test_loss_ignores_prompt_and_padding_positions(batch):
    logits, target, ids, loss_mask = batch
    base = drafter_loss(logits, target, ids, loss_mask, "fkl")[0]
    noisy = logits.clone()
    noisy[0, :1] += 100 * torch.randn(1, V, dtype=torch.float64)  # predicts x_1, a prompt token
    noisy[0, 4:] += 100 * torch.randn(2, V, dtype=torch.float64)  # predicts x_5 (masked) and nothing (last)
    noisy[1, 5] += 100  # the last position predicts nothing
    assert drafter_loss(noisy, target, ids, loss_mask, "fkl")[0].item() == pytest.approx(base.item(), abs=1e-6)
    noisy[0, 1] += 100 * torch.randn(V, dtype=torch.float64)  # predicts x_2, a response token
    assert abs(drafter_loss(noisy, target, ids, loss_mask, "fkl")[0].item() - base.item()) > 1e-3


def test_metrics(batch):
    logits, target, ids, loss_mask = batch
    _, m = drafter_loss(target.clone(), target, ids, loss_mask, "tvd")
    assert m["top1_0"] == pytest.approx(1.0) and m["accept_0"] == pytest.approx(1.0, abs=1e-6)
    assert drafter_loss(logits, None, ids, loss_mask, "ce")[1] == {}


def test_a_drafter_cut_from_the_target_is_its_first_layers_exactly():
    """target:N: the first N layers, embeddings, norm and head copied; the cut model's hidden state after layer N-1
    equals the target's; the target is untouched; bad N and non-Llama targets refused."""
    from transformers import LlamaForCausalLM

    from draftpool.models.llama import from_target_layers

    cfg = LlamaConfig(vocab_size=50, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                      num_hidden_layers=4, tie_word_embeddings=True)
    torch.manual_seed(0)
    target = LlamaForCausalLM(cfg).eval()
    before = {k: v.clone() for k, v in target.state_dict().items()}
    cut = from_target_layers(target, 2).eval()
    assert cut.config.num_hidden_layers == 2 and target.config.num_hidden_layers == 4
    assert cut.lm_head.weight.data_ptr() == cut.model.embed_tokens.weight.data_ptr()
    assert cut.model.embed_tokens.weight.data_ptr() != target.model.embed_tokens.weight.data_ptr()
    ids = torch.tensor([[3, 7, 11, 2, 9]])
    with torch.no_grad():  # the cut's logits = the target's head on its norm of the state after layer 1
        t = target(input_ids=ids, output_hidden_states=True).hidden_states[2]
        want = target.lm_head(target.model.norm(t))
        assert torch.allclose(cut(input_ids=ids).logits, want, atol=1e-5)
    assert all(torch.equal(before[k], v) for k, v in target.state_dict().items())
    for bad in (0, 4):
        with pytest.raises(ValueError, match="1 <= N < 4"):
            from_target_layers(target, bad)
