"""transformers' own speculative generation as baselines: assisted generation and prompt lookup decoding.

One prompt at batch size 1, greedy. The target's forward calls are counted with a forward hook so that
MAT = new tokens / target forwards reads like the engine's figure. Unlike the engine, transformers runs the prefill
together with the first verification, so its first forward can already emit several tokens.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from draftpool.forward.timing import sync_device
from specsel.decoding.request import RequestMetrics, cut_at_stop


def _timed_generate(target_model, prompt_ids: list[int], max_new_tokens: int, stop_ids: list[int],
                    **extra: Any) -> tuple[list[int], RequestMetrics]:
    if not prompt_ids:
        raise ValueError("empty prompt")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    device = next(target_model.parameters()).device
    ids = torch.tensor([prompt_ids], device=device)
    pad = target_model.generation_config.pad_token_id
    if pad is None:
        pad = stop_ids[0] if stop_ids else 0
    calls = [0]

    def count(module, args, output) -> None:
        calls[0] += 1

    handle = target_model.register_forward_hook(count)
    try:
        sync_device(device)
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = target_model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                        max_new_tokens=max_new_tokens, eos_token_id=list(stop_ids),
                                        pad_token_id=pad, **extra)
        sync_device(device)
        total = time.perf_counter() - t0
    finally:
        handle.remove()
    # transformers may accept drafts past a stop token: cut there
    new = cut_at_stop(out[0, len(prompt_ids):].tolist(), set(stop_ids), max_new_tokens)
    return new, RequestMetrics(new_tokens=len(new), target_forwards=calls[0], total_s=total)


def hf_assisted(target_model, assistant_model, prompt_ids: list[int], max_new_tokens: int,
                stop_ids: list[int]) -> tuple[list[int], RequestMetrics]:
    """Greedy assisted generation (`generate(assistant_model=...)`, transformers' default candidate schedule)."""
    return _timed_generate(target_model, prompt_ids, max_new_tokens, stop_ids, assistant_model=assistant_model)


def hf_prompt_lookup(target_model, prompt_ids: list[int], max_new_tokens: int, stop_ids: list[int],
                     num_tokens: int = 10) -> tuple[list[int], RequestMetrics]:
    """Greedy prompt lookup decoding: n-gram matches in the context propose up to `num_tokens` tokens."""
    return _timed_generate(target_model, prompt_ids, max_new_tokens, stop_ids, prompt_lookup_num_tokens=num_tokens)
