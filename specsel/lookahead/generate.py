"""Step generation: one reasoning step per prefix, greedy, all prefixes in one batch.

The target writes its own version of step j for every prefix of a lookahead round at once (gamma + 1 prefixes), and
the step drafter writes its steps one after another (a batch of one). Both go through transformers' `generate`
(left padding, the step delimiter as a stop string, the step cap as max_new_tokens) and are then cut with
`StepCutter` right after the token that completes the delimiter, or after an end-of-sequence token (kept, it ends
the answer).
"""

from __future__ import annotations

import torch

from specsel.decoding.request import cut_at_stop
from specsel.lookahead.steps import StepCutter


@torch.inference_mode()
def generate_steps(model, tokenizer, prefixes: list[list[int]], cutter: StepCutter, eos_ids: set[int]
                   ) -> list[list[int]]:
    """prefixes: token ids (each non-empty) -> one step per prefix (ids, ending with the delimiter's token, an EOS,
    or at the cap)."""
    if not prefixes or any(not p for p in prefixes):
        raise ValueError("step generation needs at least one non-empty prefix")
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else next(iter(eos_ids))
    width = max(map(len, prefixes))
    ids = torch.full((len(prefixes), width), pad, dtype=torch.long, device=device)
    attn = torch.zeros_like(ids)
    for i, p in enumerate(prefixes):  # rule: left padding, so every row's next token comes at the same column
        ids[i, width - len(p):] = torch.tensor(p, device=device)
        attn[i, width - len(p):] = 1
    out = model.generate(input_ids=ids, attention_mask=attn, max_new_tokens=cutter.spec.max_tokens, do_sample=False,
                         stop_strings=[cutter.spec.delimiter], tokenizer=tokenizer, pad_token_id=pad,
                         eos_token_id=sorted(eos_ids) or None)
    steps = []
    for row in out[:, width:].tolist():
        row = cut_at_stop(row, eos_ids, len(row))  # an end-of-sequence token ends the step (and the answer)
        steps.append(cutter.split(row)[0] if row else [])
    return steps
