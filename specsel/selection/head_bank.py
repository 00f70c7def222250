"""Same-shape heads of a `stackable` kind (EAGLE-3) stacked into one batched prefill (the pool's counterfactual
evaluation). Members are read through `Stackable`, what the bank asks of a drafter beyond the `Drafter` protocol; a
drafter is a member when its kind declares itself stackable (`HeadBank.accepts`).

A head's prefill of a 1-5 token chunk is a few million multiply-adds: one at a time, eight heads cost mostly
dispatch. The bank stacks their weights ([N, ...]) once and runs the head's own layer (`Eagle3MidLayer.forward`, the
code TTT and decode-time drafting run) over every member at once with `torch.func.vmap` + `functional_call`, then
hands each head its own cache, last hidden, last logits and tracked predictions back, exactly as
`Eagle3Drafter.sync` would have left them. The frozen token embedding is shared, not stacked.

Low-rank specialists over one base (draftpool/models/low_rank.py: every member's adapters name the same base
fingerprint, and each adapted layer's merged weight less the member's own delta is the same base weight; the base
head itself joins with zero adapters) are not stacked whole: the bank keeps the base once and stacks the adapters,
and runs each adapted layer as base + scale * B A x, so vmap reads a base weight once for every member's rows (one
matmul over [N*n] rows) and only the small factors per member. Weights outside the adapters are shared where every
member's are equal and stacked whole where they differ (a specialist's own vocabulary's lm_head).

Shapes: N heads, n new positions, L cached positions, h head hidden, nh heads x d head dim, Vd draft vocabulary.
"""

from __future__ import annotations

import copy
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, vmap

from draftpool.models import KINDS
from draftpool.models.low_rank import LowRank, delta, fingerprint
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


RUN = ("fc", "midlayer", "norm", "lm_head")  # the submodules the bank runs (the embedding and rotary are shared)


class LowRankLinear(nn.Module):
    """A linear layer as base + low-rank adapter, for the bank's functional calls: weight [o,i] (the shared base),
    a [r,i], b [o,r] (one member's factors under vmap)."""

    def __init__(self, weight: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scale: float):
        super().__init__()
        self.weight, self.a, self.b = nn.Parameter(weight), nn.Parameter(a), nn.Parameter(b)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight) + self.scale * F.linear(F.linear(x, self.a), self.b)  # [.., o]


def shared_base(drafters: list[Stackable]) -> list[LowRank] | None:
    """Each head's adapters when the heads are low-rank specialists of one base (the same base fingerprint, rank,
    scale and adapted layers, and the adapted layers' base weights equal), the base head itself among them with
    zero adapters; None otherwise. Weights that are not adapted may differ (a specialist's own lm_head): the bank
    stacks those whole."""
    lows = [getattr(d.head, "low_rank", None) for d in drafters]
    known = [lo for lo in lows if lo is not None]
    if len(drafters) < 2 or not known:
        return None
    first = known[0]
    if any((lo.base, lo.rank, lo.scale, sorted(lo.factors)) != (first.base, first.rank, first.scale,
                                                               sorted(first.factors)) for lo in known[1:]):
        return None
    if len(known) < len(lows):  # a head without adapters joins only as the base itself
        if any(lo is None and fingerprint(d.head) != first.base for d, lo in zip(drafters, lows)):
            return None
        zero = {m: (torch.zeros_like(a), torch.zeros_like(b)) for m, (a, b) in first.factors.items()}
        lows = [lo if lo is not None else LowRank(zero, first.scale, first.base) for lo in lows]

    def base(i: int, m: str) -> torch.Tensor:  # [o,i] head i's merged weight less its own delta
        a, b = lows[i].factors[m]
        w = drafters[i].head.get_submodule(m).weight.detach()
        return w - delta(a, b, first.scale).to(w.dtype)

    # rule: weights moved off base + adapters (e.g. an online update) make a head a whole head again
    ok = all(torch.allclose(base(i, m), base(0, m), atol=1e-5) for i in range(1, len(drafters)) for m in first.factors)
    return lows if ok else None


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
        self.base = drafters[0].head  # the embedding and rotary come from it
        # {submodule: {parameter: [N, ...]}}: the stacked weights, grouped by the submodule that runs them; `shared`:
        # the same for weights every member reads unstacked (a low-rank bank's base)
        self.params: dict[str, dict[str, torch.Tensor]] = {}
        self.shared: dict[str, dict[str, torch.Tensor]] = {}
        self.lows = shared_base(drafters)
        self.low_rank = self.lows is not None
        self.run_modules = self._low_rank_modules() if self.low_rank else {m: getattr(self.base, m) for m in RUN}
        if self.low_rank:
            return
        names = [n for n, _ in self.base.named_parameters() if not n.startswith(SHARED)]
        params = [dict(d.head.named_parameters()) for d in drafters]
        for n in names:
            module, name = n.split(".", 1)
            self.params.setdefault(module, {})[name] = torch.stack([p[n].detach() for p in params])

    def _low_rank_modules(self) -> dict[str, nn.Module]:
        """Copies of the run submodules with every adapted linear layer a `LowRankLinear`; the base weights go to
        `shared`, the members' factors to `params`."""
        first = self.lows[0]
        modules = {m: copy.deepcopy(getattr(self.base, m)) for m in RUN}  # ~the head's size once (no embedding)
        for name, (a0, b0) in first.factors.items():
            top, _, rest = name.partition(".")
            old = modules[top].get_submodule(rest)  # "" -> the submodule itself (fc, lm_head)
            weight = old.weight.detach() - delta(a0, b0, first.scale).to(old.weight.dtype)  # [o,i] the base
            new = LowRankLinear(weight, a0.clone(), b0.clone(), first.scale)
            if rest:
                parent, _, leaf = rest.rpartition(".")
                setattr(modules[top].get_submodule(parent), leaf, new)
            else:
                modules[top] = new
        for top, module in modules.items():
            for pname, p in module.named_parameters():
                path, _, leaf = pname.rpartition(".")
                if leaf in ("a", "b") and isinstance(module.get_submodule(path), LowRankLinear):
                    layer = f"{top}.{path}" if path else top
                    self.params.setdefault(top, {})[pname] = torch.stack(
                        [lo.factors[layer][leaf == "b"].to(p.dtype) for lo in self.lows])
                elif isinstance(module.get_submodule(path), LowRankLinear) or all(
                        torch.equal(d.head.get_parameter(f"{top}.{pname}"), p) for d in self.drafters[1:]):
                    self.shared.setdefault(top, {})[pname] = p.detach()  # the base, or a weight all members share
                else:  # a weight of each member's own (e.g. its own vocabulary's lm_head): stacked whole
                    self.params.setdefault(top, {})[pname] = torch.stack(
                        [d.head.get_parameter(f"{top}.{pname}").detach() for d in self.drafters])
        return modules

    def run(self, *args):
        """`_one` vmapped over the stack. Wrapped per call, never kept: a vmapped bound method stored on the bank is a
        reference cycle (bank -> wrapper -> bank), and every bank replaced after a weight swap would keep its stacked
        weights until a full collection of the cyclic garbage collector (hundreds of MB on a serving process)."""
        return vmap(self._one, in_dims=(0, None, None, None, None, None, 0, 0, None))(*args)

    def _one(self, stacked: dict[str, dict[str, torch.Tensor]], shared: dict[str, dict[str, torch.Tensor]],
             feats: torch.Tensor, emb: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, past_k: torch.Tensor,
             past_v: torch.Tensor, allowed: torch.Tensor):
        """One head (vmapped over the stack): feats [1,n,3H], emb [1,n,h], past_k/v [1,nh,L,d], allowed [n,L+n]
        -> (out [1,n,h], logits [1,n,Vd], keys / values [1,nh,L+n,d])."""
        mods = self.run_modules
        params = {m: {**shared.get(m, {}), **stacked.get(m, {})} for m in RUN}
        cache = {}

        def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            keys = cache["k"] = torch.cat([past_k, k], 2)  # [1,nh,L+n,d]
            cache["v"] = torch.cat([past_v, v], 2)
            # written out: vmap has no batching rule for the CPU flash kernel behind scaled_dot_product_attention
            s = (q @ keys.transpose(-1, -2)) * q.shape[-1] ** -0.5  # [1,nh,n,L+n]
            s = s.masked_fill(~allowed, torch.finfo(s.dtype).min)
            return torch.softmax(s.float(), dim=-1).to(q.dtype) @ cache["v"]

        hidden = functional_call(mods["fc"], params["fc"], (feats,))
        out = functional_call(mods["midlayer"], params["midlayer"], (hidden, emb, cos, sin, attend))
        normed = functional_call(mods["norm"], params["norm"], (out,))
        logits = functional_call(mods["lm_head"], params["lm_head"], (normed,))
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
        out, logits, keys, values = self.run(self.params, self.shared, feats, emb, cos, sin, past_k, past_v, allowed)
        for j, d in enumerate(ds):
            d.k, d.v = keys[j], values[j]
            d.commit(start, end, out[j], logits[j, 0].float())
