"""DPO on step preference pairs (Online-LR): the sigmoid loss on summed completion log-probabilities against a
frozen reference copy of the drafter.

loss = -log sigmoid(beta * ((log pi(c|x) - log ref(c|x)) - (log pi(r|x) - log ref(r|x)))), averaged over pairs
(Rafailov et al.; beta 0.1 in OnlineSpec's Online-LR). trl 1.16 computes this inside `DPOTrainer` only, so the loss
is written here and tested against a plain computation of that formula; the per-token log-probabilities use trl's
`selective_log_softmax` (gathers the chosen ids without materialising a full log-softmax copy per row).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from trl.trainer.utils import selective_log_softmax


def completion_logps(model, prompts: list[list[int]], completions: list[list[int]], pad_id: int) -> torch.Tensor:
    """Summed log-probabilities of each completion after its prompt, ids concatenated as they are (no EOS added,
    no re-tokenisation) -> [N]. One right-padded batch; padding is masked out of attention and of the sums."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"need as many prompts as completions (>= 1), got {len(prompts)} and {len(completions)}")
    if any(not c for c in completions) or any(not p for p in prompts):
        raise ValueError("every prompt and completion needs at least one token")
    seqs = [p + c for p, c in zip(prompts, completions)]
    width = max(map(len, seqs))
    device = next(model.parameters()).device
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long, device=device)
    attn = torch.zeros_like(ids)
    scored = torch.zeros_like(ids, dtype=torch.bool)  # [N,T] positions whose token is a completion token
    for i, (p, s) in enumerate(zip(prompts, seqs)):
        ids[i, :len(s)] = torch.tensor(s, device=device)
        attn[i, :len(s)] = 1
        scored[i, len(p):len(s)] = True
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1]  # [N,T-1,V]: position t predicts t+1
    logp = selective_log_softmax(logits.float(), ids[:, 1:])  # [N,T-1]
    return (logp * scored[:, 1:]).sum(-1)


def dpo_loss(policy_chosen: torch.Tensor, policy_rejected: torch.Tensor, ref_chosen: torch.Tensor,
             ref_rejected: torch.Tensor, beta: float = 0.1) -> torch.Tensor:
    """Sigmoid DPO loss over [N] summed log-probabilities -> scalar mean."""
    if beta <= 0:
        raise ValueError(f"DPO beta must be > 0, got {beta}")
    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)  # [N]
    return -F.logsigmoid(beta * margin).mean()
