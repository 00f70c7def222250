"""A lean forward for Llama-family targets: the decode-time body without the framework around it.

What it removes from a transformers forward, measured in `benchmarks/profile_cycle.py`:
- the per-step Python of the generic model (mask building, cache classes, output dataclasses, hooks): one loop over
  the layers calling the model's own norms, rotary embedding and activation modules;
- per-step cache growth: the KV cache is preallocated per layer with a length pointer (rollback is O(1), a tree's
  accepted path is one index copy);
- on CPU, MKL's small-M GEMM path, which is erratic for 2..8 rows (on a 2-core EPYC one 135M forward took 46 ms for
  1 row, 70 ms for 2, 98 ms for 7): weights are prepacked for oneDNN (`torch.ops.mkldnn._linear_pointwise`, the
  kernel inductor's CPU backend uses), with q/k/v and gate/up fused into one matrix each. The packed copy is extra
  memory (the model's own weights stay, the fallback and training use them); `prepack=False` avoids it. oneDNN packs
  bf16 only on CPUs with AVX-512 or AVX-NE-CONVERT: elsewhere bf16 runs the plain weights (`_packable` probes it).

Batch invariance: with `pad_single=True` a pass of fewer than `pad_rows` rows is padded with copies of its last row,
so that every pass uses the same M >= 2 kernels, and causal rows after the prefill attend one call per row over exactly
the keys they see. A verified row is then computed exactly as a plain step computes it wherever the kernels are
row-invariant for M >= 2 (oneDNN fp32 and bf16 are on the CPU tried; `batch_invariant` measures it for the model at
hand). Masked passes (trees) attend in query blocks of at most QUERY_BLOCK rows in fp32; in 16-bit dtypes a tree's
rows attend one call per row too, each over the cache and its own path copied in place right after it, so tree
verification is exact there as well.

Memory: oneDNN keeps native memory for every row count a linear has run at (~1-2 MB each for SmolLM2-135M on CPU,
never freed), so a server prefilling prompts of ever new lengths grew for its whole life. A causal pass of more than
LONG_PASS rows (a prefill) is therefore padded to one of a few row counts per doubling (`padded_rows`, at most
15 or 12.5% more rows; pad rows are scratch past the cache pointer that no real row sees), measured in
docs/benchmarks.md, serving soak.

The lean forward is used only where it reproduces the model: `build` checks the architecture and compares
logits with the transformers forward on a probe, and returns the reason when it declines (the runner then falls
back to the transformers forward).
"""

from __future__ import annotations

import weakref

import torch
import torch.nn.functional as F
from transformers import DynamicCache
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from draftpool.forward.packed import (  # noqa: F401 - re-exported: the lean forward's public names
    _CAN_PACK,
    LONG_PASS,
    PACK_ROWS,
    Linear,
    PackedLinear,
    _linear,
    _packable,
    packed_linear,
    packed_view,
    padded_rows,
)
from draftpool.forward.timing import median_time
from draftpool.target import cache_kw

SUPPORTED = ("llama", "mistral", "qwen2")  # same block: pre-norm attention + gated MLP, RoPE, no q/k norm
PAD_ROWS = (2, 3, 4)  # rows a shorter pass may be padded to (>= 2: the kernels verification uses); `build` times
# a one-token step at each and keeps the fastest (2-core EPYC with AVX-512: 4; another with AVX2 only: 2)
QUERY_BLOCK = 8  # attention query rows per masked SDPA call (bf16 SDPA changes its reduction order above 16 rows)
PER_ROW_MAX = 32  # causal passes after the prefill up to this many rows attend row by row (chain verification)
_LAYER_PARTS = ("input_layernorm.weight", "input_layernorm.variance_epsilon", "post_attention_layernorm.weight",
                "post_attention_layernorm.variance_epsilon", "self_attn.q_proj", "self_attn.k_proj",
                "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "mlp.act_fn")


def unsupported(model) -> str | None:
    """Why the lean forward cannot run this model (None when it can)."""
    cfg = model.config.get_text_config()
    if cfg.model_type not in SUPPORTED:
        return f"model type {cfg.model_type!r} (lean forward: {', '.join(SUPPORTED)})"
    if any(t != "full_attention" for t in (getattr(cfg, "layer_types", None) or [])) or (
            cfg.model_type == "mistral" and getattr(cfg, "sliding_window", None)):
        return "sliding-window attention"
    if getattr(cfg, "pretraining_tp", 1) != 1:
        return "pretraining_tp > 1"
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
    if decoder is None or not all(hasattr(decoder, a) for a in ("embed_tokens", "layers", "norm", "rotary_emb")):
        return "no Llama-style decoder (embed_tokens, layers, norm, rotary_emb)"
    for part in _LAYER_PARTS:
        obj = decoder.layers[0]
        for name in part.split("."):
            obj = getattr(obj, name, None)
        if obj is None:
            return f"decoder layers have no {part}"
    if hasattr(decoder.layers[0].self_attn, "q_norm"):
        return "q/k norms"
    return None


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """x [R,H] -> [R,H]: the Llama-family RMSNorm (statistics in fp32, cast back, then scaled)."""
    x32 = x.float()
    return weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def _blocks(layer: tuple, heads: int, kv_heads: int, head_dim: int):
    """The two halves of a decoder layer around attention as pure functions of its tensors, with what all layers
    share (activation, norm epsilon, shapes) as constants, so one compiled graph serves every layer:
    block_in(h, norm, cos, sin, *qkv) (norm, fused q/k/v, rotary) and block_out(h, att, norm, *o, *gate_up, *down)
    (o_proj, residual, norm, gated MLP, residual). `layer`: the first layer's (norm, qkv, o, norm, gate_up, act,
    down)."""
    norm1, qkv, o, norm2, gate_up, act, down = layer
    packed, eps1, eps2 = qkv.packed is not None, norm1.variance_epsilon, norm2.variance_epsilon
    n_o, n_gu = len(o.tensors()), len(gate_up.tensors())

    def block_in(h, norm_w, cos, sin, *ws):
        # h [R,H] -> q [1,nh,R,d] and k [1,nkv,R,d] rotated, v [nkv,R,d]
        rows = h.shape[0]
        q, k, v = _linear(_rms_norm(h, norm_w, eps1), packed, qkv.sizes, ws)
        q = q.view(rows, heads, head_dim).transpose(0, 1)[None]
        k = k.view(rows, kv_heads, head_dim).transpose(0, 1)[None]
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        return q, k, v.view(rows, kv_heads, head_dim).transpose(0, 1)

    def block_out(h, att, norm_w, *ws):
        # h [R,H], att [R,nh*d] -> h [R,H]
        h = h + _linear(att, packed, o.sizes, ws[:n_o])[0]
        g, u = _linear(_rms_norm(h, norm_w, eps2), packed, gate_up.sizes, ws[n_o:n_o + n_gu])
        return h + _linear(act(g) * u, packed, down.sizes, ws[n_o + n_gu:])[0]

    return block_in, block_out


_PACKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> {prepack: weights}; values hold
# submodules only (never the model), so an entry goes when its model does


def _weights(model, prepack: bool) -> tuple[list, Linear | None]:
    """Per layer (norm, qkv, o, norm, gate_up, act, down) and the lm_head, built once per model and setting (every
    runner of one model shares the packed copy)."""
    memo = _PACKED.setdefault(model, {})
    if prepack not in memo:
        layers = []
        for layer in model.get_decoder().layers:
            a, m = layer.self_attn, layer.mlp
            layers.append((layer.input_layernorm, Linear([a.q_proj, a.k_proj, a.v_proj], prepack),
                           Linear([a.o_proj], prepack), layer.post_attention_layernorm,
                           Linear([m.gate_proj, m.up_proj], prepack), m.act_fn, Linear([m.down_proj], prepack)))
        head = model.get_output_embeddings()
        memo[prepack] = layers, (Linear([head], prepack) if isinstance(head, torch.nn.Linear) else None)
    return memo[prepack]


def _block_fns(model, prepack: bool, compile: bool, heads: int, kv_heads: int, head_dim: int) -> tuple:
    """(block_in, block_out) for `model`, torch.compile'd (dynamic row count) when `compile`; built once per model
    and setting, so every runner of one model shares the compiled code."""
    memo = _PACKED.setdefault(model, {})
    key = ("blocks", prepack, compile)
    if key not in memo:
        block_in, block_out = _blocks(_weights(model, prepack)[0][0], heads, kv_heads, head_dim)
        if compile:
            block_in, block_out = (torch.compile(f, dynamic=True) for f in (block_in, block_out))
        memo[key] = block_in, block_out
    return memo[key]


class LeanForward:
    """Decode-time forward of a Llama-family model with its own preallocated KV cache."""

    def __init__(self, model, prepack: bool = True, pad_single: bool = True, compile: bool = False):
        self.decoder = model.get_decoder()
        cfg = model.config.get_text_config()
        p = next(model.parameters())
        self.device, self.dtype = p.device, p.dtype
        self.prepacked = prepack and _packable(self.device, self.dtype)
        self.pad_single, self.compiled = pad_single, compile
        self.pad_rows = PAD_ROWS[-1]  # `build` measures the fastest
        self.layers, self._head = _weights(model, self.prepacked)
        self.heads, self.kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        # per layer: the tensors block_in takes (norm weight; q/k/v) and block_out takes (norm weight, o, gate/up,
        # down); the blocks are torch.compile'd once per model and setting when `compile`
        self.block_args = [((n1.weight,), qkv.tensors(), (n2.weight, *o.tensors(), *gu.tensors(), *down.tensors()))
                           for n1, qkv, o, n2, gu, _, down in self.layers]
        self.block_in, self.block_out = _block_fns(model, self.prepacked, compile, self.heads, self.kv_heads,
                                                   self.head_dim)
        self.scaling = self.decoder.layers[0].self_attn.scaling
        self.max_positions = getattr(cfg, "max_position_embeddings", 4096)
        self.k = self.v = None  # [L, kv_heads, capacity, head_dim]
        self.batch_invariant = False  # measured by `batch_invariant` (build does)
        self.n = 0

    def lm_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [..., H] final-normed -> logits [..., V] (prepacked like the body)."""
        flat = hidden.reshape(-1, hidden.shape[-1])
        return self._head(flat)[0].reshape(*hidden.shape[:-1], -1)

    def reset(self) -> None:
        self.n = 0

    def _reserve(self, n: int) -> None:
        cap = 0 if self.k is None else self.k.shape[2]
        if n <= cap:
            return
        new = max(n, min(2 * cap, self.max_positions + 64), 256)  # doubling, +64 rows for trees past the end
        shape = (len(self.layers), self.kv_heads, new, self.head_dim)
        k, v = (torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in range(2))
        if self.k is not None:
            k[:, :, :cap], v[:, :, :cap] = self.k, self.v
        self.k, self.v = k, v

    @torch.inference_mode()
    def forward(self, tokens: list[int], positions: list[int] | None, allowed: torch.Tensor | None,
                aux: list[int] | None) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
        """Append tokens at the cache's end -> (final-normed hidden [T,H], {aux layer id: its hidden states [T,H]}).

        positions default to consecutive; allowed [T, n+T] bool (True = may attend), default causal. aux: hidden
        state ids as transformers counts them (0 = embeddings, i = after layer i, num_layers = final-normed).
        """
        n, T = self.n, len(tokens)
        pos = list(positions) if positions is not None else list(range(n, n + T))
        # rule: causal rows after the prefill attend row by row (no mask); other passes take one masked call
        per_row = allowed is None and (n > 0 or T == 1) and T <= PER_ROW_MAX
        # rule: in 16-bit dtypes a tree's rows attend row by row too, each over the cache and its own path (where the
        # mask is one): a masked pass rounds otherwise than the plain steps it must equal
        paths = tree_paths(allowed, n, pos) if allowed is not None and self.dtype.itemsize < 4 else None
        rows = self.pad_rows if T < self.pad_rows and self.pad_single else T
        if allowed is None and positions is None:
            rows = max(rows, padded_rows(T))  # rule: a long causal pass runs at one of a few row counts (memory)
        extra = rows - T
        if not per_row and paths is None:
            if allowed is None:  # rule: causal over the cache and the new rows
                allowed = torch.ones(T, n + T, dtype=torch.bool, device=self.device).tril(n)
            allowed = allowed.to(self.device)
            if extra:  # pad rows see what the last row sees, never each other's scratch slots
                allowed = torch.cat([allowed, allowed[-1:].expand(extra, -1)])
                allowed = torch.cat([allowed, torch.zeros(rows, extra, dtype=torch.bool, device=self.device)], 1)
        if extra:
            # rule: a pass of fewer than pad_rows rows is padded with copies of its last row (their KV slots are
            # scratch beyond the pointer), so every pass runs the >= 2-row kernels verification uses, at the row
            # count measured fastest here (`fastest_pad`); a long causal pass is padded the same way (above)
            tokens, pos = tokens + tokens[-1:] * extra, pos + pos[-1:] * extra
        self._reserve(n + rows)
        ids = torch.tensor(tokens, device=self.device)
        h = self.decoder.embed_tokens(ids)  # [R,H]
        cos, sin = self.decoder.rotary_emb(h[None], torch.tensor([pos], device=self.device))  # [1,R,d] each
        want = set(aux or [])
        feats = {}
        end = n + rows
        for i, (norm_in, qkv, args_out) in enumerate(self.block_args):
            if i in want:
                feats[i] = h
            q, k, v = self.block_in(h, *norm_in, cos, sin, *qkv)  # [1,nh,R,d], [1,nkv,R,d], [nkv,R,d]
            self.k[i, :, n:end], self.v[i, :, n:end] = k[0], v
            if per_row:
                # rule: each causal row attends in its own call over exactly the keys it sees, as a plain step
                # would (same shapes, same kernel, same bits)
                att = torch.cat([self._attend(q[:, :, j:j + 1], i, n + j + 1, None) for j in range(T)], dim=2)
                if rows > T:  # pad rows copy the last row
                    att = torch.cat([att, att[:, :, -1:].expand(-1, -1, rows - T, -1)], dim=2)  # [1,nh,R,d]
            elif paths is not None:
                # rule: row j's path (root .. j) is copied right after the cache, where a plain step would have
                # its keys, and attended as that step would (same view, same kernel, same bits); then the tree's
                # keys and values go back in tree order
                outs = []
                for j, path in enumerate(paths):
                    m = len(path)
                    self.k[i, :, n:n + m], self.v[i, :, n:n + m] = k[0][:, path], v[:, path]
                    outs.append(self._attend(q[:, :, j:j + 1], i, n + m, None))
                self.k[i, :, n:end], self.v[i, :, n:end] = k[0], v
                att = torch.cat(outs + outs[-1:] * (rows - T), dim=2)  # [1,nh,R,d], pad rows copy the last
            else:
                att = torch.cat([self._attend(q[:, :, r:r + QUERY_BLOCK], i, end, allowed[r:r + QUERY_BLOCK])
                                 for r in range(0, rows, QUERY_BLOCK)], dim=2)  # [1,nh,R,d]
            h = self.block_out(h, att[0].transpose(0, 1).reshape(rows, -1), *args_out)
        h = self.decoder.norm(h)
        feats[len(self.layers)] = h
        self.n = n + T
        return h[:T], {i: feats[i][:T] for i in aux or []}  # HF hidden_states ids -> [T,H]

    def _attend(self, q: torch.Tensor, layer: int, keys: int, mask: torch.Tensor | None) -> torch.Tensor:
        """q [1,nh,r,d] over the first `keys` cached positions of `layer`, mask [r,keys] bool or None -> [1,nh,r,d]"""
        return F.scaled_dot_product_attention(q, self.k[layer, :, :keys][None], self.v[layer, :, :keys][None],
                                              attn_mask=mask, scale=self.scaling,
                                              enable_gqa=self.heads != self.kv_heads)

    def truncate(self, length: int) -> None:
        self.n = length

    @torch.inference_mode()
    def keep(self, start: int, keep: list[int]) -> None:
        """Keep positions [0, start) plus `start + keep` (ascending) packed right after them."""
        idx = torch.tensor(keep, dtype=torch.long, device=self.device) + start
        for cache in (self.k, self.v):
            cache[:, :, start:start + len(keep)] = cache.index_select(2, idx)
        self.n = start + len(keep)

    def kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The cached keys and values of one layer [1, kv_heads, n, head_dim] each."""
        return self.k[layer, :, :self.n][None], self.v[layer, :, :self.n][None]


@torch.inference_mode()
def build(model, prepack: bool = True, pad_single: bool = True,
          compile: bool = False) -> tuple[LeanForward | None, str | None]:
    """(the lean forward, None) when it reproduces `model`, else (None, why not).

    The probe: a 6-token prefill then a 3-token step; the logits of both must match the transformers forward's over
    the same passes (relative 1e-4 of the logits' scale in fp32, 3e-2 in 16-bit dtypes, where kernels round
    differently).
    """
    reason = unsupported(model)
    if reason is not None:
        return None, reason
    lean = LeanForward(model, prepack=prepack, pad_single=pad_single, compile=compile)
    if lean._head is None:
        return None, "the output embedding is not a linear layer"
    vocab = model.config.get_text_config().vocab_size
    ids = (torch.arange(9, device=lean.device) * 7919 + 11) % vocab  # a 3-token prefill then 6 more in the
    # invariance probe
    cache = DynamicCache(config=model.config)  # the same two passes through transformers (same row counts, so
    # 16-bit kernels round alike; a one-pass reference would differ by the split's rounding alone)
    want = torch.cat([model(input_ids=ids[None, s], **cache_kw(model, cache), use_cache=True).logits[0]
                      for s in (slice(0, 6), slice(6, 9))]).float()  # [9,V]
    lean.reset()
    h6, _ = lean.forward(ids[:6].tolist(), None, None, None)
    h3, _ = lean.forward(ids[6:].tolist(), None, None, None)
    got = lean.lm_head(torch.cat([h6, h3])).float()
    tol = 1e-4 if lean.dtype == torch.float32 else 3e-2
    if not torch.allclose(got, want, rtol=0, atol=tol * float(want.abs().max())):
        return None, f"does not reproduce the model's logits (max difference {float((got - want).abs().max()):.3g})"
    if pad_single:
        lean.pad_rows = fastest_pad(lean, ids.tolist())
    lean.batch_invariant = batch_invariant(lean, ids.tolist())
    return lean, None


def tree_paths(allowed: torch.Tensor, n: int, pos: list[int]) -> list[list[int]] | None:
    """allowed [T, n+T] bool, pos [T] -> per new row, the new rows it attends to in position order (root .. itself),
    where each row sees the whole cache and a path at positions n, n+1, .., its own (a tree's ancestor mask); else
    None."""
    if n == 0 or not bool(allowed[:, :n].all()):
        return None
    paths = []
    for j, row in enumerate(allowed[:, n:].tolist()):
        path = sorted((r for r, ok in enumerate(row) if ok), key=lambda r: pos[r])
        if not path or path[-1] != j or [pos[r] for r in path] != list(range(n, n + len(path))):
            return None
        paths.append(path)
    return paths


@torch.inference_mode()
def fastest_pad(lean: LeanForward, ids: list[int], reps: int = 5) -> int:
    """The row count in PAD_ROWS at which a one-token step (over a short cache) is fastest here: the median of
    `reps` timed steps each, the fewest rows on a tie within 2%."""
    times = {}
    for rows in PAD_ROWS:
        lean.pad_rows = rows
        lean.reset()
        lean.forward(ids[:-1], None, None, None)

        def step():
            lean.forward(ids[-1:], None, None, None)

        def back():
            lean.truncate(len(ids) - 1)

        step(), back()  # warm-up
        times[rows] = median_time(step, lean.device, reps, after=back)
    lean.reset()
    best = min(times.values())
    return min(r for r, t in times.items() if t <= 1.02 * best)


@torch.inference_mode()
def batch_invariant(lean: LeanForward, ids: list[int], rows: int = 6) -> bool:
    """Whether a causal pass of several rows computes every row bit for bit as one-token steps do, on this device and
    dtype (the kernels decide; measured on `ids`: a prefill, `rows` one-token steps, then the same tokens as one
    pass, more rows than `pad_rows` as a chain's verification has)."""
    lean.reset()
    lean.forward(ids[:-rows], None, None, None)
    steps = torch.cat([lean.forward([t], None, None, None)[0] for t in ids[-rows:]])  # [rows,H]
    lean.truncate(len(ids) - rows)
    batch = lean.forward(ids[-rows:], None, None, None)[0]  # [rows,H]
    lean.reset()
    one = torch.cat([lean.lm_head(steps[i:i + 1].expand(2, -1))[:1] for i in range(rows)])
    return torch.equal(steps, batch) and torch.equal(one, lean.lm_head(batch))
