"""The target side of speculative decoding: one KV cache, one forward per verification, aux features captured.

The body runs once over all verified positions; the vocabulary projection is applied only to the rows a rule asks
for (greedy verification walks the accepted path), which on a CPU saves most of the lm_head work of a large tree.
"""

from __future__ import annotations

import torch
from transformers import DynamicCache

from specsel.kv import cache_keep, cache_length, cache_truncate

# config attributes that post-process logits after the lm_head; such models take the full-forward path
_LOGIT_POSTPROCESSING = ("final_logit_softcapping", "logit_scale", "output_multiplier_scale")


class TargetPass:
    """The result of one target forward: logits per row on demand, the target's argmax per row memoized."""

    def __init__(self, runner: TargetRunner, hidden: torch.Tensor | None, logits: torch.Tensor | None,
                 feats: torch.Tensor | None):
        self.runner, self.hidden, self.full, self.feats = runner, hidden, logits, feats  # hidden [T,H] final-normed
        self._choice: dict[int, int] = {}
        self._rows: dict[int, torch.Tensor] = {}  # single rows already projected (verification walks them)

    @torch.inference_mode()
    def logits(self, rows) -> torch.Tensor:
        """rows: an int, slice or list of row indices -> [V] or [n,V] float logits."""
        if self.full is not None:
            return self.full[rows].float()
        if isinstance(rows, int):
            rows %= self.hidden.shape[0]
            if rows not in self._rows:
                self._rows[rows] = self.runner.lm_head(self.hidden[rows]).float()
            return self._rows[rows]
        return self.runner.lm_head(self.hidden[rows]).float()

    def logits_of(self, rows: list[int]) -> torch.Tensor:
        """[n,V] logits of the given rows, projecting only those not already projected."""
        return torch.stack([self.logits(r) for r in rows])

    def choice(self, row: int) -> int:
        if row not in self._choice:
            self._choice[row] = int(self.logits(row).argmax())
        return self._choice[row]


class TargetRunner:
    """Wraps a transformers causal LM. `aux_layers` (HF hidden_states ids) selects the EAGLE-3 features to return."""

    def __init__(self, model, aux_layers: list[int] | None = None):
        self.model = model.eval()
        self.config = getattr(model.config, "text_config", model.config)
        self.aux_layers = list(aux_layers) if aux_layers else None
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.cache = None
        lazy = hasattr(model, "get_decoder") and hasattr(model, "get_output_embeddings") and not any(
            getattr(self.config, a, None) for a in _LOGIT_POSTPROCESSING)
        self.body = model.get_decoder() if lazy else None
        self.lm_head = model.get_output_embeddings() if lazy else None

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
    def forward(self, tokens: list[int], positions: list[int] | None = None,
                allowed: torch.Tensor | None = None) -> TargetPass:
        """Append `tokens` to the cache and run them.

        positions default to consecutive after the cache; allowed [T, L+T] bool (True = may attend), default causal.
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
        kw = dict(input_ids=ids, position_ids=pos, attention_mask=mask, past_key_values=self.cache, use_cache=True,
                  output_hidden_states=self.aux_layers is not None)
        if self.body is not None:
            out = self.body(**kw)
            hidden, logits = out.last_hidden_state[0], None
        else:
            out = self.model(**kw)
            hidden, logits = None, out.logits[0]
        feats = None
        if self.aux_layers is not None:
            feats = torch.cat([out.hidden_states[i][0] for i in self.aux_layers], dim=-1)  # [T,3H]
        return TargetPass(self, hidden, logits, feats)

    def truncate(self, length: int) -> None:
        cache_truncate(self.cache, length)

    def keep(self, start: int, keep: list[int]) -> None:
        cache_keep(self.cache, start, torch.tensor(keep, dtype=torch.long))
