"""Same-shape heads of a `stackable` kind (EAGLE-3) stacked into one batched prefill (the pool's counterfactual
evaluation). Members are read through `Stackable`, what the bank asks of a drafter beyond the `Drafter` protocol; a
drafter is a member when its kind declares itself stackable (`HeadBank.accepts`).

A head's prefill of a 1-5 token chunk is a few million multiply-adds: one at a time, eight heads cost mostly
dispatch. The bank stacks their weights ([N, ...]) once and runs the head's own layer (`Eagle3MidLayer.forward`, the
code TTT and decode-time drafting run) over every member at once with `torch.func.vmap` + `functional_call`, then
hands each head its own cache, last hidden, last logits and tracked predictions back, exactly as
`Eagle3Drafter.sync` would have left them. The frozen token embedding is shared, not stacked.

Shapes: N heads, n new positions, L cached positions, h head hidden, nh heads x d head dim, Vd draft vocabulary.
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch.func import functional_call, vmap

from draftpool.models import KINDS
from specsel.decoding.request import DecodeState

SHARED = ("embed_tokens.", "rotary_emb.")  # not stacked: the frozen embedding and the rotary buffers


class Stackable(Protocol):
    """A drafter of a stackable kind, as the bank reads it: its head (fc, embed_tokens, rotary_emb, midlayer, norm,
    lm_head: the layer whose code runs over the stack) and its attention cache, which the bank fills for it."""

    kind: str
    head: torch.nn.Module
    n_real: int  # committed pairs in its cache
    k: torch.Tensor | None  # [1,nh,L,d] cached keys (None: empty)
    v: torch.Tensor | None  # [1,nh,L,d] cached values

    def sync(self, state: DecodeState) -> None: ...

    def rewind(self, n_real: int) -> None:
        """Drop its cache back to n_real committed pairs."""
        ...

    def commit(self, start: int, end: int, out: torch.Tensor, logits: torch.Tensor) -> None:
        """Record a prefill of pairs start..end-1 whose keys are already cached: out [1,n,h], logits [n,Vd]."""
        ...


def same_shape(drafters: list[Stackable]) -> bool:
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

    @staticmethod
    def accepts(drafter) -> bool:
        """Whether a drafter can be a member: its kind declares itself `stackable` (the bank runs the EAGLE-3 head's
        own layer, so the EAGLE-3 kind)."""
        kind = KINDS.get(drafter.kind)
        return kind is not None and kind.capabilities.stackable

    def __init__(self, drafters: list[Stackable]):
        if not drafters or not same_shape(drafters):
            raise ValueError("a head bank needs EAGLE-3 heads of one shape sharing the target's token embedding")
        self.drafters = drafters
        self.base = drafters[0].head  # the module whose code runs; its weights are swapped for the stacked ones
        names = [n for n, _ in self.base.named_parameters() if not n.startswith(SHARED)]
        params = [dict(d.head.named_parameters()) for d in drafters]
        # {submodule: {parameter: [N, ...]}}: the stacked weights, grouped by the submodule that runs them
        self.params: dict[str, dict[str, torch.Tensor]] = {}
        for n in names:
            module, name = n.split(".", 1)
            self.params.setdefault(module, {})[name] = torch.stack([p[n].detach() for p in params])

    def run(self, *args):
        """`_one` vmapped over the stack. Wrapped per call, never kept: a vmapped bound method stored on the bank is a
        reference cycle (bank -> wrapper -> bank), and every bank replaced after a weight swap would keep its stacked
        weights until a full collection of the cyclic garbage collector (hundreds of MB on a serving process)."""
        return vmap(self._one, in_dims=(0, None, None, None, None, 0, 0, None))(*args)

    def _one(self, params: dict[str, dict[str, torch.Tensor]], feats: torch.Tensor, emb: torch.Tensor,
             cos: torch.Tensor, sin: torch.Tensor, past_k: torch.Tensor, past_v: torch.Tensor, allowed: torch.Tensor):
        """One head (vmapped over the stack): feats [1,n,3H], emb [1,n,h], past_k/v [1,nh,L,d], allowed [n,L+n]
        -> (out [1,n,h], logits [1,n,Vd], keys / values [1,nh,L+n,d])."""
        head = self.base
        cache = {}

        def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            keys = cache["k"] = torch.cat([past_k, k], 2)  # [1,nh,L+n,d]
            cache["v"] = torch.cat([past_v, v], 2)
            # written out: vmap has no batching rule for the CPU flash kernel behind scaled_dot_product_attention
            s = (q @ keys.transpose(-1, -2)) * q.shape[-1] ** -0.5  # [1,nh,n,L+n]
            s = s.masked_fill(~allowed, torch.finfo(s.dtype).min)
            return torch.softmax(s.float(), dim=-1).to(q.dtype) @ cache["v"]

        hidden = functional_call(head.fc, params["fc"], (feats,))
        out = functional_call(head.midlayer, params["midlayer"], (hidden, emb, cos, sin, attend))
        normed = functional_call(head.norm, params["norm"], (out,))
        logits = functional_call(head.lm_head, params["lm_head"], (normed,))
        return out, logits, cache["k"], cache["v"]

    @torch.inference_mode()
    def sync(self, state: DecodeState) -> None:
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
        n, head = end - start, self.base
        dev = head.fc.weight.device
        feats = state.feats[start:end].to(head.fc.weight.dtype)[None]  # [1,n,3H]
        emb = head.embed_tokens(torch.tensor([state.tokens[start + 1:end + 1]], device=dev))  # [1,n,h] shared
        cos, sin = head.rotary_emb(emb, torch.arange(start, end, device=dev)[None])  # [1,n,d]
        if start:
            past_k, past_v = torch.stack([d.k for d in ds]), torch.stack([d.v for d in ds])  # [N,1,nh,L,d]
        else:
            attn = head.midlayer.self_attn
            past_k = past_v = torch.zeros(len(ds), 1, attn.n_heads, 0, attn.head_dim, device=dev, dtype=emb.dtype)
        # rule: new pairs see every earlier real pair and are causal among themselves (as Eagle3Drafter.sync)
        allowed = torch.ones(n, end, dtype=torch.bool, device=dev)
        allowed[:, start:] = torch.ones(n, n, dtype=torch.bool, device=dev).tril()
        out, logits, keys, values = self.run(self.params, feats, emb, cos, sin, past_k, past_v, allowed)
        for j, d in enumerate(ds):
            d.k, d.v = keys[j], values[j]
            d.commit(start, end, out[j], logits[j, 0].float())
