"""The EAGLE-3 head's decoder layer (attention over [embedding ; hidden], MLP, norms) and the attention hooks that
training-time test runs it with (`ttt_attend`, `ttt_rows_attend`). The layer is written once: TTT, decode-time
drafting (specsel/decoding/eagle3.py) and the head bank (specsel/selection/head_bank.py) run this forward, each with
its own `attend` over the keys it keeps.

Shapes: B batch, T positions, h head hidden, nh heads x d head dim.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRMSNorm, apply_rotary_pos_emb


class Eagle3Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.n_heads, self.n_kv, self.head_dim = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.q_proj = nn.Linear(2 * cfg.hidden_size, self.n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(2 * cfg.hidden_size, self.n_kv * self.head_dim, bias=False)
        self.v_proj = nn.Linear(2 * cfg.hidden_size, self.n_kv * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.n_heads * self.head_dim, cfg.hidden_size, bias=False)

    def qkv(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        """x [B,T,2h] -> q [B,nh,T,d], k/v [B,nh,T,d] (kv heads repeated), rotary applied."""
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.n_kv, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.n_kv, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        rep = self.n_heads // self.n_kv
        return q, k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)


class Eagle3MLP(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


Attend = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


class Eagle3MidLayer(nn.Module):
    """The head's one decoder layer. Training-time test, decode-time drafting and the stacked bank all run this
    forward; they differ only in `attend`, which sees the new queries, keys and values and returns the attention
    output (so each caller keeps its own keys: TTT's per-step lists, a drafter's KV cache, a bank's stacked caches)."""

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.hidden_norm = LlamaRMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.self_attn = Eagle3Attention(cfg)
        self.post_attention_layernorm = LlamaRMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.mlp = Eagle3MLP(cfg)

    def forward(self, hidden: torch.Tensor, emb: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                attend: Attend) -> torch.Tensor:
        """hidden [B,T,h] the pre-norm hidden read, emb [B,T,h] token embeddings, cos/sin [B,T,d] rotary of the
        positions; attend(q [B,nh,T,d], k, v [B,nh,T,d]) -> [B,nh,T,d]. -> the layer's pre-norm output [B,T,h]."""
        # rule: the layer reads [norm(embedding) ; norm(hidden)] (width 2h); the residual stream is the hidden
        x = torch.cat([self.input_layernorm(emb), self.hidden_norm(hidden)], dim=-1)
        q, k, v = self.self_attn.qkv(x, cos, sin)
        o = attend(q, k, v)  # [B,nh,T,d]
        out = hidden + self.self_attn.o_proj(o.transpose(1, 2).reshape(*hidden.shape[:2], -1))
        return out + self.mlp(self.post_attention_layernorm(out))


def ttt_attend(keys: list[torch.Tensor], values: list[torch.Tensor], allowed0: torch.Tensor) -> Attend:
    """Training-time-test attention of step j = len(keys): its query at position t attends to the step-0 keys at
    positions allowed by allowed0 [B,1,T,T] and to the keys of steps 1..j at its own position t (the draft chain).
    The new keys are appended to `keys` / `values`."""

    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        keys.append(k)
        values.append(v)
        t = q.shape[2]
        scale = 1.0 / math.sqrt(q.shape[-1])
        s0 = (q @ keys[0].transpose(-1, -2)) * scale  # [B,nh,T,T]
        s0 = s0.masked_fill(~allowed0, torch.finfo(s0.dtype).min)
        diag = [(q * kk).sum(-1, keepdim=True) * scale for kk in keys[1:]]  # j x [B,nh,T,1]
        p = torch.softmax(torch.cat([s0, *diag], dim=-1).float(), dim=-1).to(q.dtype)
        o = p[..., :t] @ values[0]  # [B,nh,T,d]
        for i, vv in enumerate(values[1:]):
            o = o + p[..., t + i: t + i + 1] * vv
        return o

    return attend


def ttt_rows_attend(key0: torch.Tensor, value0: torch.Tensor, allowed0: torch.Tensor, rb: torch.Tensor,
                    rt: torch.Tensor) -> Attend:
    """`ttt_attend` for steps >= 1 computed at N rows only (rb, rt [N]: batch and position of each): the queries,
    keys and values come as [1,nh,N,d]; step 0's keys / values [B,nh,T,d] are read at every position as before.
    Attention is a small share of a step: the row's scores over step 0 are taken in the [B,nh,T,T] layout (queries
    scattered in, probabilities scattered back) rather than gathering step 0's keys per row ([N,nh,T,d])."""
    keys: list[torch.Tensor] = []
    values: list[torch.Tensor] = []
    b, nh, t, d = key0.shape
    scale = 1.0 / math.sqrt(d)

    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = (x[0].transpose(0, 1) for x in (q, k, v))  # [N,nh,d]
        keys.append(k)
        values.append(v)
        qf = q.new_zeros(b, nh, t, d)
        qf[rb, :, rt] = q  # [B,nh,T,d], zero off the rows
        s0 = (qf @ key0.transpose(-1, -2))[rb, :, rt] * scale  # [N,nh,T]
        s0 = s0.masked_fill(~allowed0[rb, 0, rt][:, None], torch.finfo(s0.dtype).min)
        diag = [(q * kk).sum(-1, keepdim=True) * scale for kk in keys]  # j x [N,nh,1]
        p = torch.softmax(torch.cat([s0, *diag], dim=-1).float(), dim=-1).to(q.dtype)  # [N,nh,T+j]
        pf = p.new_zeros(b, nh, t, t)
        pf[rb, :, rt] = p[..., :t]
        o = (pf @ value0)[rb, :, rt]  # [N,nh,d]
        for i, vv in enumerate(values):
            o = o + p[..., t + i: t + i + 1] * vv
        return o.transpose(0, 1)[None]  # [1,nh,N,d]

    return attend
