"""The EAGLE-3 draft head: fused target features, one decoder layer on [embedding ; hidden], a reduced vocabulary.

Tensor names follow the flat layout that vLLM and SGLang load (`fc.weight`, `midlayer.*`, `norm.weight`,
`lm_head.weight`, `d2t`, `t2d`). The target's token embedding is copied in and frozen (`embed_tokens`, not exported).

Shapes: B batch, T positions, H target hidden, h head hidden (= H by default), V target vocab, Vd draft vocab.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRMSNorm, LlamaRotaryEmbedding, apply_rotary_pos_emb


def default_aux_layers(num_layers: int) -> list[int]:
    """HF `output_hidden_states` indices (2, N//2, N-3): the inputs of decoder layers 2, N/2 and N-3."""
    return [2, num_layers // 2, num_layers - 3]


def check_aux_layers(layer_ids: list[int], num_layers: int) -> None:
    # id k = hidden_states[k] = the input of decoder layer k, so k < N (hidden_states[N] is the final-normed output)
    if len(layer_ids) != 3 or any(not 1 <= i < num_layers for i in layer_ids):
        raise ValueError(f"aux layer ids {layer_ids} must be 3 indices in [1, {num_layers - 1}] "
                         f"(HF hidden_states numbering for a {num_layers}-layer target)")


def head_config(target_config, draft_vocab_size: int, aux_layers: list[int]) -> LlamaConfig:
    """A 1-layer Llama config shaped after the target, with the EAGLE-3 extras."""
    t = getattr(target_config, "text_config", target_config)
    cfg = LlamaConfig(
        vocab_size=t.vocab_size, hidden_size=t.hidden_size, intermediate_size=t.intermediate_size,
        num_hidden_layers=1, num_attention_heads=t.num_attention_heads,
        num_key_value_heads=getattr(t, "num_key_value_heads", t.num_attention_heads),
        head_dim=getattr(t, "head_dim", None) or t.hidden_size // t.num_attention_heads,
        max_position_embeddings=t.max_position_embeddings, rms_norm_eps=t.rms_norm_eps,
        rope_parameters=getattr(t, "rope_parameters", None), tie_word_embeddings=False,
        bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id, pad_token_id=getattr(t, "pad_token_id", None),
    )
    cfg.architectures = ["LlamaForCausalLMEagle3"]
    cfg.draft_vocab_size = draft_vocab_size
    cfg.target_hidden_size = t.hidden_size
    cfg.eagle_aux_hidden_state_layer_ids = list(aux_layers)
    cfg.norm_before_residual = False
    cfg.target_num_hidden_layers = t.num_hidden_layers
    return cfg


def select_draft_vocab(token_counts: torch.Tensor, draft_vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Most frequent tokens -> (d2t [Vd] int64 offsets, t2d [V] bool); ties broken by token id.

    target_id = draft_id + d2t[draft_id]; draft ids keep the target order, so d2t is non-negative and non-decreasing.
    """
    vocab = token_counts.numel()
    if not 0 < draft_vocab_size <= vocab:
        raise ValueError(f"draft_vocab_size {draft_vocab_size} must be in [1, {vocab}]")
    # a stable descending sort keeps lower ids first among equal counts
    order = torch.sort(token_counts.double(), descending=True, stable=True).indices
    chosen = torch.sort(order[:draft_vocab_size]).values  # [Vd] target ids, ascending
    d2t = chosen - torch.arange(draft_vocab_size)
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[chosen] = True
    return d2t.long(), t2d


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


class Eagle3Head(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.config = cfg
        h, vd = cfg.hidden_size, cfg.draft_vocab_size
        self.embed_tokens = nn.Embedding(cfg.vocab_size, h)
        self.embed_tokens.weight.requires_grad_(False)
        self.fc = nn.Linear(3 * cfg.target_hidden_size, h, bias=False)
        self.midlayer = Eagle3MidLayer(cfg)
        self.norm = LlamaRMSNorm(h, eps=cfg.rms_norm_eps)
        self.lm_head = nn.Linear(h, vd, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(cfg)
        self.register_buffer("d2t", torch.zeros(vd, dtype=torch.long))
        self.register_buffer("t2d", torch.zeros(cfg.vocab_size, dtype=torch.bool))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        std = self.config.initializer_range
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=std)

    @property
    def draft_ids(self) -> torch.Tensor:
        """[Vd] target token id of each draft id."""
        return torch.arange(self.d2t.numel(), device=self.d2t.device) + self.d2t

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [B,T,h] (pre-norm) -> draft logits [B,T,Vd]."""
        return self.lm_head(self.norm(hidden))

    def step(self, hidden: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor, attend: Attend
             ) -> torch.Tensor:
        """One pass of the layer: hidden [B,T,h] read at positions [B,T] with next tokens [B,T] -> [B,T,h]."""
        cos, sin = self.rotary_emb(hidden, positions)
        return self.midlayer(hidden, self.embed_tokens(tokens), cos, sin, attend)

    def forward(self, aux: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor, steps: int,
                loss_mask: torch.Tensor | None = None, own_tokens: bool = False
                ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Training-time test: `steps` unrolled draft steps over a whole sequence at once.

        aux [B,T,3H] target features at positions t; input_ids [B,T] the full sequence; attention_mask [B,T].
        Step j at position t reads token x_{t+1+j} and predicts x_{t+2+j}; its hidden is the previous step's
        pre-norm output. Its query (position t+j) attends to the step-0 keys at positions <= t (causal, non-pad) and to
        the keys of steps 1..j at its own position t (the draft chain).
        Returns per step the pre-norm hidden [B,T,h] and the draft logits [B,T,Vd]; with `loss_mask` [B,T] (1 on
        response tokens) the logits of step j only at the positions whose target x_{t+2+j} is a response token
        ([N_j,Vd], row-major order), which skips the lm_head where no loss is taken.
        With `own_tokens` steps 1.. read the head's own greedy draft of the previous step instead of the true token:
        the chain it would draft at decode time from every position at once (replay of off-path drafts).
        """
        b, t = input_ids.shape
        hidden = self.fc(aux)  # [B,T,h]
        pos = torch.arange(t, device=input_ids.device).unsqueeze(0).expand(b, t)
        causal = torch.ones(t, t, dtype=torch.bool, device=input_ids.device).tril()
        allowed0 = causal[None, None] & attention_mask.bool()[:, None, None, :]  # [B,1,T,T]
        keys: list[torch.Tensor] = []
        values: list[torch.Tensor] = []
        outs = []
        for j in range(steps):
            if own_tokens and j > 0:
                tokens = self.draft_ids[self.logits(hidden).argmax(-1)]  # [B,T] the previous step's greedy draft
            else:
                tokens = F.pad(input_ids[:, 1 + j:], (0, min(1 + j, t)), value=0)  # [B,T] x_{t+1+j}, 0 past end
            hidden = self.step(hidden, tokens, pos + j, ttt_attend(keys, values, allowed0))
            outs.append(hidden)
        if loss_mask is None:
            return outs, [self.logits(o) for o in outs]
        # rule: shifts stay T wide when T < 2 + j (a short request: those steps give no loss)
        masks = [F.pad(loss_mask[:, 2 + j:], (0, min(2 + j, t)), value=0).bool() for j in range(steps)]
        return outs, [self.logits(o[m]) for o, m in zip(outs, masks)]

    def export_state_dict(self) -> dict[str, torch.Tensor]:
        """The flat-layout tensors (no `model.` prefix, no embedding: the target's is shared)."""
        return {k: v.detach().contiguous() for k, v in self.state_dict().items()
                if not k.startswith(("embed_tokens.", "rotary_emb."))}
