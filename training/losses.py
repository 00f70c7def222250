"""Distillation losses between a target distribution p and a drafter distribution q, per position.

Every function takes logits [..., V] and returns a per-position loss [...]; `masked_mean` averages it over a mask.
DistillSpec's divergences: forward KL(p||q), reverse KL(q||p), JSD (beta-mixture), TVD. The EAGLE-3 loss is the soft
cross-entropy of q against p renormalised on the draft vocabulary.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def masked_mean(per_pos: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """per_pos [...], mask [...] (0/1) -> scalar mean over the masked positions (0 when none)."""
    mask = mask.to(per_pos.dtype)
    return (per_pos * mask).sum() / mask.sum().clamp_min(1.0)


def soft_cross_entropy(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """-sum_v p_v log q_v with p = softmax(teacher), q = softmax(student); [..., V] -> [...]."""
    p = F.softmax(teacher_logits.float(), dim=-1)
    return -(p * F.log_softmax(student_logits.float(), dim=-1)).sum(-1)


def hard_cross_entropy(student_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """-log q[label]; logits [..., V], labels [...] -> [...]."""
    logq = F.log_softmax(student_logits.float(), dim=-1)
    return -logq.gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def forward_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """KL(p || q) = sum p (log p - log q); [..., V] -> [...]."""
    logp = F.log_softmax(teacher_logits.float(), dim=-1)
    logq = F.log_softmax(student_logits.float(), dim=-1)
    return (logp.exp() * (logp - logq)).sum(-1)


def reverse_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """KL(q || p) = sum q (log q - log p); [..., V] -> [...]."""
    return forward_kl(teacher_logits, student_logits)


def jsd(student_logits: torch.Tensor, teacher_logits: torch.Tensor, beta: float = 0.5) -> torch.Tensor:
    """beta KL(p || m) + (1 - beta) KL(q || m), m = beta p + (1 - beta) q; [..., V] -> [...]."""
    logp = F.log_softmax(teacher_logits.float(), dim=-1)
    logq = F.log_softmax(student_logits.float(), dim=-1)
    # log m computed stably as a logsumexp of the two weighted log-densities
    logm = torch.logsumexp(torch.stack([logp + math.log(beta), logq + math.log(1 - beta)]), dim=0)
    return beta * (logp.exp() * (logp - logm)).sum(-1) + (1 - beta) * (logq.exp() * (logq - logm)).sum(-1)


def tvd(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """TV(p, q) = 1/2 sum |p - q|; [..., V] -> [...]. 1 - TV is the acceptance probability of q's draft under p."""
    p = F.softmax(teacher_logits.float(), dim=-1)
    q = F.softmax(student_logits.float(), dim=-1)
    return 0.5 * (p - q).abs().sum(-1)


DISTILL_LOSSES = {"fkl": forward_kl, "rkl": reverse_kl, "jsd": jsd, "tvd": tvd}


def acceptance_on_draft_vocab(draft_logits: torch.Tensor, target_logits_on_draft: torch.Tensor,
                              target_lse: torch.Tensor) -> torch.Tensor:
    """1 - TV(p, q) = sum_v min(p_v, q_v) where q lives on the draft vocabulary only (p is 0-overlap elsewhere).

    draft_logits [..., Vd]; target_logits_on_draft [..., Vd] the target logits at the draft tokens;
    target_lse [...] the target's logsumexp over its full vocabulary -> [...].
    """
    p_on_draft = (target_logits_on_draft.float() - target_lse.float().unsqueeze(-1)).exp()  # [..., Vd]
    q = F.softmax(draft_logits.float(), dim=-1)
    return torch.minimum(p_on_draft, q).sum(-1)


def drafter_loss(logits: torch.Tensor, target_logits: torch.Tensor | None, input_ids: torch.Tensor,
                 loss_mask: torch.Tensor, kind: str, with_metrics: bool = True):
    """Next-token loss on response tokens. logits/target_logits [B,T,V] predict x_{t+1}; input_ids, loss_mask [B,T].

    kind: "ce" (hard cross-entropy on the self-distilled tokens) or a distillation loss against the target logits
    ("fkl", "rkl", "jsd", "tvd"). Metrics: top-1 agreement with the target and acceptance 1 - TV.
    """
    logits, labels, mask = logits[:, :-1], input_ids[:, 1:], loss_mask[:, 1:]  # position t predicts x_{t+1}
    if kind == "ce":
        per_pos = hard_cross_entropy(logits, labels)
    else:
        per_pos = DISTILL_LOSSES[kind](logits, target_logits[:, :-1])
    loss = masked_mean(per_pos, mask)
    metrics: dict[str, float] = {}
    if with_metrics and target_logits is not None:
        with torch.no_grad():
            n = mask.sum().clamp_min(1)
            tl = target_logits[:, :-1]
            metrics["top1_0"] = (((logits.argmax(-1) == tl.argmax(-1)).float() * mask).sum() / n).item()
            metrics["accept_0"] = (((1 - tvd(logits, tl)) * mask).sum() / n).item()
            metrics["n_0"] = mask.sum().item()
    return loss, metrics
