"""Many sequences through one target forward: a KV-cache slot per sequence, ragged passes, no padding between them.

Self-distillation (data_gen/continuous.py, continuous batching) and the training feature cache run the target over many
sequences at once. A pass takes segments (slot, tokens): the prompt of a sequence just placed in a slot, or one new
token of a running one. Every row of every segment goes through the linears together (one [M,H] matmul per linear, the
lean forward's prepacked weights and blocks), so a pass costs what its real tokens cost: no row waits for a longer
prompt or answer beside it, as a left-padded `generate` batch does. Attention is per sequence:
- the one-token segments attend in one call over the slot cache, each row over exactly its own slot's keys (a boolean
  mask over the longest running length; the rows of slots not stepping this pass are computed and dropped, which
  avoids copying the caches they sit between);
- a longer segment attends causally over its own slot in a call of its own.

Memory: as in the lean forward, a pass of more than LONG_PASS rows runs padded to `padded_rows` (oneDNN keeps native
memory per row count). The cache is one tensor [layers, slots, kv_heads, capacity, head_dim] per K and V.

Exactness: the same weights, norms, rotary and activation modules as the model (the lean forward's, which `lean.build`
checks against the transformers forward); greedy answers are compared with the transformers backend's token for token
in tests/data_gen/test_continuous.py and benchmarks/datagen_backends.py.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from draftpool.forward import lean
from draftpool.forward.packed import padded_rows


class SlotError(ValueError):
    """A pass the slot cache cannot take (a full slot, an unknown slot) or a model the lean forward cannot run."""


class SlotForward:
    """The target over `slots` sequences at once, each with up to `capacity` cached positions."""

    def __init__(self, model, slots: int, capacity: int, prepack: bool = True):
        reason = lean.unsupported(model)
        if reason is not None:
            raise SlotError(f"the slot forward cannot run this target: {reason}")
        if slots < 1 or capacity < 2:
            raise SlotError(f"slots must be >= 1 and capacity >= 2 (got {slots}, {capacity})")
        self.lean = lean.LeanForward(model, prepack=prepack, pad_single=False)  # weights, blocks, lm_head
        self.slots, self.capacity = slots, capacity
        self.lengths = [0] * slots
        shape = (len(self.lean.layers), slots, self.lean.kv_heads, capacity, self.lean.head_dim)
        self.k = torch.zeros(shape, dtype=self.lean.dtype, device=self.lean.device)
        self.v = torch.zeros_like(self.k)

    def lm_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [n,H] final-normed -> logits [n,V]."""
        return self.lean.lm_head(hidden)

    def release(self, slot: int) -> None:
        """Empty a slot (its cache is overwritten by the next sequence placed there)."""
        self.lengths[slot] = 0

    @torch.inference_mode()
    def share(self, src: int, dst: int, n: int) -> None:
        """Start slot `dst` with the first `n` cached positions of slot `src` (a shared prompt prefix run once)."""
        if n > self.lengths[src]:
            raise SlotError(f"slot {src} holds {self.lengths[src]} positions, not {n}")
        self.k[:, dst, :, :n] = self.k[:, src, :, :n]
        self.v[:, dst, :, :n] = self.v[:, src, :, :n]
        self.lengths[dst] = n

    @torch.inference_mode()
    def forward(self, segments: list[tuple[int, list[int]]], aux: list[int] | None = None,
                all_rows: bool = False) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
        """Append each segment's tokens at its slot's end and run them all in one pass.

        -> (final-normed hidden states: of each segment's last row [n_segments,H], or with `all_rows` of every row
        [M,H] in segment order; {aux layer id: hidden states of every row [M,H]}), aux ids as the lean forward counts
        them (HF hidden_states ids).
        """
        lean_fwd, dev = self.lean, self.lean.device
        tokens, pos, slot_of, lasts, longs, singles = [], [], [], [], [], []
        for slot, toks in segments:
            if not 0 <= slot < self.slots or not toks:
                raise SlotError(f"segment for slot {slot}: a slot in [0, {self.slots}) and at least one token")
            start = self.lengths[slot]
            if start + len(toks) > self.capacity:
                raise SlotError(f"slot {slot} holds {start} positions: {len(toks)} more exceed its capacity "
                                f"{self.capacity}")
            row = len(tokens)
            (singles if len(toks) == 1 and start > 0 else longs).append((row, slot, start, len(toks)))
            tokens += toks
            pos += range(start, start + len(toks))
            slot_of += [slot] * len(toks)
            lasts.append(row + len(toks) - 1)
        if len(set(slot_of[r] for r in lasts)) != len(segments):
            raise SlotError("two segments for one slot in one pass")
        M = len(tokens)
        rows = padded_rows(M)  # rule: a long pass runs at one of a few row counts (module docstring, memory)
        ids = torch.tensor(tokens + tokens[-1:] * (rows - M), device=dev)
        positions = torch.tensor(pos + pos[-1:] * (rows - M), device=dev)
        slot_idx = torch.tensor(slot_of, device=dev)
        pos_idx = positions[:M]
        h = lean_fwd.decoder.embed_tokens(ids)  # [R,H]
        cos, sin = lean_fwd.decoder.rotary_emb(h[None], positions[None])  # [1,R,d] each
        if singles:
            # the one-token rows attend over slots [0, hi) at once: row of slot s sees its keys [0, length_s]
            hi = max(s for _, s, _, _ in singles) + 1
            keys = max(start for _, _, start, _ in singles) + 1
            dec_rows = torch.tensor([r for r, _, _, _ in singles], device=dev)
            dec_slots = torch.tensor([s for _, s, _, _ in singles], device=dev)
            seen = torch.ones(hi, device=dev, dtype=torch.long)  # slots not stepping see key 0 only (dropped)
            seen[dec_slots] = torch.tensor([start + 1 for _, _, start, _ in singles], device=dev)
            mask = (torch.arange(keys, device=dev)[None] < seen[:, None])[:, None, None]  # [hi,1,1,keys]
        want = set(aux or [])
        feats = {}
        heads, d = lean_fwd.heads, lean_fwd.head_dim
        for i, (norm_in, qkv, args_out) in enumerate(lean_fwd.block_args):
            if i in want:
                feats[i] = h
            q, k, v = lean_fwd.block_in(h, *norm_in, cos, sin, *qkv)  # [1,nh,R,d], [1,nkv,R,d], [nkv,R,d]
            self.k[i, slot_idx, :, pos_idx] = k[0, :, :M].transpose(0, 1)  # [M,nkv,d] into each row's slot
            self.v[i, slot_idx, :, pos_idx] = v[:, :M].transpose(0, 1)
            att = q.new_zeros(rows, heads, d)  # [R,nh,d]; pad rows stay zero
            if singles:
                qd = q.new_zeros(hi, heads, 1, d)
                qd[dec_slots] = q[0][:, dec_rows].transpose(0, 1)[:, :, None]  # [D,nh,1,d] into their slots
                out = F.scaled_dot_product_attention(qd, self.k[i, :hi, :, :keys], self.v[i, :hi, :, :keys],
                                                     attn_mask=mask, scale=lean_fwd.scaling,
                                                     enable_gqa=heads != lean_fwd.kv_heads)  # [hi,nh,1,d]
                att[dec_rows] = out[dec_slots, :, 0]
            for row, slot, start, n in longs:
                # rule: a longer segment attends causally over its own slot's keys [0, start + n)
                allowed = None if start == 0 else torch.ones(n, start + n, dtype=torch.bool, device=dev).tril(start)
                keys_of = slice(slot, slot + 1), slice(0, start + n)
                out = F.scaled_dot_product_attention(
                    q[:, :, row:row + n], self.k[i, keys_of[0], :, keys_of[1]], self.v[i, keys_of[0], :, keys_of[1]],
                    attn_mask=allowed, is_causal=start == 0, scale=lean_fwd.scaling,
                    enable_gqa=heads != lean_fwd.kv_heads)  # [1,nh,n,d]
                att[row:row + n] = out[0].transpose(0, 1)
            h = lean_fwd.block_out(h, att.reshape(rows, heads * d), *args_out)
        h = lean_fwd.decoder.norm(h)
        feats[len(lean_fwd.layers)] = h
        for slot, toks in segments:
            self.lengths[slot] += len(toks)
        hidden = h[:M] if all_rows else h[torch.tensor(lasts, device=dev)]
        return hidden, {i: feats[i][:M] for i in aux or []}
