"""Same-shape EAGLE-3 heads stacked into one batched prefill (the pool's counterfactual evaluation).

A head's prefill of a 1-5 token chunk is a few million multiply-adds: one at a time, eight heads cost mostly
dispatch. The bank stacks their weights ([N, ...]) once and prefills the verified suffix into every member head in
one pass (bmm over the stacked weights, batched attention over the stacked caches), then hands each head its own
cache, last hidden, last logits and tracked predictions back, exactly as `Eagle3Drafter.sync` would have left them.

Shapes: N heads, n new positions, L cached positions, h head hidden, nh heads x d head dim, Vd draft vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from specsel.eagle3_drafter import Eagle3Drafter


def _rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """x [N,n,h], weight [N,h] -> per-head RMSNorm (float32 statistics, as LlamaRMSNorm)."""
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return weight[:, None, :] * xf.to(x.dtype)


def _linear(x: torch.Tensor, weight_t: torch.Tensor) -> torch.Tensor:
    """x [N,n,i] or [n,i] (shared), weight_t [N,i,o] (transposed, contiguous) -> [N,n,o]."""
    return torch.matmul(x, weight_t)


def same_shape(drafters: list[Eagle3Drafter]) -> bool:
    """Whether the heads can share one bank: equal tensor shapes and the same frozen token embedding."""
    first = drafters[0].head
    shapes = {k: v.shape for k, v in first.state_dict().items()}
    for d in drafters[1:]:
        sd = d.head.state_dict()
        if {k: v.shape for k, v in sd.items()} != shapes or sd["embed_tokens.weight"].dtype != first.fc.weight.dtype:
            return False
        if not torch.equal(sd["embed_tokens.weight"], first.embed_tokens.weight):
            return False
    return True


class HeadBank:
    """The stacked weights of N same-shape heads; `sync(state)` prefills the suffix every head misses."""

    def __init__(self, drafters: list[Eagle3Drafter]):
        if not drafters or not same_shape(drafters):
            raise ValueError("a head bank needs EAGLE-3 heads of one shape sharing the target's token embedding")
        self.drafters = drafters
        heads = [d.head for d in drafters]
        first = heads[0]

        def stack(get):
            return torch.stack([get(h).detach() for h in heads])

        def stack_t(get):  # linear weights [o,i] -> [N,i,o], laid out for a batched matmul
            return torch.stack([get(h).detach().t() for h in heads]).contiguous()

        self.fc = stack_t(lambda h: h.fc.weight)  # [N,3H,h]
        self.ln_in = stack(lambda h: h.midlayer.input_layernorm.weight)  # [N,h]
        self.ln_hidden = stack(lambda h: h.midlayer.hidden_norm.weight)
        self.ln_post = stack(lambda h: h.midlayer.post_attention_layernorm.weight)
        self.norm = stack(lambda h: h.norm.weight)
        attn = [h.midlayer.self_attn for h in heads]
        self.wq = stack_t(lambda h: h.midlayer.self_attn.q_proj.weight)  # [N,2h,nh*d]
        self.wk = stack_t(lambda h: h.midlayer.self_attn.k_proj.weight)  # [N,2h,nkv*d]
        self.wv = stack_t(lambda h: h.midlayer.self_attn.v_proj.weight)
        self.wo = stack_t(lambda h: h.midlayer.self_attn.o_proj.weight)  # [N,nh*d,h]
        self.gate = stack_t(lambda h: h.midlayer.mlp.gate_proj.weight)  # [N,h,I]
        self.up = stack_t(lambda h: h.midlayer.mlp.up_proj.weight)
        self.down = stack_t(lambda h: h.midlayer.mlp.down_proj.weight)  # [N,I,h]
        self.lm_head = stack_t(lambda h: h.lm_head.weight)  # [N,h,Vd]
        self.embed, self.rotary = first.embed_tokens, first.rotary_emb
        self.eps = first.config.rms_norm_eps
        self.n_heads, self.n_kv, self.head_dim = attn[0].n_heads, attn[0].n_kv, attn[0].head_dim

    @torch.inference_mode()
    def sync(self, state) -> None:
        """Prefill into every head the pairs the target verified since it last synced; the heads end up as if each
        had run `Eagle3Drafter.sync(state)`. Heads ahead of the others (the one that drafted, when feedback is
        batched) are rewound to the common start and recompute those pairs: one pass over the whole stack costs
        less than slicing the stacked weights."""
        ds = self.drafters
        start, end = min(d.n_real for d in ds), state.feats.shape[0]
        if end <= start:
            for d in ds:
                d.sync(state)  # nothing new: each only drops its draft keys
            return
        for d in ds:
            d.rewind(start)
        m = len(ds)
        n, nh, hd = end - start, self.n_heads, self.head_dim
        dev = self.fc.device
        feats = state.feats[start:end].to(self.fc.dtype)  # [n,3H]
        tokens = torch.tensor(state.tokens[start + 1:end + 1], device=dev)  # [n]
        hidden = _linear(feats, self.fc)  # [M,n,h]
        emb = self.embed(tokens)[None].expand(m, n, -1)  # [M,n,h] the shared frozen embedding
        x = torch.cat([_rms(emb, self.ln_in, self.eps), _rms(hidden, self.ln_hidden, self.eps)], -1)
        cos, sin = self.rotary(x, torch.arange(start, end, device=dev)[None])  # [1,n,d]
        q = _linear(x, self.wq).view(m, n, nh, hd).transpose(1, 2)  # [M,nh,n,d]
        k = _linear(x, self.wk).view(m, n, self.n_kv, hd).transpose(1, 2)  # [M,nkv,n,d]
        v = _linear(x, self.wv).view(m, n, self.n_kv, hd).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        rep = nh // self.n_kv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        # rule: new pairs see every earlier real pair and are causal among themselves (as Eagle3Drafter.sync)
        past_k = torch.cat([d.k[:, :, :start] for d in ds]) if start else k[:, :, :0]  # [M,nh,L,d]
        past_v = torch.cat([d.v[:, :, :start] for d in ds]) if start else v[:, :, :0]
        keys, values = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)  # [M,nh,L+n,d]
        allowed = torch.ones(n, end, dtype=torch.bool, device=dev)
        allowed[:, start:] = torch.ones(n, n, dtype=torch.bool, device=dev).tril()
        o = F.scaled_dot_product_attention(q, keys, values, attn_mask=allowed)  # [M,nh,n,d]
        out = hidden + _linear(o.transpose(1, 2).reshape(m, n, nh * hd), self.wo)  # [M,n,h]
        post = _rms(out, self.ln_post, self.eps)
        out = out + _linear(F.silu(_linear(post, self.gate)) * _linear(post, self.up), self.down)
        logits = _linear(_rms(out, self.norm, self.eps), self.lm_head).float()  # [M,n,Vd]
        for j, d in enumerate(ds):
            d.k, d.v = keys[j:j + 1], values[j:j + 1]
            d.commit(start, end, out[j:j + 1], logits[j])
