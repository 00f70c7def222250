"""Training-time-test loss and per-step metrics of a drafter's `Steps` (draftpool/models/kind.py).

Step j's row t predicts token x_{t+offset+j} (EAGLE-3: offset 2); its teacher is the target's distribution that chose
that token, renormalised on the drafter's columns (EAGLE-3: its draft vocabulary); it counts only where that token is
a response token. Steps are weighted 0.8^j. An EAGLE-3 head's `lm_head` runs only at the rows that count (prompt
positions carry no loss), which is most of a step's cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from draftpool.models.kind import Steps, shift_left
from training.losses import acceptance_on_draft_vocab, soft_cross_entropy

__all__ = ["Teacher", "shift_left", "ttt_loss"]


@dataclass
class Teacher:
    """What the loss reads of the target's distribution per position: its logits at the drafter's columns
    on_columns [B,T,Vs], their log-sum-exp over the full vocabulary lse [B,T] and the full-vocabulary top-1 [B,T].
    (The full [B,T,V] logits are never needed: `training.target_cache` computes only these.)"""

    on_columns: torch.Tensor
    lse: torch.Tensor
    top1: torch.Tensor

    @classmethod
    def from_logits(cls, target_logits: torch.Tensor, steps: Steps) -> Teacher:
        """target_logits [B,T,V] -> the teacher at `steps`' columns."""
        return cls(steps.on_columns(target_logits), target_logits.float().logsumexp(-1), target_logits.argmax(-1))


def ttt_loss(steps: Steps, target: torch.Tensor | Teacher, loss_mask: torch.Tensor, step_weight: float = 0.8,
             with_metrics: bool = True, accept_weight: float = 0.0):
    """steps: made with `loss_mask` (per step the logits [N_j,Vs] at its counting rows, row-major); target: the
    target logits [B,T,V] or their `Teacher`; loss_mask [B,T] (1 on response tokens). `accept_weight` > 0 adds to
    each step's cross-entropy that weight times -log(1 - TV(p, q)), the log-probability that the target accepts the
    head's sampled draft (a loss aimed at acceptance itself; the cross-entropy alone aims at p's whole shape).
    Returns (weighted loss, metrics with per-step `loss_j`, `top1_j`, `accept_j` (1 - TV) and `n_j`)."""
    teacher = target if isinstance(target, Teacher) else Teacher.from_logits(target, steps)
    total = steps.logits[0].new_zeros(())
    metrics: dict[str, float] = {}
    for j, logits in enumerate(steps.logits):
        mask = steps.mask(loss_mask, j)  # [B,T] the predicted token is a response token
        if not mask.any():
            continue
        teacher_d = steps.teacher(teacher.on_columns, j)[mask]  # [N,Vs]; the softmax below renormalises on Vs
        loss_j = soft_cross_entropy(logits, teacher_d).mean()
        if accept_weight > 0:  # rule: acceptance of a sampled draft = sum_v min(p_v, q_v) (p: full-vocab softmax)
            acc = acceptance_on_draft_vocab(logits, teacher_d, steps.teacher(teacher.lse, j)[mask])  # [N]
            loss_j = loss_j - accept_weight * acc.clamp_min(1e-6).log().mean()
        total = total + (step_weight ** j) * loss_j
        if with_metrics:
            with torch.no_grad():
                top1 = steps.target_ids(logits.argmax(-1)) == steps.teacher(teacher.top1, j)[mask]
                acc = acceptance_on_draft_vocab(logits, teacher_d, steps.teacher(teacher.lse, j)[mask])
                metrics[f"loss_{j}"] = loss_j.item()
                metrics[f"top1_{j}"] = top1.float().mean().item()
                metrics[f"accept_{j}"] = acc.mean().item()
                metrics[f"n_{j}"] = float(mask.sum().item())
    return total, metrics
