"""EAGLE-3 training-time-test loss and per-step metrics.

Step j at position t predicts token x_{t+2+j}; its teacher is the target's distribution at position t+1+j, renormalised
on the draft vocabulary; it counts only where x_{t+2+j} is a response token. Steps are weighted 0.8^j. The draft
`lm_head` runs only at the positions that count (prompt positions carry no loss), which is most of a step's cost.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from training.losses import acceptance_on_draft_vocab, soft_cross_entropy


def shift_left(x: torch.Tensor, n: int, fill: float | int | bool = 0) -> torch.Tensor:
    """x [B,T,...] -> y with y[:, t] = x[:, t+n] and `fill` past the end (always T wide, also when n > T)."""
    pad = [0, 0] * (x.dim() - 2) + [0, min(n, x.shape[1])]
    return F.pad(x[:, n:], pad, value=fill)


def ttt_loss(step_logits: list[torch.Tensor], target_logits: torch.Tensor, loss_mask: torch.Tensor,
             draft_ids: torch.Tensor, step_weight: float = 0.8, with_metrics: bool = True):
    """step_logits: per step j the draft logits [N_j,Vd] at the positions where x_{t+2+j} is a response token
    (row-major; `Eagle3Head.forward(..., loss_mask=...)`); target_logits [B,T,V]; loss_mask [B,T] (1 on response
    tokens); draft_ids [Vd].
    Returns (weighted loss, metrics with per-step `loss_j`, `top1_j`, `accept_j` (1 - TV) and `n_j`)."""
    total = step_logits[0].new_zeros(())
    metrics: dict[str, float] = {}
    target_top1 = target_logits.argmax(-1)  # [B,T] over the full vocabulary
    target_lse = target_logits.float().logsumexp(-1)  # [B,T]
    target_d = target_logits.index_select(-1, draft_ids)  # [B,T,Vd]; the softmax below renormalises on Vd
    for j, logits in enumerate(step_logits):
        mask = shift_left(loss_mask, 2 + j).bool()  # [B,T] x_{t+2+j} is a response token
        if not mask.any():
            continue
        teacher_d = shift_left(target_d, 1 + j)[mask]  # [N,Vd] target dist. at t+1+j
        loss_j = soft_cross_entropy(logits, teacher_d).mean()
        total = total + (step_weight ** j) * loss_j
        if with_metrics:
            with torch.no_grad():
                top1 = draft_ids[logits.argmax(-1)] == shift_left(target_top1, 1 + j)[mask]
                acc = acceptance_on_draft_vocab(logits, teacher_d, shift_left(target_lse, 1 + j)[mask])
                metrics[f"loss_{j}"] = loss_j.item()
                metrics[f"top1_{j}"] = top1.float().mean().item()
                metrics[f"accept_{j}"] = acc.mean().item()
                metrics[f"n_{j}"] = float(mask.sum().item())
    return total, metrics
