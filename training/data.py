"""Training examples from self-distilled rows: prompt + response token ids, loss on the response only."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch.utils.data import Dataset

from draftpool.config import ConfigError


class ResponseDataset(Dataset):
    """Each item: input_ids [L], loss_mask [L] (1 on response tokens), L <= max_len."""

    def __init__(self, rows: Iterable[dict], max_len: int):
        self.items = []
        for r in rows:
            prompt, resp = list(r["prompt_ids"]), list(r["response_ids"])
            if not resp:
                continue
            ids = (prompt + resp)[:max_len]
            mask = ([0] * len(prompt) + [1] * len(resp))[:max_len]
            if sum(mask) < 2:  # nothing left to learn from after truncation
                continue
            self.items.append((torch.tensor(ids, dtype=torch.long), torch.tensor(mask, dtype=torch.long)))
        if not self.items:
            raise ConfigError("no usable training example (empty data, or every response truncated away: "
                              "raise max_len)")

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        ids, mask = self.items[i]
        return {"input_ids": ids, "loss_mask": mask, "index": torch.tensor(i)}


def collate(batch: list[dict[str, torch.Tensor]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad to the longest item: input_ids/attention_mask/loss_mask [B,T]."""
    width = max(len(b["input_ids"]) for b in batch)
    out = {k: torch.full((len(batch), width), pad_id if k == "input_ids" else 0, dtype=torch.long)
           for k in ("input_ids", "attention_mask", "loss_mask")}
    for i, b in enumerate(batch):
        n = len(b["input_ids"])
        out["input_ids"][i, :n] = b["input_ids"]
        out["attention_mask"][i, :n] = 1
        out["loss_mask"][i, :n] = b["loss_mask"]
    if all("index" in b for b in batch):
        out["index"] = torch.stack([b["index"] for b in batch])  # [B] dataset positions (for cached features)
    return out


def response_token_counts(rows: Iterable[dict], vocab_size: int) -> torch.Tensor:
    """[V] frequency of each token in the responses (the draft vocabulary is chosen from these)."""
    counts = torch.zeros(vocab_size, dtype=torch.long)
    for r in rows:
        ids = torch.tensor(list(r["response_ids"]), dtype=torch.long)
        if ids.numel():
            if int(ids.max()) >= vocab_size:
                raise ConfigError(f"data holds token id {int(ids.max())} >= target vocab {vocab_size}: "
                                  f"it was made with another tokenizer")
            counts += torch.bincount(ids, minlength=vocab_size)
    return counts
