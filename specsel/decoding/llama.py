"""An independent causal-LM drafter (e.g. the exported llama-tiny / llama-68m) with its own KV cache."""

from __future__ import annotations

import torch
from transformers import DynamicCache

from draftpool.forward.sampling import SamplingParams, probs_from_logits, sample
from draftpool.models.llama import LLAMA
from draftpool.target import cache_kw
from specsel.decoding.rows import take_rows, top1_probability
from specsel.decoding.tree import DraftTree, TreeSpec


class LlamaDrafter:
    kind = LLAMA.name
    aux_layers = None
    can_tree = LLAMA.capabilities.tree
    self_limiting = LLAMA.capabilities.self_limiting
    track = False  # keep the logits it predicts for every committed position (counterfactual evaluation)
    deterministic = False  # selectors score its next-token predictions (a chain would need its forward passes)

    def __init__(self, model):
        self.model = model.eval()
        self.device = next(model.parameters()).device
        self.vocab_size = self.draft_vocab_size = model.config.vocab_size
        self.reset()

    @property
    def module(self) -> torch.nn.Module:
        return self.model

    def check_target(self, config) -> None:
        """Nothing beyond the vocabulary (the loop checks it): it reads tokens only."""

    def reset(self) -> None:
        self.cache = DynamicCache(config=self.model.config)
        self.cache.activate_past_recording()  # sliding-window layers keep what `sync` may roll back
        self.cached: list[int] = []  # tokens whose keys are in the cache
        self.known = 0  # cached[:known] is committed (checked at the last sync)
        self.last_logits: torch.Tensor | None = None  # [V] after the last cached token
        self.pred_rows: dict[int, torch.Tensor] = {}  # position -> [V] logits predicting that token (when tracking)
        self.chain_logits: list[torch.Tensor] = []  # [V] per step of the last chain

    @torch.inference_mode()
    def _feed(self, tokens: list[int]) -> None:
        ids = torch.tensor([tokens], device=self.device)
        out = self.model(input_ids=ids, **cache_kw(self.model, self.cache), use_cache=True,
                         logits_to_keep=0 if self.track else 1)
        if self.track:  # the token at cache index i predicts position i + 1
            self.pred_rows.update(zip(range(len(self.cached) + 1, len(self.cached) + 1 + len(tokens)),
                                      out.logits[0].float()))
        self.cached.extend(tokens)
        self.last_logits = out.logits[0, -1].float()

    def sync(self, state) -> None:
        """Roll the cache back to its longest prefix that is committed, then feed the committed rest."""
        tokens = state.tokens
        n = min(self.known, len(tokens) - 1)
        limit = min(len(self.cached), len(tokens) - 1)  # feed at least the last committed token
        while n < limit and self.cached[n] == tokens[n]:
            n += 1
        if self.cache.get_seq_length():  # (transformers' sliding layers cannot crop before their first update)
            self.cache.crop(n - self.cache.get_seq_length())
        del self.cached[n:]
        self._feed(tokens[n:])
        self.known = len(self.cached)

    def confidence(self) -> float | None:
        """After a sync: its probability of the token it would draft first."""
        return top1_probability(self.last_logits)

    def take_predictions(self, start: int, end: int) -> torch.Tensor:
        """[end-start, V] logits this drafter gave (after the verified prefix) for positions start..end-1; forgets
        them and everything before."""
        rows, self.pred_rows = take_rows(self.pred_rows, start, end)
        return rows

    @staticmethod
    def to_target_ids(ids: torch.Tensor) -> torch.Tensor:
        return ids

    @staticmethod
    def full_logits(logits: torch.Tensor) -> torch.Tensor:
        return logits.float()

    def draft_chain(self, k: int, params: SamplingParams, generator: torch.Generator | None
                    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """-> draft [K] target ids and, when sampling, q [K,V] the distributions they were drawn from."""
        drafted, qs = [], []
        self.chain_logits = []  # [V] per step: the distributions behind the drafts (MetaSD's BD reward reads them)
        for i in range(k):
            self.chain_logits.append(self.last_logits)
            if params.greedy:
                tok = int(self.last_logits.argmax())
            else:
                q = probs_from_logits(self.last_logits, params)
                qs.append(q)
                tok = int(sample(q, generator))
            drafted.append(tok)
            if i < k - 1:
                self._feed([tok])
        return torch.tensor(drafted), (torch.stack(qs) if qs else None)

    def draft_tree(self, spec: TreeSpec) -> DraftTree:
        raise NotImplementedError("an independent causal-LM drafter drafts chains only (can_tree is False): "
                                  "use mode 'chain' or 'auto'")

    def learn(self, tokens: list[int]) -> bool:
        return False  # its weights learn in the trainer process (online/trainer/token_trainer.py)
