"""The target side of speculative decoding: one KV cache, one forward per verification, aux features captured."""

from __future__ import annotations

import torch
from transformers import DynamicCache

from specsel.kv import cache_keep, cache_length, cache_truncate


class TargetRunner:
    """Wraps a transformers causal LM. `aux_layers` (HF hidden_states ids) selects the EAGLE-3 features to return."""

    def __init__(self, model, aux_layers: list[int] | None = None):
        self.model = model.eval()
        self.config = getattr(model.config, "text_config", model.config)
        self.aux_layers = list(aux_layers) if aux_layers else None
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.cache = None

    @property
    def vocab_size(self) -> int:
        return self.config.vocab_size

    @property
    def max_positions(self) -> int:
        return self.config.max_position_embeddings

    def reset(self) -> None:
        self.cache = DynamicCache(config=self.model.config)

    def __len__(self) -> int:
        return cache_length(self.cache)

    @torch.inference_mode()
    def forward(self, tokens: list[int], positions: list[int] | None = None, allowed: torch.Tensor | None = None,
                last_only: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Append `tokens` to the cache and run them.

        positions default to consecutive after the cache; allowed [T, L+T] bool (True = may attend), default causal.
        Returns logits [T,V] (or [1,V] with last_only) and aux features [T,3H] (None without aux layers).
        """
        past = len(self)
        ids = torch.tensor([tokens], device=self.device)
        pos = torch.tensor([positions if positions is not None else range(past, past + len(tokens))],
                           device=self.device)
        mask = None
        if allowed is not None:
            # a custom 4D additive mask [1,1,T,L+T]: 0 where allowed, the dtype's minimum elsewhere
            mask = torch.zeros(allowed.shape, dtype=self.dtype, device=self.device)
            mask = mask.masked_fill(~allowed.to(self.device), torch.finfo(self.dtype).min)[None, None]
        out = self.model(input_ids=ids, position_ids=pos, attention_mask=mask, past_key_values=self.cache,
                         use_cache=True, output_hidden_states=self.aux_layers is not None,
                         logits_to_keep=1 if last_only else 0)
        feats = None
        if self.aux_layers is not None:
            feats = torch.cat([out.hidden_states[i][0] for i in self.aux_layers], dim=-1)  # [T,3H]
        return out.logits[0], feats

    def truncate(self, length: int) -> None:
        cache_truncate(self.cache, length)

    def keep(self, start: int, keep: list[int]) -> None:
        cache_keep(self.cache, start, torch.tensor(keep, dtype=torch.long))
