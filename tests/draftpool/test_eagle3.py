"""The EAGLE-3 head on a tiny random Llama-shaped target: draft vocabulary, aux layers, TTT attention, export names."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import LlamaConfig

from draftpool.models.eagle3 import Eagle3Head, check_aux_layers, default_aux_layers, head_config, select_draft_vocab

V, H, NH, NKV, INTER, LAYERS, VD = 97, 32, 4, 2, 64, 6, 40
B, T = 2, 8


def target_config():
    return LlamaConfig(vocab_size=V, hidden_size=H, num_attention_heads=NH, num_key_value_heads=NKV,
                       intermediate_size=INTER, num_hidden_layers=LAYERS, max_position_embeddings=64)


@pytest.fixture(scope="module")
def head():
    torch.manual_seed(0)
    h = Eagle3Head(head_config(target_config(), VD, default_aux_layers(LAYERS)))
    with torch.no_grad():
        for p in h.parameters():  # norms included, so a forgotten norm weight shows up
            p.copy_(torch.randn_like(p) * 0.3 + (1.0 if p.dim() == 1 else 0.0))
        d2t, t2d = select_draft_vocab(torch.randint(0, 50, (V,)), VD)
        h.d2t.copy_(d2t)
        h.t2d.copy_(t2d)
    return h.eval()


def inputs(seed=0, b=B, t=T):
    g = torch.Generator().manual_seed(seed)
    aux, ids = torch.randn(b, t, 3 * H, generator=g), torch.randint(0, V, (b, t), generator=g)
    return aux, ids, torch.ones(b, t, dtype=torch.long)


# --- draft vocabulary ------------------------------------------------------------------------------------------------
def test_select_draft_vocab_small_example_with_ties():
    counts = torch.tensor([5, 1, 5, 0, 3, 5, 3, 0, 0, 2])
    d2t, t2d = select_draft_vocab(counts, 4)
    # top counts: ids 0, 2, 5 (count 5), then 4 and 6 tie at 3 -> the lower id 4 wins
    assert d2t.dtype == torch.int64 and d2t.tolist() == [0, 1, 2, 2]  # target ids 0, 2, 4, 5
    assert t2d.dtype == torch.bool and t2d.nonzero().flatten().tolist() == [0, 2, 4, 5]


@pytest.mark.parametrize("vd", [1, 13, 40, V])
def test_select_draft_vocab_matches_brute_force(vd):
    counts = torch.randint(0, 6, (V,), generator=torch.Generator().manual_seed(vd))  # many ties
    d2t, t2d = select_draft_vocab(counts, vd)
    expected = sorted(sorted(range(V), key=lambda i: (-int(counts[i]), i))[:vd])
    target_ids = (torch.arange(vd) + d2t).tolist()
    assert target_ids == expected
    assert t2d.shape == (V,) and int(t2d.sum()) == vd and t2d.nonzero().flatten().tolist() == expected
    assert (d2t >= 0).all() and (d2t[1:] >= d2t[:-1]).all()


@pytest.mark.parametrize("vd", [0, -1, V + 1])
def test_select_draft_vocab_bad_size(vd):
    with pytest.raises(ValueError, match="draft_vocab_size"):
        select_draft_vocab(torch.ones(V), vd)


# --- aux layers ------------------------------------------------------------------------------------------------------
def test_default_aux_layers():
    assert default_aux_layers(30) == [2, 15, 27]
    assert default_aux_layers(LAYERS) == [2, 3, 3]
    check_aux_layers(default_aux_layers(30), 30)
    check_aux_layers([1, 3, LAYERS - 1], LAYERS)
    # hidden_states[N] is the final-normed output, not a layer input
    with pytest.raises(ValueError, match="aux layer ids"):
        check_aux_layers([1, 3, LAYERS], LAYERS)


@pytest.mark.parametrize("ids", [[0, 2, 3], [2, 3, LAYERS], [2, 3, LAYERS + 1], [2, 3], [1, 2, 3, 4], [-1, 2, 3]])
def test_check_aux_layers_out_of_range(ids):
    with pytest.raises(ValueError, match="aux layer ids"):
        check_aux_layers(ids, LAYERS)


# --- forward ---------------------------------------------------------------------------------------------------------
def test_head_config_and_shapes(head):
    cfg = head.config
    assert (cfg.num_hidden_layers, cfg.draft_vocab_size, cfg.target_hidden_size, cfg.vocab_size) == (1, VD, H, V)
    assert cfg.eagle_aux_hidden_state_layer_ids == [2, 3, 3] and cfg.architectures == ["LlamaForCausalLMEagle3"]
    aux, ids, mask = inputs()
    with torch.no_grad():
        hiddens, logits = head(aux, ids, mask, 3)
    assert len(hiddens) == len(logits) == 3
    assert all(h.shape == (B, T, H) for h in hiddens) and all(lg.shape == (B, T, VD) for lg in logits)
    assert torch.equal(head.draft_ids, torch.arange(VD) + head.d2t)


@pytest.mark.parametrize("j", [0, 1, 2, 3])
def test_ttt_causality(head, j):
    """Step j at position t reads x_{t+1+j}: tokens after it must not matter, that one must."""
    steps = 4
    aux, ids, mask = inputs(1)
    with torch.no_grad():
        base = head(aux, ids, mask, steps)[0][j]
        for t in range(T - 1 - j):
            later = ids.clone()
            later[:, t + 2 + j:] = (later[:, t + 2 + j:] + 1 + torch.arange(T - t - 2 - j)) % V
            out = head(aux, later, mask, steps)[0][j]
            assert torch.allclose(out[:, : t + 1], base[:, : t + 1], atol=1e-6), f"step {j} position {t} sees future"
            read = ids.clone()
            read[:, t + 1 + j] = (read[:, t + 1 + j] + 1) % V
            out = head(aux, read, mask, steps)[0][j]
            assert (out[:, t] - base[:, t]).abs().max() > 1e-3, f"step {j} position {t} ignores x_(t+1+j)"


def test_aux_causality(head):
    aux, ids, mask = inputs(2)
    with torch.no_grad():
        base = head(aux, ids, mask, 3)[0]
        aux2 = aux.clone()
        aux2[:, 5:] = torch.randn_like(aux2[:, 5:])
        out = head(aux2, ids, mask, 3)[0]
    for j in range(3):
        assert torch.allclose(out[j][:, :5], base[j][:, :5], atol=1e-6)
        assert (out[j][:, 5] - base[j][:, 5]).abs().max() > 1e-3


def _rms(x, w, eps):
    return w.double() * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)


def _rope(x, pos, theta):
    """x [T, d] at positions pos [T]: rotate the pairs (i, i + d/2) by pos * theta^(-2i/d)."""
    d = x.shape[-1]
    out = x.clone()
    for i in range(d // 2):
        ang = pos * theta ** (-2 * i / d)
        a, b, cos, sin = x[:, i], x[:, i + d // 2], torch.cos(ang), torch.sin(ang)
        out[:, i], out[:, i + d // 2] = a * cos - b * sin, b * cos + a * sin
    return out


def reference_ttt(head, aux, ids, mask, steps):
    """The head's layer written out by hand in float64 -> per step (hidden, logits). Step 0 is a plain causal
    single-layer pass; step j reads x_{t+1+j}, starts from step j-1's output, and its query (rotary position t+j)
    also sees the keys of steps 1..j at its own position t (rotary positions t+1..t+j)."""
    sd = {k: v.double() for k, v in head.state_dict().items()}
    cfg, eps, d = head.config, head.config.rms_norm_eps, head.config.head_dim
    theta = cfg.rope_parameters["rope_theta"]
    a, m = "midlayer.self_attn.", "midlayer.mlp."
    b, t = ids.shape
    pos = torch.arange(t, dtype=torch.float64)
    hid = aux.double() @ sd["fc.weight"].T
    keys, values, outs = [], [], []
    for j in range(steps):
        nxt = torch.cat([ids[:, 1 + j:], torch.zeros(b, 1 + j, dtype=torch.long)], dim=1)  # x_{t+1+j}
        x = torch.cat([_rms(sd["embed_tokens.weight"][nxt], sd["midlayer.input_layernorm.weight"], eps),
                       _rms(hid, sd["midlayer.hidden_norm.weight"], eps)], dim=-1)
        q = (x @ sd[a + "q_proj.weight"].T).view(b, t, NH, d)
        k = (x @ sd[a + "k_proj.weight"].T).view(b, t, NKV, d)
        values.append((x @ sd[a + "v_proj.weight"].T).view(b, t, NKV, d))
        keys.append(torch.stack([_rope(k[:, :, g].reshape(-1, d), pos.repeat(b) + j, theta).view(b, t, d)
                                 for g in range(NKV)], dim=2))
        attn = torch.zeros(b, t, NH, d, dtype=torch.float64)
        for bi in range(b):
            for h in range(NH):
                g = h // (NH // NKV)  # the kv head shared by this query head
                qh = _rope(q[bi, :, h], pos + j, theta)
                for i in range(t):
                    kv = [(keys[0][bi, s, g], values[0][bi, s, g]) for s in range(i + 1) if mask[bi, s]]
                    kv += [(keys[n][bi, i, g], values[n][bi, i, g]) for n in range(1, j + 1)]
                    scores = [float(qh[i] @ kk) / math.sqrt(d) for kk, _ in kv]
                    w = [math.exp(sc - max(scores)) for sc in scores]
                    attn[bi, i, h] = sum(wi / sum(w) * vv for wi, (_, vv) in zip(w, kv))
        hid = hid + attn.reshape(b, t, NH * d) @ sd[a + "o_proj.weight"].T
        y = _rms(hid, sd["midlayer.post_attention_layernorm.weight"], eps)
        gate = y @ sd[m + "gate_proj.weight"].T
        hid = hid + (gate * torch.sigmoid(gate) * (y @ sd[m + "up_proj.weight"].T)) @ sd[m + "down_proj.weight"].T
        outs.append((hid, _rms(hid, sd["norm.weight"], eps) @ sd["lm_head.weight"].T))
    return outs


def test_step0_matches_hand_written_layer(head):
    aux, ids, mask = inputs(3)
    mask[1, 6:] = 0  # also exercise the padding mask
    with torch.no_grad():
        hiddens, logits = head(aux, ids, mask, 1)
    (ref_h, ref_l), = reference_ttt(head, aux, ids, mask, 1)
    assert torch.allclose(hiddens[0].double(), ref_h, atol=1e-4, rtol=1e-4)
    assert torch.allclose(logits[0].double(), ref_l, atol=1e-4, rtol=1e-4)


def test_later_steps_match_hand_written_ttt(head):
    aux, ids, mask = inputs(6)
    mask[0, 5:] = 0
    with torch.no_grad():
        hiddens, logits = head(aux, ids, mask, 3)
    for j, (ref_h, ref_l) in enumerate(reference_ttt(head, aux, ids, mask, 3)):
        assert torch.allclose(hiddens[j].double(), ref_h, atol=1e-4, rtol=1e-4), f"step {j}"
        assert torch.allclose(logits[j].double(), ref_l, atol=1e-4, rtol=1e-4), f"step {j}"


def test_right_padding_does_not_change_real_positions(head):
    steps, n = 3, 5
    aux, ids, _ = inputs(4, b=1, t=n)
    with torch.no_grad():
        alone = head(aux, ids, torch.ones(1, n, dtype=torch.long), steps)[1]
        pad_aux = torch.cat([aux, torch.randn(1, T - n, 3 * H) * 5], dim=1)
        pad_ids = torch.cat([ids, torch.zeros(1, T - n, dtype=torch.long)], dim=1)  # pad id 0 = what F.pad reads
        pad_mask = torch.tensor([[1] * n + [0] * (T - n)])
        other_aux, other_ids, other_mask = inputs(5, b=1)
        padded = head(torch.cat([pad_aux, other_aux]), torch.cat([pad_ids, other_ids]),
                      torch.cat([pad_mask, other_mask]), steps)[1]
        garbage = pad_ids.clone()
        garbage[:, n:] = torch.randint(1, V, (1, T - n))
        padded_garbage = head(pad_aux, garbage, pad_mask, steps)[1]
        other_alone = head(other_aux, other_ids, other_mask, steps)[1]
    for j in range(steps):
        assert torch.allclose(padded[j][0, :n], alone[j][0], atol=1e-5)
        assert torch.allclose(padded[j][1], other_alone[j][0], atol=1e-5)  # batch rows do not mix
        real = n - 1 - j  # positions whose read token x_{t+1+j} is a real one
        assert torch.allclose(padded_garbage[j][0, :real], alone[j][0, :real], atol=1e-5)


# --- export ----------------------------------------------------------------------------------------------------------
def test_export_state_dict_names_and_shapes(head):
    d, sd = head.config.head_dim, head.export_state_dict()
    mid = "midlayer."
    expected = {
        "fc.weight": (H, 3 * H),
        mid + "input_layernorm.weight": (H,), mid + "hidden_norm.weight": (H,),
        mid + "post_attention_layernorm.weight": (H,),
        mid + "self_attn.q_proj.weight": (NH * d, 2 * H), mid + "self_attn.k_proj.weight": (NKV * d, 2 * H),
        mid + "self_attn.v_proj.weight": (NKV * d, 2 * H), mid + "self_attn.o_proj.weight": (H, NH * d),
        mid + "mlp.gate_proj.weight": (INTER, H), mid + "mlp.up_proj.weight": (INTER, H),
        mid + "mlp.down_proj.weight": (H, INTER),
        "norm.weight": (H,), "lm_head.weight": (VD, H), "d2t": (VD,), "t2d": (V,),
    }
    assert set(sd) == set(expected)
    assert {k: tuple(v.shape) for k, v in sd.items()} == expected
    assert sd["d2t"].dtype == torch.int64 and sd["t2d"].dtype == torch.bool
    assert torch.equal(sd["d2t"], head.d2t) and torch.equal(sd["t2d"], head.t2d)
