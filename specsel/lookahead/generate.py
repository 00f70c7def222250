"""Step generation with a kept KV cache: one reasoning step per prefix, greedy, all prefixes of a round in one batch.

`StepLM` holds one model's cache of the committed context (every token but the last). A lookahead round then costs
no re-prefill of that context: the drafter writes its steps one after another on its own cache (batch of one, the
cache grows with each step), and the target writes its step for every prefix `ctx + d_0..d_{j-1}` at once from a
copy of its cache repeated over the rows. Rows differ in length only after the shared context, so each row is
padded *between* the context and its own suffix (pads masked out of attention, positions counted over real tokens
only) and every row's next token still comes at the same column. Greedy: row i equals what the model alone would
generate after its prefix (tested against transformers `generate` on the real target).

transformers' `DynamicCache` (crop, batch_repeat_interleave) keeps the cache; the loop is written here because
`generate` re-prefills the whole context of every row on every call (measured: the dominant cost of a round).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from transformers import DynamicCache

from specsel.lookahead.steps import StepCutter


class StepLM:
    """A causal LM with a KV cache over `ids[:-1]` of the sequence it was last synced to."""

    def __init__(self, model, eos_ids: set[int], cutter: StepCutter):
        if not eos_ids:
            raise ValueError("step generation needs the end-of-sequence ids")
        self.model, self.eos, self.cutter = model, set(eos_ids), cutter
        self.device = next(model.parameters()).device
        self.reset()

    def reset(self) -> None:
        """Forget the cache (e.g. the weights changed: its keys came from the old ones)."""
        self.ids: list[int] = []
        self.cache = DynamicCache()

    @torch.inference_mode()
    def sync(self, ids: list[int]) -> None:
        """Make the cache cover ids[:-1]: keep the common prefix with what it holds, prefill the rest."""
        if not ids:
            raise ValueError("step generation needs a non-empty prefix")
        keep = 0
        for a, b in zip(self.ids, ids[:-1]):
            if a != b:
                break
            keep += 1
        keep = min(keep, self.cache.get_seq_length())
        if keep < self.cache.get_seq_length():
            self.cache.crop(keep - self.cache.get_seq_length())  # transformers 5: a negative count to remove
        if keep < len(ids) - 1:
            x = torch.tensor([ids[keep:-1]], device=self.device)
            pos = torch.arange(keep, len(ids) - 1, device=self.device)[None]
            self.model(input_ids=x, position_ids=pos, cache=self.cache, use_cache=True)
        self.ids = list(ids)

    def _done(self, step: list[int]) -> bool:
        return bool(step) and (step[-1] in self.eos or self.cutter.ends(step))

    @torch.inference_mode()
    def steps(self, suffixes: list[list[int]], keep: Callable[[int, list[int]], bool] | None = None
              ) -> list[list[int]]:
        """One greedy step after `ids + suffix` for every suffix (ids: the last sync) -> the steps (each ends with
        the token completing the delimiter, an EOS, or at the cap). A single row generates on the kept cache and
        leaves it synced to ids + suffix + step; several rows work on a copy. `keep(i, step)` is asked as row i
        completes: False cancels every later row (their steps come back unfinished). Finished and cancelled rows
        leave the batch, so the rows still running stop paying for them."""
        if not self.ids:
            raise ValueError("sync the context before generating steps")
        single = len(suffixes) == 1
        cache = self.cache if single else copy.deepcopy(self.cache)
        if not single:
            cache.batch_repeat_interleave(len(suffixes))
        past = len(self.ids) - 1
        rows = [[self.ids[-1], *s] for s in suffixes]  # each row's uncached tokens
        width = max(map(len, rows))
        B = len(rows)
        ids = torch.zeros(B, width, dtype=torch.long, device=self.device)
        attn = torch.ones(B, past + width, dtype=torch.long, device=self.device)  # [B, past+width]
        pos = torch.zeros(B, width, dtype=torch.long, device=self.device)
        for i, r in enumerate(rows):  # rule: pads sit between the shared context and the row's own tokens
            ids[i, width - len(r):] = torch.tensor(r, device=self.device)
            attn[i, past:past + width - len(r)] = 0
            pos[i, width - len(r):] = torch.arange(past, past + len(r), device=self.device)
        out: list[list[int]] = [[] for _ in range(B)]
        active = list(range(B))  # rows still generating, in batch order
        nxt_pos = pos[:, -1:] + 1  # [B,1]
        for _ in range(self.cutter.spec.max_tokens):
            logits = self.model(input_ids=ids, attention_mask=attn, position_ids=pos, cache=cache,
                                use_cache=True).logits[:, -1]
            nxt = logits.argmax(-1)  # [b]
            finished, cancel_after = set(), B
            for i, t in zip(active, nxt.tolist()):
                out[i].append(t)
                if self._done(out[i]):
                    finished.add(i)
                    if keep is not None and i < cancel_after and not keep(i, out[i]):
                        cancel_after = i  # rule: a row judged useless makes every later row useless
            live = [b for b, i in enumerate(active) if i not in finished and i < cancel_after]
            if not live:
                break
            ids, pos = nxt[:, None], nxt_pos
            nxt_pos = nxt_pos + 1
            attn = torch.cat([attn, attn.new_ones(attn.shape[0], 1)], dim=1)
            if len(live) < len(active):  # drop finished and cancelled rows from the batch and its cache
                sel = torch.tensor(live, device=self.device)
                cache.batch_select_indices(sel)
                ids, pos, nxt_pos, attn = ids[sel], pos[sel], nxt_pos[sel], attn[sel]
                active = [active[b] for b in live]
        if single:  # the kept cache now covers ids + suffix + step[:-1] (the last token was never fed)
            self.ids = self.ids + suffixes[0] + out[0]
        return out

