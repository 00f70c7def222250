"""The `hf` backend of self-distillation: transformers' `generate` over left-padded batches (the backend `auto` takes
where the engine's lean forward does not reproduce the target; data_gen/backends.py)."""

from __future__ import annotations

from typing import Any

import torch


@torch.no_grad()
def generate_batch(model, tok, prompts: list[list[int]], temperature: float, top_p: float, max_new_tokens: int,
                   seed: int, stop_ids: list[int]) -> list[tuple[list[int], bool]]:
    """Left-padded batched generation; returns (response ids up to and including the stop token, finished) per row."""
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    pad = tok.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=device)
    attn = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    torch.manual_seed(seed)
    kw: dict[str, Any] = {"do_sample": False} if temperature == 0 else {
        "do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": 0}
    out = model.generate(input_ids=input_ids, attention_mask=attn, max_new_tokens=max_new_tokens,
                         pad_token_id=pad, eos_token_id=stop_ids, **kw)
    results = []
    for row in out[:, width:].tolist():
        resp, finished = [], False
        for t in row:
            resp.append(t)
            if t in stop_ids:
                finished = True
                break
        results.append((resp, finished))
    return results
